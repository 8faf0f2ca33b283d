// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The attribute files: one table per directory kind, one record per file
 * (name, mode, show, store), each beside the functions that read and write
 * it, as sysfs declares a DEVICE_ATTR_RW beside its show and store.  A
 * group loads what its files show in one library call; a show renders the
 * text (sysfs style, one value per file, newline-terminated); a store gets
 * one value that writes.c has framed and hands it to libsmartio.  Also the
 * targets of the symbolic links.  Every call asks for the current state.
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

/* A show function printing one line made of what the group loaded. */
#define SHOW_LINE(fn, fmt, ...)						\
	static int fn(const struct sfs_obj *o, const union sfs_info *in, \
		      struct sbuf *sb)					\
	{								\
		(void)o;						\
		sb_printf(sb, fmt "\n", __VA_ARGS__);			\
		return 0;						\
	}
/* One printing the names of the nodes in a mask, a line each. */
#define SHOW_NODES(fn, mask)						\
	static int fn(const struct sfs_obj *o, const union sfs_info *in, \
		      struct sbuf *sb)					\
	{								\
		(void)o;						\
		put_nodes(sb, mask);					\
		return 0;						\
	}

/* --- nodes/<node>/ --------------------------------------------------- */
static int node_load(const struct sfs_obj *o, union sfs_info *in)
{
	return smartio_node_info(sfs.h, o->node, &in->node);
}

SHOW_LINE(node_id_show, "%" PRIu32, in->node.id)
SHOW_LINE(node_state_show, "%s",
	 in->node.state == SMARTIO_NODE_UP ? "up" : "down")

static const struct sfs_attr node_attrs[] = {
	[NA_ID] = SFS_ATTR_RO(node, id),
	[NA_STATE] = SFS_ATTR_RO(node, state),
};

/* --- nodes/<node>/adapters/<ntb>/ ----------------------------------- */
static int adapter_load(const struct sfs_obj *o, union sfs_info *in)
{
	return smartio_adapter_info(sfs.h, o->node, o->adapter, &in->adapter);
}

SHOW_LINE(adapter_link_show, "%s", in->adapter.link_up ? "up" : "down")

/*
 * "down" or "up": fault injection on the simulated fabric (smartio(7),
 * FAILURES AND MULTIPATH); smartio.ko answers EOPNOTSUPP.
 */
static int adapter_link_store(const struct sfs_obj *o, const char *buf,
			      size_t size, const struct sfs_caller *who)
{
	static const char *const states[] = { "down", "up" };
	int rc = parse_keyword(buf, size, states, 2);

	(void)who;
	return rc < 0 ? rc : smartio_link_set(sfs.h, o->node, o->adapter, rc);
}

SHOW_NODES(adapter_peers_show, in->adapter.peers)

SHOW_LINE(adapter_luts_show, "%u %u", in->adapter.luts_used,
	  in->adapter.luts_total)

SHOW_LINE(adapter_requesters_show, "%u %u", in->adapter.req_used,
	  in->adapter.req_total)

SHOW_LINE(adapter_window_show, "%" PRIu64, in->adapter.window)

SHOW_LINE(adapter_requesters_in_show, "%u %u", in->adapter.req_in_used,
	  in->adapter.req_in_total)

/* hops: each node the adapter reaches and the switches on the way. */
static int adapter_hops_show(const struct sfs_obj *o,
			     const union sfs_info *in, struct sbuf *sb)
{
	unsigned n;
	int hops;

	for (n = 0; n < names_nnodes() && n < 64; n++) {
		if (!(in->adapter.peers >> n & 1))
			continue;
		hops = smartio_path_hops(sfs.h, o->node, o->adapter, n);
		if (hops >= 0)
			sb_printf(sb, "%s %d\n", names_nodeinfo(n)->name, hops);
	}
	return 0;
}

/*
 * speed: each node the adapter reaches, the payload rate of the path's
 * slowest link in MB/s and the latency its chips add one way in ns.
 */
