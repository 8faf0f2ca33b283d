// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The simulated fabric's shared state: creating or joining it, and the
 * failure detector that turns a dead or silent node process into a
 * node-down for the core (the lock and change counter: shm_sync.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "devmodel.h"
#include "procstat.h"

static const struct sio_reg_limits sim_limits = {
	.max_borrows = 1024,
	.max_segments = 1024,
	.max_attach = 1024,
	.max_segdma = 1024,
	.max_peermap = 1024,
};

static u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/*
 * Start time of a process (clock ticks since boot), 0 when unknown;
 * *zombie tells whether it has exited unreaped.
 */
static u64 proc_start(s32 pid, int *zombie)
{
	unsigned long long start = 0;
	char state = sio_proc_stat((pid_t)pid, &start);

	*zombie = state == 'Z' || state == 'X';
	return state ? start : 0;
}

static u64 self_start(void)
{
	int zombie;

	return proc_start(getpid(), &zombie);
}

/*
 * Alive unless gone, a zombie nobody reaped (it will never beat again), or
 * a different process that reuses the pid of one that died.
 */
static int pid_alive(s32 pid, u64 start)
{
	int zombie;
	u64 now;

	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return 0;
	now = proc_start(pid, &zombie);
	if (!now)
		return 1;	/* no /proc: trust kill() */
	return !zombie && (!start || now == start);
}

/* Whether this process is the one recorded as (pid, start). */
static int is_self(s32 pid, u64 start)
{
	return pid == getpid() && (!start || start == self_start());
}

int sim_runner_alive(struct sim_fabric *f, u32 dev)
{
	struct sim_dev_hw *hw = sim_dev_hw(f, dev);

	return hw->runner_pid && pid_alive(hw->runner_pid, hw->runner_start);
}

void sim_runner_set(struct sim_fabric *f, u32 dev, int running)
{
	struct sim_dev_hw *hw = sim_dev_hw(f, dev);

	hw->runner_pid = running ? getpid() : 0;
	hw->runner_start = running ? self_start() : 0;
}

static u32 first_served(struct sim_fabric *f)
{
	u32 i;

	for (i = 0; i < f->reg->nnodes; i++)
		if (f->served >> i & 1)
			return i;
	return f->reg->nnodes;	/* excludes nobody */
}

/* Whether pid is stopped (SIGSTOP, a debugger): it cannot beat. */
static int pid_stopped(s32 pid)
{
	unsigned long long start;
	char state = sio_proc_stat((pid_t)pid, &start);

	return state == 'T' || state == 't';
}

/*
 * Three detectors: a process that is gone takes its nodes down at once; a
 * stopped one once its heartbeats (sent through the core, as the kernel
 * does over the NTB) have been silent for SIM_DEAD_MS; a running one that
 * is silent for SIM_SILENT_MS -- hung -- through the core's own check.
 * A running process is given longer because on a loaded machine its beat
 * thread can wait seconds for a CPU or for the fabric lock (make -j
 * check beside QEMU guests did it: a node declared down while its
 * daemon was serving dropped a test's interrupt routes).
 */
void sim_check_liveness(struct sim_fabric *f)
{
	u64 now = mono_ns();
	u32 i;

	for (i = 0; i < f->reg->nnodes; i++) {
		struct sim_node_hw *hw = sim_node_hw(f, i);
		struct sio_node *n = sio_node(f->reg, i);

		if (n->state != SIO_NODE_UP || !hw->owner_pid)
			continue;
		if (!pid_alive(hw->owner_pid, hw->owner_start)) {
			hw->owner_pid = 0;
			sio_core_node_down(&f->core, i);
		} else if (n->heard_ns && !(f->served >> i & 1) &&
			   now - n->heard_ns > SIM_DEAD_MS * 1000000ull &&
			   pid_stopped(hw->owner_pid)) {
			sio_core_node_down(&f->core, i);
		}
	}
	sio_core_check_heartbeats(&f->core, first_served(f),
				  SIM_SILENT_MS * 1000000ull);
}

/*
 * Each served node beats to every other node that is up.  A process that
 * was stopped long enough to be declared down takes its nodes back (and
 * its beats bring them up again) unless another process serves them now.
 */
static void beat_once(struct sim_fabric *f)
{
	u64 seq = mono_ns();
	u32 i, j;

	for (i = 0; i < f->reg->nnodes; i++) {
		struct sim_node_hw *hw = sim_node_hw(f, i);

		if (!(f->served >> i & 1))
			continue;
		if (!is_self(hw->owner_pid, hw->owner_start)) {
			if (hw->owner_pid) {
				f->served &= ~(1ull << i);
				continue;
			}
			hw->owner_pid = getpid();
			hw->owner_start = self_start();
		}
		for (j = 0; j < f->reg->nnodes; j++)
			if (j != i && sio_node(f->reg, j)->state == SIO_NODE_UP)
				sio_core_heartbeat(&f->core, i, j, seq);
		/*
		 * Every node reads the one registry here, so a beat is heard
		 * by all at once, including nodes that come up later: a node
		 * alone, with nobody to beat to, must not look silent to the
		 * first process that joins (it took the lone node down and
		 * with it the interrupt routes aimed there).
		 */
		sio_node(f->reg, i)->heard_ns = mono_ns();
	}
}

static void *beat_thread(void *arg)
{
	struct sim_fabric *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		struct timespec ts = { 0, SIM_HEARTBEAT_MS * 1000000L };

		sim_lock(f);
		beat_once(f);
		sim_check_liveness(f);
		sim_unlock(f);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* A one-line reason for refusing the fabric directory, in o->err. */
static int refuse(const struct sim_open *o, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(const struct sim_open *o, int err, const char *fmt, ...)
{
	va_list ap;

	if (o->err && o->errlen) {
		va_start(ap, fmt);
		vsnprintf(o->err, o->errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

static const char *user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (!getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) && res)
		snprintf(buf, len, "%s (uid %u)", pw.pw_name, (unsigned)uid);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
	return buf;
}

/* The group a shared fabric belongs to, by name or number. */
static int group_gid(const struct sim_open *o, gid_t *gid)
{
	struct group gr, *res = NULL;
	char tmp[4096], *end;
	unsigned long v;

	if (!getgrnam_r(o->group, &gr, tmp, sizeof(tmp), &res) && res) {
		*gid = gr.gr_gid;
		return 0;
	}
	errno = 0;
	v = strtoul(o->group, &end, 10);
	if (*o->group && !*end && !errno && v < (gid_t)-1) {
		*gid = (gid_t)v;
		return 0;
	}
	return refuse(o, -EINVAL, "fabric group '%s': no such group", o->group);
}

/* Whether user uid belongs to group gid (primary or supplementary). */
static int user_in_group(uid_t uid, gid_t gid)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];
	gid_t groups[256];
	int n = 256, i;

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) || !res)
		return 0;
	if (pw.pw_gid == gid)
		return 1;
	if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) < 0)
		return 0;
	for (i = 0; i < n; i++)
		if (groups[i] == gid)
			return 1;
	return 0;
}

