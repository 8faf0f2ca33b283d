#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every subcommand of smartio(1) against real mounts, and every sentence of
# its errno table (smartio(1), ERRORS): each refused command exits 1 with
# exactly that sentence on stderr and leaves the namespace as it was.
# Three processes serve host0..host2 of tests/fs/operator.conf; host3 is
# down.
. "$(dirname "$0")/lib.sh"
SMARTIO=${SMARTIO:-$sfs_top/python/scripts/smartio}
[ -x "$SMARTIO" ] || fail "smartio is not built ($SMARTIO)"
export PYTHONPATH="$sfs_top/python${PYTHONPATH:+:$PYTHONPATH}"
conf=$(cd "$(dirname "$0")" && pwd)/operator.conf

# host0's mount is the management node: it acts for every node.
mount_sfs "$TMP/m0" --fabric "$FABRIC" --node host0 --manage --topology "$conf"
P0=$LAST_PID
mount_sfs "$TMP/m1" --fabric "$FABRIC" --node host1 --topology "$conf"
mount_sfs "$TMP/m2" --fabric "$FABRIC" --node host2 --topology "$conf"
A=$TMP/m0 B=$TMP/m1 C=$TMP/m2
unset SMARTIO_MOUNT SMARTIO_PROGRESS_AFTER

s0() { "$SMARTIO" -m "$A" "$@"; }
s1() { "$SMARTIO" -m "$B" "$@"; }

# state: every attribute that a refused command could have changed (all
# mounts show the same cluster).
state() {
	(cd "$A" && cat dev/*/lend dev/*/borrow dev/*/mode dev/*/state \
		nodes/*/adapters/*/luts nodes/*/adapters/*/requesters &&
		ls nodes/*/segments nodes/*/borrowed)
}

# ok WHAT CMD...: the command succeeds
ok() {
	what=$1; shift
	"$@" > "$TMP/out" 2> "$TMP/err" || fail "$what: exit $?: $(cat "$TMP/err")"
}

# refused SENTENCE MOUNT-FN ARGS...: exit 1, the sentence with its errno
# name on stderr, the state unchanged.
sentences=0
refused() {
	want=$1; shift
	before=$(state)
	set +e
	# The message alone: a slow run (a loaded machine, ASan) would add
	# the lines saying what it waits for (tested by "progress forced").
	SMARTIO_PROGRESS_AFTER=600 "$@" > "$TMP/out" 2> "$TMP/err"; rc=$?
	set -e
	[ $rc = 1 ] || fail "$*: exit $rc, want 1 ($(cat "$TMP/err"))"
	got=$(cat "$TMP/err")
	expect_eq "$*" "$got" "smartio: $want"
	[ "$(state)" = "$before" ] || fail "$*: the state changed"
	sentences=$((sentences + 1))
	printf '%s\n' "$got" >> "$TMP/sentences"
}

# --- lend, borrow, return, mode, reclaim: success -------------------------
ok "lend all" s0 lend nvme0 all
expect_eq "lend file" "$(cat "$A/dev/nvme0/lend")" "all"
ok "lend a list" s0 lend nic0 host1 host3
expect_eq "lend list" "$(cat "$A/dev/nic0/lend")" "host1
host3"
ok "borrow for this mount's node" s1 borrow nvme0
expect_eq "borrowed" "$(cat "$A/dev/nvme0/borrow")" "host1"
ok "mode shows" s0 mode nvme0
expect_eq "mode" "$(cat "$TMP/out")" "exclusive"

# --- the errno table ------------------------------------------------------
# lend
refused "'all,host1' is not a lend policy: none or all alone, or node names (EINVAL)" \
	s0 lend nvme0 all,host1
refused "no node named hostX in the cluster (nodes: host0, host1, host2, host3) (ENOENT)" \
	s0 lend nvme0 hostX
refused "nvme0 is borrowed by host1, whom policy 'host2' leaves out: return or reclaim it first (EBUSY)" \
	s0 lend nvme0 host2
# borrow
refused "gpu0 is not lent (policy none): host0 may not borrow it (EACCES)" s0 borrow gpu0
refused "nic0 is lent to host1 and host3 only: host2 may not borrow it (EACCES)" s0 borrow nic0 host2
refused "this mount acts only for its own node: use that node's mount or a management mount (smartiofs --manage) (EPERM)" \
	s1 borrow nic0 host2
