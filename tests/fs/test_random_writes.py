#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""10,000 random invalid writes spread over every writable file of a
smartiofs mount (and some read-only ones).  Every write must fail with an
errno of the table in smartio(7), the daemon must keep serving, and the
state (every readable file) must be exactly what it was.

The generator is seeded (SEED in the environment, printed on failure), and
values that could be a valid command are never sent: an oracle rejects them.
"""
import errno
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, snapshot, write  # noqa: E402

SEED = int(os.environ.get("SEED", "20261122"))
COUNT = int(os.environ.get("COUNT", "10000"))
ALLOWED = {errno.EINVAL, errno.ENOENT, errno.ENXIO, errno.EACCES, errno.EBUSY,
           errno.EROFS, errno.EPERM, errno.EHOSTDOWN, errno.ENOSPC}

c = Cluster()
M = c.mount("m0")           # the embedded cluster: self is host0
NODES = sorted(os.listdir(os.path.join(M, "nodes")))
DEVS = sorted(os.listdir(os.path.join(M, "dev")))


def p(*parts):
    return os.path.join(M, *parts)


def must(path, value):
    rc = write(path, value)
    if rc:
        fail("setup %r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


# Some state worth keeping: a borrow, segments sized and not, a DMA mapping.
must(p("dev/nvme1/lend"), "all")
must(p("dev/nvme1/borrow"), "host0")
must(p("dev/nic1/lend"), "host1,host2")
must(p("dev/gpu0/mode"), "shared")
for owner, name, size in (("host0", "rs", None), ("host0", "rt", "1M"),
                          ("host1", "ru", "64k")):
    os.mkdir(p("nodes", owner, "segments", name))
    if size:
        must(p("nodes", owner, "segments", name, "size"), size)
must(p("nodes/host0/segments/rt/available"), "1")
os.mkdir(p("nodes/host0/segments/rt/dma/nvme0"))

SEGS = [p("nodes/host0/segments/rs"), p("nodes/host0/segments/rt"),
        p("nodes/host1/segments/ru")]
CFG = {}
LENDER = {}
for d in DEVS:
    CFG[d] = os.stat(p("dev", d, "config")).st_size
    LENDER[d] = open(p("dev", d, "node")).read().strip()

TARGETS = []
for d in DEVS:
    for f in ("lend", "borrow", "return", "reclaim", "mode", "config"):
        TARGETS.append(("dev", d, f))
for s in SEGS:
    for f in ("size", "available", "detach"):
        TARGETS.append(("seg", s, f))
READONLY = [p("dev", d, f) for d in DEVS for f in ("node", "state", "fdid", "resource")]
READONLY += [p("nodes", n, f) for n in NODES for f in ("id", "state")]
READONLY += [os.path.join(s, "attached") for s in SEGS]

WORDS = NODES + ["none", "all", "exclusive", "shared", "0", "1", "host", "HOST0",
                 "host9", "hosts", "nvme0", "1M", "64k", "0x10", "-1", "yes",
                 "ALL", "None", "Shared", "1K", "2G", "10T", "", "\0"]
SEPS = [",", " ", "\n", "\t", ",,", "  ", "\r", ", ", "\n\n", ";", ":", "\v"]


def junk(rng):
    kind = rng.randrange(9)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    if kind == 1:
        return "".join(rng.choice(" \t\n,.-_0123456789abcdefghostkMG\0") for _ in range(rng.randrange(1, 24))).encode()
    if kind == 2:   # words joined by separators
        n = rng.randrange(1, 5)
        s = rng.choice(WORDS)
        for _ in range(n - 1):
            s += rng.choice(SEPS) + rng.choice(WORDS)
        return (s + rng.choice(["", "\n", "\n\n", " ", "\t"])).encode()
    if kind == 3:   # a word with blanks around it
        return (rng.choice(["", " ", "\t", "\n"]) + rng.choice(WORDS) +
                rng.choice(["", " ", "\t", "\n\n", "\r\n", " \n"])).encode()
    if kind == 4:   # numbers and suffixes
        num = rng.choice(["0", "00", "-5", "+5", "1.5", "18446744073709551616",
                          "17179869184", str(rng.randrange(10 ** 6)), "0x1", ""])
        return (num + rng.choice(["", "k", "K", "M", "G", "T", "m", "g", "KB",
                                  "X", " ", "\n", "kk"])).encode()
    if kind == 5:   # long values
        return bytes([rng.choice(b"ah0 ,\n")]) * rng.randrange(4097, 9000)
    if kind == 6:   # a node name mangled
        w = rng.choice(NODES)
        i = rng.randrange(len(w) + 1)
        return (w[:i] + rng.choice(["", "x", "0", " ", "-", "\0"]) + w[i + 1:]).encode()
    if kind == 7:
        return rng.choice(WORDS).upper().encode() + b"\n"
    return rng.choice(WORDS).encode() * rng.randrange(2, 4)


def maybe_valid(kind, f, data):
    """True when data could be a valid command for file f (never sent).
    An empty write never reaches the daemon: it is not sent either."""
    if not data:
        return True
    if b"\0" in data:
        return False
    try:
        s = data.decode()
    except UnicodeDecodeError:
        return False
    if s.endswith("\n"):
        s = s[:-1]
    if f == "lend":
        if s in ("none", "all"):
            return True
        toks = re.split(r"[, \n]", s)
        return all(t in NODES for t in toks)
    if f in ("borrow", "return", "detach"):
        return s in NODES
    if f == "reclaim":
        return s == "1"
    if f == "mode":
        return s in ("exclusive", "shared")
    if f == "available":
        return s in ("0", "1")
    if f == "size":
        # smartio.conf(5)'s size grammar: decimal or 0x hex, one suffix.
        return re.fullmatch(r"(?:[0-9]+|0[xX][0-9a-fA-F]+)[kKMG]?", s) is not None
    return True


def one(rng):
    """Returns (description, errno or 0)."""
    r = rng.random()
    if r < 0.05:
        path = rng.choice(READONLY)
        return ("%s <- x" % path, write(path, rng.choice([b"x", b"1\n", b"up"])))
    kind, obj, f = rng.choice(TARGETS)
    path = p("dev", obj, f) if kind == "dev" else os.path.join(obj, f)
    if f == "config":
        size = CFG[obj]
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
        if LENDER[obj] == "host0" or obj == "nvme1":
            off = rng.randrange(size - len(data) + 1, size + 64)   # past the end
        else:
            off = rng.randrange(0, size + 64)                      # not ours: EACCES
        return ("%s <- %r @%d" % (path, data, off), write(path, data, off))
    if rng.random() < 0.08:   # a valid value at a wrong offset
        data = rng.choice([b"all\n", b"host1\n", b"1\n", b"shared\n", b"4k\n"])
        off = rng.randrange(1, 8)
        return ("%s <- %r @%d" % (path, data, off), write(path, data, off))
    for _ in range(100):
        data = junk(rng)
        if not maybe_valid(kind, f, data):
            break
    else:
        return ("skipped", errno.EINVAL)
    return ("%s <- %r" % (path, data[:80]), write(path, data))


rng = random.Random(SEED)
before = snapshot(M, ("stats",))
errs = {}
for i in range(COUNT):
    what, rc = one(rng)
    if rc == 0:
        fail("seed %d, write %d: %s succeeded" % (SEED, i, what))
    if rc not in ALLOWED:
        fail("seed %d, write %d: %s: unexpected %s" % (SEED, i, what,
                                                    errno.errorcode.get(rc, rc)))
    errs[rc] = errs.get(rc, 0) + 1
    if (i + 1) % 2000 == 0 or i + 1 == COUNT:
        if not c.alive(M):
            fail("seed %d: the daemon died by write %d" % (SEED, i))
        now = snapshot(M, ("stats",))
        if now != before:
            for k in sorted(set(now) | set(before)):
                if now.get(k) != before.get(k):
                    print("  %s: %r -> %r" % (k, before.get(k), now.get(k)))
            fail("seed %d: state changed by write %d" % (SEED, i))

# Still serving: a valid command works.
must(p("dev/nvme1/return"), "host0")
summary = " ".join("%s=%d" % (errno.errorcode[e], n) for e, n in sorted(errs.items()))
passed("seed %d, %d writes (%s)" % (SEED, COUNT, summary))
