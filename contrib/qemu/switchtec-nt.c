/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * switchtec-nt: the NT function of one partition of a Microchip Switchtec
 * PFX switch (PCI 11f8:8531.., class 068000), as Linux's unmodified
 * switchtec.ko and ntb_hw_switchtec.ko drive it.  One guest is one
 * partition (its switch port number); smartio-ntb-switch started with -x
 * is the switch and its firmware: it holds what every partition's QEMU
 * must see alike (control blocks, doorbell and message blocks; layout in
 * switchtec-gas.h) and the configuration firmware would own (partition
 * pairs, LUT entries, requester-id table size, BAR sizes).  The data path
 * (RAM aliases, forwarded accesses, interrupts) is ntbsw-core.c's.
 *
 * What the model follows from the drivers, and what is not known about
 * the silicon, is in man/switchtec-nt.7.  In short: BAR0 is the global
 * address space; BAR2 is the LUT area (64 KiB entries) and a direct
 * window after it; BAR4 a direct window; a translation takes effect at
 * the CFG partition operation, not at the register write, and a write to
 * a control block that is not locked, a configuration the chip could not
 * hold, or an offset that names no register is logged as a guest error
 * and counted (never silently taken).
 */
#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "sysemu/hostmem.h"
#include "qom/object.h"

#include "ntbsw-core.h"
#include "switchtec-gas.h"

#define TYPE_STX_NT "switchtec-nt"
OBJECT_DECLARE_SIMPLE_TYPE(StxNt, STX_NT)

#define STX_PFF_PER_PART	2	/* usp 2p, vep 2p + 1 */
#define STX_EVENT_VEC		0	/* part_cfg.vep_vector_number */
#define STX_LINK_SPEED		3	/* Gen3 */
#define STX_LINK_WIDTH		4

struct StxNt {
	PCIDevice parent_obj;
	struct ntbsw_core c;

	struct stx_state *x;
	unsigned int part;
	MemoryRegion bar0, gas;

	/* registers of this function alone */
	struct stx_mrpc_regs mrpc;
	uint32_t mrpc_comp_hdr;
	uint32_t link_hdr[NTBSW_MAX_PORTS * STX_PFF_PER_PART];
	uint32_t present;	/* partitions seen present */
	uint64_t guest_errors;
	uint32_t die_temp;	/* the die sensor, 0.01 degree C */
	bool temp_measured;	/* DIETEMP_SET_MEAS came first */
};

static StxNt *stx_of(struct ntbsw_core *c)
{
	return container_of(c, StxNt, c);
}

static struct stx_part_state *stx_me(StxNt *s)
{
	return &s->x->part[s->part];
}

/* A write the chip would reject, an offset naming no register: counted. */
static void G_GNUC_PRINTF(2, 3) stx_guest_error(StxNt *s, const char *fmt,
						...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	qemu_log_mask(LOG_GUEST_ERROR, "switchtec-nt %u: %s\n", s->part, msg);
	g_free(msg);
	s->guest_errors++;
	qatomic_inc(&stx_me(s)->guest_errors);
}

/* ---- translation ------------------------------------------------------- */

static uint64_t stx_lut_area(const struct stx_ntb_ctrl_regs *a)
{
	uint32_t ctl = qatomic_read(&a->bar_entry[2].ctl);

	if (!(ctl & STX_BAR_LUT_WIN_EN))
		return 0;
	return (((ctl >> STX_BAR_LUT_COUNT_SHIFT) & STX_BAR_LUT_COUNT_MASK) +
		1) * (uint64_t)STX_LUT_SIZE;
}

static uint64_t stx_win_size(const struct stx_ntb_ctrl_regs *a,
			     unsigned int bar)
{
	return (qatomic_read(&a->bar_entry[bar].win_size) & 0xfffff000u) |
	       (uint64_t)qatomic_read(&a->bar_ext_entry[bar].win_size) << 32;
}

/*
 * Where offset addr of window w (BAR2, BAR4) leads by the configured
 * (active) control block: partition and address, and how much of the
 * entry is left from there.  False: no enabled entry covers it.
 */
static bool stx_lookup(StxNt *s, unsigned int w, uint64_t addr,
		       unsigned int *part, uint64_t *target, uint64_t *left)
{
	const struct stx_ntb_ctrl_regs *a = &stx_me(s)->active;
	unsigned int bar = w ? 4 : 2;
	uint64_t area = w ? 0 : stx_lut_area(a), xl, size;

	if (addr < area) {
		uint64_t v = qatomic_read(&a->lut_entry[addr / STX_LUT_SIZE]);

		if (!(v & STX_LUT_EN))
			return false;
		*part = (v >> STX_LUT_PART_SHIFT) & STX_LUT_PART_MASK;
		*target = (v & ~(uint64_t)(STX_LUT_SIZE - 1)) +
			  addr % STX_LUT_SIZE;
		*left = STX_LUT_SIZE - addr % STX_LUT_SIZE;
		return true;
	}
	if (!(qatomic_read(&a->bar_entry[bar].ctl) & STX_BAR_DIR_WIN_EN))
		return false;
	size = stx_win_size(a, bar);
	if (addr - area >= size)
		return false;
	xl = qatomic_read(&a->bar_entry[bar].xlate_addr);
	*part = xl & STX_XLATE_PART_MASK;
	*target = (xl & ~0xfffULL) + (addr - area);
	*left = size - (addr - area);
	return true;
}

