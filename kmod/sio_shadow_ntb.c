// SPDX-License-Identifier: GPL-2.0
/*
 * A shadow over an NTB: what differs from one machine (sio_shadow.c).
 *
 * DMA.  The borrower's inbound look-up-table entries lead the lender's
 * DMA window to the borrow's window in this machine's NTB function's
 * IOMMU domain (sio_ntb_window.c), and the lender's IOMMU maps the
 * device's addresses of that window onto its outbound window toward us.
 * Strict windows map each page the driver maps (sio_shadow.c's DMA API,
 * in that domain).  A premapped window (SmartIO section 8.1), or an
 * identity one where the NTB function has no IOMMU, holds all of this
 * machine's RAM at its physical address: a DMA mapping is address
 * arithmetic, the window's device address plus the page's physical
 * address, with no per-mapping IOMMU work and no bounce copy -- the
 * device's writes land in the driver's own pages.  The price is that the
 * lent device can reach all of the borrower's RAM (the lender's IOMMU
 * still confines it to the window); smartio(4) says so.
 *
 * Interrupts.  The driver's MSI-X messages (this machine's local APIC
 * address and a vector) must be the device's view: the shadow gets an
 * MSI domain of its own, a child of this machine's vector domain with the
 * PCI MSI chip the function would have had, whose message write moves
 * the address into the MSI window (the lender's outbound entry that this
 * machine's inbound entry leads to the interrupt range, 0xfee00000).
 * The lender does not translate the table's pages for us (issue 28, item
 * 2: a message there could aim the device's writes anywhere its IOMMU
 * domain reaches), so what the PCI core writes into the table through
 * the window goes nowhere; a work item sends the lender each entry as
 * the descriptors hold it (MSIX_ENTRY) after every message write, mask
 * and unmask, and the lender writes it once it has checked the address
 * (sio_plat.c).  Until then the entry stays masked and the device keeps
 * the interrupt pending.  The message arrives as a write of
 * this machine's NTB function: without interrupt remapping (compatibility
 * format messages) it is delivered as is; with remapping the IRTE's
 * source-id would have to be the NTB function's (not done: the QEMU test
 * runs without remapping).
 */
#include <linux/dma-map-ops.h>
#include <linux/irq.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "sio_shadow.h"

static dma_addr_t ntb_dma_addr(struct sio_shadow *sh, phys_addr_t phys,
			       size_t size)
{
	if (phys >= sh->dma_size || size > sh->dma_size - phys)
		return DMA_MAPPING_ERROR;	/* RAM beyond the window */
	atomic64_inc(&sh->maps);
	atomic_inc(&sh->live);
	return sh->dma_base + phys;
}

static void ntb_dma_put(struct sio_shadow *sh)
{
	if (atomic_dec_and_test(&sh->live))
		wake_up_var(&sh->live);
}

static void *ntb_alloc(struct device *dev, size_t size, dma_addr_t *handle,
		       gfp_t gfp, unsigned long attrs)
{
	return sio_shadow_pages(dev, size, gfp, handle, ntb_dma_addr);
}

static void ntb_free(struct device *dev, size_t size, void *vaddr,
		     dma_addr_t handle, unsigned long attrs)
{
	ntb_dma_put(sio_dev_shadow(dev));
	free_pages((unsigned long)vaddr, get_order(size));
}

static dma_addr_t ntb_map_page(struct device *dev, struct page *page,
			       unsigned long offset, size_t size,
			       enum dma_data_direction dir, unsigned long attrs)
{
	return ntb_dma_addr(sio_dev_shadow(dev), page_to_phys(page) + offset,
			    size);
}

static void ntb_unmap_page(struct device *dev, dma_addr_t addr, size_t size,
			   enum dma_data_direction dir, unsigned long attrs)
{
	ntb_dma_put(sio_dev_shadow(dev));
}

/*
 * Every entry keeps its pages' addresses; entries that are physically
 * back to back become one DMA segment within the device's limits.
 */
