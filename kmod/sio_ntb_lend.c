// SPDX-License-Identifier: GPL-2.0
/*
 * fabric=ntb: lending devices between machines (SmartIO section 4, Device
 * Lending section 5) on the NTB's look-up tables.
 *
 * One slot of adapter ntb0 in the core is one look-up-table entry of the
 * hardware (smartio_ntb's single entries, the same count and size on
 * every machine of a switch): slot s that this node's core maps toward
 * node T is entry s of this machine's outbound window to T, translated by
 * T's inbound entry s for this machine.  The core asks the side whose
 * memory or device is the target to translate (inbound_map), as real NTBs
 * are programmed on the receiving side:
 *  - the lender translates the borrower's BAR slots onto the device's BARs,
 *    up to the device's MSI-X table: the borrower's shadow sends its
 *    messages (MSIX_ENTRY), which the lender writes once it has checked
 *    that they land in that borrower's MSI window (sio_plat.c);
 *  - the borrower translates the lender's DMA window onto the borrow's
 *    window in its NTB function's IOMMU domain (sio_ntb_window.c: the
 *    IOVA range the core's borrow record holds; RAM from address 0 where
 *    that domain is identity), and the MSI window onto 0xfee00000.
 * The lender's slots carry the device's own traffic, so its IOMMU domain
 * (sio_lender.c) maps the device's addresses of them, sio_kplat_dev_iova(),
 * onto the outbound window: the device DMAs and signals MSIs through the
 * NTB into the borrower with no software in the path.
 *
 * The borrower hot-adds a shadow function (sio_shadow.c) whose BARs are
 * its outbound window; a reclaim or the lender's loss takes the borrow
 * away inside a peer's request, where no device can be removed (its
 * driver's config cycles would wait for the lock the request holds), so
 * shadows without a borrow are removed by a work item after the core's
 * notify: surprise removal, the window already closed.
 */
#include <linux/iommu.h>
#include <linux/ioport.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "sio_kmod.h"

/* A BAR of a device lent here, mapped in another's domain (the core's lock). */
struct sio_kpeer {
	struct iommu_domain *domain;	/* NULL: a free entry */
	u16 rid;
	u64 iova, size;
};

/*
 * Taking a device from its driver, and giving it back, runs without
 * sio_k.lock: unbinding waits for the driver's work (nvme_remove flushes
 * reset_work), and a borrowed NVMe's reset_work takes that lock for its
 * shadow's config cycles (sio_shadow.c), a circular dependency lockdep
 * reports.  Under the lock the core's lend_claim only asks: the device
 * is wanted (-EINPROGRESS); the peer's request is served again once it is
 * claimed (fab_request, sio_ntb_lend_claim_begin), and the core checks
 * everything again.  lend_claim(0) takes the requester ids off the NTB
 * and leaves the device to sio_ntb_lend_settle, which gives every device
 * no borrow holds back to its driver.  claim_lock orders claims and
 * releases, and is never taken under sio_k.lock.
 */
static struct {
	struct sio_kdev rdev[SIO_K_NTB_NODES * SIO_K_MAX_DEVS];
	struct mutex lock;	/* shadows' hot-add and removal */
	struct work_struct sync;
	struct sio_kpeer peer[SIO_K_PEER_MAPS];
	struct mutex claim_lock;	/* claims and releases, before sio_k.lock */
	/* Under sio_k.lock: the device a request waits for, and its claim. */
	struct sio_kdev *want, *tried;
	int tried_err;
	bool unsettled;		/* a device may be claimed for no borrow */
	bool closing;		/* unloading: no more settle work */
	struct work_struct settle;
} lend;

static bool msix_lut;
module_param(msix_lut, bool, 0644);
MODULE_PARM_DESC(msix_lut,
		 "fabric=ntb: a look-up-table entry larger than a page (Switchtec: 64 KiB) may expose a lent BAR's MSI-X table to the borrower, which can then aim the device's messages unchecked; set only where interrupt remapping blocks compatibility-format MSIs (default N: such a borrow is refused, EPERM)");

