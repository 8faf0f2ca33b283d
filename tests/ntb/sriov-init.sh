#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of a check-ntb SR-IOV guest (tests/ntb/check_sriov.sh): port
# swport= of a 3-port smartio-ntb-switch is smartio node host<port> of
# three.  host0's QEMU NVMe has SR-IOV (two VFs, each a secondary
# controller); host0 gives the VFs flexible queues and a vector
# (tests/ntb/nvme_vf, the admin commands nvme-cli's virt-mgmt sends),
# enables them through /smartio/dev/host0-nvme0/sriov_numvfs and lends
# VF 0 to host1 and VF 1 to host2, each with a namespace of its own
# attached.  Each borrower's nvme driver binds its VF's shadow and writes
# and reads back 8 MiB, then runs fio --verify on the second 8 MiB, while
# host0's own driver does I/O on the PF.
# Refused, state unchanged: a count above TotalVFs (ERANGE), a change
# while enabled and disabling while borrowed (EBUSY, the log naming the
# borrower), host1 borrowing host2's VF (EACCES), enabling VFs while the
# PF itself is lent to host1 (EBUSY).  The nodes wait for each other
# through /smartio (cluster-steps.sh).  The host checks each namespace's
# image afterwards.  "PASS: ..." / "FAIL: ..."; "NTB-END" ends.
. /guest-common.sh
P=$(karg swport)
phase=$(karg swphase)
N=3
MIB=8
echo "NTB-START port=$P phase=$phase"
STEP_WAIT=600
. /cluster-steps.sh

