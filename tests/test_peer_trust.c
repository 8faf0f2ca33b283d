// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Issue 12, defects 7 and 8: what a node believes of another node.
 *
 * Defect 7 (test_peer_spoofed_origin_*, test_peer_separate_*,
 * test_peer_segment_table_*): a message from another node is handled with
 * the node at the other end of its link (sio_core_dispatch_from, as the
 * simulator's transport and smartio.ko's NTB transport deliver it), and
 * whatever it claims about its origin must be that node: EPERM, nothing
 * changes, counted in the sender's node record, a peer-refused event.
 * When the nodes are separate machines a peer's users act only for their
 * node and use at most their share of this node's segment records.
 *
 * Issue 28, item 13 (test_peer_refusal_flood_*): a node whose users (or
 * kernel) keep sending what is refused fills neither the event ring nor
 * the readers' view: every refusal is counted, the events are limited
 * per sender.
 *
 * Defect 8 (test_peer_reply_validation_*): replies and requests of a
 * hostile peer, made by rewriting what the simulator's transport carries
 * (the peer's own core stays honest): a grant whose BARs differ from the
 * registry's, a DMA window of the lender's whole NTB window, a segment
 * size or window address that is not what was asked.  Each is refused and
 * the LUT slots of both sides are as before.
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
#include <unistd.h>

#include "harness.h"
#include "peer_state.h"
#include "smartio_internal.h"

struct reply {
	u8 buf[SIO_MSG_MAX];
	struct sio_parsed p;
};

/* m, as it arrives at self over the link from node from. */
static int deliver(struct smartio *h, unsigned self, unsigned from,
		   struct sio_msg *m, struct reply *out)
{
	struct sim_fabric *f = sio_lib_fabric(h);
	static struct reply scratch;
	int len = sio_msg_finish(m), n;

	if (!out)
		out = &scratch;
	assert_true(len > 0);
	sim_lock(f);
	n = sio_core_dispatch_from(&f->core, self, from, m->buf, (u32)len,
				   out->buf, sizeof(out->buf));
	sim_unlock(f);
	assert_true(n > 0);
	assert_int_equal(sio_msg_parse(out->buf, (u32)n, &out->p), 0);
	assert_true(out->p.present[SIO_A_ERRNO]);
	return sio_nla_s32(&out->p.tb[SIO_A_ERRNO]);
}

static u32 node_id(struct smartio *h, unsigned n)
{
	return sio_node(sio_lib_fabric(h)->reg, n)->id;
}

static u32 refused(struct smartio *h, unsigned n)
{
	return sio_node(sio_lib_fabric(h)->reg, n)->refused;
}

static unsigned char *snap(struct smartio *h)
{
	struct sim_fabric *f = sio_lib_fabric(h);
	unsigned char *s;

	sim_lock(f);
	s = peer_state(f->reg);
	sim_unlock(f);
	return s;
}

static int same_state(struct smartio *h, unsigned char *before)
{
	struct sim_fabric *f = sio_lib_fabric(h);
	int same;

	sim_lock(f);
	same = peer_state_same(f->reg, before);
	sim_unlock(f);
	free(before);
	return same;
}

/* A refused message: EPERM, nothing changed, counted once, reported. */
static void refused_as(struct smartio *h, unsigned self, unsigned from,
		       struct sio_msg *m)
{
	unsigned char *before = snap(h);
	uint64_t cur = smartio_event_cursor(h);
	u32 count = refused(h, from);
	char obj[64];

	assert_int_equal(deliver(h, self, from, m, NULL), -EPERM);
	assert_true(same_state(h, before));
	assert_int_equal(refused(h, from), count + 1);
	snprintf(obj, sizeof(obj), "nodes/host%u", from);
	assert_true(th_saw_event(h, &cur, "peer-refused", obj));
}

static void msg(struct sio_msg *m, u8 *buf, u32 cap, u8 cmd)
{
	sio_msg_init(m, buf, cap, cmd, SIO_F_REQUEST, 7);
}

/* No SRC or DST attribute in the message. */
#define NO_STAMP (-1)

/* node's heartbeat, stamped with src and dst node ids (or NO_STAMP). */
static void heartbeat(struct sio_msg *m, u8 *buf, u32 cap, unsigned node,
		      long src, long dst)
{
	msg(m, buf, cap, SIO_CMD_HEARTBEAT);
	sio_msg_put_u32(m, SIO_A_NODE, node);
	sio_msg_put_u64(m, SIO_A_SEQ, 1ull << 62);
	sio_msg_put_u64(m, SIO_A_TIME, 1);
	if (src != NO_STAMP)
		sio_msg_put_u32(m, SIO_A_SRC, (u32)src);
	if (dst != NO_STAMP)
		sio_msg_put_u32(m, SIO_A_DST, (u32)dst);
}

/* A node-to-node cmd about device fdid and node. */
static void dev_msg(struct sio_msg *m, u8 *buf, u32 cap, u8 cmd, u32 fdid,
		    unsigned node)
{
	msg(m, buf, cap, cmd);
	sio_msg_put_u32(m, SIO_A_DEV, fdid);
	sio_msg_put_u32(m, SIO_A_NODE, node);
}

static void test_peer_spoofed_origin_is_refused_counted_and_reported(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned h0 = th_node(h, "host0"), h1 = th_node(h, "host1"),
		 h2 = th_node(h, "host2"), h3 = th_node(h, "host3");
	unsigned nvme0 = th_dev(h, "nvme0");
	u32 fdid = sio_dev(sio_lib_fabric(h)->reg, nvme0)->fdid;
	u8 buf[512];
	struct sio_msg m;

	(void)state;
	/* host1 beating for host2, or signing as host2. */
	heartbeat(&m, buf, sizeof(buf), h2, NO_STAMP, NO_STAMP);
	refused_as(h, h0, h1, &m);
	heartbeat(&m, buf, sizeof(buf), h1, node_id(h, h2), NO_STAMP);
	refused_as(h, h0, h1, &m);
	/* Addressed to another node than the one it reached. */
	heartbeat(&m, buf, sizeof(buf), h1, NO_STAMP, node_id(h, h3));
	refused_as(h, h0, h1, &m);
	/* The same beat, honest: accepted. */
	heartbeat(&m, buf, sizeof(buf), h1, node_id(h, h1), node_id(h, h0));
	assert_int_equal(deliver(h, h0, h1, &m, NULL), 0);

	/* host1 asking the lender for a borrow in host2's name. */
	dev_msg(&m, buf, sizeof(buf), SIO_CMD_BORROW_REQ, fdid, h2);
	refused_as(h, h0, h1, &m);
	/* host1 giving back host2's window, sending host0's segment table,
	 * asking for a table as host3. */
	dev_msg(&m, buf, sizeof(buf), SIO_CMD_RETURN_REQ, fdid, h2);
	refused_as(h, h0, h1, &m);
	msg(&m, buf, sizeof(buf), SIO_CMD_SEG_TABLE);
	sio_msg_put_u32(&m, SIO_A_NODE, h2);
	refused_as(h, h0, h1, &m);
	msg(&m, buf, sizeof(buf), SIO_CMD_SEG_TABLE_GET);
	sio_msg_put_u32(&m, SIO_A_NODE, h3);
	refused_as(h, h0, h1, &m);
	/* host0 is not to relay host1's command to host2. */
	msg(&m, buf, sizeof(buf), SIO_CMD_SEG_CREATE);
	sio_msg_put_u32(&m, SIO_A_NODE, h2);
	sio_msg_put_str(&m, SIO_A_NAME, "relayed");
	refused_as(h, h0, h1, &m);
	assert_true(smartio_segment_find(h, h2, "relayed") < 0);

	/* Reclaim by claiming to be the lender: host1 borrows nvme0 of
	 * host0; host2 tells host1 the lender takes it back. */
	assert_int_equal(smartio_lend(h, nvme0, SMARTIO_LEND_ALL, 0), 0);
	assert_int_equal(smartio_borrow(h, nvme0, h1), 0);
	dev_msg(&m, buf, sizeof(buf), SIO_CMD_RECLAIM_REQ, fdid, h1);
	refused_as(h, h1, h2, &m);
	{
		struct smartio_device_info di;

		assert_int_equal(smartio_device_info(h, nvme0, &di), 0);
		assert_int_equal(di.borrowers, 1ull << h1);
	}
	/* The lender itself may. */
	dev_msg(&m, buf, sizeof(buf), SIO_CMD_RECLAIM_REQ, fdid, h1);
	assert_int_equal(deliver(h, h1, h0, &m, NULL), 0);
	smartio_close(h);
}

/* A command of the user of node from, forwarded to node self. */
static int seg_cmd(struct smartio *h, unsigned self, unsigned from, u8 cmd,
		   const char *name, int attr, u64 v)
{
	u8 buf[512];
	struct sio_msg m;

	msg(&m, buf, sizeof(buf), cmd);
	sio_msg_put_u32(&m, SIO_A_NODE, self);
	sio_msg_put_str(&m, SIO_A_NAME, name);
	if (attr == SIO_A_SIZE)
		sio_msg_put_u64(&m, SIO_A_SIZE, v);
	else if (attr == SIO_A_FLAGS)
		sio_msg_put_u32(&m, SIO_A_FLAGS, (u32)v);
	return deliver(h, self, from, &m, NULL);
}

static void separate(struct smartio *h, int on)
{
	struct sim_fabric *f = sio_lib_fabric(h);

	sim_lock(f);
	if (on)
		f->core.flags |= SIO_CORE_SEPARATE;
	else
		f->core.flags &= ~SIO_CORE_SEPARATE;
	sim_unlock(f);
}

static u32 share_cap(struct smartio *h)
{
	struct sio_registry *r = sio_lib_fabric(h)->reg;

	return r->max_segments / r->nnodes;
}

static void test_peer_separate_machine_acts_only_for_its_node(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned h0 = th_node(h, "host0"), h1 = th_node(h, "host1"),
		 h2 = th_node(h, "host2");
	unsigned nvme0 = th_dev(h, "nvme0");
	u32 fdid = sio_dev(sio_lib_fabric(h)->reg, nvme0)->fdid, i, made;
	unsigned char *before;
	u8 buf[512];
	struct sio_msg m;
	char name[32];

	(void)state;
	separate(h, 1);
	/* host0's own user's segment. */
	assert_int_equal(seg_cmd(h, h0, h0, SIO_CMD_SEG_CREATE, "mine", 0, 0), 0);
	assert_int_equal(seg_cmd(h, h0, h0, SIO_CMD_SEG_SIZE, "mine", SIO_A_SIZE,
				 8192), 0);
	/* host1's user: its own segment on host0, yes; host0's, no. */
	assert_int_equal(seg_cmd(h, h0, h1, SIO_CMD_SEG_CREATE, "theirs", 0, 0),
			 0);
	assert_int_equal(seg_cmd(h, h0, h1, SIO_CMD_SEG_SIZE, "theirs",
				 SIO_A_SIZE, 4096), 0);
	assert_int_equal(seg_cmd(h, h0, h1, SIO_CMD_SEG_AVAILABLE, "theirs",
				 SIO_A_FLAGS, 1), 0);
	before = snap(h);
	assert_int_equal(seg_cmd(h, h0, h1, SIO_CMD_SEG_DESTROY, "mine", 0, 0),
			 -EPERM);
	assert_int_equal(seg_cmd(h, h0, h1, SIO_CMD_SEG_AVAILABLE, "mine",
				 SIO_A_FLAGS, 1), -EPERM);
	assert_int_equal(seg_cmd(h, h0, h2, SIO_CMD_SEG_DESTROY, "theirs", 0, 0),
			 -EPERM);
	assert_true(same_state(h, before));
	assert_int_equal(refused(h, h1), 2);
	assert_int_equal(refused(h, h2), 1);
	assert_int_equal(seg_cmd(h, h0, h1, SIO_CMD_SEG_DESTROY, "theirs", 0, 0),
			 0);

	/* Its share of host0's records, and not one more. */
	for (made = 0; made < share_cap(h) + 1; made++) {
		snprintf(name, sizeof(name), "q%u", made);
		if (seg_cmd(h, h0, h1, SIO_CMD_SEG_CREATE, name, 0, 0))
			break;
	}
	assert_int_equal(made, share_cap(h));
	assert_int_equal(seg_cmd(h, h0, h1, SIO_CMD_SEG_CREATE, "more", 0, 0),
			 -EDQUOT);
	/* host0's users and other peers still have theirs. */
	assert_int_equal(seg_cmd(h, h0, h0, SIO_CMD_SEG_CREATE, "local", 0, 0),
			 0);
	assert_int_equal(seg_cmd(h, h0, h2, SIO_CMD_SEG_CREATE, "other", 0, 0),
			 0);
	for (i = 0; i < made; i++) {
		snprintf(name, sizeof(name), "q%u", i);
		assert_int_equal(seg_cmd(h, h0, h1, SIO_CMD_SEG_DESTROY, name, 0,
					 0), 0);
	}

	/* Not host0's lend policy, nor a reclaim in the lender's name. */
	msg(&m, buf, sizeof(buf), SIO_CMD_LEND);
	sio_msg_put_u32(&m, SIO_A_DEV, fdid);
	sio_msg_put_u32(&m, SIO_A_FLAGS, SIO_LEND_ALL);
	sio_msg_put_u64(&m, SIO_A_MASK, 0);
	refused_as(h, h0, h1, &m);
	dev_msg(&m, buf, sizeof(buf), SIO_CMD_RECLAIM, fdid, h0);
	refused_as(h, h0, h1, &m);
	/* Configuration reads for itself only. */
	dev_msg(&m, buf, sizeof(buf), SIO_CMD_CFG_READ, fdid, h2);
	sio_msg_put_u64(&m, SIO_A_OFFSET, 0);
	sio_msg_put_u64(&m, SIO_A_SIZE, 4);
	refused_as(h, h0, h1, &m);
	dev_msg(&m, buf, sizeof(buf), SIO_CMD_CFG_READ, fdid, h1);
	sio_msg_put_u64(&m, SIO_A_OFFSET, 0);
	sio_msg_put_u64(&m, SIO_A_SIZE, 4);
	assert_int_equal(deliver(h, h0, h1, &m, NULL), 0);
	separate(h, 0);
	smartio_close(h);
}

/* host1's table as host0 receives it: n records of size each. */
static int table(struct smartio *h, unsigned h0, unsigned h1, u32 n, u64 size)
{
	static u8 buf[SIO_MSG_MAX];
	struct sio_msg m;
	char name[32];
	u32 i;
	int nest;

	msg(&m, buf, sizeof(buf), SIO_CMD_SEG_TABLE);
	sio_msg_put_u32(&m, SIO_A_NODE, h1);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "t%u", i);
		nest = sio_msg_nest_start(&m, SIO_A_SEG);
		sio_msg_put_str(&m, SIO_A_NAME, name);
		sio_msg_put_u32(&m, SIO_A_INDEX, i + 1);
		sio_msg_put_u64(&m, SIO_A_SIZE, size);
		sio_msg_put_u64(&m, SIO_A_ADDR, 0);
		sio_msg_put_u64(&m, SIO_A_OFFSET, 0x10000);
		sio_msg_put_u32(&m, SIO_A_FLAGS, 1);
		sio_msg_put_u64(&m, SIO_A_MASK, 0);
		sio_msg_nest_end(&m, nest);
	}
	sio_msg_put_u32(&m, SIO_A_SRC, node_id(h, h1));
	return deliver(h, h0, h1, &m, NULL);
}