/* The device of this machine whose requester id the lender's slot carries. */
static struct sio_kdev *own_by_rid(u16 rid)
{
	u32 i;

	for (i = 0; i < sio_k.ndevs; i++)
		if (sio_k.dev[i].pdev &&
		    sio_dev(sio_k.reg, sio_k.dev[i].index)->rid == rid)
			return &sio_k.dev[i];
	return NULL;
}

int sio_ntb_lend_lut_set(u32 slot, struct sio_klut *l)
{
	const struct sio_adapter *ad;
	struct sio_kdev *kd;
	u64 iova;
	int err;

	/*
	 * A slot the CPU uses without an entry behind it is a segment's
	 * (reached through the heap window) or a BAR the shadow will not
	 * reach (ntb_reach fails, so does the borrow).
	 */
	l->hw = sio_ntb_fab_lut_peer_addr(l->target_node, slot);
	if (l->rid == SIO_RID_CPU)
		return 0;
	if (!l->hw)
		return -ENOSPC;	/* no such entry toward that node */
	/* The lent device's own slot: its IOMMU domain leads there. */
	kd = own_by_rid(l->rid);
	ad = &sio_node(sio_k.reg, sio_k.self)->adapter[0];
	iova = sio_kplat_dev_iova(sio_k.self,
				  ad->window_base + (u64)slot * ad->slot_size);
	if (!kd || !kd->domain || !iova)
		return -ENODEV;
	err = sio_iommu_map(kd->domain, iova, l->hw, PAGE_ALIGN(l->len),
			    IOMMU_READ | IOMMU_WRITE | IOMMU_MMIO, GFP_KERNEL);
	if (err)
		return err;
	l->iova = iova;
	return 0;
}

void sio_ntb_lend_lut_clear(struct sio_klut *l)
{
	struct sio_kdev *kd;

	if (!l->iova)
		return;
	kd = own_by_rid(l->rid);
	if (kd && kd->domain)
		iommu_unmap(kd->domain, l->iova, PAGE_ALIGN(l->len));
}

/*
 * The requester-id hook (smartio_ntb_rid.c) for the lent device: its
 * requester id and each of its DMA aliases may send through the NTB
 * toward the borrower while the device is lent, and no longer after.
 * The aliases as pci_for_each_dma_alias() finds them (not exported to
 * modules in 6.1): the quirks' dma_alias_mask on the device's bus, and
 * each conventional PCI bridge above it, whose id the requests take on.
 * A failure to add stops the claim (what was added goes); a removal that
 * fails is logged (the entry stays, the device's DMA no longer aims at
 * the window).
 */
static int rid_hook_one(struct pci_dev *pdev, u16 rid, u32 borrower,
			bool allow)
{
	int err = sio_ntb_fab_rid_allow(borrower, rid, allow);

	if (err)
		pci_warn(pdev, "smartio: requester id %04x %s the NTB table toward host%u: %d\n",
			 rid, allow ? "not added to" : "not removed from",
			 borrower, err);
	return allow ? err : 0;
}

static int rid_hook(struct pci_dev *pdev, u32 borrower, bool allow)
{
	struct pci_dev *up;
	int err, devfn;

	err = rid_hook_one(pdev, pci_dev_id(pdev), borrower, allow);
#ifdef CONFIG_PCI_QUIRKS
	for (devfn = 0; !err && pdev->dma_alias_mask && devfn < 256; devfn++)
		if (test_bit(devfn, pdev->dma_alias_mask))
			err = rid_hook_one(pdev, PCI_DEVID(pdev->bus->number,
							   devfn),
					   borrower, allow);
#endif
	for (up = pci_upstream_bridge(pdev); !err && up;
	     up = pci_upstream_bridge(up))
		if (!pci_is_pcie(up) ||
		    pci_pcie_type(up) == PCI_EXP_TYPE_PCI_BRIDGE)
			err = rid_hook_one(pdev, pci_dev_id(up), borrower,
					   allow);
	if (err && allow)
		rid_hook(pdev, borrower, false);
	return err;
}

