// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The path model of /smartio (smartio(7)) as data: a table of object
 * kinds (what each is, whether it exists now) and, per directory kind, a
 * table of entries.  A directory lists its attribute files first (their
 * records are in attrs.c), then its entries: a named subdirectory, link or
 * special file, or a family of names that follows cluster state (nodes,
 * devices, segments, BARs, vectors, peers) with its own lookup and list.
 * Lookup and readdir are walks of those tables.  Objects are small values
 * (struct sfs_obj); nothing here caches cluster state.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sfs.h"

struct sfs_entry {
	const char *name;	/* NULL: a family of names */
	uint8_t kind;		/* the child's kind */
	/* named: listed only when present (NULL: always) */
	int (*present)(const struct sfs_obj *o);
	/* family: its child `name` (of kind `kind`), 0 or -ENOENT; and the
	 * listing of all of them */
	int (*lookup)(const struct sfs_obj *dir, unsigned kind,
		      const char *name, struct sfs_obj *out);
	int (*list)(const struct sfs_obj *dir, unsigned kind,
		    tree_fill_fn fill, void *ctx);
	const char *pattern;	/* family: its names in --list-attributes */
};

#define NAMED(nm, k) { nm, k, NULL, NULL, NULL, NULL }
#define NAMED_IF(nm, k, pred) { nm, k, pred, NULL, NULL, NULL }
#define FAMILY(k, fn, pat) { NULL, k, NULL, fn##_lookup, fn##_list, pat }

struct kinddef {
	mode_t fmt;		/* S_IFDIR, S_IFLNK or S_IFREG */
	uint8_t dynamic;	/* exists as cluster state says: never cached */
	uint8_t attr_kind;	/* directory: its attribute files' kind, or 0 */
	uint8_t list_gone;	/* directory: listing it once gone is ENOENT */
	uint8_t nents;
	/* 0 when it exists now; NULL: always, while its parent does */
	int (*valid)(const struct sfs_obj *o);
	const struct sfs_entry *ents;	/* directory */
	const struct sfs_dir_ops *dir_ops;	/* directory: mkdir, rmdir */
	const struct sfs_attr_group *group;	/* file */
};

int tree_segment(unsigned owner, const char *name,
		 struct smartio_segment_info *out)
{
	int idx;

	if (strlen(name) >= SMARTIO_NAME_MAX)
		return -ENOENT;
	idx = smartio_segment_find(sfs.h, owner, name);
	if (idx < 0)
		return -ENOENT;
	/* The slot may have been reused in between: check it is still ours. */
	if (smartio_segment_at(sfs.h, (unsigned)idx, out) != 1 ||
	    out->owner != owner || strncmp(out->name, name, SMARTIO_NAME_MAX))
		return -ENOENT;
	return 0;
}

int tree_mcast(const struct sfs_obj *o)
{
	return smartio_mcast_lookup(sfs.h, o->seg);
}

static int dev_dynamic(unsigned dev, struct smartio_device_info *di)
{
	return smartio_device_info(sfs.h, dev, di);
}

static int bar_visible(const struct smartio_device_info *di, unsigned bar)
{
	if (bar >= SMARTIO_MAX_BARS || !di->bar[bar].size)
		return 0;
	return di->node == sfs.self || (di->borrowers >> sfs.self & 1);
}

static int mem_visible(const struct smartio_segment_info *si)
{
	return si->sized && (si->owner == sfs.self || si->available);
}

/* "bar<N>" with N a single digit below SMARTIO_MAX_BARS: N, or -1. */
int tree_bar_name(const char *name)
{
	if (strncmp(name, "bar", 3) || name[3] < '0' ||
	    name[3] >= '0' + SMARTIO_MAX_BARS || name[4])
		return -1;
	return name[3] - '0';
}

/* Whether o's peer is mapped for o's device (bar < 0: any BAR). */
static int peer_mapped(const struct sfs_obj *o, int bar)
{
	int peer = names_dev(o->seg), b;
	uint64_t addr;

	if (peer < 0)
		return 0;
	for (b = bar < 0 ? 0 : bar; b < (bar < 0 ? SMARTIO_MAX_BARS : bar + 1); b++)
		if (smartio_peer_addr(sfs.h, o->dev, (unsigned)peer, (unsigned)b,
				      &addr) == 0)
			return 1;
	return 0;
}

