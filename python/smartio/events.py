# SPDX-License-Identifier: LGPL-2.1-or-later
"""The event stream (smartio(7), EVENTS) as dictionaries."""
import os
import select

# Every kind of event the core writes (lib/core/event.c's table, in its
# order; tests/python/test_cli_validation.py keeps the two the same), and
# the reader's own "lost".
KINDS = ("node-up", "node-down", "lend", "borrow", "return", "reclaim",
         "segment-create", "segment-destroy", "segment-attach", "segment-detach",
         "dma-fault", "link-up", "link-down", "mode", "segment-dma-map",
         "segment-dma-unmap", "msi", "peer-refused", "failover", "sriov",
         "multicast", "segment-export", "segment-withdraw", "lost")


def parse(line):
    """'42 1763800000.120033441 borrow dev/nvme0 node=host3' ->
    {'seq': 42, 'time': '1763800000.120033441', 'kind': 'borrow',
     'object': 'dev/nvme0', 'node': 'host3'}; 'lost n=5' -> {'kind':
    'lost', 'n': 5}."""
    f = line.split()
    if f and f[0] == "lost":
        ev = {"kind": "lost"}
        for kv in f[1:]:
            k, _, v = kv.partition("=")
            ev[k] = int(v) if v.isdigit() else v
        return ev
    ev = {"seq": int(f[0]), "time": f[1], "kind": f[2], "object": f[3]}
    for kv in f[4:]:
        k, _, v = kv.partition("=")
        ev[k] = v
    return ev


def subject(ev):
    """(kind of object, name): ('dev', 'nvme0'), ('nodes', 'host1'),
    ('seg', 'host0.buf')."""
    kind, _, name = ev.get("object", "").partition("/")
    return kind, name


class EventStream:
    """The events from its open on; iterating yields them as dictionaries.
    With timeout (seconds), iteration stops after that long without one;
    with nonblock, once none is waiting."""

    def __init__(self, path, nonblock=False, timeout=None):
        self.nonblock, self.timeout = nonblock, timeout
        flags = os.O_RDONLY | (os.O_NONBLOCK if nonblock or timeout is not None else 0)
        self.fd = os.open(path, flags)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __iter__(self):
        while True:
            if self.timeout is not None and \
                    not select.select([self.fd], [], [], self.timeout)[0]:
                return
            try:
                data = os.read(self.fd, 4096)
            except BlockingIOError:
                if self.nonblock:
                    return
                continue
            if not data:
                return
            for line in data.decode().splitlines():
                if line.strip():
                    yield parse(line)


def read_events(path, nonblock=False, timeout=None):
    return EventStream(path, nonblock, timeout)
