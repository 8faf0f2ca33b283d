// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The simulated NVMe controller, driven through libsmartio the way a
 * userspace driver on a borrowing node drives it: nvme0 lives on host0 and
 * is borrowed by host3, whose driver maps the controller's BAR through its
 * NTB window, keeps queues and buffers in a segment of its own RAM mapped
 * for the device, and moves blocks that are written to and read back from
 * the namespace.  Every byte the controller moves walks the translation
 * chain, so a buffer outside the device's window fails the command.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* Layout of the driver's segment (device-side offsets from ioaddr). */
#define SEG_SIZE (1u << 20)
#define ASQ_OFF 0x0000u
#define ACQ_OFF 0x1000u
#define IOSQ_OFF 0x2000u
#define IOCQ_OFF 0x3000u
#define IDENT_OFF 0x4000u
#define PRPL_OFF 0x5000u
#define DATA_OFF 0x10000u	/* 128K written from here */
#define BACK_OFF 0x40000u	/* and read back here */
#define QDEPTH 64u

struct drv {
	struct smartio *h;
	char fabric[64];
	unsigned host0, host3, nvme0;
	volatile uint8_t *bar;
	uint64_t bar_size;
	uint8_t *mem;		/* the segment, as host3's CPU sees it */
	uint64_t io;		/* the segment, as nvme0 sees it */
	uint16_t cid;
	unsigned sq_tail[2], cq_head[2], phase[2];
};

static uint32_t rd32(struct drv *d, unsigned off)
{
	return __atomic_load_n((volatile uint32_t *)(d->bar + off),
			       __ATOMIC_ACQUIRE);
}

/* BAR 0 offset of queue q's submission (cq 0) or completion doorbell. */
static unsigned doorbell(struct drv *d, unsigned q, int cq)
{
	return 0x1000 + (2 * q + (cq ? 1 : 0)) * (4u << (rd32(d, 0x04) & 0xf));
}

static void wr32(struct drv *d, unsigned off, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(d->bar + off), v,
			 __ATOMIC_RELEASE);
}

static void wr64(struct drv *d, unsigned off, uint64_t v)
{
	wr32(d, off, (uint32_t)v);
	wr32(d, off + 4, (uint32_t)(v >> 32));
}

static void pause_a_little(void)
{
	struct timespec ts = { 0, 200000 };

	nanosleep(&ts, NULL);
}

/* Waits (at most 20 s: a hang, not a timing check) for cond(d) != 0. */
static int wait_for(struct drv *d, int (*cond)(struct drv *))
{
	time_t end = time(NULL) + 20;

	while (!cond(d)) {
		if (time(NULL) > end)
			return 0;
		pause_a_little();
	}
	return 1;
}

static int ready(struct drv *d) { return rd32(d, 0x1c) & 1; }
static int not_ready(struct drv *d) { return !(rd32(d, 0x1c) & 3); }

static void cmd_init(uint8_t *c, uint8_t opcode, uint16_t cid, uint32_t nsid)
{
	memset(c, 0, 64);
	c[0] = opcode;
	memcpy(c + 2, &cid, 2);
	memcpy(c + 4, &nsid, 4);
}

static void cmd_put32(uint8_t *c, unsigned dw, uint32_t v)
{
	memcpy(c + 4 * dw, &v, 4);
}

static void cmd_put64(uint8_t *c, unsigned dw, uint64_t v)
{
	memcpy(c + 4 * dw, &v, 8);
}

static volatile uint8_t *cqe(struct drv *d, unsigned q)
{
	return d->mem + (q ? IOCQ_OFF : ACQ_OFF) + 16 * d->cq_head[q];
}

static int cqe_posted(struct drv *d, unsigned q)
{
	uint16_t st;

	memcpy(&st, (const void *)(cqe(d, q) + 14), 2);
	return (st & 1) == d->phase[q];
}

static struct drv *g_waiting;
static unsigned g_queue;

static int posted(struct drv *d)
{
	(void)d;
	return cqe_posted(g_waiting, g_queue);
}

/* Submits c on queue q and waits for its completion; returns the status
 * field (SC | SCT << 8) and the result dword. */
static int submit(struct drv *d, unsigned q, uint8_t *c, uint32_t *result)
{
	uint8_t *slot = d->mem + (q ? IOSQ_OFF : ASQ_OFF) + 64 * d->sq_tail[q];
	volatile uint8_t *e;
	uint32_t dw[4];
	uint16_t cid;

	cid = ++d->cid;
	memcpy(c + 2, &cid, 2);
	memcpy(slot, c, 64);
	d->sq_tail[q] = (d->sq_tail[q] + 1) % QDEPTH;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr32(d, doorbell(d, q, 0), d->sq_tail[q]);
	g_waiting = d;
	g_queue = q;
	assert_true(wait_for(d, posted));
	e = cqe(d, q);
	memcpy(dw, (const void *)e, 16);
	assert_int_equal(dw[3] & 0xffff, cid);
	assert_int_equal(dw[2] >> 16, q);
	if (++d->cq_head[q] == QDEPTH) {
		d->cq_head[q] = 0;
		d->phase[q] ^= 1;
	}
	wr32(d, doorbell(d, q, 1), d->cq_head[q]);
	if (result)
		*result = dw[0];
	return (int)((dw[3] >> 17) & 0x7ff);
}

/*
 * host3 far from nvme0: its path crosses two adapters and four cascaded
 * switches whose chips take 50 us each (SmartIO section 7.1.3's hops,
 * stretched), so that every read the controller makes of host3's memory,
 * a command's fetch first, takes a 600 us round trip.
 */
