#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of a check-ntb IOMMU guest (tests/ntb/check_iommu.sh): port swport=
# of a 2-port smartio-ntb-switch is smartio node host<port> of two.  host0
# lends its NVMe and its edu device; host1 (1.5 GiB of RAM, its NTB
# function in a translated VT-d domain, interrupt remapping on) borrows
# them with DMA windows in that domain (smartio(4)):
#  - the NVMe with a 256 MiB strict window: the unmodified nvme driver
#    runs 256 MiB of O_DIRECT writes and reads from buffers spread over
#    1 GiB of its RAM (sio_dmaspread), every byte equal;
#  - edu with a 128 MiB window: sio_edu_msi.ko has the device write where
#    a window onto RAM from address 0 would put a page it never mapped,
#    into a page it mapped, and into that page after its unmap: the two
#    canaries stay, the mapped write lands, host1's IOMMU logs the fault
#    of its NTB function at the never-mapped IOVA (QEMU's VT-d model
#    compresses the next faults of the same source), and the NVMe and
#    host0 keep working;
#  - host0 reads what host1 wrote once the NVMe is back with its driver;
#  - with premap=1 the NVMe again, all of RAM mapped in advance, then
#    edu, and a segment of host1 mapped for it (segments/tdma/dma/<edu>)
#    into which edu's DMA engine writes 2 KiB (sio_edu_msi dma_to=);
#  - the same over a strict window (tsdma): a range of the window mapped
#    onto the segment until its unmap for edu; edu's write to the same
#    address after the unmap is a DMAR fault at that range's IOVA, the
#    segment's canary kept; mapped again, edu's write lands;
#  - host1's borrow of the NVMe for host0 (window=256M) is refused on
#    host1 (EPERM), and host0 counts no refused message of host1;
#  - host0 attaches a 64 KiB segment of host1 (tseg) and reads and writes
#    each of its pages through host1's translated NTB function.
# With swhw=switchtec (check_iommu.sh NTB_HW=switchtec) the two nodes are
# partitions of the Switchtec model under switchtec.ko and
# ntb_hw_switchtec.ko (use_lut_mws=1): the DMA windows take the direct
# window of BAR 4, one translation per pair of partitions, so host1
# returns the NVMe before it borrows edu and borrows the NVMe again
# (window=256M) to show it still works after the faults.
# "PASS: ..." / "FAIL: ..."; "NTB-END" ends.
. /guest-common.sh
P=$(karg swport)
phase=$(karg swphase)
ntbhw=$(karg swhw)
N=2
echo "NTB-START port=$P phase=$phase"
STEP_WAIT=600
. /cluster-steps.sh

