// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading: the text of every attribute file (sysfs style, one value per
 * file, newline-terminated) and the targets of the symbolic links.  Every
 * call asks libsmartio for the current state.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sfs.h"

#define CFG_CHUNK 4096u		/* largest config access per library call */

/* Linux IORESOURCE_* flags, as /sys/bus/pci/devices/.../resource shows. */
#define IORES_MEM 0x00000200u
#define IORES_PREFETCH 0x00002000u
#define IORES_SIZEALIGN 0x00040000u
#define IORES_MEM_64 0x00100000u
#define PCI_BAR_MEM_TYPE_64 0x4u
#define PCI_BAR_PREFETCH 0x8u

static void put_nodes(struct sbuf *sb, uint64_t mask)
{
	unsigned n;

	for (n = 0; n < names_nnodes() && n < 64; n++)
		if (mask >> n & 1)
			sb_printf(sb, "%s\n", names_nodeinfo(n)->name);
}

static const char *node_name(unsigned n)
{
	const struct sfs_nodeinfo *ni = names_nodeinfo(n);

	return ni ? ni->name : "?";
}

static int render_node(const struct sfs_obj *o, struct sbuf *sb)
{
	struct smartio_node_info ni;
	int rc = smartio_node_info(sfs.h, o->node, &ni);

	if (rc)
		return rc;
	if (o->attr == NA_ID)
		sb_printf(sb, "%" PRIu32 "\n", ni.id);
	else
		sb_puts(sb, ni.state == SMARTIO_NODE_UP ? "up\n" : "down\n");
	return 0;
}

/* hops: each node the adapter reaches and the switches on the way. */
static void put_hops(const struct sfs_obj *o, uint64_t peers, struct sbuf *sb)
{
	unsigned n;
	int hops;

	for (n = 0; n < names_nnodes() && n < 64; n++) {
		if (!(peers >> n & 1))
			continue;
		hops = smartio_path_hops(sfs.h, o->node, o->adapter, n);
		if (hops >= 0)
			sb_printf(sb, "%s %d\n", names_nodeinfo(n)->name, hops);
	}
}

/* The switch port the adapter is cabled to: name and port, or tables. */
static int put_switch_port(const struct smartio_adapter_info *ai,
			   unsigned attr, struct sbuf *sb)
{
	struct smartio_switch_info si;
	const struct smartio_port_info *p;
	int rc;

	if (ai->sw < 0)
		return 0;	/* a direct cable: nothing */
	rc = smartio_switch_info(sfs.h, (unsigned)ai->sw, &si);
	if (rc)
		return rc;
	p = &si.port[ai->port < SMARTIO_MAX_SWITCH_PORTS ? ai->port : 0];
	if (attr == AA_SWITCH)
		sb_printf(sb, "%s %u\n", si.name, ai->port);
	else if (attr == AA_SWITCH_REQUESTERS)
		sb_printf(sb, "%u %u\n", p->req_used, p->req_total);
	else
		sb_printf(sb, "%u %u\n", p->req_in_used, p->req_in_total);
	return 0;
}

static int render_adapter(const struct sfs_obj *o, struct sbuf *sb)
{
	struct smartio_adapter_info ai;
	int rc = smartio_adapter_info(sfs.h, o->node, o->adapter, &ai);

	if (rc)
		return rc;
	switch (o->attr) {
	case AA_LINK:
		sb_puts(sb, ai.link_up ? "up\n" : "down\n");
		break;
	case AA_PEERS:
		put_nodes(sb, ai.peers);
		break;
	case AA_LUTS:
		sb_printf(sb, "%u %u\n", ai.luts_used, ai.luts_total);
		break;
	case AA_REQUESTERS:
		sb_printf(sb, "%u %u\n", ai.req_used, ai.req_total);
		break;
	case AA_REQUESTERS_IN:
		sb_printf(sb, "%u %u\n", ai.req_in_used, ai.req_in_total);
		break;
	case AA_HOPS:
		put_hops(o, ai.peers, sb);
		break;
	case AA_SWITCH:
	case AA_SWITCH_REQUESTERS:
	case AA_SWITCH_REQUESTERS_IN:
		return put_switch_port(&ai, o->attr, sb);
	default:
		sb_printf(sb, "%" PRIu64 "\n", ai.window);
		break;
	}
	return 0;
}

static int render_seg(const struct sfs_obj *o, struct sbuf *sb)
{
	struct smartio_segment_info si;
	uint64_t addr;
	int rc;

	if (o->kind == K_SEG_DMA_ATTR) {
		rc = smartio_segment_dma_addr(sfs.h, o->node, o->seg, o->dev,
					      &addr);
		if (rc)
			return rc;
		sb_printf(sb, "0x%" PRIx64 "\n", addr);
		return 0;
	}
	rc = tree_segment(o->node, o->seg, &si);
	if (rc)
		return rc;
	switch (o->attr) {
	case SA_SIZE:
		sb_printf(sb, "%" PRIu64 "\n", si.sized ? si.size : 0);
		break;
	case SA_AVAILABLE:
		sb_printf(sb, "%d\n", si.available ? 1 : 0);
		break;
	default:
		put_nodes(sb, si.attached);
		break;
	}
	return 0;
}

