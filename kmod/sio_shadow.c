// SPDX-License-Identifier: GPL-2.0
/*
 * The borrower's side of a borrow (SmartIO section 4): the device appears
 * as a hot-added "shadow" PCI function on a virtual root bus of its own,
 * so that its unmodified Linux driver binds to it.  It sits at the lender's
 * bus number and devfn in PCI segment 0x5100 + device index: the requester
 * id the device really uses, as interrupt remapping checks it.
 *
 *  - Configuration cycles of the shadow go through the core as CFG_READ /
 *    CFG_WRITE from the borrowing node (section 4.2): the lender's core
 *    performs them on the real device, hides INTx and rewrites MSI / MSI-X
 *    setup so that the device interrupts the borrower.
 *  - BARs: the shadow's BARs are the borrower's LUT slots onto the lender's
 *    BARs.  The loopback adapter is identity, so the slots resolve to the
 *    real BAR addresses, which the host bridge window of the virtual bus
 *    covers.
 *  - DMA (section 4.3): the shadow's DMA API is smartio's.  It hands out
 *    addresses in the borrow's DMA window (host1's IOVA range the lender's
 *    window leads to) and backs them with mappings in the device's IOMMU
 *    domain, so every DMA the driver maps goes through the real IOMMU.
 */
#include <linux/dma-map-ops.h>
#include <linux/genalloc.h>
#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "sio_shadow.h"

#define SIO_SHADOW_DOMAIN 0x5100	/* PCI segment of the virtual buses */
#define SIO_SHADOW_DRAIN (30 * HZ)	/* DMA unmapping after a removal */

struct sio_kdev *sio_kdev_of(u32 dev)
{
	u32 i;

	for (i = 0; i < sio_k.ndevs; i++)
		if (sio_k.dev[i].index == dev && sio_k.dev[i].pdev)
			return &sio_k.dev[i];
	return NULL;	/* not here, or a VF not enabled */
}

int sio_k_call(struct sio_msg *m, struct sio_parsed *rep, void *repbuf,
	       u32 cap)
{
	int err;

	mutex_lock(&sio_k.lock);
	err = sio_core_call(&sio_k.core, sio_k.self, sio_k.self, m, rep,
			    repbuf, cap);
	mutex_unlock(&sio_k.lock);
	return err;
}

struct sio_k_req *sio_k_req_new(u8 cmd)
{
	struct sio_k_req *q = kmalloc(sizeof(*q), GFP_KERNEL);

	if (q)
		sio_msg_init(&q->m, q->buf, sizeof(q->buf), cmd, SIO_F_REQUEST,
			     0);
	return q;
}

int sio_k_req_send(struct sio_k_req *q)
{
	int err = sio_k_call(&q->m, &q->rep, q->repbuf, sizeof(q->repbuf));

	kfree(q);
	return err;
}

/*
 * Config cycles of the shadow as the borrower asks them: len bytes at
 * where, through the lender, which answers a read of up to
 * SIO_CFG_CHUNK bytes at once.  Sleeps.
 */
#define SIO_CFG_CHUNK 256

static int shadow_cycle(struct sio_shadow *sh, int where, u32 len, u8 *buf,
			bool write)
{
	struct sio_parsed *rep;
	struct sio_msg m;
	u8 req[SIO_PEER_MSG_K], *repbuf;
	unsigned long flags;
	int err;

	repbuf = kmalloc(SIO_PEER_MSG_K, GFP_KERNEL);
	rep = kmalloc(sizeof(*rep), GFP_KERNEL);
	err = -ENOMEM;
	if (!repbuf || !rep)
		goto out;
	sio_msg_init(&m, req, sizeof(req),
		     write ? SIO_CMD_CFG_WRITE : SIO_CMD_CFG_READ,
		     SIO_F_REQUEST, 0);
	sio_msg_put_u32(&m, SIO_A_DEV, sh->fdid);
	sio_msg_put_u32(&m, SIO_A_NODE, sh->borrower);
	sio_msg_put_u64(&m, SIO_A_OFFSET, where);
	if (write)
		sio_msg_put_bin(&m, SIO_A_DATA, buf, len);
	else
		sio_msg_put_u64(&m, SIO_A_SIZE, len);
	mutex_lock(&sio_k.lock);
	/* Sent by the borrower: the core forwards it to the lender. */
	err = sio_core_call(&sio_k.core, sh->borrower, sh->borrower, &m, rep,
			    repbuf, SIO_PEER_MSG_K);
	if (!err && !write) {
		if (!rep->present[SIO_A_DATA] || rep->tb[SIO_A_DATA].len != len)
			err = -EPROTO;
		else
			memcpy(buf, rep->tb[SIO_A_DATA].data, len);
	}
	mutex_unlock(&sio_k.lock);
	if (!err && !write && where + len <= sizeof(sh->cfg_seen)) {
		raw_spin_lock_irqsave(&sh->cfg_lock, flags);
		memcpy(sh->cfg_seen + where, buf, len);
		raw_spin_unlock_irqrestore(&sh->cfg_lock, flags);
	}
out:
	kfree(repbuf);
	kfree(rep);
	return err;
}

