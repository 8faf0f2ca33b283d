// SPDX-License-Identifier: GPL-2.0
/*
 * fabric=ntb, the borrower: a borrow's DMA window in the IOMMU domain of
 * this machine's NTB function (SmartIO section 4.3).
 *
 * The lent device's writes cross the NTB and arrive here as the NTB
 * function's own DMA, so this machine's IOMMU translates them with that
 * function's domain.  The inbound entries of the borrow lead the lender's
 * DMA window to a contiguous IOVA range of that domain, [iova, + size),
 * and only what is mapped there is reachable:
 *  - strict (the default): the shadow's DMA API maps each page its driver
 *    maps into the range and unmaps it, IOTLB flushed, before the
 *    driver's unmap returns (sio_shadow.c, the window's gen_pool); a
 *    segment of this machine mapped for the device takes a range of the
 *    same pool, mapped onto the segment until the core releases it
 *    (sio_ntb_window_seg_map);
 *  - premap=1 (section 8.1): all of this machine's RAM is mapped at
 *    iova + its physical address when the borrow starts, with the
 *    largest pages the IOMMU offers (iommu_map() picks them: the range
 *    is aligned to its size), so a mapping is address arithmetic;
 *  - identity: the function has no IOMMU or is in an identity domain
 *    (iommu=pt), its IOVA is the physical address: the window leads to
 *    RAM from address 0, as before, and the log says so once per borrow.
 *
 * The range comes from the DMA API of the NTB function itself:
 * dma_map_resource() of the window's size allocates a contiguous,
 * size-aligned IOVA range from the domain's own IOVA allocator (and maps
 * it onto a resource), which is then unmapped and managed here with
 * iommu_map()/iommu_unmap().  No other user can get those IOVAs: every
 * DMA API mapping of the domain (the NTB driver's, smartio_ntb's segment
 * heap, any function of the same IOMMU group) allocates from that one
 * allocator, which holds the range as ours until dma_unmap_resource();
 * the domain's reserved regions (the MSI range) are never handed out; and
 * nothing else maps a default DMA domain with iommu_map().  The domain
 * stays the function's while a borrow exists: smartio_ntb, whose module
 * smartio.ko holds, keeps the function's driver bound.  Before the final
 * dma_unmap_resource() the whole range is mapped again onto the same
 * resource, since dma-iommu warns when it unmaps less than it mapped.
 */
#include <linux/dma-mapping.h>
#include <linux/genalloc.h>
#include <linux/iommu.h>
#include <linux/ioport.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "sio_kmod.h"

static bool premap;
module_param(premap, bool, 0644);
MODULE_PARM_DESC(premap,
		 "fabric=ntb: a borrow's DMA window maps all of this machine's RAM in advance in the NTB function's IOMMU domain (SmartIO 8.1: no IOMMU work per mapping; the lent device reaches all RAM) instead of each page the driver maps (default N: strict)");

/*
 * A segment of this machine mapped for the borrowed device over a strict
 * window: [iova, + len) of the window's pool leads to it.  key: the
 * segment's address in the core's records (one mapping per segment and
 * device).
 */
struct sio_ntb_segmap {
	struct list_head node;
	u64 key;
	dma_addr_t iova;
	size_t len;
};

/*
 * One window per device this machine borrows, held by the borrow and by
 * the shadow while its driver may still have pages mapped there: a
 * reclaim ends the borrow (and the inbound entries) before the shadow
 * goes, and the range must stay ours until the driver's last unmap.
 */
static struct sio_ntb_window win[SIO_K_NTB_NODES * SIO_K_MAX_DEVS];
static DEFINE_MUTEX(win_lock);

/* A window over which the IOMMU cannot translate: the identity's. */
static bool identity_domain(struct iommu_domain *dom)
{
	return !dom || dom->type == IOMMU_DOMAIN_IDENTITY ||
	       !iommu_is_dma_domain(dom);
}

/*
 * What dma_map_resource() maps the range onto for the moment between the
 * reservation and the unmap: the NTB function's own BAR 0, never RAM
 * (which dma_map_resource() refuses).  The inbound entries do not lead
 * there yet, and the function is no DMA master of its own here.
 */
static phys_addr_t resource_phys(struct pci_dev *pdev)
{
	return pci_resource_start(pdev, 0);
}

/*
 * The whole pages of a RAM range inside the window (firmware leaves
 * ranges that end mid-page, e.g. 0x1000-0x9fbff), false when none.
 */
