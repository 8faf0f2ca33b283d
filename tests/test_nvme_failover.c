// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 17 item 4 (SmartIO section 6.3): NVMe I/O in flight across a
 * failover completes with its data intact.  nvme0 lives on host0, which
 * has one adapter on switch sw0; host1 borrows it and has two adapters on
 * sw0.  A userspace driver on host1 (queues and buffers in a segment of
 * its RAM, mapped for the device) submits a full queue of 128 KiB writes
 * and takes down the link its borrow uses while they run; then a full
 * queue of reads back, failing over to the first adapter again.  Every
 * command completes successfully and the data read back is what was
 * written: the device's requests moved with the borrow and none was lost.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define TOPO \
	"fabric luts=64 requesters=8 reserved=2 window=1G\n" \
	"switch sw0 ports=4 requesters=8 reserved=2\n" \
	"node host0 id=0 ram=64M\n" \
	"node host1 id=1 ram=256M\n" \
	"adapter host0 ntb0 switch=sw0:0\n" \
	"adapter host1 ntb0 switch=sw0:1\n" \
	"adapter host1 ntb1 switch=sw0:2\n" \
	"device host0 nvme0 bdf=0000:01:00.0 vendor=0x1b36 device=0x0010 " \
	"class=0x010802 config=4096 model=nvme bar0=128K,64\n"

/* The driver's segment, device-side offsets from io. */
#define SEG_SIZE (32u << 20)
#define ASQ_OFF 0x0000u
#define ACQ_OFF 0x1000u
#define IOSQ_OFF 0x2000u
#define IOCQ_OFF 0x3000u
#define PRPL_OFF 0x10000u	/* one 4K PRP list per command */
#define DATA_OFF 0x100000u	/* written from here, 128K per command */
#define BACK_OFF 0x1000000u	/* and read back here */
#define QDEPTH 64u
#define NCMD (QDEPTH - 1)	/* a full queue */
#define XFER (128u << 10)

struct drv {
	struct smartio *h;
	char fabric[64];
	unsigned host1, nvme0;
	volatile uint8_t *bar;
	uint64_t bar_size;
	uint8_t *mem;
	uint64_t io;
	unsigned sq_tail[2], cq_head[2], phase[2];
	uint16_t cid;
};

static uint32_t rd32(struct drv *d, unsigned off)
{
	return __atomic_load_n((volatile uint32_t *)(d->bar + off),
			       __ATOMIC_ACQUIRE);
}

static void wr32(struct drv *d, unsigned off, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(d->bar + off), v,
			 __ATOMIC_RELEASE);
}

static unsigned doorbell(struct drv *d, unsigned q, int cq)
{
	return 0x1000 + (2 * q + (cq ? 1 : 0)) * (4u << (rd32(d, 0x04) & 0xf));
}

/* The completion at the head of queue q, if posted: its status field. */
static int cqe_status(struct drv *d, unsigned q, int *status)
{
	volatile uint8_t *e = d->mem + (q ? IOCQ_OFF : ACQ_OFF) +
			      16 * d->cq_head[q];
	uint32_t dw3;

	memcpy(&dw3, (const void *)(e + 12), 4);
	if ((dw3 >> 16 & 1) != d->phase[q])
		return 0;
	*status = (int)(dw3 >> 17 & 0x7ff);
	return 1;
}

static void cq_advance(struct drv *d, unsigned q)
{
	if (++d->cq_head[q] == QDEPTH) {
		d->cq_head[q] = 0;
		d->phase[q] ^= 1;
	}
	wr32(d, doorbell(d, q, 1), d->cq_head[q]);
}