static int ntb_map_sg(struct device *dev, struct scatterlist *sgl, int nents,
		      enum dma_data_direction dir, unsigned long attrs)
{
	struct sio_shadow *sh = sio_dev_shadow(dev);
	struct scatterlist *sg, *out = sgl;
	int i, count = 0;

	for_each_sg(sgl, sg, nents, i) {
		phys_addr_t phys = sg_phys(sg);

		if (phys >= sh->dma_size || sg->length > sh->dma_size - phys)
			return -EIO;
		sio_sg_add(dev, &out, &count, sh->dma_base + phys, sg->length);
	}
	sio_sg_end(sgl, nents, count);
	atomic64_inc(&sh->maps);
	atomic_inc(&sh->live);
	return count;
}

static void ntb_unmap_sg(struct device *dev, struct scatterlist *sgl,
			 int nents, enum dma_data_direction dir,
			 unsigned long attrs)
{
	if (nents && sg_dma_len(sgl))
		ntb_dma_put(sio_dev_shadow(dev));
}

static u64 ntb_required_mask(struct device *dev)
{
	return DMA_BIT_MASK(64);
}

/*
 * The device reaches the window at the lender's IOMMU addresses of it
 * (SIO_K_DEV_IOVA up): a driver's DMA mask must cover all of them.
 */
int sio_shadow_ntb_dma_supported(struct device *dev, u64 mask)
{
	struct sio_shadow *sh = sio_dev_shadow(dev);

	return sh->dma_base + sh->dma_size - 1 <= mask;
}

static const struct dma_map_ops sio_shadow_ntb_dma_ops = {
	.alloc = ntb_alloc,
	.free = ntb_free,
	.map_page = ntb_map_page,
	.unmap_page = ntb_unmap_page,
	.map_sg = ntb_map_sg,
	.unmap_sg = ntb_unmap_sg,
	.map_resource = sio_shadow_p2p_map,
	.unmap_resource = sio_shadow_p2p_unmap,
	.get_required_mask = ntb_required_mask,
	.dma_supported = sio_shadow_ntb_dma_supported,
};

/* --- BAR registers ---------------------------------------------------------- */

/*
 * The shadow's BARs are its outbound window, which the lender's BAR
 * registers cannot say: the shadow's BAR and ROM registers are emulated
 * here (sizing included), from the registry's sizes and flags, and never
 * reach the lender (whose own emulation keeps the device's addresses).
 */
static void sio_shadow_ntb_bars(struct sio_shadow *sh,
				const struct sio_device *d)
{
	int i;

	for (i = 0; i < PCI_STD_NUM_BARS; i++) {
		u64 addr = sh->win[i].start;
		u32 flags = 0;

		if (!d->bar[i].size || !sh->win[i].flags)
			continue;
		if (d->bar[i].flags & SIO_BAR_MEM64)
			flags |= PCI_BASE_ADDRESS_MEM_TYPE_64;
		/*
		 * A 32-bit BAR whose window lies above 4 GiB (an NTB's
		 * 64-bit window usually does) reads as a 64-bit one when
		 * the next BAR register is unused, as on QEMU's edu and
		 * ivshmem: its address cannot be said otherwise.
		 */
		if (!(flags & PCI_BASE_ADDRESS_MEM_TYPE_64) &&
		    upper_32_bits(addr + d->bar[i].size - 1) &&
		    i + 1 < PCI_STD_NUM_BARS && !d->bar[i + 1].size)
			flags |= PCI_BASE_ADDRESS_MEM_TYPE_64;
		if (d->bar[i].flags & SIO_BAR_PREFETCH)
			flags |= PCI_BASE_ADDRESS_MEM_PREFETCH;
		sh->bar_flags[i] = flags;
		sh->bar_mask[i] = lower_32_bits(~(d->bar[i].size - 1)) &
				  PCI_BASE_ADDRESS_MEM_MASK;
		sh->bar_reg[i] = lower_32_bits(addr) | flags;
		if ((flags & PCI_BASE_ADDRESS_MEM_TYPE_64) &&
		    i + 1 < PCI_STD_NUM_BARS) {
			i++;
			sh->bar_mask[i] = upper_32_bits(~(d->bar[i - 1].size - 1));
			sh->bar_reg[i] = upper_32_bits(addr);
		}
	}
}

