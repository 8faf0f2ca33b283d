// SPDX-License-Identifier: GPL-2.0
/*
 * smartio_ntb: node discovery and request/reply messages between smartio
 * nodes joined by an NTB, on the mainline NTB framework only, so that it
 * runs on ntb_ivshmem and ntb_sioswitch between QEMU guests and on NTB
 * hardware.  One NTB device reaches ntb_peer_port_count() peers (a
 * multi-port switch: several); each peer is a struct sio_ntb_peer.
 *
 * On link up with a peer each side sets up its inbound message window
 * (SIO_MW_MSG of that peer) and the segment heap (SIO_MW_SEG: one buffer
 * per device, translated for every peer), then writes its node id, a
 * generation (random per load) and a token (random per publication) into
 * the peer's scratchpads, magic last, and rings the peer's doorbell.  With
 * several peers each writer has a block of SIO_SPADS scratchpads of its
 * own, at its port number times SIO_SPADS, since the peers share the
 * receiver's scratchpads.  A side whose scratchpads show the magic and a
 * token it has not seen before a link down knows its peer is up: the
 * peer's windows are translated before the peer publishes.  A side that
 * is not up publishes "hellos", which the other side answers once each,
 * so both come up whatever the order of their link events.
 *
 * The message window holds two slots that only that peer writes: req (the
 * peer's request to us) and rsp (the peer's reply to our request).  A
 * message is written data first, then length, then its sequence number,
 * and announced by a doorbell; only posted writes cross the NTB.  Sequence
 * numbers start at random values per load, so a stale slot of a previous
 * peer is never taken for a new message.  With one peer the doorbell bits
 * say what changed (CTRL, REQ, RSP); with several, a doorbell cannot name
 * its sender (bit p rings port p, as ntb_pingpong and ntb_perf use them),
 * so any doorbell makes every peer's slots and scratchpads be looked at.
 *
 * Without a user (sio_ntb_attach) the transport answers requests itself
 * with "node N got: <request>", and debugfs smartio_ntb/<dev>/ (one peer)
 * or smartio_ntb/<dev>/port<P>/ (several) has "peer" (up/down, node,
 * generation) and "call" (write a request, read the reply) to drive it.
 * Two guests joined by ntb_ivshmem, this one node 1:
 *
 *   # insmod ntb.ko; insmod ntb_ivshmem.ko; insmod smartio_ntb.ko node=1
 *   # cd /sys/kernel/debug/smartio_ntb/0000:00:05.0
 *   # cat peer
 *   up node=0 generation=0x5d1c0a3b
 *   # echo hello > call; cat call
 *   node 0 got: hello
 *
 * smartio.ko (fabric=ntb) then takes the transport over through the
 * table smartio_ntb_fabric.c offers it (sio_ntb_attach).
 */

#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/list.h>
#include <linux/log2.h>
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
#include "smartio_ntb_fabric.h"
#include "smartio_ntb_rid.h"

#define SIO_MW_MSG		0	/* per peer: its request and reply slots */
#define SIO_MW_SEG		1	/* the segment heap, shared by the peers */
#define SIO_MW_LUT		2	/* single LUT entries for smartio.ko */
#define SIO_OUT_MAX		SZ_64M	/* most of the outbound window we map */
#define SIO_MAGIC		0x53494f31	/* "SIO1" */
#define SIO_DB_CTRL		BIT_ULL(0)
#define SIO_DB_REQ		BIT_ULL(1)
#define SIO_DB_RSP		BIT_ULL(2)
#define SIO_DB_ALL		(SIO_DB_CTRL | SIO_DB_REQ | SIO_DB_RSP)

/*
 * A writer's block of scratchpads in the receiver (at its port number
 * times SIO_SPADS), what sio_publish() writes, magic last: the receiver
 * takes the others as valid once the magic is there.
 */
enum sio_spad {
	SIO_SPAD_MAGIC,		/* SIO_MAGIC, or 0 while being rewritten */
	SIO_SPAD_NODE,		/* the writer's node id */
	SIO_SPAD_GEN,		/* its generation: random per load or user */
	SIO_SPAD_TOKEN,		/* random per publication; bit 0: a hello */
	SIO_SPAD_WSIZE,		/* its segment heap's size */
	SIO_SPADS		/* the block's size */
};

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

struct sio_ntb_dev;

