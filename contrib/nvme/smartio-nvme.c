// SPDX-License-Identifier: MIT
/*
 * smartio-nvme: a small userspace NVMe driver that works only through
 * /smartio files (smartio(7)), as SmartIO's section 6 driver works
 * through its API: borrow the controller, map its BAR 0, keep the queues
 * and the data buffers in a segment of this node's memory mapped for the
 * device, and wait for completions on irq/0 (-i) or by polling the
 * completion queue.  It writes blocks with a known pattern and reads them
 * back (or, with -v, only reads and checks them).  With -r it then reads
 * random 4 KiB blocks of that range one at a time, polling without sleep,
 * and prints IOPS and latency percentiles (what make bench compares).
 * With -t NODE/SEGMENT@IOADDR it then has the controller read the blocks
 * once more straight into another node's segment (SmartIO section 4.4:
 * device, driver and memory in three address domains), which that
 * segment's owner mapped for the device (its dma/<dev>/ioaddr, IOADDR)
 * and this node attached, and checks the pattern there; with
 * -t FILE@IOADDR into what FILE maps, such as another device's BAR
 * (peer-to-peer: the device's peers/<dev>/bar<N> gives IOADDR).
 *
 *   smartio-nvme [-m mount] [-d dev] [-l lba] [-n blocks] [-i] [-v]
 *                [-r reads] [-t node/segment@ioaddr | -t file@ioaddr]
 *
 * Plain C and POSIX (the /smartio files through sfiles.c, shared with
 * smartio-nvmeq); no smartio library.  Exit status 0 when every block
 * read back holds the pattern.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "nvmeq.h"
#include "../mmio.h"

#define SEG_SIZE (1u << 20)
#define ASQ 0x0000u		/* segment layout */
#define ACQ 0x1000u
#define IOSQ 0x2000u
#define IOCQ 0x3000u
#define IDENT 0x4000u
#define PRPL 0x5000u
#define WBUF 0x10000u		/* 128K */
#define RBUF 0x40000u		/* 128K */
#define QD 32u
#define CHUNK 64u		/* blocks per command: 32K, a PRP list */

static const char *mnt = "/smartio", *devname = "nvme0";
static struct sfiles sf;
static const char *self = sf.self;
static struct sf_segment seg;
static volatile uint8_t *bar;
static uint8_t *mem;
static uint64_t io;
static int irqfd = -1;
static unsigned msix_cap;	/* MSI-X capability we enabled, or 0 */
static unsigned sq_tail[2], cq_head[2], phase[2];
static unsigned db_stride = 4;	/* 4 << CAP.DSTRD */
static uint16_t next_cid;

