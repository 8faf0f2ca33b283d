// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kill [ITERATIONS]: fault injection with SIGKILL, through libsmartio.
 *
 * The observer (this process) serves host0 of the built-in cluster and owns
 * a segment "keep" filled with a known pattern.  Each iteration starts
 * worker processes that each serve one node and loop over lending, borrowing,
 * returning and segment operations as fast as they can, then kills one of
 * them with SIGKILL after a random delay, so that it dies in the middle of
 * some operation (often while holding the fabric lock):
 *   even iterations: a borrower (host1), borrowing host0's nic0 and host2's
 *                    nvme2, attaching "keep", creating and sizing segments;
 *   odd iterations:  a lender (host2), lending nvme2 back and forth and
 *                    doing segment operations, while host1 keeps borrowing.
 * Then it checks:
 *   - the killed node is seen down within 3 s of the kill;
 *   - once the survivor stopped cleanly, no LUT or requester entry of any
 *     adapter is still used (the counts are those of the start) and no
 *     device is borrowed;
 *   - "keep" still holds its pattern and nobody but host0 is attached.
 * Prints one line per kind and the slowest detection.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "smartio.h"

#define KEEP_SIZE (256u << 10)

/* Set by the observer to stop the survivor cleanly (MAP_SHARED). */
static volatile int *stop_flag;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "kill: %s: %s\n", what, smartio_strerror(rc));
	exit(1);
}

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 131 + (i >> 12));
}

/* Worker: serves `node` and loops over operations until killed. */
static void worker(const char *fabric, const char *node, int lender, int wfd)
{
	struct smartio_open_opts o = { 0 };
	struct smartio *h;
	char seg[32];
	unsigned me, host0;
	int nic0, nvme2, n = 0;

	o.fabric = fabric;
	o.node = node;
	if (smartio_open(&h, &o))
		_exit(2);
	me = smartio_self(h);
	host0 = (unsigned)smartio_node_find(h, "host0");
	nic0 = smartio_device_find(h, "nic0");
	nvme2 = smartio_device_find(h, "nvme2");
	if (lender)
		smartio_lend(h, (unsigned)nvme2, SMARTIO_LEND_ALL, 0);
	if (write(wfd, "r", 1) != 1)
		_exit(3);
	close(wfd);
	for (;; n++) {
		if (*stop_flag) {
			/* Undo this loop's work as a well-behaved process
			 * would, then leave: only the victim dies unclean. */
			smartio_return(h, (unsigned)nic0, me);
			smartio_return(h, (unsigned)nvme2, me);
			smartio_segment_detach(h, host0, "keep", me);
			smartio_close(h);
			_exit(0);
		}
		snprintf(seg, sizeof(seg), "w%d", n % 4);
		if (lender) {
			/* Withdraw and offer again; fails EBUSY while borrowed. */
			smartio_lend(h, (unsigned)nvme2, SMARTIO_LEND_NONE, 0);
			smartio_lend(h, (unsigned)nvme2, SMARTIO_LEND_ALL, 0);
		} else {
			smartio_borrow(h, (unsigned)nic0, me);
			smartio_borrow(h, (unsigned)nvme2, me);
			smartio_segment_attach(h, host0, "keep", me);
		}
		smartio_segment_create(h, me, seg);
		smartio_segment_set_size(h, me, seg, 64u << 10);
		smartio_segment_set_available(h, me, seg, 1);
		smartio_segment_dma_map(h, me, seg, (unsigned)nvme2, NULL);
		smartio_segment_dma_unmap(h, me, seg, (unsigned)nvme2);
		smartio_segment_set_available(h, me, seg, 0);
		smartio_segment_destroy(h, me, seg);
		if (!lender) {
			smartio_segment_detach(h, host0, "keep", me);
			smartio_return(h, (unsigned)nvme2, me);
			smartio_return(h, (unsigned)nic0, me);
		}
	}
}

