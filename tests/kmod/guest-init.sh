#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the check-kmod guest: the NVMe driver, then smartio.ko lending
# the guest's NVMe controller (host0) to host1 over the loopback adapter:
# the unmodified nvme driver binds to host1's shadow device, 32 MiB go
# through it and back, and the return gives the device back to nvme.
# Every check prints "PASS: ..." or "FAIL: ..."; "KMOD-END" ends the run.
. /guest-common.sh
mkdir -p /etc
mkdir -p /run
mount -t tmpfs run /run
echo "KMOD-START"

fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { # check WHAT COMMAND...
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() { power_off "KMOD-END fails=$fails"; }
# uptime_cs: hundredths of a second since boot; timing WHAT T0 prints
# a TIMING line (QEMU TCG: figures for comparison, not for speed).
uptime_cs() { tr -d . </proc/uptime | cut -d' ' -f1; }
timing() {
	local t=$(($(uptime_cs) - $2))
	echo "TIMING: $1: $((t / 100)).$((t % 100 / 10))$((t % 10)) s"
}
state=/sys/kernel/debug/smartio/state
fabric=/sys/class/smartio/smartio
# cfg MOUNT OFFSET LENGTH: configuration bytes of nvme0 as that mount's node
# reads them (smartiofs --node), in hex.
cfg() {
	dd if="$1/dev/nvme0/config" bs=1 skip=$(($2)) count="$3" status=none |
		od -An -tx1 | tr -d ' \n'
}

modules_load
bdf=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1b36:0x0010 ] &&
		bdf=$(basename "$d")
done
[ -n "$bdf" ] && pass "QEMU NVMe controller at $bdf" ||
	{ fail "no QEMU NVMe controller"; finish; }
waitfor 30 test -b /dev/nvme0n1
check "nvme driver bound to $bdf, /dev/nvme0n1 present" \
	test -e /sys/bus/pci/drivers/nvme/"$bdf" -a -b /dev/nvme0n1

. /guest-udev.sh
udev_start
# fabric=ntb without smartio_ntb.ko (this guest has no ntb.ko): refused,
# saying what is missing, and nothing left behind for the real load.
ntb_refused() {
	! insmod /smartio.ko fabric=ntb node=0 2>/dev/null &&
		dmesg | grep -q "fabric=ntb needs smartio_ntb.ko loaded" &&
		! grep -q "^smartio " /proc/modules
}
check "insmod smartio.ko fabric=ntb without smartio_ntb.ko is refused" \
	ntb_refused
check "insmod smartio.ko" insmod /smartio.ko
[ -e $state ] || { fail "no $state"; finish; }
cat $state
bar0=$(head -n 1 /sys/bus/pci/devices/"$bdf"/resource | cut -d' ' -f1 |
       sed 's/^0x0*/0x/')
check "host0 lends nvme0 = $bdf with its real BAR 0 ($bar0)" \
	grep -q "^dev nvme0 bdf=$bdf lender=host0 .* bar0=$bar0+" $state
check "both nodes up" \
	test "$(grep -c '^node host[01] id=[01] up refused=0$' $state)" = 2
udev_lender
# --- control through /smartio: smartiofs over the generic netlink family -------
ln -sf /proc/mounts /etc/mtab
mkdir -p /smartio
export LD_LIBRARY_PATH=/lib/smartio
check "smartiofs serves smartio.ko's namespace on /smartio" \
	smartiofs --fabric kernel /smartio
waitfor 10 test -d /smartio/dev/nvme0
check "/smartio: self is host0, nodes host0 and host1, dev/nvme0" \
	test "$(readlink /smartio/self)" = nodes/host0 -a \
	"$(ls /smartio/nodes | tr '\n' ' ')" = "host0 host1 " -a \
	-d /smartio/dev/nvme0
mkdir -p /smartio1
check "a second smartiofs serves host1's view on /smartio1" \
	smartiofs --fabric kernel --node host1 /smartio1
waitfor 10 test -d /smartio1/dev/nvme0
check "/smartio1: self is host1" \
	test "$(readlink /smartio1/self)" = nodes/host1
udev_namespace
# --- following smartio.ko: the fabric device's change uevents -------------------
check "the fabric device $fabric: node host0, a generation" \
	test "$(cat $fabric/node)" = host0 -a "$(cat $fabric/generation)" -ge 0
