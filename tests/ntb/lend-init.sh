#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of a check-ntb lending guest (tests/ntb/check_lend.sh): port
# swport= of a 4-port smartio-ntb-switch is smartio node host<port> of four
# (smartio.ko fabric=ntb nodes=4 over smartio_ntb and ntb_sioswitch with
# single look-up-table entries), with a QEMU NVMe of its own and smartiofs
# on /smartio.  Even nodes lend their NVMe, odd nodes borrow the NVMe of
# the node before them (host1 host0's, host3 host2's, at the same time):
#  - every node lists the four NVMe drives (one registry across kernels),
#    with their lender, bdf and ids;
#  - a borrow refused by the lend policy (none) leaves the lender's drive
#    with its driver, readable; while host1 has host0's NVMe, host3 is
#    refused it when exclusive (EBUSY), then when shared for lack of room
#    in host0's look-up table (ENOSPC: host0 uses 5 entries, luts=5), and
#    host1's I/O goes on;
#  - the borrower's unmodified nvme driver binds to the shadow, and udev
#    (systemd-udevd with udev/*.rules) names its disk /dev/smartio/<node>/
#    <device>/<disk>, tags it with the lender and runs the example rule;
#    64 MiB
#    written through it with O_DIRECT (a distinct 1 MiB block each MiB) and
#    read back equal; its MSI-X interrupts counted on the borrower; the
#    shadow's DMA mappings made by address arithmetic (no bounce);
#  - after the return the lender's own driver has the drive back and reads
#    the same 64 MiB (the borrower's md5, passed in a segment, which the
#    borrower translated for the lender alone: its heap window reads
#    all-ones);
#  - three address domains (SmartIO 4.4): host1 borrows host0's NVMe again
#    for contrib/nvme's userspace driver, whose queues are in a segment of
#    host1 mapped for the device; host3 maps a segment of its own for the
#    device, and the NVMe reads blocks straight into it (host0's window,
#    host3's inbound entry); host3 finds the bytes in its memory; then
#    host1 borrows host2's NVMe too and maps its BARs for host0's
#    (peer-to-peer, two lenders), and host0's NVMe reads blocks straight
#    into host2's controller memory buffer, where host2 finds them; then
#    into host1's own NVMe's (the target local to the borrower);
#  - failures, each pair borrowing again: host0 (a lender) powers off while
#    host1 reads through the shadow: the reads fail, nothing hangs, the
#    shadow is removed; host3 (a borrower) powers off holding host2's
#    drive: host2's nvme driver has it back within 3 s.
# The nodes wait for each other through /smartio: a step is a segment
# <step><P> each node makes (a node may own 8 segment records of the 32
# with four nodes).  "PASS: ..." / "FAIL: ..."; "NTB-END" ends.
#
# With swhw=switchtec (check_lend.sh NTB_HW=switchtec) there are two nodes,
# partitions of the Switchtec model under switchtec.ko and
# ntb_hw_switchtec.ko (use_lut_mws=1): host1 borrows host0's NVMe through
# 64 KiB LUT entries with the DMA window on the direct window; host0
# finds the NVMe's requester id in its partition's requester-id table
# while it is lent (and host1 in host0's, through its own NT function),
# gone after the return; the MSI-X table, which a 64 KiB entry exposes
# with the NVMe's doorbells, is logged as exposed instead of checked.
# Left out there: what needs four nodes (third-party requests, exclusive
# and no-room refusals, the three address domains, the failures) and
# smartio-ntb-port's counter of accesses by callback.
. /guest-common.sh
P=$(karg swport)
phase=$(karg swphase)
ntbhw=$(karg swhw)
N=4
[ "$ntbhw" = switchtec ] && N=2
MIB=64
echo "NTB-START port=$P phase=$phase"

STEP_WAIT=300
. /cluster-steps.sh

if [ $((P % 2)) = 0 ]; then
	lender=$P
	pair=$((P + 1))
else
	lender=$((P - 1))
	pair=$lender
fi
dev=/smartio/dev/host$lender-nvme0

# --- udev on the borrowers ----------------------------------------------------
if [ $((P % 2)) = 1 ]; then
	mkdir -p /run/udev /etc/udev/rules.d
	cp /udev/*.rules /etc/udev/rules.d/
	/lib/systemd/systemd-udevd --daemon --resolve-names=never ||
		fail "systemd-udevd does not start"
	waitfor 10 test -S /run/udev/control || fail "no udevd control socket"
fi

# --- the modules ---------------------------------------------------------------
# host1's and host2's NVMe have a controller memory buffer, written
# peer-to-peer in the test: no driver keeps its submission queues there.
for m in $(cat /modules/order); do
	case $m in
	*/nvme.ko) insmod "$m" use_cmb_sqes=0 2>/dev/null ;;
	*) insmod "$m" 2>/dev/null ;;
	esac
done
waitfor 60 test -b /dev/nvme0n1 || fail "no /dev/nvme0n1 of this node's NVMe"
# The NVMe of serial $1: its bdf (host3 has two, probed in either order).
bdf_of_serial() {
	local c
	for c in /sys/class/nvme/nvme*; do
		# (the serial is padded with spaces to 20 bytes)
		[ "$(tr -d ' ' <"$c/serial")" = "$1" ] &&
			basename "$(readlink "$c/device")"
	done
}
own_bdf=$(bdf_of_serial "sio$P")
second_bdf=
if [ "$P" = 3 ]; then
	waitfor 60 test -b /dev/nvme1n1 || fail "no second NVMe on host3"
	second_bdf=$(bdf_of_serial sio3b)
fi
# Over Switchtec host0's second NVMe has its MSI-X table in BAR 0's
# 64 KiB entry: lent, but no borrow of it may expose the table; and
# while host1 borrows the first, host1's borrow of it is refused for the
# direct window (one per pair of machines).
if [ "$ntbhw" = switchtec ] && [ "$P" = 0 ]; then
	waitfor 60 test -b /dev/nvme1n1 || fail "no second NVMe on host0"
	second_bdf=$(bdf_of_serial sio0t)
fi
# The disk of the NVMe at bdf $1: with two, probed in either order, and
# renumbered when one is rebound (the kernel gives the lowest free name).
disk_of() {
	local b
	for b in /sys/bus/pci/devices/"$1"/nvme/nvme*/nvme*n1; do
		[ -e "$b" ] && basename "$b"
	done
}
# The disk of this node's NVMe (sio$P).
own_disk() {
	disk_of "$own_bdf"
}
insmod /ntb.ko || fail "insmod ntb.ko"
if [ "$ntbhw" = switchtec ]; then
	# LUT windows (64 KiB each), and the direct windows as large as the
	# BARs (256 MiB of BAR 4: a DMA window over this machine's RAM).
	insmod /switchtec.ko || fail "insmod switchtec.ko"
	insmod /ntb_hw_switchtec.ko use_lut_mws=1 max_mw_size=0x10000000 ||
		fail "insmod ntb_hw_switchtec.ko use_lut_mws=1"
	registered() { dmesg | grep -q "NTB device registered"; }
	waitfor 30 registered || fail "ntb_hw_switchtec did not register"
