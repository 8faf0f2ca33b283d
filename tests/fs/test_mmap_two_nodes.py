#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""mmap through /smartio across processes: host1's mount maps a BAR of a
device it borrows from host0 and a segment of host0, and sees the bytes
that host0's smartiofs side writes (and the other way round).  Two daemons
of one fabric serve host0 and host1.
"""
import errno
import mmap
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, read, write  # noqa: E402

c = Cluster()
A = c.mount("m0", "--node", "host0")
B = c.mount("m1", "--node", "host1")


def must(path, value):
    rc = write(path, value)
    if rc:
        fail("%r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


def mapping(path, size):
    fd = os.open(path, os.O_RDWR)
    try:
        return mmap.mmap(fd, size)
    finally:
        os.close(fd)


def crosscheck(what, m1, m2, size):
    for i, off in enumerate((0, 8, 4096, size // 2, size - 16)):
        pat = os.urandom(16)
        m1[off:off + 16] = pat
        if m2[off:off + 16] != pat:
            fail("%s: offset %d written on one side, %r on the other" %
                 (what, off, m2[off:off + 16]))
        pat = bytes(reversed(pat))
        m2[off:off + 16] = pat
        if m1[off:off + 16] != pat:
            fail("%s: offset %d written back, %r seen" % (what, off, m1[off:off + 16]))


# A BAR of host0's nic0, borrowed by host1.
must(os.path.join(A, "dev/nic0/lend"), "all\n")
must(os.path.join(B, "dev/nic0/borrow"), "host1\n")
for bar, size in (("bar0", 128 << 10), ("bar2", 16 << 10)):
    pa, pb = os.path.join(A, "dev/nic0", bar), os.path.join(B, "dev/nic0", bar)
    if os.stat(pb).st_size != size:
        fail("%s on host1: size %d, want %d" % (bar, os.stat(pb).st_size, size))
    crosscheck("nic0 " + bar, mapping(pa, size), mapping(pb, size), size)

# A segment of host0, available, attached and mapped by host1.
seg = os.path.join(A, "self/segments/shm")
os.mkdir(seg)
must(os.path.join(seg, "size"), "1M")
rseg = os.path.join(B, "nodes/host0/segments/shm")
if "mem" in os.listdir(rseg):
    fail("host1 sees mem of a segment that is not available")
must(os.path.join(seg, "available"), "1")
# Another mount lists a change once its watcher sees the cluster's change
# counter move, milliseconds later (smartio(7)); a second is the bound.
deadline = time.monotonic() + 1.0
while "mem" not in os.listdir(rseg):
    if time.monotonic() > deadline:
        fail("host1 does not see mem of an available segment after 1 s")
    time.sleep(0.005)
if read(os.path.join(seg, "attached")) != "":
    fail("attached before any attach: %r" % read(os.path.join(seg, "attached")))
must(os.path.join(rseg, "attach"), "host1")
mb = mapping(os.path.join(rseg, "mem"), 1 << 20)
if read(os.path.join(seg, "attached")) != "host1\n":
    fail("attached after host1's attach: %r" % read(os.path.join(seg, "attached")))
crosscheck("segment host0.shm", mapping(os.path.join(seg, "mem"), 1 << 20), mb,
           1 << 20)
try:
    os.rmdir(seg)
    fail("rmdir of a segment attached by host1 succeeded")
except OSError as e:
    if e.errno != errno.EBUSY:
        fail("rmdir of an attached segment: %s" % errno.errorcode[e.errno])

# And the other way: host1's segment mapped by host0.
os.mkdir(os.path.join(B, "self/segments/back"))
must(os.path.join(B, "self/segments/back/size"), "64k")
must(os.path.join(B, "self/segments/back/available"), "1")
must(os.path.join(A, "seg/host1.back/attach"), "host0")
crosscheck("segment host1.back",
           mapping(os.path.join(B, "seg/host1.back/mem"), 64 << 10),
           mapping(os.path.join(A, "seg/host1.back/mem"), 64 << 10), 64 << 10)
if read(os.path.join(A, "nodes/host1/segments/back/attached")) != "host0\n":
    fail("host1.back not attached by host0")
passed("BARs and segments shared between two smartiofs processes")
