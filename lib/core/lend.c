// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Device lending: lend policy, mode, borrow, return, reclaim.
 *
 * A borrow is a conversation between the borrower's core and the lender's:
 *   borrower: requester entry + IOVA range for the DMA window
 *   -> BORROW_REQ        lender: policy, mode, its requester entry
 *   <- BORROW_GRANT      (BARs, requester id) or BORROW_DENY (errno)
 *   borrower: LUT slots mapping each BAR for its CPUs
 *   -> MAP_DMA_WINDOW    lender: LUT slots from its window to the IOVA
 *   -> MAP_MSI_WINDOW    lender: one LUT slot to the borrower's MSI range
 * Any failure unwinds both sides (RETURN_REQ), so nothing is half-done.
 */
#include "core_int.h"

static int separate(const struct sio_core *c)
{
	return !!(c->flags & SIO_CORE_SEPARATE);
}

void sio_event_dev(struct sio_core *c, u32 kind, u32 dev, const char *key,
		   const char *val)
{
	sio_event_about(c, kind, "dev/", sio_dev(c->reg, dev)->name, NULL, key,
			val);
}

static int policy_allows(const struct sio_device *d, u32 node)
{
	switch (d->policy) {
	case SIO_LEND_ALL:
		return 1;
	case SIO_LEND_LIST:
		return (int)(d->lend_mask >> node & 1);
	default:
		return 0;
	}
}

/*
 * The lender's refusals that depend on the device alone: its lend policy
 * and its mode (BORROW_REQ, and sio_core_borrow_check before a borrow).
 */
static int lend_allows(const struct sio_device *d, u32 node)
{
	if (!policy_allows(d, node))
		return -EACCES;
	if (d->mode == SIO_MODE_EXCLUSIVE && d->borrowers)
		return -EBUSY;
	return 0;
}

/*
 * A lend event's policy as its reader wants it: "all", "none" or the
 * nodes lent to, comma-separated ("host1,host3"); a list longer than the
 * event's arguments ends in ",+N" for the N nodes left out.
 */
static void lend_policy_words(struct sio_registry *r, u32 policy,
			      u64 mask, char *buf, u32 cap)
{
	struct sio_strbuf sb;
	u32 n, left = 0;

	sio_sb_init(&sb, buf, cap);
	if (policy != SIO_LEND_LIST) {
		sio_sb_str(&sb, policy == SIO_LEND_ALL ? "all" : "none");
		return;
	}
	for (n = 0; n < r->nnodes; n++) {
		const char *name = sio_node(r, n)->name;

		if (!(mask >> n & 1))
			continue;
		/* room for ",name" and a later ",+NN" */
		if (left || sb.len + sio_strnlen(name, SIO_NAME_MAX) + 1 + 5 >= cap) {
			left++;
			continue;
		}
		if (sb.len)
			sio_sb_str(&sb, ",");
		sio_sb_str(&sb, name);
	}
	if (left) {
		sio_sb_str(&sb, ",+");
		sio_sb_u64(&sb, left);
	}
}

int sio_h_lend(struct sio_core *c, u32 self, const struct sio_parsed *p,
	       struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	struct sio_device *d;
	u32 policy, n;
	u64 mask, all = sio_all_nodes(r->nnodes);
	int dev = sio_msg_dev(r, p);
	char val[SIO_EVENT_ARGS - sizeof("policy=")];

	(void)rep;
	(void)self;
	if (dev < 0)
		return dev;
	d = sio_dev(r, (u32)dev);
	policy = sio_nla_u32(&p->tb[SIO_A_FLAGS]);
	mask = sio_nla_u64(&p->tb[SIO_A_MASK]);
	if (policy > SIO_LEND_LIST || (mask & ~all) ||
	    (policy == SIO_LEND_LIST && !mask))
		return -EINVAL;
	/* Narrowing the policy must not strand a current borrower. */
	for (n = 0; n < r->nnodes; n++) {
		struct sio_device probe = *d;

		probe.policy = (u8)policy;
		probe.lend_mask = mask;
		if ((d->borrowers >> n & 1) && !policy_allows(&probe, n))
			return -EBUSY;
	}
	d->policy = (u8)policy;
	d->lend_mask = policy == SIO_LEND_LIST ? mask : 0;
	lend_policy_words(r, policy, mask, val, sizeof(val));
	sio_event_dev(c, SIO_EV_LEND, (u32)dev, "policy", val);
	return 0;
}

int sio_h_set_mode(struct sio_core *c, u32 self, const struct sio_parsed *p,
		   struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p);
	struct sio_device *d;
	u32 mode;

	(void)rep;
	(void)self;
	if (dev < 0)
		return dev;
	mode = sio_nla_u32(&p->tb[SIO_A_MODE]);
	if (mode > SIO_MODE_SHARED)
		return -EINVAL;
	d = sio_dev(r, (u32)dev);
	if (d->mode == mode)
		return 0;
	/*
	 * SmartIO section 6.1: a device goes from exclusive to shared while
	 * its one borrower keeps it (mode only gates further borrows); back
	 * to exclusive only when nobody borrows it.
	 */
	if (mode == SIO_MODE_EXCLUSIVE && d->borrowers)
		return -EBUSY;
	d->mode = (u8)mode;
	sio_event_dev(c, SIO_EV_MODE, (u32)dev, "mode",
		      mode == SIO_MODE_SHARED ? "shared" : "exclusive");
	return 0;
}

/* The switches' requester entries a borrow's lender half holds. */
static void borrow_route(const struct sio_borrow *b, struct sio_route *rt)
{
	u32 i;

	rt->hops = b->l_hops;
	for (i = 0; i < SIO_MAX_HOPS; i++) {
		rt->sw[i] = b->route_sw[i];
		rt->in_port[i] = b->route_port[i];
	}
}

static void give_route(struct sio_registry *r, struct sio_borrow *b)
{
	struct sio_route rt;

	borrow_route(b, &rt);
	sio_route_account(r, &rt, 0);
	b->l_hops = 0;
}

/*
 * Separate registries: the lender's inbound translations of the
 * borrower's BAR slots go, and with the last borrower the device goes
 * back to its driver.
 */
