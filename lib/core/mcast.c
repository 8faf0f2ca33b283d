// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Multicast groups (SmartIO section 6.5).  A switch that supports
 * multicast reserves a range of its address space and divides it into
 * groups; a posted write into a group leaves the switch on every port
 * that subscribed, and the adapter there puts it into local memory
 * through its overlay BAR.  So one device DMA (the paper's test: one NVMe
 * Identify) reaches the buffers of every member at once.
 *
 *   MCAST_CREATE  NAME, INDEX (switch), SIZE -> reply INDEX (group)
 *   MCAST_DESTROY INDEX: EBUSY while it has members or mappings
 *   MCAST_SIZE    INDEX, SIZE: EBUSY as for DESTROY
 *   MCAST_JOIN    INDEX, NODE and its buffer: NAME (a segment of NODE's)
 *                 or DEV, KIND (a BAR of a device of NODE's)
 *   MCAST_LEAVE   INDEX, NODE
 *   MCAST_MAP     INDEX, DEV, NODE (its user) -> reply ADDR: the device's
 *                 address of the group, an IOMMU mapping on its node onto
 *                 the group's range (SIO_MCAST_BASE + group * STRIDE)
 *   MCAST_UNMAP   INDEX, DEV, NODE
 *
 * Members and writers must be cabled to the group's switch or to one
 * cascaded with it, which replicates the write in turn (EXDEV).  The
 * platform replicates the writes (the simulator: lib/sim/sio_plat.c); over
 * smartio.ko, whose NTBs have no multicast, every command is EOPNOTSUPP.
 */
#include "core_int.h"

static int group_of(struct sio_registry *r, const struct sio_parsed *p)
{
	u32 g;

	g = sio_nla_u32(&p->tb[SIO_A_INDEX]);
	if (g >= r->max_mcast || !sio_mcast_at(r, g)->used)
		return -ENOENT;
	return (int)g;
}

u32 sio_switch_fabric(struct sio_registry *r, u32 sw)
{
	u32 seen = 1u << sw, queue[SIO_MAX_SWITCHES], head = 0, tail = 0, p;

	queue[tail++] = sw;
	while (head < tail) {
		const struct sio_switch *s = sio_switch_at(r, queue[head++]);

		for (p = 0; p < s->nports && p < SIO_MAX_SWITCH_PORTS; p++) {
			u32 far = s->port[p].peer_sw;

			if (s->port[p].kind != SIO_PORT_CASCADE ||
			    far >= r->nswitches || (seen >> far & 1))
				continue;
			seen |= 1u << far;
			queue[tail++] = far;
		}
	}
	return seen;
}

int sio_mcast_adapter(struct sio_registry *r, u32 node, u32 sw, int up)
{
	return sio_fabric_adapter(r, node, sio_switch_fabric(r, sw), up);
}

int sio_fabric_adapter(struct sio_registry *r, u32 node, u32 fabric, int up)
{
	const struct sio_node *n = sio_node(r, node);
	u32 a;

	for (a = 0; a < n->nadapters && a < SIO_MAX_ADAPTERS; a++) {
		const struct sio_adapter *ad = &n->adapter[a];

		if (ad->sw && ad->sw <= r->nswitches &&
		    (fabric >> (ad->sw - 1u) & 1) && (!up || ad->link_up))
			return (int)a;
	}
	return -1;
}

static int cabled(struct sio_registry *r, u32 node, u32 sw)
{
	return sio_mcast_adapter(r, node, sw, 0) >= 0;
}

u64 sio_mcast_addr(u32 group)
{
	return SIO_MCAST_BASE + (u64)group * SIO_MCAST_STRIDE;
}

static void group_event(struct sio_core *c, struct sio_mcast *g,
			const char *key, const char *val)
{
	sio_event_about(c, SIO_EV_MULTICAST, "multicast/", g->name, NULL,
			key, val);
}

/* A group's size: whole pages, at most its share of the range. */
static int size_ok(u64 size)
{
	return size && !(size % SIO_PAGE) && size <= SIO_MCAST_STRIDE;
}

/* Whether a group has members or devices mapped to write into it. */
static int in_use(const struct sio_mcast *g)
{
	u32 k;

	for (k = 0; k < SIO_MAX_NODES; k++)
		if (g->member[k].kind)
			return 1;
	for (k = 0; k < SIO_MCAST_MAPS; k++)
		if (g->map[k].used)
			return 1;
	return 0;
}

static int mcast_create(struct sio_core *c, const struct sio_parsed *p,
			struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	const char *name;
	u32 sw, i;
	u64 size;

	name = sio_nla_str(&p->tb[SIO_A_NAME]);
	sw = sio_nla_u32(&p->tb[SIO_A_INDEX]);
	size = sio_nla_u64(&p->tb[SIO_A_SIZE]);
	if (!name || !sio_name_ok(name))
		return -EINVAL;
	if (!size_ok(size))
		return -EINVAL;
	if (sw >= r->nswitches)
		return -ENOENT;
	for (i = 0; i < r->max_mcast; i++)
		if (sio_mcast_at(r, i)->used &&
		    sio_streq(sio_mcast_at(r, i)->name, name))
			return -EEXIST;
	for (i = 0; i < r->max_mcast; i++) {
		struct sio_mcast *g = sio_mcast_at(r, i);

		if (g->used || g->sw != sw)
			continue;
		sio_memset(g, 0, sizeof(*g));
		g->sw = (u16)sw;
		sio_strlcpy(g->name, name, sizeof(g->name));
		g->size = (u32)size;
		g->used = 1;
		group_event(c, g, "switch", sio_switch_at(r, sw)->name);
		return sio_msg_put_u32(rep, SIO_A_INDEX, i);
	}
	/* No group free, or a switch without multicast at all. */
	for (i = 0; i < r->max_mcast; i++)
		if (sio_mcast_at(r, i)->sw == sw)
			return -ENOSPC;
	return -EOPNOTSUPP;
}

static int mcast_destroy(struct sio_core *c, u32 gi)
{
	struct sio_mcast *g = sio_mcast_at(c->reg, gi);

	if (in_use(g))
		return -EBUSY;
	group_event(c, g, "destroyed", "1");
	sio_memset(g->name, 0, sizeof(g->name));
	g->used = 0;
	return 0;
}

static int mcast_size(struct sio_core *c, u32 gi, const struct sio_parsed *p)
{
	struct sio_mcast *g = sio_mcast_at(c->reg, gi);
	u64 size;

	size = sio_nla_u64(&p->tb[SIO_A_SIZE]);
	if (!size_ok(size))
		return -EINVAL;
	if (in_use(g))
		return -EBUSY;	/* its buffers and mappings have their sizes */
	g->size = (u32)size;
	return 0;
}

/* The member's buffer named by p: a sized segment or a BAR of its own. */
static int member_of(struct sio_registry *r, u32 node, const struct sio_mcast *g,
		     const struct sio_parsed *p, struct sio_mcast_member *m)
{
	const char *name;
	u32 bar;
	int i;

	if (p->present[SIO_A_NAME] == p->present[SIO_A_DEV])
		return -EINVAL;		/* exactly one buffer */
	if (p->present[SIO_A_NAME]) {
		name = sio_nla_str(&p->tb[SIO_A_NAME]);
		if (!name)
			return -EINVAL;
		i = sio_seg_lookup(r, node, name);
		if (i < 0)
			return -ENOENT;
		if (!sio_seg(r, (u32)i)->sized ||
		    sio_seg(r, (u32)i)->size < g->size)
			return -ENOSPC;	/* smaller than the group */
		m->kind = SIO_MCAST_SEG;
		m->index = (u32)i;
		return 0;
	}
	i = sio_msg_dev(r, p);
	if (i < 0)
		return i;
	if (!p->present[SIO_A_KIND])
		return -EINVAL;
	bar = sio_nla_u32(&p->tb[SIO_A_KIND]);
	if (bar >= SIO_MAX_BARS || sio_dev(r, (u32)i)->node != node ||
	    !sio_dev(r, (u32)i)->present)
		return -EINVAL;
	if (sio_dev(r, (u32)i)->bar[bar].size < g->size)
		return -ENOSPC;
	m->kind = SIO_MCAST_BAR;
	m->index = (u32)i;
	m->bar = (u8)bar;
	return 0;
}

static int mcast_join(struct sio_core *c, u32 gi, const struct sio_parsed *p)
{
	struct sio_registry *r = c->reg;
	struct sio_mcast *g = sio_mcast_at(r, gi);
	struct sio_mcast_member m;
	int node = sio_msg_node(r, p, SIO_A_NODE), err;

	if (node < 0)
		return node;
	if (!cabled(r, (u32)node, g->sw))
		return -EXDEV;
	if (g->member[node].kind)
		return -EEXIST;
	sio_memset(&m, 0, sizeof(m));
	err = member_of(r, (u32)node, g, p, &m);
	if (err)
		return err;
	g->member[node] = m;
	group_event(c, g, "joined", sio_node(r, (u32)node)->name);
	return 0;
}

static int mcast_leave(struct sio_core *c, u32 gi, const struct sio_parsed *p)
{
	struct sio_mcast *g = sio_mcast_at(c->reg, gi);
	int node = sio_msg_node(c->reg, p, SIO_A_NODE);

	if (node < 0)
		return node;
	if (!g->member[node].kind)
		return -ENOENT;
	sio_memset(&g->member[node], 0, sizeof(g->member[node]));
	group_event(c, g, "left", sio_node(c->reg, (u32)node)->name);
	return 0;
}

/* The slot of dev's mapping of group g, or -ENOENT. */
static int map_find(const struct sio_mcast *g, u32 dev)
{
	u32 k;

	for (k = 0; k < SIO_MCAST_MAPS; k++)
		if (g->map[k].used && g->map[k].dev == dev)
			return (int)k;
	return -ENOENT;
}

/* Who may map a group for dev or unmap it: its lender or a borrower. */
static int user_of(struct sio_registry *r, u32 dev, const struct sio_parsed *p)
{
	const struct sio_device *d = sio_dev(r, dev);
	int node = sio_msg_node(r, p, SIO_A_NODE);

	if (node < 0)
		return node;
	if ((u32)node != d->node && !(d->borrowers >> node & 1))
		return -EACCES;
	return 0;
}

static int mcast_map(struct sio_core *c, u32 gi, const struct sio_parsed *p,
		     struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	struct sio_mcast *g = sio_mcast_at(r, gi);
	int dev = sio_msg_dev(r, p), k, err;
	struct sio_device *d;
	u64 iova;

	if (dev < 0)
		return dev;
	err = user_of(r, (u32)dev, p);
	if (err)
		return err;
	d = sio_dev(r, (u32)dev);
	if (!cabled(r, d->node, g->sw))
		return -EXDEV;
	if (map_find(g, (u32)dev) >= 0)
		return -EEXIST;
	for (k = 0; k < SIO_MCAST_MAPS && g->map[k].used; k++)
		;
	if (k == SIO_MCAST_MAPS)
		return -ENOSPC;
	err = sio_range_alloc(&sio_node(r, d->node)->iova, g->size, SIO_PAGE,
			      &iova);
	if (err)
		return err == -ENOSPC ? -ENOMEM : err;
	err = c->ops->iommu_map(c->plat, d->node, d->node, d->rid, iova,
				sio_mcast_addr(gi), g->size);
	if (err) {
		sio_range_free(&sio_node(r, d->node)->iova, iova);
		return err;
	}
	g->map[k].used = 1;
	g->map[k].dev = (u32)dev;
	g->map[k].iova = iova;
	group_event(c, g, "mapped", d->name);
	return sio_msg_put_u64(rep, SIO_A_ADDR, iova);
}

static void map_release(struct sio_core *c, struct sio_mcast *g, u32 k)
{
	struct sio_device *d = sio_dev(c->reg, g->map[k].dev);

	sio_iova_unmap(c, d->node, d->node, d->rid, g->map[k].iova);
	sio_memset(&g->map[k], 0, sizeof(g->map[k]));
}

static int mcast_unmap(struct sio_core *c, u32 gi, const struct sio_parsed *p)
{
	struct sio_mcast *g = sio_mcast_at(c->reg, gi);
	int dev = sio_msg_dev(c->reg, p), k, err;

	if (dev < 0)
		return dev;
	err = user_of(c->reg, (u32)dev, p);
	if (err)
		return err;
	k = map_find(g, (u32)dev);
	if (k < 0)
		return k;
	group_event(c, g, "unmapped", sio_dev(c->reg, (u32)dev)->name);
	map_release(c, g, (u32)k);
	return 0;
}

/* Whether segment seg is a member's buffer (segment.c refuses to free it). */
int sio_mcast_holds_seg(struct sio_registry *r, u32 seg)
{
	u32 i, k;

	for (i = 0; i < r->max_mcast; i++) {
		const struct sio_mcast *g = sio_mcast_at(r, i);

		for (k = 0; g->used && k < SIO_MAX_NODES; k++)
			if (g->member[k].kind == SIO_MCAST_SEG &&
			    g->member[k].index == seg)
				return 1;
	}
	return 0;
}

int sio_h_mcast(struct sio_core *c, u32 self, const struct sio_parsed *p,
		struct sio_msg *rep)
{
	int g;

	(void)self;
	if (c->flags & SIO_CORE_SEPARATE)
		return -EOPNOTSUPP;
	if (p->cmd == SIO_CMD_MCAST_CREATE)
		return mcast_create(c, p, rep);
	g = group_of(c->reg, p);
	if (g < 0)
		return g;
	switch (p->cmd) {
	case SIO_CMD_MCAST_DESTROY:
		return mcast_destroy(c, (u32)g);
	case SIO_CMD_MCAST_SIZE:
		return mcast_size(c, (u32)g, p);
	case SIO_CMD_MCAST_JOIN:
		return mcast_join(c, (u32)g, p);
	case SIO_CMD_MCAST_LEAVE:
		return mcast_leave(c, (u32)g, p);
	case SIO_CMD_MCAST_MAP:
		return mcast_map(c, (u32)g, p, rep);
	case SIO_CMD_MCAST_UNMAP:
		return mcast_unmap(c, (u32)g, p);
	default:
		return -EINVAL;
	}
}
