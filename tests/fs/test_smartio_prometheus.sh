#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `smartio status --prometheus` is accepted by python3-prometheus-client's
# parser of the text format, and its samples are the namespace's values:
# node and link up, LUT and requester use, borrowers and counters per
# device, segment sizes.  With nodes down it still writes every metric (0
# for them) and exits 1, but 0 with -o, which writes the file for
# node_exporter's textfile collector (the exit says it was written); `smartio watch --metrics` counts events read and lost.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pyfind.sh"
py=$(pyfind prometheus_client python3-prometheus-client)
SMARTIO=${SMARTIO:-$sfs_top/python/scripts/smartio}
export PYTHONPATH="$sfs_top/python${PYTHONPATH:+:$PYTHONPATH}"

mount_sfs "$TMP/m0" --fabric "$FABRIC"
M=$TMP/m0
echo all > "$M/dev/acc0/lend"
echo shared > "$M/dev/acc0/mode"
echo host1 > "$M/dev/acc0/borrow"
echo host3 > "$M/dev/acc0/borrow"
echo host3 > "$M/dev/acc0/return"
mkdir "$M/nodes/host1/segments/ring"
echo 2M > "$M/nodes/host1/segments/ring/size"
"$SMARTIO" -m "$M" status --prometheus > "$TMP/metrics" || fail "status --prometheus: exit $?"

check() {	# check METRICS-FILE MOUNT WANT-NODES-UP
	"$py" - "$1" "$2" "$3" <<'PYEOF'
import os, sys
from prometheus_client.parser import text_string_to_metric_families
path, mnt, want_up = sys.argv[1], sys.argv[2], int(sys.argv[3])
fams = {f.name: f for f in text_string_to_metric_families(open(path).read())}
def val(name, **labels):
    fam = fams[name]
    for s in fam.samples:
        if s.name.startswith(name) and all(s.labels.get(k) == v for k, v in labels.items()) \
                and not s.name.endswith("_created"):
            return s.value
    raise SystemExit("no %s%s" % (name, labels))
def cat(*p):
    return open(os.path.join(mnt, *p)).read().strip()
want = {"smartio_node_up", "smartio_link_up", "smartio_luts_used", "smartio_luts_total",
        "smartio_requesters_used", "smartio_requesters_total", "smartio_device_borrowers",
        "smartio_device_borrows", "smartio_device_returns", "smartio_device_reclaims",
        "smartio_device_borrows_denied", "smartio_device_dma_faults", "smartio_device_msi",
        "smartio_device_driver_errors", "smartio_segment_size_bytes", "smartio_segment_attached"}
missing = want - set(fams)
assert not missing, "missing families: %s (got %s)" % (missing, sorted(fams))
assert fams["smartio_device_borrows"].type == "counter"
assert fams["smartio_node_up"].type == "gauge"
up = 0
for n in sorted(os.listdir(os.path.join(mnt, "nodes"))):
    assert val("smartio_node_up", node=n) == (cat("nodes", n, "state") == "up"), n
    up += int(val("smartio_node_up", node=n))
    for a in os.listdir(os.path.join(mnt, "nodes", n, "adapters")):
        lu = [int(x) for x in cat("nodes", n, "adapters", a, "luts").split()]
        rq = [int(x) for x in cat("nodes", n, "adapters", a, "requesters").split()]
        assert [val("smartio_luts_used", node=n, adapter=a),
                val("smartio_luts_total", node=n, adapter=a)] == lu, (n, a, lu)
        assert [val("smartio_requesters_used", node=n, adapter=a),
                val("smartio_requesters_total", node=n, adapter=a)] == rq, (n, a, rq)
        assert val("smartio_link_up", node=n, adapter=a) == (cat("nodes", n, "adapters", a, "link") == "up")
for d in os.listdir(os.path.join(mnt, "dev")):
    node = cat("dev", d, "node")
    stats = dict(l.split() for l in cat("dev", d, "stats").splitlines())
    assert val("smartio_device_borrowers", device=d, node=node) == len(cat("dev", d, "borrow").split())
    for m, k in (("smartio_device_borrows", "borrows"), ("smartio_device_returns", "returns"),
                 ("smartio_device_dma_faults", "dma_faults"), ("smartio_device_borrows_denied", "denied"),
                 ("smartio_device_driver_errors", "driver_errors")):
        assert val(m, device=d, node=node) == int(stats[k]), (m, d)
assert up == want_up, (up, want_up)
print(len(fams), "families")
PYEOF
}
out=$(check "$TMP/metrics" "$M" 4) || fail "metrics: $out"
grep -qx 'smartio_device_borrowers{device="acc0",node="host2"} 1' "$TMP/metrics" || fail "acc0 borrowers"
grep -qx 'smartio_device_borrows_total{device="acc0",node="host2"} 2' "$TMP/metrics" || fail "acc0 borrows"
grep -qx 'smartio_segment_size_bytes{node="host1",segment="ring"} 2097152' "$TMP/metrics" || fail "segment size"

