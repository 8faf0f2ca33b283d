// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 14: devices lent between machines that each keep a registry of
 * their own (SIO_CORE_SEPARATE, smartio.ko over an NTB), with the real
 * core on both sides and a transport that delivers a message to the other
 * core as the NTB does (sio_core_dispatch_from with the link's far end)
 * and refuses a send made while a request is being handled, as the kernel
 * does (-ELOOP).
 *
 *  - test_dev_table_*: a lender's DEV_TABLE fills the others' slots; a
 *    table of another owner, or one with a bad record, changes nothing.
 *  - test_borrow_across_registries_*: the lender claims the device once,
 *    after every check; each side translates what leads to its own memory
 *    or device (inbound_map); return, reclaim and the loss of either node
 *    release both halves (claim 0, every inbound map unmapped, LUT slots
 *    and requester entries as before); refusals never claim; a lender
 *    that claims without the core's lock asks first (-EINPROGRESS), which
 *    is no denial, and the request served again grants the borrow.
 *  - test_command_for_another_node_*: a user's borrow (window= or not),
 *    return or lend for another machine's node is refused before it is
 *    sent (EPERM), so that machine counts nothing against this one.
 *  - test_segment_dma_across_registries_*: SmartIO's third address-domain
 *    case: node 2 maps a segment of its own for node 0's device, lent to
 *    node 1.  The lender keeps a record of its own half (LUT slots toward
 *    node 2), node 2 translates the slots onto the segment (inbound_map
 *    SIO_INB_SEG); unmap and the loss of either node free both halves;
 *    hostile MAP_SEG_WINDOW requests change nothing.
 *  - test_segment_dma_borrowed_placed_by_platform: issue 29, a segment
 *    of the borrower mapped for the device it borrows, placed by a
 *    platform that maps a range of its window (window_dma_addr, as
 *    smartio.ko over a strict window): the core tells it once of every
 *    release (window_dma_release) on unmap, return and the lender's loss,
 *    and a placement refused (ENOSPC) leaves nothing to release.
 *  - test_attach_across_registries_*: issue 12 defect 7, export enforced
 *    by translation: node 1 attaches node 2's segment with its own LUT
 *    slots and node 2 translates exactly those onto the segment (and only
 *    when exported); detach and node 1's loss take the translation away.
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

#include "core_int.h"

#define NODES 3
#define SLOTS 2		/* device slots per node */
#define BAR0 (16u << 10)

static const struct sio_reg_limits limits = {
	.max_borrows = 8, .max_segments = 8, .max_attach = 8,
	.max_segdma = 8, .max_peermap = 8,
};

struct call {
	u32 self, peer, kind, dev;
	u64 peer_addr, local_addr, size;
};

static struct {
	struct sio_registry *reg[NODES];
	u64 size;
	struct sio_core core[NODES];
	int serving;		/* a request is being handled */
	int loops;		/* sends refused because of that */
	int claims, unclaims;
	/*
	 * As smartio.ko: lend_claim asks for a device not yet claimed
	 * (-EINPROGRESS, asked counts it), and the transport claims it and
	 * serves the request again (kmod/sio_ntb.c, fab_request).
	 */
	int claim_later, asked, wanted, held;
	struct call maps[16], unmaps[16];
	int nmaps, nunmaps;
	/*
	 * Node 0 has a second device (slot 1); the platform maps a device
	 * of its own machine in that device's IOMMU domain (smartio.ko, a
	 * claimed device): the calls it got.
	 */
	int second, local_iommu;
	struct call iommu[8], iounmap[8];
	int niommu, niounmap;
	u64 clock;
	/*
	 * Run once before the next SEG_CONNECT carrying ADDR is delivered:
	 * a request of the far node that the kernel would run in place of
	 * the parked sender (kmod/sio_ntb.c).
	 */
	void (*in_place)(void);
} w;

static u64 now_ns(void *plat)
{
	(void)plat;
	return ++w.clock;
}

static int lut_set(void *plat, u32 node, u32 adapter, u32 slot, u32 tnode,
		   u64 taddr, u64 len, u32 src, u16 rid)
{
	(void)plat; (void)node; (void)adapter; (void)slot; (void)tnode;
	(void)taddr; (void)len; (void)src; (void)rid;
	return 0;
}

static void lut_clear(void *plat, u32 node, u32 adapter, u32 slot)
{
	(void)plat; (void)node; (void)adapter; (void)slot;
}

/*
 * As smartio.ko over an NTB: no IOMMU of the core's on the path of another
 * machine's device (the inbound entries are the gate); its own devices'
 * domains only when the test says the platform has them.
 */
static int iommu_map(void *plat, u32 node, u32 src, u16 rid, u64 iova,
		     u64 phys, u64 size)
{
	(void)plat;
	if (node != src)
		return 0;
	if (!w.local_iommu)
		return -EOPNOTSUPP;
	assert_true(w.niommu < 8);
	w.iommu[w.niommu++] = (struct call){ node, src, rid, 0, iova, phys,
					     size };
	return 0;
}

static void iommu_unmap(void *plat, u32 node, u32 src, u16 rid, u64 iova)
{
	(void)plat;
	if (node != src)
		return;
	assert_true(w.niounmap < 8);
	w.iounmap[w.niounmap++] = (struct call){ node, src, rid, 0, iova, 0,
						 0 };
}

static int seg_backing(void *plat, u32 seg, int create)
{
	(void)plat; (void)seg; (void)create;
	return 0;
}

static int cfg_access(void *plat, u32 dev, u32 off, void *buf, u32 len,
		      int write)
{
	(void)plat; (void)dev; (void)off; (void)write;
	if (!write)
		memset(buf, 0, len);
	return 0;
}

/* The NTB: the other machine's core answers; never from inside a request. */
/* The attaching node's second SEG_CONNECT: the one naming its slots. */
static int connect_with_slots(const void *msg, u32 len)
{
	struct sio_parsed p;

	return !sio_msg_parse(msg, len, &p) &&
	       p.cmd == SIO_CMD_SEG_CONNECT && p.present[SIO_A_ADDR];
}

static int send(void *plat, u32 src, u32 dst, const void *msg, u32 len,
		void *reply, u32 cap)
{
	int n;

	(void)plat;
	if (w.serving) {
		w.loops++;
		return -ELOOP;
	}
	if (dst >= NODES)
		return -EHOSTDOWN;
	if (w.in_place && connect_with_slots(msg, len)) {
		void (*fn)(void) = w.in_place;

		w.in_place = NULL;
		fn();
	}
	w.serving = 1;
	n = sio_core_dispatch_from(&w.core[dst], dst, src, msg, len, reply,
				   cap);
	if (w.wanted) {
		w.wanted = 0;
		w.held = 1;	/* claimed without the core's lock */
		n = sio_core_dispatch_from(&w.core[dst], dst, src, msg, len,
					   reply, cap);
	}
	w.serving = 0;
	return n;
}

static int lend_claim(void *plat, u32 dev, u32 borrower, int claim)
{
	(void)plat; (void)dev; (void)borrower;
	if (claim && w.claim_later && !w.held) {
		w.asked++;
		w.wanted = 1;
		return -EINPROGRESS;
	}
	if (claim)
		w.claims++;
	else
		w.unclaims++;
	return 0;
}

static int inbound_map(void *plat, u32 self, u32 peer, u32 kind, u32 dev,
		       u64 peer_addr, u64 local_addr, u64 size)
{
	(void)plat;
	assert_true(w.nmaps < 16);
	w.maps[w.nmaps++] = (struct call){ self, peer, kind, dev, peer_addr,
					   local_addr, size };
	return 0;
}

static void inbound_unmap(void *plat, u32 self, u32 peer, u32 kind, u32 dev,
			  u64 peer_addr, u64 size)
{
	(void)plat;
	assert_true(w.nunmaps < 16);
	w.unmaps[w.nunmaps++] = (struct call){ self, peer, kind, dev,
					       peer_addr, 0, size };
}

/* A platform that places a borrower's segment in its window itself. */
static struct {
	int err;		/* the next window_dma_addr's answer */
	int places, releases;
	struct call place, release;	/* the last of each */
} pl;

#define PLACE_BASE 0x4000000000ull	/* the window, as the device sees it */

static int window_dma_addr(void *plat, u32 self, u32 dev, u64 phys,
			   u64 size, u64 *ioaddr)
{
	(void)plat;
	if (pl.err)
		return pl.err;
	pl.places++;
	pl.place = (struct call){ self, 0, 0, dev, 0, phys, size };
	*ioaddr = PLACE_BASE + (u64)pl.places * size;
	return 0;
}

static void window_dma_release(void *plat, u32 self, u32 dev, u64 phys,
			       u64 size, u64 ioaddr)
{
	(void)plat;
	pl.releases++;
	pl.release = (struct call){ self, 0, 0, dev, ioaddr, phys, size };
}

static const struct sio_platform_ops ops_place = {
	.now_ns = now_ns, .lut_set = lut_set, .lut_clear = lut_clear,
	.iommu_map = iommu_map, .iommu_unmap = iommu_unmap,
	.seg_backing = seg_backing, .cfg_access = cfg_access, .send = send,
	.lend_claim = lend_claim, .inbound_map = inbound_map,
	.inbound_unmap = inbound_unmap, .window_dma_addr = window_dma_addr,
	.window_dma_release = window_dma_release,
};

static const struct sio_platform_ops ops = {
	.now_ns = now_ns, .lut_set = lut_set, .lut_clear = lut_clear,
	.iommu_map = iommu_map, .iommu_unmap = iommu_unmap,
	.seg_backing = seg_backing, .cfg_access = cfg_access, .send = send,
	.lend_claim = lend_claim, .inbound_map = inbound_map,
	.inbound_unmap = inbound_unmap,
};

/* Node self's registry: its own device in slot self * SLOTS, the rest absent. */
static struct sio_registry *build(u32 self)
{
	struct sio_topo_node nodes[NODES];
	struct sio_topo_adapter ad[NODES];
	struct sio_topo_device dev[NODES * SLOTS];
	struct sio_topology t = {
		.nnodes = NODES, .nadapters = NODES, .ndevices = NODES * SLOTS,
		.nodes = nodes, .adapters = ad, .devices = dev,
	};
	struct sio_registry *r;
	u32 i;

	memset(nodes, 0, sizeof(nodes));
	memset(ad, 0, sizeof(ad));
	memset(dev, 0, sizeof(dev));
	for (i = 0; i < NODES; i++) {
		snprintf(nodes[i].name, sizeof(nodes[i].name), "host%u", i);
		nodes[i].id = i;
		nodes[i].ram = 256u << 20;
		snprintf(ad[i].name, sizeof(ad[i].name), "ntb0");
		ad[i].node = i;
		ad[i].peers = ((1u << NODES) - 1) & ~(1u << i);
		ad[i].window = 8ull << 27;	/* 8 slots of 128 MiB */
		ad[i].luts = 8;
		ad[i].requesters = 32;
		ad[i].reserved = 2;
	}
	for (i = 0; i < NODES * SLOTS; i++) {
		dev[i].node = i / SLOTS;
		dev[i].absent = i != self * SLOTS;
	}
	snprintf(dev[self * SLOTS].name, SIO_TOPO_NAME, "host%u-nvme0", self);
	snprintf(dev[self * SLOTS].bdf, 16, "0000:00:04.0");
	dev[self * SLOTS].vendor = 0x1b36;
	dev[self * SLOTS].device = 0x0010;
	dev[self * SLOTS].class_code = 0x010802;
	dev[self * SLOTS].config_size = 4096;
	dev[self * SLOTS].bar[0].size = BAR0;
	dev[self * SLOTS].bar[0].flags = SIO_BAR_MEM64;
	if (w.second && self == 0) {
		dev[1] = dev[0];
		dev[1].absent = 0;
		snprintf(dev[1].name, SIO_TOPO_NAME, "host0-nvme1");
		snprintf(dev[1].bdf, 16, "0000:00:05.0");
		dev[1].bar[2].size = 1u << 20;	/* a controller memory buffer */
		dev[1].bar[2].flags = SIO_BAR_MEM64;
	}
	w.size = sio_registry_size(&t, &limits);
	assert_true(w.size > 0);
	r = calloc(1, w.size);
	assert_non_null(r);
	assert_int_equal(sio_registry_init(r, w.size, &t, &limits), 0);
	return r;
}

static int setup(void **state)
{
	int second = state && *state;
	u32 i, n;

	memset(&w, 0, sizeof(w));
	w.second = second;
	for (i = 0; i < NODES; i++) {
		w.reg[i] = build(i);
		w.core[i] = (struct sio_core){ .reg = w.reg[i], .ops = &ops,
					       .flags = SIO_CORE_SEPARATE };
	}
	for (i = 0; i < NODES; i++)
		for (n = 0; n < NODES; n++)
			sio_core_node_up(&w.core[i], n);
	return 0;
}

/* As setup(), node 0 with a second device (slot 1). */
static int setup_second(void **state)
{
	*state = (void *)1;
	return setup(state);
}

static int teardown(void **state)
{
	u32 i;

	(void)state;
	for (i = 0; i < NODES; i++)
		free(w.reg[i]);
	return 0;
}

static u8 tbuf[SIO_MSG_MAX];

/* Lender's DEV_TABLE for dst, delivered to dst as coming from `from`. */
static int push_table(u32 lender, u32 dst, u32 from, int (*edit)(u8 *, int))
{
	u8 reply[512];
	struct sio_parsed p;
	int len = sio_core_dev_table(&w.core[lender], lender, dst, tbuf,
				     sizeof(tbuf)), n;

	assert_true(len > 0);
	if (edit)
		len = edit(tbuf, len);
	n = sio_core_dispatch_from(&w.core[dst], dst, from, tbuf, (u32)len,
				   reply, sizeof(reply));
	assert_true(n > 0);
	assert_int_equal(sio_msg_parse(reply, (u32)n, &p), 0);
	return sio_nla_s32(&p.tb[SIO_A_ERRNO]);
}

static u64 last_addr;	/* SIO_A_ADDR of the last reply of seg_cmd() */

/* A user command on node self (as smartiofs or genl would send it). */
static int user_cmd(u32 self, u8 c, u32 dev, u32 node, u64 size,
		    const char *seg)
{
	u8 buf[256], rep[1024];
	struct sio_parsed p;
	struct sio_msg m;
	int err;

	sio_msg_init(&m, buf, sizeof(buf), c, SIO_F_REQUEST, 1);
	if (dev != ~0u)
		sio_msg_put_u32(&m, SIO_A_DEV,
				sio_dev(w.reg[self], dev)->fdid);
	sio_msg_put_u32(&m, SIO_A_NODE, node);
	if (seg)
		sio_msg_put_str(&m, SIO_A_NAME, seg);
	if (c == SIO_CMD_LEND) {
		sio_msg_put_u32(&m, SIO_A_FLAGS, SIO_LEND_ALL);
		sio_msg_put_u64(&m, SIO_A_MASK, 0);
	}
	if (size)
		sio_msg_put_u64(&m, SIO_A_SIZE, size);
	err = sio_core_call(&w.core[self], self, self, &m, &p, rep,
			    sizeof(rep));
	if (!err && p.present[SIO_A_ADDR])
		last_addr = sio_nla_u64(&p.tb[SIO_A_ADDR]);
	return err;
}

static int cmd(u32 self, u8 c, u32 dev, u32 node, u64 size)
{
	return user_cmd(self, c, dev, node, size, NULL);
}

/* A segment command of node self's user on its own segment `name`. */
static int seg_cmd(u32 self, u8 c, const char *name, u32 dev, u64 size)
{
	return user_cmd(self, c, dev, self, size, name);
}

static void test_dev_table_lists_the_lenders_device_everywhere(void **state)
{
	const struct sio_device *d;

	(void)state;
	assert_int_equal(sio_dev(w.reg[1], 0)->present, 0);
	assert_int_equal(push_table(0, 1, 0, NULL), 0);
	assert_int_equal(push_table(0, 2, 0, NULL), 0);
	d = sio_dev(w.reg[1], 0);
	assert_int_equal(d->present, 1);
	assert_string_equal(d->name, "host0-nvme0");
	assert_string_equal(d->bdf, "0000:00:04.0");
	assert_int_equal(d->vendor, 0x1b36);
	assert_int_equal(d->bar[0].size, BAR0);
	assert_int_equal(sio_dev(w.reg[2], 0)->present, 1);
	assert_int_equal(sio_dev_lookup(w.reg[2], "host0-nvme0"), 0);
	/*
	 * The lend policy is the lender's users' (node 1's users act for
	 * their node only), and reaches the others with the next table.
	 */
	assert_int_equal(cmd(1, SIO_CMD_LEND, 0, 1, 0), -EPERM);
	assert_int_equal(sio_dev(w.reg[0], 0)->policy, SIO_LEND_NONE);
	assert_int_equal(cmd(0, SIO_CMD_LEND, 0, 0, 0), 0);
	assert_int_equal(push_table(0, 2, 0, NULL), 0);
	assert_int_equal(sio_dev(w.reg[2], 0)->policy, SIO_LEND_ALL);
	/* The lender lost: its slots are absent again. */
	sio_core_dev_forget(&w.core[2], 2, 0);
	assert_int_equal(sio_dev(w.reg[2], 0)->present, 0);
	assert_int_equal(sio_dev_lookup(w.reg[2], "host0-nvme0"), -ENXIO);
}

/* The first record of a DEV_TABLE message (after NODE). */
static u8 *first_record(u8 *buf)
{
	return buf + SIO_MSG_HDRLEN + SIO_NLA_HDRLEN + 4 + SIO_NLA_HDRLEN;
}

static int bad_owner(u8 *b, int len)
{
	first_record(b)[3] = 0x00;	/* fdid: node 0 -> ... */
	first_record(b)[2] = 0x10;	/* node 1's index space */
	return len;
}

static int bad_bar(u8 *b, int len)
{
	/* BAR0's size (after fdid .. pads: offset of bar[0].size). */
	first_record(b)[4 + 2 + 2 + 32 + 16 + 8 + 8 + 8 + 16 + 8] = 0x03;
	return len;
}

static int bad_name(u8 *b, int len)
{
	memset(first_record(b) + 8, 'a', SIO_TOPO_NAME);
	return len;
}

static int bad_mask(u8 *b, int len)
{
	first_record(b)[4 + 2 + 2 + 32 + 16 + 8 + 8 + 8 + 8] = 0x20;
	return len;
}

/* SR-IOV fields: after fdid .. revision (72 bytes), vf_back, total, num. */
#define WIRE_VF_BACK 73
#define WIRE_SRIOV_TOTAL 74
#define WIRE_SRIOV_NUM 76

static int bad_numvfs(u8 *b, int len)
{
	first_record(b)[WIRE_SRIOV_NUM] = 1;	/* NumVFs 1 of TotalVFs 0 */
	return len;
}

static int bad_pf_slot(u8 *b, int len)
{
	first_record(b)[WIRE_VF_BACK] = 1;	/* slot 0's PF: slot -1 */
	return len;
}

static int bad_totalvfs(u8 *b, int len)
{
	first_record(b)[WIRE_SRIOV_TOTAL] = 0xff;	/* slots past the end */
	return len;
}

static int twice(u8 *b, int len)
{
	u32 rec = SIO_NLA_HDRLEN + 320;
	u8 *r = first_record(b) - SIO_NLA_HDRLEN;

	memmove(r + rec, r, (size_t)(b + len - r));
	len += (int)rec;
	b[0] = (u8)len;
	b[1] = (u8)(len >> 8);
	return len;
}

static void test_dev_table_hostile_records_change_nothing(void **state)
{
	int (*const edits[])(u8 *, int) = {
		bad_owner, bad_bar, bad_name, bad_mask, twice,
		bad_numvfs, bad_pf_slot, bad_totalvfs,
	};
	unsigned char *before = malloc(w.size);
	size_t i;

	(void)state;
	assert_non_null(before);
	for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		memcpy(before, w.reg[1], w.size);
		assert_true(push_table(0, 1, 0, edits[i]) < 0);
		assert_memory_equal(before, w.reg[1], w.size);
	}
	/* Another node's table, as node 2 would send it: refused. */
	memcpy(before, w.reg[1], w.size);
	assert_int_equal(push_table(0, 1, 2, NULL), -EPERM);
	assert_int_equal(sio_dev(w.reg[1], 0)->present, 0);
	free(before);
}

