#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-kmod: builds kmod/smartio.ko against Debian's linux-headers
# (no compiler warning allowed), boots it in a QEMU guest with an NVMe
# drive behind QEMU's intel-iommu and runs guest-init.sh there, which
# prints PASS:/FAIL: lines on the serial console.  The guest runs Debian's
# systemd-udevd with udev/*.rules (guest-udev.sh checks the /dev/smartio
# names and the shadow's tags).  The guest's log must
# hold the expected passes, no FAIL, no kernel warning/BUG/oops and no
# DMAR fault.
#
# Environment: SRCDIR, BUILDDIR (set by make), KVER (default: newest
# /usr/src/linux-headers-*-amd64; Debian 13's kernel, e.g.
# 6.12.117+deb13-amd64, is built for and booted from the root of
# contrib/kernels/debian13.sh: make debian13-root), KMOD_TIMEOUT (seconds, default 900),
# KMOD_KEEP=1 keeps the work directory.  Exit 77 when qemu, busybox-static,
# cpio, udev, a static libc, the kernel image, its modules or headers are
# missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${KMOD_TIMEOUT:-900}
expect_passes=149
expect_caps_passes=18
expect_acs_passes=3

skip() { echo "SKIP: check-kmod: $*"; exit 77; }
. "$src/tests/kmod/guest-lib.sh"
guest_needs
udevadm=$(command -v udevadm) || skip "no udevadm (apt-get install udev)"

out=$build/tests/kmod/build
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
srcabs=$(cd "$src" && pwd)
t0=$(date +%s)
if ! kernel_run "$srcabs" "$out" -- make -C "$srcabs/kmod" KDIR="$kdir" \
	O_BUILD="$out/smartio" >"$out/build.log" 2>&1; then
	cat "$out/build.log"
	echo "FAIL: building smartio.ko against $kdir"
	exit 1
fi
if grep -E -i 'warning|error' "$out/build.log" |
	grep -v 'Skipping BTF generation'; then
	echo "FAIL: smartio.ko builds with warnings (above)"
	exit 1
fi
echo "PASS: smartio.ko builds against $kdir without warnings ($(($(date +%s) - t0)) s, $kernel_tag)"

# The guest's mmap helper: static, the guest has no C library of its own.
${CC:-cc} -static -O2 -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror \
	-o "$out/sio_mmap" "$src/tests/kmod/sio_mmap.c" >"$out/cc.log" 2>&1 ||
	{ cat "$out/cc.log"; skip "cannot link a static program (libc6-dev)"; }
# And its generic netlink client (permissions, policies, the fuzzer).
${CC:-cc} -static -O2 -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror \
	-I"$src/lib/core" -o "$out/sio_genl" "$src/tests/kmod/sio_genl.c" >"$out/cc.log" 2>&1 ||
	{ cat "$out/cc.log"; echo "FAIL: tests/kmod/sio_genl.c"; exit 1; }

# Kernel style: scripts/checkpatch.pl of the kernel's linux-source
# (extracted once per kernel series), no error, warning or --strict check
# on kmod's sources.
tarball=$kernel_source
[ -f "$tarball" ] ||
	tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
tools=$build/tests/kmod/tools/$(basename "${tarball:-none}" .tar.xz)
if [ ! -x "$tools/scripts/checkpatch.pl" ] && [ -n "$tarball" ]; then
	mkdir -p "$tools"
	top=$(basename "$tarball" .tar.xz)
	tar -xJf "$tarball" -C "$tools" --strip-components=1 \
		"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch" 2>/dev/null
