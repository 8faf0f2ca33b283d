// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The core's platform operations in the simulator (sim_ops, the struct
 * sio_platform_ops of lib/core/core.h; kmod/sio_plat.c, of the same name,
 * is smartio.ko's) and the hardware model they drive: NTB look-up tables
 * with MPIOV-style requester and range checks, per-node IOMMUs,
 * configuration spaces, and the translation chain of SmartIO section 4:
 *   CPU -> NTB window -> LUT -> remote physical address
 *   device DMA -> (NTB window -> LUT ->) target IOVA -> IOMMU -> RAM/BAR
 *   MSI write -> (window -> LUT ->) interrupt range -> vector counter
 * A transaction that hits no mapping or whose requester is not allowed is
 * blocked, counted at the node where it stopped, and reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/pci_regs.h>

#include "devmodel.h"

struct sim_lut *sim_lut_at(struct sim_fabric *f, u32 node, u32 adapter,
			   u32 slot)
{
	struct sim_lut *t = (struct sim_lut *)((u8 *)f->sh + f->sh->luts_off);

	return &t[((u64)node * SIO_MAX_ADAPTERS + adapter) * f->sh->lut_max +
		  slot];
}

struct sim_iommu *sim_iommu_at(struct sim_fabric *f, u32 node, u32 i)
{
	struct sim_iommu *t =
		(struct sim_iommu *)((u8 *)f->sh + f->sh->iommu_off);

	return &t[(u64)node * SIM_IOMMU_ENTRIES + i];
}

struct sim_node_hw *sim_node_hw(struct sim_fabric *f, u32 node)
{
	return (struct sim_node_hw *)((u8 *)f->sh + f->sh->nodes_hw_off) + node;
}

u8 *sim_cfg(struct sim_fabric *f, u32 dev)
{
	return (u8 *)f->sh + f->sh->cfg_off + (u64)dev * f->sh->cfg_stride;
}

/* Device dev's first VF when it is an SR-IOV PF, else NULL. */
static const struct sio_device *vf0_of(struct sim_fabric *f, u32 dev)
{
	const struct sio_device *d = sio_dev(f->reg, dev);

	if (d->sriov_total && d->config_size >= 0x200 &&
	    dev + d->sriov_total < f->reg->ndevices)
		return sio_dev(f->reg, dev + 1);
	return NULL;
}

void sim_cfg_init(struct sim_fabric *f, u32 dev)
{
	sim_cfg_layout(sim_cfg(f, dev), sio_dev(f->reg, dev), vf0_of(f, dev));
}

