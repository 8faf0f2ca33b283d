#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two smartiofs processes serving host0 and host1 of one fabric, each at its
# own mount point: state written through either mount is visible through the
# other at once; after kill -9 of one daemon the other shows its node down
# within 3 seconds and the dead node's borrows cleaned up.
. "$(dirname "$0")/lib.sh"

mount_sfs "$TMP/m0" --fabric "$FABRIC" --node host0
A=$TMP/m0
mount_sfs "$TMP/m1" --fabric "$FABRIC" --node host1
B=$TMP/m1
PID_B=$LAST_PID

expect_eq "self on A" "$(readlink "$A/self")" "nodes/host0"
expect_eq "self on B" "$(readlink "$B/self")" "nodes/host1"
expect_eq "host1 seen by A" "$(cat "$A/nodes/host1/state")" "up"
expect_eq "host0 seen by B" "$(cat "$B/nodes/host0/state")" "up"
expect_eq "host2 (unserved)" "$(cat "$A/nodes/host2/state")" "down"
expect_eq "same devices" "$(ls "$A/dev" | tr '\n' ' ')" "$(ls "$B/dev" | tr '\n' ' ')"

exec 3<"$B/events"	# B's event cursor starts now

# Written on one node, read on the other, with no delay in between.
echo all > "$A/dev/nvme0/lend"
expect_eq "lend seen by B" "$(cat "$B/dev/nvme0/lend")" "all"
[ ! -e "$B/dev/nvme0/bar0" ] || fail "bar0 on B before borrowing"
echo host1 > "$B/dev/nvme0/borrow"
expect_eq "borrow seen by A" "$(cat "$A/dev/nvme0/borrow")" "host1"
expect_eq "state seen by A" "$(cat "$A/dev/nvme0/state")" "borrowed"
[ -L "$B/dev/nvme0/bar0" ] || fail "no bar0 on B right after borrowing"

echo all > "$B/dev/nic1/lend" 2>/dev/null && fail "nic1 is host3's: lend should fail" || true
echo all > "$A/dev/nic0/lend"
# A mount acts for its own node only (smartio(7), AUTHORIZATION).
echo host1 > "$A/dev/nic0/borrow" 2>/dev/null && fail "host0's mount borrowed for host1" || true
echo host1 > "$B/dev/nic0/borrow"
expect_eq "borrowed/ on B" "$(ls "$B/nodes/host1/borrowed" | tr '\n' ' ')" "nic0 nvme0 "
[ -L "$B/dev/nic0/bar2" ] || fail "no bar2 on B right after borrowing"
echo 1 > "$A/dev/nic0/reclaim"	# written on A, the lender
[ ! -e "$B/dev/nic0/bar2" ] || fail "bar2 still on B right after A's reclaim"
expect_eq "borrowed/ on B after return" "$(ls "$B/nodes/host1/borrowed")" "nvme0"

read -r -t 2 line <&3 || fail "no event on B"
case $line in *" lend dev/nvme0 policy=all") ;; *) fail "event: '$line'";; esac
read -r -t 2 line <&3 || fail "no second event on B"
case $line in *" borrow dev/nvme0 node=host1") ;; *) fail "event: '$line'";; esac
exec 3<&-

mkdir "$B/self/segments/sb"
echo 4k > "$B/self/segments/sb/size"
expect_eq "B's segment seen by A" "$(ls "$A/seg")" "host1.sb"

# kill -9 of host1's daemon: A declares it down and cleans up its borrows.
exec 4<"$A/events"
kill -9 "$PID_B"; wait "$PID_B" 2>/dev/null || true
start=$(date +%s%N)
while [ "$(cat "$A/nodes/host1/state")" != down ]; do
	[ $(( $(date +%s%N) - start )) -lt 3000000000 ] || fail "host1 not down after 3 s"
	sleep 0.05
done
ms=$(( ($(date +%s%N) - start) / 1000000 ))
expect_eq "nvme0 borrow after host1 died" "$(cat "$A/dev/nvme0/borrow")" ""
expect_eq "nvme0 state after host1 died" "$(cat "$A/dev/nvme0/state")" "available"
expect_eq "host1 borrowed/ after death" "$(ls "$A/nodes/host1/borrowed")" ""
expect_eq "luts of host0 after cleanup" "$(cut -d' ' -f1 "$A/nodes/host0/adapters/ntb0/luts")" "0"
found=0
while read -r -t 2 line <&4; do
	case $line in *" node-down nodes/host1"*|*" node-down "*host1*) found=1; break;; esac
done
[ $found = 1 ] || fail "no node-down event for host1"
exec 4<&-
fusermount3 -u -z "$B"
echo "PASS: $TEST (host1 down after ${ms} ms)"
