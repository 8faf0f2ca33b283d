// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "registry.h"

static u64 table_bytes(u64 count, u64 elem)
{
	return SIO_ALIGN_UP(count * elem, 64);
}

/*
 * Table offsets from the counts in r (header up to max_peermap): the one
 * layout both the builder and sio_registry_check use.  Counts are at most
 * 2^32 and records smaller than 2^16 bytes, so no sum overflows.
 */
static u64 layout_tables(struct sio_registry *r)
{
	u64 off = SIO_ALIGN_UP(sizeof(*r), 64);

	r->nodes_off = off;
	off += table_bytes(r->nnodes, sizeof(struct sio_node));
	r->devices_off = off;
	off += table_bytes(r->ndevices, sizeof(struct sio_device));
	r->borrows_off = off;
	off += table_bytes(r->max_borrows, sizeof(struct sio_borrow));
	r->segments_off = off;
	off += table_bytes(r->max_segments, sizeof(struct sio_segment));
	r->attach_off = off;
	off += table_bytes(r->max_attach, sizeof(struct sio_attach));
	r->segdma_off = off;
	off += table_bytes(r->max_segdma, sizeof(struct sio_segdma));
	r->events_off = off;
	off += table_bytes(SIO_EVENT_RING, sizeof(struct sio_event));
	r->peermap_off = off;
	off += table_bytes(r->max_peermap, sizeof(struct sio_peermap));
	r->switches_off = off;
	off += table_bytes(r->nswitches, sizeof(struct sio_switch));
	r->mcast_off = off;
	off += table_bytes(r->max_mcast, sizeof(struct sio_mcast));
	return off;
}

static int layout(struct sio_registry *r, const struct sio_topology *t,
		  const struct sio_reg_limits *lim, u64 *total)
{
	u32 i;

	if (t->nnodes == 0 || t->nnodes > SIO_MAX_NODES ||
	    t->ndevices > 0xfffffu || t->nswitches > SIO_MAX_SWITCHES ||
	    (t->nswitches && !t->switches))
		return -E2BIG;
	r->nnodes = t->nnodes;
	r->nswitches = t->nswitches;
	r->ndevices = t->ndevices;
	r->max_borrows = lim->max_borrows;
	r->max_segments = lim->max_segments;
	r->max_attach = lim->max_attach;
	r->max_segdma = lim->max_segdma;
	r->max_peermap = lim->max_peermap;
	r->max_mcast = 0;
	for (i = 0; i < t->nswitches; i++) {
		if (t->switches[i].multicast > SIO_MAX_MCAST - r->max_mcast)
			return -E2BIG;
		r->max_mcast += t->switches[i].multicast;
	}
	*total = layout_tables(r);
	return 0;
}

u64 sio_registry_size(const struct sio_topology *t,
		      const struct sio_reg_limits *lim)
{
	struct sio_registry tmp;
	u64 total;

	sio_memset(&tmp, 0, sizeof(tmp));
	if (layout(&tmp, t, lim, &total))
		return 0;
	return total;
}

/*
 * A link's generation and width (link_speed_ok) and its chip's latency,
 * 0 taking the defaults of topology.h.
 */
static int link_speed(u32 gen, u32 width, u32 lat, u32 def_lat, u8 *g,
		      u8 *w, u32 *l)
{
	*g = (u8)(gen ? gen : SIO_LINK_GEN);
	*w = (u8)(width ? width : SIO_LINK_WIDTH);
	*l = lat ? lat : def_lat;
	return gen > SIO_LINK_GEN_MAX || width > SIO_LINK_WIDTH_MAX ||
	       *l > SIO_LATENCY_MAX_NS || !sio_link_speed_ok(*g, *w) ?
	       -EINVAL : 0;
}

