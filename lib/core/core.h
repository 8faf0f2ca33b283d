/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The portable smartio core: the lend/borrow/return/reclaim state machine,
 * segments, path resolution and node liveness, driven by protocol messages.
 *
 * Every entry point runs with the platform's lock held by the caller.  A
 * message is always handled "as" one node (self): the node that owns the
 * operation.  A user command arriving at the wrong node is forwarded to the
 * right one through ops->send, exactly as node-to-node messages travel.
 */
#ifndef SIO_CORE_H
#define SIO_CORE_H

#include "compat.h"
#include "registry.h"
#include "proto.h"

/*
 * What the core needs from its platform, one file of the same name in each
 * tree: lib/sim/sio_plat.c (sim_ops, the simulated fabric) and
 * kmod/sio_plat.c (smartio.ko: sio_kplat_loop_ops and sio_kplat_ntb_ops,
 * one per fabric mode).
 */
struct sio_platform_ops {
	u64 (*now_ns)(void *plat);	/* wall clock, for event times */
	/* Monotonic clock for timeouts; optional (now_ns is used if NULL). */
	u64 (*mono_ns)(void *plat);
	/*
	 * Programs LUT slot `slot` of adapter `adapter` on `node`: accesses to
	 * [slot start, slot start + len) go to target_addr on target_node and
	 * are allowed only for requester `rid` coming from `src_node` (MPIOV's
	 * source-id and address checks).
	 */
	int (*lut_set)(void *plat, u32 node, u32 adapter, u32 slot,
		       u32 target_node, u64 target_addr, u64 len,
		       u32 src_node, u16 rid);
	void (*lut_clear)(void *plat, u32 node, u32 adapter, u32 slot);
	/* IOMMU of `node`: DMA from (src_node, rid) to iova reaches phys. */
	int (*iommu_map)(void *plat, u32 node, u32 src_node, u16 rid,
			 u64 iova, u64 phys, u64 size);
	void (*iommu_unmap)(void *plat, u32 node, u32 src_node, u16 rid,
			    u64 iova);
	/* Memory behind a segment: create (size set) and release. */
	int (*seg_backing)(void *plat, u32 seg, int create);
	/*
	 * Optional: node, not the owner, maps segment seg (map 1, after its
	 * LUT slots are set) or stops mapping it (map 0, before they are
	 * cleared).  A platform whose nodes do not share memory makes the
	 * owner's memory reachable here (smartio.ko over an NTB).
	 */
	int (*seg_map)(void *plat, u32 seg, u32 node, int map);
	/* Device configuration space access on the lender. */
	int (*cfg_access)(void *plat, u32 dev, u32 off, void *buf, u32 len,
			  int write);
	/*
	 * Delivers a message from node src to node dst's core and waits for
	 * its reply.  The receiving side hands it to sio_core_dispatch_from
	 * with src as the link's far end (the transport knows it, the
	 * message only claims it).  Returns the reply length or -EHOSTDOWN /
	 * transport errors.
	 */
	int (*send)(void *plat, u32 src, u32 dst, const void *msg, u32 len,
		    void *reply, u32 cap);
	/*
	 * Device memory on the lender (BAR `bar` of dev, from its start):
	 * the core writes MSI-X table entries with it.  Optional; without it
	 * MSI-X cannot be routed (EOPNOTSUPP).
	 */
	int (*bar_access)(void *plat, u32 dev, u32 bar, u64 off, void *buf,
			  u32 len, int write);
	/* Registry state or the event ring changed: wake readers. */
	void (*notify)(void *plat);
	/*
	 * Optional: how many times notify ran, the generation REG_READ
	 * answers with (reg_read.c); 0 without it.
	 */
	u64 (*generation)(void *plat);
	/*
	 * Optional, separate registries (SIO_CORE_SEPARATE).  lend_claim: the
	 * lender takes device dev from its driver for borrower (claim 1),
	 * after every check of BORROW_REQ passed and before anything is
	 * mapped (an error refuses the borrow), or gives it back (claim 0)
	 * when the last borrower's lender half is released.  A platform that
	 * takes the device from its driver only without the core's lock
	 * (unbinding waits for the driver's work, which may need that lock)
	 * answers -EINPROGRESS: the request is refused, not counted as a
	 * denial, and the platform serves it again once the device is
	 * claimed, when every check runs anew.
	 */
	int (*lend_claim)(void *plat, u32 dev, u32 borrower, int claim);
	/*
	 * peer's window [peer_addr, peer_addr + size) (an address of one of
	 * peer's adapter windows, on a slot boundary) leads to local_addr
	 * on self, as real NTBs translate on the receiving side: kind
	 * SIO_INB_BAR, a BAR of self's device dev (its registry address);
	 * SIO_INB_DMA, the DMA window (b->iova) of self's borrow of dev;
	 * SIO_INB_MSI, SIO_MSI_BASE; SIO_INB_SEG, self's segment (its
	 * s->phys) for a device of peer (dev) it was mapped for.  Unmapped
	 * with the same peer_addr.
	 */
	int (*inbound_map)(void *plat, u32 self, u32 peer, u32 kind, u32 dev,
			   u64 peer_addr, u64 local_addr, u64 size);
	void (*inbound_unmap)(void *plat, u32 self, u32 peer, u32 kind,
			      u32 dev, u64 peer_addr, u64 size);
	/*
	 * Optional.  dev_addr: the address a device of node uses for
	 * address addr of node's adapter window, when its IOMMU maps the
	 * window elsewhere than the core's address map (smartio.ko); the
	 * window address itself without it.  window_dma_addr: the device
	 * address at which self's borrow of dev reaches self's memory
	 * [phys, phys + size) (a segment of self mapped for dev), for a
	 * platform that places it in the borrow's DMA window itself: address
	 * arithmetic where the window leads to all of the borrower's RAM, or
	 * a range of the window it maps onto that memory; without it the
	 * core places a range of the window and maps it in self's IOMMU.  An
	 * error leaves nothing placed.  window_dma_release (optional): the
	 * core no longer uses what window_dma_addr gave for [phys, phys +
	 * size) of dev (the segment's unmap for dev, the borrow's end, the
	 * loss of dev's node); called once per successful window_dma_addr,
	 * while the borrow's record may already be gone.  The platform
	 * unmaps what it mapped before it returns, so the device reaches
	 * the memory no more.
	 */
	u64 (*dev_addr)(void *plat, u32 node, u64 addr);
	int (*window_dma_addr)(void *plat, u32 self, u32 dev, u64 phys,
			       u64 size, u64 *ioaddr);
	void (*window_dma_release)(void *plat, u32 self, u32 dev, u64 phys,
				   u64 size, u64 ioaddr);
	/*
	 * Optional: MSI-X table entry `index` of device dev written as
	 * borrower `node` asks (SIO_CMD_MSIX_ENTRY: 16 bytes, little
	 * endian), once the core checked that the device's vectors are
	 * routed to that node; index SIO_MSI_ENTRY: the address and data
	 * of the MSI capability, when MSI is routed to it (the vector
	 * control word is ignored then).  The platform refuses (-EACCES,
	 * counted) an address outside that node's MSI window as the device
	 * sees it.  With SIO_CORE_SEPARATE the borrower's own messages are
	 * the only ones its device sends: the core neither programs MSI
	 * addresses for a borrower nor passes the borrower's config writes
	 * of them (msi.c).
	 */
	int (*msix_write)(void *plat, u32 dev, u32 node, u32 index,
			  const u8 *entry);
	/*
	 * Optional: a direct window for DMA windows, on hardware whose
	 * look-up-table entries are too small to cover a borrower's RAM
	 * (Switchtec: 64 KiB entries) but which has a window of one
	 * translation per peer.  dma_direct: its size on node's adapter 0
	 * (a power of two; 0: none, DMA windows take slots); it lies right
	 * after the adapter's slots, at window_base + window_size, and
	 * carries one DMA window toward each peer.  dma_direct_map: the
	 * lender's half (self lends, rid is the lent device), mapping or
	 * unmapping the device's path to [addr, addr + size) of it toward
	 * borrower; the borrower translates it with inbound_map SIO_INB_DMA.
	 */
	u64 (*dma_direct)(void *plat, u32 node);
	int (*dma_direct_map)(void *plat, u32 self, u32 borrower, u16 rid,
			      u64 addr, u64 size, int map);
	/*
	 * Optional: the lender refused node's borrow of dev for a reason
	 * its errno alone does not tell an operator (EBUSY: the direct
	 * window toward node is taken); the platform logs why.
	 */
	void (*refused)(void *plat, u32 dev, u32 node, const char *why);
	/*
	 * Optional: the lender's own PCI core enables the first num VFs of
	 * its PF pf (num > 0, none enabled before) or disables them all
	 * (0), as Linux's sriov_numvfs does, and fills in the VFs' records
	 * (bdf, requester id, ids, BARs) before the core marks them
	 * present; an error leaves everything as it was.  -EINPROGRESS, as
	 * lend_claim's: the platform changes the VFs without the core's
	 * lock, then asks again.  Without it the
	 * core writes NumVFs and VF Enable into the capability itself (the
	 * simulator), or answers EOPNOTSUPP when the registries are
	 * separate.
	 */
	int (*sriov_set)(void *plat, u32 pf, u16 num);
	/*
	 * Optional: the IOVA at which self's borrow of dev has its DMA
	 * window of size bytes, for a platform whose IOMMU domain decides
	 * it (smartio.ko reserves the range in its NTB function's domain,
	 * or answers 0 when that domain is identity); -EOPNOTSUPP lets the
	 * core place it in its own IOVA space.  dma_window_free gives back
	 * what dma_window_iova reserved.
	 */
	int (*dma_window_iova)(void *plat, u32 self, u32 dev, u64 size,
			       u64 *iova);
	void (*dma_window_free)(void *plat, u32 self, u32 dev, u64 iova,
				u64 size);
};

