#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of a check-ntb MSI guest (tests/ntb/check_msi.sh): port swport= of a
# 3-port smartio-ntb-switch is smartio node host<port> of three (smartio.ko
# fabric=ntb nodes=3 over smartio_ntb and ntb_sioswitch).  host0 lends its
# QEMU edu device, whose only interrupt is plain MSI (no MSI-X), and an
# ivshmem-plain, host2 its ivshmem-plain; host1 borrows all three and
# sio_edu_msi.ko binds edu's shadow and raises 16 interrupts, each one the
# device's MSI write across the NTB, counted on host1; the driver maps
# with dma_map_resource BAR 2 of host0's ivshmem (its shadow: one lender)
# and of host1's own (the target on the borrower), then, bound again once
# host0's ivshmem is returned, of host2's (its shadow: a third machine),
# and edu's DMA engine writes a pattern into each, read back equal; host1 then sends, as a hostile kernel would, an MSI message
# aimed at the lender's own interrupt range (debugfs msix_entry, index
# 0xffffffff), which host0 refuses, counts and logs; the returns give the
# lenders their devices back.  The nodes wait for each other through
# /smartio (cluster-steps.sh).
# "PASS: ..." / "FAIL: ..."; "NTB-END" ends.
. /guest-common.sh
P=$(karg swport)
phase=$(karg swphase)
N=3
echo "NTB-START port=$P phase=$phase"
STEP_WAIT=300
. /cluster-steps.sh

modules_load
# host0's edu device (1234:11e8); each node's ivshmem-plain (1af4:1110).
edu_bdf=
ivs_bdf=
for d in /sys/bus/pci/devices/*; do
	case "$(cat "$d/vendor"):$(cat "$d/device")" in
	0x1234:0x11e8) edu_bdf=$(basename "$d") ;;
	0x1af4:0x1110) ivs_bdf=$(basename "$d") ;;
	esac
done
[ "$P" != 0 ] || [ -n "$edu_bdf" ] || fail "host0 has no edu device"
[ -n "$ivs_bdf" ] || fail "no ivshmem-plain device"
sioswitch_up
if [ "$P" = 0 ]; then
	smartio_up devices="$edu_bdf,$ivs_bdf"
else
	smartio_up devices="$ivs_bdf"
fi
smartiofs_up
others_up 600
# host1 ends the run: the others wait until it is gone.
host1_gone() { ! is /smartio/nodes/host1/state up; }
step_debug() {
	ls /smartio/nodes/*/segments
	cat /sys/kernel/debug/smartio/state
	dmesg | tail -n 40
}

# /smartio/dev/host${2:-0}-* of vendor $1.
dev_of() {
	local d
	for d in /smartio/dev/host${2:-0}-pci*; do
		[ "$(cat "$d/vendor" 2>/dev/null)" = "$1" ] && echo "$d"
	done
}
listed() {
	[ -n "$(dev_of 0x1234)" ] && [ -n "$(dev_of 0x1af4)" ] &&
		[ -n "$(dev_of 0x1af4 2)" ]
}
waitfor 120 listed || fail "no edu and ivshmem of host0, ivshmem of host2 in /smartio/dev: $(ls /smartio/dev)"
dev=$(dev_of 0x1234)
ivs=$(dev_of 0x1af4)
ivs2=$(dev_of 0x1af4 2)

# host2 lends its ivshmem to host1 (the target on a third machine).
if [ "$P" = 2 ]; then
	echo all >"$ivs2/lend" || fail "lend ${ivs2##*/}"
	mark lent
	wait_for returned 1
	pass "host1 used and returned ${ivs2##*/}"
	mark over
	waitfor 300 host1_gone || fail "host1 still up"
	finish
fi
if [ "$(cat "$dev/vendor"):$(cat "$dev/device")" = 0x1234:0x11e8 ]; then
	pass "${dev##*/} here: the edu device, bdf $(cat "$dev/bdf")"
else
	fail "${dev##*/}: vendor '$(cat "$dev/vendor")' device '$(cat "$dev/device")'"
fi
msis() { awk '/smartio-NTB-MSI/ { n += $2 } END { print n + 0 }' /proc/interrupts; }

