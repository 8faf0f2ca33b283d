// SPDX-License-Identifier: GPL-2.0
/*
 * The core's platform operations on Linux: struct sio_platform_ops
 * (lib/core/core.h) for smartio.ko.  lib/sim/sio_plat.c, of the same name,
 * is the simulator's.
 *
 * Clocks are ktime; configuration space is the lender's real device
 * through pci_{read,write}_config_*; BAR memory is ioremap()ed on demand.
 * With fabric=loopback the two nodes of this machine talk through a
 * loopback adapter: a message to the other node is dispatched to its core
 * at once (the caller holds the platform lock, as in the simulator:
 * loop_send asserts it), and a LUT slot is a table entry that
 * sio_kplat_resolve() follows, since no hardware sits between the nodes.
 * With fabric=ntb the other nodes are machines behind an NTB (sio_ntb.c,
 * sio_ntb_lend.c).  Each mode has its table of platform operations and
 * its struct sio_k_fabric, at the end of this file: loop_* and ntb_* are
 * one mode's, kplat_* both modes'.
 */
#include <linux/io.h>
#include <linux/seq_file.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>

#include "sio_kmod.h"

static u64 kplat_now_ns(void *plat)
{
	return ktime_get_real_ns();
}

static u64 kplat_mono_ns(void *plat)
{
	return ktime_get_ns();
}

/*
 * The table entry of a slot the core programs, filled but not valid yet:
 * NULL for a slot that is not one.
 */
static struct sio_klut *klut_fill(u32 node, u32 adapter, u32 slot,
				  u32 target_node, u64 target_addr, u64 len,
				  u32 src_node, u16 rid)
{
	struct sio_klut *l;

	if (node >= sio_k.nnodes || adapter != 0 || slot >= SIO_K_LUTS)
		return NULL;
	l = &sio_k.lut[node][slot];
	memset(l, 0, sizeof(*l));
	l->target_node = target_node;
	l->target_addr = target_addr;
	l->len = len;
	l->src_node = src_node;
	l->rid = rid;
	return l;
}

static struct sio_klut *klut_of(u32 node, u32 adapter, u32 slot)
{
	if (node >= sio_k.nnodes || adapter != 0 || slot >= SIO_K_LUTS)
		return NULL;
	return &sio_k.lut[node][slot];
}

/* The loopback adapter's slots are table entries and nothing else. */
static int loop_lut_set(void *plat, u32 node, u32 adapter, u32 slot,
			u32 target_node, u64 target_addr, u64 len,
			u32 src_node, u16 rid)
{
	struct sio_klut *l = klut_fill(node, adapter, slot, target_node,
				       target_addr, len, src_node, rid);

	if (!l)
		return -EINVAL;
	l->valid = true;
	return 0;
}

static void loop_lut_clear(void *plat, u32 node, u32 adapter, u32 slot)
{
	struct sio_klut *l = klut_of(node, adapter, slot);

	if (l)
		memset(l, 0, sizeof(*l));
}

/* Over an NTB the core programs only this machine's own slots. */
static int ntb_lut_set(void *plat, u32 node, u32 adapter, u32 slot,
		       u32 target_node, u64 target_addr, u64 len,
		       u32 src_node, u16 rid)
{
	struct sio_klut *l = klut_fill(node, adapter, slot, target_node,
				       target_addr, len, src_node, rid);
	int err;

	if (!l)
		return -EINVAL;
	err = node == sio_k.self ? sio_ntb_lend_lut_set(slot, l) : -EINVAL;
	if (err) {
		memset(l, 0, sizeof(*l));
		return err;
	}
	l->valid = true;
	return 0;
}

static void ntb_lut_clear(void *plat, u32 node, u32 adapter, u32 slot)
{
	struct sio_klut *l = klut_of(node, adapter, slot);

	if (!l)
		return;
	sio_ntb_lend_lut_clear(l);
	memset(l, 0, sizeof(*l));
}

/* One slot of node's LUT for sio_lut_walk: valid, and covering the part. */
static int kplat_slot(void *ctx, u32 index, u64 off, u64 len,
		      struct sio_lut_view *v)
{
	u32 node = *(u32 *)ctx;
	struct sio_klut *l;