static void release_lender_separate(struct sio_core *c, struct sio_borrow *b)
{
	struct sio_device *d = sio_dev(c->reg, b->dev);
	u32 i;

	for (i = 0; i < SIO_MAX_BARS; i++) {
		if (!(b->bar_inbound >> i & 1))
			continue;
		if (c->ops->inbound_unmap)
			c->ops->inbound_unmap(c->plat, b->lender, b->borrower,
					      SIO_INB_BAR, b->dev,
					      b->bar_local[i], d->bar[i].size);
		b->bar_local[i] = 0;
	}
	b->bar_inbound = 0;
	d->borrowers &= ~(1ull << b->borrower);
	if (!d->borrowers && c->ops->lend_claim)
		c->ops->lend_claim(c->plat, b->dev, b->borrower, 0);
}

/* Lender's half: requester entries, DMA and MSI window slots. */
static void release_lender_part(struct sio_core *c, struct sio_borrow *b)
{
	struct sio_adapter *ad;

	if (b->l_req < 0)
		return;
	ad = &sio_node(c->reg, b->lender)->adapter[b->l_adapter];
	sio_lut_unmap(c, b->lender, b->l_adapter, b->l_lut, b->l_lut_count);
	if (b->dma_direct)
		c->ops->dma_direct_map(c->plat, b->lender, b->borrower,
				       sio_dev(c->reg, b->dev)->rid,
				       b->dma_addr, 1ull << b->l_window_shift,
				       0);
	b->dma_direct = 0;
	sio_lut_unmap(c, b->lender, b->l_adapter, b->msi_lut,
		      b->msi_lut_count);
	b->msi_lut_count = 0;
	sio_bitmap_free(&ad->reqs_out, (u32)b->l_req, 1);
	give_route(c->reg, b);
	b->l_lut = b->msi_lut = b->l_req = -1;
	b->l_lut_count = 0;
	if (separate(c))
		release_lender_separate(c, b);
}

/* Borrower's half: BAR slots, IOVA, requester entry. */
static void release_borrower_part(struct sio_core *c, struct sio_borrow *b)
{
	struct sio_node *n = sio_node(c->reg, b->borrower);
	struct sio_adapter *ad = &n->adapter[b->b_adapter];
	struct sio_device *d = sio_dev(c->reg, b->dev);
	u32 i;

	if (c->ops->inbound_unmap && (b->inbound & (1u << SIO_INB_DMA)))
		c->ops->inbound_unmap(c->plat, b->borrower, b->lender,
				      SIO_INB_DMA, b->dev, b->dma_addr,
				      b->iova_size);
	if (c->ops->inbound_unmap && (b->inbound & (1u << SIO_INB_MSI)))
		c->ops->inbound_unmap(c->plat, b->borrower, b->lender,
				      SIO_INB_MSI, b->dev, b->msi_addr,
				      SIO_MSI_SIZE);
	b->inbound = 0;
	for (i = 0; i < SIO_MAX_BARS; i++) {
		if (!b->bar_local[i])
			continue;
		sio_lut_unmap(c, b->borrower, b->b_adapter,
			      (s32)((b->bar_local[i] - ad->window_base) /
				    ad->slot_size),
			      (u32)SIO_DIV_ROUND_UP(d->bar[i].size,
						    ad->slot_size));
		b->bar_local[i] = 0;
	}
	if (b->iova_size && b->iova_from == SIO_IOVA_PLAT)
		c->ops->dma_window_free(c->plat, b->borrower, b->dev, b->iova,
					b->iova_size);
	else if (b->iova_size && b->iova_from == SIO_IOVA_CORE)
		sio_range_free(&n->iova, b->iova);
	b->iova_size = 0;
	b->iova_from = SIO_IOVA_CORE;
	if (b->b_req >= 0) {
		sio_bitmap_free(&ad->reqs_in, (u32)b->b_req, 1);
		b->b_req = -1;
	}
}

void sio_borrow_release(struct sio_core *c, u32 bidx, int lender_side,
			int borrower_side)
{
	struct sio_borrow *b = sio_borrow_at(c->reg, bidx);

	if (lender_side) {
		/* The MSI window goes: the device must stop using it. */
		sio_msi_release(c, b->dev, b->borrower);
		sio_peer_release(c, b->dev, b->borrower);
		release_lender_part(c, b);
	}
	if (borrower_side)
		release_borrower_part(c, b);
	if (b->l_req < 0 && b->b_req < 0) {
		sio_dev(c->reg, b->dev)->borrowers &= ~(1ull << b->borrower);
		sio_memset(b, 0, sizeof(*b));
	}
}

static int peer_call(struct sio_core *c, u32 self, u32 dst, u8 cmd, u32 dev,
		     u32 node, u64 iova, u64 size, struct sio_parsed *rep,
		     u8 *repbuf, u32 repcap)
{
	u8 buf[SIO_PEER_MSG];
	struct sio_msg m;

	sio_msg_init(&m, buf, sizeof(buf), cmd, SIO_F_REQUEST, 0);
	sio_msg_put_u32(&m, SIO_A_DEV, sio_dev(c->reg, dev)->fdid);
	sio_msg_put_u32(&m, SIO_A_NODE, node);
	sio_msg_put_u64(&m, SIO_A_IOVA, iova);
	sio_msg_put_u64(&m, SIO_A_SIZE, size);
	return sio_core_call(c, self, dst, &m, rep, repbuf, repcap);
}

/*
 * Gives the lender back its half; a down lender has nothing left to free.
 * With separate registries that half is in the lender's own record only.
 */
static void return_to_lender(struct sio_core *c, u32 self, u32 bidx)
{
	struct sio_borrow *b = sio_borrow_at(c->reg, bidx);
	struct sio_parsed rep;
	u8 repbuf[SIO_PEER_MSG];

	if (separate(c)) {
		if (sio_node_up(c->reg, b->lender))
			peer_call(c, self, b->lender, SIO_CMD_RETURN_REQ,
				  b->dev, self, 0, 0, &rep, repbuf,
				  sizeof(repbuf));
		return;
	}
	if (b->l_req < 0)
		return;
	if (!sio_node_up(c->reg, b->lender) ||
	    peer_call(c, self, b->lender, SIO_CMD_RETURN_REQ, b->dev, self, 0,
		      0, &rep, repbuf, sizeof(repbuf)))
		release_lender_part(c, b);
}

