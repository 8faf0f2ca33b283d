/*
 * The wire codec: every command round-trips with its attributes, and
 * truncated, malformed or randomly mutated messages are rejected without
 * reading outside the buffer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "proto.h"

static int build_sample(u8 *buf, u32 cap, u8 cmd)
{
	struct sio_msg m;
	u8 data[100];
	int nest, i;

	for (i = 0; i < 100; i++)
		data[i] = (u8)i;
	sio_msg_init(&m, buf, cap, cmd, SIO_F_REQUEST, 77);
	sio_msg_put_u32(&m, SIO_A_DEV, 0x00300002);
	sio_msg_put_s32(&m, SIO_A_ERRNO, -EHOSTDOWN);
	sio_msg_put_u64(&m, SIO_A_IOVA, 0xfedcba9876543210ull);
	sio_msg_put_str(&m, SIO_A_NAME, "host3");
	sio_msg_put_bin(&m, SIO_A_DATA, data, 3);	/* needs padding */
	for (i = 0; i < 3; i++) {
		nest = sio_msg_nest_start(&m, SIO_A_BAR);
		sio_msg_put_u32(&m, SIO_A_INDEX, (u32)i * 2);
		sio_msg_put_u64(&m, SIO_A_ADDR, 0x4000000000ull + (u64)i * 4096);
		sio_msg_put_u64(&m, SIO_A_SIZE, 16384);
		sio_msg_nest_end(&m, nest);
	}
	return sio_msg_finish(&m);
}

static void test_every_command_round_trips(void **state)
{
	u8 buf[1024];
	struct sio_parsed p;
	u8 cmd;

	(void)state;
	for (cmd = 1; cmd <= SIO_CMD_MAX; cmd++) {
		int len = build_sample(buf, sizeof(buf), cmd);

		assert_true(len > 0);
		assert_int_equal(sio_msg_parse(buf, (u32)len, &p), 0);
		assert_int_equal(p.cmd, cmd);
		assert_int_equal(p.seq, 77);
		assert_int_equal(p.flags, SIO_F_REQUEST);
		assert_int_equal(sio_nla_u32(&p.tb[SIO_A_DEV]), 0x00300002);
		assert_int_equal(sio_nla_s32(&p.tb[SIO_A_ERRNO]), -EHOSTDOWN);
		assert_true(sio_nla_u64(&p.tb[SIO_A_IOVA]) == 0xfedcba9876543210ull);
		assert_string_equal(sio_nla_str(&p.tb[SIO_A_NAME]), "host3");
		assert_int_equal(p.tb[SIO_A_DATA].len, 3);
		assert_int_equal(p.tb[SIO_A_DATA].data[2], 2);
		assert_string_not_equal(sio_cmd_name(cmd), "unknown");
	}
}

static void test_repeated_nested_bars_iterate_in_order(void **state)
{
	u8 buf[1024];
	struct sio_parsed p;
	struct sio_nla a, f;
	u32 pos = 0, n = 0;
	int len = build_sample(buf, sizeof(buf), SIO_CMD_BORROW_GRANT);

	(void)state;
	assert_int_equal(sio_msg_parse(buf, (u32)len, &p), 0);
	while (sio_nla_next(p.attrs, p.attrs_len, &pos, &a)) {
		if (a.type != SIO_A_BAR)
			continue;
		assert_int_equal(sio_nla_find(&a, SIO_A_INDEX, &f), 0);
		assert_int_equal(sio_nla_u32(&f), n * 2);
		assert_int_equal(sio_nla_find(&a, SIO_A_ADDR, &f), 0);
		assert_true(sio_nla_u64(&f) == 0x4000000000ull + n * 4096);
		assert_int_equal(sio_nla_find(&a, SIO_A_NAME, &f), -ENOENT);
		n++;
	}
	assert_int_equal(n, 3);
}

