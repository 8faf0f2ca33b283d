// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The directory listings the kernel keeps.  smartiofs answers OPENDIR with
 * ENOSYS (two round trips fewer per directory: OPENDIR and RELEASEDIR), and
 * the kernel then caches every listing it reads in the directory's page
 * cache (FOPEN_CACHE_DIR) until those pages go.  So that a listing still
 * follows cluster state at once, this file remembers which directories
 * were listed since the state last changed and, when the fabric's change
 * counter moves, drops their pages (fuse_lowlevel_notify_inval_inode): the
 * next listing asks the daemon again.  It runs in the watcher for changes
 * made anywhere and, before the reply, in the requests of this mount that
 * change state, so that a listing right after a local write is fresh.
 *
 * A listing the kernel is still filling when the state changes may add the
 * old entries after their pages were dropped; such a directory stays noted
 * and is dropped again on the watcher's next tick after it was read to its
 * end (listings_done), so it is stale for at most one tick.
 *
 * An empty listing has no pages to drop (listings name no "." and "..":
 * ops.c): the kernel keeps it until the directory's mtime or i_version
 * moves.  So every directory's mtime is the time of the last drop, and
 * the drop also invalidates the attributes: the next listing from the
 * start asks for them (FUSE_CAP_AUTO_INVAL_DATA), sees a new mtime and
 * asks the daemon for the listing again.
 */
#include <stdlib.h>

#include "sfs.h"

struct inos {
	fuse_ino_t *v;
	size_t n, cap;
};

static struct {
	pthread_mutex_t lock;
	struct inos listed;	/* read since the last drop, not deduplicated */
	struct inos reading;	/* listings being read (not yet to their end) */
	uint64_t seen;		/* change count of the last drop */
	int again;		/* a listing was being read at the last drop */
	uint64_t dropped_ns;	/* CLOCK_REALTIME of the last drop, or 0 */
} ls = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int cmp_ino(const void *a, const void *b)
{
	fuse_ino_t x = *(const fuse_ino_t *)a, y = *(const fuse_ino_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts and deduplicates: a directory read many times is dropped once. */
static void squeeze(struct inos *s)
{
	size_t i, n = 0;

	qsort(s->v, s->n, sizeof(*s->v), cmp_ino);
	for (i = 0; i < s->n; i++)
		if (!n || s->v[n - 1] != s->v[i])
			s->v[n++] = s->v[i];
	s->n = n;
}

static int push(struct inos *s, fuse_ino_t ino)
{
	fuse_ino_t *v;
	size_t cap;

	if (s->n == s->cap && s->cap >= 64)
		squeeze(s);	/* grows only with distinct directories */
	if (s->n == s->cap) {
		cap = s->cap ? s->cap * 2 : 64;
		v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = ino;
	return 0;
}

int listings_start(fuse_ino_t ino)
{
	int rc;

	pthread_mutex_lock(&ls.lock);
	rc = push(&ls.listed, ino);
	if (!rc) {
		rc = push(&ls.reading, ino);
		if (rc)
			ls.listed.n--;
	}
	pthread_mutex_unlock(&ls.lock);
	return rc;
}

void listings_done(fuse_ino_t ino)
{
	size_t i;

	pthread_mutex_lock(&ls.lock);
	for (i = ls.reading.n; i-- > 0;) {
		if (ls.reading.v[i] == ino) {
			ls.reading.v[i] = ls.reading.v[--ls.reading.n];
			break;
		}
	}
	pthread_mutex_unlock(&ls.lock);
}

/* Moves the directories' mtime forward, before the drop (ls.lock held). */
static void stamp_drop(void)
{
	struct timespec now;
	uint64_t t, old = __atomic_load_n(&ls.dropped_ns, __ATOMIC_RELAXED);

	clock_gettime(CLOCK_REALTIME, &now);
	t = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	if (t <= old)	/* the clock stepped back: still a new mtime */
		t = old + 1;
	__atomic_store_n(&ls.dropped_ns, t, __ATOMIC_RELEASE);
}

void listings_mtime(struct timespec *ts)
{
	uint64_t t = __atomic_load_n(&ls.dropped_ns, __ATOMIC_ACQUIRE);

	if (!t) {
		*ts = sfs.start;
		return;
	}
	ts->tv_sec = (time_t)(t / 1000000000u);
	ts->tv_nsec = (long)(t % 1000000000u);
}

void listings_sync(void)
{
	uint64_t now = smartio_change_count(sfs.h);
	struct inos drop = { 0 };
	size_t i;

	pthread_mutex_lock(&ls.lock);
	if (now == ls.seen && !ls.again) {
		pthread_mutex_unlock(&ls.lock);
		return;
	}
	ls.seen = now;
	stamp_drop();
	drop = ls.listed;
	memset(&ls.listed, 0, sizeof(ls.listed));
	/* Those being read are dropped again once read (see above). */
	ls.again = 0;
	for (i = 0; i < ls.reading.n; i++)
		if (!push(&ls.listed, ls.reading.v[i]))
			ls.again = 1;
	pthread_mutex_unlock(&ls.lock);
	if (drop.n)
		squeeze(&drop);
	/* No lock held: the kernel may call back into the daemon. */
	for (i = 0; i < drop.n; i++)
		fuse_lowlevel_notify_inval_inode(sfs.se, drop.v[i], 0, 0);
	free(drop.v);
}

void listings_free(void)
{
	pthread_mutex_lock(&ls.lock);
	free(ls.listed.v);
	free(ls.reading.v);
	memset(&ls.listed, 0, sizeof(ls.listed));
	memset(&ls.reading, 0, sizeof(ls.reading));
	pthread_mutex_unlock(&ls.lock);
}
