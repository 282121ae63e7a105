#!/usr/bin/env python3
"""The device's qtest corpus: structure-aware traces that reach its I/O path.

generic-fuzz seldom gets past the queue set-up (docs/design/robustness.md), so
this generator writes what a driver would, as qtest protocol lines: BAR0
and the PCI command register set through config space, the admin queue,
the controller enabled, I/O queue pairs created (INTx or MSI-X), then
commands rung on them, with their SQEs, PRP lists, SGL segments, DSM
ranges and data written into guest RAM first.  Every I/O opcode meets
every kind of data pointer (PRP1, PRP1+PRP2, PRP lists and chains, SGL
data blocks, segments, last segments, bit buckets, keyed and invalid
descriptors, pointers at the device's own BAR or beyond RAM), and the
admin set, Streams, namespace management and the telemetry logs are
driven too.  The chaos traces are seeded random mixes of all of it with
the events a driver must survive: Delete SQ and CQ with I/O in flight,
Abort, controller and subsystem resets, shutdowns and power cuts; the
memory-map trace takes the memory from under commands in flight.

tests/fuzz/replay.c runs each trace on a fresh QEMU (the README's test
command, under ASan and UBSan: scripts/lib/cc-instrument.sh); a line
"qmp JSON" goes to QMP, "# config: A B" names the device configurations
of tests/fuzz/replay.c the trace runs in.  Same seed, same traces.

    gen_traces.py [--seed N] [--chaos N] DIR
"""
import argparse
import os
import random
import struct

BAR0 = 0xE0000000
DEVFN = 0x20                      # -device ...,addr=4 (tests/fuzz/replay.c)
ASQ, ACQ, AQ_ENTRIES = 0x100000, 0x110000, 64
SQ_BASE, CQ_BASE, IOQ_ENTRIES = 0x200000, 0x300000, 64
ID_BUF = 0x400000                 # identify, logs, features' data
PRP_LISTS = 0x800000
SGLS = 0x900000
DSM_RANGES = 0xA00000
DATA = 0x1000000                  # 16 MiB of data buffers
RAM_TOP = 0x10000000              # -m 256M
NS_LBAS = (256 << 20) // 512
PAGE = 4096
MS = 1000000

ADMIN = dict(delete_sq=0x00, create_sq=0x01, get_log=0x02, delete_cq=0x04,
             create_cq=0x05, identify=0x06, abort=0x08, set_features=0x09,
             get_features=0x0A, aer=0x0C, ns_mgmt=0x0D, fw_commit=0x10,
             fw_download=0x11, self_test=0x14, ns_attach=0x15,
             dir_send=0x19, dir_recv=0x1A, dbbuf=0x7C, format=0x80,
             sanitize=0x84, get_lba_status=0x86)
IO = dict(flush=0x00, write=0x01, read=0x02, write_uncor=0x04, compare=0x05,
          write_zeroes=0x08, dsm=0x09)
DATA_OPS = ("write", "read", "compare")
LOG_IDS = (0x01, 0x02, 0x03, 0x05, 0x06, 0x07, 0x08, 0x0D, 0x0E, 0x80,
           0x81, 0xC0, 0xC1, 0xC2, 0xCA, 0xCB, 0xFF)
FEATURE_IDS = tuple(range(0x01, 0x11)) + (0x15, 0x7F, 0x80, 0x81, 0xC0,
                                          0xC1, 0xFE)
IDENTIFY_CNS = (0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x10, 0x11, 0x12,
                0x13, 0x14, 0x15, 0x1F, 0xFF)


def sqe(opc, cid, nsid=0, prp1=0, prp2=0, cdw10=0, cdw11=0, cdw12=0,
        cdw13=0, cdw14=0, cdw15=0, psdt=0, mptr=0):
    flags = psdt << 6
    return struct.pack("<BBHIQQQQIIIIII", opc, flags, cid, nsid, 0, mptr,
                       prp1, prp2, cdw10, cdw11, cdw12, cdw13, cdw14, cdw15)


def sgl_desc(addr, length, dtype, subtype=0):
    return struct.pack("<QI3xB", addr, length, (dtype << 4) | subtype)


SGL_DATA, SGL_BIT_BUCKET, SGL_SEGMENT, SGL_LAST, SGL_KEYED = 0, 1, 2, 3, 4


