// SPDX-License-Identifier: GPL-2.0
/*
 * smartio_ntb: node discovery and request/reply messages between two
 * smartio nodes joined by an NTB, on the mainline NTB framework only, so
 * that it runs on ntb_ivshmem between QEMU guests and on NTB hardware.
 *
 * On link up each side sets up inbound memory window SIO_MW, then writes
 * its node id, a generation (random per load) and a token (random per
 * publication) into the peer's scratchpads, magic last, and rings the
 * peer's CTRL doorbell.  A side whose scratchpads show the magic and a
 * token it has not seen before a link down knows its peer is up: the
 * peer's window is translated before the peer publishes.  A side that is
 * not up publishes "hellos", which the other side answers once each, so
 * both come up whatever the order of their link events.
 *
 * The inbound window holds two slots that only the peer writes: req (the
 * peer's request to us) and rsp (the peer's reply to our request).  A
 * message is written data first, then length, then its sequence number,
 * and announced by the REQ or RSP doorbell; only posted writes cross the
 * NTB.  Sequence numbers start at random values per load, so a stale slot
 * of a previous peer is never taken for a new message.
 *
 * Without a user (sio_ntb_attach) the transport answers requests itself
 * with "node N got: <request>", and debugfs smartio_ntb/<dev>/ has "peer"
 * (up/down, node, generation) and "call" (write a request, read the
 * reply) to drive it.
 */

#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ntb.h>
#include <linux/pci.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "smartio_ntb.h"

#define SIO_MW			0
#define SIO_SPAD_MAGIC		0
#define SIO_SPAD_NODE		1
#define SIO_SPAD_GEN		2
#define SIO_SPAD_TOKEN		3
#define SIO_SPAD_WSIZE		4	/* our inbound window's size */
#define SIO_SPADS		5
#define SIO_OUT_MAX		SZ_64M	/* most of the outbound window we map */
#define SIO_MAGIC		0x53494f31	/* "SIO1" */
#define SIO_DB_CTRL		BIT_ULL(0)
#define SIO_DB_REQ		BIT_ULL(1)
#define SIO_DB_RSP		BIT_ULL(2)
#define SIO_DB_ALL		(SIO_DB_CTRL | SIO_DB_REQ | SIO_DB_RSP)

struct sio_slot {
	__le32 seq;
	__le32 len;
	__le32 status;		/* 0 or a positive errno of the request */
	__le32 reserved;
	u8 data[SIO_NTB_MSG_MAX];
};

struct sio_window {
	struct sio_slot req;
	struct sio_slot rsp;
};

struct sio_ntb_peer {
	struct ntb_dev *ntb;
	struct list_head node;
	struct sio_window *in;		/* ours: the peer writes into it */
	dma_addr_t in_dma;
	resource_size_t in_size;
	unsigned long *heap;		/* pages of the window after the slots */
	unsigned long heap_pages;
	struct mutex heap_lock;		/* heap */
	struct sio_window __iomem *out;	/* the peer's, through our window */
	resource_size_t out_size;	/* how much of it is mapped */
	u32 peer_wsize;			/* the peer's inbound window size */
	struct work_struct link_work;
	struct work_struct req_work;
	struct mutex call_lock;		/* one call at a time */
	struct mutex state_lock;	/* up, peer_*, stale_token */
	wait_queue_head_t wq;
	bool up;
	u32 peer_node;
	u32 peer_gen;
	u32 stale_token;		/* the token seen at the last link down */
	u32 answered;			/* the last hello we answered */
	u32 call_seq;
	u32 req_seen;
	void *req_buf;
	void *rsp_buf;
	struct dentry *dbgfs;
	char last[SIO_NTB_MSG_MAX];	/* debugfs call: the last reply */
	void *dbg_seg;			/* debugfs: one local segment */
	u64 dbg_seg_off;
	size_t dbg_seg_size;
	u64 dbg_peer_off;		/* debugfs: a view of a peer's segment */
	size_t dbg_peer_size;
};

static unsigned int node;
module_param(node, uint, 0444);
MODULE_PARM_DESC(node, "This node's id until a user attaches");