static bool stx_translate(struct ntbsw_core *c, unsigned int w, hwaddr addr,
			  unsigned int size, unsigned int *peer,
			  uint64_t *target)
{
	StxNt *s = stx_of(c);
	uint64_t left;

	if (!stx_lookup(s, w, addr, peer, target, &left) || left < size ||
	    *peer == s->part || !ntbsw_present(c, *peer)) {
		qatomic_inc(&stx_me(s)->blocked);
		return false;
	}
	return true;
}

/* Slots: LUT entry i of BAR2, then BAR2's and BAR4's direct windows. */
static unsigned int stx_nr_slots(struct ntbsw_core *c)
{
	return stx_of(c)->x->lut_entries + 2;
}

static bool stx_slot(struct ntbsw_core *c, unsigned int i,
		     struct ntbsw_slot *out)
{
	StxNt *s = stx_of(c);
	const struct stx_ntb_ctrl_regs *a = &stx_me(s)->active;
	unsigned int n = s->x->lut_entries, part;
	uint64_t off, target, left;

	if (i < n) {
		off = (uint64_t)i * STX_LUT_SIZE;
		if (off >= stx_lut_area(a))
			return false;
		out->win = 0;
	} else {
		out->win = i - n;
		off = out->win ? 0 : stx_lut_area(a);
	}
	if (!stx_lookup(s, out->win, off, &part, &target, &left) ||
	    part == s->part || !ntbsw_present(c, part))
		return false;
	out->peer = part;
	out->bar_off = off;
	out->target = target;
	out->len = left;
	return true;
}

/* ---- interrupts --------------------------------------------------------- */

/*
 * Raises the vector of every unmasked inbound doorbell and of every
 * message waiting (messages share the top 4 doorbells' vector map and
 * mask bits: the driver maps idb_vec_map[60..63] to its message vector
 * and unmasks exactly those at probe).
 */
static void stx_db_check(StxNt *s)
{
	struct stx_dbmsg_regs *d = &stx_me(s)->dbmsg;
	uint64_t pend = qatomic_read(&d->idb) & qatomic_read(&d->idb_mask);
	uint64_t vecs = 0;
	unsigned int i;

	for (i = 0; i < STX_NR_MSG; i++)
		if (qatomic_read(&d->imsg[i].status) & 1)
			pend |= qatomic_read(&d->idb_mask) &
				BIT_ULL(STX_NR_DB - STX_NR_MSG + i);
	for (i = 0; i < STX_NR_DB; i++)
		if (pend & BIT_ULL(i))
			vecs |= BIT_ULL(d->idb_vec_map[i] % STX_NR_VEC);
	for (i = 0; i < STX_NR_VEC; i++)
		if (vecs & BIT_ULL(i))
			ntbsw_msix(&s->c, i);
}

static void stx_event(StxNt *s)
{
	ntbsw_msix(&s->c, STX_EVENT_VEC);
}

/*
 * A partition came or went: its pffs' link_state event counts move and
 * the event vector fires where enabled (switchtec.ko then calls the NTB
 * driver's link notifier, which re-reads the peer's shared page).
 */
static void stx_peers_changed(struct ntbsw_core *c)
{
	StxNt *s = stx_of(c);
	uint32_t now = 0, changed;
	bool fire = false;
	unsigned int p, k;

	for (p = 0; p < s->x->nparts; p++)
		if (ntbsw_present(c, p))
			now |= BIT(p);
	changed = now ^ s->present;
	s->present = now;
	for (p = 0; p < s->x->nparts; p++) {
		if (!(changed & BIT(p)))
			continue;
		for (k = 0; k < STX_PFF_PER_PART; k++) {
			uint32_t *h = &s->link_hdr[p * STX_PFF_PER_PART + k];
			uint32_t cnt = (*h >> STX_EVENT_COUNT_SHIFT) + 1;

			*h = (*h & (STX_EVENT_EN_IRQ | 0x1f)) |
			     STX_EVENT_OCCURRED |
			     (cnt & 0xff) << STX_EVENT_COUNT_SHIFT;
			fire |= *h & STX_EVENT_EN_IRQ;
		}
	}
	ntbsw_remap(c);
	ntbsw_fail_reads(c, changed & ~now);
	if (fire)
		stx_event(s);
}

static void stx_notify(struct ntbsw_core *c, unsigned int src, uint64_t note)
{
	StxNt *s = stx_of(c);

	if (note & NTBSW_NOTE_DB)
		stx_db_check(s);
	if (note & NTBSW_NOTE_LUT)
		ntbsw_remap(c);
	if (note & NTBSW_NOTE_LINK)
		stx_peers_changed(c);
}

/* ---- GAS reads ---------------------------------------------------------- */

/* Bytes [off, off + size) of a register image, little-endian. */
static uint64_t stx_get(const void *img, hwaddr off, unsigned int size)
{
	uint64_t v = 0;

	memcpy(&v, (const uint8_t *)img + off, size);
	return le64_to_cpu(v);
}

/* Whether [off, off + size) lies within one named field. */
#define STX_IN(off, size, type, field) \
	((off) >= offsetof(type, field) && \
	 (off) + (size) <= offsetof(type, field) + sizeof(((type *)0)->field))

