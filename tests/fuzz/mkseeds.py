#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz harnesses (run once; the files are
committed).  corpus-proto/: one well-formed message per command with the
attributes proto.h lists for it, plus a few framing edge cases.
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
    topology(os.path.join(here, "corpus-topology"),
             os.path.dirname(os.path.dirname(os.path.abspath(here))))
