#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 12, defect 3: who may do what through /smartio, for which node.

The checks of smartio(7) AUTHORIZATION, as a hostile local user through
-o allow_other (the test runs as root and drops to uid 65534 in forked
children):
  - everyone reads state, lists directories and reads the first 64 bytes
    of config (sysfs); events, config past 64 bytes and every write,
    mkdir, rmdir and truncate are refused with EACCES, chmod with EPERM;
    the cluster's state is unchanged afterwards and the daemon serves;
  - a member of the operator group (-o operator_group=, as a supplementary
    or primary group) may lend, create and size segments, read events and
    all of config, but not write config;
  - without an operator group, the daemon's group gives nothing;
  - a --node host1 mount acts for host1 only: `echo host2 > borrow` is
    EPERM, as are lending, sizing, creating and mapping host0's things,
    attaching another node; its own borrow and attach work, and the owner
    may detach host1 from its segment;
  - a --node host2 --manage mount (the management node) acts for host0.
"""
import errno
import json
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import Cluster, fail, passed, read, snapshot, write  # noqa: E402

NOBODY = 65534
SKIP = ("stats", "config")  # counters of config reads, and config itself
OPGID = 4242            # a gid with no group entry: the option takes numbers

if not any(l.strip() == "user_allow_other" for l in open("/etc/fuse.conf")) \
        and os.getuid() != 0:
    print("SKIP: test_authz: needs root or user_allow_other")
    sys.exit(77)

# The management view (one daemon serving every node) on its own fabric ...
mc = Cluster()
mc.fabric += "-m"
os.chmod(mc.tmp, 0o755)         # the mount points must be reachable by nobody
M = mc.mount("mgmt", "-o", "allow_other,operator_group=%d" % OPGID)
# ... and two single-node mounts of another fabric.
c = Cluster()
os.chmod(c.tmp, 0o755)
H0 = c.mount("h0", "--node", "host0", "-o", "allow_other")
H1 = c.mount("h1", "--node", "host1", "-o", "allow_other")


def P(root, *a):
    return os.path.join(root, *a)


def must(path, value, offset=None):
    rc = write(path, value, offset)
    if rc:
        fail("%r > %s: %s" % (value, path, errno.errorcode.get(rc, rc)))


def as_user(fn, uid=NOBODY, gid=NOBODY, groups=()):
    """fn() run in a child with these credentials; its JSON result."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups(list(groups))
            os.setgid(gid)
            os.setuid(uid)
            out = {"ok": fn()}
        except Exception as e:  # noqa: BLE001
            out = {"error": repr(e)}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        data += b
    os.close(r)
    os.waitpid(pid, 0)
    out = json.loads(data)
    if "error" in out:
        fail("as uid %d: %s" % (uid, out["error"]))
    return out["ok"]


def err(fn, *a):
    try:
        fn(*a)
        return 0
    except OSError as e:
        return e.errno


def opened(path, flags=os.O_RDONLY | os.O_NONBLOCK):
    fd = os.open(path, flags)
    os.close(fd)


def pread(path, size, off):
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.pread(fd, size, off).hex()
    finally:
        os.close(fd)


def expect(results, want):
    for k, v in results.items():
        if v != want.get(k, v):
            fail("%s: got %s, want %s" % (k, errno.errorcode.get(v, v),
                                          errno.errorcode.get(want[k], want[k])))


# --- setup, as root -------------------------------------------------------
must(P(M, "dev/nvme0/lend"), "all")
os.mkdir(P(M, "self/segments/seg0"))
must(P(M, "self/segments/seg0/size"), "64k")
must(P(M, "self/segments/seg0/available"), "1")
os.mkdir(P(M, "nodes/host1/segments/s1"))
must(P(M, "nodes/host1/segments/s1/size"), "64k")
must(P(M, "nodes/host1/segments/s1/available"), "1")
CFG = os.stat(P(M, "dev/nvme0/config")).st_size
cfg_root = pread(P(M, "dev/nvme0/config"), CFG, 0)
before = snapshot(M, SKIP)

# --- everyone: reads of state, nothing else -------------------------------
EA, EP = errno.EACCES, errno.EPERM
S0 = P(M, "self/segments/seg0")


