// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The inode table.  An inode number is derived from the object's path (a
 * 64-bit FNV-1a hash, probed past collisions), so a name keeps its number
 * while the daemon lives and across restarts, and `ls -lR` sees stable
 * numbers.  Entries are counted by the kernel's lookups and dropped on
 * forget.  Two chained hash tables index them: by inode number and by path.
 *
 * A directory removed here (rmdir) leaves the path index at once, though
 * its entry lives on until the kernel forgets it (a file in it may still
 * be open): the kernel has marked that inode dead, so the next object
 * under the same name must get another number and generation, or every
 * lookup in it would fail with ENOENT.
 *
 * Attribute files, most of what the kernel holds after `ls -lR` (21 of
 * the 25 names of a device), have no entry: record i of a directory's
 * attribute table is numbered (directory's number) + i + 1, entries'
 * numbers having their low ATTR_BITS clear, and its object is made again
 * from the directory's entry, which the kernel holds while it holds any
 * name inside.  Memory then follows the directories the kernel holds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sfs.h"

static struct {
	pthread_mutex_t lock;
	struct sfs_inode **by_ino, **by_path;
	size_t size;		/* buckets, power of two */
	size_t count;
	uint64_t generation;
	struct sfs_inode *root;
	/* The watched entries (tree_watched), which the watcher checks after
	 * a change: an array rather than list links, as most are not. */
	struct sfs_inode **dyn;
	uint32_t ndyn, dyncap;
} it = { .lock = PTHREAD_MUTEX_INITIALIZER };

#define FNV_BASIS 1469598103934665603ull

#define ATTR_BITS 8
#define ATTR_MASK ((fuse_ino_t)(1u << ATTR_BITS) - 1)
_Static_assert(sizeof(((struct sfs_obj *)0)->attr) * 8 <= ATTR_BITS,
	       "every attribute record index fits below an entry's number");

/* The number of directory d's attribute file a (a < ATTR_MASK). */
static fuse_ino_t attr_ino(const struct sfs_inode *d, unsigned a)
{
	return d->ino + a + 1;
}

/* Whether o, a child of parent, is numbered from parent (attr_ino). */
static int numbered_from(const struct sfs_inode *parent,
			 const struct sfs_obj *o)
{
	return parent->ino != FUSE_ROOT_ID && o->attr < ATTR_MASK &&
	       tree_is_attr_file(&parent->obj, o);
}

static uint64_t fnv_more(uint64_t h, const char *s)
{
	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ull;
	}
	return h;
}

/* FNV-1a of "parent path/name" ("name" under the root), from the parent's
 * hash: FNV-1a runs left to right, so it extends without the path. */
static uint64_t hash_child(const struct sfs_inode *parent, const char *name)
{
	uint64_t h = parent->phash;

	if (parent->ino != FUSE_ROOT_ID)
		h = fnv_more(h, "/");
	return fnv_more(h, name);
}

static size_t bucket(uint64_t v)
{
	v ^= v >> 29;
	v *= 0xbf58476d1ce4e5b9ull;
	v ^= v >> 32;
	return (size_t)v & (it.size - 1);
}

static struct sfs_inode *find_ino(fuse_ino_t ino)
{
	struct sfs_inode *e;

	for (e = it.by_ino[bucket(ino)]; e; e = e->next_ino)
		if (e->ino == ino)
			return e;
	return NULL;
}

static struct sfs_inode *find_path(fuse_ino_t parent, const char *name,
				   uint64_t ph)
{
	struct sfs_inode *e;

	for (e = it.by_path[bucket(ph)]; e; e = e->next_path)
		if (e->phash == ph && e->parent == parent &&
		    !strcmp(e->name, name))
			return e;
	return NULL;
}

