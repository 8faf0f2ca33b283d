// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sio_dmaspread DEV MIB SPREAD_MIB WINDOW_MIB SEED [check]: MIB MiB of O_DIRECT
 * writes to block device DEV from 1 MiB buffers spread over SPREAD_MIB MiB
 * of locked memory (so the driver's DMA mappings cover the machine's RAM,
 * more of it than a DMA window of WINDOW_MIB MiB from address 0 would
 * hold), then as many reads into other buffers of it, each compared with
 * what was written (every byte).  For check_iommu.sh (make check-ntb):
 *
 *   sio_dmaspread /dev/nvme0n1 256 1024 256 7
 *   verified 256 MiB written and read back: buffers from 0x1234000 to
 *   0x5e000000, 172 of 512 above 256 MiB
 *
 * With "check" it only reads (what an earlier run wrote with SEED).
 * The buffers' physical addresses come from /proc/self/pagemap (root).
 * Exit 0 when every byte is equal, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1u << 20)

static uint64_t word(uint64_t seed, uint64_t off)
{
	return (seed << 48) ^ (off * 0x9e3779b97f4a7c15ull) ^ off;
}

/* The physical address of the page at p, 0 when unknown. */
static uint64_t phys_of(int pagemap, const void *p)
{
	uint64_t e, page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (pread(pagemap, &e, sizeof(e),
		  (off_t)((uintptr_t)p / page * sizeof(e))) != sizeof(e) ||
	    !(e >> 63 & 1))
		return 0;
	return (e & ((1ull << 55) - 1)) * page;
}

static unsigned long arg(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*s == '\0' || *end != '\0') {
		fprintf(stderr, "sio_dmaspread: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long n, spread, window, seed, i, k, above = 0, bufs = 0, first;
	uint64_t lo = UINT64_MAX, hi = 0;
	int fd, pagemap;
	uint8_t *mem;

	if (argc != 6 && (argc != 7 || strcmp(argv[6], "check"))) {
		fprintf(stderr, "usage: sio_dmaspread DEV MIB SPREAD_MIB WINDOW_MIB SEED [check]\n");
		return 2;
	}
	n = arg(argv[2]);
	spread = arg(argv[3]);
	window = arg(argv[4]);
	seed = arg(argv[5]);
	if (!n || spread < 2 * n) {
		fprintf(stderr, "sio_dmaspread: SPREAD_MIB must be at least twice MIB\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_DIRECT);
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	mem = mmap(NULL, spread * MIB, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (fd < 0 || pagemap < 0 || mem == MAP_FAILED || mlock(mem, spread * MIB)) {
		perror("sio_dmaspread");
		return 2;
	}
	/*
	 * Write i from buffer (i * k) mod spread, read i into the buffer
	 * half the memory away: k odd and coprime with spread, so every
	 * buffer differs.
	 */
	for (k = spread / 3 | 1; k > 1; k -= 2) {
		unsigned long a = k, b = spread;

		while (b) {
			unsigned long t = a % b;

			a = b;
			b = t;
		}
		if (a == 1)
			break;
	}
	first = argc == 7 ? n : 0;
	for (i = first; i < 2 * n; i++) {
		unsigned long b = (i % n * k + (i >= n ? spread / 2 : 0)) % spread;
		uint8_t *buf = mem + b * MIB;
		uint64_t *w = (uint64_t *)buf, j, ph;
		off_t off = (off_t)(i % n) * MIB;
		ssize_t got;

		for (j = 0; j < MIB; j += 4096) {
			ph = phys_of(pagemap, buf + j);
			if (ph && ph < lo)
				lo = ph;
			if (ph > hi)
				hi = ph;
			above += ph >= (uint64_t)window * MIB;
			bufs++;
		}
		if (i < n) {
			for (j = 0; j < MIB / 8; j++)
				w[j] = word(seed, (uint64_t)off + j * 8);
			got = pwrite(fd, buf, MIB, off);
		} else {
			memset(buf, 0, MIB);
			got = pread(fd, buf, MIB, off);
		}
		if (got != (ssize_t)MIB) {
			fprintf(stderr, "sio_dmaspread: %s at %jd: %zd (%s)\n",
				i < n ? "write" : "read", (intmax_t)off, got,
				got < 0 ? strerror(errno) : "short");
			return 1;
		}
		if (i == n - 1 && fsync(fd)) {
			perror("sio_dmaspread: fsync");
			return 1;
		}
		for (j = 0; i >= n && j < MIB / 8; j++)
			if (w[j] != word(seed, (uint64_t)off + j * 8)) {
				fprintf(stderr, "sio_dmaspread: byte %jd differs: %#" PRIx64 " for %#" PRIx64 "\n",
					(intmax_t)(off + (off_t)j * 8), w[j],
					word(seed, (uint64_t)off + j * 8));
				return 1;
			}
	}
	printf("verified %lu MiB %s: buffers from %#" PRIx64 " to %#" PRIx64 ", %lu of %lu pages above %lu MiB\n",
	       n, first ? "read back" : "written and read back", lo, hi, above,
	       bufs, window);
	return 0;
}
