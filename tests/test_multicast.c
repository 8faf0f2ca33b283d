// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 18 item 3 (SmartIO sections 6.5 and 7.4.2): multicast groups in a
 * switch.  The paper's test in small: nodes subscribe to one group with a
 * buffer in their memory (or a device BAR, the overlay BAR), and a single
 * NVMe Identify whose data pointer is the group's address lands in every
 * member's buffer.  A member that left gets nothing; bad requests are
 * refused with the groups as they were.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define MEMBERS 4	/* host1 .. host4 */
#define TOPO \
	"fabric luts=32 requesters=16 reserved=2 window=1G\n" \
	"switch sw0 ports=8 multicast=2\n" \
	"switch sw1 ports=4\n" \
	"switch sw2 ports=4\n" \
	"cascade sw0:7 sw2:3\n" \
	"node host0 id=0 ram=64M\n" \
	"node host1 id=1 ram=64M\n" \
	"node host2 id=2 ram=64M\n" \
	"node host3 id=3 ram=64M\n" \
	"node host4 id=4 ram=64M\n" \
	"node host5 id=5 ram=64M\n" \
	"node host6 id=6 ram=64M\n" \
	"adapter host0 ntb0 switch=sw0:0\n" \
	"adapter host1 ntb0 switch=sw0:1\n" \
	"adapter host2 ntb0 switch=sw0:2\n" \
	"adapter host3 ntb0 switch=sw0:3\n" \
	"adapter host4 ntb0 switch=sw0:4\n" \
	"adapter host5 ntb0 switch=sw1:0\n" \
	"adapter host6 ntb0 switch=sw2:0\n" \
	"adapter host0 ntb1 switch=sw1:1\n" \
	"device host0 nvme0 bdf=0000:01:00.0 vendor=0x1b36 device=0x0010 " \
	"class=0x010802 config=4096 model=nvme bar0=16K,64\n" \
	"device host4 gpu0 bdf=0000:02:00.0 vendor=0x10de device=0x1eb8 " \
	"class=0x030200 bar0=16K bar1=64K,64,prefetch\n"

#define IDENT_SIZE 4096u
#define SUBMIT_TIMEOUT_S 20

struct fx {
	struct smartio *h;
	char fabric[64];
	unsigned host[7], nvme0, gpu0;
	volatile uint32_t *bar;	/* nvme0's BAR0, as host1 (its borrower) */
	uint8_t *q;		/* host1's queue segment */
	uint64_t qio;		/* and nvme0's address of it */
	uint8_t *buf[MEMBERS];	/* each member's buffer, host1 .. host4 */
	uint16_t cid;
	int group;
	uint64_t gio;		/* nvme0's address of the group */
};

static void *segment(struct fx *fx, unsigned node, const char *name,
		     uint64_t size)
{
	char path[256];
	uint64_t got;

	assert_int_equal(smartio_segment_create(fx->h, node, name), 0);
	assert_int_equal(smartio_segment_set_size(fx->h, node, name, size), 0);
	assert_int_equal(smartio_resolve_segment(fx->h, node, node, name, path,
						 sizeof(path), &got), 0);
	return th_map_file(path, got);
}

/* host1 enables nvme0 with its admin queues in segment q. */
static void enable_controller(struct fx *fx)
{
	volatile uint32_t *bar = fx->bar;
	time_t end = time(NULL) + SUBMIT_TIMEOUT_S;

	bar[0x24 / 4] = 1u << 16 | 1;			/* AQA: 2 + 2 entries */
	bar[0x28 / 4] = (uint32_t)fx->qio;
	bar[0x2c / 4] = (uint32_t)(fx->qio >> 32);
	bar[0x30 / 4] = (uint32_t)(fx->qio + 0x1000);
	bar[0x34 / 4] = (uint32_t)((fx->qio + 0x1000) >> 32);
	bar[0x14 / 4] = 1 | 6u << 16 | 4u << 20;
	while (!(bar[0x1c / 4] & 1))			/* CSTS.RDY */
		assert_true(time(NULL) <= end);
}

/*
 * One Identify (cns 1: the controller, 0: namespace nsid) with its data
 * pointer at io, submitted by host1 on the two-entry admin queue; returns
 * the status field.
 */