static void test_limits_of_strings_and_data(void **state)
{
	u8 buf[SIO_MSG_MAX], data[SIO_DATA_MAX + 1] = { 0 };
	char name[SIO_NAME_MAX + 1];
	struct sio_msg m;
	struct sio_parsed p;

	(void)state;
	memset(name, 'a', sizeof(name));
	name[SIO_NAME_MAX - 1] = '\0';	/* longest allowed */
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_SEG_CREATE, 0, 1);
	assert_int_equal(sio_msg_put_str(&m, SIO_A_NAME, name), 0);
	assert_int_equal(sio_msg_put_bin(&m, SIO_A_DATA, data, 0), 0);
	assert_int_equal(sio_msg_put_bin(&m, SIO_A_DATA, data, SIO_DATA_MAX), 0);
	assert_int_equal(sio_msg_parse(buf, (u32)sio_msg_finish(&m), &p), 0);
	assert_int_equal(p.tb[SIO_A_DATA].len, SIO_DATA_MAX);
	name[SIO_NAME_MAX - 1] = 'a';
	name[SIO_NAME_MAX] = '\0';	/* one too long: sticky error */
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_SEG_CREATE, 0, 1);
	assert_int_equal(sio_msg_put_str(&m, SIO_A_NAME, name), -EINVAL);
	assert_int_equal(sio_msg_put_u32(&m, SIO_A_NODE, 1), -EINVAL);
	assert_int_equal(sio_msg_finish(&m), -EINVAL);
	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_CFG_WRITE, 0, 1);
	assert_int_equal(sio_msg_put_bin(&m, SIO_A_DATA, data, SIO_DATA_MAX + 1),
			 -EINVAL);
}

static void test_builder_overflow_is_sticky_and_stays_in_bounds(void **state)
{
	u8 area[64 + 16];
	struct sio_msg m;
	u32 cap;
	int i;

	(void)state;
	for (cap = 0; cap <= 64; cap++) {
		memset(area, 0xa5, sizeof(area));
		sio_msg_init(&m, area, cap, SIO_CMD_BORROW, 0, 1);
		for (i = 0; i < 10; i++)
			sio_msg_put_u64(&m, SIO_A_ADDR, (u64)i);
		if (cap < 100)
			assert_int_equal(sio_msg_finish(&m), -EMSGSIZE);
		for (i = (int)cap; i < (int)sizeof(area); i++)
			assert_int_equal(area[i], 0xa5);
	}
}

static void put16(u8 *p, u16 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static void put32(u8 *p, u32 v)
{
	put16(p, (u16)v);
	put16(p + 2, (u16)(v >> 16));
}

/* A header plus one raw attribute, for hand-made malformed messages. */
static u32 raw_msg(u8 *buf, u8 cmd, u16 alen, u16 type, const void *payload,
		   u32 plen)
{
	u32 len = SIO_MSG_HDRLEN + SIO_NLA_ALIGN(4 + plen);

	memset(buf, 0, len);
	put32(buf, len);
	buf[16] = cmd;
	buf[17] = SIO_GENL_VERSION;
	put16(buf + 20, alen);
	put16(buf + 22, type);
	memcpy(buf + 24, payload, plen);
	return len;
}

static void test_malformed_messages_are_rejected(void **state)
{
	u8 buf[256] = { 0 };
	struct sio_parsed p;
	u32 v = 5, len;
	u64 big = 1;
	char s[8] = "ab\0cd", nonul[4] = "abcd";

	(void)state;
	assert_int_equal(sio_msg_parse(buf, 0, &p), -EBADMSG);
	assert_int_equal(sio_msg_parse(NULL, 40, &p), -EBADMSG);
	len = raw_msg(buf, SIO_CMD_BORROW, 8, SIO_A_NODE, &v, 4);
	assert_int_equal(sio_msg_parse(buf, len, &p), 0);
	assert_int_equal(sio_msg_parse(buf, len - 1, &p), -EBADMSG);
	put32(buf, len + 4);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EBADMSG);
	put32(buf, len);
	buf[17] = 9;
	assert_int_equal(sio_msg_parse(buf, len, &p), -EPROTO);
	len = raw_msg(buf, 0, 8, SIO_A_NODE, &v, 4);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EPROTO);
	len = raw_msg(buf, SIO_CMD_MAX + 1, 8, SIO_A_NODE, &v, 4);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EPROTO);
	len = raw_msg(buf, SIO_CMD_BORROW, 3, SIO_A_NODE, &v, 4);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EBADMSG);
	len = raw_msg(buf, SIO_CMD_BORROW, 200, SIO_A_NODE, &v, 4);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EBADMSG);
	len = raw_msg(buf, SIO_CMD_BORROW, 8, SIO_A_MAX + 1, &v, 4);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EINVAL);
	len = raw_msg(buf, SIO_CMD_BORROW, 12, SIO_A_NODE, &big, 8);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EINVAL);
	len = raw_msg(buf, SIO_CMD_BORROW, 8, SIO_A_ADDR, &v, 4);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EINVAL);
	len = raw_msg(buf, SIO_CMD_BORROW, 4 + 6, SIO_A_NAME, s, 6);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EINVAL);
	len = raw_msg(buf, SIO_CMD_BORROW, 8, SIO_A_NAME, nonul, 4);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EINVAL);
	len = raw_msg(buf, SIO_CMD_BORROW, 8, SIO_A_BAR, &v, 4);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EINVAL);
	len = raw_msg(buf, SIO_CMD_BORROW, 8, SIO_A_NODE | SIO_NLA_F_NESTED, &v, 4);
	assert_int_equal(sio_msg_parse(buf, len, &p), -EINVAL);
	{
		/* A BAR nest holding a NAME: not a BAR field. */
		u8 inner[8];

		put16(inner, 6);
		put16(inner + 2, SIO_A_NAME);
		inner[4] = 'x';
		inner[5] = 0;
		len = raw_msg(buf, SIO_CMD_BORROW, 12, SIO_A_BAR | SIO_NLA_F_NESTED,
			      inner, 8);
		assert_int_equal(sio_msg_parse(buf, len, &p), -EINVAL);
	}
	assert_int_equal(sio_msg_require(&p, SIO_ATTR_BIT(SIO_A_NODE)), -EINVAL);
}

