#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The smartio Python package's pytest suite (tests/python) against real
# smartiofs mounts of private fabrics.  First python/pyproject.toml is
# checked to build an installable package: pip installs a copy of python/
# into a scratch directory (offline, no build isolation), from which
# `import smartio` and the `smartio` entry point work.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/pyfind.sh"
py=$(pyfind pytest python3-pytest)
[ -c /dev/fuse ] || { echo "SKIP: /dev/fuse is missing"; exit 77; }
src=$here/../../python

pip_py=
for p in "$py" python3 /usr/bin/python3; do
	if "$p" -c 'import setuptools, wheel' 2>/dev/null && "$p" -m pip --version > /dev/null 2>&1; then pip_py=$p; break; fi
done
if [ -n "$pip_py" ]; then
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_python_package.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	mkdir "$tmp/src"
	cp -r "$src/pyproject.toml" "$src/smartio" "$tmp/src/"
	"$pip_py" -m pip install -q --no-index --no-deps --no-build-isolation \
		--target "$tmp/inst" "$tmp/src" > "$tmp/pip.log" 2>&1 ||
		{ echo "FAIL: pip install of python/: $(cat "$tmp/pip.log")"; exit 1; }
	got=$(cd "$tmp" && PYTHONPATH="$tmp/inst" "$pip_py" -c \
		'import smartio; print(smartio.__file__); print(smartio.Cluster, smartio.SmartioError)') ||
		{ echo "FAIL: import smartio from the installed package"; exit 1; }
	case $got in
	"$tmp/inst/smartio/__init__.py"*Cluster*SmartioError*) ;;
	*) echo "FAIL: the installed package: $got"; exit 1;;
	esac
	PYTHONPATH="$tmp/inst" "$tmp/inst/bin/smartio" --help | grep -q '^usage: smartio ' ||
		{ echo "FAIL: the installed smartio entry point"; exit 1; }
	echo "pyproject: installed with $pip_py"
else
	echo "pyproject: not checked (pip, setuptools and wheel missing: apt-get install python3-pip python3-wheel)"
fi

export PYTHONPATH="$src${PYTHONPATH:+:$PYTHONPATH}"
"$py" -m pytest -q -p no:cacheprovider "$here/../python"
