#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 17 items 1, 2, 3 and 5 in the namespace: an adapter's hops (the
switches on its path to each node it reaches) and speed (the path's rate
and the latency of its chips), the switch port it is
cabled to and that port's requester tables, the adapter's two requester
tables, and a borrow's DMA window sized by 'NODE window=SIZE'.
"""
import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, read, write  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
conf = os.path.join(HERE, "switches.conf")
c = Cluster()
M = c.mount("m0", "--topology", conf)
P = lambda *a: os.path.join(M, *a)  # noqa: E731


def expect(path, want):
    got = read(P(path))
    if got != want:
        fail("%s reads %r, want %r" % (path, got, want))


def must(path, value):
    rc = write(P(path), value)
    if rc:
        fail("%r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


A0 = "nodes/host0/adapters/ntb0/"
expect(A0 + "hops", "host1 1\nhost2 2\n")
expect("nodes/host0/adapters/ntb1/hops", "host2 0\n")
expect("nodes/host2/adapters/ntb0/hops", "host0 2\nhost1 2\n")
# Gen3 x8 everywhere (7306 MB/s of payload); 132 ns per adapter, 170 ns
# per switch: one switch, two, or the direct cable.
expect(A0 + "speed", "host1 7306 434\nhost2 7306 604\n")
expect("nodes/host0/adapters/ntb1/speed", "host2 7306 264\n")
expect("nodes/host2/adapters/ntb0/speed", "host0 7306 604\nhost1 7306 604\n")
expect(A0 + "switch", "left 0\n")
expect("nodes/host0/adapters/ntb1/switch", "")
expect(A0 + "switch_requesters", "2 8\n")
expect(A0 + "switch_requesters_in", "2 8\n")
# host1 borrows nic0: host0 lends over the left switch (1 hop): an
# outgoing entry on host0's port, incoming on host1's and the cascade's.
must("dev/nic0/lend", "all")
must("dev/nic0/borrow", "host1 window=1G")
expect(A0 + "switch_requesters", "3 8\n")
expect(A0 + "switch_requesters_in", "2 8\n")
expect("nodes/host1/adapters/ntb0/switch_requesters_in", "3 8\n")
expect(A0 + "requesters", "3 32\n")
expect("nodes/host1/adapters/ntb0/requesters_in", "3 32\n")
win = read(P("dev/nic0/dma_window")).split()
if win[0] != "host1" or int(win[2]) != 1 << 30:
    fail("dma_window %r, want host1's 1G window" % win)
must("dev/nic0/return", "host1")
expect(A0 + "switch_requesters", "2 8\n")
expect("nodes/host1/adapters/ntb0/switch_requesters_in", "2 8\n")
# host2 borrows over the cable (0 hops), not the two switches.
must("dev/nic1/lend", "all")
must("dev/nic1/borrow", "host2")
expect(A0 + "switch_requesters", "2 8\n")
expect("nodes/host0/adapters/ntb1/requesters", "3 32\n")
must("dev/nic1/return", "host2")
passed("hops, speed, switch ports and requester tables read as documented")
