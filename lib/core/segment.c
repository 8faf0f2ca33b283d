// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Memory segments, their life on the owner node: created in its RAM, sized
 * once, exported to the cluster (available), destroyed when nobody maps it.
 * Attaching from other nodes is in seg_attach.c, mapping for devices in
 * seg_dma.c; this file also routes the segment commands to them.
 */
#include "core_int.h"

/* A segment's or multicast group's name: 1 to 31 of [A-Za-z0-9_-]. */
int sio_name_ok(const char *s)
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

	if (sio_seg(r, seg)->attached || sio_mcast_holds_seg(r, seg))
		return 1;
	for (i = 0; i < r->max_segdma; i++)
		if (sio_segdma_find(r, seg, sio_segdma_at(r, i)->dev) >= 0)
			return 1;
	return 0;
}

void sio_segments_node_down(struct sio_core *c, u32 node)
{
	sio_segdma_node_down(c, node);
	sio_attach_node_down(c, node);
}

/*
 * A free record for owner's segment name of generation gen: its index, or
 * -ENOSPC.  Created here, or copied from its owner's table.  It is not
 * announced yet: segment-create tells of a segment once it has memory
 * (seg_announce), so that a create whose size is refused, and the rmdir
 * that undoes it, tell the event stream nothing (issue 32 item 14).
 */
static int seg_new(struct sio_core *c, u32 owner, u32 creator,
		   const char *name, u32 gen)
{
	struct sio_registry *r = c->reg;
	struct sio_segment *s;
	int i = SIO_CLAIM_ENTRY(r, sio_seg, max_segments);

	if (i < 0)
		return i;
	s = sio_seg(r, (u32)i);
	s->owner = (u16)owner;
	s->creator = (u16)creator;
	s->gen = gen;
	sio_strlcpy(s->name, name, sizeof(s->name));
	return i;
}

/* segment-create, once the segment has its memory. */
static void seg_announce(struct sio_core *c, u32 seg)
{
	sio_seg_event(c, SIO_EV_SEGMENT_CREATE, seg, NULL, NULL);
}

/*
 * A record changed that no event tells of (a segment created, or one
 * without memory destroyed): registry readers that keep a copy
 * (libsmartio over smartio.ko) re-read when the platform is notified,
 * as every event does.
 */
static void seg_changed(struct sio_core *c)
{
	if (c->ops->notify)
		c->ops->notify(c->plat);
}

/* segment-destroy, for a segment that was announced (had memory). */
static void seg_unannounce(struct sio_core *c, u32 seg)
{
	if (sio_seg(c->reg, seg)->sized)
		sio_seg_event(c, SIO_EV_SEGMENT_DESTROY, seg, NULL, NULL);
}

static int seg_create(struct sio_core *c, u32 owner, u32 creator,
		      const char *name)
{
	struct sio_registry *r = c->reg;
	int i;

	if (!sio_name_ok(name))
		return -EINVAL;
	if (sio_seg_lookup(r, owner, name) >= 0)
		return -EEXIST;
	/* A peer's user creates here within the peer's share (origin.c). */
	if (creator != owner && (c->flags & SIO_CORE_SEPARATE)) {
		i = sio_peer_seg_room(r, owner, creator, SIO_NONE);
		if (i < 0)
			return i;
	}
	i = sio_share_room(c, SIO_SHARE_SEGMENTS, owner);
	if (i < 0)
		return i;
	i = seg_new(c, owner, creator, name, r->seg_gen + 1);
	if (i < 0)
		return i;
	r->seg_gen++;
	seg_changed(c);
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
	seg_announce(c, seg);
	if (c->ops->notify)
		c->ops->notify(c->plat);
	return 0;
}

