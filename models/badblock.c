/*
 * Factory and grown bad blocks.
 *
 * Each plane has blocks_per_plane blocks; superblock i is built from the
 * i-th good block of every plane and the rest are spares.  A block that
 * fails an erase (more likely as it wears) is replaced by a spare of its
 * plane; with none left, its superblock is retired and its other blocks
 * become spares.  Available spare is the share of spares left.
 */
#include <math.h>
#include <string.h>

#include "ftl.h"

static uint64_t blk_index(const BadBlocks *bb, uint32_t plane, uint32_t blk)
{
    return (uint64_t)plane * bb->blocks + blk;
}

static void wear_range_clear(BadBlocks *bb)
{
    bb->used_min_erases = UINT32_MAX;
    bb->used_max_erases = 0;
    bb->used_at_min = 0;
}

/* A block with @ec erases joins the range of the blocks in use. */
static void wear_range_add(BadBlocks *bb, uint32_t ec)
{
    if (ec < bb->used_min_erases) {
        bb->used_min_erases = ec;
        bb->used_at_min = 0;
    }
    bb->used_at_min += ec == bb->used_min_erases;
    bb->used_max_erases = MAX(bb->used_max_erases, ec);
}

/* The erase-count range of the blocks in use, by one walk of them all. */
void bb_scan_wear_range(BadBlocks *bb)
{
    uint64_t n = (uint64_t)bb->planes * bb->blocks;

    wear_range_clear(bb);
    for (uint64_t i = 0; i < n; i++) {
        if (bb->state[i] == BB_USED) {
            wear_range_add(bb, bb->erase_count[i]);
        }
    }
}

static void use_block(BadBlocks *bb, uint64_t i)
{
    uint32_t ec = bb->erase_count[i];

    if (!bb->used_blocks) {
        wear_range_clear(bb);
    }
    wear_range_add(bb, ec);
    bb->state[i] = BB_USED;
    bb->used_blocks++;
    bb->used_block_erases += ec;
}

/* Rare (a grown bad block, a retirement): a walk may follow. */
static void unuse_block(BadBlocks *bb, uint64_t i, uint8_t new_state)
{
    uint32_t ec = bb->erase_count[i];

    bb->state[i] = new_state;
    bb->used_blocks--;
    bb->used_block_erases -= ec;
    if (ec == bb->used_max_erases ||
        (ec == bb->used_min_erases && !--bb->used_at_min)) {
        bb_scan_wear_range(bb);
    }
}

/*
 * Block @i, in use, was erased @erases more times.  The minimum moves
 * only when its last block leaves it: once per round of the wear
 * levelling over the whole drive.
 */
static void wear_block(BadBlocks *bb, uint64_t i, uint32_t erases)
{
    uint32_t ec = bb->erase_count[i];

    bb->erase_count[i] = ec + erases;
    bb->used_block_erases += erases;
    bb->used_max_erases = MAX(bb->used_max_erases, ec + erases);
    if (erases && ec == bb->used_min_erases && !--bb->used_at_min) {
        bb_scan_wear_range(bb);
    }
}

static void retire_superblock(Ftl *f, uint32_t sb, uint32_t failed_plane)
{
    BadBlocks *bb = &f->bb;
    uint32_t planes = bb->planes;

    for (uint32_t p = 0; p < planes; p++) {
        uint64_t i = blk_index(bb, p, f->sb_block[(size_t)sb * planes + p]);

        if (p != failed_plane && bb->state[i] == BB_USED) {
            unuse_block(bb, i, BB_SPARE);
            bb->spares_left[p]++;
        }
    }
    f->sb[sb].state = SB_RETIRED;
    f->sb[sb].valid = 0;
    f->sb[sb].wp = 0;
}

bool bb_init(Ftl *f, GError **errp)
{
    BadBlocks *bb = &f->bb;
    const H3100Geometry *g = &f->cfg->geo;
    double p_bad = f->cfg->ftl.factory_bad_ppm / 1e6;
    uint32_t usable_sb = 0;

    bb->planes = f->dies * f->planes;
    bb->blocks = g->blocks_per_plane;
    bb->state = g_new0(uint8_t, (size_t)bb->planes * bb->blocks);
    bb->erase_count = g_new0(uint32_t, (size_t)bb->planes * bb->blocks);
    bb->spares_left = g_new0(uint32_t, bb->planes);
    bb->initial_spares = UINT32_MAX;

    for (uint32_t p = 0; p < bb->planes; p++) {
        uint32_t next = 0;

        for (uint32_t b = 0; b < bb->blocks; b++) {
            if (rng_unit(&f->rng) < p_bad) {
                bb->state[blk_index(bb, p, b)] = BB_BAD;
                bb->factory_bad++;
            }
        }
        for (uint32_t s = 0; s < f->nsb; s++) {
            while (next < bb->blocks &&
                   bb->state[blk_index(bb, p, next)] == BB_BAD) {
                next++;
            }
            if (next == bb->blocks) {
                /* this plane ran out: the superblock cannot be built */
                f->sb[s].state = SB_RETIRED;
                continue;
            }
            f->sb_block[(size_t)s * bb->planes + p] = next++;
        }
    }
    /* mark blocks of whole superblocks used; the rest are spares */
    for (uint32_t s = 0; s < f->nsb; s++) {
        if (f->sb[s].state == SB_RETIRED) {
            continue;
        }
        usable_sb++;
        for (uint32_t p = 0; p < bb->planes; p++) {
            use_block(bb, blk_index(bb, p,
                                    f->sb_block[(size_t)s * bb->planes + p]));
        }
    }
    for (uint32_t p = 0; p < bb->planes; p++) {
        for (uint32_t b = 0; b < bb->blocks; b++) {
            bb->spares_left[p] += bb->state[blk_index(bb, p, b)] == BB_SPARE;
        }
        bb->initial_spares = MIN(bb->initial_spares, bb->spares_left[p]);
    }
    if ((uint64_t)usable_sb * f->sps <
        f->user_slots + (uint64_t)(FTL_STREAMS + f->cfg->ftl.gc_bg_free + 1) *
        f->sps) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "factory bad blocks (%" PRIu64 ") leave %u superblocks, "
                    "too few for the user capacity", bb->factory_bad,
                    usable_sb);
        return false;
    }
    return true;
}

