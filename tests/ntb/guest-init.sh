#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of a check-ntb guest.  Kernel command line: ntbrole=a|b, ntbphase=1|2.
# Each guest has two software NTBs (two ivshmem-doorbell devices).
# Phase 1 (both guests): ntb_pingpong over both, then smartio_ntb on the
# second (discovery, a request and its reply each way) and ntb_tool on
# the first (link, ports, scratchpads, doorbells, both memory windows each
# way, set up in reverse order).  Then
# guest b powers off; guest a must see the link go down, and up again when
# the harness boots b a second time (phase 2), with scratchpads and
# doorbells working again; b2 unloads every module and a sees the link go
# down again.
# (ntb_tool is never unloaded: its 6.1 remove path frees its debugfs files
# twice when memory windows were set up.)
# After the smartio_ntb checks of phase 1, both guests load smartio.ko
# fabric=ntb over smartio_ntb and serve /smartio with smartiofs: both
# nodes up, a segment of each mapped by the other through /smartio, attach
# and detach cycles from both guests at once; a holds a mapping of b's
# segment while b powers off, and must see host1 down, its segment gone
# and the mapping revoked.  b2 loads smartio.ko again: host1 is up again
# and each maps the other's segment once more.
# Every check prints "PASS: ..." or "FAIL: ..."; "NTB-END" ends the run.
. /guest-common.sh
role=$(karg ntbrole)
phase=$(karg ntbphase)
echo "NTB-START role=$role phase=$phase"

fails=0
pass() { echo "PASS: $role: $*"; }
fail() { echo "FAIL: $role: $*"; fails=$((fails + 1)); }
finish() { power_off "NTB-END role=$role phase=$phase fails=$fails"; }
is() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

