// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The command table (lib/core/cmds.h): every command of the ABI has a
 * row, every row a request can reach has a handler, every row says
 * whether smartio.ko offers it, and smartio(4) names every command it
 * does not.  The dispatcher checks a row's required attributes before
 * anything else: a request that lacks one, from this node's user or from
 * a peer, is EINVAL and changes nothing (no state, no event, no refusal
 * counted against the peer).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "smartio_internal.h"
#include "core_int.h"

#define GENL_OF(cmd, name, handler, route, origin, req, opt, genl) \
	[SIO_CMD_##cmd] = (genl),
static const unsigned genl_of[SIO_CMD_MAX + 1] = { SIO_CMDS(GENL_OF) };

static void test_every_command_has_a_row_and_a_name(void **state)
{
	unsigned cmd;

	(void)state;
	for (cmd = 1; cmd <= SIO_CMD_MAX; cmd++) {
		assert_non_null(sio_cmd_row((u8)cmd));
		assert_string_not_equal(sio_cmd_name((u8)cmd), "unknown");
	}
	assert_null(sio_cmd_row(0));
	assert_null(sio_cmd_row(SIO_CMD_MAX + 1));
}

static void test_every_row_a_request_reaches_has_a_handler(void **state)
{
	unsigned cmd;

	(void)state;
	for (cmd = 1; cmd <= SIO_CMD_MAX; cmd++) {
		const struct sio_cmd_row *e = sio_cmd_row((u8)cmd);

		if (e->route == SIO_REPLY)
			assert_null(e->handler);
		else
			assert_non_null(e->handler);
		/* A required attribute is one the parser knows. */
		assert_int_equal(e->required & ~(((2u << SIO_A_MAX) - 1) & ~1u),
				 0);
	}
}

static void test_every_row_says_what_smartio_ko_offers(void **state)
{
	unsigned cmd;

	(void)state;
	for (cmd = 1; cmd <= SIO_CMD_MAX; cmd++) {
		assert_int_not_equal(genl_of[cmd], 0);
		/* Not offered is not offered: no permission beside it. */
		if (genl_of[cmd] & SIO_GENL_NOT_OFFERED)
			assert_int_equal(genl_of[cmd], SIO_GENL_NOT_OFFERED);
	}
	assert_true(genl_of[SIO_CMD_MCAST_CREATE] & SIO_GENL_NOT_OFFERED);
	/* VFs come from the lender's PCI core, an administrator's act. */
	assert_int_equal(genl_of[SIO_CMD_SRIOV_SET],
			 SIO_GENL_ADMIN | SIO_GENL_PCI | SIO_GENL_HOTPLUG);
}

/* smartio(4), as one string with the roff line continuations joined. */
static char *man_page(void)
{
	const char *srcdir = getenv("srcdir");
	char path[4096];
	FILE *f;
	char *buf = calloc(1, 1 << 20), *s, *d;
	size_t n;

	assert_non_null(buf);
	snprintf(path, sizeof(path), "%s/man/smartio.4", srcdir ? srcdir : ".");
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	buf[n] = 0;
	for (s = d = buf; *s; s++) {
		if (s[0] == '\\' && s[1] == '\n') {
			s++;
			continue;
		}
		*d++ = *s;
	}
	*d = 0;
	return buf;
}

/* Whether text has name as a word of a comma-separated list item. */
static int names(const char *text, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = strstr(text, name); p; p = strstr(p + 1, name))
		if ((p == text || strchr(" ,\n", p[-1])) &&
		    strchr(" ,;\n", p[len]))
			return 1;
	return 0;
}

static void test_smartio4_names_every_command_not_offered(void **state)
{
	char *man = man_page(), *list = strstr(man, "no operation of the family");
	unsigned cmd;

	(void)state;
	assert_non_null(list);
	for (cmd = 1; cmd <= SIO_CMD_MAX; cmd++) {
		if (!(genl_of[cmd] & SIO_GENL_NOT_OFFERED))
			continue;
		if (!names(list, sio_cmd_name((u8)cmd)))
			fail_msg("smartio(4) does not list %s as not offered",
				 sio_cmd_name((u8)cmd));
	}
	free(man);
}

