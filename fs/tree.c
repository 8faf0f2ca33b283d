// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The path model of /smartio (smartio(7)): what each name under a
 * directory is, whether it exists in the current cluster state, and the
 * listing of every directory.  Objects are small values (struct sfs_obj);
 * nothing here caches cluster state.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sfs.h"

static const struct sfs_attrdef node_attrs[NA_COUNT] = {
	[NA_ID] = { "id", 0444 },
	[NA_STATE] = { "state", 0444 },
};

static const struct sfs_attrdef adapter_attrs[AA_COUNT] = {
	[AA_LINK] = { "link", 0644 },	/* writable: simulator fault injection */
	[AA_PEERS] = { "peers", 0444 },
	[AA_LUTS] = { "luts", 0444 },
	[AA_REQUESTERS] = { "requesters", 0444 },
	[AA_WINDOW] = { "window", 0444 },
	[AA_REQUESTERS_IN] = { "requesters_in", 0444 },
	[AA_HOPS] = { "hops", 0444 },
	[AA_SWITCH] = { "switch", 0444 },
	[AA_SWITCH_REQUESTERS] = { "switch_requesters", 0444 },
	[AA_SWITCH_REQUESTERS_IN] = { "switch_requesters_in", 0444 },
};

static const struct sfs_attrdef seg_attrs[SA_COUNT] = {
	[SA_SIZE] = { "size", 0644 },
	[SA_AVAILABLE] = { "available", 0644 },
	[SA_ATTACHED] = { "attached", 0444 },
	[SA_ATTACH] = { "attach", 0200 },
	[SA_DETACH] = { "detach", 0200 },
};

static const struct sfs_attrdef segdma_attrs[MA_COUNT] = {
	[MA_IOADDR] = { "ioaddr", 0444 },
};

static const struct sfs_attrdef dev_attrs[DA_COUNT] = {
	[DA_FDID] = { "fdid", 0444 },
	[DA_NODE] = { "node", 0444 },
	[DA_BDF] = { "bdf", 0444 },
	[DA_VENDOR] = { "vendor", 0444 },
	[DA_DEVICE] = { "device", 0444 },
	[DA_CLASS] = { "class", 0444 },
	[DA_SUBSYS_VENDOR] = { "subsystem_vendor", 0444 },
	[DA_SUBSYS_DEVICE] = { "subsystem_device", 0444 },
	[DA_REVISION] = { "revision", 0444 },
	[DA_CONFIG] = { "config", 0644 },
	[DA_RESOURCE] = { "resource", 0444 },
	[DA_LEND] = { "lend", 0644 },
	[DA_BORROW] = { "borrow", 0644 },
	[DA_RETURN] = { "return", 0200 },
	[DA_RECLAIM] = { "reclaim", 0200 },
	[DA_MODE] = { "mode", 0644 },
	[DA_STATE] = { "state", 0444 },
	[DA_DMA_WINDOW] = { "dma_window", 0444 },
	[DA_MSI] = { "msi", 0444 },
	[DA_STATS] = { "stats", 0444 },
};

static const struct sfs_attrdef events_def = { "events", 0444 };
static const struct sfs_attrdef irq_def = { "irq", 0444 };
static const struct sfs_attrdef peer_bar_def = { "bar", 0444 };

struct table {
	const struct sfs_attrdef *defs;
	unsigned count;
};

static struct table attr_table(unsigned kind)
{
	struct table t = { NULL, 0 };

	switch (kind) {
	case K_NODE_ATTR: t.defs = node_attrs; t.count = NA_COUNT; break;
	case K_ADAPTER_ATTR: t.defs = adapter_attrs; t.count = AA_COUNT; break;
	case K_SEG_ATTR: t.defs = seg_attrs; t.count = SA_COUNT; break;
	case K_SEG_DMA_ATTR: t.defs = segdma_attrs; t.count = MA_COUNT; break;
	case K_DEV_ATTR: t.defs = dev_attrs; t.count = DA_COUNT; break;
	default: break;
	}
	return t;
}

const struct sfs_attrdef *tree_attrdef(const struct sfs_obj *o)
{
	struct table t;

	if (o->kind == K_EVENTS)
		return &events_def;
	if (o->kind == K_DEV_IRQ_VEC)
		return &irq_def;
	if (o->kind == K_DEV_PEER_BAR)
		return &peer_bar_def;
	t = attr_table(o->kind);
	return o->attr < t.count ? &t.defs[o->attr] : NULL;
}

