// SPDX-License-Identifier: GPL-2.0
/*
 * fabric=ntb: this machine is one node (host<node>) and the other node is
 * another machine behind an NTB, reached through smartio_ntb.ko
 * (kmod/ntb/smartio_ntb.h).  smartio.ko finds that module's functions with
 * symbol_get() when it loads with fabric=ntb, so that it loads and runs
 * without it (and without ntb.ko) in the default loopback mode.
 *
 * Each machine has a registry of its own with both nodes in it.  A node
 * owns the records of its own segments; the other node's are copies: after
 * every change (the core's notify) and when the peer comes up, a work item
 * sends the table of this node's segments as SEG_TABLE, which replaces the
 * peer's copies (lib/core/segment.c); a node that had the other create,
 * size, destroy or export a segment for its user asks for the table at
 * once (SEG_TABLE_GET).  A segment's memory is in its owner's
 * inbound NTB window (sio_ntb_seg_alloc); the record carries its offset
 * there (backing), and a node that attaches it maps that range of its
 * outbound window (sio_ntb_peer_seg) behind a character device of the
 * same name the owner has, sio-<owner>-seg-<name>.  The peer going down
 * ends the attachments on both sides (mappings are zapped) and drops the
 * copies of its segments.
 *
 * Locking.  The core runs under sio_k.lock and sends with it held.  Two
 * machines that send to each other at once would each wait for the
 * other's lock until the call times out, so a sender "parks" while it
 * waits for the reply: a request from the peer that finds the lock taken
 * by a parked sender runs in its place (the sender touches nothing until
 * it returns, and it returns only after that request is done, under
 * park_lock).  A request never sends itself (-ELOOP): there are two nodes,
 * and the only one it could send to is waiting for its reply.  The core
 * checks again what it looked at before a send (seg_attach.c).
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "sio_kmod.h"
#include "core_int.h"
#include "smartio_ntb.h"

#define SIO_FAB_TIMEOUT_MS 5000
#define SIO_FAB_RETRY_MS 200

static struct {
	int (*attach)(u32 self_node, const struct sio_ntb_ops *ops, void *ctx);
	void (*detach)(void);
	int (*call)(struct sio_ntb_peer *p, const void *msg, u32 len,
		    void *reply, u32 cap, unsigned int timeout_ms);
	void *(*seg_alloc)(struct sio_ntb_peer *p, size_t size, u64 *off);
	void (*seg_free)(struct sio_ntb_peer *p, void *va, size_t size);
	phys_addr_t (*seg_phys)(struct sio_ntb_peer *p, void *va);
	void __iomem *(*peer_seg)(struct sio_ntb_peer *p, u64 off, size_t size,
				  phys_addr_t *phys);
} ntb;

/* This node's segments: their memory in the inbound window. */
struct sio_fab_seg {
	struct sio_ntb_peer *p;
	void *va;
	size_t len;
};

static struct {
	struct sio_ntb_peer *p;	/* the NTB to the other node, once up */
	u32 peer;		/* its registry index */
	struct sio_fab_seg own[SIO_K_MAX_SEGS];
	/* Parked senders (see above). */
	struct mutex park_lock;
	u32 parked;
	wait_queue_head_t park_wq;
	struct task_struct *serving;	/* runs a request of the peer now */
	u32 in_place;		/* requests that ran for a parked sender */
	struct dentry *dbgfs;
	/* The table last sent, to send only changes. */
	struct delayed_work push;
	u8 *out, *sent, *reply;
	int sent_len;
	bool pushing;		/* notify queues the push */
} fab;

static void fab_put_symbols(void)
{
	if (ntb.attach)
		symbol_put(sio_ntb_attach);
	if (ntb.detach)
		symbol_put(sio_ntb_detach);
	if (ntb.call)
		symbol_put(sio_ntb_call);
	if (ntb.seg_alloc)
		symbol_put(sio_ntb_seg_alloc);
	if (ntb.seg_free)
		symbol_put(sio_ntb_seg_free);
	if (ntb.seg_phys)
		symbol_put(sio_ntb_seg_phys);
	if (ntb.peer_seg)
		symbol_put(sio_ntb_peer_seg);
	memset(&ntb, 0, sizeof(ntb));
}

static int fab_get_symbols(void)
{
	ntb.attach = symbol_get(sio_ntb_attach);
	ntb.detach = symbol_get(sio_ntb_detach);
	ntb.call = symbol_get(sio_ntb_call);
	ntb.seg_alloc = symbol_get(sio_ntb_seg_alloc);
	ntb.seg_free = symbol_get(sio_ntb_seg_free);
	ntb.seg_phys = symbol_get(sio_ntb_seg_phys);
	ntb.peer_seg = symbol_get(sio_ntb_peer_seg);
	if (ntb.attach && ntb.detach && ntb.call && ntb.seg_alloc &&
	    ntb.seg_free && ntb.seg_phys && ntb.peer_seg)
		return 0;
	fab_put_symbols();
	return -ENODEV;
}

