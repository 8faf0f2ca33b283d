#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# smartiofs --check FILE parses a topology file the way a mount would and
# mounts and creates nothing: exit 0 with the counts it declares; a bad
# file is one line naming the file and line, exit 1; a missing one, the
# reason, exit 1.  No fabric directory appears in /dev/shm: neither the
# one this test names with --fabric nor a new one of the default fabric
# (other tests, of this run or another, make and remove fabrics of their
# own meanwhile, so a count of all of them is no measure).
. "$(dirname "$0")/lib.sh"
conf=$sfs_top/contrib/topology/default.conf
default_before=$(ls -d /dev/shm/smartio-default* 2>/dev/null || true)
SMARTIOFS_CHECK() { "$SMARTIOFS" --fabric "$FABRIC" "$@"; }

out=$(SMARTIOFS_CHECK --check "$conf") || fail "--check of default.conf: exit $?"
expect_eq "counts" "$out" "$conf: 4 nodes, 8 devices"

printf 'node a id=0 ram=1G\nnode b id=0 ram=1G\n' > "$TMP/dup.conf"
set +e
out=$(SMARTIOFS_CHECK --check "$TMP/dup.conf" 2>&1); rc=$?
set -e
expect_eq "exit of a bad file" "$rc" 1
expect_eq "error of a bad file" "$out" "smartiofs: $TMP/dup.conf: line 2: duplicate id (node 'a'): 'id=0'"

set +e
out=$(SMARTIOFS_CHECK --check="$TMP/none.conf" 2>&1); rc=$?
set -e
expect_eq "exit of a missing file" "$rc" 1
expect_eq "error of a missing file" "$out" "smartiofs: $TMP/none.conf: No such file or directory"

expect_eq "this test's fabric directories" "$(ls -d "/dev/shm/smartio-$FABRIC"* 2>/dev/null || true)" ""
expect_eq "default fabric directories" "$(ls -d /dev/shm/smartio-default* 2>/dev/null || true)" "$default_before"
grep -q " fuse.smartiofs " /proc/self/mounts && grep " fuse.smartiofs " /proc/self/mounts | grep -q "$TMP" &&
	fail "something was mounted"
echo "PASS: $TEST"
