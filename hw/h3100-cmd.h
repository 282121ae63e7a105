/*
 * DapuStor H3100 NVMe SSD: the command tables
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A command set: one entry per opcode, built from hw/tables/nvme-cmds.h
 * (h3100-admin.c, h3100-io.c), read by dispatch (h3100-queue.c), the
 * Commands Supported and Effects log (h3100-log.c), the sanitize gate
 * and the trace.  An opcode without fn is not supported.
 */
#ifndef HW_DAPUSTOR_H3100_CMD_H
#define HW_DAPUSTOR_H3100_CMD_H

#include "h3100.h"
#include "tables/nvme-cmds.h"

enum {
    H3100_CMD_IN_SANITIZE = 1 << 0,   /* allowed while a sanitize runs */
    H3100_CMD_UNTIMED = 1 << 1,       /* no firmware time (admin) */
    H3100_CMD_NSID_ALL = 1 << 2,      /* NSID FFFFFFFFh: every namespace */
};

typedef struct H3100Cmd {
    uint16_t (*fn)(H3100State *s, H3100Req *req);
    uint32_t effects;                 /* log 05h: NVME_CMD_EFF_* */
    uint32_t flags;                   /* H3100_CMD_* */
    const char *name;                 /* trace events, nvme-cli's words */
} H3100Cmd;

/* log 05h's entries of hw/tables/nvme-cmds.h */
#define H3100_EFF_PLAIN  NVME_CMD_EFF_CSUPP
#define H3100_EFF_LBA    (NVME_CMD_EFF_CSUPP | NVME_CMD_EFF_LBCC)
#define H3100_EFF_CCC    (NVME_CMD_EFF_CSUPP | NVME_CMD_EFF_CCC)
#define H3100_EFF_NS     (NVME_CMD_EFF_CSUPP | NVME_CMD_EFF_NCC | \
                          NVME_CMD_EFF_NIC)
#define H3100_EFF_ERASES (H3100_EFF_LBA | NVME_CMD_EFF_NCC | \
                          NVME_CMD_EFF_NIC | \
                          (2 << 16))    /* CSE: no command to any namespace */

/* a table entry from a line of hw/tables/nvme-cmds.h */
#define H3100_CMD_ENTRY(opcode, id, handler, cmd_name, eff, cmd_flags) \
    [opcode] = { .fn = h3100_##handler, .effects = eff, \
                 .flags = cmd_flags, .name = cmd_name },

extern const H3100Cmd h3100_admin_cmds[256];
extern const H3100Cmd h3100_io_cmds[256];
const char *h3100_cmd_name(bool admin, uint8_t opcode);

#endif
