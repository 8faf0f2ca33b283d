/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Microchip Switchtec PFX global address space (GAS, BAR0 of every
 * function of the switch) as far as Linux's switchtec.ko and
 * ntb_hw_switchtec.ko read and write it (include/linux/switchtec.h in
 * linux 6.1 names every block; this file restates the layout the drivers
 * rely on, checked by _Static_assert), and the switch state the
 * switchtec-nt model shares between the partitions' QEMUs (the
 * smartio-ntb-switch memfd, after struct ntbsw_state).
 */
#ifndef SWITCHTEC_GAS_H
#define SWITCHTEC_GAS_H

#include <stdint.h>

#include "ntbsw-proto.h"

#define STX_VENDOR		0x11f8	/* Microsemi / Microchip */
#define STX_DEVICE_DEFAULT	0x8531	/* PFX 24xG3 */
#define STX_CLASS_NT		0x068000 /* bridge, other: the NT function */

#define STX_GAS_SIZE		0x400000 /* BAR0: through the last pff_csr */
#define STX_GAS_MRPC		0x0000
#define STX_GAS_TOP_CFG		0x1000
#define STX_GAS_SW_EVENT	0x1800
#define STX_GAS_SYS_INFO	0x2000
#define STX_GAS_FLASH_INFO	0x2200
#define STX_GAS_PART_CFG	0x4000
#define STX_GAS_NTB		0x10000
#define STX_GAS_NTB_CTRL	(STX_GAS_NTB + 0x4000)
#define STX_GAS_NTB_DBMSG	(STX_GAS_NTB + 0x64000)
#define STX_GAS_PFF_CSR		0x134000

#define STX_MAX_PARTS		48	/* blocks the GAS has room for */
#define STX_MAX_PFF		255
#define STX_MAX_LUT		512
#define STX_MAX_RID		512
#define STX_LUT_SIZE		0x10000	/* ntb_hw_switchtec's LUT_SIZE */
#define STX_NR_BAR_ENTRY	6
#define STX_NR_MSG		4
#define STX_NR_DB		64
#define STX_NR_VEC		32	/* switchtec.ko asks for nirqs = 32 */

#define STX_MRPC_PAYLOAD	1024
#define STX_MRPC_STATUS_DONE	2
#define STX_MRPC_STATUS_ERROR	0xff
/* Commands (switchtec-user's mrpc.h numbers) and DIETEMP's sub-commands. */
#define STX_MRPC_DIETEMP	4
#define STX_MRPC_ECHO		65
#define STX_DIETEMP_SET_MEAS	1
#define STX_DIETEMP_GET		2

#define STX_EVENT_OCCURRED	(1u << 0)
#define STX_EVENT_CLEAR		(1u << 0)
#define STX_EVENT_EN_IRQ	(1u << 3)
#define STX_EVENT_COUNT_SHIFT	5	/* link_state_hdr: events seen */

enum stx_part_op {
	STX_PART_OP_LOCK = 1,
	STX_PART_OP_CFG = 2,
	STX_PART_OP_RESET = 3,
};

enum stx_part_status {
	STX_PART_NORMAL = 1,
	STX_PART_LOCKED = 2,
	STX_PART_LOCKING = 3,
	STX_PART_CONFIGURING = 4,
	STX_PART_RESETTING = 5,
};

#define STX_BAR_VALID		(1u << 0)
#define STX_BAR_DIR_WIN_EN	(1u << 4)
#define STX_BAR_LUT_WIN_EN	(1u << 5)
#define STX_BAR_LUT_SIZE_SHIFT	8	/* log2 of a LUT entry's size */
#define STX_BAR_LUT_SIZE_MASK	0x3fu
#define STX_BAR_LUT_COUNT_SHIFT	14	/* LUT entries - 1 */
#define STX_BAR_LUT_COUNT_MASK	0x1ffu
#define STX_REQ_ID_EN		(1u << 0)
#define STX_LUT_EN		(1u << 0)
#define STX_LUT_PART_SHIFT	1
#define STX_LUT_PART_MASK	0x3fu
/* A direct window's xlate_addr carries the target partition in its low bits. */
#define STX_XLATE_PART_MASK	0x3fu

/* A 64-bit imsg register: message in the low word, flags above. */
#define STX_IMSG_STATUS		(1ULL << 32)
#define STX_IMSG_MASK		(1ULL << 40)

