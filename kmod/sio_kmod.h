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

#include <linux/bits.h>
#include <linux/msi.h>
#include <linux/mutex.h>
#include <linux/pci.h>

#include "core.h"
#include "sio_kcompat.h"

#define SIO_K_NODES 2		/* host0 (lender) and host1 (loopback) */
#define SIO_K_NTB_NODES 4	/* fabric=ntb: nodes= at most */
#define SIO_K_LENDER 0
#define SIO_K_BORROWER 1
#define SIO_K_MAX_DEVS 8
#define SIO_K_PEER_MAPS 16	/* BARs mapped between devices lent here */
#define SIO_K_MAX_SEGS 32	/* the registry's max_segments */
#define SIO_K_SEG_RAM (256ull << 20)	/* segment memory per node, at most */
#define SIO_K_LUTS 256		/* per loopback adapter */
#define SIO_K_WINDOW BIT_ULL(30)	/* 4 MiB per LUT slot */
#define SIO_PEER_MSG_K 512	/* a message without bulk data */
/* fabric=ntb: the adapter's window at most (all LUT entries of a peer). */
#define SIO_K_NTB_WINDOW_MAX BIT_ULL(36)
/* The lent device's IOMMU addresses of the lender's window slots. */
#define SIO_K_DEV_IOVA BIT_ULL(36)

/* Capabilities sio_vcfg.c keeps track of per function, at most. */
#define SIO_VCFG_CAPS 32
#define SIO_VCAP_EXT 0x8000

/* The adapter ntb0 (or lo0) of this machine's registry. */
struct sio_k_geometry {
	u64 window;
	u32 luts;
	u32 own_luts;	/* fabric=ntb: this machine's share, 0 all of them */
	u32 share;	/* fabric=ntb: luts_per_node, 0 no limit */
};

struct seq_file;
struct sio_shadow_mode;

/*
 * What differs between fabric=loopback (both nodes on this machine, one
 * registry) and fabric=ntb (this machine is one node of a cluster, each
 * with its own registry): chosen once at load (sio_main.c), so that the
 * code that runs knows its mode from the table it was given, and an NTB's
 * differences land in these tables (sio_plat.c) and the functions they
 * name.  Optional entries are NULL where the mode has nothing to do.
 */
struct sio_k_fabric {
	const char *adapter;	/* the adapters' name in the registry */
	const struct sio_platform_ops *plat;	/* the core's platform */
	/*
	 * Separate registries (SIO_CORE_SEPARATE): every node lays out
	 * every node's device slots and names its devices after itself;
	 * the other nodes are up while their machines say so.
	 */
	bool separate;
	/* Before the registry is built: the adapter's geometry (optional). */
	int (*probe)(struct sio_k_geometry *geo, u32 limit, u32 share);
	void (*unprobe)(void);
	/* Once everything else is up, and before it goes (optional). */
	int (*start)(void);
	void (*stop)(void);
	void (*announce)(void);
	/* The mode's lines of the debugfs state file, lock held (optional). */
	void (*show)(struct seq_file *s);
	/*
	 * Where node's CPU reaches a window address: the target itself on
	 * one machine, the outbound window's physical address over an NTB.
	 */
	int (*reach)(u32 node, u64 addr, u64 len, u32 *tnode, u64 *phys);
	/*
	 * A user's BORROW, RETURN and RECLAIM with the lending around them
	 * (claim, shadow); they take the lock themselves.
	 */
	int (*borrow)(u32 dev, u32 node, u64 window);
	int (*give_back)(u32 dev, u32 node);
	int (*reclaim)(u32 dev, u32 asker);
	const struct sio_shadow_mode *shadow;	/* a borrow's shadow device */
};

extern const struct sio_k_fabric sio_kfab_loopback;
extern const struct sio_k_fabric sio_kfab_ntb;
extern const struct sio_shadow_mode sio_shadow_loop;
extern const struct sio_shadow_mode sio_shadow_ntb;

struct sio_klut {
	bool valid;
	u16 rid;
	u32 target_node;
	u32 src_node;
	u64 target_addr;
	u64 len;
	/*
	 * fabric=ntb: the slot's hardware entry in this machine's outbound
	 * window, and the lent device's IOMMU address of it (0: none).
	 */
	phys_addr_t hw;
	u64 iova;
};

struct sio_shadow;
struct sio_view;
struct sio_bar_cdev;

