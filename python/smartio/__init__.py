# SPDX-License-Identifier: LGPL-2.1-or-later
"""smartio: Python access to a /smartio namespace (smartio(7)).

Everything here reads and writes the files of a mounted namespace, so it
works the same on the embedded simulated cluster and on smartio.ko, through
any node's mount:

    import smartio
    c = smartio.Cluster("/smartio")
    for dev in c.devices:
        print(dev.name, dev.node, dev.state, dev.borrowers)
    c.device("nvme0").lend("all")
    with c.device("nvme0").borrowed() as dev:     # returned on exit
        bar = dev.map_bar(0)
    seg = c.self.create_segment("buf", "1M")
    mem = seg.map()

A failed write raises SmartioError, an OSError whose errno is the one the
namespace returned and whose strerror is a sentence that names the cause,
read from the namespace right after the failure (smartio.errors).
"""
import contextlib
import errno as _errno
import mmap
import os
import re

from .errors import SmartioError, explain

__all__ = ["Cluster", "Node", "Adapter", "Device", "Segment", "Multicast", "SmartioError",
           "parse_size", "DEFAULT_MOUNT"]

DEFAULT_MOUNT = "/smartio"
# The release, as in configure.ac's AC_INIT and python/pyproject.toml
# (tests/python/test_cli_options.py keeps the three the same).
__version__ = "0.1.0"
_SUFFIX = {"": 1, "k": 1 << 10, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text):
    """'64M' -> 67108864, '0x1000' -> 4096: the one grammar of sizes that
    the namespace accepts (lib/core/numparse.h, smartio(7)): decimal or 0x
    hex digits, then optionally k, K, M or G; at most 2^64 - 1."""
    text = str(text).strip()
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|[0-9]+)([kKMG]?)", text)
    if not m:
        raise ValueError("bad size %r: a decimal or 0x hex number, with k, M or G"
                         % text)
    value = int(m.group(1), 0 if m.group(1)[:2] in ("0x", "0X") else 10) * \
        _SUFFIX[m.group(2)]
    if value >= 1 << 64:
        raise ValueError("bad size %r: more than 2^64 - 1 bytes" % text)
    return value


def _lines(text):
    return [l for l in text.split("\n") if l]


class _Files:
    """One directory of the namespace: reading and writing its attributes."""

    def __init__(self, cluster, rel):
        self.cluster = cluster
        self.rel = rel

    def path(self, *parts):
        return os.path.join(self.cluster.root, self.rel, *parts)

    def read(self, name):
        with open(self.path(name)) as f:
            return f.read().rstrip("\n")

    def _write(self, op, name, value, **ctx):
        """One write(2) of value; on failure a SmartioError explaining it."""
        data = str(value).encode()
        try:
            fd = os.open(self.path(name), os.O_WRONLY)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError as e:
            raise self.cluster.error(op, e, **ctx) from None


class Adapter(_Files):
    """An NTB adapter of a node."""

    def __init__(self, node, name):
        super().__init__(node.cluster, os.path.join(node.rel, "adapters", name))
        self.node = node
        self.name = name

    @property
    def link(self):
        return self.read("link")

    @property
    def peers(self):
        return _lines(self.read("peers"))

    def _pair(self, name):
        used, total = self.read(name).split()
        return int(used), int(total)

    @property
    def luts(self):
        """(used, total) look-up table entries."""
        return self._pair("luts")

    @property
    def requesters(self):
        """(used, total) requester id entries."""
        return self._pair("requesters")

    @property
    def window(self):
        return int(self.read("window"))

    def set_link(self, up):
        """Takes the adapter's link up or down (smartio(7), link)."""
        state = "up" if up else "down"
        self._write("link", "link", state, node=self.node.name,
                    adapter=self.name, state=state)

    def __repr__(self):
        return "<Adapter %s/%s>" % (self.node.name, self.name)


