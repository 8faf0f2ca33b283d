// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The simulated data path: a device's DMA walks the whole translation chain
 * (lender NTB window -> LUT -> borrower IOVA -> IOMMU -> RAM) and lands in
 * the backing memory that an mmap of the segment shows; anything outside a
 * mapping, or from a requester that is not allowed, is blocked and counted.
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
#include <unistd.h>

#include "harness.h"
#include "registry.h"

struct fixture {
	struct smartio *h;
	char fabric[64];
	unsigned host0, host1, host2, host3, acc0, nvme1, nvme2;
};

static int setup(void **state)
{
	static struct fixture fx;

	fx.h = th_open(NULL, NULL, fx.fabric, sizeof(fx.fabric));
	fx.host0 = th_node(fx.h, "host0");
	fx.host1 = th_node(fx.h, "host1");
	fx.host2 = th_node(fx.h, "host2");
	fx.host3 = th_node(fx.h, "host3");
	fx.acc0 = th_dev(fx.h, "acc0");
	fx.nvme1 = th_dev(fx.h, "nvme1");
	fx.nvme2 = th_dev(fx.h, "nvme2");
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	smartio_close(fx->h);
	return 0;
}

static void read_segment(struct smartio *h, unsigned viewer, unsigned owner,
			 const char *name, off_t off, void *buf, size_t len)
{
	char path[256];
	uint64_t size;
	int fd;

	assert_int_equal(smartio_resolve_segment(h, viewer, owner, name, path,
						 sizeof(path), &size), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

/* acc0 lives on host2 and is borrowed by host0, which maps "buf" for it. */
static uint64_t borrow_and_map(struct fixture *fx)
{
	uint64_t ioaddr = 0;

	assert_int_equal(smartio_lend(fx->h, fx->acc0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx->h, fx->acc0, fx->host0), 0);
	assert_int_equal(smartio_segment_create(fx->h, fx->host0, "buf"), 0);
	assert_int_equal(smartio_segment_set_size(fx->h, fx->host0, "buf", 1 << 20), 0);
	assert_int_equal(smartio_segment_dma_map(fx->h, fx->host0, "buf", fx->acc0,
						 &ioaddr), 0);
	return ioaddr;
}

static void test_dma_from_lent_device_reaches_borrower_ram(void **state)
{
	struct fixture *fx = *state;
	uint64_t ioaddr = borrow_and_map(fx), again = 0;
	char msg[] = "hello smartio", got[sizeof(msg)] = { 0 };

	/* The device addresses the borrower's RAM through its lender's window. */
	assert_true(ioaddr >= SIO_WINDOW_BASE);
	assert_int_equal(smartio_segment_dma_addr(fx->h, fx->host0, "buf", fx->acc0,
						  &again), 0);
	assert_int_equal(again, ioaddr);
	assert_int_equal(smartio_dma(fx->h, fx->acc0, ioaddr + 100, msg,
				     sizeof(msg), 1), 0);
	read_segment(fx->h, fx->host0, fx->host0, "buf", 100, got, sizeof(got));
	assert_string_equal(got, msg);
	memset(got, 0, sizeof(got));
	assert_int_equal(smartio_dma(fx->h, fx->acc0, ioaddr + 100, got,
				     sizeof(got), 0), 0);
	assert_string_equal(got, msg);
}

static void test_dma_outside_window_is_blocked_and_counted(void **state)
{
	struct fixture *fx = *state;
	uint64_t ioaddr = borrow_and_map(fx), cur = smartio_event_cursor(fx->h);
	uint64_t b0 = smartio_blocked(fx->h, fx->host0);
	uint64_t b2 = smartio_blocked(fx->h, fx->host2);
	char junk[64], zero[64] = { 0 }, got[64];
	struct smartio_device_info di;

	memset(junk, 0xee, sizeof(junk));
	/* Inside the DMA window but past the segment: the borrower's IOMMU. */
	assert_int_equal(smartio_dma(fx->h, fx->acc0, ioaddr + (1 << 20), junk,
				     sizeof(junk), 1), -EFAULT);
	assert_int_equal(smartio_blocked(fx->h, fx->host0), b0 + 1);
	/* Straddling the end of the segment. */
	assert_int_equal(smartio_dma(fx->h, fx->acc0, ioaddr + (1 << 20) - 8, junk,
				     sizeof(junk), 1), -EFAULT);
	assert_int_equal(smartio_blocked(fx->h, fx->host0), b0 + 2);
	/* Far beyond any LUT entry of the lender's window. */
	assert_int_equal(smartio_dma(fx->h, fx->acc0, SIO_WINDOW_BASE + (3ull << 30),
				     junk, sizeof(junk), 1), -EFAULT);
	/* Lender-local memory nobody mapped for the device. */
	assert_int_equal(smartio_dma(fx->h, fx->acc0, 0x12345000, junk,
				     sizeof(junk), 1), -EFAULT);
	assert_int_equal(smartio_blocked(fx->h, fx->host2), b2 + 2);
	read_segment(fx->h, fx->host0, fx->host0, "buf", (1 << 20) - 64, got,
		     sizeof(got));
	assert_memory_equal(got, zero, sizeof(got));
	assert_true(th_saw_event(fx->h, &cur, "dma-fault", "dev/acc0"));
	assert_int_equal(smartio_device_info(fx->h, fx->acc0, &di), 0);
	assert_int_equal(di.stats.dma_faults, 4);
}

static void test_other_requester_is_not_allowed_through_the_window(void **state)
{
	struct fixture *fx = *state;
	uint64_t ioaddr = borrow_and_map(fx);
	uint64_t b2 = smartio_blocked(fx->h, fx->host2);
	char junk[16] = "not for you";

	/* nvme2 sits beside acc0 on host2 but the LUT only admits acc0. */
	assert_int_equal(smartio_dma(fx->h, fx->nvme2, ioaddr, junk, sizeof(junk), 1),
			 -EFAULT);
	assert_int_equal(smartio_blocked(fx->h, fx->host2), b2 + 1);
}

static void test_segments_local_to_lender_and_on_a_third_node(void **state)
{
	struct fixture *fx = *state;
	uint64_t local = 0, remote = 0;
	char a[] = "local ram", b[] = "third node", got[16];

	assert_int_equal(smartio_segment_create(fx->h, fx->host2, "l"), 0);
	assert_int_equal(smartio_segment_set_size(fx->h, fx->host2, "l", 4096), 0);
	assert_int_equal(smartio_segment_dma_map(fx->h, fx->host2, "l", fx->acc0,
						 &local), 0);
	assert_true(local < SIO_WINDOW_BASE);	/* IOMMU only, no NTB */
	assert_int_equal(smartio_dma(fx->h, fx->acc0, local, a, sizeof(a), 1), 0);
	read_segment(fx->h, fx->host2, fx->host2, "l", 0, got, sizeof(a));
	assert_string_equal(got, a);

	assert_int_equal(smartio_segment_create(fx->h, fx->host3, "r"), 0);
	assert_int_equal(smartio_segment_set_size(fx->h, fx->host3, "r", 8192), 0);
	assert_int_equal(smartio_segment_dma_map(fx->h, fx->host3, "r", fx->acc0,
						 &remote), 0);
	assert_int_equal(smartio_segment_dma_map(fx->h, fx->host3, "r", fx->acc0,
						 &remote), -EEXIST);
	assert_true(remote >= SIO_WINDOW_BASE);
	assert_int_equal(smartio_dma(fx->h, fx->acc0, remote + 4096, b, sizeof(b),
				     1), 0);
	read_segment(fx->h, fx->host3, fx->host3, "r", 4096, got, sizeof(b));
	assert_string_equal(got, b);
	assert_int_equal(smartio_segment_destroy(fx->h, fx->host3, "r"), -EBUSY);
	assert_int_equal(smartio_segment_dma_unmap(fx->h, fx->host3, "r", fx->acc0), 0);
	assert_int_equal(smartio_dma(fx->h, fx->acc0, remote + 4096, b, sizeof(b),
				     1), -EFAULT);
	assert_int_equal(smartio_segment_destroy(fx->h, fx->host3, "r"), 0);
}

static void test_borrowed_bar_maps_the_lenders_memory(void **state)
{
	struct fixture *fx = *state;
	char lp[256], bp[256];
	uint64_t size;
	volatile uint32_t *lm, *bm;
	int lf, bf;

	assert_int_equal(smartio_resolve_bar(fx->h, fx->host0, fx->nvme1, 0, bp,
					     sizeof(bp), &size), -EACCES);
	assert_int_equal(smartio_lend(fx->h, fx->nvme1, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx->h, fx->nvme1, fx->host0), 0);
	assert_int_equal(smartio_resolve_bar(fx->h, fx->host0, fx->nvme1, 0, bp,
					     sizeof(bp), &size), 0);
	assert_int_equal(smartio_resolve_bar(fx->h, fx->host1, fx->nvme1, 0, lp,
					     sizeof(lp), &size), 0);
	assert_string_equal(bp, lp);
	assert_int_equal(smartio_resolve_bar(fx->h, fx->host3, fx->nvme1, 0, bp,
					     sizeof(bp), &size), -EACCES);
	assert_int_equal(smartio_resolve_bar(fx->h, fx->host0, fx->nvme1, 1, bp,
					     sizeof(bp), &size), -ENOENT);
	lf = open(lp, O_RDWR);
	bf = open(bp, O_RDWR);
	assert_true(lf >= 0 && bf >= 0);
	lm = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, lf, 0);
	bm = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, bf, 0);
	assert_true(lm != MAP_FAILED && bm != MAP_FAILED);
	bm[3] = 0xfeedf00d;
	assert_int_equal(lm[3], 0xfeedf00d);
	munmap((void *)lm, size);
	munmap((void *)bm, size);
	close(lf);
	close(bf);
	assert_int_equal(smartio_return(fx->h, fx->nvme1, fx->host0), 0);
	assert_int_equal(smartio_resolve_bar(fx->h, fx->host0, fx->nvme1, 0, bp,
					     sizeof(bp), &size), -EACCES);
}

