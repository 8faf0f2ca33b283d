/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The receiving guest's IOMMU on the switch (ntbsw-core.h).  A TLP that
 * arrives through an NTB is, to the receiving root complex, a DMA of the
 * receiving NTB function: when that guest translates its function's DMA
 * (intel_iommu=on without iommu=pt), the address a window leads to is an
 * IOVA of the function's domain, not a guest-physical address.
 *
 * The receiving port publishes in the switch state how its function's
 * DMA is translated (struct ntbsw_dma_xlat): it watches its own
 * bus-master address space, which intel-iommu switches between its IOMMU
 * region and the untranslated alias whenever translation is enabled or
 * the function's context entry changes (vtd_switch_address_space).
 *
 * The sending port then puts, where a window leads into that peer's RAM,
 * an IOMMU region (instead of the RAM alias) whose translation walks the
 * peer's VT-d tables (legacy mode: root, context, second-level entries;
 * intel_iommu_internal.h) in the peer's RAM, which it maps already,
 * whenever its IOTLB (struct ntbsw_iotlb) does not have the page.  That
 * IOTLB is dropped, as a real one is, by the peer's invalidations: the
 * peer's port bumps inval_gen in the switch state before its vIOMMU
 * carries out any register write of the guest (every invalidation,
 * queued or by register, is carried out inside one:
 * ntbsw_vtd_reg_write), and an entry walked under an older value is
 * never used.  The guest changes its tables before it asks for the
 * invalidation, so a walk after the bump sees what it unmapped as
 * unmapped: once its invalidation completes, a page the peer unmapped
 * and flushed is not reached again.  A translation that began before
 * the bump may still be used once, as with a walk that read an entry
 * just before the guest cleared it (or a DMA in flight on hardware).
 *  - A device's DMA into the window (through this guest's own vIOMMU
 *    first: QEMU loops over nested IOMMU regions) gets the peer's RAM
 *    page itself, at RAM speed, with the page's permissions.
 *  - A vCPU's access is kept out of the RAM path: TCG caches what a
 *    translation gives in the vCPU's TLB and would drop it only on an
 *    IOMMU notification, which no one sends when the peer unmaps.  So a
 *    CPU's translation (flag IOMMU_NONE: only TCG's TLB fill asks so)
 *    leads to the window's own forwarding callbacks, where each access
 *    is translated again (ntbsw_translate walks the tables); the TLB then
 *    holds only "MMIO", never a RAM page.  Those callbacks are mapped a
 *    second time for this (win_cpu), high in system memory where the
 *    guest cannot reach (above its physical address bits): QEMU 7.2's TLB
 *    keeps an MMIO section as an index into the vCPU's own address
 *    space's sections, so the translation must end in that address
 *    space, and in the window itself it would meet this region again.
 *  - A page the peer's IOMMU did not map for the access is never dropped
 *    here: it goes down the forwarded path, the peer's QEMU performs it
 *    as its function's bus-master access, and its vIOMMU refuses it and
 *    records the DMAR fault that guest logs.  Nothing lands in its RAM.
 * Identity (no vIOMMU, translation off, the function passed through)
 * keeps the RAM aliases exactly as before.  Scalable mode and other
 * IOMMUs are not walked: every access to such a peer is forwarded
 * (correct, slow), said once in the log.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "exec/memory.h"
#include "exec/address-spaces.h"
#include "hw/core/cpu.h"
#include "hw/pci/pci.h"
#include "hw/i386/x86-iommu.h"
#include "hw/i386/intel_iommu.h"
#include "hw/i386/intel_iommu_internal.h"

#include "ntbsw-core.h"

#define TYPE_NTBSW_IOVA_WINDOW "ntbsw-iova-window"

/* A window onto a peer's IOVA space from target (an IOMMU region). */
struct ntbsw_iova_window {
	IOMMUMemoryRegion iommu;
	struct ntbsw_core *s;
	unsigned int peer, win;
	uint64_t bar_off, target;
};

/*
 * Where the vCPUs' copies of the windows go: above 2^50, beyond the 40
 * or 48 physical address bits an x86 guest's page tables can name and
 * the 39 or 48 bits of its vIOMMU's output.
 */
