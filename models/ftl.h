/*
 * Flash translation layer: page mapping, superblocks, reclaim, wear.
 *
 * The FTL keeps metadata only (which logical 4 KiB slot lives where); the
 * data itself stays in the host's backing file.  It calls FtlHooks when
 * something takes NAND time (a unit to program, a page to read for
 * reclaim, a superblock to erase), so the same code runs timed under the
 * model and untimed for precondition fast-forward.
 *
 * A slot is valid when the logical map still points at it.  Overwrites
 * and deallocations only change the logical map and a superblock's valid
 * count, so they touch no reverse table, and no validity bitmap is
 * needed.  Reverse maps (which lpn a slot holds) are a cache that reclaim
 * needs for its victims only (ftl_rmap.c): l2p[p2l[slot]] == ppn where a
 * superblock holds one.
 *
 * Physical slot numbers (ppn) are sb * slots_per_sb + slot.  Inside a
 * superblock, program unit u = slot / slots_per_unit goes to die
 * u % dies, word line u / dies; inside a unit slots run page type major,
 * then plane, then 4 KiB piece, so 32 KiB in a row is a multi-plane page.
 */
#ifndef H3100_FTL_H
#define H3100_FTL_H

#include "h3100/config.h"
#include "divide.h"
#include "rng.h"

#define FTL_UNMAPPED UINT32_MAX
#define FTL_NO_SB UINT32_MAX
#define FTL_NO_PPN UINT64_MAX
/*
 * 2 MiB of map entries per chunk.  The fuzzer (tests/fuzz) builds with
 * smaller chunks, so that its state files with data in them stay small.
 */
#ifndef FTL_CHUNK_SHIFT
#define FTL_CHUNK_SHIFT 19u
#endif
#define FTL_CHUNK_SLOTS (1u << FTL_CHUNK_SHIFT)
/*
 * Open superblocks: one per host stream, and one per stream for what
 * reclaim moves, so data placed apart by the host stays apart.
 */
#define FTL_GC_BASE H3100_MAX_STREAMS
#define FTL_STREAMS (2 * H3100_MAX_STREAMS)

static inline bool ftl_is_gc_stream(uint32_t stream)
{
    return stream >= FTL_GC_BASE;
}

typedef enum SbState {
    SB_FREE,
    SB_OPEN,
    SB_CLOSED,
    SB_VICTIM,                        /* closed, being reclaimed */
    SB_RETIRED,                       /* lost a block with no spare */
} SbState;

typedef struct Superblock {
    /*
     * Its reverse map, if it holds one (ftl_rmap.c): an lpn per slot, or
     * FTL_UNMAPPED; every valid slot names its lpn.
     */
    uint32_t *p2l;
    /* or its lpns in a list (ftl_rmap.c: FtlLpnList), if it holds one */
    uint16_t *lpns;
    uint32_t lpns_len;                /* 16-bit units in use */
    uint32_t lpns_cap;                /* 16-bit units allocated */
    uint32_t valid;                   /* slots the logical map points at */
    uint32_t wp;                      /* slots written */
    uint32_t erase_count;
    uint8_t state;
    uint8_t stream;
    uint8_t rmap;                     /* FtlRmapKind of its p2l or lpns */
} Superblock;

/* Which reverse map a superblock holds, and why (ftl_rmap.c). */
typedef enum FtlRmapKind {
    RMAP_NONE,                        /* it holds none */
    RMAP_OPEN,                        /* p2l, filled as it is written */
    RMAP_YOUNG,                       /* p2l, closed lately: the young ring */
    RMAP_LIST,                        /* lpns, built for reclaim */
    RMAP_BUILT,                       /* p2l, built from lpns for reclaim */
} FtlRmapKind;

typedef struct FtlHooks {
    void *opaque;
    /* unit @unit of @sb, written by @stream, is full: program it */
    void (*unit_full)(void *opaque, uint32_t stream, uint32_t sb,
                      uint32_t unit);
    /* reclaim reads @nslots valid slots of the page holding @ppn */
    void (*gc_read)(void *opaque, uint64_t ppn, uint32_t nslots);
    /* reclaim moved one slot (firmware work) */
    void (*gc_moved)(void *opaque);
    /* @sb was erased */
    void (*erased)(void *opaque, uint32_t sb);
    /* @sb, holding @valid slots, is the next victim (@wl: for wear) */
    void (*gc_victim)(void *opaque, uint32_t sb, uint64_t valid, bool wl);
} FtlHooks;

