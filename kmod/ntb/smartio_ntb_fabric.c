// SPDX-License-Identifier: GPL-2.0
/*
 * smartio_ntb offers its transport to smartio.ko: one table of operations
 * (struct sio_ntb_fabric_ops, smartio_ntb.h) on auxiliary device
 * smartio_ntb.fabric.0, under /sys/devices/smartio_ntb while this module
 * is loaded.  The registration goes this way round because the order of
 * loading does: smartio_ntb first, then "insmod smartio.ko fabric=ntb",
 * whose driver binds to the device and pins this module; smartio.ko has
 * no link-time dependency on it, so it loads without it (and without
 * ntb.ko) in its default loopback mode.
 *
 *   # insmod smartio_ntb.ko node=1
 *   # ls /sys/bus/auxiliary/devices
 *   smartio_ntb.fabric.0
 *   # insmod smartio.ko fabric=ntb node=1
 *   # rmmod smartio_ntb
 *   rmmod: can't unload module 'smartio_ntb': Resource temporarily unavailable
 */

#include <linux/auxiliary_bus.h>
#include <linux/device.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "smartio_ntb.h"
#include "smartio_ntb_fabric.h"

static const struct sio_ntb_fabric_ops sio_fabric_ops = {
	.owner = THIS_MODULE,
	.attach = sio_ntb_attach,
	.detach = sio_ntb_detach,
	.call = sio_ntb_call,
	.peer_port = sio_ntb_peer_port,
	.seg_alloc = sio_ntb_seg_alloc,
	.seg_free = sio_ntb_seg_free,
	.seg_phys = sio_ntb_seg_phys,
	.seg_dma = sio_ntb_seg_dma,
	.peer_seg = sio_ntb_peer_seg,
	.lut_geometry = sio_ntb_lut_geometry,
	.lut_set = sio_ntb_lut_set,
	.lut_clear = sio_ntb_lut_clear,
	.lut_peer_addr = sio_ntb_lut_peer_addr,
	.lut_align = sio_ntb_lut_align,
	.direct_geometry = sio_ntb_direct_geometry,
	.direct_set = sio_ntb_direct_set,
	.direct_clear = sio_ntb_direct_clear,
	.direct_peer_addr = sio_ntb_direct_peer_addr,
	.rid_allow = sio_ntb_rid_allow,
	.pci_dev = sio_ntb_pci_dev,
};

/* The auxiliary device's parent: an auxiliary device must have one. */
static struct device *sio_fabric_root;
static struct sio_ntb_fabric *sio_fabric;

static void sio_fabric_release(struct device *dev)
{
	kfree(sio_ntb_fabric_of(to_auxiliary_dev(dev)));
}

int sio_fabric_register(void)
{
	struct sio_ntb_fabric *f;
	int err;

	sio_fabric_root = root_device_register(KBUILD_MODNAME);
	if (IS_ERR(sio_fabric_root))
		return PTR_ERR(sio_fabric_root);
	err = -ENOMEM;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		goto unregister_root;
	f->ops = &sio_fabric_ops;
	f->adev.name = SIO_NTB_FABRIC_NAME;
	f->adev.dev.parent = sio_fabric_root;
	f->adev.dev.release = sio_fabric_release;
	err = auxiliary_device_init(&f->adev);
	if (err) {
		kfree(f);
		goto unregister_root;
	}
	err = auxiliary_device_add(&f->adev);
	if (err)
		goto uninit_adev;	/* the release frees f */
	sio_fabric = f;
	return 0;

uninit_adev:
	auxiliary_device_uninit(&f->adev);
unregister_root:
	root_device_unregister(sio_fabric_root);
	return err;
}

/* Only once smartio.ko let go of the module: it pins it while bound. */
void sio_fabric_unregister(void)
{
	auxiliary_device_delete(&sio_fabric->adev);
	auxiliary_device_uninit(&sio_fabric->adev);
	sio_fabric = NULL;
	root_device_unregister(sio_fabric_root);
}
