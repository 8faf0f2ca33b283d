#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of make bench's lending guests (tests/bench/ntb_lend.sh): port
# swport= of a 2-port smartio-ntb-switch is smartio node host<port> of
# two, each with a QEMU NVMe; a socket network joins them (10.9.0.1 and
# 10.9.0.2).  The same fio jobs (O_DIRECT, psync: 4 KiB random reads,
# 1 MiB sequential reads and writes, TURNS runs of RUNTIME s each) run
#  1. on host0's NVMe natively, and
#  2. on host1 through the shadow of that NVMe, borrowed over the NTB,
#     taking turns: one run of each job natively, a borrow, one run of
#     each through the shadow, a return, TURNS times, so that the host's
#     load drifting over the minute weighs on both paths alike;
#  3. on host1 through NVMe-over-TCP to the same NVMe (host0's nvmet-tcp
#     target; reads only, writes would be the same path).
# With swmodes=strict,premap on the command line (tests/bench/ntb_lend.sh's
# second pair of guests: host1's NTB function in a translated IOMMU
# domain) step 2 runs once per mode of the borrower's DMA window
# (smartio(4): a strict window, premap=1), the paths named shadow-<mode>
# and host0's native$tag (swtag=), and step 3 is left out.
# Each run prints "LENDBENCH <path> <job> <fio terse v3 line>"; the
# borrower also prints the accesses its switch port made by callback
# (forwarded to host0: its BAR accesses) per 4 KiB read, and the interrupts.
# "LENDBENCH window <path> begin|end" bracket the 4 KiB runs of both
# paths: the host counts the NVMe's register reads in between.
. /guest-common.sh
P=$(karg swport)
phase=$(karg swphase)
N=2
TURNS=7
RUNTIME=4
modes=$(karg swmodes)
tag=$(karg swtag)
[ -n "$modes" ] && TURNS=5
modes=$(echo "${modes:-identity}" | tr , ' ')
echo "NTB-START port=$P phase=$phase"
STEP_WAIT=600
. /cluster-steps.sh
dev=/smartio/dev/host0-nvme0

# The NVMe's DMA is translated by the IOMMU (a DMA domain), not passed
# through as iommu=pt would have it, as the lent NVMe's is on the way to
# the borrower.  The driver's shadow doorbells need a fence on each side:
# the guest's is there only because every guest may have a second CPU
# (GUEST_SMP, tests/kmod/guest-lib.sh); QEMU 7.2's NVMe has none between
# storing a queue's EventIdx and reading its shadow doorbell
# (hw/nvme/ctrl.c, nvme_process_sq), but through the IOMMU each of those
# accesses takes intel-iommu's lock, which orders them.  Passed through,
# native 1 MiB writes stalled for the driver's 30 s timeout in every run.
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/class")" = 0x010802 ] || continue
	echo DMA >"$d/iommu_group/type" ||
		fail "$(basename "$d"): cannot give it a DMA domain"
done
modules_load
waitfor 60 test -b /dev/nvme0n1 || fail "no /dev/nvme0n1"
mount -t configfs configfs /sys/kernel/config	# nvmet's, once loaded
own_bdf=$(basename "$(readlink /sys/block/nvme0n1/device/device)")
# swhw=switchtec (ntb_lend.sh NTB_HW=switchtec): LUT windows, direct
# windows as large as BAR 4 (512 MiB: the DMA window over this RAM).
if [ "$(karg swhw)" = switchtec ]; then
	registered() { dmesg | grep -q "NTB device registered"; }
	insmod /ntb.ko && insmod /switchtec.ko &&
		insmod /ntb_hw_switchtec.ko use_lut_mws=1 max_mw_size=0x20000000 &&
		waitfor 30 registered && insmod /smartio_ntb.ko node="$P" ||
		{ fail "loading the NTB modules"; finish; }
else
	insmod /ntb.ko && insmod /ntb_sioswitch.ko lut_mws=1 &&
		insmod /smartio_ntb.ko node="$P" ||
		{ fail "loading the NTB modules"; finish; }
fi
smartio_up devices="$own_bdf"
smartiofs_up
waitfor 600 is "/smartio/nodes/host$((1 - P))/state" up ||
	{ fail "the other node is not up"; finish; }
ip link set eth0 up && ip addr add "10.9.0.$((P + 1))/24" dev eth0 ||
	fail "network"
# Kernel messages stay off the console the figures are read from.
dmesg -n 1

