// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * make bench: DMA reads over a short and a long path (SmartIO section
 * 7.1.3).  Creates the fabric of a topology file in which node a reaches
 * acc0's node over a direct cable and acc1's through two more switches,
 * borrows both for a, maps a segment of a's memory for each, and times
 * `count` reads of `size` bytes by each device (smartio_dma, one after the
 * other, as a device waiting for each completion), both paths in turn for
 * `rounds` rounds.  Prints the best round's nanoseconds per read of each
 * (load from elsewhere only ever adds time):
 *
 *   dma_hops TOPOLOGY SIZE COUNT ROUNDS
 *   direct 1093 switched 1771
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "smartio.h"

#define BENCH_TOOL "dma_hops"
#include "bench_util.h"

/* Nanoseconds per read of size bytes by dev at io, over count reads. */
static double reads(struct smartio *h, unsigned dev, uint64_t io, void *buf,
		    size_t size, unsigned count)
{
	double t = now_ns();
	unsigned i;

	for (i = 0; i < count; i++)
		check(smartio_dma(h, dev, io, buf, size, 0), "smartio_dma");
	return (now_ns() - t) / count;
}

int main(int argc, char **argv)
{
	struct smartio_open_opts o = { .create = 1 };
	struct smartio *h;
	char fabric[64], err[256];
	unsigned a, dev[2], r, rounds, count, k;
	int n;
	uint64_t io[2];
	size_t size;
	double *t[2];
	void *buf;

	if (argc != 5) {
		fprintf(stderr, "usage: dma_hops TOPOLOGY SIZE COUNT ROUNDS\n");
		return 2;
	}
	size = strtoul(argv[2], NULL, 0);
	count = (unsigned)strtoul(argv[3], NULL, 0);
	rounds = (unsigned)strtoul(argv[4], NULL, 0);
	if (!size || size > (1u << 20) || !count || !rounds || rounds > 1000) {
		fprintf(stderr, "dma_hops: size 1..1M, count and rounds > 0\n");
		return 2;
	}
	snprintf(fabric, sizeof(fabric), "bench%d-hops", (int)getpid());
	o.fabric = fabric;
	o.topology = argv[1];
	o.errbuf = err;
	o.errlen = sizeof(err);
	if (smartio_open(&h, &o)) {
		fprintf(stderr, "dma_hops: %s\n", err);
		return 1;
	}
	check(n = smartio_node_find(h, "a"), "node a");
	a = (unsigned)n;
	for (k = 0; k < 2; k++) {
		check(n = smartio_device_find(h, k ? "acc1" : "acc0"), "acc0/1");
		dev[k] = (unsigned)n;
	}
	check(smartio_segment_create(h, a, "buf"), "segment");
	check(smartio_segment_set_size(h, a, "buf", 1 << 20), "segment size");
	buf = malloc(size);
	t[0] = calloc(rounds, sizeof(double));
	t[1] = calloc(rounds, sizeof(double));
	if (!buf || !t[0] || !t[1])
		return 1;
	memset(buf, 0, size);
	for (k = 0; k < 2; k++) {
		check(smartio_lend(h, dev[k], SMARTIO_LEND_ALL, 0), "lend");
		check(smartio_borrow(h, dev[k], a), "borrow");
		check(smartio_segment_dma_map(h, a, "buf", dev[k], &io[k]),
		      "dma map");
		reads(h, dev[k], io[k], buf, size, count);	/* warm-up */
	}
	for (r = 0; r < rounds; r++)
		for (k = 0; k < 2; k++)
			t[k][r] = reads(h, dev[k], io[k], buf, size, count);
	qsort(t[0], rounds, sizeof(double), cmp);
	qsort(t[1], rounds, sizeof(double), cmp);
	printf("direct %.0f switched %.0f\n", t[0][0], t[1][0]);
	smartio_close(h);
	return 0;
}
