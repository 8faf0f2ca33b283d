#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of make bench's Switchtec guests (tests/bench/ntb_switchtec.sh):
# two partitions of the switchtec-nt model under the unmodified
# switchtec.ko and ntb_hw_switchtec.ko.  Port 0 measures, side by side:
# ntb_perf's throughput to port 1 (through its direct window, a RAM alias
# of port 1's RAM) against the same copy loop into this guest's own RAM
# (sw_bench copyio: the same bytes, 512 KiB chunks and buffer sizes, and
# memcpy_toio's "rep movsl"), and the C library's memcpy beside them;
# ntb_perf once as it comes and once after the guest has grown TCG's TLB
# (see tests/ntb/switch-bench-init.sh).  Port 1 keeps its
# ntb_perf until port 0's leaves.  ntb_perf is started as
# tests/ntb/switchtec-perf.sh says.  Lines: "SWBENCH ...",
# "NTB-PERF-RELOAD ...".
. /guest-common.sh
P=$(karg swport)
fail() { echo "FAIL: port $P: $*"; }
pci=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x11f8 ] && pci=$(basename "$d")
done
insmod /ntb.ko
insmod /switchtec.ko
insmod /ntb_hw_switchtec.ko
F=/sys/kernel/debug/ntb_perf/$pci
PERF_ARGS=total_order=26
. /switchtec-perf.sh
[ "$P" = 1 ] && sleep 15
# shellcheck disable=SC2086 # parameters, split
insmod /ntb_perf.ko $PERF_ARGS || fail "insmod ntb_perf"
if [ "$P" = 1 ]; then
	perf_stay || fail "ntb_perf: $(cat "$F/info")"
	power_off "SWBENCH-END"
fi
perf_setup || { fail "ntb_perf not set up: $(cat "$F/info")"; power_off "SWBENCH-END"; }
perf_mbs() {
	timeout 300 sh -c "echo 0 >'$F/run'" 2>/dev/null || return
	grep -m1 MBytes/s "$F/run" | sed -n 's/.* \([0-9]*\) MBytes\/s.*/\1/p'
}
echo "SWBENCH perf-cold $(perf_mbs)"
dd if=/dev/zero of=/tmp/warm bs=1M count=64 2>/dev/null
for i in 1 2 3 4 5 6 7 8; do cat /tmp/warm >/dev/null; done
# ntb_perf copies its source into the window in 512 KiB chunks, both
# buffers the window's size; copyio does the same into this guest's RAM.
span=$(perf_out_size "$F")
# Interleaved: ntb_perf, memcpy, copyio, three times (the machine is shared).
for i in 1 2 3; do
	echo "SWBENCH perf $(perf_mbs)"
	sw_bench memcpy 67108864 524288
	sw_bench copyio 67108864 524288 "$span"
done
rmmod ntb_perf
power_off "SWBENCH-END"