# fio_runs PATH DISK JOBS...: one run of each job on DISK.
fio_runs() {
	local path=$1 disk=$2 job rw bs
	shift 2
	for job in "$@"; do
		case $job in
		randread4k) rw=randread bs=4k ;;
		randwrite4k) rw=randwrite bs=4k ;;
		read1m) rw=read bs=1M ;;
		write1m) rw=write bs=1M ;;
		esac
		echo "LENDBENCH $path $job $(fio --name="$job" \
			--filename="$disk" --direct=1 --ioengine=psync \
			--rw=$rw --bs=$bs --size=256M --runtime=$RUNTIME \
			--time_based --output-format=terse --terse-version=3 \
			2>/dev/null | tail -n 1)"
	done
}

# The switch port's outbound accesses by callback (man smartio-ntb-port).
ntb_bdf=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1234:0x5a10 ] && ntb_bdf=$(basename "$d")
done
slow_accesses() {
	[ -n "$ntb_bdf" ] || { echo 0; return; }	# no such counter on Switchtec
	printf '%d' "$(devmem $(($(head -n 1 "/sys/bus/pci/devices/$ntb_bdf/resource" |
		cut -d' ' -f1) + 0x80)) 64)"
}
msix() { awk '/smartio-NTB-MSI/ { n += $2 } END { print n + 0 }' /proc/interrupts; }

# The counters of one I/O path (issue 35), read before and after a run
# of its own (not a timed one): calls into the IOMMU driver (map, unmap,
# and the queued invalidations that flush the IOTLB) counted by kprobes,
# the NVMe queues' interrupts here (nvmeirq; the shadow's among them,
# whose chip is smartio-NTB-MSI: ntbmsi counts those again, so that an
# interrupt the switch carried shows in both), this port's outbound accesses
# by callback (SLOW_ACCESSES: forwarded doorbells and MSIs), its walks
# of the peer's VT-d tables and the translations its IOTLB of them gave
# instead (IOVA_WALKS, IOVA_HITS, man smartio-ntb-port).
kp=/sys/kernel/debug/tracing
kprobes="intel_iommu_map_pages intel_iommu_unmap_pages qi_submit_sync"
counters_on() {
	local f a
	echo 0 >"$kp/tracing_on"	# counted in kprobe_profile, not traced
	for f in $kprobes; do
		# intel_iommu_map_pages(domain, iova, paddr, pgsize, pgcount)
		a=
		[ "$f" = intel_iommu_map_pages ] && a=" iova=%si size=%cx count=%r8"
		echo "p:cnt_$f $f$a" >>"$kp/kprobe_events" &&
			echo 1 >"$kp/events/kprobes/cnt_$f/enable" ||
			echo "LENDBENCH count-missing $f"
	done
}
counters_off() {
	local f
	for f in $kprobes; do
		echo 0 >"$kp/events/kprobes/cnt_$f/enable" 2>/dev/null
	done
	echo >"$kp/kprobe_events"
}
reg64() {
	printf '%d' "$(devmem $(($(head -n 1 "/sys/bus/pci/devices/$ntb_bdf/resource" |
		cut -d' ' -f1) + $1)) 64)"
}
counters() {
	local f
	for f in $kprobes; do
		awk -v f="cnt_$f" '$1 == f { n = $2 } END { printf "%d ", n }' \
			"$kp/kprobe_profile"
	done
	awk '/nvme[0-9]*q[0-9]/ { for (i = 2; $i ~ /^[0-9]+$/; i++) n += $i }
	     END { printf "%d ", n }' /proc/interrupts
	printf '%d %d %d %d\n' "$(msix)" "$(reg64 0x80)" "$(reg64 0x98)" \
		"$(reg64 0xa0)"
}
# count_delta PATH IOS BEFORE AFTER: "LENDBENCH count PATH ios <n> map
# <n> unmap <n> inval <n> nvmeirq <n> ntbmsi <n> fwd <n> walks <n> hits
# <n>".
count_delta() {
	echo "$3 $4" | awk -v p="$1" -v ios="$2" '{
		split("map unmap inval nvmeirq ntbmsi fwd walks hits", k)
		l = "LENDBENCH count " p " ios " ios
		for (i = 1; i <= 8; i++) l = l " " k[i] " " ($(i + 8) - $i)
		print l }'
}
# count_run PATH DISK: one 4 KiB random read run on DISK, counted.
count_run() {
	local c0 c1 kb
	c0=$(counters)
	kb=$(fio --name=count --filename="$2" --direct=1 --ioengine=psync \
		--rw=randread --bs=4k --size=256M --runtime=$RUNTIME \
		--time_based --output-format=terse --terse-version=3 \
		2>/dev/null | tail -n 1 | cut -d';' -f6)
	c1=$(counters)
	count_delta "$1" "$((${kb:-0} / 4))" "$c0" "$c1"
}