static int seg_destroy(struct sio_core *c, u32 seg)
{
	struct sio_segment *s = sio_seg(c->reg, seg);

	if (seg_in_use(c->reg, seg))
		return -EBUSY;
	seg_unannounce(c, seg);
	if (s->sized) {
		c->ops->seg_backing(c->plat, seg, 0);
		sio_range_free(&sio_node(c->reg, s->owner)->ram, s->phys);
	}
	sio_memset(s, 0, sizeof(*s));
	seg_changed(c);
	return 0;
}

static int seg_available(struct sio_core *c, u32 seg,
			 const struct sio_parsed *p)
{
	struct sio_segment *s = sio_seg(c->reg, seg);
	u32 v;

	v = sio_nla_u32(&p->tb[SIO_A_FLAGS]);
	if (v > 1)
		return -EINVAL;
	if (!v && s->attached)
		return -EBUSY;
	if (s->available != v) {
		s->available = (u8)v;
		sio_seg_event(c, v ? SIO_EV_SEGMENT_EXPORT :
			      SIO_EV_SEGMENT_WITHDRAW, seg, NULL, NULL);
		if (c->ops->notify)
			c->ops->notify(c->plat);
	}
	return 0;
}

/*
 * A peer's user may size, export and destroy only the segments it created
 * here, and map for a device those or exported ones (origin.c).
 */
static int peer_may(struct sio_core *c, const struct sio_parsed *p, u32 self,
		    u32 seg)
{
	struct sio_segment *s = sio_seg(c->reg, seg);

	if (!(c->flags & SIO_CORE_SEPARATE) || p->from == self ||
	    s->creator == p->from)
		return 0;
	if ((p->cmd == SIO_CMD_SEG_DMA_MAP || p->cmd == SIO_CMD_SEG_DMA_UNMAP) &&
	    s->available)
		return 0;
	sio_peer_refused(c, p->from, p->cmd);
	return -EPERM;
}

