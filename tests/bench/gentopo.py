#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes a smartio.conf(5) cluster for scale benchmarks to stdout.

usage: gentopo.py NODES FUNCTIONS_PER_NODE

The same cluster as sio_topo_generate() (lib/sim/topology_parse.h) builds in
memory: nodes gen0.. (ids 0.., 1G RAM), one adapter ntb0 each on a common
switch, and FUNCTIONS_PER_NODE generic NIC functions per node named nic0,
nic1, ... cluster-wide, 256 functions a bus.  It is text so that smartiofs
can be started on it with --topology, like any operator's file.
"""
import sys


def generate(nodes, per_node, out):
    if nodes < 1 or nodes > 64 or per_node > 65280:
        raise ValueError("1..64 nodes and at most 65280 functions a node")
    for n in range(nodes):
        out.write("node gen%d id=%d ram=1G\n" % (n, n))
    if nodes > 1:
        for n in range(nodes):
            out.write("adapter gen%d ntb0 peers=all window=4G luts=256 "
                      "requesters=32 reserved=2\n" % n)
    k = 0
    for n in range(nodes):
        for f in range(per_node):
            out.write("device gen%d nic%d bdf=0000:%02x:%02x.%d vendor=0x8086 "
                      "device=0x10d3 class=0x020000 config=256 bar0=16K\n"
                      % (n, k, 1 + f // 256, (f // 8) % 32, f % 8))
            k += 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: gentopo.py NODES FUNCTIONS_PER_NODE")
    generate(int(sys.argv[1]), int(sys.argv[2]), sys.stdout)
