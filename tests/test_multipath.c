// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 17 item 4: failures and multipath (SmartIO section 6.3).  host1
 * has two adapters on switch sw0, host0 (the lender of nic0) one: a link
 * goes down and up with events; a borrow survives the loss of the path it
 * used, its requester entry and BAR slots moved to the other adapter and
 * nothing leaked; with both paths down the borrower sees EHOSTDOWN and
 * every entry is back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define MULTIPATH_TOPO \
	"fabric luts=64 requesters=8 reserved=2 window=1G\n" \
	"switch sw0 ports=4 requesters=8 reserved=2\n" \
	"node host0 id=0 ram=64M\n" \
	"node host1 id=1 ram=64M\n" \
	"adapter host0 ntb0 switch=sw0:0\n" \
	"adapter host1 ntb0 switch=sw0:1\n" \
	"adapter host1 ntb1 switch=sw0:2\n" \
	"device host0 nic0 bdf=0000:01:00.0 vendor=0x8086 device=0x10d3 " \
	"class=0x020000 bar0=128K bar2=16K\n"

struct fx {
	struct smartio *h, *h1;	/* serving host0, host1 */
	char fabric[64];
	unsigned host0, host1, nic0;
};

static int setup(void **state)
{
	static struct fx f;

	f.h = th_open(MULTIPATH_TOPO, "host0", f.fabric, sizeof(f.fabric));
	f.h1 = th_join(f.fabric, "host1");
	f.host0 = th_node(f.h, "host0");
	f.host1 = th_node(f.h, "host1");
	f.nic0 = th_dev(f.h, "nic0");
	assert_int_equal(smartio_lend(f.h, f.nic0, SMARTIO_LEND_ALL, 0), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	smartio_close(((struct fx *)*state)->h1);
	smartio_close(((struct fx *)*state)->h);
	return 0;
}

static struct smartio_adapter_info adapter(struct fx *f, unsigned node,
					   unsigned a)
{
	struct smartio_adapter_info ai;

	assert_int_equal(smartio_adapter_info(f->h, node, a, &ai), 0);
	return ai;
}

/* The adapter of host1 holding the borrow's requester entry, or -1. */
static int borrow_adapter(struct fx *f)
{
	unsigned a;

	for (a = 0; a < 2; a++) {
		struct smartio_adapter_info ai = adapter(f, f->host1, a);

		if (ai.req_in_used > ai.req_reserved)
			return (int)a;
	}
	return -1;
}

static void test_link_goes_down_and_up_with_events(void **state)
{
	struct fx *f = *state;
	uint64_t cur = smartio_event_cursor(f->h);

	assert_int_equal(smartio_link_set(f->h, f->host1, 1, 0), 0);
	assert_int_equal(adapter(f, f->host1, 1).link_up, 0);
	assert_true(th_saw_event(f->h, &cur, "link-down", "nodes/host1"));
	/* Paths over it are gone; the other adapter still reaches host0. */
	assert_int_equal(smartio_path_hops(f->h, f->host1, 1, f->host0),
			 -EHOSTUNREACH);
	assert_int_equal(smartio_path_hops(f->h, f->host1, 0, f->host0), 1);
	/* Down again changes nothing and says nothing. */
	assert_int_equal(smartio_link_set(f->h, f->host1, 1, 0), 0);
	assert_false(th_saw_event(f->h, &cur, "link-down", "nodes/host1"));
	assert_int_equal(smartio_link_set(f->h, f->host1, 1, 1), 0);
	assert_int_equal(adapter(f, f->host1, 1).link_up, 1);
	assert_true(th_saw_event(f->h, &cur, "link-up", "nodes/host1"));
	assert_int_equal(smartio_path_hops(f->h, f->host1, 1, f->host0), 1);
}

static void test_bad_link_requests_change_nothing(void **state)
{
	struct fx *f = *state;

	assert_int_equal(smartio_link_set(f->h, f->host1, 0, 2), -EINVAL);
	assert_int_equal(smartio_link_set(f->h, f->host1, 0, -1), -EINVAL);
	assert_int_equal(smartio_link_set(f->h, f->host1, 2, 0), -ENODEV);
	assert_int_equal(smartio_link_set(f->h, f->host1, 99, 0), -ENODEV);
	assert_int_equal(smartio_link_set(f->h, 64, 0, 0), -ENOENT);
	assert_int_equal(adapter(f, f->host1, 0).link_up, 1);
	assert_int_equal(adapter(f, f->host1, 1).link_up, 1);
}

static void test_borrow_survives_the_loss_of_one_path(void **state)
{
	struct fx *f = *state;
	unsigned luts0 = th_luts_used(f->h, f->host0);
	unsigned luts1 = th_luts_used(f->h, f->host1);
	unsigned reqs0 = th_reqs_used(f->h, f->host0);
	unsigned reqs1 = th_reqs_used(f->h, f->host1);
	struct smartio_adapter_info before, after, other;
	char path[256], again[256];
	uint64_t cur, size;
	uint32_t id = 0;
	int a, b;

	assert_int_equal(smartio_borrow(f->h, f->nic0, f->host1), 0);
	a = borrow_adapter(f);
	assert_true(a >= 0);
	before = adapter(f, f->host1, (unsigned)a);
	other = adapter(f, f->host1, (unsigned)!a);
	assert_int_equal(smartio_resolve_bar(f->h, f->host1, f->nic0, 0, path,
					     sizeof(path), &size), 0);
	cur = smartio_event_cursor(f->h);
	assert_int_equal(smartio_link_set(f->h, f->host1, (unsigned)a, 0), 0);
	assert_true(th_saw_event(f->h, &cur, "failover", "dev/nic0"));
	/* Still borrowed, its entries on the other adapter now. */
	b = borrow_adapter(f);
	assert_int_equal(b, !a);
	after = adapter(f, f->host1, (unsigned)a);
	assert_int_equal(after.req_in_used, before.req_in_used - 1);
	assert_int_equal(after.luts_used, before.luts_used - 2);
	assert_int_equal(adapter(f, f->host1, (unsigned)b).luts_used,
			 other.luts_used + 2);
	assert_int_equal(adapter(f, f->host1, (unsigned)b).req_in_used,
			 other.req_in_used + 1);
	/* The BARs resolve (the same memory) and config cycles get there. */
	assert_int_equal(smartio_resolve_bar(f->h, f->host1, f->nic0, 0, again,
					     sizeof(again), &size), 0);
	assert_string_equal(path, again);
	assert_int_equal(smartio_config_read(f->h1, f->nic0, f->host1, 0, &id,
					     4), 4);
	assert_int_equal(id, 0x10d38086);
	/* Back up: the borrow stays where it is; returned, nothing leaked. */
	assert_int_equal(smartio_link_set(f->h, f->host1, (unsigned)a, 1), 0);
	assert_int_equal(borrow_adapter(f), b);
	assert_int_equal(smartio_return(f->h, f->nic0, f->host1), 0);
	assert_int_equal(th_luts_used(f->h, f->host0), luts0);
	assert_int_equal(th_luts_used(f->h, f->host1), luts1);
	assert_int_equal(th_reqs_used(f->h, f->host0), reqs0);
	assert_int_equal(th_reqs_used(f->h, f->host1), reqs1);
}

static void test_no_path_left_is_ehostdown_and_frees_all(void **state)
{
	struct fx *f = *state;
	unsigned luts0 = th_luts_used(f->h, f->host0);
	unsigned luts1 = th_luts_used(f->h, f->host1);
	unsigned reqs0 = th_reqs_used(f->h, f->host0);
	unsigned reqs1 = th_reqs_used(f->h, f->host1);
	struct smartio_switch_info sw;
	unsigned in_used = 0, p;
	uint64_t cur, size;
	char path[256];
	uint32_t id;

	assert_int_equal(smartio_switch_info(f->h, 0, &sw), 0);
	for (p = 0; p < sw.nports; p++)
		in_used += sw.port[p].req_in_used + sw.port[p].req_used;
	assert_int_equal(smartio_borrow(f->h, f->nic0, f->host1), 0);
	cur = smartio_event_cursor(f->h);
	assert_int_equal(smartio_link_set(f->h, f->host1, 0, 0), 0);
	assert_int_equal(smartio_link_set(f->h, f->host1, 1, 0), 0);
	assert_true(th_saw_event(f->h, &cur, "reclaim", "dev/nic0"));
	assert_int_equal(smartio_resolve_bar(f->h, f->host1, f->nic0, 0, path,
					     sizeof(path), &size), -EACCES);
	assert_int_equal(smartio_borrow(f->h, f->nic0, f->host1), -EHOSTDOWN);
	/* host1's own requests find no way to host0 either. */
	assert_int_equal(smartio_config_read(f->h1, f->nic0, f->host1, 0, &id,
					     4), -EHOSTDOWN);
	assert_int_equal(th_luts_used(f->h, f->host0), luts0);
	assert_int_equal(th_luts_used(f->h, f->host1), luts1);
	assert_int_equal(th_reqs_used(f->h, f->host0), reqs0);
	assert_int_equal(th_reqs_used(f->h, f->host1), reqs1);
	assert_int_equal(smartio_switch_info(f->h, 0, &sw), 0);
	for (p = 0; p < sw.nports; p++)
		in_used -= sw.port[p].req_in_used + sw.port[p].req_used;
	assert_int_equal(in_used, 0);
	/* A path back: the device can be borrowed again. */
	assert_int_equal(smartio_link_set(f->h, f->host1, 1, 1), 0);
	assert_int_equal(smartio_borrow(f->h, f->nic0, f->host1), 0);
	assert_int_equal(smartio_return(f->h, f->nic0, f->host1), 0);
	assert_int_equal(smartio_link_set(f->h, f->host1, 0, 1), 0);
}

/*
 * host1's attachment of a segment of host0 goes with the path too: its
 * LUT slot moves to the other adapter (a failover event), and with no
 * path left the attachment ends (segment-detach) and the slot is back.
 */
static void test_attachment_moves_then_ends_with_the_paths(void **state)
{
	struct fx *f = *state;
	unsigned luts1 = th_luts_used(f->h, f->host1), a;
	struct smartio_segment_info si;
	char path[256];
	uint64_t cur, size;
	int seg;

	assert_int_equal(smartio_segment_create(f->h, f->host0, "s"), 0);
	assert_int_equal(smartio_segment_set_size(f->h, f->host0, "s",
						  1 << 20), 0);
	assert_int_equal(smartio_segment_set_available(f->h, f->host0, "s",
						       1), 0);
	assert_int_equal(smartio_segment_attach(f->h, f->host0, "s",
						f->host1), 0);
	assert_int_equal(th_luts_used(f->h, f->host1), luts1 + 1);
	a = adapter(f, f->host1, 0).luts_used ? 0 : 1;
	assert_int_equal(adapter(f, f->host1, a).luts_used, 1);
	cur = smartio_event_cursor(f->h);
	assert_int_equal(smartio_link_set(f->h, f->host1, a, 0), 0);
	assert_true(th_saw_event(f->h, &cur, "failover", "seg/host0.s"));
	assert_int_equal(adapter(f, f->host1, a).luts_used, 0);
	assert_int_equal(adapter(f, f->host1, !a).luts_used, 1);
	assert_int_equal(smartio_resolve_segment(f->h, f->host1, f->host0, "s",
						 path, sizeof(path), &size), 0);
	assert_int_equal(smartio_link_set(f->h, f->host1, !a, 0), 0);
	assert_true(th_saw_event(f->h, &cur, "segment-detach", "seg/host0.s"));
	assert_int_equal(th_luts_used(f->h, f->host1), luts1);
	seg = smartio_segment_find(f->h, f->host0, "s");
	assert_true(seg >= 0);
	assert_int_equal(smartio_segment_at(f->h, (unsigned)seg, &si), 1);
	assert_int_equal(si.attached, 0);
	assert_int_equal(smartio_link_set(f->h, f->host1, 0, 1), 0);
	assert_int_equal(smartio_link_set(f->h, f->host1, 1, 1), 0);
	assert_int_equal(smartio_segment_destroy(f->h, f->host0, "s"), 0);
}

static int node_state(struct fx *f, unsigned node)
{
	struct smartio_node_info ni;

	assert_int_equal(smartio_node_info(f->h, node, &ni), 0);
	return ni.state;
}

/*
 * A node cut off from every other for longer than the failure detector's
 * timeout (2 s) stays up, as do the others: on one shared registry the
 * two sides of a partition would declare each other down for everyone.
 * Its requests fail with EHOSTDOWN until a link is back.
 */
static void test_cut_off_node_stays_up(void **state)
{
	struct fx *f = *state;
	struct timespec ts = { 2, 600000000 };

	assert_int_equal(smartio_link_set(f->h, f->host1, 0, 0), 0);
	assert_int_equal(smartio_link_set(f->h, f->host1, 1, 0), 0);
	nanosleep(&ts, NULL);
	assert_int_equal(node_state(f, f->host0), SMARTIO_NODE_UP);
	assert_int_equal(node_state(f, f->host1), SMARTIO_NODE_UP);
	assert_int_equal(smartio_borrow(f->h, f->nic0, f->host1), -EHOSTDOWN);
	assert_int_equal(smartio_link_set(f->h, f->host1, 0, 1), 0);
	assert_int_equal(smartio_borrow(f->h, f->nic0, f->host1), 0);
	assert_int_equal(smartio_return(f->h, f->nic0, f->host1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_link_goes_down_and_up_with_events, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_bad_link_requests_change_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_borrow_survives_the_loss_of_one_path, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_no_path_left_is_ehostdown_and_frees_all, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_attachment_moves_then_ends_with_the_paths, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_cut_off_node_stays_up, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
