// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Peer-to-peer: device A reaches the BARs of device B directly (an NVMe
 * writing into a GPU's memory, a DMA engine into another device), along the
 * shortest path (SmartIO section 4.4):
 *   same lender   an IOMMU mapping on it, from A's requester id to B's BAR
 *   two lenders   B's lender maps an IOVA of its own to the BAR for
 *                 transactions from A's lender with A's requester id
 *                 (PEER_EXPOSE), and A's lender points LUT slots of its
 *                 adapter towards B's lender at that IOVA, allowed for A's
 *                 requester id only
 * A node may set it up when it may use both devices (the lender or a
 * borrower of each); the mapping lasts until it is removed, or that node
 * stops using either device (return, reclaim) or goes down, or a lender
 * goes down.  PEER_MAP / PEER_UNMAP run on A's lender.
 */
#include "core_int.h"

static int separate(const struct sio_core *c)
{
	return !!(c->flags & SIO_CORE_SEPARATE);
}

static int may_use(struct sio_registry *r, u32 dev, u32 node)
{
	struct sio_device *d = sio_dev(r, dev);

	return d->node == node || (d->borrowers >> node & 1);
}

static int free_slot(struct sio_registry *r)
{
	u32 i;

	for (i = 0; i < r->max_peermap; i++)
		if (!sio_peermap_at(r, i)->used)
			return (int)i;
	return -ENOSPC;
}

/* Asks the peer's lender to expose (or stop exposing) a BAR. */
static int expose_call(struct sio_core *c, u32 self, u8 cmd,
		       const struct sio_peermap *m, u64 *iova)
{
	struct sio_device *a = sio_dev(c->reg, m->dev);
	struct sio_device *b = sio_dev(c->reg, m->peer);
	u8 buf[SIO_PEER_MSG], repbuf[SIO_PEER_MSG];
	struct sio_parsed rep;
	struct sio_msg msg;
	int err;

	sio_msg_init(&msg, buf, sizeof(buf), cmd, SIO_F_REQUEST, 0);
	sio_msg_put_u32(&msg, SIO_A_DEV, b->fdid);
	sio_msg_put_u32(&msg, SIO_A_PEER, a->node);
	sio_msg_put_u32(&msg, SIO_A_RID, a->rid);
	if (cmd == SIO_CMD_PEER_EXPOSE)
		sio_msg_put_u32(&msg, SIO_A_INDEX, m->bar);
	else
		sio_msg_put_u64(&msg, SIO_A_IOVA, m->iova);
	err = sio_core_call(c, self, b->node, &msg, &rep, repbuf,
			    sizeof(repbuf));
	if (err || !iova)
		return err;
	if (!rep.present[SIO_A_ADDR])
		return -EPROTO;
	*iova = sio_nla_u64(&rep.tb[SIO_A_ADDR]);
	return 0;
}

/* The peer lender's half, without a message (that node is down or we are
 * tearing down for it, as borrows are on node loss). */
static void unexpose_here(struct sio_core *c, struct sio_peermap *m)
{
	struct sio_device *a = sio_dev(c->reg, m->dev);
	u32 lb = sio_dev(c->reg, m->peer)->node;

	if (!m->iova)
		return;
	sio_iova_unmap(c, lb, a->node, a->rid, m->iova);
	m->iova = 0;
}

/*
 * Undoes one mapping; self < 0: forced, no messages.  With separate
 * registries each node undoes only its own half (peer_sep.c).
 */
static void release(struct sio_core *c, s32 self, struct sio_peermap *m)
{
	u32 la = sio_dev(c->reg, m->dev)->node;
	u32 lb = sio_dev(c->reg, m->peer)->node;

	if (separate(c)) {
		sio_peer_sep_release(c, m);
		return;
	}
	if (m->lut >= 0)
		sio_lut_unmap(c, la, m->adapter, m->lut, m->lut_count);
	m->lut = -1;
	if (m->iova && !(self >= 0 && sio_node_up(c->reg, lb) &&
			 !expose_call(c, (u32)self, SIO_CMD_PEER_UNEXPOSE, m,
				      NULL)))
		unexpose_here(c, m);
	sio_memset(m, 0, sizeof(*m));
}

static void release_pair(struct sio_core *c, s32 self, u32 dev, u32 peer)
{
	u32 i;

	for (i = 0; i < c->reg->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(c->reg, i);

		if (m->used && m->dev == dev && m->peer == peer)
			release(c, self, m);
	}
}

static int pair_mapped(struct sio_registry *r, u32 dev, u32 peer)
{
	u32 i;

	for (i = 0; i < r->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used && m->dev == dev && m->peer == peer)
			return 1;
	}
	return 0;
}

