#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make fuzz-genl (part of make check-stress): the generic netlink fuzzer
# of smartio.ko (tests/kmod/sio_genl.c fuzz) in a QEMU guest
# (tests/kmod/guest-fuzz.sh), GENL_FUZZ_SECONDS (default 60) as an
# unprivileged user and as many as root (GENL_FUZZ_ROOT=0: not as root).  The guest's log must hold its
# passes, no FAIL and no kernel warning, BUG, oops or IOMMU fault.
# Environment and skips as check_kmod.sh.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
secs=${GENL_FUZZ_SECONDS:-60}
limit=$((secs * 2 + 600))
expect_passes=8

skip() { echo "SKIP: fuzz-genl: $*"; exit 77; }
. "$src/tests/kmod/guest-lib.sh"
guest_needs

out=$build/tests/kmod/build-fuzz
rm -rf "$out"
mkdir -p "$out"
make -C "$src/kmod" KDIR="$kdir" O_BUILD="$out/smartio" >"$out/build.log" 2>&1 ||
	{ cat "$out/build.log"; echo "FAIL: building smartio.ko"; exit 1; }
${CC:-cc} -static -O2 -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror \
	-I"$src/lib/core" -o "$out/sio_genl" "$src/tests/kmod/sio_genl.c" >"$out/cc.log" 2>&1 ||
	{ cat "$out/cc.log"; skip "cannot link a static program (libc6-dev)"; }

tmp=$(mktemp -d /tmp/fuzz-genl.XXXXXX)
qpid=
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

guest_root "$tmp/root" "$src/tests/kmod/guest-fuzz.sh" \
	"$out/smartio/smartio.ko" "$sfs" "$KVER" ||
	skip "modprobe cannot resolve nvme for $KVER"
cp "$out/sio_genl" "$tmp/root/bin/sio_genl"
echo "$secs" >"$tmp/root/fuzz-seconds"
[ "${GENL_FUZZ_ROOT:-1}" = 1 ] && : >"$tmp/root/fuzz-root"
[ "${GENL_FUZZ_ROOT:-1}" = 1 ] || expect_passes=7
guest_initrd "$tmp/root" "$tmp/initrd.gz"
dd if=/dev/zero of="$tmp/nvme.img" bs=1M count=64 status=none
t0=$(date +%s)
guest_boot_nvme "$tmp" 768
guest_wait "$qpid" "$tmp/guest.log" FUZZ-END
st=$?
qpid=
echo "guest ran $(($(date +%s) - t0)) s (qemu status $st)"
tr -d '\r' <"$tmp/guest.log" >"$tmp/clean.log"
log=$tmp/clean.log
grep -E '^(PASS|FAIL|FUZZ)' "$log"
bad=$(grep -c '^FAIL: ' "$log")
passes=$(grep -c '^PASS: ' "$log")
grep -q '^FUZZ-END fails=0' "$log" ||
	{ echo "FAIL: the guest did not finish cleanly"; bad=$((bad + 1)); }
[ "$passes" -ge "$expect_passes" ] ||
	{ echo "FAIL: $passes checks passed, $expect_passes expected"; bad=$((bad + 1)); }
if grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|Kernel panic|DMAR: \[DMA|DMAR:.*fault' "$log"; then
	echo "FAIL: kernel warning, bug, oops or IOMMU fault in the guest (above)"
	bad=$((bad + 1))
fi
guest_lock_report "$log" fuzz || bad=$((bad + 1))
if [ "$bad" -ne 0 ]; then
	tail -n 60 "$log"
	echo "FAIL: fuzz-genl ($bad problems)"
	exit 1
fi
echo "PASS: fuzz-genl"