/* The adapters' allocations of every node, to compare before and after. */
static void adapters(struct sio_adapter *out)
{
	u32 i;

	for (i = 0; i < NODES; i++)
		out[i] = sio_node(w.reg[i], i)->adapter[0];
}

static void lend_to_all(void)
{
	assert_int_equal(cmd(0, SIO_CMD_LEND, 0, 0, 0), 0);
	assert_int_equal(push_table(0, 1, 0, NULL), 0);
	assert_int_equal(push_table(0, 2, 0, NULL), 0);
}

static int has_map(u32 self, u32 kind)
{
	int i;

	for (i = 0; i < w.nmaps; i++)
		if (w.maps[i].self == self && w.maps[i].kind == kind)
			return 1;
	return 0;
}

static void test_borrow_across_registries_maps_each_side(void **state)
{
	struct sio_adapter before[NODES], after[NODES];
	int i, j;

	(void)state;
	lend_to_all();
	adapters(before);
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 256u << 20), 0);
	assert_int_equal(w.claims, 1);
	assert_int_equal(w.loops, 0);
	assert_true(sio_dev(w.reg[0], 0)->borrowers >> 1 & 1);
	assert_true(sio_dev(w.reg[1], 0)->borrowers >> 1 & 1);
	/* The lender translates the BAR, the borrower DMA and MSI windows. */
	assert_true(has_map(0, SIO_INB_BAR));
	assert_true(has_map(1, SIO_INB_DMA));
	assert_true(has_map(1, SIO_INB_MSI));
	for (i = 0; i < w.nmaps; i++)
		if (w.maps[i].kind == SIO_INB_BAR)
			assert_int_equal(w.maps[i].local_addr,
					 sio_dev(w.reg[0], 0)->bar[0].addr);
	assert_int_equal(w.nmaps, 3);
	/* Exclusive: node 2 is refused, and nothing is claimed again. */
	assert_int_equal(push_table(0, 2, 0, NULL), 0);
	assert_int_equal(cmd(2, SIO_CMD_BORROW, 0, 2, 256u << 20), -EBUSY);
	assert_int_equal(w.claims, 1);
	assert_int_equal(cmd(1, SIO_CMD_RETURN, 0, 1, 0), 0);
	assert_int_equal(w.unclaims, 1);
	assert_int_equal(w.loops, 0);
	/* Every map unmapped, by the side that mapped it. */
	assert_int_equal(w.nunmaps, w.nmaps);
	for (i = 0; i < w.nmaps; i++) {
		int found = 0;

		for (j = 0; j < w.nunmaps; j++)
			found |= w.unmaps[j].self == w.maps[i].self &&
				 w.unmaps[j].kind == w.maps[i].kind &&
				 w.unmaps[j].peer_addr == w.maps[i].peer_addr;
		assert_true(found);
	}
	assert_int_equal(sio_dev(w.reg[0], 0)->borrowers, 0);
	assert_int_equal(sio_borrow_find(w.reg[0], 0, 1), -ENOENT);
	assert_int_equal(sio_borrow_find(w.reg[1], 0, 1), -ENOENT);
	adapters(after);
	for (i = 0; i < NODES; i++)
		assert_memory_equal(&before[i], &after[i], sizeof(before[i]));
}

