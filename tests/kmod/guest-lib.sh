# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by tests/kmod/check_kmod.sh and tests/bench/kmod_dd.sh: the
# initramfs of a one-guest smartio.ko test and the QEMU run around it.
# shellcheck shell=sh

# Every guest has one CPU, with room for a second (-smp $GUEST_SMP).
# QEMU's TCG emits a guest's memory barriers only in a machine that may
# have more than one CPU (max_cpus > 1 sets CF_PARALLEL, tcg/tcg-op.c):
# with one, the fence a driver puts between its store to a shadow
# doorbell and its load of the device's event index is dropped, while
# QEMU's NVMe reads that memory from another thread.  Both then read the
# old values, no doorbell is rung, and the nvme driver times the command
# out after 30 s (make bench's 1 MiB writes, native and shadow alike).
# Device models in other processes (a peer's guest over the NTB switch)
# read shared memory the same way.
GUEST_SMP=1,maxcpus=2

. "${src:-.}/contrib/kernels/kernel-lib.sh"

# guest_needs: what a guest test needs on this machine, or skip (the
# caller's) with what to install.  Sets KVER (default: the newest
# /usr/src/linux-headers-*-amd64) and what kernel_find sets for it (kdir,
# kernel, kroot: this machine's kernel or a kernel root's), and
# sfs (smartiofs as built: libtool keeps the real one in .libs).
guest_needs() {
	command -v qemu-system-x86_64 >/dev/null ||
		skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
	command -v cpio >/dev/null || skip "no cpio"
	command -v make >/dev/null || skip "no make"
	file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
		skip "no static busybox (apt-get install busybox-static)"
	kernel_find || skip "no headers of ${KVER:-any kernel} (apt-get install linux-headers-amd64; Debian 13's: make debian13-root)"
	[ -r "$kernel" ] ||
		skip "no readable $kernel (apt-get install linux-image-amd64)"
	[ -d "$kmodules/kernel" ] || skip "no $kmodules (linux-image-$KVER)"
	sfs=${build:-.}/fs/.libs/smartiofs
	[ -x "$sfs" ] || sfs=${build:-.}/fs/smartiofs
	file -L "$sfs" 2>/dev/null | grep -q ELF ||
		skip "fs/smartiofs not built (make)"
}

# guest_libs ROOT PROGRAM: PROGRAM's shared libraries into ROOT (libsmartio,
# as built, into ROOT/lib/smartio, which the guest puts on its library path).
guest_libs() {
	LD_LIBRARY_PATH=${build:-.}/lib/.libs ldd "$2" |
		awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' |
	while read -r lib; do
		case $lib in
		*/libsmartio.so*)
			mkdir -p "$1/lib/smartio"
			cp -L "$lib" "$1/lib/smartio/" ;;
		*)
			mkdir -p "$1$(dirname "$lib")"
			cp -L "$lib" "$1$lib" ;;
		esac
	done
}

# guest_root ROOT INIT KO SMARTIOFS KVER [MODULES]: busybox, INIT as /init,
# the nvme and fuse modules of KVER and the MODULES named (e.g. "ext4")
# with their dependencies (in load order, listed in /modules/order), KO
# as /smartio.ko, smartiofs and its libraries.
# Returns 1 when modprobe cannot resolve the modules.
guest_root() {
	mkdir -p "$1/bin" "$1/modules"
	cp /bin/busybox "$1/bin/busybox"
	cp "$2" "$1/init"
	chmod 755 "$1/init"
	cp "${src:-.}/tests/kmod/guest-common.sh" "$1/guest-common.sh"
	# shellcheck disable=SC2086 # MODULES is a list of names
	KVER=$5 kernel_modules_copy "$1" nvme fuse ${6:-} || return 1
	cp "$3" "$1/smartio.ko"
	cp "$4" "$1/bin/smartiofs"
	guest_libs "$1" "$4"
}

