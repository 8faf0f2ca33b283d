#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The formats of smartio(7): every attribute file of the built-in cluster
reads as documented (one value per line, newline-terminated, hex ids, sysfs
resource lines), the modes are 0444 / 0644 / 0200 and 0755, values written
read back, config behaves like a sysfs config file, and `ls -lR` of the
whole tree works with stable inode numbers.
"""
import errno
import os
import re
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, read, write  # noqa: E402

c = Cluster()
M = c.mount("m0")
P = lambda *a: os.path.join(M, *a)  # noqa: E731


def must(path, value):
    rc = write(path, value)
    if rc:
        fail("%r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


def expect(path, regex):
    v = read(P(path))
    if not re.fullmatch(regex, v, re.S):
        fail("%s reads %r, want /%s/" % (path, v, regex))
    return v


HEX4 = r"0x[0-9a-f]{4}\n"
expect("nodes/host2/id", r"2\n")
expect("nodes/host2/state", r"up\n")
expect("nodes/host0/adapters/ntb0/link", r"up\n")
expect("nodes/host0/adapters/ntb0/peers", r"host1\nhost2\nhost3\n")
expect("nodes/host0/adapters/ntb0/luts", r"0 256\n")
expect("nodes/host0/adapters/ntb0/requesters", r"2 32\n")
expect("nodes/host0/adapters/ntb0/requesters_in", r"2 32\n")
expect("nodes/host0/adapters/ntb0/window", r"4294967296\n")
for d in ("nvme0", "gpu0", "nic1"):
    expect("dev/%s/fdid" % d, r"0x[0-9a-f]{8}\n")
    for f in ("vendor", "device", "subsystem_vendor", "subsystem_device"):
        expect("dev/%s/%s" % (d, f), HEX4)
    expect("dev/%s/class" % d, r"0x[0-9a-f]{6}\n")
    expect("dev/%s/revision" % d, r"0x[0-9a-f]{2}\n")
    expect("dev/%s/bdf" % d, r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\n")
    expect("dev/%s/resource" % d, r"(0x[0-9a-f]{16} 0x[0-9a-f]{16} 0x[0-9a-f]{16}\n){6}")
    expect("dev/%s/stats" % d, r"(borrows|returns|reclaims|denied|cfg_reads|cfg_writes|"
           r"dma_ops|dma_faults|msi|driver_errors) \d+\n(\w+ \d+\n){9}")
expect("dev/nvme0/vendor", r"0x1b36\n")
expect("dev/nvme0/class", r"0x010802\n")
expect("dev/nvme0/node", r"host0\n")
expect("dev/gpu0/node", r"host1\n")
res = read(P("dev/gpu0/resource")).splitlines()
start, end, flags = (int(x, 16) for x in res[1].split())
if end - start + 1 != 256 << 20 or not flags & 0x2000 or not flags & 0x100000:
    fail("gpu0 bar1 resource line %r" % res[1])
if res[3] != "0x%016x 0x%016x 0x%016x" % (0, 0, 0):
    fail("absent BAR line %r" % res[3])

# Values written read back.
expect("dev/nvme0/lend", r"none\n")
expect("dev/nvme0/state", r"local\n")
must(P("dev/nvme0/lend"), "host3 host1\n")
expect("dev/nvme0/lend", r"host1\nhost3\n")
expect("dev/nvme0/state", r"available\n")
must(P("dev/nvme0/lend"), "host2,host1")
expect("dev/nvme0/lend", r"host1\nhost2\n")
must(P("dev/nvme0/lend"), "host1\nhost3\n")
expect("dev/nvme0/lend", r"host1\nhost3\n")
must(P("dev/nvme0/mode"), "shared")
expect("dev/nvme0/mode", r"shared\n")
must(P("dev/nvme0/borrow"), "host1")
must(P("dev/nvme0/borrow"), "host3")
expect("dev/nvme0/borrow", r"host1\nhost3\n")
expect("dev/nvme0/state", r"borrowed\n")
expect("dev/nvme0/dma_window", r"host1 0x[0-9a-f]+ \d+\nhost3 0x[0-9a-f]+ \d+\n")
if os.listdir(P("nodes/host3/borrowed")) != ["nvme0"]:
    fail("host3 borrowed/: %r" % os.listdir(P("nodes/host3/borrowed")))
must(P("dev/nvme0/reclaim"), "1\n")                 # self (host0) is the lender
expect("dev/nvme0/borrow", r"")
expect("dev/nvme0/stats", r"borrows 2\nreturns 0\nreclaims 2\n.*")
must(P("dev/nvme0/mode"), "exclusive\n")
must(P("dev/nvme0/lend"), "none")
expect("dev/nvme0/state", r"local\n")

# config: binary, any offset, reads past the end return nothing.
cfg = P("dev/nvme0/config")
if os.stat(cfg).st_size != 4096 or os.stat(P("dev/nic0/config")).st_size != 256:
    fail("config sizes %d %d" % (os.stat(cfg).st_size, os.stat(P("dev/nic0/config")).st_size))
with open(cfg, "rb") as f:
    data = f.read()
if len(data) != 4096 or data[0:2] != b"\x36\x1b":
    fail("config read %d bytes, vendor %r" % (len(data), data[0:2]))
fd = os.open(cfg, os.O_RDWR)
if os.pread(fd, 16, 4096) != b"" or os.pread(fd, 16, 1 << 20) != b"":
    fail("config read past the end returned bytes")
if len(os.pread(fd, 64, 4090)) != 6:
    fail("config read across the end")
# Interrupt Line (0x3c) is read-write; 0x300 belongs to no register, so
# the write is taken and changes nothing (smartio(7)).
if os.pwrite(fd, b"\xa5", 0x3c) != 1:
    fail("config pwrite")
if os.pread(fd, 1, 0x3c) != b"\xa5":
    fail("config write not read back")
before = os.pread(fd, 4, 0x300)
if os.pwrite(fd, b"\xa5\x5a\x01\x02", 0x300) != 4:
    fail("config pwrite")
if os.pread(fd, 4, 0x300) != before:
    fail("config bytes outside any register changed")
os.close(fd)

# Modes.
want = {"lend": 0o644, "borrow": 0o644, "mode": 0o644, "config": 0o644,
        "return": 0o200, "reclaim": 0o200, "node": 0o444, "state": 0o444,
        "stats": 0o444}
for f, m in want.items():
    st = os.stat(P("dev/nvme0", f))
    if not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != m:
        fail("dev/nvme0/%s mode %o, want %o" % (f, st.st_mode, m))
for d in ("", "nodes", "dev/nvme0", "dev/nvme0/irq", "dev/nvme0/peers", "seg"):
    st = os.stat(P(d))
    if not stat.S_ISDIR(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o755:
        fail("%s/ mode %o" % (d, st.st_mode))
if os.readlink(P("self")) != "nodes/host0":
    fail("self -> %s" % os.readlink(P("self")))
if os.readlink(P("nodes/host1/devices/gpu0")) != "../../../dev/gpu0":
    fail("devices link")
if sorted(os.listdir(P("nodes/host1/devices"))) != ["gpu0", "nvme1"]:
    fail("host1 devices/: %r" % os.listdir(P("nodes/host1/devices")))
if "bar0" not in os.listdir(P("dev/nvme0")) or "bar0" in os.listdir(P("dev/nvme1")):
    fail("bar0 must show on the lender's mount only")
if "bar1" in os.listdir(P("dev/gpu0")):
    fail("gpu0 bar1 on a node that does not borrow it")

# ls -lR of everything, twice: same inode numbers.
def inodes():
    out = subprocess.run(["ls", "-lRi", M], capture_output=True, text=True)
    if out.returncode:
        fail("ls -lR: %s" % out.stderr)
    lines, d = [], ""
    for l in out.stdout.splitlines():
        if l.endswith(":") and l.startswith("/"):
            d = l[:-1]
        elif l.strip()[:1].isdigit():
            f = l.split()
            if "->" in f:
                f = f[:f.index("->")]
            lines.append((f[0], d + "/" + f[-1]))
    return lines
a = inodes()
b = inodes()
if a != b or len(a) < 200:
    fail("ls -lRi differs between runs or is short (%d lines)" % len(a))
if len(set(x[0] for x in a)) != len(a):
    fail("duplicate inode numbers in ls -lRi")
passed("%d entries" % len(a))
