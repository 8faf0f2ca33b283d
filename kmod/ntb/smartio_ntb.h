/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smartio_ntb: the node-to-node message transport that smartio's kernel
 * core uses over any NTB on the mainline framework (include/linux/ntb.h).
 *
 * One struct sio_ntb_peer per ntb_dev (per peer).  The transport finds the
 * peer's node id over the link (scratchpads), carries request/reply
 * messages through the memory windows with doorbells as notifications, and
 * reports the peer up and down (link down, powered off, rebooted: a
 * rebooted peer is a down, then an up with a new generation).
 *
 * It matches what the core asks of its platform: sio_platform_ops.send is
 * sio_ntb_call() to the peer that reaches dst, sio_core_node_up/down follow
 * peer_up/peer_down, and ops->request is sio_core_dispatch().
 *
 * smartio.ko reaches the functions below only through the table at the
 * end, struct sio_ntb_fabric_ops, which smartio_ntb registers on the
 * auxiliary bus (smartio_ntb_fabric.c): nothing here is exported, and
 * smartio.ko loads without this module in its default loopback mode.
 */
#ifndef SMARTIO_NTB_H
#define SMARTIO_NTB_H

#include <linux/auxiliary_bus.h>
#include <linux/types.h>

#define SIO_NTB_MSG_MAX		8192	/* = SIO_MSG_MAX of lib/core/proto.h */

struct sio_ntb_peer;

/*
 * Callbacks run in process context and may call sio_ntb_call(), but not
 * sio_ntb_attach() or sio_ntb_detach().
 */
struct sio_ntb_ops {
	/* The peer is reachable: its node id and the generation of its load. */
	void (*peer_up)(void *ctx, struct sio_ntb_peer *p, u32 node, u32 gen);
	/* The peer went away; calls in flight have failed with -EHOSTDOWN. */
	void (*peer_down)(void *ctx, struct sio_ntb_peer *p, u32 node);
	/*
	 * A request from the peer (process context, one at a time per peer):
	 * write the reply into reply (cap bytes), return its length or -errno
	 * (the caller then gets that errno).
	 */
	int (*request)(void *ctx, struct sio_ntb_peer *p, const void *msg,
		       u32 len, void *reply, u32 cap);
};

/*
 * Takes over the transport as node self_node with ops (the built-in echo
 * service answers until then).  Peers already up are reported through
 * peer_up at once.  -EBUSY when another user holds it.  Attach and detach
 * start a new generation: the peers see this side go down and come up
 * again as self_node (as node= after a detach).
 */
int sio_ntb_attach(u32 self_node, const struct sio_ntb_ops *ops, void *ctx);
void sio_ntb_detach(void);

/*
 * Sends msg to the peer and waits up to timeout_ms for its reply.  Returns
 * the reply length, or -EHOSTDOWN (peer not up, or went down meanwhile),
 * -ETIMEDOUT, -EMSGSIZE, or the errno the peer's request() returned.
 * Process context; calls to one peer are serialized.  Do not wait here
 * holding a lock that this node's request() needs: a peer calling us at
 * the same time would wait for it until the timeout (see README).
 */
int sio_ntb_call(struct sio_ntb_peer *p, const void *msg, u32 len,
		 void *reply, u32 cap, unsigned int timeout_ms);

/* The switch port the peer sits behind (ntb_peer_port_number()). */
int sio_ntb_peer_port(struct sio_ntb_peer *p);

/*
 * Segments: memory of this node that the peer reaches through its
 * outbound window.  sio_ntb_seg_alloc() returns zeroed memory inside our
 * inbound window and its offset there (page granular; NULL when the
 * window is full); the owner tells the peer the offset (a message), the
 * peer reaches it with sio_ntb_peer_seg(), which also gives the physical
 * address for mapping it to user space.  NULL there when the peer is not
 * up or the range is not inside its window.  The peer's writes arrive
 * without any software on this side; a segment stays valid across peer
 * down and up until freed.
 */
void *sio_ntb_seg_alloc(struct sio_ntb_peer *p, size_t size, u64 *off);
void sio_ntb_seg_free(struct sio_ntb_peer *p, void *va, size_t size);
/* The physical address of segment memory va, to map it to user space. */
phys_addr_t sio_ntb_seg_phys(struct sio_ntb_peer *p, void *va);
/*
 * Where this NTB function's DMA reaches segment memory va: what an inbound
 * translation leads to (an IOVA of its domain when its IOMMU translates).
 */
dma_addr_t sio_ntb_seg_dma(struct sio_ntb_peer *p, void *va);
void __iomem *sio_ntb_peer_seg(struct sio_ntb_peer *p, u64 off, size_t size,
			       phys_addr_t *phys);

/*
 * Single look-up-table entries (NTBs that translate one entry at a time:
 * ntb_sioswitch lut_mws=1), numbered 0 .. count - 1 per peer, for the
 * kernel core's device lending.  sio_ntb_lut_geometry(): how many and
 * their size on the first NTB device (0: none).  sio_ntb_lut_set(): what
 * peer p accesses at entry `entry` of its window to us reaches bus
 * address addr here (page aligned; our RAM or MMIO such as a BAR or the
 * interrupt range), size at most the entry's; -EINVAL otherwise.
 * sio_ntb_lut_peer_addr(): where this machine's CPU and devices reach
 * entry `entry` of our window to p (whatever p translated it to), 0 when
 * there is none.
 */