/*
 * gpu0's bar1 (256M) is larger than one LUT slot (16M with the default
 * 4G/256 window), so the borrower reaches it through 16 consecutive
 * entries; a DMA into a 32M segment crosses a slot boundary the same way.
 */
static void test_mappings_larger_than_one_lut_slot(void **state)
{
	struct fixture *fx = *state;
	unsigned gpu0 = th_dev(fx->h, "gpu0");
	uint64_t size, ioaddr = 0, across = 16ull << 20;
	char path[256], msg[16] = "across-a-slot!", back[16];

	assert_int_equal(smartio_lend(fx->h, gpu0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx->h, gpu0, fx->host3), 0);
	assert_int_equal(smartio_resolve_bar(fx->h, fx->host3, gpu0, 1, path,
					     sizeof(path), &size), 0);
	assert_int_equal(size, 256ull << 20);
	assert_int_equal(smartio_return(fx->h, gpu0, fx->host3), 0);

	assert_int_equal(smartio_lend(fx->h, fx->acc0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx->h, fx->acc0, fx->host0), 0);
	assert_int_equal(smartio_segment_create(fx->h, fx->host0, "big"), 0);
	assert_int_equal(smartio_segment_set_size(fx->h, fx->host0, "big",
						  32ull << 20), 0);
	assert_int_equal(smartio_segment_dma_map(fx->h, fx->host0, "big",
						 fx->acc0, &ioaddr), 0);
	assert_int_equal(smartio_dma(fx->h, fx->acc0, ioaddr + across - 8, msg,
				     sizeof(msg), 1), 0);
	read_segment(fx->h, fx->host0, fx->host0, "big", (off_t)across - 8,
		     back, sizeof(back));
	assert_memory_equal(back, msg, sizeof(msg));
	/* Past the end of the 32M mapping: blocked. */
	assert_int_equal(smartio_dma(fx->h, fx->acc0, ioaddr + (32ull << 20) - 8,
				     msg, sizeof(msg), 1), -EFAULT);
	assert_int_equal(smartio_return(fx->h, fx->acc0, fx->host0), 0);
	assert_int_equal(smartio_segment_destroy(fx->h, fx->host0, "big"), 0);
}

static void test_return_revokes_the_dma_path(void **state)
{
	struct fixture *fx = *state;
	uint64_t ioaddr = borrow_and_map(fx);
	char msg[8] = "x";

	assert_int_equal(smartio_dma(fx->h, fx->acc0, ioaddr, msg, sizeof(msg), 1), 0);
	assert_int_equal(smartio_return(fx->h, fx->acc0, fx->host0), 0);
	assert_int_equal(smartio_segment_dma_addr(fx->h, fx->host0, "buf", fx->acc0,
						  &ioaddr), -ENOENT);
	assert_int_equal(smartio_dma(fx->h, fx->acc0, ioaddr, msg, sizeof(msg), 1),
			 -EFAULT);
	assert_int_equal(smartio_segment_destroy(fx->h, fx->host0, "buf"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dma_from_lent_device_reaches_borrower_ram, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dma_outside_window_is_blocked_and_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_requester_is_not_allowed_through_the_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_segments_local_to_lender_and_on_a_third_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_borrowed_bar_maps_the_lenders_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_return_revokes_the_dma_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mappings_larger_than_one_lut_slot, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
