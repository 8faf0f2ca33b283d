#!/bin/sh
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
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
command -v cpio >/dev/null || skip "no cpio"
busybox=/bin/busybox
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	skip "no busybox-static"
if [ -z "${KVER:-}" ]; then
	KVER=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V |
	       tail -n 1 | sed 's|.*/linux-headers-||')
fi
[ -n "$KVER" ] || skip "no linux-headers-amd64"
kdir=/usr/src/linux-headers-$KVER
[ -d "$kdir" ] || skip "no $kdir"
kernel=/boot/vmlinuz-$KVER
[ -r "$kernel" ] || skip "no readable $kernel"
[ -d "/lib/modules/$KVER/kernel" ] || skip "no /lib/modules/$KVER"
sfs=$build/fs/.libs/smartiofs
[ -x "$sfs" ] || sfs=$build/fs/smartiofs
file -L "$sfs" 2>/dev/null | grep -q ELF || skip "fs/smartiofs not built"

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
# smartiofs and its libraries (as check_kmod.sh builds it).
mkdir -p "$tmp/root/bin" "$tmp/root/modules" "$tmp/root/lib/smartio"
cp "$busybox" "$tmp/root/bin/busybox"
cp "$src/tests/bench/guest-dd.sh" "$tmp/root/init"
chmod 755 "$tmp/root/init"
modprobe -a -S "$KVER" --show-depends nvme fuse 2>/dev/null |
	awk '$1 == "insmod" && !seen[$2]++ { print $2 }' >"$tmp/mods"
[ -s "$tmp/mods" ] || skip "modprobe cannot resolve nvme for $KVER"
while read -r m; do
	cp "$m" "$tmp/root/modules/"
	echo "/modules/$(basename "$m")" >>"$tmp/root/modules/order"
done <"$tmp/mods"
cp "$out/smartio/smartio.ko" "$tmp/root/smartio.ko"
cp "$sfs" "$tmp/root/bin/smartiofs"
LD_LIBRARY_PATH=$build/lib/.libs ldd "$sfs" |
	awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' |
while read -r lib; do
	case $lib in
	*/libsmartio.so*) cp -L "$lib" "$tmp/root/lib/smartio/" ;;
	*) mkdir -p "$tmp/root$(dirname "$lib")"; cp -L "$lib" "$tmp/root$lib" ;;
	esac
done
(cd "$tmp/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp/initrd.gz"

dd if=/dev/zero of="$tmp/nvme.img" bs=1M count=128 status=none
timeout "$limit" qemu-system-x86_64 -accel tcg -machine q35 -smp 1 -m 512 \
	-display none -monitor none -no-reboot -serial "file:$tmp/guest.log" \
	-kernel "$kernel" -initrd "$tmp/initrd.gz" \
	-append "console=ttyS0 panic=-1 intel_iommu=on" \
	-device intel-iommu,intremap=on \
	-drive "file=$tmp/nvme.img,if=none,id=nv0,format=raw" \
	-device nvme,serial=smartio0,drive=nv0 >"$tmp/qemu.log" 2>&1 &
qpid=$!
# The guest powers off after DD-END; give it 20 s from there.
while kill -0 "$qpid" 2>/dev/null; do
	if grep -q '^DD-END' "$tmp/guest.log" 2>/dev/null; then
		n=100
		while [ "$n" -gt 0 ] && kill -0 "$qpid" 2>/dev/null; do
			sleep 0.2
			n=$((n - 1))
		done
		kill "$qpid" 2>/dev/null
		break
	fi
	sleep 1
done
wait "$qpid"
qpid=
tr -d '\r' <"$tmp/guest.log" >"$tmp/clean.log"
cp "$tmp/clean.log" "$out/guest.log"
why=$(sed -n 's/^DD-SKIP //p' "$tmp/clean.log" | head -n 1)
[ -z "$why" ] || fail "in the guest: $why (see $out/guest.log)"
grep -q '^DD-END' "$tmp/clean.log" ||
	fail "the guest did not finish (see $out/guest.log)"
grep '^DD ' "$tmp/clean.log"
