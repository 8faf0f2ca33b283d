// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 28, item 3: the simulated fabric's interrupt remapping.  A write
 * into a node's interrupt range raises a vector only when it comes from a
 * device whose interrupts are routed to that node, with one of that
 * device's vectors as data.  Tried as a borrower would: host0 borrows
 * acc0 (a DMA engine lent by host2) and programs it to write 4 bytes to
 * 0xfee00000 -- on the lender's bus, host2's own interrupt range -- with
 * the data of vector 0 of host2's own nvme2, then to its MSI window with
 * a vector that is not its own.  Nothing is raised; both writes are
 * blocked, counted and reported; the engine's own vectors still work.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "harness.h"

#define ENG(e) (0x100u + 0x40u * (e))
#define MSIX_CTL 0x72		/* both models' MSI-X capability at 0x70 */

struct fx {
	struct smartio *h;
	char fabric[64];
	unsigned host0, host2, acc0, nvme2;
	volatile uint8_t *bar0, *bar2;
	uint64_t size0, size2, mem;
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

static void wr64(struct fx *f, unsigned off, uint64_t v)
{
	wr32(f, off, (uint32_t)v);
	wr32(f, off + 4, (uint32_t)(v >> 32));
}

/* Engine 0 copies 4 bytes of the device's memory (data) to dst. */
static uint32_t write_dword(struct fx *f, uint64_t dst, uint32_t data)
{
	time_t end = time(NULL) + 20;
	uint32_t st;

	memcpy((void *)f->bar2, &data, 4);
	wr64(f, ENG(0), f->mem);
	wr64(f, ENG(0) + 8, dst);
	wr32(f, ENG(0) + 0x10, 4);
	wr32(f, ENG(0) + 0x18, 0);
	wr32(f, ENG(0) + 0x14, 1);
	while (!((st = rd32(f, ENG(0) + 0x18)) & 2)) {
		assert_true(time(NULL) <= end);	/* a hang, not a timing */
		th_nap();
	}
	return st;
}

static void msix_enable(struct fx *f, unsigned dev, unsigned node)
{
	uint16_t ctl;

	assert_int_equal(smartio_config_read(f->h, dev, node, MSIX_CTL, &ctl,
					     2), 2);
	ctl |= 0x8000;
	assert_int_equal(smartio_config_write(f->h, dev, node, MSIX_CTL, &ctl,
					      2), 2);
}

static uint64_t count(struct fx *f, unsigned dev, unsigned vec)
{
	uint64_t n = 0;

	assert_int_equal(smartio_irq_count(f->h, dev, vec, &n), 0);
	return n;
}

static int setup(void **state)
{
	static struct fx f;
	char path[256];

	memset(&f, 0, sizeof(f));
	f.h = th_open(NULL, NULL, f.fabric, sizeof(f.fabric));
	f.host0 = th_node(f.h, "host0");
	f.host2 = th_node(f.h, "host2");
	f.acc0 = th_dev(f.h, "acc0");
	f.nvme2 = th_dev(f.h, "nvme2");
	assert_int_equal(smartio_lend(f.h, f.acc0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(f.h, f.acc0, f.host0), 0);
	assert_int_equal(smartio_resolve_bar(f.h, f.host0, f.acc0, 0, path,
					     sizeof(path), &f.size0), 0);
	f.bar0 = th_map_file(path, f.size0);
	assert_int_equal(smartio_resolve_bar(f.h, f.host0, f.acc0, 2, path,
					     sizeof(path), &f.size2), 0);
	f.bar2 = th_map_file(path, f.size2);
	f.mem = rd32(&f, 0x10) | (uint64_t)rd32(&f, 0x14) << 32;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	munmap((void *)f->bar0, f->size0);
	munmap((void *)f->bar2, f->size2);
	smartio_close(f->h);
	return 0;
}

static void test_borrowed_engine_cannot_raise_the_lenders_vectors(void **state)
{
	struct fx *f = *state;
	struct smartio_msi_vector nv[1], av[8];
	uint64_t cur = smartio_event_cursor(f->h), n;
	uint64_t blocked = smartio_blocked(f->h, f->host2);

	msix_enable(f, f->nvme2, f->host2);	/* the lender's own device */
	assert_true(smartio_msi_vectors(f->h, f->nvme2, nv, 1) >= 1);
	assert_int_equal(nv[0].node, f->host2);
	assert_int_equal(nv[0].addr, 0xfee00000u);
	n = count(f, f->nvme2, 0);
	assert_int_equal(write_dword(f, 0xfee00000u, nv[0].data) & 4, 4);
	assert_int_equal(count(f, f->nvme2, 0), n);
	assert_true(smartio_blocked(f->h, f->host2) > blocked);
	assert_true(th_saw_event(f->h, &cur, "dma-fault", "dev/acc0"));

	/* Through its own MSI window, only its own vectors. */
	msix_enable(f, f->acc0, f->host0);
	assert_int_equal(smartio_msi_vectors(f->h, f->acc0, av, 8), 8);
	assert_int_equal(av[0].node, f->host0);
	n = count(f, f->acc0, 0);
	assert_int_equal(write_dword(f, av[0].addr, av[0].data + 8) & 4, 4);
	assert_int_equal(count(f, f->acc0, 0), n);
	assert_int_equal(write_dword(f, av[0].addr, av[0].data), 2);
	assert_int_equal(count(f, f->acc0, 0), n + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_borrowed_engine_cannot_raise_the_lenders_vectors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
