#!/bin/sh
# Replays the fuzz seed corpora through the harnesses (built without
# libFuzzer): every seed must keep its properties (see fuzz_*.c).
set -eu
src=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BUILDDIR:-.}
"$build/tests/fuzz/replay_proto" "$src/tests/fuzz/corpus-proto"
"$build/tests/fuzz/replay_topology" "$src/tests/fuzz/corpus-topology"