	if (index >= SIO_K_LUTS)
		return -EFAULT;
	l = &sio_k.lut[node][index];
	if (!l->valid || off + len > l->len)
		return -EFAULT;
	v->target_node = l->target_node;
	v->target_addr = l->target_addr;
	return 0;
}

int sio_kplat_resolve(u32 node, u64 addr, u64 len, u32 *tnode, u64 *taddr)
{
	lockdep_assert_held(&sio_k.lock);
	if (node >= sio_k.nnodes || !len)
		return -EFAULT;
	return sio_lut_walk(&sio_node(sio_k.reg, node)->adapter[0], addr, len,
			    kplat_slot, &node, tnode, taddr) ? -EFAULT : 0;
}

/*
 * Over an NTB the slots of one mapping are consecutive hardware entries,
 * which lie back to back in the outbound window: the first one's address
 * plus the offset.  (On one machine the target itself is reached:
 * sio_kplat_resolve.)
 */
static int ntb_reach(u32 node, u64 addr, u64 len, u32 *tnode, u64 *phys)
{
	const struct sio_adapter *ad;
	const struct sio_klut *l;
	u64 slot;
	int err = sio_kplat_resolve(node, addr, len, tnode, phys);

	if (err)
		return err;
	ad = &sio_node(sio_k.reg, node)->adapter[0];
	slot = (addr - ad->window_base) / ad->slot_size;
	l = &sio_k.lut[node][slot];
	if (!l->hw)
		return -EFAULT;
	/*
	 * An entry that translates aligned blocks only (Switchtec's 64 KiB)
	 * leads to the block around its target: the target lies at the
	 * same offset in it (sio_ntb_lend.c, bar_block).
	 */
	*phys = l->hw + (addr - ad->window_base) % ad->slot_size +
		l->target_addr % sio_ntb_fab_lut_align(l->target_node);
	return 0;
}

/*
 * The IOMMU of a node for DMA from (src_node, rid).  Over an NTB, another
 * machine's device reaches a segment of this one only through the inbound
 * entries the core asks for once the lender granted its slots
 * (inbound_map SIO_INB_SEG): they are the gate, nothing to map here.  A
 * device of this machine is behind a domain the core may program only
 * while it is lent (claimed), and only toward a BAR of another device
 * lent here: peer-to-peer on one lender (sio_ntb_lend.c).  Segments of
 * this machine for its own devices are not offered by the kernel.
 */
static int ntb_iommu_map(void *plat, u32 node, u32 src_node, u16 rid,
			 u64 iova, u64 phys, u64 size)
{
	if (node != sio_k.self)
		return -EOPNOTSUPP;
	if (src_node != node)
		return 0;
	return sio_ntb_lend_peer_map(rid, iova, phys, size);
}

static void ntb_iommu_unmap(void *plat, u32 node, u32 src_node, u16 rid,
			    u64 iova)
{
	if (node == sio_k.self && src_node == node)
		sio_ntb_lend_peer_unmap(rid, iova);
}

/* One machine programs no IOMMU for the core (its peer maps included). */
static int loop_iommu_map(void *plat, u32 node, u32 src_node, u16 rid,
			  u64 iova, u64 phys, u64 size)
{
	return -EOPNOTSUPP;
}

static void loop_iommu_unmap(void *plat, u32 node, u32 src_node, u16 rid,
			     u64 iova)
{
}

/*
 * A segment's memory: vmalloc_user() pages behind a character device
 * (sio_cdev.c) that every node of this machine maps; the core's address
 * for it (s->phys) stays an address of its own map.
 */
static int loop_seg_backing(void *plat, u32 seg, int create)
{
	struct sio_segment *s = sio_seg(sio_k.reg, seg);
	struct sio_bar_cdev *bc;

	if (seg >= SIO_K_MAX_SEGS)
		return create ? -ENOSPC : 0;
	if (!create) {
		sio_seg_dev_remove(sio_k.seg[seg]);
		sio_k.seg[seg] = NULL;
		return 0;
	}
	bc = sio_seg_dev_add(sio_node(sio_k.reg, s->owner)->name, s->name,
			     s->size);
	if (IS_ERR(bc))
		return PTR_ERR(bc);
	sio_k.seg[seg] = bc;
	return 0;
}