#define NTBSW_CPU_WINDOWS	(1ULL << 50)

/* What the IOVA-space MMIO region of one peer knows. */
struct ntbsw_iova_ctx {
	struct ntbsw_core *s;
	unsigned int peer;
};

/* ---- the receiving side: publishing how our DMA is translated --------- */

static struct ntbsw_core *ntbsw_of_listener(MemoryListener *l)
{
	return container_of(l, struct ntbsw_core, dma_listener);
}

static void ntbsw_dma_begin(MemoryListener *l)
{
	ntbsw_of_listener(l)->dma_seen_iommu = false;
}

/* Every section of the new view comes by region_add or region_nop. */
static void ntbsw_dma_section(MemoryListener *l, MemoryRegionSection *sec)
{
	if (memory_region_is_iommu(sec->mr))
		ntbsw_of_listener(l)->dma_seen_iommu = true;
}

static void ntbsw_dma_tell_peers(void *opaque)
{
	ntbsw_notify(opaque, NTBSW_DST_ALL, NTBSW_NOTE_DMA);
}

/* This machine's intel-iommu, or NULL when it has none or another IOMMU. */
static IntelIOMMUState *ntbsw_vtd(void)
{
	X86IOMMUState *x86 = x86_iommu_get_default();

	return x86 ? (IntelIOMMUState *)object_dynamic_cast(OBJECT(x86),
						TYPE_INTEL_IOMMU_DEVICE) :
		     NULL;
}

/*
 * The view of our bus-master address space changed: publish what it is
 * now.  Runs inside a memory transaction's commit (big lock held): the
 * peers are told from a bottom half, since a send may wait for room.
 */
static void ntbsw_dma_commit(MemoryListener *l)
{
	struct ntbsw_core *s = ntbsw_of_listener(l);
	struct ntbsw_dma_xlat *x = &NTBSW_ME(s)->dma;
	IntelIOMMUState *vtd = ntbsw_vtd();
	uint32_t mode = NTBSW_DMA_IDENTITY;
	uint8_t flags = 0;
	uint16_t sid = 0;
	uint64_t root = 0;
	uint8_t aw = 0;

	if (s->dma_seen_iommu && (!vtd || vtd->root_scalable)) {
		mode = NTBSW_DMA_OPAQUE;
		warn_report_once("%s %u: its DMA is translated by %s, which the "
				 "switch does not walk: peers forward every "
				 "access to this port's memory (slow)",
				 s->name, s->port,
				 vtd ? "VT-d in scalable mode" :
				       "an IOMMU other than intel-iommu");
	} else if (s->dma_seen_iommu) {
		mode = NTBSW_DMA_VTD;
		root = vtd->root;
		aw = vtd->aw_bits;
		sid = PCI_BUILD_BDF(pci_bus_num(pci_get_bus(s->pci)),
				    s->pci->devfn);
		if (s->dma_gen_kept)
			flags = NTBSW_DMA_F_GEN;
	}
	if (qatomic_read(&x->mode) == mode && x->root == root &&
	    x->sid == sid && x->aw_bits == aw && x->flags == flags)
		return;
	/* A reader takes the mode first (acquire): fields before it. */
	qatomic_set(&x->mode, NTBSW_DMA_OPAQUE);
	qatomic_inc(&x->inval_gen);	/* what peers cached is stale */
	smp_wmb();
	x->root = root;
	x->sid = sid;
	x->aw_bits = aw;
	x->flags = flags;
	qatomic_store_release(&x->mode, mode);
	if (mode == NTBSW_DMA_VTD)
		info_report("%s %u: its DMA is translated by VT-d (root table "
			    "0x%" PRIx64 ", requester %02x:%02x.%x): peers walk "
			    "it", s->name, s->port, root, PCI_BUS_NUM(sid),
			    PCI_SLOT(sid & 0xff), PCI_FUNC(sid & 0xff));
	else if (mode == NTBSW_DMA_IDENTITY)
		info_report("%s %u: its DMA is untranslated: peers alias its "
			    "RAM", s->name, s->port);
	qemu_bh_schedule(s->dma_bh);
}

/*
 * The functions whose DMA this QEMU's VT-d translates, and the register
 * operations of that VT-d as they were before we wrapped them.
 */