else
	insmod /ntb_sioswitch.ko lut_mws=1 || fail "insmod ntb_sioswitch.ko lut_mws=1"
fi
# A segment heap of 4 MiB: contrib/nvme's driver keeps 1 MiB of queues
# and buffers in a segment.
insmod /smartio_ntb.ko node="$P" window_kb=4096 || fail "insmod smartio_ntb.ko"
# host0 lends with 5 of its 7 entries: a borrow takes 3 (the DMA window's
# two and the MSI window's), so a second borrower finds no room.
# host2 gives any one other node at most 3 entries (luts_per_node=3):
# a borrow takes them all, so the borrower's peer mapping for host2's
# NVMe is refused.
luts=
[ "$P" = 0 ] && [ $N = 4 ] && luts=luts=5
[ "$P" = 2 ] && luts=luts_per_node=3
# shellcheck disable=SC2086 # no luts= but on host0 and host2
smartio_up devices="$own_bdf${second_bdf:+,$second_bdf}" $luts
smartiofs_up
others_up 600
pass "/smartio: the three other nodes up"

# What this node's kernel and tree say when a step's wait runs out.
step_debug() {
	ls /smartio/nodes/*/segments
	cat /sys/kernel/debug/smartio/state
	echo w >/proc/sysrq-trigger
	dmesg | tail -n 40
}

# The switch port's count of outbound accesses not made by RAM alias
# (man/smartio-ntb-port.7, SLOW_ACCESSES at BAR0 + 0x80).
ntb_bdf=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1234:0x5a10 ] && ntb_bdf=$(basename "$d")
done
slow_accesses() {
	printf '%d' "$(devmem $(($(head -n 1 "/sys/bus/pci/devices/$ntb_bdf/resource" |
		cut -d' ' -f1) + 0x80)) 64)"
}

# --- one registry across the kernels ----------------------------------------
want="host0-nvme0 host1-nvme0 host2-nvme0 host3-nvme0 host3-nvme1 "
[ $N = 2 ] && want="host0-nvme0 host0-nvme1 host1-nvme0 "
listed() { [ "$(ls /smartio/dev | tr '\n' ' ')" = "$want" ]; }
if waitfor 120 listed; then
	pass "/smartio/dev lists every node's NVMe: $want"
else
	fail "/smartio/dev lists '$(ls /smartio/dev | tr '\n' ' ')'"
fi
for q in $others; do
	d=/smartio/dev/host$q-nvme0
	if is "$d/node" "host$q" && [ "$(cat "$d/vendor")" = 0x1b36 ] &&
	   [ -n "$(cat "$d/bdf")" ]; then
		pass "host$q-nvme0 here: node host$q, bdf $(cat "$d/bdf"), vendor $(cat "$d/vendor")"
	else
		fail "host$q-nvme0: node '$(cat "$d/node")', vendor '$(cat "$d/vendor")'"
	fi
done

# --- a refused borrow leaves the lender's drive alone ------------------------
if [ "$P" != "$lender" ]; then
	if echo "host$P" >"$dev/borrow" 2>/tmp/err; then
		fail "borrowed $dev under lend policy none"
	else
		pass "borrow under lend policy none refused: $(cat /tmp/err)"
	fi
fi
# Issue 28, item 13: a user without CAP_SYS_ADMIN reading the lender's
# config space in a third node's name is refused here (EPERM), before
# anything reaches the lender, which counts no refusal against us.
if [ "$P" != "$lender" ] && [ $N = 4 ]; then
	fdid=$(cat "$dev/fdid")
	i=0 bad=0
	while [ $i -lt 20 ]; do
		rc=$(sio_genl -u 1000 call cfg_read dev="$fdid" node=$(((P + 1) % N)) \
			off=0 size=4 | sed -n 's/^rc=//p')
		[ "$rc" = -1 ] || bad=$((bad + 1))
		i=$((i + 1))
	done
	rc=$(sio_genl -u 1000 call cfg_read dev="$fdid" node="$P" off=0 size=4 |
		sed -n 's/^rc=//p')
	if [ "$bad" = 0 ] && [ "$rc" = 0 ]; then
		pass "uid 1000 reads host$lender-nvme0's config as host$P only: 20 reads in host$(((P + 1) % N))'s name EPERM"
	else
		fail "uid 1000's config reads of host$lender-nvme0: $bad of 20 in another's name not EPERM, as host$P rc '$rc'"
	fi
fi
mark refused
wait_for refused $pair
if [ "$P" = "$lender" ]; then
	st=$(grep "^node host$pair " /sys/kernel/debug/smartio/state)
	case "$st" in
	*" refused=0") pass "no refusal counted against host$pair: $st" ;;
	*) fail "refusals counted against host$pair (its user's reads were forwarded): $st" ;;
	esac
	if [ -e "/sys/bus/pci/drivers/nvme/$own_bdf" ] &&
	   dd if="/dev/$(own_disk)" of=/dev/null bs=4k count=16 iflag=direct status=none; then
		pass "after the refused borrow nvme still drives $own_bdf and reads"
	else
		fail "after the refused borrow $own_bdf lost its driver or its reads"
	fi
	echo all >"$dev/lend" || fail "lend all"
	[ "$ntbhw" = switchtec ] &&
		{ echo all >/smartio/dev/host0-nvme1/lend || fail "lend all of host0-nvme1"; }
	[ "$ntbhw" = switchtec ] || slow0=$(slow_accesses)
	mark lent
	wait_for lent $others
else
	mark lent
	wait_for lent $others
fi

# --- the MSI-X table is the lender's to write (issue 28, item 2) -------------
# msix_at CONFIG: "BAR OFFSET LAST" of the function's MSI-X table (its
# BAR, the table's offset in it, the index of its last entry), from a
# config space file as root reads it (/smartio's, or sysfs's).
msix_at() {
	local c=$1 pos hops=0
	rd() { dd if="$c" bs=1 skip=$(($1)) count="$2" status=none |
		od -An -tx"$2" | tr -d ' \n'; }
	pos=$((0x$(rd 0x34 1) & 0xfc))
	while [ $pos -ge 64 ] && [ $hops -lt 48 ]; do
		if [ $((0x$(rd $pos 1))) = 17 ]; then
			t=$((0x$(rd $((pos + 4)) 4)))
			echo "$((t & 7)) $((t & ~7)) $((0x$(rd $((pos + 2)) 2) & 0x7ff))"
			return
		fi
		pos=$((0x$(rd $((pos + 1)) 1) & 0xfc))
		hops=$((hops + 1))
	done
}
# The borrower, as a hostile kernel would: writes the data word of the
# table's last entry straight through its BAR window, and asks the lender
# to aim that entry at the lender's own interrupt range (debugfs
# msix_entry sends what its shadow would not).
msix_hostile() {
	set -- $(msix_at "$dev/config")
	local bar=$1 ent=$(($2 + 16 * $3)) last=$3
	printf 'SIO!' | dd of="/dev/sio-host$P-host$lender-nvme0-bar$bar" bs=4 \
		seek=$(((ent + 8) / 4)) count=1 conv=notrunc status=none 2>/dev/null
	echo "$(cat "$dev/fdid") $last 0xfee00000 0x41 0" \
		>/sys/kernel/debug/smartio/msix_entry 2>/tmp/err
	if grep -q "Permission denied" /tmp/err; then
		pass "an MSI-X entry aimed outside host$P's MSI window: refused ($(cat /tmp/err))"
	else
		fail "MSI-X entry $last aimed at the lender's own 0xfee00000: '$(cat /tmp/err)'"
	fi
	mark msixw
}
# The lender: neither reached its device's table.
msix_lender_check() {
	set -- $(msix_at "/sys/bus/pci/devices/$own_bdf/config")
	local bar=$1 ent=$(($2 + 16 * $3)) base st
	base=$(sed -n "$(($1 + 1))p" "/sys/bus/pci/devices/$own_bdf/resource" |
		cut -d' ' -f1)
	wait_for msixw $pair
	if [ "$(devmem $((base + ent + 8)) 32)" != 0x214F4953 ] &&
	   [ "$(devmem $((base + ent)) 32)" != 0xFEE00000 ]; then
		pass "host$pair's direct write and forged message left MSI-X entry $3 alone ($(devmem $((base + ent)) 32) $(devmem $((base + ent + 8)) 32))"
	else
		fail "host$pair reached MSI-X entry $3: $(devmem $((base + ent)) 32) $(devmem $((base + ent + 8)) 32)"
	fi
	st=$(grep "^msix host$P-nvme0 " /sys/kernel/debug/smartio/state)
	case "$st" in
	*" written=0 "*) fail "no MSI-X message of host$pair written: $st" ;;
	*" refused=0") fail "no MSI-X message refused: $st" ;;
	*) pass "host$pair's MSI-X messages written, the forged one refused: $st" ;;
	esac
	if dmesg | grep -q "MSI-X entry $3 from host$pair aimed at 0xfee00000, outside its MSI window"; then
		pass "the refusal is logged"
	else
		fail "no log line for the refused MSI-X entry"
	fi
}

# --- Switchtec: the requester-id table, the exposed MSI-X table -------------
# The NVMe's requester id (bus << 8 | device << 3 | function).
rid_of() {
	local b=${1#*:}
	printf '%04x' $(((0x${b%%:*} << 8) | (0x$(echo "$b" | cut -d: -f2 | cut -d. -f1) << 3) | ${b##*.}))
}
# stx_dbg_file NAME: smartio_ntb's debugfs file NAME (one NTB device).
stx_dbg_file() {
	local d
	for d in /sys/kernel/debug/smartio_ntb/*/; do
		[ -e "$d$1" ] && { echo "$d$1"; return; }
	done
	return 1
}
stx_dbg() {
	local f
	f=$(stx_dbg_file "$1") && cat "$f"
}
stx_dbg_write() {
	local f
	f=$(stx_dbg_file "$1") && echo "$2" >"$f"
}
# While lent: the lender's table lists the NVMe (read by the lender from
# its own control block, and by the borrower from host0's through its NT
# function, what the chip holds); the 64 KiB entry's exposure is logged.
stx_lent_check() {
	local rid
	if [ "$P" = "$lender" ]; then
		wait_for borrowed $pair
		rid=$(rid_of "$own_bdf")
		if stx_dbg rid | grep -q "^$rid proxy"; then
			pass "while lent, $own_bdf ($rid) is in this partition's requester-id table: $(stx_dbg rid | tr '\n' ';')"
		else
			fail "while lent, $rid is not in the requester-id table: $(stx_dbg rid | tr '\n' ';')"
		fi
		if dmesg | grep -q "entry for host$pair would expose the MSI-X table.*refused"; then
			pass "host0-nvme1's borrow was refused here: $(dmesg | grep -o "a 64 KiB entry for host$pair would expose.*: refused" | head -n 1)"
		else
			fail "no refusal logged for host0-nvme1's MSI-X table"
		fi
		if dmesg | grep -q "exposes the MSI-X table"; then
			fail "an entry exposes an MSI-X table: $(dmesg | grep "exposes the MSI-X table")"
		else
			pass "no entry exposes $own_bdf's MSI-X table (BAR 4 of its own)"
		fi
		if [ -e "/sys/bus/pci/drivers/nvme/$second_bdf" ] &&
		   dd if="/dev/$(disk_of "$second_bdf")" of=/dev/null bs=4k count=16 iflag=direct status=none; then
			pass "after its refused borrow nvme still drives $second_bdf and reads"
		else
			fail "after its refused borrow $second_bdf lost its driver or its reads"
		fi
		mark ridseen
		# ID protection (idprot=1): out of the table (as a lender
		# that lost track of it would leave it), the NVMe's requests
		# through this NT function are refused by the chip; back in,
		# they cross again.
		wait_for ridread $pair
		if stx_dbg_write rid "-$rid"; then
			pass "the lender takes $rid out of its requester-id table"
		else
			fail "taking $rid out of the requester-id table"
		fi
		mark ridgone
		wait_for stalled $pair
		stx_dbg_write rid "+$rid" || fail "putting $rid back"
		mark ridback
	else
		rid=$(rid_of "$(cat "$dev/bdf")")
		if stx_dbg peer_rid | grep -q "^$rid proxy"; then
			pass "host$lender's requester-id table, read here: $(stx_dbg peer_rid | tr '\n' ';')"
		else
			fail "host$lender's requester-id table lacks $rid: $(stx_dbg peer_rid | tr '\n' ';')"
		fi
		wait_for ridseen $lender
		stx_id_protection
	fi
}
# The borrower's side of ID protection.  With host0's NVMe out of host0's
# requester-id table the chip refuses every request the NVMe sends
# through host0's NT function (the model checks each DMA access by its
# requester, contrib/qemu/ntbsw-rid.c), so a read of ours makes nothing
# land here: sio_dmacanary fills the buffer the read targets with a
# canary and watches it for 5 s (without the check the data lands at
# once), and no interrupt comes.  The NVMe's first request, the fetch of
# the command from the submission queue in our memory, already fails:
# the controller reports a fatal status.  Back in the table, nvme's
# timeout resets the controller through the shadow and fails the read
# (EIO, the canary still there); reads work and interrupt again.
# The read is not retried (nvme_core max_retries=0 for this step): a
# request requeued across a reset is submitted before nvme configures
# QEMU 7.2's shadow doorbells again, which then leave the queue's event
# index at 0, and Linux 6.1 never rings that queue's doorbell again
# (every later read times out; a reset with nothing pending is fine).
stx_id_protection() {
	local b a want got st pid retries
	dd if="/dev/$disk" of=/dev/null bs=4k count=16 iflag=direct status=none
	want=$(dd if="/dev/$disk" bs=4k count=1 skip=99 iflag=direct status=none |
		md5sum | cut -d' ' -f1)
	retries=$(cat /sys/module/nvme_core/parameters/max_retries)
	echo 0 >/sys/module/nvme_core/parameters/max_retries
	mark ridread
	wait_for ridgone $lender
	b=$(msix)
	rm -f /tmp/ridnote
	sio_dmacanary "/dev/$disk" $((99 * 4096)) 4096 5 /tmp/ridnote \
		>/tmp/ridbuf 2>/tmp/riderr &
	pid=$!
	waitfor 60 test -s /tmp/ridnote
	a=$(msix)
	case "$(cat /tmp/ridnote 2>/dev/null)" in
	intact:*)
		if [ "$a" = "$b" ]; then
			pass "host$lender's NVMe out of its partition's requester-id table: nothing of our read lands ($(cat /tmp/ridnote)), no interrupt ($b before and after)"
		else
			fail "with the NVMe out of the table the canary held, but interrupts went $b -> $a"
		fi ;;
	*)
		fail "with host$lender's NVMe out of its requester-id table its DMA reached us: $(cat /tmp/ridnote 2>/dev/null)" ;;
	esac
	mark stalled
	wait_for ridback $lender
	wait "$pid"
	st=$?
	echo "$retries" >/sys/module/nvme_core/parameters/max_retries
	if [ "$st" = 3 ] && grep -q "returned -[0-9]* .*the canary intact" /tmp/riderr; then
		pass "back in the table, nvme's reset fails the read with nothing landed ($(cat /tmp/riderr)): $(dmesg | grep -o 'nvme nvme[0-9]*: .*\(reset\|abort\|timeout\).*' | tail -n 2 | tr '\n' ';')"
	else
		fail "back in the table, the read: status $st, $(cat /tmp/riderr) $(dmesg | grep nvme | tail -n 5 | tr '\n' ';')"
	fi
	got=$(dd if="/dev/$disk" bs=4k count=1 skip=99 iflag=direct status=none |
		md5sum | cut -d' ' -f1)
	if [ "$got" = "$want" ]; then
		pass "after the reset the block reads as before ($got)"
	else
		fail "after the reset the block reads $got, before $want"
	fi
	b=$(msix)
	if dd if="/dev/$disk" of=/dev/null bs=4k count=16 iflag=direct status=none; then
		a=$(msix)
	else
		a=$b
		fail "reads through the shadow after the reset fail"
	fi
	if [ "$a" -gt "$b" ]; then
		pass "back in the table, its DMA and MSI-X cross again ($((a - b)) interrupts)"
	else
		fail "back in the table: no interrupt ($b -> $a)"
	fi
}
stx_returned_check() {
	local rid
	rid=$(rid_of "$own_bdf")
	if stx_dbg rid | grep -q "^$rid proxy"; then
		fail "after the return $rid is still in the requester-id table"
	else
		pass "after the return the table holds $(stx_dbg rid | wc -l) entries, not $rid"
	fi
}

