// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The wire codec of lib/core/proto.h: every command round-trips with its
 * attributes; the builder never writes past its buffer and its errors are
 * sticky; the parser rejects each kind of malformed message with the
 * documented errno and, for truncated or randomly mutated input, never reads
 * outside the buffer nor hands out a pointer outside it.
 *
 * Messages fed to the parser in the robustness tests are copied into heap
 * blocks of exactly their length, so that valgrind or AddressSanitizer
 * catch a read of even one byte past the end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "proto.h"

#define CANARY 0xa5
#define GUARD 64

/* ---- helpers ----------------------------------------------------------- */

/* Parses a copy of buf in a heap block of exactly len bytes. */
static int parse_exact(const u8 *buf, u32 len)
{
	struct sio_parsed p;
	u8 *copy = malloc(len ? len : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, buf, len);
	rc = sio_msg_parse(copy, len, &p);
	free(copy);
	return rc;
}

/*
 * A raw message writer that shares no code with the codec, for building
 * messages the builder would refuse to make.
 */
struct raw {
	u8 b[SIO_MSG_MAX + 64];
	u32 len;
};

static void raw_init(struct raw *r, u8 cmd)
{
	memset(r->b, 0, sizeof(r->b));
	r->b[4] = 0x10;
	r->b[8] = 42;		/* seq */
	r->b[16] = cmd;
	r->b[17] = SIO_GENL_VERSION;
	r->len = SIO_MSG_HDRLEN;
}

static void raw_bytes(struct raw *r, const void *p, u32 n)
{
	assert_true(r->len + n <= sizeof(r->b));
	memcpy(r->b + r->len, p, n);
	r->len += n;
}

/* An attribute header claiming alen bytes in total, with no payload yet. */
static void raw_hdr(struct raw *r, u16 alen, u16 type)
{
	u8 h[4];

	sio_put_le16(h, alen);
	sio_put_le16(h + 2, type);
	raw_bytes(r, h, 4);
}

static void raw_pad(struct raw *r)
{
	while (r->len % 4)
		r->b[r->len++] = 0;
}

/* A consistent attribute: header, payload, padding. */
static void raw_attr(struct raw *r, u16 type, const void *p, u32 plen)
{
	raw_hdr(r, (u16)(4 + plen), type);
	raw_bytes(r, p, plen);
	raw_pad(r);
}

static void raw_u32(struct raw *r, u16 type, u32 v)
{
	u8 b[4];

	sio_put_le32(b, v);
	raw_attr(r, type, b, 4);
}

static void raw_u64(struct raw *r, u16 type, u64 v)
{
	u8 b[8];

	sio_put_le32(b, (u32)v);
	sio_put_le32(b + 4, (u32)(v >> 32));
	raw_attr(r, type, b, 8);
}

static u32 raw_nest_start(struct raw *r, u16 type)
{
	u32 off = r->len;

	raw_hdr(r, 0, type);
	return off;
}

static void raw_nest_end(struct raw *r, u32 off)
{
	sio_put_le16(r->b + off, (u16)(r->len - off));
}

/* Sets the header length to the bytes written so far; returns it. */
static u32 raw_finish(struct raw *r)
{
	sio_put_le32(r->b, r->len);
	return r->len;
}

static int raw_parse(struct raw *r)
{
	return parse_exact(r->b, raw_finish(r));
}

/* ---- one representative message per command ----------------------------- */

/* The attributes each command carries, as listed in proto.h. */
#define A(x) SIO_ATTR_BIT(SIO_A_##x)
static const u64 cmd_attrs[SIO_CMD_MAX + 1] = {
	[SIO_CMD_LEND] = A(DEV) | A(MASK),
	[SIO_CMD_BORROW] = A(DEV) | A(NODE),
	[SIO_CMD_RETURN] = A(DEV) | A(NODE),
	[SIO_CMD_RECLAIM] = A(DEV) | A(NODE),
	[SIO_CMD_SET_MODE] = A(DEV) | A(MODE),
	[SIO_CMD_SEG_CREATE] = A(NODE) | A(NAME),
	[SIO_CMD_SEG_SIZE] = A(NODE) | A(NAME) | A(SIZE),
	[SIO_CMD_SEG_DESTROY] = A(NODE) | A(NAME),
	[SIO_CMD_SEG_AVAILABLE] = A(NODE) | A(NAME) | A(FLAGS),
	[SIO_CMD_SEG_ATTACH] = A(NODE) | A(NAME) | A(PEER),
	[SIO_CMD_SEG_DETACH] = A(NODE) | A(NAME) | A(PEER),
	[SIO_CMD_SEG_DMA_MAP] = A(NODE) | A(NAME) | A(DEV),
	[SIO_CMD_SEG_DMA_UNMAP] = A(NODE) | A(NAME) | A(DEV),
	[SIO_CMD_CFG_READ] = A(DEV) | A(NODE) | A(OFFSET) | A(SIZE),
	[SIO_CMD_CFG_WRITE] = A(DEV) | A(NODE) | A(OFFSET) | A(DATA),
	[SIO_CMD_BORROW_REQ] = A(DEV) | A(NODE) | A(IOVA) | A(SIZE),
	[SIO_CMD_BORROW_GRANT] = A(DEV) | A(NODE) | A(BAR) | A(RID),
	[SIO_CMD_BORROW_DENY] = A(DEV) | A(NODE) | A(ERRNO),
	[SIO_CMD_MAP_DMA_WINDOW] = A(DEV) | A(NODE) | A(IOVA) | A(SIZE),
	[SIO_CMD_MAP_MSI_WINDOW] = A(DEV) | A(NODE) | A(IOVA) | A(SIZE),
	[SIO_CMD_RETURN_REQ] = A(DEV) | A(NODE),
	[SIO_CMD_RECLAIM_REQ] = A(DEV) | A(NODE),
	[SIO_CMD_HEARTBEAT] = A(NODE) | A(SEQ) | A(TIME),
	[SIO_CMD_EVENT] = A(SEQ) | A(TIME) | A(KIND) | A(DATA),
	[SIO_CMD_SEG_CONNECT] = A(NODE) | A(NAME) | A(PEER),
	[SIO_CMD_SEG_DISCONNECT] = A(NODE) | A(NAME) | A(PEER),
	[SIO_CMD_MAP_SEG_WINDOW] = A(DEV) | A(NODE) | A(IOVA) | A(SIZE),
	[SIO_CMD_UNMAP_SEG_WINDOW] = A(DEV) | A(NODE) | A(IOVA),
	[SIO_CMD_PEER_MAP] = A(DEV) | A(NODE) | A(INDEX),
	[SIO_CMD_PEER_UNMAP] = A(DEV) | A(NODE) | A(INDEX),
	[SIO_CMD_PEER_EXPOSE] = A(DEV) | A(PEER) | A(RID) | A(INDEX),
	[SIO_CMD_PEER_UNEXPOSE] = A(DEV) | A(PEER) | A(RID) | A(IOVA),
	[SIO_CMD_REPLY] = A(ERRNO) | A(ADDR),
	[SIO_CMD_REG_READ] = A(OFFSET) | A(SIZE),
	[SIO_CMD_SEG_TABLE] = A(NODE) | A(SEG),
	[SIO_CMD_SEG_TABLE_GET] = A(NODE),
	[SIO_CMD_DEV_TABLE] = A(NODE) | A(DATA),
	[SIO_CMD_MAP_BAR_WINDOW] = A(DEV) | A(NODE) | A(INDEX) | A(ADDR) | A(SIZE),
	[SIO_CMD_SRIOV_SET] = A(DEV) | A(SIZE),
	[SIO_CMD_MCAST_CREATE] = A(NAME) | A(INDEX) | A(SIZE),
	[SIO_CMD_MCAST_DESTROY] = A(INDEX),
	[SIO_CMD_MCAST_JOIN] = A(INDEX) | A(NODE) | A(NAME) | A(DEV) | A(KIND),
	[SIO_CMD_MCAST_LEAVE] = A(INDEX) | A(NODE),
	[SIO_CMD_MCAST_MAP] = A(INDEX) | A(DEV) | A(NODE),
	[SIO_CMD_MCAST_UNMAP] = A(INDEX) | A(DEV) | A(NODE),
	[SIO_CMD_MCAST_SIZE] = A(INDEX) | A(SIZE),
	[SIO_CMD_MSIX_ENTRY] = A(DEV) | A(NODE) | A(INDEX) | A(DATA),
};