modules_load
nvme_bdf=
edu_bdf=
for d in /sys/bus/pci/devices/*; do
	case "$(cat "$d/vendor"):$(cat "$d/device"):$(cat "$d/class")" in
	0x1234:0x11e8:*) edu_bdf=$(basename "$d") ;;
	*:*:0x010802) nvme_bdf=$(basename "$d") ;;
	esac
done
if [ "$ntbhw" = switchtec ]; then
	# LUT windows of 64 KiB, and direct windows of all of BAR 4 (2 GiB:
	# premap=1's DMA window over this machine's RAM).
	insmod /ntb.ko || fail "insmod ntb.ko"
	insmod /switchtec.ko || fail "insmod switchtec.ko"
	insmod /ntb_hw_switchtec.ko use_lut_mws=1 max_mw_size=0x80000000 ||
		fail "insmod ntb_hw_switchtec.ko use_lut_mws=1"
	registered() { dmesg | grep -q "NTB device registered"; }
	waitfor 30 registered || fail "ntb_hw_switchtec did not register"
	insmod /smartio_ntb.ko node="$P" || fail "insmod smartio_ntb.ko"
	ntb_drv=switchtec
else
	sioswitch_up
	ntb_drv=ntb_sioswitch
fi
ntb_bdf=$(basename "$(readlink -f /sys/bus/pci/drivers/$ntb_drv/0000:*)")
if [ "$P" = 0 ]; then
	smartio_up devices="$nvme_bdf,$edu_bdf"
else
	smartio_up
fi
smartiofs_up
waitfor 600 is /smartio/nodes/host$((1 - P))/state up ||
	{ fail "the other node is not up"; finish; }
pass "/smartio: the other node up"
step_debug() {
	cat /sys/kernel/debug/smartio/state
	dmesg | tail -n 40
}
host1_gone() { ! is /smartio/nodes/host1/state up; }
dev_of() {
	local d
	for d in /smartio/dev/host0-*; do
		[ "$(cat "$d/vendor" 2>/dev/null)" = "$1" ] && echo "$d"
	done
}
listed() { [ -n "$(dev_of 0x1234)" ] && [ -n "$(dev_of 0x1b36)" ]; }
waitfor 120 listed || fail "no edu and NVMe of host0 in /smartio/dev: $(ls /smartio/dev)"
edu=$(dev_of 0x1234)
nvme=$(dev_of 0x1b36)

if [ "$P" = 0 ]; then
	echo all >"$nvme/lend" && echo all >"$edu/lend" || fail "lend all"
	mark lent
	# The lender's registry shows the borrower's window as host1's does
	# (check_iommu.sh compares the two lines).
	wait_for window 1
	echo "DMA-WINDOW host0 $(grep '^host1 ' "$nvme/dma_window")"
	# host1's sized borrow for host0 never came here (refused there).
	line=$(grep '^node host1 ' /sys/kernel/debug/smartio/state)
	case "$line" in
	*" refused=0") pass "host1's borrow for host0 never reached host0: $line" ;;
	*) fail "host0 refused messages of host1: $line" ;;
	esac
	mark seen
	# The NVMe back with its driver: what host1 wrote last is there.
	wait_for returned 1
	waitfor 60 test -b /dev/nvme0n1 || fail "no /dev/nvme0n1 after the return"
	if sio_dmaspread /dev/nvme0n1 16 64 256 9 check >/tmp/out 2>&1; then
		pass "host0 reads host1's 16 MiB back: $(cat /tmp/out)"
	else
		fail "host0 reading host1's data: $(cat /tmp/out)"
	fi
	# Item 3: the lender's IOMMU confines the lent device to its windows.
	a="Request device \[${edu_bdf#0000:}\] fault addr 0x100000 "
	if dmesg | grep -q "DMAR: \[DMA Write.*$a"; then
		pass "host0's IOMMU refused edu's write outside its windows: $(dmesg | grep "$a" | tail -n 1 | cut -c16-)"
	else
		fail "no DMAR fault of edu at 0x100000 on host0: $(dmesg | grep 'DMAR: \[' | tail -n 3)"
	fi
	mark checked
	# A segment of host1, whose NTB function translates: attached and
	# reached here through host1's inbound entry, which must lead to
	# the segment's IOVA in that domain.  The attachment is this
	# shell's (a brace group, not a subshell).
	wait_for xlat 1
	s=/smartio/nodes/host1/segments/tseg
	waitfor 60 is "$s/available" 1 || fail "tseg not exported: $(ls /smartio/nodes/host1/segments)"
	{ echo host0 >"$s/attach"; } 2>/tmp/err || fail "attach tseg: $(cat /tmp/err)"
	# Every page: host1 wrote its pages through its mmap (by physical
	# address), they are read here through host1's IOMMU (by IOVA).
	bad=
	for n in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		got=$(sio_segrw "$s/mem" $((n * 4096)) read 13)
		[ "$got" = "$(printf 'host1 page %02d' "$n")" ] || bad="$bad $n:'$got'"
		sio_segrw "$s/mem" $((n * 4096 + 2048)) write "$(printf 'host0 page %02d' "$n")" ||
			bad="$bad $n:write"
	done
	if [ -z "$bad" ]; then
		pass "host1's segment tseg, 16 pages, read and written here through its translated NTB function"
	else
		fail "host1's segment tseg here:$bad"
	fi
	mark xlatw
	waitfor 900 host1_gone || fail "host1 still up"
	finish
fi

# host1.
type=$(cat "/sys/bus/pci/devices/$ntb_bdf/iommu_group/type" 2>/dev/null)
case "$type" in
DMA*) pass "the NTB function $ntb_bdf is in a translated IOMMU domain ($type)" ;;
*) fail "the NTB function $ntb_bdf: IOMMU domain '$type'" ;;
esac
if dmesg | grep -q "Enabled IRQ remapping"; then
	pass "interrupt remapping on: $(dmesg | grep -m 1 'Enabled IRQ remapping' | cut -c16-)"
else
	fail "interrupt remapping is off"
fi
wait_for lent 0
faults() { dmesg | grep -c "DMAR: \[DMA Write.*Request device \[${ntb_bdf#0000:}\]"; }

# A borrow for another machine's node (host0's own device for host0,
# sized): refused here before anything is sent, window= and all, so
# host0 counts nothing against host1 (host0 checks its count).
refused "$nvme/borrow" "host0 window=256M" "Operation not permitted"

# The NVMe, a strict 256 MiB window, 1.5 GiB of RAM.
if echo "host1 window=256M" >"$nvme/borrow" 2>/tmp/err; then
	pass "host1 borrows ${nvme##*/} with window=256M"
