// SPDX-License-Identifier: GPL-2.0
/*
 * SR-IOV on the lender (SmartIO section 3.1, MPIOV section III): a lent
 * physical function's virtual functions are devices of their own, each
 * with its own requester id, so each can be lent to another node and the
 * lender's IOMMU confines each one's DMA to its own borrower's window.
 *
 * The core wants a PF's VF slots right after it (lib/core/sriov.c), so
 * when the registry is built a PF with an SR-IOV capability gets the
 * next min(TotalVFs, slots left) slots, named <pf>v<k> and absent.
 * Writing sriov_numvfs (SRIOV_SET) runs the core's checks, then
 * kplat_sriov_set, which asks for the change (-EINPROGRESS): sio_k_sriov
 * has the PF's driver enable the VFs the way Linux's sriov_numvfs does
 * it (device lock, the driver's sriov_configure) without sio_k.lock,
 * since adding and removing functions probes and unbinds drivers, whose
 * work may take that lock (a borrowed NVMe's config cycles, sio_shadow.c),
 * then sends SRIOV_SET again: the core checks again, the VF functions the
 * PCI core added are found and their records filled in (bdf, requester
 * id, ids, BARs), and only then does the core make them present.
 * Disabling is the reverse; the core refuses it (EBUSY) while a VF is
 * borrowed or mapped, and sio_k_sriov logs which node holds it.  While
 * the VFs change, the PF is not lent (sriov_busy).
 * The lender's views of the VFs (their BAR character devices) are added
 * and removed by sio_k_sriov outside sio_k.lock, since adding a view
 * takes that lock.
 *
 * Whether the lender's own drivers bind the new VFs is the PF's
 * sriov_drivers_autoprobe, as with sysfs; a VF that is lent needs none
 * (the borrow takes it from its driver, as any device).  VFs enabled
 * through sysfs before smartio.ko loads are devices like any other (lent
 * when chosen as any function is), and their PF offers no sriov_numvfs;
 * VFs enabled through sysfs afterwards are not in the registry.
 *
 *   echo 2 > /smartio/dev/host0-nvme0/sriov_numvfs   # host0-nvme0v0, v1
 *   echo host1 > /smartio/dev/host0-nvme0v0/lend
 *   echo 0 > /smartio/dev/host0-nvme0/sriov_numvfs   # EBUSY while lent
 */

#include "sio_kmod.h"

/* The kdev of registry slot dev, enabled or not (sio_kdev_of: enabled). */
static struct sio_kdev *kdev_slot(u32 dev)
{
	u32 i;

	for (i = 0; i < sio_k.ndevs; i++)
		if (sio_k.dev[i].index == dev)
			return &sio_k.dev[i];
	return NULL;
}

/* TotalVFs of pdev's SR-IOV capability, the VF Device ID in *vf_device. */
static u16 total_vfs(struct pci_dev *pdev, u16 *vf_device)
{
	int pos = pci_find_ext_capability(pdev, PCI_EXT_CAP_ID_SRIOV);
	u16 total = 0;

	if (!pos || !pdev->is_physfn)
		return 0;
	pci_read_config_word(pdev, pos + PCI_SRIOV_TOTAL_VF, &total);
	pci_read_config_word(pdev, pos + PCI_SRIOV_VF_DID, vf_device);
	return total;
}

u32 sio_sriov_slots(struct sio_topo_device *tdev, struct pci_dev *pf,
		    u32 pf_index, u32 room)
{
	struct sio_topo_device *ptd = &tdev[pf_index], *td;
	char pf_name[SIO_TOPO_NAME];
	u16 vf_device = 0;
	u32 k, n = min_t(u32, total_vfs(pf, &vf_device), room);

	if (n && pci_num_vf(pf)) {
		/* for_each_pci_dev finds them: devices like any other. */
		pci_info(pf, "smartio: VFs enabled before smartio.ko: not offered through sriov_numvfs\n");
		return 0;
	}
	ptd->sriov_total = n;
	/* A copy: gcc cannot tell that tdev's slots do not overlap. */
	strscpy(pf_name, ptd->name, sizeof(pf_name));
	for (k = 0; k < n; k++) {
		int devfn = pci_iov_virtfn_devfn(pf, k);

		td = &tdev[pf_index + 1 + k];
		*td = *ptd;
		td->sriov_total = 0;
		td->vf = 1;
		td->pf = pf_index;
		td->device = vf_device;
		memset(td->bar, 0, sizeof(td->bar));
		snprintf(td->name, sizeof(td->name), "%sv%u", pf_name, k);
		/* Where Linux will put it; the VF's own once enabled. */
		snprintf(td->bdf, sizeof(td->bdf), "%04x:%02x:%02x.%d",
			 pci_domain_nr(pf->bus), pf->bus->number,
			 PCI_SLOT(devfn), PCI_FUNC(devfn));
	}
	if (n)
		pci_info(pf, "smartio: %u of %u VFs can be lent (slots %u-%u)\n",
			 n, total_vfs(pf, &vf_device), pf_index + 1,
			 pf_index + n);
	return n;
}

