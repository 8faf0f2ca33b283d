// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Interrupts of lent devices (SmartIO section 4.2).  An MSI is a memory
 * write, so a device can interrupt a borrower through the lender's NTB:
 * the borrow maps an "MSI window" on the lender's adapter to the
 * borrower's interrupt range.  The borrower's driver cannot know that
 * address, so the core intercepts configuration writes that enable MSI or
 * MSI-X and rewrites them: it allocates vectors on the enabling node and
 * programs the device (MSI capability, or every MSI-X table entry through
 * the platform's BAR access) with the device-side address of that node's
 * interrupt range (the MSI window for a borrower, the local range for the
 * lender) and the vector numbers as data.  Legacy INTx cannot cross an NTB,
 * so borrowers see no interrupt pin and cannot clear Interrupt Disable.
 */
#include "core_int.h"

#define CAP_MSI 0x05
#define CAP_MSIX 0x11
#define MSI_ENABLE 0x0001u
#define MSI_MME 0x0070u
#define MSIX_ENABLE 0x8000u

static int cfg_rd(struct sio_core *c, u32 dev, u32 off, void *buf, u32 len)
{
	return c->ops->cfg_access(c->plat, dev, off, buf, len, 0);
}

static int cfg_wr(struct sio_core *c, u32 dev, u32 off, const void *buf,
		  u32 len)
{
	return c->ops->cfg_access(c->plat, dev, off, (void *)buf, len, 1);
}

static u32 le(const u8 *p, u32 n)
{
	u32 v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void put_le(u8 *p, u32 v, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		p[i] = (u8)(v >> (8 * i));
}

static u32 cfg_rd_le(struct sio_core *c, u32 dev, u32 off, u32 n)
{
	u8 b[4] = { 0 };

	cfg_rd(c, dev, off, b, n);
	return le(b, n);
}

static int cfg_wr_le(struct sio_core *c, u32 dev, u32 off, u32 v, u32 n)
{
	u8 b[4];

	put_le(b, v, n);
	return cfg_wr(c, dev, off, b, n);
}

/* Offset of capability id in the standard list, or 0. */
static u32 find_cap(struct sio_core *c, u32 dev, u8 id)
{
	u32 pos = cfg_rd_le(c, dev, 0x34, 1) & 0xfc, hops;

	if (!(cfg_rd_le(c, dev, 0x06, 2) & 0x10))
		return 0;
	for (hops = 0; pos >= 0x40 && pos < 0x100 && hops < 48; hops++) {
		u32 hdr = cfg_rd_le(c, dev, pos, 2);

		if ((hdr & 0xff) == id)
			return pos;
		pos = (hdr >> 8) & 0xfc;
	}
	return 0;
}

static int overlaps(u32 off, u32 len, u32 start, u32 n)
{
	return off < start + n && start < off + len;
}

/* Where `node`'s interrupt range is as device dev addresses it. */
static int target_addr(struct sio_core *c, u32 dev, u32 node, u64 *addr)
{
	struct sio_device *d = sio_dev(c->reg, dev);
	struct sio_borrow *b;
	int bidx;

	if (node == d->node) {
		*addr = SIO_MSI_BASE;
		return 0;
	}
	bidx = sio_borrow_find(c->reg, dev, node);
	if (bidx < 0 || !(d->borrowers >> node & 1))
		return -EACCES;
	b = sio_borrow_at(c->reg, (u32)bidx);
	if (b->msi_lut < 0)
		return -EACCES;
	*addr = b->msi_addr;
	return 0;
}

static void irq_event(struct sio_core *c, u32 dev, u32 node, u32 count)
{
	char args[SIO_EVENT_ARGS], obj[SIO_EVENT_OBJ];
	struct sio_strbuf sb;

	sio_sb_init(&sb, obj, sizeof(obj));
	sio_sb_str(&sb, "dev/");
	sio_sb_str(&sb, sio_dev(c->reg, dev)->name);
	sio_sb_init(&sb, args, sizeof(args));
	sio_sb_str(&sb, "node=");
	sio_sb_str(&sb, sio_node(c->reg, node)->name);
	sio_sb_str(&sb, " vectors=");
	sio_sb_u64(&sb, count);
	sio_event_emit(c, SIO_EV_MSI, obj, args);
}

/* Frees the routed vectors; the device keeps whatever it was told. */
static void unroute(struct sio_core *c, u32 dev)
{
	struct sio_device *d = sio_dev(c->reg, dev);
	u32 node = d->irq_node;

	if (d->irq_mode == SIO_IRQ_NONE)
		return;
	sio_bitmap_free(&sio_node(c->reg, node)->vectors, d->irq_base,
			d->irq_count);
	d->irq_mode = SIO_IRQ_NONE;
	d->irq_count = 0;
	d->irq_node = 0;
	d->irq_base = 0;
	d->irq_addr = 0;
	irq_event(c, dev, node, 0);
}

/* Allocates count vectors on node for dev (nothing changed on error). */
static int route(struct sio_core *c, u32 dev, u32 node, u32 mode, u32 count)
{
	struct sio_device *d = sio_dev(c->reg, dev);
	u64 addr;
	int err = target_addr(c, dev, node, &addr), base;

	if (err)
		return err;
	base = sio_bitmap_alloc(&sio_node(c->reg, node)->vectors, count);
	if (base < 0)
		return base;
	d->irq_mode = (u8)mode;
	d->irq_count = (u16)count;
	d->irq_node = (u16)node;
	d->irq_base = (u16)base;
	d->irq_addr = addr;
	irq_event(c, dev, node, count);
	return 0;
}

/*
 * Whether the messages dev sends for asker are asker's own: over an NTB
 * (SIO_CORE_SEPARATE) a borrower's interrupt vectors are its kernel's,
 * which the core's vector numbers do not name; its shadow sends each
 * message as SIO_CMD_MSIX_ENTRY and the lender's platform writes it once
 * it checked the address (msix_write).
 */
static int own_msgs(struct sio_core *c, u32 dev, u32 asker)
{
	return (c->flags & SIO_CORE_SEPARATE) && c->ops->msix_write &&
	       asker != sio_dev(c->reg, dev)->node;
}

/* The MSI registers as the core wants them: address and vector data. */
static int program_msi(struct sio_core *c, u32 dev, u32 cap)
{
	struct sio_device *d = sio_dev(c->reg, dev);
	u32 ctl = cfg_rd_le(c, dev, cap + 2, 2);

	/* The message is the borrower's (sio_h_msix_entry). */
	if (own_msgs(c, dev, d->irq_node))
		return cfg_wr_le(c, dev, cap + 2, ctl & ~MSI_MME, 2);
	cfg_wr_le(c, dev, cap + 4, (u32)d->irq_addr, 4);
	if (ctl & 0x80) {
		cfg_wr_le(c, dev, cap + 8, (u32)(d->irq_addr >> 32), 4);
		cfg_wr_le(c, dev, cap + 12, d->irq_base, 2);
	} else {
		cfg_wr_le(c, dev, cap + 8, d->irq_base, 2);
	}
	/* One message, whatever the driver asked for in MME. */
	return cfg_wr_le(c, dev, cap + 2, ctl & ~MSI_MME, 2);
}

/* Points every routed MSI-X table entry at the node; masks the rest. */
static int program_msix(struct sio_core *c, u32 dev, u32 cap)
{
	struct sio_device *d = sio_dev(c->reg, dev);
	u32 size = (cfg_rd_le(c, dev, cap + 2, 2) & 0x7ff) + 1;
	u32 tbl = cfg_rd_le(c, dev, cap + 4, 4), bar = tbl & 7, i;
	u64 base = tbl & ~7u;
	int err = 0;

	if (bar >= SIO_MAX_BARS || base + 16ull * size > d->bar[bar].size)
		return -EINVAL;
	for (i = 0; i < size && !err; i++) {
		u8 e[16];

		err = c->ops->bar_access(c->plat, dev, bar, base + 16ull * i,
					 e, 16, 0);
		if (err)
			break;
		if (i < d->irq_count) {
			put_le(e, (u32)d->irq_addr, 4);
			put_le(e + 4, (u32)(d->irq_addr >> 32), 4);
			put_le(e + 8, d->irq_base + i, 4);
		} else {
			e[12] |= 1;	/* not routed: masked */
		}
		err = c->ops->bar_access(c->plat, dev, bar, base + 16ull * i,
					 e, 16, 1);
	}
	return err;
}

/*
 * Read-only fields stay as the device has them, as in hardware: capability
 * headers, MSI's 64-bit / per-vector-masking / multiple-message-capable
 * bits, MSI-X's table size, table and pending-bit locations.
 */
static void keep_read_only(struct sio_core *c, u32 dev, u32 cap, u32 id,
			   u32 off, u8 *data, u32 len)
{
	static const u8 msi_ro[4] = { 0xff, 0xff, 0x8e, 0xff };
	static const u8 msix_ro[12] = { 0xff, 0xff, 0xff, 0x3f, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	const u8 *ro = id == CAP_MSI ? msi_ro : msix_ro;
	u32 n = id == CAP_MSI ? sizeof(msi_ro) : sizeof(msix_ro), i;
	u8 cur[12];

	cfg_rd(c, dev, cap, cur, n);
	for (i = 0; i < n; i++)
		if (overlaps(off, len, cap + i, 1))
			data[cap + i - off] = (u8)((data[cap + i - off] & ~ro[i]) |
						   (cur[i] & ro[i]));
}

/* The control word of the capability at cap once the write is applied
 * (read-only bits kept). */
static u32 ctl_after(struct sio_core *c, u32 dev, u32 cap, u32 id, u32 off,
		     const u8 *src, u32 len)
{
	u8 b[2];
	u32 i;

	cfg_rd(c, dev, cap + 2, b, 2);
	for (i = 0; i < 2; i++)
		if (overlaps(off, len, cap + 2 + i, 1))
			b[i] = src[cap + 2 + i - off];
	keep_read_only(c, dev, cap, id, cap + 2, b, 2);
	return le(b, 2);
}

/*
 * A borrower's config writes of the MSI message (address and data) never
 * reach the device when its messages are its own: the lender writes them
 * from SIO_CMD_MSIX_ENTRY after checking the address, and a config write
 * could aim the device's writes anywhere its IOMMU domain reaches.
 */
static void keep_msi_msg(struct sio_core *c, u32 dev, u32 cap, u32 off,
			 u8 *data, u32 len)
{
	u32 n = (cfg_rd_le(c, dev, cap + 2, 2) & 0x80) ? 10 : 6, i;
	u8 cur[10];

	cfg_rd(c, dev, cap + 4, cur, n);
	for (i = 0; i < n; i++)
		if (overlaps(off, len, cap + 4 + i, 1))
			data[cap + 4 + i - off] = cur[i];
}

/*
 * Before anything is written: may asker enable `mode` (one routing per
 * device, MSI and MSI-X exclusive), and vectors for it.  *fresh is set
 * when vectors were allocated now.
 */
static int plan(struct sio_core *c, u32 dev, u32 asker, u32 mode, u32 count,
		int *fresh)
{
	struct sio_device *d = sio_dev(c->reg, dev);
	int err;

	if ((d->irq_mode != SIO_IRQ_NONE && d->irq_mode != mode) ||
	    (d->irq_mode == mode && d->irq_node != asker))
		return -EBUSY;
	if (mode == SIO_IRQ_MSIX && !c->ops->bar_access)
		return -EOPNOTSUPP;
	if (d->irq_mode == SIO_IRQ_NONE) {
		err = route(c, dev, asker, mode, count);
		if (err)
			return err;
		*fresh = 1;
	}
	return 0;
}

/*
 * Writes len bytes from src at off, in small pieces (the core also runs
 * on kernel stacks), each with the fields the core owns kept: read-only
 * capability bits and, for borrowers, Interrupt Disable.
 */
static int write_pieces(struct sio_core *c, u32 dev, u32 asker, u32 msi,
			u32 msix, u32 off, const u8 *src, u32 len)
{
	struct sio_device *d = sio_dev(c->reg, dev);
	u8 piece[64];
	u32 done = 0;
	int err = 0;

	while (done < len && !err) {
		u32 n = len - done < sizeof(piece) ? len - done : sizeof(piece);
		u32 at = off + done;

		sio_memcpy(piece, src + done, n);
		/* Borrowers cannot turn legacy interrupts on. */
		if (asker != d->node && overlaps(at, n, 0x05, 1))
			piece[0x05 - at] |= 0x04;
		if (msi)
			keep_read_only(c, dev, msi, CAP_MSI, at, piece, n);
		if (msi && own_msgs(c, dev, asker))
			keep_msi_msg(c, dev, msi, at, piece, n);
		if (msix)
			keep_read_only(c, dev, msix, CAP_MSIX, at, piece, n);
		err = cfg_wr(c, dev, at, piece, n);
		done += n;
	}
	return err;
}

int sio_msi_cfg_write(struct sio_core *c, u32 dev, u32 asker, u32 off,
		      const u8 *src, u32 len)
{
	struct sio_device *d = sio_dev(c->reg, dev);
	u32 msi = find_cap(c, dev, CAP_MSI), msix = find_cap(c, dev, CAP_MSIX);
	int hit_msi = msi && overlaps(off, len, msi, 16);
	int hit_msix = msix && overlaps(off, len, msix + 2, 2);
	u32 msi_ctl = 0, msix_ctl = 0;
	int fresh = 0, err = 0;

	if (hit_msi)
		msi_ctl = ctl_after(c, dev, msi, CAP_MSI, off, src, len);
	if (hit_msix)
		msix_ctl = ctl_after(c, dev, msix, CAP_MSIX, off, src, len);
	if (hit_msi && (msi_ctl & MSI_ENABLE))
		err = plan(c, dev, asker, SIO_IRQ_MSI, 1, &fresh);
	if (!err && hit_msix && (msix_ctl & MSIX_ENABLE)) {
		u32 size = (msix_ctl & 0x7ff) + 1;

		err = plan(c, dev, asker, SIO_IRQ_MSIX,
			   size < SIO_DEV_IRQ_MAX ? size : SIO_DEV_IRQ_MAX,
			   &fresh);
	}
	if (!err)
		err = write_pieces(c, dev, asker, msi, msix, off, src, len);
	if (err) {
		if (fresh)
			unroute(c, dev);
		return err;
	}
	if (hit_msi && d->irq_mode == SIO_IRQ_MSI) {
		if (msi_ctl & MSI_ENABLE)
			program_msi(c, dev, msi);
		else
			unroute(c, dev);
	}
	if (hit_msix && d->irq_mode == SIO_IRQ_MSIX) {
		if (!(msix_ctl & MSIX_ENABLE)) {
			unroute(c, dev);
		} else if ((err = program_msix(c, dev, msix)) != 0) {
			/* The platform failed us: leave MSI-X off. */
			cfg_wr_le(c, dev, msix + 2, msix_ctl & ~MSIX_ENABLE, 2);
			unroute(c, dev);
		}
	}
	return err;
}

void sio_msi_cfg_read(struct sio_core *c, u32 dev, u32 asker, u32 off,
		      u8 *data, u32 len)
{
	if (asker != sio_dev(c->reg, dev)->node && overlaps(off, len, 0x3d, 1))
		data[0x3d - off] = 0;	/* no INTx pin across an NTB */
}

/*
 * A borrower's MSI-X message, written by the lender (SmartIO over an NTB
 * whose lender leaves the table's pages untranslated for borrowers, so
 * that the messages a device sends are the lender's to check), or its
 * MSI message (index SIO_MSI_ENTRY; its config writes of the message do
 * not reach the device, keep_msi_msg): only the
 * node the device's MSI-X or MSI vectors are routed to may write them, and
 * whether the address lands in its MSI window is the platform's check
 * (it knows the device's view of the window).  ENOENT when nothing is
 * routed to it (a message late after the driver turned MSI-X off).
 */
int sio_h_msix_entry(struct sio_core *c, u32 self, const struct sio_parsed *p,
		     struct sio_msg *rep)
{
	int dev = sio_msg_dev(c->reg, p);
	int asker = sio_msg_node(c->reg, p, SIO_A_NODE);
	struct sio_device *d;
	u32 mode;

	(void)rep;
	if (dev < 0)
		return dev;
	if (asker < 0)
		return asker;
	d = sio_dev(c->reg, (u32)dev);
	if (d->node != self || d->gone)
		return -ENXIO;
	if (p->tb[SIO_A_DATA].len != 16)
		return -EINVAL;
	if (!(d->borrowers >> asker & 1))
		return -EACCES;
	mode = sio_nla_u32(&p->tb[SIO_A_INDEX]) == SIO_MSI_ENTRY ?
	       SIO_IRQ_MSI : SIO_IRQ_MSIX;
	if (d->irq_mode != mode || d->irq_node != (u32)asker)
		return -ENOENT;
	if (!c->ops->msix_write)
		return -EOPNOTSUPP;
	return c->ops->msix_write(c->plat, (u32)dev, (u32)asker,
				  sio_nla_u32(&p->tb[SIO_A_INDEX]),
				  p->tb[SIO_A_DATA].data);
}

void sio_msi_release(struct sio_core *c, u32 dev, u32 node)
{
	struct sio_device *d = sio_dev(c->reg, dev);
	u32 cap;

	if (d->irq_mode == SIO_IRQ_NONE || d->irq_node != node)
		return;
	/* The device must stop writing into a window that goes away. */
	cap = find_cap(c, dev, d->irq_mode == SIO_IRQ_MSI ? CAP_MSI : CAP_MSIX);
	if (cap)
		cfg_wr_le(c, dev, cap + 2,
			  cfg_rd_le(c, dev, cap + 2, 2) &
			  ~(d->irq_mode == SIO_IRQ_MSI ? MSI_ENABLE : MSIX_ENABLE),
			  2);
	unroute(c, dev);
}

void sio_msi_node_down(struct sio_core *c, u32 node)
{
	u32 i;

	for (i = 0; i < c->reg->ndevices; i++) {
		struct sio_device *d = sio_dev(c->reg, i);

		if (d->irq_mode != SIO_IRQ_NONE &&
		    (d->irq_node == node || d->node == node))
			sio_msi_release(c, i, d->irq_node);
	}
}
