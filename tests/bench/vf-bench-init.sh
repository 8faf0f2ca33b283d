#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of make bench's SR-IOV guests (tests/bench/ntb_vf.sh): port
# swport= of a 3-port smartio-ntb-switch is smartio node host<port> of
# three, as in tests/ntb/sriov-init.sh.  host0's NVMe has SR-IOV; host0
# gives the VFs their queues and vector, enables them through
# /smartio/dev/host0-nvme0/sriov_numvfs, attaches namespace 2 to VF 0 and
# 3 to VF 1, and lends VF 0 to host1 and VF 1 to host2, whose nvme drivers
# bind the shadows.  Then, round after round, one after the other so that
# none competes with another for the host's CPUs: host0 reads namespace 1
# through the PF natively, host1 its VF's namespace, host2 its VF's; 4 KiB
# random reads at depth 1 (tests/bench/blk_randread).  Each run prints
#   VFBENCH <pf|vf0|vf1> <round> host<P> <blk_randread line>
# and the host collects them.  The runs last about vfsecs= s (the count
# of reads calibrated by a first run on the PF).  "NTB-END" ends.
. /guest-common.sh
P=$(karg swport)
phase=$(karg swphase)
secs=$(karg vfsecs)
rounds=$(karg vfrounds)
N=3
BLOCKS=32768	# a 16 MiB namespace, in 512-byte blocks
echo "NTB-START port=$P phase=$phase"
STEP_WAIT=900
. /cluster-steps.sh

modules_load
PF=/smartio/dev/host0-nvme0
VF0=/smartio/dev/host0-nvme0v0
VF1=/smartio/dev/host0-nvme0v1

if [ "$P" = 0 ]; then
	pf=
	for d in /sys/bus/pci/devices/*; do
		[ -e "$d/sriov_totalvfs" ] && pf=$(basename "$d")
	done
	[ -n "$pf" ] || { fail "host0 has no SR-IOV NVMe"; finish; }
	live() { is /sys/class/nvme/nvme0/state live && test -b /dev/nvme0n1; }
	waitfor 60 live || { fail "the PF's nvme0 is not live"; finish; }
	# As sriov-init.sh: the primary's flexible resources given up at a
	# reset, before the VFs are enabled; the VFs left to lending.
	nvme_vf /dev/nvme0 virt 1 0 0 0 && nvme_vf /dev/nvme0 virt 1 1 0 0 &&
		echo 1 >"/sys/bus/pci/devices/$pf/reset" && waitfor 60 live ||
		{ fail "the PF's flexible resources"; finish; }
	echo 0 >"/sys/bus/pci/devices/$pf/sriov_drivers_autoprobe"
fi

sioswitch_up
if [ "$P" = 0 ]; then
	smartio_up devices="$pf"
else
	smartio_up devices=none
fi
smartiofs_up
others_up 900
waitfor 120 test -d $PF || { fail "no $PF: $(ls /smartio/dev)"; finish; }

# reads_for LINE: how many reads of LINE's rate last $secs s.
reads_for() {
	echo "$1" | awk -v s="$secs" '{
		for (i = 1; i < NF; i++) if ($(i + 1) == "IOPS,") r = $i
		n = int(r * s); print n < 2000 ? 2000 : n }'
}

if [ "$P" = 0 ]; then
	echo 2 >$PF/sriov_numvfs && waitfor 30 test -d $VF1 ||
		{ fail "enabling 2 VFs: $(ls /smartio/dev)"; finish; }
	for k in 1 2; do
		scid=$(nvme_vf /dev/nvme0 seclist | awk -v k=$k '$4 == k { print $2 }')
		nvme_vf /dev/nvme0 attach $((k + 1)) "$scid" &&
		nvme_vf /dev/nvme0 virt 8 0 "$scid" 2 &&
		nvme_vf /dev/nvme0 virt 8 1 "$scid" 1 &&
		nvme_vf /dev/nvme0 virt 9 0 "$scid" 0 ||
			{ fail "secondary controller $scid"; finish; }
	done
	line=$(blk_randread /dev/nvme0n1 2000 $BLOCKS)
	n=$(reads_for "$line")
	mkdir "/smartio/self/segments/reads${n}_0" &&
		echo 4k >"/smartio/self/segments/reads${n}_0/size" &&
		echo 1 >"/smartio/self/segments/reads${n}_0/available" ||
		fail "the reads' segment"
	echo host1 >$VF0/lend && echo host2 >$VF1/lend || fail "lend the VFs"
	mark lent
	wait_for ready 1 2
	r=1
	while [ $r -le "$rounds" ]; do
		echo "VFBENCH pf $r host0 $(blk_randread /dev/nvme0n1 "$n" $BLOCKS 2>&1)"
		mark pf$r
		wait_for vf$r 2
		r=$((r + 1))
	done
	# A node's steps vanish with it: the borrowers stay until host0 has
	# seen the last one (its "done"), and host0 waits for them to go.
	mark done
	gone() { ! is "/smartio/nodes/host$1/state" up; }
	waitfor 300 gone 1 && waitfor 300 gone 2 || fail "host1 or host2 still up"
	finish
fi

# host1 and host2: each borrows one VF and reads it when its turn comes.
mine=$VF0
[ "$P" = 2 ] && mine=$VF1
wait_for lent 0
n=$(ls /smartio/nodes/host0/segments | sed -n 's/^reads\([0-9]*\)_0$/\1/p')
b=$(cat "$mine/bdf")
shadow=$(printf '%04x:%s' $((0x5100 + ($(cat "$mine/fdid") & 0xfffff))) "${b#*:}")
shadow_disk() {
	local c
	c=$(ls "/sys/bus/pci/devices/$shadow/nvme" 2>/dev/null | head -n 1)
	[ -n "$c" ] && [ -b "/dev/${c}n1" ] && echo "${c}n1"
}
if echo "host$P" >"$mine/borrow" 2>/tmp/err && waitfor 120 shadow_disk; then
	disk=$(shadow_disk)
else
	fail "borrow ${mine##*/}: $(cat /tmp/err)"
	mark ready
	mark over
	finish
fi
mark ready
r=1
while [ $r -le "$rounds" ]; do
	# host1 after host0's PF run, host2 after host1's.
	if [ "$P" = 1 ]; then
		wait_for pf$r 0
	else
		wait_for vf$r 1
	fi
	echo "VFBENCH vf$((P - 1)) $r host$P $(blk_randread "/dev/$disk" "$n" $BLOCKS 2>&1)"
	mark vf$r
	r=$((r + 1))
done
wait_for done 0
echo "host$P" >"$mine/return" || fail "return ${mine##*/}"
finish
