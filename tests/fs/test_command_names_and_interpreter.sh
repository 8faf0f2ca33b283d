#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The commands as a user meets them (issue 32, item 8): smartiofs --help
# names smartiofs, not the path it was started by (libtool's
# fs/.libs/smartiofs in a build tree); and the smartio script that make
# writes starts for any user, whatever Python configure found: made with a
# PYTHON that only its owner can run (a pyenv in a home directory, here a
# link in a mode-0700 directory), it still runs as nobody.
. "$(dirname "$0")/lib.sh"
build=${BUILDDIR:-$sfs_top}

line=$("$SMARTIOFS" --help | head -n 1)
expect_eq "usage line" "$line" "usage: smartiofs [options] [SOURCE] MOUNTPOINT"

command -v setpriv > /dev/null || { echo "SKIP: $TEST: no setpriv"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: $TEST: the run as nobody needs root"; exit 77; }
sys_py=$(command -v python3)
mkdir -m 0700 "$TMP/private"
ln -s "$sys_py" "$TMP/private/python3"
# make writes the script again (-W: as if its source had changed) with
# that PYTHON; then it must not name $TMP/private.
make -s -C "$build" -W python/scripts/smartio.in python/scripts/smartio \
	PYTHON="$TMP/private/python3" > "$TMP/make.log" 2>&1 ||
	fail "make python/scripts/smartio: $(cat "$TMP/make.log")"
script=$build/python/scripts/smartio
first=$(head -n 1 "$script")
case $first in *"$TMP"*) fail "the script's interpreter is the private Python: $first";; esac
# nobody runs it from a directory it may enter, with a package it may read.
mkdir "$TMP/lib"
cp -r "$sfs_top/python/smartio" "$TMP/lib/"
chmod -R a+rX "$TMP/lib"
chmod 0711 "$TMP"
cp "$script" "$TMP/smartio"
chmod 0755 "$TMP/smartio"
out=$(cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups \
	env -i PATH=/usr/local/bin:/usr/bin:/bin PYTHONPATH="$TMP/lib" \
	"$TMP/smartio" --help 2>&1) || fail "nobody cannot run smartio ($first): $out"
case $out in "usage: smartio "*) ;; *) fail "smartio --help as nobody: $out";; esac
echo "PASS: $TEST"