/* One configuration cycle of the shadow, as the borrower asks it. */
static int shadow_cfg(struct sio_shadow *sh, int where, int size, u32 *val,
		      bool write)
{
	u8 data[4];
	int err, i;

	if (write)
		for (i = 0; i < size; i++)
			data[i] = *val >> (8 * i);
	err = shadow_cycle(sh, where, size, data, write);
	if (!err && !write) {
		*val = 0;
		for (i = 0; i < size; i++)
			*val |= (u32)data[i] << (8 * i);
	}
	return err;
}

/*
 * A config read where the reader may not sleep (interrupts off: the PCI
 * core's sysfs and procfs paths hold pci_lock), from the copy.
 */
static void shadow_cfg_seen(struct sio_shadow *sh, int where, int size,
			    u32 *val)
{
	unsigned long flags;
	int i;

	*val = 0;
	if (where + size > sh->cfg_size) {
		*val = ~0u;
		return;
	}
	raw_spin_lock_irqsave(&sh->cfg_lock, flags);
	for (i = 0; i < size; i++)
		*val |= (u32)sh->cfg_seen[where + i] << (8 * i);
	raw_spin_unlock_irqrestore(&sh->cfg_lock, flags);
}

/* The whole config space read once, before sysfs can ask for it. */
static int shadow_cfg_fill(struct sio_shadow *sh)
{
	u8 *buf = kmalloc(SIO_CFG_CHUNK, GFP_KERNEL);
	u32 off;
	int err = buf ? 0 : -ENOMEM;

	for (off = 0; off < sh->cfg_size && !err; off += SIO_CFG_CHUNK)
		err = shadow_cycle(sh, off, min_t(u32, SIO_CFG_CHUNK,
						  sh->cfg_size - off), buf,
				   false);
	kfree(buf);
	return err;
}

static int shadow_read(struct pci_bus *bus, unsigned int devfn, int where,
		       int size, u32 *val)
{
	struct sio_shadow *sh = sio_bus_shadow(bus);

	if (devfn == sh->devfn && sh->mode->cfg &&
	    sh->mode->cfg(sh, where, size, val, false))
		return PCIBIOS_SUCCESSFUL;
	if (devfn == sh->devfn && irqs_disabled()) {
		shadow_cfg_seen(sh, where, size, val);
		return PCIBIOS_SUCCESSFUL;
	}
	if (devfn != sh->devfn || shadow_cfg(sh, where, size, val, false)) {
		*val = ~0u;
		return PCIBIOS_DEVICE_NOT_FOUND;
	}
	return PCIBIOS_SUCCESSFUL;
}

static int shadow_write(struct pci_bus *bus, unsigned int devfn, int where,
			int size, u32 val)
{
	struct sio_shadow *sh = sio_bus_shadow(bus);

	if (devfn != sh->devfn)
		return PCIBIOS_DEVICE_NOT_FOUND;
	if (sh->mode->cfg && sh->mode->cfg(sh, where, size, &val, true))
		return PCIBIOS_SUCCESSFUL;
	/* setpci through sysfs: the lender's answer cannot be waited for. */
	if (irqs_disabled()) {
		pr_warn_ratelimited("smartio: config write at 0x%x of a shadow through sysfs or procfs refused: write the device's config file in /smartio\n",
				    where);
		return PCIBIOS_SET_FAILED;
	}
	if (shadow_cfg(sh, where, size, &val, true))
		return PCIBIOS_SET_FAILED;
	if (sh->mode->cfg_written)
		sh->mode->cfg_written(sh, where, size, val);
	return PCIBIOS_SUCCESSFUL;
}