/*
 * The lender's grant, checked before anything is mapped against what the
 * registry holds of the device: a grant, the device's requester id, each
 * BAR the device has exactly once at its address and size, no other.  A
 * BAR of another size or granted twice would unbalance the LUT slots
 * mapped here and freed on return (release_borrower_part frees by the
 * registry's size).
 */
static int grant_ok(struct sio_registry *r, const struct sio_borrow *b,
		    const struct sio_parsed *grant)
{
	const struct sio_device *d = sio_dev(r, b->dev);
	struct sio_nla bar, f;
	u32 pos = 0, seen = 0, want = 0, idx, i;

	if (grant->cmd != SIO_CMD_BORROW_GRANT ||
	    (grant->present[SIO_A_RID] &&
	     sio_nla_u32(&grant->tb[SIO_A_RID]) != d->rid))
		return -EPROTO;
	while (sio_nla_next(grant->attrs, grant->attrs_len, &pos, &bar)) {
		if (bar.type != SIO_A_BAR)
			continue;
		if (sio_nla_find(&bar, SIO_A_INDEX, &f))
			return -EPROTO;
		idx = sio_nla_u32(&f);
		if (idx >= SIO_MAX_BARS || (seen >> idx & 1) ||
		    !d->bar[idx].size)
			return -EPROTO;
		seen |= 1u << idx;
		if (sio_nla_find(&bar, SIO_A_ADDR, &f) ||
		    sio_nla_u64(&f) != d->bar[idx].addr ||
		    sio_nla_find(&bar, SIO_A_SIZE, &f) ||
		    sio_nla_u64(&f) != d->bar[idx].size)
			return -EPROTO;
		if (!sio_nla_find(&bar, SIO_A_FLAGS, &f) &&
		    sio_nla_u32(&f) != d->bar[idx].flags)
			return -EPROTO;
	}
	for (i = 0; i < SIO_MAX_BARS; i++)
		if (d->bar[i].size)
			want |= 1u << i;
	return seen == want ? 0 : -EPROTO;
}

/*
 * A window address the lender answered: inside the window of one of its
 * adapters that reach us (the one it chose may no longer be the one
 * sio_path_find prefers, once its slots are taken), on a slot boundary,
 * room for size.
 */
/*
 * The direct window of node's adapter for a DMA window of size (core.h,
 * dma_direct): its address, right after the adapter's slots; 0 when the
 * platform offers none there or it is smaller, and the DMA window then
 * takes slots.
 */
static u64 direct_window(struct sio_core *c, u32 node, u32 adapter, u64 size)
{
	const struct sio_adapter *ad;
	u64 direct;

	if (!c->ops->dma_direct || !c->ops->dma_direct_map || adapter != 0)
		return 0;
	direct = c->ops->dma_direct(c->plat, node);
	if (!direct || !size || size > direct)
		return 0;
	ad = &sio_node(c->reg, node)->adapter[adapter];
	return ad->window_base + ad->window_size;
}

/*
 * The MSI window's slots on ad: SIO_MSI_SIZE in entries of the slot size
 * (16 of Switchtec's 64 KiB entries, one of a larger one).
 */
static u32 msi_slots(const struct sio_adapter *ad)
{
	return (u32)SIO_DIV_ROUND_UP(SIO_MSI_SIZE, ad->slot_size);
}

/*
 * The direct window toward node (core.h, dma_direct) carries one DMA
 * window: whether a borrow other than b of a device of self holds it.
 */
static int direct_holder(struct sio_registry *r, u32 self, u32 node,
			 const struct sio_borrow *b)
{
	u32 i;

	for (i = 0; i < r->max_borrows; i++) {
		const struct sio_borrow *o = sio_borrow_at(r, i);

		if (o != b && o->used && o->dma_direct && o->lender == self &&
		    o->borrower == node)
			return 1;
	}
	return 0;
}

/* EBUSY alone reads as "borrowed already": the lender says why. */
static void direct_refused(struct sio_core *c, u32 dev, u32 node)
{
	if (c->ops->refused)
		c->ops->refused(c->plat, dev, node,
				"the direct window toward it carries the DMA window of its borrow of another device here (one per pair of machines on this NTB); return that one first");
}

/* dma: the DMA window, which may be the lender's direct window. */
static int lender_addr_ok(struct sio_core *c, const struct sio_borrow *b,
			  u64 addr, u64 size, int dma)
{
	struct sio_registry *r = c->reg;
	const struct sio_node *n = sio_node(r, b->lender);
	u32 a;

	for (a = 0; a < n->nadapters && a < SIO_MAX_ADAPTERS; a++) {
		const struct sio_adapter *ad = &n->adapter[a];

		if (dma && sio_path_hops(r, b->lender, a, b->borrower) >= 0 &&
		    addr == direct_window(c, b->lender, a, size))
			return 0;
		if (sio_path_hops(r, b->lender, a, b->borrower) < 0 ||
		    !ad->slot_size || addr < ad->window_base ||
		    (addr - ad->window_base) % ad->slot_size ||
		    size > ad->window_size ||
		    addr - ad->window_base > ad->window_size - size)
			continue;
		return 0;
	}
	return -EPROTO;
}

static int map_bars(struct sio_core *c, struct sio_borrow *b,
		    const struct sio_parsed *grant)
{
	struct sio_adapter *ad =
		&sio_node(c->reg, b->borrower)->adapter[b->b_adapter];
	struct sio_nla bar, f;
	u32 pos = 0, count;
	int first;

	first = grant_ok(c->reg, b, grant);
	if (first)
		return first;
	while (sio_nla_next(grant->attrs, grant->attrs_len, &pos, &bar)) {
		u32 idx;
		u64 addr, size;

		if (bar.type != SIO_A_BAR)
			continue;
		if (sio_nla_find(&bar, SIO_A_INDEX, &f))
			return -EPROTO;
		idx = sio_nla_u32(&f);
		if (idx >= SIO_MAX_BARS || sio_nla_find(&bar, SIO_A_ADDR, &f))
			return -EPROTO;
		addr = sio_nla_u64(&f);
		if (sio_nla_find(&bar, SIO_A_SIZE, &f))
			return -EPROTO;
		size = sio_nla_u64(&f);
		first = sio_lut_map(c, b->borrower, b->b_adapter, size,
				    b->lender, addr, b->borrower, SIO_RID_CPU,
				    &count);
		if (first < 0)
			return first;
		b->bar_local[idx] = ad->window_base + (u64)first * ad->slot_size;
		b->b_lut_count += count;
	}
	return 0;
}

