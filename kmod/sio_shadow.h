/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A borrower's shadow function (sio_shadow.c), shared with the parts that
 * differ over an NTB (sio_shadow_ntb.c): its DMA API and its MSI domain.
 */
#ifndef SIO_SHADOW_H
#define SIO_SHADOW_H

#include <linux/genalloc.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>
#include <linux/msi.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>

#include "sio_kmod.h"

struct sio_shadow {
	struct pci_sysdata sd;	/* first: the bus's sysdata */
	struct sio_kdev *kd;
	const struct sio_shadow_mode *mode;	/* sio_k.fab->shadow */
	u32 fdid;
	u32 borrower;
	u8 busnr;		/* the lender's bus number and devfn */
	u8 devfn;
	struct pci_bus *bus;
	struct pci_dev *pdev;
	struct resource busn;
	struct resource win[PCI_STD_NUM_BARS];	/* BAR i's window */
	/* The host bridge's windows: the BARs', adjacent ones merged. */
	struct resource bridge_win[PCI_STD_NUM_BARS];
	int nbridge_win;
	/*
	 * IOVA ranges of the window mapped per DMA mapping, in domain dom:
	 * loopback, the device's own; over an NTB with a strict window, the
	 * NTB function's (ntbw), where the device's address of an IOVA is
	 * dev_off above it (the lender's window leads there), and the pool
	 * is the window's, which segments mapped for the device share.
	 */
	struct gen_pool *iova;
	u64 iova_base, iova_size;
	struct iommu_domain *dom;
	u64 dev_off;
	struct sio_ntb_window *ntbw;	/* over an NTB: the borrow's window */
	/*
	 * Over an NTB: the DMA window as the device addresses it, which
	 * leads to the borrow's window in this machine's NTB function's
	 * domain (identity or premapped: RAM at the window's start plus its
	 * physical address, address arithmetic), and the device's address
	 * of the MSI window onto this machine's interrupt range.
	 */
	u64 dma_base, dma_size, msi_base;
	/*
	 * Its config space as the lender last answered it, for the readers
	 * that may not sleep: the PCI core serves sysfs and procfs config
	 * reads (lspci) with pci_lock held and interrupts off, and a cycle
	 * to the lender waits for a reply.  Read whole before the shadow's
	 * sysfs files exist, refreshed by every read that may sleep.
	 */
	raw_spinlock_t cfg_lock;
	u32 cfg_size;
	u8 cfg_seen[PCI_CFG_SPACE_EXP_SIZE];
	/* Its BAR registers, emulated (value, writable bits, type bits). */
	u32 bar_reg[PCI_STD_NUM_BARS];
	u32 bar_mask[PCI_STD_NUM_BARS];
	u32 bar_flags[PCI_STD_NUM_BARS];
	struct fwnode_handle *msi_fwnode;
	struct irq_domain *msi_domain;
	struct msi_domain_info msi_info;
	struct msi_domain_ops msi_ops;
	struct irq_chip msi_chip;
	/*
	 * Over an NTB: what the interrupt remapping of this machine's NTB
	 * function sees as the sender of the shadow's messages (they arrive
	 * as that function's writes): a descriptor naming its device.
	 */
	struct msi_desc ntb_desc;
	/*
	 * Over an NTB the lender writes the device's MSI-X table and MSI
	 * message: the chip's mask and unmask it wraps, and a work item
	 * that sends the lender every entry changed.  Each MSI-X entry, and
	 * MSI's message after them (slot msi_slots - 1), as the chip last
	 * set it (msi_want, msi_dirty: under msi_lock, the chip runs
	 * atomic) and as the lender last took it (msi_sent, msi_sent_ok:
	 * under msi_send_lock, which orders the sends).  The work and the
	 * write that enables MSI send from these copies, never from the PCI
	 * core's descriptors, which go with the driver.
	 */
	void (*chip_mask)(struct irq_data *data);
	void (*chip_unmask)(struct irq_data *data);
	struct work_struct msix_work;
	bool msix_live;		/* the work may run (the shadow is there) */
	raw_spinlock_t msi_lock;
	struct mutex msi_send_lock;	/* msi_sent, msi_sent_ok */
	u32 msi_slots;
	u8 (*msi_want)[PCI_MSIX_ENTRY_SIZE];
	u8 (*msi_sent)[PCI_MSIX_ENTRY_SIZE];
	unsigned long *msi_dirty;
	unsigned long *msi_sent_ok;
	atomic64_t maps;	/* DMA API mappings made, ever */
	atomic_t live;		/* DMA API mappings not unmapped yet */
};

static inline struct sio_shadow *sio_bus_shadow(struct pci_bus *bus)
{
	return container_of((struct pci_sysdata *)bus->sysdata,
			    struct sio_shadow, sd);
}

static inline struct sio_shadow *sio_dev_shadow(struct device *dev)
{
	return sio_bus_shadow(to_pci_dev(dev)->bus);
}

/* sio_shadow.c: a scatterlist's DMA segments, as the DMA APIs build them. */
void sio_sg_add(struct device *dev, struct scatterlist **out, int *count,
		dma_addr_t addr, unsigned int len);
void sio_sg_end(struct scatterlist *sgl, int nents, int count);
/* Zeroed pages of a coherent buffer at the address map gives them. */
typedef dma_addr_t (*sio_coherent_map_fn)(struct sio_shadow *sh,
					  phys_addr_t phys, size_t size);
void *sio_shadow_pages(struct device *dev, size_t size, gfp_t gfp,
		       dma_addr_t *handle, sio_coherent_map_fn map);

/*
 * What a shadow does as its fabric requires (struct sio_k_fabric's
 * shadow): sio_shadow_loop (sio_shadow.c) on one machine,
 * sio_shadow_ntb (sio_shadow_ntb.c) over an NTB.  Optional entries are
 * NULL where one machine has nothing to do.
 */
struct sio_shadow_mode {
	/* A config access the mode answers itself: true when it did. */
	bool (*cfg)(struct sio_shadow *sh, int where, int size, u32 *val,
		    bool write);
	/* The DMA window from the core's borrow record, lock held. */
	int (*window)(struct sio_shadow *sh, const struct sio_borrow *b);
	/* After the BARs are placed, lock held. */
	void (*bars)(struct sio_shadow *sh, const struct sio_device *d);
	/* After a config write the device took (optional). */
	void (*cfg_written)(struct sio_shadow *sh, int where, int size,
			    u32 val);
	/* The DMA API and the MSI domain, before any driver binds. */
	int (*dma_msi)(struct sio_shadow *sh);
	/* The shadow's driver is gone: no more MSI-X messages to send. */
	void (*msix_stop)(struct sio_shadow *sh);
	/* Its line of the debugfs state file. */
	void (*show)(struct seq_file *s, struct sio_shadow *sh);
};

/* The strict window's DMA API (sio_shadow.c), over an NTB too. */
extern const struct dma_map_ops sio_shadow_strict_dma_ops;
/* sio_shadow_ntb.c */
int sio_shadow_ntb_dma_supported(struct device *dev, u64 mask);
void sio_shadow_ntb_msi_free(struct sio_shadow *sh);
/* Another device's BAR mapped for the shadow's device (sio_shadow_p2p.c). */
dma_addr_t sio_shadow_p2p_map(struct device *dev, phys_addr_t phys,
			      size_t size, enum dma_data_direction dir,
			      unsigned long attrs);
void sio_shadow_p2p_unmap(struct device *dev, dma_addr_t addr, size_t size,
			  enum dma_data_direction dir, unsigned long attrs);

#endif /* SIO_SHADOW_H */
