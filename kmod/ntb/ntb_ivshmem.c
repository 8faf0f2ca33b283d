// SPDX-License-Identifier: GPL-2.0
/*
 * ntb_ivshmem: a software non-transparent bridge between two QEMU guests
 * that share an ivshmem-doorbell device (PCI 1af4:1110), registered with
 * the mainline NTB framework so that ntb_tool, ntb_pingpong, ntb_perf,
 * ntb_transport and smartio drive it like NTB hardware.
 *
 * The shared region (BAR2) holds, per side (ivshmem id modulo 2: run
 * smartio-ivshmem-server with -p 2, which never reuses an id), a control
 * page: an "alive" magic, a per-load nonce, a heartbeat the owner bumps
 * every tick, the owner's link-enable bit and its inbound scratchpads.
 * The link is up while both drivers are loaded, both heartbeats move and
 * both sides have enabled the link; a peer whose heartbeat stops (powered
 * off, crashed) is down after peer_timeout_ms, a peer with a new nonce
 * (reloaded, rebooted) goes down and comes back up.
 *
 * Doorbell bit b is ivshmem interrupt vector b + 1; vector 0 tells the
 * peer to look at the control pages now rather than at its next tick.
 *
 * Memory windows cannot translate: writes through the peer's outbound
 * window land at a fixed place of the shared region.  Window w of side s
 * is the naturally aligned slot (s * mw_count + w + 1) of size wsize, and
 * mw_set_trans() accepts only that slot's address.  To let clients get
 * such an address the usual way, this driver gives the PCI device a
 * coherent DMA allocator over its own side's slots: dma_alloc_coherent()
 * on ntb->pdev->dev (up to wsize bytes) returns the slot of the window
 * last passed to mw_get_align() (what ntb_tool, ntb_perf and
 * ntb_transport do before allocating), else the lowest free slot.
 */

#include <linux/bitops.h>
#include <linux/dma-map-ops.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/ntb.h>
#include <linux/pci.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "sio_kcompat.h"

#define IVNTB_NAME		"ntb_ivshmem"

/* ivshmem BAR0 registers (QEMU docs/specs/ivshmem-spec.rst) */
#define IVSHMEM_IVPOSITION	0x08
#define IVSHMEM_DOORBELL	0x0c
#define IVSHMEM_BAR_REGS	0
#define IVSHMEM_BAR_SHM		2

#define IVNTB_MAGIC		0x31544e49	/* "INT1" */
#define IVNTB_VERSION		1
#define IVNTB_SIDES		2
#define IVNTB_SIDE_STRIDE	SZ_4K
#define IVNTB_CTRL_SIZE		SZ_64K
#define IVNTB_SPADS		16
#define IVNTB_MAX_MWS		8
#define IVNTB_MAX_DB		32
#define IVNTB_CTRL_VECTOR	0

/* One side's control page, at side * IVNTB_SIDE_STRIDE of the region. */
struct ivntb_side {
	__le32 magic;		/* IVNTB_MAGIC while the owner's driver is bound */
	__le32 version;
	__le32 nonce;		/* random at every probe */
	__le32 heartbeat;	/* bumped by the owner every tick */
	__le32 link_enabled;	/* the owner called ntb_link_enable() */
	__le32 db_count;
	__le32 mw_count;
	__le32 wsize_shift;
	__le32 ivposition;	/* the owner's ivshmem id, for doorbells */
	__le32 reserved;
	__le64 mw_trans[IVNTB_MAX_MWS];	/* inbound sizes set, 0: none */
	__le32 spad[IVNTB_SPADS];	/* written by both sides */
};

static unsigned int mw_count = 2;
module_param(mw_count, uint, 0444);
MODULE_PARM_DESC(mw_count, "Memory windows per side (1-8), the same on both");

static unsigned int peer_timeout_ms = 3000;
module_param(peer_timeout_ms, uint, 0644);
MODULE_PARM_DESC(peer_timeout_ms, "Link goes down when the peer's heartbeat stops this long");

static unsigned int tick_ms = 100;
module_param(tick_ms, uint, 0444);
MODULE_PARM_DESC(tick_ms, "Heartbeat and link poll period");

struct ivntb;

struct ivntb_vec {
	struct ivntb *iv;
	int vector;
};

