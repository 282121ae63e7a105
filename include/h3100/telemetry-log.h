/*
 * The Telemetry log pages, 07h (host-initiated) and 08h (controller-
 * initiated), as the device fills them and `h3100-vlog --telemetry`
 * decodes them.  docs/guide/usage.md, *Telemetry*, names these definitions.
 *
 * Block 0 is NVMe 1.3's header (H3100TelHeader).  Data area 1 (block 1)
 * is a snapshot of the drive (H3100TelSnapshot), data area 2 the array
 * time of every die and the transfer time of every channel bus
 * (snapshot.dies + snapshot.channels little-endian u64 nanoseconds, in
 * that order), data area 3 the recent history (H3100TelHistory): the
 * last reclaim victims and throttle changes, oldest first.  All numbers
 * are little-endian.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_TELEMETRY_LOG_H
#define H3100_TELEMETRY_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "h3100/log-pages.h"      /* H3100_LOG_TELEMETRY_* */

#define H3100_TEL_BLOCK             512
#define H3100_TEL_MAGIC             "H3TL"
#define H3100_TEL_VERSION           1
#define H3100_TEL_RECLAIMS          64      /* victims kept */
#define H3100_TEL_THERMAL           32      /* throttle changes kept */

/* why a snapshot was taken (snapshot.reason) */
enum {
    H3100_TEL_REASON_HOST = 0,              /* Get Log Page 07h, Create */
    H3100_TEL_REASON_THROTTLE = 1,          /* heavy thermal throttling */
    H3100_TEL_REASON_READ_ONLY = 2,         /* out of spare blocks */
    H3100_TEL_REASON_FATAL = 3,             /* controller fatal status */
};

typedef struct H3100TelHeader {
    uint8_t lid;                            /* 07h or 08h */
    uint8_t rsvd1[4];
    uint8_t ieee[3];
    uint16_t dalb1;                         /* last block of each area */
    uint16_t dalb2;
    uint16_t dalb3;
    uint8_t rsvd14[367];
    uint8_t host_gen;                       /* host-initiated generation */
    uint8_t ctrl_avail;                     /* controller data available */
    uint8_t ctrl_gen;                       /* its generation */
    char reason[128];                       /* ASCII, NUL padded */
} H3100TelHeader;

typedef struct H3100TelSnapshot {
    char magic[4];                          /* H3100_TEL_MAGIC */
    uint16_t version;                       /* H3100_TEL_VERSION */
    uint16_t reason;                        /* H3100_TEL_REASON_* */
    uint32_t dies;
    uint32_t channels;
    uint64_t now_ns;                        /* model time of the snapshot */
    uint32_t temperature_k;
    uint32_t power_mw;
    uint32_t throttle_level;                /* 0 none, 1 light, 2 heavy */
    uint32_t free_superblocks;
    uint32_t superblocks;
    uint32_t read_only;
    uint64_t wbuf_bytes;                    /* write buffer occupancy */
    uint64_t wbuf_capacity;
    uint64_t wbuf_stalls;
    uint64_t wbuf_stall_ns;
    uint64_t host_write_bytes;
    uint64_t nand_write_bytes;
    uint64_t host_read_bytes;
    uint64_t gc_victims;
    uint64_t gc_slots_moved;
    uint64_t wl_victims;
    uint64_t emergency_gc;
    uint64_t block_erases;
    uint64_t nand_busy_ns;                  /* = the sum of data area 2's dies */
    uint64_t nand_backlog_ns;
    uint64_t core_busy_ns;
    uint64_t tmt1_ns;
    uint64_t tmt2_ns;
    uint8_t rsvd[H3100_TEL_BLOCK - 184];
} H3100TelSnapshot;

typedef struct H3100TelReclaim {
    uint64_t now_ns;
    uint32_t superblock;
    uint32_t valid_slots;                   /* 4 KiB slots it had to move */
    uint32_t wear_levelling;                /* 1: chosen for wear */
    uint32_t rsvd;
} H3100TelReclaim;

typedef struct H3100TelThermal {
    uint64_t now_ns;
    uint32_t temperature_k;
    uint8_t from_level;
    uint8_t to_level;
    uint16_t rsvd;
} H3100TelThermal;

typedef struct H3100TelHistory {
    uint64_t reclaims;                      /* ever recorded */
    uint64_t thermal_changes;
    uint32_t reclaim_n;                     /* entries below, oldest first */
    uint32_t thermal_n;
    H3100TelReclaim reclaim[H3100_TEL_RECLAIMS];
    H3100TelThermal thermal[H3100_TEL_THERMAL];
    uint8_t rsvd[H3100_TEL_BLOCK - (24 + 24 * H3100_TEL_RECLAIMS +
                                    16 * H3100_TEL_THERMAL) % H3100_TEL_BLOCK];
} H3100TelHistory;

_Static_assert(sizeof(H3100TelHeader) == H3100_TEL_BLOCK, "header");
_Static_assert(offsetof(H3100TelHeader, dalb1) == 8, "dalb1");
_Static_assert(offsetof(H3100TelHeader, host_gen) == 381, "host_gen");
_Static_assert(offsetof(H3100TelHeader, reason) == 384, "reason");
_Static_assert(sizeof(H3100TelSnapshot) == H3100_TEL_BLOCK, "snapshot");
_Static_assert(offsetof(H3100TelSnapshot, rsvd) == 184, "snapshot fields");
_Static_assert(sizeof(H3100TelReclaim) == 24, "reclaim entry");
_Static_assert(sizeof(H3100TelThermal) == 16, "thermal entry");
_Static_assert(offsetof(H3100TelHistory, reclaim) == 24, "history");
_Static_assert(sizeof(H3100TelHistory) % H3100_TEL_BLOCK == 0, "history");

/* Data area 2's bytes for @dies and @channels, in whole blocks. */
static inline size_t h3100_tel_da2_bytes(uint32_t dies, uint32_t channels)
{
    size_t b = ((size_t)dies + channels) * 8;

    return (b + H3100_TEL_BLOCK - 1) / H3100_TEL_BLOCK * H3100_TEL_BLOCK;
}

#endif