/* A vector number: decimal, no leading zeros, below SFS_IRQ_MAX. */
static int parse_vec(const char *name)
{
	int v = 0;

	if (!name[0] || (name[0] == '0' && name[1]))
		return -1;
	for (; *name; name++) {
		if (*name < '0' || *name > '9' || v >= SFS_IRQ_MAX)
			return -1;
		v = v * 10 + (*name - '0');
	}
	return v < SFS_IRQ_MAX ? v : -1;
}

/* "<node>.<seg>": the node part is the one whose name is a prefix. */
static int parse_segidx(const char *name, struct sfs_obj *out)
{
	unsigned n;

	for (n = 0; n < names_nnodes(); n++) {
		const char *nn = names_nodeinfo(n)->name;
		size_t len = strlen(nn);
		struct smartio_segment_info si;

		if (strncmp(name, nn, len) || name[len] != '.')
			continue;
		if (tree_segment(n, name + len + 1, &si))
			continue;
		out->node = (uint16_t)n;
		return sfs_obj_name(out, name + len + 1);
	}
	return -ENOENT;
}


static void init_child(const struct sfs_obj *dir, struct sfs_obj *out,
		       unsigned kind)
{
	*out = *dir;
	out->kind = (uint8_t)kind;
}

/* --- what exists now ---------------------------------------------------- */
static int seg_valid(const struct sfs_obj *o)
{
	struct smartio_segment_info si;

	return tree_segment(o->node, o->seg, &si);
}

static int mem_valid(const struct sfs_obj *o)
{
	struct smartio_segment_info si;

	if (tree_segment(o->node, o->seg, &si))
		return -ENOENT;
	return mem_visible(&si) ? 0 : -ENOENT;
}

static int mem_present(const struct sfs_obj *o)
{
	return mem_valid(o) == 0;
}

static int segdma_valid(const struct sfs_obj *o)
{
	uint64_t addr;

	return smartio_segment_dma_addr(sfs.h, o->node, o->seg, o->dev,
					&addr) ? -ENOENT : 0;
}

static int mcast_valid(const struct sfs_obj *o)
{
	return tree_mcast(o) < 0 ? -ENOENT : 0;
}

static int mcastdma_valid(const struct sfs_obj *o)
{
	int g = tree_mcast(o);
	uint64_t addr;

	return g < 0 || smartio_mcast_dma_addr(sfs.h, (unsigned)g, o->dev,
					       &addr) ? -ENOENT : 0;
}

static int borrowed_valid(const struct sfs_obj *o)
{
	struct smartio_device_info di;

	if (dev_dynamic(o->dev, &di))
		return -ENOENT;
	return di.borrowers >> o->node & 1 ? 0 : -ENOENT;
}

/* A device is there while its slot is (a VF: while enabled). */
static int dev_valid(const struct sfs_obj *o)
{
	struct smartio_device_info di;

	return dev_dynamic(o->dev, &di) ? -ENOENT : 0;
}

static int bar_valid(const struct sfs_obj *o)
{
	struct smartio_device_info di;

	if (dev_dynamic(o->dev, &di))
		return -ENOENT;
	return bar_visible(&di, o->bar) ? 0 : -ENOENT;
}

static int irq_valid(const struct sfs_obj *o)
{
	return irq_routed_here(o->dev, o->vec) ? 0 : -ENOENT;
}

static int peer_valid(const struct sfs_obj *o)
{
	return peer_mapped(o, -1) ? 0 : -ENOENT;
}

static int peer_bar_valid(const struct sfs_obj *o)
{
	return peer_mapped(o, o->bar) ? 0 : -ENOENT;
}

/* --- families ----------------------------------------------------------- */
static int nodes_lookup(const struct sfs_obj *dir, unsigned kind,
			const char *name, struct sfs_obj *out)
{
	int i = names_node(name);

	if (i < 0)
		return -ENOENT;
	init_child(dir, out, kind);
	out->node = (uint16_t)i;
	return 0;
}

