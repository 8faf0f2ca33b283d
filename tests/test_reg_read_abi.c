// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * REG_READ, the registry bytes smartio.ko gives libsmartio: the core's
 * handler returns the registry's bytes, its size and the generation,
 * refuses a read past the end or larger than SIO_DATA_MAX, and serves
 * this node's users only; smartio(4) states the layout of this registry
 * version (header offsets, record sizes) as registry.h pins it.
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

/* REG_READ [off, off + size) as node `from` asks node self; its errno. */
static int reg_read(struct sim_fabric *f, unsigned self, unsigned from,
		    u64 off, u64 size, struct sio_parsed *rp, u8 *rep, u32 cap)
{
	u8 buf[128];
	struct sio_msg m;
	int n;

	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_REG_READ, SIO_F_REQUEST, 3);
	sio_msg_put_u64(&m, SIO_A_OFFSET, off);
	sio_msg_put_u64(&m, SIO_A_SIZE, size);
	n = sio_msg_finish(&m);
	assert_true(n > 0);
	n = sio_core_dispatch_from(&f->core, self, from, buf, (u32)n, rep, cap);
	assert_true(n > 0);
	assert_int_equal(sio_msg_parse(rep, (u32)n, rp), 0);
	return sio_nla_s32(&rp->tb[SIO_A_ERRNO]);
}

static void test_reg_read_returns_the_registry_bytes(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(TH_SMALL_TOPO, NULL, fabric,
				    sizeof(fabric));
	struct sim_fabric *f = sio_lib_fabric(h);
	unsigned host0 = th_node(h, "host0"), host1 = th_node(h, "host1");
	static u8 rep[SIO_MSG_MAX];
	struct sio_parsed rp;
	u64 total;

	(void)state;
	sim_lock(f);
	total = f->core.reg->total_size;
	assert_int_equal(reg_read(f, host0, host0, 0, 4096, &rp, rep,
				  sizeof(rep)), 0);
	assert_int_equal(sio_nla_u64(&rp.tb[SIO_A_SIZE]), total);
	assert_true(rp.present[SIO_A_SEQ]);
	assert_int_equal(rp.tb[SIO_A_DATA].len, 4096);
	assert_memory_equal(rp.tb[SIO_A_DATA].data, f->core.reg, 4096);
	/* The tail is cut at the end; size 0 is the generation alone. */
	assert_int_equal(reg_read(f, host0, host0, total - 8, 64, &rp, rep,
				  sizeof(rep)), 0);
	assert_int_equal(rp.tb[SIO_A_DATA].len, 8);
	assert_int_equal(reg_read(f, host0, host0, 0, 0, &rp, rep,
				  sizeof(rep)), 0);
	assert_int_equal(rp.tb[SIO_A_DATA].len, 0);
	/* Past the end, more than one message holds, or a peer asking. */
	assert_int_equal(reg_read(f, host0, host0, total + 1, 0, &rp, rep,
				  sizeof(rep)), -EINVAL);
	assert_int_equal(reg_read(f, host0, host0, 0, SIO_DATA_MAX + 1, &rp,
				  rep, sizeof(rep)), -EINVAL);
	assert_int_equal(reg_read(f, host0, host1, 0, 64, &rp, rep,
				  sizeof(rep)), -EPERM);
	sim_unlock(f);
	smartio_close(h);
}

static char *man_page(void)
{
	const char *srcdir = getenv("srcdir");
	char path[4096];
	char *buf = calloc(1, 1 << 20), *s, *d;
	size_t n;
	FILE *f;

	assert_non_null(buf);
	snprintf(path, sizeof(path), "%s/man/smartio.4", srcdir ? srcdir : ".");
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* One line: roff breaks sentences anywhere. */
	for (s = d = buf; *s; s++)
		*d++ = *s == '\n' ? ' ' : *s;
	*d = 0;
	return buf;
}

static void says(const char *man, const char *fmt, unsigned long v)
{
	char want[128];

	snprintf(want, sizeof(want), fmt, v);
	if (!strstr(man, want))
		fail_msg("smartio(4) does not say \"%s\"", want);
}

static void test_smartio4_states_this_registry_layout(void **state)
{
	char *man = man_page();

	(void)state;
	says(man, "a %lu-byte header", sizeof(struct sio_registry));
	says(man, "(u32, %lu for this release)", SIO_REG_VERSION);
	says(man, "magic 0x%lx", SIO_REG_MAGIC);
	says(man, "total size at %lu (u64)",
	     offsetof(struct sio_registry, total_size));
	says(man, "nodes at %lu,", offsetof(struct sio_registry, nodes_off));
	says(man, "devices %lu,", offsetof(struct sio_registry, devices_off));
	says(man, "borrows %lu,", offsetof(struct sio_registry, borrows_off));
	says(man, "segments %lu,", offsetof(struct sio_registry, segments_off));
	says(man, "attachments %lu,", offsetof(struct sio_registry, attach_off));
	says(man, "segment mappings %lu,",
	     offsetof(struct sio_registry, segdma_off));
	says(man, "events %lu,", offsetof(struct sio_registry, events_off));
	says(man, "peer mappings %lu,",
	     offsetof(struct sio_registry, peermap_off));
	says(man, "switches %lu,", offsetof(struct sio_registry, switches_off));
	says(man, "multicast groups %lu;",
	     offsetof(struct sio_registry, mcast_off));
	says(man, "%lu bytes a node", sizeof(struct sio_node));
	says(man, "%lu a device", sizeof(struct sio_device));
	says(man, "%lu a borrow", sizeof(struct sio_borrow));
	says(man, "%lu a segment,", sizeof(struct sio_segment));
	says(man, "%lu an attachment", sizeof(struct sio_attach));
	says(man, "%lu a segment mapping", sizeof(struct sio_segdma));
	says(man, "%lu a peer mapping", sizeof(struct sio_peermap));
	says(man, "%lu a switch", sizeof(struct sio_switch));
	says(man, "%lu a multicast group", sizeof(struct sio_mcast));
	says(man, "%lu an event", sizeof(struct sio_event));
	says(man, "%lu) with", SIO_CMD_REPLY);
	says(man, "(%lu) takes", SIO_CMD_REG_READ);
	free(man);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reg_read_returns_the_registry_bytes),
		cmocka_unit_test(test_smartio4_states_this_registry_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
