# SPDX-License-Identifier: LGPL-2.1-or-later
"""smartio(1): the cluster at a glance, and plain messages for what it
refuses.  Every subcommand reads or writes the files of one mounted
namespace (--mount, $SMARTIO_MOUNT, /smartio), through the package.

Exit status: 0 done; 1 refused (the sentence on stderr), or for `status`
a node or link down; 2 a usage error or no mount.
"""
import argparse
import errno
import json
import os
import sys
import tempfile
import threading
import time

from . import Cluster, SmartioError, parse_size, __version__
from . import events as evmod
from . import render
from . import show as showmod

PROG = "smartio"


class Usage(Exception):
    pass


# The segments file the systemd units apply: SYSCONFDIR/smartio/
# segments.conf, set by the installed smartio script from the same
# configure value the units are made from, so the two name one file.
# None when run as `python3 -m smartio`: then the file must be named.
SEGMENTS_CONF = None
# Where the documentation, for either kind of prefix, tells an operator to
# put it.  A file at one of these that is not SEGMENTS_CONF is never read;
# `segment apply` says so rather than creating nothing in silence.
SEGMENTS_CONF_PLACES = ("/etc/smartio/segments.conf",
                        "/usr/local/etc/smartio/segments.conf")


def progress(what, fn, *args):
    """Runs fn(*args); when it takes longer than a second (or
    $SMARTIO_PROGRESS_AFTER seconds), says what it waits for on stderr
    until it ends.  On a terminal the line is redrawn; elsewhere one line
    at the start and one at the end."""
    after = float(os.environ.get("SMARTIO_PROGRESS_AFTER", "1"))
    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:   # handed to the caller's thread
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    start = time.monotonic()
    t.start()
    t.join(after)
    # Every operation takes longer than 0 s, even one whose thread ended
    # before this one looked (the test's way of forcing the lines).
    if t.is_alive() or after <= 0:
        tty = sys.stderr.isatty()
        if not tty:
            sys.stderr.write("%s: %s ...\n" % (PROG, what))
            sys.stderr.flush()
        while t.is_alive():
            if tty:
                sys.stderr.write("\r%s: %s ... %.1f s" % (PROG, what, time.monotonic() - start))
                sys.stderr.flush()
            t.join(0.2)
        sys.stderr.write("%s%s: %s: %s after %.1f s\n" % (
            "\r" if tty else "", PROG, what, "failed" if "error" in box else "done",
            time.monotonic() - start))
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _seg(c, spec):
    """'host0.buf' or 'buf' (this mount's node) -> (node, name)."""
    node, dot, name = spec.partition(".")
    if not dot:
        node, name = c.self_name, spec
    return c.node(node), name


# --- subcommands ------------------------------------------------------------

def _only_devices(c, snap, names):
    """snap with only the devices named (in that order), or ENXIO."""
    by = {d["name"]: d for d in snap["devices"]}
    for n in names:
        if n not in by:
            c.device(n)     # ENXIO, naming the devices
    snap["devices"] = [by[n] for n in dict.fromkeys(names)]
    return snap


def _columns(text):
    """'device,state' -> ('device', 'state'), for list -o."""
    cols = tuple(x.strip() for x in text.split(","))
    bad = [x for x in cols if x not in render.COLUMNS]
    if bad or not cols:
        raise argparse.ArgumentTypeError("%r is not a column: give some of %s, comma-separated"
                                         % (",".join(bad), ",".join(render.COLUMNS)))
    return cols


