#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# contrib/dma/smartio-dma-copy on host0 drives acc0, the DMA-engine model of
# host2, through host0's /smartio alone: 4 MiB from one of host0's segments
# into the device's memory and back into another, on four engines with an
# MSI-X vector each, verified; the same through one bounce buffer and
# through two (double buffering), from private memory, with chunks that do
# not divide the size evenly, and repeated (-r); polling the engines (-p)
# with the CPU reference beside them (-C).  Bad options are refused
# with a message and change nothing.  Then a transfer aimed just past a segment
# mapped for the device is blocked by the fabric: the engine reports the
# error, the device counts it and the events file shows a dma-fault.
. "$(dirname "$0")/lib.sh"
COPY=${BUILDDIR:-.}/contrib/dma/smartio-dma-copy
[ -x "$COPY" ] || fail "contrib/dma/smartio-dma-copy is not built"

mount_sfs "$TMP/m2" --fabric "$FABRIC" --node host2
mount_sfs "$TMP/m0" --fabric "$FABRIC" --node host0
A=$TMP/m2 B=$TMP/m0
echo all > "$A/dev/acc0/lend"

"$COPY" -m "$B" -d acc0 -s 4M -e 4 > "$TMP/out" 2>&1 || { cat "$TMP/out"; fail "copy failed"; }
grep -q "^copied 4194304 bytes host0 -> acc0 memory -> host0 on 4 engines, zero-copy: verified" "$TMP/out" ||
	fail "copy: $(cat "$TMP/out")"
for mode in bounce double; do
	for e in 1 3; do
		"$COPY" -m "$B" -d acc0 -s 4M -c 768K -e $e -M $mode > "$TMP/out" 2>&1 ||
			{ cat "$TMP/out"; fail "$mode on $e engines failed"; }
		grep -q "^copied 4194304 bytes host0 -> acc0 memory -> host0 on $e engines, $mode: verified" "$TMP/out" ||
			fail "$mode: $(cat "$TMP/out")"
	done
done
# -r repeats the copy over the same buffers, verifying every round.
"$COPY" -m "$B" -d acc0 -s 1M -e 2 -M double -c 256K -r 3 > "$TMP/out" 2>&1 ||
	{ cat "$TMP/out"; fail "-r 3 failed"; }
grep -q "^copied 1048576 bytes .* double: verified, 3 rounds, first [0-9.]* MB/s, median [0-9.]* MB/s, best [0-9.]* MB/s$" "$TMP/out" ||
	fail "-r 3: $(cat "$TMP/out")"
# -p polls the engines' status; -C times the CPU moving the same bytes
# through the device's memory (BAR 2) beside the engines, both verified.
for mode in zero-copy double; do
	"$COPY" -m "$B" -d acc0 -s 1M -e 2 -M $mode -c 256K -r 2 -p -C > "$TMP/out" 2>&1 ||
		{ cat "$TMP/out"; fail "-p -C $mode failed"; }
	grep -q "^cpu memcpy through acc0 memory: 2 rounds, first [0-9.]* MB/s, median [0-9.]* MB/s, best [0-9.]* MB/s$" "$TMP/out" &&
		grep -q "^copied 1048576 bytes .* $mode: verified, 2 rounds" "$TMP/out" ||
		fail "-p -C $mode: $(cat "$TMP/out")"
done
segs_before=$(ls "$B/self/segments")
for bad in "-M triple" "-c 1000" "-c 8M" "-s 5M -c 1M -e 9" "-r 0"; do
	# shellcheck disable=SC2086
	if "$COPY" -m "$B" -d acc0 -s 4M $bad > "$TMP/out" 2>&1; then
		fail "'$bad' accepted"
	fi
	grep -q "^smartio-dma-copy: " "$TMP/out" || fail "'$bad': no message: $(cat "$TMP/out")"
done
expect_eq "segments after bad options" "$(ls "$B/self/segments")" "$segs_before"
# Two 64M segments do not fit the 64M DMA window: ENOSPC, said plainly,
# and the run leaves no segment and no borrow behind.
if "$COPY" -m "$B" -d acc0 -s 64M -e 1 > "$TMP/out" 2>&1; then
	fail "two 64M segments fit a 64M window?"
fi
grep -q "No space left on device" "$TMP/out" || fail "64M: $(cat "$TMP/out")"
expect_eq "segments after a failed run" "$(ls "$B/self/segments")" "$segs_before"
expect_eq "borrowers after a failed run" "$(cat "$A/dev/acc0/borrow")" ""

cat "$B/events" > "$TMP/events" &
EVPID=$!
DAEMONS="$DAEMONS $EVPID"
sleep 0.2
"$COPY" -m "$B" -d acc0 -s 64K -e 1 -f > "$TMP/out" 2>&1 || { cat "$TMP/out"; fail "fault run failed"; }
grep -q "^engine 0: transfer to 0x[0-9a-f]* blocked, error at 0x" "$TMP/out" ||
	fail "fault: $(cat "$TMP/out")"
i=0
until grep -q " dma-fault dev/acc0 " "$TMP/events"; do
	i=$((i + 1))
	[ $i -lt 200 ] || fail "no dma-fault event: $(cat "$TMP/events")"
	sleep 0.05
done
kill "$EVPID" 2>/dev/null || true
grep -q "^dma_faults [1-9]" "$A/dev/acc0/stats" || fail "stats: $(cat "$A/dev/acc0/stats")"
expect_eq "borrowers left" "$(cat "$A/dev/acc0/borrow")" ""
expect_eq "vectors left" "$(cat "$A/dev/acc0/msi")" ""
echo "PASS: $TEST"
