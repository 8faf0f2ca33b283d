// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The inode table.  An inode number is derived from the object's path (a
 * 64-bit FNV-1a hash, probed past collisions), so a name keeps its number
 * while the daemon lives and across restarts, and `ls -lR` sees stable
 * numbers.  Entries are counted by the kernel's lookups and dropped on
 * forget.  Two chained hash tables index them: by inode number and by path.
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
	struct sfs_inode *dyn;	/* list of the dynamic entries */
} it = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t hash_path(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ull;
	}
	return h;
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

static struct sfs_inode *find_path(const char *path, uint64_t ph)
{
	struct sfs_inode *e;

	for (e = it.by_path[bucket(ph)]; e; e = e->next_path)
		if (e->phash == ph && !strcmp(e->path, path))
			return e;
	return NULL;
}

static void dyn_link(struct sfs_inode *e)
{
	e->dyn_prev = NULL;
	e->dyn_next = it.dyn;
	if (it.dyn)
		it.dyn->dyn_prev = e;
	it.dyn = e;
}

static void dyn_unlink(struct sfs_inode *e)
{
	if (e->dyn_prev)
		e->dyn_prev->dyn_next = e->dyn_next;
	else
		it.dyn = e->dyn_next;
	if (e->dyn_next)
		e->dyn_next->dyn_prev = e->dyn_prev;
}

static void link_entry(struct sfs_inode *e)
{
	size_t b = bucket(e->ino);

	e->next_ino = it.by_ino[b];
	it.by_ino[b] = e;
	b = bucket(e->phash);
	e->next_path = it.by_path[b];
	it.by_path[b] = e;
}

static void unlink_entry(struct sfs_inode *e)
{
	struct sfs_inode **pp;

	for (pp = &it.by_ino[bucket(e->ino)]; *pp; pp = &(*pp)->next_ino)
		if (*pp == e) {
			*pp = e->next_ino;
			break;
		}
	for (pp = &it.by_path[bucket(e->phash)]; *pp; pp = &(*pp)->next_path)
		if (*pp == e) {
			*pp = e->next_path;
			break;
		}
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

/* The number for a new path: its hash, probed past numbers in use. */
static fuse_ino_t pick_ino(uint64_t ph)
{
	fuse_ino_t ino = ph;

	for (;;) {
		if (ino <= FUSE_ROOT_ID)
			ino = FUSE_ROOT_ID + 1;
		if (!find_ino(ino))
			return ino;
		ino++;
	}
}

static struct sfs_inode *new_entry(const char *path, const char *name_in_path,
				   fuse_ino_t parent, const struct sfs_obj *o)
{
	size_t len = strlen(path);
	struct sfs_inode *e = calloc(1, sizeof(*e) + len + 1);

	if (!e)
		return NULL;
	memcpy(e->path, path, len + 1);
	e->name = e->path + (name_in_path - path);
	e->parent = parent;
	e->obj = *o;
	e->phash = hash_path(path);
	e->generation = ++it.generation;
	return e;
}

int inode_init(void)
{
	struct sfs_obj root = { .kind = K_ROOT };

	it.size = 1024;
	it.by_ino = calloc(it.size, sizeof(*it.by_ino));
	it.by_path = calloc(it.size, sizeof(*it.by_path));
	it.root = new_entry("", "", FUSE_ROOT_ID, &root);
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
	it.by_ino = it.by_path = NULL;
	it.root = NULL;
	it.count = 0;
}

struct sfs_inode *inode_get(fuse_ino_t ino)
{
	struct sfs_inode *e;

	pthread_mutex_lock(&it.lock);
	e = find_ino(ino);
	pthread_mutex_unlock(&it.lock);
	return e;
}

static int make_path(const struct sfs_inode *parent, const char *name,
		     char **path, const char **namep)
{
	size_t pl = strlen(parent->path), nl = strlen(name);
	char *p = malloc(pl + nl + 2);

	if (!p)
		return -ENOMEM;
	if (pl) {
		memcpy(p, parent->path, pl);
		p[pl++] = '/';
	}
	memcpy(p + pl, name, nl + 1);
	*path = p;
	*namep = p + pl;
	return 0;
}

struct sfs_inode *inode_ref(const struct sfs_inode *parent, const char *name,
			    const struct sfs_obj *o)
{
	struct sfs_inode *e;
	const char *np;
	char *path;

	if (make_path(parent, name, &path, &np))
		return NULL;
	pthread_mutex_lock(&it.lock);
	/* A path always names the same object, so an existing entry is
	 * reused as it is (its obj is read without the lock elsewhere). */
	e = find_path(path, hash_path(path));
	if (!e) {
		e = new_entry(path, np, parent->ino, o);
		if (e) {
			if (it.count >= it.size && grow()) {
				free(e);
				e = NULL;
			} else {
				e->ino = pick_ino(e->phash);
				link_entry(e);
				if (tree_dynamic(&e->obj))
					dyn_link(e);
				it.count++;
			}
		}
	}
	if (e)
		e->nlookup++;
	pthread_mutex_unlock(&it.lock);
	free(path);
	return e;
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
			if (tree_dynamic(&e->obj))
				dyn_unlink(e);
			it.count--;
			free(e);
		}
	}
	pthread_mutex_unlock(&it.lock);
}

fuse_ino_t inode_peek(const struct sfs_inode *parent, const char *name)
{
	struct sfs_inode *e;
	fuse_ino_t ino;
	const char *np;
	uint64_t ph;
	char *path;

	if (make_path(parent, name, &path, &np))
		return FUSE_ROOT_ID + 1;
	ph = hash_path(path);
	pthread_mutex_lock(&it.lock);
	e = find_path(path, ph);
	ino = e ? e->ino : pick_ino(ph);
	pthread_mutex_unlock(&it.lock);
	free(path);
	return ino;
}

size_t inode_collect_dynamic(struct sfs_dynent **out)
{
	struct sfs_dynent *v = NULL, *nv;
	struct sfs_inode *e;
	size_t n = 0, cap = 0;

	pthread_mutex_lock(&it.lock);
	for (e = it.dyn; e; e = e->dyn_next) {
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