/* Under sio_k.lock: a device may have to go back to its driver. */
static void unsettled(void)
{
	lend.unsettled = true;
	if (!lend.closing)
		schedule_work(&lend.settle);
}

/*
 * The core's claim, under sio_k.lock.  A device still with its driver is
 * asked for (above); one claimed gets its requester ids on the NTB toward
 * the borrower (once: a shared device's later borrowers find them there).
 */
int sio_ntb_lend_claim(u32 dev, u32 borrower, int claim)
{
	struct sio_kdev *kd = sio_kdev_of(dev);
	int err;

	lockdep_assert_held(&sio_k.lock);
	if (!kd)
		return -ENXIO;
	if (!claim) {
		if (kd->lent)
			rid_hook(kd->pdev, kd->rid_peer, false);
		kd->lent = false;
		if (kd->claimed)
			unsettled();
		return 0;
	}
	if (kd->lent)
		return 0;
	if (!kd->claimed) {
		if (kd->sriov_busy)
			return -EBUSY;	/* its VFs change (sio_sriov.c) */
		if (lend.tried == kd)
			return lend.tried_err ? lend.tried_err : -EAGAIN;
		/* Only a peer's request is served again (fab_request). */
		if (!sio_ntb_fab_serving())
			return -EHOSTDOWN;
		lend.want = kd;
		return -EINPROGRESS;
	}
	err = rid_hook(kd->pdev, borrower, true);
	if (err) {
		unsettled();
		return err;
	}
	kd->rid_peer = borrower;
	kd->lent = true;
	/*
	 * Borrows start from the lender's registers (sio_vcfg_reset's work:
	 * the lock is held here).
	 */
	kd->vcfg_ready = false;
	return 0;
}

/* Under sio_k.lock, after a peer's request: the device it waits for. */
struct sio_kdev *sio_ntb_lend_wanted(void)
{
	struct sio_kdev *kd = lend.want;

	lockdep_assert_held(&sio_k.lock);
	lend.want = NULL;
	return kd;
}

/*
 * Takes kd from its driver without sio_k.lock, then takes the lock for
 * the request to be served again, which finds the claim (or its refusal)
 * in lend.tried.  No release comes between (claim_lock).
 */
void sio_ntb_lend_claim_begin(struct sio_kdev *kd)
{
	int err;

	mutex_lock(&lend.claim_lock);
	err = sio_lender_claim(kd);
	mutex_lock(&sio_k.lock);
	lend.tried = kd;
	lend.tried_err = err;
	if (!err)
		unsettled();	/* until a borrow holds it */
}

void sio_ntb_lend_claim_end(void)
{
	lend.tried = NULL;
	mutex_unlock(&sio_k.lock);
	mutex_unlock(&lend.claim_lock);
}

/*
 * Devices of this machine claimed for no borrow go back to their drivers
 * (the last borrow ended, or the borrow failed after the claim), without
 * sio_k.lock.  Such a device is marked unclaimed under the lock first, so
 * that a borrow meanwhile asks for it again (and waits for claim_lock).
 */
void sio_ntb_lend_settle(void)
{
	struct sio_kdev *kd;
	bool idle;
	u32 i;

	if (!READ_ONCE(lend.unsettled))
		return;
	mutex_lock(&lend.claim_lock);
	mutex_lock(&sio_k.lock);
	lend.unsettled = false;
	mutex_unlock(&sio_k.lock);
	for (i = 0; i < sio_k.ndevs; i++) {
		kd = &sio_k.dev[i];
		mutex_lock(&sio_k.lock);
		idle = kd->pdev && kd->claimed &&
		       !sio_dev(sio_k.reg, kd->index)->borrowers;
		if (idle && kd->lent)
			rid_hook(kd->pdev, kd->rid_peer, false);
		if (idle) {
			kd->lent = false;
			kd->claimed = false;
		}
		mutex_unlock(&sio_k.lock);
		if (idle)
			sio_lender_release(kd);
	}
	mutex_unlock(&lend.claim_lock);
}

