# SPDX-License-Identifier: GPL-2.0-or-later
"""Rebuilds the tree that an `ls -lR` listing shows, on another file system.

The scale benchmark compares `ls -lR` of /smartio/dev with the same tree on
tmpfs.  Rather than walking /smartio a second time, the tmpfs copy is built
from the listing itself: every directory, regular file (mode and size, the
size as a hole) and symbolic link (its target) that the listing shows.
Listing the copy must then give the same lines, which the benchmark checks.
Names never contain blanks in /smartio, which keeps the parsing simple.
"""
import os

TYPES = {"d": "dir", "-": "file", "l": "link"}


def perm(s):
    """The mode bits of an ls -l permission string such as rw-r--r--."""
    m = 0
    for i, c in enumerate(s):
        if c != "-":
            m |= 1 << (8 - i)
    return m


def parse(lines, root):
    """Yields (relpath, kind, mode, size, target) from ls -lR output of root."""
    cur = None
    for line in lines:
        line = line.rstrip("\n")
        if line.endswith(":") and line.startswith(root):
            cur = os.path.relpath(line[:-1], root)
            continue
        if not line or line.startswith("total ") or cur is None:
            continue
        f = line.split()
        # mode links user group size month day time name [-> target]
        if len(f) < 9 or f[0][0] not in TYPES:
            raise ValueError("unexpected ls line: %r" % line)
        target = f[10] if f[0][0] == "l" and len(f) > 10 else None
        yield (os.path.normpath(os.path.join(cur, f[8])), TYPES[f[0][0]],
               perm(f[0][1:10]), int(f[4]), target)


def build(listing_path, root, dest):
    """Creates the tree of the listing under dest; returns the entry count."""
    n = 0
    old = os.umask(0)
    try:
        os.makedirs(dest, exist_ok=True)
        with open(listing_path) as f:
            for rel, kind, mode, size, target in parse(f, root):
                p = os.path.join(dest, rel)
                if kind == "dir":
                    os.mkdir(p, mode)
                elif kind == "link":
                    os.symlink(target, p)
                else:
                    fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_EXCL, mode)
                    if size:
                        os.ftruncate(fd, size)
                    os.close(fd)
                n += 1
    finally:
        os.umask(old)
    return n
