# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the kernel builds and QEMU tests (tests/kmod/guest-lib.sh,
# tests/ntb/build.sh, make kmod): where the files of kernel $KVER are and
# how to run its compiler.  A kernel is this machine's (Debian 12's 6.1:
# /usr/src/linux-headers-$KVER, /boot, /lib/modules) or a kernel root's:
# the Debian 13 root of contrib/kernels/debian13.sh ($DEBIAN13_DIR, default
# $build/kernels/debian13), whose gcc-14 alone can build for it, or the
# lockdep build of contrib/kernels/lockdep.sh ($LOCKDEP_DIR, default
# $build/kernels/lockdep), which this machine's gcc built.
# shellcheck shell=sh

# kernel_find: KVER (default: the newest /usr/src/linux-headers-*-amd64)
# resolved; sets kroot ("" or the kernel root holding it), kin (the root
# builds run inside: kroot when it is a system with its own make, else
# ""), kdir (the headers as kernel_run sees them), kernel (the image),
# kmodules (its modules' directory), kernel_source (the linux-source
# tarball, LINUX_SOURCE if set) and kernel_tag (what a PASS line names:
# "Linux $KVER").
# Returns 1 when no headers of $KVER are found.
kernel_find() {
	if [ -z "${KVER:-}" ]; then
		KVER=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null |
		       sort -V | tail -n 1 | sed 's|.*/linux-headers-||')
	fi
	[ -n "$KVER" ] || return 1
	kroot=
	kin=
	if [ ! -d "/usr/src/linux-headers-$KVER" ]; then
		for kroot in \
			"${DEBIAN13_DIR:-${build:-.}/kernels/debian13}/root" \
			"${LOCKDEP_DIR:-${build:-.}/kernels/lockdep}/root" ""; do
			[ -d "$kroot/usr/src/linux-headers-$KVER" ] && break
		done
		[ -n "$kroot" ] || return 1
		kroot=$(cd "$kroot" && pwd)
		[ -x "$kroot/usr/bin/make" ] && kin=$kroot
	fi
	kdir=$kroot/usr/src/linux-headers-$KVER
	[ -z "$kin" ] || kdir=/usr/src/linux-headers-$KVER	# as kin sees it
	kernel=$kroot/boot/vmlinuz-$KVER
	kmodules=$kroot/lib/modules/$KVER
	kernel_source=${LINUX_SOURCE:-$kroot/usr/src/linux-source-$(echo "$KVER" | cut -d. -f1-2).tar.xz}
	kernel_tag="Linux $KVER"
}

# kernel_run DIR... -- COMMAND [ARG...]: COMMAND with kernel_find's
# kernel's compiler: here, or inside its root with each DIR (absolute)
# bind-mounted at its own path.
kernel_run() {
	if [ -n "$kin" ]; then
		sh "${src:-.}/contrib/kernels/in-root.sh" "$kin" "$@"
		return
	fi
	while [ "$1" != -- ]; do
		shift
	done
	shift
	"$@"
}

# kernel_modules_copy ROOT MODULE...: the kernel's MODULES with their
# dependencies into ROOT/modules, uncompressed (Debian 13 ships .ko.xz,
# which busybox's insmod cannot load), their paths in load order appended
# to ROOT/modules/order (built-in ones need nothing).  Returns 1 when
# modprobe cannot resolve them.
kernel_modules_copy() {
	_r=$1
	shift
	mkdir -p "$_r/modules"
	touch "$_r/modules/order"
	modprobe -a ${kroot:+-d "$kroot"} -S "$KVER" --show-depends "$@" \
		>"$_r.mods" 2>/dev/null || { rm -f "$_r.mods"; return 1; }
	awk '$1 == "insmod" && !seen[$2]++ { print $2 }' "$_r.mods" >"$_r.ins"
	mv "$_r.ins" "$_r.mods"
	while read -r _m; do
		_b=$(basename "$_m")
		case $_b in
		*.ko.xz)
			_b=${_b%.xz}
			xz -dc "$_m" >"$_r/modules/$_b" || return 1 ;;
		*)
			cp "$_m" "$_r/modules/" ;;
		esac
		echo "/modules/$_b" >>"$_r/modules/order"
	done <"$_r.mods"
	rm -f "$_r.mods"
}