/* Over an NTB a segment's memory is the NTB's heap (sio_ntb.c). */
static int ntb_seg_backing(void *plat, u32 seg, int create)
{
	if (seg >= SIO_K_MAX_SEGS)
		return create ? -ENOSPC : 0;
	return sio_ntb_fab_seg_backing(seg, create);
}

/*
 * Another node's segment mapped by this one: over an NTB the attaching
 * node gets one through its outbound window.  (On one machine the
 * owner's character device already reaches it: no seg_map.)
 */
static int ntb_seg_map(void *plat, u32 seg, u32 node, int map)
{
	if (seg >= SIO_K_MAX_SEGS)
		return 0;
	return sio_ntb_fab_seg_map(seg, node, map);
}

/*
 * Config space of the lender's real function.  BARs, ROM and the command
 * register are emulated (sio_vcfg.c): no write from a user or a borrower
 * moves the device's decoding.
 */
static int kplat_cfg_access(void *plat, u32 dev, u32 off, void *buf, u32 len,
			    int write)
{
	struct sio_kdev *kd = sio_kdev_of(dev);
	struct pci_dev *pdev = kd ? kd->pdev : NULL;
	u8 *p = buf;
	int err = 0;

	if (!pdev || off > pdev->cfg_size || len > pdev->cfg_size - off)
		return -EINVAL;
	while (len && !err) {
		u32 n = !(off & 3) && len >= 4 ? 4 : !(off & 1) && len >= 2 ? 2 : 1;
		u32 v = 0;

		if (write) {
			memcpy(&v, p, n);
			v = le32_to_cpu((__force __le32)v);
			if (sio_vcfg_access(kd, off, n, &v, true))
				err = 0;
			else if (n == 4)
				err = pci_write_config_dword(pdev, off, v);
			else if (n == 2)
				err = pci_write_config_word(pdev, off, (u16)v);
			else
				err = pci_write_config_byte(pdev, off, (u8)v);
		} else {
			u16 w;
			u8 b;

			if (sio_vcfg_access(kd, off, n, &v, false)) {
				err = 0;
			} else if (n == 4) {
				err = pci_read_config_dword(pdev, off, &v);
			} else if (n == 2) {
				err = pci_read_config_word(pdev, off, &w);
				v = w;
			} else {
				err = pci_read_config_byte(pdev, off, &b);
				v = b;
			}
			v = (__force u32)cpu_to_le32(v);
			memcpy(p, &v, n);
		}
		off += n;
		p += n;
		len -= n;
	}
	return err ? pcibios_err_to_errno(err) : 0;
}

/* Where pdev's MSI-X table is: BAR, offset in it, entries (0: none). */
static u32 msix_table(struct pci_dev *pdev, u32 *bar, u64 *base)
{
	u32 table;
	u16 ctl;

	if (!pdev->msix_cap)
		return 0;
	pci_read_config_dword(pdev, pdev->msix_cap + PCI_MSIX_TABLE, &table);
	pci_read_config_word(pdev, pdev->msix_cap + PCI_MSIX_FLAGS, &ctl);
	*bar = table & PCI_MSIX_TABLE_BIR;
	*base = table & PCI_MSIX_TABLE_OFFSET;
	return (ctl & PCI_MSIX_FLAGS_QSIZE) + 1;
}

/* Dword accesses of BAR bar (MSI-X tables require them), in order. */
static int bar_io(struct pci_dev *pdev, u32 bar, u64 off, void *buf, u32 len,
		  int write)
{
	void __iomem *io = ioremap(pci_resource_start(pdev, bar) + off, len);
	u32 i, v;

	if (!io)
		return -ENOMEM;
	for (i = 0; i < len; i += 4) {
		if (write) {
			memcpy(&v, (u8 *)buf + i, 4);
			iowrite32(v, io + i);
		} else {
			v = ioread32(io + i);
			memcpy((u8 *)buf + i, &v, 4);
		}
	}
	iounmap(io);
	return 0;
}

/*
 * MSI-X entry `index` of pdev when [off, off + len) of BAR bar is exactly
 * one table entry.
 */