static void settle_work(struct work_struct *work)
{
	sio_ntb_lend_settle();
}

/*
 * The lender's half of a DMA window on the direct window (core.h,
 * dma_direct_map): the lent device's IOMMU domain maps its address of the
 * window onto this machine's outbound direct window toward the borrower,
 * which the borrower translates onto its RAM.
 */
int sio_ntb_lend_direct_map(u32 borrower, u16 rid, u64 addr, u64 size,
			    bool map)
{
	struct sio_kdev *kd = own_by_rid(rid);
	u64 iova = sio_kplat_dev_iova(sio_k.self, addr);
	phys_addr_t hw;

	if (!kd || !kd->domain || !iova)
		return map ? -ENODEV : 0;
	if (!map) {
		iommu_unmap(kd->domain, iova, size);
		return 0;
	}
	hw = sio_ntb_fab_direct_peer_addr(borrower);
	if (!hw)
		return -ENOSPC;
	return sio_iommu_map(kd->domain, iova, hw, size,
			     IOMMU_READ | IOMMU_WRITE | IOMMU_MMIO, GFP_KERNEL);
}

/*
 * Peer's window [peer_addr, + size) leads to local_addr here, through
 * this machine's inbound entries for that peer (one per slot).
 */
static int inbound_target(u32 kind, u64 local_addr, u64 size, u64 *target)
{
	switch (kind) {
	case SIO_INB_BAR:
		*target = local_addr;	/* the registry has the real BARs */
		return 0;
	case SIO_INB_DMA:
		*target = local_addr;	/* the window (sio_ntb_window.c) */
		return 0;
	case SIO_INB_MSI:
		*target = SIO_MSI_BASE;
		return 0;
	case SIO_INB_SEG:
		/*
		 * A segment of ours attached by that peer or mapped for a
		 * device of it: where our NTB function's DMA reaches it.
		 */
		return sio_ntb_fab_seg_dma(local_addr, size, target);
	default:
		return -EINVAL;
	}
}

/*
 * A BAR an entry cannot translate alone: smaller than what one entry
 * translates, or not aligned to it (Switchtec's 64 KiB LUT entries;
 * QEMU's NVMe has a 16 KiB BAR 0).  The entry then leads to the aligned
 * block around the BAR, and the borrower finds the BAR at the same
 * offset in its window (ntb_reach).  Whatever else lies in that
 * block is exposed to the borrower's CPU: never another BAR, of this
 * device or another (refused, EPERM); nor, unless msix_lut is set, the
 * BAR's own MSI-X table and pending bits (refused, EPERM).  A borrower
 * that reaches the table writes messages the lender never checked
 * (issue 28, item 2): the device's writes then reach whatever its IOMMU
 * domain maps, the windows of its own borrow, and an interrupt at any
 * vector of the lender unless interrupt remapping blocks
 * compatibility-format messages (VT-d hardware does, with CFI clear;
 * QEMU 7.2's VT-d delivers them).  As VFIO exposes a table only where
 * MSI is isolated, msix_lut is the operator's statement that it is.  A
 * device whose MSI-X table has a BAR or an entry of its own is lent at
 * full speed either way.  lim is how much of the BAR may be exposed (up
 * to its MSI-X table); [*start, + *len) is the block the entries
 * translate.
 */