/* A device of host0 the core can lend. */
struct sio_kdev {
	struct pci_dev *pdev;
	u32 index;		/* in the registry */
	bool claimed;		/* bound to smartio's own PCI driver */
	/*
	 * While claimed: the device's own IOMMU domain, the one its DMA
	 * reaches through the (identity) DMA window.
	 */
	struct iommu_domain *domain;
	/* fabric=ntb: the borrower its requester ids may send to (lent). */
	u32 rid_peer;
	bool lent;		/* fabric=ntb: rid_peer's NTB table has them */
	struct sio_shadow *shadow;	/* host1's view while borrowed */
	/* Class devices of each node's access to it (sio_cdev.c). */
	struct sio_view *view[SIO_K_NODES];
	/*
	 * Emulated config registers (sio_vcfg.c): BARs 0-5 and the ROM as
	 * written, their writable bits, the virtual command register.
	 */
	u32 vcfg[PCI_STD_NUM_BARS + 1];
	u32 vmask[PCI_STD_NUM_BARS + 1];
	u16 vcmd;
	bool vcfg_ready;
	/*
	 * The function's capabilities, found when the registers above are
	 * read (their headers and the registers a borrower may not change
	 * stay as the device has them), and the emulated power state.
	 */
	struct sio_vcap {
		u16 off;
		u16 id;		/* SIO_VCAP_EXT | an extended capability's id */
	} vcap[SIO_VCFG_CAPS];
	u8 ncaps;
	u8 vpower;		/* PCI_PM_CTRL_STATE_MASK bits as written */
	/* A borrower's MSI-X messages written, and refused (sio_plat.c). */
	u32 msix_written;
	u32 msix_refused;
	/*
	 * A VF's slot (sio_sriov.c) has no pdev while the VF is disabled;
	 * a VF just disabled keeps its reference here until its view goes.
	 */
	struct pci_dev *vf_put;
	/* A PF whose VFs change (sio_k_sriov, outside the lock): not lent. */
	bool sriov_busy;
};

struct sio_kernel {
	/*
	 * The platform lock the core runs under.  A task of this machine
	 * takes it with sio_k_lock(); a peer's request (sio_ntb.c) with
	 * mutex_lock().
	 */
	struct mutex lock;
	/*
	 * Senders waiting for a peer's reply, which let go of lock meanwhile
	 * so that the peer's requests to us can take it (sio_ntb.c); their
	 * operations are half done, so sio_k_lock() waits until there is
	 * none (park_wq).
	 */
	u32 parked;
	wait_queue_head_t park_wq;
	struct sio_core core;
	struct sio_registry *reg;
	u32 ndevs;
	struct sio_kdev dev[SIO_K_MAX_DEVS];
	struct sio_klut lut[SIO_K_NTB_NODES][SIO_K_LUTS];
	struct sio_bar_cdev *seg[SIO_K_MAX_SEGS];	/* segments' memory */
	/* Registry or events changed: bumped by notify (sio_fabric.c). */
	u64 notifies;
	atomic64_t requests;	/* generic netlink requests served */
	/*
	 * This machine's node: host0 with the loopback adapter, node= with
	 * fabric=ntb (the other node is another machine, sio_ntb.c).
	 */
	u32 self;
	u32 nnodes;		/* in the registry */
	const struct sio_k_fabric *fab;	/* fabric= */
	/*
	 * fabric=ntb over single look-up-table entries: devices are lent and
	 * segments attached through them, one translation each.
	 */
	bool lut_entries;
	/*
	 * fabric=ntb: the direct window DMA windows take (core.h dma_direct)
	 * when single entries cannot cover a borrower's RAM (Switchtec's
	 * 64 KiB LUT entries); 0 when they can.  The same on every machine
	 * of one switch, as the entries are.
	 */
	u64 direct_size;
};

extern struct sio_kernel sio_k;
extern const struct sio_platform_ops sio_kplat_loop_ops;
extern const struct sio_platform_ops sio_kplat_ntb_ops;

/* sio_k.lock for a task of this machine, once no sender is parked. */
void sio_k_lock(void);
void sio_k_unlock(void);

/*
 * Where a window address of node's loopback adapter leads: 0 and the LUT
 * target (node, address) for len bytes, or -EFAULT.  Caller holds the lock.
 */
int sio_kplat_resolve(u32 node, u64 addr, u64 len, u32 *tnode, u64 *taddr);
/* fabric=ntb: the lent device's address of a slot of node's window. */
u64 sio_kplat_dev_iova(u32 node, u64 addr);
/*
 * fabric=ntb: of size bytes of the BAR at phys of a device lent here, how
 * many a borrower may reach through its window (its MSI-X table and
 * pending bits are this machine's to write, kplat_msix_write).
 */
u64 sio_kplat_msix_limit(u64 phys, u64 size);

/*
 * Lender side (sio_lender.c): the device leaves its driver for smartio's.
 * The caller resets the emulated config registers (sio_vcfg_reset).
 */
int sio_lender_init(void);
void sio_lender_exit(void);
int sio_lender_claim(struct sio_kdev *kd);
void sio_lender_release(struct sio_kdev *kd);

