#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The portable core must call nothing outside itself except memcpy/memset/
# memcmp (which the kernel also provides): everything else goes through its
# platform ops.  Links lib/core/*.c into one object and lists what it needs.
set -eu
src=${SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-cc}
for f in "$src"/lib/core/*.c; do
	$cc -std=c11 -O2 -ffreestanding -fno-builtin-printf -Wall -Wextra -Werror \
		-c "$f" -o "$tmp/$(basename "$f" .c).o"
done
ld -r -o "$tmp/core.o" "$tmp"/*.o
undefined=$(nm -u "$tmp/core.o" | awk '{print $2}' | grep -v -x -E 'memcpy|memset|memcmp' || true)
if [ -n "$undefined" ]; then
	echo "FAIL: the core calls outside its platform ops: $undefined"
	exit 1
fi
echo "PASS: lib/core needs only memcpy/memset/memcmp"
echo "1 passed, 0 failed"
