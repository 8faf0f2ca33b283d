// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The simulated DMA engine (smartio-devices(7)), driven through libsmartio
 * from a borrower: acc0 lives on host2 and is borrowed by host0, which
 * maps a segment of its RAM for the device.  Several engines copy at once
 * between that segment and the device's memory; a transfer outside the
 * device's windows stops with the error bit and is reported; completions
 * interrupt through MSI-X, and a masked vector waits for its unmask.
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

#define SEG (2u << 20)
#define ENG(e) (0x100u + 0x40u * (e))

struct fx {
	struct smartio *h;
	char fabric[64];
	unsigned host0, acc0;
	volatile uint8_t *bar0, *bar2;
	uint64_t size0, size2, io, mem;
	uint8_t *seg;
};

static uint32_t rd32(struct fx *f, unsigned off)
{
	return __atomic_load_n((volatile uint32_t *)(f->bar0 + off),
			       __ATOMIC_ACQUIRE);
}

static void wr32(struct fx *f, unsigned off, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(f->bar0 + off), v,
			 __ATOMIC_RELEASE);
}

static uint64_t rd64(struct fx *f, unsigned off)
{
	return rd32(f, off) | (uint64_t)rd32(f, off + 4) << 32;
}

static void wr64(struct fx *f, unsigned off, uint64_t v)
{
	wr32(f, off, (uint32_t)v);
	wr32(f, off + 4, (uint32_t)(v >> 32));
}

static void start(struct fx *f, unsigned e, uint64_t src, uint64_t dst,
		  uint32_t len, uint32_t vector, int irq)
{
	wr64(f, ENG(e), src);
	wr64(f, ENG(e) + 8, dst);
	wr32(f, ENG(e) + 0x10, len);
	wr32(f, ENG(e) + 0x1c, vector);
	wr32(f, ENG(e) + 0x18, 0);
	wr32(f, ENG(e) + 0x14, 1 | (irq ? 2 : 0));
}

/* Status once done; fails the test after 20 s (a hang, not a timing). */
static uint32_t wait_done(struct fx *f, unsigned e)
{
	time_t end = time(NULL) + 20;
	uint32_t st;

	while (!((st = rd32(f, ENG(e) + 0x18)) & 2)) {
		assert_true(time(NULL) <= end);
		th_nap();
	}
	return st;
}

