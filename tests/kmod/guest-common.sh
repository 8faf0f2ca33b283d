# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the /init of every QEMU guest test (check-kmod, check-ntb and
# the bench's dd guest) as /guest-common.sh: what they all need.
# shellcheck shell=sh

# The kernel the guest runs, for the host's PASS lines (guest_tagged).
echo "GUEST-KERNEL $(uname -r)"

# waitfor SECONDS COMMAND...: poll every 0.2 s until COMMAND succeeds.
waitfor() {
	local n=$(($1 * 5))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		n=$((n - 1))
		sleep 0.2
	done
	return 1
}

# power_off LINE: LINE is the end marker the host waits for; then the
# guest powers off (and sleeps if that fails, never returning to /init).
power_off() {
	echo "$1"
	sync
	poweroff -f
	sleep 60
}