class Node(_Files):
    """A node of the cluster (nodes/<node>)."""

    def __init__(self, cluster, name):
        super().__init__(cluster, os.path.join("nodes", name))
        self.name = name

    @property
    def id(self):
        return int(self.read("id"))

    @property
    def state(self):
        return self.read("state")

    @property
    def up(self):
        return self.state == "up"

    @property
    def adapters(self):
        return [Adapter(self, a) for a in sorted(os.listdir(self.path("adapters")))]

    @property
    def devices(self):
        return [Device(self.cluster, d) for d in sorted(os.listdir(self.path("devices")))]

    @property
    def borrowed(self):
        return [Device(self.cluster, d) for d in sorted(os.listdir(self.path("borrowed")))]

    @property
    def segments(self):
        return [Segment(self, s) for s in sorted(os.listdir(self.path("segments")))]

    def segment(self, name):
        if not os.path.isdir(self.path("segments", name)):
            raise SmartioError(_errno.ENOENT, "%s has no segment %s" % (self.name, name))
        return Segment(self, name)

    def create_segment(self, name, size, available=False):
        """mkdir and size (and export): the segment, or a SmartioError with
        nothing left behind."""
        try:
            ok = (size if isinstance(size, int) else parse_size(size)) > 0
        except ValueError:
            ok = False
        if not ok:
            # Refused before mkdir: a segment made and removed again would
            # tell the event stream a create and a destroy of nothing.
            raise SmartioError(_errno.EINVAL, "'%s' is not a size for %s.%s: a number "
                               "of bytes, k, M or G, more than zero and within the "
                               "owner's memory" % (size, self.name, name))
        if not name or "/" in name or name in (".", ".."):
            # A path, not a name: mkdir would look it up as one (ENOENT for
            # "a/b") and never reach the namespace's check of names.
            raise SmartioError(_errno.EINVAL, explain(
                self.cluster, "segment-create", _errno.EINVAL, node=self.name,
                seg=name))
        seg = Segment(self, name)
        try:
            os.mkdir(seg.path())
        except OSError as e:
            raise self.cluster.error("segment-create", e, node=self.name,
                                     seg=name) from None
        try:
            seg._write("segment-size", "size", size, node=self.name, seg=name,
                       size=size)
            if available:
                seg.export()
        except SmartioError:
            with contextlib.suppress(OSError):
                os.rmdir(seg.path())
            raise
        return seg

    def __eq__(self, other):
        return isinstance(other, Node) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return "<Node %s>" % self.name


