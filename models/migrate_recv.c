/*
 * The receiving side of a migrated model (include/h3100/migrate.h).
 *
 * The pages fill a fresh model's logical map as they come; the core then
 * gives it everything else.  What the state loader proves by walking the
 * whole map once (ftl_check: every mapped lpn at a written slot of a
 * superblock with data, no slot named twice, each superblock pointed at
 * by as many lpns as it counts valid) is counted here entry by entry, so
 * that the check at the end costs no walk of the map:
 *
 *   claimed       a bit per slot of the drive: some lpn maps to it
 *   dups          slots more than one lpn maps to, and how many more
 *   pointed[sb]   lpns mapping into superblock sb
 *   beyond        lpns mapping past the drive's last slot
 *   mapped        logical-map entries that are not FTL_UNMAPPED
 *
 * Each page changes the counts of the entries it replaces.  A slot may be
 * named twice for a while (an lpn's page not yet sent again after its
 * slot was erased and written anew), so a slot's names are counted, not
 * just marked.  At the end no slot may be named twice, nothing past the
 * drive, a superblock holding data must be pointed at as often as it
 * counts valid and below its write pointer, one without data not at all.
 * That is ftl_check's verdict on the map, reached without reading it
 * again.
 *
 * Streams of older builds also carry reverse-map pages and resets
 * (H3100_MIG_P2L, _P2L_RESET): their places are checked and their
 * contents dropped, the reverse maps being a cache the model builds.
 */
#include <string.h>

#include "h3100/migrate.h"
#include "hugealloc.h"
#include "model_priv.h"

/*
 * Slots named twice at once.  Legitimately only those erased and written
 * again since their lpn's page was sent, until it is sent again: far
 * fewer than this share of the map.  More is a forged stream, refused
 * before it costs the destination more than a few bytes per lpn.
 */
#define RECV_DUPS_SHARE 8u

struct H3100MigRecv {
    H3100Model *m;
    uint64_t *claimed;
    GHashTable *dups;                 /* ppn -> names beyond the first */
    uint64_t dup_names;
    uint32_t *pointed;
    uint64_t beyond;
    uint64_t mapped;
    uint64_t slots;                   /* of the drive: nsb * sps */
    uint32_t p2l_pps;                 /* older streams' reverse-map pages */
    uint8_t *l2p_seen;                /* per logical-map page */
};