/* --- messages ------------------------------------------------------------ */

static bool peer_up(void)
{
	return fab.p && sio_node(sio_k.reg, fab.peer)->state == SIO_NODE_UP;
}

/* A user's command the core forwarded to the peer's segments. */
static bool changes_peer_table(const void *msg, u32 len)
{
	u8 cmd = len > SIO_NLMSG_HDRLEN ? ((const u8 *)msg)[SIO_NLMSG_HDRLEN] : 0;

	return cmd == SIO_CMD_SEG_CREATE || cmd == SIO_CMD_SEG_SIZE ||
	       cmd == SIO_CMD_SEG_DESTROY || cmd == SIO_CMD_SEG_AVAILABLE;
}

/*
 * After the peer carried out such a command for our user (reply holds its
 * answer): its new segment table, asked for with SEG_TABLE_GET and applied
 * as its SEG_TABLE would be, so that what the user does next (mkdir, then
 * a lookup of the new directory) finds the segment.  The table the peer
 * pushes after every change arrives later and changes nothing then.
 */
static void pull_table(const void *reply, int n)
{
	struct sio_parsed *p = kmalloc(sizeof(*p), GFP_KERNEL);
	u8 *req = kmalloc(SIO_PEER_MSG_K, GFP_KERNEL);
	u8 *rep = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
	struct sio_msg m;
	int len;

	if (!p || !req || !rep || sio_msg_parse(reply, n, p) ||
	    !p->present[SIO_A_ERRNO] || sio_nla_s32(&p->tb[SIO_A_ERRNO]))
		goto out;
	sio_msg_init(&m, req, SIO_PEER_MSG_K, SIO_CMD_SEG_TABLE_GET,
		     SIO_F_REQUEST, 0);
	sio_msg_put_u32(&m, SIO_A_NODE, sio_k.self);
	len = sio_msg_finish(&m);
	if (len > 0)
		len = ntb.call(fab.p, req, len, rep, SIO_MSG_MAX,
			       SIO_FAB_TIMEOUT_MS);
	if (len > 0 && !sio_msg_parse(rep, len, p) &&
	    p->present[SIO_A_ERRNO] && !sio_nla_s32(&p->tb[SIO_A_ERRNO]))
		sio_h_seg_table(&sio_k.core, sio_k.self, p, NULL);
out:
	kfree(p);
	kfree(req);
	kfree(rep);
}

int sio_ntb_fab_send(u32 dst, const void *msg, u32 len, void *reply, u32 cap)
{
	int n;

	if (fab.serving == current)
		return -ELOOP;
	lockdep_assert_held(&sio_k.lock);
	if (dst != fab.peer || !peer_up())
		return -EHOSTDOWN;
	mutex_lock(&fab.park_lock);
	fab.parked++;
	mutex_unlock(&fab.park_lock);
	wake_up_all(&fab.park_wq);
	n = ntb.call(fab.p, msg, len, reply, cap, SIO_FAB_TIMEOUT_MS);
	if (n > 0 && changes_peer_table(msg, len))
		pull_table(reply, n);
	/* Back only when no request runs in our place. */
	mutex_lock(&fab.park_lock);
	fab.parked--;
	mutex_unlock(&fab.park_lock);
	return n;
}

static int serve(const void *msg, u32 len, void *reply, u32 cap)
{
	int n;

	fab.serving = current;
	n = sio_core_dispatch(&sio_k.core, sio_k.self, msg, len, reply, cap);
	fab.serving = NULL;
	return n;
}

static bool may_serve(void)
{
	return READ_ONCE(fab.parked) || !mutex_is_locked(&sio_k.lock);
}

static int fab_request(void *ctx, struct sio_ntb_peer *p, const void *msg,
		       u32 len, void *reply, u32 cap)
{
	int n;

	for (;;) {
		if (mutex_trylock(&sio_k.lock)) {
			n = serve(msg, len, reply, cap);
			mutex_unlock(&sio_k.lock);
			return n;
		}
		mutex_lock(&fab.park_lock);
		if (fab.parked) {
			/* The holder waits for the peer: run in its place. */
			n = serve(msg, len, reply, cap);
			fab.in_place++;
			mutex_unlock(&fab.park_lock);
			return n;
		}
		mutex_unlock(&fab.park_lock);
		wait_event_timeout(fab.park_wq, may_serve(),
				   msecs_to_jiffies(10));
	}
}

