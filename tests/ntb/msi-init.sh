#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of a check-ntb MSI guest (tests/ntb/check_msi.sh): port swport= of a
# 2-port smartio-ntb-switch is smartio node host<port> of two (smartio.ko
# fabric=ntb nodes=2 over smartio_ntb and ntb_sioswitch).  host0 lends its
# QEMU edu device, whose only interrupt is plain MSI (no MSI-X); host1
# borrows it and sio_edu_msi.ko binds the shadow and raises 16 interrupts,
# each one the device's MSI write across the NTB, counted on host1; host1
# then sends, as a hostile kernel would, an MSI message aimed at the
# lender's own interrupt range (debugfs msix_entry, index 0xffffffff),
# which host0 refuses, counts and logs; the return gives host0 its edu
# back.  The nodes wait for each other through /smartio (cluster-steps.sh).
# "PASS: ..." / "FAIL: ..."; "NTB-END" ends.
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
P=$(sed -n 's/.*swport=\([0-9]\).*/\1/p' /proc/cmdline)
phase=$(sed -n 's/.*swphase=\([0-9]\).*/\1/p' /proc/cmdline)
N=2
echo "NTB-START port=$P phase=$phase"
. /guest-common.sh
STEP_WAIT=300
. /cluster-steps.sh

for m in $(cat /modules/order); do
	insmod "$m" 2>/dev/null
done
# host0's edu device (1234:11e8).
edu_bdf=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1234:0x11e8 ] &&
		edu_bdf=$(basename "$d")
done
[ "$P" = 1 ] || [ -n "$edu_bdf" ] || fail "host0 has no edu device"
insmod /ntb.ko || fail "insmod ntb.ko"
insmod /ntb_sioswitch.ko lut_mws=1 || fail "insmod ntb_sioswitch.ko lut_mws=1"
insmod /smartio_ntb.ko node="$P" || fail "insmod smartio_ntb.ko"
if [ "$P" = 0 ]; then
	smartio_up devices="$edu_bdf"
else
	smartio_up
fi
smartiofs_up
waitfor 600 is "/smartio/nodes/host$((1 - P))/state" up ||
	{ fail "host$((1 - P)) is '$(cat "/smartio/nodes/host$((1 - P))/state")'"; finish; }
pass "/smartio: the other node up"
step_debug() {
	ls /smartio/nodes/*/segments
	cat /sys/kernel/debug/smartio/state
	dmesg | tail -n 40
}

edu() { ls -d /smartio/dev/host0-pci* 2>/dev/null | head -n 1; }
waitfor 120 test -n "$(edu)" || fail "no host0-pci* in /smartio/dev: $(ls /smartio/dev)"
dev=$(edu)
if [ "$(cat "$dev/vendor"):$(cat "$dev/device")" = 0x1234:0x11e8 ]; then
	pass "${dev##*/} here: the edu device, bdf $(cat "$dev/bdf")"
else
	fail "${dev##*/}: vendor '$(cat "$dev/vendor")' device '$(cat "$dev/device")'"
fi
msis() { awk '/smartio-NTB-MSI/ { n += $2 } END { print n + 0 }' /proc/interrupts; }

if [ "$P" = 0 ]; then
	echo all >"$dev/lend" || fail "lend all"
	mark lent
	wait_for done 1
	st=$(grep "^msix ${dev##*/} " /sys/kernel/debug/smartio/state)
	case "$st" in
	*" written=0 "*) fail "no MSI message of host1 written: $st" ;;
	*" refused=0") fail "the forged MSI message not refused: $st" ;;
	*) pass "host1's MSI message written, the forged one refused: $st" ;;
	esac
	if dmesg | grep -q "MSI entry -1 from host1 aimed at 0xfee00000, outside its MSI window"; then
		pass "the refusal is logged"
	else
		fail "no log line for the refused MSI message"
	fi
	# The message the device holds is in host1's MSI window, not ours.
	cap=$(hexdump -s 0x34 -n 1 -e '1/1 "%u"' "/sys/bus/pci/devices/$edu_bdf/config")
	while [ "$cap" -ge 64 ] && [ "$(hexdump -s "$cap" -n 1 -e '1/1 "%u"' "/sys/bus/pci/devices/$edu_bdf/config")" != 5 ]; do
		cap=$(hexdump -s $((cap + 1)) -n 1 -e '1/1 "%u"' "/sys/bus/pci/devices/$edu_bdf/config")
	done
	addr=$(hexdump -s $((cap + 4)) -n 4 -e '1/4 "%#x"' "/sys/bus/pci/devices/$edu_bdf/config")
	if [ "$cap" -ge 64 ] && [ "$addr" != 0xfee00000 ] && [ "$addr" != 0 ]; then
		pass "edu's MSI address is $addr (host1's MSI window as the device sees it)"
	else
		fail "edu's MSI capability at $cap holds address '$addr'"
	fi
	mark checked
	wait_for returned 1
	unclaimed() {
		case "$(readlink "/sys/bus/pci/devices/$edu_bdf/driver" 2>/dev/null)" in
		*smartio*) return 1 ;;
		esac
	}
	if waitfor 30 unclaimed; then
		pass "after the return smartio's driver let go of edu"
	else
		fail "after the return edu is bound to $(readlink "/sys/bus/pci/devices/$edu_bdf/driver")"
	fi
	mark over
	finish
fi

# host1: the shadow's driver raises 16 interrupts.
wait_for lent 0
before=$(msis)
insmod /sio_edu_msi.ko raises=16 || fail "insmod sio_edu_msi.ko"
if echo host1 >"$dev/borrow" 2>/tmp/err; then
	pass "host1 borrows ${dev##*/}"
else
	fail "borrow: $(cat /tmp/err)"
fi
probed() { dmesg | grep -q 'sio_edu_msi [0-9a-f:.]*: [0-9]* of 16 MSI'; }
waitfor 200 probed || fail "sio_edu_msi never finished its probe"
line=$(dmesg | grep 'sio_edu_msi [0-9a-f:.]*: [0-9]* of 16 MSI' | tail -n 1)
got=$(cat /sys/module/sio_edu_msi/parameters/received)
after=$(msis)
if [ "$got" = 16 ] && [ $((after - before)) -ge 16 ]; then
	pass "16 of 16 MSI interrupts of host0's edu on host1 ($line; smartio-NTB-MSI $before -> $after in /proc/interrupts)"
else
	fail "MSI interrupts: received '$got', smartio-NTB-MSI $before -> $after ($line)"
	grep -i 'msi' /proc/interrupts
	dmesg | grep -i 'smartio\|edu' | tail -n 20
fi
# Hostile: the MSI message aimed at the lender's own interrupt range.
echo "$(cat "$dev/fdid") 0xffffffff 0xfee00000 0x41 0" \
	>/sys/kernel/debug/smartio/msix_entry 2>/tmp/err
if grep -q "Permission denied" /tmp/err; then
	pass "an MSI message aimed outside host1's MSI window: refused ($(cat /tmp/err))"
else
	fail "MSI message aimed at the lender's own 0xfee00000: '$(cat /tmp/err)'"
fi
mark done
wait_for checked 0
rmmod sio_edu_msi || fail "rmmod sio_edu_msi"
if echo host1 >"$dev/return" 2>/tmp/err; then
	pass "host1 returns ${dev##*/}"
else
	fail "return: $(cat /tmp/err)"
fi
mark returned
wait_for over 0
finish