static void test_peer_segment_table_is_checked_before_it_applies(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned h0 = th_node(h, "host0"), h1 = th_node(h, "host1");
	unsigned char *before;
	char name[32];
	u32 i;

	(void)state;
	/* A size that is not whole pages: nothing of the table applies. */
	before = snap(h);
	assert_int_equal(table(h, h0, h1, 3, 4097), -EINVAL);
	assert_true(same_state(h, before));
	assert_int_equal(table(h, h0, h1, 3, 8192), 0);
	assert_true(smartio_segment_find(h, h1, "t2") >= 0);
	assert_int_equal(table(h, h0, h1, 0, 0), 0);
	assert_true(smartio_segment_find(h, h1, "t0") < 0);

	/* Records host1's users created on host0 count in its share. */
	separate(h, 1);
	for (i = 0; i + 1 < share_cap(h); i++) {
		snprintf(name, sizeof(name), "c%u", i);
		assert_int_equal(seg_cmd(h, h0, h1, SIO_CMD_SEG_CREATE, name, 0,
					 0), 0);
	}
	separate(h, 0);
	before = snap(h);
	assert_int_equal(table(h, h0, h1, 2, 4096), -EDQUOT);
	assert_true(same_state(h, before));
	assert_int_equal(table(h, h0, h1, 1, 4096), 0);
	smartio_close(h);
}

