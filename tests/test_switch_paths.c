// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 17 items 1 and 2: cluster switches and cascades (SmartIO section
 * 3) in the topology; paths over them through the fewest switches, then
 * the adapter with the most free LUT entries, each knowing its hop count;
 * and each switch port's requester tables (section 8.6): a requester
 * entering a switch at one port takes an outgoing entry there and an
 * incoming entry on every other cabled port.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "harness.h"

/*
 * swa and swb cascaded over their port 7.  host0 and host1 on swa, host2
 * and host3 on swb; host1 has a second adapter on swa, host0 and host3 a
 * direct cable between them besides.
 */
#define SWITCH_TOPO \
	"fabric luts=256 requesters=32 reserved=2 window=4G\n" \
	"switch swa ports=8 requesters=8 reserved=2\n" \
	"switch swb ports=8 requesters=8 reserved=2\n" \
	"cascade swa:7 swb:7\n" \
	"node host0 id=0\n" \
	"node host1 id=1\n" \
	"node host2 id=2\n" \
	"node host3 id=3\n" \
	"adapter host0 ntb0 switch=swa:0\n" \
	"adapter host0 ntb1 peers=host3 luts=64\n" \
	"adapter host1 ntb0 switch=swa:1\n" \
	"adapter host1 ntb1 switch=swa:2\n" \
	"adapter host2 ntb0 switch=swb:0\n" \
	"adapter host3 ntb0 switch=swb:1\n" \
	"adapter host3 ntb1 peers=host0 luts=64\n" \
	NICS("host0", 1) NICS("host1", 2) NICS("host3", 4)

#define NIC(node, n, i) "device " node " nic" #n #i " bdf=0000:0" #i \
	":00.0 vendor=0x8086 device=0x10d3 class=0x020000 bar0=16K\n"
#define NICS(node, n) NIC(node, n, 1) NIC(node, n, 2) NIC(node, n, 3) \
	NIC(node, n, 4)

struct fx {
	struct smartio *h;
	char fabric[64];
	unsigned n[4];
};

