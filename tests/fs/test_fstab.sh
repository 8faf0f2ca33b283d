#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Mounting the way fstab does, through mount.fuse3: the options arrive as
# -o fabric=,node=,topology= and the source may name the fabric.  Also the
# startup errors: one line on stderr and exit status 1.
. "$(dirname "$0")/lib.sh"
M3=$(command -v mount.fuse3 || echo /sbin/mount.fuse3)
[ -x "$M3" ] || { echo "SKIP: $TEST: mount.fuse3 is missing"; exit 77; }
conf="$(dirname "$0")/walkthrough.conf"
conf=$(cd "$(dirname "$conf")" && pwd)/$(basename "$conf")

# "smartiofs#<fabric>" as the fstab source; node and topology as -o options.
mkdir -p "$TMP/m0" "$TMP/m1"
"$M3" "$SMARTIOFS#$FABRIC" "$TMP/m0" -o "node=host2,topology=$conf" ||
	fail "mount.fuse3 of node host2 failed"
DAEMONS="$DAEMONS $(pgrep -f "^$SMARTIOFS $FABRIC $TMP/m0" || true)"
is_mounted "$TMP/m0" || fail "not mounted after mount.fuse3 returned"
expect_eq "self" "$(readlink "$TMP/m0/self")" "nodes/host2"
expect_eq "topology used" "$(cat "$TMP/m0/dev/nvme0/node")" "host2"
grep " $TMP/m0 " /proc/mounts | grep -q "fuse.smartiofs" || fail "type is not fuse.smartiofs"
# The source names the fabric and node, so findmnt tells mounts apart.
expect_eq "source of m0" "$(awk -v m="$TMP/m0" '$2 == m { print $1 }' /proc/mounts)" "$FABRIC:host2"

# Source "none", everything in -o (type fuse.smartiofs entries).
"$M3" "$SMARTIOFS#none" "$TMP/m1" -o "fabric=$FABRIC,node=host3,allow_other" ||
	fail "mount.fuse3 with fabric= failed"
expect_eq "self of second" "$(readlink "$TMP/m1/self")" "nodes/host3"
expect_eq "source of m1" "$(awk -v m="$TMP/m1" '$2 == m { print $1 }' /proc/mounts)" "$FABRIC:host3"
expect_eq "host2 seen by host3" "$(cat "$TMP/m1/nodes/host2/state")" "up"
echo all > "$TMP/m0/dev/nvme0/lend"	# host2's device: its mount lends
expect_eq "lend through fstab mounts" "$(cat "$TMP/m1/dev/nvme0/lend")" "all"
fusermount3 -u "$TMP/m1"
fusermount3 -u "$TMP/m0"

# Startup errors.
err() {	# err WANT-SUBSTRING ARGS...
	want=$1; shift
	set +e
	out=$("$SMARTIOFS" "$@" 2>&1 >/dev/null); rc=$?
	set -e
	[ $rc = 1 ] || fail "smartiofs $*: exit status $rc, want 1"
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "smartiofs $*: '$out' is not one line"
	case $out in *"$want"*) ;; *) fail "smartiofs $*: '$out' lacks '$want'";; esac
}
printf 'node a id=0\nnode b id=0\n' > "$TMP/bad.conf"
mkdir -p "$TMP/m2"
err "unknown node 'hostX'" --fabric "$FABRIC-e1" --node hostX "$TMP/m2"
err "line 2" --fabric "$FABRIC-e2" --topology "$TMP/bad.conf" "$TMP/m2"
err "No such file or directory" --fabric "$FABRIC-e3" "$TMP/nonexistent"
err "No such file or directory" --fabric "$FABRIC-e4" --topology "$TMP/none.conf" "$TMP/m2"
err "no mountpoint" --fabric "$FABRIC-e5"
is_mounted "$TMP/m2" && fail "a failed start left a mount"
# A second daemon for a fabric that one serves whole: no --node hint (no
# node is left to join); where its mounts are named instead.
mount_sfs "$TMP/m4" --fabric "$FABRIC-e6"
err "fabric '$FABRIC-e6' exists and a live process serves it (findmnt -t fuse.smartiofs shows the mounts serving '$FABRIC-e6')" \
	--fabric "$FABRIC-e6" "$TMP/m2"
is_mounted "$TMP/m2" && fail "a refused start left a mount"
# A mount whose daemon was killed: the way out, not ENOTCONN's words.
mount_sfs "$TMP/m5" --fabric "$FABRIC-e7"
kill -KILL "$LAST_PID"; wait "$LAST_PID" 2>/dev/null || true
err "$TMP/m5: a stale mount whose daemon is gone: run fusermount3 -u $TMP/m5 first" \
	--fabric "$FABRIC-e7" "$TMP/m5"
rm -rf "/dev/shm/smartio-$FABRIC-e"*
echo "PASS: $TEST"
