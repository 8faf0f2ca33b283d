// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <time.h>
#include <sys/mman.h>

#include "harness.h"

const char *th_fabric_name(char *buf, size_t len)
{
	static int counter;

	snprintf(buf, len, "test-%d-%d", (int)getpid(), ++counter);
	return buf;
}

const char *th_topology_file(const char *text)
{
	static char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/smartio-topo-%d.conf", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

struct smartio *th_open(const char *topo_text, const char *node,
			char *fabric, size_t fabric_len)
{
	struct smartio_open_opts o = { 0 };
	struct smartio *h = NULL;
	int rc;

	o.fabric = th_fabric_name(fabric, fabric_len);
	o.topology = topo_text ? th_topology_file(topo_text) : NULL;
	o.node = node;
	o.create = 1;
	rc = smartio_open(&h, &o);
	if (rc)
		fprintf(stderr, "smartio_open: %s\n", smartio_strerror(rc));
	assert_int_equal(rc, 0);
	return h;
}

struct smartio *th_join(const char *fabric, const char *node)
{
	struct smartio_open_opts o = { 0 };
	struct smartio *h = NULL;

	o.fabric = fabric;
	o.node = node;
	o.create = 0;
	assert_int_equal(smartio_open(&h, &o), 0);
	return h;
}

unsigned th_node(struct smartio *h, const char *name)
{
	int n = smartio_node_find(h, name);

	assert_true(n >= 0);
	return (unsigned)n;
}

unsigned th_dev(struct smartio *h, const char *name)
{
	int n = smartio_device_find(h, name);

	assert_true(n >= 0);
	return (unsigned)n;
}

static unsigned sum_adapters(struct smartio *h, unsigned node, int reqs)
{
	struct smartio_node_info ni;
	struct smartio_adapter_info ai;
	unsigned a, total = 0;

	assert_int_equal(smartio_node_info(h, node, &ni), 0);
	for (a = 0; a < ni.nadapters; a++) {
		assert_int_equal(smartio_adapter_info(h, node, a, &ai), 0);
		/* Both requester tables, the CPUs' entries counted once. */
		total += reqs ? ai.req_used + ai.req_in_used - ai.req_reserved
			      : ai.luts_used;
	}
	return total;
}

unsigned th_luts_used(struct smartio *h, unsigned node)
{
	return sum_adapters(h, node, 0);
}

unsigned th_reqs_used(struct smartio *h, unsigned node)
{
	return sum_adapters(h, node, 1);
}

int th_saw_event(struct smartio *h, uint64_t *cursor, const char *kind,
		 const char *object)
{
	char line[256], want[128];

	snprintf(want, sizeof(want), " %s %s", kind, object);
	while (smartio_event_read(h, cursor, line, sizeof(line)) > 0)
		if (strstr(line, want))
			return 1;
	return 0;
}

void *th_map_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR);
	void *p;

	assert_true(fd >= 0);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	return p;
}

void th_nap(void)
{
	struct timespec ts = { 0, 200000 };

	nanosleep(&ts, NULL);
}
