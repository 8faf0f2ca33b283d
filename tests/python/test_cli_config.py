# SPDX-License-Identifier: GPL-2.0-or-later
"""smartio config (issue 32 item 16, the namespace's config file from the
command): a dump as lspci -xxx prints one, a register read and written as
setpci(8) names it (hex offset or header name, .B/.W/.L), each equal to
what dev/<dev>/config holds; a write by a node that neither lends nor
borrows the device is the sentence naming why, and malformed registers
and values are usage errors that write nothing."""
import os
import struct

from smartio import cli


def run(capsys, *args):
    try:
        rc = cli.main(list(args))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def raw(c, dev, off, n):
    fd = os.open(c.path("dev", dev, "config"), os.O_RDONLY)
    try:
        return os.pread(fd, n, off)
    finally:
        os.close(fd)


def test_config_dump_read_and_write(cluster, capsys):
    m = cluster.root
    rc, out, err = run(capsys, "-m", m, "config", "nvme0")
    assert rc == 0, err
    data = raw(cluster, "nvme0", 0, 4096)
    lines = out.splitlines()
    assert len(lines) == (len(data) + 15) // 16 and len(lines) >= 4
    assert lines[0] == "00: " + " ".join("%02x" % b for b in data[:16])
    vendor, device = struct.unpack_from("<HH", data, 0)
    assert run(capsys, "-m", m, "config", "nvme0", "VENDOR_ID")[1] == "%04x\n" % vendor
    assert run(capsys, "-m", m, "config", "nvme0", "0.l")[1] == "%08x\n" % (
        vendor | device << 16)
    assert run(capsys, "-m", m, "config", "nvme0", "2.w")[1] == "%04x\n" % device
    assert run(capsys, "-m", m, "config", "nvme0", "8")[1] == "%02x\n" % data[8]
    # host0, this mount's node, lends nvme0: it writes the command register
    cmd = struct.unpack_from("<H", data, 4)[0]
    assert run(capsys, "-m", m, "config", "nvme0", "COMMAND=%x" % (cmd | 0x6))[0] == 0
    assert struct.unpack("<H", raw(cluster, "nvme0", 4, 2))[0] & 0x6 == 0x6
    assert run(capsys, "-m", m, "config", "nvme0", "4.w=%x" % cmd)[0] == 0
    assert struct.unpack("<H", raw(cluster, "nvme0", 4, 2))[0] == cmd


def test_config_refusals(cluster, capsys):
    m = cluster.root
    before = raw(cluster, "nvme1", 0, 64)
    # nvme1 is host1's and nobody borrows it: host0 may not write it
    rc, out, err = run(capsys, "-m", m, "config", "nvme1", "COMMAND=6")
    assert (rc, err) == (1, "smartio: host0 is neither the lender of nvme1 (host1) nor a "
                            "borrower: it may not write its configuration space (EACCES)\n")
    for bad, why in (("3.w", "not a 2-byte register"), ("1000.l", "not a 4-byte register"),
                     ("4.q", "not a width"), ("BOGUS", "not a register"),
                     ("4.w=10000", "not a 2-byte value"), ("4.b=zz", "not a 1-byte value")):
        rc, out, err = run(capsys, "-m", m, "config", "nvme1", bad)
        assert rc == 2 and why in err, (bad, err)
    assert raw(cluster, "nvme1", 0, 64) == before
    # once host0 borrows nvme1 it may
    d = cluster.device("nvme1")
    d.lend("all")
    d.borrow("host0")
    try:
        assert run(capsys, "-m", m, "config", "nvme1", "COMMAND=6")[0] == 0
    finally:
        d.return_("host0")