r1=$(cat $fabric/requests)
sleep 3
r2=$(cat $fabric/requests)
check "two idle smartiofs ask smartio.ko nothing in 3 s ($((r2 - r1)) requests)" \
	test $((r2 - r1)) -le 6
# --- the generic netlink family: who may do what (issue 12, defect 6) ---------
# genl WHO CMD [ATTR=VALUE...]: the rc sio_genl prints for that request sent
# as root, as root with CAP_NET_ADMIN alone (netadmin) or as uid WHO (0, or
# -errno).
genl() {
	local who=$1
	shift
	if [ "$who" = root ]; then
		sio_genl call "$@"
	elif [ "$who" = netadmin ]; then
		sio_genl -n call "$@"
	else
		sio_genl -u "$who" call "$@"
	fi | sed -n 's/^rc=//p'
}
# realcfg OFFSET WIDTH (2 or 4): the real function's register, from sysfs.
realcfg() {
	dd if=/sys/bus/pci/devices/"$bdf"/config bs=1 skip=$(($1)) count="$2" \
		status=none | od -An -tx"$2" | tr -d ' \n'
}
# host0cfg OFFSET: what host0 reads of a dword through the core.
host0cfg() {
	dd if=/smartio/dev/nvme0/config bs=1 skip=$(($1)) count=4 status=none |
		od -An -tx4 | tr -d ' \n'
}
# le32 HEX: the data= bytes of a 32-bit value (little endian).
le32() {
	printf '%02x%02x%02x%02x' $((0x$1 & 255)) $((0x$1 >> 8 & 255)) \
		$((0x$1 >> 16 & 255)) $((0x$1 >> 24 & 255))
}
g0=$(cat $fabric/generation)
check "an unprivileged user reads the registry (REG_READ)" \
	test "$(genl 1000 reg_read off=0 size=64)" = 0
check "and the config header's first 64 bytes" \
	test "$(genl 1000 cfg_read dev=0 node=0 off=0 size=64)" = 0
check "but not config space past them (EPERM)" \
	test "$(genl 1000 cfg_read dev=0 node=0 off=0 size=256)" = -1
check "an unprivileged user cannot lend (EPERM)" \
	test "$(genl 1000 lend dev=0 flags=1 mask=0)" = -1
check "an unprivileged user cannot borrow (EPERM)" \
	test "$(genl 1000 borrow dev=0 node=1)" = -1
check "an unprivileged user cannot write config space (EPERM)" \
	test "$(genl 1000 cfg_write dev=0 node=0 off=0x40 data=00)" = -1
check "an unprivileged user cannot create a segment (EPERM)" \
	test "$(genl 1000 seg_create node=0 name=x)" = -1
check "root with CAP_NET_ADMIN alone cannot lend (EPERM)" \
	test "$(genl netadmin lend dev=0 flags=1 mask=0)" = -1
check "nor borrow (EPERM)" \
	test "$(genl netadmin borrow dev=0 node=1)" = -1
check "nor write config space (EPERM)" \
	test "$(genl netadmin cfg_write dev=0 node=0 off=0x40 data=00)" = -1
check "the refusals changed nothing (generation $g0, nvme keeps $bdf)" \
	test "$(cat $fabric/generation)" = "$g0" -a \
	-e /sys/bus/pci/drivers/nvme/"$bdf"
# Every command the table (lib/core/cmds.h) does not offer: the
# node-to-node ones and multicast.
for c in $(sio_genl not-offered); do
	check "$c, not offered by smartio.ko, as root: EOPNOTSUPP" \
		test "$(genl root $c node=0 dev=0)" = -95
done
check "mcast-create is among those not offered, sriov-set is not" \
	sh -c 'sio_genl not-offered | grep -qx mcast-create &&
		! sio_genl not-offered | grep -qx sriov-set'
check "sriov-set of an NVMe without SR-IOV: EOPNOTSUPP; without CAP_SYS_ADMIN: EPERM" \
	test "$(genl root sriov-set dev=0 size=1)" = -95 -a \
	"$(genl netadmin sriov-set dev=0 size=1)" = -1
check "a sized DMA window (borrow size=) answers EOPNOTSUPP" \
	test "$(genl root borrow dev=0 node=1 size=0x100000)" = -95
