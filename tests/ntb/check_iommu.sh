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
# all RAM in advance, and a segment of host1 mapped for edu over that
# window takes edu's DMA, as does one over a strict window until its
# unmap for edu, after which edu's write there is a DMAR fault; host0 reads and writes each page of a segment
# of host1 through host1's translated NTB function; a borrow for another
# node is refused before it is sent (tests/ntb/iommu-init.sh).  Both
# nodes' dma_window lines must agree.
#
# NTB_HW=switchtec runs the same checks (iommu-init.sh, swhw=switchtec)
# on two partitions of the Switchtec model (switchtec-nt) under the
# unmodified switchtec.ko and ntb_hw_switchtec.ko with LUT windows: the
# DMA windows go to the direct window of BAR 4 (2 GiB: premap=1's window
# over all of host1's RAM), one translation per pair of partitions, so
# host1 holds one borrow at a time there; the switch walks host1's VT-d
# tables as it does for smartio-ntb-port (contrib/qemu/ntbsw-iommu.c,
# shared by both models).
#
# Environment: SRCDIR, BUILDDIR (set by make), KVER, LINUX_SOURCE (see
# build.sh), NTB_TIMEOUT (seconds per guest, default 1800), NTB_KEEP=1
# keeps the work directory, NTBSW_OUT (see check_switch.sh).  Exit 77
# when qemu, busybox-static, cpio, the kernel image, headers or source
# are missing.  NTB_HW: sioswitch (default) or switchtec.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-1800}
hw=${NTB_HW:-sioswitch}
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
cp "$out/ntb.ko" "$out/edu/sio_edu_msi.ko" "$tmp/root/"
if [ "$hw" = switchtec ]; then
	cp "$out/switchtec.ko" "$out/ntb_hw_switchtec.ko" "$tmp/root/"
else
	cp "$out/ntb_sioswitch.ko" "$tmp/root/"
fi
sw_smartio_root "$tmp/root"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

nvme_opts=
qemu_log=
if [ "$hw" = switchtec ]; then
	# 64 KiB LUT entries for BARs and the MSI window (edu's 1 MiB BAR
	# takes 16 of the 31 left after the driver's shared one), the DMA
	# windows on BAR 4's direct window, 2 GiB: premap=1's window over
	# host1's 1.5 GiB.  ID protection on, as in check_lend.sh.
	SW_DEVICE=switchtec-nt
	SW_SWITCH_ARGS="-x switchtec,luts=32,rids=32,bar2=4M,bar4=2G,idprot=1"
	sw_start $N
	# A 64 KiB entry must not expose the NVMe's MSI-X table: its own
	# BAR, and doorbells of 64 KiB (check_lend.sh).
	nvme_opts=,msix-exclusive-bar=on,max_ioqpairs=7679
	# The model logs what the chip would refuse.
	qemu_log="-d guest_errors"
else
	# Entries of 512 MiB, seven per peer: host1's premapped window over
	# its 1.5 GiB (2 GiB) takes four and the MSI window one.
	sw_start $N 4G
fi
t0=$(date +%s)
dd if=/dev/zero of="$tmp/nvme0.img" bs=1M count=0 seek=256 status=none
# host0 as in check_lend.sh: its NTB function not translated (the
# intel-iommu comes after it), the lent device in a domain of its own.
SW_APPEND="intel_iommu=on iommu=pt no_timer_check swhw=$hw"
# shellcheck disable=SC2086 # $qemu_log is two words or none
sw_guest 0 1 256 -device intel-iommu,intremap=on \
	-device edu,dma_mask=0xffffffffffffffff \
	-drive "file=$tmp/nvme0.img,if=none,id=nv,format=raw" \
	-device "nvme,serial=sio0,drive=nv$nvme_opts" $qemu_log
pid0=$guest_pid
# host1: the intel-iommu before the NTB function, which it translates.
# shellcheck disable=SC2086
SW_APPEND="intel_iommu=on no_timer_check swhw=$hw" SW_IOMMU="intremap=on" \
	sw_guest 1 1 1536 $qemu_log
pid1=$guest_pid
wait "$pid0" "$pid1"
echo "all guests done after $(($(date +%s) - t0)) s"

sw_check p0-1 5
sw_check p1-1 22
w0=$(sed -n 's/^DMA-WINDOW host0 //p' "$tmp/p0-1.log" | tr -d '\r')
w1=$(sed -n 's/^DMA-WINDOW host1 //p' "$tmp/p1-1.log" | tr -d '\r')
if [ -n "$w1" ] && [ "$w0" = "$w1" ]; then
	echo "PASS: host0's and host1's dma_window agree: $w1"
else
	echo "FAIL: dma_window: host0 '$w0', host1 '$w1'"
	fails=$((fails + 1))
fi
# host1's QEMU published its NTB function's DMA as translated, which the
# switch then walks for host0's accesses through a window.
if grep -q "1: its DMA is translated by VT-d" "$tmp/p1-1.qemu"; then
	echo "PASS: port 1's NTB function ($hw) was in a translated domain"
else
	echo "FAIL: port 1's QEMU never saw its NTB function ($hw) translated"
	fails=$((fails + 1))
fi
if [ "$hw" = switchtec ]; then
	# The chip's refusals the model logged: none (its lines of what
	# the function's DMA translation is are no refusal).
	for p in 0 1; do
		if grep 'switchtec-nt' "$tmp/p$p-1.qemu" | grep -qv 'its DMA is'; then
			echo "FAIL: port $p: the model logged guest errors:"
			grep 'switchtec-nt' "$tmp/p$p-1.qemu" | grep -v 'its DMA is' |
				head -n 20
			fails=$((fails + 1))
		else
			echo "PASS: port $p: no access the chip would refuse"
		fi
	done
fi
echo "--- switch"
cat "$tmp/switch.log"
if [ "$fails" -eq 0 ]; then
	echo "PASS: check-ntb (iommu, $hw) on $kernel_tag"
	exit 0
fi
echo "FAIL: check-ntb (iommu, $hw) ($fails problems)"
exit 1
