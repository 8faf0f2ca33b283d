// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check-kmod's guest helper (linked statically, the guest has no libc):
 *   sio_mmap FILE OFFSET [WAITFILE]
 * maps the first page of FILE (a /dev/smartio BAR) and prints the dword at
 * OFFSET as 0x%08x.  With WAITFILE it then waits (up to 300 s) until
 * WAITFILE exists and reads the dword again: a mapping revoked meanwhile
 * dies of SIGBUS there, which the caller sees as status 135.
 *   sio_mmap -p FILE
 * asks for a MAP_PRIVATE mapping of FILE's first page (read-write) and
 * prints "refused <errno name>" when mmap fails; a mapping it gets is
 * touched (read, then written), which is where a COW mapping of PFNs
 * BUGs in the kernel, and it prints "mapped" (status 3).
 *   sio_mmap -r FILE OFFSET
 * maps FILE opened read-only with MAP_SHARED, PROT_READ, prints the dword
 * and checks that mprotect() cannot make the mapping writable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *errno_name(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case EACCES: return "EACCES";
	case ENODEV: return "ENODEV";
	case EPERM: return "EPERM";
	default: return strerror(e);
	}
}

/* MAP_PRIVATE must be refused; a mapping obtained is touched. */
static int try_private(const char *path)
{
	volatile uint32_t *p;
	void *map;
	int fd = open(path, O_RDWR);

	if (fd < 0) {
		perror(path);
		return 1;
	}
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		printf("refused %s\n", errno_name(errno));
		return 0;
	}
	p = map;
	printf("mapped 0x%08x\n", (unsigned)p[0]);
	fflush(stdout);
	p[1] = p[1];
	return 3;
}

/* A read-only shared mapping works and stays read-only. */
static int read_only(const char *path, unsigned long off)
{
	void *map;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		perror(path);
		return 1;
	}
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		printf("refused %s\n", errno_name(errno));
		return 1;
	}
	printf("0x%08x\n", (unsigned)*(volatile uint32_t *)((char *)map + off));
	if (!mprotect(map, 4096, PROT_READ | PROT_WRITE)) {
		printf("mprotect made it writable\n");
		return 4;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: sio_mmap FILE OFFSET [WAITFILE] | -p FILE | "
		"-r FILE OFFSET\n");
	return 2;
}

/* A dword's offset in the first page, or -1. */
static long dword_offset(const char *s)
{
	unsigned long off = strtoul(s, NULL, 0);

	if (off > 4092 || off % 4) {
		fprintf(stderr, "sio_mmap: offset must be a dword in the first page\n");
		return -1;
	}
	return (long)off;
}

int main(int argc, char **argv)
{
	volatile uint32_t *p;
	void *map;
	long off;
	int fd, i;

	if (argc == 3 && !strcmp(argv[1], "-p"))
		return try_private(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "-r")) {
		off = dword_offset(argv[3]);
		return off < 0 ? 2 : read_only(argv[2], (unsigned long)off);
	}
	if (argc < 3 || argc > 4)
		return usage();
	off = dword_offset(argv[2]);
	if (off < 0)
		return 2;
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	p = (volatile uint32_t *)((char *)map + off);
	printf("0x%08x\n", (unsigned)*p);
	fflush(stdout);
	if (argc == 4) {
		for (i = 0; i < 3000 && access(argv[3], F_OK); i++)
			usleep(100000);
		printf("0x%08x\n", (unsigned)*p);
	}
	return 0;
}
