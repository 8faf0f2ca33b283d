#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every errno of the table in smartio(7), from real writes (os.write,
mkdir, ...) on mounted smartiofs file systems, with the cluster state
unchanged after each failing operation and the daemons still serving.

Four daemons serve host0 to host3 of one fabric (tests/fs/errno.conf); host4
is down.
"""
import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, read, snapshot, write  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
c = Cluster()
conf = os.path.join(HERE, "errno.conf")
A = c.mount("m0", "--node", "host0", "--topology", conf)
B = c.mount("m1", "--node", "host1", "--topology", conf)
C = c.mount("m2", "--node", "host2", "--topology", conf)
D = c.mount("m3", "--node", "host3", "--topology", conf)
SKIP = ("stats", "config")


def must(path, value):
    rc = write(path, value)
    if rc:
        fail("setup write %r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


def state():
    return snapshot(A, SKIP), snapshot(C, SKIP)


def check(what, want, op):
    """Runs op (returns 0 or an errno) and checks errno and unchanged state."""
    before = state()
    got = op()
    if got != want:
        fail("%s: got %s, want %s" % (what, errno.errorcode.get(got, got),
                                      errno.errorcode.get(want, want)))
    after = state()
    if before != after:
        for i in range(2):
            for k in sorted(set(before[i]) | set(after[i])):
                if before[i].get(k) != after[i].get(k):
                    print("  %s: %r -> %r" % (k, before[i].get(k), after[i].get(k)))
        fail("%s: state changed" % what)
    for m in (A, B, C, D):
        if not c.alive(m):
            fail("%s: the daemon of %s died" % (what, m))
    checked.append(what)


def wr(path, value, offset=None):
    return lambda: write(path, value, offset)


def oserr(fn, *args):
    def op():
        try:
            fn(*args)
        except OSError as e:
            return e.errno
        return 0
    return op


checked = []
dev = lambda m, d, f: os.path.join(m, "dev", d, f)  # noqa: E731
seg = os.path.join(A, "nodes/host0/segments/s")

# --- setup (valid writes) -------------------------------------------------
must(dev(A, "nvme0", "lend"), "all\n")
must(dev(B, "nvme0", "borrow"), "host1\n")           # host1 borrows nvme0
must(dev(A, "nic0", "lend"), "host2\n")              # only host2 may borrow nic0
must(dev(B, "nvme1", "lend"), "all\n")
must(dev(B, "gpu0", "lend"), "all\n")
must(dev(C, "nvme1", "borrow"), "host2\n")           # host2's one requester
os.mkdir(seg)
must(os.path.join(seg, "size"), "1M\n")
os.mkdir(os.path.join(A, "nodes/host0/segments/t"))
must(os.path.join(A, "nodes/host0/segments/t/size"), "64k")
must(os.path.join(A, "nodes/host0/segments/t/available"), "1")
os.listdir(os.path.join(B, "nodes/host0/segments/t"))
must(os.path.join(B, "nodes/host0/segments/t/attach"), "host1")  # held by us
if read(os.path.join(A, "nodes/host0/segments/t/attached")) != "host1\n":
    fail("attach: attached = %r" %
         read(os.path.join(A, "nodes/host0/segments/t/attached")))
os.mkdir(os.path.join(seg, "dma", "nvme0"))

# --- EINVAL ---------------------------------------------------------------
E = errno.EINVAL
check("lend keyword mixed with names", E, wr(dev(A, "nic0", "lend"), "all,host1"))
# A zero-byte write never reaches the daemon: it succeeds and changes nothing.
check("lend empty write", 0, wr(dev(A, "nic0", "lend"), ""))
check("lend newline only", E, wr(dev(A, "nic0", "lend"), "\n"))
check("lend two newlines", E, wr(dev(A, "nic0", "lend"), "all\n\n"))
check("lend leading comma", E, wr(dev(A, "nic0", "lend"), ",host1"))
check("lend doubled separator", E, wr(dev(A, "nic0", "lend"), "host1,,host2"))
check("lend tab", E, wr(dev(A, "nic0", "lend"), "host1\thost2"))
check("lend at offset 1", E, wr(dev(A, "nic0", "lend"), "all", 1))
check("lend 5000 bytes", E, wr(dev(A, "nic0", "lend"), "a" * 5000))
check("mode unknown keyword", E, wr(dev(A, "nvme0", "mode"), "fast"))
check("mode trailing blank", E, wr(dev(A, "nvme0", "mode"), "shared "))
check("mode upper case", E, wr(dev(A, "nvme0", "mode"), "SHARED\n"))
check("borrow two names", E, wr(dev(C, "nic0", "borrow"), "host1 host2"))
check("borrow leading blank", E, wr(dev(C, "nic0", "borrow"), " host2"))
check("borrow NUL byte", E, wr(dev(C, "nic0", "borrow"), "host2\0"))
# Issue 17: "NODE window=SIZE|ram", the borrow's DMA window.
check("borrow window not a power of two", E, wr(dev(C, "nic0", "borrow"), "host2 window=3000"))
check("borrow window below a page", E, wr(dev(C, "nic0", "borrow"), "host2 window=1k"))
check("borrow window unknown key", E, wr(dev(C, "nic0", "borrow"), "host2 size=1M"))
check("borrow window two blanks", E, wr(dev(C, "nic0", "borrow"), "host2  window=1M"))
check("borrow window empty", E, wr(dev(C, "nic0", "borrow"), "host2 window="))
check("borrow window ram and more", E, wr(dev(C, "nic0", "borrow"), "host2 window=ramx"))
check("borrow window overflow", E, wr(dev(C, "nic0", "borrow"), "host2 window=99999999999999999999"))
check("reclaim not 1", E, wr(dev(A, "nvme0", "reclaim"), "yes"))
check("reclaim 01", E, wr(dev(A, "nvme0", "reclaim"), "01"))
check("size zero", E, wr(os.path.join(A, "nodes/host0/segments/t/size"), "0"))
u = os.path.join(A, "nodes/host0/segments/u")
os.mkdir(u)
check("size bad suffix", E, wr(os.path.join(u, "size"), "12X"))
check("size negative", E, wr(os.path.join(u, "size"), "-1"))
check("size fraction", E, wr(os.path.join(u, "size"), "1.5M"))
check("size overflow", E, wr(os.path.join(u, "size"), "99999999999999999999"))
check("size overflow by suffix", E, wr(os.path.join(u, "size"), "17179869184G"))
check("size zero with suffix", E, wr(os.path.join(u, "size"), "0M"))
check("size only suffix", E, wr(os.path.join(u, "size"), "M"))
check("size larger than the node's RAM", E, wr(os.path.join(u, "size"), "2G"))
check("size hex prefix alone", E, wr(os.path.join(u, "size"), "0x"))
check("size bad hex digit", E, wr(os.path.join(u, "size"), "0x1g"))
check("size lower-case m", E, wr(os.path.join(u, "size"), "16m"))
# Sizes have the topology files' grammar: hexadecimal too, suffix included.
hx = os.path.join(A, "nodes/host0/segments/hx")
os.mkdir(hx)
must(os.path.join(hx, "size"), "0x10K")
with open(os.path.join(hx, "size")) as f:
    if f.read() != "16384\n":
        fail("size 0x10K did not read back as 16384")
os.rmdir(hx)
check("available 2", E, wr(os.path.join(u, "available"), "2"))
check("segment name with a dot", E, oserr(os.mkdir, os.path.join(A, "nodes/host0/segments/a.b")))
check("config write past the end", E, wr(dev(A, "nic0", "config"), b"\0" * 8, 256))
check("borrow by the lender itself", E, wr(dev(A, "nic0", "borrow"), "host0"))
check("return by a non-borrower", E, wr(dev(C, "nvme0", "return"), "host2"))

# --- ENOENT / ENXIO -------------------------------------------------------
check("borrow unknown node", errno.ENOENT, wr(dev(C, "nic0", "borrow"), "host9\n"))
check("lend list with an unknown node", errno.ENOENT, wr(dev(A, "nic0", "lend"), "host1,host9"))
check("return unknown node", errno.ENOENT, wr(dev(B, "nvme0", "return"), "nosuch"))
check("borrow very long name", errno.ENOENT, wr(dev(C, "nic0", "borrow"), "h" * 100))
check("dma map of an unknown device", errno.ENXIO,
      oserr(os.mkdir, os.path.join(seg, "dma", "nvme7")))
check("segment of an unknown node", errno.ENOENT,
      oserr(os.mkdir, os.path.join(A, "nodes/host9/segments/x")))

# --- EACCES ---------------------------------------------------------------
check("lend policy denies host1", errno.EACCES, wr(dev(B, "nic0", "borrow"), "host1"))
check("reclaim by a non-lender", errno.EACCES, wr(dev(A, "nvme1", "reclaim"), "1"))
check("config write by a non-borrower", errno.EACCES, wr(dev(A, "nvme1", "config"), b"\xff\xff", 0x40))
check("mem of a remote segment that is not available is absent", errno.ENOENT,
      oserr(os.lstat, os.path.join(B, "nodes/host0/segments/s/mem")))

# --- EBUSY ----------------------------------------------------------------
check("exclusive device already borrowed", errno.EBUSY, wr(dev(D, "nvme0", "borrow"), "host3"))
check("lend none while borrowed", errno.EBUSY, wr(dev(A, "nvme0", "lend"), "none"))
check("lend list without the borrower", errno.EBUSY, wr(dev(A, "nvme0", "lend"), "host2"))
# Issue 17: exclusive becomes shared while host1 keeps nvme0; back to
# exclusive is refused while it is borrowed.
must(dev(A, "nvme0", "mode"), "shared")
check("mode exclusive while borrowed", errno.EBUSY, wr(dev(A, "nvme0", "mode"), "exclusive"))
check("size already set", errno.EBUSY, wr(os.path.join(seg, "size"), "2M"))
check("rmdir of a segment mapped for a device", errno.EBUSY, oserr(os.rmdir, seg))
check("rmdir of a segment attached remotely", errno.EBUSY,
      oserr(os.rmdir, os.path.join(A, "nodes/host0/segments/t")))
check("available 0 while attached", errno.EBUSY,
      wr(os.path.join(A, "nodes/host0/segments/t/available"), "0"))
check("borrow twice", errno.EBUSY, wr(dev(C, "nvme1", "borrow"), "host2"))
tdetach = os.path.join(A, "nodes/host0/segments/t/detach")
check("detach a node that is not attached", errno.EINVAL, wr(tdetach, "host2"))
check("detach the owner", errno.EINVAL, wr(tdetach, "host0"))
check("detach malformed", errno.EINVAL, wr(tdetach, "host1 host2"))
check("detach an unknown node", errno.ENOENT, wr(tdetach, "host9"))
check("read detach", errno.EACCES,
      oserr(lambda: os.close(os.open(tdetach, os.O_RDONLY))))
check("segment exists", errno.EEXIST, oserr(os.mkdir, u))

# --- EHOSTDOWN ------------------------------------------------------------
check("lender down", errno.EHOSTDOWN, wr(dev(A, "acc1", "borrow"), "host0"))
# A borrower or segment owner that is down is now another node than the
# mount's own: refused before the core is asked (smartio(7) AUTHORIZATION).
check("borrow for another (down) node", errno.EPERM, wr(dev(A, "gpu0", "borrow"), "host4"))
check("segment of another (down) node", errno.EPERM,
      oserr(os.mkdir, os.path.join(A, "nodes/host4/segments/x")))

# --- ENOSPC ---------------------------------------------------------------
check("no requester entry left", errno.ENOSPC, wr(dev(C, "gpu0", "borrow"), "host2"))

# --- EROFS / EPERM --------------------------------------------------------
for f in ("node", "fdid", "bdf", "vendor", "class", "state", "resource",
          "dma_window", "msi", "stats"):
    check("write read-only %s" % f, errno.EROFS, wr(dev(A, "nvme0", f), "x\n"))
check("write node id", errno.EROFS, wr(os.path.join(A, "nodes/host0/id"), "7"))
check("write node state", errno.EROFS, wr(os.path.join(A, "nodes/host0/state"), "down"))
check("write adapter luts", errno.EROFS, wr(os.path.join(A, "nodes/host0/adapters/ntb0/luts"), "1 1"))
check("write attached", errno.EROFS, wr(os.path.join(seg, "attached"), "host1"))
check("write ioaddr", errno.EROFS, wr(os.path.join(seg, "dma/nvme0/ioaddr"), "0x0"))
check("write events", errno.EROFS, wr(os.path.join(A, "events"), "x"))
check("truncate read-only", errno.EROFS, oserr(os.truncate, dev(A, "nvme0", "node"), 0))
check("mkdir in a device", errno.EPERM, oserr(os.mkdir, dev(A, "nvme0", "foo")))
check("mkdir in a node", errno.EPERM, oserr(os.mkdir, os.path.join(A, "nodes/host0/foo")))
check("mkdir in dev", errno.EPERM, oserr(os.mkdir, os.path.join(A, "dev/nvme9")))
check("mkdir in the root", errno.EPERM, oserr(os.mkdir, os.path.join(A, "x")))
check("mkdir in peers by a node using neither device", errno.EACCES,
      oserr(os.mkdir, dev(D, "nvme0", "peers/nic0")))
check("mkdir in peers, unknown device", errno.ENXIO, oserr(os.mkdir, dev(A, "nvme0", "peers/nvme9")))
check("mkdir in peers, its lender down", errno.EHOSTDOWN,
      oserr(os.mkdir, dev(A, "nvme0", "peers/acc1")))
check("create a file", errno.EPERM,
      oserr(lambda: os.close(os.open(dev(A, "nvme0", "new"), os.O_CREAT | os.O_WRONLY, 0o644))))
check("mknod", errno.EPERM, oserr(os.mknod, os.path.join(A, "dev/fifo"), 0o600 | 0o10000))
check("unlink an attribute", errno.EPERM, oserr(os.unlink, dev(A, "nvme0", "lend")))
check("unlink a symlink", errno.EPERM, oserr(os.unlink, os.path.join(A, "self")))
check("symlink", errno.EPERM, oserr(os.symlink, "x", os.path.join(A, "dev/lnk")))
check("rename", errno.EPERM, oserr(os.rename, dev(A, "nvme0", "lend"), dev(A, "nvme0", "lend2")))
check("link", errno.EPERM, oserr(os.link, dev(A, "nvme0", "lend"), dev(A, "nvme0", "lend3")))
check("rmdir a device", errno.EPERM, oserr(os.rmdir, os.path.join(A, "dev/nvme0")))
check("rmdir a node", errno.EPERM, oserr(os.rmdir, os.path.join(A, "nodes/host4")))
check("chmod", errno.EPERM, oserr(os.chmod, dev(A, "nvme0", "lend"), 0o666))

# Still serving, and a valid command still works after all that.
must(tdetach, "host1\n")
if read(os.path.join(A, "nodes/host0/segments/t/attached")) != "":
    fail("detach did not take")
os.rmdir(os.path.join(A, "nodes/host0/segments/t"))     # no longer busy
must(dev(B, "nvme0", "return"), "host1\n")
if read(dev(A, "nvme0", "borrow")) != "":
    fail("return after the errors did not take")
passed("%d failing operations checked" % len(checked))
