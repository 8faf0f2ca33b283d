# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the /init of every QEMU guest test (check-kmod, check-ntb and
# the bench's dd guest) as /guest-common.sh, first thing: what they all
# need, starting with busybox's commands and the pseudo-filesystems.
# shellcheck shell=sh

/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug

# karg NAME: the value of NAME= on the kernel command line (empty if none).
karg() {
	echo " $(cat /proc/cmdline)" | sed -n "s/.* $1=\([^ ]*\).*/\1/p"
}

# modules_load: the modules of /modules/order (the host's guest_root), in
# that order; one that fails to load is left out (its test says so).
modules_load() {
	local m
	for m in $(cat /modules/order); do
		insmod "$m" 2>/dev/null
	done
}

# The kernel the guest runs, for the host's PASS lines (guest_tagged).
echo "GUEST-KERNEL $(uname -r)"

# waitfor SECONDS COMMAND...: poll every 0.2 s until COMMAND succeeds.
# Its counter has a name of its own: ash's locals are dynamically scoped,
# so a COMMAND that reads a caller's "n" would see this one instead.
waitfor() {
	local waitfor_left=$(($1 * 5))
	shift
	while [ "$waitfor_left" -gt 0 ]; do
		"$@" && return 0
		waitfor_left=$((waitfor_left - 1))
		sleep 0.2
	done
	return 1
}

# dmesg_lines PATTERN: how many lines of the kernel log match PATTERN.
dmesg_lines() { dmesg | grep -c "$1"; }
# dmesg_lines_above PATTERN N: more than N do (a condition for waitfor
# that carries its bound as an argument, not in a caller's variable).
dmesg_lines_above() { [ "$(dmesg_lines "$1")" -gt "$2" ]; }

# perf_out_size DIR: the size of ntb_perf's outbound buffer (its window),
# from DIR/info of its debugfs directory, in bytes.
perf_out_size() {
	echo $(($(sed -n 's/.*Out buffer size \(0x[0-9a-f]*\).*/\1/p' "$1/info")))
}

# power_off LINE: LINE is the end marker the host waits for; then the
# guest powers off (and sleeps if that fails, never returning to /init).
power_off() {
	echo "$1"
	sync
	poweroff -f
	sleep 60
}
