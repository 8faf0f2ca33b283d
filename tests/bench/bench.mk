# SPDX-License-Identifier: GPL-2.0-or-later
# make bench: the evidence table of tests/bench/bench.py (ratios measured
# side by side in one run).  Not part of make check: it takes minutes and
# its results are figures, not pass/fail.  Its QEMU line builds kmod/
# smartio.ko and boots a TCG guest (tests/bench/kmod_dd.sh, about a minute);
# its lending lines boot two guests on the NTB switch with fio
# (tests/bench/ntb_lend.sh, about five minutes); its ntb_transport lines
# two guests with ntb_netdev and ntb_perf (tests/bench/ntb_transport.sh,
# about a minute).
EXTRA_PROGRAMS += tests/bench/memcpy_ratio
tests_bench_memcpy_ratio_SOURCES = tests/bench/memcpy_ratio.c
tests_bench_memcpy_ratio_CFLAGS = $(AM_CFLAGS) -O2
tests_bench_memcpy_ratio_LDADD =
EXTRA_PROGRAMS += tests/bench/dma_hops
tests_bench_dma_hops_SOURCES = tests/bench/dma_hops.c tests/bench/bench_util.h
tests_bench_dma_hops_LDADD = lib/libsmartio.la
EXTRA_PROGRAMS += tests/bench/mcast_write
tests_bench_mcast_write_SOURCES = tests/bench/mcast_write.c tests/bench/bench_util.h
tests_bench_mcast_write_LDADD = lib/libsmartio.la
CLEANFILES += tests/bench/memcpy_ratio tests/bench/dma_hops \
	tests/bench/mcast_write
EXTRA_DIST += tests/bench/ntb_switchtec.sh
EXTRA_DIST += tests/bench/bench.py tests/bench/gentopo.py tests/bench/replica.py \
	tests/bench/kmod_dd.sh tests/bench/guest-dd.sh tests/bench/ntb_switch.sh \
	tests/bench/ntb_lend.sh tests/bench/ntb_transport.sh tests/bench/hops.conf

# It first installs the Debian packages its lines run (fio, QEMU, bindfs:
# contrib/deps.sh's SMARTIO_BENCH_PACKAGES), as contrib/quickstart installs
# the build's, so that one command gives the whole table on a fresh
# machine; BENCH_INSTALL=0 leaves the machine as it is.
bench: fs/smartiofs tests/bench/memcpy_ratio tests/bench/dma_hops \
	tests/bench/mcast_write \
	contrib/dma/smartio-dma-copy
	if [ "$${BENCH_INSTALL:-1}" != 0 ]; then \
		bash -c '. "$$1" && smartio_install_deps "$${SMARTIO_BENCH_PACKAGES[@]}"' \
			deps $(srcdir)/contrib/deps.sh; \
	fi
	BUILDDIR='$(abs_top_builddir)' $(PYTHON3) $(srcdir)/tests/bench/bench.py

.PHONY: bench

# The lines of issue 30 (bench_ntb_nvmeq, bench_ntb_vf in bench.py): the
# NVMe shared by smartio-nvmeq over smartio.ko, four guests
# (tests/bench/ntb_nvmeq.sh, about ten minutes), and SR-IOV VFs lent over
# smartio.ko, three guests (tests/bench/ntb_vf.sh, about five minutes);
# their guests read with tests/bench/blk_randread.c, built static there.
EXTRA_DIST += tests/bench/ntb_nvmeq.sh tests/bench/nvmeq-bench-init.sh \
	tests/bench/ntb_vf.sh tests/bench/vf-bench-init.sh \
	tests/bench/blk_randread.c
