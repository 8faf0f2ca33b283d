// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * When a node is lost, the event stream tells it in the order of cause and
 * effect, as smartio(7)'s example shows (issue 32, item 7): first
 * "node-down nodes/<node>", then what its loss undid: the return of the
 * devices it borrowed, the reclaim of its own devices from their
 * borrowers and the detach of the segments it had attached.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define TOPO \
	"fabric luts=16 requesters=8 reserved=2 window=256M\n" \
	"node host0 id=0 ram=64M\n" \
	"node host1 id=1 ram=64M\n" \
	"adapter host0 ntb0 peers=all\n" \
	"adapter host1 ntb0 peers=all\n" \
	"device host0 nvme0 bdf=0000:01:00.0 vendor=0x1b36 device=0x0010 class=0x010802 bar0=16K,64\n" \
	"device host1 nic1 bdf=0000:02:00.0 vendor=0x8086 device=0x10d3 class=0x020000 bar0=128K\n"

/* The position of the first line after cur with this kind and object, or -1. */
static int position(char lines[][256], int n, const char *kind,
		    const char *object)
{
	char want[128];
	int i;

	snprintf(want, sizeof(want), " %s %s", kind, object);
	for (i = 0; i < n; i++)
		if (strstr(lines[i], want))
			return i;
	return -1;
}

static void test_node_down_comes_before_what_it_undid(void **state)
{
	char fabric[64], lines[32][256];
	struct smartio *h0 = th_open(TOPO, "host0", fabric, sizeof(fabric));
	struct smartio *h1 = th_join(fabric, "host1");
	unsigned n0 = th_node(h0, "host0"), n1 = th_node(h0, "host1");
	unsigned nvme = th_dev(h0, "nvme0"), nic = th_dev(h0, "nic1");
	uint64_t cur;
	int n = 0, down, ret, rec, det;

	(void)state;
	assert_int_equal(smartio_lend(h0, nvme, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h1, nvme, n1), 0);
	assert_int_equal(smartio_lend(h1, nic, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h0, nic, n0), 0);
	assert_int_equal(smartio_segment_create(h0, n0, "ring"), 0);
	assert_int_equal(smartio_segment_set_size(h0, n0, "ring", 1 << 20), 0);
	assert_int_equal(smartio_segment_set_available(h0, n0, "ring", 1), 0);
	assert_int_equal(smartio_segment_attach(h1, n0, "ring", n1), 0);
	cur = smartio_event_cursor(h0);
	smartio_close(h1);
	while (n < 32 && smartio_event_read(h0, &cur, lines[n], sizeof(lines[n])) > 0)
		n++;
	down = position(lines, n, "node-down", "nodes/host1");
	ret = position(lines, n, "return", "dev/nvme0");
	rec = position(lines, n, "reclaim", "dev/nic1");
	det = position(lines, n, "segment-detach", "seg/host0.ring");
	if (down != 0 || ret <= down || rec <= down || det <= down) {
		int i;

		for (i = 0; i < n; i++)
			fprintf(stderr, "event: %s\n", lines[i]);
	}
	assert_int_equal(down, 0);
	assert_true(ret > down);
	assert_true(rec > down);
	assert_true(det > down);
	smartio_close(h0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_down_comes_before_what_it_undid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
