# SPDX-License-Identifier: GPL-2.0-or-later
# make stress: 32 processes racing for one exclusive device (1000 rounds),
# SIGKILL fault injection of lenders and borrowers (libsmartio processes)
# and of smartiofs itself; 100,000 segment create/destroy cycles against one
# smartiofs (its memory must stay flat; make check runs 20,000).  Timing is
# asserted here only where the contract states a bound (node-down within
# 3 s), so it is not part of make check.
#
# make check-stress: fuzz, fuzz-genl (smartio.ko's generic netlink family
# in a QEMU guest, tests/kmod/kmod.mk), stress, check-asan and
# check-valgrind one after
# the other (never in parallel: they would slow each other's detectors),
# all of them even when one fails, with a summary at the end.
EXTRA_PROGRAMS += tests/stress/race tests/stress/kill
tests_stress_race_SOURCES = tests/stress/race.c
tests_stress_race_LDADD = lib/libsmartio.la
tests_stress_kill_SOURCES = tests/stress/kill.c
tests_stress_kill_LDADD = lib/libsmartio.la
CLEANFILES += tests/stress/race tests/stress/kill
EXTRA_DIST += tests/stress/kill_smartiofs.py tests/stress/check_stress.sh
STRESS_ROUNDS = 1000
STRESS_KILLS = 100
STRESS_FS_KILLS = 40

stress: all tests/stress/race tests/stress/kill
	st=0; tests/stress/race $(STRESS_ROUNDS) 32 || st=1; \
	tests/stress/kill $(STRESS_KILLS) || st=1; \
	BUILDDIR='$(abs_top_builddir)' $(PYTHON3) \
		$(srcdir)/tests/stress/kill_smartiofs.py $(STRESS_FS_KILLS) || st=1; \
	BUILDDIR='$(abs_top_builddir)' SFS_CHURN_CYCLES=100000 $(PYTHON3) \
		$(srcdir)/tests/fs/test_intern_churn.py || st=1; \
	exit $$st

check-stress:
	$(SHELL) $(srcdir)/tests/stress/check_stress.sh '$(MAKE)' \
		fuzz fuzz-genl stress check-asan check-valgrind

.PHONY: stress check-stress