/* Borrower side (sio_shadow.c): a shadow device on a virtual root bus. */
int sio_shadow_create(struct sio_kdev *kd, u32 borrower,
		      struct device *parent);
void sio_shadow_remove(struct sio_kdev *kd);
/* The MSI message the shadow's driver gave MSI-X entry, 0 or -ENOENT. */
void sio_shadow_show(struct seq_file *s, struct sio_kdev *kd);
int sio_shadow_msix_msg(struct sio_kdev *kd, u32 entry, struct msi_msg *msg);

/*
 * Lending as one machine does it (sio_shadow.c): claims the device, runs
 * the core's borrow, hot-adds the shadow; and the reverse.  Take the lock
 * themselves (never call with it held).  sio_kfab_loopback's borrow,
 * give_back and reclaim.
 */
int sio_loop_borrow(u32 dev, u32 node, u64 window);
int sio_loop_return(u32 dev, u32 node);
int sio_loop_reclaim(u32 dev, u32 asker);
struct sio_kdev *sio_kdev_of(u32 dev);
/*
 * Config cycles to the real function (sio_vcfg.c): 1 when the aligned
 * access of n bytes at off was emulated, 0 when it goes to the device.
 * Caller holds sio_k.lock.
 */
int sio_vcfg_access(struct sio_kdev *kd, u32 off, u32 n, u32 *v, bool write);
void sio_vcfg_reset(struct sio_kdev *kd);
/* A user command as this node: sio_core_call under the lock. */
int sio_k_call(struct sio_msg *m, struct sio_parsed *rep, void *repbuf,
	       u32 cap);
/*
 * The same, its message built by the caller between sio_k_req_new()
 * (NULL: no memory) and sio_k_req_send(), which runs it, frees it and
 * returns the core's answer.
 */
struct sio_k_req {
	struct sio_msg m;
	struct sio_parsed rep;
	u8 buf[SIO_PEER_MSG_K];
	u8 repbuf[SIO_PEER_MSG_K];
};

struct sio_k_req *sio_k_req_new(u8 cmd);
int sio_k_req_send(struct sio_k_req *q);
/* The same for a command of a device (DEV) and a node (NODE). */
int sio_k_cmd(u8 cmd, u32 dev, u32 node);

/* The size of pdev's memory BAR b (0: none or not memory), SIO_BAR_*. */
u64 sio_k_bar(struct pci_dev *pdev, int b, u32 *flags);

/*
 * SR-IOV on the lender (sio_sriov.c).  slots: a PF's VF slots after
 * pf_index in tdev, at most room; how many.  set: the platform's
 * sriov_set, under sio_k.lock, which asks for the PF driver's change
 * (-EINPROGRESS) and then records the VFs.  sio_k_sriov: SRIOV_SET as
 * this node's user, the PF's driver called between the two (never with
 * the lock held), the VFs' views added or removed.
 * exit: VFs smartio enabled are disabled at unload.
 */
u32 sio_sriov_slots(struct sio_topo_device *tdev, struct pci_dev *pf,
		    u32 pf_index, u32 room);
int sio_sriov_set(u32 pf, u16 num);
int sio_k_sriov(u32 pf, u64 num);
void sio_sriov_exit(void);

int sio_genl_init(void);
void sio_genl_exit(void);

/*
 * Class smartio (sio_cdev.c): node's view of device dev, with a character
 * device per BAR; hot-added and removed with uevents.
 */
int sio_cdev_init(void);
void sio_cdev_exit(void);
struct sio_view *sio_view_add(u32 dev, u32 node);
struct device *sio_view_device(struct sio_view *v);
void sio_view_remove(struct sio_view *v);
/* A segment's memory and character device (kplat_seg_backing). */
struct sio_bar_cdev *sio_seg_dev_add(const char *owner, const char *name,
				     u64 size);
struct sio_bar_cdev *sio_seg_dev_add_ext(const char *owner, const char *name,
					 u64 size, void *mem, phys_addr_t phys);
void sio_seg_dev_remove(struct sio_bar_cdev *bc);

struct class *sio_cdev_class(void);

/* The fabric device and its change uevents (sio_fabric.c). */
int sio_fabric_init(void);
void sio_fabric_exit(void);
void sio_fabric_notify(void);

/* debugfs: the read-only state file (sio_debugfs.c). */
int sio_debugfs_init(void);
void sio_debugfs_exit(void);

/*
 * fabric=ntb (sio_ntb.c): the other node through smartio_ntb.ko, whose
 * table of operations probe binds on the auxiliary bus (smartio.ko has no
 * link-time dependency on it) and pins until unprobe or exit.  init
 * takes the transport over; the rest are the platform's send, seg_backing,
 * seg_map and notify for that mode, called with sio_k.lock held.
 */
