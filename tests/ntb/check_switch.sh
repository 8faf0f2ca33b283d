#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-ntb, the switch part: four QEMU guests, each with one
# smartio-ntb-port function on one smartio-ntb-switch (contrib/qemu),
# run tests/ntb/switch-init.sh (ntb_pingpong and ntb_perf between every
# pair, ntb_tool with all peers, blocked accesses, a peer's edu
# device reached through a window by CPU and by DMA); port 3 powers off
# and the harness measures how soon port 2 reports its link down, then
# boots it again.
#
# Environment: SRCDIR, BUILDDIR (set by make), KVER, LINUX_SOURCE (see
# build.sh), NTB_TIMEOUT (seconds per guest, default 900), NTB_KEEP=1
# keeps the work directory, NTBSW_OUT (where contrib/qemu/build.sh builds;
# default BUILDDIR/contrib/qemu/build).  Exit 77 when qemu, busybox-static,
# cpio, the kernel image, headers or source are missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-900}
N=4

skip() { echo "SKIP: check-ntb (switch): $*"; exit 77; }
. "$src/tests/ntb/switch-lib.sh"
sw_prepare

mkdir -p "$tmp/root/bin"
cp "$busybox" "$tmp/root/bin/busybox"
cp "$src/tests/ntb/switch-init.sh" "$tmp/root/init"
chmod 755 "$tmp/root/init"
cp "$src/tests/kmod/guest-common.sh" "$tmp/root/guest-common.sh"
for m in ntb ntb_sioswitch ntb_tool ntb_pingpong ntb_perf; do
	cp "$out/$m.ko" "$tmp/root/"
done
. "$src/tests/kmod/guest-lib.sh"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

sw_start $N

# guest PORT PHASE: boot one guest in the background; pid in $guest_pid.
guest() {
	sw_guest "$1" "$2" 256 -device edu,dma_mask=0xffffffffffffffff
}

t0=$(date +%s)
for p in 0 1 2 3; do
	guest $p 1
	eval "pid$p=\$guest_pid"
done
# Port 3 powers off mid-transfer: how soon does port 2 see it?
# shellcheck disable=SC2154
wait "$pid3"
td=$(date +%s.%N)
down=
n=0
while [ "$n" -lt 100 ]; do
	if grep -q "link to port 3 down" "$tmp/p2-1.log"; then
		down=$(awk -v a="$(date +%s.%N)" -v b="$td" 'BEGIN { printf "%.1f", a - b }')
		break
	fi
	n=$((n + 1))
	sleep 0.1
done
echo "port 3 powered off after $(($(date +%s) - t0)) s; port 2 reported its link down ${down:-never} s later"
guest 3 2
# shellcheck disable=SC2154
wait "$guest_pid" "$pid0" "$pid1" "$pid2"
echo "all guests done after $(($(date +%s) - t0)) s"

sw_check p0-1 27
sw_check p1-1 27
sw_check p2-1 23
sw_check p3-1 17
sw_check p3-2 5
if [ -z "$down" ] || awk -v d="$down" 'BEGIN { exit !(d > 3) }'; then
	echo "FAIL: port 2 saw port 3's link down after ${down:-never} s (limit 3 s)"
	fails=$((fails + 1))
else
	echo "PASS: port 2 saw port 3's link down ${down} s after it powered off"
fi
grep -h '^NTB-PERF' "$tmp"/p[0-3]-1.log | tr -d '\r'
echo "--- switch"
cat "$tmp/switch.log"
if [ "$fails" -eq 0 ]; then
	echo "PASS: check-ntb (switch) on $kernel_tag"
	exit 0
fi
echo "FAIL: check-ntb (switch) ($fails problems)"
exit 1