static void render_resource(const struct smartio_device_info *di,
			    struct sbuf *sb)
{
	unsigned b;

	for (b = 0; b < SMARTIO_MAX_BARS; b++) {
		const struct smartio_bar_info *bi = &di->bar[b];
		unsigned long long start = 0, end = 0, flags = 0;

		if (bi->size) {
			start = bi->addr;
			end = bi->addr + bi->size - 1;
			flags = IORES_MEM | IORES_SIZEALIGN;
			if (bi->flags & 1)
				flags |= IORES_MEM_64 | PCI_BAR_MEM_TYPE_64;
			if (bi->flags & 2)
				flags |= IORES_PREFETCH | PCI_BAR_PREFETCH;
		}
		sb_printf(sb, "0x%016llx 0x%016llx 0x%016llx\n", start, end,
			  flags);
	}
}

static int render_dma_windows(unsigned dev, struct sbuf *sb)
{
	struct smartio_dma_window w[64];
	int n = smartio_dma_windows(sfs.h, dev, w, 64), i;

	if (n < 0)
		return n;
	for (i = 0; i < n && i < 64; i++)
		sb_printf(sb, "%s 0x%" PRIx64 " %" PRIu64 "\n",
			  node_name(w[i].node), w[i].iova, w[i].size);
	return 0;
}

static int render_msi(unsigned dev, struct sbuf *sb)
{
	struct smartio_msi_vector v[SFS_IRQ_MAX];
	int n = smartio_msi_vectors(sfs.h, dev, v, SFS_IRQ_MAX), i;

	if (n < 0)
		return n;
	for (i = 0; i < n && i < SFS_IRQ_MAX; i++)
		sb_printf(sb, "%u %s 0x%" PRIx64 " 0x%" PRIx32 "\n", v[i].vec,
			  node_name(v[i].node), v[i].addr, v[i].data);
	return 0;
}

static int render_peer_bar(const struct sfs_obj *o, struct sbuf *sb)
{
	int peer = names_dev(o->seg), rc;
	uint64_t addr;

	if (peer < 0)
		return -ENOENT;
	rc = smartio_peer_addr(sfs.h, o->dev, (unsigned)peer, o->bar, &addr);
	if (rc)
		return rc;
	sb_printf(sb, "0x%" PRIx64 "\n", addr);
	return 0;
}

int irq_routed_here(unsigned dev, unsigned vec)
{
	struct smartio_msi_vector v[SFS_IRQ_MAX];
	int n = smartio_msi_vectors(sfs.h, dev, v, SFS_IRQ_MAX);

	return n > 0 && vec < (unsigned)n && vec < SFS_IRQ_MAX &&
	       v[vec].node == sfs.self;
}

static int render_dev(const struct sfs_obj *o, struct sbuf *sb)
{
	struct smartio_device_info di;
	const struct smartio_dev_stats *st = &di.stats;
	int rc = smartio_device_info(sfs.h, o->dev, &di);

	if (rc)
		return rc;
	di.name[SMARTIO_NAME_MAX - 1] = '\0';
	di.bdf[sizeof(di.bdf) - 1] = '\0';
	switch (o->attr) {
	case DA_FDID: sb_printf(sb, "0x%08" PRIx32 "\n", di.fdid); break;
	case DA_NODE: sb_printf(sb, "%s\n", node_name(di.node)); break;
	case DA_BDF: sb_printf(sb, "%s\n", di.bdf); break;
	case DA_VENDOR: sb_printf(sb, "0x%04x\n", di.vendor); break;
	case DA_DEVICE: sb_printf(sb, "0x%04x\n", di.device); break;
	case DA_CLASS: sb_printf(sb, "0x%06" PRIx32 "\n", di.class_code); break;
	case DA_SUBSYS_VENDOR: sb_printf(sb, "0x%04x\n", di.subsys_vendor); break;
	case DA_SUBSYS_DEVICE: sb_printf(sb, "0x%04x\n", di.subsys_device); break;
	case DA_REVISION: sb_printf(sb, "0x%02x\n", di.revision); break;
	case DA_RESOURCE: render_resource(&di, sb); break;
	case DA_LEND:
		if (di.policy == SMARTIO_LEND_ALL)
			sb_puts(sb, "all\n");
		else if (di.policy == SMARTIO_LEND_LIST)
			put_nodes(sb, di.lend_mask);
		else
			sb_puts(sb, "none\n");
		break;
	case DA_BORROW: put_nodes(sb, di.borrowers); break;
	case DA_MODE:
		sb_puts(sb, di.mode == SMARTIO_SHARED ? "shared\n" : "exclusive\n");
		break;
	case DA_STATE:
		sb_puts(sb, di.state == SMARTIO_DEV_BORROWED ? "borrowed\n" :
			    di.state == SMARTIO_DEV_AVAILABLE ? "available\n" :
							       "local\n");
		break;
	case DA_DMA_WINDOW: return render_dma_windows(o->dev, sb);
	case DA_MSI: return render_msi(o->dev, sb);
	case DA_STATS:
		sb_printf(sb, "borrows %" PRIu64 "\nreturns %" PRIu64
			  "\nreclaims %" PRIu64 "\ndenied %" PRIu64
			  "\ncfg_reads %" PRIu64 "\ncfg_writes %" PRIu64
			  "\ndma_ops %" PRIu64 "\ndma_faults %" PRIu64
			  "\nmsi %" PRIu64 "\ndriver_errors %" PRIu64 "\n",
			  st->borrows, st->returns, st->reclaims, st->denied,
			  st->cfg_reads, st->cfg_writes, st->dma_ops,
			  st->dma_faults, st->msi, st->driver_errors);
		break;
	default:
		return -EACCES;	/* write-only (return, reclaim) or config */
	}
	return 0;
}

