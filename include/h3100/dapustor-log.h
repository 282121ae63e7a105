/*
 * DapuStor's additional SMART log pages (CAh, CBh) in the layout nvme-cli's
 * DapuStor plugin reads (`nvme dapustor smart-log-add`,
 * plugins/dapustor/dapustor-nvme.c in linux-nvme/nvme-cli): 12-byte
 * items (thirteen in CAh, twenty in CBh), each a key, a normalized value
 * (100 new, falling) and a 48-bit little-endian raw value or a triple of
 * 16-bit ones.  Their one definition: the device fills them
 * (hw/h3100-dapustor-log.c), docs/guide/usage.md names them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_DAPUSTOR_LOG_H
#define H3100_DAPUSTOR_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "h3100/log-pages.h"      /* H3100_LOG_DAPU_* */

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

/*
 * The extended page (CBh), read by the plugin when the drive answers it:
 * twenty items, X(name, key).  DapuStor's keys are not public: ours
 * number the items.  Temperatures are degrees Celsius, power milliwatts.
 */
#define H3100_DAPU_EXT_ITEMS(X)                                             \
    X(sys_area_life_remain, 0x01)     /* % (the user area's; no SLC one) */ \
    X(nand_bytes_read, 0x02)          /* 32 MiB units */                    \
    X(temperature, 0x03)              /* raw: max, min, cur this run */     \
    X(power_consumption, 0x04)        /* raw: max, min, avg this run, mW */ \
    X(power_on_temperature, 0x05)     /* raw: max, min over starts, now */  \
    X(power_loss_protection, 0x06)    /* raw 1: capacitors healthy */       \
    X(read_fail_count, 0x07)          /* host reads LDPC could not fix */   \
    X(thermal_throttle_time, 0x08)    /* seconds at TMT1 or TMT2 */         \
    X(flash_error_media_count, 0x09)  /* SMART media errors */              \
    X(lifetime_write_amplification, 0x0a) /* WAF x 1000 */                  \
    X(firmware_update_count, 0x0b)    /* activations, lifetime */           \
    X(dram_cecc_count, 0x0c)                                                \
    X(dram_uecc_count, 0x0d)                                                \
    X(xor_pass_count, 0x0e)                                                 \
    X(xor_fail_count, 0x0f)                                                 \
    X(xor_invoked_count, 0x10)                                              \
    X(inflight_read_io_cmd, 0x11)     /* reads in the drive now */          \
    X(temp_since_born, 0x12)          /* raw: max, min, cur, lifetime */    \
    X(temp_since_bootup, 0x13)        /* raw: max, min, cur this run */     \
    X(inflight_write_io_cmd, 0x14)

typedef struct H3100DapuExtLog {
    H3100_DAPU_EXT_ITEMS(H3100_DAPU_ITEM)
    uint8_t reserved[512 - 20 * 12];
} H3100DapuExtLog;

_Static_assert(sizeof(H3100DapuItem) == 12, "H3100DapuItem layout");
_Static_assert(offsetof(H3100DapuExtLog, reserved) == 20 * 12,
               "H3100DapuExtLog layout");
_Static_assert(sizeof(H3100DapuExtLog) == 512, "H3100DapuExtLog page");
_Static_assert(offsetof(H3100DapuSmartLog, reserved) == 13 * 12,
               "H3100DapuSmartLog layout");
_Static_assert(sizeof(H3100DapuSmartLog) == 512, "H3100DapuSmartLog page");

#endif
