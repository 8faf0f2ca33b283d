#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's lending lines (issue 14): two TCG guests of the same shape
# on a 2-port smartio-ntb-switch, each with a QEMU NVMe, joined also by a
# network.  tests/ntb/lend-bench-init.sh runs fio (O_DIRECT)
# on host0's NVMe natively, then on host1 through the shadow of that NVMe
# borrowed over the NTB, then on host1 through the kernel's NVMe-over-TCP
# (host0 exports it with nvmet-tcp) over a QEMU UDP socket network.
# Prints the guests' LENDBENCH lines, and "LENDBENCH mmio-reads <path> <n>
# [<register>:<reads>...]": the reads of host0's NVMe registers during
# the 4 KiB runs of the native and the shadow path (QEMU's trace).
#
# NTB_LEND_MODES=strict,premap: host1's NTB function behind its IOMMU in
# a translated domain instead (no iommu=pt), the shadow runs once per
# mode of its DMA window (paths shadow-strict, shadow-premap), host0's
# native runs named native2, no NVMe-over-TCP and no register counts.
#
# Environment: SRCDIR, BUILDDIR, KVER, NTBSW_OUT (see check_switch.sh),
# NTB_LEND_BENCH_TIMEOUT (seconds per guest, default 1200), NTB_KEEP=1,
# NTB_HW=switchtec: two partitions of the Switchtec model under
# switchtec.ko and ntb_hw_switchtec.ko instead, host0's native runs named
# native3, no NVMe-over-TCP.
# Exit 77 with "SKIP: <why>" when qemu, busybox-static, cpio, fio, the
# kernel image, its modules, headers or source are missing; 1 with
# "FAIL: <why>" when the guests could not measure.
set -u
src=${SRCDIR:-.}
build=${BUILDDIR:-.}
limit=${NTB_LEND_BENCH_TIMEOUT:-1200}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
fio=$(command -v fio) || skip "no fio (apt-get install fio)"
. "$src/tests/kmod/guest-lib.sh"
. "$src/tests/ntb/switch-lib.sh"
sw_prepare >"$build/ntb-lend-bench-prep.log" 2>&1 ||
	{ st=$?; tail -n 5 "$build/ntb-lend-bench-prep.log"; exit "$st"; }
sw_smartio_build

# The NVMe-over-TCP target and host, the NIC, with their dependencies.
mkdir -p "$tmp/root/bin"
guest_root "$tmp/root" "$src/tests/ntb/lend-bench-init.sh" \
	"$out/smartio/smartio.ko" "$sfs" "$KVER" \
	"virtio_pci virtio_net nvmet nvmet_tcp nvme_tcp" ||
	skip "modprobe cannot resolve nvme, virtio_net or nvmet for $KVER"
cp "$out/ntb.ko" "$out/ntb_sioswitch.ko" "$out/switchtec.ko" \
	"$out/ntb_hw_switchtec.ko" "$tmp/root/"
sw_smartio_root "$tmp/root"
cp -L "$fio" "$tmp/root/bin/fio"
guest_libs "$tmp/root" "$fio"
guest_initrd "$tmp/root" "$tmp/initrd.gz"

# 512 MiB guests: the DMA window is all of the borrower's RAM, 4 entries
# of 128 MiB of a 1 GiB window; the initramfs carries fio's libraries.
hw=${NTB_HW:-sioswitch}
stx=
if [ "$hw" = switchtec ]; then
	# BAR 4, the direct window, covers the borrower's 512 MiB of RAM;
	# the NVMe's BAR 0 of doorbells fills its 64 KiB LUT entry and its
	# MSI-X table has a BAR of its own, as in check_lend.sh.
	SW_DEVICE=switchtec-nt
	SW_SWITCH_ARGS="-x switchtec,luts=32,rids=32,bar2=4M,bar4=512M"
	stx=",msix-exclusive-bar=on,max_ioqpairs=7679"
	sw_start 2
else
	sw_start 2 1G