/* Sends this node's segment table when it changed since the last one. */
static void fab_push(struct work_struct *work)
{
	struct sio_ntb_peer *p;
	int n, rc;

	mutex_lock(&sio_k.lock);
	if (!peer_up()) {
		mutex_unlock(&sio_k.lock);
		return;
	}
	n = sio_core_seg_table(&sio_k.core, sio_k.self, fab.peer, fab.out,
			       SIO_MSG_MAX);
	p = fab.p;
	mutex_unlock(&sio_k.lock);
	if (n < 0 || (n == fab.sent_len && !memcmp(fab.out, fab.sent, n)))
		return;
	rc = ntb.call(p, fab.out, n, fab.reply, SIO_MSG_MAX,
		      SIO_FAB_TIMEOUT_MS);
	if (rc >= 0) {
		memcpy(fab.sent, fab.out, n);
		fab.sent_len = n;
	} else if (rc != -EHOSTDOWN) {
		schedule_delayed_work(&fab.push,
				      msecs_to_jiffies(SIO_FAB_RETRY_MS));
	}
}

void sio_ntb_fab_notify(void)
{
	if (fab.pushing)
		schedule_delayed_work(&fab.push, 0);
}

/* --- the peer up and down ------------------------------------------------ */

static void link_state(bool up)
{
	struct sio_adapter *ad = &sio_node(sio_k.reg, sio_k.self)->adapter[0];

	if (ad->link_up == up)
		return;
	ad->link_up = up;
	sio_event_about(&sio_k.core, up ? SIO_EV_LINK_UP : SIO_EV_LINK_DOWN,
			"nodes/", sio_node(sio_k.reg, sio_k.self)->name,
			NULL, NULL, NULL);
}

static void fab_peer_up(void *ctx, struct sio_ntb_peer *p, u32 id, u32 gen)
{
	int n;

	mutex_lock(&sio_k.lock);
	n = sio_node_lookup_id(sio_k.reg, id);
	if (n < 0 || n == sio_k.self || (fab.p && fab.p != p)) {
		mutex_unlock(&sio_k.lock);
		pr_warn("smartio: NTB peer with node id %u ignored (this is host%u)\n",
			id, sio_k.self);
		return;
	}
	fab.p = p;
	fab.peer = n;
	link_state(true);
	sio_core_node_up(&sio_k.core, n);
	fab.sent_len = 0;	/* it knows nothing of ours */
	mutex_unlock(&sio_k.lock);
	pr_info("smartio: %s up (generation %#x)\n",
		sio_node(sio_k.reg, n)->name, gen);
	sio_ntb_fab_notify();
}

static void fab_peer_down(void *ctx, struct sio_ntb_peer *p, u32 id)
{
	mutex_lock(&sio_k.lock);
	if (p != fab.p || sio_node(sio_k.reg, fab.peer)->state != SIO_NODE_UP) {
		mutex_unlock(&sio_k.lock);
		return;
	}
	/* Attachments on both sides end, mappings are zapped. */
	sio_core_node_down(&sio_k.core, fab.peer);
	sio_core_seg_forget(&sio_k.core, sio_k.self, fab.peer);
	link_state(false);
	mutex_unlock(&sio_k.lock);
	pr_info("smartio: %s down\n", sio_node(sio_k.reg, fab.peer)->name);
}

static const struct sio_ntb_ops fab_ops = {
	.peer_up = fab_peer_up,
	.peer_down = fab_peer_down,
	.request = fab_request,
};

/* --- segments ------------------------------------------------------------- */

/* This node's segment seg gets memory in the inbound window, or loses it. */
int sio_ntb_fab_seg_backing(u32 seg, int create)
{
	struct sio_segment *s = sio_seg(sio_k.reg, seg);
	struct sio_fab_seg *fs = &fab.own[seg];
	struct sio_bar_cdev *bc;
	u64 off;
	void *va;

	if (!create) {
		sio_seg_dev_remove(sio_k.seg[seg]);
		sio_k.seg[seg] = NULL;
		if (fs->va)
			ntb.seg_free(fs->p, fs->va, fs->len);
		memset(fs, 0, sizeof(*fs));
		return 0;
	}
	if (!fab.p)
		return -EHOSTDOWN;	/* no NTB yet */
	va = ntb.seg_alloc(fab.p, s->size, &off);
	if (!va)
		return -ENOSPC;
	bc = sio_seg_dev_add_ext(sio_node(sio_k.reg, s->owner)->name, s->name,
				 s->size, va, ntb.seg_phys(fab.p, va));
	if (IS_ERR(bc)) {
		ntb.seg_free(fab.p, va, s->size);
		return PTR_ERR(bc);
	}
	fs->p = fab.p;
	fs->va = va;
	fs->len = s->size;
	s->backing = off;
	sio_k.seg[seg] = bc;
	return 0;
}