static struct ntbsw_core *ntbsw_vtd_cores[NTBSW_MAX_PORTS];
static unsigned int ntbsw_vtd_ncores;
static const MemoryRegionOps *ntbsw_vtd_orig_ops;
static MemoryRegionOps ntbsw_vtd_ops;

/*
 * A guest's write to its VT-d's registers.  Every invalidation it asks
 * for (the invalidation queue's tail, the IOTLB and context command
 * registers) and every change of root table or translation is carried
 * out inside such a write, and its completion (a wait descriptor's
 * status, a register's bit) written there too: peers' IOTLBs of our
 * tables are stale from here on, before the guest can learn that it
 * completed.  Writes are rare (one queue tail per strict unmap); reads
 * are not wrapped.
 */
static void ntbsw_vtd_reg_write(void *opaque, hwaddr addr, uint64_t val,
				unsigned int size)
{
	unsigned int i, n = qatomic_read(&ntbsw_vtd_ncores);

	for (i = 0; i < n; i++)
		qatomic_inc(&NTBSW_ME(ntbsw_vtd_cores[i])->dma.inval_gen);
	ntbsw_vtd_orig_ops->write(opaque, addr, val, size);
}

/* At realize, before the guest runs: VT-d's writes bump our inval_gen. */
static void ntbsw_vtd_wrap(struct ntbsw_core *s, IntelIOMMUState *vtd)
{
	if (vtd->csrmem.ops != &ntbsw_vtd_ops) {
		ntbsw_vtd_orig_ops = vtd->csrmem.ops;
		ntbsw_vtd_ops = *ntbsw_vtd_orig_ops;
		ntbsw_vtd_ops.write = ntbsw_vtd_reg_write;
		vtd->csrmem.ops = &ntbsw_vtd_ops;
	}
	if (ntbsw_vtd_ncores < NTBSW_MAX_PORTS) {
		ntbsw_vtd_cores[ntbsw_vtd_ncores++] = s;
		s->dma_gen_kept = true;
	}
}

void ntbsw_dma_watch(struct ntbsw_core *s)
{
	AddressSpace *as = pci_device_iommu_address_space(s->pci);
	IntelIOMMUState *vtd = ntbsw_vtd();

	s->dma_bh = qemu_bh_new(ntbsw_dma_tell_peers, s);
	if (as == &address_space_memory) {
		/* No IOMMU in front of this function: identity for good. */
		memset(&NTBSW_ME(s)->dma, 0, sizeof(NTBSW_ME(s)->dma));
		return;
	}
	/*
	 * Only intel-iommu's tables are walked (ntbsw_dma_commit), and its
	 * vtd_mem_write carries out every invalidation; a peer forwards
	 * every access to a function behind anything else, caching nothing.
	 */
	if (vtd && vtd->csrmem.ops && vtd->csrmem.ops->write &&
	    !vtd->csrmem.ops->write_with_attrs)
		ntbsw_vtd_wrap(s, vtd);
	s->dma_listener = (MemoryListener){
		.name = "ntbsw-dma",
		.begin = ntbsw_dma_begin,
		.region_add = ntbsw_dma_section,
		.region_nop = ntbsw_dma_section,
		.commit = ntbsw_dma_commit,
	};
	/* Replays the current view at once: published before any link. */
	memory_listener_register(&s->dma_listener, as);
	s->dma_watched = true;
}

/* ---- the sending side: walking the peer's tables ---------------------- */

bool ntbsw_peer_translated(struct ntbsw_core *s, unsigned int p)
{
	return p < s->nports &&
	       qatomic_load_acquire(&s->st->port[p].dma.mode) !=
	       NTBSW_DMA_IDENTITY;
}

/*
 * One 64-bit entry of the peer's tables at guest-physical gpa.  The
 * tables are the peer guest's to write, so every pointer in them is
 * checked against its RAM here; false: outside it (the peer's IOMMU
 * would report an invalid entry, and it will when forwarded).
 */
static bool ntbsw_peer_entry(struct ntbsw_peer *pe, uint64_t gpa,
			     uint64_t *v)
{
	if ((gpa & 7) || gpa >= pe->ram_size || pe->ram_size - gpa < 8)
		return false;
	*v = le64_to_cpu(qatomic_read((uint64_t *)((uint8_t *)pe->ram_ptr +
						   gpa)));
	return true;
}

