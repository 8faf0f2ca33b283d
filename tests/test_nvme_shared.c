// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One simulated NVMe controller shared by two borrowers at once (mode
 * shared), as SmartIO's distributed NVMe driver shares one: host1 manages
 * the controller (admin queue in its memory) and creates an I/O queue pair
 * for itself and one for host3 whose rings live in host3's memory; each
 * borrower then submits through its own NTB mapping of the doorbells and
 * its own DMA window, with no software between them and the device.  The
 * node that enables MSI-X gets the vectors; the other one polls.
 *
 * The controller's doorbell stride (CAP.DSTRD 9) gives each queue pair a
 * 4K page of its own: host3, a client, maps only that page of BAR 0 (its
 * SQ tail and CQ head doorbells), never the controller registers or the
 * other queues' doorbells.
 *
 * host3's queues are placed by access hint, as SmartIO's driver places
 * them: the submission queue near the device (a segment of the lender,
 * host0, that host3 attaches: host3's CPU posts writes across the NTB and
 * the controller reads locally), the completion queue near the CPU (host3's
 * own RAM: the controller posts writes across, host3 polls locally).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define SEG (1u << 20)
#define QD 16u

/* One borrower's view: its BAR mapping, its segment, its queue pair. */
struct host {
	unsigned node;
	volatile uint8_t *bar;
	uint64_t bar_size;
	char bar_path[256];
	volatile uint8_t *db;	/* its queue pair's doorbells */
	unsigned stride;	/* between doorbells: 4 << CAP.DSTRD */
	uint8_t *mem;
	uint64_t io;
	uint8_t *sq;		/* memory holding the submission queue */
	uint64_t sq_io;		/* ... as the controller addresses it */
	unsigned qid, sq_off, cq_off;
	unsigned tail, head, phase;
	uint16_t cid;
};

struct fx {
	struct smartio *h;
	char fabric[64];
	unsigned nvme0;
	struct host a, b;	/* host1 (manager), host3 */
};

static void nap(void)
{
	struct timespec ts = { 0, 100000 };

	nanosleep(&ts, NULL);
}

static void wr32(struct host *x, unsigned off, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(x->bar + off), v,
			 __ATOMIC_RELEASE);
}

static uint32_t rd32(struct host *x, unsigned off)
{
	return __atomic_load_n((volatile uint32_t *)(x->bar + off),
			       __ATOMIC_ACQUIRE);
}

static void attach(struct fx *f, struct host *x, const char *node)
{
	char path[256];
	uint64_t size;

	x->node = th_node(f->h, node);
	assert_int_equal(smartio_borrow(f->h, f->nvme0, x->node), 0);
	assert_int_equal(smartio_resolve_bar(f->h, x->node, f->nvme0, 0, path,
					     sizeof(path), &x->bar_size), 0);
	x->bar = th_map_file(path, x->bar_size);
	strcpy(x->bar_path, path);
	assert_int_equal(smartio_segment_create(f->h, x->node, "q"), 0);
	assert_int_equal(smartio_segment_set_size(f->h, x->node, "q", SEG), 0);
	assert_int_equal(smartio_segment_dma_map(f->h, x->node, "q", f->nvme0,
						 &x->io), 0);
	assert_int_equal(smartio_resolve_segment(f->h, x->node, x->node, "q",
						 path, sizeof(path), &size), 0);
	x->mem = th_map_file(path, SEG);
	x->sq = x->mem;
	x->sq_io = x->io;
}

/* x's submission queue in a segment of the device's lender (host0). */
static void sq_near_device(struct fx *f, struct host *x)
{
	unsigned lender = th_node(f->h, "host0");
	struct smartio_segment_info si;
	char path[256];
	uint64_t size;

	assert_int_equal(smartio_segment_create(f->h, lender, "sq3"), 0);
	assert_int_equal(smartio_segment_set_size(f->h, lender, "sq3", 65536), 0);
	assert_int_equal(smartio_segment_set_available(f->h, lender, "sq3", 1), 0);
	assert_int_equal(smartio_segment_dma_map(f->h, lender, "sq3", f->nvme0,
						 &x->sq_io), 0);
	assert_int_equal(smartio_segment_attach(f->h, lender, "sq3", x->node), 0);
	assert_int_equal(smartio_segment_at(f->h, (unsigned)smartio_segment_find(
						    f->h, lender, "sq3"), &si), 1);
	assert_int_equal(si.attached, 1ull << x->node);
	assert_int_equal(smartio_resolve_segment(f->h, x->node, lender, "sq3",
						 path, sizeof(path), &size), 0);
	x->sq = th_map_file(path, 65536);
	memset(x->sq, 0, 65536);
}