static int bar_block(u32 peer, u64 phys, u64 size, u64 lim, u64 align,
		     u64 *start, u64 *len)
{
	struct pci_dev *pdev = NULL;
	u64 end;
	int b;

	*start = round_down(phys, align);
	end = round_up(phys + lim, align);
	*len = end - *start;
	for_each_pci_dev(pdev) {
		for (b = 0; b <= PCI_ROM_RESOURCE; b++) {
			struct resource *r = &pdev->resource[b];

			if (!(r->flags & IORESOURCE_MEM) || !resource_size(r) ||
			    r->start == phys || r->end < *start ||
			    r->start >= end)
				continue;
			pr_warn("smartio: a %llu KiB entry for host%u around the BAR at %#llx would expose %s BAR %d (%pR): refused\n",
				align >> 10, peer, phys, pci_name(pdev), b, r);
			pci_dev_put(pdev);
			return -EPERM;
		}
	}
	if (lim < size && phys + lim < end) {
		if (!msix_lut) {
			pr_warn("smartio: a %llu KiB entry for host%u would expose the MSI-X table of the BAR at %#llx (%llu KiB) to its CPU: refused (lend a function whose MSI-X table has a BAR of its own, or load smartio.ko with msix_lut=1 where the lender's interrupt remapping blocks compatibility-format MSIs)\n",
				align >> 10, peer, phys, size >> 10);
			return -EPERM;
		}
		pr_warn("smartio: a %llu KiB entry for host%u exposes the MSI-X table of the BAR at %#llx (%llu KiB) to its CPU (msix_lut=1)\n",
			align >> 10, peer, phys, size >> 10);
	}
	return 0;
}

/*
 * The DMA window on the direct window (sio_k.direct_size): the peer's
 * one translation there leads to the borrow's window at iova.
 */
static int inbound_direct(u32 peer, u64 iova, u64 size, bool map)
{
	if (!map) {
		sio_ntb_fab_direct_clear(peer);
		return 0;
	}
	if (size > sio_k.direct_size || !is_power_of_2(size))
		return -EINVAL;
	return sio_ntb_fab_direct_set(peer, iova, size);
}

int sio_ntb_lend_inbound(u32 peer, u32 kind, u64 peer_addr, u64 local_addr,
			 u64 size, bool map)
{
	const struct sio_adapter *ad;
	u64 target, off, piece, align;
	u32 first, i, count;
	int err;

	if (peer >= sio_k.nnodes || peer == sio_k.self || !size)
		return -EINVAL;
	ad = &sio_node(sio_k.reg, peer)->adapter[0];
	if (kind == SIO_INB_DMA && sio_k.direct_size &&
	    peer_addr == ad->window_base + ad->window_size)
		return inbound_direct(peer, local_addr, size, map);
	if (peer_addr < ad->window_base ||
	    (peer_addr - ad->window_base) % ad->slot_size ||
	    size > ad->window_size - (peer_addr - ad->window_base))
		return -EINVAL;
	if (map) {
		err = inbound_target(kind, local_addr, size, &target);
		if (err)
			return err;
		/*
		 * A BAR up to its MSI-X table: the borrower's messages are
		 * written here, once checked (issue 28, item 2); on entries
		 * that translate aligned blocks, up to the block's end.
		 */
		align = sio_ntb_fab_lut_align(peer);
		if (kind == SIO_INB_BAR) {
			u64 lim = sio_kplat_msix_limit(local_addr, size);

			if (!lim)
				return 0;	/* the table first: nothing */
			if (align > PAGE_SIZE) {
				err = bar_block(peer, local_addr, size, lim,
						align, &target, &off);
				if (err)
					return err;
				if (DIV_ROUND_UP_ULL(off, ad->slot_size) >
				    DIV_ROUND_UP_ULL(size, ad->slot_size))
					return -EINVAL;	/* more than slots */
				lim = off;
			}
			size = lim;
		}
	}
	first = (peer_addr - ad->window_base) / ad->slot_size;
	count = DIV_ROUND_UP_ULL(size, ad->slot_size);
	for (i = 0; i < count; i++) {
		off = (u64)i * ad->slot_size;
		piece = min(size - off, ad->slot_size);
		if (!map) {
			sio_ntb_fab_lut_clear(peer, first + i);
			continue;
		}
		err = sio_ntb_fab_lut_set(peer, first + i, target + off,
					  PAGE_ALIGN(piece));
		if (err) {
			while (i--)
				sio_ntb_fab_lut_clear(peer, first + i);
			return err;
		}
	}
	return 0;
}