/* SIO_CMD_MSIX_ENTRY's index for the MSI capability's one message. */
#define SIO_MSI_ENTRY 0xffffffffu

#define SIO_INB_BAR 1u
#define SIO_INB_DMA 2u
#define SIO_INB_MSI 3u
#define SIO_INB_SEG 4u

/*
 * sio_core.flags.  SEPARATE: the nodes are separate machines (smartio.ko
 * over an NTB), so a user's command another node forwards here comes from
 * a user of that machine, who acts only for that node (origin.c).  Without
 * it (the simulator: one machine, one registry) who may act for which
 * node is decided where the user's command enters (smartiofs).
 */
#define SIO_CORE_SEPARATE 0x1u

/* peer-refused events of one sender node in the current interval. */
struct sio_refused_rate {
	u64 start_ns;
	u32 events;
	u32 quiet;	/* refusals not reported since */
};

struct sio_core {
	struct sio_registry *reg;
	const struct sio_platform_ops *ops;
	void *plat;
	u32 flags;
	/* origin.c: peer-refused events are rate-limited per sender. */
	struct sio_refused_rate refused_rate[SIO_MAX_NODES];
};

/*
 * Handles one message (user command or node-to-node) as node self and
 * writes the reply (SIO_CMD_REPLY with SIO_A_ERRNO) into reply.  Returns
 * the reply length, or a negative errno when the request cannot even be
 * answered (unparseable, reply buffer too small).
 */