static int nodes_list(const struct sfs_obj *dir, unsigned kind,
		      tree_fill_fn fill, void *ctx)
{
	struct sfs_obj o;
	unsigned i;
	int rc;

	for (i = 0; i < names_nnodes(); i++) {
		init_child(dir, &o, kind);
		o.node = (uint16_t)i;
		rc = fill(ctx, names_nodeinfo(i)->name, &o);
		if (rc)
			return rc;
	}
	return 0;
}

static int adapters_lookup(const struct sfs_obj *dir, unsigned kind,
			   const char *name, struct sfs_obj *out)
{
	int i = names_adapter(dir->node, name);

	if (i < 0)
		return -ENOENT;
	init_child(dir, out, kind);
	out->adapter = (uint16_t)i;
	return 0;
}

static int adapters_list(const struct sfs_obj *dir, unsigned kind,
			 tree_fill_fn fill, void *ctx)
{
	const struct sfs_nodeinfo *ni = names_nodeinfo(dir->node);
	struct sfs_obj o;
	unsigned i;
	int rc;

	for (i = 0; i < ni->nadapters; i++) {
		init_child(dir, &o, kind);
		o.adapter = (uint16_t)i;
		rc = fill(ctx, ni->adapters[i], &o);
		if (rc)
			return rc;
	}
	return 0;
}

/* Devices: dev/, a node's devices/ and borrowed/, a segment's dma/. */
static int devs_lookup(const struct sfs_obj *dir, unsigned kind,
		       const char *name, struct sfs_obj *out)
{
	struct smartio_device_info di;
	int i = names_dev(name);

	if (i < 0 && names_refresh() > 0)
		i = names_dev(name);
	/* Absent: another machine's device whose table has not come (yet). */
	if (i < 0 || dev_dynamic((unsigned)i, &di) ||
	    (kind == K_NODE_DEVLINK &&
	     names_devinfo((unsigned)i)->info.node != dir->node))
		return -ENOENT;
	init_child(dir, out, kind);
	out->dev = (uint32_t)i;
	return tree_valid(out);
}

static int devs_list(const struct sfs_obj *dir, unsigned kind,
		     tree_fill_fn fill, void *ctx)
{
	const struct sfs_nodeinfo *ni = names_nodeinfo(dir->node);
	struct smartio_device_info di;
	struct sfs_obj o;
	unsigned i, n;
	int rc;

	names_refresh();
	n = kind == K_NODE_DEVLINK ?
	    (ni ? __atomic_load_n(&ni->ndevs, __ATOMIC_ACQUIRE) : 0) :
	    names_ndevs();
	for (i = 0; i < n; i++) {
		unsigned dev = kind == K_NODE_DEVLINK ? ni->devs[i] : i;

		/* Absent slots and devices that left are not listed. */
		if (!names_devinfo(dev)->info.name[0] || dev_dynamic(dev, &di) ||
		    (kind == K_BORROWED_LINK && !(di.borrowers >> dir->node & 1)))
			continue;
		if (kind == K_SEG_DMA_DEV) {
			uint64_t addr;

			if (smartio_segment_dma_addr(sfs.h, dir->node, dir->seg,
						     dev, &addr))
				continue;
		}
		if (kind == K_MCAST_DMA_DEV) {
			init_child(dir, &o, kind);
			o.dev = dev;
			if (mcastdma_valid(&o))
				continue;
		}
		init_child(dir, &o, kind);
		o.dev = dev;
		rc = fill(ctx, names_devinfo(dev)->info.name, &o);
		if (rc)
			return rc;
	}
	return 0;
}

static int segments_lookup(const struct sfs_obj *dir, unsigned kind,
			   const char *name, struct sfs_obj *out)
{
	struct smartio_segment_info si;

	if (tree_segment(dir->node, name, &si))
		return -ENOENT;
	init_child(dir, out, kind);
	return sfs_obj_name(out, name);
}

