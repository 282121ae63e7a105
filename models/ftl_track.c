/*
 * The FTL's logical map in pages, for live migration: which pages
 * changed since they were handed out, and which map chunks were freed
 * since (a reset: what a receiver holds of them is from before).  The
 * reverse maps do not travel: they are a cache the receiver builds when
 * it needs them (ftl_rmap.c).
 *
 * A page is FTL_L2P_PAGE_SLOTS entries of the logical map; its mark is a
 * bit, set by the FTL as it writes (ftl_map.c, ftl.c) and cleared as
 * ftl_track_next() hands the page out.  A reset is handed out before any
 * page of what it resets, so a receiver that applies items in order ends
 * with the same map.
 */
#include <string.h>

#include "h3100/migrate.h"
#include "ftl.h"

struct FtlTrack {
    uint64_t *l2p_dirty;              /* bit per logical map page */
    uint64_t *l2p_reset;              /* bit per map chunk */
    uint64_t l2p_pages;
    uint64_t pages_due;
    uint64_t resets_due;
    uint64_t cursor;                  /* the page scan's */
};

static uint64_t *bits_new(uint64_t n)
{
    return g_new0(uint64_t, (n + 63) / 64);
}

static bool bit_set(uint64_t *map, uint64_t i)
{
    uint64_t m = 1ull << (i % 64);
    bool was = map[i / 64] & m;

    map[i / 64] |= m;
    return !was;
}

static bool bit_clear(uint64_t *map, uint64_t i)
{
    uint64_t m = 1ull << (i % 64);
    bool was = map[i / 64] & m;

    map[i / 64] &= ~m;
    return was;
}

/* The first set bit at or after @from, below @n; @n if none. */
static uint64_t bit_next(const uint64_t *map, uint64_t from, uint64_t n)
{
    uint64_t w = from / 64;
    uint64_t word;

    if (from >= n) {
        return n;
    }
    word = map[w] & (~0ull << (from % 64));
    while (!word) {
        if (++w >= (n + 63) / 64) {
            return n;
        }
        word = map[w];
    }
    return MIN(n, w * 64 + (uint64_t)__builtin_ctzll(word));
}

static void mark_page(FtlTrack *t, uint64_t *map, uint64_t i)
{
    t->pages_due += bit_set(map, i);
}

void ftl_track_mark_l2p(Ftl *f, uint64_t lpn)
{
    mark_page(f->track, f->track->l2p_dirty, lpn >> FTL_L2P_PAGE_SHIFT);
}

/* A chunk was made (every page due: a receiver's copy is older) or freed. */
void ftl_track_mark_chunk(Ftl *f, uint64_t chunk, bool freed)
{
    FtlTrack *t = f->track;

    for (uint64_t p = chunk * FTL_CHUNK_PAGES; p < (chunk + 1) * FTL_CHUNK_PAGES;
         p++) {
        if (freed) {
            t->pages_due -= bit_clear(t->l2p_dirty, p);
        } else {
            mark_page(t, t->l2p_dirty, p);
        }
    }
    if (freed) {
        t->resets_due += bit_set(t->l2p_reset, chunk);
    }
}

/* Everything that holds data is due once. */
void ftl_track_start(Ftl *f)
{
    FtlTrack *t;

    ftl_track_stop(f);
    t = g_new0(FtlTrack, 1);
    t->l2p_pages = f->nchunks * FTL_CHUNK_PAGES;
    t->l2p_dirty = bits_new(t->l2p_pages);
    t->l2p_reset = bits_new(f->nchunks);
    f->track = t;
    for (uint64_t c = 0; c < f->nchunks; c++) {
        if (f->l2p[c]) {
            ftl_track_mark_chunk(f, c, false);
        }
    }
}

void ftl_track_stop(Ftl *f)
{
    FtlTrack *t = f->track;

    if (t) {
        g_free(t->l2p_dirty);
        g_free(t->l2p_reset);
        g_free(t);
        f->track = NULL;
    }
}

uint64_t ftl_track_pending(const Ftl *f)
{
    return f->track ? f->track->pages_due + f->track->resets_due : 0;
}

/* A page of the logical map from @src (NULL: a chunk not in use). */
static void page_copy(H3100MigItem *it, const uint32_t *src)
{
    bool fill = true;

    for (uint64_t i = 0; src && i < FTL_L2P_PAGE_SLOTS && fill; i++) {
        fill = src[i] == FTL_UNMAPPED;
    }
    it->fill = fill;
    if (!fill) {
        memcpy(it->data, src, FTL_L2P_PAGE_SLOTS * sizeof(uint32_t));
        memset(it->data + FTL_L2P_PAGE_SLOTS * sizeof(uint32_t), 0xff,
               H3100_MIG_PAGE_BYTES - FTL_L2P_PAGE_SLOTS * sizeof(uint32_t));
    }
}

static bool next_reset(Ftl *f, H3100MigItem *it)
{
    FtlTrack *t = f->track;
    uint64_t i = bit_next(t->l2p_reset, 0, f->nchunks);

    if (i == f->nchunks) {
        return false;
    }
    bit_clear(t->l2p_reset, i);
    t->resets_due--;
    it->kind = H3100_MIG_L2P_RESET;
    it->index = i;
    it->fill = true;
    return true;
}

/* Logical-map page @p into @it. */
static void take_page(Ftl *f, uint64_t p, H3100MigItem *it)
{
    FtlTrack *t = f->track;
    const uint32_t *chunk = f->l2p[p / FTL_CHUNK_PAGES];

    bit_clear(t->l2p_dirty, p);
    it->kind = H3100_MIG_L2P;
    it->index = p;
    page_copy(it, chunk ? chunk + (p % FTL_CHUNK_PAGES) * FTL_L2P_PAGE_SLOTS
                        : NULL);
    t->pages_due--;
}

bool ftl_track_next(Ftl *f, H3100MigItem *it)
{
    FtlTrack *t = f->track;
    uint64_t p;

    if (!t || (!t->resets_due && !t->pages_due)) {
        return false;
    }
    if (t->resets_due && next_reset(f, it)) {
        return true;
    }
    for (unsigned pass = 0; pass < 2; pass++) {
        p = bit_next(t->l2p_dirty, pass ? 0 : t->cursor, t->l2p_pages);
        if (p < t->l2p_pages) {
            t->cursor = p + 1;
            take_page(f, p, it);
            return true;
        }
    }
    t->pages_due = 0;                 /* unreachable: the count is exact */
    return false;
}