/*
 * The borrower's side of a window the lender mapped toward it: its own
 * inbound translation (separate registries; nothing to do otherwise).
 */
static int inbound(struct sio_core *c, struct sio_borrow *b, u32 kind,
		   u64 peer_addr, u64 local_addr, u64 size)
{
	int err;

	if (!c->ops->inbound_map)
		return 0;
	err = c->ops->inbound_map(c->plat, b->borrower, b->lender, kind, b->dev,
				  peer_addr, local_addr, size);
	if (!err)
		b->inbound |= (u8)(1u << kind);
	return err;
}

/*
 * Separate registries: the lender translates each BAR slot of ours onto
 * the device's BAR (MAP_BAR_WINDOW), as hardware does on its side.
 */
static int bar_windows(struct sio_core *c, u32 self, struct sio_borrow *b)
{
	const struct sio_device *d = sio_dev(c->reg, b->dev);
	u8 buf[SIO_PEER_MSG], repbuf[SIO_PEER_MSG];
	struct sio_parsed rep;
	struct sio_msg m;
	u32 i;
	int err;

	for (i = 0; i < SIO_MAX_BARS; i++) {
		if (!b->bar_local[i])
			continue;
		sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_MAP_BAR_WINDOW,
			     SIO_F_REQUEST, 0);
		sio_msg_put_u32(&m, SIO_A_DEV, d->fdid);
		sio_msg_put_u32(&m, SIO_A_NODE, self);
		sio_msg_put_u32(&m, SIO_A_INDEX, i);
		sio_msg_put_u64(&m, SIO_A_ADDR, b->bar_local[i]);
		sio_msg_put_u64(&m, SIO_A_SIZE, d->bar[i].size);
		err = sio_core_call(c, self, b->lender, &m, &rep, repbuf,
				    sizeof(repbuf));
		if (err)
			return err;
	}
	return 0;
}

static int borrow_conversation(struct sio_core *c, u32 self, u32 bidx)
{
	struct sio_borrow *b = sio_borrow_at(c->reg, bidx);
	u8 repbuf[1024];
	struct sio_parsed rep;
	int err;

	err = peer_call(c, self, b->lender, SIO_CMD_BORROW_REQ, b->dev, self,
			b->iova, b->iova_size, &rep, repbuf, sizeof(repbuf));
	if (err)
		return err;
	err = map_bars(c, b, &rep);
	if (!err && separate(c))
		err = bar_windows(c, self, b);
	if (err)
		return err;
	err = peer_call(c, self, b->lender, SIO_CMD_MAP_DMA_WINDOW, b->dev,
			self, b->iova, b->iova_size, &rep, repbuf,
			sizeof(repbuf));
	if (err)
		return err;
	if (!rep.present[SIO_A_ADDR] ||
	    lender_addr_ok(c, b, sio_nla_u64(&rep.tb[SIO_A_ADDR]),
			   b->iova_size, 1))
		return -EPROTO;
	b->dma_addr = sio_nla_u64(&rep.tb[SIO_A_ADDR]);
	err = inbound(c, b, SIO_INB_DMA, b->dma_addr, b->iova, b->iova_size);
	if (err)
		return err;
	err = peer_call(c, self, b->lender, SIO_CMD_MAP_MSI_WINDOW, b->dev,
			self, SIO_MSI_BASE, SIO_MSI_SIZE, &rep, repbuf,
			sizeof(repbuf));
	if (err)
		return err;
	if (!rep.present[SIO_A_ADDR] ||
	    lender_addr_ok(c, b, sio_nla_u64(&rep.tb[SIO_A_ADDR]),
			   SIO_MSI_SIZE, 0))
		return -EPROTO;
	b->msi_addr = sio_nla_u64(&rep.tb[SIO_A_ADDR]);
	return inbound(c, b, SIO_INB_MSI, b->msi_addr, SIO_MSI_BASE,
		       SIO_MSI_SIZE);
}

/* The DMA window a BORROW asks for, checked (see SIO_DMA_WINDOW_RAM). */
static int dma_window_size(struct sio_registry *r, u32 self,
			   const struct sio_parsed *p, u64 *size)
{
	u64 want = p->present[SIO_A_SIZE] ? sio_nla_u64(&p->tb[SIO_A_SIZE]) : 0;
	u64 ram = sio_node(r, self)->ram_size;

	if (!want) {
		*size = SIO_DMA_WINDOW_SIZE;
		return 0;
	}
	if (want == SIO_DMA_WINDOW_RAM) {
		for (want = SIO_PAGE; want < ram && want < SIO_IOVA_SIZE;)
			want <<= 1;
	}
	if (want < SIO_PAGE || (want & (want - 1)) || want > SIO_IOVA_SIZE)
		return -EINVAL;
	*size = want;
	return 0;
}

/*
 * Where the borrow's DMA window lies in self's IOVA space: where the
 * platform's IOMMU domain reserved it, else a range of the core's own.
 */
static int window_iova(struct sio_core *c, u32 self, struct sio_borrow *b,
		       u64 window)
{
	int err = -EOPNOTSUPP;

	if (c->ops->dma_window_iova && c->ops->dma_window_free)
		err = c->ops->dma_window_iova(c->plat, self, b->dev, window,
					      &b->iova);
	if (!err)
		b->iova_from = SIO_IOVA_PLAT;
	if (err != -EOPNOTSUPP)
		return err;
	return sio_range_alloc(&sio_node(c->reg, self)->iova, window, window,
			       &b->iova);
}