# --- smartio.ko over the NTB: helpers ---------------------------------------
# smartio_load [PARAM...]: FUSE, smartio.ko fabric=ntb as host$me with
# PARAMs, smartiofs on /smartio.
smartio_load() {
	modules_load
	if insmod /smartio.ko fabric=ntb node=$me "$@"; then
		pass "insmod smartio.ko fabric=ntb node=$me $*"
	else
		fail "insmod smartio.ko fabric=ntb node=$me $*"; finish
	fi
	mkdir -p /smartio /etc
	ln -sf /proc/mounts /etc/mtab
	# Both guests make segments on the other node (below): each mount
	# is a management mount, so that such requests reach the kernels,
	# which decide what the other machine's users may do (smartio(4)).
	manage=--manage
	if LD_LIBRARY_PATH=/lib/smartio smartiofs --fabric kernel \
		--node host$me $manage /smartio; then
		pass "smartiofs serves /smartio as host$me"
	else
		fail "smartiofs --fabric kernel --node host$me"; finish
	fi
}
# smartio_start: smartio_load with segments allowed (ntb_ivshmem cannot
# confine them), and the peer up there.
smartio_start() {
	smartio_load unconfined_segments=1
	if waitfor 120 is "$P/state" up; then
		pass "/smartio: host$peer up"
	else
		fail "/smartio: host$peer is '$(cat "$P/state")'"; finish
	fi
}
# segment_create TEXT: seg<role> of 64 KiB, exported, TEXT at its start.
segment_create() {
	if mkdir "$mine" && echo 64k >"$mine/size" &&
	   echo 1 >"$mine/available" && sio_segrw "$mine/mem" 0 write "$1" &&
	   [ "$(sio_segrw "$mine/mem" 0 read ${#1})" = "$1" ]; then
		pass "segment seg$role: $(cat "$mine/size") bytes, '$1' at 0 through $(readlink "$mine/mem")"
	else
		fail "segment seg$role: size '$(cat "$mine/size")', mem -> '$(readlink "$mine/mem")'"
	fi
}
# segment_peer TEXT: the peer's segment is listed and mapped here, holds
# TEXT, and gets "<role> was here" at 4096.
segment_peer() {
	if waitfor 30 is "$theirs/size" 65536; then
		pass "host$peer's segment seg$other listed here"
	else
		fail "host$peer's segment seg$other: $(ls "$P/segments")"
	fi
	# Only a write attaches (reading the tree never does); this shell
	# holds the attachment until it exits.
	echo "host$me" >"$theirs/attach" || fail "attach seg$other"
	got=$(sio_segrw "$theirs/mem" 0 read ${#1})
	if [ "$got" = "$1" ]; then
		pass "seg$other mapped here through $theirs/mem -> $(readlink "$theirs/mem"): '$got'"
	else
		fail "seg$other mapped here reads '$got'"
	fi
	sio_segrw "$theirs/mem" 4096 write "$role was here" ||
		fail "writing into seg$other"
}
# segment_written: what the peer wrote into ours.
segment_written() {
	got=$(sio_segrw "$mine/mem" 4096 read 10)
	if [ "$got" = "$other was here" ]; then
		pass "seg$role holds '$got' written by host$peer"
	else
		fail "seg$role holds '$got' at 4096"
	fi
	if waitfor 10 is "$mine/attached" "host$peer"; then
		pass "seg$role attached by host$peer"
	else
		fail "seg$role attached: '$(cat "$mine/attached")'"
	fi
}

# ntbdrv=ntb_sioswitch: the two NTBs are ports of two 2-port
# smartio-ntb-switches (NTB_FABRIC=switch) instead of ivshmem devices.
drv=$(karg ntbdrv)
drv=${drv:-ntb_ivshmem}
insmod /ntb.ko || fail "insmod ntb.ko"
insmod /$drv.ko || fail "insmod $drv.ko"
pci=$(ls /sys/bus/pci/drivers/$drv | grep '^0000:' | sed -n 1p)
pci2=$(ls /sys/bus/pci/drivers/$drv | grep '^0000:' | sed -n 2p)
[ -n "$pci" ] && [ -n "$pci2" ] && pass "$drv bound to $pci and $pci2" ||
	{ fail "$drv bound to two devices"; finish; }
[ "$role" = a ] && me=0 peer=1 || me=1 peer=0
[ "$role" = a ] && other=b || other=a
P=/smartio/nodes/host$peer
mine=/smartio/self/segments/seg$role
theirs=$P/segments/seg$other
# smartio_ntb runs on the second software NTB, as node 100 + port.
mynode=$((100 + me)) peernode=$((100 + peer))
S=/sys/kernel/debug/smartio_ntb/$pci2
smartio_up() { grep -q "^up node=$peernode " "$S/peer" 2>/dev/null; }
smartio_call() {
	echo "hello from $role" >"$S/call" &&
		[ "$(cat "$S/call")" = "node $peernode got: hello from $role" ]
}

pingpong_count() {
	cat /sys/kernel/debug/ntb_pingpong/"$pci"/count 2>/dev/null || echo -1
}
count_above() { [ "$(pingpong_count)" -gt "$1" ]; }

# --- ntb_pingpong ----------------------------------------------------------
if [ "$phase" = 1 ]; then
	insmod /ntb_pingpong.ko delay_ms=200 || fail "insmod ntb_pingpong"
	if waitfor 120 count_above 5; then
		pass "ntb_pingpong: count $(pingpong_count) > 5"
	else
		fail "ntb_pingpong: count stuck at $(pingpong_count)"
	fi
	sleep 3		# the peer gets its pings too
	rmmod ntb_pingpong || fail "rmmod ntb_pingpong"
fi

# --- smartio_ntb: discovery and messages over the second NTB ---------------
insmod /smartio_ntb.ko node=$mynode dev=$pci2 || fail "insmod smartio_ntb"
# In phase 2 host0's smartio.ko holds a's smartio_ntb, as node 0: it
# answers with the core's protocol, not the echo.
[ "$phase" = 2 ] && peernode=0
if waitfor 120 smartio_up; then
	gen=$(sed -n 's/.*generation=//p' "$S/peer")
	pass "smartio_ntb: peer node $peernode up (generation $gen)"
else
	fail "smartio_ntb: peer: $(cat "$S/peer")"
fi
if [ "$phase" = 2 ]; then
	if echo "hello from b" >"$S/call" && ! grep -q got: "$S/call"; then
		pass "smartio_ntb: host0's smartio.ko answers a call"
	else
		fail "smartio_ntb: call to host0's smartio.ko: '$(cat "$S/call")'"
	fi
elif smartio_call; then
	pass "smartio_ntb: reply '$(cat "$S/call")'"
else
	fail "smartio_ntb: call: '$(cat "$S/call")'"
fi

# --- ntb_tool (on the first NTB) ---------------------------------------------
insmod /ntb_tool.ko || fail "insmod ntb_tool"
[ -e /sys/kernel/debug/ntb_tool/"$pci2" ] && fail "ntb_tool took $pci2 too"
D=/sys/kernel/debug/ntb_tool/$pci
echo Y >"$D/link"
if waitfor 180 is "$D/peer0/link" Y; then
	pass "ntb_tool: link up"
else
	fail "ntb_tool: link up"; finish
fi
is "$D/port" "$me" && is "$D/peer0/port" "$peer" &&
	pass "ports $me and $peer" || fail "ports: $(cat "$D/port") $(cat "$D/peer0/port")"

mark=0x${phase}a$role$role
[ "$role" = a ] && want=0x${phase}abb || want=0x${phase}aaa
# handshake N: tell the peer we reached step N (its spadN), wait for its.
handshake() {
	echo "$mark" >"$D/peer0/spad$1"
	waitfor 60 is "$D/spad$1" "$want" || fail "peer did not reach step $1"
}

# Scratchpads: each writes a marker into the peer's spad0.
echo "$mark" >"$D/peer0/spad0"
is "$D/peer0/spad0" "$mark" || fail "peer spad0 reads back $(cat "$D/peer0/spad0")"
if waitfor 60 is "$D/spad0" "$want"; then
	pass "scratchpad: spad0 = $want written by the peer"
else
	fail "scratchpad: spad0 = $(cat "$D/spad0"), want $want"
fi

# Doorbells: a rings bit 0 of b, b rings bit 1 of a; only that bit is set,
# masked or not.
[ "$role" = a ] && out=0x1 in=0x2 || out=0x2 in=0x1
[ "$phase" = 1 ] && echo "s $in" >"$D/db_mask"
handshake 1
echo "s $out" >"$D/peer_db"
if waitfor 30 is "$D/db" "$in"; then
	pass "doorbell: db = $in rung by the peer"
else
	fail "doorbell: db = $(cat "$D/db"), want $in"
	grep -i ntb /proc/interrupts
fi
echo "c $in" >"$D/db"
is "$D/db" 0x0 && pass "doorbell cleared" || fail "db after clear: $(cat "$D/db")"
echo "c $in" >"$D/db_mask"

if [ "$phase" = 2 ]; then
	smartio_start
	segment_create "segment of b, again"
	handshake 3
	echo "host$me" >"$theirs/attach" || fail "attach sega after the restart"
	got=$(sio_segrw "$theirs/mem" 0 read 12)
	[ "$got" = "segment of a" ] &&
		pass "sega (kept by host0 across the restart) reads '$got' here" ||
		fail "sega reads '$got' after the restart"
	sio_segrw "$theirs/mem" 4096 write "b was here" ||
		fail "writing into sega after the restart"
	handshake 4
	segment_written
	handshake 5
	handshake 2
	# No window was set up here: every module unloads (ntb_ivshmem clears
	# its page, so a sees the link go down without waiting for a timeout).
	if umount /smartio && waitfor 10 rmmod smartio && rmmod smartio_ntb &&
	   rmmod ntb_tool && rmmod "$drv" && rmmod ntb; then
		pass "all modules unloaded"
	else
		fail "unloading the modules"
	fi
	finish
fi

# Memory windows: inbound buffers (window 1 first), then writes through
# the peer's outbound windows.
for w in 1 0; do
	echo 16384 >"$D/peer0/mw_trans$w" || fail "inbound window mw_trans$w"
	[ -e "$D/peer0/mw$w" ] && pass "inbound window $w: $(tr '\n\t' '  ' <"$D/peer0/mw_trans$w")" ||
		fail "no inbound window $w"
done
handshake 2
for w in 0 1; do
	echo 0:16384 >"$D/peer0/peer_mw_trans$w" || fail "outbound window $w"
	echo "hello from $role over window $w" >"$D/peer0/peer_mw$w"
done
handshake 3
for w in 0 1; do
	got=$(head -c 28 "$D/peer0/mw$w")
	if [ "$got" = "hello from $other over window $w" ]; then
		pass "memory window $w: read '$got'"
	else
		fail "memory window $w: read '$got'"
	fi
done
handshake 4

# smartio_ntb segments: each creates one in its window, tells the peer its
# offset (a scratchpad of the first NTB), reads the peer's through its own
# outbound window, writes into it, and reads what the peer wrote into its.
echo 8192 >"$S/seg" || fail "smartio_ntb: segment create"
off=$(cut -d' ' -f1 "$S/seg")
printf 'segment of %s' "$role" >"$S/seg_data"
echo "$off" >"$D/peer0/spad5"
handshake 6
poff=$(cat "$D/spad5")
echo "$poff 8192" >"$S/peer_seg" || fail "smartio_ntb: map the peer's segment at $poff"
got=$(head -c 12 "$S/peer_seg_data")
if [ "$got" = "segment of $other" ]; then
	pass "smartio_ntb: the peer's segment (offset $poff) reads '$got' here"
else
	fail "smartio_ntb: the peer's segment reads '$got'"
fi
printf '%s was here' "$role" |
	dd of="$S/peer_seg_data" bs=1 seek=4096 conv=notrunc 2>/dev/null
handshake 7
got=$(dd if="$S/seg_data" bs=1 skip=4096 count=10 2>/dev/null)
if [ "$got" = "$other was here" ]; then
	pass "smartio_ntb: own segment (offset $off) holds '$got' written by the peer"
else
	fail "smartio_ntb: own segment holds '$got'"
fi
handshake 8

# --- smartio.ko over the NTB: /smartio on both guests ------------------------
# Issue 12, defect 7: every peer reaches ntb_ivshmem's whole segment heap,
# so by default smartio.ko sizes no segment there.
smartio_load
c=/smartio/self/segments/confined$role
if mkdir "$c" && ! echo 64k 2>/tmp/size.err >"$c/size" &&
   grep -q "not supported" /tmp/size.err && is "$c/size" 0 && rmdir "$c"; then
	pass "without unconfined_segments=1 sizing a segment is refused: $(cat /tmp/size.err)"
else
	fail "sizing $c without unconfined_segments: '$(cat /tmp/size.err)', size $(cat "$c/size")"
fi
if umount /smartio && waitfor 10 rmmod smartio; then
	pass "smartio.ko unloaded, to load it again with unconfined_segments=1"
else
	fail "unloading smartio.ko after the refusal"; finish
fi
smartio_start
# The peer may see this load before it unloads its own first one: the
# view settles once both have loaded again.
both_up() {
	[ "$(readlink /smartio/self)" = "nodes/host$me" ] &&
	[ "$(ls /smartio/nodes | tr '\n' ' ')" = "host0 host1 " ] &&
	is /smartio/self/state up && is /smartio/self/adapters/ntb0/link up
}
if waitfor 60 both_up; then
	pass "/smartio: self is host$me, nodes host0 and host1, ntb0 link up"
else
	fail "/smartio: self $(readlink /smartio/self), nodes $(ls /smartio/nodes)"
fi
segment_create "segment of $role"
handshake 9
segment_peer "segment of $other"
handshake 10
segment_written
handshake 11
# Both guests at once: a write to the peer's segment (available) and a
# detach or attach wait for the owner, whose handler needs the owner's
# lock, while the owner waits for them: each lets go of its lock while
# it waits (sio_ntb.c).  Three loops keep the lock busy.
# (A crossing that is not resolved waits for the 5 s call timeout and
# fails.)
F=/sys/kernel/debug/smartio_fabric/in_place
in0=$(cat $F)
t0=$(date +%s)
rm -f /tmp/loop*.bad
# The writes go to a segment this node's user made on the peer: the
# peer's own segments are not this node's to export (issue 12, defect 7).
lp=$P/segments/loop$role
mkdir "$lp" && echo 4k >"$lp/size" || fail "segment loop$role on host$peer"
for k in 1 2; do
	(
		i=0
		while [ $i -lt 30 ]; do
			echo 1 >"$lp/available" || echo "$i" >>/tmp/loop$k.bad
			i=$((i + 1))
		done
	) &
done
i=0
while [ $i -lt 12 ]; do
	echo "host$me" >"$theirs/detach" || echo "$i" >>/tmp/loop0.bad
	echo "host$me" >"$theirs/attach" || echo "$i" >>/tmp/loop0.bad
	i=$((i + 1))
done
wait
t=$(($(date +%s) - t0))
bad=$(cat /tmp/loop*.bad 2>/dev/null | wc -l)
if [ "$bad" = 0 ] && [ "$t" -lt 60 ]; then
	pass "60 writes to loop$role on host$peer and 12 detach/attach cycles from both guests at once ($t s, $(($(cat $F) - in0)) requests ran for a parked sender)"
else
	fail "writes and detach/attach from both guests at once: $bad failed, $t s"
fi
rmdir "$lp" || fail "rmdir $lp"
got=$(sio_segrw "$theirs/mem" 0 read 12)
[ "$got" = "segment of $other" ] && pass "seg$other still reads '$got'" ||
	fail "seg$other reads '$got' after the cycles"

# Issue 12, defect 7: the peer's user does not act as this node, and a
# segment destroyed here is scrubbed at once (the peer reaches the whole
# inbound window, free pages included).  step N: both guests reached
# step N of these checks (scratchpad 14 of the first NTB).
# The peer may already be past step N (its next step overwrites the
# scratchpad): any value of its from step N on will do.
peer_at_least() {
	local v
	v=$(cat "$D/spad14" 2>/dev/null) || return 1
	[ $((v)) -ge $(($1)) ] && [ $((v)) -lt $((0x7100)) ]
}
step() {
	[ "$role" = a ] && s_me=0 || s_me=1
	echo "$(printf '%#x' $((0x7000 + $1 * 2 + s_me)))" >"$D/peer0/spad14"
	waitfor 300 peer_at_least $((0x7000 + $1 * 2 + 1 - s_me)) ||
		fail "peer did not reach check step $1"
}
if echo 1 >"$theirs/available" 2>/dev/null ||
   echo 1k >"$theirs/size" 2>/dev/null || rmdir "$theirs" 2>/dev/null; then
	fail "the owner's seg$other changed from here: host$peer's user acted as host$peer"
else
	pass "seg$other cannot be unexported, sized or destroyed from here"
fi
hid=/smartio/self/segments/hidden$role
mkdir "$hid" && echo 8k >"$hid/size" &&
	sio_segrw "$hid/mem" 0 write "hidden secret of $role" ||
	fail "segment hidden$role"
step 1
if grep -q "^node host$peer .* refused=[1-9]" /sys/kernel/debug/smartio/state; then
	pass "the refusals are counted: $(grep "^node host$peer" /sys/kernel/debug/smartio/state)"
else
	fail "no refusal counted: $(grep "^node" /sys/kernel/debug/smartio/state | tr '\n' ' ')"
fi
# The peer's segment hidden<other> where its table says it is in the
# peer's window (this node's copy of the record, debugfs state), read as
# a hostile kernel here would read it.
waitfor 30 grep -q "^seg host$peer.hidden$other size=0x2000 " \
	/sys/kernel/debug/smartio/state
hoff=$(sed -n "s/^seg host$peer.hidden$other .*backing=\(0x[0-9a-f]*\).*/\1/p" \
	/sys/kernel/debug/smartio/state)
peer_heap_has() {
	echo "$hoff 8192" >"$S/peer_seg" && grep -q "$1" "$S/peer_seg_data"
}
if [ -n "$hoff" ] && peer_heap_has "hidden secret of $other"; then
	echo "INFO: $role: hidden$other, not exported, is readable at $hoff of host$peer's window (ntb_ivshmem cannot narrow the translation: kmod/README)"
else
	fail "hidden$other not found in host$peer's window (offset '$hoff'): the scrub check below would prove nothing"
fi
step 2
rmdir "$hid" || fail "rmdir hidden$role"
step 3
if peer_heap_has "hidden secret of $other"; then
	fail "hidden$other, destroyed, is still readable through the window"
else
	pass "hidden$other, destroyed, reads as zeros through the window"
fi
if mkdir "$hid" && echo 8k >"$hid/size" &&
   [ "$(sio_segrw "$hid/mem" 0 read 22)" = "......................" ] &&
   rmdir "$hid"; then
	pass "hidden$role created again reads zeros (sio_segrw shows them as dots)"
else
	fail "hidden$role created again: '$(sio_segrw "$hid/mem" 0 read 22)'"
fi
# a creates, sizes and destroys a segment on host1 from here: each command
# returns once this node knows the outcome.
if [ "$role" = a ]; then
	r=$P/segments/froma
	if mkdir "$r" && echo 16k >"$r/size" && is "$r/size" 16384 &&
	   echo 1 >"$r/available" && is "$r/available" 1 &&
	   echo host0 >"$r/attach" &&
	   sio_segrw "$r/mem" 0 write "made by a" &&
	   [ "$(sio_segrw "$r/mem" 0 read 9)" = "made by a" ]; then
		pass "a segment made on host1 from here: mkdir, size $(cat "$r/size"), available, mapped through $(readlink "$r/mem")"
	else
		fail "making $r on host1: $(ls "$P/segments" | tr '\n' ' ')"
	fi
	echo host0 >"$r/detach" 2>/dev/null
	if rmdir "$r" && [ ! -e "$r" ]; then
		pass "rmdir $r destroys it on host1"
	else
		fail "rmdir $r: $(ls "$P/segments" | tr '\n' ' ')"
	fi
	# Back to back, so that no table pushed later can hide a late answer.
	i=0 bad=0
	while [ $i -lt 20 ]; do
		{ mkdir "$r$i" && echo 8k >"$r$i/size" &&
		  is "$r$i/size" 8192 && echo 1 >"$r$i/available" &&
		  is "$r$i/available" 1 && rmdir "$r$i" &&
		  [ ! -e "$r$i" ]; } 2>>/tmp/remote.err || bad=$((bad + 1))
		i=$((i + 1))
	done
	if [ "$bad" = 0 ]; then
		pass "20 segments made, sized, exported and destroyed on host1 from here"
	else
		fail "$bad of 20 remote segment cycles failed: $(head -n 3 /tmp/remote.err)"
	fi
fi
handshake 12
if [ "$role" = a ]; then
	sio_segrw "$theirs/mem" 0 hold 16 /tmp/go >/tmp/hold.out 2>&1 &
	hold=$!
	waitfor 10 grep -q "segment of b" /tmp/hold.out ||
		fail "holding a mapping of segb: $(cat /tmp/hold.out)"
fi
handshake 13

# --- the peer powers off and comes back ----------------------------------------
if [ "$role" = b ]; then
	sleep 1
	finish
fi
if waitfor 60 is "$D/peer0/link" N; then
	pass "link down after the peer powered off"
else
	fail "link still up after the peer powered off"
fi
if waitfor 30 is "$S/peer" down; then
	pass "smartio_ntb: peer down after the peer powered off"
else
	fail "smartio_ntb: peer $(cat "$S/peer") after the peer powered off"
fi
echo ping >"$S/call" 2>/dev/null && fail "smartio_ntb: a call to a node that is off worked" ||
	pass "smartio_ntb: a call to a node that is off fails"
if waitfor 30 is "$P/state" down; then
	pass "/smartio: host1 down after it powered off"
else
	fail "/smartio: host1 is '$(cat "$P/state")' after it powered off"
fi
if [ -z "$(ls "$P/segments")" ] && ! ls /dev/sio-host1-* >/dev/null 2>&1; then
	pass "host1's segment and this node's mapping device for it are gone"
else
	fail "left of host1: segments '$(ls "$P/segments")', $(ls /dev/sio-host1-* 2>&1)"
fi
is "$mine/attached" "" && pass "sega no longer attached by host1" ||
	fail "sega attached: '$(cat "$mine/attached")'"
touch /tmp/go
wait "$hold"
st=$?
if [ "$st" = 135 ]; then
	pass "the mapping of host1's segment was revoked (SIGBUS)"
else
	fail "the mapping of host1's segment: status $st, $(cat /tmp/hold.out)"
fi
if waitfor 300 is "$D/peer0/link" Y; then
	pass "link up again after the peer restarted"
else
	fail "link not up after the peer restarted"; finish
fi
if waitfor 120 smartio_up && ! grep -q "generation=$gen" "$S/peer"; then
	pass "smartio_ntb: peer node $peernode up again, $(cat "$S/peer")"
else
	fail "smartio_ntb: after the restart: $(cat "$S/peer"), was generation $gen"
fi
smartio_call && pass "smartio_ntb: reply after the restart '$(cat "$S/call")'" ||
	fail "smartio_ntb: call after the restart: '$(cat "$S/call")'"
# New markers from the restarted peer (phase 2 of b).
want=0x2abb mark=0x2aaa
if waitfor 60 is "$D/spad0" "$want"; then
	pass "scratchpad after restart: spad0 = $want"
else
	fail "scratchpad after restart: spad0 = $(cat "$D/spad0")"
fi
echo "$mark" >"$D/peer0/spad0"
handshake 1
echo "s $out" >"$D/peer_db"
if waitfor 30 is "$D/db" "$in"; then
	pass "doorbell after restart: db = $in"
else
	fail "doorbell after restart: db = $(cat "$D/db")"
fi
echo "c $in" >"$D/db"
# b2 loads smartio.ko now: host1 comes back, segments flow again.
if waitfor 120 is "$P/state" up; then
	pass "/smartio: host1 up again after its restart"
else
	fail "/smartio: host1 is '$(cat "$P/state")' after its restart"
fi
sio_segrw "$mine/mem" 4096 write "----------"	# b2 writes it again
handshake 3
segment_peer "segment of b, again"
handshake 4
segment_written
handshake 5
handshake 2
t0=$(date +%s)
if waitfor 60 is "$D/peer0/link" N; then
	pass "link down after the peer unloaded its driver ($(($(date +%s) - t0)) s)"
else
	fail "link still up after the peer unloaded its driver"
fi
if waitfor 30 is "$S/peer" down; then
	pass "smartio_ntb: peer down after the peer unloaded"
else
	fail "smartio_ntb: peer $(cat "$S/peer") after the peer unloaded"
fi
if is "$P/state" down && [ -z "$(ls "$P/segments")" ]; then
	pass "/smartio: host1 down and without segments after it unloaded"
else
	fail "/smartio: host1 '$(cat "$P/state")', segments '$(ls "$P/segments")'"
fi
umount /smartio && waitfor 10 rmmod smartio && pass "smartio.ko unloads" ||
	fail "unloading smartio.ko"
finish
