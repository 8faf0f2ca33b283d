/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Shared between the core's own files only. */
#ifndef SIO_CORE_INT_H
#define SIO_CORE_INT_H

#include "core.h"
#include "cmds.h"

#define SIO_PEER_MSG 512	/* node-to-node messages without data */

typedef int (*sio_handler)(struct sio_core *c, u32 self,
			   const struct sio_parsed *p, struct sio_msg *rep);

/* A command's row of cmds.h, as the core uses it (dispatch.c). */
struct sio_cmd_row {
	sio_handler handler;
	u8 route;		/* enum sio_cmd_route */
	u8 origin;		/* enum sio_origin */
	u32 required;		/* SIO_ATTR_BIT mask */
	u32 optional;
};

/* The row of cmd, or NULL for 0 and numbers past SIO_CMD_MAX. */
const struct sio_cmd_row *sio_cmd_row(u8 cmd);

static inline int sio_node_up(struct sio_registry *r, u32 n)
{
	return n < r->nnodes && sio_node(r, n)->state == SIO_NODE_UP;
}

/*
 * Index of the first unused entry of a registry table (every entry type has
 * a `used` byte), or -ENOSPC.
 */
static inline int sio_free_entry(const u8 *used0, u32 stride, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++)
		if (!used0[(u64)i * stride])
			return (int)i;
	return -ENOSPC;
}
#define SIO_FREE_ENTRY(r, at, max) \
	sio_free_entry(&at((r), 0)->used, sizeof(*at((r), 0)), (r)->max)

/*
 * A new record: the first unused entry of a registry table, zeroed and
 * marked used; its index, or -ENOSPC.  Whoever fails to fill it clears
 * its used byte again.
 */
static inline int sio_claim_entry(u8 *first, u32 stride, u32 used_off,
				  u32 count)
{
	int i = sio_free_entry(first + used_off, stride, count);

	if (i >= 0) {
		sio_memset(first + (u64)i * stride, 0, stride);
		first[(u64)i * stride + used_off] = 1;
	}
	return i;
}
#define SIO_CLAIM_ENTRY(r, at, max)					\
	sio_claim_entry((u8 *)at((r), 0), sizeof(*at((r), 0)),		\
			(u32)(&at((r), 0)->used - (u8 *)at((r), 0)),	\
			(r)->max)

/* The same for callers that keep the record, not its index: NULL if full. */
static inline void *sio_claim_record(u8 *first, u32 stride, u32 used_off,
				     u32 count)
{
	int i = sio_claim_entry(first, stride, used_off, count);

	return i < 0 ? NULL : first + (u64)i * stride;
}
#define SIO_CLAIM_RECORD(r, at, max)					\
	sio_claim_record((u8 *)at((r), 0), sizeof(*at((r), 0)),		\
			 (u32)(&at((r), 0)->used - (u8 *)at((r), 0)),	\
			 (r)->max)

/* Allocates count LUT slots on (node, adapter) and points them at target. */
int sio_lut_map(struct sio_core *c, u32 node, u32 adapter, u64 len,
		u32 target_node, u64 target_addr, u32 src_node, u16 rid,
		u32 *count_out);
void sio_lut_unmap(struct sio_core *c, u32 node, u32 adapter, s32 first,
		   u32 count);

/* Device index from the SIO_A_DEV attribute; -ENXIO when unknown. */
int sio_msg_dev(struct sio_registry *r, const struct sio_parsed *p);
int sio_msg_node(struct sio_registry *r, const struct sio_parsed *p, int attr);

/*
 * Messages from another node (origin.c): 0 when everything p claims about
 * its origin is `from`, else -EPERM; a refusal is counted and reported
 * with sio_peer_refused.  sio_peer_seg_room: 0 when peer may take one more
 * of this node's segment records (own == SIO_NONE), or hold own records of
 * its own segments (its table), else -EDQUOT.
 */
int sio_origin_check(struct sio_core *c, u32 self, u32 from,
		     const struct sio_parsed *p);
void sio_peer_refused(struct sio_core *c, u32 from, u8 cmd);
int sio_peer_seg_room(struct sio_registry *r, u32 self, u32 peer, u32 own);