static u64 real_ns(void *plat)
{
	struct timespec ts;

	(void)plat;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static u64 mono_ns(void *plat)
{
	struct timespec ts;

	(void)plat;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static int op_lut_set(void *plat, u32 node, u32 adapter, u32 slot,
		      u32 target_node, u64 target_addr, u64 len, u32 src_node,
		      u16 rid)
{
	struct sim_fabric *f = plat;
	struct sim_lut *l;

	if (slot >= f->sh->lut_max)
		return -EINVAL;
	l = sim_lut_at(f, node, adapter, slot);
	l->target_node = target_node;
	l->target_addr = target_addr;
	l->len = len;
	l->src_node = src_node;
	l->rid = rid;
	l->valid = 1;
	return 0;
}

static int resolve_local(struct sim_fabric *f, u32 node, u64 addr, u64 len,
			 struct sim_loc *out);

/*
 * Whether another CPU slot of the same node points where l does: a borrow
 * that moved to another adapter (failover.c) maps its BARs there before
 * the old slots are cleared, and its users' mappings stay.
 */
static int mapped_elsewhere(struct sim_fabric *f, const struct sim_lut *l)
{
	const struct sio_node *n;
	u32 a, s;

	if (l->src_node >= f->reg->nnodes)
		return 0;
	n = sio_node(f->reg, l->src_node);
	for (a = 0; a < n->nadapters && a < SIO_MAX_ADAPTERS; a++)
		for (s = 0; s < f->sh->lut_max; s++) {
			const struct sim_lut *o = sim_lut_at(f, l->src_node,
							     a, s);

			if (o != l && o->valid && o->rid == SIO_RID_CPU &&
			    o->src_node == l->src_node &&
			    o->target_node == l->target_node &&
			    o->target_addr == l->target_addr)
				return 1;
		}
	return 0;
}

/*
 * A borrower's CPU window onto the start of a device's first BAR closing
 * with no other borrower left: the borrow is over, and every mapping of
 * the device's BARs is revoked (revoke.c).
 */
static void revoke_if_last(struct sim_fabric *f, const struct sim_lut *l)
{
	struct sim_loc loc;
	struct sio_device *d;
	u32 b;

	if (!l->valid || l->rid != SIO_RID_CPU || l->target_node >= f->reg->nnodes ||
	    resolve_local(f, l->target_node, l->target_addr, 1, &loc) ||
	    loc.kind != SIM_LOC_BAR || loc.offset)
		return;
	d = sio_dev(f->reg, loc.index);
	for (b = 0; b < SIO_MAX_BARS && !d->bar[b].size; b++)
		;
	if (b == loc.bar && !(d->borrowers & ~(1ull << l->src_node)) &&
	    !mapped_elsewhere(f, l))
		sim_bar_revoke(f, loc.index);
}

static void op_lut_clear(void *plat, u32 node, u32 adapter, u32 slot)
{
	struct sim_fabric *f = plat;

	if (slot < f->sh->lut_max)
		revoke_if_last(f, sim_lut_at(f, node, adapter, slot));
	if (slot < f->sh->lut_max)
		memset(sim_lut_at(f, node, adapter, slot), 0,
		       sizeof(struct sim_lut));
}

static int op_iommu_map(void *plat, u32 node, u32 src_node, u16 rid, u64 iova,
			u64 phys, u64 size)
{
	struct sim_fabric *f = plat;
	u32 i;

	for (i = 0; i < SIM_IOMMU_ENTRIES; i++) {
		struct sim_iommu *e = sim_iommu_at(f, node, i);

		if (e->used)
			continue;
		e->src_node = src_node;
		e->rid = rid;
		e->iova = iova;
		e->size = size;
		e->phys = phys;
		e->used = 1;
		return 0;
	}
	return -ENOSPC;
}

static void op_iommu_unmap(void *plat, u32 node, u32 src_node, u16 rid,
			   u64 iova)
{
	struct sim_fabric *f = plat;
	u32 i;

	for (i = 0; i < SIM_IOMMU_ENTRIES; i++) {
		struct sim_iommu *e = sim_iommu_at(f, node, i);

		if (e->used && e->src_node == src_node && e->rid == rid &&
		    e->iova == iova)
			memset(e, 0, sizeof(*e));
	}
}

static int seg_path(struct sim_fabric *f, u32 seg, char *path, size_t len)
{
	struct sio_segment *s = sio_seg(f->reg, seg);
	int n = snprintf(path, len, "%s/ram-%s-%u", f->dir,
			 sio_node(f->reg, s->owner)->name, s->gen);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int op_seg_backing(void *plat, u32 seg, int create)
{
	struct sim_fabric *f = plat;
	char path[320];
	const char *name;
	int fd, err = seg_path(f, seg, path, sizeof(path));

	if (err)
		return err;
	name = path + strlen(f->dir) + 1;
	if (!create)
		return unlinkat(f->dirfd, name, 0) < 0 ? -errno : 0;
	/*
	 * A new object, never one found there: a file left by a process that
	 * died between creating it and recording the segment is this fabric's
	 * own (the directory is checked), so it goes first.
	 */
	fd = sim_file_open(f, path, O_RDWR | O_CREAT | O_EXCL);
	if (fd == -EEXIST && !unlinkat(f->dirfd, name, 0))
		fd = sim_file_open(f, path, O_RDWR | O_CREAT | O_EXCL);
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)sio_seg(f->reg, seg)->size) < 0) {
		err = -errno;
		close(fd);
		unlinkat(f->dirfd, name, 0);
		return err;
	}
	close(fd);
	return 0;
}

static int op_cfg_access(void *plat, u32 dev, u32 off, void *buf, u32 len,
			 int write)
{
	struct sim_fabric *f = plat;
	struct sio_device *d = sio_dev(f->reg, dev);

	if (off > d->config_size || len > d->config_size - off)
		return -EINVAL;
	if (write)	/* as the registers take it (cfg_space.c) */
		sim_cfg_write(sim_cfg(f, dev), d, vf0_of(f, dev), off, buf,
			      len);
	else
		memcpy(buf, sim_cfg(f, dev) + off, len);
	return 0;
}

