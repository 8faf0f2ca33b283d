// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 28, item 8: the simulated fabric's one registry serves every node,
 * and one node's users cannot take all of a table's records: each node
 * holds at most its share (the table's size divided by the number of
 * nodes) and gets EDQUOT beyond it, unsized segments included; another
 * node can still create its own.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>

#include "harness.h"

/* The simulator's segment table (lib/sim/fabric.c sim_limits). */
#define SIM_SEGMENTS 1024

static void test_one_node_cannot_take_every_segment_record(void **state)
{
	char fabric[64], name[32];
	struct smartio *h0 = th_open(TH_SMALL_TOPO, "host0", fabric,
				     sizeof(fabric));
	struct smartio *h = th_join(fabric, "host1");	/* host1's user */
	unsigned host0 = th_node(h, "host0"), host1 = th_node(h, "host1");
	unsigned share = SIM_SEGMENTS / smartio_node_count(h), n;
	int rc = 0;

	(void)state;
	for (n = 0; n < SIM_SEGMENTS; n++) {
		snprintf(name, sizeof(name), "s%u", n);
		rc = smartio_segment_create(h, host1, name);
		if (rc)
			break;
	}
	fprintf(stderr, "host1 created %u segments, then: %s\n", n,
		smartio_strerror(rc));
	assert_int_equal(rc, -EDQUOT);
	assert_int_equal(n, share);
	/* Nothing changed by the refusal; the other nodes keep theirs. */
	assert_int_equal(smartio_segment_find(h, host1, name), -ENOENT);
	assert_int_equal(smartio_segment_create(h0, host0, "mine"), 0);
	/* A record given back is room again. */
	assert_int_equal(smartio_segment_destroy(h, host1, "s0"), 0);
	assert_int_equal(smartio_segment_create(h, host1, name), 0);
	smartio_close(h);
	smartio_close(h0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_node_cannot_take_every_segment_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
