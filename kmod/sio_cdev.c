// SPDX-License-Identifier: GPL-2.0
/*
 * Class devices, character devices and uevents (class "smartio").
 *
 * A node's access to a device is a "view": a device sio-<node>-<dev> of
 * class smartio, without a device node, whose attributes (node, name,
 * lender, role, bdf, fdid) say whose device it is.  The lender's views
 * exist while the module is loaded; a borrower's view is hot-added by the
 * borrow and removed by the return, and it is the parent of the shadow's
 * virtual PCI root bus, so that udev rules reach the lender of a shadow
 * device (and of its block devices) with ATTRS{lender}.
 *
 * Each memory BAR of a view is a character device sio-<node>-<dev>-bar<N>,
 * a child of the view: mmap() maps the BAR as that node reaches it (the
 * real BAR for the lender, the borrower's window slot resolved through
 * the loopback LUT for a borrower), read() and write() access it in
 * dwords.  When the view goes, every mapping of its BARs is zapped and
 * later accesses fault (SIGBUS) or fail with ENODEV.  Pages are uncached.
 *
 * Every uevent carries SMARTIO_NODE, SMARTIO_DEVICE, SMARTIO_LENDER,
 * SMARTIO_ROLE (lender | borrower) and, for a BAR, SMARTIO_BAR; DEVTYPE is
 * smartio_view or smartio_bar.  udev/60-smartio.rules names the BARs
 * /dev/smartio/<node>/<dev>/bar<N>.
 */
#include <linux/cdev.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/security.h>
#include <linux/pfn_t.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "sio_kmod.h"

#define SIO_CDEV_MINORS 256
#define SIO_RW_CHUNK PAGE_SIZE

static struct class *sio_class;
static dev_t sio_devt;
static DEFINE_IDA(sio_minors);

struct sio_bar_cdev;

struct sio_view {
	struct device dev;
	char node[SIO_TOPO_NAME];
	char name[SIO_TOPO_NAME];
	char lender[SIO_TOPO_NAME];
	char bdf[16];
	u32 fdid;
	bool borrower;
	struct sio_bar_cdev *bar[PCI_STD_NUM_BARS];
};

/* A BAR of a view, or a segment's memory (mem set). */
struct sio_bar_cdev {
	struct device dev;
	struct cdev cdev;
	struct sio_view *view;	/* a BAR's */
	u32 bar;
	phys_addr_t phys;
	void *mem;		/* a segment's (vmalloc_user unless ext) */
	bool ext;		/* a segment's memory that is not ours: phys */
	char owner[SIO_TOPO_NAME];	/* a segment's */
	char seg[SIO_TOPO_NAME];
	u64 size;
	struct mutex lock;	/* files and dead */
	struct list_head files;
	bool dead;		/* the view went: no access any more */
};

struct sio_bar_file {
	struct list_head link;
	struct sio_bar_cdev *bc;
	struct file *file;
};

/* --- the BAR character devices ------------------------------------------- */

/*
 * Pages are inserted at fault time under the device's lock, so that a
 * mapping made while the view or segment goes is either zapped with the
 * others or never filled.
 */
static vm_fault_t bar_fault(struct vm_fault *vmf)
{
	struct sio_bar_cdev *bc = vmf->vma->vm_private_data;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	pfn_t pfn;

	mutex_lock(&bc->lock);
	if (bc->dead || vmf->pgoff >= PAGE_ALIGN(bc->size) >> PAGE_SHIFT) {
		ret = VM_FAULT_SIGBUS;
	} else if (bc->mem && !bc->ext) {
		pfn = page_to_pfn_t(vmalloc_to_page(bc->mem +
						    (vmf->pgoff << PAGE_SHIFT)));
		ret = vmf_insert_mixed(vmf->vma, vmf->address, pfn);
	} else {
		ret = vmf_insert_pfn_prot(vmf->vma, vmf->address,
					  (bc->phys >> PAGE_SHIFT) + vmf->pgoff,
					  vmf->vma->vm_page_prot);
	}
	mutex_unlock(&bc->lock);
	return ret;
}

static const struct vm_operations_struct bar_vm_ops = {
	.fault = bar_fault,
};