struct sio_ntb_peer {
	struct sio_ntb_dev *d;
	int pidx;
	int port;			/* the peer's port number */
	u32 spad_in;			/* its scratchpad block here */
	u32 spad_out;			/* ours there */
	struct sio_window *in;		/* ours: the peer writes into it */
	dma_addr_t in_dma;
	resource_size_t in_size;
	bool seg_trans;			/* the heap is translated for it */
	struct sio_window __iomem *out;	/* the peer's, through our window */
	resource_size_t out_size;	/* how much of it is mapped */
	void __iomem *seg_out;		/* the peer's heap, through our window */
	phys_addr_t seg_out_phys;
	resource_size_t seg_out_size;	/* how much of it is mapped */
	u32 peer_wsize;			/* the peer's heap size */
	struct work_struct link_work;
	struct work_struct req_work;
	struct mutex call_lock;		/* one call at a time */
	struct mutex state_lock;	/* up, peer_*, stale_token, seen */
	wait_queue_head_t wq;
	bool up;
	bool relink;			/* a link event: publish again */
	u32 peer_node;
	u32 peer_gen;
	u32 stale_token;		/* the token seen at the last link down */
	u32 seen_token;			/* the token last looked at */
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

/* One NTB device: its peers and the segment heap they all reach. */
struct sio_ntb_dev {
	struct ntb_dev *ntb;
	struct list_head node;
	int pcnt;
	u64 db_in;			/* doorbell bits that are ours to read */
	struct mutex heap_lock;		/* heap, heap_* */
	void *heap_va;
	dma_addr_t heap_dma;
	resource_size_t heap_size;
	unsigned long *heap;		/* its pages in use */
	unsigned long heap_pages;
	/*
	 * Pages a segment starts and ends at a multiple of: one page, or a
	 * whole look-up-table entry where an entry translates only a block
	 * aligned to its size (Switchtec: 64 KiB), so that the entry through
	 * which a peer reaches a segment reaches nothing of another.
	 */
	unsigned long seg_align;
	struct dentry *dbgfs;
	struct sio_ntb_peer peer[];
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

/*
 * sio_devs changes under both sio_lock and the write side of
 * sio_user_sem, and is read under either: the queries smartio.ko makes
 * with its own lock held take sio_lock, which is never held across a
 * call to the user; attach walks it under the read side to call the
 * user's peer_up (which takes smartio.ko's lock).
 */
static DEFINE_MUTEX(sio_lock);
/*
 * The user (ops, ctx, self): callbacks run under the read side, so that
 * a request() may call sio_ntb_call() to another peer whose handler calls
 * back here; attach and detach take the write side.
 */
static DECLARE_RWSEM(sio_user_sem);
static LIST_HEAD(sio_devs);
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
	p->stale_token = ntb_spad_read(p->d->ntb,
				       p->spad_in + SIO_SPAD_TOKEN);
	if (!p->up) {
		mutex_unlock(&p->state_lock);
		return;
	}
	p->up = false;
	mutex_unlock(&p->state_lock);
	wake_up_all(&p->wq);
	dev_info(&p->d->ntb->dev, "smartio peer node %u (port %d) down\n",
		 p->peer_node, p->port);

