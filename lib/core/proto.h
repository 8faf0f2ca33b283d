/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The smartio wire protocol: generic-netlink-shaped messages.
 *
 * One codec serves three paths: libsmartio -> core (commands), core ->
 * core between nodes (borrow request/grant, config cycles, window
 * mappings, return, reclaim, heartbeat, events), and later libnl-genl ->
 * smartio.ko.  A message is a netlink header, a genl header and a list of
 * attributes, every attribute 4-byte aligned, all integers little endian
 * as on every host we target (x86_64, arm64).
 *
 *   struct sio_nlmsghdr { u32 len; u16 type; u16 flags; u32 seq; u32 pid; }
 *   struct sio_genlhdr  { u8 cmd; u8 version; u16 reserved; }
 *   attributes: { u16 len; u16 type; payload; pad to 4 }
 *
 * The source and destination fabric node ids travel as SIO_A_SRC and
 * SIO_A_DST attributes so that a message is self-describing on any link.
 */
#ifndef SIO_PROTO_H
#define SIO_PROTO_H

#include "compat.h"

#define SIO_GENL_NAME "smartio"
#define SIO_GENL_VERSION 1
#define SIO_MSG_MAX 8192	/* largest message any side accepts */
#define SIO_NLMSG_HDRLEN 16
#define SIO_GENL_HDRLEN 4
#define SIO_MSG_HDRLEN (SIO_NLMSG_HDRLEN + SIO_GENL_HDRLEN)
#define SIO_NLA_HDRLEN 4
#define SIO_NLA_ALIGN(len) (((len) + 3u) & ~3u)
#define SIO_NLA_F_NESTED 0x8000u	/* as netlink's NLA_F_NESTED */

/* nlmsghdr.flags */
#define SIO_F_REQUEST 0x1u
#define SIO_F_REPLY 0x2u