static int init_node(struct sio_registry *r, u32 i,
		     const struct sio_topology *t)
{
	const struct sio_topo_node *tn = &t->nodes[i];
	struct sio_node *n = sio_node(r, i);
	u32 a;
	int err;

	sio_strlcpy(n->name, tn->name, sizeof(n->name));
	n->id = tn->id;
	n->present = 1;
	n->state = SIO_NODE_DOWN;
	n->ram_size = tn->ram;
	/* Above the BAR base, RAM would alias device memory. */
	if (tn->ram > SIO_RAM_MAX)
		return -EINVAL;
	sio_range_init(&n->ram, SIO_RAM_BASE, tn->ram);
	sio_range_init(&n->iova, SIO_IOVA_BASE, SIO_IOVA_SIZE);
	err = sio_bitmap_init(&n->vectors, SIO_MSI_VECTORS, 0);
	if (err)
		return err;
	for (a = 0; a < t->nadapters; a++) {
		const struct sio_topo_adapter *ta = &t->adapters[a];
		struct sio_adapter *ad;

		if (ta->node != i)
			continue;
		if (n->nadapters == SIO_MAX_ADAPTERS || ta->luts == 0 ||
		    ta->window / ta->luts < SIO_PAGE ||
		    ta->window > SIO_WINDOW_STRIDE)
			return -EINVAL;
		ad = &n->adapter[n->nadapters];
		sio_strlcpy(ad->name, ta->name, sizeof(ad->name));
		ad->present = 1;
		ad->link_up = 1;
		/* NTB functions sit on bus 0xfe of their host, one per slot. */
		ad->rid = (u16)(0xfe00u | (n->nadapters << 3));
		ad->peers = ta->peers;
		err = link_speed(ta->gen, ta->width, ta->latency_ns,
				 SIO_ADAPTER_LATENCY_NS, &ad->gen, &ad->width,
				 &ad->latency_ns);
		if (err)
			return err;
		if (ta->sw) {
			/* The port is claimed in init_switches. */
			if (ta->sw > t->nswitches ||
			    ta->port >= t->switches[ta->sw - 1].ports)
				return -EINVAL;
			ad->sw = (u16)ta->sw;
			ad->port = (u16)ta->port;
		}
		ad->window_base = SIO_WINDOW_BASE +
				  n->nadapters * SIO_WINDOW_STRIDE;
		ad->window_size = ta->window;
		ad->slot_size = ta->window / ta->luts;
		if (ta->share > ta->luts)
			return -EINVAL;
		ad->share = (u16)ta->share;
		err = sio_bitmap_init(&ad->luts, ta->luts, 0);
		if (!err)
			err = sio_bitmap_init(&ad->reqs_out, ta->requesters,
					      ta->reserved);
		if (!err)
			err = sio_bitmap_init(&ad->reqs_in, ta->requesters,
					      ta->reserved);
		if (err)
			return err;
		n->nadapters++;
	}
	return 0;
}

static int init_device(struct sio_registry *r, u32 i,
		       const struct sio_topology *t, u64 *bar_next)
{
	const struct sio_topo_device *td = &t->devices[i];
	struct sio_device *d = sio_dev(r, i);
	u32 b;

	if (td->node >= t->nnodes)
		return -EINVAL;
	/*
	 * Stable across restarts of the same topology: the lender's position
	 * (below 64) and the device's slot (below 2^20) -- unlike the node id,
	 * which may use all 32 bits, they always fit and never collide.
	 */
	d->fdid = (td->node << 20) | (i & 0xfffffu);
	d->node = (u16)td->node;
	d->sriov_pf = td->vf ? td->pf : SIO_NO_PF;
	d->sriov_total = td->sriov_total;
	if (td->absent) {
		d->gone = 1;	/* present 0: nothing to list or borrow */
		return 0;
	}
	sio_strlcpy(d->name, td->name, sizeof(d->name));
	sio_strlcpy(d->bdf, td->bdf, sizeof(d->bdf));
	d->rid = sio_bdf_to_rid(td->bdf);
	d->present = !td->vf;	/* a VF exists once its PF enables it */
	d->mode = SIO_MODE_EXCLUSIVE;
	d->policy = SIO_LEND_NONE;
	d->model = td->model;
	d->vendor = td->vendor;
	d->device = td->device;
	d->subsys_vendor = td->subsys_vendor;
	d->subsys_device = td->subsys_device;
	d->class_code = td->class_code;
	d->revision = td->revision;
	d->config_size = td->config_size;
	for (b = 0; b < SIO_MAX_BARS; b++) {
		u64 size = td->bar[b].size;
		u64 *next = &bar_next[td->node];

		if (!size)
			continue;
		if (size & (size - 1))
			return -EINVAL;
		*next = SIO_ALIGN_UP(*next, size);	/* natural alignment */
		d->bar[b].addr = *next;
		d->bar[b].size = size;
		d->bar[b].flags = td->bar[b].flags;
		*next += size;
	}
	return 0;
}

