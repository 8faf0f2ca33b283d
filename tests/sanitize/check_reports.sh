#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check_reports.sh asan|valgrind DIR
# Fails when a sanitizer or valgrind log in DIR holds a report: those of
# daemons and child processes are seen by no test's exit status.
set -eu
kind=$1 dir=$2
bad=""
for f in "$dir"/*; do
	[ -s "$f" ] || continue
	case $kind in
	asan) bad="$bad $f" ;;	# a log file exists only when there is a report
	valgrind)
		# --quiet leaves only errors and definite leaks in the log
		grep -q '^==[0-9]*== ' "$f" && bad="$bad $f" ;;
	esac
done
n=$(ls "$dir" | wc -l)
if [ -n "$bad" ]; then
	for f in $bad; do echo "=== $f"; head -n 60 "$f"; done
	echo "FAIL: $kind: reports in$bad"
	exit 1
fi
echo "PASS: $kind: no report ($n log files in $dir)"
