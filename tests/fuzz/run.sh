#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh SECONDS OUTDIR HARNESS CORPUS "LIBFUZZER OPTIONS"
# Runs one libFuzzer harness for a bounded time on a scratch copy of its
# seed corpus (the committed corpus stays as it is) and prints one line.
# A crash leaves its input in OUTDIR and makes this fail.
set -eu
secs=$1 out=$2 harness=$3 corpus=$4 opts=$5
name=$(basename "$harness")
work="$out/$name"
rm -rf "$work"
mkdir -p "$work/corpus"
cp "$corpus"/* "$work/corpus/"
status=0
# shellcheck disable=SC2086
"$harness" -max_total_time="$secs" -print_final_stats=1 \
	-artifact_prefix="$work/" $opts "$work/corpus" >"$work/log" 2>&1 || status=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
if [ "$status" -ne 0 ]; then
	tail -n 40 "$work/log"
	echo "FAIL: $name after ${runs:-?} inputs; reproducer(s): $(ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* 2>/dev/null | tr '\n' ' ')"
	exit 1
fi
echo "PASS: $name: ${runs:-?} inputs in ${secs}s, corpus $(ls "$work/corpus" | wc -l) entries, no crash"
