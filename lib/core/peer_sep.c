// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Peer-to-peer between machines with registries of their own
 * (SIO_CORE_SEPARATE, smartio.ko over an NTB): device A of lender LA
 * reaches BAR N of device B of another lender LB.  NTBs translate on the
 * receiving side and a node handling a peer's request may not call a
 * third one, so the asking node drives the conversation, as a borrower
 * drives a borrow:
 *   asker -> LA  PEER_MAP      LA: slots of its window toward LB for each
 *                              BAR of B, in A's IOMMU domain (A's
 *                              requester id); answers per BAR the
 *                              window address (IOVA) and A's address
 *   asker -> LB  PEER_EXPOSE   LB: its inbound entries for LA at that
 *                              window address onto the BAR (inbound_map
 *                              SIO_INB_BAR), once per address
 *   asker: a copy of each address (SIO_PEERMAP_COPY) for its tree
 * PEER_UNEXPOSE and PEER_UNMAP undo it, asked by the asker too; each side
 * frees its own half when the other one, or the asker, is lost, and when
 * the asker stops borrowing either device.  When one machine lends both
 * (SmartIO 4.4's first case) no NTB is on the path: LA answers PEER_MAP
 * with addresses of A's IOMMU domain that lead to B's BARs, and nothing
 * is exposed.  The single-registry flow (peer.c) is unchanged.
 */
#include "core_int.h"

static int may_use(struct sio_registry *r, u32 dev, u32 node)
{
	struct sio_device *d = sio_dev(r, dev);

	return d->node == node || (d->borrowers >> node & 1);
}

static struct sio_peermap *new_record(struct sio_registry *r, u8 kind,
				      u32 dev, u32 peer, u32 bar, u32 asker)
{
	struct sio_peermap *m =
		SIO_CLAIM_RECORD(r, sio_peermap_at, max_peermap);

	if (!m)
		return NULL;
	m->kind = kind;
	m->dev = dev;
	m->peer = peer;
	m->bar = (u8)bar;
	m->node = (u16)asker;
	m->via = SIO_NONE;
	m->lut = -1;
	return m;
}

/* Readers of this registry (smartio.ko's copies) learn of a change. */
static int changed(struct sio_core *c, int err)
{
	if (!err && c->ops->notify)
		c->ops->notify(c->plat);
	return err;
}

/* A and B are devices of one machine: no NTB between them. */
static int one_lender(struct sio_registry *r, u32 dev, u32 peer)
{
	return sio_dev(r, dev)->node == sio_dev(r, peer)->node;
}

/* Undoes what this node holds of one record; nothing is asked of others. */
void sio_peer_sep_release(struct sio_core *c, struct sio_peermap *m)
{
	struct sio_registry *r = c->reg;
	struct sio_device *a = sio_dev(r, m->dev), *b = sio_dev(r, m->peer);

	if (m->kind == SIO_PEERMAP_MAP && m->lut >= 0)
		sio_lut_unmap(c, a->node, m->adapter, m->lut, m->lut_count);
	if (m->kind == SIO_PEERMAP_MAP && m->lut < 0 && m->iova &&
	    one_lender(r, m->dev, m->peer))
		sio_iova_unmap(c, a->node, a->node, a->rid, m->iova);
	if (m->kind == SIO_PEERMAP_EXPOSED && c->ops->inbound_unmap)
		c->ops->inbound_unmap(c->plat, b->node, m->via, SIO_INB_BAR,
				      m->peer, m->iova, b->bar[m->bar].size);
	sio_memset(m, 0, sizeof(*m));
}

/* Every record of one kind for the pair, asked by asker. */
static void drop(struct sio_core *c, u8 kind, u32 dev, u32 peer, u32 asker)
{
	u32 i;

	for (i = 0; i < c->reg->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(c->reg, i);

		if (m->used && m->kind == kind && m->dev == dev &&
		    m->peer == peer && m->node == asker)
			sio_peer_sep_release(c, m);
	}
}

/* --- A's lender ----------------------------------------------------------- */

/* One BAR's answer: its index, the window or IOMMU address, A's address. */
static void answer_bar(struct sio_msg *rep, const struct sio_peermap *m)
{
	int nest = sio_msg_nest_start(rep, SIO_A_BAR);

	sio_msg_put_u32(rep, SIO_A_INDEX, m->bar);
	sio_msg_put_u64(rep, SIO_A_IOVA, m->iova);
	sio_msg_put_u64(rep, SIO_A_ADDR, m->ioaddr);
	sio_msg_nest_end(rep, nest);
}

/*
 * LA lends B too: an address of its IOMMU space for each BAR of B, mapped
 * in A's domain (A's requester id) onto the BAR; A uses it as it is.
 */
static int lender_map_local(struct sio_core *c, u32 self, u32 dev, u32 peer,
			    u32 asker, struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	struct sio_device *a = sio_dev(r, dev), *b = sio_dev(r, peer);
	struct sio_peermap *m;
	u64 iova;
	u32 bar;
	int err;

	for (bar = 0; bar < SIO_MAX_BARS; bar++) {
		if (!b->bar[bar].size)
			continue;
		m = new_record(r, SIO_PEERMAP_MAP, dev, peer, bar, asker);
		err = m ? sio_iova_map(c, self, self, a->rid, b->bar[bar].addr,
				       b->bar[bar].size, &iova) : -ENOSPC;
		if (err) {
			if (m)
				sio_memset(m, 0, sizeof(*m));
			drop(c, SIO_PEERMAP_MAP, dev, peer, asker);
			return err;
		}
		m->iova = iova;
		m->ioaddr = iova;
		answer_bar(rep, m);
	}
	return rep->err;
}

/* LA: slots toward LB for every BAR of peer, A's addresses answered. */
static int lender_map(struct sio_core *c, u32 self, u32 dev, u32 peer,
		      u32 asker, struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	struct sio_device *a = sio_dev(r, dev), *b = sio_dev(r, peer);
	int path = sio_path_find(r, self, b->node), first;
	struct sio_peermap *m;
	struct sio_adapter *ad;
	u32 bar, count;

	if (b->node == self)
		return lender_map_local(c, self, dev, peer, asker, rep);
	if (path < 0)
		return path;
	for (bar = 0, count = 0; bar < SIO_MAX_BARS; bar++)
		count += sio_lut_slots(c, self, (u32)path, b->bar[bar].size);
	first = sio_lut_share_ok(c, self, (u32)path, asker, count);
	if (first)
		return first;
	ad = &sio_node(r, self)->adapter[path];
	for (bar = 0; bar < SIO_MAX_BARS; bar++) {
		if (!b->bar[bar].size)
			continue;
		m = new_record(r, SIO_PEERMAP_MAP, dev, peer, bar, asker);
		if (!m) {
			drop(c, SIO_PEERMAP_MAP, dev, peer, asker);
			return -ENOSPC;
		}
		first = sio_lut_map(c, self, (u32)path, b->bar[bar].size,
				    b->node, 0, self, a->rid, &count);
		if (first < 0) {
			sio_memset(m, 0, sizeof(*m));
			drop(c, SIO_PEERMAP_MAP, dev, peer, asker);
			return first;
		}
		m->adapter = (u8)path;
		m->lut = first;
		m->lut_count = count;
		m->iova = ad->window_base + (u64)first * ad->slot_size;
		m->ioaddr = c->ops->dev_addr ?
			c->ops->dev_addr(c->plat, self, m->iova) : m->iova;
		answer_bar(rep, m);
	}
	return rep->err;
}

static int pair_held(struct sio_registry *r, u8 kind, u32 dev, u32 peer)
{
	u32 i;

	for (i = 0; i < r->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used && m->kind == kind && m->dev == dev &&
		    m->peer == peer)
			return 1;
	}
	return 0;
}

