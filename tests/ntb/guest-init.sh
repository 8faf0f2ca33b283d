#!/bin/busybox sh
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
# Every check prints "PASS: ..." or "FAIL: ..."; "NTB-END" ends the run.
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
role=$(sed -n 's/.*ntbrole=\([ab]\).*/\1/p' /proc/cmdline)
phase=$(sed -n 's/.*ntbphase=\([12]\).*/\1/p' /proc/cmdline)
echo "NTB-START role=$role phase=$phase"

fails=0
pass() { echo "PASS: $role: $*"; }
fail() { echo "FAIL: $role: $*"; fails=$((fails + 1)); }
finish() {
	echo "NTB-END role=$role phase=$phase fails=$fails"
	sync
	poweroff -f
	sleep 60
}
# waitfor SECONDS COMMAND...: poll every 0.2 s until COMMAND succeeds.
waitfor() {
	local n=$(($1 * 5))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		n=$((n - 1))
		sleep 0.2
	done
	return 1
}
is() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

insmod /ntb.ko || fail "insmod ntb.ko"
insmod /ntb_ivshmem.ko || fail "insmod ntb_ivshmem.ko"
pci=$(ls /sys/bus/pci/drivers/ntb_ivshmem | grep '^0000:' | sed -n 1p)
pci2=$(ls /sys/bus/pci/drivers/ntb_ivshmem | grep '^0000:' | sed -n 2p)
[ -n "$pci" ] && [ -n "$pci2" ] && pass "ntb_ivshmem bound to $pci and $pci2" ||
	{ fail "ntb_ivshmem bound to two devices"; finish; }
[ "$role" = a ] && me=0 peer=1 || me=1 peer=0
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
link_msgs() { dmesg | grep -c "ntb_ivshmem $pci: link $1"; }
msgs_above() { [ "$(link_msgs "$1")" -gt "$2" ]; }

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
if waitfor 120 smartio_up; then
	gen=$(sed -n 's/.*generation=//p' "$S/peer")
	pass "smartio_ntb: peer node $peernode up (generation $gen)"
else
	fail "smartio_ntb: peer: $(cat "$S/peer")"
fi
if smartio_call; then
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
	handshake 2
	# No window was set up here: every module unloads (ntb_ivshmem clears
	# its page, so a sees the link go down without waiting for a timeout).
	if rmmod smartio_ntb && rmmod ntb_tool && rmmod ntb_ivshmem && rmmod ntb; then
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
[ "$role" = a ] && other=b || other=a
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
finish