static void die(const char *what)
{
	fprintf(stderr, "smartio-nvme: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void path(char *buf, size_t len, const char *fmt, const char *a,
		 const char *b)
{
	char rel[256];

	snprintf(rel, sizeof(rel), fmt, a, b);
	if (sf_path(&sf, buf, len, "%s", rel)) {
		errno = ENAMETOOLONG;
		die(rel);
	}
}

/* mmap of a whole object (size 0) or of its first *size bytes; or exit. */
static void *map(const char *p, size_t *size)
{
	void *m = sf_map_path(p, size);

	if (!m)
		die(p);
	return m;
}


static int spin;	/* -r: poll without sleeping, for latency */

static void nap(void)
{
	struct timespec ts = { 0, 50000 };

	if (spin)
		sched_yield();
	else
		nanosleep(&ts, NULL);
}

static int wait_csts(uint32_t mask, uint32_t want)
{
	time_t end = time(NULL) + 10;

	while ((mmio_rd32(bar, 0x1c) & mask) != want)
		if (time(NULL) > end)
			return -1;
		else
			nap();
	return 0;
}

static int posted(unsigned q)
{
	volatile uint8_t *e = mem + (q ? IOCQ : ACQ) + 16 * cq_head[q];
	uint16_t st;

	memcpy(&st, (const void *)(e + 14), 2);
	return (st & 1) == phase[q];
}

/* Waits for the next completion of queue q: on irq/0, or by polling. */
static int wait_cqe(unsigned q)
{
	time_t end = time(NULL) + 10;

	while (!posted(q)) {
		if (time(NULL) > end)
			return -1;
		if (irqfd >= 0) {
			struct pollfd p = { .fd = irqfd, .events = POLLIN };
			uint32_t count;

			if (poll(&p, 1, 1000) == 1 &&
			    read(irqfd, &count, 4) != 4)
				die("irq read");
		} else {
			nap();
		}
	}
	return 0;
}

static int submit(unsigned q, uint8_t *cmd, uint32_t *result)
{
	uint8_t *slot = mem + (q ? IOSQ : ASQ) + 64 * sq_tail[q];
	volatile uint8_t *e;
	uint32_t dw[4];
	uint16_t cid = ++next_cid;

	memcpy(cmd + 2, &cid, 2);
	memcpy(slot, cmd, 64);
	sq_tail[q] = (sq_tail[q] + 1) % QD;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	mmio_wr32(bar, 0x1000 + 2 * q * db_stride, sq_tail[q]);
	if (wait_cqe(q)) {
		fprintf(stderr, "smartio-nvme: command %#x timed out\n", cmd[0]);
		return -1;
	}
	e = mem + (q ? IOCQ : ACQ) + 16 * cq_head[q];
	memcpy(dw, (const void *)e, 16);
	if (++cq_head[q] == QD) {
		cq_head[q] = 0;
		phase[q] ^= 1;
	}
	mmio_wr32(bar, 0x1000 + (2 * q + 1) * db_stride, cq_head[q]);
	if (result)
		*result = dw[0];
	if ((dw[3] & 0xffff) != cid)
		return -1;
	return (int)((dw[3] >> 17) & 0x7ff);
}

/* Byte j of block lba: what -v checks and what the Python driver writes. */
static uint8_t pattern(uint64_t lba, unsigned j)
{
	return (uint8_t)(lba * 7 + j * 13 + (j >> 8));
}

/* n blocks at lba from or to the device address at (page-aligned). */
static int rw_at(uint8_t op, uint64_t lba, unsigned n, uint64_t at)
{
	uint64_t *list = (uint64_t *)(mem + PRPL), prp2 = 0;
	unsigned pages = (n * 512 + 4095) / 4096, i;
	uint8_t c[64];

	if (pages == 2) {
		prp2 = at + 4096;
	} else if (pages > 2) {
		for (i = 1; i < pages; i++)
			list[i - 1] = at + 4096ull * i;
		prp2 = io + PRPL;
	}
	nvmeq_cmd(c, op, 1, at, prp2, (uint32_t)lba, (uint32_t)(lba >> 32),
		  n - 1);
	return submit(1, c, NULL);
}

/* n blocks at lba from or to offset off of our segment. */
static int rw(uint8_t op, uint64_t lba, unsigned n, unsigned off)
{
	return rw_at(op, lba, n, io + off);
}

/* Index of the first byte of buf (blocks from lba on) off the pattern. */
static size_t pattern_differs(const volatile uint8_t *buf, uint64_t lba,
			      size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pattern(lba + i / 512, (unsigned)(i % 512)))
			break;
	return i;
}

/* -t: another node's segment, mapped for the device by its owner. */
struct target {
	char mem[512];		/* its mem file under the mount */
	uint64_t io;		/* the device's address of it */
	uint8_t *map;
	size_t size;
};

/*
 * node/segment@ioaddr, or FILE@ioaddr for any file that maps the target
 * (a peer device's bar<N>: its peers/<dev>/bar<N> gives ioaddr).
 */
