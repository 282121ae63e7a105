/*
 * The H3100 model log page (D0h), the drive model's own counters (CAh is
 * DapuStor's additional SMART log, include/h3100/dapustor-log.h): its one
 * definition.  The device fills
 * it (hw/h3100-log.c), tools/h3100-vlog prints it, and docs/guide/usage.md
 * names these fields.  Little-endian on the wire; zero past the fields.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_VLOG_H
#define H3100_VLOG_H

#include <stddef.h>
#include <stdint.h>

#define H3100_VLOG_BYTES            512
#define H3100_VLOG_VERSION          1

/*
 * The fields in page order: X(type, name).  The struct below and every
 * reader that walks the fields (h3100-vlog --fields) expand this list.
 */
#define H3100_VLOG_FIELDS(X) \
    X(uint16_t, version)                /* H3100_VLOG_VERSION */             \
    X(uint16_t, size)                   /* H3100_VLOG_BYTES */               \
    X(uint32_t, recent_window_s)        /* the recent WAF's window */        \
    X(uint64_t, host_write_bytes)                                            \
    X(uint64_t, nand_write_bytes)       /* host + reclaim programs */        \
    X(uint64_t, waf_milli)              /* x1000, rounded down */            \
    X(uint64_t, recent_waf_milli)                                            \
    X(uint64_t, recent_host_write_bytes)                                     \
    X(uint64_t, recent_nand_write_bytes)                                     \
    X(uint64_t, recent_ms)              /* span of the window */             \
    X(uint64_t, gc_victims)             /* reclaim runs */                   \
    X(uint64_t, gc_slots_moved)         /* 4 KiB moved by reclaim */         \
    X(uint64_t, wl_victims)             /* wear-levelling moves */           \
    X(uint64_t, emergency_gc)           /* foreground reclaim runs */        \
    X(uint64_t, wbuf_bytes)             /* write buffer occupancy */         \
    X(uint64_t, wbuf_capacity)                                               \
    X(uint64_t, wbuf_stalls)            /* commands that waited */           \
    X(uint64_t, wbuf_stall_ns)                                               \
    X(uint64_t, ra_hits)                /* read-ahead hits, 4 KiB */         \
    X(uint64_t, ra_slots_read)          /* read-ahead reads, 4 KiB */        \
    X(uint32_t, free_superblocks)                                            \
    X(uint32_t, superblocks)                                                 \
    X(uint64_t, suspends)               /* program / erase suspends */       \
    X(uint32_t, erase_min)                                                   \
    X(uint32_t, erase_avg_milli)                                             \
    X(uint32_t, erase_max)                                                   \
    X(uint32_t, rated_pe)                                                    \
    X(uint32_t, percentage_used)        /* not capped */                     \
    X(uint32_t, available_spare_pct)                                         \
    X(uint64_t, block_erases)                                                \
    X(uint64_t, host_read_bytes)                                             \
    X(uint64_t, nand_read_bytes)                                             \
    X(uint64_t, factory_bad_blocks)                                          \
    X(uint64_t, grown_bad_blocks)                                            \
    X(uint64_t, unaligned_ios)                                               \
    X(uint64_t, buffer_read_hits)       /* buffer read hits, 4 KiB */        \
    X(uint64_t, mapped_bytes)                                                \
    X(uint64_t, now_ns)                 /* drive time, this run */

#define H3100_VLOG_MEMBER(type, name) type name;

typedef struct H3100VendorLog {
    H3100_VLOG_FIELDS(H3100_VLOG_MEMBER)
    uint8_t reserved[256];
} H3100VendorLog;

/* natural alignment everywhere: no padding, the same on every compiler */
_Static_assert(sizeof(H3100VendorLog) == H3100_VLOG_BYTES,
               "H3100VendorLog is the page");
_Static_assert(offsetof(H3100VendorLog, free_superblocks) == 144,
               "H3100VendorLog layout");
_Static_assert(offsetof(H3100VendorLog, now_ns) == 248,
               "H3100VendorLog layout");

#endif