static unsigned identify(struct fx *fx, uint64_t io, uint32_t cns,
			 uint32_t nsid)
{
	unsigned slot = fx->cid % 2;
	uint8_t *cmd = fx->q + 64 * slot;
	volatile uint8_t *cqe = fx->q + 0x1000 + 16 * slot;
	uint32_t phase = (fx->cid / 2 + 1) % 2, dw3;
	time_t end = time(NULL) + SUBMIT_TIMEOUT_S;
	uint16_t cid = (uint16_t)(0x100 + fx->cid);

	memset(cmd, 0, 64);
	cmd[0] = 0x06;
	memcpy(cmd + 2, &cid, 2);
	memcpy(cmd + 4, &nsid, 4);
	memcpy(cmd + 24, &io, 8);
	memcpy(cmd + 40, &cns, 4);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	fx->cid++;
	fx->bar[0x1000 / 4] = fx->cid % 2;		/* SQ 0 tail */
	while (((dw3 = __atomic_load_n((const uint32_t *)(cqe + 12),
				       __ATOMIC_ACQUIRE)) >> 16 & 1) != phase)
		assert_true(time(NULL) <= end);
	assert_int_equal(dw3 & 0xffff, cid);
	fx->bar[0x1004 / 4] = fx->cid % 2;		/* CQ 0 head */
	return dw3 >> 17 & 0x7ff;
}

static int setup(void **state)
{
	static struct fx fx;
	char path[256], name[16];
	uint64_t size;
	unsigned i;

	memset(&fx, 0, sizeof(fx));
	fx.h = th_open(TOPO, NULL, fx.fabric, sizeof(fx.fabric));
	for (i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "host%u", i);
		fx.host[i] = th_node(fx.h, name);
	}
	fx.nvme0 = th_dev(fx.h, "nvme0");
	fx.gpu0 = th_dev(fx.h, "gpu0");
	assert_int_equal(smartio_lend(fx.h, fx.nvme0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(fx.h, fx.nvme0, fx.host[1]), 0);
	assert_int_equal(smartio_resolve_bar(fx.h, fx.host[1], fx.nvme0, 0,
					     path, sizeof(path), &size), 0);
	fx.bar = th_map_file(path, size);
	fx.q = segment(&fx, fx.host[1], "q", 64 << 10);
	assert_int_equal(smartio_segment_dma_map(fx.h, fx.host[1], "q",
						 fx.nvme0, &fx.qio), 0);
	enable_controller(&fx);
	for (i = 0; i < MEMBERS; i++)
		fx.buf[i] = segment(&fx, fx.host[1 + i], "mc", 64 << 10);
	fx.group = smartio_mcast_create(fx.h, "ident", 0, IDENT_SIZE);
	assert_true(fx.group >= 0);
	for (i = 0; i < MEMBERS; i++)
		assert_int_equal(smartio_mcast_join_segment(fx.h, fx.group,
							    fx.host[1 + i],
							    "mc"), 0);
	/* The borrower maps the group for its device. */
	assert_int_equal(smartio_mcast_map(fx.h, fx.group, fx.nvme0, fx.host[1],
					   &fx.gio), 0);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	smartio_close(fx->h);
	return 0;
}

static void test_one_identify_reaches_every_member(void **state)
{
	struct fx *fx = *state;
	struct smartio_mcast_info mi;
	unsigned i;
	uint16_t vid;

	assert_int_equal(identify(fx, fx->gio, 1, 0), 0);
	for (i = 0; i < MEMBERS; i++) {
		memcpy(&vid, fx->buf[i], 2);
		assert_int_equal(vid, 0x1b36);
		assert_memory_equal(fx->buf[i] + 24, "smartio simulated NVMe",
				    22);
		/* Nothing past the group's end. */
		assert_int_equal(fx->buf[i][IDENT_SIZE], 0);
	}
	assert_int_equal(smartio_mcast_info(fx->h, (unsigned)fx->group, &mi), 0);
	assert_string_equal(mi.name, "ident");
	assert_int_equal(mi.size, IDENT_SIZE);
	assert_int_equal(mi.members, 0x1e);		/* host1 .. host4 */
	assert_int_equal(mi.mapped, 1);
	assert_true(mi.writes >= 1);
	assert_int_equal(mi.delivered, MEMBERS * mi.writes);
}

