/*
 * check-kmod's guest helper (linked statically, the guest has no libc):
 *   sio_mmap FILE OFFSET [WAITFILE]
 * maps the first page of FILE (a /dev/smartio BAR) and prints the dword at
 * OFFSET as 0x%08x.  With WAITFILE it then waits (up to 300 s) until
 * WAITFILE exists and reads the dword again: a mapping revoked meanwhile
 * dies of SIGBUS there, which the caller sees as status 135.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	volatile uint32_t *p;
	unsigned long off;
	void *map;
	int fd, i;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: sio_mmap FILE OFFSET [WAITFILE]\n");
		return 2;
	}
	off = strtoul(argv[2], NULL, 0);
	if (off > 4092 || off % 4) {
		fprintf(stderr, "sio_mmap: offset must be a dword in the first page\n");
		return 2;
	}
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