static bool msix_entry(struct pci_dev *pdev, u32 bar, u64 off, u32 len,
		       u32 *index)
{
	u32 tbar, n;
	u64 base;

	if (len != PCI_MSIX_ENTRY_SIZE || off % PCI_MSIX_ENTRY_SIZE)
		return false;
	n = msix_table(pdev, &tbar, &base);
	if (!n || tbar != bar || off < base ||
	    off - base >= PCI_MSIX_ENTRY_SIZE * (u64)n)
		return false;
	*index = (off - base) / PCI_MSIX_ENTRY_SIZE;
	return true;
}

/*
 * The core points a lent device's MSI-X entry at a node's interrupt range
 * (through the MSI window for a borrower) with its vector number as data.
 * The loopback adapter resolves that address; on this machine the
 * borrower's interrupt range is the local APIC, and the vector the core
 * gave entry i is the one the shadow's driver set up for its entry i.  So
 * the entry is written with that message: the device interrupts the
 * borrower's CPU directly, with no software in the path (through the
 * real function's interrupt remapping table when there is one: the
 * shadow's MSI domain is the real function's).  An entry the shadow has
 * not set up yet stays masked.
 */
static void msix_translate(struct sio_kdev *kd, u8 *e)
{
	struct sio_device *d = sio_dev(sio_k.reg, kd->index);
	u64 addr = (u64)get_unaligned_le32(e + 4) << 32 |
		   get_unaligned_le32(e);
	u32 vec = get_unaligned_le32(e + 8), tnode;
	struct msi_msg msg;
	u64 taddr;

	if (d->irq_mode != SIO_IRQ_MSIX ||
	    sio_kplat_resolve(d->node, addr, 4, &tnode, &taddr) ||
	    tnode != d->irq_node || taddr < SIO_MSI_BASE ||
	    taddr >= SIO_MSI_BASE + SIO_MSI_SIZE || vec < d->irq_base ||
	    vec >= d->irq_base + d->irq_count ||
	    sio_shadow_msix_msg(kd, vec - d->irq_base, &msg)) {
		memset(e, 0, 12);
		e[12] |= PCI_MSIX_ENTRY_CTRL_MASKBIT;
		return;
	}
	put_unaligned_le32(msg.address_lo, e);
	put_unaligned_le32(msg.address_hi, e + 4);
	put_unaligned_le32(msg.data, e + 8);
}

/* The lent function of dev when [off, off + len) of BAR bar is its. */
static struct sio_kdev *bar_range(u32 dev, u32 bar, u64 off, u32 len)
{
	struct sio_kdev *kd = sio_kdev_of(dev);
	struct pci_dev *pdev = kd ? kd->pdev : NULL;

	if (!pdev || bar >= PCI_STD_NUM_BARS ||
	    !(pci_resource_flags(pdev, bar) & IORESOURCE_MEM) ||
	    off > pci_resource_len(pdev, bar) ||
	    len > pci_resource_len(pdev, bar) - off || (off | len) & 3)
		return NULL;
	return kd;
}

static int loop_bar_access(void *plat, u32 dev, u32 bar, u64 off, void *buf,
			   u32 len, int write)
{
	struct sio_kdev *kd = bar_range(dev, bar, off, len);
	u8 entry[PCI_MSIX_ENTRY_SIZE];
	u32 index;

	if (!kd)
		return -EINVAL;
	if (write && msix_entry(kd->pdev, bar, off, len, &index)) {
		memcpy(entry, buf, sizeof(entry));
		msix_translate(kd, entry);
		buf = entry;
	}
	return bar_io(kd->pdev, bar, off, buf, len, write);
}

/*
 * Over an NTB the core's vector numbers are not the borrower's messages:
 * the borrower's shadow sends those (MSIX_ENTRY, ntb_msix_write), the
 * table stays as it is.
 */
static int ntb_bar_access(void *plat, u32 dev, u32 bar, u64 off, void *buf,
			  u32 len, int write)
{
	struct sio_kdev *kd = bar_range(dev, bar, off, len);
	u32 index;

	if (!kd)
		return -EINVAL;
	if (write && msix_entry(kd->pdev, bar, off, len, &index))
		return 0;
	return bar_io(kd->pdev, bar, off, buf, len, write);
}

/*
 * A borrower's MSI message over an NTB, its address checked: written into
 * the capability as the PCI core writes one (the core keeps the
 * borrower's own config writes of it from the device, lib/core/msi.c),
 * with the mask bit of the control word (bit 0 of entry + 12).  A 32-bit
 * capability takes no address above 4 GiB.
 */
