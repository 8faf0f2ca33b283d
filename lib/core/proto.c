// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The wire codec of proto.h.
 *
 * Portable core: this file includes nothing but proto.h (and the command
 * table, for the names) and calls no libc,
 * because it is also built into smartio.ko.  Integers are read and written
 * byte by byte, so neither the message nor any attribute needs to be aligned
 * in memory.
 *
 * Builder rules:
 *  - the usable capacity is min(cap, SIO_MSG_MAX): a longer message would be
 *    refused by every receiver, so it is an overflow at build time already;
 *  - the first error is sticky: -EMSGSIZE when an attribute does not fit
 *    (nothing is written then), -EINVAL for a string longer than
 *    SIO_NAME_MAX - 1, binary data longer than SIO_DATA_MAX or a nest offset
 *    that nest_start did not return.
 *
 * Parser rules (any byte string may arrive from another node or from user
 * space, so every read is bounds-checked first):
 *  - -EBADMSG: len < SIO_MSG_HDRLEN; len > SIO_MSG_MAX; nlmsghdr.len != len;
 *    an attribute header that does not fit; an attribute length < 4 or past
 *    the end of its message or nest; padding cut short (see below);
 *  - -EPROTO: version != SIO_GENL_VERSION, cmd 0 or cmd > SIO_CMD_MAX;
 *  - -EINVAL: unknown attribute type; a payload of the wrong size for its
 *    type; a NAME that is empty, longer than SIO_NAME_MAX, not NUL-terminated
 *    at its last byte or with an earlier NUL; DATA longer than SIO_DATA_MAX;
 *    BAR or SEG without SIO_NLA_F_NESTED or the flag on anything else;
 *    inside a BAR anything but INDEX, ADDR, SIZE, FLAGS, IOVA, inside a SEG
 *    anything but NAME, INDEX, SIZE, ADDR, OFFSET, FLAGS, MASK, or one of
 *    them twice.
 *  Checks run in that order per level: header, command, then attribute by
 *  attribute, framing before content.
 *  Padding: each attribute is followed by SIO_NLA_ALIGN padding; the padding
 *  of the last attribute of the message or of a nest may be left out, but
 *  only entirely (as netlink allows).  Padding bytes are not inspected.
 *  On any error the attribute table is left empty (no pointer into a bad
 *  buffer escapes); the header fields are filled whenever len covers them,
 *  so that an error reply can still echo the sequence number.
 */
#include "le.h"
#include "proto.h"
#include "cmds.h"

#define SIO_IN_BAR 1u	/* allowed inside a BAR nest */
#define SIO_IN_SEG 2u	/* allowed inside a SEG nest */

struct sio_policy {
	u8 kind;
	u8 nests;	/* SIO_IN_*: the nests it may appear in */
};

static const struct sio_policy sio_policy[__SIO_A_MAX] = {
	[SIO_A_UNSPEC]	= { SIO_K_NONE, 0 },
	[SIO_A_SRC]	= { SIO_K_U32, 0 },
	[SIO_A_DST]	= { SIO_K_U32, 0 },
	[SIO_A_NODE]	= { SIO_K_U32, 0 },
	[SIO_A_PEER]	= { SIO_K_U32, 0 },
	[SIO_A_DEV]	= { SIO_K_U32, 0 },
	[SIO_A_MODE]	= { SIO_K_U32, 0 },
	[SIO_A_ERRNO]	= { SIO_K_U32, 0 },
	[SIO_A_ADDR]	= { SIO_K_U64, SIO_IN_BAR | SIO_IN_SEG },
	[SIO_A_SIZE]	= { SIO_K_U64, SIO_IN_BAR | SIO_IN_SEG },
	[SIO_A_IOVA]	= { SIO_K_U64, SIO_IN_BAR },
	[SIO_A_OFFSET]	= { SIO_K_U64, SIO_IN_SEG },
	[SIO_A_MASK]	= { SIO_K_U64, SIO_IN_SEG },
	[SIO_A_FLAGS]	= { SIO_K_U32, SIO_IN_BAR | SIO_IN_SEG },
	[SIO_A_RID]	= { SIO_K_U32, 0 },
	[SIO_A_SEQ]	= { SIO_K_U64, 0 },
	[SIO_A_TIME]	= { SIO_K_U64, 0 },
	[SIO_A_KIND]	= { SIO_K_U32, 0 },
	[SIO_A_INDEX]	= { SIO_K_U32, SIO_IN_BAR | SIO_IN_SEG },
	[SIO_A_NAME]	= { SIO_K_STR, SIO_IN_SEG },
	[SIO_A_DATA]	= { SIO_K_BIN, 0 },
	[SIO_A_BAR]	= { SIO_K_BAR, 0 },
	[SIO_A_SEG]	= { SIO_K_SEG, 0 },
};

