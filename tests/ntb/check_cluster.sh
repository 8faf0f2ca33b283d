#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-ntb, the cluster part: three QEMU guests on one 3-port
# smartio-ntb-switch form one smartio cluster (smartio.ko fabric=ntb
# nodes=3 over smartio_ntb and ntb_sioswitch, smartiofs on /smartio in
# each): every node sees the others up, each node's segment is attached,
# written and read by the two others (data checked, also what one node
# wrote read by the third), host2 powers off and the others see it down
# (its segment gone, a mapping of it revoked) while they stay up for each
# other, then host2 boots again and segments flow both ways once more
# (tests/ntb/cluster-init.sh).
#
# Environment: SRCDIR, BUILDDIR (set by make), KVER, LINUX_SOURCE (see
# build.sh), NTB_TIMEOUT (seconds per guest, default 1800), NTB_KEEP=1
# keeps the work directory, NTBSW_OUT (see check_switch.sh).  Exit 77
# when qemu, busybox-static, cpio, the kernel image, headers or source
# are missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-1800}
N=3

skip() { echo "SKIP: check-ntb (cluster): $*"; exit 77; }
. "$src/tests/kmod/guest-lib.sh"
. "$src/tests/ntb/switch-lib.sh"
sw_prepare
sw_smartio_build

mkdir -p "$tmp/root/bin"
cp "$busybox" "$tmp/root/bin/busybox"
cp "$src/tests/ntb/cluster-init.sh" "$tmp/root/init"
chmod 755 "$tmp/root/init"
cp "$src/tests/kmod/guest-common.sh" "$tmp/root/guest-common.sh"
cp "$out/ntb.ko" "$out/ntb_sioswitch.ko" "$tmp/root/"
sw_smartio_root "$tmp/root"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

sw_start $N
t0=$(date +%s)
for p in 0 1 2; do
	sw_guest $p 1 256
	eval "pid$p=\$guest_pid"
done
# shellcheck disable=SC2154
wait "$pid2"
echo "host2 powered off after $(($(date +%s) - t0)) s"
sw_guest 2 2 256
# shellcheck disable=SC2154
wait "$guest_pid" "$pid0" "$pid1"
echo "all guests done after $(($(date +%s) - t0)) s"

sw_check p0-1 27
sw_check p1-1 27
sw_check p2-1 17
sw_check p2-2 15
echo "--- switch"
cat "$tmp/switch.log"
if [ "$fails" -eq 0 ]; then
	echo "PASS: check-ntb (cluster) on $kernel_tag"
	exit 0
fi
echo "FAIL: check-ntb (cluster) ($fails problems)"
exit 1