static void stx_sys_info(StxNt *s, struct stx_sys_info_regs *r)
{
	memset(r, 0, sizeof(*r));
	r->device_id = s->x->device_id;
	r->device_version = 0x00010000;		/* not known: a rev A part */
	r->firmware_version = 0x0105002a;	/* not known: 1.5 build 42 */
	r->partition_id = s->part;
	memcpy(r->vendor_id, "MICROSEM", 8);
	snprintf(r->product_id, sizeof(r->product_id), "PFX %uXG3 model",
		 24 + 8 * (s->x->device_id - 0x8531));
	memcpy(r->product_revision, "A000", 4);
	memcpy(r->component_vendor, "PMC-SIER", 8);
	r->component_id = s->x->device_id;
	r->component_revision = 1;
}

static void stx_ntb_info(StxNt *s, struct stx_ntb_info_regs *r)
{
	unsigned int p;

	memset(r, 0, sizeof(*r));
	r->partition_count = s->x->nparts;
	r->partition_id = s->part;
	r->ep_map = MAKE_64BIT_MASK(0, s->x->nparts);
	r->requester_id = pci_requester_id(&s->parent_obj);
	for (p = 0; p < s->x->nparts; p++)
		r->ntp_info[p].target_part_low = s->x->part[p].target_part;
}

static void stx_part_cfg(StxNt *s, unsigned int p,
			 struct stx_part_cfg_regs *r)
{
	memset(r, 0, sizeof(*r));
	if (p >= s->x->nparts)
		return;
	r->status = 1;
	r->state = 1;
	r->port_cnt = 1;
	r->usp_pff_inst_id = p * STX_PFF_PER_PART;
	r->vep_pff_inst_id = p * STX_PFF_PER_PART + 1;
	memset(r->dsp_pff_inst_id, 0xff, sizeof(r->dsp_pff_inst_id));
	r->vep_vector_number = STX_EVENT_VEC;
	if (p == s->part)
		r->mrpc_comp_hdr = s->mrpc_comp_hdr;
}

static void stx_pff(StxNt *s, unsigned int i, struct stx_pff_csr_regs *r)
{
	memset(r, 0, sizeof(*r));
	if (i >= s->x->nparts * STX_PFF_PER_PART)
		return;		/* no such port: vendor id 0 ends the scan */
	r->vendor_id = STX_VENDOR;
	r->device_id = s->x->device_id;
	r->pci_class = i % STX_PFF_PER_PART ? STX_CLASS_NT << 8 : 0x06040000;
	r->pci_cap_region[STX_PFF_LINKSTA_DW] =
		ntbsw_present(&s->c, i / STX_PFF_PER_PART) ?
		STX_LINK_SPEED << STX_LINKSTA_SPEED_SHIFT |
		STX_LINK_WIDTH << STX_LINKSTA_WIDTH_SHIFT : 0;
	r->link_state_hdr = s->link_hdr[i];
}

/* Reserved words of a control or doorbell block name no register. */
static bool stx_ctrl_named(hwaddr o, unsigned int size)
{
	typedef struct stx_ntb_ctrl_regs T;

	return !(STX_IN(o, size, T, reserved1) ||
		 STX_IN(o, size, T, reserved2) ||
		 STX_IN(o, size, T, reserved3) ||
		 (o >= offsetof(T, bar_ext_entry) &&
		  o < offsetof(T, reserved2) && o % 16 >= 4));
}

static bool stx_dbmsg_named(hwaddr o, unsigned int size)
{
	typedef struct stx_dbmsg_regs T;

	return STX_IN(o, size, T, odb) || STX_IN(o, size, T, odb_mask) ||
	       STX_IN(o, size, T, idb) || STX_IN(o, size, T, idb_mask) ||
	       STX_IN(o, size, T, idb_vec_map) ||
	       STX_IN(o, size, T, msg_map) || STX_IN(o, size, T, omsg) ||
	       STX_IN(o, size, T, imsg);
}

static uint64_t stx_unknown(StxNt *s, hwaddr a, unsigned int size,
			    const char *what)
{
	stx_guest_error(s, "%s of %u bytes at GAS offset 0x%" HWADDR_PRIx
			" (no register there)", what, size, a);
	return 0;
}