fi
modes=${NTB_LEND_MODES:-}
# nohz=off: the guests' tick keeps running while they idle.  A read at
# depth 1 idles until its interrupt, and with the default the kernel
# stops the tick on each such idle and starts it again on the interrupt:
# kernel work around the emulated timer and clock on every read, which
# TCG runs slowly and hardware in about a microsecond.  It taxed the path
# that waits longer: through the shadow, 1.43 times the guest kernel
# instructions per read of native in identity mode, and 0.61 of its
# IOPS; with nohz=off 1.04 and 0.81 (issue 35, kmod/README).  Both
# guests, every path: the comparison stays side by side.
tick=nohz=off
SW_APPEND="$tick intel_iommu=on iommu=pt${modes:+ swmodes=$modes swtag=2}"
[ "$hw" = switchtec ] && SW_APPEND="$SW_APPEND no_timer_check swhw=switchtec swtag=3"
# The network: UDP between the two QEMUs (a TCP socket netdev would add
# Nagle's delays to every NVMe-over-TCP exchange).
port=$((20000 + $$ % 20000))
# The MMIO reads the shadow path costs, counted where they land: each
# QEMU logs every read of its NVMe's registers (QEMU's pci_nvme_mmio_read
# trace event, stamped with the host's clock), only reads, so that the
# doorbell writes of the runs stay untraced and untimed.
trace=
[ -z "$modes" ] &&
	qemu-system-x86_64 -trace help 2>/dev/null | grep -qx pci_nvme_mmio_read &&
	trace=1
# The guest instructions each path costs (issue 35): contrib/qemu's TCG
# plugin counts each QEMU's guest kernel and user instructions, and
# writes the counts so far whenever a name arrives on its FIFO (stamp).
insn=
if [ -f "$sw/insn-count.so" ]; then
	for p in 0 1; do
		mkfifo "$tmp/p$p.ctl" || fail "mkfifo in $tmp"
	done
	insn=1
fi
# The drives live in memory, written through once: a sparse image on
# /tmp made the native pass, the first to write, pay for the host
# allocating its blocks (1 MiB writes at 20 MB/s, then a p50 of 17 s),
# and the shadow pass after it overwrote them at 2.2 GB/s.
img=$(mktemp -d /dev/shm/ntb-lend-bench.XXXXXX) || fail "no /dev/shm"
trap 'sw_cleanup; rm -rf "$img"' EXIT
t0=$(date +%s)
for p in 0 1; do
	net="socket,id=n,localaddr=127.0.0.1:$((port + p)),udp=127.0.0.1:$((port + 1 - p))"
	dd if=/dev/zero of="$img/nvme$p.img" bs=1M count=512 status=none ||
		fail "cannot write the drive image in /dev/shm"
	# With modes, host1's IOMMU comes before its NTB function and
	# translates it (switch-lib.sh's SW_IOMMU).
	iommu="-device intel-iommu,intremap=off"
	if [ -n "$modes" ] && [ $p = 1 ]; then
		iommu=
		SW_IOMMU=intremap=off
		SW_APPEND="$tick intel_iommu=on swmodes=$modes swtag=2"
	fi
	# shellcheck disable=SC2086 # $iommu is two words or none
	sw_guest $p 1 512 $iommu \
		-drive "file=$img/nvme$p.img,if=none,id=nv,format=raw" \
		-device "nvme,serial=sio$p,drive=nv$stx" \
		-netdev "$net" -device virtio-net-pci,netdev=n \
		${trace:+-trace pci_nvme_mmio_read -D "$tmp/p$p.trace" -msg timestamp=on} \
		${insn:+-plugin "$sw/insn-count.so,ctl=$tmp/p$p.ctl,out=$tmp/p$p.insns"}
	eval "pid$p=\$guest_pid"
done

# stamp LOG PID: each "LENDBENCH window <path> begin|end" line of the
# serial console LOG with the host's time as it arrives (tail -F follows
# by inotify), until PID (the guest's QEMU) ends; a guest sleeps 1 s after
# "begin", so its runs start after the stamp.  Then the host CPU time
# both QEMUs have used (qemu_cpu).
cr=$(printf '\r')
stamp() {
	tail -n +1 -F --pid="$2" "$1" 2>/dev/null |
	while read -r l; do
		l=${l%"$cr"}
		case $l in
		"LENDBENCH window "*)
			echo "${l#LENDBENCH window } $(date +%s.%N) $(qemu_cpu)"
			[ -n "$insn" ] && insn_snap "${l#LENDBENCH window }" ;;
		esac
	done
}
# insn_snap "PATH begin|end": both plugins write their counts so far
# under the name PATH-begin or PATH-end (a QEMU gone answers nothing:
# its FIFO has no reader, and the write gives up).
insn_snap() {
	local p
	for p in 0 1; do
		timeout 5 sh -c 'echo "$1" >"$2"' sh "$(echo "$1" | tr ' ' -)" \
			"$tmp/p$p.ctl" 2>/dev/null
	done
}
# qemu_cpu: the clock ticks (user + system) each guest's QEMU process has
# used, "<host0's> <host1's>": what the emulator spends on a path, which
# hardware would not (issue 35).
qemu_cpu() {
	local p q
	for p in 0 1; do
		q=$(cat "$tmp/p$p-1.pid" 2>/dev/null)
		awk '{ printf "%d ", $14 + $15 }' "/proc/${q:-0}/stat" 2>/dev/null ||
			printf '0 '
	done
}
# shellcheck disable=SC2154 # pid0 and pid1 are set by the eval above
# Both append: with ">" the first would write over the second's lines.
: >"$tmp/windows"
stamp "$tmp/p0-1.log" "$pid0" >>"$tmp/windows" &
s0=$!
# shellcheck disable=SC2154
stamp "$tmp/p1-1.log" "$pid1" >>"$tmp/windows" &
s1=$!
pids="$pids $s0 $s1"
wait "$pid0" "$pid1"
echo "guests done after $(($(date +%s) - t0)) s"
wait "$s0" "$s1"
for p in 0 1; do
	tr -d '\r' <"$tmp/p$p-1.log" | grep -a '^LENDBENCH\|^FAIL: ' |
		grep -v '^LENDBENCH window '
