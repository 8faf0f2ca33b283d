#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The events file: an open starts at the current end (only new events),
one line per read in the documented format, a blocking read waits for the
next event and is interruptible, O_NONBLOCK reads fail with EAGAIN, poll()
reports new events, and a reader that fell behind gets a `lost n=` line.
"""
import errno
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, write  # noqa: E402

LINE = re.compile(r"^(\d+) (\d+)\.(\d{9}) ([a-z-]+) (\S+)( [a-z_]+=\S+)*\n$")
c = Cluster()
M = c.mount("m0")
ev = os.path.join(M, "events")
lend = os.path.join(M, "dev/nvme0/lend")


def must(path, value):
    rc = write(path, value)
    if rc:
        fail("%r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


must(lend, "all")                        # an old event, before the open
fd = os.open(ev, os.O_RDONLY | os.O_NONBLOCK)
try:
    os.read(fd, 4096)
    fail("an old event was returned to a fresh open")
except OSError as e:
    if e.errno != errno.EAGAIN:
        fail("non-blocking read with nothing new: %s" % errno.errorcode[e.errno])

p = select.poll()
p.register(fd, select.POLLIN)
if p.poll(100):
    fail("poll reports input with nothing new")
threading.Timer(0.3, lambda: must(lend, "host1,host2")).start()
t0 = time.time()
r = p.poll(3000)
if not r or not r[0][1] & select.POLLIN:
    fail("poll did not report the new event")
line = os.read(fd, 4096).decode()
m = LINE.match(line)
if not m or m.group(4) != "lend" or m.group(5) != "dev/nvme0":
    fail("event line %r" % line)
seq = int(m.group(1))
if abs(int(m.group(2)) - time.time()) > 60:
    fail("event time %s is not now" % m.group(2))

# Blocking reads: one line per read, seq increasing by one.
bfd = os.open(ev, os.O_RDONLY)
threading.Timer(0.2, lambda: (must(lend, "none"), must(lend, "all"))).start()
got = [os.read(bfd, 4096).decode() for _ in range(2)]
kinds = [LINE.match(g).group(4) if LINE.match(g) else g for g in got]
if kinds != ["lend", "lend"]:
    fail("blocking reads returned %r" % got)
seqs = [int(g.split()[0]) for g in got]
if seqs[1] != seqs[0] + 1:
    fail("seq not increasing by one: %r" % seqs)
# The non-blocking reader saw the same events in the same order.
for want in seqs:
    line = os.read(fd, 4096).decode()
    if int(line.split()[0]) != want:
        fail("second reader: %r, want seq %d" % (line, want))

# A blocked reader is interruptible (the daemon answers the interrupt).
proc = subprocess.Popen(["cat", ev], stdout=subprocess.DEVNULL)
time.sleep(0.3)
proc.send_signal(signal.SIGINT)
try:
    proc.wait(3)
except subprocess.TimeoutExpired:
    fail("a reader blocked in events did not end on SIGINT")

# Falling behind the ring: a `lost n=<count>` line, then events go on.
for i in range(1100):
    must(lend, "none" if i % 2 else "all")
line = os.read(bfd, 4096).decode()
if not re.match(r"^lost n=\d+\n$", line):
    fail("a reader 1100 events behind got %r, want a lost line" % line)
line = os.read(bfd, 4096).decode()
if not LINE.match(line):
    fail("after the lost line: %r" % line)
os.close(bfd)
os.close(fd)
if not c.alive(M):
    fail("the daemon died")
passed("events seq %d.., poll, blocking, EAGAIN, interrupt, lost" % seq)