def cmd_list(c, a):
    snap = render.snapshot(c)
    if a.devices:
        if a.tree or a.dot:
            raise Usage("list: --tree and --dot draw the whole cluster; "
                        "name devices for the table or -J")
        snap = _only_devices(c, snap, a.devices)
    if a.columns and (a.json or a.tree or a.dot):
        raise Usage("list: -o chooses the table's columns; not with -J, --tree or --dot")
    if a.json:
        json.dump(snap, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif a.dot:
        sys.stdout.write(render.dot(snap))
    elif a.tree:
        sys.stdout.write(render.tree(snap))
    else:
        sys.stdout.write(render.table(snap, a.columns or render.DEFAULT_COLUMNS))
    return 0


def cmd_show(c, a):
    info = showmod.show(c, a.object)
    if a.json:
        json.dump(info, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(showmod.text(info))
    return 0


def _write_atomic(path, text):
    """Replaces path with text in one rename, so that a reader (a
    Prometheus textfile collector) never sees half a file.  The temporary
    file is made by mkstemp in path's directory: a fixed name there could
    be a symlink or file that another user planted, which root would then
    follow and overwrite (issue 28 item 10).  It gets the mode a plain
    create would give (0666 less the umask), not mkstemp's 0600."""
    d, base = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".%s." % base, suffix=".tmp", dir=d)
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)
        with os.fdopen(fd, "w") as f:
            fd = -1
            f.write(text)
        os.rename(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        os.unlink(tmp)
        raise


def _only_nodes(snap, names):
    """snap with only the nodes named and the devices they lend, or ENOENT."""
    by = {n["name"]: n for n in snap["nodes"]}
    for n in names:
        if n not in by:
            raise SmartioError(errno.ENOENT, "there is no node named %s (nodes: %s)" % (
                n, ", ".join(sorted(by))))
    keep = list(dict.fromkeys(names))
    snap["nodes"] = [by[n] for n in keep]
    snap["devices"] = [d for d in snap["devices"] if d["node"] in keep]
    return snap


def cmd_status(c, a):
    snap = render.snapshot(c)
    if a.nodes:
        snap = _only_nodes(snap, a.nodes)
    text = render.prometheus(snap) if a.prometheus else \
        render.status(snap, ",".join(n["name"] for n in snap["nodes"]) if a.nodes else "cluster")
    if a.output:
        try:
            _write_atomic(a.output, text)
        except OSError as e:
            print("%s: cannot write %s: %s" % (PROG, a.output, e.strerror), file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text)
    bad = render.problems(snap)
    if bad and a.prometheus:
        for b in bad:
            print("%s: %s" % (PROG, b), file=sys.stderr)
    # With -o the exit status says whether the file was written: a
    # textfile collector's timer must not fail on a lab with nodes down,
    # whose health is in the file (smartio_node_up 0).
    return 1 if bad and not a.output else 0


def cmd_lend(c, a):
    dev = c.device(a.dev)
    progress("lending %s to %s" % (a.dev, " ".join(a.policy)), dev.lend, a.policy)
    return 0


def _window(text):
    """borrow --window: 'ram' or a size (the namespace checks the power of
    two and the room)."""
    if text == "ram":
        return text
    try:
        parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))
    return text


def cmd_borrow(c, a):
    dev = c.device(a.dev)
    who = a.node or c.self_name
    progress("%s borrowing %s from %s" % (who, a.dev, dev.node), dev.borrow, who,
             getattr(a, "window", None))
    return 0


def cmd_link(c, a):
    node = c.node(a.node)
    ad = next((x for x in node.adapters if x.name == a.adapter), None)
    if ad is None:
        raise SmartioError(errno.ENODEV, "%s has no adapter %s (adapters: %s)" % (
            a.node, a.adapter, ", ".join(x.name for x in node.adapters) or "none"))
    if a.state:
        ad.set_link(a.state == "up")
    else:
        print(ad.link)
    return 0


def cmd_sriov(c, a):
    dev = c.device(a.dev)
    have = dev.sriov
    if have is None:
        raise SmartioError(errno.ENODEV, "%s has no SR-IOV capability" % a.dev)
    if a.numvfs is None:
        print("%d of %d virtual functions enabled" % have)
        return 0
    progress("enabling %d virtual functions of %s" % (a.numvfs, a.dev),
             dev.set_numvfs, a.numvfs)
    return 0


# setpci(8)'s names for the standard header's registers: offset, width.
CONFIG_NAMES = {
    "VENDOR_ID": (0x00, 2), "DEVICE_ID": (0x02, 2), "COMMAND": (0x04, 2),
    "STATUS": (0x06, 2), "REVISION": (0x08, 1), "CACHE_LINE_SIZE": (0x0c, 1),
    "LATENCY_TIMER": (0x0d, 1), "HEADER_TYPE": (0x0e, 1),
    "BASE_ADDRESS_0": (0x10, 4), "BASE_ADDRESS_1": (0x14, 4),
    "BASE_ADDRESS_2": (0x18, 4), "BASE_ADDRESS_3": (0x1c, 4),
    "BASE_ADDRESS_4": (0x20, 4), "BASE_ADDRESS_5": (0x24, 4),
    "SUBSYSTEM_VENDOR_ID": (0x2c, 2), "SUBSYSTEM_ID": (0x2e, 2),
    "CAPABILITIES": (0x34, 1), "INTERRUPT_LINE": (0x3c, 1),
    "INTERRUPT_PIN": (0x3d, 1),
}
WIDTHS = {"B": 1, "W": 2, "L": 4}