check "an attribute the command does not take is refused (EINVAL)" \
	test "$(genl root reg_read off=0 size=0 node=1)" = -22
check "an unknown attribute type is refused (EINVAL)" \
	test "$(genl root borrow dev=0 node=1 30=1)" = -22
check "the refused requests changed nothing either" \
	test "$(cat $fabric/generation)" = "$g0" -a \
	-e /sys/bus/pci/drivers/nvme/"$bdf"
# Config writes to BARs, ROM and command register never reach the device.
rbar0=$(realcfg 0x10 4)
rcmd=$(realcfg 0x04 2)
rrom=$(realcfg 0x30 4)
set -- $(head -n 1 /sys/bus/pci/devices/"$bdf"/resource)
bsize=$(($2 - $1 + 1))
check "root's config write of BAR 0 answers 0 (emulated)" \
	test "$(genl root cfg_write dev=0 node=0 off=0x10 data=ffffffff)" = 0
check "the real BAR 0 is unchanged ($rbar0)" test "$(realcfg 0x10 4)" = "$rbar0"
want=$(printf '%08x' $(( (0xffffffff & ~(bsize - 1)) | (0x$rbar0 & 15) )))
check "host0 reads BAR 0's size mask back ($(host0cfg 0x10), want $want)" \
	test "$(host0cfg 0x10)" = "$want"
genl root cfg_write dev=0 node=0 off=0x10 data=$(le32 "$rbar0") >/dev/null
check "writing the address back restores host0's view of BAR 0" \
	test "$(host0cfg 0x10)" = "$rbar0"
check "root's config write of the ROM BAR answers 0, the ROM is unchanged" \
	test "$(genl root cfg_write dev=0 node=0 off=0x30 data=01f0ffff)" = 0 \
	-a "$(realcfg 0x30 4)" = "$rrom"
# Memory decode off, SERR and parity on: none of it reaches the device.
ncmd=$(printf '%04x' $(( (0x$rcmd & ~2) | 0x140 )))
check "root's write of the command register ($rcmd -> $ncmd) answers 0" \
	test "$(genl root cfg_write dev=0 node=0 off=4 \
		data=$(printf '%02x%02x' $((0x$ncmd & 255)) $((0x$ncmd >> 8))))" = 0
check "the real command register keeps its decode, no SERR/parity ($(realcfg 4 2))" \
	test "$(realcfg 0x04 2)" = "$rcmd"
genl root cfg_write dev=0 node=0 off=4 \
	data=$(printf '%02x%02x' $((0x$rcmd & 255)) $((0x$rcmd >> 8))) >/dev/null
# viewcfg MOUNT OFFSET WIDTH: a register as that mount's node reads it.
viewcfg() {
	dd if="$1/dev/nvme0/config" bs=1 skip=$(($2)) count="$3" status=none |
		od -An -tx"$3" | tr -d ' \n'
}
# capof ID: the offset of standard capability ID in the real function's
# list (0: none).
capof() {
	local pos=$((0x$(realcfg 0x34 1) & 0xfc)) hops=0
	while [ $pos -ge 64 ] && [ $hops -lt 48 ]; do
		[ $((0x$(realcfg $pos 1))) = $(($1)) ] && { echo $pos; return; }
		pos=$((0x$(realcfg $((pos + 1)) 1) & 0xfc))
		hops=$((hops + 1))
	done
	echo 0
}
# Power state, capability headers: what a guest of VFIO may not change.
pm=$(capof 0x01)
exp=$(capof 0x10)
check "the function has power management ($pm) and an FLR-capable PCIe capability ($exp)" \
	test "$pm" -gt 0 -a "$exp" -gt 0 -a \
	$((0x$(realcfg $((exp + 4)) 4) >> 28 & 1)) = 1
rpm=$(realcfg $((pm + 4)) 2)
check "root's write of D3hot into PMCSR answers 0 (emulated)" \
	test "$(genl root cfg_write dev=0 node=0 off=$((pm + 4)) data=0300)" = 0
check "the real function stays in D0 ($(realcfg $((pm + 4)) 2))" \
	test $((0x$(realcfg $((pm + 4)) 2) & 3)) = 0
check "host0 reads D3hot back ($(viewcfg /smartio $((pm + 4)) 2))" \
	test $((0x$(viewcfg /smartio $((pm + 4)) 2) & 3)) = 3
