// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The FUSE low-level operations: they find the object behind an inode,
 * check that it still exists and hand the work to tree.c, attrs.c,
 * writes.c and events.c.  Attribute files are opened with direct_io, so
 * every read reflects the cluster as it is; their contents are rendered on
 * a read at offset 0 and kept for the reads that continue it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "sfs.h"

#define STATS_XATTR "user.smartiofs.stats"

struct attr_file {
	struct sfs_file file;	/* first: sfs_text_fops or sfs_config_fops */
	pthread_mutex_t lock;
	struct sbuf sb;
	int have;
};
_Static_assert(offsetof(struct attr_file, file) == 0,
	       "an open attribute file is its sfs_file");

static struct attr_file *attr_file_of(const struct fuse_file_info *fi)
{
	return SFS_FILE_AS(fi, struct attr_file, file);
}

struct dir_ent {
	char *name;
	mode_t mode;
	fuse_ino_t ino;
	struct sfs_obj obj;	/* for readdirplus */
};

/*
 * A directory's listing as it was at offset 0, which the READDIRPLUS
 * requests that continue it read from: no OPENDIR carries a handle
 * (listings.c), so listings are kept by directory, a few at a time.
 */
struct dir_file {
	pthread_mutex_t lock;
	struct dir_ent *ents;
	size_t n, cap;
	const struct sfs_inode *inode;	/* the request's, set by each */
	fuse_ino_t ino;
	unsigned refs;		/* requests using it, and its slot's */
	int oom;
};

/* Directories being listed, most recent first; ls -lR reads one at a time,
 * concurrent readers a few more. */
#define DIR_SLOTS 8
static struct {
	pthread_mutex_t lock;
	struct dir_file *slot[DIR_SLOTS];
} dirs = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The request's credentials, for authz() (authz.c decides, not this). */
static void caller_of(fuse_req_t req, struct sfs_caller *who)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	gid_t groups[64];
	int n, i;

	memset(who, 0, sizeof(*who));
	who->uid = (uid_t)-1;	/* no context: nobody */
	who->gid = (gid_t)-1;
	if (!c)
		return;
	who->uid = c->uid;
	who->gid = c->gid;
	who->pid = c->pid;
	if (!sfs.has_operator_group)
		return;
	if (c->gid == sfs.operator_gid) {
		who->operator = 1;
		return;
	}
	/* Supplementary groups, as /proc says of the calling thread. */
	n = fuse_req_getgroups(req, 64, groups);
	for (i = 0; i < n && i < 64; i++)
		if (groups[i] == sfs.operator_gid)
			who->operator = 1;
}

/* The inode for ino if its object exists now (an attribute file's made
 * up in *file: inode_get). */
static struct sfs_inode *live(fuse_ino_t ino, struct sfs_inode *file,
			      int *err)
{
	struct sfs_inode *e = inode_get(ino, file);

	if (!e) {
		*err = ESTALE;
		return NULL;
	}
	if (tree_valid(&e->obj)) {
		*err = ENOENT;
		return NULL;
	}
	return e;
}

/* live(), or NULL after the error is answered. */
static struct sfs_inode *live_or_reply(fuse_req_t req, fuse_ino_t ino,
					struct sfs_inode *file)
{
	int err = 0;
	struct sfs_inode *e = live(ino, file, &err);

	if (!e)
		fuse_reply_err(req, err);
	return e;
}

/* live_or_reply() for a request that only a directory answers. */
static struct sfs_inode *live_dir_or_reply(fuse_req_t req, fuse_ino_t ino,
					   struct sfs_inode *file)
{
	struct sfs_inode *e = live_or_reply(req, ino, file);

	if (e && !tree_is_dir(&e->obj)) {
		fuse_reply_err(req, ENOTDIR);
		return NULL;
	}
	return e;
}

/*
 * live_or_reply(), and authz's verdict on the caller (*who) doing act
 * on it in *rc: the start of every request that changes something.
 */
