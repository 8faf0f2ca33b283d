#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 33: listing an empty directory (a device's peers/ or irq/, two of
the three directories of every device in `ls -lR` of dev/) asks the daemon
once: the empty reply that ends the listing, with no "." and ".." before
it (smartio(7): listings do not name them; they exist all the same)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, stats  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
c = Cluster()
M = c.mount("m0", "--topology", os.path.join(HERE, "listing.conf"),
            "--node", "host0", "--stats")

empty = [os.path.join(M, "dev", d, sub) for d in ("nic0", "nic1")
         for sub in ("peers", "irq")]
empty = [p for p in empty if os.path.isdir(p) and not os.listdir(p)] or \
    fail("no empty directory under dev/nic0 or dev/nic1 to list")
for p in empty:
    # A fresh directory each time (listed once above: kept, asks nothing).
    r0 = stats(M)["readdir"]
    out = subprocess.run(["ls", "-a1", p], capture_output=True, text=True)
    asked = stats(M)["readdir"] - r0
    if out.returncode or out.stdout:
        fail("ls -a %s: rc %d, listed %r, want nothing"
             % (p, out.returncode, out.stdout))
    if asked != 0:
        fail("%s listed a second time asked the daemon %d times: the kernel "
             "keeps no listing" % (p, asked))

# A directory not listed yet: one request, not two.
p = empty[0]
c.kill(M)
M = c.mount("m1", "--topology", os.path.join(HERE, "listing.conf"),
            "--node", "host0", "--stats")
p = p.replace(os.path.join(c.tmp, "m0"), M)
os.listdir(M)   # the mount's first OPENDIR, answered ENOSYS, counts too
r0 = stats(M)["readdir"]
names = os.listdir(p)
asked = stats(M)["readdir"] - r0
if names or asked != 1:
    fail("listing empty %s asked the daemon %d times (want 1) and named %s"
         % (os.path.relpath(p, M), asked, names))
for rel in (".", ".."):
    if not os.path.isdir(os.path.join(p, rel)):
        fail("%s/%s is no directory" % (p, rel))
if os.stat(os.path.join(p, "..")).st_ino != \
        os.stat(os.path.dirname(p)).st_ino:
    fail("%s/.. is not its parent" % p)
out = subprocess.run(["ls", "-a1", os.path.dirname(p)], capture_output=True,
                     text=True).stdout.split()
if "." in out or ".." in out or "config" not in out:
    fail("ls -a of a device directory lists %s" % out)
passed("%d empty directories, each listed in one request" % len(empty))
