// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Peer-to-peer: a DMA engine writes straight into another device's BAR.
 * acc0 (host2) and gpu0 (host1) are both borrowed by host0, which maps
 * gpu0's BARs for acc0: the engine's writes go through host2's NTB window
 * and LUT to an IOVA of host1 that its IOMMU maps to gpu0's BAR.  acc1 and
 * nic1 share their lender host3: an IOMMU mapping alone.  Only a node that
 * uses both devices may set it up, and the mapping goes with the borrow.
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

#define ENG(e) (0x100u + 0x40u * (e))

struct fx {
	struct smartio *h;
	char fabric[64];
	unsigned host0, host2, host3, acc0, acc1, gpu0, nic1;
};

static void *map_bar(struct fx *f, unsigned viewer, unsigned dev, unsigned bar,
		     uint64_t *size)
{
	char path[256];
	void *p;
	int fd;

	assert_int_equal(smartio_resolve_bar(f->h, viewer, dev, bar, path,
					     sizeof(path), size), 0);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	p = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	return p;
}

static void wr32(volatile uint8_t *b, unsigned off, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(b + off), v, __ATOMIC_RELEASE);
}

static uint32_t rd32(volatile uint8_t *b, unsigned off)
{
	return __atomic_load_n((volatile uint32_t *)(b + off), __ATOMIC_ACQUIRE);
}

static uint64_t rd64(volatile uint8_t *b, unsigned off)
{
	return rd32(b, off) | (uint64_t)rd32(b, off + 4) << 32;
}

/* One transfer on engine 0 of the DMA engine at bar0; returns status. */
static uint32_t copy(volatile uint8_t *bar0, uint64_t src, uint64_t dst,
		     uint32_t len)
{
	time_t end = time(NULL) + 20;
	uint32_t st;

	wr32(bar0, ENG(0), (uint32_t)src);
	wr32(bar0, ENG(0) + 4, (uint32_t)(src >> 32));
	wr32(bar0, ENG(0) + 8, (uint32_t)dst);
	wr32(bar0, ENG(0) + 12, (uint32_t)(dst >> 32));
	wr32(bar0, ENG(0) + 0x10, len);
	wr32(bar0, ENG(0) + 0x18, 0);
	wr32(bar0, ENG(0) + 0x14, 1);
	while (!((st = rd32(bar0, ENG(0) + 0x18)) & 2)) {
		struct timespec ts = { 0, 200000 };

		assert_true(time(NULL) <= end);
		nanosleep(&ts, NULL);
	}
	return st;
}

