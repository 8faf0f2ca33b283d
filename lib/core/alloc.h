/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The core's allocators.  All state is plain data inside the registry so
 * that it lives in shared memory (simulator) or kernel memory alike.
 *
 *  - sio_bitmap: fixed-size entry tables: NTB look-up-table slots (one slot
 *    is window/luts bytes of NTB window space, so a contiguous run of slots
 *    is a window-space allocation) and requester-id entries.
 *  - sio_range: address ranges with arbitrary alignment: node RAM for
 *    segments, IOVA space for DMA windows.
 */
#ifndef SIO_ALLOC_H
#define SIO_ALLOC_H

#include "compat.h"

#define SIO_BITMAP_WORDS 64	/* up to 4096 entries */
#define SIO_RANGE_EXTENTS 128	/* live allocations per range */

struct sio_bitmap {
	u32 total;	/* entries managed */
	u32 reserved;	/* the first `reserved` entries are never handed out */
	u32 used;	/* allocated, not counting reserved */
	u32 pad;
	u64 map[SIO_BITMAP_WORDS];
};

struct sio_extent {
	u64 start;
	u64 len;
};

struct sio_range {
	u64 base;
	u64 size;
	u64 used;
	u32 count;	/* live extents, sorted by start */
	u32 pad;
	struct sio_extent ext[SIO_RANGE_EXTENTS];
};

int sio_bitmap_init(struct sio_bitmap *b, u32 total, u32 reserved);
/* Contiguous run of n entries; returns first index or -ENOSPC / -EINVAL. */
int sio_bitmap_alloc(struct sio_bitmap *b, u32 n);
/* Frees a run; -EINVAL if any entry of it was not allocated (nothing freed). */
int sio_bitmap_free(struct sio_bitmap *b, u32 first, u32 n);
int sio_bitmap_test(const struct sio_bitmap *b, u32 index);
/* Frees every allocated entry (node loss). */
void sio_bitmap_reset(struct sio_bitmap *b);

void sio_range_init(struct sio_range *r, u64 base, u64 size);
/* First fit; align a power of two; 0 / -ENOSPC / -EINVAL, *addr set. */
int sio_range_alloc(struct sio_range *r, u64 len, u64 align, u64 *addr);
/* Frees exactly an extent that was allocated; -EINVAL otherwise. */
int sio_range_free(struct sio_range *r, u64 addr);
void sio_range_reset(struct sio_range *r);

#endif /* SIO_ALLOC_H */
