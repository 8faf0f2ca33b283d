#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The bash completion of smartio(1) completes subcommands, and device,
# node and segment names read from the mount that -m names.
. "$(dirname "$0")/lib.sh"
bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || { echo "SKIP: $TEST: bash-completion is missing (apt-get install bash-completion)"; exit 77; }
mount_sfs "$TMP/m0" --fabric "$FABRIC"
M=$TMP/m0
mkdir "$M/nodes/host1/segments/buf"
out=$(bash -c '
. "$1"; . "$2"; M=$3
comp() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _smartio smartio; echo "${COMPREPLY[*]}"; }
comp smartio ""
comp smartio bo
comp smartio -m "$M" borrow ""
comp smartio -m "$M" borrow nvme0 h
comp smartio -m "$M" lend nvme0 a
comp smartio -m "$M" segment ""
comp smartio -m "$M" segment destroy ""
comp smartio -m "$M" mode nvme0 ""
comp smartio -m "$M" watch -k segment-d
comp smartio -m "$M" show ho
comp smartio -m "$M" list -o cl
comp smartio -m "$M" status h
comp smartio -m "$M" link host0 ""
comp smartio -m "$M" multicast ""
comp smartio -m "$M" multicast join g host1 ""
comp smartio -m "$M" config nvme0 COM
' _ "$bc" "$sfs_top/contrib/bash-completion/smartio" "$M") || fail "completion failed: $out"
expect_eq "completions" "$out" "list show status lend borrow return reclaim mode segment multicast link peer config irq sriov watch -m --mount -h --help --version
borrow
acc0 acc1 gpu0 nic0 nic1 nvme0 nvme1 nvme2
host0 host1 host2 host3
all
create destroy export attach detach map unmap apply
host1.buf
exclusive shared
segment-destroy segment-detach segment-dma-map segment-dma-unmap
host0 host1 host2 host3 host1.buf
class class_code
host0 host1 host2 host3
ntb0
list create destroy join leave map unmap
buf
COMMAND"
echo "PASS: $TEST"
