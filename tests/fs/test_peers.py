#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Peer-to-peer through /smartio: host0 borrows acc0 (a DMA engine of host2)
and gpu0 (of host1), and `mkdir dev/acc0/peers/gpu0` maps gpu0's BARs for
acc0.  peers/gpu0/bar<N> give the addresses acc0 uses; a copy programmed
through the mmap-ed bar0 lands in gpu0's BAR 1 as host0 sees it.  Every
mount shows the mapping; a node that does not use both devices may not
make one; rmdir, or returning a device, removes it.
"""
import errno
import mmap
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, read, write  # noqa: E402

c = Cluster()
A = c.mount("m0", "--node", "host0")
B = c.mount("m1", "--node", "host1")
C = c.mount("m2", "--node", "host2")


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


def oserr(fn, *args):
    try:
        fn(*args)
        return 0
    except OSError as e:
        return e.errno


must(os.path.join(C, "dev/acc0/lend"), "all")
must(os.path.join(B, "dev/gpu0/lend"), "all")
must(os.path.join(A, "dev/acc0/borrow"), "host0")
must(os.path.join(A, "dev/gpu0/borrow"), "host0")
peers = os.path.join(A, "dev/acc0/peers")
if os.listdir(peers):
    fail("peers/ not empty at first")
rc = oserr(os.mkdir, os.path.join(B, "dev/acc0/peers/gpu0"))
if rc != errno.EACCES:
    fail("mkdir by host1, which does not use acc0: %s" % errno.errorcode.get(rc, rc))
os.mkdir(os.path.join(peers, "gpu0"))
rc = oserr(os.mkdir, os.path.join(peers, "gpu0"))
if rc != errno.EEXIST:
    fail("second mkdir: %s" % errno.errorcode.get(rc, rc))
if os.listdir(peers) != ["gpu0"] or sorted(os.listdir(os.path.join(peers, "gpu0"))) != ["bar0", "bar1"]:
    fail("listing: %r %r" % (os.listdir(peers), os.listdir(os.path.join(peers, "gpu0"))))
bar1 = read(os.path.join(peers, "gpu0/bar1"))
if not bar1.startswith("0x") or not bar1.endswith("\n"):
    fail("bar1 reads %r" % bar1)
if read(os.path.join(C, "dev/acc0/peers/gpu0/bar1")) != bar1:
    fail("host2's mount shows another address")
addr = int(bar1, 16)

regs = mapping(os.path.join(A, "dev/acc0/bar0"), 1 << 20)
mem = mapping(os.path.join(A, "dev/acc0/bar2"), 1 << 20)
gpu = mapping(os.path.join(A, "dev/gpu0/bar1"), 1 << 20)
pattern = os.urandom(4096)
mem[0:4096] = pattern
src = struct.unpack_from("<Q", regs, 0x10)[0]
struct.pack_into("<QQI", regs, 0x100, src, addr + 8192, 4096)
struct.pack_into("<I", regs, 0x118, 0)
struct.pack_into("<I", regs, 0x114, 1)
end = time.time() + 20
while not struct.unpack_from("<I", regs, 0x118)[0] & 2:
    if time.time() > end:
        fail("the engine never finished")
    time.sleep(0.001)
if struct.unpack_from("<I", regs, 0x118)[0] != 2:
    fail("engine status %#x" % struct.unpack_from("<I", regs, 0x118)[0])
if gpu[8192:8192 + 4096] != pattern:
    fail("the copy did not land in gpu0's BAR 1")

os.rmdir(os.path.join(peers, "gpu0"))
if os.listdir(peers) or os.path.exists(os.path.join(peers, "gpu0")):
    fail("peers/gpu0 left after rmdir")
os.mkdir(os.path.join(peers, "gpu0"))
regs.close()
mem.close()
gpu.close()
must(os.path.join(A, "dev/gpu0/return"), "host0")
if os.listdir(peers):
    fail("peers/gpu0 left after host0 returned gpu0")
passed()
