// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Attachment holds: who keeps a remote segment attached.
 *
 * Why: reading the tree must never change fabric state (a stat, `ls -l`
 * or updatedb of every mem would otherwise pin every exported segment and
 * spend look-up table entries).  A segment is attached only by a write of
 * a node name to its `attach` file, and the attachment belongs to the
 * process that wrote it: when the last such process is gone (it exited or
 * was killed, which also ends its mappings) the daemon detaches the
 * segment for that node.  An open of `mem` cannot be the trigger: mem is a
 * symbolic link to the memory itself so that mmap() reaches it with no
 * daemon in the data path, and the open of the target never reaches FUSE.
 *
 * A process is watched through a pidfd (it cannot be confused with a
 * later process that reuses the number), or by its start time where there
 * is no pidfd_open (valgrind).  A writer the daemon cannot see
 * (another pid namespace: pid 0) gets no hold; its attachment lasts until
 * a write to `detach`, as every attachment made through libsmartio does.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procstat.h"
#include "sfs.h"

/*
 * A process, robust against reuse of its number: a pidfd, or where the
 * kernel (or valgrind) has no pidfd_open, its pid and start time.
 */
struct proc_id {
	pid_t pid;
	int pidfd;		/* -1: compare start instead */
	unsigned long long start;
};

/*
 * Holds cost the daemon a descriptor each: bound them, well under the
 * descriptor limit, so that many writers get ENOSPC instead of starving
 * the daemon of descriptors.
 */
#define HOLDS_MAX 4096

struct hold {
	uint16_t owner, node;
	char seg[SMARTIO_NAME_MAX];
	struct proc_id proc;
};

static struct {
	pthread_mutex_t lock;
	struct hold *v;
	size_t n, cap;
} hs = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 };

/* The thread group of thread tid. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	long tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	return tgid > 0 ? (pid_t)tgid : -1;
}

/* The process of thread tid; -ESRCH if it is gone, or -errno. */
static int process_id(pid_t tid, struct proc_id *id)
{
	char st;

	/* A single-threaded writer (a shell's echo) leads its own group. */
	id->pid = tid;
	id->pidfd = (int)syscall(SYS_pidfd_open, tid, 0);
	if (id->pidfd >= 0)
		return 0;
	/*
	 * A thread that does not lead its group is refused with EINVAL (and
	 * ENOENT since Linux 6.9, without PIDFD_THREAD): hold its process.
	 */
	if (errno != EINVAL && errno != ENOENT && errno != ENOSYS)
		return -errno;	/* ESRCH: gone; EMFILE: out of descriptors */
	if (errno != ENOSYS || tgid_of(tid) != tid) {
		id->pid = tgid_of(tid);
		if (id->pid <= 0)
			return -ESRCH;
		id->pidfd = (int)syscall(SYS_pidfd_open, id->pid, 0);
		if (id->pidfd >= 0)
			return 0;
		if (errno != ENOSYS)
			return -errno;
	}
	st = sio_proc_stat(id->pid, &id->start);
	return st && st != 'Z' && st != 'X' ? 0 : -ESRCH;
}

/* Whether the process has exited (a zombie has). */
static int process_gone(const struct proc_id *id)
{
	struct pollfd p = { .fd = id->pidfd, .events = POLLIN };
	unsigned long long start;
	char st;

	if (id->pidfd >= 0)
		return poll(&p, 1, 0) > 0;	/* readable once it exited */
	st = sio_proc_stat(id->pid, &start);
	return !st || st == 'Z' || st == 'X' || start != id->start;
}

static void process_put(struct proc_id *id)
{
	if (id->pidfd >= 0)
		close(id->pidfd);
	id->pidfd = -1;
}

static int same(const struct hold *h, unsigned owner, const char *seg,
		unsigned node)
{
	return h->owner == owner && h->node == node &&
	       strcmp(h->seg, seg) == 0;
}

/* Removes entry i (the caller holds the lock). */
static void drop_at(size_t i)
{
	process_put(&hs.v[i].proc);
	hs.v[i] = hs.v[hs.n - 1];
	__atomic_store_n(&hs.n, hs.n - 1, __ATOMIC_RELEASE);
}

/* Whether process pid already holds the attachment (the caller locks). */
static int held_by(unsigned owner, const char *seg, unsigned node, pid_t pid)
{
	size_t i;

	for (i = 0; i < hs.n; i++)
		if (same(&hs.v[i], owner, seg, node) &&
		    hs.v[i].proc.pid == pid)
			return 1;
	return 0;
}

static int held(unsigned owner, const char *seg, unsigned node)
{
	size_t i;

	for (i = 0; i < hs.n; i++)
		if (same(&hs.v[i], owner, seg, node))
			return 1;
	return 0;
}