/* Maps BAR bar of peer for dev into a fresh record. */
static int map_bar(struct sio_core *c, u32 self, u32 dev, u32 peer, u32 bar,
		   u32 asker, int path)
{
	struct sio_registry *r = c->reg;
	struct sio_device *a = sio_dev(r, dev), *b = sio_dev(r, peer);
	struct sio_peermap *m;
	struct sio_adapter *ad;
	u32 count;
	int slot = free_slot(r), first, err;

	if (slot >= 0 && sio_share_room(c, SIO_SHARE_PEERMAP, asker))
		slot = -EDQUOT;
	if (slot < 0)
		return slot;
	m = sio_peermap_at(r, (u32)slot);
	sio_memset(m, 0, sizeof(*m));
	m->used = 1;
	m->dev = dev;
	m->peer = peer;
	m->bar = (u8)bar;
	m->node = (u16)asker;
	m->lut = -1;
	err = expose_call(c, self, SIO_CMD_PEER_EXPOSE, m, &m->iova);
	if (err) {
		m->iova = 0;
		release(c, (s32)self, m);
		return err;
	}
	if (a->node == b->node) {
		m->ioaddr = m->iova;
		return 0;
	}
	first = sio_lut_share_ok(c, self, (u32)path, asker,
				 sio_lut_slots(c, self, (u32)path,
					       b->bar[bar].size));
	if (!first)
		first = sio_lut_map(c, self, (u32)path, b->bar[bar].size,
				    b->node, m->iova, self, a->rid, &count);
	if (first < 0) {
		release(c, (s32)self, m);
		return first;
	}
	ad = &sio_node(r, self)->adapter[path];
	m->adapter = (u8)path;
	m->lut = first;
	m->lut_count = count;
	m->ioaddr = ad->window_base + (u64)first * ad->slot_size;
	return 0;
}

int sio_h_peer(struct sio_core *c, u32 self, const struct sio_parsed *p,
	       struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p), asker, peer, path = -1, err = 0;
	struct sio_device *a, *b;
	u32 bar;

	if (dev < 0)
		return dev;
	asker = sio_msg_node(r, p, SIO_A_NODE);
	if (asker < 0)
		return asker;
	peer = sio_dev_lookup_fdid(r, sio_nla_u32(&p->tb[SIO_A_INDEX]));
	if (peer < 0)
		return peer;
	a = sio_dev(r, (u32)dev);
	b = sio_dev(r, (u32)peer);
	if ((a->node != self && !separate(c)) || a->gone || b->gone)
		return -ENXIO;
	if (dev == peer)
		return -EINVAL;
	if (p->cmd == SIO_CMD_PEER_MAP &&
	    (!sio_node_up(r, b->node) || !sio_node_up(r, a->node)))
		return -EHOSTDOWN;
	if (!may_use(r, (u32)dev, (u32)asker) || !may_use(r, (u32)peer, (u32)asker))
		return -EACCES;
	if (separate(c))
		return sio_peer_sep_map(c, self, p, (u32)dev, (u32)peer,
					(u32)asker, rep);
	if (p->cmd == SIO_CMD_PEER_UNMAP) {
		if (!pair_mapped(r, (u32)dev, (u32)peer))
			return -ENOENT;
		release_pair(c, (s32)self, (u32)dev, (u32)peer);
		return 0;
	}
	if (pair_mapped(r, (u32)dev, (u32)peer))
		return -EEXIST;
	if (b->node != self) {
		path = sio_path_find(r, self, b->node);
		if (path < 0)
			return path;
	}
	for (bar = 0; bar < SIO_MAX_BARS && !err; bar++)
		if (b->bar[bar].size)
			err = map_bar(c, self, (u32)dev, (u32)peer, bar,
				      (u32)asker, path);
	if (err)
		release_pair(c, (s32)self, (u32)dev, (u32)peer);
	return err;
}

/* On the peer's lender: an IOVA of ours that reaches the BAR. */
int sio_h_peer_expose(struct sio_core *c, u32 self, const struct sio_parsed *p,
		      struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p), src;
	struct sio_device *b;
	struct sio_node *n = sio_node(r, self);
	u64 iova, size;
	u32 bar;
	u16 rid;
	int err;

	if (dev < 0)
		return dev;
	src = sio_msg_node(r, p, SIO_A_PEER);
	if (src < 0)
		return src;
	b = sio_dev(r, (u32)dev);
	if (b->node != self)
		return -ENXIO;
	if (separate(c))
		return sio_peer_sep_expose(c, self, p, (u32)dev);
	rid = (u16)sio_nla_u32(&p->tb[SIO_A_RID]);
	if (p->cmd == SIO_CMD_PEER_UNEXPOSE) {
		iova = sio_nla_u64(&p->tb[SIO_A_IOVA]);
		err = sio_range_free(&n->iova, iova);
		if (!err)
			c->ops->iommu_unmap(c->plat, self, (u32)src, rid, iova);
		return err;
	}
	bar = sio_nla_u32(&p->tb[SIO_A_INDEX]);
	if (bar >= SIO_MAX_BARS || !b->bar[bar].size)
		return -EINVAL;
	size = b->bar[bar].size;
	err = sio_iova_map(c, self, (u32)src, rid, b->bar[bar].addr, size,
			   &iova);
	if (err)
		return err;
	return sio_msg_put_u64(rep, SIO_A_ADDR, iova);
}

void sio_peer_release(struct sio_core *c, u32 dev, u32 node)
{
	u32 i;

	for (i = 0; i < c->reg->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(c->reg, i);

		if (m->used && m->node == node && (m->dev == dev || m->peer == dev))
			release(c, -1, m);
	}
}

void sio_peer_node_down(struct sio_core *c, u32 node)
{
	u32 i;

	for (i = 0; i < c->reg->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(c->reg, i);

		if (m->used && (m->node == node ||
				sio_dev(c->reg, m->dev)->node == node ||
				sio_dev(c->reg, m->peer)->node == node ||
				(m->kind == SIO_PEERMAP_EXPOSED &&
				 m->via == node)))
			release(c, -1, m);
	}
}