static int setup(void **state)
{
	static struct fx f;
	char path[256];
	uint64_t size;

	memset(&f, 0, sizeof(f));
	f.h = th_open(NULL, NULL, f.fabric, sizeof(f.fabric));
	f.host0 = th_node(f.h, "host0");
	f.acc0 = th_dev(f.h, "acc0");
	assert_int_equal(smartio_lend(f.h, f.acc0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(f.h, f.acc0, f.host0), 0);
	assert_int_equal(smartio_resolve_bar(f.h, f.host0, f.acc0, 0, path,
					     sizeof(path), &f.size0), 0);
	f.bar0 = th_map_file(path, f.size0);
	assert_int_equal(smartio_resolve_bar(f.h, f.host0, f.acc0, 2, path,
					     sizeof(path), &f.size2), 0);
	f.bar2 = th_map_file(path, f.size2);
	assert_int_equal(smartio_segment_create(f.h, f.host0, "s"), 0);
	assert_int_equal(smartio_segment_set_size(f.h, f.host0, "s", SEG), 0);
	assert_int_equal(smartio_segment_dma_map(f.h, f.host0, "s", f.acc0,
						 &f.io), 0);
	assert_int_equal(smartio_resolve_segment(f.h, f.host0, f.host0, "s",
						 path, sizeof(path), &size), 0);
	f.seg = th_map_file(path, SEG);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	munmap((void *)f->bar0, f->size0);
	munmap((void *)f->bar2, f->size2);
	munmap(f->seg, SEG);
	smartio_close(f->h);
	return 0;
}

static void test_identity_registers(void **state)
{
	struct fx *f = *state;
	struct smartio_device_info di;

	assert_int_equal(smartio_device_info(f->h, f->acc0, &di), 0);
	assert_int_equal(rd32(f, 0), 0x414d4453);
	assert_int_equal(rd32(f, 8), 4);
	assert_int_equal(rd64(f, 0x10), di.bar[2].addr);
	assert_int_equal(rd64(f, 0x18), di.bar[2].size);
	f->mem = rd64(f, 0x10);
}

/* Four engines at once: segment -> device memory -> segment. */
static void test_engines_copy_side_by_side(void **state)
{
	struct fx *f = *state;
	const uint32_t part = 256u << 10;
	uint64_t before[4];
	unsigned e, i;

	for (i = 0; i < 4 * part; i++)
		f->seg[i] = (uint8_t)(i * 7 + i / 4096);
	memset(f->seg + SEG / 2, 0, 4 * part);
	for (e = 0; e < 4; e++) {
		before[e] = rd64(f, ENG(e) + 0x20);
		start(f, e, f->io + e * part, f->mem + 4096 + e * part, part, 0, 0);
	}
	for (e = 0; e < 4; e++)
		assert_int_equal(wait_done(f, e), 2);
	assert_memory_equal((const void *)(f->bar2 + 4096), f->seg, 4 * part);
	for (e = 0; e < 4; e++)
		start(f, e, f->mem + 4096 + e * part, f->io + SEG / 2 + e * part,
		      part, 0, 0);
	for (e = 0; e < 4; e++) {
		assert_int_equal(wait_done(f, e), 2);
		assert_int_equal(rd64(f, ENG(e) + 0x20), before[e] + 2);
	}
	assert_memory_equal(f->seg + SEG / 2, f->seg, 4 * part);
}

static void test_transfer_outside_the_window_is_blocked(void **state)
{
	struct fx *f = *state;
	uint64_t cur = smartio_event_cursor(f->h);
	uint64_t blocked = smartio_blocked(f->h, f->host0);
	struct smartio_device_info di;

	start(f, 1, f->mem, f->io + SEG, 8192, 0, 0);	/* past the segment */
	assert_int_equal(wait_done(f, 1), 2 | 4);
	assert_int_equal(rd64(f, ENG(1) + 0x28), f->io + SEG);
	assert_true(smartio_blocked(f->h, f->host0) > blocked);
	assert_true(th_saw_event(f->h, &cur, "dma-fault", "dev/acc0"));
	assert_int_equal(smartio_device_info(f->h, f->acc0, &di), 0);
	assert_true(di.stats.dma_faults >= 1);
	/* The engine works again afterwards. */
	start(f, 1, f->mem, f->io, 4096, 0, 0);
	assert_int_equal(wait_done(f, 1), 2);
}

static uint64_t count(struct fx *f, unsigned vec)
{
	uint64_t n = 0;

	assert_int_equal(smartio_irq_count(f->h, f->acc0, vec, &n), 0);
	return n;
}

static void test_completion_interrupts_and_masking(void **state)
{
	struct fx *f = *state;
	uint16_t ctl;
	uint64_t n;
	time_t end;

	assert_int_equal(smartio_config_read(f->h, f->acc0, f->host0, 0x72,
					     &ctl, 2), 2);
	assert_int_equal(ctl & 0x7ff, 7);
	ctl |= 0x8000;
	assert_int_equal(smartio_config_write(f->h, f->acc0, f->host0, 0x72,
					      &ctl, 2), 2);
	n = count(f, 2);
	start(f, 3, f->io, f->mem, 4096, 2, 1);
	wait_done(f, 3);
	end = time(NULL) + 20;
	while (count(f, 2) == n) {
		assert_true(time(NULL) <= end);
		th_nap();
	}
	/* Vector 2 masked in its table entry: pending, not delivered. */
	n = count(f, 2);
	wr32(f, 0x8000 + 16 * 2 + 12, 1);
	start(f, 3, f->io, f->mem, 4096, 2, 1);
	wait_done(f, 3);
	end = time(NULL) + 20;
	while (!(rd32(f, 0x9000) & 4)) {
		assert_true(time(NULL) <= end);
		th_nap();
	}
	assert_int_equal(count(f, 2), n);
	wr32(f, 0x8000 + 16 * 2 + 12, 0);		/* unmask: delivered */
	end = time(NULL) + 20;
	while (count(f, 2) == n) {
		assert_true(time(NULL) <= end);
		th_nap();
	}
	assert_int_equal(rd32(f, 0x9000) & 4, 0);
}

static uint64_t driver_errors(struct fx *f)
{
	struct smartio_device_info di;

	assert_int_equal(smartio_device_info(f->h, f->acc0, &di), 0);
	return di.stats.driver_errors;
}

/*
 * An engine told to raise a vector beyond its 8-entry MSI-X table still
 * completes the copy; the lost interrupt is counted in the device's
 * driver_errors (it was dropped in silence) and the engine goes on.
 */
static void test_vector_beyond_the_table_is_a_driver_error(void **state)
{
	struct fx *f = *state;
	uint64_t base = driver_errors(f), n;
	uint16_t ctl;
	time_t end;

	assert_int_equal(smartio_config_read(f->h, f->acc0, f->host0, 0x72,
					     &ctl, 2), 2);
	ctl |= 0x8000;
	assert_int_equal(smartio_config_write(f->h, f->acc0, f->host0, 0x72,
					      &ctl, 2), 2);
	start(f, 1, f->io, f->mem, 4096, 8, 1);
	assert_int_equal(wait_done(f, 1) & 4, 0);	/* copied, no error */
	end = time(NULL) + 20;
	while (driver_errors(f) == base) {
		assert_true(time(NULL) <= end);
		th_nap();
	}
	assert_int_equal(driver_errors(f), base + 1);
	n = count(f, 2);
	start(f, 1, f->io, f->mem, 4096, 2, 1);
	wait_done(f, 1);
	end = time(NULL) + 20;
	while (count(f, 2) == n) {
		assert_true(time(NULL) <= end);
		th_nap();
	}
	assert_int_equal(driver_errors(f), base + 1);
}

/* The lender using its own device: vectors on itself, its local range. */
static void test_lender_local_interrupts(void **state)
{
	struct fx *f = *state;
	unsigned host3 = th_node(f->h, "host3"), acc1 = th_dev(f->h, "acc1");
	struct smartio_msi_vector v[8];
	volatile uint8_t *regs;
	char path[256];
	uint64_t size, n = 0, now = 0;
	uint16_t ctl;
	time_t end;
	int fd;

	assert_int_equal(smartio_config_read(f->h, acc1, host3, 0x72, &ctl, 2), 2);
	ctl |= 0x8000;
	assert_int_equal(smartio_config_write(f->h, acc1, host3, 0x72, &ctl, 2), 2);
	assert_int_equal(smartio_msi_vectors(f->h, acc1, v, 8), 8);
	assert_int_equal(v[5].node, host3);
	assert_int_equal(v[5].addr, 0xfee00000u);	/* no NTB on the way */
	assert_int_equal(smartio_resolve_bar(f->h, host3, acc1, 0, path,
					     sizeof(path), &size), 0);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	regs = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(regs != MAP_FAILED);
	assert_int_equal(smartio_irq_count(f->h, acc1, 5, &n), 0);
	{
		struct fx local = *f;

		local.bar0 = regs;
		start(&local, 2, rd64(&local, 0x10), rd64(&local, 0x10) + 4096,
		      4096, 5, 1);
		assert_int_equal(wait_done(&local, 2), 2);
	}
	end = time(NULL) + 20;
	do {
		assert_true(time(NULL) <= end);
		assert_int_equal(smartio_irq_count(f->h, acc1, 5, &now), 0);
		if (now == n)
			th_nap();
	} while (now == n);
	munmap((void *)regs, size);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_registers),
		cmocka_unit_test(test_engines_copy_side_by_side),
		cmocka_unit_test(test_transfer_outside_the_window_is_blocked),
		cmocka_unit_test(test_completion_interrupts_and_masking),
		cmocka_unit_test(test_vector_beyond_the_table_is_a_driver_error),
		cmocka_unit_test(test_lender_local_interrupts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