int sio_h_borrow(struct sio_core *c, u32 self, const struct sio_parsed *p,
		 struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p), ad, slot, req, err;
	struct sio_device *d;
	struct sio_borrow *b;
	struct sio_node *n = sio_node(r, self);
	u64 window;

	(void)rep;
	if (dev < 0)
		return dev;
	err = dma_window_size(r, self, p, &window);
	if (err)
		return err;
	d = sio_dev(r, (u32)dev);
	if (d->gone || !sio_node_up(r, d->node) || !sio_node_up(r, self))
		return -EHOSTDOWN;
	if (d->node == self)
		return -EINVAL;	/* the lender uses its device directly */
	if (d->borrowers >> self & 1)
		return -EBUSY;
	ad = sio_path_find(r, self, d->node);
	if (ad < 0)
		return ad;
	slot = sio_share_room(c, SIO_SHARE_BORROWS, self);
	if (slot < 0)
		return slot;
	slot = SIO_CLAIM_ENTRY(r, sio_borrow_at, max_borrows);
	if (slot < 0)
		return slot;
	b = sio_borrow_at(r, (u32)slot);
	/* The device's requests will arrive through our adapter. */
	req = sio_bitmap_alloc(&n->adapter[ad].reqs_in, 1);
	if (req < 0) {
		b->used = 0;
		return req;
	}
	b->dev = (u32)dev;
	b->borrower = (u16)self;
	b->lender = d->node;
	b->b_adapter = (u8)ad;
	b->b_req = req;
	b->l_req = b->l_lut = b->msi_lut = -1;
	err = window_iova(c, self, b, window);
	if (!err) {
		b->iova_size = window;
		sio_range_init(&b->window, b->iova, b->iova_size);
		err = borrow_conversation(c, self, (u32)slot);
	}
	if (err) {
		return_to_lender(c, self, (u32)slot);
		sio_borrow_release(c, (u32)slot, 1, 1);
		if (err != -EHOSTDOWN && err != -ENXIO)
			d->stats.denied++;
		return err;
	}
	d->borrowers |= 1ull << self;
	d->stats.borrows++;
	sio_event_dev(c, SIO_EV_BORROW, (u32)dev, "node", n->name);
	return 0;
}

/* Entries a dry run took, to be given back. */
struct sio_dry {
	struct sio_bitmap *map[SIO_MAX_BARS + 4];
	u32 first[SIO_MAX_BARS + 4];
	u32 n[SIO_MAX_BARS + 4];
	u32 count;
};

static int dry_luts(struct sio_dry *t, struct sio_adapter *ad, u64 len);
static int dry_take(struct sio_dry *t, struct sio_bitmap *map, u32 n);

/*
 * Separate registries: the lender's own record of a borrow, made by
 * BORROW_REQ once every check passed: the DMA and MSI window slots fit on
 * adapter ad, and the platform took the device from its driver.  Its
 * index, -EBUSY when node borrows dev already, or the refusal.
 */
static int lender_record(struct sio_core *c, u32 dev, u32 node, u32 ad,
			 u64 window, int bidx)
{
	struct sio_registry *r = c->reg;
	struct sio_adapter *la = &sio_node(r, sio_dev(r, dev)->node)->adapter[ad];
	struct sio_borrow *b;
	struct sio_dry t;
	int slot, err, direct;

	if (bidx >= 0)
		return -EBUSY;
	slot = SIO_FREE_ENTRY(r, sio_borrow_at, max_borrows);
	if (slot < 0)
		return slot;
	direct = direct_window(c, sio_dev(r, dev)->node, ad, window) != 0;
	/* Refused before anything is taken (map_direct checks again). */
	if (direct && direct_holder(r, sio_dev(r, dev)->node, node, NULL)) {
		direct_refused(c, dev, node);
		sio_dev(r, dev)->stats.denied++;
		return -EBUSY;
	}
	t.count = 0;
	err = dry_take(&t, &sio_node(r, sio_dev(r, dev)->node)->adapter[ad].reqs_out,
		       1);
	if (!err && !direct)
		err = dry_luts(&t, la, window);
	if (!err)
		err = msi_slots(la) <= SIO_MSI_SLOTS_MAX ?
		      dry_luts(&t, la, SIO_MSI_SIZE) : -EINVAL;
	if (!err)
		err = sio_lut_share_ok(c, sio_dev(r, dev)->node, ad, node,
				       (direct ? 0 :
					sio_lut_slots(c, sio_dev(r, dev)->node,
						      ad, window)) +
				       msi_slots(la));
	while (t.count--)
		sio_bitmap_free(t.map[t.count], t.first[t.count], t.n[t.count]);
	if (!err && c->ops->lend_claim)
		err = c->ops->lend_claim(c->plat, dev, node, 1);
	if (err) {
		/* -EINPROGRESS: asked again once claimed (core.h). */
		if (err != -EINPROGRESS)
			sio_dev(r, dev)->stats.denied++;
		return err;
	}
	b = sio_borrow_at(r, (u32)slot);
	sio_memset(b, 0, sizeof(*b));
	b->used = 1;
	b->dev = dev;
	b->borrower = (u16)node;
	b->lender = sio_dev(r, dev)->node;
	b->b_req = b->l_req = b->l_lut = b->msi_lut = -1;
	return slot;
}

/* Lender side of BORROW_REQ: policy, mode, requester entry; grant BARs. */
int sio_h_borrow_req(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p), node, ad, bidx, req, err;
	struct sio_device *d;
	struct sio_borrow *b;
	struct sio_route rt;
	u64 window;
	u32 i;

	if (dev < 0)
		return dev;
	node = sio_msg_node(r, p, SIO_A_NODE);
	if (node < 0)
		return node;
	d = sio_dev(r, (u32)dev);
	if (d->node != self || d->gone)
		return -ENXIO;
	if (!sio_node_up(r, (u32)node))
		return -EHOSTDOWN;
	err = lend_allows(d, (u32)node);
	if (err)
		return err;
	/* The DMA window the borrower will ask for, and nothing else. */
	window = p->present[SIO_A_SIZE] ? sio_nla_u64(&p->tb[SIO_A_SIZE]) : 0;
	if (window < SIO_PAGE || (window & (window - 1)) ||
	    window > SIO_IOVA_SIZE)
		return -EINVAL;
	ad = sio_path_find(r, self, (u32)node);
	if (ad < 0)
		return ad;
	/*
	 * The device's requests leave through our adapter and enter every
	 * switch on the way to the borrower.
	 */
	err = sio_path_route(r, self, (u32)ad, (u32)node, &rt);
	if (!err)
		err = sio_route_fits(r, &rt);
	if (err)
		return err;
	bidx = sio_borrow_find(r, (u32)dev, (u32)node);
	if (separate(c))
		bidx = lender_record(c, (u32)dev, (u32)node, (u32)ad, window,
				     bidx);
	if (bidx < 0)
		return bidx == -ENOENT ? -EPROTO : bidx;
	b = sio_borrow_at(r, (u32)bidx);
	req = sio_bitmap_alloc(&sio_node(r, self)->adapter[ad].reqs_out, 1);
	if (req < 0) {
		if (separate(c))
			sio_memset(b, 0, sizeof(*b));
		return req;
	}
	sio_route_account(r, &rt, 1);
	if (separate(c))
		d->borrowers |= 1ull << node;
	b->l_adapter = (u8)ad;
	b->l_req = req;
	b->l_window_shift = 0;
	while (window >> b->l_window_shift > 1)
		b->l_window_shift++;
	b->l_hops = (u8)rt.hops;
	for (i = 0; i < rt.hops; i++) {
		b->route_sw[i] = rt.sw[i];
		b->route_port[i] = rt.in_port[i];
	}
	sio_msg_put_u32(rep, SIO_A_RID, d->rid);
	for (i = 0; i < SIO_MAX_BARS; i++) {
		int nest;

		if (!d->bar[i].size)
			continue;
		nest = sio_msg_nest_start(rep, SIO_A_BAR);
		sio_msg_put_u32(rep, SIO_A_INDEX, i);
		sio_msg_put_u64(rep, SIO_A_ADDR, d->bar[i].addr);
		sio_msg_put_u64(rep, SIO_A_SIZE, d->bar[i].size);
		sio_msg_put_u32(rep, SIO_A_FLAGS, d->bar[i].flags);
		sio_msg_nest_end(rep, nest);
	}
	return rep->err;
}