# Events lost: `smartio watch --metrics` counts what a watcher fell behind
# on.  Stopped while 1100 events pass (the ring holds 1024), it reads a
# lost line when it continues.
"$SMARTIO" -m "$M" watch --metrics "$TMP/events.prom" --ready "$TMP/ready" > /dev/null &
W=$!
i=0; while [ ! -e "$TMP/ready" ]; do sleep 0.05; i=$((i + 1)); [ $i -lt 400 ] || fail "watch did not start"; done
grep -qx "smartio_events_lost_total 0" "$TMP/events.prom" || fail "no zero before: $(cat "$TMP/events.prom")"
kill -STOP $W
"$py" - "$M/dev/nvme2/lend" <<'PYEOF'
import os, sys
for i in range(1100):
    fd = os.open(sys.argv[1], os.O_WRONLY)
    os.write(fd, b"all" if i % 2 else b"none")
    os.close(fd)
PYEOF
kill -CONT $W
i=0
while grep -qx "smartio_events_lost_total 0" "$TMP/events.prom"; do
	sleep 0.1; i=$((i + 1)); [ $i -lt 600 ] || { kill $W; fail "no events lost counted"; }
done
kill $W; wait $W 2> /dev/null || true
"$py" - "$TMP/events.prom" <<'PYEOF' || fail "events metrics: $(cat "$TMP/events.prom")"
import sys
from prometheus_client.parser import text_string_to_metric_families
f = {m.name: m for m in text_string_to_metric_families(open(sys.argv[1]).read())}
lost = f["smartio_events_lost"].samples[0].value
assert f["smartio_events_lost"].type == "counter" and 0 < lost <= 1100, lost
PYEOF

# A node of its own (the others down): to standard output exit 1; with -o
# exit 0, the file written with every metric (the health is in it).
mount_sfs "$TMP/m1" --fabric "$FABRIC-alone" --node host2
set +e
"$SMARTIO" -m "$TMP/m1" status --prometheus > /dev/null 2>&1; rc=$?
expect_eq "exit with nodes down, to standard output" "$rc" 1
"$SMARTIO" -m "$TMP/m1" status --prometheus -o "$TMP/alone.prom" 2> "$TMP/err"; rc=$?
expect_eq "exit with nodes down, the file written" "$rc" 0
"$SMARTIO" -m "$TMP/m1" status --prometheus -o "$TMP/no/such/dir.prom" 2> "$TMP/err2"; rc=$?
expect_eq "exit when the file cannot be written" "$rc" 1
expect_eq "sentence when the file cannot be written" "$(cat "$TMP/err2")" \
	"smartio: cannot write $TMP/no/such/dir.prom: No such file or directory"
set -e
rm -rf "/dev/shm/smartio-$FABRIC-alone"
grep -qx "smartio: node host0 is down" "$TMP/err" || fail "no down message: $(cat "$TMP/err")"
out=$(check "$TMP/alone.prom" "$TMP/m1" 1) || fail "metrics with nodes down: $out"
grep -qx 'smartio_node_up{node="host0"} 0' "$TMP/alone.prom" || fail "host0 not 0"
ls "$TMP"/alone.prom.* 2> /dev/null && fail "temporary file left"
echo "PASS: $TEST: $out"
