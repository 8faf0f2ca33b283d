# Software NTB over QEMU's ivshmem-doorbell device (kmod/ntb/).
#
# smartio-ivshmem-server is the server two (or more) QEMU guests need to
# share an ivshmem-doorbell device; test_ivshmem_server checks it against
# the protocol with two real clients, in make check.
#
# make check-ntb builds ntb.ko, ntb_tool, ntb_pingpong and ntb_perf from
# Debian's linux-source package and kmod/ntb's driver at test time, boots
# two QEMU guests joined by the server and runs the mainline clients over
# the software NTB.  It skips (77) without qemu, kernel source or headers.
bin_PROGRAMS = contrib/ivshmem/smartio-ivshmem-server
contrib_ivshmem_smartio_ivshmem_server_SOURCES = \
	contrib/ivshmem/smartio-ivshmem-server.c
dist_man_MANS += man/smartio-ivshmem-server.8

check_PROGRAMS += tests/ntb/test_ivshmem_server
tests_ntb_test_ivshmem_server_SOURCES = tests/ntb/test_ivshmem_server.c
