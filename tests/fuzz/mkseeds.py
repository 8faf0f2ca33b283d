#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes the seed corpora of the fuzz harnesses (run once; the files are
committed).  corpus-proto/: one well-formed message per command with the
attributes proto.h lists for it, plus a few framing edge cases.
corpus-peer/: messages from an NTB peer as fuzz_peer.c takes them (a
4-byte prefix: receiving node, sending node, flags, 0): the node-to-node
commands honest and with forged origins, forwarded user commands, a
segment table.
corpus-topology/: the shipped default cluster, the man page's examples and
small variants that reach every statement and option.

usage: mkseeds.py DIR   (DIR = tests/fuzz)
"""
import os
import struct
import sys

U32, U64, STR, BIN, BAR = range(5)
A = dict(SRC=(1, U32), DST=(2, U32), NODE=(3, U32), PEER=(4, U32), DEV=(5, U32),
         MODE=(6, U32), ERRNO=(7, U32), ADDR=(8, U64), SIZE=(9, U64),
         IOVA=(10, U64), OFFSET=(11, U64), MASK=(12, U64), FLAGS=(13, U32),
         RID=(14, U32), SEQ=(15, U64), TIME=(16, U64), KIND=(17, U32),
         INDEX=(18, U32), NAME=(19, STR), DATA=(20, BIN), BAR=(21, BAR))
CMDS = [  # (command number, attributes) in the order of enum sio_cmd
    (1, "DEV MASK"), (2, "DEV NODE"), (3, "DEV NODE"), (4, "DEV NODE"),
    (5, "DEV MODE"), (6, "NODE NAME"), (7, "NODE NAME SIZE"), (8, "NODE NAME"),
    (9, "NODE NAME FLAGS"), (10, "NODE NAME PEER"), (11, "NODE NAME PEER"),
    (12, "NODE NAME DEV"), (13, "NODE NAME DEV"), (14, "DEV NODE OFFSET SIZE"),
    (15, "DEV NODE OFFSET DATA"), (16, "DEV NODE IOVA SIZE"),
    (17, "DEV NODE BAR BAR RID"), (18, "DEV NODE ERRNO"),
    (19, "DEV NODE IOVA SIZE"), (20, "DEV NODE IOVA SIZE"), (21, "DEV NODE"),
    (22, "DEV NODE"), (23, "NODE SEQ TIME"), (24, "SEQ TIME KIND NAME DATA"),
    (25, "ERRNO ADDR"),
]


def attr(t, payload, nested=False):
    n = 4 + len(payload)
    return struct.pack("<HH", n, t | (0x8000 if nested else 0)) + payload + \
        b"\0" * ((4 - n % 4) % 4)


def value(name, i):
    t, kind = A[name]
    if kind == U32:
        return attr(t, struct.pack("<I", (i * 7 + t) & 0xffffffff))
    if kind == U64:
        return attr(t, struct.pack("<Q", 0x100000000 * i + 0x1000))
    if kind == STR:
        return attr(t, b"seg%d\0" % i)
    if kind == BIN:
        return attr(t, bytes(range(i % 8 + 1)))
    inner = attr(18, struct.pack("<I", i % 6)) + attr(8, struct.pack("<Q", 0xfe000000)) + \
        attr(9, struct.pack("<Q", 16384)) + attr(13, struct.pack("<I", 1))
    return attr(t, inner, nested=True)


def message(cmd, attrs, seq=1, flags=1):
    body = bytes([cmd, 1, 0, 0]) + attrs
    return struct.pack("<IHHII", 16 + len(body), 0x10, flags, seq, 0) + body


def proto(d):
    os.makedirs(d, exist_ok=True)
    for i, (cmd, names) in enumerate(CMDS):
        attrs = b"".join(value(n, i) for n in ["SRC", "DST"] + names.split())
        with open(os.path.join(d, "cmd%02d" % cmd), "wb") as f:
            f.write(message(cmd, attrs, seq=i + 1))
    # The last attribute without its padding, which netlink allows.
    m = message(6, value("NODE", 0) + attr(19, b"ab\0")[:7])
    edge = {"unpadded-tail": m, "header-only": message(25, b""),
            "reply-errno": message(25, value("ERRNO", 3), flags=2)}
    for name, data in edge.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def u32(name, v):
    return attr(A[name][0], struct.pack("<I", v))


def u64(name, v):
    return attr(A[name][0], struct.pack("<Q", v))


def name(v):
    return attr(A["NAME"][0], v.encode() + b"\0")


def seg_record(nm, gen, size, off):
    inner = name(nm) + u32("INDEX", gen) + u64("SIZE", size) + \
        u64("ADDR", 0) + u64("OFFSET", off) + u32("FLAGS", 1) + u64("MASK", 0)
    return attr(22, inner, nested=True)


def peer(d):
    """Built-in cluster: host<i> has id i; nvme0 (host0) is fdid 0, lent to
    and borrowed by host1 when the harness starts; host0 owns seg0."""
    os.makedirs(d, exist_ok=True)
    nvme0 = 0
    seeds = {
        # (self, from, separate): message
        "heartbeat": (0, 1, 0, 23, u32("NODE", 1) + u64("SEQ", 1 << 40) +
                      u64("TIME", 1) + u32("SRC", 1) + u32("DST", 0)),
        "heartbeat-forged": (0, 1, 0, 23, u32("NODE", 2) + u64("SEQ", 9) +
                             u64("TIME", 1)),
        "borrow-req-forged": (0, 1, 0, 16, u32("DEV", nvme0) + u32("NODE", 2) +
                              u64("IOVA", 1 << 32) + u64("SIZE", 1 << 26)),
        "map-dma-window-huge": (0, 1, 0, 19, u32("DEV", nvme0) + u32("NODE", 1) +
                                u64("IOVA", 1 << 32) + u64("SIZE", 1 << 31)),
        "map-msi-window": (0, 1, 0, 20, u32("DEV", nvme0) + u32("NODE", 1) +
                           u64("IOVA", 0xfee00000) + u64("SIZE", 0x100000)),
        "return-req": (0, 1, 0, 21, u32("DEV", nvme0) + u32("NODE", 1)),
        "reclaim-req-not-lender": (1, 2, 0, 22, u32("DEV", nvme0) + u32("NODE", 1)),
        "reclaim-req": (1, 0, 0, 22, u32("DEV", nvme0) + u32("NODE", 1)),
        "event": (0, 1, 0, 24, u64("SEQ", 1) + u64("TIME", 5) + u32("KIND", 3) +
                  attr(20, b"dev/nvme0 node=host1") + u32("SRC", 1)),
        "seg-connect": (0, 2, 0, 25, u32("NODE", 0) + name("seg0") + u32("PEER", 2)),
        "seg-connect-forged": (0, 2, 0, 25, u32("NODE", 0) + name("seg0") +
                               u32("PEER", 1)),
        "seg-disconnect": (0, 1, 0, 26, u32("NODE", 0) + name("seg0") + u32("PEER", 1)),
        "seg-create-remote": (0, 1, 1, 6, u32("NODE", 0) + name("theirs")),
        "seg-size-not-theirs": (0, 1, 1, 7, u32("NODE", 0) + name("seg0") +
                                u64("SIZE", 4096)),
        "seg-destroy-not-theirs": (0, 1, 1, 8, u32("NODE", 0) + name("seg0")),
        "seg-create-relayed": (0, 1, 0, 6, u32("NODE", 2) + name("relay")),
        "lend-from-peer": (0, 1, 1, 1, u32("DEV", nvme0) + u32("FLAGS", 0) +
                           u64("MASK", 0)),
        "reclaim-as-lender": (0, 1, 1, 4, u32("DEV", nvme0) + u32("NODE", 0)),
        "cfg-read": (0, 1, 1, 14, u32("DEV", nvme0) + u32("NODE", 1) +
                     u64("OFFSET", 0) + u64("SIZE", 64)),
        "peer-expose": (0, 1, 0, 31, u32("DEV", nvme0) + u32("PEER", 1) +
                        u32("RID", 0x100) + u32("INDEX", 0)),
        "seg-table": (0, 1, 0, 35, u32("NODE", 1) + seg_record("t0", 1, 8192, 0x10000) +
                      seg_record("t1", 2, 0, 0) + u32("SRC", 1)),
        "seg-table-ragged": (0, 1, 0, 35, u32("NODE", 1) +
                             seg_record("t0", 1, 4097, 0x10000)),
        "seg-table-forged": (0, 1, 0, 35, u32("NODE", 2) + seg_record("t0", 1, 8192, 0)),
        "seg-table-get": (0, 1, 0, 36, u32("NODE", 1)),
    }
    for nm, (to, frm, sep, cmd, attrs) in seeds.items():
        with open(os.path.join(d, nm), "wb") as f:
            f.write(bytes([to, (frm - to - 1) % 4, sep, 0]) + message(cmd, attrs))


def topology(d, top):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(top, "contrib/topology/default.conf")) as f:
        seeds = {"default": f.read()}
    seeds["one-node"] = "node solo id=7 ram=2M\ndevice solo nvme0 bdf=0000:00:00.0 " \
        "vendor=1 device=2 class=3\n"
    seeds["man-fabric"] = """fabric window=256M luts=64 requesters=16