static int setup(void **state)
{
	static struct fx f;

	memset(&f, 0, sizeof(f));
	f.h = th_open(NULL, NULL, f.fabric, sizeof(f.fabric));
	f.nvme0 = th_dev(f.h, "nvme0");
	assert_int_equal(smartio_set_mode(f.h, f.nvme0, SMARTIO_SHARED), 0);
	assert_int_equal(smartio_lend(f.h, f.nvme0, SMARTIO_LEND_ALL, 0), 0);
	attach(&f, &f.a, "host1");
	attach(&f, &f.b, "host3");
	sq_near_device(&f, &f.b);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	smartio_close(f->h);
	return 0;
}

static void cmd(uint8_t *c, uint8_t op, uint32_t nsid, uint64_t prp1,
		uint32_t c10, uint32_t c11, uint32_t c12)
{
	memset(c, 0, 64);
	c[0] = op;
	memcpy(c + 4, &nsid, 4);
	memcpy(c + 24, &prp1, 8);
	memcpy(c + 40, &c10, 4);
	memcpy(c + 44, &c11, 4);
	memcpy(c + 48, &c12, 4);
}

/* x uses queue pair qid from now on: its doorbells, in the whole BAR. */
static void use_queue(struct host *x, unsigned qid)
{
	x->qid = qid;
	x->stride = 4u << (rd32(x, 0x04) & 0xf);
	x->db = x->bar + 0x1000 + 2 * qid * x->stride;
}

/* A client keeps only the page of its own doorbells (SmartIO section 6). */
static void client_maps_only_its_doorbells(struct host *x, unsigned qid)
{
	unsigned off = 0x1000 + 2 * qid * x->stride;
	int fd = open(x->bar_path, O_RDWR);
	void *p;

	assert_int_equal(x->stride, 2048);	/* a page per queue pair */
	assert_int_equal(off % 4096, 0);
	assert_true(fd >= 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	close(fd);
	assert_true(p != MAP_FAILED);
	munmap((void *)x->bar, x->bar_size);
	x->bar = NULL;
	x->qid = qid;
	x->db = p;
}

static void ring(struct host *x, int cq, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(x->db + (cq ? x->stride : 0)),
			 v, __ATOMIC_RELEASE);
}

/* Places c in x's submission queue and rings x's doorbell. */
static uint16_t post(struct host *x, uint8_t *c)
{
	uint16_t cid = ++x->cid;

	memcpy(c + 2, &cid, 2);
	memcpy(x->sq + x->sq_off + 64 * x->tail, c, 64);
	x->tail = (x->tail + 1) % QD;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	ring(x, 0, x->tail);
	return cid;
}

/* The status of the next completion in x's queue (20 s: a hang). */
static int reap(struct host *x, uint16_t cid)
{
	volatile uint8_t *e = x->mem + x->cq_off + 16 * x->head;
	time_t end = time(NULL) + 20;
	uint32_t dw[4];

	for (;;) {
		memcpy(dw, (const void *)e, 16);
		if ((dw[3] >> 16 & 1) == x->phase)
			break;
		assert_true(time(NULL) <= end);
		nap();
	}
	assert_int_equal(dw[3] & 0xffff, cid);
	assert_int_equal(dw[2] >> 16, x->qid);
	if (++x->head == QD) {
		x->head = 0;
		x->phase ^= 1;
	}
	ring(x, 1, x->head);
	return (int)(dw[3] >> 17 & 0x7ff);
}

static int admin(struct fx *f, uint8_t *c)
{
	return reap(&f->a, post(&f->a, c));
}

/* host1 brings the controller up and creates both queue pairs. */
static void test_manager_creates_queues_in_both_hosts(void **state)
{
	struct fx *f = *state;
	struct host *a = &f->a, *b = &f->b;
	uint8_t c[64];

	wr32(a, 0x14, 0);
	memset(a->mem, 0, 0x8000);
	memset(b->mem, 0, 0x8000);
	use_queue(a, 0);
	use_queue(b, 0);
	a->sq_off = 0x0000;
	a->cq_off = 0x1000;
	a->phase = 1;
	wr32(a, 0x24, (QD - 1) << 16 | (QD - 1));
	wr32(a, 0x28, (uint32_t)a->io);
	wr32(a, 0x2c, (uint32_t)(a->io >> 32));
	wr32(a, 0x30, (uint32_t)(a->io + 0x1000));
	wr32(a, 0x34, (uint32_t)((a->io + 0x1000) >> 32));
	wr32(a, 0x14, 1 | 6u << 16 | 4u << 20);
	{
		time_t end = time(NULL) + 20;

		while (!(rd32(b, 0x1c) & 1)) {	/* host3 sees it ready too */
			assert_true(time(NULL) <= end);
			nap();
		}
	}
	cmd(c, 0x05, 0, a->io + 0x3000, (QD - 1) << 16 | 1, 1 | 2, 0);
	assert_int_equal(admin(f, c), 0);
	cmd(c, 0x01, 0, a->io + 0x2000, (QD - 1) << 16 | 1, 1u << 16 | 1, 0);
	assert_int_equal(admin(f, c), 0);
	/* host3's rings: CQ in host3's RAM, SQ in the lender's segment. */
	cmd(c, 0x05, 0, b->io + 0x1000, (QD - 1) << 16 | 2, 1, 0);
	assert_int_equal(admin(f, c), 0);
	cmd(c, 0x01, 0, b->sq_io + 0x0000, (QD - 1) << 16 | 2, 2u << 16 | 1, 0);
	assert_int_equal(admin(f, c), 0);
	use_queue(a, 1);
	a->sq_off = 0x2000;
	a->cq_off = 0x3000;
	a->tail = a->head = 0;
	a->phase = 1;
	client_maps_only_its_doorbells(b, 2);
	b->sq_off = 0x0000;
	b->cq_off = 0x1000;
	b->phase = 1;
}