static bool sio_shadow_ntb_cfg(struct sio_shadow *sh, int where, int size,
			       u32 *val, bool write)
{
	int reg = where & ~3, shift = (where & 3) * 8, i;
	u32 v, mask = size == 4 ? ~0u : (1u << (size * 8)) - 1;

	if (reg == PCI_ROM_ADDRESS) {
		if (!write)
			*val = 0;	/* no expansion ROM across the NTB */
		return true;
	}
	if (reg < PCI_BASE_ADDRESS_0 || reg > PCI_BASE_ADDRESS_5)
		return false;
	i = (reg - PCI_BASE_ADDRESS_0) / 4;
	if (write) {
		v = (sh->bar_reg[i] & ~(mask << shift)) | (*val & mask) << shift;
		sh->bar_reg[i] = (v & sh->bar_mask[i]) | sh->bar_flags[i];
		return true;
	}
	*val = (sh->bar_reg[i] >> shift) & mask;
	return true;
}

/* --- the MSI domain -------------------------------------------------------- */

/* One entry to the lender: 0, or the errno of its refusal. */
static int ntb_msix_send(struct sio_shadow *sh, u32 index, const u8 *entry)
{
	struct sio_k_req *q = sio_k_req_new(SIO_CMD_MSIX_ENTRY);

	if (!q)
		return -ENOMEM;
	sio_msg_put_u32(&q->m, SIO_A_DEV, sh->fdid);
	sio_msg_put_u32(&q->m, SIO_A_NODE, sh->borrower);
	sio_msg_put_u32(&q->m, SIO_A_INDEX, index);
	sio_msg_put_bin(&q->m, SIO_A_DATA, entry, PCI_MSIX_ENTRY_SIZE);
	return sio_k_req_send(q);
}

/* The slot of an MSI-X entry or of MSI's message, or -1 (virtual). */
static int ntb_msi_slot(struct sio_shadow *sh, struct msi_desc *desc)
{
	if (!desc->pci.msi_attrib.is_msix)
		return sh->msi_slots - 1;
	return desc->msi_index < sh->msi_slots - 1 ? desc->msi_index : -1;
}

/*
 * Part of a slot as the chip set it, for the work to send (atomic
 * context): len bytes at off of the entry.
 */
static void ntb_msi_want(struct sio_shadow *sh, int slot, u32 off,
			 const void *val, u32 len)
{
	unsigned long flags;

	if (slot < 0)
		return;
	raw_spin_lock_irqsave(&sh->msi_lock, flags);
	memcpy(sh->msi_want[slot] + off, val, len);
	__set_bit(slot, sh->msi_dirty);
	raw_spin_unlock_irqrestore(&sh->msi_lock, flags);
	if (READ_ONCE(sh->msix_live))
		schedule_work(&sh->msix_work);
}

/*
 * A slot as the chip last set it, sent unless the lender holds it
 * already.  The copy is taken with the send lock held, so that sends
 * of one slot never overtake each other with older contents.
 */
static void ntb_msi_send(struct sio_shadow *sh, u32 slot)
{
	u32 index = slot == sh->msi_slots - 1 ? SIO_MSI_ENTRY : slot;
	u8 e[PCI_MSIX_ENTRY_SIZE];
	unsigned long flags;
	int err;

	mutex_lock(&sh->msi_send_lock);
	raw_spin_lock_irqsave(&sh->msi_lock, flags);
	memcpy(e, sh->msi_want[slot], sizeof(e));
	__clear_bit(slot, sh->msi_dirty);
	raw_spin_unlock_irqrestore(&sh->msi_lock, flags);
	if (!test_bit(slot, sh->msi_sent_ok) ||
	    memcmp(sh->msi_sent[slot], e, sizeof(e))) {
		err = ntb_msix_send(sh, index, e);
		/* ENOENT: the driver let go of its vectors, nothing routed. */
		if (err && err != -ENOENT)
			dev_warn_ratelimited(&sh->pdev->dev, "smartio: MSI%s entry %d not written by the lender: %d\n",
					     index == SIO_MSI_ENTRY ? "" : "-X",
					     (int)index, err);
		if (err) {
			clear_bit(slot, sh->msi_sent_ok);
		} else {
			memcpy(sh->msi_sent[slot], e, sizeof(e));
			set_bit(slot, sh->msi_sent_ok);
		}
	}
	mutex_unlock(&sh->msi_send_lock);
}

