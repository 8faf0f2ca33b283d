// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Mapping a segment for a device (SmartIO's "available for device"): the
 * owner of the segment gives the device an address that reaches it.
 *   LOCAL   device and segment on one node: an IOMMU mapping only.
 *   BORROW  the owner borrows the device: an IOVA inside the DMA window
 *           mapped at borrow time, so no NTB change at all.
 *   WINDOW  the device is lent elsewhere or not at all: the owner asks the
 *           device's lender (MAP_SEG_WINDOW) for LUT slots from the
 *           lender's NTB window to an IOVA of the owner, allowed for the
 *           device's requester id only; UNMAP_SEG_WINDOW gives them back.
 * As for borrows, the lender writes only its own half of the record.
 */
#include "core_int.h"

int sio_segdma_find(struct sio_registry *r, u32 seg, u32 dev)
{
	u32 i;

	for (i = 0; i < r->max_segdma; i++) {
		struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used && m->seg == seg && m->dev == dev)
			return (int)i;
	}
	return -ENOENT;
}

static int window_call(struct sio_core *c, u32 self, struct sio_segdma *m,
		       u8 cmd, u64 size, u64 *addr)
{
	struct sio_device *d = sio_dev(c->reg, m->dev);
	u8 buf[SIO_PEER_MSG], repbuf[SIO_PEER_MSG];
	struct sio_parsed rep;
	struct sio_msg msg;
	int err;

	sio_msg_init(&msg, buf, sizeof(buf), cmd, SIO_F_REQUEST, 0);
	sio_msg_put_u32(&msg, SIO_A_DEV, d->fdid);
	sio_msg_put_u32(&msg, SIO_A_NODE, self);
	sio_msg_put_u64(&msg, SIO_A_IOVA, m->iova);
	if (cmd == SIO_CMD_MAP_SEG_WINDOW)
		sio_msg_put_u64(&msg, SIO_A_SIZE, size);
	err = sio_core_call(c, self, d->node, &msg, &rep, repbuf,
			    sizeof(repbuf));
	if (err || !addr)
		return err;
	if (!rep.present[SIO_A_ADDR])
		return -EPROTO;
	*addr = sio_nla_u64(&rep.tb[SIO_A_ADDR]);
	return 0;
}

/* The lender's half of a WINDOW mapping. */
static void lender_unmap(struct sio_core *c, struct sio_segdma *m)
{
	sio_lut_unmap(c, sio_dev(c->reg, m->dev)->node, m->adapter, m->lut,
		      m->lut_count);
	m->lut = -1;
	m->lut_count = 0;
}

static void segdma_release(struct sio_core *c, u32 midx)
{
	struct sio_registry *r = c->reg;
	struct sio_segdma *m = sio_segdma_at(r, midx);
	struct sio_segment *s = sio_seg(r, m->seg);
	struct sio_device *d = sio_dev(r, m->dev);
	u32 owner = s->owner;
	int bidx;

	switch (m->kind) {
	case SIO_SEGDMA_LOCAL:
		c->ops->iommu_unmap(c->plat, owner, owner, d->rid, m->iova);
		sio_range_free(&sio_node(r, owner)->iova, m->iova);
		break;
	case SIO_SEGDMA_BORROW:
		c->ops->iommu_unmap(c->plat, owner, d->node, d->rid, m->iova);
		bidx = sio_borrow_find(r, m->dev, owner);
		if (bidx >= 0)
			sio_range_free(&sio_borrow_at(r, (u32)bidx)->window,
				       m->iova);
		break;
	default:
		/* A lender that is down or refuses has nothing left to free. */
		if (m->lut >= 0 && (!sio_node_up(r, d->node) ||
				    window_call(c, owner, m,
						SIO_CMD_UNMAP_SEG_WINDOW, 0,
						NULL)))
			lender_unmap(c, m);
		c->ops->iommu_unmap(c->plat, owner, d->node, d->rid, m->iova);
		sio_range_free(&sio_node(r, owner)->iova, m->iova);
		break;
	}
	sio_memset(m, 0, sizeof(*m));
}

void sio_segdma_release_dev(struct sio_core *c, u32 dev, u32 borrower)
{
	struct sio_registry *r = c->reg;
	u32 i;

	for (i = 0; i < r->max_segdma; i++) {
		struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used && m->dev == dev && m->kind == SIO_SEGDMA_BORROW &&
		    sio_seg(r, m->seg)->owner == borrower)
			segdma_release(c, i);
	}
}

void sio_segdma_node_down(struct sio_core *c, u32 node)
{
	struct sio_registry *r = c->reg;
	u32 i;

	for (i = 0; i < r->max_segdma; i++) {
		struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used && (sio_seg(r, m->seg)->owner == node ||
				sio_dev(r, m->dev)->node == node))
			segdma_release(c, i);
	}
}

