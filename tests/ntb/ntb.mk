# SPDX-License-Identifier: GPL-2.0-or-later
# Software NTB over QEMU's ivshmem-doorbell device (kmod/ntb/).
#
# smartio-ivshmem-server is the server two (or more) QEMU guests need to
# share an ivshmem-doorbell device; test_ivshmem_server checks it against
# the protocol with two real clients, in make check.
#
# make check-ntb builds ntb.ko, ntb_tool, ntb_pingpong, ntb_perf,
# ntb_transport and ntb_netdev from Debian's linux-source package and
# kmod/ntb's modules at test time, boots two QEMU guests joined by two
# servers and runs the mainline clients and smartio_ntb over the software
# NTBs, powering one guest off and on; then it builds the smartio-ntb-port
# device for the installed QEMU (contrib/qemu) and boots guests on
# smartio-ntb-switches (tests/ntb/check_*.sh).  Each script exits 77
# without qemu, kernel source or headers (make: SKIPPED).
bin_PROGRAMS += contrib/ivshmem/smartio-ivshmem-server
contrib_ivshmem_smartio_ivshmem_server_SOURCES = \
	contrib/ivshmem/smartio-ivshmem-server.c
contrib_ivshmem_smartio_ivshmem_server_LDADD =
dist_man_MANS += man/smartio-ivshmem-server.8 man/smartio-ntb-port.7 \
	man/switchtec-nt.7

check_PROGRAMS += tests/ntb/test_ivshmem_server
tests_ntb_test_ivshmem_server_SOURCES = tests/ntb/test_ivshmem_server.c
tests_ntb_test_ivshmem_server_LDADD =

# The NTB switch process (contrib/qemu; the QEMU device itself is built
# by contrib/qemu/build.sh) and its protocol test, in make check.
NTBSW_CPPFLAGS = -D_GNU_SOURCE -I$(srcdir)/contrib/qemu -I$(srcdir)/kmod/ntb
bin_PROGRAMS += contrib/qemu/smartio-ntb-switch
contrib_qemu_smartio_ntb_switch_SOURCES = contrib/qemu/smartio-ntb-switch.c \
	contrib/qemu/switchtec-gas.h \
	contrib/qemu/ntbsw-proto.h kmod/ntb/ntb_sioswitch_regs.h
contrib_qemu_smartio_ntb_switch_CPPFLAGS = $(NTBSW_CPPFLAGS)
contrib_qemu_smartio_ntb_switch_LDADD =
check_PROGRAMS += tests/ntb/test_ntb_switch
tests_ntb_test_ntb_switch_SOURCES = tests/ntb/test_ntb_switch.c
tests_ntb_test_ntb_switch_CPPFLAGS = $(NTBSW_CPPFLAGS)
tests_ntb_test_ntb_switch_LDADD =

NTB_DIST = kmod/ntb/ntb_ivshmem.c kmod/ntb/smartio_ntb_main.c \
	kmod/ntb/smartio_ntb_rid.c kmod/ntb/smartio_ntb_rid.h \
	kmod/ntb/smartio_ntb_fabric.c kmod/ntb/smartio_ntb_fabric.h \
	kmod/ntb/smartio_ntb.h kmod/ntb/Kbuild kmod/ntb/Makefile \
	kmod/ntb/README tests/ntb/build.sh tests/ntb/check_ntb.sh \
	tests/ntb/guest-init.sh tests/ntb/sio_segrw.c \
	kmod/ntb/ntb_sioswitch.c kmod/ntb/ntb_sioswitch_regs.h \
	contrib/qemu/Makefile contrib/qemu/build.sh contrib/qemu/ntbsw-proto.h \
	contrib/qemu/smartio-ntb-port.c contrib/qemu/smartio-ntb-switch.c \
	contrib/qemu/e1000e-acs.c contrib/qemu/insn-count.c \
	contrib/qemu/ntbsw-core.c contrib/qemu/ntbsw-core.h contrib/qemu/ntbsw-iommu.c \
	contrib/qemu/ntbsw-rid.c \
	contrib/qemu/switchtec-nt.c contrib/qemu/switchtec-gas.h \
	tests/ntb/check_switch.sh tests/ntb/switch-init.sh \
	tests/ntb/switch-lib.sh tests/ntb/check_cluster.sh \
	tests/ntb/cluster-init.sh \
	tests/ntb/switch-bench-init.sh tests/ntb/sw_bench.c \
	tests/ntb/check_lend.sh tests/ntb/lend-init.sh tests/ntb/cluster-steps.sh \
	tests/ntb/lend-bench-init.sh tests/ntb/check_transport.sh \
	tests/ntb/transport-init.sh tests/ntb/check_switchtec.sh \
	tests/ntb/switchtec-init.sh tests/ntb/check_msi.sh \
	tests/ntb/msi-init.sh tests/ntb/edu/sio_edu_msi.c tests/ntb/edu/Kbuild \
	tests/ntb/check_nvmeq.sh tests/ntb/nvmeq-init.sh \
	tests/ntb/check_sriov.sh tests/ntb/sriov-init.sh tests/ntb/nvme_vf.c \
	tests/ntb/check_iommu.sh tests/ntb/iommu-init.sh tests/ntb/sio_dmaspread.c \
	tests/ntb/sio_dmacanary.c