typedef struct FtlStats {
    uint64_t host_slots;              /* slots written by the host */
    uint64_t gc_slots;                /* slots moved by reclaim */
    uint64_t gc_victims;
    uint64_t wl_victims;              /* victims chosen for wear */
    uint64_t sb_erases;
    uint64_t block_erases;
    uint64_t trimmed_slots;
    uint64_t fg_gc_slots;             /* moved while below gc_fg_free */
    uint64_t emergency_gc;            /* host waited for a whole victim */
} FtlStats;

typedef struct BadBlocks {
    uint32_t planes;                  /* planes in the drive */
    uint32_t blocks;                  /* per plane */
    uint8_t *state;                   /* per block: BB_SPARE/USED/BAD */
    uint32_t *erase_count;            /* per block */
    uint32_t *spares_left;            /* per plane */
    uint32_t initial_spares;          /* the fewest any plane started with */
    uint64_t factory_bad;
    uint64_t grown_bad;
    uint64_t used_blocks;
    uint64_t used_block_erases;       /* sum over blocks in use */
    /*
     * Erase counts of the blocks in use: SMART reads them at every log
     * read, so they are kept up to date instead of found by a walk of
     * every block.  Derived: rebuilt by bb_scan_wear_range() on load.
     */
    uint32_t used_min_erases;
    uint32_t used_max_erases;
    uint64_t used_at_min;             /* blocks in use at the minimum */
} BadBlocks;

enum { BB_SPARE = 0, BB_USED = 1, BB_BAD = 2 };

/*
 * Live migration (ftl_track.c) hands the logical map out in pages of
 * FTL_PAGE_SLOTS entries (4 KiB), and while it runs marks the pages the
 * FTL changes and the map chunks it frees.  (Streams of older builds also
 * carry reverse-map pages of FTL_PAGE_SLOTS entries, which a receiver
 * checks and drops.)
 */
#define FTL_PAGE_SHIFT 10u
#define FTL_L2P_PAGE_SHIFT (FTL_CHUNK_SHIFT < FTL_PAGE_SHIFT ? \
                            FTL_CHUNK_SHIFT : FTL_PAGE_SHIFT)
#define FTL_PAGE_SLOTS (1u << FTL_PAGE_SHIFT)
#define FTL_L2P_PAGE_SLOTS (1u << FTL_L2P_PAGE_SHIFT)
#define FTL_CHUNK_PAGES (FTL_CHUNK_SLOTS / FTL_L2P_PAGE_SLOTS)

/*
 * Reverse maps held by closed superblocks (ftl_rmap.c): the full maps of
 * the most recently closed 1/FTL_RMAP_YOUNG_SHARE of the superblocks
 * (young: hot data invalidates there, so reclaim often takes them soon),
 * and lists of the lpns of those with the fewest valid slots (reclaim's
 * next victims), built by one pass over the logical map, with as many
 * entries as 1/FTL_RMAP_LIST_SHARE of the slots mapped: the more, the
 * rarer the pass.  `h3100-sim --bench` prints what they cost
 * per written 4 KiB of a full drive (docs/design/calibration.md).
 */
#define FTL_RMAP_YOUNG_SHARE 32u
#define FTL_RMAP_LIST_SHARE 3u
#define FTL_RMAP_SPARES 2u            /* freed maps kept for reuse */

typedef struct FtlRmap {
    uint32_t *young;                  /* ring, oldest at head */
    uint32_t head;
    uint32_t len;
    uint32_t young_cap;
    uint32_t list_share;              /* FTL_RMAP_LIST_SHARE; 0: none */
    uint32_t lists;                   /* superblocks holding lpns */
    uint32_t *spare[FTL_RMAP_SPARES];
    uint32_t nspare;
    uint64_t scans;                   /* of the logical map, to build */
    uint64_t built;                   /* lists built by them */
} FtlRmap;

typedef struct FtlTrack FtlTrack;