int sio_core_dispatch(struct sio_core *c, u32 self, const void *req, u32 len,
		      void *reply, u32 cap);

/*
 * The same for a message that arrived from node `from` (the other end of
 * the link it came on, as the transport knows it; from == self is a local
 * command).  Everything the message says about who sends it (SRC, and
 * the node a command acts for: the borrower of BORROW_REQ, the lender of a
 * RECLAIM_REQ's device, the owner of a SEG_TABLE...) must be `from`, and a
 * peer acts only within its share of this node (origin.c): otherwise the
 * answer is -EPERM, nothing changes, the refusal is counted in from's
 * node record (refused) and reported as a peer-refused event.
 */
int sio_core_dispatch_from(struct sio_core *c, u32 self, u32 from,
			   const void *req, u32 len, void *reply, u32 cap);

/*
 * After a process died holding the simulated fabric's lock (repair.c):
 * makes LUT and requester allocations and segment attach masks match the
 * records again.  Returns how many entries it corrected.
 */
u32 sio_core_repair(struct sio_core *c);

/*
 * Registries that are not shared (one per kernel, nodes joined by NTBs):
 * each node owns the records of its own segments and sends them to the
 * others as SEG_TABLE, which replaces the receiver's records of that
 * owner's segments (their attachments there go with a record that goes).
 * sio_core_seg_table builds self's table for dst into buf and returns its
 * length or a negative errno; sio_core_seg_forget drops every record of
 * owner's segments (the platform calls it when owner is lost).
 */