static int msi_write(struct sio_kdev *kd, const u8 *e)
{
	struct pci_dev *pdev = kd->pdev;
	u32 lo = get_unaligned_le32(e), hi = get_unaligned_le32(e + 4), mask;
	u16 data = get_unaligned_le16(e + 8), flags;
	bool is64;
	int pos = pdev->msi_cap;

	pci_read_config_word(pdev, pos + PCI_MSI_FLAGS, &flags);
	is64 = flags & PCI_MSI_FLAGS_64BIT;
	if (!is64 && hi)
		return -EINVAL;
	pci_write_config_dword(pdev, pos + PCI_MSI_ADDRESS_LO, lo);
	if (is64)
		pci_write_config_dword(pdev, pos + PCI_MSI_ADDRESS_HI, hi);
	pci_write_config_word(pdev, pos + (is64 ? PCI_MSI_DATA_64 :
					   PCI_MSI_DATA_32), data);
	/* The one message's mask bit, when the function has them. */
	if (flags & PCI_MSI_FLAGS_MASKBIT) {
		pos += is64 ? PCI_MSI_MASK_64 : PCI_MSI_MASK_32;
		pci_read_config_dword(pdev, pos, &mask);
		mask = (mask & ~1u) | (get_unaligned_le32(e + 12) & 1);
		pci_write_config_dword(pdev, pos, mask);
	}
	kd->msix_written++;
	return 0;
}

/*
 * A borrower's MSI-X message over an NTB (issue 28, item 2).  The lender
 * does not translate the table's pages for a borrower
 * (sio_ntb_lend_msix_limit), so the shadow's messages arrive here, and
 * only one that lands in that borrower's MSI window, as the device
 * addresses it, is written: anything else could aim the device's writes
 * at whatever else its IOMMU domain reaches (another borrower's RAM, a
 * peer's BAR) or at this machine's interrupt range.  Address 0 is a
 * vector shut down.  Of the vector control word only the mask bit is
 * the borrower's.
 */
static int ntb_msix_write(void *plat, u32 dev, u32 node, u32 index,
			  const u8 *e)
{
	struct sio_kdev *kd = sio_kdev_of(dev);
	struct sio_device *d = sio_dev(sio_k.reg, dev);
	struct pci_dev *pdev = kd ? kd->pdev : NULL;
	u64 addr = get_unaligned_le64(e), win, base;
	u8 entry[PCI_MSIX_ENTRY_SIZE];
	u32 bar, ctrl = 0;

	if (!pdev || (index == SIO_MSI_ENTRY ? !pdev->msi_cap :
		      index >= msix_table(pdev, &bar, &base)))
		return -EINVAL;
	win = sio_kplat_dev_iova(d->node, d->irq_addr);
	if (addr && (!win || addr < win || addr - win >= SIO_MSI_SIZE)) {
		kd->msix_refused++;
		dev_warn_ratelimited(&pdev->dev, "smartio: MSI%s entry %d from %s aimed at %#llx, outside its MSI window %#llx+%#llx: refused\n",
				     index == SIO_MSI_ENTRY ? "" : "-X",
				     (int)index, sio_node(sio_k.reg, node)->name,
				     addr, win, SIO_MSI_SIZE);
		return -EACCES;
	}
	if (index == SIO_MSI_ENTRY)
		return msi_write(kd, e);
	base += (u64)index * PCI_MSIX_ENTRY_SIZE;
	if (bar_io(pdev, bar, base + PCI_MSIX_ENTRY_VECTOR_CTRL, &ctrl, 4, 0))
		return -ENOMEM;
	memcpy(entry, e, PCI_MSIX_ENTRY_SIZE);
	ctrl = (ctrl & ~PCI_MSIX_ENTRY_CTRL_MASKBIT) |
	       (get_unaligned_le32(e + PCI_MSIX_ENTRY_VECTOR_CTRL) &
		PCI_MSIX_ENTRY_CTRL_MASKBIT);
	put_unaligned_le32(ctrl, entry + PCI_MSIX_ENTRY_VECTOR_CTRL);
	kd->msix_written++;
	return bar_io(pdev, bar, base, entry, PCI_MSIX_ENTRY_SIZE, 1);
}

