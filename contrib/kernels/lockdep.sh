#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Debian 12's Linux 6.1 built with lockdep, to run smartio.ko's QEMU tests
# under the kernel's lock checker (make lockdep-kernel):
#
#   contrib/kernels/lockdep.sh OUT
#
# From Debian's own linux-source-6.1 and its amd64 configuration
# (linux-config-6.1), with PROVE_LOCKING, DEBUG_LOCK_ALLOC, DEBUG_MUTEXES,
# DEBUG_SPINLOCK, DEBUG_ATOMIC_SLEEP and PROVE_RCU added, debug info and
# module signing at install removed, and the modules reduced
# (localmodconfig) to the ones the test guests load: kernel_modules_copy's
# lists in tests/kmod and tests/ntb.  The NTB core and the Switchtec
# drivers stay out of it: tests/ntb/build.sh builds them from the source
# against OUT/src.  Measured: 42 min on 2 cores shared with other builds
# (load 4 to 15), 2.2 GiB.
#
# OUT/src is the configured and built tree (the "headers" out-of-tree
# modules build against); OUT/root holds boot/vmlinuz-KVER,
# lib/modules/KVER and usr/src/linux-headers-KVER (a link to OUT/src), the
# layout contrib/kernels/kernel-lib.sh's kernel_find reads; OUT/kver names
# the kernel (e.g. 6.1.158-lockdep).  A second run with the same tarball
# and this script unchanged does nothing.
#
# Exit 77 when the source or configuration package is missing.
set -eu
out=${1:?usage: lockdep.sh OUT}
tarball=${LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
config=${LOCKDEP_BASE_CONFIG:-/usr/src/linux-config-6.1/config.amd64_none_amd64.xz}
jobs=${LOCKDEP_JOBS:-2}
[ -f "$tarball" ] ||
	{ echo "SKIP: no $tarball (apt-get install linux-source-6.1)"; exit 77; }
[ -f "$config" ] ||
	{ echo "SKIP: no $config (apt-get install linux-config-6.1)"; exit 77; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
# What the result depends on: a changed command of this script (not a
# comment), tarball or base config configures and builds again from
# scratch; an interrupted build resumes (make).
stamp="$(grep -v '^[[:space:]]*#' "$self" | cksum) $(
	ls -l --time-style=+%s "$tarball" "$config" |
	awk '{ print $5, $6, $7 }' | tr '\n' ' ')"
if [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ] && [ -s "$out/kver" ] &&
   [ -f "$out/root/boot/vmlinuz-$(cat "$out/kver")" ]; then
	echo "lockdep kernel $(cat "$out/kver"): $out/root (cached)"
	exit 0
fi

# configure SRC: SRC/.config, Debian's with lockdep on and the modules
# cut to the guests'.
configure() {
	cd "$1"
	xz -dc "$config" >.config
	# The modules the guests load, as lsmod would list them: nvme,
	# fuse, ext4, nbd, virtio_blk and virtio_net with what they need.
	cat >"$out/lsmod" <<'EOF'
Module                  Size  Used by
nvme                       0  0
nvme_core                  0  0
fuse                       0  0
ext4                       0  0
jbd2                       0  0
mbcache                    0  0
crc16                      0  0
crc32c_generic             0  0
nbd                        0  0
virtio_blk                 0  0
virtio_net                 0  0
net_failover               0  0
failover                   0  0
virtio_pci                 0  0
virtio_pci_modern_dev      0  0
virtio_pci_legacy_dev      0  0
EOF
	yes "" | make -s LSMOD="$out/lsmod" localmodconfig >/dev/null
	sc=scripts/config
	# smartio_ntb offers its table on the auxiliary bus, which only the
	# drivers that use it select (Debian's kernel has it): the smallest.
	$sc --module INTEL_VSEC
	# Lockdep and the checks beside it; sleep-in-atomic checks; RCU usage.
	$sc --enable LOCKDEP_SUPPORT --enable DEBUG_KERNEL \
		--enable PROVE_LOCKING \
		--enable DEBUG_LOCK_ALLOC --enable DEBUG_MUTEXES \
		--enable DEBUG_SPINLOCK --enable DEBUG_RWSEMS \
		--enable DEBUG_ATOMIC_SLEEP \
		--enable PROVE_RCU --enable LOCKDEP
	# Not needed to run the tests, and the longest parts of the build:
	# debug info (and BTF from it).  Nor signing at install, with
	# Debian's keys (not on this machine): the kernel keeps MODULE_SIG
	# (IMA_ARCH_POLICY selects it), unforced, so unsigned modules load,
	# as out-of-tree ones do on Debian's kernel.
	$sc --disable DEBUG_INFO --disable DEBUG_INFO_DWARF5 \
		--disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
		--enable DEBUG_INFO_NONE --disable DEBUG_INFO_BTF \
		--disable MODULE_SIG --disable MODULE_SIG_ALL \
		--set-str SYSTEM_TRUSTED_KEYS '' \
		--set-str SYSTEM_REVOCATION_KEYS '' \
		--set-str LOCALVERSION -lockdep --disable LOCALVERSION_AUTO
	make -s olddefconfig
	for o in PROVE_LOCKING DEBUG_LOCK_ALLOC DEBUG_MUTEXES DEBUG_ATOMIC_SLEEP \
		 LOCKDEP PROVE_RCU; do
		grep -q "^CONFIG_$o=y" .config ||
			{ echo "lockdep.sh: CONFIG_$o did not stay set"; exit 1; }
	done
}

t0=$(date +%s)
rm -rf "$out/root" "$out/kver" "$out/.stamp"
if [ "$(cat "$out/src/.configured" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$out/src"
	mkdir -p "$out/src"
	tar -xJf "$tarball" -C "$out/src" --strip-components=1
	configure "$out/src"
	echo "$stamp" >"$out/src/.configured"
fi
cd "$out/src"
nice -n 10 make -j"$jobs" bzImage modules
# Known once the build has read the configuration (LOCALVERSION).
kver=$(cat include/config/kernel.release)
mkdir -p "$out/root/boot" "$out/root/usr/src"
cp arch/x86/boot/bzImage "$out/root/boot/vmlinuz-$kver"
cp System.map "$out/root/boot/System.map-$kver"
cp .config "$out/root/boot/config-$kver"
make -s INSTALL_MOD_PATH="$out/root" modules_install
ln -sfn "$out/src" "$out/root/lib/modules/$kver/build"
ln -sfn "$out/src" "$out/root/usr/src/linux-headers-$kver"
ln -sfn "$tarball" "$out/root/usr/src/$(basename "$tarball")"
echo "$kver" >"$out/kver"
echo "$stamp" >"$out/.stamp"
echo "lockdep kernel $kver: $out/root, built in $(( $(date +%s) - t0 )) s"
