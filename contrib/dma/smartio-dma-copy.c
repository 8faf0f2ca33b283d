// SPDX-License-Identifier: MIT
/*
 * smartio-dma-copy: drives a DMA engine device (smartio-devices(7)) through
 * /smartio files alone.  It borrows the device, maps two segments of this
 * node's memory for it, and copies the source segment into the device's
 * memory and on into the destination segment, the transfer split across
 * the engines, each completing with its own MSI-X vector (irq/<e>).  The
 * destination must equal the source.  With -f it instead aims one engine
 * just past the destination segment: the fabric blocks the transfer, the
 * engine reports the error and the failing address, and the cluster's
 * events file gets a dma-fault line.
 *
 * The copy moves in chunks (-c, 1 MiB by default: ffLink's sweet spot),
 * one transfer each, chunk i on engine i % engines, so that an engine
 * setting up its next transfer leaves the link to the others, as ffLink's
 * engines, one per thread, do (section 8.2).  -M picks how the data
 * reaches memory the device can reach (ffLink's three ways):
 *   zero-copy  the data lives in the segments: the device moves it directly
 *              (the default);
 *   bounce     the data lives in this program's private memory: each chunk
 *              is copied into its engine's buffer in a segment (the bounce
 *              buffer), then moved by the device, one after the other;
 *   double     as bounce with two buffers per engine: the CPU fills (or
 *              drains) one while the engine moves the other.
 *
 * -r repeats the timed copy over the same buffers and prints the best
 * round's throughput (and the first's): the first round also pays for
 * whatever the fabric does on a buffer's first use, as a first memcpy
 * pays for its page faults.
 *
 * -p waits for an engine by polling its status register instead of
 * sleeping on its interrupt (irq/<e>), and asks for no interrupt, as
 * user-space drivers that cannot afford a wake-up per transfer do.
 *
 * -C times, between the engines' rounds, the CPU doing the same: memcpy of
 * the same bytes from the same source into the device's memory (its BAR 2
 * mapped through /smartio) and back out to the same destination, and
 * prints its figures as "cpu ...": the reference an engine is measured
 * against, side by side, as ffLink measures against its link.
 *
 *   smartio-dma-copy [-m mount] [-d dev] [-s bytes] [-e engines]
 *                    [-M zero-copy|bounce|double] [-c chunk] [-r rounds]
 *                    [-p] [-C] [-f]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "numparse.h"
#include "../mmio.h"

#define ENG(e) (0x100u + 0x40u * (e))
#define MAX_ENGINES 4

static const char *mnt = "/smartio", *devname = "acc0";
static char self[64];
static volatile uint8_t *bar;
static int irqfd[MAX_ENGINES] = { -1, -1, -1, -1 };
static int polling;	/* -p */

/* What this run created, so that a failure leaves nothing behind. */
static char made[2][32];
static int lent_to_us;

static void undo(void);

static void die(const char *what)
{
	fprintf(stderr, "smartio-dma-copy: %s: %s\n", what, strerror(errno));
	undo();
	exit(2);
}