static int adapter_speed_show(const struct sfs_obj *o,
			      const union sfs_info *in, struct sbuf *sb)
{
	unsigned n, lat;
	uint64_t rate;

	for (n = 0; n < names_nnodes() && n < 64; n++) {
		if (!(in->adapter.peers >> n & 1) ||
		    smartio_path_speed(sfs.h, o->node, o->adapter, n, &rate,
				       &lat))
			continue;
		sb_printf(sb, "%s %" PRIu64 " %u\n", names_nodeinfo(n)->name,
			  rate / 1000000, lat);
	}
	return 0;
}

/* The switch port the adapter is cabled to: name and port, or tables. */
static int put_switch_port(const struct sfs_obj *o,
			   const struct smartio_adapter_info *ai,
			   struct sbuf *sb)
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
	if (o->attr == AA_SWITCH)
		sb_printf(sb, "%s %u\n", si.name, ai->port);
	else if (o->attr == AA_SWITCH_REQUESTERS)
		sb_printf(sb, "%u %u\n", p->req_used, p->req_total);
	else
		sb_printf(sb, "%u %u\n", p->req_in_used, p->req_in_total);
	return 0;
}

static int adapter_switch_show(const struct sfs_obj *o,
			       const union sfs_info *in, struct sbuf *sb)
{
	return put_switch_port(o, &in->adapter, sb);
}

#define adapter_switch_requesters_show adapter_switch_show
#define adapter_switch_requesters_in_show adapter_switch_show

static const struct sfs_attr adapter_attrs[] = {
	/* writable: simulator fault injection */
	[AA_LINK] = SFS_ATTR_RW_FOR(adapter, link, SC_OWNER),
	[AA_PEERS] = SFS_ATTR_RO(adapter, peers),
	[AA_LUTS] = SFS_ATTR_RO(adapter, luts),
	[AA_REQUESTERS] = SFS_ATTR_RO(adapter, requesters),
	[AA_WINDOW] = SFS_ATTR_RO(adapter, window),
	[AA_REQUESTERS_IN] = SFS_ATTR_RO(adapter, requesters_in),
	[AA_HOPS] = SFS_ATTR_RO(adapter, hops),
	[AA_SPEED] = SFS_ATTR_RO(adapter, speed),
	[AA_SWITCH] = SFS_ATTR_RO(adapter, switch),
	[AA_SWITCH_REQUESTERS] = SFS_ATTR_RO(adapter, switch_requesters),
	[AA_SWITCH_REQUESTERS_IN] = SFS_ATTR_RO(adapter, switch_requesters_in),
};

/* --- nodes/<node>/segments/<seg>/ ----------------------------------- */
static int seg_load(const struct sfs_obj *o, union sfs_info *in)
{
	return tree_segment(o->node, o->seg, &in->seg);
}

SHOW_LINE(seg_size_show, "%" PRIu64, in->seg.sized ? in->seg.size : 0)
SHOW_LINE(seg_available_show, "%d", in->seg.available ? 1 : 0)

static int seg_size_store(const struct sfs_obj *o, const char *buf,
			  size_t size, const struct sfs_caller *who)
{
	uint64_t bytes;
	int rc = parse_size(buf, size, &bytes);

	(void)who;
	return rc ? rc : smartio_segment_set_size(sfs.h, o->node, o->seg, bytes);
}

static int seg_available_store(const struct sfs_obj *o, const char *buf,
			       size_t size, const struct sfs_caller *who)
{
	static const char *const bits[] = { "0", "1" };
	int rc = parse_keyword(buf, size, bits, 2);

	(void)who;
	return rc < 0 ? rc : smartio_segment_set_available(sfs.h, o->node,
							   o->seg, rc);
}

SHOW_NODES(seg_attached_show, in->seg.attached)

static int seg_attach_store(const struct sfs_obj *o, const char *buf,
			    size_t size, const struct sfs_caller *who)
{
	unsigned node;
	int rc = parse_node_for(o, buf, size, who, &node);

	return rc ? rc : hold_attach(o->node, o->seg, node, who->pid);
}