refused "nvme0 is borrowed by host1 in exclusive mode (EBUSY)" s0 borrow nvme0 host2
refused "host1 already borrows nvme0 (EBUSY)" s1 borrow nvme0
refused "host0 is the lender of nvme0 and cannot borrow its own device (EINVAL)" s0 borrow nvme0
refused "there is no node named hostX (nodes: host0, host1, host2, host3) (ENOENT)" \
	s0 borrow nvme0 hostX
refused "there is no device named nvme9 (devices: acc1, gpu0, nic0, nvme0, nvme2) (ENXIO)" \
	s0 borrow nvme9
refused "acc1's lender host3 is down (EHOSTDOWN)" s0 borrow acc1
ok "lend gpu0" s1 lend gpu0 all
refused "the borrowing node host3 is down (EHOSTDOWN)" s0 borrow gpu0 host3
ok "lend nic0 to all" s0 lend nic0 all
refused "no room on the path from host1 to host0: ntb0 of host1 has used all 3 requester ids (ENOSPC)" \
	s1 borrow nic0
ok "lend nvme2" s0 lend nvme2 all
refused "no NTB adapter of host1 reaches host2, the lender of nvme2 (EHOSTUNREACH)" \
	s1 borrow nvme2
# return, reclaim, mode
refused "host2 does not borrow nvme0 (borrowed by host1) (EINVAL)" s0 return nvme0 host2
refused "host1 does not borrow nic0 (nobody borrows it) (EINVAL)" s1 return nic0
refused "only nvme0's lender host0 may reclaim it; this mount is host1 (EACCES)" s1 reclaim nvme0
# The management mount acts for every node: it reclaims host1's gpu0 as
# its lender (smartio(7), Which node a mount acts for).
ok "borrow gpu0 for host0" s0 borrow gpu0
ok "reclaim gpu0 from the management mount" s0 reclaim gpu0
expect_eq "gpu0 reclaimed" "$(cat "$A/dev/gpu0/borrow")" ""
refused "'turbo' is not a mode: give exclusive or shared (EINVAL)" s0 mode nic0 turbo
# Issue 17: exclusive becomes shared while host1 keeps nvme0; back to
# exclusive is refused while it is borrowed.
ok "mode shared while borrowed" s0 mode nvme0 shared
refused "nvme0's mode cannot change while it is borrowed by host1 (EBUSY)" s0 mode nvme0 exclusive

# --- segments -------------------------------------------------------------
ok "segment create" s0 segment create ring 1M --export
expect_eq "size" "$(cat "$A/nodes/host0/segments/ring/size")" "1048576"
expect_eq "exported" "$(cat "$A/nodes/host0/segments/ring/available")" "1"
refused "this mount acts only for its own node: use that node's mount or a management mount (smartiofs --manage) (EPERM)" \
	s1 segment create host2.q 64k
ok "segment create on another node" s0 segment create host2.q 64k
expect_eq "remote size" "$(cat "$C/nodes/host2/segments/q/size")" "65536"
ok "segment export off" s0 segment export host2.q off
expect_eq "remote withdrawn" "$(cat "$C/nodes/host2/segments/q/available")" "0"
ok "segment export on" s0 segment export host2.q on
expect_eq "remote exported" "$(cat "$C/nodes/host2/segments/q/available")" "1"
ok "segment export off again" s0 segment export host2.q off
ok "segment export (on by default)" s0 segment export host2.q
expect_eq "remote exported by default" "$(cat "$C/nodes/host2/segments/q/available")" "1"
# host1 attaches; the attachment lasts as long as the writing process.
( echo host1 > "$B/seg/host0.ring/attach" && exec sleep 600 ) &
holder=$!
for _ in $(seq 100); do
	grep -qw host1 "$A/nodes/host0/segments/ring/attached" &&
		[ "$(cat /proc/$holder/comm)" = sleep ] && break
	sleep 0.1
done
mkdir "$A/nodes/host0/segments/ring/dma/nvme0"
refused "segment host0.ring already exists (1048576 bytes) (EEXIST)" \
	s0 segment create ring 1M
refused "'bad.name' is not a segment name: letters, digits, _ and -, at most 31 characters (EINVAL)" \
	s0 segment create host0.bad.name 4k
