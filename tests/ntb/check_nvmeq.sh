#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-ntb, the shared NVMe part: four QEMU guests on one 4-port
# smartio-ntb-switch form one smartio cluster; host0 lends its NVMe in
# shared mode and smartio-nvmeq (contrib/nvme, SmartIO 6.2's distributed
# NVMe driver) runs over smartio.ko: the manager on host1, two clients each
# on host1, host2 and host3 at once, each with its own queue pair and LBA
# range, verified; host2 reads back host3's ranges; host3 powers off
# mid-I/O and host2's clients go on; host1, the manager's node, powers
# off and host2's next client is told no manager serves the drive
# (tests/ntb/nvmeq-init.sh).  The NBD mount: nbdkit with
# nbdkit-smartio-plugin on host2 exports the shared drive over a network
# between host1 and host2 (a datagram link of their two QEMUs), and host1's
# unmodified NBD client (the kernel's nbd and Debian's nbd-client) makes
# an ext2 filesystem on it, mounts it, writes files, and reads them back
# after a remount over a new connection.  The NBD part is skipped, with a
# SKIP line, when nbdkit, nbd-client or the plugin is missing.
#
# Environment: SRCDIR, BUILDDIR (set by make), KVER, LINUX_SOURCE (see
# build.sh), NTB_TIMEOUT (seconds per guest, default 1800), NTB_KEEP=1
# keeps the work directory.  Exit 77 when qemu, busybox-static, cpio, the
# kernel image, headers or source are missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-1800}
N=4

skip() { echo "SKIP: check-ntb (nvmeq): $*"; exit 77; }
. "$src/tests/kmod/guest-lib.sh"
. "$src/tests/ntb/switch-lib.sh"
sw_prepare
sw_smartio_build

mkdir -p "$tmp/root/bin"
sw_nvmeq_build "$tmp/root"
# The NBD mount's programs: nbdkit and its plugin as built, nbd-client,
# with their libraries; the kernel's nbd, ext4 (which mounts ext2) and the
# network card's driver.
plugin=$build/contrib/nvme/.libs/nbdkit-smartio-plugin.so
nbd_mods=
if [ ! -f "$plugin" ]; then
	echo "SKIP: check-ntb (nvmeq): the NBD mount: no nbdkit-smartio-plugin (nbdkit-plugin-dev)"
elif ! nbdkit=$(command -v nbdkit); then
	echo "SKIP: check-ntb (nvmeq): the NBD mount: no nbdkit (apt-get install nbdkit)"
elif ! nbdc=$(PATH=$PATH:/usr/sbin:/sbin command -v nbd-client); then
	echo "SKIP: check-ntb (nvmeq): the NBD mount: no nbd-client (apt-get install nbd-client)"
else
	nbd_mods="nbd ext4 virtio_pci virtio_net"
	for f in "$nbdkit" "$nbdc" "$plugin"; do
		guest_libs "$tmp/root" "$f"
	done
	cp -L "$nbdkit" "$nbdc" "$tmp/root/bin/"
	mkdir -p "$tmp/root/lib"
	cp -L "$plugin" "$tmp/root/lib/nbdkit-smartio-plugin.so"
fi
guest_root "$tmp/root" "$src/tests/ntb/nvmeq-init.sh" "$out/smartio/smartio.ko" \
	"$sfs" "$KVER" "$nbd_mods" ||
	skip "modprobe cannot resolve nvme${nbd_mods:+, $nbd_mods} for $KVER"
cp "$out/ntb.ko" "$out/ntb_sioswitch.ko" "$tmp/root/"
sw_smartio_root "$tmp/root"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

# Look-up-table entries of 256 MiB: each client's node (256 MiB of RAM)
# takes one for the DMA window and one for the MSI window of
# host0's seven.
sw_start $N 2G
SW_APPEND="intel_iommu=on iommu=pt no_timer_check"
t0=$(date +%s)
dd if=/dev/zero of="$tmp/nvme0.img" bs=1M count=0 seek=64 status=none
sw_guest 0 1 256 -device intel-iommu,intremap=on \
	-drive "file=$tmp/nvme0.img,if=none,id=nv,format=raw" \
	-device nvme,serial=sio0,drive=nv
pid0=$guest_pid
for p in 1 2 3; do
	# host1 and host2 joined by a datagram link of their QEMUs (unix
	# sockets in $tmp: no port to share with other tests on this machine).
	# Their initramfs carries nbdkit, nbd-client and their libraries:
	# in 128 MiB what is left was too fragmented for smartio_ntb's 4 MiB
	# segment heap (an order-10 allocation failed, seen in CI), so they
	# get 256 MiB.  So does host3: the lockdep kernel (make
	# lockdep-kernel) keeps 55 MiB of 128 for its tables, and the heap's
	# allocation failed there too.
	net= mem=256
	[ -n "$nbd_mods" ] && [ $p != 3 ] &&
		net="dgram,id=n,local.type=unix,local.path=$tmp/net$p,remote.type=unix,remote.path=$tmp/net$((3 - p))"
	sw_guest $p 1 $mem -device intel-iommu,intremap=on \
		${net:+-netdev "$net" -device virtio-net-pci,netdev=n}
	eval "pid$p=\$guest_pid"
done
# shellcheck disable=SC2154
wait "$pid0" "$pid1" "$pid2" "$pid3"
echo "all guests done after $(($(date +%s) - t0)) s"

sw_check p0-1 4
# The NBD mount adds three passes on host1 and one on host2.
nbd=0
[ -n "$nbd_mods" ] && nbd=1
sw_check p1-1 $((7 + 3 * nbd))
sw_check p2-1 $((9 + nbd))
sw_check p3-1 5
echo "--- switch"
cat "$tmp/switch.log"
if [ "$fails" -eq 0 ]; then
	echo "PASS: check-ntb (nvmeq) on $kernel_tag"
	exit 0
fi
echo "FAIL: check-ntb (nvmeq) ($fails problems)"
exit 1
