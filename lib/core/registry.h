/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The registry: every node, adapter, device, borrow, segment and event the
 * core knows, as one position-independent block of plain data (indexes, no
 * pointers).  The simulator places it in shared memory so that each
 * simulated node can be its own process; the kernel core places it in
 * vmalloc memory.  Callers hold the platform lock for every access.
 */
#ifndef SIO_REGISTRY_H
#define SIO_REGISTRY_H

#include "compat.h"
#include "alloc.h"
#include "topology.h"

#define SIO_REG_MAGIC 0x534d494fu	/* "SMIO" */
#define SIO_REG_VERSION 11
#define SIO_NONE 0xffffu		/* "no index" in u16 fields */
#define SIO_EVENT_RING 1024
#define SIO_EVENT_OBJ 48
#define SIO_EVENT_ARGS 112
#define SIO_PAGE 4096ull

/* The fixed physical address map of every node (documented in smartio(7)). */
#define SIO_RAM_BASE 0x100000000ull	/* node RAM, 4 GiB up to the BARs */
#define SIO_RAM_MAX (SIO_BAR_BASE - SIO_RAM_BASE)
#define SIO_MSI_BASE 0xfee00000ull		/* interrupt doorbells */
#define SIO_MSI_SIZE 0x100000ull
/* The MSI window in at most this many slots (sio_borrow.msi_lut_count). */
#define SIO_MSI_SLOTS_MAX 255u
#define SIO_MSI_VECTORS 4096			/* per node */
#define SIO_BAR_BASE 0x4000000000ull		/* device BARs, 256 GiB up */
#define SIO_WINDOW_BASE 0x100000000000ull	/* NTB windows, 16 TiB up */
#define SIO_WINDOW_STRIDE 0x10000000000ull	/* 1 TiB per adapter */
#define SIO_IOVA_BASE 0x100000000ull		/* IOVA space, 4 GiB .. 512 GiB */
#define SIO_IOVA_SIZE 0x7f00000000ull
/* Multicast groups: group g of the fabric at MCAST_BASE + g * STRIDE. */
#define SIO_MCAST_BASE 0x200000000000ull	/* 32 TiB up */
#define SIO_MCAST_STRIDE 0x40000000ull		/* 1 GiB: a group's most */

/*
 * The DMA window of a borrow (SmartIO sections 7.1, 7.3): what the borrow
 * asks for (SIO_A_SIZE of BORROW: a power of two from one page up, or
 * SIO_DMA_WINDOW_RAM for all of the borrower's RAM, rounded up to a power
 * of two), SIO_DMA_WINDOW_SIZE when it asks for nothing.  Only the
 * borrower's IOVA space and the lender's window and LUT space limit it.
 */
#define SIO_DMA_WINDOW_SIZE (64ull << 20)
#define SIO_DMA_WINDOW_RAM (~0ull)
/*
 * Who placed a borrow's window in the borrower's IOVA space (iova_from):
 * the core's range, the platform's IOMMU domain (dma_window_iova), or the
 * borrower (the lender's copy of what MAP_DMA_WINDOW said, separate
 * registries), which gives nothing back here.
 */
enum { SIO_IOVA_CORE, SIO_IOVA_PLAT, SIO_IOVA_PEER };

/* Requester id of a node's CPUs (host bridge 00:00.0). */
#define SIO_RID_CPU 0x0000u

enum sio_node_state { SIO_NODE_DOWN, SIO_NODE_UP };
enum sio_irq_mode { SIO_IRQ_NONE, SIO_IRQ_MSI, SIO_IRQ_MSIX };
#define SIO_DEV_IRQ_MAX 2048	/* MSI-X vectors per device (PCIe max) */
enum sio_mode { SIO_MODE_EXCLUSIVE, SIO_MODE_SHARED };
enum sio_policy { SIO_LEND_NONE, SIO_LEND_ALL, SIO_LEND_LIST };

struct sio_adapter {
	char name[SIO_TOPO_NAME];
	u8 present;
	u8 link_up;
	u16 rid;		/* the adapter's own requester id */
	u16 sw;			/* 1 + switch index it is cabled to, 0 none */
	u16 port;		/* that switch's port */
	u8 gen, width;		/* its PCIe link (topology.h) */
	u16 share;		/* entries one other node may hold, 0 any */
	u32 latency_ns;		/* its chip adds this to a transaction */
	u64 peers;		/* node mask reachable through it */
	u64 window_base;	/* in the node's physical address map */
	u64 window_size;
	u64 slot_size;		/* window_size / luts */
	struct sio_bitmap luts;	/* LUT slots = window space */
	/*
	 * Requester-id entries (SmartIO section 8.6): a table for requesters
	 * of this node whose requests leave through the adapter (its CPUs,
	 * the devices it lends) and one for requesters of other nodes whose
	 * requests arrive (their CPUs, the devices it borrows), each of the
	 * topology's size with its reserved entries taken by the CPUs.
	 */
	struct sio_bitmap reqs_out;
	struct sio_bitmap reqs_in;
};

