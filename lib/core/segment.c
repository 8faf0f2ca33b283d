// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Memory segments: created by their owner node in its RAM, exported to the
 * cluster (available), attached by other nodes through their NTB windows,
 * and mapped for devices (a DMA window on the path from device to segment).
 */
#include "core_int.h"

static int seg_name_ok(const char *s)
{
	size_t n = sio_strnlen(s, SIO_TOPO_NAME);
	size_t i;

	if (n == 0 || n >= SIO_TOPO_NAME)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
			return 0;
	}
	return 1;
}

static void seg_event(struct sio_core *c, u32 kind, u32 seg, const char *key,
		      const char *val)
{
	struct sio_segment *s = sio_seg(c->reg, seg);
	char obj[SIO_EVENT_OBJ], args[SIO_EVENT_ARGS];
	struct sio_strbuf sb;

	sio_sb_init(&sb, obj, sizeof(obj));
	sio_sb_str(&sb, "seg/");
	sio_sb_str(&sb, sio_node(c->reg, s->owner)->name);
	sio_sb_str(&sb, ".");
	sio_sb_str(&sb, s->name);
	sio_sb_init(&sb, args, sizeof(args));
	if (key) {
		sio_sb_str(&sb, key);
		sio_sb_str(&sb, "=");
		sio_sb_str(&sb, val);
	}
	sio_event_emit(c, kind, obj, args);
}

static int find_attach(struct sio_registry *r, u32 seg, u32 node)
{
	u32 i;

	for (i = 0; i < r->max_attach; i++) {
		struct sio_attach *a = sio_attach_at(r, i);

		if (a->used && a->seg == seg && a->node == node)
			return (int)i;
	}
	return -ENOENT;
}

static int find_segdma(struct sio_registry *r, u32 seg, u32 dev)
{
	u32 i;

	for (i = 0; i < r->max_segdma; i++) {
		struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used && m->seg == seg && m->dev == dev)
			return (int)i;
	}
	return -ENOENT;
}

static int seg_in_use(struct sio_registry *r, u32 seg)
{
	u32 i;

	if (sio_seg(r, seg)->attached)
		return 1;
	for (i = 0; i < r->max_segdma; i++)
		if (sio_segdma_at(r, i)->used && sio_segdma_at(r, i)->seg == seg)
			return 1;
	return 0;
}

static void detach(struct sio_core *c, u32 aidx)
{
	struct sio_attach *a = sio_attach_at(c->reg, aidx);
	struct sio_segment *s = sio_seg(c->reg, a->seg);
	u32 seg = a->seg;
	u16 node = a->node;

	sio_lut_unmap(c, a->node, a->adapter, a->lut, a->lut_count);
	s->attached &= ~(1ull << a->node);
	sio_memset(a, 0, sizeof(*a));
	seg_event(c, SIO_EV_SEGMENT_DETACH, seg, "node",
		  sio_node(c->reg, node)->name);
}

