#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's shared-NVMe lines (tests/bench/bench.py): four QEMU guests
# on one 4-port smartio-ntb-switch, as make check-ntb-nvmeq boots them
# (tests/ntb/check_nvmeq.sh).  host0 reads its NVMe natively first, then
# lends it in shared mode; smartio-nvmeq's manager on host1; rounds of one
# client on host1 alone, then one client on each of host1, host2 and
# host3 at once (tests/bench/nvmeq-bench-init.sh).  Prints each guest's
# "NVMEQBENCH <native|one|three> <round> host<P> <smartio-nvmeq bench
# line>" lines for bench.py.
#
# Environment: SRCDIR, BUILDDIR, KVER, NTB_TIMEOUT (seconds per guest,
# default 1800), NVMEQ_BENCH_SECS (seconds per run, default 8),
# NVMEQ_BENCH_ROUNDS (default 3), NTB_KEEP=1 keeps the work directory.
# Exit 77 with "SKIP: <why>" when qemu, busybox-static, cpio, the kernel
# image, headers or source are missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-1800}
N=4

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
. "$src/tests/kmod/guest-lib.sh"
. "$src/tests/ntb/switch-lib.sh"
sw_prepare >&2
sw_smartio_build

mkdir -p "$tmp/root/bin"
sw_nvmeq_build "$tmp/root"
# The native reader, static too.
${CC:-cc} -static -O2 -std=c11 -Wall -Wextra -Werror \
	-o "$tmp/root/bin/blk_randread" "$src/tests/bench/blk_randread.c" \
	>"$tmp/cc.log" 2>&1 || { cat "$tmp/cc.log"; fail "building blk_randread"; }
guest_root "$tmp/root" "$src/tests/bench/nvmeq-bench-init.sh" \
	"$out/smartio/smartio.ko" "$sfs" "$KVER" ||
	skip "modprobe cannot resolve nvme for $KVER"
cp "$out/ntb.ko" "$out/ntb_sioswitch.ko" "$tmp/root/"
sw_smartio_root "$tmp/root"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

# The windows as check-ntb-nvmeq's: borrowers of 128 MiB.  The drive
# lives in memory (/dev/shm), so that no run waits for the host's disk.
sw_start $N 1G
SW_APPEND="intel_iommu=on iommu=pt no_timer_check nvmeqsecs=${NVMEQ_BENCH_SECS:-8} nvmeqrounds=${NVMEQ_BENCH_ROUNDS:-3}"
img=$(mktemp -d /dev/shm/ntb-nvmeq-bench.XXXXXX) || fail "no /dev/shm"
trap 'sw_cleanup; rm -rf "$img"' EXIT
dd if=/dev/zero of="$img/nvme0.img" bs=1M count=64 status=none ||
	fail "cannot write the drive image in /dev/shm"
t0=$(date +%s)
sw_guest 0 1 256 -device intel-iommu,intremap=on \
	-drive "file=$img/nvme0.img,if=none,id=nv,format=raw" \
	-device nvme,serial=sio0,drive=nv
pid0=$guest_pid
for p in 1 2 3; do
	sw_guest $p 1 128 -device intel-iommu,intremap=on
	eval "pid$p=\$guest_pid"
done
# shellcheck disable=SC2154
wait "$pid0" "$pid1" "$pid2" "$pid3"
echo "all guests done after $(($(date +%s) - t0)) s" >&2

sw_bench_lines NVMEQBENCH 4 "a shared-NVMe bench guest"
