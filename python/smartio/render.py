# SPDX-License-Identifier: LGPL-2.1-or-later
"""The cluster as a snapshot dictionary (the JSON of `smartio list -J`), and
that snapshot as a table, a tree, a Graphviz graph, a status report and
Prometheus metrics.  Everything is read once into the snapshot, so one
output is one consistent look (as consistent as the reads)."""
import os

from . import pciids

SCHEMA = "smartio-list/1"


def _lines(text):
    return [l for l in text.split("\n") if l]


def _pair(text):
    used, total = text.split()
    return {"used": int(used), "total": int(total)}


def _read_opt(obj, name):
    """The lines of an attribute that not every backend has, or None."""
    try:
        return _lines(obj.read(name))
    except FileNotFoundError:
        return None


def adapter_info(a):
    """Every attribute of the adapter's directory (smartio(7))."""
    info = {"name": a.name, "link": a.link, "peers": a.peers,
            "luts": _pair(a.read("luts")),
            "requesters": _pair(a.read("requesters")),
            "window": a.window}
    for key in ("requesters_in", "switch_requesters", "switch_requesters_in"):
        v = _read_opt(a, key)
        if v is not None:
            info[key] = _pair(v[0]) if v else None
    v = _read_opt(a, "switch")
    if v is not None:
        info["switch"] = v[0] if v else None
    for key in ("hops", "speed"):
        v = _read_opt(a, key)
        if v is not None:
            info[key] = {w[0]: [int(x) for x in w[1:]] for w in (l.split() for l in v)}
    return info


def segment_info(n, s):
    return {"name": s.name, "owner": n.name, "size": s.size,
            "available": s.available, "attached": s.attached,
            "holders": s.holders,
            "dma": {d: "%#x" % v for d, v in s.dma.items()}}


def multicast_info(g):
    return {"name": g.name, "switch": g.switch, "size": g.size, "members": g.members,
            "dma": {d: "%#x" % v for d, v in g.dma.items()},
            "writes": g.writes, "delivered": g.delivered}


def node_info(n, me):
    return {"name": n.name, "id": n.id, "state": n.state,
            "self": n.name == me,
            "adapters": [adapter_info(a) for a in n.adapters],
            "devices": [d.name for d in n.devices],
            "borrowed": [d.name for d in n.borrowed],
            "segments": [segment_info(n, s) for s in n.segments]}


def device_info(d):
    cls = d.read("class")
    return {
        "name": d.name, "fdid": d.read("fdid"), "node": d.node,
        "bdf": d.bdf, "vendor": d.read("vendor"), "device": d.read("device"),
        "subsystem_vendor": d.read("subsystem_vendor"),
        "subsystem_device": d.read("subsystem_device"),
        "revision": d.read("revision"), "class": cls,
        "class_name": pciids.class_name(int(cls, 16)),
        "state": d.state, "lend": _lines(d.read("lend")),
        "borrowers": d.borrowers, "mode": d.mode, "stats": d.stats,
        # the rest of the device's directory (issue 32 item 17): config
        # alone is left out, binary, and return and reclaim are write-only
        "resource": resource(d),
        "mapped_bars": d.bars,
        "dma_window": [{"node": w[0], "iova": w[1], "size": int(w[2])}
                       for w in (l.split() for l in _lines(d.read("dma_window")))],
        "msi": [dict(zip(("vec", "node", "addr", "data"), l.split()))
                for l in _lines(d.read("msi"))],
        "irq": d.irq_vectors,
        "peers": {p: {str(b): "%#x" % a for b, a in sorted(bars.items())}
                  for p, bars in d.peer_maps.items()},
        "sriov": _sriov(d)}


def resource(d):
    """The BARs that exist: number, start, end, size, flags."""
    out = []
    for i, line in enumerate(_lines(d.read("resource"))):
        start, end, flags = (int(x, 16) for x in line.split())
        if start or end:
            out.append({"bar": i, "start": "%#x" % start, "end": "%#x" % end,
                        "size": end - start + 1, "flags": "%#x" % flags})
    return out


def _sriov(d):
    """{totalvfs, numvfs} of a physical function, {pf} of a virtual one,
    or None."""
    if os.path.exists(d.path("sriov_pf")):
        return {"pf": d.read("sriov_pf")}
    have = d.sriov
    return None if have is None else {"numvfs": have[0], "totalvfs": have[1]}


def reachability(nodes, devices):
    """Sets each device's "reach" ("ok", "lender-down" or "cut-off") and
    "unreachable" (why not, or None): the state file says what the lender
    decided (local, available, borrowed); whether anyone can reach the
    device now is its lender's node and links."""
    by = {n["name"]: n for n in nodes}
    for d in devices:
        lender = by.get(d["node"])
        reach, why = "ok", None
        if lender is None or lender["state"] != "up":
            reach, why = "lender-down", "its lender %s is down" % d["node"]
        elif lender["adapters"] and all(a["link"] != "up" for a in lender["adapters"]):
            reach, why = "cut-off", "every link of its lender %s is down" % d["node"]
        d["reach"], d["unreachable"] = reach, why


