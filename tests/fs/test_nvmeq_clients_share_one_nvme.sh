#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# smartio-nvmeq shares nvme0 of host0 among clients on every node, each
# with an I/O queue pair of its own, and keeps the manager out of the data
# path (SmartIO 6.2): the manager runs on host1 (a borrower); 30 clients on
# four nodes write and verify ranges of their own at the same time; what a
# client of host2 writes a client of host3 reads; a client's I/O completes
# while the manager is stopped (SIGSTOP).  A second manager, a bad request
# written into the control block, every slot taken and a client killed
# without releasing are each refused or cleaned up with the manager still
# serving; a stopped manager leaves clients a clear error.
. "$(dirname "$0")/lib.sh"
NVMEQ=${BUILDDIR:-.}/contrib/nvme/smartio-nvmeq
[ -x "$NVMEQ" ] || fail "contrib/nvme/smartio-nvmeq is not built"

for n in 0 1 2 3; do
	mount_sfs "$TMP/m$n" --fabric "$FABRIC" --node host$n
done
M=$TMP/m1
echo all > "$TMP/m0/dev/nvme0/lend"
echo shared > "$TMP/m0/dev/nvme0/mode"

# Background jobs whose pid matters run "$NVMEQ" itself, not q.
q() { "$NVMEQ" -d nvme0 "$@"; }

"$NVMEQ" -m "$M" -d nvme0 manage > "$TMP/mgr.log" 2>&1 &
MGR=$!
# Waits are bounds for a loaded machine (make -j check), not timings.
for _ in $(seq 300); do
	grep -q "serving" "$TMP/mgr.log" && break
	kill -0 $MGR 2>/dev/null || fail "manager exited: $(cat "$TMP/mgr.log")"
	sleep 0.1
done
grep -q "^smartio-nvmeq: serving nvme0 from host1: 31 queue pairs, 131072 blocks$" \
	"$TMP/mgr.log" || fail "manager: $(cat "$TMP/mgr.log")"

# One manager per device, wherever the second one starts.
if q -m "$TMP/m3" manage > "$TMP/out" 2>&1; then
	fail "a second manager started"
fi
grep -q "nvme0 already has a manager on host1" "$TMP/out" ||
	fail "second manager: $(cat "$TMP/out")"

# 30 clients at once, on all four nodes, 256 blocks each at their own LBA.
pids=
for i in $(seq 0 29); do
	q -m "$TMP/m$((i % 4))" check -l $((i * 256)) -n 256 -s $((i + 1)) \
		> "$TMP/c$i" 2>&1 &
	pids="$pids $!"
done
i=0
for p in $pids; do
	wait "$p" || fail "client $i: $(cat "$TMP/c$i")"
	grep -q "wrote and read back 256 blocks at $((i * 256)) through queue [0-9]* of nvme0 from host$((i % 4)): verified" \
		"$TMP/c$i" || fail "client $i: $(cat "$TMP/c$i")"
	i=$((i + 1))
done
# Each range holds its own client's pattern: nobody wrote over another.
for i in 0 13 29; do
	q -m "$TMP/m2" check -k -l $((i * 256)) -n 256 -s $((i + 1)) \
		> "$TMP/out" 2>&1 || fail "range of client $i: $(cat "$TMP/out")"
done
q -m "$TMP/m2" status > "$TMP/out"
grep -q "^0 of 31 queue pairs in use$" "$TMP/out" || fail "after: $(cat "$TMP/out")"

# Bytes across nodes: host2 writes a file's blocks, host3 reads them.
head -c 200704 /dev/urandom > "$TMP/data"
q -m "$TMP/m2" write 50000 < "$TMP/data" || fail "write from host2"
q -m "$TMP/m3" read 50000 392 > "$TMP/back" || fail "read on host3"
cmp -s "$TMP/data" "$TMP/back" || fail "host3 read other bytes than host2 wrote"
# Input that is not whole blocks: said so, the whole blocks written.
head -c 1000 "$TMP/data" > "$TMP/odd"
if q -m "$TMP/m2" write 60000 < "$TMP/odd" 2> "$TMP/out"; then
	fail "a write of 1000 bytes succeeded"
fi
grep -q "input of 1000 bytes is not whole 512-byte blocks; the last 488 bytes were not written" \
	"$TMP/out" || fail "odd write: $(cat "$TMP/out")"
for bad in "bench -q 64" "bench -q 0" "read 1 x" "check -n 0" "read -1 1" "nosuch"; do
	# shellcheck disable=SC2086 # the words are the arguments
	if q -m "$TMP/m2" $bad > "$TMP/out" 2>&1; then
		fail "'$bad' succeeded"
	fi
done
if q -m "$TMP/m2" read 131000 100 > /dev/null 2> "$TMP/out"; then
	fail "a read past the namespace's end succeeded"
fi
grep -q "read failed: Invalid argument" "$TMP/out" || fail "past the end: $(cat "$TMP/out")"

# The manager is not in the data path: stopped, a connected client's
# 20000 reads still complete.
q -m "$TMP/m3" bench -q 4 -r 20000 -n 4096 > "$TMP/bench" 2>&1 &
B=$!
for _ in $(seq 600); do
	q -m "$TMP/m0" status 2>/dev/null | grep -q "ready, host3" && break
	sleep 0.05
