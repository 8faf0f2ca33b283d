// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The events file.  Each open file has its own cursor, starting at the
 * current end of the cluster's event ring (only new events).  A read returns
 * one event line; with nothing new it fails with EAGAIN under O_NONBLOCK and
 * otherwise is parked (waitq.c) until the watcher thread (notify.c) finds
 * an event for it or sees the request interrupted.  poll() is answered at
 * once and notified through the kernel later.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "sfs.h"

#define LINE_MAX_LEN 512

struct ev_file {
	struct wq_file wq;	/* first: its ops are what ops.c sees */
	uint64_t cursor;
	char line[LINE_MAX_LEN];
	size_t len, pos;	/* unread part of the current line */
};
_Static_assert(offsetof(struct ev_file, wq) == 0,
	       "an open ev_file is its wq_file and its sfs_file");

static struct ev_file *ev_file_of(const struct fuse_file_info *fi)
{
	return SFS_FILE_AS(fi, struct ev_file, wq.file);
}

static struct ev_file *ev_of(struct wq_file *f)
{
	return (struct ev_file *)f;
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

static int ev_answer(fuse_req_t req, struct wq_file *f, size_t size)
{
	struct ev_file *ef = ev_of(f);
	size_t n;

	if (!fill(ef))
		return 0;
	n = ef->len - ef->pos;
	if (n > size)
		n = size;
	ef->pos += n;
	fuse_reply_buf(req, ef->line + ef->pos - n, n);
	return 1;
}

/* Over smartio.ko asking for the cursor costs a request: only when polled. */
static unsigned ev_revents(struct wq_file *f)
{
	struct ev_file *ef = ev_of(f);

	return ef->pos < ef->len || smartio_event_cursor(sfs.h) > ef->cursor ?
	       POLLIN | POLLRDNORM : 0;
}

static const struct wq_ops ev_wq_ops = { ev_answer, ev_revents };
struct waitq events_q = WAITQ_INIT(events_q, &ev_wq_ops);

static const struct sfs_fops events_fops;

static void events_release(struct fuse_file_info *fi)
{
	wq_release(&events_q, fi);
}

static void events_open(fuse_req_t req, const struct sfs_obj *o,
			struct fuse_file_info *fi)
{
	struct ev_file *ef = calloc(1, sizeof(*ef));

	(void)o;
	if (!ef) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ef->wq.file.ops = &events_fops;
	ef->cursor = smartio_event_cursor(sfs.h);
	wq_open(&events_q, req, fi, &ef->wq);
}

static void events_read(fuse_req_t req, const struct sfs_obj *o, size_t size,
			off_t off, struct fuse_file_info *fi)
{
	struct ev_file *ef = ev_file_of(fi);

	(void)o;
	(void)off;
	if (!size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	wq_read(&events_q, req, &ef->wq, size, fi->flags & O_NONBLOCK);
}

static void events_poll(fuse_req_t req, struct fuse_file_info *fi,
			struct fuse_pollhandle *ph)
{
	struct ev_file *ef = ev_file_of(fi);

	wq_poll(&events_q, req, &ef->wq, ph);
}

static off_t events_size(const struct sfs_obj *o)
{
	(void)o;
	return 0;
}

static const struct sfs_fops events_fops = {
	.open = events_open,
	.read = events_read,
	.poll = events_poll,
	.release = events_release,
	.size = events_size,
};

static const struct sfs_attr events_attr = {
	"events", 0444, NULL, NULL, NULL, &events_fops, SC_NONE
};
const struct sfs_attr_group events_group = { NULL, &events_attr, 1 };
