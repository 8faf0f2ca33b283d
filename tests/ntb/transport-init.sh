#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of make check-ntb's transport part (tests/ntb/check_transport.sh):
# one port of a 2-port smartio-ntb-switch running the mainline NTB
# network stack, ntb_transport and ntb_netdev, as their users load them.
# Kernel command line: swport=0|1, swfault=1 (below), swhw=1 (the NTB is a Switchtec
# partition, switchtec-nt(7), driven by switchtec.ko and
# ntb_hw_switchtec.ko; not with swbench=1), swmib=MiB per transfer, swmw0= and
# swmw1=, the max_mw_size ntb_transport gets on port 0 and port 1 (0:
# none).  A port's max_mw_size sizes its peer's receive ring, so the
# check gives port 0 a small one: its sends then fill the peer's ring and
# ntb_netdev stops and wakes its queue as the peer's ring index, written
# back through the window, moves.
#  - the link and the carrier come up, ping answers;
#  - port 0 sends swmib MiB of random bytes to port 1 over TCP (busybox
#    nc), then port 1 sends as many to port 0; the sender prints the time
#    from its first byte to the receiver's "done", both print the MD5 of
#    what they sent and received ("NTB-SUM"), which the host compares;
#  - both print ntb_transport's queue statistics at the end.
# With swbench=1 (make bench), ntb_perf runs first on the same pair and
# port 0 sends the file over TCP on its own loopback last.
# Lines: "PASS: ...", "FAIL: ...", "NTB-SUM ...", "NTB-TCP ...",
# "NTB-PERF ..."; "NTB-END" ends the run.
. /guest-common.sh
P=$(karg swport)
MIB=$(karg swmib)
MW=$(karg "swmw$P")
echo "NTB-START port=$P"

fails=0
pass() { echo "PASS: port $P: $*"; }
fail() { echo "FAIL: port $P: $*"; fails=$((fails + 1)); }
# The statistics of every queue pair on both ends say where a transfer
# stopped (rx/tx index, ring-full and doorbell counts).
finish() {
	for f in /sys/kernel/debug/ntb_transport/*/qp*/stats; do
		[ -r "$f" ] || continue
		echo "--- port $P: $f"
		cat "$f"
	done
	power_off "NTB-END port=$P fails=$fails"
}