static int find_attr(unsigned kind, const char *name)
{
	struct table t = attr_table(kind);
	unsigned i;

	for (i = 0; i < t.count; i++)
		if (!strcmp(t.defs[i].name, name))
			return (int)i;
	return -ENOENT;
}

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

/* "bar<N>" with N a single digit below SMARTIO_MAX_BARS. */
static int parse_bar(const char *name)
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

int tree_is_dir(const struct sfs_obj *o)
{
	switch (o->kind) {
	case K_ROOT: case K_NODES: case K_NODE: case K_ADAPTERS: case K_ADAPTER:
	case K_NODE_DEVICES: case K_BORROWED: case K_SEGMENTS: case K_SEG:
	case K_SEG_DMA: case K_SEG_DMA_DEV: case K_DEVS: case K_DEV:
	case K_DEV_IRQ: case K_DEV_PEERS: case K_SEGIDX: case K_DEV_PEER:
		return 1;
	default:
		return 0;
	}
}

static int is_link(const struct sfs_obj *o)
{
	switch (o->kind) {
	case K_SELF: case K_NODE_DEVLINK: case K_BORROWED_LINK: case K_SEG_MEM:
	case K_DEV_BAR: case K_SEGIDX_LINK:
		return 1;
	default:
		return 0;
	}
}

mode_t tree_mode(const struct sfs_obj *o)
{
	const struct sfs_attrdef *d;

	if (tree_is_dir(o))
		return S_IFDIR | 0755;
	if (is_link(o))
		return S_IFLNK | 0777;
	d = tree_attrdef(o);
	return S_IFREG | (d ? d->mode : 0444);
}

int tree_dynamic(const struct sfs_obj *o)
{
	switch (o->kind) {
	case K_BORROWED_LINK: case K_SEG: case K_SEG_ATTR: case K_SEG_MEM:
	case K_SEG_DMA: case K_SEG_DMA_DEV: case K_SEG_DMA_ATTR: case K_DEV_BAR:
	case K_SEGIDX_LINK: case K_DEV_IRQ_VEC: case K_DEV_PEER:
	case K_DEV_PEER_BAR:
		return 1;
	default:
		return 0;
	}
}

int tree_valid(const struct sfs_obj *o)
{
	struct smartio_segment_info si;
	struct smartio_device_info di;
	uint64_t addr;

	switch (o->kind) {
	case K_BORROWED_LINK:
		if (dev_dynamic(o->dev, &di))
			return -ENOENT;
		return di.borrowers >> o->node & 1 ? 0 : -ENOENT;
	case K_DEV_BAR:
		if (dev_dynamic(o->dev, &di))
			return -ENOENT;
		return bar_visible(&di, o->bar) ? 0 : -ENOENT;
	case K_SEG: case K_SEG_ATTR: case K_SEG_DMA: case K_SEGIDX_LINK:
		return tree_segment(o->node, o->seg, &si);
	case K_SEG_MEM:
		if (tree_segment(o->node, o->seg, &si))
			return -ENOENT;
		return mem_visible(&si) ? 0 : -ENOENT;
	case K_SEG_DMA_DEV: case K_SEG_DMA_ATTR:
		return smartio_segment_dma_addr(sfs.h, o->node, o->seg, o->dev,
						&addr) ? -ENOENT : 0;
	case K_DEV_IRQ_VEC:
		return irq_routed_here(o->dev, o->attr) ? 0 : -ENOENT;
	case K_DEV_PEER:
		return peer_mapped(o, -1) ? 0 : -ENOENT;
	case K_DEV_PEER_BAR:
		return peer_mapped(o, o->bar) ? 0 : -ENOENT;
	default:
		return 0;
	}
}

static void init_child(const struct sfs_obj *dir, struct sfs_obj *out,
		       unsigned kind)
{
	*out = *dir;
	out->kind = (uint8_t)kind;
}

int tree_child(const struct sfs_obj *dir, const char *name,
	       struct sfs_obj *out)
{
	struct smartio_segment_info si;
	struct smartio_device_info di;
	int i;