static int setup(void **state)
{
	static struct fx f;

	memset(&f, 0, sizeof(f));
	f.h = th_open(NULL, NULL, f.fabric, sizeof(f.fabric));
	f.host0 = th_node(f.h, "host0");
	f.host2 = th_node(f.h, "host2");
	f.host3 = th_node(f.h, "host3");
	f.acc0 = th_dev(f.h, "acc0");
	f.acc1 = th_dev(f.h, "acc1");
	f.gpu0 = th_dev(f.h, "gpu0");
	f.nic1 = th_dev(f.h, "nic1");
	assert_int_equal(smartio_lend(f.h, f.acc0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_lend(f.h, f.gpu0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(f.h, f.acc0, f.host0), 0);
	assert_int_equal(smartio_borrow(f.h, f.gpu0, f.host0), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	smartio_close(f->h);
	return 0;
}

static void test_engine_writes_into_a_gpu_on_another_node(void **state)
{
	struct fx *f = *state;
	uint64_t s0, s2, sg, b1 = 0, b0 = 0;
	volatile uint8_t *acc, *mem, *gpu;
	uint8_t pat[4096];
	unsigned i;

	assert_int_equal(smartio_peer_addr(f->h, f->acc0, f->gpu0, 1, &b1),
			 -ENOENT);
	assert_int_equal(smartio_peer_map(f->h, f->acc0, f->gpu0, f->host0), 0);
	assert_int_equal(smartio_peer_addr(f->h, f->acc0, f->gpu0, 0, &b0), 0);
	assert_int_equal(smartio_peer_addr(f->h, f->acc0, f->gpu0, 1, &b1), 0);
	assert_true(b0 != b1);
	acc = map_bar(f, f->host0, f->acc0, 0, &s0);
	mem = map_bar(f, f->host0, f->acc0, 2, &s2);
	gpu = map_bar(f, f->host0, f->gpu0, 1, &sg);
	for (i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 11 + 5);
	memcpy((void *)mem, pat, sizeof(pat));
	/* acc0's memory -> gpu0's BAR 1, 16M in (several LUT slots away). */
	assert_int_equal(copy(acc, rd64(acc, 0x10), b1 + (16u << 20) + 4096,
			      sizeof(pat)), 2);
	assert_memory_equal((const void *)(gpu + (16u << 20) + 4096), pat,
			    sizeof(pat));
	/* And back: gpu0's BAR 1 -> acc0's memory. */
	memset((void *)(mem + 8192), 0, sizeof(pat));
	assert_int_equal(copy(acc, b1 + (16u << 20) + 4096,
			      rd64(acc, 0x10) + 8192, sizeof(pat)), 2);
	assert_memory_equal((const void *)(mem + 8192), pat, sizeof(pat));
	munmap((void *)acc, s0);
	munmap((void *)mem, s2);
	munmap((void *)gpu, sg);
}

static void test_who_may_map_and_bad_requests(void **state)
{
	struct fx *f = *state;

	assert_int_equal(smartio_peer_map(f->h, f->acc0, f->gpu0, f->host0),
			 -EEXIST);
	/* host3 uses neither device. */
	assert_int_equal(smartio_peer_map(f->h, f->acc0, f->nic1, f->host3),
			 -EACCES);
	assert_int_equal(smartio_peer_unmap(f->h, f->acc0, f->gpu0, f->host3),
			 -EACCES);
	assert_int_equal(smartio_peer_map(f->h, f->acc0, f->acc0, f->host0),
			 -EINVAL);
	assert_int_equal(smartio_peer_map(f->h, f->acc0, 9999, f->host0),
			 -ENXIO);
	assert_int_equal(smartio_peer_unmap(f->h, f->gpu0, f->acc0, f->host0),
			 -ENOENT);
}

static void test_unmapped_peer_is_blocked(void **state)
{
	struct fx *f = *state;
	uint64_t s0, b1 = 0, cur = smartio_event_cursor(f->h);
	volatile uint8_t *acc;

	assert_int_equal(smartio_peer_addr(f->h, f->acc0, f->gpu0, 1, &b1), 0);
	assert_int_equal(smartio_peer_unmap(f->h, f->acc0, f->gpu0, f->host0), 0);
	assert_int_equal(smartio_peer_addr(f->h, f->acc0, f->gpu0, 1, &b1),
			 -ENOENT);
	acc = map_bar(f, f->host0, f->acc0, 0, &s0);
	assert_int_equal(copy(acc, rd64(acc, 0x10), b1, 64), 2 | 4);
	assert_true(th_saw_event(f->h, &cur, "dma-fault", "dev/acc0"));
	munmap((void *)acc, s0);
}

static void test_same_lender_uses_the_iommu_alone(void **state)
{
	struct fx *f = *state;
	unsigned luts = th_luts_used(f->h, f->host3);
	uint64_t s0, s2, sn, a = 0;
	volatile uint8_t *acc, *mem, *nic;

	assert_int_equal(smartio_peer_map(f->h, f->acc1, f->nic1, f->host3), 0);
	assert_int_equal(th_luts_used(f->h, f->host3), luts);
	assert_int_equal(smartio_peer_addr(f->h, f->acc1, f->nic1, 2, &a), 0);
	acc = map_bar(f, f->host3, f->acc1, 0, &s0);
	mem = map_bar(f, f->host3, f->acc1, 2, &s2);
	nic = map_bar(f, f->host3, f->nic1, 2, &sn);
	memcpy((void *)mem, "peer-to-peer", 12);
	memset((void *)nic, 0, 64);
	assert_int_equal(copy(acc, rd64(acc, 0x10), a + 32, 12), 2);
	assert_memory_equal((const void *)(nic + 32), "peer-to-peer", 12);
	assert_int_equal(smartio_peer_unmap(f->h, f->acc1, f->nic1, f->host3), 0);
	munmap((void *)acc, s0);
	munmap((void *)mem, s2);
	munmap((void *)nic, sn);
}

/*
 * The target is local to the borrower: acc0 (lent by host2, borrowed by
 * host0) writes into nic0, a device installed in host0 itself.  The path
 * is host2's NTB window and LUT to an IOVA of host0, which host0's IOMMU
 * maps to nic0's BAR for acc0's requester id.
 */
static void test_target_local_to_the_borrower(void **state)
{
	struct fx *f = *state;
	unsigned nic0 = th_dev(f->h, "nic0");
	unsigned luts = th_luts_used(f->h, f->host2);
	uint64_t s0, s2, sn, a = 0;
	volatile uint8_t *acc, *mem, *nic;

	assert_int_equal(smartio_peer_map(f->h, f->acc0, nic0, f->host0), 0);
	assert_true(th_luts_used(f->h, f->host2) > luts);
	assert_int_equal(smartio_peer_addr(f->h, f->acc0, nic0, 0, &a), 0);
	acc = map_bar(f, f->host0, f->acc0, 0, &s0);
	mem = map_bar(f, f->host0, f->acc0, 2, &s2);
	nic = map_bar(f, f->host0, nic0, 0, &sn);
	memcpy((void *)mem, "to-the-borrower", 15);
	memset((void *)nic, 0, 128);
	assert_int_equal(copy(acc, rd64(acc, 0x10), a + 64, 15), 2);
	assert_memory_equal((const void *)(nic + 64), "to-the-borrower", 15);
	assert_int_equal(smartio_peer_unmap(f->h, f->acc0, nic0, f->host0), 0);
	assert_int_equal(th_luts_used(f->h, f->host2), luts);
	/* Unmapped: the same copy is blocked and the BAR is untouched. */
	memset((void *)nic, 0, 128);
	assert_int_not_equal(copy(acc, rd64(acc, 0x10), a + 64, 15), 2);
	assert_int_equal(nic[64], 0);
	munmap((void *)acc, s0);
	munmap((void *)mem, s2);
	munmap((void *)nic, sn);
}

/* Returning either device takes the asker's peer mappings away. */
static void test_return_releases_the_mapping(void **state)
{
	struct fx *f = *state;
	unsigned luts = th_luts_used(f->h, f->host2);
	uint64_t a = 0;

	assert_int_equal(smartio_peer_map(f->h, f->acc0, f->gpu0, f->host0), 0);
	assert_true(th_luts_used(f->h, f->host2) > luts);
	assert_int_equal(smartio_return(f->h, f->gpu0, f->host0), 0);
	assert_int_equal(smartio_peer_addr(f->h, f->acc0, f->gpu0, 0, &a),
			 -ENOENT);
	assert_int_equal(th_luts_used(f->h, f->host2), luts);
	assert_int_equal(smartio_borrow(f->h, f->gpu0, f->host0), 0);
	assert_int_equal(smartio_peer_map(f->h, f->acc0, f->gpu0, f->host0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_writes_into_a_gpu_on_another_node),
		cmocka_unit_test(test_who_may_map_and_bad_requests),
		cmocka_unit_test(test_unmapped_peer_is_blocked),
		cmocka_unit_test(test_same_lender_uses_the_iommu_alone),
		cmocka_unit_test(test_target_local_to_the_borrower),
		cmocka_unit_test(test_return_releases_the_mapping),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
