#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of a check-ntb smartio-nvmeq guest (tests/ntb/check_nvmeq.sh): port
# swport= of a 4-port smartio-ntb-switch is smartio node host<port> of four
# (smartio.ko fabric=ntb nodes=4).  host0 lends its NVMe in shared mode;
# host1 runs smartio-nvmeq's manager (the admin queue in a segment of
# host1, the manager holding the device as a borrower); clients on host1,
# host2 and host3 (two each, at once) write and verify ranges of their
# own, each with an I/O queue pair in a segment of its own node; host2
# reads back what host3 wrote; host3 powers off in the middle of a client's
# I/O and host2's clients go on; host1 powers off and host2's next client
# is told no manager serves the drive.  No nvme driver is loaded on the
# borrowers: the shadows stay unbound, for the userspace queues.
# The NBD mount, when the root has /bin/nbdkit: after host2's clients are
# done, host2 exports the drive with nbdkit-smartio-plugin (a client of
# the manager, its queue pair in a segment of host2) on 10.9.1.2; host1's
# kernel NBD client, set up by nbd-client, makes an ext2 filesystem on it,
# mounts it, writes files, unmounts, and reads them back after mounting
# it again over a new connection (a new queue pair, no page cache left).
# "PASS: ..." / "FAIL: ..."; "NTB-END" ends.
. /guest-common.sh
P=$(karg swport)
phase=$(karg swphase)
N=4
echo "NTB-START port=$P phase=$phase"
STEP_WAIT=300
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
# The NBD mount's link: host1 and host2, each with a virtio-net card.
nbd=
if [ -x /bin/nbdkit ] && { [ "$P" = 1 ] || [ "$P" = 2 ]; }; then
	nbd=1
	ip link set eth0 up && ip addr add "10.9.1.$P/24" dev eth0 ||
		fail "eth0 as 10.9.1.$P: $(ip link 2>&1 | tr '\n' ' ')"
fi
# A segment heap of 4 MiB: the manager's queues and each client's queue
# pair and buffers are segments of their node (the default 512 KiB holds
# the manager's and one client's).
sioswitch_up window_kb=4096
if [ "$P" = 0 ]; then
	smartio_up devices="$nvme_bdf"
else
	smartio_up