static int dyn_link(struct sfs_inode *e)
{
	if (it.ndyn == it.dyncap) {
		uint32_t cap = it.dyncap ? it.dyncap * 2 : 64;
		struct sfs_inode **v = realloc(it.dyn, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		it.dyn = v;
		it.dyncap = cap;
	}
	e->dyn_slot = it.ndyn;
	it.dyn[it.ndyn++] = e;
	return 0;
}

static void dyn_unlink(struct sfs_inode *e)
{
	struct sfs_inode *last = it.dyn[--it.ndyn];

	it.dyn[e->dyn_slot] = last;
	last->dyn_slot = e->dyn_slot;
}

static void link_entry(struct sfs_inode *e)
{
	size_t b = bucket(e->ino);

	e->next_ino = it.by_ino[b];
	it.by_ino[b] = e;
	if (e->retired)		/* grow() moves it: numbered, no longer named */
		return;
	b = bucket(e->phash);
	e->next_path = it.by_path[b];
	it.by_path[b] = e;
}

static void unlink_path(struct sfs_inode *e)
{
	struct sfs_inode **pp;

	for (pp = &it.by_path[bucket(e->phash)]; *pp; pp = &(*pp)->next_path)
		if (*pp == e) {
			*pp = e->next_path;
			break;
		}
	e->retired = 1;
}

static void unlink_entry(struct sfs_inode *e)
{
	struct sfs_inode **pp;

	for (pp = &it.by_ino[bucket(e->ino)]; *pp; pp = &(*pp)->next_ino)
		if (*pp == e) {
			*pp = e->next_ino;
			break;
		}
	if (!e->retired)
		unlink_path(e);
}

static int grow(void)
{
	struct sfs_inode **oi = it.by_ino, **op = it.by_path;
	size_t osize = it.size, i;
	struct sfs_inode **ni = calloc(osize * 2, sizeof(*ni));
	struct sfs_inode **np = calloc(osize * 2, sizeof(*np));

	if (!ni || !np) {
		free(ni);
		free(np);
		return -ENOMEM;
	}
	it.by_ino = ni;
	it.by_path = np;
	it.size = osize * 2;
	for (i = 0; i < osize; i++) {
		struct sfs_inode *e = oi[i], *next;

		for (; e; e = next) {
			next = e->next_ino;
			link_entry(e);
		}
	}
	free(oi);
	free(op);
	return 0;
}

/* The number for a new path: its hash with the attribute bits clear,
 * probed past numbers in use. */
static fuse_ino_t pick_ino(uint64_t ph)
{
	fuse_ino_t ino = ph & ~ATTR_MASK;

	for (;;) {
		if (ino <= FUSE_ROOT_ID)
			ino = ATTR_MASK + 1;
		if (!find_ino(ino))
			return ino;
		ino += ATTR_MASK + 1;
	}
}

static struct sfs_inode *new_entry(const char *name, uint64_t ph,
				   fuse_ino_t parent, const struct sfs_obj *o)
{
	size_t len = strlen(name);
	struct sfs_inode *e = calloc(1, sizeof(*e) + len + 1);

	if (!e)
		return NULL;
	memcpy(e->name, name, len + 1);
	e->parent = parent;
	e->obj = *o;
	e->phash = ph;
	e->generation = ++it.generation;
	return e;
}

int inode_init(void)
{
	struct sfs_obj root = { .kind = K_ROOT };

	it.size = 1024;
	it.by_ino = calloc(it.size, sizeof(*it.by_ino));
	it.by_path = calloc(it.size, sizeof(*it.by_path));
	it.root = new_entry("", FNV_BASIS, FUSE_ROOT_ID, &root);
	if (!it.by_ino || !it.by_path || !it.root)
		return -ENOMEM;
	it.root->ino = FUSE_ROOT_ID;
	it.root->nlookup = 1;
	link_entry(it.root);
	it.count = 1;
	return 0;
}

void inode_fini(void)
{
	size_t i;

	for (i = 0; it.by_ino && i < it.size; i++) {
		struct sfs_inode *e = it.by_ino[i], *next;

		for (; e; e = next) {
			next = e->next_ino;
			free(e);
		}
	}
	free(it.by_ino);
	free(it.by_path);
	free(it.dyn);
	it.dyn = NULL;
	it.ndyn = it.dyncap = 0;
	it.by_ino = it.by_path = NULL;
	it.root = NULL;
	it.count = 0;
}

struct sfs_inode *inode_get(fuse_ino_t ino, struct sfs_inode *file)
{
	const struct sfs_inode *d;
	struct sfs_inode *e = NULL;

	pthread_mutex_lock(&it.lock);
	if (ino == FUSE_ROOT_ID || !(ino & ATTR_MASK)) {
		e = find_ino(ino);
	} else {
		d = find_ino(ino & ~ATTR_MASK);
		memset(file, 0, sizeof(*file));
		if (d && !tree_attr_file(&d->obj, (unsigned)(ino & ATTR_MASK) - 1,
					 &file->obj)) {
			file->ino = ino;
			file->parent = d->ino;
			file->generation = d->generation;
			e = file;
		}
	}
	pthread_mutex_unlock(&it.lock);
	return e;
}

int inode_ref(const struct sfs_inode *parent, const char *name,
	      const struct sfs_obj *o, struct sfs_ref *ref)
{
	uint64_t ph;
	struct sfs_inode *e;

	if (numbered_from(parent, o)) {
		/* Nothing to count: forget finds no entry for it. */
		ref->ino = attr_ino(parent, o->attr);
		ref->generation = parent->generation;
		return 0;
	}
	ph = hash_child(parent, name);
	pthread_mutex_lock(&it.lock);
	/* A path always names the same object, so an existing entry is
	 * reused as it is (its obj is read without the lock elsewhere). */
	e = find_path(parent->ino, name, ph);
	if (!e) {
		e = new_entry(name, ph, parent->ino, o);
		if (e) {
			if ((it.count >= it.size && grow()) ||
			    (tree_watched(&e->obj) && dyn_link(e))) {
				free(e);
				e = NULL;
			} else {
				e->ino = pick_ino(e->phash);
				link_entry(e);
				it.count++;
			}
		}
	}
	if (e) {
		e->nlookup++;
		ref->ino = e->ino;
		ref->generation = e->generation;
	}
	pthread_mutex_unlock(&it.lock);
	return e ? 0 : -ENOMEM;
}

void inode_retire(const struct sfs_inode *parent, const char *name)
{
	uint64_t ph = hash_child(parent, name);
	struct sfs_inode *e;

	pthread_mutex_lock(&it.lock);
	e = find_path(parent->ino, name, ph);
	if (e)
		unlink_path(e);
	pthread_mutex_unlock(&it.lock);
}

void inode_forget(fuse_ino_t ino, uint64_t n)
{
	struct sfs_inode *e;

	if (ino == FUSE_ROOT_ID)
		return;
	pthread_mutex_lock(&it.lock);
	e = find_ino(ino);
	if (e) {
		e->nlookup = e->nlookup > n ? e->nlookup - n : 0;
		if (!e->nlookup) {
			unlink_entry(e);
			if (tree_watched(&e->obj))
				dyn_unlink(e);
			it.count--;
			free(e);
		}
	}
	pthread_mutex_unlock(&it.lock);
}

fuse_ino_t inode_peek(const struct sfs_inode *parent, const char *name,
		      const struct sfs_obj *o)
{
	uint64_t ph;
	struct sfs_inode *e;
	fuse_ino_t ino;

	if (numbered_from(parent, o))
		return attr_ino(parent, o->attr);
	ph = hash_child(parent, name);
	pthread_mutex_lock(&it.lock);
	e = find_path(parent->ino, name, ph);
	ino = e ? e->ino : pick_ino(ph);
	pthread_mutex_unlock(&it.lock);
	return ino;
}

size_t inode_count(void)
{
	size_t n;

	pthread_mutex_lock(&it.lock);
	n = it.count;
	pthread_mutex_unlock(&it.lock);
	return n;
}

size_t inode_collect_dynamic(fuse_ino_t under, struct sfs_dynent **out)
{
	struct sfs_dynent *v = NULL, *nv;
	struct sfs_inode *e;
	size_t n = 0, cap = 0;
	uint32_t i;

	pthread_mutex_lock(&it.lock);
	for (i = 0; i < it.ndyn; i++) {
		e = it.dyn[i];
		/*
		 * Removed through this mount (rmdir): the kernel dropped its
		 * name then, and the name may already be a new object's, which
		 * an invalidation would make the kernel forget and look up
		 * again under another number while it is in use.
		 */
		if (e->retired || (under && e->parent != under))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto out;
			v = nv;
		}
		v[n].parent = e->parent;
		v[n].ino = e->ino;
		v[n].obj = e->obj;
		strncpy(v[n].name, e->name, sizeof(v[n].name) - 1);
		v[n].name[sizeof(v[n].name) - 1] = '\0';
		n++;
	}
out:
	pthread_mutex_unlock(&it.lock);
	*out = v;
	return n;
}
