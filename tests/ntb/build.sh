#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build, out of tree and at test time, the mainline NTB core and its test
# clients from Debian's linux-source package, and kmod/ntb's software NTB
# against them.  Nothing built here is committed.
#
#   tests/ntb/build.sh SRCDIR OUTDIR
#
# OUTDIR gets ntb.ko ntb_tool.ko ntb_pingpong.ko ntb_perf.ko
# ntb_transport.ko ntb_netdev.ko, the Switchtec drivers switchtec.ko
# (drivers/pci/switch) and ntb_hw_switchtec.ko (drivers/ntb/hw/mscc),
# and ntb_ivshmem.ko ntb_sioswitch.ko smartio_ntb.ko; OUTDIR/msi gets
# ntb.ko, ntb_hw_switchtec.ko and ntb_msi_test.ko built with CONFIG_NTB_MSI.
# Environment: KVER (default: the newest /usr/src/linux-headers-*-amd64;
# Debian 13's is built in the root of contrib/kernels/debian13.sh),
# LINUX_SOURCE (default: the kernel's series' linux-source tarball, e.g.
# /usr/src/linux-source-6.1.tar.xz).
# Exit 77 when the kernel headers or source are missing.
set -eu
src=$(cd "$1" && pwd)
out=$2
build=${BUILDDIR:-.}
. "$src/contrib/kernels/kernel-lib.sh"
kernel_find || {
	echo "SKIP: no headers of ${KVER:-any kernel} (apt-get install linux-headers-amd64)"
	exit 77
}
tarball=$kernel_source
[ -f "$tarball" ] || {
	echo "SKIP: no $tarball (apt-get install linux-source-6.1)"
	exit 77
}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ntb=$out/ntb-src
ivs=$out/ivshmem-src
jobs=${NTB_JOBS:-2}

# The stamp names what was extracted, from which tarball, and whether for
# a lockdep kernel (lockdep_init_db_mask_lock below): a list that grew,
# or another kernel's source, extracts again.
lockdep=
grep -q 'define CONFIG_LOCKDEP 1' \
	"$kroot/usr/src/linux-headers-$KVER/include/generated/autoconf.h" \
	2>/dev/null && lockdep=" (lockdep)"