/* --- B's lender ----------------------------------------------------------- */

/* LB: PEER_EXPOSE / PEER_UNEXPOSE from the asker (NODE), for LA (PEER). */
static int sep_expose(struct sio_core *c, u32 self,
		      const struct sio_parsed *p, u32 peer)
{
	struct sio_registry *r = c->reg;
	struct sio_device *b = sio_dev(r, peer);
	struct sio_peermap *m = NULL;
	int asker, la, err;
	u64 addr;
	u32 bar, i;

	asker = sio_msg_node(r, p, SIO_A_NODE);
	la = sio_msg_node(r, p, SIO_A_PEER);
	if (asker < 0 || la < 0)
		return asker < 0 ? asker : la;
	if (!p->present[SIO_A_IOVA] || !c->ops->inbound_map ||
	    (u32)la == self)
		return -EINVAL;
	if (!may_use(r, peer, (u32)asker))
		return -EACCES;
	addr = sio_nla_u64(&p->tb[SIO_A_IOVA]);
	for (i = 0; i < r->max_peermap; i++) {
		struct sio_peermap *e = sio_peermap_at(r, i);

		if (e->used && e->kind == SIO_PEERMAP_EXPOSED &&
		    e->peer == peer && e->via == (u32)la && e->iova == addr)
			m = e;
	}
	if (p->cmd == SIO_CMD_PEER_UNEXPOSE) {
		if (!m || m->node != (u32)asker)
			return -ENOENT;
		sio_peer_sep_release(c, m);
		return 0;
	}
	if (m)
		return -EEXIST;
	bar = sio_nla_u32(&p->tb[SIO_A_INDEX]);
	if (bar >= SIO_MAX_BARS || !b->bar[bar].size)
		return -EINVAL;
	err = sio_node_window_ok(r, (u32)la, addr, b->bar[bar].size);
	if (err)
		return err;
	m = new_record(r, SIO_PEERMAP_EXPOSED, peer, peer, bar, (u32)asker);
	if (!m)
		return -ENOSPC;
	err = c->ops->inbound_map(c->plat, self, (u32)la, SIO_INB_BAR, peer,
				  addr, b->bar[bar].addr, b->bar[bar].size);
	if (err) {
		sio_memset(m, 0, sizeof(*m));
		return err;
	}
	m->via = (u16)la;
	m->iova = addr;
	return 0;
}