static const char *const cmd_expect_name[SIO_CMD_MAX + 1] = {
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
	[SIO_CMD_EVENT] = "event", [SIO_CMD_SEG_CONNECT] = "seg-connect",
	[SIO_CMD_SEG_DISCONNECT] = "seg-disconnect",
	[SIO_CMD_MAP_SEG_WINDOW] = "map-seg-window",
	[SIO_CMD_UNMAP_SEG_WINDOW] = "unmap-seg-window",
	[SIO_CMD_PEER_MAP] = "peer-map", [SIO_CMD_PEER_UNMAP] = "peer-unmap",
	[SIO_CMD_PEER_EXPOSE] = "peer-expose",
	[SIO_CMD_PEER_UNEXPOSE] = "peer-unexpose", [SIO_CMD_REPLY] = "reply",
	[SIO_CMD_REG_READ] = "reg-read", [SIO_CMD_SEG_TABLE] = "seg-table",
	[SIO_CMD_SEG_TABLE_GET] = "seg-table-get",
	[SIO_CMD_DEV_TABLE] = "dev-table",
	[SIO_CMD_MAP_BAR_WINDOW] = "map-bar-window",
	[SIO_CMD_SRIOV_SET] = "sriov-set",
	[SIO_CMD_MCAST_CREATE] = "mcast-create",
	[SIO_CMD_MCAST_DESTROY] = "mcast-destroy",
	[SIO_CMD_MCAST_JOIN] = "mcast-join",
	[SIO_CMD_MCAST_LEAVE] = "mcast-leave",
	[SIO_CMD_MCAST_MAP] = "mcast-map",
	[SIO_CMD_MCAST_UNMAP] = "mcast-unmap",
	[SIO_CMD_MCAST_SIZE] = "mcast-size",
	[SIO_CMD_MSIX_ENTRY] = "msix-entry",
};

#define NBARS 4
static const u32 bar_index[NBARS] = { 0, 2, 4, 5 };

/* Attribute values, varied by command so that mix-ups show. */
static u32 u32_value(u16 type, u8 cmd)
{
	switch (type) {
	case SIO_A_SRC:
		return 0;
	case SIO_A_DST:
		return UINT32_MAX;
	case SIO_A_MODE:
		return 2;
	default:
		return 0xa5000000u | (u32)type << 16 | cmd;
	}
}

static s32 errno_value(u8 cmd)
{
	return cmd == SIO_CMD_REPLY ? INT32_MIN : -EHOSTDOWN;
}

static u64 u64_value(u16 type, u8 cmd)
{
	switch (type) {
	case SIO_A_MASK:
		return UINT64_MAX;
	case SIO_A_ADDR:
		return 0x8000000000000000ull | cmd;
	case SIO_A_SIZE:
		return 0xfedcba9876543210ull;
	case SIO_A_SEQ:
		return UINT64_MAX - cmd;
	default:
		return 0x0123456789abcdefull ^ ((u64)type << 56) ^ cmd;
	}
}

static u32 data_len(u8 cmd)
{
	/* the largest allowed block, and an empty one */
	return cmd == SIO_CMD_CFG_WRITE ? SIO_DATA_MAX : 0;
}

static u8 data_byte(u32 i)
{
	return (u8)(i * 7 + 3);
}

static void name_value(u8 cmd, char *s)
{
	if (cmd == SIO_CMD_SEG_CREATE) {
		/* the longest name: SIO_NAME_MAX bytes with the NUL */
		memset(s, 'z', SIO_NAME_MAX - 1);
		s[SIO_NAME_MAX - 1] = '\0';
	} else {
		snprintf(s, SIO_NAME_MAX, "seg-%u", cmd);
	}
}

static void put_bar(struct sio_msg *m, u32 i)
{
	int nest = sio_msg_nest_start(m, SIO_A_BAR);

	assert_true(nest >= SIO_MSG_HDRLEN);
	assert_int_equal(sio_msg_put_u32(m, SIO_A_INDEX, bar_index[i]), 0);
	assert_int_equal(sio_msg_put_u64(m, SIO_A_ADDR,
					 0xf000000000ull + i * 0x100000ull), 0);
	assert_int_equal(sio_msg_put_u64(m, SIO_A_SIZE, 0x4000ull << i), 0);
	assert_int_equal(sio_msg_put_u32(m, SIO_A_FLAGS, i | 0x80000000u), 0);
	assert_int_equal(sio_msg_nest_end(m, nest), 0);
}

/* SEG_TABLE records: every field, name and sizes varied by record. */
#define NSEGS 3

static void put_seg(struct sio_msg *m, u32 i)
{
	int nest = sio_msg_nest_start(m, SIO_A_SEG);
	char name[SIO_NAME_MAX];

	assert_true(nest >= SIO_MSG_HDRLEN);
	snprintf(name, sizeof(name), "ring%u", i);
	assert_int_equal(sio_msg_put_str(m, SIO_A_NAME, name), 0);
	assert_int_equal(sio_msg_put_u32(m, SIO_A_INDEX, 100 + i), 0);
	assert_int_equal(sio_msg_put_u64(m, SIO_A_SIZE, 0x10000ull << i), 0);
	assert_int_equal(sio_msg_put_u64(m, SIO_A_ADDR, 0x100000000ull + i), 0);
	assert_int_equal(sio_msg_put_u64(m, SIO_A_OFFSET, 0x5000ull * i), 0);
	assert_int_equal(sio_msg_put_u32(m, SIO_A_FLAGS, i & 1), 0);
	assert_int_equal(sio_msg_put_u64(m, SIO_A_MASK, 1ull << i), 0);
	assert_int_equal(sio_msg_nest_end(m, nest), 0);
}

static void check_segs(const struct sio_parsed *p)
{
	struct sio_nla a, f;
	char name[SIO_NAME_MAX];
	u32 pos = 0, n = 0;

	while (sio_nla_next(p->attrs, p->attrs_len, &pos, &a)) {
		if (a.type != SIO_A_SEG)
			continue;
		assert_true(n < NSEGS);
		snprintf(name, sizeof(name), "ring%u", n);
		assert_int_equal(sio_nla_find(&a, SIO_A_NAME, &f), 0);
		assert_string_equal(sio_nla_str(&f), name);
		assert_int_equal(sio_nla_find(&a, SIO_A_INDEX, &f), 0);
		assert_int_equal(sio_nla_u32(&f), 100 + n);
		assert_int_equal(sio_nla_find(&a, SIO_A_SIZE, &f), 0);
		assert_true(sio_nla_u64(&f) == 0x10000ull << n);
		assert_int_equal(sio_nla_find(&a, SIO_A_ADDR, &f), 0);
		assert_true(sio_nla_u64(&f) == 0x100000000ull + n);
		assert_int_equal(sio_nla_find(&a, SIO_A_OFFSET, &f), 0);
		assert_true(sio_nla_u64(&f) == 0x5000ull * n);
		assert_int_equal(sio_nla_find(&a, SIO_A_FLAGS, &f), 0);
		assert_int_equal(sio_nla_u32(&f), n & 1);
		assert_int_equal(sio_nla_find(&a, SIO_A_MASK, &f), 0);
		assert_true(sio_nla_u64(&f) == 1ull << n);
		n++;
	}
	assert_int_equal(n, NSEGS);
}

static void put_value(struct sio_msg *m, u16 t, u8 cmd)
{
	static u8 data[SIO_DATA_MAX];
	char name[SIO_NAME_MAX];
	u32 i;

	switch (t) {
	case SIO_A_ERRNO:
		assert_int_equal(sio_msg_put_s32(m, t, errno_value(cmd)), 0);
		break;
	case SIO_A_ADDR: case SIO_A_SIZE: case SIO_A_IOVA: case SIO_A_OFFSET:
	case SIO_A_MASK: case SIO_A_SEQ: case SIO_A_TIME:
		assert_int_equal(sio_msg_put_u64(m, t, u64_value(t, cmd)), 0);
		break;
	case SIO_A_NAME:
		name_value(cmd, name);
		assert_int_equal(sio_msg_put_str(m, t, name), 0);
		break;
	case SIO_A_DATA:
		for (i = 0; i < SIO_DATA_MAX; i++)
			data[i] = data_byte(i);
		assert_int_equal(sio_msg_put_bin(m, t, data, data_len(cmd)), 0);
		break;
	case SIO_A_BAR:
		for (i = 0; i < NBARS; i++)
			put_bar(m, i);
		break;
	case SIO_A_SEG:
		for (i = 0; i < NSEGS; i++)
			put_seg(m, i);
		break;
	default:
		assert_int_equal(sio_msg_put_u32(m, t, u32_value(t, cmd)), 0);
	}
}

/* Builds the representative message of cmd plus SRC and DST into buf. */
static u32 build_cmd(u8 *buf, u32 cap, u8 cmd)
{
	struct sio_msg m;
	u16 t;
	int len;

	assert_int_equal(sio_msg_init(&m, buf, cap, cmd, SIO_F_REQUEST,
				      0x1000u + cmd), 0);
	put_value(&m, SIO_A_SRC, cmd);
	put_value(&m, SIO_A_DST, cmd);
	for (t = 1; t <= SIO_A_MAX; t++)
		if (cmd_attrs[cmd] & SIO_ATTR_BIT(t))
			put_value(&m, t, cmd);
	len = sio_msg_finish(&m);
	assert_true(len >= SIO_MSG_HDRLEN);
	return (u32)len;
}

static void check_bars(const struct sio_parsed *p)
{
	struct sio_nla a, f;
	u32 pos = 0, n = 0;

	while (sio_nla_next(p->attrs, p->attrs_len, &pos, &a)) {
		if (a.type != SIO_A_BAR)
			continue;
		assert_true(n < NBARS);
		assert_int_equal(sio_nla_find(&a, SIO_A_INDEX, &f), 0);
		assert_int_equal(sio_nla_u32(&f), bar_index[n]);
		assert_int_equal(sio_nla_find(&a, SIO_A_ADDR, &f), 0);
		assert_true(sio_nla_u64(&f) == 0xf000000000ull + n * 0x100000ull);
		assert_int_equal(sio_nla_find(&a, SIO_A_SIZE, &f), 0);
		assert_true(sio_nla_u64(&f) == 0x4000ull << n);
		assert_int_equal(sio_nla_find(&a, SIO_A_FLAGS, &f), 0);
		assert_int_equal(sio_nla_u32(&f), n | 0x80000000u);
		assert_int_equal(sio_nla_find(&a, SIO_A_DEV, &f), -ENOENT);
		n++;
	}
	assert_int_equal(n, NBARS);
	/* tb holds the last BAR */
	assert_int_equal(sio_nla_find(&p->tb[SIO_A_BAR], SIO_A_INDEX, &f), 0);
	assert_int_equal(sio_nla_u32(&f), bar_index[NBARS - 1]);
}