struct stx_mrpc_regs {
	uint8_t input_data[STX_MRPC_PAYLOAD];
	uint8_t output_data[STX_MRPC_PAYLOAD];
	uint32_t cmd;
	uint32_t status;
	uint32_t ret_value;
	uint32_t dma_en;
	uint64_t dma_addr;
	uint32_t dma_vector;
	uint32_t dma_ver;
} __attribute__((packed));

struct stx_sys_info_regs {
	uint32_t device_id;
	uint32_t device_version;
	uint32_t firmware_version;
	/* gen3 */
	uint32_t reserved1;
	uint32_t vendor_table_revision;
	uint32_t table_format_version;
	uint32_t partition_id;
	uint32_t cfg_file_fmt_version;
	uint16_t cfg_running;
	uint16_t img_running;
	uint32_t reserved2[57];
	char vendor_id[8];
	char product_id[16];
	char product_revision[4];
	char component_vendor[8];
	uint16_t component_id;
	uint8_t component_revision;
} __attribute__((packed));

struct stx_ntb_info_regs {
	uint8_t partition_count;
	uint8_t partition_id;
	uint16_t reserved1;
	uint64_t ep_map;
	uint16_t requester_id;
	uint16_t reserved2;
	uint32_t reserved3[4];
	struct {
		uint32_t xlink_enabled;
		uint32_t target_part_low;
		uint32_t target_part_high;
		uint32_t reserved;
	} ntp_info[STX_MAX_PARTS];
} __attribute__((packed));

struct stx_part_cfg_regs {
	uint32_t status;
	uint32_t state;
	uint32_t port_cnt;
	uint32_t usp_port_mode;
	uint32_t usp_pff_inst_id;
	uint32_t vep_pff_inst_id;
	uint32_t dsp_pff_inst_id[47];
	uint32_t reserved1[11];
	uint16_t vep_vector_number;
	uint16_t usp_vector_number;
	uint32_t port_event_bitmap;
	uint32_t reserved2[3];
	uint32_t part_event_summary;
	uint32_t reserved3[3];
	uint32_t part_reset_hdr;
	uint32_t part_reset_data[5];
	uint32_t mrpc_comp_hdr;
	uint32_t mrpc_comp_data[5];
	uint32_t mrpc_comp_async_hdr;
	uint32_t mrpc_comp_async_data[5];
	uint32_t dyn_binding_hdr;
	uint32_t dyn_binding_data[5];
	uint32_t intercomm_notify_hdr;
	uint32_t intercomm_notify_data[5];
	uint32_t reserved4[153];
} __attribute__((packed));

struct stx_ntb_ctrl_regs {
	uint32_t partition_status;
	uint32_t partition_op;
	uint32_t partition_ctrl;
	uint32_t bar_setup;
	uint32_t bar_error;
	uint16_t lut_table_entries;
	uint16_t lut_table_offset;
	uint32_t lut_error;
	uint16_t req_id_table_size;
	uint16_t req_id_table_offset;
	uint32_t req_id_error;
	uint32_t reserved1[7];
	struct {
		uint32_t ctl;
		uint32_t win_size;
		uint64_t xlate_addr;
	} bar_entry[STX_NR_BAR_ENTRY];
	struct {
		uint32_t win_size;
		uint32_t reserved[3];
	} bar_ext_entry[STX_NR_BAR_ENTRY];
	uint32_t reserved2[192];
	uint32_t req_id_table[STX_MAX_RID];
	uint32_t reserved3[256];
	uint64_t lut_entry[STX_MAX_LUT];
} __attribute__((packed));

struct stx_dbmsg_regs {
	uint32_t reserved1[1024];
	uint64_t odb;
	uint64_t odb_mask;
	uint64_t idb;
	uint64_t idb_mask;
	uint8_t idb_vec_map[STX_NR_DB];
	uint32_t msg_map;
	uint32_t reserved2;
	struct {
		uint32_t msg;
		uint32_t status;
	} omsg[STX_NR_MSG];
	struct {
		uint32_t msg;
		uint8_t status;
		uint8_t mask;
		uint8_t src;
		uint8_t reserved;
	} imsg[STX_NR_MSG];
	uint8_t reserved3[3928];
	uint8_t msix_table[1024];
	uint8_t reserved4[3072];
	uint8_t pba[24];
	uint8_t reserved5[4072];
} __attribute__((packed));

