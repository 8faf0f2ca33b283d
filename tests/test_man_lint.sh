#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every man page passes mandoc's linter at warning level.
set -eu
src=${SRCDIR:-.}
command -v mandoc >/dev/null || { echo "SKIP: mandoc not installed"; exit 77; }
pass=0 fail=0
for page in "$src"/man/*.[1-9]; do
	if out=$(mandoc -Tlint -W warning "$page" 2>&1) && [ -z "$out" ]; then
		pass=$((pass + 1))
	else
		echo "FAIL: $page"; echo "$out"; fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