/* Every slot the chip changed since it was sent, as the device must hold it. */
static void ntb_msix_forward(struct work_struct *work)
{
	struct sio_shadow *sh = container_of(work, struct sio_shadow,
					     msix_work);
	unsigned long flags;
	u32 slot;

	for (;;) {
		raw_spin_lock_irqsave(&sh->msi_lock, flags);
		slot = find_first_bit(sh->msi_dirty, sh->msi_slots);
		raw_spin_unlock_irqrestore(&sh->msi_lock, flags);
		if (slot >= sh->msi_slots)
			return;
		ntb_msi_send(sh, slot);
	}
}

static void sio_shadow_ntb_msix_stop(struct sio_shadow *sh)
{
	if (!sh->msi_want)
		return;
	WRITE_ONCE(sh->msix_live, false);
	cancel_work_sync(&sh->msix_work);
}

/* The message as the device must send it: into the MSI window. */
static void ntb_msi_write(struct irq_data *data, struct msi_msg *msg)
{
	struct msi_desc *desc = irq_data_get_msi_desc(data);
	struct sio_shadow *sh = sio_dev_shadow(msi_desc_to_dev(desc));
	u64 addr = (u64)msg->address_hi << 32 | msg->address_lo;
	struct msi_msg m = *msg;
	u8 e[PCI_MSIX_ENTRY_VECTOR_CTRL];	/* the entry's message words */

	/* Address 0 is a vector shut down: written as it is. */
	if (addr >= SIO_MSI_BASE && addr < SIO_MSI_BASE + SIO_MSI_SIZE) {
		addr = sh->msi_base + (addr - SIO_MSI_BASE);
	} else if (addr) {
		/* Not this machine's interrupt range: the device stays mute. */
		pci_warn(sh->pdev, "smartio: MSI address %#llx not routed\n",
			 addr);
		addr = 0;
		m.data = 0;
	}
	m.address_lo = lower_32_bits(addr);
	m.address_hi = upper_32_bits(addr);
	/*
	 * The descriptor keeps what the table holds (restored on resume).
	 * MSI's registers are config space, whose cycles sleep here (they
	 * cross the NTB) while this runs atomic; the device would not take
	 * them from us anyway: the lender writes the message.
	 */
	if (desc->pci.msi_attrib.is_msix)
		pci_write_msi_msg(data->irq, &m);
	else
		desc->msg = m;
	put_unaligned_le32(m.address_lo, e);
	put_unaligned_le32(m.address_hi, e + 4);
	put_unaligned_le32(m.data, e + 8);
	ntb_msi_want(sh, ntb_msi_slot(sh, desc), 0, e, sizeof(e));
}

/*
 * The write that enables MSI: the lender gets the message before the
 * driver can make the device send it.  The work would send it only once
 * the enabling task lets go of the descriptors' lock, and a device
 * without MSI mask bits that raises before the lender wrote the message
 * sends it to the old address: that interrupt is lost (with mask bits,
 * or with MSI-X, it waits, masked, until the message comes with the
 * unmask).
 */
static void ntb_cfg_written(struct sio_shadow *sh, int where, int size,
			    u32 val)
{
	int ctl = sh->pdev ? sh->pdev->msi_cap + PCI_MSI_FLAGS : 0;

	if (!ctl || where > ctl || where + size <= ctl)
		return;
	if ((val >> (8 * (ctl - where))) & PCI_MSI_FLAGS_ENABLE &&
	    READ_ONCE(sh->msix_live))
		ntb_msi_send(sh, sh->msi_slots - 1);
}

