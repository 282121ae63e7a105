/*
 * DapuStor's additional SMART log page (CAh) in the layout nvme-cli's
 * DapuStor plugin reads (`nvme dapustor smart-log-add`,
 * plugins/dapustor/dapustor-nvme.c in linux-nvme/nvme-cli): thirteen
 * 12-byte items, each a key, a normalized value (100 new, falling) and
 * a 48-bit little-endian raw value or a triple of 16-bit ones.  Its one
 * definition: the device fills it (hw/h3100-log.c), docs/usage.md names
 * it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_DAPUSTOR_LOG_H
#define H3100_DAPUSTOR_LOG_H

#include <stddef.h>
#include <stdint.h>

#define H3100_LOG_DAPU_SMART        0xca

typedef struct H3100DapuItem {
    uint8_t key;
    uint8_t rsvd1[2];
    uint8_t norm;
    uint8_t rsvd4;
    uint8_t raw[6];
    uint8_t rsvd11;
} H3100DapuItem;

/*
 * The items in page order: X(name, key).  The plugin does not check the
 * keys; these are those of Intel's additional SMART log, whose item
 * layout the plugin's is (an estimate for DapuStor's firmware).
 */
#define H3100_DAPU_SMART_ITEMS(X)                                           \
    X(program_fail_cnt, 0xab)                                               \
    X(erase_fail_cnt, 0xac)                                                 \
    X(wear_leveling_cnt, 0xad)        /* raw: erase count min, max, avg */  \
    X(e2e_err_cnt, 0xb8)                                                    \
    X(crc_err_cnt, 0xc7)                                                    \
    X(timed_workload_media_wear, 0xe2) /* 1/1024 % of the rated wear */     \
    X(timed_workload_host_reads, 0xe3) /* % of host commands */             \
    X(timed_workload_timer, 0xe4)     /* minutes */                         \
    X(thermal_throttle_status, 0xea)  /* raw: u8 %, u32 count */            \
    X(retry_buffer_overflow_cnt, 0xf0)                                      \
    X(pll_lock_loss_cnt, 0xf3)                                              \
    X(nand_bytes_written, 0xf4)       /* 32 MiB units */                    \
    X(host_bytes_written, 0xf5)       /* 32 MiB units */

#define H3100_DAPU_ITEM(name, key) H3100DapuItem name;

/* the items, then zeroes to a 512-byte page */
typedef struct H3100DapuSmartLog {
    H3100_DAPU_SMART_ITEMS(H3100_DAPU_ITEM)
    uint8_t reserved[512 - 13 * 12];
} H3100DapuSmartLog;

#define H3100_DAPU_BYTES_UNIT       (32ULL << 20)

_Static_assert(sizeof(H3100DapuItem) == 12, "H3100DapuItem layout");
_Static_assert(offsetof(H3100DapuSmartLog, reserved) == 13 * 12,
               "H3100DapuSmartLog layout");
_Static_assert(sizeof(H3100DapuSmartLog) == 512, "H3100DapuSmartLog page");

#endif
