// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Attaching a segment from another node: a conversation between the node
 * that maps it (the peer) and the segment's owner, as for a borrow.
 *   peer  -> SEG_CONNECT     owner: checks it is sized and available,
 *                            records the peer, answers phys address + size
 *   peer: LUT slots from its NTB window to the owner's RAM
 *   peer  -> SEG_DISCONNECT  on detach, or to unwind a failed mapping
 * Each side only changes its own state; node loss cleans both.  With
 * separate registries the peer then sends SEG_CONNECT again with its
 * window address (ADDR), and the owner translates it onto the segment on
 * its side (inbound_map SIO_INB_SEG), keeping a record of that half: only
 * an exported segment is reachable, by the nodes that attached it,
 * whatever a peer's kernel does with its window (issue 12, defect 7).
 */
#include "core_int.h"

int sio_attach_find(struct sio_registry *r, u32 seg, u32 node)
{
	u32 i;

	for (i = 0; i < r->max_attach; i++) {
		struct sio_attach *a = sio_attach_at(r, i);

		if (a->used && a->seg == seg && a->node == node)
			return (int)i;
	}
	return -ENOENT;
}

/* Owner's side: forget the peer. */
static int owner_forget(struct sio_core *c, u32 seg, u32 peer)
{
	struct sio_segment *s = sio_seg(c->reg, seg);

	if (!(s->attached >> peer & 1))
		return -ENOENT;
	s->attached &= ~(1ull << peer);
	sio_seg_event(c, SIO_EV_SEGMENT_DETACH, seg, "node",
		      sio_node(c->reg, peer)->name);
	return 0;
}

static int separate(const struct sio_core *c)
{
	return !!(c->flags & SIO_CORE_SEPARATE);
}

/* The owner's half of an attachment (separate registries): no slots. */
static int owner_half(const struct sio_attach *a)
{
	return a->lut < 0;
}

/*
 * The peer's side: the platform's mapping, its LUT slots and record; or
 * the owner's half: its inbound entries for the peer.
 */
void sio_attach_release(struct sio_core *c, u32 aidx)
{
	struct sio_attach *a = sio_attach_at(c->reg, aidx);
	struct sio_segment *s = sio_seg(c->reg, a->seg);

	if (owner_half(a)) {
		if (c->ops->inbound_unmap)
			c->ops->inbound_unmap(c->plat, s->owner, a->node,
					      SIO_INB_SEG, 0, a->local_addr,
					      s->size);
	} else {
		if (c->ops->seg_map)
			c->ops->seg_map(c->plat, a->seg, a->node, 0);
		sio_lut_unmap(c, a->node, a->adapter, a->lut, a->lut_count);
	}
	sio_memset(a, 0, sizeof(*a));
}

/* addr: the peer's window address for the owner to translate, or 0. */
static int owner_call(struct sio_core *c, u32 self, u32 owner,
		      const char *name, u8 cmd, u64 addr,
		      struct sio_parsed *rep, u8 *repbuf, u32 cap)
{
	u8 buf[SIO_PEER_MSG];
	struct sio_msg m;

	sio_msg_init(&m, buf, sizeof(buf), cmd, SIO_F_REQUEST, 0);
	sio_msg_put_u32(&m, SIO_A_NODE, owner);
	sio_msg_put_str(&m, SIO_A_NAME, name);
	sio_msg_put_u32(&m, SIO_A_PEER, self);
	if (addr)
		sio_msg_put_u64(&m, SIO_A_ADDR, addr);
	return sio_core_call(c, self, owner, &m, rep, repbuf, cap);
}

/*
 * The owner's answer to SEG_CONNECT, checked.  A platform may run the
 * owner's messages to this node while it waits for the reply (smartio.ko
 * over an NTB): the record may be gone or another segment's by now
 * (ENOENT).  The answer must be what the record says (ADDR its backing,
 * SIZE its size, whole pages), or nothing maps (EPROTO).
 */
