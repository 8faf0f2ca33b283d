// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A simulated DMA accelerator in the spirit of ffLink: device memory in
 * BAR 2 and four DMA engines that copy between any two addresses the
 * device can reach, completing with an MSI-X (or MSI) interrupt.
 *
 *   BAR 0  0x000 ID "SDMA" (0x414d4453)   0x004 version (1)
 *          0x008 engines (4)               0x010 BAR 2 bus address (64)
 *          0x018 BAR 2 size (64)
 *          0x100 + 0x40 * e: engine e
 *            +0x00 SRC (64)  +0x08 DST (64)  +0x10 LEN (32, bytes)
 *            +0x14 CTRL: bit 0 GO (cleared when taken), bit 1 interrupt
 *            +0x18 STATUS: bit 0 busy, bit 1 done, bit 2 error
 *            +0x1c VECTOR: MSI-X vector raised on completion
 *            +0x20 completed transfers (64)  +0x28 faulting address (64)
 *          0x8000 MSI-X table (8 vectors), 0x9000 pending bits
 *   BAR 2  device memory
 *
 * An address inside the device's own BAR 2 is served from its memory;
 * any other goes out through sim_dma() and the translation chain, so a
 * transfer outside the device's DMA windows is blocked, fails with the
 * error bit and is reported as a dma-fault.  Busy engines advance one
 * chunk each per pass, so several transfers progress side by side.
 *
 * Paced (pace.c), a transfer takes what ffLink's CDMA engines take: a
 * setup before the first byte moves (DMA_SETUP_NS), during which the link
 * is free for the other engines, then each chunk's time on the link the
 * engines share, and its completion is reported only when its last chunk
 * would have arrived.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devmodel.h"

#define DMA_ID 0x414d4453u
#define DMA_ENGINES 4
/*
 * What an engine moves per pass.  Each chunk pays for the lock, the
 * translation and the mapping look-up of sim_dma(); at 64 KiB that was
 * about a third of a warm copy's time, at 1 MiB it is lost in the copy,
 * and four busy engines still take turns every few hundred microseconds.
 */
#define DMA_CHUNK (1u << 20)
/*
 * What an engine spends on a transfer before its first byte moves:
 * fetching its registers, arbitration, the first read's round trip.
 * Chosen from ffLink's table (section 8.2): one engine moving 1 MiB
 * transfers (143.5 us each at Gen3 x8) reached 0.86 of its link with
 * zero-copy and 0.92 with double buffering, about 12 to 23 us per
 * transfer besides its bytes, interrupt and driver included.  With 15 us
 * here and a few of the driver's own, one engine keeps the link about
 * 0.89 busy, and four, whose setups overlap the others' transfers, keep
 * it full.
 */
#define DMA_SETUP_NS 15000ull
#define ENG(e) (0x100u + 0x40u * (e))

enum { E_SRC = 0x00, E_DST = 0x08, E_LEN = 0x10, E_CTRL = 0x14,
       E_STATUS = 0x18, E_VECTOR = 0x1c, E_COUNT = 0x20, E_ERRADDR = 0x28 };

#define CTRL_GO 0x1u
#define CTRL_IRQ 0x2u
#define ST_BUSY 0x1u
#define ST_DONE 0x2u
#define ST_ERROR 0x4u

struct engine {
	int busy;
	u64 src, dst;
	u32 len, done, vector;
	int irq;
	u64 ready;		/* paced: nothing more happens before (ns) */
	u8 buf[DMA_CHUNK];
};

struct dmaeng {
	struct engine eng[DMA_ENGINES];
};

static u8 *ereg(struct sim_devmodel *m, u32 e, u32 off)
{
	return m->bar[0] + ENG(e) + off;
}

static int dma_init(struct sim_devmodel *m)
{
	struct dmaeng *s;
	u32 e;

	if (m->bar_size[0] < 0xa000 || !m->bar[2])
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	m->priv = s;
	sim_wr32(m->bar[0] + 0x000, DMA_ID);
	sim_wr32(m->bar[0] + 0x004, 1);
	sim_wr32(m->bar[0] + 0x008, DMA_ENGINES);
	sim_wr64(m->bar[0] + 0x010, m->bar_addr[2]);
	sim_wr64(m->bar[0] + 0x018, m->bar_size[2]);
	for (e = 0; e < DMA_ENGINES; e++) {
		sim_wr32(ereg(m, e, E_CTRL), 0);
		sim_wr32(ereg(m, e, E_STATUS), 0);
	}
	return 0;
}

