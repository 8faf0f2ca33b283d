# SPDX-License-Identifier: GPL-2.0-or-later
"""Fixtures of the Python package's tests: real smartiofs mounts of a
private fabric (tests/fs/sfshelp.py), unmounted after each test."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fs"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import sfshelp  # noqa: E402

sfshelp.NAME = "pytest-smartio"


@pytest.fixture
def fabric():
    c = sfshelp.Cluster()
    yield c
    c.cleanup()
    c.procs.clear()


@pytest.fixture
def cluster(fabric):
    """The built-in four-node cluster in one process; self is host0."""
    import smartio
    return smartio.Cluster(fabric.mount("m0"))


@pytest.fixture
def two(fabric):
    """host0 and host1 served by two processes: (host0's, host1's) mount."""
    import smartio
    a = fabric.mount("m0", "--node", "host0")
    b = fabric.mount("m1", "--node", "host1")
    return smartio.Cluster(a), smartio.Cluster(b)
