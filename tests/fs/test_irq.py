#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""MSI-X of a borrowed device delivered to the borrower's irq/<vec> files.

host3 borrows acc0 (the DMA-engine model of host2) through its own mount,
enables MSI-X by writing the capability in dev/acc0/config, and finds the
core's routing in dev/acc0/msi and its vectors under dev/acc0/irq/.  A copy
started through the mmap-ed bar0 completes with an interrupt: poll() and a
blocking read of irq/0 see it, UIO style (a 4-byte count).  Returning the
device takes the vectors away, and so does the lender's death, which fails
a waiting read with EIO.
"""
import errno
import mmap
import os
import re
import select
import struct
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, read, write  # noqa: E402

c = Cluster()
A = c.mount("m2", "--node", "host2")
B = c.mount("m3", "--node", "host3")


def P(root, *parts):
    return os.path.join(root, "dev", "acc0", *parts)


def must(path, value):
    rc = write(path, value)
    if rc:
        fail("%r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


def find_cap(cfg, cap_id):
    pos, hops = cfg[0x34], 0
    while pos and hops < 48:
        if cfg[pos] == cap_id:
            return pos
        pos, hops = cfg[pos + 1], hops + 1
    fail("capability 0x%02x not found" % cap_id)


must(P(A, "lend"), "all")
must(P(B, "borrow"), "host3")
if os.listdir(P(B, "irq")) or read(P(B, "msi")):
    fail("vectors before MSI-X was enabled")

fd = os.open(P(B, "config"), os.O_RDWR)
cfg = os.pread(fd, 256, 0)
if cfg[0x3d] != 0:
    fail("the borrower sees interrupt pin %d" % cfg[0x3d])
cap = find_cap(cfg, 0x11)
ctl = struct.unpack_from("<H", cfg, cap + 2)[0]
if os.pwrite(fd, struct.pack("<H", ctl | 0x8000), cap + 2) != 2:
    fail("enabling MSI-X")
os.close(fd)

msi = read(P(B, "msi"))
lines = msi.splitlines()
if len(lines) != (ctl & 0x7ff) + 1:
    fail("msi has %d lines:\n%s" % (len(lines), msi))
for i, line in enumerate(lines):
    if not re.fullmatch(r"%d host3 0x[0-9a-f]+ 0x[0-9a-f]+" % i, line):
        fail("msi line %r" % line)
if read(P(A, "msi")) != msi:
    fail("the lender's mount shows another routing")
vecs = sorted(os.listdir(P(B, "irq")), key=int)
if vecs != [str(i) for i in range(len(lines))]:
    fail("irq/ on host3: %r" % vecs)
if os.listdir(P(A, "irq")):
    fail("irq/ on host2 lists vectors routed to host3")
if os.stat(P(B, "irq", "0")).st_mode & 0o777 != 0o444:
    fail("irq/0 mode %o" % os.stat(P(B, "irq", "0")).st_mode)

# Nothing has fired yet: no data, no POLLIN.
nb = os.open(P(B, "irq", "0"), os.O_RDONLY | os.O_NONBLOCK)
try:
    os.read(nb, 4)
    fail("a read with nothing new returned")
except BlockingIOError:
    pass
try:
    os.read(nb, 2)
    fail("a 2-byte read succeeded")
except OSError as e:
    if e.errno != errno.EINVAL:
        fail("a 2-byte read: %s" % e)
fd = os.open(P(B, "irq", "0"), os.O_RDONLY)
pl = select.poll()
pl.register(fd, select.POLLIN)
if pl.poll(0):
    fail("poll reports an interrupt before any")

# Engine 0 copies 4K inside the device's memory and raises vector 0.
bfd = os.open(P(B, "bar0"), os.O_RDWR)
bar0 = mmap.mmap(bfd, 1 << 20)
os.close(bfd)
mfd = os.open(P(B, "bar2"), os.O_RDWR)
bar2 = mmap.mmap(mfd, 1 << 20)
os.close(mfd)
if struct.unpack_from("<I", bar0, 0)[0] != 0x414d4453:
    fail("bar0 is not the DMA engine's")
mem = struct.unpack_from("<Q", bar0, 0x10)[0]
pattern = os.urandom(4096)
bar2[0:4096] = pattern


def start(engine, src, dst, length, vector):
    base = 0x100 + 0x40 * engine
    struct.pack_into("<QQII", bar0, base, src, dst, length, 0)
    struct.pack_into("<I", bar0, base + 0x1c, vector)
    struct.pack_into("<I", bar0, base + 0x14, 3)    # GO | interrupt


start(0, mem, mem + 8192, 4096, 0)
if not pl.poll(20000):
    fail("no POLLIN within 20 s of the copy")
n = struct.unpack("<I", os.read(fd, 4))[0]
if n < 1:
    fail("irq count %d" % n)
if bar2[8192:8192 + 4096] != pattern:
    fail("the copy did not happen")
if struct.unpack_from("<I", bar0, 0x100 + 0x18)[0] != 2:
    fail("engine status %#x" % struct.unpack_from("<I", bar0, 0x118)[0])
try:
    os.read(nb, 4)
except BlockingIOError:
    fail("the non-blocking file missed the interrupt")

# A blocking read parked in the daemon returns at the next interrupt.
got = []
t = threading.Thread(target=lambda: got.append(os.read(fd, 4)))
t.start()
t.join(0.3)
if got:
    fail("a read returned with nothing new")
start(1, mem, mem + 16384, 4096, 0)
t.join(20)
if not got or struct.unpack("<I", got[0])[0] <= n:
    fail("blocking read: %r" % got)
if not re.search(r"^msi [1-9]", read(P(B, "stats")), re.M):
    fail("stats: %s" % read(P(B, "stats")))

# Returning the device takes the vectors away.
bar0.close()
bar2.close()
must(P(B, "return"), "host3")
if read(P(B, "msi")) or os.listdir(P(B, "irq")):
    fail("vectors left after the return")
try:
    os.read(fd, 4)
    fail("read of a vector no longer routed here")
except OSError as e:
    if e.errno != errno.EIO:
        fail("read after return: %s" % e)
os.close(fd)
os.close(nb)

# The lender dies while a read waits: the read fails with EIO.
must(P(B, "borrow"), "host3")
fd = os.open(P(B, "config"), os.O_RDWR)
os.pwrite(fd, struct.pack("<H", ctl | 0x8000), cap + 2)
os.close(fd)
fd = os.open(P(B, "irq", "0"), os.O_RDONLY)
err = []


def blocked_read():
    try:
        os.read(fd, 4)
        err.append("returned")
    except OSError as e:
        err.append(e.errno)


t = threading.Thread(target=blocked_read)
t.start()
t.join(0.3)
c.kill(A)
t.join(30)
if err != [errno.EIO]:
    fail("read while the lender died: %r" % err)
os.close(fd)
if os.listdir(P(B, "irq")) or read(P(B, "msi")):
    fail("vectors left after the lender died")
passed()
