#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of make bench's QEMU guest (tests/bench/kmod_dd.sh): O_DIRECT dd
# through the guest's NVMe natively, then through the shadow function of
# the same controller while smartio.ko lends it to host1 (loopback), in
# rounds: native, borrow, shadow, return, native, ...  Interleaving puts
# any drift of the host's load on both sides alike.
# Prints "DD <native|shadow> <read|write> <bs> <bytes> <ns>" per transfer,
# "DD-SKIP <why>" when the guest cannot measure, and "DD-END" last.
. /guest-common.sh
mkdir -p /etc /run /smartio
mount -t tmpfs run /run
ln -sf /proc/mounts /etc/mtab
echo "DD-START"

rounds=5
# bs:bytes pairs; 4 KiB requests move less so that the run stays short.
sizes="1M:67108864 4k:8388608"

finish() { power_off DD-END; }
skip() { echo "DD-SKIP $*"; finish; }
# now_ns: CLOCK_MONOTONIC in ns (busybox dd prints no rate, /proc/uptime
# has only hundredths of a second).
now_ns() { sed -n 's/^now at \([0-9]*\) nsecs$/\1/p;/^now at/q' /proc/timer_list; }
# blk_of PCI-FUNCTION: the block device of its nvme controller, once the
# driver is bound and the namespace is there.
blk_of() {
	local c
	c=$(ls /sys/bus/pci/devices/"$1"/nvme 2>/dev/null | head -n 1)
	[ -n "$c" ] && [ -b "/dev/${c}n1" ] && echo "${c}n1"
}
has_blk() { [ -n "$(blk_of "$1")" ]; }

# pass SIDE DEV: every size, a write then a read, O_DIRECT.
pass() {
	local side=$1 dev=/dev/$2 sz bs bytes count t0 t1
	for sz in $sizes; do
		bs=${sz%:*}
		bytes=${sz#*:}
		case $bs in
		1M) count=$((bytes / 1048576)) ;;
		4k) count=$((bytes / 4096)) ;;
		esac
		t0=$(now_ns)
		dd if=/dev/zero of="$dev" bs="$bs" count="$count" oflag=direct \
			conv=fsync status=none || skip "dd write $bs to $dev failed"
		t1=$(now_ns)
		echo "DD $side write $bs $bytes $((t1 - t0))"
		t0=$(now_ns)
		dd if="$dev" of=/dev/null bs="$bs" count="$count" iflag=direct \
			status=none || skip "dd read $bs from $dev failed"
		t1=$(now_ns)
		echo "DD $side read $bs $bytes $((t1 - t0))"
	done
}

[ -r /proc/timer_list ] || skip "no /proc/timer_list in the guest kernel"
modules_load
bdf=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1b36:0x0010 ] &&
		bdf=$(basename "$d")
done
[ -n "$bdf" ] || skip "no QEMU NVMe controller in the guest"
waitfor 60 has_blk "$bdf" || skip "nvme did not bind $bdf"
insmod /smartio.ko || skip "insmod smartio.ko failed"
export LD_LIBRARY_PATH=/lib/smartio
smartiofs --fabric kernel /smartio || skip "smartiofs did not start"
waitfor 10 test -d /smartio/dev/nvme0 || skip "no /smartio/dev/nvme0"
echo all >/smartio/dev/nvme0/lend || skip "lend failed"
shadow=5100:${bdf#*:}

r=0
while [ "$r" -lt "$rounds" ]; do
	r=$((r + 1))
	waitfor 60 has_blk "$bdf" || skip "round $r: no native block device"
	pass native "$(blk_of "$bdf")"
	echo host1 >/smartio/dev/nvme0/borrow || skip "round $r: borrow failed"
	waitfor 60 has_blk "$shadow" || skip "round $r: no shadow block device"
	pass shadow "$(blk_of "$shadow")"
	echo host1 >/smartio/dev/nvme0/return || skip "round $r: return failed"
done
umount /smartio
finish
