// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The wire codec of proto.h.  Parsing is strict and bounds-checked on every
 * step: any byte string may arrive from another node or from user space.
 * Rules: the header length equals the buffer length; attributes are
 * 4-byte aligned and the last one's padding may be missing only if it ends
 * exactly at the end of the message.
 */
#include "proto.h"

enum attr_kind { K_NONE, K_U32, K_U64, K_STR, K_BIN, K_NEST };

static const u8 attr_kind[SIO_A_MAX + 1] = {
	[SIO_A_SRC] = K_U32, [SIO_A_DST] = K_U32, [SIO_A_NODE] = K_U32,
	[SIO_A_PEER] = K_U32, [SIO_A_DEV] = K_U32, [SIO_A_MODE] = K_U32,
	[SIO_A_ERRNO] = K_U32, [SIO_A_ADDR] = K_U64, [SIO_A_SIZE] = K_U64,
	[SIO_A_IOVA] = K_U64, [SIO_A_OFFSET] = K_U64, [SIO_A_MASK] = K_U64,
	[SIO_A_FLAGS] = K_U32, [SIO_A_RID] = K_U32, [SIO_A_SEQ] = K_U64,
	[SIO_A_TIME] = K_U64, [SIO_A_KIND] = K_U32, [SIO_A_INDEX] = K_U32,
	[SIO_A_NAME] = K_STR, [SIO_A_DATA] = K_BIN, [SIO_A_BAR] = K_NEST,
};

static void put_le(u8 *p, u64 v, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		p[i] = (u8)(v >> (8 * i));
}

static u64 get_le(const u8 *p, u32 n)
{
	u64 v = 0;
	u32 i;

	for (i = 0; i < n; i++)
		v |= (u64)p[i] << (8 * i);
	return v;
}

int sio_msg_init(struct sio_msg *m, void *buf, u32 cap, u8 cmd, u16 flags,
		 u32 seq)
{
	m->buf = buf;
	m->cap = cap;
	m->len = SIO_MSG_HDRLEN;
	m->err = 0;
	if (cap < SIO_MSG_HDRLEN) {
		m->len = 0;
		m->err = -EMSGSIZE;
		return m->err;
	}
	sio_memset(buf, 0, SIO_MSG_HDRLEN);
	put_le(m->buf + 4, 0x10, 2);	/* family id placeholder */
	put_le(m->buf + 6, flags, 2);
	put_le(m->buf + 8, seq, 4);
	m->buf[16] = cmd;
	m->buf[17] = SIO_GENL_VERSION;
	return 0;
}

static int put_attr(struct sio_msg *m, u16 type, const void *p, u32 len)
{
	u32 total = SIO_NLA_HDRLEN + len, padded = SIO_NLA_ALIGN(total);

	if (m->err)
		return m->err;
	if (total > 0xffffu || padded > m->cap - m->len) {
		m->err = -EMSGSIZE;
		return m->err;
	}
	put_le(m->buf + m->len, total, 2);
	put_le(m->buf + m->len + 2, type, 2);
	if (len)
		sio_memcpy(m->buf + m->len + SIO_NLA_HDRLEN, p, len);
	sio_memset(m->buf + m->len + total, 0, padded - total);
	m->len += padded;
	return 0;
}

int sio_msg_put_u32(struct sio_msg *m, u16 type, u32 v)
{
	u8 b[4];

	put_le(b, v, 4);
	return put_attr(m, type, b, 4);
}

int sio_msg_put_s32(struct sio_msg *m, u16 type, s32 v)
{
	return sio_msg_put_u32(m, type, (u32)v);
}

int sio_msg_put_u64(struct sio_msg *m, u16 type, u64 v)
{
	u8 b[8];

	put_le(b, v, 8);
	return put_attr(m, type, b, 8);
}

int sio_msg_put_str(struct sio_msg *m, u16 type, const char *s)
{
	size_t n = sio_strnlen(s, SIO_NAME_MAX);

	if (m->err)
		return m->err;
	if (n >= SIO_NAME_MAX) {
		m->err = -EINVAL;
		return m->err;
	}
	return put_attr(m, type, s, (u32)n + 1);
}

int sio_msg_put_bin(struct sio_msg *m, u16 type, const void *p, u32 len)
{
	if (m->err)
		return m->err;
	if (len > SIO_DATA_MAX) {
		m->err = -EINVAL;
		return m->err;
	}
	return put_attr(m, type, p, len);
}