/* The bitmask in sio_check_nest must be wide enough for every inner type. */
_Static_assert(__SIO_A_MAX <= 32, "a nest's duplicate mask is a u32");

/* ---- builder --------------------------------------------------------- */

static int sio_msg_fail(struct sio_msg *m, int err)
{
	m->err = err;
	return err;
}

int sio_msg_init(struct sio_msg *m, void *buf, u32 cap, u8 cmd, u16 flags,
		 u32 seq)
{
	m->buf = buf;
	m->cap = cap < SIO_MSG_MAX ? cap : SIO_MSG_MAX;
	m->len = 0;
	m->err = 0;
	if (!buf || m->cap < SIO_MSG_HDRLEN)
		return sio_msg_fail(m, -EMSGSIZE);
	sio_memset(m->buf, 0, SIO_MSG_HDRLEN);
	/* len is patched by sio_msg_finish; pid 0 means "the kernel/core" */
	sio_put_le16(m->buf + 4, 0x10);	/* placeholder family id */
	sio_put_le16(m->buf + 6, flags);
	sio_put_le32(m->buf + 8, seq);
	m->buf[SIO_NLMSG_HDRLEN] = cmd;
	m->buf[SIO_NLMSG_HDRLEN + 1] = SIO_GENL_VERSION;
	m->len = SIO_MSG_HDRLEN;
	return 0;
}

/*
 * Appends one attribute with plen payload bytes (copied from p unless p is
 * NULL, as for a nest header) and zero padding.  Checks the room before
 * writing anything, so a failed put leaves the buffer untouched.
 */
static int sio_put_attr(struct sio_msg *m, u16 type, const void *p, u32 plen)
{
	u32 total = SIO_NLA_HDRLEN + plen;
	u32 padded = SIO_NLA_ALIGN(total);
	u8 *a;

	if (m->err)
		return m->err;
	/* m->len <= m->cap always holds, so the subtraction cannot wrap */
	if (plen > SIO_MSG_MAX || padded > m->cap - m->len)
		return sio_msg_fail(m, -EMSGSIZE);
	a = m->buf + m->len;
	sio_put_le16(a, (u16)total);
	sio_put_le16(a + 2, type);
	if (plen && p)
		sio_memcpy(a + SIO_NLA_HDRLEN, p, plen);
	sio_memset(a + total, 0, padded - total);
	m->len += padded;
	return 0;
}

int sio_msg_put_u32(struct sio_msg *m, u16 type, u32 v)
{
	u8 b[4];

	sio_put_le32(b, v);
	return sio_put_attr(m, type, b, sizeof(b));
}

int sio_msg_put_s32(struct sio_msg *m, u16 type, s32 v)
{
	/* two's complement on every target: the bit pattern travels as is */
	return sio_msg_put_u32(m, type, (u32)v);
}

int sio_msg_put_u64(struct sio_msg *m, u16 type, u64 v)
{
	u8 b[8];

	sio_put_le64(b, v);
	return sio_put_attr(m, type, b, sizeof(b));
}

int sio_msg_put_str(struct sio_msg *m, u16 type, const char *s)
{
	size_t n;

	if (m->err)
		return m->err;
	/* look at most SIO_NAME_MAX bytes: s need not be terminated early */
	n = sio_strnlen(s, SIO_NAME_MAX);
	if (n > SIO_NAME_MAX - 1)
		return sio_msg_fail(m, -EINVAL);
	return sio_put_attr(m, type, s, (u32)n + 1);	/* with the NUL */
}

int sio_msg_put_bin(struct sio_msg *m, u16 type, const void *p, u32 len)
{
	if (m->err)
		return m->err;
	if (len > SIO_DATA_MAX)
		return sio_msg_fail(m, -EINVAL);
	return sio_put_attr(m, type, p, len);
}

u8 *sio_msg_reserve(struct sio_msg *m, u16 type, u32 len)
{
	u32 at = m->len;

	if (sio_msg_put_bin(m, type, NULL, len))
		return NULL;
	sio_memset(m->buf + at + SIO_NLA_HDRLEN, 0, len);
	return m->buf + at + SIO_NLA_HDRLEN;
}

