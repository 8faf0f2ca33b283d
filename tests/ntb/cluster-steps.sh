# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the /init of the QEMU guests that form one smartio cluster on
# a switch (cluster-init.sh, lend-init.sh, lend-bench-init.sh) as
# /cluster-steps.sh, after /guest-common.sh, with P (this node) and N (the
# nodes) set: the verdict lines, the other nodes, smartio.ko and
# smartiofs brought up, and steps through /smartio itself (a step is a
# segment <step><P> a node makes; the others wait until it is listed).
# STEP_WAIT (seconds, default 900) bounds a wait; a node may define
# step_debug() to say more when one runs out.
# shellcheck shell=sh

fails=0
pass() { echo "PASS: host$P: $*"; }
fail() { echo "FAIL: host$P: $*"; fails=$((fails + 1)); }
finish() { power_off "NTB-END port=$P phase=$phase fails=$fails"; }
is() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }
# refused FILE VALUE ERRTEXT: the write fails with that error.
refused() {
	if echo "$2" >"$1" 2>/tmp/err; then
		fail "'$2' > $1 accepted"
	elif grep -q "$3" /tmp/err; then
		pass "'$2' > ${1#/smartio/} refused: $(cat /tmp/err)"
	else
		fail "'$2' > $1: '$(cat /tmp/err)', not $3"
	fi
}

others=
q=0
while [ $q -lt "$N" ]; do
	[ $q = "$P" ] || others="$others $q"
	q=$((q + 1))
done

# sioswitch_up [PARAM...]: ntb.ko, ntb_sioswitch.ko with a memory window
# per look-up-table entry, and smartio_ntb.ko as node P with PARAMs.
sioswitch_up() {
	insmod /ntb.ko || fail "insmod ntb.ko"
	insmod /ntb_sioswitch.ko lut_mws=1 || fail "insmod ntb_sioswitch.ko lut_mws=1"
	insmod /smartio_ntb.ko node="$P" "$@" || fail "insmod smartio_ntb.ko $*"
}

# others_up SECONDS: every other node is up in /smartio within SECONDS;
# the run ends if one is not.
others_up() {
	local q
	for q in $others; do
		waitfor "$1" is "/smartio/nodes/host$q/state" up ||
			{ fail "host$q is '$(cat "/smartio/nodes/host$q/state")'"; finish; }
	done
	pass "/smartio: the other nodes up"
}

# smartio_up [PARAM...]: smartio.ko as node P of N over smartio_ntb (loaded
# before), with PARAMs; the run ends if it does not load.
smartio_up() {
	if insmod /smartio.ko fabric=ntb nodes="$N" node="$P" "$@"; then
		pass "insmod smartio.ko fabric=ntb nodes=$N node=$P $*"
	else
		fail "insmod smartio.ko fabric=ntb nodes=$N node=$P $*"; finish
	fi
	# smartio.ko holds the module whose table it calls (kmod/README),
	# bound to its auxiliary device with no unbind file to undo that.
	if rmmod smartio_ntb 2>/dev/null; then
		fail "rmmod smartio_ntb while smartio.ko uses it"; finish
	fi
	pass "rmmod smartio_ntb refused while smartio.ko uses it"
	local drv=/sys/bus/auxiliary/drivers/smartio.fabric
	if [ -e $drv/smartio_ntb.fabric.0 ] && [ ! -e $drv/unbind ]; then
		pass "smartio.ko bound to smartio_ntb.fabric.0, no unbind file"
	else
		fail "auxiliary driver: $(ls $drv 2>&1 | tr '\n' ' ')"
	fi
}

# smartiofs_up: smartiofs serves /smartio as host$P, a management mount
# (each node's user makes step segments on its own node and attaches the
# others', smartio(4)); the run ends if it does not.
smartiofs_up() {
	mkdir -p /smartio /etc
	ln -sf /proc/mounts /etc/mtab
	if LD_LIBRARY_PATH=/lib/smartio smartiofs --fabric kernel \
		--node "host$P" --manage /smartio; then
		pass "smartiofs serves /smartio as host$P"
	else
		fail "smartiofs --fabric kernel --node host$P"; finish
	fi
}

# mark NAME: this node reached step NAME (a segment NAME<P> of its own).
mark() {
	local s=/smartio/self/segments/$1$P
	{ mkdir "$s" && echo 4k >"$s/size" && echo 1 >"$s/available"; } ||
		fail "step segment $1$P"
}
# wait_for NAME NODES...: every node in NODES reached step NAME.
wait_for() {
	local q name=$1
	shift
	for q in "$@"; do
		waitfor "${STEP_WAIT:-900}" \
			[ -d "/smartio/nodes/host$q/segments/$name$q" ] && continue
		fail "host$q did not reach step $name"
		command -v step_debug >/dev/null && step_debug
	done
}
# step NAME: mark NAME, then wait until every other node has.
step() {
	mark "$1"
	# shellcheck disable=SC2086 # a list of nodes
	wait_for "$1" $others
}