genl root cfg_write dev=0 node=0 off=$((pm + 4)) data=0000 >/dev/null
check "and D0 once written back" \
	test "$(viewcfg /smartio $((pm + 4)) 2)" = "$rpm"
hdr=$(realcfg "$pm" 2)
check "a write of the PM capability's id and next pointer answers 0" \
	test "$(genl root cfg_write dev=0 node=0 off=$pm data=ffff)" = 0
check "the header keeps its id and pointer, real ($(realcfg "$pm" 2)) and seen" \
	test "$(realcfg "$pm" 2)" = "$hdr" -a \
	"$(viewcfg /smartio "$pm" 2)" = "$hdr"
check "the nvme driver still reads its drive after the config writes" \
	dd if=/dev/nvme0n1 of=/dev/null bs=4k count=16 iflag=direct status=none
g1=$(cat $fabric/generation)
# A reader parked on host1's events file, woken by the borrow's uevent.
grep -m 1 " borrow " /smartio1/events >/tmp/ev1 &
# errno_is ERRNO-TEXT FILE VALUE: the write fails with that error.
errno_is() { sh -c "echo $3 > $2" 2>&1 | grep -q "$1"; }
# --- issue 12 defect 5: a refused borrow leaves the lender's device alone -----
# untouched: nvme still drives $bdf, /dev/nvme0n1 has its dev_t, nothing
# probed or claimed it since, and a random block the snapshot wrote into
# the drive's last 4 KiB reads back.  The filesystem made below leaves that
# block out: the kernel rewrites the blocks of a mounted one (its
# superblock among them) whenever it likes, so they prove nothing.
blkid_of() { stat -c %t:%T /dev/nvme0n1; }
probes() { dmesg | grep -c -e "pci function $bdf" -e "claimed for lending"; }
last4k=$(($(cat /sys/block/nvme0n1/size) / 8 - 1))
tail4k() {
	dd if=/dev/nvme0n1 bs=4k skip=$last4k count=1 iflag=direct status=none |
		md5sum
}
# same WHAT BEFORE NOW: equal, or says what changed.
same() {
	[ "$2" = "$3" ] && return 0
	echo "changed since the snapshot: $1 '$2' -> '$3'"
	return 1
}
untouched_since() { # untouched_since: compares with the last snapshot
	same driver nvme "$(basename "$(readlink /sys/bus/pci/devices/$bdf/driver)")" &&
		same dev_t "$blk0" "$(blkid_of)" &&
		same "probe lines" "$probes0" "$(probes)" &&
		same "last 4 KiB" "$tail0" "$(tail4k)"
}
snapshot() {
	head -c 4096 /dev/urandom |
		dd of=/dev/nvme0n1 bs=4k seek=$last4k oflag=direct conv=notrunc status=none
	blk0=$(blkid_of)
	probes0=$(probes)
	tail0=$(tail4k)
}
snapshot
check "nvme0's lend policy is none at first" \
	test "$(cat /smartio/dev/nvme0/lend)" = none
check "a borrow under policy none is refused (EACCES)" \
	errno_is "Permission denied" /smartio/dev/nvme0/borrow host1
check "the refused borrow left nvme0 alone (driver, dev_t $blk0, no probe, data)" \
	untouched_since
check "echo all > /smartio/dev/nvme0/lend" \
	sh -c "echo all > /smartio/dev/nvme0/lend"
check "host0 cannot borrow its own device (EINVAL)" \
	errno_is "Invalid argument" /smartio/dev/nvme0/borrow host0
# In use on the lender: open, then mounted.  udev's probe of the new
# filesystem opens the disk too: settle before each borrow.
sleep 600 </dev/nvme0n1 &
opener=$!
waitfor 10 sh -c "readlink /proc/$opener/fd/0 | grep -q nvme0n1"
settle
check "a borrow of nvme0 while a process holds /dev/nvme0n1 open is EBUSY" \
	errno_is "busy" /smartio/dev/nvme0/borrow host1
kill $opener
wait $opener 2>/dev/null
mkdir -p /mnt
check "an ext2 filesystem on host0's /dev/nvme0n1 mounts, a file on it" \
	sh -c "mke2fs -F /dev/nvme0n1 $((last4k * 4)) >/dev/null && mount -t ext2 /dev/nvme0n1 /mnt &&
	       echo lender-data > /mnt/f && sync"
