#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-ntb, the SR-IOV part (SmartIO 3.1 and 7.1.6, MPIOV III):
# three QEMU guests on one 3-port smartio-ntb-switch form one smartio
# cluster; host0's NVMe has SR-IOV (QEMU's nvme in a subsystem, two VFs
# with flexible queues and vectors, three namespaces: 1 on the PF, 2 and
# 3 attached to the VFs by host0), enabled through sriov_numvfs and lent
# VF 0 to host1 and VF 1 to host2, whose nvme drivers write and read
# their VF's namespace while host0's driver uses the PF; refusals on the
# way (tests/ntb/sriov-init.sh).  Each borrower also runs fio with
# --verify (4 KiB random writes, read back and checked by fio) on the
# second half of its namespace while host0's driver still does I/O on the
# PF.  Afterwards each namespace's image holds what its one user wrote.
#
# Environment: SRCDIR, BUILDDIR (set by make), KVER, LINUX_SOURCE (see
# build.sh), NTB_TIMEOUT (seconds per guest, default 1800), NTB_KEEP=1
# keeps the work directory.  Exit 77 when qemu, busybox-static, cpio, fio,
# mke2fs, the kernel image, headers or source are missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-1800}
N=3
MIB=8

skip() { echo "SKIP: check-ntb (sriov): $*"; exit 77; }
. "$src/tests/kmod/guest-lib.sh"
. "$src/tests/ntb/switch-lib.sh"
fio=$(command -v fio) || skip "no fio (apt-get install fio)"
command -v mke2fs >/dev/null || skip "no mke2fs (apt-get install e2fsprogs)"
sw_prepare
sw_smartio_build

mkdir -p "$tmp/root/bin"
# The admin commands of nvme-cli's virt-mgmt and attach-ns, static.
${CC:-cc} -static -O2 -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror \
	-o "$tmp/root/bin/nvme_vf" "$src/tests/ntb/nvme_vf.c" \
	>"$tmp/cc-vf.log" 2>&1 || { cat "$tmp/cc-vf.log"; exit 1; }
# The borrowers' fio and its libraries (80 MiB with Debian's: Ceph's and
# ICU's among them) on a read-only ext2 drive of their own, not in the
# initramfs, which a 128 MiB guest could not hold; the guest maps what
# fio touches.  Borrowers of 384 MiB took more of host0's look-up-table
# entries for their DMA windows than there are (ENOSPC on the second).
mkdir -p "$tmp/fio"
cp -L "$fio" "$tmp/fio/fio"
guest_libs "$tmp/fio" "$fio"
mke2fs -q -t ext2 -d "$tmp/fio" "$tmp/fio.img" 160M >/dev/null ||
	{ echo "FAIL: mke2fs -d of fio's drive"; exit 1; }
guest_root "$tmp/root" "$src/tests/ntb/sriov-init.sh" "$out/smartio/smartio.ko" \
	"$sfs" "$KVER" "ext4 virtio_pci virtio_blk" ||
	skip "modprobe cannot resolve nvme, ext4 or virtio_blk for $KVER"
cp "$out/ntb.ko" "$out/ntb_sioswitch.ko" "$tmp/root/"
sw_smartio_root "$tmp/root"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

# Look-up-table entries of 128 MiB, seven per peer: a borrow takes three
# of host0's toward its borrower (BAR, DMA and MSI windows).
sw_start $N 1G
SW_APPEND="intel_iommu=on iommu=pt no_timer_check"
t0=$(date +%s)
for ns in 1 2 3; do
	dd if=/dev/zero of="$tmp/ns$ns.img" bs=1M count=0 seek=16 status=none
done
# Two VFs of 2 queues (admin and one I/O) and 1 vector each (QEMU
# hw/nvme/ctrl.c: the flexible resources at least 2 and 1 per VF);
# namespace 1 is the PF's alone, 2 and 3 start detached.
sw_guest 0 1 256 -device intel-iommu,intremap=on \
	-device nvme-subsys,id=subsys0,nqn=smartio-sriov \
	-device nvme,id=nvme0,serial=sio-sriov,subsys=subsys0,sriov_max_vfs=2,sriov_vq_flexible=4,sriov_vi_flexible=2 \
	-drive "file=$tmp/ns1.img,if=none,id=ns1,format=raw" \
	-device nvme-ns,bus=nvme0,drive=ns1,nsid=1,shared=off \
	-drive "file=$tmp/ns2.img,if=none,id=ns2,format=raw" \
	-device nvme-ns,bus=nvme0,drive=ns2,nsid=2,detached=on \
	-drive "file=$tmp/ns3.img,if=none,id=ns3,format=raw" \
	-device nvme-ns,bus=nvme0,drive=ns3,nsid=3,detached=on
pid0=$guest_pid
for p in 1 2; do
	sw_guest $p 1 128 -device intel-iommu,intremap=on \
		-drive "file=$tmp/fio.img,if=virtio,format=raw,readonly=on"
	eval "pid$p=\$guest_pid"
done
# shellcheck disable=SC2154
wait "$pid0" "$pid1" "$pid2"
echo "all guests done after $(($(date +%s) - t0)) s"

sw_check p0-1 16
sw_check p1-1 12
sw_check p2-1 9
# Each namespace holds what its one user wrote, and nothing of the others.
for ns in 1 2 3; do
	case $ns in
	1) who=host0-pf ;;
	2) who=host1-vf ;;
	3) who=host2-vf ;;
	esac
	want=$(yes "$who" | head -c $((MIB << 20)) | md5sum | cut -d' ' -f1)
	got=$(head -c $((MIB << 20)) "$tmp/ns$ns.img" | md5sum | cut -d' ' -f1)
	if [ "$got" = "$want" ]; then
		echo "PASS: namespace $ns's image holds the $MIB MiB $who wrote ($got)"
	else
		echo "FAIL: namespace $ns's image: md5 $got, $who wrote $want"
		fails=$((fails + 1))
	fi
done
echo "--- switch"
cat "$tmp/switch.log"
if [ "$fails" -eq 0 ]; then
	echo "PASS: check-ntb (sriov) on $kernel_tag"
	exit 0
fi
echo "FAIL: check-ntb (sriov) ($fails problems)"
exit 1