static void test_borrow_across_registries_refused_never_claims(void **state)
{
	struct sio_adapter before[NODES], after[NODES];
	int i;

	(void)state;
	assert_int_equal(push_table(0, 1, 0, NULL), 0);	/* policy none */
	adapters(before);
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 256u << 20), -EACCES);
	/* A DMA window larger than the lender's window: no room. */
	lend_to_all();
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 2ull << 30), -ENOSPC);
	assert_int_equal(w.claims, 0);
	assert_int_equal(w.nmaps, w.nunmaps);
	adapters(after);
	for (i = 0; i < NODES; i++)
		assert_memory_equal(&before[i], &after[i], sizeof(before[i]));
	assert_int_equal(sio_borrow_find(w.reg[0], 0, 1), -ENOENT);
	assert_int_equal(sio_borrow_find(w.reg[1], 0, 1), -ENOENT);
}

/*
 * Issue 29: a user's borrow for another machine's node, window= or not,
 * and its other commands that act for this node only, are refused where
 * they enter (EPERM), before anything is sent: the other machine would
 * refuse them (origin.c) and count them against this node.
 */
static void test_command_for_another_node_refused_before_sent(void **state)
{
	u32 r0, r2;

	(void)state;
	lend_to_all();
	r0 = sio_node(w.reg[0], 1)->refused;
	r2 = sio_node(w.reg[2], 1)->refused;
	/* Node 1's user borrows node 0's device for node 2, sized or not. */
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 2, 256u << 20), -EPERM);
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 2, 0), -EPERM);
	assert_int_equal(cmd(1, SIO_CMD_RETURN, 0, 2, 0), -EPERM);
	/* ...sets node 0's lend policy. */
	assert_int_equal(cmd(1, SIO_CMD_LEND, 0, 1, 0), -EPERM);
	assert_int_equal(sio_node(w.reg[2], 1)->refused, r2);
	assert_int_equal(sio_node(w.reg[0], 1)->refused, r0);
	assert_int_equal(w.claims, 0);
	assert_int_equal(sio_dev(w.reg[0], 0)->borrowers, 0);
	assert_int_equal(sio_borrow_find(w.reg[2], 0, 2), -ENOENT);
	/* Its own borrow, sized, still goes through. */
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 256u << 20), 0);
	assert_int_equal(cmd(1, SIO_CMD_RETURN, 0, 1, 0), 0);
}

