#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of make bench's shared-NVMe guests (tests/bench/ntb_nvmeq.sh): port
# swport= of a 4-port smartio-ntb-switch is smartio node host<port> of four,
# as in tests/ntb/nvmeq-init.sh.  host0 first reads its NVMe natively (its
# own nvme driver, tests/bench/blk_randread), then lends it in shared mode;
# host1 runs smartio-nvmeq's manager.  Then, round after round, one client
# on host1 alone, and one client on each of host1, host2 and host3 at once,
# each with its own queue pair; all 4 KiB random reads at depth 1 over the
# whole drive.  Each run prints
#   NVMEQBENCH <native|one|three> <round> host<P> <bench line>
# and the host collects them.  The runs last about $secs s each (the
# kernel command line's nvmeqsecs=), the count of reads calibrated by a
# first run: the clients of a round start within the 0.2 s a node polls
# for another's step, a small part of their run.  "NTB-END" ends.
. /guest-common.sh
P=$(karg swport)
phase=$(karg swphase)
secs=$(karg nvmeqsecs)
rounds=$(karg nvmeqrounds)
N=4
BLOCKS=131072	# the 64 MiB drive, in 512-byte blocks
echo "NTB-START port=$P phase=$phase"
STEP_WAIT=900
. /cluster-steps.sh

for m in $(cat /modules/order); do
	case $m in
	*/nvme.ko) [ "$P" = 0 ] && insmod "$m" 2>/dev/null ;;
	*) insmod "$m" 2>/dev/null ;;
	esac
done
nvme_bdf=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/class")" = 0x010802 ] && nvme_bdf=$(basename "$d")
done

# reads_for LINE: how many reads of LINE's rate last $secs s.
reads_for() {
	echo "$1" | awk -v s="$secs" '{
		for (i = 1; i < NF; i++) if ($(i + 1) == "IOPS,") r = $i
		n = int(r * s); print n < 2000 ? 2000 : n }'
}

# host0's native runs, before smartio.ko takes the NVMe from its driver.
if [ "$P" = 0 ]; then
	live() { test -b /dev/nvme0n1; }
	waitfor 60 live || fail "no /dev/nvme0n1"
	line=$(blk_randread /dev/nvme0n1 2000 $BLOCKS)
	n=$(reads_for "$line")
	r=1
	while [ $r -le "$rounds" ]; do
		echo "NVMEQBENCH native $r host0 $(blk_randread /dev/nvme0n1 "$n" $BLOCKS 2>&1)"
		r=$((r + 1))
	done
	# Three native readers at once: what the device (QEMU's NVMe model
	# in host0's QEMU) serves at depth 3, the limit the three clients
	# share.
	r=1
	while [ $r -le "$rounds" ]; do
		pids=
		for k in 1 2 3; do
			echo "NVMEQBENCH native3 $r host0 $(blk_randread /dev/nvme0n1 "$n" $BLOCKS 2>&1)" &
			pids="$pids $!"
		done
		# shellcheck disable=SC2086 # the three readers' pids
		wait $pids
		r=$((r + 1))
	done
fi

sioswitch_up window_kb=4096
if [ "$P" = 0 ]; then
	smartio_up devices="$nvme_bdf"
else
	smartio_up
fi
smartiofs_up
others_up 900
D=host0-nvme0
q() { smartio-nvmeq -d $D "$@"; }

if [ "$P" = 0 ]; then
	echo all >/smartio/dev/$D/lend || fail "lend all"
	echo shared >/smartio/dev/$D/mode || fail "mode shared"
	mark lent
	# A node's steps vanish with it: wait for the nodes to go.
	gone() { ! is "/smartio/nodes/host$1/state" up; }
	for c in 1 2 3; do
		waitfor 3600 gone $c || fail "host$c still up"
	done
	finish
fi

wait_for lent 0
seen() { [ -e "/smartio/dev/$D/node" ]; }
waitfor 60 seen || fail "$D not in /smartio/dev"
if [ "$P" = 1 ]; then
	q manage >/tmp/mgr.log 2>&1 &
	serving() { grep -q serving /tmp/mgr.log; }
	waitfor 120 serving || { fail "manager: $(cat /tmp/mgr.log)"; finish; }
	# The count of reads: a first run of one client alone.
	line=$(q bench -q 1 -r 2000 -n $BLOCKS 2>&1)
	n=$(reads_for "$line")
	mkdir "/smartio/self/segments/reads${n}_1" &&
		echo 4k >"/smartio/self/segments/reads${n}_1/size" &&
		echo 1 >"/smartio/self/segments/reads${n}_1/available" ||
		fail "the reads' segment"
else
	count() { ls /smartio/nodes/host1/segments | sed -n 's/^reads\([0-9]*\)_1$/\1/p'; }
	counted() { [ -n "$(count)" ]; }
	waitfor 900 counted || { fail "no count of reads from host1"; finish; }
	n=$(count)
fi

peers=$(for c in 1 2 3; do [ $c = "$P" ] || echo $c; done)
r=1
while [ $r -le "$rounds" ]; do
	if [ "$P" = 1 ]; then
		echo "NVMEQBENCH one $r host1 $(q bench -q 1 -r "$n" -n $BLOCKS 2>&1)"
		mark solo$r
	else
		wait_for solo$r 1
	fi
	echo "NVMEQBENCH three $r host$P $(q bench -q 1 -r "$n" -n $BLOCKS 2>&1)"
	mark trio$r
	# shellcheck disable=SC2086 # a list of nodes
	wait_for trio$r $peers
	# Every peer is past the last round's steps: they go, so that few
	# segments are listed (a run with all nine kept stopped, every node
	# waiting for a peer's third-round step it never saw).
	if [ $r -gt 1 ]; then
		rmdir "/smartio/self/segments/trio$((r - 1))$P"
		[ "$P" = 1 ] && rmdir "/smartio/self/segments/solo$((r - 1))1"
	fi
	r=$((r + 1))
done
# Every client's last run is over.  A node's steps vanish with it, so
# host2 and host3 stay until host1 has seen their last step (its "done"),
# and host1, the manager, goes once they have gone: a client that left
# at once could take its last step with it before host1 saw it.
if [ "$P" = 1 ]; then
	mark done
	gone() { ! is "/smartio/nodes/host$1/state" up; }
	for c in 2 3; do
		waitfor 600 gone $c || fail "host$c still up"
	done
else
	wait_for done 1
fi
finish
