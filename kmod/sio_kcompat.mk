# SPDX-License-Identifier: GPL-2.0
# Feature tests for kmod/sio_kcompat.h, included by kmod/Kbuild and
# kmod/ntb/Kbuild: each greps the kernel's own headers ($(srctree), the
# tree the module builds against) for the declaration a change brought,
# and defines SIO_HAVE_<name> when it is there (an extended regular
# expression; '..' stands for the ')(' of a function pointer, which
# $(call) would take for its own).  A declaration, not a
# version number, tells: stable kernels take backports (Debian 13's
# 6.12.117 has mainline 7.0's driver override in struct device).
sio_probe = $(if $(shell grep -s -E -e '$(2)' $(srctree)/include/$(3)),-DSIO_HAVE_$(1))

ccflags-y += $(if $(wildcard $(srctree)/include/linux/unaligned.h),-DSIO_HAVE_LINUX_UNALIGNED_H)
ccflags-y += $(call sio_probe,CONST_UEVENT_DEV,uevent..const struct device,linux/device.h)
ccflags-y += $(call sio_probe,CONST_DEVNODE_DEV,devnode..const struct device,linux/device/class.h)
ccflags-y += $(call sio_probe,GENL_SPLIT_OPS_DOIT,pre_doit..const struct genl_split_ops,net/genetlink.h)
ccflags-y += $(call sio_probe,VM_FLAGS_SET,void vm_flags_set,linux/mm.h)
ccflags-y += $(call sio_probe,IOMMU_MAP_ATOMIC,iommu_map_atomic,linux/iommu.h)
ccflags-y += $(call sio_probe,IOMMU_PAGING_DOMAIN_ALLOC,iommu_paging_domain_alloc,linux/iommu.h)
ccflags-y += $(call sio_probe,DEVICE_DRIVER_OVERRIDE,device_set_driver_override,linux/device.h)
ccflags-y += $(call sio_probe,MSI_DESC_STORE,__store,linux/msi.h)
ccflags-y += $(call sio_probe,DEV_DMA_IOMMU,dma_iommu:1,linux/device.h)