static unsigned int window_kb = 512;
module_param(window_kb, uint, 0444);
MODULE_PARM_DESC(window_kb, "Inbound window to ask for (KiB): message slots and segments");

static char *dev;
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "Bind only this NTB device (its name, e.g. 0000:00:04.0)");

static DEFINE_MUTEX(sio_lock);		/* sio_peers */
/*
 * The user (ops, ctx, self): callbacks run under the read side, so that
 * a request() may call sio_ntb_call() to another peer whose handler calls
 * back here; attach and detach take the write side.
 */
static DECLARE_RWSEM(sio_user_sem);
static LIST_HEAD(sio_peers);
static const struct sio_ntb_ops *sio_ops;
static void *sio_ctx;
static u32 sio_self;
static u32 sio_gen;
static struct dentry *sio_dbgfs;

/* --- the built-in echo service ----------------------------------------- */

static int sio_echo_request(void *ctx, struct sio_ntb_peer *p,
			    const void *msg, u32 len, void *reply, u32 cap)
{
	return scnprintf(reply, cap, "node %u got: %.*s", sio_self,
			 (int)min_t(u32, len, 1024), (const char *)msg);
}

static const struct sio_ntb_ops sio_echo_ops = {
	.request = sio_echo_request,
};

/* --- link and discovery ---------------------------------------------------- */

static void sio_peer_down(struct sio_ntb_peer *p)
{
	const struct sio_ntb_ops *ops;
	void *ctx;

	mutex_lock(&p->state_lock);
	p->stale_token = ntb_spad_read(p->ntb, SIO_SPAD_TOKEN);
	if (!p->up) {
		mutex_unlock(&p->state_lock);
		return;
	}
	p->up = false;
	mutex_unlock(&p->state_lock);
	wake_up_all(&p->wq);
	dev_info(&p->ntb->dev, "smartio peer node %u down\n", p->peer_node);

	down_read(&sio_user_sem);
	ops = sio_ops;
	ctx = sio_ctx;
	if (ops->peer_down)
		ops->peer_down(ctx, p, p->peer_node);
	up_read(&sio_user_sem);
}

static int sio_setup_inbound(struct sio_ntb_peer *p)
{
	resource_size_t addr_align, size_align, size_max, size;
	struct ntb_dev *ntb = p->ntb;
	int rc;

	if (p->in)
		return 0;
	rc = ntb_mw_get_align(ntb, 0, SIO_MW, &addr_align, &size_align,
			      &size_max);
	if (rc)
		return rc;
	size = max_t(resource_size_t, (resource_size_t)window_kb << 10,
		     round_up(sizeof(struct sio_window), PAGE_SIZE));
	size = round_up(min(size, size_max), size_align);
	if (size > size_max || size < sizeof(struct sio_window)) {
		dev_err(&ntb->dev, "window %d: %pa bytes, %zu needed\n",
			SIO_MW, &size_max, sizeof(struct sio_window));
		return -ENOSPC;
	}
	p->in = dma_alloc_coherent(&ntb->pdev->dev, size, &p->in_dma,
				   GFP_KERNEL);
	if (!p->in)
		return -ENOMEM;
	p->in_size = size;
	p->heap_pages = (size - round_up(sizeof(struct sio_window), PAGE_SIZE)) >>
			PAGE_SHIFT;
	p->heap = bitmap_zalloc(max(p->heap_pages, 1UL), GFP_KERNEL);
	if (!p->heap) {
		rc = -ENOMEM;
		goto err;
	}
	if (!IS_ALIGNED(p->in_dma, addr_align)) {
		rc = -EINVAL;
		goto err;
	}
	rc = ntb_mw_set_trans(ntb, 0, SIO_MW, p->in_dma, size);
	if (rc)
		goto err;
	p->req_seen = le32_to_cpu(READ_ONCE(p->in->req.seq));
	return 0;
err:
	dev_err(&ntb->dev, "inbound window %d: %d\n", SIO_MW, rc);
	bitmap_free(p->heap);
	p->heap = NULL;
	dma_free_coherent(&ntb->pdev->dev, size, p->in, p->in_dma);
	p->in = NULL;
	return rc;
}

