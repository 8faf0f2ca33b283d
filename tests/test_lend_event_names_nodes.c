// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A lend event names the nodes lent to (issue 32, item 17): "policy=host1,
 * host3" rather than "policy=list"; when the names do not fit an event's
 * arguments the list ends in ",+N" for the N left out, and the line is
 * still whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

/* The args of the next lend event after *cur (after "policy="). */
static const char *lend_policy(struct smartio *h, uint64_t *cur, char *line,
			       size_t len)
{
	while (smartio_event_read(h, cur, line, len) > 0) {
		char *p = strstr(line, " lend dev/");

		if (p && (p = strstr(p, " policy=")))
			return p + strlen(" policy=");
	}
	return NULL;
}

static void test_lend_to_nodes_names_them(void **state)
{
	char fabric[64], line[256];
	struct smartio *h = th_open(TH_SMALL_TOPO, NULL, fabric, sizeof(fabric));
	unsigned nv = th_dev(h, "nvme0");
	uint64_t cur = smartio_event_cursor(h);
	const char *pol;

	(void)state;
	assert_int_equal(smartio_lend(h, nv, SMARTIO_LEND_LIST,
				      1ull << th_node(h, "host1") |
				      1ull << th_node(h, "host2")), 0);
	pol = lend_policy(h, &cur, line, sizeof(line));
	assert_non_null(pol);
	assert_string_equal(pol, "host1,host2");
	assert_int_equal(smartio_lend(h, nv, SMARTIO_LEND_ALL, 0), 0);
	pol = lend_policy(h, &cur, line, sizeof(line));
	assert_non_null(pol);
	assert_string_equal(pol, "all");
	smartio_close(h);
}

static void test_a_long_list_ends_in_the_count_left_out(void **state)
{
	char fabric[64], line[256], topo[4096];
	size_t n = 0;
	struct smartio *h;
	uint64_t cur, mask = 0;
	const char *pol;
	unsigned i;

	(void)state;
	n += (size_t)snprintf(topo + n, sizeof(topo) - n,
			      "fabric luts=16 requesters=8 reserved=2 window=256M\n");
	for (i = 0; i < 12; i++)
		n += (size_t)snprintf(topo + n, sizeof(topo) - n,
				      "node a-rather-long-node-name-%02u id=%u ram=64M\n"
				      "adapter a-rather-long-node-name-%02u ntb0 peers=all\n",
				      i, i, i);
	snprintf(topo + n, sizeof(topo) - n,
		 "device a-rather-long-node-name-00 nic0 bdf=0000:06:00.0 vendor=0x8086 device=0x10d3 class=0x020000 bar0=128K\n");
	h = th_open(topo, NULL, fabric, sizeof(fabric));
	cur = smartio_event_cursor(h);
	for (i = 1; i < 12; i++)
		mask |= 1ull << i;
	assert_int_equal(smartio_lend(h, th_dev(h, "nic0"), SMARTIO_LEND_LIST,
				      mask), 0);
	pol = lend_policy(h, &cur, line, sizeof(line));
	assert_non_null(pol);
	assert_true(strncmp(pol, "a-rather-long-node-name-01,", 27) == 0);
	/* 11 names of 27 bytes do not fit: the rest are counted. */
	assert_non_null(strstr(pol, ",+"));
	{
		unsigned shown = 1, left = 0;
		const char *p;

		for (p = pol; (p = strchr(p, ',')) && p[1] != '+'; p++)
			shown++;
		assert_int_equal(sscanf(strstr(pol, ",+"), ",+%u", &left), 1);
		assert_int_equal(shown + left, 11);
	}
	smartio_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lend_to_nodes_names_them),
		cmocka_unit_test(test_a_long_list_ends_in_the_count_left_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
