/*
 * DapuStor H3100 drive model: its whole state in pieces, for live
 * migration and snapshots of the VM that holds the drive.
 *
 * The big part of a drive's state is its logical map: 4 bytes per 4 KiB
 * of the namespace, 0.8 GB for a full 0.8 TB drive (the reverse maps are
 * a cache the receiver builds as it needs them).  It travels in pages of
 * H3100_MIG_PAGE_BYTES while the drive keeps running: from
 * h3100_mig_track_start every page that holds data is due, every page the
 * drive changes becomes due again, and h3100_mig_next hands out one due
 * page (or a reset: a map chunk the drive freed) at a time.
 * Once the drive has stopped, the pages still due and the core
 * (h3100_mig_core_save: counters, block tables, superblocks, and every
 * piece of timing state: die queues, bus, link and core calendars, the
 * write buffer, read-ahead, temperature) complete it.  The model resumes
 * on the other side exactly where it stopped: the same command gives the
 * same answer at the same time.
 *
 * The receiver treats what it gets as hostile: every index is checked
 * before use, and as the pages come it keeps the counts that the state
 * loader's whole-map check (ftl_check) computes, so that accepting the
 * core costs time in the superblocks and blocks, not in the map: a full
 * 0.8 TB map is not walked again while the VM is stopped.  It accepts
 * exactly the states that check accepts.
 *
 * Not thread-safe: the caller serialises calls on one model (the QEMU
 * device holds its model lock).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_MIGRATE_H
#define H3100_MIGRATE_H

#include "h3100/model.h"

#define H3100_MIG_PAGE_BYTES 4096u

typedef enum H3100MigKind {
    H3100_MIG_L2P = 1,                /* a page of the logical map */
    /* older builds only; a receiver checks the index and drops it */
    H3100_MIG_P2L = 2,                /* a page of a superblock's reverse map */
    H3100_MIG_L2P_RESET = 3,          /* a map chunk was freed */
    H3100_MIG_P2L_RESET = 4,          /* a superblock's reverse map was freed */
} H3100MigKind;

typedef struct H3100MigItem {
    uint8_t kind;                     /* H3100MigKind */
    bool fill;                        /* a page of unmapped entries only */
    uint64_t index;                   /* page (L2P, P2L), chunk, superblock */
    uint8_t data[H3100_MIG_PAGE_BYTES];  /* a page, unless fill */
} H3100MigItem;

/* Start (again: everything due) or stop tracking the map's changes. */
void h3100_mig_track_start(H3100Model *m);
void h3100_mig_track_stop(H3100Model *m);
/* Items due now (0 when not tracking). */
uint64_t h3100_mig_pending(const H3100Model *m);
/* The next item due into @it, no longer due; false when none is. */
bool h3100_mig_next(H3100Model *m, H3100MigItem *it);

/*
 * The core, once the drive has stopped and every item was taken: its
 * format version is H3100_MIG_CORE_VERSION, little-endian and checksummed.
 */
#define H3100_MIG_CORE_VERSION 1u
/*
 * The latest time, in ns, a migrated model or controller may hold (146
 * years): a sum of two stays below 2^63, so no deadline computed from
 * them wraps, and a later one is refused.
 */
#define H3100_MIG_TIME_MAX (UINT64_C(1) << 62)
GByteArray *h3100_mig_core_save(H3100Model *m);

/* The receiving side: a model of @cfg filled by the items, then the core. */
typedef struct H3100MigRecv H3100MigRecv;
H3100MigRecv *h3100_mig_recv_new(const H3100Config *cfg, GError **errp);
bool h3100_mig_recv_item(H3100MigRecv *r, const H3100MigItem *it,
                         GError **errp);
/* The model, whole and checked; NULL (and @r still to free) if refused. */
H3100Model *h3100_mig_recv_finish(H3100MigRecv *r, const void *core,
                                  size_t len, GError **errp);
void h3100_mig_recv_free(H3100MigRecv *r);

#endif
