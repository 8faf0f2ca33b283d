#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A directory removed while a file in it is open, then made again under
the same name, is a new object that works on the same mount (issue 28
item 9): the kernel marks the removed directory's inode dead, and when
the daemon answered the new one with the old inode number, every lookup
in it failed with ENOENT until it was removed again.

For each directory that mkdir makes and rmdir removes (a segment, a
segment's dma/<dev>, a device's peers/<dev>, a multicast group): make it,
open a file inside and keep it open, rmdir, mkdir again; the new one
answers lookups, reads and writes and has another inode number; closing
the file held open on the old one afterwards disturbs nothing."""
import errno
import os

from sfshelp import Cluster, fail, passed, read, write

HERE = os.path.dirname(os.path.abspath(__file__))
c = Cluster()
M = c.mount("m", "--topology", os.path.join(HERE, "recreate.conf"))


def P(*parts):
    return os.path.join(M, *parts)


def must(path, data):
    rc = write(path, data)
    if rc:
        fail("write %r to %s: %s" % (data, path, os.strerror(rc)))


class Broken(Exception):
    pass


broken = []


def recreate(d, held, check):
    """mkdir d; hold d/held open; rmdir d; mkdir d; check(d) on the new
    one; close the held file; rmdir the new one.  What the new one gets
    wrong is noted in broken, and the next kind is tried all the same."""
    os.mkdir(d)
    fd = os.open(os.path.join(d, held), os.O_RDONLY)
    # Taken once the file is open: from then on the kernel holds the
    # directory, and no other object may be answered with its number.
    ino = os.stat(d).st_ino
    os.rmdir(d)
    if os.path.exists(d):
        fail("%s still there after rmdir" % d)
    os.mkdir(d)
    try:
        names = os.listdir(d)
        if held not in names:
            raise Broken("the new %s lists %r" % (d, names))
        check(d)
        if os.stat(d).st_ino == ino:
            raise Broken("the new %s has the old one's inode number %d"
                         % (d, ino))
    except (Broken, OSError) as e:
        broken.append("%s: %s" % (os.path.relpath(d, M), e))
    os.close(fd)
    os.rmdir(d)
    if os.path.exists(d):
        fail("%s still there after the second rmdir" % d)


# A segment: the new one takes a size and shows it.
def seg_ok(d):
    rc = write(os.path.join(d, "size"), "8K")
    if rc:
        raise Broken("size of the new segment: %s" % os.strerror(rc))
    if read(os.path.join(d, "size")) != "8192\n":
        raise Broken("new segment's size %r" % read(os.path.join(d, "size")))
    os.stat(os.path.join(d, "mem"))


recreate(P("nodes", "host0", "segments", "x"), "size", seg_ok)

# dma/acc0 of a segment, acc0 being the lender's own device here.
S = P("nodes", "host2", "segments", "s")
os.mkdir(S)
must(os.path.join(S, "size"), "64K")


def dma_ok(d):
    if not read(os.path.join(d, "ioaddr")).startswith("0x"):
        raise Broken("new dma/acc0 ioaddr %r" % read(os.path.join(d, "ioaddr")))


recreate(os.path.join(S, "dma", "acc0"), "ioaddr", dma_ok)

# peers/gpu0 of acc0, both borrowed by host0.
must(P("dev", "acc0", "lend"), "all")
must(P("dev", "gpu0", "lend"), "all")
must(P("dev", "acc0", "borrow"), "host0")
must(P("dev", "gpu0", "borrow"), "host0")


def peer_ok(d):
    if not read(os.path.join(d, "bar0")).startswith("0x"):
        raise Broken("new peers/gpu0 bar0 %r" % read(os.path.join(d, "bar0")))


recreate(P("dev", "acc0", "peers", "gpu0"), "bar0", peer_ok)


# A multicast group: the new one takes a size.
def group_ok(d):
    rc = write(os.path.join(d, "size"), "8K")
    if rc:
        raise Broken("size of the new group: %s" % os.strerror(rc))
    if read(os.path.join(d, "size")) != "8192\n":
        raise Broken("new group's size %r" % read(os.path.join(d, "size")))


recreate(P("multicast", "g"), "size", group_ok)

if broken:
    fail("; ".join(broken))
# Many rounds: each old entry is forgotten, none is answered again.
for i in range(50):
    recreate(P("nodes", "host0", "segments", "x"), "size", seg_ok)
if broken:
    fail("; ".join(broken))
try:
    os.stat(P("nodes", "host0", "segments", "x", "size"))
    fail("segments/x/size after the last rmdir")
except OSError as e:
    if e.errno != errno.ENOENT:
        fail("segments/x/size after the last rmdir: %s" % e)
passed("segment, dma/<dev>, peers/<dev>, multicast group made again "
       "while a file of the old one was open")