int sio_peer_sep_expose(struct sio_core *c, u32 self,
			const struct sio_parsed *p, u32 peer)
{
	return changed(c, sep_expose(c, self, p, peer));
}

/* --- the asking node ------------------------------------------------------ */

/* One message of the asker's conversation; the answer parsed into rep. */
static int ask(struct sio_core *c, u32 self, u32 dst, u8 cmd, u32 dev,
	       u32 peer_or_la, const struct sio_peermap *m,
	       struct sio_parsed *rep, u8 *repbuf, u32 cap)
{
	struct sio_registry *r = c->reg;
	u8 buf[SIO_PEER_MSG];
	struct sio_msg msg;

	sio_msg_init(&msg, buf, sizeof(buf), cmd, SIO_F_REQUEST, 0);
	sio_msg_put_u32(&msg, SIO_A_DEV, sio_dev(r, dev)->fdid);
	sio_msg_put_u32(&msg, SIO_A_NODE, self);
	if (cmd == SIO_CMD_PEER_MAP || cmd == SIO_CMD_PEER_UNMAP) {
		sio_msg_put_u32(&msg, SIO_A_INDEX,
				sio_dev(r, peer_or_la)->fdid);
	} else {
		sio_msg_put_u32(&msg, SIO_A_PEER, peer_or_la);
		sio_msg_put_u32(&msg, SIO_A_RID, sio_dev(r, m->dev)->rid);
		sio_msg_put_u32(&msg, SIO_A_INDEX, m->bar);
		sio_msg_put_u64(&msg, SIO_A_IOVA, m->iova);
	}
	return sio_core_call(c, self, dst, &msg, rep, repbuf, cap);
}