static int bar_open(struct inode *inode, struct file *f)
{
	struct sio_bar_cdev *bc = container_of(inode->i_cdev,
					       struct sio_bar_cdev, cdev);
	struct sio_bar_file *bf;
	int err;

	err = bc->mem ? 0 : security_locked_down(LOCKDOWN_PCI_ACCESS);
	if (err)
		return err;
	bf = kzalloc(sizeof(*bf), GFP_KERNEL);
	if (!bf)
		return -ENOMEM;
	bf->bc = bc;
	bf->file = f;
	mutex_lock(&bc->lock);
	err = bc->dead ? -ENODEV : 0;
	if (!err)
		list_add(&bf->link, &bc->files);
	mutex_unlock(&bc->lock);
	if (err) {
		kfree(bf);
		return err;
	}
	f->private_data = bf;
	return 0;
}

static int bar_release(struct inode *inode, struct file *f)
{
	struct sio_bar_file *bf = f->private_data;

	mutex_lock(&bf->bc->lock);
	list_del(&bf->link);
	mutex_unlock(&bf->bc->lock);
	kfree(bf);
	return 0;
}

static int bar_mmap(struct file *f, struct vm_area_struct *vma)
{
	struct sio_bar_cdev *bc = ((struct sio_bar_file *)f->private_data)->bc;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	u64 span = PAGE_ALIGN(bc->size);

	/*
	 * Shared mappings only.  A MAP_PRIVATE one is copy-on-write: for a
	 * BAR (VM_PFNMAP) the first fault BUGs in vmf_insert_pfn_prot, and
	 * for a segment writes would land in private copies the owner never
	 * sees.  A MAP_SHARED mapping of a read-only descriptor has neither
	 * VM_SHARED nor VM_MAYWRITE: it is not COW and mprotect() cannot make
	 * it writable, so it may stay.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE) || is_cow_mapping(vma->vm_flags))
		return -EINVAL;
	if (offset_in_page(bc->phys) || off >= span || len > span - off)
		return -EINVAL;
	if (READ_ONCE(bc->dead))
		return -ENODEV;
	if (bc->mem && !bc->ext) {
		sio_vm_flags_set(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP);
	} else {
		sio_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND |
				 VM_DONTDUMP);
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	}
	vma->vm_private_data = bc;
	vma->vm_ops = &bar_vm_ops;
	return 0;
}

/* One chunk of read() or write(): dwords for a BAR, as MMIO wants them. */
static int bar_chunk(struct sio_bar_cdev *bc, u32 *buf, u64 pos, size_t n,
		     bool write)
{
	void __iomem *io;
	size_t i;

	if (bc->mem) {
		if (write)
			memcpy(bc->mem + pos, buf, n);
		else
			memcpy(buf, bc->mem + pos, n);
		return 0;
	}
	io = ioremap(bc->phys + pos, n);
	if (!io)
		return -ENOMEM;
	for (i = 0; i < n / 4; i++) {
		if (write)
			iowrite32(buf[i], io + 4 * i);
		else
			buf[i] = ioread32(io + 4 * i);
	}
	iounmap(io);
	return 0;
}

/*
 * read() and write() through a bounce buffer: the user's buffer is never
 * touched under the device's lock (it may be a mapping of this device).
 */
static ssize_t bar_rw(struct file *f, char __user *ubuf, size_t len,
		      loff_t *pos, bool write)
{
	struct sio_bar_cdev *bc = ((struct sio_bar_file *)f->private_data)->bc;
	size_t done = 0;
	u32 *buf;
	int err = 0;

	if (*pos < 0 || (!bc->mem && (*pos | len) & 3))
		return -EINVAL;
	if (*pos >= bc->size)
		return write ? -ENOSPC : 0;
	len = min_t(u64, len, bc->size - *pos);
	/*
	 * Whole dwords through MMIO even when the size is not (a size the
	 * peer gave), and a zeroed buffer: no byte of it that the device did
	 * not fill ever reaches user space.
	 */
	if (!bc->mem)
		len &= ~(size_t)3;
	if (!len)
		return write ? -ENOSPC : 0;
	buf = kzalloc(SIO_RW_CHUNK, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	while (done < len && !err) {
		size_t n = min_t(size_t, len - done, SIO_RW_CHUNK);

		if (write && copy_from_user(buf, ubuf + done, n)) {
			err = -EFAULT;
			break;
		}
		mutex_lock(&bc->lock);
		err = bc->dead ? -ENODEV : bar_chunk(bc, buf, *pos, n, write);
		mutex_unlock(&bc->lock);
		if (err)
			break;
		if (!write && copy_to_user(ubuf + done, buf, n)) {
			err = -EFAULT;
			break;
		}
		done += n;
		*pos += n;
	}
	kfree(buf);
	return done ? done : err;
}

static ssize_t bar_read(struct file *f, char __user *ubuf, size_t len,
			loff_t *pos)
{
	return bar_rw(f, ubuf, len, pos, false);
}

static ssize_t bar_write(struct file *f, const char __user *ubuf, size_t len,
			 loff_t *pos)
{
	return bar_rw(f, (char __user *)ubuf, len, pos, true);
}

static loff_t bar_llseek(struct file *f, loff_t off, int whence)
{
	struct sio_bar_cdev *bc = ((struct sio_bar_file *)f->private_data)->bc;

	return fixed_size_llseek(f, off, whence, bc->size);
}

static const struct file_operations bar_fops = {
	.owner = THIS_MODULE,
	.open = bar_open,
	.release = bar_release,
	.mmap = bar_mmap,
	.read = bar_read,
	.write = bar_write,
	.llseek = bar_llseek,
};

/* --- attributes, uevents, device types ----------------------------------- */

static struct sio_view *dev_view(const struct device *dev);

static struct sio_bar_cdev *dev_seg(const struct device *dev)
{
	return container_of(dev, struct sio_bar_cdev, dev);
}

/*
 * A read-only attribute: _value, an expression of the show's dev,
 * printed with _fmt and a newline.
 */
#define SIO_ATTR_RO(_name, _fmt, _value)				\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *a, char *buf)	\
{									\
	return sysfs_emit(buf, _fmt "\n", (_value));			\
}									\
static DEVICE_ATTR_RO(_name)

SIO_ATTR_RO(node, "%s", dev_view(dev)->node);
SIO_ATTR_RO(name, "%s", dev_view(dev)->name);
SIO_ATTR_RO(lender, "%s", dev_view(dev)->lender);
SIO_ATTR_RO(role, "%s", dev_view(dev)->borrower ? "borrower" : "lender");
SIO_ATTR_RO(bdf, "%s", dev_view(dev)->bdf);
SIO_ATTR_RO(fdid, "%#x", dev_view(dev)->fdid);
SIO_ATTR_RO(bar, "%u", dev_seg(dev)->bar);
SIO_ATTR_RO(size, "%llu", dev_seg(dev)->size);
SIO_ATTR_RO(owner, "%s", dev_seg(dev)->owner);
SIO_ATTR_RO(segment, "%s", dev_seg(dev)->seg);

static struct attribute *view_attrs[] = {
	&dev_attr_node.attr,
	&dev_attr_name.attr,
	&dev_attr_lender.attr,
	&dev_attr_role.attr,
	&dev_attr_bdf.attr,
	&dev_attr_fdid.attr,
	NULL,
};
ATTRIBUTE_GROUPS(view);

static struct attribute *bar_attrs[] = {
	&dev_attr_bar.attr,
	&dev_attr_size.attr,
	NULL,
};
ATTRIBUTE_GROUPS(bar);

static int view_env(struct sio_view *v, struct kobj_uevent_env *env)
{
	return add_uevent_var(env, "SMARTIO_NODE=%s", v->node) ?:
	       add_uevent_var(env, "SMARTIO_DEVICE=%s", v->name) ?:
	       add_uevent_var(env, "SMARTIO_LENDER=%s", v->lender) ?:
	       add_uevent_var(env, "SMARTIO_ROLE=%s",
			      v->borrower ? "borrower" : "lender");
}

static int view_uevent(SIO_UEVENT_CONST struct device *dev,
		       struct kobj_uevent_env *env)
{
	return view_env(dev_view(dev), env);
}

static void view_release(struct device *dev)
{
	kfree(dev_view(dev));
}

static const struct device_type view_type = {
	.name = "smartio_view",
	.groups = view_groups,
	.uevent = view_uevent,
	.release = view_release,
};

static int bar_uevent(SIO_UEVENT_CONST struct device *dev,
		      struct kobj_uevent_env *env)
{
	struct sio_bar_cdev *bc = container_of(dev, struct sio_bar_cdev, dev);

	return view_env(bc->view, env) ?:
	       add_uevent_var(env, "SMARTIO_BAR=%u", bc->bar);
}

/* A BAR's or segment's device (mdev_new), with its segment memory. */
static void mdev_release(struct device *dev)
{
	struct sio_bar_cdev *bc = dev_seg(dev);

	ida_free(&sio_minors, MINOR(dev->devt));
	if (!bc->ext)
		vfree(bc->mem);	/* NULL for a BAR */
	kfree(bc);
}

static const struct device_type bar_type = {
	.name = "smartio_bar",
	.groups = bar_groups,
	.uevent = bar_uevent,
	.release = mdev_release,
};

static struct attribute *seg_attrs[] = {
	&dev_attr_owner.attr,
	&dev_attr_segment.attr,
	&dev_attr_size.attr,
	NULL,
};
ATTRIBUTE_GROUPS(seg);

static int seg_uevent(SIO_UEVENT_CONST struct device *dev,
		      struct kobj_uevent_env *env)
{
	return add_uevent_var(env, "SMARTIO_NODE=%s", dev_seg(dev)->owner) ?:
	       add_uevent_var(env, "SMARTIO_SEGMENT=%s", dev_seg(dev)->seg);
}

static const struct device_type seg_type = {
	.name = "smartio_segment",
	.groups = seg_groups,
	.uevent = seg_uevent,
	.release = mdev_release,
};

static struct sio_view *dev_view(const struct device *dev)
{
	if (dev->type == &bar_type)
		return container_of(dev, struct sio_bar_cdev, dev)->view;
	return container_of(dev, struct sio_view, dev);
}

static char *sio_devnode(SIO_DEVNODE_CONST struct device *dev, umode_t *mode)
{
	if (mode)
		*mode = 0600;
	return NULL;
}

/* --- views --------------------------------------------------------------- */

/* A new BAR or segment device with a minor; put_device() undoes it. */
static struct sio_bar_cdev *mdev_new(const struct device_type *type,
				     struct device *parent)
{
	struct sio_bar_cdev *bc;
	int minor;

	minor = ida_alloc_max(&sio_minors, SIO_CDEV_MINORS - 1, GFP_KERNEL);
	if (minor < 0)
		return ERR_PTR(minor);
	bc = kzalloc(sizeof(*bc), GFP_KERNEL);
	if (!bc) {
		ida_free(&sio_minors, minor);
		return ERR_PTR(-ENOMEM);
	}
	mutex_init(&bc->lock);
	INIT_LIST_HEAD(&bc->files);
	device_initialize(&bc->dev);
	bc->dev.class = sio_class;
	bc->dev.type = type;
	bc->dev.parent = parent;
	bc->dev.devt = MKDEV(MAJOR(sio_devt), minor);
	cdev_init(&bc->cdev, &bar_fops);
	bc->cdev.owner = THIS_MODULE;
	return bc;
}

static int bar_add(struct sio_view *v, u32 bar, phys_addr_t phys, u64 size)
{
	struct sio_bar_cdev *bc = mdev_new(&bar_type, &v->dev);
	int err;

	if (IS_ERR(bc))
		return PTR_ERR(bc);
	bc->view = v;
	bc->bar = bar;
	bc->phys = phys;
	bc->size = size;
	err = dev_set_name(&bc->dev, "sio-%s-%s-bar%u", v->node, v->name, bar);
	if (!err)
		err = cdev_device_add(&bc->cdev, &bc->dev);
	if (err) {
		put_device(&bc->dev);
		return err;
	}
	v->bar[bar] = bc;
	return 0;
}

/* No access to the BAR from now on: every mapping of it is zapped. */
static void bar_del(struct sio_bar_cdev *bc)
{
	struct sio_bar_file *bf;

	mutex_lock(&bc->lock);
	bc->dead = true;
	list_for_each_entry(bf, &bc->files, link)
		unmap_mapping_range(bf->file->f_mapping, 0, 0, 1);
	mutex_unlock(&bc->lock);
	cdev_device_del(&bc->cdev, &bc->dev);
	put_device(&bc->dev);
}

/*
 * What node sees of device dev, from the registry: names, and where each
 * BAR is for it.  Caller holds sio_k.lock.
 */
static int view_fill(struct sio_view *v, u32 dev, u32 node, u64 *phys,
		     u64 *size)
{
	struct sio_registry *r = sio_k.reg;
	struct sio_device *d = sio_dev(r, dev);
	struct sio_borrow *bo = NULL;
	u32 b, tnode;
	int bidx;

	strscpy(v->node, sio_node(r, node)->name, sizeof(v->node));
	strscpy(v->name, d->name, sizeof(v->name));
	strscpy(v->lender, sio_node(r, d->node)->name, sizeof(v->lender));
	strscpy(v->bdf, d->bdf, sizeof(v->bdf));
	v->fdid = d->fdid;
	v->borrower = node != d->node;
	if (v->borrower) {
		bidx = sio_borrow_find(r, dev, node);
		if (bidx < 0)
			return -ENXIO;
		bo = sio_borrow_at(r, bidx);
	}
	for (b = 0; b < PCI_STD_NUM_BARS; b++) {
		size[b] = d->bar[b].size;
		phys[b] = d->bar[b].addr;
		if (!bo || !size[b])
			continue;
		/* Where the borrower's window slot is reached. */
		if (!bo->bar_local[b] ||
		    sio_k.fab->reach(node, bo->bar_local[b], size[b], &tnode,
				    &phys[b]) || tnode != d->node)
			size[b] = 0;
	}
	return 0;
}

struct sio_view *sio_view_add(u32 dev, u32 node)
{
	u64 phys[PCI_STD_NUM_BARS], size[PCI_STD_NUM_BARS];
	struct sio_view *v;
	int err;
	u32 b;

	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return ERR_PTR(-ENOMEM);
	sio_k_lock();
	err = view_fill(v, dev, node, phys, size);
	sio_k_unlock();
	if (err) {
		kfree(v);
		return ERR_PTR(err);
	}
	device_initialize(&v->dev);
	v->dev.class = sio_class;
	v->dev.type = &view_type;
	err = dev_set_name(&v->dev, "sio-%s-%s", v->node, v->name);
	if (!err)
		err = device_add(&v->dev);
	if (err) {
		put_device(&v->dev);
		return ERR_PTR(err);
	}
	for (b = 0; b < PCI_STD_NUM_BARS && !err; b++)
		if (size[b])
			err = bar_add(v, b, phys[b], size[b]);
	if (err) {
		sio_view_remove(v);
		return ERR_PTR(err);
	}
	return v;
}

struct device *sio_view_device(struct sio_view *v)
{
	return &v->dev;
}

void sio_view_remove(struct sio_view *v)
{
	u32 b;

	if (!v)
		return;
	for (b = 0; b < PCI_STD_NUM_BARS; b++)
		if (v->bar[b])
			bar_del(v->bar[b]);
	device_unregister(&v->dev);
}

/*
 * A segment's character device sio-<owner>-seg-<name>, over memory of its
 * own (ext false: zeroed, from vmalloc_user, freed with the device) or
 * the caller's (ext: mem and phys, see sio_seg_dev_add_ext()).
 */
static struct sio_bar_cdev *seg_dev_add(const char *owner, const char *name,
					u64 size, bool ext, void *mem,
					phys_addr_t phys)
{
	struct sio_bar_cdev *bc = mdev_new(&seg_type, NULL);
	int err;

	if (IS_ERR(bc))
		return bc;
	strscpy(bc->owner, owner, sizeof(bc->owner));
	strscpy(bc->seg, name, sizeof(bc->seg));
	bc->size = size;
	bc->ext = ext;
	bc->mem = ext ? mem : vmalloc_user(size);
	bc->phys = phys;
	err = ext || bc->mem ?
	      dev_set_name(&bc->dev, "sio-%s-seg-%s", owner, name) : -ENOMEM;
	if (!err)
		err = cdev_device_add(&bc->cdev, &bc->dev);
	if (err) {
		put_device(&bc->dev);
		return ERR_PTR(err);
	}
	return bc;
}

/*
 * A segment's memory, zeroed, and its character device: mmap(), read()
 * and write() reach the memory.  The core calls this (seg_backing) under
 * sio_k.lock.
 */
struct sio_bar_cdev *sio_seg_dev_add(const char *owner, const char *name,
				     u64 size)
{
	return seg_dev_add(owner, name, size, false, NULL, 0);
}

/*
 * A segment whose memory is elsewhere (smartio.ko over an NTB: its owner's
 * inbound window): mmap() maps phys; read() and write() use mem, or the
 * way to a BAR (dwords) without it.  The caller frees the memory after
 * sio_seg_dev_remove().
 */
struct sio_bar_cdev *sio_seg_dev_add_ext(const char *owner, const char *name,
					 u64 size, void *mem, phys_addr_t phys)
{
	return seg_dev_add(owner, name, size, true, mem, phys);
}

/* The segment goes: its mappings are zapped, its memory freed. */
void sio_seg_dev_remove(struct sio_bar_cdev *bc)
{
	if (bc)
		bar_del(bc);
}

int sio_cdev_init(void)
{
	int err;

	err = alloc_chrdev_region(&sio_devt, 0, SIO_CDEV_MINORS, "smartio");
	if (err)
		return err;
	sio_class = sio_class_create("smartio");
	if (IS_ERR(sio_class)) {
		unregister_chrdev_region(sio_devt, SIO_CDEV_MINORS);
		return PTR_ERR(sio_class);
	}
	sio_class->devnode = sio_devnode;
	return 0;
}

struct class *sio_cdev_class(void)
{
	return sio_class;
}

void sio_cdev_exit(void)
{
	class_destroy(sio_class);
	unregister_chrdev_region(sio_devt, SIO_CDEV_MINORS);
	ida_destroy(&sio_minors);
}