/* Segments: a node's segments/ and the index seg/ of all of them. */
static int segments_list(const struct sfs_obj *dir, unsigned kind,
			 tree_fill_fn fill, void *ctx)
{
	unsigned i, slots = smartio_segment_slots(sfs.h);
	struct smartio_segment_info si;
	char name[SMARTIO_NAME_MAX * 2 + 2];
	struct sfs_obj o;
	int rc;

	for (i = 0; i < slots; i++) {
		if (smartio_segment_at(sfs.h, i, &si) != 1)
			continue;
		si.name[SMARTIO_NAME_MAX - 1] = '\0';
		if (kind == K_SEG && si.owner != dir->node)
			continue;
		if (si.owner >= names_nnodes())
			continue;
		memset(&o, 0, sizeof(o));
		o.kind = (uint8_t)kind;
		o.node = (uint16_t)si.owner;
		if (sfs_obj_name(&o, si.name))
			continue;
		if (kind == K_SEG)
			snprintf(name, sizeof(name), "%s", si.name);
		else
			snprintf(name, sizeof(name), "%s.%s",
				 names_nodeinfo(si.owner)->name, si.name);
		rc = fill(ctx, name, &o);
		if (rc)
			return rc;
	}
	return 0;
}

static int segidx_lookup(const struct sfs_obj *dir, unsigned kind,
			 const char *name, struct sfs_obj *out)
{
	init_child(dir, out, kind);
	return parse_segidx(name, out);
}

#define segidx_list segments_list

static int bars_lookup(const struct sfs_obj *dir, unsigned kind,
		       const char *name, struct sfs_obj *out)
{
	struct smartio_device_info di;
	int i = tree_bar_name(name);

	if (i < 0 || dev_dynamic(dir->dev, &di) || !bar_visible(&di, (unsigned)i))
		return -ENOENT;
	init_child(dir, out, kind);
	out->bar = (uint8_t)i;
	return 0;
}

static int bars_list(const struct sfs_obj *dir, unsigned kind,
		     tree_fill_fn fill, void *ctx)
{
	struct smartio_device_info di;
	struct sfs_obj o;
	char name[8];
	unsigned i;
	int rc;

	if (dev_dynamic(dir->dev, &di))
		return 0;
	for (i = 0; i < SMARTIO_MAX_BARS; i++) {
		if (!bar_visible(&di, i))
			continue;
		init_child(dir, &o, kind);
		o.bar = (uint8_t)i;
		snprintf(name, sizeof(name), "bar%u", i);
		rc = fill(ctx, name, &o);
		if (rc)
			return rc;
	}
	return 0;
}

static int vecs_lookup(const struct sfs_obj *dir, unsigned kind,
		       const char *name, struct sfs_obj *out)
{
	int i = parse_vec(name);

	if (i < 0 || !irq_routed_here(dir->dev, (unsigned)i))
		return -ENOENT;
	init_child(dir, out, kind);
	out->vec = (uint16_t)i;
	return 0;
}

/*
 * The vectors routed here, read once: asking irq_routed_here for each of
 * the SFS_IRQ_MAX possible ones took the fabric lock 2048 times a listing,
 * half the daemon's CPU in `ls -lR` of dev/.
 */
static int vecs_list(const struct sfs_obj *dir, unsigned kind,
		     tree_fill_fn fill, void *ctx)
{
	struct smartio_msi_vector v[SFS_IRQ_MAX];
	unsigned i, n = irq_vectors(dir->dev, v);
	struct sfs_obj o;
	char name[12];	/* any unsigned */
	int rc;

	for (i = 0; i < n; i++) {
		if (v[i].node != sfs.self)
			continue;
		init_child(dir, &o, kind);
		o.vec = (uint16_t)i;
		snprintf(name, sizeof(name), "%u", i);
		rc = fill(ctx, name, &o);
		if (rc)
			return rc;
	}
	return 0;
}

static int peers_lookup(const struct sfs_obj *dir, unsigned kind,
			const char *name, struct sfs_obj *out)
{
	int i = names_dev(name);

	if (i < 0)
		return -ENOENT;
	init_child(dir, out, kind);
	if (sfs_obj_name(out, names_devinfo((unsigned)i)->info.name))
		return -ENOENT;
	return tree_valid(out);
}

static int peers_list(const struct sfs_obj *dir, unsigned kind,
		      tree_fill_fn fill, void *ctx)
{
	unsigned peers[64];
	int n = smartio_peers(sfs.h, dir->dev, peers, 64), k, rc;
	struct sfs_obj o;

	for (k = 0; k < n && k < 64; k++) {
		init_child(dir, &o, kind);
		if (sfs_obj_name(&o, names_devinfo(peers[k])->info.name))
			continue;
		rc = fill(ctx, o.seg, &o);
		if (rc)
			return rc;
	}
	return 0;
}