static pid_t start(const char *fabric, const char *node, int lender)
{
	int fds[2];
	char c;
	pid_t pid;

	if (pipe(fds))
		die("pipe", -errno);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		worker(fabric, node, lender, fds[1]);
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1)
		die("worker did not start", -EIO);
	close(fds[0]);
	return pid;
}

/* Stops the survivor cleanly (see worker), so that what is left behind is
 * the victim's doing alone. */
static void stop(pid_t pid)
{
	int status;

	*stop_flag = 1;
	waitpid(pid, &status, 0);
	*stop_flag = 0;
}

static void usage(struct smartio *h, unsigned *luts, unsigned *reqs)
{
	struct smartio_node_info ni;
	struct smartio_adapter_info ai;
	unsigned n, a;

	*luts = *reqs = 0;
	for (n = 0; n < smartio_node_count(h); n++) {
		smartio_node_info(h, n, &ni);
		for (a = 0; a < ni.nadapters; a++) {
			smartio_adapter_info(h, n, a, &ai);
			*luts += ai.luts_used;
			*reqs += ai.req_used;
		}
	}
}

/* Where the entries are used, for the report of a leak. */
static void print_usage(struct smartio *h)
{
	struct smartio_node_info ni;
	struct smartio_adapter_info ai;
	unsigned n, a;

	for (n = 0; n < smartio_node_count(h); n++) {
		smartio_node_info(h, n, &ni);
		for (a = 0; a < ni.nadapters; a++) {
			smartio_adapter_info(h, n, a, &ai);
			fprintf(stderr, "kill:   %s (%s) %s: LUTs %u/%u, requesters %u/%u\n",
				ni.name, ni.state == SMARTIO_NODE_UP ? "up" : "down",
				ai.name, ai.luts_used, ai.luts_total, ai.req_used,
				ai.req_total);
		}
	}
}

static int wait_down(struct smartio *h, unsigned node, double t0, double *took)
{
	struct smartio_node_info ni;

	for (;;) {
		smartio_node_info(h, node, &ni);
		*took = now_s() - t0;
		if (ni.state == SMARTIO_NODE_DOWN)
			return 0;
		if (*took > 10)
			return -1;
		usleep(5000);
	}
}