int sio_core_seg_table(struct sio_core *c, u32 self, u32 dst, void *buf,
		       u32 cap);
void sio_core_seg_forget(struct sio_core *c, u32 self, u32 owner);

/*
 * The same for devices (dev_table.c): self's own devices as a DEV_TABLE
 * message for dst (its length or a negative errno), which replaces the
 * receiver's copies of self's device slots; sio_core_dev_forget makes
 * owner's copies absent (the platform calls it when owner is lost).
 */
int sio_core_dev_table(struct sio_core *c, u32 self, u32 dst, void *buf,
		       u32 cap);
void sio_core_dev_forget(struct sio_core *c, u32 self, u32 owner);

/*
 * Every refusal a borrow of device dev (registry index) by node self would
 * meet, checked without changing state: the device and both nodes up, not
 * the lender's own, not borrowed by self yet, a path both ways, the lend
 * policy and mode, and room for every allocation on the path (requester
 * entries, IOVA range, window slots for the BARs, the DMA and MSI
 * windows).  Returns 0 or the errno the borrow would answer; a refusal by
 * policy, mode or space counts as denied.  A platform that prepares the
 * device before the borrow (smartio.ko unbinds it from its driver) calls
 * this first, under the same lock, so a refused borrow never touches the
 * device; the borrow itself still checks everything.
 */
int sio_core_borrow_check(struct sio_core *c, u32 self, u32 dev);

/*
 * A link goes down or up (failover.c, SmartIO section 6.3): adapter
 * `adapter` of node.  On a loss every borrow whose path used it is moved
 * onto another path (a failover event per borrow), or, with no path left,
 * released as if its lender were lost (a reclaim event): borrowers then see
 * EHOSTDOWN.  Returns 0, -ENOENT / -ENODEV for a node / adapter that does
 * not exist; a link already in that state changes nothing.
 */
/* A link goes down or up (failover.c, the simulator's; not in smartio.ko). */
int sio_core_link_set(struct sio_core *c, u32 node, u32 adapter, int up);

/* Liveness transitions, decided by the platform's failure detector. */
void sio_core_node_up(struct sio_core *c, u32 node);
void sio_core_node_down(struct sio_core *c, u32 node);

/*
 * Heartbeats (heartbeat_send.c, the simulator's; not in smartio.ko):
 * sends one from self to dst; declares down every node self has heard
 * from before but not within timeout_ns, returning how many.  Nodes never
 * heard from are left to the platform.
 */
int sio_core_heartbeat(struct sio_core *c, u32 self, u32 dst, u64 seq);
u32 sio_core_check_heartbeats(struct sio_core *c, u32 self, u64 timeout_ns);

/* The platform reports a blocked DMA (no mapping or requester not allowed). */
void sio_core_dma_fault(struct sio_core *c, u32 node, u16 rid, u64 addr,
			const char *why);

/*
 * The LUT walk (lut_walk.c) of an access [addr, addr + len) entering
 * adapter ad's window: slot() is asked about each slot it crosses, with
 * the part of the access in it (offset and length within the slot); it
 * says where the slot leads (target node and the address of the slot's
 * start there) and returns 0, or a negative errno that ends the walk.
 * 0 with the far side's node and address of addr; -ERANGE when the access
 * is not all inside the window (an empty access asks about addr's slot); -EXDEV when the slots do not lead on
 * contiguously to one node; else what slot() returned.
 */
struct sio_lut_view {
	u32 target_node;
	u64 target_addr;
};
typedef int (*sio_lut_slot_fn)(void *ctx, u32 index, u64 off, u64 len,
			       struct sio_lut_view *v);
