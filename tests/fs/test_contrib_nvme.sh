#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The userspace NVMe drivers of contrib/nvme, one in C and one in Python,
# run on host1 against nvme0 of host0 through host1's /smartio alone: each
# borrows the controller, writes blocks and reads them back, and each reads
# what the other wrote.  One waits on irq/0, the other polls.  The C driver
# then reads blocks straight into a segment of host2, which host2 mapped
# for the device (SmartIO 4.4: device, driver and memory on three nodes),
# and host2 finds the pattern in its memory.  Afterwards nothing is left
# borrowed, mapped or allocated.
. "$(dirname "$0")/lib.sh"
DRIVER=${BUILDDIR:-.}/contrib/nvme/smartio-nvme
PYDRIVER=$sfs_top/contrib/nvme/smartio_nvme.py
[ -x "$DRIVER" ] || fail "contrib/nvme/smartio-nvme is not built"

mount_sfs "$TMP/m0" --fabric "$FABRIC" --node host0
mount_sfs "$TMP/m1" --fabric "$FABRIC" --node host1
mount_sfs "$TMP/m2" --fabric "$FABRIC" --node host2
A=$TMP/m0 B=$TMP/m1 C=$TMP/m2
echo all > "$A/dev/nvme0/lend"

run() {
	"$@" > "$TMP/out" 2>&1 || { cat "$TMP/out"; fail "$*: exit $?"; }
	grep -q ": verified (" "$TMP/out" || { cat "$TMP/out"; fail "$*: not verified"; }
}

# C writes with interrupts; Python reads it back by polling.
run "$DRIVER" -m "$B" -d nvme0 -l 1000 -n 300 -i
grep -q "wrote and read back 300 blocks at 1000 through nvme0 from host1: verified (interrupts)" "$TMP/out" ||
	fail "C driver: $(cat "$TMP/out")"
run python3 "$PYDRIVER" --mount "$B" --dev nvme0 --lba 1000 --blocks 300 --verify
# Three address domains: host2's segment, mapped by host2 for nvme0.
mkdir "$C/self/segments/dst" && echo 256k > "$C/self/segments/dst/size" &&
	echo 1 > "$C/self/segments/dst/available" &&
	mkdir "$C/self/segments/dst/dma/nvme0" || fail "host2's segment for nvme0"
ioaddr=$(cat "$C/self/segments/dst/dma/nvme0/ioaddr")
echo host1 > "$B/nodes/host2/segments/dst/attach" || fail "host1 attaches dst"
run "$DRIVER" -m "$B" -d nvme0 -l 1000 -n 300 -v -t "host2/dst@$ioaddr"
grep -q "read 300 blocks at 1000 through nvme0 into .*/nodes/host2/segments/dst/mem at $ioaddr: verified" "$TMP/out" ||
	fail "C driver into host2's segment: $(cat "$TMP/out")"
python3 - "$C/self/segments/dst/mem" <<'PY' || fail "host2 reads other bytes than the pattern"
import mmap, sys
with open(sys.argv[1], "r+b") as f:
    m = mmap.mmap(f.fileno(), 300 * 512)
    want = bytes((lba * 7 + j * 13 + (j >> 8)) & 0xff
                 for lba in range(1000, 1300) for j in range(512))
    sys.exit(m[:] != want)
PY
# A target that is not an address: refused before anything is touched.
if "$DRIVER" -m "$B" -d nvme0 -n 8 -v -t "host2/dst@xyz" > "$TMP/out" 2>&1; then
	fail "-t host2/dst@xyz accepted"
fi
grep -q "wants node/segment@ioaddr" "$TMP/out" || fail "-t: $(cat "$TMP/out")"
echo host1 > "$B/nodes/host2/segments/dst/detach" || fail "host1 detaches dst"
rmdir "$C/self/segments/dst/dma/nvme0" "$C/self/segments/dst" ||
	fail "host2 removes its segment"
# Python writes with interrupts; C reads it back by polling.
run python3 "$PYDRIVER" --mount "$B" --dev nvme0 --lba 7000 --blocks 100 --irq
grep -q "(interrupts)" "$TMP/out" || fail "Python driver: $(cat "$TMP/out")"
run "$DRIVER" -m "$B" -d nvme0 -l 7000 -n 100 -v
# A block that was never written does not pass for the pattern.
if "$DRIVER" -m "$B" -d nvme0 -l 20000 -n 8 -v > "$TMP/out" 2>&1; then
	fail "unwritten blocks verified"
fi
grep -q "block 20000 differs" "$TMP/out" || fail "unwritten blocks: $(cat "$TMP/out")"

expect_eq "borrowers left" "$(cat "$A/dev/nvme0/borrow")" ""
expect_eq "segments left" "$(ls "$B/self/segments")" ""
expect_eq "vectors left" "$(cat "$A/dev/nvme0/msi")" ""
grep -q "^msi [1-9]" "$A/dev/nvme0/stats" || fail "no interrupts counted: $(cat "$A/dev/nvme0/stats")"
# The Python driver says why the namespace refused it (the smartio package).
echo none > "$A/dev/nvme0/lend"
if python3 "$PYDRIVER" --mount "$B" --dev nvme0 --blocks 8 > "$TMP/out" 2>&1; then
	fail "Python driver ran on a device not lent"
fi
expect_eq "refused driver" "$(cat "$TMP/out")" \
	"smartio_nvme: nvme0 is not lent (policy none): host1 may not borrow it (EACCES)"
expect_eq "segments left after refusal" "$(ls "$B/self/segments")" ""
echo "PASS: $TEST"
