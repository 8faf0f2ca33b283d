// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A simulated function's configuration space: its contents as firmware
 * leaves them, and what a write may change there (issue 28, item 4).
 *
 * Configuration space is registers, not memory.  Each bit is read-only,
 * read-write or write-1-to-clear, as PCI Local Bus 3.0 section 6.2 and
 * PCIe Base 3.0 sections 7.5 (header), 6.8 (MSI, MSI-X) and 9.3.3
 * (SR-IOV) define it; a BAR's low address bits below its size read as
 * zero whatever is written, which is how software sizes it (write all
 * ones, read the mask back).  The masks are found from the function's
 * registry record and its capability list (whose ids and pointers are
 * read-only, so the walk cannot be steered by a write), so the lender's
 * view and every model's registers obey them alike.  Bytes in no
 * structure read as what they hold and ignore writes.
 */
#include <linux/pci_regs.h>

#include "devmodel.h"

/* The writable and write-1-to-clear bits of one byte. */
struct cfg_bits {
	u8 rw, w1c;
};

static const struct cfg_bits read_only;

static u8 byte_of(u32 v, u32 off)
{
	return (u8)(v >> (8 * (off & 3)));
}

/*
 * The address bits of BAR register reg of bars: those above the BAR's
 * size (the low flag bits are read-only); the register after a 64-bit
 * BAR holds its upper half.  An absent BAR is read-only zero.
 */
static u32 bar_mask(const struct sio_bar *bar, u32 reg)
{
	if (bar[reg].size)
		return (u32)~(bar[reg].size - 1) & ~0xfu;
	if (reg && bar[reg - 1].size && (bar[reg - 1].flags & SIO_BAR_MEM64))
		return (u32)(~(bar[reg - 1].size - 1) >> 32);
	return 0;
}

/* Six BAR registers from reg on, with the BARs' addresses and flags. */
static void put_bars(u8 *reg, const struct sio_bar *bar)
{
	u32 b;

	for (b = 0; b < SIO_MAX_BARS; b++) {
		u32 flags = PCI_BASE_ADDRESS_SPACE_MEMORY;

		if (!bar[b].size)
			continue;
		if (bar[b].flags & SIO_BAR_MEM64)
			flags |= PCI_BASE_ADDRESS_MEM_TYPE_64;
		if (bar[b].flags & SIO_BAR_PREFETCH)
			flags |= PCI_BASE_ADDRESS_MEM_PREFETCH;
		sio_put_le32(reg + 4 * b, (u32)bar[b].addr | flags);
		/* a 64-bit BAR takes the next register for its upper half */
		if ((bar[b].flags & SIO_BAR_MEM64) && b + 1 < SIO_MAX_BARS)
			sio_put_le32(reg + 4 * b + 4, (u32)(bar[b].addr >> 32));
	}
}

/* Type 0 header: command, status, the BARs, two scratch registers. */
static struct cfg_bits header_bits(const struct sio_device *d, u32 off)
{
	switch (off) {
	case PCI_COMMAND:	/* memory, bus master, parity response */
		return (struct cfg_bits){ PCI_COMMAND_MEMORY |
			PCI_COMMAND_MASTER | PCI_COMMAND_PARITY, 0 };
	case PCI_COMMAND + 1:	/* SERR#, Interrupt Disable */
		return (struct cfg_bits){ (PCI_COMMAND_SERR |
			PCI_COMMAND_INTX_DISABLE) >> 8, 0 };
	case PCI_STATUS + 1:	/* the error bits: parity, aborts, SERR# */
		return (struct cfg_bits){ 0, (PCI_STATUS_PARITY |
			PCI_STATUS_SIG_TARGET_ABORT | PCI_STATUS_REC_TARGET_ABORT |
			PCI_STATUS_REC_MASTER_ABORT | PCI_STATUS_SIG_SYSTEM_ERROR |
			PCI_STATUS_DETECTED_PARITY) >> 8 };
	case PCI_CACHE_LINE_SIZE:
	case PCI_INTERRUPT_LINE:
		return (struct cfg_bits){ 0xff, 0 };
	default:
		break;
	}
	if (off >= PCI_BASE_ADDRESS_0 && off < PCI_BASE_ADDRESS_5 + 4)
		return (struct cfg_bits){
			byte_of(bar_mask(d->bar, (off - PCI_BASE_ADDRESS_0) / 4),
				off), 0 };
	return read_only;
}

