// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dev/<dev>/irq/<vec>: a device vector routed to this node, UIO style.
 * Each open file remembers the interrupt count it last returned (at open:
 * the current one).  A read of at least 4 bytes returns the count as a
 * native-endian 32-bit number once it differs from that; with nothing new
 * it fails with EAGAIN under O_NONBLOCK and is otherwise parked, without
 * holding a FUSE worker, until the watcher thread (notify.c) sees the
 * vector fire (every MSI bumps the cluster's change counter) or the
 * request interrupted.  A vector that stops being routed here fails the
 * reads with EIO.  poll() reports POLLIN when a read would not block.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "sfs.h"

struct irq_file {
	unsigned magic;		/* IRQ_FILE_MAGIC (see ops.c) */
	unsigned dev, vec;
	uint64_t seen;
	struct fuse_pollhandle *ph;
	struct irq_file *prev, *next;
};

struct irq_wait {
	fuse_req_t req;
	struct irq_file *irf;
	struct irq_wait *next;
};

static struct {
	pthread_mutex_t lock;
	struct irq_file *files;
	struct irq_wait *head;
} iq = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Every irq/<vec> file. */
static const struct sfs_attr irq_attr = { "irq", 0444, NULL, NULL, NULL };
const struct sfs_attr_group irq_group = { NULL, &irq_attr, 1 };

static struct irq_file *file_of(struct fuse_file_info *fi)
{
	return (struct irq_file *)(uintptr_t)fi->fh;
}

/* The vector's count when it is routed to this node, else -EIO. */
static int current(const struct irq_file *irf, uint64_t *count)
{
	struct smartio_msi_vector v[SFS_IRQ_MAX];
	int n = smartio_msi_vectors(sfs.h, irf->dev, v, SFS_IRQ_MAX);

	if (n <= 0 || irf->vec >= (unsigned)n || irf->vec >= SFS_IRQ_MAX ||
	    v[irf->vec].node != sfs.self)
		return -EIO;
	return smartio_irq_count(sfs.h, irf->dev, irf->vec, count) ? -EIO : 0;
}

/* 1 when a read can be answered now (count or error), else 0. */
static int answer(fuse_req_t req, struct irq_file *irf)
{
	uint64_t count;
	uint32_t v;

	if (current(irf, &count)) {
		fuse_reply_err(req, EIO);
		return 1;
	}
	if (count == irf->seen)
		return 0;
	irf->seen = count;
	v = (uint32_t)count;
	fuse_reply_buf(req, (const char *)&v, sizeof(v));
	return 1;
}

void irq_open(fuse_req_t req, const struct sfs_obj *o,
	      struct fuse_file_info *fi)
{
	struct irq_file *irf = calloc(1, sizeof(*irf));
	int err;

	if (!irf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	irf->magic = IRQ_FILE_MAGIC;
	irf->dev = o->dev;
	irf->vec = o->attr;
	err = current(irf, &irf->seen);
	if (err) {
		free(irf);
		fuse_reply_err(req, ENOENT);
		return;
	}
	pthread_mutex_lock(&iq.lock);
	irf->next = iq.files;
	if (iq.files)
		iq.files->prev = irf;
	iq.files = irf;
	pthread_mutex_unlock(&iq.lock);
	fi->fh = (uintptr_t)irf;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	if (fuse_reply_open(req, fi) != 0)
		irq_release(fi);
}

void irq_read(fuse_req_t req, size_t size, struct fuse_file_info *fi)
{
	struct irq_file *irf = file_of(fi);
	struct irq_wait *w;

	if (size < sizeof(uint32_t)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_mutex_lock(&iq.lock);
	for (w = iq.head; w; w = w->next)
		if (w->irf == irf)
			break;
	if (!w && answer(req, irf)) {
		pthread_mutex_unlock(&iq.lock);
		return;
	}
	if (fi->flags & O_NONBLOCK) {
		pthread_mutex_unlock(&iq.lock);
		fuse_reply_err(req, EAGAIN);
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		pthread_mutex_unlock(&iq.lock);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	w->req = req;
	w->irf = irf;
	/* Appended: readers of one file are served in order. */
	{
		struct irq_wait **pp = &iq.head;

		while (*pp)
			pp = &(*pp)->next;
		*pp = w;
	}
	pthread_mutex_unlock(&iq.lock);
	notify_poke();
}

void irq_poll(fuse_req_t req, struct fuse_file_info *fi,
	      struct fuse_pollhandle *ph)
{
	struct irq_file *irf = file_of(fi);
	unsigned revents = 0;
	uint64_t count;

	pthread_mutex_lock(&iq.lock);
	if (current(irf, &count))
		revents = POLLERR;
	else if (count != irf->seen)
		revents = POLLIN | POLLRDNORM;
	if (ph) {
		if (irf->ph)
			fuse_pollhandle_destroy(irf->ph);
		irf->ph = ph;
	}
	pthread_mutex_unlock(&iq.lock);
	fuse_reply_poll(req, revents);
	if (ph)
		notify_poke();
}

void irq_release(struct fuse_file_info *fi)
{
	struct irq_file *irf = file_of(fi);
	struct irq_wait **pp, *w;

	if (!irf)
		return;
	pthread_mutex_lock(&iq.lock);
	for (pp = &iq.head; (w = *pp);) {
		if (w->irf == irf) {
			*pp = w->next;
			fuse_reply_err(w->req, EINTR);
			free(w);
		} else {
			pp = &w->next;
		}
	}
	if (irf->prev)
		irf->prev->next = irf->next;
	else
		iq.files = irf->next;
	if (irf->next)
		irf->next->prev = irf->prev;
	if (irf->ph)
		fuse_pollhandle_destroy(irf->ph);
	irf->magic = 0;
	pthread_mutex_unlock(&iq.lock);
	free(irf);
	fi->fh = 0;
}

int irq_kick(void)
{
	struct irq_wait **pp, *w;
	struct irq_file *irf;
	uint64_t count;
	int waiting;

	pthread_mutex_lock(&iq.lock);
	for (pp = &iq.head; (w = *pp);) {
		if (fuse_req_interrupted(w->req)) {
			*pp = w->next;
			fuse_reply_err(w->req, EINTR);
			free(w);
			continue;
		}
		/* Only the first parked read of a file may take its news. */
		{
			struct irq_wait *x;

			for (x = iq.head; x != w && x->irf != w->irf; x = x->next)
				;
			if (x != w) {
				pp = &w->next;
				continue;
			}
		}
		if (answer(w->req, w->irf)) {
			*pp = w->next;
			free(w);
			continue;
		}
		pp = &w->next;
	}
	for (irf = iq.files; irf; irf = irf->next) {
		if (irf->ph && (current(irf, &count) || count != irf->seen)) {
			fuse_lowlevel_notify_poll(irf->ph);
			fuse_pollhandle_destroy(irf->ph);
			irf->ph = NULL;
		}
	}
	waiting = iq.head != NULL;
	pthread_mutex_unlock(&iq.lock);
	return waiting;
}

void irq_shutdown(void)
{
	struct irq_wait *w;
	struct irq_file *irf;

	pthread_mutex_lock(&iq.lock);
	while ((w = iq.head)) {
		iq.head = w->next;
		fuse_reply_err(w->req, EINTR);
		free(w);
	}
	for (irf = iq.files; irf; irf = irf->next) {
		if (irf->ph)
			fuse_pollhandle_destroy(irf->ph);
		irf->ph = NULL;
	}
	pthread_mutex_unlock(&iq.lock);
}