int sio_h_seg(struct sio_core *c, u32 self, const struct sio_parsed *p,
	      struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int owner = sio_msg_node(r, p, SIO_A_NODE), seg, dev;
	const char *name;

	if (owner < 0)
		return owner;
	name = sio_nla_str(&p->tb[SIO_A_NAME]);
	if (!sio_node_up(r, (u32)owner))
		return -EHOSTDOWN;
	if (p->cmd == SIO_CMD_SEG_CREATE)
		return seg_create(c, (u32)owner, p->from, name);
	seg = sio_seg_lookup(r, (u32)owner, name);
	if (seg < 0)
		return seg;
	if ((u32)owner == self && peer_may(c, p, self, (u32)seg))
		return -EPERM;
	switch (p->cmd) {
	case SIO_CMD_SEG_SIZE:
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

/* --- registries that are not shared: the owner's table ------------------ */

/* A record of another node's segment goes, with this registry's mappings. */
static void seg_forget(struct sio_core *c, u32 seg)
{
	struct sio_registry *r = c->reg;
	u32 i;

	for (i = 0; i < r->max_attach; i++) {
		struct sio_attach *a = sio_attach_at(r, i);

		if (a->used && a->seg == seg)
			sio_attach_release(c, i);
	}
	seg_unannounce(c, seg);
	sio_memset(sio_seg(r, seg), 0, sizeof(struct sio_segment));
	seg_changed(c);
}

void sio_core_seg_forget(struct sio_core *c, u32 self, u32 owner)
{
	struct sio_registry *r = c->reg;
	u32 i;

	if (owner == self)
		return;
	for (i = 0; i < r->max_segments; i++)
		if (sio_seg(r, i)->used && sio_seg(r, i)->owner == owner)
			seg_forget(c, i);
}

/* self's table for dst into m: NODE, a SEG per segment, SRC, DST. */
static int seg_table_put(struct sio_core *c, u32 self, u32 dst,
			 struct sio_msg *m)
{
	struct sio_registry *r = c->reg;
	u32 i;
	int nest;

	sio_msg_put_u32(m, SIO_A_NODE, self);
	for (i = 0; i < r->max_segments; i++) {
		struct sio_segment *s = sio_seg(r, i);

		if (!s->used || s->owner != self)
			continue;
		nest = sio_msg_nest_start(m, SIO_A_SEG);
		if (nest < 0)
			return nest;
		sio_msg_put_str(m, SIO_A_NAME, s->name);
		sio_msg_put_u32(m, SIO_A_INDEX, s->gen);
		sio_msg_put_u64(m, SIO_A_SIZE, s->sized ? s->size : 0);
		sio_msg_put_u64(m, SIO_A_ADDR, s->phys);
		sio_msg_put_u64(m, SIO_A_OFFSET, s->backing);
		sio_msg_put_u32(m, SIO_A_FLAGS, s->available);
		sio_msg_put_u64(m, SIO_A_MASK, s->attached);
		sio_msg_nest_end(m, nest);
	}
	sio_msg_put_u32(m, SIO_A_SRC, sio_node(r, self)->id);
	sio_msg_put_u32(m, SIO_A_DST, sio_node(r, dst)->id);
	return m->err;
}

int sio_core_seg_table(struct sio_core *c, u32 self, u32 dst, void *buf,
		       u32 cap)
{
	struct sio_msg m;
	int err;

	sio_msg_init(&m, buf, cap, SIO_CMD_SEG_TABLE, SIO_F_REQUEST, 0);
	err = seg_table_put(c, self, dst, &m);
	return err ? err : sio_msg_finish(&m);
}

/*
 * SEG_TABLE_GET: the reply carries self's table, as SEG_TABLE would, for
 * a node that changed self's segments through a forwarded command and must
 * know the outcome before its user's command returns (when the nodes do
 * not share one registry).
 */
int sio_h_seg_table_get(struct sio_core *c, u32 self,
			const struct sio_parsed *p, struct sio_msg *rep)
{
	int asker = sio_msg_node(c->reg, p, SIO_A_NODE);

	if (asker < 0)
		return asker;
	if ((u32)asker == self)
		return -EINVAL;
	return seg_table_put(c, self, (u32)asker, rep);
}

/* The nest of table p that describes segment name, or NULL. */
static int table_find(const struct sio_parsed *p, const char *name,
		      struct sio_nla *out)
{
	struct sio_nla a, f;
	u32 pos = 0;

	while (sio_nla_next(p->attrs, p->attrs_len, &pos, &a)) {
		if (a.type != SIO_A_SEG || sio_nla_find(&a, SIO_A_NAME, &f))
			continue;
		if (sio_streq(sio_nla_str(&f), name)) {
			*out = a;
			return 0;
		}
	}
	return -ENOENT;
}

static u64 field_u64(const struct sio_nla *nest, u16 type)
{
	struct sio_nla f;

	return sio_nla_find(nest, type, &f) ? 0 : sio_nla_u64(&f);
}

static u32 field_u32(const struct sio_nla *nest, u16 type)
{
	struct sio_nla f;

	return sio_nla_find(nest, type, &f) ? 0 : sio_nla_u32(&f);
}

/*
 * One record of the owner's table into this registry.  Whether self maps
 * it is this registry's business (its attach record), whatever the owner
 * had heard when it sent the table.
 */
static int table_apply(struct sio_core *c, u32 self, u32 owner,
		       const struct sio_nla *nest)
{
	struct sio_registry *r = c->reg;
	struct sio_segment *s;
	struct sio_nla f;
	const char *name;
	int i, changed = 0;
	u64 size, attached;

	if (sio_nla_find(nest, SIO_A_NAME, &f))
		return -EINVAL;
	name = sio_nla_str(&f);
	if (!sio_name_ok(name) || sio_nla_find(nest, SIO_A_INDEX, &f))
		return -EINVAL;
	i = sio_seg_lookup(r, owner, name);
	if (i < 0) {
		/* A new record: registry readers learn of it (no event yet). */
		i = seg_new(c, owner, owner, name, sio_nla_u32(&f));
		changed = 1;
	}
	if (i < 0)
		return i;
	s = sio_seg(r, (u32)i);
	size = field_u64(nest, SIO_A_SIZE);
	attached = field_u64(nest, SIO_A_MASK) & ~(1ull << self);
	if (sio_attach_find(r, (u32)i, self) >= 0)
		attached |= 1ull << self;
	if (!s->sized && size)
		seg_announce(c, (u32)i);	/* its memory exists now */
	if (s->size != size || s->sized != !!size ||
	    s->phys != field_u64(nest, SIO_A_ADDR) ||
	    s->backing != field_u64(nest, SIO_A_OFFSET) ||
	    s->available != !!field_u32(nest, SIO_A_FLAGS) ||
	    s->attached != attached)
		changed = 1;
	s->size = size;
	s->sized = !!size;
	s->phys = field_u64(nest, SIO_A_ADDR);
	s->backing = field_u64(nest, SIO_A_OFFSET);
	s->available = !!field_u32(nest, SIO_A_FLAGS);
	s->attached = attached;
	return changed;
}

/*
 * One record of an owner's table as it arrives: a valid name, a
 * generation, sizes and offsets in whole pages (the backing is mapped by
 * page: a ragged size would expose what follows it), an export flag.
 */
static int table_record_ok(const struct sio_nla *nest)
{
	struct sio_nla f;

	if (sio_nla_find(nest, SIO_A_NAME, &f) || !sio_name_ok(sio_nla_str(&f)) ||
	    sio_nla_find(nest, SIO_A_INDEX, &f))
		return 0;
	return field_u64(nest, SIO_A_SIZE) % SIO_PAGE == 0 &&
	       field_u64(nest, SIO_A_ADDR) % SIO_PAGE == 0 &&
	       field_u64(nest, SIO_A_OFFSET) % SIO_PAGE == 0 &&
	       field_u32(nest, SIO_A_FLAGS) <= 1;
}

/* The whole table is checked before anything changes. */
static int table_ok(struct sio_registry *r, u32 self, u32 owner,
		    const struct sio_parsed *p)
{
	struct sio_nla a;
	u32 pos = 0, n = 0;

	while (sio_nla_next(p->attrs, p->attrs_len, &pos, &a)) {
		if (a.type != SIO_A_SEG)
			continue;
		if (!table_record_ok(&a))
			return -EINVAL;
		n++;
	}
	return sio_peer_seg_room(r, self, owner, n);
}

/*
 * SEG_TABLE from the owner: records it no longer lists (or lists with
 * another generation: destroyed and created again) go, the others are
 * created or updated.
 */
int sio_h_seg_table(struct sio_core *c, u32 self, const struct sio_parsed *p,
		    struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int owner = sio_msg_node(r, p, SIO_A_NODE), n, err = 0, changed = 0;
	struct sio_nla nest, a;
	u32 i, pos = 0;

	(void)rep;
	if (owner < 0)
		return owner;
	if ((u32)owner == self)
		return -EINVAL;
	if (p->present[SIO_A_SRC] &&
	    sio_nla_u32(&p->tb[SIO_A_SRC]) != sio_node(r, (u32)owner)->id)
		return -EPERM;	/* only the owner speaks for its segments */
	err = table_ok(r, self, (u32)owner, p);
	if (err)
		return err;
	for (i = 0; i < r->max_segments; i++) {
		struct sio_segment *s = sio_seg(r, i);

		if (!s->used || s->owner != (u32)owner)
			continue;
		if (table_find(p, s->name, &nest) ||
		    field_u32(&nest, SIO_A_INDEX) != s->gen)
			seg_forget(c, i);
	}
	while (sio_nla_next(p->attrs, p->attrs_len, &pos, &a)) {
		if (a.type != SIO_A_SEG)
			continue;
		n = table_apply(c, self, (u32)owner, &a);
		if (n < 0)
			err = n;
		else
			changed |= n;
	}
	if (changed && c->ops->notify)
		c->ops->notify(c->plat);
	return err;
}
