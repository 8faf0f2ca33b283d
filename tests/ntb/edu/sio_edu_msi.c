// SPDX-License-Identifier: GPL-2.0
/*
 * A driver of QEMU's edu device (1234:11e8) that uses one MSI vector (the
 * device has no MSI-X), for make check-ntb's MSI part (check_msi.sh): bound
 * to a borrowed edu's shadow, it raises `raises` interrupts one at a time
 * through the device's interrupt-raise register and waits for each, so the
 * device's MSI writes must cross the NTB to this machine's CPU.  The count
 * is logged ("sio_edu_msi <bdf>: N of M MSI interrupts") and kept in the
 * read-only parameter `received`.
 */
#include <linux/completion.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>

#define EDU_ID		0x00	/* 0x010000ed */
#define EDU_IRQ_STATUS	0x24
#define EDU_IRQ_RAISE	0x60
#define EDU_IRQ_ACK	0x64

static uint raises = 16;
module_param(raises, uint, 0444);
MODULE_PARM_DESC(raises, "interrupts to raise at probe (default 16)");
static uint received;
module_param(received, uint, 0444);
MODULE_PARM_DESC(received, "interrupts received from the last device probed");

struct edu {
	void __iomem *io;
	struct completion done;
};

static irqreturn_t edu_irq(int irq, void *data)
{
	struct edu *e = data;
	u32 st = ioread32(e->io + EDU_IRQ_STATUS);

	if (!st)
		return IRQ_NONE;
	iowrite32(st, e->io + EDU_IRQ_ACK);
	complete(&e->done);
	return IRQ_HANDLED;
}

static int edu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct edu *e;
	uint i, got = 0;
	int err;

	e = devm_kzalloc(&pdev->dev, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	init_completion(&e->done);
	err = pcim_enable_device(pdev);
	if (err)
		return err;
	err = pcim_iomap_regions(pdev, BIT(0), "sio_edu_msi");
	if (err)
		return err;
	e->io = pcim_iomap_table(pdev)[0];
	/* The device's MSI write is a bus master write. */
	pci_set_master(pdev);
	err = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI);
	if (err < 0) {
		pci_err(pdev, "sio_edu_msi: no MSI vector: %d\n", err);
		return err;
	}
	err = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, 0), edu_irq, 0,
			       "sio_edu_msi", e);
	if (err) {
		pci_free_irq_vectors(pdev);
		return err;
	}
	pci_info(pdev, "sio_edu_msi: id %#x, MSI vector on irq %d\n",
		 ioread32(e->io + EDU_ID), pci_irq_vector(pdev, 0));
	for (i = 0; i < raises; i++) {
		reinit_completion(&e->done);
		iowrite32(BIT(i % 32), e->io + EDU_IRQ_RAISE);
		if (wait_for_completion_timeout(&e->done, 5 * HZ))
			got++;
	}
	received = got;
	pr_info("sio_edu_msi %s: %u of %u MSI interrupts\n", pci_name(pdev),
		got, raises);
	pci_set_drvdata(pdev, e);
	return 0;
}

static void edu_remove(struct pci_dev *pdev)
{
	devm_free_irq(&pdev->dev, pci_irq_vector(pdev, 0),
		      pci_get_drvdata(pdev));
	pci_free_irq_vectors(pdev);
}

static const struct pci_device_id edu_ids[] = {
	{ PCI_DEVICE(0x1234, 0x11e8) },
	{ }
};
MODULE_DEVICE_TABLE(pci, edu_ids);

static struct pci_driver edu_driver = {
	.name = "sio_edu_msi",
	.id_table = edu_ids,
	.probe = edu_probe,
	.remove = edu_remove,
};
module_pci_driver(edu_driver);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("QEMU edu device with one MSI vector: smartio's MSI test");
