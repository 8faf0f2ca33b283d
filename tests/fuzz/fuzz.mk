# SPDX-License-Identifier: GPL-2.0-or-later
# Fuzzing the protocol decoder and the topology parser.
#
# make check replays the seed corpora (and any input added there later, such
# as a crash that was fixed) through the harnesses built with the ordinary
# compiler: tests/fuzz/replay_* are tests of check_PROGRAMS.  make fuzz builds them with libFuzzer, ASan and UBSan (clang)
# and runs each for FUZZ_SECONDS on a scratch copy of its corpus; new
# crashes are left in FUZZ_DIR.  make check-stress runs make fuzz.
check_PROGRAMS += tests/fuzz/replay_proto tests/fuzz/replay_topology \
	tests/fuzz/replay_peer tests/fuzz/replay_cfg
tests_fuzz_replay_proto_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_proto.c
tests_fuzz_replay_proto_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"corpus-proto"'
tests_fuzz_replay_proto_LDADD = lib/libsmartio-core.la
tests_fuzz_replay_topology_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_topology.c
tests_fuzz_replay_topology_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"corpus-topology"'
tests_fuzz_replay_topology_LDADD = lib/libsmartio-core.la
# Messages from an NTB peer into a simulated node's core (the whole
# library: the core runs on a simulated fabric).
tests_fuzz_replay_peer_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_peer.c \
	tests/peer_state.h
tests_fuzz_replay_peer_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"corpus-peer"'
tests_fuzz_replay_peer_LDADD = lib/libsmartio-core.la
# Writes into a simulated function's configuration space (cfg_space.c).
tests_fuzz_replay_cfg_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_cfg.c
tests_fuzz_replay_cfg_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS='"corpus-cfg"'
tests_fuzz_replay_cfg_LDADD = lib/libsmartio-core.la
EXTRA_DIST += tests/fuzz/run.sh tests/fuzz/mkseeds.py \
	tests/fuzz/topology.dict tests/fuzz/corpus-proto tests/fuzz/corpus-topology \
	tests/fuzz/corpus-peer tests/fuzz/corpus-cfg

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
# The whole library's sources (a shell glob: every .c there is in it).
tests/fuzz/fuzz_peer: $(srcdir)/tests/fuzz/fuzz_peer.c lib/libsmartio.la \
		$(srcdir)/tests/peer_state.h
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) -pthread $(DEFS) $(DEFAULT_INCLUDES) \
		$(AM_CPPFLAGS) -o $@ \
		$(srcdir)/tests/fuzz/fuzz_peer.c $(srcdir)/lib/*.c \
		$(srcdir)/lib/core/*.c $(srcdir)/lib/sim/*.c \
		$(LIBNL_LIBS) $(LIBUDEV_LIBS)
# The configuration space and the device models it names (the whole
# library, as fuzz_peer: the models live with the fabric).
tests/fuzz/fuzz_cfg: $(srcdir)/tests/fuzz/fuzz_cfg.c lib/libsmartio.la
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) -pthread $(DEFS) $(DEFAULT_INCLUDES) \
		$(AM_CPPFLAGS) -o $@ \
		$(srcdir)/tests/fuzz/fuzz_cfg.c $(srcdir)/lib/*.c \
		$(srcdir)/lib/core/*.c $(srcdir)/lib/sim/*.c \
		$(LIBNL_LIBS) $(LIBUDEV_LIBS)
CLEANFILES += tests/fuzz/fuzz_proto tests/fuzz/fuzz_topology tests/fuzz/fuzz_peer \
	tests/fuzz/fuzz_cfg

fuzz: tests/fuzz/fuzz_proto tests/fuzz/fuzz_topology tests/fuzz/fuzz_peer \
		tests/fuzz/fuzz_cfg
	$(SHELL) $(srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_DIR) \
		tests/fuzz/fuzz_proto $(srcdir)/tests/fuzz/corpus-proto "-max_len=8192"
	$(SHELL) $(srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_DIR) \
		tests/fuzz/fuzz_topology $(srcdir)/tests/fuzz/corpus-topology \
		"-max_len=4096 -dict=$(abs_top_srcdir)/tests/fuzz/topology.dict"
	$(SHELL) $(srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_DIR) \
		tests/fuzz/fuzz_peer $(srcdir)/tests/fuzz/corpus-peer "-max_len=8196"
	$(SHELL) $(srcdir)/tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_DIR) \
		tests/fuzz/fuzz_cfg $(srcdir)/tests/fuzz/corpus-cfg "-max_len=4096"

.PHONY: fuzz
