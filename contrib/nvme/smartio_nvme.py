#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A small userspace NVMe driver in Python that works only through /smartio
(smartio(7)), by way of the smartio package (python/): it borrows the
controller, maps its BAR 0, keeps queues and data in a segment of this
node's memory mapped for the device, and waits for completions on irq/0
(--irq) or by polling the completion queue.
It writes blocks with the pattern of contrib/nvme/smartio-nvme.c and reads
them back (--verify: only reads and checks them).

    smartio_nvme.py [--mount /smartio] [--dev nvme0] [--lba N] [--blocks N]
                    [--irq] [--verify]

Exit status 0 when every block read back holds the pattern.
"""
import argparse
import os
import select
import struct
import sys
import time

# The package of this source tree when it is not installed.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "..", "..", "python"))
import smartio  # noqa: E402

SEG_SIZE = 1 << 20
ASQ, ACQ, IOSQ, IOCQ, IDENT, PRPL = 0x0000, 0x1000, 0x2000, 0x3000, 0x4000, 0x5000
WBUF, RBUF = 0x10000, 0x40000
QD = 32
CHUNK = 64          # blocks per command: 32K, through a PRP list


def pattern(lba, n):
    """n blocks from lba, byte j of block b = b*7 + j*13 + j/256."""
    out = bytearray()
    for b in range(lba, lba + n):
        out += bytes((b * 7 + j * 13 + (j >> 8)) & 0xff for j in range(512))
    return bytes(out)


class Controller:
    def __init__(self, root, dev, use_irq):
        self.cluster = smartio.Cluster(root)
        self.dev = self.cluster.device(dev)
        self.self = self.cluster.self_name
        self.irq = None
        self.msix = 0
        self.cid = 0
        self.tail = [0, 0]
        self.head = [0, 0]
        self.phase = [1, 1]
        # Borrowed here unless this node lends it or already borrows it.
        self.borrowed = self.dev.node != self.self and self.self not in self.dev.borrowers
        if self.borrowed:
            self.dev.borrow()
        self.seg = self.cluster.self.create_segment("nvmepy%d" % os.getpid(), SEG_SIZE)
        self.io = self.seg.dma_map(self.dev)
        self.mem = self.seg.map()
        self.bar = self.dev.map_bar(0)
        self.db_stride = 4 << (self.r32(0x04) & 0xf)     # CAP.DSTRD
        if use_irq:
            self.enable_msix()

    def enable_msix(self):
        cfg = self.dev.read_config(0, 256)
        pos, hops = cfg[0x34], 0
        while pos and cfg[pos] != 0x11 and hops < 48:
            pos, hops = cfg[pos + 1], hops + 1
        if not pos or cfg[pos] != 0x11:
            raise SystemExit("%s has no MSI-X" % self.dev.name)
        ctl = struct.unpack_from("<H", cfg, pos + 2)[0]
        self.dev.write_config(pos + 2, struct.pack("<H", ctl | 0x8000))
        self.msix = pos
        self.irq = self.dev.open_irq(0)

    def r32(self, off):
        return struct.unpack_from("<I", self.bar, off)[0]

    def w32(self, off, v):
        struct.pack_into("<I", self.bar, off, v)

    def w64(self, off, v):
        self.w32(off, v & 0xffffffff)
        self.w32(off + 4, v >> 32)

    def wait_csts(self, mask, want):
        end = time.time() + 10
        while self.r32(0x1c) & mask != want:
            if time.time() > end:
                raise SystemExit("controller not ready")
            time.sleep(0.0002)

    def posted(self, q):
        at = (IOCQ if q else ACQ) + 16 * self.head[q]
        return struct.unpack_from("<H", self.mem, at + 14)[0] & 1 == self.phase[q]

    def submit(self, q, cmd):
        """cmd: 64 bytes; returns (status, result)."""
        self.cid = (self.cid + 1) & 0xffff
        cmd = bytearray(cmd)
        struct.pack_into("<H", cmd, 2, self.cid)
        at = (IOSQ if q else ASQ) + 64 * self.tail[q]
        self.mem[at:at + 64] = bytes(cmd)
        self.tail[q] = (self.tail[q] + 1) % QD
        self.w32(0x1000 + 2 * q * self.db_stride, self.tail[q])
        end = time.time() + 10
        while not self.posted(q):
            if time.time() > end:
                raise SystemExit("command %#x timed out" % cmd[0])
            if self.irq is not None:
                pl = select.poll()
                pl.register(self.irq, select.POLLIN)
                if pl.poll(1000):
                    os.read(self.irq, 4)
            else:
                time.sleep(0.0001)
        at = (IOCQ if q else ACQ) + 16 * self.head[q]
        dw0, _, dw2, dw3 = struct.unpack_from("<IIII", self.mem, at)
        self.head[q] += 1
        if self.head[q] == QD:
            self.head[q], self.phase[q] = 0, self.phase[q] ^ 1
        self.w32(0x1000 + (2 * q + 1) * self.db_stride, self.head[q])
        if dw3 & 0xffff != self.cid:
            # What the device said with it: the queue and its head as the
            # device saw them, and the entry's status and phase.
            raise SystemExit("completion for command %d, want %d (queue %d, "
                             "slot %d: sq id %d, sq head %d, status %#x)"
                             % (dw3 & 0xffff, self.cid, q, (self.head[q] - 1) % QD,
                                dw2 >> 16, dw2 & 0xffff, dw3 >> 16))
        return (dw3 >> 17) & 0x7ff, dw0

    @staticmethod
    def cmd(op, nsid=0, prp1=0, prp2=0, c10=0, c11=0, c12=0):
        return struct.pack("<BBHIQQQQIIIIII", op, 0, 0, nsid, 0, 0, prp1, prp2,
                           c10, c11, c12, 0, 0, 0)

    def admin(self, *args, **kw):
        st, res = self.submit(0, self.cmd(*args, **kw))
        if st:
            raise SystemExit("admin command %#x: status %#x" % (args[0], st))
        return res

    def start(self):
        self.w32(0x14, 0)
        self.wait_csts(3, 0)
        self.mem[0:0x6000] = bytes(0x6000)
        self.w32(0x24, (QD - 1) << 16 | (QD - 1))
        self.w64(0x28, self.io + ASQ)
        self.w64(0x30, self.io + ACQ)
        self.w32(0x14, 1 | 6 << 16 | 4 << 20)
        self.wait_csts(3, 1)
        self.admin(0x06, prp1=self.io + IDENT, c10=1)
        model = bytes(self.mem[IDENT + 24:IDENT + 64]).decode().strip()
        self.admin(0x06, nsid=1, prp1=self.io + IDENT, c10=0)
        self.nsze = struct.unpack_from("<Q", self.mem, IDENT)[0]
        self.admin(0x05, prp1=self.io + IOCQ, c10=(QD - 1) << 16 | 1,
                   c11=1 | (2 if self.irq is not None else 0))
        self.admin(0x01, prp1=self.io + IOSQ, c10=(QD - 1) << 16 | 1, c11=1 << 16 | 1)
        return model

    def rw(self, op, lba, n, off):
        pages = (n * 512 + 4095) // 4096
        prp2 = 0
        if pages == 2:
            prp2 = self.io + off + 4096
        elif pages > 2:
            for i in range(1, pages):
                struct.pack_into("<Q", self.mem, PRPL + 8 * (i - 1), self.io + off + 4096 * i)
            prp2 = self.io + PRPL
        st, _ = self.submit(1, self.cmd(op, 1, self.io + off, prp2, lba & 0xffffffff,
                                        lba >> 32, n - 1))
        return st

    def close(self):
        self.w32(0x14, 0)
        try:
            self.wait_csts(1, 0)
        except SystemExit:
            pass
        self.bar.close()
        self.mem.close()
        if self.irq is not None:
            os.close(self.irq)
        if self.msix:
            ctl = struct.unpack("<H", self.dev.read_config(self.msix + 2, 2))[0]
            self.dev.write_config(self.msix + 2, struct.pack("<H", ctl & ~0x8000))
        self.seg.dma_unmap(self.dev)
        self.seg.destroy()
        if self.borrowed:
            self.dev.return_()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mount", default="/smartio")
    ap.add_argument("--dev", default="nvme0")
    ap.add_argument("--lba", type=int, default=0)
    ap.add_argument("--blocks", type=int, default=64)
    ap.add_argument("--irq", action="store_true")
    ap.add_argument("--verify", action="store_true", help="only read and check")
    a = ap.parse_args()
    try:
        c = Controller(a.mount, a.dev, a.irq)
    except smartio.SmartioError as e:
        print("smartio_nvme: %s" % e, file=sys.stderr)
        return 1
    bad = None
    try:
        model = c.start()
        print("controller: %s" % model)
        if a.lba + a.blocks > c.nsze:
            raise SystemExit("namespace has %d blocks" % c.nsze)
        for done in range(0, a.blocks, CHUNK):
            n = min(CHUNK, a.blocks - done)
            lba = a.lba + done
            want = pattern(lba, n)
            if not a.verify:
                c.mem[WBUF:WBUF + len(want)] = want
                st = c.rw(0x01, lba, n, WBUF)
                if st:
                    raise SystemExit("write at %d: status %#x" % (lba, st))
            c.mem[RBUF:RBUF + len(want)] = bytes(len(want))
            st = c.rw(0x02, lba, n, RBUF)
            if st:
                raise SystemExit("read at %d: status %#x" % (lba, st))
            got = bytes(c.mem[RBUF:RBUF + len(want)])
            if got != want:
                first = next(i for i in range(len(want)) if got[i] != want[i])
                bad = lba + first // 512
                break
        if bad is None:
            st, _ = c.submit(1, c.cmd(0x00, 1))
            if st:
                raise SystemExit("flush: status %#x" % st)
    finally:
        c.close()
    if bad is not None:
        print("block %d differs" % bad, file=sys.stderr)
        return 1
    print("%s %d blocks at %d through %s from %s: verified (%s)" % (
        "read" if a.verify else "wrote and read back", a.blocks, a.lba, a.dev,
        c.self, "interrupts" if a.irq else "polling"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