if [ "$P" = 0 ]; then
	# The window lines bracket the 4 KiB runs for the host, which counts
	# the NVMe's register reads between them (tests/bench/ntb_lend.sh);
	# the second of quiet lets the host stamp "begin" before fio starts.
	echo all >"$dev/lend" || fail "lend all"
	back() { [ -e "/sys/bus/pci/drivers/nvme/$own_bdf" ] && [ -b /dev/nvme0n1 ]; }
	# domain TYPE: the NVMe rebound in a default domain of TYPE: DMA
	# (translated, as the lent device is) or identity (iommu=pt's).
	domain() {
		echo "$own_bdf" >/sys/bus/pci/drivers/nvme/unbind &&
		echo "$1" >"/sys/bus/pci/devices/$own_bdf/iommu_group/type" &&
		echo "$own_bdf" >/sys/bus/pci/drivers/nvme/bind &&
		waitfor 60 back || fail "cannot rebind the NVMe in a $1 domain"
	}
	turn=1
	while [ $turn -le $TURNS ]; do
		for mode in $modes; do
			# The native baseline most hosts have (issue 35): the
			# NVMe in identity mode, without 1 MiB writes (they
			# stall in QEMU 7.2's NVMe untranslated: see above).
			if [ -z "$tag" ]; then
				domain identity
				fio_runs nativeid /dev/nvme0n1 read1m
				echo "LENDBENCH window nativeid begin"
				sleep 1
				fio_runs nativeid /dev/nvme0n1 randread4k
				echo "LENDBENCH window nativeid end"
				domain DMA
			fi
			# The 4 KiB runs of a turn sit side by side: native
			# last here, first through the shadow.
			fio_runs "native$tag" /dev/nvme0n1 read1m write1m \
				randwrite4k
			echo "LENDBENCH window native$tag begin"
			sleep 1
			fio_runs "native$tag" /dev/nvme0n1 randread4k
			echo "LENDBENCH window native$tag end"
			mark "lent$turn$mode"
			wait_for "shadowdone$turn$mode" 1
			waitfor 60 back ||
				fail "the NVMe did not come back to its driver"
		done
		turn=$((turn + 1))
	done
	# The counting pass: each native path, then each shadow with this
	# side's counters read while host1 runs it (between its marks).
	counters_on
	if [ -z "$tag" ]; then
		domain identity
		count_run nativeid /dev/nvme0n1
		domain DMA
	fi
	count_run "native$tag" /dev/nvme0n1
	for mode in $modes; do
		# What the borrow maps in the NVMe's domain here, call by
		# call (the trace of the map probe): the sizes say whether
		# the windows get the largest pages, once per borrow.
		echo >"$kp/trace"
		echo 1 >"$kp/tracing_on"
		mark "countlent$mode"
		wait_for "cbeg$mode" 1
		echo 0 >"$kp/tracing_on"
		echo "LENDBENCH borrow-maps lender-$mode $(sed -n \
			's/.*cnt_intel_iommu_map_pages: ([^)]*) //p' "$kp/trace" |
			sort | uniq -c | awk '{ printf "%dx[%s %s %s] ", $1, $2, $3, $4 }')"
		c0=$(counters)
		mark "c0beg$mode"
		wait_for "cend$mode" 1
		c1=$(counters)
		count_delta "lender-$mode" 0 "$c0" "$c1"
		mark "c0end$mode"
		wait_for "countdone$mode" 1
		waitfor 60 back || fail "the NVMe did not come back to its driver"
	done
	counters_off
	if [ -n "$tag" ]; then
		waitfor 600 is /smartio/nodes/host1/state down ||
			fail "host1 did not finish"
		finish
	fi
	# The same drive exported with the kernel's NVMe-over-TCP target.
	c=/sys/kernel/config/nvmet
	if mkdir "$c/subsystems/sio" &&
	   echo 1 >"$c/subsystems/sio/attr_allow_any_host" &&
	   mkdir "$c/subsystems/sio/namespaces/1" &&
	   echo /dev/nvme0n1 >"$c/subsystems/sio/namespaces/1/device_path" &&
	   echo 1 >"$c/subsystems/sio/namespaces/1/enable" &&
	   mkdir "$c/ports/1" &&
	   echo tcp >"$c/ports/1/addr_trtype" &&
	   echo ipv4 >"$c/ports/1/addr_adrfam" &&
	   echo 10.9.0.1 >"$c/ports/1/addr_traddr" &&
	   echo 4420 >"$c/ports/1/addr_trsvcid" &&
	   ln -s "$c/subsystems/sio" "$c/ports/1/subsystems/sio"; then
		mark tcp
	else
		fail "nvmet-tcp target"
		mark tcp	# host1 then fails to connect, and says so
	fi
	# Until host1 is done: it marks tcpdone, or has powered off already.
	done1() {
		[ -d /smartio/nodes/host1/segments/tcpdone1 ] ||
			is /smartio/nodes/host1/state down
	}
	waitfor 600 done1 || fail "host1 did not finish"
	finish