/* This node maps the peer's segment seg through its outbound window. */
int sio_ntb_fab_seg_map(u32 seg, u32 node, int map)
{
	struct sio_segment *s = sio_seg(sio_k.reg, seg);
	struct sio_bar_cdev *bc;
	phys_addr_t phys;

	if (node != sio_k.self)
		return 0;
	if (!map) {
		sio_seg_dev_remove(sio_k.seg[seg]);
		sio_k.seg[seg] = NULL;
		return 0;
	}
	if (!peer_up() || s->owner != fab.peer)
		return -EHOSTDOWN;
	if (sio_k.seg[seg])
		return -EBUSY;
	if (!ntb.peer_seg(fab.p, s->backing, s->size, &phys))
		return -ENXIO;	/* not inside the peer's window */
	bc = sio_seg_dev_add_ext(sio_node(sio_k.reg, s->owner)->name, s->name,
				 s->size, NULL, phys);
	if (IS_ERR(bc))
		return PTR_ERR(bc);
	sio_k.seg[seg] = bc;
	return 0;
}

/* --- load and unload ------------------------------------------------------- */

int sio_ntb_fab_init(void)
{
	int err;

	mutex_init(&fab.park_lock);
	init_waitqueue_head(&fab.park_wq);
	INIT_DELAYED_WORK(&fab.push, fab_push);
	fab.peer = sio_k.self ^ 1;
	fab.pushing = true;
	sio_node(sio_k.reg, sio_k.self)->adapter[0].link_up = 0;
	fab.out = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
	fab.sent = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
	fab.reply = kmalloc(SIO_MSG_MAX, GFP_KERNEL);
	err = -ENOMEM;
	if (!fab.out || !fab.sent || !fab.reply)
		goto fail;
	err = fab_get_symbols();
	if (err) {
		pr_err("smartio: fabric=ntb needs smartio_ntb.ko loaded\n");
		goto fail;
	}
	err = ntb.attach(sio_k.self, &fab_ops, NULL);
	if (err) {
		fab_put_symbols();
		goto fail;
	}
	/* For tests: how often two nodes' calls crossed. */
	fab.dbgfs = debugfs_create_dir("smartio_fabric", NULL);
	debugfs_create_u32("in_place", 0444, fab.dbgfs, &fab.in_place);
	return 0;
fail:
	fab.pushing = false;
	kfree(fab.out);
	kfree(fab.sent);
	kfree(fab.reply);
	return err;
}

void sio_ntb_fab_exit(void)
{
	struct sio_ntb_peer *p;
	struct sio_msg m;
	u32 i;
	int n;

	debugfs_remove_recursive(fab.dbgfs);
	/* The peer forgets this node's segments: an empty table. */
	mutex_lock(&sio_k.lock);
	fab.pushing = false;
	mutex_unlock(&sio_k.lock);
	cancel_delayed_work_sync(&fab.push);
	mutex_lock(&sio_k.lock);
	p = peer_up() ? fab.p : NULL;
	sio_msg_init(&m, fab.out, SIO_MSG_MAX, SIO_CMD_SEG_TABLE,
		     SIO_F_REQUEST, 0);
	sio_msg_put_u32(&m, SIO_A_NODE, sio_k.self);
	sio_msg_put_u32(&m, SIO_A_SRC, sio_node(sio_k.reg, sio_k.self)->id);
	n = sio_msg_finish(&m);
	mutex_unlock(&sio_k.lock);
	if (p && n > 0)
		ntb.call(p, fab.out, n, fab.reply, SIO_MSG_MAX,
			 SIO_FAB_TIMEOUT_MS);
	ntb.detach();
	cancel_delayed_work_sync(&fab.push);

	mutex_lock(&sio_k.lock);
	if (sio_node(sio_k.reg, fab.peer)->state == SIO_NODE_UP)
		sio_core_node_down(&sio_k.core, fab.peer);
	sio_core_seg_forget(&sio_k.core, sio_k.self, fab.peer);
	for (i = 0; i < SIO_K_MAX_SEGS; i++) {
		if (!fab.own[i].va)
			continue;
		sio_seg_dev_remove(sio_k.seg[i]);
		sio_k.seg[i] = NULL;
		ntb.seg_free(fab.own[i].p, fab.own[i].va, fab.own[i].len);
		memset(&fab.own[i], 0, sizeof(fab.own[i]));
	}
	mutex_unlock(&sio_k.lock);
	fab_put_symbols();
	kfree(fab.out);
	kfree(fab.sent);
	kfree(fab.reply);
}
