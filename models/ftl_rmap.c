/*
 * Reverse maps: which lpn each slot of a superblock holds.
 *
 * Reclaim needs one for its victim only, to know what a valid slot holds
 * and so where its map entry is; the logical map alone says what is
 * valid.  Holding one for every superblock with data would cost 4 x
 * raw/user bytes per written slot (5.5 for the H3100), more than the
 * logical map itself, so they are a cache (see ftl.h, FtlRmapKind):
 *
 *   - an open superblock fills its map as it is written;
 *   - a closed one keeps it while it is among the young_cap most recently
 *     closed (a 32nd of the superblocks): hot data invalidates fast
 *     there, and reclaim takes such superblocks while they are young;
 *   - beyond that at most old_cap maps are kept (a tenth), for the
 *     superblocks with the fewest valid slots: greedy reclaim's next
 *     victims;
 *   - a victim without one gets it by one pass over the logical map,
 *     which builds, for the same cost, the maps of the old_cap closed
 *     superblocks with the fewest valid slots.
 *
 * A map names the lpn of every slot valid while it is held: an open
 * superblock's from its writes; a built one's from the logical map as it
 * was, and a closed superblock's slots only ever stop being valid.  So
 * the slots reclaim finds valid, and their order, are those of a map kept
 * for every superblock: which maps are held changes the model's speed and
 * memory, never its results.  Nothing of this is saved: a loaded drive
 * builds the maps it needs.
 */
#include <string.h>

#include "ftl.h"
#include "hugealloc.h"

#define NO_FILL UINT32_MAX

void ftl_rmap_init(Ftl *f)
{
    FtlRmap *r = &f->rmap;

    memset(r, 0, sizeof(*r));
    r->young_cap = MAX(1u, f->nsb / FTL_RMAP_YOUNG_SHARE);
    r->old_cap = MAX(1u, f->nsb / FTL_RMAP_OLD_SHARE);
    r->young = g_new(uint32_t, r->young_cap);
}

static uint64_t map_bytes(const Ftl *f)
{
    return f->sps * sizeof(uint32_t);
}

void ftl_rmap_destroy(Ftl *f)
{
    FtlRmap *r = &f->rmap;

    for (uint32_t i = 0; f->sb && i < f->nsb; i++) {
        ftl_rmap_drop(f, i);
    }
    while (r->nspare) {
        huge_free(r->spare[--r->nspare]);
        f->sb_bytes -= map_bytes(f);
    }
    g_free(r->young);
    r->young = NULL;
}

static uint32_t *map_get(Ftl *f)
{
    FtlRmap *r = &f->rmap;

    if (r->nspare) {
        return r->spare[--r->nspare];
    }
    f->sb_bytes += map_bytes(f);
    return huge_alloc(map_bytes(f));
}

/* @sb gives its map up; kept for reuse, allocations of 0.5-5 MB being
 * page faults on every page when they come from the kernel. */
static void map_put(Ftl *f, uint32_t sbi)
{
    FtlRmap *r = &f->rmap;
    Superblock *sb = &f->sb[sbi];

    if (r->nspare < FTL_RMAP_SPARES) {
        r->spare[r->nspare++] = sb->p2l;
    } else {
        huge_free(sb->p2l);
        f->sb_bytes -= map_bytes(f);
    }
    sb->p2l = NULL;
    sb->rmap = RMAP_NONE;
}

void ftl_rmap_open(Ftl *f, uint32_t sbi)
{
    Superblock *sb = &f->sb[sbi];

    if (!sb->p2l) {
        /* entries from the write pointer on are never read */
        sb->p2l = map_get(f);
    }
    sb->rmap = RMAP_OPEN;
}

static uint32_t young_at(const FtlRmap *r, uint32_t i)
{
    return r->young[(r->head + i) % r->young_cap];
}

/* The closed superblock holding an RMAP_OLD map with the most valid
 * slots, or FTL_NO_SB. */
static uint32_t fullest_old(const Ftl *f)
{
    uint32_t best = FTL_NO_SB;

    for (uint32_t i = 0; i < f->nsb; i++) {
        const Superblock *sb = &f->sb[i];

        if (sb->rmap == RMAP_OLD && sb->state == SB_CLOSED &&
            (best == FTL_NO_SB || sb->valid > f->sb[best].valid)) {
            best = i;
        }
    }
    return best;
}

