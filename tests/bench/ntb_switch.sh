#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's switch lines: builds the smartio-ntb-port device
# (contrib/qemu/build.sh) and the NTB modules (tests/ntb/build.sh), boots
# two TCG guests on a 2-port smartio-ntb-switch and runs
# tests/ntb/switch-bench-init.sh there.  Prints the guest's SWBENCH lines.
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
tmp=$(mktemp -d /tmp/bench-ntbsw.XXXXXX)
pids=
trap 'kill $pids 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root/bin"
cp /bin/busybox "$tmp/root/bin/busybox"
cp "$src/tests/ntb/switch-bench-init.sh" "$tmp/root/init"
chmod 755 "$tmp/root/init"
cp "$src/tests/kmod/guest-common.sh" "$tmp/root/"
for m in ntb ntb_sioswitch ntb_perf; do
	cp "$out/$m.ko" "$tmp/root/"
done
${CC:-cc} -static -O2 -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L \
	-Wall -Wextra -Werror -o "$tmp/root/bin/sw_bench" \
	"$src/tests/ntb/sw_bench.c" || skip "cannot link a static program"
. "$src/tests/kmod/guest-lib.sh"
guest_initrd "$tmp/root" "$tmp/initrd.gz"
"$sw/smartio-ntb-switch" -S "$tmp/sw.sock" -n 2 -w 2M 2>"$tmp/switch.log" &
pids="$pids $!"
sleep 0.5
for p in 0 1; do
	timeout "$limit" "$sw/smartio-ntb-qemu" -accel tcg \
		-machine q35,memory-backend=ram -smp "$GUEST_SMP" -m 256 -display none \
		-monitor none -no-reboot \
		-object memory-backend-memfd,id=ram,size=256M,share=on \
		-serial "file:$tmp/p$p.log" -kernel "$kernel" \
		-initrd "$tmp/initrd.gz" \
		-append "console=ttyS0 panic=-1 swport=$p" \
		-device "smartio-ntb-port,switch=$tmp/sw.sock,port=$p,memdev=ram" \
		-device edu >"$tmp/p$p.qemu" 2>&1 &
	pids="$pids $!"
	gpids="${gpids:-} $!"
done
# shellcheck disable=SC2086
wait $gpids
grep -a '^SWBENCH ' "$tmp/p0.log" | tr -d '\r'
grep -q '^SWBENCH perf [0-9]' "$tmp/p0.log" || fail "no ntb_perf figure"
