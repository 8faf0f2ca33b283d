#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""multicast/ (smartio(7), issue 18 item 3): a group made with mkdir and
sized with echo, three nodes joining it with a segment each, a DMA engine
mapped for it through dma/<dev>: one transfer of the engine, started
through its mmap-ed bar0, lands in all three segments; a member that left
gets nothing; bad writes are refused with the group as it was; a node's
own mount joins only for its node and cannot make groups."""
import errno
import mmap
import os
import struct
import time

from sfshelp import Cluster, fail, passed, read, write

HERE = os.path.dirname(os.path.abspath(__file__))
SIZE = 8192

c = Cluster()
M = c.mount("m0", "--topology", os.path.join(HERE, "multicast.conf"))


def P(*parts):
    return os.path.join(M, *parts)


def must(path, data):
    rc = write(path, data)
    if rc:
        fail("write %r to %s: %s" % (data, path, os.strerror(rc)))


def refused(path, data, want):
    rc = write(path, data)
    if rc != want:
        fail("write %r to %s: got %s, want %s" % (
            data, path, os.strerror(rc) if rc else "success",
            os.strerror(want)))


G = P("multicast", "ident")
if os.listdir(P("multicast")):
    fail("multicast/ lists %r before any mkdir" % os.listdir(P("multicast")))
os.mkdir(G)
if read(os.path.join(G, "switch")) != "sw0\n" or \
        read(os.path.join(G, "size")) != "4096\n":
    fail("a new group: switch %r size %r" % (read(os.path.join(G, "switch")),
                                            read(os.path.join(G, "size"))))
must(os.path.join(G, "size"), "8K")
for n in (1, 2, 3, 4):
    seg = P("nodes", "host%d" % n, "segments", "mc")
    os.mkdir(seg)
    must(os.path.join(seg, "size"), "8K")
for n in (1, 2, 3):
    must(os.path.join(G, "join"), "host%d mc" % n)
if read(os.path.join(G, "members")) != "host1\nhost2\nhost3\n":
    fail("members: %r" % read(os.path.join(G, "members")))

# Refused, the group as it was: host4 is on sw1 only, host9 does not exist.
J = os.path.join(G, "join")
for data, want in (("host4 mc", errno.EXDEV), ("host9 mc", errno.ENOENT),
                   ("host1 mc", errno.EEXIST), ("host1", errno.EINVAL),
                   ("host0 nothere", errno.ENOENT),
                   ("host0 acc0/bar9", errno.EINVAL),
                   ("host0 none0/bar2", errno.ENXIO), (" mc", errno.EINVAL)):
    refused(J, data, want)
refused(os.path.join(G, "size"), "16K", errno.EBUSY)
refused(os.path.join(G, "leave"), "host0", errno.ENOENT)
try:
    os.rmdir(G)
    fail("rmdir of a group with members")
except OSError as e:
    if e.errno != errno.EBUSY:
        fail("rmdir of a group with members: %s" % e)
try:
    os.rmdir(P("nodes", "host1", "segments", "mc"))
    fail("a member's segment was destroyed")
except OSError as e:
    if e.errno != errno.EBUSY:
        fail("rmdir of a member's segment: %s" % e)
if read(os.path.join(G, "members")) != "host1\nhost2\nhost3\n" or \
        read(os.path.join(G, "size")) != "%d\n" % SIZE:
    fail("the refusals changed the group")

# acc0 (on host0, this mount's node) writes into the group.
os.mkdir(os.path.join(G, "dma", "acc0"))
io = int(read(os.path.join(G, "dma", "acc0", "ioaddr")), 16)
if os.listdir(os.path.join(G, "dma")) != ["acc0"]:
    fail("dma/ lists %r" % os.listdir(os.path.join(G, "dma")))
fd = os.open(P("dev", "acc0", "bar0"), os.O_RDWR)
bar0 = mmap.mmap(fd, 64 << 10)
os.close(fd)
fd = os.open(P("dev", "acc0", "bar2"), os.O_RDWR)
bar2 = mmap.mmap(fd, 1 << 20)
os.close(fd)
mem = struct.unpack_from("<Q", bar0, 0x10)[0]


def engine_write(pattern):
    """Engine 0 copies pattern from the device's memory to the group."""
    bar2[0:SIZE] = pattern
    done = struct.unpack_from("<Q", bar0, 0x120)[0]    # transfers completed
    struct.pack_into("<QQII", bar0, 0x100, mem, io, SIZE, 0)
    struct.pack_into("<I", bar0, 0x114, 1)              # GO, no interrupt
    end = time.time() + 20
    # STATUS still says done from the transfer before: wait for the count
    # (which the engine bumps just before it writes STATUS) and for STATUS.
    while struct.unpack_from("<Q", bar0, 0x120)[0] == done or \
            struct.unpack_from("<I", bar0, 0x118)[0] & 1:
        if time.time() > end:
            fail("the engine did not finish within 20 s")
        time.sleep(0.001)
    status = struct.unpack_from("<I", bar0, 0x118)[0]
    if status != 2:
        fail("engine status %#x" % status)


