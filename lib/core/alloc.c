// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "alloc.h"

static int bit_get(const struct sio_bitmap *b, u32 i)
{
	return (b->map[i / 64] >> (i % 64)) & 1;
}

static void bit_put(struct sio_bitmap *b, u32 i, int v)
{
	if (v)
		b->map[i / 64] |= 1ull << (i % 64);
	else
		b->map[i / 64] &= ~(1ull << (i % 64));
}

int sio_bitmap_init(struct sio_bitmap *b, u32 total, u32 reserved)
{
	u32 i;

	if (total == 0 || total > SIO_BITMAP_WORDS * 64 || reserved >= total)
		return -EINVAL;
	sio_memset(b, 0, sizeof(*b));
	b->total = total;
	b->reserved = reserved;
	for (i = 0; i < reserved; i++)
		bit_put(b, i, 1);
	return 0;
}

int sio_bitmap_alloc(struct sio_bitmap *b, u32 n)
{
	u32 start, i;

	if (n == 0 || n > b->total)
		return -EINVAL;
	for (start = b->reserved; start + n <= b->total; start++) {
		for (i = 0; i < n && !bit_get(b, start + i); i++)
			;
		if (i == n) {
			for (i = 0; i < n; i++)
				bit_put(b, start + i, 1);
			b->used += n;
			return (int)start;
		}
		start += i;	/* skip past the taken entry */
	}
	return -ENOSPC;
}

int sio_bitmap_free(struct sio_bitmap *b, u32 first, u32 n)
{
	u32 i;

	if (n == 0 || first < b->reserved || first + n > b->total ||
	    first + n < first)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!bit_get(b, first + i))
			return -EINVAL;
	for (i = 0; i < n; i++)
		bit_put(b, first + i, 0);
	b->used -= n;
	return 0;
}

int sio_bitmap_test(const struct sio_bitmap *b, u32 index)
{
	return index < b->total && bit_get(b, index);
}

void sio_bitmap_reset(struct sio_bitmap *b)
{
	sio_bitmap_init(b, b->total, b->reserved);
}

void sio_range_init(struct sio_range *r, u64 base, u64 size)
{
	sio_memset(r, 0, sizeof(*r));
	r->base = base;
	r->size = size;
}

int sio_range_alloc(struct sio_range *r, u64 len, u64 align, u64 *addr)
{
	u64 cand, end = r->base + r->size;
	u32 i;

	if (len == 0 || align == 0 || (align & (align - 1)) || len > r->size)
		return -EINVAL;
	if (r->count == SIO_RANGE_EXTENTS)
		return -ENOSPC;
	cand = SIO_ALIGN_UP(r->base, align);
	/* Extents are sorted: try the gap before each, then the tail. */
	for (i = 0; i <= r->count; i++) {
		u64 gap_end = i < r->count ? r->ext[i].start : end;

		if (cand + len >= cand && cand + len <= gap_end)
			break;
		if (i < r->count)
			cand = SIO_ALIGN_UP(r->ext[i].start + r->ext[i].len,
					    align);
	}
	if (i > r->count)
		return -ENOSPC;
	for (u32 j = r->count; j > i; j--)
		r->ext[j] = r->ext[j - 1];
	r->ext[i].start = cand;
	r->ext[i].len = len;
	r->count++;
	r->used += len;
	*addr = cand;
	return 0;
}

int sio_range_free(struct sio_range *r, u64 addr)
{
	u32 i;

	for (i = 0; i < r->count; i++)
		if (r->ext[i].start == addr)
			break;
	if (i == r->count)
		return -EINVAL;
	r->used -= r->ext[i].len;
	for (; i + 1 < r->count; i++)
		r->ext[i] = r->ext[i + 1];
	r->count--;
	/* No trace of it: an allocation undone leaves the bytes as they were. */
	r->ext[r->count].start = 0;
	r->ext[r->count].len = 0;
	return 0;
}

void sio_range_reset(struct sio_range *r)
{
	sio_range_init(r, r->base, r->size);
}
