// SPDX-License-Identifier: GPL-2.0
/*
 * The lender's side of a borrow: the device leaves its driver and binds to
 * smartio's own PCI driver (driver_override + bind, as an administrator
 * would through sysfs), which gives it an IOMMU domain of its own.  The
 * driver manages DMA itself (driver_managed_dma), so the IOMMU core lets
 * it replace the default domain; the borrower's DMA window maps into that
 * domain.  Release unbinds it and lets the device's own driver probe it
 * again.
 *
 * A device in use on the lender is not taken from its users unless the
 * operator says so (force_busy): unbinding pulls a mounted filesystem's
 * disk or an interface that is up from under them.
 */
#include <linux/blkdev.h>
#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/netdevice.h>

#include "sio_kmod.h"

#define SIO_PCI_DRIVER "smartio"

static bool force_busy;
module_param(force_busy, bool, 0644);
MODULE_PARM_DESC(force_busy,
		 "a borrow takes a device in use on the lender (open or mounted disk, interface up) from its users");

/*
 * Whether dev or a device below it is used: a disk someone holds open (a
 * mounted filesystem, swap, a device-mapper or md holder, any process:
 * the whole disk's openers count its partitions' too) or a network
 * interface that is up.  block_class and disk_type are not exported, so a
 * disk is known by its class and type names.
 */
static int in_use(struct device *dev, void *unused)
{
	const char *cls = dev->class ? dev->class->name : "";

	if (!strcmp(cls, "block") && dev->type &&
	    !strcmp(dev->type->name, "disk") &&
	    disk_openers(dev_to_disk(dev))) {
		dev_info(dev, "smartio: open or mounted\n");
		return -EBUSY;
	}
	if (!strcmp(cls, "net") && (to_net_dev(dev)->flags & IFF_UP)) {
		dev_info(dev, "smartio: interface up\n");
		return -EBUSY;
	}
	return device_for_each_child(dev, NULL, in_use);
}

static int lender_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct sio_kdev *kd = NULL;
	struct iommu_domain *dom;
	u32 i;
	int err;

	for (i = 0; i < sio_k.ndevs; i++)
		if (sio_k.dev[i].pdev == pdev)
			kd = &sio_k.dev[i];
	if (!kd)
		return -ENODEV;	/* bound by hand to a device we do not lend */
	dom = sio_iommu_domain_alloc(&pdev->dev);
	if (!dom) {
		pci_err(pdev, "smartio: no IOMMU domain for the lent device\n");
		return -ENODEV;
	}
	err = iommu_attach_device(dom, &pdev->dev);
	if (err) {
		pci_err(pdev, "smartio: IOMMU attach failed: %d\n", err);
		iommu_domain_free(dom);
		return err;
	}
	kd->domain = dom;
	pci_set_drvdata(pdev, kd);
	pci_info(pdev, "smartio: claimed for lending, own IOMMU domain\n");
	return 0;
}

static void lender_remove(struct pci_dev *pdev)
{
	struct sio_kdev *kd = pci_get_drvdata(pdev);

	iommu_detach_device(kd->domain, &pdev->dev);
	iommu_domain_free(kd->domain);
	kd->domain = NULL;
	pci_info(pdev, "smartio: released\n");
}

static struct pci_driver lender_driver = {
	.name = SIO_PCI_DRIVER,
	.id_table = NULL,	/* binds only through driver_override */
	.probe = lender_probe,
	.remove = lender_remove,
	.driver_managed_dma = true,
};

int sio_lender_claim(struct sio_kdev *kd)
{
	struct device *dev = &kd->pdev->dev;
	int err;

	if (kd->claimed)
		return 0;
	if (in_use(dev, NULL)) {
		if (!force_busy) {
			pci_info(kd->pdev, "smartio: in use here, not lent (force_busy=1 takes it)\n");
			return -EBUSY;
		}
		pci_warn(kd->pdev, "smartio: in use here, taken from its users (force_busy)\n");
	}
	err = sio_set_driver_override(kd->pdev, SIO_PCI_DRIVER);
	if (err)
		return err;
	device_release_driver(dev);
	err = device_driver_attach(&lender_driver.driver, dev);
	if (err || !kd->domain) {
		pci_err(kd->pdev, "smartio: cannot claim the device: %d\n", err);
		sio_lender_release(kd);
		return err ? err : -ENODEV;
	}
	kd->claimed = true;
	return 0;
}

void sio_lender_release(struct sio_kdev *kd)
{
	struct device *dev = &kd->pdev->dev;

	device_release_driver(dev);
	sio_set_driver_override(kd->pdev, "");
	kd->claimed = false;
	/* Its own driver, if any, takes it back. */
	if (device_attach(dev) < 0)
		pci_warn(kd->pdev, "smartio: no driver took the device back\n");
}

int sio_lender_init(void)
{
	return pci_register_driver(&lender_driver);
}

void sio_lender_exit(void)
{
	pci_unregister_driver(&lender_driver);
}
