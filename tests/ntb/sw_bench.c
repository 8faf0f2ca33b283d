// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The guest half of make bench's switch lines (tests/bench/ntb_switch.sh):
 *
 *   sw_bench memcpy BYTES CHUNK     MB/s of memcpy between two buffers of
 *                                   this guest, in CHUNK pieces (what
 *                                   ntb_perf does, into its window)
 *   sw_bench write PHYS SIZE BYTES  MB/s of memcpy from this guest's RAM
 *                                   into SIZE bytes at physical address
 *                                   PHYS (/dev/mem), BYTES in all (a
 *                                   window: into the peer's RAM)
 *   sw_bench read8 PHYS COUNT       mean ns of one 8-byte load from the
 *                                   physical address PHYS (/dev/mem)
 *   sw_bench tlb BYTES PAGES        MB/s of "rep movsl" (the guest kernel's
 *                                   memcpy_toio()) between two 512 KiB
 *                                   buffers PAGES pages apart
 *   sw_bench copyio BYTES CHUNK SPAN
 *                                   MB/s of ntb_perf's copy loop with its
 *                                   window replaced by this guest's RAM
 *
 * Prints one line: "SWBENCH memcpy <MB/s>", "SWBENCH write <MB/s>",
 * "SWBENCH read8 <ns> <value>", "SWBENCH tlb <PAGES> <MB/s>" or
 * "SWBENCH copyio <MB/s>".
 * Static: the guests have no C library.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bench_memcpy(size_t bytes, size_t chunk)
{
	char *src = malloc(chunk), *dst = malloc(chunk);
	size_t done;
	double t;

	if (!src || !dst || !chunk)
		return 1;
	memset(src, 0x5a, chunk);
	memset(dst, 0, chunk);
	t = now();
	for (done = 0; done < bytes; done += chunk) {
		src[done / chunk % chunk] ^= 1;	/* not a no-op to the compiler */
		memcpy(dst, src, chunk);
	}
	t = now() - t;
	printf("SWBENCH memcpy %.0f %d\n", bytes / t / 1e6, dst[0]);
	return 0;
}

/* MB/s of memcpy into SIZE bytes of physical memory at PHYS (/dev/mem). */
static int bench_write(unsigned long long phys, size_t size, size_t bytes)
{
	int fd = open("/dev/mem", O_RDWR | O_SYNC);
	char *src = malloc(size), *map;
	size_t done;
	double t;

	if (fd < 0 || !src || !size) {
		perror("/dev/mem");
		return 1;
	}
	map = mmap(NULL, size, PROT_WRITE, MAP_SHARED, fd, phys);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(src, 0x5a, size);
	t = now();
	for (done = 0; done < bytes; done += size) {
		src[done / size % size] ^= 1;
		memcpy(map, src, size);
	}
	t = now() - t;
	printf("SWBENCH write %.0f\n", bytes / t / 1e6);
	return 0;
}

static int bench_read8(unsigned long long phys, unsigned long count)
{
	long pg = sysconf(_SC_PAGESIZE);
	int fd = open("/dev/mem", O_RDONLY | O_SYNC);
	volatile uint64_t *p;
	uint64_t v = 0;
	unsigned long i;
	void *map;
	double t;

	if (fd < 0) {
		perror("/dev/mem");
		return 1;
	}
	map = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, phys & ~(pg - 1));
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	p = (volatile uint64_t *)((char *)map + (phys & (pg - 1)));
	t = now();
	for (i = 0; i < count; i++)
		v = *p;
	t = now() - t;
	printf("SWBENCH read8 %.0f 0x%llx\n", t / count * 1e9,
	       (unsigned long long)v);
	return 0;
}

/* What the guest kernel's memcpy_toio() runs (arch/x86/lib/iomem.c). */
static void copy_movsl(char *dst, const char *src, size_t len)
{
	unsigned long d0, d1, d2;

	__asm__ __volatile__("rep movsl"
			     : "=&c"(d0), "=&D"(d1), "=&S"(d2)
			     : "0"(len / 4), "1"(dst), "2"(src)
			     : "memory");
}

/*
 * TCG translates guest addresses through a direct-mapped TLB indexed by
 * page number modulo its size (which QEMU adapts to recent use).  A copy
 * whose source and destination are a multiple of that size apart evicts
 * one entry with the other at every load and store: this measures what
 * that costs, against the same copy one page further apart.
 */
static int bench_tlb(size_t bytes, unsigned long pages)
{
	const size_t chunk = 512 * 1024;
	char *base = (char *)0x7e0000000000UL, *src, *dst;
	size_t done;
	double t;

	src = mmap(base, chunk, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	dst = mmap(base + pages * 4096UL, chunk, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (src != base || dst != base + pages * 4096UL) {
		perror("mmap");
		return 1;
	}
	memset(src, 0x5a, chunk);
	memset(dst, 0, chunk);
	t = now();
	for (done = 0; done < bytes; done += chunk)
		copy_movsl(dst, src, chunk);
	t = now() - t;
	printf("SWBENCH tlb %lu %.0f\n", pages, bytes / t / 1e6);
	munmap(src, chunk);
	munmap(dst, chunk);
	return 0;
}

/*
 * ntb_perf's copy loop (perf_run_test: memcpy_toio of CHUNK bytes at a
 * time from a SPAN-byte source into a SPAN-byte window, both wrapping at
 * SPAN) with the window replaced by this guest's RAM: the same bytes by
 * the same instructions, so that ntb_perf's figure against it is what
 * the window costs.  TCG runs "rep movsl" far slower than the C
 * library's vector memcpy, a gap that is the emulator's, not the
 * NTB's.  The destination starts one page past a multiple of SPAN from
 * the source, so that the two never evict each other in TCG's TLB
 * (bench_tlb): the favourable case, for the baseline.
 */
static int bench_copyio(size_t bytes, size_t chunk, size_t span)
{
	char *src, *dst, *buf;
	size_t done, off = 0;
	double t;

	if (!chunk || chunk % 4 || span % chunk)
		return 1;
	buf = mmap(NULL, 2 * span + 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	src = buf;
	dst = buf + span + 4096;
	memset(src, 0x5a, span);
	memset(dst, 0, span);
	t = now();
	for (done = 0; done < bytes; done += chunk) {
		copy_movsl(dst + off, src + off, chunk);
		off = (off + chunk) % span;
	}
	t = now() - t;
	printf("SWBENCH copyio %.0f %d\n", bytes / t / 1e6, dst[0]);
	munmap(buf, 2 * span + 4096);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "memcpy"))
		return bench_memcpy(strtoull(argv[2], NULL, 0),
				    strtoull(argv[3], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "write"))
		return bench_write(strtoull(argv[2], NULL, 0),
				   strtoull(argv[3], NULL, 0),
				   strtoull(argv[4], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "read8"))
		return bench_read8(strtoull(argv[2], NULL, 0),
				   strtoul(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "tlb"))
		return bench_tlb(strtoull(argv[2], NULL, 0),
				 strtoul(argv[3], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "copyio"))
		return bench_copyio(strtoull(argv[2], NULL, 0),
				    strtoull(argv[3], NULL, 0),
				    strtoull(argv[4], NULL, 0));
	fprintf(stderr, "usage: sw_bench memcpy BYTES CHUNK | write PHYS SIZE BYTES | read8 PHYS COUNT | tlb BYTES PAGES | copyio BYTES CHUNK SPAN\n");
	return 2;
}