# A path is not a name either (mkdir would have looked up "a" and said ENOENT).
refused "'a/b' is not a segment name: letters, digits, _ and -, at most 31 characters (EINVAL)" \
	s0 segment create a/b 1M
refused "'..' is not a segment name: letters, digits, _ and -, at most 31 characters (EINVAL)" \
	s0 segment create host0... 1M
refused "host3, the owner of host3.x, is down (EHOSTDOWN)" s0 segment create host3.x 4k
refused "'0' is not a size for host0.z: a number of bytes, k, M or G, more than zero and within the owner's memory (EINVAL)" \
	s0 segment create z 0
# The sentence names the process that holds the attachment, and the mount
# (host1's) it wrote through.
held="host1, held by process $holder (sleep) through $(realpath "$B") until it exits or it is detached (smartio segment detach host0.ring host1)"
refused "host0.ring is attached by $held and mapped for nvme0 (EBUSY)" \
	s0 segment destroy ring
refused "host0.ring cannot be withdrawn while attached by $held (EBUSY)" \
	s0 segment export ring off
refused "host0 has no segment nope (ENOENT)" s0 segment destroy nope
rmdir "$A/nodes/host0/segments/ring/dma/nvme0"
echo host1 > "$A/nodes/host0/segments/ring/detach"
kill "$holder"
ok "segment destroy" s0 segment destroy ring
ok "segment destroy remote" s0 segment destroy host2.q
expect_eq "segments left" "$(ls "$A/nodes/host0/segments" "$C/nodes/host2/segments")" \
	"$(printf '%s\n\n%s' "$A/nodes/host0/segments:" "$C/nodes/host2/segments:")"
# host0 has 256M of RAM (operator.conf): a 200M segment leaves no room for
# 100M more (memory is allocated sparse: this costs nothing).
ok "a segment of most of host0's memory" s0 segment create big 200M
refused "host0 has not enough free memory for 100M (its other segments hold 200 MiB) (ENOMEM)" \
	s0 segment create more 100M
ok "segment destroy big" s0 segment destroy big
# A size that is not one is a usage error (exit 2), before any write.
set +e; s0 segment create y 1X 2> "$TMP/err"; rc=$?; set -e
expect_eq "bad size exit" "$rc" 2
expect_eq "bad size message" "$(cat "$TMP/err")" "smartio: bad size '1X': a decimal or 0x hex number, with k, M or G"

# segment apply: a config file's segments, applied twice (idempotent).
printf '# name size\nhost0 cfg 8k export\nhost2 other 4096\n' > "$TMP/segs.conf"
ok "segment apply" s0 segment apply "$TMP/segs.conf"
expect_eq "apply output" "$(cat "$TMP/out")" "smartio: created segment host0.cfg (8 KiB, exported)
smartio: created segment host2.other (4 KiB)"
ok "segment apply again" s0 segment apply "$TMP/segs.conf"
expect_eq "apply again output" "$(cat "$TMP/out")" ""
printf 'host0 cfg 16k\n' > "$TMP/segs2.conf"
set +e; s0 segment apply "$TMP/segs2.conf" 2> "$TMP/err"; rc=$?; set -e
expect_eq "apply conflict exit" "$rc" 1
expect_eq "apply conflict" "$(cat "$TMP/err")" \
	"smartio: segment host0.cfg exists with 8192 bytes, not 16384 (EEXIST)"
printf 'host0 cfg\n' > "$TMP/segs3.conf"
set +e; s0 segment apply "$TMP/segs3.conf" 2> "$TMP/err"; rc=$?; set -e
expect_eq "apply syntax exit" "$rc" 2
expect_eq "apply syntax" "$(cat "$TMP/err")" \
	"smartio: $TMP/segs3.conf:1: want '<node> <segment> <size> [export]'"
s0 segment destroy cfg; s0 segment destroy host2.other

# --- watch: readable lines and JSON, filtered -----------------------------
# A negative, infinite or unparsable count or timeout is a usage error
# (exit 2, one line naming the option), not a traceback.
for bad in "-t -1" "-t nan" "-t inf" "-t 1e300" "-t soon" "-c -1"; do
	set +e
	# shellcheck disable=SC2086 # two words: the option and its value
	s0 watch $bad > "$TMP/out" 2> "$TMP/err"; rc=$?
	set -e
	[ $rc = 2 ] || fail "watch $bad: exit $rc, want 2: $(cat "$TMP/err")"
	grep -q "^smartio watch: error: argument -[tc]/--[a-z]*: .* is not a number of" "$TMP/err" ||
		fail "watch $bad: $(cat "$TMP/err")"
	! grep -q Traceback "$TMP/err" || fail "watch $bad: a traceback"