struct stx_pff_csr_regs {
	uint16_t vendor_id;
	uint16_t device_id;
	uint16_t pcicmd;
	uint16_t pcists;
	uint32_t pci_class;
	uint32_t pci_opts;
	uint64_t pci_bar64[3];
	uint32_t pci_cardbus;
	uint32_t pci_subsystem_id;
	uint32_t pci_expansion_rom;
	uint32_t pci_cap_ptr;
	uint32_t reserved1;
	uint32_t pci_irq;
	uint32_t pci_cap_region[48];
	uint32_t pcie_cap_region[448];
	uint32_t indirect_gas_window[128];
	uint32_t indirect_gas_window_off;
	uint32_t reserved[127];
	uint32_t pff_event_summary;
	uint32_t reserved2[3];
	uint32_t event[12][6];	/* aer_in_p2p .. credit_timeout: hdr, data */
	uint32_t link_state_hdr;
	uint32_t link_state_data[5];
	uint32_t reserved4[174];
} __attribute__((packed));

/* pci_cap_region[13]: the link status word the NTB driver reads. */
#define STX_PFF_LINKSTA_DW	13
#define STX_LINKSTA_SPEED_SHIFT	16
#define STX_LINKSTA_WIDTH_SHIFT	20

_Static_assert(sizeof(struct stx_mrpc_regs) == 0x820, "mrpc block");
_Static_assert(sizeof(struct stx_part_cfg_regs) == 0x400, "part_cfg block");
_Static_assert(sizeof(struct stx_ntb_ctrl_regs) == 0x2000, "ctrl block");
_Static_assert(sizeof(struct stx_dbmsg_regs) == 0x4000, "dbmsg block");
_Static_assert(sizeof(struct stx_pff_csr_regs) == 0x1000, "pff_csr block");
_Static_assert(STX_GAS_NTB_CTRL + STX_MAX_PARTS * 0x2000 == STX_GAS_NTB_DBMSG,
	       "control blocks end where doorbell blocks begin");
_Static_assert(STX_GAS_NTB_DBMSG + STX_MAX_PARTS * 0x4000 == STX_GAS_PFF_CSR,
	       "doorbell blocks end where pff_csr begins");
_Static_assert(STX_GAS_PFF_CSR + STX_MAX_PFF * 0x1000 <= STX_GAS_SIZE,
	       "BAR0 holds every pff_csr");

/*
 * What the switch owns for a Switchtec fabric: its configuration (what
 * firmware would hold), per partition the NT control block as the guests
 * wrote it and as the last CFG operation made it take effect, and the
 * doorbell/message block.  One partition per switch port.
 */
#define STX_STATE_MAGIC		0x53545843u	/* "CXTS" */

struct stx_part_state {
	struct stx_ntb_ctrl_regs ctrl;		/* as written (staged) */
	struct stx_ntb_ctrl_regs active;	/* as configured */
	struct stx_dbmsg_regs dbmsg;
	/*
	 * Partitions inside a LOCK..CFG handshake on this block: each reads
	 * partition_status as its own handshake's state (not known on the
	 * chip; the drivers of two hosts lock one block at the same time).
	 */
	uint32_t lockers;
	uint32_t target_part;	/* bit mask of its NT target partitions */
	uint64_t guest_errors;	/* writes the chip would reject */
	uint64_t blocked;	/* accesses no window entry covered */
	/* Requests of a requester not in the sender's table: writes, reads. */
	uint64_t blocked_rid;
	uint64_t blocked_rid_rd;
};

struct stx_state {
	uint32_t magic;
	uint32_t nparts;
	uint32_t device_id;
	uint32_t lut_entries;	/* per partition, a power of two */
	uint32_t rid_entries;
	uint32_t id_protect;
	uint64_t bar_size[2];	/* BAR2 (LUT area + direct), BAR4 */
	struct stx_part_state part[NTBSW_MAX_PORTS];
};

/* The Switchtec state sits in the switch memfd after struct ntbsw_state. */
#define STX_STATE_OFFSET \
	((sizeof(struct ntbsw_state) + 4095) & ~(size_t)4095)

#endif
