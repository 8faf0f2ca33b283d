// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 12, defect 9: libsmartio must read the registry only under its
 * lock.  Over the kernel transport the registry a handle reads is a copy
 * that the next lock of any thread may replace and free, and smartiofs
 * calls in from many threads; an entry point that looked at the registry
 * before taking the lock (or without taking it) read freed memory.
 *
 * smartio.ko cannot run here, so the handle is switched to the test hook
 * sio_lib_copy_registry(): every lock makes a new copy of the simulated
 * fabric's registry and retires the previous one (unreadable, then
 * unmapped), the kernel transport's copy-and-swap at its most eager.  Query
 * threads call every registry-reading entry point while a writer lends,
 * borrows, returns, creates and destroys segments; a read outside the lock
 * faults (SIGSEGV here, an AddressSanitizer report under make check-asan)
 * and every answer must be one the registry could give.  Runs
 * RACE_SECONDS (default 2) seconds.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "smartio_internal.h"

#define TOPO \
	"fabric luts=16 requesters=8 reserved=2 window=256M\n" \
	"node host0 id=0 ram=64M\n" \
	"node host1 id=1 ram=64M\n" \
	"adapter host0 ntb0 peers=all\n" \
	"adapter host1 ntb0 peers=all\n" \
	"device host1 nic0 bdf=0000:06:00.0 vendor=0x8086 device=0x10d3 class=0x020000 bar0=128K\n"

#define READERS 3	/* RACE_READERS overrides, up to MAX_READERS */
#define MAX_READERS 64
static int nreaders = READERS;

static struct smartio *h;
static unsigned nic;
static volatile int stop;
static unsigned long queries[MAX_READERS], changes;

static void die(const char *what, long v)
{
	fprintf(stderr, "FAIL: test_registry_race: %s (%ld)\n", what, v);
	exit(1);
}

static void query_all(void)
{
	struct smartio_node_info ni;
	struct smartio_adapter_info ai;
	struct smartio_device_info di;
	struct smartio_segment_info si;
	struct smartio_dma_window w[4];
	struct smartio_msi_vector mv[4];
	char path[512], ev[256];
	unsigned peers[4], i;
	uint64_t cur, size, addr;
	int rc;

	if (smartio_node_count(h) != 2 || smartio_device_count(h) != 1)
		die("node or device count changed", smartio_node_count(h));
	if (smartio_node_find(h, "host1") != 1 ||
	    smartio_device_find(h, "nic0") != (int)nic)
		die("a name lookup failed", 0);
	for (i = 0; i < 2; i++) {
		if (smartio_node_info(h, i, &ni) || ni.id != i)
			die("node_info", i);
		if (smartio_adapter_info(h, i, 0, &ai) || ai.luts_total != 16)
			die("adapter_info", i);
	}
	if (smartio_device_info(h, nic, &di) || strcmp(di.name, "nic0") ||
	    di.bar[0].size != 128 << 10)
		die("device_info", 0);
	rc = smartio_dma_windows(h, nic, w, 4);
	if (rc < 0 || rc > 1)
		die("dma_windows", rc);
	for (i = 0; i < smartio_segment_slots(h); i += 97)
		if (smartio_segment_at(h, i, &si) < 0)
			die("segment_at", i);
	rc = smartio_segment_find(h, 0, "race");
	if (rc < -ENOENT || (rc < 0 && rc != -ENOENT))
		die("segment_find", rc);
	rc = smartio_segment_dma_addr(h, 0, "race", nic, &addr);
	if (rc && rc != -ENOENT)
		die("segment_dma_addr", rc);
	rc = smartio_resolve_bar(h, 0, nic, 0, path, sizeof(path), &size);
	if (rc && rc != -EACCES)
		die("resolve_bar", rc);
	rc = smartio_resolve_segment(h, 1, 0, "race", path, sizeof(path),
				     &size);
	if (rc && rc != -ENOENT && rc != -EACCES)
		die("resolve_segment", rc);
	cur = smartio_event_cursor(h);
	if (cur > 0) {
		cur--;
		if (smartio_event_read(h, &cur, ev, sizeof(ev)) < 0)
			die("event_read", 0);
	}
	if (smartio_msi_vectors(h, nic, mv, 4) < 0)
		die("msi_vectors", 0);
	if (smartio_peers(h, nic, peers, 4) < 0)
		die("peers", 0);
	if (smartio_peer_addr(h, nic, nic, 0, &addr) != -ENOENT)
		die("peer_addr", 0);
	(void)smartio_blocked(h, 1);
	if (smartio_node_info(h, 2, &ni) != -ENOENT ||
	    smartio_device_info(h, 1, &di) != -ENXIO ||
	    smartio_resolve_bar(h, 0, 1, 0, path, sizeof(path), &size) != -ENXIO)
		die("an index out of range was not refused", 0);
}

static void *reader(void *arg)
{
	unsigned long *n = arg;

	while (!stop) {
		query_all();
		(*n)++;
	}
	return NULL;
}

static void *writer(void *arg)
{
	uint8_t cfg[4];

	(void)arg;
	while (!stop) {
		if (smartio_borrow(h, nic, 0) ||
		    smartio_config_read(h, nic, 0, 0, cfg, 4) < 0 ||
		    smartio_return(h, nic, 0))
			die("borrow, config read or return failed", 0);
		if (smartio_segment_create(h, 0, "race") ||
		    smartio_segment_set_size(h, 0, "race", 1 << 20) ||
		    smartio_segment_destroy(h, 0, "race"))
			die("segment create, size or destroy failed", 0);
		changes++;
	}
	return NULL;
}

int main(void)
{
	const char *env = getenv("RACE_SECONDS");
	int seconds = env ? atoi(env) : 2, i;
	pthread_t r[MAX_READERS], w;
	unsigned long total = 0;
	char fabric[64];
	struct timespec ts;

	h = th_open(TOPO, NULL, fabric, sizeof(fabric));
	nic = th_dev(h, "nic0");
	sio_lib_copy_registry(h);
	if (smartio_lend(h, nic, SMARTIO_LEND_ALL, 0))
		die("lend", 0);
	if (getenv("RACE_READERS"))
		nreaders = atoi(getenv("RACE_READERS"));
	if (nreaders < 1 || nreaders > MAX_READERS)
		die("RACE_READERS out of 1..64", nreaders);
	for (i = 0; i < nreaders; i++)
		pthread_create(&r[i], NULL, reader, &queries[i]);
	pthread_create(&w, NULL, writer, NULL);
	ts.tv_sec = seconds;
	ts.tv_nsec = 0;
	nanosleep(&ts, NULL);
	stop = 1;
	for (i = 0; i < nreaders; i++) {
		pthread_join(r[i], NULL);
		total += queries[i];
	}
	pthread_join(w, NULL);
	smartio_close(h);
	if (!total || !changes)
		die("no queries or no changes ran", (long)(total + changes));
	printf("PASS: test_registry_race: %lu query rounds (%d threads) "
	       "against %lu rounds of borrow/return and segment "
	       "create/destroy in %d s\n", total, nreaders, changes, seconds);
	return 0;
}
