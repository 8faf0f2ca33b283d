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
 *                  vectors) and its pending bits take the two pages after
 *                  the last queue's.  As many queue pairs as fit, up to 32
 *                  (the built-in topology's 256K: 32, at 0x21000; 128K: 29).
 *                  A smaller BAR 0 (16K at least) packs 32 with stride 4
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
 * sim_dma_start(): queues, PRP lists and data reach the driver's memory
 * only through the translation chain, and a blocked transfer completes the
 * command with Data Transfer Error (and is reported as a dma-fault).
 * Paced, a command waits for its entry, then for its data, each as long as
 * the path takes, while the controller goes on with the others: up to
 * NVME_INFLIGHT commands are in flight at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devmodel.h"

#define NVME_QUEUES 32		/* most: admin queue + 31 I/O queues */
#define NVME_MQES 1023		/* largest queue: 1024 entries */
#define NVME_PAGE 4096u		/* CC.MPS 0 only */
#define NVME_LBA_SHIFT 9
#define NVME_NS_BYTES (64ull << 20)
#define NVME_MDTS 5		/* 2^5 pages per command */
#define NVME_MAX_XFER (NVME_PAGE << NVME_MDTS)
#define NVME_BATCH 64		/* commands per queue per pass (fairness) */
/*
 * Commands between their fetch and their completion.  Paced, a command
 * waits for its entry to arrive, then for its data; the controller goes on
 * with other commands meanwhile, as hardware does, instead of waiting out
 * each transfer in turn (which let one controller serve remote queues at
 * a fraction of its rate, issue 18).  A real controller bounds this too.
 */
#define NVME_INFLIGHT 1024

enum {
	REG_CAP = 0x00, REG_VS = 0x08, REG_INTMS = 0x0c, REG_INTMC = 0x10,
	REG_CC = 0x14, REG_CSTS = 0x1c, REG_AQA = 0x24, REG_ASQ = 0x28,
	REG_ACQ = 0x30, REG_DB = 0x1000,
};

#define NVME_PAGED_BAR0 0x20000u	/* from here, a page per queue pair */
#define NVME_PAGED_DSTRD 9u

/* Controller register fields (NVMe 1.4 section 3.1). */
#define CAP_MQES(n) ((u64)(n))
#define CAP_CQR (1ull << 16)
#define CAP_TO(halfsec) ((u64)(halfsec) << 24)
#define CAP_DSTRD(n) ((u64)(n) << 32)
#define CAP_CSS_NVM (1ull << 37)
#define NVME_VS_1_4 0x00010400u
#define CC_EN 0x1u
#define CC_CSS(cc) (((cc) >> 4) & 0x7)
#define CC_MPS(cc) (((cc) >> 7) & 0xf)
#define CC_SHN(cc) (((cc) >> 14) & 0x3)
#define CC_IOSQES(cc) (((cc) >> 16) & 0xf)
#define CC_IOCQES(cc) (((cc) >> 20) & 0xf)
#define CSTS_RDY 0x1u
#define CSTS_CFS 0x2u
#define CSTS_SHST_DONE (2u << 2)
#define AQA_ASQS(aqa) ((aqa) & 0xfff)		/* zero's based */
#define AQA_ACQS(aqa) (((aqa) >> 16) & 0xfff)

/* Queue entry sizes as powers of two: 64-byte SQ, 16-byte CQ entries. */
#define NVME_SQES 6
#define NVME_CQES 4

/* Opcodes (NVMe 1.4 figures 139 and 346). */
enum nvme_admin_opcode {
	NVME_ADM_DELETE_SQ = 0x00,
	NVME_ADM_CREATE_SQ = 0x01,
	NVME_ADM_DELETE_CQ = 0x04,
	NVME_ADM_CREATE_CQ = 0x05,
	NVME_ADM_IDENTIFY = 0x06,
	NVME_ADM_ABORT = 0x08,
	NVME_ADM_SET_FEATURES = 0x09,
	NVME_ADM_GET_FEATURES = 0x0a,
	NVME_ADM_ASYNC_EVENT = 0x0c,
};

enum nvme_io_opcode {
	NVME_CMD_FLUSH = 0x00,
	NVME_CMD_WRITE = 0x01,
	NVME_CMD_READ = 0x02,
};

/* Identify's Controller or Namespace Structure (CNS, CDW10 bits 7:0). */
enum nvme_cns {
	NVME_CNS_NS = 0x00,
	NVME_CNS_CTRL = 0x01,
	NVME_CNS_NS_LIST = 0x02,
};

/* Feature identifiers (FID, CDW10 bits 7:0 of Get / Set Features). */
enum nvme_fid {
	NVME_FEAT_NUM_QUEUES = 0x07,
	NVME_FEAT_IRQ_COALESCE = 0x08,
};

/*
 * A submission queue entry (NVMe 1.4 figure 105), decoded once from the
 * 64 little-endian bytes the controller fetched; the command-specific
 * dwords keep their spec names and the field macros below take them apart.
 */
struct nvme_cmd {
	u8 opcode;
	u16 cid;
	u32 nsid;
	u64 prp1, prp2;
	u32 cdw10, cdw11, cdw12;
};

#define SQE_OPCODE 0
#define SQE_CID 2
#define SQE_NSID 4
#define SQE_PRP1 24
#define SQE_PRP2 32
#define SQE_CDW10 40
#define SQE_CDW11 44
#define SQE_CDW12 48

/* Create I/O Completion / Submission Queue (figures 149-153). */
#define CREATE_QID(cdw10) ((cdw10) & 0xffff)
#define CREATE_QSIZE(cdw10) (((cdw10) >> 16) + 1)	/* zero's based */
#define CREATE_PC(cdw11) ((cdw11) & 0x1)		/* contiguous */
#define CREATE_CQ_IEN(cdw11) (((cdw11) >> 1) & 0x1)
#define CREATE_CQ_IV(cdw11) ((cdw11) >> 16)
#define CREATE_SQ_CQID(cdw11) ((cdw11) >> 16)
/* Delete I/O Completion / Submission Queue (figures 155, 157). */
#define DELETE_QID(cdw10) ((cdw10) & 0xffff)
/* Identify (figure 241), Get / Set Features (figures 267, 284). */
#define IDENTIFY_CNS(cdw10) ((cdw10) & 0xff)
#define FEATURES_FID(cdw10) ((cdw10) & 0xff)
/* Read / Write (figures 368, 383): SLBA in CDW10-11, NLB in CDW12. */
#define RW_SLBA(c) ((c)->cdw10 | (u64)(c)->cdw11 << 32)
#define RW_NLB(cdw12) (((cdw12) & 0xffff) + 1)		/* zero's based */

/* A completion queue entry (figure 121): DW2 SQ head and id, DW3 the
 * command id and the status field, whose bit 0 is the phase tag. */
#define CQE_RESULT 0
#define CQE_DW1 4
#define CQE_DW2 8
#define CQE_DW3 12

/* Identify Controller (figure 247) and Namespace (figure 245) fields. */
enum {
	ID_CTRL_VID = 0, ID_CTRL_SSVID = 2, ID_CTRL_SN = 4, ID_CTRL_MN = 24,
	ID_CTRL_FR = 64, ID_CTRL_MDTS = 77, ID_CTRL_CNTLID = 78,
	ID_CTRL_VER = 80, ID_CTRL_CNTRLTYPE = 111, ID_CTRL_ACL = 257,
	ID_CTRL_AERL = 258, ID_CTRL_SQES = 512, ID_CTRL_CQES = 513,
	ID_CTRL_NN = 516, ID_CTRL_VWC = 525,
	ID_NS_NSZE = 0, ID_NS_NCAP = 8, ID_NS_NUSE = 16, ID_NS_LBAF0 = 128,
};
#define CNTRLTYPE_IO 1
#define LBAF_LBADS(shift) ((u32)(shift) << 16)

/* Status: SC in bits 7:0, SCT in 10:8 (generic 0, command specific 1). */
enum {
	SC_OK = 0x00, SC_BAD_OPCODE = 0x01, SC_BAD_FIELD = 0x02,
	SC_XFER_ERROR = 0x04, SC_INTERNAL = 0x06, SC_BAD_NS = 0x0b,
	SC_ABORT_SQ_DELETED = 0x08, SC_LBA_RANGE = 0x80,
	SC_CQ_INVALID = 0x100, SC_BAD_QID = 0x101, SC_BAD_QSIZE = 0x102,
	SC_BAD_VECTOR = 0x108, SC_BAD_DELETE = 0x10c,
	SC_NO_COMPLETION = 0xffff,	/* held (asynchronous event request) */
};

/* Where a command is: its entry on the way, or its transfers. */
enum nvme_stage { STAGE_FREE, STAGE_FETCHING, STAGE_RUNNING };

struct nvme_slot {
	enum nvme_stage stage;
	u16 sqid;
	u64 due;		/* paced: the stage ends then (ns), 0 at once */
	struct nvme_cmd cmd;
	int status;		/* STAGE_RUNNING: what completes it */
	u32 result;
};

struct nvme_sq {
	int used;
	u64 base;
	u32 size, head;
	u16 cqid;
	u32 bad_db;	/* the bad tail doorbell last counted, 0 = none */
};

struct nvme_cq {
	int used;
	u64 base;
	u32 size, tail;
	u32 phase;
	int ien, irq_due;
	u16 iv;
	u32 held;	/* entries kept for commands in flight */
	u32 bad_db;	/* the bad head doorbell last counted, 0 = none */
};

struct nvme {
	int fd;
	int enabled;
	u32 nq;			/* queue pairs BAR 0 has doorbells for */
	u64 nsze;		/* namespace size in blocks */
	struct nvme_sq sq[NVME_QUEUES];
	struct nvme_cq cq[NVME_QUEUES];
	/* A ring in fetch order: [slot_head, slot_tail), some freed early. */
	struct nvme_slot slot[NVME_INFLIGHT];
	u32 slot_head, slot_tail;
	u32 first_sq;		/* fetched from first next pass: fairness */
	u8 data[NVME_MAX_XFER];
	u8 page[NVME_PAGE];
};

/* Space-padded ASCII field of an Identify structure. */
static void put_str(u8 *p, size_t len, const char *s)
{
	size_t n = strlen(s);

	memset(p, ' ', len);
	memcpy(p, s, n < len ? n : len);
}

static void nvme_cmd_decode(const u8 *sqe, struct nvme_cmd *c)
{
	c->opcode = sqe[SQE_OPCODE];
	c->cid = sio_get_le16(sqe + SQE_CID);
	c->nsid = sio_get_le32(sqe + SQE_NSID);
	c->prp1 = sio_get_le64(sqe + SQE_PRP1);
	c->prp2 = sio_get_le64(sqe + SQE_PRP2);
	c->cdw10 = sio_get_le32(sqe + SQE_CDW10);
	c->cdw11 = sio_get_le32(sqe + SQE_CDW11);
	c->cdw12 = sio_get_le32(sqe + SQE_CDW12);
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

/*
 * Queue pairs (admin included) whose doorbells fit in BAR 0 with the two
 * MSI-X pages after them; 0 if not even the admin queue's do.
 */
static u32 queues_of(u64 bar0_size)
{
	u64 per_pair = 2ull * (4u << dstrd_of(bar0_size)), room;

	if (bar0_size < REG_DB + 0x3000)
		return 0;
	room = bar0_size - REG_DB - 0x2000;
	if (!dstrd_of(bar0_size))	/* packed: the table stays at 0x2000 */
		room = 0x1000;
	return room / per_pair < NVME_QUEUES ? (u32)(room / per_pair)
					     : NVME_QUEUES;
}

static void nvme_msix_layout(u64 bar0_size, u32 *table, u32 *pba)
{
	u32 end = REG_DB + 2 * queues_of(bar0_size) *
		  (4u << dstrd_of(bar0_size));

	/* After the doorbells, page aligned (0x2000 / 0x3000 when packed). */
	end = (end + 0xfff) & ~0xfffu;
	*table = end < 0x2000 ? 0x2000 : end;
	*pba = *table + 0x1000;
}

static void reset_doorbells(struct sim_devmodel *m)
{
	const struct nvme *n = m->priv;
	u32 q;

	for (q = 0; q < n->nq; q++) {
		sim_wr32(doorbell(m, q, 0), 0);
		sim_wr32(doorbell(m, q, 1), 0);
	}
}

static void controller_reset(struct sim_devmodel *m)
{
	struct nvme *n = m->priv;

	memset(n->sq, 0, sizeof(n->sq));
	memset(n->cq, 0, sizeof(n->cq));
	memset(n->slot, 0, sizeof(n->slot));	/* in flight: dropped */
	n->slot_head = 0;
	n->slot_tail = 0;
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
	n->fd = sim_file_open(m->f, path, O_RDWR | O_CREAT);
	if (n->fd < 0)
		errno = -n->fd;
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
	n->nq = queues_of(m->bar_size[0]);
	m->priv = n;
	cap = CAP_MQES(NVME_MQES) | CAP_CQR | CAP_TO(20) /* 10 s */ |
	      CAP_DSTRD(dstrd_of(m->bar_size[0])) | CAP_CSS_NVM;
	sim_wr64(reg(m, REG_CAP), cap);
	sim_wr32(reg(m, REG_VS), NVME_VS_1_4);
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
 * One transfer of a command: the bytes move now, *due becomes the latest
 * of its transfers' completion times (0 while all are unpaced).  A PRP
 * list's transfers are started with it rather than after it arrives: a
 * command longer than two pages completes up to one list read early.
 */
static int xfer(struct sim_devmodel *m, u64 addr, void *buf, size_t len,
		int to_host, u64 *due)
{
	u64 t = 0;
	int err = sim_model_dma_start(m, addr, buf, len, to_host, &t);

	if (t > *due)
		*due = t;
	return err;
}

/*
 * Moves len bytes between buf and the pages a PRP pair describes:
 * PRP1 (any offset), then PRP2 as the second page or, when more than two
 * pages are needed, as a pointer to a PRP list (whose last entry chains
 * to the next list page).
 */
static int prp_xfer(struct sim_devmodel *m, u64 prp1, u64 prp2, u8 *buf,
		    u32 len, int to_host, u64 *due)
{
	u32 first = NVME_PAGE - (u32)(prp1 % NVME_PAGE), done, left;
	u64 list = prp2;
	int err;

	if (first > len)
		first = len;
	err = xfer(m, prp1, buf, first, to_host, due);
	if (err || first == len)
		return err;
	done = first;
	if (len - done <= NVME_PAGE)
		return xfer(m, prp2, buf + done, len - done, to_host, due);
	left = (len - done + NVME_PAGE - 1) / NVME_PAGE;
	while (left) {
		u8 ents[NVME_PAGE];
		u32 room = (NVME_PAGE - (u32)(list % NVME_PAGE)) / 8, take, i;
		int chain = left > room;

		take = chain ? room - 1 : left;
		if (list & 7) {
			sim_model_driver_error(m, SIM_DRV_MISALIGNED,
					       "PRP list at %#llx is not 8-byte aligned",
					       (unsigned long long)list);
			return -EINVAL;
		}
		if (chain && room < 2)
			return -EINVAL;
		err = xfer(m, list, ents, 8 * (take + (u32)chain), 0, due);
		if (err)
			return err;
		for (i = 0; i < take; i++) {
			u64 page = sio_get_le64(ents + 8 * i);
			u32 piece = len - done < NVME_PAGE ? len - done : NVME_PAGE;

			if (page % NVME_PAGE) {
				sim_model_driver_error(m, SIM_DRV_MISALIGNED,
						       "PRP entry %#llx is not page aligned",
						       (unsigned long long)page);
				return -EINVAL;
			}
			err = xfer(m, page, buf + done, piece, to_host, due);
			if (err)
				return err;
			done += piece;
		}
		left -= take;
		if (chain)
			list = sio_get_le64(ents + 8 * take);
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

	sio_put_le16(p + ID_CTRL_VID, d->vendor);
	sio_put_le16(p + ID_CTRL_SSVID, d->subsys_vendor);
	snprintf(sn, sizeof(sn), "SIO%08x", d->fdid);
	put_str(p + ID_CTRL_SN, 20, sn);
	put_str(p + ID_CTRL_MN, 40, "smartio simulated NVMe");
	put_str(p + ID_CTRL_FR, 8, "0.1");
	p[ID_CTRL_MDTS] = NVME_MDTS;
	sio_put_le16(p + ID_CTRL_CNTLID, 1);
	sio_put_le32(p + ID_CTRL_VER, NVME_VS_1_4);
	p[ID_CTRL_CNTRLTYPE] = CNTRLTYPE_IO;
	p[ID_CTRL_ACL] = 3;
	p[ID_CTRL_AERL] = 3;
	/* required and maximum entry sizes, both the one we take */
	p[ID_CTRL_SQES] = NVME_SQES << 4 | NVME_SQES;
	p[ID_CTRL_CQES] = NVME_CQES << 4 | NVME_CQES;
	sio_put_le32(p + ID_CTRL_NN, 1);
	p[ID_CTRL_VWC] = 1;			/* Flush matters */
}

static int identify(struct sim_devmodel *m, const struct nvme_cmd *cmd,
		    u64 *due)
{
	struct nvme *n = m->priv;
	u8 *p = n->page;

	memset(p, 0, NVME_PAGE);
	switch (IDENTIFY_CNS(cmd->cdw10)) {
	case NVME_CNS_NS:
		if (cmd->nsid != 1)
			return SC_BAD_NS;
		sio_put_le64(p + ID_NS_NSZE, n->nsze);
		sio_put_le64(p + ID_NS_NCAP, n->nsze);
		sio_put_le64(p + ID_NS_NUSE, n->nsze);
		sio_put_le32(p + ID_NS_LBAF0, LBAF_LBADS(NVME_LBA_SHIFT));
		break;
	case NVME_CNS_CTRL:
		identify_controller(m, p);
		break;
	case NVME_CNS_NS_LIST:	/* active namespaces above nsid */
		if (cmd->nsid < 1)
			sio_put_le32(p, 1);
		break;
	default:
		return SC_BAD_FIELD;
	}
	return xfer_status(prp_xfer(m, cmd->prp1, cmd->prp2, p, NVME_PAGE, 1,
				    due));
}

static int create_cq(struct nvme *n, const struct nvme_cmd *cmd, u32 vectors)
{
	u32 qid = CREATE_QID(cmd->cdw10), size = CREATE_QSIZE(cmd->cdw10);
	u32 c11 = cmd->cdw11;
	u64 base = cmd->prp1;
	struct nvme_cq *cq;

	if (qid == 0 || qid >= n->nq || n->cq[qid].used)
		return SC_BAD_QID;
	if (size < 2 || size > NVME_MQES + 1)
		return SC_BAD_QSIZE;
	if (!CREATE_PC(c11) || base % NVME_PAGE)
		return SC_BAD_FIELD;
	if (CREATE_CQ_IEN(c11) && CREATE_CQ_IV(c11) >= vectors)
		return SC_BAD_VECTOR;
	cq = &n->cq[qid];
	memset(cq, 0, sizeof(*cq));
	cq->used = 1;
	cq->base = base;
	cq->size = size;
	cq->phase = 1;
	cq->ien = CREATE_CQ_IEN(c11);
	cq->iv = (u16)CREATE_CQ_IV(c11);
	return SC_OK;
}

static int create_sq(struct nvme *n, const struct nvme_cmd *cmd)
{
	u32 qid = CREATE_QID(cmd->cdw10), size = CREATE_QSIZE(cmd->cdw10);
	u32 cqid = CREATE_SQ_CQID(cmd->cdw11);
	u64 base = cmd->prp1;

	if (qid == 0 || qid >= n->nq || n->sq[qid].used)
		return SC_BAD_QID;
	if (size < 2 || size > NVME_MQES + 1)
		return SC_BAD_QSIZE;
	if (!CREATE_PC(cmd->cdw11) || base % NVME_PAGE)
		return SC_BAD_FIELD;
	if (cqid == 0 || cqid >= n->nq || !n->cq[cqid].used)
		return SC_CQ_INVALID;
	memset(&n->sq[qid], 0, sizeof(n->sq[qid]));
	n->sq[qid].used = 1;
	n->sq[qid].base = base;
	n->sq[qid].size = size;
	n->sq[qid].cqid = (u16)cqid;
	return SC_OK;
}

static void abort_sq(struct sim_devmodel *m, u32 qid);

static int delete_queue(struct sim_devmodel *m, const struct nvme_cmd *cmd,
			int is_cq)
{
	struct nvme *n = m->priv;
	u32 qid = DELETE_QID(cmd->cdw10), i;

	if (qid == 0 || qid >= n->nq ||
	    !(is_cq ? n->cq[qid].used : n->sq[qid].used))
		return SC_BAD_QID;
	if (is_cq) {
		for (i = 1; i < n->nq; i++)
			if (n->sq[i].used && n->sq[i].cqid == qid)
				return SC_BAD_DELETE;
		memset(&n->cq[qid], 0, sizeof(n->cq[qid]));
		sim_wr32(doorbell(m, qid, 1), 0);
	} else {
		abort_sq(m, qid);
		memset(&n->sq[qid], 0, sizeof(n->sq[qid]));
		sim_wr32(doorbell(m, qid, 0), 0);
	}
	return SC_OK;
}

static int features(const struct nvme *n, const struct nvme_cmd *cmd,
		    u32 *result)
{
	switch (FEATURES_FID(cmd->cdw10)) {
	case NVME_FEAT_NUM_QUEUES:	/* what we have, whatever was asked */
		*result = (n->nq - 2) | (u32)(n->nq - 2) << 16;
		return SC_OK;
	case NVME_FEAT_IRQ_COALESCE:	/* accepted, not applied */
		*result = 0;
		return SC_OK;
	default:
		return SC_BAD_FIELD;
	}
}

static int admin(struct sim_devmodel *m, const struct nvme_cmd *cmd,
		 u32 *result, u64 *due)
{
	struct nvme *n = m->priv;

	switch (cmd->opcode) {
	case NVME_ADM_DELETE_SQ: return delete_queue(m, cmd, 0);
	case NVME_ADM_CREATE_SQ: return create_sq(n, cmd);
	case NVME_ADM_DELETE_CQ: return delete_queue(m, cmd, 1);
	case NVME_ADM_CREATE_CQ: return create_cq(n, cmd, m->ops->msix_vectors);
	case NVME_ADM_IDENTIFY: return identify(m, cmd, due);
	case NVME_ADM_ABORT: *result = 1; return SC_OK;	/* not aborted */
	case NVME_ADM_SET_FEATURES:
	case NVME_ADM_GET_FEATURES: return features(n, cmd, result);
	case NVME_ADM_ASYNC_EVENT: return SC_NO_COMPLETION;
	default: return SC_BAD_OPCODE;
	}
}

static int rw(struct sim_devmodel *m, const struct nvme_cmd *cmd, int write,
	      u64 *due)
{
	struct nvme *n = m->priv;
	u64 slba = RW_SLBA(cmd);
	u32 nlb = RW_NLB(cmd->cdw12);
	u32 len = nlb << NVME_LBA_SHIFT;
	off_t off = (off_t)(slba << NVME_LBA_SHIFT);
	ssize_t done;
	int err;

	if (slba >= n->nsze || nlb > n->nsze - slba)
		return SC_LBA_RANGE;
	if (len > NVME_MAX_XFER)
		return SC_BAD_FIELD;
	if (write) {
		err = prp_xfer(m, cmd->prp1, cmd->prp2, n->data, len, 0, due);
		if (err)
			return xfer_status(err);
		done = pwrite(n->fd, n->data, len, off);
		return done == (ssize_t)len ? SC_OK : SC_INTERNAL;
	}
	done = pread(n->fd, n->data, len, off);
	if (done != (ssize_t)len)
		return SC_INTERNAL;
	return xfer_status(prp_xfer(m, cmd->prp1, cmd->prp2, n->data, len, 1,
				    due));
}

static int io(struct sim_devmodel *m, const struct nvme_cmd *cmd, u64 *due)
{
	struct nvme *n = m->priv;

	if (cmd->nsid != 1)
		return SC_BAD_NS;
	switch (cmd->opcode) {
	case NVME_CMD_FLUSH: return fdatasync(n->fd) ? SC_INTERNAL : SC_OK;
	case NVME_CMD_WRITE: return rw(m, cmd, 1, due);
	case NVME_CMD_READ: return rw(m, cmd, 0, due);
	default: return SC_BAD_OPCODE;
	}
}

static void fatal(struct sim_devmodel *m)
{
	sim_wr32(reg(m, REG_CSTS), sim_rd32(reg(m, REG_CSTS)) | CSTS_CFS);
}

/*
 * Posts a command's completion; the phase tag goes last, as the driver
 * polls it.  The entry is a posted write: nothing waits for it, and the
 * interrupt raised after it follows it on the link.
 */
static int complete(struct sim_devmodel *m, const struct nvme_slot *s)
{
	struct nvme *n = m->priv;
	struct nvme_sq *sq = &n->sq[s->sqid];
	struct nvme_cq *cq = &n->cq[sq->cqid];
	u8 e[1u << NVME_CQES];
	u64 at = cq->base + ((u64)cq->tail << NVME_CQES), due = 0;

	cq->held--;
	sio_put_le32(e + CQE_RESULT, s->result);
	sio_put_le32(e + CQE_DW1, 0);
	sio_put_le32(e + CQE_DW2, sq->head | (u32)s->sqid << 16);
	sio_put_le32(e + CQE_DW3,
		     s->cmd.cid | (cq->phase | (u32)s->status << 1) << 16);
	if (xfer(m, at, e, CQE_DW3, 1, &due) ||
	    xfer(m, at + CQE_DW3, e + CQE_DW3, 4, 1, &due)) {
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

/* No room in the CQ for one more completion beyond those in flight. */
static int cq_full(struct sim_devmodel *m, u32 cqid)
{
	struct nvme_cq *cq = &((struct nvme *)m->priv)->cq[cqid];
	u32 head = sim_rd32(doorbell(m, cqid, 1)) % cq->size;
	u32 used = (cq->tail + cq->size - head) % cq->size;

	return used + cq->held + 1 >= cq->size;
}

/* Slots are taken in fetch order, so that commands run in that order. */
static struct nvme_slot *slot_take(struct nvme *n)
{
	if (n->slot_tail - n->slot_head == NVME_INFLIGHT)
		return NULL;
	return &n->slot[n->slot_tail++ % NVME_INFLIGHT];
}

static void slot_free(struct nvme *n, struct nvme_slot *s)
{
	s->stage = STAGE_FREE;
	while (n->slot_head != n->slot_tail &&
	       n->slot[n->slot_head % NVME_INFLIGHT].stage == STAGE_FREE)
		n->slot_head++;
}

/* Fetches what the driver queued on SQ qid: >0 if anything. */
static int fetch_sq(struct sim_devmodel *m, u32 qid)
{
	struct nvme *n = m->priv;
	struct nvme_sq *sq = &n->sq[qid];
	int done = 0;

	while (done < NVME_BATCH && n->enabled && sq->used) {
		u32 tail = sim_rd32(doorbell(m, qid, 0));
		u8 sqe[1u << NVME_SQES];
		struct nvme_slot *s;
		u64 due = 0;

		if (tail >= sq->size || tail == sq->head ||
		    cq_full(m, sq->cqid) || !(s = slot_take(n)))
			break;
		if (xfer(m, sq->base + sizeof(sqe) * sq->head, sqe,
			 sizeof(sqe), 0, &due)) {
			slot_free(n, s);
			fatal(m);	/* cannot even fetch: controller fatal */
			n->enabled = 0;
			break;
		}
		sq->head = (sq->head + 1) % sq->size;
		nvme_cmd_decode(sqe, &s->cmd);
		s->sqid = (u16)qid;
		s->stage = STAGE_FETCHING;
		s->due = due;
		n->cq[sq->cqid].held++;
		done++;
	}
	return done;
}

/*
 * Ends a command: posts its completion (an asynchronous event request is
 * held instead, and gives its CQ entry back) and frees its slot.
 */
static void retire(struct sim_devmodel *m, struct nvme_slot *s)
{
	struct nvme *n = m->priv;

	if (s->status == SC_NO_COMPLETION)
		n->cq[n->sq[s->sqid].cqid].held--;
	else if (complete(m, s))
		n->enabled = 0;
	slot_free(n, s);
}

/*
 * Completes the commands of SQ qid still in flight as aborted by its
 * deletion (NVMe 1.4 section 5.6), before the deletion completes.
 */
static void abort_sq(struct sim_devmodel *m, u32 qid)
{
	struct nvme *n = m->priv;
	u32 i;

	for (i = n->slot_head; i != n->slot_tail && n->enabled; i++) {
		struct nvme_slot *s = &n->slot[i % NVME_INFLIGHT];

		if (s->stage == STAGE_FREE || s->sqid != qid)
			continue;
		s->status = SC_ABORT_SQ_DELETED;
		s->result = 0;
		retire(m, s);
	}
}

/*
 * Takes each command in flight as far as time allows: runs those whose
 * entry has arrived, completes those whose transfers have.  >0 if any;
 * m->wake_ns becomes the next time something is due.
 */
static int advance(struct sim_devmodel *m)
{
	struct nvme *n = m->priv;
	u64 now = n->slot_head != n->slot_tail ? sim_now_ns() : 0;
	int work = 0;
	u32 i;

	for (i = n->slot_head; i != n->slot_tail && n->enabled; i++) {
		struct nvme_slot *s = &n->slot[i % NVME_INFLIGHT];

		if (s->stage == STAGE_FREE)
			continue;
		if (s->due > now) {
			sim_model_wake_at(m, s->due);
			continue;
		}
		work++;
		if (s->stage == STAGE_FETCHING) {
			s->due = 0;
			s->result = 0;
			s->stage = STAGE_RUNNING;
			s->status = s->sqid ? io(m, &s->cmd, &s->due) :
					      admin(m, &s->cmd, &s->result,
						    &s->due);
			if (s->due > now) {
				sim_model_wake_at(m, s->due);
				continue;
			}
		}
		retire(m, s);
	}
	return work;
}

static int enable(struct sim_devmodel *m, u32 cc)
{
	struct nvme *n = m->priv;
	u32 aqa = sim_rd32(reg(m, REG_AQA));
	u64 asq = sim_rd64(reg(m, REG_ASQ)), acq = sim_rd64(reg(m, REG_ACQ));
	u32 sqs = AQA_ASQS(aqa) + 1, cqs = AQA_ACQS(aqa) + 1;

	/* 4K pages, 64-byte SQ and 16-byte CQ entries, NVM command set. */
	if (CC_MPS(cc) != 0 || CC_IOSQES(cc) != NVME_SQES ||
	    CC_IOCQES(cc) != NVME_CQES || CC_CSS(cc) != 0 || sqs < 2 ||
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

/*
 * A doorbell the driver rang wrong (NVMe 1.4 section 4.1: a value beyond
 * the queue, or the doorbell of a queue that was never created) is not
 * acted on, as before, but counted once per value written and logged.
 * *seen remembers the value counted until a good one replaces it.
 */
static void check_doorbell(struct sim_devmodel *m, u32 qid, int cq, int used,
			   u32 size, u32 *seen)
{
	u32 v = sim_rd32(doorbell(m, qid, cq));
	int bad = used ? v >= size : v != 0;

	if (!bad || v == *seen) {
		if (!bad)
			*seen = 0;
		return;
	}
	*seen = v;
	if (used)
		sim_model_driver_error(m, SIM_DRV_BAD_DOORBELL,
				       "%s doorbell of queue %u set to %u, the queue has %u entries",
				       cq ? "CQ head" : "SQ tail", qid, v, size);
	else
		sim_model_driver_error(m, SIM_DRV_BAD_QUEUE,
				       "%s doorbell of queue %u, which does not exist, set to %u",
				       cq ? "CQ head" : "SQ tail", qid, v);
}

static void check_doorbells(struct sim_devmodel *m)
{
	struct nvme *n = m->priv;
	u32 q;

	for (q = 0; q < n->nq; q++) {
		check_doorbell(m, q, 0, n->sq[q].used, n->sq[q].size,
			       &n->sq[q].bad_db);
		check_doorbell(m, q, 1, n->cq[q].used, n->cq[q].size,
			       &n->cq[q].bad_db);
	}
}

static int nvme_poll(struct sim_devmodel *m)
{
	struct nvme *n = m->priv;
	u32 cc = sim_rd32(reg(m, REG_CC)), csts = sim_rd32(reg(m, REG_CSTS));
	int work = 0;
	u32 q, i;

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
	if (CC_SHN(cc) && !(csts & CSTS_SHST_DONE)) {
		fdatasync(n->fd);	/* shutdown notification */
		sim_wr32(reg(m, REG_CSTS), csts | CSTS_SHST_DONE);
		work++;
	}
	check_doorbells(m);
	/* Slots may run out: the queue served first takes turns. */
	for (i = 0; i < n->nq; i++) {
		q = (n->first_sq + i) % n->nq;
		if (n->sq[q].used)
			work += fetch_sq(m, q);
	}
	n->first_sq = (n->first_sq + 1) % n->nq;
	work += advance(m);
	for (q = 0; q < n->nq; q++) {
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