static int all_down_but(struct smartio *h, unsigned keep_up)
{
	struct smartio_node_info ni;
	unsigned n;
	double t0 = now_s();

	for (n = 0; n < smartio_node_count(h); n++) {
		if (n == keep_up)
			continue;
		do {
			smartio_node_info(h, n, &ni);
			if (ni.state == SMARTIO_NODE_DOWN)
				break;
			usleep(5000);
		} while (now_s() - t0 < 10);
		if (ni.state != SMARTIO_NODE_DOWN)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int iterations = argc > 1 ? atoi(argv[1]) : 40;
	struct smartio_open_opts o = { 0 };
	struct smartio_segment_info si;
	struct smartio *h;
	char fabric[64], path[SMARTIO_PATH_MAX];
	unsigned luts0, reqs0, luts, reqs, host0, host1, host2, d;
	double took, worst[2] = { 0, 0 };
	int it, rc, fd, seg, bad = 0, failed[2] = { 0, 0 };
	unsigned char *keep;
	size_t i;

	stop_flag = mmap(NULL, sizeof(*stop_flag), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stop_flag == MAP_FAILED)
		die("mmap", -errno);
	snprintf(fabric, sizeof(fabric), "stress-kill-%d", (int)getpid());
	o.fabric = fabric;
	o.node = "host0";
	o.create = 1;
	if ((rc = smartio_open(&h, &o)))
		die("create", rc);
	srand((unsigned)getpid());
	host0 = smartio_self(h);
	host1 = (unsigned)smartio_node_find(h, "host1");
	host2 = (unsigned)smartio_node_find(h, "host2");
	if ((rc = smartio_lend(h, (unsigned)smartio_device_find(h, "nic0"),
			       SMARTIO_LEND_ALL, 0)))
		die("lend nic0", rc);
	if ((rc = smartio_segment_create(h, host0, "keep")) ||
	    (rc = smartio_segment_set_size(h, host0, "keep", KEEP_SIZE)) ||
	    (rc = smartio_segment_set_available(h, host0, "keep", 1)) ||
	    (rc = smartio_resolve_segment(h, host0, host0, "keep", path,
					  sizeof(path), NULL)))
		die("segment keep", rc);
	fd = open(path, O_RDWR);
	keep = mmap(NULL, KEEP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd < 0 || keep == MAP_FAILED)
		die(path, -errno);
	close(fd);
	for (i = 0; i < KEEP_SIZE; i++)
		keep[i] = pattern(i);
	usage(h, &luts0, &reqs0);
	for (it = 0; it < iterations; it++) {
		int lender_killed = it & 1, was_bad = bad;
		pid_t borrower = start(fabric, "host1", 0);
		pid_t lender = start(fabric, "host2", 1);
		pid_t victim = lender_killed ? lender : borrower;
		unsigned vnode = lender_killed ? host2 : host1;
		double t0;
		int status;

		usleep((useconds_t)(rand() % 40000));
		t0 = now_s();
		kill(victim, SIGKILL);
		waitpid(victim, &status, 0);
		if (wait_down(h, vnode, t0, &took) || took > 3.0) {
			fprintf(stderr, "kill: iteration %d: %s down after %.2f s\n",
				it, lender_killed ? "host2" : "host1", took);
			bad = 1;
		}
		if (took > worst[lender_killed])
			worst[lender_killed] = took;
		/* The survivor goes the same way, then nothing may be left. */
		stop(lender_killed ? borrower : lender);
		if (all_down_but(h, host0)) {
			fprintf(stderr, "kill: iteration %d: a worker node stays up\n", it);
			bad = 1;
		}
		usage(h, &luts, &reqs);
		if (luts != luts0 || reqs != reqs0) {
			fprintf(stderr, "kill: iteration %d (%s killed): LUTs %u (were %u), "
				"requesters %u (were %u)\n", it,
				lender_killed ? "lender" : "borrower", luts, luts0, reqs, reqs0);
			print_usage(h);
			bad = 1;
		}
		for (d = 0; d < smartio_device_count(h); d++) {
			struct smartio_device_info di;

			smartio_device_info(h, d, &di);
			if (di.borrowers) {
				fprintf(stderr, "kill: iteration %d: %s still borrowed (%#llx)\n",
					it, di.name, (unsigned long long)di.borrowers);
				bad = 1;
			}
		}
		seg = smartio_segment_find(h, host0, "keep");
		if (seg < 0 || smartio_segment_at(h, (unsigned)seg, &si) != 1 ||
		    si.size != KEEP_SIZE || si.attached & ~(1ull << host0)) {
			fprintf(stderr, "kill: iteration %d: segment keep lost or still "
				"attached (%d: size %llu attached %#llx)\n", it, seg, (unsigned long long)si.size, (unsigned long long)si.attached);
			bad = 1;
		}
		for (i = 0; i < KEEP_SIZE; i++)
			if (keep[i] != pattern(i)) {
				fprintf(stderr, "kill: iteration %d: keep differs at %zu\n",
					it, i);
				bad = 1;
				break;
			}
		if (bad != was_bad) {
			failed[lender_killed]++;
			/* Judge the next iteration on its own: what leaked now
			 * stays leaked. */
			usage(h, &luts0, &reqs0);
			bad = 0;
		}
	}
	bad = failed[0] + failed[1];
	smartio_close(h);
	if (bad) {
		printf("FAIL: kill: %d of %d iterations left something behind "
		       "(%d of %d borrower kills, %d of %d lender kills)\n", bad,
		       iterations, failed[0], iterations - iterations / 2, failed[1],
		       iterations / 2);
		return 1;
	}
	printf("PASS: kill: %d SIGKILLs (%d lenders, %d borrowers) in the middle of "
	       "lend/borrow/return/segment operations: node-down within %.2f s "
	       "(borrower) and %.2f s (lender), no LUT or requester entry leaked, "
	       "segment data intact\n", iterations, iterations / 2,
	       iterations - iterations / 2, worst[0], worst[1]);
	return 0;
}