enum sio_port_kind { SIO_PORT_FREE, SIO_PORT_ADAPTER, SIO_PORT_CASCADE };

/*
 * A switch port.  Its requester tables are counted, not addressed: the
 * core decides whether a mapping fits, the switch's firmware programs it.
 * A requester whose requests enter the switch at this port takes one
 * outgoing entry here and one incoming entry on every other cabled port
 * of the switch (SmartIO section 8.6).
 */
struct sio_swport {
	u8 kind;		/* enum sio_port_kind */
	u8 adapter;		/* ADAPTER: the adapter's index in its node */
	u16 node;		/* ADAPTER: its node */
	u16 peer_sw;		/* CASCADE: the switch (index) at the far end */
	u16 peer_port;		/* CASCADE: and its port */
	u32 out_total, out_reserved, out_used;
	u32 in_total, in_reserved, in_used;
};

struct sio_switch {
	char name[SIO_TOPO_NAME];
	u32 nports;
	u8 gen, width;		/* its ports' PCIe links (topology.h) */
	u16 latency_ns;		/* its chip adds this to a transaction */
	struct sio_swport port[SIO_MAX_SWITCH_PORTS];
};

/*
 * A multicast group (SmartIO section 6.5): a range of its switch's
 * multicast address space.  A write into it by a device mapped for the
 * group leaves the switch on the port of every member, whose adapter puts
 * it into the member's buffer through its overlay BAR: a segment of the
 * member's or a BAR of one of its devices, from offset 0 (mcast.c).
 */
enum sio_mcast_kind { SIO_MCAST_NONE, SIO_MCAST_SEG, SIO_MCAST_BAR };

struct sio_mcast_member {
	u8 kind;		/* enum sio_mcast_kind */
	u8 bar;			/* BAR: its index */
	u16 pad;
	u32 index;		/* SEG: the segment; BAR: the device */
};

#define SIO_MCAST_MAPS 8	/* devices that write into one group */

struct sio_mcast_map {
	u8 used;
	u8 pad[3];
	u32 dev;		/* the device that writes into the group */
	u64 iova;		/* its address of the group */
};

struct sio_mcast {
	char name[SIO_TOPO_NAME];
	u8 used;
	u8 pad;
	u16 sw;			/* the switch whose range holds it */
	u32 size;
	u64 writes;		/* writes into it the switch replicated */
	u64 delivered;		/* copies of them members received */
	struct sio_mcast_member member[SIO_MAX_NODES];	/* by node */
	struct sio_mcast_map map[SIO_MCAST_MAPS];
};

struct sio_node {
	char name[SIO_TOPO_NAME];
	u32 id;
	u8 present;
	u8 state;		/* enum sio_node_state */
	u16 nadapters;
	u32 generation;		/* bumps at every node-up */
	u32 refused;		/* its messages refused here (origin.c) */
	u64 heard_ns;		/* last HEARTBEAT from it (monotonic), 0 = never */
	u64 beat_seq;		/* its last heartbeat's sequence number */
	u64 ram_size;
	struct sio_adapter adapter[SIO_MAX_ADAPTERS];
	struct sio_range ram;	/* segments' physical memory */
	struct sio_range iova;	/* this node's IOMMU address space */
	struct sio_bitmap vectors;	/* MSI vectors of this node */
};

struct sio_bar {
	u64 addr;		/* lender-local physical address, 0 = absent */
	u64 size;
	u32 flags;		/* SIO_BAR_* */
	u32 pad;
};

struct sio_dev_stats {
	u64 borrows, returns, reclaims, denied;
	u64 cfg_reads, cfg_writes, dma_ops, dma_faults, msi;
	u64 driver_errors;	/* rules a driver broke, seen by the model */
};