else
	fail "borrow ${nvme##*/} window=256M: $(cat /tmp/err)"
	step_debug
	finish
fi
# dma_window (here and on host0): the IOVA smartio.ko logged, 256 MiB.
line=$(dmesg | grep "smartio: ${nvme##*/}: DMA window" | tail -n 1)
win=$(grep '^host1 ' "$nvme/dma_window")
case "$line" in
*"DMA window $(echo "$win" | cut -d' ' -f2)+0x10000000 in $ntb_bdf's IOMMU domain, strict"*)
	if [ "$(echo "$win" | cut -d' ' -f3)" = 268435456 ]; then
		pass "dma_window '$win' is the window in $ntb_bdf's domain: ${line#*: }"
	else
		fail "dma_window '$win', log '$line'"
	fi ;;
*) fail "dma_window '$win', log '$line'" ;;
esac
echo "DMA-WINDOW host1 $win"
mark window
waitfor 120 test -b /dev/nvme0n1 || fail "no /dev/nvme0n1 on the shadow"
if sio_dmaspread /dev/nvme0n1 256 1024 256 7 >/tmp/out 2>&1; then
	pass "nvme through the strict window: $(cat /tmp/out)"
else
	fail "nvme through the strict window: $(cat /tmp/out)"
	step_debug
fi
grep "^shadow" /sys/kernel/debug/smartio/state

wait_for seen 0
# Over Switchtec the DMA window holds the direct window toward host0, its
# one translation: the NVMe goes back before edu comes.
if [ "$ntbhw" = switchtec ]; then
	if echo host1 >"$nvme/return"; then
		pass "host1 returns ${nvme##*/}: the direct window is edu's next"
	else
		fail "return ${nvme##*/} before edu"
	fi
fi
# edu: writes where nothing is mapped, and after an unmap.
if echo "host1 window=128M" >"$edu/borrow" 2>/tmp/err; then
	pass "host1 borrows ${edu##*/} with window=128M"
else
	fail "borrow ${edu##*/}: $(cat /tmp/err)"
fi
# The window as edu addresses it (debugfs) and as host1's IOMMU sees it.
base=$(sed -n "s/^shadow .* of $(cat "$edu/bdf") dma_window=\(0x[0-9a-f]*\)+.*/\1/p" \
	/sys/kernel/debug/smartio/state)
iova=$(grep '^host1 ' "$edu/dma_window" | cut -d' ' -f2)
before=$(faults)
insmod /sio_edu_msi.ko raises=2 fence_base="${base:-0}" ||
	fail "insmod sio_edu_msi.ko fence_base=$base"
