#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A write to attach from a thread that does not lead its process (a
worker thread of nbdkit, a thread pool) attaches the segment, held by that
process until it exits.  Linux 6.9 and later refuse pidfd_open of such a
thread with ENOENT rather than EINVAL, which the daemon took for the
writer being gone and returned to it."""
import os
import subprocess
import sys
import time

from sfshelp import Cluster, fail, passed, write

c = Cluster()
A = c.mount("m0", "--node", "host0")
B = c.mount("m1", "--node", "host1")
seg = os.path.join(B, "self/segments/shared")
os.mkdir(seg)
if write(os.path.join(seg, "size"), "64k") or \
        write(os.path.join(seg, "available"), "1"):
    fail("cannot export host1's segment")
attach = os.path.join(A, "nodes/host1/segments/shared/attach")
attached = os.path.join(seg, "attached")

child = subprocess.Popen([sys.executable, "-c", """
import os, sys, threading
out = []
def worker():
    try:
        fd = os.open(sys.argv[1], os.O_WRONLY)
        os.write(fd, b"host0")
        os.close(fd)
        out.append("attached")
    except OSError as e:
        out.append("errno %d" % e.errno)
t = threading.Thread(target=worker)
t.start()
t.join()
print(out[0], flush=True)
sys.stdin.read()            # hold it until told to go
""", attach], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
said = child.stdout.readline().strip()
if said != "attached":
    child.kill()
    fail("a write to attach from a worker thread: %s" % said)
if open(attached).read() != "host0\n":
    child.kill()
    fail("host0 not attached while the writer's process lives")
child.stdin.close()
child.wait()
deadline = time.time() + 5
while open(attached).read() and time.time() < deadline:
    time.sleep(0.05)
if open(attached).read():
    fail("still attached after the writer's process exited")
passed("attached from a worker thread, detached when its process exited")