static struct pci_ops shadow_ops = {
	.read = shadow_read,
	.write = shadow_write,
};

/* --- the shadow's DMA API ------------------------------------------------ */

static dma_addr_t window_map(struct sio_shadow *sh, phys_addr_t phys,
			     size_t size, int prot)
{
	phys_addr_t base = phys & PAGE_MASK;
	size_t len = PAGE_ALIGN(size + (phys - base));
	unsigned long iova = gen_pool_alloc(sh->iova, len);

	if (!iova)
		return DMA_MAPPING_ERROR;
	if (sio_iommu_map(sh->dom, iova, base, len, prot, GFP_ATOMIC)) {
		gen_pool_free(sh->iova, iova, len);
		return DMA_MAPPING_ERROR;
	}
	atomic64_inc(&sh->maps);
	atomic_inc(&sh->live);
	return iova + (phys - base) + sh->dev_off;
}

/*
 * Strict: the IOTLB is flushed (iommu_unmap() syncs it) before the
 * driver's unmap returns, so no device write lands there afterwards.
 */
static void window_unmap(struct sio_shadow *sh, dma_addr_t addr, size_t size)
{
	unsigned long iova = (addr - sh->dev_off) & PAGE_MASK;
	size_t len = PAGE_ALIGN(size + (addr - sh->dev_off - iova));

	iommu_unmap(sh->dom, iova, len);
	gen_pool_free(sh->iova, iova, len);
	if (atomic_dec_and_test(&sh->live))
		wake_up_var(&sh->live);
}

static int dir_prot(enum dma_data_direction dir)
{
	switch (dir) {
	case DMA_TO_DEVICE:
		return IOMMU_READ;
	case DMA_FROM_DEVICE:
		return IOMMU_WRITE;
	default:
		return IOMMU_READ | IOMMU_WRITE;
	}
}

/*
 * Any page will do: the window, not a zone, decides what the device
 * reaches (both DMA APIs of a shadow use this).
 */
void *sio_shadow_pages(struct device *dev, size_t size, gfp_t gfp,
		       dma_addr_t *handle, sio_coherent_map_fn map)
{
	struct page *page;

	gfp &= ~(__GFP_DMA | __GFP_DMA32 | __GFP_HIGHMEM);
	page = alloc_pages(gfp | __GFP_ZERO, get_order(size));
	if (!page)
		return NULL;
	*handle = map(sio_dev_shadow(dev), page_to_phys(page), size);
	if (*handle == DMA_MAPPING_ERROR) {
		__free_pages(page, get_order(size));
		return NULL;
	}
	return page_address(page);
}

static dma_addr_t coherent_map(struct sio_shadow *sh, phys_addr_t phys,
			       size_t size)
{
	return window_map(sh, phys, size, IOMMU_READ | IOMMU_WRITE);
}

static void *shadow_alloc(struct device *dev, size_t size,
			  dma_addr_t *handle, gfp_t gfp, unsigned long attrs)
{
	return sio_shadow_pages(dev, size, gfp, handle, coherent_map);
}

static void shadow_free(struct device *dev, size_t size, void *vaddr,
			dma_addr_t handle, unsigned long attrs)
{
	window_unmap(sio_dev_shadow(dev), handle, size);
	free_pages((unsigned long)vaddr, get_order(size));
}

static dma_addr_t shadow_map_page(struct device *dev, struct page *page,
				  unsigned long offset, size_t size,
				  enum dma_data_direction dir,
				  unsigned long attrs)
{
	return window_map(sio_dev_shadow(dev), page_to_phys(page) + offset, size,
			  dir_prot(dir));
}

