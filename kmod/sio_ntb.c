// SPDX-License-Identifier: GPL-2.0
/*
 * fabric=ntb: this machine is one node (host<node>) and every other node
 * is another machine behind an NTB (one peer of a two-port NTB, or one of
 * the peers of a multi-port switch), reached through smartio_ntb.ko
 * (kmod/ntb/smartio_ntb.h).  smartio.ko binds to that module's table of
 * functions, which it offers on the auxiliary bus, when it loads with
 * fabric=ntb, so that it loads and runs without it (and without ntb.ko)
 * in the default loopback mode.
 *
 * Each machine has a registry of its own with every node in it.  A node
 * owns the records of its own segments; the others' are copies: after
 * every change (the core's notify) and when a peer comes up, a work item
 * sends the table of this node's segments as SEG_TABLE to every peer that
 * is up, which replaces its copies (lib/core/segment.c); a node that had
 * another one create,
 * size, destroy or export a segment for its user asks for the table at
 * once (SEG_TABLE_GET).  A segment's memory is in its owner's
 * segment heap (sio_ntb_seg_alloc), which every peer reaches at the same
 * offsets; the record carries its offset there (backing), and a node that
 * attaches it maps that range of its outbound window to the owner
 * (sio_ntb_peer_seg) behind a character device of the same name the owner
 * has, sio-<owner>-seg-<name>.  A peer going down ends the attachments on
 * both sides (mappings are zapped) and drops the copies of its segments.
 *
 * Locking.  The core runs under sio_k.lock and sends with it held.  No
 * task waits for a peer holding it: two machines that send to each other
 * at once would each wait for the other's lock until the call times out.
 * So a sender "parks" while it waits for the reply: it counts itself in
 * sio_k.parked and lets go of the lock, which a request from the peer
 * then takes as any lock is taken (lockdep sees it), and takes it back
 * for the reply.  A task of this machine takes the lock with
 * sio_k_lock(), which waits until no sender is parked: only the peers'
 * requests run while an operation of ours is half done, as they would
 * on the peer's side of it.  A request never sends itself (-ELOOP): the
 * core answers a peer's request from this node's own records.  The core
 * checks again what it looked at before a send (seg_attach.c).  Nor is
 * a device taken from its driver, or given back, under the lock
 * (sio_ntb_lend.c): the borrow that needs it is served again after.
 */
#include <linux/auxiliary_bus.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "sio_kmod.h"
#include "core_int.h"
#include "smartio_ntb.h"

/*
 * Without single look-up-table entries a segment lives in a heap that
 * every peer reaches in full, exported or not (issue 12, defect 7).  Deny
 * by default: such an NTB gets segments only when the operator accepts
 * that, as vfio_iommu_type1 asks for allow_unsafe_interrupts.
 */
static bool unconfined_segments;
module_param(unconfined_segments, bool, 0444);
MODULE_PARM_DESC(unconfined_segments,
		 "fabric=ntb over an NTB without single look-up-table entries (ntb_ivshmem, ntb_sioswitch without lut_mws): allow segments although every peer reaches all of them, exported or not (default N: sizing one fails with EOPNOTSUPP)");

/*
 * The operator's cabling, when given: which node id may come up behind
 * which port of the switch ("PORT:ID,PORT:ID").  Then even a node's
 * first announcement is checked (peer_id_pinned); a port not named is
 * pinned by first contact, as without the parameter.
 */
static char *port_nodes;
module_param(port_nodes, charp, 0444);
MODULE_PARM_DESC(port_nodes,
		 "fabric=ntb: PORT:ID pairs, comma-separated (e.g. 0:0,1:1,2:2): the peer behind switch port PORT may only be node id ID, and ID only behind PORT (default: each peer keeps the first id it announces)");

#define SIO_FAB_PORTS 64	/* switch ports port_nodes can name */
#define SIO_FAB_TIMEOUT_MS 5000
#define SIO_FAB_CLAIM_TIMEOUT_MS 30000
#define SIO_FAB_RETRY_MS 200

/*
 * smartio_ntb's table (smartio_ntb.h), from its auxiliary device: bound at
 * load, with the module pinned until smartio.ko unloads.
 */
static const struct sio_ntb_fabric_ops *ntb;

/* This node's segments: their memory in the segment heap. */
struct sio_fab_seg {
	struct sio_ntb_peer *p;
	void *va;
	size_t len;
};

/* What this node sent a peer last, to send only changes. */
struct sio_fab_sent {
	u8 *buf;
	int len;
};

static struct {
	/* The NTB peer of each node, once it came up (kept while down). */
	struct sio_ntb_peer *p[SIO_K_NTB_NODES];
	struct sio_ntb_peer *heap;	/* any peer: its device has our heap */
	struct sio_fab_seg own[SIO_K_MAX_SEGS];
	struct task_struct *serving;	/* runs a request of a peer now */
	u32 in_place;		/* requests served while a sender was parked */
	u32 ids_refused;	/* peers that announced an id not theirs */
	s32 port_pin[SIO_FAB_PORTS];	/* port_nodes: the id, or -1 */
	struct dentry *dbgfs;
	/* Segment tables to push: the one built, the one each peer has. */
	struct delayed_work push;
	u8 *out, *reply;
	struct sio_fab_sent sent[SIO_K_NTB_NODES];
	struct sio_fab_sent dsent[SIO_K_NTB_NODES];	/* device tables */
	bool pushing;		/* notify queues the push */
	/* Peers met anew: ask them for their tables (greet). */
	struct work_struct greet;
	unsigned long greet_mask;
	u8 *greet_rep;
} fab;

