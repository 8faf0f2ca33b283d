# SPDX-License-Identifier: LGPL-2.1-or-later
"""Errors of the namespace, turned into sentences that name the cause.

The namespace answers a refused write with an errno only (smartio(7), ERROR
CODES); one errno has several causes (EBUSY: borrowed in exclusive mode,
already borrowing, in use, size already set).  explain() reads the
namespace's own state right after the failure and says which cause it is,
with names: "nvme1 is borrowed by host2 in exclusive mode".  TABLE lists,
per operation and errno, the cause each sentence stands for; smartio(1)
prints it and the tests run every entry.
"""
import errno
import os
import re

from .render import human_size

# (operation, errno) -> the cause, as smartio(1) documents it.
TABLE = {
    ("lend", errno.EINVAL): "a malformed policy",
    ("lend", errno.ENOENT): "an unknown node in the policy",
    ("lend", errno.EBUSY): "a narrower policy while borrowed",
    ("borrow", errno.EACCES): "the lend policy leaves the node out",
    ("borrow", errno.EBUSY): "borrowed in exclusive mode, or already borrowed by that node",
    ("borrow", errno.EINVAL): "the lender borrowing its own device",
    ("borrow", errno.ENOENT): "an unknown node",
    ("borrow", errno.EHOSTDOWN): "the lender or the borrower is down",
    ("borrow", errno.ENOSPC): "no look-up table or requester entry left",
    ("borrow", errno.EHOSTUNREACH): "no adapter joins the two nodes",
    ("return", errno.EINVAL): "the node does not borrow the device",
    ("reclaim", errno.EACCES): "not the lender's mount",
    ("mode", errno.EINVAL): "an unknown mode",
    ("mode", errno.EBUSY): "exclusive while borrowed",
    ("segment-create", errno.EEXIST): "the segment exists",
    ("segment-create", errno.EINVAL): "a malformed segment name",
    ("segment-create", errno.EHOSTDOWN): "the owner is down",
    ("segment-size", errno.EINVAL): "a malformed, zero or too large size",
    ("segment-size", errno.ENOMEM): "not enough memory on the owner",
    ("segment-destroy", errno.EBUSY): "attached or mapped for a device",
    ("segment-destroy", errno.ENOENT): "no such segment",
    ("segment-export", errno.EBUSY): "a withdrawal while attached",
    ("any", errno.ENXIO): "an unknown device",
    ("any", errno.EACCES): "not the daemon's owner, root or an operator",
    ("any", errno.EPERM): "a mount that serves one node acting for another",
}


class SmartioError(OSError):
    """A refused operation: errno as the namespace returned it, strerror a
    sentence naming the cause."""

    def __init__(self, err, sentence, filename=None):
        super().__init__(err, sentence)
        self.sentence = sentence
        self.path = filename

    def __str__(self):
        # EOPNOTSUPP, as the man pages name it (Python's table says
        # ENOTSUP, its alias on Linux)
        name = "EOPNOTSUPP" if self.errno == errno.EOPNOTSUPP else \
            errno.errorcode.get(self.errno, self.errno)
        return "%s (%s)" % (self.sentence, name)


def _read(c, *parts):
    try:
        with open(c.path(*parts)) as f:
            return f.read().strip()
    except OSError:
        return None


def _list(c, *parts):
    v = _read(c, *parts)
    return v.split() if v else []


def _exists(c, *parts):
    return os.path.lexists(c.path(*parts))


def _nodes(c):
    try:
        return sorted(os.listdir(c.path("nodes")))
    except OSError:
        return []


def _self(c):
    try:
        return os.path.basename(os.readlink(c.path("self")))
    except OSError:
        return "?"


def _and(names):
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _policy_words(c, dev):
    pol = _list(c, "dev", dev, "lend")
    if pol in (["none"], []):
        return "is not lent (policy none)"
    return "is lent to %s only" % _and(pol)


def _down(c, node):
    return _read(c, "nodes", node, "state") == "down"


def _unknown_nodes(c, names):
    known = set(_nodes(c))
    return [n for n in names if n not in known and n not in ("all", "none")]


def _links_down(c, nodes):
    """'the link of ntb0 on host1 is down' for each adapter of nodes whose
    link is down."""
    out = []
    for n in nodes:
        for ad in sorted(os.listdir(c.path("nodes", n, "adapters"))):
            if _read(c, "nodes", n, "adapters", ad, "link") == "down":
                out.append("the link of %s on %s is down" % (ad, n))
    return out


def _space(c, a, b):
    """The adapters of a and b with no look-up table or requester entry
    left, as words."""
    full = []
    for n in (a, b):
        for ad in sorted(os.listdir(c.path("nodes", n, "adapters"))):
            for what, words in (("luts", "look-up table entries"),
                                ("requesters", "requester ids"),
                                ("requesters_in", "requester ids")):
                v = _read(c, "nodes", n, "adapters", ad, what)
                if v:
                    used, total = v.split()
                    if used == total:
                        full.append("%s of %s has used all %s %s" % (
                            ad, n, total, words))
    return full