static int seg_detach_store(const struct sfs_obj *o, const char *buf,
			    size_t size, const struct sfs_caller *who)
{
	unsigned node;
	int rc = parse_node_for(o, buf, size, who, &node);

	return rc ? rc : hold_detach(o->node, o->seg, node);
}

/* The processes that keep the segment attached through this daemon. */
static int seg_holders_show(const struct sfs_obj *o, const union sfs_info *in,
			    struct sbuf *sb)
{
	(void)in;
	holds_show(o->node, o->seg, sb);
	return 0;
}

static const struct sfs_attr seg_attrs[] = {
	[SA_SIZE] = SFS_ATTR_RW_FOR(seg, size, SC_OWNER),
	[SA_AVAILABLE] = SFS_ATTR_RW_FOR(seg, available, SC_OWNER),
	[SA_ATTACHED] = SFS_ATTR_RO(seg, attached),
	[SA_ATTACH] = SFS_ATTR_WO_FOR(seg, attach, SC_NAMED),
	[SA_DETACH] = SFS_ATTR_WO_FOR(seg, detach, SC_NAMED_OR_OWNER),
	SFS_ATTR_RO(seg, holders),
};

/* --- nodes/<node>/segments/<seg>/dma/<dev>/ ------------------------- */
static int segdma_load(const struct sfs_obj *o, union sfs_info *in)
{
	return smartio_segment_dma_addr(sfs.h, o->node, o->seg, o->dev,
					&in->addr);
}

SHOW_LINE(segdma_ioaddr_show, "0x%" PRIx64, in->addr)

static const struct sfs_attr segdma_attrs[] = {
	[MA_IOADDR] = SFS_ATTR_RO(segdma, ioaddr),
};

/* --- multicast/<group>/ ------------------------------------------------ */
static int mcast_load(const struct sfs_obj *o, union sfs_info *in)
{
	int g = tree_mcast(o);

	return g < 0 ? g : smartio_mcast_info(sfs.h, (unsigned)g, &in->mcast);
}

static int mcast_switch_show(const struct sfs_obj *o, const union sfs_info *in,
			     struct sbuf *sb)
{
	struct smartio_switch_info si;
	int rc = smartio_switch_info(sfs.h, in->mcast.sw, &si);

	(void)o;
	if (rc)
		return rc;
	si.name[SMARTIO_NAME_MAX - 1] = '\0';
	sb_printf(sb, "%s\n", si.name);
	return 0;
}

SHOW_LINE(mcast_size_show, "%" PRIu64, in->mcast.size)
SHOW_NODES(mcast_members_show, in->mcast.members)
SHOW_LINE(mcast_writes_show, "%" PRIu64, in->mcast.writes)
SHOW_LINE(mcast_delivered_show, "%" PRIu64, in->mcast.delivered)

static int mcast_size_store(const struct sfs_obj *o, const char *buf,
			    size_t size, const struct sfs_caller *who)
{
	int g = tree_mcast(o), rc;
	uint64_t bytes;

	(void)who;
	if (g < 0)
		return g;
	rc = parse_size(buf, size, &bytes);
	return rc ? rc : smartio_mcast_set_size(sfs.h, (unsigned)g, bytes);
}

/* "NODE SEGMENT" or "NODE DEV/barN": who joins, with which buffer. */
static int mcast_join_store(const struct sfs_obj *o, const char *buf,
			    size_t size, const struct sfs_caller *who)
{
	const char *sp = memchr(buf, ' ', size);
	char tok[SMARTIO_NAME_MAX * 2], *slash;
	int g = tree_mcast(o), rc, dev, bar;
	unsigned node;

	if (g < 0)
		return g;
	if (!sp || sp == buf)
		return -EINVAL;
	rc = parse_node_for(o, buf, (size_t)(sp - buf), who, &node);
	if (rc)
		return rc;
	rc = parse_token(sp + 1, size - (size_t)(sp - buf) - 1, tok,
			 sizeof(tok));
	if (rc)
		return rc;
	slash = strchr(tok, '/');
	if (!slash)
		return smartio_mcast_join_segment(sfs.h, (unsigned)g, node, tok);
	*slash = '\0';
	dev = names_dev(tok);
	bar = tree_bar_name(slash + 1);
	if (dev < 0)
		return -ENXIO;
	if (bar < 0)
		return -EINVAL;
	return smartio_mcast_join_bar(sfs.h, (unsigned)g, node, (unsigned)dev,
				      (unsigned)bar);
}

