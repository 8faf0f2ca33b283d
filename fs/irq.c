// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dev/<dev>/irq/<vec>: a device vector routed to this node, UIO style.
 * Each open file remembers the interrupt count it last returned (at open:
 * the current one).  A read of at least 4 bytes returns the count as a
 * native-endian 32-bit number once it differs from that; with nothing new
 * it fails with EAGAIN under O_NONBLOCK and is otherwise parked (waitq.c)
 * until the watcher thread (notify.c) sees the vector fire (every MSI
 * bumps the cluster's change counter) or the request interrupted.  A vector that stops being routed here fails the
 * reads with EIO.  poll() reports POLLIN when a read would not block.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "sfs.h"

struct irq_file {
	struct wq_file wq;	/* first: its ops are what ops.c sees */
	unsigned dev, vec;
	uint64_t seen;
};
_Static_assert(offsetof(struct irq_file, wq) == 0,
	       "an open irq_file is its wq_file and its sfs_file");

static struct irq_file *irq_file_of(const struct fuse_file_info *fi)
{
	return SFS_FILE_AS(fi, struct irq_file, wq.file);
}

static struct irq_file *irq_of(struct wq_file *f)
{
	return (struct irq_file *)f;
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
static int irq_answer(fuse_req_t req, struct wq_file *f, size_t size)
{
	struct irq_file *irf = irq_of(f);
	uint64_t count;
	uint32_t v;

	(void)size;
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

static unsigned irq_revents(struct wq_file *f)
{
	struct irq_file *irf = irq_of(f);
	uint64_t count;

	if (current(irf, &count))
		return POLLERR;
	return count != irf->seen ? POLLIN | POLLRDNORM : 0;
}

static const struct wq_ops irq_wq_ops = { irq_answer, irq_revents };
struct waitq irq_q = WAITQ_INIT(irq_q, &irq_wq_ops);

static const struct sfs_fops irq_fops;

static void irq_release(struct fuse_file_info *fi)
{
	wq_release(&irq_q, fi);
}

static void irq_open(fuse_req_t req, const struct sfs_obj *o,
		     struct fuse_file_info *fi)
{
	struct irq_file *irf = calloc(1, sizeof(*irf));

	if (!irf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	irf->wq.file.ops = &irq_fops;
	irf->dev = o->dev;
	irf->vec = o->vec;
	if (current(irf, &irf->seen)) {
		free(irf);
		fuse_reply_err(req, ENOENT);
		return;
	}
	fi->nonseekable = 1;
	wq_open(&irq_q, req, fi, &irf->wq);
}

/* An open irq file outlives its vector: its reads fail with EIO. */
static void irq_read(fuse_req_t req, const struct sfs_obj *o, size_t size,
		     off_t off, struct fuse_file_info *fi)
{
	struct irq_file *irf = irq_file_of(fi);

	(void)o;
	(void)off;
	if (size < sizeof(uint32_t)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	wq_read(&irq_q, req, &irf->wq, size, fi->flags & O_NONBLOCK);
}

static void irq_poll(fuse_req_t req, struct fuse_file_info *fi,
		     struct fuse_pollhandle *ph)
{
	struct irq_file *irf = irq_file_of(fi);

	wq_poll(&irq_q, req, &irf->wq, ph);
}

static off_t irq_size(const struct sfs_obj *o)
{
	(void)o;
	return sizeof(uint32_t);
}

static const struct sfs_fops irq_fops = {
	.open = irq_open,
	.read = irq_read,
	.poll = irq_poll,
	.release = irq_release,
	.size = irq_size,
	.outlives = 1,
};

/* Every irq/<vec> file. */
static const struct sfs_attr irq_attr = {
	"irq", 0444, NULL, NULL, NULL, &irq_fops, SC_NONE
};
const struct sfs_attr_group irq_group = { NULL, &irq_attr, 1 };
