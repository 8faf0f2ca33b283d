#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's QEMU line: builds kmod/smartio.ko against Debian's
# linux-headers, boots it in a TCG guest with one NVMe drive behind
# intel-iommu (the guest of tests/kmod/check_kmod.sh, without udev) and runs
# tests/bench/guest-dd.sh there, which dd's through the native controller
# and through its shadow while lent.  Prints the guest's "DD ..." lines.
#
# Environment: SRCDIR, BUILDDIR, KVER (default: newest
# /usr/src/linux-headers-*-amd64), KMOD_DD_TIMEOUT (seconds, default 600).
# Exit 77 with "SKIP: <why>" when qemu, busybox-static, cpio, the kernel
# image, its modules or headers are missing; 1 with "FAIL: <why>" when the
# guest could not measure.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${KMOD_DD_TIMEOUT:-600}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
. "$src/tests/kmod/guest-lib.sh"
guest_needs

# A build directory of our own: check-kmod may be running at the same time.
out=$build/tests/bench/kmod
rm -rf "$out"
mkdir -p "$out"
make -C "$src/kmod" KDIR="$kdir" O_BUILD="$out/smartio" >"$out/build.log" 2>&1 ||
	{ cat "$out/build.log"; fail "building smartio.ko against $kdir"; }

tmp=$(mktemp -d /tmp/bench-dd.XXXXXX)
qpid=
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The initramfs: busybox, nvme and fuse with their dependencies, smartio.ko,
# smartiofs and its libraries (tests/kmod/guest-lib.sh, as check-kmod's).
guest_root "$tmp/root" "$src/tests/bench/guest-dd.sh" "$out/smartio/smartio.ko" \
	"$sfs" "$KVER" || skip "modprobe cannot resolve nvme for $KVER"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

dd if=/dev/zero of="$tmp/nvme.img" bs=1M count=128 status=none
guest_boot_nvme "$tmp" 512
guest_wait "$qpid" "$tmp/guest.log" DD-END
qpid=
tr -d '\r' <"$tmp/guest.log" >"$tmp/clean.log"
cp "$tmp/clean.log" "$out/guest.log"
why=$(sed -n 's/^DD-SKIP //p' "$tmp/clean.log" | head -n 1)
[ -z "$why" ] || fail "in the guest: $why (see $out/guest.log)"
grep -q '^DD-END' "$tmp/clean.log" ||
	fail "the guest did not finish (see $out/guest.log)"
grep '^DD ' "$tmp/clean.log"