static int dry_take(struct sio_dry *t, struct sio_bitmap *map, u32 n)
{
	int first = sio_bitmap_alloc(map, n);

	if (first < 0)
		return first;
	t->map[t->count] = map;
	t->first[t->count] = (u32)first;
	t->n[t->count++] = n;
	return 0;
}

/* The slots sio_lut_map would take for len bytes of ad's window. */
static int dry_luts(struct sio_dry *t, struct sio_adapter *ad, u64 len)
{
	if (len == 0 || len > ad->window_size)
		return len ? -ENOSPC : -EINVAL;
	return dry_take(t, &ad->luts, (u32)SIO_DIV_ROUND_UP(len, ad->slot_size));
}

/*
 * Whether what a borrow allocates fits, in the order the borrow takes it:
 * a requester entry on each side, the borrower's IOVA range, its window
 * slots for every BAR, the lender's for the DMA window and the one MSI
 * slot.  Everything is taken and given back under the caller's lock.
 */
static int borrow_fits(struct sio_core *c, u32 self, u32 dev, u32 b_ad,
		       u32 l_ad)
{
	struct sio_registry *r = c->reg;
	struct sio_device *d = sio_dev(r, dev);
	struct sio_node *bn = sio_node(r, self);
	struct sio_adapter *ba = &bn->adapter[b_ad];
	struct sio_adapter *la = &sio_node(r, d->node)->adapter[l_ad];
	struct sio_dry t;
	struct sio_route rt;
	u64 iova;
	u32 i;
	int err;

	t.count = 0;
	err = dry_take(&t, &ba->reqs_in, 1);
	/* Separate registries: the lender checks its side in BORROW_REQ. */
	if (!err && !separate(c))
		err = dry_take(&t, &la->reqs_out, 1);
	if (!err && !separate(c))
		err = sio_path_route(r, d->node, l_ad, self, &rt);
	if (!err && !separate(c))
		err = sio_route_fits(r, &rt);
	if (!err)
		err = sio_range_alloc(&bn->iova, SIO_DMA_WINDOW_SIZE,
				      SIO_DMA_WINDOW_SIZE, &iova);
	if (!err)
		sio_range_free(&bn->iova, iova);
	for (i = 0; !err && i < SIO_MAX_BARS; i++)
		if (d->bar[i].size)
			err = dry_luts(&t, ba, d->bar[i].size);
	if (!err && !separate(c))
		err = dry_luts(&t, la, SIO_DMA_WINDOW_SIZE);
	if (!err && !separate(c))
		err = SIO_DIV_ROUND_UP(SIO_MSI_SIZE, la->slot_size) == 1 ?
		      dry_luts(&t, la, SIO_MSI_SIZE) : -EINVAL;
	if (!err && !separate(c))
		err = sio_lut_share_ok(c, d->node, l_ad, self,
				       sio_lut_slots(c, d->node, l_ad,
						     SIO_DMA_WINDOW_SIZE) + 1);
	while (t.count--)
		sio_bitmap_free(t.map[t.count], t.first[t.count], t.n[t.count]);
	return err;
}

int sio_core_borrow_check(struct sio_core *c, u32 self, u32 dev)
{
	struct sio_registry *r = c->reg;
	struct sio_device *d;
	int b_ad, l_ad, err;

	if (dev >= r->ndevices || self >= r->nnodes)
		return -EINVAL;
	d = sio_dev(r, dev);
	if (d->gone || !sio_node_up(r, d->node) || !sio_node_up(r, self))
		return -EHOSTDOWN;
	if (d->node == self)
		return -EINVAL;
	if (d->borrowers >> self & 1)
		return -EBUSY;
	b_ad = sio_path_find(r, self, d->node);
	if (b_ad < 0)
		return b_ad;
	l_ad = sio_path_find(r, d->node, self);
	if (l_ad < 0)
		return l_ad;
	err = sio_share_room(c, SIO_SHARE_BORROWS, self);
	if (err < 0)
		return err;
	err = SIO_FREE_ENTRY(r, sio_borrow_at, max_borrows);
	if (err < 0)
		return err;
	err = lend_allows(d, self);
	if (!err)
		err = borrow_fits(c, self, dev, (u32)b_ad, (u32)l_ad);
	if (err)
		d->stats.denied++;	/* as the conversation counts it */
	return err;
}

/*
 * MAP_DMA_WINDOW on the direct window: the device's path to it, no slots.
 * It carries one DMA window toward a peer (its one translation leads to
 * that peer's RAM): a second borrow of that peer from here is refused.
 */