static void check_value(const struct sio_parsed *p, u16 t, u8 cmd)
{
	const struct sio_nla *a = &p->tb[t];
	char name[SIO_NAME_MAX];
	u32 i;

	assert_int_equal(a->type, t);
	switch (t) {
	case SIO_A_ERRNO:
		assert_int_equal(sio_nla_s32(a), errno_value(cmd));
		break;
	case SIO_A_ADDR: case SIO_A_SIZE: case SIO_A_IOVA: case SIO_A_OFFSET:
	case SIO_A_MASK: case SIO_A_SEQ: case SIO_A_TIME:
		assert_true(sio_nla_u64(a) == u64_value(t, cmd));
		break;
	case SIO_A_NAME:
		name_value(cmd, name);
		assert_string_equal(sio_nla_str(a), name);
		break;
	case SIO_A_DATA:
		assert_int_equal(a->len, data_len(cmd));
		for (i = 0; i < a->len; i++)
			assert_int_equal(a->data[i], data_byte(i));
		break;
	case SIO_A_BAR:
		check_bars(p);
		break;
	case SIO_A_SEG:
		check_segs(p);
		break;
	default:
		assert_int_equal(sio_nla_u32(a), u32_value(t, cmd));
	}
}

/* ---- round trips ---------------------------------------------------------- */

static void test_every_command_round_trips_with_its_attributes(void **state)
{
	static u8 buf[SIO_MSG_MAX];
	struct sio_parsed p;
	u64 want;
	u16 t;
	u8 cmd;

	(void)state;
	for (cmd = 1; cmd <= SIO_CMD_MAX; cmd++) {
		u32 len = build_cmd(buf, sizeof(buf), cmd);

		assert_int_equal(sio_msg_parse(buf, len, &p), 0);
		assert_int_equal(p.cmd, cmd);
		assert_int_equal(p.version, SIO_GENL_VERSION);
		assert_int_equal(p.seq, 0x1000u + cmd);
		assert_int_equal(p.flags, SIO_F_REQUEST);
		assert_int_equal(p.pid, 0);
		assert_ptr_equal(p.attrs, buf + SIO_MSG_HDRLEN);
		assert_int_equal(p.attrs_len, len - SIO_MSG_HDRLEN);
		want = cmd_attrs[cmd] | A(SRC) | A(DST);
		for (t = 0; t <= SIO_A_MAX; t++) {
			assert_int_equal(p.present[t], !!(want & SIO_ATTR_BIT(t)));
			if (p.present[t])
				check_value(&p, t, cmd);
			else
				assert_null(p.tb[t].data);
		}
		assert_int_equal(sio_msg_require(&p, want), 0);
		assert_string_equal(sio_cmd_name(cmd), cmd_expect_name[cmd]);
	}
}

static void test_integer_extremes_round_trip(void **state)
{
	static const u32 u32s[] = { 0, 1, 0x80000000u, UINT32_MAX };
	static const s32 s32s[] = { 0, -1, INT32_MIN, INT32_MAX, -EHOSTDOWN };
	static const u64 u64s[] = { 0, 1, 0xffffffffull, 0x100000000ull,
				    0x8000000000000000ull, UINT64_MAX };
	u8 buf[256];
	struct sio_msg m;
	struct sio_parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < 6; i++) {
		sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_REPLY, SIO_F_REPLY, 9);
		sio_msg_put_u32(&m, SIO_A_NODE, u32s[i % 4]);
		sio_msg_put_s32(&m, SIO_A_ERRNO, s32s[i % 5]);
		sio_msg_put_u64(&m, SIO_A_ADDR, u64s[i]);
		assert_int_equal(sio_msg_parse(buf, (u32)sio_msg_finish(&m), &p), 0);
		assert_int_equal(sio_nla_u32(&p.tb[SIO_A_NODE]), u32s[i % 4]);
		assert_int_equal(sio_nla_s32(&p.tb[SIO_A_ERRNO]), s32s[i % 5]);
		assert_true(sio_nla_u64(&p.tb[SIO_A_ADDR]) == u64s[i]);
	}
}

static void test_wire_layout_is_little_endian_and_padded(void **state)
{
	static const u8 want[] = {
		40, 0, 0, 0,	0x10, 0,	SIO_F_REPLY, 0,
		0x78, 0x56, 0x34, 0x12,		0, 0, 0, 0,
		SIO_CMD_HEARTBEAT, SIO_GENL_VERSION, 0, 0,
		8, 0, SIO_A_NODE, 0,		0x04, 0x03, 0x02, 0x01,
		7, 0, SIO_A_NAME, 0,		'a', 'b', 0, 0,
		4, 0, SIO_A_BAR, 0x80,
	};
	u8 buf[64];
	struct sio_msg m;
	int nest;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_HEARTBEAT, SIO_F_REPLY,
		     0x12345678);
	sio_msg_put_u32(&m, SIO_A_NODE, 0x01020304);
	sio_msg_put_str(&m, SIO_A_NAME, "ab");
	nest = sio_msg_nest_start(&m, SIO_A_BAR);
	assert_int_equal(nest, 36);
	assert_int_equal(sio_msg_nest_end(&m, nest), 0);
	assert_int_equal(sio_msg_finish(&m), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(buf[sizeof(want)], 0xee);
}

static void test_unaligned_buffers_build_and_parse(void **state)
{
	u8 area[128], copy[128];
	struct sio_msg m;
	struct sio_parsed p;
	int len;

	(void)state;
	sio_msg_init(&m, area + 1, sizeof(area) - 1, SIO_CMD_SEG_SIZE, 0, 5);
	sio_msg_put_u32(&m, SIO_A_NODE, 0xcafef00d);
	sio_msg_put_str(&m, SIO_A_NAME, "odd");
	sio_msg_put_u64(&m, SIO_A_SIZE, 0x1122334455667788ull);
	len = sio_msg_finish(&m);
	assert_true(len > 0);
	memcpy(copy + 3, area + 1, (size_t)len);
	assert_int_equal(sio_msg_parse(copy + 3, (u32)len, &p), 0);
	assert_int_equal(sio_nla_u32(&p.tb[SIO_A_NODE]), 0xcafef00d);
	assert_true(sio_nla_u64(&p.tb[SIO_A_SIZE]) == 0x1122334455667788ull);
	assert_string_equal(sio_nla_str(&p.tb[SIO_A_NAME]), "odd");
}

static void test_strings_of_every_allowed_length_round_trip(void **state)
{
	char name[SIO_NAME_MAX];
	u8 buf[128];
	struct sio_msg m;
	struct sio_parsed p;
	u32 n;

	(void)state;
	for (n = 0; n < SIO_NAME_MAX; n++) {
		memset(name, 'a' + (int)(n % 26), n);
		name[n] = '\0';
		sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_SEG_CREATE, 0, n);
		assert_int_equal(sio_msg_put_str(&m, SIO_A_NAME, name), 0);
		assert_int_equal(sio_msg_put_u32(&m, SIO_A_NODE, n), 0);
		assert_int_equal(sio_msg_finish(&m),
				 SIO_MSG_HDRLEN + SIO_NLA_ALIGN(4 + n + 1) + 8);
		assert_int_equal(sio_msg_parse(buf, m.len, &p), 0);
		assert_int_equal(p.tb[SIO_A_NAME].len, n + 1);
		assert_string_equal(sio_nla_str(&p.tb[SIO_A_NAME]), name);
		assert_int_equal(sio_nla_u32(&p.tb[SIO_A_NODE]), n);
	}
}

static void test_binary_data_empty_odd_and_max_round_trip(void **state)
{
	static const u32 lens[] = { 0, 1, 2, 3, 4, 5, SIO_DATA_MAX - 1,
				    SIO_DATA_MAX };
	static u8 data[SIO_DATA_MAX], buf[SIO_MSG_MAX];
	struct sio_msg m;
	struct sio_parsed p;
	size_t i;
	u32 k;

	(void)state;
	for (k = 0; k < SIO_DATA_MAX; k++)
		data[k] = (u8)(k ^ (k >> 8));
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_CFG_WRITE, 0, 1);
		assert_int_equal(sio_msg_put_bin(&m, SIO_A_DATA, data, lens[i]), 0);
		assert_int_equal(sio_msg_put_u64(&m, SIO_A_OFFSET, lens[i]), 0);
		assert_int_equal(sio_msg_parse(buf, (u32)sio_msg_finish(&m), &p), 0);
		assert_int_equal(p.tb[SIO_A_DATA].len, lens[i]);
		assert_memory_equal(p.tb[SIO_A_DATA].data, data, lens[i]);
		assert_true(sio_nla_u64(&p.tb[SIO_A_OFFSET]) == lens[i]);
	}
}