static int fab_bind(struct auxiliary_device *adev,
		    const struct auxiliary_device_id *id)
{
	const struct sio_ntb_fabric_ops *ops = sio_ntb_fabric_of(adev)->ops;

	if (ntb || !try_module_get(ops->owner))
		return -EBUSY;
	ntb = ops;
	return 0;
}

/* Only when smartio.ko unloads: it holds smartio_ntb until then. */
static void fab_unbind(struct auxiliary_device *adev)
{
	module_put(ntb->owner);
	ntb = NULL;
}

/*
 * No MODULE_DEVICE_TABLE: smartio_ntb's device must not load smartio.ko,
 * whose mode is the operator's choice (fabric=).  Probed at once, so that
 * the load knows whether smartio_ntb is there; no unbind file in sysfs,
 * since the table is in use until smartio.ko unloads.
 */
static const struct auxiliary_device_id fab_ids[] = {
	{ .name = SIO_NTB_FABRIC_MATCH },
	{ }
};

static struct auxiliary_driver fab_driver = {
	.name = "fabric",
	.id_table = fab_ids,
	.probe = fab_bind,
	.remove = fab_unbind,
	.driver.probe_type = PROBE_FORCE_SYNCHRONOUS,
	.driver.suppress_bind_attrs = true,
};

static bool fab_registered;

static void fab_release(void)
{
	if (fab_registered)
		auxiliary_driver_unregister(&fab_driver);
	fab_registered = false;
}

static int fab_acquire(void)
{
	int err = auxiliary_driver_register(&fab_driver);

	if (err)
		return err;
	fab_registered = true;
	if (!ntb) {
		fab_release();
		return -ENODEV;
	}
	return 0;
}

/* --- messages ------------------------------------------------------------ */

static bool peer_up(u32 n)
{
	return n < sio_k.nnodes && n != sio_k.self && fab.p[n] &&
	       sio_node(sio_k.reg, n)->state == SIO_NODE_UP;
}

/* The node whose NTB peer p is, or -1. */
static int node_of(struct sio_ntb_peer *p)
{
	u32 n;

	for (n = 0; n < sio_k.nnodes; n++)
		if (n != sio_k.self && READ_ONCE(fab.p[n]) == p)
			return n;
	return -1;
}

/* The command of a core message (its genl header's first byte), or 0. */
static u8 msg_cmd(const void *msg, u32 len)
{
	return len > SIO_NLMSG_HDRLEN ? ((const u8 *)msg)[SIO_NLMSG_HDRLEN] : 0;
}

/* A user's command the core forwarded to a peer's segments. */
static bool changes_peer_table(const void *msg, u32 len)
{
	u8 cmd = msg_cmd(msg, len);

	return cmd == SIO_CMD_SEG_CREATE || cmd == SIO_CMD_SEG_SIZE ||
	       cmd == SIO_CMD_SEG_DESTROY || cmd == SIO_CMD_SEG_AVAILABLE;
}

/*
 * After peer dst carried out such a command for our user (reply holds its
 * answer): its new segment table, asked for with SEG_TABLE_GET, into rep
 * (SIO_MSG_MAX bytes); its length, or 0 when there is nothing to apply.
 * Applied by apply_table() once the sender has the lock back.
 */
static int pull_table(struct sio_ntb_peer *peer, const void *reply, int n,
		      u8 *rep)
{
	struct sio_parsed *p = kmalloc(sizeof(*p), GFP_KERNEL);
	u8 *req = kmalloc(SIO_PEER_MSG_K, GFP_KERNEL);
	struct sio_msg m;
	int len = 0;

	if (!p || !req || sio_msg_parse(reply, n, p) ||
	    !p->present[SIO_A_ERRNO] || sio_nla_s32(&p->tb[SIO_A_ERRNO]))
		goto out;
	sio_msg_init(&m, req, SIO_PEER_MSG_K, SIO_CMD_SEG_TABLE_GET,
		     SIO_F_REQUEST, 0);
	sio_msg_put_u32(&m, SIO_A_NODE, sio_k.self);
	len = sio_msg_finish(&m);
	if (len > 0)
		len = ntb->call(peer, req, len, rep, SIO_MSG_MAX,
			       SIO_FAB_TIMEOUT_MS);
out:
	kfree(p);
	kfree(req);
	return max(len, 0);
}

/*
 * The peer's answer to SEG_TABLE_GET is its own table, or nothing
 * applies; applied as its SEG_TABLE would be, so that what the user does
 * next (mkdir, then a lookup of the new directory) finds the segment.
 * The table the peer pushes after every change arrives later and changes
 * nothing then.
 */