/* PEER_EXPOSE or PEER_UNEXPOSE of one copy's BAR at B's lender. */
static int expose(struct sio_core *c, u32 self, u8 cmd,
		  const struct sio_peermap *m)
{
	u8 repbuf[SIO_PEER_MSG];
	struct sio_parsed rep;

	return ask(c, self, sio_dev(c->reg, m->peer)->node, cmd, m->peer,
		   sio_dev(c->reg, m->dev)->node, m, &rep, repbuf,
		   sizeof(repbuf));
}

/*
 * Undoes the asker's mapping of peer for dev: what B's lender exposed, A's
 * lender's slots (asked, or ours), the copies.
 */
static void asker_unmap(struct sio_core *c, u32 self, u32 dev, u32 peer)
{
	struct sio_registry *r = c->reg;
	u8 kind = sio_dev(r, dev)->node == self ? SIO_PEERMAP_MAP :
						   SIO_PEERMAP_COPY;
	u8 repbuf[SIO_PEER_MSG];
	struct sio_parsed rep;
	u32 i;

	for (i = 0; i < r->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used && m->kind == kind && m->dev == dev &&
		    m->peer == peer && m->node == self && m->via != SIO_NONE &&
		    sio_node_up(r, sio_dev(r, peer)->node))
			expose(c, self, SIO_CMD_PEER_UNEXPOSE, m);
	}
	if (kind == SIO_PEERMAP_COPY && sio_node_up(r, sio_dev(r, dev)->node))
		ask(c, self, sio_dev(r, dev)->node, SIO_CMD_PEER_UNMAP, dev,
		    peer, NULL, &rep, repbuf, sizeof(repbuf));
	drop(c, kind, dev, peer, self);
}

/*
 * This node stops borrowing dev (its return): the mappings it asked for
 * that involve dev go first, while both lenders can still be told.
 */
void sio_peer_sep_forget(struct sio_core *c, u32 self, u32 dev)
{
	struct sio_registry *r = c->reg;
	u32 i;

	for (i = 0; i < r->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used && m->node == self &&
		    (m->kind == SIO_PEERMAP_COPY ||
		     (m->kind == SIO_PEERMAP_MAP &&
		      sio_dev(r, m->dev)->node == self)) &&
		    (m->dev == dev || m->peer == dev))
			asker_unmap(c, self, m->dev, m->peer);
	}
}

/*
 * An address A's lender may answer for a BAR of B: in its window (toward
 * B's lender), or in its IOMMU address space when it lends both.
 */
static int answer_ok(struct sio_registry *r, u32 dev, u32 peer, u64 addr,
		     u64 size)
{
	if (!one_lender(r, dev, peer))
		return sio_node_window_ok(r, sio_dev(r, dev)->node, addr, size);
	return addr >= SIO_IOVA_BASE && size <= SIO_IOVA_SIZE &&
	       addr - SIO_IOVA_BASE <= SIO_IOVA_SIZE - size ? 0 : -EPROTO;
}

/* The copies of A's lender's answer; the BARs it names must be B's. */
static int take_copies(struct sio_core *c, u32 self, u32 dev, u32 peer,
		       const struct sio_parsed *rep)
{
	struct sio_registry *r = c->reg;
	struct sio_nla bar, f;
	struct sio_peermap *m;
	u32 pos = 0, idx, n = 0;

	while (sio_nla_next(rep->attrs, rep->attrs_len, &pos, &bar)) {
		if (bar.type != SIO_A_BAR)
			continue;
		if (sio_nla_find(&bar, SIO_A_INDEX, &f))
			return -EPROTO;
		idx = sio_nla_u32(&f);
		if (idx >= SIO_MAX_BARS || !sio_dev(r, peer)->bar[idx].size)
			return -EPROTO;
		m = new_record(r, SIO_PEERMAP_COPY, dev, peer, idx, self);
		if (!m)
			return -ENOSPC;
		if (sio_nla_find(&bar, SIO_A_IOVA, &f) ||
		    answer_ok(r, dev, peer, sio_nla_u64(&f),
			      sio_dev(r, peer)->bar[idx].size))
			return -EPROTO;
		m->iova = sio_nla_u64(&f);
		if (sio_nla_find(&bar, SIO_A_ADDR, &f))
			return -EPROTO;
		m->ioaddr = sio_nla_u64(&f);
		n++;
	}
	return n ? 0 : -EPROTO;
}