static void test_nested_bars_iterate_back_in_order(void **state)
{
	u8 buf[1024];
	struct sio_msg m;
	struct sio_parsed p;
	struct sio_nla a, f;
	u32 pos = 0, i, bars = 0, others = 0;
	int nest;

	(void)state;
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_BORROW_GRANT, SIO_F_REPLY, 3);
	for (i = 0; i < 6; i++) {
		/* top-level attributes between the BARs must not disturb them */
		sio_msg_put_u32(&m, SIO_A_RID, 100 + i);
		nest = sio_msg_nest_start(&m, SIO_A_BAR);
		sio_msg_put_u32(&m, SIO_A_INDEX, i);
		sio_msg_put_u64(&m, SIO_A_SIZE, (u64)(i + 1) << 32);
		sio_msg_nest_end(&m, nest);
	}
	/* an empty BAR is well formed; its fields are simply absent */
	nest = sio_msg_nest_start(&m, SIO_A_BAR);
	sio_msg_nest_end(&m, nest);
	assert_int_equal(sio_msg_parse(buf, (u32)sio_msg_finish(&m), &p), 0);
	while (sio_nla_next(p.attrs, p.attrs_len, &pos, &a)) {
		if (a.type == SIO_A_RID) {
			assert_int_equal(sio_nla_u32(&a), 100 + others);
			others++;
			continue;
		}
		assert_int_equal(a.type, SIO_A_BAR);	/* flag stripped */
		if (bars == 6) {
			assert_int_equal(a.len, 0);
			assert_int_equal(sio_nla_find(&a, SIO_A_INDEX, &f), -ENOENT);
		} else {
			assert_int_equal(sio_nla_find(&a, SIO_A_INDEX, &f), 0);
			assert_int_equal(sio_nla_u32(&f), bars);
			assert_int_equal(sio_nla_find(&a, SIO_A_SIZE, &f), 0);
			assert_true(sio_nla_u64(&f) == (u64)(bars + 1) << 32);
			assert_int_equal(sio_nla_find(&a, SIO_A_ADDR, &f), -ENOENT);
		}
		bars++;
	}
	assert_int_equal(pos, p.attrs_len);
	assert_int_equal(bars, 7);
	assert_int_equal(others, 6);
	assert_int_equal(sio_nla_u32(&p.tb[SIO_A_RID]), 105);	/* last wins */
}

static void test_cmd_names_are_lowercase_and_unknown_outside_range(void **state)
{
	const char *s;
	u32 cmd;

	(void)state;
	for (cmd = 1; cmd <= SIO_CMD_MAX; cmd++) {
		assert_string_equal(sio_cmd_name((u8)cmd), cmd_expect_name[cmd]);
		for (s = sio_cmd_name((u8)cmd); *s; s++)
			assert_true((*s >= 'a' && *s <= 'z') || *s == '-');
	}
	assert_string_equal(sio_cmd_name(SIO_CMD_BORROW_REQ), "borrow-req");
	assert_string_equal(sio_cmd_name(0), "unknown");
	assert_string_equal(sio_cmd_name(SIO_CMD_MAX + 1), "unknown");
	assert_string_equal(sio_cmd_name(255), "unknown");
}

static void test_accessors_on_absent_or_odd_attributes_return_zero(void **state)
{
	struct sio_nla none = { 0, 0, NULL };
	static const u8 bytes[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct sio_nla odd = { 3, SIO_A_NODE, bytes };

	(void)state;
	assert_int_equal(sio_nla_u32(&none), 0);
	assert_int_equal(sio_nla_s32(&none), 0);
	assert_true(sio_nla_u64(&none) == 0);
	assert_string_equal(sio_nla_str(&none), "");
	assert_int_equal(sio_nla_u32(&odd), 0);
	assert_true(sio_nla_u64(&odd) == 0);
	assert_string_equal(sio_nla_str(&odd), "");	/* not terminated */
	assert_int_equal(sio_nla_find(&none, SIO_A_INDEX, &odd), -ENOENT);
}

/* ---- builder errors -------------------------------------------------------- */

/* Appends a fixed mix of attributes; returns the first error, else 0. */
static int build_mix(struct sio_msg *m)
{
	static const u8 seven[7] = { 1, 2, 3, 4, 5, 6, 7 };
	int nest, err = 0, rc;

#define STEP(call) do { rc = (call); if (rc < 0 && !err) err = rc; } while (0)
	STEP(sio_msg_put_u32(m, SIO_A_DEV, 1));
	STEP(sio_msg_put_s32(m, SIO_A_ERRNO, -1));
	STEP(sio_msg_put_u64(m, SIO_A_ADDR, 2));
	STEP(sio_msg_put_str(m, SIO_A_NAME, "twelve-chars"));
	STEP(sio_msg_put_bin(m, SIO_A_DATA, seven, 7));
	nest = sio_msg_nest_start(m, SIO_A_BAR);
	STEP(nest);
	STEP(sio_msg_put_u32(m, SIO_A_INDEX, 3));
	STEP(sio_msg_put_u64(m, SIO_A_SIZE, 4));
	STEP(sio_msg_nest_end(m, nest));
	STEP(sio_msg_put_u32(m, SIO_A_RID, 5));
#undef STEP
	return err;
}

static void test_builder_overflow_is_sticky_and_never_writes_past_cap(void **state)
{
	/* 20 + 8 + 8 + 12 + 20 + 12 + 4 + 8 + 12 + 8 */
	const u32 full = 112;
	struct sio_msg m;
	struct sio_parsed p;
	u32 cap, i;

	(void)state;
	for (cap = 0; cap <= full + 8; cap++) {
		u8 *area = malloc(cap + GUARD);
		int err;

		assert_non_null(area);
		memset(area, CANARY, cap + GUARD);
		sio_msg_init(&m, area, cap, SIO_CMD_BORROW_GRANT, 0, cap);
		err = build_mix(&m);
		for (i = cap; i < cap + GUARD; i++)
			assert_int_equal(area[i], CANARY);
		assert_true(m.len <= cap);
		if (cap >= full) {
			assert_int_equal(err, 0);
			assert_int_equal(sio_msg_finish(&m), full);
			assert_int_equal(sio_msg_parse(area, full, &p), 0);
			free(area);
			continue;
		}
		/* the first failure is -EMSGSIZE and everything after repeats it */
		assert_int_equal(err, -EMSGSIZE);
		assert_int_equal(m.err, -EMSGSIZE);
		assert_int_equal(sio_msg_put_u32(&m, SIO_A_NODE, 1), -EMSGSIZE);
		assert_int_equal(sio_msg_put_str(&m, SIO_A_NAME, ""), -EMSGSIZE);
		assert_int_equal(sio_msg_put_bin(&m, SIO_A_DATA, "", 0), -EMSGSIZE);
		assert_int_equal(sio_msg_nest_start(&m, SIO_A_BAR), -EMSGSIZE);
		assert_int_equal(sio_msg_nest_end(&m, SIO_MSG_HDRLEN), -EMSGSIZE);
		assert_int_equal(sio_msg_finish(&m), -EMSGSIZE);
		for (i = cap; i < cap + GUARD; i++)
			assert_int_equal(area[i], CANARY);
		free(area);
	}
}

static void test_failed_put_leaves_the_built_part_intact(void **state)
{
	u8 buf[32 + GUARD], before[32];
	struct sio_msg m;
	u32 i;

	(void)state;
	memset(buf, CANARY, sizeof(buf));
	sio_msg_init(&m, buf, 32, SIO_CMD_BORROW, 0, 1);
	assert_int_equal(sio_msg_put_u32(&m, SIO_A_DEV, 7), 0);	/* 28 bytes */
	memcpy(before, buf, 32);
	/* 8 more bytes do not fit in the 4 left: nothing may be written */
	assert_int_equal(sio_msg_put_u32(&m, SIO_A_NODE, 8), -EMSGSIZE);
	assert_int_equal(m.len, 28);
	assert_memory_equal(buf, before, 32);
	for (i = 32; i < sizeof(buf); i++)
		assert_int_equal(buf[i], CANARY);
}

static void test_init_with_buffer_smaller_than_header_fails(void **state)
{
	u8 buf[SIO_MSG_HDRLEN + GUARD];
	struct sio_msg m;
	u32 cap, i;

	(void)state;
	for (cap = 0; cap < SIO_MSG_HDRLEN; cap++) {
		memset(buf, CANARY, sizeof(buf));
		assert_int_equal(sio_msg_init(&m, buf, cap, SIO_CMD_LEND, 0, 0),
				 -EMSGSIZE);
		assert_int_equal(sio_msg_put_u32(&m, SIO_A_DEV, 1), -EMSGSIZE);
		assert_int_equal(sio_msg_finish(&m), -EMSGSIZE);
		for (i = cap; i < sizeof(buf); i++)
			assert_int_equal(buf[i], CANARY);
	}
	assert_int_equal(sio_msg_init(&m, NULL, 100, SIO_CMD_LEND, 0, 0),
			 -EMSGSIZE);
	memset(buf, CANARY, sizeof(buf));
	assert_int_equal(sio_msg_init(&m, buf, SIO_MSG_HDRLEN, SIO_CMD_LEND,
				      0, 0), 0);
	assert_int_equal(sio_msg_finish(&m), SIO_MSG_HDRLEN);
	assert_int_equal(buf[SIO_MSG_HDRLEN], CANARY);
}

static void test_builder_caps_messages_at_msg_max(void **state)
{
	static u8 big[2 * SIO_MSG_MAX], data[SIO_DATA_MAX];
	struct sio_msg m;
	struct sio_parsed p;

	(void)state;
	/* a larger buffer does not allow a message no receiver accepts */
	sio_msg_init(&m, big, sizeof(big), SIO_CMD_EVENT, 0, 1);
	assert_int_equal(sio_msg_put_bin(&m, SIO_A_DATA, data, SIO_DATA_MAX), 0);
	assert_int_equal(sio_msg_put_bin(&m, SIO_A_DATA, data, SIO_DATA_MAX - 32),
			 0);
	assert_int_equal(sio_msg_put_bin(&m, SIO_A_DATA, data, SIO_DATA_MAX),
			 -EMSGSIZE);
	assert_int_equal(sio_msg_finish(&m), -EMSGSIZE);
	/* up to exactly SIO_MSG_MAX is fine */
	sio_msg_init(&m, big, sizeof(big), SIO_CMD_EVENT, 0, 1);
	sio_msg_put_bin(&m, SIO_A_DATA, data, SIO_DATA_MAX);
	sio_msg_put_bin(&m, SIO_A_DATA, data,
			SIO_MSG_MAX - SIO_MSG_HDRLEN - 2 * 4 - SIO_DATA_MAX);
	assert_int_equal(sio_msg_finish(&m), SIO_MSG_MAX);
	assert_int_equal(sio_msg_parse(big, SIO_MSG_MAX, &p), 0);
}

static void test_overlong_string_is_rejected_and_sticky(void **state)
{
	char *name = malloc(SIO_NAME_MAX);	/* no NUL anywhere */
	char longer[SIO_NAME_MAX + 1];
	u8 buf[128];
	struct sio_msg m;

	(void)state;
	assert_non_null(name);
	memset(name, 'x', SIO_NAME_MAX);
	memset(longer, 'y', SIO_NAME_MAX);
	longer[SIO_NAME_MAX] = '\0';
	/* SIO_NAME_MAX characters need SIO_NAME_MAX + 1 bytes: one too many */
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_SEG_CREATE, 0, 1);
	assert_int_equal(sio_msg_put_str(&m, SIO_A_NAME, longer), -EINVAL);
	assert_int_equal(m.len, SIO_MSG_HDRLEN);
	assert_int_equal(sio_msg_put_u32(&m, SIO_A_NODE, 1), -EINVAL);
	assert_int_equal(sio_msg_put_str(&m, SIO_A_NAME, "ok"), -EINVAL);
	assert_int_equal(sio_msg_finish(&m), -EINVAL);
	/* the builder must not read past SIO_NAME_MAX bytes of the source */
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_SEG_CREATE, 0, 1);
	assert_int_equal(sio_msg_put_str(&m, SIO_A_NAME, name), -EINVAL);
	free(name);
}