static bool ram_pages(const struct sio_ntb_window *w,
		      const struct resource *res, u64 *start, u64 *end)
{
	*start = PAGE_ALIGN(res->start);
	*end = min_t(u64, round_down(res->end + 1, PAGE_SIZE), w->size);
	return *start < *end;
}

static int ram_map(struct resource *res, void *arg)
{
	struct sio_ntb_window *w = arg;
	u64 start, end;
	int err;

	if (!ram_pages(w, res, &start, &end))
		return 0;
	err = sio_iommu_map(w->domain, w->iova + start, start, end - start,
			    IOMMU_READ | IOMMU_WRITE, GFP_KERNEL);
	if (err)
		return err;
	w->premapped += end - start;
	w->premap_end = end;
	return 0;
}

/* Ranges are walked in ascending order: those below premap_end. */
static int ram_unmap(struct resource *res, void *arg)
{
	struct sio_ntb_window *w = arg;
	u64 start, end;

	if (ram_pages(w, res, &start, &end) && end <= w->premap_end)
		iommu_unmap(w->domain, w->iova + start, end - start);
	return 0;
}

static void premap_undo(struct sio_ntb_window *w)
{
	walk_iomem_res_desc(IORES_DESC_NONE,
			    IORESOURCE_SYSTEM_RAM | IORESOURCE_BUSY, 0,
			    w->size - 1, w, ram_unmap);
	w->premapped = 0;
	w->premap_end = 0;
}

/* Section 8.1: every page of RAM at iova + its physical address. */
static int premap_ram(struct sio_ntb_window *w)
{
	int err;

	if (w->size < sio_ntb_lend_ram_window()) {
		pr_err("smartio: premap=1 needs a DMA window over all RAM (%llu MiB), not %llu MiB\n",
		       sio_ntb_lend_ram_window() >> 20, w->size >> 20);
		return -EINVAL;
	}
	err = walk_iomem_res_desc(IORES_DESC_NONE,
				  IORESOURCE_SYSTEM_RAM | IORESOURCE_BUSY, 0,
				  w->size - 1, w, ram_map);
	if (err)
		premap_undo(w);
	return err;
}

/* Gives the range back to the domain's allocator. */
static void range_release(struct sio_ntb_window *w)
{
	int err;

	/* All of it mapped again, as dma_map_resource() left it. */
	err = sio_iommu_map(w->domain, w->iova, resource_phys(w->pdev),
			    w->size, IOMMU_READ | IOMMU_WRITE | IOMMU_MMIO,
			    GFP_KERNEL);
	if (err) {
		/* Better leaked than unmapped short (a WARN, a bad IOVA). */
		pr_err("smartio: IOVA range %#llx+%#llx of %s kept: %d\n",
		       (u64)w->iova, w->size, pci_name(w->pdev), err);
		return;
	}
	dma_unmap_resource(&w->pdev->dev, w->iova, w->size, DMA_BIDIRECTIONAL,
			   0);
}

/*
 * Strict: one allocator for the range, which the shadow's DMA API and the
 * segments mapped for the device share (sio_shadow_ntb.c takes it).
 */
