/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Device models of the simulated fabric: devices that do real work.
 *
 * The process that serves a node runs the models of the devices installed
 * in it, in one thread.  A model cannot trap the CPU's writes to its BARs
 * (they go straight into an mmap of the BAR's backing file), so it polls
 * its registers and doorbells, backing off while nothing happens so that
 * an idle cluster costs almost no CPU.  It reaches memory only with
 * sim_dma() (the whole translation chain: a blocked transaction is counted
 * and reported as a dma-fault event) and interrupts with an MSI or MSI-X
 * write of the programmed data to the programmed address.
 */
#ifndef SIO_SIM_DEVMODEL_H
#define SIO_SIM_DEVMODEL_H

#include "fabric.h"
#include "le.h"

/* Where the models put their MSI-X capability in configuration space. */
#define SIM_CAP_MSI 0x50
#define SIM_CAP_MSIX 0x70

struct sim_devmodel;

struct sim_model_ops {
	const char *name;
	/* Table layout for the MSI-X capability (BAR 0 offsets); a model
	 * whose layout depends on BAR 0's size gives msix_layout instead. */
	u32 msix_vectors, msix_table, msix_pba;
	void (*msix_layout)(u64 bar0_size, u32 *table, u32 *pba);
	/* Sets power-on register values; allocates m->priv. */
	int (*init)(struct sim_devmodel *m);
	/* One pass over registers and queues: >0 if work was done. */
	int (*poll)(struct sim_devmodel *m);
	void (*fini)(struct sim_devmodel *m);
};

struct sim_devmodel {
	struct sim_fabric *f;
	u32 dev;
	const struct sim_model_ops *ops;
	u8 *bar[SIO_MAX_BARS];	/* mmap of the BAR backing files */
	u64 bar_size[SIO_MAX_BARS];
	u64 bar_addr[SIO_MAX_BARS];	/* lender-local bus address */
	u32 msix_table, msix_pba;	/* BAR 0 offsets */
	u32 logged;			/* bit k: enum sim_drv_err k logged */
	/* Set by poll when work waits for a paced completion time: the
	 * earliest (CLOCK_MONOTONIC ns), 0 for none.  The runner wakes for
	 * it instead of napping past it. */
	u64 wake_ns;
	void *priv;
};

/*
 * What a driver can do wrong that a model notices: QEMU's guest errors.
 * A model cannot trap BAR accesses, so it sees them where it reads them:
 * a doorbell value when it polls, an address when it uses it.
 */
enum sim_drv_err {
	SIM_DRV_BAD_DOORBELL,	/* a doorbell value beyond its queue */
	SIM_DRV_BAD_QUEUE,	/* a doorbell of a queue that does not exist */
	SIM_DRV_MISALIGNED,	/* an address the device requires aligned */
	SIM_DRV_BAD_VECTOR,	/* an interrupt vector beyond the MSI-X table */
};

/* The ops of a topology model (enum sio_dev_model), NULL for generic. */
const struct sim_model_ops *sim_model_ops_of(u32 model);
/* Adds the model's capabilities (MSI-X) to a fresh configuration space. */
void sim_model_cfg_init(u32 model, u64 bar0_size, u8 *cfg);

/*
 * A function's configuration space (cfg_space.c).  sim_cfg_layout fills
 * c (zeroed) as firmware leaves it; vf0 is its first VF when it is an
 * SR-IOV PF, else NULL.  sim_cfg_write applies a write of len bytes at
 * off as the registers take it: read-only bits keep their values,
 * write-1-to-clear bits clear where a 1 is written, BARs keep their size
 * alignment.
 */
void sim_cfg_layout(u8 *c, const struct sio_device *d,
		    const struct sio_device *vf0);
void sim_cfg_write(u8 *c, const struct sio_device *d,
		   const struct sio_device *vf0, u32 off, const u8 *src,
		   u32 len);

/* Starts the runner for the served nodes' devices; stops it.  Idempotent. */
int sim_models_start(struct sim_fabric *f);
void sim_models_stop(struct sim_fabric *f);

/* Moves the model onto fresh BAR files when asked (revoke.c): >0 if it
 * did, 0 if not asked, or -errno. */
int sim_model_follow(struct sim_devmodel *m);

/* Helpers for the models. */
/* Counts a breach in the device's stats (driver_errors) and logs the first
 * of each kind on stderr; the model then goes on as the hardware would. */
void sim_model_driver_error(struct sim_devmodel *m, enum sim_drv_err kind,
			    const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* DMA through the fabric, paced: returns when it completes (pace.c). */
int sim_model_dma(struct sim_devmodel *m, u64 addr, void *buf, size_t len,
		  int write);
/* The same, returning at once: *done_ns is its completion time, 0 if
 * unpaced; the model holds back what depends on it until then. */
int sim_model_dma_start(struct sim_devmodel *m, u64 addr, void *buf,
			size_t len, int write, u64 *done_ns);
/* Asks the runner to poll again by time t (CLOCK_MONOTONIC ns) at the
 * latest: work of the model waits for a paced completion then. */
static inline void sim_model_wake_at(struct sim_devmodel *m, u64 t)
{
	if (!m->wake_ns || t < m->wake_ns)
		m->wake_ns = t;
}
/* Raises vector vec by MSI-X or MSI, as configured; 0 if delivered or
 * left pending (masked), -ENODEV when interrupts are not enabled. */
int sim_model_irq(struct sim_devmodel *m, u32 vec);
/* Delivers pending MSI-X vectors that were unmasked; >0 if any. */
int sim_model_irq_pending(struct sim_devmodel *m);

static inline u32 sim_rd32(const u8 *p)
{
	return __atomic_load_n((const u32 *)p, __ATOMIC_ACQUIRE);
}

static inline void sim_wr32(u8 *p, u32 v)
{
	__atomic_store_n((u32 *)p, v, __ATOMIC_RELEASE);
}

static inline u64 sim_rd64(const u8 *p)
{
	return (u64)sim_rd32(p) | (u64)sim_rd32(p + 4) << 32;
}

static inline void sim_wr64(u8 *p, u64 v)
{
	sim_wr32(p, (u32)v);
	sim_wr32(p + 4, (u32)(v >> 32));
}

extern const struct sim_model_ops sim_nvme_ops;
extern const struct sim_model_ops sim_dmaeng_ops;

#endif /* SIO_SIM_DEVMODEL_H */
