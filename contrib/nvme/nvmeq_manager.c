// SPDX-License-Identifier: MIT
/*
 * The manager of a shared NVMe: brings the controller up with its admin
 * queue in a segment of this node, exports the control block (segment
 * nvmeq-<dev>) and creates or deletes a client's I/O queue pair when the
 * client asks in its slot.  It never touches a client's I/O: once a slot is
 * READY the client rings its own doorbells and reaps its own completions.
 *
 * A slot belongs to a client as long as the client's queue segment exists:
 * a client that dies without releasing its slot leaves that segment behind,
 * and removing it (rmdir) gives the queues back.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nvmeq.h"

#define ADMIN_ENTRIES 32u
#define ASQ 0x0000u		/* the admin segment's layout */
#define ACQ 0x1000u
#define IDENT 0x2000u
#define ADMIN_SEG_SIZE (64u << 10)
#define CLAIM_TIMEOUT 10000	/* ms a slot may stay CLAIMED */
/*
 * ms a READY or FAILED slot is left alone before its client is looked
 * for: at least that long, so that a client polling for its answer sees
 * FAILED before the slot is freed (whole seconds of time(2) gave it
 * anything from 0 to 1 s).
 */
#define ANSWER_GRACE 1000

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

struct manager {
	const struct sfiles *sf;
	const char *dev;
	volatile uint8_t *bar;
	size_t bar_size;
	struct sf_segment admin, ctl_seg;
	volatile struct nvmeq_ctl *ctl;
	struct nvmeq_qp aq;
	int64_t seen[NVMEQ_SLOTS];	/* ms: when a slot last changed or was checked */
	int verbose;
};

static uint32_t rd32(struct manager *m, unsigned off)
{
	return __atomic_load_n((volatile uint32_t *)(m->bar + off),
			       __ATOMIC_ACQUIRE);
}

static void wr32(struct manager *m, unsigned off, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(m->bar + off), v,
			 __ATOMIC_RELEASE);
}

static int wait_ready(struct manager *m, uint32_t want)
{
	time_t end = time(NULL) + 10;

	while ((rd32(m, 0x1c) & 3) != want) {
		if (time(NULL) > end)
			return -ETIMEDOUT;
		nvmeq_nap();
	}
	return 0;
}

static int bring_up(struct manager *m)
{
	uint8_t c[64];
	uint32_t res = 0;
	uint64_t io = m->admin.io, cap;
	volatile struct nvmeq_ctl *ctl = m->ctl;
	int st;

	cap = rd32(m, 0) | (uint64_t)rd32(m, 4) << 32;
	wr32(m, 0x14, 0);
	if (wait_ready(m, 0))
		return -ETIMEDOUT;
	memset(m->admin.mem, 0, 0x3000);
	m->aq.sq = (uint8_t *)m->admin.mem + ASQ;
	m->aq.cq = (uint8_t *)m->admin.mem + ACQ;
	m->aq.size = ADMIN_ENTRIES;
	m->aq.phase = 1;
	ctl->db_stride = 4u << ((cap >> 32) & 0xf);
	ctl->max_entries = (uint32_t)(cap & 0xffff) + 1;
	m->aq.sq_db = (volatile uint32_t *)(m->bar + 0x1000);
	m->aq.cq_db = (volatile uint32_t *)(m->bar + 0x1000 + ctl->db_stride);
	wr32(m, 0x24, (ADMIN_ENTRIES - 1) << 16 | (ADMIN_ENTRIES - 1));
	wr32(m, 0x28, (uint32_t)(io + ASQ));
	wr32(m, 0x2c, (uint32_t)((io + ASQ) >> 32));
	wr32(m, 0x30, (uint32_t)(io + ACQ));
	wr32(m, 0x34, (uint32_t)((io + ACQ) >> 32));
	wr32(m, 0x14, 1 | 6u << 16 | 4u << 20);
	if (wait_ready(m, 1))
		return -ETIMEDOUT;
	nvmeq_cmd(c, 0x06, 1, io + IDENT, 0, 0, 0, 0);	/* Identify NS 1 */
	st = nvmeq_run(&m->aq, c, NULL);
	if (st)
		return st < 0 ? st : -EIO;
	memcpy((void *)&ctl->blocks, (uint8_t *)m->admin.mem + IDENT, 8);
	nvmeq_cmd(c, 0x0a, 0, 0, 0, 0x07, 0, 0);	/* Number of Queues */
	st = nvmeq_run(&m->aq, c, &res);
	if (st)
		return st < 0 ? st : -EIO;
	res = (res & 0xffff) < (res >> 16) ? (res & 0xffff) : (res >> 16);
	ctl->nslots = res + 1 < NVMEQ_SLOTS ? res + 1 : NVMEQ_SLOTS;
	return 0;
}

