# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the /init of the check-ntb guests that form one smartio
# cluster on a switch (cluster-init.sh, lend-init.sh) as /cluster-steps.sh,
# after /guest-common.sh, with P (this node) and N (the nodes) set: the
# verdict lines, the other nodes, and steps through /smartio itself (a
# step is a segment <step><P> a node makes; the others wait until it is
# listed).  STEP_WAIT (seconds, default 900) bounds a wait; a node may
# define step_debug() to say more when one runs out.
# shellcheck shell=sh

fails=0
pass() { echo "PASS: host$P: $*"; }
fail() { echo "FAIL: host$P: $*"; fails=$((fails + 1)); }
finish() { power_off "NTB-END port=$P phase=$phase fails=$fails"; }
is() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

others=
q=0
while [ $q -lt "$N" ]; do
	[ $q = "$P" ] || others="$others $q"
	q=$((q + 1))
done

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
