#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ls -lR through smartiofs: the listing carries each entry's attributes
(READDIRPLUS), so the walk costs about one request per directory instead
of a LOOKUP per name; every reference the listing hands the kernel is given
back when the kernel drops its caches, so the inode table shrinks back."""
import os
import subprocess
import time

from sfshelp import Cluster, fail, passed

c = Cluster()
M = c.mount("m0", "--stats")


def stats():
    raw = os.getxattr(M, "user.smartiofs.stats").decode()
    return {k: int(v) for k, v in (l.split() for l in raw.splitlines())}


def drop_caches():
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("2")
        return True
    except OSError:
        return False


drop_caches()
before = stats()
out = subprocess.run(["ls", "-lR", os.path.join(M, "dev")], capture_output=True,
                     text=True, check=True).stdout
after = stats()
entries = sum(1 for l in out.splitlines()
              if l and not l.startswith(("total", "/")) and not l.endswith(":"))
lookups = after["lookup"] - before["lookup"]
dirs = after["readdir"] - before["readdir"]
if entries < 100:
    fail("ls -lR listed only %d entries" % entries)
# Symlinks (bar/mem) and dynamic entries still get looked up; the
# static majority must come with the listing.
if lookups * 2 > entries:
    fail("%d lookups for %d entries: the listing did not carry attributes"
         % (lookups, entries))
if after["inodes"] < entries // 2:
    fail("only %d inodes after listing %d entries" % (after["inodes"], entries))
if drop_caches():
    # The kernel sends its FORGETs in batches, after the drop returns.
    deadline = time.time() + 5
    while stats()["inodes"] > 16 and time.time() < deadline:
        time.sleep(0.05)
        drop_caches()
    left = stats()["inodes"]
    if left > 16:
        fail("%d inodes left after the kernel dropped its caches (of %d): "
             "references leaked" % (left, after["inodes"]))
    note = "; %d inodes -> %d after drop_caches" % (after["inodes"], left)
else:
    note = "; drop_caches not permitted, reference check skipped"
passed("ls -lR of %d entries: %d lookups, %d readdir requests%s"
       % (entries, lookups, dirs, note))
