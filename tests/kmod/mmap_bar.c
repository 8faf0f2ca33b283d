// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mmap_bar FILE BAR OFFSET: maps BAR BAR of a smartio character device
 * (offset BAR << 40) and prints the 32-bit register at OFFSET in hex.
 * Built static for the check-kmod guest.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	volatile uint32_t *regs;
	unsigned long off;
	void *map;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: mmap_bar FILE BAR OFFSET\n");
		return 2;
	}
	off = strtoul(argv[3], NULL, 0);
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
		   (off_t)strtoul(argv[2], NULL, 0) << 40);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	regs = map;
	printf("%#x\n", (unsigned)regs[(off & 4095) / 4]);
	munmap(map, 4096);
	close(fd);
	return 0;
}