static void apply_table(u32 dst, const u8 *rep, int len)
{
	struct sio_parsed *p = kmalloc(sizeof(*p), GFP_KERNEL);

	if (p && !sio_msg_parse(rep, len, p) &&
	    p->flags & SIO_F_REPLY && p->present[SIO_A_ERRNO] &&
	    !sio_nla_s32(&p->tb[SIO_A_ERRNO]) && p->present[SIO_A_NODE] &&
	    sio_nla_u32(&p->tb[SIO_A_NODE]) == dst) {
		p->from = dst;
		sio_h_seg_table(&sio_k.core, sio_k.self, p, NULL);
	}
	kfree(p);
}

/*
 * A borrow request makes the lender take the device from its driver
 * (unbinding a driver may take seconds, more under emulation): it may
 * take longer than other calls.
 */
static unsigned int call_timeout(const void *msg, u32 len)
{
	return msg_cmd(msg, len) == SIO_CMD_BORROW_REQ ?
		SIO_FAB_CLAIM_TIMEOUT_MS : SIO_FAB_TIMEOUT_MS;
}

int sio_ntb_fab_send(u32 dst, const void *msg, u32 len, void *reply, u32 cap)
{
	struct sio_ntb_peer *p;
	u8 *rep = NULL;
	int n, tlen = 0;

	if (fab.serving == current)
		return -ELOOP;
	lockdep_assert_held(&sio_k.lock);
	if (!peer_up(dst))
		return -EHOSTDOWN;
	p = fab.p[dst];
	/* Parked: the lock is the peer's requests' until the reply. */
	sio_k.parked++;
	mutex_unlock(&sio_k.lock);
	n = ntb->call(p, msg, len, reply, cap, call_timeout(msg, len));
	if (n > 0 && changes_peer_table(msg, len)) {
		rep = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
		if (rep)
			tlen = pull_table(p, reply, n, rep);
	}
	/* The core is ours again from here on (not sio_k_lock: we count). */
	mutex_lock(&sio_k.lock);
	if (!--sio_k.parked)
		wake_up_all(&sio_k.park_wq);
	if (tlen > 0)
		apply_table(dst, rep, tlen);
	kfree(rep);
	return n;
}

/*
 * A request of a peer: the core hears it as coming from the node at the
 * other end of that NTB peer (the node id it announced when it came up),
 * whatever the message says (lib/core/origin.c).
 */
static int serve(u32 from, const void *msg, u32 len, void *reply, u32 cap)
{
	int n;

	fab.serving = current;
	n = sio_core_dispatch_from(&sio_k.core, sio_k.self, from, msg, len,
				   reply, cap);
	fab.serving = NULL;
	return n;
}

/*
 * A peer that asks for our segment table met us anew (it saw us go down
 * and up, and forgot what we had sent): everything is sent again.
 */
static void fab_asked(int from, const void *msg, u32 len)
{
	if (from < 0 || msg_cmd(msg, len) != SIO_CMD_SEG_TABLE_GET)
		return;
	WRITE_ONCE(fab.sent[from].len, 0);
	WRITE_ONCE(fab.dsent[from].len, 0);
	sio_ntb_fab_notify();
}

/* Whether this task serves a peer's request now (under sio_k.lock). */
bool sio_ntb_fab_serving(void)
{
	lockdep_assert_held(&sio_k.lock);
	return fab.serving == current;
}

/*
 * A borrow whose device is still with its driver is served twice: the
 * core's checks ask for the device (sio_ntb_lend_claim), which leaves its
 * driver without sio_k.lock, and the request is served anew, every check
 * made again, the peer's too.  Devices a request left claimed for no
 * borrow (a return, a refusal after the claim) go back to their drivers
 * before the answer, as they did under the lock.
 */
static int fab_request(void *ctx, struct sio_ntb_peer *p, const void *msg,
		       u32 len, void *reply, u32 cap)
{
	struct sio_kdev *claim;
	int n, from;

	/* Not sio_k_lock(): a parked sender may wait for this very answer. */
	mutex_lock(&sio_k.lock);
	if (sio_k.parked)
		fab.in_place++;
	/* Only a peer that came up speaks for a node. */
	from = node_of(p);
	n = from < 0 ? -EPERM : serve(from, msg, len, reply, cap);
	claim = sio_ntb_lend_wanted();
	mutex_unlock(&sio_k.lock);
	if (claim) {
		sio_ntb_lend_claim_begin(claim);
		from = node_of(p);
		n = from < 0 ? -EPERM : serve(from, msg, len, reply, cap);
		sio_ntb_lend_claim_end();
	}
	fab_asked(from, msg, len);
	sio_ntb_lend_settle();
	return n;
}

/*
 * One of this node's tables (segments, or devices) for peer dst, sent when
 * it differs from what dst got last; false when it must be tried again.
 */