/* --- a hostile peer, on the simulator's transport ------------------------ */

static const struct sio_platform_ops *honest;
static struct sio_platform_ops hostile;
/* Rewrites a request before it leaves, or a reply before it is read. */
static u32 (*edit_req)(const u8 *in, u32 len, u8 *out, u32 cap);
static int (*edit_rep)(u8 req_cmd, u8 *rep, int n, u32 cap);

static int hostile_send(void *plat, u32 src, u32 dst, const void *msg,
			u32 len, void *reply, u32 cap)
{
	static u8 copy[SIO_MSG_MAX];
	u8 cmd = ((const u8 *)msg)[SIO_NLMSG_HDRLEN];
	int n;

	if (edit_req) {
		len = edit_req(msg, len, copy, sizeof(copy));
		msg = copy;
	}
	n = honest->send(plat, src, dst, msg, len, reply, cap);
	if (n > 0 && edit_rep)
		n = edit_rep(cmd, reply, n, cap);
	return n;
}

static void go_hostile(struct smartio *h, int on)
{
	struct sim_fabric *f = sio_lib_fabric(h);

	sim_lock(f);
	if (on) {
		honest = f->core.ops;
		hostile = *honest;
		hostile.send = hostile_send;
		f->core.ops = &hostile;
	} else {
		f->core.ops = honest;
		edit_req = NULL;
		edit_rep = NULL;
	}
	sim_unlock(f);
}