#define FAR_TOPO \
	"switch s0 ports=4 latency=50000\n" \
	"switch s1 ports=4 latency=50000\n" \
	"switch s2 ports=4 latency=50000\n" \
	"switch s3 ports=4 latency=50000\n" \
	"cascade s0:3 s1:2\n" \
	"cascade s1:3 s2:2\n" \
	"cascade s2:3 s3:2\n" \
	"node host0 id=0 ram=64M\n" \
	"node host3 id=3 ram=64M\n" \
	"adapter host0 ntb0 switch=s0:0 latency=50000\n" \
	"adapter host3 ntb0 switch=s3:0 latency=50000\n" \
	"device host0 nvme0 bdf=0000:01:00.0 vendor=0x1b36 device=0x0010 " \
	"class=0x010802 config=4096 model=nvme bar0=128K,64\n"
#define FAR_ROUND_TRIP_NS (2 * 6 * 50000ull)

/* host3 borrows nvme0 of the topology (the built-in one if NULL). */
static int open_drv(void **state, const char *topo)
{
	static struct drv d;
	char path[256];
	uint64_t size;

	memset(&d, 0, sizeof(d));
	d.h = th_open(topo, NULL, d.fabric, sizeof(d.fabric));
	d.host0 = th_node(d.h, "host0");
	d.host3 = th_node(d.h, "host3");
	d.nvme0 = th_dev(d.h, "nvme0");
	assert_int_equal(smartio_lend(d.h, d.nvme0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(d.h, d.nvme0, d.host3), 0);
	assert_int_equal(smartio_resolve_bar(d.h, d.host3, d.nvme0, 0, path,
					     sizeof(path), &d.bar_size), 0);
	d.bar = th_map_file(path, d.bar_size);
	assert_int_equal(smartio_segment_create(d.h, d.host3, "q"), 0);
	assert_int_equal(smartio_segment_set_size(d.h, d.host3, "q", SEG_SIZE), 0);
	assert_int_equal(smartio_segment_dma_map(d.h, d.host3, "q", d.nvme0,
						 &d.io), 0);
	assert_int_equal(smartio_resolve_segment(d.h, d.host3, d.host3, "q",
						 path, sizeof(path), &size), 0);
	d.mem = th_map_file(path, size);
	*state = &d;
	return 0;
}

static int setup(void **state)
{
	return open_drv(state, NULL);
}

static int setup_far(void **state)
{
	return open_drv(state, FAR_TOPO);
}

static int teardown(void **state)
{
	struct drv *d = *state;

	char dir[300];
	struct stat st;

	munmap((void *)d->bar, d->bar_size);
	munmap(d->mem, SEG_SIZE);
	snprintf(dir, sizeof(dir), "%s", smartio_fabric_dir(d->h));
	smartio_close(d->h);
	/* The last close takes the namespace file with the fabric. */
	assert_int_equal(stat(dir, &st), -1);
	return 0;
}

static void enable_controller(struct drv *d)
{
	wr32(d, 0x14, 0);
	assert_true(wait_for(d, not_ready));
	memset(d->mem, 0, 0x4000);
	memset(d->sq_tail, 0, sizeof(d->sq_tail));
	memset(d->cq_head, 0, sizeof(d->cq_head));
	d->phase[0] = d->phase[1] = 1;
	wr32(d, 0x24, (QDEPTH - 1) << 16 | (QDEPTH - 1));
	wr64(d, 0x28, d->io + ASQ_OFF);
	wr64(d, 0x30, d->io + ACQ_OFF);
	wr32(d, 0x14, 1 | 6u << 16 | 4u << 20);
	assert_true(wait_for(d, ready));
}

static void create_io_queues(struct drv *d)
{
	uint8_t c[64];

	cmd_init(c, 0x05, 0, 0);			/* Create I/O CQ 1 */
	cmd_put64(c, 6, d->io + IOCQ_OFF);
	cmd_put32(c, 10, (QDEPTH - 1) << 16 | 1);
	cmd_put32(c, 11, 1 | 2);			/* contiguous, irq on */
	assert_int_equal(submit(d, 0, c, NULL), 0);
	cmd_init(c, 0x01, 0, 0);			/* Create I/O SQ 1 */
	cmd_put64(c, 6, d->io + IOSQ_OFF);
	cmd_put32(c, 10, (QDEPTH - 1) << 16 | 1);
	cmd_put32(c, 11, 1u << 16 | 1);
	assert_int_equal(submit(d, 0, c, NULL), 0);
}

/* Read (2) or Write (1) of nblocks at lba, buffer at segment offset off. */
static int rw(struct drv *d, uint8_t op, uint64_t lba, unsigned nblocks,
	      unsigned off)
{
	uint64_t bytes = (uint64_t)nblocks * 512, pages = (bytes + 4095) / 4096;
	uint8_t c[64];
	unsigned i;

	cmd_init(c, op, 0, 1);
	cmd_put64(c, 6, d->io + off);
	if (pages == 2) {
		cmd_put64(c, 8, d->io + off + 4096);
	} else if (pages > 2) {
		uint64_t *list = (uint64_t *)(d->mem + PRPL_OFF);

		for (i = 1; i < pages; i++)
			list[i - 1] = d->io + off + 4096ull * i;
		cmd_put64(c, 8, d->io + PRPL_OFF);
	}
	cmd_put64(c, 10, lba);
	cmd_put32(c, 12, nblocks - 1);
	return submit(d, 1, c, NULL);
}

static void test_registers_after_power_on(void **state)
{
	struct drv *d = *state;
	uint64_t cap = rd32(d, 0) | (uint64_t)rd32(d, 4) << 32;

	assert_int_equal(cap & 0xffff, 1023);		/* MQES */
	assert_true(cap >> 37 & 1);			/* NVM command set */
	/* 256K BAR 0: doorbell stride 2K, a 4K page per queue pair. */
	assert_int_equal(d->bar_size, 256 << 10);
	assert_int_equal(cap >> 32 & 0xf, 9);		/* DSTRD */
	assert_int_equal(rd32(d, 0x08), 0x00010400);	/* 1.4 */
}

/*
 * A controller with the smallest BAR 0 (16K) packs its doorbells (stride 4,
 * CAP.DSTRD 0) and keeps the MSI-X table at 0x2000; an Identify through
 * the admin doorbells at 0x1000 / 0x1004 completes.
 */
static void test_small_bar0_packs_the_doorbells(void **state)
{
	char fabric[64], path[256];
	struct smartio *h = th_open(
		"fabric luts=16 requesters=8 reserved=2 window=256M\n"
		"node host0 id=0 ram=64M\nnode host1 id=1 ram=64M\n"
		"adapter host0 ntb0 peers=all\nadapter host1 ntb0 peers=all\n"
		"device host0 nvme0 bdf=0000:01:00.0 vendor=0x1b36 device=0x0010 "
		"class=0x010802 config=4096 model=nvme bar0=16K,64\n",
		NULL, fabric, sizeof(fabric));
	unsigned host1 = th_node(h, "host1"), dev = th_dev(h, "nvme0");
	volatile uint32_t *bar;
	uint64_t size, io;
	uint32_t table, dw3 = 0;
	uint8_t *mem;
	time_t end;

	(void)state;
	assert_int_equal(smartio_lend(h, dev, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h, dev, host1), 0);
	assert_int_equal(smartio_resolve_bar(h, host1, dev, 0, path,
					     sizeof(path), &size), 0);
	assert_int_equal(size, 16 << 10);
	bar = th_map_file(path, size);
	assert_int_equal(bar[1] & 0xf, 0);		/* CAP.DSTRD */
	assert_int_equal(smartio_config_read(h, dev, host1, 0x70 + 4, &table,
					     4), 4);
	assert_int_equal(table, 0x2000);
	assert_int_equal(smartio_segment_create(h, host1, "q"), 0);
	assert_int_equal(smartio_segment_set_size(h, host1, "q", 1 << 20), 0);
	assert_int_equal(smartio_segment_dma_map(h, host1, "q", dev, &io), 0);
	assert_int_equal(smartio_resolve_segment(h, host1, host1, "q", path,
						 sizeof(path), &size), 0);
	mem = th_map_file(path, size);
	bar[0x24 / 4] = 1u << 16 | 1;			/* AQA: 2 + 2 entries */
	bar[0x28 / 4] = (uint32_t)io;
	bar[0x2c / 4] = (uint32_t)(io >> 32);
	bar[0x30 / 4] = (uint32_t)(io + 0x1000);
	bar[0x34 / 4] = (uint32_t)((io + 0x1000) >> 32);
	bar[0x14 / 4] = 1 | 6u << 16 | 4u << 20;
	memset(mem, 0, 64);
	mem[0] = 0x06;					/* Identify */
	mem[2] = 0x2a;					/* cid */
	mem[4] = 1;					/* nsid */
	memcpy(mem + 24, &(uint64_t){ io + 0x2000 }, 8);
	end = time(NULL) + 20;
	while (!(bar[0x1c / 4] & 1))			/* CSTS.RDY */
		assert_true(time(NULL) <= end);
	bar[0x1000 / 4] = 1;				/* SQ 0 tail */
	while (!((dw3 = __atomic_load_n((uint32_t *)(mem + 0x1000 + 12),
					 __ATOMIC_ACQUIRE)) >> 16 & 1))
		assert_true(time(NULL) <= end);
	assert_int_equal(dw3 & 0xffff, 0x2a);
	assert_int_equal(dw3 >> 17 & 0x7ff, 0);		/* success */
	bar[0x1004 / 4] = 1;				/* CQ 0 head */
	smartio_close(h);
}

static void test_identify_through_a_borrowed_controller(void **state)
{
	struct drv *d = *state;
	uint8_t c[64];
	uint64_t nsze;
	uint16_t vid;

	enable_controller(d);
	cmd_init(c, 0x06, 0, 0);
	cmd_put64(c, 6, d->io + IDENT_OFF);
	cmd_put32(c, 10, 1);				/* controller */
	assert_int_equal(submit(d, 0, c, NULL), 0);
	memcpy(&vid, d->mem + IDENT_OFF, 2);
	assert_int_equal(vid, 0x1b36);
	assert_memory_equal(d->mem + IDENT_OFF + 24, "smartio simulated NVMe", 22);
	assert_int_equal(d->mem[IDENT_OFF + 512], 0x66);
	cmd_init(c, 0x06, 0, 1);
	cmd_put64(c, 6, d->io + IDENT_OFF);
	cmd_put32(c, 10, 0);				/* namespace 1 */
	assert_int_equal(submit(d, 0, c, NULL), 0);
	memcpy(&nsze, d->mem + IDENT_OFF, 8);
	assert_int_equal(nsze, (64u << 20) / 512);
	cmd_init(c, 0x06, 0, 2);
	cmd_put64(c, 6, d->io + IDENT_OFF);
	assert_int_equal(submit(d, 0, c, NULL), 0x0b);	/* no namespace 2 */
	cmd_init(c, 0x7f, 0, 0);
	assert_int_equal(submit(d, 0, c, NULL), 0x01);	/* bad opcode */
}

static void test_blocks_written_and_read_back(void **state)
{
	struct drv *d = *state;
	unsigned i, n;
	uint8_t c[64];
	uint32_t res = 0;

	enable_controller(d);
	cmd_init(c, 0x09, 0, 0);			/* Number of Queues */
	cmd_put32(c, 10, 0x07);
	cmd_put32(c, 11, 0);
	assert_int_equal(submit(d, 0, c, &res), 0);
	assert_true((res & 0xffff) >= 1);
	create_io_queues(d);
	srand(42);
	for (i = 0; i < 128 * 1024; i++)
		d->mem[DATA_OFF + i] = (uint8_t)rand();
	/* One page (PRP1), two pages (PRP2), a PRP list (32 pages). */
	for (n = 0; n < 3; n++) {
		unsigned blocks = n == 0 ? 8 : n == 1 ? 16 : 256;
		uint64_t lba = 1000 + 2000 * n;

		memset(d->mem + BACK_OFF, 0, blocks * 512);
		assert_int_equal(rw(d, 0x01, lba, blocks, DATA_OFF), 0);
		assert_int_equal(rw(d, 0x02, lba, blocks, BACK_OFF), 0);
		assert_memory_equal(d->mem + BACK_OFF, d->mem + DATA_OFF,
				    blocks * 512);
	}
	cmd_init(c, 0x00, 0, 1);			/* Flush */
	assert_int_equal(submit(d, 1, c, NULL), 0);
	/* The last block of the namespace, then one past it. */
	assert_int_equal(rw(d, 0x01, (64u << 20) / 512 - 1, 1, DATA_OFF), 0);
	assert_int_equal(rw(d, 0x02, (64u << 20) / 512 - 1, 2, BACK_OFF), 0x80);
	/* More than MDTS (128K) in one command. */
	assert_int_equal(rw(d, 0x02, 0, 257, BACK_OFF), 0x02);
}

static void test_data_survives_a_controller_reset(void **state)
{
	struct drv *d = *state;

	enable_controller(d);
	create_io_queues(d);
	memset(d->mem + DATA_OFF, 0x5a, 4096);
	assert_int_equal(rw(d, 0x01, 77, 8, DATA_OFF), 0);
	enable_controller(d);
	create_io_queues(d);
	memset(d->mem + BACK_OFF, 0, 4096);
	assert_int_equal(rw(d, 0x02, 77, 8, BACK_OFF), 0);
	assert_memory_equal(d->mem + BACK_OFF, d->mem + DATA_OFF, 4096);
}

/* A buffer the device has no mapping for: blocked, counted, reported. */
static void test_dma_outside_the_window_fails_the_command(void **state)
{
	struct drv *d = *state;
	uint64_t cur = smartio_event_cursor(d->h);
	uint64_t blocked = smartio_blocked(d->h, d->host3);
	uint8_t c[64];

	enable_controller(d);
	create_io_queues(d);
	cmd_init(c, 0x02, 0, 1);
	cmd_put64(c, 6, d->io + SEG_SIZE);		/* just past the segment */
	cmd_put64(c, 10, 0);
	cmd_put32(c, 12, 7);
	assert_int_equal(submit(d, 1, c, NULL), 0x04);	/* data transfer error */
	assert_true(smartio_blocked(d->h, d->host3) > blocked);
	assert_true(th_saw_event(d->h, &cur, "dma-fault", "dev/nvme0"));
	/* The controller keeps working. */
	assert_int_equal(rw(d, 0x02, 0, 8, BACK_OFF), 0);
}

static void test_queue_commands_checked(void **state)
{
	struct drv *d = *state;
	uint8_t c[64];

	enable_controller(d);
	create_io_queues(d);
	cmd_init(c, 0x05, 0, 0);			/* CQ 1 exists */
	cmd_put64(c, 6, d->io + IOCQ_OFF);
	cmd_put32(c, 10, (QDEPTH - 1) << 16 | 1);
	cmd_put32(c, 11, 1);
	assert_int_equal(submit(d, 0, c, NULL), 0x101);
	cmd_init(c, 0x01, 0, 0);			/* SQ 2 on missing CQ 5 */
	cmd_put64(c, 6, d->io + 0x6000);
	cmd_put32(c, 10, (QDEPTH - 1) << 16 | 2);
	cmd_put32(c, 11, 5u << 16 | 1);
	assert_int_equal(submit(d, 0, c, NULL), 0x100);
	cmd_init(c, 0x04, 0, 0);			/* CQ 1 still has SQ 1 */
	cmd_put32(c, 10, 1);
	assert_int_equal(submit(d, 0, c, NULL), 0x10c);
	cmd_init(c, 0x00, 0, 0);
	cmd_put32(c, 10, 1);
	assert_int_equal(submit(d, 0, c, NULL), 0);
	cmd_init(c, 0x04, 0, 0);
	cmd_put32(c, 10, 1);
	assert_int_equal(submit(d, 0, c, NULL), 0);
}

/*
 * 31 I/O queue pairs, one per client of a shared controller (SmartIO
 * section 6.2: up to 30 clients and a manager): Number of Queues says so,
 * queue 31 (doorbells in the last page before the MSI-X table) is
 * created and used, and queue 32 is refused.
 */
static void test_thirty_one_io_queue_pairs(void **state)
{
	struct drv *d = *state;
	uint32_t result = 0;
	uint8_t c[64];

	enable_controller(d);
	cmd_init(c, 0x0a, 0, 0);			/* Get Features */
	cmd_put32(c, 10, 0x07);				/* Number of Queues */
	assert_int_equal(submit(d, 0, c, &result), 0);
	assert_int_equal(result, 30u << 16 | 30u);	/* zero's based */
	cmd_init(c, 0x05, 0, 0);			/* Create I/O CQ 32 */
	cmd_put64(c, 6, d->io + IOCQ_OFF);
	cmd_put32(c, 10, (QDEPTH - 1) << 16 | 32);
	cmd_put32(c, 11, 1);
	assert_int_equal(submit(d, 0, c, NULL), 0x101);
	cmd_put32(c, 10, (QDEPTH - 1) << 16 | 31);	/* 31 */
	assert_int_equal(submit(d, 0, c, NULL), 0);
	cmd_init(c, 0x01, 0, 0);			/* its SQ 31 */
	cmd_put64(c, 6, d->io + IOSQ_OFF);
	cmd_put32(c, 10, (QDEPTH - 1) << 16 | 31);
	cmd_put32(c, 11, 31u << 16 | 1);
	assert_int_equal(submit(d, 0, c, NULL), 0);
	/* A Flush on it, completed on CQ 31 with SQ id 31. */
	memset(d->mem + IOCQ_OFF, 0, 16);
	cmd_init(c, 0x00, 0x31, 1);
	memcpy(d->mem + IOSQ_OFF, c, 64);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr32(d, doorbell(d, 31, 0), 1);
	d->cq_head[1] = 0;
	d->phase[1] = 1;
	g_waiting = d;
	g_queue = 1;	/* the CQ entry where queue 1's would be */
	assert_true(wait_for(d, posted));
	memcpy(&result, (const void *)(d->mem + IOCQ_OFF + 8), 4);
	assert_int_equal(result >> 16, 31);		/* SQ identifier */
	wr32(d, doorbell(d, 31, 1), 1);
}

static uint64_t driver_errors(struct drv *d)
{
	struct smartio_device_info di;

	assert_int_equal(smartio_device_info(d->h, d->nvme0, &di), 0);
	return di.stats.driver_errors;
}

static uint64_t g_errors_want;

static int errors_counted(struct drv *d)
{
	return driver_errors(d) >= g_errors_want;
}

/* Lines of the file at fd (rewound) that contain s. */
static int lines_with(int fd, const char *s)
{
	char buf[8192], *line, *save;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	int found = 0;

	assert_true(n >= 0);
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		found += strstr(line, s) != NULL;
	return found;
}

/*
 * A driver that breaks the controller's rules (a tail beyond its queue, the
 * doorbell of a queue never created, a misaligned PRP list) is counted in
 * the device's driver_errors, each time, and logged on stderr once per
 * kind, like QEMU's guest-error log; the controller acts as before (the
 * doorbell is not acted on, the command fails with Invalid Field) and goes
 * on serving a driver that puts things right.
 */
static void test_driver_errors_logged_once_and_counted(void **state)
{
	struct drv *d = *state;
	char path[] = "/tmp/nvme-model-log.XXXXXX";
	int log = mkstemp(path), saved = dup(2);
	uint64_t base;
	uint8_t c[64];

	assert_true(log >= 0 && saved >= 0);
	unlink(path);
	enable_controller(d);
	create_io_queues(d);
	base = driver_errors(d);
	fflush(stderr);
	assert_true(dup2(log, 2) == 2);

	wr32(d, doorbell(d, 1, 0), QDEPTH + 3);	/* beyond SQ 1's entries */
	g_errors_want = base + 1;
	assert_true(wait_for(d, errors_counted));
	wr32(d, doorbell(d, 1, 0), QDEPTH + 4);	/* again: counted, not logged */
	g_errors_want = base + 2;
	assert_true(wait_for(d, errors_counted));
	wr32(d, doorbell(d, 1, 0), d->sq_tail[1]);	/* put right */
	assert_int_equal(rw(d, 0x02, 0, 8, BACK_OFF), 0);

	wr32(d, doorbell(d, 3, 0), 1);		/* SQ 3 was never created */
	g_errors_want = base + 3;
	assert_true(wait_for(d, errors_counted));
	wr32(d, doorbell(d, 3, 0), 0);

	cmd_init(c, 0x02, 0, 1);		/* 3 pages, PRP list at +4 */
	cmd_put64(c, 6, d->io + BACK_OFF);
	cmd_put64(c, 8, d->io + PRPL_OFF + 4);
	cmd_put64(c, 10, 0);
	cmd_put32(c, 12, 23);
	assert_int_equal(submit(d, 1, c, NULL), 0x02);
	assert_int_equal(driver_errors(d), base + 4);

	fflush(stderr);
	assert_true(dup2(saved, 2) == 2);
	close(saved);
	assert_int_equal(lines_with(log, "nvme0: driver error"), 3);
	assert_int_equal(lines_with(log, "SQ tail doorbell of queue 1 set to"), 1);
	assert_int_equal(lines_with(log, "queue 3, which does not exist"), 1);
	assert_int_equal(lines_with(log, "not 8-byte aligned"), 1);
	close(log);
	/* Still serving. */
	assert_int_equal(rw(d, 0x02, 0, 8, BACK_OFF), 0);
	assert_int_equal(driver_errors(d), base + 4);
}

/* Offset of capability id in d's configuration space, read as host3. */
static unsigned find_cap(struct drv *d, uint8_t id)
{
	uint8_t cfg[256];
	unsigned pos, hops;

	assert_int_equal(smartio_config_read(d->h, d->nvme0, d->host3, 0, cfg,
					     sizeof(cfg)), (int)sizeof(cfg));
	for (pos = cfg[0x34], hops = 0; pos && hops < 48; hops++) {
		if (cfg[pos] == id)
			return pos;
		pos = cfg[pos + 1];
	}
	fail_msg("capability 0x%02x not found", id);
	return 0;
}

static void cfg_write16(struct drv *d, unsigned who, unsigned off, uint16_t v,
			int want)
{
	assert_int_equal(smartio_config_write(d->h, d->nvme0, who, off, &v, 2),
			 want);
}

static uint64_t irqs(struct drv *d, unsigned vec)
{
	uint64_t n = 0;

	assert_int_equal(smartio_irq_count(d->h, d->nvme0, vec, &n), 0);
	return n;
}

static uint64_t g_irq_before;

static int irq_arrived(struct drv *d)
{
	return irqs(d, 0) > g_irq_before;
}

static void test_msix_enabled_by_the_borrower_reaches_it(void **state)
{
	struct drv *d = *state;
	unsigned cap = find_cap(d, 0x11);
	struct smartio_msi_vector v[32];
	uint64_t blocked = smartio_blocked(d->h, d->host3);
	uint64_t cur = smartio_event_cursor(d->h);
	uint32_t entry[4], table;
	uint16_t ctl;

	assert_int_equal(smartio_msi_vectors(d->h, d->nvme0, v, 32), 0);
	assert_int_equal(smartio_irq_count(d->h, d->nvme0, 0, &g_irq_before),
			 -ENOENT);
	assert_int_equal(smartio_config_read(d->h, d->nvme0, d->host3, cap + 2,
					     &ctl, 2), 2);
	assert_int_equal(ctl & 0x7ff, 15);		/* 16 vectors */
	cfg_write16(d, d->host3, cap + 2, ctl | 0x8000, 2);
	assert_true(th_saw_event(d->h, &cur, "msi", "dev/nvme0"));
	assert_int_equal(smartio_msi_vectors(d->h, d->nvme0, v, 32), 16);
	assert_int_equal(v[0].node, d->host3);
	assert_true(v[0].msix);
	/* The core wrote the table (where the capability says, after the
	 * doorbell pages): the borrower's MSI window, its vectors. */
	assert_int_equal(smartio_config_read(d->h, d->nvme0, d->host3, cap + 4,
					     &table, 4), 4);
	assert_int_equal(table, 0x21000);	/* BIR 0, after 32 pairs */
	memcpy(entry, (const void *)(d->bar + table + 16 * 3), 16);
	assert_int_equal(entry[0] | (uint64_t)entry[1] << 32, v[3].addr);
	assert_int_equal(entry[2], v[3].data);
	assert_int_equal(v[3].data, v[0].data + 3);
	/* Completions on the admin and I/O queues raise vector 0. */
	enable_controller(d);
	g_irq_before = irqs(d, 0);
	create_io_queues(d);
	assert_true(wait_for(d, irq_arrived));
	g_irq_before = irqs(d, 0);
	assert_int_equal(rw(d, 0x02, 0, 8, BACK_OFF), 0);
	assert_true(wait_for(d, irq_arrived));
	assert_int_equal(smartio_blocked(d->h, d->host3), blocked);
	/* Another node may not take the vectors over; nothing changes. */
	cfg_write16(d, d->host0, find_cap(d, 0x05) + 2, 0x0081, -EBUSY);
	assert_int_equal(smartio_msi_vectors(d->h, d->nvme0, v, 32), 16);
	/* Disabling gives them back. */
	cfg_write16(d, d->host3, cap + 2, ctl & ~0x8000, 2);
	assert_int_equal(smartio_msi_vectors(d->h, d->nvme0, v, 32), 0);
}

static void test_msi_capability_rewritten_by_the_core(void **state)
{
	struct drv *d = *state;
	unsigned cap = find_cap(d, 0x05);
	struct smartio_msi_vector v[4];
	uint8_t msi[14];
	uint32_t lo, hi;
	uint16_t data, want = 0x0071;	/* enable, 8 messages asked for */

	memset(msi, 0xee, sizeof(msi));	/* a driver writing nonsense */
	memcpy(msi + 2, &want, 2);
	assert_int_equal(smartio_config_write(d->h, d->nvme0, d->host3, cap + 2,
					      msi + 2, sizeof(msi) - 2),
			 (int)sizeof(msi) - 2);
	assert_int_equal(smartio_msi_vectors(d->h, d->nvme0, v, 4), 1);
	assert_false(v[0].msix);
	assert_int_equal(smartio_config_read(d->h, d->nvme0, d->host3, cap,
					     msi, sizeof(msi)), (int)sizeof(msi));
	assert_int_equal(msi[0], 0x05);			/* header kept */
	assert_int_equal(msi[2] & 0x71, 0x01);		/* one message */
	memcpy(&lo, msi + 4, 4);
	memcpy(&hi, msi + 8, 4);
	memcpy(&data, msi + 12, 2);
	assert_int_equal(lo | (uint64_t)hi << 32, v[0].addr);
	assert_int_equal(data, v[0].data);
	g_irq_before = irqs(d, 0);
	enable_controller(d);
	create_io_queues(d);
	assert_int_equal(rw(d, 0x02, 0, 8, BACK_OFF), 0);
	assert_true(wait_for(d, irq_arrived));
	cfg_write16(d, d->host3, cap + 2, 0, 2);
	assert_int_equal(smartio_msi_vectors(d->h, d->nvme0, v, 4), 0);
}

static void test_legacy_interrupts_masked_for_borrowers(void **state)
{
	struct drv *d = *state;
	uint8_t pin = 0xff;
	uint16_t cmd;

	assert_int_equal(smartio_config_read(d->h, d->nvme0, d->host0, 0x3d,
					     &pin, 1), 1);
	assert_int_equal(pin, 1);
	assert_int_equal(smartio_config_read(d->h, d->nvme0, d->host3, 0x3d,
					     &pin, 1), 1);
	assert_int_equal(pin, 0);
	cfg_write16(d, d->host3, 0x04, 0x0006, 2);	/* INTx disable clear */
	assert_int_equal(smartio_config_read(d->h, d->nvme0, d->host3, 0x04,
					     &cmd, 2), 2);
	assert_int_equal(cmd, 0x0406);
}

/* A whole-header write (several of the core's pieces) is filtered too. */
static void test_whole_header_written_back_by_a_borrower(void **state)
{
	struct drv *d = *state;
	struct smartio_msi_vector v[4];
	unsigned msi = find_cap(d, 0x05);
	uint8_t cfg[256], back[256];

	assert_int_equal(smartio_config_read(d->h, d->nvme0, d->host3, 0, cfg,
					     sizeof(cfg)), (int)sizeof(cfg));
	cfg[0x05] &= (uint8_t)~0x04;		/* INTx on, please */
	cfg[msi + 2] |= 0x01;			/* MSI enable */
	cfg[msi + 2] &= (uint8_t)~0x80;		/* "not 64-bit" (read-only) */
	cfg[msi + 1] = 0;			/* cut the list (read-only) */
	assert_int_equal(smartio_config_write(d->h, d->nvme0, d->host3, 0, cfg,
					      sizeof(cfg)), (int)sizeof(cfg));
	assert_int_equal(smartio_msi_vectors(d->h, d->nvme0, v, 4), 1);
	assert_int_equal(smartio_config_read(d->h, d->nvme0, d->host3, 0, back,
					     sizeof(back)), (int)sizeof(back));
	assert_int_equal(back[0x05] & 0x04, 0x04);
	assert_int_equal(back[msi + 2] & 0x81, 0x81);
	assert_int_equal(back[msi + 1], 0x70);	/* MSI-X still chained */
	back[msi + 2] &= (uint8_t)~0x01;
	assert_int_equal(smartio_config_write(d->h, d->nvme0, d->host3, msi + 2,
					      back + msi + 2, 2), 2);
	assert_int_equal(smartio_msi_vectors(d->h, d->nvme0, v, 4), 0);
}

/* Last: the return takes the routing away and turns MSI-X off. */
static void test_return_drops_the_routing(void **state)
{
	struct drv *d = *state;
	unsigned cap = find_cap(d, 0x11);
	struct smartio_msi_vector v[16];
	uint16_t ctl;

	cfg_write16(d, d->host3, cap + 2, 0x8000 | 15, 2);
	assert_int_equal(smartio_msi_vectors(d->h, d->nvme0, v, 16), 16);
	assert_int_equal(smartio_segment_dma_unmap(d->h, d->host3, "q", d->nvme0), 0);
	assert_int_equal(smartio_return(d->h, d->nvme0, d->host3), 0);
	assert_int_equal(smartio_msi_vectors(d->h, d->nvme0, v, 16), 0);
	assert_int_equal(smartio_config_read(d->h, d->nvme0, d->host0, cap + 2,
					     &ctl, 2), 2);
	assert_int_equal(ctl & 0x8000, 0);
}

/* Queues n commands from cmds on queue q and rings its doorbell once. */
static void submit_many(struct drv *d, unsigned q, uint8_t (*cmds)[64],
			unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		uint16_t cid = ++d->cid;

		memcpy(cmds[i] + 2, &cid, 2);
		memcpy(d->mem + (q ? IOSQ_OFF : ASQ_OFF) + 64 * d->sq_tail[q],
		       cmds[i], 64);
		d->sq_tail[q] = (d->sq_tail[q] + 1) % QDEPTH;
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr32(d, doorbell(d, q, 0), d->sq_tail[q]);
}

/* Waits for queue q's next completion: its status, *cid its command. */
static int reap(struct drv *d, unsigned q, uint16_t *cid)
{
	uint32_t dw[4];

	g_waiting = d;
	g_queue = q;
	assert_true(wait_for(d, posted));
	memcpy(dw, (const void *)cqe(d, q), 16);
	*cid = (uint16_t)dw[3];
	if (++d->cq_head[q] == QDEPTH) {
		d->cq_head[q] = 0;
		d->phase[q] ^= 1;
	}
	wr32(d, doorbell(d, q, 1), d->cq_head[q]);
	return (int)((dw[3] >> 17) & 0x7ff);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define NFAR (QDEPTH - 1)	/* a full queue */

/* NFAR 4K reads of the 32 pages at lba 0 into BACK_OFF, one after another. */
static void far_reads(uint8_t (*c)[64], uint64_t io)
{
	unsigned i;

	for (i = 0; i < NFAR; i++) {
		cmd_init(c[i], 0x02, 0, 1);
		cmd_put64(c[i], 6, io + BACK_OFF + 4096ull * i);
		cmd_put64(c[i], 10, 8 * (i % 32));
		cmd_put32(c[i], 12, 8 - 1);
	}
}

/*
 * The controller works on many commands at once, as hardware does: while
 * one waits for its fetch or its data to cross the fabric, others go on.
 * Paced, each read of host3's memory takes a 600 us round trip, so a
 * controller that waited out each command's transfers before the next
 * would take 63 of them (37.8 ms) for a full queue of 4K reads.  The
 * bound checked is half of that, an order of magnitude above what the
 * overlapped commands take here, so that a loaded machine does not fail
 * it; the reads are also no faster than one round trip, and land right.
 */
static void test_far_commands_overlap_on_the_link(void **state)
{
	struct drv *d = *state;
	uint8_t c[NFAR][64];
	uint64_t t0, took;
	uint16_t cid;
	unsigned i;

	enable_controller(d);
	create_io_queues(d);
	for (i = 0; i < 128 * 1024; i++)
		d->mem[DATA_OFF + i] = (uint8_t)(i * 7 + i / 4096);
	assert_int_equal(rw(d, 0x01, 0, 256, DATA_OFF), 0);
	memset(d->mem + BACK_OFF, 0, NFAR * 4096);
	far_reads(c, d->io);
	t0 = mono_ns();
	submit_many(d, 1, c, NFAR);
	for (i = 0; i < NFAR; i++)
		assert_int_equal(reap(d, 1, &cid), 0);
	took = mono_ns() - t0;
	print_message("%u far reads: %llu us\n", NFAR,
		      (unsigned long long)(took / 1000));
	assert_true(took >= FAR_ROUND_TRIP_NS);
	if (took >= NFAR * FAR_ROUND_TRIP_NS / 2)
		fail_msg("%u far reads took %llu us: one after another",
			 NFAR, (unsigned long long)(took / 1000));
	for (i = 0; i < NFAR; i++)
		assert_memory_equal(d->mem + BACK_OFF + 4096 * i,
				    d->mem + DATA_OFF + 4096 * (i % 32), 4096);
}

/*
 * Deleting a submission queue with commands still in flight (NVMe 1.4
 * section 5.6): each of them is completed, done or aborted (status 0x08),
 * before the deletion is, and none twice.
 */
static void test_queue_deleted_under_commands_completes_them(void **state)
{
	struct drv *d = *state;
	uint8_t c[NFAR][64], del[1][64];
	uint16_t cid, first;
	unsigned i, seen = 0, aborted = 0;
	uint64_t got[2] = { 0, 0 };

	enable_controller(d);
	create_io_queues(d);
	far_reads(c, d->io);
	first = (uint16_t)(d->cid + 1);
	submit_many(d, 1, c, NFAR);
	cmd_init(del[0], 0x00, 0, 0);			/* Delete I/O SQ 1 */
	cmd_put32(del[0], 10, 1);
	submit_many(d, 0, del, 1);
	assert_int_equal(reap(d, 0, &cid), 0);
	assert_int_equal(cid, (uint16_t)(first + NFAR));
	/* All posted before the deletion's completion: no waiting now. */
	for (i = 0; i < NFAR; i++) {
		int st;

		assert_true(cqe_posted(d, 1));
		st = reap(d, 1, &cid);
		assert_true(st == 0 || st == 0x08);
		aborted += st == 0x08;
		cid = (uint16_t)(cid - first);
		assert_true(cid < NFAR);
		assert_false(got[cid / 64] >> (cid % 64) & 1);
		got[cid / 64] |= 1ull << (cid % 64);
		seen++;
	}
	assert_int_equal(seen, NFAR);
	print_message("%u of %u aborted by the deletion\n", aborted, NFAR);
}

/*
 * The runner of the device models stands for hardware: with CAP_SYS_NICE
 * (root, as make check runs in CI) it runs at nice -10, above the client
 * processes that would otherwise take its CPU; without, at the default.
 */
static int models_thread_nice(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int nice = 100;

	assert_non_null(d);
	while ((e = readdir(d)) && nice == 100) {
		char path[300], buf[512], *p;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && strstr(buf, "(sim-models)")) {
			int i;

			/* After the name: state is field 3, nice field 19. */
			p = strrchr(buf, ')') + 2;
			for (i = 3; i < 19 && p; i++) {
				p = strchr(p, ' ');
				p = p ? p + 1 : NULL;
			}
			assert_non_null(p);
			nice = atoi(p);
		}
		fclose(f);
	}
	closedir(d);
	assert_int_not_equal(nice, 100);	/* the thread was found */
	return nice;
}

static void test_models_run_above_their_clients(void **state)
{
	(void)state;
	assert_int_equal(models_thread_nice(), geteuid() == 0 ? -10 : 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registers_after_power_on),
		cmocka_unit_test(test_small_bar0_packs_the_doorbells),
		cmocka_unit_test(test_identify_through_a_borrowed_controller),
		cmocka_unit_test(test_blocks_written_and_read_back),
		cmocka_unit_test(test_data_survives_a_controller_reset),
		cmocka_unit_test(test_dma_outside_the_window_fails_the_command),
		cmocka_unit_test(test_queue_commands_checked),
		cmocka_unit_test(test_thirty_one_io_queue_pairs),
		cmocka_unit_test(test_driver_errors_logged_once_and_counted),
		cmocka_unit_test(test_msix_enabled_by_the_borrower_reaches_it),
		cmocka_unit_test(test_msi_capability_rewritten_by_the_core),
		cmocka_unit_test(test_legacy_interrupts_masked_for_borrowers),
		cmocka_unit_test(test_whole_header_written_back_by_a_borrower),
		cmocka_unit_test(test_return_drops_the_routing),
		cmocka_unit_test(test_models_run_above_their_clients),
	};

	const struct CMUnitTest far_tests[] = {
		cmocka_unit_test(test_far_commands_overlap_on_the_link),
		cmocka_unit_test(test_queue_deleted_under_commands_completes_them),
	};

	return cmocka_run_group_tests_name("near", tests, setup, teardown) |
	       cmocka_run_group_tests_name("far", far_tests, setup_far,
					   teardown);
}