static bool push_table(u32 dst, struct sio_fab_sent *st,
		       int (*build)(struct sio_core *c, u32 self, u32 dst,
				    void *buf, u32 cap))
{
	struct sio_ntb_peer *p;
	int n, rc;

	sio_k_lock();
	if (!peer_up(dst)) {
		sio_k_unlock();
		return true;
	}
	n = build(&sio_k.core, sio_k.self, dst, fab.out, SIO_MSG_MAX);
	p = fab.p[dst];
	sio_k_unlock();
	if (n < 0 || (n == st->len && !memcmp(fab.out, st->buf, n)))
		return true;
	rc = ntb->call(p, fab.out, n, fab.reply, SIO_MSG_MAX,
		      SIO_FAB_TIMEOUT_MS);
	if (rc >= 0) {
		memcpy(st->buf, fab.out, n);
		st->len = n;
	}
	return rc >= 0 || rc == -EHOSTDOWN;
}

/* Sends this node's segment and device tables to every peer they changed for. */
static void fab_push(struct work_struct *work)
{
	bool retry = false;
	u32 dst;

	for (dst = 0; dst < sio_k.nnodes; dst++) {
		retry |= !push_table(dst, &fab.sent[dst], sio_core_seg_table);
		retry |= !push_table(dst, &fab.dsent[dst], sio_core_dev_table);
	}
	if (retry)
		schedule_delayed_work(&fab.push,
				      msecs_to_jiffies(SIO_FAB_RETRY_MS));
}

/*
 * Peers that came up (again): their tables, asked for with SEG_TABLE_GET
 * (which also makes them send their device table again, fab_asked), so
 * that a peer that does not know we forgot its records sends them anew.
 */
static void fab_greet(struct work_struct *work)
{
	struct sio_msg m;
	u8 *req;
	u32 dst;
	int n;

	req = kmalloc(SIO_PEER_MSG_K, GFP_KERNEL);
	if (!req)
		return;
	for (dst = 0; dst < sio_k.nnodes; dst++) {
		if (!test_and_clear_bit(dst, &fab.greet_mask))
			continue;
		sio_k_lock();
		if (!peer_up(dst)) {
			sio_k_unlock();
			continue;
		}
		sio_msg_init(&m, req, SIO_PEER_MSG_K, SIO_CMD_SEG_TABLE_GET,
			     SIO_F_REQUEST, 0);
		sio_msg_put_u32(&m, SIO_A_NODE, sio_k.self);
		sio_msg_put_u32(&m, SIO_A_SRC,
				sio_node(sio_k.reg, sio_k.self)->id);
		n = sio_msg_finish(&m);
		/* A sender: parked while it waits, as the core's are. */
		n = n > 0 ? sio_ntb_fab_send(dst, req, n, fab.greet_rep,
					     SIO_MSG_MAX) : n;
		if (n > 0)
			apply_table(dst, fab.greet_rep, n);
		sio_k_unlock();
	}
	kfree(req);
}

void sio_ntb_fab_notify(void)
{
	if (fab.pushing)
		schedule_delayed_work(&fab.push, 0);
}

/* --- the peers up and down ----------------------------------------------- */

/* Adapter ntb0's link: up while any peer is. */
static void link_state(void)
{
	struct sio_adapter *ad = &sio_node(sio_k.reg, sio_k.self)->adapter[0];
	bool up = false;
	u32 n;

	for (n = 0; n < sio_k.nnodes; n++)
		up |= peer_up(n);
	if (ad->link_up == up)
		return;
	ad->link_up = up;
	sio_event_about(&sio_k.core, up ? SIO_EV_LINK_UP : SIO_EV_LINK_DOWN,
			"nodes/", sio_node(sio_k.reg, sio_k.self)->name,
			NULL, NULL, NULL);
}

/*
 * Who a peer is.  A node's identity on the NTB is the id its machine
 * announces when its link comes up (smartio_ntb's scratchpads); nothing
 * on the link proves it.  What this machine pins: the first NTB peer a
 * node id came up on keeps it for as long as smartio.ko is loaded, up or
 * down, and that peer keeps that id.  So a machine behind another port
 * of the switch cannot take over the id of a node that is down (with it
 * that node's place in name-based lend lists, its borrows' windows and
 * its segment records), and a peer cannot change who it is, until the
 * operator reloads smartio.ko here.  The first announcement is trusted:
 * the operator's cabling (which machine is behind which port) is the
 * root of it.  smartio(4) says so.
 */
static bool port_pin_ok(struct sio_ntb_peer *p, u32 id)
{
	int port = ntb->peer_port(p), q;

	for (q = 0; q < SIO_FAB_PORTS; q++) {
		if (fab.port_pin[q] < 0 ||
		    (q != port && fab.port_pin[q] != (s32)id))
			continue;
		if (q == port && fab.port_pin[q] == (s32)id)
			return true;
		pr_warn_ratelimited("smartio: NTB peer behind port %d announcing node id %u refused: port_nodes pins node id %d behind port %d\n",
				    port, id, fab.port_pin[q], q);
		return false;
	}
	return true;	/* neither the port nor the id is named */
}

