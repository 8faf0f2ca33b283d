// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The device-model runner: one thread per serving process polls the models
 * of the devices installed in its nodes, and the interrupt helpers they
 * share.  See devmodel.h for why the models poll.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <sched.h>
#include <sys/prctl.h>

#include "devmodel.h"

/*
 * Idle backoff: from MIN to MAX microseconds between passes, doubling.  A
 * driver's doorbell or go bit is a plain store into mapped memory that
 * nobody is told about, so MAX is the worst latency a device adds to a
 * command that finds it idle: 1 ms, for about a thousand short wake-ups a
 * second while nothing happens.
 */
#define IDLE_MIN_US 20
#define IDLE_MAX_US 1000
/*
 * A driver that has just had a completion usually rings again within a
 * few hundred microseconds (the next descriptor, the next chunk of a
 * double-buffered copy).  For LINGER after the last work the runner keeps
 * its shortest nap, so that a burst of commands does not meet the backoff
 * between them; the cost is a few hundred short wake-ups per burst.
 */
#define LINGER_NS 5000000ll
/*
 * Right after work the runner does not sleep at all for SPIN_NS, only
 * yields: a nap, however short, costs tens of microseconds on a virtual
 * machine, which each chunk of a bounce-buffered copy would pay in full
 * (the next go bit comes a chunk's memcpy later).  Hardware sees its
 * doorbell at once; this is the closest a polled model gets.
 */
#define SPIN_NS 250000ll

struct sim_models {
	pthread_t thread;
	int stop;		/* read and written atomically */
	u32 n;
	struct sim_devmodel *m;
};

const struct sim_model_ops *sim_model_ops_of(u32 model)
{
	switch (model) {
	case SIO_MODEL_NVME: return &sim_nvme_ops;
	case SIO_MODEL_DMA: return &sim_dmaeng_ops;
	default: return NULL;
	}
}