/*
 * What the PF's driver says to num VFs, as sriov_numvfs_store() asks it:
 * under the device lock, 0 or an errno.
 */
static int configure(struct pci_dev *pf, u16 num)
{
	int ret;

	device_lock(&pf->dev);
	if (!pf->driver || !pf->driver->sriov_configure) {
		pci_info(pf, "smartio: no driver that enables VFs is bound to the PF\n");
		ret = -EOPNOTSUPP;
	} else {
		ret = pf->driver->sriov_configure(pf, num);
		if (ret >= 0 && ret != num) {
			pci_warn(pf, "smartio: %u VFs asked, the driver enabled %d\n",
				 num, ret);
			if (ret)
				pf->driver->sriov_configure(pf, 0);
			ret = -EIO;
		}
	}
	device_unlock(&pf->dev);
	return ret < 0 ? ret : 0;
}

/* The PF's VF k as the PCI core added it, referenced, or NULL. */
static struct pci_dev *find_vf(struct pci_dev *pf, u16 k)
{
	struct pci_dev *vf = NULL;

	while ((vf = pci_get_device(pf->vendor, PCI_ANY_ID, vf)))
		if (vf->is_virtfn && vf->physfn == pf &&
		    pci_iov_vf_id(vf) == k)
			return vf;
	return NULL;
}

/* A VF's record as its function is: what the core lends and describes. */
static void vf_record(struct sio_device *d, struct pci_dev *vf)
{
	int b;

	strscpy(d->bdf, pci_name(vf), sizeof(d->bdf));
	d->rid = pci_dev_id(vf);
	d->vendor = vf->vendor;
	d->device = vf->device;
	d->subsys_vendor = vf->subsystem_vendor;
	d->subsys_device = vf->subsystem_device;
	d->class_code = vf->class;
	d->revision = vf->revision;
	d->config_size = vf->cfg_size;
	memset(d->bar, 0, sizeof(d->bar));
	for (b = 0; b < PCI_STD_NUM_BARS && b < SIO_MAX_BARS; b++) {
		d->bar[b].size = sio_k_bar(vf, b, &d->bar[b].flags);
		if (d->bar[b].size)
			d->bar[b].addr = pci_resource_start(vf, b);
	}
}

/* The VFs' kdevs let go of their functions (kept in ->vf_put until put). */
static void vfs_drop(u32 pf, u16 n)
{
	struct sio_kdev *kd;
	u16 k;

	for (k = 0; k < n; k++) {
		kd = kdev_slot(pf + 1 + k);
		if (!kd || !kd->pdev)
			continue;
		kd->vf_put = kd->pdev;
		kd->pdev = NULL;
		kd->vcfg_ready = false;
	}
}

/* A refused disable: the VFs' kdevs have their functions again. */
static void vfs_keep(u32 pf, u16 n)
{
	struct sio_kdev *kd;
	u16 k;

	for (k = 0; k < n; k++) {
		kd = kdev_slot(pf + 1 + k);
		if (kd && kd->vf_put) {
			kd->pdev = kd->vf_put;
			kd->vf_put = NULL;
		}
	}
}

int sio_sriov_set(u32 pf, u16 num)
{
	struct sio_kdev *kd = sio_kdev_of(pf);
	struct sio_device *d;
	struct pci_dev *vf;
	u16 k;

	lockdep_assert_held(&sio_k.lock);
	if (!kd)
		return -ENXIO;
	d = sio_dev(sio_k.reg, pf);
	/* The PF's driver changes its VFs first, without the lock. */
	if (pci_num_vf(kd->pdev) != num) {
		if (!num)
			vfs_drop(pf, d->sriov_num);
		kd->sriov_busy = true;
		return -EINPROGRESS;
	}
	for (k = 0; k < num; k++) {
		struct sio_kdev *vkd = kdev_slot(pf + 1 + k);

		vf = find_vf(kd->pdev, k);
		if (!vkd || !vf) {
			pci_err(kd->pdev, "smartio: VF %u not found after enabling\n",
				k);
			pci_dev_put(vf);
			vfs_drop(pf, k);
			return -EIO;	/* sio_k_sriov disables them */
		}
		vkd->pdev = vf;
		vkd->vcfg_ready = false;
		vf_record(sio_dev(sio_k.reg, pf + 1 + k), vf);
	}
	return 0;
}

