// SPDX-License-Identifier: GPL-2.0
/*
 * ntb_sioswitch: Linux NTB hardware driver for smartio's software NTB
 * switch port (QEMU device smartio-ntb-port, PCI 1234:5a10), a
 * multi-port switch with inbound look-up tables: every port sees every
 * other port as a peer (ntb_peer_port_count() = ports - 1).
 *
 * Memory windows.  Inbound: NTBSW_NR_MW windows per peer, each split in
 * NTBSW_NR_LUT equal LUT entries; ntb_mw_set_trans() fills the entries
 * covering the buffer and allows only that peer's requester id.
 * Outbound: one window per (peer, window) in BAR2 (window 0) and BAR4
 * (window 1); outbound index widx = pidx * (memory windows per peer) +
 * window, wired to its peer (ntb_peer_mw_set_trans() only checks the
 * pairing: translation is the receiver's).  With lut_mws=1, as
 * ntb_hw_switchtec offers its LUT windows, window 1 is instead
 * NTBSW_NR_LUT memory windows of one entry each (memory windows 1 ..
 * NTBSW_NR_LUT), each translated on its own: what smartio's device
 * lending needs (a BAR, the DMA window, the MSI window per entry).
 * Doorbells: bit p of ntb_peer_db_set() rings port p
 * (bit p of its status), the convention ntb_pingpong and ntb_perf use for
 * several peers; with one peer (peers= mask) its bits are the peer's, as
 * on two-port hardware.
 * Register map: man/smartio-ntb-port.7.
 */
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/module.h>
#include <linux/ntb.h>
#include <linux/pci.h>
#include <linux/spinlock.h>

#include "ntb_sioswitch_regs.h"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("NTB driver for smartio's software NTB switch port");

static unsigned int peers = ~0u;
module_param(peers, uint, 0444);
MODULE_PARM_DESC(peers,
		 "Bit mask of the switch ports this port pairs with (default: all)");

static bool lut_mws;
module_param(lut_mws, bool, 0444);
MODULE_PARM_DESC(lut_mws,
		 "Window 1's look-up table entries as memory windows of their own");

struct sws {
	struct ntb_dev ntb;
	void __iomem *regs;
	phys_addr_t win_base[NTBSW_NR_MW];
	resource_size_t mw_size[NTBSW_NR_MW];	/* per peer, per window */
	resource_size_t ent_size[NTBSW_NR_MW];
	u32 port;
	u32 nports;
	int pcnt;
	u32 peer_port[NTBSW_MAX_PORTS];
	u32 peer_mask;			/* ports that are our peers */
	spinlock_t mask_lock;		/* DB_MASK read-modify-write */
	int irqs;
};

static inline struct sws *ntb_sws(struct ntb_dev *ntb)
{
	return container_of(ntb, struct sws, ntb);
}

static u32 sws_rd(struct sws *s, u32 reg)
{
	return ioread32(s->regs + reg);
}

static void sws_wr(struct sws *s, u32 reg, u32 val)
{
	iowrite32(val, s->regs + reg);
}

static int sws_port_number(struct ntb_dev *ntb)
{
	return ntb_sws(ntb)->port;
}

static int sws_peer_port_count(struct ntb_dev *ntb)
{
	return ntb_sws(ntb)->pcnt;
}

static int sws_peer_port_number(struct ntb_dev *ntb, int pidx)
{
	struct sws *s = ntb_sws(ntb);

	if (pidx < 0 || pidx >= s->pcnt)
		return -EINVAL;
	return s->peer_port[pidx];
}

static int sws_peer_port_idx(struct ntb_dev *ntb, int port)
{
	struct sws *s = ntb_sws(ntb);
	int pidx;

	for (pidx = 0; pidx < s->pcnt; pidx++)
		if (s->peer_port[pidx] == port)
			return pidx;
	return -EINVAL;
}

static u64 sws_link_is_up(struct ntb_dev *ntb, enum ntb_speed *speed,
			  enum ntb_width *width)
{
	struct sws *s = ntb_sws(ntb);
	u32 up = sws_rd(s, NTBSW_REG_LINK_STATUS);
	u64 ret = 0;
	int pidx;