def hostile():
    res = {}
    for f, v in (("dev/nvme1/lend", "all"), ("dev/nvme0/lend", "none"),
                 ("dev/nvme0/borrow", "host1"), ("dev/nvme0/mode", "shared"),
                 ("dev/nvme0/return", "host1"), ("dev/nvme0/reclaim", "1"),
                 ("self/segments/seg0/size", "1M"),
                 ("self/segments/seg0/available", "0"),
                 ("nodes/host1/segments/s1/attach", "host0"),
                 ("self/segments/seg0/detach", "host1")):
        res["write " + f] = write(P(M, f), v)
    res["config write"] = write(P(M, "dev/nvme0/config"), b"\x07\x00", 4)
    res["mkdir segment"] = err(os.mkdir, P(M, "self/segments/x"))
    res["rmdir segment"] = err(os.rmdir, S0)
    res["mkdir dma"] = err(os.mkdir, P(S0, "dma/nvme0"))
    res["mkdir peers"] = err(os.mkdir, P(M, "dev/nvme0/peers/nic0"))
    res["truncate lend"] = err(os.truncate, P(M, "dev/nvme0/lend"), 0)
    res["chmod"] = err(os.chmod, P(M, "dev/nvme0/lend"), 0o666)
    res["chown"] = err(os.chown, P(M, "dev/nvme0/lend"), NOBODY, NOBODY)
    res["open events"] = err(opened, P(M, "events"))
    res["unlink"] = err(os.unlink, P(M, "dev/nvme0/lend"))
    res["mkdir in dev"] = err(os.mkdir, P(M, "dev/x"))
    res["access W lend"] = os.access(P(M, "dev/nvme0/lend"), os.W_OK)
    res["access R state"] = os.access(P(M, "dev/nvme0/state"), os.R_OK)
    res["read state"] = read(P(M, "dev/nvme0/state"))
    res["read lend"] = read(P(M, "dev/nvme0/lend"))
    res["list"] = sorted(os.listdir(P(M, "dev/nvme0")))
    res["config"] = pread(P(M, "dev/nvme0/config"), CFG, 0)
    res["config at 64"] = pread(P(M, "dev/nvme0/config"), 16, 64)
    res["config at 60"] = pread(P(M, "dev/nvme0/config"), 16, 60)
    return res


h = as_user(hostile)
expect(h, {"chmod": EP, "chown": EP, "open events": EA, "unlink": EP,
           "mkdir in dev": EA})
for k, v in h.items():
    if (k.startswith("write") or k.startswith("mkdir") or k.startswith("rmdir")
            or k in ("config write", "truncate lend")) and v != EA:
        fail("nobody: %s: got %s, want EACCES" % (k, errno.errorcode.get(v, v)))
if h["access W lend"] or not h["access R state"]:
    fail("access(2) as nobody: W lend %s, R state %s" %
         (h["access W lend"], h["access R state"]))
if h["read state"] != "available\n" or h["read lend"] != "all\n" or \
        "lend" not in h["list"]:
    fail("nobody cannot read state: %r" % h)
if h["config"] != cfg_root[:128] or h["config at 64"] != "" or \
        h["config at 60"] != cfg_root[120:128]:
    fail("nobody's config: %d bytes, at 64 %r, at 60 %r (want the 64-byte "
         "header only)" % (len(h["config"]) // 2, h["config at 64"],
                          h["config at 60"]))
after = snapshot(M, SKIP)
if after != before:
    fail("refused requests changed the cluster's state: %r" %
         sorted((k, before.get(k), after.get(k)) for k in set(before) | set(after)
                if before.get(k) != after.get(k))[:5])
if not mc.alive(M) or read(P(M, "dev/nvme0/state")) != "available\n":
    fail("the daemon stopped serving")
st = os.stat(P(M, "dev/nvme0/lend"))
if stat.S_IMODE(st.st_mode) != 0o664 or st.st_gid != OPGID:
    fail("lend: mode %o gid %d, want 664 and the operator group" %
         (stat.S_IMODE(st.st_mode), st.st_gid))
if stat.S_IMODE(os.stat(P(M, "events")).st_mode) != 0o440:
    fail("events mode %o" % stat.S_IMODE(os.stat(P(M, "events")).st_mode))