/*
 * A vector masked or unmasked: MSI-X's through the PCI core's chip (its
 * vector control word), MSI's mask bit as ntb_msi_write's message; the
 * lender writes either.
 */
static void ntb_msi_set_mask(struct irq_data *data, bool mask)
{
	struct msi_desc *desc = irq_data_get_msi_desc(data);
	struct sio_shadow *sh = sio_dev_shadow(msi_desc_to_dev(desc));
	__le32 ctrl = cpu_to_le32(mask && desc->pci.msi_attrib.can_mask);

	if (desc->pci.msi_attrib.is_msix) {
		(mask ? sh->chip_mask : sh->chip_unmask)(data);
		ctrl = cpu_to_le32(desc->pci.msix_ctrl);
	}
	ntb_msi_want(sh, ntb_msi_slot(sh, desc), PCI_MSIX_ENTRY_VECTOR_CTRL,
		     &ctrl, sizeof(ctrl));
}

static void ntb_msi_mask(struct irq_data *data)
{
	ntb_msi_set_mask(data, true);
}

static void ntb_msi_unmask(struct irq_data *data)
{
	ntb_msi_set_mask(data, false);
}

/*
 * A new CPU for the interrupt.  With interrupt remapping the parent only
 * rewrites its table entry (IRQ_SET_MASK_OK_DONE: the message stays);
 * without, the message names the new vector: the closest parent that
 * composes messages composes it, and it is written as any other
 * (msi_domain_set_affinity() does this but is not exported).
 */
static int ntb_msi_set_affinity(struct irq_data *data,
				const struct cpumask *mask, bool force)
{
	struct irq_data *pos = data->parent_data;
	struct msi_msg msg = {};
	int ret = irq_chip_set_affinity_parent(data, mask, force);

	if (ret < 0 || ret == IRQ_SET_MASK_OK_DONE)
		return ret;
	while (pos && !(pos->chip && pos->chip->irq_compose_msi_msg))
		pos = pos->parent_data;
	if (pos) {
		pos->chip->irq_compose_msi_msg(pos, &msg);
		ntb_msi_write(data, &msg);
	}
	return ret;
}

/*
 * The interrupt the shadow's driver allocates is remapped as one of the
 * NTB function's: the device's message crosses the NTB and arrives as
 * that function's write, so its interrupt remapping entry must name that
 * function as the source (the hardware checks it).  The parent domain
 * gets a descriptor of the NTB function instead of the shadow's; the
 * shadow's descriptor stays with the interrupt, and the hwirq, unique in
 * this domain of one device, is the entry's index.
 */
static void ntb_msi_set_desc(msi_alloc_info_t *arg, struct msi_desc *desc)
{
	struct sio_shadow *sh = sio_dev_shadow(msi_desc_to_dev(desc));

	arg->desc = &sh->ntb_desc;
	arg->hwirq = desc->msi_index;
}

/* What x86's parent domains (vector, interrupt remapping) ask to know. */
static int ntb_msi_prepare(struct irq_domain *domain, struct device *dev,
			   int nvec, msi_alloc_info_t *arg)
{
	memset(arg, 0, sizeof(*arg));
	arg->type = to_pci_dev(dev)->msix_enabled ?
		    X86_IRQ_ALLOC_TYPE_PCI_MSIX : X86_IRQ_ALLOC_TYPE_PCI_MSI;
	return 0;
}

