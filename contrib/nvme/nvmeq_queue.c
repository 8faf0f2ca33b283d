// SPDX-License-Identifier: MIT
/*
 * One NVMe queue pair as its owner drives it (NVMe 1.4 section 4): 64-byte
 * commands into the submission queue and a write of the tail doorbell;
 * completions found by their phase bit, then the head doorbell.  The
 * manager drives the admin queue with it, each client its I/O queue.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>
#include <time.h>

#include "nvmeq.h"

void nvmeq_cmd(uint8_t *c, uint8_t op, uint32_t nsid, uint64_t prp1,
	       uint64_t prp2, uint32_t c10, uint32_t c11, uint32_t c12)
{
	memset(c, 0, 64);
	c[0] = op;
	memcpy(c + 4, &nsid, 4);
	memcpy(c + 24, &prp1, 8);
	memcpy(c + 32, &prp2, 8);
	memcpy(c + 40, &c10, 4);
	memcpy(c + 44, &c11, 4);
	memcpy(c + 48, &c12, 4);
}

int nvmeq_submit(struct nvmeq_qp *q, uint8_t *c, uint16_t cid)
{
	if (q->busy + 1 >= q->size)	/* one entry stays empty */
		return -EBUSY;
	memcpy(c + 2, &cid, 2);
	memcpy((void *)(q->sq + 64 * q->sq_tail), c, 64);
	q->sq_tail = (q->sq_tail + 1) % q->size;
	q->busy++;
	__atomic_store_n(q->sq_db, q->sq_tail, __ATOMIC_RELEASE);
	return 0;
}

/* Whether CQ entry head holds a completion: its phase tag is phase. */
static int posted(const struct nvmeq_qp *q, uint32_t head, uint32_t phase)
{
	uint16_t st;

	memcpy(&st, (const void *)(q->cq + 16 * head + 14), 2);
	return (st & 1) == phase;
}

int nvmeq_reap(struct nvmeq_qp *q, struct nvmeq_cqe *e)
{
	volatile uint8_t *p = q->cq + 16 * q->cq_head;
	uint32_t dw[4];

	if (!posted(q, q->cq_head, q->phase))
		return 0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy(dw, (const void *)p, 16);
	e->result = dw[0];
	e->cid = (uint16_t)dw[3];
	e->status = (uint16_t)((dw[3] >> 17) & 0x7ff);
	if (++q->cq_head == q->size) {
		q->cq_head = 0;
		q->phase ^= 1;
	}
	q->busy--;
	__atomic_store_n(q->cq_db, q->cq_head, __ATOMIC_RELEASE);
	return 1;
}

void nvmeq_nap_us(unsigned us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000L };

	nanosleep(&ts, NULL);
}

void nvmeq_nap(void)
{
	nvmeq_nap_us(2);
}

int nvmeq_run(struct nvmeq_qp *q, uint8_t *c, uint32_t *result)
{
	static uint16_t next_cid;
	struct timespec t0, t;
	struct nvmeq_cqe e;
	uint16_t cid = ++next_cid;
	int err;

	err = nvmeq_submit(q, c, cid);
	if (err)
		return err;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!nvmeq_reap(q, &e)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			return -ETIMEDOUT;
		nvmeq_nap();
	}
	if (e.cid != cid)
		return -EPROTO;
	if (result)
		*result = e.result;
	return e.status;
}

uint32_t nvmeq_ready(const struct nvmeq_qp *q)
{
	uint32_t n = 0, head = q->cq_head, phase = q->phase;

	while (n < q->busy && posted(q, head, phase)) {
		n++;
		if (++head == q->size) {
			head = 0;
			phase ^= 1;
		}
	}
	return n;
}
