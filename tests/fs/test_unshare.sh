#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Each simulated host with its own /smartio: two daemons of one fabric in
# two mount namespaces (unshare -m), mounted at the same path; commands run
# inside each namespace with nsenter.
. "$(dirname "$0")/lib.sh"
if ! command -v nsenter >/dev/null || ! unshare -m --propagation private true 2>/dev/null; then
	echo "SKIP: $TEST: unshare -m is not available"; exit 77
fi
S=$TMP/smartio
mkdir -p "$S"

start() {	# start NODE: a daemon in a new mount namespace; prints its pid
	unshare -m --propagation private sh -c \
		'"$1" -f --fabric "$2" --node "$3" "$4" 2>>"$5" & echo $! > "$6"; wait' \
		sh "$SMARTIOFS" "$FABRIC" "$1" "$S" "$TMP/daemon.log" "$TMP/pid.$1" &
	i=0
	while [ ! -s "$TMP/pid.$1" ] || ! nsenter -t "$(cat "$TMP/pid.$1")" -m \
			grep -q " $S fuse" /proc/mounts 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "$1 did not mount"
		sleep 0.05
	done
	DAEMONS="$DAEMONS $(cat "$TMP/pid.$1")"
}
on() {	# on NODE COMMAND...: run in NODE's mount namespace
	n=$1; shift
	nsenter -t "$(cat "$TMP/pid.$n")" -m "$@"
}

start host0
start host1
grep -q " $S fuse" /proc/mounts && fail "a namespaced mount leaked into the test's namespace"
expect_eq "host0's self" "$(on host0 readlink "$S/self")" "nodes/host0"
expect_eq "host1's self" "$(on host1 readlink "$S/self")" "nodes/host1"
on host0 sh -c "echo all > $S/dev/nvme0/lend"
on host1 sh -c "echo host1 > $S/dev/nvme0/borrow"
expect_eq "borrow seen by host0" "$(on host0 cat "$S/dev/nvme0/borrow")" "host1"
on host1 test -L "$S/dev/nvme0/bar0" || fail "no bar0 in host1's /smartio"
on host1 sh -c "echo host1 > $S/dev/nvme0/return"
for n in host0 host1; do
	on "$n" fusermount3 -u "$S" || true
done
echo "PASS: $TEST"