fi

shadow_disk() {
	local c d
	for d in /sys/bus/pci/devices/5100:*; do
		c=$(ls "$d/nvme" 2>/dev/null | head -n 1)
		[ -n "$c" ] && [ -b "/dev/${c}n1" ] && echo "${c}n1" && return 0
	done
	return 1
}
gone() { ! shadow_disk >/dev/null; }
turn=1
acc=0
irqs=0
while [ $turn -le $TURNS ]; do
	for mode in $modes; do
		path=shadow
		[ "$mode" = identity ] || path=shadow-$mode
		wait_for "lent$turn$mode" 0
		premap=0
		[ "$mode" = premap ] && premap=1
		echo $premap >/sys/module/smartio/parameters/premap
		if echo host1 >"$dev/borrow" && waitfor 120 shadow_disk; then
			disk=$(shadow_disk)
			[ $turn = 1 ] && echo "LENDBENCH-WINDOW $mode $(dmesg | grep 'smartio: host0-nvme0:' | tail -n 1 | cut -c16-)"
			# As on host0: the NVMe's register reads between these two
			# lines are the shadow path's (host0's driver is unbound while
			# it is lent).
			echo "LENDBENCH window $path begin"
			sleep 1
			s0=$(slow_accesses)
			i0=$(msix)
			fio_runs "$path" "/dev/$disk" randread4k
			acc=$((acc + $(slow_accesses) - s0))
			irqs=$((irqs + $(msix) - i0))
			echo "LENDBENCH window $path end"
			fio_runs "$path" "/dev/$disk" read1m write1m randwrite4k
			echo host1 >"$dev/return" || fail "return"
		else
			fail "borrow of host0-nvme0 (turn $turn, $mode)"
		fi
		waitfor 60 gone || fail "the shadow stays after the return"
		mark "shadowdone$turn$mode"
	done
	turn=$((turn + 1))
done
counters_on
for mode in $modes; do
	path=shadow
	[ "$mode" = identity ] || path=shadow-$mode
	wait_for "countlent$mode" 0
	premap=0
	[ "$mode" = premap ] && premap=1
	echo $premap >/sys/module/smartio/parameters/premap
	if echo host1 >"$dev/borrow" && waitfor 120 shadow_disk; then
		mark "cbeg$mode"
		wait_for "c0beg$mode" 0
		count_run "$path" "/dev/$(shadow_disk)"
		mark "cend$mode"
		wait_for "c0end$mode" 0
		echo host1 >"$dev/return" || fail "return"
	else
		fail "borrow of host0-nvme0 (count, $mode)"
		mark "cbeg$mode"
		mark "cend$mode"
	fi
	waitfor 60 gone || fail "the shadow stays after the return"
	mark "countdone$mode"
done
counters_off
[ -n "$tag" ] && finish
echo "LENDBENCH shadow-accesses $acc irqs $irqs"
wait_for tcp 0
tcp_disk() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/transport" 2>/dev/null)" = tcp ] &&
			[ -b "/dev/$(basename "$c")n1" ] &&
			echo "$(basename "$c")n1" && return 0
	done
	return 1
}
if echo "transport=tcp,traddr=10.9.0.1,trsvcid=4420,nqn=sio" \
	>/dev/nvme-fabrics && waitfor 60 tcp_disk; then
	fio_runs tcp "/dev/$(tcp_disk)" randread4k read1m
	echo 1 >"/sys/class/nvme/$(tcp_disk | sed 's/n1$//')/delete_controller"
else
	fail "nvme-tcp connect to 10.9.0.1"
fi
mark tcpdone
finish
