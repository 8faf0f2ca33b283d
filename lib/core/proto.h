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
#include "smartio_genl.h"

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

/* Payload classes of the attributes (smartio.ko's nla_policy as well). */
enum sio_kind {
	SIO_K_NONE,	/* not a valid attribute */
	SIO_K_U32,	/* exactly 4 bytes (u32 and s32) */
	SIO_K_U64,	/* exactly 8 bytes */
	SIO_K_STR,	/* 1..SIO_NAME_MAX bytes, one NUL, at the end */
	SIO_K_BIN,	/* 0..SIO_DATA_MAX bytes */
	SIO_K_BAR,	/* nest of BAR fields */
	SIO_K_SEG,	/* nest of SEG fields */
};

int sio_attr_kind(u16 type);

const char *sio_cmd_name(u8 cmd);

#endif /* SIO_PROTO_H */
