#!/bin/busybox sh
# /init of the check-kmod guest: the NVMe driver, then smartio.ko lending
# the guest's NVMe controller (host0) to host1 over the loopback adapter:
# the unmodified nvme driver binds to host1's shadow device, 32 MiB go
# through it and back, and the return gives the device back to nvme.
# Every check prints "PASS: ..." or "FAIL: ..."; "KMOD-END" ends the run.
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp /etc
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /run
mount -t tmpfs run /run
echo "KMOD-START"
. /guest-common.sh

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

for m in $(cat /modules/order); do
	insmod "$m" 2>/dev/null
done
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
check "insmod smartio.ko" insmod /smartio.ko
[ -e $state ] || { fail "no $state"; finish; }
cat $state
bar0=$(head -n 1 /sys/bus/pci/devices/"$bdf"/resource | cut -d' ' -f1 |
       sed 's/^0x0*/0x/')
check "host0 lends nvme0 = $bdf with its real BAR 0 ($bar0)" \
	grep -q "^dev nvme0 bdf=$bdf lender=host0 .* bar0=$bar0+" $state
check "both nodes up" \
	test "$(grep -c '^node host[01] id=[01] up$' $state)" = 2
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
g1=$(cat $fabric/generation)
# A reader parked on host1's events file, woken by the borrow's uevent.
grep -m 1 " borrow " /smartio1/events >/tmp/ev1 &
# errno_is ERRNO-TEXT FILE VALUE: the write fails with that error.
errno_is() { sh -c "echo $3 > $2" 2>&1 | grep -q "$1"; }
check "echo all > /smartio/dev/nvme0/lend" \
	sh -c "echo all > /smartio/dev/nvme0/lend"
check "host0 cannot borrow its own device (EINVAL)" \
	errno_is "Invalid argument" /smartio/dev/nvme0/borrow host0
check "echo host1 > /smartio/dev/nvme0/borrow" \
	sh -c "echo host1 > /smartio/dev/nvme0/borrow"
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
check "echo host1 > return once more" \
	sh -c "echo host1 > /smartio/dev/nvme0/return"
waitfor 60 test -e /sys/bus/pci/drivers/nvme/"$bdf"
check "smartiofs unmounts" umount /smartio
check "the second smartiofs unmounts" umount /smartio1
check "rmmod smartio" rmmod smartio
check "the nvme driver keeps the real function" \
	test -e /sys/bus/pci/drivers/nvme/"$bdf"
udev_unloaded
finish