modules_load
PF=/smartio/dev/host0-nvme0
VF0=/smartio/dev/host0-nvme0v0
VF1=/smartio/dev/host0-nvme0v1
# What node $1 writes on its namespace: the host computes the same.
pattern() { yes "$1" | head -c $((MIB << 20)); }
step_debug() {
	ls /smartio/dev /smartio/nodes/*/segments
	cat /sys/kernel/debug/smartio/state
	dmesg | tail -n 40
}
# write_check DISK NAME: the pattern of NAME written with O_DIRECT, read back.
write_check() {
	local want got
	want=$(pattern "$2" | md5sum | cut -d' ' -f1)
	pattern "$2" | dd of="/dev/$1" bs=1M oflag=direct iflag=fullblock \
		status=none || return 1
	got=$(dd if="/dev/$1" bs=1M count=$MIB iflag=direct status=none |
	      md5sum | cut -d' ' -f1)
	[ "$got" = "$want" ]
}

if [ "$P" = 0 ]; then
	pf=
	for d in /sys/bus/pci/devices/*; do
		[ -e "$d/sriov_totalvfs" ] && pf=$(basename "$d")
	done
	[ -n "$pf" ] || { fail "host0 has no SR-IOV NVMe"; finish; }
	live() { is /sys/class/nvme/nvme0/state live && test -b /dev/nvme0n1; }
	waitfor 60 live || { fail "the PF's nvme0 is not live"; finish; }
	# The primary controller gives up its flexible resources at its next
	# reset (NVMe 1.4 section 8.5.2), a function level reset: QEMU's
	# model disables VFs then, so before they are enabled.
	if nvme_vf /dev/nvme0 virt 1 0 0 0 && nvme_vf /dev/nvme0 virt 1 1 0 0 &&
	   echo 1 >"/sys/bus/pci/devices/$pf/reset" && waitfor 60 live; then
		pass "the PF $pf gave up its flexible queues and vectors (reset)"
	else
		fail "the PF's flexible resources"; finish
	fi
	# The VFs are for lending: the lender's nvme driver leaves them alone.
	echo 0 >"/sys/bus/pci/devices/$pf/sriov_drivers_autoprobe"
fi

sioswitch_up
if [ "$P" = 0 ]; then
	smartio_up devices="$pf"
else
	smartio_up devices=none
fi
smartiofs_up
others_up 600
waitfor 120 test -d $PF || { fail "no $PF: $(ls /smartio/dev)"; finish; }
host1_gone() { ! is /smartio/nodes/host1/state up; }
host2_gone() { ! is /smartio/nodes/host2/state up; }

# --- host0: the lender ---------------------------------------------------
if [ "$P" = 0 ]; then
	if is $PF/sriov_totalvfs 2 && is $PF/sriov_numvfs 0 && [ ! -e $VF0 ]; then
		pass "${PF##*/}: sriov_totalvfs 2, sriov_numvfs 0, no VF listed"
	else
		fail "before: totalvfs '$(cat $PF/sriov_totalvfs)' numvfs '$(cat $PF/sriov_numvfs)' $(ls /smartio/dev)"
	fi
	refused $PF/sriov_numvfs 3 "Numerical result out of range"
	refused $PF/sriov_numvfs two "Invalid argument"
	if echo 2 >$PF/sriov_numvfs 2>/tmp/err && waitfor 30 test -d $VF1; then
		pass "2 > sriov_numvfs: $(ls /smartio/dev | tr '\n' ' ')"
	else
		fail "enabling 2 VFs: $(cat /tmp/err); $(ls /smartio/dev)"
		dmesg | tail -n 20; finish
	fi
	vf0=$(cat $VF0/bdf)
	vf1=$(cat $VF1/bdf)
	if [ -e "/sys/bus/pci/devices/$vf0/physfn" ] &&
	   [ -e "/sys/bus/pci/devices/$vf1/physfn" ] &&
	   is $VF0/vendor 0x1b36 && is "/sys/bus/pci/devices/$pf/sriov_numvfs" 2; then
		pass "the PCI core's VFs $vf0 and $vf1 are ${VF0##*/} and ${VF1##*/} (vendor $(cat $VF0/vendor) device $(cat $VF0/device))"
	else
		fail "VFs '$vf0' '$vf1': $(ls /sys/bus/pci/devices | tr '\n' ' ')"
	fi
	refused $PF/sriov_numvfs 1 "busy"
	# Each VF a secondary controller: flexible resources, online, and a
	# namespace of its own (2 for VF 0, 3 for VF 1).
	nvme_vf /dev/nvme0 seclist
	ok=1
	for k in 1 2; do
		scid=$(nvme_vf /dev/nvme0 seclist | awk -v k=$k '$4 == k { print $2 }')
		nvme_vf /dev/nvme0 attach $((k + 1)) "$scid" &&
		nvme_vf /dev/nvme0 virt 8 0 "$scid" 2 &&
		nvme_vf /dev/nvme0 virt 8 1 "$scid" 1 &&
		nvme_vf /dev/nvme0 virt 9 0 "$scid" 0 || ok=0
	done
	if [ $ok = 1 ] && [ "$(nvme_vf /dev/nvme0 seclist | grep -c 'online vq 2 vi 1')" = 2 ]; then
		pass "both secondary controllers online with 2 queues and 1 vector, namespaces 2 and 3 attached"
	else
		fail "secondary controllers: $(nvme_vf /dev/nvme0 seclist)"
	fi
	g0=$(readlink "/sys/bus/pci/devices/$vf0/iommu_group")
	g1=$(readlink "/sys/bus/pci/devices/$vf1/iommu_group")
	if [ -n "$g0" ] && [ "${g0##*/}" != "${g1##*/}" ]; then
		pass "each VF is its own requester to the IOMMU: groups ${g0##*/} and ${g1##*/}"
	else
		fail "IOMMU groups of the VFs: '$g0' '$g1'"
	fi
	echo host1 >$VF0/lend && echo host2 >$VF1/lend || fail "lend the VFs"
	mark lent
	# The PF's own I/O on the lender while the VFs are used elsewhere.
	rounds=0
	pf_ok=1
	borrowed_both() {
		[ -d /smartio/nodes/host1/segments/done1 ] &&
			[ -d /smartio/nodes/host2/segments/done2 ]
	}
	while ! borrowed_both && [ $rounds -lt 200 ]; do
		write_check nvme0n1 host0-pf || pf_ok=0
		rounds=$((rounds + 1))
	done
	# The borrowers' fio checks whether this loop still ran.
	mark pfdone
	if [ $pf_ok = 1 ]; then
		pass "the PF's driver wrote and read back $MIB MiB $rounds times while host1 and host2 used the VFs"
	else
		fail "the PF's own I/O failed during the VFs' borrows"
	fi
	wait_for done 1 2
	refused $PF/sriov_numvfs 0 "busy"
	for q in 1 2; do
		if dmesg | grep -q "VF host0-nvme0v$((q - 1)) is borrowed by host$q"; then
			pass "the refusal names host$q as VF $((q - 1))'s borrower"
		else
			fail "no log line naming host$q: $(dmesg | grep 'is borrowed by' | tail -n 2)"
		fi
	done
	if waitfor 10 is $PF/sriov_numvfs 2 && [ -d $VF0 ] && [ -d $VF1 ]; then
		pass "the refused disable left both VFs"
	else
		fail "after the refused disable: numvfs '$(cat $PF/sriov_numvfs 2>&1)'"
	fi
	for v in "$vf0" "$vf1"; do
		dmesg | grep -q "$v: smartio: claimed for lending, own IOMMU domain" ||
			fail "$v was not claimed in an IOMMU domain of its own"
	done
	pfdrv=$(basename "$(readlink "/sys/bus/pci/devices/$pf/driver")")
	if [ "$pfdrv" = nvme ]; then
		pass "the PF stayed with host0's nvme driver"
	else
		fail "the PF's driver is '$pfdrv'"
	fi
	mark checked
	wait_for returned 1 2
	if echo 0 >$PF/sriov_numvfs 2>/tmp/err && waitfor 30 test ! -e $VF0 &&
	   is "/sys/bus/pci/devices/$pf/sriov_numvfs" 0 &&
	   [ ! -e "/sys/bus/pci/devices/$vf0" ]; then
		pass "returned, the VFs are disabled: $(ls /smartio/dev | tr '\n' ' ')"
	else
		fail "disabling after the returns: $(cat /tmp/err); $(ls /smartio/dev)"
	fi
	mark disabled
	# The PF itself lent: no VF appears under the borrower's driver.
	echo host1 >$PF/lend || fail "lend the PF"
	mark pflent
	wait_for pfborrowed 1
	refused $PF/sriov_numvfs 2 "busy"
	if waitfor 10 is $PF/sriov_numvfs 0 && [ ! -e $VF0 ] &&
	   is "/sys/bus/pci/devices/$pf/sriov_numvfs" 0; then
		pass "no VF enabled while host1 borrows the PF"
	else
		fail "VFs under the lent PF: numvfs '$(cat $PF/sriov_numvfs 2>&1)', $(ls /smartio/dev)"
	fi
	mark pfchecked
	wait_for pfreturned 1
	back() { [ "$(basename "$(readlink "/sys/bus/pci/devices/$pf/driver")")" = nvme ] && live; }
	if waitfor 60 back && write_check nvme0n1 host0-pf; then
		pass "the PF is back with host0's nvme driver, its namespace read and written"
	else
		fail "the PF after its return: driver $(readlink "/sys/bus/pci/devices/$pf/driver")"
	fi
	mark over
	waitfor 300 host1_gone || fail "host1 still up"
	waitfor 300 host2_gone || fail "host2 still up"
	# Unloading disables the VFs smartio enabled.
	if echo 2 >$PF/sriov_numvfs 2>/tmp/err &&
	   is "/sys/bus/pci/devices/$pf/sriov_numvfs" 2 &&
	   umount /smartio && rmmod smartio 2>/tmp/err &&
	   is "/sys/bus/pci/devices/$pf/sriov_numvfs" 0; then
		pass "rmmod smartio disabled the VFs it enabled"
	else
		fail "VFs at unload: $(cat /tmp/err); numvfs $(cat "/sys/bus/pci/devices/$pf/sriov_numvfs")"
	fi
	finish