/*
 * The fabric directory or its state file (fd) may be trusted: owned by
 * this user with no access for anyone else, or for a group's fabric owned
 * by this user, root or a member of the group, with access for the group
 * alone.  Anyone else who made it could rewrite the memory this process
 * dereferences (registry offsets, the robust mutex).
 */
static int check_owner(const struct sim_fabric *f, const struct sim_open *o,
		       int fd, const char *path)
{
	char who[160], me[160];
	struct stat st;
	mode_t perm;
	int dir;

	if (fstat(fd, &st))
		return -errno;
	dir = S_ISDIR(st.st_mode);
	if (!dir && !S_ISREG(st.st_mode))
		return refuse(o, -EPERM, "%s: not a regular file: refusing it",
			      path);
	perm = st.st_mode & 0777;
	if (!f->grouped && st.st_uid != geteuid())
		return refuse(o, -EPERM, "%s is owned by %s, not by %s: "
			      "refusing a fabric someone else made (remove "
			      "it, or share it with a group: --fabric-group)",
			      path, user_name(st.st_uid, who, sizeof(who)),
			      user_name(geteuid(), me, sizeof(me)));
	if (!f->grouped && perm != (dir ? 0700u : 0600u))
		return refuse(o, -EPERM, "%s has mode %04o, not %04o: others "
			      "could change the fabric: refusing it", path,
			      (unsigned)(st.st_mode & 07777), dir ? 0700u : 0600u);
	if (!f->grouped)
		return 0;
	if (st.st_gid != f->gid || perm != (dir ? 0770u : 0660u))
		return refuse(o, -EPERM, "%s has group %u and mode %04o, not "
			      "group %u and mode %s: refusing it", path,
			      (unsigned)st.st_gid,
			      (unsigned)(st.st_mode & 07777), (unsigned)f->gid,
			      dir ? "02770" : "0660");
	if (st.st_uid != geteuid() && st.st_uid != 0 &&
	    !user_in_group(st.st_uid, f->gid))
		return refuse(o, -EPERM, "%s is owned by %s, who is not in "
			      "the fabric's group %u: refusing it", path,
			      user_name(st.st_uid, who, sizeof(who)),
			      (unsigned)f->gid);
	return 0;
}

