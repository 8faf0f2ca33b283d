#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-ntb, the transport part: two QEMU guests on a 2-port
# smartio-ntb-switch run the mainline ntb_transport and ntb_netdev, as a
# user of the mainline NTB stack would (tests/ntb/transport-init.sh): the
# carrier comes up, ping answers, and NTB_MIB MiB (default 64) cross over
# TCP in each direction, their MD5 compared here and their time printed.
# Window 1 is 1 GiB, as in the lending tests, so ntb_transport is loaded
# with max_mw_size (without it, it asks the page allocator for 1 GiB).
#
# Environment: SRCDIR, BUILDDIR (set by make), KVER, LINUX_SOURCE (see
# build.sh), NTB_TIMEOUT (seconds per guest, default 900), NTB_MIB, NTB_MEM
# (MiB of RAM per guest, default 512),
# NTB_W1 (window 1's size, default 1G; empty: as window 0), NTB_IOMMU
# (below), NTB_DD=1 (port 0's CPU writes and reads port 1's receive
# buffer through the window with sw_bench, timed, not checked), NTB_MAX_MW0
# and NTB_MAX_MW1 (below), NTB_BENCH=1 (make bench: then TCP on port 0's
# loopback and ntb_perf, tests/bench/ntb_transport.sh), NTB_KEEP=1 keeps
# the work directory, NTB_HW=switchtec runs it over two partitions of the
# switchtec-nt model with the mainline switchtec.ko and ntb_hw_switchtec.ko
# (make check-ntb-switchtec; window 1 is then BAR4, 4 MiB).  Exit 77
# when qemu, busybox-static, cpio, the kernel image, headers or source
# are missing.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_TIMEOUT:-900}
mib=${NTB_MIB:-64}
mem=${NTB_MEM:-512}
w1=${NTB_W1-1G}
# ntb_transport's max_mw_size on port 0 and port 1 (see transport-init.sh):
# 512 KiB is a ring of 7 usable 64 KiB entries at port 1, where ntb_netdev
# at port 0 stops its queue at every third packet (it sends only while 5
# entries are free); 4 MiB leaves window 0's 2 MiB whole (31 entries).
mw0=${NTB_MAX_MW0:-524288}
mw1=${NTB_MAX_MW1:-4194304}

skip() { echo "SKIP: check-ntb (transport): $*"; exit 77; }
. "$src/tests/ntb/switch-lib.sh"
sw_prepare

# NTB_IOMMU=1: both NTB functions behind intel-iommu in translated
# domains (intel_iommu=on, no iommu=pt; interrupt remapping on), the
# case where a window's target is an IOVA, so the switch must translate
# it through the receiver's IOMMU (contrib/qemu/ntbsw-iommu.c); then a
# write aimed at an IOVA port 1 never mapped must fault there and leave
# port 1's RAM alone (swfault=1 in transport-init.sh; the canary is read
# here from port 1's RAM file).  NTB_IOMMU=pt: the same IOMMU with the NTB functions passed through
# (iommu=pt, the switch's RAM aliases), to compare the two.
iommu=
fault=0
case "${NTB_IOMMU:-0}" in
1)
	SW_IOMMU=intremap=on
	SW_RAM_FILE=1
	iommu=" intel_iommu=on"
	if [ "${NTB_HW:-}" != switchtec ]; then
		fault=1
		iommu="$iommu swfault=1"
	fi
	;;
pt)
	SW_IOMMU=intremap=on
	iommu=" intel_iommu=on iommu=pt"
	;;
esac

mkdir -p "$tmp/root/bin"
cp "$busybox" "$tmp/root/bin/busybox"
cp "$src/tests/ntb/transport-init.sh" "$tmp/root/init"
chmod 755 "$tmp/root/init"
cp "$src/tests/kmod/guest-common.sh" "$tmp/root/guest-common.sh"
hw=ntb_sioswitch
hwarg=
if [ "${NTB_HW:-}" = switchtec ]; then
	hw="switchtec ntb_hw_switchtec"
	hwarg=" swhw=1"
	SW_DEVICE=switchtec-nt
	SW_SWITCH_ARGS="-x ${NTB_STX:-switchtec,luts=32,rids=32,bar2=4M,bar4=4M}"
	w1=
fi
for m in ntb $hw ntb_transport ntb_netdev ntb_perf; do
	cp "$out/$m.ko" "$tmp/root/"
