// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The lend/borrow/return/reclaim state machine, the errno of each refusal,
 * allocator exhaustion and release, node loss, segments and config space,
 * driven through libsmartio on a private simulated fabric.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "harness.h"

#define FEW_REQUESTERS_TOPO \
	"fabric luts=64 requesters=4 reserved=2 window=4G\n" \
	"node host0 id=0\n" \
	"node host1 id=1\n" \
	"adapter host0 ntb0 peers=all\n" \
	"adapter host1 ntb0 peers=all\n" \
	"device host0 nvme0 bdf=0000:01:00.0 vendor=0x1b36 device=0x0010 class=0x010802 bar0=16K,64\n" \
	"device host0 nvme1 bdf=0000:02:00.0 vendor=0x1b36 device=0x0010 class=0x010802 bar0=16K,64\n" \
	"device host0 nvme2 bdf=0000:03:00.0 vendor=0x1b36 device=0x0010 class=0x010802 bar0=16K,64\n"

struct fixture {
	struct smartio *h;
	char fabric[64];
	unsigned n0, n1, n2;
};

static int setup_small(void **state)
{
	static struct fixture fx;

	fx.h = th_open(TH_SMALL_TOPO, NULL, fx.fabric, sizeof(fx.fabric));
	fx.n0 = th_node(fx.h, "host0");
	fx.n1 = th_node(fx.h, "host1");
	fx.n2 = th_node(fx.h, "host2");
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	smartio_close(fx->h);
	return 0;
}

static int dev_state(struct smartio *h, unsigned dev)
{
	struct smartio_device_info di;

	assert_int_equal(smartio_device_info(h, dev, &di), 0);
	return di.state;
}

static uint64_t borrowers(struct smartio *h, unsigned dev)
{
	struct smartio_device_info di;

	assert_int_equal(smartio_device_info(h, dev, &di), 0);
	return di.borrowers;
}

static void test_states_local_available_borrowed_and_back(void **state)
{
	struct fixture *fx = *state;
	unsigned d = th_dev(fx->h, "nvme0");
	uint64_t cur = smartio_event_cursor(fx->h);

	assert_int_equal(dev_state(fx->h, d), SMARTIO_DEV_LOCAL);
	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(dev_state(fx->h, d), SMARTIO_DEV_AVAILABLE);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n1), 0);
	assert_int_equal(dev_state(fx->h, d), SMARTIO_DEV_BORROWED);
	assert_int_equal(borrowers(fx->h, d), 1ull << fx->n1);
	assert_int_equal(smartio_return(fx->h, d, fx->n1), 0);
	assert_int_equal(dev_state(fx->h, d), SMARTIO_DEV_AVAILABLE);
	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_NONE, 0), 0);
	assert_int_equal(dev_state(fx->h, d), SMARTIO_DEV_LOCAL);
	assert_true(th_saw_event(fx->h, &cur, "lend", "dev/nvme0"));
	assert_true(th_saw_event(fx->h, &cur, "borrow", "dev/nvme0"));
	assert_true(th_saw_event(fx->h, &cur, "return", "dev/nvme0"));
}

static void test_lend_policy_denies_with_eacces(void **state)
{
	struct fixture *fx = *state;
	unsigned d = th_dev(fx->h, "nvme1");

	assert_int_equal(smartio_borrow(fx->h, d, fx->n1), -EACCES);
	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_LIST,
				      1ull << fx->n2), 0);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n1), -EACCES);
	assert_int_equal(borrowers(fx->h, d), 0);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n2), 0);
	/* Narrowing the policy under a borrower is refused. */
	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_LIST,
				      1ull << fx->n1), -EBUSY);
	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_NONE, 0), -EBUSY);
	assert_int_equal(smartio_return(fx->h, d, fx->n2), 0);
	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_NONE, 0), 0);
}

