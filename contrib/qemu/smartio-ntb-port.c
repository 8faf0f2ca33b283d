/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * smartio-ntb-port: one port of a software NTB switch, as a PCIe function
 * of a QEMU guest (a device type added to the stock qemu-system-x86_64 by
 * LD_PRELOAD of smartio-ntb.so).  Register map and usage:
 * man/smartio-ntb-port.7.  The switch process is smartio-ntb-switch.
 *
 * Translation.  Offset x of the outbound window (BAR2 for window 0, BAR4
 * for window 1) slot of peer P is translated by P's inbound LUT entry for
 * (this port, window, x / entry size), kept in the switch state every
 * port maps; ntbsw-core.c makes it a RAM alias or forwards the access.
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

#define TYPE_NTBSW_PORT "smartio-ntb-port"

/* One inbound LUT entry: its fields, ntb_sioswitch_regs.h's NTBSW_LUT_*. */
#define NTBSW_LUT_ENTRY (NTBSW_LUT_RID_ALLOW + 4)
QEMU_BUILD_BUG_ON(NTBSW_LUT_BYTES != NTBSW_MAX_PORTS * NTBSW_NR_MW *
		  NTBSW_NR_LUT * NTBSW_LUT_ENTRY);
OBJECT_DECLARE_SIMPLE_TYPE(NtbswPort, NTBSW_PORT)

struct NtbswPort {
	PCIDevice parent_obj;
	struct ntbsw_core c;

	/* per window: outbound window per peer, LUT entry */
	uint64_t mw_size[NTBSW_NR_MW], ent_size[NTBSW_NR_MW];
	uint32_t slots;

	MemoryRegion bar0;
	uint32_t link_status, link_event, err_status;
	/* BAR0 accesses at no register: logged as guest errors, counted. */
	uint64_t bad_accesses;
};

#define ME(s) NTBSW_ME(&(s)->c)

static NtbswPort *ntbsw_port_of(struct ntbsw_core *c)
{
	return container_of(c, NtbswPort, c);
}

/* ---- link state and RAM aliases ---------------------------------------- */

static bool ntbsw_link_up(NtbswPort *s, unsigned int p)
{
	struct ntbsw_port_state *me = ME(s), *ps;

	if (p >= s->c.nports || p == s->c.port)
		return false;
	ps = &s->c.st->port[p];
	return qatomic_read(&me->present) && qatomic_read(&ps->present) &&
	       (qatomic_read(&me->link_en) & BIT(p)) &&
	       (qatomic_read(&ps->link_en) & BIT(s->c.port));
}

/* How much of its entry of window w a LUT entry covers (CTRL's pages). */
static uint64_t ntbsw_lut_len(NtbswPort *s, unsigned int w,
			      struct ntbsw_lut *l)
{
	uint64_t pages = qatomic_read(&l->ctrl) >> NTBSW_LUT_PAGES_SHIFT;

	return pages && pages * 4096 < s->ent_size[w] ? pages * 4096
						       : s->ent_size[w];
}

/*
 * Alias slot i is LUT entry (peer, window, entry) of this port's outbound
 * windows: i = (p * NTBSW_NR_MW + w) * NTBSW_NR_LUT + e.
 */
static unsigned int ntbsw_port_nr_slots(struct ntbsw_core *c)
{
	return c->nports * NTBSW_NR_MW * NTBSW_NR_LUT;
}

static bool ntbsw_port_slot(struct ntbsw_core *c, unsigned int i,
			    struct ntbsw_slot *out)
{
	NtbswPort *s = ntbsw_port_of(c);
	unsigned int e = i % NTBSW_NR_LUT;
	unsigned int w = i / NTBSW_NR_LUT % NTBSW_NR_MW;
	unsigned int p = i / NTBSW_NR_LUT / NTBSW_NR_MW;
	struct ntbsw_lut *l;

	if (p == c->port || !ntbsw_link_up(s, p))
		return false;
	l = &c->st->port[p].lut[c->port][w][e];
	if (!(qatomic_read(&l->ctrl) & NTBSW_LUT_EN) ||
	    !(qatomic_read(&l->rid_allow) & BIT(c->port)))
		return false;
	out->peer = p;
	out->win = w;
	out->bar_off = p * s->mw_size[w] + e * s->ent_size[w];
	out->target = qatomic_read(&l->target);
	out->len = ntbsw_lut_len(s, w, l);
	return true;
}

