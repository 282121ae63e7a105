/*
 * The FTL's invariants, checked as a whole: by the tests after a run,
 * and by the state loader on every file it reads (state.c), whose
 * contents are hostile.  So every index is range-checked before it is
 * used: whatever the arrays ftl_init sized hold, checking them is safe,
 * as long as nfree <= nsb and no superblock has a written pointer past
 * the reverse map it holds (the loader refuses both before it reads).
 *
 * Cost: O(superblocks x planes + blocks + slots written).  The logical
 * map is walked once, in order; the reverse-map entry each mapping must
 * point back from is fetched a little ahead, since on a large drive
 * each of them is a cache miss.
 */
#include <string.h>

#include "ftl.h"

static const char *const sb_state_names[] = {
    [SB_FREE] = "free",
    [SB_OPEN] = "open",
    [SB_CLOSED] = "closed",
    [SB_VICTIM] = "the reclaim victim",
    [SB_RETIRED] = "retired",
};

static bool check_fail(GString *why, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static bool check_fail(GString *why, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    g_string_append_vprintf(why, fmt, ap);
    va_end(ap);
    return false;
}

static bool sb_holds_data(uint8_t state)
{
    return state == SB_OPEN || state == SB_CLOSED || state == SB_VICTIM;
}

/*
 * Only a superblock with data (open, closed or the victim) may hold a
 * reverse map.  Only a full superblock closes, and the victim is a
 * closed one; an open one is not full, or it would have closed.  Free
 * and retired ones were emptied when they were erased or retired.
 */
const char *ftl_sb_shape_error(const Ftl *f, const Superblock *sb,
                               bool has_map)
{
    if (sb->state > SB_RETIRED) {
        return "unknown state";
    }
    if (sb->stream >= FTL_STREAMS) {
        return "unknown stream";
    }
    if (sb->wp > f->sps || sb->valid > sb->wp) {
        return "more slots written or valid than it has";
    }
    if (has_map && !sb_holds_data(sb->state)) {
        return "a reverse map without data";
    }
    if (sb->state == SB_OPEN && sb->wp == f->sps) {
        return "open but full";
    }
    if ((sb->state == SB_CLOSED || sb->state == SB_VICTIM) &&
        sb->wp != f->sps) {
        return "closed but not full";
    }
    if (!sb_holds_data(sb->state) && sb->wp) {
        return "empty but written";
    }
    return NULL;
}

static bool check_sb_shapes(const Ftl *f, GString *why)
{
    for (uint32_t i = 0; i < f->nsb; i++) {
        const char *bad = ftl_sb_shape_error(f, &f->sb[i],
                                             f->sb[i].rmap != RMAP_NONE);

        if (bad) {
            return check_fail(why, "superblock %u: %s", i, bad);
        }
    }
    return true;
}

/* Which kinds hold a full map (p2l), and which a list (lpns). */
static bool rmap_kind_fits(const Superblock *sb)
{
    switch (sb->rmap) {
    case RMAP_NONE:
        return !sb->p2l && !sb->lpns;
    case RMAP_OPEN:
        return sb->p2l && !sb->lpns && sb->state == SB_OPEN;
    case RMAP_YOUNG:
        return sb->p2l && !sb->lpns && sb->state != SB_OPEN;
    case RMAP_LIST:
        return !sb->p2l && sb->lpns && sb->lpns_len <= sb->lpns_cap &&
               (sb->state == SB_CLOSED || sb->state == SB_VICTIM);
    case RMAP_BUILT:
        return sb->p2l && !sb->lpns && sb->state == SB_VICTIM;
    }
    return false;
}

/*
 * @sbi's list names lpns of the drive in increasing order, among them
 * every lpn the logical map places in @sbi.
 */
static bool check_lpn_list(const Ftl *f, uint32_t sbi, GString *why)
{
    g_autofree uint32_t *lpns = NULL;
    uint32_t n = ftl_rmap_list(f, sbi, &lpns);
    uint32_t in_sb = 0;

    if (n == UINT32_MAX) {
        return check_fail(why, "superblock %u: its lpn list ends inside an "
                          "escape", sbi);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (lpns[i] >= f->user_slots || (i && lpns[i] <= lpns[i - 1])) {
            return check_fail(why, "superblock %u: its lpn list names %u "
                              "after %u", sbi, lpns[i], i ? lpns[i - 1] : 0);
        }
        /* FTL_UNMAPPED is past every superblock */
        in_sb += ftl_lookup(f, lpns[i]) / f->sps == sbi;
    }
    if (in_sb != f->sb[sbi].valid) {
        return check_fail(why, "superblock %u: its lpn list names %u of its "
                          "%u valid slots", sbi, in_sb, f->sb[sbi].valid);
    }
    return true;
}

/*
 * The reverse maps held (ftl_rmap.c): each written slot names an lpn of
 * the drive or none; an open superblock's map is filled as it is written;
 * a list names every valid slot's lpn; the young ring and the count of
 * lists are those of the maps held.
 */
static bool check_reverse_maps(const Ftl *f, GString *why)
{
    const FtlRmap *r = &f->rmap;
    uint32_t young = 0, lists = 0;

    for (uint32_t i = 0; i < f->nsb; i++) {
        const Superblock *sb = &f->sb[i];

        if (!rmap_kind_fits(sb)) {
            return check_fail(why, "superblock %u: reverse map %s, list %s, "
                              "kind %u", i, sb->p2l ? "held" : "not held",
                              sb->lpns ? "held" : "not held", sb->rmap);
        }
        young += sb->rmap == RMAP_YOUNG;
        lists += sb->rmap == RMAP_LIST;
        for (uint64_t s = 0; sb->p2l && s < sb->wp; s++) {
            if (sb->p2l[s] >= f->user_slots && sb->p2l[s] != FTL_UNMAPPED) {
                return check_fail(why, "slot %" PRIu64 " of superblock %u "
                                  "names lpn %u, beyond the drive", s, i,
                                  sb->p2l[s]);
            }
        }
        if (sb->rmap == RMAP_LIST && !check_lpn_list(f, i, why)) {
            return false;
        }
    }
    if (young != r->len || lists != r->lists) {
        return check_fail(why, "%u young reverse maps and %u lists, counted "
                          "%u and %u", young, lists, r->len, r->lists);
    }
    for (uint32_t k = 0; k < r->len; k++) {
        uint32_t sbi = r->young[(r->head + k) % r->young_cap];

        if (sbi >= f->nsb || f->sb[sbi].rmap != RMAP_YOUNG) {
            return check_fail(why, "the young ring names superblock %u, "
                              "not a young one", sbi);
        }
    }
    return true;
}

static uint32_t count_in_state(const Ftl *f, SbState state)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < f->nsb; i++) {
        n += f->sb[i].state == state;
    }
    return n;
}