static void test_bad_values_give_einval_enoent_enxio(void **state)
{
	struct fixture *fx = *state;
	unsigned d = th_dev(fx->h, "nvme0");

	assert_int_equal(smartio_lend(fx->h, d, 7, 0), -EINVAL);
	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_LIST, 0), -EINVAL);
	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_LIST, 1ull << 40),
			 -EINVAL);
	assert_int_equal(smartio_set_mode(fx->h, d, 5), -EINVAL);
	assert_int_equal(smartio_borrow(fx->h, d, 99), -ENOENT);
	assert_int_equal(smartio_borrow(fx->h, 9999, fx->n1), -ENXIO);
	assert_int_equal(smartio_device_find(fx->h, "nvme77"), -ENXIO);
	assert_int_equal(smartio_node_find(fx->h, "host9"), -ENOENT);
	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_ALL, 0), 0);
	/* The lender uses its device directly; it cannot borrow it. */
	assert_int_equal(smartio_borrow(fx->h, d, fx->n0), -EINVAL);
	/* Returning what one does not borrow. */
	assert_int_equal(smartio_return(fx->h, d, fx->n1), -EINVAL);
	assert_int_equal(dev_state(fx->h, d), SMARTIO_DEV_AVAILABLE);
}

static void test_exclusive_and_shared_modes(void **state)
{
	struct fixture *fx = *state;
	unsigned d = th_dev(fx->h, "nvme2");

	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n1), 0);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n2), -EBUSY);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n1), -EBUSY);
	/* Issue 17: exclusive becomes shared while its one borrower keeps it. */
	assert_int_equal(smartio_set_mode(fx->h, d, SMARTIO_SHARED), 0);
	assert_int_equal(smartio_return(fx->h, d, fx->n1), 0);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n1), 0);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n2), 0);
	assert_int_equal(borrowers(fx->h, d), (1ull << fx->n1) | (1ull << fx->n2));
	assert_int_equal(smartio_set_mode(fx->h, d, SMARTIO_EXCLUSIVE), -EBUSY);
	assert_int_equal(smartio_return(fx->h, d, fx->n1), 0);
	assert_int_equal(smartio_return(fx->h, d, fx->n2), 0);
	assert_int_equal(smartio_set_mode(fx->h, d, SMARTIO_EXCLUSIVE), 0);
}

static void test_reclaim_only_by_lender_revokes_everyone(void **state)
{
	struct fixture *fx = *state;
	unsigned d = th_dev(fx->h, "nvme3");
	unsigned l0 = th_luts_used(fx->h, fx->n0), r0 = th_reqs_used(fx->h, fx->n0);
	unsigned l1 = th_luts_used(fx->h, fx->n1), l2 = th_luts_used(fx->h, fx->n2);
	uint64_t cur = smartio_event_cursor(fx->h);

	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_set_mode(fx->h, d, SMARTIO_SHARED), 0);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n1), 0);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n2), 0);
	assert_int_equal(smartio_reclaim(fx->h, d, fx->n1), -EACCES);
	assert_int_equal(borrowers(fx->h, d), (1ull << fx->n1) | (1ull << fx->n2));
	assert_int_equal(smartio_reclaim(fx->h, d, fx->n0), 0);
	assert_int_equal(borrowers(fx->h, d), 0);
	assert_int_equal(th_luts_used(fx->h, fx->n0), l0);
	assert_int_equal(th_reqs_used(fx->h, fx->n0), r0);
	assert_int_equal(th_luts_used(fx->h, fx->n1), l1);
	assert_int_equal(th_luts_used(fx->h, fx->n2), l2);
	assert_true(th_saw_event(fx->h, &cur, "reclaim", "dev/nvme3"));
	assert_int_equal(smartio_set_mode(fx->h, d, SMARTIO_EXCLUSIVE), 0);
}

