// SPDX-License-Identifier: GPL-2.0
/*
 * smartio.ko: builds the registry of this machine's fabric and serves the
 * core.  fabric=loopback (default): host0 with the devices it lends, host1
 * behind the loopback adapter, both up.  fabric=ntb: this machine is node
 * node= of nodes= (host0, host1, ...) and every other node is another
 * machine behind an NTB (sio_ntb.c), up while smartio_ntb.ko says so.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "sio_kmod.h"

struct sio_kernel sio_k;

void sio_k_lock(void)
{
	mutex_lock(&sio_k.lock);
	while (sio_k.parked) {
		mutex_unlock(&sio_k.lock);
		wait_event(sio_k.park_wq, !READ_ONCE(sio_k.parked));
		mutex_lock(&sio_k.lock);
	}
}

void sio_k_unlock(void)
{
	mutex_unlock(&sio_k.lock);
}

static char *devices;
module_param(devices, charp, 0444);
MODULE_PARM_DESC(devices,
		 "PCI functions host0 lends (\"0000:00:04.0,...\"); default: every NVMe controller");

static char *fabric = "loopback";
module_param(fabric, charp, 0444);
MODULE_PARM_DESC(fabric,
		 "loopback (host0 and host1 on this machine) or ntb (the other node behind an NTB, through smartio_ntb.ko)");

static uint node;
module_param(node, uint, 0444);
MODULE_PARM_DESC(node, "fabric=ntb: this machine's node id, 0 (host0) .. nodes - 1");

static uint nodes = SIO_K_NODES;
module_param(nodes, uint, 0444);
MODULE_PARM_DESC(nodes, "fabric=ntb: how many nodes the fabric has, 2 .. 4");

static uint luts;
module_param(luts, uint, 0444);
MODULE_PARM_DESC(luts,
		 "fabric=ntb: look-up-table entries per peer this machine lends and borrows with (default 0: all the NTB offers; the rest stay free for other NTB clients)");

static uint luts_per_node;
module_param(luts_per_node, uint, 0444);
MODULE_PARM_DESC(luts_per_node,
		 "fabric=ntb: look-up-table entries of this machine any one other node may hold (its borrows' windows, segment and peer mappings for it; default 0: no limit)");

static bool wanted(struct pci_dev *pdev)
{
	const char *p = devices, *name = pci_name(pdev);
	size_t n = strlen(name);

	if (!p || !*p)
		return pdev->class == PCI_CLASS_STORAGE_EXPRESS;
	while (*p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
		p = strchrnul(p, ',');
		if (*p)
			p++;
	}
	return false;
}

/*
 * Over an NTB every machine names its own devices, so a name carries its
 * node ("host2-nvme0"): the cluster's /smartio/dev lists them all.
 */
static void fill_device(struct sio_topo_device *td, struct pci_dev *pdev,
			u32 nvme)
{
	char prefix[12] = "";
	int b;

	if (sio_k.fab->separate)
		snprintf(prefix, sizeof(prefix), "host%u-", sio_k.self);
	if (pdev->class == PCI_CLASS_STORAGE_EXPRESS)
		snprintf(td->name, sizeof(td->name), "%snvme%u", prefix, nvme);
	else
		snprintf(td->name, sizeof(td->name), "%spci%02x%02x%x", prefix,
			 pdev->bus->number, PCI_SLOT(pdev->devfn),
			 PCI_FUNC(pdev->devfn));
	td->node = sio_k.self;
	strscpy(td->bdf, pci_name(pdev), sizeof(td->bdf));
	td->vendor = pdev->vendor;
	td->device = pdev->device;
	td->subsys_vendor = pdev->subsystem_vendor;
	td->subsys_device = pdev->subsystem_device;
	td->class_code = pdev->class;
	td->revision = pdev->revision;
	td->config_size = pdev->cfg_size;
	td->model = SIO_MODEL_GENERIC;
	for (b = 0; b < PCI_STD_NUM_BARS; b++)
		td->bar[b].size = sio_k_bar(pdev, b, &td->bar[b].flags);
}

u64 sio_k_bar(struct pci_dev *pdev, int b, u32 *flags)
{
	unsigned long f = pci_resource_flags(pdev, b);

	*flags = 0;
	/* Memory BARs only: I/O ports do not cross an NTB. */
	if (!(f & IORESOURCE_MEM) || !pci_resource_len(pdev, b))
		return 0;
	if (f & IORESOURCE_MEM_64)
		*flags |= SIO_BAR_MEM64;
	if (f & IORESOURCE_PREFETCH)
		*flags |= SIO_BAR_PREFETCH;
	return pci_resource_len(pdev, b);
}

/*
 * Separate registries: every machine lays out the same device slots,
 * SIO_K_MAX_DEVS per node in node order, so a device has one index (and
 * fdid) in every registry; the other nodes' slots wait for their device
 * tables.
 */