fi

# --- host1 and host2: each borrows one VF ---------------------------------
mine=$VF0
theirs=$VF1
[ "$P" = 2 ] && { mine=$VF1; theirs=$VF0; }
wait_for lent 0
shadow_of() {
	local b
	b=$(cat "$1/bdf")
	printf '%04x:%s' $((0x5100 + ($(cat "$1/fdid") & 0xfffff))) "${b#*:}"
}
refused "$theirs/borrow" "host$P" "Permission denied"
# The device table says whose VFs they are, here too.
if is "$mine/sriov_pf" host0-nvme0 && is $PF/sriov_numvfs 2 &&
   is $PF/sriov_totalvfs 2; then
	pass "${mine##*/}'s PF is host0-nvme0 on host$P's mount, 2 of 2 VFs enabled"
else
	fail "on host$P: sriov_pf '$(cat "$mine/sriov_pf")', numvfs '$(cat $PF/sriov_numvfs)'"
fi
refused $PF/sriov_numvfs 0 "Operation not permitted"
shadow=$(shadow_of "$mine")
shadow_disk() {
	local c
	c=$(ls "/sys/bus/pci/devices/$shadow/nvme" 2>/dev/null | head -n 1)
	[ -n "$c" ] && [ -b "/dev/${c}n1" ] && echo "${c}n1"
}
if echo "host$P" >"$mine/borrow" 2>/tmp/err && waitfor 120 shadow_disk; then
	disk=$(shadow_disk)
	pass "host$P borrows ${mine##*/}: the nvme driver bound its shadow $shadow, /dev/$disk"