class Trace:
    """One qtest trace: a driver's actions as protocol lines."""

    def __init__(self, name, configs=("main",), msix=False):
        self.name = name
        self.lines = [f"# {name}", "# config: " + " ".join(configs)]
        self.cid = 0
        self.sq_tail = {}
        self.sq_size = {}
        self.cq_head = {}
        self.cq_size = {}
        self.pcie_setup(msix)

    # -- the bus and the registers --
    def cfg_writel(self, reg, value, devfn=DEVFN):
        self.lines.append(f"outl 0xcf8 {0x80000000 | (devfn << 8) | reg:#x}")
        self.lines.append(f"outl 0xcfc {value:#x}")

    def pcie_setup(self, msix):
        self.cfg_writel(0x10, BAR0)
        self.cfg_writel(0x14, 0)
        self.cfg_writel(0x04, 0x0006)          # memory space, bus master
        if msix:
            for v in range(8):
                base = BAR0 + 0x2000 + 16 * v
                self.writel(base, 0xFEE00000, absolute=True)
                self.writel(base + 4, 0, absolute=True)
                self.writel(base + 8, 0x30 + v, absolute=True)
                self.writel(base + 12, 0, absolute=True)
            self.cfg_writel(0x40, 0x80000000)  # MSI-X enable

    def writel(self, off, value, absolute=False):
        addr = off if absolute else BAR0 + off
        self.lines.append(f"writel {addr:#x} {value & 0xffffffff:#x}")

    def writeq(self, off, value):
        self.lines.append(f"writeq {BAR0 + off:#x} {value:#x}")

    def readl(self, off):
        self.lines.append(f"readl {BAR0 + off:#x}")

    def mem(self, addr, data):
        if data:
            self.lines.append(f"write {addr:#x} {len(data)} 0x{data.hex()}")

    def step(self, ns=MS):
        self.lines.append(f"clock_step {ns}")

    def qmp(self, text):
        self.lines.append("qmp " + text)

    # -- the controller --
    def enable(self, aq_entries=AQ_ENTRIES, cc=0x00460001):
        self.writel(0x24, ((aq_entries - 1) << 16) | (aq_entries - 1))
        self.writeq(0x28, ASQ)
        self.writeq(0x30, ACQ)
        self.writel(0x14, cc)
        self.step(10 * MS)
        self.readl(0x1C)
        self.sq_tail = {0: 0}
        self.sq_size = {0: aq_entries}
        self.cq_head = {0: 0}
        self.cq_size = {0: aq_entries}

    def disable(self):
        self.writel(0x14, 0x00460000)
        self.step(10 * MS)

    def next_cid(self):
        self.cid = (self.cid + 1) & 0xFFFF
        return self.cid

    def submit(self, qid, entry, ring=True):
        """Put @entry at @qid's tail; ring unless told to batch."""
        if qid not in self.sq_tail:
            return
        base = ASQ if qid == 0 else SQ_BASE + qid * 0x10000
        self.mem(base + 64 * self.sq_tail[qid], entry)
        self.sq_tail[qid] = (self.sq_tail[qid] + 1) % self.sq_size[qid]
        if ring:
            self.ring(qid)

    def ring(self, qid):
        self.writel(0x1000 + 8 * qid, self.sq_tail[qid])

    def reap(self, qid, n=1, ns=MS):
        """Let @n commands complete and give their CQ slots back."""
        self.step(ns)
        cq = qid if qid in self.cq_head else 0
        self.cq_head[cq] = (self.cq_head[cq] + n) % self.cq_size[cq]
        self.writel(0x1004 + 8 * cq, self.cq_head[cq])

    def admin(self, opc, ns=MS, **kw):
        self.submit(0, sqe(opc, self.next_cid(), **kw))
        self.reap(0, ns=ns)

    def create_pair(self, qid, entries=IOQ_ENTRIES, vector=0, sgl_sq=False):
        ien = 1 if vector >= 0 else 0
        self.admin(ADMIN["create_cq"], prp1=CQ_BASE + qid * 0x10000,
                   cdw10=((entries - 1) << 16) | qid,
                   cdw11=(max(vector, 0) << 16) | (ien << 1) | 1)
        self.admin(ADMIN["create_sq"], prp1=SQ_BASE + qid * 0x10000,
                   cdw10=((entries - 1) << 16) | qid,
                   cdw11=(qid << 16) | 1)
        self.sq_tail[qid] = 0
        self.sq_size[qid] = entries
        self.cq_head[qid] = 0
        self.cq_size[qid] = entries

    def delete_pair(self, qid):
        self.admin(ADMIN["delete_sq"], cdw10=qid)
        self.admin(ADMIN["delete_cq"], cdw10=qid)
        for d in (self.sq_tail, self.sq_size, self.cq_head, self.cq_size):
            d.pop(qid, None)

    def bring_up(self, pairs=1, vectors=False):
        self.enable()
        self.admin(ADMIN["identify"], prp1=ID_BUF, cdw10=1)
        self.admin(ADMIN["set_features"], cdw10=0x07,
                   cdw11=((pairs - 1) << 16) | (pairs - 1))
        for q in range(1, pairs + 1):
            self.create_pair(q, vector=q if vectors else 0)

    def text(self):
        return "\n".join(self.lines) + "\n"


