#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of a check-ntb switch guest (tests/ntb/check_switch.sh): one port
# of a 4-port smartio-ntb-switch.  Kernel command line: swport=0..3,
# swphase=1|2.  Every check prints "PASS: ..." or "FAIL: ...";
# "NTB-END" ends the run.
# Phase 1, every port:
#  - ntb_pingpong with every other port, in three rounds of pairs (the
#    driver's peers= mask gives each round its pair: pingpong rings one
#    peer only);
#  - ntb_perf with every other port, in three rounds of pairs too
#    (ntb_perf's window numbering is for two ports); the lower port of
#    each pair prints the throughput;
#  - ntb_tool with all three peers at once: link, scratchpads, doorbells,
#    both inbound windows from every peer and both outbound windows to
#    every peer, data checked at the receiver;
#  - blocked accesses: outside every enabled entry, and from a requester
#    the entry does not allow (counted by the receiver);
#  - port 0's CPU reads and writes the edu device of port 1 through a
#    window; port 0's edu DMA reads from and writes into port 1's RAM,
#    and its MSI messages, aimed into the window, interrupt port 1's CPU;
#  - port 3 powers off while port 2 writes to it: the others see the link
#    down within 3 s and all-ones from its window.
# Phase 2 (port 3 booted again): every port sees the link to 3 back and
# exchanges scratchpads with it.
. /guest-common.sh
P=$(karg swport)
phase=$(karg swphase)
N=4
echo "NTB-START port=$P phase=$phase"

fails=0
pass() { echo "PASS: port $P: $*"; }
fail() { echo "FAIL: port $P: $*"; fails=$((fails + 1)); }
finish() { power_off "NTB-END port=$P phase=$phase fails=$fails"; }
is() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

dev_of() {
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor"):$(cat "$d/device")" = "$1" ] &&
			{ basename "$d"; return; }
	done
}
pci=$(dev_of 0x1234:0x5a10)
edu=$(dev_of 0x1234:0x11e8)
[ -n "$pci" ] || { fail "no smartio-ntb-port function"; finish; }
bar() { sed -n "$(($2 + 1))p" "/sys/bus/pci/devices/$1/resource" | cut -d' ' -f1; }
R=$(bar "$pci" 0)
B2=$(bar "$pci" 2)
B4=$(bar "$pci" 4)
reg() { devmem $((R + $1)) "${2:-32}"; }
# cfg_u8 BDF OFF: a byte of a function's configuration space;
# cfg_w BDF OFF LEN VALUE: writes LEN (2 or 4) bytes, little endian.
cfg_u8() {
	dd if="/sys/bus/pci/devices/$1/config" bs=1 skip=$(($2)) count=1 \
		2>/dev/null | od -An -tu1 | tr -d ' '
}
cfg_w() {
	local i=0 b=""
	while [ "$i" -lt "$3" ]; do
		b="$b\\$(printf %03o $((($4 >> (8 * i)) & 255)))"
		i=$((i + 1))
	done
	printf "$b" | dd of="/sys/bus/pci/devices/$1/config" bs="$3" \
		seek=$(($2 / $3)) conv=notrunc 2>/dev/null
}
# Interrupts this port's NTB driver took (its three MSI-X vectors).
ntb_irqs() { awk '/ntb_sioswitch/ { n += $2 } END { print n + 0 }' /proc/interrupts; }
setreg() { devmem $((R + $1)) 32 "$2"; }
MW=$(reg 0x20 64)
ENT=$(reg 0x28 64)
pass "port $(reg 0x8) of $(reg 0xc), windows $((MW)) bytes, entries $((ENT))"

insmod /ntb.ko || fail "insmod ntb.ko"
load_driver() {
	insmod /ntb_sioswitch.ko "$@" || fail "insmod ntb_sioswitch $*"
}
unload() {
	for m in "$@"; do
		rmmod "$m" || fail "rmmod $m"
	done
}

