// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The hardware model of the simulated fabric: NTB look-up tables with
 * MPIOV-style requester and range checks, per-node IOMMUs, configuration
 * spaces, and the translation chain of SmartIO section 4:
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

static void put16(u8 *p, u16 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static void put32(u8 *p, u32 v)
{
	put16(p, (u16)v);
	put16(p + 2, (u16)(v >> 16));
}

/* A type-0 header as firmware leaves it: BARs assigned, an MSI capability. */
void sim_cfg_init(struct sim_fabric *f, u32 dev)
{
	struct sio_device *d = sio_dev(f->reg, dev);
	u8 *c = sim_cfg(f, dev);
	u32 b;

	put16(c + 0x00, d->vendor);
	put16(c + 0x02, d->device);
	put16(c + 0x04, 0x0006);	/* memory space + bus master */
	put16(c + 0x06, 0x0010);	/* capability list */
	c[0x08] = d->revision;
	c[0x09] = (u8)d->class_code;
	c[0x0a] = (u8)(d->class_code >> 8);
	c[0x0b] = (u8)(d->class_code >> 16);
	c[0x0e] = 0x00;
	for (b = 0; b < SIO_MAX_BARS; b++) {
		u32 flags = 0;

		if (!d->bar[b].size)
			continue;
		if (d->bar[b].flags & SIO_BAR_MEM64)
			flags |= 0x4;
		if (d->bar[b].flags & SIO_BAR_PREFETCH)
			flags |= 0x8;
		put32(c + 0x10 + 4 * b, (u32)d->bar[b].addr | flags);
		if ((d->bar[b].flags & SIO_BAR_MEM64) && b + 1 < SIO_MAX_BARS)
			put32(c + 0x14 + 4 * b, (u32)(d->bar[b].addr >> 32));
	}
	put16(c + 0x2c, d->subsys_vendor);
	put16(c + 0x2e, d->subsys_device);
	c[0x34] = 0x50;
	c[0x50] = 0x05;			/* MSI */
	c[0x51] = 0x00;
	put16(c + 0x52, 0x0080);	/* 64-bit address capable */
	c[0x3d] = 0x01;			/* INTA (masked for borrowers) */
	sim_model_cfg_init(d->model, d->bar[0].size, c);
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

static void op_lut_clear(void *plat, u32 node, u32 adapter, u32 slot)
{
	struct sim_fabric *f = plat;

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
	int fd, err = seg_path(f, seg, path, sizeof(path));

	if (err)
		return err;
	if (!create)
		return unlink(path) < 0 ? -errno : 0;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)sio_seg(f->reg, seg)->size) < 0) {
		err = -errno;
		close(fd);
		unlink(path);
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
	if (write)
		memcpy(sim_cfg(f, dev) + off, buf, len);
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
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write ? pwrite(fd, buf, len, (off_t)off)
		  : pread(fd, buf, len, (off_t)off);
	err = n < 0 ? -errno : (u32)n == len ? 0 : -EIO;
	close(fd);
	return err;
}