/* A slot per MSI-X table entry the function has, and one for MSI. */
static int ntb_msi_slots(struct sio_shadow *sh)
{
	int n = pci_msix_vec_count(sh->pdev);

	sh->msi_slots = (n > 0 ? n : 0) + 1;
	sh->msi_want = kvcalloc(sh->msi_slots, sizeof(*sh->msi_want),
				GFP_KERNEL);
	sh->msi_sent = kvcalloc(sh->msi_slots, sizeof(*sh->msi_sent),
				GFP_KERNEL);
	sh->msi_dirty = bitmap_zalloc(sh->msi_slots, GFP_KERNEL);
	sh->msi_sent_ok = bitmap_zalloc(sh->msi_slots, GFP_KERNEL);
	if (!sh->msi_want || !sh->msi_sent || !sh->msi_dirty ||
	    !sh->msi_sent_ok)
		return -ENOMEM;	/* sio_shadow_ntb_msi_free frees them */
	INIT_WORK(&sh->msix_work, ntb_msix_forward);
	raw_spin_lock_init(&sh->msi_lock);
	mutex_init(&sh->msi_send_lock);
	WRITE_ONCE(sh->msix_live, true);
	return 0;
}

/*
 * A PCI/MSI domain of the shadow's own, the child of the domain that
 * delivers this machine's NTB function's messages: the interrupt
 * remapping domain of its IOMMU when remapping is on, the vector domain
 * otherwise.  6.1 gives the function a PCI/MSI domain whose parent that
 * is; x86 since 6.2 gives each function a domain of its own under it and
 * hands the function the parent itself.  Either way the shadow's domain
 * is built here, as x86 built its PCI/MSI domain in 6.1 (the PCI core's
 * mask and unmask, edge handling, the parent acknowledging), with the
 * message write of ntb_msi_write() (x86's msi_alloc_info_t: the domain
 * is x86's, as the QEMU tests and the NTB drivers used here are).
 */
static int sio_shadow_ntb_msi(struct sio_shadow *sh)
{
	struct pci_dev *ntb = sio_ntb_fab_pci_dev();
	struct irq_domain *def = ntb ? dev_get_msi_domain(&ntb->dev) : NULL;
	struct irq_domain *parent = def && irq_domain_is_msi(def) ?
				    def->parent : def;
	int err;

	if (!parent) {
		pci_err(sh->pdev, "smartio: the NTB function has no MSI domain\n");
		return -EOPNOTSUPP;
	}
	sh->ntb_desc.dev = &ntb->dev;
	sh->msi_chip = (struct irq_chip){
		.name = "smartio-NTB-MSI",
		.irq_ack = irq_chip_ack_parent,
		.irq_mask = ntb_msi_mask,
		.irq_unmask = ntb_msi_unmask,
		.irq_retrigger = irq_chip_retrigger_hierarchy,
		.irq_set_affinity = ntb_msi_set_affinity,
		.irq_write_msi_msg = ntb_msi_write,
		.flags = IRQCHIP_SKIP_SET_WAKE | IRQCHIP_AFFINITY_PRE_STARTUP,
	};
	sh->chip_mask = pci_msi_mask_irq;
	sh->chip_unmask = pci_msi_unmask_irq;
	err = ntb_msi_slots(sh);
	if (err)
		return err;
	sh->msi_ops = (struct msi_domain_ops){
		.msi_prepare = ntb_msi_prepare,
		.set_desc = ntb_msi_set_desc,
	};
	sh->msi_info = (struct msi_domain_info){
		.flags = MSI_FLAG_USE_DEF_DOM_OPS | MSI_FLAG_USE_DEF_CHIP_OPS |
			 MSI_FLAG_PCI_MSIX,
		.ops = &sh->msi_ops,
		.chip = &sh->msi_chip,
		.handler = handle_edge_irq,
		.handler_name = "edge",
	};
	sh->msi_fwnode = irq_domain_alloc_named_id_fwnode("smartio-shadow",
							  sh->kd->index);
	if (!sh->msi_fwnode)
		return -ENOMEM;
	sh->msi_domain = pci_msi_create_irq_domain(sh->msi_fwnode,
						   &sh->msi_info, parent);
	if (!sh->msi_domain) {
		irq_domain_free_fwnode(sh->msi_fwnode);
		sh->msi_fwnode = NULL;
		return -ENOMEM;
	}
	dev_set_msi_domain(&sh->pdev->dev, sh->msi_domain);
	return 0;
}