if [ "$phase" = 1 ]; then
	# --- ntb_pingpong, three rounds of pairs ----------------------------
	count() {
		cat /sys/kernel/debug/ntb_pingpong/"$pci"/count 2>/dev/null ||
			echo -1
	}
	above() { [ "$(count)" -gt "$1" ]; }
	for x in 1 2 3; do
		q=$((P ^ x))
		load_driver peers=$((1 << q))
		insmod /ntb_pingpong.ko delay_ms=100 || fail "insmod ntb_pingpong"
		if waitfor 180 above 5; then
			pass "ntb_pingpong with port $q: count $(count)"
		else
			fail "ntb_pingpong with port $q: count $(count)"
		fi
		sleep 3		# the partner gets its pongs too
		unload ntb_pingpong ntb_sioswitch
	done

	# --- ntb_perf, three rounds of pairs; the lower port measures -----
	# ntb_perf must never see the link come up with a peer that does not
	# run it (its remove then waits forever), so a pair leaves in order:
	# the lower port writes 0xa<round> into the higher one's spad 6 when
	# done; the higher answers 0xb<round> into the lower's and waits for
	# the link to fall, which the lower's ntb_perf does on its way out;
	# only then it unloads.  ntb_tool enables links again 10 s after the
	# last round, when every ntb_perf is long gone.
	F=/sys/kernel/debug/ntb_perf/$pci
	perf_spad() { reg $((0x100 + 4 * 6)); }
	peer_perf_spad() { devmem $((R + 0x200 + q * 0x80 + 4 * 6)) 32 "$1"; }
	got() { [ "$(perf_spad)" = "$(printf 0x%08X "$1")" ]; }
	link_down() { [ $(($(reg 0x34) & (1 << q))) = 0 ]; }
	for x in 1 2 3; do
		q=$((P ^ x))
		load_driver peers=$((1 << q))
		insmod /ntb_perf.ko total_order=26 || fail "insmod ntb_perf"
		if [ "$P" -lt "$q" ]; then
			ran=
			for i in $(seq 1 120); do
				if echo 0 >"$F/run" 2>/dev/null; then
					ran=1
					break
				fi
				sleep 1
			done
			waitfor 120 grep -q MBytes/s "$F/run"
			res=$(grep -m1 MBytes/s "$F/run" | tr -s ' \t' ' ')
			if [ -n "$ran" ] && [ -n "$res" ]; then
				pass "ntb_perf to port $q:$res"
				echo "NTB-PERF port $P to port $q:$res"
			else
				fail "ntb_perf to port $q: $(cat "$F/run" "$F/info")"
			fi
			peer_perf_spad $((0xa0 + x))
			waitfor 300 got $((0xb0 + x)) ||
				fail "port $q did not answer after ntb_perf"
		else
			waitfor 300 got $((0xa0 + x)) ||
				fail "port $q never ended ntb_perf"
			peer_perf_spad $((0xb0 + x))
			waitfor 300 link_down || fail "port $q kept the link"
		fi
		unload ntb_perf ntb_sioswitch
	done
	perf_left=1
fi

# --- ntb_tool with every peer ----------------------------------------------
load_driver
insmod /ntb_tool.ko || fail "insmod ntb_tool"
D=/sys/kernel/debug/ntb_tool/$pci
[ -n "${perf_left:-}" ] && sleep 10
echo Y >"$D/link"
pidxs="0 1 2"
port_of() { cat "$D/peer$1/port"; }
for i in $pidxs; do
	q=$(port_of "$i")
	if waitfor 300 is "$D/peer$i/link" Y; then
		pass "ntb_tool: link up with port $q"
	else
		fail "ntb_tool: no link with port $q"
	fi
done
is "$D/port" "$P" || fail "ntb_tool port $(cat "$D/port")"