struct ivntb {
	struct ntb_dev ntb;
	struct ivntb_vec *vecs;
	struct pci_dev *pdev;
	void __iomem *regs;
	struct ivntb_side __iomem *me;
	struct ivntb_side __iomem *peer;
	void __iomem *ctrl;
	phys_addr_t shm_phys;
	resource_size_t shm_size;
	resource_size_t wsize;
	void *pool;		/* our inbound slots, memremap()ed */
	unsigned long pool_used;	/* bit per slot */
	int alloc_hint;		/* window of the last mw_get_align(), or -1 */
	spinlock_t pool_lock;	/* pool_used */
	struct sio_dma_ops_saved saved_dma_ops;
	u32 ivposition;
	int side;
	int peer_side;
	int nvec;
	int db_count;
	u64 db_valid;

	spinlock_t db_lock;	/* db_status, db_mask */
	u64 db_status;
	u64 db_mask;
	struct work_struct db_work;

	struct delayed_work link_work;
	u32 heartbeat;
	u32 peer_nonce;
	u32 peer_hb;
	unsigned long peer_seen;	/* jiffies of the last heartbeat change */
	bool peer_alive;
	bool link_enabled;
	bool link_up;
	bool mismatch_warned;
};

static inline struct ivntb *ntb_ivntb(struct ntb_dev *ntb)
{
	return container_of(ntb, struct ivntb, ntb);
}

static void ivntb_ring(struct ivntb *iv, int vector)
{
	u32 id = ioread32(&iv->peer->ivposition);

	/* No doorbells into a page that no peer driver owns. */
	if (ioread32(&iv->peer->magic) != IVNTB_MAGIC || id == iv->ivposition)
		return;
	iowrite32((id & 0xffff) << 16 | vector, iv->regs + IVSHMEM_DOORBELL);
}

static resource_size_t ivntb_slot_off(struct ivntb *iv, int side, int widx)
{
	return (resource_size_t)(side * mw_count + widx + 1) * iv->wsize;
}

/* --- link ------------------------------------------------------------ */

static bool ivntb_peer_compatible(struct ivntb *iv)
{
	struct ivntb_side __iomem *p = iv->peer;

	if (ioread32(&p->version) == IVNTB_VERSION &&
	    ioread32(&p->db_count) == iv->db_count &&
	    ioread32(&p->mw_count) == mw_count &&
	    ioread32(&p->wsize_shift) == ilog2(iv->wsize))
		return true;
	if (!iv->mismatch_warned)
		dev_warn(&iv->pdev->dev,
			 "peer %d: version %u, %u doorbells, %u windows of 2^%u; here: %u, %d, %u of 2^%u: no link\n",
			 iv->peer_side, ioread32(&p->version),
			 ioread32(&p->db_count), ioread32(&p->mw_count),
			 ioread32(&p->wsize_shift), IVNTB_VERSION,
			 iv->db_count, mw_count, ilog2(iv->wsize));
	iv->mismatch_warned = true;
	return false;
}

static void ivntb_link_work(struct work_struct *work)
{
	struct ivntb *iv = container_of(to_delayed_work(work), struct ivntb,
					link_work);
	struct ivntb_side __iomem *p = iv->peer;
	bool restarted = false, up;
	u32 nonce, hb;

	iowrite32(++iv->heartbeat, &iv->me->heartbeat);

	if (ioread32(&p->magic) != IVNTB_MAGIC) {
		iv->peer_alive = false;
	} else {
		nonce = ioread32(&p->nonce);
		hb = ioread32(&p->heartbeat);
		if (nonce != iv->peer_nonce) {
			/* A new load of the peer's driver: a new peer. */
			restarted = iv->peer_nonce != 0;
			iv->peer_nonce = nonce;
			iv->peer_hb = hb;
			iv->peer_alive = false;
			iv->mismatch_warned = false;
		} else if (hb != iv->peer_hb) {
			iv->peer_hb = hb;
			iv->peer_seen = jiffies;
			iv->peer_alive = ivntb_peer_compatible(iv);
		} else if (time_after(jiffies, iv->peer_seen +
				      msecs_to_jiffies(peer_timeout_ms))) {
			if (iv->peer_alive)
				dev_info(&iv->pdev->dev,
					 "peer %d: no heartbeat for %u ms\n",
					 iv->peer_side, peer_timeout_ms);
			iv->peer_alive = false;
		}
	}

	up = iv->link_enabled && iv->peer_alive &&
	     ioread32(&p->link_enabled) == 1;
	if (restarted && iv->link_up) {
		dev_info(&iv->pdev->dev, "peer %d restarted\n", iv->peer_side);
		up = false;
	}
	if (up != READ_ONCE(iv->link_up)) {
		WRITE_ONCE(iv->link_up, up);
		dev_info(&iv->pdev->dev, "link %s (peer %d)\n",
			 up ? "up" : "down", iv->peer_side);
		ntb_link_event(&iv->ntb);
		ivntb_ring(iv, IVNTB_CTRL_VECTOR);
	}

	queue_delayed_work(system_wq, &iv->link_work,
			   msecs_to_jiffies(tick_ms));
}

