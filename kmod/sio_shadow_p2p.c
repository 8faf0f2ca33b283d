// SPDX-License-Identifier: GPL-2.0
/*
 * Peer-to-peer for an unmodified driver over an NTB (SmartIO section 4.4):
 * a driver of a borrowed device A that maps another device's BAR for DMA
 * (dma_map_resource, or a p2pdma page in a scatterlist) gets A's address
 * of that BAR, made as a user's /smartio/dev/A/peers/B makes it.  The BAR
 * is found by its address on this machine: another borrowed device's
 * shadow (the outbound window onto its lender's BAR) or a device of this
 * machine in the registry.  The first mapping of a pair asks the core for
 * the pair (SIO_CMD_PEER_MAP as this node's own request, which goes
 * through the same three cases: B lent by A's lender, B on this machine,
 * B on a third machine); the pair then stays mapped until either device
 * is returned, as a user's peer mapping does, and later mappings are
 * address arithmetic on the registry's record.  Talking to the lenders
 * sleeps: these mappings may not be made in atomic context.  p2pdma
 * pages in a scatterlist are not handled: Debian's kernels are built
 * without CONFIG_PCI_P2PDMA, so none exist to test with.
 */
#include <linux/dma-map-ops.h>
#include <linux/wait_bit.h>

#include "sio_shadow.h"

/* BAR of pdev holding [phys, phys + size), its offset: 0 or -ENODEV. */
static int bar_of(struct pci_dev *pdev, phys_addr_t phys, size_t size,
		  u32 *bar, u64 *off)
{
	int b;

	for (b = 0; b < PCI_STD_NUM_BARS; b++) {
		resource_size_t start = pci_resource_start(pdev, b);
		resource_size_t len = pci_resource_len(pdev, b);

		if (!(pci_resource_flags(pdev, b) & IORESOURCE_MEM) || !len ||
		    phys < start || phys - start >= len ||
		    size > len - (phys - start))
			continue;
		*bar = b;
		*off = phys - start;
		return 0;
	}
	return -ENODEV;
}

/*
 * The registry index of the device whose BAR holds [phys, phys + size)
 * on this machine (not the asking shadow's own), its BAR and the offset;
 * -ENODEV when no device smartio knows has it.  Under sio_k.lock.
 */
static int bar_owner(struct sio_shadow *sh, phys_addr_t phys, size_t size,
		     u32 *bar, u64 *off)
{
	struct sio_shadow *other;
	u32 i;

	for (i = 0; i < sio_k.ndevs; i++)
		if (sio_k.dev[i].pdev &&
		    !bar_of(sio_k.dev[i].pdev, phys, size, bar, off))
			return sio_k.dev[i].index;
	for (i = 0; i < sio_k.reg->ndevices; i++) {
		other = sio_ntb_lend_shadow(i);
		if (other && other != sh && other->pdev &&
		    !bar_of(other->pdev, phys, size, bar, off))
			return i;
	}
	return -ENODEV;
}

/* A's address of BAR bar of peer, as this node's pair record says (0: none). */
static u64 pair_addr(u32 dev, u32 peer, u32 bar)
{
	struct sio_registry *r = sio_k.reg;
	u32 i;

	for (i = 0; i < r->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used && m->kind == SIO_PEERMAP_COPY && m->dev == dev &&
		    m->peer == peer && m->bar == bar && m->node == sio_k.self)
			return m->ioaddr;
	}
	return 0;
}

/* PEER_MAP for (A, peer) as this node's own request: 0 or its errno. */
static int pair_map(struct sio_shadow *sh, u32 peer_fdid)
{
	struct sio_k_req *q = sio_k_req_new(SIO_CMD_PEER_MAP);
	int err;

	if (!q)
		return -ENOMEM;
	sio_msg_put_u32(&q->m, SIO_A_DEV, sh->fdid);
	sio_msg_put_u32(&q->m, SIO_A_NODE, sh->borrower);
	sio_msg_put_u32(&q->m, SIO_A_INDEX, peer_fdid);
	err = sio_k_req_send(q);
	return err == -EEXIST ? 0 : err;
}

/*
 * A's address of [phys, phys + size), a BAR of another device, or
 * DMA_MAPPING_ERROR (logged: a driver's p2p attempt smartio cannot carry).
 */
dma_addr_t sio_shadow_p2p_map(struct device *dev, phys_addr_t phys,
			      size_t size, enum dma_data_direction dir,
			      unsigned long attrs)
{
	struct sio_shadow *sh = sio_dev_shadow(dev);
	u32 a = sh->kd->index, bar = 0, fdid = 0;
	int peer, err = 0;
	u64 off = 0, addr;

	might_sleep();
	mutex_lock(&sio_k.lock);
	peer = bar_owner(sh, phys, size, &bar, &off);
	addr = peer < 0 ? 0 : pair_addr(a, peer, bar);
	if (peer >= 0)
		fdid = sio_dev(sio_k.reg, peer)->fdid;
	mutex_unlock(&sio_k.lock);
	if (peer < 0) {
		err = peer;
	} else if (!addr) {
		err = pair_map(sh, fdid);
		mutex_lock(&sio_k.lock);
		addr = err ? 0 : pair_addr(a, peer, bar);
		mutex_unlock(&sio_k.lock);
		if (!err && !addr)
			err = -ENOENT;
	}
	if (err) {
		dev_warn_ratelimited(dev, "smartio: peer-to-peer mapping of %pa+%#zx refused: %d\n",
				     &phys, size, err);
		return DMA_MAPPING_ERROR;
	}
	atomic64_inc(&sh->maps);
	atomic_inc(&sh->live);
	return addr + off;
}

void sio_shadow_p2p_unmap(struct device *dev, dma_addr_t addr, size_t size,
			  enum dma_data_direction dir, unsigned long attrs)
{
	struct sio_shadow *sh = sio_dev_shadow(dev);

	/* The pair stays mapped until a device is returned. */
	if (atomic_dec_and_test(&sh->live))
		wake_up_var(&sh->live);
}
