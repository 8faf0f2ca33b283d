# SPDX-License-Identifier: GPL-2.0-or-later
"""`smartio show OBJECT` (smartio(1)): one device, node or segment in full,
as text lines and as JSON (-J), against a real mount.  Every value shown is
the one the namespace's files hold; vendor and device names come from
pci.ids (here a small one given through SMARTIO_PCI_IDS, so the test does
not depend on the machine's); a name that is nothing is refused with
ENOENT and the names that exist, exit 1."""
import json
import os

import pytest

from smartio import cli

PCI_IDS = """\
# a pci.ids with the built-in cluster's NVMe vendor only
1b36  Red Hat, Inc.
\t0010  QEMU NVM Express Controller
\t\t1b36 0010  QEMU NVMe test subsystem
8086  Intel Corporation
\t10d3  82574L Gigabit Network Connection
C 01  Mass storage controller
\t08  Non-Volatile memory controller
"""


def cat(c, *parts):
    with open(c.path(*parts)) as f:
        return f.read().rstrip("\n")


@pytest.fixture
def ids(tmp_path, monkeypatch):
    p = tmp_path / "pci.ids"
    p.write_text(PCI_IDS)
    monkeypatch.setenv("SMARTIO_PCI_IDS", str(p))


def run(capsys, c, *args):
    rc = cli.main(["-m", c.root, "show"] + list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_show_device_text_and_json(cluster, capsys, ids):
    d = cluster.device("nvme0")
    d.lend("all")
    d.borrow("host1")
    rc, out, err = run(capsys, cluster, "nvme0")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == ("nvme0: Non-Volatile memory controller: Red Hat, Inc. "
                        "QEMU NVM Express Controller (rev %s)" % cat(cluster, "dev/nvme0/revision")[2:])
    assert "\tLender: host0, %s" % cat(cluster, "dev/nvme0/bdf") in lines
    assert "\tState: borrowed, mode exclusive, lend all" in lines
    assert "\tBorrowers: host1" in lines
    node, iova, size = cat(cluster, "dev/nvme0/dma_window").split()
    assert "\tDMA windows: host1 at %s (%d MiB)" % (iova, int(size) >> 20) in lines
    start, end, flags = cat(cluster, "dev/nvme0/resource").splitlines()[0].split()
    region = [l for l in lines if l.startswith("\tRegion 0: ")]
    assert region and "at %#x" % int(start, 16) in region[0]

    rc, out, err = run(capsys, cluster, "dev/nvme0", "-J")
    assert rc == 0
    j = json.loads(out)
    assert (j["type"], j["schema"], j["name"], j["node"]) == ("device", "smartio-show/1", "nvme0", "host0")
    assert (j["vendor_name"], j["device_name"], j["subsystem_name"]) == (
        "Red Hat, Inc.", "QEMU NVM Express Controller", "QEMU NVMe test subsystem")
    assert j["borrowers"] == ["host1"] and j["lend"] == ["all"] and j["state"] == "borrowed"
    assert j["dma_window"] == [{"node": "host1", "iova": iova, "size": int(size)}]
    r0 = j["resource"][0]
    assert (r0["bar"], int(r0["start"], 16), int(r0["end"], 16)) == (0, int(start, 16), int(end, 16))
    assert r0["size"] == int(end, 16) - int(start, 16) + 1
    assert j["stats"]["borrows"] == 1
    d.return_("host1")


def test_show_node_text_and_json(cluster, capsys):
    rc, out, err = run(capsys, cluster, "host1")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "host1 (id %s): up" % cat(cluster, "nodes/host1/id")
    used, total = cat(cluster, "nodes/host1/adapters/ntb0/luts").split()
    ad = [l for l in lines if l.startswith("\tAdapter ntb0: ")]
    assert ad and "link up" in ad[0] and "luts %s/%s" % (used, total) in ad[0]
    devs = sorted(os.listdir(cluster.path("nodes/host1/devices")))
    assert "\tDevices: %s" % ", ".join(devs) in lines

    rc, out, err = run(capsys, cluster, "nodes/host0", "--json")
    j = json.loads(out)
    assert (j["type"], j["name"], j["self"], j["state"]) == ("node", "host0", True, "up")
    a = j["adapters"][0]
    assert a["name"] == "ntb0" and a["peers"] == cat(cluster, "nodes/host0/adapters/ntb0/peers").split()
    # What the adapter's files hold that list -J leaves out.
    rin = cat(cluster, "nodes/host0/adapters/ntb0/requesters_in").split()
    assert a["requesters_in"] == {"used": int(rin[0]), "total": int(rin[1])}
    hops = dict(l.split() for l in cat(cluster, "nodes/host0/adapters/ntb0/hops").splitlines())
    assert {k: v[0] for k, v in a["hops"].items()} == {k: int(v) for k, v in hops.items()}


def test_show_segment_text_and_json(cluster, capsys):
    seg = cluster.node("host2").create_segment("ring", "64k", available=True)
    rc, out, err = run(capsys, cluster, "host2.ring")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "host2.ring: 64 KiB segment of host2"
    assert "\tExported: yes" in lines
    rc, out, err = run(capsys, cluster, "seg/host2.ring", "-J")
    j = json.loads(out)
    assert (j["type"], j["fullname"], j["owner"], j["size"], j["available"]) == (
        "segment", "host2.ring", "host2", 65536, True)
    assert j["attached"] == cat(cluster, "nodes/host2/segments/ring/attached").split()
    seg.destroy()


def test_show_refuses_what_is_not_there(cluster, capsys):
    rc, out, err = run(capsys, cluster, "nvme9")
    assert rc == 1 and out == ""
    assert err.startswith("smartio: there is no device, node or segment named nvme9 (devices: ")
    assert err.rstrip().endswith("(ENOENT)")
    rc, out, err = run(capsys, cluster, "nodes/nvme0")
    assert rc == 1 and "there is no node named nvme0" in err
    rc, out, err = run(capsys, cluster, "host0.nope")
    assert rc == 1 and "named host0.nope" in err
    rc, out, err = run(capsys, cluster, "pci/nvme0")
    assert rc == 1 and "'pci/nvme0' is not an object" in err and err.rstrip().endswith("(EINVAL)")
