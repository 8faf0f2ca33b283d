#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# An example is installed as an example: every file of a staged install
# (DESTDIR=STAGE) whose name says "example" lies in EXAMPLES (DOCDIR/
# examples), never where it would take effect (90-smartio-example.rules
# once went live into lib/udev/rules.d).
#
#   check_install_examples.sh STAGE EXAMPLES
set -eu
[ $# -eq 2 ] || { echo "usage: $0 STAGE EXAMPLES" >&2; exit 2; }
stage=$1 examples=${2%/}
found=0 live=0
list=$(mktemp); trap 'rm -f "$list"' EXIT
(cd "$stage" && find . \( -type f -o -type l \) -name '*example*' | sed 's|^\.||') >"$list"
while IFS= read -r path; do
	found=$((found + 1))
	case $path in
	"$examples"/*) ;;
	*) echo "an example installed where it takes effect: $path"; live=$((live + 1)) ;;
	esac
done <"$list"
[ "$found" -gt 0 ] || { echo "$0: no example installed at all" >&2; exit 1; }
echo "$found examples installed, $live outside $examples"
[ "$live" -eq 0 ]