static int connect_reply_ok(const struct sio_segment *s, u32 owner, u32 gen,
			    const struct sio_parsed *orep)
{
	u64 phys, size;

	if (!s->used || s->owner != owner || s->gen != gen)
		return -ENOENT;
	if (sio_msg_require(orep, SIO_ATTR_BIT(SIO_A_ADDR) |
				  SIO_ATTR_BIT(SIO_A_SIZE)))
		return -EPROTO;
	phys = sio_nla_u64(&orep->tb[SIO_A_ADDR]);
	size = sio_nla_u64(&orep->tb[SIO_A_SIZE]);
	if (!s->sized || phys != s->phys || size != s->size ||
	    size % SIO_PAGE)
		return -EPROTO;
	return 0;
}

/*
 * This node's record of its attachment of seg through adapter path (LUT
 * slots first.. of count, at local), and the platform's mapping of it.
 * The record is picked only now: a peer's request run while we waited
 * (its attachment of one of our segments, the owner's half) may have
 * taken the one free before.
 */
static int attach_record(struct sio_core *c, u32 self, u32 seg, u32 path,
			 int first, u32 count, u64 local)
{
	int aidx = SIO_FREE_ENTRY(c->reg, sio_attach_at, max_attach), err;
	struct sio_attach *a;

	if (aidx < 0)
		return aidx;
	a = sio_attach_at(c->reg, (u32)aidx);
	a->used = 1;
	a->adapter = (u8)path;
	a->node = (u16)self;
	a->seg = seg;
	a->lut = first;
	a->lut_count = count;
	a->local_addr = local;
	if (c->ops->seg_map) {
		err = c->ops->seg_map(c->plat, seg, self, 1);
		if (err) {
			sio_memset(a, 0, sizeof(*a));
			return err;
		}
	}
	return 0;
}

int sio_seg_attach(struct sio_core *c, u32 self, u32 seg, struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	struct sio_segment *s = sio_seg(r, seg);
	char name[SIO_TOPO_NAME];
	struct sio_parsed orep;
	u8 repbuf[SIO_PEER_MSG];
	struct sio_adapter *ad;
	int path, aidx, first = -1, err;
	u32 count = 0, owner = s->owner, gen = s->gen;
	u64 local;

	if (self == owner)
		return -EINVAL;
	if (!sio_node_up(r, owner) || !sio_node_up(r, self))
		return -EHOSTDOWN;
	aidx = sio_attach_find(r, seg, self);
	if (aidx >= 0)
		return sio_msg_put_u64(rep, SIO_A_ADDR,
				       sio_attach_at(r, (u32)aidx)->local_addr);
	path = sio_path_find(r, self, owner);
	if (path < 0)
		return path;
	aidx = sio_share_room(c, SIO_SHARE_ATTACH, self);
	if (aidx < 0)
		return aidx;
	aidx = SIO_FREE_ENTRY(r, sio_attach_at, max_attach);
	if (aidx < 0)
		return aidx;
	sio_strlcpy(name, s->name, sizeof(name));
	err = owner_call(c, self, owner, name, SIO_CMD_SEG_CONNECT, 0, &orep,
			 repbuf, sizeof(repbuf));
	if (err)
		return err;
	err = connect_reply_ok(s, owner, gen, &orep);
	if (err)
		goto disconnect;
	first = sio_lut_map(c, self, (u32)path, s->size, owner, s->phys, self,
			    SIO_RID_CPU, &count);
	if (first < 0) {
		err = first;
		goto disconnect;
	}
	ad = &sio_node(r, self)->adapter[path];
	local = ad->window_base + (u64)first * ad->slot_size;
	/* Separate registries: the owner translates our slots (ADDR). */
	if (separate(c)) {
		err = owner_call(c, self, owner, name, SIO_CMD_SEG_CONNECT,
				 local, &orep, repbuf, sizeof(repbuf));
		if (!err && (!s->used || s->gen != gen))
			err = -ENOENT;
		if (err)
			goto disconnect;
	}
	err = attach_record(c, self, seg, (u32)path, first, count, local);
	if (err)
		goto disconnect;
	/*
	 * The owner's bit, in a registry the owner does not share; and its
	 * readers learn of the new record (the owner's event is the owner's).
	 */
	s->attached |= 1ull << self;
	if (c->ops->notify)
		c->ops->notify(c->plat);
	return sio_msg_put_u64(rep, SIO_A_ADDR, local);
disconnect:
	if (first >= 0)
		sio_lut_unmap(c, self, (u32)path, first, count);
	owner_call(c, self, owner, name, SIO_CMD_SEG_DISCONNECT, 0, &orep,
		   repbuf, sizeof(repbuf));
	return err;
}