# --- the operator group ---------------------------------------------------
def operator():
    res = {}
    res["open events"] = err(opened, P(M, "events"))
    res["config"] = len(pread(P(M, "dev/nvme0/config"), CFG, 0)) // 2
    res["lend"] = write(P(M, "dev/nvme1/lend"), "all")
    res["mkdir"] = err(os.mkdir, P(M, "self/segments/op"))
    res["size"] = write(P(M, "self/segments/op/size"), "64k")
    res["rmdir"] = err(os.rmdir, P(M, "self/segments/op"))
    res["config write"] = write(P(M, "dev/nvme0/config"), b"\x07\x00", 4)
    res["chmod"] = err(os.chmod, P(M, "dev/nvme0/lend"), 0o666)
    return res


o = as_user(operator, groups=(OPGID,))
expect(o, {"open events": 0, "config": CFG, "lend": 0, "mkdir": 0, "size": 0,
           "rmdir": 0, "config write": EA, "chmod": EP})
if read(P(M, "dev/nvme1/lend")) != "all\n":
    fail("operator's lend did not take")
o = as_user(lambda: write(P(M, "dev/nvme1/lend"), "none"), gid=OPGID)
if o != 0 or read(P(M, "dev/nvme1/lend")) != "none\n":
    fail("operator by primary group: %s" % errno.errorcode.get(o, o))

# --- no operator group: the daemon's group (root) is nobody special -------
o = as_user(lambda: (write(P(H0, "dev/nvme0/lend"), "all"),
                     err(opened, P(H0, "events")),
                     stat.S_IMODE(os.stat(P(H0, "dev/nvme0/lend")).st_mode)),
            gid=0, groups=(0,))
if o != [EA, EA, 0o644]:
    fail("group root without operator_group: %r" % o)

# --- a --node mount acts for its own node --------------------------------
must(P(H0, "dev/nvme0/lend"), "all")
os.mkdir(P(H0, "self/segments/t"))
must(P(H0, "self/segments/t/size"), "64k")
must(P(H0, "self/segments/t/available"), "1")
before = snapshot(H1, SKIP)
T = P(H1, "nodes/host0/segments/t")
n = {"borrow for host2": write(P(H1, "dev/nvme0/borrow"), "host2"),
     "host0 borrows for host1": write(P(H0, "dev/nvme0/borrow"), "host1"),
     "lend host0's device": write(P(H1, "dev/nvme0/lend"), "none"),
     "mode of host0's device": write(P(H1, "dev/nvme0/mode"), "shared"),
     "size host0's segment": write(P(T, "size"), "1M"),
     "available of host0's segment": write(P(T, "available"), "0"),
     "attach for host2": write(P(T, "attach"), "host2"),
     "detach host2 from host0's": write(P(T, "detach"), "host2"),
     "mkdir host0's segment": err(os.mkdir, P(H1, "nodes/host0/segments/x")),
     "rmdir host0's segment": err(os.rmdir, T),
     "dma map host0's segment": err(os.mkdir, P(T, "dma/nvme0")),
     "return for host0": write(P(H1, "dev/nvme0/return"), "host0")}
for k, v in n.items():
    if v != EP:
        fail("--node host1: %s: got %s, want EPERM" % (k, errno.errorcode.get(v, v)))
if snapshot(H1, SKIP) != before or read(P(H0, "dev/nvme0/borrow")) != "":
    fail("refused node-scope requests changed state")
must(P(H1, "dev/nvme0/borrow"), "host1")
if read(P(H0, "dev/nvme0/borrow")) != "host1\n":
    fail("host1's own borrow did not take")
must(P(H1, "dev/nvme0/return"), "host1")
must(P(T, "attach"), "host1")
must(P(H0, "self/segments/t/detach"), "host1")  # the owner may detach anyone
if read(P(H0, "self/segments/t/attached")) != "":
    fail("owner's detach of host1 did not take")
os.rmdir(P(H0, "self/segments/t"))

# --manage: this --node mount serves the cluster's management node.
H2 = c.mount("h2", "--node", "host2", "--manage", "-o", "allow_other")
os.mkdir(P(H2, "nodes/host0/segments/m"))
must(P(H2, "nodes/host0/segments/m/size"), "64k")
if read(P(H0, "self/segments/m/size")) != "65536\n":
    fail("the management node's segment for host0 not seen by host0")
os.rmdir(P(H2, "nodes/host0/segments/m"))
for m, cl in ((M, mc), (H0, c), (H1, c), (H2, c)):
    if not cl.alive(m):
        fail("daemon of %s died" % m)
passed("nobody reads state and 64 bytes of config, nothing else; operators "
       "act; --node host1 acts for host1 only")
