// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 12 defect 5, the core's half: sio_core_borrow_check, which
 * smartio.ko runs before it takes a device from its driver, answers what
 * the borrow itself would (policy, mode, node state, the lender's own
 * device, LUT, requester and window space on the path) and changes no
 * byte of the registry but the refused device's denied count.  Each case
 * asks the check, then does the borrow, on a private simulated fabric.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "smartio_internal.h"
#include "core_int.h"
#include "fabric.h"

/*
 * The check for dev by node under the fabric's lock; the registry must be
 * the same before and after, but for dev's denied count (+1 on a refusal
 * by policy, mode or space).
 */
static int check_only(struct smartio *h, unsigned dev, unsigned node)
{
	struct sim_fabric *f = sio_lib_fabric(h);
	struct sio_registry *r = f->reg;
	u64 *denied = &sio_dev(r, dev)->stats.denied;
	size_t at = (size_t)((u8 *)denied - (u8 *)r);
	u8 *before = malloc(r->total_size), *after = malloc(r->total_size);
	u64 was;
	int err;

	assert_non_null(before);
	assert_non_null(after);
	sim_lock(f);
	memcpy(before, r, r->total_size);
	was = *denied;
	err = sio_core_borrow_check(&f->core, node, dev);
	memcpy(after, r, r->total_size);
	sim_unlock(f);
	assert_in_range(*(u64 *)(after + at) - was, 0, 1);
	memcpy(after + at, &was, sizeof(was));
	assert_memory_equal(before, after, r->total_size);
	free(before);
	free(after);
	return err;
}

/* The check answers as the borrow does; a borrow that succeeds stays. */
static void same_answer(struct smartio *h, unsigned dev, unsigned node,
			int want)
{
	assert_int_equal(check_only(h, dev, node), want);
	assert_int_equal(smartio_borrow(h, dev, node), want);
}

static void test_check_answers_as_the_borrow_and_changes_nothing(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(TH_SMALL_TOPO, NULL, fabric, sizeof(fabric));
	unsigned n0 = th_node(h, "host0"), n1 = th_node(h, "host1");
	unsigned n2 = th_node(h, "host2"), i, nv[4];
	unsigned gpu = th_dev(h, "gpu0");
	const char *names[] = { "nvme0", "nvme1", "nvme2", "nvme3" };

	(void)state;
	for (i = 0; i < 4; i++)
		nv[i] = th_dev(h, names[i]);
	/* Policy none (the default), then a list without the asker. */
	same_answer(h, nv[0], n1, -EACCES);
	assert_int_equal(smartio_lend(h, nv[0], SMARTIO_LEND_LIST, 1ull << n2), 0);
	same_answer(h, nv[0], n1, -EACCES);
	assert_int_equal(smartio_lend(h, nv[0], SMARTIO_LEND_ALL, 0), 0);
	/* The lender's own device. */
	same_answer(h, nv[0], n0, -EINVAL);
	same_answer(h, nv[0], n1, 0);
	/* Borrowed already by the asker; exclusive and borrowed by another. */
	same_answer(h, nv[0], n1, -EBUSY);
	same_answer(h, nv[0], n2, -EBUSY);
	/* 16 lender slots, 5 per borrow: the fourth does not fit. */
	for (i = 1; i < 4; i++)
		assert_int_equal(smartio_lend(h, nv[i], SMARTIO_LEND_ALL, 0), 0);
	same_answer(h, nv[1], n1, 0);
	same_answer(h, nv[2], n1, 0);
	same_answer(h, nv[3], n1, -ENOSPC);
	/* 16M + 256M of BARs never fit in a 256M borrower window. */
	assert_int_equal(smartio_lend(h, gpu, SMARTIO_LEND_ALL, 0), 0);
	same_answer(h, gpu, n0, -ENOSPC);
	/* Space given back is space again. */
	assert_int_equal(smartio_return(h, nv[0], n1), 0);
	same_answer(h, nv[3], n1, 0);
	smartio_close(h);
}

static void test_check_sees_a_node_down(void **state)
{
	char fabric[64];
	struct smartio *h0 = th_open(TH_SMALL_TOPO, "host0", fabric, sizeof(fabric));
	struct smartio *h2 = th_join(fabric, "host2");
	unsigned n0 = th_node(h0, "host0"), nic = th_dev(h0, "nic0");

	(void)state;
	assert_int_equal(smartio_lend(h2, nic, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(check_only(h0, nic, n0), 0);
	smartio_close(h2);	/* the lender's node goes down */
	same_answer(h0, nic, n0, -EHOSTDOWN);
	smartio_close(h0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_answers_as_the_borrow_and_changes_nothing),
		cmocka_unit_test(test_check_sees_a_node_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