static void put_cmd(struct drv *d, unsigned q, uint8_t op, uint64_t prp1,
		    uint64_t prp2, const uint32_t cdw[3])
{
	uint8_t *c = d->mem + (q ? IOSQ_OFF : ASQ_OFF) + 64 * d->sq_tail[q];
	uint16_t cid = ++d->cid;
	uint32_t nsid = q ? 1 : 0;

	memset(c, 0, 64);
	c[0] = op;
	memcpy(c + 2, &cid, 2);
	memcpy(c + 4, &nsid, 4);
	memcpy(c + 24, &prp1, 8);
	memcpy(c + 32, &prp2, 8);
	memcpy(c + 40, cdw, 12);
	d->sq_tail[q] = (d->sq_tail[q] + 1) % QDEPTH;
}

static void ring(struct drv *d, unsigned q)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr32(d, doorbell(d, q, 0), d->sq_tail[q]);
}

/* Waits (20 s at most: a hang, not a timing check) for n completions on
 * q; returns how many failed. */
static unsigned reap(struct drv *d, unsigned q, unsigned n)
{
	time_t end = time(NULL) + 20;
	unsigned bad = 0;
	int st;

	while (n) {
		if (!cqe_status(d, q, &st)) {
			assert_true(time(NULL) <= end);
			th_nap();
			continue;
		}
		bad += st != 0;
		cq_advance(d, q);
		n--;
	}
	return bad;
}

/* Completions posted on q beyond the head, without consuming them. */
static unsigned posted(struct drv *d, unsigned q)
{
	unsigned head = d->cq_head[q], phase = d->phase[q], n = 0;
	int st;

	while (n < QDEPTH && cqe_status(d, q, &st)) {
		n++;
		if (++d->cq_head[q] == QDEPTH) {
			d->cq_head[q] = 0;
			d->phase[q] ^= 1;
		}
	}
	d->cq_head[q] = head;
	d->phase[q] = phase;
	return n;
}

static void admin(struct drv *d, uint8_t op, uint64_t prp1, uint32_t c10,
		  uint32_t c11)
{
	uint32_t cdw[3] = { c10, c11, 0 };

	put_cmd(d, 0, op, prp1, 0, cdw);
	ring(d, 0);
	assert_int_equal(reap(d, 0, 1), 0);
}

static int ready(struct drv *d) { return rd32(d, 0x1c) & 1; }

static void bring_up(struct drv *d)
{
	time_t end = time(NULL) + 20;

	memset(d->mem, 0, 0x4000);
	d->phase[0] = d->phase[1] = 1;
	wr32(d, 0x24, (QDEPTH - 1) << 16 | (QDEPTH - 1));
	wr32(d, 0x28, (uint32_t)(d->io + ASQ_OFF));
	wr32(d, 0x2c, (uint32_t)((d->io + ASQ_OFF) >> 32));
	wr32(d, 0x30, (uint32_t)(d->io + ACQ_OFF));
	wr32(d, 0x34, (uint32_t)((d->io + ACQ_OFF) >> 32));
	wr32(d, 0x14, 1 | 6u << 16 | 4u << 20);
	while (!ready(d)) {
		assert_true(time(NULL) <= end);
		th_nap();
	}
	/* I/O CQ 1 without interrupts, SQ 1 on it. */
	admin(d, 0x05, d->io + IOCQ_OFF, (QDEPTH - 1) << 16 | 1, 1);
	admin(d, 0x01, d->io + IOSQ_OFF, (QDEPTH - 1) << 16 | 1, 1u << 16 | 1);
}

/* A full queue of 128K reads (2) or writes (1), command i at buf + i*XFER
 * and block i * 256; rung at once. */
static void submit_all(struct drv *d, uint8_t op, unsigned buf)
{
	unsigned i, p;

	for (i = 0; i < NCMD; i++) {
		uint64_t at = d->io + buf + (uint64_t)i * XFER;
		uint64_t *list = (uint64_t *)(d->mem + PRPL_OFF + 0x1000 * i);
		uint32_t cdw[3] = { i * (XFER / 512), 0, XFER / 512 - 1 };

		for (p = 1; p < XFER / 4096; p++)
			list[p - 1] = at + 4096ull * p;
		put_cmd(d, 1, op, at, d->io + PRPL_OFF + 0x1000 * i, cdw);
	}
	ring(d, 1);
}