/* Node-to-node transport: the destination's core runs on the shared state. */
static int op_send(void *plat, u32 dst, const void *msg, u32 len, void *reply,
		   u32 cap)
{
	struct sim_fabric *f = plat;

	if (dst >= f->reg->nnodes || sio_node(f->reg, dst)->state != SIO_NODE_UP)
		return -EHOSTDOWN;
	return sio_core_dispatch(&f->core, dst, msg, len, reply, cap);
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
	out->node = node;
	if (addr >= SIO_MSI_BASE && addr < SIO_MSI_BASE + SIO_MSI_SIZE) {
		out->kind = SIM_LOC_MSI;
		out->offset = addr - SIO_MSI_BASE;
		out->avail = SIO_MSI_SIZE - out->offset;
		return len <= out->avail ? 0 : -EFAULT;
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

/* One LUT slot's verdict on the part [addr, addr+len) that falls in it. */
static int check_slot(struct sim_fabric *f, u32 node, struct sio_adapter *ad,
		      const struct sim_lut *l, u64 off, u64 len, u16 rid,
		      const char **why)
{
	if (!l->valid) {
		*why = "no-lut-entry";
		return -EFAULT;
	}
	if (l->src_node != node || l->rid != rid) {
		*why = "requester-not-allowed";
		return -EACCES;
	}
	if (off >= l->len || len > l->len - off) {
		*why = "outside-lut-range";
		return -EFAULT;
	}
	if (!ad->link_up ||
	    sio_node(f->reg, l->target_node)->state != SIO_NODE_UP) {
		*why = "link-down";
		return -EHOSTDOWN;
	}
	return 0;
}

/*
 * If addr falls in one of node's NTB windows, applies its LUT: returns 1
 * with the far side's node and address, 0 when addr is not in a window, or
 * a negative errno with *why set when the LUT blocks the transaction.
 * A transaction may span several slots (a BAR larger than one slot is
 * mapped by consecutive entries); each must allow it and they must be
 * contiguous on the far side, as a burst crossing them would be.
 */
static int through_window(struct sim_fabric *f, u32 node, u64 addr, u64 len,
			  u16 rid, u32 *tnode, u64 *taddr, const char **why)
{
	struct sio_node *n = sio_node(f->reg, node);
	u32 a;

	for (a = 0; a < n->nadapters; a++) {
		struct sio_adapter *ad = &n->adapter[a];
		const struct sim_lut *first = NULL, *l;
		u64 rel, slot, off, left = len, expect = 0;
		int err;

		if (addr < ad->window_base ||
		    addr - ad->window_base >= ad->window_size)
			continue;
		rel = addr - ad->window_base;
		if (len > ad->window_size - rel) {
			*why = "outside-window";
			return -EFAULT;
		}
		slot = rel / ad->slot_size;
		off = rel % ad->slot_size;
		do {
			u64 piece = ad->slot_size - off;

			if (piece > left)
				piece = left;
			l = sim_lut_at(f, node, a, (u32)slot);
			err = check_slot(f, node, ad, l, off, piece, rid, why);
			if (err)
				return err;
			if (!first) {
				first = l;
				expect = l->target_addr + off;
			} else if (l->target_node != first->target_node ||
				   l->target_addr != expect) {
				*why = "outside-lut-range";
				return -EFAULT;
			}
			expect += piece;
			left -= piece;
			slot++;
			off = 0;
		} while (left);
		*tnode = first->target_node;
		*taddr = first->target_addr + rel % ad->slot_size;
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
	int r = through_window(f, node, addr, len, SIO_RID_CPU, &tnode, &taddr,
			       &why);

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

int sim_translate_dma(struct sim_fabric *f, u32 node, u16 rid, u64 addr,
		      u64 len, struct sim_loc *out)
{
	const char *why = "no-iommu-mapping";
	u32 tnode = node;
	u64 taddr = addr, phys;
	int r = through_window(f, node, addr, len, rid, &tnode, &taddr, &why);

	u32 stop = node;	/* where a blocked transaction is counted */

	if (r >= 0) {
		stop = tnode;
		if (taddr >= SIO_MSI_BASE && taddr < SIO_MSI_BASE + SIO_MSI_SIZE)
			return resolve_local(f, tnode, taddr, len, out);
		r = iommu_lookup(f, tnode, node, rid, taddr, len, &phys);
		if (r == 0) {
			r = resolve_local(f, tnode, phys, len, out);
			if (r)
				why = "no-memory";
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
	n = snprintf(path, len, "%s/bar-%s-%u", f->dir, d->name, loc->bar);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	/* BAR memory is created on first use: big clusters stay cheap. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)d->bar[loc->bar].size) < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return 0;
}

int sim_dma(struct sim_fabric *f, u32 dev, u64 addr, void *buf, size_t len,
	    int write)
{
	struct sio_device *d;
	struct sim_loc loc;
	char path[320];
	int err;

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
		u32 vec;

		if (!write || len != 4) {
			sim_unlock(f);
			return -EFAULT;
		}
		memcpy(&vec, buf, 4);
		if (vec < SIO_MSI_VECTORS)
			sim_node_hw(f, loc.node)->msi_count[vec]++;
		d->stats.msi++;
		sim_unlock(f);
		sim_notify(f);
		return 0;
	}
	err = sim_backing_path(f, &loc, path, sizeof(path));
	sim_unlock(f);
	if (err)
		return err;
	return sim_dmamap_copy(f, path, loc.offset, buf, len, write);
}
