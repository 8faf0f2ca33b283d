# SPDX-License-Identifier: GPL-2.0-or-later
"""A refused destroy or withdrawal names who holds the attachment (issue 32
item 12): a shell's `echo host2 > attach` pins the segment to that shell,
and the EBUSY sentence says which process (pid and command), on which
mount, and the command that detaches it.  The segment's holders file is
where the daemon tells it."""
import errno
import json
import os
import subprocess
import sys

import pytest

import smartio
from smartio import cli


def run(capsys, *args):
    try:
        rc = cli.main(list(args))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def shell_attaches(mount, seg, node):
    """A shell that writes node to seg's attach and then waits: the
    attachment is that shell's.  Returns the Popen once attached."""
    p = subprocess.Popen(["sh", "-c", 'echo %s > "$1/attach" && echo ok && read x'
                          % node, "sh", os.path.join(mount, seg)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert p.stdout.readline() == b"ok\n"
    return p


def test_holders_file_lists_the_writing_process(cluster, capsys):
    cluster.node("host0").create_segment("ring", "64k", available=True)
    sh = shell_attaches(cluster.root, "nodes/host0/segments/ring", "host2")
    try:
        with open(cluster.path("nodes/host0/segments/ring/holders")) as f:
            assert f.read() == "host2 %d sh\n" % sh.pid
        # show, in text and JSON, says it too
        rc, out, err = run(capsys, "-m", cluster.root, "show", "host0.ring")
        assert "\tHeld by: process %d (sh) for host2\n" % sh.pid in out
        rc, out, err = run(capsys, "-m", cluster.root, "show", "host0.ring", "-J")
        assert json.loads(out)["holders"] == [{"node": "host2", "pid": sh.pid,
                                               "command": "sh"}]
    finally:
        sh.stdin.close()
        sh.wait()


def test_destroy_refused_names_the_shell_that_holds_it(cluster, capsys):
    m = cluster.root
    cluster.node("host0").create_segment("ring", "64k", available=True)
    sh = shell_attaches(m, "nodes/host0/segments/ring", "host2")
    try:
        rc, out, err = run(capsys, "-m", m, "segment", "destroy", "host0.ring")
        assert rc == 1
        assert err == ("smartio: host0.ring is attached by host2, held by process %d (sh) "
                       "until it exits or it is detached (smartio segment detach host0.ring host2) "
                       "(EBUSY)\n" % sh.pid)
        rc, out, err = run(capsys, "-m", m, "segment", "export", "host0.ring", "off")
        assert rc == 1
        assert err == ("smartio: host0.ring cannot be withdrawn while attached by host2, "
                       "held by process %d (sh) until it exits or it is detached (smartio "
                       "segment detach host0.ring host2) (EBUSY)\n" % sh.pid)
    finally:
        sh.stdin.close()
        sh.wait()


def test_holder_through_another_mount_of_the_fabric_is_named(two):
    a, b = two
    seg = a.self.create_segment("ring", "64k", available=True)
    sh = shell_attaches(b.root, "nodes/host0/segments/ring", "host1")
    try:
        with pytest.raises(smartio.SmartioError) as e:
            seg.destroy()
        assert e.value.errno == errno.EBUSY
        assert e.value.strerror == (
            "host0.ring is attached by host1, held by process %d (sh) through %s "
            "until it exits or it is detached (smartio segment detach host0.ring host1)"
            % (sh.pid, os.path.realpath(b.root)))
    finally:
        sh.stdin.close()
        sh.wait()



def test_until_detached_holder_is_named_smartio_hold(cluster, capsys):
    m = cluster.root
    cluster.node("host0").create_segment("ring", "64k", available=True)
    rc, out, err = run(capsys, "-m", m, "segment", "attach", "host0.ring", "host2",
                       "--until-detached")
    assert rc == 0, err
    holder = int(out.split("held by process ")[1].split()[0])
    try:
        rc, out, err = run(capsys, "-m", m, "segment", "destroy", "host0.ring")
        assert rc == 1 and ("host2, held by process %d (smartio-hold) until it exits"
                            % holder) in err
    finally:
        run(capsys, "-m", m, "segment", "detach", "host0.ring", "host2")


def test_a_holder_name_is_one_printable_word(cluster, capsys):
    """Any process names itself (prctl, /proc/self/comm): a blank or a
    byte that is not text must not reach the holders file's reader."""
    seg = cluster.node("host0").create_segment("ring", "64k", available=True)
    code = ("import sys\n"
            "open('/proc/self/comm', 'wb').write(b'a b\\xff\\x01c')\n"
            "open(sys.argv[1], 'w').write('host2')\n"
            "print('ok', flush=True)\n"
            "sys.stdin.read()\n")
    p = subprocess.Popen([sys.executable, "-c", code, seg.path("attach")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert p.stdout.readline() == b"ok\n"
        with open(seg.path("holders"), "rb") as f:
            assert f.read() == b"host2 %d a_b__c\n" % p.pid
        rc, out, err = run(capsys, "-m", cluster.root, "segment", "destroy", "host0.ring")
        assert rc == 1 and "held by process %d (a_b__c)" % p.pid in err
    finally:
        p.stdin.close()
        p.wait()
