// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Mapping a segment for a device (SmartIO's "available for device"): the
 * owner of the segment gives the device an address that reaches it.
 *   LOCAL   device and segment on one node: an IOMMU mapping only.
 *   BORROW  the owner borrows the device: an IOVA inside the DMA window
 *           mapped at borrow time, so no NTB change at all.  A platform
 *           may place it itself (window_dma_addr: address arithmetic
 *           where its window leads to all of the owner's RAM, as the
 *           shadow's DMA, or a range of the window it maps), and is told
 *           when the core lets it go (window_dma_release).
 *   WINDOW  the device is lent elsewhere or not at all: the owner asks the
 *           device's lender (MAP_SEG_WINDOW) for LUT slots from the
 *           lender's NTB window to an IOVA of the owner, allowed for the
 *           device's requester id only; UNMAP_SEG_WINDOW gives them back.
 * As for borrows, the lender writes only its own half of the record.  With
 * separate registries (SIO_CORE_SEPARATE) that half is a record of the
 * lender's own (SIO_SEGDMA_LENDER), and the owner translates the granted
 * slots onto the segment on its side (inbound_map SIO_INB_SEG), as NTBs
 * are programmed on the receiving side.
 */
#include "core_int.h"

static int separate(const struct sio_core *c)
{
	return !!(c->flags & SIO_CORE_SEPARATE);
}

int sio_segdma_find(struct sio_registry *r, u32 seg, u32 dev)
{
	u32 i;

	for (i = 0; i < r->max_segdma; i++) {
		struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used && m->kind != SIO_SEGDMA_LENDER && m->seg == seg &&
		    m->dev == dev)
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

/* The owner's half of a WINDOW mapping with separate registries. */
static void owner_unmap_separate(struct sio_core *c, struct sio_segdma *m)
{
	struct sio_device *d = sio_dev(c->reg, m->dev);

	/* A lender that is down or refuses has nothing left to free. */
	if (sio_node_up(c->reg, d->node))
		window_call(c, m->owner, m, SIO_CMD_UNMAP_SEG_WINDOW, 0, NULL);
	if (m->window && c->ops->inbound_unmap)
		c->ops->inbound_unmap(c->plat, m->owner, d->node, SIO_INB_SEG,
				      m->dev, m->window,
				      sio_seg(c->reg, m->seg)->size);
	m->window = 0;
}

/* What window_dma_addr placed is no longer used (the platform unmaps it). */
static void direct_release(struct sio_core *c, u32 self,
			   const struct sio_segdma *m)
{
	const struct sio_segment *s = sio_seg(c->reg, m->seg);

	if (c->ops->window_dma_release)
		c->ops->window_dma_release(c->plat, self, m->dev, s->phys,
					   s->size, m->ioaddr);
}

static void segdma_release(struct sio_core *c, u32 midx)
{
	struct sio_registry *r = c->reg;
	struct sio_segdma *m = sio_segdma_at(r, midx);
	struct sio_device *d = sio_dev(r, m->dev);
	u32 owner = m->owner;
	int bidx;

	switch (m->kind) {
	case SIO_SEGDMA_LOCAL:
		sio_iova_unmap(c, owner, owner, d->rid, m->iova);
		break;
	case SIO_SEGDMA_BORROW:
		if (m->direct) {
			direct_release(c, owner, m);
			break;
		}
		c->ops->iommu_unmap(c->plat, owner, d->node, d->rid, m->iova);
		bidx = sio_borrow_find(r, m->dev, owner);
		if (bidx >= 0)
			sio_range_free(&sio_borrow_at(r, (u32)bidx)->window,
				       m->iova);
		break;
	case SIO_SEGDMA_LENDER:
		if (m->lut >= 0)
			lender_unmap(c, m);
		break;
	default:
		if (separate(c))
			owner_unmap_separate(c, m);
		else if (m->lut >= 0 && (!sio_node_up(r, d->node) ||
					 window_call(c, owner, m,
						     SIO_CMD_UNMAP_SEG_WINDOW,
						     0, NULL)))
			lender_unmap(c, m);
		sio_iova_unmap(c, owner, d->node, d->rid, m->iova);
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
		    m->owner == borrower)
			segdma_release(c, i);
	}
}

void sio_segdma_node_down(struct sio_core *c, u32 node)
{
	struct sio_registry *r = c->reg;
	u32 i;

	for (i = 0; i < r->max_segdma; i++) {
		struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used && (m->owner == node ||
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
		if (c->ops->window_dma_addr) {
			m->direct = 1;
			return c->ops->window_dma_addr(c->plat, self, m->dev,
						       s->phys, s->size,
						       &m->ioaddr);
		}
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

/* The device's address of a window address of node's adapter. */
static u64 dev_addr(struct sio_core *c, u32 node, u64 addr)
{
	return c->ops->dev_addr ? c->ops->dev_addr(c->plat, node, addr) : addr;
}

/*
 * The WINDOW kind's conversation: the lender grants LUT slots toward us;
 * with separate registries we then translate them onto the segment.
 */
static int window_open(struct sio_core *c, u32 self, struct sio_segdma *m)
{
	struct sio_segment *s = sio_seg(c->reg, m->seg);
	u32 lender = sio_dev(c->reg, m->dev)->node;
	u64 addr;
	int err;

	err = window_call(c, self, m, SIO_CMD_MAP_SEG_WINDOW, s->size, &addr);
	if (err)
		return err;
	if (separate(c) && c->ops->inbound_map) {
		err = c->ops->inbound_map(c->plat, self, lender, SIO_INB_SEG,
					  m->dev, addr, s->phys, s->size);
		if (err) {
			window_call(c, self, m, SIO_CMD_UNMAP_SEG_WINDOW, 0,
				    NULL);
			return err;
		}
		m->window = addr;
	}
	m->ioaddr = dev_addr(c, lender, addr);
	return 0;
}

/* Gives back what place() reserved. */
static void unplace(struct sio_core *c, u32 self, struct sio_segdma *m)
{
	struct sio_registry *r = c->reg;

	if (m->kind == SIO_SEGDMA_BORROW && m->direct)
		direct_release(c, self, m);
	else if (m->kind == SIO_SEGDMA_BORROW)
		sio_range_free(&sio_borrow_at(r, (u32)sio_borrow_find(
					       r, m->dev, self))->window, m->iova);
	else if (m->kind != SIO_SEGDMA_BORROW)
		sio_range_free(&sio_node(r, self)->iova, m->iova);
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
	midx = sio_share_room(c, SIO_SHARE_SEGDMA, self);
	if (midx < 0)
		return midx;
	midx = SIO_FREE_ENTRY(r, sio_segdma_at, max_segdma);
	if (midx < 0)
		return midx;
	m = sio_segdma_at(r, (u32)midx);
	sio_memset(m, 0, sizeof(*m));
	m->seg = seg;
	m->dev = dev;
	m->owner = self;
	m->lut = -1;
	err = place(c, self, m);
	if (err) {
		sio_memset(m, 0, sizeof(*m));
		return err;
	}
	m->used = 1;
	if (!m->direct)
		err = c->ops->iommu_map(c->plat, self,
					m->kind == SIO_SEGDMA_LOCAL ?
					self : d->node,
					d->rid, m->iova, s->phys, s->size);
	if (!err && m->kind == SIO_SEGDMA_WINDOW) {
		err = window_open(c, self, m);
		if (err)
			c->ops->iommu_unmap(c->plat, self, d->node, d->rid,
					    m->iova);
	}
	if (err) {
		unplace(c, self, m);
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

/*
 * The record of the lender's half: the owner's own WINDOW record in one
 * registry; with separate registries one of the lender's, made by the map.
 */
static struct sio_segdma *lender_half(struct sio_core *c, u32 dev, u32 owner,
				      u64 iova, int create)
{
	struct sio_registry *r = c->reg;
	u8 kind = separate(c) ? SIO_SEGDMA_LENDER : SIO_SEGDMA_WINDOW;
	struct sio_segdma *m;
	u32 i;

	for (i = 0; i < r->max_segdma; i++) {
		m = sio_segdma_at(r, i);
		if (m->used && m->kind == kind && m->dev == dev &&
		    m->iova == iova && m->owner == owner)
			return m;
	}
	if (!create || kind != SIO_SEGDMA_LENDER)
		return NULL;
	m = SIO_CLAIM_RECORD(r, sio_segdma_at, max_segdma);
	if (!m)
		return NULL;
	m->kind = SIO_SEGDMA_LENDER;
	m->dev = dev;
	m->owner = owner;
	m->iova = iova;
	m->lut = -1;
	return m;
}

/*
 * The size a MAP_SEG_WINDOW may ask for: the segment's as this registry
 * knows it; with separate registries, whole pages of at most one window
 * (sio_lut_map then refuses what the free slots cannot hold).
 */
static int window_size_ok(struct sio_core *c, const struct sio_segdma *m,
			  u32 path, u64 size)
{
	const struct sio_adapter *ad =
		&sio_node(c->reg, sio_dev(c->reg, m->dev)->node)->adapter[path];

	if (m->kind == SIO_SEGDMA_WINDOW)
		return size == sio_seg(c->reg, m->seg)->size;
	return size && size % SIO_PAGE == 0 && size <= ad->window_size;
}

/* MAP_SEG_WINDOW and UNMAP_SEG_WINDOW, handled by the device's lender. */
int sio_h_seg_window(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p), owner, path, first;
	int map = p->cmd == SIO_CMD_MAP_SEG_WINDOW;
	struct sio_segdma *m;
	struct sio_adapter *ad;
	u64 size;
	u32 count;

	if (dev < 0)
		return dev;
	owner = sio_msg_node(r, p, SIO_A_NODE);
	if (owner < 0)
		return owner;
	if (sio_dev(r, (u32)dev)->node != self || (u32)owner == self)
		return -ENXIO;
	path = sio_path_find(r, self, (u32)owner);
	if (map && path < 0)
		return path;
	m = lender_half(c, (u32)dev, (u32)owner,
			sio_nla_u64(&p->tb[SIO_A_IOVA]), 0);
	if (!map) {
		if (!m || m->lut < 0)
			return -ENOENT;
		lender_unmap(c, m);
		if (m->kind == SIO_SEGDMA_LENDER)
			sio_memset(m, 0, sizeof(*m));
		return 0;
	}
	if (m && m->lut >= 0)
		return -EBUSY;
	m = lender_half(c, (u32)dev, (u32)owner,
			sio_nla_u64(&p->tb[SIO_A_IOVA]), 1);
	if (!m)
		return separate(c) ? -ENOSPC : -ENOENT;
	size = sio_nla_u64(&p->tb[SIO_A_SIZE]);
	first = window_size_ok(c, m, (u32)path, size) ? 0 : -EINVAL;
	if (!first)
		first = sio_lut_share_ok(c, self, (u32)path, (u32)owner,
					 sio_lut_slots(c, self, (u32)path,
						       size));
	if (!first)
		first = sio_lut_map(c, self, (u32)path, size, (u32)owner,
				    m->iova, self, sio_dev(r, (u32)dev)->rid,
				    &count);
	if (first < 0) {
		if (m->kind == SIO_SEGDMA_LENDER)
			sio_memset(m, 0, sizeof(*m));
		return first;
	}
	m->adapter = (u8)path;
	m->lut = first;
	m->lut_count = count;
	ad = &sio_node(r, self)->adapter[path];
	return sio_msg_put_u64(rep, SIO_A_ADDR,
			       ad->window_base + (u64)first * ad->slot_size);
}
