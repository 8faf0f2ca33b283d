#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Defect 10 of issue 12: when a borrow ends (return, or the lender's
reclaim) the borrower's mappings of the device's BARs are revoked, as
smartio.ko zaps them: an access through a mapping made while borrowed
raises SIGBUS and no longer reaches the device.  The device keeps its
memory (the lender's view and a new borrow show what was written), and a
device with a model (nvme0) keeps answering.

host0 (lender) and host1 (borrower) are served by two daemons, so for
nvme0 the return happens in one process and the model that must let go
of the old memory runs in the other.
"""
import errno
import mmap
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, write  # noqa: E402

c = Cluster()
A = c.mount("m0", "--node", "host0")
B = c.mount("m1", "--node", "host1")
SIZE = 128 << 10


def must(path, value):
    rc = write(path, value)
    if rc:
        fail("%r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


def mapping(path):
    fd = os.open(path, os.O_RDWR)
    try:
        return mmap.mmap(fd, SIZE)
    finally:
        os.close(fd)


def touch(m, off, what):
    """How an access through m at off ends, in a child: 'ok' or a signal."""
    pid = os.fork()
    if pid == 0:
        try:
            m[off:off + 4] = b"\xde\xad\xbe\xef"
            m[off:off + 4]
        finally:
            os._exit(0)
    _, st = os.waitpid(pid, 0)
    if os.WIFSIGNALED(st):
        return signal.Signals(os.WTERMSIG(st)).name
    return "ok"


def end_borrow(dev, how):
    if how == "return":
        must(os.path.join(B, "dev", dev, "return"), "host1\n")
    else:
        must(os.path.join(A, "dev", dev, "reclaim"), "1\n")


results = []
for dev, how in (("nic0", "return"), ("nic0", "reclaim"),
                 ("nvme0", "return"), ("nvme0", "reclaim")):
    must(os.path.join(A, "dev", dev, "lend"), "all\n")
    must(os.path.join(B, "dev", dev, "borrow"), "host1\n")
    old = mapping(os.path.join(B, "dev", dev, "bar0"))
    lender = mapping(os.path.join(A, "dev", dev, "bar0"))
    if dev == "nic0":
        pat = os.urandom(16)
        old[0x1000:0x1010] = pat
        if lender[0x1000:0x1010] != pat:
            fail("%s: the borrower's write did not reach the device" % dev)
    else:
        cap = old[0:8]
        if cap == bytes(8):
            fail("nvme0: CAP reads 0 through the borrowed BAR")
    if touch(old, 0x2000, dev) != "ok":
        fail("%s: the mapping faults while the device is borrowed" % dev)
    lender.close()
    end_borrow(dev, how)
    got = touch(old, 0x2000, dev)
    if got != "SIGBUS":
        fail("%s after %s: an access through the old mapping ended %s, "
             "not SIGBUS: it still reaches the device" % (dev, how, got))
    # The device itself goes on: its memory and its model.
    must(os.path.join(B, "dev", dev, "borrow"), "host1\n")
    new = mapping(os.path.join(B, "dev", dev, "bar0"))
    if dev == "nic0" and new[0x1000:0x1010] != pat:
        fail("nic0: the device lost its memory across the %s" % how)
    if dev == "nvme0" and new[0:8] != cap:
        fail("nvme0: CAP %r after the %s, %r before" % (new[0:8], how, cap))
    if touch(new, 0x2000, dev) != "ok":
        fail("%s: the new borrow's mapping faults" % dev)
    new.close()
    must(os.path.join(B, "dev", dev, "return"), "host1\n")
    must(os.path.join(A, "dev", dev, "lend"), "none\n")
    results.append("%s %s: SIGBUS" % (dev, how))
    try:
        old.close()
    except (OSError, ValueError):
        pass
for m in (A, B):
    if not c.alive(m):
        fail("a daemon died")
passed("; ".join(results))