static void ntbsw_update_links(NtbswPort *s)
{
	uint32_t now = 0, changed;
	unsigned int p;

	for (p = 0; p < s->c.nports; p++)
		if (ntbsw_link_up(s, p))
			now |= BIT(p);
	changed = now ^ s->link_status;
	s->link_status = now;
	ntbsw_remap(&s->c);
	if (changed) {
		s->link_event |= changed;
		ntbsw_msix(&s->c, NTBSW_VEC_LINK);
	}
	/* Reads waiting on a peer whose link fell get all-ones now. */
	ntbsw_fail_reads(&s->c, changed & ~now);
}

/* ---- blocked transactions ----------------------------------------------- */

/* Count a blocked access in the receiving port p and tell it. */
static void ntbsw_block(NtbswPort *s, unsigned int p, bool rid, uint64_t off)
{
	struct ntbsw_port_state *ps = &s->c.st->port[p];

	if (rid)
		qatomic_fetch_add(&ps->blocked_rid, 1);
	else
		qatomic_fetch_add(&ps->blocked_noentry, 1);
	qatomic_set(&ps->last_blocked, ((uint64_t)s->c.port << 56) | off);
	ntbsw_notify(&s->c, p, NTBSW_NOTE_ERR);
}

/* ---- outbound windows --------------------------------------------------- */

/* Window w offset addr: the peer and its address; false: blocked. */
static bool ntbsw_port_translate(struct ntbsw_core *c, unsigned int w,
				 hwaddr addr, unsigned int size,
				 unsigned int *pp, uint64_t *target)
{
	NtbswPort *s = ntbsw_port_of(c);
	unsigned int p = addr / s->mw_size[w];
	uint64_t off = addr % s->mw_size[w];
	unsigned int e = off / s->ent_size[w];
	struct ntbsw_lut *l;

	if (p >= c->nports || !ntbsw_link_up(s, p))
		return false;
	l = &c->st->port[p].lut[c->port][w][e];
	if (!(qatomic_read(&l->ctrl) & NTBSW_LUT_EN)) {
		ntbsw_block(s, p, false, ((uint64_t)w << 48) | off);
		return false;
	}
	if (!(qatomic_read(&l->rid_allow) & BIT(c->port))) {
		ntbsw_block(s, p, true, ((uint64_t)w << 48) | off);
		return false;
	}
	/* Past the entry's length: no entry covers it. */
	if (off % s->ent_size[w] + size > ntbsw_lut_len(s, w, l)) {
		ntbsw_block(s, p, false, ((uint64_t)w << 48) | off);
		return false;
	}
	*pp = p;
	*target = qatomic_read(&l->target) + off % s->ent_size[w];
	return true;
}

/* ---- BAR0 registers ----------------------------------------------------- */

/*
 * Whether a lies in the peer scratchpad block; *spad is then port p's
 * register i, or NULL past the scratchpads a port has or while that
 * port's link is down (a read answers ~0, a write is dropped).
 */
static bool ntbsw_peer_spad(NtbswPort *s, hwaddr a, uint32_t **spad)
{
	unsigned int p, i;

	if (a < NTBSW_REG_PEER_SPAD ||
	    a >= NTBSW_REG_PEER_SPAD + NTBSW_PEER_SPAD_STRIDE * NTBSW_MAX_PORTS)
		return false;
	p = (a - NTBSW_REG_PEER_SPAD) / NTBSW_PEER_SPAD_STRIDE;
	i = (a - NTBSW_REG_PEER_SPAD) % NTBSW_PEER_SPAD_STRIDE / 4;
	*spad = i < NTBSW_NR_SPAD && ntbsw_link_up(s, p) ?
		&s->c.st->port[p].spad[i] : NULL;
	return true;
}

