// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The watcher thread.  It sleeps on the cluster's change counter and, when
 * it moves, drops the kernel's cached names of objects that no longer exist
 * (fuse_lowlevel_notify_inval_entry), so state written on any node is seen
 * at once everywhere.  Objects whose existence follows cluster state are
 * also returned with zero entry and attribute timeouts, so a lookup right
 * after a local write never trusts a stale cache either.  The same thread
 * serves the events file: parked reads, interrupts and poll handles.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sfs.h"

#define WATCH_SLICE_MS 100

static struct {
	pthread_t thread;
	int running;
	int stop;		/* read and written atomically */
	uint64_t passes;
} nt;

static void invalidate_gone(void)
{
	struct sfs_dynent *v = NULL;
	size_t n = inode_collect_dynamic(0, &v), i;

	/* No lock is held here: the kernel may call back into the daemon. */
	for (i = 0; i < n; i++) {
		if (tree_valid(&v[i].obj) == 0)
			continue;
		fuse_lowlevel_notify_inval_entry(sfs.se, v[i].parent, v[i].name,
						 strlen(v[i].name));
	}
	free(v);
	nt.passes++;
}

void notify_wrote_in(fuse_ino_t dir)
{
	struct sfs_dynent *v = NULL;
	size_t n, i;

	/*
	 * The kernel drops a name with its directory locked, which a lookup
	 * there holds while it waits for the reading thread: that thread
	 * must be free, so never from it (nor under -s, with no workers).
	 */
	if (!loop_in_worker())
		return;
	n = inode_collect_dynamic(dir, &v);
	/* Valid or not: a bar link's target may have moved (a new borrow). */
	for (i = 0; i < n; i++)
		fuse_lowlevel_notify_inval_entry(sfs.se, v[i].parent, v[i].name,
						 strlen(v[i].name));
	free(v);
}

static void *watcher(void *arg)
{
	uint64_t seen = smartio_change_count(sfs.h), now;

	(void)arg;
	while (!__atomic_load_n(&nt.stop, __ATOMIC_ACQUIRE)) {
		smartio_change_wait(sfs.h, seen, WATCH_SLICE_MS);
		if (__atomic_load_n(&nt.stop, __ATOMIC_ACQUIRE))
			break;
		listings_sync();	/* before the names: see listings.c */
		now = smartio_change_count(sfs.h);
		if (now != seen) {
			seen = now;
			invalidate_gone();
		}
		wq_kick(&events_q);
		wq_kick(&irq_q);
		holds_reap();
	}
	return NULL;
}

int notify_start(void)
{
	int err;

	__atomic_store_n(&nt.stop, 0, __ATOMIC_RELEASE);
	err = pthread_create(&nt.thread, NULL, watcher, NULL);
	if (err)
		return -err;
	/* Named so that ps, gdb and the fault-injection tests can find it. */
	pthread_setname_np(nt.thread, "sfs-watch");
	nt.running = 1;
	return 0;
}

void notify_stop(void)
{
	if (!nt.running)
		return;
	__atomic_store_n(&nt.stop, 1, __ATOMIC_RELEASE);
	pthread_join(nt.thread, NULL);
	nt.running = 0;
}

void notify_poke(void)
{
	/* The watcher wakes every WATCH_SLICE_MS; serving a parked read or a
	 * fresh poll handle right away here is cheap and closes the window
	 * between a reader finding nothing and parking. */
	wq_kick(&events_q);
	wq_kick(&irq_q);
}