static int map_direct(struct sio_core *c, u32 self, struct sio_borrow *b,
		      u32 node, u64 size, struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	u64 addr = direct_window(c, self, b->l_adapter, size);
	int err;

	if (direct_holder(r, self, node, b)) {
		direct_refused(c, b->dev, node);
		return -EBUSY;
	}
	err = c->ops->dma_direct_map(c->plat, self, node,
				     sio_dev(r, b->dev)->rid, addr, size, 1);
	if (err)
		return err;
	b->dma_direct = 1;
	b->dma_addr = addr;
	return sio_msg_put_u64(rep, SIO_A_ADDR, addr);
}

/* Lender side of MAP_DMA_WINDOW / MAP_MSI_WINDOW for a borrow. */
int sio_h_map_window(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p), node, bidx, first;
	struct sio_borrow *b;
	struct sio_adapter *ad;
	u64 iova, size;
	u32 count;

	if (dev < 0)
		return dev;
	node = sio_msg_node(r, p, SIO_A_NODE);
	if (node < 0)
		return node;
	iova = sio_nla_u64(&p->tb[SIO_A_IOVA]);
	size = sio_nla_u64(&p->tb[SIO_A_SIZE]);
	/*
	 * What a borrower may ask for: the DMA window it announced in
	 * BORROW_REQ (as large as our window and free LUT slots allow:
	 * sio_lut_map answers ENOSPC beyond), exactly the MSI range for the
	 * MSI window.
	 */
	if (!size || size % SIO_PAGE || iova % SIO_PAGE || iova + size < iova ||
	    (p->cmd != SIO_CMD_MAP_DMA_WINDOW &&
	     (iova != SIO_MSI_BASE || size != SIO_MSI_SIZE)))
		return -EINVAL;
	bidx = sio_borrow_find(r, (u32)dev, (u32)node);
	if (bidx < 0 || sio_dev(r, (u32)dev)->node != self)
		return -ENXIO;
	b = sio_borrow_at(r, (u32)bidx);
	if (b->l_req < 0)
		return -EPROTO;
	if (p->cmd == SIO_CMD_MAP_DMA_WINDOW ? b->l_lut >= 0 || b->dma_direct :
					       b->msi_lut >= 0)
		return -EBUSY;
	/*
	 * Separate registries: the window's place in the borrower's IOVA
	 * space, as the borrower said it, for dma_window here too.
	 */
	if (p->cmd == SIO_CMD_MAP_DMA_WINDOW && separate(c)) {
		b->iova = iova;
		b->iova_size = size;
		b->iova_from = SIO_IOVA_PEER;
	}
	if (p->cmd == SIO_CMD_MAP_DMA_WINDOW &&
	    size != 1ull << b->l_window_shift)
		return -EINVAL;	/* not the window BORROW_REQ announced */
	if (p->cmd == SIO_CMD_MAP_DMA_WINDOW &&
	    direct_window(c, self, b->l_adapter, size))
		return map_direct(c, self, b, (u32)node, size, rep);
	first = sio_lut_share_ok(c, self, b->l_adapter, (u32)node,
				 sio_lut_slots(c, self, b->l_adapter, size));
	if (first)
		return first;
	first = sio_lut_map(c, self, b->l_adapter, size, (u32)node, iova, self,
			    sio_dev(r, (u32)dev)->rid, &count);
	if (first < 0)
		return first;
	ad = &sio_node(r, self)->adapter[b->l_adapter];
	if (p->cmd == SIO_CMD_MAP_DMA_WINDOW) {
		b->l_lut = first;
		b->l_lut_count = count;
		b->dma_addr = ad->window_base + (u64)first * ad->slot_size;
	} else if (count > SIO_MSI_SLOTS_MAX) {
		sio_lut_unmap(c, self, b->l_adapter, first, count);
		return -EINVAL;
	} else {
		b->msi_lut = first;
		b->msi_lut_count = (u8)count;
		b->msi_addr = ad->window_base + (u64)first * ad->slot_size;
	}
	return sio_msg_put_u64(rep, SIO_A_ADDR,
			       ad->window_base + (u64)first * ad->slot_size);
}

int sio_node_window_ok(struct sio_registry *r, u32 node, u64 addr,
		       u64 size)
{
	const struct sio_node *n = sio_node(r, node);
	u32 a;

	for (a = 0; a < n->nadapters && a < SIO_MAX_ADAPTERS; a++) {
		const struct sio_adapter *ad = &n->adapter[a];

		if (ad->slot_size && addr >= ad->window_base &&
		    (addr - ad->window_base) % ad->slot_size == 0 &&
		    size <= ad->window_size &&
		    addr - ad->window_base <= ad->window_size - size)
			return 0;
	}
	return -EINVAL;
}

/*
 * Lender side of MAP_BAR_WINDOW (separate registries): the borrower's
 * slot for BAR INDEX of a device it borrows from us is translated onto
 * the BAR, once, with exactly the BAR's size.
 */
int sio_h_map_bar_window(struct sio_core *c, u32 self,
			 const struct sio_parsed *p, struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p), node, bidx, err;
	struct sio_device *d;
	struct sio_borrow *b;
	u64 addr, size;
	u32 i;

	(void)rep;
	if (!separate(c))
		return -EOPNOTSUPP;
	if (p->from == self)
		return -EPERM;	/* a peer's request only */
	if (dev < 0)
		return dev;
	node = sio_msg_node(r, p, SIO_A_NODE);
	if (node < 0)
		return node;
	i = sio_nla_u32(&p->tb[SIO_A_INDEX]);
	addr = sio_nla_u64(&p->tb[SIO_A_ADDR]);
	size = sio_nla_u64(&p->tb[SIO_A_SIZE]);
	d = sio_dev(r, (u32)dev);
	bidx = sio_borrow_find(r, (u32)dev, (u32)node);
	if (d->node != self || bidx < 0)
		return -ENXIO;
	b = sio_borrow_at(r, (u32)bidx);
	if (b->l_req < 0)
		return -EPROTO;
	if (i >= SIO_MAX_BARS || !d->bar[i].size || size != d->bar[i].size ||
	    sio_node_window_ok(r, (u32)node, addr, size))
		return -EINVAL;
	if (b->bar_inbound >> i & 1)
		return -EBUSY;
	if (c->ops->inbound_map) {
		err = c->ops->inbound_map(c->plat, self, (u32)node,
					  SIO_INB_BAR, (u32)dev, addr,
					  d->bar[i].addr, size);
		if (err)
			return err;
	}
	b->bar_local[i] = addr;
	b->bar_inbound |= (u8)(1u << i);
	return 0;
}