class Device(_Files):
    """A device of the cluster-wide namespace (dev/<dev>)."""

    def __init__(self, cluster, name):
        super().__init__(cluster, os.path.join("dev", name))
        self.name = name

    def _hex(self, name):
        return int(self.read(name), 16)

    node = property(lambda s: s.read("node"), doc="the lender's name")
    bdf = property(lambda s: s.read("bdf"))
    fdid = property(lambda s: s._hex("fdid"))
    vendor = property(lambda s: s._hex("vendor"))
    device = property(lambda s: s._hex("device"))
    revision = property(lambda s: s._hex("revision"))
    class_code = property(lambda s: s._hex("class"))
    state = property(lambda s: s.read("state"))
    mode = property(lambda s: s.read("mode"))

    @property
    def lender(self):
        return self.cluster.node(self.node)

    @property
    def class_name(self):
        from . import pciids
        return pciids.class_name(self.class_code)

    @property
    def policy(self):
        """The lines of lend, always a list: ['none'], ['all'] or node
        names (as list -J's "lend")."""
        return _lines(self.read("lend"))

    @property
    def borrowers(self):
        return _lines(self.read("borrow"))

    @property
    def stats(self):
        out = {}
        for line in _lines(self.read("stats")):
            k, v = line.split()
            out[k] = int(v)
        return out

    @property
    def irq_vectors(self):
        """The vector numbers under irq/ (those routed to this mount's
        node)."""
        try:
            return sorted(int(v) for v in os.listdir(self.path("irq")) if v.isdigit())
        except FileNotFoundError:
            return []

    @property
    def peer_maps(self):
        """{peer device: {bar number: the address this device uses to reach
        it}} for each peers/<peer> mapping."""
        out = {}
        try:
            peers = sorted(os.listdir(self.path("peers")))
        except FileNotFoundError:
            return out
        for p in peers:
            d = self.path("peers", p)
            out[p] = {int(e[3:]): int(self.read(os.path.join("peers", p, e)), 16)
                      for e in sorted(os.listdir(d)) if e.startswith("bar")}
        return out

    @property
    def bars(self):
        """The BAR numbers this mount may map (bar<N> links present)."""
        return sorted(int(e[3:]) for e in os.listdir(self.path())
                      if e.startswith("bar") and e[3:].isdigit())

    def _who(self, node):
        if node is None:
            return self.cluster.self_name
        return node.name if isinstance(node, Node) else str(node)

    def lend(self, policy):
        """policy: 'none', 'all', a node name or a list of them."""
        if not isinstance(policy, str):
            policy = " ".join(n.name if isinstance(n, Node) else n for n in policy)
        self._write("lend", "lend", policy, dev=self.name, policy=policy)

    def borrow(self, node=None, window=None):
        """Makes node (default: this mount's node) borrow the device; window
        sizes its DMA window (bytes, a size string, or 'ram')."""
        who = self._who(node)
        text = who if window is None else "%s window=%s" % (who, window)
        self._write("borrow", "borrow", text, dev=self.name, node=who)
        return self

    @property
    def sriov(self):
        """(VFs enabled, TotalVFs) of a physical function with SR-IOV, or
        None for a device without it."""
        if not os.path.exists(self.path("sriov_totalvfs")):
            return None
        return int(self.read("sriov_numvfs")), int(self.read("sriov_totalvfs"))

    def set_numvfs(self, n):
        """Enables the first n virtual functions (0 disables them)."""
        self._write("sriov", "sriov_numvfs", n, dev=self.name, numvfs=n)

    def peer_map(self, peer):
        """Maps device peer's BARs for this device (peers/<peer>); returns
        {bar number: the address this device uses to reach it}."""
        name = peer.name if isinstance(peer, Device) else peer
        try:
            os.mkdir(self.path("peers", name))
        except OSError as e:
            raise self.cluster.error("peer-map", e, dev=self.name, peer=name) from None
        d = self.path("peers", name)
        return {int(e[3:]): int(self.read(os.path.join("peers", name, e)), 16)
                for e in sorted(os.listdir(d)) if e.startswith("bar")}

    def peer_unmap(self, peer):
        name = peer.name if isinstance(peer, Device) else peer
        try:
            os.rmdir(self.path("peers", name))
        except OSError as e:
            raise self.cluster.error("peer-unmap", e, dev=self.name, peer=name) from None

    def return_(self, node=None):
        """Makes node (default: this mount's node) return the device."""
        who = self._who(node)
        self._write("return", "return", who, dev=self.name, node=who)

    give_back = return_

    def reclaim(self):
        """Revokes every borrower (only through the lender's mount)."""
        self._write("reclaim", "reclaim", 1, dev=self.name)

    def set_mode(self, mode):
        self._write("mode", "mode", mode, dev=self.name, mode=mode)

    @contextlib.contextmanager
    def borrowed(self, node=None):
        """Borrows for node and returns the device on exit, unless node
        already borrowed it before."""
        who = self._who(node)
        had = who in self.borrowers
        if not had:
            self.borrow(who)
        try:
            yield self
        finally:
            if not had:
                self.return_(who)

    def read_config(self, offset, length):
        """Bytes of the PCI configuration space, as this mount's node."""
        fd = os.open(self.path("config"), os.O_RDONLY)
        try:
            return os.pread(fd, length, offset)
        finally:
            os.close(fd)

    def write_config(self, offset, data):
        """Writes configuration space (the lender and borrowers only; MSI
        and MSI-X enables are routed by the core, smartio(7))."""
        try:
            fd = os.open(self.path("config"), os.O_WRONLY)
            try:
                os.pwrite(fd, data, offset)
            finally:
                os.close(fd)
        except OSError as e:
            raise self.cluster.error("config", e, dev=self.name) from None

    def open_irq(self, vec):
        """A file descriptor of irq/<vec> (smartio(7)): read(4) blocks until
        the vector fires; poll(2) works on it."""
        try:
            return os.open(self.path("irq", str(vec)), os.O_RDONLY)
        except OSError as e:
            raise self.cluster.error("irq", e, dev=self.name) from None

    def map_bar(self, n, size=None):
        """BAR n as a shared read-write mmap object (the whole BAR)."""
        p = self.path("bar%d" % n)
        try:
            fd = os.open(p, os.O_RDWR)
        except OSError as e:
            raise self.cluster.error("map-bar", e, dev=self.name, bar=n) from None
        try:
            return mmap.mmap(fd, size or os.fstat(fd).st_size)
        finally:
            os.close(fd)

    def __eq__(self, other):
        return isinstance(other, Device) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return "<Device %s>" % self.name