static void fill(uint8_t *p, unsigned len, unsigned seed)
{
	unsigned i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 29 + seed);
}

/* Both borrowers write at once, then each reads what the other wrote. */
static void test_both_borrowers_move_blocks_at_once(void **state)
{
	struct fx *f = *state;
	struct host *a = &f->a, *b = &f->b;
	uint16_t ca, cb;
	uint8_t c[64];

	fill(a->mem + 0x10000, 4096, 1);
	fill(b->mem + 0x10000, 4096, 2);
	cmd(c, 0x01, 1, a->io + 0x10000, 100, 0, 7);
	ca = post(a, c);
	cmd(c, 0x01, 1, b->io + 0x10000, 200, 0, 7);
	cb = post(b, c);
	assert_int_equal(reap(b, cb), 0);
	assert_int_equal(reap(a, ca), 0);
	memset(a->mem + 0x20000, 0, 4096);
	memset(b->mem + 0x20000, 0, 4096);
	cmd(c, 0x02, 1, a->io + 0x20000, 200, 0, 7);
	ca = post(a, c);
	cmd(c, 0x02, 1, b->io + 0x20000, 100, 0, 7);
	cb = post(b, c);
	assert_int_equal(reap(a, ca), 0);
	assert_int_equal(reap(b, cb), 0);
	assert_memory_equal(a->mem + 0x20000, b->mem + 0x10000, 4096);
	assert_memory_equal(b->mem + 0x20000, a->mem + 0x10000, 4096);
}

/* Interrupts go to one node at a time; the other keeps polling. */
static void test_msix_belongs_to_the_node_that_enabled_it(void **state)
{
	struct fx *f = *state;
	struct smartio_msi_vector v[16];
	uint16_t ctl, cb;
	uint64_t before = 0, now = 0;
	uint8_t c[64];
	time_t end;

	assert_int_equal(smartio_config_read(f->h, f->nvme0, f->a.node, 0x72,
					     &ctl, 2), 2);
	ctl |= 0x8000;
	assert_int_equal(smartio_config_write(f->h, f->nvme0, f->a.node, 0x72,
					      &ctl, 2), 2);
	assert_int_equal(smartio_config_write(f->h, f->nvme0, f->b.node, 0x72,
					      &ctl, 2), -EBUSY);
	assert_int_equal(smartio_msi_vectors(f->h, f->nvme0, v, 16), 16);
	assert_int_equal(v[0].node, f->a.node);
	assert_int_equal(smartio_irq_count(f->h, f->nvme0, 0, &before), 0);
	cmd(c, 0x02, 1, f->a.io + 0x20000, 100, 0, 7);
	assert_int_equal(reap(&f->a, post(&f->a, c)), 0);
	end = time(NULL) + 20;
	do {
		assert_true(time(NULL) <= end);
		assert_int_equal(smartio_irq_count(f->h, f->nvme0, 0, &now), 0);
		if (now == before)
			nap();
	} while (now == before);
	cmd(c, 0x02, 1, f->b.io + 0x20000, 100, 0, 7);
	cb = post(&f->b, c);
	assert_int_equal(reap(&f->b, cb), 0);
	/* host3 returns: host1 keeps the controller and its vectors. */
	assert_int_equal(smartio_segment_dma_unmap(f->h, f->b.node, "q", f->nvme0), 0);
	assert_int_equal(smartio_return(f->h, f->nvme0, f->b.node), 0);
	assert_int_equal(smartio_msi_vectors(f->h, f->nvme0, v, 16), 16);
	cmd(c, 0x02, 1, f->a.io + 0x20000, 200, 0, 7);
	assert_int_equal(reap(&f->a, post(&f->a, c)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manager_creates_queues_in_both_hosts),
		cmocka_unit_test(test_both_borrowers_move_blocks_at_once),
		cmocka_unit_test(test_msix_belongs_to_the_node_that_enabled_it),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