fenced() { dmesg | grep -q "sio_edu_msi .*: fence unmapped"; }
waitfor 120 fenced || fail "sio_edu_msi did not finish its fence checks"
dmesg | grep "sio_edu_msi .*: fence"
ok=$(cat /sys/module/sio_edu_msi/parameters/fence_ok)
for what in never-mapped mapped unmapped; do
	line=$(dmesg | grep "sio_edu_msi .*: fence $what " | tail -n 1)
	case "$what:$line" in
	never-mapped:*"canary unchanged (0)" | mapped:*"landed (0)" | unmapped:*"canary unchanged (0)")
		pass "edu's write ${line#*: fence }" ;;
	*) fail "edu's write, $what: '$line'" ;;
	esac
done
after=$(faults)
# The write where nothing was mapped is a fault of host1's IOMMU at the
# IOVA it aimed at.  QEMU's VT-d model then compresses the faults of the
# same source (it logs "New fault is not recorded due to compression of
# faults"), so the write after the unmap is shown blocked by its canary.
page=$(dmesg | sed -n 's/.*fence never-mapped .*(page \(0x[0-9a-f]*\)).*/\1/p' | tail -n 1)
a=$(printf '%#x' $((iova + page)))
if dmesg | grep -q "DMAR: \[DMA Write.*Request device \[${ntb_bdf#0000:}\] fault addr $a "; then
	pass "host1's IOMMU logged the fault at $a: $(dmesg | grep "fault addr $a " | tail -n 1 | cut -c16-)"
else
	fail "no DMAR fault of $ntb_bdf at $a (window $iova, device base $base): $(dmesg | grep 'DMAR: \[' | tail -n 3)"
fi
if [ "$ok" = 3 ] && [ $((after - before)) -ge 1 ]; then
	pass "fence_ok $ok, $((after - before)) DMA write faults of $ntb_bdf"
else
	fail "fence_ok '$ok', DMA write faults of $ntb_bdf $before -> $after"