# Scratchpads: 0-5 are ntb_perf's and ntb_pingpong's (a peer may write
# them while they still run here), 6 the ntb_perf marker, 7 port 3's
# done marker, 8-27 the handshakes, 28 + sender the scratchpad test.
# handshake K: every peer reached step K (spad 8 + 4 (K mod 5) + sender).
handshake() {
	for i in $pidxs; do
		echo "$1" >"$D/peer$i/spad$((8 + 4 * ($1 % 5) + P))"
	done
	for i in $pidxs; do
		q=$(port_of "$i")
		waitfor 120 is "$D/spad$((8 + 4 * ($1 % 5) + q))" "0x$1" ||
			fail "port $q did not reach step $1"
	done
}
pidx_of() { [ "$1" -lt "$P" ] && echo "$1" || echo $(($1 - 1)); }

# Scratchpads: P writes 0x<v><P><q> into peer q's spad 28 + P, v = 5 in
# phase 1 and 6 in phase 2 (a value left from phase 1 does not pass).
v=$((4 + phase))
for i in $pidxs; do
	q=$(port_of "$i")
	echo "0x$v$P$q" >"$D/peer$i/spad$((28 + P))"
done
for i in $pidxs; do
	q=$(port_of "$i")
	if waitfor 60 is "$D/spad$((28 + q))" "0x$v$q$P"; then
		pass "scratchpad from port $q: 0x$v$q$P"
	else
		fail "scratchpad from port $q: $(cat "$D/spad$((28 + q))")"
	fi
done

if [ "$phase" = 2 ]; then
	# Done: the others may power off now (spad 7 of each).
	for i in $pidxs; do
		echo 0xd0e >"$D/peer$i/spad7"
	done
	finish
fi

# Doorbells: bit q rings port q; every port rings every other.
handshake 0
for i in $pidxs; do
	echo "s $((1 << $(port_of "$i")))" >"$D/peer_db"
done
# Every port rang every other before any clears its bit: a ring that
# came after the clear set it again (seen under load).  A port's ring
# is in the peer's doorbell status before its handshake scratchpad write
# is in the peer's scratchpads (both atomic stores to the switch's shared
# state, in program order: contrib/qemu/smartio-ntb-port.c).  Handshake 9's scratchpad is
# handshake 4's, written again only after everyone passed 9.
handshake 9
if waitfor 30 is "$D/db" "$(printf 0x%x $((1 << P)))"; then
	pass "doorbell: db = $(cat "$D/db")"
else
	fail "doorbell: db = $(cat "$D/db")"
fi
echo "c $((1 << P))" >"$D/db"
is "$D/db" 0x0 && pass "doorbell cleared" || fail "db after clear: $(cat "$D/db")"

# Memory windows: both inbound windows for every peer, then writes through
# both outbound windows to every peer, read back at the receiver.
for i in $pidxs; do
	for w in 1 0; do
		echo "$((ENT))" >"$D/peer$i/mw_trans$w" ||
			fail "inbound window $w for pidx $i"
	done
done
handshake 1
for i in $pidxs; do
	q=$(port_of "$i")
	for w in 0 1; do
		widx=$((2 * i + w))
		echo "0:$((ENT))" >"$D/peer$i/peer_mw_trans$widx" ||
			fail "outbound window $widx"
		echo "from $P to $q w$w" >"$D/peer$i/peer_mw$widx"
	done
done
handshake 2
for i in $pidxs; do
	q=$(port_of "$i")
	for w in 0 1; do
		got=$(head -c 14 "$D/peer$i/mw$w")
		if [ "$got" = "from $q to $P w$w" ]; then
			pass "window $w from port $q: '$got'"
		else
			fail "window $w from port $q: '$got'"
		fi
	done
done
handshake 3

# --- blocked: outside every enabled entry (each writes to the next port
# past its entry 0), and a requester the entry does not allow.
q=$(((P + 1) % N))
devmem $((B2 + q * MW + ENT)) 32 0xdeadbeef
if [ "$P" = 1 ]; then
	# Entry (source 0, window 1, entry 0) now allows port 2 only.
	e=$((0x1000 + ((0 * 2 + 1) * 8 + 0) * 16))
	setreg $((e + 12)) 4
fi
handshake 4
if [ "$P" = 0 ]; then
	v=$(devmem $((B4 + 1 * MW)) 32)
	[ "$v" = 0xFFFFFFFF ] && pass "read from a requester not allowed: $v" ||
		fail "read from a requester not allowed: $v"
