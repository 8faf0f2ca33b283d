// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Memory segments, their life on the owner node: created in its RAM, sized
 * once, exported to the cluster (available), destroyed when nobody maps it.
 * Attaching from other nodes is in seg_attach.c, mapping for devices in
 * seg_dma.c; this file also routes the segment commands to them.
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

void sio_seg_event(struct sio_core *c, u32 kind, u32 seg, const char *key,
		   const char *val)
{
	struct sio_segment *s = sio_seg(c->reg, seg);

	sio_event_about(c, kind, "seg/", sio_node(c->reg, s->owner)->name,
			s->name, key, val);
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

void sio_segments_node_down(struct sio_core *c, u32 node)
{
	sio_segdma_node_down(c, node);
	sio_attach_node_down(c, node);
}

static int seg_create(struct sio_core *c, u32 owner, const char *name)
{
	struct sio_registry *r = c->reg;
	struct sio_segment *s;
	int i;

	if (!seg_name_ok(name))
		return -EINVAL;
	if (sio_seg_lookup(r, owner, name) >= 0)
		return -EEXIST;
	i = SIO_FREE_ENTRY(r, sio_seg, max_segments);
	if (i < 0)
		return i;
	s = sio_seg(r, (u32)i);
	sio_memset(s, 0, sizeof(*s));
	s->used = 1;
	s->owner = (u16)owner;
	s->gen = ++r->seg_gen;
	sio_strlcpy(s->name, name, sizeof(s->name));
	sio_seg_event(c, SIO_EV_SEGMENT_CREATE, (u32)i, NULL, NULL);
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
	if (c->ops->notify)
		c->ops->notify(c->plat);
	return 0;
}

static int seg_destroy(struct sio_core *c, u32 seg)
{
	struct sio_segment *s = sio_seg(c->reg, seg);

	if (seg_in_use(c->reg, seg))
		return -EBUSY;
	sio_seg_event(c, SIO_EV_SEGMENT_DESTROY, seg, NULL, NULL);
	if (s->sized) {
		c->ops->seg_backing(c->plat, seg, 0);
		sio_range_free(&sio_node(c->reg, s->owner)->ram, s->phys);
	}
	sio_memset(s, 0, sizeof(*s));
	return 0;
}

static int seg_available(struct sio_core *c, u32 seg,
			 const struct sio_parsed *p)
{
	struct sio_segment *s = sio_seg(c->reg, seg);
	u32 v;

	if (!p->present[SIO_A_FLAGS])
		return -EINVAL;
	v = sio_nla_u32(&p->tb[SIO_A_FLAGS]);
	if (v > 1)
		return -EINVAL;
	if (!v && s->attached)
		return -EBUSY;
	if (s->available != v) {
		s->available = (u8)v;
		if (c->ops->notify)
			c->ops->notify(c->plat);
	}
	return 0;
}

int sio_h_seg(struct sio_core *c, u32 self, const struct sio_parsed *p,
	      struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int owner = sio_msg_node(r, p, SIO_A_NODE), seg, dev;
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
		return seg_available(c, (u32)seg, p);
	case SIO_CMD_SEG_ATTACH:
		return sio_seg_attach(c, self, (u32)seg, rep);
	case SIO_CMD_SEG_DETACH:
		return sio_seg_detach(c, self, (u32)seg);
	case SIO_CMD_SEG_DMA_MAP:
	case SIO_CMD_SEG_DMA_UNMAP:
		dev = sio_msg_dev(r, p);
		if (dev < 0)
			return dev;
		if (p->cmd == SIO_CMD_SEG_DMA_MAP)
			return sio_seg_dma_map(c, self, (u32)seg, (u32)dev, rep);
		return sio_seg_dma_unmap(c, self, (u32)seg, (u32)dev);
	default:
		return -EPROTO;
	}
}