/*
 * A registry every node shares (the simulator) gives each node an equal
 * share of its record tables, as origin.c gives a peer of smartio.ko:
 * otherwise one node's users could take every record and leave the other
 * nodes none (issue 28, item 8).  sio_share_room: 0 when node may take
 * one more record of table t, else -EDQUOT; always 0 with separate
 * registries, where a machine's tables are its own.
 */
enum sio_share_table {
	SIO_SHARE_SEGMENTS,	/* charged to the owner, whose memory it is */
	SIO_SHARE_ATTACH,	/* the attaching node */
	SIO_SHARE_BORROWS,	/* the borrower */
	SIO_SHARE_SEGDMA,	/* the segment's owner, who maps it */
	SIO_SHARE_PEERMAP,	/* the node that asked */
};
int sio_share_room(struct sio_core *c, enum sio_share_table t, u32 node);

/* Handlers, by file. */
int sio_h_reg_read(struct sio_core *c, u32 self, const struct sio_parsed *p,
		   struct sio_msg *rep);
int sio_h_mcast(struct sio_core *c, u32 self, const struct sio_parsed *p,
		struct sio_msg *rep);
int sio_mcast_holds_seg(struct sio_registry *r, u32 seg);
u64 sio_mcast_addr(u32 group);
int sio_name_ok(const char *s);
int sio_h_sriov(struct sio_core *c, u32 self, const struct sio_parsed *p,
		struct sio_msg *rep);
int sio_h_lend(struct sio_core *c, u32 self, const struct sio_parsed *p,
	       struct sio_msg *rep);
int sio_h_set_mode(struct sio_core *c, u32 self, const struct sio_parsed *p,
		   struct sio_msg *rep);
int sio_h_borrow(struct sio_core *c, u32 self, const struct sio_parsed *p,
		 struct sio_msg *rep);
int sio_h_return(struct sio_core *c, u32 self, const struct sio_parsed *p,
		 struct sio_msg *rep);
int sio_h_reclaim(struct sio_core *c, u32 self, const struct sio_parsed *p,
		  struct sio_msg *rep);
int sio_h_borrow_req(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     struct sio_msg *rep);
int sio_h_map_window(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     struct sio_msg *rep);
int sio_h_return_req(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     struct sio_msg *rep);
int sio_h_reclaim_req(struct sio_core *c, u32 self, const struct sio_parsed *p,
		      struct sio_msg *rep);
int sio_h_cfg(struct sio_core *c, u32 self, const struct sio_parsed *p,
	      struct sio_msg *rep);
int sio_h_msix_entry(struct sio_core *c, u32 self,
		     const struct sio_parsed *p, struct sio_msg *rep);
int sio_h_seg(struct sio_core *c, u32 self, const struct sio_parsed *p,
	      struct sio_msg *rep);

/* Segments, split by concern (segment.c, seg_attach.c, seg_dma.c). */
void sio_seg_event(struct sio_core *c, u32 kind, u32 seg, const char *key,
		   const char *val);
int sio_attach_find(struct sio_registry *r, u32 seg, u32 node);
/* Drops node's attachment aidx: platform mapping, LUT slots, record. */
void sio_attach_release(struct sio_core *c, u32 aidx);
int sio_segdma_find(struct sio_registry *r, u32 seg, u32 dev);
int sio_seg_attach(struct sio_core *c, u32 self, u32 seg, struct sio_msg *rep);
int sio_seg_detach(struct sio_core *c, u32 self, u32 seg);
int sio_seg_dma_map(struct sio_core *c, u32 self, u32 seg, u32 dev,
		    struct sio_msg *rep);
int sio_seg_dma_unmap(struct sio_core *c, u32 self, u32 seg, u32 dev);
void sio_attach_node_down(struct sio_core *c, u32 node);
/* Attachments cut off by a link going down move or end (failover.c). */
void sio_attach_link_lost(struct sio_core *c);
void sio_segdma_node_down(struct sio_core *c, u32 node);
int sio_h_seg_table(struct sio_core *c, u32 self, const struct sio_parsed *p,
		    struct sio_msg *rep);
