// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Link failures and multipath (SmartIO section 6.3).  A node with two
 * adapters reaches a lender over two paths; when the link of the one its
 * borrow uses goes down, the borrow's mappings on that node are made
 * again over the other: the device's requester entry in the incoming
 * table and the LUT slots that map its BARs for the CPUs move to the
 * adapter sio_path_find now chooses, programmed there before the old
 * ones are cleared, so the device never loses its way in and the
 * borrower's BAR mappings stay valid.  The device-side addresses (DMA
 * and MSI windows, on the lender's adapter) do not change, so a driver's
 * queues and I/O in flight are untouched: the platform's lock orders the
 * move between two transactions of the device.
 *
 * A borrow whose lender's adapter no longer reaches the borrower, or
 * that finds no other path, is released as if its lender were lost:
 * every entry it held comes back and the borrower sees EHOSTDOWN.  A
 * node's attachments of other nodes' segments move or end the same way
 * (seg_attach.c).
 */
#include "core_int.h"

static void link_event(struct sio_core *c, u32 kind, u32 node, u32 adapter)
{
	struct sio_node *n = sio_node(c->reg, node);

	sio_event_about(c, kind, "nodes/", n->name, NULL, "adapter",
			n->adapter[adapter].name);
}

/* The BAR slots of the borrow on adapter `ad` of the borrower. */
static void unmap_bars(struct sio_core *c, struct sio_borrow *b, u32 ad,
		       const u64 *local)
{
	struct sio_adapter *a = &sio_node(c->reg, b->borrower)->adapter[ad];
	struct sio_device *d = sio_dev(c->reg, b->dev);
	u32 i;

	for (i = 0; i < SIO_MAX_BARS; i++)
		if (local[i])
			sio_lut_unmap(c, b->borrower, ad,
				      (s32)((local[i] - a->window_base) /
					    a->slot_size),
				      (u32)SIO_DIV_ROUND_UP(d->bar[i].size,
							    a->slot_size));
}

/*
 * The borrower's half onto adapter `to`: everything is taken there first;
 * on a shortage nothing has changed (-ENOSPC).
 */
static int move_borrower(struct sio_core *c, struct sio_borrow *b, u32 to)
{
	struct sio_node *n = sio_node(c->reg, b->borrower);
	struct sio_adapter *na = &n->adapter[to];
	struct sio_device *d = sio_dev(c->reg, b->dev);
	u64 local[SIO_MAX_BARS] = { 0 };
	u32 i, count, total = 0;
	int req, first;

	req = sio_bitmap_alloc(&na->reqs_in, 1);
	if (req < 0)
		return req;
	for (i = 0; i < SIO_MAX_BARS; i++) {
		if (!b->bar_local[i])
			continue;
		first = sio_lut_map(c, b->borrower, to, d->bar[i].size,
				    b->lender, d->bar[i].addr, b->borrower,
				    SIO_RID_CPU, &count);
		if (first < 0) {
			unmap_bars(c, b, to, local);
			sio_bitmap_free(&na->reqs_in, (u32)req, 1);
			return first;
		}
		local[i] = na->window_base + (u64)first * na->slot_size;
		total += count;
	}
	unmap_bars(c, b, b->b_adapter, b->bar_local);
	sio_bitmap_free(&n->adapter[b->b_adapter].reqs_in, (u32)b->b_req, 1);
	b->b_adapter = (u8)to;
	b->b_req = req;
	b->b_lut_count = total;
	for (i = 0; i < SIO_MAX_BARS; i++)
		b->bar_local[i] = local[i];
	return 0;
}

/*
 * The switches the device's requests cross may change with the path: the
 * entries of the old route go back, those of the new one are taken.
 */