static void test_overlong_data_is_rejected_and_sticky(void **state)
{
	static u8 data[SIO_DATA_MAX + 1], buf[SIO_MSG_MAX];
	struct sio_msg m;

	(void)state;
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_CFG_WRITE, 0, 1);
	assert_int_equal(sio_msg_put_bin(&m, SIO_A_DATA, data, SIO_DATA_MAX + 1),
			 -EINVAL);
	assert_int_equal(sio_msg_put_bin(&m, SIO_A_DATA, data, 1), -EINVAL);
	assert_int_equal(sio_msg_finish(&m), -EINVAL);
}

static void test_nest_end_with_bogus_offset_fails(void **state)
{
	u8 buf[128];
	struct sio_msg m;

	(void)state;
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_BORROW_GRANT, 0, 1);
	assert_int_equal(sio_msg_nest_end(&m, 2), -EINVAL);
	assert_int_equal(sio_msg_finish(&m), -EINVAL);
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_BORROW_GRANT, 0, 1);
	assert_int_equal(sio_msg_nest_end(&m, 1000), -EINVAL);
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_BORROW_GRANT, 0, 1);
	assert_int_equal(sio_msg_nest_end(&m, -EMSGSIZE), -EINVAL);
}

/* ---- parser rejections --------------------------------------------------- */

static void test_parse_rejects_empty_and_shorter_than_header(void **state)
{
	struct raw r;
	struct sio_parsed p;
	u32 len;

	(void)state;
	assert_int_equal(sio_msg_parse(NULL, 0, &p), -EBADMSG);
	assert_int_equal(sio_msg_parse(NULL, 64, &p), -EBADMSG);
	raw_init(&r, SIO_CMD_LEND);
	assert_int_equal(parse_exact(r.b, 0), -EBADMSG);
	for (len = 1; len < SIO_MSG_HDRLEN; len++) {
		sio_put_le32(r.b, len);	/* even when the header agrees */
		assert_int_equal(parse_exact(r.b, len), -EBADMSG);
	}
	/* a bare header is a valid message without attributes */
	assert_int_equal(raw_parse(&r), 0);
}

static void test_parse_rejects_header_length_mismatch(void **state)
{
	struct raw r;
	u32 len;

	(void)state;
	raw_init(&r, SIO_CMD_BORROW);
	raw_u32(&r, SIO_A_DEV, 1);
	raw_u32(&r, SIO_A_NODE, 2);
	len = raw_finish(&r);
	assert_int_equal(parse_exact(r.b, len), 0);
	sio_put_le32(r.b, len + 4);		/* header claims more */
	assert_int_equal(parse_exact(r.b, len), -EBADMSG);
	sio_put_le32(r.b, len + 1);
	assert_int_equal(parse_exact(r.b, len), -EBADMSG);
	sio_put_le32(r.b, len - 8);		/* header claims less */
	assert_int_equal(parse_exact(r.b, len), -EBADMSG);
	sio_put_le32(r.b, 0);
	assert_int_equal(parse_exact(r.b, len), -EBADMSG);
	sio_put_le32(r.b, 0xffffffffu);
	assert_int_equal(parse_exact(r.b, len), -EBADMSG);
}

static void test_parse_rejects_message_longer_than_msg_max(void **state)
{
	static u8 data[SIO_DATA_MAX];
	static struct raw r;

	(void)state;
	raw_init(&r, SIO_CMD_EVENT);
	raw_attr(&r, SIO_A_DATA, data, SIO_DATA_MAX);
	raw_attr(&r, SIO_A_DATA, data,
		 SIO_MSG_MAX - SIO_MSG_HDRLEN - 2 * 4 - SIO_DATA_MAX);
	assert_int_equal(r.len, SIO_MSG_MAX);
	assert_int_equal(raw_parse(&r), 0);
	raw_u32(&r, SIO_A_KIND, 1);
	assert_int_equal(raw_parse(&r), -EBADMSG);
	/* one byte over: a last attribute without its padding */
	raw_init(&r, SIO_CMD_EVENT);
	raw_attr(&r, SIO_A_DATA, data, SIO_DATA_MAX);
	raw_attr(&r, SIO_A_DATA, data,
		 SIO_MSG_MAX - SIO_MSG_HDRLEN - 2 * 4 - SIO_DATA_MAX - 4);
	raw_hdr(&r, 5, SIO_A_DATA);
	raw_bytes(&r, data, 1);
	assert_int_equal(r.len, SIO_MSG_MAX + 1);
	assert_int_equal(raw_parse(&r), -EBADMSG);
}

static void test_parse_rejects_wrong_version_but_reports_header(void **state)
{
	static const u8 versions[] = { 0, SIO_GENL_VERSION + 1, 255 };
	struct raw r;
	struct sio_parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(versions); i++) {
		raw_init(&r, SIO_CMD_BORROW);
		r.b[17] = versions[i];
		assert_int_equal(sio_msg_parse(r.b, raw_finish(&r), &p), -EPROTO);
		/* an error reply can still echo the sequence number */
		assert_int_equal(p.seq, 42);
		assert_int_equal(p.version, versions[i]);
		assert_null(p.attrs);
	}
}

static void test_parse_rejects_cmd_zero_and_above_max(void **state)
{
	static const u8 cmds[] = { 0, SIO_CMD_MAX + 1, 200, 255 };
	struct raw r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cmds); i++) {
		raw_init(&r, cmds[i]);
		raw_u32(&r, SIO_A_DEV, 1);
		assert_int_equal(raw_parse(&r), -EPROTO);
	}
	raw_init(&r, SIO_CMD_MAX);
	assert_int_equal(raw_parse(&r), 0);
	raw_init(&r, 1);
	assert_int_equal(raw_parse(&r), 0);
}

static void test_parse_rejects_attribute_length_below_header(void **state)
{
	struct raw r;
	u16 alen;

	(void)state;
	for (alen = 0; alen < SIO_NLA_HDRLEN; alen++) {
		raw_init(&r, SIO_CMD_BORROW);
		raw_hdr(&r, alen, SIO_A_DEV);
		raw_bytes(&r, "\0\0\0\0", 4);
		assert_int_equal(raw_parse(&r), -EBADMSG);
	}
}