static int mcast_leave_store(const struct sfs_obj *o, const char *buf,
			     size_t size, const struct sfs_caller *who)
{
	int g = tree_mcast(o), rc;
	unsigned node;

	if (g < 0)
		return g;
	rc = parse_node_for(o, buf, size, who, &node);
	return rc ? rc : smartio_mcast_leave(sfs.h, (unsigned)g, node);
}

static const struct sfs_attr mcast_attrs[] = {
	[MCA_SWITCH] = SFS_ATTR_RO(mcast, switch),
	[MCA_SIZE] = SFS_ATTR_RW_FOR(mcast, size, SC_CLUSTER),
	[MCA_MEMBERS] = SFS_ATTR_RO(mcast, members),
	[MCA_JOIN] = SFS_ATTR_WO_FOR(mcast, join, SC_NAMED),
	[MCA_LEAVE] = SFS_ATTR_WO_FOR(mcast, leave, SC_NAMED),
	[MCA_WRITES] = SFS_ATTR_RO(mcast, writes),
	[MCA_DELIVERED] = SFS_ATTR_RO(mcast, delivered),
};

/* --- multicast/<group>/dma/<dev>/ -------------------------------------- */
static int mcastdma_load(const struct sfs_obj *o, union sfs_info *in)
{
	int g = tree_mcast(o);

	return g < 0 ? g : smartio_mcast_dma_addr(sfs.h, (unsigned)g, o->dev,
						  &in->addr);
}

#define mcastdma_ioaddr_show segdma_ioaddr_show

static const struct sfs_attr mcastdma_attrs[] = {
	[MA_IOADDR] = SFS_ATTR_RO(mcastdma, ioaddr),
};

/* --- dev/<dev>/ ------------------------------------------------------- */
static int dev_load(const struct sfs_obj *o, union sfs_info *in)
{
	int rc = smartio_device_info(sfs.h, o->dev, &in->dev);

	in->dev.name[SMARTIO_NAME_MAX - 1] = '\0';
	in->dev.bdf[sizeof(in->dev.bdf) - 1] = '\0';
	return rc;
}

SHOW_LINE(dev_fdid_show, "0x%08" PRIx32, in->dev.fdid)
SHOW_LINE(dev_node_show, "%s", node_name(in->dev.node))
SHOW_LINE(dev_bdf_show, "%s", in->dev.bdf)
SHOW_LINE(dev_vendor_show, "0x%04x", in->dev.vendor)
SHOW_LINE(dev_device_show, "0x%04x", in->dev.device)
SHOW_LINE(dev_class_show, "0x%06" PRIx32, in->dev.class_code)
SHOW_LINE(dev_subsystem_vendor_show, "0x%04x", in->dev.subsys_vendor)
SHOW_LINE(dev_subsystem_device_show, "0x%04x", in->dev.subsys_device)
SHOW_LINE(dev_revision_show, "0x%02x", in->dev.revision)
SHOW_LINE(dev_mode_show, "%s",
	 in->dev.mode == SMARTIO_SHARED ? "shared" : "exclusive")