/* Copies attribute a into m, a nest field by field with one u64 field of
 * type `field` (0: none) replaced by v. */
static void copy_attr(struct sio_msg *m, const struct sio_nla *a, u16 field,
		      u64 v)
{
	struct sio_nla f;
	u32 pos = 0;
	int nest;

	if (a->type != SIO_A_BAR && a->type != SIO_A_SEG) {
		if (a->type == field)
			sio_msg_put_u64(m, a->type, v);
		else
			sio_msg_put_bin(m, a->type, a->data, a->len);
		return;
	}
	nest = sio_msg_nest_start(m, a->type);
	while (sio_nla_next(a->data, a->len, &pos, &f)) {
		if (f.type == field)
			sio_msg_put_u64(m, f.type, v);
		else
			sio_msg_put_bin(m, f.type, f.data, f.len);
	}
	sio_msg_nest_end(m, nest);
}

enum grant_edit { GRANT_DUP_BAR, GRANT_BIG_BAR, GRANT_NO_BAR };
static enum grant_edit grant_edit;

/* The lender's grant, rewritten: BAR 0 twice, BAR 0 of 64 MiB, no BAR 2. */
static int bad_grant(u8 req_cmd, u8 *rep, int n, u32 cap)
{
	static u8 out[SIO_MSG_MAX];
	struct sio_parsed p;
	struct sio_nla a, first = { 0 };
	struct sio_msg m;
	u32 pos = 0;
	int len;

	if (req_cmd != SIO_CMD_BORROW_REQ || sio_msg_parse(rep, (u32)n, &p) ||
	    p.cmd != SIO_CMD_BORROW_GRANT)
		return n;
	sio_msg_init(&m, out, sizeof(out), p.cmd, p.flags, p.seq);
	while (sio_nla_next(p.attrs, p.attrs_len, &pos, &a)) {
		if (a.type == SIO_A_BAR && !first.data)
			first = a;
		if (a.type == SIO_A_BAR && grant_edit == GRANT_NO_BAR &&
		    a.data != first.data)
			continue;
		copy_attr(&m, &a, a.type == SIO_A_BAR && a.data == first.data &&
			  grant_edit == GRANT_BIG_BAR ? SIO_A_SIZE : 0,
			  64ull << 20);
	}
	if (grant_edit == GRANT_DUP_BAR)
		copy_attr(&m, &first, 0, 0);
	len = sio_msg_finish(&m);
	assert_true(len > 0 && (u32)len <= cap);
	memcpy(rep, out, (size_t)len);
	return len;
}

