#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the generic netlink fuzzer's guest (tests/kmod/check_genl_fuzz.sh):
# smartio.ko lends the guest's NVMe controller, then sio_genl sends random
# requests for every user command of the "smartio" family (valid and
# invalid attribute types, lengths, flags, nesting) as an unprivileged
# user, then (unless GENL_FUZZ_ROOT=0) as root (config writes then only to
# the emulated BARs and ROM: the drive is live).  No refusal may change the registry's
# generation, the real BARs stay as the kernel assigned them, the lender
# still reads its drive, and smartio.ko unloads.  The host checks the log
# for oopses and warnings.
. /guest-common.sh
echo "FUZZ-START"
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
secs=$(cat /fuzz-seconds)
modules_load
waitfor 30 test -b /dev/nvme0n1
bdf=$(basename "$(readlink /sys/block/nvme0n1/device/device)")
check "nvme0n1 on $bdf" test -b /dev/nvme0n1 -a -n "$bdf"
check "insmod smartio.ko" insmod /smartio.ko
# bars: the real function's BARs and ROM, from sysfs.
bars() {
	dd if=/sys/bus/pci/devices/"$bdf"/config bs=4 skip=4 count=9 \
		status=none | od -An -tx4 | tr -d ' \n'
}
# fuzz OUT ARGS...: sio_genl ARGS in the background; one that is still
# running 120 s after its time is reported with where it sleeps, and killed.
fuzz() {
	local out=$1 pid n=$((secs + 120))
	shift
	sio_genl "$@" >"$out" &
	pid=$!
	while [ "$n" -gt 0 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 1
		n=$((n - 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "FUZZ-STUCK $(grep State /proc/$pid/status)" \
			"wchan=$(cat /proc/$pid/wchan) syscall=$(cat /proc/$pid/syscall)"
		cat /proc/$pid/stack
		kill -9 "$pid"
	fi
	wait "$pid"
	cat "$out"
}
b0=$(bars)
# The fuzzer makes netlink print (rate-limited) warnings; on the serial
# console, under TCG, their polled writes starved the console's
# interrupt-driven output, so the guest's own lines stopped coming out.
# They go to the kernel log only; dmesg is checked below.
echo 1 >/proc/sys/kernel/printk
fuzz /tmp/fuzz1 -u 1000 fuzz "$secs" 1
check "unprivileged fuzz for $secs s: no refusal changed the registry" \
	grep -q "^FUZZ sent=[1-9][0-9]* .* changed-on-refusal=0$" /tmp/fuzz1
# The root run reaches the core's handlers (GENL_FUZZ_ROOT=0 skips it).
# A borrow it makes hot-adds a shadow controller whose nvme driver routes
# and reroutes MSI-X vectors later, on its own: sio_genl tells those msi
# events apart (FUZZ-ASYNC) from a refusal's doing (FUZZ-CHANGED).
if [ -e /fuzz-root ]; then
	fuzz /tmp/fuzz2 fuzz "$secs" 2 bars
	check "root fuzz for $secs s: no refusal changed the registry" \
		grep -q "^FUZZ sent=[1-9][0-9]* .* changed-on-refusal=0$" /tmp/fuzz2
fi
check "the real BARs and ROM are as the kernel assigned them" \
	test "$(bars)" = "$b0"
# Whatever a root run lent or borrowed goes back.
sio_genl call return dev=0 node=1 >/dev/null
waitfor 60 test -e /sys/bus/pci/drivers/nvme/"$bdf"
waitfor 30 test -b /dev/nvme0n1
check "the lender's nvme driver still reads its drive" \
	dd if=/dev/nvme0n1 of=/dev/null bs=4k count=16 iflag=direct status=none
check "rmmod smartio after the fuzzing" rmmod smartio
echo 7 >/proc/sys/kernel/printk
dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|DMAR:.*fault' \
	>/tmp/bad
check "no warning, BUG or oops in the kernel log" test ! -s /tmp/bad
cat /tmp/bad
power_off "FUZZ-END fails=$fails"
