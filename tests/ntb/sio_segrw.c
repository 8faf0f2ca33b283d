// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check-ntb's guest helper (linked statically, the guest has no libc):
 * reaches a smartio segment through mmap() of FILE (its /smartio mem link
 * or its character device), never through read() or write().
 *   sio_segrw FILE OFFSET read LEN        prints LEN bytes at OFFSET
 *   sio_segrw FILE OFFSET write TEXT      stores TEXT at OFFSET
 *   sio_segrw FILE OFFSET dump LEN        writes LEN raw bytes (up to
 *                                         1 MiB) to standard output
 *   sio_segrw FILE OFFSET hold LEN WAITFILE
 *       prints LEN bytes, waits (up to 300 s) until WAITFILE exists and
 *       prints them again: a mapping revoked meanwhile dies of SIGBUS
 *       there, which the caller sees as status 135.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void show(const volatile char *p, size_t len)
{
	char buf[256];
	size_t i;

	for (i = 0; i < len && i < sizeof(buf) - 1; i++)
		buf[i] = p[i] ? p[i] : '.';
	buf[i] = '\0';
	printf("%s\n", buf);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	size_t off, len, span;
	volatile char *p;
	void *map;
	int fd, i;

	if (argc < 5) {
		fprintf(stderr, "usage: sio_segrw FILE OFFSET read LEN | write TEXT | dump LEN | hold LEN WAITFILE\n");
		return 2;
	}
	off = strtoul(argv[2], NULL, 0);
	len = strcmp(argv[3], "write") ? strtoul(argv[4], NULL, 0)
					: strlen(argv[4]);
	if (!len || len > (strcmp(argv[3], "dump") ? 255u : 1u << 20)) {
		fprintf(stderr, "sio_segrw: 1 to 255 bytes (dump: 1 MiB)\n");
		return 2;
	}
	span = (off + len + 4095) & ~(size_t)4095;
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	p = (volatile char *)map + off;
	if (!strcmp(argv[3], "write")) {
		for (i = 0; i < (int)len; i++)
			p[i] = argv[4][i];
	} else if (!strcmp(argv[3], "read")) {
		show(p, len);
	} else if (!strcmp(argv[3], "dump")) {
		/* Read through the mapping as the other modes do, then out. */
		char *buf = malloc(len);

		if (!buf)
			return 1;
		for (i = 0; i < (int)len; i++)
			buf[i] = p[i];
		if (fwrite(buf, 1, len, stdout) != len)
			return 1;
		free(buf);
	} else if (!strcmp(argv[3], "hold") && argc == 6) {
		show(p, len);
		for (i = 0; i < 3000 && access(argv[5], F_OK); i++)
			usleep(100000);
		show(p, len);
	} else {
		fprintf(stderr, "sio_segrw: read, write, dump or hold\n");
		return 2;
	}
	return 0;
}
