// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The events file.  Each open file has its own cursor, starting at the
 * current end of the cluster's event ring (only new events).  A read returns
 * one event line; with nothing new it fails with EAGAIN under O_NONBLOCK and
 * otherwise is parked, without holding a FUSE worker, until the watcher
 * thread (notify.c) finds an event for it or sees the request interrupted.
 * poll() is answered at once and notified through the kernel later.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "sfs.h"

#define LINE_MAX_LEN 512

struct ev_file {
	unsigned magic;		/* 0: not an attribute file (see ops.c) */
	uint64_t cursor;
	char line[LINE_MAX_LEN];
	size_t len, pos;	/* unread part of the current line */
	struct fuse_pollhandle *ph;
	struct ev_file *prev, *next;
};

struct ev_wait {
	fuse_req_t req;
	struct ev_file *ef;
	size_t size;
	struct ev_wait *next;
};

static struct {
	pthread_mutex_t lock;
	struct ev_file *files;
	struct ev_wait *head, **tail;
} ev = { .lock = PTHREAD_MUTEX_INITIALIZER, .tail = &ev.head };

static const struct sfs_attr events_attr = { "events", 0444, NULL, NULL, NULL };
const struct sfs_attr_group events_group = { NULL, &events_attr, 1 };

static struct ev_file *file_of(struct fuse_file_info *fi)
{
	return (struct ev_file *)(uintptr_t)fi->fh;
}

/* Makes sure ef holds unread text; 1 if it does, 0 if nothing is new. */
static int fill(struct ev_file *ef)
{
	int n;

	if (ef->pos < ef->len)
		return 1;
	n = smartio_event_read(sfs.h, &ef->cursor, ef->line,
			       sizeof(ef->line) - 1);
	if (n <= 0)
		return 0;
	ef->line[n] = '\n';
	ef->len = (size_t)n + 1;
	ef->pos = 0;
	return 1;
}

static void reply_from(fuse_req_t req, struct ev_file *ef, size_t size)
{
	size_t n = ef->len - ef->pos;

	if (n > size)
		n = size;
	ef->pos += n;
	fuse_reply_buf(req, ef->line + ef->pos - n, n);
}

void events_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct ev_file *ef = calloc(1, sizeof(*ef));

	if (!ef) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ef->cursor = smartio_event_cursor(sfs.h);
	pthread_mutex_lock(&ev.lock);
	ef->next = ev.files;
	if (ev.files)
		ev.files->prev = ef;
	ev.files = ef;
	pthread_mutex_unlock(&ev.lock);
	fi->fh = (uintptr_t)ef;
	fi->direct_io = 1;
	if (fuse_reply_open(req, fi) != 0)
		events_release(fi);
}

void events_read(fuse_req_t req, size_t size, struct fuse_file_info *fi)
{
	struct ev_file *ef = file_of(fi);
	struct ev_wait *w;

	if (!size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	pthread_mutex_lock(&ev.lock);
	/* Readers queued before us on this file are served first. */
	for (w = ev.head; w; w = w->next)
		if (w->ef == ef)
			break;
	if (!w && fill(ef)) {
		reply_from(req, ef, size);
		pthread_mutex_unlock(&ev.lock);
		return;
	}
	if (fi->flags & O_NONBLOCK) {
		pthread_mutex_unlock(&ev.lock);
		fuse_reply_err(req, EAGAIN);
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		pthread_mutex_unlock(&ev.lock);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	w->req = req;
	w->ef = ef;
	w->size = size;
	*ev.tail = w;
	ev.tail = &w->next;
	pthread_mutex_unlock(&ev.lock);
	notify_poke();
}

void events_poll(fuse_req_t req, struct fuse_file_info *fi,
		 struct fuse_pollhandle *ph)
{
	struct ev_file *ef = file_of(fi);
	unsigned revents = 0;

	pthread_mutex_lock(&ev.lock);
	if (ef->pos < ef->len || smartio_event_cursor(sfs.h) > ef->cursor)
		revents = POLLIN | POLLRDNORM;
	if (ph) {
		if (ef->ph)
			fuse_pollhandle_destroy(ef->ph);
		ef->ph = ph;
	}
	pthread_mutex_unlock(&ev.lock);
	fuse_reply_poll(req, revents);
	if (ph)
		notify_poke();
}

void events_release(struct fuse_file_info *fi)
{
	struct ev_file *ef = file_of(fi);
	struct ev_wait **pp, *w;

	if (!ef)
		return;
	pthread_mutex_lock(&ev.lock);
	/* The kernel holds the file while reads run; drop any leftovers. */
	for (pp = &ev.head; (w = *pp);) {
		if (w->ef == ef) {
			*pp = w->next;
			fuse_reply_err(w->req, EINTR);
			free(w);
		} else {
			pp = &w->next;
		}
	}
	ev.tail = &ev.head;
	for (w = ev.head; w; w = w->next)
		ev.tail = &w->next;
	if (ef->prev)
		ef->prev->next = ef->next;
	else
		ev.files = ef->next;
	if (ef->next)
		ef->next->prev = ef->prev;
	if (ef->ph)
		fuse_pollhandle_destroy(ef->ph);
	pthread_mutex_unlock(&ev.lock);
	free(ef);
	fi->fh = 0;
}

int events_kick(void)
{
	uint64_t head = 0;
	int head_known = 0;
	struct ev_wait **pp, *w;
	struct ev_file *ef;
	int waiting;

	pthread_mutex_lock(&ev.lock);
	for (pp = &ev.head; (w = *pp);) {
		if (fuse_req_interrupted(w->req)) {
			*pp = w->next;
			fuse_reply_err(w->req, EINTR);
			free(w);
			continue;
		}
		if (fill(w->ef)) {
			*pp = w->next;
			reply_from(w->req, w->ef, w->size);
			free(w);
			continue;
		}
		pp = &w->next;
	}
	ev.tail = pp;
	for (ef = ev.files; ef; ef = ef->next) {
		if (!ef->ph)
			continue;
		/* Over smartio.ko asking costs a request: only when polled. */
		if (!head_known) {
			head = smartio_event_cursor(sfs.h);
			head_known = 1;
		}
		if (ef->pos < ef->len || head > ef->cursor) {
			fuse_lowlevel_notify_poll(ef->ph);
			fuse_pollhandle_destroy(ef->ph);
			ef->ph = NULL;
		}
	}
	waiting = ev.head != NULL;
	pthread_mutex_unlock(&ev.lock);
	return waiting;
}

void events_shutdown(void)
{
	struct ev_wait *w;
	struct ev_file *ef;

	pthread_mutex_lock(&ev.lock);
	while ((w = ev.head)) {
		ev.head = w->next;
		fuse_reply_err(w->req, EINTR);
		free(w);
	}
	ev.tail = &ev.head;
	for (ef = ev.files; ef; ef = ef->next) {
		if (ef->ph)
			fuse_pollhandle_destroy(ef->ph);
		ef->ph = NULL;
	}
	pthread_mutex_unlock(&ev.lock);
}