static void test_peer_reply_validation_grant_matches_registry(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned h1 = th_node(h, "host1"), nic0 = th_dev(h, "nic0");
	unsigned l1 = th_luts_used(h, h1), r1 = th_reqs_used(h, h1);
	unsigned kinds[] = { GRANT_DUP_BAR, GRANT_BIG_BAR, GRANT_NO_BAR }, i;
	struct smartio_device_info di;

	(void)state;
	assert_int_equal(smartio_lend(h, nic0, SMARTIO_LEND_ALL, 0), 0);
	for (i = 0; i < 3; i++) {
		grant_edit = kinds[i];
		go_hostile(h, 1);
		edit_rep = bad_grant;
		assert_int_equal(smartio_borrow(h, nic0, h1), -EPROTO);
		go_hostile(h, 0);
		assert_int_equal(th_luts_used(h, h1), l1);
		assert_int_equal(th_reqs_used(h, h1), r1);
		assert_int_equal(smartio_device_info(h, nic0, &di), 0);
		assert_int_equal(di.borrowers, 0);
	}
	/* The honest grant still borrows, and the return frees it all. */
	assert_int_equal(smartio_borrow(h, nic0, h1), 0);
	assert_int_equal(smartio_return(h, nic0, h1), 0);
	assert_int_equal(th_luts_used(h, h1), l1);
	smartio_close(h);
}