/*
 * Each stream writes into its own open superblock, and every open
 * superblock is some stream's: one open on two streams would take
 * writes past its end, one no stream names would never fill or be
 * reclaimed.
 */
static bool check_open(const Ftl *f, GString *why)
{
    uint32_t named = 0, open;

    for (uint32_t s = 0; s < FTL_STREAMS; s++) {
        uint32_t sbi = f->open[s];

        if (sbi == FTL_NO_SB) {
            continue;
        }
        if (sbi >= f->nsb) {
            return check_fail(why, "stream %u writes into superblock %u, "
                              "beyond the drive", s, sbi);
        }
        if (f->sb[sbi].state != SB_OPEN) {
            return check_fail(why, "stream %u writes into superblock %u, "
                              "which is %s", s, sbi,
                              sb_state_names[f->sb[sbi].state]);
        }
        if (f->sb[sbi].stream != s) {
            return check_fail(why, "stream %u writes into superblock %u, "
                              "open for stream %u", s, sbi,
                              f->sb[sbi].stream);
        }
        named++;
    }
    open = count_in_state(f, SB_OPEN);
    if (open != named) {
        return check_fail(why, "%u superblocks are open, streams write "
                          "into %u", open, named);
    }
    return true;
}

/*
 * Reclaim has at most one victim, which is the superblock in the victim
 * state; pacing moves at most a superblock per superblock (it divides
 * by ratio_den while there is a victim).
 */
static bool check_reclaim(const Ftl *f, GString *why)
{
    uint32_t victims = count_in_state(f, SB_VICTIM);

    if (f->ratio_num > f->sps || f->ratio_den > f->sps ||
        f->cursor > f->sps) {
        return check_fail(why, "reclaim pacing %" PRIu64 "/%" PRIu64
                          " at slot %" PRIu64 ", superblocks of %" PRIu64
                          " slots", f->ratio_num, f->ratio_den, f->cursor,
                          f->sps);
    }
    if (f->victim == FTL_NO_SB) {
        if (victims) {
            return check_fail(why, "no reclaim victim, but %u superblocks "
                              "are in the victim state", victims);
        }
        return true;
    }
    if (f->victim >= f->nsb) {
        return check_fail(why, "reclaim victim %u is beyond the drive",
                          f->victim);
    }
    if (f->sb[f->victim].state != SB_VICTIM) {
        return check_fail(why, "reclaim victim %u is %s", f->victim,
                          sb_state_names[f->sb[f->victim].state]);
    }
    if (victims != 1) {
        return check_fail(why, "%u superblocks are in the victim state",
                          victims);
    }
    if (f->ratio_den == 0) {
        return check_fail(why, "reclaim victim %u with no pacing", f->victim);
    }
    return true;
}

