#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs a command inside the Debian 13 root of contrib/kernels/debian13.sh,
# with the directories named bind-mounted at their own paths (so paths
# and symbolic links mean the same inside and out):
#
#   contrib/kernels/in-root.sh ROOT DIR... -- COMMAND [ARG...]
#
# The mounts live in a private mount namespace that ends with the
# command: nothing stays mounted on the machine, even after a kill.
# TMPDIR is the machine's, not the root's: the command gets the root's /tmp.
set -eu
root=$(cd "${1:?usage: in-root.sh ROOT DIR... -- COMMAND}" && pwd)
shift
dirs=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	d=$(cd "$1" && pwd)
	dirs="$dirs $d"
	shift
done
[ "${1:-}" = -- ] || { echo "in-root.sh: no -- before the command" >&2; exit 2; }
shift
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare -m --propagation private sh -c '
	root=$1 dirs=$2
	shift 2
	mount -t proc proc "$root/proc"
	for d in $dirs; do
		mkdir -p "$root$d"
		mount --bind "$d" "$root$d"
	done
	unset TMPDIR
	exec chroot "$root" "$@"' in-root "$root" "$dirs" "$@"