	down_read(&sio_user_sem);
	ops = sio_ops;
	ctx = sio_ctx;
	if (ops->peer_down)
		ops->peer_down(ctx, p, p->peer_node);
	up_read(&sio_user_sem);
}

/*
 * Inbound buffers are physically contiguous also when the NTB function's
 * IOMMU translates: dma-iommu would otherwise gather single pages behind
 * one IOVA range and vmap them, and a segment is mapped to user space by
 * its physical address, page after page (sio_ntb_seg_phys; issue 29).
 */
#define SIO_INBOUND_ATTRS	DMA_ATTR_FORCE_CONTIGUOUS

/*
 * A buffer for inbound window widx of peer pidx, at least want bytes (at
 * most what the window takes), translated; 0 or -errno.
 */
static int sio_inbound(struct sio_ntb_peer *p, int widx, resource_size_t want,
		       void **va, dma_addr_t *dma, resource_size_t *size)
{
	resource_size_t addr_align, size_align, size_max, sz;
	struct ntb_dev *ntb = p->d->ntb;
	int rc;

	/* Asked right before the allocation (ntb_ivshmem picks the slot). */
	rc = ntb_mw_get_align(ntb, p->pidx, widx, &addr_align, &size_align,
			      &size_max);
	if (rc)
		return rc;
	sz = round_up(min(round_up(want, PAGE_SIZE), size_max), size_align);
	/*
	 * Switchtec's direct windows translate a naturally aligned power of
	 * two (ntb_hw_switchtec programs ilog2(size); the chip refuses the
	 * rest): ask for one whenever it fits.  dma_alloc_attrs() aligns
	 * it to its size.  Other hardware takes it as well.
	 */
	if (roundup_pow_of_two(sz) <= size_max)
		sz = roundup_pow_of_two(sz);
	if (sz > size_max || sz < want) {
		dev_err(&ntb->dev, "window %d: %pa bytes, %pa needed\n", widx,
			&size_max, &want);
		return -ENOSPC;
	}
	*va = dma_alloc_attrs(&ntb->pdev->dev, sz, dma, GFP_KERNEL,
			      SIO_INBOUND_ATTRS);
	if (!*va)
		return -ENOMEM;
	rc = IS_ALIGNED(*dma, addr_align) ? 0 : -EINVAL;
	if (!rc)
		rc = ntb_mw_set_trans(ntb, p->pidx, widx, *dma, sz);
	if (rc) {
		dma_free_attrs(&ntb->pdev->dev, sz, *va, *dma,
			       SIO_INBOUND_ATTRS);
		*va = NULL;
		return rc;
	}
	*size = sz;
	return 0;
}

/*
 * Single look-up-table entries: memory windows SIO_MW_LUT.. of every peer
 * (ntb_sioswitch lut_mws=1, as ntb_hw_switchtec's LUT windows), each
 * translated on its own.  How many and how large, on d.
 */
static u32 sio_lut_count(struct sio_ntb_dev *d, u64 *ent_size)
{
	resource_size_t size;
	phys_addr_t base;
	int mws = ntb_mw_count(d->ntb, 0);

	/*
	 * The outbound side's size: ntb_mw_get_align() answers only while
	 * that peer's link is up, and the geometry is asked at load time.
	 */
	if (mws <= SIO_MW_LUT ||
	    ntb_peer_mw_get_addr(d->ntb, SIO_MW_LUT, &base, &size))
		return 0;
	*ent_size = size;
	return mws - SIO_MW_LUT;
}

/*
 * The address alignment of what one single entry translates: a page on
 * ntb_sioswitch, the entry's own size on Switchtec's LUT windows (the
 * driver's mw_get_align; it answers only while the peer's link is up,
 * PAGE_SIZE before and without single entries).
 */
static u64 sio_lut_align(struct sio_ntb_peer *p)
{
	resource_size_t align;
	u64 ent;

	if (!sio_lut_count(p->d, &ent) ||
	    ntb_mw_get_align(p->d->ntb, p->pidx, SIO_MW_LUT, &align, NULL,
			     NULL) || align < PAGE_SIZE || !is_power_of_2(align))
		return PAGE_SIZE;
	return align;
}

/*
 * Whether the heap window is translated to the peers in full.  With single
 * look-up-table entries smartio translates each attached segment on its
 * own (the owner's entry for the attaching peer), so the heap window leads
 * nowhere and a segment nobody was given cannot be reached whatever a
 * peer's kernel does (issue 12, defect 7).  Without them (ntb_ivshmem's
 * one shared region) every peer reaches the whole heap.
 */
static bool sio_heap_shared(struct sio_ntb_dev *d)
{
	u64 ent;

	return !sio_lut_count(d, &ent);
}

/* The heap: one buffer, the same offsets for every peer. */
static int sio_setup_heap(struct sio_ntb_peer *p)
{
	struct sio_ntb_dev *d = p->d;
	resource_size_t size;
	int rc = 0;

	mutex_lock(&d->heap_lock);
	if (p->seg_trans)
		goto out;
	if (!d->heap_va) {
		rc = sio_inbound(p, SIO_MW_SEG, (resource_size_t)window_kb << 10,
				 &d->heap_va, &d->heap_dma, &d->heap_size);
		if (rc)
			goto out;
		if (!sio_heap_shared(d))
			ntb_mw_clear_trans(d->ntb, p->pidx, SIO_MW_SEG);
		d->heap_pages = d->heap_size >> PAGE_SHIFT;
		d->seg_align = sio_lut_align(p) >> PAGE_SHIFT;
		d->heap = bitmap_zalloc(d->heap_pages, GFP_KERNEL);
		if (!d->heap) {
			ntb_mw_clear_trans(d->ntb, p->pidx, SIO_MW_SEG);
			dma_free_attrs(&d->ntb->pdev->dev, d->heap_size,
				       d->heap_va, d->heap_dma,
				       SIO_INBOUND_ATTRS);
			d->heap_va = NULL;
			rc = -ENOMEM;
			goto out;
		}
	} else if (sio_heap_shared(d)) {
		size = d->heap_size;
		rc = ntb_mw_set_trans(d->ntb, p->pidx, SIO_MW_SEG, d->heap_dma,
				      size);
		if (rc)
			goto out;
	}
	p->seg_trans = true;
out:
	mutex_unlock(&d->heap_lock);
	if (rc)
		dev_err(&d->ntb->dev, "segment window for port %d: %d\n",
			p->port, rc);
	return rc;
}

static int sio_setup_inbound(struct sio_ntb_peer *p)
{
	void *va;
	int rc;

	if (!p->in) {
		rc = sio_inbound(p, SIO_MW_MSG, sizeof(struct sio_window), &va,
				 &p->in_dma, &p->in_size);
		if (rc) {
			dev_err(&p->d->ntb->dev,
				"message window for port %d: %d\n", p->port,
				rc);
			return rc;
		}
		p->in = va;
		p->req_seen = le32_to_cpu(READ_ONCE(p->in->req.seq));
	}
	return sio_setup_heap(p);
}

/* The doorbell bits that tell the peer what: with several, any of them. */
static u64 sio_db_bits(struct sio_ntb_peer *p, u64 what)
{
	return p->d->pcnt == 1 ? what : BIT_ULL(p->port);
}

/* A hello (token bit 0 set) asks for an answer; an answer does not. */
static void sio_publish(struct sio_ntb_peer *p, bool hello)
{
	struct ntb_dev *ntb = p->d->ntb;
	u32 token = get_random_u32();
	u32 o = p->spad_out;

	ntb_peer_spad_write(ntb, p->pidx, o + SIO_SPAD_MAGIC, 0);
	ntb_peer_spad_write(ntb, p->pidx, o + SIO_SPAD_NODE, sio_self);
	ntb_peer_spad_write(ntb, p->pidx, o + SIO_SPAD_GEN, sio_gen);
	ntb_peer_spad_write(ntb, p->pidx, o + SIO_SPAD_WSIZE,
			    p->d->heap_size);
	ntb_peer_spad_write(ntb, p->pidx, o + SIO_SPAD_TOKEN,
			    hello ? token | 1 : token & ~1u);
	ntb_peer_spad_write(ntb, p->pidx, o + SIO_SPAD_MAGIC, SIO_MAGIC);
	ntb_peer_db_set(ntb, sio_db_bits(p, SIO_DB_CTRL));
}

static void sio_link_work(struct work_struct *work)
{
	struct sio_ntb_peer *p = container_of(work, struct sio_ntb_peer,
					      link_work);
	struct ntb_dev *ntb = p->d->ntb;
	const struct sio_ntb_ops *ops;
	u32 magic, token, gen, peer;
	bool newly_up = false;
	void *ctx;

	if (!(ntb_link_is_up(ntb, NULL, NULL) & BIT_ULL(p->pidx))) {
		sio_peer_down(p);
		return;
	}
	if (sio_setup_inbound(p))
		return;

	mutex_lock(&p->state_lock);
	magic = ntb_spad_read(ntb, p->spad_in + SIO_SPAD_MAGIC);
	token = ntb_spad_read(ntb, p->spad_in + SIO_SPAD_TOKEN);
	gen = ntb_spad_read(ntb, p->spad_in + SIO_SPAD_GEN);
	peer = ntb_spad_read(ntb, p->spad_in + SIO_SPAD_NODE);
	/* Another peer's doorbell, nothing new from this one. */
	if (!p->relink && token == p->seen_token) {
		mutex_unlock(&p->state_lock);
		return;
	}
	p->relink = false;
	p->seen_token = token;
	if (p->up && magic == SIO_MAGIC && gen != p->peer_gen) {
		/* Rebooted behind our back: a down, then an up. */
		p->relink = true;
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
			p->peer_wsize = ntb_spad_read(ntb, p->spad_in +
						      SIO_SPAD_WSIZE);
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

	dev_info(&ntb->dev, "smartio peer node %u (port %d) up (generation %#x)\n",
		 peer, p->port, gen);
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
	ntb_peer_db_set(p->d->ntb, sio_db_bits(p, SIO_DB_RSP));
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
	ntb_peer_db_set(p->d->ntb, sio_db_bits(p, SIO_DB_REQ));

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

int sio_ntb_peer_port(struct sio_ntb_peer *p)
{
	return p->port;
}

/* --- segments: memory of ours the peers reach through their windows ---- */

/* A segment's pages in the heap: a multiple of the heap's alignment. */
static unsigned long sio_seg_pages(struct sio_ntb_dev *d, size_t size)
{
	return round_up(DIV_ROUND_UP(size, PAGE_SIZE), max(d->seg_align, 1UL));
}

void *sio_ntb_seg_alloc(struct sio_ntb_peer *p, size_t size, u64 *off)
{
	struct sio_ntb_dev *d = p->d;
	unsigned long npages, first;
	void *va;

	if (!size)
		return NULL;
	mutex_lock(&d->heap_lock);
	if (!d->heap) {
		mutex_unlock(&d->heap_lock);
		return NULL;
	}
	npages = sio_seg_pages(d, size);
	first = bitmap_find_next_zero_area(d->heap, d->heap_pages, 0, npages,
					   max(d->seg_align, 1UL) - 1);
	if (first >= d->heap_pages) {
		mutex_unlock(&d->heap_lock);
		return NULL;
	}
	bitmap_set(d->heap, first, npages);
	mutex_unlock(&d->heap_lock);
	*off = (u64)first << PAGE_SHIFT;
	va = d->heap_va + *off;
	memset(va, 0, npages << PAGE_SHIFT);
	return va;
}

void sio_ntb_seg_free(struct sio_ntb_peer *p, void *va, size_t size)
{
	struct sio_ntb_dev *d = p->d;
	unsigned long first;

	if (!va || !d->heap)
		return;
	first = (va - d->heap_va) >> PAGE_SHIFT;
	/*
	 * Scrubbed now, not at the next allocation: the peers reach the
	 * whole heap, free pages included.
	 */
	memset(va, 0, sio_seg_pages(d, size) << PAGE_SHIFT);
	mutex_lock(&d->heap_lock);
	bitmap_clear(d->heap, first, sio_seg_pages(d, size));
	mutex_unlock(&d->heap_lock);
}

/*
 * The heap's memory is dma_alloc_attrs()'s, physically contiguous
 * (SIO_INBOUND_ATTRS): RAM in the linear map on most hardware, a remapped
 * range otherwise (ntb_ivshmem hands out the shared region, memremap()ed).
 */
phys_addr_t sio_ntb_seg_phys(struct sio_ntb_peer *p, void *va)
{
	if (virt_addr_valid(va))
		return virt_to_phys(va);
	return PFN_PHYS(vmalloc_to_pfn(va)) + offset_in_page(va);
}

/*
 * The heap is one dma_alloc_attrs() buffer of the NTB function: its DMA
 * address and its CPU address advance together, also when the function's
 * IOMMU translates (an IOVA range then, whatever pages lie behind it).
 */
dma_addr_t sio_ntb_seg_dma(struct sio_ntb_peer *p, void *va)
{
	return p->d->heap_dma + (va - p->d->heap_va);
}

void __iomem *sio_ntb_peer_seg(struct sio_ntb_peer *p, u64 off, size_t size,
			       phys_addr_t *phys)
{
	if (!READ_ONCE(p->up) || size > p->seg_out_size ||
	    off > p->seg_out_size - size || off + size > p->peer_wsize)
		return NULL;
	if (phys)
		*phys = p->seg_out_phys + off;
	return p->seg_out + off;
}

struct pci_dev *sio_ntb_pci_dev(void)
{
	struct sio_ntb_dev *d;
	struct pci_dev *pdev = NULL;

	mutex_lock(&sio_lock);
	d = list_first_entry_or_null(&sio_devs, struct sio_ntb_dev, node);
	if (d)
		pdev = d->ntb->pdev;
	mutex_unlock(&sio_lock);
	return pdev;
}

u32 sio_ntb_lut_geometry(u64 *ent_size)
{
	struct sio_ntb_dev *d;
	u32 n = 0;

	mutex_lock(&sio_lock);
	d = list_first_entry_or_null(&sio_devs, struct sio_ntb_dev, node);
	if (d)
		n = sio_lut_count(d, ent_size);
	mutex_unlock(&sio_lock);
	return n;
}

int sio_ntb_lut_set(struct sio_ntb_peer *p, u32 entry, u64 addr, u64 size)
{
	u64 ent;

	/* An entry that translates aligned blocks only: say so, not the chip. */
	if (entry >= sio_lut_count(p->d, &ent) || !size || size > ent ||
	    !IS_ALIGNED(addr, sio_lut_align(p)) || !PAGE_ALIGNED(size))
		return -EINVAL;
	return ntb_mw_set_trans(p->d->ntb, p->pidx, SIO_MW_LUT + entry, addr,
				size);
}

void sio_ntb_lut_clear(struct sio_ntb_peer *p, u32 entry)
{
	u64 ent;

	if (entry < sio_lut_count(p->d, &ent))
		ntb_mw_clear_trans(p->d->ntb, p->pidx, SIO_MW_LUT + entry);
}

phys_addr_t sio_ntb_lut_peer_addr(struct sio_ntb_peer *p, u32 entry)
{
	struct ntb_dev *ntb = p->d->ntb;
	int per_peer = ntb_peer_mw_count(ntb) / p->d->pcnt;
	resource_size_t size;
	phys_addr_t base;
	u64 ent;

	if (entry >= sio_lut_count(p->d, &ent) ||
	    ntb_peer_mw_get_addr(ntb, p->pidx * per_peer + SIO_MW_LUT + entry,
				 &base, &size))
		return 0;
	return base;
}

u64 sio_ntb_lut_align(struct sio_ntb_peer *p)
{
	return sio_lut_align(p);
}

/*
 * The direct window: memory window SIO_MW_SEG, which the heap leaves
 * untranslated where single entries exist (sio_heap_shared), so smartio.ko
 * may give its one translation per peer to a DMA window (kmod/ntb/README).
 */
u64 sio_ntb_direct_geometry(void)
{
	struct sio_ntb_dev *d;
	resource_size_t size = 0;
	phys_addr_t base;

	mutex_lock(&sio_lock);
	d = list_first_entry_or_null(&sio_devs, struct sio_ntb_dev, node);
	if (d && !sio_heap_shared(d) &&
	    ntb_peer_mw_get_addr(d->ntb, SIO_MW_SEG, &base, &size))
		size = 0;
	mutex_unlock(&sio_lock);
	return size ? rounddown_pow_of_two(size) : 0;
}

int sio_ntb_direct_set(struct sio_ntb_peer *p, u64 addr, u64 size)
{
	if (sio_heap_shared(p->d) || !is_power_of_2(size) ||
	    !IS_ALIGNED(addr, size))
		return -EINVAL;
	return ntb_mw_set_trans(p->d->ntb, p->pidx, SIO_MW_SEG, addr, size);
}

void sio_ntb_direct_clear(struct sio_ntb_peer *p)
{
	if (!sio_heap_shared(p->d))
		ntb_mw_clear_trans(p->d->ntb, p->pidx, SIO_MW_SEG);
}

phys_addr_t sio_ntb_direct_peer_addr(struct sio_ntb_peer *p)
{
	struct ntb_dev *ntb = p->d->ntb;
	int per_peer = ntb_peer_mw_count(ntb) / p->d->pcnt;
	resource_size_t size;
	phys_addr_t base;

	if (sio_heap_shared(p->d) ||
	    ntb_peer_mw_get_addr(ntb, p->pidx * per_peer + SIO_MW_SEG, &base,
				 &size))
		return 0;
	return base;
}

/*
 * A new user (or none) is a new node to the peers: a new generation,
 * published at once, so that they see this side go down and come up
 * again with the node id it has now.
 */
static void sio_republish(void)
{
	struct sio_ntb_dev *d;
	struct sio_ntb_peer *p;

	sio_gen = get_random_u32() | 1;
	mutex_lock(&sio_lock);
	list_for_each_entry(d, &sio_devs, node) {
		for (p = d->peer; p < d->peer + d->pcnt; p++) {
			mutex_lock(&p->state_lock);
			if (p->in)
				sio_publish(p, true);
			mutex_unlock(&p->state_lock);
		}
	}
	mutex_unlock(&sio_lock);
}

int sio_ntb_attach(u32 self_node, const struct sio_ntb_ops *ops, void *ctx)
{
	struct sio_ntb_dev *d;
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
	list_for_each_entry(d, &sio_devs, node) {
		for (p = d->peer; p < d->peer + d->pcnt; p++)
			if (READ_ONCE(p->up) && ops->peer_up)
				ops->peer_up(ctx, p, p->peer_node,
					     p->peer_gen);
	}
	up_read(&sio_user_sem);
	sio_republish();
	return 0;
}

void sio_ntb_detach(void)
{
	down_write(&sio_user_sem);
	sio_ops = &sio_echo_ops;
	sio_ctx = NULL;
	sio_self = node;
	up_write(&sio_user_sem);
	sio_republish();
}

/* --- NTB client -------------------------------------------------------- */

static void sio_link_event(void *ctx)
{
	struct sio_ntb_dev *d = ctx;
	struct sio_ntb_peer *p;

	for (p = d->peer; p < d->peer + d->pcnt; p++) {
		WRITE_ONCE(p->relink, true);
		schedule_work(&p->link_work);
	}
}

static void sio_db_event(void *ctx, int vector)
{
	struct sio_ntb_dev *d = ctx;
	u64 db = ntb_db_read(d->ntb) & d->db_in;
	struct sio_ntb_peer *p;
	bool any = d->pcnt > 1 && db;

	ntb_db_clear(d->ntb, db);
	for (p = d->peer; p < d->peer + d->pcnt; p++) {
		if (any || (db & SIO_DB_CTRL))
			schedule_work(&p->link_work);
		if (any || (db & SIO_DB_REQ))
			schedule_work(&p->req_work);
		if (any || (db & SIO_DB_RSP))
			wake_up_all(&p->wq);
	}
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

/*
 * The test files below share one shape (ntb_tool's TOOL_FOPS_RDWR): the
 * peer in private_data by simple_open, a read and/or a write, and seek
 * only where the file is a window into a segment (llseek NULL: -ESPIPE).
 */
#define SIO_DBG_FOPS(__name, __read, __write, __llseek)	\
	static const struct file_operations __name = {	\
		.owner = THIS_MODULE,			\
		.open = simple_open,			\
		.llseek = __llseek,			\
		.read = __read,				\
		.write = __write,			\
	}

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

SIO_DBG_FOPS(sio_call_fops, sio_call_read, sio_call_write, NULL);

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

SIO_DBG_FOPS(sio_seg_fops, sio_seg_read, sio_seg_write, NULL);

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

SIO_DBG_FOPS(sio_seg_data_fops, sio_seg_data_read, sio_seg_data_write, default_llseek);

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

SIO_DBG_FOPS(sio_peer_seg_fops, NULL, sio_peer_seg_write, NULL);

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

SIO_DBG_FOPS(sio_peer_seg_data_fops, sio_peer_seg_data_read,
	     sio_peer_seg_data_write, default_llseek);

int sio_ntb_rid_allow(struct sio_ntb_peer *p, u16 rid, bool allow)
{
	return sio_rid_allow(p->d->ntb, rid, allow);
}

/*
 * debugfs rid: reads this machine's requester-id table (one enabled entry
 * a line, "RID proxy PP"); writes "+RID" or "-RID" (hex) add or remove
 * one through the hook, as smartio.ko does for a device it lends.
 * peer_rid: reads the peer's table, as this machine's NT function sees it.
 */
static int sio_rid_file_show(struct seq_file *m, void *unused)
{
	struct sio_ntb_peer *p = m->private;

	return sio_rid_show(p->d->ntb, false, m);
}

static int sio_rid_file_open(struct inode *inode, struct file *file)
{
	return single_open(file, sio_rid_file_show, inode->i_private);
}

static ssize_t sio_rid_file_write(struct file *file, const char __user *ubuf,
				  size_t size, loff_t *ppos)
{
	struct sio_ntb_peer *p = ((struct seq_file *)file->private_data)->private;
	char buf[8] = {};
	u16 rid;
	int rc;

	if (size < 2 || size >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, size))
		return -EFAULT;
	if ((buf[0] != '+' && buf[0] != '-') || kstrtou16(buf + 1, 16, &rid))
		return -EINVAL;
	rc = sio_ntb_rid_allow(p, rid, buf[0] == '+');
	return rc ? rc : size;
}

static const struct file_operations sio_rid_fops = {
	.owner = THIS_MODULE,
	.open = sio_rid_file_open,
	.read = seq_read,
	.write = sio_rid_file_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int sio_peer_rid_show(struct seq_file *m, void *unused)
{
	struct sio_ntb_peer *p = m->private;

	return sio_rid_show(p->d->ntb, true, m);
}
DEFINE_SHOW_ATTRIBUTE(sio_peer_rid);

static void sio_peer_debugfs(struct sio_ntb_peer *p)
{
	struct sio_ntb_dev *d = p->d;
	char name[16];

	if (!d->dbgfs)
		return;
	if (d->pcnt == 1) {
		p->dbgfs = d->dbgfs;
	} else {
		snprintf(name, sizeof(name), "port%d", p->port);
		p->dbgfs = debugfs_create_dir(name, d->dbgfs);
	}
	debugfs_create_file("peer", 0400, p->dbgfs, p, &sio_peer_fops);
	debugfs_create_file("call", 0600, p->dbgfs, p, &sio_call_fops);
	debugfs_create_file("seg", 0600, p->dbgfs, p, &sio_seg_fops);
	debugfs_create_file("seg_data", 0600, p->dbgfs, p, &sio_seg_data_fops);
	debugfs_create_file("peer_seg", 0200, p->dbgfs, p, &sio_peer_seg_fops);
	debugfs_create_file("peer_seg_data", 0600, p->dbgfs, p,
			    &sio_peer_seg_data_fops);
	debugfs_create_file("rid", 0600, p->dbgfs, p, &sio_rid_fops);
	debugfs_create_file("peer_rid", 0400, p->dbgfs, p, &sio_peer_rid_fops);
}

/* Our outbound window widx, mapped: at most SIO_OUT_MAX of it. */
static void __iomem *sio_map_out(struct ntb_dev *ntb, int widx,
				 resource_size_t need, phys_addr_t *phys,
				 resource_size_t *mapped)
{
	resource_size_t size;
	phys_addr_t base;

	if (ntb_peer_mw_get_addr(ntb, widx, &base, &size) || size < need)
		return NULL;
	*phys = base;
	*mapped = min_t(resource_size_t, size, SIO_OUT_MAX);
	return devm_ioremap_wc(&ntb->dev, base, *mapped);
}

static int sio_peer_init(struct sio_ntb_dev *d, int pidx, int own_port)
{
	struct sio_ntb_peer *p = &d->peer[pidx];
	struct ntb_dev *ntb = d->ntb;
	int per_peer = ntb_peer_mw_count(ntb) / d->pcnt;
	phys_addr_t phys;

	p->d = d;
	p->pidx = pidx;
	p->port = ntb_peer_port_number(ntb, pidx);
	if (d->pcnt > 1) {
		p->spad_in = p->port * SIO_SPADS;
		p->spad_out = own_port * SIO_SPADS;
	}
	p->req_buf = devm_kzalloc(&ntb->dev, SIO_NTB_MSG_MAX, GFP_KERNEL);
	p->rsp_buf = devm_kzalloc(&ntb->dev, SIO_NTB_MSG_MAX, GFP_KERNEL);
	if (!p->req_buf || !p->rsp_buf)
		return -ENOMEM;
	INIT_WORK(&p->link_work, sio_link_work);
	INIT_WORK(&p->req_work, sio_req_work);
	mutex_init(&p->call_lock);
	mutex_init(&p->state_lock);
	init_waitqueue_head(&p->wq);
	p->call_seq = get_random_u32();
	p->relink = true;
	/* Whatever the scratchpads hold now is a previous peer's. */
	p->stale_token = ntb_spad_read(ntb, p->spad_in + SIO_SPAD_TOKEN);

	/* Outbound windows: per_peer of them for each peer, in peer order. */
	p->out = sio_map_out(ntb, pidx * per_peer + SIO_MW_MSG,
			     sizeof(struct sio_window), &phys, &p->out_size);
	p->seg_out = sio_map_out(ntb, pidx * per_peer + SIO_MW_SEG, PAGE_SIZE,
				 &p->seg_out_phys, &p->seg_out_size);
	if (!p->out || !p->seg_out)
		return -ENOMEM;
	return 0;
}

static int sio_probe(struct ntb_client *client, struct ntb_dev *ntb)
{
	int pcnt = ntb_peer_port_count(ntb), own = ntb_port_number(ntb);
	int pidx, rc, top = own;
	struct sio_ntb_dev *d;

	if (dev && strcmp(dev, dev_name(&ntb->dev)))
		return -ENODEV;
	for (pidx = 0; pidx < pcnt; pidx++)
		top = max(top, ntb_peer_port_number(ntb, pidx));
	/* Several peers: a block of scratchpads and a doorbell bit each. */
	if (pcnt < 1 || own < 0 || top >= 64 ||
	    ntb_spad_count(ntb) < (pcnt == 1 ? 1 : top + 1) * SIO_SPADS ||
	    (pcnt == 1 && (ntb_db_valid_mask(ntb) & SIO_DB_ALL) != SIO_DB_ALL) ||
	    (pcnt > 1 && ~ntb_db_valid_mask(ntb) & GENMASK_ULL(top, 0)) ||
	    ntb_mw_count(ntb, 0) <= SIO_MW_SEG ||
	    ntb_peer_mw_count(ntb) < pcnt * (SIO_MW_SEG + 1)) {
		dev_info(&ntb->dev, "smartio needs %d scratchpads and a doorbell per port, two windows per peer\n",
			 SIO_SPADS);
		return -ENODEV;
	}
	d = devm_kzalloc(&ntb->dev, struct_size(d, peer, pcnt), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->ntb = ntb;
	d->pcnt = pcnt;
	d->db_in = pcnt == 1 ? SIO_DB_ALL : ntb_db_valid_mask(ntb);
	mutex_init(&d->heap_lock);
	for (pidx = 0; pidx < pcnt; pidx++) {
		rc = sio_peer_init(d, pidx, own);
		if (rc)
			return rc;
	}

	ntb_db_set_mask(ntb, ntb_db_valid_mask(ntb));
	rc = ntb_set_ctx(ntb, d, &sio_ctx_ops);
	if (rc)
		return rc;
	ntb_db_clear(ntb, d->db_in);
	ntb_db_clear_mask(ntb, d->db_in);

	down_write(&sio_user_sem);
	mutex_lock(&sio_lock);
	list_add_tail(&d->node, &sio_devs);
	mutex_unlock(&sio_lock);
	up_write(&sio_user_sem);

	if (sio_dbgfs)
		d->dbgfs = debugfs_create_dir(dev_name(&ntb->dev), sio_dbgfs);
	for (pidx = 0; pidx < pcnt; pidx++)
		sio_peer_debugfs(&d->peer[pidx]);
	ntb_link_enable(ntb, NTB_SPEED_AUTO, NTB_WIDTH_AUTO);
	for (pidx = 0; pidx < pcnt; pidx++)
		schedule_work(&d->peer[pidx].link_work);
	return 0;
}

static void sio_remove(struct ntb_client *client, struct ntb_dev *ntb)
{
	struct sio_ntb_dev *d = ntb->ctx;
	struct sio_ntb_peer *p;

	debugfs_remove_recursive(d->dbgfs);
	ntb_link_disable(ntb);
	ntb_db_set_mask(ntb, ntb_db_valid_mask(ntb));
	ntb_clear_ctx(ntb);
	for (p = d->peer; p < d->peer + d->pcnt; p++) {
		cancel_work_sync(&p->link_work);
		cancel_work_sync(&p->req_work);
		sio_peer_down(p);
	}
	down_write(&sio_user_sem);
	mutex_lock(&sio_lock);
	list_del(&d->node);
	mutex_unlock(&sio_lock);
	up_write(&sio_user_sem);
	for (p = d->peer; p < d->peer + d->pcnt; p++) {
		if (p->dbg_seg)
			sio_ntb_seg_free(p, p->dbg_seg, p->dbg_seg_size);
		if (p->seg_trans)
			ntb_mw_clear_trans(ntb, p->pidx, SIO_MW_SEG);
		if (p->in) {
			ntb_mw_clear_trans(ntb, p->pidx, SIO_MW_MSG);
			dma_free_attrs(&ntb->pdev->dev, p->in_size, p->in,
				       p->in_dma, SIO_INBOUND_ATTRS);
		}
	}
	bitmap_free(d->heap);
	if (d->heap_va)
		dma_free_attrs(&ntb->pdev->dev, d->heap_size, d->heap_va,
			       d->heap_dma, SIO_INBOUND_ATTRS);
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
		goto remove_debugfs;
	rc = sio_fabric_register();
	if (rc)
		goto unregister_client;
	return 0;

unregister_client:
	ntb_unregister_client(&sio_client);
remove_debugfs:
	debugfs_remove_recursive(sio_dbgfs);
	return rc;
}
module_init(sio_init);

static void __exit sio_exit(void)
{
	sio_fabric_unregister();
	ntb_unregister_client(&sio_client);
	debugfs_remove_recursive(sio_dbgfs);
}
module_exit(sio_exit);

MODULE_DESCRIPTION("smartio node-to-node transport over NTB");
MODULE_LICENSE("GPL");