static void ivntb_link_poll_now(struct ivntb *iv)
{
	mod_delayed_work(system_wq, &iv->link_work, 0);
}

static u64 ivntb_link_is_up(struct ntb_dev *ntb, enum ntb_speed *speed,
			    enum ntb_width *width)
{
	struct ivntb *iv = ntb_ivntb(ntb);
	bool up = READ_ONCE(iv->link_up);

	/* Not a PCIe link: there is no speed or width to report. */
	if (speed)
		*speed = up ? NTB_SPEED_AUTO : NTB_SPEED_NONE;
	if (width)
		*width = up ? NTB_WIDTH_AUTO : NTB_WIDTH_NONE;
	return up ? BIT_ULL(0) : 0;
}

static int ivntb_link_enable(struct ntb_dev *ntb, enum ntb_speed max_speed,
			     enum ntb_width max_width)
{
	struct ivntb *iv = ntb_ivntb(ntb);

	iv->link_enabled = true;
	iowrite32(1, &iv->me->link_enabled);
	ivntb_ring(iv, IVNTB_CTRL_VECTOR);
	ivntb_link_poll_now(iv);
	return 0;
}

static int ivntb_link_disable(struct ntb_dev *ntb)
{
	struct ivntb *iv = ntb_ivntb(ntb);

	iv->link_enabled = false;
	iowrite32(0, &iv->me->link_enabled);
	ivntb_ring(iv, IVNTB_CTRL_VECTOR);
	ivntb_link_poll_now(iv);
	return 0;
}

/* --- ports ----------------------------------------------------------- */

static int ivntb_port_number(struct ntb_dev *ntb)
{
	return ntb_ivntb(ntb)->side;
}

static int ivntb_peer_port_count(struct ntb_dev *ntb)
{
	return 1;
}

static int ivntb_peer_port_number(struct ntb_dev *ntb, int pidx)
{
	if (pidx != 0)
		return -EINVAL;
	return ntb_ivntb(ntb)->peer_side;
}

static int ivntb_peer_port_idx(struct ntb_dev *ntb, int port)
{
	return port == ntb_ivntb(ntb)->peer_side ? 0 : -EINVAL;
}

/* --- memory windows -------------------------------------------------- */

static int ivntb_mw_count(struct ntb_dev *ntb, int pidx)
{
	return pidx == 0 ? mw_count : -EINVAL;
}

static int ivntb_mw_get_align(struct ntb_dev *ntb, int pidx, int widx,
			      resource_size_t *addr_align,
			      resource_size_t *size_align,
			      resource_size_t *size_max)
{
	struct ivntb *iv = ntb_ivntb(ntb);

	if (pidx != 0 || widx < 0 || widx >= mw_count)
		return -EINVAL;
	/*
	 * Clients ask for the alignment of window widx just before they
	 * allocate its buffer: the allocation takes widx's slot if it can.
	 */
	WRITE_ONCE(iv->alloc_hint, widx);
	/* A slot is wsize-aligned; only its own start will do. */
	if (addr_align)
		*addr_align = iv->wsize;
	if (size_align)
		*size_align = PAGE_SIZE;
	if (size_max)
		*size_max = iv->wsize;
	return 0;
}

static int ivntb_mw_set_trans(struct ntb_dev *ntb, int pidx, int widx,
			      dma_addr_t addr, resource_size_t size)
{
	struct ivntb *iv = ntb_ivntb(ntb);
	dma_addr_t slot;

	if (pidx != 0 || widx < 0 || widx >= mw_count)
		return -EINVAL;
	if (!addr && !size) {
		iowrite32(0, &iv->me->mw_trans[widx]);
		return 0;
	}
	slot = iv->shm_phys + ivntb_slot_off(iv, iv->side, widx);
	if (addr != slot || !size || size > iv->wsize ||
	    !IS_ALIGNED(size, PAGE_SIZE)) {
		dev_dbg(&iv->pdev->dev,
			"mw%d: %pad+%pa refused: only the shared slot %pad, up to %pa, translates\n",
			widx, &addr, &size, &slot, &iv->wsize);
		return -EINVAL;
	}
	iowrite32(lower_32_bits(size), &iv->me->mw_trans[widx]);
	iowrite32(upper_32_bits(size), (u32 __iomem *)&iv->me->mw_trans[widx] + 1);
	return 0;
}