static void port_tables(struct sio_swport *p, const struct sio_topo_switch *ts)
{
	p->out_total = ts->requesters;
	p->in_total = ts->requesters;
	p->out_reserved = ts->reserved;
	p->in_reserved = ts->reserved;
}

/* Switches, their cascades and the adapters cabled to them. */
static int init_switches(struct sio_registry *r, const struct sio_topology *t)
{
	u32 i, p, n, a, lat;

	for (i = 0; i < t->nswitches; i++) {
		const struct sio_topo_switch *ts = &t->switches[i];
		struct sio_switch *sw = sio_switch_at(r, i);

		if (ts->ports < 2 || ts->ports > SIO_MAX_SWITCH_PORTS ||
		    !ts->requesters || ts->requesters > 64 ||
		    ts->reserved >= ts->requesters)
			return -EINVAL;
		sio_strlcpy(sw->name, ts->name, sizeof(sw->name));
		sw->nports = ts->ports;
		if (link_speed(ts->gen, ts->width, ts->latency_ns,
			       SIO_SWITCH_LATENCY_NS, &sw->gen, &sw->width,
			       &lat))
			return -EINVAL;
		sw->latency_ns = (u16)lat;
		for (p = 0; p < ts->ports; p++) {
			struct sio_swport *port = &sw->port[p];
			u32 far = ts->peer_sw[p], fp = ts->peer_port[p];

			port_tables(port, ts);
			if (!far)
				continue;
			/* Both ends name each other. */
			if (far > t->nswitches || far - 1 == i ||
			    fp >= t->switches[far - 1].ports ||
			    t->switches[far - 1].peer_sw[fp] != i + 1 ||
			    t->switches[far - 1].peer_port[fp] != p)
				return -EINVAL;
			port->kind = SIO_PORT_CASCADE;
			port->peer_sw = (u16)(far - 1);
			port->peer_port = (u16)fp;
		}
	}
	for (n = 0; n < r->nnodes; n++) {
		struct sio_node *node = sio_node(r, n);

		for (a = 0; a < node->nadapters; a++) {
			struct sio_adapter *ad = &node->adapter[a];
			struct sio_swport *port;

			if (!ad->sw)
				continue;
			port = &sio_switch_at(r, ad->sw - 1u)->port[ad->port];
			if (port->kind != SIO_PORT_FREE)
				return -EINVAL;	/* one cable per port */
			port->kind = SIO_PORT_ADAPTER;
			port->node = (u16)n;
			port->adapter = (u8)a;
		}
	}
	/* Each switch's multicast groups, in switch order. */
	for (i = 0, n = 0; i < t->nswitches; i++)
		for (p = 0; p < t->switches[i].multicast; p++)
			sio_mcast_at(r, n++)->sw = (u16)i;
	return 0;
}