EXTRA_DIST += $(NTB_DIST) tests/ntb/ntb.mk
# The Switchtec guests' ntb_perf start (check_switchtec.sh, make bench).
EXTRA_DIST += tests/ntb/switchtec-perf.sh tests/ntb/switchtec-bench-init.sh

# make check-ntb runs eleven parts, one after the other, each booting its
# own guests:
#  switch     four guests on one smartio-ntb-switch (check_switch.sh,
#             which builds contrib/qemu first);
#  cluster    three guests on one switch as one smartio cluster
#             (check_cluster.sh, smartio.ko fabric=ntb nodes=3);
#  lending    four guests with an NVMe each lending them to each other
#             (check_lend.sh);
#  msi        three guests lending QEMU's edu device, whose interrupt is
#             plain MSI, and its driver's dma_map_resource of three BARs
#             (check_msi.sh);
#  nvmeq      four guests sharing one NVMe through smartio-nvmeq, a
#             client's node powered off mid-I/O, an unmodified NBD
#             client mounting ext2 from nbdkit's export of it
#             (check_nvmeq.sh);
#  sriov      three guests: two SR-IOV VFs of one NVMe lent to two
#             borrowers whose nvme drivers use them (fio --verify on
#             each) while the lender uses the PF (check_sriov.sh);
#  iommu      two guests whose borrower's NTB function is in a translated
#             IOMMU domain, the DMA windows in it (check_iommu.sh);
#  transport  the mainline ntb_transport and ntb_netdev, 64 MiB over TCP
#             each way (check_transport.sh);
#  transport, translated
#             the same with both NTB functions in translated IOMMU
#             domains, 16 MiB each way, then a write to an IOVA the
#             receiver never mapped, which must fault there (NTB_IOMMU=1);
#  switchtec  two partitions of the Switchtec model under the mainline
#             switchtec drivers, then ntb_transport, smartio lending and
#             the DMA windows in a translated borrower's IOMMU domain
#             over them (make check-ntb-switchtec);
#  ivshmem    check_ntb.sh's two guests with smartio.ko over the ivshmem
#             NTB.
# Exit 77 from a part's script (no qemu, kernel source or headers) is a
# skip: the part says SKIPPED and counts as passed.  make check-ntb-NAME
# runs one part (check-ntb-lend the lending part, check-ntb-transport-iommu
# the translated transport).  make check-ntb-switch2 runs check_ntb.sh over
# two 2-port switches instead (NTB_FABRIC=switch): its checks pass there
# except the concurrent write/attach timing on one guest (397 s against a
# 60 s limit in the one run so far), so ivshmem stays in check-ntb until
# that is understood.
#
# NTB_PART defines part NAME COMMAND...: runs COMMAND with the source and
# build directories in its environment and prints "check-ntb (NAME): exit
# N after S s" (.ci/run reads these lines); a failed part's name is added
# to $$failed.
NTB_SH = $(SHELL) $(srcdir)/tests/ntb
NTB_PART = failed=; part() { n=$$1; shift; t=$$(date +%s); st=0; \
	env SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' "$$@" || \
		st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb ($$n): SKIPPED"; st=0; fi; \
	echo "check-ntb ($$n): exit $$st after $$(( $$(date +%s) - t )) s"; \
	[ $$st -eq 0 ] || failed="$$failed $$n"; }
NTB_DONE = [ -z "$$failed" ] || { echo "check-ntb: failed:$$failed"; exit 1; }

check-ntb: contrib/ivshmem/smartio-ivshmem-server fs/smartiofs
	@$(NTB_PART); \
	part switch $(NTB_SH)/check_switch.sh; \
	part cluster $(NTB_SH)/check_cluster.sh; \
	part lending $(NTB_SH)/check_lend.sh; \
	part msi $(NTB_SH)/check_msi.sh; \
	part nvmeq $(NTB_SH)/check_nvmeq.sh; \
	part sriov $(NTB_SH)/check_sriov.sh; \
	part iommu $(NTB_SH)/check_iommu.sh; \
	part transport $(NTB_SH)/check_transport.sh; \
	part "transport, translated" env NTB_IOMMU=1 NTB_MIB=16 \
		$(NTB_SH)/check_transport.sh; \
	part switchtec $(MAKE) check-ntb-switchtec; \
	part ivshmem env NTB_FABRIC=ivshmem $(NTB_SH)/check_ntb.sh; \
	$(NTB_DONE)

check-ntb-switch: fs/smartiofs
	@$(NTB_PART); part switch $(NTB_SH)/check_switch.sh; $(NTB_DONE)
check-ntb-cluster: fs/smartiofs
	@$(NTB_PART); part cluster $(NTB_SH)/check_cluster.sh; $(NTB_DONE)
check-ntb-lend: fs/smartiofs
	@$(NTB_PART); part lending $(NTB_SH)/check_lend.sh; $(NTB_DONE)
check-ntb-msi: fs/smartiofs
	@$(NTB_PART); part msi $(NTB_SH)/check_msi.sh; $(NTB_DONE)
check-ntb-nvmeq: fs/smartiofs
	@$(NTB_PART); part nvmeq $(NTB_SH)/check_nvmeq.sh; $(NTB_DONE)
check-ntb-sriov: fs/smartiofs
	@$(NTB_PART); part sriov $(NTB_SH)/check_sriov.sh; $(NTB_DONE)
check-ntb-iommu: fs/smartiofs
	@$(NTB_PART); part iommu $(NTB_SH)/check_iommu.sh; $(NTB_DONE)
check-ntb-transport:
	@$(NTB_PART); part transport $(NTB_SH)/check_transport.sh; $(NTB_DONE)
check-ntb-transport-iommu:
	@$(NTB_PART); part "transport, translated" \
		env NTB_IOMMU=1 NTB_MIB=$${NTB_MIB:-16} \
		$(NTB_SH)/check_transport.sh; $(NTB_DONE)
check-ntb-ivshmem: contrib/ivshmem/smartio-ivshmem-server fs/smartiofs
	@$(NTB_PART); part ivshmem env NTB_FABRIC=ivshmem \
		$(NTB_SH)/check_ntb.sh; $(NTB_DONE)
check-ntb-switch2: contrib/ivshmem/smartio-ivshmem-server fs/smartiofs
	@$(NTB_PART); part switch2 env NTB_FABRIC=switch \
		$(NTB_SH)/check_ntb.sh; $(NTB_DONE)

# Two partitions of the Switchtec model (contrib/qemu/switchtec-nt.c) under
# the unmodified switchtec.ko and ntb_hw_switchtec.ko: ntb_tool,
# ntb_pingpong, ntb_perf (10 runs in a row, NTB_PERF=N to change) and
# smartio_ntb with use_lut_mws=0 and 1, and ntb_msi_test
# (check_switchtec.sh),
# then ntb_transport and ntb_netdev, 64 MiB each way over TCP
# (check_transport.sh with NTB_HW=switchtec), then smartio.ko lending an
# NVMe between the two partitions (check_lend.sh with NTB_HW=switchtec),
# then the DMA windows in a borrower's translated IOMMU domain over the
# Switchtec model (check_iommu.sh with NTB_HW=switchtec).
check-ntb-switchtec: fs/smartiofs
	@$(NTB_PART); part "switchtec drivers" $(NTB_SH)/check_switchtec.sh; \
	part "switchtec transport" env NTB_HW=switchtec \
		$(NTB_SH)/check_transport.sh; \
	part "switchtec lending" env NTB_HW=switchtec $(NTB_SH)/check_lend.sh; \
	part "switchtec iommu" env NTB_HW=switchtec $(NTB_SH)/check_iommu.sh; \
	$(NTB_DONE)
check-ntb-lend-switchtec: fs/smartiofs
	@$(NTB_PART); part "switchtec lending" env NTB_HW=switchtec \
		$(NTB_SH)/check_lend.sh; $(NTB_DONE)
check-ntb-iommu-switchtec: fs/smartiofs
	@$(NTB_PART); part "switchtec iommu" env NTB_HW=switchtec \
		$(NTB_SH)/check_iommu.sh; $(NTB_DONE)

clean-local: clean-ntb
clean-ntb:
	rm -rf tests/ntb/build contrib/qemu/build

.PHONY: check-ntb check-ntb-switch check-ntb-switch2 check-ntb-cluster \
	check-ntb-lend check-ntb-msi check-ntb-nvmeq check-ntb-sriov \
	check-ntb-iommu check-ntb-transport check-ntb-transport-iommu \
	check-ntb-ivshmem check-ntb-switchtec check-ntb-lend-switchtec \
	check-ntb-iommu-switchtec clean-ntb
