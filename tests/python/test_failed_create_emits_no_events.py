# SPDX-License-Identifier: GPL-2.0-or-later
"""A failed segment create tells the event stream nothing (issue 32 item
14): a size the owner refuses (more than its memory: EINVAL; more than is
free: ENOMEM) after the mkdir, and the rmdir that undoes it, are not a
segment-create and a segment-destroy.  segment-create tells of a segment
once it has memory, from smartio(1), the package or a shell alike."""
import os

import pytest

import smartio
from smartio import cli
from smartio import events as evmod


def run(capsys, *args):
    try:
        rc = cli.main(list(args))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_refused_sizes_after_mkdir_make_no_events(cluster, capsys):
    host0 = cluster.node("host0")
    with evmod.EventStream(cluster.path("events"), timeout=1) as stream:
        # host0 has 1 GiB (the built-in cluster): 2G is more than its memory
        rc, out, err = run(capsys, "-m", cluster.root, "segment", "create", "big", "2G")
        assert rc == 1 and err.rstrip().endswith("(EINVAL)"), err
        big = host0.create_segment("most", "800M")
        # 800M more is more than is free
        with pytest.raises(smartio.SmartioError) as e:
            host0.create_segment("more", "800M")
        assert e.value.errno == 12    # ENOMEM
        # a shell's mkdir, refused size and rmdir
        d = cluster.path("nodes/host0/segments/sh")
        os.mkdir(d)
        with pytest.raises(OSError):
            with open(os.path.join(d, "size"), "w") as f:
                f.write("2G")
        os.rmdir(d)
        host0.create_segment("marker", "4k")
        evs = [next(iter(stream)) for _ in range(2)]
    assert [(e["kind"], e["object"]) for e in evs] == [
        ("segment-create", "seg/host0.most"), ("segment-create", "seg/host0.marker")]
    assert sorted(s.name for s in host0.segments) == ["marker", "most"]
    with evmod.EventStream(cluster.path("events"), timeout=1) as stream:
        big.destroy()
        host0.segment("marker").destroy()
        evs = [next(iter(stream)) for _ in range(2)]
    assert [(e["kind"], e["object"]) for e in evs] == [
        ("segment-destroy", "seg/host0.most"), ("segment-destroy", "seg/host0.marker")]


def test_a_segment_is_announced_when_sized_on_another_mount(two):
    """Two processes: host1's mount hears of host0's segment when it has
    memory, not at its mkdir."""
    a, b = two
    with evmod.EventStream(b.path("events"), timeout=1) as stream:
        d = a.path("nodes/host0/segments/s")
        os.mkdir(d)
        os.rmdir(d)
        a.self.create_segment("t", "64k")
        first = next(iter(stream))
    assert (first["kind"], first["object"]) == ("segment-create", "seg/host0.t")
    a.self.segment("t").destroy()