fi
handshake 5
counted() { [ $(($(reg 0x60 64))) -ge 1 ]; }
if waitfor 10 counted; then
	pass "blocked outside every entry: counted $(($(reg 0x60 64)))"
else
	fail "blocked outside every entry: count $(reg 0x60 64)"
fi
if [ "$P" = 1 ]; then
	r=$(reg 0x68 64)
	[ $((r)) -ge 1 ] && pass "blocked requester not allowed: counted $((r)), last $(reg 0x78 64)" ||
		fail "blocked requester: count $r"
	setreg $((e + 12)) 1
	dmesg | grep -q "blocked inbound access" &&
		pass "blocked accesses reported by interrupt" ||
		fail "no blocked-access interrupt"
fi

# --- a peer's device: port 0's CPU and edu reach port 1 ---------------------
if [ "$P" = 1 ]; then
	ebar=$(bar "$edu" 0)
	e=$((0x1000 + ((0 * 2 + 1) * 8 + 1) * 16))	# src 0, window 1, entry 1
	setreg $((e + 0)) $((ebar & 0xffffffff))
	setreg $((e + 4)) $((ebar >> 32))
	setreg $((e + 12)) 1
	setreg $((e + 8)) 1
	# Entry 2 of the same window leads to the MSI range, at the page of
	# this port's doorbell vector (MSI-X entry 0, in BAR 1): port 0 aims
	# its edu's MSI there.  Offset and data go to port 0's spads 4 and 5
	# (ntb_pingpong's and ntb_perf's, long unloaded).
	mt=$(bar "$pci" 1)
	malo=$(devmem "$mt" 32)
	e=$((0x1000 + ((0 * 2 + 1) * 8 + 2) * 16))
	setreg $((e + 0)) $((malo & ~(ENT - 1) & 0xffffffff))
	setreg $((e + 4)) "$(devmem $((mt + 4)) 32)"
	setreg $((e + 12)) 1
	setreg $((e + 8)) 1
	echo $((malo & (ENT - 1))) >"$D/peer0/spad4"
	echo "$(devmem $((mt + 8)) 32)" >"$D/peer0/spad5"
	irqs0=$(ntb_irqs)
fi
handshake 6
if [ "$P" = 0 ]; then
	a=$((B4 + 1 * MW + ENT))
	id=$(devmem "$a" 32)
	[ "$id" = 0x010000ED ] && pass "port 1's edu id through a window: $id" ||
		fail "port 1's edu id through a window: $id"
	devmem $((a + 4)) 32 0x12345678
	inv=$(devmem $((a + 4)) 32)
	[ "$inv" = 0xEDCBA987 ] && pass "port 1's edu written and read back: $inv" ||
		fail "port 1's edu liveness register: $inv"
	# edu DMA: from port 1's inbound buffer (window 0, entry 0) into
	# edu, then back out 4 KiB further into port 1's RAM.
	ea=$(bar "$edu" 0)
	printf '\006' | dd of="/sys/bus/pci/devices/$edu/config" bs=1 seek=4 \
		conv=notrunc 2>/dev/null
	w0=$((B2 + 1 * MW))
	devmem $((ea + 0x80)) 64 "$w0"
	devmem $((ea + 0x88)) 64 0x40000
	devmem $((ea + 0x90)) 64 14
	devmem $((ea + 0x98)) 64 1
	edu_idle() { [ $(($(devmem $((ea + 0x98)) 64) & 1)) = 0 ]; }
	waitfor 5 edu_idle
	devmem $((ea + 0x80)) 64 0x40000
	devmem $((ea + 0x88)) 64 $((w0 + 4096))
	devmem $((ea + 0x90)) 64 14
	devmem $((ea + 0x98)) 64 3
	waitfor 5 edu_idle
	# edu's MSI through the window: written by the device, not the CPU,
	# carried to port 1 and performed there into its MSI range.
	cap=$(cfg_u8 "$edu" 0x34)
	while [ "$cap" -ne 0 ] && [ "$(cfg_u8 "$edu" "$cap")" -ne 5 ]; do
		cap=$(cfg_u8 "$edu" $((cap + 1)))
	done
	if [ "$cap" -eq 0 ]; then
		fail "edu has no MSI capability"
	else
		ma=$((B4 + 1 * MW + 2 * ENT + $(cat "$D/spad4")))
		cfg_w "$edu" $((cap + 4)) 4 $((ma & 0xffffffff))
		cfg_w "$edu" $((cap + 8)) 4 $((ma >> 32))
		cfg_w "$edu" $((cap + 12)) 2 $(($(cat "$D/spad5") & 0xffff))
		cfg_w "$edu" $((cap + 2)) 2 $(($(cfg_u8 "$edu" $((cap + 2))) | 1))
		# A second apart: port 1's APIC takes two MSIs of one vector
		# as one while the first is still pending, as hardware does,
		# and port 1 raises each as soon as it arrives.
		for k in 1 2 3; do
			devmem $((ea + 0x60)) 32 1	# raise
			devmem $((ea + 0x64)) 32 1	# acknowledge
			sleep 1
		done
	fi