int sio_msg_nest_start(struct sio_msg *m, u16 type)
{
	u32 off = m->len;
	int err = put_attr(m, type | SIO_NLA_F_NESTED, NULL, 0);

	return err ? err : (int)off;
}

int sio_msg_nest_end(struct sio_msg *m, int nest_off)
{
	if (m->err)
		return m->err;
	if (nest_off < SIO_MSG_HDRLEN || (u32)nest_off >= m->len) {
		m->err = -EINVAL;
		return m->err;
	}
	put_le(m->buf + nest_off, m->len - (u32)nest_off, 2);
	return 0;
}

int sio_msg_finish(struct sio_msg *m)
{
	if (m->err)
		return m->err;
	put_le(m->buf, m->len, 4);
	return (int)m->len;
}

/* Validates one attribute's payload against its kind. */
static int check_attr(u16 type, const u8 *data, u32 len, int nested_flag,
		      int inside_bar)
{
	u8 kind;
	u32 i;

	if (type == 0 || type > SIO_A_MAX)
		return -EINVAL;
	kind = attr_kind[type];
	if (inside_bar && type != SIO_A_INDEX && type != SIO_A_ADDR &&
	    type != SIO_A_SIZE && type != SIO_A_FLAGS)
		return -EINVAL;
	if ((kind == K_NEST) != !!nested_flag)
		return -EINVAL;
	switch (kind) {
	case K_U32:
		return len == 4 ? 0 : -EINVAL;
	case K_U64:
		return len == 8 ? 0 : -EINVAL;
	case K_STR:
		if (len == 0 || len > SIO_NAME_MAX || data[len - 1])
			return -EINVAL;
		for (i = 0; i + 1 < len; i++)
			if (!data[i])
				return -EINVAL;
		return 0;
	case K_BIN:
		return len <= SIO_DATA_MAX ? 0 : -EINVAL;
	default:
		return 0;
	}
}

/* Walks an attribute stream, validating each; calls back for top level. */
static int walk(const u8 *data, u32 len, int inside_bar, struct sio_parsed *p)
{
	u32 pos = 0;

	while (pos < len) {
		u32 alen, type_raw, plen;
		int err;

		if (len - pos < SIO_NLA_HDRLEN)
			return -EBADMSG;
		alen = (u32)get_le(data + pos, 2);
		type_raw = (u32)get_le(data + pos + 2, 2);
		if (alen < SIO_NLA_HDRLEN || alen > len - pos)
			return -EBADMSG;
		plen = alen - SIO_NLA_HDRLEN;
		err = check_attr((u16)(type_raw & ~SIO_NLA_F_NESTED),
				 data + pos + SIO_NLA_HDRLEN, plen,
				 type_raw & SIO_NLA_F_NESTED, inside_bar);
		if (err)
			return err;
		if (type_raw & SIO_NLA_F_NESTED) {
			if (inside_bar)
				return -EINVAL;
			err = walk(data + pos + SIO_NLA_HDRLEN, plen, 1, NULL);
			if (err)
				return err;
		}
		if (p) {
			u16 t = (u16)(type_raw & ~SIO_NLA_F_NESTED);

			p->tb[t].len = (u16)plen;
			p->tb[t].type = t;
			p->tb[t].data = data + pos + SIO_NLA_HDRLEN;
			p->present[t] = 1;
		}
		if (SIO_NLA_ALIGN(alen) > len - pos) {
			if (alen != len - pos)
				return -EBADMSG;
			pos = len;
		} else {
			pos += SIO_NLA_ALIGN(alen);
		}
	}
	return 0;
}

int sio_msg_parse(const void *buf, u32 len, struct sio_parsed *p)
{
	const u8 *b = buf;
	int err;

	sio_memset(p, 0, sizeof(*p));
	if (!buf || len < SIO_MSG_HDRLEN)
		return -EBADMSG;
	if (len > SIO_MSG_MAX)
		return -EMSGSIZE;
	if (get_le(b, 4) != len)
		return -EBADMSG;
	p->type = (u16)get_le(b + 4, 2);
	p->flags = (u16)get_le(b + 6, 2);
	p->seq = (u32)get_le(b + 8, 4);
	p->pid = (u32)get_le(b + 12, 4);
	p->cmd = b[16];
	p->version = b[17];
	if (p->version != SIO_GENL_VERSION || p->cmd == 0 ||
	    p->cmd > SIO_CMD_MAX)
		return -EPROTO;
	p->attrs = b + SIO_MSG_HDRLEN;
	p->attrs_len = len - SIO_MSG_HDRLEN;
	err = walk(p->attrs, p->attrs_len, 0, p);
	if (err) {
		u8 cmd = p->cmd;

		sio_memset(p, 0, sizeof(*p));
		p->cmd = cmd;
	}
	return err;
}