	for (pidx = 0; pidx < s->pcnt; pidx++)
		if (up & BIT(s->peer_port[pidx]))
			ret |= BIT_ULL(pidx);
	if (speed)
		*speed = ret ? NTB_SPEED_AUTO : NTB_SPEED_NONE;
	if (width)
		*width = ret ? NTB_WIDTH_AUTO : NTB_WIDTH_NONE;
	return ret;
}

static int sws_link_enable(struct ntb_dev *ntb, enum ntb_speed max_speed,
			   enum ntb_width max_width)
{
	struct sws *s = ntb_sws(ntb);

	sws_wr(s, NTBSW_REG_LINK_EN, s->peer_mask);
	return 0;
}

static int sws_link_disable(struct ntb_dev *ntb)
{
	sws_wr(ntb_sws(ntb), NTBSW_REG_LINK_EN, 0);
	return 0;
}

/* Memory windows per peer: two, or window 0 and window 1's entries. */
static int sws_mws(void)
{
	return lut_mws ? 1 + NTBSW_NR_LUT : NTBSW_NR_MW;
}

/*
 * Memory window widx of a peer: the switch window, its first entry, how
 * many entries and their size.
 */
struct sws_mw {
	int win;
	int first;
	int count;
	resource_size_t ent;
};

static int sws_mw_of(struct sws *s, int widx, struct sws_mw *mw)
{
	if (widx < 0 || widx >= sws_mws())
		return -EINVAL;
	mw->win = widx ? 1 : 0;
	mw->ent = s->ent_size[mw->win];
	mw->first = lut_mws && widx ? widx - 1 : 0;
	mw->count = lut_mws && widx ? 1 : NTBSW_NR_LUT;
	return 0;
}

static int sws_mw_count(struct ntb_dev *ntb, int pidx)
{
	return sws_mws();
}

static int sws_mw_get_align(struct ntb_dev *ntb, int pidx, int widx,
			    resource_size_t *addr_align,
			    resource_size_t *size_align,
			    resource_size_t *size_max)
{
	struct sws *s = ntb_sws(ntb);
	struct sws_mw mw;

	if (pidx < 0 || pidx >= s->pcnt || sws_mw_of(s, widx, &mw))
		return -EINVAL;
	/*
	 * A RAM alias needs page alignment; the entry a buffer ends in
	 * covers only the buffer's pages (CTRL's length), so the peer
	 * reaches nothing past it.
	 */
	if (addr_align)
		*addr_align = PAGE_SIZE;
	if (size_align)
		*size_align = PAGE_SIZE;
	if (size_max)
		*size_max = mw.ent * mw.count;
	return 0;
}

static u32 sws_lut_reg(struct sws *s, int pidx, int win, int e)
{
	u32 src = s->peer_port[pidx];

	return NTBSW_REG_LUT +
	       ((src * NTBSW_NR_MW + win) * NTBSW_NR_LUT + e) * 16;
}

static int sws_mw_set_trans(struct ntb_dev *ntb, int pidx, int widx,
			    dma_addr_t addr, resource_size_t size)
{
	struct sws *s = ntb_sws(ntb);
	resource_size_t align;
	struct sws_mw mw;
	int e;

	if (pidx < 0 || pidx >= s->pcnt || sws_mw_of(s, widx, &mw))
		return -EINVAL;
	sws_mw_get_align(ntb, pidx, widx, NULL, &align, NULL);
	if (!size || size > mw.ent * mw.count || !IS_ALIGNED(size, align) ||
	    !IS_ALIGNED(addr, PAGE_SIZE))
		return -EINVAL;
	for (e = mw.first; e < mw.first + mw.count; e++) {
		u32 reg = sws_lut_reg(s, pidx, mw.win, e);
		u64 done = (u64)(e - mw.first) * mw.ent;

		/* Disabled while it changes; enabled last. */
		sws_wr(s, reg + NTBSW_LUT_CTRL, 0);
		if (done >= size)
			continue;
		sws_wr(s, reg + NTBSW_LUT_TARGET_LO, lower_32_bits(addr + done));
		sws_wr(s, reg + NTBSW_LUT_TARGET_HI, upper_32_bits(addr + done));
		sws_wr(s, reg + NTBSW_LUT_RID_ALLOW,
		       BIT(s->peer_port[pidx]));
		/* An entry the buffer ends in covers only the buffer. */
		sws_wr(s, reg + NTBSW_LUT_CTRL,
		       NTBSW_LUT_EN | (size - done < mw.ent ?
				       (u32)((size - done) >> 12) <<
				       NTBSW_LUT_PAGES_SHIFT : 0));
	}
	return 0;
}