static uint64_t ntbsw_reg64(NtbswPort *s, hwaddr a, bool *ok)
{
	struct ntbsw_port_state *me = ME(s);

	*ok = true;
	switch (a) {
	case NTBSW_REG_MW_SIZE:
		return s->mw_size[0];
	case NTBSW_REG_ENT_SIZE:
		return s->ent_size[0];
	case NTBSW_REG_MW1_SIZE:
		return s->mw_size[1];
	case NTBSW_REG_ENT1_SIZE:
		return s->ent_size[1];
	case NTBSW_REG_DB_STATUS:
		return qatomic_read(&me->db_status);
	case NTBSW_REG_DB_MASK:
		return qatomic_read(&me->db_mask);
	case NTBSW_REG_DB_VALID:
		return ~0ULL;
	case NTBSW_REG_BLOCKED_NOENTRY:
		return qatomic_read(&me->blocked_noentry);
	case NTBSW_REG_BLOCKED_RID:
		return qatomic_read(&me->blocked_rid);
	case NTBSW_REG_LAST_BLOCKED:
		return qatomic_read(&me->last_blocked);
	case NTBSW_REG_SLOW_ACCESSES:
		return qatomic_read(&s->c.slow);
	case NTBSW_REG_IOVA_WALKS:
		return qatomic_read(&s->c.iova_walks);
	case NTBSW_REG_IOVA_HITS:
		return qatomic_read(&s->c.iova_hits);
	}
	*ok = false;
	return 0;
}

/* A guest access to no register of BAR0: logged and counted, no effect. */
static void ntbsw_bad_access(NtbswPort *s, hwaddr a, const char *what)
{
	s->bad_accesses++;
	qemu_log_mask(LOG_GUEST_ERROR,
		      "%s: %s of BAR0 offset 0x%" HWADDR_PRIx
		      ", no register there\n", TYPE_NTBSW_PORT, what, a);
}

static uint32_t ntbsw_reg32(NtbswPort *s, hwaddr a)
{
	struct ntbsw_port_state *me = ME(s);
	uint32_t *spad;

	switch (a) {
	case NTBSW_REG_ID:
		return NTBSW_MAGIC;
	case NTBSW_REG_VERSION:
		return NTBSW_VERSION;
	case NTBSW_REG_PORT:
		return s->c.port;
	case NTBSW_REG_PORT_COUNT:
		return s->c.nports;
	case NTBSW_REG_NR_MW:
		return NTBSW_NR_MW;
	case NTBSW_REG_NR_LUT:
		return NTBSW_NR_LUT;
	case NTBSW_REG_NR_SPAD:
		return NTBSW_NR_SPAD;
	case NTBSW_REG_LINK_EN:
		return qatomic_read(&me->link_en);
	case NTBSW_REG_LINK_STATUS:
		return s->link_status;
	case NTBSW_REG_LINK_EVENT:
		return s->link_event;
	case NTBSW_REG_PRESENT: {
		uint32_t v = 0;
		unsigned int p;

		for (p = 0; p < s->c.nports; p++)
			if (ntbsw_present(&s->c, p))
				v |= BIT(p);
		return v;
	}
	case NTBSW_REG_ERR_STATUS:
		return s->err_status;
	}
	if (a >= NTBSW_REG_SPAD &&
	    a < NTBSW_REG_SPAD + 4 * NTBSW_NR_SPAD)
		return qatomic_read(&me->spad[(a - NTBSW_REG_SPAD) / 4]);
	if (ntbsw_peer_spad(s, a, &spad))
		return spad ? qatomic_read(spad) : ~0u;
	if (a >= NTBSW_REG_LUT && a < NTBSW_REG_LUT + NTBSW_LUT_BYTES) {
		struct ntbsw_lut *l = &me->lut[0][0][0] +
				      (a - NTBSW_REG_LUT) / NTBSW_LUT_ENTRY;

		switch ((a - NTBSW_REG_LUT) % NTBSW_LUT_ENTRY) {
		case NTBSW_LUT_TARGET_LO:
			return qatomic_read(&l->target);
		case NTBSW_LUT_TARGET_HI:
			return qatomic_read(&l->target) >> 32;
		case NTBSW_LUT_CTRL:
			return qatomic_read(&l->ctrl);
		case NTBSW_LUT_RID_ALLOW:
			return qatomic_read(&l->rid_allow);
		}
	}
	ntbsw_bad_access(s, a, "read");
	return 0;
}

