#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 17 item 4 in the namespace: an adapter's `link` is writable on
the simulated fabric ("down" / "up", fault injection, SmartIO section
6.3) with link-down / link-up events; a bad value is EINVAL and changes
nothing; a borrow whose adapter goes down moves to host1's other adapter
(a failover event, its entries moved); with both down it ends (a
reclaim event), its entries come back, and borrowing again is EHOSTDOWN.
"""
import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, read, write  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
c = Cluster()
M = c.mount("m0", "--topology", os.path.join(HERE, "multipath.conf"))
P = lambda *a: os.path.join(M, *a)  # noqa: E731
A = ["nodes/host1/adapters/ntb0/", "nodes/host1/adapters/ntb1/"]
ev = os.open(P("events"), os.O_RDONLY | os.O_NONBLOCK)


def expect(path, want):
    got = read(P(path))
    if got != want:
        fail("%s reads %r, want %r" % (path, got, want))


def must(path, value, want=0):
    rc = write(P(path), value)
    if rc != want:
        fail("%r > %s: %s, want %s" % (value, path,
                                       errno.errorcode.get(rc, rc),
                                       errno.errorcode.get(want, want)))


def events():
    out = []
    while True:
        try:
            out += os.read(ev, 4096).decode().splitlines()
        except BlockingIOError:
            return [" ".join(e.split()[2:]) for e in out]


def saw(want):
    got = events()
    for w in want:
        if w not in got:
            fail("no event %r in %r" % (w, got))


def entries(a):
    """Used LUT slots and incoming requester entries of host1's adapter."""
    return (int(read(P(A[a] + "luts")).split()[0]),
            int(read(P(A[a] + "requesters_in")).split()[0]))


# Down and up, with events; the mode says it can be written.
if os.stat(P(A[1] + "link")).st_mode & 0o200 == 0:
    fail("link is not writable")
must(A[1] + "link", "down\n")
expect(A[1] + "link", "down\n")
must(A[1] + "link", "up")
expect(A[1] + "link", "up\n")
saw(["link-down nodes/host1 adapter=ntb1", "link-up nodes/host1 adapter=ntb1"])
# Bad values: EINVAL, nothing changes, the daemon goes on.
for bad in ["Down", "down\n\n", "0", "up ", "down\0", "off", "x" * 5000]:
    must(A[1] + "link", bad, errno.EINVAL)
expect(A[1] + "link", "up\n")
if events():
    fail("a refused write reported an event")

# A borrow over host1's first adapter moves to the other when it goes down.
must("dev/nic0/lend", "all")
must("dev/nic0/borrow", "host1")
base = [entries(0), entries(1)]
on = 0 if base[0][1] > 2 else 1
must(A[on] + "link", "down")
saw(["link-down nodes/host1 adapter=ntb%d" % on,
     "failover dev/nic0 node=host1 adapter=ntb%d" % (1 - on)])
expect("dev/nic0/borrow", "host1\n")
moved = [entries(0), entries(1)]
if moved[on] != (base[on][0] - 2, base[on][1] - 1) or \
        moved[1 - on] != (base[1 - on][0] + 2, base[1 - on][1] + 1):
    fail("entries after failover %r, before %r" % (moved, base))
# No path left: the borrow ends, every entry is back, borrowing is EHOSTDOWN.
must(A[1 - on] + "link", "down")
saw(["reclaim dev/nic0 node=host1"])
expect("dev/nic0/borrow", "")
if [entries(0), entries(1)] != [(0, 2), (0, 2)]:
    fail("entries left after the borrow ended: %r" % [entries(0), entries(1)])
must("dev/nic0/borrow", "host1", errno.EHOSTDOWN)
must(A[0] + "link", "up")
must("dev/nic0/borrow", "host1")
must("dev/nic0/return", "host1")
passed("link down/up, failover, EHOSTDOWN with no path, through /smartio")
