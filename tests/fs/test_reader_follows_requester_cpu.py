#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 33: the thread that reads smartiofs's requests runs on the CPU
of the process whose requests it serves (fs/follow_cpu.c), so that a walk
such as ls -lR hands each request over on one CPU instead of waking
another; and it goes back to the daemon's own CPUs for a sender it cannot
place."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
cpus = sorted(os.sched_getaffinity(0))
if len(cpus) < 2:
    print("SKIP: test_reader_follows_requester_cpu: one CPU only")
    sys.exit(77)
if os.environ.get("SMARTIOFS_WRAPPER"):
    print("SKIP: test_reader_follows_requester_cpu: under a wrapper")
    sys.exit(77)
c = Cluster()
M = c.mount("m0", "--topology", os.path.join(HERE, "listing.conf"),
            "--node", "host0")
pid = c.procs[M].pid


def allowed():
    """The CPUs the reading thread (the daemon's main thread) may run on."""
    with open("/proc/%d/task/%d/status" % (pid, pid)) as f:
        for l in f:
            if l.startswith("Cpus_allowed_list:"):
                return l.split(":", 1)[1].strip()
    fail("no Cpus_allowed_list for the daemon's thread")


vendor = os.path.join(M, "dev", "nic0", "vendor")
# Each sender a new process pinned to one CPU, one after the other, the
# pause longer than the daemon's 5 ms between two senders' look-ups.
for cpu in cpus[:2] + cpus[:1]:
    time.sleep(0.05)
    out = subprocess.run(["taskset", "-c", str(cpu), "cat", vendor],
                         capture_output=True, text=True)
    if out.returncode or out.stdout.strip() != "0x8086":
        fail("cat %s on CPU %d: rc %d, %r" % (vendor, cpu, out.returncode,
                                              out.stdout))
    if allowed() != str(cpu):
        fail("after a read from CPU %d the reading thread may run on %s"
             % (cpu, allowed()))
# A daemon in a pid namespace of its own, with its parent's /proc (where
# the senders' numbers are not its own): it follows nobody.
os.environ["SMARTIOFS_WRAPPER"] = "unshare -p -f"
M2 = c.mount("m1", "--topology", os.path.join(HERE, "listing.conf"),
             "--node", "host1")
with open("/proc/%d/task/%d/children" % (c.procs[M2].pid,
                                         c.procs[M2].pid)) as f:
    kids = f.read().split()
len(kids) == 1 or fail("unshare -p -f started %s, not one daemon" % kids)
pid = int(kids[0])
before = allowed()
for cpu in cpus[:2]:
    time.sleep(0.05)
    subprocess.run(["taskset", "-c", str(cpu), "cat",
                    os.path.join(M2, "dev", "nic1", "vendor")],
                   capture_output=True)
    if allowed() != before:
        fail("a daemon in another pid namespace pinned its thread to %s"
             % allowed())
passed("the reading thread followed CPUs %s; a daemon in another pid "
       "namespace stayed on %s" % (cpus[:2] + cpus[:1], before))
