#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of a check-ntb cluster guest (tests/ntb/check_cluster.sh): port
# swport= of a 3-port smartio-ntb-switch is smartio node host<port> of
# three (smartio.ko fabric=ntb nodes=3 over smartio_ntb and
# ntb_sioswitch), with smartiofs on /smartio.  swphase=1|2.
# Phase 1, every node:
#  - the three nodes listed, the two others up;
#  - a segment seg<P> of its own (64 KiB, exported, "segment of host<P>"
#    at 0); each other node's segment attached and read here, and
#    "host<P> was here" written into it at 4096 * (P + 1);
#  - its own segment attached by both others, holding what each wrote,
#    and each other node's segment holding what the third node wrote
#    (read here through this node's window: data written by one node is
#    seen by another);
#  - host2 powers off: host0 and host1 see it down, its segment gone, a
#    mapping of it revoked (SIGBUS), and each other still up with its
#    segment readable;
# Phase 2 (host2 booted again): host2 up on both, its new segment attached
# and read by both, both segments of theirs attached and read by host2,
# and each written by the others again.
# The nodes wait for each other through /smartio itself (steps,
# tests/ntb/cluster-steps.sh).
# A node that powers off waits until the others marked that they saw its
# last step (bye, fin) first: its segments go with it.
# Every check prints "PASS: ..." or "FAIL: ..."; "NTB-END" ends the run.
. /guest-common.sh
P=$(karg swport)
phase=$(karg swphase)
N=3
OFF=2	# the node that powers off in phase 1
echo "NTB-START port=$P phase=$phase"

. /cluster-steps.sh

mine=/smartio/self/segments/seg$P
seg_of() { echo "/smartio/nodes/host$1/segments/seg$1"; }

# --- smartio.ko fabric=ntb, node P of N ----------------------------------
insmod /ntb.ko || fail "insmod ntb.ko"
insmod /ntb_sioswitch.ko || fail "insmod ntb_sioswitch.ko"
insmod /smartio_ntb.ko node="$P" || fail "insmod smartio_ntb.ko"
modules_load
# Without lut_mws the switch offers no single entries: every peer
# reaches the whole segment heap (kmod/README), accepted here.
# host0 is told the cabling (port_nodes, smartio(4)); first with ports 1
# and 2 swapped, so that host1 and host2 are refused even at their first
# announcement, and with a pair naming no node, which refuses the load.
if [ "$P" = 0 ]; then
	f=/sys/kernel/debug/smartio_fabric/ids_refused
	# Each peer's refusal logged (a peer may announce twice before the
	# other's first announcement arrives: counting is not enough).
	both_refused() {
		[ "$(cat $f 2>/dev/null || echo 0)" -ge 2 ] &&
		dmesg | grep -q "behind port 1 announcing node id 1 refused: port_nodes pins node id 2 behind port 1" &&
		dmesg | grep -q "behind port 2 announcing node id 2 refused: port_nodes pins"
	}
	smartio_up unconfined_segments=1 port_nodes=1:2,2:1
	if waitfor 120 both_refused; then
		pass "port_nodes=1:2,2:1: host1 and host2 refused at their first announcement ($(cat $f) refusals)"
	else
		fail "port_nodes=1:2,2:1: ids_refused '$(cat $f 2>&1)', $(dmesg | grep port_nodes | tail -n 1)"
	fi
	rmmod smartio || fail "rmmod smartio after the swapped pins"
	if insmod /smartio.ko fabric=ntb nodes="$N" node=0 port_nodes=1:1,2:7 2>/dev/null; then
		fail "port_nodes=1:1,2:7 (no node 7) loaded"
		rmmod smartio
	elif dmesg | grep -q "port_nodes: '2:7' is not PORT:ID"; then
		pass "port_nodes=1:1,2:7 refused: $(dmesg | grep "port_nodes: '2:7'" | tail -n 1 | sed 's/^\[[^]]*\] //')"
	else
		fail "port_nodes=1:1,2:7 refused without naming the pair"
	fi
	smartio_up unconfined_segments=1 port_nodes=1:1,2:2