static int peer_bars_lookup(const struct sfs_obj *dir, unsigned kind,
			    const char *name, struct sfs_obj *out)
{
	int i = tree_bar_name(name);

	if (i < 0)
		return -ENOENT;
	init_child(dir, out, kind);
	out->bar = (uint8_t)i;
	return tree_valid(out);
}

static int peer_bars_list(const struct sfs_obj *dir, unsigned kind,
			  tree_fill_fn fill, void *ctx)
{
	struct sfs_obj o;
	char name[8];
	unsigned i;
	int rc;

	for (i = 0; i < SMARTIO_MAX_BARS; i++) {
		init_child(dir, &o, kind);
		o.bar = (uint8_t)i;
		if (!peer_mapped(&o, (int)i))
			continue;
		snprintf(name, sizeof(name), "bar%u", i);
		rc = fill(ctx, name, &o);
		if (rc)
			return rc;
	}
	return 0;
}

static int mcasts_lookup(const struct sfs_obj *dir, unsigned kind,
			 const char *name, struct sfs_obj *out)
{
	init_child(dir, out, kind);
	if (sfs_obj_name(out, name))
		return -ENOENT;
	return mcast_valid(out);
}

static int mcasts_list(const struct sfs_obj *dir, unsigned kind,
		       tree_fill_fn fill, void *ctx)
{
	unsigned i, n = smartio_mcast_count(sfs.h);
	struct smartio_mcast_info mi;
	struct sfs_obj o;
	int rc;

	for (i = 0; i < n; i++) {
		if (smartio_mcast_info(sfs.h, i, &mi))
			continue;
		init_child(dir, &o, kind);
		if (sfs_obj_name(&o, mi.name))
			continue;
		rc = fill(ctx, o.seg, &o);
		if (rc)
			return rc;
	}
	return 0;
}

/* --- the tables ------------------------------------------------------- */
static const struct sfs_entry root_ents[] = {
	NAMED("self", K_SELF),
	NAMED("events", K_EVENTS),
	NAMED("nodes", K_NODES),
	NAMED("dev", K_DEVS),
	NAMED("seg", K_SEGIDX),
	NAMED("multicast", K_MCASTS),
};
static const struct sfs_entry nodes_ents[] = {
	FAMILY(K_NODE, nodes, "<node>"),
};
static const struct sfs_entry node_ents[] = {
	NAMED("adapters", K_ADAPTERS),
	NAMED("devices", K_NODE_DEVICES),
	NAMED("borrowed", K_BORROWED),
	NAMED("segments", K_SEGMENTS),
};
static const struct sfs_entry adapters_ents[] = {
	FAMILY(K_ADAPTER, adapters, "<ntb>"),
};
static const struct sfs_entry devices_ents[] = {
	FAMILY(K_NODE_DEVLINK, devs, "<dev>"),
};
static const struct sfs_entry borrowed_ents[] = {
	FAMILY(K_BORROWED_LINK, devs, "<dev>"),
};
static const struct sfs_entry segments_ents[] = {
	FAMILY(K_SEG, segments, "<seg>"),
};
static const struct sfs_entry seg_ents[] = {
	NAMED_IF("mem", K_SEG_MEM, mem_present),
	NAMED("dma", K_SEG_DMA),
};
static const struct sfs_entry segdma_ents[] = {
	FAMILY(K_SEG_DMA_DEV, devs, "<dev>"),
};
static const struct sfs_entry devs_ents[] = {
	FAMILY(K_DEV, devs, "<dev>"),
};
static const struct sfs_entry dev_ents[] = {
	FAMILY(K_DEV_BAR, bars, "bar<N>"),
	NAMED("irq", K_DEV_IRQ),
	NAMED("peers", K_DEV_PEERS),
};
static const struct sfs_entry segidx_ents[] = {
	FAMILY(K_SEGIDX_LINK, segidx, "<node>.<seg>"),
};
static const struct sfs_entry irq_ents[] = {
	FAMILY(K_DEV_IRQ_VEC, vecs, "<vec>"),
};
static const struct sfs_entry peers_ents[] = {
	FAMILY(K_DEV_PEER, peers, "<dev>"),
};
static const struct sfs_entry peer_ents[] = {
	FAMILY(K_DEV_PEER_BAR, peer_bars, "bar<N>"),
};
static const struct sfs_entry mcasts_ents[] = {
	FAMILY(K_MCAST, mcasts, "<group>"),
};
static const struct sfs_entry mcast_ents[] = {
	NAMED("dma", K_MCAST_DMA),
};
static const struct sfs_entry mcastdma_ents[] = {
	FAMILY(K_MCAST_DMA_DEV, devs, "<dev>"),
};

