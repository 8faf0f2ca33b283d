// SPDX-License-Identifier: GPL-2.0
/*
 * The fabric device, /sys/class/smartio/smartio (DEVTYPE smartio_fabric,
 * no device node): how user space follows smartio.ko without polling.
 *
 * Every change of the core's registry or event ring (the platform's
 * notify) bumps the generation; a "change" uevent carrying
 * SMARTIO_GENERATION then goes out, so libsmartio sleeps on a udev
 * monitor and re-reads the registry only when the generation moved.  The
 * uevent is sent from a work item: notify runs under the platform lock,
 * and a burst of changes (a borrow emits several events) becomes one or
 * two uevents rather than one each.
 *
 * Attributes: node (this machine's node), generation, requests (generic
 * netlink requests served, so tests can see that an idle reader is idle).
 */
#include <linux/device.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "sio_kmod.h"

static struct device *sio_fabric;

/* fabric_uevent() adds the generation as the uevent goes out. */
static void fabric_changed(struct work_struct *work)
{
	kobject_uevent(&sio_fabric->kobj, KOBJ_CHANGE);
}

static DECLARE_WORK(sio_fabric_work, fabric_changed);

/* Called by the platform's notify, under sio_k.lock. */
void sio_fabric_notify(void)
{
	if (sio_fabric)
		schedule_work(&sio_fabric_work);
}

static ssize_t node_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	ssize_t n;

	sio_k_lock();
	n = sysfs_emit(buf, "%s\n", sio_node(sio_k.reg, sio_k.self)->name);
	sio_k_unlock();
	return n;
}
static DEVICE_ATTR_RO(node);

static ssize_t generation_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", (u64)READ_ONCE(sio_k.notifies));
}
static DEVICE_ATTR_RO(generation);

static ssize_t requests_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&sio_k.requests));
}
static DEVICE_ATTR_RO(requests);

static struct attribute *fabric_attrs[] = {
	&dev_attr_node.attr,
	&dev_attr_generation.attr,
	&dev_attr_requests.attr,
	NULL,
};
ATTRIBUTE_GROUPS(fabric);

static int fabric_uevent(SIO_UEVENT_CONST struct device *dev,
			 struct kobj_uevent_env *env)
{
	return add_uevent_var(env, "SMARTIO_NODE=%s",
			      sio_node(sio_k.reg, sio_k.self)->name) ?:
	       add_uevent_var(env, "SMARTIO_GENERATION=%llu",
			      (u64)READ_ONCE(sio_k.notifies));
}

static const struct device_type fabric_type = {
	.name = "smartio_fabric",
	.uevent = fabric_uevent,
};

static void fabric_release(struct device *dev)
{
	kfree(dev);
}

int sio_fabric_init(void)
{
	struct device *dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	int err;

	if (!dev)
		return -ENOMEM;
	device_initialize(dev);
	dev->class = sio_cdev_class();
	dev->type = &fabric_type;
	dev->groups = fabric_groups;
	dev->release = fabric_release;
	err = dev_set_name(dev, "smartio");
	if (!err)
		err = device_add(dev);
	if (err) {
		put_device(dev);
		return err;
	}
	sio_k_lock();
	sio_fabric = dev;
	sio_k_unlock();
	return 0;
}

void sio_fabric_exit(void)
{
	struct device *dev = sio_fabric;

	sio_k_lock();
	sio_fabric = NULL;
	sio_k_unlock();
	cancel_work_sync(&sio_fabric_work);
	device_unregister(dev);
}