/*
 * The locks go with the fd explicitly: a child forked meanwhile shares
 * the open file and would otherwise keep them after this handle is gone
 * (the open lock for ever, or the fabric open in this handle's name).
 */
static void close_dir(struct sim_fabric *f)
{
	if (f->dirfd >= 0) {
		flock(f->dirfd, LOCK_UN);
		close(f->dirfd);
	}
	f->dirfd = -1;
}

/*
 * Creates the fabric directory in base (the fd of the shared memory
 * directory) with the fabric's mode, or opens the one there, never through
 * a symbolic link, and checks who made it.  Joining only, it is never
 * created: a join that finds no fabric leaves nothing behind.
 */
static int open_dir(struct sim_fabric *f, const struct sim_open *o, int base,
		    const char *leaf)
{
	int created = 0, fd, err = 0;

	if (o->create != 0 && o->topo) {
		created = mkdirat(base, leaf, f->grouped ? 0770 : 0700) == 0;
		if (!created && errno != EEXIST)
			return -errno;
	}
	fd = openat(base, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ELOOP || err == -ENOTDIR)
			return refuse(o, -EPERM, "%s is not a directory (a "
				      "symbolic link or a file): refusing it",
				      f->dir);
		return err;
	}
	/* Exactly the fabric's mode, whatever the umask. */
	if (created && f->grouped && fchown(fd, (uid_t)-1, f->gid) < 0)
		err = -errno;
	if (created && !err && fchmod(fd, f->grouped ? 02770 : 0700) < 0)
		err = -errno;
	if (!err)
		err = check_owner(f, o, fd, f->dir);
	if (err) {
		close(fd);
		return err;
	}
	f->dirfd = fd;
	return 0;
}