# --- who a peer is (issue 28, item 14) ---------------------------------------
# host1, its lender lost, comes back as host3 once host3 is down: the
# machine behind port 1 announces node id 3, which host2 pinned to port 3.
# It stays until host2, which must see that announcement refused, is done
# (host2's port goes down when it powers off), 20 s at most.
port2_down_line="smartio peer node .* (port 2) down"
impostor() {
	local downs
	waitfor 300 is /smartio/nodes/host3/state down ||
		{ fail "host3 did not go down"; return; }
	umount /smartio 2>/dev/null
	if rmmod smartio && rmmod smartio_ntb &&
	   insmod /smartio_ntb.ko node=3 window_kb=4096 &&
	   insmod /smartio.ko fabric=ntb nodes=4 node=3; then
		pass "the machine behind port 1 now announces node id 3"
	else
		fail "reloading as node 3"
	fi
	# (counted after the reload: the old module's peers went down in it)
	downs=$(dmesg_lines "$port2_down_line")
	waitfor 20 dmesg_lines_above "$port2_down_line" "$downs"
}
# host2: the announcement is refused, host3 stays down.
impostor_refused() {
	local f=/sys/kernel/debug/smartio_fabric/ids_refused
	counted() { [ "$(cat $f 2>/dev/null || echo 0)" -ge 1 ]; }
	# Until the refusal is counted, or the impostor is taken for host3
	# (it stays until this node is down, 20 s at most).
	taken() { counted || is /smartio/nodes/host3/state up; }
	waitfor 120 taken
	if counted && is /smartio/nodes/host3/state down; then
		pass "port 1 announcing host3's id refused, host3 down ($(dmesg | grep 'announcing node id 3' | tail -n 1))"
	else
		fail "port 1 took host3's id: host3 '$(cat /smartio/nodes/host3/state)', ids_refused '$(cat $f 2>&1)'"
	fi
}