int sio_ntb_fab_init(void);
void sio_ntb_fab_exit(void);
int sio_ntb_fab_send(u32 dst, const void *msg, u32 len, void *reply, u32 cap);
int sio_ntb_fab_seg_backing(u32 seg, int create);
int sio_ntb_fab_seg_map(u32 seg, u32 node, int map);
int sio_ntb_fab_seg_bus(u64 phys, u64 size, phys_addr_t *bus);
int sio_ntb_fab_seg_dma(u64 phys, u64 size, u64 *dma);
void sio_ntb_fab_show(struct seq_file *s);
struct pci_dev *sio_ntb_fab_pci_dev(void);
void sio_ntb_fab_notify(void);
int sio_ntb_fab_probe(struct sio_k_geometry *geo, u32 limit);
void sio_ntb_fab_unprobe(void);
phys_addr_t sio_ntb_fab_lut_peer_addr(u32 node, u32 entry);
int sio_ntb_fab_lut_set(u32 node, u32 entry, u64 addr, u64 size);
void sio_ntb_fab_lut_clear(u32 node, u32 entry);
u64 sio_ntb_fab_lut_align(u32 node);
int sio_ntb_fab_direct_set(u32 node, u64 addr, u64 size);
void sio_ntb_fab_direct_clear(u32 node);
phys_addr_t sio_ntb_fab_direct_peer_addr(u32 node);
int sio_ntb_fab_rid_allow(u32 node, u16 rid, bool allow);

/*
 * Lending between machines (sio_ntb_lend.c): the platform's LUT slots,
 * lend_claim and inbound_map over the NTB, and the borrower's shadows.
 */
void sio_ntb_lend_init(void);
void sio_ntb_lend_exit(void);
void sio_ntb_lend_notify(void);
void sio_ntb_lend_show(struct seq_file *s);
struct sio_shadow *sio_ntb_lend_shadow(u32 dev);
int sio_ntb_lend_lut_set(u32 slot, struct sio_klut *l);
void sio_ntb_lend_lut_clear(struct sio_klut *l);
int sio_ntb_lend_claim(u32 dev, u32 borrower, int claim);
struct sio_kdev *sio_ntb_lend_wanted(void);
void sio_ntb_lend_claim_begin(struct sio_kdev *kd);
void sio_ntb_lend_claim_end(void);
void sio_ntb_lend_settle(void);
bool sio_ntb_fab_serving(void);
int sio_ntb_lend_window_addr(u32 dev, u64 phys, u64 size, u64 *ioaddr);
int sio_ntb_lend_peer_map(u16 rid, u64 iova, u64 phys, u64 size);
void sio_ntb_lend_peer_unmap(u16 rid, u64 iova);
int sio_ntb_lend_inbound(u32 peer, u32 kind, u64 peer_addr, u64 local_addr,
			 u64 size, bool map);
int sio_ntb_lend_direct_map(u32 borrower, u16 rid, u64 addr, u64 size,
			    bool map);
u64 sio_ntb_lend_ram_window(void);
int sio_ntb_k_borrow(u32 dev, u32 node, u64 window);

/*
 * The borrower's DMA window of a borrow in its NTB function's IOMMU
 * domain (sio_ntb_window.c): how the shadow's DMA reaches this machine.
 */
enum sio_win_mode {
	SIO_WIN_IDENTITY,	/* no IOMMU or identity: RAM from address 0 */
	SIO_WIN_STRICT,		/* each page the driver maps, while mapped */
	SIO_WIN_PREMAP,		/* all RAM at iova + physical address */
};

struct sio_ntb_window {
	enum sio_win_mode mode;
	struct pci_dev *pdev;		/* the NTB function */
	struct iommu_domain *domain;	/* its domain (NULL: no IOMMU) */
	dma_addr_t iova;		/* the range, reserved in it */
	u64 size;
	u64 premapped;			/* bytes of RAM mapped in advance */
	u64 premap_end;			/* up to this physical address */
	u32 users;			/* the borrow, its shadow */
	/*
	 * Strict: the range's allocator, the shadow's DMA API's and the
	 * segments' mapped for the device (segs, under the window lock).
	 */
	struct gen_pool *pool;
	struct list_head segs;
};

int sio_ntb_window_open(u32 dev, u64 size, u64 *iova);
void sio_ntb_window_close(u32 dev);
struct sio_ntb_window *sio_ntb_window_get(u32 dev);
void sio_ntb_window_put(struct sio_ntb_window *w);
int sio_ntb_window_seg_map(u32 dev, u64 key, phys_addr_t phys, u64 size,
			   dma_addr_t *iova);
void sio_ntb_window_seg_unmap(u32 dev, u64 key);
bool sio_ntb_window_premap(void);
bool sio_ntb_window_translated(void);
int sio_ntb_k_return(u32 dev, u32 node);

#endif /* SIO_KMOD_H */