fi
if [ -x "$tools/scripts/checkpatch.pl" ]; then
	cp_bad=0
	for f in "$src"/kmod/sio_*.c "$src"/kmod/sio_*.h "$src"/kmod/ntb/*.c \
		 "$src"/kmod/ntb/*.h; do
		# --terse prints nothing for a clean file.
		perl "$tools/scripts/checkpatch.pl" --no-tree --strict --terse \
			-f "$f" >"$out/checkpatch.log" 2>&1
		st=$?
		if [ "$st" -ne 0 ] || [ -s "$out/checkpatch.log" ]; then
			cat "$out/checkpatch.log"
			cp_bad=1
		fi
	done
	if [ "$cp_bad" = 0 ]; then
		echo "PASS: checkpatch --strict of $(basename "$tarball" .tar.xz) finds nothing in kmod/sio_* and kmod/ntb/*"
	else
		echo "FAIL: checkpatch (above)"
		exit 1
	fi
else
	echo "SKIP: checkpatch: no linux-source tarball (apt-get install linux-source)"
fi

# DKMS (kmod/dkms.conf): the tree "make dkms-source" installs builds with
# dkms itself, in a DKMS tree of our own, warning-free and for $KVER, and
# dkms install puts it in an install tree of our own; the guest then runs
# that installed module.  (dkms signs what it builds: the first run creates
# /var/lib/dkms/mok.*.)  For Debian 13's kernel, the root's dkms does it.
# Both steps name the install tree: dkms 3.2 compresses a module as the
# install tree's modules are, and refuses to install what it built for
# another tree.
guest_ko=$out/smartio/smartio.ko
if { [ -n "$kroot" ] && [ -x "$kroot/usr/sbin/dkms" ] ||
     command -v dkms >/dev/null; } && [ -f "$build/Makefile" ]; then
	dk=$out/dkms
	mkdir -p "$dk/tree" "$dk/inst/$KVER"
	ver=$(sed -n 's/^PACKAGE_VERSION = //p' "$build/Makefile")
	ko=
	if make -s -C "$build" dkms-source DESTDIR="$dk/root" prefix=/usr \
		>"$out/dkms.log" 2>&1 &&
	   kernel_run "$out" -- dkms build "smartio/$ver" -k "$KVER" \
		--sourcetree "$dk/root/usr/src" --dkmstree "$dk/tree" \
		--installtree "$dk/inst" \
		--kernelsourcedir "$kdir" >>"$out/dkms.log" 2>&1; then
		ko=$(ls "$dk/tree/smartio/$ver/$KVER"/*/module/smartio.ko 2>/dev/null)
	fi
	if [ -n "$ko" ] &&
	   ! grep -q -i warning "$dk/tree/smartio/$ver/$KVER"/*/log/make.log &&
	   [ "$(modinfo -F vermagic "$ko")" = \
	     "$(modinfo -F vermagic "$out/smartio/smartio.ko")" ]; then
		echo "PASS: dkms build smartio/$ver for $KVER (kmod/dkms.conf), no warning"
		grep -h -i -E 'building module|cleaning build area|make -j' "$out/dkms.log" |
			sed "s/^/dkms($KVER): /" | head -n 6
	else
		cat "$out/dkms.log" "$dk/tree/smartio/$ver/$KVER"/*/log/make.log
		echo "FAIL: dkms build smartio/$ver"
		exit 1
	fi
	inst=$dk/inst/$KVER/updates/dkms/smartio.ko
	# A kernel built here (contrib/kernels/lockdep.sh) is not in this
	# machine's /lib/modules, where dkms's depmod looks; the guest
	# loads the module by its path.
	nodepmod=
	[ -n "$kroot" ] && [ -z "$kin" ] && nodepmod=--no-depmod
	if kernel_run "$out" -- dkms install "smartio/$ver" -k "$KVER" $nodepmod \
		--sourcetree "$dk/root/usr/src" --dkmstree "$dk/tree" \
		--installtree "$dk/inst" --kernelsourcedir "$kdir" \
		>>"$out/dkms.log" 2>&1 && [ -f "$inst" ] &&
	   kernel_run "$out" -- dkms status -m smartio -v "$ver" -k "$KVER" --dkmstree "$dk/tree" \
		--installtree "$dk/inst" 2>/dev/null | grep -q installed; then
		echo "PASS: dkms install smartio/$ver: updates/dkms/smartio.ko (the guest loads it)"
		guest_ko=$inst
	else
		cat "$out/dkms.log"
		echo "FAIL: dkms install smartio/$ver"
		exit 1
	fi
else
	echo "SKIP: dkms: not installed (apt-get install dkms)"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-kmod.XXXXXX")
qpid=
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	wait 2>/dev/null
	if [ "${KMOD_KEEP:-0}" = 1 ]; then
		echo "kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The initramfs: busybox, the NVMe driver with its dependencies, ext4 (a
# filesystem mounted on the lender's disk), smartio.ko, smartiofs
# (tests/kmod/guest-lib.sh).
guest_root "$tmp/root" "$src/tests/kmod/guest-init.sh" "$guest_ko" "$sfs" \
	"$KVER" ext4 || skip "modprobe cannot resolve nvme for $KVER"
