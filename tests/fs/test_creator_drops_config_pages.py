#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The daemon that creates the simulated fabric does not keep the
configuration spaces it wrote in its memory: they are the simulated
devices' registers, kept by the fabric's shared state file, and a page
maps in again when that function's config is read (issue 33: 4 KiB a
function was half of smartiofs's RSS per device at 60x2048)."""
import os
import struct

from sfshelp import Cluster, fail, passed, read

DEVICES = 1024
CONFIG = 4096

c = Cluster()
topo = os.path.join(c.tmp, "cfg.conf")
with open(topo, "w") as f:
    f.write("node host0 id=0 ram=1G\n")
    for k in range(DEVICES):
        f.write("device host0 nic%d bdf=0000:%02x:%02x.%d vendor=0x8086 "
                "device=0x10d3 class=0x020000 config=%d bar0=16K\n"
                % (k, 1 + k // 256, (k // 8) % 32, k % 8, CONFIG))
M = c.mount("m0", "--topology", topo)
pid = c.procs[M].pid
state = "/dev/shm/smartio-%s/state" % c.fabric


def state_rss_kib():
    """Rss of the daemon's mapping of the fabric's state file."""
    rss, cur = 0, False
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and ":" in head[3]:
                cur = head[-1] == state
            elif cur and head[0] == "Rss:":
                rss += int(head[1])
    return rss


size = os.stat(state).st_size
config = DEVICES * CONFIG
before = state_rss_kib() * 1024
# Everything else the creator touches (registry, hardware tables) is far
# less than the config spaces here: mapped, they alone pass this bound.
if before > config // 2:
    fail("the creator maps %d of the state's %d bytes: the %d bytes of "
         "config spaces stayed in its memory" % (before, size, config))
with open(os.path.join(M, "dev/nic700/config"), "rb") as f:
    head = f.read(4)
if struct.unpack("<HH", head) != (0x8086, 0x10d3):
    fail("dev/nic700/config begins %s after its page was let go" % head.hex())
if read(os.path.join(M, "dev/nic700/vendor")) != "0x8086\n":
    fail("dev/nic700/vendor: %r" % read(os.path.join(M, "dev/nic700/vendor")))
after = state_rss_kib() * 1024
if after - before > 64 * 4096:
    fail("reading one function's config mapped %d bytes" % (after - before))
passed("the creator maps %d KiB of the %d KiB state (%d KiB of config "
       "spaces); one config read mapped %d KiB again"
       % (before // 1024, size // 1024, config // 1024, (after - before) // 1024))