static void shadow_unmap_page(struct device *dev, dma_addr_t addr,
			      size_t size, enum dma_data_direction dir,
			      unsigned long attrs)
{
	window_unmap(sio_dev_shadow(dev), addr, size);
}

/* The pages an sg entry spans, from the start of its first page. */
static size_t sg_span(struct scatterlist *sg)
{
	return PAGE_ALIGN(offset_in_page(sg_phys(sg)) + sg->length);
}

/*
 * A scatterlist takes one IOVA range, its entries' pages one after the
 * other, and gives it back with one iommu_unmap(): one IOTLB flush per
 * request instead of one per entry (a 1 MiB request of scattered pages
 * has 256), as the kernel's own IOMMU DMA path batches them.
 */
static void shadow_unmap_sg(struct device *dev, struct scatterlist *sgl,
			    int nents, enum dma_data_direction dir,
			    unsigned long attrs)
{
	struct sio_shadow *sh = sio_dev_shadow(dev);
	struct scatterlist *sg;
	size_t len = 0;
	int i;

	if (!nents || !sg_dma_len(sgl))
		return;
	for_each_sg(sgl, sg, nents, i)
		len += sg_span(sg);
	window_unmap(sh, sg_dma_address(sgl) & PAGE_MASK, len);
}

/*
 * Entries that land back to back in the range become one DMA segment (as
 * the kernel's IOMMU DMA path merges them, within the device's segment
 * size and boundary), so the driver describes a 1 MiB request of scattered
 * pages with one segment: NVMe then uses one SGL descriptor, not 256 PRPs.
 */
static bool seg_extends(struct device *dev, dma_addr_t start, size_t len,
			dma_addr_t addr, size_t more)
{
	unsigned long mask = dma_get_seg_boundary(dev);

	return start + len == addr &&
	       len + more <= dma_get_max_seg_size(dev) &&
	       (start & ~mask) == ((addr + more - 1) & ~mask);
}

/*
 * The DMA segments of a scatterlist, built at *out (*count so far): an
 * entry mapped right after the last segment extends it within the
 * device's segment size and boundary, else it starts the next one.
 */
void sio_sg_add(struct device *dev, struct scatterlist **out, int *count,
		dma_addr_t addr, unsigned int len)
{
	if (*count && seg_extends(dev, sg_dma_address(*out),
				  sg_dma_len(*out), addr, len)) {
		sg_dma_len(*out) += len;
		return;
	}
	if (*count)
		*out = sg_next(*out);
	sg_dma_address(*out) = addr;
	sg_dma_len(*out) = len;
	(*count)++;
}

/* The entries past the segments built carry no DMA length. */
void sio_sg_end(struct scatterlist *sgl, int nents, int count)
{
	struct scatterlist *sg;
	int i;

	for_each_sg(sgl, sg, nents, i)
		if (i >= count)
			sg_dma_len(sg) = 0;
}

static int shadow_map_sg(struct device *dev, struct scatterlist *sgl,
			 int nents, enum dma_data_direction dir,
			 unsigned long attrs)
{
	struct sio_shadow *sh = sio_dev_shadow(dev);
	struct scatterlist *sg, *out = sgl;
	unsigned long iova, at;
	size_t len = 0, span;
	dma_addr_t addr;
	int i, count = 0;

	for_each_sg(sgl, sg, nents, i)
		len += sg_span(sg);
	iova = gen_pool_alloc(sh->iova, len);
	if (!iova)
		return -ENOMEM;
	at = iova;
	for_each_sg(sgl, sg, nents, i) {
		span = sg_span(sg);
		if (sio_iommu_map(sh->dom, at, sg_phys(sg) & PAGE_MASK,
				  span, dir_prot(dir), GFP_ATOMIC)) {
			if (at > iova)
				iommu_unmap(sh->dom, iova, at - iova);
			gen_pool_free(sh->iova, iova, len);
			sg_dma_len(sgl) = 0;
			return -ENOMEM;
		}
		addr = at + offset_in_page(sg_phys(sg)) + sh->dev_off;
		at += span;
		sio_sg_add(dev, &out, &count, addr, sg->length);
	}
	sio_sg_end(sgl, nents, count);
	atomic64_inc(&sh->maps);
	atomic_inc(&sh->live);
	return count;
}

