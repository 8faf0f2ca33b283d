#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""mmap of bar<N> and mem costs the daemon no I/O: the links lead to the
backing objects, so heavy traffic through the mappings leaves the daemon's
read and write counters (the user.smartiofs.stats xattr of the mount's root)
where they were.
"""
import errno
import mmap
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, stats, write  # noqa: E402

c = Cluster()
M = c.mount("m0", "--stats")   # the embedded cluster: self is host0


def must(path, value):
    rc = write(path, value)
    if rc:
        fail("%r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


# A borrowed BAR of a device with no model behind it: an NVMe controller
# would answer register writes and change what is read back.
must(os.path.join(M, "dev/gpu0/lend"), "all")
must(os.path.join(M, "dev/gpu0/borrow"), "host0")
os.mkdir(os.path.join(M, "self/segments/local"))
must(os.path.join(M, "self/segments/local/size"), "1M")
os.mkdir(os.path.join(M, "nodes/host1/segments/remote"))
must(os.path.join(M, "nodes/host1/segments/remote/size"), "1M")
must(os.path.join(M, "nodes/host1/segments/remote/available"), "1")
must(os.path.join(M, "nodes/host1/segments/remote/attach"), "host0")

targets = [("dev/nic0/bar0", 128 << 10), ("dev/gpu0/bar0", 64 << 10),
           ("self/segments/local/mem", 1 << 20),
           ("nodes/host1/segments/remote/mem", 1 << 20)]
maps = []
for rel, size in targets:
    fd = os.open(os.path.join(M, rel), os.O_RDWR)
    maps.append((rel, mmap.mmap(fd, size)))
    os.close(fd)

before = stats(M)
total = 0
block = os.urandom(4096)
for rnd in range(64):
    for rel, m in maps:
        n = len(m)
        for off in range(0, n, 4096):
            m[off:off + 4096] = block
            if m[off:off + 4096] != block:
                fail("%s: read back differs at %d" % (rel, off))
            total += 8192
        m.flush()
after = stats(M)
for k in ("read", "write", "open"):
    if after[k] != before[k]:
        fail("%s ops went from %d to %d during %d MiB of mmap traffic" %
             (k, before[k], after[k], total >> 20))
if after["read"] == 0 and after["write"] == 0:
    fail("the counters do not count (read=0, write=0)")
passed("%d MiB through 4 mappings, no read or write reached the daemon "
       "(read=%d write=%d)" % (total >> 20, after["read"], after["write"]))