static uint64_t stx_read(void *opaque, hwaddr a, unsigned int size)
{
	StxNt *s = opaque;
	union {
		struct stx_sys_info_regs si;
		struct stx_ntb_info_regs ni;
		struct stx_part_cfg_regs pc;
		struct stx_pff_csr_regs pff;
	} u;
	unsigned int i;
	hwaddr o;

	if (a + size <= sizeof(s->mrpc))
		return stx_get(&s->mrpc, a, size);
	if (a >= STX_GAS_SW_EVENT && a < STX_GAS_SYS_INFO)
		return 0;	/* event headers: no global event occurs */
	if (a >= STX_GAS_SYS_INFO && a + size <= STX_GAS_SYS_INFO +
	    sizeof(u.si)) {
		stx_sys_info(s, &u.si);
		return stx_get(&u.si, a - STX_GAS_SYS_INFO, size);
	}
	if (a >= STX_GAS_FLASH_INFO && a < STX_GAS_PART_CFG)
		return 0;	/* no flash partitions are modelled */
	if (a >= STX_GAS_PART_CFG && a < STX_GAS_NTB) {
		i = (a - STX_GAS_PART_CFG) / sizeof(u.pc);
		o = (a - STX_GAS_PART_CFG) % sizeof(u.pc);
		stx_part_cfg(s, i, &u.pc);
		return stx_get(&u.pc, o, size);
	}
	if (a >= STX_GAS_NTB && a + size <= STX_GAS_NTB + sizeof(u.ni)) {
		stx_ntb_info(s, &u.ni);
		return stx_get(&u.ni, a - STX_GAS_NTB, size);
	}
	if (a >= STX_GAS_NTB_CTRL && a < STX_GAS_NTB_DBMSG) {
		i = (a - STX_GAS_NTB_CTRL) / sizeof(struct stx_ntb_ctrl_regs);
		o = (a - STX_GAS_NTB_CTRL) % sizeof(struct stx_ntb_ctrl_regs);
		if (i >= s->x->nparts)
			return 0;	/* an unconfigured partition */
		if (!stx_ctrl_named(o, size))
			return stx_unknown(s, a, size, "read");
		if (o < 4) {
			/* Each partition sees its own handshake's state. */
			uint32_t st = qatomic_read(&s->x->part[i].lockers) &
				      BIT(s->part) ? STX_PART_LOCKED
						   : STX_PART_NORMAL;

			return stx_get(&st, o, size);
		}
		return stx_get(&s->x->part[i].ctrl, o, size);
	}
	if (a >= STX_GAS_NTB_DBMSG && a < STX_GAS_PFF_CSR) {
		i = (a - STX_GAS_NTB_DBMSG) / sizeof(struct stx_dbmsg_regs);
		o = (a - STX_GAS_NTB_DBMSG) % sizeof(struct stx_dbmsg_regs);
		if (i >= s->x->nparts)
			return 0;
		if (!stx_dbmsg_named(o, size))
			return stx_unknown(s, a, size, "read");
		if (o == offsetof(struct stx_dbmsg_regs, odb))
			return 0;	/* write-only: reads flush, see nothing */
		return stx_get(&s->x->part[i].dbmsg, o, size);
	}
	if (a >= STX_GAS_PFF_CSR &&
	    a < STX_GAS_PFF_CSR + STX_MAX_PFF * sizeof(u.pff)) {
		i = (a - STX_GAS_PFF_CSR) / sizeof(u.pff);
		o = (a - STX_GAS_PFF_CSR) % sizeof(u.pff);
		stx_pff(s, i, &u.pff);
		return stx_get(&u.pff, o, size);
	}
	return stx_unknown(s, a, size, "read");
}

/* ---- GAS writes: MRPC, events ------------------------------------------- */

/*
 * The two commands switchtec-user's own examples send, run at once:
 * ECHO answers its input with the first word inverted (the check those
 * examples make; the rest comes back as it went); DIETEMP takes a
 * measurement (SET_MEAS) and then reads it (GET: one word, in hundredths
 * of a degree, the die-temp property), a GET before any measurement
 * failing.  Every other command completes with an error status, what a
 * chip answers to a command its firmware lacks.  ret_value 0 is success.
 * Returns the status.
 */
static uint32_t stx_mrpc_run(StxNt *s)
{
	uint32_t in0 = ldl_le_p(s->mrpc.input_data);

	memset(s->mrpc.output_data, 0, sizeof(s->mrpc.output_data));
	s->mrpc.ret_value = 0;
	switch (s->mrpc.cmd) {
	case STX_MRPC_ECHO:
		memcpy(s->mrpc.output_data, s->mrpc.input_data,
		       sizeof(s->mrpc.output_data));
		stl_le_p(s->mrpc.output_data, ~in0);
		return STX_MRPC_STATUS_DONE;
	case STX_MRPC_DIETEMP:
		if (in0 == STX_DIETEMP_SET_MEAS) {
			s->temp_measured = true;
			return STX_MRPC_STATUS_DONE;
		}
		if (in0 == STX_DIETEMP_GET && s->temp_measured) {
			stl_le_p(s->mrpc.output_data, s->die_temp);
			return STX_MRPC_STATUS_DONE;
		}
		break;
	}
	s->mrpc.ret_value = 0xffffffff;	/* not known: any error */
	return STX_MRPC_STATUS_ERROR;
}

/*
 * A command completes at once, raising the MRPC completion event.
 * dma_ver reads 0, so switchtec.ko polls.
 */
static void stx_mrpc_write(StxNt *s, hwaddr a, uint64_t v, unsigned int size)
{
	typedef struct stx_mrpc_regs T;
	uint64_t le = cpu_to_le64(v);

	if (STX_IN(a, size, T, input_data)) {
		memcpy((uint8_t *)&s->mrpc + a, &le, size);
		return;
	}
	if (a == offsetof(T, cmd) && size == 4) {
		s->mrpc.cmd = v;
		s->mrpc.status = stx_mrpc_run(s);
		s->mrpc_comp_hdr |= STX_EVENT_OCCURRED;
		if (s->mrpc_comp_hdr & STX_EVENT_EN_IRQ)
			stx_event(s);
		return;
	}
	if (STX_IN(a, size, T, dma_en) || STX_IN(a, size, T, dma_addr) ||
	    STX_IN(a, size, T, dma_vector)) {
		stx_guest_error(s, "DMA MRPC set up though dma_ver is 0");
		return;
	}
	stx_guest_error(s, "write to read-only MRPC offset 0x%" HWADDR_PRIx,
			a);
}

/* An event header: OCCURRED is write-1-to-clear, the enables are kept. */
static uint32_t stx_event_hdr(uint32_t old, uint32_t v)
{
	old &= ~(v & STX_EVENT_CLEAR);
	return (old & (STX_EVENT_OCCURRED | ~0x1fu)) | (v & 0x1e);
}

/* ---- GAS writes: control blocks and the LOCK/CFG handshake -------------- */