/* The maps every shadow offers, in both tables below. */
#define SHADOW_DMA_MAP_OPS			\
	.alloc = shadow_alloc,			\
	.free = shadow_free,			\
	.map_page = shadow_map_page,		\
	.unmap_page = shadow_unmap_page,	\
	.map_sg = shadow_map_sg,		\
	.unmap_sg = shadow_unmap_sg

static const struct dma_map_ops shadow_dma_ops = {
	SHADOW_DMA_MAP_OPS,
};

/*
 * Over an NTB with a strict window (sio_ntb_window.c): the same, in the
 * NTB function's domain, at the device's addresses of the window, and
 * another device's BAR mapped for DMA (sio_shadow_p2p.c).
 */
const struct dma_map_ops sio_shadow_strict_dma_ops = {
	SHADOW_DMA_MAP_OPS,
	.map_resource = sio_shadow_p2p_map,
	.unmap_resource = sio_shadow_p2p_unmap,
	.dma_supported = sio_shadow_ntb_dma_supported,
};

/* --- hot-add and hot-remove ---------------------------------------------- */

int sio_shadow_msix_msg(struct sio_kdev *kd, u32 entry, struct msi_msg *msg)
{
	struct sio_shadow *sh = kd->shadow;
	struct msi_desc *desc;

	if (!sh || !sh->pdev)
		return -ENOENT;
	desc = sio_msix_desc(&sh->pdev->dev, entry);
	if (!desc || !desc->irq || !desc->msg.address_lo)
		return -ENOENT;
	*msg = desc->msg;
	return 0;
}

void sio_shadow_show(struct seq_file *s, struct sio_kdev *kd)
{
	struct sio_shadow *sh = kd->shadow;

	if (sh && sh->pdev)
		sh->mode->show(s, sh);
}

static void loop_show(struct seq_file *s, struct sio_shadow *sh)
{
	seq_printf(s, "shadow %s of %s dma_window=%#llx+%#llx mapped=%zu maps=%lld\n",
		   pci_name(sh->pdev), sio_dev(sio_k.reg, sh->kd->index)->bdf,
		   sh->iova_base,
		   sh->iova_size, gen_pool_size(sh->iova) - gen_pool_avail(sh->iova),
		   (long long)atomic64_read(&sh->maps));
}

static void shadow_free_struct(struct sio_shadow *sh)
{
	sio_shadow_ntb_msi_free(sh);
	/* Over an NTB the pool is the window's (sio_ntb_window.c). */
	if (sh->iova && !sh->ntbw)
		gen_pool_destroy(sh->iova);
	sio_ntb_window_put(sh->ntbw);
	kfree(sh);
}

/*
 * A window of the shadow's host bridge for BAR i's window w.  One that
 * continues an earlier window of the same kind extends it: given both,
 * pci_register_host_bridge() coalesces them itself and
 * release_resource()s the emptied one, which was never inserted anywhere:
 * a NULL dereference (Linux 6.1), seen borrowing an e1000e whose BARs 0
 * and 1 are adjacent.
 */
static void bridge_window(struct sio_shadow *sh, const struct resource *w,
			  struct list_head *res)
{
	struct resource *bw;
	int j;

	for (j = 0; j < sh->nbridge_win; j++) {
		bw = &sh->bridge_win[j];
		if (bw->flags == w->flags && bw->end + 1 == w->start) {
			bw->end = w->end;
			return;
		}
	}
	bw = &sh->bridge_win[sh->nbridge_win++];
	*bw = *w;
	pci_add_resource(res, bw);
}

/* The shadow's BAR i: the borrower's window slot onto the lender's BAR. */
static int shadow_bar(struct sio_shadow *sh, const struct sio_device *d,
		      const struct sio_borrow *b, int i, struct list_head *res)
{
	u32 tnode;
	u64 addr;
	int err;

	err = sio_k.fab->reach(sh->borrower, b->bar_local[i], d->bar[i].size,
			      &tnode, &addr);
	if (err || tnode != d->node)
		return err ? err : -EPROTO;
	sh->win[i].name = "smartio window";
	sh->win[i].start = addr;
	sh->win[i].end = addr + d->bar[i].size - 1;
	sh->win[i].flags = IORESOURCE_MEM;
	if (d->bar[i].flags & SIO_BAR_PREFETCH)
		sh->win[i].flags |= IORESOURCE_PREFETCH;
	bridge_window(sh, &sh->win[i], res);
	return 0;
}