/*
 * A lender that claims the device without the core's lock asks for it
 * first: that pass refuses nothing for good (no denial counted, nothing
 * held), and the request served again grants the borrow.
 */
static void test_borrow_across_registries_claim_asked_then_granted(void **state)
{
	(void)state;
	lend_to_all();
	w.claim_later = 1;
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 256u << 20), 0);
	assert_int_equal(w.asked, 1);
	assert_int_equal(w.claims, 1);
	assert_int_equal(sio_dev(w.reg[0], 0)->stats.denied, 0);
	assert_true(sio_dev(w.reg[0], 0)->borrowers >> 1 & 1);
	assert_int_equal(w.nmaps, 3);
	assert_int_equal(cmd(1, SIO_CMD_RETURN, 0, 1, 0), 0);
	assert_int_equal(w.unclaims, 1);
	assert_int_equal(w.nunmaps, w.nmaps);
	assert_int_equal(sio_dev(w.reg[0], 0)->borrowers, 0);
}

static void test_borrow_across_registries_reclaim_releases_both(void **state)
{
	(void)state;
	lend_to_all();
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 256u << 20), 0);
	assert_int_equal(cmd(0, SIO_CMD_RECLAIM, 0, 0, 0), 0);
	assert_int_equal(w.loops, 0);
	assert_int_equal(w.unclaims, 1);
	assert_int_equal(w.nunmaps, w.nmaps);
	assert_int_equal(sio_borrow_find(w.reg[0], 0, 1), -ENOENT);
	assert_int_equal(sio_borrow_find(w.reg[1], 0, 1), -ENOENT);
	assert_int_equal(sio_dev(w.reg[0], 0)->borrowers, 0);
	assert_int_equal(sio_dev(w.reg[1], 0)->borrowers, 0);
}

static void test_borrow_across_registries_node_loss_releases(void **state)
{
	(void)state;
	lend_to_all();
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 256u << 20), 0);
	/* Each side learns of the other's loss on its own. */
	sio_core_node_down(&w.core[0], 1);
	sio_core_node_down(&w.core[1], 0);
	assert_int_equal(w.loops, 0);
	assert_int_equal(w.unclaims, 1);
	assert_int_equal(w.nunmaps, w.nmaps);
	assert_int_equal(sio_borrow_find(w.reg[0], 0, 1), -ENOENT);
	assert_int_equal(sio_borrow_find(w.reg[1], 0, 1), -ENOENT);
}

/* Node 0 lends to all, node 1 borrows; node 2 sizes a segment "dst". */
static void three_domains(void)
{
	lend_to_all();
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 256u << 20), 0);
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_CREATE, "dst", ~0u, 0), 0);
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_SIZE, "dst", ~0u, 1u << 20), 0);
}

/* Node's record of the lender's half of a WINDOW mapping, or NULL. */
static const struct sio_segdma *lender_record(u32 node)
{
	u32 i;

	for (i = 0; i < w.reg[node]->max_segdma; i++) {
		const struct sio_segdma *m = sio_segdma_at(w.reg[node], i);

		if (m->used && m->kind == SIO_SEGDMA_LENDER)
			return m;
	}
	return NULL;
}

static void test_segment_dma_across_registries_maps_each_side(void **state)
{
	struct sio_adapter before[NODES], after[NODES];
	const struct sio_segment *s;
	const struct sio_segdma *l, *o;
	int seg, idx, i, maps;

	(void)state;
	three_domains();
	adapters(before);
	maps = w.nmaps;
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_DMA_MAP, "dst", 0, 0), 0);
	assert_int_equal(w.loops, 0);
	seg = sio_seg_lookup(w.reg[2], 2, "dst");
	assert_true(seg >= 0);
	s = sio_seg(w.reg[2], (u32)seg);
	idx = sio_segdma_find(w.reg[2], (u32)seg, 0);
	assert_true(idx >= 0);
	o = sio_segdma_at(w.reg[2], (u32)idx);
	assert_int_equal(o->kind, SIO_SEGDMA_WINDOW);
	assert_int_equal(o->owner, 2);
	/* The lender's half: LUT slots of its own toward node 2. */
	l = lender_record(0);
	assert_non_null(l);
	assert_int_equal(l->owner, 2);
	assert_int_equal(l->iova, o->iova);
	assert_true(l->lut >= 0);
	assert_int_equal(l->lut_count, 1);
	assert_true(sio_node(w.reg[0], 0)->adapter[0].luts.used >
		    before[0].luts.used);
	/* The device's address is the granted window address ... */
	assert_int_equal(o->window, last_addr);
	assert_int_equal(o->ioaddr, last_addr);
	assert_int_equal(last_addr,
			 sio_node(w.reg[0], 0)->adapter[0].window_base +
			 (u64)l->lut * sio_node(w.reg[0], 0)->adapter[0].slot_size);
	/* ... which node 2 translates onto the segment. */
	assert_int_equal(w.nmaps, maps + 1);
	assert_int_equal(w.maps[maps].self, 2);
	assert_int_equal(w.maps[maps].peer, 0);
	assert_int_equal(w.maps[maps].kind, SIO_INB_SEG);
	assert_int_equal(w.maps[maps].peer_addr, last_addr);
	assert_int_equal(w.maps[maps].local_addr, s->phys);
	assert_int_equal(w.maps[maps].size, 1u << 20);
	/* Mapped twice: EEXIST; the segment cannot go while mapped. */
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_DMA_MAP, "dst", 0, 0), -EEXIST);
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_DESTROY, "dst", ~0u, 0), -EBUSY);
	/* Unmapped: both halves gone, the lender's slots free again. */
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_DMA_UNMAP, "dst", 0, 0), 0);
	assert_null(lender_record(0));
	assert_int_equal(sio_segdma_find(w.reg[2], (u32)seg, 0), -ENOENT);
	assert_int_equal(w.unmaps[w.nunmaps - 1].kind, SIO_INB_SEG);
	assert_int_equal(w.unmaps[w.nunmaps - 1].peer_addr, last_addr);
	adapters(after);
	for (i = 0; i < NODES; i++)
		assert_memory_equal(&before[i], &after[i], sizeof(before[i]));
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_DESTROY, "dst", ~0u, 0), 0);
}

