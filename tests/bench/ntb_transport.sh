#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's ntb_transport lines: tests/ntb/check_transport.sh with
# NTB_BENCH=1 on two 2 MiB windows (ntb_perf asks the page allocator for
# a buffer as large as its window, and has no max_mw_size), both rings of
# 31 entries, 256 MiB guests (in 512 MiB ones ntb_perf stays at the speed
# of TCG's TLB collisions even after the warm-up, 164 MB/s against
# 2034), hence 32 MiB files: ntb_perf twice, 32 MiB over TCP each way
# through ntb_netdev, the same file over TCP on port 0's loopback.
# Prints the NTB-TCP and NTB-PERF(-COLD) lines (exit 77 "SKIP: ..."
# without qemu or kernel parts, 1 "FAIL: ..." when the guests could not
# measure).
src=${SRCDIR:-.}
NTB_BENCH=1 NTB_W1= NTB_MAX_MW0=4194304 NTB_MAX_MW1=4194304 NTB_MEM=256 \
	NTB_MIB=32 exec sh "$src/tests/ntb/check_transport.sh"
