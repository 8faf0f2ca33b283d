# SPDX-License-Identifier: GPL-2.0-or-later
"""The smartio Python package against real mounts: what it reads is what
the files hold, what it writes changes them, and what the namespace
refuses arrives as a SmartioError with the errno and a sentence naming the
cause, the state unchanged."""
import errno
import os
import struct

import pytest

import smartio


def cat(c, *parts):
    with open(c.path(*parts)) as f:
        return f.read()


def test_iterates_nodes_devices_segments_as_the_tree_has_them(cluster):
    assert [n.name for n in cluster.nodes] == sorted(os.listdir(cluster.path("nodes")))
    assert cluster.self.name == "host0"
    assert [d.name for d in cluster.devices] == sorted(os.listdir(cluster.path("dev")))
    nvme0 = cluster.device("nvme0")
    assert (nvme0.node, nvme0.bdf, nvme0.class_code) == ("host0", "0000:01:00.0", 0x010802)
    assert nvme0.class_name == "Non-Volatile memory controller"
    h1 = cluster.node("host1")
    assert {d.name for d in h1.devices} == set(os.listdir(cluster.path("nodes/host1/devices")))
    a = h1.adapters[0]
    assert a.luts == tuple(int(x) for x in cat(cluster, "nodes/host1/adapters/ntb0/luts").split())
    assert a.link == "up" and "host0" in a.peers
    seg = cluster.node("host2").create_segment("ring", "64k", available=True)
    assert [s.fullname for s in cluster.segments] == ["host2.ring"]
    assert cluster.segment("host2.ring").size == 65536 and seg.available
    seg.destroy()
    assert cluster.segments == []


def test_lend_borrow_return_write_the_files(cluster):
    d = cluster.device("nvme1")
    d.lend(["host0", "host2"])
    assert cat(cluster, "dev/nvme1/lend") == "host0\nhost2\n" and d.policy == ["host0", "host2"]
    d.lend("all")
    assert d.policy == ["all"]
    d.borrow()
    assert d.borrowers == ["host0"] and d.state == "borrowed"
    assert [b.name for b in cluster.self.borrowed] == ["nvme1"]
    d.return_()
    assert d.borrowers == [] and cat(cluster, "dev/nvme1/borrow") == ""
    d.borrow("host3")
    assert d.borrowers == ["host3"]
    d.return_("host3")
    d.set_mode("shared")
    assert cat(cluster, "dev/nvme1/mode") == "shared\n"


def test_refused_borrow_raises_errno_and_sentence_state_unchanged(cluster):
    d = cluster.device("nvme1")
    with pytest.raises(smartio.SmartioError) as e:
        d.borrow()
    assert e.value.errno == errno.EACCES
    assert e.value.strerror == "nvme1 is not lent (policy none): host0 may not borrow it"
    d.lend("all")
    d.borrow("host2")
    with pytest.raises(smartio.SmartioError) as e:
        d.borrow("host3")
    assert e.value.errno == errno.EBUSY
    assert e.value.strerror == "nvme1 is borrowed by host2 in exclusive mode"
    assert isinstance(e.value, OSError)
    assert d.borrowers == ["host2"]
    with pytest.raises(smartio.SmartioError) as e:
        d.return_("host3")
    assert e.value.errno == errno.EINVAL
    assert e.value.strerror == "host3 does not borrow nvme1 (borrowed by host2)"
    with pytest.raises(smartio.SmartioError) as e:
        cluster.device("nvme9")
    assert e.value.errno == errno.ENXIO


def test_context_manager_returns_the_device_even_on_error(cluster):
    d = cluster.device("nvme1")
    d.lend("all")
    with cluster.borrow("nvme1") as dev:
        assert dev.borrowers == ["host0"]
    assert d.borrowers == []
    with pytest.raises(RuntimeError):
        with d.borrowed("host2"):
            assert d.borrowers == ["host2"]
            raise RuntimeError("driver failed")
    assert d.borrowers == [] and d.state == "available"


def test_context_manager_keeps_a_borrow_it_did_not_make(cluster):
    d = cluster.device("nvme1")
    d.lend("all")
    d.borrow()
    with d.borrowed():
        pass
    assert d.borrowers == ["host0"]


def test_map_bar_is_the_devices_registers(cluster):
    d = cluster.device("nvme1")
    d.lend("all")
    with d.borrowed() as dev:
        assert dev.bars == [0]
        bar = dev.map_bar(0)
        # The simulated NVMe controller's CAP register, as through the file.
        cap = struct.unpack_from("<Q", bar, 0)[0]
        with open(cluster.path("dev/nvme1/bar0"), "rb") as f:
            assert cap == struct.unpack("<Q", f.read(8))[0] != 0
        assert len(bar) == 256 * 1024
        bar.close()


def test_map_bar_of_a_device_not_borrowed_names_the_cause(cluster):
    with pytest.raises(smartio.SmartioError) as e:
        cluster.device("nvme1").map_bar(0)
    assert e.value.errno == errno.ENOENT