static int sws_mw_clear_trans(struct ntb_dev *ntb, int pidx, int widx)
{
	struct sws *s = ntb_sws(ntb);
	struct sws_mw mw;
	int e;

	if (pidx < 0 || pidx >= s->pcnt || sws_mw_of(s, widx, &mw))
		return -EINVAL;
	for (e = mw.first; e < mw.first + mw.count; e++)
		sws_wr(s, sws_lut_reg(s, pidx, mw.win, e) + NTBSW_LUT_CTRL, 0);
	return 0;
}

static int sws_peer_mw_count(struct ntb_dev *ntb)
{
	return sws_mws() * ntb_sws(ntb)->pcnt;
}

static int sws_peer_mw_get_addr(struct ntb_dev *ntb, int widx,
				phys_addr_t *base, resource_size_t *size)
{
	struct sws *s = ntb_sws(ntb);
	int pidx = widx / sws_mws();
	struct sws_mw mw;

	if (widx < 0 || pidx >= s->pcnt || sws_mw_of(s, widx % sws_mws(), &mw))
		return -EINVAL;
	if (base)
		*base = s->win_base[mw.win] +
			s->peer_port[pidx] * s->mw_size[mw.win] +
			mw.first * mw.ent;
	if (size)
		*size = mw.ent * mw.count;
	return 0;
}

static int sws_peer_mw_set_trans(struct ntb_dev *ntb, int pidx, int widx,
				 u64 addr, resource_size_t size)
{
	struct sws *s = ntb_sws(ntb);
	struct sws_mw mw;

	/* Outbound windows are wired to one peer each; nothing to set. */
	if (pidx < 0 || pidx >= s->pcnt || widx / sws_mws() != pidx ||
	    sws_mw_of(s, widx % sws_mws(), &mw) || size > mw.ent * mw.count)
		return -EINVAL;
	return 0;
}

static u64 sws_db_valid_mask(struct ntb_dev *ntb)
{
	struct sws *s = ntb_sws(ntb);

	/* One peer: all 64 bits (PEER_DB); several: bit p is port p. */
	return s->pcnt == 1 ? ~0ULL : GENMASK_ULL(s->nports - 1, 0);
}

static int sws_db_vector_count(struct ntb_dev *ntb)
{
	return 1;
}

static u64 sws_db_vector_mask(struct ntb_dev *ntb, int db_vector)
{
	return db_vector ? 0 : sws_db_valid_mask(ntb);
}

static u64 sws_db_read(struct ntb_dev *ntb)
{
	return lo_hi_readq(ntb_sws(ntb)->regs + NTBSW_REG_DB_STATUS);
}

static int sws_db_clear(struct ntb_dev *ntb, u64 db_bits)
{
	lo_hi_writeq(db_bits, ntb_sws(ntb)->regs + NTBSW_REG_DB_STATUS);
	return 0;
}

static u64 sws_db_read_mask(struct ntb_dev *ntb)
{
	return lo_hi_readq(ntb_sws(ntb)->regs + NTBSW_REG_DB_MASK);
}

