/*
 * The FTL's maps in pages, for live migration: which pages changed since
 * they were handed out, and which map chunks and reverse maps were freed
 * since (a reset: what a receiver holds of them is from before).
 *
 * A page is FTL_L2P_PAGE_SLOTS entries of the logical map, or
 * FTL_PAGE_SLOTS of a superblock's reverse map; their marks are bits,
 * set by the FTL as it writes (ftl_map.c, ftl.c) and cleared as
 * ftl_track_next() hands the page out.  A reset is handed out before any
 * page of what it resets, so a receiver that applies items in order ends
 * with the same maps.  The entries of a reverse map past its superblock's
 * write pointer are garbage to the FTL: they go out as unmapped.
 */
#include <string.h>

#include "h3100/migrate.h"
#include "ftl.h"

struct FtlTrack {
    uint64_t *l2p_dirty;              /* bit per logical map page */
    uint64_t *p2l_dirty;              /* bit per reverse-map page */
    uint64_t *l2p_reset;              /* bit per map chunk */
    uint64_t *p2l_reset;              /* bit per superblock */
    uint64_t l2p_pages;
    uint64_t p2l_pages;
    uint32_t p2l_pps;                 /* reverse-map pages per superblock */
    uint64_t pages_due;
    uint64_t resets_due;
    uint64_t cursor;                  /* page scan: p2l pages, then l2p */
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

static uint64_t p2l_page_of(const FtlTrack *t, uint32_t sb, uint64_t slot)
{
    return (uint64_t)sb * t->p2l_pps + (slot >> FTL_P2L_PAGE_SHIFT);
}

static void mark_page(FtlTrack *t, uint64_t *map, uint64_t i)
{
    t->pages_due += bit_set(map, i);
}

void ftl_track_mark_l2p(Ftl *f, uint64_t lpn)
{
    mark_page(f->track, f->track->l2p_dirty, lpn >> FTL_L2P_PAGE_SHIFT);
}

void ftl_track_mark_p2l(Ftl *f, uint32_t sb, uint64_t slot)
{
    mark_page(f->track, f->track->p2l_dirty, p2l_page_of(f->track, sb, slot));
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

void ftl_track_mark_sb_freed(Ftl *f, uint32_t sb)
{
    FtlTrack *t = f->track;

    for (uint64_t p = p2l_page_of(t, sb, 0); p < p2l_page_of(t, sb + 1, 0);
         p++) {
        t->pages_due -= bit_clear(t->p2l_dirty, p);
    }
    t->resets_due += bit_set(t->p2l_reset, sb);
}

/* Everything that holds data is due once. */
void ftl_track_start(Ftl *f)
{
    FtlTrack *t;

    ftl_track_stop(f);
    t = g_new0(FtlTrack, 1);
    t->l2p_pages = f->nchunks * FTL_CHUNK_PAGES;
    t->p2l_pps = (f->sps + FTL_PAGE_SLOTS - 1) / FTL_PAGE_SLOTS;
    t->p2l_pages = (uint64_t)f->nsb * t->p2l_pps;
    t->l2p_dirty = bits_new(t->l2p_pages);
    t->p2l_dirty = bits_new(t->p2l_pages);
    t->l2p_reset = bits_new(f->nchunks);
    t->p2l_reset = bits_new(f->nsb);
    f->track = t;
    for (uint64_t c = 0; c < f->nchunks; c++) {
        if (f->l2p[c]) {
            ftl_track_mark_chunk(f, c, false);
        }
    }
    for (uint32_t i = 0; i < f->nsb; i++) {
        for (uint64_t s = 0; f->sb[i].p2l && s < f->sb[i].wp;
             s += FTL_PAGE_SLOTS) {
            ftl_track_mark_p2l(f, i, s);
        }
    }
}

void ftl_track_stop(Ftl *f)
{
    FtlTrack *t = f->track;

    if (t) {
        g_free(t->l2p_dirty);
        g_free(t->p2l_dirty);
        g_free(t->l2p_reset);
        g_free(t->p2l_reset);
        g_free(t);
        f->track = NULL;
    }
}

uint64_t ftl_track_pending(const Ftl *f)
{
    return f->track ? f->track->pages_due + f->track->resets_due : 0;
}

/* A page of @n entries from @src, unmapped from @valid on. */
static void page_copy(H3100MigItem *it, const uint32_t *src, uint64_t n,
                      uint64_t valid)
{
    uint64_t keep = MIN(n, valid);
    bool fill = true;

    for (uint64_t i = 0; i < keep && fill; i++) {
        fill = src[i] == FTL_UNMAPPED;
    }
    it->fill = fill;
    if (!fill) {
        memcpy(it->data, src, keep * sizeof(uint32_t));
        memset(it->data + keep * sizeof(uint32_t), 0xff,
               H3100_MIG_PAGE_BYTES - keep * sizeof(uint32_t));
    }
}

static bool next_reset(Ftl *f, H3100MigItem *it)
{
    FtlTrack *t = f->track;
    uint64_t i = bit_next(t->l2p_reset, 0, f->nchunks);

    if (i < f->nchunks) {
        it->kind = H3100_MIG_L2P_RESET;
    } else {
        i = bit_next(t->p2l_reset, 0, f->nsb);
        if (i == f->nsb) {
            return false;
        }
        it->kind = H3100_MIG_P2L_RESET;
    }
    bit_clear(it->kind == H3100_MIG_L2P_RESET ? t->l2p_reset : t->p2l_reset,
              i);
    t->resets_due--;
    it->index = i;
    it->fill = true;
    return true;
}

/* Page @p of the scan (reverse-map pages first) into @it. */
static void take_page(Ftl *f, uint64_t p, H3100MigItem *it)
{
    FtlTrack *t = f->track;

    if (p < t->p2l_pages) {
        uint32_t sb = p / t->p2l_pps;
        uint64_t first = (p % t->p2l_pps) * FTL_PAGE_SLOTS;
        const Superblock *s = &f->sb[sb];

        bit_clear(t->p2l_dirty, p);
        it->kind = H3100_MIG_P2L;
        it->index = p;
        /* a page with no table would have been unmarked when it went */
        page_copy(it, s->p2l ? s->p2l + first : NULL,
                  MIN(FTL_PAGE_SLOTS, f->sps - first),
                  s->p2l && s->wp > first ? s->wp - first : 0);
    } else {
        uint64_t lp = p - t->p2l_pages;
        const uint32_t *chunk = f->l2p[lp / FTL_CHUNK_PAGES];

        bit_clear(t->l2p_dirty, lp);
        it->kind = H3100_MIG_L2P;
        it->index = lp;
        page_copy(it, chunk ? chunk + (lp % FTL_CHUNK_PAGES) *
                  FTL_L2P_PAGE_SLOTS : NULL, FTL_L2P_PAGE_SLOTS,
                  chunk ? FTL_L2P_PAGE_SLOTS : 0);
    }
    t->pages_due--;
}

bool ftl_track_next(Ftl *f, H3100MigItem *it)
{
    FtlTrack *t = f->track;
    uint64_t total, p;

    if (!t || (!t->resets_due && !t->pages_due)) {
        return false;
    }
    if (t->resets_due && next_reset(f, it)) {
        return true;
    }
    total = t->p2l_pages + t->l2p_pages;
    for (unsigned pass = 0; pass < 2; pass++) {
        uint64_t from = pass ? 0 : t->cursor;

        p = bit_next(t->p2l_dirty, from, t->p2l_pages);
        if (p == t->p2l_pages) {
            uint64_t lfrom = from > t->p2l_pages ? from - t->p2l_pages : 0;

            p = t->p2l_pages + bit_next(t->l2p_dirty, lfrom, t->l2p_pages);
        }
        if (p < total) {
            t->cursor = p + 1;
            take_page(f, p, it);
            return true;
        }
    }
    t->pages_due = 0;                 /* unreachable: the count is exact */
    return false;
}
