/*
 * The receiving side of a migrated model (include/h3100/migrate.h).
 *
 * The pages fill a fresh model's maps as they come; the core then gives
 * it everything else.  What the state loader proves by walking the whole
 * map once (ftl_check: every mapped lpn is named back by the slot it
 * maps to, each superblock has as many of those as it counts valid, every
 * written slot names an lpn of the drive) is counted here page by page,
 * so that the check at the end costs no walk of the map:
 *
 *   good[sb]      pairs (lpn, slot of sb) with l2p[lpn] = slot and
 *                 p2l[slot] = lpn, lpn inside the drive
 *   unmapped[sb]  reverse-map entries that are FTL_UNMAPPED
 *   beyond[sb]    reverse-map entries naming an lpn outside the drive
 *   hi[sb]        one past the last entry not FTL_UNMAPPED
 *   mapped        logical-map entries that are not FTL_UNMAPPED
 *
 * Each page changes the counts of the entries it replaces: a logical-map
 * page looks up the reverse map of each slot it names, a reverse-map
 * page the logical map of each lpn it names.  At the end a superblock
 * holding data must have hi <= wp (nothing written past its pointer),
 * unmapped = sps - wp (nothing unwritten before it), beyond = 0 and
 * good = valid; and every mapped entry must be good.  That is ftl_check's
 * verdict on the maps, reached without reading them again.
 */
#include <string.h>

#include "h3100/migrate.h"
#include "hugealloc.h"
#include "model_priv.h"

struct H3100MigRecv {
    H3100Model *m;
    uint32_t *good;
    uint32_t *unmapped;
    uint32_t *beyond;
    uint32_t *hi;
    uint64_t mapped;
    uint64_t good_total;
    uint32_t p2l_pps;                 /* reverse-map pages per superblock */
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
    r->good = g_new0(uint32_t, f->nsb);
    r->unmapped = g_new0(uint32_t, f->nsb);
    r->beyond = g_new0(uint32_t, f->nsb);
    r->hi = g_new0(uint32_t, f->nsb);
    r->p2l_pps = (f->sps + FTL_PAGE_SLOTS - 1) / FTL_PAGE_SLOTS;
    r->l2p_seen = g_new0(uint8_t, f->nchunks * FTL_CHUNK_PAGES);
    return r;
}

void h3100_mig_recv_free(H3100MigRecv *r)
{
    if (r) {
        h3100_model_free(r->m);
        g_free(r->good);
        g_free(r->unmapped);
        g_free(r->beyond);
        g_free(r->hi);
        g_free(r->l2p_seen);
        g_free(r);
    }
}

/* Does the pair (@lpn, @ppn) count in good[]?  The maps as they are now. */
static bool pair_good(const Ftl *f, uint64_t lpn, uint32_t ppn)
{
    uint32_t sbi = ppn / (uint32_t)f->sps;
    const uint32_t *p2l;

    if (ppn == FTL_UNMAPPED || lpn >= f->user_slots || sbi >= f->nsb) {
        return false;
    }
    p2l = f->sb[sbi].p2l;
    return p2l && p2l[ppn - sbi * (uint32_t)f->sps] == lpn;
}

static void count_pair(H3100MigRecv *r, uint64_t lpn, uint32_t ppn, int d)
{
    const Ftl *f = &r->m->ftl;

    if (pair_good(f, lpn, ppn)) {
        r->good[ppn / (uint32_t)f->sps] += d;
        r->good_total += d;
    }
}

/* Logical-map entry @lpn becomes @ppn. */
static void set_l2p(H3100MigRecv *r, uint32_t *e, uint64_t lpn, uint32_t ppn)
{
    if (*e != FTL_UNMAPPED) {
        r->mapped--;
        count_pair(r, lpn, *e, -1);
    }
    *e = ppn;
    if (ppn != FTL_UNMAPPED) {
        r->mapped++;
        count_pair(r, lpn, ppn, 1);
    }
}

static void count_p2l_entry(H3100MigRecv *r, uint32_t sbi, uint32_t lpn,
                            int d)
{
    if (lpn == FTL_UNMAPPED) {
        r->unmapped[sbi] += d;
    } else if (lpn >= r->m->ftl.user_slots) {
        r->beyond[sbi] += d;
    }
}

/* Reverse-map entry @slot of superblock @sbi becomes @lpn. */
static void set_p2l(H3100MigRecv *r, uint32_t sbi, uint32_t slot,
                    uint32_t lpn)
{
    Ftl *f = &r->m->ftl;
    uint32_t *e = &f->sb[sbi].p2l[slot];
    uint32_t ppn = sbi * (uint32_t)f->sps + slot;

    if (*e < f->user_slots && ftl_lookup(f, *e) == ppn) {
        r->good[sbi]--;
        r->good_total--;
    }
    count_p2l_entry(r, sbi, *e, -1);
    *e = lpn;
    count_p2l_entry(r, sbi, lpn, 1);
    if (lpn < f->user_slots && ftl_lookup(f, lpn) == ppn) {
        r->good[sbi]++;
        r->good_total++;
    }
    if (lpn != FTL_UNMAPPED) {
        r->hi[sbi] = MAX(r->hi[sbi], slot + 1);
    }
}