static int ivntb_mw_clear_trans(struct ntb_dev *ntb, int pidx, int widx)
{
	return ivntb_mw_set_trans(ntb, pidx, widx, 0, 0);
}

static int ivntb_peer_mw_count(struct ntb_dev *ntb)
{
	return mw_count;
}

static int ivntb_peer_mw_get_addr(struct ntb_dev *ntb, int widx,
				  phys_addr_t *base, resource_size_t *size)
{
	struct ivntb *iv = ntb_ivntb(ntb);

	if (widx < 0 || widx >= mw_count)
		return -EINVAL;
	if (base)
		*base = iv->shm_phys + ivntb_slot_off(iv, iv->peer_side, widx);
	if (size)
		*size = iv->wsize;
	return 0;
}

/* --- doorbells ------------------------------------------------------- */

static u64 ivntb_db_valid_mask(struct ntb_dev *ntb)
{
	return ntb_ivntb(ntb)->db_valid;
}

static int ivntb_db_vector_count(struct ntb_dev *ntb)
{
	return ntb_ivntb(ntb)->db_count;
}

static u64 ivntb_db_vector_mask(struct ntb_dev *ntb, int db_vector)
{
	struct ivntb *iv = ntb_ivntb(ntb);

	if (db_vector < 0 || db_vector >= iv->db_count)
		return 0;
	return BIT_ULL(db_vector);
}

/* Deliver events for set, unmasked bits (as hardware does on unmask). */
static void ivntb_db_work(struct work_struct *work)
{
	struct ivntb *iv = container_of(work, struct ivntb, db_work);
	unsigned long flags;
	u64 pending;
	int bit;

	spin_lock_irqsave(&iv->db_lock, flags);
	pending = iv->db_status & ~iv->db_mask;
	spin_unlock_irqrestore(&iv->db_lock, flags);

	for (bit = 0; bit < iv->db_count; bit++)
		if (pending & BIT_ULL(bit))
			ntb_db_event(&iv->ntb, bit);
}

/* Doorbell register reg of iv (its db_status or db_mask), read once. */
static u64 ivntb_db_get(struct ivntb *iv, const u64 *reg)
{
	unsigned long flags;
	u64 v;

	spin_lock_irqsave(&iv->db_lock, flags);
	v = *reg;
	spin_unlock_irqrestore(&iv->db_lock, flags);
	return v;
}

/*
 * Sets or clears db_bits of doorbell register reg (db_status or db_mask),
 * as the NTB API's db_set, db_clear, db_set_mask and db_clear_mask do.  A
 * doorbell that is set, or unmasked, and then set and unmasked is
 * delivered, as hardware raises its interrupt.
 */
static int ivntb_db_change(struct ivntb *iv, u64 *reg, u64 db_bits, bool set)
{
	bool status = reg == &iv->db_status;
	unsigned long flags;
	u64 kick = 0;

	if (db_bits & ~iv->db_valid)
		return -EINVAL;
	spin_lock_irqsave(&iv->db_lock, flags);
	if (set)
		*reg |= db_bits;
	else
		*reg &= ~db_bits;
	if (status == set)
		kick = db_bits & iv->db_status & ~iv->db_mask;
	spin_unlock_irqrestore(&iv->db_lock, flags);
	if (kick)
		schedule_work(&iv->db_work);
	return 0;
}

static u64 ivntb_db_read(struct ntb_dev *ntb)
{
	struct ivntb *iv = ntb_ivntb(ntb);

	return ivntb_db_get(iv, &iv->db_status);
}

static int ivntb_db_set(struct ntb_dev *ntb, u64 db_bits)
{
	struct ivntb *iv = ntb_ivntb(ntb);

	return ivntb_db_change(iv, &iv->db_status, db_bits, true);
}

static int ivntb_db_clear(struct ntb_dev *ntb, u64 db_bits)
{
	struct ivntb *iv = ntb_ivntb(ntb);

	return ivntb_db_change(iv, &iv->db_status, db_bits, false);
}

