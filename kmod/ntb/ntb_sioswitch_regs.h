/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Register map of smartio's software NTB switch port (QEMU device
 * "smartio-ntb-port", PCI 1234:5a10), shared by the device model
 * (contrib/qemu) and the Linux driver (ntb_sioswitch.c).  Documented in
 * man/smartio-ntb-port.7.
 */
#ifndef NTB_SIOSWITCH_REGS_H
#define NTB_SIOSWITCH_REGS_H

#define NTBSW_PCI_VENDOR	0x1234	/* QEMU test devices (as edu) */
#define NTBSW_PCI_DEVICE	0x5a10

#define NTBSW_MAGIC		0x53544e42u
#define NTBSW_VERSION		2u	/* 2: window 1 sized apart, entry lengths */
#define NTBSW_MAX_PORTS		8
#define NTBSW_NR_MW		2	/* windows per peer: BAR2, BAR4 */
#define NTBSW_NR_LUT		8	/* LUT entries per (source, window) */
#define NTBSW_NR_SPAD		32
#define NTBSW_NR_VEC		3

#define NTBSW_VEC_DB		0
#define NTBSW_VEC_LINK		1
#define NTBSW_VEC_ERR		2

#define NTBSW_BAR0_SIZE		0x2000

/* 32-bit registers */
#define NTBSW_REG_ID		0x000
#define NTBSW_REG_VERSION	0x004
#define NTBSW_REG_PORT		0x008
#define NTBSW_REG_PORT_COUNT	0x00c
#define NTBSW_REG_NR_MW		0x010
#define NTBSW_REG_NR_LUT	0x014
#define NTBSW_REG_NR_SPAD	0x018
#define NTBSW_REG_LINK_EN	0x030
#define NTBSW_REG_LINK_STATUS	0x034
#define NTBSW_REG_LINK_EVENT	0x038
#define NTBSW_REG_PRESENT	0x03c
#define NTBSW_REG_ERR_STATUS	0x070
#define NTBSW_ERR_BLOCKED	0x1u
/* 64-bit registers */
#define NTBSW_REG_MW_SIZE	0x020
#define NTBSW_REG_ENT_SIZE	0x028
#define NTBSW_REG_DB_STATUS	0x040
#define NTBSW_REG_DB_MASK	0x048
#define NTBSW_REG_DB_RING	0x050
#define NTBSW_REG_DB_VALID	0x058
#define NTBSW_REG_BLOCKED_NOENTRY 0x060
#define NTBSW_REG_BLOCKED_RID	0x068
#define NTBSW_REG_LAST_BLOCKED	0x078
#define NTBSW_REG_SLOW_ACCESSES	0x080	/* outbound accesses not by alias */
#define NTBSW_REG_MW1_SIZE	0x088	/* window 1's (MW_SIZE: window 0's) */
#define NTBSW_REG_ENT1_SIZE	0x090
#define NTBSW_REG_IOVA_WALKS	0x098	/* walks of a translating peer's VT-d tables */
#define NTBSW_REG_IOVA_HITS	0x0a0	/* translations its IOTLB gave instead */
/* arrays */
#define NTBSW_REG_SPAD		0x100	/* own scratchpads, 4 bytes each */
#define NTBSW_REG_PEER_SPAD	0x200	/* + port * stride + 4 * index */
#define NTBSW_PEER_SPAD_STRIDE	0x80
#define NTBSW_REG_PEER_DB	0x800	/* + 8 * port: 64-bit, WO */
#define NTBSW_REG_LUT		0x1000	/* inbound LUT, 16 bytes an entry */
#define NTBSW_LUT_BYTES		(NTBSW_MAX_PORTS * NTBSW_NR_MW * NTBSW_NR_LUT * 16)
/* entry ((src * NTBSW_NR_MW + w) * NTBSW_NR_LUT + e):
 * +0 target low, +4 target high, +8 ctrl, +12 allowed requester ids
 */
#define NTBSW_LUT_TARGET_LO	0x0
#define NTBSW_LUT_TARGET_HI	0x4
#define NTBSW_LUT_CTRL		0x8
#define NTBSW_LUT_RID_ALLOW	0xc
#define NTBSW_LUT_EN		0x1u
/* CTRL bits 31:12: the entry's length in 4 KiB pages, 0 = the whole entry */
#define NTBSW_LUT_PAGES_SHIFT	12
#define NTBSW_LUT_PAGES_MASK	0xfffff000u

#endif
