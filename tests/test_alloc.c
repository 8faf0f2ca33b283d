// SPDX-License-Identifier: GPL-2.0-or-later
/* The core's allocators: bitmap (LUT slots, requester ids) and ranges. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "alloc.h"

static void test_bitmap_reserved_entries_are_never_handed_out(void **state)
{
	struct sio_bitmap b;
	int i;

	(void)state;
	assert_int_equal(sio_bitmap_init(&b, 32, 2), 0);
	for (i = 0; i < 30; i++)
		assert_int_equal(sio_bitmap_alloc(&b, 1), i + 2);
	assert_int_equal(sio_bitmap_alloc(&b, 1), -ENOSPC);
	assert_int_equal(b.used, 30);
	assert_int_equal(sio_bitmap_free(&b, 0, 1), -EINVAL);
	assert_int_equal(sio_bitmap_free(&b, 5, 1), 0);
	assert_int_equal(sio_bitmap_alloc(&b, 1), 5);
}

static void test_bitmap_contiguous_runs_and_fragmentation(void **state)
{
	struct sio_bitmap b;

	(void)state;
	assert_int_equal(sio_bitmap_init(&b, 16, 0), 0);
	assert_int_equal(sio_bitmap_alloc(&b, 4), 0);
	assert_int_equal(sio_bitmap_alloc(&b, 4), 4);
	assert_int_equal(sio_bitmap_alloc(&b, 4), 8);
	assert_int_equal(sio_bitmap_free(&b, 4, 4), 0);
	assert_int_equal(sio_bitmap_alloc(&b, 5), -ENOSPC);
	assert_int_equal(sio_bitmap_alloc(&b, 4), 4);
	assert_int_equal(sio_bitmap_alloc(&b, 4), 12);
	assert_int_equal(sio_bitmap_alloc(&b, 1), -ENOSPC);
	/* Freeing something not allocated changes nothing. */
	assert_int_equal(sio_bitmap_free(&b, 14, 4), -EINVAL);
	assert_int_equal(b.used, 16);
	sio_bitmap_reset(&b);
	assert_int_equal(b.used, 0);
	assert_int_equal(sio_bitmap_alloc(&b, 16), 0);
}

static void test_bitmap_rejects_bad_sizes(void **state)
{
	struct sio_bitmap b;

	(void)state;
	assert_int_equal(sio_bitmap_init(&b, 0, 0), -EINVAL);
	assert_int_equal(sio_bitmap_init(&b, 4, 4), -EINVAL);
	assert_int_equal(sio_bitmap_init(&b, 5000, 0), -EINVAL);
	assert_int_equal(sio_bitmap_init(&b, 4096, 0), 0);
	assert_int_equal(sio_bitmap_alloc(&b, 0), -EINVAL);
	assert_int_equal(sio_bitmap_alloc(&b, 4097), -EINVAL);
	assert_int_equal(sio_bitmap_alloc(&b, 4096), 0);
}

static void test_range_alignment_first_fit_and_reuse(void **state)
{
	struct sio_range r;
	uint64_t a, b, c;

	(void)state;
	sio_range_init(&r, 0x1000, 0x10000);
	assert_int_equal(sio_range_alloc(&r, 0x1000, 0x1000, &a), 0);
	assert_int_equal(a, 0x1000);
	assert_int_equal(sio_range_alloc(&r, 0x4000, 0x4000, &b), 0);
	assert_int_equal(b, 0x4000);
	assert_int_equal(sio_range_alloc(&r, 0x1000, 0x1000, &c), 0);
	assert_int_equal(c, 0x2000);	/* the gap before b */
	assert_int_equal(sio_range_free(&r, b), 0);
	assert_int_equal(sio_range_free(&r, b), -EINVAL);
	assert_int_equal(sio_range_alloc(&r, 0x8000, 0x8000, &b), 0);
	assert_int_equal(b, 0x8000);
	assert_int_equal(sio_range_alloc(&r, 0x8000, 0x1000, &b), -ENOSPC);
	assert_int_equal(sio_range_alloc(&r, 0x1000, 3, &b), -EINVAL);
	assert_int_equal(sio_range_alloc(&r, 0, 0x1000, &b), -EINVAL);
}

static void test_range_extent_table_exhaustion(void **state)
{
	struct sio_range r;
	uint64_t a;
	int i;

	(void)state;
	sio_range_init(&r, 0, 1ull << 30);
	for (i = 0; i < SIO_RANGE_EXTENTS; i++)
		assert_int_equal(sio_range_alloc(&r, 4096, 4096, &a), 0);
	assert_int_equal(sio_range_alloc(&r, 4096, 4096, &a), -ENOSPC);
	assert_int_equal(sio_range_free(&r, 0), 0);
	assert_int_equal(sio_range_alloc(&r, 4096, 4096, &a), 0);
	assert_int_equal(a, 0);
	sio_range_reset(&r);
	assert_int_equal(r.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bitmap_reserved_entries_are_never_handed_out),
		cmocka_unit_test(test_bitmap_contiguous_runs_and_fragmentation),
		cmocka_unit_test(test_bitmap_rejects_bad_sizes),
		cmocka_unit_test(test_range_alignment_first_fit_and_reuse),
		cmocka_unit_test(test_range_extent_table_exhaustion),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