int sio_registry_init(void *mem, u64 size, const struct sio_topology *t,
		      const struct sio_reg_limits *lim)
{
	struct sio_registry *r = mem;
	u64 bar_next[SIO_MAX_NODES];
	u64 total;
	u32 i;
	int err;

	err = layout(r, t, lim, &total);
	if (err)
		return err;
	if (total > size)
		return -ENOMEM;
	r->magic = SIO_REG_MAGIC;
	r->version = SIO_REG_VERSION;
	r->total_size = total;
	for (i = 0; i < t->nnodes; i++) {
		err = init_node(r, i, t);
		if (err)
			return err;
		bar_next[i] = SIO_BAR_BASE;
	}
	err = init_switches(r, t);
	if (err)
		return err;
	for (i = 0; i < t->ndevices; i++) {
		err = init_device(r, i, t, bar_next);
		if (err)
			return err;
	}
	return 0;
}

static int terminated(const char *s, u64 size)
{
	return sio_strnlen(s, size) < size;
}

static int node_ok(const struct sio_node *n, u32 nswitches)
{
	u32 a;

	if (!terminated(n->name, sizeof(n->name)) ||
	    n->nadapters > SIO_MAX_ADAPTERS ||
	    n->ram.count > SIO_RANGE_EXTENTS ||
	    n->iova.count > SIO_RANGE_EXTENTS ||
	    n->vectors.total > SIO_BITMAP_WORDS * 64)
		return 0;
	for (a = 0; a < SIO_MAX_ADAPTERS; a++) {
		const struct sio_adapter *ad = &n->adapter[a];

		if (ad->sw > nswitches || ad->port >= SIO_MAX_SWITCH_PORTS)
			return 0;
		if (ad->present && (!sio_link_speed_ok(ad->gen, ad->width) ||
				    ad->latency_ns > SIO_LATENCY_MAX_NS))
			return 0;
		if (!terminated(ad->name, sizeof(ad->name)) ||
		    ad->luts.total > SIO_BITMAP_WORDS * 64 ||
		    ad->reqs_out.total > SIO_BITMAP_WORDS * 64 ||
		    ad->reqs_in.total > SIO_BITMAP_WORDS * 64)
			return 0;
	}
	return 1;
}

static int route_ok(struct sio_registry *r, const struct sio_borrow *b)
{
	u32 i;

	/* l_window_shift is shifted by (sio_h_map_window). */
	if (b->l_hops > SIO_MAX_HOPS || b->l_window_shift > 63)
		return 0;
	for (i = 0; i < b->l_hops; i++)
		if (b->route_sw[i] >= r->nswitches ||
		    b->route_port[i] >= SIO_MAX_SWITCH_PORTS)
			return 0;
	return 1;
}

static int switch_ok(struct sio_registry *r, const struct sio_switch *sw)
{
	u32 p;

	if (!terminated(sw->name, sizeof(sw->name)) ||
	    sw->nports > SIO_MAX_SWITCH_PORTS ||
	    !sio_link_speed_ok(sw->gen, sw->width) ||
	    sw->latency_ns > SIO_LATENCY_MAX_NS)
		return 0;
	for (p = 0; p < SIO_MAX_SWITCH_PORTS; p++) {
		const struct sio_swport *port = &sw->port[p];

		if ((port->kind == SIO_PORT_ADAPTER &&
		     (port->node >= r->nnodes ||
		      port->adapter >= SIO_MAX_ADAPTERS)) ||
		    (port->kind == SIO_PORT_CASCADE &&
		     (port->peer_sw >= r->nswitches ||
		      port->peer_port >= SIO_MAX_SWITCH_PORTS)) ||
		    port->kind > SIO_PORT_CASCADE)
			return 0;
	}
	return 1;
}

/*
 * Every index a record holds names an entry of its table, so code that
 * follows it (libsmartio's queries, the core) stays inside the registry.
 */