# --- the borrow ---------------------------------------------------------------
# block I: the 1 MiB block I of the pattern (/tmp/chunk with "block I" first).
block() {
	printf 'block %04d' "$1" | dd of=/tmp/chunk conv=notrunc status=none
	cat /tmp/chunk
}
pattern_md5() {
	i=0
	while [ $i -lt $MIB ]; do
		block $i
		i=$((i + 1))
	done | md5sum | cut -d' ' -f1
}
msix() { awk '/smartio-NTB-MSI/ { n += $2 } END { print n + 0 }' /proc/interrupts; }
# The shadow of device directory $1: PCI segment 0x5100 + the device's
# index, the lender's bdf.
shadow_of() {
	local b
	b=$(cat "$1/bdf")
	printf '%04x:%s' $((0x5100 + ($(cat "$1/fdid") & 0xfffff))) "${b#*:}"
}
shadow=$(shadow_of "$dev")
shadow_disk() {
	local c
	c=$(ls "/sys/bus/pci/devices/$shadow/nvme" 2>/dev/null | head -n 1)
	[ -n "$c" ] && [ -b "/dev/${c}n1" ] && echo "${c}n1"
}
# lspci's view of the shadow: its sysfs config file is read under the PCI
# core's lock with interrupts off, where a cycle to the lender cannot be
# waited for; the shadow answers from the copy it read whole before sysfs
# showed it.  The identity and the MSI-X capability equal /smartio's
# (the lender's), no sleep-in-atomic report, and a write there (setpci)
# is refused with a line naming the way that works.
shadow_sysfs_config() {
	local c=/sys/bus/pci/devices/$shadow/config n id want
	n=$(dd if="$c" bs=4096 count=1 status=none | wc -c)
	id=$(dd if="$c" bs=4 count=3 status=none | od -An -tx4 | awk '{ print $1, $3 }')
	want=$(dd if="$dev/config" bs=4 count=3 status=none | od -An -tx4 | awk '{ print $1, $3 }')
	if [ "$n" -ge 256 ] && [ "$id" = "$want" ] &&
	   [ "$(msix_at "$c")" = "$(msix_at "$dev/config")" ] &&
	   ! dmesg | grep -q -e "scheduling while atomic" -e "invalid context"; then
		pass "the shadow's sysfs config (as lspci reads it): $n bytes, id and class $id, MSI-X at $(msix_at "$c"), as the lender's; no sleep in atomic context"
	else
		fail "the shadow's sysfs config: $n bytes, id '$id' (want '$want'), MSI-X '$(msix_at "$c")' (want '$(msix_at "$dev/config")'); $(dmesg | grep -m1 -e "while atomic" -e "invalid context")"
	fi
	printf '\100' | dd of="$c" bs=1 seek=13 conv=notrunc status=none 2>/dev/null
	if dmesg | grep -q "config write at 0xd of a shadow through sysfs or procfs refused"; then
		pass "a config write through the shadow's sysfs file refused and logged"
	else
		fail "a config write through sysfs: no refusal logged ($(dmesg | tail -n 3))"
	fi
}
# --- three address domains -----------------------------------------------------
# forget STEPS: removes step segments of this node no other node waits for
# any more (a node may own 8 segment records).
forget() {
	local n
	for n in "$@"; do
		rmdir "/smartio/self/segments/$n$P" || fail "removing step $n$P"
	done
}