/* A hello (token bit 0 set) asks for an answer; an answer does not. */
static void sio_publish(struct sio_ntb_peer *p, bool hello)
{
	struct ntb_dev *ntb = p->ntb;
	u32 token = get_random_u32();

	ntb_peer_spad_write(ntb, 0, SIO_SPAD_MAGIC, 0);
	ntb_peer_spad_write(ntb, 0, SIO_SPAD_NODE, sio_self);
	ntb_peer_spad_write(ntb, 0, SIO_SPAD_GEN, sio_gen);
	ntb_peer_spad_write(ntb, 0, SIO_SPAD_WSIZE, p->in_size);
	ntb_peer_spad_write(ntb, 0, SIO_SPAD_TOKEN,
			    hello ? token | 1 : token & ~1u);
	ntb_peer_spad_write(ntb, 0, SIO_SPAD_MAGIC, SIO_MAGIC);
	ntb_peer_db_set(ntb, SIO_DB_CTRL);
}

static void sio_link_work(struct work_struct *work)
{
	struct sio_ntb_peer *p = container_of(work, struct sio_ntb_peer,
					      link_work);
	struct ntb_dev *ntb = p->ntb;
	const struct sio_ntb_ops *ops;
	u32 magic, token, gen, peer;
	bool newly_up = false;
	void *ctx;

	if (!(ntb_link_is_up(ntb, NULL, NULL) & BIT_ULL(0))) {
		sio_peer_down(p);
		return;
	}
	if (sio_setup_inbound(p))
		return;

	mutex_lock(&p->state_lock);
	magic = ntb_spad_read(ntb, SIO_SPAD_MAGIC);
	token = ntb_spad_read(ntb, SIO_SPAD_TOKEN);
	gen = ntb_spad_read(ntb, SIO_SPAD_GEN);
	peer = ntb_spad_read(ntb, SIO_SPAD_NODE);
	if (p->up && magic == SIO_MAGIC && gen != p->peer_gen) {
		/* Rebooted behind our back: a down, then an up. */
		mutex_unlock(&p->state_lock);
		sio_peer_down(p);
		schedule_work(&p->link_work);
		return;
	}
	/* Our window is ready: tell the peer who we are until it answers. */
	if (!p->up)
		sio_publish(p, true);
	if (magic == SIO_MAGIC && token != p->stale_token) {
		if (!p->up) {
			p->up = true;
			p->peer_node = peer;
			p->peer_gen = gen;
			p->peer_wsize = ntb_spad_read(ntb, SIO_SPAD_WSIZE);
			p->req_seen = le32_to_cpu(READ_ONCE(p->in->req.seq));
			newly_up = true;
		}
		/*
		 * Answer a hello, so that a peer that took our previous
		 * publication for stale (it went down after we came up)
		 * comes up too.
		 */
		if ((token & 1) && token != p->answered) {
			p->answered = token;
			sio_publish(p, false);
		}
	}
	mutex_unlock(&p->state_lock);
	if (!newly_up)
		return;

	dev_info(&ntb->dev, "smartio peer node %u up (generation %#x)\n",
		 peer, gen);
	down_read(&sio_user_sem);
	ops = sio_ops;
	ctx = sio_ctx;
	if (ops->peer_up)
		ops->peer_up(ctx, p, peer, gen);
	up_read(&sio_user_sem);
	/* A request may have arrived before we were up. */
	schedule_work(&p->req_work);
}

/* --- messages -------------------------------------------------------------- */

static void sio_write_slot(struct sio_slot __iomem *slot, u32 seq, int status,
			   const void *data, u32 len)
{
	memcpy_toio(slot->data, data, len);
	iowrite32(len, &slot->len);
	iowrite32(status, &slot->status);
	wmb();	/* the message is complete before its sequence number */
	iowrite32(seq, &slot->seq);
}