/* BAR memory of a device on its lender, for the core's MSI-X rewrites. */
static int op_bar_access(void *plat, u32 dev, u32 bar, u64 off, void *buf,
			 u32 len, int write)
{
	struct sim_fabric *f = plat;
	struct sio_device *d = sio_dev(f->reg, dev);
	struct sim_loc loc = { .kind = SIM_LOC_BAR, .node = d->node,
			       .index = dev, .bar = bar };
	char path[320];
	ssize_t n;
	int fd, err;

	if (bar >= SIO_MAX_BARS || off > d->bar[bar].size ||
	    len > d->bar[bar].size - off)
		return -EINVAL;
	err = sim_backing_path(f, &loc, path, sizeof(path));
	if (err)
		return err;
	fd = sim_file_open(f, path, O_RDWR);
	if (fd < 0)
		return fd;
	n = write ? pwrite(fd, buf, len, (off_t)off)
		  : pread(fd, buf, len, (off_t)off);
	err = n < 0 ? -errno : (u32)n == len ? 0 : -EIO;
	close(fd);
	return err;
}

/* Node-to-node transport: the destination's core runs on the shared state. */
static int op_send(void *plat, u32 src, u32 dst, const void *msg, u32 len,
		   void *reply, u32 cap)
{
	struct sim_fabric *f = plat;

	if (dst >= f->reg->nnodes || sio_node(f->reg, dst)->state != SIO_NODE_UP)
		return -EHOSTDOWN;
	/*
	 * Messages travel the NTBs too: every path down, nothing arrives.
	 * Heartbeats excepted: here they watch for hung processes, and one
	 * registry cannot hold the two sides' views of a partition (each
	 * side would declare the other down for everyone, and nothing would
	 * beat again to bring either back).
	 */
	if (src < f->reg->nnodes && len > SIO_NLMSG_HDRLEN &&
	    ((const u8 *)msg)[SIO_NLMSG_HDRLEN] != SIO_CMD_HEARTBEAT &&
	    sio_path_find(f->reg, src, dst) == -EHOSTDOWN)
		return -EHOSTDOWN;
	/* The link's far end is src, whatever the message says. */
	return sio_core_dispatch_from(&f->core, dst, src, msg, len, reply, cap);
}

static void op_notify(void *plat)
{
	sim_notify(plat);
}

const struct sio_platform_ops sim_ops = {
	.now_ns = real_ns,
	.mono_ns = mono_ns,
	.lut_set = op_lut_set,
	.lut_clear = op_lut_clear,
	.iommu_map = op_iommu_map,
	.iommu_unmap = op_iommu_unmap,
	.seg_backing = op_seg_backing,
	.cfg_access = op_cfg_access,
	.bar_access = op_bar_access,
	.send = op_send,
	.notify = op_notify,
};

/* A physical address of `node` as seen on its own bus. */
static int resolve_local(struct sim_fabric *f, u32 node, u64 addr, u64 len,
			 struct sim_loc *out)
{
	struct sio_registry *r = f->reg;
	u32 i, b;