def _fabric_mounts(c):
    """The mount points of smartiofs on this machine that serve the same
    fabric as c's mount, c's first: /proc/self/mounts names each by its
    source, "<fabric>" or "<fabric>:<node>"."""
    me = os.path.realpath(c.root)
    mounts = []
    try:
        # any user names a mount point: bytes that are not UTF-8 are kept
        with open("/proc/self/mounts", errors="surrogateescape") as f:
            for line in f:
                w = line.split()
                if len(w) > 2 and w[2] == "fuse.smartiofs":
                    src, mnt = (re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), x)
                                for x in w[:2])
                    mounts.append((src.rpartition(":")[0] if ":" in src else src, mnt))
    except OSError:
        pass
    fabric = next((f for f, m in mounts if m == me), None)
    return [me] + [m for f, m in mounts if f == fabric and m != me]


def _holders(c, here, name, nodes):
    """Each attached node and who holds its attachment: "host2, held by
    process 4242 (bash) until it exits or it is detached (smartio segment
    detach host0.ring host2)".  Only the daemon a process wrote attach through
    knows it (its holders file), so the fabric's other mounts on this
    machine are asked too.  Issue 32 item 12: the operator learns which
    process to end or which attachment to detach."""
    procs = {}
    for i, mnt in enumerate(_fabric_mounts(c)):
        try:
            with open(os.path.join(mnt, *here, "holders"), errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        for line in text.splitlines():
            w = line.split()
            if len(w) == 3 and w[0] in nodes:
                procs.setdefault(w[0], []).append(
                    "%s (%s)%s" % (w[1], w[2], "" if i == 0 else " through " + mnt))
    out = []
    for n in nodes:
        detach = "smartio segment detach %s %s" % (name, n)
        p = procs.get(n)
        if p:
            out.append("%s, held by process%s %s until %s or it is detached (%s)" % (
                n, "es" if len(p) > 1 else "", _and(p),
                "it exits" if len(p) == 1 else "they exit", detach))
        else:
            out.append("%s, held by no process of this machine's mounts "
                       "(libsmartio, or another machine) until it is detached (%s)"
                       % (n, detach))
    return "; ".join(out)


def _device(c, op, e, dev, node=None, policy=None, mode=None, numvfs=None, **_):
    lender = _read(c, "dev", dev, "node")
    borrowers = _list(c, "dev", dev, "borrow")
    devmode = _read(c, "dev", dev, "mode")
    if e == errno.ENXIO or lender is None:
        return "there is no device named %s" % dev
    if op == "lend":
        if e == errno.ENOENT:
            return "no node named %s in the cluster (nodes: %s)" % (
                _and(_unknown_nodes(c, (policy or "").replace(",", " ").split())),
                ", ".join(_nodes(c)))
        if e == errno.EINVAL:
            return "'%s' is not a lend policy: none or all alone, or node names" % policy
        if e == errno.EBUSY:
            return ("%s is borrowed by %s, whom policy '%s' leaves out: return "
                    "or reclaim it first" % (dev, _and(borrowers), policy))
    if op in ("borrow", "return") and node is not None:
        if node not in _nodes(c):
            return "there is no node named %s (nodes: %s)" % (node, ", ".join(_nodes(c)))
    if op == "borrow":
        if e == errno.EACCES:
            return "%s %s: %s may not borrow it" % (dev, _policy_words(c, dev), node)
        if e == errno.EBUSY:
            if node in borrowers:
                return "%s already borrows %s" % (node, dev)
            return "%s is borrowed by %s in %s mode" % (dev, _and(borrowers), devmode)
        if e == errno.EINVAL and node == lender:
            return "%s is the lender of %s and cannot borrow its own device" % (node, dev)
        if e == errno.EHOSTDOWN:
            down = [n for n in (lender, node) if _down(c, n)]
            if lender in down:
                return "%s's lender %s is down" % (dev, lender)
            if down:
                return "the borrowing node %s is down" % node
            # Both nodes up: an adapter's link on the path is what is down.
            links = _links_down(c, (node, lender))
            if links:
                return "%s: %s cannot reach %s, the lender of %s" % (
                    "; ".join(links), node, lender, dev)
            return "%s or %s went down during the borrow" % (lender, node)
        if e == errno.ENOSPC:
            full = _space(c, node, lender)
            if full:
                return "no room on the path from %s to %s: %s" % (node, lender, "; ".join(full))
            return "no look-up table, requester or window space left between %s and %s" % (
                node, lender)
        if e == errno.EHOSTUNREACH:
            return "no NTB adapter of %s reaches %s, the lender of %s" % (node, lender, dev)
    if op == "return" and e == errno.EINVAL:
        if borrowers:
            return "%s does not borrow %s (borrowed by %s)" % (node, dev, _and(borrowers))
        return "%s does not borrow %s (nobody borrows it)" % (node, dev)
    if op == "config" and e == errno.EACCES:
        me = _self(c)
        if me != lender and me not in borrowers:
            return ("%s is neither the lender of %s (%s) nor a borrower: it may not "
                    "write its configuration space" % (me, dev, lender))
    if op == "reclaim" and e == errno.EACCES:
        return ("only %s's lender %s may reclaim it; this mount is %s"
                % (dev, lender, _self(c)))
    if op == "sriov":
        enabled = _read(c, "dev", dev, "sriov_numvfs")
        if e == errno.ERANGE:
            return "%s has %s virtual functions: %s is more" % (
                dev, _read(c, "dev", dev, "sriov_totalvfs"), numvfs)
        if e == errno.EBUSY and str(numvfs) != "0" and enabled not in (None, "0"):
            return ("%s has %s virtual functions enabled: disable them first "
                    "(sriov %s 0), as in Linux" % (dev, enabled, dev))
        if e == errno.EBUSY:
            return ("a virtual function of %s is borrowed or mapped: return or "
                    "unmap it first" % dev)
    if op == "mode":
        if e == errno.EINVAL:
            return "'%s' is not a mode: give exclusive or shared" % mode
        if e == errno.EBUSY:
            return "%s's mode cannot change while it is borrowed by %s" % (dev, _and(borrowers))
    return None


def _segment(c, op, e, node, seg, size=None, available=None, target=None, dev=None, **_):
    name = "%s.%s" % (node, seg)
    if node not in _nodes(c):
        return "there is no node named %s (nodes: %s)" % (node, ", ".join(_nodes(c)))
    here = ("nodes", node, "segments", seg)
    if e in (errno.EPERM, errno.EACCES):
        return None     # who may act, not the segment's state: the general sentence
    if op == "segment-create":
        if e == errno.EEXIST:
            return "segment %s already exists (%s bytes)" % (name, _read(c, *here, "size"))
        if e == errno.EINVAL:
            return ("'%s' is not a segment name: letters, digits, _ and -, "
                    "at most 31 characters" % seg)
        if e == errno.EHOSTDOWN:
            return "%s, the owner of %s, is down" % (node, name)
    if not _exists(c, *here):
        return "there is no segment %s" % name
    attached = _list(c, *here, "attached")
    others = [n for n in attached if n != node]
    if op == "segment-size":
        if e == errno.EINVAL:
            return ("'%s' is not a size for %s: a number of bytes, k, M or G, "
                    "more than zero and within the owner's memory" % (size, name))
        if e == errno.EBUSY:
            return "%s already has a size (%s bytes)" % (name, _read(c, *here, "size"))
        if e == errno.ENOMEM:
            held = [int(_read(c, "nodes", node, "segments", s, "size") or 0)
                    for s in sorted(os.listdir(c.path("nodes", node, "segments")))
                    if s != seg]
            return "%s has not enough free memory for %s (its other segments hold %s)" % (
                node, size, human_size(sum(held)))
    if op == "segment-destroy" and e == errno.EBUSY:
        dmas = sorted(os.listdir(c.path(*here, "dma")))
        why = []
        if others:
            why.append("attached by %s" % _holders(c, here, name, others))
        if dmas:
            why.append("mapped for %s" % _and(dmas))
        return "%s is %s" % (name, " and ".join(why) if why else "in use")
    if op == "segment-export" and e == errno.EBUSY:
        return "%s cannot be withdrawn while attached by %s" % (
            name, _holders(c, here, name, others))
    if op == "segment-export" and e == errno.EINVAL:
        return "%s has no size yet: set it before exporting" % name
    if op == "segment-detach" and e == errno.EINVAL:
        return "%s is not attached to %s" % (target, name)
    if op == "segment-detach" and e == errno.ENOENT:
        return "there is no node named %s" % target
    if op == "segment-dma-map":
        if e == errno.EEXIST:
            return "%s is already mapped for %s" % (name, dev)
        if e == errno.ENXIO:
            return "there is no device named %s" % dev
    if op == "segment-dma-unmap" and e == errno.ENOENT:
        return "%s is not mapped for %s" % (name, dev)
    if op == "segment-map" and e == errno.ENOENT:
        return "%s is not exported, or has no size: it cannot be mapped here" % name
    return None


def _multicast(c, op, e, group, size=None, target=None, buffer=None, dev=None, **_):
    here = ("multicast", group)
    # The multicast sentences are smartio(1)'s MULTICAST paragraph, tested
    # in tests/python/test_cli_multicast.py (not rows of TABLE, whose
    # every row test_smartio_cli.sh sees on a cluster with no switch).
    if e in (errno.EPERM, errno.EACCES) and op != "multicast-dma-map":
        return None     # who may act: the general sentence
    if op == "multicast-create":
        if e == errno.EOPNOTSUPP:
            return "no switch of the cluster has multicast groups"
        if e == errno.ENOSPC:
            return "every multicast group of the cluster's switches is taken (groups: %s)" % (
                ", ".join(sorted(os.listdir(c.path("multicast")))))
        if e == errno.EEXIST:
            return "multicast group %s already exists (on %s)" % (
                group, _read(c, *here, "switch"))
        if e == errno.EINVAL:
            return ("'%s' is not a group name: letters, digits, _ and -, "
                    "at most 31 characters" % group)
    if op == "multicast-size" and e == errno.EINVAL:
        return ("'%s' is not a size for multicast group %s: whole pages, "
                "more than zero, at most 1G" % (size, group))
    if not _exists(c, *here):
        return "there is no multicast group named %s" % group
    members = _list(c, *here, "members")
    try:
        dmas = sorted(os.listdir(c.path(*here, "dma")))
    except OSError:
        dmas = []
    busy = []
    if members:
        busy.append("members %s" % _and(members))
    if dmas:
        busy.append("is mapped for %s" % _and(dmas))
    busy = "has " + " and ".join(busy) if busy else "is in use"
    busy = busy.replace("has is mapped", "is mapped")
    sw = _read(c, *here, "switch")
    if op == "multicast-size":
        if e == errno.EBUSY:
            return "multicast group %s %s: its size is fixed" % (group, busy)
    if op == "multicast-destroy" and e == errno.EBUSY:
        return "multicast group %s %s: leave and unmap first" % (group, busy)
    if op in ("multicast-join", "multicast-leave") and target not in _nodes(c):
        return "there is no node named %s (nodes: %s)" % (target, ", ".join(_nodes(c)))
    if op == "multicast-join":
        if e == errno.EXDEV:
            return "%s is not cabled to %s, the switch of multicast group %s" % (
                target, sw, group)
        if e == errno.EEXIST:
            return "%s is already a member of multicast group %s" % (target, group)
        if e == errno.ENOENT:
            return "%s has no segment %s" % (target, buffer)
        if e == errno.ENXIO:
            return "there is no device named %s" % (buffer or "").partition("/")[0]
        if e == errno.ENOSPC:
            return "%s's %s is smaller than multicast group %s (%s bytes)" % (
                target, buffer, group, _read(c, *here, "size"))
        if e == errno.EINVAL:
            return ("'%s' is not a buffer of %s: a segment of it, or DEV/barN of a "
                    "device installed in it" % (buffer, target))
    if op == "multicast-leave" and e == errno.ENOENT:
        return "%s is not a member of multicast group %s (members: %s)" % (
            target, group, _and(members) or "none")
    if op == "multicast-dma-map":
        lender = _read(c, "dev", dev, "node")
        if e == errno.ENXIO or lender is None:
            return "there is no device named %s" % dev
        if e == errno.EACCES:
            return ("only %s's lender %s or a borrower may map it for a multicast "
                    "group; this mount is %s" % (dev, lender, _self(c)))
        if e == errno.EXDEV:
            return "%s's lender %s is not cabled to %s, the switch of multicast group %s" % (
                dev, lender, sw, group)
        if e == errno.EEXIST:
            return "multicast group %s is already mapped for %s" % (group, dev)
    if op == "multicast-dma-unmap" and e == errno.ENOENT:
        return "multicast group %s is not mapped for %s" % (group, dev)
    return None


def explain(c, op, e, **ctx):
    """The sentence for errno e of operation op, with ctx naming the device
    (dev=), node (node=), segment (seg=) and value written."""
    s = None
    try:
        if op.startswith("segment"):
            s = _segment(c, op, e, **ctx)
        elif op.startswith("multicast"):
            s = _multicast(c, op, e, **ctx)
        elif "dev" in ctx:
            s = _device(c, op, e, **ctx)
    except OSError:
        s = None
    if s:
        return s
    if e == errno.EACCES:
        return ("permission denied: only root, the user running smartiofs or its "
                "operator group may change the cluster")
    if e == errno.EPERM:
        return ("this mount acts only for its own node: use that node's mount "
                "or a management mount (smartiofs --manage)")
    if e == errno.EHOSTDOWN:
        return "a node on the path is down"
    if e == errno.ENOSPC:
        return "no look-up table, requester or window space left on an adapter on the path"
    if e == errno.EROFS:
        return "that attribute is read-only"
    return "%s failed: %s" % (op, os.strerror(e))
