#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes a smartio.conf(5) cluster for scale benchmarks to stdout.

usage: gentopo.py [--vfs] NODES FUNCTIONS_PER_NODE

The same cluster as sio_topo_generate() (lib/sim/topology_parse.h) builds in
memory: nodes gen0.. (ids 0.., 1G RAM), one adapter ntb0 each on a common
switch, and FUNCTIONS_PER_NODE generic NIC functions per node named nic0,
nic1, ... cluster-wide, 256 functions a bus.  It is text so that smartiofs
can be started on it with --topology, like any operator's file.

With --vfs the functions are SR-IOV ones (MPIOV section III): a physical
function at 00.0 of each bus with 255 virtual functions filling the rest
of it (nic<k> and nic<k>v0 .. nic<k>v254), FUNCTIONS_PER_NODE a multiple
of 256; the VFs exist once each PF's sriov_numvfs enables them.
"""
import sys


def generate_vfs(nodes, per_node, out):
    k = 0
    for n in range(nodes):
        for bus in range(per_node // 256):
            out.write("device gen%d nic%d bdf=0000:%02x:00.0 vendor=0x8086 "
                      "device=0x10fb class=0x020000 config=4096 bar0=16K "
                      "sriov=255 vfdevice=0x10ed vfbar0=16K\n" % (n, k, 1 + bus))
            k += 1


def generate(nodes, per_node, out, vfs=False):
    if nodes < 1 or nodes > 64 or per_node > 65280:
        raise ValueError("1..64 nodes and at most 65280 functions a node")
    if vfs and per_node % 256:
        raise ValueError("--vfs: functions a node in whole buses of 256")
    for n in range(nodes):
        out.write("node gen%d id=%d ram=1G\n" % (n, n))
    if nodes > 1:
        for n in range(nodes):
            out.write("adapter gen%d ntb0 peers=all window=4G luts=256 "
                      "requesters=32 reserved=2\n" % n)
    if vfs:
        generate_vfs(nodes, per_node, out)
        return
    k = 0
    for n in range(nodes):
        for f in range(per_node):
            out.write("device gen%d nic%d bdf=0000:%02x:%02x.%d vendor=0x8086 "
                      "device=0x10d3 class=0x020000 config=256 bar0=16K\n"
                      % (n, k, 1 + f // 256, (f // 8) % 32, f % 8))
            k += 1


if __name__ == "__main__":
    args = sys.argv[1:]
    vfs = args[:1] == ["--vfs"]
    if vfs:
        args = args[1:]
    if len(args) != 2:
        sys.exit("usage: gentopo.py [--vfs] NODES FUNCTIONS_PER_NODE")
    generate(int(args[0]), int(args[1]), sys.stdout, vfs)