	memset(out, 0, sizeof(*out));
	out->adapter = -1;
	out->node = node;
	if (addr >= SIO_MSI_BASE && addr < SIO_MSI_BASE + SIO_MSI_SIZE) {
		out->kind = SIM_LOC_MSI;
		out->offset = addr - SIO_MSI_BASE;
		out->avail = SIO_MSI_SIZE - out->offset;
		return len <= out->avail ? 0 : -EFAULT;
	}
	if (addr >= SIO_MCAST_BASE &&
	    addr - SIO_MCAST_BASE < (u64)r->max_mcast * SIO_MCAST_STRIDE) {
		const struct sio_mcast *g;

		out->kind = SIM_LOC_MCAST;
		out->index = (u32)((addr - SIO_MCAST_BASE) / SIO_MCAST_STRIDE);
		out->offset = (addr - SIO_MCAST_BASE) % SIO_MCAST_STRIDE;
		g = sio_mcast_at(r, out->index);
		if (g->used && out->offset < g->size)
			out->avail = g->size - out->offset;
		return len && len <= out->avail ? 0 : -EFAULT;
	}
	if (addr >= SIO_BAR_BASE) {
		for (i = 0; i < r->ndevices; i++) {
			struct sio_device *d = sio_dev(r, i);

			if (d->node != node)
				continue;
			for (b = 0; b < SIO_MAX_BARS; b++) {
				if (!d->bar[b].size || addr < d->bar[b].addr ||
				    addr - d->bar[b].addr >= d->bar[b].size)
					continue;
				out->kind = SIM_LOC_BAR;
				out->index = i;
				out->bar = b;
				out->offset = addr - d->bar[b].addr;
				out->avail = d->bar[b].size - out->offset;
				return len <= out->avail ? 0 : -EFAULT;
			}
		}
		return -EFAULT;
	}
	for (i = 0; i < r->max_segments; i++) {
		struct sio_segment *s = sio_seg(r, i);

		if (!s->used || !s->sized || s->owner != node ||
		    addr < s->phys || addr - s->phys >= s->size)
			continue;
		out->kind = SIM_LOC_RAM;
		out->index = i;
		out->offset = addr - s->phys;
		out->avail = s->size - out->offset;
		return len <= out->avail ? 0 : -EFAULT;
	}
	return -EFAULT;
}

/* What sio_lut_walk asks of the simulator about one slot. */
struct slot_check {
	struct sim_fabric *f;
	u32 node, adapter;
	u16 rid;
	const char **why;
};

/* One LUT slot's verdict on the part [off, off+len) of it an access uses. */
static int check_slot(void *ctx, u32 index, u64 off, u64 len,
		      struct sio_lut_view *v)
{
	struct slot_check *c = ctx;
	const struct sim_lut *l = sim_lut_at(c->f, c->node, c->adapter, index);

	if (!l->valid) {
		*c->why = "no-lut-entry";
		return -EFAULT;
	}
	if (l->src_node != c->node || l->rid != c->rid) {
		*c->why = "requester-not-allowed";
		return -EACCES;
	}
	if (off >= l->len || len > l->len - off) {
		*c->why = "outside-lut-range";
		return -EFAULT;
	}
	if (sio_node(c->f->reg, l->target_node)->state != SIO_NODE_UP) {
		*c->why = "link-down";
		return -EHOSTDOWN;
	}
	v->target_node = l->target_node;
	v->target_addr = l->target_addr;
	return 0;
}

/*
 * If addr falls in one of node's NTB windows, applies its LUT
 * (sio_lut_walk): returns 1 with the far side's node and address, 0 when
 * addr is not in a window, or a negative errno with *why set when the
 * LUT blocks the transaction.
 */
static int through_window(struct sim_fabric *f, u32 node, u64 addr, u64 len,
			  u16 rid, u32 *tnode, u64 *taddr, s32 *via,
			  const char **why)
{
	struct sio_node *n = sio_node(f->reg, node);
	u32 a;

	for (a = 0; a < n->nadapters; a++) {
		struct sio_adapter *ad = &n->adapter[a];
		struct slot_check c = { f, node, a, rid, why };
		int err;

		if (addr < ad->window_base ||
		    addr - ad->window_base >= ad->window_size)
			continue;
		err = sio_lut_walk(ad, addr, len, check_slot, &c, tnode, taddr);
		if (err == -ERANGE) {
			*why = "outside-window";
			return -EFAULT;
		}
		if (err == -EXDEV) {
			*why = "outside-lut-range";
			return -EFAULT;
		}
		if (err)
			return err;
		/* The adapter's link and the path beyond it (a cable or
		 * switch port whose far end is down carries nothing). */
		if (sio_path_hops(f->reg, node, a, *tnode) < 0) {
			*why = "link-down";
			return -EHOSTDOWN;
		}
		*via = (s32)a;
		return 1;
	}
	return 0;
}

int sim_translate_cpu(struct sim_fabric *f, u32 node, u64 addr, u64 len,
		      struct sim_loc *out)
{
	const char *why = "";
	u32 tnode = node;
	u64 taddr = addr;
	s32 via = -1;
	int r = through_window(f, node, addr, len, SIO_RID_CPU, &tnode, &taddr,
			       &via, &why);