/* A hostile borrower asks for a DMA window of 2 GiB. */
static u32 big_window(const u8 *in, u32 len, u8 *out, u32 cap)
{
	struct sio_parsed p;
	struct sio_nla a;
	struct sio_msg m;
	u32 pos = 0;
	int n;

	if (sio_msg_parse(in, len, &p) || p.cmd != SIO_CMD_MAP_DMA_WINDOW) {
		memcpy(out, in, len);
		return len;
	}
	sio_msg_init(&m, out, cap, p.cmd, p.flags, p.seq);
	while (sio_nla_next(p.attrs, p.attrs_len, &pos, &a))
		copy_attr(&m, &a, SIO_A_SIZE, 2ull << 30);
	n = sio_msg_finish(&m);
	assert_true(n > 0);
	return (u32)n;
}

/* The reply to a want request, with every field attribute set to v. */
static int rewrite_reply(u8 req_cmd, u8 *rep, int n, u32 cap, u8 want,
			 u16 field, u64 v)
{
	static u8 out[SIO_MSG_MAX];
	struct sio_parsed p;
	struct sio_nla a;
	struct sio_msg m;
	u32 pos = 0;
	int len;

	if (req_cmd != want || sio_msg_parse(rep, (u32)n, &p))
		return n;
	sio_msg_init(&m, out, sizeof(out), p.cmd, p.flags, p.seq);
	while (sio_nla_next(p.attrs, p.attrs_len, &pos, &a))
		copy_attr(&m, &a, field, v);
	len = sio_msg_finish(&m);
	assert_true(len > 0 && (u32)len <= cap);
	memcpy(rep, out, (size_t)len);
	return len;
}

/* A lender answers a window address outside its NTB window. */
static int far_window(u8 req_cmd, u8 *rep, int n, u32 cap)
{
	return rewrite_reply(req_cmd, rep, n, cap, SIO_CMD_MAP_DMA_WINDOW,
			     SIO_A_ADDR, SIO_RAM_BASE);
}

static void test_peer_reply_validation_dma_window_is_capped(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned h0 = th_node(h, "host0"), h1 = th_node(h, "host1");
	unsigned nvme0 = th_dev(h, "nvme0");
	unsigned l0 = th_luts_used(h, h0), l1 = th_luts_used(h, h1);

	(void)state;
	assert_int_equal(smartio_lend(h, nvme0, SMARTIO_LEND_ALL, 0), 0);
	go_hostile(h, 1);
	edit_req = big_window;
	assert_int_equal(smartio_borrow(h, nvme0, h1), -EINVAL);
	go_hostile(h, 0);
	assert_int_equal(th_luts_used(h, h0), l0);
	assert_int_equal(th_luts_used(h, h1), l1);

	go_hostile(h, 1);
	edit_rep = far_window;
	assert_int_equal(smartio_borrow(h, nvme0, h1), -EPROTO);
	go_hostile(h, 0);
	assert_int_equal(th_luts_used(h, h0), l0);
	assert_int_equal(th_luts_used(h, h1), l1);

	assert_int_equal(smartio_borrow(h, nvme0, h1), 0);
	assert_int_equal(smartio_return(h, nvme0, h1), 0);
	smartio_close(h);
}

/* The owner answers a segment of 64 MiB where it has 1 MiB. */
static int big_segment(u8 req_cmd, u8 *rep, int n, u32 cap)
{
	return rewrite_reply(req_cmd, rep, n, cap, SIO_CMD_SEG_CONNECT,
			     SIO_A_SIZE, 64ull << 20);
}

