#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 33: `ls -l` of a dev/ longer than one READDIRPLUS page asks no
LOOKUP per device, and a device's name listed once is not asked about
again when a walk comes back to it seconds later, as `ls -lR` of a large
dev/ does after listing it (a LOOKUP per device with one-second timeouts).  Caching names that long keeps the
namespace's promise: a VF disabled through another node's mount is gone
from this one at once, and back at once when enabled again."""
import errno
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import (Cluster, asked, fail, gone_within, passed,  # noqa: E402
                     stats, write)

HERE = os.path.dirname(os.path.abspath(__file__))
conf = os.path.join(HERE, "listing.conf")
c = Cluster()
A = c.mount("m0", "--topology", conf, "--node", "host0")
B = c.mount("m1", "--topology", conf, "--node", "host1", "--stats")
VFS = 200


def back_within(path, seconds):
    t = time.time()
    while time.time() - t < seconds:
        if os.path.isdir(path):
            return time.time() - t
        time.sleep(0.01)
    return None


rc = write(os.path.join(A, "dev/nic0/sriov_numvfs"), "%d" % VFS)
if rc:
    fail("enabling %d VFs: %s" % (VFS, errno.errorcode.get(rc, rc)))
devs = ["nic0", "nic1"] + ["nic0v%d" % i for i in range(VFS)]

s0 = stats(B)
out = subprocess.run(["ls", "-l", os.path.join(B, "dev")], capture_output=True,
                     text=True, check=True).stdout
s1 = stats(B)
listed = sum(1 for l in out.splitlines() if l.startswith("d"))
if listed != len(devs):
    fail("ls -l dev lists %d devices, want %d" % (listed, len(devs)))
if asked(s0, s1) > 4:
    fail("ls -l of %d devices asked %d LOOKUP/GETATTR: pages after the "
         "first came without attributes" % (len(devs), asked(s0, s1)))

# A walk comes back to each device after its one-second timeouts.
time.sleep(1.5)
os.stat(os.path.join(B, "dev"))    # dev/ itself is asked again: fine
s1 = stats(B)
for d in devs:
    os.stat(os.path.join(B, "dev", d))
s2 = stats(B)
if asked(s1, s2):
    fail("stat of %d listed devices 1.5 s later asked %d LOOKUP/GETATTR"
         % (len(devs), asked(s1, s2)))

# Cached for long, still gone at once when another node disables them.
vf = os.path.join(B, "dev/nic0v7")
rc = write(os.path.join(A, "dev/nic0/sriov_numvfs"), "0")
if rc:
    fail("disabling VFs: %s" % errno.errorcode.get(rc, rc))
t_gone = gone_within(vf, 1.0)
if t_gone is None:
    fail("%s still there 1 s after host0 disabled its VFs" % vf)
if sorted(os.listdir(os.path.join(B, "dev"))) != ["nic0", "nic1"]:
    fail("dev/ after disabling: %s" % sorted(os.listdir(os.path.join(B, "dev"))))
rc = write(os.path.join(A, "dev/nic0/sriov_numvfs"), "8")
if rc:
    fail("enabling 8 VFs again: %s" % errno.errorcode.get(rc, rc))
t_back = back_within(vf, 1.0)
if t_back is None:
    fail("%s not back 1 s after host0 enabled its VFs again" % vf)
passed("ls -l of %d devices: %d requests; stat of each 1.5 s later: none; "
       "a disabled VF gone from the other mount in %.2f s, back in %.2f s"
       % (len(devs), asked(s0, s1), t_gone, t_back))
