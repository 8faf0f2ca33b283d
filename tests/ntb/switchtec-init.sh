#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of make check-ntb's Switchtec part (tests/ntb/check_switchtec.sh):
# one partition of the switchtec-nt model (contrib/qemu/switchtec-nt.c),
# driven by the unmodified mainline switchtec.ko and ntb_hw_switchtec.ko.
# Kernel command line: swport=0|1, swlut=0|1 (ntb_hw_switchtec's
# use_lut_mws), swperf=N (ntb_perf runs in a row after each start; 0:
# none), swstarts=K (ntb_perf starts, default 1).
#  - both drivers bind; the management device's sysfs reads what the
#    chip's GAS holds (partition, count, device version);
#  - ntb_tool: link up, scratchpads and a doorbell each way, the two
#    direct windows (and with swlut=1 the first LUT window) written by
#    one side and read by the other;
#  - ntb_pingpong counts pongs; ntb_perf, port 0 to port 1, swperf runs
#    after each of swstarts starts, and no command it did not know;
#  - smartio_ntb: the peer node up, a call answered, a segment of each
#    side read and written by the other through its window;
#  - with swmsi=1 ntb_msi_test: an MSI-X vector triggered across.
# Lines: "PASS: ...", "FAIL: ...", "NTB-PERF ..."; "NTB-END" ends the run.
. /guest-common.sh
P=$(karg swport)
L=$(karg swlut)
q=$((1 - P))
echo "NTB-START port=$P lut=$L"

fails=0
pass() { echo "PASS: port $P: $*"; }
fail() { echo "FAIL: port $P: $*"; fails=$((fails + 1)); }
finish() { power_off "NTB-END port=$P fails=$fails"; }
is() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

pci=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x11f8 ] && pci=$(basename "$d")
done
[ -n "$pci" ] || { fail "no Switchtec function"; finish; }
class=$(cat "/sys/bus/pci/devices/$pci/class")
[ "$class" = 0x068000 ] && pass "NT function $pci class $class" ||
	fail "NT function $pci class $class"

# --- what the chip refuses: a LUT entry written without LOCK stays as it
# was (the model logs and counts it: check_switchtec.sh reads the log),
# and an offset that names no register reads 0.  Before switchtec.ko
# claims BAR0 (the kernel's strict /dev/mem then refuses devmem).
R=$(sed -n 1p "/sys/bus/pci/devices/$pci/resource" | cut -d' ' -f1)
lut5=$((R + 0x14000 + P * 0x2000 + 0x1000 + 8 * 5))
old=$(devmem "$lut5" 32)
devmem "$lut5" 32 0x12340001
now=$(devmem "$lut5" 32)
if [ -n "$now" ] && [ "$now" = "$old" ]; then
	pass "LUT entry written without LOCK refused: $now"
else
	fail "LUT entry written without LOCK: $old -> $now"
fi
is_zero() { v=$(devmem "$1" 32) && [ -n "$v" ] && [ "$((v))" = 0 ]; }
is_zero $((R + 0x1000)) && pass "reserved GAS offset 0x1000 reads 0" ||
	fail "reserved GAS offset 0x1000 reads $(devmem $((R + 0x1000)) 32)"

insmod /ntb.ko || fail "insmod ntb.ko"
insmod /switchtec.ko || fail "insmod switchtec.ko"
insmod /ntb_hw_switchtec.ko use_lut_mws="$L" ||
	fail "insmod ntb_hw_switchtec.ko"
S=/sys/class/switchtec/switchtec0
if [ -d "$S" ] && is "$S/partition" "$P" && is "$S/partition_count" 2; then
	pass "switchtec0: partition $(cat "$S/partition") of $(cat "$S/partition_count"), device_version $(cat "$S/device_version"), product $(cat "$S/product_id")"
else
	fail "switchtec0: $(ls "$S" 2>&1 | tr '\n' ' ')"
fi
# MRPC through switchtec.ko's character device, as switchtec-user sends
# it: a write of the command word and its input, a read of the return
# code and the output.  mrpc OUTLEN INPUT: the answer in hex bytes.
mrpc() {
	exec 3<>/dev/switchtec0 || return 1
	printf "$2" >&3
	dd bs=$((4 + $1)) count=1 <&3 2>/dev/null | od -An -tx1 | tr -d ' \n'
	exec 3<&-
}
# ECHO (65): 0x12345678 comes back inverted, the next word as it went.
got=$(mrpc 8 '\101\000\000\000\170\126\064\022\252\125\000\377')
if [ "$got" = 0000000087a9cbedaa5500ff ]; then
	pass "MRPC echo through /dev/switchtec0: $got"
