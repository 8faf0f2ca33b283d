// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Repair after a process died inside the simulated fabric's lock.  In the
 * simulator one process runs a whole node-to-node conversation under that
 * lock, so a SIGKILL can land between "LUT slots taken" and "record
 * written", or half way through giving them back.  The kernel core never
 * stops half way, so only the simulator calls this.
 *
 * The records (borrows, segment attachments, segment and peer device
 * windows) say what is in use: every allocation no record names is given
 * back, every one a record names is marked taken, and each segment's
 * attach mask is rebuilt from the attachments.  A record left half filled
 * by the dead process stays; it goes when that process's node is declared
 * down, as any other of its records.
 */
#include "core_int.h"

/* The tables of an adapter a record can name entries of. */
enum sio_tab { SIO_TAB_LUTS, SIO_TAB_REQ_IN, SIO_TAB_REQ_OUT };

/* One run of LUT slots or requester entries named by a record. */
struct sio_ref {
	u32 node, adapter;
	s32 first;
	u32 count;
	u32 tab;	/* enum sio_tab */
};

typedef int (*sio_ref_fn)(struct sio_core *c, const struct sio_ref *ref,
			  void *arg);

static int visit(struct sio_core *c, sio_ref_fn fn, void *arg, u32 node,
		 u32 adapter, s32 first, u32 count)
{
	struct sio_ref ref = { node, adapter, first, count, SIO_TAB_LUTS };

	if (first < 0 || !count)
		return 0;
	return fn(c, &ref, arg);
}

static int borrow_bar_luts(struct sio_core *c, const struct sio_borrow *b,
			   sio_ref_fn fn, void *arg)
{
	const struct sio_adapter *ad =
		&sio_node(c->reg, b->borrower)->adapter[b->b_adapter];
	const struct sio_device *d = sio_dev(c->reg, b->dev);
	u32 i;
	int hit;

	for (i = 0; i < SIO_MAX_BARS; i++) {
		if (!b->bar_local[i] || b->bar_local[i] < ad->window_base)
			continue;
		hit = visit(c, fn, arg, b->borrower, b->b_adapter,
			    (s32)((b->bar_local[i] - ad->window_base) /
				  ad->slot_size),
			    (u32)SIO_DIV_ROUND_UP(d->bar[i].size,
						  ad->slot_size));
		if (hit)
			return hit;
	}
	return 0;
}

/*
 * A borrow holds one entry of the borrower adapter's incoming table (the
 * device's requests arrive there) and one of the lender adapter's
 * outgoing table (they leave there).
 */
static int borrow_reqs(struct sio_core *c, const struct sio_borrow *b,
		       sio_ref_fn fn, void *arg)
{
	struct sio_ref in = { b->borrower, b->b_adapter, b->b_req, 1,
			      SIO_TAB_REQ_IN };
	struct sio_ref out = { b->lender, b->l_adapter, b->l_req, 1,
			       SIO_TAB_REQ_OUT };

	return (in.first >= 0 && fn(c, &in, arg)) ||
	       (out.first >= 0 && fn(c, &out, arg));
}

/* The LUT runs of a borrow: its BARs', its DMA window's, its MSI's. */
static int borrow_luts(struct sio_core *c, const struct sio_borrow *b,
		       sio_ref_fn fn, void *arg)
{
	return borrow_bar_luts(c, b, fn, arg) ||
	       visit(c, fn, arg, b->lender, b->l_adapter, b->l_lut,
		     b->l_lut_count) ||
	       visit(c, fn, arg, b->lender, b->l_adapter, b->msi_lut,
		     b->msi_lut_count);
}

/*
 * Calls fn on every LUT run (luts) or requester entry (!luts) a record
 * names; stops at a non-zero answer.  Only borrows hold requester
 * entries.
 */
static int each_ref(struct sio_core *c, int luts, sio_ref_fn fn, void *arg)
{
	struct sio_registry *r = c->reg;
	u32 i;
	int hit = 0;

	for (i = 0; i < r->max_borrows && !hit; i++) {
		const struct sio_borrow *b = sio_borrow_at(r, i);

		if (b->used)
			hit = luts ? borrow_luts(c, b, fn, arg) :
				     borrow_reqs(c, b, fn, arg);
	}
	for (i = 0; luts && i < r->max_attach && !hit; i++) {
		const struct sio_attach *a = sio_attach_at(r, i);

		if (a->used)
			hit = visit(c, fn, arg, a->node, a->adapter, a->lut,
				    a->lut_count);
	}
	for (i = 0; luts && i < r->max_segdma && !hit; i++) {
		const struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used && (m->kind == SIO_SEGDMA_WINDOW ||
				m->kind == SIO_SEGDMA_LENDER))
			hit = visit(c, fn, arg, sio_dev(r, m->dev)->node,
				    m->adapter, m->lut, m->lut_count);
	}
	for (i = 0; luts && i < r->max_peermap && !hit; i++) {
		const struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used)
			hit = visit(c, fn, arg, sio_dev(r, m->dev)->node,
				    m->adapter, m->lut, m->lut_count);
	}
	return hit;
}

static struct sio_bitmap *tab_map(struct sio_adapter *ad, u32 tab)
{
	if (tab == SIO_TAB_LUTS)
		return &ad->luts;
	return tab == SIO_TAB_REQ_IN ? &ad->reqs_in : &ad->reqs_out;
}

