#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Nothing that `make install` writes lands outside the directories configure
# was given: every file of a staged install (DESTDIR=STAGE) lies under the
# prefix, the exec prefix, the sysconfdir or the localstatedir.  A path taken
# from another package (nbdkit.pc's plugindir once put a plugin in /usr/lib
# under the default /usr/local) shows up here as a file outside them all.
#
#   check_install_prefix.sh STAGE PREFIX [EXEC_PREFIX SYSCONFDIR LOCALSTATEDIR]
set -eu
[ $# -ge 2 ] || { echo "usage: $0 STAGE PREFIX [DIR...]" >&2; exit 2; }
stage=$1; shift
[ -d "$stage" ] || { echo "$0: no staged install at $stage" >&2; exit 2; }
total=0 outside=0
list=$(mktemp); trap 'rm -f "$list"' EXIT
(cd "$stage" && find . \( -type f -o -type l \) | sed 's|^\.||') >"$list"
while IFS= read -r path; do
	total=$((total + 1))
	ok=no
	for root in "$@"; do
		root=${root%/}
		case $path in "$root"/*) ok=yes; break ;; esac
	done
	if [ "$ok" = no ]; then
		echo "outside the prefix: $path"
		outside=$((outside + 1))
	fi
done <"$list"
[ "$total" -gt 0 ] || { echo "$0: the staged install is empty" >&2; exit 1; }
echo "$total files installed, $outside outside $*"
[ "$outside" -eq 0 ]