else
	fail "MRPC echo: '$got'"
fi
# DIETEMP (4): a measurement, then its reading (die-temp=5125).
mrpc 0 '\004\000\000\000\001\000\000\000' >/dev/null
got=$(mrpc 4 '\004\000\000\000\002\000\000\000')
if [ "$got" = 0000000005140000 ]; then
	pass "MRPC die temperature: 51.25 C ($got)"
else
	fail "MRPC die temperature: '$got'"
fi
# A command the model's firmware lacks answers an error, not silence.
got=$(mrpc 4 '\007\000\000\000')
case $got in
00000000*|"") fail "MRPC PMON (7) answered '$got', not an error" ;;
*) pass "MRPC PMON (7), not modelled, answers an error: $got" ;;
esac
registered() { dmesg | grep -q "NTB device registered"; }
if waitfor 10 registered; then
	pass "ntb_hw_switchtec: NTB device registered"
else
	fail "ntb_hw_switchtec did not register"
	dmesg | grep -i switchtec | tail -n 5
	finish
fi

# --- ntb_tool --------------------------------------------------------------
insmod /ntb_tool.ko || fail "insmod ntb_tool"
D=/sys/kernel/debug/ntb_tool/$pci
echo Y >"$D/link"
if waitfor 300 is "$D/peer0/link" Y; then
	pass "ntb_tool: link up"
else
	fail "ntb_tool: no link"
	dmesg | tail -n 20
	finish
fi
# step K: both sides reached step K (scratchpad 10, written by the peer;
# a peer that went on may have written K + 1 already).
reached() { [ "$(($(cat "$D/spad10")))" -ge "$1" ]; }
step() {
	echo "$1" >"$D/peer0/spad10"
	waitfor 120 reached "$1" || fail "port $q did not reach step $1"
}
echo "0x5$P$q" >"$D/peer0/spad3"
if waitfor 60 is "$D/spad3" "0x5$q$P"; then
	pass "scratchpad from port $q: $(cat "$D/spad3")"
else
	fail "scratchpad from port $q: $(cat "$D/spad3")"
fi
step 1
echo "s 0x4" >"$D/peer_db"
if waitfor 30 is "$D/db" 0x4; then
	pass "doorbell from port $q: db = $(cat "$D/db")"
else
	fail "doorbell from port $q: db = $(cat "$D/db")"
fi
echo "c 0x4" >"$D/db"
is "$D/db" 0x0 && pass "doorbell cleared" || fail "db after clear: $(cat "$D/db")"
step 2

# Windows: 0 (BAR2 after the LUT area) and 1 (BAR4) are direct; with
# use_lut_mws=1 window 2 is the first LUT entry a client may use.
wins="0 1"
[ "$L" = 1 ] && wins="0 1 2"
for w in $wins; do
	echo 65536 >"$D/peer0/mw_trans$w" || fail "inbound window $w"
done
step 3
for w in $wins; do
	echo "0:65536" >"$D/peer0/peer_mw_trans$w" || fail "outbound window $w"
	echo "from $P to $q w$w" >"$D/peer0/peer_mw$w"
done
step 4
for w in $wins; do
	got=$(head -c 14 "$D/peer0/mw$w")
	if [ "$got" = "from $q to $P w$w" ]; then
		pass "window $w from port $q: '$got'"
	else
		fail "window $w from port $q: '$got'"
	fi
done
step 5
# Linux 6.1's ntb_tool removes its debugfs tree before it frees its
# outbound windows, whose files it then removes again: rmmod with an
# outbound window set is a NULL dereference (seen here).  Free them first.
for w in $wins; do
	echo "0:0" >"$D/peer0/peer_mw_trans$w" || fail "freeing outbound window $w"
	echo 0 >"$D/peer0/mw_trans$w" || fail "freeing inbound window $w"
done
rmmod ntb_tool || fail "rmmod ntb_tool"

# --- ntb_pingpong ---------------------------------------------------------
count() { cat "/sys/kernel/debug/ntb_pingpong/$pci/count" 2>/dev/null || echo -1; }
above() { [ "$(count)" -gt "$1" ]; }
insmod /ntb_pingpong.ko delay_ms=100 || fail "insmod ntb_pingpong"
if waitfor 180 above 5; then
	pass "ntb_pingpong: count $(count)"