def snapshot(c):
    """The state of cluster c; its keys are documented in smartio(1)."""
    me = c.self_name
    nodes = [node_info(n, me) for n in c.nodes]
    devices = [device_info(d) for d in c.devices]
    reachability(nodes, devices)
    return {"schema": SCHEMA, "mount": os.path.abspath(c.root), "self": me,
            "nodes": nodes, "devices": devices,
            "multicast": [multicast_info(g) for g in c.multicast]}


def shown_state(d):
    """The state a user sees: the file's while the device can be reached,
    else why not (lender-down, cut-off)."""
    reach = d.get("reach", "ok")
    return d["state"] if reach == "ok" else reach


def human_size(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return ("%d %s" % (n, unit)) if unit == "B" or n == int(n) else \
                "%.1f %s" % (n, unit)
        n /= 1024.0
    return str(n)


def _policy(lend):
    return ",".join(lend) if lend else "none"


# The columns of `smartio list -o`: name -> (heading, the cell of a device).
COLUMNS = {
    "device": ("DEVICE", lambda d: d["name"]),
    "node": ("NODE", lambda d: d["node"]),
    "bdf": ("BDF", lambda d: d["bdf"]),
    "class": ("CLASS", lambda d: d["class_name"]),
    "state": ("STATE", shown_state),
    "lend": ("LEND", lambda d: _policy(d["lend"])),
    "borrowers": ("BORROWERS", lambda d: ",".join(d["borrowers"]) or "-"),
    "mode": ("MODE", lambda d: d["mode"]),
    "fdid": ("FDID", lambda d: d["fdid"]),
    "vendor": ("VENDOR", lambda d: d["vendor"]),
    "device_id": ("DEVICE_ID", lambda d: d["device"]),
    "revision": ("REV", lambda d: d["revision"]),
    "class_code": ("CLASS_CODE", lambda d: d["class"]),
}
DEFAULT_COLUMNS = ("device", "node", "bdf", "class", "state", "lend", "borrowers", "mode")


def table(snap, columns=DEFAULT_COLUMNS):
    cols = tuple(COLUMNS[c][0] for c in columns)
    rows = [cols]
    for d in snap["devices"]:
        rows.append(tuple(COLUMNS[c][1](d) for c in columns))
    w = [max(len(r[i]) for r in rows) for i in range(len(cols))]
    return "".join("  ".join(v.ljust(w[i]) for i, v in enumerate(r)).rstrip() + "\n"
                   for r in rows)


def _branch(items, prefix):
    """Lines of a tree level: items are (text, children)."""
    out = []
    for i, (text, kids) in enumerate(items):
        last = i == len(items) - 1
        out.append(prefix + ("`-- " if last else "|-- ") + text)
        out += _branch(kids, prefix + ("    " if last else "|   "))
    return out


def tree(snap):
    devs = {d["name"]: d for d in snap["devices"]}
    out = []
    for n in snap["nodes"]:
        out.append("%s (id %d, %s)%s" % (n["name"], n["id"], n["state"],
                                         "  [this mount]" if n["self"] else ""))
        items = []
        ads = [("%s  link %s  peers %s  luts %d/%d  requesters %d/%d" % (
            a["name"], a["link"], ",".join(a["peers"]) or "-",
            a["luts"]["used"], a["luts"]["total"],
            a["requesters"]["used"], a["requesters"]["total"]), [])
            for a in n["adapters"]]
        items.append(("adapters", ads))
        dl = []
        for name in n["devices"]:
            d = devs.get(name)
            if not d:
                continue
            extra = ""
            if d["borrowers"]:
                extra = "  borrowed by %s (%s)" % (",".join(d["borrowers"]), d["mode"])
            dl.append(("%s  %s  %s  %s%s" % (name, d["bdf"], d["class_name"],
                                            shown_state(d), extra), []))
        items.append(("devices", dl))
        sl = []
        for s in n["segments"]:
            bits = [human_size(s["size"])]
            if s["available"]:
                bits.append("exported")
            others = [a for a in s["attached"] if a != n["name"]]
            if others:
                bits.append("attached by " + ",".join(others))
            if s["dma"]:
                bits.append("mapped for " + ",".join(s["dma"]))
            sl.append(("%s  %s" % (s["name"], ", ".join(bits)), []))
        items.append(("segments", sl))
        bl = [("%s  from %s" % (b, devs[b]["node"] if b in devs else "?"), [])
              for b in n["borrowed"]]
        items.append(("borrowed", bl))
        out += _branch(items, "")
    return "\n".join(out) + "\n"


def _q(s):
    """A Graphviz string; its \\n are line breaks (names have no
    backslashes: smartio(7))."""
    return '"%s"' % str(s).replace('"', '\\"')


def dot(snap):
    """Nodes as boxes holding their adapters, devices and segments; links
    between adapters; an arrow from each borrowed device to its borrower."""
    out = ["digraph smartio {",
           '  graph [rankdir=LR, fontname="Helvetica", label=%s, labelloc=t];'
           % _q("smartio cluster, as %s sees it" % snap["self"]),
           '  node [fontname="Helvetica", fontsize=10];',
           '  edge [fontname="Helvetica", fontsize=9];']
    devs = {d["name"]: d for d in snap["devices"]}
    for n in snap["nodes"]:
        down = n["state"] != "up"
        out.append("  subgraph %s {" % _q("cluster_" + n["name"]))
        out.append("    label=%s; style=%s; color=%s;" % (
            _q("%s (%s)%s" % (n["name"], n["state"], ", this mount" if n["self"] else "")),
            "dashed" if down else "rounded", "gray" if down else "black"))
        out.append("    %s [shape=box3d, label=%s];" % (_q("node:" + n["name"]),
                                                      _q(n["name"])))
        for a in n["adapters"]:
            out.append("    %s [shape=cds, label=%s];" % (
                _q("ad:%s/%s" % (n["name"], a["name"])),
                _q("%s\\nluts %d/%d\\nreq %d/%d" % (
                    a["name"], a["luts"]["used"], a["luts"]["total"],
                    a["requesters"]["used"], a["requesters"]["total"]))))
            out.append("    %s -> %s [dir=none, style=dotted];" % (
                _q("node:" + n["name"]), _q("ad:%s/%s" % (n["name"], a["name"]))))
        for name in n["devices"]:
            d = devs.get(name, {})
            out.append("    %s [shape=component, label=%s];" % (
                _q("dev:" + name),
                _q("%s\\n%s\\n%s" % (name, d.get("class_name", ""),
                                       shown_state(d) if d else ""))))
        for s in n["segments"]:
            out.append("    %s [shape=note, label=%s];" % (
                _q("seg:%s.%s" % (n["name"], s["name"])),
                _q("%s\\n%s%s" % (s["name"], human_size(s["size"]),
                                  ", exported" if s["available"] else ""))))
        out.append("  }")
    # Links: one edge per pair of adapters that name each other as peers.
    seen = set()
    for n in snap["nodes"]:
        for a in n["adapters"]:
            for p in a["peers"]:
                peer = next((x for x in snap["nodes"] if x["name"] == p), None)
                if not peer:
                    continue
                for b in peer["adapters"]:
                    if n["name"] not in b["peers"]:
                        continue
                    key = tuple(sorted([(n["name"], a["name"]), (p, b["name"])]))
                    if key in seen:
                        continue
                    seen.add(key)
                    up = a["link"] == "up" and b["link"] == "up"
                    out.append("  %s -> %s [dir=none, color=%s%s];" % (
                        _q("ad:%s/%s" % key[0]), _q("ad:%s/%s" % key[1]),
                        "darkgreen" if up else "red", "" if up else ", style=dashed"))
    for d in snap["devices"]:
        for b in d["borrowers"]:
            out.append("  %s -> %s [color=blue, penwidth=2, label=%s];" % (
                _q("dev:" + d["name"]), _q("node:" + b),
                _q("borrowed by %s (%s)" % (b, d["mode"]))))
    for n in snap["nodes"]:
        for s in n["segments"]:
            for a in s["attached"]:
                if a != n["name"]:
                    out.append("  %s -> %s [style=dashed, color=purple, label=%s];" % (
                        _q("seg:%s.%s" % (n["name"], s["name"])), _q("node:" + a),
                        _q("attached")))
    out.append("}")
    return "\n".join(out) + "\n"


def bar(used, total, width=20):
    fill = 0 if not total else int(round(width * used / float(total)))
    return "[" + "#" * fill + "." * (width - fill) + "]"


def problems(snap):
    """Nodes down and links down, as sentences."""
    out = []
    for n in snap["nodes"]:
        if n["state"] != "up":
            out.append("node %s is %s" % (n["name"], n["state"]))
            continue
        for a in n["adapters"]:
            if a["link"] != "up":
                out.append("link of %s on %s is %s" % (a["name"], n["name"], a["link"]))
    return out


def status(snap, scope="cluster"):
    out = []
    for n in snap["nodes"]:
        out.append("%s  %s%s" % (n["name"], n["state"],
                                 "  (this mount)" if n["self"] else ""))
        for a in n["adapters"]:
            lu, rq = a["luts"], a["requesters"]
            out.append("  %-6s link %-4s  luts %3d/%-3d %s  requesters %2d/%-2d %s" % (
                a["name"], a["link"], lu["used"], lu["total"], bar(lu["used"], lu["total"]),
                rq["used"], rq["total"], bar(rq["used"], rq["total"])))
        if n["segments"]:
            segs = ["%s %s%s" % (s["name"], human_size(s["size"]),
                                 " (exported)" if s["available"] else "")
                    for s in n["segments"]]
            out.append("  segments: " + ", ".join(segs))
        else:
            out.append("  segments: none")
    bad = problems(snap)
    out.append("%s: " % scope + ("; ".join(bad) if bad else "all nodes and links up"))
    return "\n".join(out) + "\n"


def _label(**kw):
    return "{" + ",".join('%s="%s"' % (k, str(v).replace("\\", "\\\\")
                                      .replace('"', '\\"').replace("\n", "\\n"))
                          for k, v in kw.items()) + "}"


# (metric, type, help) in the order written.
METRICS = (
    ("smartio_node_up", "gauge", "1 when the node is up"),
    ("smartio_link_up", "gauge", "1 when the NTB adapter's link is up"),
    ("smartio_luts_used", "gauge", "Look-up table entries in use on the adapter"),
    ("smartio_luts_total", "gauge", "Look-up table entries of the adapter"),
    ("smartio_requesters_used", "gauge", "Requester id entries in use on the adapter"),
    ("smartio_requesters_total", "gauge", "Requester id entries of the adapter"),
    ("smartio_device_borrowers", "gauge", "Nodes borrowing the device now"),
    ("smartio_device_borrows_total", "counter", "Borrows of the device"),
    ("smartio_device_returns_total", "counter", "Returns of the device"),
    ("smartio_device_reclaims_total", "counter", "Reclaims of the device"),
    ("smartio_device_borrows_denied_total", "counter", "Borrows of the device refused"),
    ("smartio_device_dma_faults_total", "counter",
     "Blocked DMA transactions of the device (no mapping or requester not allowed)"),
    ("smartio_device_msi_total", "counter", "Interrupts the device delivered"),
    ("smartio_device_driver_errors_total", "counter",
     "Rules of the device's model a driver broke (bad doorbells, addresses, vectors)"),
    ("smartio_segment_size_bytes", "gauge", "Size of the memory segment"),
    ("smartio_segment_attached", "gauge", "Nodes other than the owner attached to the segment"),
)
_STAT = {"smartio_device_borrows_total": "borrows",
         "smartio_device_returns_total": "returns",
         "smartio_device_reclaims_total": "reclaims",
         "smartio_device_borrows_denied_total": "denied",
         "smartio_device_dma_faults_total": "dma_faults",
         "smartio_device_msi_total": "msi",
         "smartio_device_driver_errors_total": "driver_errors"}


def prometheus(snap, events_lost=None):
    """The Prometheus text exposition format (version 0.0.4)."""
    samples = {m[0]: [] for m in METRICS}
    for n in snap["nodes"]:
        samples["smartio_node_up"].append((_label(node=n["name"]), int(n["state"] == "up")))
        for a in n["adapters"]:
            lab = _label(node=n["name"], adapter=a["name"])
            samples["smartio_link_up"].append((lab, int(a["link"] == "up")))
            samples["smartio_luts_used"].append((lab, a["luts"]["used"]))
            samples["smartio_luts_total"].append((lab, a["luts"]["total"]))
            samples["smartio_requesters_used"].append((lab, a["requesters"]["used"]))
            samples["smartio_requesters_total"].append((lab, a["requesters"]["total"]))
        for s in n["segments"]:
            lab = _label(node=n["name"], segment=s["name"])
            samples["smartio_segment_size_bytes"].append((lab, s["size"]))
            samples["smartio_segment_attached"].append(
                (lab, len([x for x in s["attached"] if x != n["name"]])))
    for d in snap["devices"]:
        lab = _label(device=d["name"], node=d["node"])
        samples["smartio_device_borrowers"].append((lab, len(d["borrowers"])))
        for m, key in _STAT.items():
            samples[m].append((lab, d["stats"].get(key, 0)))
    out = []
    for name, typ, hlp in METRICS:
        out.append("# HELP %s %s" % (name, hlp))
        out.append("# TYPE %s %s" % (name, typ))
        out += ["%s%s %d" % (name, lab, v) for lab, v in samples[name]]
    if events_lost is not None:
        out.append("# HELP smartio_events_lost_total Events the reader fell behind on")
        out.append("# TYPE smartio_events_lost_total counter")
        out.append("smartio_events_lost_total %d" % events_lost)
    return "\n".join(out) + "\n"
