// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * memcpy_ratio PATH BYTES [ROUNDS]
 *
 * Copies BYTES from a local buffer into PATH mapped with mmap (a `mem` or
 * `bar<N>` link of /smartio, followed as any application follows it) and,
 * side by side in the same run, into local anonymous memory, and prints
 *
 *   ratio <local time / mapped time>  mapped_gbs <x>  local_gbs <y>
 *
 * so 1.0 means the remote mapping is as fast as local memory.  The two
 * targets are timed back to back, round after round (which goes first
 * alternates), and the ratio printed is the median of the rounds' ratios:
 * on a shared machine a neighbour slows both copies of a round alike, and
 * the median ignores the rounds it slowed only one of.  The bandwidths are
 * the best rounds'.  Both targets are written once before timing so that
 * page faults are not counted against either.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The copy under test; the barrier keeps the compiler from dropping or
 * merging copies whose result it never sees read. */
static double timed_copy(void *dst, const void *src, size_t n)
{
	double t = now();

	memcpy(dst, src, n);
	__asm__ __volatile__("" : : "r"(dst) : "memory");
	return now() - t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t bytes;
	int rounds, fd, r;
	void *mapped, *local, *src;
	double best_m = 1e30, best_l = 1e30, tm, tl, *ratios;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: memcpy_ratio PATH BYTES [ROUNDS]\n");
		return 2;
	}
	bytes = strtoull(argv[2], NULL, 0);
	rounds = argc > 3 ? atoi(argv[3]) : 60;
	if (!bytes || rounds < 1) {
		fprintf(stderr, "memcpy_ratio: bad size or rounds\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "memcpy_ratio: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	local = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = malloc(bytes);
	ratios = calloc((size_t)rounds, sizeof(*ratios));
	close(fd);
	if (mapped == MAP_FAILED || local == MAP_FAILED || !src || !ratios) {
		fprintf(stderr, "memcpy_ratio: mmap %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	memset(src, 0x5a, bytes);
	memset(mapped, 0, bytes);
	memset(local, 0, bytes);
	for (r = 0; r < rounds; r++) {
		if (r & 1) {
			tl = timed_copy(local, src, bytes);
			tm = timed_copy(mapped, src, bytes);
		} else {
			tm = timed_copy(mapped, src, bytes);
			tl = timed_copy(local, src, bytes);
		}
		best_m = tm < best_m ? tm : best_m;
		best_l = tl < best_l ? tl : best_l;
		ratios[r] = tl / tm;
	}
	qsort(ratios, (size_t)rounds, sizeof(*ratios), cmp_double);
	/* The copies must have landed: a mapping that silently dropped writes
	 * would otherwise look very fast. */
	if (memcmp(mapped, src, bytes) || memcmp(local, src, bytes)) {
		fprintf(stderr, "memcpy_ratio: %s: data did not arrive\n", argv[1]);
		return 1;
	}
	printf("ratio %.4f mapped_gbs %.2f local_gbs %.2f\n", ratios[rounds / 2],
	       (double)bytes / best_m / 1e9, (double)bytes / best_l / 1e9);
	munmap(mapped, bytes);
	munmap(local, bytes);
	free(src);
	free(ratios);
	return 0;
}
