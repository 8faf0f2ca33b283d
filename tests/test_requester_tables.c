// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 17 item 1 (SmartIO section 8.6): an NTB adapter has one requester
 * table for requests leaving the node (its CPUs, the devices it lends) and
 * one for requests arriving (other nodes' CPUs, the devices it borrows).
 * With 32 entries and 2 reserved for CPUs a node lends up to 30 devices and
 * borrows up to 30 at the same time; one shared pool allowed 30 in all.
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

#define PER_NODE 31	/* one more than a table holds */

/* Two nodes back to back, PER_NODE one-BAR devices each. */
static const char *two_node_topology(void)
{
	static char text[8192];
	size_t at;
	unsigned n, i;

	at = (size_t)snprintf(text, sizeof(text),
			      "fabric luts=256 requesters=32 reserved=2 window=4G\n"
			      "node host0 id=0 ram=64M\n"
			      "node host1 id=1 ram=64M\n"
			      "adapter host0 ntb0 peers=host1\n"
			      "adapter host1 ntb0 peers=host0\n");
	for (n = 0; n < 2; n++)
		for (i = 0; i < PER_NODE; i++)
			at += (size_t)snprintf(text + at, sizeof(text) - at,
				"device host%u nic%u bdf=0000:%02x:00.0 "
				"vendor=0x8086 device=0x10d3 class=0x020000 "
				"bar0=16K\n", n, n * PER_NODE + i, i + 1);
	assert_true(at < sizeof(text));
	return text;
}

static unsigned dev_of(struct smartio *h, unsigned node, unsigned i)
{
	char name[16];

	snprintf(name, sizeof(name), "nic%u", node * PER_NODE + i);
	return th_dev(h, name);
}

static void tables(struct smartio *h, unsigned node, unsigned *out,
		   unsigned *in)
{
	struct smartio_adapter_info ai;

	assert_int_equal(smartio_adapter_info(h, node, 0, &ai), 0);
	assert_int_equal(ai.req_total, 32);
	assert_int_equal(ai.req_in_total, 32);
	*out = ai.req_used;
	*in = ai.req_in_used;
}

static void test_node_lends_30_and_borrows_30_at_once(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(two_node_topology(), NULL, fabric,
				    sizeof(fabric));
	unsigned h0 = th_node(h, "host0"), h1 = th_node(h, "host1");
	unsigned i, out, in;

	(void)state;
	for (i = 0; i < PER_NODE; i++) {
		assert_int_equal(smartio_lend(h, dev_of(h, 0, i),
					      SMARTIO_LEND_ALL, 0), 0);
		assert_int_equal(smartio_lend(h, dev_of(h, 1, i),
					      SMARTIO_LEND_ALL, 0), 0);
	}
	/* host0 lends 30 to host1 and borrows 30 from it, interleaved. */
	for (i = 0; i < 30; i++) {
		assert_int_equal(smartio_borrow(h, dev_of(h, 0, i), h1), 0);
		assert_int_equal(smartio_borrow(h, dev_of(h, 1, i), h0), 0);
	}
	tables(h, h0, &out, &in);
	assert_int_equal(out, 32);
	assert_int_equal(in, 32);
	/* The 31st of either kind finds its own table full. */
	assert_int_equal(smartio_borrow(h, dev_of(h, 0, 30), h1), -ENOSPC);
	assert_int_equal(smartio_borrow(h, dev_of(h, 1, 30), h0), -ENOSPC);
	tables(h, h0, &out, &in);
	assert_int_equal(out, 32);
	assert_int_equal(in, 32);
	/* One lend returned frees an outgoing entry, not an incoming one. */
	assert_int_equal(smartio_return(h, dev_of(h, 0, 0), h1), 0);
	assert_int_equal(smartio_borrow(h, dev_of(h, 1, 30), h0), -ENOSPC);
	assert_int_equal(smartio_borrow(h, dev_of(h, 0, 30), h1), 0);
	smartio_close(h);
}

static void test_borrow_takes_incoming_and_lend_outgoing(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(two_node_topology(), NULL, fabric,
				    sizeof(fabric));
	unsigned h0 = th_node(h, "host0"), h1 = th_node(h, "host1");
	unsigned d = dev_of(h, 0, 0), o0, i0, o1, i1, o, in;

	(void)state;
	tables(h, h0, &o0, &i0);
	tables(h, h1, &o1, &i1);
	assert_int_equal(o0, 2);	/* the CPUs' entries */
	assert_int_equal(i0, 2);
	assert_int_equal(smartio_lend(h, d, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h, d, h1), 0);
	tables(h, h0, &o, &in);
	assert_int_equal(o, o0 + 1);
	assert_int_equal(in, i0);
	tables(h, h1, &o, &in);
	assert_int_equal(o, o1);
	assert_int_equal(in, i1 + 1);
	assert_int_equal(smartio_return(h, d, h1), 0);
	tables(h, h0, &o, &in);
	assert_int_equal(o, o0);
	assert_int_equal(in, i0);
	tables(h, h1, &o, &in);
	assert_int_equal(o, o1);
	assert_int_equal(in, i1);
	smartio_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_lends_30_and_borrows_30_at_once),
		cmocka_unit_test(test_borrow_takes_incoming_and_lend_outgoing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
