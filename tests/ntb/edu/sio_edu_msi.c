// SPDX-License-Identifier: GPL-2.0
/*
 * A driver of QEMU's edu device (1234:11e8) for make check-ntb's MSI and
 * peer-to-peer part (check_msi.sh), bound to a borrowed edu's shadow.
 *  - MSI: the device has one MSI vector and no MSI-X; the driver raises
 *    `raises` interrupts one at a time through the device's interrupt-raise
 *    register and waits for each, so the device's MSI writes must cross
 *    the NTB to this machine's CPU.  Logged ("sio_edu_msi <bdf>: N of M
 *    MSI interrupts") and kept in the read-only parameter `received`.
 *  - dma_map_resource, as an unmodified driver doing peer-to-peer calls
 *    it: for each PCI function named in `p2p` (comma-separated, on this
 *    machine: another shadow or a local device), BAR `p2p_bar` is mapped
 *    for the edu device, whose DMA engine copies a 2 KiB pattern from RAM
 *    into its buffer and from there to that address; the driver reads the
 *    BAR back through its CPU mapping.  Logged ("sio_edu_msi <bdf>: p2p
 *    <target> BAR<n> ...: equal" or "differs" or the error) and counted in
 *    `p2p_equal`.  The QEMU device needs dma_mask=0xffffffffffffffff (its
 *    default masks addresses to 28 bits).
 *  - The borrower's IOMMU fence (check_iommu.sh), when `fence_base` is
 *    the device's address of the borrow's DMA window (debugfs state): the
 *    device writes where a window onto RAM from address 0 would put a
 *    page this driver never mapped (fence_base + its physical address),
 *    then into a page mapped with dma_map_single (which must land), and
 *    again into it after dma_unmap_single.  Each page holds a canary
 *    around the writes.  Logged ("sio_edu_msi <bdf>: fence never-mapped:
 *    canary unchanged", "fence mapped: landed", "fence unmapped: canary
 *    unchanged", or what happened instead) and counted in `fence_ok`.
 *    Last, a write to device address EDU_OUTSIDE, in none of its windows,
 *    which the lender's IOMMU must refuse (the lender checks its log).
 *  - A write to `dma_to`, a device address the test got elsewhere (a
 *    segment mapped for the device, check_iommu.sh): 2 KiB of "sio_edu_msi
 *    DMA " repeated.  Logged ("sio_edu_msi <bdf>: dma_to <addr>: 2048
 *    bytes written (0)").
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>

#define EDU_ID		0x00	/* 0x010000ed */
#define EDU_IRQ_STATUS	0x24
#define EDU_IRQ_RAISE	0x60
#define EDU_IRQ_ACK	0x64
#define EDU_DMA_SRC	0x80
#define EDU_DMA_DST	0x88
#define EDU_DMA_COUNT	0x90
#define EDU_DMA_CMD	0x98
#define EDU_DMA_RUN	0x1
#define EDU_DMA_TO_PCI	0x2
#define EDU_DMA_BUF	0x40000	/* the device's 4 KiB buffer */
#define EDU_DMA_SIZE	4096
/*
 * Bytes per DMA run: QEMU 7.2's range check refuses a run that ends at
 * the buffer's end (hw_error: the machine stops), so half of it.
 */
#define EDU_XFER	2048

static uint raises = 16;
module_param(raises, uint, 0444);
MODULE_PARM_DESC(raises, "interrupts to raise at probe (default 16)");
static uint received;
module_param(received, uint, 0444);
MODULE_PARM_DESC(received, "interrupts received from the last device probed");
static char *p2p;
module_param(p2p, charp, 0444);
MODULE_PARM_DESC(p2p, "PCI functions whose BAR p2p_bar the device writes into");
static uint p2p_bar;
module_param(p2p_bar, uint, 0444);
MODULE_PARM_DESC(p2p_bar, "the BAR of the p2p functions (default 0)");
static uint p2p_equal;
module_param(p2p_equal, uint, 0444);
MODULE_PARM_DESC(p2p_equal, "p2p targets that read back what the device wrote");

static unsigned long long fence_base;
module_param(fence_base, ullong, 0444);
MODULE_PARM_DESC(fence_base, "the device's address of the DMA window: run the fence checks");
static unsigned long long dma_to;
module_param(dma_to, ullong, 0444);
MODULE_PARM_DESC(dma_to, "a device address the device's DMA engine writes 2 KiB of text to");
static uint fence_ok;
module_param(fence_ok, uint, 0444);
MODULE_PARM_DESC(fence_ok, "fence checks that held (of 3)");

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