/*
 * @sbi leaves the young ring: its map stays if there is room among the
 * old ones, or if it has fewer valid slots than the fullest of them,
 * which then gives its own up.
 */
static void demote(Ftl *f, uint32_t sbi)
{
    FtlRmap *r = &f->rmap;
    Superblock *sb = &f->sb[sbi];
    uint32_t w;

    sb->rmap = RMAP_OLD;
    r->old++;
    if (r->old <= r->old_cap || sb->state != SB_CLOSED) {
        return;                       /* a victim keeps it until erased */
    }
    w = fullest_old(f);
    map_put(f, w);
    r->old--;
}

void ftl_rmap_closed(Ftl *f, uint32_t sbi)
{
    FtlRmap *r = &f->rmap;
    Superblock *sb = &f->sb[sbi];

    if (sb->rmap != RMAP_OPEN) {
        return;                       /* opened before a load: no map */
    }
    if (r->len == r->young_cap) {
        uint32_t oldest = young_at(r, 0);

        r->head = (r->head + 1) % r->young_cap;
        r->len--;
        demote(f, oldest);
    }
    r->young[(r->head + r->len++) % r->young_cap] = sbi;
    sb->rmap = RMAP_YOUNG;
}

static void young_remove(FtlRmap *r, uint32_t sbi)
{
    uint32_t i = 0;

    while (i < r->len && young_at(r, i) != sbi) {
        i++;
    }
    for (; i + 1 < r->len; i++) {
        r->young[(r->head + i) % r->young_cap] = young_at(r, i + 1);
    }
    r->len--;
}

void ftl_rmap_drop(Ftl *f, uint32_t sbi)
{
    Superblock *sb = &f->sb[sbi];

    if (!sb->p2l) {
        return;
    }
    if (sb->rmap == RMAP_YOUNG) {
        young_remove(&f->rmap, sbi);
    } else if (sb->rmap == RMAP_OLD) {
        f->rmap.old--;
    }
    map_put(f, sbi);
}

/*
 * n / d for every 32-bit n, by one multiply (Lemire, Kaser, Kurz:
 * "Faster remainder by direct computation", 2019), d >= 2.  The pass
 * over the logical map divides every entry, and a hardware division
 * would be most of its time.
 */
typedef struct Divider {
    uint32_t d;
    uint64_t magic;
} Divider;

static Divider divider(uint32_t d)
{
    Divider q = { d, UINT64_MAX / d + 1 };

    return q;
}

static inline uint32_t divide(const Divider *q, uint32_t n)
{
#ifdef __SIZEOF_INT128__
    return (uint32_t)(((unsigned __int128)q->magic * n) >> 64);
#else
    return n / q->d;
#endif
}

/*
 * A superblock's slots are whole granules of 2^shift, the largest power
 * of two sps is a multiple of: a bit per granule says whether the pass
 * fills its slots, and a bitmap of up to this many bytes stays in the
 * caches while the logical map streams past.  Most entries then cost a
 * shift and a bit test; only those it fills are divided.
 */
#define GRANULE_BITMAP_MAX (512u << 10)

typedef struct Filter {
    uint32_t shift;
    uint64_t *bits;                   /* NULL: every entry is divided */
} Filter;

static Filter filter_new(const Ftl *f, const uint32_t *fill)
{
    Filter g = { .shift = (uint32_t)__builtin_ctzll(f->sps) };
    uint64_t granules = (UINT64_C(1) << 32) >> g.shift;
    uint64_t per_sb = f->sps >> g.shift;

    if (granules / 8 > GRANULE_BITMAP_MAX) {
        return g;
    }
    g.bits = g_new0(uint64_t, granules / 64 + 1);
    for (uint32_t sb = 0; sb < f->nsb; sb++) {
        for (uint64_t i = 0; fill[sb] != NO_FILL && i < per_sb; i++) {
            uint64_t k = sb * per_sb + i;

            g.bits[k / 64] |= UINT64_C(1) << (k % 64);
        }
    }
    return g;
}

