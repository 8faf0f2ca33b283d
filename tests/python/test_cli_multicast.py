# SPDX-License-Identifier: GPL-2.0-or-later
"""smartio multicast (issue 32 item 16): a switch's groups from the
command, as smartio(7)'s MULTICAST makes them with mkdir and echo:
create (with a size), join with a segment, map for a device (printing the
address it writes at), list in text and JSON (and in list -J), leave,
unmap, destroy; each refusal a sentence naming the cause, the group as
it was.  On tests/fs/multicast.conf: host0..host3 on sw0 (two groups),
host4 on sw1 (none)."""
import json
import os

import pytest

import smartio
from smartio import cli
from smartio import events as evmod

HERE = os.path.dirname(os.path.abspath(__file__))
CONF = os.path.join(HERE, "..", "fs", "multicast.conf")


def run(capsys, *args):
    try:
        rc = cli.main(list(args))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def cat(c, *parts):
    with open(c.path(*parts)) as f:
        return f.read().rstrip("\n")


@pytest.fixture
def mc(fabric):
    return smartio.Cluster(fabric.mount("m0", "--topology", CONF))


def refused(capsys, c, sentence, *args):
    before = sorted(os.listdir(c.path("multicast"))), [
        (cat(c, "multicast", g, "members"), cat(c, "multicast", g, "size"),
         sorted(os.listdir(c.path("multicast", g, "dma"))))
        for g in sorted(os.listdir(c.path("multicast")))]
    rc, out, err = run(capsys, "-m", c.root, *args)
    assert (rc, err) == (1, "smartio: %s\n" % sentence)
    after = sorted(os.listdir(c.path("multicast"))), [
        (cat(c, "multicast", g, "members"), cat(c, "multicast", g, "size"),
         sorted(os.listdir(c.path("multicast", g, "dma"))))
        for g in sorted(os.listdir(c.path("multicast")))]
    assert after == before


def test_multicast_create_join_map_list_and_undo(mc, capsys):
    m = mc.root
    for n in (1, 2):
        mc.node("host%d" % n).create_segment("mc", "8K")
    rc, out, err = run(capsys, "-m", m, "multicast", "create", "ident", "8K")
    assert (rc, out) == (0, "multicast group ident: 8 KiB on sw0\n"), err
    assert cat(mc, "multicast/ident/size") == "8192"
    for n in (1, 2):
        assert run(capsys, "-m", m, "multicast", "join", "ident", "host%d" % n, "mc")[0] == 0
    assert cat(mc, "multicast/ident/members") == "host1\nhost2"
    rc, out, err = run(capsys, "-m", m, "multicast", "map", "ident", "acc0")
    addr = int(cat(mc, "multicast/ident/dma/acc0/ioaddr"), 16)
    assert (rc, out) == (0, "acc0 writes into multicast group ident at %#x\n" % addr)
    rc, out, err = run(capsys, "-m", m, "multicast", "list")
    assert out == ("ident: 8 KiB on sw0, members host1, host2, mapped for acc0 at %#x, "
                   "0 writes, 0 delivered\n" % addr)
    rc, out, err = run(capsys, "-m", m, "multicast", "list", "-J")
    want = [{"name": "ident", "switch": "sw0", "size": 8192,
             "members": ["host1", "host2"], "dma": {"acc0": "%#x" % addr},
             "writes": 0, "delivered": 0}]
    assert json.loads(out) == want
    assert cli.main(["-m", m, "list", "-J"]) == 0
    assert json.loads(capsys.readouterr()[0])["multicast"] == want

    # refusals: each a sentence, the groups as they were
    refused(capsys, mc, "multicast group ident has members host1 and host2 and is mapped "
            "for acc0: leave and unmap first (EBUSY)", "multicast", "destroy", "ident")
    refused(capsys, mc, "host1 is already a member of multicast group ident (EEXIST)",
            "multicast", "join", "ident", "host1", "mc")
    refused(capsys, mc, "host4 is not cabled to sw0, the switch of multicast group ident "
            "(EXDEV)", "multicast", "join", "ident", "host4", "mc")
    refused(capsys, mc, "host3 has no segment nope (ENOENT)",
            "multicast", "join", "ident", "host3", "nope")
    refused(capsys, mc, "'acc0/bar9' is not a buffer of host0: a segment of it, or "
            "DEV/barN of a device installed in it (EINVAL)",
            "multicast", "join", "ident", "host0", "acc0/bar9")
    refused(capsys, mc, "there is no node named host9 (nodes: host0, host1, host2, host3, "
            "host4) (ENOENT)", "multicast", "join", "ident", "host9", "mc")
    refused(capsys, mc, "host3 is not a member of multicast group ident (members: host1 "
            "and host2) (ENOENT)", "multicast", "leave", "ident", "host3")
    refused(capsys, mc, "multicast group ident is already mapped for acc0 (EEXIST)",
            "multicast", "map", "ident", "acc0")
    refused(capsys, mc, "there is no multicast group named nope (groups: ident) (ENOENT)",
            "multicast", "join", "nope", "host1", "mc")
    refused(capsys, mc, "multicast group ident already exists (on sw0) (EEXIST)",
            "multicast", "create", "ident")

    # undo
    assert run(capsys, "-m", m, "multicast", "unmap", "ident", "acc0")[0] == 0
    for n in (1, 2):
        assert run(capsys, "-m", m, "multicast", "leave", "ident", "host%d" % n)[0] == 0
    assert cat(mc, "multicast/ident/members") == ""
    assert run(capsys, "-m", m, "multicast", "destroy", "ident")[0] == 0
    assert os.listdir(mc.path("multicast")) == []
    assert run(capsys, "-m", m, "multicast", "list")[1] == ""


def test_multicast_create_refusals_leave_nothing(mc, capsys):
    m = mc.root
    refused(capsys, mc, "'a/b' is not a group name: letters, digits, _ and -, at most 31 "
            "characters (EINVAL)", "multicast", "create", "a/b")
    rc, out, err = run(capsys, "-m", m, "multicast", "create", "g", "0x")
    assert rc == 2 and os.listdir(mc.path("multicast")) == []
    # sw0 holds two groups: a third is refused
    for g in ("g1", "g2"):
        assert run(capsys, "-m", m, "multicast", "create", g)[0] == 0
    refused(capsys, mc, "every multicast group of the cluster's switches is taken "
            "(groups: g1, g2) (ENOSPC)", "multicast", "create", "g3")
    # a size the namespace refuses (above 1G, not whole pages) makes no
    # group and no event
    assert run(capsys, "-m", m, "multicast", "destroy", "g2")[0] == 0
    with evmod.EventStream(mc.path("events"), timeout=1) as stream:
        refused(capsys, mc, "'2G' is not a size for multicast group big: whole pages, "
                "more than zero, at most 1G (EINVAL)", "multicast", "create", "big", "2G")
        refused(capsys, mc, "'5000' is not a size for multicast group big: whole pages, "
                "more than zero, at most 1G (EINVAL)", "multicast", "create", "big", "5000")
        assert run(capsys, "-m", m, "multicast", "create", "g2")[0] == 0
        first = next(iter(stream))
    assert (first["kind"], first["object"]) == ("multicast", "multicast/g2")


def test_multicast_without_a_multicast_switch(cluster, capsys):
    rc, out, err = run(capsys, "-m", cluster.root, "multicast", "create", "g")
    assert (rc, err) == (1, "smartio: no switch of the cluster has multicast groups "
                            "(EOPNOTSUPP)\n")
    assert run(capsys, "-m", cluster.root, "multicast", "list") == (0, "", "")