static void test_parse_rejects_attribute_overrunning_message(void **state)
{
	struct raw r;

	(void)state;
	raw_init(&r, SIO_CMD_BORROW);
	raw_hdr(&r, 12, SIO_A_DEV);
	raw_bytes(&r, "\1\0\0\0", 4);
	assert_int_equal(raw_parse(&r), -EBADMSG);
	raw_init(&r, SIO_CMD_BORROW);
	raw_hdr(&r, 0xffff, SIO_A_DATA);
	raw_bytes(&r, "\1\0\0\0", 4);
	assert_int_equal(raw_parse(&r), -EBADMSG);
	/* an attribute header cut in half */
	raw_init(&r, SIO_CMD_BORROW);
	raw_u32(&r, SIO_A_DEV, 1);
	raw_bytes(&r, "\x08\0", 2);
	assert_int_equal(raw_parse(&r), -EBADMSG);
}

static void test_parse_padding_rule(void **state)
{
	struct raw r;
	u32 start;

	(void)state;
	/* the last attribute may end without its padding ... */
	raw_init(&r, SIO_CMD_SEG_CREATE);
	raw_u32(&r, SIO_A_NODE, 1);
	raw_hdr(&r, 7, SIO_A_NAME);
	raw_bytes(&r, "ab", 3);
	assert_int_equal(r.len % 4, 3);
	assert_int_equal(raw_parse(&r), 0);
	/* ... but not with part of it */
	raw_bytes(&r, "", 1);		/* now whole: fine */
	assert_int_equal(raw_parse(&r), 0);
	raw_init(&r, SIO_CMD_SEG_CREATE);
	raw_hdr(&r, 5, SIO_A_NAME);
	raw_bytes(&r, "", 1);
	raw_bytes(&r, "\0", 2);		/* 2 of 3 padding bytes */
	assert_int_equal(raw_parse(&r), -EBADMSG);
	/* padding left out in the middle misframes what follows */
	raw_init(&r, SIO_CMD_SEG_CREATE);
	raw_hdr(&r, 7, SIO_A_NAME);
	raw_bytes(&r, "ab", 3);
	raw_u32(&r, SIO_A_NODE, 1);
	assert_int_not_equal(raw_parse(&r), 0);
	/* the same rule inside a nest: 1 of 2 padding bytes is framing */
	raw_init(&r, SIO_CMD_BORROW_GRANT);
	start = raw_nest_start(&r, SIO_A_BAR | SIO_NLA_F_NESTED);
	raw_u32(&r, SIO_A_INDEX, 1);
	raw_hdr(&r, 6, SIO_A_FLAGS);
	raw_bytes(&r, "\0\0", 3);
	raw_nest_end(&r, start);
	raw_pad(&r);
	assert_int_equal(raw_parse(&r), -EBADMSG);
}

static void test_parse_rejects_unknown_attribute_types(void **state)
{
	static const u16 types[] = { 0, SIO_A_MAX + 1, 0x3fff,
				     0x4000 | SIO_A_DEV, 0x7fff };
	struct raw r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		raw_init(&r, SIO_CMD_BORROW);
		raw_u32(&r, types[i], 1);
		assert_int_equal(raw_parse(&r), -EINVAL);
	}
}

static int is_u64_attr(u16 t)
{
	return t == SIO_A_ADDR || t == SIO_A_SIZE || t == SIO_A_IOVA ||
	       t == SIO_A_OFFSET || t == SIO_A_MASK || t == SIO_A_SEQ ||
	       t == SIO_A_TIME;
}

static void test_parse_rejects_integers_of_wrong_length(void **state)
{
	static const u8 zero[16];
	struct raw r;
	u32 plen;
	u16 t;

	(void)state;
	for (t = SIO_A_SRC; t <= SIO_A_INDEX; t++) {
		u32 good = is_u64_attr(t) ? 8 : 4;

		for (plen = 0; plen <= 12; plen++) {
			raw_init(&r, SIO_CMD_BORROW);
			raw_attr(&r, t, zero, plen);
			assert_int_equal(raw_parse(&r), plen == good ? 0 : -EINVAL);
		}
	}
}

static void test_parse_rejects_bad_strings(void **state)
{
	char s[SIO_NAME_MAX + 8];
	struct raw r;

	(void)state;
	memset(s, 'n', sizeof(s));
	/* no NUL at all */
	raw_init(&r, SIO_CMD_SEG_CREATE);
	raw_attr(&r, SIO_A_NAME, "abcd", 4);
	assert_int_equal(raw_parse(&r), -EINVAL);
	/* embedded NUL */
	raw_init(&r, SIO_CMD_SEG_CREATE);
	raw_attr(&r, SIO_A_NAME, "ab\0cd", 6);
	assert_int_equal(raw_parse(&r), -EINVAL);
	/* two NULs at the end: the first is embedded */
	raw_init(&r, SIO_CMD_SEG_CREATE);
	raw_attr(&r, SIO_A_NAME, "ab\0", 4);
	assert_int_equal(raw_parse(&r), -EINVAL);
	/* empty payload: not even a NUL */
	raw_init(&r, SIO_CMD_SEG_CREATE);
	raw_attr(&r, SIO_A_NAME, "", 0);
	assert_int_equal(raw_parse(&r), -EINVAL);
	/* a lone NUL is the empty string */
	raw_init(&r, SIO_CMD_SEG_CREATE);
	raw_attr(&r, SIO_A_NAME, "", 1);
	assert_int_equal(raw_parse(&r), 0);
	/* SIO_NAME_MAX bytes including the NUL: the longest allowed */
	s[SIO_NAME_MAX - 1] = '\0';
	raw_init(&r, SIO_CMD_SEG_CREATE);
	raw_attr(&r, SIO_A_NAME, s, SIO_NAME_MAX);
	assert_int_equal(raw_parse(&r), 0);
	/* one more is too long */
	s[SIO_NAME_MAX - 1] = 'n';
	s[SIO_NAME_MAX] = '\0';
	raw_init(&r, SIO_CMD_SEG_CREATE);
	raw_attr(&r, SIO_A_NAME, s, SIO_NAME_MAX + 1);
	assert_int_equal(raw_parse(&r), -EINVAL);
}

static void test_parse_rejects_data_longer_than_data_max(void **state)
{
	static u8 data[SIO_DATA_MAX + 4];
	static struct raw r;

	(void)state;
	raw_init(&r, SIO_CMD_CFG_WRITE);
	raw_attr(&r, SIO_A_DATA, data, SIO_DATA_MAX);
	assert_int_equal(raw_parse(&r), 0);
	raw_init(&r, SIO_CMD_CFG_WRITE);
	raw_attr(&r, SIO_A_DATA, data, SIO_DATA_MAX + 1);
	assert_int_equal(raw_parse(&r), -EINVAL);
}

static void test_parse_rejects_nested_flag_mismatch(void **state)
{
	struct raw r;
	u32 start;

	(void)state;
	/* BAR without the nested flag */
	raw_init(&r, SIO_CMD_BORROW_GRANT);
	start = raw_nest_start(&r, SIO_A_BAR);
	raw_u32(&r, SIO_A_INDEX, 0);
	raw_nest_end(&r, start);
	assert_int_equal(raw_parse(&r), -EINVAL);
	/* nested flag on plain attributes */
	raw_init(&r, SIO_CMD_BORROW);
	raw_u32(&r, SIO_A_NODE | SIO_NLA_F_NESTED, 1);
	assert_int_equal(raw_parse(&r), -EINVAL);
	raw_init(&r, SIO_CMD_CFG_WRITE);
	raw_attr(&r, SIO_A_DATA | SIO_NLA_F_NESTED, "", 0);
	assert_int_equal(raw_parse(&r), -EINVAL);
	raw_init(&r, SIO_CMD_SEG_CREATE);
	raw_attr(&r, SIO_A_NAME | SIO_NLA_F_NESTED, "a", 2);
	assert_int_equal(raw_parse(&r), -EINVAL);
	/* SEG without the nested flag */
	raw_init(&r, SIO_CMD_SEG_TABLE);
	start = raw_nest_start(&r, SIO_A_SEG);
	raw_u32(&r, SIO_A_INDEX, 0);
	raw_nest_end(&r, start);
	assert_int_equal(raw_parse(&r), -EINVAL);
}

/* A SEG holds its own fields, each once: not a BAR's RID, not a DEV. */
static void test_parse_checks_seg_fields(void **state)
{
	static const u16 bad[] = { SIO_A_DEV, SIO_A_RID, SIO_A_NODE, SIO_A_BAR };
	struct raw r;
	u32 start, i;

	(void)state;
	raw_init(&r, SIO_CMD_SEG_TABLE);
	start = raw_nest_start(&r, SIO_A_SEG | SIO_NLA_F_NESTED);
	raw_u32(&r, SIO_A_INDEX, 7);
	raw_attr(&r, SIO_A_NAME, "ring", 5);
	raw_nest_end(&r, start);
	assert_int_equal(raw_parse(&r), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		raw_init(&r, SIO_CMD_SEG_TABLE);
		start = raw_nest_start(&r, SIO_A_SEG | SIO_NLA_F_NESTED);
		raw_u32(&r, bad[i], 1);
		raw_nest_end(&r, start);
		assert_int_equal(raw_parse(&r), -EINVAL);
	}
	raw_init(&r, SIO_CMD_SEG_TABLE);
	start = raw_nest_start(&r, SIO_A_SEG | SIO_NLA_F_NESTED);
	raw_u32(&r, SIO_A_INDEX, 7);
	raw_u32(&r, SIO_A_INDEX, 8);
	raw_nest_end(&r, start);
	assert_int_equal(raw_parse(&r), -EINVAL);
	/* RID belongs in neither nest; NAME only in a SEG */
	raw_init(&r, SIO_CMD_BORROW_GRANT);
	start = raw_nest_start(&r, SIO_A_BAR | SIO_NLA_F_NESTED);
	raw_attr(&r, SIO_A_NAME, "ring", 5);
	raw_nest_end(&r, start);
	assert_int_equal(raw_parse(&r), -EINVAL);
}