static void separate_slots(struct sio_topo_device *tdev)
{
	u32 n, k;

	for (n = 0; n < sio_k.nnodes; n++)
		for (k = 0; k < SIO_K_MAX_DEVS; k++) {
			tdev[n * SIO_K_MAX_DEVS + k].node = n;
			tdev[n * SIO_K_MAX_DEVS + k].absent = 1;
		}
}

static int build_registry(const struct sio_k_geometry *geo)
{
	static struct sio_topo_node tnodes[SIO_K_NTB_NODES];
	static struct sio_topo_adapter adapters[SIO_K_NTB_NODES];
	static const struct sio_reg_limits lim = {
		.max_borrows = 16, .max_segments = SIO_K_MAX_SEGS, .max_attach = 16,
		.max_segdma = 16, .max_peermap = 8,
	};
	struct sio_topo_device *tdev;
	struct sio_topology t = {
		.nnodes = sio_k.nnodes, .nadapters = sio_k.nnodes,
		.nodes = tnodes, .adapters = adapters,
	};
	struct pci_dev *pdev = NULL;
	u32 i, nvf, nvme = 0, first = 0, slots = SIO_K_MAX_DEVS;
	u64 size;
	int err, b;

	/* Every node reaches every other one through its adapter. */
	for (i = 0; i < sio_k.nnodes; i++) {
		snprintf(tnodes[i].name, sizeof(tnodes[i].name), "host%u", i);
		tnodes[i].id = i;
		tnodes[i].ram = SIO_K_SEG_RAM;
		strscpy(adapters[i].name, sio_k.fab->adapter,
			sizeof(adapters[i].name));
		adapters[i].node = i;
		adapters[i].peers = GENMASK_ULL(sio_k.nnodes - 1, 0) & ~BIT_ULL(i);
		adapters[i].window = geo->window;
		adapters[i].luts = geo->luts;
		/* This machine's own share (luts=): the same slot size. */
		if (i == sio_k.self && geo->own_luts) {
			adapters[i].window = geo->window / geo->luts *
					     geo->own_luts;
			adapters[i].luts = geo->own_luts;
		}
		if (i == sio_k.self)
			adapters[i].share = min(geo->share, adapters[i].luts);
		adapters[i].requesters = 32;
		adapters[i].reserved = 2;
	}
	if (sio_k.fab->separate) {
		slots = sio_k.nnodes * SIO_K_MAX_DEVS;
		first = sio_k.self * SIO_K_MAX_DEVS;
	}
	tdev = kcalloc(slots, sizeof(*tdev), GFP_KERNEL);
	if (!tdev)
		return -ENOMEM;
	if (sio_k.fab->separate)
		separate_slots(tdev);
	for_each_pci_dev(pdev) {
		struct sio_kdev *kd = &sio_k.dev[sio_k.ndevs];

		if (pdev->hdr_type != PCI_HEADER_TYPE_NORMAL || !wanted(pdev))
			continue;
		if (sio_k.ndevs == SIO_K_MAX_DEVS) {
			pci_dev_put(pdev);
			break;
		}
		kd->index = first + sio_k.ndevs;
		tdev[kd->index].absent = 0;
		fill_device(&tdev[kd->index], pdev, nvme);
		if (pdev->class == PCI_CLASS_STORAGE_EXPRESS)
			nvme++;
		kd->pdev = pci_dev_get(pdev);
		sio_k.ndevs++;
		/* Its VFs' slots follow it, absent until enabled. */
		nvf = sio_sriov_slots(tdev, pdev, kd->index,
				      SIO_K_MAX_DEVS - sio_k.ndevs);
		for (i = 0; i < nvf; i++, sio_k.ndevs++)
			sio_k.dev[sio_k.ndevs].index = first + sio_k.ndevs;
	}
	t.ndevices = sio_k.fab->separate ? slots : sio_k.ndevs;
	t.devices = tdev;
	size = sio_registry_size(&t, &lim);
	err = size ? 0 : -E2BIG;
	if (!err) {
		sio_k.reg = vzalloc(size);
		err = sio_k.reg ? 0 : -ENOMEM;
	}
	if (!err)
		err = sio_registry_init(sio_k.reg, size, &t, &lim);
	kfree(tdev);
	if (err)
		return err;
	/* The core placed BARs in its own map; these are the real ones. */
	for (i = 0; i < sio_k.ndevs; i++) {
		struct sio_device *d = sio_dev(sio_k.reg, sio_k.dev[i].index);

		if (!sio_k.dev[i].pdev)
			continue;	/* a VF not enabled */
		for (b = 0; b < SIO_MAX_BARS; b++)
			if (d->bar[b].size)
				d->bar[b].addr =
					pci_resource_start(sio_k.dev[i].pdev, b);
	}
	return 0;
}

static void put_devices(void)
{
	u32 i;

	for (i = 0; i < sio_k.ndevs; i++)
		pci_dev_put(sio_k.dev[i].pdev);
	sio_k.ndevs = 0;
}