static bool peer_id_pinned(struct sio_ntb_peer *p, int n, u32 id)
{
	int m = node_of(p);

	if (!port_pin_ok(p, id)) {
		fab.ids_refused++;
		return false;
	}
	if (n >= 0 && n != sio_k.self && (!fab.p[n] || fab.p[n] == p) &&
	    (m < 0 || m == n))
		return true;
	fab.ids_refused++;
	if (n >= 0 && n != sio_k.self && fab.p[n] && fab.p[n] != p)
		pr_warn_ratelimited("smartio: NTB peer announcing node id %u refused: host%d is pinned to another peer\n",
				    id, n);
	else if (m >= 0 && m != n)
		pr_warn_ratelimited("smartio: NTB peer of host%d announcing node id %u refused: a peer keeps its node\n",
				    m, id);
	else
		pr_warn_ratelimited("smartio: NTB peer with node id %u ignored (this is host%u)\n",
				    id, sio_k.self);
	return false;
}

static void fab_peer_up(void *ctx, struct sio_ntb_peer *p, u32 id, u32 gen)
{
	int n;

	sio_k_lock();
	n = sio_node_lookup_id(sio_k.reg, id);
	if (!peer_id_pinned(p, n, id)) {
		sio_k_unlock();
		return;
	}
	WRITE_ONCE(fab.p[n], p);
	if (!fab.heap)
		fab.heap = p;
	sio_core_node_up(&sio_k.core, n);
	link_state();
	fab.sent[n].len = 0;	/* it knows nothing of ours */
	fab.dsent[n].len = 0;
	set_bit(n, &fab.greet_mask);
	schedule_work(&fab.greet);
	sio_k_unlock();
	pr_info("smartio: %s up (generation %#x)\n",
		sio_node(sio_k.reg, n)->name, gen);
	sio_ntb_fab_notify();
}

static void fab_peer_down(void *ctx, struct sio_ntb_peer *p, u32 id)
{
	int n;

	sio_k_lock();
	n = node_of(p);
	if (n < 0 || sio_node(sio_k.reg, n)->state != SIO_NODE_UP) {
		sio_k_unlock();
		return;
	}
	/* Attachments on both sides end, mappings are zapped. */
	sio_core_node_down(&sio_k.core, n);
	sio_core_seg_forget(&sio_k.core, sio_k.self, n);
	sio_core_dev_forget(&sio_k.core, sio_k.self, n);
	link_state();
	sio_k_unlock();
	pr_info("smartio: %s down\n", sio_node(sio_k.reg, n)->name);
}

static const struct sio_ntb_ops fab_ops = {
	.peer_up = fab_peer_up,
	.peer_down = fab_peer_down,
	.request = fab_request,
};

/* --- segments ------------------------------------------------------------- */

/* This node's segment seg gets memory in the segment heap, or loses it. */
int sio_ntb_fab_seg_backing(u32 seg, int create)
{
	struct sio_segment *s = sio_seg(sio_k.reg, seg);
	struct sio_fab_seg *fs = &fab.own[seg];
	struct sio_bar_cdev *bc;
	u64 off;
	void *va;

	lockdep_assert_held(&sio_k.lock);
	if (!create) {
		sio_seg_dev_remove(sio_k.seg[seg]);
		sio_k.seg[seg] = NULL;
		if (fs->va)
			ntb->seg_free(fs->p, fs->va, fs->len);	/* scrubs */
		memset(fs, 0, sizeof(*fs));
		return 0;
	}
	if (!sio_k.lut_entries && !unconfined_segments) {
		pr_warn_once("smartio: segments refused: this NTB cannot confine one to the peers that attach it (unconfined_segments=1 accepts that)\n");
		return -EOPNOTSUPP;
	}
	if (!fab.heap)
		return -EHOSTDOWN;	/* no peer up yet: no heap */
	va = ntb->seg_alloc(fab.heap, s->size, &off);
	if (!va)
		return -ENOSPC;
	bc = sio_seg_dev_add_ext(sio_node(sio_k.reg, s->owner)->name, s->name,
				 s->size, va, ntb->seg_phys(fab.heap, va));
	if (IS_ERR(bc)) {
		ntb->seg_free(fab.heap, va, s->size);
		return PTR_ERR(bc);
	}
	fs->p = fab.heap;
	fs->va = va;
	fs->len = s->size;
	s->backing = off;
	sio_k.seg[seg] = bc;
	return 0;
}

/*
 * This node's segment at core address phys (its record's phys), of at
 * least size bytes: its backing, or -errno.
 */
static int own_seg(u64 phys, u64 size, struct sio_fab_seg **out)
{
	u32 i;

	for (i = 0; i < SIO_K_MAX_SEGS && i < sio_k.reg->max_segments; i++) {
		struct sio_segment *s = sio_seg(sio_k.reg, i);

		if (!s->used || !s->sized || s->owner != sio_k.self ||
		    s->phys != phys || !fab.own[i].va)
			continue;
		if (size > fab.own[i].len)
			return -EINVAL;
		*out = &fab.own[i];
		return 0;
	}
	return -ENOENT;
}