	if (!tree_is_dir(dir))
		return -ENOTDIR;
	if (strlen(name) >= SMARTIO_NAME_MAX * 2)
		return -ENOENT;
	switch (dir->kind) {
	case K_ROOT:
		memset(out, 0, sizeof(*out));
		if (!strcmp(name, "self"))
			out->kind = K_SELF;
		else if (!strcmp(name, "events"))
			out->kind = K_EVENTS;
		else if (!strcmp(name, "nodes"))
			out->kind = K_NODES;
		else if (!strcmp(name, "dev"))
			out->kind = K_DEVS;
		else if (!strcmp(name, "seg"))
			out->kind = K_SEGIDX;
		else
			return -ENOENT;
		return 0;
	case K_NODES:
		i = names_node(name);
		if (i < 0)
			return -ENOENT;
		init_child(dir, out, K_NODE);
		out->node = (uint16_t)i;
		return 0;
	case K_NODE:
		if (!strcmp(name, "adapters"))
			init_child(dir, out, K_ADAPTERS);
		else if (!strcmp(name, "devices"))
			init_child(dir, out, K_NODE_DEVICES);
		else if (!strcmp(name, "borrowed"))
			init_child(dir, out, K_BORROWED);
		else if (!strcmp(name, "segments"))
			init_child(dir, out, K_SEGMENTS);
		else if ((i = find_attr(K_NODE_ATTR, name)) >= 0) {
			init_child(dir, out, K_NODE_ATTR);
			out->attr = (uint8_t)i;
		} else
			return -ENOENT;
		return 0;
	case K_ADAPTERS:
		i = names_adapter(dir->node, name);
		if (i < 0)
			return -ENOENT;
		init_child(dir, out, K_ADAPTER);
		out->adapter = (uint16_t)i;
		return 0;
	case K_ADAPTER:
		i = find_attr(K_ADAPTER_ATTR, name);
		if (i < 0)
			return -ENOENT;
		init_child(dir, out, K_ADAPTER_ATTR);
		out->attr = (uint8_t)i;
		return 0;
	case K_NODE_DEVICES:
		i = names_dev(name);
		if (i < 0 || names_devinfo((unsigned)i)->info.node != dir->node)
			return -ENOENT;
		init_child(dir, out, K_NODE_DEVLINK);
		out->dev = (uint32_t)i;
		return 0;
	case K_BORROWED:
		i = names_dev(name);
		if (i < 0 || dev_dynamic((unsigned)i, &di) ||
		    !(di.borrowers >> dir->node & 1))
			return -ENOENT;
		init_child(dir, out, K_BORROWED_LINK);
		out->dev = (uint32_t)i;
		return 0;
	case K_SEGMENTS:
		if (tree_segment(dir->node, name, &si))
			return -ENOENT;
		init_child(dir, out, K_SEG);
		return sfs_obj_name(out, name);
	case K_SEG:
		if (tree_segment(dir->node, dir->seg, &si))
			return -ENOENT;
		if (!strcmp(name, "dma")) {
			init_child(dir, out, K_SEG_DMA);
			return 0;
		}
		if (!strcmp(name, "mem")) {
			if (!mem_visible(&si))
				return -ENOENT;
			init_child(dir, out, K_SEG_MEM);
			return 0;
		}
		i = find_attr(K_SEG_ATTR, name);
		if (i < 0)
			return -ENOENT;
		init_child(dir, out, K_SEG_ATTR);
		out->attr = (uint8_t)i;
		return 0;
	case K_SEG_DMA:
		i = names_dev(name);
		if (i < 0)
			return -ENOENT;
		init_child(dir, out, K_SEG_DMA_DEV);
		out->dev = (uint32_t)i;
		return tree_valid(out);
	case K_SEG_DMA_DEV:
		i = find_attr(K_SEG_DMA_ATTR, name);
		if (i < 0)
			return -ENOENT;
		init_child(dir, out, K_SEG_DMA_ATTR);
		out->attr = (uint8_t)i;
		return tree_valid(out);
	case K_DEVS:
		i = names_dev(name);
		if (i < 0)
			return -ENOENT;
		memset(out, 0, sizeof(*out));
		out->kind = K_DEV;
		out->dev = (uint32_t)i;
		return 0;
	case K_DEV:
		if (!strcmp(name, "irq")) {
			init_child(dir, out, K_DEV_IRQ);
			return 0;
		}
		if (!strcmp(name, "peers")) {
			init_child(dir, out, K_DEV_PEERS);
			return 0;
		}
		i = parse_bar(name);
		if (i >= 0) {
			if (dev_dynamic(dir->dev, &di) || !bar_visible(&di, (unsigned)i))
				return -ENOENT;
			init_child(dir, out, K_DEV_BAR);
			out->bar = (uint8_t)i;
			return 0;
		}
		i = find_attr(K_DEV_ATTR, name);
		if (i < 0)
			return -ENOENT;
		init_child(dir, out, K_DEV_ATTR);
		out->attr = (uint8_t)i;
		return 0;
	case K_SEGIDX:
		memset(out, 0, sizeof(*out));
		out->kind = K_SEGIDX_LINK;
		return parse_segidx(name, out);
	case K_DEV_IRQ:
		i = parse_vec(name);
		if (i < 0 || !irq_routed_here(dir->dev, (unsigned)i))
			return -ENOENT;
		init_child(dir, out, K_DEV_IRQ_VEC);
		out->attr = (uint8_t)i;
		return 0;
	case K_DEV_PEERS:
		i = names_dev(name);
		if (i < 0)
			return -ENOENT;
		init_child(dir, out, K_DEV_PEER);
		if (sfs_obj_name(out, names_devinfo((unsigned)i)->info.name))
			return -ENOENT;
		return tree_valid(out);
	case K_DEV_PEER:
		i = parse_bar(name);
		if (i < 0)
			return -ENOENT;
		init_child(dir, out, K_DEV_PEER_BAR);
		out->bar = (uint8_t)i;
		return tree_valid(out);
	default:
		return -ENOENT;
	}
}