done
# With the fault step, port 1 also has QEMU's edu device behind its
# IOMMU: its DMA engine writes into port 1's window onto port 0 through
# both guests' IOMMUs (its own domain, then port 0's tables: nested), and
# its driver reads it back through the CPU's mapping (sio_edu_msi's p2p).
edu1=
if [ "$fault" = 1 ]; then
	sw_edu_build
	cp "$out/edu/sio_edu_msi.ko" "$tmp/root/"
	edu1="-device edu,dma_mask=0xffffffffffffffff"
fi
if [ "${NTB_DD:-0}" = 1 ]; then
	${CC:-cc} -static -O2 -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L \
		-Wall -Wextra -Werror -o "$tmp/root/bin/sw_bench" \
		"$src/tests/ntb/sw_bench.c" || skip "cannot link a static program"
fi
. "$src/tests/kmod/guest-lib.sh"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

sw_start 2 "$w1"
t0=$(date +%s)
SW_APPEND="swmib=$mib swmw0=$mw0 swmw1=$mw1 swbench=${NTB_BENCH:-0}$hwarg$iommu swdd=${NTB_DD:-0}"
sw_guest 0 1 "$mem"
pid0=$guest_pid
# shellcheck disable=SC2086 # $edu1 is one device or none
sw_guest 1 1 "$mem" $edu1
wait "$guest_pid" "$pid0"
echo "both guests done after $(($(date +%s) - t0)) s"

sw_check p0-1 3
# The fault step adds port 1's edu check, its fault and its ping.
sw_check p1-1 $((3 + 3 * fault))
# What one port sent, the other received, byte for byte.
sum() { sed -n "s/^NTB-SUM port $1 $2 \([0-9a-f]*\).*/\1/p" "$tmp/p$1-1.log" | tr -d '\r'; }
for p in 0 1; do
	q=$((1 - p))
	s=$(sum "$p" sent)
	r=$(sum "$q" received)
	if [ -n "$s" ] && [ "$s" = "$r" ]; then
		echo "PASS: $mib MiB from port $p arrived at port $q intact (md5 $s)"
	else
		echo "FAIL: port $p sent md5 '${s}', port $q received '${r}'"
		fails=$((fails + 1))
	fi
done
# Each port's QEMU said its NTB function's DMA is translated (what
# peers' windows then walk): the guest did not fall back to identity.
if [ "${NTB_IOMMU:-0}" = 1 ]; then
	for p in 0 1; do
		if grep -q "$p: its DMA is translated by VT-d" "$tmp/p$p-1.qemu"; then
			echo "PASS: port $p's NTB function was in a translated domain"
		else
			echo "FAIL: port $p's QEMU never saw its NTB function translated"
			fails=$((fails + 1))
		fi
	done
fi
# The canary: port 1's RAM at the IOVA port 0 wrote to, taken as a
# guest-physical address (where the write landed before the switch
# honoured the receiver's IOMMU), does not hold the pattern.
if [ "$fault" = 1 ]; then
	if ! grep -q '^NTB-FAULT port 0 wrote' "$tmp/p0-1.log"; then
		echo "FAIL: port 0 did not write to the unmapped IOVA"
		fails=$((fails + 1))
	elif [ "$(od -A n -t x8 -j $((0x8000)) -N 8 "$tmp/ram1-1" | tr -d ' ')" = 5a5a5a5a5a5a5a5a ]; then
		echo "FAIL: port 0's write to port 1's unmapped IOVA 0x8000 landed in port 1's RAM at 0x8000"
		fails=$((fails + 1))
	else
		echo "PASS: port 1's RAM at 0x8000 unchanged by the write to its unmapped IOVA 0x8000"
	fi
fi
grep -h '^NTB-\(TCP\|PERF\|DD\)' "$tmp"/p[01]-1.log | tr -d '\r'
if [ "$fails" -eq 0 ]; then
	echo "PASS: check-ntb (transport)"
	exit 0
fi
for p in 0 1; do
	echo "--- port $p: ntb_transport's queues at the end"
	sed -n '/^--- port/,/^NTB-END/p' "$tmp/p$p-1.log" | tr -d '\r'
done
echo "--- switch"
cat "$tmp/switch.log"
echo "FAIL: check-ntb (transport) ($fails problems)"
exit 1