enum sio_cmd {
	SIO_CMD_UNSPEC,
	/* user -> core: namespace writes */
	SIO_CMD_LEND,		/* DEV, MASK (0 = none, ~0 = all) */
	SIO_CMD_BORROW,		/* DEV, NODE (the borrower), [SIZE] */
	SIO_CMD_RETURN,		/* DEV, NODE */
	SIO_CMD_RECLAIM,	/* DEV, NODE (who asks; must be lender) */
	SIO_CMD_SET_MODE,	/* DEV, MODE */
	SIO_CMD_SEG_CREATE,	/* NODE, NAME */
	SIO_CMD_SEG_SIZE,	/* NODE, NAME, SIZE */
	SIO_CMD_SEG_DESTROY,	/* NODE, NAME */
	SIO_CMD_SEG_AVAILABLE,	/* NODE, NAME, FLAGS (0|1) */
	SIO_CMD_SEG_ATTACH,	/* NODE (owner), NAME, PEER (who maps) */
	SIO_CMD_SEG_DETACH,	/* NODE, NAME, PEER */
	SIO_CMD_SEG_DMA_MAP,	/* NODE, NAME, DEV */
	SIO_CMD_SEG_DMA_UNMAP,	/* NODE, NAME, DEV */
	SIO_CMD_CFG_READ,	/* DEV, NODE (who reads), OFFSET, SIZE */
	SIO_CMD_CFG_WRITE,	/* DEV, NODE (who writes), OFFSET, DATA */
	/* core <-> core between nodes */
	SIO_CMD_BORROW_REQ,	/* DEV, NODE (borrower), IOVA, SIZE */
	SIO_CMD_BORROW_GRANT,	/* DEV, NODE, BAR* (nested), RID */
	SIO_CMD_BORROW_DENY,	/* DEV, NODE, ERRNO */
	SIO_CMD_MAP_DMA_WINDOW,	/* DEV, NODE, IOVA, SIZE -> reply ADDR */
	SIO_CMD_MAP_MSI_WINDOW,	/* DEV, NODE, IOVA, SIZE -> reply ADDR */
	SIO_CMD_RETURN_REQ,	/* DEV, NODE */
	SIO_CMD_RECLAIM_REQ,	/* DEV, NODE (the borrower being revoked) */
	SIO_CMD_HEARTBEAT,	/* NODE, SEQ, TIME */
	SIO_CMD_EVENT,		/* SEQ, TIME, KIND, DATA ("<object>[ <args>]") */
	SIO_CMD_SEG_CONNECT,	/* NODE (owner), NAME, PEER -> reply ADDR, SIZE */
	SIO_CMD_SEG_DISCONNECT,	/* NODE (owner), NAME, PEER */
	SIO_CMD_MAP_SEG_WINDOW,	/* DEV, NODE (owner), IOVA, SIZE -> reply ADDR */
	SIO_CMD_UNMAP_SEG_WINDOW, /* DEV, NODE (owner), IOVA */
	SIO_CMD_PEER_MAP,	/* DEV, NODE (who asks), INDEX (peer's fdid) */
	SIO_CMD_PEER_UNMAP,	/* DEV, NODE (who asks), INDEX (peer's fdid) */
	SIO_CMD_PEER_EXPOSE,	/* DEV (peer), PEER (its user's lender), RID,
				 * INDEX (BAR) -> reply ADDR (iova) */
	SIO_CMD_PEER_UNEXPOSE,	/* DEV (peer), PEER, RID, IOVA */
	SIO_CMD_REPLY,		/* ERRNO, and whatever the request returns */
	/* user -> smartio.ko: registry bytes for libsmartio's queries */
	SIO_CMD_REG_READ,	/* OFFSET, SIZE -> reply DATA, SEQ */
	/* core <-> core when the nodes do not share one registry */
	SIO_CMD_SEG_TABLE,	/* NODE (owner), SEG* (nested) */
	SIO_CMD_SEG_TABLE_GET,	/* NODE (who asks) -> reply NODE (owner), SEG* */
	/*
	 * NODE (the lender), DATA* (one struct sio_dev_wire per device,
	 * lib/core/dev_table.c): its devices' records for the others' copies.
	 */
	SIO_CMD_DEV_TABLE,
	/*
	 * Borrower -> lender: DEV, NODE (borrower), INDEX (BAR), ADDR (the
	 * borrower's window address of it), SIZE: translate it inbound.
	 */
	SIO_CMD_MAP_BAR_WINDOW,
	/* user -> core: DEV (a PF), SIZE (NumVFs): its VFs enabled (sriov.c) */
	SIO_CMD_SRIOV_SET,
	/* user -> core: multicast groups (mcast.c, which lists attributes) */
	SIO_CMD_MCAST_CREATE,
	SIO_CMD_MCAST_DESTROY,
	SIO_CMD_MCAST_JOIN,
	SIO_CMD_MCAST_LEAVE,
	SIO_CMD_MCAST_MAP,
	SIO_CMD_MCAST_UNMAP,
	SIO_CMD_MCAST_SIZE,
	/*
	 * Borrower -> lender: DEV, NODE (the borrower), INDEX (MSI-X table
	 * entry), DATA (the entry as the device takes it: address, data,
	 * vector control; 16 bytes, little endian).  The lender writes it
	 * only when the address is in the borrower's MSI window (msi.c).
	 */
	SIO_CMD_MSIX_ENTRY,
	__SIO_CMD_MAX,
};
#define SIO_CMD_MAX (__SIO_CMD_MAX - 1)

enum sio_attr {
	SIO_A_UNSPEC,
	SIO_A_SRC,	/* u32: fabric node id of the sender */
	SIO_A_DST,	/* u32: fabric node id of the receiver */
	SIO_A_NODE,	/* u32: node index (borrower, owner, asker) */
	SIO_A_PEER,	/* u32: second node index */
	SIO_A_DEV,	/* u32: fabric device id */
	SIO_A_MODE,	/* u32: enum sio_mode */
	SIO_A_ERRNO,	/* s32: 0 or a negative errno */
	SIO_A_ADDR,	/* u64 */
	SIO_A_SIZE,	/* u64 */
	SIO_A_IOVA,	/* u64 */
	SIO_A_OFFSET,	/* u64 */
	SIO_A_MASK,	/* u64: node bitmask */
	SIO_A_FLAGS,	/* u32 */
	SIO_A_RID,	/* u32: PCIe requester id */
	SIO_A_SEQ,	/* u64 */
	SIO_A_TIME,	/* u64: nanoseconds */
	SIO_A_KIND,	/* u32 */
	SIO_A_INDEX,	/* u32 */
	SIO_A_NAME,	/* NUL-terminated string, at most SIO_NAME_MAX bytes incl. NUL */
	SIO_A_DATA,	/* binary, at most 4096 bytes */
	SIO_A_BAR,	/* nested: INDEX, ADDR, SIZE, FLAGS, IOVA; may
			 * repeat */
	SIO_A_SEG,	/* nested: NAME, INDEX (generation), SIZE, ADDR,
			 * OFFSET (backing), FLAGS (available), MASK
			 * (attached); may repeat */
	__SIO_A_MAX,
};
#define SIO_A_MAX (__SIO_A_MAX - 1)
#define SIO_NAME_MAX 32
#define SIO_DATA_MAX 4096

