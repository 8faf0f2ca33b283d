// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * make bench: one 4 KiB device write into a multicast group of N members
 * against one into a group of one (SmartIO sections 6.5 and 7.4.2).  The
 * paper's cluster in small: 60 nodes on three cascaded 24-port switches,
 * the first holding the groups; acc0 on host0 writes, host1 .. hostN
 * subscribe with a segment each.  Times `count` writes (smartio_dma, one
 * after the other, as a device waiting for each) into each group in turn
 * for `rounds` rounds, checks that every member received the last one,
 * and prints the best round's nanoseconds per write of each group:
 *
 *   mcast_write COUNT ROUNDS N...
 *   1 2210 4 2390 16 3100 59 5900
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "smartio.h"

#define BENCH_TOOL "mcast_write"
#include "bench_util.h"

#define NODES 60
#define WRITE_SIZE 4096u
#define MAX_GROUPS 4

/* 60 nodes: host0..21 on s0 (the groups' switch), host22..43 on s1 and
 * host44..59 on s2, both cascaded with s0. */
static void write_topology(FILE *f)
{
	unsigned i;

	fprintf(f, "fabric luts=64 requesters=32 reserved=2 window=1G\n"
		"switch s0 ports=24 multicast=%u\nswitch s1 ports=24\n"
		"switch s2 ports=24\ncascade s0:22 s1:23\ncascade s0:23 s2:23\n",
		MAX_GROUPS);
	for (i = 0; i < NODES; i++)
		fprintf(f, "node host%u id=%u ram=64M\n", i, i);
	for (i = 0; i < NODES; i++)
		fprintf(f, "adapter host%u ntb0 switch=s%u:%u\n", i,
			i < 22 ? 0 : i < 44 ? 1 : 2, i < 22 ? i : (i - 22) % 22);
	fprintf(f, "device host0 acc0 bdf=0000:01:00.0 vendor=0x10ee "
		"device=0x7038 class=0x120000 bar0=16K\n");
}

/* A member's segment file, mapped shared; exits when it cannot be. */
static uint8_t *map_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR);
	void *p;

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror(path);
		exit(1);
	}
	return p;
}

/* Nanoseconds per write of buf into the group at io, over count writes. */
static double writes(struct smartio *h, unsigned dev, uint64_t io,
		     uint8_t *buf, unsigned count)
{
	double t = now_ns();
	unsigned i;

	for (i = 0; i < count; i++) {
		buf[0] = (uint8_t)i;
		check(smartio_dma(h, dev, io, buf, WRITE_SIZE, 1), "write");
	}
	return (now_ns() - t) / count;
}

int main(int argc, char **argv)
{
	struct smartio_open_opts o = { .create = 1 };
	char fabric[64], err[256], topo[] = "/tmp/mcast-topo.XXXXXX", name[16];
	unsigned count, rounds, ng, n[MAX_GROUPS], k, m, r, dev;
	double *t[MAX_GROUPS];
	uint64_t io[MAX_GROUPS];
	uint8_t *buf, *seg[NODES] = { 0 };
	struct smartio *h;
	int g[MAX_GROUPS], fd, rc;
	FILE *f;

	if (argc < 4 || argc - 3 > MAX_GROUPS) {
		fprintf(stderr, "usage: mcast_write COUNT ROUNDS N... (up to %d)\n",
			MAX_GROUPS);
		return 2;
	}
	count = (unsigned)strtoul(argv[1], NULL, 0);
	rounds = (unsigned)strtoul(argv[2], NULL, 0);
	ng = (unsigned)argc - 3;
	for (k = 0; k < ng; k++) {
		n[k] = (unsigned)strtoul(argv[3 + k], NULL, 0);
		if (!n[k] || n[k] >= NODES) {
			fprintf(stderr, "mcast_write: N from 1 to %d\n", NODES - 1);
			return 2;
		}
	}
	if (!count || !rounds || rounds > 1000)
		return 2;
	fd = mkstemp(topo);
	if (fd < 0 || !(f = fdopen(fd, "w")))
		return 1;
	write_topology(f);
	fclose(f);
	snprintf(fabric, sizeof(fabric), "bench%d-mcast", (int)getpid());
	o.fabric = fabric;
	o.topology = topo;
	o.errbuf = err;
	o.errlen = sizeof(err);
	rc = smartio_open(&h, &o);
	unlink(topo);
	if (rc) {
		fprintf(stderr, "mcast_write: %s\n", err);
		return 1;
	}
	check(rc = smartio_device_find(h, "acc0"), "acc0");
	dev = (unsigned)rc;
	for (m = 1; m < NODES; m++) {
		char path[256];
		uint64_t size;

		check(smartio_segment_create(h, m, "mc"), "segment");
		check(smartio_segment_set_size(h, m, "mc", WRITE_SIZE), "size");
		check(smartio_resolve_segment(h, m, m, "mc", path, sizeof(path),
					      &size), "resolve");
		seg[m] = map_file(path, size);
	}
	for (k = 0; k < ng; k++) {
		snprintf(name, sizeof(name), "n%u", k);
		check(g[k] = smartio_mcast_create(h, name, 0, WRITE_SIZE),
		      "group");
		for (m = 1; m <= n[k]; m++)
			check(smartio_mcast_join_segment(h, (unsigned)g[k], m,
							 "mc"), "join");
		check(smartio_mcast_map(h, (unsigned)g[k], dev, 0, &io[k]),
		      "map");
		t[k] = calloc(rounds, sizeof(double));
	}
	buf = calloc(1, WRITE_SIZE);
	if (!buf)
		return 1;
	for (k = 0; k < ng; k++)
		writes(h, dev, io[k], buf, count);	/* warm-up */
	for (r = 0; r < rounds; r++)
		for (k = 0; k < ng; k++)
			t[k][r] = writes(h, dev, io[k], buf, count);
	for (k = 0; k < ng; k++) {
		struct smartio_mcast_info mi;

		/* Every member holds the group's last write. */
		memset(buf, 0, WRITE_SIZE);
		buf[1] = (uint8_t)(0xa0 + k);
		check(smartio_dma(h, dev, io[k], buf, WRITE_SIZE, 1), "last");
		for (m = 1; m <= n[k]; m++)
			if (memcmp(seg[m], buf, WRITE_SIZE)) {
				fprintf(stderr, "mcast_write: host%u lacks the "
					"write of group n%u\n", m, k);
				return 1;
			}
		check(smartio_mcast_info(h, (unsigned)g[k], &mi), "info");
		if (mi.delivered != mi.writes * n[k]) {
			fprintf(stderr, "mcast_write: n%u: %llu copies of %llu "
				"writes\n", k, (unsigned long long)mi.delivered,
				(unsigned long long)mi.writes);
			return 1;
		}
		qsort(t[k], rounds, sizeof(double), cmp);
		printf("%s%u %.0f", k ? " " : "", n[k], t[k][0]);
	}
	printf("\n");
	smartio_close(h);
	return 0;
}
