// SPDX-License-Identifier: GPL-2.0
/*
 * Config writes that never reach the lender's real function.  Every
 * config cycle a user (CFG_WRITE through the generic netlink family) or a
 * borrower's shadow (its PCI core and driver) sends ends in
 * kplat_cfg_access; this filter sits there, so nothing else can bypass it.
 *
 * The BARs (0x10-0x27) and the expansion ROM (0x30) are emulated as VFIO
 * emulates them: a write lands in a virtual register that keeps the
 * BAR's size and flag bits, so a shadow's PCI core still sizes the BAR
 * (writes ~0, reads the mask back) while the device keeps the addresses
 * the lender's kernel assigned; reads return the virtual register, which
 * starts as the real one.
 *
 * The command register is emulated too: I/O and memory decode and every
 * other bit are virtual, except bus mastering and INTx disable, which a
 * borrower's driver must control for its DMA and which the core already
 * constrains (INTx stays disabled for a borrower, DMA only reaches the
 * borrow's window through the device's own IOMMU domain).  Turning memory
 * decode on is passed through as well (the device decodes only the
 * addresses the lender assigned); turning it off is not.  The status
 * register next to it is write-one-to-clear and passes.
 */
#include "sio_kmod.h"

#define VCFG_BAR0 PCI_BASE_ADDRESS_0
#define VCFG_BAR_END (PCI_BASE_ADDRESS_5 + 4)
#define VCFG_ROM 6		/* vcfg index of the expansion ROM */
#define VCMD_PASS (PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE)
#define VCMD_VIRT (PCI_COMMAND_IO | PCI_COMMAND_MEMORY)

/* The BARs' and the ROM's current values and writable bits. */
static void vcfg_init(struct sio_kdev *kd)
{
	struct pci_dev *pdev = kd->pdev;
	u16 cmd = 0;
	int i;

	for (i = 0; i < PCI_STD_NUM_BARS; i++) {
		pci_read_config_dword(pdev, VCFG_BAR0 + 4 * i, &kd->vcfg[i]);
		kd->vmask[i] = 0;
	}
	for (i = 0; i < PCI_STD_NUM_BARS; i++) {
		u64 len = pci_resource_len(pdev, i);
		unsigned long fl = pci_resource_flags(pdev, i);
		u64 mask = ~(len - 1);

		if (!len)
			continue;
		if (fl & IORESOURCE_IO) {
			kd->vmask[i] = (u32)mask & PCI_BASE_ADDRESS_IO_MASK;
			continue;
		}
		kd->vmask[i] = (u32)mask & PCI_BASE_ADDRESS_MEM_MASK;
		if ((fl & IORESOURCE_MEM_64) && i + 1 < PCI_STD_NUM_BARS)
			kd->vmask[++i] = (u32)(mask >> 32);
	}
	pci_read_config_dword(pdev, PCI_ROM_ADDRESS, &kd->vcfg[VCFG_ROM]);
	kd->vmask[VCFG_ROM] = 0;
	if (pci_resource_len(pdev, PCI_ROM_RESOURCE))
		kd->vmask[VCFG_ROM] =
			((u32)~(pci_resource_len(pdev, PCI_ROM_RESOURCE) - 1) &
			 PCI_ROM_ADDRESS_MASK) | PCI_ROM_ADDRESS_ENABLE;
	pci_read_config_word(pdev, PCI_COMMAND, &cmd);
	kd->vcmd = cmd;
	kd->vcfg_ready = true;
}

/*
 * Each borrow starts from the registers the lender's kernel assigned: what
 * one borrower's PCI core (or a CFG_WRITE) left in the virtual BARs is
 * not the next one's to see, and a shadow built on it would not claim its
 * resources.  The registers are read again at the next access.
 */
void sio_vcfg_reset(struct sio_kdev *kd)
{
	mutex_lock(&sio_k.lock);
	kd->vcfg_ready = false;
	mutex_unlock(&sio_k.lock);
}

/* The vcfg index of the emulated dword at off, or -1. */
static int vcfg_index(u32 off)
{
	off &= ~3u;
	if (off >= VCFG_BAR0 && off < VCFG_BAR_END)
		return (off - VCFG_BAR0) / 4;
	if (off == PCI_ROM_ADDRESS)
		return VCFG_ROM;
	return -1;
}

static u32 bytes_into(u32 reg, u32 off, u32 n, u32 v)
{
	u32 shift = 8 * (off & 3);
	u32 mask = (n == 4 ? ~0u : (1u << (8 * n)) - 1) << shift;

	return (reg & ~mask) | ((v << shift) & mask);
}

static u32 bytes_of(u32 reg, u32 off, u32 n)
{
	u32 v = reg >> (8 * (off & 3));

	return n == 4 ? v : v & ((1u << (8 * n)) - 1);
}

/*
 * One aligned access of n (1, 2 or 4) bytes at off.  Returns 1 when it was
 * emulated (*v read or written), 0 when the caller does the real access
 * (with *v, possibly changed).
 */
int sio_vcfg_access(struct sio_kdev *kd, u32 off, u32 n, u32 *v, bool write)
{
	int i = vcfg_index(off);
	u16 real, view;
	u32 dw;

	if (!kd->vcfg_ready)
		vcfg_init(kd);
	if (i >= 0) {
		if (!write) {
			*v = bytes_of(kd->vcfg[i], off, n);
			return 1;
		}
		dw = bytes_into(kd->vcfg[i], off, n, *v);
		kd->vcfg[i] = (dw & kd->vmask[i]) |
			      (kd->vcfg[i] & ~kd->vmask[i]);
		return 1;
	}
	if ((off & ~3u) != PCI_COMMAND || (off & 3) >= 2)
		return 0;	/* not the command register */
	pci_read_config_word(kd->pdev, PCI_COMMAND, &real);
	view = (real & ~VCMD_VIRT) | (kd->vcmd & VCMD_VIRT);
	if (!write) {
		u16 status = 0;

		if ((off & 3) + n > 2)
			pci_read_config_word(kd->pdev, PCI_STATUS, &status);
		*v = bytes_of(view | (u32)status << 16, off, n);
		return 1;
	}
	dw = bytes_into(view, off, n, *v);
	kd->vcmd = (u16)dw;
	real = (real & ~VCMD_PASS) | (kd->vcmd & VCMD_PASS) |
	       (kd->vcmd & PCI_COMMAND_MEMORY);
	pci_write_config_word(kd->pdev, PCI_COMMAND, real);
	if ((off & 3) + n > 2)	/* the status half: write-one-to-clear */
		pci_write_config_word(kd->pdev, PCI_STATUS, (u16)(dw >> 16));
	return 1;
}