/* Where that segment lies in this machine's memory (physical address). */
int sio_ntb_fab_seg_bus(u64 phys, u64 size, phys_addr_t *bus)
{
	struct sio_fab_seg *fs;
	int err = own_seg(phys, size, &fs);

	if (!err)
		*bus = ntb->seg_phys(fs->p, fs->va);
	return err;
}

/*
 * Where the NTB function's DMA reaches that segment: what an inbound
 * entry translates to when a peer attaches it or maps it for a device.
 * With the function in a translated IOMMU domain that is the heap's IOVA,
 * not the physical address (issue 29).
 */
int sio_ntb_fab_seg_dma(u64 phys, u64 size, u64 *dma)
{
	struct sio_fab_seg *fs;
	int err = own_seg(phys, size, &fs);

	if (!err)
		*dma = ntb->seg_dma(fs->p, fs->va);
	return err;
}

/*
 * Where this machine reaches a peer's segment it attached: the entries of
 * its attachment's slots toward the owner (back to back in the outbound
 * window), which the owner translated onto that segment alone; without
 * single entries, the owner's heap through the heap window.
 */
static int peer_seg_phys(u32 seg, const struct sio_segment *s,
			 phys_addr_t *phys)
{
	int aidx;

	if (!sio_k.lut_entries)
		return ntb->peer_seg(fab.p[s->owner], s->backing, s->size,
				    phys) ? 0 : -ENXIO;
	aidx = sio_attach_find(sio_k.reg, seg, sio_k.self);
	if (aidx < 0)
		return aidx;
	*phys = sio_k.lut[sio_k.self][sio_attach_at(sio_k.reg, aidx)->lut].hw;
	return *phys ? 0 : -ENXIO;
}

/* This node maps a peer's segment seg through its window to the owner. */
int sio_ntb_fab_seg_map(u32 seg, u32 node, int map)
{
	struct sio_segment *s = sio_seg(sio_k.reg, seg);
	struct sio_bar_cdev *bc;
	phys_addr_t phys;
	int err;

	lockdep_assert_held(&sio_k.lock);
	if (node != sio_k.self)
		return 0;
	if (!map) {
		sio_seg_dev_remove(sio_k.seg[seg]);
		sio_k.seg[seg] = NULL;
		return 0;
	}
	if (s->owner == sio_k.self || !peer_up(s->owner))
		return -EHOSTDOWN;
	if (!s->size || !PAGE_ALIGNED(s->size) || !PAGE_ALIGNED(s->backing))
		return -EPROTO;	/* the peer's table says so: not mapped */
	if (sio_k.seg[seg])
		return -EBUSY;
	err = peer_seg_phys(seg, s, &phys);
	if (err)
		return err;	/* not inside the owner's heap, no entry */
	bc = sio_seg_dev_add_ext(sio_node(sio_k.reg, s->owner)->name, s->name,
				 s->size, NULL, phys);
	if (IS_ERR(bc))
		return PTR_ERR(bc);
	sio_k.seg[seg] = bc;
	return 0;
}

/*
 * debugfs: where this machine's window to each peer's segment heap lies,
 * and whether that peer translates it (without single entries only): a
 * read there beyond what was attached answers all-ones when it does not.
 */
void sio_ntb_fab_show(struct seq_file *s)
{
	phys_addr_t phys;
	u32 n;

	for (n = 0; n < sio_k.nnodes; n++) {
		if (n == sio_k.self || !peer_up(n) ||
		    !ntb->peer_seg(fab.p[n], 0, PAGE_SIZE, &phys))
			continue;
		seq_printf(s, "heap_window %s addr=%pa translated=%s\n",
			   sio_node(sio_k.reg, n)->name, &phys,
			   sio_k.lut_entries ? "no" : "yes");
	}
}

/* The NTB's PCI function: the requester id peers' writes arrive with. */
struct pci_dev *sio_ntb_fab_pci_dev(void)
{
	return ntb ? ntb->pci_dev() : NULL;
}

/* --- single look-up-table entries, for lending (sio_ntb_lend.c) ----------- */

/* Where this machine reaches entry `entry` of its window to node. */
phys_addr_t sio_ntb_fab_lut_peer_addr(u32 node, u32 entry)
{
	struct sio_ntb_peer *p = node < sio_k.nnodes ? fab.p[node] : NULL;

	return p && node != sio_k.self ? ntb->lut_peer_addr(p, entry) : 0;
}

/* Node's accesses at entry `entry` of its window to us reach addr here. */
int sio_ntb_fab_lut_set(u32 node, u32 entry, u64 addr, u64 size)
{
	if (!peer_up(node))
		return -EHOSTDOWN;
	return ntb->lut_set(fab.p[node], entry, addr, size);
}

void sio_ntb_fab_lut_clear(u32 node, u32 entry)
{
	struct sio_ntb_peer *p = node < sio_k.nnodes ? fab.p[node] : NULL;

	if (p && node != sio_k.self)
		ntb->lut_clear(p, entry);
}

/*
 * What one entry toward node translates is aligned to this (Switchtec's
 * 64 KiB LUT entries: the entry's size; a page elsewhere).
 */
