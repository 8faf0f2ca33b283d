#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""SIGKILL of smartiofs itself in the middle of borrow, return and segment
operations made through its mount, repeated.

host0 is served by an observer daemon; host1 by a victim daemon that a
driver process keeps busy through host1's mount (borrowing host0's nic0,
attaching host0's segment "keep", creating, sizing and removing segments,
returning).  After a random delay the victim is killed with SIGKILL.  The
observer's mount must then show host1 down within 3 s, every adapter's LUT
and requester counts back where they started, nothing borrowed, and "keep"
with its bytes and no attachment left.  A new daemon then serves host1
again for the next round.

usage: kill_smartiofs.py [ROUNDS]   (BUILDDIR names the build tree)
"""
import mmap
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fs"))
from sfshelp import Cluster, fail, passed, read, write  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
if os.geteuid() != 0:
    print("SKIP: kill_smartiofs: needs root (fusectl, to end a stuck mount)")
    sys.exit(77)
c = Cluster()
A = c.mount("m0", "--node", "host0")


def must(path, value):
    rc = write(path, value)
    if rc:
        fail("%r > %s: errno %d" % (value, path, rc))


def usage():
    out = {}
    for n in sorted(os.listdir(os.path.join(A, "nodes"))):
        ad = os.path.join(A, "nodes", n, "adapters")
        for a in sorted(os.listdir(ad)):
            out[n + "/" + a] = (read(os.path.join(ad, a, "luts")).split()[0],
                                read(os.path.join(ad, a, "requesters")).split()[0])
    return out


def driver(m):
    """Child: operations through host1's mount until its daemon dies."""
    i = 0
    try:
        while True:
            seg = os.path.join(m, "self/segments/s%d" % (i % 3))
            write(os.path.join(m, "dev/nic0/borrow"), "host1")
            try:
                os.stat(os.path.join(m, "nodes/host0/segments/keep/mem"))
                os.mkdir(seg)
                write(os.path.join(seg, "size"), "64K")
                write(os.path.join(seg, "available"), "1")
                os.rmdir(seg)
            except FileExistsError:
                os.rmdir(seg)
            except OSError as e:
                if not os.path.ismount(m) or e.errno == 107:  # ENOTCONN
                    break
            write(os.path.join(m, "dev/nic0/return"), "host1")
            i += 1
    finally:
        os._exit(0)


must(os.path.join(A, "dev/nic0/lend"), "all")
keep = os.path.join(A, "self/segments/keep")
os.mkdir(keep)
must(os.path.join(keep, "size"), "256K")
must(os.path.join(keep, "available"), "1")
fd = os.open(os.path.join(keep, "mem"), os.O_RDWR)
mem = mmap.mmap(fd, 256 << 10)
os.close(fd)
pat = os.urandom(256 << 10)
mem[:] = pat
base = usage()
worst = 0.0
hung = 0


def abort_connection(mnt):
    """Aborts the FUSE connection of mnt (fusectl), which nothing else
    can end once its daemon is stuck; from /proc, as stat(mnt) would hang."""
    conn = "/sys/fs/fuse/connections"
    if not os.listdir(conn):
        subprocess.call(["mount", "-t", "fusectl", "none", conn])
    with open("/proc/self/mountinfo") as f:
        for l in f:
            fields = l.split()
            if fields[4] == mnt:
                with open(os.path.join(conn, fields[2].split(":")[1], "abort"), "w") as a:
                    a.write("1")


for r in range(ROUNDS):
    m1 = c.mount("m1-%d" % r, "--node", "host1")
    victim = c.procs[m1]
    pid = os.fork()
    if pid == 0:
        driver(m1)
    time.sleep(random.uniform(0.02, 0.3))
    t0 = time.time()
    victim.send_signal(signal.SIGKILL)
    while read(os.path.join(A, "nodes/host1/state")) != "down\n":
        if time.time() - t0 > 10:
            break
        time.sleep(0.005)
    took = time.time() - t0
    worst = max(worst, took)
    os.kill(pid, signal.SIGKILL)
    try:
        victim.wait(5)
    except subprocess.TimeoutExpired:
        # The killed daemon cannot finish dying: see the report below.
        hung += 1
        abort_connection(m1)
        victim.wait(10)
    os.waitpid(pid, 0)
    subprocess.call(["fusermount3", "-u", "-z", m1])
    if took > 3:
        fail("round %d: host1 down after %.2f s" % (r, took))
    if usage() != base:
        fail("round %d: LUT/requester entries %r, were %r" % (r, usage(), base))
    for d in os.listdir(os.path.join(A, "dev")):
        if read(os.path.join(A, "dev", d, "borrow")):
            fail("round %d: %s still borrowed" % (r, d))
    if read(os.path.join(keep, "attached")):
        fail("round %d: keep still attached by %r" % (r, read(os.path.join(keep, "attached"))))
    if mem[:] != pat:
        fail("round %d: keep's bytes changed" % r)
if hung:
    fail("%d of %d SIGKILLed smartiofs could not exit within 5 s: a thread "
         "stays in D state in fuse_reverse_inval_entry (the watcher "
         "invalidating an entry of a directory whose mkdir/rmdir by a client "
         "waits for the killed daemon's answer) and its reaper did not abort "
         "the FUSE connection" % (hung, ROUNDS))
c.log.flush()
with open(c.log.name, errors="replace") as f:
    reaped = sum("FUSE connection" in l and "aborted" in l for l in f)
passed("%d SIGKILLs of smartiofs during borrow/return/segment writes: node-down "
       "within %.2f s, no LUT or requester entry leaked, segment data intact; "
       "%d killed daemons stuck in the kernel were ended by their reaper"
       % (ROUNDS, worst, reaped))
