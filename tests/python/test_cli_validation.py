# SPDX-License-Identifier: GPL-2.0-or-later
"""What smartio(1) takes from a user is checked where it enters, against
what the namespace holds (issue 32, item 14): watch filters that can never
match are refused; a size is the namespace's grammar (0x1000 too); a size
refused is refused before mkdir, so the event stream tells of no segment
made and removed; a mount whose daemon died is named with the way out;
Device.policy is always a list; every event kind of the core is known to
watch -k and to bash completion."""
import os
import re
import signal

import pytest

import smartio
from smartio import cli
from smartio import events as evmod

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def run(capsys, *args):
    try:
        rc = cli.main(list(args))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_event_kinds_are_the_cores_and_completions():
    with open(os.path.join(TOP, "lib", "core", "event.c")) as f:
        core = re.findall(r'\[SIO_EV_\w+\] = "([a-z-]+)"', f.read())
    assert list(evmod.KINDS) == core + ["lost"]
    with open(os.path.join(TOP, "contrib", "bash-completion", "smartio")) as f:
        words = re.search(r'-k \| --kind\) COMPREPLY=\(\$\(compgen -W "([^"]+)"', f.read()).group(1)
    assert words.split() == list(evmod.KINDS)


def test_watch_refuses_filters_that_cannot_match(cluster, capsys):
    rc, out, err = run(capsys, "-m", cluster.root, "watch", "-t", "0", "-k", "bogus")
    assert rc == 2 and "invalid choice: 'bogus'" in err
    rc, out, err = run(capsys, "-m", cluster.root, "watch", "-t", "0", "-n", "host9")
    assert (rc, out) == (1, "")
    assert err.startswith("smartio: there is no node named host9 (nodes: host0, ")
    rc, out, err = run(capsys, "-m", cluster.root, "watch", "-t", "0", "-d", "nvme9")
    assert rc == 1 and err.startswith("smartio: there is no device named nvme9 (devices: ")
    rc, out, err = run(capsys, "-m", cluster.root, "watch", "-t", "0", "-k", "failover",
                       "-n", "host1", "-d", "nvme0")
    assert rc == 0 and err == ""


def test_sizes_follow_the_namespaces_grammar(cluster, capsys):
    assert smartio.parse_size("0x1000") == 4096
    assert smartio.parse_size("0X10k") == 16 << 10
    assert smartio.parse_size("64M") == 64 << 20
    for bad in ("-1", "1.5M", "0x", "1T", "1 M", "0x1g", str(1 << 64)):
        with pytest.raises(ValueError):
            smartio.parse_size(bad)
    rc, out, err = run(capsys, "-m", cluster.root, "segment", "create", "hexa", "0x1000")
    assert rc == 0, err
    assert cluster.node("host0").segment("hexa").size == 4096
    cluster.node("host0").segment("hexa").destroy()


def test_a_refused_size_makes_no_events(cluster, capsys):
    with evmod.EventStream(cluster.path("events"), timeout=1) as stream:
        rc, out, err = run(capsys, "-m", cluster.root, "segment", "create", "z", "0")
        assert rc == 1 and "'0' is not a size for host0.z" in err
        with pytest.raises(smartio.SmartioError):
            cluster.node("host0").create_segment("z2", "0x0")
        cluster.node("host0").create_segment("marker", "4k")
        first = next(iter(stream))
    assert (first["kind"], first["object"]) == ("segment-create", "seg/host0.marker")
    assert not os.path.exists(cluster.path("nodes/host0/segments/z"))
    cluster.node("host0").segment("marker").destroy()


def test_policy_is_always_a_list(cluster):
    d = cluster.device("nvme1")
    assert d.policy == ["none"]
    d.lend("all")
    assert d.policy == ["all"]
    d.lend(["host0", "host2"])
    assert d.policy == ["host0", "host2"]
    d.lend("none")


def test_a_mount_whose_daemon_died_says_how_to_clear_it(fabric, capsys):
    m = fabric.mount("m9")
    fabric.kill(m, signal.SIGKILL)
    with pytest.raises(smartio.SmartioError) as e:
        smartio.Cluster(m)
    assert e.value.errno == 107      # ENOTCONN
    rc, out, err = run(capsys, "-m", m, "list")
    assert rc == 1
    assert err == ("smartio: %s is a smartio mount whose smartiofs is gone: unmount it "
                   "with fusermount3 -u %s (ENOTCONN)\n" % (m, m))