	if (r < 0)
		return r;
	return resolve_local(f, tnode, taddr, len, out);
}

static int iommu_lookup(struct sim_fabric *f, u32 node, u32 src_node, u16 rid,
			u64 iova, u64 len, u64 *phys)
{
	u32 i;

	for (i = 0; i < SIM_IOMMU_ENTRIES; i++) {
		struct sim_iommu *e = sim_iommu_at(f, node, i);

		if (!e->used || e->src_node != src_node || e->rid != rid ||
		    iova < e->iova || iova - e->iova >= e->size ||
		    len > e->size - (iova - e->iova))
			continue;
		*phys = e->phys + (iova - e->iova);
		return 0;
	}
	return -EFAULT;
}

/*
 * A borrowed device's requests enter the borrower through the adapter
 * whose incoming requester table holds its entry (SmartIO section 8.6):
 * with that adapter's link down they are lost, whatever other path the
 * lender's window could take, until the borrow moves (failover.c).
 */
static int arrives(struct sim_fabric *f, u32 node, u16 rid, u32 tnode)
{
	struct sio_registry *r = f->reg;
	const struct sio_borrow *b;
	u32 i;
	int bidx;

	for (i = 0; i < r->ndevices; i++) {
		const struct sio_device *d = sio_dev(r, i);

		if (d->node != node || d->rid != rid)
			continue;
		bidx = sio_borrow_find(r, i, tnode);
		if (bidx < 0)
			return 1;
		b = sio_borrow_at(r, (u32)bidx);
		return b->b_req < 0 ||
		       sio_node(r, tnode)->adapter[b->b_adapter].link_up;
	}
	return 1;
}

int sim_translate_dma(struct sim_fabric *f, u32 node, u16 rid, u64 addr,
		      u64 len, struct sim_loc *out)
{
	const char *why = "no-iommu-mapping";
	u32 tnode = node;
	u64 taddr = addr, phys;
	s32 via = -1;
	int r = through_window(f, node, addr, len, rid, &tnode, &taddr, &via,
			       &why);

	u32 stop = node;	/* where a blocked transaction is counted */

	if (r > 0 && !arrives(f, node, rid, tnode)) {
		why = "link-down";
		r = -EHOSTDOWN;
	}
	if (r >= 0) {
		stop = tnode;
		if (taddr >= SIO_MSI_BASE && taddr < SIO_MSI_BASE + SIO_MSI_SIZE)
			return resolve_local(f, tnode, taddr, len, out);
		r = iommu_lookup(f, tnode, node, rid, taddr, len, &phys);
		if (r == 0) {
			r = resolve_local(f, tnode, phys, len, out);
			if (r)
				why = "no-memory";
			out->adapter = via;
		}
	}
	if (r < 0) {
		sim_node_hw(f, stop)->blocked++;
		sio_core_dma_fault(&f->core, node, rid, addr, why);
	}
	return r;
}

int sim_backing_path(struct sim_fabric *f, const struct sim_loc *loc,
		     char *path, size_t len)
{
	struct sio_device *d;
	int n, fd;

	if (loc->kind == SIM_LOC_RAM)
		return seg_path(f, loc->index, path, len);
	if (loc->kind != SIM_LOC_BAR)
		return -ENXIO;
	d = sio_dev(f->reg, loc->index);
	n = sim_bar_path(f, loc->index, loc->bar,
			 __atomic_load_n(&sim_dev_hw(f, loc->index)->epoch,
					 __ATOMIC_ACQUIRE), path, len);
	if (n)
		return n;
	/* BAR memory is created on first use: big clusters stay cheap. */
	fd = sim_file_open(f, path, O_RDWR | O_CREAT);
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)d->bar[loc->bar].size) < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return 0;
}

int sim_dmakey_of(struct sim_fabric *f, const struct sim_loc *loc,
		  struct sim_dmakey *key)
{
	if (loc->kind == SIM_LOC_RAM) {
		const struct sio_segment *s = sio_seg(f->reg, loc->index);

		*key = (struct sim_dmakey){ SIM_LOC_RAM, s->owner, s->gen, 0 };
		return 0;
	}
	if (loc->kind != SIM_LOC_BAR)
		return -ENXIO;
	*key = (struct sim_dmakey){
		SIM_LOC_BAR, loc->index, loc->bar,
		__atomic_load_n(&sim_dev_hw(f, loc->index)->epoch,
				__ATOMIC_ACQUIRE) };
	return 0;
}

