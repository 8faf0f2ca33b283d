#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every man page renders cleanly with both formatters a reader may have:
# mandoc's linter at warning level finds nothing; groff (man-db's default
# on Debian) warns of nothing at 80 and 120 columns; and every .Bl -column
# table reads the same under groff as under mandoc, word for word, at both
# widths.  groff places columns by their width strings and lets a longer
# cell run into the next one ("yesno", "read, writeread") without a
# warning; mandoc widens the column, so the two disagree exactly there.
set -eu
src=${SRCDIR:-.}
command -v mandoc >/dev/null || { echo "SKIP: mandoc not installed"; exit 77; }
command -v groff >/dev/null || { echo "SKIP: groff not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The words of a rendering, one a line: no page header or footer, no
# formatting, words broken at a hyphen joined again (groff breaks
# "peer-mapping" after its hyphen where mandoc does not; a break it
# hyphenates itself ends in U+2010, which goes).
words() {
	sed '1d;$d' | tr -s ' \t' '\n\n' | grep -v '^$' |
		sed -e ':a' -e '/‐$/{N;s/‐\n//;ba' -e '}' \
		    -e ':b' -e '/[^ -]-$/{N;s/-\n/-/;bb' -e '}' || true
}

# Each .Bl -column table of page $1 as a page of its own: $tmp/tableN.7.
split_tables() {
	rm -f "$tmp"/table*.7
	awk -v dir="$tmp" '
	/^\.Bl -column/ { n++; f = dir "/table" n ".7"; inl = 1
		print ".Dd January 1, 2026\n.Dt TABLE 7\n.Os\n.Sh TABLE" > f }
	inl { print > f }
	inl && /^\.El/ { inl = 0; close(f) }' "$1"
}

pass=0 fail=0
for page in "$src"/man/*.[1-9]; do
	problems=
	out=$(mandoc -Tlint -W warning "$page" 2>&1) || true
	[ -z "$out" ] || problems="$problems
mandoc -Tlint:
$out"
	split_tables "$page"
	for cols in 80 120; do
		ll=$((cols - 2))
		out=$(LC_ALL=C.UTF-8 groff -mandoc -Tutf8 -ww -z -rLL=${ll}n "$page" 2>&1) || true
		[ -z "$out" ] || problems="$problems
groff at $cols columns:
$out"
		for t in "$tmp"/table*.7; do
			[ -f "$t" ] || continue
			LC_ALL=C.UTF-8 groff -mandoc -Tutf8 -rLL=${ll}n -P-cbou "$t" 2>/dev/null |
				words >"$tmp/g"
			mandoc -Tutf8 -Owidth=$cols "$t" | col -b | words >"$tmp/m"
			if ! out=$(diff "$tmp/g" "$tmp/m"); then
				problems="$problems
table $(sed -n 5p "$t") at $cols columns, groff (<) against mandoc (>):
$out"
			fi
		done
	done
	if [ -z "$problems" ]; then
		pass=$((pass + 1))
	else
		echo "FAIL: $page$problems"; fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