static u64 ivntb_db_read_mask(struct ntb_dev *ntb)
{
	struct ivntb *iv = ntb_ivntb(ntb);

	return ivntb_db_get(iv, &iv->db_mask);
}

static int ivntb_db_set_mask(struct ntb_dev *ntb, u64 db_bits)
{
	struct ivntb *iv = ntb_ivntb(ntb);

	return ivntb_db_change(iv, &iv->db_mask, db_bits, true);
}

static int ivntb_db_clear_mask(struct ntb_dev *ntb, u64 db_bits)
{
	struct ivntb *iv = ntb_ivntb(ntb);

	return ivntb_db_change(iv, &iv->db_mask, db_bits, false);
}

static int ivntb_peer_db_set(struct ntb_dev *ntb, u64 db_bits)
{
	struct ivntb *iv = ntb_ivntb(ntb);
	int bit;

	if (db_bits & ~iv->db_valid)
		return -EINVAL;
	/* Ignored by QEMU while the peer is not connected, as on a dead link. */
	for (bit = 0; bit < iv->db_count; bit++)
		if (db_bits & BIT_ULL(bit))
			ivntb_ring(iv, bit + 1);
	return 0;
}

static irqreturn_t ivntb_irq(int irq, void *data)
{
	struct ivntb_vec *v = data;
	struct ivntb *iv = v->iv;
	int vector = v->vector;
	unsigned long flags;
	bool deliver;
	u64 bit;

	if (vector == IVNTB_CTRL_VECTOR) {
		ivntb_link_poll_now(iv);
		return IRQ_HANDLED;
	}
	if (vector < 1 || vector > iv->db_count)
		return IRQ_NONE;
	bit = BIT_ULL(vector - 1);
	spin_lock_irqsave(&iv->db_lock, flags);
	iv->db_status |= bit;
	deliver = !(iv->db_mask & bit);
	spin_unlock_irqrestore(&iv->db_lock, flags);
	if (deliver)
		ntb_db_event(&iv->ntb, vector - 1);
	return IRQ_HANDLED;
}

/* --- scratchpads ----------------------------------------------------- */

static int ivntb_spad_count(struct ntb_dev *ntb)
{
	return IVNTB_SPADS;
}

static u32 ivntb_spad_read(struct ntb_dev *ntb, int sidx)
{
	if (sidx < 0 || sidx >= IVNTB_SPADS)
		return 0;
	return ioread32(&ntb_ivntb(ntb)->me->spad[sidx]);
}

static int ivntb_spad_write(struct ntb_dev *ntb, int sidx, u32 val)
{
	if (sidx < 0 || sidx >= IVNTB_SPADS)
		return -EINVAL;
	iowrite32(val, &ntb_ivntb(ntb)->me->spad[sidx]);
	return 0;
}

static u32 ivntb_peer_spad_read(struct ntb_dev *ntb, int pidx, int sidx)
{
	if (pidx != 0 || sidx < 0 || sidx >= IVNTB_SPADS)
		return 0;
	return ioread32(&ntb_ivntb(ntb)->peer->spad[sidx]);
}

static int ivntb_peer_spad_write(struct ntb_dev *ntb, int pidx, int sidx,
				 u32 val)
{
	if (pidx != 0 || sidx < 0 || sidx >= IVNTB_SPADS)
		return -EINVAL;
	iowrite32(val, &ntb_ivntb(ntb)->peer->spad[sidx]);
	return 0;
}

static const struct ntb_dev_ops ivntb_ops = {
	.port_number		= ivntb_port_number,
	.peer_port_count	= ivntb_peer_port_count,
	.peer_port_number	= ivntb_peer_port_number,
	.peer_port_idx		= ivntb_peer_port_idx,
	.link_is_up		= ivntb_link_is_up,
	.link_enable		= ivntb_link_enable,
	.link_disable		= ivntb_link_disable,
	.mw_count		= ivntb_mw_count,
	.mw_get_align		= ivntb_mw_get_align,
	.mw_set_trans		= ivntb_mw_set_trans,
	.mw_clear_trans		= ivntb_mw_clear_trans,
	.peer_mw_count		= ivntb_peer_mw_count,
	.peer_mw_get_addr	= ivntb_peer_mw_get_addr,
	.db_valid_mask		= ivntb_db_valid_mask,
	.db_vector_count	= ivntb_db_vector_count,
	.db_vector_mask		= ivntb_db_vector_mask,
	.db_read		= ivntb_db_read,
	.db_set			= ivntb_db_set,
	.db_clear		= ivntb_db_clear,
	.db_read_mask		= ivntb_db_read_mask,
	.db_set_mask		= ivntb_db_set_mask,
	.db_clear_mask		= ivntb_db_clear_mask,
	.peer_db_set		= ivntb_peer_db_set,
	.spad_count		= ivntb_spad_count,
	.spad_read		= ivntb_spad_read,
	.spad_write		= ivntb_spad_write,
	.peer_spad_read		= ivntb_peer_spad_read,
	.peer_spad_write	= ivntb_peer_spad_write,
};