/*
 * Walks peer p's VT-d legacy-mode tables for iova: its guest-physical
 * address and the permissions (VTD_SL_R, VTD_SL_W) of the 4 KiB page
 * around it, or false when the function's context is absent, invalid or
 * the page is not mapped.
 */
static bool ntbsw_vtd_walk_tables(struct ntbsw_core *s, unsigned int p,
				  uint64_t iova, uint64_t *gpa,
				  unsigned int *perm)
{
	struct ntbsw_peer *pe = &s->peer[p];
	struct ntbsw_dma_xlat *x = &s->st->port[p].dma;
	uint64_t re, ce_lo, ce_hi, ctx, e, haw, addr;
	unsigned int level, aw, agaw, shift;
	uint16_t sid;

	if (qatomic_load_acquire(&x->mode) != NTBSW_DMA_VTD || !pe->have_ram)
		return false;
	/* Counted for the bench: walks per I/O (IOVA_WALKS, BAR0 + 0x98). */
	qatomic_inc(&s->iova_walks);
	aw = x->aw_bits;
	sid = x->sid;
	if (aw != VTD_HOST_AW_39BIT && aw != VTD_HOST_AW_48BIT)
		return false;
	haw = VTD_HAW_MASK(aw);
	if (!ntbsw_peer_entry(pe, (x->root & haw & VTD_ROOT_ENTRY_CTP) +
			      PCI_BUS_NUM(sid) * 16, &re) ||
	    !(re & VTD_ROOT_ENTRY_P))
		return false;
	ctx = (re & VTD_ROOT_ENTRY_CTP & haw) + (sid & 0xff) * 16;
	if (!ntbsw_peer_entry(pe, ctx, &ce_lo) ||
	    !ntbsw_peer_entry(pe, ctx + 8, &ce_hi) ||
	    !(ce_lo & VTD_CONTEXT_ENTRY_P))
		return false;
	switch (ce_lo & VTD_CONTEXT_ENTRY_TT) {
	case VTD_CONTEXT_TT_PASS_THROUGH:
		*gpa = iova;
		*perm = VTD_SL_R | VTD_SL_W;
		return true;
	case VTD_CONTEXT_TT_MULTI_LEVEL:
	case VTD_CONTEXT_TT_DEV_IOTLB:
		break;
	default:
		return false;
	}
	level = 2 + (ce_hi & VTD_CONTEXT_ENTRY_AW);
	agaw = 30 + (ce_hi & VTD_CONTEXT_ENTRY_AW) * 9;
	if (level < 3 || level > 4 || (iova >> MIN(agaw, aw)))
		return false;
	addr = ce_lo & VTD_CONTEXT_ENTRY_SLPTPTR & haw;
	*perm = VTD_SL_R | VTD_SL_W;
	for (;;) {
		shift = VTD_PAGE_SHIFT_4K + VTD_SL_LEVEL_BITS * (level - 1);
		if (!ntbsw_peer_entry(pe, addr + ((iova >> shift) &
					((1u << VTD_SL_LEVEL_BITS) - 1)) * 8,
				      &e))
			return false;
		*perm &= e & VTD_SL_RW_MASK;
		if (!*perm)
			return false;
		if (level == 1 ||
		    (level <= 3 && (e & VTD_SL_PT_PAGE_SIZE_MASK)))
			break;
		addr = e & VTD_SL_PT_BASE_ADDR_MASK(aw);
		level--;
	}
	*gpa = (e & haw & ~((1ULL << shift) - 1)) |
	       (iova & ((1ULL << shift) - 1));
	/* VT-d 3.14: never into the interrupt range. */
	if ((*gpa & VTD_PAGE_MASK_4K) >= VTD_INTERRUPT_ADDR_FIRST &&
	    (*gpa & VTD_PAGE_MASK_4K) <= VTD_INTERRUPT_ADDR_LAST)
		return false;
	return true;
}