/*
 * A segment of this node mapped for a device it borrows.  The device
 * reaches the segment's memory through the borrow's window, whose device
 * address is dma_base (the lender's DMA window as the device sees it):
 *  - identity (RAM from address 0, SIO_INB_DMA) or premapped (all RAM at
 *    the window's IOVA plus its physical address, premap=1): at dma_base
 *    plus that memory's physical address, as the shadow's DMA mappings
 *    are (the heap is physically contiguous, smartio_ntb's
 *    SIO_INBOUND_ATTRS);
 *  - strict: a range of the window's pool mapped onto the segment
 *    (sio_ntb_window_seg_map), at dma_base plus its offset in the window,
 *    until the core releases it (window_dma_release: sio_plat.c).
 */
int sio_ntb_lend_window_addr(u32 dev, u64 phys, u64 size, u64 *ioaddr)
{
	const struct sio_borrow *b;
	struct sio_ntb_window *w;
	enum sio_win_mode mode;
	dma_addr_t iova;
	phys_addr_t bus;
	u64 win_iova;
	int bidx, err;

	bidx = sio_borrow_find(sio_k.reg, dev, sio_k.self);
	if (bidx < 0)
		return bidx;
	w = sio_ntb_window_get(dev);
	if (!w)
		return -ENXIO;	/* the borrow is ending */
	mode = w->mode;
	win_iova = w->iova;
	sio_ntb_window_put(w);
	b = sio_borrow_at(sio_k.reg, (u32)bidx);
	err = sio_ntb_fab_seg_bus(phys, size, &bus);
	if (err)
		return err;
	if (mode != SIO_WIN_STRICT) {
		if (bus >= b->iova_size || size > b->iova_size - bus)
			return -ERANGE;	/* beyond what the window translates */
		*ioaddr = sio_kplat_dev_iova(b->lender, b->dma_addr) + bus;
		return 0;
	}
	if (b->iova != win_iova)
		return -EPROTO;
	err = sio_ntb_window_seg_map(dev, phys, bus, size, &iova);
	if (err)
		return err;
	*ioaddr = sio_kplat_dev_iova(b->lender, b->dma_addr) + (iova - b->iova);
	return 0;
}

/* --- peer-to-peer between two devices lent here ---------------------------- */

/* Whether [phys, + size) lies in one BAR of a device this machine lends. */
static bool lent_bar(u64 phys, u64 size)
{
	u32 i, b;

	for (i = 0; i < sio_k.ndevs; i++)
		for (b = 0; b < PCI_STD_NUM_BARS && sio_k.dev[i].pdev; b++) {
			struct pci_dev *pdev = sio_k.dev[i].pdev;
			u64 start = pci_resource_start(pdev, b);
			u64 len = pci_resource_len(pdev, b);

			if ((pci_resource_flags(pdev, b) & IORESOURCE_MEM) &&
			    len && phys >= start && size <= len &&
			    phys - start <= len - size)
				return true;
		}
	return false;
}

/*
 * SmartIO 4.4's first case: the device with requester id rid, claimed
 * here (its own IOMMU domain, sio_lender.c), reaches a BAR of another
 * device lent here at iova.  Nothing else is mapped this way: a device
 * still with its driver is in that driver's DMA domain (EBUSY), and a
 * target that is no such BAR (a segment of this machine, a multicast
 * group) is not offered over the kernel (EOPNOTSUPP).  The domain's
 * window addresses start at SIO_K_DEV_IOVA; the core's IOVA space for
 * these lies below.
 */
int sio_ntb_lend_peer_map(u16 rid, u64 iova, u64 phys, u64 size)
{
	struct sio_kdev *kd = own_by_rid(rid);
	struct sio_kpeer *p = NULL;
	u32 i;
	int err;

	if (!lent_bar(phys, size))
		return -EOPNOTSUPP;
	if (!kd || !kd->claimed || !kd->domain)
		return -EBUSY;
	size = PAGE_ALIGN(size);
	if (!PAGE_ALIGNED(iova) || !PAGE_ALIGNED(phys) ||
	    iova + size > SIO_K_DEV_IOVA || iova + size < iova)
		return -ERANGE;
	for (i = 0; i < SIO_K_PEER_MAPS && !p; i++)
		if (!lend.peer[i].domain)
			p = &lend.peer[i];
	if (!p)
		return -ENOSPC;
	err = sio_iommu_map(kd->domain, iova, phys, size,
			    IOMMU_READ | IOMMU_WRITE | IOMMU_MMIO, GFP_KERNEL);
	if (err)
		return err;
	*p = (struct sio_kpeer){ kd->domain, rid, iova, size };
	return 0;
}

