/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smartio.ko: the portable core (lib/core) on Linux.  One machine holds two
 * fabric nodes: host0, the lender that owns this machine's PCI devices, and
 * host1, a borrower reached through a loopback "NTB" adapter.  The loopback
 * adapter has no hardware: a window address resolves to its look-up-table
 * target, so a borrower's BAR mapping is the device's real BAR and a DMA
 * window address is the borrower's IOVA, which the real IOMMU translates.
 */
#ifndef SIO_KMOD_H
#define SIO_KMOD_H

#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/wait.h>

#include "core.h"

#define SIO_K_NODES 2		/* host0 (lender) and host1 (loopback) */
#define SIO_K_LENDER 0
#define SIO_K_BORROWER 1
#define SIO_K_MAX_DEVS 8
#define SIO_K_LUTS 256		/* per loopback adapter */
#define SIO_K_WINDOW (1ull << 30)	/* 4 MiB per LUT slot */

struct sio_klut {
	bool valid;
	u16 rid;
	u32 target_node;
	u32 src_node;
	u64 target_addr;
	u64 len;
};

/* A device of host0 the core can lend. */
struct sio_kdev {
	struct pci_dev *pdev;
	u32 index;		/* in the registry */
};

struct sio_kernel {
	struct mutex lock;	/* the platform lock the core runs under */
	struct sio_core core;
	struct sio_registry *reg;
	u32 ndevs;
	struct sio_kdev dev[SIO_K_MAX_DEVS];
	struct sio_klut lut[SIO_K_NODES][SIO_K_LUTS];
	wait_queue_head_t wait;	/* registry or events changed */
	u64 notifies;
};

extern struct sio_kernel sio_k;
extern const struct sio_platform_ops sio_kplat_ops;

/*
 * Where a window address of node's loopback adapter leads: 0 and the LUT
 * target (node, address) for len bytes, or -EFAULT.  Caller holds the lock.
 */
int sio_kplat_resolve(u32 node, u64 addr, u64 len, u32 *tnode, u64 *taddr);

int sio_ctl_init(void);
void sio_ctl_exit(void);

#endif /* SIO_KMOD_H */