settle
snapshot
check "a borrow of nvme0 with its filesystem mounted is refused (EBUSY)" \
	errno_is "busy" /smartio/dev/nvme0/borrow host1
fs_untouched() {
	untouched_since && same /mnt/f lender-data "$(cat /mnt/f)" &&
		same "borrow list" "" "$(cat /smartio/dev/nvme0/borrow)" &&
		same "borrow lines in $state" 0 "$(grep -c '^borrow ' $state)"
}
check "the refused borrow left nvme0 and its mounted filesystem alone" \
	fs_untouched
check "force_busy=1: the operator lets the next borrow take it" \
	sh -c "echo 1 > /sys/module/smartio/parameters/force_busy"
check "the forced borrow takes nvme0 from under its mounted filesystem" \
	sh -c "echo host1 > /smartio/dev/nvme0/borrow"
echo 0 >/sys/module/smartio/parameters/force_busy
check "the forced borrow is logged as taken from its users" \
	sh -c "dmesg | grep -q 'in use here, taken from its users'"
# The lender's filesystem lost its disk: unmount what is left of it.  On
# one machine the shadow's controller joins the NVMe subsystem the stale
# disk still holds, so its namespace stays away: return, and borrow anew.
umount /mnt 2>/dev/null || umount -l /mnt
forced_returned() {
	sh -c "echo host1 > /smartio/dev/nvme0/return" &&
		waitfor 60 test -e /sys/bus/pci/drivers/nvme/"$bdf"
}
check "host1 returns the forced borrow, nvme gets the real function back" \
	forced_returned
waitfor 60 sh -c "test -b /dev/\$(ls /sys/bus/pci/devices/$bdf/nvme)n1"
settle
# A BAR an earlier config write sized is not what the next borrower sees.
genl root cfg_write dev=0 node=0 off=0x10 data=ffffffff >/dev/null
check "before the borrow, host0 reads BAR 0 as written ($(host0cfg 0x10))" \
	test "$(host0cfg 0x10)" != "$rbar0"
check "echo host1 > /smartio/dev/nvme0/borrow" \
	sh -c "echo host1 > /smartio/dev/nvme0/borrow"
check "the borrow starts from the real BAR 0 ($(host0cfg 0x10) = $rbar0)" \
	test "$(host0cfg 0x10)" = "$rbar0"
check "/smartio/dev/nvme0/borrow lists host1" \
	test "$(cat /smartio/dev/nvme0/borrow)" = host1
check "the borrow moved the generation ($g1 -> $(cat $fabric/generation))" \
	test "$(cat $fabric/generation)" -gt "$g1"
waitfor 5 test -L /smartio1/nodes/host1/borrowed/nvme0
waitfor 3 test -s /tmp/ev1
check "host1's parked events reader gets the borrow: $(cat /tmp/ev1)" \
	grep -q " borrow dev/nvme0 node=host1" /tmp/ev1
check "host1's smartiofs shows the borrow (nodes/host1/borrowed/nvme0)" \
	test -L /smartio1/nodes/host1/borrowed/nvme0