static int pool_create(struct sio_ntb_window *w)
{
	w->pool = gen_pool_create(PAGE_SHIFT, NUMA_NO_NODE);
	if (!w->pool)
		return -ENOMEM;
	if (gen_pool_add(w->pool, w->iova, w->size, NUMA_NO_NODE)) {
		gen_pool_destroy(w->pool);
		w->pool = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Every segment's range unmapped, IOTLB flushed, and given back. */
static void segs_unmap_all(struct sio_ntb_window *w)
{
	struct sio_ntb_segmap *sm, *next;

	list_for_each_entry_safe(sm, next, &w->segs, node) {
		iommu_unmap(w->domain, sm->iova, sm->len);
		gen_pool_free(w->pool, sm->iova, sm->len);
		list_del(&sm->node);
		kfree(sm);
	}
}

/*
 * The range reserved, premapped if asked; w is unused and win_lock held.
 */
static int window_reserve(struct sio_ntb_window *w, struct pci_dev *pdev,
			  u64 size)
{
	struct iommu_domain *dom = iommu_get_domain_for_dev(&pdev->dev);
	dma_addr_t addr;
	int err;

	if (identity_domain(dom)) {
		*w = (struct sio_ntb_window){ .mode = SIO_WIN_IDENTITY,
					      .domain = dom, .size = size };
		return 0;
	}
	addr = dma_map_resource(&pdev->dev, resource_phys(pdev), size,
				DMA_BIDIRECTIONAL, 0);
	if (dma_mapping_error(&pdev->dev, addr))
		return -ENOSPC;
	*w = (struct sio_ntb_window){
		.mode = premap ? SIO_WIN_PREMAP : SIO_WIN_STRICT,
		.pdev = pdev, .domain = dom, .iova = addr, .size = size,
	};
	if (!IS_ALIGNED(addr, size) || iommu_unmap(dom, addr, size) != size) {
		/* Nothing of ours is in it: handed back as it is. */
		dma_unmap_resource(&pdev->dev, addr, size, DMA_BIDIRECTIONAL,
				   0);
		*w = (struct sio_ntb_window){};
		return -EIO;
	}
	INIT_LIST_HEAD(&w->segs);
	err = w->mode == SIO_WIN_PREMAP ? premap_ram(w) : pool_create(w);
	if (err) {
		range_release(w);
		*w = (struct sio_ntb_window){};
	}
	return err;
}

/*
 * The window of this machine's borrow of dev, size bytes: its IOVA in the
 * NTB function's domain (0 for the identity).  Caller holds sio_k.lock.
 */
int sio_ntb_window_open(u32 dev, u64 size, u64 *iova)
{
	struct sio_ntb_window *w = dev < ARRAY_SIZE(win) ? &win[dev] : NULL;
	struct pci_dev *pdev = sio_ntb_fab_pci_dev();
	const char *name;
	int err;

	if (!w || !pdev)
		return -EINVAL;
	name = sio_dev(sio_k.reg, dev)->name;
	mutex_lock(&win_lock);
	err = w->users ? -EBUSY : 0;	/* the last shadow still drains */
	if (!err)
		err = window_reserve(w, pdev, size);
	if (!err)
		w->users = 1;
	mutex_unlock(&win_lock);
	if (err)
		return err;
	if (w->mode == SIO_WIN_IDENTITY)
		pr_info("smartio: %s: the NTB function %s has %s: the DMA window leads to RAM from address 0 (identity, not confined by this machine's IOMMU)\n",
			name, pci_name(pdev), w->domain ?
			"an identity IOMMU domain" : "no IOMMU");
	else
		pr_info("smartio: %s: DMA window %#llx+%#llx in %s's IOMMU domain, %s (IOMMU page sizes %#lx)\n",
			name, (u64)w->iova, size, pci_name(pdev),
			w->mode == SIO_WIN_PREMAP ?
			"all RAM mapped in advance" : "strict",
			w->domain->pgsize_bitmap);
	*iova = w->iova;
	return 0;
}

static void window_put(struct sio_ntb_window *w)
{
	mutex_lock(&win_lock);
	if (w->users && !--w->users) {
		if (w->mode == SIO_WIN_PREMAP)
			premap_undo(w);
		if (w->mode == SIO_WIN_STRICT) {
			/* The core released them first; nothing may stay. */
			segs_unmap_all(w);
			gen_pool_destroy(w->pool);
		}
		if (w->mode != SIO_WIN_IDENTITY)
			range_release(w);
		*w = (struct sio_ntb_window){};
	}
	mutex_unlock(&win_lock);
}

/* The borrow ended (the inbound entries are cleared). */
void sio_ntb_window_close(u32 dev)
{
	if (dev < ARRAY_SIZE(win))
		window_put(&win[dev]);
}

/* The shadow's hold on its borrow's window; NULL when there is none. */
struct sio_ntb_window *sio_ntb_window_get(u32 dev)
{
	struct sio_ntb_window *w = NULL;

	mutex_lock(&win_lock);
	if (dev < ARRAY_SIZE(win) && win[dev].users) {
		w = &win[dev];
		w->users++;
	}
	mutex_unlock(&win_lock);
	return w;
}

void sio_ntb_window_put(struct sio_ntb_window *w)
{
	if (w)
		window_put(w);
}

/*
 * gen_pool's algorithm for a segment's range: the highest free run of nr
 * pages.  The shadow's DMA API takes the lowest (first fit), so long-held
 * segment ranges and the driver's short-lived mappings stay at opposite
 * ends of the window, and a range a segment gave back is not the next one
 * the driver gets: the device's address of a segment once unmapped leads
 * to nothing mapped (a DMAR fault), not to a buffer of the driver.
 */
static unsigned long last_fit(unsigned long *map, unsigned long size,
			      unsigned long start, unsigned int nr, void *data,
			      struct gen_pool *pool, unsigned long start_addr)
{
	unsigned long end = size, bit;

	/*
	 * From the top every time (start is where a raced attempt was,
	 * whose bits another allocation took meanwhile).
	 */
	while (end >= nr) {
		bit = find_last_bit(map, end);
		if (bit == end || end - bit - 1 >= nr)
			return end - nr;
		end = bit;
	}
	return size;	/* none: gen_pool tries its next chunk */
}

/*
 * A segment of this machine, [phys, + size) of RAM, physically contiguous
 * (smartio_ntb's heap), mapped for the device of this machine's borrow of
 * dev over a strict window: a range of the window's pool, the allocator
 * the shadow's DMA API takes its ranges from, so the two never overlap,
 * mapped onto the segment for the device's reads and writes until
 * sio_ntb_window_seg_unmap.  Its IOVA in *iova.  ENXIO: no window (the
 * borrow is ending), EINVAL: not a strict one; ENOSPC: no room left in
 * it; ENOMEM or the IOMMU's error: nothing changed.  Caller holds
 * sio_k.lock.
 */
int sio_ntb_window_seg_map(u32 dev, u64 key, phys_addr_t phys, u64 size,
			   dma_addr_t *iova)
{
	struct sio_ntb_window *w = dev < ARRAY_SIZE(win) ? &win[dev] : NULL;
	struct sio_ntb_segmap *sm, *o;
	size_t len = PAGE_ALIGN(size);
	unsigned long at = 0;
	int err;

	if (!size || !PAGE_ALIGNED(phys) || len < size)
		return -EINVAL;
	sm = kzalloc(sizeof(*sm), GFP_KERNEL);
	if (!sm)
		return -ENOMEM;
	mutex_lock(&win_lock);
	err = !w || !w->users ? -ENXIO :
	      w->mode != SIO_WIN_STRICT || !w->pool ? -EINVAL : 0;
	if (!err)
		list_for_each_entry(o, &w->segs, node)
			if (o->key == key)
				err = -EEXIST;
	if (!err) {
		at = gen_pool_alloc_algo(w->pool, len, last_fit, NULL);
		err = at ? 0 : -ENOSPC;
	}
	if (!err) {
		err = sio_iommu_map(w->domain, at, phys, len,
				    IOMMU_READ | IOMMU_WRITE, GFP_KERNEL);
		if (err)
			gen_pool_free(w->pool, at, len);
	}
	if (!err) {
		sm->key = key;
		sm->iova = at;
		sm->len = len;
		list_add(&sm->node, &w->segs);
		*iova = at;
	}
	mutex_unlock(&win_lock);
	if (err)
		kfree(sm);
	return err;
}

/*
 * The segment key mapped for dev no longer: unmapped with the IOTLB
 * flushed (iommu_unmap() syncs it) before this returns, so no write of
 * the device lands there afterwards, and its range given back.  Nothing
 * when the window is gone (its end unmapped everything).
 */
void sio_ntb_window_seg_unmap(u32 dev, u64 key)
{
	struct sio_ntb_window *w = dev < ARRAY_SIZE(win) ? &win[dev] : NULL;
	struct sio_ntb_segmap *sm;

	if (!w)
		return;
	mutex_lock(&win_lock);
	if (w->users && w->mode == SIO_WIN_STRICT) {
		list_for_each_entry(sm, &w->segs, node) {
			if (sm->key != key)
				continue;
			iommu_unmap(w->domain, sm->iova, sm->len);
			gen_pool_free(w->pool, sm->iova, sm->len);
			list_del(&sm->node);
			kfree(sm);
			break;
		}
	}
	mutex_unlock(&win_lock);
}

/* Whether new borrows map all of RAM in advance (premap=1). */
bool sio_ntb_window_premap(void)
{
	return READ_ONCE(premap);
}

/* Whether a window of a new borrow would be in a translating domain. */
bool sio_ntb_window_translated(void)
{
	struct pci_dev *pdev = sio_ntb_fab_pci_dev();

	return pdev && !identity_domain(iommu_get_domain_for_dev(&pdev->dev));
}