# -- data pointers: (psdt, prp1, prp2, mptr), after writing what they need --
def dptr(t, kind, nbytes, slot, rng):
    buf = DATA + (slot % 64) * 0x40000
    t.mem(buf, bytes(rng.getrandbits(8) for _ in range(min(nbytes, 64))))
    pages = max(1, (nbytes + PAGE - 1) // PAGE)
    plist = PRP_LISTS + (slot % 64) * 0x2000
    sgl = SGLS + (slot % 64) * 0x1000
    if kind == "prp1":
        return 0, buf, 0, 0
    if kind == "prp2":
        return 0, buf, buf + PAGE, 0
    if kind == "prp-misaligned":
        return 0, buf + 0x200, buf + PAGE, 0
    if kind == "prp-list":
        entries = [buf + PAGE * (i + 1) for i in range(pages)]
        t.mem(plist, struct.pack(f"<{len(entries)}Q", *entries))
        return 0, buf, plist, 0
    if kind == "prp-chain":
        # the last entry of a list page points at the next list
        first = [buf + PAGE * (i + 1) for i in range(511)] + [plist + PAGE]
        t.mem(plist + PAGE - 8, struct.pack("<Q", plist + PAGE))
        t.mem(plist + PAGE, struct.pack("<4Q", *(buf + PAGE * i
                                                  for i in range(600, 604))))
        t.mem(plist, struct.pack("<4Q", *first[:4]))
        return 0, buf, plist, 0
    if kind == "prp-list-offset":
        t.mem(plist, struct.pack("<2Q", buf + 0x10, buf + PAGE + 0x20))
        return 0, buf, plist + 8, 0
    if kind == "prp-bar":
        return 0, BAR0 + 0x1000, BAR0, 0
    if kind == "prp-beyond-ram":
        return 0, RAM_TOP + PAGE, 0xFFFFFFFFF000, 0
    if kind == "prp-null":
        return 0, 0, 0, 0
    if kind == "sgl-data":
        return 1, *struct.unpack("<QQ", sgl_desc(buf, nbytes, SGL_DATA)), 0
    if kind == "sgl-last":
        half = nbytes // 2
        t.mem(sgl, sgl_desc(buf, half, SGL_DATA) +
              sgl_desc(buf + 0x10000, nbytes - half, SGL_DATA))
        return 1, *struct.unpack("<QQ", sgl_desc(sgl, 32, SGL_LAST)), 0
    if kind == "sgl-segment-chain":
        third = nbytes // 3
        t.mem(sgl, sgl_desc(buf, third, SGL_DATA) +
              sgl_desc(sgl + 0x100, 32, SGL_LAST))
        t.mem(sgl + 0x100, sgl_desc(buf + 0x8000, third, SGL_DATA) +
              sgl_desc(buf + 0x10000, nbytes - 2 * third, SGL_DATA))
        return 1, *struct.unpack("<QQ", sgl_desc(sgl, 32, SGL_SEGMENT)), 0
    if kind == "sgl-bit-bucket":
        t.mem(sgl, sgl_desc(0, 512, SGL_BIT_BUCKET) +
              sgl_desc(buf, nbytes - 512, SGL_DATA))
        return 1, *struct.unpack("<QQ", sgl_desc(sgl, 32, SGL_LAST)), 0
    if kind == "sgl-keyed":
        return 1, *struct.unpack("<QQ", sgl_desc(buf, nbytes, SGL_KEYED)), 0
    if kind == "sgl-short":
        return 1, *struct.unpack("<QQ", sgl_desc(buf, nbytes // 2,
                                                  SGL_DATA)), 0
    if kind == "sgl-loop":
        # a segment that names itself: the device must not follow it forever
        t.mem(sgl, sgl_desc(sgl, 16, SGL_SEGMENT))
        return 1, *struct.unpack("<QQ", sgl_desc(sgl, 16, SGL_SEGMENT)), 0
    if kind == "sgl-mptr":
        t.mem(sgl, sgl_desc(buf, nbytes, SGL_DATA))
        return 2, *struct.unpack("<QQ", sgl_desc(buf, nbytes, SGL_DATA)), sgl
    if kind == "psdt-reserved":
        return 3, buf, 0, 0
    raise ValueError(kind)


DPTRS = ("prp1", "prp2", "prp-misaligned", "prp-list", "prp-chain",
         "prp-list-offset", "prp-bar", "prp-beyond-ram", "prp-null",
         "sgl-data", "sgl-last", "sgl-segment-chain", "sgl-bit-bucket",
         "sgl-keyed", "sgl-short", "sgl-loop", "sgl-mptr", "psdt-reserved")
IO_SIZES = (512, 4096, 8192, 65536, 131072, 2 * 1024 * 1024)


def io_cmd(t, qid, op, rng, slot, kind=None, nsid=1, slba=None, nbytes=None,
           extra12=0, cdw13=0, ring=True):
    nbytes = nbytes or rng.choice(IO_SIZES)
    nlb = max(1, nbytes // 512) - 1
    slba = rng.randrange(0, NS_LBAS) if slba is None else slba
    opc = IO[op]
    if op in DATA_OPS:
        psdt, prp1, prp2, mptr = dptr(t, kind or rng.choice(DPTRS), nbytes,
                                      slot, rng)
        entry = sqe(opc, t.next_cid(), nsid, prp1, prp2, slba & 0xFFFFFFFF,
                    slba >> 32, (nlb & 0xFFFF) | extra12, cdw13, psdt=psdt,
                    mptr=mptr)
    elif op == "dsm":
        nr = rng.randrange(1, 8)
        ranges = b"".join(struct.pack("<IIQ", 0, rng.randrange(1, 4096),
                                      rng.randrange(0, NS_LBAS + 8))
                          for _ in range(nr))
        buf = DSM_RANGES + (slot % 64) * PAGE
        t.mem(buf, ranges)
        entry = sqe(opc, t.next_cid(), nsid, buf, 0, nr - 1,
                    rng.choice((4, 2, 1, 7)))
    elif op == "flush":
        entry = sqe(opc, t.next_cid(), nsid)
    else:                                    # write zeroes, uncorrectable
        entry = sqe(opc, t.next_cid(), nsid, 0, 0, slba & 0xFFFFFFFF,
                    slba >> 32, (nlb & 0xFFFF) | extra12)
    t.submit(qid, entry, ring)


# -- the fixed traces --
def trace_io_matrix(rng):
    """Every I/O opcode with every data pointer, on queue pair 1."""
    out = []
    for op in IO:
        t = Trace(f"io-{op}", configs=("main", "notiming", "iothread2"))
        t.bring_up(pairs=2)
        kinds = DPTRS if op in DATA_OPS else (None,)
        for i, kind in enumerate(kinds):
            for nbytes in (4096, 65536, 2 * 1024 * 1024 + 512):
                io_cmd(t, 1 + i % 2, op, rng, i, kind, nbytes=nbytes)
                t.reap(1 + i % 2)
        for nsid in (0, 2, 0xFFFFFFFF, 0x12345678):
            io_cmd(t, 1, op, rng, 1, "prp1", nsid=nsid, nbytes=4096)
            t.reap(1)
        for slba in (NS_LBAS - 1, NS_LBAS, 1 << 63):
            io_cmd(t, 1, op, rng, 2, "prp2", slba=slba, nbytes=8192)
            t.reap(1)
        # FUA, limited retry, PRINFO, a stream, reserved bits
        for bits in (1 << 30, 1 << 31, 0xF << 26, (1 << 20), 0x00FF0000):
            io_cmd(t, 2, op, rng, 3, "prp1", nbytes=4096, extra12=bits,
                   cdw13=rng.getrandbits(32))
            t.reap(2)
        out.append(t)
    t = Trace("io-unknown-opcodes")
    t.bring_up()
    for opc in list(range(0x0A, 0x20)) + [0x7F, 0x80, 0x81, 0xC0, 0xFF]:
        t.submit(1, sqe(opc, t.next_cid(), 1, DATA, 0, 0, 0, 7))
        t.reap(1)
    out.append(t)
    return out


def trace_admin(rng):
    t = Trace("admin-all", configs=("main", "iothread"))
    t.bring_up()
    for cns in IDENTIFY_CNS:
        for nsid in (0, 1, 2, 0xFFFFFFFF):
            t.admin(ADMIN["identify"], prp1=ID_BUF, prp2=ID_BUF + PAGE,
                    nsid=nsid, cdw10=cns)
    for lid in LOG_IDS:
        for numd, lpo in ((127, 0), (1023, 0), (0xFFFF, 0), (127, 512),
                          (3, 1 << 40)):
            t.admin(ADMIN["get_log"], prp1=ID_BUF, prp2=PRP_LISTS,
                    nsid=0xFFFFFFFF, cdw10=lid | ((numd & 0xFFFF) << 16) |
                    (1 << 15 if lpo else 0), cdw11=numd >> 16,
                    cdw12=lpo & 0xFFFFFFFF, cdw13=lpo >> 32)
    t.mem(PRP_LISTS, struct.pack("<4Q", ID_BUF + PAGE, ID_BUF + 2 * PAGE,
                                 ID_BUF + 3 * PAGE, ID_BUF + 4 * PAGE))
    for fid in FEATURE_IDS:
        for sel in range(4):
            t.admin(ADMIN["get_features"], prp1=ID_BUF, nsid=1,
                    cdw10=fid | (sel << 8))
        t.admin(ADMIN["set_features"], prp1=ID_BUF, nsid=1,
                cdw10=fid | (rng.getrandbits(1) << 31),
                cdw11=rng.getrandbits(32))
    t.admin(ADMIN["set_features"], cdw10=0x08, cdw11=0x0A04)  # coalescing
    t.admin(ADMIN["aer"])
    t.admin(ADMIN["aer"])
    t.admin(ADMIN["abort"], cdw10=(t.cid << 16))
    t.admin(ADMIN["dbbuf"], prp1=ID_BUF + 0x10000, prp2=ID_BUF + 0x11000)
    t.mem(DATA, bytes(range(256)) * 16)
    for off in (0, 4096, 8192, 1 << 20):
        t.admin(ADMIN["fw_download"], prp1=DATA, cdw10=1023, cdw11=off // 4)
    for ca in range(8):
        t.admin(ADMIN["fw_commit"], cdw10=(ca << 3) | rng.randrange(0, 8),
                ns=5 * MS)
    for stc in (1, 2, 0xE, 0xF, 3):
        t.admin(ADMIN["self_test"], nsid=0xFFFFFFFF, cdw10=stc, ns=50 * MS)
    t.admin(ADMIN["get_lba_status"], prp1=ID_BUF, nsid=1, cdw10=0,
            cdw12=1023, cdw13=(0x11 << 24))
    t.admin(ADMIN["get_lba_status"], prp1=ID_BUF, nsid=1, cdw10=NS_LBAS,
            cdw12=0xFFFFFFFF, cdw13=(0x10 << 24) | 0xFFFF)
    for opc in (0x03, 0x07, 0x0B, 0x18, 0x1C, 0x7F, 0x81, 0xC0, 0xC1, 0xFF):
        t.admin(opc, prp1=ID_BUF, nsid=1)
    t.admin(ADMIN["format"], nsid=1, cdw10=0, ns=100 * MS)
    t.admin(ADMIN["format"], nsid=0xFFFFFFFF, cdw10=(1 << 9), ns=100 * MS)
    t.admin(ADMIN["format"], nsid=1, cdw10=5)
    for sanact in (1, 2, 3, 4, 7):
        t.admin(ADMIN["sanitize"], cdw10=sanact, ns=200 * MS)
    return [t]


def trace_namespaces(rng):
    t = Trace("ns-management", configs=("main", "iothread2"))
    t.bring_up(pairs=2)
    idns = bytearray(4096)
    for nsze in (1 << 16, 1 << 19, 1 << 40, 0):
        struct.pack_into("<QQ", idns, 0, nsze, nsze)
        idns[26] = rng.randrange(0, 3)             # FLBAS
        t.mem(ID_BUF, bytes(idns))
        t.admin(ADMIN["ns_mgmt"], prp1=ID_BUF, cdw10=0, ns=5 * MS)
    ctrl_list = struct.pack("<HH", 1, 0)
    t.mem(ID_BUF + 0x8000, ctrl_list)
    for nsid in (2, 3, 9, 0xFFFFFFFF):
        t.admin(ADMIN["ns_attach"], prp1=ID_BUF + 0x8000, nsid=nsid, cdw10=0)
        for qid in (1, 2):
            io_cmd(t, qid, "write", rng, 4, "prp1", nsid=nsid, nbytes=4096)
            io_cmd(t, qid, "read", rng, 5, "sgl-data", nsid=nsid,
                   nbytes=8192)
            t.reap(qid, 2)
        t.admin(ADMIN["get_log"], prp1=ID_BUF, nsid=0,
                cdw10=0x04 | (1023 << 16))           # changed namespaces
    t.admin(ADMIN["ns_attach"], prp1=ID_BUF + 0x8000, nsid=2, cdw10=1)
    io_cmd(t, 1, "read", rng, 6, "prp1", nsid=2, nbytes=4096)
    t.reap(1)
    for nsid in (3, 2, 0xFFFFFFFF):
        t.admin(ADMIN["ns_mgmt"], nsid=nsid, cdw10=1, ns=5 * MS)
    t.mem(ID_BUF + 0x8000, struct.pack("<HHH", 2000, 1, 7))
    t.admin(ADMIN["ns_attach"], prp1=ID_BUF + 0x8000, nsid=1, cdw10=0)
    return [t]


def trace_streams(rng):
    t = Trace("streams", configs=("main", "notiming"))
    t.bring_up()
    # Identify directive: enable Streams (DTYPE 1) for namespace 1
    t.admin(ADMIN["dir_send"], nsid=1, prp1=ID_BUF, cdw10=0,
            cdw11=(0x01 << 8) | 0x00, cdw12=(1 << 8) | 1)
    for doper in (1, 2, 3):                      # params, status, allocate
        t.admin(ADMIN["dir_recv"], nsid=1, prp1=ID_BUF, cdw10=1023,
                cdw11=(0x01 << 8) | doper, cdw12=rng.randrange(0, 64))
    t.admin(ADMIN["dir_recv"], nsid=1, prp1=ID_BUF, cdw10=1023,
            cdw11=(0x00 << 8) | 0x01)
    for i in range(64):
        sid = rng.choice((1, 2, 3, 8, 16, 0xFFFF))
        io_cmd(t, 1, "write", rng, i, "prp1", nbytes=rng.choice((4096, 65536)),
               extra12=(1 << 20), cdw13=sid << 16)
        t.reap(1)
    for doper in (1, 2):                         # release one, all
        t.admin(ADMIN["dir_send"], nsid=1, cdw10=0,
                cdw11=(0x01 << 8) | doper, cdw12=rng.randrange(1, 4))
    t.admin(ADMIN["dir_send"], nsid=1, cdw11=(0x07 << 8) | 1)
    return [t]


def trace_telemetry(rng):
    t = Trace("telemetry", configs=("main",))
    t.bring_up()
    for lid in (0x07, 0x08):
        for create in (1, 0):
            for lpo in (0, 512, 4096, 1 << 20, 1 << 33):
                t.admin(ADMIN["get_log"], prp1=ID_BUF, prp2=PRP_LISTS,
                        nsid=0xFFFFFFFF,
                        cdw10=lid | (1023 << 16) | (create << 8),
                        cdw12=lpo & 0xFFFFFFFF, cdw13=lpo >> 32)
    t.mem(PRP_LISTS, struct.pack("<2Q", ID_BUF + PAGE, ID_BUF + 2 * PAGE))
    for lpo in (0, 4096, 8192):
        t.admin(ADMIN["get_log"], prp1=ID_BUF, prp2=PRP_LISTS,
                nsid=0xFFFFFFFF, cdw10=0xCB | (2047 << 16), cdw12=lpo)
    return [t]


def trace_lba_status(rng):
    """Log 0Eh and its notice over uncorrectable ranges: Write
    Uncorrectable (adjacent, overlapping, past the namespace), the log at
    offsets with RAE set and clear, Get LBA Status, rewrites, LSIRI."""
    t = Trace("lba-status", configs=("main", "iothread"))
    t.bring_up()
    t.admin(ADMIN["set_features"], cdw10=0x0B, cdw11=1 << 13)
    t.admin(ADMIN["set_features"], cdw10=0x15, cdw11=0xFFFF0000)
    t.admin(ADMIN["aer"])
    t.admin(ADMIN["aer"])
    for i, (slba, nlb) in enumerate(((100, 4), (104, 1), (102, 8), (9, 1),
                                     (NS_LBAS - 2, 2), (NS_LBAS - 1, 4),
                                     (0xFFFFFFFFFFFFFFFF, 1))):
        t.submit(1, sqe(IO["write_uncor"], t.next_cid(), 1,
                        cdw10=slba & 0xFFFFFFFF, cdw11=slba >> 32,
                        cdw12=nlb - 1))
        t.reap(1, ns=20 * MS if i == 3 else MS)
    t.mem(PRP_LISTS, struct.pack("<2Q", ID_BUF + PAGE, ID_BUF + 2 * PAGE))
    for rae, numd, lpo in ((1, 3, 0), (1, 1023, 16), (1, 0, 60), (0, 0, 64),
                           (0, 2047, 0), (0, 3, 1 << 33), (0, 3, 4)):
        t.admin(ADMIN["get_log"], prp1=ID_BUF, prp2=PRP_LISTS,
                nsid=0xFFFFFFFF,
                cdw10=0x0E | (rae << 15) | ((numd & 0xFFFF) << 16),
                cdw11=numd >> 16, cdw12=lpo & 0xFFFFFFFF, cdw13=lpo >> 32)
    t.admin(ADMIN["get_lba_status"], prp1=ID_BUF, nsid=1, cdw10=101,
            cdw12=3, cdw13=(0x11 << 24) | 2)
    t.submit(1, sqe(IO["write"], t.next_cid(), 1, prp1=DATA, cdw10=100,
                    cdw12=7))
    t.reap(1)
    t.admin(ADMIN["set_features"], cdw10=0x15, cdw11=0)
    t.submit(1, sqe(IO["write_uncor"], t.next_cid(), 1, cdw10=500,
                    cdw12=0xFFFF))
    t.reap(1, ns=20 * MS)
    t.admin(ADMIN["get_log"], prp1=ID_BUF, nsid=1, cdw10=0x0E | (127 << 16))
    t.admin(ADMIN["set_features"], cdw10=0x0B, cdw11=0)
    return [t]


def trace_faults(rng):
    """Faults on demand armed over QMP under I/O and admin commands: held
    commands aborted, deleted with their queue and dropped by a reset; a
    status, delay, lost-irq, fatal, ready-delay, aer and warning fault;
    bad specs; the table cleared.  Uses no randomness."""
    t = Trace("faults", configs=("main", "notiming", "iothread",
                                 "iothread2"))

    def arm(spec, prop="fault"):
        t.qmp('{"execute": "qom-set", "arguments": {"path": '
              '"/machine/peripheral/h0", "property": "%s", '
              '"value": "%s"}}' % (prop, spec))

    def read(slba, qid=1):
        t.submit(qid, sqe(IO["read"], t.next_cid(), 1, prp1=DATA,
                          cdw10=slba, cdw12=7))

    t.bring_up(pairs=2)
    for spec in ("timeout,opc=read,lba=8+8,count=2",
                 "timeout,q=2,abort=ignore", "status,opc=write,sc=0x280,"
                 "dnr=on,more=on,count=0", "delay,opc=flush,ms=3",
                 "lost-irq,q=1,every=2,count=0", "explode,sc=1",
                 "status,q=admin,opc=get-features,sc=0x6", "warning,"
                 "bits=spare+temperature+reliability+read-only+backup",
                 "aer,type=error,info=3", "aer,type=notice,info=2,log=0x08",
                 "status,prob=500000,count=0,sc=0x281,lba=100-200"):
        arm(spec)
    t.admin(ADMIN["aer"])
    read(8)
    read(12, qid=2)
    read(0)
    t.reap(1, 3)
    for cid in range(t.cid - 4, t.cid + 1):
        t.admin(ADMIN["abort"], cdw10=1 | (cid << 16))
        t.admin(ADMIN["abort"], cdw10=2 | (cid << 16))
    t.submit(1, sqe(IO["write"], t.next_cid(), 1, prp1=DATA, cdw10=150,
                    cdw12=7))
    t.submit(1, sqe(IO["flush"], t.next_cid(), 1))
    t.reap(1, 2, ns=10 * MS)
    t.admin(ADMIN["get_features"], cdw10=0x01)
    t.admin(ADMIN["get_log"], prp1=ID_BUF, nsid=0xFFFFFFFF,
            cdw10=0x02 | (127 << 16))
    read(9, qid=2)
    t.delete_pair(2)
    arm("fatal,opc=read,resets=1")
    read(40)
    t.step(10 * MS)
    t.readl(0x1C)
    t.disable()
    t.bring_up(pairs=1)
    t.disable()
    arm("ready-delay,ms=5")
    t.bring_up(pairs=1)
    t.step(10 * MS)
    arm("1", prop="fault-clear")
    arm("all", prop="fault-clear")
    arm("ready-delay,ms=never")
    t.disable()
    t.enable()
    t.disable()
    t.bring_up(pairs=1)
    read(8)
    t.reap(1)
    return [t]


def trace_link_down(rng):
    """A link-down fault under I/O: commands in flight lose their
    completions, doorbells, registers, config space and the MSI-X table
    written while the drive is off the bus, its return after for=, a
    fault-clear, a reset and a power cut while down; PCIe AER errors
    injected (with the capability in config "aer").  Uses no randomness."""
    t = Trace("link-down", configs=("main", "iothread", "iothread2", "aer"),
              msix=True)

    def arm(spec, prop="fault"):
        t.qmp('{"execute": "qom-set", "arguments": {"path": '
              '"/machine/peripheral/h0", "property": "%s", '
              '"value": "%s"}}' % (prop, spec))

    def hmp(line):
        t.qmp('{"execute": "human-monitor-command", "arguments": '
              '{"command-line": "%s"}}' % line)

    def read(slba, qid=1, ring=True):
        t.submit(qid, sqe(IO["read"], t.next_cid(), 1, prp1=DATA,
                          cdw10=slba, cdw12=7), ring=ring)

    t.bring_up(pairs=2, vectors=True)
    read(0)
    read(8, qid=2)
    arm("link-down,for=5ms")
    read(16)
    t.admin(ADMIN["identify"], prp1=ID_BUF, cdw10=1)
    t.readl(0x1C)
    t.readl(0x2000)
    t.writel(0x2000, 0)
    t.writel(0x14, 0)
    t.cfg_writel(0x04, 0)
    t.step(10 * MS)
    t.readl(0x1C)
    read(24)
    t.reap(1, 2)
    arm("link-down")
    read(32, qid=2, ring=False)
    t.ring(2)
    t.disable()
    arm("all", prop="fault-clear")
    t.reap(2)
    t.delete_pair(2)
    arm("link-down,for=1ms")
    arm("link-down,for=3ms")
    t.step(2 * MS)
    arm("2", prop="fault-clear")
    t.step(2 * MS)
    t.disable()
    t.bring_up(pairs=1)
    arm("link-down")
    t.qmp('{"execute": "qom-set", "arguments": {"path": '
          '"/machine/peripheral/h0", "property": "power-cut", '
          '"value": "drive"}}')
    t.bring_up(pairs=1)
    read(40)
    t.reap(1)
    for err in ("h0 POISON_TLP", "-c h0 BAD_TLP", "-a h0 UNSUP", "h0 0x3"):
        hmp("pcie_aer_inject_error " + err)
    read(48)
    t.reap(1)
    return [t]


def trace_media(rng):
    """media faults: read ranges marked over Write Uncorrectable's (with
    and without DNR, adjacent, overlapping, past the namespace), reads
    and compares on them, partial rewrites, Write Zeroes, deallocation,
    log 0Eh and Get LBA Status, `faults` listing them; write faults on
    Writes and Write Zeroes; bad specs; a Format clearing the table.
    Uses no randomness."""
    t = Trace("media", configs=("main", "notiming", "iothread"))

    def qom(prop, value):
        t.qmp('{"execute": "qom-set", "arguments": {"path": '
              '"/machine/peripheral/h0", "property": "%s", '
              '"value": "%s"}}' % (prop, value))

    def listing():
        t.qmp('{"execute": "qom-get", "arguments": {"path": '
              '"/machine/peripheral/h0", "property": "faults"}}')

    def io(op, slba, nlb, **kw):
        t.submit(1, sqe(IO[op], t.next_cid(), 1, cdw10=slba,
                        cdw12=nlb - 1, **kw))

    t.bring_up()
    io("write_uncor", 96, 8)
    t.reap(1)
    for spec in ("media,lba=100+8,dnr=on", "media,rw=read,lba=108-115",
                 "media,lba=90+4,dnr=off", "media,ns=1,lba=%d+1" %
                 (NS_LBAS - 1), "media,lba=%d+2" % (NS_LBAS - 1),
                 "media,ns=2,lba=1+1", "media,lba=1+1,count=2",
                 "media,rw=bogus,lba=1+1", "media",
                 "media,rw=write,lba=200+4,count=0,dnr=on",
                 "media,rw=write,q=1,lba=300-300,after=1,count=2",
                 "media,rw=write,lba=1+1,opc=write"):
        qom("fault", spec)
    listing()
    for slba, nlb in ((88, 4), (96, 8), (104, 8), (112, 8), (116, 1),
                      (NS_LBAS - 1, 1)):
        io("read", slba, nlb, prp1=DATA)
        io("compare", slba, nlb, prp1=DATA)
        t.reap(1, 2)
    io("write", 101, 2, prp1=DATA)
    io("write_zeroes", 110, 3)
    t.reap(1, 2)
    listing()
    t.mem(ID_BUF, struct.pack("<IIQ", 0, 4, 104))
    io("dsm", 0, 1, prp1=ID_BUF, cdw11=1 << 2)
    t.reap(1)
    t.admin(ADMIN["get_log"], prp1=ID_BUF, nsid=0xFFFFFFFF,
            cdw10=0x0E | (127 << 16))
    t.admin(ADMIN["get_lba_status"], prp1=ID_BUF, nsid=1, cdw10=80,
            cdw12=3, cdw13=(0x11 << 24))
    for slba in (200, 203, 300, 300, 300, 300):
        io("write", slba, 1, prp1=DATA)
        io("write_zeroes", slba, 1)
        t.reap(1, 2)
    t.admin(ADMIN["get_log"], prp1=ID_BUF, nsid=0xFFFFFFFF,
            cdw10=0x01 | (127 << 16))
    qom("fault-clear", "all")
    listing()
    t.admin(ADMIN["format"], nsid=1)
    t.step(100 * MS)
    listing()
    io("read", 100, 8, prp1=DATA)
    t.reap(1)
    return [t]


def trace_faults_ro_ns(rng):
    """The read-only fault (with and without NSATTR.WP) under writes, Write
    Zeroes and Identify, cleared with its notice; namespace 1 detached
    and attached by another host under I/O, with log 04h read and bad
    specs refused.  Uses no randomness."""
    t = Trace("faults-ro-ns", configs=("main", "notiming", "iothread2"))

    def arm(spec, prop="fault"):
        t.qmp('{"execute": "qom-set", "arguments": {"path": '
              '"/machine/peripheral/h0", "property": "%s", '
              '"value": "%s"}}' % (prop, spec))

    def rw(op, slba, n=1):
        for _ in range(n):
            t.submit(1, sqe(IO[op], t.next_cid(), 1, prp1=DATA, cdw10=slba,
                            cdw12=7))
        t.reap(1, n)

    t.bring_up(pairs=1)
    t.admin(ADMIN["set_features"], cdw10=0x0B, cdw11=0x1FF)
    t.admin(ADMIN["aer"])
    t.admin(ADMIN["aer"])
    rw("write", 16)
    for spec in ("read-only", "read-only,nsattr=on", "read-only,nsattr=2",
                 "read-only,count=0"):
        arm(spec)
    rw("write", 16, 2)
    t.submit(1, sqe(IO["write_zeroes"], t.next_cid(), 1, cdw10=16,
                    cdw12=7))
    t.reap(1)
    rw("read", 16)
    t.admin(ADMIN["identify"], prp1=ID_BUF, nsid=1, cdw10=0)
    t.admin(ADMIN["get_log"], prp1=ID_BUF, nsid=0xFFFFFFFF,
            cdw10=0x02 | (127 << 16))
    t.admin(ADMIN["get_log"], prp1=ID_BUF, nsid=0xFFFFFFFF,
            cdw10=0x04 | (1023 << 16))
    arm("2", prop="fault-clear")
    t.admin(ADMIN["aer"])
    arm("all", prop="fault-clear")
    rw("write", 16)
    for spec in ("ns-detach", "ns-detach,ns=7", "ns-attach,ns=1",
                 "ns-detach,ns=1,for=2s"):
        arm(spec)
    t.submit(1, sqe(IO["write"], t.next_cid(), 1, prp1=DATA, cdw10=24,
                    cdw12=7))
    arm("ns-detach,ns=1")
    t.reap(1)
    rw("read", 16)
    arm("ns-detach,ns=1")
    t.admin(ADMIN["identify"], prp1=ID_BUF, cdw10=2)
    t.admin(ADMIN["identify"], prp1=ID_BUF, nsid=1, cdw10=0)
    t.admin(ADMIN["get_log"], prp1=ID_BUF, nsid=0xFFFFFFFF,
            cdw10=0x04 | (1023 << 16))
    t.admin(ADMIN["aer"])
    arm("ns-attach,ns=1")
    arm("read-only,nsattr=on")
    t.disable()
    t.bring_up(pairs=1)
    rw("read", 16)
    rw("write", 16)
    arm("all", prop="fault-clear")
    rw("write", 16)
    return [t]


def trace_dbbuf(rng):
    """Shadow doorbells: the device reads tails from guest memory."""
    t = Trace("shadow-doorbells", configs=("main", "iothread"))
    t.bring_up(pairs=2)
    shadow, event = ID_BUF + 0x20000, ID_BUF + 0x21000
    t.admin(ADMIN["dbbuf"], prp1=shadow, prp2=event)
    for i in range(40):
        qid = 1 + i % 2
        io_cmd(t, qid, rng.choice(("write", "read")), rng, i, "prp2",
               nbytes=8192, ring=False)
        tail = t.sq_tail[qid] if rng.random() < 0.8 else rng.getrandbits(16)
        t.mem(shadow + 8 * qid, struct.pack("<I", tail))
        t.ring(qid)
        t.reap(qid)
    return [t]


# The chipset's PAM3 register (q35 MCH config 0x93) maps 0xd0000-0xd7fff:
# 3 RAM, 0 the PCI bus, where the read-only pc.rom answers (1, read-only,
# is an alias of the RAM that DMA writes through: tests/device/test_faults.c)
PAM_SEG = 0xD0000
MCH_PAM0 = 0x90


def trace_memory_map(rng):
    """The memory under commands in flight stops being RAM: PAM gives the
    0xd0000 segment back to the PCI bus under reads, writes and a CQ, the VM
    stops and runs again around the flips (the device holds its writes),
    Bus Master Enable goes off with I/O in flight, then a reset."""
    t = Trace("memory-map", configs=CONFIGS)

    def pam(attr):
        t.cfg_writel(MCH_PAM0, (attr | attr << 4) << 24, devfn=0)

    def up():
        pam(3)
        t.cfg_writel(0x04, 0x0006)
        t.enable()
        t.admin(ADMIN["set_features"], cdw10=0x07, cdw11=(2 << 16) | 2)
        t.admin(ADMIN["set_features"], cdw10=0x06, cdw11=1)  # write cache
        t.create_pair(1)
        # pair 2 completes into the segment
        t.admin(ADMIN["create_cq"], prp1=PAM_SEG + 0x4000,
                cdw10=(15 << 16) | 2, cdw11=1)
        t.admin(ADMIN["create_sq"], prp1=SQ_BASE + 2 * 0x10000,
                cdw10=(15 << 16) | 2, cdw11=(2 << 16) | 1)
        t.sq_tail[2], t.sq_size[2] = 0, 16
        t.cq_head[2], t.cq_size[2] = 0, 16

    def io_batch(qid):
        batch = rng.randrange(1, 4)
        for i in range(batch):
            off = rng.randrange(0, 4) * PAGE
            nbytes = rng.choice((512, 4096, 8192))
            prp2 = PAM_SEG + (off + PAGE) % 0x4000
            entry = sqe(IO[rng.choice(("write", "write", "read", "compare"))],
                        t.next_cid(), 1, PAM_SEG + off,
                        prp2 if nbytes > PAGE else 0,
                        rng.randrange(0, NS_LBAS - 16), 0, nbytes // 512 - 1)
            t.submit(qid, entry, ring=(i == batch - 1))
        return batch

    up()
    for step in range(80):
        r = rng.random()
        if r < 0.50:
            # the segment leaves under the commands, comes back after
            n = io_batch(1)
            if rng.random() < 0.7:
                pam(0)
            t.reap(1, n, ns=rng.choice((1000, MS)))
            pam(3)
        elif r < 0.70:
            # writes held while the VM is stopped (the cache's read first),
            # their memory given to pc.rom (it reads) or bus mastering off
            n = io_batch(1)
            t.qmp('{"execute": "stop"}')
            bme_off = rng.random() < 0.5
            if bme_off:
                t.cfg_writel(0x04, 0x0002)
            else:
                pam(0)
            t.qmp('{"execute": "cont"}')
            t.reap(1, n)
            pam(3)
            if bme_off:
                t.disable()
                up()
        elif r < 0.80:
            # a completion into the segment gone: Controller Fatal Status
            io_batch(2)
            pam(0)
            t.step(MS)
            t.disable()
            up()
        elif r < 0.90:
            t.cfg_writel(0x04, 0x0002)           # bus mastering off
            io_batch(1)
            t.disable()
            up()
        else:
            pam(rng.choice((0, 3)))
            t.step(rng.choice((0, MS)))
            pam(3)
    return [t]


# -- chaos: seeded mixes with the events a driver must survive --
CONFIGS = ("main", "notiming", "iothread", "iothread2")


def chaos(index, rng):
    t = Trace(f"chaos-{index}", configs=(CONFIGS[index % len(CONFIGS)],),
              msix=rng.random() < 0.5)
    pairs = rng.randrange(1, 5)
    t.bring_up(pairs=pairs, vectors=rng.random() < 0.5)
    live = list(range(1, pairs + 1))
    for step in range(rng.randrange(20, 80)):
        r = rng.random()
        if not live or r < 0.03:
            t.disable()
            t.bring_up(pairs=pairs)
            live = list(range(1, pairs + 1))
            continue
        qid = rng.choice(live)
        if r < 0.60:
            batch = rng.randrange(1, 12)
            for i in range(batch):
                io_cmd(t, qid, rng.choice(tuple(IO)), rng, step * 16 + i,
                       ring=(i == batch - 1))
            if rng.random() < 0.7:
                t.reap(qid, batch, ns=rng.choice((1000, 100000, MS, 20 * MS)))
        elif r < 0.68:
            t.admin(ADMIN["delete_sq"], cdw10=qid, ns=rng.choice((0, MS)))
            live.remove(qid)
            t.sq_tail.pop(qid, None)
        elif r < 0.72:
            t.admin(ADMIN["delete_cq"], cdw10=rng.choice(live + [0, 99]))
        elif r < 0.78:
            t.admin(ADMIN["abort"], cdw10=(rng.randrange(0, t.cid + 1) << 16)
                    | rng.choice(live + [0]))
        elif r < 0.82:
            t.writel(0x20, 0x4E564D65)           # NVM subsystem reset
            t.step(10 * MS)
            t.enable()
            t.bring_up(pairs=pairs)
            live = list(range(1, pairs + 1))
        elif r < 0.85:
            t.writel(0x14, 0x00464001)           # shutdown notification
            t.step(50 * MS)
            t.disable()
            t.bring_up(pairs=pairs)
            live = list(range(1, pairs + 1))
        elif r < 0.88:
            t.qmp('{"execute": "qom-set", "arguments": {"path": '
                  '"/machine/peripheral/h0", "property": "power-cut", '
                  '"value": "drive"}}')
            t.step(10 * MS)
            t.bring_up(pairs=pairs)
            live = list(range(1, pairs + 1))
        elif r < 0.94:
            # a doorbell beyond the queue, a CQ head past the tail
            t.writel(0x1000 + 8 * qid, rng.getrandbits(16))
            t.writel(0x1004 + 8 * rng.randrange(0, 6), rng.getrandbits(16))
            t.step(MS)
        else:
            t.writel(rng.choice((0x0C, 0x10, 0x14, 0x24, 0x38, 0x3C, 0x50,
                                 0xE00, 0x1FFC)), rng.getrandbits(32))
            t.step(MS)
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chaos", type=int, default=24,
                    help="seeded random traces (default 24)")
    ap.add_argument("dir")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    traces = (trace_io_matrix(rng) + trace_admin(rng) +
              trace_namespaces(rng) + trace_streams(rng) +
              trace_telemetry(rng) + trace_lba_status(rng) +
              trace_faults(rng) + trace_media(rng) +
              trace_faults_ro_ns(rng) +
              trace_link_down(rng) +
              trace_dbbuf(rng) +
              [chaos(i, rng) for i in range(args.chaos)] +
              trace_memory_map(rng))
    os.makedirs(args.dir, exist_ok=True)
    for t in traces:
        with open(os.path.join(args.dir, t.name + ".qtest"), "w") as f:
            f.write(t.text())


if __name__ == "__main__":
    main()
