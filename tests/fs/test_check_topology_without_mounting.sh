#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# smartiofs --check FILE parses a topology file the way a mount would and
# mounts and creates nothing: exit 0 with the counts it declares; a bad
# file is one line naming the file and line, exit 1; a missing one, the
# reason, exit 1.  No fabric directory appears in /dev/shm.
. "$(dirname "$0")/lib.sh"
conf=$sfs_top/contrib/topology/default.conf
before=$(ls /dev/shm | grep -c '^smartio-' || true)

out=$("$SMARTIOFS" --check "$conf") || fail "--check of default.conf: exit $?"
expect_eq "counts" "$out" "$conf: 4 nodes, 8 devices"

printf 'node a id=0 ram=1G\nnode b id=0 ram=1G\n' > "$TMP/dup.conf"
set +e
out=$("$SMARTIOFS" --check "$TMP/dup.conf" 2>&1); rc=$?
set -e
expect_eq "exit of a bad file" "$rc" 1
expect_eq "error of a bad file" "$out" "smartiofs: $TMP/dup.conf: line 2: duplicate id (node 'a'): 'id=0'"

set +e
out=$("$SMARTIOFS" --check="$TMP/none.conf" 2>&1); rc=$?
set -e
expect_eq "exit of a missing file" "$rc" 1
expect_eq "error of a missing file" "$out" "smartiofs: $TMP/none.conf: No such file or directory"

expect_eq "fabric directories" "$(ls /dev/shm | grep -c '^smartio-' || true)" "$before"
grep -q " fuse.smartiofs " /proc/self/mounts && grep " fuse.smartiofs " /proc/self/mounts | grep -q "$TMP" &&
	fail "something was mounted"
echo "PASS: $TEST"
