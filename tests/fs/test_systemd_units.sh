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

# One segments file: the one the units as built apply is the one that
# `smartio segment apply` reads when none is named (configure's sysconfdir;
# smartio(1), FILES).
built=${BUILDDIR:-$sfs_top}/contrib/systemd
for u in smartiofs smartiofs-kernel; do
	[ -f "$built/$u.service" ] || fail "$built/$u.service is not built"
	unit_conf=$(sed -n 's/^ExecStartPost=.* segment apply --if-exists //p' "$built/$u.service")
	# (wide: argparse would wrap a long path)
	cli_conf=$(COLUMNS=4096 "$SMARTIO" segment apply --help | sed -n 's/^ *file *default: //p')
	[ -n "$unit_conf" ] || fail "$u.service applies no segments file"
	expect_eq "$u.service's segments file is smartio's default" "$unit_conf" "$cli_conf"
done

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
# Readiness, restart and a stale mount (systemd is not PID 1 here, so the
# lines are checked, and the readiness message below): Type=notify with
# smartiofs in the foreground, Restart=on-failure, and a stale mount
# unmounted (failure ignored) before the daemon starts.
for u in smartiofs smartiofs-kernel; do
	f=$TMP/units/$u.service
	for line in "Type=notify" "NotifyAccess=main" "Restart=on-failure" \
		"ExecStartPre=-/bin/fusermount3 -u -z /smartio"; do
		grep -qx -- "$line" "$f" || fail "$u: no $line"
	done
	grep -q "^ExecStart=$(dirname "$SMARTIOFS")/smartiofs -f " "$f" ||
		fail "$u: smartiofs not in the foreground: $(grep ^ExecStart= "$f")"
	pre=$(grep -n '^ExecStartPre=-/bin/fusermount3' "$f" | cut -d: -f1)
	start=$(grep -n '^ExecStart=' "$f" | cut -d: -f1)
	[ "$pre" -lt "$start" ] || fail "$u: the stale mount is not cleaned first"
done

# sd_notify: READY=1 and the daemon's pid reach $NOTIFY_SOCKET (a path
# socket, then an abstract one) only once the mount is in /proc/mounts.
py=${PYTHON3:-python3}
for kind in path abstract; do
	"$py" - "$SMARTIOFS" "$TMP/nm-$kind" "$FABRIC-notify-$kind" "$TMP/notify-$kind" "$kind" <<'PYEOF' ||
import os, socket, subprocess, sys
daemon, mnt, fabric, sock_path, kind = sys.argv[1:]
os.makedirs(mnt)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
addr = sock_path if kind == "path" else "\0smartio-test-%d" % os.getpid()
s.bind(addr)
s.settimeout(20)
env = dict(os.environ, NOTIFY_SOCKET=addr if kind == "path" else "@" + addr[1:])
p = subprocess.Popen([daemon, "-f", "--fabric", fabric, mnt], env=env)
try:
    msg = s.recv(256).decode()
    mounted = any(l.split()[1] == mnt for l in open("/proc/mounts"))
    want = "READY=1\nMAINPID=%d" % p.pid
    if msg != want or not mounted:
        sys.exit("notify %s: got %r (mounted: %s), want %r" % (kind, msg, mounted, want))
finally:
    subprocess.call(["fusermount3", "-u", mnt])
    p.wait(10)
PYEOF
	fail "sd_notify over a $kind socket"
	rm -rf "/dev/shm/smartio-$FABRIC-notify-$kind"
done
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
# A segments file where the documentation says but not where this smartio
# reads: applying the configured file (as the units do) warns, naming both.
if unshare -m --propagation private true 2>/dev/null; then
	sed "s|^smartio.cli.SEGMENTS_CONF = .*|smartio.cli.SEGMENTS_CONF = \"$TMP/etc/smartio/segments.conf\"|" \
		"$SMARTIO" > "$TMP/smartio-conf"
	chmod +x "$TMP/smartio-conf"
	# /usr/local/etc of a private mount namespace, so the machine's is untouched.
	unshare -m --propagation private sh -c '
		set -e
		mount -t tmpfs tmpfs /usr/local/etc
		mkdir /usr/local/etc/smartio
		echo "host0 lost 1M" > /usr/local/etc/smartio/segments.conf
		"$1" -m "$2" segment apply --if-exists
	' sh "$TMP/smartio-conf" "$M" > "$TMP/out" 2> "$TMP/err" ||
		fail "apply with a file elsewhere: exit $?: $(cat "$TMP/err")"
	grep -q "warning: /usr/local/etc/smartio/segments.conf is not read: .* read $TMP/etc/smartio/segments.conf, which does not exist" "$TMP/err" ||
		fail "no warning of the segments file elsewhere: $(cat "$TMP/err")"
	[ ! -e "$M/nodes/host0/segments/lost" ] || fail "a segments file that is not read was applied"
	# The configured file there too: it is applied, and the other still named.
	mkdir -p "$TMP/etc/smartio"
	echo "host0 found 1M" > "$TMP/etc/smartio/segments.conf"
	unshare -m --propagation private sh -c '
		set -e
		mount -t tmpfs tmpfs /usr/local/etc
		mkdir /usr/local/etc/smartio
		echo "host0 lost 1M" > /usr/local/etc/smartio/segments.conf
		"$1" -m "$2" segment apply --if-exists
	' sh "$TMP/smartio-conf" "$M" > "$TMP/out" 2> "$TMP/err" ||
		fail "apply with both files: exit $?: $(cat "$TMP/err")"
	grep -q "warning: /usr/local/etc/smartio/segments.conf is not read" "$TMP/err" ||
		fail "no warning with both files: $(cat "$TMP/err")"
	[ -d "$M/nodes/host0/segments/found" ] || fail "the configured file was not applied"
	# A file named on the command line elsewhere is the operator's choice: no warning.
	"$SMARTIO" -m "$M" segment apply "$TMP/etc/smartio/segments.conf" 2> "$TMP/err" ||
		fail "apply of a named file: $(cat "$TMP/err")"
	[ ! -s "$TMP/err" ] || fail "a named file warned: $(cat "$TMP/err")"
else
	echo "$TEST: unshare -m unavailable: the warning of a file elsewhere is not checked"
fi

# No segments file: nothing to do.
"$SMARTIO" -m "$M" segment apply --if-exists "$TMP/none.conf" || fail "--if-exists with no file"
echo "PASS: $TEST"
