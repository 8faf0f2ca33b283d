/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The requester of a device's DMA (ntbsw-core.h).  A switch that checks
 * requester ids (Switchtec's ID protection) sees on every TLP entering
 * its NT function who sent it.  QEMU 7.2 does not tell: a device's DMA
 * (pci_dma_rw, dma_memory_map) carries MEMTXATTRS_UNSPECIFIED, and into a
 * peer's RAM it lands through a RAM alias that no callback sees.
 *
 * What QEMU does know is which device a DMA address space belongs to:
 * pci_device_iommu_address_space() asks the bus's iommu_fn for one per
 * (bus, devfn), as intel-iommu hands out one per device
 * (vtd_host_dma_iommu), and every access of that device's bus master
 * goes through it.  So the gate takes the iommu_fn of the bus the NT
 * function's DMA is decided on (the root bus in a q35 guest), keeps what
 * it replaced (the vIOMMU's function, or none: system memory) as the
 * inner address space of each requester, and hands each device an IOMMU
 * region of its own in front of that:
 *  - its translation knows the requester (bus number read at the
 *    access, as the guest numbered the bus, and devfn);
 *  - a requester the model allows (ops->requester_ok) goes to the inner
 *    space untouched, over a span that needs no second look;
 *  - any other is translated through the inner space first (the vIOMMU,
 *    then system memory, then a window's RAM alias or IOMMU region): when
 *    the access ends in one of this NT function's windows it is refused
 *    (perm none: a write is dropped, a read fails, as a blocked TLP the
 *    device sees as an error), and the model counts it.
 * Nothing is cached: QEMU 7.2 translates every dma_memory_rw and every
 * address_space_map through the device's space again (a RAM alias only
 * spares the copy once the access was let through), and the gate sends
 * no IOTLB notifications, so it refuses a notifier (vfio, vhost's device
 * IOTLB) rather than let one cache what it allowed.  The NT function's
 * own DMA (forwarded accesses the peers send us) is not gated.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "exec/memory.h"
#include "exec/address-spaces.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_bus.h"
#include "sysemu/sysemu.h"

#include "ntbsw-core.h"

#define TYPE_NTBSW_RID_GATE "ntbsw-rid-gate"

/* A span an allowed requester's access may take without a second look. */
#define NTBSW_GATE_SPAN_MASK	((1ULL << 62) - 1)
/* What a refusal covers: the 4 KiB page of the access. */
#define NTBSW_GATE_PAGE_MASK	0xfffULL

/* One requester's DMA address space. */
struct ntbsw_gate {
	IOMMUMemoryRegion iommu;
	AddressSpace as;
	struct ntbsw_core *s;
	PCIBus *bus;		/* its bus number is read at each access */
	uint8_t devfn;
	AddressSpace *inner;	/* what the device would have had */
};

bool ntbsw_crosses(struct ntbsw_core *s, MemoryRegion *mr)
{
	unsigned int i;

	for (i = 0; i < NTBSW_NR_WIN; i++)
		if (mr == &s->win_io[i] || mr == &s->win_cpu[i])
			return true;
	/* A peer's RAM (alias) or its IOVA space (a translating peer). */
	for (i = 0; i < s->nports; i++)
		if (mr == &s->peer[i].ram ||
		    (s->peer[i].iova_mr && mr == s->peer[i].iova_mr))
			return true;
	return false;
}

static IOMMUTLBEntry ntbsw_gate_translate(IOMMUMemoryRegion *iommu,
					  hwaddr addr, IOMMUAccessFlags flag,
					  int iommu_idx)
{
	struct ntbsw_gate *g = container_of(iommu, struct ntbsw_gate, iommu);
	struct ntbsw_core *s = g->s;
	uint16_t rid = PCI_BUILD_BDF(pci_bus_num(g->bus), g->devfn);
	bool write = flag & IOMMU_WO;
	IOMMUTLBEntry e = {
		.target_as = g->inner,
		.iova = addr & ~NTBSW_GATE_SPAN_MASK,
		.translated_addr = addr & ~NTBSW_GATE_SPAN_MASK,
		.addr_mask = NTBSW_GATE_SPAN_MASK,
		.perm = IOMMU_RW,
	};
	hwaddr xlat, len = 1;
	MemoryRegion *mr;

	(void)iommu_idx;
	if (s->ops->requester_ok(s, rid))
		return e;
	/*
	 * Not allowed to cross: where does it land?  (Called under the RCU
	 * read lock, as every translation.)  The answer holds for this page
	 * only; QEMU asks again at each section an access moves into.
	 */
	e.iova = e.translated_addr = addr & ~NTBSW_GATE_PAGE_MASK;
	e.addr_mask = NTBSW_GATE_PAGE_MASK;
	mr = address_space_translate(g->inner, addr, &xlat, &len, write,
				     MEMTXATTRS_UNSPECIFIED);
	if (!ntbsw_crosses(s, mr))
		return e;
	s->ops->requester_refused(s, rid, write);
	e.perm = IOMMU_NONE;
	return e;
}

/*
 * Nothing here is worth caching, and no notification would tell a cache
 * that the requester-id table changed: refuse every notifier.
 */
static int ntbsw_gate_notify_flag_changed(IOMMUMemoryRegion *iommu,
					  IOMMUNotifierFlag old,
					  IOMMUNotifierFlag new, Error **errp)
{
	(void)iommu;
	(void)old;
	if (new != IOMMU_NOTIFIER_NONE) {
		error_setg(errp, "a device behind an NT function with ID "
			   "protection is checked at each access: it sends no "
			   "IOTLB notifications");
		return -ENOTSUP;
	}
	return 0;
}

/* The bus's iommu_fn from now on. */
static AddressSpace *ntbsw_gate_as(PCIBus *bus, void *opaque, int devfn)
{
	struct ntbsw_core *s = opaque;
	AddressSpace *inner = s->gate_inner_fn ?
		s->gate_inner_fn(bus, s->gate_inner_opaque, devfn) :
		&address_space_memory;
	/* One key per (bus, devfn): buses are at least 256 bytes apart. */
	gpointer key = (uint8_t *)bus + devfn;
	struct ntbsw_gate *g;
	char name[64];

	if (bus == pci_get_bus(s->pci) && devfn == s->pci->devfn)
		return inner;		/* the NT function itself */
	g = g_hash_table_lookup(s->gates, key);
	if (g)
		return &g->as;
	g = g_new0(struct ntbsw_gate, 1);
	g->s = s;
	g->bus = bus;
	g->devfn = devfn;
	g->inner = inner;
	snprintf(name, sizeof(name), "ntb-rid-gate-%s-%02x.%x",
		 bus->qbus.name ? bus->qbus.name : "bus", PCI_SLOT(devfn),
		 PCI_FUNC(devfn));
	memory_region_init_iommu(&g->iommu, sizeof(g->iommu),
				 TYPE_NTBSW_RID_GATE, OBJECT(s->pci), name,
				 UINT64_MAX);
	address_space_init(&g->as, MEMORY_REGION(&g->iommu), name);
	g_hash_table_insert(s->gates, key, g);
	return &g->as;
}

/*
 * A device whose bus master space was set up before the gate (on a bus
 * created after the NT function, whose own notifier ran first) keeps
 * what it had: unchecked, said here.
 */
static void ntbsw_gate_late(PCIBus *bus, PCIDevice *d, void *opaque)
{
	struct ntbsw_core *s = opaque;

	(void)bus;
	if (d != s->pci && d->bus_master_enable_region.container)
		warn_report("%s %u: the DMA of %s was set up before the NT "
			    "function's requester-id gate: its requester id is "
			    "not checked", s->name, s->port, d->name);
}

static void ntbsw_gate_late_bus(PCIBus *bus, void *opaque)
{
	pci_for_each_device_under_bus(bus, ntbsw_gate_late, opaque);
}

/*
 * Machine done: every device is realized (intel-iommu too, wherever it
 * stands on the command line), and the buses' own notifiers, which set
 * up each device's bus master space, run after this one (notifiers run
 * newest first; the root bus registered its own at machine creation).
 */
static void ntbsw_gate_install(Notifier *n, void *data)
{
	struct ntbsw_core *s = container_of(n, struct ntbsw_core, gate_done);
	PCIBus *b = pci_get_bus(s->pci);

	(void)data;
	/* The bus pci_device_iommu_address_space() asks, as it walks. */
	while (!b->iommu_fn && b->parent_dev)
		b = pci_get_bus(b->parent_dev);
	s->gate_bus = b;
	s->gate_inner_fn = b->iommu_fn;
	s->gate_inner_opaque = b->iommu_opaque;
	s->gates = g_hash_table_new(g_direct_hash, g_direct_equal);
	pci_setup_iommu(b, ntbsw_gate_as, s);
	/*
	 * The bus and those below it: a device there whose space is not a
	 * gate's was set up before (a bus below with an iommu_fn of its own
	 * keeps it too; none has on q35).
	 */
	pci_for_each_bus(b, ntbsw_gate_late_bus, s);
}

void ntbsw_gate_start(struct ntbsw_core *s)
{
	s->gate_done.notify = ntbsw_gate_install;
	qemu_add_machine_init_done_notifier(&s->gate_done);
}

static void ntbsw_gate_class_init(ObjectClass *klass, void *data)
{
	IOMMUMemoryRegionClass *imrc = IOMMU_MEMORY_REGION_CLASS(klass);

	(void)data;
	imrc->translate = ntbsw_gate_translate;
	imrc->notify_flag_changed = ntbsw_gate_notify_flag_changed;
}

static const TypeInfo ntbsw_gate_info = {
	.parent = TYPE_IOMMU_MEMORY_REGION,
	.name = TYPE_NTBSW_RID_GATE,
	.class_init = ntbsw_gate_class_init,
};

static void ntbsw_gate_register(void)
{
	type_register_static(&ntbsw_gate_info);
}

type_init(ntbsw_gate_register)