int sio_msg_nest_start(struct sio_msg *m, u16 type)
{
	u32 off = m->len;
	int err = sio_put_attr(m, type | SIO_NLA_F_NESTED, NULL, 0);

	/* off <= SIO_MSG_MAX, so it fits an int */
	return err ? err : (int)off;
}

int sio_msg_nest_end(struct sio_msg *m, int nest_off)
{
	u32 off = (u32)nest_off;

	if (m->err)
		return m->err;
	if (nest_off < SIO_MSG_HDRLEN || off > m->len - SIO_NLA_HDRLEN)
		return sio_msg_fail(m, -EINVAL);
	/* at most SIO_MSG_MAX bytes: always fits the u16 length field */
	sio_put_le16(m->buf + off, (u16)(m->len - off));
	return 0;
}

int sio_msg_finish(struct sio_msg *m)
{
	if (m->err)
		return m->err;
	sio_put_le32(m->buf, m->len);
	return (int)m->len;
}

/* ---- parser ---------------------------------------------------------- */

/*
 * Reads the attribute header at *pos of [data, data + len) into *out and
 * advances *pos past it and its padding.  Returns 1 on success, 0 at the
 * end, -EBADMSG when the framing is broken.
 */
static int sio_nla_take(const u8 *data, u32 len, u32 *pos, struct sio_nla *out,
			u16 *raw_type)
{
	u32 rest, alen;

	if (*pos >= len)
		return 0;
	rest = len - *pos;
	if (rest < SIO_NLA_HDRLEN)
		return -EBADMSG;
	alen = sio_get_le16(data + *pos);
	if (alen < SIO_NLA_HDRLEN || alen > rest)
		return -EBADMSG;
	/* padding must be whole, or wholly absent at the very end */
	if (SIO_NLA_ALIGN(alen) > rest && alen != rest)
		return -EBADMSG;
	*raw_type = sio_get_le16(data + *pos + 2);
	out->type = (u16)(*raw_type & ~SIO_NLA_F_NESTED);
	out->len = (u16)(alen - SIO_NLA_HDRLEN);
	out->data = data + *pos + SIO_NLA_HDRLEN;
	*pos += SIO_NLA_ALIGN(alen) < rest ? SIO_NLA_ALIGN(alen) : rest;
	return 1;
}

static int sio_check_str(const struct sio_nla *a)
{
	/* the payload length equals the string length plus one NUL */
	if (a->len < 1 || a->len > SIO_NAME_MAX)
		return -EINVAL;
	if (sio_strnlen((const char *)a->data, a->len) != (size_t)a->len - 1u)
		return -EINVAL;
	return 0;
}

/* Checks one attribute's type, nested flag and payload size. */
static int sio_check_attr(const struct sio_nla *a, u16 raw_type)
{
	u8 kind = a->type <= SIO_A_MAX ? sio_policy[a->type].kind : SIO_K_NONE;
	int nested = !!(raw_type & SIO_NLA_F_NESTED);

	if (kind == SIO_K_NONE)
		return -EINVAL;
	if (nested != (kind == SIO_K_BAR || kind == SIO_K_SEG))
		return -EINVAL;
	switch (kind) {
	case SIO_K_U32:
		return a->len == 4 ? 0 : -EINVAL;
	case SIO_K_U64:
		return a->len == 8 ? 0 : -EINVAL;
	case SIO_K_STR:
		return sio_check_str(a);
	case SIO_K_BIN:
		return a->len <= SIO_DATA_MAX ? 0 : -EINVAL;
	default:
		return 0;	/* a nest: its inside is sio_check_nest's job */
	}
}

/* A BAR or SEG is a record: its known fields only, each at most once. */
static int sio_check_nest(const struct sio_nla *bar, u8 in)
{
	struct sio_nla f;
	u32 pos = 0, seen = 0;
	u16 raw;
	int ret;

	while ((ret = sio_nla_take(bar->data, bar->len, &pos, &f, &raw)) > 0) {
		ret = sio_check_attr(&f, raw);
		if (ret)
			return ret;
		if (!(sio_policy[f.type].nests & in) || (seen >> f.type & 1))
			return -EINVAL;
		seen |= 1u << f.type;
	}
	return ret;
}

static int sio_parse_attrs(const u8 *data, u32 len, struct sio_parsed *p)
{
	struct sio_nla a;
	u32 pos = 0;
	u16 raw;
	int ret;

	while ((ret = sio_nla_take(data, len, &pos, &a, &raw)) > 0) {
		ret = sio_check_attr(&a, raw);
		if (!ret && a.type == SIO_A_BAR)
			ret = sio_check_nest(&a, SIO_IN_BAR);
		else if (!ret && a.type == SIO_A_SEG)
			ret = sio_check_nest(&a, SIO_IN_SEG);
		if (ret)
			return ret;
		p->tb[a.type] = a;	/* the last occurrence wins */
		p->present[a.type] = 1;
	}
	return ret;
}