static int reroute_lender(struct sio_registry *r, struct sio_borrow *b)
{
	struct sio_route old, rt;
	u32 i;
	int err;

	err = sio_path_route(r, b->lender, b->l_adapter, b->borrower, &rt);
	if (err)
		return err;
	old.hops = b->l_hops;
	for (i = 0; i < SIO_MAX_HOPS; i++) {
		old.sw[i] = b->route_sw[i];
		old.in_port[i] = b->route_port[i];
	}
	if (rt.hops == old.hops &&
	    !sio_memcmp(rt.sw, old.sw, rt.hops) &&
	    !sio_memcmp(rt.in_port, old.in_port, rt.hops))
		return 0;
	sio_route_account(r, &old, 0);
	err = sio_route_fits(r, &rt);
	if (err) {
		sio_route_account(r, &old, 1);
		return err;
	}
	sio_route_account(r, &rt, 1);
	b->l_hops = (u8)rt.hops;
	for (i = 0; i < rt.hops; i++) {
		b->route_sw[i] = rt.sw[i];
		b->route_port[i] = rt.in_port[i];
	}
	return 0;
}

static void lose_borrow(struct sio_core *c, u32 bidx)
{
	struct sio_borrow *b = sio_borrow_at(c->reg, bidx);
	u32 dev = b->dev, borrower = b->borrower;

	sio_segdma_release_dev(c, dev, borrower);
	sio_borrow_release(c, bidx, 1, 1);
	sio_dev(c->reg, dev)->stats.reclaims++;
	sio_event_about(c, SIO_EV_RECLAIM, "dev/", sio_dev(c->reg, dev)->name,
			NULL, "node", sio_node(c->reg, borrower)->name);
}

/* One borrow after a link went down: kept as is, moved, or lost. */
static void recheck_borrow(struct sio_core *c, u32 bidx)
{
	struct sio_registry *r = c->reg;
	struct sio_borrow *b = sio_borrow_at(r, bidx);
	char obj[SIO_EVENT_OBJ], args[SIO_EVENT_ARGS];
	struct sio_strbuf sb;
	int to;

	if (sio_path_hops(r, b->lender, b->l_adapter, b->borrower) < 0 ||
	    reroute_lender(r, b)) {
		lose_borrow(c, bidx);
		return;
	}
	if (sio_path_hops(r, b->borrower, b->b_adapter, b->lender) >= 0)
		return;
	to = sio_path_find(r, b->borrower, b->lender);
	if (to < 0 || move_borrower(c, b, (u32)to)) {
		lose_borrow(c, bidx);
		return;
	}
	sio_sb_init(&sb, obj, sizeof(obj));
	sio_sb_str(&sb, "dev/");
	sio_sb_str(&sb, sio_dev(r, b->dev)->name);
	sio_sb_init(&sb, args, sizeof(args));
	sio_sb_str(&sb, "node=");
	sio_sb_str(&sb, sio_node(r, b->borrower)->name);
	sio_sb_str(&sb, " adapter=");
	sio_sb_str(&sb, sio_node(r, b->borrower)->adapter[to].name);
	sio_event_emit(c, SIO_EV_FAILOVER, obj, args);
}

int sio_core_link_set(struct sio_core *c, u32 node, u32 adapter, int up)
{
	struct sio_registry *r = c->reg;
	struct sio_adapter *ad;
	u32 i;

	if (node >= r->nnodes)
		return -ENOENT;
	if (adapter >= sio_node(r, node)->nadapters ||
	    adapter >= SIO_MAX_ADAPTERS)
		return -ENODEV;
	ad = &sio_node(r, node)->adapter[adapter];
	if (!ad->present)
		return -ENODEV;
	if (!ad->link_up == !up)
		return 0;
	ad->link_up = up ? 1 : 0;
	link_event(c, up ? SIO_EV_LINK_UP : SIO_EV_LINK_DOWN, node, adapter);
	if (up)
		return 0;	/* new borrows may choose it again */
	for (i = 0; i < r->max_borrows; i++) {
		struct sio_borrow *b = sio_borrow_at(r, i);

		/* Complete borrows only: one being made is the borrow's own. */
		if (b->used && b->l_req >= 0 && b->b_req >= 0)
			recheck_borrow(c, i);
	}
	sio_attach_link_lost(c);
	return 0;
}