class Segment(_Files):
    """A memory segment (nodes/<owner>/segments/<seg>)."""

    def __init__(self, owner, name):
        super().__init__(owner.cluster, os.path.join(owner.rel, "segments", name))
        self.owner = owner
        self.name = name

    @property
    def fullname(self):
        return "%s.%s" % (self.owner.name, self.name)

    size = property(lambda s: int(s.read("size")))
    available = property(lambda s: s.read("available") == "1")
    attached = property(lambda s: _lines(s.read("attached")))

    @property
    def holders(self):
        """[{node, pid, command}]: the processes that hold an attachment
        through this mount's daemon (smartio(7), holders)."""
        return [{"node": w[0], "pid": int(w[1]), "command": w[2]}
                for w in (line.split() for line in _lines(self.read("holders")))
                if len(w) == 3]

    @property
    def dma(self):
        """{device name: the address it reaches the segment at}."""
        d = self.path("dma")
        return {e: int(self.read(os.path.join("dma", e, "ioaddr")), 16)
                for e in sorted(os.listdir(d))}

    def _ctx(self, **kw):
        return dict(node=self.owner.name, seg=self.name, **kw)

    def export(self, available=True):
        self._write("segment-export", "available", 1 if available else 0,
                    **self._ctx(available=available))

    def withdraw(self):
        self.export(False)

    def attach(self, node):
        """Attaches the segment for node; the attachment is held by this
        process and ends when it exits (smartio(7)) or on detach."""
        self._write("segment-attach", "attach", node, **self._ctx(target=node))

    def detach(self, node):
        self._write("segment-detach", "detach", node, **self._ctx(target=node))

    def dma_map(self, dev):
        """Maps the segment for a device; returns the address it uses."""
        name = dev.name if isinstance(dev, Device) else dev
        try:
            os.mkdir(self.path("dma", name))
        except OSError as e:
            raise self.cluster.error("segment-dma-map", e, **self._ctx(dev=name)) from None
        return int(self.read(os.path.join("dma", name, "ioaddr")), 16)

    def dma_unmap(self, dev):
        name = dev.name if isinstance(dev, Device) else dev
        try:
            os.rmdir(self.path("dma", name))
        except OSError as e:
            raise self.cluster.error("segment-dma-unmap", e, **self._ctx(dev=name)) from None

    def destroy(self):
        try:
            os.rmdir(self.path())
        except OSError as e:
            raise self.cluster.error("segment-destroy", e, **self._ctx()) from None

    def map(self):
        """The segment's memory as a shared read-write mmap object.  On a
        node other than the owner this first attaches the segment for this
        mount's node, held by this process until it exits or detaches
        (smartio(7): reading the tree never attaches)."""
        me = self.cluster.self_name
        if me != self.owner.name and me not in self.attached:
            try:
                with open(self.path("attach"), "w") as f:
                    f.write(me)
            except OSError as e:
                raise self.cluster.error("segment-map", e, **self._ctx()) from None
        try:
            fd = os.open(self.path("mem"), os.O_RDWR)
        except OSError as e:
            raise self.cluster.error("segment-map", e, **self._ctx()) from None
        try:
            return mmap.mmap(fd, self.size)
        finally:
            os.close(fd)

    def __repr__(self):
        return "<Segment %s>" % self.fullname


class Multicast(_Files):
    """A multicast group of a switch (multicast/<group>, smartio(7)
    MULTICAST): a device's posted write into it lands in every member's
    buffer."""

    def __init__(self, cluster, name):
        super().__init__(cluster, os.path.join("multicast", name))
        self.name = name

    switch = property(lambda s: s.read("switch"))
    size = property(lambda s: int(s.read("size")))
    members = property(lambda s: _lines(s.read("members")))
    writes = property(lambda s: int(s.read("writes")))
    delivered = property(lambda s: int(s.read("delivered")))

    @property
    def dma(self):
        """{device name: the address it writes into the group at}."""
        return {e: int(self.read(os.path.join("dma", e, "ioaddr")), 16)
                for e in sorted(os.listdir(self.path("dma")))}

    def _ctx(self, **kw):
        return dict(group=self.name, **kw)

    def set_size(self, size):
        self._write("multicast-size", "size", size, **self._ctx(size=size))

    def join(self, node, buffer):
        """Subscribes node with buffer: its segment's name, or 'DEV/barN'
        for a BAR of a device installed in node."""
        self._write("multicast-join", "join", "%s %s" % (node, buffer),
                    **self._ctx(target=node, buffer=buffer))

    def leave(self, node):
        self._write("multicast-leave", "leave", node, **self._ctx(target=node))

    def dma_map(self, dev):
        """Maps the group for a device; returns the address it writes to."""
        try:
            os.mkdir(self.path("dma", dev))
        except OSError as e:
            raise self.cluster.error("multicast-dma-map", e, **self._ctx(dev=dev)) from None
        return int(self.read(os.path.join("dma", dev, "ioaddr")), 16)

    def dma_unmap(self, dev):
        try:
            os.rmdir(self.path("dma", dev))
        except OSError as e:
            raise self.cluster.error("multicast-dma-unmap", e, **self._ctx(dev=dev)) from None

    def destroy(self):
        try:
            os.rmdir(self.path())
        except OSError as e:
            raise self.cluster.error("multicast-destroy", e, **self._ctx()) from None

    def __repr__(self):
        return "<Multicast %s>" % self.name


