# SPDX-License-Identifier: GPL-2.0-or-later
"""smartio(1)'s ways to narrow what it prints, against a real mount:
`list DEV...` and `list -o COLUMNS` (as lsblk), `status NODE...` (as
`ip link show dev X`), and `--version` after any command, which names the
release that configure.ac and python/pyproject.toml name too."""
import json
import os
import re

import pytest

import smartio
from smartio import cli

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def run(capsys, *args):
    try:
        rc = cli.main(list(args))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_list_names_devices(cluster, capsys):
    rc, out, err = run(capsys, "-m", cluster.root, "list", "nvme1", "nic0")
    assert rc == 0
    rows = out.splitlines()
    assert rows[0].split() == ["DEVICE", "NODE", "BDF", "CLASS", "STATE", "LEND",
                               "BORROWERS", "MODE"]
    assert [r.split()[0] for r in rows[1:]] == ["nvme1", "nic0"]
    rc, out, err = run(capsys, "-m", cluster.root, "list", "-J", "nvme0")
    assert [d["name"] for d in json.loads(out)["devices"]] == ["nvme0"]
    rc, out, err = run(capsys, "-m", cluster.root, "list", "nvme9")
    assert rc == 1 and err.startswith("smartio: there is no device named nvme9 (devices: ")
    rc, out, err = run(capsys, "-m", cluster.root, "list", "--tree", "nvme0")
    assert rc == 2 and "--tree and --dot draw the whole cluster" in err


def test_list_columns(cluster, capsys):
    d = cluster.device("nvme0")
    rc, out, err = run(capsys, "-m", cluster.root, "list", "-o", "device,vendor,state,fdid", "nvme0")
    assert rc == 0
    assert [r.split() for r in out.splitlines()] == [
        ["DEVICE", "VENDOR", "STATE", "FDID"],
        ["nvme0", "%#06x" % d.vendor, d.state, d.read("fdid")]]
    rc, out, err = run(capsys, "-m", cluster.root, "list", "-o", "device,colour")
    assert rc == 2 and "'colour' is not a column" in err
    rc, out, err = run(capsys, "-m", cluster.root, "list", "-o", "device", "-J")
    assert rc == 2 and "-o chooses the table's columns" in err


def test_status_names_nodes(cluster, capsys):
    rc, out, err = run(capsys, "-m", cluster.root, "status", "host1")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].startswith("host1  up")
    assert not any(l.startswith(("host0", "host2", "host3")) for l in lines)
    assert lines[-1] == "host1: all nodes and links up"
    with open(cluster.path("nodes/host1/adapters/ntb0/link"), "w") as f:
        f.write("down")
    rc, out, err = run(capsys, "-m", cluster.root, "status", "host1")
    assert rc == 1 and out.splitlines()[-1] == "host1: link of ntb0 on host1 is down"
    rc, out, err = run(capsys, "-m", cluster.root, "status", "host2")
    assert rc == 0
    rc, out, err = run(capsys, "-m", cluster.root, "status", "--prometheus", "host2")
    assert 'node="host2"' in out and 'node="host1"' not in out
    rc, out, err = run(capsys, "-m", cluster.root, "status", "host9")
    assert rc == 1 and "there is no node named host9" in err


def _release():
    with open(os.path.join(TOP, "configure.ac")) as f:
        ac = re.search(r"AC_INIT\(\[smartio\], \[([^]]+)\]", f.read()).group(1)
    with open(os.path.join(TOP, "python", "pyproject.toml")) as f:
        py = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
    return ac, py


@pytest.mark.parametrize("cmd", [
    [], ["list"], ["show"], ["status"], ["lend"], ["borrow"], ["return"],
    ["reclaim"], ["mode"], ["segment"], ["segment", "create"], ["segment", "apply"],
    ["watch"]])
def test_version_after_any_command(capsys, cmd):
    ac, py = _release()
    assert ac == py == smartio.__version__
    rc, out, err = run(capsys, *(cmd + ["--version"]))
    assert rc == 0 and out == "smartio %s\n" % ac
