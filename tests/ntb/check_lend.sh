#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-ntb, the lending part: four QEMU guests, each with a QEMU NVMe
# behind intel-iommu, on one 4-port smartio-ntb-switch with 1 GiB windows
# (single look-up-table entries of 128 MiB, ntb_sioswitch lut_mws=1) form
# one smartio cluster, and smartio.ko lends devices between them:
# host1 borrows host0's NVMe and host3 host2's at the same time, the
# unmodified nvme driver binds each shadow, 64 MiB go through it with
# O_DIRECT and come back, and the lender reads them after the return;
# contrib/nvme's userspace driver on host1 has host0's NVMe read blocks
# into a segment of host3, and NVMe controllers read blocks straight into
# another NVMe's CMB in SmartIO 4.4's three cases (B on a third machine,
# on the asker, on A's own lender: host3's second NVMe); udev/*.rules
# under systemd-udevd name the borrowers' hot-added disks
# (tests/ntb/lend-init.sh).
#
# NTB_HW=switchtec runs the same guest script (lend-init.sh, swhw=switchtec)
# on two partitions of the Switchtec model (switchtec-nt, contrib/qemu)
# under the unmodified switchtec.ko and ntb_hw_switchtec.ko with LUT
# windows: host1 borrows host0's NVMe with what that chip changes (64 KiB
# entries, the DMA window on the direct window BAR 4, the NVMe's
# requester id in host0's requester-id table while lent); the parts that
# need four nodes or smartio-ntb-port's counters are left out there.
#
# Environment: SRCDIR, BUILDDIR (set by make), KVER, LINUX_SOURCE (see
# build.sh), NTB_TIMEOUT (seconds per guest, default 1800), NTB_KEEP=1
# keeps the work directory, NTBSW_OUT (see check_switch.sh), NTB_HW
# (sioswitch or switchtec).  Exit 77 when qemu, busybox-static, cpio,
# udev, the kernel image, headers or source are missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-1800}
hw=${NTB_HW:-sioswitch}
N=4
[ "$hw" = switchtec ] && N=2

skip() { echo "SKIP: check-ntb (lending): $*"; exit 77; }
. "$src/tests/kmod/guest-lib.sh"
. "$src/tests/ntb/switch-lib.sh"
sw_prepare
sw_smartio_build

mkdir -p "$tmp/root/bin"
# Whether a device's DMA lands while a read is pending (ID protection).
${CC:-cc} -static -O2 -std=c11 -Wall -Wextra -Werror \
	-o "$tmp/root/bin/sio_dmacanary" "$src/tests/ntb/sio_dmacanary.c" \
	>"$tmp/cc-canary.log" 2>&1 || { cat "$tmp/cc-canary.log"; exit 1; }
# The generic netlink client of check-kmod: requests as another user.
${CC:-cc} -static -O2 -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror \
	-I"$src/lib/core" -o "$tmp/root/bin/sio_genl" "$src/tests/kmod/sio_genl.c" \
	>"$tmp/cc-genl.log" 2>&1 || { cat "$tmp/cc-genl.log"; exit 1; }
# The userspace NVMe driver, static as sio_segrw (no C library in there).
${CC:-cc} -static -O2 -std=c11 -Wall -Wextra -Werror \
	-o "$tmp/root/bin/smartio-nvme" "$src/contrib/nvme/smartio-nvme.c" \
	"$src/contrib/nvme/sfiles.c" "$src/contrib/nvme/nvmeq_queue.c" \
	>"$tmp/cc-nvme.log" 2>&1 || { cat "$tmp/cc-nvme.log"; exit 1; }
guest_root "$tmp/root" "$src/tests/ntb/lend-init.sh" "$out/smartio/smartio.ko" \
	"$sfs" "$KVER" || skip "modprobe cannot resolve nvme for $KVER"