/*
 * The DMA window: host1's IOVA range the lender's window leads to, mapped
 * per DMA mapping in the device's IOMMU domain.
 */
static int loop_window(struct sio_shadow *sh, const struct sio_borrow *b)
{
	u32 tnode;
	int err;

	err = sio_kplat_resolve(b->lender, b->dma_addr, b->iova_size, &tnode,
				&sh->iova_base);
	if (err || tnode != sh->borrower)
		return err ? err : -EPROTO;
	sh->iova_size = b->iova_size;
	sh->dom = sh->kd->domain;
	return 0;
}

/* Builds the shadow of kd for borrower from the core's borrow record. */
static int shadow_prepare(struct sio_shadow *sh, struct list_head *res)
{
	struct sio_registry *r = sio_k.reg;
	struct sio_device *d = sio_dev(r, sh->kd->index);
	struct sio_borrow *b;
	int bidx, i, err;

	mutex_lock(&sio_k.lock);
	bidx = sio_borrow_find(r, sh->kd->index, sh->borrower);
	err = bidx < 0 ? -ENXIO : 0;
	if (err)
		goto out;
	b = sio_borrow_at(r, bidx);
	sh->fdid = d->fdid;
	sh->cfg_size = min_t(u32, d->config_size, sizeof(sh->cfg_seen));
	err = sh->mode->window(sh, b);
	for (i = 0; !err && i < PCI_STD_NUM_BARS; i++)
		if (b->bar_local[i])
			err = shadow_bar(sh, d, b, i, res);
	if (!err && sh->mode->bars)
		sh->mode->bars(sh, d);
out:
	mutex_unlock(&sio_k.lock);
	if (err || !sh->iova_size || sh->iova)
		return err;
	sh->iova = gen_pool_create(PAGE_SHIFT, NUMA_NO_NODE);
	if (!sh->iova)
		return -ENOMEM;
	return gen_pool_add(sh->iova, sh->iova_base, sh->iova_size,
			    NUMA_NO_NODE);
}

/*
 * The lender's bus number and devfn: the real function's on one machine,
 * the registry's bdf ("0000:03:00.0") of another machine's device.
 */
static int shadow_address(struct sio_shadow *sh)
{
	unsigned int dom, bus, slot, fn;
	const char *bdf;

	if (sh->kd->pdev) {
		sh->busnr = sh->kd->pdev->bus->number;
		sh->devfn = sh->kd->pdev->devfn;
		return 0;
	}
	mutex_lock(&sio_k.lock);
	bdf = sio_dev(sio_k.reg, sh->kd->index)->bdf;
	if (sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4 ||
	    bus > 0xff || slot > 0x1f || fn > 7)
		bus = ~0u;
	mutex_unlock(&sio_k.lock);
	if (bus == ~0u)
		return -EPROTO;
	sh->busnr = bus;
	sh->devfn = PCI_DEVFN(slot, fn);
	return 0;
}

/*
 * Before any driver sees the function: smartio's DMA API, and its MSI
 * domain.  On one machine that is the real function's: with interrupt
 * remapping its IOMMU's, which no other device of this virtual segment
 * would get, and whose source-id check the shadow's messages pass since
 * the device sends them.  (Over an NTB, a domain that aims the messages
 * at the MSI window: sio_shadow_ntb.c.)
 */
static int loop_dma_msi(struct sio_shadow *sh)
{
	struct pci_dev *pdev = sh->pdev;

	sio_dma_ops_install(&pdev->dev, &shadow_dma_ops, NULL);
	dev_set_msi_domain(&pdev->dev, dev_get_msi_domain(&sh->kd->pdev->dev));
	return 0;
}