else
	fail "ntb_pingpong: count $(count)"
fi
sleep 5		# the partner gets its pongs too
rmmod ntb_pingpong || fail "rmmod ntb_pingpong"
sleep 5

# --- ntb_perf (swperf=N runs in a row, 0: none; swstarts=K starts, each
# followed by the N runs, default 1): port 0 measures; port 1 stays until
# port 0's ntb_perf leaves.  Started and stopped as switchtec-perf.sh
# says, which works around the drivers' race at start.
. /switchtec-perf.sh
PERF_ARGS=total_order=24
runs=$(karg swperf)
starts=$(karg swstarts)
F=/sys/kernel/debug/ntb_perf/$pci
s=1
while [ "${runs:-0}" -gt 0 ] && [ "${starts:-1}" -ge "$s" ]; do
	# Port 0's ntb_pingpong is gone (later starts: perf_gone's barrier).
	[ "$P" = 1 ] && [ "$s" = 1 ] && sleep 15
	t=$(date +%s)
	perf_reloads=0
	insmod /ntb_perf.ko $PERF_ARGS || fail "insmod ntb_perf"
	if [ "$P" = 0 ]; then
		if ! perf_setup; then
			fail "ntb_perf start $s: not set up: $(cat "$F/info")"
			finish		# its rmmod would wait forever
		fi
		echo "NTB-PERF start $s: set up after $(($(date +%s) - t)) s, $perf_reloads reloads here"
		ok=0 r=1
		while [ "$r" -le "$runs" ]; do
			# A run waits (interruptibly) until the exchange is done.
			if timeout 300 sh -c "echo 0 >'$F/run'" 2>/dev/null &&
			   res=$(grep -m1 MBytes/s "$F/run") &&
			   ! grep -q "error status" "$F/run"; then
				ok=$((ok + 1))
				echo "NTB-PERF port 0 to port 1 start $s run $r:$(echo "$res" | tr -s ' \t' ' ')"
			else
				echo "NTB-PERF start $s run $r failed: $(cat "$F/run" "$F/info")"
			fi
			r=$((r + 1))
		done
		if [ "$ok" = "$runs" ]; then
			pass "ntb_perf start $s: $runs runs in a row to port 1"
		else
			fail "ntb_perf start $s: $ok of $runs runs"
		fi
		sleep 3		# port 1 sees itself set up before the link falls
		rmmod ntb_perf || fail "rmmod ntb_perf"
	else
		if perf_stay; then
			pass "ntb_perf start $s: set up ($perf_reloads reloads here), port 0 measured and left"
		else
			fail "ntb_perf start $s: $(cat "$F/info")"
			finish
		fi
		rmmod ntb_perf || fail "rmmod ntb_perf"
	fi
	perf_gone $((0x5e70 + s)) || finish
	s=$((s + 1))
done
if [ "${runs:-0}" -gt 0 ]; then
	if perf_clean; then
		pass "ntb_perf: no invalid command received"
	else
		fail "ntb_perf: $(dmesg | grep -m3 'ntb_perf.*invalid command')"
	fi
fi

# --- smartio_ntb: discovery, a call, segments --------------------------------
# Node 100 + port.  Each creates an 8 KiB segment first in its empty heap:
# both land at the same offset, which each then maps in the peer's heap
# (a wrong guess reads the wrong bytes and fails).
S=/sys/kernel/debug/smartio_ntb/$pci
mynode=$((100 + P)) peernode=$((100 + q))
smartio_up() { grep -q "^up node=$peernode " "$S/peer" 2>/dev/null; }
insmod /smartio_ntb.ko node=$mynode || fail "insmod smartio_ntb"
if waitfor 180 smartio_up; then
	pass "smartio_ntb: peer node $peernode up ($(cat "$S/peer"))"
else
	fail "smartio_ntb: peer: $(cat "$S/peer")"
	finish
fi
if echo "hello from $P" >"$S/call" &&
   is "$S/call" "node $peernode got: hello from $P"; then
	pass "smartio_ntb: reply '$(cat "$S/call")'"
else
	fail "smartio_ntb: call: '$(cat "$S/call")'"