/*
 * Undoes it.  A device released meanwhile took its domain, and the
 * mapping, with it; a domain of a later claim never had this one.
 */
void sio_ntb_lend_peer_unmap(u16 rid, u64 iova)
{
	u32 i;

	for (i = 0; i < SIO_K_PEER_MAPS; i++) {
		struct sio_kpeer *p = &lend.peer[i];
		struct sio_kdev *kd;

		if (!p->domain || p->rid != rid || p->iova != iova)
			continue;
		kd = own_by_rid(rid);
		if (kd && kd->domain == p->domain)
			iommu_unmap(p->domain, iova, p->size);
		p->domain = NULL;
	}
}

/* --- the borrower's shadows ------------------------------------------------ */

static struct sio_kdev *remote(u32 dev)
{
	if (dev >= ARRAY_SIZE(lend.rdev) || dev >= sio_k.reg->ndevices)
		return NULL;
	lend.rdev[dev].index = dev;
	return &lend.rdev[dev];
}

/* The shadow of registry device dev on this machine, or NULL. */
struct sio_shadow *sio_ntb_lend_shadow(u32 dev)
{
	return dev < ARRAY_SIZE(lend.rdev) ? lend.rdev[dev].shadow : NULL;
}

static int ram_end(struct resource *res, void *arg)
{
	u64 *end = arg;

	*end = max_t(u64, *end, res->end + 1);
	return 0;
}

/* The DMA window: all of this machine's RAM, a power of two. */
u64 sio_ntb_lend_ram_window(void)
{
	u64 end = 0;

	walk_iomem_res_desc(IORES_DESC_NONE,
			    IORESOURCE_SYSTEM_RAM | IORESOURCE_BUSY, 0, -1,
			    &end, ram_end);
	return roundup_pow_of_two(max_t(u64, end, PAGE_SIZE));
}

/*
 * The DMA window a borrow from here gets when it asks for none: what the
 * lender's window toward us holds beside the MSI window (the same
 * geometry on every machine of one switch), the direct window where DMA
 * windows take it, at most all of this machine's RAM.  All of RAM when
 * the window holds it in advance or is identity.  Caller holds the lock.
 */
static u64 default_window(u32 lender)
{
	const struct sio_adapter *ad = &sio_node(sio_k.reg, lender)->adapter[0];
	u64 ram = sio_ntb_lend_ram_window(), room;

	if (sio_ntb_window_premap() || !sio_ntb_window_translated())
		return ram;
	if (sio_k.direct_size)
		return min(ram, sio_k.direct_size);
	room = ad->window_size -
	       min(ad->window_size, round_up(SIO_MSI_SIZE, ad->slot_size));
	return room < PAGE_SIZE ? ram : min(ram, rounddown_pow_of_two(room));
}

/*
 * BORROW for this node with a DMA window of window bytes: 0 for the
 * default, SIO_DMA_WINDOW_RAM for all of this machine's RAM (the core's
 * registry does not know it).
 */
static int borrow_cmd(u32 dev, u64 window)
{
	struct sio_k_req *q = sio_k_req_new(SIO_CMD_BORROW);

	if (!q)
		return -ENOMEM;
	mutex_lock(&sio_k.lock);
	sio_msg_put_u32(&q->m, SIO_A_DEV, sio_dev(sio_k.reg, dev)->fdid);
	if (!window)
		window = default_window(sio_dev(sio_k.reg, dev)->node);
	mutex_unlock(&sio_k.lock);
	if (window == SIO_DMA_WINDOW_RAM)
		window = sio_ntb_lend_ram_window();
	sio_msg_put_u32(&q->m, SIO_A_NODE, sio_k.self);
	sio_msg_put_u64(&q->m, SIO_A_SIZE, window);
	return sio_k_req_send(q);
}

