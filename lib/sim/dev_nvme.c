// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A simulated NVMe controller: a useful subset of NVMe 1.4, enough for a
 * userspace driver (SmartIO section 6) to bring it up and move blocks.
 *
 *   BAR 0   0x0000 controller registers (CAP VS CC CSTS AQA ASQ ACQ)
 *           0x1000 doorbells: SQ y tail at 0x1000 + 2y * stride, CQ y head
 *                  one stride further.  With BAR 0 of 128K or more the
 *                  stride is 2K (CAP.DSTRD 9), so each queue pair's
 *                  doorbells fill one 4K page of their own that a client
 *                  maps alone (SmartIO section 6); the MSI-X table (16
 *                  vectors) follows at 0x11000, pending bits at 0x12000.
 *                  A smaller BAR 0 (16K at least) packs them with stride 4
 *                  and has the table at 0x2000, pending bits at 0x3000.
 *   admin   Identify (CNS 0, 1, 2), Create / Delete I/O SQ and CQ
 *           (physically contiguous queues), Get / Set Features (Number of
 *           Queues, Interrupt Coalescing), Abort; Asynchronous Event
 *           Requests are accepted and never completed
 *   I/O     Flush, Write, Read on namespace 1; 512-byte blocks; PRP1,
 *           PRP2 and PRP lists; at most 128 KiB per command (MDTS 5)
 *
 * The namespace is a sparse file in the fabric directory,
 * nvme-<device>.img.  Every byte the controller moves goes through
 * sim_dma(): queues, PRP lists and data reach the driver's memory only
 * through the translation chain, and a blocked transfer completes the
 * command with Data Transfer Error (and is reported as a dma-fault).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devmodel.h"

#define NVME_QUEUES 16		/* admin queue + 15 I/O queues */
#define NVME_MQES 1023		/* largest queue: 1024 entries */
#define NVME_PAGE 4096u		/* CC.MPS 0 only */
#define NVME_LBA_SHIFT 9
#define NVME_NS_BYTES (64ull << 20)
#define NVME_MDTS 5		/* 2^5 pages per command */
#define NVME_MAX_XFER (NVME_PAGE << NVME_MDTS)
#define NVME_BATCH 64		/* commands per queue per pass (fairness) */

enum {
	REG_CAP = 0x00, REG_VS = 0x08, REG_INTMS = 0x0c, REG_INTMC = 0x10,
	REG_CC = 0x14, REG_CSTS = 0x1c, REG_AQA = 0x24, REG_ASQ = 0x28,
	REG_ACQ = 0x30, REG_DB = 0x1000,
};

#define NVME_PAGED_BAR0 0x20000u	/* from here, a page per queue pair */
#define NVME_PAGED_DSTRD 9u

#define CC_EN 0x1u
#define CSTS_RDY 0x1u
#define CSTS_CFS 0x2u
#define CSTS_SHST_DONE (2u << 2)

/* Status: SC in bits 7:0, SCT in 10:8 (generic 0, command specific 1). */
enum {
	SC_OK = 0x00, SC_BAD_OPCODE = 0x01, SC_BAD_FIELD = 0x02,
	SC_XFER_ERROR = 0x04, SC_INTERNAL = 0x06, SC_BAD_NS = 0x0b,
	SC_LBA_RANGE = 0x80,
	SC_CQ_INVALID = 0x100, SC_BAD_QID = 0x101, SC_BAD_QSIZE = 0x102,
	SC_BAD_VECTOR = 0x108, SC_BAD_DELETE = 0x10c,
	SC_NO_COMPLETION = 0xffff,	/* held (asynchronous event request) */
};

struct nvme_sq {
	int used;
	u64 base;
	u32 size, head;
	u16 cqid;
};

struct nvme_cq {
	int used;
	u64 base;
	u32 size, tail;
	u32 phase;
	int ien, irq_due;
	u16 iv;
};

