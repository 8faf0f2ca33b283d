#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds smartio's NTB switch for the QEMU installed here:
#   OUT/smartio-ntb.so      the smartio-ntb-port device, loaded into the
#                           stock qemu-system-x86_64 with LD_PRELOAD
#   OUT/smartio-ntb-switch  the switch process that joins the ports
#   OUT/insn-count.so       a TCG plugin counting the guest's kernel and
#                           user instructions (make bench, insn-count.c)
#
#   contrib/qemu/build.sh [OUT]        (make -C contrib/qemu does this)
#
# The device links against the symbols qemu-system-x86_64 exports, so it
# is compiled against the exact Debian source of the installed binary:
# `apt-get source` through a private sources list, lists and cache under
# OUT/apt (the machine's apt configuration is never read or changed), then
# a configure of that source for x86_64-softmmu with every optional feature
# off, and only the generated headers (config-host.h, QAPI, trace) built.
# The object records the binary's build-id and refuses to load into any
# other build.  Re-running reuses every step already done.
# Exit 77 when QEMU is not installed or its source cannot be fetched
# (no deb-src reachable, or that version left the archive): callers skip.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
qemu=${QEMU:-/usr/bin/qemu-system-x86_64}
pkg=qemu-system-x86
jobs=${NTBSW_JOBS:-2}

[ -x "$qemu" ] || { echo "SKIP: no $qemu (apt-get install $pkg)"; exit 77; }
binver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) || {
	echo "SKIP: $qemu is not from Debian's $pkg package"; exit 77; }
srcver=$(dpkg-query -W -f='${source:Version}' "$pkg")
buildid=$(readelf -n "$qemu" | sed -n 's/.*Build ID: *//p' | head -n 1)
[ -n "$buildid" ] || { echo "build: $qemu has no build-id"; exit 1; }

# What configuring the source needs (Debian packages).
need="meson ninja-build pkg-config libglib2.0-dev libpixman-1-dev libfdt-dev dpkg-dev gcc python3"
missing=
for p in $need; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "build: missing Debian packages:$missing"; exit 1
	fi
	echo "build: installing$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi

t0=$(date +%s)
apt=$out/apt
src=$out/qemu-${srcver#*:}
if [ ! -f "$src/.extracted" ]; then
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/dl"
	# deb-src lines for the suites the machine's own binary lines name.
	# The host's Debian sources are read, never written.
	suites=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
		     /etc/apt/sources.list.d/*.list 2>/dev/null |
		 sed -n 's/^Suites: *//p; s/^deb  *\(\[[^]]*\] *\)\{0,1\}[^ ]*  *\([^ ]*\) .*/\2/p' |
		 tr ' ' '\n' | sort -u)
	uris=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
	       sed -n 's/^URIs: *//p' | sort -u)
	: > "$apt/sources.list"
	for u in $uris; do
		for s in $suites; do
			case "$u:$s" in
			*-security:*-security|*/debian:*) ;;
			*) continue ;;
			esac
			case "$u:$s" in
			*/debian:*-security) continue ;;
			esac
			echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $u $s main" \
				>> "$apt/sources.list"
		done
	done
	[ -s "$apt/sources.list" ] || {
		echo "build: no Debian archive in /etc/apt to take deb-src from"
		exit 1
	}
	aptopts="-o Dir::Etc::SourceList=$apt/sources.list
		 -o Dir::Etc::SourceParts=/dev/null
		 -o Dir::State::Lists=$apt/lists -o Dir::Cache=$apt/cache
		 -o APT::Sandbox::User=root"
	# shellcheck disable=SC2086
	apt-get -q $aptopts update >"$apt/update.log" 2>&1 || {
		cat "$apt/update.log"
		echo "SKIP: apt-get update of the deb-src lists failed (no Debian archive reachable?)"
		exit 77
	}
	# shellcheck disable=SC2086
	(cd "$apt/dl" && apt-get -q $aptopts source --download-only \
		"qemu=$srcver") >"$apt/source.log" 2>&1 || {
		cat "$apt/source.log"
		echo "SKIP: apt-get source qemu=$srcver failed (is $srcver still in the archive?)"
		exit 77
	}
	rm -rf "$src"
	dpkg-source -x "$apt/dl/qemu_${srcver#*:}.dsc" "$src" >"$apt/extract.log"
	touch "$src/.extracted"
