#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""SIGKILL of smartiofs while its watcher thread waits in the kernel for a
directory lock that a client's lookup holds, the lookup itself waiting for
the killed daemon's answer: the deadlock that only a FUSE connection abort
ends.  smartiofs's reaper child must abort the connection itself, so the
daemon finishes exiting and the client gets an error instead of hanging.

The scene is built deterministically, not by luck: the daemon's request
threads are frozen with ptrace (the watcher, heartbeat and device-model
threads keep running), a client's lookup of a missing name in
nodes/host0/segments is left waiting, and host0 removes a segment whose
entry the victim has cached there, so the watcher's invalidation waits on
that directory.  Then the daemon is SIGKILLed.
"""
import ctypes
import os
import signal
import subprocess
import sys
import time

from sfshelp import Cluster, fail, passed, write

PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4206, 0x4207
WALL = 0x40000000

if os.geteuid() != 0:
    print("SKIP: test_reaper: needs root (ptrace, fusectl)")
    raise SystemExit(77)
if not os.path.isdir("/sys/fs/fuse/connections"):
    print("SKIP: test_reaper: this kernel has no fusectl")
    raise SystemExit(77)
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p,
                        ctypes.c_void_p]


def threads(pid):
    out = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                out[int(t)] = f.read().strip()
        except OSError:
            pass
    return out


def state(pid, tid):
    try:
        with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def wait_for(what, cond, timeout=5.0):
    t = time.time()
    while not cond():
        if time.time() - t > timeout:
            fail("timed out waiting for %s" % what)
        time.sleep(0.01)


def abort(mnt):
    """Cleanup only: the test has already failed if this is needed."""
    subprocess.call(["mount", "-t", "fusectl", "fusectl",
                     "/sys/fs/fuse/connections"], stderr=subprocess.DEVNULL)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[4] == mnt:
                with open("/sys/fs/fuse/connections/%s/abort" %
                          fields[2].split(":")[1], "w") as a:
                    a.write("1")


c = Cluster()
A = c.mount("m0", "--node", "host0")
V = c.mount("m1", "--node", "host1")
victim = c.procs[V]
seg = os.path.join(A, "self/segments/gone")
os.mkdir(seg)
if write(os.path.join(seg, "size"), "64K"):
    fail("cannot size the segment")
cached = os.path.join(V, "nodes/host0/segments/gone")
os.stat(cached)                 # the victim now has its entry
# The client's lookup starts in this directory, so that no entry of the
# path above it (1 s timeouts, long past on a loaded machine) has to be
# revalidated first: its one request is the lookup that holds the lock.
segdir = os.open(os.path.dirname(cached), os.O_RDONLY | os.O_DIRECTORY)

names = threads(victim.pid)
if "sfs-watch" not in names.values():
    fail("no thread named sfs-watch in smartiofs: %r" % names)
watcher = [t for t, n in names.items() if n == "sfs-watch"][0]
frozen = [t for t, n in names.items() if n == "smartiofs"]
for t in frozen:
    if libc.ptrace(PTRACE_SEIZE, t, None, None) or \
            libc.ptrace(PTRACE_INTERRUPT, t, None, None):
        err = ctypes.get_errno()
        if err in (1, 38):      # EPERM, ENOSYS: ptrace is not allowed here
            print("SKIP: test_reaper: ptrace: %s" % os.strerror(err))
            victim.kill()
            raise SystemExit(77)
        fail("ptrace %d: %s" % (t, os.strerror(err)))
for t in frozen:
    # Take each stop report now: waitpid() must not mistake one later for
    # the daemon's exit (nor subprocess think it is gone: no Popen calls).
    os.waitpid(t, WALL)
    wait_for("thread %d to stop" % t, lambda: state(victim.pid, t) == "t")

# A client's lookup holds nodes/host0/segments while it waits for an answer.
client = subprocess.Popen(
    [sys.executable, "-c", "import os,sys\ntry:\n"
     " os.stat('missing', dir_fd=int(sys.argv[1]))\n"
     "except OSError as e:\n print(e.errno)\n", str(segdir)],
    stdout=subprocess.PIPE, text=True, pass_fds=(segdir,))


def wchan(pid):
    try:
        with open("/proc/%d/wchan" % pid) as f:
            return f.read()
    except OSError:
        return ""


# The client is a new interpreter: on a loaded machine it may take
# seconds to start and send its lookup, which must be waiting for the
# frozen daemon (holding the directory) before host0's rmdir.
wait_for("the client's lookup to wait for the daemon",
         lambda: client.poll() is not None or "request_wait" in
         wchan(client.pid) or "fuse" in wchan(client.pid), timeout=30.0)
if client.poll() is not None:
    fail("the lookup was answered although every request thread is frozen")

os.rmdir(seg)                   # the victim's watcher invalidates "gone"
wait_for("the watcher to wait in the kernel",
         lambda: state(victim.pid, watcher) == "D", timeout=30.0)

t0 = time.time()
os.kill(victim.pid, signal.SIGKILL)
gone = False
while time.time() - t0 < 5 and not gone:
    gone = not os.path.exists("/proc/%d/task/%d" % (victim.pid, watcher))
    time.sleep(0.01)
took = time.time() - t0
if not gone:
    abort(V)
    fail("the killed daemon was still stuck after 5 s: its reaper did not "
         "abort the FUSE connection")
# Traced threads are reaped by their tracer, the leader last (its exit is
# reported only once the others are reaped).
for t in sorted(frozen, key=lambda t: t == victim.pid):
    try:
        os.waitpid(t, WALL)
    except ChildProcessError:
        pass
try:
    out, _ = client.communicate(timeout=5)
except subprocess.TimeoutExpired:
    with open("/proc/%d/wchan" % client.pid) as f:
        where = f.read()
    client.kill()
    fail("the client's lookup still hangs (in %s) after the daemon exited"
         % where)
if out.strip() not in ("103", "107"):       # ECONNABORTED, ENOTCONN
    fail("the client's lookup ended with %r, not ENOTCONN" % out.strip())
c.log.flush()
with open(c.log.name, errors="replace") as f:
    said = [l for l in f if "aborted" in l]
if not said:
    fail("the reaper said nothing on standard error")
passed("killed with its watcher stuck in the kernel, smartiofs exited %.2f s "
       "later (its reaper aborted the connection); the client got ENOTCONN; "
       "stderr: %s" % (took, said[-1].strip()))