int sio_h_seg_table_get(struct sio_core *c, u32 self,
			const struct sio_parsed *p, struct sio_msg *rep);
/* Device tables (dev_table.c) and the lender's BAR windows (lend.c). */
int sio_h_dev_table(struct sio_core *c, u32 self, const struct sio_parsed *p,
		    struct sio_msg *rep);
int sio_h_map_bar_window(struct sio_core *c, u32 self,
			 const struct sio_parsed *p, struct sio_msg *rep);
int sio_h_seg_connect(struct sio_core *c, u32 self, const struct sio_parsed *p,
		      struct sio_msg *rep);
int sio_h_seg_window(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     struct sio_msg *rep);
int sio_h_heartbeat(struct sio_core *c, u32 self, const struct sio_parsed *p,
		    struct sio_msg *rep);
/* The platform's monotonic clock, its wall clock where it has none. */
static inline u64 sio_core_mono_ns(struct sio_core *c)
{
	return c->ops->mono_ns ? c->ops->mono_ns(c->plat) :
				 c->ops->now_ns(c->plat);
}
int sio_h_event(struct sio_core *c, u32 self, const struct sio_parsed *p,
		struct sio_msg *rep);

/* Tear-downs shared by return, reclaim and node loss. */
void sio_borrow_release(struct sio_core *c, u32 bidx, int lender_side,
			int borrower_side);
void sio_segments_node_down(struct sio_core *c, u32 node);
void sio_segdma_release_dev(struct sio_core *c, u32 dev, u32 borrower);

/* Interrupt routing (msi.c): config writes and reads by node asker. */
int sio_msi_cfg_write(struct sio_core *c, u32 dev, u32 asker, u32 off,
		      const u8 *src, u32 len);
void sio_msi_cfg_read(struct sio_core *c, u32 dev, u32 asker, u32 off,
		      u8 *data, u32 len);
/* Drops dev's routing to node (its borrow ends); node loss. */
void sio_msi_release(struct sio_core *c, u32 dev, u32 node);
void sio_msi_node_down(struct sio_core *c, u32 node);

/* Peer-to-peer (peer.c). */
int sio_h_peer(struct sio_core *c, u32 self, const struct sio_parsed *p,
	       struct sio_msg *rep);
int sio_h_peer_expose(struct sio_core *c, u32 self, const struct sio_parsed *p,
		      struct sio_msg *rep);
/* node stops using dev (return, reclaim): its peer mappings of dev go. */
void sio_peer_release(struct sio_core *c, u32 dev, u32 node);
void sio_peer_node_down(struct sio_core *c, u32 node);
/* One node's share of another's look-up table (lut_share.c). */
u32 sio_lut_held(struct sio_core *c, u32 node, u32 adapter, u32 who);
int sio_lut_share_ok(struct sio_core *c, u32 node, u32 adapter, u32 who,
		     u32 count);
u32 sio_lut_slots(struct sio_core *c, u32 node, u32 adapter, u64 len);
/* Separate registries (peer_sep.c). */
int sio_peer_sep_map(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     u32 dev, u32 peer, u32 asker, struct sio_msg *rep);
int sio_peer_sep_expose(struct sio_core *c, u32 self,
			const struct sio_parsed *p, u32 peer);
void sio_peer_sep_release(struct sio_core *c, struct sio_peermap *m);
void sio_peer_sep_forget(struct sio_core *c, u32 self, u32 dev);
/* Node's IOMMU address space, mapped for a requester and given back (iova.c). */
int sio_iova_map(struct sio_core *c, u32 node, u32 src, u16 rid, u64 phys,
		 u64 size, u64 *iova);
void sio_iova_unmap(struct sio_core *c, u32 node, u32 src, u16 rid, u64 iova);
/* A window address of one of node's adapters, on a slot, room for size. */
int sio_node_window_ok(struct sio_registry *r, u32 node, u64 addr,
		       u64 size);

/* Event helpers. */
void sio_event_dev(struct sio_core *c, u32 kind, u32 dev, const char *key,
		   const char *val);

#endif /* SIO_CORE_INT_H */