typedef struct Ftl {
    const H3100Config *cfg;
    uint64_t user_slots;
    uint64_t sps;                     /* slots per superblock */
    uint32_t spu;                     /* slots per program unit */
    uint32_t spp;                     /* slots per NAND page */
    uint32_t dies;
    uint32_t planes;                  /* per die */
    uint32_t nsb;
    /* the same, as dividers of physical slot numbers (divide.h) */
    Divider by_sps;
    Divider by_spu;
    Divider by_spp;
    Divider by_dies;
    Divider by_planes;
    Divider by_ptype;                 /* slots of one page type in a unit */
    uint64_t nchunks;
    uint32_t **l2p;                   /* chunked, allocated on first write */
    uint64_t mapped;                  /* slots with a mapping */
    Superblock *sb;
    uint16_t *sb_block;               /* [sb][die * planes + plane] */
    uint32_t *free_list;
    uint32_t nfree;
    uint32_t open[FTL_STREAMS];       /* open superblock per stream */
    /* reclaim */
    uint32_t victim;
    uint64_t cursor;                  /* next slot of the victim to scan */
    uint64_t credit;                  /* host slots not yet paid for */
    uint64_t ratio_num;               /* moves per ratio_den host slots */
    uint64_t ratio_den;
    uint64_t last_read_page;          /* page reclaim read last */
    BadBlocks bb;
    Rng rng;
    FtlHooks hooks;
    FtlStats stats;
    FtlRmap rmap;
    uint64_t sb_bytes;                /* bytes of reverse maps held */
    uint64_t sb_bytes_peak;           /* the most ever held at once */
    bool out_of_space;                /* nowhere left to write: read-only */
    FtlTrack *track;                  /* changes since handed out, or NULL */
} Ftl;

bool ftl_init(Ftl *f, const H3100Config *cfg, GError **errp);
void ftl_destroy(Ftl *f);
void ftl_set_hooks(Ftl *f, const FtlHooks *hooks);

/* Host operations, one 4 KiB slot at a time (trims also by range). */
/* false: no space left (too many bad blocks); the drive is read-only */
bool ftl_write(Ftl *f, uint64_t lpn, uint32_t stream);
void ftl_trim(Ftl *f, uint64_t lpn);
void ftl_trim_range(Ftl *f, uint64_t lpn, uint64_t n);
void ftl_forget_all(Ftl *f);          /* format: every slot unmapped */
void ftl_erase_all(Ftl *f);           /* sanitize: and every block erased */

static inline uint32_t ftl_lookup(const Ftl *f, uint64_t lpn)
{
    const uint32_t *chunk = f->l2p[lpn >> FTL_CHUNK_SHIFT];

    return chunk ? chunk[lpn & (FTL_CHUNK_SLOTS - 1)] : FTL_UNMAPPED;
}

/*
 * Start fetching @p's cache line.  An asm statement, because GCC judges
 * a helper that only calls __builtin_prefetch free of side effects and
 * drops calls to it.
 */
static inline void ftl_prefetch_line(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p);
#endif
}

static inline void ftl_prefetch(const Ftl *f, uint64_t lpn)
{
    const uint32_t *chunk = f->l2p[lpn >> FTL_CHUNK_SHIFT];

    if (chunk) {
        ftl_prefetch_line(&chunk[lpn & (FTL_CHUNK_SLOTS - 1)]);
    }
}

/* Is @slot of superblock @sbi, which holds a reverse map, still valid? */
static inline bool ftl_slot_valid(const Ftl *f, uint32_t sbi, uint64_t slot)
{
    uint32_t lpn = f->sb[sbi].p2l[slot];

    return lpn != FTL_UNMAPPED &&
           ftl_lookup(f, lpn) == (uint64_t)sbi * f->sps + slot;
}

/* Where a physical slot is. */
typedef struct FtlAddr {
    uint32_t sb;
    uint32_t slot;
    uint32_t unit;
    uint32_t die;
    uint32_t plane;
    uint32_t ptype;
} FtlAddr;

FtlAddr ftl_addr(const Ftl *f, uint64_t ppn);

/* Has the unit at @a been handed to the NAND yet? */
bool ftl_unit_is_full(const Ftl *f, const FtlAddr *a);

/* Reclaim (gc.c). */
void ftl_gc_pace(Ftl *f);
/* Reclaim until a host stream may open a superblock; false if it can't */
bool ftl_gc_make_room(Ftl *f);
bool ftl_gc_idle_wanted(const Ftl *f);
void ftl_gc_step(Ftl *f, uint32_t slots);