static uint64_t ntbsw_bar0_read(void *opaque, hwaddr a, unsigned int size)
{
	NtbswPort *s = opaque;
	bool ok;
	uint64_t v = ntbsw_reg64(s, a & ~7ULL, &ok);

	if (ok)
		return size == 8 ? v : (uint32_t)(v >> ((a & 4) * 8));
	if (size == 8)
		return ntbsw_reg32(s, a) |
		       ((uint64_t)ntbsw_reg32(s, a + 4) << 32);
	return ntbsw_reg32(s, a);
}

/* Set doorbell bits of port p (dropped without a link, as on a dead link). */
static void ntbsw_ring_port(NtbswPort *s, unsigned int p, uint64_t bits)
{
	if (!bits || !ntbsw_link_up(s, p))
		return;
	qatomic_or(&s->c.st->port[p].db_status, bits);
	ntbsw_notify(&s->c, p, NTBSW_NOTE_DB);
}

/* DB_RING: bit p rings bit p of port p. */
static void ntbsw_ring(NtbswPort *s, uint64_t bits)
{
	unsigned int p;

	for (p = 0; p < s->c.nports; p++)
		if (bits & BIT_ULL(p))
			ntbsw_ring_port(s, p, BIT_ULL(p));
}

static void ntbsw_db_check(NtbswPort *s)
{
	struct ntbsw_port_state *me = ME(s);

	if (qatomic_read(&me->db_status) & ~qatomic_read(&me->db_mask))
		ntbsw_msix(&s->c, NTBSW_VEC_DB);
}

static void ntbsw_lut_write(NtbswPort *s, hwaddr a, uint32_t v)
{
	struct ntbsw_lut *l = &ME(s)->lut[0][0][0] +
			      (a - NTBSW_REG_LUT) / NTBSW_LUT_ENTRY;

	switch ((a - NTBSW_REG_LUT) % NTBSW_LUT_ENTRY) {
	case NTBSW_LUT_TARGET_LO:
		qatomic_set(&l->target,
			    (qatomic_read(&l->target) & ~0xffffffffULL) | v);
		break;
	case NTBSW_LUT_TARGET_HI:
		qatomic_set(&l->target, (qatomic_read(&l->target) &
					 0xffffffffULL) | ((uint64_t)v << 32));
		break;
	case NTBSW_LUT_CTRL:
		qatomic_set(&l->ctrl, v & (NTBSW_LUT_EN | NTBSW_LUT_PAGES_MASK));
		break;
	case NTBSW_LUT_RID_ALLOW:
		qatomic_set(&l->rid_allow, v);
		break;
	default:
		ntbsw_bad_access(s, a, "write");
		return;
	}
	/* Every writer of a window onto us rebuilds its aliases. */
	ntbsw_notify(&s->c, NTBSW_DST_ALL, NTBSW_NOTE_LUT);
}

static void ntbsw_bar0_write32(NtbswPort *s, hwaddr a, uint32_t v)
{
	struct ntbsw_port_state *me = ME(s);
	uint32_t *spad;

	switch (a) {
	case NTBSW_REG_LINK_EN:
		qatomic_set(&me->link_en, v & MAKE_64BIT_MASK(0, s->c.nports) &
			    ~BIT(s->c.port));
		ntbsw_notify(&s->c, NTBSW_DST_ALL, NTBSW_NOTE_LINK);
		ntbsw_update_links(s);
		return;
	case NTBSW_REG_LINK_EVENT:
		s->link_event &= ~v;
		return;
	case NTBSW_REG_ERR_STATUS:
		s->err_status &= ~v;
		return;
	}
	if (a >= NTBSW_REG_SPAD && a < NTBSW_REG_SPAD + 4 * NTBSW_NR_SPAD) {
		qatomic_set(&me->spad[(a - NTBSW_REG_SPAD) / 4], v);
		return;
	}
	if (ntbsw_peer_spad(s, a, &spad)) {
		if (spad)
			qatomic_set(spad, v);
		return;
	}
	if (a >= NTBSW_REG_LUT && a < NTBSW_REG_LUT + NTBSW_LUT_BYTES) {
		ntbsw_lut_write(s, a, v);
		return;
	}
	ntbsw_bad_access(s, a, "write");
}