fi
rmmod sio_edu_msi || fail "rmmod sio_edu_msi"
# Over Switchtec edu goes back and the NVMe comes again, strict, 256 MiB.
returns="${edu##*/} and ${nvme##*/}"
if [ "$ntbhw" = switchtec ]; then
	echo host1 >"$edu/return" || fail "return ${edu##*/}"
	returns=${nvme##*/}
	if echo "host1 window=256M" >"$nvme/borrow" 2>/tmp/err &&
	   waitfor 120 test -b /dev/nvme0n1; then
		pass "host1 borrows ${nvme##*/} again after edu's faults: $(grep '^host1 ' "$nvme/dma_window")"
	else
		fail "borrow ${nvme##*/} again: $(cat /tmp/err)"
	fi
fi
# Both sides keep working: the NVMe through the window, host0's node.
if sio_dmaspread /dev/nvme0n1 16 64 256 9 >/tmp/out 2>&1 &&
   is /smartio/nodes/host0/state up; then
	pass "after the faults: host0 up, nvme $(cat /tmp/out)"
else
	fail "after the faults: host0 '$(cat /smartio/nodes/host0/state)', nvme $(cat /tmp/out)"
fi
if { [ "$ntbhw" = switchtec ] || echo host1 >"$edu/return"; } &&
   echo host1 >"$nvme/return"; then
	pass "host1 returns $returns"
else
	fail "return"
fi
mark returned
wait_for checked 0

# A segment of this machine, whose NTB function translates, attached by
# host0: its inbound entry leads to the segment's IOVA (the heap's DMA
# address), so host0 reads what was written here and writes back.
x=/smartio/self/segments/tseg
pages() {
	local n
	for n in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		sio_segrw "$x/mem" $((n * 4096)) write "$(printf 'host1 page %02d' "$n")" ||
			return 1
	done
}
if mkdir "$x" && echo 64k >"$x/size" && pages && echo 1 >"$x/available"; then
	pass "segment tseg of $(cat "$x/size") bytes, each page named, exported"
else
	fail "segment tseg: size '$(cat "$x/size")'"
fi
mark xlat
wait_for xlatw 0
bad=
for n in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
	got=$(sio_segrw "$x/mem" $((n * 4096 + 2048)) read 13)
	[ "$got" = "$(printf 'host0 page %02d' "$n")" ] || bad="$bad $n:'$got'"
done
if [ -z "$bad" ]; then
	pass "host0's writes into tseg's 16 pages landed in this machine's segment"
else
	fail "tseg's pages here, not host0's writes:$bad"
	dmesg | grep 'DMAR: \[' | tail -n 3
fi

# SmartIO 8.1: all of RAM mapped in advance, the default window.
echo 1 >/sys/module/smartio/parameters/premap
if echo host1 >"$nvme/borrow" 2>/tmp/err; then
	win=$(grep '^host1 ' "$nvme/dma_window")
	case "$win:$(dmesg | grep "smartio: ${nvme##*/}: DMA window" | tail -n 1)" in
	*" 2147483648:"*"all RAM mapped in advance"*)
		pass "premap=1: dma_window '$win', all RAM mapped in advance" ;;
	*) fail "premap=1: dma_window '$win': $(dmesg | grep "smartio: ${nvme##*/}:" | tail -n 1)" ;;
	esac
	waitfor 120 test -b /dev/nvme0n1 || fail "no /dev/nvme0n1 on the shadow"
	if sio_dmaspread /dev/nvme0n1 64 1024 256 11 >/tmp/out 2>&1; then
		pass "nvme through the premapped window: $(cat /tmp/out)"
	else
		fail "nvme through the premapped window: $(cat /tmp/out)"
	fi
	echo host1 >"$nvme/return" || fail "return after premap"
else
	fail "premap=1 borrow: $(cat /tmp/err)"
fi
dma_to_line="sio_edu_msi .*: dma_to "
# edu's DMA engine writes 2 KiB to device address $1 (sio_edu_msi dma_to=).
edu_dma_to() {
	local before
	before=$(dmesg_lines "$dma_to_line")
	insmod /sio_edu_msi.ko raises=1 dma_to="$1" ||
		{ fail "insmod sio_edu_msi.ko dma_to=$1"; return 1; }
	waitfor 60 dmesg_lines_above "$dma_to_line" "$before" ||
		fail "sio_edu_msi did not write to $1"
	rmmod sio_edu_msi || fail "rmmod sio_edu_msi"
}
# The first and the last 16 bytes of edu's 2 KiB in segment $1.
seg_ends() {
	echo "$(sio_segrw "$1/mem" 0 read 16)|$(sio_segrw "$1/mem" 2032 read 16)"
}
edu_text="sio_edu_msi DMA |sio_edu_msi DMA "
canary="canary canary ca"

# A segment of this machine mapped for a device it borrows over a
# premapped window: the device's address of it is the window's plus its
# physical address, and edu's DMA engine writes 2 KiB into it there.
t=/smartio/self/segments/tdma
if echo host1 >"$edu/borrow" 2>/tmp/err && mkdir "$t" &&
   echo 64k >"$t/size" && mkdir "$t/dma/${edu##*/}" 2>/tmp/err; then
	ioaddr=$(cat "$t/dma/${edu##*/}/ioaddr")
	edu_dma_to "$ioaddr"
	ends=$(seg_ends "$t")
	if [ "$ends" = "$edu_text" ]; then
		pass "edu wrote 2 KiB into segment tdma mapped for it at $ioaddr over the premapped window: '$ends'"
	else
		fail "segment tdma at $ioaddr holds '$ends': $(dmesg | grep 'sio_edu_msi .*: dma_to')"
		dmesg | grep 'DMAR: \[' | tail -n 3
	fi
	rmdir "$t/dma/${edu##*/}" || fail "rmdir tdma/dma/${edu##*/}"
else
	fail "segment tdma mapped for ${edu##*/} over the premapped window: $(cat /tmp/err)"
fi
rmdir "$t" 2>/dev/null
echo host1 >"$edu/return" || fail "return ${edu##*/} after premap"
echo 0 >/sys/module/smartio/parameters/premap

# The same over a strict window: the segment's mapping for edu takes a
# range of the window's pool (the top, the driver's mappings take the
# bottom) mapped onto the segment until its unmap for edu.  Then edu's
# write to the same device address is blocked: a DMAR fault of the NTB
# function at that range's IOVA, the segment's canary kept.  Mapped
# again, edu's write lands again.
t=/smartio/self/segments/tsdma
d=$t/dma/${edu##*/}
if echo "host1 window=128M" >"$edu/borrow" 2>/tmp/err && mkdir "$t" &&
   echo 64k >"$t/size" && mkdir "$d" 2>/tmp/err; then
	ioaddr=$(cat "$d/ioaddr")
	base=$(sed -n "s/^shadow .* of $(cat "$edu/bdf") dma_window=\(0x[0-9a-f]*\)+.*/\1/p" \
		/sys/kernel/debug/smartio/state)
	iova=$(grep '^host1 ' "$edu/dma_window" | cut -d' ' -f2)
	at=$(printf '%#x' $((iova + ioaddr - base)))
	edu_dma_to "$ioaddr"
	ends=$(seg_ends "$t")
	if [ "$ends" = "$edu_text" ]; then
		pass "edu wrote 2 KiB into segment tsdma mapped for it at $ioaddr (IOVA $at) over the strict window: '$ends'"
	else
		fail "segment tsdma at $ioaddr (IOVA $at) holds '$ends': $(dmesg | grep 'sio_edu_msi .*: dma_to' | tail -n 1)"
		dmesg | grep 'DMAR: \[' | tail -n 3
		step_debug
	fi
	rmdir "$d" || fail "rmdir tsdma/dma/${edu##*/}"
	if ! sio_segrw "$t/mem" 0 write "$canary" ||
	   ! sio_segrw "$t/mem" 2032 write "$canary"; then
		fail "canary into tsdma"
	fi
	before=$(faults)
	edu_dma_to "$ioaddr"
	ends=$(seg_ends "$t")
	if [ "$ends" = "$canary|$canary" ]; then
		pass "edu's write to $ioaddr after tsdma's unmap for it: canary unchanged"
	else
		fail "tsdma after its unmap for edu holds '$ends'"
	fi
	if dmesg | grep -q "DMAR: \[DMA Write.*Request device \[${ntb_bdf#0000:}\] fault addr $at "; then
		pass "host1's IOMMU logged the fault at $at ($before -> $(faults) faults): $(dmesg | grep "fault addr $at " | tail -n 1 | cut -c16-)"
	else
		fail "no DMAR fault of $ntb_bdf at $at after tsdma's unmap: $(dmesg | grep 'DMAR: \[' | tail -n 3)"
	fi
	# The borrow still works: mapped again, written again.
	sio_segrw "$t/mem" 0 write "$canary"
	if mkdir "$d" 2>/tmp/err; then
		ioaddr=$(cat "$d/ioaddr")
		edu_dma_to "$ioaddr"
		ends=$(seg_ends "$t")
		if [ "$ends" = "$edu_text" ]; then
			pass "tsdma mapped for edu again at $ioaddr: edu's write landed"
		else
			fail "tsdma mapped again at $ioaddr holds '$ends'"
		fi
		rmdir "$d" || fail "rmdir tsdma/dma/${edu##*/} again"
	else
		fail "tsdma mapped for ${edu##*/} again: $(cat /tmp/err)"
	fi
else
	fail "segment tsdma mapped for ${edu##*/} over the strict window: $(cat /tmp/err)"
	step_debug
fi
rmdir "$t" 2>/dev/null
echo host1 >"$edu/return" || fail "return ${edu##*/} after tsdma"
finish