/* Reserves the IOVA the device will reach, by kind; fills m->ioaddr. */
static int place(struct sio_core *c, u32 self, struct sio_segdma *m)
{
	struct sio_registry *r = c->reg;
	struct sio_segment *s = sio_seg(r, m->seg);
	struct sio_device *d = sio_dev(r, m->dev);
	int bidx = sio_borrow_find(r, m->dev, self), err;

	if (d->node == self) {
		m->kind = SIO_SEGDMA_LOCAL;
	} else if (bidx >= 0) {
		struct sio_borrow *b = sio_borrow_at(r, (u32)bidx);

		m->kind = SIO_SEGDMA_BORROW;
		err = sio_range_alloc(&b->window, s->size, SIO_PAGE, &m->iova);
		if (!err)
			m->ioaddr = b->dma_addr + (m->iova - b->iova);
		return err;
	} else {
		m->kind = SIO_SEGDMA_WINDOW;
	}
	err = sio_range_alloc(&sio_node(r, self)->iova, s->size, SIO_PAGE,
			      &m->iova);
	if (!err)
		m->ioaddr = m->iova;
	return err;
}

/* Maps segment seg for device dev; the owner of seg is self. */
int sio_seg_dma_map(struct sio_core *c, u32 self, u32 seg, u32 dev,
		    struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	struct sio_segment *s = sio_seg(r, seg);
	struct sio_device *d = sio_dev(r, dev);
	struct sio_segdma *m;
	int midx, err;

	if (!s->sized)
		return -EINVAL;
	if (sio_segdma_find(r, seg, dev) >= 0)
		return -EEXIST;
	if (d->gone || !sio_node_up(r, d->node))
		return -EHOSTDOWN;
	midx = SIO_FREE_ENTRY(r, sio_segdma_at, max_segdma);
	if (midx < 0)
		return midx;
	m = sio_segdma_at(r, (u32)midx);
	sio_memset(m, 0, sizeof(*m));
	m->seg = seg;
	m->dev = dev;
	m->lut = -1;
	err = place(c, self, m);
	if (err) {
		sio_memset(m, 0, sizeof(*m));
		return err;
	}
	m->used = 1;
	err = c->ops->iommu_map(c->plat, self,
				m->kind == SIO_SEGDMA_LOCAL ? self : d->node,
				d->rid, m->iova, s->phys, s->size);
	if (!err && m->kind == SIO_SEGDMA_WINDOW) {
		err = window_call(c, self, m, SIO_CMD_MAP_SEG_WINDOW, s->size,
				  &m->ioaddr);
		if (err)
			c->ops->iommu_unmap(c->plat, self, d->node, d->rid,
					    m->iova);
	}
	if (err) {
		if (m->kind == SIO_SEGDMA_BORROW)
			sio_range_free(&sio_borrow_at(r, (u32)sio_borrow_find(
					       r, dev, self))->window, m->iova);
		else
			sio_range_free(&sio_node(r, self)->iova, m->iova);
		sio_memset(m, 0, sizeof(*m));
		return err;
	}
	sio_seg_event(c, SIO_EV_SEGMENT_DMA_MAP, seg, "dev", d->name);
	return sio_msg_put_u64(rep, SIO_A_ADDR, m->ioaddr);
}

int sio_seg_dma_unmap(struct sio_core *c, u32 self, u32 seg, u32 dev)
{
	int idx = sio_segdma_find(c->reg, seg, dev);

	(void)self;
	if (idx < 0)
		return idx;
	segdma_release(c, (u32)idx);
	sio_seg_event(c, SIO_EV_SEGMENT_DMA_UNMAP, seg, "dev",
		      sio_dev(c->reg, dev)->name);
	return 0;
}

/* MAP_SEG_WINDOW and UNMAP_SEG_WINDOW, handled by the device's lender. */
int sio_h_seg_window(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p), owner, path, first;
	struct sio_segdma *m = NULL;
	struct sio_adapter *ad;
	u64 iova;
	u32 i, count;

	if (dev < 0)
		return dev;
	owner = sio_msg_node(r, p, SIO_A_NODE);
	if (owner < 0)
		return owner;
	if (!p->present[SIO_A_IOVA])
		return -EINVAL;
	if (sio_dev(r, (u32)dev)->node != self)
		return -ENXIO;
	iova = sio_nla_u64(&p->tb[SIO_A_IOVA]);
	for (i = 0; i < r->max_segdma; i++) {
		struct sio_segdma *e = sio_segdma_at(r, i);

		if (e->used && e->kind == SIO_SEGDMA_WINDOW &&
		    e->dev == (u32)dev && e->iova == iova &&
		    sio_seg(r, e->seg)->owner == (u32)owner)
			m = e;
	}
	if (!m)
		return -ENOENT;
	if (p->cmd == SIO_CMD_UNMAP_SEG_WINDOW) {
		if (m->lut < 0)
			return -ENOENT;
		lender_unmap(c, m);
		return 0;
	}
	if (!p->present[SIO_A_SIZE] ||
	    sio_nla_u64(&p->tb[SIO_A_SIZE]) != sio_seg(r, m->seg)->size)
		return -EINVAL;
	if (m->lut >= 0)
		return -EBUSY;
	path = sio_path_find(r, self, (u32)owner);
	if (path < 0)
		return path;
	first = sio_lut_map(c, self, (u32)path, sio_seg(r, m->seg)->size,
			    (u32)owner, iova, self, sio_dev(r, (u32)dev)->rid,
			    &count);
	if (first < 0)
		return first;
	m->adapter = (u8)path;
	m->lut = first;
	m->lut_count = count;
	ad = &sio_node(r, self)->adapter[path];
	return sio_msg_put_u64(rep, SIO_A_ADDR,
			       ad->window_base + (u64)first * ad->slot_size);
}