# host3's part: a segment of its own, mapped for host0-nvme0 (lent to
# host1); the device's address of it goes to host1 in segment ioa3.
domains_owner() {
	local s=/smartio/self/segments/dst3 a=/smartio/self/segments/ioa3
	local ioaddr got want
	wait_for ubor 1
	# host1 is past every earlier step of ours, host2 checked.
	forget refused lent borrowed tried nolut md5 msixw
	{ mkdir "$s" && echo 64k >"$s/size" && echo 1 >"$s/available"; } \
		2>/tmp/err || fail "segment dst3: $(cat /tmp/err)"
	if mkdir "$s/dma/host0-nvme0" 2>/tmp/err; then
		ioaddr=$(cat "$s/dma/host0-nvme0/ioaddr")
		pass "dst3 mapped for host0-nvme0 (lent to host1): the device reaches it at $ioaddr"
	else
		fail "mkdir dst3/dma/host0-nvme0: $(cat /tmp/err)"
		dmesg | tail -n 20
	fi
	mkdir "$a" && echo 4k >"$a/size" && echo 1 >"$a/available" &&
		sio_segrw "$a/mem" 0 write "${ioaddr:-none}" || fail "segment ioa3"
	mark mapped
	wait_for nvmeread 1
	a=/smartio/nodes/host1/segments/md5r1
	echo host3 >"$a/attach" || fail "attach md5r1"
	want=$(sio_segrw "$a/mem" 0 read 32)
	echo host3 >"$a/detach"
	got=$(sio_segrw "$s/mem" 0 dump 32768 | md5sum | cut -d' ' -f1)
	# Neither 32 KiB of zeros (nothing reached the segment) nor nothing.
	case $got in
	bb7df04e1b0a2570657527a7e108ae23 | d41d8cd98f00b204e9800998ecf8427e) got="($got)" ;;
	esac
	if [ "$got" = "$want" ]; then
		pass "host3 reads in its memory the 64 blocks host0's NVMe wrote there for host1's driver ($got)"
	else
		fail "dst3 holds md5 $got, host1's driver checked '$want'"
	fi
	if rmdir "$s/dma/host0-nvme0" && rmdir "$s" && rmdir /smartio/self/segments/ioa3; then
		pass "dst3 unmapped for host0-nvme0 and removed"
	else
		fail "unmapping or removing dst3"
	fi
	# Its own two NVMe, the first still with its nvme driver (in that
	# driver's DMA domain): no peer mapping between them (EBUSY).
	if mkdir /smartio/dev/host3-nvme0/peers/host3-nvme1 2>/tmp/err; then
		fail "a peer mapping for host3-nvme0 while nvme drives it"
		rmdir /smartio/dev/host3-nvme0/peers/host3-nvme1
	elif grep -q "busy" /tmp/err && [ -b /dev/nvme0n1 ]; then
		pass "no peer mapping for host3-nvme0 while nvme drives it: $(cat /tmp/err)"
	else
		fail "peer mapping with host3-nvme0 in its driver: '$(cat /tmp/err)', not EBUSY"
	fi
	# host1 borrows both of this node's NVMe next (one_lender_p2p).
	for d in /smartio/dev/host3-nvme0 /smartio/dev/host3-nvme1; do
		echo host1 >"$d/lend" || fail "lend ${d##*/} to host1"
	done
	mark domainsdone
}

# host1's part: borrows host0-nvme0 for contrib/nvme's driver (the nvme
# driver let go of the shadow), which reads blocks into host3's dst3.
domains_driver() {
	local t=/smartio/nodes/host3/segments ioaddr
	if echo "host$P" >"$dev/borrow" 2>/tmp/err && waitfor 120 shadow_disk &&
	   echo "$shadow" >/sys/bus/pci/drivers/nvme/unbind; then
		pass "host1 borrows host0-nvme0 for a userspace driver (nvme unbound from $shadow)"
	else
		fail "borrowing for the userspace driver: $(cat /tmp/err)"
	fi
	mark ubor
	wait_for mapped 3
	# host3 is past every earlier step of ours, host0 checked.
	forget refused lent borrowed md5 msixw
	echo host1 >"$t/ioa3/attach" && echo host1 >"$t/dst3/attach" ||
		fail "attaching host3's segments"
	ioaddr=$(sio_segrw "$t/ioa3/mem" 0 read 32 | tr -d .)
	nvme_read_into host0-nvme0 "host3/dst3@$ioaddr" "" "host3's dst3"
	local m=/smartio/self/segments/md5r1
	mkdir "$m" && echo 4k >"$m/size" && echo 1 >"$m/available" &&
		sio_segrw "$m/mem" 0 write "$(sio_segrw "$t/dst3/mem" 0 dump 32768 |
			md5sum | cut -d' ' -f1)" || fail "md5r1 segment"
	echo host1 >"$t/dst3/detach"
	echo host1 >"$t/ioa3/detach"
	mark nvmeread
	wait_for domainsdone 3
	# host3 read md5r1 and is past the steps before it.
	forget ubor nvmeread
	rmdir /smartio/self/segments/md5r1 || fail "removing md5r1"
	peer_to_peer
	if echo "host$P" >"$dev/return" &&
	   waitfor 60 test ! -e "/sys/bus/pci/devices/$shadow"; then
		pass "returned host0-nvme0 after the userspace driver"
	else
		fail "return after the userspace driver"
	fi
	mark p2pdone
}

# nvme_read_into DEV TARGET@IOADDR LABEL WHERE [-v]: contrib/nvme's driver
# has DEV write 64 blocks at 200000 (or, with -v, only read them) and
# read them into TARGET at IOADDR, where it checks them.
nvme_read_into() {
	if smartio-nvme -m /smartio -d "$1" -l 200000 -n 64 ${5:+"$5"} \
		-t "$2" >/tmp/nvme.out 2>&1; then
		pass "contrib/nvme$3: $(tr '\n' ' ' </tmp/nvme.out)"
	else
		fail "contrib/nvme into $4 at ${2##*@}: $(tr '\n' ' ' </tmp/nvme.out)"
		dmesg | tail -n 20
	fi
}