/* A shadow on one machine (fabric=loopback): sio_kfab_loopback's. */
const struct sio_shadow_mode sio_shadow_loop = {
	.window = loop_window,
	.dma_msi = loop_dma_msi,
	.show = loop_show,
};

int sio_shadow_create(struct sio_kdev *kd, u32 borrower,
		      struct device *parent)
{
	struct sio_shadow *sh;
	struct pci_dev *pdev;
	LIST_HEAD(res);
	int err, i;

	sh = kzalloc(sizeof(*sh), GFP_KERNEL);
	if (!sh)
		return -ENOMEM;
	sh->kd = kd;
	sh->mode = sio_k.fab->shadow;
	sh->borrower = borrower;
	raw_spin_lock_init(&sh->cfg_lock);
	err = shadow_address(sh);
	if (err) {
		kfree(sh);
		return err;
	}
	sh->sd.domain = SIO_SHADOW_DOMAIN + kd->index;
	sh->sd.node = NUMA_NO_NODE;
	sh->busn.name = "smartio bus";
	sh->busn.start = sh->busnr;
	sh->busn.end = sh->busnr;
	sh->busn.flags = IORESOURCE_BUS;
	pci_add_resource(&res, &sh->busn);
	err = shadow_prepare(sh, &res);
	if (!err)
		err = shadow_cfg_fill(sh);
	if (err)
		goto free_resources;
	kd->shadow = sh;
	pci_lock_rescan_remove();
	sh->bus = pci_scan_root_bus(parent, sh->busn.start, &shadow_ops, &sh->sd, &res);
	if (!sh->bus) {
		err = -ENODEV;
		goto unlock;
	}
	pdev = pci_get_slot(sh->bus, sh->devfn);
	/*
	 * An SR-IOV VF is alone in its slot, past function 0, where the
	 * scan stops when function 0 does not answer: scanned by itself.
	 */
	if (!pdev && PCI_FUNC(sh->devfn)) {
		pci_scan_single_device(sh->bus, sh->devfn);
		pdev = pci_get_slot(sh->bus, sh->devfn);
	}
	if (!pdev) {
		err = -ENODEV;
		goto remove_bus;
	}
	sh->pdev = pdev;
	for (i = 0; i < PCI_STD_NUM_BARS; i++)
		if (pci_resource_len(pdev, i) &&
		    (pci_resource_flags(pdev, i) & IORESOURCE_MEM) &&
		    pci_claim_resource(pdev, i))
			err = -EBUSY;
	if (!err)
		err = sh->mode->dma_msi(sh);
	if (err)
		goto put_pdev;
	pci_bus_add_devices(sh->bus);
	pci_unlock_rescan_remove();
	/* The shadow's DMA API is this module's code: no unloading under it. */
	__module_get(THIS_MODULE);
	pci_info(pdev, "smartio: shadow of %s lent by %s\n",
		 sio_dev(sio_k.reg, kd->index)->bdf,
		 sio_node(sio_k.reg, sio_dev(sio_k.reg, kd->index)->node)->name);
	return 0;

put_pdev:
	pci_dev_put(pdev);
remove_bus:
	pci_stop_root_bus(sh->bus);
	pci_remove_root_bus(sh->bus);
unlock:
	pci_unlock_rescan_remove();
	kd->shadow = NULL;
free_resources:
	/* Empty once pci_scan_root_bus has taken the list for its bridge. */
	pci_free_resource_list(&res);
	shadow_free_struct(sh);
	return err;
}

void sio_shadow_remove(struct sio_kdev *kd)
{
	struct sio_shadow *sh = kd->shadow;

	if (!sh)
		return;
	pci_lock_rescan_remove();
	pci_dev_put(sh->pdev);
	pci_stop_root_bus(sh->bus);
	if (sh->mode->msix_stop)
		sh->mode->msix_stop(sh);
	pci_remove_root_bus(sh->bus);
	pci_unlock_rescan_remove();
	kd->shadow = NULL;
	/*
	 * The driver may free DMA memory after its remove (nvme frees its
	 * controller when the last reference goes, from a work item): the
	 * window and this module stay until every mapping is undone.
	 */
	if (!wait_var_event_timeout(&sh->live, !atomic_read(&sh->live),
				    SIO_SHADOW_DRAIN)) {
		pr_warn("smartio: %d DMA mappings of a removed shadow remain; smartio stays loaded\n",
			atomic_read(&sh->live));
		return;
	}
	shadow_free_struct(sh);
	module_put(THIS_MODULE);
}

