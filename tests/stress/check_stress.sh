#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check_stress.sh MAKE TARGET...: runs each target in turn, all of them,
# with its time, and fails at the end if any failed.  A target that could
# not run says so with a line "TARGET: SKIPPED" and exits 0 (fuzz-genl
# without QEMU, tests/kmod/kmod.mk); it is summed up as SKIP, never as
# PASS, and named on a last "check-stress: skipped:" line.
set -u
make=$1; shift
failed=""
skipped=""
summary=""
log=$(mktemp "${TMPDIR:-/tmp}/check-stress.XXXXXX") || exit 1
trap 'rm -f "$log" "$log.rc"' EXIT
for t in "$@"; do
	start=$(date +%s)
	echo "=== make $t"
	# The output goes on as it comes and into $log, read for the skip
	# line; the exit status of make, not of tee, comes through $log.rc.
	{ $make "$t"; echo $? >"$log.rc"; } 2>&1 | tee "$log"
	if [ "$(cat "$log.rc")" != 0 ]; then
		r=FAIL; failed="$failed $t"
	elif grep -qx "$t: SKIPPED" "$log"; then
		r=SKIP; skipped="$skipped $t"
	else
		r=PASS
	fi
	summary="$summary
$r: make $t ($(( $(date +%s) - start )) s)"
done
echo "=== check-stress summary$summary"
[ -z "$skipped" ] || echo "check-stress: skipped:$skipped"
[ -z "$failed" ] || { echo "check-stress: failed:$failed"; exit 1; }