static void remove_views(void)
{
	u32 i, n;

	for (i = 0; i < sio_k.ndevs; i++)
		for (n = 0; n < SIO_K_NODES; n++) {
			sio_view_remove(sio_k.dev[i].view[n]);
			sio_k.dev[i].view[n] = NULL;
		}
}

/* host0's own devices: its views (and their BARs) exist from the start. */
static int lender_views(void)
{
	struct sio_view *v;
	u32 i;

	for (i = 0; i < sio_k.ndevs; i++) {
		if (!sio_k.dev[i].pdev)
			continue;	/* a VF not enabled */
		v = sio_view_add(sio_k.dev[i].index, sio_k.self);
		if (IS_ERR(v)) {
			remove_views();
			return PTR_ERR(v);
		}
		sio_k.dev[i].view[SIO_K_LENDER] = v;
	}
	return 0;
}

static int __init sio_init(void)
{
	struct sio_k_geometry geo = {
		.window = SIO_K_WINDOW, .luts = SIO_K_LUTS,
	};
	int err;

	mutex_init(&sio_k.lock);
	init_waitqueue_head(&sio_k.park_wq);
	sio_k.nnodes = SIO_K_NODES;
	sio_k.fab = &sio_kfab_loopback;
	if (!strcmp(fabric, "ntb")) {
		if (nodes < 2 || nodes > SIO_K_NTB_NODES || node >= nodes)
			return -EINVAL;
		sio_k.fab = &sio_kfab_ntb;
		sio_k.self = node;
		sio_k.nnodes = nodes;
	} else if (strcmp(fabric, "loopback")) {
		return -EINVAL;
	}
	/* Over an NTB the adapter's slots are the hardware's LUT entries. */
	if (sio_k.fab->probe) {
		err = sio_k.fab->probe(&geo, luts, luts_per_node);
		if (err)
			return err;
	}
	err = build_registry(&geo);
	if (err)
		goto fail;
	sio_k.core.reg = sio_k.reg;
	sio_k.core.ops = sio_k.fab->plat;
	sio_k.core.plat = &sio_k;
	sio_k.core.flags = sio_k.fab->separate ? SIO_CORE_SEPARATE : 0;
	sio_k_lock();
	sio_core_node_up(&sio_k.core, sio_k.self);
	/* Separate registries' other nodes are up when their machines say. */
	if (!sio_k.fab->separate)
		sio_core_node_up(&sio_k.core, SIO_K_BORROWER);
	sio_k_unlock();
	err = sio_cdev_init();
	if (err)
		goto fail;
	err = sio_lender_init();
	if (err)
		goto fail_cdev;
	err = lender_views();
	if (err)
		goto fail_lender;
	err = sio_fabric_init();
	if (err)
		goto fail_views;
	err = sio_debugfs_init();
	if (err)
		goto fail_fabric;
	if (sio_k.fab->start) {
		err = sio_k.fab->start();
		if (err)
			goto fail_debugfs;
	}
	err = sio_genl_init();
	if (err)
		goto fail_start;
	sio_k.fab->announce();
	return 0;
fail_start:
	if (sio_k.fab->stop)
		sio_k.fab->stop();
fail_debugfs:
	sio_debugfs_exit();
fail_fabric:
	sio_fabric_exit();
fail_views:
	remove_views();
fail_lender:
	sio_lender_exit();
fail_cdev:
	sio_cdev_exit();
fail:
	vfree(sio_k.reg);
	put_devices();
	if (sio_k.fab->unprobe)
		sio_k.fab->unprobe();
	return err;
}

static void __exit sio_exit(void)
{
	u32 i;

	sio_genl_exit();
	sio_debugfs_exit();
	if (sio_k.fab->stop)
		sio_k.fab->stop();
	sio_fabric_exit();
	/* Shadows go and devices return to their drivers first. */
	for (i = 0; i < sio_k.ndevs; i++)
		if (sio_k.dev[i].shadow)
			sio_k.fab->give_back(sio_k.dev[i].index,
					     SIO_K_BORROWER);
	remove_views();
	sio_lender_exit();
	sio_k_lock();
	/* Every borrow ends before the registry goes. */
	for (i = 0; i < sio_k.nnodes; i++)
		sio_core_node_down(&sio_k.core, i);
	/* Segments left behind go with the registry. */
	for (i = 0; i < SIO_K_MAX_SEGS; i++) {
		sio_seg_dev_remove(sio_k.seg[i]);
		sio_k.seg[i] = NULL;
	}
	sio_k_unlock();
	/*
	 * Devices still lent return to their drivers now, without the lock
	 * (fabric=ntb's lend_claim leaves that to sio_ntb_lend_settle).
	 */
	for (i = 0; i < sio_k.ndevs; i++)
		if (sio_k.dev[i].claimed)
			sio_lender_release(&sio_k.dev[i]);
	/* No borrow is left: the VFs smartio enabled go. */
	sio_sriov_exit();
	vfree(sio_k.reg);
	put_devices();
	sio_cdev_exit();
}

module_init(sio_init);
module_exit(sio_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("SmartIO device lending over NTBs: the portable core on Linux");