static void ntbsw_bar0_write(void *opaque, hwaddr a, uint64_t v,
			     unsigned int size)
{
	NtbswPort *s = opaque;
	struct ntbsw_port_state *me = ME(s);
	hwaddr a8 = a & ~7ULL;
	uint64_t m = size == 8 ? ~0ULL : 0xffffffffULL << ((a & 4) * 8);

	if (size == 4)
		v <<= (a & 4) * 8;
	switch (a8) {
	case NTBSW_REG_DB_STATUS:
		qatomic_and(&me->db_status, ~(v & m));
		return;
	case NTBSW_REG_DB_MASK:
		qatomic_set(&me->db_mask,
			    (qatomic_read(&me->db_mask) & ~m) | (v & m));
		ntbsw_db_check(s);
		return;
	case NTBSW_REG_DB_RING:
		ntbsw_ring(s, v & m);
		return;
	}
	if (a8 >= NTBSW_REG_PEER_DB &&
	    a8 < NTBSW_REG_PEER_DB + 8 * NTBSW_MAX_PORTS) {
		ntbsw_ring_port(s, (a8 - NTBSW_REG_PEER_DB) / 8, v & m);
		return;
	}
	if (size == 8) {
		ntbsw_bar0_write32(s, a, v);
		ntbsw_bar0_write32(s, a + 4, v >> 32);
	} else {
		ntbsw_bar0_write32(s, a, v >> ((a & 4) * 8));
	}
}

static const MemoryRegionOps ntbsw_bar0_ops = {
	.read = ntbsw_bar0_read,
	.write = ntbsw_bar0_write,
	.endianness = DEVICE_LITTLE_ENDIAN,
	.valid = { .min_access_size = 4, .max_access_size = 8 },
	.impl = { .min_access_size = 4, .max_access_size = 8 },
};

/* A notice from a peer. */
static void ntbsw_port_notify(struct ntbsw_core *c, unsigned int src,
			      uint64_t note)
{
	NtbswPort *s = ntbsw_port_of(c);

	if (note & NTBSW_NOTE_DB)
		ntbsw_db_check(s);
	if (note & (NTBSW_NOTE_LINK | NTBSW_NOTE_LUT))
		ntbsw_update_links(s);
	if (note & NTBSW_NOTE_ERR) {
		s->err_status |= NTBSW_ERR_BLOCKED;
		ntbsw_msix(c, NTBSW_VEC_ERR);
	}
}

static void ntbsw_port_peers_changed(struct ntbsw_core *c)
{
	ntbsw_update_links(ntbsw_port_of(c));
}

static const struct ntbsw_core_ops ntbsw_port_ops = {
	.notify = ntbsw_port_notify,
	.peers_changed = ntbsw_port_peers_changed,
	.nr_slots = ntbsw_port_nr_slots,
	.slot = ntbsw_port_slot,
	.translate = ntbsw_port_translate,
};

/* ---- realize / reset ---------------------------------------------------- */

static void ntbsw_realize(PCIDevice *d, Error **errp)
{
	NtbswPort *s = NTBSW_PORT(d);
	uint64_t bar_size[NTBSW_NR_MW];
	unsigned int w;

	if (ntbsw_core_connect(&s->c, sizeof(*s->c.st), errp) < 0)
		return;
	if (!ntbsw_wsize_ok(s->c.st->mw_size) ||
	    !ntbsw_wsize_ok(s->c.st->mw1_size)) {
		error_setg(errp, "switch state has bad window sizes");
		return;
	}
	s->mw_size[0] = s->c.st->mw_size;
	s->mw_size[1] = s->c.st->mw1_size;
	s->slots = pow2ceil(s->c.nports);
	for (w = 0; w < NTBSW_NR_MW; w++) {
		s->ent_size[w] = s->mw_size[w] / NTBSW_NR_LUT;
		bar_size[w] = s->slots * s->mw_size[w];
	}

	/* QMP qom-get: how many BAR0 accesses met no register. */
	object_property_add_uint64_ptr(OBJECT(s), "bad-accesses",
				       &s->bad_accesses, OBJ_PROP_FLAG_READ);
	pci_config_set_interrupt_pin(d->config, 1);
	memory_region_init_io(&s->bar0, OBJECT(s), &ntbsw_bar0_ops, s,
			      "ntb-regs", NTBSW_BAR0_SIZE);
	pci_register_bar(d, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->bar0);
	if (msix_init_exclusive_bar(d, NTBSW_NR_VEC, 1, errp))
		return;
	for (w = 0; w < NTBSW_NR_VEC; w++)
		msix_vector_use(d, w);
	if (pcie_endpoint_cap_init(d, 0xe0) < 0) {
		error_setg(errp, "cannot add the PCIe capability");
		return;
	}
	ntbsw_core_start(&s->c, bar_size);
}