static void test_borrow_takes_and_return_gives_back_entries(void **state)
{
	struct fixture *fx = *state;
	unsigned d = th_dev(fx->h, "nvme0");
	unsigned l0 = th_luts_used(fx->h, fx->n0), r0 = th_reqs_used(fx->h, fx->n0);
	unsigned l1 = th_luts_used(fx->h, fx->n1), r1 = th_reqs_used(fx->h, fx->n1);
	struct smartio_dma_window w[4];

	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n1), 0);
	/* Lender: 4 slots of DMA window (64M / 16M) + 1 MSI slot + 1 requester. */
	assert_int_equal(th_luts_used(fx->h, fx->n0), l0 + 5);
	assert_int_equal(th_reqs_used(fx->h, fx->n0), r0 + 1);
	/* Borrower: one slot for the 16K BAR + 1 requester. */
	assert_int_equal(th_luts_used(fx->h, fx->n1), l1 + 1);
	assert_int_equal(th_reqs_used(fx->h, fx->n1), r1 + 1);
	assert_int_equal(smartio_dma_windows(fx->h, d, w, 4), 1);
	assert_int_equal(w[0].node, fx->n1);
	assert_int_equal(w[0].size, 64ull << 20);
	assert_int_equal(smartio_return(fx->h, d, fx->n1), 0);
	assert_int_equal(th_luts_used(fx->h, fx->n0), l0);
	assert_int_equal(th_reqs_used(fx->h, fx->n0), r0);
	assert_int_equal(th_luts_used(fx->h, fx->n1), l1);
	assert_int_equal(th_reqs_used(fx->h, fx->n1), r1);
	assert_int_equal(smartio_dma_windows(fx->h, d, w, 4), 0);
}

static void test_lut_exhaustion_is_enospc_and_recovers(void **state)
{
	struct fixture *fx = *state;
	const char *names[] = { "nvme0", "nvme1", "nvme2", "nvme3" };
	unsigned d[4], i, l0 = th_luts_used(fx->h, fx->n0);

	for (i = 0; i < 4; i++) {
		d[i] = th_dev(fx->h, names[i]);
		assert_int_equal(smartio_lend(fx->h, d[i], SMARTIO_LEND_ALL, 0), 0);
	}
	/* 16 lender slots, 5 per borrow: the fourth does not fit. */
	for (i = 0; i < 3; i++)
		assert_int_equal(smartio_borrow(fx->h, d[i], fx->n1), 0);
	assert_int_equal(smartio_borrow(fx->h, d[3], fx->n1), -ENOSPC);
	assert_int_equal(borrowers(fx->h, d[3]), 0);
	assert_int_equal(th_luts_used(fx->h, fx->n0), l0 + 15);
	assert_int_equal(smartio_return(fx->h, d[0], fx->n1), 0);
	assert_int_equal(smartio_borrow(fx->h, d[3], fx->n1), 0);
	for (i = 1; i < 4; i++)
		assert_int_equal(smartio_return(fx->h, d[i], fx->n1), 0);
	assert_int_equal(th_luts_used(fx->h, fx->n0), l0);
}

