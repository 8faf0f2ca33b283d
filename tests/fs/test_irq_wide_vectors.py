#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""irq/<vec> names its own vector up to 2047, MSI-X's maximum (issue 28
item 12): the vector number was kept in 8 bits, so irq/300 waited on
vector 44 and irq/256 on vector 0.

acc0 of host2 gets the routing of a function with 512 MSI-X vectors aimed
at host3 (tests/fs/wide_msix: no device model has more than 16 vectors);
host3's mount lists irq/0..511; firing vector 44 wakes irq/44 and not
irq/300, firing 300 wakes irq/300, firing 256 wakes irq/256 and not irq/0.
"""
import errno
import os
import struct
import subprocess

from sfshelp import Cluster, fail, passed

HELPER = os.path.join(os.environ.get("BUILDDIR", "."), "tests", "fs",
                      "wide_msix")
if not os.access(HELPER, os.X_OK):
    fail("%s is not built" % HELPER)

c = Cluster()
B = c.mount("m3", "--node", "host3")
IRQ = os.path.join(B, "dev", "acc0", "irq")


def helper(*args):
    r = subprocess.run([HELPER, c.fabric, "host1"] + [str(a) for a in args],
                       capture_output=True, text=True)
    if r.returncode:
        fail("wide_msix %s: %s" % (" ".join(map(str, args)), r.stderr))


def pending(fd):
    """The count a read returns now, or None when nothing new fired."""
    try:
        return struct.unpack("<I", os.read(fd, 4))[0]
    except BlockingIOError:
        return None


helper("route", "acc0", "host3", 512)
try:
    names = sorted(os.listdir(IRQ), key=int)
    if names != [str(i) for i in range(512)]:
        fail("irq/ lists %d names, from %s to %s" % (
            len(names), names[:1], names[-1:]))
    fds = {v: os.open(os.path.join(IRQ, str(v)), os.O_RDONLY | os.O_NONBLOCK)
           for v in (0, 44, 256, 300, 511)}
    if any(pending(fd) is not None for fd in fds.values()):
        fail("a vector reads as fired before any fired")

    helper("fire", "acc0", 44)
    if pending(fds[44]) != 1:
        fail("irq/44 missed vector 44")
    if pending(fds[300]) is not None:
        fail("irq/300 woke for vector 44")
    helper("fire", "acc0", 300)
    got = pending(fds[300])
    if got != 1:
        fail("irq/300 after vector 300 fired: %r" % got)
    helper("fire", "acc0", 256)
    if pending(fds[0]) is not None:
        fail("irq/0 woke for vector 256")
    if pending(fds[256]) != 1:
        fail("irq/256 missed vector 256")
    helper("fire", "acc0", 511)
    if pending(fds[511]) != 1 or pending(fds[0]) is not None:
        fail("irq/511 and irq/0 after vector 511 fired")
    try:
        os.stat(os.path.join(IRQ, "512"))
        fail("irq/512 exists with 512 vectors routed")
    except FileNotFoundError:
        pass
    try:
        os.stat(os.path.join(IRQ, "2048"))
        fail("irq/2048 exists")
    except OSError as e:
        if e.errno != errno.ENOENT:
            fail("irq/2048: %s" % e)
    for fd in fds.values():
        os.close(fd)
finally:
    helper("unroute", "acc0")
if os.listdir(IRQ):
    fail("irq/ after the routing went: %r" % os.listdir(IRQ)[:4])
passed("vectors 0..511 each read as themselves")