/* @lpn maps to @ppn: name it in @ppn's map, if the pass fills it. */
static void fill_one(const Ftl *f, const Divider *q, const uint32_t *fill,
                     uint32_t *const *maps, uint32_t ppn, uint32_t lpn)
{
    uint32_t sb = divide(q, ppn);
    uint32_t k = sb < f->nsb ? fill[sb] : NO_FILL;

    if (k != NO_FILL) {
        maps[k][ppn - sb * (uint32_t)f->sps] = lpn;
    }
}

/*
 * Fill the maps of the superblocks that @fill names (an index into
 * @maps, or NO_FILL) from the logical map, in one pass in its order.
 * FTL_UNMAPPED is in no superblock's granules, and past the last one.
 */
static void scan_into(const Ftl *f, const uint32_t *fill,
                      uint32_t *const *maps)
{
    Divider q = divider((uint32_t)f->sps);
    Filter g = filter_new(f, fill);
    const uint64_t *bits = g.bits;
    uint32_t shift = g.shift;

    for (uint64_t c = 0; c < f->nchunks; c++) {
        const uint32_t *chunk = f->l2p[c];
        uint32_t base = (uint32_t)(c << FTL_CHUNK_SHIFT);

        for (uint32_t i = 0; chunk && i < FTL_CHUNK_SLOTS; i++) {
            uint32_t k = chunk[i] >> shift;

            if (bits ? bits[k >> 6] & (UINT64_C(1) << (k & 63))
                     : chunk[i] != FTL_UNMAPPED) {
                fill_one(f, &q, fill, maps, chunk[i], base + i);
            }
        }
    }
    g_free(g.bits);
}

typedef struct Candidate {
    uint32_t valid;
    uint32_t sb;
} Candidate;

static int by_valid(const void *a, const void *b)
{
    const Candidate *x = a, *y = b;

    if (x->valid != y->valid) {
        return x->valid < y->valid ? -1 : 1;
    }
    return x->sb < y->sb ? -1 : x->sb > y->sb;
}

/* A map for @sbi, empty, to be filled by scan_into(). */
static uint32_t *map_new_old(Ftl *f, uint32_t sbi)
{
    Superblock *sb = &f->sb[sbi];

    sb->p2l = map_get(f);
    memset(sb->p2l, 0xff, map_bytes(f));
    sb->rmap = RMAP_OLD;
    f->rmap.old++;
    return sb->p2l;
}

void ftl_rmap_ensure(Ftl *f, uint32_t v)
{
    FtlRmap *r = &f->rmap;
    g_autofree Candidate *cand = NULL;
    g_autofree uint32_t *fill = NULL;
    g_autofree uint32_t **maps = NULL;
    uint32_t n = 0, keep, nfill = 0;

    if (f->sb[v].p2l) {
        return;
    }
    /* the old maps become those of the fewest valid closed superblocks */
    cand = g_new(Candidate, f->nsb);
    for (uint32_t i = 0; i < f->nsb; i++) {
        const Superblock *sb = &f->sb[i];

        if (i != v && sb->state == SB_CLOSED && sb->rmap != RMAP_YOUNG) {
            cand[n].valid = sb->valid;
            cand[n++].sb = i;
        }
    }
    qsort(cand, n, sizeof(*cand), by_valid);
    keep = MIN(n, r->old_cap - 1);
    for (uint32_t j = keep; j < n; j++) {
        if (f->sb[cand[j].sb].rmap == RMAP_OLD) {
            map_put(f, cand[j].sb);
            r->old--;
        }
    }
    fill = g_new(uint32_t, f->nsb);
    memset(fill, 0xff, f->nsb * sizeof(*fill));
    maps = g_new(uint32_t *, keep + 1);
    fill[v] = nfill;
    maps[nfill++] = map_new_old(f, v);
    for (uint32_t j = 0; j < keep; j++) {
        if (!f->sb[cand[j].sb].p2l) {
            fill[cand[j].sb] = nfill;
            maps[nfill++] = map_new_old(f, cand[j].sb);
        }
    }
    scan_into(f, fill, maps);
    r->scans++;
    r->built += nfill;
}