done
ok "watch -t 0 (nothing waiting)" s0 watch -t 0
s0 watch --ready "$TMP/w1" -c 2 -d nvme0 > "$TMP/watch.txt" &
w1=$!
s0 watch --ready "$TMP/w2" --json -c 1 -k return > "$TMP/watch.json" &
w2=$!
s0 watch --ready "$TMP/w3" -c 1 -n host1 -k lend > "$TMP/watch.node" &
w3=$!
for f in w1 w2 w3; do
	i=0; while [ ! -e "$TMP/$f" ]; do sleep 0.05; i=$((i + 1)); [ $i -lt 200 ] || fail "watch $f did not start"; done
done
ok "lend nic0 (not watched by w1)" s0 lend nic0 none
ok "return" s1 return nvme0
ok "lend gpu0 (host1's device)" s1 lend gpu0 host0
ok "reclaim by the lender" s0 borrow nvme0 host1
wait $w1 $w2 $w3
sed -E 's/^[0-9:.]+ #[0-9]+ //' "$TMP/watch.txt" > "$TMP/watch.words"
expect_eq "watch lines" "$(cat "$TMP/watch.words")" "host1 returned nvme0
host1 borrowed nvme0"
grep -Eq '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} #[0-9]+ host1 returned nvme0$' "$TMP/watch.txt" ||
	fail "watch line format: $(cat "$TMP/watch.txt")"
python3 - "$TMP/watch.json" <<'EOF' || fail "watch --json: $(cat "$TMP/watch.json")"
import json, sys
ev = json.loads(open(sys.argv[1]).read())
assert ev["kind"] == "return" and ev["object"] == "dev/nvme0" and ev["node"] == "host1", ev
assert isinstance(ev["seq"], int) and ev["time"].count(".") == 1, ev
EOF
expect_eq "watch by node" "$(sed -E 's/^[0-9:.]+ #[0-9]+ //' "$TMP/watch.node")" "gpu0 lent to host0"
# -t: no event for that long ends the watch (exit 0, nothing printed).
set +e
timeout 30 "$SMARTIO" -m "$A" watch -t 0.5 -d nvme0 > "$TMP/out" 2> "$TMP/err"; rc=$?
set -e
expect_eq "watch -t exit" "$rc" 0
expect_eq "watch -t output" "$(cat "$TMP/out" "$TMP/err")" ""
ok "reclaim" s0 reclaim nvme0
expect_eq "reclaimed" "$(cat "$A/dev/nvme0/borrow")" ""
ok "mode exclusive once nobody borrows it" s0 mode nvme0 exclusive

# --- progress ---------------------------------------------------------------
# The line appears for operations that take longer than a second: here the
# threshold is 0 so that a borrow shows it whatever the machine's speed.
ok "lend nic0" s0 lend nic0 all
SMARTIO_PROGRESS_AFTER=0 ok "progress forced" s1 borrow nic0
expect_eq "progress start" "$(head -n1 "$TMP/err")" "smartio: host1 borrowing nic0 from host0 ..."
grep -Eq "^smartio: host1 borrowing nic0 from host0: done after [0-9.]+ s$" "$TMP/err" ||
	fail "forced progress: $(cat "$TMP/err")"
s1 return nic0
# With the default threshold (1 s) a quick write shows no line ...
ok "quick borrow" s1 borrow nic0
expect_eq "no progress line for a quick borrow" "$(cat "$TMP/err")" ""
s1 return nic0
# ... and a write that takes 1.5 s shows it.  An audit hook (nothing else
# in smartio changes) holds the first open for writing of the borrow file
# for 1.5 s in the thread that runs the operation, as a slow fabric
# would.  (Stopping the daemon with SIGSTOP from the hook instead raced
# with the request under load: the write was sometimes served before the
# stop took effect.)
mount_sfs "$TMP/m4" --fabric "$FABRIC-slow"
D=$TMP/m4
mkdir "$TMP/hook"
cat > "$TMP/hook/sitecustomize.py" <<'PYEOF'
# The first open for writing of the file SMARTIO_TEST_SLOW names waits
# 1.5 s (not the reads that explain an error).
import os, sys, time
_file = os.environ.get("SMARTIO_TEST_SLOW")
_done = []
def _hook(event, args):
    if (event == "open" and not _done and isinstance(args[0], str)
            and args[0].endswith(_file) and args[2] & (os.O_WRONLY | os.O_RDWR)):
        _done.append(1)
        time.sleep(1.5)