static int mcast_ok(struct sio_registry *r, const struct sio_mcast *g)
{
	u32 k;

	if (!terminated(g->name, sizeof(g->name)) || g->sw >= r->nswitches)
		return 0;
	for (k = 0; k < SIO_MAX_NODES; k++) {
		const struct sio_mcast_member *m = &g->member[k];

		if (m->kind > SIO_MCAST_BAR ||
		    (m->kind == SIO_MCAST_SEG && m->index >= r->max_segments) ||
		    (m->kind == SIO_MCAST_BAR && (m->index >= r->ndevices ||
						  m->bar >= SIO_MAX_BARS)))
			return 0;
	}
	for (k = 0; k < SIO_MCAST_MAPS; k++)
		if (g->map[k].used && g->map[k].dev >= r->ndevices)
			return 0;
	return 1;
}

static int records_ok(struct sio_registry *r)
{
	u32 i, nn = r->nnodes, nd = r->ndevices, ns = r->max_segments;

	for (i = 0; i < nn; i++)
		if (!node_ok(sio_node(r, i), r->nswitches))
			return 0;
	for (i = 0; i < nd; i++) {
		const struct sio_device *d = sio_dev(r, i);

		if (!terminated(d->name, sizeof(d->name)) ||
		    !terminated(d->bdf, sizeof(d->bdf)) || d->node >= nn ||
		    (d->irq_mode != SIO_IRQ_NONE && d->irq_node >= nn))
			return 0;
	}
	for (i = 0; i < r->max_borrows; i++) {
		const struct sio_borrow *b = sio_borrow_at(r, i);

		if (b->used && (b->dev >= nd || b->borrower >= nn ||
				b->lender >= nn ||
				b->b_adapter >= SIO_MAX_ADAPTERS ||
				b->l_adapter >= SIO_MAX_ADAPTERS ||
				!route_ok(r, b)))
			return 0;
	}
	for (i = 0; i < r->nswitches; i++)
		if (!switch_ok(r, sio_switch_at(r, i)))
			return 0;
	for (i = 0; i < ns; i++) {
		const struct sio_segment *s = sio_seg(r, i);

		if (!terminated(s->name, sizeof(s->name)) ||
		    (s->used && s->owner >= nn))
			return 0;
	}
	for (i = 0; i < r->max_attach; i++) {
		const struct sio_attach *a = sio_attach_at(r, i);

		if (a->used && (a->node >= nn || a->seg >= ns ||
				a->adapter >= SIO_MAX_ADAPTERS))
			return 0;
	}
	for (i = 0; i < r->max_segdma; i++) {
		const struct sio_segdma *m = sio_segdma_at(r, i);

		if (m->used && (m->seg >= ns || m->dev >= nd ||
				m->owner >= nn || m->kind > SIO_SEGDMA_LENDER ||
				m->adapter >= SIO_MAX_ADAPTERS))
			return 0;
	}
	for (i = 0; i < r->max_peermap; i++) {
		const struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used && (m->dev >= nd || m->peer >= nd ||
				m->node >= nn || m->bar >= SIO_MAX_BARS ||
				m->kind > SIO_PEERMAP_COPY ||
				(m->via >= nn && m->via != SIO_NONE) ||
				m->adapter >= SIO_MAX_ADAPTERS))
			return 0;
	}
	for (i = 0; i < r->max_mcast; i++)
		if (!mcast_ok(r, sio_mcast_at(r, i)))
			return 0;
	for (i = 0; i < SIO_EVENT_RING; i++) {
		const struct sio_event *e = sio_event_at(r, i);

		if (!terminated(e->object, sizeof(e->object)) ||
		    !terminated(e->args, sizeof(e->args)))
			return 0;
	}
	return 1;
}

/*
 * A registry that did not come from this process (smartio.ko's copy,
 * another process's shared memory) is used only once this holds: the
 * header is ours, the counts within the core's limits, every table where
 * layout_tables puts it and inside the size given, every record's indexes
 * inside their tables and its strings terminated.
 */
