#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 18 item 1 in the namespace: a PF's sriov_totalvfs and
sriov_numvfs, as in Linux's sysfs.  Writing the count on the lender's
mount enables VFs, which appear in dev/ of every node's mount with a
sriov_pf file and can be borrowed like any device; bad counts, another
node's write, a change while enabled and disabling borrowed VFs are
refused with the state unchanged; disabled, the VFs leave the listing."""
import errno
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, read, write  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
conf = os.path.join(HERE, "sriov.conf")
c = Cluster()
A = c.mount("m0", "--topology", conf, "--node", "host0")
B = c.mount("m1", "--topology", conf, "--node", "host1")


def must(path, value):
    rc = write(path, value)
    if rc:
        fail("%r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


def refused(path, value, want):
    rc = write(path, value)
    if rc != want:
        fail("%r > %s: got %s, want %s" % (value, path,
             errno.errorcode.get(rc, rc), errno.errorcode[want]))


def devs(m):
    return sorted(os.listdir(os.path.join(m, "dev")))


def listed_within(m, want, seconds=5):
    end = time.time() + seconds
    while devs(m) != want and time.time() < end:
        time.sleep(0.05)
    if devs(m) != want:
        fail("%s/dev lists %s, want %s" % (m, devs(m), want))


NUM = os.path.join(A, "dev/nic0/sriov_numvfs")
if devs(A) != ["nic0", "nic1"]:
    fail("before: %s" % devs(A))
if read(os.path.join(A, "dev/nic0/sriov_totalvfs")) != "4\n" or \
        read(NUM) != "0\n":
    fail("PF files: %r %r" % (read(os.path.join(A, "dev/nic0/sriov_totalvfs")),
                              read(NUM)))
for absent in ("dev/nic1/sriov_numvfs", "dev/nic0/sriov_pf"):
    if os.path.exists(os.path.join(A, absent)):
        fail("%s exists" % absent)

refused(NUM, "5", errno.ERANGE)
refused(NUM, "two", errno.EINVAL)
refused(NUM, "-1", errno.EINVAL)
refused(os.path.join(B, "dev/nic0/sriov_numvfs"), "2", errno.EPERM)
if read(NUM) != "0\n" or devs(A) != ["nic0", "nic1"]:
    fail("a refused write changed something: %r %s" % (read(NUM), devs(A)))

# A reader's cursor starts at the newest event: only what follows counts.
ev = os.open(os.path.join(A, "events"), os.O_RDONLY | os.O_NONBLOCK)
must(NUM, "2")
end, seen = time.time() + 5, ""
while "sriov dev/nic0 numvfs=2" not in seen and time.time() < end:
    try:
        seen += os.read(ev, 65536).decode()
    except BlockingIOError:
        time.sleep(0.05)
os.close(ev)
if "sriov dev/nic0 numvfs=2" not in seen:
    fail("no sriov event: %r" % seen)
want = ["nic0", "nic0v0", "nic0v1", "nic1"]
listed_within(A, want)
listed_within(B, want)
if read(os.path.join(B, "dev/nic0v1/sriov_pf")) != "nic0\n" or \
        read(os.path.join(B, "dev/nic0v1/bdf")) != "0000:03:00.2\n" or \
        read(os.path.join(B, "dev/nic0v1/device")) != "0x10ed\n":
    fail("VF files: %r %r %r" % (read(os.path.join(B, "dev/nic0v1/sriov_pf")),
                                 read(os.path.join(B, "dev/nic0v1/bdf")),
                                 read(os.path.join(B, "dev/nic0v1/device"))))
with open(os.path.join(A, "dev/nic0/config"), "rb") as f:
    cap = f.read()[0x100:0x112]
if struct.unpack_from("<H", cap, 0)[0] != 0x10 or \
        struct.unpack_from("<H", cap, 0x10)[0] != 2:
    fail("the SR-IOV capability does not say NumVFs 2: %s" % cap.hex())
refused(NUM, "3", errno.EBUSY)

# A VF lent and borrowed like any device; then it cannot be disabled.
must(os.path.join(A, "dev/nic0v0/lend"), "all")
must(os.path.join(B, "dev/nic0v0/borrow"), "host1")
with open(os.path.join(B, "dev/nic0v0/bar0"), "r+b") as f:
    f.write(b"vf0")
refused(NUM, "0", errno.EBUSY)
if read(NUM) != "2\n":
    fail("numvfs after a refused disable: %r" % read(NUM))
must(os.path.join(B, "dev/nic0v0/return"), "host1")
must(NUM, "0")
listed_within(A, ["nic0", "nic1"])
listed_within(B, ["nic0", "nic1"])
# Another mount drops a name that went when its watcher sees the change,
# the moment its listing changes too, a few milliseconds after the write
# (smartio(7)): the listing may be read between the two.
end = time.time() + 1
while os.path.exists(os.path.join(B, "dev/nic0v0")) and time.time() < end:
    time.sleep(0.001)
if os.path.exists(os.path.join(B, "dev/nic0v0")):
    fail("dev/nic0v0 still resolves 1 s after the VFs were disabled")
passed("2 VFs enabled, listed on both mounts, one borrowed; refusals left "
       "the state as it was")
