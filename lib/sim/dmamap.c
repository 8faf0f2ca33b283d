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

/* FNV-1a: paths share a long prefix, so their ends must count. */
static u32 path_hash(const char *path)
{
	u32 h = 2166136261u;

	while (*path)
		h = (h ^ (u8)*path++) * 16777619u;
	return h;
}

/* The mapping of path covering `end` bytes, mapped now if need be. */
static struct sim_dmamap *lookup(struct sim_fabric *f, const char *path,
				 u64 end, int *err)
{
	struct sim_dmamaps *c = &f->dmamaps;
	struct sim_dmamap *m = NULL;
	u32 hash = path_hash(path);
	struct stat st;
	unsigned i;
	void *base;
	int fd;

	for (i = 0; i < SIM_DMAMAP_SLOTS && !m; i++)
		if (c->slot[i].base && c->slot[i].hash == hash &&
		    !strcmp(c->slot[i].path, path))
			m = &c->slot[i];
	if (m && end <= m->size)
		return m;
	if (strlen(path) >= sizeof(m->path)) {
		*err = -ENAMETOOLONG;
		return NULL;
	}
	fd = sim_file_open(f, path, O_RDWR);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	if (fstat(fd, &st))
		*err = -errno;
	else if ((u64)st.st_size < end || !st.st_size)
		*err = -EIO;
	if (*err) {
		close(fd);
		return NULL;
	}
	/* Populated at once: a fault per page costs more than the copy. */
	base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	if (!m) {
		m = &c->slot[c->next];
		c->next = (c->next + 1) % SIM_DMAMAP_SLOTS;
	}
	drop(m);
	strcpy(m->path, path);
	m->hash = hash;
	m->base = base;
	m->size = (size_t)st.st_size;
	return m;
}

int sim_dmamap_copy(struct sim_fabric *f, const char *path, u64 off,
		    void *buf, size_t len, int write)
{
	struct sim_dmamaps *c = &f->dmamaps;
	struct sim_dmamap *m;
	int err = 0;

	if (off + len < off)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	m = lookup(f, path, off + len, &err);
	if (m) {
		if (write)
			memcpy(m->base + off, buf, len);
		else
			memcpy(buf, m->base + off, len);
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}
