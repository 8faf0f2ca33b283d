// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * SR-IOV as MPIOV uses it (MPIOV section III): a physical function's
 * virtual functions are devices of their own, each with its own requester
 * id (the PF's plus First VF Offset 1 and VF Stride 1), so that each can
 * be lent to a different node and the NTB's requester and address checks
 * apply per VF.  The VF slots follow their PF in the registry (the
 * topology lays them out); SRIOV_SET on the PF's lender, what Linux's
 * sriov_numvfs does, makes the first NumVFs of them present and writes
 * NumVFs and VF Enable into the PF's SR-IOV capability.
 *
 * Like Linux: a count above TotalVFs is ERANGE, changing a nonzero count
 * to another nonzero one is EBUSY (disable first), and disabling is
 * refused (EBUSY) while any VF is borrowed or mapped, leaving the state as
 * it was.  Any change is refused (EBUSY) while the PF itself is borrowed:
 * its driver is then the borrower's, and VFs coming or going under it
 * would be the lender's PCI core's doing behind that driver's back.  With separate
 * registries (smartio.ko) the lender's own PCI core enables VFs (the
 * platform's sriov_set); a platform without it answers EOPNOTSUPP.
 */
#include "core_int.h"
#include "le.h"

#define PCI_EXT_CAP_START 0x100
#define PCI_EXT_CAP_ID_SRIOV 0x10
#define SRIOV_CTRL 0x08		/* VF Enable (bit 0), VF MSE (bit 3) */
#define SRIOV_CTRL_VFE 0x01
#define SRIOV_CTRL_MSE 0x08
#define SRIOV_NUM_VF 0x10

/* The PF's k-th VF: the slot k + 1 after it, checked to be its. */
static struct sio_device *vf_of(struct sio_registry *r, u32 pf, u32 k)
{
	struct sio_device *v;

	if (pf + 1 + k >= r->ndevices)
		return NULL;
	v = sio_dev(r, pf + 1 + k);
	return v->sriov_pf == pf ? v : NULL;
}

/* Whether anything holds VF dev: a borrower, a segment or a peer map. */
static int vf_in_use(struct sio_registry *r, u32 dev)
{
	u32 i;

	if (sio_dev(r, dev)->borrowers)
		return 1;
	for (i = 0; i < r->max_segdma; i++)
		if (sio_segdma_at(r, i)->used && sio_segdma_at(r, i)->dev == dev)
			return 1;
	for (i = 0; i < r->max_peermap; i++) {
		struct sio_peermap *m = sio_peermap_at(r, i);

		if (m->used && (m->dev == dev || m->peer == dev))
			return 1;
	}
	return 0;
}

/* The SR-IOV capability's offset in the PF's configuration space, or 0. */
static u32 find_sriov_cap(struct sio_core *c, u32 pf, u32 config_size)
{
	u32 off = PCI_EXT_CAP_START, hops, hdr;
	u8 b[4];

	for (hops = 0; off >= PCI_EXT_CAP_START && off + 4 <= config_size &&
	     hops < 64; hops++) {
		if (c->ops->cfg_access(c->plat, pf, off, b, 4, 0))
			return 0;
		hdr = sio_get_le32(b);
		if ((hdr & 0xffff) == PCI_EXT_CAP_ID_SRIOV)
			return off;
		off = hdr >> 20;
	}
	return 0;
}

/* NumVFs and VF Enable / VF MSE in the capability say what is enabled. */
static void write_cap(struct sio_core *c, u32 pf, u32 config_size, u16 num)
{
	u32 cap = find_sriov_cap(c, pf, config_size);
	u8 b[2];
	u16 ctrl;

	if (!cap || c->ops->cfg_access(c->plat, pf, cap + SRIOV_CTRL, b, 2, 0))
		return;
	ctrl = sio_get_le16(b) & (u16)~(SRIOV_CTRL_VFE | SRIOV_CTRL_MSE);
	if (num)
		ctrl |= SRIOV_CTRL_VFE | SRIOV_CTRL_MSE;
	sio_put_le16(b, ctrl);
	c->ops->cfg_access(c->plat, pf, cap + SRIOV_CTRL, b, 2, 1);
	sio_put_le16(b, num);
	c->ops->cfg_access(c->plat, pf, cap + SRIOV_NUM_VF, b, 2, 1);
}

/* num in decimal into buf (room for "65535"). */
static void decimal(char *buf, u16 num)
{
	char tmp[6];
	int n = 0, i = 0;

	do {
		tmp[n++] = (char)('0' + num % 10);
		num /= 10;
	} while (num);
	while (n)
		buf[i++] = tmp[--n];
	buf[i] = '\0';
}

int sio_h_sriov(struct sio_core *c, u32 self, const struct sio_parsed *p,
		struct sio_msg *rep)
{
	struct sio_registry *r = c->reg;
	int dev = sio_msg_dev(r, p);
	struct sio_device *pf, *v;
	char val[8];
	u64 num;
	u32 k;

	(void)rep;
	if (dev < 0)
		return dev;
	if ((c->flags & SIO_CORE_SEPARATE) && !c->ops->sriov_set)
		return -EOPNOTSUPP;
	pf = sio_dev(r, (u32)dev);
	if (pf->node != self || pf->gone)
		return -ENXIO;
	if (!pf->sriov_total)
		return -EOPNOTSUPP;	/* no SR-IOV capability */
	num = sio_nla_u64(&p->tb[SIO_A_SIZE]);
	if (num > pf->sriov_total)
		return -ERANGE;
	if (num == pf->sriov_num)
		return 0;
	if (num && pf->sriov_num)
		return -EBUSY;		/* as Linux: disable first */
	if (pf->borrowers)
		return -EBUSY;		/* the PF's driver is a borrower's */
	for (k = 0; k < pf->sriov_total; k++)
		if (!vf_of(r, (u32)dev, k))
			return -EIO;	/* the slots are not its: refuse all */
	for (k = 0; k < pf->sriov_num; k++)
		if (vf_in_use(r, (u32)dev + 1 + k))
			return -EBUSY;
	if (c->ops->sriov_set) {
		int err = c->ops->sriov_set(c->plat, (u32)dev, (u16)num);

		if (err)
			return err;
	}
	for (k = 0; k < pf->sriov_total; k++) {
		v = vf_of(r, (u32)dev, k);
		v->present = k < num;
		v->policy = SIO_LEND_NONE;
		v->lend_mask = 0;
		v->mode = SIO_MODE_EXCLUSIVE;
		v->irq_mode = SIO_IRQ_NONE;
		v->irq_count = 0;
		sio_memset(&v->stats, 0, sizeof(v->stats));
	}
	pf->sriov_num = (u16)num;
	if (!c->ops->sriov_set)
		write_cap(c, (u32)dev, pf->config_size, (u16)num);
	decimal(val, (u16)num);
	sio_event_dev(c, SIO_EV_SRIOV, (u32)dev, "numvfs", val);
	return 0;
}