static void segdma_release(struct sio_core *c, u32 midx)
{
	struct sio_registry *r = c->reg;
	struct sio_segdma *m = sio_segdma_at(r, midx);
	struct sio_segment *s = sio_seg(r, m->seg);
	struct sio_device *d = sio_dev(r, m->dev);
	int bidx;

	switch (m->kind) {
	case SIO_SEGDMA_LOCAL:
		c->ops->iommu_unmap(c->plat, s->owner, s->owner, d->rid, m->iova);
		sio_range_free(&sio_node(r, s->owner)->iova, m->iova);
		break;
	case SIO_SEGDMA_BORROW:
		c->ops->iommu_unmap(c->plat, s->owner, d->node, d->rid, m->iova);
		bidx = sio_borrow_find(r, m->dev, s->owner);
		if (bidx >= 0)
			sio_range_free(&sio_borrow_at(r, (u32)bidx)->window,
				       m->iova);
		break;
	default:
		sio_lut_unmap(c, d->node, m->adapter, m->lut, m->lut_count);
		c->ops->iommu_unmap(c->plat, s->owner, d->node, d->rid, m->iova);
		sio_range_free(&sio_node(r, s->owner)->iova, m->iova);
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

void sio_segments_node_down(struct sio_core *c, u32 node)
{
	struct sio_registry *r = c->reg;
	u32 i;

	for (i = 0; i < r->max_segdma; i++) {
		struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used && (sio_seg(r, m->seg)->owner == node ||
				sio_dev(r, m->dev)->node == node))
			segdma_release(c, i);
	}
	for (i = 0; i < r->max_attach; i++) {
		struct sio_attach *a = sio_attach_at(r, i);

		if (a->used && (a->node == node ||
				sio_seg(r, a->seg)->owner == node))
			detach(c, i);
	}
}

static int seg_create(struct sio_core *c, u32 owner, const char *name)
{
	struct sio_registry *r = c->reg;
	struct sio_segment *s;
	u32 i;

	if (!seg_name_ok(name))
		return -EINVAL;
	if (sio_seg_lookup(r, owner, name) >= 0)
		return -EEXIST;
	for (i = 0; i < r->max_segments; i++)
		if (!sio_seg(r, i)->used)
			break;
	if (i == r->max_segments)
		return -ENOSPC;
	s = sio_seg(r, i);
	sio_memset(s, 0, sizeof(*s));
	s->used = 1;
	s->owner = (u16)owner;
	s->gen = ++r->seg_gen;
	sio_strlcpy(s->name, name, sizeof(s->name));
	seg_event(c, SIO_EV_SEGMENT_CREATE, i, NULL, NULL);
	return 0;
}

static int seg_size(struct sio_core *c, u32 seg, u64 size)
{
	struct sio_segment *s = sio_seg(c->reg, seg);
	struct sio_node *n = sio_node(c->reg, s->owner);
	u64 len = SIO_ALIGN_UP(size, SIO_PAGE);
	int err;

	if (s->sized)
		return -EBUSY;
	if (size == 0 || size > n->ram_size)
		return -EINVAL;
	err = sio_range_alloc(&n->ram, len, SIO_PAGE, &s->phys);
	if (err)
		return err == -ENOSPC ? -ENOMEM : err;
	s->size = len;
	err = c->ops->seg_backing(c->plat, seg, 1);
	if (err) {
		sio_range_free(&n->ram, s->phys);
		s->size = 0;
		s->phys = 0;
		return err;
	}
	s->sized = 1;
	return 0;
}

static int seg_destroy(struct sio_core *c, u32 seg)
{
	struct sio_segment *s = sio_seg(c->reg, seg);

	if (seg_in_use(c->reg, seg))
		return -EBUSY;
	seg_event(c, SIO_EV_SEGMENT_DESTROY, seg, NULL, NULL);
	if (s->sized) {
		c->ops->seg_backing(c->plat, seg, 0);
		sio_range_free(&sio_node(c->reg, s->owner)->ram, s->phys);
	}
	sio_memset(s, 0, sizeof(*s));
	return 0;
}

static int seg_attach(struct sio_core *c, u32 self, u32 seg,
		      struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	struct sio_segment *s = sio_seg(r, seg);
	struct sio_attach *a;
	int ad, aidx, first;
	u32 i, count;

	if (self == s->owner || !s->sized)
		return -EINVAL;
	if (!s->available)
		return -EACCES;
	if (!sio_node_up(r, s->owner) || !sio_node_up(r, self))
		return -EHOSTDOWN;
	aidx = find_attach(r, seg, self);
	if (aidx >= 0)
		return sio_msg_put_u64(rep, SIO_A_ADDR,
				       sio_attach_at(r, (u32)aidx)->local_addr);
	ad = sio_path_find(r, self, s->owner);
	if (ad < 0)
		return ad;
	for (i = 0; i < r->max_attach; i++)
		if (!sio_attach_at(r, i)->used)
			break;
	if (i == r->max_attach)
		return -ENOSPC;
	first = sio_lut_map(c, self, (u32)ad, s->size, s->owner, s->phys, self,
			    SIO_RID_CPU, &count);
	if (first < 0)
		return first;
	a = sio_attach_at(r, i);
	a->used = 1;
	a->adapter = (u8)ad;
	a->node = (u16)self;
	a->seg = seg;
	a->lut = first;
	a->lut_count = count;
	a->local_addr = sio_node(r, self)->adapter[ad].window_base +
			(u64)first * sio_node(r, self)->adapter[ad].slot_size;
	s->attached |= 1ull << self;
	seg_event(c, SIO_EV_SEGMENT_ATTACH, seg, "node",
		  sio_node(r, self)->name);
	return sio_msg_put_u64(rep, SIO_A_ADDR, a->local_addr);
}

static int free_segdma(struct sio_registry *r)
{
	u32 i;

	for (i = 0; i < r->max_segdma; i++)
		if (!sio_segdma_at(r, i)->used)
			return (int)i;
	return -ENOSPC;
}

/* Maps segment seg for device dev; the owner of seg is self. */
static int seg_dma_map(struct sio_core *c, u32 self, u32 seg, u32 dev,
		       struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	struct sio_segment *s = sio_seg(r, seg);
	struct sio_device *d = sio_dev(r, dev);
	struct sio_segdma *m;
	int midx, bidx, err;
	u32 lender = d->node;

	if (!s->sized)
		return -EINVAL;
	if (find_segdma(r, seg, dev) >= 0)
		return -EEXIST;
	if (d->gone || !sio_node_up(r, lender))
		return -EHOSTDOWN;
	midx = free_segdma(r);
	if (midx < 0)
		return midx;
	m = sio_segdma_at(r, (u32)midx);
	sio_memset(m, 0, sizeof(*m));
	m->seg = seg;
	m->dev = dev;
	m->lut = -1;
	bidx = sio_borrow_find(r, dev, self);
	if (lender == self) {
		m->kind = SIO_SEGDMA_LOCAL;
		err = sio_range_alloc(&sio_node(r, self)->iova, s->size,
				      SIO_PAGE, &m->iova);
		if (err)
			return err;
		m->ioaddr = m->iova;
	} else if (bidx >= 0) {
		/* Inside the window mapped at borrow time: no NTB change. */
		struct sio_borrow *b = sio_borrow_at(r, (u32)bidx);

		m->kind = SIO_SEGDMA_BORROW;
		err = sio_range_alloc(&b->window, s->size, SIO_PAGE, &m->iova);
		if (err)
			return err;
		m->ioaddr = b->dma_addr + (m->iova - b->iova);
	} else {
		int ad = sio_path_find(r, lender, self), first;
		struct sio_adapter *lad;
		u32 count;

		if (ad < 0)
			return ad;
		m->kind = SIO_SEGDMA_WINDOW;
		m->adapter = (u8)ad;
		err = sio_range_alloc(&sio_node(r, self)->iova, s->size,
				      SIO_PAGE, &m->iova);
		if (err)
			return err;
		first = sio_lut_map(c, lender, (u32)ad, s->size, self, m->iova,
				    lender, d->rid, &count);
		if (first < 0) {
			sio_range_free(&sio_node(r, self)->iova, m->iova);
			return first;
		}
		m->lut = first;
		m->lut_count = count;
		lad = &sio_node(r, lender)->adapter[ad];
		m->ioaddr = lad->window_base + (u64)first * lad->slot_size;
	}
	m->used = 1;
	err = c->ops->iommu_map(c->plat, self,
				m->kind == SIO_SEGDMA_LOCAL ? self : lender,
				d->rid, m->iova, s->phys, s->size);
	if (err) {
		/* The release path expects a mapping; undo by hand instead. */
		if (m->kind == SIO_SEGDMA_WINDOW)
			sio_lut_unmap(c, lender, m->adapter, m->lut,
				      m->lut_count);
		if (m->kind == SIO_SEGDMA_BORROW)
			sio_range_free(&sio_borrow_at(r, (u32)bidx)->window,
				       m->iova);
		else
			sio_range_free(&sio_node(r, self)->iova, m->iova);
		sio_memset(m, 0, sizeof(*m));
		return err;
	}
	seg_event(c, SIO_EV_SEGMENT_DMA_MAP, seg, "dev", d->name);
	return sio_msg_put_u64(rep, SIO_A_ADDR, m->ioaddr);
}

int sio_h_seg(struct sio_core *c, u32 self, const struct sio_parsed *p,
	      struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int owner = sio_msg_node(r, p, SIO_A_NODE), seg, dev, idx;
	const char *name;

	if (owner < 0)
		return owner;
	if (!p->present[SIO_A_NAME])
		return -EINVAL;
	name = sio_nla_str(&p->tb[SIO_A_NAME]);
	if (!sio_node_up(r, (u32)owner))
		return -EHOSTDOWN;
	if (p->cmd == SIO_CMD_SEG_CREATE)
		return seg_create(c, (u32)owner, name);
	seg = sio_seg_lookup(r, (u32)owner, name);
	if (seg < 0)
		return seg;
	switch (p->cmd) {
	case SIO_CMD_SEG_SIZE:
		if (!p->present[SIO_A_SIZE])
			return -EINVAL;
		return seg_size(c, (u32)seg, sio_nla_u64(&p->tb[SIO_A_SIZE]));
	case SIO_CMD_SEG_DESTROY:
		return seg_destroy(c, (u32)seg);
	case SIO_CMD_SEG_AVAILABLE:
		if (!p->present[SIO_A_FLAGS] ||
		    sio_nla_u32(&p->tb[SIO_A_FLAGS]) > 1)
			return -EINVAL;
		if (!sio_nla_u32(&p->tb[SIO_A_FLAGS]) && sio_seg(r, seg)->attached)
			return -EBUSY;
		sio_seg(r, seg)->available =
			(u8)sio_nla_u32(&p->tb[SIO_A_FLAGS]);
		return 0;
	case SIO_CMD_SEG_ATTACH:
		return seg_attach(c, self, (u32)seg, rep);
	case SIO_CMD_SEG_DETACH:
		idx = find_attach(r, (u32)seg, self);
		if (idx < 0)
			return -EINVAL;
		detach(c, (u32)idx);
		return 0;
	case SIO_CMD_SEG_DMA_MAP:
	case SIO_CMD_SEG_DMA_UNMAP:
		dev = sio_msg_dev(r, p);
		if (dev < 0)
			return dev;
		if (p->cmd == SIO_CMD_SEG_DMA_MAP)
			return seg_dma_map(c, self, (u32)seg, (u32)dev, rep);
		idx = find_segdma(r, (u32)seg, (u32)dev);
		if (idx < 0)
			return idx;
		segdma_release(c, (u32)idx);
		seg_event(c, SIO_EV_SEGMENT_DMA_UNMAP, (u32)seg, "dev",
			  sio_dev(r, (u32)dev)->name);
		return 0;
	default:
		return -EPROTO;
	}
}