static int parse_target(const char *arg, struct target *t)
{
	const char *at = strrchr(arg, '@'), *slash = strchr(arg, '/');
	char *end;
	int n;

	if (!at || !slash || slash > at || at == slash + 1)
		return -1;
	errno = 0;
	t->io = strtoull(at + 1, &end, 16);
	if (errno || *end || end == at + 1 || t->io % 4096)
		return -1;
	if (arg[0] == '/')
		n = snprintf(t->mem, sizeof(t->mem), "%.*s", (int)(at - arg),
			     arg);
	else if (slash == arg || memchr(slash + 1, '/', (size_t)(at - slash - 1)))
		return -1;
	else
		n = snprintf(t->mem, sizeof(t->mem),
			     "%s/nodes/%.*s/segments/%.*s/mem", mnt,
			     (int)(slash - arg), arg, (int)(at - slash - 1),
			     slash + 1);
	return n > 0 && (size_t)n < sizeof(t->mem) ? 0 : -1;
}

/* Reads [lba, lba + blocks) into t, a chunk at a time, and checks it. */
static int read_into(struct target *t, uint64_t lba, unsigned blocks)
{
	uint64_t done;
	size_t bad;

	if ((uint64_t)blocks * 512 > t->size) {
		fprintf(stderr, "smartio-nvme: %s holds %zu bytes, not %u blocks\n",
			t->mem, t->size, blocks);
		return -1;
	}
	memset(t->map, 0, (size_t)blocks * 512);
	for (done = 0; done < blocks; done += CHUNK) {
		unsigned n = blocks - done < CHUNK ? (unsigned)(blocks - done) : CHUNK;

		if (rw_at(0x02, lba + done, n, t->io + done * 512))
			return -1;
	}
	bad = pattern_differs(t->map, lba, (size_t)blocks * 512);
	if (bad < (size_t)blocks * 512) {
		fprintf(stderr, "smartio-nvme: %s: block %llu differs\n", t->mem,
			(unsigned long long)(lba + bad / 512));
		return -1;
	}
	printf("read %u blocks at %llu through %s into %s at 0x%llx: "
	       "verified\n", blocks, (unsigned long long)lba, devname, t->mem,
	       (unsigned long long)t->io);
	return 0;
}

static unsigned find_cap(const uint8_t *cfg, uint8_t id)
{
	unsigned pos = cfg[0x34], hops;

	for (hops = 0; pos >= 0x40 && pos < 0x100 && hops < 48; hops++) {
		if (cfg[pos] == id)
			return pos;
		pos = cfg[pos + 1];
	}
	return 0;
}

