# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the guests that run ntb_perf over ntb_hw_switchtec
# (tests/ntb/switchtec-init.sh, tests/ntb/switchtec-bench-init.sh).
# The two drivers race at start: the side that enables the link second
# sees it at once and sends its first command; the other learns of the
# link from a message in a work item (ntb_hw_switchtec's
# check_link_status_work), and a command doorbell handled before that
# work ran is skipped for good (ntb_perf's receiver ignores a peer whose
# link is not up, and clears the doorbell; the command stays in its
# scratchpad slot, so the sender's next command waits for that slot,
# retrying once a second for half an hour).  Both drivers are unmodified
# and the model delivers the message before the doorbell, as the chip
# does; TCG only widens the window (a guest whose vCPU was not scheduled
# takes both interrupts back to back).  So the guest does what an
# operator has to: it waits until both sides report their buffers set up
# (Out buffer xlat known, In buffer allocated) before it writes `run`,
# and a side whose In buffer stays unallocated with the link up for 30 s
# (the peer's size command was dropped here) reloads ntb_perf, which
# clears its scratchpads and brings the link down and up again; each
# reload prints an NTB-PERF-RELOAD line.
# The caller sets F (ntb_perf's debugfs directory), P (its port), PERF_ARGS
# (ntb_perf's parameters) and defines fail().
# shellcheck shell=sh

perf_state() {
	local info
	info=$(cat "$F/info" 2>/dev/null)
	case $info in
	*"Link status: up"*) ;;
	*) echo down; return ;;
	esac
	case $info in
	*"In buffer addr: unallocated"*) echo noinbuf ;;
	*"Out buffer xlat 0x0000000000000000"*) echo pending ;;
	*) echo ready ;;
	esac
}
# perf_settle ROUND [left]: polls once a second until both sides are set
# up (or, with "left", until the peer has been up and then left: its link
# down for 20 s, longer than a reload takes).  Reloads ntb_perf here
# after 30 s with the link up and no In buffer (the peer's size command
# dropped here), or 60 s with the link up and the peer's translation
# still unknown (its translation command dropped here: seen once in 20
# rounds, after a "Recv invalid command"); the longer wait leaves the
# first case to the peer, whose reload brings the link down here too.
perf_settle() {
	local n=0 noin=0 pend=0 down=0 up=0 st
	while [ "$n" -lt 900 ]; do
		st=$(perf_state)
		case $st in
		noinbuf) noin=$((noin + 1)) pend=0 down=0 up=1 ;;
		pending) pend=$((pend + 1)) noin=0 down=0 up=1 ;;
		down) down=$((down + 1)) noin=0 pend=0 ;;
		ready) noin=0 pend=0 down=0 up=1 ;;
		esac
		if [ -z "${2:-}" ] && [ "$st" = ready ]; then
			return 0
		fi
		if [ -n "${2:-}" ] && [ "$up" = 1 ] && [ "$down" -ge 20 ]; then
			return 0
		fi
		if [ "$noin" -ge 30 ] || [ "$pend" -ge 60 ]; then
			if [ "$noin" -ge 30 ]; then
				echo "NTB-PERF-RELOAD port $P round $1: the peer's size command was dropped here"
			else
				echo "NTB-PERF-RELOAD port $P round $1: the peer's translation command was dropped here"
			fi
			rmmod ntb_perf || { fail "rmmod ntb_perf (reload)"; return 1; }
			sleep 5		# the peer sees the link fall
			# shellcheck disable=SC2086 # parameters, split
			insmod /ntb_perf.ko $PERF_ARGS ||
				{ fail "insmod ntb_perf (reload)"; return 1; }
			noin=0 pend=0 up=0
		fi
		n=$((n + 1))
		sleep 1
	done
	return 1
}