#define N(a) (uint8_t)(sizeof(a) / sizeof((a)[0]))
#define DIR(tbl, ...) { .fmt = S_IFDIR, .ents = tbl, .nents = N(tbl), __VA_ARGS__ }
#define LINK(dyn, ...) { .fmt = S_IFLNK, .dynamic = dyn, __VA_ARGS__ }
#define FILE_OF(grp, ...) { .fmt = S_IFREG, .group = &grp, __VA_ARGS__ }

static const struct kinddef kinds[] = {
	[K_ROOT] = DIR(root_ents),
	[K_SELF] = LINK(0),
	[K_EVENTS] = FILE_OF(events_group),
	[K_NODES] = DIR(nodes_ents),
	[K_NODE] = DIR(node_ents, .attr_kind = K_NODE_ATTR),
	[K_NODE_ATTR] = FILE_OF(node_attr_group),
	[K_ADAPTERS] = DIR(adapters_ents),
	[K_ADAPTER] = { .fmt = S_IFDIR, .attr_kind = K_ADAPTER_ATTR },
	[K_ADAPTER_ATTR] = FILE_OF(adapter_attr_group),
	[K_NODE_DEVICES] = DIR(devices_ents),
	[K_NODE_DEVLINK] = LINK(0),
	[K_BORROWED] = DIR(borrowed_ents),
	[K_BORROWED_LINK] = LINK(1, .valid = borrowed_valid),
	[K_SEGMENTS] = DIR(segments_ents, .dir_ops = &segments_dir_ops),
	[K_SEG] = DIR(seg_ents, .attr_kind = K_SEG_ATTR, .dynamic = 1,
		      .list_gone = 1, .valid = seg_valid),
	[K_SEG_ATTR] = FILE_OF(seg_attr_group, .dynamic = 1,
			       .valid = seg_valid),
	[K_SEG_MEM] = LINK(1, .valid = mem_valid),
	[K_SEG_DMA] = DIR(segdma_ents, .dynamic = 1, .valid = seg_valid,
			  .dir_ops = &segdma_dir_ops),
	[K_SEG_DMA_DEV] = { .fmt = S_IFDIR, .attr_kind = K_SEG_DMA_ATTR,
			     .dynamic = 1, .valid = segdma_valid },
	[K_SEG_DMA_ATTR] = FILE_OF(segdma_attr_group, .dynamic = 1,
				   .valid = segdma_valid),
	[K_DEVS] = DIR(devs_ents),
	[K_DEV] = DIR(dev_ents, .attr_kind = K_DEV_ATTR, .valid = dev_valid),
	[K_DEV_ATTR] = FILE_OF(dev_attr_group),
	[K_DEV_BAR] = LINK(0, .valid = bar_valid),	/* watched */
	[K_DEV_IRQ] = DIR(irq_ents),
	[K_DEV_PEERS] = DIR(peers_ents, .dir_ops = &peers_dir_ops),
	[K_SEGIDX] = DIR(segidx_ents),
	[K_SEGIDX_LINK] = LINK(1, .valid = seg_valid),
	[K_DEV_IRQ_VEC] = FILE_OF(irq_group, .dynamic = 1, .valid = irq_valid),
	[K_DEV_PEER] = DIR(peer_ents, .dynamic = 1, .valid = peer_valid),
	[K_DEV_PEER_BAR] = FILE_OF(peer_bar_group, .dynamic = 1,
				   .valid = peer_bar_valid),
	[K_MCASTS] = DIR(mcasts_ents, .dir_ops = &mcasts_dir_ops),
	[K_MCAST] = DIR(mcast_ents, .attr_kind = K_MCAST_ATTR, .dynamic = 1,
			.list_gone = 1, .valid = mcast_valid),
	[K_MCAST_ATTR] = FILE_OF(mcast_attr_group, .dynamic = 1,
				 .valid = mcast_valid),
	[K_MCAST_DMA] = DIR(mcastdma_ents, .dynamic = 1, .valid = mcast_valid,
			    .dir_ops = &mcastdma_dir_ops),
	[K_MCAST_DMA_DEV] = { .fmt = S_IFDIR, .attr_kind = K_MCAST_DMA_ATTR,
			      .dynamic = 1, .valid = mcastdma_valid },
	[K_MCAST_DMA_ATTR] = FILE_OF(mcastdma_attr_group, .dynamic = 1,
				     .valid = mcastdma_valid),
};

