#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of make bench's switch guests (tests/bench/ntb_switch.sh): two
# ports of a 2-port smartio-ntb-switch.  Port 0 measures, side by side:
# ntb_perf's throughput to port 1 and memcpy inside this guest (the same
# bytes, the same chunks); the same copy loop between buffers that
# collide in TCG's TLB and buffers that do not; memcpy from user space
# into the window ntb_perf used (port 1's RAM); an 8-byte read of port
# 1's edu register through a window and of this guest's own edu register.
# Port 1 points an inbound entry at its edu and waits.  Lines:
# "SWBENCH ...".
. /guest-common.sh
P=$(karg swport)
dev_of() {
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor"):$(cat "$d/device")" = "$1" ] &&
			{ basename "$d"; return; }
	done
}
bar() { sed -n "$(($2 + 1))p" "/sys/bus/pci/devices/$1/resource" | cut -d' ' -f1; }
pci=$(dev_of 0x1234:0x5a10)
edu=$(dev_of 0x1234:0x11e8)
R=$(bar "$pci" 0)
B4=$(bar "$pci" 4)
MW=$(devmem $((R + 0x20)) 64)
ENT=$(devmem $((R + 0x28)) 64)
spad31() { devmem $((R + 0x100 + 4 * 31)) 32; }
insmod /ntb.ko
insmod /ntb_sioswitch.ko
insmod /ntb_perf.ko total_order=26
if [ "$P" = 1 ]; then
	# Entry (source 0, window 1, entry 1) -> this guest's edu BAR0.
	e=$((R + 0x1000 + ((0 * 2 + 1) * 8 + 1) * 16))
	ebar=$(bar "$edu" 0)
	devmem "$e" 32 $((ebar & 0xffffffff))
	devmem $((e + 4)) 32 $((ebar >> 32))
	devmem $((e + 12)) 32 1
	devmem $((e + 8)) 32 1
	done0() { [ "$(spad31)" = 0x00000B0B ]; }
	waitfor 900 done0
	power_off "SWBENCH-END"
fi
F=/sys/kernel/debug/ntb_perf/$pci
perf_mbs() {
	r=$(grep -m1 MBytes/s "$F/run")
	echo "$r" | sed -n 's/.* \([0-9]*\) MBytes\/s.*/\1/p'
}
for i in $(seq 1 120); do
	echo 0 >"$F/run" 2>/dev/null && break
	sleep 1
done
# ntb_perf as it comes after an idle shell, then again once the kernel
# has used many pages.  TCG's TLB is direct-mapped and sized to recent use
# (sw_bench.c, bench_tlb); ntb_perf's source (kmalloc, 2 MiB aligned) and
# its window mapping (ioremap, 512 KiB aligned) lie a multiple of 128
# pages apart, so in a small TLB each load of its copy evicts the store's
# entry and back.  Reading a 64 MiB file eight times over (QEMU resizes
# the TLB when a process ends) leaves the TLB large when ntb_perf starts.
echo "SWBENCH perf-cold $(perf_mbs)"
dd if=/dev/zero of=/tmp/warm bs=1M count=64 2>/dev/null
for i in 1 2 3 4 5 6 7 8; do cat /tmp/warm >/dev/null; done
echo 0 >"$F/run"
echo "SWBENCH perf $(perf_mbs)"
echo "SWBENCH slow-accesses $(($(devmem $((R + 0x80)) 64)))"
sw_bench memcpy 67108864 524288
# ntb_perf's own copy loop into this guest's RAM (sw_bench.c, bench_copyio)
sw_bench copyio 67108864 524288 "$(perf_out_size "$F")"
sw_bench tlb 67108864 262144
sw_bench tlb 67108864 262145
# The window ntb_perf used (window 0 to port 1, translated by port 1's
# ntb_perf to its inbound buffer, a RAM alias here): the same bytes by
# memcpy, in the same 512 KiB chunks, and the forwarded accesses it cost.
s0=$(devmem $((R + 0x80)) 64)
sw_bench write $(($(bar "$pci" 2) + MW)) 524288 67108864
echo "SWBENCH write-forwarded $(($(devmem $((R + 0x80)) 64) - s0))"
# Port 1's edu, identification register, through window 1 entry 1.
a=$((B4 + 1 * MW + ENT + 0x80))	# edu's 8-byte DMA source register
sw_bench read8 "$a" 2000 | sed 's/read8/read8-remote/'
sw_bench read8 $(($(bar "$edu" 0) + 0x80)) 2000 | sed 's/read8/read8-local/'
devmem $((R + 0x200 + 0x80 + 4 * 31)) 32 0xb0b
power_off "SWBENCH-END"