static struct sfs_inode *live_authz(fuse_req_t req, fuse_ino_t ino,
				    struct sfs_inode *file, enum authz_act act,
				    struct sfs_caller *who, int *rc)
{
	struct sfs_inode *e = live_or_reply(req, ino, file);

	if (e) {
		caller_of(req, who);
		*rc = authz(who, act, &e->obj, -1);
	}
	return e;
}

/* What o does once open: its attribute record says, or it is text. */
static const struct sfs_fops *fops_of(const struct sfs_obj *o)
{
	const struct sfs_attr *a = tree_attr(o);

	return a && a->fops ? a->fops : &sfs_text_fops;
}

static void fill_stat(const struct sfs_obj *o, fuse_ino_t ino, struct stat *st)
{
	char target[SMARTIO_PATH_MAX];

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = authz_mode(o);
	st->st_nlink = tree_is_dir(o) ? 2 : 1;
	st->st_uid = sfs.uid;
	st->st_gid = sfs.has_operator_group ? sfs.operator_gid : sfs.gid;
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = sfs.start;
	if (tree_is_dir(o)) {	/* so that an empty listing kept is dropped */
		listings_mtime(&st->st_mtim);
		st->st_ctim = st->st_mtim;
	}
	if (S_ISLNK(st->st_mode))
		st->st_size = attr_link(o, target, sizeof(target)) == 0 ?
			      (off_t)strlen(target) : 0;
	else if (S_ISREG(st->st_mode))
		st->st_size = fops_of(o)->size ? fops_of(o)->size(o)
					       : SFS_ATTR_SIZE;
	else
		st->st_size = 4096;
	st->st_blocks = 0;
}

/*
 * How long the kernel may trust a name and its attributes without asking:
 * not at all for objects that come and go with cluster state; for a
 * watched one (a device's directory, its bar links), as long as it likes,
 * as the watcher drops the name the moment it goes, and a write here
 * drops the bar links of its device at once (notify_wrote_in).  `ls -lR`
 * of dev/ revisits each device long after the listing that named it,
 * which with one second cost a LOOKUP or a GETATTR per device, and a bar
 * link with none two LOOKUPs and a GETATTR (lstat, then readlink).
 */
static double timeout_of(const struct sfs_obj *o)
{
	if (tree_dynamic(o))
		return 0.0;
	return tree_watched(o) ? SFS_WATCHED_TIMEOUT : SFS_TIMEOUT;
}