/*
 * The asker's mapping: A's lender's slots (asked, or ours when we are A's
 * lender: then its records are ours and no copy is kept), then each BAR
 * exposed by B's lender; anything failing undoes what was done.
 */
static int asker_map(struct sio_core *c, u32 self, u32 dev, u32 peer)
{
	struct sio_registry *r = c->reg;
	u8 kind = sio_dev(r, dev)->node == self ? SIO_PEERMAP_MAP :
						   SIO_PEERMAP_COPY;
	u8 repbuf[SIO_PEER_MSG], buf[SIO_PEER_MSG];
	struct sio_parsed rep;
	struct sio_msg scratch;
	u32 i;
	int err;

	if (pair_held(r, kind, dev, peer))
		return -EEXIST;
	if (kind == SIO_PEERMAP_MAP) {
		sio_msg_init(&scratch, buf, sizeof(buf), SIO_CMD_REPLY,
			     SIO_F_REPLY, 0);
		err = lender_map(c, self, dev, peer, self, &scratch);
	} else {
		err = ask(c, self, sio_dev(r, dev)->node, SIO_CMD_PEER_MAP,
			  dev, peer, NULL, &rep, repbuf, sizeof(repbuf));
		if (!err)
			err = take_copies(c, self, dev, peer, &rep);
	}
	for (i = 0; !err && i < r->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used && m->kind == kind && m->dev == dev &&
		    m->peer == peer && m->node == self &&
		    !one_lender(r, dev, peer)) {
			err = expose(c, self, SIO_CMD_PEER_EXPOSE, m);
			if (!err)
				m->via = (u16)sio_dev(r, peer)->node;
		}
	}
	if (err)
		asker_unmap(c, self, dev, peer);
	return err;
}

/*
 * PEER_MAP / PEER_UNMAP with separate registries: a local user's request
 * (the asker's conversation), or the asker's request to A's lender.
 */
static int sep_map(struct sio_core *c, u32 self, const struct sio_parsed *p,
		   u32 dev, u32 peer, u32 asker, struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	struct sio_device *a = sio_dev(r, dev);

	if (p->from == self) {
		if (asker != self)
			return -EPERM;
		if (p->cmd == SIO_CMD_PEER_UNMAP) {
			if (!pair_held(r, a->node == self ? SIO_PEERMAP_MAP :
				       SIO_PEERMAP_COPY, dev, peer))
				return -ENOENT;
			asker_unmap(c, self, dev, peer);
			return 0;
		}
		return asker_map(c, self, dev, peer);
	}
	if (a->node != self)
		return -ENXIO;
	if (p->cmd == SIO_CMD_PEER_UNMAP) {
		if (!pair_held(r, SIO_PEERMAP_MAP, dev, peer))
			return -ENOENT;
		drop(c, SIO_PEERMAP_MAP, dev, peer, asker);
		return 0;
	}
	if (pair_held(r, SIO_PEERMAP_MAP, dev, peer))
		return -EEXIST;
	return lender_map(c, self, dev, peer, asker, rep);
}

int sio_peer_sep_map(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     u32 dev, u32 peer, u32 asker, struct sio_msg *rep)
{
	return changed(c, sep_map(c, self, p, dev, peer, asker, rep));
}