static int setup(void **state)
{
	static struct fx f;
	static const char *const devs[] = {
		"nic11", "nic12", "nic13", "nic14", "nic21", "nic22", "nic23",
		"nic24", "nic41", "nic42", "nic43", "nic44",
	};
	unsigned i;

	f.h = th_open(SWITCH_TOPO, NULL, f.fabric, sizeof(f.fabric));
	f.n[0] = th_node(f.h, "host0");
	f.n[1] = th_node(f.h, "host1");
	f.n[2] = th_node(f.h, "host2");
	f.n[3] = th_node(f.h, "host3");
	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		assert_int_equal(smartio_lend(f.h, th_dev(f.h, devs[i]),
					      SMARTIO_LEND_ALL, 0), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	smartio_close(((struct fx *)*state)->h);
	return 0;
}

static unsigned luts(struct fx *f, unsigned node, unsigned a)
{
	struct smartio_adapter_info ai;

	assert_int_equal(smartio_adapter_info(f->h, node, a, &ai), 0);
	return ai.luts_used;
}

static void test_each_path_knows_its_hops(void **state)
{
	struct fx *f = *state;
	struct smartio_adapter_info ai;

	assert_int_equal(smartio_switch_count(f->h), 2);
	assert_int_equal(smartio_path_hops(f->h, f->n[0], 0, f->n[1]), 1);
	assert_int_equal(smartio_path_hops(f->h, f->n[0], 0, f->n[2]), 2);
	assert_int_equal(smartio_path_hops(f->h, f->n[0], 0, f->n[3]), 2);
	assert_int_equal(smartio_path_hops(f->h, f->n[0], 1, f->n[3]), 0);
	assert_int_equal(smartio_path_hops(f->h, f->n[0], 1, f->n[1]),
			 -EHOSTUNREACH);
	assert_int_equal(smartio_path_hops(f->h, f->n[2], 0, f->n[1]), 2);
	assert_int_equal(smartio_path_hops(f->h, f->n[0], 0, f->n[0]),
			 -EHOSTUNREACH);
	assert_int_equal(smartio_path_hops(f->h, f->n[0], 9, f->n[1]), -ENOENT);
	/* A switch-cabled adapter reaches every node of its switches. */
	assert_int_equal(smartio_adapter_info(f->h, f->n[2], 0, &ai), 0);
	assert_int_equal(ai.sw, 1);
	assert_int_equal(ai.port, 0);
	assert_int_equal(ai.peers, (1u << f->n[0]) | (1u << f->n[1]) |
				   (1u << f->n[3]));
}

static void test_path_takes_fewest_hops_then_most_free(void **state)
{
	struct fx *f = *state;
	unsigned nic = th_dev(f->h, "nic41"), nic2 = th_dev(f->h, "nic42");
	unsigned a0 = luts(f, f->n[0], 0), a1 = luts(f, f->n[0], 1);
	unsigned b0 = luts(f, f->n[1], 0), b1 = luts(f, f->n[1], 1);

	/* host0 reaches host3 over the cable (0 hops), not the switches
	 * (2), though the cable's adapter has fewer free entries. */
	assert_int_equal(smartio_borrow(f->h, nic, f->n[0]), 0);
	assert_int_equal(luts(f, f->n[0], 0), a0);
	assert_int_equal(luts(f, f->n[0], 1), a1 + 1);
	assert_int_equal(smartio_return(f->h, nic, f->n[0]), 0);
	/* host1's two adapters are one switch from host3's: the one with
	 * more free entries carries each borrow. */
	assert_int_equal(smartio_borrow(f->h, nic, f->n[1]), 0);
	assert_int_equal(smartio_borrow(f->h, nic2, f->n[1]), 0);
	assert_int_equal(luts(f, f->n[1], 0), b0 + 1);
	assert_int_equal(luts(f, f->n[1], 1), b1 + 1);
	assert_int_equal(smartio_return(f->h, nic, f->n[1]), 0);
	assert_int_equal(smartio_return(f->h, nic2, f->n[1]), 0);
}

static void port(struct fx *f, unsigned sw, unsigned p, unsigned out,
		 unsigned in)
{
	struct smartio_switch_info si;

	assert_int_equal(smartio_switch_info(f->h, sw, &si), 0);
	if (si.port[p].req_used != out || si.port[p].req_in_used != in)
		fail_msg("switch %u port %u: out %u in %u, want %u %u", sw, p,
			 si.port[p].req_used, si.port[p].req_in_used, out, in);
	assert_int_equal(si.port[p].req_total, 8);
	assert_int_equal(si.port[p].req_in_total, 8);
}

static void test_lend_over_switches_takes_port_entries(void **state)
{
	struct fx *f = *state;
	unsigned nic = th_dev(f->h, "nic11");
	struct smartio_switch_info si;

	assert_int_equal(smartio_switch_info(f->h, 0, &si), 0);
	assert_string_equal(si.name, "swa");
	assert_int_equal(si.port[7].kind, SMARTIO_PORT_CASCADE);
	assert_int_equal(si.port[7].peer_switch, 1);
	assert_int_equal(si.port[0].kind, SMARTIO_PORT_ADAPTER);
	assert_int_equal(si.port[3].kind, SMARTIO_PORT_FREE);
	/* host0 lends to host2: its device's requests enter swa at port 0
	 * and swb at the cascade port 7. */
	assert_int_equal(smartio_borrow(f->h, nic, f->n[2]), 0);
	port(f, 0, 0, 3, 2);
	port(f, 0, 1, 2, 3);
	port(f, 0, 2, 2, 3);
	port(f, 0, 3, 2, 2);	/* not cabled: untouched */
	port(f, 0, 7, 2, 3);
	port(f, 1, 7, 3, 2);
	port(f, 1, 0, 2, 3);
	port(f, 1, 1, 2, 3);
	assert_int_equal(smartio_return(f->h, nic, f->n[2]), 0);
	port(f, 0, 0, 2, 2);
	port(f, 0, 7, 2, 2);
	port(f, 1, 7, 2, 2);
	port(f, 1, 0, 2, 2);
}

/*
 * Lends entering swb at host3's port and at the cascade port fill the
 * incoming table of host2's port 0; then another lend from host3 finds
 * it full and is refused, though every adapter table on its way has room.
 */
static void test_outgoing_on_one_port_consumes_incoming_on_others(void **state)
{
	struct fx *f = *state;
	unsigned from3[4], to2[3], i;
	static const char *const n3[] = { "nic41", "nic42", "nic43", "nic44" };
	static const char *const n2[] = { "nic21", "nic11", "nic12" };
	unsigned r1, r3;
	struct smartio_switch_info before, after;
	struct smartio_device_info di;

	for (i = 0; i < 4; i++)
		from3[i] = th_dev(f->h, n3[i]);
	for (i = 0; i < 3; i++)
		to2[i] = th_dev(f->h, n2[i]);
	/* host3 -> host1: in at swb port 1, incoming on ports 0 and 7. */
	for (i = 0; i < 3; i++)
		assert_int_equal(smartio_borrow(f->h, from3[i], f->n[1]), 0);
	port(f, 1, 1, 2 + 3, 2);
	port(f, 1, 0, 2, 2 + 3);
	/* host1, host0 -> host2: in at swb port 7, incoming on 0 and 1. */
	for (i = 0; i < 3; i++)
		assert_int_equal(smartio_borrow(f->h, to2[i], f->n[2]), 0);
	port(f, 1, 0, 2, 8);	/* full */
	port(f, 1, 1, 2 + 3, 2 + 3);
	r1 = th_reqs_used(f->h, f->n[1]);
	r3 = th_reqs_used(f->h, f->n[3]);
	assert_int_equal(smartio_switch_info(f->h, 1, &before), 0);
	assert_int_equal(smartio_borrow(f->h, from3[3], f->n[1]), -ENOSPC);
	assert_int_equal(smartio_switch_info(f->h, 1, &after), 0);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_int_equal(th_reqs_used(f->h, f->n[1]), r1);
	assert_int_equal(th_reqs_used(f->h, f->n[3]), r3);
	assert_int_equal(smartio_device_info(f->h, from3[3], &di), 0);
	assert_int_equal(di.borrowers, 0);
	/* One of host2's borrows returned: the entry is free again. */
	assert_int_equal(smartio_return(f->h, to2[2], f->n[2]), 0);
	assert_int_equal(smartio_borrow(f->h, from3[3], f->n[1]), 0);
	port(f, 1, 0, 2, 8);
	for (i = 0; i < 4; i++)
		assert_int_equal(smartio_return(f->h, from3[i], f->n[1]), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(smartio_return(f->h, to2[i], f->n[2]), 0);
	port(f, 1, 0, 2, 2);
	port(f, 1, 1, 2, 2);
	port(f, 1, 7, 2, 2);
	port(f, 0, 7, 2, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_path_knows_its_hops),
		cmocka_unit_test(test_path_takes_fewest_hops_then_most_free),
		cmocka_unit_test(test_lend_over_switches_takes_port_entries),
		cmocka_unit_test(test_outgoing_on_one_port_consumes_incoming_on_others),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
