// SPDX-License-Identifier: MIT
/*
 * A client of a shared NVMe: asks the manager for an I/O queue pair in a
 * segment of this node's memory, then does block I/O on it alone.  Data
 * moves through per-command buffers in that segment (the device reaches
 * only what is mapped for it); commands stay in flight up to the depth
 * asked for, so one client can keep the controller busy.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "nvmeq.h"

#define SQ_OFF 0x0000u		/* the queue segment's layout */
#define CQ_OFF 0x1000u
#define PRPL_OFF 0x2000u	/* a 256-byte PRP list per tag */
#define DATA_OFF 0x10000u	/* a 128 KiB buffer per tag */
#define MAX_DEPTH 63u		/* 64 entries: 4K of SQ, 1K of CQ */
#define WAIT_S 10

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Prints "smartio-nvmeq: <message>" on standard error; returns err. */
static int say(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int say(int err, const char *fmt, ...)
{
	va_list ap;

	fputs("smartio-nvmeq: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return err;
}

int nvmeq_control(const struct sfiles *sf, const char *dev, char *mgr,
		  size_t mgrlen, volatile struct nvmeq_ctl **out)
{
	char rel[192], name[64];
	size_t size = NVMEQ_CTL_SIZE;
	volatile struct nvmeq_ctl *ctl;
	int err;

	snprintf(name, sizeof(name), NVMEQ_CTL_FMT, dev);
	if (!mgr[0]) {
		err = sf_segment_owner(sf, name, mgr, mgrlen);
		if (err)
			return say(err, "no manager serves %s (run "
				   "'smartio-nvmeq -d %s manage' first)", dev,
				   dev);
	}
	if (strcmp(mgr, sf->self)) {
		snprintf(rel, sizeof(rel), "nodes/%s/segments/%s/attach",
			 mgr, name);
		err = sf_put(sf, rel, sf->self);
		if (err && err != -EALREADY && err != -EEXIST)
			return say(err, "cannot attach %s's control segment: %s",
				   mgr, strerror(-err));
	}
	snprintf(rel, sizeof(rel), "nodes/%s/segments/%s/mem", mgr, name);
	ctl = sf_map(sf, rel, &size);
	if (!ctl)
		return say(-errno, "cannot map %s: %s", rel, strerror(errno));
	if (ctl->magic != NVMEQ_MAGIC || ctl->version != NVMEQ_VERSION ||
	    ctl->nslots > NVMEQ_SLOTS || ctl->db_stride < 4 ||
	    ctl->db_stride > NVMEQ_PAGE) {
		munmap((void *)ctl, NVMEQ_CTL_SIZE);
		return say(-EPROTO, "%s of %s is not a control block this "
			   "version understands", name, mgr);
	}
	*out = ctl;
	return 0;
}

static int map_control(struct nvmeq_client *c)
{
	int err = nvmeq_control(c->sf, c->dev, c->mgr, sizeof(c->mgr),
				&c->ctl);

	if (err)
		return err;
	if (__atomic_load_n(&c->ctl->state, __ATOMIC_ACQUIRE) != NVMEQ_SERVING)
		return say(-ESHUTDOWN, "the manager of %s on %s is not serving",
			   c->dev, c->mgr);
	return 0;
}

/* A free slot taken for us (CLAIMED); -EBUSY when every one is taken. */
static int claim_slot(struct nvmeq_client *c)
{
	unsigned i;

	for (i = 0; i < c->ctl->nslots; i++) {
		uint32_t want = NVMEQ_FREE;

		if (__atomic_compare_exchange_n(&c->ctl->slot[i].state, &want,
						NVMEQ_CLAIMED, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			c->slot = i;
			return 0;
		}
	}
	return -EBUSY;
}

static int request_queues(struct nvmeq_client *c)
{
	volatile struct nvmeq_slot *s = &c->ctl->slot[c->slot];
	double end = now_s() + WAIT_S;
	uint32_t state, stride = c->ctl->db_stride, qid = c->slot + 1;

	s->qsize = c->depth + 1;
	s->sq_io = c->seg.io + SQ_OFF;
	s->cq_io = c->seg.io + CQ_OFF;
	s->status = 0;
	s->pid = (uint32_t)getpid();
	snprintf((char *)s->node, sizeof(s->node), "%s", c->sf->self);
	snprintf((char *)s->segment, sizeof(s->segment), "%s", c->seg.name);
	__atomic_store_n(&s->state, NVMEQ_REQUEST, __ATOMIC_RELEASE);
	while ((state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE)) ==
	       NVMEQ_REQUEST) {
		if (now_s() > end)
			return say(-ETIMEDOUT, "the manager on %s did not "
				   "answer", c->mgr);
		usleep(1000);
	}
	if (state != NVMEQ_READY) {
		int st = s->status;

		__atomic_store_n(&s->state, NVMEQ_FREE, __ATOMIC_RELEASE);
		fprintf(stderr, "smartio-nvmeq: the manager refused queue %u: "
			"%s %d\n", qid, st < 0 ? strerror(-st) : "NVMe status",
			st < 0 ? -st : st);
		return -EIO;
	}
	memset(&c->q, 0, sizeof(c->q));
	c->q.sq = (uint8_t *)c->seg.mem + SQ_OFF;
	c->q.cq = (uint8_t *)c->seg.mem + CQ_OFF;
	c->q.size = c->depth + 1;
	c->q.phase = 1;
	c->q.qid = qid;
	c->q.sq_db = (volatile uint32_t *)(c->bar + 0x1000 + 2 * qid * stride);
	c->q.cq_db = (volatile uint32_t *)(c->bar + 0x1000 +
					   (2 * qid + 1) * stride);
	return 0;
}

/* Clients this process made: the last part of a queue segment's name. */
static unsigned int clients_made;

int nvmeq_connect(struct nvmeq_client *c, const struct sfiles *sf,
		  const char *dev, const char *mgr, unsigned depth)
{
	char rel[128], name[96];
	int err;

	memset(c, 0, sizeof(*c));
	c->sf = sf;
	if (!depth || depth > MAX_DEPTH)
		return say(-EINVAL, "a depth of 1 to 63, not %u", depth);
	if (strlen(dev) >= sizeof(c->dev) || (mgr && strlen(mgr) >= sizeof(c->mgr)))
		return -ENAMETOOLONG;
	strcpy(c->dev, dev);
	if (mgr)
		strcpy(c->mgr, mgr);
	c->depth = depth;
	c->oversleep_us = 50;	/* until measured */
	/* Completions are polled with short naps: 1 us of timer slack, not
	 * the default 50 us, is what keeps a depth-1 client's latency low. */
	prctl(PR_SET_TIMERSLACK, 1000UL);
	err = map_control(c);
	if (err)
		goto fail;
	c->blocks = c->ctl->blocks;
	err = sf_hold_device(sf, dev);
	if (err) {
		say(err, "cannot borrow %s: %s", dev, strerror(-err));
		goto fail;
	}
	snprintf(rel, sizeof(rel), "dev/%s/bar0", dev);
	c->bar = sf_map(sf, rel, &c->bar_size);
	if (!c->bar) {
		err = say(-errno, "cannot map %s: %s", rel, strerror(errno));
		goto fail;
	}
	/* One process may hold several clients at once (nbdkit: one per
	 * connection, and a closing one may outlive the next's open). */
	snprintf(name, sizeof(name), NVMEQ_CTL_FMT "-%d-%u", dev, (int)getpid(),
		 __atomic_fetch_add(&clients_made, 1, __ATOMIC_RELAXED));
	err = sf_segment_make(sf, &c->seg, name,
			      DATA_OFF + (size_t)depth * NVMEQ_MAX_XFER, dev);
	if (err) {
		say(err, "cannot make the queue segment %s: %s", name,
		    strerror(-err));
		goto fail;
	}
	err = claim_slot(c);
	if (err) {
		fprintf(stderr, "smartio-nvmeq: all %u queue pairs of %s are "
			"taken\n", c->ctl->nslots, dev);
		goto fail;
	}
	err = request_queues(c);
	if (!err)
		return 0;
fail:
	c->slot = NVMEQ_SLOTS;	/* nothing to release */
	nvmeq_disconnect(c);
	return err;
}

void nvmeq_disconnect(struct nvmeq_client *c)
{
	if (c->ctl && c->slot < NVMEQ_SLOTS &&
	    c->ctl->state == NVMEQ_SERVING) {
		volatile struct nvmeq_slot *s = &c->ctl->slot[c->slot];
		double end = now_s() + WAIT_S;

		__atomic_store_n(&s->state, NVMEQ_RELEASE, __ATOMIC_RELEASE);
		while (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) ==
		       NVMEQ_RELEASE && c->ctl->state == NVMEQ_SERVING &&
		       now_s() < end)
			usleep(1000);
	}
	if (c->seg.name[0])
		sf_segment_remove(c->sf, &c->seg, c->dev);
	if (c->bar)
		munmap((void *)c->bar, c->bar_size);
	if (c->ctl)
		munmap((void *)c->ctl, NVMEQ_CTL_SIZE);
	c->bar = NULL;
	c->ctl = NULL;
	c->seg.name[0] = '\0';
}

/* What one command in flight moves: tag t's buffer from or to buf. */
struct inflight {
	uint8_t *buf;
	size_t len;
	double t0;
};

static uint64_t data_io(struct nvmeq_client *c, unsigned t)
{
	return c->seg.io + DATA_OFF + (uint64_t)t * NVMEQ_MAX_XFER;
}

static uint8_t *data_mem(struct nvmeq_client *c, unsigned t)
{
	return (uint8_t *)c->seg.mem + DATA_OFF + (size_t)t * NVMEQ_MAX_XFER;
}

/* Submits op on len bytes (<= 128K) at lba through tag t's buffer. */
static int submit_tag(struct nvmeq_client *c, uint8_t op, unsigned t,
		      size_t len, uint64_t lba)
{
	unsigned pages = (unsigned)((len + NVMEQ_PAGE - 1) / NVMEQ_PAGE), i;
	uint64_t at = data_io(c, t), prp2 = 0;
	uint64_t *list = (uint64_t *)((uint8_t *)c->seg.mem + PRPL_OFF +
				      256u * t);
	uint32_t nlb = (uint32_t)(len / NVMEQ_LBA) - 1;
	uint8_t cmd[64];

	if (pages == 2) {
		prp2 = at + NVMEQ_PAGE;
	} else if (pages > 2) {
		for (i = 1; i < pages; i++)
			list[i - 1] = at + (uint64_t)NVMEQ_PAGE * i;
		prp2 = c->seg.io + PRPL_OFF + 256u * t;
	}
	nvmeq_cmd(cmd, op, 1, op ? at : 0, op ? prp2 : 0, (uint32_t)lba,
		  (uint32_t)(lba >> 32), op ? nlb : 0);
	return nvmeq_submit(&c->q, cmd, (uint16_t)t);
}

/*
 * Sleeps through most of the time completions have been taking, less what
 * a sleep overshoots (tens of microseconds on a virtual machine): counting
 * the overshoot in would make each wait longer than the last.
 */
static void sleep_most(struct nvmeq_client *c, double want)
{
	double t0;
	struct timespec ts;

	want -= c->oversleep_us;
	if (want < 5)
		return;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(want * 1000);
	t0 = now_s();
	nanosleep(&ts, NULL);
	c->oversleep_us = c->oversleep_us * 0.875 +
			  ((now_s() - t0) * 1e6 - want) * 0.125;
}

/*
 * With several commands in flight, one wake-up should find a batch of
 * completions, about half of those in flight, while the other half keep
 * the controller busy.  Thirty clients at depth 32 that woke for each
 * completion spent more of two CPUs on task switches than the controller
 * (a thread like theirs, in the simulator) had left, and it served them
 * at 0.4 of what it serves one client.  The sleep adapts to what each
 * wake-up found: longer while under a quarter had come, shorter when all
 * had (the controller then sat idle for part of it).
 */
#define BATCH_MIN_US 5.0
#define BATCH_MAX_US 20000.0

static void sleep_for_batch(struct nvmeq_client *c)
{
	uint32_t busy = c->q.busy, ready;

	if (c->batch_us < BATCH_MIN_US)
		c->batch_us = c->wait_us > BATCH_MIN_US ? c->wait_us :
							  BATCH_MIN_US;
	sleep_most(c, c->batch_us);
	ready = nvmeq_ready(&c->q);
	if (ready >= busy)
		c->batch_us *= 0.75;
	else if (ready < busy / 4)
		c->batch_us *= 1.25;
	if (c->batch_us > BATCH_MAX_US)
		c->batch_us = BATCH_MAX_US;
}

/*
 * Naps while a completion is late: 2 us, doubling up to 1 ms, so that no
 * nap is longer than the wait before it (a wait ends at most twice as late
 * as its completion came).  A nap of 2 us over and over is a wake-up every
 * few microseconds; thirty clients doing that on two CPUs spent them all
 * switching tasks and left the controller (a thread like theirs, in the
 * simulator) 4 % of one, so completions came tens of milliseconds late.
 * After a batch's sleep the naps start at an eighth of it.
 */
#define NAP_MAX_US 1000

/*
 * Waits for the next completion; its tag, or -errno.  The client first
 * sleeps through most of the time completions have been taking (or a
 * batch's time), then polls with naps that grow: many clients on few CPUs
 * then leave the controller (and each other) the processor instead of
 * polling it away, and one client alone polls at once.
 */
static int reap_one(struct nvmeq_client *c, struct nvmeq_cqe *e)
{
	double start = 0, end = 0, waited;
	unsigned nap_us = 2;

	while (!nvmeq_reap(&c->q, e)) {
		if (!end) {
			start = now_s();
			end = start + WAIT_S;
			if (c->q.busy > 1) {
				sleep_for_batch(c);
				if (c->batch_us / 8 > nap_us)
					nap_us = c->batch_us / 8 < NAP_MAX_US ?
						 (unsigned)(c->batch_us / 8) :
						 NAP_MAX_US;
			} else {
				sleep_most(c, c->wait_us * 0.75);
			}
			continue;
		} else if (now_s() > end) {
			return c->ctl->state == NVMEQ_SERVING ? -ETIMEDOUT :
								-ESHUTDOWN;
		}
		nvmeq_nap_us(nap_us);
		if (nap_us < NAP_MAX_US)
			nap_us *= 2;
	}
	waited = start ? (now_s() - start) * 1e6 : 0;
	c->wait_us = c->wait_us * 0.875 + waited * 0.125;
	if (e->cid >= c->depth)
		return -EPROTO;	/* not a tag of ours: nothing to trust */
	return e->status ? -EIO : e->cid;
}

/* Moves len bytes between buf and the blocks from lba, depth at a time. */
static int transfer(struct nvmeq_client *c, uint8_t op, uint8_t *buf,
		    size_t len, uint64_t lba)
{
	struct inflight fl[MAX_DEPTH];
	uint64_t free_tags = (c->depth >= 64 ? ~0ull : (1ull << c->depth) - 1);
	size_t off = 0;
	unsigned busy = 0;
	int err = 0;

	if (len % NVMEQ_LBA || lba + len / NVMEQ_LBA > c->blocks ||
	    lba + len / NVMEQ_LBA < lba)
		return -EINVAL;
	while ((off < len && !err) || busy) {
		struct nvmeq_cqe e;
		int t;

		if (off < len && !err && free_tags) {
			size_t n = len - off < NVMEQ_MAX_XFER ? len - off :
								NVMEQ_MAX_XFER;

			t = __builtin_ctzll(free_tags);
			if (op == 0x01)
				memcpy(data_mem(c, (unsigned)t), buf + off, n);
			err = submit_tag(c, op, (unsigned)t, n,
					 lba + off / NVMEQ_LBA);
			if (!err) {
				free_tags &= ~(1ull << t);
				fl[t].buf = buf + off;
				fl[t].len = n;
				busy++;
				off += n;
				continue;
			}
		}
		t = reap_one(c, &e);
		if (t == -EIO) {	/* that command failed; reap the rest */
			free_tags |= 1ull << e.cid;
			err = t;
			busy--;
			continue;
		}
		if (t < 0)
			return t;	/* the queue is unusable */
		if (op == 0x02)
			memcpy(fl[t].buf, data_mem(c, (unsigned)t), fl[t].len);
		free_tags |= 1ull << t;
		busy--;
	}
	return err;
}

int nvmeq_read(struct nvmeq_client *c, void *buf, size_t len, uint64_t lba)
{
	return transfer(c, 0x02, buf, len, lba);
}

int nvmeq_write(struct nvmeq_client *c, const void *buf, size_t len,
		uint64_t lba)
{
	return transfer(c, 0x01, (uint8_t *)buf, len, lba);
}

int nvmeq_flush(struct nvmeq_client *c)
{
	struct nvmeq_cqe e;
	int t;

	t = submit_tag(c, 0x00, 0, 0, 0);
	if (t)
		return t;
	t = reap_one(c, &e);
	return t < 0 ? t : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A 4 KiB read at the next random 4K-aligned place, on tag t. */
static int read_random(struct nvmeq_client *c, unsigned t, unsigned *seed,
		       uint64_t lba, uint64_t blocks)
{
	*seed = *seed * 1103515245u + 12345u;
	return submit_tag(c, 0x02, t, 4096,
			  lba + 8ull * ((*seed >> 8) % (blocks / 8)));
}

int nvmeq_random_reads(struct nvmeq_client *c, unsigned long n, uint64_t lba,
		       uint64_t blocks, double *lat, double *secs)
{
	double start[MAX_DEPTH], t0 = now_s();
	unsigned long sent = 0, done = 0;
	unsigned seed = (unsigned)getpid() * 2654435761u, busy = 0, t;

	if (blocks < 8 || lba + blocks > c->blocks)
		return -EINVAL;
	for (t = 0; t < c->depth && sent < n; t++, sent++, busy++) {
		start[t] = now_s();
		if (read_random(c, t, &seed, lba, blocks))
			return -EIO;
	}
	while (busy) {
		struct nvmeq_cqe e;
		int r = reap_one(c, &e);

		if (r < 0)
			return r;
		lat[done++] = (now_s() - start[r]) * 1e6;
		busy--;
		if (sent < n) {
			start[r] = now_s();
			if (read_random(c, (unsigned)r, &seed, lba, blocks))
				return -EIO;
			sent++;
			busy++;
		}
	}
	*secs = now_s() - t0;
	qsort(lat, n, sizeof(*lat), cmp_double);
	return 0;
}