/* Creates queue pair slot + 1 for the request in slot; its status. */
static int create_pair(struct manager *m, volatile struct nvmeq_slot *s,
		       unsigned qid)
{
	uint32_t qsize = s->qsize;
	uint64_t sq = s->sq_io, cq = s->cq_io;
	uint8_t c[64];
	int st;

	if (qsize < 2 || qsize > m->ctl->max_entries || !sq || !cq ||
	    sq % NVMEQ_PAGE || cq % NVMEQ_PAGE)
		return -EINVAL;
	nvmeq_cmd(c, 0x05, 0, cq, 0, (qsize - 1) << 16 | qid, 1, 0);
	st = nvmeq_run(&m->aq, c, NULL);
	if (st)
		return st;
	nvmeq_cmd(c, 0x01, 0, sq, 0, (qsize - 1) << 16 | qid, qid << 16 | 1, 0);
	st = nvmeq_run(&m->aq, c, NULL);
	if (st) {
		nvmeq_cmd(c, 0x04, 0, 0, 0, qid, 0, 0);
		nvmeq_run(&m->aq, c, NULL);
	}
	return st;
}

static void delete_pair(struct manager *m, unsigned qid)
{
	uint8_t c[64];

	nvmeq_cmd(c, 0x00, 0, 0, 0, qid, 0, 0);		/* SQ first */
	nvmeq_run(&m->aq, c, NULL);
	nvmeq_cmd(c, 0x04, 0, 0, 0, qid, 0, 0);
	nvmeq_run(&m->aq, c, NULL);
}

/* A text field of the slot the client wrote, copied out terminated. */
static const char *slot_text(volatile const char *field, size_t len,
			     char *buf)
{
	memcpy(buf, (const void *)field, len);
	buf[len - 1] = '\0';
	return buf;
}

static int client_gone(struct manager *m, volatile struct nvmeq_slot *s)
{
	char node[sizeof(s->node)], seg[sizeof(s->segment)], p[512];
	struct stat st;

	slot_text(s->node, sizeof(s->node), node);
	slot_text(s->segment, sizeof(s->segment), seg);
	if (!node[0] || strchr(node, '/') || !seg[0] || strchr(seg, '/'))
		return 1;
	if (sf_path(m->sf, p, sizeof(p), "nodes/%s/segments/%s", node, seg))
		return 1;
	return stat(p, &st) < 0 && errno == ENOENT;
}

/* The monotonic clock in ms: slot ages, whatever the wall clock does. */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Publishes a slot's new state.  What the manager printed about the slot
 * is written out first: whoever sees the state (a client, or a test
 * reading the log) then finds the line that explains it.
 */
static void set_state(volatile struct nvmeq_slot *s, uint32_t state)
{
	fflush(stdout);
	__atomic_store_n(&s->state, state, __ATOMIC_RELEASE);
}

/* One look at every slot; >0 if something was done. */
static int serve_slots(struct manager *m)
{
	int64_t now = now_ms();
	unsigned i;
	int work = 0;

	for (i = 0; i < m->ctl->nslots; i++) {
		volatile struct nvmeq_slot *s = &m->ctl->slot[i];
		uint32_t state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		char node[sizeof(s->node)];
		int st;

		switch (state) {
		case NVMEQ_REQUEST:
			st = create_pair(m, s, i + 1);
			s->status = st;
			if (m->verbose || st)
				printf("smartio-nvmeq: queue %u for %s (pid %u): "
				       "%s%s\n", i + 1,
				       slot_text(s->node, sizeof(s->node), node),
				       s->pid,
				       st ? "refused, " : "created",
				       st < 0 ? strerror(-st) :
				       st ? "NVMe status" : "");
			set_state(s, st ? NVMEQ_FAILED : NVMEQ_READY);
			m->seen[i] = now;
			work++;
			break;
		case NVMEQ_RELEASE:
			delete_pair(m, i + 1);
			if (m->verbose)
				printf("smartio-nvmeq: queue %u of %s released\n",
				       i + 1,
				       slot_text(s->node, sizeof(s->node), node));
			set_state(s, NVMEQ_FREE);
			work++;
			break;
		case NVMEQ_READY:
		case NVMEQ_FAILED:
		case NVMEQ_CLAIMED:
			if (now - m->seen[i] < (state == NVMEQ_CLAIMED ?
						CLAIM_TIMEOUT : ANSWER_GRACE))
				break;
			m->seen[i] = now;
			if (state == NVMEQ_CLAIMED || client_gone(m, s)) {
				if (state == NVMEQ_READY)
					delete_pair(m, i + 1);
				printf("smartio-nvmeq: queue %u: client %s gone "
				       "(%s), slot freed\n", i + 1,
				       slot_text(s->node, sizeof(s->node), node),
				       state == NVMEQ_CLAIMED ? "claim timed out" :
				       "its segment was removed");
				set_state(s, NVMEQ_FREE);
				work++;
			}
			break;
		default:
			m->seen[i] = now;
		}
	}
	fflush(stdout);
	return work;
}