int attr_render(const struct sfs_obj *o, struct sbuf *sb)
{
	int rc;

	sb_reset(sb);
	switch (o->kind) {
	case K_NODE_ATTR: rc = render_node(o, sb); break;
	case K_ADAPTER_ATTR: rc = render_adapter(o, sb); break;
	case K_SEG_ATTR: case K_SEG_DMA_ATTR: rc = render_seg(o, sb); break;
	case K_DEV_ATTR: rc = render_dev(o, sb); break;
	case K_DEV_PEER_BAR: rc = render_peer_bar(o, sb); break;
	default: rc = -EINVAL; break;
	}
	if (!rc && sb->oom)
		rc = -ENOMEM;
	return rc;
}

int attr_link(const struct sfs_obj *o, char *buf, size_t len)
{
	struct smartio_segment_info si;
	const struct sfs_dev *d;
	uint64_t size;
	int n;

	switch (o->kind) {
	case K_SELF:
		n = snprintf(buf, len, "nodes/%s", node_name(sfs.self));
		break;
	case K_NODE_DEVLINK:
	case K_BORROWED_LINK:
		d = names_devinfo(o->dev);
		if (!d)
			return -ENOENT;
		n = snprintf(buf, len, "../../../dev/%s", d->info.name);
		break;
	case K_SEGIDX_LINK:
		n = snprintf(buf, len, "../nodes/%s/segments/%s",
			     node_name(o->node), o->seg);
		break;
	case K_DEV_BAR:
		return smartio_resolve_bar(sfs.h, sfs.self, o->dev, o->bar, buf,
					   len, &size);
	case K_SEG_MEM:
		/* Only a write to `attach` attaches (holds.c says why). */
		if (o->node != sfs.self &&
		    (tree_segment(o->node, o->seg, &si) ||
		     !(si.attached >> sfs.self & 1)))
			return -ENOLINK;
		return smartio_resolve_segment(sfs.h, sfs.self, o->node, o->seg,
					       buf, len, &size);
	default:
		return -EINVAL;
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int attr_config_read(const struct sfs_obj *o, char *buf, size_t size,
		     off_t off)
{
	const struct sfs_dev *d = names_devinfo(o->dev);
	size_t done = 0;
	int rc;

	if (!d || off < 0)
		return -EINVAL;
	if ((uint64_t)off >= d->info.config_size)
		return 0;
	if (size > d->info.config_size - (size_t)off)
		size = d->info.config_size - (size_t)off;
	while (done < size) {
		uint32_t chunk = size - done > CFG_CHUNK ? CFG_CHUNK
							 : (uint32_t)(size - done);

		rc = smartio_config_read(sfs.h, o->dev, sfs.self,
					 (uint32_t)((size_t)off + done),
					 buf + done, chunk);
		if (rc < 0)
			return done ? (int)done : rc;
		if (rc == 0)
			break;
		done += (size_t)rc;
	}
	return (int)done;
}

off_t attr_size(const struct sfs_obj *o)
{
	const struct sfs_dev *d;

	if (o->kind == K_EVENTS)
		return 0;
	if (o->kind == K_DEV_IRQ_VEC)
		return sizeof(uint32_t);
	if (o->kind == K_DEV_ATTR && o->attr == DA_CONFIG) {
		d = names_devinfo(o->dev);
		return d ? (off_t)d->info.config_size : 0;
	}
	return SFS_ATTR_SIZE;
}
