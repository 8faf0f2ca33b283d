#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's Switchtec line: builds the switch and its switchtec-nt device
# (contrib/qemu/build.sh) and the NTB modules (tests/ntb/build.sh), boots
# two TCG guests, two partitions of the Switchtec model, and runs
# tests/ntb/switchtec-bench-init.sh there.  Prints the guest's SWBENCH lines.
# Exit 77 with "SKIP: <why>" when something needed is missing; 1 with
# "FAIL: <why>" when the guests could not measure.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTBSW_BENCH_TIMEOUT:-900}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
command -v cpio >/dev/null || skip "no cpio"
file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
	skip "no static busybox"
sw=${NTBSW_OUT:-$build/contrib/qemu/build}
sh "$src/contrib/qemu/build.sh" "$sw" >"$build/ntbsw-build.log" 2>&1
st=$?
[ "$st" -eq 77 ] && skip "$(grep SKIP "$build/ntbsw-build.log")"
[ "$st" -eq 0 ] || fail "contrib/qemu/build.sh failed"
out=$build/tests/ntb/build
sh "$src/tests/ntb/build.sh" "$src" "$out" >"$build/ntbsw-mods.log" 2>&1
st=$?
[ "$st" -eq 77 ] && skip "kernel headers or source missing"
[ "$st" -eq 0 ] || fail "building the NTB modules"
KVER=${KVER:-$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -n 1 |
	       sed 's|.*/linux-headers-||')}
kernel=/boot/vmlinuz-$KVER
[ -r "$kernel" ] || skip "no $kernel"
tmp=$(mktemp -d /tmp/bench-ntbstx.XXXXXX)
pids=
trap 'kill $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root/bin"
cp /bin/busybox "$tmp/root/bin/busybox"
cp "$src/tests/ntb/switchtec-bench-init.sh" "$tmp/root/init"
cp "$src/tests/ntb/switchtec-perf.sh" "$tmp/root/"
chmod 755 "$tmp/root/init"
cp "$src/tests/kmod/guest-common.sh" "$tmp/root/"
for m in ntb switchtec ntb_hw_switchtec ntb_perf; do
	cp "$out/$m.ko" "$tmp/root/"
done
${CC:-cc} -static -O2 -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L \
	-Wall -Wextra -Werror -o "$tmp/root/bin/sw_bench" \
	"$src/tests/ntb/sw_bench.c" || skip "cannot link a static program"
. "$src/tests/kmod/guest-lib.sh"
guest_initrd "$tmp/root" "$tmp/initrd.gz"
"$sw/smartio-ntb-switch" -S "$tmp/sw.sock" -n 2 -w 2M \
	-x switchtec,luts=32,rids=32,bar2=4M,bar4=4M 2>"$tmp/switch.log" &
pids="$pids $!"
sleep 0.5
for p in 0 1; do
	timeout "$limit" "$sw/smartio-ntb-qemu" -accel tcg \
		-machine q35,memory-backend=ram -smp "$GUEST_SMP" -m 256 -display none \
		-monitor none -no-reboot \
		-object memory-backend-memfd,id=ram,size=256M,share=on \
		-serial "file:$tmp/p$p.log" -kernel "$kernel" \
		-initrd "$tmp/initrd.gz" \
		-append "console=ttyS0 panic=-1 no_timer_check swport=$p" \
		-device "switchtec-nt,switch=$tmp/sw.sock,port=$p,memdev=ram" \
		>"$tmp/p$p.qemu" 2>&1 &
	pids="$pids $!"
	gpids="${gpids:-} $!"
done
# shellcheck disable=SC2086
wait $gpids
cat "$tmp/p0.log" "$tmp/p1.log" | grep -a '^SWBENCH \|^NTB-PERF-RELOAD \|^FAIL: ' |
	tr -d '\r'
grep -q '^SWBENCH perf [0-9]' "$tmp/p0.log" || fail "no ntb_perf figure"
