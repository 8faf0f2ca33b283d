// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer harness for the wire protocol decoder (lib/core/proto.h).
 *
 * Any byte string may arrive from another node or from user space, so the
 * parser must never read outside the buffer (the sanitizers watch that) and
 * must be consistent with the builder.  Beyond "does not crash" it checks:
 *  - a refused message leaves no attribute pointer behind;
 *  - every attribute of an accepted message lies inside the buffer and has
 *    the payload size of its type, and the iterators see the same ones;
 *  - re-encoding an accepted message with the builder gives a message that
 *    parses to the same header and attributes (the codec round trips).
 * A violated property aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_proto: %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

static void check_inside(const struct sio_nla *a, const u8 *b, size_t len)
{
	CHECK(a->data >= b && a->data + a->len <= b + len);
}

/* BAR and SEG are the nested attributes (records of fields). */
static int is_nest(u16 type)
{
	return type == SIO_A_BAR || type == SIO_A_SEG;
}

/* Rebuilds an accepted message attribute by attribute. */
static int rebuild(const struct sio_parsed *p, u8 *out, u32 cap)
{
	struct sio_msg m;
	struct sio_nla a, f;
	u32 pos = 0, fpos;
	int nest;

	sio_msg_init(&m, out, cap, p->cmd, p->flags, p->seq);
	while (sio_nla_next(p->attrs, p->attrs_len, &pos, &a)) {
		if (!is_nest(a.type)) {
			sio_msg_put_bin(&m, a.type, a.data, a.len);
			continue;
		}
		nest = sio_msg_nest_start(&m, a.type);
		fpos = 0;
		while (sio_nla_next(a.data, a.len, &fpos, &f))
			sio_msg_put_bin(&m, f.type, f.data, f.len);
		sio_msg_nest_end(&m, nest);
	}
	return sio_msg_finish(&m);
}

/*
 * The same fields, in the same order, in two nests.  Their lengths may
 * differ: a sender may leave out the padding after the last field, which
 * the builder always writes (the fuzzer found such a nest of 21 bytes that
 * comes back as 24).
 */
static void same_fields(const struct sio_nla *x, const struct sio_nla *y)
{
	struct sio_nla f, g;
	u32 xpos = 0, ypos = 0;

	while (sio_nla_next(x->data, x->len, &xpos, &f)) {
		CHECK(sio_nla_next(y->data, y->len, &ypos, &g));
		CHECK(f.type == g.type && f.len == g.len &&
		      !memcmp(f.data, g.data, f.len));
	}
	CHECK(!sio_nla_next(y->data, y->len, &ypos, &g));
}

static void same_attrs(const struct sio_parsed *x, const struct sio_parsed *y)
{
	unsigned t;

	CHECK(x->cmd == y->cmd && x->version == y->version &&
	      x->flags == y->flags && x->seq == y->seq);
	for (t = 0; t <= SIO_A_MAX; t++) {
		CHECK(x->present[t] == y->present[t]);
		if (!x->present[t])
			continue;
		CHECK(x->tb[t].type == y->tb[t].type);
		if (is_nest((u16)t)) {
			same_fields(&x->tb[t], &y->tb[t]);
			continue;
		}
		CHECK(x->tb[t].len == y->tb[t].len &&
		      !memcmp(x->tb[t].data, y->tb[t].data, x->tb[t].len));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static u8 again[SIO_MSG_MAX];
	struct sio_parsed p, q;
	struct sio_nla a, f;
	u32 pos = 0, fpos;
	unsigned t, n = 0;
	int rc, len;

	if (size > 2 * SIO_MSG_MAX)
		return 0;
	rc = sio_msg_parse(data, (u32)size, &p);
	if (rc) {
		CHECK(rc == -EINVAL || rc == -EBADMSG || rc == -EPROTO);
		for (t = 0; t <= SIO_A_MAX; t++)
			CHECK(!p.present[t] && !p.tb[t].data);
		CHECK(!p.attrs);
		return 0;
	}
	CHECK(size >= SIO_MSG_HDRLEN && size <= SIO_MSG_MAX);
	CHECK(p.cmd >= 1 && p.cmd <= SIO_CMD_MAX);
	CHECK(strcmp(sio_cmd_name(p.cmd), "unknown"));
	for (t = 0; t <= SIO_A_MAX; t++) {
		if (!p.present[t])
			continue;
		check_inside(&p.tb[t], data, size);
		(void)sio_nla_u32(&p.tb[t]);
		(void)sio_nla_u64(&p.tb[t]);
		if (t == SIO_A_NAME)
			CHECK(strlen(sio_nla_str(&p.tb[t])) + 1 == p.tb[t].len);
		CHECK(sio_msg_require(&p, SIO_ATTR_BIT(t)) == 0);
	}
	CHECK(sio_msg_require(&p, 1) == -EINVAL);
	while (sio_nla_next(p.attrs, p.attrs_len, &pos, &a)) {
		check_inside(&a, data, size);
		CHECK(a.type >= 1 && a.type <= SIO_A_MAX && p.present[a.type]);
		n++;
		if (!is_nest(a.type))
			continue;
		fpos = 0;
		while (sio_nla_next(a.data, a.len, &fpos, &f)) {
			struct sio_nla g;

			check_inside(&f, data, size);
			CHECK(sio_nla_find(&a, f.type, &g) == 0 && g.data == f.data);
		}
	}
	CHECK(n > 0 || p.attrs_len < SIO_NLA_HDRLEN);
	len = rebuild(&p, again, sizeof(again));
	CHECK(len > 0);
	CHECK(sio_msg_parse(again, (u32)len, &q) == 0);
	same_attrs(&p, &q);
	return 0;
}
