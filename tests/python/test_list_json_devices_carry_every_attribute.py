# SPDX-License-Identifier: GPL-2.0-or-later
"""`smartio list -J` carries every attribute of a device's directory
(issue 32 item 17): resource, the BARs this mount maps, dma_window, msi,
irq vectors, peer mappings and SR-IOV beside the ids, state and policy,
each equal to what its file holds.  acc0 (host2's DMA engine) is borrowed
by host0 with MSI-X enabled and mapped to reach nvme0's BARs."""
import json
import os
import struct

from smartio import cli

# A file of dev/<dev>/ -> the key that carries it; None: none can (config
# is binary, return and reclaim are write-only).
KEY = {"borrow": "borrowers", "config": None, "return": None, "reclaim": None,
       "sriov_totalvfs": "sriov", "sriov_numvfs": "sriov", "sriov_pf": "sriov"}


def cat(c, *parts):
    with open(c.path(*parts)) as f:
        return f.read().rstrip("\n")


def enable_msix(c, dev):
    fd = os.open(c.path("dev", dev, "config"), os.O_RDWR)
    try:
        cfg = os.pread(fd, 256, 0)
        pos = cfg[0x34]
        while cfg[pos] != 0x11:
            pos = cfg[pos + 1]
        ctl = struct.unpack_from("<H", cfg, pos + 2)[0]
        os.pwrite(fd, struct.pack("<H", ctl | 0x8000), pos + 2)
    finally:
        os.close(fd)


def test_list_json_devices_carry_every_attribute(cluster, capsys):
    acc = cluster.device("acc0")
    acc.lend("all")
    acc.borrow("host0")
    enable_msix(cluster, "acc0")
    cluster.device("nvme0").lend("all")
    acc.peer_map("nvme0")
    try:
        assert cli.main(["-m", cluster.root, "list", "-J"]) == 0
        devs = {d["name"]: d for d in json.loads(capsys.readouterr()[0])["devices"]}
        for name, d in devs.items():
            files = os.listdir(cluster.path("dev", name))
            keys = {KEY.get(f, "mapped_bars" if f.startswith("bar") else f) for f in files}
            assert keys - {None} <= set(d), (name, keys - set(d))
            # resource: each BAR that exists, as its line says
            lines = cat(cluster, "dev", name, "resource").splitlines()
            for r in d["resource"]:
                start, end, flags = (int(x, 16) for x in lines[r["bar"]].split())
                assert (int(r["start"], 16), int(r["end"], 16), int(r["flags"], 16),
                        r["size"]) == (start, end, flags, end - start + 1)
            assert len(d["resource"]) == sum(1 for l in lines if int(l.split()[1], 16))
            assert d["mapped_bars"] == sorted(int(f[3:]) for f in files
                                              if f.startswith("bar") and f[3:].isdigit())
            assert [" ".join((w["node"], w["iova"], str(w["size"]))) for w in d["dma_window"]] \
                == cat(cluster, "dev", name, "dma_window").splitlines()
            assert [" ".join((m["vec"], m["node"], m["addr"], m["data"])) for m in d["msi"]] \
                == cat(cluster, "dev", name, "msi").splitlines()
            assert d["irq"] == sorted(int(v) for v in os.listdir(cluster.path("dev", name, "irq")))
        a = devs["acc0"]
        assert [w["node"] for w in a["dma_window"]] == ["host0"]
        assert a["msi"] and a["irq"] == sorted(int(m["vec"]) for m in a["msi"])
        bars = {int(b): int(v, 16) for b, v in a["peers"]["nvme0"].items()}
        assert bars and bars == {
            int(e[3:]): int(cat(cluster, "dev/acc0/peers/nvme0", e), 16)
            for e in os.listdir(cluster.path("dev/acc0/peers/nvme0"))}
        assert a["sriov"] is None
    finally:
        acc.peer_unmap("nvme0")
        acc.return_("host0")


def test_list_json_carries_sriov(fabric, capsys):
    import smartio
    here = os.path.dirname(os.path.abspath(__file__))
    c = smartio.Cluster(fabric.mount("m0", "--topology",
                                     os.path.join(here, "..", "fs", "sriov.conf")))
    pf = next(d for d in c.devices if d.sriov is not None)
    pf.set_numvfs(1)
    try:
        assert cli.main(["-m", c.root, "list", "-J"]) == 0
        devs = {d["name"]: d for d in json.loads(capsys.readouterr()[0])["devices"]}
        assert devs[pf.name]["sriov"] == {"numvfs": 1, "totalvfs": pf.sriov[1]}
        vfs = [n for n, d in devs.items() if d["sriov"] == {"pf": pf.name}]
        assert len(vfs) == 1
    finally:
        pf.set_numvfs(0)
