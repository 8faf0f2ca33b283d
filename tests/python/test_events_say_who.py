# SPDX-License-Identifier: GPL-2.0-or-later
"""Events say who and what (issue 32, item 17): a lend to named nodes names
them (policy=host1,host3, not policy=list); exporting and withdrawing a
segment are events (segment-export, segment-withdraw) that watch tells in
words; and list -J carries every attribute of an adapter's directory."""
import json

from smartio import cli
from smartio import events as evmod


def read_events(stream, n):
    out = []
    for ev in stream:
        out.append(ev)
        if len(out) == n:
            break
    return out


def test_lend_names_the_nodes_and_export_is_an_event(cluster, capsys):
    d = cluster.device("nvme1")
    with evmod.EventStream(cluster.path("events"), timeout=2) as stream:
        d.lend(["host0", "host3"])
        d.lend("all")
        seg = cluster.node("host2").create_segment("ring", "64k")
        seg.export()
        seg.withdraw()
        evs = read_events(stream, 5)
    assert [(e["kind"], e["object"], e.get("policy")) for e in evs] == [
        ("lend", "dev/nvme1", "host0,host3"), ("lend", "dev/nvme1", "all"),
        ("segment-create", "seg/host2.ring", None),
        ("segment-export", "seg/host2.ring", None),
        ("segment-withdraw", "seg/host2.ring", None)]
    words = [cli.describe(e).split(" ", 2)[2] for e in evs]
    assert words == ["nvme1 lent to host0, host3", "nvme1 lent to all nodes",
                     "segment host2.ring created", "segment host2.ring exported",
                     "segment host2.ring withdrawn"]
    seg.destroy()


def test_list_json_has_every_adapter_attribute(cluster, capsys):
    import os
    assert cli.main(["-m", cluster.root, "list", "-J"]) == 0
    snap = json.loads(capsys.readouterr()[0])
    a = snap["nodes"][0]["adapters"][0]
    files = sorted(os.listdir(cluster.path("nodes", snap["nodes"][0]["name"], "adapters", a["name"])))
    assert sorted(k for k in a if k != "name") == files
    hops = {}
    with open(cluster.path("nodes/host0/adapters/ntb0/speed")) as f:
        for line in f:
            w = line.split()
            hops[w[0]] = [int(x) for x in w[1:]]
    assert a["speed"] == hops