int hold_attach(unsigned owner, const char *seg, unsigned node, pid_t tid)
{
	struct hold h = { (uint16_t)owner, (uint16_t)node, "", { 0, -1, 0 } };
	struct proc_id proc = { 0, -1, 0 };
	int rc;

	if (strlen(seg) >= sizeof(h.seg))
		return -ENAMETOOLONG;
	strcpy(h.seg, seg);
	if (tid > 0) {
		rc = process_id(tid, &proc);
		if (rc)
			return rc;	/* the writer is gone: nobody to hold */
	}
	pthread_mutex_lock(&hs.lock);
	/*
	 * One hold per process and attachment: a process that writes attach
	 * again (a loop, a walker) must not spend one descriptor a write.
	 */
	if (proc.pid && held_by(owner, seg, node, proc.pid)) {
		process_put(&proc);
		proc.pid = 0;
	}
	if (proc.pid && hs.n >= HOLDS_MAX) {
		rc = -ENOSPC;
		goto out;
	}
	if (proc.pid && hs.n == hs.cap) {
		size_t cap = hs.cap ? hs.cap * 2 : 16;
		struct hold *v = realloc(hs.v, cap * sizeof(*v));

		if (!v) {
			rc = -ENOMEM;
			goto out;
		}
		hs.v = v;
		hs.cap = cap;
	}
	rc = smartio_segment_attach(sfs.h, owner, seg, node);
	if (rc || !proc.pid)
		goto out;
	h.proc = proc;
	hs.v[hs.n] = h;
	__atomic_store_n(&hs.n, hs.n + 1, __ATOMIC_RELEASE);
	proc.pidfd = -1;
out:
	pthread_mutex_unlock(&hs.lock);
	process_put(&proc);
	return rc;
}

int hold_detach(unsigned owner, const char *seg, unsigned node)
{
	size_t i = 0;
	int rc;

	pthread_mutex_lock(&hs.lock);
	rc = smartio_segment_detach(sfs.h, owner, seg, node);
	while (!rc && i < hs.n) {
		if (same(&hs.v[i], owner, seg, node))
			drop_at(i);
		else
			i++;
	}
	pthread_mutex_unlock(&hs.lock);
	return rc;
}

/*
 * holders: who keeps owner/seg attached through this daemon, one line per
 * hold, "<node> <pid> <command>" (the command as /proc/<pid>/comm names
 * it, "?" once gone).  Why: a destroy refused with EBUSY must be able to
 * say which process to end or which attachment to detach (issue 32 item
 * 12), and only this daemon knows who wrote to attach.
 */
void holds_show(unsigned owner, const char *seg, struct sbuf *sb)
{
	char path[64], comm[64];
	size_t i, n;
	FILE *f;

	pthread_mutex_lock(&hs.lock);
	for (i = 0; i < hs.n; i++) {
		const struct hold *h = &hs.v[i];

		if (h->owner != owner || strcmp(h->seg, seg) != 0)
			continue;
		strcpy(comm, "?");
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)h->proc.pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f)) {
				n = strcspn(comm, "\n");
				comm[n] = '\0';
				/*
				 * One printable word: any process names
				 * itself (prctl), and a reader must get
				 * neither a second field nor bytes that
				 * are not text.
				 */
				for (n = 0; comm[n]; n++)
					if ((unsigned char)comm[n] <= ' ' ||
					    (unsigned char)comm[n] >= 0x7f)
						comm[n] = '_';
			}
			fclose(f);
		}
		sb_printf(sb, "%s %d %s\n", names_nodeinfo(h->node) ?
			  names_nodeinfo(h->node)->name : "?",
			  (int)h->proc.pid, comm[0] ? comm : "?");
	}
	pthread_mutex_unlock(&hs.lock);
}

void holds_reap(void)
{
	struct smartio_segment_info si;
	size_t i = 0;

	/* Most of the time nothing is held: no lock, no system call. */
	if (!__atomic_load_n(&hs.n, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&hs.lock);
	while (i < hs.n) {
		struct hold h = hs.v[i];
		int gone;

		gone = process_gone(&h.proc);
		/* Detached by hand or destroyed: nothing left to hold. */
		if (!gone && (tree_segment(h.owner, h.seg, &si) ||
			      !(si.attached >> h.node & 1)))
			gone = 1;
		if (!gone) {
			i++;
			continue;
		}
		drop_at(i);
		if (!held(h.owner, h.seg, h.node) &&
		    !tree_segment(h.owner, h.seg, &si) &&
		    (si.attached >> h.node & 1))
			smartio_segment_detach(sfs.h, h.owner, h.seg, h.node);
	}
	pthread_mutex_unlock(&hs.lock);
}

void holds_free(void)
{
	pthread_mutex_lock(&hs.lock);
	while (hs.n)
		drop_at(hs.n - 1);
	free(hs.v);
	hs.v = NULL;
	hs.cap = 0;
	pthread_mutex_unlock(&hs.lock);
}