static void at(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void at(char *buf, size_t len, const char *fmt, ...)
{
	char rel[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(buf, len, "%s/%s", mnt, rel);
}

static int put(const char *p, const char *v)
{
	int fd = open(p, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, v, strlen(v)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static void get(const char *p, char *buf, size_t len)
{
	int fd = open(p, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		die(p);
	n = read(fd, buf, len - 1);
	if (n < 0)
		die(p);
	buf[n] = '\0';
	close(fd);
}

static void *map(const char *p, size_t size)
{
	int fd = open(p, O_RDWR);
	void *m;

	if (fd < 0)
		die(p);
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		die(p);
	return m;
}


static void wr64(unsigned off, uint64_t v)
{
	mmio_wr32(bar, off, (uint32_t)v);
	mmio_wr32(bar, off + 4, (uint32_t)(v >> 32));
}

static uint64_t rd64(unsigned off)
{
	return mmio_rd32(bar, off) | (uint64_t)mmio_rd32(bar, off + 4) << 32;
}

/* A segment of ours, mapped for the device: its memory and ioaddr. */
static uint8_t *segment(const char *name, size_t size, uint64_t *io)
{
	char p[512], v[64];

	at(p, sizeof(p), "self/segments/%s", name);
	if (mkdir(p, 0755))
		die(p);
	snprintf(made[made[0][0] ? 1 : 0], sizeof(made[0]), "%s", name);
	at(p, sizeof(p), "self/segments/%s/size", name);
	snprintf(v, sizeof(v), "%zu", size);
	if ((errno = -put(p, v)))
		die(p);
	at(p, sizeof(p), "self/segments/%s/dma/%s", name, devname);
	if (mkdir(p, 0755))
		die(p);
	at(p, sizeof(p), "self/segments/%s/dma/%s/ioaddr", name, devname);
	get(p, v, sizeof(v));
	*io = strtoull(v, NULL, 16);
	at(p, sizeof(p), "self/segments/%s/mem", name);
	return map(p, size);
}

static void drop_segment(const char *name)
{
	char p[512];
	unsigned i;

	at(p, sizeof(p), "self/segments/%s/dma/%s", name, devname);
	rmdir(p);
	at(p, sizeof(p), "self/segments/%s", name);
	rmdir(p);
	for (i = 0; i < 2; i++)
		if (!strcmp(made[i], name))
			made[i][0] = '\0';
}

static void undo(void)
{
	char p[512];
	unsigned i;

	for (i = 0; i < 2; i++)
		if (made[i][0])
			drop_segment(made[i]);
	if (lent_to_us) {
		at(p, sizeof(p), "dev/%s/return", devname);
		put(p, self);
		lent_to_us = 0;
	}
}

static void start(unsigned e, uint64_t src, uint64_t dst, uint32_t len)
{
	wr64(ENG(e) + 0x00, src);
	wr64(ENG(e) + 0x08, dst);
	mmio_wr32(bar, ENG(e) + 0x10, len);
	mmio_wr32(bar, ENG(e) + 0x1c, e);			/* vector e */
	mmio_wr32(bar, ENG(e) + 0x18, 0);			/* forget the last status */
	/* A driver that polls asks for no interrupt: taking one it does not
	 * wait for (a read of irq/<e>) cost more than a 1 MiB transfer. */
	mmio_wr32(bar, ENG(e) + 0x14, polling ? 1 : 3);	/* go [, interrupt] */
}

/* Waits on irq/<e> until engine e is done; returns its status. */
static uint32_t wait_engine(unsigned e)
{
	time_t end = time(NULL) + 20;
	uint32_t st;

	unsigned spins = 0;

	while (!((st = mmio_rd32(bar, ENG(e) + 0x18)) & 2)) {
		struct pollfd p = { .fd = irqfd[e], .events = POLLIN };
		uint32_t count;

		if (polling && ++spins % 4096)
			continue;	/* the clock only now and then */
		if (time(NULL) > end) {
			fprintf(stderr, "smartio-dma-copy: engine %u hangs\n", e);
			exit(1);
		}
		if (!polling && poll(&p, 1, 1000) == 1 &&
		    read(irqfd[e], &count, 4) != 4)
			die("irq read");
	}
	return st;
}

/* A size in numparse.h's grammar ("4096", "64K", "16M"); 0 for anything else. */
static size_t bytes(const char *s)
{
	u64 v;

	return sio_parse_u64(s, strlen(s), 1, &v) || v > SIZE_MAX ? 0 : v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_rate(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

enum mode { ZERO_COPY, BOUNCE, DOUBLE };

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/*
 * One copy, in chunks of `chunk` bytes, chunk i on engine i % n:
 * zero-copy from the segment at src_io into device memory at dev and on
 * to the segment at dst_io; bounce and double from private memory `in`
 * through engine e's buffers (nbuf of them, at bmem / bio + (e * nbuf +
 * k) * chunk) into device memory and back out through them to `out`.
 */
struct plan {
	enum mode mode;
	unsigned n, nbuf;
	size_t size, chunk;
	const uint8_t *in;
	uint8_t *out, *bmem;
	uint64_t src_io, dst_io, bio, dev;
};

/* Chunk i's buffer: CPU and device addresses. */
static size_t slot(const struct plan *p, size_t i)
{
	return ((i % p->n) * p->nbuf + (i / p->n) % p->nbuf) * p->chunk;
}

static size_t chunk_len(const struct plan *p, size_t i)
{
	return min_size(p->chunk, p->size - i * p->chunk);
}

/* Waits for engine e's transfer of chunk busy[e] (if any): 1 on error. */
static int settle(long *busy, unsigned e)
{
	int bad = 0;

	if (busy[e] >= 0)
		bad = (wait_engine(e) & 4) != 0;
	busy[e] = -1;
	return bad;
}

/* The drain of chunk i, come back from the device into its buffer. */
static void drain(const struct plan *p, long i)
{
	if (i >= 0 && p->mode != ZERO_COPY)
		memcpy(p->out + (size_t)i * p->chunk, p->bmem + slot(p, (size_t)i),
		       chunk_len(p, (size_t)i));
}

/* Into the device: fill (bounce, double) and start chunk after chunk. */
static int copy_in(const struct plan *p, long *busy, size_t chunks)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < chunks && !bad; i++) {
		unsigned e = (unsigned)(i % p->n);
		size_t off = i * p->chunk, len = chunk_len(p, i);
		uint64_t from = p->src_io + off;

		if (p->mode != ZERO_COPY) {
			/* One buffer: it is free once its transfer is done. */
			if (p->nbuf == 1)
				bad |= settle(busy, e);
			memcpy(p->bmem + slot(p, i), p->in + off, len);
			from = p->bio + slot(p, i);
		}
		bad |= settle(busy, e);
		start(e, from, p->dev + off, (uint32_t)len);
		busy[e] = (long)i;
	}
	for (i = 0; i < p->n; i++)
		bad |= settle(busy, (unsigned)i);
	return bad;
}

/* Out of the device: start chunk after chunk, drain each come back. */
static int copy_out(const struct plan *p, long *busy, size_t chunks)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < chunks && !bad; i++) {
		unsigned e = (unsigned)(i % p->n);
		size_t off = i * p->chunk;
		long prev = busy[e];
		uint64_t to = p->mode == ZERO_COPY ? p->dst_io + off
						   : p->bio + slot(p, i);

		bad |= settle(busy, e);
		/* One buffer: drained before the next transfer reuses it. */
		if (p->nbuf == 1)
			drain(p, prev);
		start(e, p->dev + off, to, (uint32_t)chunk_len(p, i));
		busy[e] = (long)i;
		/* Two: drained while the engine fills the other. */
		if (p->nbuf == 2)
			drain(p, prev);
	}
	for (i = 0; i < p->n; i++) {
		long prev = busy[i];

		bad |= settle(busy, (unsigned)i);
		drain(p, prev);
	}
	return bad;
}

static int run_copy(const struct plan *p)
{
	long busy[MAX_ENGINES] = { -1, -1, -1, -1 };
	size_t chunks = (p->size + p->chunk - 1) / p->chunk;

	return copy_in(p, busy, chunks) || copy_out(p, busy, chunks);
}

static void msix(int on)
{
	uint8_t cfg[256];
	char p[512];
	unsigned pos, hops = 0;
	uint16_t ctl;
	int fd;

	at(p, sizeof(p), "dev/%s/config", devname);
	fd = open(p, O_RDWR);
	if (fd < 0 || pread(fd, cfg, sizeof(cfg), 0) != (ssize_t)sizeof(cfg))
		die(p);
	for (pos = cfg[0x34]; pos && cfg[pos] != 0x11 && hops < 48; hops++)
		pos = cfg[pos + 1];
	if (!pos || cfg[pos] != 0x11) {
		fprintf(stderr, "smartio-dma-copy: %s has no MSI-X\n", devname);
		exit(2);
	}
	memcpy(&ctl, cfg + pos + 2, 2);
	ctl = on ? ctl | 0x8000 : ctl & 0x7fff;
	if (pwrite(fd, &ctl, 2, pos + 2) != 2)
		die("MSI-X enable");
	close(fd);
}

int main(int argc, char **argv)
{
	size_t size = 4 << 20, chunk = 0, bounce_size = 0, i;
	int chunk_given = 0;
	unsigned engines = 4, e, rounds = 1, r;
	enum mode mode = ZERO_COPY;
	static const char *const mode_names[] = { "zero-copy", "bounce",
						  "double" };
	uint8_t *in = NULL, *out = NULL;
	int opt, fault = 0, borrowed = 0, bad = 0;
	char p[512], buf[256], src_name[32], dst_name[32];
	uint64_t src_io = 0, dst_io = 0, mem_addr, mem_size;
	uint8_t *src, *dst;
	double t, best = 0, first = 0, *rates = NULL;
	double cpu_best = 0, cpu_first = 0, *cpu_rates = NULL;
	uint8_t *devmem = NULL;
	int cpu_ref = 0;

	while ((opt = getopt(argc, argv, "m:d:s:e:M:c:r:pCf")) != -1) {
		switch (opt) {
		case 'm': mnt = optarg; break;
		case 'd': devname = optarg; break;
		case 's': size = bytes(optarg); break;
		case 'c': chunk = bytes(optarg); chunk_given = 1; break;
		case 'e': engines = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'r': rounds = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'M':
			for (mode = ZERO_COPY; mode <= DOUBLE; mode++)
				if (!strcmp(optarg, mode_names[mode]))
					break;
			if (mode > DOUBLE) {
				fprintf(stderr, "smartio-dma-copy: -M: zero-copy, "
						"bounce or double, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'p': polling = 1; break;
		case 'C': cpu_ref = 1; break;
		case 'f': fault = 1; break;
		default:
			fprintf(stderr, "usage: smartio-dma-copy [-m mount] [-d dev] "
					"[-s bytes] [-e engines] [-M zero-copy|bounce|double] "
					"[-c chunk] [-r rounds] [-p] [-C] [-f]\n");
			return 2;
		}
	}
	if (!rounds || rounds > 1000) {
		fprintf(stderr, "smartio-dma-copy: -r: 1 to 1000 rounds\n");
		return 2;
	}
	if (!engines || engines > MAX_ENGINES || !size || size % 4096 ||
	    size > (64u << 20)) {
		fprintf(stderr, "smartio-dma-copy: 1-4 engines, size in pages up to 64M\n");
		return 2;
	}
	if (!chunk_given)
		chunk = min_size(size, 1 << 20);
	if (!chunk || chunk % 4096 || chunk > size) {
		fprintf(stderr, "smartio-dma-copy: -c: chunk in pages, at most the size\n");
		return 2;
	}
	at(p, sizeof(p), "self");
	{
		ssize_t n = readlink(p, buf, sizeof(buf) - 1);
		const char *slash;

		buf[n > 0 ? n : 0] = '\0';
		slash = strrchr(buf, '/');
		snprintf(self, sizeof(self), "%.63s", slash ? slash + 1 : buf);
	}
	at(p, sizeof(p), "dev/%s/node", devname);
	get(p, buf, sizeof(buf));
	buf[strcspn(buf, "\n")] = '\0';
	if (strcmp(buf, self)) {
		at(p, sizeof(p), "dev/%s/borrow", devname);
		get(p, buf, sizeof(buf));
		if (!strstr(buf, self)) {
			if ((errno = -put(p, self)))
				die("borrow");
			borrowed = lent_to_us = 1;
		}
	}
	snprintf(src_name, sizeof(src_name), "dmasrc%d", (int)getpid());
	snprintf(dst_name, sizeof(dst_name), "dmadst%d", (int)getpid());
	if (mode == ZERO_COPY || fault) {
		src = segment(src_name, size, &src_io);
		dst = segment(dst_name, size, &dst_io);
	} else {
		/* One segment of one or two chunks per engine: the bounce
		 * buffers. */
		snprintf(src_name, sizeof(src_name), "dmabnc%d", (int)getpid());
		bounce_size = engines * (mode == DOUBLE ? 2 : 1) * chunk;
		src = segment(src_name, bounce_size, &src_io);
		dst = NULL;
		in = aligned_alloc(4096, size);
		out = aligned_alloc(4096, size);
		if (!in || !out)
			die("private buffers");
	}
	at(p, sizeof(p), "dev/%s/bar0", devname);
	bar = map(p, 1 << 20);
	if (mmio_rd32(bar, 0) != 0x414d4453) {
		fprintf(stderr, "smartio-dma-copy: %s is not a DMA engine\n", devname);
		return 2;
	}
	mem_addr = rd64(0x10);
	mem_size = rd64(0x18);
	if (engines > mmio_rd32(bar, 8) || size > mem_size) {
		fprintf(stderr, "smartio-dma-copy: device too small\n");
		return 2;
	}
	msix(1);
	for (e = 0; e < engines; e++) {
		at(p, sizeof(p), "dev/%s/irq/%u", devname, e);
		irqfd[e] = open(p, O_RDONLY);
		if (irqfd[e] < 0)
			die(p);
	}

	if (fault) {
		uint32_t st;

		start(0, src_io, dst_io + size, 4096);	/* past the segment */
		st = wait_engine(0);
		if (st & 4)
			printf("engine 0: transfer to 0x%llx blocked, error at 0x%llx\n",
			       (unsigned long long)(dst_io + size),
			       (unsigned long long)rd64(ENG(0) + 0x28));
		else
			bad = 1;
	} else {
		uint8_t *from = mode == ZERO_COPY ? src : in;
		uint8_t *to = mode == ZERO_COPY ? dst : out;

		struct plan plan = {
			.mode = mode, .n = engines, .size = size, .chunk = chunk,
			.nbuf = mode == DOUBLE ? 2 : 1, .in = in, .out = out,
			.bmem = src, .src_io = src_io, .dst_io = dst_io,
			.bio = src_io, .dev = mem_addr,
		};

		for (i = 0; i < size; i++)
			from[i] = (uint8_t)(i * 31 + i / 4096);
		rates = calloc(rounds, sizeof(*rates));
		cpu_rates = calloc(rounds, sizeof(*cpu_rates));
		if (!rates || !cpu_rates)
			die("rates");
		if (cpu_ref) {
			at(p, sizeof(p), "dev/%s/bar2", devname);
			devmem = map(p, size);
		}
		for (r = 0; r < rounds && !bad; r++) {
			if (cpu_ref) {
				/* The CPU moves the same bytes the same way. */
				memset(to, 0, size);
				t = now();
				memcpy(devmem, from, size);
				memcpy(to, devmem, size);
				t = 2.0 * (double)size / (now() - t) / 1e6;
				if (memcmp(from, to, size))
					die("cpu reference copy differs");
				cpu_first = r ? cpu_first : t;
				cpu_best = t > cpu_best ? t : cpu_best;
				cpu_rates[r] = t;
			}
			memset(to, 0, size);
			t = now();
			bad = run_copy(&plan);
			t = 2.0 * (double)size / (now() - t) / 1e6;
			if (!bad && memcmp(from, to, size)) {
				fprintf(stderr, "smartio-dma-copy: destination differs\n");
				bad = 1;
			}
			first = r ? first : t;
			best = t > best ? t : best;
			rates[r] = t;
		}
		qsort(rates, rounds, sizeof(*rates), cmp_rate);
		qsort(cpu_rates, rounds, sizeof(*cpu_rates), cmp_rate);
		if (!bad && cpu_ref)
			printf("cpu memcpy through %s memory: %u rounds, first %.1f "
			       "MB/s, median %.1f MB/s, best %.1f MB/s\n", devname,
			       rounds, cpu_first, cpu_rates[rounds / 2], cpu_best);
		if (devmem)
			munmap(devmem, size);
		if (!bad && rounds > 1)
			printf("copied %zu bytes %s -> %s memory -> %s on %u engines, "
			       "%s: verified, %u rounds, first %.1f MB/s, median "
			       "%.1f MB/s, best %.1f MB/s\n", size, self, devname,
			       self, engines, mode_names[mode], rounds, first,
			       rates[rounds / 2], best);
		else if (!bad)
			printf("copied %zu bytes %s -> %s memory -> %s on %u engines, "
			       "%s: verified, %.1f MB/s\n", size, self, devname,
			       self, engines, mode_names[mode], best);
	}
	for (e = 0; e < engines; e++)
		close(irqfd[e]);
	msix(0);
	munmap((void *)bar, 1 << 20);
	if (dst) {
		munmap(src, size);
		munmap(dst, size);
		drop_segment(dst_name);
	} else {
		munmap(src, bounce_size);
	}
	drop_segment(src_name);
	free(in);
	free(out);
	free(rates);
	free(cpu_rates);
	if (borrowed) {
		at(p, sizeof(p), "dev/%s/return", devname);
		put(p, self);
	}
	return bad;
}