static void sio_req_work(struct work_struct *work)
{
	struct sio_ntb_peer *p = container_of(work, struct sio_ntb_peer,
					      req_work);
	const struct sio_ntb_ops *ops;
	u32 seq, len;
	void *ctx;
	int rc;

	if (!p->in || !READ_ONCE(p->up))
		return;
	seq = le32_to_cpu(READ_ONCE(p->in->req.seq));
again:
	if (seq == p->req_seen)
		return;
	rmb();	/* the data is read after the sequence number */
	len = le32_to_cpu(READ_ONCE(p->in->req.len));
	if (len <= SIO_NTB_MSG_MAX)
		memcpy(p->req_buf, p->in->req.data, len);
	rmb();	/* a caller that gave up may have sent the next one meanwhile */
	if (le32_to_cpu(READ_ONCE(p->in->req.seq)) != seq) {
		seq = le32_to_cpu(READ_ONCE(p->in->req.seq));
		goto again;
	}
	p->req_seen = seq;
	if (len > SIO_NTB_MSG_MAX) {
		rc = -EMSGSIZE;
	} else {
		down_read(&sio_user_sem);
		ops = sio_ops;
		ctx = sio_ctx;
		rc = ops->request(ctx, p, p->req_buf, len, p->rsp_buf,
				  SIO_NTB_MSG_MAX);
		up_read(&sio_user_sem);
	}
	if (rc < 0)
		sio_write_slot(&p->out->rsp, seq, -rc, NULL, 0);
	else
		sio_write_slot(&p->out->rsp, seq, 0, p->rsp_buf,
			       min_t(u32, rc, SIO_NTB_MSG_MAX));
	ntb_peer_db_set(p->ntb, SIO_DB_RSP);
}

static bool sio_reply_arrived(struct sio_ntb_peer *p, u32 seq)
{
	return le32_to_cpu(READ_ONCE(p->in->rsp.seq)) == seq ||
	       !READ_ONCE(p->up);
}

int sio_ntb_call(struct sio_ntb_peer *p, const void *msg, u32 len,
		 void *reply, u32 cap, unsigned int timeout_ms)
{
	u32 seq, rlen, status;
	long left;
	int rc;

	if (len > SIO_NTB_MSG_MAX)
		return -EMSGSIZE;
	mutex_lock(&p->call_lock);
	if (!READ_ONCE(p->up) || !p->in) {
		rc = -EHOSTDOWN;
		goto out;
	}
	seq = ++p->call_seq;
	if (!seq)
		seq = ++p->call_seq;
	sio_write_slot(&p->out->req, seq, 0, msg, len);
	ntb_peer_db_set(p->ntb, SIO_DB_REQ);

	left = wait_event_timeout(p->wq, sio_reply_arrived(p, seq),
				  msecs_to_jiffies(timeout_ms));
	if (le32_to_cpu(READ_ONCE(p->in->rsp.seq)) != seq) {
		rc = READ_ONCE(p->up) ? -ETIMEDOUT : -EHOSTDOWN;
		if (!left && rc == -EHOSTDOWN)
			rc = -ETIMEDOUT;
		goto out;
	}
	rmb();	/* the reply is read after its sequence number */
	status = le32_to_cpu(READ_ONCE(p->in->rsp.status));
	rlen = le32_to_cpu(READ_ONCE(p->in->rsp.len));
	if (status) {
		rc = -(int)min_t(u32, status, MAX_ERRNO);
	} else if (rlen > cap || rlen > SIO_NTB_MSG_MAX) {
		rc = -EMSGSIZE;
	} else {
		memcpy(reply, p->in->rsp.data, rlen);
		rc = rlen;
	}
out:
	mutex_unlock(&p->call_lock);
	return rc;
}
EXPORT_SYMBOL_GPL(sio_ntb_call);

u32 sio_ntb_peer_node(struct sio_ntb_peer *p)
{
	return p->peer_node;
}
EXPORT_SYMBOL_GPL(sio_ntb_peer_node);

/* --- segments: memory of ours the peer reaches through its window -------- */

void *sio_ntb_seg_alloc(struct sio_ntb_peer *p, size_t size, u64 *off)
{
	unsigned long npages = DIV_ROUND_UP(size, PAGE_SIZE), first;
	u64 base = round_up(sizeof(struct sio_window), PAGE_SIZE);
	void *va;

	if (!p->heap || !size)
		return NULL;
	mutex_lock(&p->heap_lock);
	first = bitmap_find_next_zero_area(p->heap, p->heap_pages, 0, npages,
					   0);
	if (first >= p->heap_pages) {
		mutex_unlock(&p->heap_lock);
		return NULL;
	}
	bitmap_set(p->heap, first, npages);
	mutex_unlock(&p->heap_lock);
	*off = base + ((u64)first << PAGE_SHIFT);
	va = (void *)p->in + *off;
	memset(va, 0, npages << PAGE_SHIFT);
	return va;
}
EXPORT_SYMBOL_GPL(sio_ntb_seg_alloc);

