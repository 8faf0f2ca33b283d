# SPDX-License-Identifier: GPL-2.0-or-later
"""smartio(1) reaches more of the namespace (issue 32, items 12 and 16):
link up/down, borrow --window, segment map/unmap (printing the address),
segment attach (held while the command runs, as a write by that process
is) and detach, and peer map/unmap, each against a real mount and checked
in the files."""
import os
import re
import subprocess
import sys
import time

from smartio import cli

HERE = os.path.dirname(os.path.abspath(__file__))


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


def test_link_down_and_up(cluster, capsys):
    m = cluster.root
    assert run(capsys, "-m", m, "link", "host1", "ntb0", "down")[0] == 0
    assert cat(cluster, "nodes/host1/adapters/ntb0/link") == "down"
    assert run(capsys, "-m", m, "link", "host1", "ntb0")[1] == "down\n"
    assert run(capsys, "-m", m, "link", "host1", "ntb0", "up")[0] == 0
    assert cat(cluster, "nodes/host1/adapters/ntb0/link") == "up"
    rc, out, err = run(capsys, "-m", m, "link", "host1", "ntb7", "down")
    assert rc == 1 and "host1 has no adapter ntb7 (adapters: ntb0)" in err


def test_borrow_with_a_window(cluster, capsys):
    m = cluster.root
    cluster.device("nvme1").lend("all")
    assert run(capsys, "-m", m, "borrow", "nvme1", "host0", "--window", "1M")[0] == 0
    node, iova, size = cat(cluster, "dev/nvme1/dma_window").split()
    assert (node, int(size)) == ("host0", 1 << 20)
    assert run(capsys, "-m", m, "return", "nvme1", "host0")[0] == 0
    rc, out, err = run(capsys, "-m", m, "borrow", "nvme1", "host0", "--window", "3000")
    assert rc == 1 and err.rstrip().endswith("(EINVAL)")
    assert cat(cluster, "dev/nvme1/borrow") == ""


def test_segment_map_and_unmap_print_the_address(cluster, capsys):
    m = cluster.root
    seg = cluster.node("host0").create_segment("buf", "64k")
    rc, out, err = run(capsys, "-m", m, "segment", "map", "host0.buf", "nvme0")
    assert rc == 0, err
    addr = cat(cluster, "nodes/host0/segments/buf/dma/nvme0/ioaddr")
    assert out == "nvme0 reaches host0.buf at %#x\n" % int(addr, 16)
    assert run(capsys, "-m", m, "segment", "unmap", "host0.buf", "nvme0")[0] == 0
    assert os.listdir(cluster.path("nodes/host0/segments/buf/dma")) == []
    seg.destroy()


