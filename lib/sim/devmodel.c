// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The device-model runner: one thread per serving process polls the models
 * of the devices installed in its nodes, and the interrupt helpers they
 * share.  See devmodel.h for why the models poll.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <linux/pci_regs.h>

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
/* How early the runner wakes for a paced completion, to poll its way in. */
#define WAKE_EARLY_NS 20000ull
/*
 * The models stand for hardware, which no host process preempts.  A
 * device whose clients are dozens of processes on two CPUs (30
 * smartio-nvmeq clients of one NVMe) would otherwise run at the share the
 * scheduler leaves its runner, not at its model's speed.  The raised
 * priority needs CAP_SYS_NICE; without it the runner keeps the default.
 */
#define RUNNER_NICE (-10)

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
	c[SIM_CAP_MSI + PCI_CAP_LIST_NEXT] = SIM_CAP_MSIX;	/* MSI -> MSI-X */
	c[SIM_CAP_MSIX + PCI_CAP_LIST_ID] = PCI_CAP_ID_MSIX;
	c[SIM_CAP_MSIX + PCI_CAP_LIST_NEXT] = 0;
	/* Table Size is N - 1; both structures in BAR 0 (BIR 0) */
	sio_put_le16(c + SIM_CAP_MSIX + PCI_MSIX_FLAGS,
		     (u16)(ops->msix_vectors - 1));
	sio_put_le32(c + SIM_CAP_MSIX + PCI_MSIX_TABLE, table);
	sio_put_le32(c + SIM_CAP_MSIX + PCI_MSIX_PBA, pba);
}