def _config_reg(text):
    """setpci's REG[.B|.W|.L][=VALUE]: (offset, width, value or None).  A
    number is hex, as in setpci; a name has its own width."""
    reg, eq, value = text.partition("=")
    name, dot, width = reg.partition(".")
    if name.upper() in CONFIG_NAMES:
        off, size = CONFIG_NAMES[name.upper()]
    else:
        try:
            off, size = int(name, 16), 1
        except ValueError:
            raise argparse.ArgumentTypeError(
                "%r is not a register: a hex offset or one of %s" % (
                    name, ", ".join(sorted(CONFIG_NAMES))))
    if dot:
        if width.upper() not in WIDTHS:
            raise argparse.ArgumentTypeError("%r is not a width: B, W or L" % width)
        size = WIDTHS[width.upper()]
    if not 0 <= off <= 4096 - size or off % size:
        raise argparse.ArgumentTypeError(
            "%#x is not a %d-byte register: aligned to its width, within 4096 bytes"
            % (off, size))
    val = None
    if eq:
        try:
            val = int(value, 16)
        except ValueError:
            val = -1
        if not 0 <= val < 1 << (8 * size):
            raise argparse.ArgumentTypeError(
                "%r is not a %d-byte value (hex)" % (value, size))
    return off, size, val


def cmd_config(c, a):
    """A device's configuration space, as setpci(8) and lspci -xxx show it,
    through dev/<dev>/config as this mount's node."""
    dev = c.device(a.dev)
    if a.reg is None:
        data = dev.read_config(0, 4096)
        for off in range(0, len(data), 16):
            print("%02x: %s" % (off, " ".join("%02x" % b for b in data[off:off + 16])))
        return 0
    off, size, val = a.reg
    if val is None:
        got = dev.read_config(off, size)
        if len(got) < size:
            raise SmartioError(errno.EACCES, "%s's configuration space at %#x is not "
                               "readable here (past the header is the admin's and "
                               "operators', or past its end)" % (a.dev, off))
        print("%0*x" % (2 * size, int.from_bytes(got, "little")))
        return 0
    dev.write_config(off, val.to_bytes(size, "little"))
    return 0


def cmd_irq(c, a):
    """Waits on a device's irq/<vec> files (smartio(7), UIO style) and
    prints a line each time a vector fires, with its count so far."""
    import select
    dev = c.device(a.dev)
    routed = dev.irq_vectors
    vecs = a.vectors or routed
    if not vecs:
        raise SmartioError(errno.ENOENT, "no vector of %s is routed to %s: borrow it (or "
                           "be its lender) and enable MSI or MSI-X" % (a.dev, c.self_name))
    for v in vecs:
        if v not in routed:
            raise SmartioError(errno.ENOENT, "vector %d of %s is not routed to %s "
                               "(routed here: %s)" % (v, a.dev, c.self_name,
                                                      ", ".join(map(str, routed)) or "none"))
    fds = {dev.open_irq(v): v for v in vecs}
    shown = 0
    try:
        pl = select.poll()
        for fd in fds:
            pl.register(fd, select.POLLIN)
        if a.ready:
            open(a.ready, "w").close()
        while not a.count or shown < a.count:
            ready = pl.poll(None if a.timeout is None else a.timeout * 1000)
            if not ready:
                break               # -t seconds without one
            for fd, ev in ready:
                try:
                    n = int.from_bytes(os.read(fd, 4), sys.byteorder)
                except OSError as e:
                    raise c.error("irq", e, dev=a.dev) from None
                print("%s %s vector %d: %d interrupts" % (
                    time.strftime("%H:%M:%S"), a.dev, fds[fd], n))
                sys.stdout.flush()
                shown += 1
                if a.count and shown >= a.count:
                    break
    finally:
        for fd in fds:
            os.close(fd)
    return 0


def cmd_peer(c, a):
    dev = c.device(a.dev)
    c.device(a.peer)
    if a.action == "map":
        for bar, addr in sorted(dev.peer_map(a.peer).items()):
            print("%s reaches %s BAR %d at %#x" % (a.dev, a.peer, bar, addr))
    else:
        dev.peer_unmap(a.peer)
    return 0