void bb_destroy(BadBlocks *bb)
{
    g_free(bb->state);
    g_free(bb->erase_count);
    g_free(bb->spares_left);
    memset(bb, 0, sizeof(*bb));
}

/* Chance an erase fails: grown_bad_ppm at rated wear, growing as wear^2. */
static bool erase_fails(Ftl *f, uint32_t ec)
{
    double wear = (double)ec / f->cfg->ftl.rated_pe;
    double p = f->cfg->ftl.grown_bad_ppm / 1e6 * wear * wear;

    return p > 0 && rng_unit(&f->rng) < p;
}

static bool replace_block(Ftl *f, uint32_t sb, uint32_t plane)
{
    BadBlocks *bb = &f->bb;

    if (!bb->spares_left[plane]) {
        return false;
    }
    for (uint32_t b = 0; b < bb->blocks; b++) {
        uint64_t i = blk_index(bb, plane, b);

        if (bb->state[i] == BB_SPARE) {
            use_block(bb, i);
            bb->spares_left[plane]--;
            f->sb_block[(size_t)sb * bb->planes + plane] = b;
            return true;
        }
    }
    return false;
}

bool bb_erase_superblock(Ftl *f, uint32_t sb)
{
    BadBlocks *bb = &f->bb;

    f->stats.sb_erases++;
    f->sb[sb].erase_count++;
    for (uint32_t p = 0; p < bb->planes; p++) {
        uint64_t i = blk_index(bb, p, f->sb_block[(size_t)sb * bb->planes + p]);

        wear_block(bb, i, 1);
        f->stats.block_erases++;
        if (!erase_fails(f, bb->erase_count[i])) {
            continue;
        }
        bb->grown_bad++;
        unuse_block(bb, i, BB_BAD);
        if (!replace_block(f, sb, p)) {
            retire_superblock(f, sb, p);
            return false;
        }
    }
    return true;
}

/*
 * Superblock @sb's blocks have been erased @erases times more, in the
 * past (a worn drive made at once): each block that those erases would
 * have worn out, drawn from the integral of erase_fails()' chance, is
 * replaced by a spare of its plane.  With none left the block stays: the
 * superblock may hold data, which a retirement would lose.
 */
void bb_age_superblock(Ftl *f, uint32_t sb, uint32_t erases)
{
    BadBlocks *bb = &f->bb;
    double rated = f->cfg->ftl.rated_pe;
    double ppm = f->cfg->ftl.grown_bad_ppm / 1e6;

    if (f->sb[sb].state == SB_RETIRED) {
        return;
    }
    f->sb[sb].erase_count += erases;
    for (uint32_t p = 0; p < bb->planes; p++) {
        uint64_t i = blk_index(bb, p, f->sb_block[(size_t)sb * bb->planes + p]);
        double e0 = bb->erase_count[i], e1 = e0 + erases;
        double hazard = ppm * (e1 * e1 * e1 - e0 * e0 * e0) /
                        (3.0 * rated * rated);

        wear_block(bb, i, erases);
        if (rng_unit(&f->rng) >= -expm1(-hazard) || !bb->spares_left[p]) {
            continue;
        }
        bb->grown_bad++;
        unuse_block(bb, i, BB_BAD);
        replace_block(f, sb, p);
    }
}

/*
 * A block can only be replaced from its own plane, so the plane with the
 * fewest spares left decides; blocks a retired superblock hands back to
 * other planes do not make the drive healthier.
 */
uint32_t bb_available_spare_pct(const BadBlocks *bb)
{
    uint32_t least = UINT32_MAX;

    if (!bb->initial_spares || bb->initial_spares == UINT32_MAX) {
        return 0;
    }
    for (uint32_t p = 0; p < bb->planes; p++) {
        least = MIN(least, bb->spares_left[p]);
    }
    return MIN(least, bb->initial_spares) * 100 / bb->initial_spares;
}