static bool recv_fail(GError **errp, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static bool recv_fail(GError **errp, const char *fmt, ...)
{
    va_list ap;
    char *msg;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(errp, H3100_ERROR, H3100_ERROR_CORRUPT,
                "migrated drive state is corrupt: %s", msg);
    g_free(msg);
    return false;
}

H3100MigRecv *h3100_mig_recv_new(const H3100Config *cfg, GError **errp)
{
    H3100MigRecv *r;
    H3100Model *m = h3100_model_new(cfg, errp);
    Ftl *f;

    if (!m) {
        return NULL;
    }
    f = &m->ftl;
    r = g_new0(H3100MigRecv, 1);
    r->m = m;
    r->slots = (uint64_t)f->nsb * f->sps;
    r->claimed = huge_alloc((r->slots + 63) / 64 * sizeof(uint64_t));
    memset(r->claimed, 0, (r->slots + 63) / 64 * sizeof(uint64_t));
    r->dups = g_hash_table_new(g_direct_hash, g_direct_equal);
    r->pointed = g_new0(uint32_t, f->nsb);
    r->p2l_pps = (f->sps + FTL_PAGE_SLOTS - 1) / FTL_PAGE_SLOTS;
    r->l2p_seen = g_new0(uint8_t, f->nchunks * FTL_CHUNK_PAGES);
    return r;
}

void h3100_mig_recv_free(H3100MigRecv *r)
{
    if (r) {
        h3100_model_free(r->m);
        huge_free(r->claimed);
        g_hash_table_destroy(r->dups);
        g_free(r->pointed);
        g_free(r->l2p_seen);
        g_free(r);
    }
}

static bool is_claimed(const H3100MigRecv *r, uint32_t ppn)
{
    return r->claimed[ppn / 64] & (1ull << (ppn % 64));
}

/*
 * One more lpn maps to @ppn.  GHashTable keys are pointers: a slot
 * number and a count fit one on the 64-bit hosts this builds on, and
 * count 0 is never stored.
 */
static void claim(H3100MigRecv *r, uint32_t ppn)
{
    gpointer key = GUINT_TO_POINTER(ppn);

    if (ppn >= r->slots) {
        r->beyond++;
        return;
    }
    r->pointed[ppn / (uint32_t)r->m->ftl.sps]++;
    if (!is_claimed(r, ppn)) {
        r->claimed[ppn / 64] |= 1ull << (ppn % 64);
        return;
    }
    g_hash_table_insert(r->dups, key, GUINT_TO_POINTER(
                        GPOINTER_TO_UINT(g_hash_table_lookup(r->dups, key)) +
                        1));
    r->dup_names++;
}

/* One lpn fewer maps to @ppn. */
static void unclaim(H3100MigRecv *r, uint32_t ppn)
{
    gpointer key = GUINT_TO_POINTER(ppn);
    guint more;

    if (ppn >= r->slots) {
        r->beyond--;
        return;
    }
    r->pointed[ppn / (uint32_t)r->m->ftl.sps]--;
    more = GPOINTER_TO_UINT(g_hash_table_lookup(r->dups, key));
    if (!more) {
        r->claimed[ppn / 64] &= ~(1ull << (ppn % 64));
        return;
    }
    if (more == 1) {
        g_hash_table_remove(r->dups, key);
    } else {
        g_hash_table_insert(r->dups, key, GUINT_TO_POINTER(more - 1));
    }
    r->dup_names--;
}

/* Logical-map entry @e becomes @ppn. */
static void set_l2p(H3100MigRecv *r, uint32_t *e, uint32_t ppn)
{
    if (*e != FTL_UNMAPPED) {
        r->mapped--;
        unclaim(r, *e);
    }
    *e = ppn;
    if (ppn != FTL_UNMAPPED) {
        r->mapped++;
        claim(r, ppn);
    }
}

static uint32_t *chunk_get(Ftl *f, uint64_t c)
{
    if (!f->l2p[c]) {
        f->l2p[c] = huge_alloc(FTL_CHUNK_SLOTS * sizeof(uint32_t));
        memset(f->l2p[c], 0xff, FTL_CHUNK_SLOTS * sizeof(uint32_t));
    }
    return f->l2p[c];
}

static void chunk_drop(H3100MigRecv *r, uint64_t c)
{
    Ftl *f = &r->m->ftl;
    uint32_t *chunk = f->l2p[c];

    if (!chunk) {
        return;
    }
    for (uint32_t i = 0; i < FTL_CHUNK_SLOTS; i++) {
        set_l2p(r, &chunk[i], FTL_UNMAPPED);
    }
    huge_free(chunk);
    f->l2p[c] = NULL;
    memset(r->l2p_seen + c * FTL_CHUNK_PAGES, 0, FTL_CHUNK_PAGES);
}

static const uint32_t unmapped_page[FTL_PAGE_SLOTS] = {
    [0 ... FTL_PAGE_SLOTS - 1] = FTL_UNMAPPED,
};

static const uint32_t *item_entries(const H3100MigItem *it)
{
    return it->fill ? unmapped_page : (const uint32_t *)it->data;
}

static bool recv_l2p(H3100MigRecv *r, const H3100MigItem *it, GError **errp)
{
    Ftl *f = &r->m->ftl;
    const uint32_t *e = item_entries(it);
    uint64_t c = it->index / FTL_CHUNK_PAGES;
    uint64_t first = it->index * FTL_L2P_PAGE_SLOTS;
    uint32_t *chunk;

    if (it->index >= f->nchunks * FTL_CHUNK_PAGES) {
        return recv_fail(errp, "map page %" PRIu64 " beyond the drive",
                         it->index);
    }
    chunk = chunk_get(f, c) + (first & (FTL_CHUNK_SLOTS - 1));
    for (uint32_t i = 0; i < FTL_L2P_PAGE_SLOTS; i++) {
        if (chunk[i] != e[i]) {
            set_l2p(r, &chunk[i], e[i]);
        }
    }
    r->l2p_seen[it->index] = 1;
    if (r->dup_names > f->user_slots / RECV_DUPS_SHARE) {
        return recv_fail(errp, "%" PRIu64 " lpns map to slots other lpns "
                         "map to", r->dup_names);
    }
    return true;
}

bool h3100_mig_recv_item(H3100MigRecv *r, const H3100MigItem *it,
                         GError **errp)
{
    Ftl *f = &r->m->ftl;

    switch (it->kind) {
    case H3100_MIG_L2P:
        return recv_l2p(r, it, errp);
    case H3100_MIG_P2L:
        if (it->index >= (uint64_t)f->nsb * r->p2l_pps) {
            return recv_fail(errp, "reverse-map page %" PRIu64 " beyond "
                             "the drive", it->index);
        }
        return true;
    case H3100_MIG_L2P_RESET:
        if (it->index >= f->nchunks) {
            return recv_fail(errp, "reset of map chunk %" PRIu64 " beyond "
                             "the drive", it->index);
        }
        chunk_drop(r, it->index);
        return true;
    case H3100_MIG_P2L_RESET:
        if (it->index >= f->nsb) {
            return recv_fail(errp, "reset of superblock %" PRIu64 " beyond "
                             "the drive", it->index);
        }
        return true;
    default:
        return recv_fail(errp, "unknown item kind %u", it->kind);
    }
}

/* The map as the core says it is used: a chunk in use came whole, a
 * chunk not in use goes. */
static bool recv_reconcile(H3100MigRecv *r, const uint8_t *chunk_has,
                           GString *why)
{
    Ftl *f = &r->m->ftl;

    for (uint64_t c = 0; c < f->nchunks; c++) {
        if (!chunk_has[c]) {
            chunk_drop(r, c);
            continue;
        }
        if (!f->l2p[c] || memchr(r->l2p_seen + c * FTL_CHUNK_PAGES, 0,
                                 FTL_CHUNK_PAGES)) {
            g_string_append_printf(why, "map chunk %" PRIu64 " in use, not "
                                   "received whole", c);
            return false;
        }
    }
    return true;
}

/* Is any slot of superblock @sbi in [@from, @to) named? */
static bool claimed_in(const H3100MigRecv *r, uint32_t sbi, uint64_t from,
                       uint64_t to)
{
    uint64_t p = (uint64_t)sbi * r->m->ftl.sps + from;
    uint64_t end = (uint64_t)sbi * r->m->ftl.sps + to;

    for (; p < end && p % 64; p++) {
        if (is_claimed(r, p)) {
            return true;
        }
    }
    for (; p + 64 <= end; p += 64) {
        if (r->claimed[p / 64]) {
            return true;
        }
    }
    for (; p < end; p++) {
        if (is_claimed(r, p)) {
            return true;
        }
    }
    return false;
}

/* ftl_check's verdict on the map, from the counts. */
static bool recv_counts_ok(H3100MigRecv *r, GString *why)
{
    Ftl *f = &r->m->ftl;

    if (r->beyond || r->dup_names) {
        g_string_append_printf(why, "%" PRIu64 " lpns map past the drive, "
                               "%" PRIu64 " to slots other lpns map to",
                               r->beyond, r->dup_names);
        return false;
    }
    for (uint32_t i = 0; i < f->nsb; i++) {
        const Superblock *sb = &f->sb[i];
        bool data = sb->state == SB_OPEN || sb->state == SB_CLOSED ||
                    sb->state == SB_VICTIM;
        uint32_t want = data ? sb->valid : 0;

        if (r->pointed[i] != want) {
            g_string_append_printf(why, "superblock %u counts %u valid "
                                   "slots, the map points at %u", i, want,
                                   r->pointed[i]);
            return false;
        }
        if (data && r->pointed[i] && sb->wp < f->sps &&
            claimed_in(r, i, sb->wp, f->sps)) {
            g_string_append_printf(why, "superblock %u: the map points past "
                                   "its %u written slots", i, sb->wp);
            return false;
        }
    }
    /* reclaim resumes at its cursor and erases what it passed */
    if (f->victim != FTL_NO_SB && r->pointed[f->victim] &&
        claimed_in(r, f->victim, 0, f->cursor)) {
        g_string_append_printf(why, "superblock %u: the map points at slots "
                               "of the victim reclaim has passed", f->victim);
        return false;
    }
    if (r->mapped != f->mapped) {
        g_string_append_printf(why, "%" PRIu64 " mapped lpns, counter %"
                               PRIu64, r->mapped, f->mapped);
        return false;
    }
    return true;
}

H3100Model *h3100_mig_recv_finish(H3100MigRecv *r, const void *core,
                                  size_t len, GError **errp)
{
    Ftl *f = &r->m->ftl;
    g_autoptr(GString) why = g_string_new(NULL);
    g_autofree uint8_t *sb_has = g_new0(uint8_t, f->nsb);
    g_autofree uint8_t *chunk_has = g_new0(uint8_t, f->nchunks);
    H3100Model *m;

    if (!model_mig_core_load(r->m, core, len, sb_has, chunk_has, why) ||
        !recv_reconcile(r, chunk_has, why) ||
        !ftl_check_tables(f, why) || !recv_counts_ok(r, why)) {
        recv_fail(errp, "%s", why->str);
        return NULL;
    }
    m = r->m;
    r->m = NULL;
    h3100_mig_recv_free(r);
    return m;
}