/* MSI: enable and Multiple Message Enable, address, data, mask bits. */
static struct cfg_bits msi_bits(const u8 *cap, u32 rel, u32 *len)
{
	u16 ctl = sio_get_le16(cap + PCI_MSI_FLAGS);
	int is64 = ctl & PCI_MSI_FLAGS_64BIT, pvm = ctl & PCI_MSI_FLAGS_MASKBIT;
	u32 data = is64 ? PCI_MSI_DATA_64 : PCI_MSI_DATA_32;
	u32 mask = is64 ? PCI_MSI_MASK_64 : PCI_MSI_MASK_32;

	*len = pvm ? mask + 8 : data + 2;
	if (rel == PCI_MSI_FLAGS)
		return (struct cfg_bits){ PCI_MSI_FLAGS_ENABLE |
					  PCI_MSI_FLAGS_QSIZE, 0 };
	if (rel == PCI_MSI_ADDRESS_LO)
		return (struct cfg_bits){ 0xfc, 0 };	/* dword aligned */
	if ((rel > PCI_MSI_ADDRESS_LO && rel < PCI_MSI_ADDRESS_LO + 4) ||
	    (is64 && rel >= PCI_MSI_ADDRESS_HI && rel < PCI_MSI_ADDRESS_HI + 4) ||
	    (rel >= data && rel < data + 2) ||
	    (pvm && rel >= mask && rel < mask + 4))
		return (struct cfg_bits){ 0xff, 0 };
	return read_only;
}

/* MSI-X: enable and Function Mask; table size and places read-only. */
static struct cfg_bits msix_bits(u32 rel, u32 *len)
{
	*len = PCI_CAP_MSIX_SIZEOF;
	if (rel == PCI_MSIX_FLAGS + 1)
		return (struct cfg_bits){
			(PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL) >> 8, 0 };
	return read_only;
}

/*
 * SR-IOV: VF Enable, VF Memory Space Enable, ARI Capable Hierarchy,
 * NumVFs, System Page Size and the VF BARs (sized by VF 0's) are
 * writable; VF Migration Status is write-1-to-clear; the rest read-only.
 */
static struct cfg_bits sriov_bits(const struct sio_device *vf0, u32 rel)
{
	switch (rel) {
	case PCI_SRIOV_CTRL:
		return (struct cfg_bits){ PCI_SRIOV_CTRL_VFE |
			PCI_SRIOV_CTRL_MSE | PCI_SRIOV_CTRL_ARI, 0 };
	case PCI_SRIOV_STATUS:
		return (struct cfg_bits){ 0, PCI_SRIOV_STATUS_VFM };
	case PCI_SRIOV_NUM_VF:
	case PCI_SRIOV_NUM_VF + 1:
		return (struct cfg_bits){ 0xff, 0 };
	default:
		break;
	}
	if (rel >= PCI_SRIOV_SYS_PGSIZE && rel < PCI_SRIOV_SYS_PGSIZE + 4)
		return (struct cfg_bits){ 0xff, 0 };
	if (vf0 && rel >= PCI_SRIOV_BAR && rel < PCI_SRIOV_BAR + 24)
		return (struct cfg_bits){
			byte_of(bar_mask(vf0->bar, (rel - PCI_SRIOV_BAR) / 4),
				rel), 0 };
	return read_only;
}

/* The capability in the standard list that holds off, if any. */
static struct cfg_bits cap_bits(const u8 *c, u32 off)
{
	u32 pos = c[PCI_CAPABILITY_LIST] & ~3u, hops, len;
	struct cfg_bits b;

	if (!(sio_get_le16(c + PCI_STATUS) & PCI_STATUS_CAP_LIST))
		return read_only;
	for (hops = 0; pos >= PCI_STD_HEADER_SIZEOF && pos < 0x100 &&
	     hops < 48; hops++) {
		const u8 *cap = c + pos;

		if (off >= pos && off < pos + 24) {
			len = 2;
			b = read_only;
			if (cap[PCI_CAP_LIST_ID] == PCI_CAP_ID_MSI)
				b = msi_bits(cap, off - pos, &len);
			else if (cap[PCI_CAP_LIST_ID] == PCI_CAP_ID_MSIX &&
				 pos + PCI_CAP_MSIX_SIZEOF <= 0x100)
				b = msix_bits(off - pos, &len);
			if (off - pos < len && pos + len <= 0x100)
				return b;
		}
		pos = cap[PCI_CAP_LIST_NEXT] & ~3u;
	}
	return read_only;
}