static void test_peer_reply_validation_segment_size_is_the_records(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned h0 = th_node(h, "host0"), h1 = th_node(h, "host1");
	unsigned l1 = th_luts_used(h, h1);

	(void)state;
	assert_int_equal(smartio_segment_create(h, h0, "s"), 0);
	assert_int_equal(smartio_segment_set_size(h, h0, "s", 1 << 20), 0);
	assert_int_equal(smartio_segment_set_available(h, h0, "s", 1), 0);
	go_hostile(h, 1);
	edit_rep = big_segment;
	assert_int_equal(smartio_segment_attach(h, h0, "s", h1), -EPROTO);
	go_hostile(h, 0);
	assert_int_equal(th_luts_used(h, h1), l1);
	assert_int_equal(smartio_segment_attach(h, h0, "s", h1), 0);
	assert_int_equal(smartio_segment_detach(h, h0, "s", h1), 0);
	smartio_close(h);
}

/* The peer-refused events of `object` from the cursor on. */
static unsigned refused_events(struct smartio *h, uint64_t *cur,
			       const char *object, unsigned *suppressed)
{
	char line[256], want[128];
	unsigned n = 0;
	const char *q;

	snprintf(want, sizeof(want), " peer-refused %s ", object);
	while (smartio_event_read(h, cur, line, sizeof(line)) > 0) {
		if (!strstr(line, want))
			continue;
		n++;
		q = strstr(line, "suppressed=");
		if (q && suppressed)
			*suppressed += (unsigned)strtoul(q + 11, NULL, 10);
	}
	return n;
}

static void test_peer_refusal_flood_is_counted_but_rate_limited(void **state)
{
	char fabric[64];
	struct smartio *h = th_open(NULL, NULL, fabric, sizeof(fabric));
	unsigned h0 = th_node(h, "host0"), h1 = th_node(h, "host1"),
		 h2 = th_node(h, "host2");
	uint64_t cur = smartio_event_cursor(h);
	u32 count = refused(h, h1);
	unsigned char *before;
	unsigned i, events, quiet = 0;
	u8 buf[512];
	struct sio_msg m;

	(void)state;
	before = snap(h);
	for (i = 0; i < 500; i++) {
		heartbeat(&m, buf, sizeof(buf), h2, NO_STAMP, NO_STAMP);
		assert_int_equal(deliver(h, h0, h1, &m, NULL), -EPERM);
	}
	assert_true(same_state(h, before));
	assert_int_equal(refused(h, h1), count + 500);
	events = refused_events(h, &cur, "nodes/host1", NULL);
	assert_true(events >= 1 && events <= 10);
	/* Another sender's refusal is still reported at once. */
	heartbeat(&m, buf, sizeof(buf), h1, NO_STAMP, NO_STAMP);
	assert_int_equal(deliver(h, h0, h2, &m, NULL), -EPERM);
	assert_int_equal(refused_events(h, &cur, "nodes/host2", NULL), 1);
	/* The events that matter still reach the readers. */
	assert_int_equal(smartio_segment_create(h, h0, "after"), 0);
	assert_int_equal(smartio_segment_set_size(h, h0, "after", 4096), 0);
	assert_true(th_saw_event(h, &cur, "segment-create", "seg/host0.after"));
	/* Once the interval is over, the next event says what was left out. */
	sleep(6);
	heartbeat(&m, buf, sizeof(buf), h2, NO_STAMP, NO_STAMP);
	assert_int_equal(deliver(h, h0, h1, &m, NULL), -EPERM);
	assert_int_equal(refused_events(h, &cur, "nodes/host1", &quiet), 1);
	assert_int_equal(quiet, 500 - events);
	smartio_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peer_spoofed_origin_is_refused_counted_and_reported),
		cmocka_unit_test(test_peer_refusal_flood_is_counted_but_rate_limited),
		cmocka_unit_test(test_peer_separate_machine_acts_only_for_its_node),
		cmocka_unit_test(test_peer_segment_table_is_checked_before_it_applies),
		cmocka_unit_test(test_peer_reply_validation_grant_matches_registry),
		cmocka_unit_test(test_peer_reply_validation_dma_window_is_capped),
		cmocka_unit_test(test_peer_reply_validation_segment_size_is_the_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
