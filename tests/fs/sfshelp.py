# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared by the Python tests of smartiofs: mounting daemons and cleanup.

Every test mounts real FUSE file systems under a temporary directory, uses a
fabric name of its own and unmounts everything on exit.  SMARTIOFS names the
daemon (default: fs/smartiofs of the build tree); SMARTIOFS_WRAPPER, a
command line to run it under (valgrind: make check-valgrind).
"""
import atexit
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAME = os.path.splitext(os.path.basename(sys.argv[0]))[0]


def find_daemon():
    cands = [os.environ.get("SMARTIOFS", "")]
    cands += [os.path.join(os.environ.get("BUILDDIR", "."), "fs", "smartiofs"),
              os.path.join(TOP, "fs", "smartiofs")]
    for c in cands:
        if c and os.access(c, os.X_OK):
            return os.path.abspath(c)
    return None


def fail(msg):
    print("FAIL: %s: %s" % (NAME, msg))
    sys.stdout.flush()
    sys.exit(1)


def passed(msg=""):
    print("PASS: %s%s" % (NAME, (": " + msg) if msg else ""))


class Cluster:
    """Daemons of one fabric, each mounted at its own directory."""

    def __init__(self):
        if not os.path.exists("/dev/fuse") or not shutil.which("fusermount3"):
            print("SKIP: %s: /dev/fuse or fusermount3 is missing" % NAME)
            sys.exit(77)
        self.daemon = find_daemon()
        if not self.daemon:
            fail("smartiofs is not built")
        self.tmp = tempfile.mkdtemp(prefix="sfs-%s." % NAME)
        self.fabric = "p%d-%s" % (os.getpid(), NAME.replace("_", "-"))
        self.procs = {}
        self.log = open(os.path.join(self.tmp, "daemon.log"), "ab")
        atexit.register(self.cleanup)
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, lambda *a: sys.exit(1))

    def mount(self, name, *opts):
        """Mounts a daemon at <tmp>/<name>; returns the mount point."""
        mnt = os.path.join(self.tmp, name)
        os.makedirs(mnt, exist_ok=True)
        wrapper = shlex.split(os.environ.get("SMARTIOFS_WRAPPER", ""))
        p = subprocess.Popen(wrapper + [self.daemon, "-f", "--fabric", self.fabric] +
                             list(opts) + [mnt], stdout=self.log,
                             stderr=self.log)
        self.procs[mnt] = p
        t = time.time()
        while not self.mounted(mnt):
            if p.poll() is not None:
                fail("smartiofs %s exited with %d" % (" ".join(opts), p.returncode))
            if time.time() - t > (60 if wrapper else 30):
                fail("mounting %s timed out" % mnt)
            time.sleep(0.05)
        return mnt

    @staticmethod
    def mounted(mnt):
        with open("/proc/mounts") as f:
            return any(l.split()[1] == mnt for l in f)

    def alive(self, mnt):
        return self.procs[mnt].poll() is None

    def kill(self, mnt, sig=signal.SIGKILL):
        self.procs[mnt].send_signal(sig)
        self.procs[mnt].wait()

    def cleanup(self):
        for mnt, p in self.procs.items():
            subprocess.call(["fusermount3", "-u", "-z", mnt],
                            stderr=subprocess.DEVNULL)
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(3)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree("/dev/shm/smartio-" + self.fabric, ignore_errors=True)


def read(path):
    with open(path) as f:
        return f.read()


def write(path, data, offset=None):
    """One write(2) of data; returns 0 or the errno."""
    if isinstance(data, str):
        data = data.encode()
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as e:
        return e.errno
    try:
        if offset is None:
            n = os.write(fd, data)
        else:
            n = os.pwrite(fd, data, offset)
        if n != len(data):
            return -1
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


def stats(mount):
    """The daemon's request and inode counters (smartiofs --stats: the
    user.smartiofs.stats xattr of the mount's root), by name."""
    raw = os.getxattr(mount, "user.smartiofs.stats").decode()
    return {k: int(v) for k, v in (l.split() for l in raw.splitlines())}


def asked(before, after):
    """LOOKUP and GETATTR requests between two stats() of a mount: what
    the kernel asked because it did not trust a name or its attributes."""
    return (after["lookup"] - before["lookup"] +
            after["getattr"] - before["getattr"])


def gone_within(path, seconds):
    """Seconds until path (a symbolic link itself, not its target) is gone
    from its directory, or None if it is still there after seconds."""
    t = time.time()
    while time.time() - t < seconds:
        if not os.path.lexists(path):
            return time.time() - t
        time.sleep(0.01)
    return None


def snapshot(root, skip=()):
    """Contents of every readable file and the target of every symbolic
    link under root.  The events file and `mem` links are left alone: a
    remote segment's mem resolves only while attached (smartio(7)).  Uses the
    types from readdir, so nothing but the files read is looked up."""
    out = {}

    def walk(d):
        for e in os.scandir(d):
            rel = os.path.relpath(e.path, root)
            # irq/<vec> reads block until an interrupt, like events.
            if rel == "events" or e.name == "mem" or e.name in skip or \
                    os.path.basename(d) == "irq":
                continue
            if e.is_symlink():
                try:
                    out[rel + "@"] = os.readlink(e.path)
                except OSError as x:
                    out[rel + "@"] = "errno %d" % x.errno
            elif e.is_dir(follow_symlinks=False):
                walk(e.path)
            else:
                try:
                    with open(e.path, "rb") as f:
                        out[rel] = f.read()
                except OSError as x:
                    out[rel] = "errno %d" % x.errno

    walk(root)
    return out
