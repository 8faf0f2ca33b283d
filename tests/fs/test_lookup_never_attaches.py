#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 12, defect 2: reading the tree never changes fabric state.

stat, lstat, readlink, `ls -l` and a walk of every file under a remote
node's mount leave an exported segment unattached (its `attached` file and
the reader's look-up table unchanged) and the owner's rmdir succeeds.  A
write of the node name to `attach` attaches it and mmap of mem then
reaches the owner's memory; when the process that attached exits (its
mapping ends with it) the segment is detached again, and the owner's rmdir
succeeds.  Two daemons of one fabric serve host0 (owner) and host1.
"""
import errno
import mmap
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, read, write  # noqa: E402

c = Cluster()
A = c.mount("m0", "--node", "host0")
B = c.mount("m1", "--node", "host1")


def must(path, value):
    rc = write(path, value)
    if rc:
        fail("%r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


def export(name, size="64k"):
    seg = os.path.join(A, "self/segments", name)
    os.mkdir(seg)
    must(os.path.join(seg, "size"), size)
    must(os.path.join(seg, "available"), "1")
    return seg


LUTS = os.path.join(B, "nodes/host1/adapters/ntb0/luts")
luts0 = read(LUTS)
segs = [export("s%d" % i) for i in range(3)]

# Every way of looking, from the node that could attach.
for i in range(3):
    d = os.path.join(B, "nodes/host0/segments/s%d" % i)
    for p in (os.path.join(d, "mem"), os.path.join(B, "seg/host0.s%d" % i, "mem")):
        os.lstat(p)
        try:
            os.stat(p)
            fail("stat through an unattached mem resolved")
        except OSError as e:
            if e.errno != errno.ENOLINK:
                fail("stat of unattached mem: %s" % errno.errorcode[e.errno])
        try:
            os.readlink(p)
            fail("readlink of an unattached mem gave a target")
        except OSError as e:
            if e.errno != errno.ENOLINK:
                fail("readlink of unattached mem: %s" % errno.errorcode[e.errno])
    subprocess.run(["ls", "-lR", d], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
subprocess.run(["ls", "-lLR", B], stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL)
subprocess.run(["find", B, "-follow", "-name", "mem"],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for s in segs:
    if read(os.path.join(s, "attached")) != "":
        fail("%s attached by reading: %r" % (s, read(os.path.join(s, "attached"))))
if read(LUTS) != luts0:
    fail("reading used LUT entries: %r, was %r" % (read(LUTS), luts0))
for s in segs:
    os.rmdir(s)     # the owner is never blocked by a reader

# attach + mmap in a child process: attached while it lives, and its
# writes reach host0's memory; detached when it exits.
seg = export("shm", "1M")
rseg = os.path.join(B, "nodes/host0/segments/shm")
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    rc = write(os.path.join(rseg, "attach"), "host1\n")
    if rc:
        os.write(w, b"E%d" % rc)
        os._exit(1)
    fd = os.open(os.path.join(rseg, "mem"), os.O_RDWR)
    m = mmap.mmap(fd, 1 << 20)
    os.close(fd)
    m[4096:4101] = b"hello"
    os.write(w, b"ok")
    time.sleep(3600)
    os._exit(0)
os.close(w)
msg = os.read(r, 16)
if msg != b"ok":
    os.kill(pid, 9)
    fail("attach + mmap in the child: %r" % msg)
if read(os.path.join(seg, "attached")) != "host1\n":
    fail("not attached after the write: %r" % read(os.path.join(seg, "attached")))
fd = os.open(os.path.join(seg, "mem"), os.O_RDWR)
mo = mmap.mmap(fd, 1 << 20)
os.close(fd)
if mo[4096:4101] != b"hello":
    fail("host1's write through its mapping not seen by host0: %r" % mo[4096:4101])
mo.close()
try:
    os.rmdir(seg)
    fail("rmdir of a segment attached and mapped by host1 succeeded")
except OSError as e:
    if e.errno != errno.EBUSY:
        fail("rmdir while attached: %s" % errno.errorcode[e.errno])
os.kill(pid, 9)          # the mapping process goes: close, munmap, exit
os.waitpid(pid, 0)
t = time.time()
while read(os.path.join(seg, "attached")) != "":
    if time.time() - t > 5:
        fail("still attached 5 s after the holder exited: %r" %
             read(os.path.join(seg, "attached")))
    time.sleep(0.05)
if read(LUTS) != luts0:
    fail("LUT entries not given back: %r, was %r" % (read(LUTS), luts0))
os.rmdir(seg)

# Two holders: the attachment lasts until the last one goes.
seg = export("two")
rseg = os.path.join(B, "nodes/host0/segments/two")
kids = [subprocess.Popen([sys.executable, "-c",
                          "import os,sys,time\n"
                          "fd=os.open(sys.argv[1],os.O_WRONLY)\n"
                          "os.write(fd,b'host1')\n"
                          "print('ok',flush=True)\n"
                          "time.sleep(3600)\n", os.path.join(rseg, "attach")],
                         stdout=subprocess.PIPE) for _ in range(2)]
for k in kids:
    if k.stdout.readline().strip() != b"ok":
        fail("a holder could not attach")
kids[0].kill()
kids[0].wait()
time.sleep(0.5)
if read(os.path.join(seg, "attached")) != "host1\n":
    fail("detached while a second holder lives")
kids[1].kill()
kids[1].wait()
t = time.time()
while read(os.path.join(seg, "attached")) != "":
    if time.time() - t > 5:
        fail("still attached after both holders exited")
    time.sleep(0.05)
os.rmdir(seg)
passed("stat, readlink, ls -l and find never attach; attach is held by the "
       "writing process and released when it exits")