u64 sio_ntb_fab_lut_align(u32 node)
{
	struct sio_ntb_peer *p = node < sio_k.nnodes ? fab.p[node] : NULL;

	return p && node != sio_k.self ? ntb->lut_align(p) : PAGE_SIZE;
}

/* --- the direct window, for DMA windows (sio_k.direct_size) --------------- */

/* Node's accesses through its direct window to us reach [addr, + size). */
int sio_ntb_fab_direct_set(u32 node, u64 addr, u64 size)
{
	if (!peer_up(node))
		return -EHOSTDOWN;
	return ntb->direct_set(fab.p[node], addr, size);
}

void sio_ntb_fab_direct_clear(u32 node)
{
	struct sio_ntb_peer *p = node < sio_k.nnodes ? fab.p[node] : NULL;

	if (p && node != sio_k.self)
		ntb->direct_clear(p);
}

/* Where this machine reaches its direct window to node. */
phys_addr_t sio_ntb_fab_direct_peer_addr(u32 node)
{
	struct sio_ntb_peer *p = node < sio_k.nnodes ? fab.p[node] : NULL;

	return p && node != sio_k.self ? ntb->direct_peer_addr(p) : 0;
}

/*
 * The requester-id hook: rid of this machine may send to node through
 * the NTB (smartio_ntb_rid.c; nothing to do on hardware without a table).
 */
int sio_ntb_fab_rid_allow(u32 node, u16 rid, bool allow)
{
	struct sio_ntb_peer *p = node < sio_k.nnodes ? fab.p[node] : NULL;

	if (!p || node == sio_k.self)
		return -EHOSTDOWN;
	return ntb->rid_allow(p, rid, allow);
}

/* --- load and unload ------------------------------------------------------- */

/*
 * Before the registry is built: smartio_ntb's functions, and the look-up
 * table entries it offers per peer, which become the slots of adapter
 * ntb0 (one core slot is one hardware entry, the same on every machine of
 * one switch).
 */
int sio_ntb_fab_probe(struct sio_k_geometry *geo, u32 limit)
{
	u64 ent;
	u32 count;

	if (fab_acquire()) {
		pr_err("smartio: fabric=ntb needs smartio_ntb.ko loaded (no auxiliary device %s.0)\n",
		       SIO_NTB_FABRIC_MATCH);
		return -ENODEV;
	}
	count = ntb->lut_geometry(&ent);
	if (count > SIO_K_LUTS)
		count = SIO_K_LUTS;
	/*
	 * Without single entries (ntb_ivshmem, ntb_sioswitch without
	 * lut_mws) devices are not lent; segments need no hardware slots
	 * (they live in the segment heap's window), so the adapter keeps
	 * its software geometry.
	 */
	if (!count || ent < PAGE_SIZE || ent > SIO_K_NTB_WINDOW_MAX / count) {
		pr_info("smartio: no single look-up table entries: devices are not lent over this NTB, segments only with unconfined_segments=1 (%s)\n",
			unconfined_segments ? "given" : "not given");
		return 0;
	}
	geo->luts = count;
	geo->window = count * ent;
	sio_k.lut_entries = true;
	/*
	 * Entries too small to hold a DMA window over a borrower's RAM
	 * (Switchtec: 31 LUT entries of 64 KiB against 256 MiB): DMA windows
	 * go to the direct window, one translation per peer, instead.
	 */
	if (geo->window < sio_ntb_lend_ram_window()) {
		sio_k.direct_size = ntb->direct_geometry();
		if (sio_k.direct_size < sio_ntb_lend_ram_window())
			pr_warn("smartio: the look-up table entries (%llu KiB) and the direct window (%llu MiB) cannot hold a DMA window over this machine's RAM: borrows from here will fail\n",
				geo->window >> 10, sio_k.direct_size >> 20);
		else
			pr_info("smartio: DMA windows on the direct window of %llu MiB per peer\n",
				sio_k.direct_size >> 20);
	}
	/*
	 * The other machines see every entry this one has (the same slots
	 * everywhere); it uses only its share of them.
	 */
	if (limit && limit < count)
		geo->own_luts = limit;
	pr_info("smartio: %u of %u look-up table entries of %llu KiB per peer for lending\n",
		geo->own_luts ? geo->own_luts : count, count, ent >> 10);
	return 0;
}

void sio_ntb_fab_unprobe(void)
{
	fab_release();
}

static void fab_free_bufs(void)
{
	u32 n;

	kfree(fab.out);
	kfree(fab.reply);
	kfree(fab.greet_rep);
	fab.greet_rep = NULL;
	for (n = 0; n < SIO_K_NTB_NODES; n++) {
		kfree(fab.sent[n].buf);
		kfree(fab.dsent[n].buf);
	}
	fab.out = NULL;
	fab.reply = NULL;
	memset(fab.sent, 0, sizeof(fab.sent));
	memset(fab.dsent, 0, sizeof(fab.dsent));
}