/* --- borrow and return as one machine does them -------------------------- */

int sio_k_cmd(u8 cmd, u32 dev, u32 node)
{
	struct sio_k_req *q = sio_k_req_new(cmd);

	if (!q)
		return -ENOMEM;
	sio_msg_put_u32(&q->m, SIO_A_DEV, sio_dev(sio_k.reg, dev)->fdid);
	sio_msg_put_u32(&q->m, SIO_A_NODE, node);
	return sio_k_req_send(q);
}

int sio_loop_borrow(u32 dev, u32 node, u64 window)
{
	struct sio_kdev *kd = sio_kdev_of(dev);
	struct sio_view *v;
	bool fresh;
	int err;

	/* One machine's window is the core's IOVA range, of its size. */
	if (window)
		return -EOPNOTSUPP;
	if (!kd)
		return -ENXIO;
	if (node != SIO_K_BORROWER)
		return sio_k_cmd(SIO_CMD_BORROW, dev, node);
	if (kd->shadow)
		return -EBUSY;
	/*
	 * Every refusal of the core (policy, mode, room on the path) comes
	 * before the device leaves its driver; the claim refuses a device in
	 * use.  Anything failing after the claim gives the device back.
	 */
	mutex_lock(&sio_k.lock);
	err = sio_core_borrow_check(&sio_k.core, node, dev);
	mutex_unlock(&sio_k.lock);
	if (err)
		return err;
	fresh = !kd->claimed;
	err = sio_lender_claim(kd);
	if (err)
		return err;
	if (fresh)
		sio_vcfg_reset(kd);
	err = sio_k_cmd(SIO_CMD_BORROW, dev, node);
	if (err)
		goto release_claim;
	/* The borrower's class devices first: the shadow's bus hangs below. */
	v = sio_view_add(dev, node);
	err = PTR_ERR_OR_ZERO(v);
	if (err)
		goto return_borrow;
	kd->view[node] = v;
	err = sio_shadow_create(kd, node, sio_view_device(v));
	if (err)
		goto remove_view;
	return 0;

remove_view:
	sio_view_remove(v);
	kd->view[node] = NULL;
return_borrow:
	sio_k_cmd(SIO_CMD_RETURN, dev, node);
release_claim:
	sio_lender_release(kd);
	return err;
}

/* The borrower's shadow and class devices go, before the core's mappings. */
static void shadow_unplug(struct sio_kdev *kd, u32 node)
{
	if (node != SIO_K_BORROWER)
		return;
	sio_shadow_remove(kd);
	/* Mappings of its BARs go before the core's LUT slots do. */
	sio_view_remove(kd->view[node]);
	kd->view[node] = NULL;
}

int sio_loop_return(u32 dev, u32 node)
{
	struct sio_kdev *kd = sio_kdev_of(dev);
	int err;

	if (!kd)
		return -ENXIO;
	shadow_unplug(kd, node);
	err = sio_k_cmd(SIO_CMD_RETURN, dev, node);
	if (kd->claimed && !kd->shadow)
		sio_lender_release(kd);
	return err;
}

/*
 * The lender revokes every borrower: host1's shadow is hot-removed first
 * (its driver stops), then the core's reclaim asks each borrower to give
 * the device back, and the device returns to its own driver.
 */
int sio_loop_reclaim(u32 dev, u32 asker)
{
	struct sio_kdev *kd = sio_kdev_of(dev);
	int err;

	if (!kd)
		return -ENXIO;
	if (asker != SIO_K_LENDER)	/* the core's answer: EACCES */
		return sio_k_cmd(SIO_CMD_RECLAIM, dev, asker);
	shadow_unplug(kd, SIO_K_BORROWER);
	err = sio_k_cmd(SIO_CMD_RECLAIM, dev, asker);
	if (kd->claimed && !kd->shadow)
		sio_lender_release(kd);
	return err;
}
