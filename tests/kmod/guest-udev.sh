# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by guest-init.sh (busybox sh): smartio.ko's class devices,
# /dev/smartio character devices and udev/60-smartio.rules under a real
# systemd-udevd.  Uses guest-init.sh's check, pass, fail and waitfor.
#   udev_start         before insmod smartio.ko
#   udev_lender        after insmod: host0's names, mmap and read() of a BAR
#   udev_namespace     with /smartio mounted: bar0 and a segment's mem are
#                      links to smartio.ko's character devices
#   udev_borrowed      after the borrow: host1's names, the shadow's tags
#   udev_returned      after the return: host1's names gone, mappings revoked
# NVMe registers read through the BARs: VS (offset 8) is 1.4 on QEMU 7.2.
nvme_vs=0x00010400

# no_oops: the kernel log holds no BUG, oops or warning.
no_oops() { ! dmesg | grep -qE 'BUG:|Oops|WARNING:|Call Trace'; }

# settle: waits until udevd has handled every event so far.
settle() { udevadm settle --timeout=60; }

udev_start() {
	mkdir -p /run/udev /etc/udev/rules.d
	cp /udev/*.rules /etc/udev/rules.d/
	check "systemd-udevd starts" \
		/lib/systemd/systemd-udevd --daemon --resolve-names=never
	waitfor 10 test -S /run/udev/control
}

# dword FILE OFFSET: a BAR's dword through read() (od prints it).
dword() {
	dd if="$1" bs=4 skip=$(($2 / 4)) count=1 status=none |
		od -A n -t x4 | tr -d ' ' | sed 's/^/0x/'
}

udev_lender() {
	settle
	check "class smartio has host0's view of nvme0 (lender, $bdf)" \
		test "$(cat /sys/class/smartio/sio-host0-nvme0/role)" = lender -a \
		"$(cat /sys/class/smartio/sio-host0-nvme0/bdf)" = "$bdf"
	l=/dev/smartio/host0/nvme0/bar0
	check "udev names host0's BAR 0 $l" test -L $l -a -c $l
	check "$l is a 0600 character device" \
		test "$(stat -L -c %a $l)" = 600
	v=$(sio_mmap $l 8)
	check "mmap of $l reads the controller's version ($v)" \
		test "$v" = $nvme_vs
	check "read() of $l agrees" test "$(dword $l 8)" = $nvme_vs
	# Issue 12 defect 4: a MAP_PRIVATE mapping of a BAR is copy-on-write
	# over PFNs, whose first touch BUGs in vmf_insert_pfn_prot.
	check "MAP_PRIVATE of BAR $l is refused (EINVAL)" \
		test "$(sio_mmap -p $l 2>&1)" = "refused EINVAL"
	check "a read-only MAP_SHARED of $l works, mprotect cannot make it writable" \
		test "$(sio_mmap -r $l 8)" = $nvme_vs
	check "no kernel BUG or oops after the MAP_PRIVATE attempt" no_oops
	cap0=$(sio_mmap $l 0)
}

udev_namespace() {
	check "/smartio/dev/nvme0/bar0 -> /dev/smartio/host0/nvme0/bar0" \
		test "$(readlink /smartio/dev/nvme0/bar0)" = \
		/dev/smartio/host0/nvme0/bar0
	check "mmap of /smartio/dev/nvme0/bar0 reads the controller's version" \
		test "$(sio_mmap /smartio/dev/nvme0/bar0 8)" = $nvme_vs
	sd=/smartio/self/segments/buf
	check "a 1 MiB segment of host0 (mkdir, echo 1M > size)" \
		sh -c "mkdir $sd && echo 1M > $sd/size"
	settle
	s=/dev/smartio/host0/seg/buf
	check "udev names its memory $s (1048576 bytes)" \
		test -L $s -a -c $s -a \
		"$(cat /sys/class/smartio/sio-host0-seg-buf/size)" = 1048576
	check "$sd/mem -> $s" test "$(readlink $sd/mem)" = $s
	dd if=/dev/urandom of=/tmp/segpat bs=64k count=16 status=none
	check "1 MiB written through $sd/mem reads back through $s" \
		sh -c "dd if=/tmp/segpat of=$sd/mem bs=64k conv=notrunc \
		       status=none && cmp $s /tmp/segpat"
	check "mmap of $s sees the data (first dword $(dword /tmp/segpat 0))" \
		test "$(sio_mmap $s 0)" = "$(dword /tmp/segpat 0)" -a \
		"$(sio_mmap $s 4092)" = "$(dword /tmp/segpat 4092)"
	check "MAP_PRIVATE of segment $s is refused (EINVAL)" \
		test "$(sio_mmap -p $s 2>&1)" = "refused EINVAL"
	check "no kernel BUG or oops after it" no_oops
	rm -f /tmp/segdone
	(sio_mmap $s 0 /tmp/segdone >/tmp/seg.out 2>&1; echo $? >/tmp/seg.st) &
	waitfor 10 test -s /tmp/seg.out
	check "rmdir $sd destroys the segment" rmdir $sd
	settle
	touch /tmp/segdone
	waitfor 10 test -s /tmp/seg.st
	check "its name and device are gone, a mapping held across is revoked" \
		test ! -e $s -a ! -e /sys/class/smartio/sio-host0-seg-buf -a \
		"$(cat /tmp/seg.st)" = 135
}

udev_borrowed() {
	settle
	b=/dev/smartio/host1/nvme0/bar0
	check "the borrow hot-adds host1's view with uevents (udev names $b)" \
		test -L $b -a -c $b
	check "host1's view is a borrower's, lent by host0" \
		test "$(cat /sys/class/smartio/sio-host1-nvme0/role)" = borrower \
		-a "$(cat /sys/class/smartio/sio-host1-nvme0/lender)" = host0
	check "mmap of host1's BAR 0 reaches the same registers (CAP, VS)" \
		test "$(sio_mmap $b 0)" = "$cap0" -a \
		"$(sio_mmap $b 8)" = $nvme_vs
	check "the shadow's PCI root bus hangs below host1's view" \
		sh -c "readlink -f /sys/bus/pci/devices/$shadow |
		       grep -q /sio-host1-nvme0/pci"
	info=$(udevadm info -q property /sys/bus/pci/devices/$shadow)
	check "udev tags the shadow $shadow with its lender (SMARTIO_LENDER=host0)" \
		sh -c "echo '$info' | grep -qx SMARTIO_LENDER=host0 &&
		       echo '$info' | grep -qx SMARTIO_SHADOW=1 &&
		       echo '$info' | grep -q '^TAGS=.*:smartio:'"
	check "the example rule logged the borrow" \
		grep -q "^borrowed nvme0 from host0$" /run/smartio/borrowed
	check "the real function carries no lender tag" \
		sh -c "! udevadm info -q property /sys/bus/pci/devices/$bdf |
		       grep -q SMARTIO_LENDER"
	# A mapping held across the return: it must die there.
	rm -f /tmp/returned
	(sio_mmap $b 8 /tmp/returned >/tmp/held.out 2>&1; echo $? >/tmp/held.st) &
	waitfor 10 test -s /tmp/held.out
}

udev_borrowed_disk() { # after the shadow's namespace $1 appeared
	settle
	check "udev names the borrowed disk /dev/smartio/host1/nvme0/$1" \
		test -L /dev/smartio/host1/nvme0/$1 -a -b /dev/smartio/host1/nvme0/$1
	check "the borrowed disk carries SMARTIO_LENDER=host0" \
		sh -c "udevadm info -q property /dev/$1 | grep -qx SMARTIO_LENDER=host0"
}

udev_returned() {
	settle
	check "the return removes /dev/smartio/host1 names" \
		test ! -e /dev/smartio/host1/nvme0/bar0 -a \
		-z "$(ls /dev/smartio/host1/nvme0 2>/dev/null)"
	check "host1's view is gone from class smartio" \
		test ! -e /sys/class/smartio/sio-host1-nvme0
	touch /tmp/returned
	waitfor 10 test -s /tmp/held.st
	check "a mapping of host1's BAR held across the return is revoked (SIGBUS)" \
		test "$(cat /tmp/held.st)" = 135 -a \
		"$(head -n 1 /tmp/held.out)" = $nvme_vs
	check "host0's BAR is still there and mapped" \
		test "$(sio_mmap /dev/smartio/host0/nvme0/bar0 8)" = $nvme_vs
	check "the example rule logged the return" \
		grep -q "^returned nvme0 to host0$" /run/smartio/borrowed
}

udev_unloaded() {
	settle
	check "rmmod removes every /dev/smartio name and class smartio" \
		test -z "$(find /dev/smartio -type l 2>/dev/null)" -a \
		! -e /sys/class/smartio
}
