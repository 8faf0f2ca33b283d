#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of check-kmod's second guest: the config writes smartio.ko keeps
# from the lender's real function for the capabilities the first guest's
# NVMe lacks (issue 28, item 1; kmod/sio_vcfg.c).  QEMU gives an NVMe
# controller with SR-IOV (sriov_max_vfs) and an e1000e with AER (and ACS
# when check_kmod.sh could build contrib/qemu's e1000e-acs);
# smartio.ko lends both (devices=).  QEMU 7.2 itself puts ACS on its
# root and downstream ports only, and smartio.ko lends no bridge.
# Every write goes through the generic netlink family's CFG_WRITE, the
# path a borrower's shadow and a user share (kplat_cfg_access): it must
# answer 0 and leave the real register, read through the lender's sysfs,
# as it was.
# Every check prints "PASS: ..." or "FAIL: ..."; "CAPS-END" ends the run.
. /guest-common.sh
echo "CAPS-START"

fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { # check WHAT COMMAND...
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() { power_off "CAPS-END fails=$fails"; }
state=/sys/kernel/debug/smartio/state

modules_load
# bdf_of VENDOR:DEVICE: the first function with those ids.
bdf_of() {
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor"):$(cat "$d/device")" = "$1" ] &&
			{ basename "$d"; return; }
	done
}
nvme=$(bdf_of 0x1b36:0x0010)
nic=$(bdf_of 0x8086:0x10d3)
check "QEMU's SR-IOV NVMe ($nvme) and e1000e ($nic)" \
	test -n "$nvme" -a -n "$nic"
[ -n "$nvme" ] && [ -n "$nic" ] || finish
check "insmod smartio.ko devices=$nvme,$nic" \
	insmod /smartio.ko devices="$nvme,$nic"
[ -e $state ] || { fail "no $state"; finish; }
cat $state
# devidx BDF: the registry index of the device at BDF (its dev line's rank).
devidx() {
	grep '^dev ' $state | grep -n " bdf=$1 " | cut -d: -f1 |
		{ read -r n && echo $((n - 1)); }
}
dnvme=$(devidx "$nvme")
dnic=$(devidx "$nic")
check "host0 lends both (dev $dnvme and dev $dnic)" \
	test -n "$dnvme" -a -n "$dnic"
[ -n "$dnvme" ] && [ -n "$dnic" ] || finish

# realcfg BDF OFFSET WIDTH: the real function's register, from sysfs.
realcfg() {
	dd if=/sys/bus/pci/devices/"$1"/config bs=1 skip=$(($2)) count="$3" \
		status=none | od -An -tx"$3" | tr -d ' \n'
}
# extcap BDF ID: the offset of extended capability ID (0: none).
extcap() {
	local pos=256 hops=0 hdr
	while [ "$pos" -ge 256 ] && [ $hops -lt 64 ]; do
		hdr=$((0x$(realcfg "$1" $pos 4)))
		[ "$hdr" = 0 ] && break
		[ $((hdr & 0xffff)) = $(($2)) ] && { echo $pos; return; }
		pos=$((hdr >> 20 & 0xffc))
		hops=$((hops + 1))
	done
	echo 0
}
# cfgw DEV OFFSET DATA: CFG_WRITE's rc (0 or -errno), as root for node
# $who (0: host0, the lender's own user; 1: host1, once it borrows).
who=0
cfgw() {
	sio_genl call cfg_write dev="$1" node=$who off="$2" data="$3" |
		sed -n 's/^rc=//p'
}
# le16/le32 VALUE: the data= bytes of a value (little endian).
le16() { printf '%02x%02x' $(($1 & 255)) $(($1 >> 8 & 255)); }
le32() { printf '%s%s' "$(le16 $(($1 & 0xffff)))" "$(le16 $(($1 >> 16 & 0xffff)))"; }
# refused WHAT DEV BDF OFFSET WIDTH VALUE: writing VALUE at OFFSET answers
# 0 and the real register keeps its value.
refused() {
	local before data rc
	before=$(realcfg "$3" "$4" "$5")
	if [ "$5" = 2 ]; then data=$(le16 "$6"); else data=$(le32 "$6"); fi
	rc=$(cfgw "$2" "$4" "$data")
	check "host$who, $1: the write of $(printf %#x "$6") answers 0 ($rc), the real register keeps $before ($(realcfg "$3" "$4" "$5"))" \
		test "$rc" = 0 -a "$(realcfg "$3" "$4" "$5")" = "$before"
}