static void reply_entry_for(fuse_req_t req, const struct sfs_inode *parent,
			    const char *name, const struct sfs_obj *o)
{
	struct fuse_entry_param ep;
	struct sfs_ref ref;

	if (inode_ref(parent, name, o, &ref)) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memset(&ep, 0, sizeof(ep));
	ep.ino = ref.ino;
	ep.generation = ref.generation;
	fill_stat(o, ref.ino, &ep.attr);
	ep.attr_timeout = ep.entry_timeout = timeout_of(o);
	if (fuse_reply_entry(req, &ep) != 0)
		inode_forget(ref.ino, 1);	/* the kernel never saw it */
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->want &= ~(unsigned)FUSE_CAP_CACHE_SYMLINKS;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
	/*
	 * Every listing with its entries' attributes, not only its first
	 * reply and those after a stat in it (readdirplus "auto"): the kernel
	 * keeps listings (listings.c), and one kept without its names (a
	 * plain `ls` of dev/ past one reply) made every later stat of them a
	 * LOOKUP: `ls -lR` of dev/ after an `ls` of it asked one per device.
	 */
	conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO;
	/* Requests in memory, which loop.c copies to its workers. */
	conn->want &= ~(unsigned)FUSE_CAP_SPLICE_READ;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	/* A kept empty listing goes when its directory's mtime moves, which
	 * the kernel checks at each listing only with this (listings.c);
	 * libfuse's default, asked for all the same. */
	if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
	sfs.no_opendir = !!(conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	struct sfs_inode *pi;
	struct sfs_obj o;
	int rc;

	SFS_COUNT(lookup);
	pi = live_or_reply(req, parent, &file);
	if (!pi)
		return;
	/* Reading the tree never changes fabric state (holds.c). */
	rc = tree_child(&pi->obj, name, &o);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	reply_entry_for(req, pi, name, &o);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	inode_forget(ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		inode_forget(forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	struct sfs_inode *e;
	struct stat st;

	(void)fi;
	SFS_COUNT(getattr);
	e = live_or_reply(req, ino, &file);
	if (!e)
		return;
	fill_stat(&e->obj, e->ino, &st);
	fuse_reply_attr(req, &st, timeout_of(&e->obj));
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	const struct sfs_attr *d;
	struct sfs_caller who;
	struct sfs_inode *e;
	struct stat st;
	int err = 0;

	(void)attr;
	(void)fi;
	SFS_COUNT(other);
	e = live_or_reply(req, ino, &file);
	if (!e)
		return;
	/* Ownership and modes are the policy itself: never changed. */
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	caller_of(req, &who);
	if (to_set & FUSE_SET_ATTR_SIZE) {
		/* O_TRUNC of a writable attribute is harmless: ignore it. */
		d = tree_attr(&e->obj);
		if (!S_ISREG(tree_mode(&e->obj)) || !d || !(d->mode & 0200)) {
			fuse_reply_err(req, EROFS);
			return;
		}
		err = -authz(&who, AZ_WRITE, &e->obj, -1);
	} else if (to_set) {
		/* Times only (touch): harmless, but not for everyone. */
		err = -authz(&who, AZ_READ, &e->obj, -1);
	}
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fill_stat(&e->obj, e->ino, &st);
	fuse_reply_attr(req, &st, timeout_of(&e->obj));
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	char target[SMARTIO_PATH_MAX];
	struct sfs_inode *e;
	int rc;

	SFS_COUNT(readlink);
	e = live_or_reply(req, ino, &file);
	if (!e)
		return;
	if (!S_ISLNK(tree_mode(&e->obj))) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	rc = attr_link(&e->obj, target, sizeof(target));
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_readlink(req, target);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	struct sfs_caller who;
	struct sfs_inode *pi;
	struct sfs_obj o;
	int rc;

	(void)mode;
	SFS_COUNT(mkdir);
	pi = live_authz(req, parent, &file, AZ_DIR, &who, &rc);
	if (!pi)
		return;
	if (!rc)
		rc = write_mkdir(&pi->obj, name, &o);
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	listings_sync();
	reply_entry_for(req, pi, name, &o);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	struct sfs_caller who;
	struct sfs_inode *pi;
	int rc;

	SFS_COUNT(rmdir);
	pi = live_authz(req, parent, &file, AZ_DIR, &who, &rc);
	if (!pi)
		return;
	if (!rc)
		rc = write_rmdir(&pi->obj, name);
	/* Before the reply: the kernel marks the old inode dead on it, and a
	 * mkdir racing in after must not be answered with that inode. */
	if (!rc)
		inode_retire(pi, name);
	listings_sync();
	fuse_reply_err(req, rc ? -rc : 0);
}

static void op_eperm_name(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent;
	(void)name;
	SFS_COUNT(other);
	fuse_reply_err(req, EPERM);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	(void)mode;
	(void)rdev;
	op_eperm_name(req, parent, name);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	(void)link;
	op_eperm_name(req, parent, name);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	(void)newparent;
	(void)newname;
	(void)flags;
	op_eperm_name(req, parent, name);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	(void)ino;
	op_eperm_name(req, newparent, newname);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	(void)mode;
	(void)fi;
	op_eperm_name(req, parent, name);
}

/*
 * Text attributes: rendered by their show on a read at offset 0 and kept
 * for the reads that continue it; a write is one value for their store.
 */
static void text_open(fuse_req_t req, const struct sfs_obj *o,
		      struct fuse_file_info *fi)
{
	struct attr_file *af = calloc(1, sizeof(*af));

	if (!af) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	af->file.ops = fops_of(o);
	pthread_mutex_init(&af->lock, NULL);
	sb_init(&af->sb);
	fi->direct_io = 1;
	fi->keep_cache = 0;
	sfs_reply_open(req, fi, &af->file);
}

static void text_read(fuse_req_t req, const struct sfs_obj *o, size_t size,
		      off_t off, struct fuse_file_info *fi)
{
	struct attr_file *af = attr_file_of(fi);
	size_t n;
	char *buf;
	int rc;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_mutex_lock(&af->lock);
	if (off == 0 || !af->have) {
		rc = attr_render(o, &af->sb);
		if (rc) {
			af->have = 0;
			pthread_mutex_unlock(&af->lock);
			fuse_reply_err(req, -rc);
			return;
		}
		af->have = 1;
	}
	/* Copy out and unlock before replying: once the reply is sent the
	 * file may be closed and released at once, from another thread. */
	n = (uint64_t)off >= af->sb.len ? 0 : af->sb.len - (size_t)off;
	if (n > size)
		n = size;
	buf = malloc(n ? n : 1);
	if (buf && n)
		memcpy(buf, af->sb.buf + off, n);
	pthread_mutex_unlock(&af->lock);
	if (buf)
		fuse_reply_buf(req, buf, n);
	else
		fuse_reply_err(req, ENOMEM);
	free(buf);
}

static void text_release(struct fuse_file_info *fi)
{
	struct attr_file *af = attr_file_of(fi);

	sb_free(&af->sb);
	pthread_mutex_destroy(&af->lock);
	free(af);
}

const struct sfs_fops sfs_text_fops = {
	.open = text_open,
	.read = text_read,
	.write = write_attr,
	.release = text_release,
};

/* Config space: raw bytes at any offset, as PCI sysfs shows it. */
static void config_read(fuse_req_t req, const struct sfs_obj *o, size_t size,
			off_t off, struct fuse_file_info *fi)
{
	struct sfs_caller who;
	char *buf;
	int rc;

	(void)fi;
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* Past the standard header only for the privileged, as in
	 * sysfs: reads there can have side effects on a device. */
	caller_of(req, &who);
	if (authz(&who, AZ_CONFIG_FULL, o, -1))
		size = off >= SFS_CONFIG_PUBLIC ? 0 :
		       size > (size_t)(SFS_CONFIG_PUBLIC - off) ?
		       (size_t)(SFS_CONFIG_PUBLIC - off) : size;
	if (size > 65536)
		size = 65536;
	buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rc = attr_config_read(o, buf, size, off);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_buf(req, buf, (size_t)rc);
	free(buf);
}

static int config_write(const struct sfs_obj *o, const char *buf, size_t size,
			off_t off, const struct sfs_caller *who)
{
	int rc;

	(void)who;
	if (off < 0 || size > SFS_WRITE_MAX || (uint64_t)off > UINT32_MAX)
		return -EINVAL;
	if (!size)
		return 0;
	rc = smartio_config_write(sfs.h, o->dev, sfs.self, (uint32_t)off, buf,
				  (uint32_t)size);
	return rc < 0 ? rc : (int)size;
}

static off_t config_size(const struct sfs_obj *o)
{
	const struct sfs_dev *d = names_devinfo(o->dev);

	return d ? (off_t)d->info.config_size : 0;
}

const struct sfs_fops sfs_config_fops = {
	.open = text_open,	/* an attr_file, its text unused */
	.read = config_read,
	.write = config_write,
	.release = text_release,
	.size = config_size,
};

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	const struct sfs_attr *d;
	struct sfs_caller who;
	struct sfs_inode *e;
	int err = 0, acc = fi->flags & O_ACCMODE;

	SFS_COUNT(open);
	e = live_or_reply(req, ino, &file);
	if (!e)
		return;
	if (tree_is_dir(&e->obj)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	d = tree_attr(&e->obj);
	if (!d || !S_ISREG(tree_mode(&e->obj))) {
		fuse_reply_err(req, ELOOP);
		return;
	}
	caller_of(req, &who);
	if (acc != O_RDONLY) {
		if (!(d->mode & 0200)) {
			fuse_reply_err(req, EROFS);
			return;
		}
		err = -authz(&who, AZ_WRITE, &e->obj, -1);
	}
	if (!err && acc != O_WRONLY)
		err = -authz(&who, AZ_READ, &e->obj, -1);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fops_of(&e->obj)->open(req, &e->obj, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	const struct sfs_file *f = sfs_file_of(fi);
	struct sfs_inode *e;

	SFS_COUNT(read);
	if (f->ops->outlives) {
		f->ops->read(req, NULL, size, off, fi);
		return;
	}
	e = live_or_reply(req, ino, &file);
	if (e)
		f->ops->read(req, &e->obj, size, off, fi);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	struct sfs_caller who;
	struct sfs_inode *e;
	int rc;

	SFS_COUNT(write);
	e = live_authz(req, ino, &file, AZ_WRITE, &who, &rc);
	if (!e)
		return;
	if (!rc && size > SFS_WRITE_MAX)
		rc = -EINVAL;
	if (!rc && !sfs_file_of(fi)->ops->write)
		rc = -EROFS;
	if (!rc)
		rc = sfs_file_of(fi)->ops->write(&e->obj, buf, size, off, &who);
	/* What the write changed is listed so at once (listings.c). */
	listings_sync();
	if (rc >= 0)
		notify_wrote_in(e->parent);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_write(req, (size_t)rc);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)ino;
	sfs_file_release(fi);	/* may detach a segment (holds.c) */
	listings_sync();
	fuse_reply_err(req, 0);
}

static void dir_free(struct dir_file *df)
{
	size_t i;

	for (i = 0; i < df->n; i++)
		free(df->ents[i].name);
	free(df->ents);
	df->ents = NULL;
	df->n = df->cap = 0;
	df->oom = 0;
}

static int dir_add(struct dir_file *df, const char *name, mode_t mode,
		   fuse_ino_t ino, const struct sfs_obj *o)
{
	struct dir_ent *v;

	if (df->n == df->cap) {
		size_t cap = df->cap ? df->cap * 2 : 32;

		v = realloc(df->ents, cap * sizeof(*v));
		if (!v)
			goto oom;
		df->ents = v;
		df->cap = cap;
	}
	df->ents[df->n].name = strdup(name);
	if (!df->ents[df->n].name)
		goto oom;
	df->ents[df->n].mode = mode;
	df->ents[df->n].ino = ino;
	df->ents[df->n].obj = *o;
	df->n++;
	return 0;
oom:
	df->oom = 1;
	return -ENOMEM;
}

static int dir_fill(void *ctx, const char *name, const struct sfs_obj *o)
{
	struct dir_file *df = ctx;

	return dir_add(df, name, tree_mode(o), inode_peek(df->inode, name, o),
		       o);
}

/*
 * A listing names no "." and ".." (they exist all the same: stat, cd ..),
 * as POSIX allows: so an empty directory lists in one READDIRPLUS, the
 * empty reply that ends it, instead of two (the dots, then the end).  A
 * device's irq/ and peers/ are empty but on their own node, and `ls -lR`
 * of dev/ at 20x1024 made 86k round trips instead of 127k: on an idle
 * machine each wakes the other CPU twice (ls's and the daemon's), which
 * cost that walk 2 s of 10 s of CPU (ls and daemon pinned to different
 * CPUs, load 7).
 */
static int dir_snapshot(struct dir_file *df)
{
	const struct sfs_inode *e = df->inode;
	int rc;

	dir_free(df);
	rc = tree_list(&e->obj, dir_fill, df);
	return rc ? rc : df->oom ? -ENOMEM : 0;
}

/* A kept listing whose last reference went. */
static void dir_destroy(struct dir_file *df)
{
	dir_free(df);
	pthread_mutex_destroy(&df->lock);
	free(df);
}

static void dir_unref(struct dir_file *df)
{
	unsigned left;

	pthread_mutex_lock(&dirs.lock);
	left = --df->refs;
	pthread_mutex_unlock(&dirs.lock);
	if (!left)
		dir_destroy(df);
}

/* Takes slot i's listing out of the slots (dirs.lock held): the caller
 * drops the slot's reference. */
static struct dir_file *dir_unslot(unsigned i)
{
	struct dir_file *df = dirs.slot[i];

	memmove(&dirs.slot[i], &dirs.slot[i + 1],
		(DIR_SLOTS - 1 - i) * sizeof(dirs.slot[0]));
	dirs.slot[DIR_SLOTS - 1] = NULL;
	return df;
}

static void dir_retire(struct dir_file *df)
{
	if (!df)
		return;
	listings_done(df->ino);
	dir_unref(df);
}

/*
 * The listing of directory e that a READDIR(PLUS) at off continues, with a
 * reference: a fresh one at offset 0 (opendir or rewinddir) or when none is
 * kept, in slot 0 either way; NULL when out of memory.
 */
static struct dir_file *dir_get(const struct sfs_inode *e, off_t off)
{
	struct dir_file *df = NULL, *old = NULL;
	unsigned i;

	pthread_mutex_lock(&dirs.lock);
	for (i = 0; i < DIR_SLOTS && dirs.slot[i]; i++)
		if (dirs.slot[i]->ino == e->ino)
			break;
	if (i < DIR_SLOTS && dirs.slot[i] && off) {
		df = dir_unslot(i);
	} else {
		if (i < DIR_SLOTS && dirs.slot[i])
			old = dir_unslot(i);
		else if (dirs.slot[DIR_SLOTS - 1])
			old = dir_unslot(DIR_SLOTS - 1);
		df = calloc(1, sizeof(*df));
		if (!df || listings_start(e->ino)) {
			free(df);
			pthread_mutex_unlock(&dirs.lock);
			dir_retire(old);
			return NULL;
		}
		pthread_mutex_init(&df->lock, NULL);
		df->ino = e->ino;
		df->refs = 1;	/* the slot's */
	}
	memmove(&dirs.slot[1], &dirs.slot[0],
		(DIR_SLOTS - 1) * sizeof(dirs.slot[0]));
	dirs.slot[0] = df;
	df->refs++;
	pthread_mutex_unlock(&dirs.lock);
	dir_retire(old);
	return df;
}

void ops_free(void)
{
	unsigned i;

	pthread_mutex_lock(&dirs.lock);
	for (i = 0; i < DIR_SLOTS; i++) {
		if (dirs.slot[i] && !--dirs.slot[i]->refs)
			dir_destroy(dirs.slot[i]);
		dirs.slot[i] = NULL;
	}
	pthread_mutex_unlock(&dirs.lock);
}

/* A reply with no entries ends the listing: its slot is let go. */
static void dir_put(struct dir_file *df, int ended)
{
	struct dir_file *gone = NULL;
	unsigned i;

	if (ended) {
		pthread_mutex_lock(&dirs.lock);
		for (i = 0; i < DIR_SLOTS && dirs.slot[i]; i++)
			if (dirs.slot[i] == df) {
				gone = dir_unslot(i);
				break;
			}
		pthread_mutex_unlock(&dirs.lock);
		dir_retire(gone);
	}
	dir_unref(df);
}

/* Listings are read without a handle: the kernel then sends no OPENDIR
 * and no RELEASEDIR and keeps what it read (listings.c).  A kernel that
 * cannot do without opens directories with no handle and keeps nothing. */
static void op_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	struct sfs_inode *e;

	SFS_COUNT(readdir);
	if (sfs.no_opendir) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	e = live_dir_or_reply(req, ino, &file);
	if (!e)
		return;
	fi->fh = 0;
	fuse_reply_open(req, fi);
}

/*
 * One entry of a READDIRPLUS reply: the entry with its attributes, so that
 * `ls -l` needs no LOOKUP per name.  Each entry counts as a lookup; *ref
 * is the reference it took, to undo if the entry does not fit.
 */
static size_t add_plus(fuse_req_t req, struct dir_file *df, size_t i,
		       char *buf, size_t room, fuse_ino_t *ref)
{
	const struct dir_ent *d = &df->ents[i];
	struct fuse_entry_param ep;
	struct sfs_ref r;

	memset(&ep, 0, sizeof(ep));
	*ref = 0;
	if (inode_ref(df->inode, d->name, &d->obj, &r))
		return (size_t)-1;
	*ref = r.ino;
	ep.ino = r.ino;
	ep.generation = r.generation;
	fill_stat(&d->obj, ep.ino, &ep.attr);
	ep.attr_timeout = ep.entry_timeout = timeout_of(&d->obj);
	return fuse_add_direntry_plus(req, buf, room, d->name, &ep,
				      (off_t)(i + 1));
}

/*
 * How many READDIRPLUS entries one reply of size bytes can carry, at most
 * left: the kernel asks a page at a time, so sizing the references to undo
 * by what is left of a directory of 122880 devices would zero a megabyte
 * per reply of 26 entries.  (libfuse answers an entry's size, here the
 * smallest, when given no buffer.)
 */
static size_t plus_room(fuse_req_t req, size_t size, size_t left)
{
	size_t least = fuse_add_direntry_plus(req, NULL, 0, "", NULL, 0);
	size_t room = least ? size / least + 1 : left;

	return room < left ? room : left;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       int plus)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	struct dir_file *df;
	struct sfs_inode *e;
	fuse_ino_t *refs = NULL;
	size_t pos = 0, i, nrefs = 0, room = 0;
	char *buf;
	int rc, ended;

	SFS_COUNT(readdir);
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	e = live_dir_or_reply(req, ino, &file);
	if (!e)
		return;
	df = dir_get(e, off);
	if (!df) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&df->lock);
	df->inode = e;
	if (!df->ents) {
		rc = dir_snapshot(df);
		if (rc) {
			pthread_mutex_unlock(&df->lock);
			dir_put(df, 1);
			fuse_reply_err(req, -rc);
			return;
		}
	}
	buf = malloc(size ? size : 1);
	if (plus && off < (off_t)df->n) {
		room = plus_room(req, size, df->n - (size_t)off);
		refs = calloc(room, sizeof(*refs));
	}
	if (!buf || (plus && off < (off_t)df->n && !refs)) {
		pthread_mutex_unlock(&df->lock);
		dir_put(df, 0);
		free(buf);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (i = (size_t)off; i < df->n; i++) {
		fuse_ino_t ref = 0;
		struct stat st;
		size_t len;

		if (plus) {
			if (nrefs == room)	/* cannot happen: see plus_room */
				break;
			len = add_plus(req, df, i, buf + pos, size - pos, &ref);
		} else {
			memset(&st, 0, sizeof(st));
			st.st_ino = df->ents[i].ino;
			st.st_mode = df->ents[i].mode;
			len = fuse_add_direntry(req, buf + pos, size - pos,
						df->ents[i].name, &st,
						(off_t)(i + 1));
		}
		if (len > size - pos) {
			if (ref)	/* not sent: the kernel never saw it */
				inode_forget(ref, 1);
			break;
		}
		if (ref)
			refs[nrefs++] = ref;
		pos += len;
	}
	ended = (size_t)off >= df->n;
	pthread_mutex_unlock(&df->lock);
	dir_put(df, ended);
	if (fuse_reply_buf(req, buf, pos) != 0)
		while (nrefs)
			inode_forget(refs[--nrefs], 1);
	free(refs);
	free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, 0);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, 1);
}