int sim_loc_copy(struct sim_fabric *f, const struct sim_loc *loc,
		 const struct sim_dmakey *key, void *buf, size_t len,
		 int write)
{
	char path[320];
	int err = sim_dmamap_copy(f, key, NULL, loc->offset, buf, len, write);

	if (err != -EAGAIN)
		return err;
	sim_lock(f);
	err = sim_backing_path(f, loc, path, sizeof(path));
	sim_unlock(f);
	return err ? err : sim_dmamap_copy(f, key, path, loc->offset, buf,
					   len, write);
}

/*
 * Interrupt remapping (issue 28, item 3), as an IOMMU's remapping table
 * checks a message signalled interrupt by its requester id: a write into
 * a node's interrupt range raises a vector only when it comes from a
 * device whose interrupts the core routed to that node (msi.c: irq_node)
 * and its data is one of the vectors allocated to that device there.
 * Anything else -- a lent DMA engine aimed at the lender's own interrupt
 * range, a device writing another device's vector -- is blocked where it
 * arrives, counted and reported as a DMA fault, and raises nothing.
 */
static int interrupt_remap(struct sim_fabric *f, u32 dev, u64 addr,
			   const struct sim_loc *loc, const void *buf,
			   size_t len, int write, u32 *vec)
{
	const struct sio_device *d = sio_dev(f->reg, dev);
	const char *why = NULL;

	if (!write || len != 4) {
		why = "interrupt-not-a-dword-write";
	} else {
		*vec = sio_get_le32(buf);
		if (d->irq_mode == SIO_IRQ_NONE || d->irq_node != loc->node)
			why = "interrupt-not-routed-here";
		else if (*vec < d->irq_base ||
			 *vec - d->irq_base >= d->irq_count ||
			 *vec >= SIO_MSI_VECTORS)
			why = "interrupt-vector-not-its-own";
	}
	if (!why)
		return 0;
	sim_node_hw(f, loc->node)->blocked++;
	sio_core_dma_fault(&f->core, d->node, d->rid, addr, why);
	return -EFAULT;
}

int sim_dma(struct sim_fabric *f, u32 dev, u64 addr, void *buf, size_t len,
	    int write)
{
	u64 done = 0;
	int err = sim_dma_start(f, dev, addr, buf, len, write, &done);

	if (!err && done)
		sim_wait_until(done);
	return err;
}

int sim_dma_start(struct sim_fabric *f, u32 dev, u64 addr, void *buf,
		  size_t len, int write, u64 *done_ns)
{
	struct sio_device *d;
	struct sim_dmakey key;
	struct sim_loc loc;
	int err;

	*done_ns = 0;
	sim_lock(f);
	if (dev >= f->reg->ndevices) {
		sim_unlock(f);
		return -ENXIO;
	}
	d = sio_dev(f->reg, dev);
	if (d->gone) {
		sim_unlock(f);
		return -EHOSTDOWN;
	}
	err = sim_translate_dma(f, d->node, d->rid, addr, len, &loc);
	if (err) {
		sim_unlock(f);
		return -EFAULT;
	}
	d->stats.dma_ops++;
	if (loc.kind == SIM_LOC_MSI) {
		u32 vec = 0;

		err = interrupt_remap(f, dev, addr, &loc, buf, len, write, &vec);
		if (!err) {
			sim_node_hw(f, loc.node)->msi_count[vec]++;
			d->stats.msi++;
		}
		sim_unlock(f);
		if (!err)
			sim_notify(f);
		return err;
	}
	if (loc.kind == SIM_LOC_MCAST) {
		/* Posted writes only: a read of a group is unsupported. */
		sim_unlock(f);
		return write ? sim_mcast_write(f, dev, loc.index, loc.offset,
					       buf, len, done_ns) : -EFAULT;
	}
	err = sim_dmakey_of(f, &loc, &key);
	if (!err && f->pace)
		*done_ns = sim_pace_reserve(f, dev, &loc, len, write);
	sim_unlock(f);
	if (err)
		return err;
	return sim_loc_copy(f, &loc, &key, buf, len, write);
}
