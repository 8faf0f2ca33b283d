/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every NTB function on the smartio switch shares, whatever registers
 * its guest sees: the connection to smartio-ntb-switch, the pipes to each
 * peer, the peers' guest RAM, the RAM aliases in the outbound windows,
 * forwarded reads and writes, and the interrupt path.  Two device models
 * use it: smartio-ntb-port (the project's own register map) and
 * switchtec-nt (a Microchip Switchtec PFX NT function).  A model says
 * where its windows lead through struct ntbsw_core_ops; ntbsw-core.c does
 * the rest.
 */
#ifndef NTBSW_CORE_H
#define NTBSW_CORE_H

#include "qemu/osdep.h"
#include "qemu/thread.h"
#include "hw/pci/pci.h"
#include "sysemu/hostmem.h"
#include "exec/memory.h"

#include "ntbsw-proto.h"

#define NTBSW_MSI_BASE	0xfee00000ULL	/* the interrupt range */
#define NTBSW_MSI_SIZE	0x100000ULL
#define NTBSW_PENDING	16	/* outstanding forwarded reads */
#define NTBSW_READ_TIMEOUT_MS 1000
#define NTBSW_NR_WIN	2	/* outbound window BARs: BAR2, BAR4 */
/* RAM alias slots: a Switchtec function's 512 LUT entries and 2 windows */
#define NTBSW_MAX_SLOTS	520

struct ntbsw_pending {
	bool busy, done, ok;
	uint8_t dst;
	uint64_t data;
};

struct ntbsw_iova_ctx;

/*
 * What a sender keeps of one translating peer's tables (ntbsw-iommu.c),
 * as an IOTLB does: 4 KiB pages, direct-mapped by IOVA page, each valid
 * while the peer's inval_gen is the one it was walked under.
 */
#define NTBSW_IOTLB_SIZE 64

struct ntbsw_iotlb_entry {
	uint64_t iova;		/* page; valid only with gen */
	uint64_t gpa;		/* page */
	uint64_t gen;		/* the peer's inval_gen before the walk, + 1 */
	unsigned int perm;	/* VTD_SL_R | VTD_SL_W */
};

struct ntbsw_iotlb {
	QemuSpin lock;
	struct ntbsw_iotlb_entry e[NTBSW_IOTLB_SIZE];
};

struct ntbsw_peer {
	MemoryRegion ram;		/* the peer's guest RAM (shared fd) */
	bool have_ram;
	/*
	 * While have_ram, for a peer whose function's DMA is translated
	 * (ntbsw-iommu.c): its RAM as an address space (where a page its
	 * IOMMU maps leads) and its IOVA space as one, whose every access
	 * walks the peer's tables then lands in its RAM or is forwarded.
	 */
	AddressSpace *ram_as, *iova_as;
	MemoryRegion *iova_mr;
	struct ntbsw_iova_ctx *iova_ctx;
	struct ntbsw_iotlb iotlb;	/* of its tables, while have_ram */
	void *ram_ptr;
	uint64_t ram_size;
	int tx_fd;	/* data pipe to the peer (send_lock), -1: none */
	int irq_fd;	/* interrupt pipe to the peer (send_lock) */
	int rx_fd;	/* data pipe from the peer (big lock) */
	/* Sent on tx_fd since the last MSI on irq_fd (send_lock). */
	bool data_since_irq;
};

/*
 * What one place of an outbound window onto a peer's RAM is: a RAM alias
 * (the peer's function in identity mode), or, when the peer translates
 * its function's DMA, an IOMMU region over the peer's IOVA space.
 */
struct ntbsw_alias {
	MemoryRegion *mr;
	bool iommu;
	unsigned int peer, win;
	uint64_t bar_off, target, len;
};

/* Where one alias slot leads now; false: nowhere (no alias). */
struct ntbsw_slot {
	unsigned int peer, win;
	uint64_t bar_off, target, len;
};

struct ntbsw_core;

struct ntbsw_core_ops {
	/* A notice from a peer (NTBSW_NOTE_* bits), big lock held. */
	void (*notify)(struct ntbsw_core *c, unsigned int src, uint64_t note);
	/* A peer came, left or lost the switch: links may have changed. */
	void (*peers_changed)(struct ntbsw_core *c);
	/* How many alias slots the model has, and where slot i leads. */
	unsigned int (*nr_slots)(struct ntbsw_core *c);
	bool (*slot)(struct ntbsw_core *c, unsigned int i,
		     struct ntbsw_slot *out);
	/*
	 * An access of size bytes at offset addr of window BAR w that no
	 * alias served: the peer and its address, false when the access goes
	 * nowhere (reads all-ones, writes dropped; the model counts it).
	 */
	bool (*translate)(struct ntbsw_core *c, unsigned int w, hwaddr addr,
			  unsigned int size, unsigned int *peer,
			  uint64_t *target);
	/*
	 * Optional: whether a request of requester id rid may cross into a
	 * window (ID protection); no side effect.  Asked for every access
	 * of a device behind the requester-id gate (ntbsw-rid.c), and for
	 * other writes that carry their requester id (MSI writes; vCPU
	 * accesses carry none and are not asked).
	 */
	bool (*requester_ok)(struct ntbsw_core *c, uint16_t rid);
	/*
	 * With requester_ok: a request of rid it refused (a write, or a
	 * read), which did not cross.  The model counts it.
	 */
	void (*requester_refused)(struct ntbsw_core *c, uint16_t rid,
				  bool write);
};

struct ntbsw_core {
	PCIDevice *pci;
	const struct ntbsw_core_ops *ops;
	const char *name;	/* in messages: the device type */

	/* properties */
	char *switch_path;
	uint32_t port;
	HostMemoryBackend *memdev;

	int sock;
	QemuMutex send_lock;
	struct ntbsw_state *st;
	size_t st_len;		/* bytes of the switch state mapped */
	uint32_t nports;
	struct ntbsw_peer peer[NTBSW_MAX_PORTS];

	MemoryRegion win[NTBSW_NR_WIN];		/* BAR2, BAR4 containers */
	MemoryRegion win_io[NTBSW_NR_WIN];	/* forwarding background */
	/*
	 * The same callbacks again, out of the guest's reach in system
	 * memory (ntbsw-iommu.c): where a vCPU's access to a window onto a
	 * translating peer is sent.
	 */
	MemoryRegion win_cpu[NTBSW_NR_WIN];
	uint64_t win_cpu_base[NTBSW_NR_WIN];
	uint64_t win_size[NTBSW_NR_WIN];
	struct ntbsw_alias alias[NTBSW_MAX_SLOTS];
	uint64_t slow;		/* outbound accesses by callback, not alias */
	uint64_t iova_walks;	/* walks of a peer's VT-d tables (ntbsw-iommu.c) */
	uint64_t iova_hits;	/* translations its IOTLB gave instead */

	QemuThread rx_thread;
	QemuMutex q_lock;
	GQueue *rxq;			/* struct rx_item, for the main loop */
	QEMUBH *bh;

	QemuMutex p_lock;
	QemuCond p_cond;
	struct ntbsw_pending pend[NTBSW_PENDING];

	/*
	 * The requester-id gate (ntbsw-rid.c): the bus whose DMA address
	 * spaces it hands out, what that bus handed out before (the vIOMMU's
	 * or none), and its gates by requester.
	 */
	PCIBus *gate_bus;
	PCIIOMMUFunc gate_inner_fn;
	void *gate_inner_opaque;
	GHashTable *gates;
	Notifier gate_done;

	/* This function's own DMA translation, published (ntbsw-iommu.c). */
	MemoryListener dma_listener;
	bool dma_watched, dma_seen_iommu;
	bool dma_gen_kept;	/* our VT-d's writes bump our inval_gen */
	QEMUBH *dma_bh;		/* tells the peers it changed */
};

#define NTBSW_ME(c) (&(c)->st->port[(c)->port])

/* instance_init: no connection, no pipes. */
void ntbsw_core_init(struct ntbsw_core *c, PCIDevice *pci,
		     const struct ntbsw_core_ops *ops, const char *name);
/*
 * realize, first half: checks the properties, connects to the switch and
 * maps its state (min_state bytes at least).  -1 with errp set.
 */
int ntbsw_core_connect(struct ntbsw_core *c, size_t min_state,
		       Error **errp);
/* realize, second half: window BARs 2 and 4 of these sizes, the threads. */
void ntbsw_core_start(struct ntbsw_core *c, const uint64_t *win_size);

int ntbsw_send(struct ntbsw_core *c, struct ntbsw_msg *m, int fd);
void ntbsw_notify(struct ntbsw_core *c, unsigned int dst, uint64_t note);
/* Rebuilds every RAM alias from the model's slots (big lock held). */
void ntbsw_remap(struct ntbsw_core *c);
/* Reads waiting on the peers in mask answer all-ones now. */
void ntbsw_fail_reads(struct ntbsw_core *c, uint32_t mask);
void ntbsw_msix(struct ntbsw_core *c, unsigned int vec);
bool ntbsw_present(struct ntbsw_core *c, unsigned int p);
/* A forwarded read or write of peer p's address addr (its bus master). */
uint64_t ntbsw_fwd_read(struct ntbsw_core *c, unsigned int p, uint64_t addr,
			unsigned int size);
void ntbsw_fwd_write(struct ntbsw_core *c, unsigned int p, uint64_t addr,
		     uint64_t val, unsigned int size);

/* ---- ntbsw-iommu.c: the receiving guest's IOMMU ------------------------ */

/* realize: publish this function's DMA translation now and on change. */
void ntbsw_dma_watch(struct ntbsw_core *c);
/* Whether peer p translates what arrives through a window (not identity). */
bool ntbsw_peer_translated(struct ntbsw_core *c, unsigned int p);
/*
 * Peer p's guest-physical address of its IOVA iova, accessed for a write
 * or a read of size bytes: false when its IOMMU would refuse it (not
 * mapped, no permission, tables we cannot walk); the access is then
 * forwarded, and the peer's vIOMMU refuses it and logs the fault.
 */
bool ntbsw_peer_iova(struct ntbsw_core *c, unsigned int p, uint64_t iova,
		     unsigned int size, bool write, uint64_t *gpa);
/* Peer p's address spaces (have_ram set), and their end. */
void ntbsw_peer_as_init(struct ntbsw_core *c, unsigned int p);
void ntbsw_peer_as_drop(struct ntbsw_core *c, unsigned int p);
/* A window region of len bytes onto peer p's IOVAs from target. */
MemoryRegion *ntbsw_iova_window(struct ntbsw_core *c, unsigned int p,
				unsigned int win, uint64_t bar_off,
				uint64_t target, uint64_t len);
/* realize: the vCPUs' way into window w (ops: its forwarding ops). */
void ntbsw_cpu_window(struct ntbsw_core *c, unsigned int w,
		      const MemoryRegionOps *ops);

/* ---- ntbsw-rid.c: the requester of a device's DMA -------------------- */

/*
 * realize, when the model checks requesters (ops->requester_ok): every
 * device of this guest that shares the NT function's IOMMU bus gets a
 * DMA address space that refuses, as the model says, its accesses that
 * would cross into a window.  Installed when the machine is complete.
 */
void ntbsw_gate_start(struct ntbsw_core *c);
/* Whether an access that ends in mr crosses this function's windows. */
bool ntbsw_crosses(struct ntbsw_core *c, MemoryRegion *mr);

#endif