# guest_initrd ROOT OUT: ROOT as a gzipped newc cpio archive.
guest_initrd() {
	(cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2"
}

# guest_boot_nvme DIR MEMORY: boots DIR/initrd.gz with $kernel under
# QEMU (TCG, q35, intel-iommu with interrupt remapping, MEMORY MiB) with
# DIR/nvme.img as its NVMe drive, in the background for at most $limit s;
# the serial console goes to DIR/guest.log, QEMU's pid to $qpid.
# no_timer_check: a TCG guest on a loaded machine can miss the boot-time
# timer check's window and panic ("timer doesn't work through
# Interrupt-remapped IO-APIC"), as tests/ntb/switch-lib.sh's guests did.
guest_boot_nvme() {
	timeout "$limit" qemu-system-x86_64 -accel tcg -machine q35 -smp "$GUEST_SMP" \
		-m "$2" -display none -monitor none -no-reboot \
		-serial "file:$1/guest.log" \
		-kernel "$kernel" -initrd "$1/initrd.gz" \
		-append "console=ttyS0 panic=-1 no_timer_check intel_iommu=on" \
		-device intel-iommu,intremap=on \
		-drive "file=$1/nvme.img,if=none,id=nv0,format=raw" \
		-device nvme,serial=smartio0,drive=nv0 >"$1/qemu.log" 2>&1 &
	qpid=$!
}

# guest_boot_caps DIR MEMORY: as guest_boot_nvme, with no drive but the
# capabilities the first guest's NVMe lacks: an NVMe controller with
# SR-IOV (QEMU wants it in a subsystem, with flexible queues and vectors
# for its VFs) and an e1000e with no network behind it, which has AER.
# With CAPS_QEMU set (contrib/qemu's smartio-ntb-qemu), the e1000e is
# contrib/qemu's e1000e-acs, which has ACS too.
guest_boot_caps() {
	local nic=e1000e
	[ -n "${CAPS_QEMU:-}" ] && nic=e1000e-acs,multifunction=on
	timeout "$limit" "${CAPS_QEMU:-qemu-system-x86_64}" -accel tcg -machine q35 -smp "$GUEST_SMP" \
		-m "$2" -display none -monitor none -no-reboot \
		-serial "file:$1/guest.log" \
		-kernel "$kernel" -initrd "$1/initrd.gz" \
		-append "console=ttyS0 panic=-1 no_timer_check intel_iommu=on" \
		-device intel-iommu,intremap=on \
		-device nvme-subsys,id=subsys0,nqn=smartio-caps \
		-device nvme,serial=smartio-sriov,subsys=subsys0,sriov_max_vfs=2,sriov_vq_flexible=4,sriov_vi_flexible=2 \
		-nic none -device "$nic" >"$1/qemu.log" 2>&1 &
	qpid=$!
}

# guest_wait PID LOG MARK: waits for QEMU PID; once LOG holds a line
# starting with MARK, gives the guest 20 s to power off, then stops it (a
# guest whose kernel broke may never power off).  Returns QEMU's status.
guest_wait() {
	while kill -0 "$1" 2>/dev/null; do
		if grep -q "^$3" "$2" 2>/dev/null; then
			n=100
			while [ "$n" -gt 0 ] && kill -0 "$1" 2>/dev/null; do
				sleep 0.2
				n=$((n - 1))
			done
			kill "$1" 2>/dev/null
			break
		fi
		sleep 1
	done
	wait "$1"
}

# guest_lock_report LOG NAME: when LOG (a guest's console) holds a report of
# the kernel's lock checkers -- lockdep (PROVE_LOCKING), PROVE_RCU,
# DEBUG_ATOMIC_SLEEP, DEBUG_MUTEXES/SPINLOCK (DEBUG_LOCKS_WARN_ON) -- or
# says they turned themselves off (after a first report, a capacity limit
# or a taint: the rest of the run went unchecked), the report from its
# banner on and a FAIL line naming NAME; returns 1 then.  Any kernel: a
# debug kernel prints these, Debian's prints none.  When the kernel
# checked locks (lockdep's boot banner), says so, as evidence the absence
# of a report means something.
guest_lock_report() {
	_lr='possible circular locking dependency|possible recursive locking'
	_lr="$_lr|inconsistent lock state|lock inversion dependency"
	_lr="$_lr|-unsafe lock order detected|bad unlock balance|held lock freed"
	_lr="$_lr|lock held when returning to user space|non-static key"
	_lr="$_lr|BUG: sleeping function called from invalid context"
	_lr="$_lr|BUG: scheduling while atomic|BUG: spinlock |BUG: MAX_"
	_lr="$_lr|BUG: Invalid wait context|suspicious RCU usage"
	_lr="$_lr|DEBUG_LOCKS_WARN_ON|INFO: lockdep is turned off"
	_lr="$_lr|turning off the locking correctness validator"
	_lr="$_lr|Disabling lock debugging due to kernel taint"
	_ln=$(tr -d '\r' <"$1" | grep -n -m 1 -E "$_lr" | cut -d: -f1)
	if [ -z "$_ln" ]; then
		grep -q 'Lock dependency validator' "$1" &&
			echo "lockdep: guest $2 ran with lockdep, no lock report"
		return 0
	fi
	# From the ===== banner above the headline, to the report's end
	# (lockdep's run to ~60 lines: the chain, the held locks, the stack).
	tr -d '\r' <"$1" | sed -n "$((_ln > 3 ? _ln - 3 : 1)),$((_ln + 80))p"
	echo "FAIL: guest $2: the kernel's lock checker reported (above)"
	return 1
}

# guest_tagged LOG: LOG's PASS/FAIL/SKIP/TIMING lines, each naming the
# kernel the guest said it runs (its GUEST-KERNEL line); and a FAIL line
# when that is not $KVER.  Returns 1 then.  Only the version's own
# characters are taken: the kernel's console can print a message between
# the version and its newline ("...-amd64[    1.83] tsc: ...").
guest_tagged() {
	_gk=$(tr -d '\r' <"$1" |
		sed -n 's/^GUEST-KERNEL \([^[[:space:]]*\).*/\1/p' | head -n 1)
	tr -d '\r' <"$1" | grep -E '^(PASS|FAIL|SKIP|TIMING): ' |
		sed "s/^\([A-Z]*\): /\1: [Linux ${_gk:-?}] /"
	[ "$_gk" = "$KVER" ] && return 0
	echo "FAIL: the guest ran Linux ${_gk:-(no GUEST-KERNEL line)}, not $KVER"
	return 1
}