# systemd-udevd (udevadm under another name), its libraries, the rules.
cp "$src/tests/kmod/guest-udev.sh" "$tmp/root/guest-udev.sh"
cp "$out/sio_mmap" "$tmp/root/bin/sio_mmap"
cp "$out/sio_genl" "$tmp/root/bin/sio_genl"
mkdir -p "$tmp/root/udev" "$tmp/root/lib/systemd"
cp "$src"/udev/*.rules "$tmp/root/udev/"
cp -L "$udevadm" "$tmp/root/bin/udevadm"
ln -s /bin/udevadm "$tmp/root/lib/systemd/systemd-udevd"
guest_libs "$tmp/root" "$udevadm"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

# A 64 MiB drive with a known pattern at its start.
dd if=/dev/zero of="$tmp/nvme.img" bs=1M count=64 status=none
t0=$(date +%s)
guest_boot_nvme "$tmp" 768
guest_wait "$qpid" "$tmp/guest.log" KMOD-END
st=$?
qpid=
echo "guest ran $(($(date +%s) - t0)) s (qemu status $st)"

log=$tmp/guest.log
tr -d '\r' <"$log" >"$tmp/clean.log"
log=$tmp/clean.log
bad=0
guest_tagged "$log" || bad=1
passes=$(grep -c '^PASS: ' "$log")
bad=$((bad + $(grep -c '^FAIL: ' "$log")))
if ! grep -q '^KMOD-END fails=0' "$log"; then
	echo "FAIL: the guest did not finish cleanly"
	bad=$((bad + 1))
fi
if [ "$passes" -lt "$expect_passes" ]; then
	echo "FAIL: $passes checks passed in the guest, $expect_passes expected"
	bad=$((bad + 1))
fi
# The 32 MiB the borrower wrote through the shadow must be on the drive.
want=$(sed -n 's/^PATTERN-MD5 \([0-9a-f]*\).*/\1/p' "$log")
got=$(head -c 33554432 "$tmp/nvme.img" | md5sum | cut -d' ' -f1)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
	echo "PASS: the drive image holds the 32 MiB written through the shadow"
else
	echo "FAIL: the drive image does not hold the data written (md5 $got, want $want)"
	bad=$((bad + 1))
fi
if grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|Kernel panic|DMAR: \[DMA|DMAR: DRHD: handling fault|DMAR:.*fault' "$log"; then
	echo "FAIL: kernel warning, bug, oops or IOMMU fault in the guest (above)"
	bad=$((bad + 1))
fi
guest_lock_report "$log" first || bad=$((bad + 1))

# The second guest: SR-IOV, AER and ACS writes kept from the lender's real
# function (tests/kmod/guest-caps.sh), on devices the first guest lacks.
guest_root "$tmp/caps" "$src/tests/kmod/guest-caps.sh" "$guest_ko" "$sfs" \
	"$KVER" || skip "modprobe cannot resolve nvme for $KVER"
cp "$out/sio_genl" "$tmp/caps/bin/sio_genl"
guest_initrd "$tmp/caps" "$tmp/caps.gz"
mkdir -p "$tmp/capsrun"
mv "$tmp/caps.gz" "$tmp/capsrun/initrd.gz"
# ACS needs contrib/qemu's e1000e-acs (QEMU 7.2 has no endpoint with
# ACS), built for the installed QEMU as check-ntb builds it; where its
# source cannot be fetched the ACS checks are reported skipped.
sw=${NTBSW_OUT:-$build/contrib/qemu/build}
CAPS_QEMU=
sh "$src/contrib/qemu/build.sh" "$sw" >"$build/ntbsw-build.log" 2>&1
case $? in
0) CAPS_QEMU=$sw/smartio-ntb-qemu
   expect_caps_passes=$((expect_caps_passes + expect_acs_passes)) ;;
77) echo "SKIP: check-kmod's ACS checks: $(tail -n 1 "$build/ntbsw-build.log")" ;;
*) tail -n 5 "$build/ntbsw-build.log"
   echo "FAIL: building contrib/qemu for the ACS checks"
   bad=$((bad + 1)) ;;
esac
t0=$(date +%s)
guest_boot_caps "$tmp/capsrun" 512
guest_wait "$qpid" "$tmp/capsrun/guest.log" CAPS-END
st=$?
qpid=
echo "second guest ran $(($(date +%s) - t0)) s (qemu status $st)"
capslog=$tmp/capsrun/clean.log
tr -d '\r' <"$tmp/capsrun/guest.log" >"$capslog"
guest_tagged "$capslog" || bad=$((bad + 1))
caps_passes=$(grep -c '^PASS: ' "$capslog")
bad=$((bad + $(grep -c '^FAIL: ' "$capslog")))
if ! grep -q '^CAPS-END fails=0' "$capslog" ||
	[ "$caps_passes" -lt "$expect_caps_passes" ]; then
	echo "FAIL: the second guest: $caps_passes checks passed, $expect_caps_passes expected, or it did not finish"
	tail -n 40 "$capslog"
	cat "$tmp/capsrun/qemu.log"
	bad=$((bad + 1))
fi
if grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|Kernel panic|DMAR:.*fault' "$capslog"; then
	echo "FAIL: kernel warning, bug, oops or IOMMU fault in the second guest (above)"
	bad=$((bad + 1))
fi
guest_lock_report "$capslog" second || bad=$((bad + 1))
passes=$((passes + caps_passes))
if [ "$bad" -ne 0 ]; then
	tail -n 60 "$log"
	cat "$tmp/qemu.log"
	echo "FAIL: check-kmod ($bad problems)"
	exit 1
fi
echo "PASS: check-kmod on $kernel_tag ($passes checks in the guest)"
exit 0
