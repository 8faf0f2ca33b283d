// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The open files of the daemon, kept in one list so that the ones the
 * kernel never releases are freed at exit.  After a lazy unmount the
 * kernel may still have RELEASE and RELEASEDIR requests queued when the
 * connection ends: libfuse then leaves the session loop without calling
 * them, and every handle they named would leak (and valgrind says so).
 */
#include "sfs.h"

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sfs_file *files_head;

static void files_track(struct sfs_file *f)
{
	pthread_mutex_lock(&files_lock);
	f->prev = NULL;
	f->next = files_head;
	if (files_head)
		files_head->prev = f;
	files_head = f;
	pthread_mutex_unlock(&files_lock);
}

static void files_untrack(struct sfs_file *f)
{
	pthread_mutex_lock(&files_lock);
	if (f->prev)
		f->prev->next = f->next;
	else
		files_head = f->next;
	if (f->next)
		f->next->prev = f->prev;
	f->prev = f->next = NULL;
	pthread_mutex_unlock(&files_lock);
}

void sfs_reply_open(fuse_req_t req, struct fuse_file_info *fi,
		    struct sfs_file *f)
{
	/* Tracked before the reply: its RELEASE may follow at once. */
	files_track(f);
	fi->fh = (uintptr_t)f;
	if (fuse_reply_open(req, fi) != 0)
		sfs_file_release(fi);
}

void sfs_file_release(struct fuse_file_info *fi)
{
	struct sfs_file *f = sfs_file_of(fi);

	if (!f)
		return;
	files_untrack(f);
	f->ops->release(fi);
	fi->fh = 0;
}

void sfs_files_release_all(void)
{
	struct fuse_file_info fi;

	/* The session is over: no thread can release one concurrently. */
	while (files_head) {
		memset(&fi, 0, sizeof(fi));
		fi.fh = (uintptr_t)files_head;
		sfs_file_release(&fi);
	}
}