/*
 * port_nodes as the operator wrote it: each pair's port below
 * SIO_FAB_PORTS, its id one of the nodes, no port or id named twice.
 * Anything else refuses the load, naming the pair.
 */
static int port_nodes_parse(void)
{
	char *buf, *cur, *pair, *colon = NULL;
	u32 port, id, q;
	int err = 0;

	for (q = 0; q < SIO_FAB_PORTS; q++)
		fab.port_pin[q] = -1;
	if (!port_nodes || !*port_nodes)
		return 0;
	buf = kstrdup(port_nodes, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	cur = buf;
	while (!err && (pair = strsep(&cur, ","))) {
		colon = strchr(pair, ':');
		err = -EINVAL;
		if (!colon)
			break;
		*colon = '\0';
		if (kstrtou32(pair, 10, &port) || kstrtou32(colon + 1, 10, &id) ||
		    port >= SIO_FAB_PORTS || id >= sio_k.nnodes ||
		    fab.port_pin[port] >= 0)
			break;
		for (q = 0; q < SIO_FAB_PORTS; q++)
			if (fab.port_pin[q] == (s32)id)
				break;
		if (q < SIO_FAB_PORTS)
			break;
		fab.port_pin[port] = id;
		err = 0;
	}
	if (err) {
		if (colon)
			*colon = ':';
		pr_err("smartio: port_nodes: '%s' is not PORT:ID with a port below %u and one of the %u node ids, each named once\n",
		       pair ? pair : "", SIO_FAB_PORTS, sio_k.nnodes);
	}
	kfree(buf);
	return err;
}

int sio_ntb_fab_init(void)
{
	int err;
	u32 n;

	err = port_nodes_parse();
	if (err)
		return err;
	err = -ENOMEM;

	INIT_DELAYED_WORK(&fab.push, fab_push);
	INIT_WORK(&fab.greet, fab_greet);
	fab.pushing = true;
	sio_node(sio_k.reg, sio_k.self)->adapter[0].link_up = 0;
	fab.out = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
	fab.reply = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
	fab.greet_rep = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
	if (!fab.out || !fab.reply || !fab.greet_rep)
		goto fail;
	for (n = 0; n < sio_k.nnodes; n++) {
		fab.sent[n].buf = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
		fab.dsent[n].buf = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
		if (!fab.sent[n].buf || !fab.dsent[n].buf)
			goto fail;
	}
	err = ntb->attach(sio_k.self, &fab_ops, NULL);
	if (err)
		goto fail;
	/* For tests: how often a peer's request met a parked sender. */
	fab.dbgfs = debugfs_create_dir("smartio_fabric", NULL);
	debugfs_create_u32("in_place", 0444, fab.dbgfs, &fab.in_place);
	debugfs_create_u32("ids_refused", 0444, fab.dbgfs, &fab.ids_refused);
	return 0;
fail:
	fab.pushing = false;
	fab_free_bufs();
	return err;
}

void sio_ntb_fab_exit(void)
{
	struct sio_ntb_peer *p;
	struct sio_msg m;
	u32 i;
	int n;

	debugfs_remove_recursive(fab.dbgfs);
	/* The peers forget this node's segments: an empty table. */
	sio_k_lock();
	fab.pushing = false;
	sio_k_unlock();
	cancel_work_sync(&fab.greet);
	cancel_delayed_work_sync(&fab.push);
	for (i = 0; i < sio_k.nnodes; i++) {
		sio_k_lock();
		p = peer_up(i) ? fab.p[i] : NULL;
		sio_msg_init(&m, fab.out, SIO_MSG_MAX, SIO_CMD_SEG_TABLE,
			     SIO_F_REQUEST, 0);
		sio_msg_put_u32(&m, SIO_A_NODE, sio_k.self);
		sio_msg_put_u32(&m, SIO_A_SRC,
				sio_node(sio_k.reg, sio_k.self)->id);
		n = sio_msg_finish(&m);
		sio_k_unlock();
		if (p && n > 0)
			ntb->call(p, fab.out, n, fab.reply, SIO_MSG_MAX,
				 SIO_FAB_TIMEOUT_MS);
	}
	ntb->detach();
	cancel_delayed_work_sync(&fab.push);

	sio_k_lock();
	for (i = 0; i < sio_k.nnodes; i++) {
		if (i == sio_k.self)
			continue;
		if (sio_node(sio_k.reg, i)->state == SIO_NODE_UP)
			sio_core_node_down(&sio_k.core, i);
		sio_core_seg_forget(&sio_k.core, sio_k.self, i);
	}
	for (i = 0; i < SIO_K_MAX_SEGS; i++) {
		if (!fab.own[i].va)
			continue;
		sio_seg_dev_remove(sio_k.seg[i]);
		sio_k.seg[i] = NULL;
		ntb->seg_free(fab.own[i].p, fab.own[i].va, fab.own[i].len);
		memset(&fab.own[i], 0, sizeof(fab.own[i]));
	}
	memset(fab.p, 0, sizeof(fab.p));
	fab.heap = NULL;
	sio_k_unlock();
	fab_release();
	fab_free_bufs();
}