static void sws_db_update_mask(struct sws *s, u64 set, u64 clear)
{
	unsigned long flags;
	u64 m;

	spin_lock_irqsave(&s->mask_lock, flags);
	m = lo_hi_readq(s->regs + NTBSW_REG_DB_MASK);
	lo_hi_writeq((m | set) & ~clear, s->regs + NTBSW_REG_DB_MASK);
	spin_unlock_irqrestore(&s->mask_lock, flags);
}

static int sws_db_set_mask(struct ntb_dev *ntb, u64 db_bits)
{
	sws_db_update_mask(ntb_sws(ntb), db_bits, 0);
	return 0;
}

static int sws_db_clear_mask(struct ntb_dev *ntb, u64 db_bits)
{
	sws_db_update_mask(ntb_sws(ntb), 0, db_bits);
	return 0;
}

static int sws_peer_db_set(struct ntb_dev *ntb, u64 db_bits)
{
	struct sws *s = ntb_sws(ntb);

	if (db_bits & ~sws_db_valid_mask(ntb))
		return -EINVAL;
	/* One peer: its doorbell bits, as on two-port hardware. */
	if (s->pcnt == 1) {
		lo_hi_writeq(db_bits, s->regs + NTBSW_REG_PEER_DB +
			     8 * s->peer_port[0]);
		return 0;
	}
	if (db_bits & ~(u64)s->peer_mask)
		return -EINVAL;
	lo_hi_writeq(db_bits, s->regs + NTBSW_REG_DB_RING);
	return 0;
}

static int sws_spad_count(struct ntb_dev *ntb)
{
	return NTBSW_NR_SPAD;
}

static u32 sws_spad_read(struct ntb_dev *ntb, int sidx)
{
	if (sidx < 0 || sidx >= NTBSW_NR_SPAD)
		return 0;
	return sws_rd(ntb_sws(ntb), NTBSW_REG_SPAD + 4 * sidx);
}

static int sws_spad_write(struct ntb_dev *ntb, int sidx, u32 val)
{
	if (sidx < 0 || sidx >= NTBSW_NR_SPAD)
		return -EINVAL;
	sws_wr(ntb_sws(ntb), NTBSW_REG_SPAD + 4 * sidx, val);
	return 0;
}

static u32 sws_peer_spad_reg(struct sws *s, int pidx, int sidx)
{
	return NTBSW_REG_PEER_SPAD +
	       s->peer_port[pidx] * NTBSW_PEER_SPAD_STRIDE + 4 * sidx;
}

static u32 sws_peer_spad_read(struct ntb_dev *ntb, int pidx, int sidx)
{
	struct sws *s = ntb_sws(ntb);

	if (pidx < 0 || pidx >= s->pcnt || sidx < 0 || sidx >= NTBSW_NR_SPAD)
		return 0;
	return sws_rd(s, sws_peer_spad_reg(s, pidx, sidx));
}

static int sws_peer_spad_write(struct ntb_dev *ntb, int pidx, int sidx,
			       u32 val)
{
	struct sws *s = ntb_sws(ntb);

	if (pidx < 0 || pidx >= s->pcnt || sidx < 0 || sidx >= NTBSW_NR_SPAD)
		return -EINVAL;
	sws_wr(s, sws_peer_spad_reg(s, pidx, sidx), val);
	return 0;
}

static const struct ntb_dev_ops sws_ops = {
	.port_number = sws_port_number,
	.peer_port_count = sws_peer_port_count,
	.peer_port_number = sws_peer_port_number,
	.peer_port_idx = sws_peer_port_idx,
	.link_is_up = sws_link_is_up,
	.link_enable = sws_link_enable,
	.link_disable = sws_link_disable,
	.mw_count = sws_mw_count,
	.mw_get_align = sws_mw_get_align,
	.mw_set_trans = sws_mw_set_trans,
	.mw_clear_trans = sws_mw_clear_trans,
	.peer_mw_count = sws_peer_mw_count,
	.peer_mw_get_addr = sws_peer_mw_get_addr,
	.peer_mw_set_trans = sws_peer_mw_set_trans,
	.db_valid_mask = sws_db_valid_mask,
	.db_vector_count = sws_db_vector_count,
	.db_vector_mask = sws_db_vector_mask,
	.db_read = sws_db_read,
	.db_clear = sws_db_clear,
	.db_read_mask = sws_db_read_mask,
	.db_set_mask = sws_db_set_mask,
	.db_clear_mask = sws_db_clear_mask,
	.peer_db_set = sws_peer_db_set,
	.spad_count = sws_spad_count,
	.spad_read = sws_spad_read,
	.spad_write = sws_spad_write,
	.peer_spad_read = sws_peer_spad_read,
	.peer_spad_write = sws_peer_spad_write,
};