/* Fills the header fields; only called once len covers both headers. */
static void sio_parse_hdr(const u8 *b, struct sio_parsed *p)
{
	p->type = sio_get_le16(b + 4);
	p->flags = sio_get_le16(b + 6);
	p->seq = sio_get_le32(b + 8);
	p->pid = sio_get_le32(b + 12);
	p->cmd = b[SIO_NLMSG_HDRLEN];
	p->version = b[SIO_NLMSG_HDRLEN + 1];
}

int sio_msg_parse(const void *buf, u32 len, struct sio_parsed *p)
{
	const u8 *b = buf;
	int err;

	sio_memset(p, 0, sizeof(*p));
	if (!b || len < SIO_MSG_HDRLEN)
		return -EBADMSG;
	sio_parse_hdr(b, p);
	if (len > SIO_MSG_MAX || sio_get_le32(b) != len)
		return -EBADMSG;
	if (p->version != SIO_GENL_VERSION || p->cmd < 1 ||
	    p->cmd > SIO_CMD_MAX)
		return -EPROTO;
	err = sio_parse_attrs(b + SIO_MSG_HDRLEN, len - SIO_MSG_HDRLEN, p);
	if (err) {
		/* keep no pointer into a buffer we refused */
		sio_memset(p->tb, 0, sizeof(p->tb));
		sio_memset(p->present, 0, sizeof(p->present));
		return err;
	}
	p->attrs = b + SIO_MSG_HDRLEN;
	p->attrs_len = len - SIO_MSG_HDRLEN;
	return 0;
}

int sio_msg_require(const struct sio_parsed *p, u64 mask)
{
	u32 i;

	/* attribute 0 and types past SIO_A_MAX can never be present */
	if (mask & ~(((2ull << SIO_A_MAX) - 1) & ~1ull))
		return -EINVAL;
	for (i = 1; i <= SIO_A_MAX; i++)
		if ((mask >> i & 1) && !p->present[i])
			return -EINVAL;
	return 0;
}

/* ---- accessors: safe on absent (zeroed) attributes, returning 0 / "" -- */

u32 sio_nla_u32(const struct sio_nla *a)
{
	return a->data && a->len == 4 ? sio_get_le32(a->data) : 0;
}

s32 sio_nla_s32(const struct sio_nla *a)
{
	return (s32)sio_nla_u32(a);
}

u64 sio_nla_u64(const struct sio_nla *a)
{
	return a->data && a->len == 8 ? sio_get_le64(a->data) : 0;
}

const char *sio_nla_str(const struct sio_nla *a)
{
	if (!a->data || !a->len || a->data[a->len - 1])
		return "";
	return (const char *)a->data;
}

int sio_nla_next(const u8 *data, u32 len, u32 *pos, struct sio_nla *out)
{
	u16 raw;

	/* stays in bounds even on unchecked input: broken framing ends it */
	return sio_nla_take(data, len, pos, out, &raw) > 0;
}

int sio_nla_find(const struct sio_nla *nest, u16 type, struct sio_nla *out)
{
	struct sio_nla a;
	u32 pos = 0;

	while (sio_nla_next(nest->data, nest->len, &pos, &a)) {
		if (a.type == type) {
			*out = a;
			return 0;
		}
	}
	return -ENOENT;
}

/* Names from the command table; its rows are checked against the enum. */
#define SIO_CMD_NAME(cmd, name, ...) [SIO_CMD_##cmd] = name,
static const char *const sio_cmd_names[__SIO_CMD_MAX] = {
	SIO_CMDS(SIO_CMD_NAME)
};

/*
 * One row per command: as many rows as commands, and no two rows for one
 * command (-Woverride-init, part of -Wextra, refuses a repeated index).
 */
#define SIO_CMD_COUNT(...) +1
_Static_assert(0 SIO_CMDS(SIO_CMD_COUNT) == SIO_CMD_MAX,
	       "lib/core/cmds.h needs one row per enum sio_cmd value");

int sio_attr_kind(u16 type)
{
	return type <= SIO_A_MAX ? sio_policy[type].kind : SIO_K_NONE;
}

const char *sio_cmd_name(u8 cmd)
{
	if (cmd > SIO_CMD_MAX || !sio_cmd_names[cmd])
		return "unknown";
	return sio_cmd_names[cmd];
}