/* --- the coherent pool over our inbound slots -------------------------- */

static void *ivntb_dma_alloc(struct device *dev, size_t size,
			     dma_addr_t *dma_handle, gfp_t gfp,
			     unsigned long attrs)
{
	struct ivntb *iv = pci_get_drvdata(to_pci_dev(dev));
	unsigned long flags;
	void *va = NULL;
	int w;

	if (!iv || size > iv->wsize)
		return NULL;
	spin_lock_irqsave(&iv->pool_lock, flags);
	w = READ_ONCE(iv->alloc_hint);
	if (w < 0 || w >= mw_count || test_bit(w, &iv->pool_used))
		w = find_first_zero_bit(&iv->pool_used, mw_count);
	WRITE_ONCE(iv->alloc_hint, -1);
	if (w < mw_count) {
		__set_bit(w, &iv->pool_used);
		va = iv->pool + w * iv->wsize;
		*dma_handle = iv->shm_phys + ivntb_slot_off(iv, iv->side, w);
	}
	spin_unlock_irqrestore(&iv->pool_lock, flags);
	if (va)
		memset(va, 0, size);
	return va;
}

static void ivntb_dma_free(struct device *dev, size_t size, void *vaddr,
			   dma_addr_t dma_handle, unsigned long attrs)
{
	struct ivntb *iv = pci_get_drvdata(to_pci_dev(dev));
	unsigned long flags;
	unsigned long w;

	if (!iv || vaddr < iv->pool)
		return;
	w = (vaddr - iv->pool) / iv->wsize;
	if (w >= mw_count)
		return;
	spin_lock_irqsave(&iv->pool_lock, flags);
	__clear_bit(w, &iv->pool_used);
	spin_unlock_irqrestore(&iv->pool_lock, flags);
}

/* The device itself cannot reach guest memory: streaming maps fail. */
static dma_addr_t ivntb_dma_map_page(struct device *dev, struct page *page,
				     unsigned long offset, size_t size,
				     enum dma_data_direction dir,
				     unsigned long attrs)
{
	return DMA_MAPPING_ERROR;
}

static void ivntb_dma_unmap_page(struct device *dev, dma_addr_t addr,
				 size_t size, enum dma_data_direction dir,
				 unsigned long attrs)
{
}

static int ivntb_dma_map_sg(struct device *dev, struct scatterlist *sg,
			    int nents, enum dma_data_direction dir,
			    unsigned long attrs)
{
	return -EIO;
}

static void ivntb_dma_unmap_sg(struct device *dev, struct scatterlist *sg,
			       int nents, enum dma_data_direction dir,
			       unsigned long attrs)
{
}

static const struct dma_map_ops ivntb_dma_ops = {
	.alloc		= ivntb_dma_alloc,
	.free		= ivntb_dma_free,
	.map_page	= ivntb_dma_map_page,
	.unmap_page	= ivntb_dma_unmap_page,
	.map_sg		= ivntb_dma_map_sg,
	.unmap_sg	= ivntb_dma_unmap_sg,
};

/* --- PCI ------------------------------------------------------------- */

static void ivntb_side_init(struct ivntb *iv)
{
	struct ivntb_side __iomem *s = iv->me;

	iowrite32(0, &s->magic);
	wmb();	/* the peer sees a cleared page before a valid magic */
	memset_io(s, 0, sizeof(*s));
	iowrite32(IVNTB_VERSION, &s->version);
	iowrite32(get_random_u32() | 1, &s->nonce);
	iowrite32(iv->db_count, &s->db_count);
	iowrite32(mw_count, &s->mw_count);
	iowrite32(ilog2(iv->wsize), &s->wsize_shift);
	iowrite32(iv->ivposition, &s->ivposition);
	wmb();	/* the page is complete before the magic makes it valid */
	iowrite32(IVNTB_MAGIC, &s->magic);
}