def cmd_multicast(c, a):
    """multicast/ (smartio(7), MULTICAST): list, create, destroy, join,
    leave, map and unmap a switch's multicast groups."""
    if a.action == "list":
        groups = [render.multicast_info(g) for g in c.multicast]
        if a.json:
            json.dump(groups, sys.stdout, indent=2)
            sys.stdout.write("\n")
            return 0
        for g in groups:
            print("%s: %s on %s, members %s, mapped for %s, %d writes, %d delivered" % (
                g["name"], render.human_size(g["size"]), g["switch"],
                ", ".join(g["members"]) or "none",
                ", ".join("%s at %s" % kv for kv in sorted(g["dma"].items())) or "none",
                g["writes"], g["delivered"]))
        return 0
    if a.action == "create":
        if a.size is not None:
            try:
                parse_size(a.size)
            except ValueError as e:
                raise Usage(str(e))
        g = c.create_multicast(a.group, a.size)
        print("multicast group %s: %s on %s" % (g.name, render.human_size(g.size), g.switch))
        return 0
    g = c.multicast_group(a.group)
    if a.action == "destroy":
        g.destroy()
    elif a.action == "join":
        c.node(a.node)
        g.join(a.node, a.buffer)
    elif a.action == "leave":
        c.node(a.node)
        g.leave(a.node)
    elif a.action == "map":
        c.device(a.dev)
        print("%s writes into multicast group %s at %#x" % (a.dev, g.name, g.dma_map(a.dev)))
    elif a.action == "unmap":
        c.device(a.dev)
        g.dma_unmap(a.dev)
    return 0


def _spawn_holder(seg, who, for_pid):
    """Attaches seg for who from a background process of its own (a new
    session, no terminal): the daemon ties the attachment to that process,
    which keeps it until who is detached or, with for_pid, until that
    process ends.  Returns the holder's pid once the attach is done, or
    raises its error."""
    pidfd = None
    if for_pid is not None:
        try:
            pidfd = os.pidfd_open(for_pid)
        except ProcessLookupError:
            raise SmartioError(errno.ESRCH, "there is no process %d" % for_pid) from None
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:                # a session of its own, then the holder
        os.close(r)
        os.setsid()
        if os.fork():
            os._exit(0)
        _hold(seg, who, pidfd, w)
    os.close(w)
    os.waitpid(pid, 0)
    with os.fdopen(r, "rb") as f:
        verdict = f.read().decode(errors="replace")
    if pidfd is not None:
        os.close(pidfd)
    word, _, rest = verdict.partition(" ")
    if word != "ok":
        raise SmartioError(int(word) if word.isdigit() else errno.EIO,
                           rest or "the holder process died")
    return int(rest)


def _hold(seg, who, pidfd, w):
    """The holder: attach, tell the parent, then wait for the end of the
    attachment (who detached, segment or mount gone) or of process pidfd;
    its exit ends the attachment."""
    import select
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        # The name the segment's holders file and a refused destroy give
        # this process (they read /proc/PID/comm), rather than "python3".
        try:
            with open("/proc/self/comm", "w") as f:
                f.write("smartio-hold")
        except OSError:
            pass
        try:
            seg.attach(who)
        except SmartioError as e:
            os.write(w, ("%d %s" % (e.errno, e.sentence)).encode())
            return
        os.write(w, ("ok %d" % os.getpid()).encode())
        os.close(w)
        while True:
            if pidfd is not None:
                if select.select([pidfd], [], [], 1.0)[0]:
                    return          # the named process ended
            else:
                time.sleep(1.0)
            if who not in seg.attached:
                return              # detached
    except BaseException:
        pass
    finally:
        os._exit(0)


def _hold_until_signalled(ready):
    """Creates ready (if given), then blocks until SIGINT, SIGTERM or
    SIGHUP."""
    import signal
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    if ready:
        open(ready, "w").close()
    while not stop.wait(3600):
        pass


def cmd_return(c, a):
    dev = c.device(a.dev)
    who = a.node or c.self_name
    progress("%s returning %s to %s" % (who, a.dev, dev.node), dev.return_, who)
    return 0


def cmd_reclaim(c, a):
    dev = c.device(a.dev)
    progress("reclaiming %s" % a.dev, dev.reclaim)
    return 0


def cmd_mode(c, a):
    dev = c.device(a.dev)
    if a.mode is None:
        print(dev.mode)
        return 0
    dev.set_mode(a.mode)
    return 0