def test_segment_attach_is_held_while_the_command_runs(cluster, tmp_path, capsys):
    m = cluster.root
    cluster.node("host0").create_segment("ring", "64k", available=True)
    ready = str(tmp_path / "ready")
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "..", "python"))
    p = subprocess.Popen([sys.executable, "-m", "smartio", "-m", m, "segment", "attach",
                          "host0.ring", "host2", "--ready", ready], env=env,
                         stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(200):
            if os.path.exists(ready) or p.poll() is not None:
                break
            time.sleep(0.05)
        assert os.path.exists(ready), "attach did not start"
        assert cat(cluster, "nodes/host0/segments/ring/attached") == "host2"
    finally:
        p.terminate()
        p.wait(10)
    assert p.stdout.read() == "host2 attached host0.ring; held until this command ends (Ctrl-C)\n"
    for _ in range(100):        # the daemon sees the holder go
        if cat(cluster, "nodes/host0/segments/ring/attached") == "":
            break
        time.sleep(0.05)
    assert cat(cluster, "nodes/host0/segments/ring/attached") == ""
    # detach ends an attachment before its holder does
    p = subprocess.Popen([sys.executable, "-m", "smartio", "-m", m, "segment", "attach",
                          "host0.ring", "host3", "--ready", ready + "2"], env=env,
                         stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(ready + "2"):
                break
            time.sleep(0.05)
        assert run(capsys, "-m", m, "segment", "detach", "host0.ring", "host3")[0] == 0
        assert cat(cluster, "nodes/host0/segments/ring/attached") == ""
    finally:
        p.terminate()
        p.wait(10)
    cluster.node("host0").segment("ring").destroy()


def test_peer_map_and_unmap(cluster, capsys):
    m = cluster.root
    rc, out, err = run(capsys, "-m", m, "peer", "map", "nvme0", "nic0")
    assert rc == 0, err
    bars = sorted(e for e in os.listdir(cluster.path("dev/nvme0/peers/nic0")) if e.startswith("bar"))
    assert bars and out.splitlines() == [
        "nvme0 reaches nic0 BAR %s at %#x" % (b[3:], int(cat(cluster, "dev/nvme0/peers/nic0", b), 16))
        for b in bars]
    assert run(capsys, "-m", m, "peer", "unmap", "nvme0", "nic0")[0] == 0
    assert not os.path.exists(cluster.path("dev/nvme0/peers/nic0"))


def test_sriov_shows_and_sets_the_virtual_functions(fabric, capsys):
    import smartio
    conf = os.path.join(HERE, "..", "fs", "sriov.conf")
    m = fabric.mount("ms", "--topology", os.path.abspath(conf))
    c = smartio.Cluster(m)
    assert run(capsys, "-m", m, "sriov", "nic0") == (0, "0 of 4 virtual functions enabled\n", "")
    assert run(capsys, "-m", m, "sriov", "nic0", "2")[0] == 0
    assert cat(c, "dev/nic0/sriov_numvfs") == "2"
    assert os.path.isdir(c.path("dev/nic0v1"))
    rc, out, err = run(capsys, "-m", m, "sriov", "nic0", "9")
    assert (rc, err) == (1, "smartio: nic0 has 4 virtual functions: 9 is more (ERANGE)\n")
    rc, out, err = run(capsys, "-m", m, "sriov", "nic0", "3")
    assert (rc, err) == (1, "smartio: nic0 has 2 virtual functions enabled: disable them "
                            "first (sriov nic0 0), as in Linux (EBUSY)\n")
    assert cat(c, "dev/nic0/sriov_numvfs") == "2"
    assert run(capsys, "-m", m, "sriov", "nic0", "0")[0] == 0
    # The VFs leave the tree as test_sriov_files.py allows: a listing
    # change may take the watcher's turn (seen under distcheck's load).
    end = time.time() + 5
    while os.path.exists(c.path("dev/nic0v1")) and time.time() < end:
        time.sleep(0.05)
    assert not os.path.exists(c.path("dev/nic0v1"))
    rc, out, err = run(capsys, "-m", m, "sriov", "nic1")
    assert rc == 1 and "nic1 has no SR-IOV capability" in err
    rc, out, err = run(capsys, "-m", m, "sriov", "nic0", "-1")
    assert rc == 2


def _wait(cond, seconds=5.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def test_segment_attach_until_detached_or_for_a_process(cluster, capsys):
    m = cluster.root
    cluster.node("host0").create_segment("ring", "64k", available=True)
    attached = lambda: cat(cluster, "nodes/host0/segments/ring/attached").split()
    # Held by a background process until detached: the command returns.
    rc, out, err = run(capsys, "-m", m, "segment", "attach", "host0.ring", "host2",
                       "--until-detached")
    assert rc == 0, err
    holder = int(re.match(r"host2 attached host0\.ring; held by process (\d+) until it is "
                          r"detached\n$", out).group(1))
    assert attached() == ["host2"] and os.path.exists("/proc/%d" % holder)
    time.sleep(1.5)                 # the command's exit did not end it
    assert attached() == ["host2"]
    assert run(capsys, "-m", m, "segment", "detach", "host0.ring", "host2")[0] == 0
    assert _wait(lambda: not os.path.exists("/proc/%d" % holder)), "the holder stayed"
    # Held until a named process ends.
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        rc, out, err = run(capsys, "-m", m, "segment", "attach", "host0.ring", "host3",
                           "--for-pid", str(sleeper.pid))
        assert rc == 0, err
        assert out.endswith("until process %d ends (or it is detached)\n" % sleeper.pid)
        assert attached() == ["host3"]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert _wait(lambda: attached() == []), "the attachment outlived its process"
    rc, out, err = run(capsys, "-m", m, "segment", "attach", "host0.ring", "host3",
                       "--for-pid", str(sleeper.pid))
    assert rc == 1 and "there is no process %d" % sleeper.pid in err
    # A refused attach comes back from the holder as the sentence.
    rc, out, err = run(capsys, "-m", m, "segment", "attach", "host0.ring", "host0",
                       "--until-detached")
    assert rc == 1 and err.startswith("smartio: ") and attached() == []
    cluster.node("host0").segment("ring").destroy()