static void test_borrower_window_exhaustion_is_enospc(void **state)
{
	struct fixture *fx = *state;
	unsigned gpu = th_dev(fx->h, "gpu0");
	unsigned nv = th_dev(fx->h, "nvme0");
	unsigned l1 = th_luts_used(fx->h, fx->n1);

	assert_int_equal(smartio_lend(fx->h, gpu, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_lend(fx->h, nv, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx->h, nv, fx->n1), 0);
	/* 16M + 256M of BARs do not fit in the 256M window beside nvme0. */
	assert_int_equal(smartio_borrow(fx->h, gpu, fx->n1), -ENOSPC);
	assert_int_equal(th_luts_used(fx->h, fx->n1), l1 + 1);
	assert_int_equal(smartio_return(fx->h, nv, fx->n1), 0);
	assert_int_equal(th_luts_used(fx->h, fx->n1), l1);
}

static void test_requester_exhaustion_is_enospc(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(FEW_REQUESTERS_TOPO, NULL, fabric,
				    sizeof(fabric));
	unsigned n1 = th_node(h, "host1"), i, d[3];
	const char *names[] = { "nvme0", "nvme1", "nvme2" };

	(void)state;
	for (i = 0; i < 3; i++) {
		d[i] = th_dev(h, names[i]);
		assert_int_equal(smartio_lend(h, d[i], SMARTIO_LEND_ALL, 0), 0);
	}
	assert_int_equal(th_reqs_used(h, n1), 2);	/* the reserved pair */
	assert_int_equal(smartio_borrow(h, d[0], n1), 0);
	assert_int_equal(smartio_borrow(h, d[1], n1), 0);
	assert_int_equal(smartio_borrow(h, d[2], n1), -ENOSPC);
	assert_int_equal(th_reqs_used(h, n1), 4);
	assert_int_equal(smartio_return(h, d[1], n1), 0);
	assert_int_equal(smartio_borrow(h, d[2], n1), 0);
	smartio_close(h);
}

static void test_node_loss_cleans_borrows_and_gives_ehostdown(void **state)
{
	char fabric[64];
	struct smartio *h0 = th_open(TH_SMALL_TOPO, "host0", fabric, sizeof(fabric));
	struct smartio *h1 = th_join(fabric, "host1");
	struct smartio *h2 = th_join(fabric, "host2");
	unsigned n1 = th_node(h0, "host1"), n2 = th_node(h0, "host2");
	unsigned nv = th_dev(h0, "nvme0"), nic = th_dev(h0, "nic0");
	unsigned l0 = th_luts_used(h0, 0), r0 = th_reqs_used(h0, 0);
	uint64_t cur = smartio_event_cursor(h0);
	struct smartio_node_info ni;

	(void)state;
	assert_int_equal(smartio_lend(h0, nv, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h1, nv, n1), 0);
	assert_int_equal(smartio_lend(h2, nic, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h0, nic, 0), 0);
	/* The borrower leaves: the lender gets its entries back. */
	smartio_close(h1);
	assert_int_equal(smartio_node_info(h0, n1, &ni), 0);
	assert_int_equal(ni.state, SMARTIO_NODE_DOWN);
	assert_int_equal(borrowers(h0, nv), 0);
	assert_true(th_saw_event(h0, &cur, "node-down", "nodes/host1"));
	assert_int_equal(smartio_borrow(h0, nv, n1), -EHOSTDOWN);
	/* The lender leaves: the borrower's mappings go, the device is gone. */
	smartio_close(h2);
	assert_int_equal(borrowers(h0, nic), 0);
	assert_int_equal(th_luts_used(h0, 0), l0);
	assert_int_equal(th_reqs_used(h0, 0), r0);
	assert_int_equal(smartio_borrow(h0, nic, 0), -EHOSTDOWN);
	assert_int_equal(smartio_set_mode(h0, nic, SMARTIO_SHARED), -EHOSTDOWN);
	/* It comes back. */
	h2 = th_join(fabric, "host2");
	assert_int_equal(smartio_node_info(h0, n2, &ni), 0);
	assert_int_equal(ni.state, SMARTIO_NODE_UP);
	assert_int_equal(smartio_borrow(h0, nic, 0), 0);
	assert_int_equal(smartio_return(h0, nic, 0), 0);
	smartio_close(h2);
	smartio_close(h0);
}

static void test_segment_lifecycle_and_errors(void **state)
{
	struct fixture *fx = *state;
	struct smartio *h = fx->h;
	struct smartio_segment_info si;
	char path[256];
	uint64_t size;
	int s;

	assert_int_equal(smartio_segment_create(h, fx->n0, "buf"), 0);
	assert_int_equal(smartio_segment_create(h, fx->n0, "buf"), -EEXIST);
	assert_int_equal(smartio_segment_create(h, fx->n0, "a/b"), -EINVAL);
	assert_int_equal(smartio_segment_create(h, fx->n0, ""), -EINVAL);
	assert_int_equal(smartio_segment_set_size(h, fx->n0, "nope", 4096), -ENOENT);
	assert_int_equal(smartio_segment_set_size(h, fx->n0, "buf", 0), -EINVAL);
	assert_int_equal(smartio_segment_set_size(h, fx->n0, "buf", 1ull << 40),
			 -EINVAL);
	/* Not sized yet: nothing to map. */
	assert_int_equal(smartio_resolve_segment(h, fx->n0, fx->n0, "buf", path,
						 sizeof(path), &size), -ENOENT);
	assert_int_equal(smartio_segment_set_size(h, fx->n0, "buf", 5000), 0);
	assert_int_equal(smartio_segment_set_size(h, fx->n0, "buf", 8192), -EBUSY);
	s = smartio_segment_find(h, fx->n0, "buf");
	assert_true(s >= 0);
	assert_int_equal(smartio_segment_at(h, (unsigned)s, &si), 1);
	assert_int_equal(si.size, 8192);	/* whole pages */
	assert_int_equal(smartio_resolve_segment(h, fx->n0, fx->n0, "buf", path,
						 sizeof(path), &size), 0);
	/* Remote nodes: only once exported and attached. */
	assert_int_equal(smartio_segment_attach(h, fx->n0, "buf", fx->n1), -EACCES);
	assert_int_equal(smartio_resolve_segment(h, fx->n1, fx->n0, "buf", path,
						 sizeof(path), &size), -EACCES);
	assert_int_equal(smartio_segment_set_available(h, fx->n0, "buf", 2), -EINVAL);
	assert_int_equal(smartio_segment_set_available(h, fx->n0, "buf", 1), 0);
	assert_int_equal(smartio_segment_attach(h, fx->n0, "buf", fx->n1), 0);
	assert_int_equal(smartio_segment_attach(h, fx->n0, "buf", fx->n0), -EINVAL);
	assert_int_equal(smartio_resolve_segment(h, fx->n1, fx->n0, "buf", path,
						 sizeof(path), &size), 0);
	assert_int_equal(smartio_segment_destroy(h, fx->n0, "buf"), -EBUSY);
	assert_int_equal(smartio_segment_set_available(h, fx->n0, "buf", 0), -EBUSY);
	assert_int_equal(smartio_segment_detach(h, fx->n0, "buf", fx->n1), 0);
	assert_int_equal(smartio_segment_detach(h, fx->n0, "buf", fx->n1), -EINVAL);
	assert_int_equal(smartio_segment_destroy(h, fx->n0, "buf"), 0);
	assert_int_equal(smartio_segment_find(h, fx->n0, "buf"), -ENOENT);
}

static void test_config_space_reads_and_guards_writes(void **state)
{
	struct fixture *fx = *state;
	unsigned d = th_dev(fx->h, "nvme1");
	uint8_t buf[4], one = 0x5a;

	assert_int_equal(smartio_config_read(fx->h, d, fx->n2, 0, buf, 4), 4);
	assert_int_equal(buf[0] | buf[1] << 8, 0x1b36);
	assert_int_equal(buf[2] | buf[3] << 8, 0x0010);
	/* Interrupt Line (0x3c): a read-write register. */
	assert_int_equal(smartio_config_write(fx->h, d, fx->n1, 0x3c, &one, 1),
			 -EACCES);
	assert_int_equal(smartio_config_write(fx->h, d, fx->n0, 0x3c, &one, 1), 1);
	assert_int_equal(smartio_config_read(fx->h, d, fx->n1, 0x3c, buf, 1), 1);
	assert_int_equal(buf[0], 0x5a);
	assert_int_equal(smartio_lend(fx->h, d, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx->h, d, fx->n1), 0);
	one = 0x77;
	assert_int_equal(smartio_config_write(fx->h, d, fx->n1, 0x3c, &one, 1), 1);
	assert_int_equal(smartio_config_read(fx->h, d, fx->n2, 4095, buf, 2),
			 -EINVAL);
	assert_int_equal(smartio_return(fx->h, d, fx->n1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_states_local_available_borrowed_and_back, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_lend_policy_denies_with_eacces, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_bad_values_give_einval_enoent_enxio, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_exclusive_and_shared_modes, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_reclaim_only_by_lender_revokes_everyone, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_borrow_takes_and_return_gives_back_entries, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_lut_exhaustion_is_enospc_and_recovers, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_borrower_window_exhaustion_is_enospc, setup_small, teardown),
		cmocka_unit_test(test_requester_exhaustion_is_enospc),
		cmocka_unit_test(test_node_loss_cleans_borrows_and_gives_ehostdown),
		cmocka_unit_test_setup_teardown(test_segment_lifecycle_and_errors, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_config_space_reads_and_guards_writes, setup_small, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
