#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbdkit-smartio-plugin makes a client's view of a shared NVMe an NBD
# export that ordinary tools use: with nvme0 of host0 served by
# smartio-nvmeq on host1, nbdkit on host2 exports it; qemu-img sees its
# size, nbdcopy writes a file into it and reads it back, qemu-io writes
# bytes at an odd offset (the plugin reads, modifies and writes the
# blocks around them); a smartio-nvmeq client on host3 reads the same
# bytes.  A bad depth stops nbdkit at start, and with no manager a
# connection is refused with the reason in nbdkit's log.
. "$(dirname "$0")/lib.sh"
NVMEQ=${BUILDDIR:-.}/contrib/nvme/smartio-nvmeq
PLUGIN=${BUILDDIR:-.}/contrib/nvme/.libs/nbdkit-smartio-plugin.so
for t in nbdkit nbdcopy qemu-img qemu-io; do
	command -v $t >/dev/null || { echo "SKIP: $TEST: $t is missing"; exit 77; }
done
[ -f "$PLUGIN" ] || { echo "SKIP: $TEST: no nbdkit-smartio-plugin (no nbdkit-plugin-dev)"; exit 77; }
PLUGIN=$(realpath "$PLUGIN")
# make check-asan builds the plugin with AddressSanitizer, which must be
# loaded before anything else in nbdkit's process (nbdkit's own leaks are
# not ours to report).
# env execs nbdkit, so that $! of a background run is nbdkit's pid.
asan=$(ldd "$PLUGIN" 2>/dev/null | awk '/libasan/ { print $3 }')
if [ -n "$asan" ]; then
	NBDKIT="env LD_PRELOAD=$asan ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 nbdkit"
else
	NBDKIT=nbdkit
fi

for n in 0 1 2 3; do
	mount_sfs "$TMP/m$n" --fabric "$FABRIC" --node host$n
done
echo all > "$TMP/m0/dev/nvme0/lend"
echo shared > "$TMP/m0/dev/nvme0/mode"

# shellcheck disable=SC2086 # $NBDKIT is a command line
if $NBDKIT -f -U "$TMP/bad.sock" "$PLUGIN" mount="$TMP/m2" depth=64 \
	> "$TMP/out" 2>&1; then
	fail "nbdkit started with depth=64"
fi
grep -q "depth must be 1 to 63, not 64" "$TMP/out" || fail "depth=64: $(cat "$TMP/out")"

S=$TMP/nbd.sock URL="nbd+unix:///?socket=$TMP/nbd.sock"
# shellcheck disable=SC2086
$NBDKIT -f -U "$S" "$PLUGIN" mount="$TMP/m2" dev=nvme0 > "$TMP/nbdkit.log" 2>&1 &
NBDKIT_PID=$!
for _ in $(seq 100); do [ -S "$S" ] && break; sleep 0.05; done
[ -S "$S" ] || fail "nbdkit did not start: $(cat "$TMP/nbdkit.log")"

# No manager yet: the connection is refused, and nbdkit says why.
if qemu-img info "$URL" > "$TMP/out" 2>&1; then
	fail "qemu-img opened the export with no manager"
fi
grep -q "no manager serves nvme0" "$TMP/nbdkit.log" || fail "nbdkit log: $(cat "$TMP/nbdkit.log")"

"$NVMEQ" -m "$TMP/m1" -d nvme0 manage > "$TMP/mgr.log" 2>&1 &
MGR=$!
for _ in $(seq 100); do
	grep -q serving "$TMP/mgr.log" && break
	sleep 0.1
done
grep -q serving "$TMP/mgr.log" || fail "manager: $(cat "$TMP/mgr.log")"

qemu-img info --output=json "$URL" > "$TMP/out" 2>&1 || fail "qemu-img info: $(cat "$TMP/out" "$TMP/nbdkit.log")"
grep -q '"virtual-size": 67108864' "$TMP/out" || fail "size: $(cat "$TMP/out")"

# Two connections at once (qemu-io holds one while nbdcopy works): two
# clients in nbdkit's one process, each with its own queue segment.
qemu-io -f raw -c "sleep 4000" -c "read 0 512" "$URL" > "$TMP/held" 2>&1 &
HELD=$!
for _ in $(seq 100); do
	[ "$("$NVMEQ" -m "$TMP/m2" -d nvme0 status | sed -n 's/^\([0-9]*\) of 31.*/\1/p')" = 1 ] && break
	sleep 0.1
done
head -c 3145728 /dev/urandom > "$TMP/data"
nbdcopy "$TMP/data" "$URL" || fail "nbdcopy into the export: $(tail -5 "$TMP/nbdkit.log")"
nbdcopy "$URL" "$TMP/whole" || fail "nbdcopy out of the export: $(tail -5 "$TMP/nbdkit.log")"
cmp -s "$TMP/data" <(head -c 3145728 "$TMP/whole") || fail "nbdcopy read back other bytes"
wait $HELD || fail "the held connection: $(cat "$TMP/held")"
"$NVMEQ" -m "$TMP/m3" -d nvme0 read 0 6144 > "$TMP/host3" || fail "read on host3"
cmp -s "$TMP/data" "$TMP/host3" || fail "host3 reads other bytes than nbdcopy wrote"

# Five bytes at offset 1000: the blocks around them keep the rest.
qemu-io -f raw -c "write -P 0xab 1000 5" "$URL" > "$TMP/out" 2>&1 ||
	fail "qemu-io write: $(cat "$TMP/out")"
"$NVMEQ" -m "$TMP/m3" -d nvme0 read 0 4 > "$TMP/host3" || fail "read on host3"
python3 - "$TMP/data" "$TMP/host3" <<'EOF' || fail "after the odd write: blocks differ"
import sys
want = bytearray(open(sys.argv[1], "rb").read(2048))
want[1000:1005] = b"\xab" * 5
sys.exit(open(sys.argv[2], "rb").read() != bytes(want))
EOF

kill -TERM $NBDKIT_PID
wait $NBDKIT_PID || true
for _ in $(seq 50); do
	"$NVMEQ" -m "$TMP/m2" -d nvme0 status | grep -q "^0 of 31" && break
	sleep 0.1
done
"$NVMEQ" -m "$TMP/m2" -d nvme0 status | grep -q "^0 of 31" ||
	fail "queues left after nbdkit ended: $("$NVMEQ" -m "$TMP/m2" -d nvme0 status)"
kill -TERM $MGR
wait $MGR || fail "manager: $(cat "$TMP/mgr.log")"
echo "PASS: $TEST: qemu-img, nbdcopy (beside a held connection) and qemu-io through nbdkit on host2; host3 reads the same bytes"