static void shadow_gone(struct sio_kdev *kd)
{
	sio_shadow_remove(kd);
	/* Mappings of its BARs go with the view. */
	sio_view_remove(kd->view[0]);
	kd->view[0] = NULL;
}

int sio_ntb_k_borrow(u32 dev, u32 node, u64 window)
{
	struct sio_kdev *kd = remote(dev);
	struct sio_view *v;
	int err;

	/*
	 * For another node: the core refuses it (EPERM) before anything is
	 * sent, window= or not (lib/core/dispatch.c).
	 */
	if (node != sio_k.self || !kd)
		return sio_k_cmd(SIO_CMD_BORROW, dev, node);
	mutex_lock(&lend.lock);
	err = kd->shadow ? -EBUSY : borrow_cmd(dev, window);
	if (err)
		goto unlock;
	/* The borrower's class devices first: the shadow's bus hangs below. */
	v = sio_view_add(dev, node);
	if (IS_ERR(v)) {
		err = PTR_ERR(v);
		goto give_back;
	}
	kd->view[0] = v;
	err = sio_shadow_create(kd, node, sio_view_device(v));
	if (err)
		goto remove_view;
	mutex_unlock(&lend.lock);
	return 0;

remove_view:
	sio_view_remove(v);
	kd->view[0] = NULL;
give_back:
	sio_k_cmd(SIO_CMD_RETURN, dev, node);
unlock:
	mutex_unlock(&lend.lock);
	return err;
}

/* The driver lets go of the shadow first, then the core returns it. */
int sio_ntb_k_return(u32 dev, u32 node)
{
	struct sio_kdev *kd = remote(dev);

	if (node == sio_k.self && kd) {
		mutex_lock(&lend.lock);
		if (kd->shadow)
			shadow_gone(kd);
		mutex_unlock(&lend.lock);
	}
	return sio_k_cmd(SIO_CMD_RETURN, dev, node);
}

/* Shadows whose borrow the core ended (reclaim, the lender lost) go. */
static void sync_shadows(struct work_struct *work)
{
	struct sio_kdev *kd;
	bool gone;
	u32 i;

	mutex_lock(&lend.lock);
	for (i = 0; i < ARRAY_SIZE(lend.rdev); i++) {
		kd = &lend.rdev[i];
		if (!kd->shadow)
			continue;
		mutex_lock(&sio_k.lock);
		gone = sio_borrow_find(sio_k.reg, i, sio_k.self) < 0;
		mutex_unlock(&sio_k.lock);
		if (gone) {
			pr_info("smartio: %s taken away: surprise removal of its shadow\n",
				sio_dev(sio_k.reg, i)->name);
			shadow_gone(kd);
		}
	}
	mutex_unlock(&lend.lock);
}

void sio_ntb_lend_notify(void)
{
	schedule_work(&lend.sync);
}

void sio_ntb_lend_init(void)
{
	mutex_init(&lend.lock);
	INIT_WORK(&lend.sync, sync_shadows);
	mutex_init(&lend.claim_lock);
	INIT_WORK(&lend.settle, settle_work);
}

/* Unloading: every shadow goes and its borrow is returned. */
void sio_ntb_lend_exit(void)
{
	u32 i;

	cancel_work_sync(&lend.sync);
	for (i = 0; i < ARRAY_SIZE(lend.rdev); i++)
		if (lend.rdev[i].shadow)
			sio_ntb_k_return(i, sio_k.self);
	cancel_work_sync(&lend.sync);
	/* What is still claimed, sio_exit gives back after the last borrow. */
	mutex_lock(&sio_k.lock);
	lend.closing = true;
	mutex_unlock(&sio_k.lock);
	cancel_work_sync(&lend.settle);
}

void sio_ntb_lend_show(struct seq_file *s)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(lend.rdev); i++)
		sio_shadow_show(s, &lend.rdev[i]);
}
