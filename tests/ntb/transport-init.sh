#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of make check-ntb's transport part (tests/ntb/check_transport.sh):
# one port of a 2-port smartio-ntb-switch running the mainline NTB
# network stack, ntb_transport and ntb_netdev, as their users load them.
# Kernel command line: swport=0|1, swmib=MiB per transfer, swmw0= and
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
# Lines: "PASS: ...", "FAIL: ...", "NTB-SUM ...", "NTB-TCP ..."; "NTB-END"
# ends the run.
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
arg() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" /proc/cmdline; }
P=$(arg swport)
MIB=$(arg swmib)
MW=$(arg "swmw$P")
echo "NTB-START port=$P"
. /guest-common.sh

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
insmod /ntb_sioswitch.ko || fail "insmod ntb_sioswitch.ko"
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
# go unanswered (ping -w: until one answers, for at most 120 s).
touch /tmp/busy
if ping -c 1 -w 120 "$peer" >/dev/null 2>&1 &&
   ping -c 5 "$peer" >/tmp/ping 2>&1; then
	pass "ping $peer: $(tail -n 1 /tmp/ping)"
else
	fail "ping $peer: $(tail -n 2 /tmp/ping | tr '\n' ' ')"
	finish
fi

dd if=/dev/urandom of=/tmp/tx bs=1M count="$MIB" 2>/dev/null
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
	until nc "$peer" "$1"; do
		n=$((n + 1))
		[ "$n" -lt 120 ] || return 1
		sleep 1
	done
}

# send: the file to the peer's port 5000, timed until the peer says done
# on port 5001 (its nc ended, so every byte arrived).
send() {
	local t0 t1
	listen 5001 >/tmp/ack &
	t0=$(now)
	connect 5000 </tmp/tx || { fail "connect to $peer:5000"; return; }
	wait $!
	t1=$(now)
	if [ "$(cat /tmp/ack)" = done ]; then
		echo "NTB-TCP port $P sent $MIB MiB in $(awk -v a="$t0" -v b="$t1" \
			'BEGIN { printf "%.2f s, %.2f MB/s", b - a, '"$MIB"' * 1.048576 / (b - a) }')"
		pass "sent $MIB MiB to port $((1 - P))"
	else
		fail "no done from port $((1 - P)) (nc waited 600 s)"
	fi
}
receive() {
	listen 5000 >/tmp/rx
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
finish
