# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the shell tests of smartiofs; sourced, not run.
#   SMARTIOFS  the daemon to test (default: fs/smartiofs of the build tree)
#   SMARTIOFS_WRAPPER  a command that mount_sfs runs the daemon under, such
#              as valgrind (make check-valgrind); mounting may then be slow
# Every test mounts real FUSE file systems under a temporary directory, uses
# a fabric name of its own and unmounts everything on exit.
set -eu

sfs_top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${SMARTIOFS:-}" ]; then
	for c in "${BUILDDIR:-.}/fs/smartiofs" "$sfs_top/fs/smartiofs"; do
		if [ -x "$c" ]; then SMARTIOFS=$c; break; fi
	done
fi
if [ ! -c /dev/fuse ]; then echo "SKIP: /dev/fuse is missing"; exit 77; fi
if ! command -v fusermount3 >/dev/null; then
	echo "SKIP: fusermount3 is missing"; exit 77
fi
if [ ! -x "${SMARTIOFS:-}" ]; then echo "FAIL: smartiofs is not built"; exit 1; fi
SMARTIOFS=$(cd "$(dirname "$SMARTIOFS")" && pwd)/$(basename "$SMARTIOFS")

TEST=$(basename "$0" .sh)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sfs-$TEST.XXXXXX")
FABRIC="t$$-$TEST"
DAEMONS=""

sfs_cleanup() {
	local m
	# Every mount below $TMP as the kernel lists it, deepest first:
	# a path through a symlink may not be the one fusermount3 finds.
	for m in $(awk -v t="$TMP/" 'index($2, t) == 1 { print $2 }' \
		/proc/self/mounts | sort -r); do
		fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	for p in $DAEMONS; do kill "$p" 2>/dev/null || true; done
	rm -rf "$TMP" "/dev/shm/smartio-$FABRIC"
}
trap sfs_cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $TEST: $*"
	if [ -s "$TMP/daemon.log" ]; then sed 's/^/  daemon: /' "$TMP/daemon.log"; fi
	exit 1
}

is_mounted() {
	grep -q " $1 fuse" /proc/mounts
}

# mount_sfs DIR [smartiofs options]: a daemon in the foreground (in the
# background of this shell); its pid is left in $LAST_PID.
mount_sfs() {
	dir=$1; shift
	mkdir -p "$dir"
	# shellcheck disable=SC2086 # the wrapper is a command line
	${SMARTIOFS_WRAPPER:-} "$SMARTIOFS" -f "$@" "$dir" 2>>"$TMP/daemon.log" &
	LAST_PID=$!
	DAEMONS="$DAEMONS $LAST_PID"
	i=0 limit=600	# 30 s: a bound for a loaded machine, not a timing
	[ -z "${SMARTIOFS_WRAPPER:-}" ] || limit=1000
	while ! is_mounted "$dir"; do
		i=$((i + 1))
		[ $i -lt $limit ] || fail "mounting $dir timed out"
		kill -0 "$LAST_PID" 2>/dev/null || fail "smartiofs $* exited"
		sleep 0.05
	done
}

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}
