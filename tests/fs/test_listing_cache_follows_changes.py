#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 33: the kernel keeps the listings smartiofs sends (no OPENDIR, so
FOPEN_CACHE_DIR), and a listing kept is still as the cluster is: a VF
enabled or disabled, or a segment made or removed, through one node's
mount is listed so by the other node's mount within the watcher's reaction
(well under a second; smartio(7): seen at once through every mount), and
by the mount that made the change as soon as its write or mkdir returns."""
import errno
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, stats, write  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
conf = os.path.join(HERE, "listing.conf")
c = Cluster()
A = c.mount("m0", "--topology", conf, "--node", "host0")
B = c.mount("m1", "--topology", conf, "--node", "host1", "--stats")
ROUNDS = 20


def listed_within(mnt, rel, want, seconds):
    """Seconds until mnt/rel lists exactly want, or None (and what it
    listed last)."""
    t = time.time()
    while True:
        got = sorted(os.listdir(os.path.join(mnt, rel)))
        if got == want:
            return time.time() - t, got
        if time.time() - t > seconds:
            return None, got
        time.sleep(0.005)


# Kept: a listing read twice is asked for once.
os.listdir(os.path.join(B, "dev"))
r0 = stats(B)["readdir"]
os.listdir(os.path.join(B, "dev"))
if stats(B)["readdir"] != r0:
    fail("dev/ listed again asked the daemon: the kernel keeps no listing, "
         "so this test proves nothing")

worst = 0.0
for i in range(ROUNDS):
    n = 0 if i % 2 else 1 + i % 7
    want = sorted(["nic0", "nic1"] + ["nic0v%d" % v for v in range(n)])
    os.listdir(os.path.join(A, "dev"))     # both kept before the change
    os.listdir(os.path.join(B, "dev"))
    rc = write(os.path.join(A, "dev/nic0/sriov_numvfs"), str(n))
    if rc:
        fail("sriov_numvfs=%d: %s" % (n, errno.errorcode.get(rc, rc)))
    got = sorted(os.listdir(os.path.join(A, "dev")))
    if got != want:
        fail("round %d: host0's own dev/ right after its write lists %s, "
             "want %s" % (i, got, want))
    t, got = listed_within(B, "dev", want, 1.0)
    if t is None:
        fail("round %d: host1's dev/ still lists %s 1 s after host0 set "
             "sriov_numvfs=%d" % (i, got, n))
    worst = max(worst, t)

# Another directory kind: a segment made and removed on host0.
segs = os.path.join("nodes", "host0", "segments")
for i in range(ROUNDS // 2):
    os.listdir(os.path.join(B, segs))
    os.mkdir(os.path.join(A, segs, "s"))
    t, got = listed_within(B, segs, ["s"], 1.0)
    if t is None:
        fail("round %d: host1 lists %s in %s 1 s after host0 made s"
             % (i, got, segs))
    worst = max(worst, t)
    os.rmdir(os.path.join(A, segs, "s"))
    t, got = listed_within(B, segs, [], 1.0)
    if t is None:
        fail("round %d: host1 lists %s in %s 1 s after host0 removed s"
             % (i, got, segs))
    worst = max(worst, t)
passed("dev/ listed twice asked once; %d VF and %d segment changes on "
       "host0 listed by host1 within %.3f s at worst, by host0 at once"
       % (ROUNDS, ROUNDS, worst))