struct sio_device {
	char name[SIO_TOPO_NAME];
	char bdf[16];
	u32 fdid;		/* fabric device id */
	u16 node;		/* lender */
	u16 rid;		/* requester id on the lender's bus */
	u8 present;
	u8 gone;		/* lender down: the device is unreachable */
	u8 mode;		/* enum sio_mode */
	u8 policy;		/* enum sio_policy */
	u32 model;
	u16 vendor, device, subsys_vendor, subsys_device;
	u32 class_code;
	u8 revision;
	u8 pad[3];
	u32 config_size;
	u64 lend_mask;		/* for SIO_LEND_LIST */
	u64 borrowers;		/* node mask */
	struct sio_bar bar[SIO_MAX_BARS];
	struct sio_dev_stats stats;
	/* Interrupt routing the core set up (msi.c): vectors irq_base ..
	 * irq_base + irq_count - 1 of node irq_node, reached at irq_addr. */
	u8 irq_mode;		/* enum sio_irq_mode */
	u8 pad3;
	u16 irq_node;
	u16 irq_base;
	u16 irq_count;		/* up to SIO_DEV_IRQ_MAX */
	u64 irq_addr;		/* the interrupt range as the device sees it */
	/* SR-IOV (sriov.c): a VF's PF, or SIO_NO_PF; a PF's VFs follow it. */
	u32 sriov_pf;
	u16 sriov_total;	/* PF: VFs it has (TotalVFs) */
	u16 sriov_num;		/* PF: VFs enabled (NumVFs) */
};

#define SIO_NO_PF 0xffffffffu

/* One node borrowing one device: everything its mappings hold. */
struct sio_borrow {
	u8 used;
	u8 b_adapter;		/* borrower's adapter reaching the lender */
	u8 l_adapter;		/* lender's adapter reaching the borrower */
	u8 l_hops;		/* switches from lender to borrower */
	u32 dev;		/* device index */
	u16 borrower;
	u16 lender;
	s32 b_req, l_req;	/* reqs_in of b_adapter, reqs_out of l_adapter */
	u32 b_lut_count;	/* borrower's LUT slots for the BARs, total */
	u32 l_window_shift;	/* log2 of the DMA window BORROW_REQ announced */
	u64 bar_local[SIO_MAX_BARS];	/* BARs in the borrower's map, 0 = none */
	u64 iova, iova_size;	/* DMA window target in borrower IOVA */
	s32 l_lut;		/* lender's LUT slots for the DMA window */
	u32 l_lut_count;
	u64 dma_addr;		/* the window as the device sees it */
	u64 msi_iova;		/* MSI window: borrower side IOVA */
	s32 msi_lut;		/* lender's first LUT slot for the MSI window */
	/*
	 * Separate registries: what this side translated inbound (borrower:
	 * SIO_INB_DMA / SIO_INB_MSI bits; lender: the BARs, by bit index,
	 * at the borrower's window addresses in bar_local).
	 */
	u8 inbound;
	u8 bar_inbound;
	u8 msi_lut_count;	/* MSI window slots (SIO_MSI_SIZE / slot size) */
	u8 dma_direct;		/* the DMA window is the direct one (dma_direct) */
	u8 iova_from;		/* SIO_IOVA_*: who placed iova */
	u64 msi_addr;		/* MSI window as the device sees it */
	struct sio_range window;	/* IOVA inside the DMA window, for segments */
	/*
	 * The switches (index) and the ports the device's requests enter
	 * them by, lender to borrower: their requester entries it holds.
	 */
	u8 route_sw[SIO_MAX_HOPS];
	u8 route_port[SIO_MAX_HOPS];
};

struct sio_segment {
	char name[SIO_TOPO_NAME];
	u8 used;
	u8 sized;
	u8 available;
	u8 pad;
	u16 owner;
	u16 creator;		/* the node whose user created it (origin.c) */
	u32 gen;		/* unique per creation: names the backing */
	u64 size;
	u64 phys;		/* in the owner's RAM */
	u64 attached;		/* node mask */
	/*
	 * The platform's name for the memory, for nodes that do not share
	 * this registry (smartio.ko over an NTB: the offset of the segment
	 * in its owner's inbound window); 0 in the simulator.
	 */
	u64 backing;
};

/*
 * A node other than the owner mapping a segment through its NTB window.
 * With separate registries the owner keeps its half too (lut -1): node is
 * the peer and local_addr the peer's window address, which the owner's
 * inbound entries translate onto the segment (SIO_INB_SEG).
 */
struct sio_attach {
	u8 used;
	u8 adapter;
	u16 node;
	u32 seg;
	s32 lut;
	u32 lut_count;
	u64 local_addr;		/* in the attaching node's physical map */
};