void sio_ntb_seg_free(struct sio_ntb_peer *p, void *va, size_t size)
{
	u64 base = round_up(sizeof(struct sio_window), PAGE_SIZE);
	unsigned long first;

	if (!va || !p->heap)
		return;
	first = (va - (void *)p->in - base) >> PAGE_SHIFT;
	mutex_lock(&p->heap_lock);
	bitmap_clear(p->heap, first, DIV_ROUND_UP(size, PAGE_SIZE));
	mutex_unlock(&p->heap_lock);
}
EXPORT_SYMBOL_GPL(sio_ntb_seg_free);

/*
 * The window's memory is dma_alloc_coherent()'s: RAM in the linear map on
 * most hardware, a remapped range otherwise (ntb_ivshmem hands out the
 * shared region, memremap()ed).
 */
phys_addr_t sio_ntb_seg_phys(struct sio_ntb_peer *p, void *va)
{
	if (virt_addr_valid(va))
		return virt_to_phys(va);
	return PFN_PHYS(vmalloc_to_pfn(va)) + offset_in_page(va);
}
EXPORT_SYMBOL_GPL(sio_ntb_seg_phys);

void __iomem *sio_ntb_peer_seg(struct sio_ntb_peer *p, u64 off, size_t size,
			       phys_addr_t *phys)
{
	phys_addr_t base;
	resource_size_t wsize;

	if (!READ_ONCE(p->up) || off < sizeof(struct sio_window) ||
	    size > p->out_size || off > p->out_size - size ||
	    off + size > p->peer_wsize)
		return NULL;
	if (phys) {
		if (ntb_peer_mw_get_addr(p->ntb, SIO_MW, &base, &wsize))
			return NULL;
		*phys = base + off;
	}
	return (void __iomem *)p->out + off;
}
EXPORT_SYMBOL_GPL(sio_ntb_peer_seg);

/*
 * A new user (or none) is a new node to the peers: a new generation,
 * published at once, so that they see this side go down and come up
 * again with the node id it has now.
 */
static void sio_republish(void)
{
	struct sio_ntb_peer *p;

	sio_gen = get_random_u32() | 1;
	mutex_lock(&sio_lock);
	list_for_each_entry(p, &sio_peers, node) {
		mutex_lock(&p->state_lock);
		if (p->in)
			sio_publish(p, true);
		mutex_unlock(&p->state_lock);
	}
	mutex_unlock(&sio_lock);
}

int sio_ntb_attach(u32 self_node, const struct sio_ntb_ops *ops, void *ctx)
{
	struct sio_ntb_peer *p;

	if (!ops || !ops->request)
		return -EINVAL;
	down_write(&sio_user_sem);
	if (sio_ops != &sio_echo_ops) {
		up_write(&sio_user_sem);
		return -EBUSY;
	}
	sio_ops = ops;
	sio_ctx = ctx;
	sio_self = self_node;
	downgrade_write(&sio_user_sem);
	mutex_lock(&sio_lock);
	list_for_each_entry(p, &sio_peers, node) {
		if (READ_ONCE(p->up) && ops->peer_up)
			ops->peer_up(ctx, p, p->peer_node, p->peer_gen);
	}
	mutex_unlock(&sio_lock);
	up_read(&sio_user_sem);
	sio_republish();
	return 0;
}
EXPORT_SYMBOL_GPL(sio_ntb_attach);

void sio_ntb_detach(void)
{
	down_write(&sio_user_sem);
	sio_ops = &sio_echo_ops;
	sio_ctx = NULL;
	sio_self = node;
	up_write(&sio_user_sem);
	sio_republish();
}
EXPORT_SYMBOL_GPL(sio_ntb_detach);