static int ivntb_setup_irqs(struct ivntb *iv)
{
	struct pci_dev *pdev = iv->pdev;
	int i, rc;

	iv->vecs = devm_kcalloc(&pdev->dev, iv->nvec, sizeof(*iv->vecs),
				GFP_KERNEL);
	if (!iv->vecs)
		return -ENOMEM;
	rc = pci_alloc_irq_vectors(pdev, iv->nvec, iv->nvec, PCI_IRQ_MSIX);
	if (rc < 0)
		return rc;
	for (i = 0; i < iv->nvec; i++) {
		iv->vecs[i].iv = iv;
		iv->vecs[i].vector = i;
		rc = request_irq(pci_irq_vector(pdev, i), ivntb_irq, 0,
				 IVNTB_NAME, &iv->vecs[i]);
		if (rc)
			goto err;
	}
	return 0;
err:
	while (--i >= 0)
		free_irq(pci_irq_vector(pdev, i), &iv->vecs[i]);
	pci_free_irq_vectors(pdev);
	return rc;
}

static void ivntb_free_irqs(struct ivntb *iv)
{
	int i;

	for (i = 0; i < iv->nvec; i++)
		free_irq(pci_irq_vector(iv->pdev, i), &iv->vecs[i]);
	pci_free_irq_vectors(iv->pdev);
}

static struct ivntb *ivntb_alloc(struct pci_dev *pdev)
{
	struct ivntb *iv = devm_kzalloc(&pdev->dev, sizeof(*iv), GFP_KERNEL);

	if (!iv)
		return NULL;
	iv->pdev = pdev;
	iv->alloc_hint = -1;
	spin_lock_init(&iv->db_lock);
	spin_lock_init(&iv->pool_lock);
	INIT_WORK(&iv->db_work, ivntb_db_work);
	INIT_DELAYED_WORK(&iv->link_work, ivntb_link_work);
	return iv;
}

/* Doorbells: one per MSI-X vector but vector 0, which is the link's. */
static int ivntb_count_doorbells(struct ivntb *iv)
{
	struct pci_dev *pdev = iv->pdev;

	iv->nvec = pci_msix_vec_count(pdev);
	if (iv->nvec < 2) {
		dev_info(&pdev->dev, "no MSI-X vectors: not an ivshmem-doorbell device with vectors >= 2\n");
		return -ENODEV;
	}
	iv->db_count = min(iv->nvec - 1, IVNTB_MAX_DB);
	iv->db_valid = GENMASK_ULL(iv->db_count - 1, 0);
	return 0;
}

/* BAR0's registers, and from the ivshmem id which side is ours. */
static int ivntb_find_side(struct ivntb *iv)
{
	struct pci_dev *pdev = iv->pdev;
	u32 pos;
	int rc;

	rc = pcim_iomap_regions(pdev, BIT(IVSHMEM_BAR_REGS), IVNTB_NAME);
	if (rc)
		return rc;
	iv->regs = pcim_iomap_table(pdev)[IVSHMEM_BAR_REGS];
	/*
	 * smartio-ivshmem-server -p 2 puts the first guest at an even id and
	 * the second at an odd one, also across restarts (ids are not reused).
	 */
	pos = ioread32(iv->regs + IVSHMEM_IVPOSITION);
	if (pos > 0xffff) {
		dev_err(&pdev->dev, "ivshmem id %#x: not connected to a server\n",
			pos);
		return -ENODEV;
	}
	iv->ivposition = pos;
	iv->side = pos % IVNTB_SIDES;
	iv->peer_side = !iv->side;
	return 0;
}

