// SPDX-License-Identifier: GPL-2.0
/*
 * The requester-id hook: which requesters of this machine may send
 * through its NT function, for the hardware that keeps such a table.
 *
 * A device lent to a peer DMAs and signals its interrupts through the
 * lender's NTB.  A Switchtec partition forwards only the requests of the
 * requesters in its own requester-id table (each given a proxy id on the
 * far side; with ID protection the chip drops the rest), and
 * ntb_hw_switchtec fills that table at probe with the root complex and the
 * NT function alone.  include/linux/ntb.h has no operation to add one, so,
 * until it has (kmod/ntb/README proposes an ntb_dev_ops member), this file
 * holds one implementation per hardware driver, chosen by the NTB's PCI
 * function, and writes the table the way the driver does.  Hardware
 * without such a table needs nothing: ntb_sioswitch checks requesters per
 * look-up-table entry, set by the receiver; ntb_ivshmem carries no DMA.
 */
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/switchtec.h>

#include "smartio_ntb_rid.h"

/* --- Switchtec PFX (switchtec.ko + ntb_hw_switchtec.ko) ------------------ */

#define STX_VENDOR	0x11f8
#define STX_CLASS_NT	(PCI_CLASS_BRIDGE_OTHER << 8)
/* ntb_hw_switchtec's own bound: 1000 polls 50 ms apart. */
#define STX_OP_POLLS	1000
#define STX_OP_POLL_MS	50

/* One table edit at a time (the driver edits its own only at probe). */
static DEFINE_MUTEX(stx_lock);

static bool stx_match(struct pci_dev *pdev)
{
	return pdev->vendor == STX_VENDOR && pdev->class == STX_CLASS_NT;
}

/*
 * The NTB part of the global address space in BAR0: the NTB information
 * block and every partition's control block.  switchtec.ko holds the
 * region; a second mapping of it is what ntb_hw_switchtec itself uses
 * (stdev->mmio), and nothing here touches what the driver writes after
 * probe (the peer's control block, the doorbell and message blocks).
 */
static void __iomem *stx_map(struct pci_dev *pdev)
{
	return pci_iomap_range(pdev, 0, SWITCHTEC_GAS_NTB_OFFSET,
			       SWITCHTEC_NTB_REG_DBMSG_OFFSET);
}

static struct ntb_ctrl_regs __iomem *stx_ctrl(void __iomem *ntb, bool peer)
{
	struct ntb_info_regs __iomem *info = ntb;
	struct ntb_ctrl_regs __iomem *ctrl = ntb +
					     SWITCHTEC_NTB_REG_CTRL_OFFSET;
	u8 self = ioread8(&info->partition_id);
	u64 target;

	if (!peer)
		return &ctrl[self];
	/* ntb_hw_switchtec's one peer: the lowest target partition. */
	target = ioread32(&info->ntp_info[self].target_part_low) |
		 (u64)ioread32(&info->ntp_info[self].target_part_high) << 32;
	return target ? &ctrl[__ffs64(target)] : NULL;
}

/*
 * A partition operation and its wait, as ntb_hw_switchtec's
 * switchtec_ntb_part_op(): write the op, poll the status while it reads
 * `busy`; 0 when it then reads `done`.
 */
static int stx_part_op(struct ntb_ctrl_regs __iomem *ctl, u32 op, u32 busy,
		       u32 done)
{
	u32 ps = busy;
	int i;

	iowrite32(op, &ctl->partition_op);
	for (i = 0; i < STX_OP_POLLS && ps == busy; i++) {
		ps = ioread32(&ctl->partition_status) & 0xffff;
		if (ps == busy)
			msleep(STX_OP_POLL_MS);
	}
	return ps == done ? 0 : -EIO;
}

/*
 * Adds rid to, or removes it from, this partition's requester-id table
 * with the LOCK/CFG handshake.  The entries the driver set at probe (the
 * root complex, 00:00.0, and the NT function itself) stay: removing them
 * is -EPERM.  An id already there is not added twice.
 */
static int stx_allow(struct pci_dev *pdev, u16 rid, bool allow)
{
	void __iomem *ntb = stx_map(pdev);
	struct ntb_ctrl_regs __iomem *ctl;
	struct ntb_info_regs __iomem *info = ntb;
	int i, at = -1, free = -1, n, rc;
	u32 e;

	if (!ntb)
		return -ENOMEM;
	ctl = stx_ctrl(ntb, false);
	if (!allow && (!rid || rid == ioread16(&info->requester_id))) {
		rc = -EPERM;
		goto out;
	}
	mutex_lock(&stx_lock);
	n = min_t(int, ioread16(&ctl->req_id_table_size),
		  ARRAY_SIZE(ctl->req_id_table));
	for (i = 0; i < n; i++) {
		e = ioread32(&ctl->req_id_table[i]);
		if (!(e & NTB_CTRL_REQ_ID_EN)) {
			if (free < 0)
				free = i;
		} else if (e >> 16 == rid && at < 0) {
			at = i;
		}
	}
	rc = 0;
	if (allow ? at >= 0 : at < 0)
		goto unlock;		/* already as asked */
	if (allow && free < 0) {
		rc = -ENOSPC;
		goto unlock;
	}
	rc = stx_part_op(ctl, NTB_CTRL_PART_OP_LOCK,
			 NTB_CTRL_PART_STATUS_LOCKING,
			 NTB_CTRL_PART_STATUS_LOCKED);
	if (rc)
		goto unlock;
	if (allow)
		iowrite32((u32)rid << 16 | NTB_CTRL_REQ_ID_EN,
			  &ctl->req_id_table[free]);
	else
		iowrite32(0, &ctl->req_id_table[at]);
	rc = stx_part_op(ctl, NTB_CTRL_PART_OP_CFG,
			 NTB_CTRL_PART_STATUS_CONFIGURING,
			 NTB_CTRL_PART_STATUS_NORMAL);
	if (rc)
		pci_err(pdev, "requester id %04x refused by the switch: req_id_error %08x\n",
			rid, ioread32(&ctl->req_id_error));
unlock:
	mutex_unlock(&stx_lock);
out:
	pci_iounmap(pdev, ntb);
	return rc;
}

/* "RID proxy PP" per enabled entry, as the chip holds it. */
static int stx_show(struct pci_dev *pdev, bool peer, struct seq_file *m)
{
	void __iomem *ntb = stx_map(pdev);
	struct ntb_ctrl_regs __iomem *ctl;
	int i, n;
	u32 e;

	if (!ntb)
		return -ENOMEM;
	ctl = stx_ctrl(ntb, peer);
	n = ctl ? min_t(int, ioread16(&ctl->req_id_table_size),
			ARRAY_SIZE(ctl->req_id_table)) : 0;
	for (i = 0; i < n; i++) {
		e = ioread32(&ctl->req_id_table[i]);
		if (e & NTB_CTRL_REQ_ID_EN)
			seq_printf(m, "%04x proxy %02x\n", e >> 16,
				   (e >> 1) & 0xff);
	}
	pci_iounmap(pdev, ntb);
	return 0;
}

/* --- the hook --------------------------------------------------------------- */

int sio_rid_allow(struct ntb_dev *ntb, u16 rid, bool allow)
{
	if (stx_match(ntb->pdev))
		return stx_allow(ntb->pdev, rid, allow);
	return 0;	/* no table on this hardware */
}

int sio_rid_show(struct ntb_dev *ntb, bool peer, struct seq_file *m)
{
	if (stx_match(ntb->pdev))
		return stx_show(ntb->pdev, peer, m);
	seq_puts(m, "no requester-id table\n");
	return 0;
}