/* --- NTB client -------------------------------------------------------- */

static void sio_link_event(void *ctx)
{
	struct sio_ntb_peer *p = ctx;

	schedule_work(&p->link_work);
}

static void sio_db_event(void *ctx, int vector)
{
	struct sio_ntb_peer *p = ctx;
	u64 db = ntb_db_read(p->ntb) & SIO_DB_ALL;

	ntb_db_clear(p->ntb, db);
	if (db & SIO_DB_CTRL)
		schedule_work(&p->link_work);
	if (db & SIO_DB_REQ)
		schedule_work(&p->req_work);
	if (db & SIO_DB_RSP)
		wake_up_all(&p->wq);
}

static const struct ntb_ctx_ops sio_ctx_ops = {
	.link_event = sio_link_event,
	.db_event = sio_db_event,
};

static int sio_peer_show(struct seq_file *m, void *unused)
{
	struct sio_ntb_peer *p = m->private;

	mutex_lock(&p->state_lock);
	if (p->up)
		seq_printf(m, "up node=%u generation=%#x\n", p->peer_node,
			   p->peer_gen);
	else
		seq_puts(m, "down\n");
	mutex_unlock(&p->state_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sio_peer);

static ssize_t sio_call_write(struct file *file, const char __user *ubuf,
			      size_t size, loff_t *ppos)
{
	struct sio_ntb_peer *p = file->private_data;
	char *msg, *reply, *text;
	int rc;

	if (size > 1024)
		return -EMSGSIZE;
	msg = memdup_user_nul(ubuf, size);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	reply = kzalloc(SIO_NTB_MSG_MAX + 1, GFP_KERNEL);
	if (!reply) {
		kfree(msg);
		return -ENOMEM;
	}
	text = strim(msg);
	rc = sio_ntb_call(p, text, strlen(text), reply, SIO_NTB_MSG_MAX, 5000);
	if (rc >= 0)
		scnprintf(p->last, sizeof(p->last), "%.*s\n", rc, reply);
	kfree(reply);
	kfree(msg);
	return rc < 0 ? rc : size;
}

static ssize_t sio_call_read(struct file *file, char __user *ubuf,
			     size_t size, loff_t *ppos)
{
	struct sio_ntb_peer *p = file->private_data;

	return simple_read_from_buffer(ubuf, size, ppos, p->last,
				       strlen(p->last));
}

static const struct file_operations sio_call_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sio_call_read,
	.write = sio_call_write,
};

/* seg: "SIZE" creates the local test segment; reads "OFF SIZE". */
static ssize_t sio_seg_write(struct file *file, const char __user *ubuf,
			     size_t size, loff_t *ppos)
{
	struct sio_ntb_peer *p = file->private_data;
	unsigned int len;
	int rc;

	rc = kstrtouint_from_user(ubuf, size, 0, &len);
	if (rc)
		return rc;
	if (p->dbg_seg)
		return -EBUSY;
	p->dbg_seg = sio_ntb_seg_alloc(p, len, &p->dbg_seg_off);
	if (!p->dbg_seg)
		return -ENOSPC;
	p->dbg_seg_size = len;
	return size;
}

static ssize_t sio_seg_read(struct file *file, char __user *ubuf,
			    size_t size, loff_t *ppos)
{
	struct sio_ntb_peer *p = file->private_data;
	char buf[48];
	int n;

	n = scnprintf(buf, sizeof(buf), "%#llx %zu\n", p->dbg_seg_off,
		      p->dbg_seg_size);
	return simple_read_from_buffer(ubuf, size, ppos, buf, n);
}

static const struct file_operations sio_seg_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sio_seg_read,
	.write = sio_seg_write,
};

static ssize_t sio_seg_data_read(struct file *file, char __user *ubuf,
				 size_t size, loff_t *ppos)
{
	struct sio_ntb_peer *p = file->private_data;

	if (!p->dbg_seg)
		return -ENXIO;
	return simple_read_from_buffer(ubuf, size, ppos, p->dbg_seg,
				       p->dbg_seg_size);
}