/* Whether a staged configuration is one the chip could hold; why not. */
static const char *stx_ctrl_check(StxNt *s, struct stx_ntb_ctrl_regs *c)
{
	unsigned int bar, i, nlut = 0;

	for (bar = 0; bar < STX_NR_BAR_ENTRY; bar++) {
		uint32_t ctl = c->bar_entry[bar].ctl;
		uint64_t size = stx_win_size(c, bar), room, xl;
		unsigned int w = bar == 2 ? 0 : 1;

		if ((ctl & ~STX_BAR_VALID) && bar != 2 && bar != 4) {
			c->bar_error = BIT(bar);
			return "a window on a BAR that is not one";
		}
		if (ctl & STX_BAR_LUT_WIN_EN) {
			nlut = ((ctl >> STX_BAR_LUT_COUNT_SHIFT) &
				STX_BAR_LUT_COUNT_MASK) + 1;
			if (bar != 2 || ((ctl >> STX_BAR_LUT_SIZE_SHIFT) &
					 STX_BAR_LUT_SIZE_MASK) != 16 ||
			    nlut > s->x->lut_entries) {
				c->bar_error = BIT(bar);
				return "a LUT window of another entry size or "
				       "count than the chip's";
			}
		}
		if (!(ctl & STX_BAR_DIR_WIN_EN))
			continue;
		room = s->x->bar_size[w] - (bar == 2 ? nlut * (uint64_t)
					    STX_LUT_SIZE : 0);
		xl = c->bar_entry[bar].xlate_addr;
		if (size < 4096 || (size & (size - 1)) || size > room ||
		    (c->bar_entry[bar].win_size & 0xfff) != (unsigned)ctz64(size) ||
		    ((xl & ~0xfffULL) & (size - 1)) ||
		    (xl & STX_XLATE_PART_MASK) >= s->x->nparts) {
			c->bar_error = BIT(bar);
			return "a direct window of a size that is no power of "
			       "two within the BAR, or unaligned, or to no "
			       "partition";
		}
	}
	for (i = 0; i < s->x->lut_entries; i++) {
		uint64_t v = c->lut_entry[i];

		if ((v & STX_LUT_EN) &&
		    (((v >> STX_LUT_PART_SHIFT) & STX_LUT_PART_MASK) >=
		     s->x->nparts || (v & (STX_LUT_SIZE - 1) & ~0x7fULL))) {
			c->lut_error = i + 1;
			return "a LUT entry to no partition or not 64 KiB "
			       "aligned";
		}
	}
	return NULL;
}

/* The translation part of a control block, what CFG makes take effect. */
static void stx_ctrl_commit(struct stx_ntb_ctrl_regs *to,
			    const struct stx_ntb_ctrl_regs *from)
{
	memcpy(to->bar_entry, from->bar_entry, sizeof(to->bar_entry));
	memcpy(to->bar_ext_entry, from->bar_ext_entry,
	       sizeof(to->bar_ext_entry));
	memcpy(to->req_id_table, from->req_id_table,
	       sizeof(to->req_id_table));
	memcpy(to->lut_entry, from->lut_entry, sizeof(to->lut_entry));
}

static void stx_part_op(StxNt *s, unsigned int p, uint32_t op)
{
	struct stx_part_state *ps = &s->x->part[p];
	struct stx_ntb_ctrl_regs *c = &ps->ctrl;
	const char *why;

	switch (op) {
	case STX_PART_OP_LOCK:
		qatomic_or(&ps->lockers, BIT(s->part));
		c->bar_error = c->lut_error = c->req_id_error = 0;
		return;
	case STX_PART_OP_CFG:
		if (!(qatomic_read(&ps->lockers) & BIT(s->part))) {
			stx_guest_error(s, "CFG of partition %u not locked",
					p);
			return;
		}
		why = stx_ctrl_check(s, c);
		if (why) {
			/* stays locked: the driver reads the error, -EIO */
			stx_guest_error(s, "CFG of partition %u refused: %s",
					p, why);
			return;
		}
		stx_ctrl_commit(&ps->active, c);
		qatomic_and(&ps->lockers, ~BIT(s->part));
		/* Every port rebuilds what leads through this block. */
		ntbsw_notify(&s->c, NTBSW_DST_ALL, NTBSW_NOTE_LUT);
		ntbsw_remap(&s->c);
		return;
	case STX_PART_OP_RESET:
		stx_ctrl_commit(c, &ps->active);
		qatomic_and(&ps->lockers, ~BIT(s->part));
		return;
	}
	stx_guest_error(s, "partition operation %u on partition %u", op, p);
}