int sim_file_open(struct sim_fabric *f, const char *path, int flags)
{
	size_t n = strlen(f->dir);
	struct stat st;
	int fd;

	if (f->dirfd < 0 || strncmp(path, f->dir, n) || path[n] != '/' ||
	    !path[n + 1] || strchr(path + n + 1, '/'))
		return -EINVAL;
	fd = openat(f->dirfd, path + n + 1, flags | O_NOFOLLOW | O_CLOEXEC,
		    f->file_mode);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	/* A file made here has the fabric's mode, whatever the umask. */
	if ((flags & O_CREAT) && st.st_uid == geteuid() &&
	    (st.st_mode & 0777) != f->file_mode && fchmod(fd, f->file_mode)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

static u64 layout(struct sim_shared *sh, const struct sio_topology *t)
{
	u64 off = SIO_ALIGN_UP(sizeof(*sh), 4096);
	u32 i, lut_max = 1, cfg = 256;

	for (i = 0; i < t->nadapters; i++)
		if (t->adapters[i].luts > lut_max)
			lut_max = t->adapters[i].luts;
	for (i = 0; i < t->ndevices; i++)
		if (t->devices[i].config_size > cfg)
			cfg = t->devices[i].config_size;
	sh->reg_off = off;
	sh->reg_size = sio_registry_size(t, &sim_limits);
	if (!sh->reg_size)
		return 0;
	off += SIO_ALIGN_UP(sh->reg_size, 4096);
	sh->nodes_hw_off = off;
	off += SIO_ALIGN_UP(t->nnodes * sizeof(struct sim_node_hw), 4096);
	sh->lut_max = lut_max;
	sh->luts_off = off;
	off += SIO_ALIGN_UP((u64)t->nnodes * SIO_MAX_ADAPTERS * lut_max *
			    sizeof(struct sim_lut), 4096);
	sh->iommu_off = off;
	off += SIO_ALIGN_UP((u64)t->nnodes * SIM_IOMMU_ENTRIES *
			    sizeof(struct sim_iommu), 4096);
	sh->cfg_off = off;
	sh->cfg_stride = cfg;
	off += SIO_ALIGN_UP((u64)t->ndevices * cfg, 4096);
	sh->devs_hw_off = off;
	off += SIO_ALIGN_UP((u64)t->ndevices * sizeof(struct sim_dev_hw), 4096);
	return off;
}

static void bind_pointers(struct sim_fabric *f)
{
	f->reg = (struct sio_registry *)((u8 *)f->sh + f->sh->reg_off);
	f->core.reg = f->reg;
	f->core.ops = &sim_ops;
	f->core.plat = f;
}

/*
 * The configuration spaces the creator just wrote are the simulated
 * devices' registers (4 KiB a function with extended space: 3.8 of the
 * creator's 8.8 KiB per device at 8 x 2048 VFs, measured with
 * /proc/<pid>/smaps), not the creating process's memory: its page
 * tables let go of them, the fabric's file keeps them, and a page maps in
 * again on the next access to that function's config.  The creator's RSS
 * is then what every joining node's is.
 */
static void drop_cfg_pages(struct sim_fabric *f, u32 ndevices)
{
	u64 len = SIO_ALIGN_UP((u64)ndevices * f->sh->cfg_stride, 4096);

	/* Advice only: if refused, the pages merely stay mapped. */
	(void)madvise(sim_cfg(f, 0), len, MADV_DONTNEED);
}

static int create_state(struct sim_fabric *f, const char *path,
			const struct sio_topology *t)
{
	struct sim_shared tmp;
	u64 size;
	void *mem;
	int err;
	u32 i;

	memset(&tmp, 0, sizeof(tmp));
	size = layout(&tmp, t);
	if (!size)
		return -E2BIG;
	f->fd = sim_file_open(f, path, O_RDWR | O_CREAT | O_EXCL);
	if (f->fd < 0)
		return f->fd;
	if (ftruncate(f->fd, (off_t)size) < 0)
		goto fail_errno;
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	if (mem == MAP_FAILED)
		goto fail_errno;
	f->sh = mem;
	memcpy(f->sh, &tmp, sizeof(tmp));
	f->sh->size = size;
	f->sh->version = SIM_VERSION;
	f->sh->no_pace = t->no_pace;
	err = sim_state_attach(f->fd);
	if (!err)
		err = sim_lock_init(&f->sh->lock);
	if (!err)
		err = sio_registry_init((u8 *)mem + tmp.reg_off, tmp.reg_size, t,
					&sim_limits);
	if (err) {
		munmap(mem, size);
		f->sh = NULL;
		close(f->fd);
		unlinkat(f->dirfd, "state", 0);
		return err;
	}
	bind_pointers(f);
	for (i = 0; i < t->ndevices; i++)
		sim_cfg_init(f, i);
	drop_cfg_pages(f, t->ndevices);
	__atomic_store_n(&f->sh->magic, SIM_MAGIC, __ATOMIC_RELEASE);
	return 0;
fail_errno:
	err = -errno;
	close(f->fd);
	unlinkat(f->dirfd, "state", 0);
	return err;
}

/*
 * Maps the state file of an existing fabric.  -EPROTO when it is not a
 * whole state of this version, with why (a phrase) filled in: under the
 * open lock no creator is half way (a creator holds the lock until it
 * publishes the magic), so an unfinished state is one whose creator died.
 */
static int join_state(struct sim_fabric *f, const struct sim_open *o,
		      const char *path, char *why, size_t whylen)
{
	struct sim_shared *sh;
	struct stat st;
	void *mem;
	int err;

	f->fd = sim_file_open(f, path, O_RDWR);
	if (f->fd < 0)
		return f->fd;
	err = check_owner(f, o, f->fd, path);
	if (!err && fstat(f->fd, &st) < 0)
		err = -errno;
	if (err)
		goto fail;
	err = -EPROTO;
	if (st.st_size < (off_t)sizeof(*sh)) {
		snprintf(why, whylen, "was left unfinished (%lld bytes) by a "
			 "process that died while creating it",
			 (long long)st.st_size);
		goto fail;
	}
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   f->fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	sh = mem;
	if (__atomic_load_n(&sh->magic, __ATOMIC_ACQUIRE) != SIM_MAGIC)
		snprintf(why, whylen, "was left unfinished by a process that "
			 "died while creating it");
	else if (sh->version != SIM_VERSION)
		snprintf(why, whylen, "is of version %u, made by another "
			 "smartio (this one's is %u)", sh->version, SIM_VERSION);
	else if (sh->size != (u64)st.st_size || sh->reg_off > sh->size ||
		 sh->reg_size > sh->size - sh->reg_off ||
		 sio_registry_check((u8 *)mem + sh->reg_off, sh->reg_size))
		snprintf(why, whylen, "is inconsistent (its sizes or registry "
			 "do not check)");
	else
		err = 0;
	if (err) {
		munmap(mem, (size_t)st.st_size);
		goto fail;
	}
	f->sh = sh;
	bind_pointers(f);
	return 0;
fail:
	close(f->fd);
	f->fd = -1;
	return err;
}

/* Removes every file of the fabric directory. */
static void empty_dir(struct sim_fabric *f)
{
	int fd = f->dirfd >= 0 ? dup(f->dirfd) : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* Empties and removes the fabric directory; closes its fd. */
static void remove_dir(struct sim_fabric *f)
{
	empty_dir(f);
	rmdir(f->dir);
	close_dir(f);
}

static void unmap_state(struct sim_fabric *f)
{
	if (f->sh) {
		munmap(f->sh, f->sh->size);
		f->sh = NULL;
	}
	if (f->fd >= 0) {
		flock(f->fd, LOCK_UN);	/* as close_dir says */
		close(f->fd);
	}
	f->fd = -1;
}

/*
 * The open lock (issue 28, item 5): an flock on the fabric directory
 * itself, which only its owner (or the fabric's group) can open.  Never on
 * the shared memory directory: any local user can open that one and hold
 * the lock for ever.  A directory its last user removed while this process
 * waited is no longer the fabric (-EAGAIN): the caller opens the one under
 * that name now.
 */
static int lock_dir(struct sim_fabric *f, int base, const char *leaf)
{
	struct stat held, now;

	if (flock(f->dirfd, LOCK_EX) < 0 || fstat(f->dirfd, &held) < 0)
		return -errno;
	if (fstatat(base, leaf, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
	    now.st_dev == held.st_dev && now.st_ino == held.st_ino)
		return 0;
	return -EAGAIN;
}

static void unlock_dir(struct sim_fabric *f)
{
	if (f->dirfd >= 0)
		flock(f->dirfd, LOCK_UN);
}

/* Opens the fabric directory and takes its open lock. */
static int open_dir_locked(struct sim_fabric *f, const struct sim_open *o,
			   int base, const char *leaf)
{
	int tries, err = -EAGAIN;

	for (tries = 0; tries < 100 && err == -EAGAIN; tries++) {
		err = open_dir(f, o, base, leaf);
		if (err)
			return err;
		err = lock_dir(f, base, leaf);
		if (err)
			close_dir(f);
	}
	return err;
}

static int open_locked(struct sim_fabric *f, const struct sim_open *o,
		       int base);

/*
 * Deciding between create, join and rebuild must not interleave with
 * another process's decision (two daemons starting at once would each
 * rebuild a stale fabric under the other), nor with a last user's close
 * removing the fabric: all of them hold the fabric directory's open lock.
 */
int sim_fabric_open(struct sim_fabric *f, const struct sim_open *o)
{
	const char *base = o->shm_dir ? o->shm_dir : "/dev/shm";
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = open_locked(f, o, fd);
	close(fd);
	unlock_dir(f);
	if (err)
		close_dir(f);
	else
		sim_pace_init(f);
	return err;
}

/*
 * Under the open lock: creates the fabric's state, joins it, or rebuilds
 * it.  A state nobody has open (sim_state_users) is stale: rebuilt rather
 * than inherited when creating is allowed, be it whole (its lends and
 * borrows died with their processes), unfinished or of another version.
 */
static int create_or_join(struct sim_fabric *f, const struct sim_open *o,
			  const char *path)
{
	int may_create = o->create != 0 && o->topo, in_use, err;
	char why[160] = "";

	if (may_create) {
		err = create_state(f, path, o->topo);
		if (err != -EEXIST)
			return err;
	}
	in_use = sim_state_users(f->dirfd, 0);
	err = join_state(f, o, path, why, sizeof(why));
	if (err == -EPROTO && !in_use)
		in_use = sim_state_users(f->dirfd, 1);
	if (err == -EPROTO && in_use)
		return refuse(o, err, "%s/state %s, and a process still has "
			      "the fabric open: stop it first", f->dir, why);
	if (err == -EPROTO && !may_create)
		return refuse(o, err, "%s/state %s, and no process has it open:"
			      " create the fabric again (with its topology) "
			      "to rebuild it", f->dir, why);
	if ((err == 0 || err == -EPROTO) && may_create && !in_use) {
		unmap_state(f);
		empty_dir(f);
		err = create_state(f, path, o->topo);
		if (!err && why[0])
			refuse(o, 0, "%s/state %s and no process had it open: "
			       "rebuilt the fabric", f->dir, why);
		return err;
	}
	if (err)
		return err;
	if (o->create == 1) {
		unmap_state(f);
		return -EBUSY;
	}
	err = sim_state_attach(f->fd);
	if (err)
		unmap_state(f);
	return err;
}

static int open_locked(struct sim_fabric *f, const struct sim_open *o,
		       int base)
{
	const char *basename = o->shm_dir ? o->shm_dir : "/dev/shm";
	char path[300], leaf[80];
	int err, n;

	memset(f, 0, sizeof(*f));
	sim_dmamap_init(f);
	f->fd = -1;
	f->dirfd = -1;
	if (o->err && o->errlen)
		o->err[0] = '\0';
	if (!o->name || !*o->name || strchr(o->name, '/') ||
	    strlen(o->name) > 64)
		return -EINVAL;
	snprintf(leaf, sizeof(leaf), "smartio-%s", o->name);
	n = snprintf(f->dir, sizeof(f->dir), "%s/%s", basename, leaf);
	if (n < 0 || (size_t)n >= sizeof(f->dir))
		return -ENAMETOOLONG;
	err = o->group ? group_gid(o, &f->gid) : 0;
	if (err)
		return err;
	f->grouped = o->group != NULL;
	f->file_mode = f->grouped ? 0660 : 0600;
	err = open_dir_locked(f, o, base, leaf);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/state", f->dir);
	return create_or_join(f, o, path);
}

int sim_fabric_serve(struct sim_fabric *f, u64 mask)
{
	u32 i;
	int err = 0;

	sim_lock(f);
	sim_check_liveness(f);
	for (i = 0; i < f->reg->nnodes; i++) {
		struct sim_node_hw *hw = sim_node_hw(f, i);

		if ((mask >> i & 1) && !is_self(hw->owner_pid, hw->owner_start) &&
		    sio_node(f->reg, i)->state == SIO_NODE_UP)
			err = -EBUSY;
	}
	if (!err) {
		for (i = 0; i < f->reg->nnodes; i++) {
			if (!(mask >> i & 1))
				continue;
			sim_node_hw(f, i)->owner_pid = getpid();
			sim_node_hw(f, i)->owner_start = self_start();
			sio_core_node_up(&f->core, i);
		}
		f->served |= mask;
	}
	sim_unlock(f);
	if (!err && !f->beat_running) {
		__atomic_store_n(&f->stop, 0, __ATOMIC_RELEASE);
		if (pthread_create(&f->beat, NULL, beat_thread, f) == 0) {
			pthread_setname_np(f->beat, "sim-beat");
			f->beat_running = 1;
		}
	}
	/* The served nodes' devices come alive (nvme, dma models). */
	if (!err)
		err = sim_models_start(f);
	return err;
}

void sim_fabric_close(struct sim_fabric *f)
{
	u32 i;

	if (!f->sh)
		return;
	sim_models_stop(f);
	sim_dmamap_fini(f);
	if (f->beat_running) {
		__atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
		pthread_join(f->beat, NULL);
		f->beat_running = 0;
	}
	sim_lock(f);
	for (i = 0; i < f->reg->nnodes; i++) {
		if (!(f->served >> i & 1))
			continue;
		sio_core_node_down(&f->core, i);
		sim_node_hw(f, i)->owner_pid = 0;
	}
	f->served = 0;
	sim_unlock(f);
	/*
	 * The last handle removes the fabric.  Deciding it and removing it
	 * hold the open lock, so a process joining now either attached first
	 * (and this one is not the last) or opens the directory made after.
	 */
	if (flock(f->dirfd, LOCK_EX) < 0) {
		unmap_state(f);
		close_dir(f);
		return;
	}
	unmap_state(f);		/* lets go of this handle's shared flock */
	if (!sim_state_users(f->dirfd, 0))
		remove_dir(f);
	close_dir(f);
}