if _file:
    sys.addaudithook(_hook)
PYEOF
echo all > "$D/dev/nic0/lend"
slow() {	# slow WHO: WHO borrows nic0 through $D, the operation 1.5 s long
	set +e
	SMARTIO_TEST_SLOW=/dev/nic0/borrow \
		PYTHONPATH="$TMP/hook:$PYTHONPATH" "$SMARTIO" -m "$D" borrow nic0 "$1" \
		> "$TMP/out" 2> "$TMP/err"
	rc=$?
	set -e
}
slow host1
expect_eq "slow borrow exit" "$rc" 0
expect_eq "slow borrow" "$(cat "$D/dev/nic0/borrow")" host1
expect_eq "slow progress start" "$(head -n1 "$TMP/err")" "smartio: host1 borrowing nic0 from host0 ..."
t=$(sed -nE 's/^smartio: host1 borrowing nic0 from host0: done after ([0-9.]+) s$/\1/p' "$TMP/err")
[ -n "$t" ] || fail "slow progress end: $(cat "$TMP/err")"
awk -v t="$t" 'BEGIN { exit !(t >= 1.5) }' || fail "slow borrow took $t s, not 1.5 s or more"
expect_eq "slow progress lines" "$(wc -l < "$TMP/err")" 2
slow host2
expect_eq "slow refused exit" "$rc" 1
sed -E 's/after [0-9.]+ s$/after N s/' "$TMP/err" > "$TMP/err.n"
expect_eq "slow refused progress" "$(cat "$TMP/err.n")" "smartio: host2 borrowing nic0 from host0 ...
smartio: host2 borrowing nic0 from host0: failed after N s
smartio: nic0 is borrowed by host1 in exclusive mode (EBUSY)"

# --- list, status ---------------------------------------------------------
ok "list" s0 list
head -n1 "$TMP/out" | grep -Eq '^DEVICE +NODE +BDF +CLASS +STATE +LEND +BORROWERS +MODE$' ||
	fail "list header: $(head -n1 "$TMP/out")"
grep -Eq '^nvme0 +host0 +0000:01:00.0 +Non-Volatile memory controller +available +all +- +exclusive$' "$TMP/out" ||
	fail "list row: $(cat "$TMP/out")"
ok "list --tree" s0 list --tree
grep -q '^host0 (id 0, up)  \[this mount\]$' "$TMP/out" || fail "tree: $(cat "$TMP/out")"
grep -q '^host3 (id 3, down)$' "$TMP/out" || fail "tree host3: $(cat "$TMP/out")"
set +e; s0 status > "$TMP/out" 2>&1; rc=$?; set -e
expect_eq "status exit with host3 down" "$rc" 1
grep -q '^cluster: node host3 is down$' "$TMP/out" || fail "status: $(cat "$TMP/out")"
grep -qx '  ntb0   link up    luts   0/256 \[\.\{20\}\]  requesters  2/3  \[#\{13\}\.\{7\}\]' "$TMP/out" ||
	fail "status bars: $(cat "$TMP/out")"
# On the cluster of $D (every node up): exit 0; then a link down is exit 1.
set +e; "$SMARTIO" -m "$D" status > "$TMP/out" 2>&1; rc=$?; set -e
expect_eq "status exit, all up" "$rc" 0
expect_eq "status all up" "$(tail -n1 "$TMP/out")" "cluster: all nodes and links up"
echo down > "$D/nodes/host3/adapters/ntb0/link"
set +e; "$SMARTIO" -m "$D" status > "$TMP/out" 2>&1; rc=$?; set -e
expect_eq "status exit with a link down" "$rc" 1
expect_eq "status link down" "$(tail -n1 "$TMP/out")" "cluster: link of ntb0 on host3 is down"
# Both nodes up, the borrower's link down: the sentence names the link.
echo all > "$D/dev/acc0/lend"
echo down > "$D/nodes/host1/adapters/ntb0/link"
A=$D refused "the link of ntb0 on host1 is down: host1 cannot reach host2, the lender of acc0 (EHOSTDOWN)" \
	"$SMARTIO" -m "$D" borrow acc0 host1
