// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 18 item 1 (MPIOV section III): a PF with an SR-IOV capability
 * enables virtual functions, each a device of its own with its own
 * requester id, lent to different nodes at once, and the fabric's
 * requester and address checks hold per VF.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define TOPO \
	"fabric luts=64 requesters=16 reserved=2 window=1G\n" \
	"node host0 id=0 ram=64M\n" \
	"node host1 id=1 ram=64M\n" \
	"node host2 id=2 ram=64M\n" \
	"adapter host0 ntb0 peers=all\n" \
	"adapter host1 ntb0 peers=all\n" \
	"adapter host2 ntb0 peers=all\n" \
	"device host0 nic0 bdf=0000:03:00.0 vendor=0x8086 device=0x10fb " \
	"class=0x020000 config=4096 bar0=128K sriov=4 vfdevice=0x10ed " \
	"vfbar0=16K,64\n" \
	"device host0 nic1 bdf=0000:04:00.0 vendor=0x8086 device=0x10d3 " \
	"class=0x020000 bar0=16K\n"

struct fx {
	struct smartio *h;
	char fabric[64];
	unsigned host0, host1, host2, nic0, nic1;
};

static int setup(void **state)
{
	static struct fx fx;

	fx.h = th_open(TOPO, NULL, fx.fabric, sizeof(fx.fabric));
	fx.host0 = th_node(fx.h, "host0");
	fx.host1 = th_node(fx.h, "host1");
	fx.host2 = th_node(fx.h, "host2");
	fx.nic0 = th_dev(fx.h, "nic0");
	fx.nic1 = th_dev(fx.h, "nic1");
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	smartio_close(fx->h);
	return 0;
}

static uint16_t cfg16(struct fx *fx, unsigned dev, uint32_t off)
{
	uint16_t v = 0;

	assert_int_equal(smartio_config_read(fx->h, dev, fx->host0, off, &v, 2),
			 2);
	return v;
}

static void test_vfs_absent_until_enabled(void **state)
{
	struct fx *fx = *state;
	struct smartio_sriov_info si;

	assert_int_equal(smartio_device_find(fx->h, "nic0v0"), -ENXIO);
	assert_int_equal(smartio_sriov_info(fx->h, fx->nic0, &si), 0);
	assert_int_equal(si.total, 4);
	assert_int_equal(si.num, 0);
	assert_int_equal(si.pf, -1);
	/* The capability at 0x100: SR-IOV, TotalVFs 4, VF device 0x10ed. */
	assert_int_equal(cfg16(fx, fx->nic0, 0x100), 0x10);
	assert_int_equal(cfg16(fx, fx->nic0, 0x10e), 4);
	assert_int_equal(cfg16(fx, fx->nic0, 0x110), 0);
	assert_int_equal(cfg16(fx, fx->nic0, 0x11a), 0x10ed);
}

static void test_bad_counts_refused_state_unchanged(void **state)
{
	struct fx *fx = *state;
	struct smartio_sriov_info si;

	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 5), -ERANGE);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic1, 1), -EOPNOTSUPP);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 2), 0);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 3), -EBUSY);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 2), 0);
	assert_int_equal(smartio_sriov_info(fx->h, fx->nic0, &si), 0);
	assert_int_equal(si.num, 2);
	assert_true(smartio_device_find(fx->h, "nic0v1") >= 0);
	assert_int_equal(smartio_device_find(fx->h, "nic0v2"), -ENXIO);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 0), 0);
	assert_int_equal(smartio_device_find(fx->h, "nic0v0"), -ENXIO);
}

/* The PF borrowed: its driver is the borrower's, no VF comes or goes. */
static void test_no_vfs_while_the_pf_is_borrowed(void **state)
{
	struct fx *fx = *state;
	struct smartio_sriov_info si;

	assert_int_equal(smartio_lend(fx->h, fx->nic0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx->h, fx->nic0, fx->host1), 0);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 1), -EBUSY);
	assert_int_equal(smartio_sriov_info(fx->h, fx->nic0, &si), 0);
	assert_int_equal(si.num, 0);
	assert_int_equal(smartio_device_find(fx->h, "nic0v0"), -ENXIO);
	assert_int_equal(smartio_return(fx->h, fx->nic0, fx->host1), 0);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 1), 0);
	/* Nor do they go while it is borrowed. */
	assert_int_equal(smartio_borrow(fx->h, fx->nic0, fx->host1), 0);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 0), -EBUSY);
	assert_true(smartio_device_find(fx->h, "nic0v0") >= 0);
	assert_int_equal(smartio_return(fx->h, fx->nic0, fx->host1), 0);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 0), 0);
	assert_int_equal(smartio_lend(fx->h, fx->nic0, SMARTIO_LEND_NONE, 0),
			 0);
}