/* A message being built into a caller-owned buffer. */
struct sio_msg {
	u8 *buf;
	u32 cap;
	u32 len;
	int err;	/* first error while building, sticky: -EMSGSIZE */
};

/* One attribute as found in a received message (points into the buffer). */
struct sio_nla {
	u16 len;	/* payload length */
	u16 type;	/* without SIO_NLA_F_NESTED */
	const u8 *data;
};

/* A validated received message. */
struct sio_parsed {
	u16 type;	/* nlmsghdr.type: the family id, informational */
	u16 flags;
	u32 seq;
	u32 pid;
	u8 cmd;
	u8 version;
	/* last occurrence of each top-level attribute, NULL when absent */
	struct sio_nla tb[SIO_A_MAX + 1];
	u8 present[SIO_A_MAX + 1];
	const u8 *attrs;	/* start of the attribute stream */
	u32 attrs_len;
	/*
	 * Set by the core's dispatch, not by the parser: the node the message
	 * came from (the handling node itself for a local command).
	 */
	u32 from;
};

/* Builder: all return 0 or the sticky negative errno (-EMSGSIZE). */
int sio_msg_init(struct sio_msg *m, void *buf, u32 cap, u8 cmd, u16 flags,
		 u32 seq);
int sio_msg_put_u32(struct sio_msg *m, u16 type, u32 v);
int sio_msg_put_s32(struct sio_msg *m, u16 type, s32 v);
int sio_msg_put_u64(struct sio_msg *m, u16 type, u64 v);
int sio_msg_put_str(struct sio_msg *m, u16 type, const char *s);
int sio_msg_put_bin(struct sio_msg *m, u16 type, const void *p, u32 len);
/*
 * Appends a zeroed binary attribute of len bytes and returns its payload
 * for the caller to fill (no copy through a stack buffer), or NULL with
 * m->err set.
 */
u8 *sio_msg_reserve(struct sio_msg *m, u16 type, u32 len);
/* Returns the nest's offset (>= 0) or a negative errno; close with _end. */
int sio_msg_nest_start(struct sio_msg *m, u16 type);
int sio_msg_nest_end(struct sio_msg *m, int nest_off);
/* Finishes the header length; returns total length or negative errno. */
int sio_msg_finish(struct sio_msg *m);

/*
 * Parser: checks header lengths, version, known command, each attribute's
 * bounds, alignment and type-specific length (exact for integers; strings
 * NUL-terminated within SIO_NAME_MAX; DATA at most SIO_DATA_MAX; nests
 * recursively well-formed with known inner types).  Unknown attribute types
 * are rejected (strict, as the namespace's writes are).
 * Returns 0 or -EINVAL (malformed) / -EBADMSG (truncated or length mismatch)
 * / -EPROTO (unknown command or version).
 */
int sio_msg_parse(const void *buf, u32 len, struct sio_parsed *p);

/* Checks that every attribute of mask (bit n = attribute n) is present. */
int sio_msg_require(const struct sio_parsed *p, u64 mask);
#define SIO_ATTR_BIT(a) (1ull << (a))

u32 sio_nla_u32(const struct sio_nla *a);
s32 sio_nla_s32(const struct sio_nla *a);
u64 sio_nla_u64(const struct sio_nla *a);
const char *sio_nla_str(const struct sio_nla *a);

/*
 * Iterates the attributes in [data, data+len) (top level: p->attrs /
 * p->attrs_len; nested: a->data / a->len).  *pos starts at 0.  Returns 1 and
 * fills *out while attributes remain, 0 at the end.  Only valid on buffers
 * that sio_msg_parse accepted.
 */
int sio_nla_next(const u8 *data, u32 len, u32 *pos, struct sio_nla *out);

/* Finds inner attribute type within nest a; 0 on success, -ENOENT if absent. */
int sio_nla_find(const struct sio_nla *nest, u16 type, struct sio_nla *out);

const char *sio_cmd_name(u8 cmd);

#endif /* SIO_PROTO_H */