/* One run of the DMA engine: 0, or -ETIMEDOUT after 5 s. */
static int edu_dma(struct edu *e, u64 src, u64 dst, bool to_pci)
{
	int ms;

	writeq(src, e->io + EDU_DMA_SRC);
	writeq(dst, e->io + EDU_DMA_DST);
	writeq(EDU_XFER, e->io + EDU_DMA_COUNT);
	writeq(EDU_DMA_RUN | (to_pci ? EDU_DMA_TO_PCI : 0),
	       e->io + EDU_DMA_CMD);
	for (ms = 0; ms < 5000; ms += 10) {
		if (!(readq(e->io + EDU_DMA_CMD) & EDU_DMA_RUN))
			return 0;
		msleep(20);
	}
	return -ETIMEDOUT;
}

/*
 * BAR p2p_bar of the function named `name` mapped for the device with
 * dma_map_resource, written by its DMA engine with src's pattern, read
 * back through this CPU's mapping: 0 when equal.
 */
static int edu_p2p(struct pci_dev *pdev, struct edu *e, const char *name,
		   const u8 *pattern, dma_addr_t src)
{
	unsigned int dom, bus, slot, fn;
	struct pci_dev *t;
	dma_addr_t addr;
	phys_addr_t phys;
	void __iomem *io;
	u8 *back;
	int err;

	if (sscanf(name, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4 ||
	    p2p_bar >= PCI_STD_NUM_BARS)
		return -EINVAL;
	t = pci_get_domain_bus_and_slot(dom, bus, PCI_DEVFN(slot, fn));
	if (!t)
		return -ENODEV;
	phys = pci_resource_start(t, p2p_bar);
	err = -EINVAL;
	if (pci_resource_len(t, p2p_bar) < EDU_DMA_SIZE)
		goto put;
	addr = dma_map_resource(&pdev->dev, phys, EDU_DMA_SIZE,
				DMA_BIDIRECTIONAL, 0);
	err = -EIO;
	if (dma_mapping_error(&pdev->dev, addr))
		goto put;
	back = kmalloc(EDU_DMA_SIZE, GFP_KERNEL);
	io = ioremap(phys, EDU_DMA_SIZE);
	err = back && io ? 0 : -ENOMEM;
	if (!err)
		err = edu_dma(e, src, EDU_DMA_BUF, false);
	if (!err)
		err = edu_dma(e, EDU_DMA_BUF, addr, true);
	if (!err) {
		memcpy_fromio(back, io, EDU_XFER);
		err = memcmp(back, pattern, EDU_XFER) ? -EILSEQ : 0;
	}
	pr_info("sio_edu_msi %s: p2p %s BAR%u %pa at device address %pad: %s (%d)\n",
		pci_name(pdev), name, p2p_bar, &phys, &addr,
		err ? "differs" : "equal", err);
	if (io)
		iounmap(io);
	kfree(back);
	dma_unmap_resource(&pdev->dev, addr, EDU_DMA_SIZE, DMA_BIDIRECTIONAL,
			   0);
put:
	pci_dev_put(t);
	return err;
}

/* Every function named in p2p. */
static void edu_p2p_all(struct pci_dev *pdev, struct edu *e)
{
	char *list, *pos, *name;
	dma_addr_t src;
	u8 *pattern;
	int i, err;

	pattern = dma_alloc_coherent(&pdev->dev, EDU_DMA_SIZE, &src,
				     GFP_KERNEL);
	list = kstrdup(p2p, GFP_KERNEL);
	if (!pattern || !list) {
		pr_err("sio_edu_msi %s: p2p: no memory\n", pci_name(pdev));
		goto out;
	}
	for (i = 0; i < EDU_DMA_SIZE; i++)
		pattern[i] = (u8)(i * 7 + 0x5a);
	pos = list;
	while ((name = strsep(&pos, ",")) != NULL) {
		if (!*name)
			continue;
		err = edu_p2p(pdev, e, name, pattern, src);
		if (!err)
			p2p_equal++;
		else
			pr_err("sio_edu_msi %s: p2p %s: %d\n", pci_name(pdev),
			       name, err);
	}
out:
	kfree(list);
	if (pattern)
		dma_free_coherent(&pdev->dev, EDU_DMA_SIZE, pattern, src);
}

#define EDU_CANARY 0xc3
#define EDU_OUTSIDE 0x100000	/* below every window the lender maps */

static bool canary_kept(const u8 *p)
{
	return !memchr_inv(p, EDU_CANARY, EDU_XFER);
}

/*
 * The fence: the device's writes into a page never mapped for it, into a
 * mapped one, into it after the unmap.  The pattern is loaded into the
 * device's buffer from src first.
 */
static void edu_fence(struct pci_dev *pdev, struct edu *e, dma_addr_t src,
		      const u8 *pattern)
{
	struct page *low = alloc_page(GFP_KERNEL | GFP_DMA);
	u8 *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	const char *name = pci_name(pdev);
	phys_addr_t phys;
	dma_addr_t addr;
	int err;

	if (!low || !buf || edu_dma(e, src, EDU_DMA_BUF, false)) {
		pr_err("sio_edu_msi %s: fence: no memory or no DMA\n", name);
		goto out;
	}
	/* Where an identity window would lead: a page below 16 MiB. */
	phys = page_to_phys(low);
	memset(page_address(low), EDU_CANARY, PAGE_SIZE);
	err = edu_dma(e, EDU_DMA_BUF, fence_base + phys, true);
	msleep(100);
	pr_info("sio_edu_msi %s: fence never-mapped %#llx (page %pa): canary %s (%d)\n",
		name, fence_base + phys, &phys,
		canary_kept(page_address(low)) ? "unchanged" : "changed", err);
	if (!err && canary_kept(page_address(low)))
		fence_ok++;
	memset(buf, EDU_CANARY, PAGE_SIZE);
	addr = dma_map_single(&pdev->dev, buf, PAGE_SIZE, DMA_FROM_DEVICE);
	if (dma_mapping_error(&pdev->dev, addr)) {
		pr_err("sio_edu_msi %s: fence: dma_map_single failed\n", name);
		goto out;
	}
	err = edu_dma(e, EDU_DMA_BUF, addr, true);
	dma_unmap_single(&pdev->dev, addr, PAGE_SIZE, DMA_FROM_DEVICE);
	err = err ? err : memcmp(buf, pattern, EDU_XFER) ? -EILSEQ : 0;
	pr_info("sio_edu_msi %s: fence mapped %pad: %s (%d)\n", name, &addr,
		err ? "differs" : "landed", err);
	if (!err)
		fence_ok++;
	/* The same device address once the driver's unmap returned. */
	memset(buf, EDU_CANARY, PAGE_SIZE);
	err = edu_dma(e, EDU_DMA_BUF, addr, true);
	msleep(100);
	pr_info("sio_edu_msi %s: fence unmapped %pad: canary %s (%d)\n", name,
		&addr, canary_kept(buf) ? "unchanged" : "changed", err);
	if (!err && canary_kept(buf))
		fence_ok++;
	err = edu_dma(e, EDU_DMA_BUF, EDU_OUTSIDE, true);
	pr_info("sio_edu_msi %s: fence outside %#x: written (%d)\n", name,
		EDU_OUTSIDE, err);
out:
	kfree(buf);
	if (low)
		__free_page(low);
}

static void edu_fence_run(struct pci_dev *pdev, struct edu *e)
{
	dma_addr_t src;
	u8 *pattern;
	int i;

	pattern = dma_alloc_coherent(&pdev->dev, EDU_DMA_SIZE, &src,
				     GFP_KERNEL);
	if (!pattern)
		return;
	for (i = 0; i < EDU_DMA_SIZE; i++)
		pattern[i] = (u8)(i * 13 + 0x21);
	edu_fence(pdev, e, src, pattern);
	dma_free_coherent(&pdev->dev, EDU_DMA_SIZE, pattern, src);
}

/* 2 KiB of text from RAM through the device's buffer to dma_to. */
static void edu_dma_to_run(struct pci_dev *pdev, struct edu *e)
{
	static const char text[] = "sio_edu_msi DMA ";
	dma_addr_t src;
	u8 *pattern;
	int i, err = -ENOMEM;

	pattern = dma_alloc_coherent(&pdev->dev, EDU_DMA_SIZE, &src,
				     GFP_KERNEL);
	if (pattern) {
		for (i = 0; i < EDU_DMA_SIZE; i++)
			pattern[i] = text[i % (sizeof(text) - 1)];
		err = edu_dma(e, src, EDU_DMA_BUF, false);
		if (!err)
			err = edu_dma(e, EDU_DMA_BUF, dma_to, true);
		dma_free_coherent(&pdev->dev, EDU_DMA_SIZE, pattern, src);
	}
	pr_info("sio_edu_msi %s: dma_to %#llx: %d bytes written (%d)\n",
		pci_name(pdev), dma_to, err ? 0 : EDU_XFER, err);
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
	if (p2p)
		edu_p2p_all(pdev, e);
	if (fence_base)
		edu_fence_run(pdev, e);
	if (dma_to)
		edu_dma_to_run(pdev, e);
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
