#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The example session of smartio(7) (shared/NAMESPACE.md), from a shell, on
# host3's /smartio of a cluster whose nvme0 lives in host2; host2 and host3
# are served by two smartiofs processes of one fabric.
. "$(dirname "$0")/lib.sh"
conf="$(dirname "$0")/walkthrough.conf"

mount_sfs "$TMP/m2" --fabric "$FABRIC" --node host2 --topology "$conf"
mount_sfs "$TMP/m3" --fabric "$FABRIC" --node host3 --topology "$conf"
S=$TMP/m3	# host3's /smartio

expect_eq "self" "$(readlink "$S/self")" "nodes/host3"
expect_eq "cat node" "$(cat "$S/dev/nvme0/node")" "host2"
expect_eq "state before" "$(cat "$S/dev/nvme0/state")" "local"
[ ! -e "$S/dev/nvme0/bar0" ] || fail "bar0 visible before borrowing"

# Lending is the lender's (host2's) decision; host3's mount may not.
echo all > "$S/dev/nvme0/lend" 2>/dev/null && fail "host3 lent host2's nvme0"
echo all > "$TMP/m2/dev/nvme0/lend"
expect_eq "lend" "$(cat "$S/dev/nvme0/lend")" "all"
expect_eq "state lent" "$(cat "$S/dev/nvme0/state")" "available"
echo host3 > "$S/dev/nvme0/borrow"
expect_eq "cat borrow" "$(cat "$S/dev/nvme0/borrow")" "host3"
expect_eq "borrow seen by host2" "$(cat "$TMP/m2/dev/nvme0/borrow")" "host3"
expect_eq "state" "$(cat "$S/dev/nvme0/state")" "borrowed"
ls "$S/dev/nvme0" | grep -qx bar0 || fail "ls: no bar0 after borrow"
expect_eq "borrowed/" "$(ls "$S/nodes/host3/borrowed")" "nvme0"
expect_eq "borrowed link" "$(readlink "$S/nodes/host3/borrowed/nvme0")" \
	"../../../dev/nvme0"
win=$(cat "$S/dev/nvme0/dma_window")
case $win in "host3 0x"*" "[0-9]*) ;; *) fail "dma_window: '$win'";; esac

out=$(python3 -c "import mmap,os; f=os.open('$S/dev/nvme0/bar0',os.O_RDWR); m=mmap.mmap(f,16384); print(hex(int.from_bytes(m[0:8],'little')))")
case $out in 0x[0-9a-f]*) ;; *) fail "mmap of bar0 printed '$out'";; esac

# The bytes of bar0 are the device's: the lender's view shows a write.
python3 - "$S/dev/nvme0/bar0" "$TMP/m2/dev/nvme0/bar0" <<'PY' || fail "bar0 data"
import mmap, os, sys
a = mmap.mmap(os.open(sys.argv[1], os.O_RDWR), 16384)
b = mmap.mmap(os.open(sys.argv[2], os.O_RDWR), 16384)
a[0x100:0x108] = b"walkthru"
sys.exit(0 if b[0x100:0x108] == b"walkthru" else 1)
PY

mkdir "$S/self/segments/buf"
expect_eq "size unset" "$(cat "$S/self/segments/buf/size")" "0"
[ ! -e "$S/self/segments/buf/mem" ] || fail "mem before size"
echo 64M > "$S/self/segments/buf/size"
expect_eq "size" "$(cat "$S/self/segments/buf/size")" "67108864"
ls "$S/self/segments/buf/mem" >/dev/null || fail "ls mem"
[ "$(stat -L -c %s "$S/self/segments/buf/mem")" = 67108864 ] || fail "mem size"
expect_eq "seg index" "$(readlink "$S/seg/host3.buf")" "../nodes/host3/segments/buf"
expect_eq "segments seen by host2" "$(ls "$TMP/m2/nodes/host3/segments")" "buf"

echo host3 > "$S/dev/nvme0/return"
expect_eq "borrow after return" "$(cat "$S/dev/nvme0/borrow")" ""
[ ! -e "$S/dev/nvme0/bar0" ] || fail "bar0 still visible after return"
expect_eq "state after return" "$(cat "$S/dev/nvme0/state")" "available"
expect_eq "borrowed/ after return" "$(ls "$S/nodes/host3/borrowed")" ""

rmdir "$S/self/segments/buf"
expect_eq "segments after rmdir" "$(ls "$S/self/segments")" ""
echo "PASS: $TEST"