echo up > "$D/nodes/host1/adapters/ntb0/link"
# sriov's sentences, on a cluster with an SR-IOV function.
mount_sfs "$TMP/m6" --fabric "$FABRIC-sriov" --topology "$(cd "$(dirname "$conf")" && pwd)/sriov.conf"
S6() { "$SMARTIO" -m "$TMP/m6" "$@"; }
A=$TMP/m6 refused "nic0 has 4 virtual functions: 9 is more (ERANGE)" S6 sriov nic0 9
ok "sriov 2" S6 sriov nic0 2
A=$TMP/m6 refused "nic0 has 2 virtual functions enabled: disable them first (sriov nic0 0), as in Linux (EBUSY)" \
	S6 sriov nic0 3
ok "lend a VF" S6 lend nic0v0 all
ok "borrow a VF" S6 borrow nic0v0 host1
A=$TMP/m6 refused "a virtual function of nic0 is borrowed or mapped: return or unmap it first (EBUSY)" \
	S6 sriov nic0 0
fusermount3 -u "$TMP/m6"
rm -rf "/dev/shm/smartio-$FABRIC-sriov"
rm -rf "/dev/shm/smartio-$FABRIC-slow"
# Not a mount: exit 2 and a sentence.
set +e; "$SMARTIO" -m "$TMP" list 2> "$TMP/err"; rc=$?; set -e
expect_eq "not a mount exit" "$rc" 2
expect_eq "not a mount" "$(cat "$TMP/err")" \
	"smartio: $TMP is not a smartio mount (no nodes/ in it; is smartiofs running?) (ENOENT)"
# SMARTIO_MOUNT is the default mount point.
SMARTIO_MOUNT=$B "$SMARTIO" list --tree | grep -q '^host1 (id 1, up)  \[this mount\]$' ||
	fail "SMARTIO_MOUNT not used"
kill -0 "$P0" || fail "host0's daemon died"

# A user other than the daemon's (on a mount that lets others in).
mount_sfs "$TMP/m3" --fabric "$FABRIC-users" -o allow_other
userpy=/usr/bin/python3	# one that another user may run
if command -v setpriv > /dev/null && [ -x "$userpy" ]; then
	A=$TMP/m3
	chmod 755 "$TMP"	# mktemp -d made it 0700
	refused "permission denied: only root, the user running smartiofs or its operator group may change the cluster (EACCES)" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$userpy" "$SMARTIO" -m "$A" lend nvme0 all
else
	echo "SKIP: $TEST: no setpriv or $userpy: the other-user sentence is not checked"
fi
rm -rf "/dev/shm/smartio-$FABRIC-users"

# Every sentence of smartio(1)'s DIAGNOSTICS table was seen above ("..."
# stands for the names of the case), and every (operation, errno) that
# smartio.errors.TABLE explains is a row of it.
python3 - "$sfs_top/man/smartio.1" "$TMP/sentences" <<'PYEOF' || fail "smartio(1) and the sentences differ"
import errno, re, sys
from smartio.errors import TABLE
man = open(sys.argv[1]).read()
table = man[man.index(".Sh DIAGNOSTICS"):man.index(".Sh SEE ALSO")]
want = [m.group(1) for m in re.finditer(r"Ql (.*?)(?: ,)?$", table, re.M)
        if not m.group(1).startswith("(")]
seen = open(sys.argv[2]).read().splitlines()
missing = [w for w in want if not any(
    re.fullmatch("smartio: " + ".*".join(map(re.escape, w.split("..."))) + r" \(E[A-Z]+\)", s)
    for s in seen)]
for w in missing:
    print("  not seen:", w)
rows = set(re.findall(r"^\.It (.+?) Ta Er (E[A-Z]+) Ta ", table, re.M))
absent = [(cmd, errno.errorcode[e]) for op, e in sorted(TABLE)
          for cmd in ["segment create" if op == "segment-size" else op.replace("-", " ")]
          if (cmd, errno.errorcode[e]) not in rows]
for cmd, name in absent:
    print("  no row in smartio(1):", cmd, name)
sys.exit(1 if missing or absent or len(want) < 26 or len(rows) < 20 else 0)
PYEOF
echo "PASS: $TEST: $sentences sentences"