def cmd_segment(c, a):
    if a.action == "create":
        node, name = _seg(c, a.segment)
        try:
            parse_size(a.size)
        except ValueError as e:
            raise Usage(str(e))
        progress("creating segment %s.%s" % (node.name, name),
                 node.create_segment, name, a.size, a.export)
    elif a.action == "destroy":
        node, name = _seg(c, a.segment)
        progress("destroying segment %s.%s" % (node.name, name),
                 node.segment(name).destroy)
    elif a.action in ("attach", "detach"):
        node, name = _seg(c, a.segment)
        who = a.node or c.self_name
        c.node(who)
        seg = node.segment(name)
        if a.action == "detach":
            seg.detach(who)
            return 0
        if a.until_detached or a.for_pid is not None:
            holder = _spawn_holder(seg, who, a.for_pid)
            print("%s attached %s.%s; held by process %d until %s" % (
                who, node.name, name, holder,
                "it is detached" if a.for_pid is None else
                "process %d ends (or it is detached)" % a.for_pid))
            if a.ready:
                open(a.ready, "w").close()
            return 0
        seg.attach(who)
        # The attachment is this process's (smartio(7)): it lasts while
        # the command runs, and ends with it.
        print("%s attached %s.%s; held until this command ends (Ctrl-C)" % (
            who, node.name, name))
        sys.stdout.flush()
        _hold_until_signalled(a.ready)
    elif a.action in ("map", "unmap"):
        node, name = _seg(c, a.segment)
        c.device(a.dev)
        seg = node.segment(name)
        if a.action == "map":
            print("%s reaches %s.%s at %#x" % (a.dev, node.name, name, seg.dma_map(a.dev)))
        else:
            seg.dma_unmap(a.dev)
    elif a.action == "export":
        node, name = _seg(c, a.segment)
        node.segment(name).export(a.state != "off")
    elif a.action == "apply":
        path = a.file or SEGMENTS_CONF
        if path is None:
            raise Usage("segment apply: name the file (this smartio has no "
                        "configured SYSCONFDIR/smartio/segments.conf)")
        _warn_segments_conf_elsewhere(path)
        if a.if_exists and not os.path.exists(path):
            return 0
        return apply_segments(c, path)
    return 0


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _warn_segments_conf_elsewhere(path):
    """When path is the configured segments file, names each documented
    place that holds a segments file that is not it: the units read only
    path, so that file's segments would never be created."""
    if SEGMENTS_CONF is None or not _same_file(path, SEGMENTS_CONF):
        return
    for other in SEGMENTS_CONF_PLACES:
        if os.path.exists(other) and not _same_file(other, path):
            print("%s: warning: %s is not read: this smartio and its systemd "
                  "units read %s%s; move the file there (or configure "
                  "--sysconfdir=%s)" % (
                      PROG, other, path,
                      "" if os.path.exists(path) else ", which does not exist",
                      os.path.dirname(os.path.dirname(other))),
                  file=sys.stderr)


def parse_segments_conf(path):
    """Lines '<node> <segment> <size> [export]'; '#' starts a comment.
    Returns [(node, segment, size, export)] or raises Usage naming the
    line."""
    out = []
    try:
        f = open(path)
    except OSError as e:
        raise Usage("%s: %s" % (path, e.strerror))
    with f:
        for no, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if len(words) not in (3, 4) or (len(words) == 4 and words[3] != "export"):
                raise Usage("%s:%d: want '<node> <segment> <size> [export]'" % (path, no))
            try:
                size = parse_size(words[2])
            except ValueError as e:
                raise Usage("%s:%d: %s" % (path, no, e))
            out.append((words[0], words[1], size, len(words) == 4))
    return out


def apply_segments(c, path):
    """Creates the segments a config file declares; one that exists with
    the declared size is left alone (so a restart applies it again), one
    with another size is an error."""
    status = 0
    for node, name, size, export in parse_segments_conf(path):
        try:
            n = c.node(node)
            if os.path.isdir(n.path("segments", name)):
                seg = n.segment(name)
                have = seg.size
                # rounded up to 4096 (smartio(7))
                if have != (size + 4095) // 4096 * 4096:
                    raise SmartioError(17, "segment %s.%s exists with %d bytes, "
                                       "not %d" % (node, name, have, size))
                if export and not seg.available:
                    seg.export()
                continue
            n.create_segment(name, size, export)
            print("%s: created segment %s.%s (%s%s)" % (
                PROG, node, name, render.human_size(size), ", exported" if export else ""))
        except SmartioError as e:
            print("%s: %s" % (PROG, e), file=sys.stderr)
            status = 1
    return status


def _match(ev, a):
    if a.kind and ev["kind"] not in a.kind:
        return False
    if ev["kind"] == "lost":
        return True
    typ, name = evmod.subject(ev)
    if a.dev and not (typ == "dev" and name in a.dev or ev.get("dev") in a.dev):
        return False
    if a.node:
        nodes = {ev.get("node")}
        if typ == "nodes":
            nodes.add(name)
        elif typ == "seg":
            nodes.add(name.partition(".")[0])
        elif typ == "dev":
            try:
                nodes.add(a.cluster.device(name).node)
            except (SmartioError, OSError):
                pass
        if not nodes & set(a.node):
            return False
    return True