/* Drops all that we cached of peer p's tables (its RAM comes or goes). */
static void ntbsw_iotlb_drop(struct ntbsw_peer *pe)
{
	qemu_spin_lock(&pe->iotlb.lock);
	memset(pe->iotlb.e, 0, sizeof(pe->iotlb.e));
	qemu_spin_unlock(&pe->iotlb.lock);
}

/*
 * ntbsw_vtd_walk_tables through peer p's IOTLB.  Only pages the walk
 * found mapped are kept (a page the peer maps later needs no
 * invalidation to be seen), each with the inval_gen read before its
 * walk, plus one (0: empty), and used only while inval_gen has not moved
 * since: the peer bumps it before any invalidation of its guest takes
 * effect (ntbsw_vtd_reg_write).  A peer whose port does not keep
 * inval_gen (its IOMMU is not wrapped) is walked every time.
 */
static bool ntbsw_vtd_walk(struct ntbsw_core *s, unsigned int p,
			   uint64_t iova, uint64_t *gpa, unsigned int *perm)
{
	struct ntbsw_peer *pe = &s->peer[p];
	struct ntbsw_dma_xlat *x = &s->st->port[p].dma;
	uint64_t page = iova & VTD_PAGE_MASK_4K, gen;
	struct ntbsw_iotlb_entry *e;
	bool hit;

	if (!(qatomic_load_acquire(&x->mode) == NTBSW_DMA_VTD &&
	      (qatomic_read(&x->flags) & NTBSW_DMA_F_GEN)))
		return ntbsw_vtd_walk_tables(s, p, iova, gpa, perm);
	gen = qatomic_load_acquire(&x->inval_gen) + 1;
	e = &pe->iotlb.e[(page >> VTD_PAGE_SHIFT_4K) % NTBSW_IOTLB_SIZE];
	qemu_spin_lock(&pe->iotlb.lock);
	hit = e->gen == gen && e->iova == page;
	if (hit) {
		*gpa = e->gpa | (iova & ~VTD_PAGE_MASK_4K);
		*perm = e->perm;
	}
	qemu_spin_unlock(&pe->iotlb.lock);
	if (hit) {
		qatomic_inc(&s->iova_hits);
		return true;
	}
	if (!ntbsw_vtd_walk_tables(s, p, iova, gpa, perm))
		return false;
	qemu_spin_lock(&pe->iotlb.lock);
	*e = (struct ntbsw_iotlb_entry){ .iova = page, .gen = gen,
					 .gpa = *gpa & VTD_PAGE_MASK_4K,
					 .perm = *perm };
	qemu_spin_unlock(&pe->iotlb.lock);
	return true;
}

bool ntbsw_peer_iova(struct ntbsw_core *s, unsigned int p, uint64_t iova,
		     unsigned int size, bool write, uint64_t *gpa)
{
	unsigned int perm;
	uint64_t g;

	/* Within one page: the next may be mapped elsewhere or not. */
	if ((iova & ~VTD_PAGE_MASK_4K) + size > VTD_PAGE_SIZE)
		return false;
	if (!ntbsw_vtd_walk(s, p, iova, &g, &perm) ||
	    !(perm & (write ? VTD_SL_W : VTD_SL_R)))
		return false;
	*gpa = g;
	return true;
}

/* ---- the peer's IOVA space as MMIO: the CPU's and the faults' way ----- */

static uint64_t ntbsw_iova_read(void *opaque, hwaddr iova, unsigned int size)
{
	struct ntbsw_iova_ctx *c = opaque;
	struct ntbsw_peer *pe = &c->s->peer[c->peer];
	uint64_t gpa, v = 0;

	qatomic_inc(&c->s->slow);	/* by callback, as ntbsw_win_read */
	if (pe->have_ram && ntbsw_peer_iova(c->s, c->peer, iova, size, false,
					    &gpa) &&
	    gpa < pe->ram_size && pe->ram_size - gpa >= size) {
		memcpy(&v, (uint8_t *)pe->ram_ptr + gpa, size);
		return le64_to_cpu(v);
	}
	return ntbsw_fwd_read(c->s, c->peer, iova, size);
}