void sio_shadow_ntb_msi_free(struct sio_shadow *sh)
{
	kvfree(sh->msi_want);
	kvfree(sh->msi_sent);
	bitmap_free(sh->msi_dirty);
	bitmap_free(sh->msi_sent_ok);
	sh->msi_want = NULL;
	sh->msi_sent = NULL;
	sh->msi_dirty = NULL;
	sh->msi_sent_ok = NULL;
	if (sh->msi_domain)
		irq_domain_remove(sh->msi_domain);
	if (sh->msi_fwnode)
		irq_domain_free_fwnode(sh->msi_fwnode);
	sh->msi_domain = NULL;
	sh->msi_fwnode = NULL;
}

/*
 * The DMA window: the device's address of the lender's window, which
 * this machine's inbound entries lead to all of its RAM (SmartIO section
 * 8.1: a DMA mapping is address arithmetic), and of the MSI window.
 */
static int ntb_window(struct sio_shadow *sh, const struct sio_borrow *b)
{
	sh->dma_base = sio_kplat_dev_iova(b->lender, b->dma_addr);
	sh->dma_size = b->iova_size;
	sh->msi_base = sio_kplat_dev_iova(b->lender, b->msi_addr);
	if (!sh->dma_base || !sh->msi_base)
		return -EPROTO;
	sh->ntbw = sio_ntb_window_get(sh->kd->index);
	if (!sh->ntbw || sh->ntbw->iova != b->iova ||
	    sh->ntbw->size != b->iova_size)
		return -EPROTO;
	if (sh->ntbw->mode != SIO_WIN_STRICT)
		return 0;
	/*
	 * Strict: the window's pages, mapped per DMA mapping, from the
	 * window's pool (segments mapped for the device take theirs there).
	 */
	sh->iova = sh->ntbw->pool;
	sh->dom = sh->ntbw->domain;
	sh->iova_base = b->iova;
	sh->iova_size = b->iova_size;
	sh->dev_off = sh->dma_base - b->iova;
	return 0;
}

/* Address arithmetic, or the strict window's pages; the MSI window. */
static int ntb_dma_msi(struct sio_shadow *sh)
{
	sio_dma_ops_install(&sh->pdev->dev, sh->iova ?
			    &sio_shadow_strict_dma_ops :
			    &sio_shadow_ntb_dma_ops, NULL);
	return sio_shadow_ntb_msi(sh);
}

/*
 * The window as the device addresses it, and where it lies in the NTB
 * function's domain (the pages mapped, when strict).
 */
static void ntb_show(struct seq_file *s, struct sio_shadow *sh)
{
	static const char *const mode[] = {
		[SIO_WIN_IDENTITY] = "identity",
		[SIO_WIN_STRICT] = "strict",
		[SIO_WIN_PREMAP] = "premapped",
	};

	seq_printf(s, "shadow %s of %s dma_window=%#llx+%#llx msi_window=%#llx live=%d maps=%lld window=%s iova=%#llx mapped=%zu\n",
		   pci_name(sh->pdev), sio_dev(sio_k.reg, sh->kd->index)->bdf,
		   sh->dma_base, sh->dma_size, sh->msi_base,
		   atomic_read(&sh->live),
		   (long long)atomic64_read(&sh->maps),
		   sh->ntbw ? mode[sh->ntbw->mode] : "none",
		   sh->ntbw ? (u64)sh->ntbw->iova : 0,
		   sh->iova ? gen_pool_size(sh->iova) -
		   gen_pool_avail(sh->iova) : 0);
}

/* A shadow of another machine's device: sio_kfab_ntb's. */
const struct sio_shadow_mode sio_shadow_ntb = {
	.cfg = sio_shadow_ntb_cfg,
	.cfg_written = ntb_cfg_written,
	.window = ntb_window,
	.bars = sio_shadow_ntb_bars,
	.dma_msi = ntb_dma_msi,
	.msix_stop = sio_shadow_ntb_msix_stop,
	.show = ntb_show,
};