done
kill -STOP $MGR
for _ in $(seq 300); do
	grep -q "IOPS" "$TMP/bench" && break
	kill -0 $B 2>/dev/null || break
	sleep 0.1
done
grep -q "random 4 KiB reads through queue [0-9]* of nvme0 from host3, depth 4: 20000 in" \
	"$TMP/bench" || { kill -CONT $MGR; fail "with the manager stopped: $(cat "$TMP/bench")"; }
kill -CONT $MGR
wait $B || fail "bench client: $(cat "$TMP/bench")"

# A buggy client's request: queues of 5000 entries, at an odd address.
CTL=$M/self/segments/nvmeq-nvme0/mem
python3 - "$CTL" <<'EOF' || fail "bad requests were not refused"
import mmap, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 65536)
SLOT, SIZE = 136, 168
def ask(i, qsize, sq, cq):
    o = SLOT + i * SIZE
    struct.pack_into("<IIQQiI", m, o, 1, qsize, sq, cq, 0, 1)
    m[o + 32:o + 37] = b"evil\0"
    struct.pack_into("<I", m, o, 2)                 # REQUEST
    end = time.time() + 10
    while struct.unpack_from("<I", m, o)[0] == 2 and time.time() < end:
        time.sleep(0.01)
    state, status = struct.unpack_from("<I", m, o)[0], struct.unpack_from("<i", m, o + 24)[0]
    struct.pack_into("<I", m, o, 0)
    return state, status
for args in ((5000, 0x1000, 0x2000), (16, 0x1001, 0x2000), (16, 0, 0)):
    state, status = ask(30, *args)
    if state != 4 or status != -22:            # FAILED, -EINVAL
        sys.exit("request %r: state %d status %d" % (args, state, status))
EOF
grep -c "queue 31 for evil (pid 1): refused, Invalid argument" "$TMP/mgr.log" |
	grep -qx 3 || fail "manager log: $(cat "$TMP/mgr.log")"

# Every slot claimed by someone who never asks: a clear refusal, and the
# manager takes the claims back after 10 s.
python3 - "$CTL" <<'EOF'
import mmap, os, struct, sys
m = mmap.mmap(os.open(sys.argv[1], os.O_RDWR), 65536)
for i in range(31):
    struct.pack_into("<I", m, 136 + i * 168, 1)     # CLAIMED
EOF
if q -m "$TMP/m2" check -n 8 > "$TMP/out" 2>&1; then
	fail "a client got a queue with every slot taken"
fi
grep -q "all 31 queue pairs of nvme0 are taken" "$TMP/out" || fail "full: $(cat "$TMP/out")"
for _ in $(seq 150); do
	q -m "$TMP/m2" status | grep -q "^0 of 31" && break
	sleep 0.1
done
q -m "$TMP/m2" check -n 8 > "$TMP/out" 2>&1 || fail "after the claims expired: $(cat "$TMP/out")"

# A client killed without releasing: its queue segment remains; removing
# it gives the queue back.
"$NVMEQ" -m "$TMP/m3" -d nvme0 bench -q 1 -r 10000000 > /dev/null 2>&1 &
K=$!
for _ in $(seq 600); do
	q -m "$TMP/m0" status 2>/dev/null | grep -q "ready, host3 pid $K" && break
	sleep 0.05
done
q -m "$TMP/m0" status | grep -q "ready, host3 pid $K" ||
	fail "the client to be killed never got its queue: $(q -m "$TMP/m0" status)"
kill -KILL $K
wait $K 2>/dev/null || true
seg=$TMP/m3/self/segments/nvmeq-nvme0-$K-0	# its first client
[ -d "$seg" ] || fail "the killed client's segment is gone already"
rmdir "$seg/dma/nvme0" "$seg" || fail "removing the killed client's segment"
for _ in $(seq 50); do
	q -m "$TMP/m2" status | grep -q "^0 of 31" && break
	sleep 0.1
done
q -m "$TMP/m2" status | grep -q "^0 of 31" || fail "slot not freed: $(q -m "$TMP/m2" status)"
grep -q "client host3 gone (its segment was removed), slot freed" "$TMP/mgr.log" ||
	fail "manager log: $(cat "$TMP/mgr.log")"

# Stopped: the control segment goes, clients are told.
kill -TERM $MGR
wait $MGR || fail "manager exit: $(cat "$TMP/mgr.log")"
grep -q "nvme0 stopped" "$TMP/mgr.log" || fail "stop: $(cat "$TMP/mgr.log")"
[ ! -e "$M/self/segments/nvmeq-nvme0" ] || fail "control segment left behind"
if q -m "$TMP/m2" check -n 8 > "$TMP/out" 2>&1; then
	fail "a client ran with no manager"
fi
grep -q "no manager serves nvme0" "$TMP/out" || fail "no manager: $(cat "$TMP/out")"
echo "PASS: $TEST: 30 clients on 4 nodes verified, manager stopped mid-I/O: $(sed 's/.*: 20000 in/20000 reads in/' "$TMP/bench")"