static int dev_resource_show(const struct sfs_obj *o,
			     const union sfs_info *in, struct sbuf *sb)
{
	unsigned b;

	(void)o;
	for (b = 0; b < SMARTIO_MAX_BARS; b++) {
		const struct smartio_bar_info *bi = &in->dev.bar[b];
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
	return 0;
}

static int dev_lend_show(const struct sfs_obj *o, const union sfs_info *in,
			 struct sbuf *sb)
{
	(void)o;
	if (in->dev.policy == SMARTIO_LEND_ALL)
		sb_puts(sb, "all\n");
	else if (in->dev.policy == SMARTIO_LEND_LIST)
		put_nodes(sb, in->dev.lend_mask);
	else
		sb_puts(sb, "none\n");
	return 0;
}

static int dev_lend_store(const struct sfs_obj *o, const char *buf,
			  size_t size, const struct sfs_caller *who)
{
	uint64_t mask;
	int rc, policy;

	(void)who;
	rc = parse_lend(buf, size, &policy, &mask);
	return rc ? rc : smartio_lend(sfs.h, o->dev, policy, mask);
}

SHOW_NODES(dev_borrow_show, in->dev.borrowers)

static int dev_borrow_store(const struct sfs_obj *o, const char *buf,
			    size_t size, const struct sfs_caller *who)
{
	uint64_t window;
	unsigned node;
	int rc = parse_borrow(buf, size, &node, &window);

	if (!rc)
		rc = authz(who, AZ_WRITE, o, (int)node);
	return rc ? rc : smartio_borrow_window(sfs.h, o->dev, node, window);
}

static int dev_return_store(const struct sfs_obj *o, const char *buf,
			    size_t size, const struct sfs_caller *who)
{
	unsigned node;
	int rc = parse_node_for(o, buf, size, who, &node);

	return rc ? rc : smartio_return(sfs.h, o->dev, node);
}

static int dev_reclaim_store(const struct sfs_obj *o, const char *buf,
			     size_t size, const struct sfs_caller *who)
{
	static const char *const one[] = { "1" };
	int rc = parse_keyword(buf, size, one, 1);
	/*
	 * A mount that acts for every node (the management view) reclaims
	 * as the lender, as it lends and returns for any node; another mount
	 * asks as itself, and the core refuses it unless it is the lender.
	 */
	unsigned asker = sfs.manage ? names_devinfo(o->dev)->info.node : sfs.self;

	(void)who;
	return rc < 0 ? rc : smartio_reclaim(sfs.h, o->dev, asker);
}

static int dev_mode_store(const struct sfs_obj *o, const char *buf,
			  size_t size, const struct sfs_caller *who)
{
	static const char *const modes[] = { "exclusive", "shared" };
	int rc = parse_keyword(buf, size, modes, 2);

	(void)who;
	return rc < 0 ? rc : smartio_set_mode(sfs.h, o->dev,
			 rc ? SMARTIO_SHARED : SMARTIO_EXCLUSIVE);
}

SHOW_LINE(dev_state_show, "%s",
	  in->dev.state == SMARTIO_DEV_BORROWED ? "borrowed" :
	  in->dev.state == SMARTIO_DEV_AVAILABLE ? "available" : "local")

static int dev_dma_window_show(const struct sfs_obj *o,
			       const union sfs_info *in, struct sbuf *sb)
{
	struct smartio_dma_window w[64];
	int n = smartio_dma_windows(sfs.h, o->dev, w, 64), i;

	(void)in;
	if (n < 0)
		return n;
	for (i = 0; i < n && i < 64; i++)
		sb_printf(sb, "%s 0x%" PRIx64 " %" PRIu64 "\n",
			  node_name(w[i].node), w[i].iova, w[i].size);
	return 0;
}

static int dev_msi_show(const struct sfs_obj *o, const union sfs_info *in,
			struct sbuf *sb)
{
	struct smartio_msi_vector v[SFS_IRQ_MAX];
	int n = smartio_msi_vectors(sfs.h, o->dev, v, SFS_IRQ_MAX), i;

	(void)in;
	if (n < 0)
		return n;
	for (i = 0; i < n && i < SFS_IRQ_MAX; i++)
		sb_printf(sb, "%u %s 0x%" PRIx64 " 0x%" PRIx32 "\n", v[i].vec,
			  node_name(v[i].node), v[i].addr, v[i].data);
	return 0;
}

static int dev_stats_show(const struct sfs_obj *o, const union sfs_info *in,
			  struct sbuf *sb)
{
	const struct smartio_dev_stats *st = &in->dev.stats;

	(void)o;
	sb_printf(sb, "borrows %" PRIu64 "\nreturns %" PRIu64
		  "\nreclaims %" PRIu64 "\ndenied %" PRIu64
		  "\ncfg_reads %" PRIu64 "\ncfg_writes %" PRIu64
		  "\ndma_ops %" PRIu64 "\ndma_faults %" PRIu64
		  "\nmsi %" PRIu64 "\ndriver_errors %" PRIu64 "\n",
		  st->borrows, st->returns, st->reclaims, st->denied,
		  st->cfg_reads, st->cfg_writes, st->dma_ops,
		  st->dma_faults, st->msi, st->driver_errors);
	return 0;
}

/* SR-IOV (MPIOV section III): a PF's files and a VF's. */
static int dev_sriov(const struct sfs_obj *o, struct smartio_sriov_info *si)
{
	return smartio_sriov_info(sfs.h, o->dev, si);
}

static int dev_is_pf(const struct sfs_obj *o)
{
	struct smartio_sriov_info si;

	return !dev_sriov(o, &si) && si.total;
}

static int dev_is_vf(const struct sfs_obj *o)
{
	struct smartio_sriov_info si;

	return !dev_sriov(o, &si) && si.pf >= 0;
}

static int dev_sriov_totalvfs_show(const struct sfs_obj *o,
				   const union sfs_info *in, struct sbuf *sb)
{
	struct smartio_sriov_info si;
	int rc = dev_sriov(o, &si);

	(void)in;
	if (!rc)
		sb_printf(sb, "%u\n", si.total);
	return rc;
}

static int dev_sriov_numvfs_show(const struct sfs_obj *o,
				 const union sfs_info *in, struct sbuf *sb)
{
	struct smartio_sriov_info si;
	int rc = dev_sriov(o, &si);

	(void)in;
	if (!rc)
		sb_printf(sb, "%u\n", si.num);
	return rc;
}

static int dev_sriov_numvfs_store(const struct sfs_obj *o, const char *buf,
				  size_t size, const struct sfs_caller *who)
{
	uint64_t n;
	int rc = parse_count(buf, size, &n);

	(void)who;
	if (!rc && n > 65535)
		rc = -ERANGE;
	return rc ? rc : smartio_sriov_set(sfs.h, o->dev, (unsigned)n);
}

static int dev_sriov_pf_show(const struct sfs_obj *o,
			     const union sfs_info *in, struct sbuf *sb)
{
	struct smartio_sriov_info si;
	const struct sfs_dev *pf;
	int rc = dev_sriov(o, &si);

	(void)in;
	if (rc)
		return rc;
	pf = si.pf >= 0 ? names_devinfo((unsigned)si.pf) : NULL;
	if (!pf)
		return -ENOENT;
	sb_printf(sb, "%s\n", pf->info.name);
	return 0;
}

static const struct sfs_attr dev_attrs[] = {
	[DA_FDID] = SFS_ATTR_RO(dev, fdid),
	[DA_NODE] = SFS_ATTR_RO(dev, node),
	[DA_BDF] = SFS_ATTR_RO(dev, bdf),
	[DA_VENDOR] = SFS_ATTR_RO(dev, vendor),
	[DA_DEVICE] = SFS_ATTR_RO(dev, device),
	[DA_CLASS] = SFS_ATTR_RO(dev, class),
	[DA_SUBSYS_VENDOR] = SFS_ATTR_RO(dev, subsystem_vendor),
	[DA_SUBSYS_DEVICE] = SFS_ATTR_RO(dev, subsystem_device),
	[DA_REVISION] = SFS_ATTR_RO(dev, revision),
	/* raw bytes at any offset, as in sysfs (ops.c) */
	/* As this mount's node: the core checks the rest. */
	[DA_CONFIG] = { "config", 0644, NULL, NULL, NULL, &sfs_config_fops,
			SC_CORE },
	[DA_RESOURCE] = SFS_ATTR_RO(dev, resource),
	[DA_LEND] = SFS_ATTR_RW_FOR(dev, lend, SC_LENDER),
	[DA_BORROW] = SFS_ATTR_RW_FOR(dev, borrow, SC_NAMED),
	[DA_RETURN] = SFS_ATTR_WO_FOR(dev, return, SC_NAMED),
	[DA_RECLAIM] = SFS_ATTR_WO_FOR(dev, reclaim, SC_CORE),
	[DA_MODE] = SFS_ATTR_RW_FOR(dev, mode, SC_LENDER),
	[DA_STATE] = SFS_ATTR_RO(dev, state),
	[DA_DMA_WINDOW] = SFS_ATTR_RO(dev, dma_window),
	[DA_MSI] = SFS_ATTR_RO(dev, msi),
	[DA_STATS] = SFS_ATTR_RO(dev, stats),
	[DA_SRIOV_TOTALVFS] = { "sriov_totalvfs", 0444, dev_sriov_totalvfs_show,
				NULL, dev_is_pf, NULL, SC_NONE },
	[DA_SRIOV_NUMVFS] = { "sriov_numvfs", 0644, dev_sriov_numvfs_show,
			      dev_sriov_numvfs_store, dev_is_pf, NULL,
			      SC_LENDER },
	[DA_SRIOV_PF] = { "sriov_pf", 0444, dev_sriov_pf_show, NULL, dev_is_vf,
			  NULL, SC_NONE },
};

/* --- dev/<dev>/peers/<peer>/bar<N> ------------------------------------ */
static int peer_bar_load(const struct sfs_obj *o, union sfs_info *in)
{
	int peer = names_dev(o->seg);

	if (peer < 0)
		return -ENOENT;
	return smartio_peer_addr(sfs.h, o->dev, (unsigned)peer, o->bar,
				 &in->addr);
}

static const struct sfs_attr peer_bar_attr = {
	"bar", 0444, segdma_ioaddr_show, NULL, NULL, NULL, SC_NONE
};

#define ATTR_GROUP(nm, table) \
	const struct sfs_attr_group nm = { table##_load, table##_attrs, \
		sizeof(table##_attrs) / sizeof(table##_attrs[0]) }
ATTR_GROUP(node_attr_group, node);
ATTR_GROUP(adapter_attr_group, adapter);
ATTR_GROUP(seg_attr_group, seg);
ATTR_GROUP(segdma_attr_group, segdma);
ATTR_GROUP(dev_attr_group, dev);
ATTR_GROUP(mcast_attr_group, mcast);
ATTR_GROUP(mcastdma_attr_group, mcastdma);
const struct sfs_attr_group peer_bar_group = { peer_bar_load, &peer_bar_attr,
					       1 };

unsigned irq_vectors(unsigned dev, struct smartio_msi_vector v[SFS_IRQ_MAX])
{
	int n = smartio_msi_vectors(sfs.h, dev, v, SFS_IRQ_MAX);

	if (n <= 0)
		return 0;
	return n < SFS_IRQ_MAX ? (unsigned)n : SFS_IRQ_MAX;
}

int irq_routed_here(unsigned dev, unsigned vec)
{
	struct smartio_msi_vector v[SFS_IRQ_MAX];

	return vec < irq_vectors(dev, v) && v[vec].node == sfs.self;
}

int attr_render(const struct sfs_obj *o, struct sbuf *sb)
{
	const struct sfs_attr_group *g = tree_attr_group(o);
	const struct sfs_attr *a = tree_attr(o);
	union sfs_info in;
	int rc;

	sb_reset(sb);
	if (!g || !g->load || !a)
		return -EINVAL;
	rc = g->load(o, &in);
	if (!rc)	/* not readable: write-only (return, reclaim) or config */
		rc = a->show ? a->show(o, &in, sb) : -EACCES;
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
