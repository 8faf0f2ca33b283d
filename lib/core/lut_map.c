// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Slots of an adapter's look-up table taken and pointed at a target
 * (a BAR, a DMA or MSI window, a segment, a peer's BAR), or cleared and
 * given back.  A mapping longer than one slot takes consecutive slots,
 * which sio_lut_walk (lut_walk.c) follows; a failure part way leaves no
 * slot taken or set.
 */
#include "core_int.h"

int sio_lut_map(struct sio_core *c, u32 node, u32 adapter, u64 len,
		u32 target_node, u64 target_addr, u32 src_node, u16 rid,
		u32 *count_out)
{
	struct sio_adapter *ad = &sio_node(c->reg, node)->adapter[adapter];
	u32 count = (u32)SIO_DIV_ROUND_UP(len, ad->slot_size), i;
	int first, err;

	if (len == 0 || len > ad->window_size)
		return len ? -ENOSPC : -EINVAL;
	first = sio_bitmap_alloc(&ad->luts, count);
	if (first < 0)
		return first;
	for (i = 0; i < count; i++) {
		u64 off = (u64)i * ad->slot_size;
		u64 piece = len - off < ad->slot_size ? len - off : ad->slot_size;

		err = c->ops->lut_set(c->plat, node, adapter, (u32)first + i,
				      target_node, target_addr + off, piece,
				      src_node, rid);
		if (err) {
			sio_lut_unmap(c, node, adapter, first, i);
			if (count > i)
				sio_bitmap_free(&ad->luts, (u32)first + i,
						count - i);
			return err;
		}
	}
	*count_out = count;
	return first;
}

void sio_lut_unmap(struct sio_core *c, u32 node, u32 adapter, s32 first,
		   u32 count)
{
	struct sio_adapter *ad = &sio_node(c->reg, node)->adapter[adapter];
	u32 i;

	if (first < 0 || count == 0)
		return;
	for (i = 0; i < count; i++)
		c->ops->lut_clear(c->plat, node, adapter, (u32)first + i);
	sio_bitmap_free(&ad->luts, (u32)first, count);
}
