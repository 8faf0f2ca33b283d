// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "registry.h"

static u64 table_bytes(u64 count, u64 elem)
{
	return SIO_ALIGN_UP(count * elem, 64);
}

static int layout(struct sio_registry *r, const struct sio_topology *t,
		  const struct sio_reg_limits *lim, u64 *total)
{
	u64 off = SIO_ALIGN_UP(sizeof(*r), 64);

	if (t->nnodes == 0 || t->nnodes > SIO_MAX_NODES || t->ndevices > 0xfffffu)
		return -E2BIG;
	r->nnodes = t->nnodes;
	r->ndevices = t->ndevices;
	r->max_borrows = lim->max_borrows;
	r->max_segments = lim->max_segments;
	r->max_attach = lim->max_attach;
	r->max_segdma = lim->max_segdma;
	r->nodes_off = off;
	off += table_bytes(t->nnodes, sizeof(struct sio_node));
	r->devices_off = off;
	off += table_bytes(t->ndevices, sizeof(struct sio_device));
	r->borrows_off = off;
	off += table_bytes(lim->max_borrows, sizeof(struct sio_borrow));
	r->segments_off = off;
	off += table_bytes(lim->max_segments, sizeof(struct sio_segment));
	r->attach_off = off;
	off += table_bytes(lim->max_attach, sizeof(struct sio_attach));
	r->segdma_off = off;
	off += table_bytes(lim->max_segdma, sizeof(struct sio_segdma));
	r->events_off = off;
	off += table_bytes(SIO_EVENT_RING, sizeof(struct sio_event));
	r->max_peermap = lim->max_peermap;
	r->peermap_off = off;
	off += table_bytes(lim->max_peermap, sizeof(struct sio_peermap));
	*total = off;
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
		ad->window_base = SIO_WINDOW_BASE +
				  n->nadapters * SIO_WINDOW_STRIDE;
		ad->window_size = ta->window;
		ad->slot_size = ta->window / ta->luts;
		err = sio_bitmap_init(&ad->luts, ta->luts, 0);
		if (!err)
			err = sio_bitmap_init(&ad->reqs, ta->requesters,
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
	sio_strlcpy(d->name, td->name, sizeof(d->name));
	sio_strlcpy(d->bdf, td->bdf, sizeof(d->bdf));
	/*
	 * Stable across restarts of the same topology: the lender's position
	 * (below 64) and the device's slot (below 2^20) -- unlike the node id,
	 * which may use all 32 bits, they always fit and never collide.
	 */
	d->fdid = (td->node << 20) | (i & 0xfffffu);
	d->node = (u16)td->node;
	d->rid = sio_bdf_to_rid(td->bdf);
	d->present = 1;
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
	for (i = 0; i < t->ndevices; i++) {
		err = init_device(r, i, t, bar_next);
		if (err)
			return err;
	}
	return 0;
}

int sio_registry_check(const void *mem, u64 size)
{
	const struct sio_registry *r = mem;

	if (size < sizeof(*r) || r->magic != SIO_REG_MAGIC ||
	    r->version != SIO_REG_VERSION || r->total_size > size)
		return -EPROTO;
	return 0;
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
		if (sio_streq(sio_dev(r, i)->name, name))
			return (int)i;
	return -ENXIO;
}

int sio_dev_lookup_fdid(struct sio_registry *r, u32 fdid)
{
	u32 i = fdid & 0xfffffu;

	if (i < r->ndevices && sio_dev(r, i)->fdid == fdid)
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
