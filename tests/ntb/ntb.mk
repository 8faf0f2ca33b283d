# Software NTB over QEMU's ivshmem-doorbell device (kmod/ntb/).
#
# smartio-ivshmem-server is the server two (or more) QEMU guests need to
# share an ivshmem-doorbell device; test_ivshmem_server checks it against
# the protocol with two real clients, in make check.
#
# make check-ntb builds ntb.ko, ntb_tool, ntb_pingpong and ntb_perf from
# Debian's linux-source package and kmod/ntb's modules at test time, boots
# two QEMU guests joined by two servers and runs the mainline clients and
# smartio_ntb over the software NTBs, powering one guest off and on.  The
# script exits 77 without qemu, kernel source or headers (make: SKIPPED).
bin_PROGRAMS = contrib/ivshmem/smartio-ivshmem-server
contrib_ivshmem_smartio_ivshmem_server_SOURCES = \
	contrib/ivshmem/smartio-ivshmem-server.c
dist_man_MANS += man/smartio-ivshmem-server.8

check_PROGRAMS += tests/ntb/test_ivshmem_server
tests_ntb_test_ivshmem_server_SOURCES = tests/ntb/test_ivshmem_server.c

NTB_DIST = kmod/ntb/ntb_ivshmem.c kmod/ntb/smartio_ntb.c \
	kmod/ntb/smartio_ntb.h kmod/ntb/Kbuild kmod/ntb/Makefile \
	kmod/ntb/README tests/ntb/build.sh tests/ntb/check_ntb.sh \
	tests/ntb/guest-init.sh tests/ntb/sio_segrw.c
EXTRA_DIST += $(NTB_DIST) tests/ntb/ntb.mk

# Exit 77 from the script (no qemu, kernel source or headers) is a skip:
# make check-ntb then says SKIP and succeeds.
check-ntb: contrib/ivshmem/smartio-ivshmem-server fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/ntb/check_ntb.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-ntb: SKIPPED"; exit 0; fi; \
	exit $$st

clean-local: clean-ntb
clean-ntb:
	rm -rf tests/ntb/build

.PHONY: check-ntb clean-ntb