static void put16(u8 *p, u16 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static void put32(u8 *p, u32 v)
{
	put16(p, (u16)v);
	put16(p + 2, (u16)(v >> 16));
}

static u16 get16(const u8 *p)
{
	return (u16)(p[0] | p[1] << 8);
}

static u32 get32(const u8 *p)
{
	return (u32)get16(p) | (u32)get16(p + 2) << 16;
}

static void msix_layout(const struct sim_model_ops *ops, u64 bar0_size,
			u32 *table, u32 *pba)
{
	*table = ops->msix_table;
	*pba = ops->msix_pba;
	if (ops->msix_layout)
		ops->msix_layout(bar0_size, table, pba);
}

void sim_model_cfg_init(u32 model, u64 bar0_size, u8 *c)
{
	const struct sim_model_ops *ops = sim_model_ops_of(model);
	u32 table, pba;

	if (!ops || !ops->msix_vectors)
		return;
	msix_layout(ops, bar0_size, &table, &pba);
	c[SIM_CAP_MSI + 1] = SIM_CAP_MSIX;	/* chain MSI -> MSI-X */
	c[SIM_CAP_MSIX] = 0x11;
	c[SIM_CAP_MSIX + 1] = 0x00;
	put16(c + SIM_CAP_MSIX + 2, (u16)(ops->msix_vectors - 1));
	put32(c + SIM_CAP_MSIX + 4, table);	/* BIR 0 */
	put32(c + SIM_CAP_MSIX + 8, pba);
}

int sim_model_dma(struct sim_devmodel *m, u64 addr, void *buf, size_t len,
		  int write)
{
	return sim_dma(m->f, m->dev, addr, buf, len, write);
}

static int msix_deliver(struct sim_devmodel *m, u32 vec)
{
	u8 *e = m->bar[0] + m->msix_table + 16 * vec;
	u32 data = sim_rd32(e + 8);

	return sim_model_dma(m, sim_rd64(e), &data, 4, 1);
}

static void pba_set(struct sim_devmodel *m, u32 vec, int on)
{
	u8 *w = m->bar[0] + m->msix_pba + 4 * (vec / 32);
	u32 bit = 1u << (vec % 32);

	if (on)
		__atomic_fetch_or((u32 *)w, bit, __ATOMIC_ACQ_REL);
	else
		__atomic_fetch_and((u32 *)w, ~bit, __ATOMIC_ACQ_REL);
}

int sim_model_irq(struct sim_devmodel *m, u32 vec)
{
	u8 cap[20];
	u16 ctl;
	u32 data;
	u64 addr;

	/* A snapshot of the capabilities: the core rewrites them under lock. */
	sim_lock(m->f);
	memcpy(cap, sim_cfg(m->f, m->dev) + SIM_CAP_MSIX, 4);
	memcpy(cap + 4, sim_cfg(m->f, m->dev) + SIM_CAP_MSI, 16);
	sim_unlock(m->f);
	ctl = get16(cap + 2);
	if (m->ops->msix_vectors && cap[0] == 0x11 && (ctl & 0x8000)) {
		if (vec >= m->ops->msix_vectors)
			return -EINVAL;
		if ((ctl & 0x4000) ||
		    (sim_rd32(m->bar[0] + m->msix_table + 16 * vec + 12) & 1)) {
			pba_set(m, vec, 1);	/* masked: delivered on unmask */
			return 0;
		}
		return msix_deliver(m, vec);
	}
	ctl = get16(cap + 6);
	if (cap[4] == 0x05 && (ctl & 1)) {
		/* One message (MMC 0): every vector raises it. */
		addr = get32(cap + 8) | (u64)get32(cap + 12) << 32;
		data = get16(cap + 16);
		return sim_model_dma(m, addr, &data, 4, 1);
	}
	return -ENODEV;
}

int sim_model_irq_pending(struct sim_devmodel *m)
{
	u32 v, done = 0;
	u16 ctl;

	if (!m->ops->msix_vectors)
		return 0;
	/* Nothing pending (the usual case): no lock, no config read. */
	for (v = 0; v < m->ops->msix_vectors; v += 32)
		if (sim_rd32(m->bar[0] + m->msix_pba + v / 8))
			break;
	if (v >= m->ops->msix_vectors)
		return 0;
	sim_lock(m->f);
	ctl = get16(sim_cfg(m->f, m->dev) + SIM_CAP_MSIX + 2);
	sim_unlock(m->f);
	if (!(ctl & 0x8000) || (ctl & 0x4000))
		return 0;
	for (v = 0; v < m->ops->msix_vectors; v++) {
		u8 *e = m->bar[0] + m->msix_table + 16 * v;

		if (!(sim_rd32(m->bar[0] + m->msix_pba + 4 * (v / 32)) &
		      (1u << (v % 32))) || (sim_rd32(e + 12) & 1))
			continue;
		pba_set(m, v, 0);
		msix_deliver(m, v);
		done++;
	}
	return (int)done;
}

static int map_bars(struct sim_devmodel *m)
{
	struct sio_device *d = sio_dev(m->f->reg, m->dev);
	struct sim_loc loc;
	char path[320];
	u32 b;
	int fd, err;

	for (b = 0; b < SIO_MAX_BARS; b++) {
		void *p;

		if (!d->bar[b].size)
			continue;
		memset(&loc, 0, sizeof(loc));
		loc.kind = SIM_LOC_BAR;
		loc.node = d->node;
		loc.index = m->dev;
		loc.bar = b;
		err = sim_backing_path(m->f, &loc, path, sizeof(path));
		if (err)
			return err;
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		p = mmap(NULL, d->bar[b].size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
		err = p == MAP_FAILED ? -errno : 0;
		close(fd);
		if (err)
			return err;
		m->bar[b] = p;
		m->bar_size[b] = d->bar[b].size;
		m->bar_addr[b] = d->bar[b].addr;
	}
	return m->bar[0] ? 0 : -ENXIO;
}

static void unmap_bars(struct sim_devmodel *m)
{
	u32 b;

	for (b = 0; b < SIO_MAX_BARS; b++)
		if (m->bar[b])
			munmap(m->bar[b], m->bar_size[b]);
	memset(m->bar, 0, sizeof(m->bar));
}

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *runner(void *arg)
{
	struct sim_fabric *f = arg;
	struct sim_models *ms = f->models;
	long idle_us = IDLE_MIN_US;
	long long last_work = 0;

	/* Short naps must stay short (the default slack is 50 us). */
	prctl(PR_SET_TIMERSLACK, 1000UL);
	while (!__atomic_load_n(&ms->stop, __ATOMIC_ACQUIRE)) {
		int work = 0;
		u32 i;

		for (i = 0; i < ms->n; i++) {
			work += ms->m[i].ops->poll(&ms->m[i]) > 0;
			work += sim_model_irq_pending(&ms->m[i]) > 0;
		}
		if (work) {
			idle_us = IDLE_MIN_US;
			last_work = mono_ns();
			continue;
		}
		if (mono_ns() - last_work < SPIN_NS) {
			sched_yield();
			continue;
		} else {
			struct timespec ts = { idle_us / 1000000,
					       (idle_us % 1000000) * 1000 };

			nanosleep(&ts, NULL);
		}
		if (mono_ns() - last_work > LINGER_NS)
			idle_us = idle_us * 2 > IDLE_MAX_US ? IDLE_MAX_US :
				  idle_us * 2;
	}
	return NULL;
}

static void free_models(struct sim_models *ms)
{
	u32 i;

	for (i = 0; i < ms->n; i++) {
		if (ms->m[i].ops->fini)
			ms->m[i].ops->fini(&ms->m[i]);
		unmap_bars(&ms->m[i]);
	}
	free(ms->m);
	free(ms);
}

int sim_models_start(struct sim_fabric *f)
{
	struct sim_models *ms;
	u32 i, nd = f->reg->ndevices;
	int err = 0;

	if (f->models)
		return 0;
	ms = calloc(1, sizeof(*ms));
	if (!ms)
		return -ENOMEM;
	ms->m = calloc(nd ? nd : 1, sizeof(*ms->m));
	if (!ms->m) {
		free(ms);
		return -ENOMEM;
	}
	for (i = 0; i < nd && !err; i++) {
		struct sio_device *d = sio_dev(f->reg, i);
		const struct sim_model_ops *ops = sim_model_ops_of(d->model);
		struct sim_devmodel *m = &ms->m[ms->n];

		if (!ops || !(f->served >> d->node & 1))
			continue;
		m->f = f;
		m->dev = i;
		m->ops = ops;
		msix_layout(ops, d->bar[0].size, &m->msix_table, &m->msix_pba);
		err = map_bars(m);
		if (!err)
			err = ops->init(m);
		if (err)
			unmap_bars(m);
		else
			ms->n++;
	}
	if (!err && ms->n) {
		f->models = ms;
		err = -pthread_create(&ms->thread, NULL, runner, f);
		if (!err)
			pthread_setname_np(ms->thread, "sim-models");
	}
	if (err || !ms->n) {
		f->models = NULL;
		free_models(ms);
	}
	return err;
}

void sim_models_stop(struct sim_fabric *f)
{
	struct sim_models *ms = f->models;

	if (!ms)
		return;
	__atomic_store_n(&ms->stop, 1, __ATOMIC_RELEASE);
	pthread_join(ms->thread, NULL);
	f->models = NULL;
	free_models(ms);
}
