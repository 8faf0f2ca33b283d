#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-stress reports a part that skipped as skipped (issue 28 item
# 15): the real `make fuzz-genl` is run where it must skip (KVER names no
# kernel), through tests/stress/check_stress.sh as make check-stress runs
# it; its summary line must be SKIP, never PASS.  And .ci/run installs
# what fuzz-genl needs (QEMU and the rest of the guest packages) before
# it runs make check-stress, so that on a fresh machine it runs.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
out=$(sh "$src/tests/stress/check_stress.sh" \
	"make -s -C $build KVER=none-such-kernel" fuzz-genl 2>&1)
rc=$?
fail() { echo "FAIL: $*"; echo "$out" | tail -20; exit 1; }
[ "$rc" -eq 0 ] || fail "check_stress.sh exited $rc for a skip"
echo "$out" | grep -q '^fuzz-genl: SKIPPED$' ||
	fail "make fuzz-genl did not skip with KVER=none-such-kernel"
echo "$out" | grep -q '^PASS: make fuzz-genl' && fail "a skip summed up as PASS"
echo "$out" | grep -q '^SKIP: make fuzz-genl (' || fail "no SKIP line"
echo "$out" | grep -qx 'check-stress: skipped: fuzz-genl' ||
	fail "no closing line naming the skipped part"

# The order in .ci/run: the guest packages, then make check-stress.
ci=$src/.ci/run
qemu=$(grep -n 'qemu-system-x86' "$ci" | head -n1 | cut -d: -f1)
stress=$(grep -n '^[^#]*make check-stress' "$ci" | head -n1 | cut -d: -f1)
[ -n "$qemu" ] && [ -n "$stress" ] || fail ".ci/run lost its QEMU install or check-stress"
for pkg in busybox-static cpio linux-headers-amd64 linux-image-amd64; do
	line=$(grep -n "$pkg" "$ci" | head -n1 | cut -d: -f1)
	[ -n "$line" ] && [ "$line" -lt "$stress" ] ||
		fail ".ci/run installs $pkg after make check-stress (line ${line:-none} vs $stress)"
done
[ "$qemu" -lt "$stress" ] ||
	fail ".ci/run installs QEMU (line $qemu) after make check-stress (line $stress)"
echo "PASS: a skipped fuzz-genl is reported as skipped; CI installs QEMU first"