# --- peer-to-peer across three machines -----------------------------------------
# borrow_unbound DEVDIR: host1 borrows the device for contrib/nvme's
# userspace driver: the nvme driver binds its shadow, and is unbound.
borrow_unbound() {
	local sh
	sh=$(shadow_of "$1")
	if echo host1 >"$1/borrow" 2>/tmp/err &&
	   waitfor 120 test -e "/sys/bus/pci/drivers/nvme/$sh" &&
	   echo "$sh" >/sys/bus/pci/drivers/nvme/unbind; then
		pass "host1 borrows ${1##*/} (nvme unbound from $sh)"
	else
		fail "borrowing ${1##*/}: $(cat /tmp/err)"
	fi
}

# host1, still holding host0's NVMe (A) for its userspace driver, borrows
# host2's (B, with a 1 MiB controller memory buffer in BAR 2) and maps B's
# BARs for A (SmartIO 4.4): host0 takes entries of its window toward
# host2 in A's IOMMU domain, host2 translates them onto B's BARs.  A then
# reads blocks straight into B's CMB; host2 finds them in its device.
peer_to_peer() {
	local b=/smartio/dev/host2-nvme0 shb ioaddr m=/smartio/self/segments/p2pm1
	shb=$(shadow_of "$b")
	borrow_unbound "$b"
	# Issue 12 defect 8: host2's 3 entries for host1 hold its borrow.
	if mkdir /smartio/dev/host2-nvme0/peers/host0-nvme0 2>/tmp/err; then
		fail "host2 gave host1 a 4th entry (luts_per_node=3)"
		rmdir /smartio/dev/host2-nvme0/peers/host0-nvme0
	elif grep -q "No space left" /tmp/err; then
		pass "host2's share per node (3 entries: host1's borrow) refuses host1 a peer mapping: $(cat /tmp/err)"
	else
		fail "peer mapping beyond host2's share: '$(cat /tmp/err)', not ENOSPC"
	fi
	if mkdir /smartio/dev/host0-nvme0/peers/host2-nvme0 2>/tmp/err; then
		ioaddr=$(cat /smartio/dev/host0-nvme0/peers/host2-nvme0/bar2)
		pass "host2-nvme0's BARs mapped for host0-nvme0: its CMB (BAR 2) at $ioaddr"
	else
		fail "mkdir peers/host2-nvme0: $(cat /tmp/err)"
		dmesg | tail -n 20
	fi
	nvme_read_into host0-nvme0 "$b/bar2@$ioaddr" ", peer-to-peer" \
		"host2-nvme0's CMB" -v
	mkdir "$m" && echo 4k >"$m/size" && echo 1 >"$m/available" &&
		sio_segrw "$m/mem" 0 write "$(sio_segrw "$b/bar2" 0 dump 32768 |
			md5sum | cut -d' ' -f1)" || fail "p2pm1 segment"
	mark p2p
	wait_for p2pchecked 2
	if rmdir /smartio/dev/host0-nvme0/peers/host2-nvme0 &&
	   echo host1 >"$b/return" &&
	   waitfor 60 test ! -e "/sys/bus/pci/devices/$shb"; then
		pass "peer mapping removed, host2-nvme0 returned"
	else
		fail "unmapping peers/host2-nvme0 or returning host2-nvme0"
	fi
	# The target local to the borrower (SmartIO 4.4's second case): this
	# machine's own NVMe, whose CMB host0's NVMe writes through the NTB.
	b=/smartio/dev/host1-nvme0
	if mkdir /smartio/dev/host0-nvme0/peers/host1-nvme0 2>/tmp/err &&
	   ioaddr=$(cat /smartio/dev/host0-nvme0/peers/host1-nvme0/bar2) &&
	   smartio-nvme -m /smartio -d host0-nvme0 -l 200000 -n 64 -v \
		-t "$b/bar2@$ioaddr" >/tmp/nvme.out 2>&1 &&
	   rmdir /smartio/dev/host0-nvme0/peers/host1-nvme0; then
		pass "peer-to-peer into this machine's NVMe CMB at $ioaddr: $(tail -n 2 /tmp/nvme.out | head -n 1)"
	else
		fail "peer-to-peer into host1-nvme0: $(cat /tmp/err) $(tr '\n' ' ' </tmp/nvme.out)"
	fi
	one_lender_p2p
}

# Both devices on one lender (SmartIO 4.4's first case): host1 borrows
# host3's two NVMe and maps the second's BARs (B, a 1 MiB CMB in BAR 2)
# for the first (A): host3 maps them in A's IOMMU domain, no NTB between
# them.  A reads blocks straight into B's CMB; host1 finds them there
# through its own mapping of B's BAR 2 (zeroed first by smartio-nvme).
one_lender_p2p() {
	local a=/smartio/dev/host3-nvme0 b=/smartio/dev/host3-nvme1 ioaddr
	borrow_unbound "$a"
	borrow_unbound "$b"
	if mkdir "$a/peers/host3-nvme1" 2>/tmp/err &&
	   ioaddr=$(cat "$a/peers/host3-nvme1/bar2"); then
		pass "host3-nvme1's BARs mapped for host3-nvme0 on their lender: its CMB at $ioaddr"
	else
		fail "mkdir host3-nvme0/peers/host3-nvme1: $(cat /tmp/err)"
		dmesg | tail -n 20
	fi
	nvme_read_into host3-nvme0 "$b/bar2@$ioaddr" \
		", peer-to-peer on one lender" "host3-nvme1's CMB"
	if rmdir "$a/peers/host3-nvme1" 2>/tmp/err &&
	   echo host1 >"$a/return" && echo host1 >"$b/return" &&
	   waitfor 60 test ! -e "/sys/bus/pci/devices/$(shadow_of "$a")" &&
	   waitfor 60 test ! -e "/sys/bus/pci/devices/$(shadow_of "$b")"; then
		pass "one-lender peer mapping removed, host3's NVMe returned"
	else
		fail "unmapping host3-nvme0/peers/host3-nvme1 or returning: $(cat /tmp/err)"
	fi
}

# host2's part: its device's memory holds what host0's NVMe read there.
peer_to_peer_lender() {
	local a=/smartio/nodes/host1/segments/p2pm1 want got
	wait_for p2p 1
	echo host2 >"$a/attach" || fail "attach p2pm1"
	want=$(sio_segrw "$a/mem" 0 read 32)
	echo host2 >"$a/detach"
	got=$(sio_segrw /smartio/dev/host2-nvme0/bar2 0 dump 32768 | md5sum | cut -d' ' -f1)
	case $got in
	bb7df04e1b0a2570657527a7e108ae23 | d41d8cd98f00b204e9800998ecf8427e) got="($got)" ;;
	esac
	if [ "$got" = "$want" ]; then
		pass "host2 reads in its NVMe's CMB the 64 blocks host0's NVMe wrote there ($got)"
	else
		fail "host2-nvme0's CMB holds md5 $got, host1 read '$want'"
	fi
	mark p2pchecked
}