/* A value of the attribute's type that parses. */
static void put_plausible(struct sio_msg *m, unsigned a)
{
	static const u8 data[16];

	switch (sio_attr_kind((u16)a)) {
	case SIO_K_U32:
		sio_msg_put_u32(m, (u16)a, 0);
		break;
	case SIO_K_U64:
		sio_msg_put_u64(m, (u16)a, 0x1000);
		break;
	case SIO_K_STR:
		sio_msg_put_str(m, (u16)a, "seg0");
		break;
	case SIO_K_BIN:
		sio_msg_put_bin(m, (u16)a, data, sizeof(data));
		break;
	default:
		sio_msg_nest_end(m, sio_msg_nest_start(m, (u16)a));
		break;
	}
}

/*
 * Every command with every one of its required attributes left out, sent
 * by host0's user and by host1 to host0: EINVAL, and host0's registry
 * (its records, event ring and refusal counts) byte for byte as it was.
 */
static void test_a_missing_required_attribute_is_einval_and_changes_nothing(
	void **state)
{
	char fabric[64];
	struct smartio *h = th_open(TH_SMALL_TOPO, NULL, fabric,
				    sizeof(fabric));
	struct sim_fabric *f = sio_lib_fabric(h);
	unsigned host0 = th_node(h, "host0"), host1 = th_node(h, "host1");
	u8 buf[512], rep[1024];
	struct sio_parsed rp;
	unsigned cmd, left, a, from, checked = 0;
	size_t size;
	void *before;

	(void)state;
	sim_lock(f);
	size = f->core.reg->total_size;
	before = malloc(size);
	assert_non_null(before);
	for (cmd = 1; cmd <= SIO_CMD_MAX; cmd++) {
		const struct sio_cmd_row *e = sio_cmd_row((u8)cmd);

		if (!e->handler)
			continue;
		for (left = 1; left <= SIO_A_MAX; left++) {
			if (!(e->required >> left & 1))
				continue;
			for (from = 0; from < 2; from++) {
				struct sio_msg m;
				int n;

				sio_msg_init(&m, buf, sizeof(buf), (u8)cmd,
					     SIO_F_REQUEST, 7);
				for (a = 1; a <= SIO_A_MAX; a++)
					if (a != left && (e->required >> a & 1))
						put_plausible(&m, a);
				n = sio_msg_finish(&m);
				assert_true(n > 0);
				memcpy(before, f->core.reg, size);
				n = sio_core_dispatch_from(&f->core, host0,
							   from ? host1 : host0,
							   buf, (u32)n, rep,
							   sizeof(rep));
				assert_true(n > 0);
				assert_int_equal(sio_msg_parse(rep, (u32)n,
							       &rp), 0);
				if (sio_nla_s32(&rp.tb[SIO_A_ERRNO]) != -EINVAL)
					fail_msg("%s without attribute %u: %d, not EINVAL",
						 sio_cmd_name((u8)cmd), left,
						 sio_nla_s32(&rp.tb[SIO_A_ERRNO]));
				if (memcmp(before, f->core.reg, size))
					fail_msg("%s without attribute %u changed the registry",
						 sio_cmd_name((u8)cmd), left);
				checked++;
			}
		}
	}
	sim_unlock(f);
	free(before);
	assert_true(checked > 100);
	smartio_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_command_has_a_row_and_a_name),
		cmocka_unit_test(test_every_row_a_request_reaches_has_a_handler),
		cmocka_unit_test(test_every_row_says_what_smartio_ko_offers),
		cmocka_unit_test(test_smartio4_names_every_command_not_offered),
		cmocka_unit_test(
			test_a_missing_required_attribute_is_einval_and_changes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