_Static_assert(N(kinds) == K_MCAST_DMA_ATTR + 1, "every kind has a record");

static const struct kinddef *kind_of(const struct sfs_obj *o)
{
	static const struct kinddef unknown = { .fmt = S_IFREG };

	return o->kind < N(kinds) ? &kinds[o->kind] : &unknown;
}

const struct sfs_attr_group *tree_attr_group(const struct sfs_obj *o)
{
	return kind_of(o)->group;
}

const struct sfs_attr *tree_attr(const struct sfs_obj *o)
{
	const struct sfs_attr_group *g = kind_of(o)->group;

	if (!g)
		return NULL;
	if (g->count == 1)	/* a special file, or one of a family */
		return &g->attrs[0];
	return o->attr < g->count ? &g->attrs[o->attr] : NULL;
}

int tree_is_dir(const struct sfs_obj *o)
{
	return kind_of(o)->fmt == S_IFDIR;
}

mode_t tree_mode(const struct sfs_obj *o)
{
	const struct kinddef *k = kind_of(o);
	const struct sfs_attr *a;

	if (k->fmt == S_IFDIR)
		return S_IFDIR | 0755;
	if (k->fmt == S_IFLNK)
		return S_IFLNK | 0777;
	a = tree_attr(o);
	return S_IFREG | (a ? a->mode : 0444);
}

enum sfs_scope tree_scope(const struct sfs_obj *o)
{
	const struct kinddef *k = kind_of(o);
	const struct sfs_attr *a;

	if (k->fmt == S_IFDIR)
		return k->dir_ops ? (enum sfs_scope)k->dir_ops->scope : SC_NONE;
	a = k->fmt == S_IFREG ? tree_attr(o) : NULL;
	return a ? (enum sfs_scope)a->scope : SC_NONE;
}

const struct sfs_dir_ops *tree_dir_ops(const struct sfs_obj *o)
{
	return kind_of(o)->dir_ops;
}

int tree_dynamic(const struct sfs_obj *o)
{
	return kind_of(o)->dynamic;
}

int tree_watched(const struct sfs_obj *o)
{
	/*
	 * A device's directory goes with its slot (a VF with its PF's
	 * sriov_numvfs, any device with its node on a real cluster): watched,
	 * so that its name may be cached for long (ops.c) and is still
	 * dropped the moment it goes.  So is a bar link, which comes and
	 * goes with this node's borrows of the device: the watcher drops it
	 * when another node's write ends the borrow, a write here at once
	 * (notify_wrote_in); its target is read anew at each readlink (no
	 * FUSE_CAP_CACHE_SYMLINKS).  Fixed for the object's life (inode.c
	 * links and unlinks by it).
	 */
	return tree_dynamic(o) || o->kind == K_DEV || o->kind == K_DEV_BAR;
}

int tree_valid(const struct sfs_obj *o)
{
	const struct kinddef *k = kind_of(o);

	return k->valid ? k->valid(o) : 0;
}

/* The group of dir's attribute files (their kind is its attr_kind). */
static const struct sfs_attr_group *dir_attrs(const struct sfs_obj *dir)
{
	unsigned ak = kind_of(dir)->attr_kind;

	return ak ? kinds[ak].group : NULL;
}

int tree_attr_file(const struct sfs_obj *dir, unsigned i,
		   struct sfs_obj *out)
{
	const struct sfs_attr_group *g = dir_attrs(dir);

	if (!tree_is_dir(dir) || !g || i >= g->count)
		return -ENOENT;
	init_child(dir, out, kind_of(dir)->attr_kind);
	out->attr = (uint8_t)i;
	return tree_watched(out) ? -ENOENT : 0;
}

