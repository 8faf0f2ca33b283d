#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-ntb, the MSI and dma_map_resource part: three QEMU guests on
# one 3-port smartio-ntb-switch form one smartio cluster; host0 lends its
# QEMU edu device, whose only interrupt is plain MSI (no MSI-X), and
# host1's sio_edu_msi.ko (tests/ntb/edu, built here for the guests'
# kernel) binds the borrowed shadow and counts 16 interrupts, each the
# device's MSI write carried by the NTB; a forged MSI message is refused
# by the lender; the same driver maps three BARs with dma_map_resource
# (ivshmem-plain of host0 and of host2, both borrowed too, and host1's
# own: SmartIO 4.4's three cases) and edu's DMA engine writes into each
# (tests/ntb/msi-init.sh).
#
# Environment: SRCDIR, BUILDDIR (set by make), KVER, LINUX_SOURCE (see
# build.sh), NTB_TIMEOUT (seconds per guest, default 1800), NTB_KEEP=1
# keeps the work directory, NTBSW_OUT (see check_switch.sh).  Exit 77
# when qemu, busybox-static, cpio, the kernel image, headers or source
# are missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-1800}
N=3

skip() { echo "SKIP: check-ntb (msi): $*"; exit 77; }
. "$src/tests/kmod/guest-lib.sh"
. "$src/tests/ntb/switch-lib.sh"
sw_prepare
sw_smartio_build

# The edu driver, for the guests' kernel.
sw_edu_build

mkdir -p "$tmp/root/bin"
cp "$busybox" "$tmp/root/bin/busybox"
cp "$src/tests/ntb/msi-init.sh" "$tmp/root/init"
chmod 755 "$tmp/root/init"
cp "$src/tests/kmod/guest-common.sh" "$tmp/root/guest-common.sh"
cp "$out/ntb.ko" "$out/ntb_sioswitch.ko" "$out/edu/sio_edu_msi.ko" "$tmp/root/"
sw_smartio_root "$tmp/root"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

# Look-up-table entries of 128 MiB, seven per peer: toward host1, host0
# lends two devices (each takes the DMA window's entries, one for host1's
# 128 MiB of RAM, and the MSI window's) and maps host1's ivshmem's two
# BARs for edu: six; toward host2, host2's ivshmem's two.
sw_start $N 1G
# As check_lend.sh: the lender's device in an IOMMU domain of its own, the
# NTB functions in identity mode, interrupt remapping on (the borrower
# remaps the shadow's MSI as its NTB function's).
SW_APPEND="intel_iommu=on iommu=pt no_timer_check"
t0=$(date +%s)
# edu's DMA addresses are 28-bit unless told otherwise; each guest has
# an ivshmem-plain of 1 MiB (BAR 2), a peer-to-peer target.
ivshmem="-object memory-backend-ram,id=shm,size=1M -device ivshmem-plain,memdev=shm"
# shellcheck disable=SC2086 # $ivshmem is four words
sw_guest 0 1 256 -device intel-iommu,intremap=on \
	-device edu,dma_mask=0xffffffffffffffff $ivshmem
pid0=$guest_pid
# shellcheck disable=SC2086
sw_guest 1 1 128 -device intel-iommu,intremap=on $ivshmem
pid1=$guest_pid
# shellcheck disable=SC2086
sw_guest 2 1 128 -device intel-iommu,intremap=on $ivshmem
pid2=$guest_pid
wait "$pid0" "$pid1" "$pid2"
echo "all guests done after $(($(date +%s) - t0)) s"

sw_check p0-1 8
sw_check p1-1 14
sw_check p2-1 4
echo "--- switch"
cat "$tmp/switch.log"
if [ "$fails" -eq 0 ]; then
	echo "PASS: check-ntb (msi) on $kernel_tag"
	exit 0
fi
echo "FAIL: check-ntb (msi) ($fails problems)"
exit 1
