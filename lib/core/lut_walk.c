// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The walk of an NTB window's look-up table that both platforms make
 * when an access enters the window: the simulator for every CPU and
 * device access, smartio.ko to find what a BAR or segment mapping leads
 * to.  The window is cut into equal slots; an access that crosses slots
 * (a BAR larger than one slot is mapped by consecutive entries) must be
 * allowed by each and lead on contiguously to one node, as a burst
 * crossing them would.  The platforms keep their slots their own way and
 * judge each slot themselves (the simulator checks requesters, MPIOV
 * style); the walk is the arithmetic and the contiguity.
 */
#include "core.h"

int sio_lut_walk(const struct sio_adapter *ad, u64 addr, u64 len,
		 sio_lut_slot_fn slot, void *ctx, u32 *tnode, u64 *taddr)
{
	u64 rel, index, off, left = len, expect = 0;
	struct sio_lut_view first = { 0 }, v;
	int err, seen = 0;

	if (!ad->slot_size || addr < ad->window_base ||
	    addr - ad->window_base >= ad->window_size ||
	    len > ad->window_size - (addr - ad->window_base))
		return -ERANGE;
	rel = addr - ad->window_base;
	index = rel / ad->slot_size;
	off = rel % ad->slot_size;
	do {
		u64 piece = ad->slot_size - off;

		if (piece > left)
			piece = left;
		err = slot(ctx, (u32)index, off, piece, &v);
		if (err)
			return err;
		if (!seen) {
			first = v;
			expect = v.target_addr + off;
			seen = 1;
		} else if (v.target_node != first.target_node ||
			   v.target_addr != expect) {
			return -EXDEV;
		}
		expect += piece;
		left -= piece;
		index++;
		off = 0;
	} while (left);
	*tnode = first.target_node;
	*taddr = first.target_addr + rel % ad->slot_size;
	return 0;
}