static void test_a_member_that_left_gets_nothing(void **state)
{
	struct fx *fx = *state;
	uint64_t nsze;
	unsigned i;

	assert_int_equal(smartio_mcast_leave(fx->h, fx->group, fx->host[2]),
			 0);
	assert_int_equal(smartio_mcast_leave(fx->h, fx->group, fx->host[2]),
			 -ENOENT);
	for (i = 0; i < MEMBERS; i++)
		memset(fx->buf[i], 0, IDENT_SIZE);
	assert_int_equal(identify(fx, fx->gio, 0, 1), 0);	/* namespace 1 */
	for (i = 0; i < MEMBERS; i++) {
		memcpy(&nsze, fx->buf[i], 8);
		assert_int_equal(nsze, i == 1 ? 0 : (64u << 20) / 512);
	}
	assert_int_equal(smartio_mcast_join_segment(fx->h, fx->group,
						    fx->host[2], "mc"), 0);
}

static void test_overlay_bar_member(void **state)
{
	struct fx *fx = *state;
	char path[256];
	uint64_t size;
	uint8_t *bar1;
	uint16_t vid;

	/* host4 subscribes with gpu0's BAR 1 instead of its segment. */
	assert_int_equal(smartio_mcast_leave(fx->h, fx->group, fx->host[4]),
			 0);
	assert_int_equal(smartio_mcast_join_bar(fx->h, fx->group, fx->host[4],
						fx->gpu0, 1), 0);
	assert_int_equal(smartio_resolve_bar(fx->h, fx->host[4], fx->gpu0, 1,
					     path, sizeof(path), &size), 0);
	bar1 = th_map_file(path, size);
	memset(bar1, 0, IDENT_SIZE);
	assert_int_equal(identify(fx, fx->gio, 1, 0), 0);
	memcpy(&vid, bar1, 2);
	assert_int_equal(vid, 0x1b36);
	assert_memory_equal(bar1 + 24, "smartio simulated NVMe", 22);
	assert_int_equal(smartio_mcast_leave(fx->h, fx->group, fx->host[4]),
			 0);
	assert_int_equal(smartio_mcast_join_segment(fx->h, fx->group,
						    fx->host[4], "mc"), 0);
}

static void test_member_behind_a_cascade(void **state)
{
	struct fx *fx = *state;
	uint8_t *buf = segment(fx, fx->host[6], "far", 8192);
	uint16_t vid;

	/* host6 is on sw2, cascaded with the group's sw0, which sends the
	 * write on to it (SmartIO's 60 nodes span several switches). */
	assert_int_equal(smartio_mcast_join_segment(fx->h, fx->group,
						    fx->host[6], "far"), 0);
	assert_int_equal(identify(fx, fx->gio, 1, 0), 0);
	memcpy(&vid, buf, 2);
	assert_int_equal(vid, 0x1b36);
	assert_int_equal(smartio_mcast_leave(fx->h, fx->group, fx->host[6]),
			 0);
	assert_int_equal(smartio_segment_destroy(fx->h, fx->host[6], "far"),
			 0);
}

static void same_info(struct fx *fx, const struct smartio_mcast_info *want)
{
	struct smartio_mcast_info now;

	assert_int_equal(smartio_mcast_info(fx->h, (unsigned)fx->group, &now),
			 0);
	assert_string_equal(now.name, want->name);
	assert_int_equal(now.members, want->members);
	assert_int_equal(now.mapped, want->mapped);
	assert_int_equal(now.size, want->size);
}