done

# mmio_reads PATH: "LENDBENCH mmio-reads PATH <n> [<register>:<reads>...]",
# the reads of host0's NVMe (the lent one) logged inside PATH's windows
# (one per turn).
mmio_reads() {
	if ! awk -v p="$1" '$1 == p && $2 == "end" { e = 1 } END { exit !e }' \
		"$tmp/windows"; then
		echo "LENDBENCH mmio-reads $1 SKIP no window from the guest"
		return
	fi
	awk -v p="$1" '
		FNR == NR {
			if ($1 == p && $2 == "begin") b[++nb] = $3
			if ($1 == p && $2 == "end") e[++ne] = $3
			next
		}
		{
			split($0, t, /[@:]/)
			if (t[3] !~ /^pci_nvme_mmio_read /)
				next
			for (i = 1; i <= ne; i++)
				if (t[2] + 0 >= b[i] + 0 && t[2] + 0 <= e[i] + 0) {
					split(t[3], f, " "); n++; r[f[3]]++
					break
				}
		}
		END {
			l = "LENDBENCH mmio-reads " p " " n + 0
			for (a in r) l = l " " a ":" r[a]
			print l
		}' "$tmp/windows" "$tmp/p0.trace"
}
if [ -z "$trace" ]; then
	echo "LENDBENCH mmio-reads SKIP qemu-system-x86_64 has no pci_nvme_mmio_read trace event"
elif ! grep -q ':pci_nvme_mmio_read ' "$tmp/p0.trace" 2>/dev/null; then
	# The driver's probe reads registers: a trace without them is broken.
	echo "LENDBENCH mmio-reads SKIP host0's QEMU logged no register read at all"
else
	echo "LENDBENCH mmio-reads all $(grep -c ':pci_nvme_mmio_read ' "$tmp/p0.trace")"
	mmio_reads native
	mmio_reads shadow
fi
# LENDBENCH cpu PATH <host0's ticks> <host1's ticks> <ticks/s>: what both
# QEMUs used inside PATH's windows (its 4 KiB random read runs), summed.
paths="nativeid native shadow"
[ -n "$modes" ] && paths="native2 shadow-strict shadow-premap"
for path in $paths; do
	awk -v p="$path" -v hz="$(getconf CLK_TCK)" '
		$1 == p && $2 == "begin" { a = $4; b = $5 }
		$1 == p && $2 == "end" && a != "" { t0 += $4 - a; t1 += $5 - b; n++; a = "" }
		END { if (n) print "LENDBENCH cpu " p " " t0 " " t1 " " hz }' \
		"$tmp/windows"
done
# LENDBENCH insns PATH <turn> <host0's kernel> <host0's user> <host1's
# kernel> <host1's user>: the guest instructions each QEMU ran inside
# PATH's window of each turn, in the order of the runs.
if [ -n "$insn" ]; then
	for path in $paths; do
		for p in 0 1; do
			awk -v p="$path" '
				$1 == p "-begin" { k = $2; u = $3 }
				$1 == p "-end" && k != "" {
					printf "%.0f %.0f\n", $2 - k, $3 - u; k = ""
				}' "$tmp/p$p.insns" 2>/dev/null >"$tmp/insns.$p"
		done
		paste -d ' ' "$tmp/insns.0" "$tmp/insns.1" |
			awk -v p="$path" 'NF == 4 { print "LENDBENCH insns " p " " NR " " $0 }'
	done
fi
grep -aq '^LENDBENCH native[0-9]* ' "$tmp/p0-1.log" &&
	grep -aq '^LENDBENCH shadow[a-z-]* ' "$tmp/p1-1.log" ||
	{ tail -n 30 "$tmp/p0-1.log" "$tmp/p1-1.log"; fail "no fio figures from the guests"; }
exit 0