# Over Switchtec: the borrow of a device whose MSI-X table shares a
# 64 KiB entry with its BAR is refused (issue 28, item 2), and leaves
# nothing behind.
if [ "$P" != "$lender" ] && [ "$ntbhw" = switchtec ]; then
	t=/smartio/dev/host0-nvme1
	if echo "host$P" >"$t/borrow" 2>/tmp/err; then
		fail "borrowed $t, whose 64 KiB entry holds its MSI-X table"
	elif grep -q "Operation not permitted" /tmp/err &&
	     [ -z "$(cat "$t/borrow")" ] && ! shadow_disk; then
		pass "the borrow of host0-nvme1, its MSI-X table in BAR 0's 64 KiB entry, is refused and leaves no borrow: $(cat /tmp/err)"
	else
		fail "the refused borrow of $t: '$(cat /tmp/err)', borrow '$(cat "$t/borrow")'"
	fi
fi
if [ "$P" != "$lender" ]; then
	t0=$(date +%s)
	if echo "host$P" >"$dev/borrow" 2>/tmp/err; then
		pass "host$P borrows host$lender-nvme0 ($(($(date +%s) - t0)) s)"
	else
		fail "borrow: $(cat /tmp/err)"; finish
	fi
	if waitfor 120 shadow_disk; then
		disk=$(shadow_disk)
		pass "the nvme driver bound the shadow $shadow: /dev/$disk"
	else
		fail "no disk of the shadow: $(ls /sys/block | tr '\n' ' ')"
		dmesg | tail -n 30
		finish
	fi
	shadow_sysfs_config
	udevadm settle --timeout=60
	u=/dev/smartio/host$P/host$lender-nvme0/$disk
	if [ -L "$u" ] && [ -b "$u" ] &&
	   udevadm info -q property "/dev/$disk" | grep -qx "SMARTIO_LENDER=host$lender"; then
		pass "udev names the hot-added disk $u, tagged SMARTIO_LENDER=host$lender"
	else
		fail "udev: $u is '$(ls -l "$u" 2>&1)'"
	fi
	if grep -qx "borrowed host$lender-nvme0 from host$lender" /run/smartio/borrowed; then
		pass "udev/90-smartio-example.rules logged the borrow"
	else
		fail "the example rule logged '$(cat /run/smartio/borrowed 2>&1)'"
	fi
	# An exclusive borrow taken is refused to the other borrower (host3
	# tries host0's NVMe while host1 has it), and host1's I/O goes on.
	mark borrowed
	# Over Switchtec the DMA window takes the lender's direct window
	# toward us, which has one translation: a second device of host0
	# is refused while we hold the first, with nothing taken.
	if [ "$ntbhw" = switchtec ]; then
		d2=/smartio/dev/host0-nvme1
		if echo "host$P" >"$d2/borrow" 2>/tmp/err; then
			fail "borrowed host0-nvme1 beside host0-nvme0 over one direct window"
		elif grep -q "resource busy" /tmp/err && [ -z "$(cat "$d2/borrow")" ]; then
			pass "a second device of host0 (nvme1) refused while host0-nvme0 holds the direct window: $(cat /tmp/err)"
		else
			fail "second borrow from host0: '$(cat /tmp/err)', borrowers '$(cat "$d2/borrow")'"
		fi
		mark directtried
	fi
	if [ "$P" = 3 ]; then
		wait_for borrowed 1
		if echo "host$P" >/smartio/dev/host0-nvme0/borrow 2>/tmp/err; then
			fail "borrowed host0-nvme0 while host1 has it exclusively"
		else
			pass "host0-nvme0 taken exclusively by host1: refused ($(cat /tmp/err))"
		fi
		mark tried
		# Shared now, but host0's 5 entries hold host1's 3 and not 3
		# more: refused before anything is claimed or mapped.
		wait_for shared 0
		if echo "host$P" >/smartio/dev/host0-nvme0/borrow 2>/tmp/err; then
			fail "borrowed host0-nvme0 with no room in host0's look-up table"
		elif grep -q "No space left" /tmp/err; then
			pass "host0-nvme0 shared, no look-up-table room on host0: refused ($(cat /tmp/err))"
		else
			fail "no-room borrow refused with '$(cat /tmp/err)', not ENOSPC"
		fi
		mark nolut
	fi
	dd if=/dev/urandom of=/tmp/chunk bs=1M count=1 status=none
	before=$(msix)
	i=0
	while [ $i -lt $MIB ]; do
		block $i | dd of="/dev/$disk" bs=1M seek=$i count=1 oflag=direct \
			iflag=fullblock status=none || { fail "write of MiB $i"; break; }
		i=$((i + 1))
	done
	want_md5=$(pattern_md5)
	got_md5=$(dd if="/dev/$disk" bs=1M count=$MIB iflag=direct status=none | md5sum | cut -d' ' -f1)
	if [ "$got_md5" = "$want_md5" ]; then
		pass "$MIB MiB written through the shadow with O_DIRECT read back equal ($got_md5)"
	else
		fail "$MIB MiB read back as $got_md5, written $want_md5"
	fi
	after=$(msix)
	if [ "$after" -gt "$before" ]; then
		pass "MSI-X through the window: $((after - before)) interrupts of the shadow on host$P"
		if dmesg | grep -q "Enabled IRQ remapping"; then
			pass "with interrupt remapping on: remapped as the NTB function's"
		else
			fail "interrupt remapping is not on"
		fi
	else
		fail "no MSI-X interrupt of the shadow counted ($before, $after)"
	fi
	state=$(grep '^shadow' /sys/kernel/debug/smartio/state)
	case $state in
	*"dma_window="*"maps="*) pass "DMA by address arithmetic: $state" ;;
	*) fail "shadow state '$state'" ;;
	esac
	if [ "$ntbhw" = switchtec ]; then
		stx_lent_check
	else
		msix_hostile
	fi
	[ "$P" = 1 ] && [ $N = 4 ] && wait_for nolut 3
	# The md5 goes to the lender in a segment of this node.
	s=/smartio/self/segments/md5$P
	mkdir "$s" && echo 4k >"$s/size" && echo 1 >"$s/available" &&
		sio_segrw "$s/mem" 0 write "$want_md5" || fail "md5 segment"
	if echo "host$P" >"$dev/return"; then
		pass "returned host$lender-nvme0"
	else
		fail "return of host$lender-nvme0"
	fi
	gone() { ! shadow_disk; }
	waitfor 60 gone && pass "the shadow's disk is gone after the return" ||
		fail "the shadow's disk $(shadow_disk) stays after the return"
	mark returned
	wait_for checked $pair
	[ $N = 2 ] && { mark bye; finish; }
	case $P in
	1) domains_driver ;;
	3) domains_owner; wait_for p2pdone 1 ;;
	esac
	mark bye
	# --- failures: borrowed again, then a machine of the pair is lost --
	if echo "host$P" >"$dev/borrow" 2>/tmp/err && waitfor 120 shadow_disk; then
		disk=$(shadow_disk)
		pass "host$P borrows host$lender-nvme0 again: /dev/$disk"
	else
		fail "borrowing again: $(cat /tmp/err)"; finish
	fi
	if [ "$P" = 3 ]; then
		# The borrower powers off holding the device: host2 takes it back.
		finish
	fi
	# The lender powers off under I/O: the shadow goes, the I/O fails.
	(while dd if="/dev/$disk" of=/dev/null bs=1M count=16 iflag=direct \
		status=none; do :; done; echo ended >/tmp/io) &
	io=$!
	sleep 1
	mark busy
	t0=$(date +%s)
	if waitfor 60 is "/smartio/nodes/host$lender/state" down; then
		pass "host$lender (the lender) down $(($(date +%s) - t0)) s after its power-off began"
	else
		fail "host$lender still '$(cat "/smartio/nodes/host$lender/state")'"
	fi
	io_ended() { [ -e /tmp/io ]; }
	t0=$(date +%s)
	if waitfor 90 io_ended && ! kill -0 "$io" 2>/dev/null; then
		pass "the reads in flight failed with errors, no hang ($(($(date +%s) - t0)) s)"
	else
		fail "the reads through the lost lender's device still run"
		kill "$io" 2>/dev/null
	fi
	if waitfor 60 test ! -e "/sys/bus/pci/devices/$shadow"; then
		pass "the shadow $shadow was removed by surprise"
	else
		fail "the shadow $shadow stays after the lender was lost"
	fi
	impostor