enum sio_segdma_kind {
	SIO_SEGDMA_LOCAL,	/* device and segment on one node: IOMMU only */
	SIO_SEGDMA_BORROW,	/* inside the DMA window of the owner's borrow */
	SIO_SEGDMA_WINDOW,	/* own LUT slots on the lender's NTB window */
	/*
	 * Separate registries (smartio.ko over an NTB): the lender's half of
	 * another node's WINDOW mapping, its LUT slots; seg is unused.
	 */
	SIO_SEGDMA_LENDER,
};

/* A segment mapped for a device (SmartIO's "available for device"). */
struct sio_segdma {
	u8 used;
	u8 kind;
	u8 adapter;		/* lender adapter (WINDOW, LENDER) */
	/*
	 * BORROW placed by the platform (window_dma_addr), which is told
	 * of its release (window_dma_release): no range or IOMMU mapping
	 * of the core's.
	 */
	u8 direct;
	u32 seg;
	u32 dev;
	s32 lut;
	u32 lut_count;
	u32 owner;		/* the segment's owner */
	u64 iova;		/* IOVA on the segment owner */
	u64 ioaddr;		/* what the device uses */
	u64 window;		/* WINDOW: the lender's window address granted */
};

/*
 * Peer-to-peer (peer.c): device `dev` reaches BAR `bar` of device `peer`
 * at ioaddr.  Same lender: an IOMMU mapping there.  Different lenders: the
 * peer's lender maps iova to the BAR for transactions from the device's
 * lender with the device's requester id, and the device's lender points
 * LUT slots of `adapter` at that iova.
 */
enum sio_peermap_kind {
	SIO_PEERMAP_MAP,	/* the mapping, on dev's lender */
	/*
	 * Separate registries (smartio.ko over an NTB): the peer's lender's
	 * half, its inbound entries for dev's lender (iova: that lender's
	 * window address) onto the BAR; and the asking node's copy of the
	 * address, so that its tree shows it.
	 */
	SIO_PEERMAP_EXPOSED,
	SIO_PEERMAP_COPY,
};

struct sio_peermap {
	u8 used;
	u8 bar;
	u8 adapter;
	u8 kind;		/* enum sio_peermap_kind */
	u16 node;		/* the node that asked: it uses both devices */
	/*
	 * Separate registries: EXPOSED, dev's lender (whose window address
	 * iova is); the asker's MAP or COPY, B's lender once it exposed the
	 * BAR (SIO_NONE before).
	 */
	u16 via;
	u32 dev;
	u32 peer;
	s32 lut;		/* -1: same lender, no LUT */
	u32 lut_count;
	u64 iova;		/* on the peer's lender */
	u64 ioaddr;		/* what dev uses */
};

struct sio_event {
	u64 seq;
	u64 time_ns;
	u32 kind;
	u32 pad;
	char object[SIO_EVENT_OBJ];
	char args[SIO_EVENT_ARGS];
};

enum sio_event_kind {
	SIO_EV_NODE_UP, SIO_EV_NODE_DOWN, SIO_EV_LEND, SIO_EV_BORROW,
	SIO_EV_RETURN, SIO_EV_RECLAIM, SIO_EV_SEGMENT_CREATE,
	SIO_EV_SEGMENT_DESTROY, SIO_EV_SEGMENT_ATTACH, SIO_EV_SEGMENT_DETACH,
	SIO_EV_DMA_FAULT, SIO_EV_LINK_UP, SIO_EV_LINK_DOWN, SIO_EV_MODE,
	SIO_EV_SEGMENT_DMA_MAP, SIO_EV_SEGMENT_DMA_UNMAP, SIO_EV_MSI,
	SIO_EV_PEER_REFUSED, SIO_EV_FAILOVER, SIO_EV_SRIOV, SIO_EV_MULTICAST,
	SIO_EV_SEGMENT_EXPORT, SIO_EV_SEGMENT_WITHDRAW,
	SIO_EV_COUNT
};

struct sio_registry {
	u32 magic;
	u32 version;
	u64 total_size;
	u32 nnodes, ndevices;
	u32 max_borrows, max_segments, max_attach, max_segdma;
	u64 event_seq;		/* last sequence number handed out */
	u32 seg_gen;
	u32 pad;
	/* byte offsets of the tables from the start of the registry */
	u64 nodes_off, devices_off, borrows_off, segments_off;
	u64 attach_off, segdma_off, events_off;
	u32 max_peermap;	/* peer-to-peer mappings (peer.c) */
	u32 pad2;
	u64 peermap_off;
	u32 nswitches;
	u32 pad3;
	u64 switches_off;
	u32 max_mcast;		/* multicast groups of all switches */
	u32 pad4;
	u64 mcast_off;
};

