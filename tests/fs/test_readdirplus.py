#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ls -lR through smartiofs: the listing carries each entry's attributes
(READDIRPLUS), so the walk costs about one request per directory instead
of a LOOKUP per name; attribute files take no entry in the inode table;
every reference the listing hands the kernel is given back when the kernel
drops its caches, so the inode table shrinks back."""
import os
import subprocess
import time

from sfshelp import Cluster, fail, passed, stats

c = Cluster()
M = c.mount("m0", "--stats")


def drop_caches():
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("2")
        return True
    except OSError:
        return False


drop_caches()
before = stats(M)
out = subprocess.run(["ls", "-lR", os.path.join(M, "dev")], capture_output=True,
                     text=True, check=True).stdout
after = stats(M)
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
# The kernel now holds a reference to every name listed.  The daemon keeps
# an entry for each directory, link and special file among them; attribute
# files are numbered from their directory's entry and cost none (memory
# follows the directories the kernel holds, not the names it was shown).
held = sum(1 for l in out.splitlines() if l[:1] in ("d", "l"))
files = sum(1 for l in out.splitlines() if l[:1] == "-")
if after["inodes"] < held // 2:
    fail("only %d inodes after listing %d directories and links"
         % (after["inodes"], held))
if after["inodes"] - before["inodes"] > held + files // 4:
    fail("%d inodes after listing %d directories and links and %d files: "
         "attribute files hold entries" % (after["inodes"], held, files))
# A name's number is the same whether readdir or stat gives it.
for d in ("dev/acc0", "dev/acc0/irq", "nodes/host0"):
    for e in os.scandir(os.path.join(M, d)):
        st = os.stat(e.path, follow_symlinks=False)
        if e.inode() != st.st_ino:
            fail("%s: readdir says inode %d, stat %d" % (e.path, e.inode(), st.st_ino))
if drop_caches():
    # The kernel sends its FORGETs in batches, after the drop returns.
    deadline = time.time() + 5
    while stats(M)["inodes"] > 16 and time.time() < deadline:
        time.sleep(0.05)
        drop_caches()
    left = stats(M)["inodes"]
    if left > 16:
        fail("%d inodes left after the kernel dropped its caches (of %d): "
             "references leaked" % (left, after["inodes"]))
    note = "; %d inodes -> %d after drop_caches" % (after["inodes"], left)
else:
    note = "; drop_caches not permitted, reference check skipped"
passed("ls -lR of %d entries (%d files): %d lookups, %d readdir requests, "
       "%d inodes%s" % (entries, files, lookups, dirs, after["inodes"], note))