int sio_seg_detach(struct sio_core *c, u32 self, u32 seg)
{
	struct sio_segment *s = sio_seg(c->reg, seg);
	char name[SIO_TOPO_NAME];
	struct sio_parsed orep;
	u8 repbuf[SIO_PEER_MSG];
	int aidx = sio_attach_find(c->reg, seg, self);
	u32 owner = s->owner, gen = s->gen;

	if (aidx < 0)
		return -EINVAL;
	sio_attach_release(c, (u32)aidx);
	sio_strlcpy(name, s->name, sizeof(name));
	if (sio_node_up(c->reg, owner) &&
	    owner_call(c, self, owner, name, SIO_CMD_SEG_DISCONNECT, 0, &orep,
		       repbuf, sizeof(repbuf)) &&
	    s->used && s->gen == gen)
		owner_forget(c, seg, self);	/* owner lost it meanwhile */
	/* The owner's bit, in a registry the owner does not share. */
	if (s->used && s->gen == gen)
		s->attached &= ~(1ull << self);
	if (c->ops->notify)
		c->ops->notify(c->plat);
	return 0;
}

/*
 * The owner's half with separate registries: its inbound entries for the
 * peer's window address (ADDR) lead to the segment, recorded so that the
 * disconnect or the peer's loss takes them away.  A peer that connects
 * again (its kernel restarted) replaces what it had.
 */
static int translate(struct sio_core *c, u32 self, u32 seg, u32 peer,
		     const struct sio_parsed *p, int half)
{
	struct sio_registry *r = c->reg;
	struct sio_segment *s = sio_seg(r, seg);
	struct sio_attach *a;
	u64 addr;
	int err;

	addr = sio_nla_u64(&p->tb[SIO_A_ADDR]);
	if (half >= 0)
		sio_attach_release(c, (u32)half);
	half = SIO_FREE_ENTRY(r, sio_attach_at, max_attach);
	if (half < 0)
		return half;
	err = c->ops->inbound_map(c->plat, self, peer, SIO_INB_SEG, 0, addr,
				  s->phys, s->size);
	if (err)
		return err;
	a = sio_attach_at(r, (u32)half);
	sio_memset(a, 0, sizeof(*a));
	a->used = 1;
	a->node = (u16)peer;
	a->seg = seg;
	a->lut = -1;
	a->local_addr = addr;
	return 0;
}

