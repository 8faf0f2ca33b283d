#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every function that lib/smartio.h declares is documented in libsmartio(3),
# and the page documents no function that does not exist.
set -eu
src=${SRCDIR:-.}
hdr="$src/lib/smartio.h"
page="$src/man/libsmartio.3"
declared=$(grep -o '\bsmartio_[a-z_]*(' "$hdr" | tr -d '(' | sort -u)
documented=$(sed -n 's/^\.Fn \(smartio_[a-z_]*\).*/\1/p' "$page" | sort -u)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' "$declared" >"$tmp/declared"
printf '%s\n' "$documented" >"$tmp/documented"
undocumented=$(comm -23 "$tmp/declared" "$tmp/documented")
stale=$(comm -13 "$tmp/declared" "$tmp/documented")
[ -z "$undocumented" ] || { echo "not in libsmartio(3):"; echo "$undocumented"; }
[ -z "$stale" ] || { echo "in libsmartio(3) but not in smartio.h:"; echo "$stale"; }
[ -z "$undocumented$stale" ] || exit 1
echo "$(wc -l <"$tmp/declared") functions documented"