int sio_lut_walk(const struct sio_adapter *ad, u64 addr, u64 len,
		 sio_lut_slot_fn slot, void *ctx, u32 *tnode, u64 *taddr);

/*
 * Path resolution (path.c): the best adapter of `from` that reaches `to`
 * (fewest switches, then most free LUT entries), -EHOSTUNREACH when the
 * topology does not connect them, -EHOSTDOWN when every path's link is down.
 */
int sio_path_find(struct sio_registry *r, u32 from, u32 to);

/* A path through switches: each switch and the port it is entered by. */
struct sio_route {
	u32 hops;		/* switches on the path, 0 for a direct cable */
	u8 sw[SIO_MAX_HOPS];
	u8 in_port[SIO_MAX_HOPS];
};

/* The shortest path from `from` over its adapter to `to`. */
int sio_path_route(struct sio_registry *r, u32 from, u32 adapter, u32 to,
		   struct sio_route *rt);
/* Its hop count (switches), or -EHOSTUNREACH. */
int sio_path_hops(struct sio_registry *r, u32 from, u32 adapter, u32 to);
/*
 * The adapter by which node reaches multicast switch sw: one cabled to sw
 * or to a switch cascaded with it (whose link is up when up is set), or
 * -1 (lib/core/mcast.c).
 */
int sio_mcast_adapter(struct sio_registry *r, u32 node, u32 sw, int up);
/*
 * The switches cascaded with sw, sw included, as a mask; and the adapter
 * of node cabled to one of them, as sio_mcast_adapter: a writer that asks
 * for many nodes finds the mask once.
 */
u32 sio_switch_fabric(struct sio_registry *r, u32 sw);
int sio_fabric_adapter(struct sio_registry *r, u32 node, u32 fabric, int up);
/*
 * The speed of that path (SmartIO sections 7.1.3 and 7.1.5): the payload
 * rate of its slowest link (the two adapters' and each switch's) and the
 * latency its chips add to a transaction one way; far_adapter is the
 * adapter of `to` it ends at, -1 when the topology describes only this
 * end of a direct cable.
 */
struct sio_path_speed {
	u64 rate;		/* bytes per second */
	u32 latency_ns;
	u32 hops;
	int far_adapter;
};
int sio_path_speed(struct sio_registry *r, u32 from, u32 adapter, u32 to,
		   struct sio_path_speed *ps);
/*
 * sio_path_speed to each of to[0..n) (n <= SIO_MAX_NODES) over one search
 * of the switches; bit i of the result is set where ps[i] holds a path.
 */
u64 sio_path_speed_many(struct sio_registry *r, u32 from, u32 adapter,
			const u32 *to, u32 n, struct sio_path_speed *ps);
/* Whether a requester's entries on the route's switches fit (-ENOSPC). */
int sio_route_fits(struct sio_registry *r, const struct sio_route *rt);
void sio_route_account(struct sio_registry *r, const struct sio_route *rt,
		       int take);

/* Appends an event to the ring; args is "key=value ..." or "". */
void sio_event_emit(struct sio_core *c, u32 kind, const char *object,
		    const char *args);
const char *sio_event_kind_name(u32 kind);
/*
 * The same with the object built as prefix + name [+ "." + sub] and args
 * as "key=val" (none when key is NULL): "dev/nvme0", "seg/host1.buf".
 */
void sio_event_about(struct sio_core *c, u32 kind, const char *prefix,
		     const char *name, const char *sub, const char *key,
		     const char *val);

/* Small formatting helpers (no libc in the core). */
struct sio_strbuf {
	char *buf;
	u32 cap;
	u32 len;
};
void sio_sb_init(struct sio_strbuf *sb, char *buf, u32 cap);
void sio_sb_str(struct sio_strbuf *sb, const char *s);
void sio_sb_u64(struct sio_strbuf *sb, u64 v);
void sio_sb_hex(struct sio_strbuf *sb, u64 v);

/* Building a command for sio_core_dispatch (used by libsmartio too). */
int sio_core_call(struct sio_core *c, u32 self, u32 dst, struct sio_msg *m,
		  struct sio_parsed *rep, void *repbuf, u32 repcap);

#endif /* SIO_CORE_H */
