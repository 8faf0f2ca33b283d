// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Cached mappings of backing files for device DMA (see fabric.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabric.h"

void sim_dmamap_init(struct sim_fabric *f)
{
	memset(&f->dmamaps, 0, sizeof(f->dmamaps));
	pthread_mutex_init(&f->dmamaps.lock, NULL);
}

static void drop(struct sim_dmamap *m)
{
	if (m->base)
		munmap(m->base, m->size);
	memset(m, 0, sizeof(*m));
}

void sim_dmamap_fini(struct sim_fabric *f)
{
	unsigned i;

	for (i = 0; i < SIM_DMAMAP_SLOTS; i++)
		drop(&f->dmamaps.slot[i]);
	pthread_mutex_destroy(&f->dmamaps.lock);
}

static int same_key(const struct sim_dmakey *x, const struct sim_dmakey *y)
{
	return x->kind == y->kind && x->a == y->a && x->b == y->b &&
	       x->c == y->c;
}

/* The first slot a key is looked for in: its words mixed (FNV-1a). */
static unsigned first_slot(const struct sim_dmakey *k)
{
	const u32 w[4] = { k->kind, k->a, k->b, k->c };
	u32 h = 2166136261u;
	unsigned i;

	for (i = 0; i < 4; i++)
		h = (h ^ w[i]) * 16777619u;
	return (h ^ h >> 16) % SIM_DMAMAP_SLOTS;
}

static struct sim_dmamap *probe(struct sim_dmamaps *c, unsigned first,
				unsigned i)
{
	return &c->slot[(first + i) % SIM_DMAMAP_SLOTS];
}

/* Maps path (at least `end` bytes) into m, for key. */
static int map_into(struct sim_fabric *f, struct sim_dmamap *m,
		    const struct sim_dmakey *key, const char *path, u64 end)
{
	struct stat st;
	void *base;
	int fd, err = 0;

	fd = sim_file_open(f, path, O_RDWR);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st))
		err = -errno;
	else if ((u64)st.st_size < end || !st.st_size)
		err = -EIO;
	if (err) {
		close(fd);
		return err;
	}
	/* Populated at once: a fault per page costs more than the copy. */
	base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return -errno;
	drop(m);
	m->key = *key;
	m->base = base;
	m->size = (size_t)st.st_size;
	return 0;
}

/*
 * The mapping of key covering `end` bytes; mapped now from path if it is
 * not (or not far enough), or -EAGAIN without a path.
 */
static struct sim_dmamap *lookup(struct sim_fabric *f,
				 const struct sim_dmakey *key,
				 const char *path, u64 end, int *err)
{
	struct sim_dmamaps *c = &f->dmamaps;
	unsigned first = first_slot(key), i;
	struct sim_dmamap *m = NULL;

	for (i = 0; i < SIM_DMAMAP_PROBE && !m; i++)
		if (probe(c, first, i)->base &&
		    same_key(&probe(c, first, i)->key, key))
			m = probe(c, first, i);
	if (m && end <= m->size)
		return m;
	if (!path) {
		*err = -EAGAIN;
		return NULL;
	}
	for (i = 0; i < SIM_DMAMAP_PROBE && !m; i++)
		if (!probe(c, first, i)->base)
			m = probe(c, first, i);
	if (!m) {
		m = probe(c, first, c->next);
		c->next = (c->next + 1) % SIM_DMAMAP_PROBE;
	}
	*err = map_into(f, m, key, path, end);
	return *err ? NULL : m;
}

/* The copy, with the mappings' lock held. */
static int copy_locked(struct sim_fabric *f, const struct sim_dmakey *key,
		       const char *path, u64 off, void *buf, size_t len,
		       int write)
{
	struct sim_dmamap *m;
	int err = 0;

	if (off + len < off)
		return -EINVAL;
	m = lookup(f, key, path, off + len, &err);
	if (!m)
		return err;
	if (write)
		memcpy(m->base + off, buf, len);
	else
		memcpy(buf, m->base + off, len);
	return 0;
}

u64 sim_dmamap_write_many(struct sim_fabric *f, const struct sim_loc *loc,
			  const struct sim_dmakey *key, u32 n, void *buf,
			  size_t len)
{
	struct sim_dmamaps *c = &f->dmamaps;
	u64 missed = 0;
	u32 k;

	pthread_mutex_lock(&c->lock);
	for (k = 0; k < n && k < 64; k++)
		if (copy_locked(f, &key[k], NULL, loc[k].offset, buf, len, 1))
			missed |= 1ull << k;
	pthread_mutex_unlock(&c->lock);
	return missed;
}

int sim_dmamap_copy(struct sim_fabric *f, const struct sim_dmakey *key,
		    const char *path, u64 off, void *buf, size_t len,
		    int write)
{
	struct sim_dmamaps *c = &f->dmamaps;
	int err;

	pthread_mutex_lock(&c->lock);
	err = copy_locked(f, key, path, off, buf, len, write);
	pthread_mutex_unlock(&c->lock);
	return err;
}