/* One BAR holding `inner` (already framed); returns the parse result. */
static int parse_bar_with(const void *inner, u32 n)
{
	struct raw r;
	u32 start;

	raw_init(&r, SIO_CMD_BORROW_GRANT);
	raw_u32(&r, SIO_A_DEV, 1);
	start = raw_nest_start(&r, SIO_A_BAR | SIO_NLA_F_NESTED);
	raw_bytes(&r, inner, n);
	raw_nest_end(&r, start);
	raw_pad(&r);
	raw_u32(&r, SIO_A_RID, 2);
	return raw_parse(&r);
}

static void test_parse_rejects_bad_attributes_inside_bar(void **state)
{
	struct raw in;
	u32 start;
	u16 t;

	(void)state;
	/* all five fields: fine (IOVA: a window address, peer_sep.c) */
	in.len = 0;
	raw_u32(&in, SIO_A_INDEX, 1);
	raw_u64(&in, SIO_A_ADDR, 2);
	raw_u64(&in, SIO_A_SIZE, 3);
	raw_u32(&in, SIO_A_FLAGS, 4);
	raw_u64(&in, SIO_A_IOVA, 5);
	assert_int_equal(parse_bar_with(in.b, in.len), 0);
	/* a field of the wrong size */
	in.len = 0;
	raw_u64(&in, SIO_A_INDEX, 1);
	assert_int_equal(parse_bar_with(in.b, in.len), -EINVAL);
	/* valid attributes that are not BAR fields */
	in.len = 0;
	raw_attr(&in, SIO_A_NAME, "x", 2);
	assert_int_equal(parse_bar_with(in.b, in.len), -EINVAL);
	for (t = 1; t < SIO_A_NAME; t++) {
		if (t == SIO_A_INDEX || t == SIO_A_ADDR || t == SIO_A_SIZE ||
		    t == SIO_A_FLAGS || t == SIO_A_IOVA)
			continue;
		in.len = 0;
		if (is_u64_attr(t))
			raw_u64(&in, t, 1);
		else
			raw_u32(&in, t, 1);
		assert_int_equal(parse_bar_with(in.b, in.len), -EINVAL);
	}
	in.len = 0;
	raw_attr(&in, SIO_A_DATA, "", 0);
	assert_int_equal(parse_bar_with(in.b, in.len), -EINVAL);
	/* unknown type */
	in.len = 0;
	raw_u32(&in, SIO_A_MAX + 1, 1);
	assert_int_equal(parse_bar_with(in.b, in.len), -EINVAL);
	/* a BAR inside a BAR */
	in.len = 0;
	start = raw_nest_start(&in, SIO_A_BAR | SIO_NLA_F_NESTED);
	raw_u32(&in, SIO_A_INDEX, 1);
	raw_nest_end(&in, start);
	assert_int_equal(parse_bar_with(in.b, in.len), -EINVAL);
	/* nested flag on a field */
	in.len = 0;
	raw_u32(&in, SIO_A_INDEX | SIO_NLA_F_NESTED, 1);
	assert_int_equal(parse_bar_with(in.b, in.len), -EINVAL);
	/* the same field twice */
	in.len = 0;
	raw_u32(&in, SIO_A_INDEX, 1);
	raw_u32(&in, SIO_A_INDEX, 2);
	assert_int_equal(parse_bar_with(in.b, in.len), -EINVAL);
	/* inner length below the header, and past the end of the nest */
	in.len = 0;
	raw_hdr(&in, 2, SIO_A_INDEX);
	raw_bytes(&in, "\0\0\0\0", 4);
	assert_int_equal(parse_bar_with(in.b, in.len), -EBADMSG);
	in.len = 0;
	raw_hdr(&in, 12, SIO_A_INDEX);
	raw_bytes(&in, "\0\0\0\0", 4);
	assert_int_equal(parse_bar_with(in.b, in.len), -EBADMSG);
	/* trailing bytes too short for an inner header */
	in.len = 0;
	raw_u32(&in, SIO_A_INDEX, 1);
	raw_bytes(&in, "\0\0", 2);
	assert_int_equal(parse_bar_with(in.b, in.len), -EBADMSG);
}

static void test_failed_parse_leaves_no_attribute_pointers(void **state)
{
	struct raw r;
	struct sio_parsed p;
	int t;

	(void)state;
	raw_init(&r, SIO_CMD_BORROW);
	raw_u32(&r, SIO_A_DEV, 1);
	raw_u32(&r, SIO_A_NODE, 2);
	raw_u32(&r, SIO_A_MAX + 1, 3);	/* found only after DEV and NODE */
	assert_int_equal(sio_msg_parse(r.b, raw_finish(&r), &p), -EINVAL);
	for (t = 0; t <= SIO_A_MAX; t++) {
		assert_int_equal(p.present[t], 0);
		assert_null(p.tb[t].data);
	}
	assert_null(p.attrs);
	assert_int_equal(p.attrs_len, 0);
	assert_int_equal(sio_msg_require(&p, SIO_ATTR_BIT(SIO_A_DEV)), -EINVAL);
}

/* ---- sio_msg_require --------------------------------------------------- */

static void test_require_reports_missing_attributes(void **state)
{
	struct raw r;
	struct sio_parsed p;

	(void)state;
	raw_init(&r, SIO_CMD_SEG_SIZE);
	raw_u32(&r, SIO_A_NODE, 1);
	raw_attr(&r, SIO_A_NAME, "s", 2);
	assert_int_equal(sio_msg_parse(r.b, raw_finish(&r), &p), 0);
	assert_int_equal(sio_msg_require(&p, 0), 0);
	assert_int_equal(sio_msg_require(&p, A(NODE)), 0);
	assert_int_equal(sio_msg_require(&p, A(NODE) | A(NAME)), 0);
	assert_int_equal(sio_msg_require(&p, A(NODE) | A(NAME) | A(SIZE)),
			 -EINVAL);
	assert_int_equal(sio_msg_require(&p, A(SIZE)), -EINVAL);
	assert_int_equal(sio_msg_require(&p, A(BAR)), -EINVAL);
	/* bits that name no attribute can never be satisfied */
	assert_int_equal(sio_msg_require(&p, SIO_ATTR_BIT(SIO_A_UNSPEC)),
			 -EINVAL);
	assert_int_equal(sio_msg_require(&p, A(NODE) |
					     SIO_ATTR_BIT(SIO_A_MAX + 1)),
			 -EINVAL);
	assert_int_equal(sio_msg_require(&p, 1ull << 63), -EINVAL);
}

/* ---- truncation and mutation ------------------------------------------- */

static void check_accepted(const u8 *buf, u32 len, const struct sio_parsed *p)
{
	const u8 *end = buf + len;
	struct sio_nla a, f;
	u32 pos = 0, ipos;
	int t;

	assert_ptr_equal(p->attrs, buf + SIO_MSG_HDRLEN);
	assert_int_equal(p->attrs_len, len - SIO_MSG_HDRLEN);
	for (t = 0; t <= SIO_A_MAX; t++) {
		const struct sio_nla *x = &p->tb[t];

		if (!p->present[t]) {
			assert_null(x->data);
			continue;
		}
		assert_true(t != SIO_A_UNSPEC);
		assert_int_equal(x->type, t);
		assert_true(x->data >= p->attrs && x->data <= end);
		assert_true(x->len <= (u32)(end - x->data));
		if (t == SIO_A_NAME) {
			assert_true(x->len >= 1 && x->len <= SIO_NAME_MAX);
			assert_true(strlen(sio_nla_str(x)) == (size_t)x->len - 1);
		}
	}
	while (sio_nla_next(p->attrs, p->attrs_len, &pos, &a)) {
		assert_true(a.data >= p->attrs && a.data + a.len <= end);
		if (a.type != SIO_A_BAR)
			continue;
		ipos = 0;
		while (sio_nla_next(a.data, a.len, &ipos, &f))
			assert_true(f.data >= a.data &&
				    f.data + f.len <= a.data + a.len);
		assert_int_equal(ipos, a.len);
	}
	assert_int_equal(pos, p->attrs_len);
}

static void check_rejected(const struct sio_parsed *p, int rc)
{
	int t;

	assert_true(rc == -EBADMSG || rc == -EINVAL || rc == -EPROTO);
	for (t = 0; t <= SIO_A_MAX; t++) {
		assert_int_equal(p->present[t], 0);
		assert_null(p->tb[t].data);
	}
	assert_null(p->attrs);
}