/*
 * A logical-map page names slots all over the drive: each check of one is
 * a cache miss, so the reverse-map entries are fetched a little ahead (as
 * ftl_check does).
 */
#define RECV_PREFETCH 16u

static void prefetch_reverse(const Ftl *f, uint32_t ppn)
{
    uint32_t sbi = ppn / (uint32_t)f->sps;

    if (ppn != FTL_UNMAPPED && sbi < f->nsb && f->sb[sbi].p2l) {
        ftl_prefetch_line(&f->sb[sbi].p2l[ppn - sbi * (uint32_t)f->sps]);
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
        set_l2p(r, &chunk[i], c * FTL_CHUNK_SLOTS + i, FTL_UNMAPPED);
    }
    huge_free(chunk);
    f->l2p[c] = NULL;
    memset(r->l2p_seen + c * FTL_CHUNK_PAGES, 0, FTL_CHUNK_PAGES);
}

/* A reverse map starts unmapped: no entry names anything yet. */
static uint32_t *p2l_get(H3100MigRecv *r, uint32_t sbi)
{
    Ftl *f = &r->m->ftl;

    if (!f->sb[sbi].p2l) {
        ftl_sb_alloc_arrays(f, sbi);
        memset(f->sb[sbi].p2l, 0xff, f->sps * sizeof(uint32_t));
        r->unmapped[sbi] = f->sps;
        r->beyond[sbi] = 0;
        r->hi[sbi] = 0;
    }
    return f->sb[sbi].p2l;
}

static void p2l_drop(H3100MigRecv *r, uint32_t sbi)
{
    Ftl *f = &r->m->ftl;

    if (!f->sb[sbi].p2l) {
        return;
    }
    for (uint32_t s = 0; s < r->hi[sbi]; s++) {
        set_p2l(r, sbi, s, FTL_UNMAPPED);
    }
    ftl_sb_free_arrays(f, sbi);
    r->unmapped[sbi] = r->beyond[sbi] = r->hi[sbi] = 0;
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
        if (i + RECV_PREFETCH < FTL_L2P_PAGE_SLOTS) {
            prefetch_reverse(f, e[i + RECV_PREFETCH]);
        }
        if (chunk[i] != e[i]) {
            set_l2p(r, &chunk[i], first + i, e[i]);
        }
    }
    r->l2p_seen[it->index] = 1;
    return true;
}

static bool recv_p2l(H3100MigRecv *r, const H3100MigItem *it, GError **errp)
{
    Ftl *f = &r->m->ftl;
    const uint32_t *e = item_entries(it);
    uint64_t sbi = it->index / r->p2l_pps;
    uint64_t first = (it->index % r->p2l_pps) * FTL_PAGE_SLOTS;
    uint32_t *p2l;

    if (sbi >= f->nsb) {
        return recv_fail(errp, "reverse-map page %" PRIu64 " beyond the "
                         "drive", it->index);
    }
    p2l = p2l_get(r, sbi);
    for (uint64_t i = 0; i < FTL_PAGE_SLOTS && first + i < f->sps; i++) {
        if (p2l[first + i] != e[i]) {
            set_p2l(r, sbi, first + i, e[i]);
        }
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
        return recv_p2l(r, it, errp);
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
        p2l_drop(r, it->index);
        return true;
    default:
        return recv_fail(errp, "unknown item kind %u", it->kind);
    }
}

/*
 * The maps as the core says they are used: a chunk in use came whole, a
 * chunk or reverse map not in use goes.
 */
static bool recv_reconcile(H3100MigRecv *r, const uint8_t *sb_has,
                           const uint8_t *chunk_has, GString *why)
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
    for (uint32_t i = 0; i < f->nsb; i++) {
        if (sb_has[i]) {
            p2l_get(r, i);
        } else {
            p2l_drop(r, i);
        }
    }
    return true;
}

/* ftl_check's verdict on the maps, from the counts. */
static bool recv_counts_ok(H3100MigRecv *r, GString *why)
{
    Ftl *f = &r->m->ftl;

    for (uint32_t i = 0; i < f->nsb; i++) {
        const Superblock *sb = &f->sb[i];

        if (!sb->p2l) {
            continue;
        }
        if (r->hi[i] > sb->wp || r->unmapped[i] != f->sps - sb->wp ||
            r->beyond[i]) {
            g_string_append_printf(why, "superblock %u: reverse map does "
                                   "not match its %u written slots", i,
                                   sb->wp);
            return false;
        }
        if (r->good[i] != sb->valid) {
            g_string_append_printf(why, "superblock %u counts %u valid "
                                   "slots, the map points at %u", i,
                                   sb->valid, r->good[i]);
            return false;
        }
    }
    if (r->mapped != r->good_total || r->mapped != f->mapped) {
        g_string_append_printf(why, "%" PRIu64 " mapped lpns, %" PRIu64
                               " named back, counter %" PRIu64, r->mapped,
                               r->good_total, f->mapped);
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
        !recv_reconcile(r, sb_has, chunk_has, why) ||
        !ftl_check_tables(f, why) || !recv_counts_ok(r, why)) {
        recv_fail(errp, "%s", why->str);
        return NULL;
    }
    m = r->m;
    r->m = NULL;
    h3100_mig_recv_free(r);
    return m;
}