/* The free list is the set of free superblocks, each once. */
static bool check_free_list(const Ftl *f, GString *why)
{
    g_autofree uint8_t *listed = NULL;
    uint32_t free_count;

    if (f->nfree > f->nsb) {
        return check_fail(why, "free list of %u superblocks, the drive has "
                          "%u", f->nfree, f->nsb);
    }
    listed = g_new0(uint8_t, f->nsb);
    for (uint32_t i = 0; i < f->nfree; i++) {
        uint32_t sbi = f->free_list[i];

        if (sbi >= f->nsb) {
            return check_fail(why, "free list names superblock %u, beyond "
                              "the drive", sbi);
        }
        if (f->sb[sbi].state != SB_FREE) {
            return check_fail(why, "free list names superblock %u, which "
                              "is %s", sbi, sb_state_names[f->sb[sbi].state]);
        }
        if (listed[sbi]++) {
            return check_fail(why, "free list names superblock %u twice",
                              sbi);
        }
    }
    free_count = count_in_state(f, SB_FREE);
    if (free_count != f->nfree) {
        return check_fail(why, "%u free superblocks, free list holds %u",
                          free_count, f->nfree);
    }
    return true;
}

/* Block states agree with the counters that SMART reports. */
static bool check_block_counts(const Ftl *f, GString *why)
{
    const BadBlocks *bb = &f->bb;
    BadBlocks walk = *bb;
    uint64_t used = 0, bad = 0, used_erases = 0;

    for (uint32_t p = 0; p < bb->planes; p++) {
        uint32_t spares = 0;

        for (uint32_t b = 0; b < bb->blocks; b++) {
            uint64_t i = (uint64_t)p * bb->blocks + b;

            if (bb->state[i] > BB_BAD) {
                return check_fail(why, "block %u of plane %u has unknown "
                                  "state %u", b, p, bb->state[i]);
            }
            spares += bb->state[i] == BB_SPARE;
            used += bb->state[i] == BB_USED;
            bad += bb->state[i] == BB_BAD;
            used_erases += bb->state[i] == BB_USED ? bb->erase_count[i] : 0;
        }
        if (spares != bb->spares_left[p]) {
            return check_fail(why, "plane %u has %u spare blocks, counts %u",
                              p, spares, bb->spares_left[p]);
        }
    }
    if (used != bb->used_blocks || used_erases != bb->used_block_erases) {
        return check_fail(why, "%" PRIu64 " blocks in use with %" PRIu64
                          " erases, counted %" PRIu64 " with %" PRIu64, used,
                          used_erases, bb->used_blocks, bb->used_block_erases);
    }
    /* the range kept as blocks wear against one walk of them all */
    bb_scan_wear_range(&walk);
    if (used && (walk.used_min_erases != bb->used_min_erases ||
                 walk.used_at_min != bb->used_at_min ||
                 walk.used_max_erases != bb->used_max_erases)) {
        return check_fail(why, "blocks in use have %u-%u erases (%" PRIu64
                          " at the least), counted %u-%u (%" PRIu64 ")",
                          walk.used_min_erases, walk.used_max_erases,
                          walk.used_at_min, bb->used_min_erases,
                          bb->used_max_erases, bb->used_at_min);
    }
    if (bad != bb->factory_bad + bb->grown_bad) {
        return check_fail(why, "%" PRIu64 " bad blocks, counted %" PRIu64
                          " factory and %" PRIu64 " grown", bad,
                          bb->factory_bad, bb->grown_bad);
    }
    return true;
}

/*
 * The blocks in use are exactly those of the superblocks not retired,
 * one superblock each: two sharing a block would erase each other's data.
 */
