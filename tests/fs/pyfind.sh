# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by tests that need a Python module from a Debian package:
# pyfind MODULE prints the first Python 3 that imports it (the configured
# one, python3 on PATH, then Debian's /usr/bin/python3, where python3-*
# packages install), or exits 77 (skip) naming the package to install.
# shellcheck shell=bash
pyfind() {	# pyfind MODULE DEBIAN-PACKAGE
	local py
	for py in "${PYTHON3:-}" python3 /usr/bin/python3; do
		[ -n "$py" ] || continue
		if "$py" -c "import $1" 2>/dev/null; then
			command -v "$py"
			return 0
		fi
	done
	echo "SKIP: $(basename "$0"): Python module $1 missing: apt-get install $2 (contrib/deps.sh lists it)"
	exit 77
}