static void dma_fini(struct sim_devmodel *m)
{
	free(m->priv);
	m->priv = NULL;
}

/* Own memory when [addr, addr+len) is inside BAR 2, else NULL. */
static u8 *local(struct sim_devmodel *m, u64 addr, u32 len)
{
	if (addr < m->bar_addr[2] || addr - m->bar_addr[2] >= m->bar_size[2] ||
	    len > m->bar_size[2] - (addr - m->bar_addr[2]))
		return NULL;
	return m->bar[2] + (addr - m->bar_addr[2]);
}

/* Moves the next n bytes; g->ready becomes when they are through. */
static int move(struct sim_devmodel *m, struct engine *g, u32 n, u64 *bad)
{
	u64 src = g->src + g->done, dst = g->dst + g->done, t = 0;
	u8 *ls = local(m, src, n), *ld = local(m, dst, n);

	g->ready = 0;
	if (ls && ld) {
		memmove(ld, ls, n);
		return 0;
	}
	/* Own memory on one side: the fabric copies straight to or from it. */
	if (ld || !ls) {
		if (sim_model_dma_start(m, src, ld ? ld : g->buf, n, 0, &t)) {
			*bad = src;
			return -EFAULT;
		}
		g->ready = t;
		if (ld)
			return 0;
	}
	/* The write's link time is reserved after the read's. */
	if (sim_model_dma_start(m, dst, ls ? ls : g->buf, n, 1, &t)) {
		*bad = dst;
		return -EFAULT;
	}
	g->ready = t > g->ready ? t : g->ready;
	return 0;
}

static void finish(struct sim_devmodel *m, u32 e, struct engine *g, u32 st)
{
	u8 *cnt = ereg(m, e, E_COUNT);

	g->busy = 0;
	sim_wr64(cnt, sim_rd64(cnt) + 1);
	sim_wr32(ereg(m, e, E_STATUS), st);
	/* The transfer stands; only the interrupt is lost, as before. */
	if (g->irq && sim_model_irq(m, g->vector) == -EINVAL)
		sim_model_driver_error(m, SIM_DRV_BAD_VECTOR,
				       "engine %u asked for MSI-X vector %u of %u",
				       e, g->vector, m->ops->msix_vectors);
}

static int dma_poll(struct sim_devmodel *m)
{
	struct dmaeng *s = m->priv;
	int work = 0;
	u32 e;

	for (e = 0; e < DMA_ENGINES; e++) {
		struct engine *g = &s->eng[e];
		u32 n;
		u64 bad = 0;

		if (!g->busy) {
			u32 ctrl = sim_rd32(ereg(m, e, E_CTRL));

			if (!(ctrl & CTRL_GO))
				continue;
			__atomic_fetch_and((u32 *)ereg(m, e, E_CTRL), ~CTRL_GO,
					   __ATOMIC_ACQ_REL);
			g->src = sim_rd64(ereg(m, e, E_SRC));
			g->dst = sim_rd64(ereg(m, e, E_DST));
			g->len = sim_rd32(ereg(m, e, E_LEN));
			g->vector = sim_rd32(ereg(m, e, E_VECTOR));
			g->irq = !!(ctrl & CTRL_IRQ);
			g->done = 0;
			g->busy = 1;
			g->ready = m->f->pace ? sim_now_ns() + DMA_SETUP_NS : 0;
			sim_wr32(ereg(m, e, E_STATUS), ST_BUSY);
		}
		if (g->ready && sim_now_ns() < g->ready) {
			sim_model_wake_at(m, g->ready);
			continue;
		}
		work++;
		if (g->ready && g->done == g->len) {	/* paced: arrived */
			finish(m, e, g, ST_DONE);
			continue;
		}
		n = g->len - g->done < DMA_CHUNK ? g->len - g->done : DMA_CHUNK;
		if (n && move(m, g, n, &bad)) {
			sim_wr64(ereg(m, e, E_ERRADDR), bad);
			finish(m, e, g, ST_DONE | ST_ERROR);
			continue;
		}
		g->done += n;
		if (g->done == g->len && !g->ready)
			finish(m, e, g, ST_DONE);
	}
	return work;
}

const struct sim_model_ops sim_dmaeng_ops = {
	.name = "dma",
	.msix_vectors = 8,
	.msix_table = 0x8000,
	.msix_pba = 0x9000,
	.init = dma_init,
	.poll = dma_poll,
	.fini = dma_fini,
};