int tree_is_attr_file(const struct sfs_obj *dir, const struct sfs_obj *o)
{
	struct sfs_obj a;

	/* What tree_child and tree_list make for record o->attr, exactly
	 * (field by field: the struct's tail padding is nobody's). */
	return !tree_attr_file(dir, o->attr, &a) && a.kind == o->kind &&
	       a.bar == o->bar && a.node == o->node &&
	       a.adapter == o->adapter && a.dev == o->dev &&
	       a.vec == o->vec && !strcmp(a.seg, o->seg);
}

/*
 * A named child is as its table says, and exists when its kind says so
 * (an attribute of a segment while the segment does); a family answers
 * for its names itself.
 */
int tree_child(const struct sfs_obj *dir, const char *name,
	       struct sfs_obj *out)
{
	const struct kinddef *k = kind_of(dir);
	const struct sfs_attr_group *g = dir_attrs(dir);
	unsigned i;
	int rc;

	if (k->fmt != S_IFDIR)
		return -ENOTDIR;
	if (strlen(name) >= SMARTIO_NAME_MAX * 2)
		return -ENOENT;
	for (i = 0; g && i < g->count; i++) {
		if (strcmp(g->attrs[i].name, name))
			continue;
		init_child(dir, out, k->attr_kind);
		out->attr = (uint8_t)i;
		if (g->attrs[i].present && !g->attrs[i].present(out))
			return -ENOENT;
		return tree_valid(out);
	}
	for (i = 0; i < k->nents; i++) {
		const struct sfs_entry *e = &k->ents[i];

		if (!e->name) {
			rc = e->lookup(dir, e->kind, name, out);
			if (rc != -ENOENT)
				return rc;
			continue;
		}
		if (strcmp(e->name, name))
			continue;
		init_child(dir, out, e->kind);
		return tree_valid(out);
	}
	return -ENOENT;
}

int tree_list(const struct sfs_obj *dir, tree_fill_fn fill, void *ctx)
{
	const struct kinddef *k = kind_of(dir);
	const struct sfs_attr_group *g = dir_attrs(dir);
	struct sfs_obj o;
	unsigned i;
	int rc;

	if (k->fmt != S_IFDIR)
		return -ENOTDIR;
	if (k->list_gone && tree_valid(dir))
		return -ENOENT;
	for (i = 0; g && i < g->count; i++) {
		init_child(dir, &o, k->attr_kind);
		o.attr = (uint8_t)i;
		if (g->attrs[i].present && !g->attrs[i].present(&o))
			continue;
		rc = fill(ctx, g->attrs[i].name, &o);
		if (rc)
			return rc;
	}
	for (i = 0; i < k->nents; i++) {
		const struct sfs_entry *e = &k->ents[i];

		if (!e->name) {
			rc = e->list(dir, e->kind, fill, ctx);
		} else {
			init_child(dir, &o, e->kind);
			if (e->present && !e->present(&o))
				continue;
			rc = fill(ctx, e->name, &o);
		}
		if (rc)
			return rc;
	}
	return 0;
}

static void print_dir(FILE *f, unsigned kind, char *path, size_t len,
		      size_t cap)
{
	const struct kinddef *k = &kinds[kind];
	const struct sfs_attr_group *g = k->attr_kind ? kinds[k->attr_kind].group
						     : NULL;
	unsigned i;

	for (i = 0; g && i < g->count; i++)
		fprintf(f, "%s%s\n", path, g->attrs[i].name);
	for (i = 0; i < k->nents; i++) {
		const struct sfs_entry *e = &k->ents[i];
		const char *nm = e->name ? e->name : e->pattern;
		int dir = kinds[e->kind].fmt == S_IFDIR;
		int n = snprintf(path + len, cap - len, "%s%s", nm,
				 dir ? "/" : "");

		if (n < 0 || (size_t)n >= cap - len)
			continue;
		if (e->name)
			fprintf(f, "%s\n", path);
		if (dir)
			print_dir(f, e->kind, path, len + (size_t)n, cap);
		path[len] = '\0';
	}
}

void tree_print(FILE *f)
{
	char path[256] = "";

	print_dir(f, K_ROOT, path, 0, sizeof(path));
}