static irqreturn_t sws_db_irq(int irq, void *data)
{
	struct sws *s = data;

	ntb_db_event(&s->ntb, 0);
	return IRQ_HANDLED;
}

static irqreturn_t sws_link_irq(int irq, void *data)
{
	struct sws *s = data;
	u32 ev = sws_rd(s, NTBSW_REG_LINK_EVENT);

	sws_wr(s, NTBSW_REG_LINK_EVENT, ev);
	if (ev & s->peer_mask)
		ntb_link_event(&s->ntb);
	return IRQ_HANDLED;
}

static irqreturn_t sws_err_irq(int irq, void *data)
{
	struct sws *s = data;
	u32 st = sws_rd(s, NTBSW_REG_ERR_STATUS);

	sws_wr(s, NTBSW_REG_ERR_STATUS, st);
	if (st & NTBSW_ERR_BLOCKED)
		dev_warn_ratelimited(&s->ntb.pdev->dev,
				     "blocked inbound access: %llu without entry, %llu requester not allowed, last %#llx\n",
				     lo_hi_readq(s->regs + NTBSW_REG_BLOCKED_NOENTRY),
				     lo_hi_readq(s->regs + NTBSW_REG_BLOCKED_RID),
				     lo_hi_readq(s->regs + NTBSW_REG_LAST_BLOCKED));
	return IRQ_HANDLED;
}

static const irq_handler_t sws_handlers[NTBSW_NR_VEC] = {
	[NTBSW_VEC_DB] = sws_db_irq,
	[NTBSW_VEC_LINK] = sws_link_irq,
	[NTBSW_VEC_ERR] = sws_err_irq,
};

static void sws_free_irqs(struct sws *s, struct pci_dev *pdev)
{
	while (s->irqs > 0) {
		s->irqs--;
		free_irq(pci_irq_vector(pdev, s->irqs), s);
	}
	pci_free_irq_vectors(pdev);
}

static int sws_setup_irqs(struct sws *s, struct pci_dev *pdev)
{
	int ret, i;

	ret = pci_alloc_irq_vectors(pdev, NTBSW_NR_VEC, NTBSW_NR_VEC,
				    PCI_IRQ_MSIX);
	if (ret < 0)
		return ret;
	for (i = 0; i < NTBSW_NR_VEC; i++) {
		ret = request_irq(pci_irq_vector(pdev, i), sws_handlers[i], 0,
				  "ntb_sioswitch", s);
		if (ret) {
			sws_free_irqs(s, pdev);
			return ret;
		}
		s->irqs++;
	}
	return 0;
}