/* A guest reset forgets this port's side: links, doorbells, spads, LUT. */
static void ntbsw_reset(DeviceState *dev)
{
	NtbswPort *s = NTBSW_PORT(dev);
	struct ntbsw_port_state *me;

	if (!s->c.st)
		return;
	me = ME(s);
	qatomic_set(&me->link_en, 0);
	qatomic_set(&me->db_status, 0);
	qatomic_set(&me->db_mask, ~0ULL);
	memset(me->spad, 0, sizeof(me->spad));
	memset(me->lut, 0, sizeof(me->lut));
	s->link_event = 0;
	s->err_status = 0;
	ntbsw_notify(&s->c, NTBSW_DST_ALL, NTBSW_NOTE_LINK | NTBSW_NOTE_LUT);
	ntbsw_update_links(s);
	s->link_event = 0;
}

static Property ntbsw_props[] = {
	DEFINE_PROP_STRING("switch", NtbswPort, c.switch_path),
	DEFINE_PROP_UINT32("port", NtbswPort, c.port, 0),
	DEFINE_PROP_LINK("memdev", NtbswPort, c.memdev, TYPE_MEMORY_BACKEND,
			 HostMemoryBackend *),
	DEFINE_PROP_END_OF_LIST(),
};

static void ntbsw_instance_init(Object *obj)
{
	NtbswPort *s = NTBSW_PORT(obj);

	ntbsw_core_init(&s->c, PCI_DEVICE(s), &ntbsw_port_ops,
			TYPE_NTBSW_PORT);
}

static void ntbsw_class_init(ObjectClass *klass, void *data)
{
	DeviceClass *dc = DEVICE_CLASS(klass);
	PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

	/*
	 * A second guard beside the build-id: the layout of the parent type
	 * (known here, once every type is registered) must be ours.
	 */
	if (object_type_get_instance_size(TYPE_PCI_DEVICE) !=
	    sizeof(PCIDevice)) {
		error_report("smartio-ntb.so: PCIDevice layout differs from "
			     "this qemu; rebuild: make -C contrib/qemu");
		exit(1);
	}

	k->realize = ntbsw_realize;
	k->vendor_id = NTBSW_PCI_VENDOR;
	k->device_id = NTBSW_PCI_DEVICE;
	k->class_id = PCI_CLASS_BRIDGE_OTHER;
	k->revision = NTBSW_VERSION;
	dc->reset = ntbsw_reset;
	dc->desc = "smartio NTB switch port";
	dc->user_creatable = true;
	/* A peer's RAM and a switch connection cannot migrate. */
	dc->hotpluggable = false;
	device_class_set_props(dc, ntbsw_props);
	set_bit(DEVICE_CATEGORY_BRIDGE, dc->categories);
}

static const TypeInfo ntbsw_info = {
	.name = TYPE_NTBSW_PORT,
	.parent = TYPE_PCI_DEVICE,
	.instance_size = sizeof(NtbswPort),
	.instance_init = ntbsw_instance_init,
	.class_init = ntbsw_class_init,
	.interfaces = (InterfaceInfo[]) {
		{ INTERFACE_PCIE_DEVICE },
		{ }
	},
};

static void ntbsw_register(void)
{
	type_register_static(&ntbsw_info);
}

type_init(ntbsw_register)