files="core.c ntb_tool.c ntb_pingpong.c ntb_perf.c ntb_transport.c ntb_netdev.c switchtec.c ntb_hw_switchtec.c$lockdep"
if [ "$(cat "$ntb/.extracted" 2>/dev/null)" != "$tarball: $files" ] ||
   [ "$tarball" -nt "$ntb/.extracted" ]; then
	rm -rf "$ntb"
	mkdir -p "$ntb"
	top=$(tar -tJf "$tarball" | head -n 1 | cut -d/ -f1)
	tar -xJf "$tarball" -C "$ntb" --strip-components=3 \
		"$top/drivers/ntb/core.c" "$top/drivers/ntb/test/ntb_tool.c" \
		"$top/drivers/ntb/test/ntb_pingpong.c" \
		"$top/drivers/ntb/test/ntb_perf.c" \
		"$top/drivers/ntb/ntb_transport.c"
	tar -xJf "$tarball" -C "$ntb" --strip-components=3 \
		"$top/drivers/net/ntb_netdev.c"
	tar -xJf "$tarball" -C "$ntb" --strip-components=4 \
		"$top/drivers/pci/switch/switchtec.c"
	tar -xJf "$tarball" -C "$ntb" --strip-components=5 \
		"$top/drivers/ntb/hw/mscc/ntb_hw_switchtec.c"
	mv "$ntb"/test/*.c "$ntb"/
	rmdir "$ntb/test"
	cat >"$ntb/Kbuild" <<'EOF'
obj-m += ntb.o ntb_tool.o ntb_pingpong.o ntb_perf.o ntb_transport.o
obj-m += ntb_netdev.o switchtec.o ntb_hw_switchtec.o
ntb-y := core.o
EOF
	echo "$tarball: $files" >"$ntb/.extracted"
fi
# Linux 6.1's ntb_hw_switchtec takes db_mask_lock without ever calling
# spin_lock_init on it (switchtec_ntb_init_sndev).  Harmless without
# lockdep; a lockdep kernel reports "trying to register non-static key"
# at the first doorbell mask and switches itself off, so nothing loaded
# after it, smartio included, is checked.  For a kernel built with
# lockdep only (make lockdep-kernel), the copy built here gets that one
# line; every other kernel runs the driver as it is.
lockdep_init_db_mask_lock() {
	[ -n "$lockdep" ] || return 0
	grep -q 'spin_lock_init(&sndev->db_mask_lock)' "$1" && return 0
	sed -i '/^static int switchtec_ntb_init_sndev(/,/INIT_WORK(&sndev->check_link_status_work/ {
		/INIT_WORK(&sndev->check_link_status_work/i\	spin_lock_init(\&sndev->db_mask_lock);
	}' "$1"
	grep -q 'spin_lock_init(&sndev->db_mask_lock)' "$1" || {
		echo "build: cannot add db_mask_lock's init to $1"; exit 1; }
	echo "build: $1: db_mask_lock initialised for lockdep"
}
lockdep_init_db_mask_lock "$ntb/ntb_hw_switchtec.c"

# The NTB core as Kconfig would have it with CONFIG_NTB=m, and its clients.
kernel_run "$out" -- make -s -C "$kdir" M="$ntb" -j"$jobs" CONFIG_NTB=m \
	CONFIG_NTB_TOOL=m CONFIG_NTB_PINGPONG=m CONFIG_NTB_PERF=m \
	CONFIG_NTB_TRANSPORT=m CONFIG_NTB_NETDEV=m CONFIG_PCI_SW_SWITCHTEC=m \
	CONFIG_NTB_SWITCHTEC=m modules

# ntb_msi_test and the core's MSI part (drivers/ntb/msi.c), with the
# Switchtec driver they run on.  CONFIG_NTB_MSI adds a member to struct
# ntb_dev (include/linux/ntb.h), so the hardware driver that embeds one
# is built with it too, apart: these three load together, instead of
# ntb.ko and ntb_hw_switchtec.ko above, never beside them.
msi=$out/ntb-msi-src
mfiles="core.c msi.c ntb_msi_test.c ntb_hw_switchtec.c$lockdep"
if [ "$(cat "$msi/.extracted" 2>/dev/null)" != "$tarball: $mfiles" ] ||
   [ "$tarball" -nt "$msi/.extracted" ]; then
	rm -rf "$msi"
	mkdir -p "$msi"
	top=$(tar -tJf "$tarball" | head -n 1 | cut -d/ -f1)
	tar -xJf "$tarball" -C "$msi" --strip-components=3 \
		"$top/drivers/ntb/core.c" "$top/drivers/ntb/msi.c" \
		"$top/drivers/ntb/test/ntb_msi_test.c"
	tar -xJf "$tarball" -C "$msi" --strip-components=5 \
		"$top/drivers/ntb/hw/mscc/ntb_hw_switchtec.c"
	mv "$msi"/test/*.c "$msi"/
	rmdir "$msi/test"
	cat >"$msi/Kbuild" <<'EOF2'
obj-m += ntb.o ntb_msi_test.o ntb_hw_switchtec.o
ntb-y := core.o msi.o
ccflags-y += -DCONFIG_NTB_MSI
EOF2
	echo "$tarball: $mfiles" >"$msi/.extracted"
fi
lockdep_init_db_mask_lock "$msi/ntb_hw_switchtec.c"
kernel_run "$out" -- make -s -C "$kdir" M="$msi" -j"$jobs" CONFIG_NTB=m \
	CONFIG_NTB_MSI=y CONFIG_NTB_MSI_TEST=m CONFIG_NTB_SWITCHTEC=m \
	KBUILD_EXTRA_SYMBOLS="$ntb/Module.symvers" modules
mkdir -p "$out/msi"
for m in ntb ntb_hw_switchtec ntb_msi_test; do
	cp "$msi/$m.ko" "$out/msi/"
done

mkdir -p "$ivs"
for f in ntb/ntb_ivshmem.c ntb/ntb_sioswitch.c ntb/ntb_sioswitch_regs.h \
	 ntb/smartio_ntb_main.c ntb/smartio_ntb_rid.c ntb/smartio_ntb_rid.h \
	 ntb/smartio_ntb_fabric.c ntb/smartio_ntb_fabric.h \
	 ntb/smartio_ntb.h ntb/Kbuild sio_kcompat.h \
	 sio_kcompat.mk; do
	b=$(basename "$f")
	cmp -s "$src/kmod/$f" "$ivs/$b" || cp "$src/kmod/$f" "$ivs/$b"
done
kernel_run "$out" -- make -s -C "$kdir" M="$ivs" -j"$jobs" \
	KBUILD_EXTRA_SYMBOLS="$ntb/Module.symvers" modules

for m in ntb ntb_tool ntb_pingpong ntb_perf ntb_transport ntb_netdev \
	 switchtec ntb_hw_switchtec; do
	cp "$ntb/$m.ko" "$out/"
done
cp "$ivs/ntb_ivshmem.ko" "$ivs/ntb_sioswitch.ko" "$ivs/smartio_ntb.ko" "$out/"
echo "built for $KVER in $out: $(cd "$out" && ls ./*.ko | tr '\n' ' ')"
