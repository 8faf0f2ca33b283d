// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libsmartio(3)'s deliberate difference from a mount (issue 32, item 11):
 * a handle is not limited to the nodes it serves.  A process serving only
 * host2 returns host1's borrow and reclaims as host0, and each call
 * succeeds where the core allows the act; where the core does not (a
 * reclaim asked as a node that is not the lender) it still refuses.  A
 * mount of smartiofs refuses the same acts (a return for another node is
 * EPERM, tests/fs/test_authz.py; a reclaim acts as the mount's own node);
 * this test keeps the library's page true.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>

#include "harness.h"

static uint64_t borrowers(struct smartio *h, unsigned dev)
{
	struct smartio_device_info di;

	assert_int_equal(smartio_device_info(h, dev, &di), 0);
	return di.borrowers;
}

static void test_a_handle_acts_for_nodes_it_does_not_serve(void **state)
{
	char fabric[64];
	struct smartio *h0 = th_open(TH_SMALL_TOPO, "host0", fabric,
				     sizeof(fabric));
	struct smartio *h1 = th_join(fabric, "host1");
	struct smartio *h2 = th_join(fabric, "host2");
	unsigned nv = th_dev(h0, "nvme0");
	unsigned host0 = th_node(h2, "host0"), host1 = th_node(h2, "host1");
	unsigned host2 = th_node(h2, "host2");

	(void)state;
	assert_int_equal(smartio_lend(h0, nv, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h1, nv, host1), 0);
	/* host2's handle returns host1's borrow */
	assert_int_equal(smartio_return(h2, nv, host1), 0);
	assert_int_equal(borrowers(h0, nv), 0);
	/* ... borrows for host1, and reclaims as the lender host0 */
	assert_int_equal(smartio_borrow(h2, nv, host1), 0);
	assert_int_equal(borrowers(h0, nv), 1ull << host1);
	assert_int_equal(smartio_reclaim(h2, nv, host0), 0);
	assert_int_equal(borrowers(h0, nv), 0);
	/* the core's own rule stands: only the lender reclaims */
	assert_int_equal(smartio_borrow(h1, nv, host1), 0);
	assert_int_equal(smartio_reclaim(h2, nv, host2), -EACCES);
	assert_int_equal(borrowers(h0, nv), 1ull << host1);
	assert_int_equal(smartio_return(h1, nv, host1), 0);
	smartio_close(h2);
	smartio_close(h1);
	smartio_close(h0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_handle_acts_for_nodes_it_does_not_serve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
