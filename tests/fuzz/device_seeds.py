#!/usr/bin/env python3
"""Seed inputs for QEMU's generic-fuzz on the dapustor-h3100.

generic-fuzz reads its input as operations separated by "FUZZ": an
opcode byte, then the operation's packed arguments (tests/qtest/fuzz/
generic_fuzz.c).  Random bytes seldom enable an NVMe controller (AQA,
page-aligned ASQ/ACQ in RAM, CC with the right fields), so the campaign
starts from inputs that do: enable it, queue one admin command (every
DMA read returns the pattern, so every SQE fetched is that command), ring
the doorbell and let time run; or create I/O queue pair 1 and ring each
I/O opcode on it with PRP, PRP-list and SGL data pointers (each DMA read
takes the next pattern: the two admin SQEs, the I/O SQE, its PRP list,
SGL segment or DSM ranges, its data).  The fuzzer mutates from there.
The structure-aware corpus that reaches further is gen_traces.py's.

    device_seeds.py DIR     write the seeds into DIR
"""
import os
import struct
import sys

OP_WRITE, OP_ADD_DMA_PATTERN, OP_CLOCK_STEP = 3, 7, 9
SEP = b"FUZZ"
SIZE_LONG, SIZE_QUAD = 2, 3


def write(base, offset, value, size):
    # struct { uint8_t size, base; uint32_t offset; uint64_t value; }
    return bytes([OP_WRITE]) + struct.pack("<BBxxIQ", size, base, offset,
                                           value)


def pattern(data):
    return bytes([OP_ADD_DMA_PATTERN]) + bytes([0, 0]) + data


def sqe(opc, cdw10=0, cdw11=0, nsid=0, prp1=0x300000, prp2=0, cdw12=0,
        cdw13=0):
    return struct.pack("<BBHIIIQQQIIIIII", opc, 0, 1, nsid, 0, 0, 0,
                       prp1, prp2, cdw10, cdw11, cdw12, cdw13, 0, 0)


COMMANDS = {
    "identify": sqe(0x06, cdw10=1),
    "get-log-smart": sqe(0x02, cdw10=0x02 | (127 << 16), nsid=0xffffffff),
    "create-cq": sqe(0x05, cdw10=1 | (15 << 16), cdw11=1),
    "create-sq": sqe(0x01, cdw10=1 | (15 << 16), cdw11=1 | (1 << 16),
                     prp1=0x310000),
    "features": sqe(0x09, cdw10=0x07, cdw11=0x00030003),
    "dbbuf": sqe(0x7c, prp1=0x320000, prp2=0x321000),
    "read": sqe(0x02, nsid=1, cdw10=0, cdw11=0) ,
    "get-lba-status": sqe(0x86, nsid=1, cdw12=1023, cdw13=0x11 << 24),
    # the admin commands added after the first campaign
    "ns-create": sqe(0x0d, cdw10=0),            # the pattern is the data
    "ns-attach": sqe(0x15, nsid=2, cdw10=0),
    "ns-delete": sqe(0x0d, nsid=2, cdw10=1),
    "dir-send-streams": sqe(0x19, nsid=1, cdw11=0x0100, cdw12=0x0101),
    "dir-recv-streams": sqe(0x1a, nsid=1, cdw10=1023, cdw11=0x0101),
    "telemetry-host": sqe(0x02, cdw10=0x07 | (1 << 8) | (127 << 16),
                          nsid=0xffffffff),
    "telemetry-ctrl": sqe(0x02, cdw10=0x08 | (127 << 16), nsid=0xffffffff),
    "log-cb": sqe(0x02, cdw10=0xcb | (1023 << 16), nsid=0xffffffff),
    "log-lba-status": sqe(0x02, cdw10=0x0e | (1 << 15) | (1023 << 16),
                          nsid=0xffffffff),
    "lba-status-attr": sqe(0x09, cdw10=0x15, cdw11=0x00000001),
}


def enable(base, admin_cmds):
    """AQA, ASQ, ACQ and CC.EN, then @admin_cmds commands rung on the
    admin queue and their completions given back."""
    return [
        write(base, 0x24, 0x001f001f, SIZE_LONG),       # AQA: 32 entries
        write(base, 0x28, 0x100000, SIZE_QUAD),         # ASQ
        write(base, 0x30, 0x200000, SIZE_QUAD),         # ACQ
        write(base, 0x14, 0x00460001, SIZE_LONG),       # CC.EN
        write(base, 0x1000, admin_cmds, SIZE_LONG),     # SQ 0 tail
        bytes([OP_CLOCK_STEP]),
        write(base, 0x1004, admin_cmds, SIZE_LONG),     # CQ 0 head
    ]


