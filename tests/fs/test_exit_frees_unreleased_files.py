#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""smartiofs frees at exit the files the kernel never released: a
directory, a text attribute, config space and the events file are held
open across a lazy unmount and the daemon's SIGTERM.  The daemon exits
cleanly; under make check-valgrind any handle it did not free is a definite
leak and fails the run."""
import os
import signal
import subprocess

from sfshelp import Cluster, fail, passed

c = Cluster()
M = c.mount("m0")

held = [os.open(os.path.join(M, "dev"), os.O_RDONLY | os.O_DIRECTORY),
        os.open(os.path.join(M, "self/state"), os.O_RDONLY),
        os.open(os.path.join(M, "events"), os.O_RDONLY | os.O_NONBLOCK)]
cfg = [d for d in os.listdir(os.path.join(M, "dev"))
       if os.path.exists(os.path.join(M, "dev", d, "config"))]
if not cfg:
    fail("no device has a config file")
held.append(os.open(os.path.join(M, "dev", cfg[0], "config"), os.O_RDONLY))
os.read(held[1], 64)    # a rendered text, so its buffer is allocated too

subprocess.check_call(["fusermount3", "-u", "-z", M])
p = c.procs[M]
p.send_signal(signal.SIGTERM)
try:
    rc = p.wait(60)
except subprocess.TimeoutExpired:
    fail("smartiofs did not exit on SIGTERM with files still open")
for fd in held:
    try:
        os.close(fd)    # its FLUSH finds no daemon: ENOTCONN, still closed
    except OSError:
        pass
if rc != 0:
    fail("smartiofs exited with %d holding %d open files" % (rc, len(held)))
passed("exited with %d files the kernel never released" % len(held))