static void stx_ctrl_write(StxNt *s, unsigned int p, hwaddr o, uint64_t v,
			   unsigned int size)
{
	typedef struct stx_ntb_ctrl_regs T;
	struct stx_part_state *ps = &s->x->part[p];
	uint64_t le = cpu_to_le64(v);
	unsigned int i;

	if (o == offsetof(T, partition_op) && size == 4) {
		stx_part_op(s, p, v);
		return;
	}
	if (!(STX_IN(o, size, T, bar_entry) ||
	      STX_IN(o, size, T, bar_ext_entry) ||
	      STX_IN(o, size, T, req_id_table) ||
	      STX_IN(o, size, T, lut_entry)) || !stx_ctrl_named(o, size)) {
		stx_guest_error(s, "write to read-only or reserved offset "
				"0x%" HWADDR_PRIx " of partition %u's control "
				"block", o, p);
		return;
	}
	if (!(qatomic_read(&ps->lockers) & BIT(s->part))) {
		stx_guest_error(s, "write to partition %u's control block "
				"(0x%" HWADDR_PRIx ") without its LOCK", p, o);
		return;
	}
	if (STX_IN(o, size, T, lut_entry) &&
	    (o - offsetof(T, lut_entry)) / 8 >= s->x->lut_entries) {
		stx_guest_error(s, "LUT entry %" HWADDR_PRIu " beyond the %u "
				"the chip has", (o - offsetof(T, lut_entry)) / 8,
				s->x->lut_entries);
		return;
	}
	if (STX_IN(o, size, T, req_id_table)) {
		i = (o - offsetof(T, req_id_table)) / 4;
		if (i >= s->x->rid_entries || size != 4) {
			stx_guest_error(s, "requester-id entry %u (of %u) "
					"written %u bytes", i,
					s->x->rid_entries, size);
			return;
		}
		/* Bits 8:1 are the entry's proxy id: the chip's, not ours. */
		ps->ctrl.req_id_table[i] = (v & ~0x1feu) |
					   (ps->ctrl.req_id_table[i] & 0x1feu);
		return;
	}
	memcpy((uint8_t *)&ps->ctrl + o, &le, size);
}

/* ---- GAS writes: doorbells and messages --------------------------------- */

/* Outbound doorbell bits: to the inbound doorbell of each NT target. */
static void stx_ring(StxNt *s, uint64_t bits)
{
	struct stx_part_state *me = stx_me(s);
	uint64_t ok = bits & qatomic_read(&me->dbmsg.odb_mask);
	unsigned int t;

	if (bits & ~ok)
		stx_guest_error(s, "outbound doorbell bits %#" PRIx64
				" outside odb_mask", bits & ~ok);
	if (!ok)
		return;
	for (t = 0; t < s->x->nparts; t++) {
		if (!(me->target_part & BIT(t)) || !ntbsw_present(&s->c, t))
			continue;
		qatomic_or(&s->x->part[t].dbmsg.idb, ok);
		ntbsw_notify(&s->c, t, NTBSW_NOTE_DB);
	}
}

/*
 * Outbound message i: lands in the inbound message slot of each target
 * whose msg_map names (i, this partition); none: dropped and counted.
 */
static void stx_send_msg(StxNt *s, unsigned int i, uint32_t msg)
{
	unsigned int t, k;
	bool sent = false;

	for (t = 0; t < s->x->nparts; t++) {
		struct stx_dbmsg_regs *d = &s->x->part[t].dbmsg;
		uint32_t map = qatomic_read(&d->msg_map);

		if (!(stx_me(s)->target_part & BIT(t)) ||
		    !ntbsw_present(&s->c, t))
			continue;
		for (k = 0; k < STX_NR_MSG; k++) {
			if (((map >> (8 * k)) & 0xff) != (i | s->part << 2))
				continue;
			qatomic_set(&d->imsg[k].msg, msg);
			qatomic_set(&d->imsg[k].src, s->part);
			qatomic_set(&d->imsg[k].status, 1);
			ntbsw_notify(&s->c, t, NTBSW_NOTE_DB);
			sent = true;
		}
	}
	if (!sent)
		qatomic_inc(&stx_me(s)->blocked);
}

static void stx_dbmsg_write(StxNt *s, unsigned int p, hwaddr o, uint64_t v,
			    unsigned int size)
{
	typedef struct stx_dbmsg_regs T;
	struct stx_dbmsg_regs *d = &s->x->part[p].dbmsg;
	uint64_t le = cpu_to_le64(v), m;
	unsigned int sh;

	if (p != s->part || !stx_dbmsg_named(o, size)) {
		stx_guest_error(s, "write to offset 0x%" HWADDR_PRIx " of "
				"partition %u's doorbell block", o, p);
		return;
	}
	/* The 64-bit registers, written whole or by halves. */
	sh = (o % 8) * 8;
	m = (size == 8 ? ~0ULL : ((1ULL << (size * 8)) - 1)) << sh;
	switch (o & ~7ULL) {
	case offsetof(T, odb):
		stx_ring(s, (v << sh) & m);
		return;
	case offsetof(T, idb):
		qatomic_and(&d->idb, ~((v << sh) & m));
		return;
	case offsetof(T, odb_mask):
		qatomic_set(&d->odb_mask, (d->odb_mask & ~m) | ((v << sh) & m));
		return;
	case offsetof(T, idb_mask):
		qatomic_set(&d->idb_mask, (d->idb_mask & ~m) | ((v << sh) & m));
		stx_db_check(s);
		return;
	}
	if (STX_IN(o, size, T, idb_vec_map)) {
		unsigned int k;

		for (k = 0; k < size; k++)
			if (((le >> (8 * k)) & 0xff) >= STX_NR_VEC)
				stx_guest_error(s, "doorbell %u mapped to vector "
						"%u of %u", (unsigned)(o - offsetof(T, idb_vec_map)) + k,
						(unsigned)((le >> (8 * k)) & 0xff),
						STX_NR_VEC);
		memcpy((uint8_t *)d + o, &le, size);
		return;
	}
	if (o == offsetof(T, msg_map) && size == 4) {
		qatomic_set(&d->msg_map, v);
		return;
	}
	if (STX_IN(o, size, T, omsg)) {
		unsigned int i = (o - offsetof(T, omsg)) / 8;

		if ((o - offsetof(T, omsg)) % 8 == 0 && size == 4)
			stx_send_msg(s, i, v);
		else
			stx_guest_error(s, "outbound message %u: write of "
					"%u bytes at +%u", i, size,
					(unsigned)((o - offsetof(T, omsg)) % 8));
		return;
	}
	if (STX_IN(o, size, T, imsg)) {
		/* Per byte: msg and src read-only, status W1C, mask kept. */
		unsigned int k, i, b;

		for (k = 0; k < size; k++) {
			uint8_t byte = le >> (8 * k);

			i = (o + k - offsetof(T, imsg)) / 8;
			b = (o + k - offsetof(T, imsg)) % 8;
			if (b == 4 && (byte & 1))
				qatomic_set(&d->imsg[i].status, 0);
			else if (b == 5)
				qatomic_set(&d->imsg[i].mask, byte);
		}
		return;
	}
}

