# SPDX-License-Identifier: GPL-2.0-or-later
"""smartio irq (issue 32 item 16, the namespace's irq/<vec> files from the
command): host0 borrows acc0 (host2's DMA engine) and enables MSI-X;
`smartio irq acc0 0 -c 2` prints a line each time vector 0 fires, with
the count the file returned, and ends after two; -t ends a quiet wait;
a vector not routed here, or a device with none, is the sentence."""
import os
import struct
import subprocess
import sys
import time

from smartio import cli


def run(capsys, *args):
    try:
        rc = cli.main(list(args))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


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


def test_irq_prints_each_interrupt(cluster, tmp_path, capsys):
    m = cluster.root
    acc = cluster.device("acc0")
    rc, out, err = run(capsys, "-m", m, "irq", "acc0")
    assert (rc, err) == (1, "smartio: no vector of acc0 is routed to host0: borrow it (or "
                            "be its lender) and enable MSI or MSI-X (ENOENT)\n")
    acc.lend("all")
    acc.borrow("host0")
    enable_msix(cluster, "acc0")
    try:
        routed = acc.irq_vectors
        assert routed and routed[0] == 0
        rc, out, err = run(capsys, "-m", m, "irq", "acc0", "2047")
        assert rc == 1 and "vector 2047 of acc0 is not routed to host0" in err
        rc, out, err = run(capsys, "-m", m, "irq", "acc0", "0", "-t", "0.2")
        assert (rc, out) == (0, "")
        ready = str(tmp_path / "ready")
        p = subprocess.Popen([sys.executable, "-m", "smartio", "-m", m, "irq", "acc0", "0",
                              "-c", "2", "--ready", ready],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(200):
            if os.path.exists(ready) or p.poll() is not None:
                break
            time.sleep(0.05)
        assert os.path.exists(ready), p.stderr.read()
        bar0 = acc.map_bar(0, 1 << 20)
        mem = struct.unpack_from("<Q", bar0, 0x10)[0]
        lines = []
        for engine in (0, 1):
            base = 0x100 + 0x40 * engine
            struct.pack_into("<QQII", bar0, base, mem, mem + 8192 * (engine + 1), 4096, 0)
            struct.pack_into("<I", bar0, base + 0x1c, 0)
            struct.pack_into("<I", bar0, base + 0x14, 3)    # GO | interrupt
            end = time.time() + 20
            while struct.unpack_from("<I", bar0, base + 0x18)[0] != 2:
                assert time.time() < end, "engine %d did not finish" % engine
                time.sleep(0.01)
            # its line before the next interrupt: two unread ones are one read
            lines.append(p.stdout.readline().rstrip("\n"))
        out, err = p.communicate(timeout=30)
        assert (p.returncode, out) == (0, ""), err
        counts = [int(l.split(": ")[1].split()[0]) for l in lines]
        assert all(" acc0 vector 0: " in l for l in lines) and 1 <= counts[0] < counts[1]
        bar0.close()
    finally:
        acc.return_("host0")
