# Fuzzing the protocol decoder and the topology parser.
#
# make check replays the seed corpora (and any input added there later, such
# as a crash that was fixed) through the harnesses built with the ordinary
# compiler: tests/fuzz/replay_* are tests of check_PROGRAMS.  make fuzz builds them with libFuzzer, ASan and UBSan (clang)
# and runs each for FUZZ_SECONDS on a scratch copy of its corpus; new
# crashes are left in FUZZ_DIR.  make check-stress runs make fuzz.
check_PROGRAMS += tests/fuzz/replay_proto tests/fuzz/replay_topology
tests_fuzz_replay_proto_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_proto.c
tests_fuzz_replay_proto_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"corpus-proto"'
tests_fuzz_replay_proto_LDADD = lib/libsmartio-internal.la
tests_fuzz_replay_topology_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_topology.c
tests_fuzz_replay_topology_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"corpus-topology"'
tests_fuzz_replay_topology_LDADD = lib/libsmartio-internal.la
EXTRA_DIST += tests/fuzz/run.sh tests/fuzz/mkseeds.py \
	tests/fuzz/topology.dict tests/fuzz/corpus-proto tests/fuzz/corpus-topology

FUZZ_CC = clang
FUZZ_SECONDS = 60
FUZZ_DIR = $(abs_top_builddir)/fuzz-out
FUZZ_CFLAGS = -g -O1 -std=c11 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all $(WARN_CFLAGS)

tests/fuzz/fuzz_proto: $(srcdir)/tests/fuzz/fuzz_proto.c $(srcdir)/lib/core/proto.c
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) $(AM_CPPFLAGS) -o $@ $^
tests/fuzz/fuzz_topology: $(srcdir)/tests/fuzz/fuzz_topology.c \
		$(srcdir)/lib/sim/topology_parse.c
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) $(AM_CPPFLAGS) -o $@ $^
CLEANFILES += tests/fuzz/fuzz_proto tests/fuzz/fuzz_topology

fuzz: tests/fuzz/fuzz_proto tests/fuzz/fuzz_topology
	$(SHELL) $(srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_DIR) \
		tests/fuzz/fuzz_proto $(srcdir)/tests/fuzz/corpus-proto "-max_len=8192"
	$(SHELL) $(srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_DIR) \
		tests/fuzz/fuzz_topology $(srcdir)/tests/fuzz/corpus-topology \
		"-max_len=4096 -dict=$(abs_top_srcdir)/tests/fuzz/topology.dict"

.PHONY: fuzz
