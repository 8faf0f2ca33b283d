# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the guests that run ntb_perf over ntb_hw_switchtec
# (tests/ntb/switchtec-init.sh, tests/ntb/switchtec-bench-init.sh): the
# operator's procedure for starting and stopping ntb_perf on two hosts.
#
# Why it needs one.  The two unmodified drivers race at start, on the
# chip as here (Microsemi/switchtec-kernel issue #111 shows the same
# dmesg on a PFX: "message: 0 00000003", "doorbell", "DB vec 0", then
# "ntb link up" 2 ms later, and "In buffer addr: unallocated" for good).
# The side that enables the link second sees it at once
# (switchtec_ntb_link_enable reads the peer's shared page) and sends its
# size command: three scratchpad writes into the peer's shared page and a
# doorbell.  The first side learns of the link from message 0, whose ISR
# only schedules check_link_status_work; its doorbell ISR runs
# perf_spad_cmd_recv at once, which clears the doorbell and skips a peer
# whose link it does not see up yet.  The command stays in its scratchpad
# slot, and nothing reads that slot again until another doorbell comes;
# the peer's next command (the translation) waits for the slot to be
# free, retrying every 1-2 s for up to 1000 tries.  The model delivers
# the message before the doorbell, as the chip does; a guest whose vCPU
# was not scheduled takes both interrupts back to back and loses the race
# every time.
#
# The procedure, which needs only what an operator has (ntb_perf's and
# ntb_tool's debugfs, insmod and rmmod):
#  - start (perf_setup): poll info once a second.  A side whose link is
#    up and whose In buffer stays unallocated for 8 s lost the peer's
#    size command: it reloads ntb_perf (rmmod clears its slot's command,
#    takes the link down, which ends the peer's retries; insmod writes
#    INVAL to every slot and brings the link up again, this side now
#    second).  Only that side reloads: its own service work is idle (its
#    one command, the size, went into a free slot), so its rmmod is quick;
#    the peer, whose translation command is the one retrying, would wait
#    in perf_remove's flush_work for as long as the link stays up.
#  - stop: the measuring side (port 0) removes ntb_perf once done, 3 s
#    after its last run; the other (perf_stay) removes its own once the
#    link has been down for 3 s after it was set up, or for 20 s.  Then a barrier (perf_gone): no side
#    loads the next client before the peer's ntb_perf is gone, or the
#    leftover ntb_perf would see the link come back and read that
#    client's scratchpad writes as commands (the likely cause of the two
#    "Recv invalid command" seen when the stop relied on sleeps alone).
#    Both load
#    ntb_tool without enabling the link: port 0 reads the peer's slot 0
#    until it holds 0, which perf_remove writes last, then writes a token
#    there, which port 1 waits for in its own scratchpad 0.
# Each reload prints an NTB-PERF-RELOAD line.  The caller sets F (ntb_perf's
# debugfs directory), P (its port), pci, PERF_ARGS (ntb_perf's
# parameters) and defines fail().
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

perf_reloads=0
# perf_reload WHY: removes and inserts ntb_perf again.
perf_reload() {
	perf_reloads=$((perf_reloads + 1))
	echo "NTB-PERF-RELOAD port $P: $1"
	rmmod ntb_perf || { fail "rmmod ntb_perf (reload)"; return 1; }
	sleep 5		# the peer sees the link fall, its retries end
	# shellcheck disable=SC2086 # parameters, split
	insmod /ntb_perf.ko $PERF_ARGS ||
		{ fail "insmod ntb_perf (reload)"; return 1; }
}

# perf_step STATE: one poll's reload rule; noin counts the polls the In
# buffer has stayed unallocated with the link up.
noin=0
perf_step() {
	if [ "$1" = noinbuf ]; then
		noin=$((noin + 1))
	else
		noin=0
	fi
	if [ "$noin" -ge 8 ]; then
		noin=0
		perf_reload "link up, In buffer unallocated for 8 s: the peer's size command was dropped here"
	fi
}

# perf_setup: until this side's buffers are both set up (900 s at most).
perf_setup() {
	local n=0 st
	noin=0
	while [ "$n" -lt 900 ]; do
		st=$(perf_state)
		[ "$st" = ready ] && return 0
		perf_step "$st" || return 1
		n=$((n + 1))
		sleep 1
	done
	return 1
}

# perf_stay: the side that does not measure: set up, then stays until
# the peer removed its ntb_perf: the link down for 3 s after this side
# was seen set up, or for 20 s after it was up at all (the peer may set
# up, run and leave between two polls here; a reload takes the link
# down for about 6 s, and only before this side is set up).
perf_stay() {
	local n=0 st seen=0 up=0 down=0
	noin=0
	while [ "$n" -lt 1800 ]; do
		st=$(perf_state)
		case $st in
		ready) seen=1 up=1 down=0 ;;
		down) down=$((down + 1)) ;;
		*) up=1 down=0 ;;
		esac
		[ "$seen" = 1 ] && [ "$down" -ge 3 ] && return 0
		[ "$up" = 1 ] && [ "$down" -ge 20 ] && return 0
		[ "$seen" = 1 ] || perf_step "$st" || return 1
		n=$((n + 1))
		sleep 1
	done
	return 1
}

# perf_spad FILE VALUE: an ntb_tool scratchpad file reads VALUE.
perf_spad() {
	local v
	v=$(cat "$1" 2>/dev/null) || return 1
	[ -n "$v" ] && [ "$((v))" -eq "$(($2))" ]
}

# perf_gone TOKEN: after this side's rmmod ntb_perf, until both sides'
# ntb_perf are gone (TOKEN: a number other than 0 and 0xffffffff, the
# same on both sides, new each time).  Port 0 waits for the peer's slot
# 0 to read 0, then writes TOKEN there; port 1 waits for TOKEN in its
# own scratchpad 0.
perf_gone() {
	local D="/sys/kernel/debug/ntb_tool/$pci" ok=1
	insmod /ntb_tool.ko || { fail "insmod ntb_tool (barrier)"; return 1; }
	if [ "$P" = 0 ]; then
		if waitfor 300 perf_spad "$D/peer0/spad0" 0; then
			echo "$1" >"$D/peer0/spad0"
		else
			fail "the peer's ntb_perf did not leave: its slot 0 holds $(cat "$D/peer0/spad0")"
			ok=0
		fi
	elif ! waitfor 300 perf_spad "$D/spad0" "$1"; then
		fail "port 0 did not pass barrier $1: scratchpad 0 holds $(cat "$D/spad0")"
		ok=0
	fi
	rmmod ntb_tool || { fail "rmmod ntb_tool (barrier)"; return 1; }
	[ "$ok" = 1 ]
}

# perf_clean: ntb_perf logged no command it did not know.
perf_clean() {
	! dmesg | grep -q "ntb_perf.*invalid command"
}