static bool check_superblock_blocks(const Ftl *f, GString *why)
{
    const BadBlocks *bb = &f->bb;
    g_autofree uint8_t *taken = g_new0(uint8_t,
                                       (size_t)bb->planes * bb->blocks);
    uint64_t members = 0;

    for (uint32_t s = 0; s < f->nsb; s++) {
        for (uint32_t p = 0; p < bb->planes; p++) {
            uint32_t b = f->sb_block[(size_t)s * bb->planes + p];
            uint64_t i = (uint64_t)p * bb->blocks + b;

            if (b >= bb->blocks) {
                return check_fail(why, "superblock %u names block %u of "
                                  "plane %u, beyond the plane", s, b, p);
            }
            if (f->sb[s].state == SB_RETIRED) {
                continue;             /* its blocks went back as spares */
            }
            if (bb->state[i] != BB_USED || taken[i]++) {
                return check_fail(why, "superblock %u uses block %u of "
                                  "plane %u, not a block of its own", s, b,
                                  p);
            }
            members++;
        }
    }
    if (members != bb->used_blocks) {
        return check_fail(why, "%" PRIu64 " blocks in use, superblocks hold "
                          "%" PRIu64, bb->used_blocks, members);
    }
    return true;
}

/* xoshiro's all-zero state is a fixed point: every erase would fail. */
static bool check_rng(const Ftl *f, GString *why)
{
    if (!(f->rng.s[0] | f->rng.s[1] | f->rng.s[2] | f->rng.s[3])) {
        return check_fail(why, "random state is all zero");
    }
    return true;
}

/*
 * Every mapped lpn points at a written slot of a superblock with data, no
 * slot twice (a bit per slot), and where that superblock holds a reverse
 * map, the map names it back.  Counting the mapped slots per superblock
 * gives exactly its valid slots (a slot is valid when the map points at
 * it), so the counts must agree.
 */
static bool check_map(const Ftl *f, GString *why)
{
    g_autofree uint32_t *valid = g_new0(uint32_t, f->nsb);
    g_autofree uint64_t *seen = g_new0(uint64_t,
                                       ((uint64_t)f->nsb * f->sps + 63) / 64);
    uint64_t mapped = 0;

    for (uint64_t c = 0; c < f->nchunks; c++) {
        const uint32_t *chunk = f->l2p[c];

        for (uint32_t i = 0; chunk && i < FTL_CHUNK_SLOTS; i++) {
            uint64_t lpn = c * FTL_CHUNK_SLOTS + i;
            uint32_t ppn = chunk[i], sbi = ppn / (uint32_t)f->sps;
            uint64_t slot = ppn - (uint64_t)sbi * f->sps;
            const Superblock *sb;

            if (ppn == FTL_UNMAPPED) {
                continue;
            }
            sb = sbi < f->nsb ? &f->sb[sbi] : NULL;
            if (lpn >= f->user_slots || !sb || !sb_holds_data(sb->state) ||
                slot >= sb->wp) {
                return check_fail(why, "lpn %" PRIu64 " maps to %u, not a "
                                  "written slot", lpn, ppn);
            }
            /* reclaim resumes at its cursor and erases what it passed */
            if (sbi == f->victim && slot < f->cursor) {
                return check_fail(why, "lpn %" PRIu64 " maps to %u, a slot "
                                  "of the victim reclaim has passed", lpn,
                                  ppn);
            }
            if (seen[ppn / 64] & (1ull << (ppn % 64))) {
                return check_fail(why, "lpn %" PRIu64 " maps to %u, as "
                                  "another lpn does", lpn, ppn);
            }
            seen[ppn / 64] |= 1ull << (ppn % 64);
            if (sb->p2l && sb->p2l[slot] != lpn) {
                return check_fail(why, "lpn %" PRIu64 " maps to %u, whose "
                                  "reverse map does not name it", lpn, ppn);
            }
            valid[sbi]++;
            mapped++;
        }
    }
    for (uint32_t i = 0; i < f->nsb; i++) {
        if (valid[i] != f->sb[i].valid) {
            return check_fail(why, "superblock %u counts %u valid slots, "
                              "the map points at %u", i, f->sb[i].valid,
                              valid[i]);
        }
    }
    if (mapped != f->mapped) {
        return check_fail(why, "%" PRIu64 " mapped lpns, counter %" PRIu64,
                          mapped, f->mapped);
    }
    return true;
}

bool ftl_check_tables(const Ftl *f, GString *why)
{
    return check_sb_shapes(f, why) && check_open(f, why) &&
           check_reclaim(f, why) && check_free_list(f, why) &&
           check_block_counts(f, why) && check_superblock_blocks(f, why) &&
           check_rng(f, why);
}

bool ftl_check(const Ftl *f, GString *why)
{
    return ftl_check_tables(f, why) && check_reverse_maps(f, why) &&
           check_map(f, why);
}