static int sws_read_geometry(struct sws *s, struct pci_dev *pdev)
{
	u32 p;

	if (sws_rd(s, NTBSW_REG_ID) != NTBSW_MAGIC ||
	    sws_rd(s, NTBSW_REG_VERSION) != NTBSW_VERSION) {
		dev_err(&pdev->dev, "not a version %u smartio NTB switch port\n",
			NTBSW_VERSION);
		return -ENODEV;
	}
	s->port = sws_rd(s, NTBSW_REG_PORT);
	s->nports = sws_rd(s, NTBSW_REG_PORT_COUNT);
	s->mw_size[0] = lo_hi_readq(s->regs + NTBSW_REG_MW_SIZE);
	s->ent_size[0] = lo_hi_readq(s->regs + NTBSW_REG_ENT_SIZE);
	s->mw_size[1] = lo_hi_readq(s->regs + NTBSW_REG_MW1_SIZE);
	s->ent_size[1] = lo_hi_readq(s->regs + NTBSW_REG_ENT1_SIZE);
	if (s->nports < 2 || s->nports > NTBSW_MAX_PORTS ||
	    s->port >= s->nports || !s->ent_size[0] || !s->ent_size[1] ||
	    s->ent_size[0] * NTBSW_NR_LUT != s->mw_size[0] ||
	    s->ent_size[1] * NTBSW_NR_LUT != s->mw_size[1] ||
	    sws_rd(s, NTBSW_REG_NR_MW) != NTBSW_NR_MW ||
	    sws_rd(s, NTBSW_REG_NR_LUT) != NTBSW_NR_LUT ||
	    sws_rd(s, NTBSW_REG_NR_SPAD) != NTBSW_NR_SPAD) {
		dev_err(&pdev->dev, "inconsistent switch geometry\n");
		return -ENODEV;
	}
	for (p = 0; p < s->nports; p++) {
		if (p == s->port || !(peers & BIT(p)))
			continue;
		s->peer_port[s->pcnt++] = p;
		s->peer_mask |= BIT(p);
	}
	if (!s->pcnt) {
		dev_err(&pdev->dev, "peers=%#x leaves port %u no peer\n",
			peers, s->port);
		return -EINVAL;
	}
	for (p = 0; p < NTBSW_NR_MW; p++) {
		int bar = 2 + 2 * p;

		if (pci_resource_len(pdev, bar) < s->nports * s->mw_size[p]) {
			dev_err(&pdev->dev, "BAR%d smaller than its windows\n",
				bar);
			return -ENODEV;
		}
		s->win_base[p] = pci_resource_start(pdev, bar);
	}
	return 0;
}

static int sws_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct sws *s;
	int ret;

	s = devm_kzalloc(&pdev->dev, sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	spin_lock_init(&s->mask_lock);
	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	/*
	 * BAR0 is mapped but not claimed, so that an administrator (and
	 * make check-ntb) can inspect and set LUT entries with devmem under
	 * CONFIG_IO_STRICT_DEVMEM.
	 */
	s->regs = pcim_iomap(pdev, 0, NTBSW_BAR0_SIZE);
	if (!s->regs)
		return -ENOMEM;
	ret = sws_read_geometry(s, pdev);
	if (ret)
		return ret;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	/* Forwarded accesses are performed as this function's bus master. */
	pci_set_master(pdev);

	s->ntb.pdev = pdev;
	s->ntb.topo = NTB_TOPO_SWITCH;
	s->ntb.ops = &sws_ops;
	pci_set_drvdata(pdev, s);
	ret = sws_setup_irqs(s, pdev);
	if (ret)
		return ret;
	ret = ntb_register_device(&s->ntb);
	if (ret) {
		sws_free_irqs(s, pdev);
		return ret;
	}
	dev_info(&pdev->dev, "port %u of %u, %d peers, windows of %llu and %llu KiB%s\n",
		 s->port, s->nports, s->pcnt,
		 (unsigned long long)s->mw_size[0] >> 10,
		 (unsigned long long)s->mw_size[1] >> 10,
		 lut_mws ? ", window 1 as single entries" : "");
	return 0;
}

static void sws_remove(struct pci_dev *pdev)
{
	struct sws *s = pci_get_drvdata(pdev);

	ntb_unregister_device(&s->ntb);
	sws_wr(s, NTBSW_REG_LINK_EN, 0);
	sws_free_irqs(s, pdev);
}

static const struct pci_device_id sws_pci_ids[] = {
	{ PCI_DEVICE(NTBSW_PCI_VENDOR, NTBSW_PCI_DEVICE) },
	{ }
};
MODULE_DEVICE_TABLE(pci, sws_pci_ids);

static struct pci_driver sws_driver = {
	.name = "ntb_sioswitch",
	.id_table = sws_pci_ids,
	.probe = sws_probe,
	.remove = sws_remove,
};
module_pci_driver(sws_driver);
