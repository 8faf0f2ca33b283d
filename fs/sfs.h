/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * smartiofs: the /smartio namespace (smartio(7)) served over FUSE.
 *
 * Shared declarations of the daemon's parts:
 *   main.c    options, startup, daemonizing, the session loop
 *   names.c   the static cluster description (node and device names, hash)
 *   tree.c    the path model as tables: object kinds, directory entries
 *   inode.c   the inode table: stable inode numbers derived from paths
 *   attrs.c   the attribute tables (name, mode, show, store); link targets
 *   writes.c  strict parsing of writes; the mkdir and rmdir records
 *   events.c  the events file: cursors, blocked reads, poll
 *   irq.c     dev/<dev>/irq/<vec>: UIO-style interrupt files
 *   waitq.c   parked reads and poll handles of events and irq files
 *   notify.c  the watcher thread: cache invalidation, waking readers
 *   holds.c   which processes keep a remote segment attached
 *   authz.c   who may do what, for which node: every permission decision
 *   ops.c     the FUSE low-level operations gluing the parts together
 *   files.c   the open files, so that those never released are freed at exit
 *   listings.c the directory listings the kernel keeps, dropped on changes
 *   loop.c    the session loop: namespace reads inline, the rest in workers
 *   sbuf.c    a small growable text buffer
 */
#ifndef SMARTIOFS_SFS_H
#define SMARTIOFS_SFS_H

#define FUSE_USE_VERSION 35

#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "smartio.h"

#define SFS_WRITE_MAX 4096	/* largest attribute write accepted */
#define SFS_ATTR_SIZE 4096	/* st_size of attribute files, as in sysfs */
#define SFS_TIMEOUT 1.0		/* entry and attr timeout of static objects */
/*
 * Entry and attr timeout of watched, not dynamic objects (a device's
 * directory, its bar links): the watcher drops their names the moment they
 * go, a write through this mount drops its device's bar links at once
 * (notify_wrote_in), and their attributes are fixed while they exist, so
 * the kernel may keep them as long as it likes; a day rather than forever
 * bounds what a lost notification would cost.
 */
#define SFS_WATCHED_TIMEOUT 86400.0

/* --- growable text buffer (sbuf.c) ------------------------------------ */
struct sbuf {
	char *buf;
	size_t len, cap;
	int oom;
};