void sim_model_driver_error(struct sim_devmodel *m, enum sim_drv_err kind,
			    const char *fmt, ...)
{
	struct sio_device *d = sio_dev(m->f->reg, m->dev);
	va_list ap;

	sim_lock(m->f);
	d->stats.driver_errors++;
	sim_unlock(m->f);
	/* Once per kind: a looping driver must not flood the log. */
	if (m->logged & 1u << kind)
		return;
	m->logged |= 1u << kind;
	fprintf(stderr, "smartio: %s: driver error: ", d->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (more of this kind are only counted in stats)\n", stderr);
}

int sim_model_dma(struct sim_devmodel *m, u64 addr, void *buf, size_t len,
		  int write)
{
	return sim_dma(m->f, m->dev, addr, buf, len, write);
}

int sim_model_dma_start(struct sim_devmodel *m, u64 addr, void *buf,
			size_t len, int write, u64 *done_ns)
{
	return sim_dma_start(m->f, m->dev, addr, buf, len, write, done_ns);
}

static u8 *msix_entry(struct sim_devmodel *m, u32 vec)
{
	return m->bar[0] + m->msix_table + PCI_MSIX_ENTRY_SIZE * vec;
}

static int msix_masked(struct sim_devmodel *m, u32 vec)
{
	return sim_rd32(msix_entry(m, vec) + PCI_MSIX_ENTRY_VECTOR_CTRL) &
	       PCI_MSIX_ENTRY_CTRL_MASKBIT;
}

static int msix_deliver(struct sim_devmodel *m, u32 vec)
{
	u8 *e = msix_entry(m, vec);
	u32 data = sim_rd32(e + PCI_MSIX_ENTRY_DATA);

	return sim_model_dma(m, sim_rd64(e + PCI_MSIX_ENTRY_LOWER_ADDR), &data,
			     4, 1);
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
	u8 msix[4], msi[16];
	u16 ctl;
	u32 data;
	u64 addr;

	/* A snapshot of the capabilities: the core rewrites them under lock. */
	sim_lock(m->f);
	memcpy(msix, sim_cfg(m->f, m->dev) + SIM_CAP_MSIX, sizeof(msix));
	memcpy(msi, sim_cfg(m->f, m->dev) + SIM_CAP_MSI, sizeof(msi));
	sim_unlock(m->f);
	ctl = sio_get_le16(msix + PCI_MSIX_FLAGS);
	if (m->ops->msix_vectors && msix[PCI_CAP_LIST_ID] == PCI_CAP_ID_MSIX &&
	    (ctl & PCI_MSIX_FLAGS_ENABLE)) {
		if (vec >= m->ops->msix_vectors)
			return -EINVAL;
		if ((ctl & PCI_MSIX_FLAGS_MASKALL) || msix_masked(m, vec)) {
			pba_set(m, vec, 1);	/* masked: delivered on unmask */
			return 0;
		}
		return msix_deliver(m, vec);
	}
	ctl = sio_get_le16(msi + PCI_MSI_FLAGS);
	if (msi[PCI_CAP_LIST_ID] == PCI_CAP_ID_MSI &&
	    (ctl & PCI_MSI_FLAGS_ENABLE)) {
		/* One message (MMC 0): every vector raises it. */
		addr = sio_get_le32(msi + PCI_MSI_ADDRESS_LO) |
		       (u64)sio_get_le32(msi + PCI_MSI_ADDRESS_HI) << 32;
		data = sio_get_le16(msi + PCI_MSI_DATA_64);
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
	ctl = sio_get_le16(sim_cfg(m->f, m->dev) + SIM_CAP_MSIX + PCI_MSIX_FLAGS);
	sim_unlock(m->f);
	if (!(ctl & PCI_MSIX_FLAGS_ENABLE) || (ctl & PCI_MSIX_FLAGS_MASKALL))
		return 0;
	for (v = 0; v < m->ops->msix_vectors; v++) {
		if (!(sim_rd32(m->bar[0] + m->msix_pba + 4 * (v / 32)) &
		      (1u << (v % 32))) || msix_masked(m, v))
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
		fd = sim_file_open(m->f, path, O_RDWR);
		if (fd < 0)
			return fd;
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
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), RUNNER_NICE);
	while (!__atomic_load_n(&ms->stop, __ATOMIC_ACQUIRE)) {
		int work = 0;
		u64 wake = 0;
		u32 i;

		for (i = 0; i < ms->n; i++) {
			u64 w;

			ms->m[i].wake_ns = 0;
			work += sim_model_follow(&ms->m[i]) > 0;
			work += ms->m[i].ops->poll(&ms->m[i]) > 0;
			work += sim_model_irq_pending(&ms->m[i]) > 0;
			w = ms->m[i].wake_ns;
			wake = w && (!wake || w < wake) ? w : wake;
		}
		if (work) {
			idle_us = IDLE_MIN_US;
			last_work = mono_ns();
			continue;
		}
		/*
		 * A paced completion is due: sleep towards it when it is far
		 * (the other models' doorbells wait as long, at most one
		 * transfer's time), spin for the last stretch, which a nap
		 * would overshoot by tens of microseconds.
		 */
		if (wake) {
			sim_wait_until(wake > WAKE_EARLY_NS ? wake - WAKE_EARLY_NS
							    : wake);
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

/* Marks every model's device as run (or no longer run) by this process. */
static void set_runners(struct sim_fabric *f, const struct sim_models *ms,
			int on)
{
	u32 i;

	sim_lock(f);
	for (i = 0; i < ms->n; i++)
		sim_runner_set(f, ms->m[i].dev, on);
	sim_unlock(f);
}

static void drop_models(struct sim_fabric *f, struct sim_models *ms)
{
	set_runners(f, ms, 0);
	f->models = NULL;
	free_models(ms);
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
		/*
		 * Claim the device as its runner and map its BARs in one hold
		 * of the lock: a borrower's return in between would otherwise
		 * see no runner, move the BARs itself and truncate the files
		 * just mapped, and init() would die of SIGBUS.
		 */
		sim_lock(f);
		sim_runner_set(f, i, 1);
		err = map_bars(m);
		sim_unlock(f);
		if (!err)
			err = ops->init(m);
		if (err) {
			unmap_bars(m);
			sim_lock(f);
			sim_runner_set(f, i, 0);
			sim_unlock(f);
		} else {
			ms->n++;
		}
	}
	if (!err && ms->n) {
		set_runners(f, ms, 1);
		f->models = ms;
		err = -pthread_create(&ms->thread, NULL, runner, f);
		if (!err)
			pthread_setname_np(ms->thread, "sim-models");
	}
	if (err || !ms->n)
		drop_models(f, ms);
	return err;
}

void sim_models_stop(struct sim_fabric *f)
{
	struct sim_models *ms = f->models;

	if (!ms)
		return;
	__atomic_store_n(&ms->stop, 1, __ATOMIC_RELEASE);
	pthread_join(ms->thread, NULL);
	drop_models(f, ms);
}