static struct sio_bitmap *ref_map(struct sio_core *c,
				  const struct sio_ref *ref)
{
	if (ref->node >= c->reg->nnodes || ref->adapter >= SIO_MAX_ADAPTERS)
		return NULL;
	return tab_map(&sio_node(c->reg, ref->node)->adapter[ref->adapter],
		       ref->tab);
}

/* Pass 1: what a record names is taken. */
static int mark_taken(struct sio_core *c, const struct sio_ref *ref,
		      void *arg)
{
	struct sio_bitmap *b = ref_map(c, ref);
	u32 i, slot;

	(void)arg;
	if (!b)
		return 0;
	for (i = 0; i < ref->count; i++) {
		slot = (u32)ref->first + i;
		if (slot < b->reserved || slot >= b->total ||
		    sio_bitmap_test(b, slot))
			continue;
		b->map[slot / 64] |= 1ull << (slot % 64);
		b->used++;
	}
	return 0;
}

struct sio_probe {
	u32 node, adapter, slot, tab;
};

static int names_slot(struct sio_core *c, const struct sio_ref *ref,
		      void *arg)
{
	const struct sio_probe *p = arg;

	(void)c;
	return ref->tab == p->tab && ref->node == p->node &&
	       ref->adapter == p->adapter && p->slot >= (u32)ref->first &&
	       p->slot - (u32)ref->first < ref->count;
}

/* Pass 2: a taken entry no record names goes back (and its LUT is cleared). */
static u32 free_unnamed(struct sio_core *c, u32 tab)
{
	int luts = tab == SIO_TAB_LUTS;
	struct sio_registry *r = c->reg;
	struct sio_probe p;
	struct sio_bitmap *b;
	u32 freed = 0;

	p.tab = tab;
	for (p.node = 0; p.node < r->nnodes; p.node++) {
		for (p.adapter = 0; p.adapter < SIO_MAX_ADAPTERS;
		     p.adapter++) {
			if (!sio_node(r, p.node)->adapter[p.adapter].present)
				continue;
			b = tab_map(&sio_node(r, p.node)->adapter[p.adapter],
				    tab);
			for (p.slot = b->reserved; p.slot < b->total;
			     p.slot++) {
				if (!sio_bitmap_test(b, p.slot))
					continue;
				if (each_ref(c, luts, names_slot, &p))
					continue;
				if (luts)
					c->ops->lut_clear(c->plat, p.node,
							  p.adapter, p.slot);
				sio_bitmap_free(b, p.slot, 1);
				freed++;
			}
		}
	}
	return freed;
}

/* Attach masks: exactly the nodes with an attachment record. */
static u32 rebuild_attach_masks(struct sio_core *c)
{
	struct sio_registry *r = c->reg;
	u32 i, fixed = 0;

	for (i = 0; i < r->max_segments; i++) {
		struct sio_segment *s = sio_seg(r, i);
		u64 mask = 0;
		u32 peer;

		if (!s->used)
			continue;
		for (peer = 0; peer < r->nnodes && peer < 64; peer++)
			if (sio_attach_find(r, i, peer) >= 0)
				mask |= 1ull << peer;
		if (mask != s->attached) {
			s->attached = mask;
			fixed++;
		}
	}
	return fixed;
}

/* Adds switch s's hop of every borrow's route to its port counts. */
static void count_switch(struct sio_registry *r, u32 s)
{
	struct sio_route one;
	u32 i, h;

	one.hops = 1;
	for (i = 0; i < r->max_borrows; i++) {
		const struct sio_borrow *b = sio_borrow_at(r, i);

		if (!b->used || b->l_req < 0)
			continue;
		for (h = 0; h < b->l_hops && h < SIO_MAX_HOPS; h++) {
			if (b->route_sw[h] != s)
				continue;
			one.sw[0] = (u8)s;
			one.in_port[0] = b->route_port[h];
			sio_route_account(r, &one, 1);
		}
	}
}

/* Switch ports' requester counts: exactly what the borrows' routes hold. */
static u32 recount_switches(struct sio_core *c)
{
	struct sio_registry *r = c->reg;
	u32 out[SIO_MAX_SWITCH_PORTS], in[SIO_MAX_SWITCH_PORTS];
	u32 s, p, fixed = 0;

	for (s = 0; s < r->nswitches; s++) {
		struct sio_switch *sw = sio_switch_at(r, s);

		for (p = 0; p < SIO_MAX_SWITCH_PORTS; p++) {
			out[p] = sw->port[p].out_used;
			in[p] = sw->port[p].in_used;
			sw->port[p].out_used = 0;
			sw->port[p].in_used = 0;
		}
		count_switch(r, s);
		for (p = 0; p < SIO_MAX_SWITCH_PORTS; p++)
			fixed += (out[p] != sw->port[p].out_used) +
				 (in[p] != sw->port[p].in_used);
	}
	return fixed;
}

u32 sio_core_repair(struct sio_core *c)
{
	u32 fixed;

	each_ref(c, 1, mark_taken, NULL);
	each_ref(c, 0, mark_taken, NULL);
	fixed = free_unnamed(c, SIO_TAB_LUTS);
	fixed += free_unnamed(c, SIO_TAB_REQ_IN);
	fixed += free_unnamed(c, SIO_TAB_REQ_OUT);
	fixed += recount_switches(c);
	return fixed + rebuild_attach_masks(c);
}