static void test_segment_dma_across_registries_node_loss_frees(void **state)
{
	struct sio_adapter before[NODES];
	int seg, n;

	(void)state;
	three_domains();
	adapters(before);
	seg = sio_seg_lookup(w.reg[2], 2, "dst");
	assert_true(seg >= 0);
	/* The owner lost: the lender frees its half on its own. */
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_DMA_MAP, "dst", 0, 0), 0);
	sio_core_node_down(&w.core[0], 2);
	assert_null(lender_record(0));
	assert_int_equal(sio_node(w.reg[0], 0)->adapter[0].luts.used,
			 before[0].luts.used);
	/* The lender has forgotten it: the owner's unmap still completes. */
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_DMA_UNMAP, "dst", 0, 0), 0);
	assert_int_equal(sio_segdma_find(w.reg[2], (u32)seg, 0), -ENOENT);
	/* The lender lost: the owner unmaps its side, asks nobody. */
	sio_core_node_up(&w.core[0], 2);
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_DMA_MAP, "dst", 0, 0), 0);
	n = w.nunmaps;
	sio_core_node_down(&w.core[2], 0);
	assert_int_equal(sio_segdma_find(w.reg[2], (u32)seg, 0), -ENOENT);
	assert_int_equal(w.nunmaps, n + 1);
	assert_int_equal(w.unmaps[n].kind, SIO_INB_SEG);
	assert_int_equal(w.loops, 0);
}

/* The release the core reported is of the placement it got. */
static void released_as_placed(int n)
{
	assert_int_equal(pl.releases, n);
	assert_int_equal(pl.release.self, pl.place.self);
	assert_int_equal(pl.release.dev, pl.place.dev);
	assert_int_equal(pl.release.local_addr, pl.place.local_addr);
	assert_int_equal(pl.release.size, pl.place.size);
	assert_int_equal(pl.release.peer_addr, last_addr);
}

static void test_segment_dma_borrowed_placed_by_platform(void **state)
{
	const struct sio_segdma *m;
	int seg, idx;

	(void)state;
	memset(&pl, 0, sizeof(pl));
	w.core[1].ops = &ops_place;
	lend_to_all();
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 256u << 20), 0);
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_CREATE, "own", ~0u, 0), 0);
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_SIZE, "own", ~0u, 64u << 10),
			 0);
	seg = sio_seg_lookup(w.reg[1], 1, "own");
	assert_true(seg >= 0);
	/* The window is full: refused as it said, nothing to release. */
	pl.err = -ENOSPC;
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_DMA_MAP, "own", 0, 0),
			 -ENOSPC);
	assert_int_equal(sio_segdma_find(w.reg[1], (u32)seg, 0), -ENOENT);
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_DMA_UNMAP, "own", 0, 0),
			 -ENOENT);
	assert_int_equal(pl.releases, 0);
	pl.err = 0;
	/* Placed by the platform: its address, no IOMMU call of the core's. */
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_DMA_MAP, "own", 0, 0), 0);
	assert_int_equal(pl.places, 1);
	assert_int_equal(pl.place.self, 1);
	assert_int_equal(pl.place.dev, 0);
	assert_int_equal(pl.place.local_addr, sio_seg(w.reg[1], (u32)seg)->phys);
	assert_int_equal(pl.place.size, 64u << 10);
	assert_int_equal(last_addr, PLACE_BASE + (64u << 10));
	idx = sio_segdma_find(w.reg[1], (u32)seg, 0);
	assert_true(idx >= 0);
	m = sio_segdma_at(w.reg[1], (u32)idx);
	assert_int_equal(m->kind, SIO_SEGDMA_BORROW);
	assert_int_equal(m->direct, 1);
	assert_int_equal(m->ioaddr, last_addr);
	assert_int_equal(pl.releases, 0);
	/* The segment's unmap for the device: released once. */
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_DMA_UNMAP, "own", 0, 0), 0);
	released_as_placed(1);
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_DMA_UNMAP, "own", 0, 0),
			 -ENOENT);
	assert_int_equal(pl.releases, 1);
	/* The borrow's end releases what is still placed. */
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_DMA_MAP, "own", 0, 0), 0);
	assert_int_equal(cmd(1, SIO_CMD_RETURN, 0, 1, 0), 0);
	released_as_placed(2);
	assert_int_equal(sio_segdma_find(w.reg[1], (u32)seg, 0), -ENOENT);
	/* So does the loss of the lender. */
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 256u << 20), 0);
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_DMA_MAP, "own", 0, 0), 0);
	assert_int_equal(pl.places, 3);
	sio_core_node_down(&w.core[1], 0);
	released_as_placed(3);
	assert_int_equal(sio_segdma_find(w.reg[1], (u32)seg, 0), -ENOENT);
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_DESTROY, "own", ~0u, 0), 0);
	assert_int_equal(pl.releases, 3);
	assert_int_equal(w.loops, 0);
}

/* A MAP_SEG_WINDOW as node `from` sends it to node 0, claiming `owner`. */
static int seg_window_req(u32 from, u32 owner, u32 dev, u64 size)
{
	u8 buf[256], reply[512];
	struct sio_parsed p;
	struct sio_msg m;
	int n;

	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_MAP_SEG_WINDOW,
		     SIO_F_REQUEST, 7);
	sio_msg_put_u32(&m, SIO_A_DEV, sio_dev(w.reg[0], dev)->fdid);
	sio_msg_put_u32(&m, SIO_A_NODE, owner);
	sio_msg_put_u64(&m, SIO_A_IOVA, SIO_IOVA_BASE);
	sio_msg_put_u64(&m, SIO_A_SIZE, size);
	assert_true(sio_msg_finish(&m) > 0);
	n = sio_core_dispatch_from(&w.core[0], 0, from, buf, m.len, reply,
				   sizeof(reply));
	assert_true(n > 0);
	assert_int_equal(sio_msg_parse(reply, (u32)n, &p), 0);
	return sio_nla_s32(&p.tb[SIO_A_ERRNO]);
}

static void test_segment_dma_across_registries_hostile_requests(void **state)
{
	unsigned char *before;

	(void)state;
	three_domains();
	before = malloc(w.size);
	assert_non_null(before);
	memcpy(before, w.reg[0], w.size);
	/* Not whole pages, nothing, more than the window: EINVAL. */
	assert_int_equal(seg_window_req(2, 2, 0, 4097), -EINVAL);
	assert_int_equal(seg_window_req(2, 2, 0, 0), -EINVAL);
	assert_int_equal(seg_window_req(2, 2, 0, 16ull << 30), -EINVAL);
	/* For the lender itself: ENXIO. */
	assert_int_equal(seg_window_req(0, 0, 0, 4096), -ENXIO);
	assert_memory_equal(before, w.reg[0], w.size);
	/* As another owner than the sender: EPERM, counted, nothing mapped. */
	assert_int_equal(seg_window_req(2, 1, 0, 4096), -EPERM);
	assert_int_equal(sio_node(w.reg[0], 2)->refused, 1);
	assert_null(lender_record(0));
	assert_int_equal(sio_node(w.reg[0], 0)->adapter[0].luts.used,
			 sio_node((struct sio_registry *)before, 0)->adapter[0].luts.used);
	/* More slots than the window has free: refused, nothing kept. */
	memcpy(before, w.reg[0], w.size);
	assert_int_equal(seg_window_req(2, 2, 0, 8ull << 27), -ENOSPC);
	assert_null(lender_record(0));
	free(before);
}

/* Node 2's inbound translations of segments still in place. */
static int seg_translations(void)
{
	int i, j, n = 0;

	for (i = 0; i < w.nmaps; i++) {
		int gone = 0;

		if (w.maps[i].kind != SIO_INB_SEG)
			continue;
		for (j = 0; j < w.nunmaps; j++)
			gone |= w.unmaps[j].kind == SIO_INB_SEG &&
				w.unmaps[j].self == w.maps[i].self &&
				w.unmaps[j].peer_addr == w.maps[i].peer_addr;
		n += !gone;
	}
	return n;
}