int sio_h_return_req(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     struct sio_msg *rep)
{
	int dev = sio_msg_dev(c->reg, p), node, bidx;

	(void)rep;
	if (dev < 0)
		return dev;
	node = sio_msg_node(c->reg, p, SIO_A_NODE);
	if (node < 0)
		return node;
	bidx = sio_borrow_find(c->reg, (u32)dev, (u32)node);
	if (bidx < 0 || sio_dev(c->reg, (u32)dev)->node != self)
		return -ENXIO;
	/*
	 * Separate registries: the record is the lender's alone, and goes
	 * with its interrupt routing; shared, the borrower frees it.
	 */
	if (separate(c)) {
		sio_borrow_release(c, (u32)bidx, 1, 0);
		sio_dev(c->reg, (u32)dev)->stats.returns++;
		sio_event_dev(c, SIO_EV_RETURN, (u32)dev, "node",
			      sio_node(c->reg, (u32)node)->name);
		return 0;
	}
	release_lender_part(c, sio_borrow_at(c->reg, (u32)bidx));
	return 0;
}

/* Borrower gives a device back (return, reclaim or lender loss). */
static int do_return(struct sio_core *c, u32 self, u32 dev, u32 kind)
{
	int bidx = sio_borrow_find(c->reg, dev, self);

	if (bidx < 0 || !(sio_dev(c->reg, dev)->borrowers >> self & 1))
		return -EINVAL;	/* that node does not borrow the device */
	sio_segdma_release_dev(c, dev, self);
	/* The peer mappings this node asked for (not within a request). */
	if (separate(c) && kind == SIO_EV_RETURN)
		sio_peer_sep_forget(c, self, dev);
	/*
	 * A reclaim is the lender's request: with separate registries the
	 * lender releases its half itself (a request never sends).
	 */
	if (!separate(c) || kind != SIO_EV_RECLAIM)
		return_to_lender(c, self, (u32)bidx);
	sio_borrow_release(c, (u32)bidx, 1, 1);
	if (kind == SIO_EV_RETURN)
		sio_dev(c->reg, dev)->stats.returns++;
	else
		sio_dev(c->reg, dev)->stats.reclaims++;
	sio_event_dev(c, kind, dev, "node", sio_node(c->reg, self)->name);
	return 0;
}

int sio_h_return(struct sio_core *c, u32 self, const struct sio_parsed *p,
		 struct sio_msg *rep)
{
	int dev = sio_msg_dev(c->reg, p);

	(void)rep;
	if (dev < 0)
		return dev;
	return do_return(c, self, (u32)dev, SIO_EV_RETURN);
}

int sio_h_reclaim_req(struct sio_core *c, u32 self, const struct sio_parsed *p,
		      struct sio_msg *rep)
{
	int dev = sio_msg_dev(c->reg, p);

	(void)rep;
	if (dev < 0)
		return dev;
	return do_return(c, self, (u32)dev, SIO_EV_RECLAIM);
}

int sio_h_reclaim(struct sio_core *c, u32 self, const struct sio_parsed *p,
		  struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p), asker = sio_msg_node(r, p, SIO_A_NODE);
	struct sio_device *d;
	u32 n;

	(void)rep;
	if (dev < 0)
		return dev;
	if (asker < 0)
		return asker;
	d = sio_dev(r, (u32)dev);
	if ((u32)asker != d->node || self != d->node)
		return -EACCES;
	for (n = 0; n < r->nnodes; n++) {
		u8 repbuf[SIO_PEER_MSG];
		struct sio_parsed prep;

		if (!(d->borrowers >> n & 1))
			continue;
		/*
		 * A borrower that cannot answer is revoked on our side alone;
		 * with separate registries our side is always ours to undo.
		 */
		if ((peer_call(c, self, n, SIO_CMD_RECLAIM_REQ, (u32)dev, n, 0,
			       0, &prep, repbuf, sizeof(repbuf)) ||
		     separate(c)) &&
		    (d->borrowers >> n & 1)) {
			int bidx = sio_borrow_find(r, (u32)dev, n);

			sio_segdma_release_dev(c, (u32)dev, n);
			if (bidx >= 0)
				sio_borrow_release(c, (u32)bidx, 1, 1);
			d->stats.reclaims++;
			sio_event_dev(c, SIO_EV_RECLAIM, (u32)dev, "node",
				      sio_node(r, n)->name);
		}
	}
	return 0;
}

int sio_h_cfg(struct sio_core *c, u32 self, const struct sio_parsed *p,
	      struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p), asker = sio_msg_node(r, p, SIO_A_NODE);
	struct sio_device *d;
	u64 off, len;
	u8 *data;
	int err;

	if (dev < 0)
		return dev;
	if (asker < 0)
		return asker;
	d = sio_dev(r, (u32)dev);
	if (d->node != self || d->gone)
		return -ENXIO;
	off = sio_nla_u64(&p->tb[SIO_A_OFFSET]);
	if (p->cmd == SIO_CMD_CFG_WRITE) {
		if ((u32)asker != d->node && !(d->borrowers >> asker & 1))
			return -EACCES;
		len = p->tb[SIO_A_DATA].len;
	} else {
		len = sio_nla_u64(&p->tb[SIO_A_SIZE]);
	}
	if (off > d->config_size || len > d->config_size - off)
		return -EINVAL;
	if (p->cmd == SIO_CMD_CFG_WRITE) {
		/* MSI / MSI-X enables are rewritten to reach the asker. */
		err = sio_msi_cfg_write(c, (u32)dev, (u32)asker, (u32)off,
					p->tb[SIO_A_DATA].data, (u32)len);
		if (!err)
			d->stats.cfg_writes++;
		return err;
	}
	/* Straight into the reply: kernel stacks have no room for 4 KiB. */
	data = sio_msg_reserve(rep, SIO_A_DATA, (u32)len);
	if (!data)
		return rep->err;
	err = c->ops->cfg_access(c->plat, (u32)dev, (u32)off, data, (u32)len,
				 0);
	if (err)
		return err;
	sio_msi_cfg_read(c, (u32)dev, (u32)asker, (u32)off, data, (u32)len);
	d->stats.cfg_reads++;
	return 0;
}
