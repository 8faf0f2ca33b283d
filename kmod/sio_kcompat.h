/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces that differ between the kernels smartio's modules
 * are built and tested for (Debian 12's 6.1, Debian 13's 6.12), in one
 * place.  Each SIO_HAVE_ is a feature test of kmod/sio_kcompat.mk (a grep
 * of the kernel's headers for the declaration the change brought), never
 * a version number; the code calls the sio_ names and tests nothing.
 */
#ifndef SIO_KCOMPAT_H
#define SIO_KCOMPAT_H

#include <linux/device.h>
#include <linux/dma-map-ops.h>
#include <linux/iommu.h>
#include <linux/mm.h>
#include <linux/msi.h>
#include <linux/pci.h>

/* 6.12 moved the unaligned accessors out of asm/. */
#ifdef SIO_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* class_create() lost its owner in 6.4 (it was a macro until then). */
#ifdef class_create
#define sio_class_create(name) class_create(THIS_MODULE, name)
#else
#define sio_class_create(name) class_create(name)
#endif

/* The device is const in uevent and class devnode callbacks since 6.2. */
#ifdef SIO_HAVE_CONST_UEVENT_DEV
#define SIO_UEVENT_CONST const
#else
#define SIO_UEVENT_CONST
#endif
#ifdef SIO_HAVE_CONST_DEVNODE_DEV
#define SIO_DEVNODE_CONST const
#else
#define SIO_DEVNODE_CONST
#endif

/* Generic netlink's pre_doit/post_doit see split ops since 6.2. */
#ifdef SIO_HAVE_GENL_SPLIT_OPS_DOIT
#define SIO_GENL_DOIT_OPS genl_split_ops
#else
#define SIO_GENL_DOIT_OPS genl_ops
#endif

/* vm_flags is written through vm_flags_set() since 6.3. */
static inline void sio_vm_flags_set(struct vm_area_struct *vma,
				    unsigned long flags)
{
#ifdef SIO_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/*
 * iommu_map() takes the allocation flags since 6.3, when
 * iommu_map_atomic() went; callers here map under spinlocks as well as
 * in process context.
 */
static inline int sio_iommu_map(struct iommu_domain *dom, unsigned long iova,
				phys_addr_t paddr, size_t size, int prot,
				gfp_t gfp)
{
#ifdef SIO_HAVE_IOMMU_MAP_ATOMIC
	if (gfp == GFP_ATOMIC)
		return iommu_map_atomic(dom, iova, paddr, size, prot);
	return iommu_map(dom, iova, paddr, size, prot);
#else
	return iommu_map(dom, iova, paddr, size, prot, gfp);
#endif
}

/*
 * An unmanaged IOMMU domain for dev, or NULL: iommu_paging_domain_alloc()
 * since 6.11 (iommu_domain_alloc() of a whole bus goes in 6.13).
 */
static inline struct iommu_domain *sio_iommu_domain_alloc(struct device *dev)
{
#ifdef SIO_HAVE_IOMMU_PAGING_DOMAIN_ALLOC
	struct iommu_domain *dom = iommu_paging_domain_alloc(dev);

	return IS_ERR(dom) ? NULL : dom;
#else
	return iommu_domain_alloc(dev->bus);
#endif
}

/*
 * The driver override of a PCI function, name "" clearing it: in struct
 * device since mainline 7.0 and Debian 13's 6.12.117, in struct pci_dev
 * before.
 */
static inline int sio_set_driver_override(struct pci_dev *pdev,
					  const char *name)
{
#ifdef SIO_HAVE_DEVICE_DRIVER_OVERRIDE
	return device_set_driver_override(&pdev->dev, name);
#else
	return driver_set_override(&pdev->dev, &pdev->driver_override, name,
				   strlen(name));
#endif
}

/*
 * MSI-X entry index's descriptor, or NULL.  Until 6.2 the descriptors are
 * an xarray of struct device, read here without the MSI lock (callers may
 * hold it); since then that structure is private and the lookup takes the
 * lock (msi_get_virq()), so it must not be called with it held -- the
 * core programs the table on the MSI-X enable writes, which 6.12's
 * msix_capability_init() makes outside it.
 */
static inline struct msi_desc *sio_msix_desc(struct device *dev, u32 index)
{
#ifdef SIO_HAVE_MSI_DESC_STORE
	return dev->msi.data ? xa_load(&dev->msi.data->__store, index) : NULL;
#else
	int irq = msi_get_virq(dev, index);

	return irq > 0 ? irq_get_msi_desc(irq) : NULL;
#endif
}

/*
 * A device's own DMA operations.  Since 6.12 the DMA API calls the IOMMU's
 * DMA code directly for a device behind an IOMMU (dev->dma_iommu) and
 * consults dev->dma_ops only when that flag is clear, so installing ops
 * clears it; sio_dma_ops_restore() puts back what was there.
 */
struct sio_dma_ops_saved {
	const struct dma_map_ops *ops;
	bool iommu;
};

/* Sets dev->dma_iommu to on where it exists; returns what it was. */
static inline bool sio_dma_iommu_swap(struct device *dev, bool on)
{
#if defined(SIO_HAVE_DEV_DMA_IOMMU) && defined(CONFIG_IOMMU_DMA)
	bool was = dev->dma_iommu;

	dev->dma_iommu = on;
	return was;
#else
	return false;
#endif
}

static inline void sio_dma_ops_install(struct device *dev,
				       const struct dma_map_ops *ops,
				       struct sio_dma_ops_saved *saved)
{
	bool was = sio_dma_iommu_swap(dev, false);

	if (saved) {
		saved->ops = get_dma_ops(dev);
		saved->iommu = was;
	}
	set_dma_ops(dev, ops);
}

static inline void sio_dma_ops_restore(struct device *dev,
				       const struct sio_dma_ops_saved *saved)
{
	set_dma_ops(dev, saved->ops);
	sio_dma_iommu_swap(dev, saved->iommu);
}

#endif /* SIO_KCOMPAT_H */