fi
handshake 7
if [ "$P" = 1 ]; then
	got_msi() { [ "$(ntb_irqs)" -ge $((irqs0 + 3)) ]; }
	if waitfor 10 got_msi; then
		pass "port 0's edu MSI reached this CPU through the window: $(($(ntb_irqs) - irqs0)) interrupts"
	else
		fail "port 0's edu MSI: $(($(ntb_irqs) - irqs0)) interrupts"
	fi
fi
if [ "$P" = 1 ]; then
	got=$(dd if="$D/peer0/mw0" bs=4096 skip=1 count=1 2>/dev/null | head -c 14)
	[ "$got" = "from 0 to 1 w0" ] &&
		pass "port 0's edu DMA read my RAM and wrote it back: '$got'" ||
		fail "port 0's edu DMA: '$got'"
fi
handshake 8

# --- port 3 powers off while port 2 writes to it ----------------------------
if [ "$P" = 3 ]; then
	sleep 1
	finish
fi
i3=$(pidx_of 3)
t0=$(date +%s)
if [ "$P" = 2 ]; then
	k=0
	while is "$D/peer$i3/link" Y && [ $k -lt 100000 ]; do
		echo "write $k" >"$D/peer$i3/peer_mw$((2 * i3))"
		k=$((k + 1))
	done
fi
if waitfor 60 is "$D/peer$i3/link" N; then
	pass "link to port 3 down ($(($(date +%s) - t0)) s after its last step)"
else
	fail "link to port 3 still up"
fi
v=$(devmem $((B2 + 3 * MW)) 32)
[ "$v" = 0xFFFFFFFF ] && pass "port 3's window reads all-ones: $v" ||
	fail "port 3's window reads $v"
if waitfor 300 is "$D/peer$i3/link" Y; then
	pass "link to port 3 up again"
else
	fail "link to port 3 not back"
fi
i=$i3
echo "0x6${P}3" >"$D/peer$i/spad$((28 + P))"
if waitfor 120 is "$D/spad31" "0x63$P"; then
	pass "scratchpad from port 3 after its reboot: 0x63$P"
else
	# Seen once under load average 12-15 as 0xffffffff: say what else
	# the port saw, so that a next time explains it.
	fail "scratchpad from port 3 after its reboot: $(cat "$D/spad31")," \
		"again 1 s later $(sleep 1; cat "$D/spad31"), spads 28-30" \
		"$(cat "$D/spad28" "$D/spad29" "$D/spad30" | tr '\n' ' ')," \
		"link $(cat "$D/peer$i/link"), present $(reg 0x3c)"
	dmesg | tail -n 5
fi
# Stay up until port 3 has seen every link and scratchpad again.
waitfor 300 is "$D/spad7" 0xd0e || fail "port 3 did not finish its second boot"
finish
