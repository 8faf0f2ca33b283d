#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dev/<dev>/config behaves as PCI registers, not memory (issue 28, item 4).

Tried through the files, by the lender (host0, nic0: an SR-IOV PF with a
4096-byte configuration space) and by a borrower (host1, nic1): the BAR
sizing probe (write all ones, read the size mask, write the address back)
works on the BARs and on the PF's VF BARs; the status register's error
bits are write-1-to-clear and its other bits read-only; the vendor and
device ids, the capability ids and pointers, TotalVFs and bytes that
belong to no register keep their values, and the vendor file agrees with
config.  Every write is taken (sysfs style); what it changes is what the
register lets it change.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, read, write  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
conf = os.path.join(HERE, "sriov.conf")
c = Cluster()
A = c.mount("m0", "--topology", conf, "--node", "host0")
B = c.mount("m1", "--topology", conf, "--node", "host1")


def P(root, dev, *parts):
    return os.path.join(root, "dev", dev, *parts)


def rd(fd, off, n=4):
    data = os.pread(fd, n, off)
    return struct.unpack("<" + {1: "B", 2: "H", 4: "I"}[n], data)[0]


def wr(fd, off, value, n=4):
    data = struct.pack("<" + {1: "B", 2: "H", 4: "I"}[n], value)
    if os.pwrite(fd, data, off) != n:
        fail("config write of %d bytes at 0x%x not taken" % (n, off))


def bar_size(root, dev, bar):
    line = read(P(root, dev, "resource")).splitlines()[bar].split()
    return int(line[1], 16) - int(line[0], 16) + 1


def probe(fd, off, size, upper=False, what="BAR"):
    """The sizing probe on the BAR register at off; restores it."""
    orig = rd(fd, off)
    wr(fd, off, 0xffffffff)
    got = rd(fd, off)
    want = 0xffffffff if upper else ((~(size - 1)) & 0xfffffff0) | (orig & 0xf)
    if got != want:
        fail("%s at 0x%x (%d bytes): all ones read back 0x%08x, not 0x%08x"
             % (what, off, size, got, want))
    wr(fd, off, orig)
    if rd(fd, off) != orig:
        fail("%s at 0x%x: address 0x%08x not written back" % (what, off, orig))


def read_only(fd, off, n, value, what):
    before = rd(fd, off, n)
    wr(fd, off, value, n)
    if rd(fd, off, n) != before:
        fail("%s (0x%x) changed to 0x%x" % (what, off, rd(fd, off, n)))


def header_checks(root, dev, fd):
    ids = rd(fd, 0)
    read_only(fd, 0, 4, 0xbeefdead, "vendor and device id")
    if int(read(P(root, dev, "vendor")), 16) != ids & 0xffff:
        fail("vendor file and config disagree")
    status = rd(fd, 6, 2)
    wr(fd, 6, 0xffff, 2)        # W1C bits clear, the rest is read-only
    if rd(fd, 6, 2) != status & ~0xf900:
        fail("status 0x%04x became 0x%04x after writing ffff"
             % (status, rd(fd, 6, 2)))
    read_only(fd, 0x34, 1, 0x00, "capability pointer")
    cap, hops = rd(fd, 0x34, 1), 0
    while cap and hops < 48:
        read_only(fd, cap, 1, 0x99, "capability id at 0x%x" % cap)
        read_only(fd, cap + 1, 1, 0xc4, "next pointer at 0x%x" % (cap + 1))
        cap, hops = rd(fd, cap + 1, 1), hops + 1
    read_only(fd, 0x40, 4, 0xa5a5a5a5, "a byte of no register")
    probe(fd, 0x10, bar_size(root, dev, 0))


# The lender, its SR-IOV PF.
fd = os.open(P(A, "nic0", "config"), os.O_RDWR)
header_checks(A, "nic0", fd)
sriov = 0x100
if rd(fd, sriov) & 0xffff != 0x10:
    fail("no SR-IOV capability at 0x100")
read_only(fd, sriov + 0x0e, 2, 0x0001, "TotalVFs")
read_only(fd, sriov, 4, 0, "SR-IOV capability header")
probe(fd, sriov + 0x24, 16 << 10, what="VF BAR 0")
probe(fd, sriov + 0x28, 16 << 10, upper=True, what="VF BAR 0 upper half")
os.close(fd)

# A borrower, through its own mount.
if write(P(A, "nic1", "lend"), "all") or write(P(B, "nic1", "borrow"), "host1"):
    fail("nic1 could not be lent to host1")
fd = os.open(P(B, "nic1", "config"), os.O_RDWR)
header_checks(B, "nic1", fd)
os.close(fd)
passed()
