#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The README's walkthrough, run as written against a real mount.

Every `$ ` line of the walkthrough's sh block is run with bash (with
/smartio replaced by the test's mount point), and the lines after it are
its expected output (stdout and stderr together).  A `...` in an expected
line matches anything; a line that is only `...` is not used.  So the
README cannot drift from what the system does.
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sfshelp import TOP, Cluster, fail, passed  # noqa: E402

SRC = os.environ.get("SRCDIR", TOP)


def walkthrough():
    text = open(os.path.join(SRC, "README.md")).read()
    m = re.search(r"## A walkthrough.*?```sh\n(.*?)```", text, re.S)
    if not m:
        fail("README.md has no walkthrough sh block")
    steps = []
    for line in m.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif line.strip() and not line.startswith("#"):
            if not steps:
                fail("output before any command: %r" % line)
            steps[-1][1].append(line)
    return steps


def matches(want, got):
    pattern = ".*".join(re.escape(p) for p in want.split("..."))
    # bash -c names the line where an interactive shell does not.
    got = re.sub(r"^bash: line \d+: ", "bash: ", got)
    return re.fullmatch(pattern, got) is not None


c = Cluster()
M = c.mount("m0")
events = os.path.join(c.tmp, "events.log")
steps = walkthrough()
for cmd, want in steps:
    run = cmd.replace("/tmp/smartio-events", events).replace("/smartio", M)
    if run.rstrip().split("#")[0].rstrip().endswith("&"):
        subprocess.Popen(["bash", "-c", run], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        continue
    want = [w for w in want if w.strip() != "..."]
    # The background event reader may not have written the last line yet.
    for attempt in range(30 if events in run else 1):
        p = subprocess.run(["bash", "-c", run], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        got = p.stdout.decode().replace(M, "/smartio").splitlines()
        ok = len(got) == len(want) and all(matches(w, g)
                                            for w, g in zip(want, got))
        if ok:
            break
        time.sleep(0.1)
    if not ok:
        fail("README step %r:\n  want %r\n  got  %r" % (cmd, want, got))
passed("%d README steps" % len(steps))
