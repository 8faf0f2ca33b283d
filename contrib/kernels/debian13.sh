#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Debian 13's Linux 6.12 on a Debian 12 machine, to build smartio's
# modules for it and boot it in the QEMU tests:
#
#   contrib/kernels/debian13.sh OUT
#
# OUT/root is a minimal Debian 13 (trixie) system -- gcc-14, make, kmod,
# pahole, dkms -- made by debootstrap, into which Debian 13's packages
# linux-headers, linux-kbuild, linux-image (unsigned: vmlinuz and the
# modules) and linux-source are unpacked at their usual paths;
# OUT/kver names the kernel (e.g. 6.12.117+deb13-amd64).  Those packages
# come through a private apt configuration (sources list, lists and
# cache under OUT/apt): the machine's apt configuration is read for its
# mirror and never changed.  contrib/kernels/in-root.sh runs a build
# inside OUT/root.  Re-running reuses every step already done.
#
# Why a root and not only the headers (measured on Debian 12, glibc 2.36):
# the headers package's host programs (scripts/basic/fixdep, modpost) do
# run here (they need GLIBC_2.34 at most), but Debian 13 configured its
# kernel for gcc-14 and the kbuild flags say so (-fmin-function-alignment),
# which Debian 12's gcc-12 refuses.  Preparing linux-source-6.12 with
# gcc-12 would build modules with another compiler than the kernel's; the
# root builds them the way a Debian 13 machine (and its DKMS) does.
#
# Exit 77 when debootstrap is missing or the mirror has no trixie.
set -eu
out=${1:?usage: debian13.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$out/root
apt=$out/apt
[ "$(id -u)" -eq 0 ] || { echo "SKIP: debian13.sh must run as root"; exit 77; }
command -v debootstrap >/dev/null ||
	{ echo "SKIP: no debootstrap (apt-get install debootstrap)"; exit 77; }

# The mirror the machine's own Debian lines name (deb822 or one-line).
mirror=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list \
	     2>/dev/null |
	 sed -n 's/^URIs: *//p; s/^deb  *\(\[[^]]*\] *\)\{0,1\}\([^ ]*\) .*/\2/p' |
	 grep '/debian/*$' | head -n 1)
mirror=${DEBIAN13_MIRROR:-$mirror}
[ -n "$mirror" ] || { echo "debian13.sh: no Debian mirror in /etc/apt"; exit 1; }

t0=$(date +%s)
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/dl"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" \
	>"$apt/sources.list"
set -- -o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=- \
	-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" \
	-o APT::Sandbox::User=root
if [ ! -s "$out/kver" ]; then
	apt-get -qq "$@" update ||
		{ echo "SKIP: no trixie at $mirror"; exit 77; }
	# linux-image-amd64 depends on exactly one linux-image-<kver>.
	kver=$(apt-cache "$@" depends linux-image-amd64 |
	       sed -n 's/^ *Depends: linux-image-\(6\.[0-9.]*+deb13-amd64\)$/\1/p' |
	       head -n 1)
	[ -n "$kver" ] || { echo "debian13.sh: no 6.x linux-image-amd64 in trixie"; exit 1; }
	abi=${kver%-amd64}			# 6.12.117+deb13
	series=$(echo "$kver" | cut -d. -f1-2)	# 6.12
	(cd "$apt/dl" && apt-get -qq "$@" download "linux-headers-$kver" \
		"linux-headers-$abi-common" "linux-kbuild-$abi" \
		"linux-image-$kver-unsigned" "linux-source-$series")
fi
kver=${kver:-$(cat "$out/kver")}

if [ ! -f "$root/.bootstrapped" ]; then
	rm -rf "$root"
	debootstrap --variant=minbase \
		--include=gcc-14,make,libelf-dev,kmod,pahole,xz-utils,dkms \
		trixie "$root" "$mirror" >"$out/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$out/debootstrap.log"; exit 1; }
	touch "$root/.bootstrapped"
fi
if [ ! -f "$root/.unpacked" ]; then
	for deb in "$apt"/dl/*.deb; do
		dpkg-deb -x "$deb" "$root"
	done
	# What the image's postinst would do: the modules' dependencies.
	chroot "$root" depmod "$kver"
	touch "$root/.unpacked"
fi
echo "$kver" >"$out/kver"
echo "debian13: $kver in $root ($(($(date +%s) - t0)) s)"