static void stx_write(void *opaque, hwaddr a, uint64_t v, unsigned int size)
{
	StxNt *s = opaque;
	unsigned int i;
	hwaddr o;

	if (a + size <= sizeof(s->mrpc)) {
		stx_mrpc_write(s, a, v, size);
		return;
	}
	if (a >= STX_GAS_PART_CFG && a < STX_GAS_NTB) {
		i = (a - STX_GAS_PART_CFG) / sizeof(struct stx_part_cfg_regs);
		o = (a - STX_GAS_PART_CFG) % sizeof(struct stx_part_cfg_regs);
		if (i == s->part && size == 4 &&
		    o == offsetof(struct stx_part_cfg_regs, mrpc_comp_hdr)) {
			s->mrpc_comp_hdr = stx_event_hdr(s->mrpc_comp_hdr, v);
			return;
		}
	} else if (a >= STX_GAS_SW_EVENT && a < STX_GAS_SYS_INFO) {
		return;		/* masking an event that never occurs */
	} else if (a >= STX_GAS_NTB_CTRL && a < STX_GAS_NTB_DBMSG) {
		i = (a - STX_GAS_NTB_CTRL) / sizeof(struct stx_ntb_ctrl_regs);
		o = (a - STX_GAS_NTB_CTRL) % sizeof(struct stx_ntb_ctrl_regs);
		if (i < s->x->nparts) {
			stx_ctrl_write(s, i, o, v, size);
			return;
		}
	} else if (a >= STX_GAS_NTB_DBMSG && a < STX_GAS_PFF_CSR) {
		i = (a - STX_GAS_NTB_DBMSG) / sizeof(struct stx_dbmsg_regs);
		o = (a - STX_GAS_NTB_DBMSG) % sizeof(struct stx_dbmsg_regs);
		if (i < s->x->nparts) {
			stx_dbmsg_write(s, i, o, v, size);
			return;
		}
	} else if (a >= STX_GAS_PFF_CSR &&
		   a < STX_GAS_PFF_CSR + STX_MAX_PFF * 0x1000) {
		i = (a - STX_GAS_PFF_CSR) / 0x1000;
		o = (a - STX_GAS_PFF_CSR) % 0x1000;
		if (i < s->x->nparts * STX_PFF_PER_PART && size == 4 &&
		    o == offsetof(struct stx_pff_csr_regs, link_state_hdr)) {
			s->link_hdr[i] = stx_event_hdr(s->link_hdr[i], v);
			return;
		}
	}
	stx_guest_error(s, "write of %u bytes (%#" PRIx64 ") at GAS offset "
			"0x%" HWADDR_PRIx ": not a register the model takes",
			size, v, a);
}

static const MemoryRegionOps stx_gas_ops = {
	.read = stx_read,
	.write = stx_write,
	.endianness = DEVICE_LITTLE_ENDIAN,
	.valid = { .min_access_size = 1, .max_access_size = 8 },
	.impl = { .min_access_size = 1, .max_access_size = 8 },
};

/* ---- realize / reset ---------------------------------------------------- */

/*
 * ID protection (-x idprot=1): a request leaving this partition through
 * its NT function crosses only if its requester id has an enabled entry
 * in this partition's requester-id table as the last CFG made it take
 * effect.  The devices of this guest reach the windows through the
 * requester-id gate (ntbsw-rid.c), which asks here for each access.
 */
static bool stx_requester_ok(struct ntbsw_core *c, uint16_t rid)
{
	StxNt *s = container_of(c, StxNt, c);
	const struct stx_ntb_ctrl_regs *a = &stx_me(s)->active;
	unsigned int i;

	if (!s->x->id_protect)
		return true;
	for (i = 0; i < s->x->rid_entries; i++) {
		uint32_t e = qatomic_read(&a->req_id_table[i]);

		if ((e & STX_REQ_ID_EN) && e >> 16 == rid)
			return true;
	}
	return false;
}

/*
 * The chip drops a posted write and refuses a read of a requester not
 * in the table (the read's completion is an error to the device; UR or
 * a completion timeout on the silicon is not known).  Counted apart,
 * blocked_rid and blocked_rid_rd: the switch prints both when the port
 * leaves.
 */
static void stx_requester_refused(struct ntbsw_core *c, uint16_t rid,
				  bool write)
{
	StxNt *s = container_of(c, StxNt, c);

	(void)rid;
	qatomic_inc(write ? &stx_me(s)->blocked_rid :
			    &stx_me(s)->blocked_rid_rd);
}