static void shut_down(struct manager *m)
{
	char rel[128];
	unsigned i;
	int tries;

	m->ctl->state = NVMEQ_STOPPED;
	for (i = 0; i < m->ctl->nslots; i++)
		if (m->ctl->slot[i].state == NVMEQ_READY)
			delete_pair(m, i + 1);
	wr32(m, 0x14, 0);
	wait_ready(m, 0);
	/* Clients see STOPPED and detach; until then available stays. */
	snprintf(rel, sizeof(rel), "self/segments/" NVMEQ_CTL_FMT "/available",
		 m->dev);
	for (tries = 0; tries < 50 && sf_put(m->sf, rel, "0") == -EBUSY; tries++)
		usleep(100000);
	sf_segment_remove(m->sf, &m->ctl_seg, NULL);
	sf_segment_remove(m->sf, &m->admin, m->dev);
	munmap((void *)m->bar, m->bar_size);
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "smartio-nvmeq: %s: %s\n", what, strerror(-err));
	return 1;
}

int nvmeq_manage(const struct sfiles *sf, const char *dev, int verbose)
{
	struct manager m = { .sf = sf, .dev = dev, .verbose = verbose };
	struct sigaction sa = { .sa_handler = on_signal };
	char name[96], rel[160], who[64];
	int err, idle = 0;

	snprintf(name, sizeof(name), NVMEQ_CTL_FMT, dev);
	if (!sf_segment_owner(sf, name, who, sizeof(who))) {
		fprintf(stderr, "smartio-nvmeq: %s already has a manager on %s "
			"(segment " NVMEQ_CTL_FMT " exists)\n", dev, who, dev);
		return 1;
	}
	err = sf_hold_device(sf, dev);
	if (err)
		return fail("cannot borrow the device", err);
	err = sf_enable_device(sf, dev);
	if (err)
		return fail("cannot enable the device", err);
	snprintf(rel, sizeof(rel), "dev/%s/bar0", dev);
	m.bar = sf_map(sf, rel, &m.bar_size);
	if (!m.bar)
		return fail(rel, -errno);
	snprintf(name, sizeof(name), NVMEQ_CTL_FMT "-admin", dev);
	err = sf_segment_make(sf, &m.admin, name, ADMIN_SEG_SIZE, dev);
	if (err)
		return fail("the admin queue's segment", err);
	snprintf(name, sizeof(name), NVMEQ_CTL_FMT, dev);
	err = sf_segment_make(sf, &m.ctl_seg, name, NVMEQ_CTL_SIZE, NULL);
	if (err) {
		sf_segment_remove(sf, &m.admin, dev);
		return fail("the control segment", err);
	}
	m.ctl = m.ctl_seg.mem;
	memset((void *)m.ctl, 0, sizeof(*m.ctl));
	m.ctl->magic = NVMEQ_MAGIC;
	m.ctl->version = NVMEQ_VERSION;
	m.ctl->manager_pid = (uint32_t)getpid();
	snprintf((char *)m.ctl->manager_node, sizeof(m.ctl->manager_node), "%s",
		 sf->self);
	err = bring_up(&m);
	if (err) {
		fprintf(stderr, "smartio-nvmeq: %s did not come up: %s\n", dev,
			err < 0 ? strerror(-err) : "an admin command failed");
		shut_down(&m);
		return 1;
	}
	snprintf(rel, sizeof(rel), "self/segments/%s/available", name);
	err = sf_put(sf, rel, "1");
	if (err) {
		shut_down(&m);
		return fail("cannot export the control segment", err);
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	__atomic_store_n(&m.ctl->state, NVMEQ_SERVING, __ATOMIC_RELEASE);
	printf("smartio-nvmeq: serving %s from %s: %u queue pairs, %llu blocks\n",
	       dev, sf->self, m.ctl->nslots, (unsigned long long)m.ctl->blocks);
	fflush(stdout);
	while (!stopping) {
		struct timespec ts = { 0, idle > 100 ? 5000000 : 200000 };

		if (serve_slots(&m))
			idle = 0;
		else
			idle++;
		nanosleep(&ts, NULL);
	}
	shut_down(&m);
	printf("smartio-nvmeq: %s stopped\n", dev);
	return 0;
}
