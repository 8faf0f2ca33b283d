#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-ntb, the Switchtec part: two QEMU guests, each one partition
# of a Switchtec PFX fabric (the switchtec-nt model on smartio-ntb-switch
# -x, contrib/qemu), driven by the unmodified mainline switchtec.ko and
# ntb_hw_switchtec.ko built from linux-source (tests/ntb/build.sh); each
# runs tests/ntb/switchtec-init.sh: the drivers bind, ntb_tool's link,
# scratchpads, doorbells and windows, ntb_pingpong, smartio_ntb's
# discovery, calls and segments; ntb_msi_test; ntb_perf, 10 runs in a
# row after a start that follows the operator's procedure in
# tests/ntb/switchtec-perf.sh (the mainline drivers race at start).  Two
# rounds: use_lut_mws=0, then use_lut_mws=1 (a LUT window besides the
# direct ones).
#
# Environment: SRCDIR, BUILDDIR (set by make), KVER, LINUX_SOURCE (see
# build.sh), NTB_TIMEOUT (seconds per guest, default 900), NTB_KEEP=1
# keeps the work directory, NTB_PERF (ntb_perf runs in a row after each
# start, default 10; 0: no ntb_perf), NTB_PERF_STARTS (starts per boot,
# default 1), NTB_STX (the switch's -x option, default
# switchtec,luts=32,rids=32,bar2=4M,bar4=4M).  Exit 77 when qemu,
# busybox-static, cpio, the kernel image, headers or source are missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-900}

skip() { echo "SKIP: check-ntb (switchtec): $*"; exit 77; }
. "$src/tests/ntb/switch-lib.sh"
sw_prepare

mkdir -p "$tmp/root/bin"
cp "$busybox" "$tmp/root/bin/busybox"
cp "$src/tests/ntb/switchtec-init.sh" "$tmp/root/init"
chmod 755 "$tmp/root/init"
cp "$src/tests/kmod/guest-common.sh" "$tmp/root/guest-common.sh"
cp "$src/tests/ntb/switchtec-perf.sh" "$tmp/root/"
for m in ntb switchtec ntb_hw_switchtec ntb_tool ntb_pingpong ntb_perf \
	 smartio_ntb; do
	cp "$out/$m.ko" "$tmp/root/"
done
mkdir -p "$tmp/root/msi"
cp "$out"/msi/*.ko "$tmp/root/msi/"
. "$src/tests/kmod/guest-lib.sh"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

# The die sensor reads 51.25 degrees C (MRPC DIETEMP in the guest).
SW_DEVICE=switchtec-nt,die-temp=5125
SW_SWITCH_ARGS="-x ${NTB_STX:-switchtec,luts=32,rids=32,bar2=4M,bar4=4M}"
perf=${NTB_PERF:-10}
starts=${NTB_PERF_STARTS:-1}
# Each side passes one check per start and one for no invalid command.
perfchecks=0
[ "$perf" -gt 0 ] && perfchecks=$((starts + 1))
t0=$(date +%s)
for lut in 0 1; do
	rm -f "$tmp/sw.sock"
	sw_start 2
	swpid=${pids##* }
	SW_APPEND="swlut=$lut swperf=$perf swstarts=$starts swmsi=$lut"
	sw_guest 0 "$((lut + 1))" 256 -d guest_errors
	pid0=$guest_pid
	sw_guest 1 "$((lut + 1))" 256 -d guest_errors
	wait "$guest_pid" "$pid0"
	echo "use_lut_mws=$lut: both guests done after $(($(date +%s) - t0)) s"
	# use_lut_mws=1 adds the LUT window and has one segment check
	# instead of two.
	# use_lut_mws=1 adds ntb_msi_test (2 checks).
	sw_check "p0-$((lut + 1))" $((19 + perfchecks + 2 * lut))
	sw_check "p1-$((lut + 1))" $((19 + perfchecks + 2 * lut))
	grep -h '^NTB-PERF' "$tmp/p0-$((lut + 1)).log" "$tmp/p1-$((lut + 1)).log" |
		tr -d '\r'
	# Guest errors the model logged: exactly the two each guest made on
	# purpose (the LUT write without LOCK, the reserved read); the
	# drivers themselves wrote nothing the chip would refuse.
	for p in 0 1; do
		q=$tmp/p$p-$((lut + 1)).qemu
		n=$(grep -c 'switchtec-nt' "$q")
		if grep -q "control block (0x1028) without its LOCK" "$q" &&
		   grep -q "read of 4 bytes at GAS offset 0x1000" "$q" &&
		   [ "$n" -eq 2 ]; then
			echo "PASS: port $p: the model logged the 2 refused accesses, no other guest error"
		else
			echo "FAIL: port $p: $n guest errors logged by the model:"
			cat "$q"
			fails=$((fails + 1))
		fi
	done
	kill "$swpid" 2>/dev/null
	wait "$swpid" 2>/dev/null
done
if [ "$fails" -eq 0 ]; then
	echo "PASS: check-ntb (switchtec)"
	exit 0
fi
echo "--- switch"
cat "$tmp/switch.log"
echo "FAIL: check-ntb (switchtec) ($fails problems)"
exit 1