struct nvme {
	int fd;
	int enabled;
	u64 nsze;		/* namespace size in blocks */
	struct nvme_sq sq[NVME_QUEUES];
	struct nvme_cq cq[NVME_QUEUES];
	u8 data[NVME_MAX_XFER];
	u8 page[NVME_PAGE];
};

static u32 le32(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static u64 le64(const u8 *p)
{
	return le32(p) | (u64)le32(p + 4) << 32;
}

static void put_le16(u8 *p, u16 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static void put_le32(u8 *p, u32 v)
{
	put_le16(p, (u16)v);
	put_le16(p + 2, (u16)(v >> 16));
}

static void put_le64(u8 *p, u64 v)
{
	put_le32(p, (u32)v);
	put_le32(p + 4, (u32)(v >> 32));
}

/* Space-padded ASCII field of an Identify structure. */
static void put_str(u8 *p, size_t len, const char *s)
{
	size_t n = strlen(s);

	memset(p, ' ', len);
	memcpy(p, s, n < len ? n : len);
}

static u8 *reg(struct sim_devmodel *m, u32 off)
{
	return m->bar[0] + off;
}

static u32 dstrd_of(u64 bar0_size)
{
	return bar0_size >= NVME_PAGED_BAR0 ? NVME_PAGED_DSTRD : 0;
}

/* Doorbell of submission (cq 0) or completion (cq 1) queue qid. */
static u8 *doorbell(struct sim_devmodel *m, u32 qid, int cq)
{
	u32 stride = 4u << dstrd_of(m->bar_size[0]);

	return reg(m, REG_DB + (2 * qid + (cq ? 1 : 0)) * stride);
}

static void nvme_msix_layout(u64 bar0_size, u32 *table, u32 *pba)
{
	u32 end = REG_DB + 2 * NVME_QUEUES * (4u << dstrd_of(bar0_size));

	/* After the doorbells, page aligned (0x2000 / 0x3000 when packed). */
	end = (end + 0xfff) & ~0xfffu;
	*table = end < 0x2000 ? 0x2000 : end;
	*pba = *table + 0x1000;
}

static void reset_doorbells(struct sim_devmodel *m)
{
	u32 q;

	for (q = 0; q < NVME_QUEUES; q++) {
		sim_wr32(doorbell(m, q, 0), 0);
		sim_wr32(doorbell(m, q, 1), 0);
	}
}

static void controller_reset(struct sim_devmodel *m)
{
	struct nvme *n = m->priv;

	memset(n->sq, 0, sizeof(n->sq));
	memset(n->cq, 0, sizeof(n->cq));
	n->enabled = 0;
	reset_doorbells(m);
}

static int nvme_init(struct sim_devmodel *m)
{
	struct sio_device *d = sio_dev(m->f->reg, m->dev);
	struct nvme *n;
	char path[320];
	struct stat st;
	u64 cap;

	if (m->bar_size[0] < 0x4000)
		return -EINVAL;	/* registers, doorbells and MSI-X need 16K */
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/nvme-%s.img", m->f->dir, d->name);
	n->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (n->fd < 0 || fstat(n->fd, &st) < 0 ||
	    ((u64)st.st_size < NVME_NS_BYTES &&
	     ftruncate(n->fd, (off_t)NVME_NS_BYTES) < 0)) {
		int err = -errno;

		if (n->fd >= 0)
			close(n->fd);
		free(n);
		return err;
	}
	n->nsze = NVME_NS_BYTES >> NVME_LBA_SHIFT;
	m->priv = n;
	cap = NVME_MQES | 1ull << 16 /* CQR */ | 20ull << 24 /* TO 10 s */ |
	      (u64)dstrd_of(m->bar_size[0]) << 32 | 1ull << 37 /* CSS: NVM */;
	sim_wr64(reg(m, REG_CAP), cap);
	sim_wr32(reg(m, REG_VS), 0x00010400);
	sim_wr32(reg(m, REG_CC), 0);
	sim_wr32(reg(m, REG_CSTS), 0);
	controller_reset(m);
	return 0;
}

static void nvme_fini(struct sim_devmodel *m)
{
	struct nvme *n = m->priv;

	if (!n)
		return;
	close(n->fd);
	free(n);
	m->priv = NULL;
}

/*
 * Moves len bytes between buf and the pages a PRP pair describes:
 * PRP1 (any offset), then PRP2 as the second page or, when more than two
 * pages are needed, as a pointer to a PRP list (whose last entry chains
 * to the next list page).
 */
static int prp_xfer(struct sim_devmodel *m, u64 prp1, u64 prp2, u8 *buf,
		    u32 len, int to_host)
{
	u32 first = NVME_PAGE - (u32)(prp1 % NVME_PAGE), done, left;
	u64 list = prp2;
	int err;

	if (first > len)
		first = len;
	err = sim_model_dma(m, prp1, buf, first, to_host);
	if (err || first == len)
		return err;
	done = first;
	if (len - done <= NVME_PAGE)
		return sim_model_dma(m, prp2, buf + done, len - done, to_host);
	left = (len - done + NVME_PAGE - 1) / NVME_PAGE;
	while (left) {
		u8 ents[NVME_PAGE];
		u32 room = (NVME_PAGE - (u32)(list % NVME_PAGE)) / 8, take, i;
		int chain = left > room;

		take = chain ? room - 1 : left;
		if ((list & 7) || (chain && room < 2))
			return -EINVAL;
		err = sim_model_dma(m, list, ents, 8 * (take + (u32)chain), 0);
		if (err)
			return err;
		for (i = 0; i < take; i++) {
			u64 page = le64(ents + 8 * i);
			u32 piece = len - done < NVME_PAGE ? len - done : NVME_PAGE;

			if (page % NVME_PAGE)
				return -EINVAL;
			err = sim_model_dma(m, page, buf + done, piece, to_host);
			if (err)
				return err;
			done += piece;
		}
		left -= take;
		if (chain)
			list = le64(ents + 8 * take);
	}
	return 0;
}

static int xfer_status(int err)
{
	return err == -EINVAL ? SC_BAD_FIELD : err ? SC_XFER_ERROR : SC_OK;
}

static void identify_controller(struct sim_devmodel *m, u8 *p)
{
	struct sio_device *d = sio_dev(m->f->reg, m->dev);
	char sn[24];

	put_le16(p + 0, d->vendor);
	put_le16(p + 2, d->subsys_vendor);
	snprintf(sn, sizeof(sn), "SIO%08x", d->fdid);
	put_str(p + 4, 20, sn);
	put_str(p + 24, 40, "smartio simulated NVMe");
	put_str(p + 64, 8, "0.1");
	p[77] = NVME_MDTS;
	put_le16(p + 78, 1);			/* CNTLID */
	put_le32(p + 80, 0x00010400);		/* VER */
	p[111] = 1;				/* I/O controller */
	p[257] = 3;				/* ACL */
	p[258] = 3;				/* AERL */
	p[512] = 0x66;				/* SQES: 64 bytes */
	p[513] = 0x44;				/* CQES: 16 bytes */
	put_le32(p + 516, 1);			/* NN */
	p[525] = 1;				/* VWC: Flush matters */
}

static int identify(struct sim_devmodel *m, const u8 *cmd)
{
	struct nvme *n = m->priv;
	u32 nsid = le32(cmd + 4), cns = le32(cmd + 40) & 0xff;
	u8 *p = n->page;

	memset(p, 0, NVME_PAGE);
	switch (cns) {
	case 0x00:	/* namespace */
		if (nsid != 1)
			return SC_BAD_NS;
		put_le64(p + 0, n->nsze);	/* NSZE */
		put_le64(p + 8, n->nsze);	/* NCAP */
		put_le64(p + 16, n->nsze);	/* NUSE */
		put_le32(p + 128, NVME_LBA_SHIFT << 16);	/* LBAF0 */
		break;
	case 0x01:
		identify_controller(m, p);
		break;
	case 0x02:	/* active namespaces above nsid */
		if (nsid < 1)
			put_le32(p, 1);
		break;
	default:
		return SC_BAD_FIELD;
	}
	return xfer_status(prp_xfer(m, le64(cmd + 24), le64(cmd + 32), p,
				    NVME_PAGE, 1));
}

static int create_cq(struct nvme *n, const u8 *cmd, u32 vectors)
{
	u32 c10 = le32(cmd + 40), c11 = le32(cmd + 44);
	u32 qid = c10 & 0xffff, size = (c10 >> 16) + 1;
	u64 base = le64(cmd + 24);
	struct nvme_cq *cq;

	if (qid == 0 || qid >= NVME_QUEUES || n->cq[qid].used)
		return SC_BAD_QID;
	if (size < 2 || size > NVME_MQES + 1)
		return SC_BAD_QSIZE;
	if (!(c11 & 1) || base % NVME_PAGE)
		return SC_BAD_FIELD;
	if ((c11 & 2) && (c11 >> 16) >= vectors)
		return SC_BAD_VECTOR;
	cq = &n->cq[qid];
	memset(cq, 0, sizeof(*cq));
	cq->used = 1;
	cq->base = base;
	cq->size = size;
	cq->phase = 1;
	cq->ien = (c11 >> 1) & 1;
	cq->iv = (u16)(c11 >> 16);
	return SC_OK;
}

static int create_sq(struct nvme *n, const u8 *cmd)
{
	u32 c10 = le32(cmd + 40), c11 = le32(cmd + 44);
	u32 qid = c10 & 0xffff, size = (c10 >> 16) + 1, cqid = c11 >> 16;
	u64 base = le64(cmd + 24);

	if (qid == 0 || qid >= NVME_QUEUES || n->sq[qid].used)
		return SC_BAD_QID;
	if (size < 2 || size > NVME_MQES + 1)
		return SC_BAD_QSIZE;
	if (!(c11 & 1) || base % NVME_PAGE)
		return SC_BAD_FIELD;
	if (cqid == 0 || cqid >= NVME_QUEUES || !n->cq[cqid].used)
		return SC_CQ_INVALID;
	memset(&n->sq[qid], 0, sizeof(n->sq[qid]));
	n->sq[qid].used = 1;
	n->sq[qid].base = base;
	n->sq[qid].size = size;
	n->sq[qid].cqid = (u16)cqid;
	return SC_OK;
}

static int delete_queue(struct sim_devmodel *m, const u8 *cmd, int is_cq)
{
	struct nvme *n = m->priv;
	u32 qid = le32(cmd + 40) & 0xffff, i;

	if (qid == 0 || qid >= NVME_QUEUES ||
	    !(is_cq ? n->cq[qid].used : n->sq[qid].used))
		return SC_BAD_QID;
	if (is_cq) {
		for (i = 1; i < NVME_QUEUES; i++)
			if (n->sq[i].used && n->sq[i].cqid == qid)
				return SC_BAD_DELETE;
		memset(&n->cq[qid], 0, sizeof(n->cq[qid]));
		sim_wr32(doorbell(m, qid, 1), 0);
	} else {
		memset(&n->sq[qid], 0, sizeof(n->sq[qid]));
		sim_wr32(doorbell(m, qid, 0), 0);
	}
	return SC_OK;
}

static int features(const u8 *cmd, u32 *result)
{
	u32 fid = le32(cmd + 40) & 0xff;

	switch (fid) {
	case 0x07:	/* Number of Queues: what we have, whatever was asked */
		*result = (NVME_QUEUES - 2) | (u32)(NVME_QUEUES - 2) << 16;
		return SC_OK;
	case 0x08:	/* Interrupt Coalescing: accepted, not applied */
		*result = 0;
		return SC_OK;
	default:
		return SC_BAD_FIELD;
	}
}

static int admin(struct sim_devmodel *m, const u8 *cmd, u32 *result)
{
	struct nvme *n = m->priv;

	switch (cmd[0]) {
	case 0x00: return delete_queue(m, cmd, 0);
	case 0x01: return create_sq(n, cmd);
	case 0x04: return delete_queue(m, cmd, 1);
	case 0x05: return create_cq(n, cmd, m->ops->msix_vectors);
	case 0x06: return identify(m, cmd);
	case 0x08: *result = 1; return SC_OK;	/* Abort: not aborted */
	case 0x09: case 0x0a: return features(cmd, result);
	case 0x0c: return SC_NO_COMPLETION;
	default: return SC_BAD_OPCODE;
	}
}

static int rw(struct sim_devmodel *m, const u8 *cmd, int write)
{
	struct nvme *n = m->priv;
	u64 slba = le64(cmd + 40);
	u32 nlb = (le32(cmd + 48) & 0xffff) + 1;
	u32 len = nlb << NVME_LBA_SHIFT;
	off_t off = (off_t)(slba << NVME_LBA_SHIFT);
	ssize_t done;
	int err;

	if (slba >= n->nsze || nlb > n->nsze - slba)
		return SC_LBA_RANGE;
	if (len > NVME_MAX_XFER)
		return SC_BAD_FIELD;
	if (write) {
		err = prp_xfer(m, le64(cmd + 24), le64(cmd + 32), n->data, len,
			       0);
		if (err)
			return xfer_status(err);
		done = pwrite(n->fd, n->data, len, off);
		return done == (ssize_t)len ? SC_OK : SC_INTERNAL;
	}
	done = pread(n->fd, n->data, len, off);
	if (done != (ssize_t)len)
		return SC_INTERNAL;
	return xfer_status(prp_xfer(m, le64(cmd + 24), le64(cmd + 32),
				    n->data, len, 1));
}

static int io(struct sim_devmodel *m, const u8 *cmd)
{
	struct nvme *n = m->priv;

	if (le32(cmd + 4) != 1)
		return SC_BAD_NS;
	switch (cmd[0]) {
	case 0x00: return fdatasync(n->fd) ? SC_INTERNAL : SC_OK;
	case 0x01: return rw(m, cmd, 1);
	case 0x02: return rw(m, cmd, 0);
	default: return SC_BAD_OPCODE;
	}
}

static void fatal(struct sim_devmodel *m)
{
	sim_wr32(reg(m, REG_CSTS), sim_rd32(reg(m, REG_CSTS)) | CSTS_CFS);
}

/* Posts a completion; the phase tag goes last, as the driver polls it. */
static int complete(struct sim_devmodel *m, u32 sqid, u16 cid, int status,
		    u32 result)
{
	struct nvme *n = m->priv;
	struct nvme_sq *sq = &n->sq[sqid];
	struct nvme_cq *cq = &n->cq[sq->cqid];
	u8 e[16];
	u64 at = cq->base + 16ull * cq->tail;

	put_le32(e, result);
	put_le32(e + 4, 0);
	put_le32(e + 8, sq->head | sqid << 16);
	put_le32(e + 12, cid | (cq->phase | (u32)status << 1) << 16);
	if (sim_model_dma(m, at, e, 12, 1) ||
	    sim_model_dma(m, at + 12, e + 12, 4, 1)) {
		fatal(m);
		return -EFAULT;
	}
	if (++cq->tail == cq->size) {
		cq->tail = 0;
		cq->phase ^= 1;
	}
	if (cq->ien)
		cq->irq_due = 1;
	return 0;
}

static int cq_full(struct sim_devmodel *m, u32 cqid)
{
	struct nvme_cq *cq = &((struct nvme *)m->priv)->cq[cqid];
	u32 head = sim_rd32(doorbell(m, cqid, 1));

	return (cq->tail + 1) % cq->size == head % cq->size;
}

static int run_sq(struct sim_devmodel *m, u32 qid)
{
	struct nvme *n = m->priv;
	struct nvme_sq *sq = &n->sq[qid];
	int done = 0;

	while (done < NVME_BATCH && n->enabled && sq->used) {
		u32 tail = sim_rd32(doorbell(m, qid, 0));
		u32 result = 0;
		u8 cmd[64];
		int status;

		if (tail >= sq->size || tail == sq->head || cq_full(m, sq->cqid))
			break;
		if (sim_model_dma(m, sq->base + 64ull * sq->head, cmd, 64, 0)) {
			fatal(m);	/* cannot even fetch: controller fatal */
			n->enabled = 0;
			break;
		}
		sq->head = (sq->head + 1) % sq->size;
		status = qid ? io(m, cmd) : admin(m, cmd, &result);
		if (status != SC_NO_COMPLETION &&
		    complete(m, qid, (u16)(cmd[2] | cmd[3] << 8), status,
			     result)) {
			n->enabled = 0;
			break;
		}
		done++;
	}
	return done;
}

static int enable(struct sim_devmodel *m, u32 cc)
{
	struct nvme *n = m->priv;
	u32 aqa = sim_rd32(reg(m, REG_AQA));
	u64 asq = sim_rd64(reg(m, REG_ASQ)), acq = sim_rd64(reg(m, REG_ACQ));
	u32 sqs = (aqa & 0xfff) + 1, cqs = ((aqa >> 16) & 0xfff) + 1;

	/* 4K pages, 64-byte SQ and 16-byte CQ entries, NVM command set. */
	if (((cc >> 7) & 0xf) != 0 || ((cc >> 16) & 0xf) != 6 ||
	    ((cc >> 20) & 0xf) != 4 || ((cc >> 4) & 7) != 0 || sqs < 2 ||
	    cqs < 2 || asq % NVME_PAGE || acq % NVME_PAGE) {
		fatal(m);
		return 1;
	}
	controller_reset(m);
	n->sq[0] = (struct nvme_sq){ .used = 1, .base = asq, .size = sqs };
	n->cq[0] = (struct nvme_cq){ .used = 1, .base = acq, .size = cqs,
				     .phase = 1, .ien = 1 };
	n->enabled = 1;
	sim_wr32(reg(m, REG_CSTS), CSTS_RDY);
	return 1;
}

static int nvme_poll(struct sim_devmodel *m)
{
	struct nvme *n = m->priv;
	u32 cc = sim_rd32(reg(m, REG_CC)), csts = sim_rd32(reg(m, REG_CSTS));
	int work = 0;
	u32 q;

	if (!(cc & CC_EN)) {
		if (csts & (CSTS_RDY | CSTS_CFS)) {
			controller_reset(m);
			sim_wr32(reg(m, REG_CSTS), 0);
			return 1;
		}
		return 0;
	}
	if (csts & CSTS_CFS)
		return 0;	/* halted until the driver resets us */
	if (!(csts & CSTS_RDY))
		return enable(m, cc);
	if (((cc >> 14) & 3) && !(csts & CSTS_SHST_DONE)) {
		fdatasync(n->fd);	/* shutdown notification */
		sim_wr32(reg(m, REG_CSTS), csts | CSTS_SHST_DONE);
		work++;
	}
	for (q = 0; q < NVME_QUEUES; q++)
		if (n->sq[q].used)
			work += run_sq(m, q);
	for (q = 0; q < NVME_QUEUES; q++) {
		if (!n->cq[q].irq_due)
			continue;
		n->cq[q].irq_due = 0;
		sim_model_irq(m, n->cq[q].iv);
	}
	return work;
}

const struct sim_model_ops sim_nvme_ops = {
	.name = "nvme",
	.msix_vectors = 16,
	.msix_layout = nvme_msix_layout,
	.init = nvme_init,
	.poll = nvme_poll,
	.fini = nvme_fini,
};