/* Map internals shared by ftl.c and gc.c (ftl_map.c). */
void ftl_map_set(Ftl *f, uint64_t lpn, uint32_t ppn);
void ftl_invalidate(Ftl *f, uint32_t ppn);
uint64_t ftl_place(Ftl *f, uint32_t stream, uint64_t lpn);

/* Reverse maps (ftl_rmap.c). */
void ftl_rmap_init(Ftl *f);
void ftl_rmap_destroy(Ftl *f);
/* @sb opens: it holds a map from now, filled as it is written. */
void ftl_rmap_open(Ftl *f, uint32_t sb);
/* @sb is full: its map, if it has one, joins the young ring. */
void ftl_rmap_closed(Ftl *f, uint32_t sb);
/* @sb, about to be reclaimed, holds its map: built now if need be. */
void ftl_rmap_ensure(Ftl *f, uint32_t sb);
/*
 * The lpns of @sb's list (RMAP_LIST) into @lpns, a new array; how many,
 * or UINT32_MAX if the list is malformed.
 */
uint32_t ftl_rmap_list(const Ftl *f, uint32_t sb, uint32_t **lpns);
/* @sb was erased or its data dropped: it holds no map any more. */
void ftl_rmap_drop(Ftl *f, uint32_t sb);

/* Free superblocks and wear (wear.c); FTL_NO_SB when none is left. */
uint32_t ftl_take_free(Ftl *f, bool coldest);
void ftl_put_free(Ftl *f, uint32_t sb);
uint32_t ftl_pick_wear_victim(const Ftl *f);
void ftl_erase_counts(const Ftl *f, uint32_t *min, uint32_t *max,
                      double *avg);

/* Bad blocks (badblock.c). */
bool bb_init(Ftl *f, GError **errp);
void bb_destroy(BadBlocks *bb);
/* Erase @sb's blocks: count wear, replace blocks that fail. */
bool bb_erase_superblock(Ftl *f, uint32_t sb);
void bb_age_superblock(Ftl *f, uint32_t sb, uint32_t erases);
uint32_t bb_available_spare_pct(const BadBlocks *bb);
void bb_scan_wear_range(BadBlocks *bb);

/* Tracking for live migration (ftl_track.c); the marks cost one test
 * while nothing tracks. */
void ftl_track_start(Ftl *f);
void ftl_track_stop(Ftl *f);
uint64_t ftl_track_pending(const Ftl *f);
/* The next due item (h3100/migrate.h), no longer due; false if none. */
typedef struct H3100MigItem H3100MigItem;
bool ftl_track_next(Ftl *f, H3100MigItem *it);
void ftl_track_mark_l2p(Ftl *f, uint64_t lpn);
void ftl_track_mark_chunk(Ftl *f, uint64_t chunk, bool freed);

static inline void ftl_track_l2p(Ftl *f, uint64_t lpn)
{
    if (G_UNLIKELY(f->track)) {
        ftl_track_mark_l2p(f, lpn);
    }
}

/* Memory the FTL holds, in bytes; and the same with its reverse maps at
 * the most they ever held at once. */
uint64_t ftl_memory_bytes(const Ftl *f);
uint64_t ftl_memory_peak_bytes(const Ftl *f);

/*
 * Check every invariant of the FTL (superblocks and their tables, open
 * superblocks, reclaim, free list, blocks, the map); on failure say which
 * in @why.  Safe on any contents (ftl_check.c says what it assumes).
 */
bool ftl_check(const Ftl *f, GString *why);
/*
 * The same but the map's contents: O(superblocks x planes + blocks).
 * What the map must hold (each mapped lpn at a written slot of a
 * superblock holding data, no slot named twice, per superblock as many as
 * it counts valid) is then the caller's to know: a migration receiver
 * counts it as the pages come (migrate_recv.c).
 */
bool ftl_check_tables(const Ftl *f, GString *why);
/*
 * What is wrong with @sb's state, stream and pointers, or NULL;
 * @has_map: it holds a reverse map (only one that holds data may).
 */
const char *ftl_sb_shape_error(const Ftl *f, const Superblock *sb,
                               bool has_map);

#endif