def test_segment_map_shares_memory_between_nodes(two):
    a, b = two
    seg = a.self.create_segment("ring", "1M", available=True)
    m0 = seg.map()
    remote = b.segment("host0.ring")
    m1 = remote.map()
    m1[0:5] = b"hello"
    assert m0[0:5] == b"hello" and len(m1) == 1 << 20
    assert remote.attached == ["host1"] or "host1" in seg.attached
    with pytest.raises(smartio.SmartioError) as e:
        seg.destroy()
    assert e.value.errno == errno.EBUSY
    # the mapping process holds host1's attachment through b's mount
    assert e.value.strerror == (
        "host0.ring is attached by host1, held by process %d (%s) through %s until it "
        "exits or it is detached (smartio segment detach host0.ring host1)" % (
            os.getpid(), open("/proc/self/comm").read().strip(), os.path.realpath(b.root)))
    m1.close()
    seg.detach("host1")
    m0.close()
    seg.destroy()
    assert a.segments == []


def test_failed_segment_creation_leaves_nothing(cluster):
    with pytest.raises(smartio.SmartioError) as e:
        cluster.self.create_segment("buf", "0")
    assert e.value.errno == errno.EINVAL
    assert "'0' is not a size for host0.buf" in e.value.strerror
    assert cluster.self.segments == []
    cluster.self.create_segment("buf", "4k")
    with pytest.raises(smartio.SmartioError) as e:
        cluster.self.create_segment("buf", "4k")
    assert e.value.errno == errno.EEXIST
    assert e.value.strerror == "segment host0.buf already exists (4096 bytes)"


def test_reclaim_only_through_the_lenders_mount(two):
    a, b = two
    d0 = a.device("nvme0")
    d0.lend("all")
    b.device("nvme0").borrow()
    with pytest.raises(smartio.SmartioError) as e:
        b.device("nvme0").reclaim()
    assert e.value.errno == errno.EACCES
    assert e.value.strerror == "only nvme0's lender host0 may reclaim it; this mount is host1"
    assert d0.borrowers == ["host1"]
    d0.reclaim()
    assert d0.borrowers == []


def test_dma_map_gives_the_devices_address(cluster):
    seg = cluster.self.create_segment("q", "64k")
    io = seg.dma_map("nvme0")
    assert seg.dma == {"nvme0": io}
    assert int(cat(cluster, "self/segments/q/dma/nvme0/ioaddr"), 16) == io
    with pytest.raises(smartio.SmartioError) as e:
        seg.destroy()
    assert e.value.strerror == "host0.q is mapped for nvme0"
    seg.dma_unmap("nvme0")
    seg.destroy()


def test_events_are_parsed(cluster):
    d = cluster.device("nvme1")
    with cluster.events(nonblock=True) as ev:
        d.lend("all")
        got = list(ev)
    assert got[-1]["kind"] == "lend" and got[-1]["object"] == "dev/nvme1"
    assert got[-1]["policy"] == "all" and isinstance(got[-1]["seq"], int)


def test_not_a_mount_is_an_error(tmp_path):
    with pytest.raises(smartio.SmartioError) as e:
        smartio.Cluster(str(tmp_path))
    assert e.value.errno == errno.ENOENT and "is not a smartio mount" in e.value.strerror


def _as_nobody(path):
    """Owns path as nobody when we are root: the other user of the test
    below.  (Without root the planting user is us, which the old code
    followed all the same.)"""
    if os.geteuid() == 0:
        os.lchown(path, 65534, 65534)


def test_status_output_never_follows_a_link_planted_in_its_directory(
        fabric, tmp_path):
    """`smartio status --prometheus -o FILE` run as root into a directory
    another user can write (issue 28 item 10): a symlink that user planted
    at a name the command could pick must not be followed, and FILE gets
    the whole text with the usual mode."""
    from smartio import cli
    mnt = fabric.mount("m0")
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    spool = tmp_path / "textfile"
    spool.mkdir()
    _as_nobody(str(spool))
    out = spool / "smartio.prom"
    # The name the command used to pick, and its neighbours.
    planted = ["%s.%d.tmp" % (out, p) for p in range(os.getpid() - 2,
                                                       os.getpid() + 3)]
    for p in planted:
        os.symlink(str(victim), p)
        _as_nobody(p)
    old = os.umask(0o022)
    try:
        rc = cli.main(["--mount", mnt, "status", "--prometheus", "-o", str(out)])
    finally:
        os.umask(old)
    assert rc == 0
    assert victim.read_text() == "precious\n"
    assert not out.is_symlink() and "smartio_" in out.read_text()
    assert out.stat().st_mode & 0o777 == 0o644
    assert all(os.path.islink(p) for p in planted)
    # Nothing left behind but the file and what the other user planted.
    assert sorted(os.listdir(str(spool))) == sorted(
        [out.name] + [os.path.basename(p) for p in planted])