# watch: every 20 s in which ntb_netdev's receive and send byte counts did
# not move while a transfer runs (/tmp/busy), the queues' statistics,
# which say on which side and at which step a stalled transfer waits.
watch_stall() {
	local last= cur
	while sleep 20; do
		[ -e /tmp/busy ] || { last=; continue; }
		cur=$(cat /sys/class/net/*/statistics/[rt]x_bytes 2>/dev/null | tr '\n' ' ')
		if [ "$cur" = "$last" ]; then
			echo "NTB-STALL port $P: bytes $cur"
			cat /sys/kernel/debug/ntb_transport/*/qp*/stats
			netstat -tn
			ls -l /tmp
			ps
		fi
		last=$cur
	done
}
watch_stall &

insmod /ntb.ko || fail "insmod ntb.ko"
# swhw=1: a Switchtec partition (switchtec-nt) under the mainline drivers
# (not with swbench=1, whose ntb_perf handshake reads ntb_sioswitch's
# registers).
if [ "$(karg swhw)" = 1 ]; then
	insmod /switchtec.ko || fail "insmod switchtec.ko"
	insmod /ntb_hw_switchtec.ko || fail "insmod ntb_hw_switchtec.ko"
else
	insmod /ntb_sioswitch.ko || fail "insmod ntb_sioswitch.ko"
fi
dd if=/dev/urandom of=/tmp/tx bs=1M count="$MIB" 2>/dev/null

# --- make bench (tests/bench/ntb_transport.sh, swbench=1): ntb_perf -------
# On the same pair, before ntb_transport: port 0 runs ntb_perf twice, as
# it comes and again after reading the file eight times, which grows
# TCG's TLB (ntb_perf's source and window collide in a small one,
# kmod/ntb/README; either run may be the slow one).  ntb_perf must not
# see the link come up with a peer that runs something else, so the pair
# leaves it in order, as in tests/ntb/switch-init.sh: port 0 writes 0xa1
# into port 1's scratchpad 6, port 1 answers 0xb1 and unloads once port
# 0's leave takes the link.
if [ "$(karg swbench)" = 1 ]; then
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1234:0x5a10 ] &&
			pci=$(basename "$d")
	done
	R=$(sed -n 1p "/sys/bus/pci/devices/$pci/resource" | cut -d' ' -f1)
	spad6() { devmem $((R + 0x100 + 4 * 6)) 32; }
	got() { [ "$(spad6)" = "$(printf 0x%08X "$1")" ]; }
	link_down() { [ $(($(devmem $((R + 0x34)) 32) & (1 << (1 - P)))) = 0 ]; }
	insmod /ntb_perf.ko total_order=26 || fail "insmod ntb_perf"
	F=/sys/kernel/debug/ntb_perf/$pci
	# perf LABEL: one run (the first waits for the peer's ntb_perf).
	perf() {
		local i res ran=
		for i in $(seq 1 120); do
			echo 0 >"$F/run" 2>/dev/null && { ran=1; break; }
			sleep 1
		done
		waitfor 120 grep -q MBytes/s "$F/run"
		res=$(grep -m1 MBytes/s "$F/run" | tr -s ' \t' ' ')
		if [ -n "$ran" ] && [ -n "$res" ]; then
			echo "$1 port $P to port 1:$res"
		else
			fail "ntb_perf: $(cat "$F/run" "$F/info" 2>&1 | tr '\n' ' ')"
		fi
	}
	if [ "$P" = 0 ]; then
		perf NTB-PERF-COLD
		for i in 1 2 3 4 5 6 7 8; do cat /tmp/tx >/dev/null; done
		perf NTB-PERF
		devmem $((R + 0x200 + 0x80 + 4 * 6)) 32 0xa1
		waitfor 300 got 0xb1 || fail "port 1 did not answer after ntb_perf"
		rmmod ntb_perf || fail "rmmod ntb_perf"
		# Port 1 unloads once it sees the link fall: ntb_transport
		# enables it again no sooner than 10 s later (switch-init.sh
		# leaves ntb_tool the same time).
		sleep 10
	else
		waitfor 600 got 0xa1 || fail "port 0 never ended ntb_perf"
		devmem $((R + 0x200 + 4 * 6)) 32 0xb1
		waitfor 300 link_down || fail "port 0 kept the link"
		rmmod ntb_perf || fail "rmmod ntb_perf"
	fi
fi

if [ "${MW:-0}" -gt 0 ]; then
	insmod /ntb_transport.ko max_mw_size="$MW" || fail "insmod ntb_transport.ko"
else
	insmod /ntb_transport.ko || fail "insmod ntb_transport.ko"
fi
insmod /ntb_netdev.ko || fail "insmod ntb_netdev.ko"