def member_bytes(n):
    """host<n>'s segment as host0 reads it: exported, attached by host0
    (the attachment held while this process lives)."""
    seg = P("nodes", "host%d" % n, "segments", "mc")
    if read(os.path.join(seg, "attached")) != "host0\n":
        must(os.path.join(seg, "available"), "1")
        must(os.path.join(seg, "attach"), "host0")
    with open(os.path.join(seg, "mem"), "rb") as f:
        return f.read(SIZE)


first = os.urandom(SIZE)
engine_write(first)
for n in (1, 2, 3):
    if member_bytes(n) != first:
        fail("host%d's segment does not hold the engine's one write" % n)
writes = int(read(os.path.join(G, "writes")))
delivered = int(read(os.path.join(G, "delivered")))
if writes < 1 or delivered != 3 * writes:
    fail("writes %d, delivered %d" % (writes, delivered))

# host2 leaves: the next write reaches host1 and host3 only.
must(os.path.join(G, "leave"), "host2")
second = os.urandom(SIZE)
engine_write(second)
if member_bytes(1) != second or member_bytes(3) != second or \
        member_bytes(2) != first:
    fail("after host2 left the write reached the wrong members")

bar0.close()
bar2.close()
os.rmdir(os.path.join(G, "dma", "acc0"))
for n in (1, 3):
    must(os.path.join(G, "leave"), "host%d" % n)
os.rmdir(G)
if os.listdir(P("multicast")):
    fail("multicast/ lists %r after rmdir" % os.listdir(P("multicast")))
# Per-node mounts of another fabric: host0's is the management node's;
# host1's joins and leaves for host1 only and makes or sizes no group.
c2 = Cluster()
c2.fabric += "-nodes"
H0 = c2.mount("h0", "--node", "host0", "--manage", "--topology",
              os.path.join(HERE, "multicast.conf"))
H1 = c2.mount("h1", "--node", "host1")
os.mkdir(os.path.join(H0, "multicast", "g"))
os.mkdir(os.path.join(H1, "self", "segments", "mc"))
must(os.path.join(H1, "self", "segments", "mc", "size"), "4K")
G1 = os.path.join(H1, "multicast", "g")
refused(os.path.join(G1, "join"), "host2 mc", errno.EPERM)
refused(os.path.join(G1, "size"), "8K", errno.EPERM)
must(os.path.join(G1, "join"), "host1 mc")
if read(os.path.join(H0, "multicast", "g", "members")) != "host1\n":
    fail("host1's join is not seen on host0's mount")
refused(os.path.join(G1, "leave"), "host0", errno.EPERM)
must(os.path.join(G1, "leave"), "host1")
for d in ("other", "g"):
    try:
        (os.mkdir if d == "other" else os.rmdir)(
            os.path.join(H1, "multicast", d))
        fail("host1's mount made or removed group %s" % d)
    except OSError as e:
        if e.errno != errno.EPERM:
            fail("host1's mount on group %s: %s" % (d, e))
os.rmdir(os.path.join(H0, "multicast", "g"))

passed("one engine write reached 3 members (%d writes, %d copies); "
       "refusals changed nothing" % (writes, delivered))