static ssize_t sio_seg_data_write(struct file *file, const char __user *ubuf,
				  size_t size, loff_t *ppos)
{
	struct sio_ntb_peer *p = file->private_data;

	if (!p->dbg_seg)
		return -ENXIO;
	return simple_write_to_buffer(p->dbg_seg, p->dbg_seg_size, ppos, ubuf,
				      size);
}

static const struct file_operations sio_seg_data_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.llseek = default_llseek,
	.read = sio_seg_data_read,
	.write = sio_seg_data_write,
};

/* peer_seg: "OFF SIZE" of a segment of the peer's to reach in peer_seg_data. */
static ssize_t sio_peer_seg_write(struct file *file, const char __user *ubuf,
				  size_t size, loff_t *ppos)
{
	struct sio_ntb_peer *p = file->private_data;
	char buf[48];
	size_t len;
	u64 off;

	if (size >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, size))
		return -EFAULT;
	buf[size] = 0;
	if (sscanf(buf, "%lli %zu", &off, &len) != 2)
		return -EINVAL;
	if (!sio_ntb_peer_seg(p, off, len, NULL))
		return -EHOSTDOWN;
	p->dbg_peer_off = off;
	p->dbg_peer_size = len;
	return size;
}

static const struct file_operations sio_peer_seg_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = sio_peer_seg_write,
};

static ssize_t sio_peer_seg_data_read(struct file *file, char __user *ubuf,
				      size_t size, loff_t *ppos)
{
	struct sio_ntb_peer *p = file->private_data;
	void __iomem *mem;
	ssize_t rc;
	void *buf;

	mem = sio_ntb_peer_seg(p, p->dbg_peer_off, p->dbg_peer_size, NULL);
	if (!mem || !p->dbg_peer_size)
		return -EHOSTDOWN;
	if (*ppos >= p->dbg_peer_size)
		return 0;
	size = min_t(size_t, size, p->dbg_peer_size - *ppos);
	buf = kmalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	memcpy_fromio(buf, mem + *ppos, size);
	rc = size - copy_to_user(ubuf, buf, size);
	kfree(buf);
	if (!rc)
		return -EFAULT;
	*ppos += rc;
	return rc;
}

static ssize_t sio_peer_seg_data_write(struct file *file,
				       const char __user *ubuf, size_t size,
				       loff_t *ppos)
{
	struct sio_ntb_peer *p = file->private_data;
	void __iomem *mem;
	void *buf;

	mem = sio_ntb_peer_seg(p, p->dbg_peer_off, p->dbg_peer_size, NULL);
	if (!mem || !p->dbg_peer_size)
		return -EHOSTDOWN;
	if (*ppos >= p->dbg_peer_size)
		return -ENOSPC;
	size = min_t(size_t, size, p->dbg_peer_size - *ppos);
	buf = memdup_user(ubuf, size);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	memcpy_toio(mem + *ppos, buf, size);
	kfree(buf);
	*ppos += size;
	return size;
}

static const struct file_operations sio_peer_seg_data_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.llseek = default_llseek,
	.read = sio_peer_seg_data_read,
	.write = sio_peer_seg_data_write,
};