/* Parses a heap copy of exactly len bytes and checks the outcome. */
static int parse_and_check(const u8 *src, u32 len)
{
	struct sio_parsed p;
	u8 *copy = malloc(len ? len : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, src, len);
	rc = sio_msg_parse(copy, len, &p);
	if (rc == 0)
		check_accepted(copy, len, &p);
	else
		check_rejected(&p, rc);
	free(copy);
	return rc;
}

/* Whether cutting at `cut` leaves whole attributes, padding optional. */
static int cut_is_boundary(const u8 *buf, u32 len, u32 cut)
{
	const u8 *attrs = buf + SIO_MSG_HDRLEN;
	struct sio_nla a;
	u32 pos = 0, start = 0;

	if (cut == SIO_MSG_HDRLEN)
		return 1;
	while (sio_nla_next(attrs, len - SIO_MSG_HDRLEN, &pos, &a)) {
		u32 end = SIO_MSG_HDRLEN + start + SIO_NLA_HDRLEN + a.len;

		if (cut == end || cut == SIO_MSG_HDRLEN + pos)
			return 1;
		start = pos;
	}
	return 0;
}

static void truncate_all_prefixes(u8 cmd, u32 *accepted)
{
	static u8 buf[SIO_MSG_MAX], cut_buf[SIO_MSG_MAX];
	u32 len = build_cmd(buf, sizeof(buf), cmd), cut;

	for (cut = 0; cut < len; cut++) {
		/* the header still claims the full length: never accepted */
		assert_int_not_equal(parse_and_check(buf, cut), 0);
		/* the header patched to the cut: accepted on whole attributes */
		memcpy(cut_buf, buf, cut);
		if (cut >= 4)
			sio_put_le32(cut_buf, cut);
		if (cut < SIO_MSG_HDRLEN) {
			assert_int_equal(parse_and_check(cut_buf, cut), -EBADMSG);
		} else if (cut_is_boundary(buf, len, cut)) {
			assert_int_equal(parse_and_check(cut_buf, cut), 0);
			(*accepted)++;
		} else {
			assert_int_not_equal(parse_and_check(cut_buf, cut), 0);
		}
	}
}

static void test_every_truncation_is_handled_safely(void **state)
{
	u32 accepted = 0;
	u8 cmd;

	(void)state;
	for (cmd = 1; cmd <= SIO_CMD_MAX; cmd++)
		truncate_all_prefixes(cmd, &accepted);
	assert_true(accepted > SIO_CMD_MAX);
}

static u64 rng_state = 0x9e3779b97f4a7c15ull;

static u64 xorshift64(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static u32 rnd(u32 n)
{
	return (u32)(xorshift64() % n);
}

/* Values that hit the interesting cases when they land on a length field. */
static const u16 nasty16[] = {
	0, 1, 3, 4, 5, 7, 8, 9, 12, 0x7fff, 0x8000, 0xffff,
	SIO_A_BAR, SIO_A_BAR | SIO_NLA_F_NESTED, SIO_A_NAME, SIO_A_MAX + 1,
	SIO_NAME_MAX + 4, SIO_DATA_MAX + 4, SIO_DATA_MAX + 5,
};

static u32 mutate(u8 *m, u32 len)
{
	u32 ops = 1 + rnd(4), i, at;

	for (i = 0; i < ops; i++) {
		switch (rnd(5)) {
		case 0:
			m[rnd(len)] = (u8)xorshift64();
			break;
		case 1:
			m[rnd(len)] ^= (u8)(1u << rnd(8));
			break;
		case 2:
			/* mostly on attribute boundaries, where lengths live */
			at = len >= 4 && rnd(2) ? rnd(len / 4) * 4 + rnd(2) * 2
					       : rnd(len);
			if (at + 2 <= len)
				sio_put_le16(m + at, nasty16[rnd(sizeof(nasty16) /
							  sizeof(nasty16[0]))]);
			break;
		case 3:
			len = rnd(len + 1);
			break;
		default:
			/* grow by up to 8 random bytes (work has room) */
			for (at = 1 + rnd(8); at; at--)
				m[len++] = (u8)xorshift64();
			break;
		}
		if (len == 0)
			break;
	}
	/* half of the time keep the header consistent to get deeper */
	if (len >= 4 && rnd(2))
		sio_put_le32(m, len);
	return len;
}

static void test_random_mutations_never_escape_the_buffer(void **state)
{
	static u8 base[SIO_CMD_MAX + 1][SIO_MSG_MAX];
	static u8 work[SIO_MSG_MAX + 64];
	u32 base_len[SIO_CMD_MAX + 1];
	u32 i, accepted = 0, rejected = 0, reasons[3] = { 0 };
	u8 cmd;

	(void)state;
	rng_state = 0x9e3779b97f4a7c15ull;	/* fixed seed: reproducible */
	for (cmd = 1; cmd <= SIO_CMD_MAX; cmd++)
		base_len[cmd] = build_cmd(base[cmd], SIO_MSG_MAX, cmd);
	for (i = 0; i < 100000; i++) {
		u32 len;
		int rc;

		cmd = (u8)(1 + i % SIO_CMD_MAX);
		len = base_len[cmd];
		/* the big CFG_WRITE message only now and then: it is slow */
		if (cmd == SIO_CMD_CFG_WRITE && i % 16) {
			cmd = SIO_CMD_BORROW_GRANT;
			len = base_len[cmd];
		}
		memcpy(work, base[cmd], len);
		len = mutate(work, len);
		rc = parse_and_check(work, len);
		if (rc == 0) {
			accepted++;
			continue;
		}
		rejected++;
		reasons[rc == -EBADMSG ? 0 : rc == -EINVAL ? 1 : 2]++;
	}
	/* the mutations reach every outcome, so the parser was exercised */
	assert_true(accepted > 1000);
	assert_true(rejected > 1000);
	assert_true(reasons[0] > 0 && reasons[1] > 0 && reasons[2] > 0);
}

static void test_nla_next_stops_at_broken_framing(void **state)
{
	static const u8 bad[] = { 8, 0, SIO_A_DEV, 0, 1, 0, 0, 0,
				  40, 0, SIO_A_NODE, 0, 1, 0 };
	struct sio_nla a;
	u32 pos = 0;

	(void)state;
	assert_int_equal(sio_nla_next(bad, sizeof(bad), &pos, &a), 1);
	assert_int_equal(a.type, SIO_A_DEV);
	assert_int_equal(pos, 8);
	assert_int_equal(sio_nla_next(bad, sizeof(bad), &pos, &a), 0);
	pos = 0;
	assert_int_equal(sio_nla_next(bad, 0, &pos, &a), 0);
	pos = 100;
	assert_int_equal(sio_nla_next(bad, sizeof(bad), &pos, &a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_command_round_trips_with_its_attributes),
		cmocka_unit_test(test_integer_extremes_round_trip),
		cmocka_unit_test(test_wire_layout_is_little_endian_and_padded),
		cmocka_unit_test(test_unaligned_buffers_build_and_parse),
		cmocka_unit_test(test_strings_of_every_allowed_length_round_trip),
		cmocka_unit_test(test_binary_data_empty_odd_and_max_round_trip),
		cmocka_unit_test(test_nested_bars_iterate_back_in_order),
		cmocka_unit_test(test_cmd_names_are_lowercase_and_unknown_outside_range),
		cmocka_unit_test(test_accessors_on_absent_or_odd_attributes_return_zero),
		cmocka_unit_test(test_builder_overflow_is_sticky_and_never_writes_past_cap),
		cmocka_unit_test(test_failed_put_leaves_the_built_part_intact),
		cmocka_unit_test(test_init_with_buffer_smaller_than_header_fails),
		cmocka_unit_test(test_builder_caps_messages_at_msg_max),
		cmocka_unit_test(test_overlong_string_is_rejected_and_sticky),
		cmocka_unit_test(test_overlong_data_is_rejected_and_sticky),
		cmocka_unit_test(test_nest_end_with_bogus_offset_fails),
		cmocka_unit_test(test_parse_rejects_empty_and_shorter_than_header),
		cmocka_unit_test(test_parse_rejects_header_length_mismatch),
		cmocka_unit_test(test_parse_rejects_message_longer_than_msg_max),
		cmocka_unit_test(test_parse_rejects_wrong_version_but_reports_header),
		cmocka_unit_test(test_parse_rejects_cmd_zero_and_above_max),
		cmocka_unit_test(test_parse_rejects_attribute_length_below_header),
		cmocka_unit_test(test_parse_rejects_attribute_overrunning_message),
		cmocka_unit_test(test_parse_padding_rule),
		cmocka_unit_test(test_parse_rejects_unknown_attribute_types),
		cmocka_unit_test(test_parse_rejects_integers_of_wrong_length),
		cmocka_unit_test(test_parse_rejects_bad_strings),
		cmocka_unit_test(test_parse_rejects_data_longer_than_data_max),
		cmocka_unit_test(test_parse_rejects_nested_flag_mismatch),
		cmocka_unit_test(test_parse_checks_seg_fields),
		cmocka_unit_test(test_parse_rejects_bad_attributes_inside_bar),
		cmocka_unit_test(test_failed_parse_leaves_no_attribute_pointers),
		cmocka_unit_test(test_require_reports_missing_attributes),
		cmocka_unit_test(test_every_truncation_is_handled_safely),
		cmocka_unit_test(test_random_mutations_never_escape_the_buffer),
		cmocka_unit_test(test_nla_next_stops_at_broken_framing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
