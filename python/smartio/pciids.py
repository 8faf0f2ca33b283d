# SPDX-License-Identifier: LGPL-2.1-or-later
"""PCI class codes in words, from pci.ids where it is installed (the pci.ids
or hwdata package), else from the base classes of the PCI Code and ID
Assignment specification."""
import os

PATHS = ("/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids",
         "/usr/share/pci.ids")
BASE = {
    0x00: "Unclassified device", 0x01: "Mass storage controller",
    0x02: "Network controller", 0x03: "Display controller",
    0x04: "Multimedia controller", 0x05: "Memory controller",
    0x06: "Bridge", 0x07: "Communication controller",
    0x08: "Generic system peripheral", 0x09: "Input device controller",
    0x0a: "Docking station", 0x0b: "Processor", 0x0c: "Serial bus controller",
    0x0d: "Wireless controller", 0x0e: "Intelligent controller",
    0x0f: "Satellite communications controller",
    0x10: "Encryption controller", 0x11: "Signal processing controller",
    0x12: "Processing accelerators", 0x13: "Non-Essential Instrumentation",
    0x40: "Coprocessor",
}
_classes = None


def _load():
    """{(base,): name, (base, sub): name} from the first pci.ids found."""
    table = {}
    path = os.environ.get("SMARTIO_PCI_IDS")
    for p in ([path] if path else PATHS):
        try:
            f = open(p, encoding="utf-8", errors="replace")
        except OSError:
            continue
        with f:
            base = None
            for line in f:
                if line.startswith("C "):
                    code, _, name = line[2:].strip().partition("  ")
                    base = int(code, 16)
                    table[(base,)] = name.strip()
                elif base is not None and line.startswith("\t") and \
                        not line.startswith("\t\t"):
                    code, _, name = line.strip().partition("  ")
                    table[(base, int(code, 16))] = name.strip()
                elif not line.startswith("\t") and not line.startswith("#") \
                        and line.strip():
                    base = None
        if table:
            break
    return table


def class_name(code):
    """0x010802 -> 'Non-Volatile memory controller'."""
    global _classes
    if _classes is None:
        _classes = _load()
    base, sub = (code >> 16) & 0xff, (code >> 8) & 0xff
    return (_classes.get((base, sub)) or _classes.get((base,)) or
            BASE.get(base) or "class %#08x" % code)


def _ids_path():
    path = os.environ.get("SMARTIO_PCI_IDS")
    for p in ([path] if path else PATHS):
        if os.path.isfile(p):
            return p
    return None


def names(vendor, device, subvendor=None, subdevice=None):
    """(vendor name, device name, subsystem name) from pci.ids, each None
    when it is not listed.  Reads only up to the vendor's entry."""
    vname = dname = sname = None
    path = _ids_path()
    if path is None:
        return vname, dname, sname
    want_v, want_d = "%04x" % vendor, "%04x" % device
    want_s = None if subvendor is None else "%04x %04x" % (subvendor, subdevice or 0)
    in_vendor = in_device = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            if not line.startswith("\t"):
                if in_vendor or line.startswith("C "):
                    break       # past the vendor, or into the classes
                code, _, name = line.rstrip("\n").partition("  ")
                if code.lower() == want_v:
                    vname, in_vendor = name.strip(), True
            elif in_vendor and not line.startswith("\t\t"):
                code, _, name = line.strip().partition("  ")
                in_device = code.lower() == want_d
                if in_device:
                    dname = name.strip()
            elif in_device and want_s:
                code, _, name = line.strip().partition("  ")
                if code.lower() == want_s:
                    sname = name.strip()
    return vname, dname, sname