sriov=$(extcap "$nvme" 0x10)
check "the NVMe controller lists SR-IOV ($sriov), TotalVFs $((0x$(realcfg "$nvme" $((sriov + 14)) 2)))" \
	test "$sriov" -gt 0
aer=$(extcap "$nic" 0x01)
check "the e1000e lists AER ($aer)" test "$aer" -gt 0
# ACS: only contrib/qemu's e1000e-acs has it (check_kmod.sh says when).
acs=$(extcap "$nic" 0x0d)
[ "$acs" -gt 0 ] &&
	check "the e1000e lists ACS ($acs) with P2P redirects and direct translated ($(realcfg "$nic" $((acs + 4)) 2))" \
		test $((0x$(realcfg "$nic" $((acs + 4)) 2) & 0x4c)) = $((0x4c))
# writes: every filtered register of both functions, as node $who.
writes() {
	# SR-IOV: NumVFs and VF Enable behind the lender's PCI core.
	refused "SR-IOV NumVFs" "$dnvme" "$nvme" $((sriov + 0x10)) 2 \
		$((0x$(realcfg "$nvme" $((sriov + 14)) 2)))
	refused "SR-IOV Control (VF Enable, VF MSE)" "$dnvme" "$nvme" \
		$((sriov + 8)) 2 0x0009
	# AER: masks, severities, control.  The uncorrectable error mask is
	# left out: QEMU's e1000e keeps it 0 whatever is written, so its
	# check could not fail.
	for r in 0x0c:"uncorrectable error severity" \
		0x14:"correctable error mask" 0x18:"capabilities and control"; do
		off=${r%%:*}
		was=$((0x$(realcfg "$nic" $((aer + off)) 4)))
		refused "AER $off (${r#*:})" "$dnic" "$nic" $((aer + off)) 4 \
			$((~was & 0xffffffff))
	done
	# ACS control: the redirects and egress rules are the lender's to
	# set (they decide which peer-to-peer traffic its IOMMU sees).
	if [ "$acs" -gt 0 ]; then
		was=$((0x$(realcfg "$nic" $((acs + 6)) 2)))
		refused "ACS control" "$dnic" "$nic" $((acs + 6)) 2 \
			$((~was & 0x4c))
	fi
}
# As the lender's own user first, then as host1 borrowing both.
writes
check "host0 lets both be borrowed" \
	test "$(sio_genl call lend dev="$dnvme" flags=1 mask=0 | sed -n 's/^rc=//p')" = 0 -a \
	"$(sio_genl call lend dev="$dnic" flags=1 mask=0 | sed -n 's/^rc=//p')" = 0
check "host1 borrows both" \
	test "$(sio_genl call borrow dev="$dnvme" node=1 | sed -n 's/^rc=//p')" = 0 -a \
	"$(sio_genl call borrow dev="$dnic" node=1 | sed -n 's/^rc=//p')" = 0
cat $state
# The e1000e's BARs 0 and 1 are adjacent: its shadow's host bridge gets
# them as one window (kmod/sio_shadow.c, shadow_bar), not two that
# Linux 6.1 would coalesce and release unregistered (an oops).
nicsh=$(printf '%04x' $((0x5100 + dnic))):${nic#*:}
check "host1's shadow of the e1000e ($nicsh) has BARs 0 and 1 ($(head -n 2 /sys/bus/pci/devices/"$nicsh"/resource 2>/dev/null | cut -d' ' -f1 | tr '\n' ' '))" \
	test "$(head -n 2 /sys/bus/pci/devices/"$nicsh"/resource 2>/dev/null |
		grep -vc '^0x0*0 ')" = 2
who=1
writes
finish