/*
 * How much of BAR bar of the device lent here at phys (the core's BAR
 * address) a borrower's inbound entries may translate: up to the first
 * page of its MSI-X table or pending bits, which the borrower reaches
 * only through ntb_msix_write.
 */
u64 sio_kplat_msix_limit(u64 phys, u64 size)
{
	u32 i, b, tbar, pbar;
	u64 base, pba, lim = size;

	for (i = 0; i < sio_k.ndevs; i++) {
		struct pci_dev *pdev = sio_k.dev[i].pdev;
		u32 pbaoff = 0;

		if (!pdev)
			continue;	/* a VF not enabled */
		for (b = 0; b < PCI_STD_NUM_BARS; b++)
			if (pci_resource_len(pdev, b) &&
			    pci_resource_start(pdev, b) == phys)
				break;
		if (b == PCI_STD_NUM_BARS || !msix_table(pdev, &tbar, &base))
			continue;
		pci_read_config_dword(pdev, pdev->msix_cap + PCI_MSIX_PBA,
				      &pbaoff);
		pbar = pbaoff & PCI_MSIX_PBA_BIR;
		pba = pbaoff & PCI_MSIX_PBA_OFFSET;
		if (tbar == b)
			lim = min(lim, round_down(base, PAGE_SIZE));
		if (pbar == b)
			lim = min(lim, round_down(pba, PAGE_SIZE));
	}
	return lim;
}

/*
 * The loopback link: the other node's core answers at once.  (Over an
 * NTB the other machine answers: sio_ntb_fab_send.)
 */
static int loop_send(void *plat, u32 src, u32 dst, const void *msg, u32 len,
		     void *reply, u32 cap)
{
	lockdep_assert_held(&sio_k.lock);
	if (dst >= sio_k.nnodes || sio_node(sio_k.reg, dst)->state != SIO_NODE_UP)
		return -EHOSTDOWN;
	return sio_core_dispatch_from(&sio_k.core, dst, src, msg, len, reply,
				      cap);
}

static int ntb_send(void *plat, u32 src, u32 dst, const void *msg, u32 len,
		    void *reply, u32 cap)
{
	return sio_ntb_fab_send(dst, msg, len, reply, cap);
}

/* The device leaves its driver for smartio's (sio_lender.c) while lent. */
static int kplat_lend_claim(void *plat, u32 dev, u32 borrower, int claim)
{
	return sio_ntb_lend_claim(dev, borrower, claim);
}

/*
 * Whether a translation of this kind is made by entries: without single
 * entries (ntb_ivshmem) an attached segment is reached through the heap
 * window, translated to every peer in full.
 */
static bool inbound_entries(u32 kind)
{
	return kind != SIO_INB_SEG || sio_k.lut_entries;
}

/*
 * The loopback adapter's slots are resolved in software: nothing to
 * translate on the side a window leads to (and no inbound_unmap).
 */
static int loop_inbound_map(void *plat, u32 self, u32 peer, u32 kind,
			    u32 dev, u64 peer_addr, u64 local_addr, u64 size)
{
	return 0;
}

/* Over an NTB the side a window leads to translates it (sio_ntb_lend.c). */
static int ntb_inbound_map(void *plat, u32 self, u32 peer, u32 kind,
			   u32 dev, u64 peer_addr, u64 local_addr, u64 size)
{
	if (!inbound_entries(kind))
		return 0;
	if (self != sio_k.self)
		return -EINVAL;
	return sio_ntb_lend_inbound(peer, kind, peer_addr, local_addr, size,
				    true);
}

static void ntb_inbound_unmap(void *plat, u32 self, u32 peer, u32 kind,
			      u32 dev, u64 peer_addr, u64 size)
{
	if (inbound_entries(kind) && self == sio_k.self)
		sio_ntb_lend_inbound(peer, kind, peer_addr, 0, size, false);
}

/*
 * The device's address of a window address of node's adapter: what its
 * IOMMU domain maps (the core's window addresses lie above what a VT-d
 * domain of 39 address bits reaches).  0 outside the window.
 */
