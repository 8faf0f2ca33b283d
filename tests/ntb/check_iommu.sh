#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-ntb, the IOMMU part (issue 29): two QEMU guests on one 2-port
# smartio-ntb-switch with 4 GiB windows (look-up-table entries of 512
# MiB).  host0 lends its NVMe and edu; host1 has 1.5 GiB of RAM and its
# NTB function behind an intel-iommu with interrupt remapping, in a
# translated domain (no iommu=pt), which the switch honours (ntbsw-iommu):
# a borrow's DMA window is a range of that domain.  The unmodified nvme
# driver moves 256 MiB through a strict 256 MiB window from buffers
# spread over 1 GiB, every byte equal; edu's writes to an IOVA never
# mapped and to a page after its unmap are blocked and logged as DMAR
# faults, canaries unchanged; host0 reads the data back; premap=1 maps
# all RAM in advance (tests/ntb/iommu-init.sh).  Both nodes' dma_window
# lines must agree.
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
N=2

skip() { echo "SKIP: check-ntb (iommu): $*"; exit 77; }
. "$src/tests/kmod/guest-lib.sh"
. "$src/tests/ntb/switch-lib.sh"
sw_prepare
sw_smartio_build

mkdir -p "$out/edu"
cp "$src/tests/ntb/edu/sio_edu_msi.c" "$src/tests/ntb/edu/Kbuild" "$out/edu/"
if ! kernel_run "$out" -- make -s -C "$kdir" M="$out/edu" modules \
	>"$out/edu.log" 2>&1; then
	cat "$out/edu.log"
	echo "FAIL: building sio_edu_msi.ko"
	exit 1
fi
mkdir -p "$tmp/root/bin"
${CC:-cc} -static -O2 -std=c11 -Wall -Wextra -Werror \
	-o "$tmp/root/bin/sio_dmaspread" "$src/tests/ntb/sio_dmaspread.c" \
	>"$tmp/cc-spread.log" 2>&1 || { cat "$tmp/cc-spread.log"; exit 1; }
guest_root "$tmp/root" "$src/tests/ntb/iommu-init.sh" "$out/smartio/smartio.ko" \
	"$sfs" "$KVER" || skip "modprobe cannot resolve nvme for $KVER"
cp "$out/ntb.ko" "$out/ntb_sioswitch.ko" "$out/edu/sio_edu_msi.ko" "$tmp/root/"
sw_smartio_root "$tmp/root"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

# Entries of 512 MiB, seven per peer: host1's premapped window over its
# 1.5 GiB (2 GiB) takes four and the MSI window one.
sw_start $N 4G
t0=$(date +%s)
dd if=/dev/zero of="$tmp/nvme0.img" bs=1M count=0 seek=256 status=none
# host0 as in check_lend.sh: its NTB function not translated (the
# intel-iommu comes after it), the lent device in a domain of its own.
SW_APPEND="intel_iommu=on iommu=pt no_timer_check"
sw_guest 0 1 256 -device intel-iommu,intremap=on \
	-device edu,dma_mask=0xffffffffffffffff \
	-drive "file=$tmp/nvme0.img,if=none,id=nv,format=raw" \
	-device nvme,serial=sio0,drive=nv
pid0=$guest_pid
# host1: the intel-iommu before the NTB function, which it translates.
SW_APPEND="intel_iommu=on no_timer_check" SW_IOMMU="intremap=on" \
	sw_guest 1 1 1536
pid1=$guest_pid
wait "$pid0" "$pid1"
echo "all guests done after $(($(date +%s) - t0)) s"

sw_check p0-1 5
sw_check p1-1 18
w0=$(sed -n 's/^DMA-WINDOW host0 //p' "$tmp/p0-1.log" | tr -d '\r')
w1=$(sed -n 's/^DMA-WINDOW host1 //p' "$tmp/p1-1.log" | tr -d '\r')
if [ -n "$w1" ] && [ "$w0" = "$w1" ]; then
	echo "PASS: host0's and host1's dma_window agree: $w1"
else
	echo "FAIL: dma_window: host0 '$w0', host1 '$w1'"
	fails=$((fails + 1))
fi
echo "--- switch"
cat "$tmp/switch.log"
if [ "$fails" -eq 0 ]; then
	echo "PASS: check-ntb (iommu) on $kernel_tag"
	exit 0
fi
echo "FAIL: check-ntb (iommu) ($fails problems)"
exit 1
