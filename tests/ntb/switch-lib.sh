# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the make check-ntb scripts that run QEMU guests on one
# smartio-ntb-switch (tests/ntb/check_switch.sh, check_cluster.sh): the
# switch device built, the NTB modules built, the work directory, the
# switch started, a guest booted on a port, a guest's log judged; and
# smartio.ko, smartiofs and the segment helper built and put into a
# guest's root (also for check_ntb.sh).  The caller sets src, build and
# limit, defines skip() and sources tests/kmod/guest-lib.sh first.
# shellcheck shell=sh

# Where $KVER's files are, and its compiler (kernel_find, kernel_run).
. "$src/contrib/kernels/kernel-lib.sh"

# sw_prepare: qemu, busybox and cpio present (else skip), the switch device
# built into $sw, the NTB modules into $out, $kernel found, $tmp made (and
# removed on exit unless NTB_KEEP=1; every pid in $pids is killed then).
sw_prepare() {
	command -v qemu-system-x86_64 >/dev/null ||
		skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
	command -v cpio >/dev/null || skip "no cpio"
	busybox=/bin/busybox
	file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
		skip "no static busybox (apt-get install busybox-static)"

	sw=${NTBSW_OUT:-$build/contrib/qemu/build}
	local t st
	t=$(date +%s)
	sh "$src/contrib/qemu/build.sh" "$sw" >"$build/ntbsw-build.log" 2>&1
	st=$?
	grep -v '^dpkg-source\|^gpgv' "$build/ntbsw-build.log" | tail -n 5
	[ "$st" -eq 77 ] && exit 77
	[ "$st" -eq 0 ] || { echo "FAIL: building the switch (contrib/qemu/build.sh)"; exit 1; }
	echo "switch device built in $(($(date +%s) - t)) s"

	out=$build/tests/ntb/build
	sh "$src/tests/ntb/build.sh" "$src" "$out"
	st=$?
	[ "$st" -eq 77 ] && exit 77
	[ "$st" -eq 0 ] || { echo "FAIL: building the NTB modules"; exit 1; }
	kernel_find || skip "no headers of ${KVER:-any kernel}"
	[ -r "$kernel" ] || skip "no readable $kernel (apt-get install linux-image-amd64)"

	tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-ntbsw.XXXXXX")
	pids=
	trap sw_cleanup EXIT
	trap 'exit 1' INT TERM
}