/*
 * Node 2's segment "pub" (64 KiB), exported or not, with its table at
 * node 1; node 1's index of its copy.
 */
static int published(int available)
{
	u8 tab[2048], reply[256];
	int len, n, seg;

	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_CREATE, "pub", ~0u, 0), 0);
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_SIZE, "pub", ~0u, 64u << 10),
			 0);
	seg = sio_seg_lookup(w.reg[2], 2, "pub");
	assert_true(seg >= 0);
	sio_seg(w.reg[2], (u32)seg)->available = (u8)available;
	len = sio_core_seg_table(&w.core[2], 2, 1, tab, sizeof(tab));
	assert_true(len > 0);
	n = sio_core_dispatch_from(&w.core[1], 1, 2, tab, (u32)len, reply,
				   sizeof(reply));
	assert_true(n > 0);
	seg = sio_seg_lookup(w.reg[1], 2, "pub");
	assert_true(seg >= 0);
	return seg;
}

/* Node 1's user attaches (or detaches) node 2's segment. */
static int attach_cmd(u8 c, u32 seg)
{
	u8 buf[256], rep[512];
	struct sio_parsed p;
	struct sio_msg m;

	(void)seg;
	sio_msg_init(&m, buf, sizeof(buf), c, SIO_F_REQUEST, 1);
	sio_msg_put_u32(&m, SIO_A_NODE, 2);
	sio_msg_put_str(&m, SIO_A_NAME, "pub");
	sio_msg_put_u32(&m, SIO_A_PEER, 1);
	return sio_core_call(&w.core[1], 1, 1, &m, &p, rep, sizeof(rep));
}

static void test_attach_across_registries_translates_exactly(void **state)
{
	const struct sio_attach *a;
	int seg, idx, i, half = -1;

	(void)state;
	seg = published(1);
	assert_int_equal(attach_cmd(SIO_CMD_SEG_ATTACH, (u32)seg), 0);
	idx = sio_attach_find(w.reg[1], (u32)seg, 1);
	assert_true(idx >= 0);
	a = sio_attach_at(w.reg[1], (u32)idx);
	assert_true(a->lut >= 0);
	/* Node 2 translates node 1's slots, and only those, onto "pub". */
	assert_int_equal(seg_translations(), 1);
	for (i = 0; i < w.nmaps; i++)
		if (w.maps[i].kind == SIO_INB_SEG)
			half = i;
	assert_int_equal(w.maps[half].self, 2);
	assert_int_equal(w.maps[half].peer, 1);
	assert_int_equal(w.maps[half].peer_addr, a->local_addr);
	assert_int_equal(w.maps[half].local_addr,
			 sio_seg(w.reg[2], (u32)sio_seg_lookup(w.reg[2], 2,
							       "pub"))->phys);
	assert_int_equal(w.maps[half].size, 64u << 10);
	assert_true(sio_seg(w.reg[2], (u32)sio_seg_lookup(w.reg[2], 2, "pub"))
			    ->attached >> 1 & 1);
	/* The detach takes the translation away. */
	assert_int_equal(attach_cmd(SIO_CMD_SEG_DETACH, (u32)seg), 0);
	assert_int_equal(seg_translations(), 0);
	assert_int_equal(sio_attach_find(w.reg[1], (u32)seg, 1), -ENOENT);
	assert_int_equal(sio_attach_find(w.reg[2],
			 (u32)sio_seg_lookup(w.reg[2], 2, "pub"), 1), -ENOENT);
	assert_int_equal(w.loops, 0);
}

/* Node 2's user attaches node 1's segment "mine", as the kernel would run
 * it on node 1 while node 1's own attach waits for node 2. */
static void node2_attaches_mine(void)
{
	u8 buf[256], rep[512];
	struct sio_parsed p;
	struct sio_msg m;

	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_SEG_ATTACH, SIO_F_REQUEST,
		     1);
	sio_msg_put_u32(&m, SIO_A_NODE, 1);
	sio_msg_put_str(&m, SIO_A_NAME, "mine");
	sio_msg_put_u32(&m, SIO_A_PEER, 2);
	assert_int_equal(sio_core_call(&w.core[2], 2, 2, &m, &p, rep,
				       sizeof(rep)), 0);
}

/*
 * Two nodes attaching each other's segments at once: node 2's attach,
 * run on node 1 while node 1's own attach waits for node 2's reply, takes
 * the attach record node 1 had picked (the owner's half).  Node 1 picks
 * another once the reply is in, and both attachments stand (check-ntb's
 * crossing loops hit this: ENOSPC "taken while we waited").
 */
static void test_attach_across_registries_crossing_attaches(void **state)
{
	u8 tab[2048], reply[256];
	int seg, mine, len;

	(void)state;
	seg = published(1);
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_CREATE, "mine", ~0u, 0), 0);
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_SIZE, "mine", ~0u, 64u << 10),
			 0);
	mine = sio_seg_lookup(w.reg[1], 1, "mine");
	assert_true(mine >= 0);
	sio_seg(w.reg[1], (u32)mine)->available = 1;
	len = sio_core_seg_table(&w.core[1], 1, 2, tab, sizeof(tab));
	assert_true(len > 0);
	assert_true(sio_core_dispatch_from(&w.core[2], 2, 1, tab, (u32)len,
					   reply, sizeof(reply)) > 0);
	w.in_place = node2_attaches_mine;
	assert_int_equal(attach_cmd(SIO_CMD_SEG_ATTACH, (u32)seg), 0);
	assert_null(w.in_place);
	assert_true(sio_attach_find(w.reg[1], (u32)seg, 1) >= 0);
	assert_true(sio_seg(w.reg[1], (u32)mine)->attached >> 2 & 1);
	assert_int_equal(seg_translations(), 2);
	assert_int_equal(w.loops, 0);
}

static void test_attach_across_registries_unexported_untranslated(void **state)
{
	struct sio_adapter before[NODES], after[NODES];
	int seg, i;

	(void)state;
	seg = published(0);
	adapters(before);
	assert_int_equal(attach_cmd(SIO_CMD_SEG_ATTACH, (u32)seg), -EACCES);
	assert_int_equal(seg_translations(), 0);
	assert_int_equal(sio_attach_find(w.reg[1], (u32)seg, 1), -ENOENT);
	adapters(after);
	for (i = 0; i < NODES; i++)
		assert_memory_equal(&before[i], &after[i], sizeof(before[i]));
}

static void test_attach_across_registries_peer_loss_untranslates(void **state)
{
	int seg;

	(void)state;
	seg = published(1);
	assert_int_equal(attach_cmd(SIO_CMD_SEG_ATTACH, (u32)seg), 0);
	assert_int_equal(seg_translations(), 1);
	sio_core_node_down(&w.core[2], 1);
	assert_int_equal(seg_translations(), 0);
	assert_int_equal(sio_seg(w.reg[2], (u32)sio_seg_lookup(w.reg[2], 2,
					"pub"))->attached, 0);
}

/* Node 1 borrows A (node 0's device) and B (node 2's); tables exchanged. */
static void two_lenders(void)
{
	u32 a = 0, b = 2 * SLOTS, n;

	assert_int_equal(cmd(0, SIO_CMD_LEND, a, 0, 0), 0);
	assert_int_equal(cmd(2, SIO_CMD_LEND, b, 2, 0), 0);
	for (n = 0; n < NODES; n++) {
		if (n != 0)
			assert_int_equal(push_table(0, n, 0, NULL), 0);
		if (n != 2)
			assert_int_equal(push_table(2, n, 2, NULL), 0);
	}
	assert_int_equal(cmd(1, SIO_CMD_BORROW, a, 1, 256u << 20), 0);
	assert_int_equal(cmd(1, SIO_CMD_BORROW, b, 1, 256u << 20), 0);
	/* Who borrows what, as the lenders' next tables say. */
	assert_int_equal(push_table(0, 2, 0, NULL), 0);
	assert_int_equal(push_table(2, 0, 2, NULL), 0);
	assert_int_equal(push_table(0, 1, 0, NULL), 0);
	assert_int_equal(push_table(2, 1, 2, NULL), 0);
}