u64 sio_kplat_dev_iova(u32 node, u64 addr)
{
	const struct sio_adapter *ad;

	if (node >= sio_k.nnodes)
		return 0;
	ad = &sio_node(sio_k.reg, node)->adapter[0];
	/* The slots, then the direct window (sio_k.direct_size) after them. */
	if (addr < ad->window_base ||
	    addr - ad->window_base >= ad->window_size + sio_k.direct_size)
		return 0;
	return SIO_K_DEV_IOVA + (addr - ad->window_base);
}

/*
 * The lent device's IOMMU domain maps the window at sio_kplat_dev_iova().
 * (On one machine the device uses the core's addresses: no dev_addr.)
 */
static u64 ntb_dev_addr(void *plat, u32 node, u64 addr)
{
	u64 iova = sio_kplat_dev_iova(node, addr);

	return iova ? iova : addr;
}

/*
 * A segment's address for a borrowed device's DMA.  One machine offers
 * none (the borrow's window is the core's IOVA range).
 */
static int loop_window_dma_addr(void *plat, u32 self, u32 dev, u64 phys,
				u64 size, u64 *ioaddr)
{
	return -EOPNOTSUPP;
}

static int ntb_window_dma_addr(void *plat, u32 self, u32 dev, u64 phys,
			       u64 size, u64 *ioaddr)
{
	if (self != sio_k.self)
		return -EINVAL;
	return sio_ntb_lend_window_addr(dev, phys, size, ioaddr);
}

/*
 * What ntb_window_dma_addr mapped over a strict window goes, IOTLB
 * flushed; nothing to undo over the others (address arithmetic).
 */
static void ntb_window_dma_release(void *plat, u32 self, u32 dev, u64 phys,
				   u64 size, u64 ioaddr)
{
	if (self == sio_k.self)
		sio_ntb_window_seg_unmap(dev, phys);
}

/*
 * Over an NTB the borrower's DMA window is a range of its NTB function's
 * IOMMU domain (sio_ntb_window.c); one machine's is the core's IOVA (no
 * dma_window_iova).
 */
static int ntb_dma_window_iova(void *plat, u32 self, u32 dev, u64 size,
			       u64 *iova)
{
	if (self != sio_k.self)
		return -EINVAL;
	return sio_ntb_window_open(dev, size, iova);
}

static void ntb_dma_window_free(void *plat, u32 self, u32 dev, u64 iova,
				u64 size)
{
	if (self == sio_k.self)
		sio_ntb_window_close(dev);
}

/*
 * Over an NTB whose entries cannot hold a DMA window (sio_ntb.c).  One
 * machine has no direct window.
 */
static u64 ntb_dma_direct(void *plat, u32 node)
{
	return sio_k.direct_size;
}

static int ntb_dma_direct_map(void *plat, u32 self, u32 borrower, u16 rid,
			      u64 addr, u64 size, int map)
{
	if (self != sio_k.self)
		return -EINVAL;
	return sio_ntb_lend_direct_map(borrower, rid, addr, size, map);
}

static void kplat_refused(void *plat, u32 dev, u32 node, const char *why)
{
	const struct sio_device *d = sio_dev(sio_k.reg, dev);

	pr_warn_ratelimited("smartio: borrow of %s by host%u refused (EBUSY): %s\n",
			    d->name, node, why);
}

static void loop_notify(void *plat)
{
	WRITE_ONCE(sio_k.notifies, sio_k.notifies + 1);
	sio_fabric_notify();
}

/* Over an NTB the peers and this machine's shadows hear of it too. */
static void ntb_notify(void *plat)
{
	sio_ntb_fab_notify();
	sio_ntb_lend_notify();
	loop_notify(plat);
}

/* REG_READ's generation: libsmartio re-reads the registry when it moved. */
static u64 kplat_generation(void *plat)
{
	return READ_ONCE(sio_k.notifies);
}

static int kplat_sriov_set(void *plat, u32 pf, u16 num)
{
	return sio_sriov_set(pf, num);
}

/* fabric=loopback: both nodes on this machine, one registry. */
const struct sio_platform_ops sio_kplat_loop_ops = {
	.now_ns = kplat_now_ns,
	.mono_ns = kplat_mono_ns,
	.lut_set = loop_lut_set,
	.lut_clear = loop_lut_clear,
	.iommu_map = loop_iommu_map,
	.iommu_unmap = loop_iommu_unmap,
	.seg_backing = loop_seg_backing,
	.cfg_access = kplat_cfg_access,
	.bar_access = loop_bar_access,
	.send = loop_send,
	.notify = loop_notify,
	.generation = kplat_generation,
	.inbound_map = loop_inbound_map,
	.refused = kplat_refused,
	.window_dma_addr = loop_window_dma_addr,
	.sriov_set = kplat_sriov_set,
};