if [ "$hw" = switchtec ]; then
	cp "$out/ntb.ko" "$out/switchtec.ko" "$out/ntb_hw_switchtec.ko" \
		"$tmp/root/"
else
	cp "$out/ntb.ko" "$out/ntb_sioswitch.ko" "$tmp/root/"
fi
sw_smartio_root "$tmp/root"
# systemd-udevd (udevadm under another name) and the project's rules, for
# the borrowers: the hot-added disk gets its /dev/smartio name.
udevadm=$(command -v udevadm) || skip "no udevadm (apt-get install udev)"
mkdir -p "$tmp/root/udev" "$tmp/root/lib/systemd"
cp "$src"/udev/*.rules "$tmp/root/udev/"
cp -L "$udevadm" "$tmp/root/bin/udevadm"
ln -s /bin/udevadm "$tmp/root/lib/systemd/systemd-udevd"
guest_libs "$tmp/root" "$udevadm"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

if [ "$hw" = switchtec ]; then
	# BAR 4, the direct window a DMA window takes, covers a guest's
	# 256 MiB of RAM; BAR 2 holds the 32 LUT entries of 64 KiB and the
	# message window.
	SW_DEVICE=switchtec-nt
	# ID protection on: a request whose requester id is not in the
	# sender partition's table is refused (the model checks every DMA
	# access of the guest's devices by its requester, and MSI writes).
	SW_SWITCH_ARGS="-x switchtec,luts=32,rids=32,bar2=4M,bar4=256M,idprot=1"
	sw_start $N
else
	sw_start $N 1G
fi
# The lender's device gets an IOMMU domain of its own (intel-iommu); the
# NTB functions stay in identity mode, since the switch's RAM aliases
# bypass the receiving guest's IOMMU.  Interrupt remapping is on: the
# borrower remaps the shadow's MSI-X as its NTB function's, the source
# they arrive with.
# no_timer_check: under TCG on a loaded machine the kernel's check of the
# timer through the remapped IO-APIC fails now and then and panics the
# guest at boot (3 of 12 boots in two runs at load 9).
SW_APPEND="intel_iommu=on iommu=pt no_timer_check swhw=$hw"
t0=$(date +%s)
p=0
while [ $p -lt $N ]; do
	dd if=/dev/zero of="$tmp/nvme$p.img" bs=1M count=0 seek=128 status=none
	# host1's and host2's NVMe have a 1 MiB controller memory buffer
	# (BAR 2), the targets of the peer-to-peer steps.
	cmb=
	[ $p = 1 ] || [ $p = 2 ] && [ $N = 4 ] && cmb=,cmb_size_mb=1
	# host3 lends a second NVMe with a CMB too: the target of
	# peer-to-peer between two devices of one lender.
	second=
	if [ $p = 3 ] && [ $N = 4 ]; then
		dd if=/dev/zero of="$tmp/nvme3b.img" bs=1M count=0 seek=16 status=none
		second="-drive file=$tmp/nvme3b.img,if=none,id=nvb,format=raw
			-device nvme,serial=sio3b,drive=nvb,cmb_size_mb=1"
	fi
	# The model logs what the chip would refuse (-d guest_errors).  A
	# 64 KiB LUT entry must expose neither another BAR (in a q35 guest
	# the VGA's BAR 2 lies beside the NVMe's default 16 KiB BAR 0) nor
	# the device's MSI-X table (smartio refuses both): the NVMe's table
	# gets BAR 4 of its own (msix-exclusive-bar) and its BAR 0 of
	# doorbells 64 KiB (4 KiB + 7680 queues x 8 bytes).  host0's second
	# NVMe keeps its table in a 64 KiB BAR 0 (msix_qsize=2048): its
	# borrow must be refused (kmod/sio_ntb_lend.c, bar_block), and once
	# host1 borrows the first, refused for the direct window (EBUSY).
	if [ "$hw" = switchtec ]; then
		second="$second -d guest_errors"
		cmb=,msix-exclusive-bar=on,max_ioqpairs=7679
		if [ $p = 0 ]; then
			dd if=/dev/zero of="$tmp/nvme0t.img" bs=1M count=0 seek=16 status=none
			second="$second -drive file=$tmp/nvme0t.img,if=none,id=nvt,format=raw
				-device nvme,serial=sio0t,drive=nvt,msix_qsize=2048"
		fi
	fi
	# shellcheck disable=SC2086 # $second is two options or none
	sw_guest $p 1 256 -device intel-iommu,intremap=on \
		-drive "file=$tmp/nvme$p.img,if=none,id=nv,format=raw" \
		-device "nvme,serial=sio$p,drive=nv$cmb" $second
	eval "pid$p=\$guest_pid"
	p=$((p + 1))
done
# shellcheck disable=SC2154
if [ $N = 4 ]; then
	wait "$pid0" "$pid1" "$pid2" "$pid3"
else
	wait "$pid0" "$pid1"
fi
echo "all guests done after $(($(date +%s) - t0)) s"

if [ $N = 4 ]; then
	for p in 0 1 2 3; do
		sw_check "p$p-1" $(( p == 1 ? 34 : p == 3 ? 26 : p == 2 ? 19 : 16 ))
	done
	borrowers="1 3"
else
	sw_check p0-1 16
	sw_check p1-1 22
	borrowers=1
	# The chip's refusals the model counted: none (the drivers and
	# smartio wrote nothing a Switchtec would reject).
	for p in 0 1; do
		if grep -q 'switchtec-nt' "$tmp/p$p-1.qemu"; then
			echo "FAIL: port $p: the model logged guest errors:"
			grep 'switchtec-nt' "$tmp/p$p-1.qemu" | head -n 20
			fails=$((fails + 1))
		else
			echo "PASS: port $p: no access the chip would refuse"
		fi
	done
fi
# The chip refused the lent NVMe's requests while it was out of host0's
# table (its command fetch: a read), and nothing of host1's.
if [ $N = 2 ]; then
	rid_counts() {
		sed -n "s/.*partition $1: .* entry, \([0-9]*\) writes and \([0-9]*\) reads of requesters.*/\1 \2/p" "$tmp/switch.log"
	}
	w0=$(rid_counts 0 | cut -d' ' -f1)
	r0=$(rid_counts 0 | cut -d' ' -f2)
	w1=$(rid_counts 1 | cut -d' ' -f1)
	r1=$(rid_counts 1 | cut -d' ' -f2)
	if [ "${r0:-0}" -ge 1 ] && [ "$w1" = 0 ] && [ "$r1" = 0 ]; then
		echo "PASS: the chip refused host0's NVMe out of host0's table: $r0 reads and $w0 writes of it, none of host1's"
	else
		echo "FAIL: requests refused for their requester id: host0 '$w0' writes '$r0' reads, host1 '$w1' writes '$r1' reads"
		fails=$((fails + 1))
	fi
fi
# What the borrowers wrote is on the lenders' drive images.
for p in $borrowers; do
	want=$(sed -n 's/^PASS: .* read back equal (\([0-9a-f]*\)).*/\1/p' "$tmp/p$p-1.log" | tr -d '\r')
	got=$(head -c $((64 << 20)) "$tmp/nvme$((p - 1)).img" | md5sum | cut -d' ' -f1)
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		echo "PASS: host$((p - 1))'s drive image holds the 64 MiB host$p wrote"
	else
		echo "FAIL: host$((p - 1))'s drive image: md5 $got, host$p wrote '$want'"
		fails=$((fails + 1))
	fi
done
echo "--- switch"
cat "$tmp/switch.log"
if [ "$fails" -eq 0 ]; then
	echo "PASS: check-ntb (lending) on $kernel_tag"
	exit 0
fi
echo "FAIL: check-ntb (lending) ($fails problems)"
exit 1
