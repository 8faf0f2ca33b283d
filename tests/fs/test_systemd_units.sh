#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The systemd units of contrib/systemd pass `systemd-analyze verify` (and a
# unit with a missing program does not); smartiofs-kernel.service is
# ordered after the module and udev.  What the units run after mounting
# sets the declared state on a real mount: `smartio segment apply` creates
# the segments of contrib/systemd/segments.conf.example, and
# `systemd-tmpfiles --create` applies the `w` lines of
# contrib/systemd/smartio.tmpfiles.example (lend policies, a mode); both
# again (a restart) change nothing.
. "$(dirname "$0")/lib.sh"
command -v systemd-analyze > /dev/null && command -v systemd-tmpfiles > /dev/null ||
	{ echo "SKIP: $TEST: systemd-analyze or systemd-tmpfiles missing (apt-get install systemd)"; exit 77; }
SMARTIO=${SMARTIO:-$sfs_top/python/scripts/smartio}
export PYTHONPATH="$sfs_top/python${PYTHONPATH:+:$PYTHONPATH}"
sd=$sfs_top/contrib/systemd

# The units as `make install` writes them, with this build's programs.
mkdir -p "$TMP/units"
for u in smartiofs smartiofs-kernel; do
	sed -e "s|@sbindir@|$(dirname "$SMARTIOFS")|g" -e "s|@bindir@|$(dirname "$SMARTIO")|g" \
		-e "s|@sysconfdir@|/etc|g" "$sd/$u.service.in" > "$TMP/units/$u.service"
done
out=$(systemd-analyze verify --man=no "$TMP/units/smartiofs.service" \
	"$TMP/units/smartiofs-kernel.service" 2>&1) || fail "verify: $out"
[ -z "$out" ] || fail "verify warned: $out"
sed -e "s|^ExecStart=.*|ExecStart=$TMP/nonexistent /smartio|" "$TMP/units/smartiofs.service" \
	> "$TMP/units/broken.service"
if systemd-analyze verify --man=no "$TMP/units/broken.service" > /dev/null 2>&1; then
	fail "verify accepted a unit whose program is missing"
fi
after=$(sed -n 's/^After=//p' "$TMP/units/smartiofs-kernel.service")
for dep in systemd-modules-load.service systemd-udevd.service; do
	case " $after " in *" $dep "*) ;; *) fail "smartiofs-kernel.service not after $dep";; esac
done
grep -qx "ExecStartPre=/sbin/modprobe smartio" "$TMP/units/smartiofs-kernel.service" ||
	fail "smartiofs-kernel.service does not load the module"
for u in smartiofs smartiofs-kernel; do
	grep -qx "ExecStartPost=$(dirname "$SMARTIO")/smartio -m /smartio segment apply --if-exists /etc/smartio/segments.conf" \
		"$TMP/units/$u.service" || fail "$u: no segment apply"
	grep -qx "ExecStartPost=/bin/systemd-tmpfiles --create --prefix=/smartio" \
		"$TMP/units/$u.service" || fail "$u: no tmpfiles"
done

# What ExecStartPost runs, in a root of its own whose /smartio is a mount.
R=$TMP/root
mkdir -p "$R/etc/tmpfiles.d" "$R/etc/smartio" "$R/smartio"
cp "$sd/smartio.tmpfiles.example" "$R/etc/tmpfiles.d/smartio.conf"
cp "$sd/segments.conf.example" "$R/etc/smartio/segments.conf"
mount_sfs "$R/smartio" --fabric "$FABRIC"
# (lib.sh unmounts every mount below $TMP)
M=$R/smartio
start_post() {
	"$SMARTIO" -m "$M" segment apply --if-exists "$R/etc/smartio/segments.conf" ||
		fail "segment apply: exit $?"
	systemd-tmpfiles --create --root="$R" --prefix=/smartio || fail "tmpfiles: exit $?"
}
start_post
expect_eq "acc0 mode" "$(cat "$M/dev/acc0/mode")" shared
expect_eq "acc0 lend" "$(cat "$M/dev/acc0/lend")" all
expect_eq "nvme1 lend" "$(cat "$M/dev/nvme1/lend")" "host0
host2"
expect_eq "nvme0 lend" "$(cat "$M/dev/nvme0/lend")" all
expect_eq "ring size" "$(cat "$M/nodes/host0/segments/ring/size")" 67108864
expect_eq "ring exported" "$(cat "$M/nodes/host0/segments/ring/available")" 1
expect_eq "scratch size" "$(cat "$M/nodes/host1/segments/scratch/size")" 1048576
expect_eq "scratch not exported" "$(cat "$M/nodes/host1/segments/scratch/available")" 0
# A restart applies it all again and changes nothing.
echo host1 > "$M/dev/acc0/borrow"
before=$(cd "$M" && cat dev/*/lend dev/*/mode dev/*/borrow nodes/*/segments/*/size)
start_post
expect_eq "state after a second start" \
	"$(cd "$M" && cat dev/*/lend dev/*/mode dev/*/borrow nodes/*/segments/*/size)" "$before"
# A refused write is reported: tmpfiles exits non-zero.
echo 'w /smartio/dev/acc0/mode - - - - exclusive' > "$R/etc/tmpfiles.d/late.conf"
if systemd-tmpfiles --create --root="$R" --prefix=/smartio 2> "$TMP/err"; then
	fail "tmpfiles hid a refused mode change"
fi
expect_eq "mode kept" "$(cat "$M/dev/acc0/mode")" shared
# No segments file: nothing to do.
"$SMARTIO" -m "$M" segment apply --if-exists "$TMP/none.conf" || fail "--if-exists with no file"
echo "PASS: $TEST"