int sio_registry_check(const void *mem, u64 size)
{
	const struct sio_registry *r = mem;
	struct sio_registry want;

	if (size < sizeof(*r) || r->magic != SIO_REG_MAGIC ||
	    r->version != SIO_REG_VERSION || r->total_size > size)
		return -EPROTO;
	if (r->nnodes == 0 || r->nnodes > SIO_MAX_NODES ||
	    r->ndevices > 0xfffffu || r->nswitches > SIO_MAX_SWITCHES ||
	    r->max_mcast > SIO_MAX_MCAST)
		return -EPROTO;
	sio_memcpy(&want, r, sizeof(want));
	if (layout_tables(&want) != r->total_size ||
	    want.nodes_off != r->nodes_off ||
	    want.devices_off != r->devices_off ||
	    want.borrows_off != r->borrows_off ||
	    want.segments_off != r->segments_off ||
	    want.attach_off != r->attach_off ||
	    want.segdma_off != r->segdma_off ||
	    want.events_off != r->events_off ||
	    want.peermap_off != r->peermap_off ||
	    want.switches_off != r->switches_off ||
	    want.mcast_off != r->mcast_off)
		return -EPROTO;
	/* Only reads follow; the const goes because the accessors take none. */
	return records_ok((struct sio_registry *)mem) ? 0 : -EPROTO;
}

int sio_node_lookup(struct sio_registry *r, const char *name)
{
	u32 i;

	for (i = 0; i < r->nnodes; i++)
		if (sio_streq(sio_node(r, i)->name, name))
			return (int)i;
	return -ENOENT;
}

int sio_node_lookup_id(struct sio_registry *r, u32 id)
{
	u32 i;

	for (i = 0; i < r->nnodes; i++)
		if (sio_node(r, i)->id == id)
			return (int)i;
	return -ENOENT;
}

int sio_dev_lookup(struct sio_registry *r, const char *name)
{
	u32 i;

	for (i = 0; i < r->ndevices; i++)
		if (sio_dev(r, i)->present &&
		    sio_streq(sio_dev(r, i)->name, name))
			return (int)i;
	return -ENXIO;
}

int sio_dev_lookup_fdid(struct sio_registry *r, u32 fdid)
{
	u32 i = fdid & 0xfffffu;

	if (i < r->ndevices && sio_dev(r, i)->fdid == fdid &&
	    sio_dev(r, i)->present)
		return (int)i;
	return -ENXIO;
}

int sio_seg_lookup(struct sio_registry *r, u32 owner, const char *name)
{
	u32 i;

	for (i = 0; i < r->max_segments; i++) {
		struct sio_segment *s = sio_seg(r, i);

		if (s->used && s->owner == owner && sio_streq(s->name, name))
			return (int)i;
	}
	return -ENOENT;
}

int sio_borrow_find(struct sio_registry *r, u32 dev, u32 borrower)
{
	u32 i;

	for (i = 0; i < r->max_borrows; i++) {
		struct sio_borrow *b = sio_borrow_at(r, i);

		if (b->used && b->dev == dev && b->borrower == borrower)
			return (int)i;
	}
	return -ENOENT;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

u16 sio_bdf_to_rid(const char *bdf)
{
	/* dddd:bb:dd.f -> bus << 8 | dev << 3 | fn; malformed gives 0xffff */
	int bus_hi, bus_lo, dev_hi, dev_lo, fn;

	if (sio_strnlen(bdf, 16) != 12 || bdf[4] != ':' || bdf[7] != ':' ||
	    bdf[10] != '.')
		return 0xffff;
	bus_hi = hexval(bdf[5]);
	bus_lo = hexval(bdf[6]);
	dev_hi = hexval(bdf[8]);
	dev_lo = hexval(bdf[9]);
	fn = bdf[11] - '0';
	if (bus_hi < 0 || bus_lo < 0 || dev_hi < 0 || dev_lo < 0 || fn < 0 ||
	    fn > 7 || dev_hi * 16 + dev_lo > 31)
		return 0xffff;
	return (u16)((bus_hi * 16 + bus_lo) << 8 | (dev_hi * 16 + dev_lo) << 3 |
		     fn);
}