node a id=10 ram=2G
node b id=11
node c id=12
adapter a ntb0 peers=b
adapter a ntb1 peers=c window=1G
adapter b ntb0 peers=a
adapter c ntb0 peers=a
device b nvme0 bdf=0000:03:00.0 vendor=0x1b36 device=0x0010 class=0x010802 model=nvme bar0=16K,64
"""
    seeds["options"] = """# every option once
fabric window=1G luts=4096 requesters=64 reserved=63 # trailing comment
node h0 id=0x0 ram=0x100000\r
node h-1 id=4294967295 ram=1G
adapter h0 n_0 peers=all window=64M luts=16 requesters=1 reserved=0
adapter h-1 ntb0 peers=h0
device h0 gpu12 bdf=ffff:ff:1f.7 vendor=0xFFFF device=0 class=0xffffff subsystem_vendor=1 subsystem_device=0x2 revision=255 config=256 model=dma bar0=4k bar1=1024G,prefetch,64 bar3=16M,64 bar5=4K,prefetch
device h-1 acc0 bdf=0000:00:00.0 vendor=1 device=1 class=1 model=generic
\tdevice\th-1\tnic3\tbdf=0000:01:02.3 vendor=2 device=2 class=2\f\v
"""
    for name, text in seeds.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    proto(os.path.join(here, "corpus-proto"))
    peer(os.path.join(here, "corpus-peer"))
    topology(os.path.join(here, "corpus-topology"),
             os.path.dirname(os.path.dirname(os.path.abspath(here))))