fi
echo 8192 >"$S/seg" || fail "smartio_ntb: segment create"
off=$(cut -d' ' -f1 "$S/seg")
printf 'segment of %s' "$P" >"$S/seg_data"
sleep 5		# the peer's segment is written too
echo "$off 8192" >"$S/peer_seg" || fail "smartio_ntb: map the peer's segment at $off"
if [ "$L" = 1 ]; then
	# With LUT windows smartio_ntb does not expose its whole heap through
	# window 1 (smartio.ko maps each segment through a LUT entry of its
	# own): the peer's heap reads all-ones here, nothing else.
	got=$(head -c 12 "$S/peer_seg_data" | od -An -tx1 | tr -d ' \n')
	if [ "$got" = ffffffffffffffffffffffff ]; then
		pass "smartio_ntb: the peer's heap is not exposed (reads all-ones)"
	else
		fail "smartio_ntb: the peer's heap reads $got"
	fi
	sleep 5
else
	got=$(head -c 12 "$S/peer_seg_data")
	if [ "$got" = "segment of $q" ]; then
		pass "smartio_ntb: the peer's segment (offset $off) reads '$got' here"
	else
		fail "smartio_ntb: the peer's segment reads '$got'"
	fi
	printf '%s was here' "$P" |
		dd of="$S/peer_seg_data" bs=1 seek=4096 conv=notrunc 2>/dev/null
	sleep 5
	got=$(dd if="$S/seg_data" bs=1 skip=4096 count=10 2>/dev/null)
	if [ "$got" = "$q was here" ]; then
		pass "smartio_ntb: own segment holds '$got' written by the peer"
	else
		fail "smartio_ntb: own segment holds '$got'"
	fi
	sleep 5		# the peer reads its segment before the link falls
fi
[ "$(karg swmsi)" = 1 ] || finish

# --- ntb_msi_test (swmsi=1): the NTB core's MSI part (drivers/ntb/msi.c)
# and its test client, built with CONFIG_NTB_MSI (tests/ntb/build.sh: a
# separate ntb.ko and ntb_hw_switchtec.ko, since the option changes
# struct ntb_dev).  Each side points its last inbound window at its own
# MSI address, hands the peer spare MSI-X vectors of the NT function
# through scratchpads, and the peer triggers one with a write through
# its outbound window: an interrupt crossing the NTB with no doorbell.
# With use_lut_mws=1 (swlut=1), where that window is a 64 KiB LUT entry:
# msi.c asks for the window's largest size at the MSI address aligned to
# the window's address alignment, which for a direct window is 4 KiB
# while ntb_hw_switchtec refuses a translation not aligned to its size
# (4 MiB here; 0xfee00000 is not).
rmmod smartio_ntb || fail "rmmod smartio_ntb"
rmmod ntb_hw_switchtec || fail "rmmod ntb_hw_switchtec"
rmmod ntb || fail "rmmod ntb"
sleep 10	# both sides are down before either comes back
insmod /msi/ntb.ko || fail "insmod ntb.ko (CONFIG_NTB_MSI)"
insmod /msi/ntb_hw_switchtec.ko use_lut_mws="$L" ||
	fail "insmod ntb_hw_switchtec.ko (CONFIG_NTB_MSI)"
waitfor 10 registered || fail "ntb_hw_switchtec (CONFIG_NTB_MSI) did not register"
insmod /msi/ntb_msi_test.ko || fail "insmod ntb_msi_test"
M=/sys/kernel/debug/ntb_msi_test/$pci
if waitfor 300 is "$M/peer0/ready" 1; then
	pass "ntb_msi_test: port $q's $(cat "$M/peer0/count") MSI descriptors received"
else
	fail "ntb_msi_test: port $q's descriptors: ready $(cat "$M/peer0/ready" 2>&1)"
	dmesg | tail -n 10
	finish
fi
sleep 10	# the peer has ours too
# Nothing but the peer's trigger raises our vector 0 (counted from 0 at
# load); the peer may trigger before we do.
occ() { cat "$M/irq0_occurrences" 2>/dev/null || echo -1; }
echo 0 >"$M/peer0/trigger" || fail "ntb_msi_test: trigger on port $q"
arrived() { [ "$(occ)" -ge 1 ]; }
if waitfor 60 arrived; then
	pass "ntb_msi_test: interrupt 0 from port $q arrived ($(occ) times)"
else
	fail "ntb_msi_test: interrupt 0 from port $q: $(occ) times"
	grep ntb_msi_test /proc/interrupts
fi
sleep 10	# the peer's interrupt arrives before the link falls
rmmod ntb_msi_test || fail "rmmod ntb_msi_test"
finish