/* Enables MSI-X through config (the core routes it to us); opens irq/0. */
static void setup_irq(void)
{
	char p[512];
	uint8_t cfg[256];
	uint16_t ctl;
	unsigned cap;
	int fd;

	path(p, sizeof(p), "dev/%s/config", devname, "");
	fd = open(p, O_RDWR);
	if (fd < 0 || pread(fd, cfg, sizeof(cfg), 0) != (ssize_t)sizeof(cfg))
		die(p);
	cap = find_cap(cfg, 0x11);
	if (!cap) {
		fprintf(stderr, "smartio-nvme: %s has no MSI-X\n", devname);
		exit(2);
	}
	memcpy(&ctl, cfg + cap + 2, 2);
	ctl |= 0x8000;
	if (pwrite(fd, &ctl, 2, cap + 2) != 2)
		die("enabling MSI-X");
	close(fd);
	msix_cap = cap;
	path(p, sizeof(p), "dev/%s/irq/0", devname, "");
	irqfd = open(p, O_RDONLY);
	if (irqfd < 0)
		die(p);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* n reads of 4 KiB at random 4K-aligned places of [lba, lba + blocks). */
static int random_reads(unsigned long n, uint64_t lba, unsigned blocks)
{
	double *lat = calloc(n, sizeof(*lat)), t0, total;
	unsigned long i;
	unsigned seed = 12345;

	if (!lat)
		die("latencies");
	spin = 1;
	t0 = now_us();
	for (i = 0; i < n; i++) {
		uint64_t at;
		double t;

		seed = seed * 1103515245u + 12345u;
		at = lba + 8ull * ((seed >> 8) % (blocks / 8));
		t = now_us();
		if (rw(0x02, at, 8, RBUF)) {
			free(lat);
			return -1;
		}
		lat[i] = now_us() - t;
	}
	total = now_us() - t0;
	spin = 0;
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("random 4 KiB reads through %s from %s: %lu in %.3f s, "
	       "%.0f IOPS, p50 %.1f us, p99 %.1f us\n", devname, self, n,
	       total / 1e6, (double)n / (total / 1e6), lat[n / 2],
	       lat[n * 99 / 100]);
	free(lat);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: smartio-nvme [-m mount] [-d dev] [-l lba] "
			"[-n blocks] [-i] [-v] [-r reads] "
			"[-t node/segment@ioaddr]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t lba = 0, done, nsze;
	unsigned long reads = 0;
	unsigned blocks = 64, i;
	int opt, use_irq = 0, verify_only = 0, lender, borrowed = 0, bad = 0;
	char p[512], buf[256], rel[128];
	size_t size = 0;
	struct target target = { .map = NULL };
	const char *target_arg = NULL;
	uint8_t c[64];

	while ((opt = getopt(argc, argv, "m:d:l:n:ivr:t:")) != -1) {
		switch (opt) {
		case 'm': mnt = optarg; break;
		case 'd': devname = optarg; break;
		case 'l': lba = strtoull(optarg, NULL, 0); break;
		case 'n': blocks = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'i': use_irq = 1; break;
		case 'v': verify_only = 1; break;
		case 't': target_arg = optarg; break;
		case 'r': {
			char *end;

			errno = 0;
			reads = strtoul(optarg, &end, 0);
			if (errno || *end || !reads || reads > 10000000)
				usage();
			break;
		}
		default: usage();
		}
	}
	if (optind != argc || !blocks || (reads && blocks < 8))
		usage();
	if (target_arg && parse_target(target_arg, &target)) {
		fprintf(stderr, "smartio-nvme: -t wants node/segment@ioaddr "
				"or /file@ioaddr (hex, page-aligned), not '%s'\n",
			target_arg);
		return 2;
	}
	errno = -sf_init(&sf, mnt);
	if (errno)
		die(mnt);
	snprintf(rel, sizeof(rel), "dev/%s/node", devname);
	if ((errno = -sf_get(&sf, rel, buf, sizeof(buf))))
		die(rel);
	lender = !strcmp(buf, self);

	/* Borrow (unless local or already ours). */
	if (!lender) {
		snprintf(rel, sizeof(rel), "dev/%s/borrow", devname);
		if ((errno = -sf_get(&sf, rel, buf, sizeof(buf))))
			die(rel);
		if (!strstr(buf, self)) {
			errno = -sf_put(&sf, rel, self);
			if (errno)
				die("borrow");
			borrowed = 1;
		}
	}
	/* Queues and buffers: a segment of our RAM, mapped for the device. */
	snprintf(buf, sizeof(buf), "nvmedrv%d", (int)getpid());
	errno = -sf_segment_make(&sf, &seg, buf, SEG_SIZE, devname);
	if (errno)
		die("the queue segment");
	mem = seg.mem;
	io = seg.io;
	path(p, sizeof(p), "dev/%s/bar0", devname, "");
	bar = map(p, &size);
	if (target_arg)
		target.map = map(target.mem, &target.size);
	errno = -sf_enable_device(&sf, devname);
	if (errno)
		die("enabling the device");
	if (use_irq)
		setup_irq();

	/* Controller bring-up (NVMe 1.4 section 7.6.1). */
	db_stride = 4u << (mmio_rd32(bar, 0x04) & 0xf);	/* CAP.DSTRD */
	mmio_wr32(bar, 0x14, 0);
	if (wait_csts(3, 0))
		goto timeout;
	memset(mem, 0, 0x6000);
	phase[0] = phase[1] = 1;
	mmio_wr32(bar, 0x24, (QD - 1) << 16 | (QD - 1));
	mmio_wr32(bar, 0x28, (uint32_t)(io + ASQ));
	mmio_wr32(bar, 0x2c, (uint32_t)((io + ASQ) >> 32));
	mmio_wr32(bar, 0x30, (uint32_t)(io + ACQ));
	mmio_wr32(bar, 0x34, (uint32_t)((io + ACQ) >> 32));
	mmio_wr32(bar, 0x14, 1 | 6u << 16 | 4u << 20);
	if (wait_csts(3, 1))
		goto timeout;
	nvmeq_cmd(c, 0x06, 0, io + IDENT, 0, 1, 0, 0);
	if (submit(0, c, NULL))
		goto failed;
	printf("controller: %.40s serial %.20s\n", (char *)mem + IDENT + 24,
	       (char *)mem + IDENT + 4);
	nvmeq_cmd(c, 0x06, 1, io + IDENT, 0, 0, 0, 0);
	if (submit(0, c, NULL))
		goto failed;
	memcpy(&nsze, mem + IDENT, 8);
	if (lba + blocks > nsze) {
		fprintf(stderr, "smartio-nvme: namespace has %llu blocks\n",
			(unsigned long long)nsze);
		bad = 1;
		goto out;
	}
	nvmeq_cmd(c, 0x05, 0, io + IOCQ, 0, (QD - 1) << 16 | 1,
		  1 | (use_irq ? 2 : 0), 0);
	if (submit(0, c, NULL))
		goto failed;
	nvmeq_cmd(c, 0x01, 0, io + IOSQ, 0, (QD - 1) << 16 | 1, 1u << 16 | 1, 0);
	if (submit(0, c, NULL))
		goto failed;

	for (done = 0; done < blocks; done += CHUNK) {
		unsigned n = blocks - done < CHUNK ? (unsigned)(blocks - done) : CHUNK;
		uint64_t at = lba + done;

		if (!verify_only) {
			for (i = 0; i < n * 512; i++)
				mem[WBUF + i] = pattern(at + i / 512, i % 512);
			if (rw(0x01, at, n, WBUF))
				goto failed;
		}
		memset(mem + RBUF, 0, n * 512);
		if (rw(0x02, at, n, RBUF))
			goto failed;
		i = (unsigned)pattern_differs(mem + RBUF, at, n * 512);
		if (i < n * 512) {
			fprintf(stderr, "smartio-nvme: block %llu differs\n",
				(unsigned long long)(at + i / 512));
			bad = 1;
			break;
		}
	}
	if (!bad && reads && random_reads(reads, lba, blocks))
		goto failed;
	if (!bad && target_arg && read_into(&target, lba, blocks))
		goto failed;
	nvmeq_cmd(c, 0x00, 1, 0, 0, 0, 0, 0);
	if (!bad && submit(1, c, NULL))
		goto failed;
	if (!bad)
		printf("%s %u blocks at %llu through %s from %s: verified (%s)\n",
		       verify_only ? "read" : "wrote and read back", blocks,
		       (unsigned long long)lba, devname, self,
		       use_irq ? "interrupts" : "polling");
	goto out;
timeout:
	fprintf(stderr, "smartio-nvme: controller not ready\n");
	bad = 1;
	goto out;
failed:
	fprintf(stderr, "smartio-nvme: a command failed\n");
	bad = 1;
out:
	/* Leave things as found: controller off, mappings gone, returned. */
	mmio_wr32(bar, 0x14, 0);
	wait_csts(1, 0);
	munmap((void *)bar, size);
	if (target.map)
		munmap(target.map, target.size);
	if (irqfd >= 0)
		close(irqfd);
	if (msix_cap) {		/* interrupts off: the vectors go back */
		uint16_t ctl;
		int fd;

		path(p, sizeof(p), "dev/%s/config", devname, "");
		fd = open(p, O_RDWR);
		if (fd >= 0 && pread(fd, &ctl, 2, msix_cap + 2) == 2) {
			ctl &= (uint16_t)~0x8000;
			if (pwrite(fd, &ctl, 2, msix_cap + 2) != 2)
				bad = 1;
		}
		if (fd >= 0)
			close(fd);
	}
	sf_segment_remove(&sf, &seg, devname);
	if (borrowed) {
		snprintf(rel, sizeof(rel), "dev/%s/return", devname);
		sf_put(&sf, rel, self);
	}
	return bad;
}