sw_cleanup() {
	for p in $pids $(cat "$tmp"/*.pid 2>/dev/null); do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ "${NTB_KEEP:-0}" = 1 ]; then
		echo "kept $tmp"
	else
		rm -rf "$tmp"
	fi
}

# sw_start PORTS [WINDOW1]: the switch for PORTS ports on $tmp/sw.sock, 2 MiB
# windows (window 1 of WINDOW1 bytes when given, e.g. 1G); $SW_SWITCH_ARGS
# are added (-x ...: a Switchtec fabric).
sw_start() {
	# shellcheck disable=SC2086
	"$sw/smartio-ntb-switch" -S "$tmp/sw.sock" -n "$1" -w 2M ${2:+-W "$2"} \
		${SW_SWITCH_ARGS:-} \
		>"$tmp/switch.log" 2>&1 &
	pids="$pids $!"
	local n=0
	until [ -S "$tmp/sw.sock" ]; do
		n=$((n + 1))
		[ "$n" -lt 50 ] || { echo "FAIL: switch did not start"; cat "$tmp/switch.log"; exit 1; }
		sleep 0.1
	done
}

# sw_guest PORT PHASE MEMORY [QEMU ARGS...]: boots $tmp/initrd.gz on port
# PORT of the switch in the background (at most $limit s, MEMORY MiB,
# kernel command line swport=PORT swphase=PHASE no_timer_check); serial
# console in $tmp/pPORT-PHASE.log, QEMU's pid in $guest_pid; $SW_APPEND is
# added to the kernel command line.  no_timer_check: on a loaded machine a
# TCG guest can miss the boot-time timer check's window, and 6.1 then
# panics ("IO-APIC + timer doesn't work!", or "timer doesn't work through
# Interrupt-remapped IO-APIC" with interrupt remapping), seen in three of
# six four-guest runs beside other engineers' guests.
# $SW_DEVICE is the NTB function's device type (default smartio-ntb-port;
# switchtec-nt on a Switchtec fabric).  $SW_IOMMU, when set, is the
# options of an intel-iommu placed before the NTB function (QEMU puts a
# device behind the IOMMU only when the IOMMU was created first; one
# given among QEMU ARGS does not translate the NTB function).
# SW_RAM_FILE=1: the guest's RAM is the file $tmp/ramPORT-PHASE, which
# the host can read while the guest runs (a canary's check).
sw_guest() {
	local port=$1 phase=$2 mem=$3 ram
	shift 3
	ram="memory-backend-memfd,id=ram,size=${mem}M,share=on"
	[ "${SW_RAM_FILE:-0}" = 1 ] &&
		ram="memory-backend-file,id=ram,size=${mem}M,share=on,mem-path=$tmp/ram$port-$phase"
	# shellcheck disable=SC2086 # $SW_IOMMU is one option or none
	timeout "$limit" "$sw/smartio-ntb-qemu" -accel tcg -machine q35,memory-backend=ram \
		-smp "$GUEST_SMP" -m "$mem" -display none -monitor none -no-reboot \
		-object "$ram" \
		${SW_IOMMU:+-device intel-iommu,$SW_IOMMU} \
		-serial "file:$tmp/p$port-$phase.log" -pidfile "$tmp/p$port-$phase.pid" \
		-kernel "$kernel" -initrd "$tmp/initrd.gz" \
		-append "console=ttyS0 panic=-1 no_timer_check swport=$port swphase=$phase${SW_APPEND:+ $SW_APPEND}" \
		-device "${SW_DEVICE:-smartio-ntb-port},switch=$tmp/sw.sock,port=$port,memdev=ram" \
		"$@" >"$tmp/p$port-$phase.qemu" 2>&1 &
	guest_pid=$!
	pids="$pids $guest_pid"
	sw_watch "$tmp/p$port-$phase" &
	pids="$pids $!"
}

# sw_watch BASE: once QEMU (pid in BASE.pid) has run with its serial log
# BASE.log silent for $SW_STALL s (default 240; no guest waits that long
# without a word), writes where each of its threads waits (name, kernel
# wait channel, system call and its first arguments, the top of its
# kernel stack when readable) into BASE.stall: a guest frozen inside
# QEMU then says where, before the timeout kills it.
sw_watch() {
	local pid= size last=-1 quiet=0 tries=0 t
	while [ -z "$pid" ]; do
		sleep 1
		pid=$(cat "$1.pid" 2>/dev/null)
		[ -n "$pid" ] || [ "$tries" -lt 60 ] || return
		tries=$((tries + 1))
	done
	while kill -0 "$pid" 2>/dev/null; do
		size=$(stat -c %s "$1.log" 2>/dev/null || echo 0)
		if [ "$size" = "$last" ]; then
			quiet=$((quiet + 5))
		else
			quiet=0
			last=$size
		fi
		if [ "$quiet" -ge "${SW_STALL:-240}" ]; then
			for t in /proc/"$pid"/task/*; do
				echo "thread $(cat "$t/comm" 2>/dev/null):" \
					"wchan $(cat "$t/wchan" 2>/dev/null)," \
					"syscall $(cut -d' ' -f1-3 "$t/syscall" 2>/dev/null)," \
					"stack $(head -n 4 "$t/stack" 2>/dev/null |
						sed 's/^\[<[0-9a-f]*>\] //; s/+0x.*//' |
						tr '\n' ' ')"
			done >"$1.stall"
			return
		fi
		sleep 5
	done
}

# sw_check LOG MIN_PASSES: the guest's PASS/FAIL lines, its end marker
# with fails=0, at least MIN_PASSES passes, no kernel splat; problems are
# added to $fails.
fails=0
sw_check() {
	local log=$tmp/$1.log passes bad kbad=0
	echo "--- guest $1"
	guest_tagged "$log" || kbad=1
	passes=$(grep -c '^PASS: ' "$log")
	bad=$(($(grep -c '^FAIL: ' "$log") + kbad))
	if ! grep -q "^NTB-END .*fails=0" "$log"; then
		echo "FAIL: guest $1 did not finish cleanly"
		bad=$((bad + 1))
	fi
	if [ "$passes" -lt "$2" ]; then
		echo "FAIL: guest $1: $passes checks passed, $2 expected"
		bad=$((bad + 1))
	fi
	# With the lines before (a Call Trace's headline: a hung task, an RCU
	# stall).
	if grep -B 6 -m 4 -E 'WARNING:|BUG:|Oops|Call Trace|general protection|Kernel panic' "$log"; then
		echo "FAIL: guest $1: kernel warning, bug or oops (above)"
		bad=$((bad + 1))
	fi
	guest_lock_report "$log" "$1" || bad=$((bad + 1))
	[ "$bad" -eq 0 ] && return
	fails=$((fails + bad))
	# A frozen guest's threads come first: CI shows the FAIL lines only.
	[ -s "$tmp/$1.stall" ] &&
		sed "s/^/FAIL: guest $1 silent ${SW_STALL:-240} s, its QEMU's /" "$tmp/$1.stall"
	# Its FAIL lines are above already.
	tail -n 40 "$log" | grep -v '^FAIL: '
	cat "$tmp/$1.qemu"
}

