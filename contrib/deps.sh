# SPDX-License-Identifier: GPL-2.0-or-later
# Debian packages smartio needs to build, test and serve; sourced by
# contrib/quickstart and .ci/run so that both install the same set.
# shellcheck shell=bash
SMARTIO_DEBIAN_PACKAGES=(build-essential autoconf automake libtool pkg-config
	libfuse3-dev fuse3 libnl-3-dev libnl-genl-3-dev libudev-dev
	libcmocka-dev mandoc python3
	# smartio(1), its tests and its systemd units (kmod: the modprobe
	# smartiofs-kernel.service runs)
	python3-pytest python3-prometheus-client jq graphviz systemd kmod
	bash-completion pci.ids
	# nbdkit-smartio-plugin (smartio-nvmeq(1)) and the tools its test uses
	nbdkit nbdkit-plugin-dev libnbd-bin qemu-utils)

# What make bench's lines run beyond the build (tests/bench/bench.py): the
# QEMU guests of its kernel, NTB and lending lines (the guests boot Debian's
# kernel with modules from it, busybox and fio in an initramfs), and
# bindfs, the FUSE file system its listing line compares smartiofs with.
SMARTIO_BENCH_PACKAGES=(fio bindfs qemu-system-x86 busybox-static cpio kmod
	linux-image-amd64 linux-headers-amd64 linux-source-6.1)

# Installs whichever of the packages named (SMARTIO_DEBIAN_PACKAGES when
# none are) are missing, with sudo when not root.
smartio_install_deps() {
	local p missing=() sudo=
	[ "$#" -gt 0 ] || set -- "${SMARTIO_DEBIAN_PACKAGES[@]}"
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "ok installed" || missing+=("$p")
	done
	[ "${#missing[@]}" -gt 0 ] || return 0
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "smartio: installing ${missing[*]}"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq "${missing[@]}" >/dev/null
}