/* BAR2: the window size, both control pages and our inbound slots. */
static int ivntb_map_shm(struct ivntb *iv)
{
	struct pci_dev *pdev = iv->pdev;
	resource_size_t pool_off;
	int rc;

	iv->shm_phys = pci_resource_start(pdev, IVSHMEM_BAR_SHM);
	iv->shm_size = pci_resource_len(pdev, IVSHMEM_BAR_SHM);
	if (!iv->shm_size || !is_power_of_2(iv->shm_size))
		return -ENODEV;
	iv->wsize = rounddown_pow_of_two(div_u64(iv->shm_size,
						 IVNTB_SIDES * mw_count + 1));
	if (iv->wsize < IVNTB_CTRL_SIZE) {
		dev_err(&pdev->dev, "%pa bytes of shared memory are too few for %u windows per side\n",
			&iv->shm_size, mw_count);
		return -ENOSPC;
	}
	/* Not iomapped whole: the pool is mapped write-back, the rest not. */
	rc = pci_request_region(pdev, IVSHMEM_BAR_SHM, IVNTB_NAME);
	if (rc)
		return rc;
	iv->ctrl = devm_ioremap(&pdev->dev, iv->shm_phys, IVNTB_CTRL_SIZE);
	if (!iv->ctrl)
		return -ENOMEM;
	iv->me = iv->ctrl + iv->side * IVNTB_SIDE_STRIDE;
	iv->peer = iv->ctrl + iv->peer_side * IVNTB_SIDE_STRIDE;

	pool_off = ivntb_slot_off(iv, iv->side, 0);
	iv->pool = devm_memremap(&pdev->dev, iv->shm_phys + pool_off,
				 mw_count * iv->wsize, MEMREMAP_WB);
	return PTR_ERR_OR_ZERO(iv->pool);
}

/*
 * Managed (pcim_, devm_) resources go with the device on failure; the
 * ladder undoes the rest, what the peer and the NTB core can see.
 */
static int ivntb_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct ivntb *iv;
	int rc;

	if (mw_count < 1 || mw_count > IVNTB_MAX_MWS)
		return -EINVAL;
	iv = ivntb_alloc(pdev);
	if (!iv)
		return -ENOMEM;
	rc = pcim_enable_device(pdev);
	if (rc)
		return rc;
	/* MSI-X messages are the device's memory writes: bus mastering on. */
	pci_set_master(pdev);
	rc = ivntb_count_doorbells(iv);
	if (rc)
		return rc;
	rc = ivntb_find_side(iv);
	if (rc)
		return rc;
	rc = ivntb_map_shm(iv);
	if (rc)
		return rc;
	rc = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (rc)
		return rc;
	pci_set_drvdata(pdev, iv);
	sio_dma_ops_install(&pdev->dev, &ivntb_dma_ops, &iv->saved_dma_ops);

	ivntb_side_init(iv);

	iv->ntb.pdev = pdev;
	iv->ntb.topo = iv->side ? NTB_TOPO_SEC : NTB_TOPO_PRI;
	iv->ntb.ops = &ivntb_ops;
	rc = ntb_register_device(&iv->ntb);
	if (rc)
		goto err_side;

	rc = ivntb_setup_irqs(iv);
	if (rc)
		goto err_unregister;

	queue_delayed_work(system_wq, &iv->link_work, 0);
	dev_info(&pdev->dev, "software NTB port %d (ivshmem id %u, peer port %d): %d doorbells, %d scratchpads, %u windows of %pa bytes\n",
		 iv->side, iv->ivposition, iv->peer_side, iv->db_count,
		 IVNTB_SPADS, mw_count, &iv->wsize);
	return 0;

err_unregister:
	ntb_unregister_device(&iv->ntb);
err_side:
	cancel_delayed_work_sync(&iv->link_work);
	cancel_work_sync(&iv->db_work);
	iowrite32(0, &iv->me->magic);
	sio_dma_ops_restore(&pdev->dev, &iv->saved_dma_ops);
	pci_set_drvdata(pdev, NULL);
	return rc;
}

static void ivntb_remove(struct pci_dev *pdev)
{
	struct ivntb *iv = pci_get_drvdata(pdev);

	ntb_unregister_device(&iv->ntb);
	cancel_delayed_work_sync(&iv->link_work);
	ivntb_free_irqs(iv);
	cancel_work_sync(&iv->db_work);
	iowrite32(0, &iv->me->link_enabled);
	iowrite32(0, &iv->me->magic);
	ivntb_ring(iv, IVNTB_CTRL_VECTOR);
	sio_dma_ops_restore(&pdev->dev, &iv->saved_dma_ops);
	pci_set_drvdata(pdev, NULL);
}

static const struct pci_device_id ivntb_pci_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET, 0x1110) },
	{ 0 }
};
MODULE_DEVICE_TABLE(pci, ivntb_pci_ids);

static struct pci_driver ivntb_driver = {
	.name		= IVNTB_NAME,
	.id_table	= ivntb_pci_ids,
	.probe		= ivntb_probe,
	.remove		= ivntb_remove,
};
module_pci_driver(ivntb_driver);

MODULE_DESCRIPTION("Software NTB over QEMU ivshmem-doorbell");
MODULE_LICENSE("GPL");
