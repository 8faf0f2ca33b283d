// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * blk_randread: 4 KiB random reads with O_DIRECT, one at a time, from a
 * block device, for the bench guests that have no fio (its libraries are
 * 80 MiB, more than a 128 MiB guest holds beside its kernel):
 *
 *   blk_randread DEVICE READS BLOCKS
 *
 * reads READS 4 KiB blocks at random 4 KiB-aligned offsets within the
 * first BLOCKS 512-byte blocks of DEVICE and prints the line
 * smartio-nvmeq's bench prints, so that tests/bench/bench.py reads both
 * alike:
 *
 *   random 4 KiB reads of DEVICE, depth 1: N in T s, X IOPS, p50 P us,
 *   p99 Q us
 *
 * Static (tests/bench/ntb_nvmeq.sh, ntb_vf.sh): the guests have no C
 * library of their own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A whole decimal number from 1 to max, or 0. */
static unsigned long number(const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < 1 || v > max)
		return 0;
	return v;
}

int main(int argc, char **argv)
{
	unsigned long reads, blocks, span, i;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	double *lat, t0, secs;
	void *buf;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: blk_randread DEVICE READS BLOCKS\n");
		return 2;
	}
	reads = number(argv[2], 100000000);
	blocks = number(argv[3], 1ul << 40);
	if (!reads || blocks < BLOCK / 512) {
		fprintf(stderr, "blk_randread: READS 1 to 100000000, BLOCKS at least 8\n");
		return 2;
	}
	span = blocks / (BLOCK / 512);
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "blk_randread: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	lat = calloc(reads, sizeof(*lat));
	if (!lat || posix_memalign(&buf, BLOCK, BLOCK)) {
		fprintf(stderr, "blk_randread: out of memory\n");
		return 1;
	}
	t0 = now_us();
	for (i = 0; i < reads; i++) {
		double t;
		ssize_t n;

		/* xorshift64: cheap, and the same offsets every run. */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		t = now_us();
		n = pread(fd, buf, BLOCK, (off_t)(x % span) * BLOCK);
		if (n != BLOCK) {
			fprintf(stderr, "blk_randread: %s: read %lu: %s\n", argv[1],
				i, n < 0 ? strerror(errno) : "short read");
			return 1;
		}
		lat[i] = now_us() - t;
	}
	secs = (now_us() - t0) / 1e6;
	qsort(lat, reads, sizeof(*lat), cmp_double);
	printf("random 4 KiB reads of %s, depth 1: %lu in %.3f s, %.0f IOPS, "
	       "p50 %.1f us, p99 %.1f us\n", argv[1], reads, secs,
	       (double)reads / secs, lat[reads / 2], lat[reads * 99 / 100]);
	free(lat);
	free(buf);
	close(fd);
	return 0;
}