/*
 * The registry crosses from smartio.ko to libsmartio as bytes (REG_READ)
 * and is shared between simulator processes: its layout is an interface.
 * A change here must bump SIO_REG_VERSION (sio_registry_check refuses a
 * copy of another version) and update these sizes.
 */
#define SIO_REG_PIN(type, size)						\
	_Static_assert(sizeof(struct type) == (size),			\
		       #type " changed: bump SIO_REG_VERSION")
SIO_REG_PIN(sio_registry, 160);
SIO_REG_PIN(sio_node, 11416);
SIO_REG_PIN(sio_adapter, 1664);
SIO_REG_PIN(sio_device, 352);
SIO_REG_PIN(sio_borrow, 2240);
SIO_REG_PIN(sio_switch, 808);
SIO_REG_PIN(sio_segment, 80);
SIO_REG_PIN(sio_attach, 24);
SIO_REG_PIN(sio_segdma, 48);
SIO_REG_PIN(sio_peermap, 40);
SIO_REG_PIN(sio_event, 184);
SIO_REG_PIN(sio_mcast, 696);
_Static_assert(__builtin_offsetof(struct sio_registry, total_size) == 8 &&
	       __builtin_offsetof(struct sio_registry, nodes_off) == 56 &&
	       __builtin_offsetof(struct sio_registry, peermap_off) == 120 &&
	       __builtin_offsetof(struct sio_registry, switches_off) == 136 &&
	       __builtin_offsetof(struct sio_registry, mcast_off) == 152,
	       "sio_registry header moved: bump SIO_REG_VERSION");

struct sio_reg_limits {
	u32 max_borrows, max_segments, max_attach, max_segdma;
	u32 max_peermap;
};

/* Bytes needed for a topology; 0 if it exceeds the core's limits. */
u64 sio_registry_size(const struct sio_topology *t,
		      const struct sio_reg_limits *lim);
/*
 * Lays the registry out in mem (size bytes, zeroed by the caller) and fills
 * it from the topology: address maps, allocators, devices with their BARs.
 * Nodes start down; the platform brings them up.
 */
int sio_registry_init(void *mem, u64 size, const struct sio_topology *t,
		      const struct sio_reg_limits *lim);
int sio_registry_check(const void *mem, u64 size);

#define SIO_REG_TABLE(reg, off) ((void *)((u8 *)(reg) + (reg)->off))

/* fn(r, i): entry i of the registry's table of struct type at r->off. */
#define SIO_REG_ENTRY(fn, type, off)					\
	static inline struct type *fn(struct sio_registry *r, u32 i)	\
	{								\
		return (struct type *)SIO_REG_TABLE(r, off) + i;	\
	}

SIO_REG_ENTRY(sio_node, sio_node, nodes_off)
SIO_REG_ENTRY(sio_dev, sio_device, devices_off)
SIO_REG_ENTRY(sio_borrow_at, sio_borrow, borrows_off)
SIO_REG_ENTRY(sio_seg, sio_segment, segments_off)
SIO_REG_ENTRY(sio_attach_at, sio_attach, attach_off)
SIO_REG_ENTRY(sio_segdma_at, sio_segdma, segdma_off)
SIO_REG_ENTRY(sio_peermap_at, sio_peermap, peermap_off)
SIO_REG_ENTRY(sio_switch_at, sio_switch, switches_off)
SIO_REG_ENTRY(sio_mcast_at, sio_mcast, mcast_off)

static inline struct sio_event *sio_event_at(struct sio_registry *r, u64 seq)
{
	return (struct sio_event *)SIO_REG_TABLE(r, events_off) +
	       (seq % SIO_EVENT_RING);
}

int sio_node_lookup(struct sio_registry *r, const char *name);
int sio_dev_lookup(struct sio_registry *r, const char *name);
int sio_dev_lookup_fdid(struct sio_registry *r, u32 fdid);
int sio_node_lookup_id(struct sio_registry *r, u32 id);
int sio_seg_lookup(struct sio_registry *r, u32 owner, const char *name);
int sio_borrow_find(struct sio_registry *r, u32 dev, u32 borrower);

/* Requester id from a "dddd:bb:dd.f" address. */
u16 sio_bdf_to_rid(const char *bdf);

#endif /* SIO_REGISTRY_H */