static int list_table(const struct sfs_obj *dir, unsigned kind,
		      tree_fill_fn fill, void *ctx)
{
	struct table t = attr_table(kind);
	struct sfs_obj o;
	unsigned i;
	int rc;

	for (i = 0; i < t.count; i++) {
		init_child(dir, &o, kind);
		o.attr = (uint8_t)i;
		rc = fill(ctx, t.defs[i].name, &o);
		if (rc)
			return rc;
	}
	return 0;
}

static int list_segments(const struct sfs_obj *dir, tree_fill_fn fill,
			 void *ctx)
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
		if (dir->kind == K_SEGMENTS && si.owner != dir->node)
			continue;
		if (si.owner >= names_nnodes())
			continue;
		memset(&o, 0, sizeof(o));
		o.node = (uint16_t)si.owner;
		if (sfs_obj_name(&o, si.name))
			continue;
		if (dir->kind == K_SEGMENTS) {
			o.kind = K_SEG;
			rc = fill(ctx, si.name, &o);
		} else {
			o.kind = K_SEGIDX_LINK;
			snprintf(name, sizeof(name), "%s.%s",
				 names_nodeinfo(si.owner)->name, si.name);
			rc = fill(ctx, name, &o);
		}
		if (rc)
			return rc;
	}
	return 0;
}

static int list_devs(const struct sfs_obj *dir, unsigned kind,
		     tree_fill_fn fill, void *ctx)
{
	const struct sfs_nodeinfo *ni = names_nodeinfo(dir->node);
	unsigned i, n = kind == K_NODE_DEVLINK ? (ni ? ni->ndevs : 0)
					       : names_ndevs();
	struct smartio_device_info di;
	struct sfs_obj o;
	int rc;

	for (i = 0; i < n; i++) {
		unsigned dev = kind == K_NODE_DEVLINK ? ni->devs[i] : i;

		if (kind == K_BORROWED_LINK &&
		    (dev_dynamic(dev, &di) || !(di.borrowers >> dir->node & 1)))
			continue;
		if (kind == K_SEG_DMA_DEV) {
			uint64_t addr;

			if (smartio_segment_dma_addr(sfs.h, dir->node, dir->seg,
						     dev, &addr))
				continue;
		}
		if (kind == K_DEV)
			memset(&o, 0, sizeof(o));
		else
			o = *dir;
		o.kind = (uint8_t)kind;
		o.dev = dev;
		rc = fill(ctx, names_devinfo(dev)->info.name, &o);
		if (rc)
			return rc;
	}
	return 0;
}