fi
smartiofs_up
others_up 600
step_debug() {
	ls /smartio/nodes/*/segments
	cat /sys/kernel/debug/smartio/state
	dmesg | tail -n 40
}
D=host0-nvme0
q() { smartio-nvmeq -d $D "$@"; }
host1_gone() { ! is /smartio/nodes/host1/state up; }

# nbd_serve (host2): nbdkit exports $D until host1 is done with the NBD
# mount; nbdkit writes its pid file once it listens.
nbd_serve() {
	rm -f /tmp/nbdkit.pid
	# Debian's nbdkit 1.32 has 192 MiB of zeroed static data (its ELF's
	# bss), never touched in full: the kernel's heuristic overcommit
	# refuses to exec it in a 128 MiB guest (__vm_enough_memory, and a
	# segfault), so this guest overcommits.
	echo 1 >/proc/sys/vm/overcommit_memory
	nbdkit -f -i 10.9.1.2 -p 10809 -P /tmp/nbdkit.pid \
		/lib/nbdkit-smartio-plugin.so dev=$D >/tmp/nbdkit.log 2>&1 &
	local kit=$!
	if waitfor 120 [ -s /tmp/nbdkit.pid ]; then
		mark nbdkit
		wait_for nbd 1
		if kill -0 "$kit" 2>/dev/null; then
			pass "nbdkit on 10.9.1.2:10809 served $D until host1's NBD mount was done"
		else
			fail "nbdkit stopped: $(cat /tmp/nbdkit.log)"
		fi
	else
		fail "nbdkit did not start: $(cat /tmp/nbdkit.log)"
		mark nbdkit
	fi
	kill "$kit" 2>/dev/null
	wait "$kit" 2>/dev/null
}
# nbd_attach: /dev/nbd0 is host2's export (nbd-client, as any Linux user
# would run it; nbd-client 3.24 speaks the newstyle protocol only with an
# export name, and the plugin serves any name).
nbd_attach() {
	nbd-client -N smartio 10.9.1.2 10809 /dev/nbd0 >/tmp/nbd-client.log 2>&1 &&
		waitfor 30 [ "$(cat /sys/block/nbd0/size 2>/dev/null)" -gt 0 ]
}
nbd_detach() {
	umount /mnt
	nbd-client -d /dev/nbd0 >>/tmp/nbd-client.log 2>&1
}
# nbd_mount (host1): an ext2 filesystem on the export, files written,
# unmounted, then mounted again over a new connection and read back.
nbd_mount() {
	wait_for nbdkit 2
	mkdir -p /mnt
	if nbd_attach; then
		pass "nbd-client: /dev/nbd0 of $(cat /sys/block/nbd0/size) sectors from nbdkit on host2"
	else
		fail "nbd-client 10.9.1.2: $(cat /tmp/nbd-client.log)"
		mark nbd
		return
	fi
	local i
	if mke2fs -q /dev/nbd0 >/tmp/mkfs.log 2>&1 && mount -t ext2 /dev/nbd0 /mnt; then
		for i in 1 2 3 4 5 6 7 8; do
			dd if=/dev/urandom of=/mnt/f$i bs=64k count=$i 2>/dev/null
		done
		(cd /mnt && md5sum f*) >/tmp/sums
		pass "mke2fs, mount, 8 files written: $(du -s /mnt | cut -f1) KiB"
		nbd_detach
	else
		fail "mke2fs or mount of /dev/nbd0: $(cat /tmp/mkfs.log)"
		mark nbd
		return
	fi
	if nbd_attach && mount -t ext2 /dev/nbd0 /mnt &&
		(cd /mnt && md5sum -c /tmp/sums) >/tmp/check 2>&1 &&
		[ "$(grep -c ': OK$' /tmp/check)" = 8 ]; then
		pass "remounted over a new connection: 8 files read back intact"
	else
		fail "remount and read back: $(cat /tmp/check /tmp/nbd-client.log 2>/dev/null | tr '\n' ' ')"
	fi
	nbd_detach
	mark nbd
}

if [ "$P" = 0 ]; then
	echo all >/smartio/dev/$D/lend || fail "lend all"
	echo shared >/smartio/dev/$D/mode || fail "mode shared"
	mark lent
	h2_gone() { ! is /smartio/nodes/host2/state up; }
	waitfor 900 host1_gone && waitfor 900 h2_gone || fail "host1 or host2 still up"
	pass "host1, host2 and host3 done with $D"
	finish
fi

wait_for lent 0
# host0's device table reaches this node on its own path, after host0
# came up again when its smartio.ko attached (a new generation): the
# step segment can come first.
seen() { [ -e "/smartio/dev/$D/node" ]; }
waitfor 60 seen || fail "$D not in /smartio/dev 60 s after host0 lent it: $(ls /smartio/dev | tr '\n' ' ')"
if [ "$P" = 1 ]; then
	q manage >/tmp/mgr.log 2>&1 &
	mgr=$!
	serving() { grep -q serving /tmp/mgr.log; }
	if waitfor 120 serving; then
		pass "manager: $(grep serving /tmp/mgr.log)"
	else
		fail "manager: $(cat /tmp/mgr.log)"
		step_debug
	fi
	mark mgr
else
	wait_for mgr 1
fi

# Two clients on each node at once, each on its own 1 MiB range.
range() { echo $((($1 * 2 + $2) * 2048)); }
for k in 0 1; do
	q check -l "$(range "$P" $k)" -n 2048 -s $((P * 2 + k + 1)) >/tmp/c$k 2>&1 &
	eval "c$k=\$!"
done
for k in 0 1; do
	eval "pid=\$c$k"
	if wait "$pid" && grep -q "wrote and read back 2048 blocks at $(range "$P" $k) through queue [0-9]* of $D from host$P: verified" /tmp/c$k; then
		pass "client $k of host$P: $(cat /tmp/c$k)"
	else
		fail "client $k of host$P: $(cat /tmp/c$k)"
	fi
done
mark wrote

# host2 reads what host3 wrote; host3 then powers off mid-I/O and host2's
# clients go on.
if [ "$P" = 3 ]; then
	wait_for read 2
	# A client writing and verifying over and over, until the power-off.
	(while q check -l 16384 -n 8192 -s 99 >/tmp/long 2>&1; do :; done) &
	long=$!
	sleep 3
	if kill -0 "$long" 2>/dev/null; then
		echo "host3 powers off with a client's I/O under way"
	else
		fail "host3's client stopped before the power-off: $(cat /tmp/long)"
	fi
	power_off "NTB-END port=$P phase=$phase fails=$fails"
fi
if [ "$P" = 2 ]; then
	wait_for wrote 3
	for k in 0 1; do
		if q check -k -l "$(range 3 $k)" -n 2048 -s $((3 * 2 + k + 1)) >/tmp/r$k 2>&1; then
			pass "host2 reads host3's range $k back: $(cat /tmp/r$k)"
		else
			fail "host2 reading host3's range $k: $(cat /tmp/r$k)"
		fi
	done
	mark read
	h3_gone() { ! is /smartio/nodes/host3/state up; }
	waitfor 300 h3_gone || fail "host3 still up"
	if q check -l "$(range 2 0)" -n 2048 -s 77 >/tmp/after 2>&1; then
		pass "after host3's loss: $(cat /tmp/after)"
	else
		fail "after host3's loss: $(cat /tmp/after)"
	fi
	[ -n "$nbd" ] && nbd_serve
	mark after
	# The manager's node lost: a client is told, as in the simulator.
	waitfor 900 host1_gone || fail "host1 still up"
	if timeout 120 smartio-nvmeq -d $D check -l "$(range 2 1)" -n 256 >/tmp/lost 2>&1; then
		fail "a client ran with no manager: $(cat /tmp/lost)"
	elif grep -q "no manager serves $D" /tmp/lost; then
		pass "with host1 (the manager) down: $(cat /tmp/lost)"
	else
		fail "with host1 (the manager) down: $(cat /tmp/lost)"
	fi
	finish
fi
# host1: the manager serves until host2 is done, then says what it saw.
[ -n "$nbd" ] && nbd_mount
wait_for after 2
pass "manager still serving: $(q status 2>&1 | tr '\n' ' ' | cut -c1-200)"
kill "$mgr" 2>/dev/null
finish