cat $state
shadow=5100:${bdf#*:}
check "a second borrow by host1 is refused (EBUSY)" \
	errno_is "busy" /smartio/dev/nvme0/borrow host1
check "host1's BAR 0 window slot leads to the real BAR 0" \
	grep -q "^borrow nvme0 by=host1 bar0=0x[0-9a-f]*->host0:$bar0 " $state
check "the lender's DMA window leads to host1's IOVA range" \
	grep -q " dma=0x[0-9a-f]*->host1:0x100000000 " $state
check "the lender's MSI window leads to host1's interrupt range" \
	grep -q " msi=0x[0-9a-f]*->host1:0xfee00000 " $state
check "host1 reads the real vendor/device id through the core" \
	test "$(cfg /smartio1 0 4)" = 361b1000
pin0=$(cfg /smartio 0x3d 1)
check "host0 sees the interrupt pin ($pin0), host1 none" \
	test "$pin0" = 01 -a "$(cfg /smartio1 0x3d 1)" = 00
check "borrow survives a failed second attempt (shadow still there)" \
	test -d /sys/bus/pci/devices/$shadow
udev_borrowed

# --- the data path: the unmodified nvme driver on the shadow ------------------
waitfor 60 test -e /sys/bus/pci/drivers/nvme/$shadow
check "the nvme driver binds to the shadow $shadow" \
	test -e /sys/bus/pci/drivers/nvme/$shadow
check "the real function is smartio's while lent" \
	test -e /sys/bus/pci/drivers/smartio/"$bdf"
ctrl=$(ls /sys/bus/pci/devices/$shadow/nvme 2>/dev/null | head -n 1)
blk=${ctrl}n1
waitfor 60 test -b /dev/$blk
check "the shadow's namespace /dev/$blk appears" test -b /dev/$blk
udev_borrowed_disk $blk
check "host1's write of D3hot into PMCSR answers 0 (emulated)" \
	test "$(genl root cfg_write dev=0 node=1 off=$((pm + 4)) data=0300)" = 0
check "the real function stays in D0 under host1's driver" \
	test $((0x$(realcfg $((pm + 4)) 2) & 3)) = 0
check "host1 reads D3hot back ($(viewcfg /smartio1 $((pm + 4)) 2))" \
	test $((0x$(viewcfg /smartio1 $((pm + 4)) 2) & 3)) = 3
genl root cfg_write dev=0 node=1 off=$((pm + 4)) data=0000 >/dev/null
dd if=/dev/urandom of=/tmp/pattern bs=1M count=32 status=none
echo "PATTERN-MD5 $(md5sum </tmp/pattern | cut -d' ' -f1)"
t0=$(uptime_cs)
check "32 MiB written through the shadow (O_DIRECT)" \
	dd if=/tmp/pattern of=/dev/$blk bs=1M count=32 oflag=direct \
	conv=fsync status=none
timing "32 MiB written through the shadow" "$t0"
echo 3 >/proc/sys/vm/drop_caches
t0=$(uptime_cs)
check "32 MiB read back through the shadow (O_DIRECT)" \
	dd if=/dev/$blk of=/tmp/back bs=1M count=32 iflag=direct status=none
timing "32 MiB read through the shadow" "$t0"
check "the data read back is the data written" cmp /tmp/pattern /tmp/back
rm -f /tmp/back
cat $state
check "the shadow's DMA went through smartio's DMA API into the window" \
	grep -q "^shadow $shadow of $bdf dma_window=0x100000000+0x4000000 mapped=[0-9]* maps=[1-9]" $state
irqs=$(grep "$ctrl" /proc/interrupts | awk '{ n += $2 } END { print n + 0 }')
check "the shadow's MSI-X vectors fired ($irqs interrupts)" test "$irqs" -gt 0
check "through VT-d interrupt remapping (IR-PCI-MSI)" \
	sh -c "grep '$ctrl' /proc/interrupts | grep -q IR-PCI-MSI"
grep "$ctrl" /proc/interrupts

# --- return: hot-remove, the lender's driver takes the device back -------------
check "echo host1 > /smartio/dev/nvme0/return" \
	sh -c "echo host1 > /smartio/dev/nvme0/return"
check "/smartio/dev/nvme0/borrow is empty again" \
	test -z "$(cat /smartio/dev/nvme0/borrow)"
check "the shadow is hot-removed" test ! -e /sys/bus/pci/devices/$shadow
check "no borrow left after the return" eval "! grep -q '^borrow ' $state"
udev_returned
waitfor 60 test -e /sys/bus/pci/drivers/nvme/"$bdf"
check "the nvme driver has the real function again" \
	test -e /sys/bus/pci/drivers/nvme/"$bdf"
rctrl=$(ls /sys/bus/pci/devices/"$bdf"/nvme 2>/dev/null | head -n 1)
waitfor 60 test -b /dev/${rctrl}n1
t0=$(uptime_cs)
dd if=/dev/${rctrl}n1 of=/tmp/back bs=1M count=32 iflag=direct status=none
timing "32 MiB read on the lender (the real function, no shadow)" "$t0"
check "the lender reads what the borrower wrote" cmp /tmp/back /tmp/pattern
rm -f /tmp/back

# --- the lender's reclaim, and unloading while the device is lent ---------------
# borrowed_again WHAT: host1 borrows nvme0 once more and nvme binds the shadow.
borrowed_again() {
	settle
	sh -c "echo host1 > /smartio/dev/nvme0/borrow" &&
		waitfor 60 test -e /sys/bus/pci/drivers/nvme/$shadow
}
check "host1 borrows nvme0 again, nvme binds the shadow" borrowed_again
check "echo 1 > /smartio/dev/nvme0/reclaim" \
	sh -c "echo 1 > /smartio/dev/nvme0/reclaim"
check "the reclaim hot-removes the shadow and ends the borrow" \
	test ! -e /sys/bus/pci/devices/$shadow -a \
	-z "$(cat /smartio/dev/nvme0/borrow)" -a \
	! -e /sys/class/smartio/sio-host1-nvme0
waitfor 60 test -e /sys/bus/pci/drivers/nvme/"$bdf"
check "after the reclaim the nvme driver has the real function again" \
	test -e /sys/bus/pci/drivers/nvme/"$bdf"
check "host1 borrows nvme0 a third time" borrowed_again
check "rmmod smartio is refused while nvme0 is lent" \
	eval "! rmmod smartio 2>/dev/null"
ctrl3=$(ls /sys/bus/pci/devices/$shadow/nvme 2>/dev/null | head -n 1)
waitfor 30 test -b /dev/${ctrl3}n1
check "the shadow still works (its first 4 KiB are the pattern's)" \
	test "$(dd if=/dev/${ctrl3}n1 bs=4k count=1 iflag=direct status=none |
		md5sum)" = "$(head -c 4096 /tmp/pattern | md5sum)"
