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
 *
 * The rest of config space is filtered as VFIO filters a guest's
 * (drivers/vfio/pci/vfio_pci_config.c has the same idea per capability):
 * a borrower's driver gets the controls of its own function and nothing
 * that changes the lender's PCI core's view of it or the fabric around
 * it.  Read-only, whatever is written: the header's identity fields and
 * BIST, every capability's header (id and next pointer) and the
 * capabilities pointer; the power management capabilities, Max_Payload_Size,
 * Max_Read_Request_Size and phantom functions in Device Control, ARI in
 * Device Control 2, Link Control (ASPM, retraining); the whole SR-IOV
 * capability (VF Enable behind the lender's PCI core would add functions
 * it never enumerated); AER's masks, severities and control; ACS control.
 * Emulated: the power state of PMCSR (the function stays in D0 and
 * reads back the state written: D3hot would take its BARs away from
 * the lender as well).  Performed by the lender: Function Level Reset in
 * Device Control, as pci_reset_function() does it (the function's state
 * saved and restored, so its BARs keep the lender's addresses), or
 * refused with a log line when the function is busy.  Status registers
 * (write-one-to-clear) and registers outside any capability the device
 * lists pass, as VFIO passes them.
 *
 * An SR-IOV VF (sio_sriov.c) reads 0xffff as vendor and device ID and
 * 0 in its BAR registers (SR-IOV 1.1 sections 3.4.1.1, 3.4.1.11: the PF's
 * capability holds them); a borrower's PCI core enumerating its shadow
 * would find nothing there, so the IDs read as the lender's PCI core
 * knows them and the BARs start as their resources, as VFIO shows a VF.
 */
#include "sio_kmod.h"

#define VCFG_BAR0 PCI_BASE_ADDRESS_0
#define VCFG_BAR_END (PCI_BASE_ADDRESS_5 + 4)
#define VCFG_ROM 6		/* vcfg index of the expansion ROM */
#define VCMD_PASS (PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE)
#define VCMD_VIRT (PCI_COMMAND_IO | PCI_COMMAND_MEMORY)
#define VCFG_EXT_HDR 4		/* an extended capability's header */

/* Every capability the function lists, standard and extended. */
static void vcfg_find_caps(struct sio_kdev *kd)
{
	struct pci_dev *pdev = kd->pdev;
	u32 hdr, epos = PCI_CFG_SPACE_SIZE;
	u8 pos = 0, id = 0;
	int hops;

	kd->ncaps = 0;
	pci_read_config_byte(pdev, PCI_CAPABILITY_LIST, &pos);
	for (hops = 0; hops < 48 && pos >= PCI_STD_HEADER_SIZEOF &&
	     kd->ncaps < SIO_VCFG_CAPS; hops++) {
		pos &= ~3;
		pci_read_config_byte(pdev, pos + PCI_CAP_LIST_ID, &id);
		kd->vcap[kd->ncaps++] = (struct sio_vcap){ pos, id };
		pci_read_config_byte(pdev, pos + PCI_CAP_LIST_NEXT, &pos);
	}
	if (pdev->cfg_size <= PCI_CFG_SPACE_SIZE)
		return;
	for (hops = 0; hops < 480 && epos >= PCI_CFG_SPACE_SIZE &&
	     kd->ncaps < SIO_VCFG_CAPS; hops++) {
		if (pci_read_config_dword(pdev, epos, &hdr) || !hdr ||
		    hdr == ~0u)
			break;
		kd->vcap[kd->ncaps++] = (struct sio_vcap){
			epos, SIO_VCAP_EXT | PCI_EXT_CAP_ID(hdr) };
		epos = PCI_EXT_CAP_NEXT(hdr);
	}
}

/* A VF's BAR registers (zero in the function) as its resources say. */
static void vcfg_vf_bars(struct sio_kdev *kd)
{
	u32 flags;
	u64 start;
	int i;

	for (i = 0; i < PCI_STD_NUM_BARS; i++) {
		if (!sio_k_bar(kd->pdev, i, &flags))
			continue;
		start = pci_resource_start(kd->pdev, i);
		kd->vcfg[i] = lower_32_bits(start) |
			      (flags & SIO_BAR_PREFETCH ?
			       PCI_BASE_ADDRESS_MEM_PREFETCH : 0);
		if (flags & SIO_BAR_MEM64 && i + 1 < PCI_STD_NUM_BARS) {
			kd->vcfg[i] |= PCI_BASE_ADDRESS_MEM_TYPE_64;
			kd->vcfg[++i] = upper_32_bits(start);
		}
	}
}

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
	if (pdev->is_virtfn)
		vcfg_vf_bars(kd);
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
	vcfg_find_caps(kd);
	kd->vpower = 0;
	if (pdev->pm_cap) {
		pci_read_config_word(pdev, pdev->pm_cap + PCI_PM_CTRL, &cmd);
		kd->vpower = cmd & PCI_PM_CTRL_STATE_MASK;
	}
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
	sio_k_lock();
	kd->vcfg_ready = false;
	sio_k_unlock();
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

/* --- what of a byte reaches the device ----------------------------------- */

/* The standard header's bytes outside BARs, ROM and command/status. */
static u8 header_mask(u32 off)
{
	switch (off) {
	case PCI_STATUS:
	case PCI_STATUS + 1:	/* write-one-to-clear */
	case PCI_CACHE_LINE_SIZE:
	case PCI_LATENCY_TIMER:
	case PCI_INTERRUPT_LINE:
		return 0xff;
	default:
		return 0;	/* ids, class, header type, BIST, pointers */
	}
}

/* Byte rel of the PCI Express capability (an endpoint's registers). */
static int exp_mask(u32 rel)
{
	switch (rel) {
	case PCI_EXP_DEVCTL:
		return 0xff & ~PCI_EXP_DEVCTL_PAYLOAD;
	case PCI_EXP_DEVCTL + 1:
		/* FLR is done by the lender (vcfg_flr), never passed. */
		return 0xff & ~((PCI_EXP_DEVCTL_BCR_FLR |
				 PCI_EXP_DEVCTL_READRQ |
				 PCI_EXP_DEVCTL_PHANTOM) >> 8);
	case PCI_EXP_DEVSTA:
	case PCI_EXP_DEVSTA + 1:
	case PCI_EXP_LNKSTA:
	case PCI_EXP_LNKSTA + 1:
		return 0xff;	/* write-one-to-clear */
	case PCI_EXP_DEVCTL2:
		return 0xff & ~PCI_EXP_DEVCTL2_ARI;
	case PCI_EXP_DEVCTL2 + 1:
		return 0xff;
	default:
		return rel < PCI_CAP_EXP_ENDPOINT_SIZEOF_V2 ? 0 : -1;
	}
}

/* Byte rel of AER: the status registers (write-one-to-clear) only. */
static int aer_mask(u32 rel)
{
	if ((rel >= PCI_ERR_UNCOR_STATUS && rel < PCI_ERR_UNCOR_STATUS + 4) ||
	    (rel >= PCI_ERR_COR_STATUS && rel < PCI_ERR_COR_STATUS + 4))
		return 0xff;
	return rel < PCI_ERR_ROOT_ERR_SRC + 4 ? 0 : -1;
}

/*
 * The writable bits of byte rel of a capability with that id, or -1 past
 * the registers known of it (the device's own registers: they pass).
 */
static int cap_mask(u16 id, u32 rel)
{
	switch (id) {
	case PCI_CAP_ID_PM:
		if (rel == PCI_PM_CTRL)	/* the power state is emulated */
			return 0xff & ~PCI_PM_CTRL_STATE_MASK;
		if (rel == PCI_PM_CTRL + 1)
			return 0xff;	/* PME enable, PME status */
		return rel < PCI_PM_SIZEOF ? 0 : -1;
	case PCI_CAP_ID_EXP:
		return exp_mask(rel);
	case SIO_VCAP_EXT | PCI_EXT_CAP_ID_SRIOV:
		return rel < PCI_EXT_CAP_SRIOV_SIZEOF ? 0 : -1;
	case SIO_VCAP_EXT | PCI_EXT_CAP_ID_ERR:
		return aer_mask(rel);
	case SIO_VCAP_EXT | PCI_EXT_CAP_ID_ACS:
		return rel < PCI_ACS_CTRL + 2 ? 0 : -1;
	default:	/* the header; MSI and MSI-X: the core's */
		if (id & SIO_VCAP_EXT)
			return rel < VCFG_EXT_HDR ? 0 : -1;
		return rel < 2 ? 0 : -1;
	}
}

/* The bits of the byte at off that a write may change in the device. */
static u8 byte_mask(struct sio_kdev *kd, u32 off)
{
	const struct sio_vcap *c = NULL;
	bool ext = off >= PCI_CFG_SPACE_SIZE;
	int i, m;

	if (off < PCI_STD_HEADER_SIZEOF)
		return header_mask(off);
	/* The capability it belongs to: the nearest one starting below. */
	for (i = 0; i < kd->ncaps; i++) {
		const struct sio_vcap *v = &kd->vcap[i];

		if (!!(v->id & SIO_VCAP_EXT) == ext && v->off <= off &&
		    (!c || v->off > c->off))
			c = v;
	}
	if (!c)
		return 0xff;
	m = cap_mask(c->id, off - c->off);
	return m < 0 ? 0xff : m;
}

/* The capability with that id (SIO_VCAP_EXT for extended ones), or 0. */
static u32 vcap_off(struct sio_kdev *kd, u16 id)
{
	int i;

	for (i = 0; i < kd->ncaps; i++)
		if (kd->vcap[i].id == id)
			return kd->vcap[i].off;
	return 0;
}

static bool covers(u32 off, u32 n, u32 at)
{
	return at && at >= off && at < off + n;
}

/*
 * A reset the borrower (or a user) asked for with Device Control's FLR:
 * the lender's PCI core performs it with the function's state saved and
 * restored, so the real BARs keep the lender's addresses; the emulated
 * registers are read again afterwards.  A function that is busy (its
 * lock or config access held) is not reset.
 */
static void vcfg_flr(struct sio_kdev *kd)
{
	struct pci_dev *pdev = kd->pdev;
	int err = pci_try_reset_function(pdev);

	if (err)
		pci_warn(pdev, "smartio: function level reset written to Device Control refused: %d\n",
			 err);
	else
		pci_info(pdev, "smartio: function level reset written to Device Control done by the lender, state saved and restored\n");
	kd->vcfg_ready = false;
}

/*
 * A write of n bytes at off outside BARs, ROM and command register:
 * 0 when it goes to the device as it is, 1 when it was done here.
 */
static int vcfg_filter_write(struct sio_kdev *kd, u32 off, u32 n, u32 v)
{
	u32 pmcsr = kd->pdev->pm_cap ? kd->pdev->pm_cap + PCI_PM_CTRL : 0;
	u32 exp = vcap_off(kd, PCI_CAP_ID_EXP), i;
	bool flr = false, all = true;
	u8 m[4];

	for (i = 0; i < n; i++) {
		m[i] = byte_mask(kd, off + i);
		all &= m[i] == 0xff;
	}
	if (covers(off, n, pmcsr))
		kd->vpower = (v >> (8 * (pmcsr - off))) &
			     PCI_PM_CTRL_STATE_MASK;
	if (exp && covers(off, n, exp + PCI_EXP_DEVCTL + 1))
		flr = (v >> (8 * (exp + PCI_EXP_DEVCTL + 1 - off))) &
		      (PCI_EXP_DEVCTL_BCR_FLR >> 8);
	if (all)
		return 0;
	/*
	 * Byte by byte, so that a byte nobody may write is not written at
	 * all (no write-one-to-clear bit in it is cleared by writing back
	 * what was read).
	 */
	for (i = 0; i < n; i++) {
		u8 b = v >> (8 * i), real = 0;

		if (!m[i])
			continue;
		if (m[i] != 0xff) {
			pci_read_config_byte(kd->pdev, off + i, &real);
			b = (b & m[i]) | (real & ~m[i]);
		}
		pci_write_config_byte(kd->pdev, off + i, b);
	}
	if (flr)
		vcfg_flr(kd);
	return 1;
}

/* A read of n bytes at off that shows the emulated power state: 1. */
static int vcfg_power_read(struct sio_kdev *kd, u32 off, u32 n, u32 *v)
{
	u32 pmcsr = kd->pdev->pm_cap ? kd->pdev->pm_cap + PCI_PM_CTRL : 0;
	u32 dw = 0, shift;

	if (!covers(off, n, pmcsr))
		return 0;
	shift = 8 * (pmcsr - off);
	pci_read_config_dword(kd->pdev, off & ~3u, &dw);
	dw = bytes_of(dw, off, n);
	*v = (dw & ~(PCI_PM_CTRL_STATE_MASK << shift)) |
	     (u32)kd->vpower << shift;
	return 1;
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

	lockdep_assert_held(&sio_k.lock);
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
	if (!write && off < PCI_COMMAND && kd->pdev->is_virtfn) {
		*v = bytes_of(kd->pdev->vendor | (u32)kd->pdev->device << 16,
			      off, n);
		return 1;
	}
	if ((off & ~3u) != PCI_COMMAND || (off & 3) >= 2)	/* elsewhere */
		return write ? vcfg_filter_write(kd, off, n, *v) :
			       vcfg_power_read(kd, off, n, v);
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