static int sio_probe(struct ntb_client *client, struct ntb_dev *ntb)
{
	struct sio_ntb_peer *p;
	phys_addr_t base;
	resource_size_t size;
	int rc;

	if (dev && strcmp(dev, dev_name(&ntb->dev)))
		return -ENODEV;
	if (ntb_peer_port_count(ntb) != 1 || ntb_spad_count(ntb) < SIO_SPADS ||
	    (ntb_db_valid_mask(ntb) & SIO_DB_ALL) != SIO_DB_ALL ||
	    ntb_mw_count(ntb, 0) <= SIO_MW || ntb_peer_mw_count(ntb) <= SIO_MW) {
		dev_info(&ntb->dev, "smartio needs one peer, %d scratchpads, 3 doorbells, a window\n",
			 SIO_SPADS);
		return -ENODEV;
	}
	p = devm_kzalloc(&ntb->dev, sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->ntb = ntb;
	p->req_buf = devm_kzalloc(&ntb->dev, SIO_NTB_MSG_MAX, GFP_KERNEL);
	p->rsp_buf = devm_kzalloc(&ntb->dev, SIO_NTB_MSG_MAX, GFP_KERNEL);
	if (!p->req_buf || !p->rsp_buf)
		return -ENOMEM;
	INIT_WORK(&p->link_work, sio_link_work);
	INIT_WORK(&p->req_work, sio_req_work);
	mutex_init(&p->call_lock);
	mutex_init(&p->heap_lock);
	mutex_init(&p->state_lock);
	init_waitqueue_head(&p->wq);
	p->call_seq = get_random_u32();
	/* Whatever the scratchpads hold now is a previous peer's. */
	p->stale_token = ntb_spad_read(ntb, SIO_SPAD_TOKEN);

	rc = ntb_peer_mw_get_addr(ntb, SIO_MW, &base, &size);
	if (rc)
		return rc;
	if (size < sizeof(struct sio_window))
		return -ENOSPC;
	p->out_size = min_t(resource_size_t, size, SIO_OUT_MAX);
	p->out = devm_ioremap_wc(&ntb->dev, base, p->out_size);
	if (!p->out)
		return -ENOMEM;

	ntb_db_set_mask(ntb, ntb_db_valid_mask(ntb));
	rc = ntb_set_ctx(ntb, p, &sio_ctx_ops);
	if (rc)
		return rc;
	ntb_db_clear(ntb, SIO_DB_ALL);
	ntb_db_clear_mask(ntb, SIO_DB_ALL);

	mutex_lock(&sio_lock);
	list_add_tail(&p->node, &sio_peers);
	mutex_unlock(&sio_lock);

	if (sio_dbgfs) {
		p->dbgfs = debugfs_create_dir(dev_name(&ntb->dev), sio_dbgfs);
		debugfs_create_file("peer", 0400, p->dbgfs, p, &sio_peer_fops);
		debugfs_create_file("call", 0600, p->dbgfs, p, &sio_call_fops);
		debugfs_create_file("seg", 0600, p->dbgfs, p, &sio_seg_fops);
		debugfs_create_file("seg_data", 0600, p->dbgfs, p,
				    &sio_seg_data_fops);
		debugfs_create_file("peer_seg", 0200, p->dbgfs, p,
				    &sio_peer_seg_fops);
		debugfs_create_file("peer_seg_data", 0600, p->dbgfs, p,
				    &sio_peer_seg_data_fops);
	}
	ntb_link_enable(ntb, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
	schedule_work(&p->link_work);
	return 0;
}

static void sio_remove(struct ntb_client *client, struct ntb_dev *ntb)
{
	struct sio_ntb_peer *p = ntb->ctx;

	debugfs_remove_recursive(p->dbgfs);
	ntb_link_disable(ntb);
	ntb_db_set_mask(ntb, ntb_db_valid_mask(ntb));
	ntb_clear_ctx(ntb);
	cancel_work_sync(&p->link_work);
	cancel_work_sync(&p->req_work);
	sio_peer_down(p);
	mutex_lock(&sio_lock);
	list_del(&p->node);
	mutex_unlock(&sio_lock);
	if (p->dbg_seg)
		sio_ntb_seg_free(p, p->dbg_seg, p->dbg_seg_size);
	bitmap_free(p->heap);
	if (p->in) {
		ntb_mw_clear_trans(ntb, 0, SIO_MW);
		dma_free_coherent(&ntb->pdev->dev, p->in_size, p->in,
				  p->in_dma);
	}
}

static struct ntb_client sio_client = {
	.ops = {
		.probe = sio_probe,
		.remove = sio_remove,
	},
};

static int __init sio_init(void)
{
	int rc;

	sio_ops = &sio_echo_ops;
	sio_self = node;
	sio_gen = get_random_u32() | 1;
	if (debugfs_initialized())
		sio_dbgfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	rc = ntb_register_client(&sio_client);
	if (rc)
		debugfs_remove_recursive(sio_dbgfs);
	return rc;
}
module_init(sio_init);

static void __exit sio_exit(void)
{
	ntb_unregister_client(&sio_client);
	debugfs_remove_recursive(sio_dbgfs);
}
module_exit(sio_exit);

MODULE_DESCRIPTION("smartio node-to-node transport over NTB");
MODULE_LICENSE("GPL");
