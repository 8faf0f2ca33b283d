# SPDX-License-Identifier: GPL-2.0-or-later
# make check-asan: the whole test suite rebuilt with AddressSanitizer and
# UndefinedBehaviorSanitizer, from a copy of the distributed sources in
# $(ASAN_DIR) (so it never disturbs this build), and run.  Reports of
# processes whose exit status no test looks at (smartiofs daemons, children)
# are collected through log_path and fail the target too.
#
# make check-valgrind: FUSE tests with every smartiofs they mount run under
# valgrind (SMARTIOFS_WRAPPER, honoured by tests/fs/lib.sh and sfshelp.py);
# any error or definite leak in a daemon fails the target.  VALGRIND_TESTS
# leaves out the tests that allocate gigabytes of segments or hammer the
# daemon (errno, random writes, stress), which take tens of minutes under
# valgrind, and those that start smartiofs without the helpers.
ASAN_DIR = $(abs_top_builddir)/asan-build
ASAN_FLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all
VALGRIND_DIR = $(abs_top_builddir)/valgrind-logs
VALGRIND_TESTS = tests/fs/test_walkthrough.sh tests/fs/test_two_nodes.sh \
	tests/fs/test_mmap_two_nodes.py tests/fs/test_mmap_noio.py \
	tests/fs/test_events.py tests/fs/test_attrs.py tests/fs/test_irq.py \
	tests/fs/test_contrib_nvme.sh tests/fs/test_contrib_dma.sh \
	tests/fs/test_exit_frees_unreleased_files.py
EXTRA_DIST += tests/sanitize/check_reports.sh tests/sanitize/libfuse.supp

check-asan: distdir
	rm -rf $(ASAN_DIR)
	mkdir -p $(ASAN_DIR)/reports
	mv $(distdir) $(ASAN_DIR)/src
	cd $(ASAN_DIR)/src && ./configure --enable-werror --disable-static \
		CFLAGS='$(ASAN_FLAGS)' LDFLAGS='-fsanitize=address,undefined' >/dev/null
	cd $(ASAN_DIR)/src && \
	ASAN_OPTIONS=log_path=$(ASAN_DIR)/reports/asan:detect_leaks=1:abort_on_error=0 \
	UBSAN_OPTIONS=log_path=$(ASAN_DIR)/reports/ubsan:print_stacktrace=1:halt_on_error=1 \
		$(MAKE) $(AM_MAKEFLAGS) check
	$(SHELL) $(srcdir)/tests/sanitize/check_reports.sh asan $(ASAN_DIR)/reports

check-valgrind: all
	rm -rf $(VALGRIND_DIR)
	mkdir -p $(VALGRIND_DIR)
	SMARTIOFS_WRAPPER="$(abs_top_builddir)/libtool --mode=execute valgrind \
		--quiet --leak-check=full --errors-for-leak-kinds=definite \
		--show-leak-kinds=definite --track-fds=no \
		--suppressions=$(abs_top_srcdir)/tests/sanitize/libfuse.supp \
		--log-file=$(VALGRIND_DIR)/vg.%p.log" \
		$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(VALGRIND_TESTS)'
	$(SHELL) $(srcdir)/tests/sanitize/check_reports.sh valgrind $(VALGRIND_DIR)

.PHONY: check-asan check-valgrind