static void test_bad_requests_change_nothing(void **state)
{
	struct fx *fx = *state;
	struct smartio_mcast_info before;
	uint64_t io;
	int g2;

	assert_int_equal(smartio_mcast_info(fx->h, (unsigned)fx->group,
					    &before), 0);
	assert_int_equal(smartio_mcast_create(fx->h, "ident", 0, 4096),
			 -EEXIST);
	assert_int_equal(smartio_mcast_create(fx->h, "x", 0, 0), -EINVAL);
	assert_int_equal(smartio_mcast_create(fx->h, "x", 0, 100), -EINVAL);
	assert_int_equal(smartio_mcast_create(fx->h, "x", 0, 2ull << 30),
			 -EINVAL);
	assert_int_equal(smartio_mcast_create(fx->h, "bad/name", 0, 4096),
			 -EINVAL);
	assert_int_equal(smartio_mcast_create(fx->h, "x", 1, 4096),
			 -EOPNOTSUPP);			/* sw1: no multicast */
	assert_int_equal(smartio_mcast_create(fx->h, "x", 7, 4096), -ENOENT);
	g2 = smartio_mcast_create(fx->h, "second", 0, 4096);
	assert_true(g2 >= 0);
	assert_int_equal(smartio_mcast_create(fx->h, "third", 0, 4096),
			 -ENOSPC);			/* sw0 holds two */
	assert_int_equal(smartio_mcast_set_size(fx->h, (unsigned)g2, 8192), 0);
	assert_int_equal(smartio_mcast_set_size(fx->h, (unsigned)g2, 100),
			 -EINVAL);
	assert_int_equal(smartio_mcast_set_size(fx->h, (unsigned)fx->group,
						8192), -EBUSY);
	assert_int_equal(smartio_mcast_dma_addr(fx->h, (unsigned)fx->group,
						fx->nvme0, &io), 0);
	assert_int_equal(io, fx->gio);
	assert_int_equal(smartio_mcast_dma_addr(fx->h, (unsigned)g2, fx->nvme0,
						&io), -ENOENT);
	assert_int_equal(smartio_mcast_destroy(fx->h, (unsigned)g2), 0);
	assert_int_equal(smartio_mcast_destroy(fx->h, (unsigned)g2), -ENOENT);
	assert_int_equal(smartio_mcast_destroy(fx->h, 99), -ENOENT);
	/* host5 is cabled to sw1 only. */
	assert_int_equal(smartio_segment_create(fx->h, fx->host[5], "mc"), 0);
	assert_int_equal(smartio_segment_set_size(fx->h, fx->host[5], "mc",
						  4096), 0);
	assert_int_equal(smartio_mcast_join_segment(fx->h, fx->group,
						    fx->host[5], "mc"),
			 -EXDEV);
	assert_int_equal(smartio_mcast_join_segment(fx->h, fx->group,
						    fx->host[1], "mc"),
			 -EEXIST);
	assert_int_equal(smartio_mcast_join_segment(fx->h, fx->group,
						    fx->host[0], "none"),
			 -ENOENT);
	assert_int_equal(smartio_segment_create(fx->h, fx->host[0], "tiny"), 0);
	assert_int_equal(smartio_mcast_join_segment(fx->h, fx->group,
						    fx->host[0], "tiny"),
			 -ENOSPC);			/* not sized */
	assert_int_equal(smartio_mcast_join_bar(fx->h, fx->group, fx->host[0],
						fx->gpu0, 1), -EINVAL);	/* not host0's */
	assert_int_equal(smartio_mcast_join_bar(fx->h, fx->group, fx->host[0],
						fx->nvme0, 6), -EINVAL);	/* no BAR 6 */
	/* Only nvme0's lender or borrower maps it; once. */
	assert_int_equal(smartio_mcast_map(fx->h, fx->group, fx->nvme0,
					   fx->host[3], &io), -EACCES);
	assert_int_equal(smartio_mcast_map(fx->h, fx->group, fx->nvme0,
					   fx->host[1], &io), -EEXIST);
	assert_int_equal(smartio_mcast_unmap(fx->h, fx->group, fx->gpu0,
					     fx->host[4]), -ENOENT);
	/* A member's buffer and a group in use stay. */
	assert_int_equal(smartio_segment_destroy(fx->h, fx->host[1], "mc"),
			 -EBUSY);
	assert_int_equal(smartio_mcast_destroy(fx->h, (unsigned)fx->group),
			 -EBUSY);
	same_info(fx, &before);
	/* Past the group's end leads nowhere. */
	assert_int_not_equal(identify(fx, fx->gio + IDENT_SIZE, 1, 0), 0);
}

static void test_group_torn_down(void **state)
{
	struct fx *fx = *state;
	unsigned i;

	assert_int_equal(smartio_mcast_unmap(fx->h, fx->group, fx->nvme0,
					     fx->host[1]), 0);
	for (i = 0; i < MEMBERS; i++)
		assert_int_equal(smartio_mcast_leave(fx->h, fx->group,
						     fx->host[1 + i]), 0);
	assert_int_equal(smartio_mcast_destroy(fx->h, (unsigned)fx->group), 0);
	assert_int_equal(smartio_mcast_lookup(fx->h, "ident"), -ENOENT);
	/* The unmapped address leads nowhere now. */
	assert_int_not_equal(identify(fx, fx->gio, 1, 0), 0);
	assert_int_equal(smartio_segment_destroy(fx->h, fx->host[1], "mc"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_identify_reaches_every_member),
		cmocka_unit_test(test_a_member_that_left_gets_nothing),
		cmocka_unit_test(test_overlay_bar_member),
		cmocka_unit_test(test_member_behind_a_cascade),
		cmocka_unit_test(test_bad_requests_change_nothing),
		cmocka_unit_test(test_group_torn_down),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