fi
t1=$(date +%s)

b=$src/b
if [ ! -f "$b/.headers" ]; then
	rm -rf "$b"
	mkdir -p "$b"
	(cd "$b" && ../configure --target-list=x86_64-softmmu --disable-docs \
		--disable-tools --disable-user --without-default-features \
		--disable-werror --with-git-submodules=ignore) \
		>"$out/configure.log" 2>&1 || {
		tail -30 "$out/configure.log"; echo "build: qemu configure failed"
		exit 1
	}
	# Only the generated headers a device includes.
	hdrs=$(cd "$b" && ninja -t targets all | cut -d: -f1 |
	       grep -E '^((qapi|trace)/[^ ]*\.h|config-poison\.h|qemu-version\.h)$')
	# shellcheck disable=SC2086
	(cd "$b" && ninja -j"$jobs" $hdrs) >"$out/headers.log" 2>&1 || {
		tail -30 "$out/headers.log"; echo "build: generated headers failed"
		exit 1
	}
	touch "$b/.headers"
fi
t2=$(date +%s)

cflags="-m64 -mcx16 -std=gnu11 -O2 -g -fPIC -pthread -Wall -Werror
	-Wno-missing-include-dirs -fno-strict-aliasing -fno-common -fwrapv
	-D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -D_LARGEFILE_SOURCE
	$(pkg-config --cflags glib-2.0 pixman-1)
	-isystem $src/linux-headers -iquote $b -iquote $src
	-iquote $src/include -iquote $src/tcg/i386
	-I$here -I$here/../../kmod/ntb"
# shellcheck disable=SC2086
gcc $cflags -DNTBSW_QEMU_BUILDID="\"$buildid\"" \
	-DNTBSW_QEMU_PKG="\"$binver\"" -shared \
	-o "$out/smartio-ntb.so.tmp" "$here/ntbsw-core.c" "$here/ntbsw-iommu.c" "$here/ntbsw-rid.c" "$here/switchtec-nt.c" \
	"$here/smartio-ntb-port.c" "$here/e1000e-acs.c"
mv "$out/smartio-ntb.so.tmp" "$out/smartio-ntb.so"
gcc -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I"$here" \
	-I"$here/../../kmod/ntb" -o "$out/smartio-ntb-switch" \
	"$here/smartio-ntb-switch.c"
# shellcheck disable=SC2046 # pkg-config's flags are words
gcc -std=gnu11 -O2 -g -fPIC -shared -Wall -Wextra -Wno-unused-parameter \
	-Werror $(pkg-config --cflags glib-2.0) -I"$src/include/qemu" \
	-o "$out/insn-count.so" "$here/insn-count.c" $(pkg-config --libs glib-2.0)
# The user's command: checks the binary before preloading (a different
# binary may lack a symbol, and the loader would fail before the object's
# own check could say why).
cat >"$out/smartio-ntb-qemu" <<WRAP
#!/bin/sh
# qemu-system-x86_64 with the smartio-ntb-port device (smartio-ntb-port(7)).
q=\${QEMU:-$qemu}
id=\$(readelf -n "\$q" 2>/dev/null | sed -n 's/.*Build ID: *//p' | head -n 1)
if [ "\$id" != "$buildid" ]; then
	echo "smartio-ntb-qemu: $out/smartio-ntb.so was built for $qemu $binver (build-id $buildid); \$q has build-id \${id:-none}: rebuild with make -C contrib/qemu" >&2
	exit 1
fi
LD_PRELOAD=$out/smartio-ntb.so exec "\$q" "\$@"
WRAP
chmod +x "$out/smartio-ntb-qemu"
t3=$(date +%s)
echo "built for $qemu $binver (source $srcver, build-id $buildid):"
echo "  $out/smartio-ntb-qemu $out/smartio-ntb.so $out/smartio-ntb-switch $out/insn-count.so"
echo "  seconds: source $((t1 - t0)), configure+headers $((t2 - t1)), compile $((t3 - t2))"
