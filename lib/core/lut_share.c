// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * One node's share of another node's look-up table (issue 12, defect 8):
 * an adapter with a share gives any one other node at most that many of
 * its slots, counted over what it maps for that node: the DMA and MSI
 * windows of its borrows, segment windows for its segments, peer mappings
 * it asked for.  So a node that borrows several devices of one lender, or
 * maps many segments for them, cannot take the table from the others.
 * Checked wherever such slots are taken, dry runs included, before
 * anything is allocated.
 */
#include "core_int.h"

/* Slots of node's adapter held for node who. */
u32 sio_lut_held(struct sio_core *c, u32 node, u32 adapter, u32 who)
{
	struct sio_registry *r = c->reg;
	u32 i, n = 0;

	for (i = 0; i < r->max_borrows; i++) {
		const struct sio_borrow *b = sio_borrow_at(r, i);

		if (!b->used || b->lender != node || b->l_adapter != adapter ||
		    b->borrower != who)
			continue;
		n += (b->l_lut >= 0 ? b->l_lut_count : 0) +
		     (b->msi_lut >= 0 ? b->msi_lut_count : 0);
	}
	for (i = 0; i < r->max_segdma; i++) {
		const struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used && (m->kind == SIO_SEGDMA_WINDOW ||
				m->kind == SIO_SEGDMA_LENDER) &&
		    m->lut >= 0 && sio_dev(r, m->dev)->node == node &&
		    m->adapter == adapter && m->owner == who)
			n += m->lut_count;
	}
	for (i = 0; i < r->max_peermap; i++) {
		const struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used && m->kind == SIO_PEERMAP_MAP && m->lut >= 0 &&
		    sio_dev(r, m->dev)->node == node &&
		    m->adapter == adapter && m->node == who)
			n += m->lut_count;
	}
	return n;
}

/* 0 when who may take count more slots of node's adapter, else -ENOSPC. */
int sio_lut_share_ok(struct sio_core *c, u32 node, u32 adapter, u32 who,
		     u32 count)
{
	const struct sio_adapter *ad = &sio_node(c->reg, node)->adapter[adapter];

	if (!ad->share || who == node)
		return 0;
	return sio_lut_held(c, node, adapter, who) + count > ad->share ?
		-ENOSPC : 0;
}

/* The slots len bytes of node's adapter take. */
u32 sio_lut_slots(struct sio_core *c, u32 node, u32 adapter, u64 len)
{
	const struct sio_adapter *ad = &sio_node(c->reg, node)->adapter[adapter];

	return ad->slot_size ? (u32)SIO_DIV_ROUND_UP(len, ad->slot_size) : 0;
}
