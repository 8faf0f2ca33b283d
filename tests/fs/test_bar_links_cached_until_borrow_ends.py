#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 33: a device's bar links and the names of a plain listing are
kept by the kernel, so that a walk coming back to them asks nothing:
- a listing of a device, then lstat and readlink of its bar link 1.5 s
  later (as `ls -lR` of dev/ comes back to it): no LOOKUP or GETATTR (with zero timeouts: two LOOKUPs and a
  GETATTR per bar link, the most a walk of dev/ asked per device);
- a plain listing of dev/ (past one reply), then a stat of every device
  1.5 s later: no LOOKUP (readdirplus "auto" sent later replies without
  names, and the kept listing made each stat a LOOKUP).
Kept that long, a bar link still follows the borrow that made it: gone
from the borrower's mount within 1 s when the lender reclaims the device
through its own mount, back at once on a new borrow, and gone at once
when the borrower returns it through its own."""
import errno
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import (Cluster, asked, fail, gone_within, passed,  # noqa: E402
                     stats, write)

HERE = os.path.dirname(os.path.abspath(__file__))
conf = os.path.join(HERE, "walk.conf")
c = Cluster()
A = c.mount("m0", "--topology", conf, "--node", "host0")
B = c.mount("m1", "--topology", conf, "--node", "host1", "--stats")
VFS = 255


def must_write(path, value):
    rc = write(path, value)
    if rc:
        fail("%s <- %s: %s" % (path, value.strip(),
                               errno.errorcode.get(rc, rc)))


# A bar link of this node's own device, revisited after its listing.
own = os.path.join(B, "dev/nic1/bar0")
# A listing, as a walk reads it before it looks at the entries.  (Not
# `ls -l`: its readlink marks the link's atime stale, and a later lstat
# asks for it, the kernel's rule for any file read.)
os.listdir(os.path.join(B, "dev/nic1"))
time.sleep(1.5)
os.stat(os.path.join(B, "dev/nic1"))   # dev/ itself is asked again: fine
s0 = stats(B)
os.lstat(own)
target = os.readlink(own)
s1 = stats(B)
if asked(s0, s1):
    fail("lstat and readlink of %s 1.5 s after its listing asked %d "
         "LOOKUP/GETATTR" % (own, asked(s0, s1)))
if s1["readlink"] - s0["readlink"] != 1:
    fail("readlink of %s was not asked of the daemon (%d READLINK): a "
         "target must be read anew" % (own, s1["readlink"] - s0["readlink"]))

# A borrowed device's bar link: made by the borrow, ended by the lender.
bar = os.path.join(B, "dev/nic0/bar0")
must_write(os.path.join(A, "dev/nic0/lend"), "all\n")
if os.path.lexists(bar):
    fail("%s before the borrow" % bar)
must_write(os.path.join(B, "dev/nic0/borrow"), "host1\n")
if not os.path.islink(bar):
    fail("no %s right after the borrow" % bar)
os.listdir(os.path.join(B, "dev/nic0"))
time.sleep(1.5)
os.stat(os.path.join(B, "dev/nic0"))
s0 = stats(B)
os.lstat(bar)
s1 = stats(B)
if asked(s0, s1):
    fail("lstat of %s 1.5 s after its listing asked %d LOOKUP/GETATTR"
         % (bar, asked(s0, s1)))
must_write(os.path.join(A, "dev/nic0/reclaim"), "1\n")
t_gone = gone_within(bar, 1.0)
if t_gone is None:
    fail("%s still there 1 s after host0 reclaimed nic0" % bar)
must_write(os.path.join(B, "dev/nic0/borrow"), "host1\n")
if not os.path.islink(bar):
    fail("no %s right after borrowing again" % bar)
must_write(os.path.join(B, "dev/nic0/return"), "host1\n")
if os.path.lexists(bar):
    fail("%s still there right after host1 returned nic0" % bar)

# A plain listing's names are kept with it.
for pf in ("nic0", "nic2"):
    must_write(os.path.join(A, "dev", pf, "sriov_numvfs"), "%d\n" % VFS)
C = B     # its listing of dev/ went with the change: read anew here
names = os.listdir(os.path.join(C, "dev"))
if len(names) != 2 * VFS + 3:
    fail("dev/ lists %d devices, want %d" % (len(names), 2 * VFS + 3))
time.sleep(1.5)
os.stat(os.path.join(C, "dev"))
s0 = stats(C)
for n in names:
    os.stat(os.path.join(C, "dev", n))
s1 = stats(C)
if asked(s0, s1):
    fail("stat of the %d devices of a plain listing 1.5 s later asked %d "
         "LOOKUP/GETATTR" % (len(names), asked(s0, s1)))
passed("bar links revisited with no LOOKUP (own: -> %s); a reclaimed "
       "borrow's gone from the borrower in %.2f s, a returned one at once; "
       "%d devices of a plain listing stat'ed with no LOOKUP"
       % (target, t_gone, len(names)))