# sw_smartio_build: smartio.ko for $KVER (fabric=ntb finds smartio_ntb.ko
# at load time) into $out/smartio, the guests' mmap helper $out/sio_segrw
# (static: the guests have no C library of their own) and $sfs, smartiofs
# as built (libtool keeps the real one in .libs); skip when not built.
sw_smartio_build() {
	sfs=$build/fs/.libs/smartiofs
	[ -x "$sfs" ] || sfs=$build/fs/smartiofs
	file -L "$sfs" 2>/dev/null | grep -q ELF || skip "fs/smartiofs not built (make)"
	kernel_find || skip "no headers of ${KVER:-any kernel}"
	_srcabs=$(cd "$src" && pwd)
	if ! kernel_run "$_srcabs" "$out" -- make -C "$_srcabs/kmod" \
		KDIR="$kdir" O_BUILD="$out/smartio" >"$out/smartio.log" 2>&1; then
		cat "$out/smartio.log"
		echo "FAIL: building smartio.ko"
		exit 1
	fi
	${CC:-cc} -static -O2 -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror \
		-o "$out/sio_segrw" "$src/tests/ntb/sio_segrw.c" >"$out/cc.log" 2>&1 ||
		{ cat "$out/cc.log"; skip "cannot link a static program (libc6-dev)"; }
}

# sw_smartio_root ROOT: smartio.ko, smartio_ntb.ko, sio_segrw, FUSE (its
# modules in load order in ROOT/modules/order), smartiofs and its
# libraries, and the cluster's step helpers (cluster-steps.sh) into the
# guest's root ROOT.
sw_smartio_root() {
	cp "$out/smartio_ntb.ko" "$out/smartio/smartio.ko" "$1/"
	cp "$src/tests/ntb/cluster-steps.sh" "$1/cluster-steps.sh"
	mkdir -p "$1/bin" "$1/modules" "$1/lib/smartio"
	cp "$out/sio_segrw" "$1/bin/"
	kernel_modules_copy "$1" fuse || true
	cp "$sfs" "$1/bin/smartiofs"
	guest_libs "$1" "$sfs"
}

# sw_nvmeq_build ROOT: smartio-nvmeq, static (no C library in the
# guests), into ROOT/bin.
sw_nvmeq_build() {
	mkdir -p "$1/bin"
	${CC:-cc} -static -O2 -std=c11 -Wall -Wextra -Werror -I"$src/lib/core" \
		-o "$1/bin/smartio-nvmeq" "$src/contrib/nvme/smartio-nvmeq.c" \
		"$src/contrib/nvme/sfiles.c" "$src/contrib/nvme/nvmeq_queue.c" \
		"$src/contrib/nvme/nvmeq_client.c" \
		"$src/contrib/nvme/nvmeq_manager.c" >"$out/cc-nvmeq.log" 2>&1 ||
		{ cat "$out/cc-nvmeq.log"; echo "FAIL: building smartio-nvmeq"; exit 1; }
}

# sw_bench_lines TAG N WHAT: the "TAG ..." lines of guests 0..N-1 on
# stdout, once all have ended; fails, naming WHAT, when one did not end
# with fails=0 (its FAIL lines and the end of its console on stderr).
sw_bench_lines() {
	_bad=0
	_p=0
	while [ $_p -lt "$2" ]; do
		tr -d '\r' <"$tmp/p$_p-1.log" | grep "^$1 "
		if ! grep -q "^NTB-END .*fails=0" "$tmp/p$_p-1.log"; then
			tr -d '\r' <"$tmp/p$_p-1.log" | grep '^FAIL: ' >&2
			tail -n 30 "$tmp/p$_p-1.log" >&2
			_bad=1
		fi
		_p=$((_p + 1))
	done
	[ $_bad = 0 ] || { echo "FAIL: $3 did not finish cleanly"; exit 1; }
}

# sw_edu_build: tests/ntb/edu's sio_edu_msi.ko for $KVER into $out/edu
# (a driver of QEMU's edu device: MSI, and its DMA engine into another
# function's BAR, check_msi.sh and check_transport.sh).
sw_edu_build() {
	mkdir -p "$out/edu"
	cp "$src/tests/ntb/edu/sio_edu_msi.c" "$src/tests/ntb/edu/Kbuild" "$out/edu/"
	if ! kernel_run "$out" -- make -s -C "$kdir" M="$out/edu" modules \
		>"$out/edu.log" 2>&1; then
		cat "$out/edu.log"
		echo "FAIL: building sio_edu_msi.ko"
		exit 1
	fi
}