def describe(ev):
    """One event as a readable line."""
    if ev["kind"] == "lost":
        return "(lost %s events: this reader fell behind)" % ev.get("n", "?")
    sec, _, frac = ev["time"].partition(".")
    when = time.strftime("%H:%M:%S", time.localtime(int(sec))) + "." + frac[:3]
    typ, name = evmod.subject(ev)
    k = ev["kind"]
    n = ev.get("node")
    words = {
        "borrow": "%s borrowed %s" % (n, name),
        "return": "%s returned %s" % (n, name),
        "reclaim": "%s reclaimed from %s" % (name, n),
        "lend": "%s %s" % (name, {"none": "not lent", "all": "lent to all nodes"}.get(
            ev.get("policy"), "lent to " + ", ".join(str(ev.get("policy")).split(",")))),
        "mode": "%s mode: %s" % (name, ev.get("mode")),
        "node-up": "node %s up" % name,
        "node-down": "node %s down" % name,
        "segment-create": "segment %s created" % name,
        "segment-destroy": "segment %s destroyed" % name,
        "segment-attach": "segment %s attached by %s" % (name, n),
        "segment-detach": "segment %s detached from %s" % (name, n),
        "segment-export": "segment %s exported" % name,
        "segment-withdraw": "segment %s withdrawn" % name,
        "segment-dma-map": "segment %s mapped for %s" % (name, ev.get("dev")),
        "segment-dma-unmap": "segment %s unmapped for %s" % (name, ev.get("dev")),
        "dma-fault": "DMA fault on %s at %s: %s" % (name, ev.get("addr"), ev.get("reason")),
        "msi": "%s interrupts to %s: %s vectors" % (name, n, ev.get("vectors")),
    }.get(k)
    if words is None:
        extra = " ".join("%s=%s" % (x, v) for x, v in ev.items()
                         if x not in ("seq", "time", "kind", "object"))
        words = "%s %s %s" % (k, ev["object"], extra)
    return "%s #%d %s" % (when, ev["seq"], words.rstrip())


def watch_metrics(counts, lost):
    """What `watch --metrics` writes: the events this watcher saw by kind,
    and those it lost by falling behind the ring."""
    out = ["# HELP smartio_events_total Events the watcher read, by kind",
           "# TYPE smartio_events_total counter"]
    out += ['smartio_events_total{kind="%s"} %d' % (k, n) for k, n in sorted(counts.items())]
    out += ["# HELP smartio_events_lost_total Events the watcher fell behind on "
            "(overwritten in the cluster's event ring)",
            "# TYPE smartio_events_lost_total counter",
            "smartio_events_lost_total %d" % lost]
    return "\n".join(out) + "\n"


def cmd_watch(c, a):
    a.cluster = c
    # A filter that can never match is a mistake, not a quiet stream.
    for name in a.node or ():
        c.node(name)
    for name in a.dev or ():
        c.device(name)
    if a.count == 0:
        return 0
    shown = 0
    counts, lost = {}, 0
    with evmod.EventStream(c.path("events"), timeout=a.timeout) as stream:
        if a.metrics:
            _write_atomic(a.metrics, watch_metrics(counts, lost))
        if a.ready:
            # The stream starts at open (smartio(7)): a script waiting for
            # this file knows that what it does next is seen.
            open(a.ready, "w").close()
        for ev in stream:
            if a.metrics:
                if ev["kind"] == "lost":
                    lost += int(ev.get("n", 0))
                else:
                    counts[ev["kind"]] = counts.get(ev["kind"], 0) + 1
                _write_atomic(a.metrics, watch_metrics(counts, lost))
            if not _match(ev, a):
                continue
            print(json.dumps(ev, sort_keys=True) if a.json else describe(ev))
            sys.stdout.flush()
            shown += 1
            if a.count and shown >= a.count:
                break
    return 0


# --- arguments ----------------------------------------------------------------