/* PEER_MAP or PEER_UNMAP of device b for device a by node 1's user. */
static int peer_cmd_of(u8 c, u32 a, u32 b)
{
	u8 buf[256], rep[1024];
	struct sio_parsed p;
	struct sio_msg m;

	sio_msg_init(&m, buf, sizeof(buf), c, SIO_F_REQUEST, 1);
	sio_msg_put_u32(&m, SIO_A_DEV, sio_dev(w.reg[1], a)->fdid);
	sio_msg_put_u32(&m, SIO_A_NODE, 1);
	sio_msg_put_u32(&m, SIO_A_INDEX, sio_dev(w.reg[1], b)->fdid);
	return sio_core_call(&w.core[1], 1, 1, &m, &p, rep, sizeof(rep));
}

/* PEER_MAP or PEER_UNMAP of B (node 2's) for A (node 0's) by node 1. */
static int peer_cmd(u8 c)
{
	return peer_cmd_of(c, 0, 2 * SLOTS);
}

static const struct sio_peermap *peer_record(u32 node, u8 kind)
{
	u32 i;

	for (i = 0; i < w.reg[node]->max_peermap; i++) {
		const struct sio_peermap *m = sio_peermap_at(w.reg[node], i);

		if (m->used && m->kind == kind)
			return m;
	}
	return NULL;
}

static void test_peer_across_registries_maps_each_side(void **state)
{
	struct sio_adapter before[NODES], after[NODES];
	const struct sio_peermap *la, *lb, *cp;
	int i, maps;

	(void)state;
	two_lenders();
	adapters(before);
	maps = w.nmaps;
	assert_int_equal(peer_cmd(SIO_CMD_PEER_MAP), 0);
	assert_int_equal(w.loops, 0);
	la = peer_record(0, SIO_PEERMAP_MAP);
	lb = peer_record(2, SIO_PEERMAP_EXPOSED);
	cp = peer_record(1, SIO_PEERMAP_COPY);
	assert_non_null(la);
	assert_non_null(lb);
	assert_non_null(cp);
	/* Node 0's slots toward node 2, translated there onto B's BAR 0. */
	assert_true(la->lut >= 0);
	assert_int_equal(lb->iova, la->iova);
	assert_int_equal(lb->node, 1);	/* the asker */
	assert_int_equal(lb->via, 0);	/* whose window address it is */
	assert_int_equal(w.nmaps, maps + 1);
	assert_int_equal(w.maps[maps].self, 2);
	assert_int_equal(w.maps[maps].peer, 0);
	assert_int_equal(w.maps[maps].kind, SIO_INB_BAR);
	assert_int_equal(w.maps[maps].peer_addr, la->iova);
	assert_int_equal(w.maps[maps].local_addr,
			 sio_dev(w.reg[2], 2 * SLOTS)->bar[0].addr);
	/* The asker sees the address A uses. */
	assert_int_equal(cp->ioaddr, la->ioaddr);
	assert_int_equal(cp->bar, 0);
	assert_int_equal(peer_cmd(SIO_CMD_PEER_MAP), -EEXIST);
	/* Unmapped: every half gone, node 0's slots free again. */
	assert_int_equal(peer_cmd(SIO_CMD_PEER_UNMAP), 0);
	assert_null(peer_record(0, SIO_PEERMAP_MAP));
	assert_null(peer_record(2, SIO_PEERMAP_EXPOSED));
	assert_null(peer_record(1, SIO_PEERMAP_COPY));
	assert_int_equal(w.unmaps[w.nunmaps - 1].kind, SIO_INB_BAR);
	adapters(after);
	for (i = 0; i < NODES; i++)
		assert_memory_equal(&before[i], &after[i], sizeof(before[i]));
}

static void test_peer_across_registries_lender_loss_undoes(void **state)
{
	int n;

	(void)state;
	two_lenders();
	assert_int_equal(peer_cmd(SIO_CMD_PEER_MAP), 0);
	n = w.nunmaps;
	sio_core_node_down(&w.core[2], 0);
	assert_null(peer_record(2, SIO_PEERMAP_EXPOSED));
	assert_int_equal(w.unmaps[n].self, 2);
	assert_int_equal(w.unmaps[n].kind, SIO_INB_BAR);
	sio_core_node_down(&w.core[1], 0);
	assert_null(peer_record(1, SIO_PEERMAP_COPY));
	assert_int_equal(w.loops, 0);
}

/* Node 1 borrows both devices of node 0 (setup_second); tables exchanged. */
static void one_lender_two_devices(void)
{
	u32 n, d;

	for (d = 0; d < 2; d++)
		assert_int_equal(cmd(0, SIO_CMD_LEND, d, 0, 0), 0);
	for (n = 1; n < NODES; n++)
		assert_int_equal(push_table(0, n, 0, NULL), 0);
	for (d = 0; d < 2; d++)
		assert_int_equal(cmd(1, SIO_CMD_BORROW, d, 1, 256u << 20), 0);
	assert_int_equal(push_table(0, 1, 0, NULL), 0);
	assert_int_equal(push_table(0, 2, 0, NULL), 0);
}

/*
 * SmartIO 4.4's first case across registries: A and B on node 0, asked
 * by node 1.  Node 0 maps each BAR of B in A's IOMMU domain (A's
 * requester id) and answers those addresses; no LUT slot, nothing
 * exposed anywhere; the unmap gives every address back.
 */
static void test_peer_one_lender_maps_in_its_iommu(void **state)
{
	struct sio_range space = sio_node(w.reg[0], 0)->iova;
	struct sio_adapter before;
	const struct sio_device *a = sio_dev(w.reg[0], 0);
	const struct sio_device *b = sio_dev(w.reg[0], 1);
	const struct sio_peermap *la, *cp;
	int maps, i;

	(void)state;
	one_lender_two_devices();
	w.local_iommu = 1;
	before = sio_node(w.reg[0], 0)->adapter[0];
	maps = w.nmaps;
	assert_int_equal(peer_cmd_of(SIO_CMD_PEER_MAP, 0, 1), 0);
	assert_int_equal(w.loops, 0);
	/* BAR 0 and BAR 2 of B, each in A's domain onto the BAR itself. */
	assert_int_equal(w.niommu, 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(w.iommu[i].self, 0);
		assert_int_equal(w.iommu[i].peer, 0);
		assert_int_equal(w.iommu[i].kind, a->rid);
		assert_true(w.iommu[i].peer_addr >= SIO_IOVA_BASE);
	}
	assert_int_equal(w.iommu[0].local_addr, b->bar[0].addr);
	assert_int_equal(w.iommu[0].size, b->bar[0].size);
	assert_int_equal(w.iommu[1].local_addr, b->bar[2].addr);
	assert_int_equal(w.iommu[1].size, b->bar[2].size);
	la = peer_record(0, SIO_PEERMAP_MAP);
	cp = peer_record(1, SIO_PEERMAP_COPY);
	assert_non_null(la);
	assert_non_null(cp);
	assert_int_equal(la->lut, -1);
	assert_int_equal(la->iova, w.iommu[0].peer_addr);
	assert_int_equal(cp->ioaddr, la->ioaddr);
	assert_int_equal(cp->ioaddr, la->iova);
	assert_null(peer_record(2, SIO_PEERMAP_EXPOSED));
	assert_int_equal(w.nmaps, maps);
	assert_memory_equal(&sio_node(w.reg[0], 0)->adapter[0], &before,
			    sizeof(before));
	assert_int_equal(peer_cmd_of(SIO_CMD_PEER_MAP, 0, 1), -EEXIST);
	assert_int_equal(peer_cmd_of(SIO_CMD_PEER_UNMAP, 0, 1), 0);
	assert_null(peer_record(0, SIO_PEERMAP_MAP));
	assert_null(peer_record(1, SIO_PEERMAP_COPY));
	assert_int_equal(w.niounmap, 2);
	assert_int_equal(w.iounmap[0].peer_addr, w.iommu[0].peer_addr);
	assert_int_equal(w.iounmap[1].peer_addr, w.iommu[1].peer_addr);
	assert_memory_equal(&sio_node(w.reg[0], 0)->iova, &space,
			    sizeof(space));
}