/* The adapter of host1 holding the borrow's requester entry. */
static unsigned borrow_adapter(struct drv *d)
{
	struct smartio_adapter_info ai;
	unsigned a;

	for (a = 0; a < 2; a++) {
		assert_int_equal(smartio_adapter_info(d->h, d->host1, a, &ai), 0);
		if (ai.req_in_used > ai.req_reserved)
			return a;
	}
	fail_msg("no adapter of host1 holds the borrow");
	return 0;
}

static void test_nvme_io_in_flight_survives_failover(void **state)
{
	static struct drv d;
	char path[256];
	uint64_t size, cur;
	unsigned a, i, before;
	struct smartio_device_info di;

	(void)state;
	memset(&d, 0, sizeof(d));
	d.h = th_open(TOPO, NULL, d.fabric, sizeof(d.fabric));
	d.host1 = th_node(d.h, "host1");
	d.nvme0 = th_dev(d.h, "nvme0");
	assert_int_equal(smartio_lend(d.h, d.nvme0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(d.h, d.nvme0, d.host1), 0);
	assert_int_equal(smartio_resolve_bar(d.h, d.host1, d.nvme0, 0, path,
					     sizeof(path), &d.bar_size), 0);
	d.bar = th_map_file(path, d.bar_size);
	assert_int_equal(smartio_segment_create(d.h, d.host1, "q"), 0);
	assert_int_equal(smartio_segment_set_size(d.h, d.host1, "q", SEG_SIZE),
			 0);
	assert_int_equal(smartio_segment_dma_map(d.h, d.host1, "q", d.nvme0,
						 &d.io), 0);
	assert_int_equal(smartio_resolve_segment(d.h, d.host1, d.host1, "q",
						 path, sizeof(path), &size), 0);
	d.mem = th_map_file(path, size);
	bring_up(&d);

	srand(17);
	for (i = 0; i < NCMD * XFER; i++)
		d.mem[DATA_OFF + i] = (uint8_t)rand();
	cur = smartio_event_cursor(d.h);
	a = borrow_adapter(&d);
	submit_all(&d, 1, DATA_OFF);
	before = posted(&d, 1);
	assert_int_equal(smartio_link_set(d.h, d.host1, a, 0), 0);
	/* The failover came while the writes ran. */
	assert_true(before < NCMD);
	assert_int_equal(reap(&d, 1, NCMD), 0);
	assert_true(th_saw_event(d.h, &cur, "failover", "dev/nvme0"));
	assert_int_equal(borrow_adapter(&d), !a);

	/* Back over the first adapter, with the reads running. */
	assert_int_equal(smartio_link_set(d.h, d.host1, a, 1), 0);
	memset(d.mem + BACK_OFF, 0, NCMD * XFER);
	submit_all(&d, 2, BACK_OFF);
	before = posted(&d, 1);
	assert_int_equal(smartio_link_set(d.h, d.host1, !a, 0), 0);
	assert_true(before < NCMD);
	assert_int_equal(reap(&d, 1, NCMD), 0);
	assert_memory_equal(d.mem + BACK_OFF, d.mem + DATA_OFF, NCMD * XFER);
	assert_int_equal(borrow_adapter(&d), a);
	assert_true(th_saw_event(d.h, &cur, "failover", "dev/nvme0"));

	assert_int_equal(smartio_device_info(d.h, d.nvme0, &di), 0);
	assert_int_equal(di.stats.dma_faults, 0);
	assert_int_equal(di.stats.driver_errors, 0);
	munmap((void *)d.bar, d.bar_size);
	munmap(d.mem, SEG_SIZE);
	smartio_close(d.h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvme_io_in_flight_survives_failover),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
