#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every name the tables of smartiofs define (attribute files, special files,
# named directories: `smartiofs --list-attributes`) is an item of THE TREE
# in smartio(7).  A file added to a table without its paragraph fails here.
set -eu
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
page="$src/man/smartio.7"
sfs=${SMARTIOFS:-$build/fs/smartiofs}
[ -x "$sfs" ] || { echo "FAIL: $sfs is not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$sfs" --list-attributes >"$tmp/paths"
# A listing that lost its tables must not pass as "nothing missing".
grep -qx 'dev/<dev>/lend' "$tmp/paths" ||
	{ echo "FAIL: --list-attributes lists no dev/<dev>/lend"; exit 1; }

# The last component of each path; a directory keeps its '/'.
sed -e 's|^\(.*/\)\{0,1\}\([^/]*/\{0,1\}\)$|\2|' "$tmp/paths" | sort -u \
	>"$tmp/defined"

# The names that items of THE TREE give: ".It Pa a , b , Pa c Ns Ar x"
# names a, b and c (what follows Pa or a comma, up to the next macro).
awk '/^\.Sh / { tree = ($0 == ".Sh THE TREE") }
     tree && /^\.It Pa / {
	take = 0
	for (i = 2; i <= NF; i++) {
		if ($i == "Pa" || $i == ",") { take = 1; continue }
		if (take && $i !~ /^[A-Z][a-z]$/) print $i
		take = 0
	}
     }' "$page" | sort -u >"$tmp/documented"

missing=$(comm -23 "$tmp/defined" "$tmp/documented")
if [ -n "$missing" ]; then
	echo "FAIL: defined by smartiofs but not an item of THE TREE in smartio(7):"
	for m in $missing; do grep -e "/$m\$" -e "^$m\$" "$tmp/paths"; done
	exit 1
fi
echo "$(wc -l <"$tmp/defined") names, each documented in smartio(7)"