/* Who holds the PF's VFs, for the log of a refused disable. */
static void say_holders(u32 pf)
{
	struct sio_registry *r = sio_k.reg;
	struct sio_device *d = sio_dev(r, pf), *v;
	u32 k, n;

	for (k = 0; k < d->sriov_num; k++) {
		v = sio_dev(r, pf + 1 + k);
		for (n = 0; n < r->nnodes; n++)
			if (v->borrowers & BIT_ULL(n))
				pr_info("smartio: %s: VF %s is borrowed by %s: VFs stay enabled\n",
					d->name, v->name, sio_node(r, n)->name);
	}
}

/*
 * Views of the VFs: removed for dropped ones and, unless unloading (add
 * false), added for enabled ones.
 */
static void sync_views(bool add)
{
	struct sio_view *v;
	u32 i;

	for (i = 0; i < sio_k.ndevs; i++) {
		struct sio_kdev *kd = &sio_k.dev[i];

		if (kd->vf_put) {
			sio_view_remove(kd->view[SIO_K_LENDER]);
			kd->view[SIO_K_LENDER] = NULL;
			pci_dev_put(kd->vf_put);
			kd->vf_put = NULL;
		}
		if (add && kd->pdev && !kd->view[SIO_K_LENDER]) {
			v = sio_view_add(kd->index, sio_k.self);
			if (IS_ERR(v))
				pci_warn(kd->pdev, "smartio: no view of the VF: %ld\n",
					 PTR_ERR(v));
			else
				kd->view[SIO_K_LENDER] = v;
		}
	}
}

static int sriov_send(u32 pf, u64 num)
{
	struct sio_k_req *q = sio_k_req_new(SIO_CMD_SRIOV_SET);

	if (!q)
		return -ENOMEM;
	sio_msg_put_u32(&q->m, SIO_A_DEV, sio_dev(sio_k.reg, pf)->fdid);
	sio_msg_put_u64(&q->m, SIO_A_SIZE, num);
	return sio_k_req_send(q);
}

/*
 * The PF's driver asked for num VFs between the core's two passes
 * (sio_sriov_set), without sio_k.lock; undone when the second refuses.
 */
static int sriov_change(u32 pf, u16 num)
{
	struct sio_kdev *kd;
	int err, changed;

	sio_k_lock();
	kd = sio_kdev_of(pf);
	sio_k_unlock();
	if (!kd)
		return -ENXIO;
	changed = configure(kd->pdev, num);
	err = changed ? changed : sriov_send(pf, num);
	sio_k_lock();
	if (changed && !num)
		vfs_keep(pf, sio_dev(sio_k.reg, pf)->sriov_num);
	kd->sriov_busy = false;
	sio_k_unlock();
	if (err && !changed && num)
		configure(kd->pdev, 0);
	else if (err && !changed)
		pci_warn(kd->pdev, "smartio: VFs disabled, but the core refused it: %d\n",
			 err);
	return err;
}

int sio_k_sriov(u32 pf, u64 num)
{
	int err = sriov_send(pf, num);

	if (err == -EINPROGRESS)
		err = sriov_change(pf, num);
	sio_k_lock();
	if (err == -EBUSY && sio_dev(sio_k.reg, pf)->node == sio_k.self)
		say_holders(pf);
	sio_k_unlock();
	sync_views(true);
	return err;
}

void sio_sriov_exit(void)
{
	struct sio_kdev *kd;
	u32 i;

	for (i = 0; i < sio_k.ndevs; i++) {
		kd = &sio_k.dev[i];
		if (kd->pdev && kd->pdev->is_physfn &&
		    sio_dev(sio_k.reg, kd->index)->sriov_num) {
			sio_k_lock();
			vfs_drop(kd->index, sio_dev(sio_k.reg, kd->index)->sriov_num);
			sio_k_unlock();
			configure(kd->pdev, 0);
		}
	}
	sync_views(false);
}