void sb_init(struct sbuf *sb);
void sb_free(struct sbuf *sb);
void sb_reset(struct sbuf *sb);
void sb_putn(struct sbuf *sb, const void *p, size_t n);
void sb_puts(struct sbuf *sb, const char *s);
void sb_printf(struct sbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* --- static cluster description (names.c) ------------------------------ */
struct sfs_dev {
	struct smartio_device_info info;	/* static fields only are used */
	/* An SR-IOV VF, which comes and goes with its PF's sriov_numvfs:
	 * its directory is looked up afresh each time (tree.c). */
	int vf;
};

struct sfs_nodeinfo {
	char name[SMARTIO_NAME_MAX];
	unsigned nadapters;
	char (*adapters)[SMARTIO_NAME_MAX];	/* adapter names */
	unsigned *devs;		/* devices installed in this node */
	unsigned ndevs;
};

int names_load(struct smartio *h);
/* Names slots whose device appeared since (smartio.ko over an NTB). */
int names_refresh(void);
void names_free(void);
int names_node(const char *name);	/* index or -ENOENT */
int names_dev(const char *name);	/* index or -ENXIO */
int names_adapter(unsigned node, const char *name);	/* index or -ENOENT */
unsigned names_nnodes(void);
unsigned names_ndevs(void);
const struct sfs_nodeinfo *names_nodeinfo(unsigned node);
const struct sfs_dev *names_devinfo(unsigned dev);

/* --- the daemon's global state (main.c) -------------------------------- */
struct sfs_stats {
	uint64_t lookup, getattr, readlink, open, read, write, readdir;
	uint64_t mkdir, rmdir, other;
};

struct sfs {
	struct smartio *h;
	struct fuse_session *se;
	unsigned self;
	uid_t uid;
	gid_t gid;
	struct timespec start;
	struct sfs_stats stats;
	int xattr_stats;	/* --stats: answer the user.smartiofs.stats xattr */
	int manage;		/* serves every node (no --node): acts for all */
	int has_operator_group;	/* operator_group= given */
	int no_opendir;		/* the kernel lists without OPENDIR (ops.c) */
	gid_t operator_gid;
};

extern struct sfs sfs;

#define SFS_COUNT(field) __atomic_add_fetch(&sfs.stats.field, 1, __ATOMIC_RELAXED)

/* --- the path model (tree.c) -------------------------------------------- */
enum sfs_kind {
	K_ROOT, K_SELF, K_EVENTS,
	K_NODES, K_NODE, K_NODE_ATTR,
	K_ADAPTERS, K_ADAPTER, K_ADAPTER_ATTR,
	K_NODE_DEVICES, K_NODE_DEVLINK, K_BORROWED, K_BORROWED_LINK,
	K_SEGMENTS, K_SEG, K_SEG_ATTR, K_SEG_MEM,
	K_SEG_DMA, K_SEG_DMA_DEV, K_SEG_DMA_ATTR,
	K_DEVS, K_DEV, K_DEV_ATTR, K_DEV_BAR, K_DEV_IRQ, K_DEV_PEERS,
	K_SEGIDX, K_SEGIDX_LINK,
	K_DEV_IRQ_VEC,		/* irq/<vec>: the vector number is in vec */
	K_DEV_PEER,		/* peers/<peer>: the peer's name is in seg */
	K_DEV_PEER_BAR,		/* peers/<peer>/bar<N> */
	/* multicast/<group>/...: the group's name is in seg */
	K_MCASTS, K_MCAST, K_MCAST_ATTR, K_MCAST_DMA, K_MCAST_DMA_DEV,
	K_MCAST_DMA_ATTR,
};

/*
 * Attribute ids: where each record stands in its table (attrs.c), which is
 * also the order of the listing; named for the code that refers to one
 * (authz.c).  An attribute added at the end of a table needs none.
 */
enum { NA_ID, NA_STATE };
enum { AA_LINK, AA_PEERS, AA_LUTS, AA_REQUESTERS, AA_WINDOW, AA_REQUESTERS_IN,
       AA_HOPS, AA_SWITCH, AA_SWITCH_REQUESTERS, AA_SWITCH_REQUESTERS_IN,
       AA_SPEED };
enum { SA_SIZE, SA_AVAILABLE, SA_ATTACHED, SA_ATTACH, SA_DETACH };
enum { MA_IOADDR };
enum { MCA_SWITCH, MCA_SIZE, MCA_MEMBERS, MCA_JOIN, MCA_LEAVE, MCA_WRITES,
       MCA_DELIVERED };
enum {
	DA_FDID, DA_NODE, DA_BDF, DA_VENDOR, DA_DEVICE, DA_CLASS,
	DA_SUBSYS_VENDOR, DA_SUBSYS_DEVICE, DA_REVISION, DA_CONFIG,
	DA_RESOURCE, DA_LEND, DA_BORROW, DA_RETURN, DA_RECLAIM, DA_MODE,
	DA_STATE, DA_DMA_WINDOW, DA_MSI, DA_STATS, DA_SRIOV_TOTALVFS,
	DA_SRIOV_NUMVFS, DA_SRIOV_PF
};

struct sfs_obj {
	uint8_t kind;		/* enum sfs_kind */
	uint8_t attr;		/* attribute id in its table */
	uint8_t bar;		/* K_DEV_BAR */
	uint8_t pad;
	uint16_t node;		/* node; the owner for segment objects */
	uint16_t adapter;
	uint32_t dev;		/* device (K_DEV*, K_*_LINK, K_SEG_DMA_DEV*) */
	uint16_t vec;		/* K_DEV_IRQ_VEC: the vector, up to SFS_IRQ_MAX */
	/*
	 * Segment or peer name, held in the object: a name shared by the
	 * objects that carry it would have to live as long as the last of
	 * them, and a peer that creates and destroys segments would grow a
	 * table of them forever (issue 12, defect 11).
	 */
	char seg[SMARTIO_NAME_MAX];
};

/* Names o after segment or peer s: 0, or -ENAMETOOLONG (o unchanged). */
static inline int sfs_obj_name(struct sfs_obj *o, const char *s)
{
	size_t len = strlen(s);

	if (len >= sizeof(o->seg))
		return -ENAMETOOLONG;
	memcpy(o->seg, s, len + 1);
	return 0;
}

/*
 * The namespace as data.  Each directory kind has a table: first its
 * attribute files (struct sfs_attr, attrs.c, one record per file, the way
 * sysfs DEVICE_ATTR_RW declares one), then its other entries (struct
 * sfs_entry, tree.c): named subdirectories, links and special files, and
 * families of names that follow cluster state (nodes, devices, BARs...).
 * Lookup and readdir walk these tables; adding an attribute adds one
 * record and its show or store function.
 */
struct sfs_caller;

/* What an attribute group loads once for a show (one library call). */
union sfs_info {
	struct smartio_node_info node;
	struct smartio_adapter_info adapter;
	struct smartio_segment_info seg;
	struct smartio_device_info dev;
	struct smartio_mcast_info mcast;
	uint64_t addr;
};

/*
 * For which node a write (or a mkdir/rmdir in a directory) speaks, and so
 * which mounts may make it (authz.c): its record says, beside the rest of
 * what the file is.
 */
enum sfs_scope {
	SC_NONE,	/* nothing to write: refused (deny by default) */
	SC_CORE,	/* as this mount's node; the core checks the rest */
	SC_LENDER,	/* the device's lender's */
	SC_OWNER,	/* the object's node's (a segment's owner, an adapter's) */
	SC_NAMED,	/* the node the value names (none named: any) */
	SC_NAMED_OR_OWNER,	/* that, or the segment's owner's */
	SC_CLUSTER,	/* the management view's alone */
};

struct sfs_attr {
	const char *name;
	mode_t mode;		/* permission bits: 0444, 0644 or 0200 */
	/* The file's text from what the group loaded; NULL: not readable. */
	int (*show)(const struct sfs_obj *o, const union sfs_info *in,
		    struct sbuf *sb);
	/* One whole value written at offset 0 (writes.c checked the frame):
	 * 0 or -errno; NULL: not a text value (read-only, or config). */
	int (*store)(const struct sfs_obj *o, const char *buf, size_t size,
		     const struct sfs_caller *who);
	/* Whether it exists now; NULL: while its directory does. */
	int (*present)(const struct sfs_obj *o);
	/* A file with its own operations; NULL: sfs_text_fops. */
	const struct sfs_fops *fops;
	uint8_t scope;		/* enum sfs_scope of a writable file */
};

/* The files of one attribute kind (K_DEV_ATTR...) or of one special file
 * kind (K_EVENTS, K_DEV_IRQ_VEC, K_DEV_PEER_BAR: count 1, any o->attr). */
struct sfs_attr_group {
	int (*load)(const struct sfs_obj *o, union sfs_info *in);
	const struct sfs_attr *attrs;
	unsigned count;
};

/*
 * A directory whose entries users make and remove (configfs style): for
 * whom that speaks, and what mkdir and rmdir of `name` in dir do (writes.c)
 * once authz.c let them: 0 or -errno, with the library's errno as it is.
 */
struct sfs_dir_ops {
	uint8_t scope;		/* enum sfs_scope */
	int (*mkdir)(const struct sfs_obj *dir, const char *name);
	int (*rmdir)(const struct sfs_obj *dir, const char *name);
};

extern const struct sfs_dir_ops segments_dir_ops, segdma_dir_ops,
	peers_dir_ops, mcasts_dir_ops, mcastdma_dir_ops;

/* sysfs-style declarations: <grp>_<name>_show and _store do the work. */
#define SFS_ATTR_RO(grp, nm) \
	{ #nm, 0444, grp##_##nm##_show, NULL, NULL, NULL, SC_NONE }
#define SFS_ATTR_RW(grp, nm) \
	{ #nm, 0644, grp##_##nm##_show, grp##_##nm##_store, NULL, NULL, SC_NONE }
#define SFS_ATTR_WO(grp, nm) \
	{ #nm, 0200, NULL, grp##_##nm##_store, NULL, NULL, SC_NONE }
/* Writable ones say for whom a write speaks (enum sfs_scope). */
#define SFS_ATTR_RW_FOR(grp, nm, sc) \
	{ #nm, 0644, grp##_##nm##_show, grp##_##nm##_store, NULL, NULL, sc }
#define SFS_ATTR_WO_FOR(grp, nm, sc) \
	{ #nm, 0200, NULL, grp##_##nm##_store, NULL, NULL, sc }

extern const struct sfs_attr_group node_attr_group, adapter_attr_group,
	seg_attr_group, segdma_attr_group, dev_attr_group, peer_bar_group,
	events_group, irq_group, mcast_attr_group, mcastdma_attr_group;

/* The multicast group named o->seg: its index, or -ENOENT (tree.c). */
int tree_mcast(const struct sfs_obj *o);
/* "bar<N>" with N a single digit below SMARTIO_MAX_BARS: N, or -1. */
int tree_bar_name(const char *name);

/* The record of an attribute-file object (NULL for other objects). */
const struct sfs_attr *tree_attr(const struct sfs_obj *o);
/* Its group (NULL for objects that are not files). */
const struct sfs_attr_group *tree_attr_group(const struct sfs_obj *o);
/* Child `name` of directory `dir` as it exists now: 0, -ENOENT, -ENOTDIR. */
int tree_child(const struct sfs_obj *dir, const char *name,
	       struct sfs_obj *out);
/* 0 when the object exists now, else -ENOENT. */
int tree_valid(const struct sfs_obj *o);
/* Objects whose existence follows cluster state are never cached. */
int tree_dynamic(const struct sfs_obj *o);
/* Those, and every device's directory: the watcher invalidates them
 * when gone. */
int tree_watched(const struct sfs_obj *o);
/* Type and permission bits. */
mode_t tree_mode(const struct sfs_obj *o);
/* For whom a write to o, or a mkdir/rmdir in it, speaks (its record's). */
enum sfs_scope tree_scope(const struct sfs_obj *o);
/* Directory o's mkdir and rmdir (NULL: none can be made there). */
const struct sfs_dir_ops *tree_dir_ops(const struct sfs_obj *o);
int tree_is_dir(const struct sfs_obj *o);
/* Attribute file i of directory dir as tree_child makes it (its table's
 * record i, whether or not present() says it exists now): 0, or -ENOENT
 * when dir has no record i or the file is watched. */
int tree_attr_file(const struct sfs_obj *dir, unsigned i,
		   struct sfs_obj *out);
/* Whether o is one of dir's attribute files that tree_attr_file makes
 * again from dir and o->attr alone (inode.c keeps no entry for those). */
int tree_is_attr_file(const struct sfs_obj *dir, const struct sfs_obj *o);
/* Calls fill for every entry of dir (no "." or ".."). */
typedef int (*tree_fill_fn)(void *ctx, const char *name,
			    const struct sfs_obj *o);
int tree_list(const struct sfs_obj *dir, tree_fill_fn fill, void *ctx);
/* Prints every named entry the tables define, one path a line ("dev/<dev>/
 * lend"; directories end in '/'): smartiofs --list-attributes. */
void tree_print(FILE *f);
/* Segment lookup by owner and name; 0 and info filled, or -ENOENT. */
int tree_segment(unsigned owner, const char *name,
		 struct smartio_segment_info *out);

/* --- inode table (inode.c) ---------------------------------------------- */
struct sfs_inode {
	fuse_ino_t ino;
	uint64_t nlookup;
	fuse_ino_t parent;
	uint64_t phash;
	struct sfs_inode *next_ino, *next_path;
	uint32_t generation;
	uint32_t dyn_slot;	/* index in the dynamic list (dynamic only) */
	uint8_t retired;	/* removed: out of the path index (inode.c) */
	struct sfs_obj obj;
	char name[];		/* last component ("" for the root); the
				 * path is the parents' names, hashed in
				 * phash, never stored (memory per file) */
};

struct sfs_dynent {
	fuse_ino_t parent, ino;
	struct sfs_obj obj;
	char name[SMARTIO_NAME_MAX * 2 + 8];
};

int inode_init(void);
void inode_fini(void);
/* What the kernel is told of a name it looked up. */
struct sfs_ref {
	fuse_ino_t ino;
	uint32_t generation;
};

/* The inode for ino, or NULL.  A directory's entry (or any with a table
 * entry) is valid while the kernel holds a reference; an attribute file
 * has none and is made up in *file (ino, parent, generation and obj set),
 * valid as long as *file is. */
struct sfs_inode *inode_get(fuse_ino_t ino, struct sfs_inode *file);
/* Finds or adds parent/name, counts one lookup and fills *ref: 0, or
 * -ENOMEM. */
int inode_ref(const struct sfs_inode *parent, const char *name,
	      const struct sfs_obj *o, struct sfs_ref *ref);
void inode_forget(fuse_ino_t ino, uint64_t n);
/* parent/name was removed: the next lookup of that name makes a new entry
 * (number, generation) while this one waits for the kernel's forget. */
void inode_retire(const struct sfs_inode *parent, const char *name);
/* Entries in the table (the root included). */
size_t inode_count(void);
/* The inode number readdir reports for parent/name, which is o. */
fuse_ino_t inode_peek(const struct sfs_inode *parent, const char *name,
		      const struct sfs_obj *o);
/* Copies the live watched inodes (tree_watched), all of them or those in
 * directory under only; returns how many (caller frees *out). */
size_t inode_collect_dynamic(fuse_ino_t under, struct sfs_dynent **out);

/* --- attribute contents (attrs.c) --------------------------------------- */
int attr_render(const struct sfs_obj *o, struct sbuf *out);
/* Symbolic link target.  Never changes state: the mem of a remote segment
 * this node has not attached is -ENOLINK. */
int attr_link(const struct sfs_obj *o, char *buf, size_t len);
/* Config space read at off, up to size bytes: bytes read or -errno. */
int attr_config_read(const struct sfs_obj *o, char *buf, size_t size,
		     off_t off);

/* --- writes and directory actions (writes.c) --------------------------- */
/* Who asks: the FUSE request's credentials. */
struct sfs_caller {
	uid_t uid;
	gid_t gid;
	pid_t pid;		/* thread id; 0 if outside the daemon's pid ns */
	int operator;		/* member of the operator group */
};

/* --- authorization (authz.c) -------------------------------------------- */
#define SFS_CONFIG_PUBLIC 64	/* config bytes everyone may read (sysfs) */

enum authz_act {
	AZ_READ,		/* read a file or list a directory */
	AZ_WRITE,		/* write an attribute */
	AZ_DIR,			/* mkdir or rmdir in directory o */
	AZ_CONFIG_FULL,		/* read config space past SFS_CONFIG_PUBLIC */
};

/* 0, -EACCES (the caller may not) or -EPERM (not for that node from this
 * mount).  node: the node a write names, once parsed; -1 before. */
int authz(const struct sfs_caller *who, enum authz_act act,
	  const struct sfs_obj *o, int node);
/* Type and permission bits as stat() shows them and authz() applies. */
mode_t authz_mode(const struct sfs_obj *o);

/* Applies a write to a text attribute; bytes accepted or -errno. */
int write_attr(const struct sfs_obj *o, const char *buf, size_t size,
	       off_t off, const struct sfs_caller *who);
int write_mkdir(const struct sfs_obj *dir, const char *name,
		struct sfs_obj *out);
int write_rmdir(const struct sfs_obj *dir, const char *name);
/* Strict parsers, exposed for clarity and reuse. */
int parse_token(const char *buf, size_t size, char *out, size_t outlen);
int parse_size(const char *buf, size_t size, uint64_t *out);
int parse_count(const char *buf, size_t size, uint64_t *out);
int parse_node(const char *buf, size_t size, unsigned *node);
int parse_node_for(const struct sfs_obj *o, const char *buf, size_t size,
		   const struct sfs_caller *who, unsigned *node);
/* Index of the one keyword of kw[0..nkw) the value is, or -EINVAL. */
int parse_keyword(const char *buf, size_t size, const char *const *kw,
		  int nkw);
int parse_borrow(const char *buf, size_t size, unsigned *node,
		 uint64_t *window);
int parse_lend(const char *buf, size_t size, int *policy, uint64_t *mask);

/* --- open files (ops.c, events.c, irq.c) ------------------------------- */
/* What a file does once open, declared beside it (ntb_tool's
 * TOOL_FOPS_RDWR); every open file starts with a pointer to these. */
struct sfs_fops {
	/* Replies to the open (authz done) with fi->fh an sfs_file. */
	void (*open)(fuse_req_t req, const struct sfs_obj *o,
		     struct fuse_file_info *fi);
	/* Replies to a read; o is NULL for a file that outlives its object. */
	void (*read)(fuse_req_t req, const struct sfs_obj *o, size_t size,
		     off_t off, struct fuse_file_info *fi);
	/* Bytes accepted or -errno; NULL: EROFS. */
	int (*write)(const struct sfs_obj *o, const char *buf, size_t size,
		     off_t off, const struct sfs_caller *who);
	/* Replies to a poll; NULL: always readable and writable. */
	void (*poll)(fuse_req_t req, struct fuse_file_info *fi,
		     struct fuse_pollhandle *ph);
	void (*release)(struct fuse_file_info *fi);
	off_t (*size)(const struct sfs_obj *o);	/* NULL: SFS_ATTR_SIZE */
	int outlives;	/* reads reach it once its object is gone */
};

struct sfs_file {
	const struct sfs_fops *ops;
	struct sfs_file *prev, *next;	/* the open files (files.c) */
};

static inline struct sfs_file *sfs_file_of(const struct fuse_file_info *fi)
{
	return (struct sfs_file *)(uintptr_t)fi->fh;
}

/*
 * The open file of a kind: type's member `file` (a path such as wq.file)
 * is the sfs_file fi holds, as container_of finds a struct from its
 * member.  Each kind names its accessor with it (ev_file_of, ...), the
 * one place its sfs_file becomes its own struct.
 */
#define SFS_FILE_AS(fi, type, file) \
	((type *)(void *)((char *)sfs_file_of(fi) - offsetof(type, file)))

/* Replies to an open with f as fi->fh, tracked until released. */
void sfs_reply_open(fuse_req_t req, struct fuse_file_info *fi,
		    struct sfs_file *f);
/* Untracks and frees the open file fi names (its ops' release). */
void sfs_file_release(struct fuse_file_info *fi);
/* At exit: releases the files the kernel never released. */
void sfs_files_release_all(void);

/* Text attributes (show/store) and config space, in ops.c. */
extern const struct sfs_fops sfs_text_fops, sfs_config_fops;

/* --- parked reads and poll handles (waitq.c) --------------------------- */
struct wq_file {		/* first in each open file that can block */
	struct sfs_file file;
	struct fuse_pollhandle *ph;
	struct wq_file *prev, *next;
};
_Static_assert(offsetof(struct wq_file, file) == 0,
	       "a blocking file is an sfs_file first");

static inline struct wq_file *wq_file_of(const struct fuse_file_info *fi)
{
	return SFS_FILE_AS(fi, struct wq_file, file);
}

struct wq_ops {
	/* Under the queue's lock: replies to req from f and returns 1, or
	 * returns 0 when there is nothing new for it. */
	int (*answer)(fuse_req_t req, struct wq_file *f, size_t size);
	/* Under the queue's lock: what poll reports for f now. */
	unsigned (*revents)(struct wq_file *f);
};

struct wq_wait;

struct waitq {
	pthread_mutex_t lock;
	const struct wq_ops *ops;
	struct wq_file *files;
	struct wq_wait *head, **tail;
};

#define WAITQ_INIT(q, o) \
	{ .lock = PTHREAD_MUTEX_INITIALIZER, .ops = (o), .tail = &(q).head }

/* Adds f (its ops set) and replies to the open; undone if that fails. */
void wq_open(struct waitq *q, fuse_req_t req, struct fuse_file_info *fi,
	     struct wq_file *f);
/* Answers now, fails with EAGAIN (nonblock) or parks the read. */
void wq_read(struct waitq *q, fuse_req_t req, struct wq_file *f, size_t size,
	     int nonblock);
void wq_poll(struct waitq *q, fuse_req_t req, struct wq_file *f,
	     struct fuse_pollhandle *ph);
/* Fails the file's parked reads with EINTR, forgets and frees it. */
void wq_release(struct waitq *q, struct fuse_file_info *fi);
/* Serves parked reads and poll handles; returns 1 if reads still wait. */
int wq_kick(struct waitq *q);
void wq_shutdown(struct waitq *q);

/* The events file and the interrupt files (events.c, irq.c). */
extern struct waitq events_q, irq_q;
#define SFS_IRQ_MAX 2048	/* vectors per device (MSI-X allows 2048) */
_Static_assert(SFS_IRQ_MAX - 1 <= UINT16_MAX,
	       "struct sfs_obj's vec holds every vector number");
/* Fills v with dev's routed vectors (under one take of the fabric lock):
 * how many, at most SFS_IRQ_MAX; 0 on error. */
unsigned irq_vectors(unsigned dev, struct smartio_msi_vector v[SFS_IRQ_MAX]);
/* Whether device vector vec is routed to this node. */
int irq_routed_here(unsigned dev, unsigned vec);

/* --- watcher thread (notify.c) ------------------------------------------ */
int notify_start(void);
void notify_stop(void);
/*
 * After a write through this mount: the kernel forgets the watched names
 * in directory dir (a device's bar links, which a borrow or a return here
 * makes or ends), so that the writer's next look finds what the write
 * did, not what the watcher has yet to catch up with.  Only from a
 * worker (loop_in_worker); elsewhere the watcher does it shortly after.
 */
void notify_wrote_in(fuse_ino_t dir);

/* reaper.c: a child that aborts the FUSE connection if the daemon dies
 * stuck in the kernel (see there); stopped on a clean exit. */
int reaper_start(const char *mnt);
void reaper_stop(void);
/* holds.c: attach segment owner/seg for node, held by the process of
 * thread tid (none if tid is 0) until it exits or a detach. */
int hold_attach(unsigned owner, const char *seg, unsigned node, pid_t tid);
/* Detaches and forgets the holds of owner/seg for node. */
int hold_detach(unsigned owner, const char *seg, unsigned node);
/* Lists the holds of owner/seg: "<node> <pid> <command>" a line. */
void holds_show(unsigned owner, const char *seg, struct sbuf *sb);
/* Detaches what only exited processes held (the watcher calls it). */
void holds_reap(void);
void holds_free(void);
/* Wakes the watcher early (after a local state change). */
void notify_poke(void);

/* --- listings the kernel keeps (listings.c) ---------------------------- */
/* Directory ino is read from its start: 0, or -ENOMEM. */
int listings_start(fuse_ino_t ino);
/* ... and to its end (or its listing is no longer kept). */
void listings_done(fuse_ino_t ino);
/* Drops the kernel's listings read before the state last changed, if it
 * changed: in the watcher, and before replying to a local change. */
void listings_sync(void);
/* The modification time of every directory: when listings were last
 * dropped (the mount's start before that). */
void listings_mtime(struct timespec *ts);
void listings_free(void);

/* loop.c: serves se until it ends (namespace reads in this thread, the
 * rest in workers); 0 or libfuse's -errno. */
int loop_serve(struct fuse_session *se);
/* The signals that end the daemon (SIGINT, SIGTERM, SIGHUP), in set. */
void loop_exit_signals(sigset_t *set);
/*
 * Whether this thread is one of loop_serve's workers, which may wait on
 * the kernel while the reading thread goes on answering (a name's
 * invalidation waits for the lookups in its directory).
 */
int loop_in_worker(void);

/* follow_cpu.c: the reading thread moves to the CPU of the process whose
 * request it just read (start once in that thread, then each request). */
void follow_cpu_start(void);
void follow_cpu_of(const struct fuse_buf *buf);

/* --- operations (ops.c) ------------------------------------------------- */
extern const struct fuse_lowlevel_ops sfs_ops;
/* Frees the listings kept for READDIRPLUS requests (at exit). */
void ops_free(void);

/* sd_notify.c: READY=1 to $NOTIFY_SOCKET when set; 0 or -errno. */
int sfs_sd_ready(void);

#endif /* SMARTIOFS_SFS_H */