def _at_least_zero(kind, unit, most=None):
    """An argparse type: a number of unit, 0 or more (a negative count or
    timeout means nothing; select(2) refuses one), and at most most."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            value = -1
        # "not >=" also refuses nan
        if not value >= 0 or (most is not None and value > most):
            raise argparse.ArgumentTypeError(
                "%r is not a number of %s, 0%s" % (
                    text, unit, " or more" if most is None else " to %.0f" % most))
        return value
    return parse


def _add_map_actions(actions, what):
    """map and unmap, alike for a segment and a multicast group: what
    names the argument (a.segment, a.group) and the help's noun."""
    q = actions.add_parser("map", help="map the %s for a device (prints its address)" % what)
    q.add_argument(what)
    q.add_argument("dev")
    q = actions.add_parser("unmap")
    q.add_argument(what)
    q.add_argument("dev")


def parser():
    ap = argparse.ArgumentParser(
        prog=PROG, description="Show and control a smartio cluster through "
        "its /smartio namespace (smartio(1)).")
    ap.add_argument("-m", "--mount", help="the namespace's mount point "
                    "(default: $SMARTIO_MOUNT or /smartio)")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("list", help="devices as a table, tree, JSON or Graphviz")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-J", "--json", action="store_true")
    g.add_argument("--tree", action="store_true")
    g.add_argument("--dot", action="store_true")
    p.add_argument("-o", "--output", dest="columns", type=_columns, metavar="COLUMNS",
                   help="the table's columns, comma-separated: %s" % ",".join(render.COLUMNS))
    p.add_argument("devices", nargs="*", metavar="DEV", help="only these devices")
    p.set_defaults(fn=cmd_list)

    p = sub.add_parser("show", help="one device, node or segment in full")
    p.add_argument("object", help="nvme0, host0, host0.ring (or dev/, nodes/, seg/ before it)")
    p.add_argument("-J", "--json", action="store_true")
    p.set_defaults(fn=cmd_show)

    p = sub.add_parser("status", help="nodes, adapters and segments; exit 1 if anything is down")
    p.add_argument("--prometheus", action="store_true",
                   help="Prometheus text format (node_exporter textfile collector)")
    p.add_argument("-o", "--output", help="write to this file atomically")
    p.add_argument("nodes", nargs="*", metavar="NODE",
                   help="only these nodes (and the devices they lend)")
    p.set_defaults(fn=cmd_status)

    p = sub.add_parser("lend", help="set who may borrow a device")
    p.add_argument("dev")
    p.add_argument("policy", nargs="+", help="none, all or node names")
    p.set_defaults(fn=cmd_lend)
    for name, fn, what in (("borrow", cmd_borrow, "borrow a device"),
                           ("return", cmd_return, "return a borrowed device")):
        p = sub.add_parser(name, help=what + " (default node: this mount's)")
        p.add_argument("dev")
        p.add_argument("node", nargs="?")
        if name == "borrow":
            p.add_argument("-w", "--window", type=_window, metavar="SIZE|ram",
                           help="the DMA window's size (default 64 MiB)")
        p.set_defaults(fn=fn)
    p = sub.add_parser("link", help="show or set an adapter's link")
    p.add_argument("node")
    p.add_argument("adapter")
    p.add_argument("state", nargs="?", choices=("up", "down"))
    p.set_defaults(fn=cmd_link)
    p = sub.add_parser("sriov", help="show or set how many virtual functions a PF enables")
    p.add_argument("dev")
    p.add_argument("numvfs", nargs="?", type=_at_least_zero(int, "virtual functions"))
    p.set_defaults(fn=cmd_sriov)
    p = sub.add_parser("config", help="read or write a device's configuration space "
                       "(as setpci, or a dump as lspci -xxx)")
    p.add_argument("dev")
    p.add_argument("reg", nargs="?", type=_config_reg, metavar="REG[.B|.W|.L][=VALUE]",
                   help="a hex offset or a header register's name (COMMAND, STATUS, ...)")
    p.set_defaults(fn=cmd_config)
    p = sub.add_parser("irq", help="wait for a device's interrupt vectors to fire")
    p.add_argument("dev")
    p.add_argument("vectors", nargs="*", type=_at_least_zero(int, "vectors", 2047),
                   metavar="VEC", help="default: every vector routed to this mount's node")
    p.add_argument("-c", "--count", type=_at_least_zero(int, "interrupts"),
                   help="stop after this many")
    p.add_argument("-t", "--timeout", type=_at_least_zero(float, "seconds", 1e9),
                   help="stop after this many seconds without one")
    p.add_argument("--ready", metavar="FILE", help="create FILE once the vectors are open")
    p.set_defaults(fn=cmd_irq)
    p = sub.add_parser("peer", help="map a device's BARs for another device (peer-to-peer)")
    p.add_argument("action", choices=("map", "unmap"))
    p.add_argument("dev", help="the device that will DMA")
    p.add_argument("peer", help="the device whose BARs it reaches")
    p.set_defaults(fn=cmd_peer)
    p = sub.add_parser("reclaim", help="revoke every borrower (on the lender's or a management mount)")
    p.add_argument("dev")
    p.set_defaults(fn=cmd_reclaim)
    p = sub.add_parser("mode", help="show or set exclusive or shared mode")
    p.add_argument("dev")
    p.add_argument("mode", nargs="?")
    p.set_defaults(fn=cmd_mode)

    p = sub.add_parser("segment", help="create, destroy, export segments")
    ss = p.add_subparsers(dest="action", metavar="ACTION")
    ss.required = True
    q = ss.add_parser("create")
    q.add_argument("segment", help="[node.]name")
    q.add_argument("size")
    q.add_argument("--export", action="store_true")
    q = ss.add_parser("destroy")
    q.add_argument("segment")
    q = ss.add_parser("attach", help="attach for a node while this command runs")
    q.add_argument("segment")
    q.add_argument("node", nargs="?")
    q.add_argument("--ready", metavar="FILE", help="create FILE once attached")
    g = q.add_mutually_exclusive_group()
    g.add_argument("--until-detached", action="store_true",
                   help="return at once; a background process holds it until detached")
    g.add_argument("--for-pid", type=int, metavar="PID",
                   help="return at once; held until process PID ends (or detached)")
    q = ss.add_parser("detach")
    q.add_argument("segment")
    q.add_argument("node", nargs="?")
    _add_map_actions(ss, "segment")
    q = ss.add_parser("export")
    q.add_argument("segment")
    q.add_argument("state", nargs="?", choices=("on", "off"), default="on")
    q = ss.add_parser("apply", help="create the segments a config file declares")
    q.add_argument("--if-exists", action="store_true",
                   help="a missing file is nothing to do")
    q.add_argument("file", nargs="?",
                   help="default: %s" % (SEGMENTS_CONF or "none, name one"))
    p.set_defaults(fn=cmd_segment)

    p = sub.add_parser("multicast", help="a switch's multicast groups: create, join, map")
    ms = p.add_subparsers(dest="action", metavar="ACTION")
    ms.required = True
    q = ms.add_parser("list", help="the groups, their members and mappings")
    q.add_argument("-J", "--json", action="store_true")
    q = ms.add_parser("create", help="take a free group of the first switch that has one")
    q.add_argument("group")
    q.add_argument("size", nargs="?", help="bytes a write may cover (default one page)")
    q = ms.add_parser("destroy")
    q.add_argument("group")
    q = ms.add_parser("join", help="subscribe a node with a segment or DEV/barN")
    q.add_argument("group")
    q.add_argument("node")
    q.add_argument("buffer", help="a segment of the node, or DEV/barN of a device in it")
    q = ms.add_parser("leave")
    q.add_argument("group")
    q.add_argument("node")
    _add_map_actions(ms, "group")
    p.set_defaults(fn=cmd_multicast)

    p = sub.add_parser("watch", help="the event stream as readable lines")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("-k", "--kind", action="append", choices=evmod.KINDS, metavar="KIND",
                   help="only events of this kind: %s" % ", ".join(evmod.KINDS))
    p.add_argument("-n", "--node", action="append", help="only events about this node")
    p.add_argument("-d", "--dev", action="append", help="only events about this device")
    p.add_argument("-c", "--count", type=_at_least_zero(int, "events"),
                   help="stop after this many events")
    p.add_argument("-t", "--timeout", type=_at_least_zero(float, "seconds", 1e9),
                   help="stop after this many seconds without one")
    p.add_argument("--ready", metavar="FILE", help="create FILE once the stream is open")
    p.add_argument("--metrics", metavar="FILE",
                   help="keep FILE the Prometheus counts of events read and lost")
    p.set_defaults(fn=cmd_watch)
    _add_version(ap)
    return ap


def _add_version(p):
    """--version on the command and on every subcommand, as in ip(8)'s -V
    anywhere: an operator adds it to the line they have."""
    p.add_argument("--version", action="version", version="%s %s" % (PROG, __version__))
    for act in p._actions:
        if isinstance(act, argparse._SubParsersAction):
            for sub in act.choices.values():
                _add_version(sub)


def main(argv=None):
    ap = parser()
    a = ap.parse_args(argv)
    try:
        c = Cluster(a.mount)
        return a.fn(c, a)
    except Usage as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 2
    except SmartioError as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 2 if e.filename is None and "not a smartio mount" in e.sentence else 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