else
	smartio_up unconfined_segments=1
fi
smartiofs_up
if [ "$(readlink /smartio/self)" = "nodes/host$P" ] &&
   [ "$(ls /smartio/nodes | tr '\n' ' ')" = "host0 host1 host2 " ]; then
	pass "/smartio: self is host$P, nodes host0 host1 host2"
else
	fail "/smartio: self $(readlink /smartio/self), nodes $(ls /smartio/nodes | tr '\n' ' ')"
fi
for q in $others; do
	if waitfor 600 is "/smartio/nodes/host$q/state" up; then
		pass "/smartio: host$q up"
	else
		fail "/smartio: host$q is '$(cat "/smartio/nodes/host$q/state")'"; finish
	fi
done
is /smartio/self/adapters/ntb0/link up && pass "ntb0 link up" ||
	fail "ntb0 link '$(cat /smartio/self/adapters/ntb0/link)'"

# --- helpers -----------------------------------------------------------------
# own_segment TEXT: seg<P> of 64 KiB with TEXT at 0, then exported: the
# others read TEXT as soon as they see the segment.
own_segment() {
	if mkdir "$mine" && echo 64k >"$mine/size" &&
	   sio_segrw "$mine/mem" 0 write "$1" &&
	   [ "$(sio_segrw "$mine/mem" 0 read ${#1})" = "$1" ] &&
	   echo 1 >"$mine/available"; then
		pass "segment seg$P: $(cat "$mine/size") bytes, '$1' at 0"
	else
		fail "segment seg$P: size '$(cat "$mine/size")', mem -> '$(readlink "$mine/mem")'"
	fi
}
# use_segment Q TEXT: host<Q>'s segment exported, attached and mapped here,
# TEXT at 0; "host<P> was here" written at 4096 * (P + 1).
use_segment() {
	local s
	s=$(seg_of "$1")
	if waitfor 120 is "$s/available" 1 && is "$s/size" 65536; then
		pass "host$1's seg$1 listed here"
	else
		fail "host$1's seg$1: $(ls "/smartio/nodes/host$1/segments" | tr '\n' ' ')"
	fi
	# Only a write attaches; this shell holds the attachment.
	# A brace group, not $(...): the write must come from this shell.
	{ echo "host$P" >"$s/attach"; } 2>/tmp/attach.err ||
		fail "attach seg$1: $(cat /tmp/attach.err)"
	got=$(sio_segrw "$s/mem" 0 read ${#2})
	if [ "$got" = "$2" ]; then
		pass "seg$1 mapped here through $(readlink "$s/mem"): '$got'"
	else
		fail "seg$1 mapped here reads '$got'"
	fi
	sio_segrw "$s/mem" $((4096 * (P + 1))) write "host$P was here" ||
		fail "writing into seg$1"
}
# attached_by Q: host<Q> attached seg<P>.
attached_by() {
	if waitfor 120 grep -qx "host$1" "$mine/attached"; then
		pass "seg$P attached by host$1"
	else
		fail "seg$P attached: '$(cat "$mine/attached" | tr '\n' ' ')'"
	fi
}
# written FILE Q: what host<Q> wrote into the segment behind FILE.
written() {
	got=$(sio_segrw "$1" $((4096 * ($2 + 1))) read 14)
	[ "$got" = "host$2 was here" ]
}

if [ "$phase" = 2 ]; then
	# --- host2 again: the others' segments outlived its power-off --------
	own_segment "segment of host$P, again"
	for q in $others; do
		use_segment "$q" "segment of host$q"
	done
	for q in $others; do
		attached_by "$q"
	done
	step again
	for q in $others; do
		written "$mine/mem" "$q" && pass "seg$P holds what host$q wrote" ||
			fail "seg$P at $((4096 * (q + 1))): '$got'"
	done
	# The others leave once this node is gone: it leaves last but one.
	# shellcheck disable=SC2086 # a list of nodes
	wait_for fin $others
	finish
fi

# --- phase 1: three nodes, three segments --------------------------------------
own_segment "segment of host$P"
for q in $others; do
	use_segment "$q" "segment of host$q"
done
for q in $others; do
	attached_by "$q"
done
step wrote
for q in $others; do
	written "$mine/mem" "$q" && pass "seg$P holds what host$q wrote" ||
		fail "seg$P at $((4096 * (q + 1))): '$got'"
	# The third node's write, read through this node's window.
	for r in $others; do
		[ "$r" = "$q" ] && continue
		if written "$(seg_of "$q")/mem" "$r"; then
			pass "seg$q holds what host$r wrote, read here"
		else
			fail "seg$q at $((4096 * (r + 1))) reads '$got' here"
		fi
	done
done
if [ "$P" != $OFF ]; then
	sio_segrw "$(seg_of $OFF)/mem" 0 hold 16 /tmp/go >/tmp/hold.out 2>&1 &
	hold=$!
	waitfor 30 grep -q "segment of host$OFF" /tmp/hold.out ||
		fail "holding a mapping of seg$OFF: $(cat /tmp/hold.out)"
fi
step read
# Every node passed step wrote before it marked read.
rmdir "/smartio/self/segments/wrote$P" || fail "rmdir step segment wrote$P"
if [ "$P" = $OFF ]; then
	# Powered off only once the others saw it reach step read.
	# shellcheck disable=SC2086 # a list of nodes
	wait_for bye $others
	finish
fi
mark bye

# --- host2 powers off --------------------------------------------------------
t0=$(date +%s)
if waitfor 120 is "/smartio/nodes/host$OFF/state" down; then
	pass "/smartio: host$OFF down $(($(date +%s) - t0)) s after its last step"
else
	fail "/smartio: host$OFF is '$(cat "/smartio/nodes/host$OFF/state")' after it powered off"
fi
if [ -z "$(ls "/smartio/nodes/host$OFF/segments")" ] &&
   ! ls /dev/sio-host$OFF-* >/dev/null 2>&1; then
	pass "host$OFF's segments and this node's mapping device are gone"
else
	fail "left of host$OFF: segments '$(ls "/smartio/nodes/host$OFF/segments" | tr '\n' ' ')', $(ls /dev/sio-host$OFF-* 2>&1)"
fi
not_attached() { ! grep -qx "host$OFF" "$mine/attached"; }
if waitfor 30 not_attached; then
	pass "seg$P no longer attached by host$OFF"
else
	fail "seg$P still attached by host$OFF"
fi
touch /tmp/go
wait "$hold"
st=$?
if [ "$st" = 135 ]; then
	pass "the mapping of seg$OFF was revoked (SIGBUS)"
else
	fail "the mapping of seg$OFF: status $st, $(cat /tmp/hold.out)"
fi
for q in $others; do
	[ "$q" = $OFF ] && continue
	if is "/smartio/nodes/host$q/state" up &&
	   [ "$(sio_segrw "$(seg_of "$q")/mem" 0 read 16)" = "segment of host$q" ]; then
		pass "host$q still up, seg$q still reads 'segment of host$q'"
	else
		fail "host$q '$(cat "/smartio/nodes/host$q/state")' after host$OFF went down"
	fi
done
# host2 writes here again after its restart.
sio_segrw "$mine/mem" $((4096 * (OFF + 1))) write "--------------"

# --- host2 back ------------------------------------------------------------
if waitfor 900 is "/smartio/nodes/host$OFF/state" up; then
	pass "/smartio: host$OFF up again after its restart"
else
	fail "/smartio: host$OFF is '$(cat "/smartio/nodes/host$OFF/state")' after its restart"; finish
fi
use_segment $OFF "segment of host$OFF, again"
attached_by $OFF
step again
written "$mine/mem" $OFF && pass "seg$P holds what host$OFF wrote after its restart" ||
	fail "seg$P at $((4096 * (OFF + 1))): '$got' after host$OFF's restart"
# host2 leaves once it saw both marks; nobody waits for this node then.
mark fin
waitfor 900 is "/smartio/nodes/host$OFF/state" down ||
	fail "host$OFF did not power off at the end"
finish