static void test_each_vf_a_device_of_its_own(void **state)
{
	struct fx *fx = *state;
	struct smartio_device_info pf, v0, v1;
	struct smartio_sriov_info si;
	uint64_t cur = smartio_event_cursor(fx->h);
	unsigned vf0, vf1;

	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 4), 0);
	assert_true(th_saw_event(fx->h, &cur, "sriov", "dev/nic0"));
	vf0 = th_dev(fx->h, "nic0v0");
	vf1 = th_dev(fx->h, "nic0v1");
	assert_int_equal(smartio_device_info(fx->h, fx->nic0, &pf), 0);
	assert_int_equal(smartio_device_info(fx->h, vf0, &v0), 0);
	assert_int_equal(smartio_device_info(fx->h, vf1, &v1), 0);
	/* Routing ids PF + 1 and PF + 2 (First VF Offset 1, VF Stride 1). */
	assert_string_equal(v0.bdf, "0000:03:00.1");
	assert_string_equal(v1.bdf, "0000:03:00.2");
	assert_int_equal(v0.device, 0x10ed);
	assert_int_equal(v0.node, pf.node);
	assert_int_equal(v0.bar[0].size, 16 << 10);
	assert_int_not_equal(v0.bar[0].addr, v1.bar[0].addr);
	assert_int_equal(smartio_sriov_info(fx->h, vf1, &si), 0);
	assert_int_equal(si.pf, (int)fx->nic0);
	/* NumVFs 4 and VF Enable | VF MSE in the PF's capability. */
	assert_int_equal(cfg16(fx, fx->nic0, 0x110), 4);
	assert_int_equal(cfg16(fx, fx->nic0, 0x108) & 0x9, 0x9);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 0), 0);
}

/*
 * VF 0 lent to host1 and VF 1 to host2 at once, each with a segment of its
 * borrower mapped for it: each VF's DMA reaches its own borrower's
 * segment, and VF 1 using VF 0's address is blocked (MPIOV's requester id
 * check, per VF).  While they are borrowed the VFs cannot be disabled.
 */
static void test_vfs_lent_to_different_nodes(void **state)
{
	struct fx *fx = *state;
	uint64_t io0, io1, blocked;
	unsigned vf0, vf1;
	char buf[16] = "from vf0", got[16];
	char path[256];
	uint64_t size;
	void *bar0, *bar1;

	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 2), 0);
	vf0 = th_dev(fx->h, "nic0v0");
	vf1 = th_dev(fx->h, "nic0v1");
	assert_int_equal(smartio_lend(fx->h, vf0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_lend(fx->h, vf1, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx->h, vf0, fx->host1), 0);
	assert_int_equal(smartio_borrow(fx->h, vf1, fx->host2), 0);
	/* Their BARs are different memory. */
	assert_int_equal(smartio_resolve_bar(fx->h, fx->host1, vf0, 0, path,
					     sizeof(path), &size), 0);
	bar0 = th_map_file(path, size);
	assert_int_equal(smartio_resolve_bar(fx->h, fx->host2, vf1, 0, path,
					     sizeof(path), &size), 0);
	bar1 = th_map_file(path, size);
	memcpy(bar0, "vf0", 4);
	memcpy(bar1, "vf1", 4);
	assert_string_equal((char *)bar0, "vf0");
	/* A segment of each borrower, mapped for its VF. */
	assert_int_equal(smartio_segment_create(fx->h, fx->host1, "s1"), 0);
	assert_int_equal(smartio_segment_set_size(fx->h, fx->host1, "s1",
						  1 << 20), 0);
	assert_int_equal(smartio_segment_dma_map(fx->h, fx->host1, "s1", vf0,
						 &io0), 0);
	assert_int_equal(smartio_segment_create(fx->h, fx->host2, "s2"), 0);
	assert_int_equal(smartio_segment_set_size(fx->h, fx->host2, "s2",
						  1 << 20), 0);
	assert_int_equal(smartio_segment_dma_map(fx->h, fx->host2, "s2", vf1,
						 &io1), 0);
	assert_int_equal(smartio_dma(fx->h, vf0, io0, buf, sizeof(buf), 1), 0);
	assert_int_equal(smartio_dma(fx->h, vf0, io0, got, sizeof(got), 0), 0);
	assert_string_equal(got, "from vf0");
	assert_int_equal(smartio_dma(fx->h, vf1, io1, buf, sizeof(buf), 1), 0);
	blocked = smartio_blocked(fx->h, fx->host0) +
		  smartio_blocked(fx->h, fx->host1);
	/* VF 1 at VF 0's address (each VF its own window): blocked. */
	assert_int_not_equal(io0, io1);
	assert_int_equal(smartio_dma(fx->h, vf1, io0, buf, sizeof(buf), 1),
			 -EFAULT);
	assert_true(smartio_blocked(fx->h, fx->host0) +
		    smartio_blocked(fx->h, fx->host1) > blocked);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 0), -EBUSY);
	assert_true(smartio_device_find(fx->h, "nic0v1") >= 0);
	assert_int_equal(smartio_segment_dma_unmap(fx->h, fx->host1, "s1", vf0),
			 0);
	assert_int_equal(smartio_segment_dma_unmap(fx->h, fx->host2, "s2", vf1),
			 0);
	assert_int_equal(smartio_return(fx->h, vf0, fx->host1), 0);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 0), -EBUSY);
	assert_int_equal(smartio_return(fx->h, vf1, fx->host2), 0);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 0), 0);
	/* Enabled again: a fresh VF, policy none. */
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 1), 0);
	assert_int_equal(smartio_borrow(fx->h, th_dev(fx->h, "nic0v0"),
					fx->host1), -EACCES);
	assert_int_equal(smartio_sriov_set(fx->h, fx->nic0, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vfs_absent_until_enabled),
		cmocka_unit_test(test_bad_counts_refused_state_unchanged),
		cmocka_unit_test(test_no_vfs_while_the_pf_is_borrowed),
		cmocka_unit_test(test_each_vf_a_device_of_its_own),
		cmocka_unit_test(test_vfs_lent_to_different_nodes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
