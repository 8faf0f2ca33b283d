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
	kmod/ntb/smartio_ntb.h kmod/ntb/Kbuild kmod/ntb/Makefile \
	kmod/ntb/README tests/ntb/build.sh tests/ntb/check_ntb.sh \
	tests/ntb/guest-init.sh tests/ntb/sio_segrw.c \
	kmod/ntb/ntb_sioswitch.c kmod/ntb/ntb_sioswitch_regs.h \
	contrib/qemu/Makefile contrib/qemu/build.sh contrib/qemu/ntbsw-proto.h \
	contrib/qemu/smartio-ntb-port.c contrib/qemu/smartio-ntb-switch.c \
	contrib/qemu/ntbsw-core.c contrib/qemu/ntbsw-core.h contrib/qemu/ntbsw-iommu.c \
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
	tests/ntb/check_iommu.sh tests/ntb/iommu-init.sh tests/ntb/sio_dmaspread.c
EXTRA_DIST += $(NTB_DIST) tests/ntb/ntb.mk

# Exit 77 from the script (no qemu, kernel source or headers) is a skip:
# make check-ntb then says SKIP and succeeds.
# Ten parts: four guests on one smartio-ntb-switch (check_switch.sh,
# which builds contrib/qemu first), three guests on one switch as one
# smartio cluster (check_cluster.sh, smartio.ko fabric=ntb nodes=3), four
# guests with an NVMe each lending them to each other (check_lend.sh),
# three guests lending QEMU's edu device, whose interrupt is plain MSI,
# counting its interrupts on the borrower, and its driver's
# dma_map_resource of three BARs (check_msi.sh), four guests sharing one
# NVMe through smartio-nvmeq, a client's node powered off mid-I/O
# (check_nvmeq.sh), two guests whose borrower's NTB function is in a
# translated IOMMU domain, DMA windows in it (check_iommu.sh), two guests
# running the mainline ntb_transport and ntb_netdev with 64 MiB
# over TCP each way (check_transport.sh), the same with both NTB functions
# in translated IOMMU domains, 16 MiB each way, then a write to an IOVA
# the receiver never mapped, which must fault there (NTB_IOMMU=1: make
# check-ntb-transport-iommu), two partitions of the Switchtec
# model under the mainline switchtec drivers (check_switchtec.sh, then
# check_transport.sh over them: make check-ntb-switchtec), then
# check_ntb.sh's two guests
# with smartio.ko over the ivshmem NTB.  make check-ntb-cluster,
# check-ntb-msi, check-ntb-nvmeq, check-ntb-iommu, check-ntb-lend and check-ntb-transport run those parts alone.  make check-ntb-switch2 runs
# check_ntb.sh over two 2-port switches instead (NTB_FABRIC=switch): its
# checks pass there except the concurrent write/attach timing on one
# guest (397 s against a 60 s limit in the one run so far), so ivshmem
# stays in check-ntb until that is understood.
check-ntb: contrib/ivshmem/smartio-ivshmem-server fs/smartiofs
	@t=$$(date +%s); sw=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_switch.sh || sw=$$?; \
	if [ $$sw -eq 77 ]; then echo "check-ntb (switch): SKIPPED"; sw=0; fi; \
	echo "check-ntb (switch): exit $$sw after $$(( $$(date +%s) - t )) s"; \
	t=$$(date +%s); cl=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_cluster.sh || cl=$$?; \
	if [ $$cl -eq 77 ]; then echo "check-ntb (cluster): SKIPPED"; cl=0; fi; \
	echo "check-ntb (cluster): exit $$cl after $$(( $$(date +%s) - t )) s"; \
	t=$$(date +%s); ld=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_lend.sh || ld=$$?; \
	if [ $$ld -eq 77 ]; then echo "check-ntb (lending): SKIPPED"; ld=0; fi; \
	echo "check-ntb (lending): exit $$ld after $$(( $$(date +%s) - t )) s"; \
	t=$$(date +%s); ms=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_msi.sh || ms=$$?; \
	if [ $$ms -eq 77 ]; then echo "check-ntb (msi): SKIPPED"; ms=0; fi; \
	echo "check-ntb (msi): exit $$ms after $$(( $$(date +%s) - t )) s"; \
	t=$$(date +%s); nq=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_nvmeq.sh || nq=$$?; \
	if [ $$nq -eq 77 ]; then echo "check-ntb (nvmeq): SKIPPED"; nq=0; fi; \
	echo "check-ntb (nvmeq): exit $$nq after $$(( $$(date +%s) - t )) s"; \
	t=$$(date +%s); io=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_iommu.sh || io=$$?; \
	if [ $$io -eq 77 ]; then echo "check-ntb (iommu): SKIPPED"; io=0; fi; \
	echo "check-ntb (iommu): exit $$io after $$(( $$(date +%s) - t )) s"; \
	t=$$(date +%s); tr=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_transport.sh || tr=$$?; \
	if [ $$tr -eq 77 ]; then echo "check-ntb (transport): SKIPPED"; tr=0; fi; \
	echo "check-ntb (transport): exit $$tr after $$(( $$(date +%s) - t )) s"; \
	t=$$(date +%s); ti=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		NTB_IOMMU=1 NTB_MIB=16 \
		$(SHELL) $(srcdir)/tests/ntb/check_transport.sh || ti=$$?; \
	if [ $$ti -eq 77 ]; then echo "check-ntb (transport, translated): SKIPPED"; ti=0; fi; \
	echo "check-ntb (transport, translated): exit $$ti after $$(( $$(date +%s) - t )) s"; \
	t=$$(date +%s); sx=0; $(MAKE) check-ntb-switchtec || sx=$$?; \
	echo "check-ntb (switchtec): exit $$sx after $$(( $$(date +%s) - t )) s"; \
	t=$$(date +%s); st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		NTB_FABRIC=ivshmem \
		$(SHELL) $(srcdir)/tests/ntb/check_ntb.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb (ivshmem): SKIPPED"; st=0; fi; \
	echo "check-ntb (ivshmem): exit $$st after $$(( $$(date +%s) - t )) s"; \
	[ $$st -eq 0 ] && [ $$sw -eq 0 ] && [ $$cl -eq 0 ] && [ $$ld -eq 0 ] && \
		[ $$tr -eq 0 ] && [ $$ti -eq 0 ] && [ $$sx -eq 0 ] && [ $$ms -eq 0 ] && [ $$nq -eq 0 ] && \
		[ $$io -eq 0 ]