/* Only where op_opendir opened (no handle to let go). */
static void op_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	(void)ino;
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	struct sfs_stats *s = &sfs.stats;
	struct sbuf sb;

	/* Without --stats there are no extended attributes at all: ENOSYS
	 * makes the kernel stop asking, which spares `ls -l` three requests
	 * per file. */
	if (!sfs.xattr_stats) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	if (ino != FUSE_ROOT_ID || strcmp(name, STATS_XATTR)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	/* Debugging aid for the tests: operation counters of this daemon. */
	sb_init(&sb);
	sb_printf(&sb, "lookup %" PRIu64 "\ngetattr %" PRIu64
		  "\nreadlink %" PRIu64 "\nopen %" PRIu64 "\nread %" PRIu64
		  "\nwrite %" PRIu64 "\nreaddir %" PRIu64 "\nmkdir %" PRIu64
		  "\nrmdir %" PRIu64 "\nother %" PRIu64 "\ninodes %zu\n",
		  __atomic_load_n(&s->lookup, __ATOMIC_RELAXED),
		  __atomic_load_n(&s->getattr, __ATOMIC_RELAXED),
		  __atomic_load_n(&s->readlink, __ATOMIC_RELAXED),
		  __atomic_load_n(&s->open, __ATOMIC_RELAXED),
		  __atomic_load_n(&s->read, __ATOMIC_RELAXED),
		  __atomic_load_n(&s->write, __ATOMIC_RELAXED),
		  __atomic_load_n(&s->readdir, __ATOMIC_RELAXED),
		  __atomic_load_n(&s->mkdir, __ATOMIC_RELAXED),
		  __atomic_load_n(&s->rmdir, __ATOMIC_RELAXED),
		  __atomic_load_n(&s->other, __ATOMIC_RELAXED), inode_count());
	if (sb.oom)
		fuse_reply_err(req, ENOMEM);
	else if (size == 0)
		fuse_reply_xattr(req, sb.len);
	else if (size < sb.len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, sb.buf, sb.len);
	sb_free(&sb);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	(void)ino;
	if (!sfs.xattr_stats)
		fuse_reply_err(req, ENOSYS);
	else if (size == 0)
		fuse_reply_xattr(req, 0);
	else
		fuse_reply_buf(req, NULL, 0);
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	(void)ino;
	(void)name;
	(void)value;
	(void)size;
	(void)flags;
	fuse_reply_err(req, ENOTSUP);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino;
	(void)name;
	fuse_reply_err(req, ENOTSUP);
}

