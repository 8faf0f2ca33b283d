# SPDX-License-Identifier: GPL-2.0-or-later
# make bench: the evidence table of tests/bench/bench.py (ratios measured
# side by side in one run).  Not part of make check: it takes minutes and
# its results are figures, not pass/fail.  Its QEMU line builds kmod/
# smartio.ko and boots a TCG guest (tests/bench/kmod_dd.sh, about a minute).
EXTRA_PROGRAMS += tests/bench/memcpy_ratio
tests_bench_memcpy_ratio_SOURCES = tests/bench/memcpy_ratio.c
tests_bench_memcpy_ratio_CFLAGS = $(AM_CFLAGS) -O2
CLEANFILES += tests/bench/memcpy_ratio
EXTRA_DIST += tests/bench/bench.py tests/bench/gentopo.py tests/bench/replica.py \
	tests/bench/kmod_dd.sh tests/bench/guest-dd.sh tests/bench/ntb_switch.sh

bench: fs/smartiofs tests/bench/memcpy_ratio
	BUILDDIR='$(abs_top_builddir)' $(PYTHON3) $(srcdir)/tests/bench/bench.py

.PHONY: bench