else
	fail "borrow ${mine##*/}: $(cat /tmp/err); $(ls /sys/block | tr '\n' ' ')"
	dmesg | tail -n 30
	mark done
	finish
fi
if write_check "$disk" "host$P-vf"; then
	pass "$MIB MiB written to ${mine##*/}'s namespace with O_DIRECT, read back equal"
else
	fail "$MIB MiB through ${mine##*/}'s shadow"
fi
# fio's own check, on the half of the namespace the host does not check:
# 4 KiB random writes with a CRC32C and the block's offset in each
# block's header, every block read back and checked after the writes.
# fio and its libraries are on the read-only drive /dev/vda
# (check_sriov.sh).
# Ceph's library, one fio links, has 130 MiB of zeroed static data (its
# ELF's bss), never touched in full: the kernel's heuristic overcommit
# refuses to map it in a 128 MiB guest, so this guest overcommits.
echo 1 >/proc/sys/vm/overcommit_memory
mkdir -p /fio
mount -t ext2 -o ro /dev/vda /fio || fail "mount fio's drive: $(ls /sys/block | tr '\n' ' ')"
fio() {
	LD_LIBRARY_PATH=/fio/lib/x86_64-linux-gnu:/fio/usr/lib/x86_64-linux-gnu:/fio/usr/lib/x86_64-linux-gnu/ceph \
		/fio/fio "$@"
}
if fio --name=vf-verify --filename="/dev/$disk" --direct=1 --ioengine=psync \
	--rw=randwrite --bs=4k --offset=${MIB}M --size=${MIB}M \
	--verify=crc32c --verify_fatal=1 --do_verify=1 \
	--output-format=terse --terse-version=3 >/tmp/fio.out 2>&1; then
	# Terse v3: field 6 is the read KiB (the verify pass), 47 the write KiB.
	rk=$(awk -F';' 'END { print $6 }' /tmp/fio.out)
	wk=$(awk -F';' 'END { print $47 }' /tmp/fio.out)
	if [ "$wk" = $((MIB * 1024)) ] && [ "$rk" = $((MIB * 1024)) ] &&
	   [ ! -d /smartio/nodes/host0/segments/pfdone0 ]; then
		pass "fio --verify=crc32c on ${mine##*/}: $wk KiB of 4 KiB random writes read back and verified, host0's PF I/O under way"
	else
		fail "fio on ${mine##*/}: wrote '$wk' read '$rk' KiB, or the PF's I/O ended first: $(cat /tmp/fio.out)"
	fi
else
	fail "fio --verify on ${mine##*/}: $(tail -n 5 /tmp/fio.out | tr '\n' ' ')"
fi
mark done
wait_for checked 0
if echo "host$P" >"$mine/return" 2>/tmp/err &&
   waitfor 60 test ! -e "/sys/bus/pci/devices/$shadow"; then
	pass "host$P returns ${mine##*/}, its shadow is gone"
else
	fail "return: $(cat /tmp/err)"
fi
mark returned
wait_for disabled 0
if waitfor 30 test ! -e "$mine"; then
	pass "the disabled VFs left host$P's /smartio/dev: $(ls /smartio/dev | tr '\n' ' ')"
else
	fail "$mine still listed after the VFs were disabled"
fi
if [ "$P" = 2 ]; then
	wait_for over 0
	finish
fi
# host1 borrows the PF itself, while host0 tries to enable VFs.
wait_for pflent 0
shadow=$(shadow_of $PF)
if echo host1 >$PF/borrow 2>/tmp/err && waitfor 120 shadow_disk; then
	pass "host1 borrows the PF, shadow $shadow, /dev/$(shadow_disk)"
else
	fail "borrow the PF: $(cat /tmp/err)"
fi
mark pfborrowed
wait_for pfchecked 0
if echo host1 >$PF/return 2>/tmp/err &&
   waitfor 60 test ! -e "/sys/bus/pci/devices/$shadow"; then
	pass "host1 returns the PF"
else
	fail "return the PF: $(cat /tmp/err)"
fi
mark pfreturned
wait_for over 0
finish