static void ntbsw_iova_write(void *opaque, hwaddr iova, uint64_t val,
			     unsigned int size)
{
	struct ntbsw_iova_ctx *c = opaque;
	struct ntbsw_peer *pe = &c->s->peer[c->peer];
	uint64_t gpa;

	qatomic_inc(&c->s->slow);	/* an MSI, a fault: by callback */
	if (pe->have_ram && ntbsw_peer_iova(c->s, c->peer, iova, size, true,
					    &gpa) &&
	    gpa < pe->ram_size && pe->ram_size - gpa >= size) {
		val = cpu_to_le64(val);
		memcpy((uint8_t *)pe->ram_ptr + gpa, &val, size);
		return;
	}
	ntbsw_fwd_write(c->s, c->peer, iova, val, size);
}

static const MemoryRegionOps ntbsw_iova_ops = {
	.read = ntbsw_iova_read,
	.write = ntbsw_iova_write,
	.endianness = DEVICE_LITTLE_ENDIAN,
	.valid = { .min_access_size = 1, .max_access_size = 8 },
	.impl = { .min_access_size = 1, .max_access_size = 8 },
};

/*
 * The objects live as long as this QEMU: a flat view being torn down
 * under RCU may still point at them when the peer leaves (as the RAM
 * aliases, ntbsw_alias_drop); a peer's return makes new ones.
 */
void ntbsw_peer_as_init(struct ntbsw_core *s, unsigned int p)
{
	struct ntbsw_peer *pe = &s->peer[p];
	char name[40];

	pe->ram_as = g_new0(AddressSpace, 1);
	snprintf(name, sizeof(name), "ntb-peer%u-ram", p);
	address_space_init(pe->ram_as, &pe->ram, name);
	pe->iova_ctx = g_new0(struct ntbsw_iova_ctx, 1);
	pe->iova_ctx->s = s;
	pe->iova_ctx->peer = p;
	pe->iova_mr = g_new0(MemoryRegion, 1);
	snprintf(name, sizeof(name), "ntb-peer%u-iova", p);
	memory_region_init_io(pe->iova_mr, OBJECT(s->pci), &ntbsw_iova_ops,
			      pe->iova_ctx, name, UINT64_MAX);
	pe->iova_as = g_new0(AddressSpace, 1);
	address_space_init(pe->iova_as, pe->iova_mr, name);
	ntbsw_iotlb_drop(pe);
}

void ntbsw_peer_as_drop(struct ntbsw_core *s, unsigned int p)
{
	struct ntbsw_peer *pe = &s->peer[p];

	if (!pe->ram_as)
		return;
	ntbsw_iotlb_drop(pe);
	address_space_destroy(pe->ram_as);
	address_space_destroy(pe->iova_as);
	object_unparent(OBJECT(pe->iova_mr));
	pe->ram_as = pe->iova_as = NULL;
	pe->iova_mr = NULL;
	pe->iova_ctx = NULL;
}

/* ---- the window region: an IOMMU region over the peer's IOVAs --------- */

static IOMMUTLBEntry ntbsw_iova_translate(IOMMUMemoryRegion *iommu,
					  hwaddr addr, IOMMUAccessFlags flag,
					  int iommu_idx)
{
	struct ntbsw_iova_window *w = container_of(iommu,
					struct ntbsw_iova_window, iommu);
	struct ntbsw_peer *pe = &w->s->peer[w->peer];
	uint64_t iova = w->target + addr, gpa;
	unsigned int perm;
	IOMMUTLBEntry e = {
		.iova = addr & VTD_PAGE_MASK_4K,
		.addr_mask = ~VTD_PAGE_MASK_4K,
		/* The peer's IOVA space: walked again at each access. */
		.target_as = pe->iova_as,
		.translated_addr = iova & VTD_PAGE_MASK_4K,
		.perm = IOMMU_RW,
	};

	if (flag == IOMMU_NONE && current_cpu) {
		/* A vCPU's TLB fill: the window's callbacks, page by page. */
		e.target_as = cpu_get_address_space(current_cpu, iommu_idx);
		e.translated_addr = w->s->win_cpu_base[w->win] + w->bar_off +
				    (addr & VTD_PAGE_MASK_4K);
		return e;
	}
	if (flag == IOMMU_NONE || !pe->ram_as)
		return e;
	/* A device's access: the peer's RAM page itself when mapped. */
	if (ntbsw_vtd_walk(w->s, w->peer, iova, &gpa, &perm) &&
	    (gpa | ~VTD_PAGE_MASK_4K) < pe->ram_size &&
	    (!(flag & IOMMU_RO) || (perm & VTD_SL_R)) &&
	    (!(flag & IOMMU_WO) || (perm & VTD_SL_W))) {
		e.target_as = pe->ram_as;
		e.translated_addr = gpa & VTD_PAGE_MASK_4K;
		e.perm = ((perm & VTD_SL_R) ? IOMMU_RO : 0) |
			 ((perm & VTD_SL_W) ? IOMMU_WO : 0);
	}
	return e;
}