def ring_twice(base, qid):
    """One command rung on I/O queue @qid, then a second one."""
    return [
        write(base, 0x1000 + 8 * qid, 1, SIZE_LONG),    # SQ tail
        bytes([OP_CLOCK_STEP]),
        write(base, 0x1004 + 8 * qid, 1, SIZE_LONG),    # CQ head
        write(base, 0x1000 + 8 * qid, 2, SIZE_LONG),
        bytes([OP_CLOCK_STEP]),
    ]


def seed(base, command):
    ops = [pattern(command)] + enable(base, 1) + [
        write(base, 0x1000, 2, SIZE_LONG),
        bytes([OP_CLOCK_STEP]),
    ]
    return SEP.join(ops)


def seed_ioq2(base):
    """I/O queue pair 2 made, then a Read on it: qid 2's own doorbell
    (in iothread2, the second IOThread's queue)."""
    ops = [
        pattern(sqe(0x05, cdw10=2 | (15 << 16), cdw11=1 | (2 << 16),
                    prp1=0x330000)),
        pattern(sqe(0x01, cdw10=2 | (15 << 16), cdw11=1 | (2 << 16),
                    prp1=0x340000)),
        pattern(COMMANDS["read"]),
    ] + enable(base, 2) + ring_twice(base, 2)
    return SEP.join(ops)


IO_OPS = {"flush": 0x00, "write": 0x01, "read": 0x02, "write-uncor": 0x04,
          "compare": 0x05, "write-zeroes": 0x08, "dsm": 0x09}
DATA_BUF, AUX_BUF = 0x500000, 0x600000


def io_sqe(opc, kind):
    """An I/O command on namespace 1, 16 KiB at LBA 8, and the pattern
    the device's next DMA read gets (PRP list, SGL segment, DSM ranges)."""
    psdt, prp1, prp2 = 0, DATA_BUF, 0
    aux = struct.pack("<4Q", *(DATA_BUF + 0x1000 * i for i in range(1, 5)))
    if kind == "prp2":
        prp2 = DATA_BUF + 0x1000
    elif kind == "prp-list":
        prp2 = AUX_BUF
    elif kind == "sgl-data":
        psdt, prp2 = 1, 0x4000                  # length; type 0: data block
    elif kind == "sgl-last":
        # a last segment of two data blocks
        psdt, prp1, prp2 = 1, AUX_BUF, 32 | (0x30 << 56)
        aux = (struct.pack("<QI3xB", DATA_BUF, 0x2000, 0) +
               struct.pack("<QI3xB", DATA_BUF + 0x8000, 0x2000, 0))
    cdw10, cdw11 = 8, 0
    if opc == 0x09:                             # DSM: 2 ranges, deallocate
        prp1, prp2, psdt, cdw10, cdw11 = AUX_BUF, 0, 0, 1, 4
        aux = struct.pack("<IIQIIQ", 0, 64, 0, 0, 8, 4096)
    cmd = struct.pack("<BBHIIIQQQIIIIII", opc, psdt << 6, 1, 1, 0, 0, 0,
                      prp1, prp2, cdw10, cdw11, 31, 0, 0, 0)
    return cmd, aux


def seed_io(base, opc, kind):
    """I/O queue pair 1 made, then @opc rung on it twice: SQEs, PRP lists,
    SGL segments and data come from the patterns in the order the
    device reads them."""
    cmd, aux = io_sqe(opc, kind)
    ops = [
        pattern(COMMANDS["create-cq"]),
        pattern(COMMANDS["create-sq"]),
        pattern(cmd),
        pattern(aux),
        pattern(bytes(range(256))),
    ] + enable(base, 2) + ring_twice(base, 1)
    return SEP.join(ops)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for base in range(4):
        for name, cmd in COMMANDS.items():
            path = os.path.join(sys.argv[1], f"seed-{name}-{base}")
            with open(path, "wb") as f:
                f.write(seed(base, cmd))
        with open(os.path.join(sys.argv[1], f"seed-ioq2-{base}"), "wb") as f:
            f.write(seed_ioq2(base))
        for op, opc in IO_OPS.items():
            kinds = (("prp1", "prp2", "prp-list", "sgl-data", "sgl-last")
                     if op in ("write", "read", "compare") else ("prp1",))
            for kind in kinds:
                path = os.path.join(sys.argv[1], f"seed-io-{op}-{kind}-{base}")
                with open(path, "wb") as f:
                    f.write(seed_io(base, opc, kind))


if __name__ == "__main__":
    main()
