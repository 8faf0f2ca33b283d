#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""SIGTERM, SIGINT and SIGHUP reach only the threads that serve FUSE.

libfuse's handler just marks the session as exited.  Had the simulator's
heartbeat, its device models or the watcher taken the signal, the FUSE
threads would sleep on in their reads: with a file still open after a lazy
unmount the kernel sends nothing more, and the daemon would never exit
(seen under valgrind, which hands a process's signals to any thread).  So
every helper thread blocks these signals, the main thread does not, and
the daemon leaves on SIGTERM with a file held across a lazy unmount."""
import os
import signal
import subprocess
import time

from sfshelp import Cluster, fail, passed

EXIT_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
HELPERS = ("sim-beat", "sim-models", "sfs-watch", "sfs-work")


def blocked(pid, tid):
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        for line in f:
            if line.startswith("SigBlk:"):
                mask = int(line.split()[1], 16)
    return [s for s in EXIT_SIGNALS if mask >> (s - 1) & 1]


c = Cluster()
if os.environ.get("SMARTIOFS_WRAPPER"):
    print("SKIP: the wrapper's own threads and masks would be inspected")
    raise SystemExit(77)
M = c.mount("m0")
p = c.procs[M]
threads = {}
for tid in os.listdir("/proc/%d/task" % p.pid):
    with open("/proc/%d/task/%s/comm" % (p.pid, tid)) as f:
        threads.setdefault(f.read().strip(), []).append(int(tid))

# The main thread blocks them while it starts the helpers (they inherit
# the mask) and lifts the block before its loop; the mount can appear in
# between, so give it a few seconds under load (seen in a distcheck run at
# a load average of 20).
end = time.time() + 5
while blocked(p.pid, p.pid) and time.time() < end:
    time.sleep(0.05)
if blocked(p.pid, p.pid):
    fail("the main thread blocks %s" % blocked(p.pid, p.pid))
seen = 0
for name in HELPERS:
    for tid in threads.get(name, []):
        miss = [s.name for s in EXIT_SIGNALS if s not in blocked(p.pid, tid)]
        if miss:
            fail("thread %s (%d) accepts %s" % (name, tid, ", ".join(miss)))
        seen += 1
if seen < 2:
    fail("helper threads not found: %s" % sorted(threads))

held = os.open(os.path.join(M, "self/state"), os.O_RDONLY)
subprocess.check_call(["fusermount3", "-u", "-z", M])
p.send_signal(signal.SIGTERM)
try:
    rc = p.wait(10)
except subprocess.TimeoutExpired:
    fail("no exit within 10 s of SIGTERM with a file held")
try:
    os.close(held)      # its FLUSH finds no daemon: ENOTCONN, still closed
except OSError:
    pass
if rc != 0:
    fail("exit status %d" % rc)
passed("%d helper threads block the exit signals; SIGTERM ended the daemon"
       % seen)
