// SPDX-License-Identifier: GPL-2.0
/*
 * Character devices of class "smartio", one per device a node can map:
 * smartio-<node>-<dev>, on host0 for every device it lends and on host1
 * for every device it borrows (created with the shadow, so its add and
 * remove uevents follow the hot-add and the return).  mmap() at offset
 * bar << SIO_CDEV_BAR_SHIFT maps BAR bar as that node reaches it: the
 * lender's real BAR, or the borrower's window slot, resolved through the
 * loopback LUT.  Uevents carry SMARTIO_NODE, SMARTIO_DEVICE,
 * SMARTIO_LENDER and SMARTIO_ROLE (lender|shadow) for udev/ rules.
 */
#include <linux/cdev.h>
#include <linux/fs.h>
#include <linux/mm.h>

#include "sio_kmod.h"

#define SIO_CDEV_BAR_SHIFT 40	/* mmap offset of BAR n: n << 40 */
#define SIO_CDEV_MINORS (SIO_K_MAX_DEVS * SIO_K_NODES)

static struct class *sio_class;
static dev_t sio_devt;
static struct cdev sio_cdev;
static struct device *sio_cdevs[SIO_CDEV_MINORS];

static u32 minor_of(struct sio_kdev *kd, u32 node)
{
	return (u32)(kd - sio_k.dev) * SIO_K_NODES + node;
}

/* Where BAR bar of kd is for node, or -errno. */
static int bar_addr(u32 minor, u32 bar, u64 *addr, u64 *size)
{
	struct sio_kdev *kd = &sio_k.dev[minor / SIO_K_NODES];
	u32 node = minor % SIO_K_NODES, tnode;
	struct sio_device *d;
	int bidx, err = 0;

	if (bar >= SIO_MAX_BARS)
		return -EINVAL;
	mutex_lock(&sio_k.lock);
	d = sio_dev(sio_k.reg, kd->index);
	*size = d->bar[bar].size;
	if (!*size) {
		err = -ENXIO;
	} else if (node == d->node) {
		*addr = d->bar[bar].addr;
	} else {
		bidx = sio_borrow_find(sio_k.reg, kd->index, node);
		if (bidx < 0 || !sio_borrow_at(sio_k.reg, bidx)->bar_local[bar])
			err = -EACCES;
		else
			err = sio_kplat_resolve(node,
				sio_borrow_at(sio_k.reg, bidx)->bar_local[bar],
				*size, &tnode, addr);
	}
	mutex_unlock(&sio_k.lock);
	return err;
}

static int cdev_open(struct inode *inode, struct file *f)
{
	f->private_data = (void *)(uintptr_t)iminor(inode);
	return 0;
}

static int cdev_mmap(struct file *f, struct vm_area_struct *vma)
{
	u32 minor = (uintptr_t)f->private_data;
	u64 bar = vma->vm_pgoff >> (SIO_CDEV_BAR_SHIFT - PAGE_SHIFT);
	u64 off = (vma->vm_pgoff << PAGE_SHIFT) & ((1ull << SIO_CDEV_BAR_SHIFT) - 1);
	u64 addr, size;
	int err = bar_addr(minor, bar, &addr, &size);

	if (err)
		return err;
	if (off >= size)
		return -EINVAL;
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	vma->vm_pgoff = 0;
	return vm_iomap_memory(vma, addr + off, size - off);
}

static const struct file_operations cdev_fops = {
	.owner = THIS_MODULE,
	.open = cdev_open,
	.mmap = cdev_mmap,
};

static int cdev_uevent(struct device *dev, struct kobj_uevent_env *env)
{
	u32 minor = MINOR(dev->devt);
	struct sio_kdev *kd = &sio_k.dev[minor / SIO_K_NODES];
	u32 node = minor % SIO_K_NODES;
	struct sio_device *d = sio_dev(sio_k.reg, kd->index);

	return add_uevent_var(env, "SMARTIO_NODE=%s",
			      sio_node(sio_k.reg, node)->name) ?:
	       add_uevent_var(env, "SMARTIO_DEVICE=%s", d->name) ?:
	       add_uevent_var(env, "SMARTIO_LENDER=%s",
			      sio_node(sio_k.reg, d->node)->name) ?:
	       add_uevent_var(env, "SMARTIO_ROLE=%s",
			      node == d->node ? "lender" : "shadow");
}

int sio_cdev_add(struct sio_kdev *kd, u32 node, struct device *parent)
{
	u32 minor = minor_of(kd, node);
	struct device *dev;

	if (sio_cdevs[minor])
		return -EEXIST;
	dev = device_create(sio_class, parent, MKDEV(MAJOR(sio_devt), minor),
			    kd, "smartio-%s-%s",
			    sio_node(sio_k.reg, node)->name,
			    sio_dev(sio_k.reg, kd->index)->name);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	sio_cdevs[minor] = dev;
	return 0;
}

void sio_cdev_remove(struct sio_kdev *kd, u32 node)
{
	u32 minor = minor_of(kd, node);

	if (!sio_cdevs[minor])
		return;
	device_destroy(sio_class, MKDEV(MAJOR(sio_devt), minor));
	sio_cdevs[minor] = NULL;
}

int sio_cdev_init(void)
{
	u32 i;
	int err;

	err = alloc_chrdev_region(&sio_devt, 0, SIO_CDEV_MINORS, "smartio");
	if (err)
		return err;
	cdev_init(&sio_cdev, &cdev_fops);
	err = cdev_add(&sio_cdev, sio_devt, SIO_CDEV_MINORS);
	if (err)
		goto unregister;
	sio_class = class_create(THIS_MODULE, "smartio");
	if (IS_ERR(sio_class)) {
		err = PTR_ERR(sio_class);
		goto del;
	}
	sio_class->dev_uevent = cdev_uevent;
	/* The lender maps what it lends. */
	for (i = 0; i < sio_k.ndevs; i++) {
		err = sio_cdev_add(&sio_k.dev[i], SIO_K_LENDER,
				   &sio_k.dev[i].pdev->dev);
		if (err) {
			sio_cdev_exit();
			return err;
		}
	}
	return 0;
del:
	cdev_del(&sio_cdev);
unregister:
	unregister_chrdev_region(sio_devt, SIO_CDEV_MINORS);
	return err;
}

void sio_cdev_exit(void)
{
	u32 i;

	for (i = 0; i < SIO_CDEV_MINORS; i++)
		if (sio_cdevs[i])
			sio_cdev_remove(&sio_k.dev[i / SIO_K_NODES],
					i % SIO_K_NODES);
	class_destroy(sio_class);
	cdev_del(&sio_cdev);
	unregister_chrdev_region(sio_devt, SIO_CDEV_MINORS);
}
