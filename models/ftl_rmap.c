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
 *   - a victim without one gets it by one pass over the logical map,
 *     which lists, for the same cost, the lpns of the closed superblocks
 *     with the fewest valid slots (greedy reclaim's next victims), as many
 *     as a list_share-th of the slots mapped;
 *   - a victim with a list has its map built from it, one look-up in the
 *     logical map per lpn.
 *
 * A list is several times smaller than a map: it names only the slots
 * valid when it was built, which in reclaim's next victims are a third to
 * a half of them, in about 2 bytes each (FtlLpnList), so one pass serves
 * several times more victims than full maps of the same memory would.
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

void ftl_rmap_init(Ftl *f)
{
    FtlRmap *r = &f->rmap;

    memset(r, 0, sizeof(*r));
    r->young_cap = MAX(1u, f->nsb / FTL_RMAP_YOUNG_SHARE);
    r->list_share = FTL_RMAP_LIST_SHARE;
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
    f->sb_bytes_peak = MAX(f->sb_bytes_peak, f->sb_bytes);
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

void ftl_rmap_closed(Ftl *f, uint32_t sbi)
{
    FtlRmap *r = &f->rmap;
    Superblock *sb = &f->sb[sbi];

    if (sb->rmap != RMAP_OPEN) {
        return;                       /* opened before a load: no map */
    }
    if (r->len == r->young_cap) {
        /* the oldest leaves the ring, and its map goes: a pass lists
         * it if it is among the next victims */
        uint32_t oldest = young_at(r, 0);

        r->head = (r->head + 1) % r->young_cap;
        r->len--;
        map_put(f, oldest);
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

/*
 * FtlLpnList: a superblock's lpns in increasing order, each as its
 * distance from the one before (the first from 0) in 16 bits, or
 * LPNS_ESCAPE and then the distance in two 16-bit halves, high first.  A
 * pass over the logical map meets the lpns in order, so it only appends;
 * in reclaim's next victims they are a few thousand apart, so nearly all
 * take 2 bytes.
 */
#define LPNS_ESCAPE 0xffffu

/* a pass takes the logical map 64 entries at a time */
G_STATIC_ASSERT(FTL_CHUNK_SLOTS % 64 == 0);

static void lpns_resize(Ftl *f, Superblock *sb, uint32_t cap)
{
    f->sb_bytes += (uint64_t)cap * sizeof(uint16_t);
    f->sb_bytes -= (uint64_t)sb->lpns_cap * sizeof(uint16_t);
    f->sb_bytes_peak = MAX(f->sb_bytes_peak, f->sb_bytes);
    sb->lpns = g_renew(uint16_t, sb->lpns, cap);
    sb->lpns_cap = cap;
}

static void lpns_append(Ftl *f, Superblock *sb, uint32_t *last, uint32_t lpn)
{
    uint32_t gap = lpn - *last;

    if (sb->lpns_len + 3 > sb->lpns_cap) {
        lpns_resize(f, sb, sb->lpns_cap + sb->lpns_cap / 2 + 16);
    }
    if (gap < LPNS_ESCAPE) {
        sb->lpns[sb->lpns_len++] = (uint16_t)gap;
    } else {
        sb->lpns[sb->lpns_len++] = LPNS_ESCAPE;
        sb->lpns[sb->lpns_len++] = (uint16_t)(gap >> 16);
        sb->lpns[sb->lpns_len++] = (uint16_t)gap;
    }
    *last = lpn;
}

/*
 * @sb's lpns into @out (room for lpns_len of them); how many, or
 * UINT32_MAX if the list is cut short inside an escape.
 */
static uint32_t lpns_decode(const Superblock *sb, uint32_t *out)
{
    uint32_t n = 0, lpn = 0;

    for (uint32_t i = 0; i < sb->lpns_len; i++) {
        uint32_t gap = sb->lpns[i];

        if (gap == LPNS_ESCAPE) {
            if (i + 2 >= sb->lpns_len) {
                return UINT32_MAX;
            }
            gap = (uint32_t)sb->lpns[i + 1] << 16 | sb->lpns[i + 2];
            i += 2;
        }
        lpn += gap;
        out[n++] = lpn;
    }
    return n;
}

uint32_t ftl_rmap_list(const Ftl *f, uint32_t sbi, uint32_t **lpns)
{
    const Superblock *sb = &f->sb[sbi];

    *lpns = g_new(uint32_t, sb->lpns_len + 1);
    return lpns_decode(sb, *lpns);
}

static void lpns_free(Ftl *f, uint32_t sbi)
{
    Superblock *sb = &f->sb[sbi];

    lpns_resize(f, sb, 0);            /* frees it: sb->lpns is NULL */
    sb->lpns_len = 0;
    sb->rmap = RMAP_NONE;
    f->rmap.lists--;
}

void ftl_rmap_drop(Ftl *f, uint32_t sbi)
{
    Superblock *sb = &f->sb[sbi];

    if (sb->rmap == RMAP_LIST) {
        lpns_free(f, sbi);
        return;
    }
    if (!sb->p2l) {
        return;
    }
    if (sb->rmap == RMAP_YOUNG) {
        young_remove(&f->rmap, sbi);
    }
    map_put(f, sbi);
}

/*
 * Where a pass appends a listed superblock's lpns, a copy of its list's
 * ends kept at hand; sink_of[] names a superblock's sink, or 0 (none)
 * for those not listed and for FTL_UNMAPPED's quotient.
 */
typedef struct Sink {
    uint16_t *at;
    uint32_t len;
    uint32_t cap;
    uint32_t last;
    uint32_t sb;
} Sink;

/* Append @lpn to @k's superblock's list. */
static inline void sink_add(Ftl *f, Sink *k, uint32_t lpn)
{
    uint32_t gap = lpn - k->last;
    Superblock *sb;

    if (G_LIKELY(gap < LPNS_ESCAPE && k->len + 3 <= k->cap)) {
        k->at[k->len++] = (uint16_t)gap;
        k->last = lpn;
        return;
    }
    sb = &f->sb[k->sb];
    sb->lpns_len = k->len;
    lpns_append(f, sb, &k->last, lpn);
    k->at = sb->lpns;
    k->len = sb->lpns_len;
    k->cap = sb->lpns_cap;
}

/*
 * A superblock's slots are whole granules of 2^shift, the largest power
 * of two sps is a multiple of: a bit per granule says whether a listed
 * superblock holds it, and a bitmap of up to this many bytes stays in
 * the caches while the logical map streams past.  Most entries then cost
 * a shift and a bit test; only those listed are divided.
 */
#define GRANULE_BITMAP_MAX (512u << 10)

typedef struct Filter {
    uint32_t shift;
    uint64_t *bits;                   /* NULL: every entry is divided */
} Filter;

static Filter filter_new(const Ftl *f, const bool *listed)
{
    Filter g = { .shift = (uint32_t)__builtin_ctzll(f->sps) };
    uint64_t granules = (UINT64_C(1) << 32) >> g.shift;
    uint64_t per_sb = f->sps >> g.shift;

    if (granules / 8 > GRANULE_BITMAP_MAX) {
        return g;
    }
    g.bits = g_new0(uint64_t, granules / 64 + 1);
    for (uint32_t sb = 0; sb < f->nsb; sb++) {
        for (uint64_t i = 0; listed[sb] && i < per_sb; i++) {
            uint64_t k = sb * per_sb + i;

            g.bits[k / 64] |= UINT64_C(1) << (k % 64);
        }
    }
    return g;
}

/*
 * Which of 64 entries of the logical map from @map a listed superblock
 * holds, a bit each, by a loop with no branch: which ones are listed is
 * as good as random, and a branch on each would cost most of the pass.
 * FTL_UNMAPPED is in no superblock's granules, and past the last one.
 */
static uint64_t listed_mask(const uint32_t *map, const Filter *g,
                            const Divider *q, const uint32_t *sink_of)
{
    uint64_t mask = 0;

    for (uint32_t i = 0; g->bits && i < 64; i++) {
        uint32_t k = map[i] >> g->shift;

        mask |= ((g->bits[k >> 6] >> (k & 63)) & 1) << i;
    }
    for (uint32_t i = 0; !g->bits && i < 64; i++) {
        mask |= (uint64_t)(sink_of[divide(q, map[i])] != 0) << i;
    }
    return mask;
}

/*
 * Append to the lists of the superblocks @listed names every lpn the
 * logical map places in them, in one pass in its order.
 */
static void scan_into(Ftl *f, const bool *listed)
{
    const Divider *q = &f->by_sps;
    Filter g = filter_new(f, listed);
    /* every quotient of a 32-bit ppn, FTL_UNMAPPED's among them */
    uint32_t quotients = divide(q, UINT32_MAX) + 1;
    g_autofree uint32_t *sink_of = g_new0(uint32_t, quotients);
    g_autofree Sink *sink = g_new0(Sink, f->nsb + 1);
    uint32_t nsink = 1;

    for (uint32_t i = 0; i < f->nsb; i++) {
        if (listed[i]) {
            sink_of[i] = nsink;
            sink[nsink++] = (Sink) { .at = f->sb[i].lpns,
                                     .cap = f->sb[i].lpns_cap, .sb = i };
        }
    }
    for (uint64_t c = 0; c < f->nchunks; c++) {
        const uint32_t *chunk = f->l2p[c];
        uint32_t base = (uint32_t)(c << FTL_CHUNK_SHIFT);

        for (uint32_t i = 0; chunk && i < FTL_CHUNK_SLOTS; i += 64) {
            uint64_t mask = listed_mask(chunk + i, &g, q, sink_of);

            for (; mask; mask &= mask - 1) {
                uint32_t j = i + (uint32_t)__builtin_ctzll(mask);

                sink_add(f, &sink[sink_of[divide(q, chunk[j])]], base + j);
            }
        }
    }
    for (uint32_t j = 1; j < nsink; j++) {
        f->sb[sink[j].sb].lpns_len = sink[j].len;
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

/* @sbi will hold a list: empty, with room for its valid slots. */
static void list_start(Ftl *f, uint32_t sbi)
{
    Superblock *sb = &f->sb[sbi];

    lpns_resize(f, sb, sb->valid + sb->valid / 16 + 16);
    sb->lpns_len = 0;
    sb->rmap = RMAP_LIST;
    f->rmap.lists++;
}

/*
 * One pass over the logical map lists @v, and the closed superblocks
 * without a map with the fewest valid slots, as many slots as a
 * list_share-th of those mapped; the lists of the pass before go.
 */
static void build_lists(Ftl *f, uint32_t v)
{
    FtlRmap *r = &f->rmap;
    g_autofree Candidate *cand = g_new(Candidate, f->nsb);
    g_autofree bool *listed = g_new0(bool, f->nsb);
    uint64_t budget = r->list_share ? f->mapped / r->list_share : 0;
    uint64_t used = f->sb[v].valid;
    uint32_t n = 0, built = 1;

    for (uint32_t i = 0; i < f->nsb; i++) {
        if (f->sb[i].rmap == RMAP_LIST) {
            lpns_free(f, i);
        }
        if (i != v && f->sb[i].state == SB_CLOSED && !f->sb[i].p2l) {
            cand[n].valid = f->sb[i].valid;
            cand[n++].sb = i;
        }
    }
    qsort(cand, n, sizeof(*cand), by_valid);
    listed[v] = true;
    list_start(f, v);
    for (uint32_t j = 0; j < n && used + cand[j].valid <= budget; j++) {
        used += cand[j].valid;
        listed[cand[j].sb] = true;
        list_start(f, cand[j].sb);
        built++;
    }
    scan_into(f, listed);
    for (uint32_t i = 0; i < f->nsb; i++) {
        if (listed[i]) {
            lpns_resize(f, &f->sb[i], MAX(f->sb[i].lpns_len, 1u));
        }
    }
    r->scans++;
    r->built += built;
}

#define BUILD_PREFETCH 16u

/*
 * @sbi's map from its list: each lpn the logical map still places in it
 * names its slot.  The lpns rise, so their map entries are fetched a
 * little ahead.
 */
static void map_from_list(Ftl *f, uint32_t sbi)
{
    Superblock *sb = &f->sb[sbi];
    uint32_t base = sbi * (uint32_t)f->sps;
    g_autofree uint32_t *lpn = NULL;
    uint32_t n = ftl_rmap_list(f, sbi, &lpn);
    uint32_t *p2l = map_get(f);

    memset(p2l, 0xff, map_bytes(f));
    for (uint32_t i = 0; n != UINT32_MAX && i < n; i++) {
        uint32_t slot;

        if (i + BUILD_PREFETCH < n) {
            ftl_prefetch(f, lpn[i + BUILD_PREFETCH]);
        }
        /* FTL_UNMAPPED - base is past every slot: base + sps < 2^32 */
        slot = ftl_lookup(f, lpn[i]) - base;
        if (slot < f->sps) {
            p2l[slot] = lpn[i];
        }
    }
    lpns_free(f, sbi);
    sb->p2l = p2l;
    sb->rmap = RMAP_BUILT;
}

void ftl_rmap_ensure(Ftl *f, uint32_t v)
{
    if (f->sb[v].p2l) {
        return;
    }
    if (f->sb[v].rmap != RMAP_LIST) {
        build_lists(f, v);
    }
    map_from_list(f, v);
}
