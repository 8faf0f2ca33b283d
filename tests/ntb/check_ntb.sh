#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-ntb: two QEMU guests joined by two software NTBs (kmod/ntb
# over ivshmem-doorbell and smartio-ivshmem-server) run the mainline
# ntb_pingpong and ntb_tool, and smartio_ntb (discovery, messages); then
# smartio.ko fabric=ntb on top of smartio_ntb, with smartiofs serving
# /smartio in each guest: both nodes listed, a segment of each guest
# mapped by the other, attach and detach from both guests at once; guest b
# powers off, guest a must see the link, the smartio peer and host1 go
# down (its segment gone, a's mapping of it revoked), then b boots again
# and both come back, segments too.
#
# NTB_FABRIC=switch runs the same guests with the two NTBs as ports of two
# 2-port smartio-ntb-switches (contrib/qemu, driver ntb_sioswitch) instead
# of ivshmem devices: the same checks, smartio.ko's included.
#
# Environment: SRCDIR, BUILDDIR (set by make), KVER, LINUX_SOURCE (see
# build.sh), NTB_TIMEOUT (seconds per guest, default 900), NTB_KEEP=1 keeps
# the work directory, NTB_FABRIC (ivshmem or switch), NTBSW_OUT (see
# check_switch.sh).  Exit 77 when qemu, busybox-static, cpio, the kernel
# image, headers or source are missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-900}

skip() { echo "SKIP: check-ntb: $*"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
command -v cpio >/dev/null || skip "no cpio"
busybox=/bin/busybox
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	skip "no static busybox (apt-get install busybox-static)"
fabric=${NTB_FABRIC:-ivshmem}
server=$build/contrib/ivshmem/smartio-ivshmem-server
[ "$fabric" = switch ] || [ -x "$server" ] || skip "$server not built"
if [ "$fabric" = switch ]; then
	sw=${NTBSW_OUT:-$build/contrib/qemu/build}
	sh "$src/contrib/qemu/build.sh" "$sw" >"$build/ntbsw-build.log" 2>&1
	st=$?
	[ "$st" -eq 77 ] && skip "$(grep SKIP "$build/ntbsw-build.log")"
	[ "$st" -eq 0 ] || { tail -5 "$build/ntbsw-build.log"; echo "FAIL: contrib/qemu/build.sh"; exit 1; }
fi
out=$build/tests/ntb/build
sh "$src/tests/ntb/build.sh" "$src" "$out"
st=$?
[ "$st" -eq 77 ] && exit 77
[ "$st" -eq 0 ] || { echo "FAIL: building the NTB modules"; exit 1; }
. "$src/tests/kmod/guest-lib.sh"
kernel_find || skip "no headers of ${KVER:-any kernel}"
[ -r "$kernel" ] || skip "no readable $kernel (apt-get install linux-image-amd64)"
. "$src/tests/ntb/switch-lib.sh"
sw_smartio_build

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-ntb.XXXXXX")
pids=
cleanup() {
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
trap cleanup EXIT
trap 'exit 1' INT TERM

# The initramfs: busybox, the modules, guest-init.sh as /init.
mkdir -p "$tmp/root/bin"
cp "$busybox" "$tmp/root/bin/busybox"
cp "$src/tests/ntb/guest-init.sh" "$tmp/root/init"
chmod 755 "$tmp/root/init"
cp "$src/tests/kmod/guest-common.sh" "$tmp/root/guest-common.sh"
cp "$out"/ntb.ko "$out"/ntb_ivshmem.ko "$out"/ntb_sioswitch.ko "$out"/ntb_tool.ko \
	"$out"/ntb_pingpong.ko "$tmp/root/"
sw_smartio_root "$tmp/root"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

# Two software NTBs between the guests: two servers (or switches), two
# devices each.
for i in 1 2; do
	if [ "$fabric" = switch ]; then
		"$sw/smartio-ntb-switch" -S "$tmp/ivs$i.sock" -n 2 -w 2M \
			>"$tmp/server$i.log" 2>&1 &
	else
		"$server" -S "$tmp/ivs$i.sock" -l 4M -n 4 -p 2 -v \
			>"$tmp/server$i.log" 2>&1 &
	fi
	pids="$pids $!"
	n=0
	until grep -q 'listening\|ports, ' "$tmp/server$i.log" 2>/dev/null; do
		n=$((n + 1))
		[ "$n" -lt 50 ] || { echo "FAIL: server $i did not start"; cat "$tmp/server$i.log"; exit 1; }
		sleep 0.1
	done
done

# guest ROLE PHASE: boot one guest in the background; its pid in $guest_pid.
guest() {
	if [ "$fabric" = switch ]; then
		[ "$1" = a ] && port=0 || port=1
		set -- "$1" "$2" "$sw/smartio-ntb-qemu" \
			-machine q35,memory-backend=ram \
			-object memory-backend-memfd,id=ram,size=512M,share=on \
			-device "smartio-ntb-port,switch=$tmp/ivs1.sock,port=$port,memdev=ram" \
			-device "smartio-ntb-port,switch=$tmp/ivs2.sock,port=$port,memdev=ram"
		drv=ntb_sioswitch
	else
		set -- "$1" "$2" qemu-system-x86_64 -machine q35 \
			-chardev "socket,path=$tmp/ivs1.sock,id=ivs1" \
			-device ivshmem-doorbell,chardev=ivs1,vectors=4 \
			-chardev "socket,path=$tmp/ivs2.sock,id=ivs2" \
			-device ivshmem-doorbell,chardev=ivs2,vectors=4
		drv=ntb_ivshmem
	fi
	role=$1 phase=$2
	shift 2
	timeout "$limit" "$@" -accel tcg -smp "$GUEST_SMP" \
		-m 512 -display none -monitor none -no-reboot \
		-serial "file:$tmp/$role$phase.log" -pidfile "$tmp/$role$phase.pid" \
		-kernel "$kernel" -initrd "$tmp/initrd.gz" \
		-append "console=ttyS0 panic=-1 ntbrole=$role ntbphase=$phase ntbdrv=$drv" \
		>"$tmp/$role$phase.qemu" 2>&1 &
	guest_pid=$!
	pids="$pids $guest_pid"
}
# wait_joined N: both servers have seen N joins.
wait_joined() {
	n=0
	until [ "$(cat "$tmp"/server[12].log | grep -c joined)" -ge $(($1 * 2)) ]; do
		n=$((n + 1))
		[ "$n" -lt 300 ] || return 1
		sleep 0.1
	done
}

t0=$(date +%s)
guest a 1
a_pid=$guest_pid
wait_joined 1 || { echo "FAIL: guest a did not connect"; cat "$tmp/a1.qemu"; exit 1; }
guest b 1
b_pid=$guest_pid
wait "$b_pid"
echo "guest b powered off after $(($(date +%s) - t0)) s"
sleep 2
guest b 2
b_pid=$guest_pid
wait "$b_pid"
wait "$a_pid"
echo "both guests done after $(($(date +%s) - t0)) s"

# check LOG MIN_PASSES: PASS/FAIL lines, the end marker, no kernel splats.
fails=0
check() {
	log=$tmp/$1.log
	echo "--- guest $1"
	kbad=0
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
	[ "$bad" -eq 0 ] || { fails=$((fails + bad)); tail -n 40 "$log"; }
}
check a1 50
check b1 26
check b2 16
echo "--- servers"
cat "$tmp/server1.log" "$tmp/server2.log"
if [ "$fails" -eq 0 ]; then
	echo "PASS: check-ntb on $kernel_tag"
	exit 0
fi
echo "FAIL: check-ntb ($fails problems)"
exit 1
