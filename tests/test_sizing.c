// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 17 item 5, sizing as the SmartIO papers used it: a borrow's DMA
 * window as large as the device and driver need (a GPU-sized 1 GiB, or all
 * of the borrower's RAM, sections 7.1 and 7.3) instead of a fixed 64 MiB,
 * limited only by window and LUT space; MSI-X with the 2048 vectors the
 * specification allows (the core routed 32); a device switched from
 * exclusive to shared while its one borrower keeps it (section 6.1).
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
#include "smartio_internal.h"
#include "fabric.h"
#include "devmodel.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* 4G windows of 256 LUT entries: 16M a slot. */
#define SIZING_TOPO \
	"fabric luts=256 requesters=32 reserved=2 window=4G\n" \
	"node host0 id=0 ram=768M\n" \
	"node host1 id=1 ram=1G\n" \
	"node host2 id=2 ram=1G\n" \
	"adapter host0 ntb0 peers=all\n" \
	"adapter host1 ntb0 peers=all\n" \
	"adapter host2 ntb0 peers=all\n" \
	"device host1 gpu0 bdf=0000:01:00.0 vendor=0x10de device=0x1eb8 class=0x030200 bar0=16M bar1=256M,64,prefetch\n" \
	"device host1 gpu1 bdf=0000:02:00.0 vendor=0x10de device=0x1eb8 class=0x030200 bar0=16M bar1=256M,64,prefetch\n" \
	"device host1 acc0 bdf=0000:03:00.0 vendor=0x1234 device=0x11e8 class=0x120000 config=4096 model=dma bar0=1M bar2=64M,64,prefetch\n" \
	"device host1 nic0 bdf=0000:04:00.0 vendor=0x8086 device=0x10d3 class=0x020000 bar0=16K\n"

struct fx {
	struct smartio *h;
	char fabric[64];
	unsigned h0, h1, h2;
};

static int setup(void **state)
{
	static struct fx f;
	const char *lent[] = { "gpu0", "gpu1", "acc0", "nic0" };
	unsigned i;

	f.h = th_open(SIZING_TOPO, NULL, f.fabric, sizeof(f.fabric));
	f.h0 = th_node(f.h, "host0");
	f.h1 = th_node(f.h, "host1");
	f.h2 = th_node(f.h, "host2");
	for (i = 0; i < 4; i++)
		assert_int_equal(smartio_lend(f.h, th_dev(f.h, lent[i]),
					      SMARTIO_LEND_ALL, 0), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	smartio_close(((struct fx *)*state)->h);
	return 0;
}

static uint64_t window_of(struct smartio *h, unsigned dev, unsigned node)
{
	struct smartio_dma_window w[8];
	int n = smartio_dma_windows(h, dev, w, 8), i;

	for (i = 0; i < n; i++)
		if (w[i].node == node)
			return w[i].size;
	return 0;
}

/* What a refused borrow must leave as it was. */
struct snap {
	unsigned luts0, luts1, reqs0, reqs1;
	uint64_t borrowers;
};

static struct snap snap(struct fx *f, unsigned dev)
{
	struct smartio_device_info di;
	struct snap s;

	assert_int_equal(smartio_device_info(f->h, dev, &di), 0);
	s.luts0 = th_luts_used(f->h, f->h0);
	s.luts1 = th_luts_used(f->h, f->h1);
	s.reqs0 = th_reqs_used(f->h, f->h0);
	s.reqs1 = th_reqs_used(f->h, f->h1);
	s.borrowers = di.borrowers;
	return s;
}

static void same(struct fx *f, unsigned dev, struct snap a)
{
	struct snap b = snap(f, dev);

	assert_int_equal(a.luts0, b.luts0);
	assert_int_equal(a.luts1, b.luts1);
	assert_int_equal(a.reqs0, b.reqs0);
	assert_int_equal(a.reqs1, b.reqs1);
	assert_int_equal(a.borrowers, b.borrowers);
}

static void test_borrow_gets_a_gpu_sized_dma_window(void **state)
{
	struct fx *f = *state;
	unsigned gpu = th_dev(f->h, "gpu0"), l1 = th_luts_used(f->h, f->h1);

	assert_int_equal(smartio_borrow_window(f->h, gpu, f->h0, GiB), 0);
	assert_int_equal(window_of(f->h, gpu, f->h0), GiB);
	/* 64 slots of 16M for the window, one for the MSI window. */
	assert_int_equal(th_luts_used(f->h, f->h1), l1 + 64 + 1);
	assert_int_equal(smartio_return(f->h, gpu, f->h0), 0);
	assert_int_equal(th_luts_used(f->h, f->h1), l1);
	/* All of host0's 768M, rounded up to a power of two. */
	assert_int_equal(smartio_borrow_window(f->h, gpu, f->h0,
					       SMARTIO_DMA_WINDOW_RAM), 0);
	assert_int_equal(window_of(f->h, gpu, f->h0), GiB);
	assert_int_equal(smartio_return(f->h, gpu, f->h0), 0);
	/* Asking for nothing keeps the old default. */
	assert_int_equal(smartio_borrow(f->h, gpu, f->h0), 0);
	assert_int_equal(window_of(f->h, gpu, f->h0), 64 * MiB);
	assert_int_equal(smartio_return(f->h, gpu, f->h0), 0);
}

static void test_dma_window_limited_by_window_and_luts(void **state)
{
	struct fx *f = *state;
	unsigned g0 = th_dev(f->h, "gpu0"), g1 = th_dev(f->h, "gpu1");
	struct snap s = snap(f, g0);

	/* Hostile sizes: refused where they enter, nothing taken. */
	assert_int_equal(smartio_borrow_window(f->h, g0, f->h0, 3000), -EINVAL);
	same(f, g0, s);
	assert_int_equal(smartio_borrow_window(f->h, g0, f->h0, 1024), -EINVAL);
	same(f, g0, s);
	assert_int_equal(smartio_borrow_window(f->h, g0, f->h0, GiB + 4096),
			 -EINVAL);
	same(f, g0, s);
	assert_int_equal(smartio_borrow_window(f->h, g0, f->h0, 1ull << 63),
			 -EINVAL);
	same(f, g0, s);
	/* Larger than the lender's 4G window. */
	assert_int_equal(smartio_borrow_window(f->h, g0, f->h0, 8 * GiB),
			 -ENOSPC);
	same(f, g0, s);
	/* 2G takes 128 of 256 slots (+1 MSI): a second 2G does not fit. */
	assert_int_equal(smartio_borrow_window(f->h, g0, f->h0, 2 * GiB), 0);
	s = snap(f, g1);
	assert_int_equal(smartio_borrow_window(f->h, g1, f->h0, 2 * GiB),
			 -ENOSPC);
	same(f, g1, s);
	assert_int_equal(smartio_borrow_window(f->h, g1, f->h0, GiB), 0);
	assert_int_equal(window_of(f->h, g1, f->h0), GiB);
	assert_int_equal(smartio_return(f->h, g1, f->h0), 0);
	assert_int_equal(smartio_return(f->h, g0, f->h0), 0);
}

static void test_exclusive_becomes_shared_while_borrowed(void **state)
{
	struct fx *f = *state;
	unsigned nic = th_dev(f->h, "nic0");
	struct smartio_device_info di;

	assert_int_equal(smartio_borrow(f->h, nic, f->h0), 0);
	assert_int_equal(smartio_borrow(f->h, nic, f->h2), -EBUSY);
	assert_int_equal(smartio_set_mode(f->h, nic, SMARTIO_SHARED), 0);
	/* host0 keeps the device and its window; host2 may join now. */
	assert_int_equal(smartio_device_info(f->h, nic, &di), 0);
	assert_int_equal(di.borrowers, 1ull << f->h0);
	assert_int_equal(window_of(f->h, nic, f->h0), 64 * MiB);
	assert_int_equal(smartio_borrow(f->h, nic, f->h2), 0);
	/* Back to exclusive only when nobody borrows it. */
	assert_int_equal(smartio_set_mode(f->h, nic, SMARTIO_EXCLUSIVE), -EBUSY);
	assert_int_equal(smartio_return(f->h, nic, f->h2), 0);
	assert_int_equal(smartio_set_mode(f->h, nic, SMARTIO_EXCLUSIVE), -EBUSY);
	assert_int_equal(smartio_return(f->h, nic, f->h0), 0);
	assert_int_equal(smartio_set_mode(f->h, nic, SMARTIO_EXCLUSIVE), 0);
}

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void test_msix_routes_2048_vectors(void **state)
{
	struct fx *f = *state;
	unsigned acc = th_dev(f->h, "acc0");
	struct sim_fabric *sf = sio_lib_fabric(f->h);
	static struct smartio_msi_vector v[2048];
	const uint32_t table = 0x10000, pba = 0x18000;
	volatile uint8_t *bar0;
	uint32_t w[4];
	uint64_t size;
	uint16_t ctl;
	char path[256];
	int fd;

	/* A function whose MSI-X table has the maximum 2048 entries. */
	sim_lock(sf);
	put16(sim_cfg(sf, acc) + SIM_CAP_MSIX + 2, 2047);
	put32(sim_cfg(sf, acc) + SIM_CAP_MSIX + 4, table);
	put32(sim_cfg(sf, acc) + SIM_CAP_MSIX + 8, pba);
	sim_unlock(sf);
	assert_int_equal(smartio_borrow(f->h, acc, f->h0), 0);
	assert_int_equal(smartio_config_read(f->h, acc, f->h0,
					     SIM_CAP_MSIX + 2, &ctl, 2), 2);
	assert_int_equal(ctl & 0x7ff, 2047);
	ctl |= 0x8000;
	assert_int_equal(smartio_config_write(f->h, acc, f->h0,
					      SIM_CAP_MSIX + 2, &ctl, 2), 2);
	assert_int_equal(smartio_msi_vectors(f->h, acc, v, 2048), 2048);
	assert_int_equal(v[2047].node, f->h0);
	assert_int_equal(v[2047].data, v[0].data + 2047);
	/* The last table entry is routed, not masked. */
	assert_int_equal(smartio_resolve_bar(f->h, f->h0, acc, 0, path,
					     sizeof(path), &size), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	bar0 = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(bar0 != MAP_FAILED);
	memcpy(w, (const void *)(bar0 + table + 16 * 2047), 16);
	assert_int_equal(w[0], (uint32_t)v[2047].addr);
	assert_int_equal(w[1], (uint32_t)(v[2047].addr >> 32));
	assert_int_equal(w[2], v[2047].data);
	assert_int_equal(w[3] & 1, 0);
	munmap((void *)bar0, size);
	assert_int_equal(smartio_return(f->h, acc, f->h0), 0);
	assert_int_equal(smartio_msi_vectors(f->h, acc, v, 2048), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_borrow_gets_a_gpu_sized_dma_window),
		cmocka_unit_test(test_dma_window_limited_by_window_and_luts),
		cmocka_unit_test(test_exclusive_becomes_shared_while_borrowed),
		cmocka_unit_test(test_msix_routes_2048_vectors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