# A reset of the shadow: host1's PCI core writes FLR into Device Control.
check "host1 resets the shadow (its PCI core's FLR, through the core)" \
	sh -c "echo 1 > /sys/bus/pci/devices/$shadow/reset"
check "the lender performed the FLR, the function's state saved and restored" \
	sh -c "dmesg | grep -q 'function level reset written to Device Control done by the lender'"
check "the real BAR 0 keeps the lender's address ($(realcfg 0x10 4) = $rbar0)" \
	test "$(realcfg 0x10 4)" = "$rbar0"
check "the real command register still decodes memory ($(realcfg 4 2))" \
	test $((0x$(realcfg 4 2) & 2)) = 2
check "Device Control's FLR bit reads 0 on host1" \
	test $((0x$(viewcfg /smartio1 $((exp + 8)) 2) >> 15)) = 0
shadow_reads() {
	test "$(dd if=/dev/${ctrl3}n1 bs=4k count=1 iflag=direct status=none |
		md5sum)" = "$(head -c 4096 /tmp/pattern | md5sum)"
}
waitfor 60 shadow_reads
check "the shadow reads its drive after the reset" shadow_reads
check "echo host1 > return once more" \
	sh -c "echo host1 > /smartio/dev/nvme0/return"
waitfor 60 test -e /sys/bus/pci/drivers/nvme/"$bdf"
# --- kernel lockdown: LOCKDOWN_PCI_ACCESS stops root handing devices out ------
# (lockdown= on the command line would refuse the unsigned smartio.ko, so
# the guest locks itself down now; it cannot be undone, hence last.)
mkdir -p /sys/kernel/security
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
if echo integrity 2>/dev/null >/sys/kernel/security/lockdown; then
	check "locked down, root cannot borrow (EPERM)" \
		test "$(genl root borrow dev=0 node=1)" = -1
	check "locked down, root cannot lend (EPERM)" \
		test "$(genl root lend dev=0 flags=1 mask=0)" = -1
	check "locked down, root cannot write config space (EPERM)" \
		test "$(genl root cfg_write dev=0 node=0 off=0x40 data=00)" = -1
	rc=$(genl root return dev=0 node=1)
	check "locked down, a return is still allowed (rc $rc, not EPERM)" \
		test -n "$rc" -a "$rc" != -1
	check "locked down, queries still work" \
		test "$(genl 1000 reg_read off=0 size=64)" = 0
else
	echo "SKIP: lockdown: the kernel has no /sys/kernel/security/lockdown"
fi
check "smartiofs unmounts" umount /smartio
check "the second smartiofs unmounts" umount /smartio1
check "rmmod smartio" rmmod smartio
check "the nvme driver keeps the real function" \
	test -e /sys/bus/pci/drivers/nvme/"$bdf"
udev_unloaded
finish
