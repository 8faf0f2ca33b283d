#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check_stress.sh MAKE TARGET...: runs each target in turn, all of them,
# with its time, and fails at the end if any failed.
set -u
make=$1; shift
failed=""
summary=""
for t in "$@"; do
	start=$(date +%s)
	echo "=== make $t"
	if $make "$t"; then r=PASS; else r=FAIL; failed="$failed $t"; fi
	summary="$summary
$r: make $t ($(( $(date +%s) - start )) s)"
done
echo "=== check-stress summary$summary"
[ -z "$failed" ] || { echo "check-stress: failed:$failed"; exit 1; }