else
	if [ "$P" = 0 ] && [ $N = 4 ]; then
		# While host1 keeps it, for host3's borrow with no room.
		wait_for tried 3
		echo shared >"$dev/mode" || fail "host0-nvme0 shared while borrowed"
		mark shared
	fi
	if [ "$ntbhw" = switchtec ]; then
		wait_for directtried $pair
		why="borrow of host0-nvme1 by host$pair refused (EBUSY): the direct window"
		if dmesg | grep -q "$why" &&
		   [ -e "/sys/bus/pci/drivers/nvme/$second_bdf" ]; then
			pass "host$pair's second borrow refused and logged, nvme keeps $second_bdf: $(dmesg | grep -o "smartio: $why.*" | tail -n 1)"
		else
			fail "host$pair's second borrow: no log line or $second_bdf lost its driver ($(dmesg | grep smartio: | tail -n 3))"
		fi
		stx_lent_check
	else
		msix_lender_check
	fi
	wait_for returned $pair
	s=/smartio/nodes/host$pair/segments/md5$pair
	echo "host$P" >"$s/attach" || fail "attach md5$pair"
	want_md5=$(sio_segrw "$s/mem" 0 read 32)
	# Issue 12 defect 7: the pair's segments are translated one by one
	# for whoever attached them; its heap window leads nowhere, so a
	# kernel that reads there (md5 included) gets all-ones.
	st=$(cat /sys/kernel/debug/smartio/state)
	hw=$(echo "$st" | sed -n "s/^heap_window host$pair addr=\(0x[0-9a-f]*\) translated=no$/\1/p")
	off=0
	seen=0
	while [ -n "$hw" ] && [ $off -lt $((1 << 20)) ]; do
		[ "$(devmem $((hw + off)) 32)" = 0xFFFFFFFF ] || seen=$((seen + 1))
		off=$((off + 4096))
	done
	if [ "$ntbhw" = switchtec ]; then
		: # window 1 is the direct window there, listed as no heap window
	elif [ -n "$hw" ] && [ $seen = 0 ]; then
		pass "host$pair's heap through the heap window: all-ones on all 256 pages, md5$pair only through its attachment"
	else
		fail "host$pair's heap window ('$hw'): $seen pages read as data"
	fi
	echo "host$P" >"$s/detach" || fail "detach md5$pair"
	nobody() { [ -z "$(cat "$dev/borrow")" ]; }
	waitfor 60 nobody || fail "$dev/borrow still lists '$(cat "$dev/borrow")'"
	[ "$P" = 0 ] && [ $N = 4 ] &&
		{ echo exclusive >"$dev/mode" || fail "exclusive again"; }
	if waitfor 30 test -e "/sys/bus/pci/drivers/nvme/$own_bdf" &&
	   waitfor 30 own_disk; then
		pass "the return gave $own_bdf back to the nvme driver"
	else
		fail "$own_bdf has no driver after the return"
	fi
	got_md5=$(dd if="/dev/$(own_disk)" bs=1M count=$MIB iflag=direct status=none | md5sum | cut -d' ' -f1)
	if [ "$got_md5" = "$want_md5" ]; then
		pass "the lender reads the $MIB MiB host$pair wrote ($got_md5)"
	else
		fail "the lender reads $got_md5, host$pair wrote '$want_md5'"
	fi
	# The device's DMA went through the switch's RAM aliases into the
	# borrower's pages: accesses this port made by callback (forwarded
	# MSI writes, the CPU's messages) stay far below the pages moved.
	if [ "$ntbhw" = switchtec ]; then
		stx_returned_check
	else
		slow=$(($(slow_accesses) - slow0))
		pages=$((2 * MIB * 256))
		if [ "$slow" -lt $((pages / 16)) ]; then
			pass "DMA without a copy: $pages pages moved, $slow accesses of this port by callback (SLOW_ACCESSES)"
		else
			fail "$slow accesses of this port by callback for $pages pages"
		fi
	fi
	mark checked
	[ "$P" = 2 ] && peer_to_peer_lender
	# Until the borrower saw it: it marks bye, or has powered off.
	left() {
		[ -d "/smartio/nodes/host$pair/segments/bye$pair" ] ||
			is "/smartio/nodes/host$pair/state" down
	}
	waitfor 300 left || fail "host$pair did not take its leave"
	[ $N = 2 ] && finish
	drv() { basename "$(readlink "/sys/bus/pci/devices/$own_bdf/driver")"; }
	claimed() { [ "$(drv)" = smartio ]; }
	if [ "$P" = 0 ]; then
		# Borrowed again: this lender powers off under the borrower's I/O.
		waitfor 120 claimed || fail "not borrowed again"
		waitfor 300 [ -d "/smartio/nodes/host$pair/segments/busy$pair" ] ||
			fail "host$pair did not start its I/O"
		finish
	fi
	# Borrowed again, and the borrower powers off: the device comes back.
	if waitfor 120 claimed; then
		waitfor 300 is "/smartio/nodes/host$pair/state" down ||
			fail "host$pair did not go down"
		t0=$(date +%s)
		back() { [ "$(drv)" = nvme ]; }
		if waitfor 30 back; then
			t=$(($(date +%s) - t0))
			[ "$t" -le 3 ] &&
				pass "host$pair powered off: $own_bdf back with nvme in $t s" ||
				fail "host$pair powered off: $own_bdf back only after $t s"
		else
			fail "host$pair powered off: $own_bdf is with '$(drv)'"
		fi
		impostor_refused
	else
		fail "host$pair did not borrow $own_bdf again (driver $(drv))"
	fi
fi
# No barrier of all four at the end: a node that powered off takes its
# step segments with it, so each pair ends on its own, the lender last.
finish
