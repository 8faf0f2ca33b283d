#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's SR-IOV lines (tests/bench/bench.py): three QEMU guests on
# one 3-port smartio-ntb-switch, as make check-ntb-sriov boots them
# (tests/ntb/check_sriov.sh): host0's NVMe with two VFs, VF 0 lent to
# host1 and VF 1 to host2; rounds of 4 KiB random reads on the PF by
# host0's own driver, then on each VF by its borrower's driver, one after
# the other (tests/bench/vf-bench-init.sh).  Prints each guest's
# "VFBENCH <pf|vf0|vf1> <round> host<P> <blk_randread line>" lines for
# bench.py.
#
# Environment: SRCDIR, BUILDDIR, KVER, NTB_TIMEOUT (seconds per guest,
# default 1800), VF_BENCH_SECS (seconds per run, default 15),
# VF_BENCH_ROUNDS (default 3), NTB_KEEP=1 keeps the work directory.
# Exit 77 with "SKIP: <why>" when qemu, busybox-static, cpio, the kernel
# image, headers or source are missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-1800}
N=3

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
. "$src/tests/kmod/guest-lib.sh"
. "$src/tests/ntb/switch-lib.sh"
sw_prepare >&2
sw_smartio_build

mkdir -p "$tmp/root/bin"
# The VFs' admin commands and the reader, static (no C library in the
# guests).
${CC:-cc} -static -O2 -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror \
	-o "$tmp/root/bin/nvme_vf" "$src/tests/ntb/nvme_vf.c" \
	>"$tmp/cc.log" 2>&1 || { cat "$tmp/cc.log"; fail "building nvme_vf"; }
${CC:-cc} -static -O2 -std=c11 -Wall -Wextra -Werror \
	-o "$tmp/root/bin/blk_randread" "$src/tests/bench/blk_randread.c" \
	>"$tmp/cc.log" 2>&1 || { cat "$tmp/cc.log"; fail "building blk_randread"; }
guest_root "$tmp/root" "$src/tests/bench/vf-bench-init.sh" \
	"$out/smartio/smartio.ko" "$sfs" "$KVER" ||
	skip "modprobe cannot resolve nvme for $KVER"
cp "$out/ntb.ko" "$out/ntb_sioswitch.ko" "$tmp/root/"
sw_smartio_root "$tmp/root"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

# The windows as check-ntb-sriov's before fio: borrowers of 128 MiB.
# The namespaces live in memory (/dev/shm), so that no run waits for
# the host's disk.
sw_start $N 1G
SW_APPEND="intel_iommu=on iommu=pt no_timer_check vfsecs=${VF_BENCH_SECS:-15} vfrounds=${VF_BENCH_ROUNDS:-3}"
img=$(mktemp -d /dev/shm/ntb-vf-bench.XXXXXX) || fail "no /dev/shm"
trap 'sw_cleanup; rm -rf "$img"' EXIT
for ns in 1 2 3; do
	dd if=/dev/zero of="$img/ns$ns.img" bs=1M count=16 status=none ||
		fail "cannot write the namespace images in /dev/shm"
done
t0=$(date +%s)
sw_guest 0 1 256 -device intel-iommu,intremap=on \
	-device nvme-subsys,id=subsys0,nqn=smartio-sriov \
	-device nvme,id=nvme0,serial=sio-sriov,subsys=subsys0,sriov_max_vfs=2,sriov_vq_flexible=4,sriov_vi_flexible=2 \
	-drive "file=$img/ns1.img,if=none,id=ns1,format=raw" \
	-device nvme-ns,bus=nvme0,drive=ns1,nsid=1,shared=off \
	-drive "file=$img/ns2.img,if=none,id=ns2,format=raw" \
	-device nvme-ns,bus=nvme0,drive=ns2,nsid=2,detached=on \
	-drive "file=$img/ns3.img,if=none,id=ns3,format=raw" \
	-device nvme-ns,bus=nvme0,drive=ns3,nsid=3,detached=on
pid0=$guest_pid
for p in 1 2; do
	sw_guest $p 1 128 -device intel-iommu,intremap=on
	eval "pid$p=\$guest_pid"
done
# shellcheck disable=SC2154
wait "$pid0" "$pid1" "$pid2"
echo "all guests done after $(($(date +%s) - t0)) s" >&2

sw_bench_lines VFBENCH 3 "an SR-IOV bench guest"