if [ "$P" = 0 ]; then
	echo all >"$dev/lend" || fail "lend all"
	echo all >"$ivs/lend" || fail "lend ${ivs##*/}"
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
	waitfor 300 host1_gone || fail "host1 still up"
	finish
fi

# host1: the shadow's driver raises 16 interrupts, then has the edu
# device write into three BARs it maps with dma_map_resource, SmartIO
# 4.4's three cases: host0's ivshmem (lent to host1: A and B of one
# lender), host1's own (the target on the borrower) and host2's (lent to
# host1: the target on a third machine).
wait_for lent 0 2
shadow_of() {
	local b
	b=$(cat "$1/bdf")
	printf '%04x:%s' $((0x5100 + ($(cat "$1/fdid") & 0xfffff))) "${b#*:}"
}
for d in "$ivs" "$ivs2"; do
	if echo host1 >"$d/borrow" 2>/tmp/err &&
	   waitfor 60 test -e "/sys/bus/pci/devices/$(shadow_of "$d")"; then
		pass "host1 borrows ${d##*/}: shadow $(shadow_of "$d")"
	else
		fail "borrow ${d##*/}: $(cat /tmp/err)"
	fi
done
before=$(msis)
insmod /sio_edu_msi.ko raises=16 p2p_bar=2 p2p="$(shadow_of "$ivs"),$ivs_bdf" ||
	fail "insmod sio_edu_msi.ko"
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
# dma_map_resource of the shadow's driver (SmartIO 4.4 for an unmodified
# driver): target $1 reads back what edu's DMA engine wrote.
p2p_check() {
	local line
	line=$(dmesg | grep "sio_edu_msi [0-9a-f:.]*: p2p $1 BAR2" | tail -n 1)
	case "$line" in
	*": equal (0)"*) pass "dma_map_resource of $1's BAR 2 for host0's edu: ${line#*: p2p }" ;;
	*) fail "dma_map_resource of $1's BAR 2: '$line' $(dmesg | grep "p2p $1\|peer-to-peer" | tail -n 2)" ;;
	esac
}
p2p_check "$(shadow_of "$ivs")"
p2p_check "$ivs_bdf"
ls /smartio/dev/"${dev##*/}"/peers 2>/dev/null
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
# The target on a third machine, once host0's ivshmem is returned: host0's
# seven look-up-table entries would not hold the four BARs' and the two
# borrows' at once.  The driver binds again (MSI enabled anew).
rmmod sio_edu_msi || fail "rmmod sio_edu_msi"
echo host1 >"$ivs/return" 2>/tmp/err || fail "return ${ivs##*/}: $(cat /tmp/err)"
insmod /sio_edu_msi.ko raises=16 p2p_bar=2 p2p="$(shadow_of "$ivs2")" ||
	fail "insmod sio_edu_msi.ko again"
p2p_check "$(shadow_of "$ivs2")"
received_all() {
	local got
	got=$(cat /sys/module/sio_edu_msi/parameters/received)
	[ "$got" = "$1" ] || fail "$2: $got of $1 MSI interrupts ($(dmesg | grep 'sio_edu_msi.*MSI' | tail -n 1))"
	[ "$got" = "$1" ]
}
received_all 16 "the second bind"
rmmod sio_edu_msi || fail "rmmod sio_edu_msi"
# The first interrupt after MSI is enabled: edu has no MSI mask bit, so
# one raised before the lender holds the borrower's message is lost.
# The driver raises at once in its probe; eight binds, one raise each.
rebound=0
for i in 1 2 3 4 5 6 7 8; do
	insmod /sio_edu_msi.ko raises=1 || fail "insmod sio_edu_msi.ko ($i)"
	received_all 1 "bind $i" && rebound=$((rebound + 1))
	rmmod sio_edu_msi || fail "rmmod sio_edu_msi ($i)"
done
[ "$rebound" = 8 ] &&
	pass "the first MSI after each of 8 binds arrives on host1"
if echo host1 >"$dev/return" 2>/tmp/err && echo host1 >"$ivs2/return" 2>>/tmp/err; then
	pass "host1 returns ${dev##*/}, ${ivs##*/} and ${ivs2##*/}"
else
	fail "return: $(cat /tmp/err)"
fi
mark returned
wait_for over 0 2
finish