int sio_msg_require(const struct sio_parsed *p, u64 mask)
{
	u32 i;

	for (i = 1; i <= SIO_A_MAX; i++)
		if ((mask >> i & 1) && !p->present[i])
			return -EINVAL;
	return 0;
}

u32 sio_nla_u32(const struct sio_nla *a)
{
	return a->len == 4 ? (u32)get_le(a->data, 4) : 0;
}

s32 sio_nla_s32(const struct sio_nla *a)
{
	return (s32)sio_nla_u32(a);
}

u64 sio_nla_u64(const struct sio_nla *a)
{
	return a->len == 8 ? get_le(a->data, 8) : 0;
}

const char *sio_nla_str(const struct sio_nla *a)
{
	return a->len ? (const char *)a->data : "";
}

int sio_nla_next(const u8 *data, u32 len, u32 *pos, struct sio_nla *out)
{
	u32 alen;

	if (*pos >= len || len - *pos < SIO_NLA_HDRLEN)
		return 0;
	alen = (u32)get_le(data + *pos, 2);
	if (alen < SIO_NLA_HDRLEN || alen > len - *pos)
		return 0;
	out->len = (u16)(alen - SIO_NLA_HDRLEN);
	out->type = (u16)(get_le(data + *pos + 2, 2) & ~SIO_NLA_F_NESTED);
	out->data = data + *pos + SIO_NLA_HDRLEN;
	*pos += SIO_NLA_ALIGN(alen) > len - *pos ? len - *pos :
						   SIO_NLA_ALIGN(alen);
	return 1;
}

int sio_nla_find(const struct sio_nla *nest, u16 type, struct sio_nla *out)
{
	u32 pos = 0;

	while (sio_nla_next(nest->data, nest->len, &pos, out))
		if (out->type == type)
			return 0;
	return -ENOENT;
}

static const char *const cmd_names[SIO_CMD_MAX + 1] = {
	[SIO_CMD_LEND] = "lend", [SIO_CMD_BORROW] = "borrow",
	[SIO_CMD_RETURN] = "return", [SIO_CMD_RECLAIM] = "reclaim",
	[SIO_CMD_SET_MODE] = "set-mode", [SIO_CMD_SEG_CREATE] = "seg-create",
	[SIO_CMD_SEG_SIZE] = "seg-size", [SIO_CMD_SEG_DESTROY] = "seg-destroy",
	[SIO_CMD_SEG_AVAILABLE] = "seg-available",
	[SIO_CMD_SEG_ATTACH] = "seg-attach", [SIO_CMD_SEG_DETACH] = "seg-detach",
	[SIO_CMD_SEG_DMA_MAP] = "seg-dma-map",
	[SIO_CMD_SEG_DMA_UNMAP] = "seg-dma-unmap",
	[SIO_CMD_CFG_READ] = "cfg-read", [SIO_CMD_CFG_WRITE] = "cfg-write",
	[SIO_CMD_BORROW_REQ] = "borrow-req",
	[SIO_CMD_BORROW_GRANT] = "borrow-grant",
	[SIO_CMD_BORROW_DENY] = "borrow-deny",
	[SIO_CMD_MAP_DMA_WINDOW] = "map-dma-window",
	[SIO_CMD_MAP_MSI_WINDOW] = "map-msi-window",
	[SIO_CMD_RETURN_REQ] = "return-req",
	[SIO_CMD_RECLAIM_REQ] = "reclaim-req", [SIO_CMD_HEARTBEAT] = "heartbeat",
	[SIO_CMD_EVENT] = "event", [SIO_CMD_REPLY] = "reply",
};

const char *sio_cmd_name(u8 cmd)
{
	return cmd <= SIO_CMD_MAX && cmd_names[cmd] ? cmd_names[cmd] :
						       "unknown";
}