int tree_list(const struct sfs_obj *dir, tree_fill_fn fill, void *ctx)
{
	static const char *const root[] = { "self", "events", "nodes", "dev",
					    "seg" };
	static const char *const node[] = { "adapters", "devices", "borrowed",
					    "segments" };
	struct smartio_segment_info si;
	struct smartio_device_info di;
	struct sfs_obj o;
	char name[8];
	unsigned i;
	int rc;

	switch (dir->kind) {
	case K_ROOT:
	case K_NODE:
		if (dir->kind == K_NODE) {
			rc = list_table(dir, K_NODE_ATTR, fill, ctx);
			if (rc)
				return rc;
		}
		for (i = 0; i < (dir->kind == K_ROOT ? 5u : 4u); i++) {
			const char *nm = dir->kind == K_ROOT ? root[i] : node[i];

			if (tree_child(dir, nm, &o) == 0 && (rc = fill(ctx, nm, &o)))
				return rc;
		}
		return 0;
	case K_NODES:
		for (i = 0; i < names_nnodes(); i++) {
			init_child(dir, &o, K_NODE);
			o.node = (uint16_t)i;
			rc = fill(ctx, names_nodeinfo(i)->name, &o);
			if (rc)
				return rc;
		}
		return 0;
	case K_ADAPTERS:
		for (i = 0; i < names_nodeinfo(dir->node)->nadapters; i++) {
			init_child(dir, &o, K_ADAPTER);
			o.adapter = (uint16_t)i;
			rc = fill(ctx, names_nodeinfo(dir->node)->adapters[i], &o);
			if (rc)
				return rc;
		}
		return 0;
	case K_ADAPTER:
		return list_table(dir, K_ADAPTER_ATTR, fill, ctx);
	case K_NODE_DEVICES:
		return list_devs(dir, K_NODE_DEVLINK, fill, ctx);
	case K_BORROWED:
		return list_devs(dir, K_BORROWED_LINK, fill, ctx);
	case K_DEVS:
		return list_devs(dir, K_DEV, fill, ctx);
	case K_SEGMENTS:
	case K_SEGIDX:
		return list_segments(dir, fill, ctx);
	case K_SEG:
		if (tree_segment(dir->node, dir->seg, &si))
			return -ENOENT;
		rc = list_table(dir, K_SEG_ATTR, fill, ctx);
		if (!rc && mem_visible(&si)) {
			init_child(dir, &o, K_SEG_MEM);
			rc = fill(ctx, "mem", &o);
		}
		if (!rc) {
			init_child(dir, &o, K_SEG_DMA);
			rc = fill(ctx, "dma", &o);
		}
		return rc;
	case K_SEG_DMA:
		return list_devs(dir, K_SEG_DMA_DEV, fill, ctx);
	case K_SEG_DMA_DEV:
		return list_table(dir, K_SEG_DMA_ATTR, fill, ctx);
	case K_DEV:
		rc = list_table(dir, K_DEV_ATTR, fill, ctx);
		if (rc)
			return rc;
		if (dev_dynamic(dir->dev, &di) == 0) {
			for (i = 0; i < SMARTIO_MAX_BARS; i++) {
				if (!bar_visible(&di, i))
					continue;
				init_child(dir, &o, K_DEV_BAR);
				o.bar = (uint8_t)i;
				snprintf(name, sizeof(name), "bar%u", i);
				rc = fill(ctx, name, &o);
				if (rc)
					return rc;
			}
		}
		init_child(dir, &o, K_DEV_IRQ);
		rc = fill(ctx, "irq", &o);
		if (!rc) {
			init_child(dir, &o, K_DEV_PEERS);
			rc = fill(ctx, "peers", &o);
		}
		return rc;
	case K_DEV_IRQ:
		for (i = 0; i < SFS_IRQ_MAX; i++) {
			if (!irq_routed_here(dir->dev, i))
				continue;
			init_child(dir, &o, K_DEV_IRQ_VEC);
			o.attr = (uint8_t)i;
			snprintf(name, sizeof(name), "%u", i);
			rc = fill(ctx, name, &o);
			if (rc)
				return rc;
		}
		return 0;
	case K_DEV_PEERS: {
		unsigned peers[64];
		int n = smartio_peers(sfs.h, dir->dev, peers, 64), k;

		for (k = 0; k < n && k < 64; k++) {
			init_child(dir, &o, K_DEV_PEER);
			if (sfs_obj_name(&o, names_devinfo(peers[k])->info.name))
				continue;
			rc = fill(ctx, o.seg, &o);
			if (rc)
				return rc;
		}
		return 0;
	}
	case K_DEV_PEER:
		for (i = 0; i < SMARTIO_MAX_BARS; i++) {
			init_child(dir, &o, K_DEV_PEER_BAR);
			o.bar = (uint8_t)i;
			if (!peer_mapped(&o, (int)i))
				continue;
			snprintf(name, sizeof(name), "bar%u", i);
			rc = fill(ctx, name, &o);
			if (rc)
				return rc;
		}
		return 0;
	default:
		return -ENOTDIR;
	}
}