/* fabric=ntb: this machine's node of a cluster, a registry each. */
const struct sio_platform_ops sio_kplat_ntb_ops = {
	.now_ns = kplat_now_ns,
	.mono_ns = kplat_mono_ns,
	.lut_set = ntb_lut_set,
	.lut_clear = ntb_lut_clear,
	.iommu_map = ntb_iommu_map,
	.iommu_unmap = ntb_iommu_unmap,
	.seg_backing = ntb_seg_backing,
	.seg_map = ntb_seg_map,
	.cfg_access = kplat_cfg_access,
	.bar_access = ntb_bar_access,
	.send = ntb_send,
	.notify = ntb_notify,
	.generation = kplat_generation,
	.lend_claim = kplat_lend_claim,
	.inbound_map = ntb_inbound_map,
	.dma_direct = ntb_dma_direct,
	.dma_direct_map = ntb_dma_direct_map,
	.refused = kplat_refused,
	.inbound_unmap = ntb_inbound_unmap,
	.dev_addr = ntb_dev_addr,
	.window_dma_addr = ntb_window_dma_addr,
	.window_dma_release = ntb_window_dma_release,
	.dma_window_iova = ntb_dma_window_iova,
	.dma_window_free = ntb_dma_window_free,
	.msix_write = ntb_msix_write,
	.sriov_set = kplat_sriov_set,
};

/* Over an NTB the lend side's claim and this node's shadows come first. */
static int ntb_probe(struct sio_k_geometry *geo, u32 limit, u32 share)
{
	int err;

	sio_ntb_lend_init();
	err = sio_ntb_fab_probe(geo, limit);
	geo->share = share;
	return err;
}

static void ntb_stop(void)
{
	sio_ntb_lend_exit();
	sio_ntb_fab_exit();
}

static void loop_announce(void)
{
	pr_info("smartio: %u device(s) on host0, host1 on the loopback adapter\n",
		sio_k.ndevs);
}

static void ntb_announce(void)
{
	pr_info("smartio: this machine is host%u of %u, the others are behind an NTB\n",
		sio_k.self, sio_k.nnodes);
}

/* A borrower's MSI-X writes (ntb_msix_write), the transport, the lending. */
static void ntb_show(struct seq_file *s)
{
	u32 i;

	for (i = 0; i < sio_k.ndevs; i++)
		seq_printf(s, "msix %s written=%u refused=%u\n",
			   sio_dev(sio_k.reg, sio_k.dev[i].index)->name,
			   sio_k.dev[i].msix_written,
			   sio_k.dev[i].msix_refused);
	sio_ntb_fab_show(s);
	sio_ntb_lend_show(s);
}

/* Borrowers remove their shadows when the core took the device away. */
static int ntb_reclaim(u32 dev, u32 asker)
{
	int err = sio_k_cmd(SIO_CMD_RECLAIM, dev, asker);

	/* The device is back with its driver when the reclaim answers. */
	sio_ntb_lend_settle();
	return err;
}

const struct sio_k_fabric sio_kfab_loopback = {
	.adapter = "lo0",
	.plat = &sio_kplat_loop_ops,
	.announce = loop_announce,
	.reach = sio_kplat_resolve,
	.borrow = sio_loop_borrow,
	.give_back = sio_loop_return,
	.reclaim = sio_loop_reclaim,
	.shadow = &sio_shadow_loop,
};

const struct sio_k_fabric sio_kfab_ntb = {
	.adapter = "ntb0",
	.plat = &sio_kplat_ntb_ops,
	.separate = true,
	.probe = ntb_probe,
	.unprobe = sio_ntb_fab_unprobe,
	.start = sio_ntb_fab_init,
	.stop = ntb_stop,
	.announce = ntb_announce,
	.show = ntb_show,
	.reach = ntb_reach,
	.borrow = sio_ntb_k_borrow,
	.give_back = sio_ntb_k_return,
	.reclaim = ntb_reclaim,
	.shadow = &sio_shadow_ntb,
};
