#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `smartio list -J | jq` round-trips the state: jq turns the JSON back into
# file paths and values, and every one equals what the namespace's file
# holds (after lending, borrowing, shared mode and segments, so that no
# field is trivially empty).  `smartio list --dot | dot -Tsvg` renders a
# picture with every node, device and borrow in it.
. "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "SKIP: $TEST: jq is missing (apt-get install jq)"; exit 77; }
command -v dot > /dev/null || { echo "SKIP: $TEST: dot is missing (apt-get install graphviz)"; exit 77; }
SMARTIO=${SMARTIO:-$sfs_top/python/scripts/smartio}
export PYTHONPATH="$sfs_top/python${PYTHONPATH:+:$PYTHONPATH}"

mount_sfs "$TMP/m0" --fabric "$FABRIC"
M=$TMP/m0
echo "host0 host2" > "$M/dev/nvme1/lend"
echo host2 > "$M/dev/nvme1/borrow"
echo all > "$M/dev/acc0/lend"
echo shared > "$M/dev/acc0/mode"
echo host1 > "$M/dev/acc0/borrow"
echo host3 > "$M/dev/acc0/borrow"
mkdir "$M/nodes/host0/segments/ring" "$M/nodes/host3/segments/q"
echo 1M > "$M/nodes/host0/segments/ring/size"
echo 1 > "$M/nodes/host0/segments/ring/available"
echo 64k > "$M/nodes/host3/segments/q/size"
mkdir "$M/nodes/host3/segments/q/dma/acc1"

"$SMARTIO" -m "$M" list -J > "$TMP/list.json" || fail "list -J failed"
jq -e '.schema == "smartio-list/1" and .self == "host0"' "$TMP/list.json" > /dev/null ||
	fail "schema or self: $(head -c 300 "$TMP/list.json")"

# One `check PATH VALUE` line per file the JSON describes.
jq -r '
def j: join("\n");
def c(p; v): "check \(p|@sh) \(v|tostring|@sh)";
(.devices[] | . as $d | "dev/\(.name)" as $p |
  c("\($p)/lend"; .lend|j), c("\($p)/borrow"; .borrowers|j),
  c("\($p)/stats"; .stats|to_entries|map("\(.key) \(.value)")|j),
  (["fdid","node","bdf","vendor","device","subsystem_vendor","subsystem_device",
    "revision","class","mode","state"][] as $k | c("\($p)/\($k)"; $d[$k]))),
(.nodes[] | "nodes/\(.name)" as $p |
  c("\($p)/id"; .id), c("\($p)/state"; .state),
  "list \("\($p)/devices"|@sh) \(.devices|j|@sh)",
  "list \("\($p)/borrowed"|@sh) \(.borrowed|j|@sh)",
  "list \("\($p)/segments"|@sh) \([.segments[].name]|j|@sh)",
  (.adapters[] | "\($p)/adapters/\(.name)" as $a |
    c("\($a)/link"; .link), c("\($a)/peers"; .peers|j), c("\($a)/window"; .window),
    c("\($a)/luts"; "\(.luts.used) \(.luts.total)"),
    c("\($a)/requesters"; "\(.requesters.used) \(.requesters.total)")),
  (.segments[] | "\($p)/segments/\(.name)" as $s |
    c("\($s)/size"; .size), c("\($s)/available"; if .available then 1 else 0 end),
    c("\($s)/attached"; .attached|j),
    c("\($s)/holders"; .holders|map("\(.node) \(.pid) \(.command)")|j),
    (.dma|to_entries[] | c("\($s)/dma/\(.key)/ioaddr"; .value))))
' "$TMP/list.json" > "$TMP/checks" || fail "jq program failed"

n=0
check() {
	got=$(cat "$M/$1") || fail "cat $1"
	[ "$got" = "$2" ] || fail "$1: JSON says '$2', the file '$got'"
	n=$((n + 1))
}
list() {
	got=$(ls "$M/$1")
	[ "$got" = "$2" ] || fail "$1: JSON says '$2', ls '$got'"
	n=$((n + 1))
}
# shellcheck disable=SC1090
. "$TMP/checks"
# Every device and node of the tree is in the JSON.
expect_eq "devices" "$(jq -r '.devices[].name' "$TMP/list.json")" "$(ls "$M/dev")"
expect_eq "nodes" "$(jq -r '.nodes[].name' "$TMP/list.json" | sort)" "$(ls "$M/nodes")"
# What the state above made, seen through the JSON.
expect_eq "shared borrowers" "$(jq -r '.devices[] | select(.name == "acc0") | .borrowers | join(" ")' "$TMP/list.json")" "host1 host3"
expect_eq "class in words" "$(jq -r '.devices[] | select(.name == "nvme1") | .class_name' "$TMP/list.json")" "Non-Volatile memory controller"
expect_eq "segment dma" "$(jq -r '.nodes[] | select(.name == "host3") | .segments[0].dma | keys[]' "$TMP/list.json")" "acc1"
[ "$n" -gt 150 ] || fail "only $n files checked"

# --dot renders, and holds every node, device and borrow.
"$SMARTIO" -m "$M" list --dot > "$TMP/c.dot" || fail "list --dot failed"
dot -Tsvg "$TMP/c.dot" > "$TMP/c.svg" 2> "$TMP/dot.err" || fail "dot: $(cat "$TMP/dot.err")"
[ ! -s "$TMP/dot.err" ] || fail "dot warned: $(cat "$TMP/dot.err")"
grep -q "<svg" "$TMP/c.svg" || fail "no SVG"
for name in $(ls "$M/dev") $(ls "$M/nodes") "borrowed by host2 (exclusive)" \
	"borrowed by host1 (shared)" "borrowed by host3 (shared)"; do
	grep -qF ">$name" "$TMP/c.svg" || fail "'$name' is not in the picture"
done

# The README's picture (doc/smartio-cluster.svg) is what --dot draws of the
# default cluster after the commands the README names: the same nodes,
# adapters, devices, segments, links and borrows, and the same labels,
# look-up table and requester counts included.
cmds=$(sed -n '/^The default cluster after `/,/`,$/p' "$sfs_top/README.md" | tr '\n' ' ' |
	sed -E 's/^[^`]*`([^`]*)`.*$/\1/')
case $cmds in smartio\ *) ;; *) fail "no commands for the picture in README.md: '$cmds'";; esac
mount_sfs "$TMP/r" --fabric "$FABRIC-readme"
IFS=';' read -ra steps <<< "$cmds"
for step in "${steps[@]}"; do
	read -ra argv <<< "$step"
	[ "${argv[0]}" = smartio ] || fail "README step '$step'"
	"$SMARTIO" -m "$TMP/r" "${argv[@]:1}" > /dev/null || fail "README step '$step' failed"
done
"$SMARTIO" -m "$TMP/r" list --dot | dot -Tsvg > "$TMP/readme.svg" || fail "README picture: dot failed"
rm -rf "/dev/shm/smartio-$FABRIC-readme"
words() {	# the titles and labels of an SVG, one a line, sorted
	grep -oE '<title>[^<]*</title>|>[^<]*</text>' "$1" | sort
}
diff <(words "$sfs_top/doc/smartio-cluster.svg") <(words "$TMP/readme.svg") > "$TMP/readme.diff" ||
	fail "doc/smartio-cluster.svg is not what README's commands draw: $(cat "$TMP/readme.diff")"
[ "$(words "$TMP/readme.svg" | grep -c '^<title>')" -gt 30 ] || fail "README picture: too few elements"
echo "PASS: $TEST: $n files round-tripped"