/*
 * TCG registers an UNMAP notifier on any IOMMU region a vCPU touches;
 * none is ever needed here (a vCPU's TLB never holds a RAM page of this
 * region, see the top), so it is accepted and never called.  A MAP
 * notifier (vfio, vhost) would expect notifications: refused.
 */
static int ntbsw_iova_notify_flag_changed(IOMMUMemoryRegion *iommu,
					  IOMMUNotifierFlag old,
					  IOMMUNotifierFlag new, Error **errp)
{
	(void)iommu;
	(void)old;
	if (new & IOMMU_NOTIFIER_MAP) {
		error_setg(errp, "an NTB window onto a translating peer sends "
			   "no map notifications");
		return -ENOTSUP;
	}
	return 0;
}

/*
 * TCG asks every IOMMU region for an index: here the vCPU's address space
 * the access is in (x86: SMM or not), where its translation must end.
 */
static int ntbsw_iova_attrs_to_index(IOMMUMemoryRegion *iommu,
				     MemTxAttrs attrs)
{
	int idx = current_cpu ? cpu_asidx_from_attrs(current_cpu, attrs) : 0;

	(void)iommu;
	return idx >= 0 && idx < 2 ? idx : 0;
}

static int ntbsw_iova_num_indexes(IOMMUMemoryRegion *iommu)
{
	(void)iommu;
	return 2;
}

void ntbsw_cpu_window(struct ntbsw_core *s, unsigned int w,
		      const MemoryRegionOps *ops)
{
	static uint64_t next = NTBSW_CPU_WINDOWS;

	memory_region_init_io(&s->win_cpu[w], OBJECT(s->pci), ops, s,
			      "ntb-window-cpu", s->win_size[w]);
	s->win_cpu_base[w] = next;
	next += ROUND_UP(s->win_size[w], 1ULL << 30);
	memory_region_add_subregion_overlap(get_system_memory(), s->win_cpu_base[w],
					    &s->win_cpu[w], -1);
}

MemoryRegion *ntbsw_iova_window(struct ntbsw_core *s, unsigned int p,
				unsigned int win, uint64_t bar_off,
				uint64_t target, uint64_t len)
{
	struct ntbsw_iova_window *w = g_new0(struct ntbsw_iova_window, 1);

	memory_region_init_iommu(&w->iommu, sizeof(w->iommu),
				 TYPE_NTBSW_IOVA_WINDOW, OBJECT(s->pci),
				 "ntb-peer-iova-window", len);
	w->s = s;
	w->peer = p;
	w->win = win;
	w->bar_off = bar_off;
	w->target = target;
	return MEMORY_REGION(&w->iommu);
}

static void ntbsw_iova_window_class_init(ObjectClass *klass, void *data)
{
	IOMMUMemoryRegionClass *imrc = IOMMU_MEMORY_REGION_CLASS(klass);

	(void)data;
	imrc->translate = ntbsw_iova_translate;
	imrc->notify_flag_changed = ntbsw_iova_notify_flag_changed;
	imrc->attrs_to_index = ntbsw_iova_attrs_to_index;
	imrc->num_indexes = ntbsw_iova_num_indexes;
}

static const TypeInfo ntbsw_iova_window_info = {
	.parent = TYPE_IOMMU_MEMORY_REGION,
	.name = TYPE_NTBSW_IOVA_WINDOW,
	.class_init = ntbsw_iova_window_class_init,
};

static void ntbsw_iova_register(void)
{
	type_register_static(&ntbsw_iova_window_info);
}

type_init(ntbsw_iova_register)
