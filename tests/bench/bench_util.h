/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by make bench's C tools: a clock, an order for qsort() of times
 * and a check that ends the tool on a library error.  Define BENCH_TOOL,
 * the tool's name for its messages, before including this.
 */
#ifndef SMARTIO_BENCH_UTIL_H
#define SMARTIO_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static inline void check(int rc, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, BENCH_TOOL ": %s: %s\n", what, strerror(-rc));
		exit(1);
	}
}

#endif