# ntb_netdev's interface: the only one besides lo (the guests have no NIC).
ifc=
for d in /sys/class/net/*; do
	[ "$(basename "$d")" = lo ] || ifc=$(basename "$d")
done
[ -n "$ifc" ] || { fail "ntb_netdev made no interface"; finish; }
me=10.34.0.$((P + 1))
peer=10.34.0.$((2 - P))
ip link set lo up
ip addr add "$me/24" dev "$ifc"
ip link set "$ifc" up
carrier() { [ "$(cat "/sys/class/net/$ifc/carrier" 2>/dev/null)" = 1 ]; }
if waitfor 300 carrier; then
	pass "$ifc carrier up (ntb_transport link)"
else
	fail "$ifc: no carrier in 300 s"
	finish
fi
# The peer may bring its address up a little later: the first echoes may
# go unanswered, or fail at once while ARP finds no one (busybox ping
# then ends), so the first answer is waited for echo by echo.
touch /tmp/busy
pinged() { ping -c 1 -W 1 "$peer" >/dev/null 2>&1; }
n=0
until pinged || [ "$n" -ge 60 ]; do
	n=$((n + 1))
	sleep 1
done
if ping -c 5 "$peer" >/tmp/ping 2>&1; then
	pass "ping $peer: $(tail -n 1 /tmp/ping)"
else
	fail "ping $peer: $(tail -n 2 /tmp/ping | tr '\n' ' ') (after $n s)"
	finish
fi

echo "NTB-SUM port $P sent $(md5sum </tmp/tx | cut -d' ' -f1)"
now() { cut -d' ' -f1 /proc/uptime; }
# A listener whose standard input never ends (busybox nc ends a connection
# when either side reaches its end of file): a FIFO this shell holds open
# for reading and writing, so that nothing but the peer's close ends it.
mkfifo /tmp/quiet
exec 3<>/tmp/quiet
listen() { timeout 600 nc -l -p "$1" <&3; }
# connect PORT: connects to the peer, retrying while it does not listen.
connect() {
	local n=0
	until nc "$peer" "$1" 2>/dev/null; do
		n=$((n + 1))
		[ "$n" -lt 120 ] || return 1
		sleep 1
	done
}

listening() { netstat -ltn | grep -q ":$1 "; }
# tcp_time T0 T1 what: the line a timed transfer of the file prints.
tcp_time() {
	awk -v a="$1" -v b="$2" -v mib="$MIB" -v what="$3" -v p="$P" 'BEGIN {
		printf "NTB-TCP port %s %s %d MiB in %.2f s, %.2f MB/s\n",
			p, what, mib, b - a, mib * 1.048576 / (b - a) }'
}

# send: once the peer says it listens (port 5002), the file to its port
# 5000, timed until it says done on port 5001 (its nc ended: every byte
# arrived).
send() {
	local t0 t1
	listen 5001 >/tmp/ack &
	listen 5002 >/dev/null
	t0=$(now)
	nc "$peer" 5000 </tmp/tx || { fail "connect to $peer:5000"; return; }
	wait $!
	t1=$(now)
	if [ "$(cat /tmp/ack)" = done ]; then
		tcp_time "$t0" "$t1" sent
		pass "sent $MIB MiB to port $((1 - P))"
	else
		fail "no done from port $((1 - P)) (nc waited 600 s)"
	fi
}
receive() {
	listen 5000 >/tmp/rx &
	waitfor 10 listening 5000 || fail "nc does not listen on port 5000"
	echo ready | connect 5002 || fail "connect to $peer:5002"
	wait $!
	echo done | connect 5001 || fail "connect to $peer:5001"
	echo "NTB-SUM port $P received $(md5sum </tmp/rx | cut -d' ' -f1)" \
		"$(wc -c </tmp/rx) bytes"
	rm -f /tmp/rx
}
if [ "$P" = 0 ]; then
	send
	receive
else
	receive
	send
fi
rm -f /tmp/busy

# --- swfault=1: a write to an IOVA port 1's IOMMU never mapped ----------
# Both NTB functions are in translated IOMMU domains (check_transport.sh
# with NTB_IOMMU=1).  Port 1 points a LUT entry ntb_transport does not
# use (port 0's window 1, entry 7, one page) at IOVA 0x8000, which its
# IOMMU never maps (Linux hands out IOVAs from the top of the DMA mask)
# and which is, as a guest-physical address, the reserved low 64 KiB
# nothing writes after boot; port 0 writes a pattern there through its
# window.  Port 1's kernel must log the DMAR fault, the host then finds
# port 1's RAM at 0x8000 without the pattern (the canary), and both
# keep working (ping after it).
FAULT_IOVA=0x8000
FAULT_PATTERN=0x5a5a5a5a5a5a5a5a
# The NTB function's resource file, and the start of its BAR n.
ntb_bar_file() {
	local d
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1234:0x5a10 ] &&
			echo "$d/resource"
	done
}
ntb_bar() { sed -n "$(($1 + 1))p" "$(ntb_bar_file)" | cut -d' ' -f1; }
dmar_fault() { dmesg | grep -q "DMA Write.*fault addr $FAULT_IOVA"; }
# --- swdd=1 (measured by hand, no check): port 0's CPU stores and loads
# through its window into port 1's ntb_transport receive buffer (window
# 1, entry 0: 4 MiB mapped for port 1's function), with sw_bench on
# /dev/mem (tests/ntb/sw_bench.c): 32 MiB of memcpy, then 8-byte loads;
# port 1 waits until it is done.
if [ "$(karg swdd)" = 1 ]; then
	if [ "$P" = 0 ]; then
		R=$(ntb_bar 0)
		W=$(ntb_bar 4)
		mw1=$(devmem $((R + 0x88)) 32)
		echo "NTB-DD port 0 to port 1: $(sw_bench write $((W + mw1)) 4194304 33554432)," \
			"$(sw_bench read8 $((W + mw1)) 2000)"
		echo dd | connect 5006 || fail "connect to $peer:5006"
	else
		listen 5006 >/dev/null
	fi
fi
if [ "$(karg swfault)" = 1 ]; then
	R=$(ntb_bar 0)
	if [ "$P" = 1 ]; then
		# edu's DMA into this port's window 1 onto port 0 (BAR4's
		# start: port 0's slot, its ntb_transport receive buffer,
		# mapped in port 0's domain), read back by the CPU.
		insmod /sio_edu_msi.ko raises=0 p2p="$(basename "$(dirname "$(ntb_bar_file)")")" p2p_bar=4 ||
			fail "insmod sio_edu_msi.ko"
		if dmesg | grep -q "sio_edu_msi .*: p2p .* BAR4 .*: equal"; then
			pass "edu's DMA through both IOMMUs into port 0's RAM: $(dmesg | grep -m1 'p2p .* BAR4')"
		else
			fail "edu's DMA into port 0: $(dmesg | grep sio_edu_msi | tail -n 2)"
		fi
		# LUT entry ((src 0 * 2 + window 1) * 8 + 7): 16 bytes each.
		L=$((R + 0x1000 + 15 * 16))
		devmem $((L + 0x0)) 32 "$FAULT_IOVA"
		devmem $((L + 0x4)) 32 0
		devmem $((L + 0xc)) 32 1
		devmem $((L + 0x8)) 32 0x1001
		listen 5004 >/tmp/written &
		waitfor 10 listening 5004 || fail "nc does not listen on port 5004"
		echo armed | connect 5003 || fail "connect to $peer:5003"
		wait $!
		[ "$(cat /tmp/written)" = written ] || fail "port 0 did not write"
		if waitfor 30 dmar_fault; then
			pass "DMAR fault logged: $(dmesg | grep -m1 "fault addr $FAULT_IOVA")"
		else
			fail "no DMAR fault for IOVA $FAULT_IOVA: $(dmesg | grep DMAR | tail -n 3)"
		fi
		devmem $((L + 0x8)) 32 0
		if ping -c 3 "$peer" >/tmp/ping 2>&1; then
			pass "after the fault, ping $peer: $(tail -n 1 /tmp/ping)"
		else
			fail "after the fault, ping $peer: $(tail -n 2 /tmp/ping | tr '\n' ' ')"
		fi
		echo checked | connect 5005 || fail "connect to $peer:5005"
	else
		listen 5003 >/tmp/armed
		[ "$(cat /tmp/armed)" = armed ] || fail "port 1 did not arm"
		W=$(ntb_bar 4)
		# Port 1's slot of window 1, its entry 7.
		mw1=$(devmem $((R + 0x88)) 32)
		ent1=$(devmem $((R + 0x90)) 32)
		devmem $((W + mw1 + 7 * ent1)) 64 "$FAULT_PATTERN"
		echo "NTB-FAULT port 0 wrote $FAULT_PATTERN at port 1's IOVA $FAULT_IOVA"
		listen 5005 >/tmp/checked &
		echo written | connect 5004 || fail "connect to $peer:5004"
		# Port 1 pings us, then says it is done with us.
		wait $!
		[ "$(cat /tmp/checked)" = checked ] || fail "port 1 did not finish its check"
	fi
fi
# make bench: the same file over TCP on the loopback inside port 0.
if [ "$(karg swbench)" = 1 ] && [ "$P" = 0 ]; then
	listen 6000 >/tmp/rx &
	waitfor 10 listening 6000 || fail "nc does not listen on port 6000"
	t0=$(now)
	nc 127.0.0.1 6000 </tmp/tx || { fail "loopback: nc"; kill $!; }
	wait $!
	t1=$(now)
	[ "$(wc -c </tmp/rx)" = $((MIB << 20)) ] ||
		fail "loopback: $(wc -c </tmp/rx) bytes"
	tcp_time "$t0" "$t1" loopback
	rm -f /tmp/rx
fi
finish