/* A platform that cannot program the device's domain: refused, nothing
 * left behind; the asker lost: node 0 frees the mapping on its own. */
static void test_peer_one_lender_refused_or_lost(void **state)
{
	struct sio_range space = sio_node(w.reg[0], 0)->iova;

	(void)state;
	one_lender_two_devices();
	assert_int_equal(peer_cmd_of(SIO_CMD_PEER_MAP, 0, 1), -EOPNOTSUPP);
	assert_null(peer_record(0, SIO_PEERMAP_MAP));
	assert_null(peer_record(1, SIO_PEERMAP_COPY));
	assert_memory_equal(&sio_node(w.reg[0], 0)->iova, &space,
			    sizeof(space));
	w.local_iommu = 1;
	assert_int_equal(peer_cmd_of(SIO_CMD_PEER_MAP, 0, 1), 0);
	sio_core_node_down(&w.core[0], 1);
	assert_null(peer_record(0, SIO_PEERMAP_MAP));
	assert_int_equal(w.niounmap, 2);
	assert_memory_equal(&sio_node(w.reg[0], 0)->iova, &space,
			    sizeof(space));
}

/* The asker lost: each lender frees its half on its own. */
static void test_peer_across_registries_asker_loss_undoes(void **state)
{
	struct sio_adapter before;

	(void)state;
	two_lenders();
	before = sio_node(w.reg[0], 0)->adapter[0];
	assert_int_equal(peer_cmd(SIO_CMD_PEER_MAP), 0);
	sio_core_node_down(&w.core[0], 1);
	sio_core_node_down(&w.core[2], 1);
	assert_null(peer_record(0, SIO_PEERMAP_MAP));
	assert_null(peer_record(2, SIO_PEERMAP_EXPOSED));
	/* The borrows went too: node 0's table is as before both. */
	assert_int_equal(sio_node(w.reg[0], 0)->adapter[0].luts.used + 3,
			 before.luts.used);
}

/* A PEER_EXPOSE as node 1 (the asker) sends it to node 2, for node 0's
 * window address addr. */
static int expose_req(u64 addr)
{
	u8 buf[256], reply[256];
	struct sio_parsed p;
	struct sio_msg m;
	int n;

	sio_msg_init(&m, buf, sizeof(buf), SIO_CMD_PEER_EXPOSE, SIO_F_REQUEST,
		     3);
	sio_msg_put_u32(&m, SIO_A_DEV, sio_dev(w.reg[2], 2 * SLOTS)->fdid);
	sio_msg_put_u32(&m, SIO_A_PEER, 0);
	sio_msg_put_u32(&m, SIO_A_NODE, 1);
	sio_msg_put_u32(&m, SIO_A_RID, 0x20);
	sio_msg_put_u32(&m, SIO_A_INDEX, 0);
	sio_msg_put_u64(&m, SIO_A_IOVA, addr);
	assert_true(sio_msg_finish(&m) > 0);
	n = sio_core_dispatch_from(&w.core[2], 2, 1, buf, m.len, reply,
				   sizeof(reply));
	assert_true(n > 0);
	assert_int_equal(sio_msg_parse(reply, (u32)n, &p), 0);
	return sio_nla_s32(&p.tb[SIO_A_ERRNO]);
}

static void test_peer_across_registries_hostile_expose(void **state)
{
	const struct sio_adapter *ad;
	unsigned char *before;

	(void)state;
	two_lenders();
	ad = &sio_node(w.reg[2], 0)->adapter[0];
	before = malloc(w.size);
	assert_non_null(before);
	memcpy(before, w.reg[2], w.size);
	/* Off a slot, outside node 0's window, or nothing: EINVAL. */
	assert_int_equal(expose_req(ad->window_base + 4096), -EINVAL);
	assert_int_equal(expose_req(ad->window_base + ad->window_size), -EINVAL);
	assert_int_equal(expose_req(0), -EINVAL);
	assert_memory_equal(before, w.reg[2], w.size);
	assert_null(peer_record(2, SIO_PEERMAP_EXPOSED));
	/* On a slot of node 0's window: exposed once, twice is EEXIST. */
	assert_int_equal(expose_req(ad->window_base), 0);
	assert_int_equal(expose_req(ad->window_base), -EEXIST);
	free(before);
}

static void test_lut_share_bounds_one_node(void **state)
{
	struct sio_adapter *ad = &sio_node(w.reg[0], 0)->adapter[0];
	unsigned char *before;
	int seg;

	(void)state;
	three_domains();
	/* node 1 holds 3 slots of node 0 (DMA window 2, MSI 1): its share */
	ad->share = 3;
	assert_int_equal(sio_lut_held(&w.core[0], 0, 0, 1), 3);
	assert_int_equal(sio_lut_held(&w.core[0], 0, 0, 2), 0);
	/* node 1 maps a segment of its own for the device: a 4th slot */
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_CREATE, "mine", ~0u, 0), 0);
	assert_int_equal(seg_cmd(1, SIO_CMD_SEG_SIZE, "mine", ~0u, 1u << 20), 0);
	before = malloc(w.size);
	assert_non_null(before);
	memcpy(before, w.reg[0], w.size);
	assert_int_equal(seg_window_req(1, 1, 0, 1u << 20), -ENOSPC);
	assert_memory_equal(before, w.reg[0], w.size);
	free(before);
	/* node 2's own segment window still fits */
	assert_int_equal(seg_cmd(2, SIO_CMD_SEG_DMA_MAP, "dst", 0, 0), 0);
	assert_int_equal(sio_lut_held(&w.core[0], 0, 0, 2), 1);
	seg = sio_seg_lookup(w.reg[2], 2, "dst");
	assert_true(sio_segdma_find(w.reg[2], (u32)seg, 0) >= 0);
	/* without a share node 1 gets its slot */
	ad->share = 0;
	assert_int_equal(seg_window_req(1, 1, 0, 1u << 20), 0);
}

static void test_lut_share_refuses_borrow_before_claim(void **state)
{
	(void)state;
	lend_to_all();
	/* 2 slots per node: a borrow needs 3 (DMA window 2, MSI 1) */
	sio_node(w.reg[0], 0)->adapter[0].share = 2;
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 256u << 20), -ENOSPC);
	assert_int_equal(w.claims, 0);
	assert_int_equal(sio_borrow_find(w.reg[0], 0, 1), -ENOENT);
	assert_int_equal(sio_borrow_find(w.reg[1], 0, 1), -ENOENT);
	sio_node(w.reg[0], 0)->adapter[0].share = 3;
	assert_int_equal(cmd(1, SIO_CMD_BORROW, 0, 1, 256u << 20), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_dev_table_lists_the_lenders_device_everywhere,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_dev_table_hostile_records_change_nothing, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_borrow_across_registries_maps_each_side, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_borrow_across_registries_refused_never_claims,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_command_for_another_node_refused_before_sent,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_borrow_across_registries_claim_asked_then_granted,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_borrow_across_registries_reclaim_releases_both,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_borrow_across_registries_node_loss_releases,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_segment_dma_across_registries_maps_each_side,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_segment_dma_across_registries_node_loss_frees,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_segment_dma_across_registries_hostile_requests,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_segment_dma_borrowed_placed_by_platform, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_attach_across_registries_translates_exactly,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_attach_across_registries_crossing_attaches,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_attach_across_registries_unexported_untranslated,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_attach_across_registries_peer_loss_untranslates,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_peer_across_registries_maps_each_side, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_peer_across_registries_lender_loss_undoes, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_peer_across_registries_asker_loss_undoes, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_peer_across_registries_hostile_expose, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_peer_one_lender_maps_in_its_iommu, setup_second,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_peer_one_lender_refused_or_lost, setup_second,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_lut_share_bounds_one_node, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_lut_share_refuses_borrow_before_claim, setup,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