static void test_every_truncation_is_rejected(void **state)
{
	u8 buf[1024], copy[1024];
	struct sio_parsed p;
	int len = build_sample(buf, sizeof(buf), SIO_CMD_BORROW_GRANT), cut;

	(void)state;
	for (cut = 0; cut < len; cut++) {
		memcpy(copy, buf, (size_t)cut);
		/* header left claiming the full length */
		assert_int_not_equal(sio_msg_parse(copy, (u32)cut, &p), 0);
		if (cut >= SIO_MSG_HDRLEN) {
			/* header patched to the cut: accepted only on a boundary */
			int rc;

			put32(copy, (u32)cut);
			rc = sio_msg_parse(copy, (u32)cut, &p);
			if (rc == 0)
				assert_true(p.attrs_len == (u32)cut - SIO_MSG_HDRLEN);
		}
	}
}

static u32 xorshift(u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void test_random_mutations_never_escape_the_buffer(void **state)
{
	u8 buf[1024], m[1024];
	struct sio_parsed p;
	int len = build_sample(buf, sizeof(buf), SIO_CMD_BORROW_GRANT), i, k;
	u32 seed = 12345, accepted = 0;

	(void)state;
	for (i = 0; i < 100000; i++) {
		u32 flips = 1 + xorshift(&seed) % 4, mlen = (u32)len;

		memcpy(m, buf, (size_t)len);
		for (k = 0; k < (int)flips; k++)
			m[xorshift(&seed) % (u32)len] = (u8)xorshift(&seed);
		if (xorshift(&seed) % 8 == 0)
			mlen = xorshift(&seed) % (u32)len;
		if (sio_msg_parse(m, mlen, &p) != 0)
			continue;
		accepted++;
		for (k = 0; k <= SIO_A_MAX; k++) {
			if (!p.present[k])
				continue;
			assert_true(p.tb[k].data >= m);
			assert_true(p.tb[k].data + p.tb[k].len <= m + mlen);
		}
	}
	assert_true(accepted > 0);	/* some mutations only touch payloads */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_command_round_trips),
		cmocka_unit_test(test_repeated_nested_bars_iterate_in_order),
		cmocka_unit_test(test_limits_of_strings_and_data),
		cmocka_unit_test(test_builder_overflow_is_sticky_and_stays_in_bounds),
		cmocka_unit_test(test_malformed_messages_are_rejected),
		cmocka_unit_test(test_every_truncation_is_rejected),
		cmocka_unit_test(test_random_mutations_never_escape_the_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