check-ntb-lend: fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_lend.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb-lend: SKIPPED"; exit 0; fi; \
	exit $$st

# check_msi.sh alone: a plain-MSI device (QEMU's edu) lent over the NTB,
# its driver's dma_map_resource of BARs on three machines.
check-ntb-msi: fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_msi.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb-msi: SKIPPED"; exit 0; fi; \
	exit $$st

# check_nvmeq.sh alone: smartio-nvmeq's manager and clients on four guests.
check-ntb-nvmeq: fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_nvmeq.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb-nvmeq: SKIPPED"; exit 0; fi; \
	exit $$st

# check_iommu.sh alone: DMA windows in the borrower's translated IOMMU domain.
check-ntb-iommu: fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_iommu.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb-iommu: SKIPPED"; exit 0; fi; \
	exit $$st

check-ntb-transport:
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_transport.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb-transport: SKIPPED"; exit 0; fi; \
	exit $$st

# check_transport.sh with both NTB functions in translated IOMMU domains
# (NTB_IOMMU=1: no iommu=pt, interrupt remapping on), 16 MiB each way,
# then a write aimed at an IOVA the receiver never mapped: its DMAR fault
# logged, its RAM there unchanged, both still answering (make check-ntb
# runs it after the transport part).
check-ntb-transport-iommu:
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		NTB_IOMMU=1 NTB_MIB=$${NTB_MIB:-16} \
		$(SHELL) $(srcdir)/tests/ntb/check_transport.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb-transport-iommu: SKIPPED"; exit 0; fi; \
	exit $$st

# check_ntb.sh alone: the mainline clients and smartio.ko over the ivshmem NTB.
check-ntb-ivshmem: contrib/ivshmem/smartio-ivshmem-server fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		NTB_FABRIC=ivshmem \
		$(SHELL) $(srcdir)/tests/ntb/check_ntb.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb-ivshmem: SKIPPED"; exit 0; fi; \
	exit $$st

# Two partitions of the Switchtec model (contrib/qemu/switchtec-nt.c) under
# the unmodified switchtec.ko and ntb_hw_switchtec.ko: ntb_tool,
# ntb_pingpong and smartio_ntb with use_lut_mws=0 and 1 (check_switchtec.sh;
# NTB_PERF=1 adds ntb_perf, which can hang at start there),
# then ntb_transport and ntb_netdev, 64 MiB each way over TCP
# (check_transport.sh with NTB_HW=switchtec), then smartio.ko lending an
# NVMe between the two partitions (check_lend.sh with NTB_HW=switchtec).
check-ntb-switchtec: fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_switchtec.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb-switchtec: SKIPPED"; exit 0; fi; \
	tr=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		NTB_HW=switchtec \
		$(SHELL) $(srcdir)/tests/ntb/check_transport.sh || tr=$$?; \
	ld=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		NTB_HW=switchtec \
		$(SHELL) $(srcdir)/tests/ntb/check_lend.sh || ld=$$?; \
	echo "check-ntb-switchtec: drivers $$st, transport $$tr, lending $$ld"; \
	[ $$st -eq 0 ] && [ $$tr -eq 0 ] && [ $$ld -eq 0 ]

check-ntb-cluster: fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_cluster.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb-cluster: SKIPPED"; exit 0; fi; \
	exit $$st

check-ntb-switch2: contrib/ivshmem/smartio-ivshmem-server fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		NTB_FABRIC=switch \
		$(SHELL) $(srcdir)/tests/ntb/check_ntb.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb-switch2: SKIPPED"; exit 0; fi; \
	exit $$st

clean-local: clean-ntb
clean-ntb:
	rm -rf tests/ntb/build contrib/qemu/build

.PHONY: check-ntb check-ntb-switch2 check-ntb-cluster check-ntb-lend \
	check-ntb-iommu check-ntb-transport check-ntb-transport-iommu \
	check-ntb-ivshmem check-ntb-switchtec \
	clean-ntb

# check_lend.sh over the Switchtec model alone (NTB_HW=switchtec, two
# guests; make check-ntb-switchtec runs it too).
check-ntb-lend-switchtec: fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		NTB_HW=switchtec \
		$(SHELL) $(srcdir)/tests/ntb/check_lend.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb-lend-switchtec: SKIPPED"; exit 0; fi; \
	exit $$st
