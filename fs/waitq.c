// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reads that wait for news, and poll handles: what the events file and
 * the interrupt files share.  A read with nothing to return is parked,
 * without holding a FUSE worker, in its queue's FIFO; the watcher thread
 * (notify.c) kicks the queues, which answer the parked reads that now can
 * be (in order: a file's later reads wait behind its first), fail the
 * interrupted ones with EINTR and notify the poll handles of files that
 * became readable.  What "news" is belongs to the file kind (wq_ops).
 */
#include <errno.h>
#include <stdlib.h>

#include "sfs.h"

struct wq_wait {
	fuse_req_t req;
	struct wq_file *f;
	size_t size;
	struct wq_wait *next;
};

/* Whether a read of f parked before w (w NULL: at all) is still there. */
static int parked_before(const struct waitq *q, const struct wq_file *f,
			 const struct wq_wait *w)
{
	const struct wq_wait *x;

	for (x = q->head; x != w; x = x->next)
		if (x->f == f)
			return 1;
	return 0;
}

/* Unlinks *pp, fails its request with err unless err is 0. */
static void drop(struct waitq *q, struct wq_wait **pp, int err)
{
	struct wq_wait *w = *pp;

	*pp = w->next;
	if (q->tail == &w->next)
		q->tail = pp;
	if (err)
		fuse_reply_err(w->req, err);
	free(w);
}

void wq_read(struct waitq *q, fuse_req_t req, struct wq_file *f, size_t size,
	     int nonblock)
{
	struct wq_wait *w;

	pthread_mutex_lock(&q->lock);
	/* Readers queued before us on this file are served first. */
	if (!parked_before(q, f, NULL) && q->ops->answer(req, f, size)) {
		pthread_mutex_unlock(&q->lock);
		return;
	}
	if (nonblock) {
		pthread_mutex_unlock(&q->lock);
		fuse_reply_err(req, EAGAIN);
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		pthread_mutex_unlock(&q->lock);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	w->req = req;
	w->f = f;
	w->size = size;
	*q->tail = w;
	q->tail = &w->next;
	pthread_mutex_unlock(&q->lock);
	notify_poke();
}

void wq_poll(struct waitq *q, fuse_req_t req, struct wq_file *f,
	     struct fuse_pollhandle *ph)
{
	unsigned revents;

	pthread_mutex_lock(&q->lock);
	revents = q->ops->revents(f);
	if (ph) {
		if (f->ph)
			fuse_pollhandle_destroy(f->ph);
		f->ph = ph;
	}
	pthread_mutex_unlock(&q->lock);
	fuse_reply_poll(req, revents);
	if (ph)
		notify_poke();
}

void wq_release(struct waitq *q, struct fuse_file_info *fi)
{
	struct wq_file *f = wq_file_of(fi);
	struct wq_wait **pp;

	if (!f)
		return;
	pthread_mutex_lock(&q->lock);
	/* The kernel holds the file while reads run; drop any leftovers. */
	for (pp = &q->head; *pp;) {
		if ((*pp)->f == f)
			drop(q, pp, EINTR);
		else
			pp = &(*pp)->next;
	}
	if (f->prev)
		f->prev->next = f->next;
	else
		q->files = f->next;
	if (f->next)
		f->next->prev = f->prev;
	if (f->ph)
		fuse_pollhandle_destroy(f->ph);
	pthread_mutex_unlock(&q->lock);
	free(f);
	fi->fh = 0;
}

void wq_open(struct waitq *q, fuse_req_t req, struct fuse_file_info *fi,
	     struct wq_file *f)
{
	pthread_mutex_lock(&q->lock);
	f->prev = NULL;
	f->next = q->files;
	if (q->files)
		q->files->prev = f;
	q->files = f;
	pthread_mutex_unlock(&q->lock);
	fi->direct_io = 1;
	sfs_reply_open(req, fi, &f->file);
}

int wq_kick(struct waitq *q)
{
	struct wq_wait **pp, *w;
	struct wq_file *f;
	int waiting;

	pthread_mutex_lock(&q->lock);
	for (pp = &q->head; (w = *pp);) {
		if (fuse_req_interrupted(w->req))
			drop(q, pp, EINTR);
		else if (!parked_before(q, w->f, w) &&
			 q->ops->answer(w->req, w->f, w->size))
			drop(q, pp, 0);
		else
			pp = &w->next;
	}
	for (f = q->files; f; f = f->next) {
		if (f->ph && q->ops->revents(f)) {
			fuse_lowlevel_notify_poll(f->ph);
			fuse_pollhandle_destroy(f->ph);
			f->ph = NULL;
		}
	}
	waiting = q->head != NULL;
	pthread_mutex_unlock(&q->lock);
	return waiting;
}

void wq_shutdown(struct waitq *q)
{
	struct wq_file *f;

	pthread_mutex_lock(&q->lock);
	while (q->head)
		drop(q, &q->head, EINTR);
	for (f = q->files; f; f = f->next) {
		if (f->ph)
			fuse_pollhandle_destroy(f->ph);
		f->ph = NULL;
	}
	pthread_mutex_unlock(&q->lock);
}
