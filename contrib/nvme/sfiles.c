// SPDX-License-Identifier: MIT
/*
 * The /smartio files smartio-nvmeq uses, each as smartio(7) describes it:
 * one write(2) per value, symbolic links to the memory itself for mmap,
 * segments made with mkdir and mapped for a device with mkdir in dma/.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "nvmeq.h"
#include "../../lib/read_text.h"

int sf_path(const struct sfiles *sf, char *buf, size_t len,
	    const char *fmt, ...)
{
	char rel[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	n = snprintf(buf, len, "%s/%s", sf->mnt, rel);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int sf_init(struct sfiles *sf, const char *mnt)
{
	char p[512], link[256];
	const char *name;
	ssize_t n;

	if (strlen(mnt) >= sizeof(sf->mnt))
		return -ENAMETOOLONG;
	strcpy(sf->mnt, mnt);
	if (sf_path(sf, p, sizeof(p), "self"))
		return -ENAMETOOLONG;
	n = readlink(p, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	name = strrchr(link, '/');
	name = name ? name + 1 : link;
	if (!*name || strlen(name) >= sizeof(sf->self))
		return -EINVAL;
	strcpy(sf->self, name);
	return 0;
}

int sf_put(const struct sfiles *sf, const char *rel, const char *value)
{
	char p[512];
	int fd, err = 0;

	if (sf_path(sf, p, sizeof(p), "%s", rel))
		return -ENAMETOOLONG;
	fd = open(p, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		err = -errno;
	close(fd);
	return err;
}

int sf_get(const struct sfiles *sf, const char *rel, char *buf, size_t len)
{
	char p[512];
	ssize_t n;

	if (sf_path(sf, p, sizeof(p), "%s", rel))
		return -ENAMETOOLONG;
	n = sio_read_text(p, buf, len);
	if (n < 0)
		return (int)n;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return 0;
}

/*
 * The size of what a bar<N> or mem link leads to: a file's own size in the
 * simulator; over smartio.ko a character device's, the "size" attribute
 * of its class device (smartio(4)).
 */
static size_t object_size(const struct stat *st)
{
	char sys[128], buf[32];

	if (!S_ISCHR(st->st_mode) || st->st_size)
		return (size_t)st->st_size;
	snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u/size",
		 major(st->st_rdev), minor(st->st_rdev));
	if (sio_read_text(sys, buf, sizeof(buf)) <= 0)
		return 0;
	return (size_t)strtoull(buf, NULL, 0);
}

void *sf_map(const struct sfiles *sf, const char *rel, size_t *size)
{
	char p[512];

	if (sf_path(sf, p, sizeof(p), "%s", rel)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return sf_map_path(p, size);
}

void *sf_map_path(const char *p, size_t *size)
{
	struct stat st;
	void *m;
	int fd;

	fd = open(p, O_RDWR);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return NULL;
	}
	if (!*size)
		*size = object_size(&st);
	if (!*size) {
		close(fd);
		errno = ENODEV;
		return NULL;
	}
	m = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

/* Whether the lines of text include name. */
static int has_line(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = text; (p = strstr(p, name)); p += n)
		if ((p == text || p[-1] == '\n') && (!p[n] || p[n] == '\n'))
			return 1;
	return 0;
}

int sf_hold_device(const struct sfiles *sf, const char *dev)
{
	char rel[128], buf[1024];
	int err;

	snprintf(rel, sizeof(rel), "dev/%s/node", dev);
	err = sf_get(sf, rel, buf, sizeof(buf));
	if (err || !strcmp(buf, sf->self))
		return err;
	snprintf(rel, sizeof(rel), "dev/%s/borrow", dev);
	err = sf_get(sf, rel, buf, sizeof(buf));
	if (err || has_line(buf, sf->self))
		return err;
	err = sf_put(sf, rel, sf->self);
	/* Another client of this node may have borrowed it meanwhile. */
	if (err == -EBUSY && !sf_get(sf, rel, buf, sizeof(buf)) &&
	    has_line(buf, sf->self))
		return 0;
	return err;
}

int sf_enable_device(const struct sfiles *sf, const char *dev)
{
	char p[512];
	uint16_t cmd;
	int fd, err = 0;

	if (sf_path(sf, p, sizeof(p), "dev/%s/config", dev))
		return -ENAMETOOLONG;
	fd = open(p, O_RDWR);
	if (fd < 0)
		return -errno;
	if (pread(fd, &cmd, 2, 4) != 2)
		err = -EIO;
	else if ((cmd & 0x6) != 0x6) {
		cmd |= 0x6;
		if (pwrite(fd, &cmd, 2, 4) != 2)
			err = -EIO;
	}
	close(fd);
	return err;
}

int sf_segment_make(const struct sfiles *sf, struct sf_segment *s,
		    const char *name, size_t size, const char *dev)
{
	char p[512], rel[256], buf[64];
	int err;

	memset(s, 0, sizeof(*s));
	if (strlen(name) >= sizeof(s->name))
		return -ENAMETOOLONG;
	strcpy(s->name, name);
	if (sf_path(sf, p, sizeof(p), "self/segments/%s", name))
		return -ENAMETOOLONG;
	if (mkdir(p, 0755))
		return -errno;
	snprintf(rel, sizeof(rel), "self/segments/%s/size", name);
	snprintf(buf, sizeof(buf), "%zu", size);
	err = sf_put(sf, rel, buf);
	if (!err && dev) {
		sf_path(sf, p, sizeof(p), "self/segments/%s/dma/%s", name, dev);
		if (mkdir(p, 0755))
			err = -errno;
		snprintf(rel, sizeof(rel), "self/segments/%s/dma/%s/ioaddr",
			 name, dev);
		if (!err)
			err = sf_get(sf, rel, buf, sizeof(buf));
		if (!err)
			s->io = strtoull(buf, NULL, 16);
	}
	snprintf(rel, sizeof(rel), "self/segments/%s/mem", name);
	s->size = size;
	if (!err) {
		s->mem = sf_map(sf, rel, &s->size);
		if (!s->mem)
			err = -errno;
	}
	if (err)
		sf_segment_remove(sf, s, dev);
	return err;
}

void sf_segment_remove(const struct sfiles *sf, struct sf_segment *s,
		       const char *dev)
{
	char p[512];

	if (s->mem)
		munmap(s->mem, s->size);
	s->mem = NULL;
	if (dev && !sf_path(sf, p, sizeof(p), "self/segments/%s/dma/%s",
			    s->name, dev))
		rmdir(p);
	if (!sf_path(sf, p, sizeof(p), "self/segments/%s", s->name))
		rmdir(p);
}

int sf_segment_owner(const struct sfiles *sf, const char *name, char *who,
		     size_t len)
{
	char p[512];
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (sf_path(sf, p, sizeof(p), "nodes"))
		return -ENAMETOOLONG;
	d = opendir(p);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' ||
		    sf_path(sf, p, sizeof(p), "nodes/%s/segments/%s", e->d_name,
			    name) || stat(p, &st))
			continue;
		snprintf(who, len, "%s", e->d_name);
		closedir(d);
		return 0;
	}
	closedir(d);
	return -ENOENT;
}