u32 sio_ntb_lut_geometry(u64 *ent_size);
int sio_ntb_lut_set(struct sio_ntb_peer *p, u32 entry, u64 addr, u64 size);
void sio_ntb_lut_clear(struct sio_ntb_peer *p, u32 entry);
phys_addr_t sio_ntb_lut_peer_addr(struct sio_ntb_peer *p, u32 entry);

/*
 * sio_ntb_lut_align(): the address alignment of what one entry translates
 * toward p (PAGE_SIZE, or the entry's size on Switchtec's 64 KiB LUT
 * windows, which translate naturally aligned blocks): sio_ntb_lut_set()
 * refuses an address not aligned to it, and a peer reaches address addr
 * at sio_ntb_lut_peer_addr() + addr % align.  Segments are allocated at
 * this alignment, so an entry exposes no other segment.
 */
u64 sio_ntb_lut_align(struct sio_ntb_peer *p);

/*
 * The direct window (hardware with single entries too small to cover a
 * machine's RAM: Switchtec's 64 KiB LUT entries).  Memory window 1, which
 * the segment heap leaves untranslated when single entries exist, has one
 * translation per peer of a naturally aligned power of two: smartio.ko
 * puts a borrower's DMA window there.  sio_ntb_direct_geometry(): its size
 * (0: none, or the heap uses it); sio_ntb_direct_set(): what p accesses
 * there reaches [addr, addr + size) here; sio_ntb_direct_peer_addr():
 * where this machine reaches its window to p.
 */
u64 sio_ntb_direct_geometry(void);
int sio_ntb_direct_set(struct sio_ntb_peer *p, u64 addr, u64 size);
void sio_ntb_direct_clear(struct sio_ntb_peer *p);
phys_addr_t sio_ntb_direct_peer_addr(struct sio_ntb_peer *p);

/*
 * The requester-id hook (smartio_ntb_rid.c): allow (or no longer allow)
 * requester id rid of this machine to send through the NTB to peer p, on
 * hardware that keeps a table of them (Switchtec: the partition's
 * requester-id table, written with the driver's LOCK/CFG handshake, since
 * include/linux/ntb.h has no operation for it).  smartio.ko calls it for a
 * device it lends and each of that device's DMA aliases while the device
 * is lent.  0 on hardware without such a table; -ENOSPC when the table is
 * full; -EIO when the switch refused the configuration; -EPERM for the
 * entries the hardware driver set at probe.  Process context (it sleeps).
 */
int sio_ntb_rid_allow(struct sio_ntb_peer *p, u16 rid, bool allow);

/*
 * The PCI function of the first NTB device: what the peers' writes into
 * this machine come from (their requester id), so that an interrupt a
 * peer's device sends through a window is remapped as this function's.
 */
struct pci_dev *sio_ntb_pci_dev(void);

/*
 * The fabric: everything above that smartio.ko calls, one table, offered
 * as auxiliary device "smartio_ntb.fabric.0" for as long as this module
 * is loaded.  smartio.ko (fabric=ntb) binds a driver to it at load and
 * pins owner while it uses the table, so that this module cannot be
 * unloaded under it; without the device it refuses to load.
 */
struct sio_ntb_fabric_ops {
	struct module *owner;
	typeof(sio_ntb_attach) *attach;
	typeof(sio_ntb_detach) *detach;
	typeof(sio_ntb_call) *call;
	typeof(sio_ntb_peer_port) *peer_port;
	typeof(sio_ntb_seg_alloc) *seg_alloc;
	typeof(sio_ntb_seg_free) *seg_free;
	typeof(sio_ntb_seg_phys) *seg_phys;
	typeof(sio_ntb_seg_dma) *seg_dma;
	typeof(sio_ntb_peer_seg) *peer_seg;
	typeof(sio_ntb_lut_geometry) *lut_geometry;
	typeof(sio_ntb_lut_set) *lut_set;
	typeof(sio_ntb_lut_clear) *lut_clear;
	typeof(sio_ntb_lut_peer_addr) *lut_peer_addr;
	typeof(sio_ntb_lut_align) *lut_align;
	typeof(sio_ntb_direct_geometry) *direct_geometry;
	typeof(sio_ntb_direct_set) *direct_set;
	typeof(sio_ntb_direct_clear) *direct_clear;
	typeof(sio_ntb_direct_peer_addr) *direct_peer_addr;
	typeof(sio_ntb_rid_allow) *rid_allow;
	typeof(sio_ntb_pci_dev) *pci_dev;
};

/* The auxiliary device: "<module>.<name>" is what a driver matches. */
#define SIO_NTB_FABRIC_NAME	"fabric"
#define SIO_NTB_FABRIC_MATCH	"smartio_ntb." SIO_NTB_FABRIC_NAME

struct sio_ntb_fabric {
	struct auxiliary_device adev;
	const struct sio_ntb_fabric_ops *ops;
};

static inline struct sio_ntb_fabric *
sio_ntb_fabric_of(struct auxiliary_device *adev)
{
	return container_of(adev, struct sio_ntb_fabric, adev);
}

#endif