/* access(2) and friends answer what open, mkdir and write would. */
static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct sfs_inode file;	/* an attribute file's (inode_get) */
	struct sfs_caller who;
	struct sfs_inode *e;
	int err = 0, dir;

	SFS_COUNT(other);
	e = live_or_reply(req, ino, &file);
	if (!e)
		return;
	caller_of(req, &who);
	dir = tree_is_dir(&e->obj);
	if (mask & R_OK)
		err = -authz(&who, AZ_READ, &e->obj, -1);
	if (!err && (mask & W_OK))
		err = -authz(&who, dir ? AZ_DIR : AZ_WRITE, &e->obj, -1);
	if (!err && (mask & X_OK) && !dir)
		err = EACCES;
	fuse_reply_err(req, err);
}

static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	const struct sfs_file *f = sfs_file_of(fi);

	(void)ino;
	if (f && f->ops->poll) {
		f->ops->poll(req, fi, ph);
		return;
	}
	if (ph)
		fuse_pollhandle_destroy(ph);
	fuse_reply_poll(req, POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM);
}

const struct fuse_lowlevel_ops sfs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_eperm_name,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.releasedir = op_releasedir,
	.statfs = op_statfs,
	.setxattr = op_setxattr,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
	.create = op_create,
	.poll = op_poll,
	.access = op_access,
};
