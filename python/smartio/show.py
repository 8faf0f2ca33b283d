# SPDX-License-Identifier: LGPL-2.1-or-later
"""`smartio show OBJECT`: one device, node or segment in full, the way
`lspci -s BDF -vv` and `ip link show dev X` show one object: a dictionary
(the JSON of `show -J`) and that dictionary as indented text lines.

OBJECT is a device name (nvme0), a node name (host0), a segment
(host0.ring), or any of them with the prefix its events use (dev/nvme0,
nodes/host0, seg/host0.ring), which settles a name that is both a device
and a node."""
import errno
import os

from . import SmartioError, pciids
from . import render

SCHEMA = "smartio-show/1"


def _lines(text):
    return [l for l in text.split("\n") if l]


def resolve(c, spec):
    """('device' | 'node' | 'segment', name) for spec, or SmartioError
    ENOENT naming what exists."""
    kind, slash, name = spec.partition("/")
    if not slash:
        kind, name = None, spec
    kinds = {"dev": "device", "nodes": "node", "seg": "segment"}
    if kind is not None and kind not in kinds:
        raise SmartioError(errno.EINVAL, "'%s' is not an object: give a device, "
                           "a node or node.segment (or dev/, nodes/, seg/ before it)"
                           % spec)
    want = kinds.get(kind)
    if name and "/" not in name:
        if want in (None, "segment") and "." in name:
            node, _, seg = name.partition(".")
            if os.path.isdir(c.path("nodes", node, "segments", seg)):
                return "segment", name
        if want in (None, "device") and os.path.isdir(c.path("dev", name)):
            return "device", name
        if want in (None, "node") and os.path.isdir(c.path("nodes", name)):
            return "node", name
    raise SmartioError(errno.ENOENT, "there is no %s named %s (devices: %s; nodes: %s)" % (
        want or "device, node or segment", name or spec,
        ", ".join(sorted(os.listdir(c.path("dev")))) or "none",
        ", ".join(sorted(os.listdir(c.path("nodes")))) or "none"))


def device(c, name):
    d = c.device(name)
    info = render.device_info(d)
    lender = c.node(info["node"])
    render.reachability([render.node_info(lender, c.self_name)], [info])
    vname, dname, sname = pciids.names(
        int(info["vendor"], 16), int(info["device"], 16),
        int(info["subsystem_vendor"], 16), int(info["subsystem_device"], 16))
    info.update({
        "type": "device", "schema": SCHEMA,
        "vendor_name": vname, "device_name": dname, "subsystem_name": sname})
    return info


def node(c, name):
    n = c.node(name)
    info = render.node_info(n, c.self_name)
    info.update({"type": "node", "schema": SCHEMA})
    return info


def segment(c, fullname):
    owner, _, name = fullname.partition(".")
    n = c.node(owner)
    info = render.segment_info(n, n.segment(name))
    info.update({"type": "segment", "schema": SCHEMA,
                 "fullname": fullname})
    return info


def show(c, spec):
    kind, name = resolve(c, spec)
    return {"device": device, "node": node, "segment": segment}[kind](c, name)


def _none(items):
    return ", ".join(items) if items else "none"


def text(info):
    """The dictionary of show() as lines: a headline, then one fact a line."""
    kind = info["type"]
    out = []
    if kind == "device":
        what = " ".join(x for x in (info["vendor_name"], info["device_name"]) if x) or \
            "%s:%s" % (info["vendor"][2:], info["device"][2:])
        out.append("%s: %s: %s (rev %s)" % (info["name"], info["class_name"], what,
                                          info["revision"][2:]))
        out.append("\tLender: %s, %s" % (info["node"], info["bdf"]))
        out.append("\tFabric id: %s" % info["fdid"])
        out.append("\tIDs: vendor %s device %s, subsystem %s:%s%s, class %s" % (
            info["vendor"], info["device"], info["subsystem_vendor"],
            info["subsystem_device"],
            " (%s)" % info["subsystem_name"] if info["subsystem_name"] else "",
            info["class"]))
        out.append("\tState: %s, mode %s, lend %s%s" % (
            info["state"], info["mode"], " ".join(info["lend"]) or "none",
            "; unreachable: %s" % info["unreachable"] if info["unreachable"] else ""))
        out.append("\tBorrowers: %s" % _none(info["borrowers"]))
        for r in info["resource"]:
            out.append("\tRegion %d: %s at %s, flags %s%s" % (
                r["bar"], render.human_size(r["size"]), r["start"], r["flags"],
                ", mapped here" if r["bar"] in info["mapped_bars"] else ""))
        out.append("\tDMA windows: %s" % _none(
            ["%s at %s (%s)" % (w["node"], w["iova"], render.human_size(w["size"]))
             for w in info["dma_window"]]))
        out.append("\tMSI: %s" % _none(
            ["vector %s to %s at %s data %s" % (m["vec"], m["node"], m["addr"], m["data"])
             for m in info["msi"]]))
        out.append("\tStats: %s" % ", ".join("%s %d" % kv for kv in info["stats"].items()))
    elif kind == "node":
        out.append("%s (id %d): %s%s" % (info["name"], info["id"], info["state"],
                                         ", this mount" if info["self"] else ""))
        for a in info["adapters"]:
            out.append("\tAdapter %s: link %s, peers %s, luts %d/%d, requesters %d/%d, "
                       "window %s" % (
                           a["name"], a["link"], _none(a["peers"]),
                           a["luts"]["used"], a["luts"]["total"],
                           a["requesters"]["used"], a["requesters"]["total"],
                           render.human_size(a["window"])))
        out.append("\tDevices: %s" % _none(info["devices"]))
        out.append("\tBorrowed: %s" % _none(info["borrowed"]))
        out.append("\tSegments: %s" % _none(
            ["%s (%s%s)" % (s["name"], render.human_size(s["size"]),
                            ", exported" if s["available"] else "")
             for s in info["segments"]]))
    else:
        out.append("%s: %s segment of %s" % (info["fullname"],
                                              render.human_size(info["size"]),
                                              info["owner"]))
        out.append("\tExported: %s" % ("yes" if info["available"] else "no"))
        out.append("\tAttached: %s" % _none(info["attached"]))
        out.append("\tHeld by: %s" % _none(
            ["process %d (%s) for %s" % (h["pid"], h["command"], h["node"])
             for h in info["holders"]]))
        out.append("\tMapped for: %s" % _none(
            ["%s at %s" % kv for kv in sorted(info["dma"].items())]))
    return "\n".join(out) + "\n"