class Cluster:
    """A mounted namespace; root is its mount point."""

    def __init__(self, root=None):
        self.root = root or os.environ.get("SMARTIO_MOUNT") or DEFAULT_MOUNT
        try:
            os.stat(os.path.join(self.root, "nodes"))
        except OSError as e:
            if e.errno == _errno.ENOTCONN:
                # A mount whose daemon died: every access fails the same
                # way until it is unmounted.
                raise SmartioError(_errno.ENOTCONN, "%s is a smartio mount whose "
                                   "smartiofs is gone: unmount it with fusermount3 -u %s"
                                   % (self.root, self.root)) from None
        if not os.path.isdir(os.path.join(self.root, "nodes")):
            raise SmartioError(_errno.ENOENT, "%s is not a smartio mount "
                               "(no nodes/ in it; is smartiofs running?)" % self.root)

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    @property
    def self_name(self):
        return os.path.basename(os.readlink(self.path("self")))

    @property
    def self(self):
        return Node(self, self.self_name)

    @property
    def nodes(self):
        names = os.listdir(self.path("nodes"))
        nodes = [Node(self, n) for n in names]
        return sorted(nodes, key=lambda n: (n.id, n.name))

    def node(self, name):
        if not os.path.isdir(self.path("nodes", name)):
            raise SmartioError(_errno.ENOENT, "there is no node named %s (nodes: %s)"
                               % (name, ", ".join(n.name for n in self.nodes)))
        return Node(self, name)

    @property
    def devices(self):
        return [Device(self, d) for d in sorted(os.listdir(self.path("dev")))]

    def device(self, name):
        if not os.path.isdir(self.path("dev", name)):
            raise SmartioError(_errno.ENXIO, "there is no device named %s (devices: %s)"
                               % (name, ", ".join(d.name for d in self.devices)))
        return Device(self, name)

    @property
    def segments(self):
        return [s for n in self.nodes for s in n.segments]

    def segment(self, fullname):
        """'host0.buf' -> that segment."""
        node, _, name = fullname.partition(".")
        return self.node(node).segment(name)

    @property
    def multicast(self):
        """The multicast groups of the cluster's switches."""
        try:
            names = sorted(os.listdir(self.path("multicast")))
        except FileNotFoundError:
            names = []
        return [Multicast(self, g) for g in names]

    def multicast_group(self, name):
        if not os.path.isdir(self.path("multicast", name)):
            raise SmartioError(_errno.ENOENT, "there is no multicast group named %s "
                               "(groups: %s)" % (name, ", ".join(
                                   g.name for g in self.multicast) or "none"))
        return Multicast(self, name)

    def create_multicast(self, name, size=None):
        """mkdir (a free group of the first switch that has one) and, with
        size, its size: the group, or a SmartioError with nothing left
        behind."""
        if not name or "/" in name or name in (".", ".."):
            raise SmartioError(_errno.EINVAL, explain(
                self, "multicast-create", _errno.EINVAL, group=name))
        if size is not None:
            # Whole pages up to 1G (smartio(7)), checked before the mkdir:
            # a group made and freed again would be two multicast events
            # of nothing.
            try:
                n = size if isinstance(size, int) else parse_size(size)
                ok = 0 < n <= 1 << 30 and n % 4096 == 0
            except ValueError:
                ok = False
            if not ok:
                raise SmartioError(_errno.EINVAL, explain(
                    self, "multicast-size", _errno.EINVAL, group=name, size=size))
        try:
            os.mkdir(self.path("multicast", name))
        except OSError as e:
            raise self.error("multicast-create", e, group=name) from None
        g = Multicast(self, name)
        if size is not None:
            try:
                g.set_size(size)
            except SmartioError:
                with contextlib.suppress(OSError):
                    os.rmdir(g.path())
                raise
        return g

    def borrow(self, dev, node=None):
        """A context manager: the device borrowed, returned on exit."""
        return self.device(dev).borrowed(node)

    def events(self, nonblock=False):
        from .events import read_events
        return read_events(self.path("events"), nonblock)

    def error(self, op, oserror, **ctx):
        """The SmartioError for oserror, with the sentence read from the
        namespace's state now."""
        e = oserror.errno
        return SmartioError(e, explain(self, op, e, **ctx), oserror.filename)