/* The extended capability (from 0x100) that holds off, if any. */
static struct cfg_bits ext_cap_bits(const u8 *c, u32 size,
				    const struct sio_device *vf0, u32 off)
{
	u32 pos = PCI_CFG_SPACE_SIZE, hops, hdr;

	for (hops = 0; pos >= PCI_CFG_SPACE_SIZE && pos + 4 <= size &&
	     hops < 64; hops++) {
		hdr = sio_get_le32(c + pos);
		if (!hdr)
			break;
		if (PCI_EXT_CAP_ID(hdr) == PCI_EXT_CAP_ID_SRIOV &&
		    off >= pos && off < pos + PCI_EXT_CAP_SRIOV_SIZEOF &&
		    pos + PCI_EXT_CAP_SRIOV_SIZEOF <= size)
			return sriov_bits(vf0, off - pos);
		pos = PCI_EXT_CAP_NEXT(hdr);
	}
	return read_only;
}

static struct cfg_bits bits_at(const u8 *c, const struct sio_device *d,
			       const struct sio_device *vf0, u32 off)
{
	if (off < PCI_STD_HEADER_SIZEOF)
		return header_bits(d, off);
	if (off < PCI_CFG_SPACE_SIZE)
		return cap_bits(c, off);
	return ext_cap_bits(c, d->config_size, vf0, off);
}

void sim_cfg_write(u8 *c, const struct sio_device *d,
		   const struct sio_device *vf0, u32 off, const u8 *src,
		   u32 len)
{
	u32 i;

	for (i = 0; i < len && off + i < d->config_size; i++) {
		struct cfg_bits b = bits_at(c, d, vf0, off + i);
		u8 *reg = c + off + i;

		*reg = (u8)((*reg & ~b.rw) | (src[i] & b.rw));
		*reg &= (u8)~(src[i] & b.w1c);
	}
}

/*
 * A PF's SR-IOV extended capability (PCIe base 3.0 section 9.3.3) at 0x100:
 * TotalVFs and InitialVFs, First VF Offset 1 and VF Stride 1, the VF
 * device id, 4K system pages, and the VF BARs where VF 0's are; NumVFs and
 * VF Enable start at 0 (the core's sriov.c writes them).
 */
static void sriov_cap_init(u8 *c, const struct sio_device *d,
			   const struct sio_device *vf0)
{
	u8 *cap = c + PCI_CFG_SPACE_SIZE;

	sio_put_le32(cap, PCI_EXT_CAP_ID_SRIOV | 1u << 16);	/* v1, last */
	sio_put_le16(cap + PCI_SRIOV_INITIAL_VF, d->sriov_total);
	sio_put_le16(cap + PCI_SRIOV_TOTAL_VF, d->sriov_total);
	sio_put_le16(cap + PCI_SRIOV_VF_OFFSET, 1);
	sio_put_le16(cap + PCI_SRIOV_VF_STRIDE, 1);
	sio_put_le16(cap + PCI_SRIOV_VF_DID, vf0->device);
	sio_put_le32(cap + PCI_SRIOV_SUP_PGSIZE, 0x553);	/* 4K .. 4M */
	sio_put_le32(cap + PCI_SRIOV_SYS_PGSIZE, 1);		/* 4K */
	put_bars(cap + PCI_SRIOV_BAR, vf0->bar);
}

void sim_cfg_layout(u8 *c, const struct sio_device *d,
		    const struct sio_device *vf0)
{
	sio_put_le16(c + PCI_VENDOR_ID, d->vendor);
	sio_put_le16(c + PCI_DEVICE_ID, d->device);
	sio_put_le16(c + PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	sio_put_le16(c + PCI_STATUS, PCI_STATUS_CAP_LIST);
	c[PCI_REVISION_ID] = d->revision;
	c[PCI_CLASS_PROG] = (u8)d->class_code;
	sio_put_le16(c + PCI_CLASS_DEVICE, (u16)(d->class_code >> 8));
	c[PCI_HEADER_TYPE] = PCI_HEADER_TYPE_NORMAL;
	put_bars(c + PCI_BASE_ADDRESS_0, d->bar);
	sio_put_le16(c + PCI_SUBSYSTEM_VENDOR_ID, d->subsys_vendor);
	sio_put_le16(c + PCI_SUBSYSTEM_ID, d->subsys_device);
	c[PCI_CAPABILITY_LIST] = SIM_CAP_MSI;
	c[SIM_CAP_MSI + PCI_CAP_LIST_ID] = PCI_CAP_ID_MSI;
	c[SIM_CAP_MSI + PCI_CAP_LIST_NEXT] = 0;	/* the model may chain MSI-X */
	sio_put_le16(c + SIM_CAP_MSI + PCI_MSI_FLAGS, PCI_MSI_FLAGS_64BIT);
	c[PCI_INTERRUPT_PIN] = 1;		/* INTA (masked for borrowers) */
	sim_model_cfg_init(d->model, d->bar[0].size, c);
	if (vf0)
		sriov_cap_init(c, d, vf0);
}