/* SEG_CONNECT and SEG_DISCONNECT, handled by the owner. */
int sio_h_seg_connect(struct sio_core *c, u32 self, const struct sio_parsed *p,
		      struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int peer, seg, half, err;
	struct sio_segment *s;

	peer = sio_msg_node(r, p, SIO_A_PEER);
	if (peer < 0)
		return peer;
	seg = sio_seg_lookup(r, self, sio_nla_str(&p->tb[SIO_A_NAME]));
	if (seg < 0)
		return seg;
	half = sio_attach_find(r, (u32)seg, (u32)peer);
	if (half >= 0 && !owner_half(sio_attach_at(r, (u32)half)))
		half = -ENOENT;		/* not ours: the peer's own record */
	if (p->cmd == SIO_CMD_SEG_DISCONNECT) {
		if (half >= 0)
			sio_attach_release(c, (u32)half);
		return owner_forget(c, (u32)seg, (u32)peer);
	}
	s = sio_seg(r, (u32)seg);
	if ((u32)peer == self || !s->sized)
		return -EINVAL;
	if (!s->available)
		return -EACCES;
	if (!sio_node_up(r, (u32)peer))
		return -EHOSTDOWN;
	if (separate(c) && c->ops->inbound_map && p->present[SIO_A_ADDR]) {
		err = translate(c, self, (u32)seg, (u32)peer, p, half);
		if (err)
			return err;
	}
	if (!(s->attached >> peer & 1)) {
		s->attached |= 1ull << peer;
		sio_seg_event(c, SIO_EV_SEGMENT_ATTACH, (u32)seg, "node",
			      sio_node(r, (u32)peer)->name);
	}
	if (sio_msg_put_u64(rep, SIO_A_ADDR, s->phys))
		return -EMSGSIZE;
	return sio_msg_put_u64(rep, SIO_A_SIZE, s->size);
}

/* A lost node: its attachments, and attachments of its segments, go. */
void sio_attach_node_down(struct sio_core *c, u32 node)
{
	struct sio_registry *r = c->reg;
	u32 i;

	for (i = 0; i < r->max_attach; i++) {
		struct sio_attach *a = sio_attach_at(r, i);
		u32 seg = a->seg, peer = a->node;

		if (!a->used || (peer != node && sio_seg(r, seg)->owner != node))
			continue;
		sio_attach_release(c, i);
		owner_forget(c, seg, peer);
	}
	/*
	 * A registry of one machine (smartio.ko over an NTB) has no record of
	 * the lost node's attachments, only their bits in its segments.
	 */
	for (i = 0; i < r->max_segments; i++)
		if (sio_seg(r, i)->used && (sio_seg(r, i)->attached >> node & 1))
			owner_forget(c, i, node);
}

/*
 * After a link went down (failover.c): an attachment whose adapter no
 * longer reaches the owner maps the segment again over the path chosen
 * now, before its old slots are cleared (a failover event), or with no
 * path left ends as if the owner were lost.
 */
void sio_attach_link_lost(struct sio_core *c)
{
	struct sio_registry *r = c->reg;
	char val[SIO_EVENT_ARGS];
	struct sio_strbuf sb;
	u32 i, count;
	int to, first;

	for (i = 0; i < r->max_attach; i++) {
		struct sio_attach *a = sio_attach_at(r, i);
		u32 seg = a->seg, peer = a->node, owner;
		struct sio_adapter *ad;

		if (!a->used || seg >= r->max_segments || owner_half(a))
			continue;
		owner = sio_seg(r, seg)->owner;
		if (sio_path_hops(r, peer, a->adapter, owner) >= 0)
			continue;
		to = sio_path_find(r, peer, owner);
		first = to < 0 ? to :
			sio_lut_map(c, peer, (u32)to, sio_seg(r, seg)->size,
				    owner, sio_seg(r, seg)->phys, peer,
				    SIO_RID_CPU, &count);
		if (first < 0) {
			sio_attach_release(c, i);
			owner_forget(c, seg, peer);
			continue;
		}
		sio_lut_unmap(c, peer, a->adapter, a->lut, a->lut_count);
		ad = &sio_node(r, peer)->adapter[to];
		a->adapter = (u8)to;
		a->lut = first;
		a->lut_count = count;
		a->local_addr = ad->window_base + (u64)first * ad->slot_size;
		/* "node=<peer> adapter=<ad>", as a borrow's failover says */
		sio_sb_init(&sb, val, sizeof(val));
		sio_sb_str(&sb, sio_node(r, peer)->name);
		sio_sb_str(&sb, " adapter=");
		sio_sb_str(&sb, ad->name);
		sio_seg_event(c, SIO_EV_FAILOVER, seg, "node", val);
	}
}