static const struct ntbsw_core_ops stx_core_ops = {
	.notify = stx_notify,
	.peers_changed = stx_peers_changed,
	.nr_slots = stx_nr_slots,
	.slot = stx_slot,
	.translate = stx_translate,
	.requester_ok = stx_requester_ok,
	.requester_refused = stx_requester_refused,
};

static void stx_realize(PCIDevice *d, Error **errp)
{
	StxNt *s = STX_NT(d);
	hwaddr dbmsg;
	unsigned int v;

	if (ntbsw_core_connect(&s->c, STX_STATE_OFFSET + sizeof(*s->x),
			       errp) < 0)
		return;
	s->x = (struct stx_state *)((uint8_t *)s->c.st + STX_STATE_OFFSET);
	if (s->x->magic != STX_STATE_MAGIC || s->x->nparts != s->c.nports ||
	    s->x->lut_entries > STX_MAX_LUT ||
	    s->x->lut_entries + 2 > NTBSW_MAX_SLOTS) {
		error_setg(errp, "the switch is not a Switchtec fabric "
			   "(start smartio-ntb-switch with -x switchtec)");
		return;
	}
	s->part = s->c.port;
	pci_set_word(d->config + PCI_DEVICE_ID, s->x->device_id);
	pci_config_set_interrupt_pin(d->config, 1);

	/* BAR0: the GAS, this partition's MSI-X table in its dbmsg block. */
	memory_region_init(&s->bar0, OBJECT(s), "switchtec-bar0",
			   STX_GAS_SIZE);
	memory_region_init_io(&s->gas, OBJECT(s), &stx_gas_ops, s,
			      "switchtec-gas", STX_GAS_SIZE);
	memory_region_add_subregion_overlap(&s->bar0, 0, &s->gas, 0);
	pci_register_bar(d, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
			 PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);
	dbmsg = STX_GAS_NTB_DBMSG + s->part * sizeof(struct stx_dbmsg_regs);
	if (msix_init(d, STX_NR_VEC, &s->bar0, 0,
		      dbmsg + offsetof(struct stx_dbmsg_regs, msix_table),
		      &s->bar0, 0, dbmsg + offsetof(struct stx_dbmsg_regs, pba),
		      0, errp))
		return;
	for (v = 0; v < STX_NR_VEC; v++)
		msix_vector_use(d, v);
	if (pcie_endpoint_cap_init(d, 0xe0) < 0) {
		error_setg(errp, "cannot add the PCIe capability");
		return;
	}
	ntbsw_core_start(&s->c, s->x->bar_size);
	if (s->x->id_protect)
		ntbsw_gate_start(&s->c);
}

/*
 * A reset of the guest clears this partition's doorbell and message
 * block and its events; the control blocks keep what was configured
 * (the peer programmed them, and a host's reboot leaves them on a chip).
 */
static void stx_reset(DeviceState *dev)
{
	StxNt *s = STX_NT(dev);
	struct stx_dbmsg_regs *d;

	if (!s->x)
		return;
	d = &stx_me(s)->dbmsg;
	qatomic_set(&d->idb, 0);
	qatomic_set(&d->idb_mask, 0);
	qatomic_set(&d->odb_mask, 0);
	qatomic_set(&d->msg_map, 0);
	memset(d->idb_vec_map, 0, sizeof(d->idb_vec_map));
	memset(d->imsg, 0, sizeof(d->imsg));
	memset(&s->mrpc, 0, sizeof(s->mrpc));
	s->mrpc_comp_hdr = 0;
	s->temp_measured = false;
	memset(s->link_hdr, 0, sizeof(s->link_hdr));
	stx_peers_changed(&s->c);
}

static Property stx_props[] = {
	DEFINE_PROP_STRING("switch", StxNt, c.switch_path),
	DEFINE_PROP_UINT32("port", StxNt, c.port, 0),
	DEFINE_PROP_UINT32("die-temp", StxNt, die_temp, 4500),
	DEFINE_PROP_LINK("memdev", StxNt, c.memdev, TYPE_MEMORY_BACKEND,
			 HostMemoryBackend *),
	DEFINE_PROP_END_OF_LIST(),
};

static void stx_instance_init(Object *obj)
{
	StxNt *s = STX_NT(obj);

	ntbsw_core_init(&s->c, PCI_DEVICE(s), &stx_core_ops, TYPE_STX_NT);
}

static void stx_class_init(ObjectClass *klass, void *data)
{
	DeviceClass *dc = DEVICE_CLASS(klass);
	PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

	k->realize = stx_realize;
	k->vendor_id = STX_VENDOR;
	k->device_id = STX_DEVICE_DEFAULT;	/* the switch's, at realize */
	k->class_id = PCI_CLASS_BRIDGE_OTHER;	/* prog-if 0: 068000 */
	k->revision = 0;
	dc->reset = stx_reset;
	dc->desc = "Microchip Switchtec PFX NT function (smartio model)";
	dc->user_creatable = true;
	dc->hotpluggable = false;
	device_class_set_props(dc, stx_props);
	set_bit(DEVICE_CATEGORY_BRIDGE, dc->categories);
}

static const TypeInfo stx_info = {
	.name = TYPE_STX_NT,
	.parent = TYPE_PCI_DEVICE,
	.instance_size = sizeof(StxNt),
	.instance_init = stx_instance_init,
	.class_init = stx_class_init,
	.interfaces = (InterfaceInfo[]) {
		{ INTERFACE_PCIE_DEVICE },
		{ }
	},
};

static void stx_register(void)
{
	type_register_static(&stx_info);
}

type_init(stx_register)
