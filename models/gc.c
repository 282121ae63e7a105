/*
 * Reclaim (garbage collection).
 *
 * Greedy: the closed superblock with the fewest valid slots is the
 * victim, unless wear levelling asks for its coldest one.  Reclaim is
 * paced against host writes: a victim with v valid slots out of N gives
 * back N - v slots, so while free superblocks are at or below gc_bg_free
 * every host slot pays for v / (N - v) moves (twice that at or below
 * gc_fg_free).  Host writes slow down smoothly as reclaim needs grow; they
 * only wait for a whole victim when no superblock is left to open.
 */
#include "ftl.h"

static void finish_victim(Ftl *f)
{
    uint32_t v = f->victim;

    f->victim = FTL_NO_SB;
    ftl_rmap_drop(f, v);
    if (f->hooks.erased) {
        f->hooks.erased(f->hooks.opaque, v);
    }
    if (bb_erase_superblock(f, v)) {
        ftl_put_free(f, v);
    }
}

static bool select_victim(Ftl *f)
{
    uint32_t best = FTL_NO_SB;
    uint64_t v;
    bool wl = false;

    /* moving a full cold superblock needs a spare destination */
    if (f->nfree >= 2) {
        best = ftl_pick_wear_victim(f);
        if (best != FTL_NO_SB) {
            f->stats.wl_victims++;
            wl = true;
        }
    }
    if (best == FTL_NO_SB) {
        uint32_t least = UINT32_MAX;

        for (uint32_t i = 0; i < f->nsb; i++) {
            if (f->sb[i].state == SB_CLOSED && f->sb[i].valid < least) {
                least = f->sb[i].valid;
                best = i;
            }
        }
    }
    if (best == FTL_NO_SB) {
        return false;
    }
    f->victim = best;
    f->sb[best].state = SB_VICTIM;
    f->cursor = 0;
    f->last_read_page = UINT64_MAX;
    f->stats.gc_victims++;
    v = f->sb[best].valid;
    if (f->hooks.gc_victim) {
        f->hooks.gc_victim(f->hooks.opaque, best, v, wl);
    }
    f->ratio_num = v;
    f->ratio_den = f->sps > v ? f->sps - v : 1;
    if (v == 0) {
        finish_victim(f);
    }
    return true;
}

#define SCAN_PREFETCH 48u

/*
 * Next valid slot of the victim at or after the cursor, or sps.  The
 * reverse map is read in order, so the map entries it names are fetched
 * a little ahead: on a large drive each one is a cache miss.  A built
 * map names only the slots valid when it was built.
 */
static uint64_t next_valid(const Ftl *f, uint32_t victim)
{
    const Superblock *sb = &f->sb[victim];

    for (uint64_t s = f->cursor; s < sb->wp; s++) {
        if (s + SCAN_PREFETCH < sb->wp &&
            sb->p2l[s + SCAN_PREFETCH] != FTL_UNMAPPED) {
            ftl_prefetch(f, sb->p2l[s + SCAN_PREFETCH]);
        }
        if (ftl_slot_valid(f, victim, s)) {
            return s;
        }
    }
    return f->sps;
}

static uint32_t valid_in_page(const Ftl *f, uint32_t victim, uint64_t slot)
{
    uint64_t first = slot - modulo(&f->by_spp, (uint32_t)slot);
    uint32_t n = 0;

    for (uint64_t s = first; s < first + f->spp && s < f->sb[victim].wp;
         s++) {
        n += ftl_slot_valid(f, victim, s);
    }
    return n;
}

/*
 * Move one valid slot of the victim; false when there is nothing more to
 * move: the victim is done, or no superblock is left to move into (grown
 * bad blocks ate the spare space), which makes the drive read-only.
 */
static bool relocate_one(Ftl *f)
{
    Superblock *sb = &f->sb[f->victim];
    uint64_t base = (uint64_t)f->victim * f->sps;
    uint64_t slot, page;
    uint32_t lpn;
    uint64_t ppn;

    /* a victim chosen just now, or before the drive was loaded */
    ftl_rmap_ensure(f, f->victim);
    slot = next_valid(f, f->victim);
    if (slot >= f->sps) {
        finish_victim(f);
        return false;
    }
    page = divide(&f->by_spp, (uint32_t)(base + slot));
    if (page != f->last_read_page) {
        f->last_read_page = page;
        if (f->hooks.gc_read) {
            f->hooks.gc_read(f->hooks.opaque, base + slot,
                             valid_in_page(f, f->victim, slot));
        }
    }
    lpn = sb->p2l[slot];
    ppn = ftl_place(f, FTL_GC_BASE + sb->stream % FTL_GC_BASE, lpn);
    if (ppn == FTL_NO_PPN) {
        f->out_of_space = true;
        return false;
    }
    ftl_invalidate(f, (uint32_t)(base + slot));
    ftl_map_set(f, lpn, (uint32_t)ppn);
    f->cursor = slot + 1;
    f->stats.gc_slots++;
    if (f->nfree <= f->cfg->ftl.gc_fg_free) {
        f->stats.fg_gc_slots++;
    }
    if (f->hooks.gc_moved) {
        f->hooks.gc_moved(f->hooks.opaque);
    }
    if (sb->valid == 0) {
        finish_victim(f);
    }
    return true;
}

void ftl_gc_pace(Ftl *f)
{
    const H3100FtlParams *p = &f->cfg->ftl;

    if (f->victim == FTL_NO_SB) {
        if (f->nfree > p->gc_bg_free || !select_victim(f)) {
            f->credit = 0;
            return;
        }
        if (f->victim == FTL_NO_SB) {
            return;                   /* it had nothing valid */
        }
    }
    f->credit += f->nfree <= p->gc_fg_free ? 2 * f->ratio_num
                                           : f->ratio_num;
    while (f->credit >= f->ratio_den && !f->out_of_space) {
        f->credit -= f->ratio_den;
        if (f->victim == FTL_NO_SB &&
            (f->nfree > p->gc_bg_free || !select_victim(f) ||
             f->victim == FTL_NO_SB)) {
            f->credit = 0;
            return;
        }
        if (!relocate_one(f) && f->out_of_space) {
            return;
        }
    }
}

bool ftl_gc_make_room(Ftl *f)
{
    /* each victim frees a superblock; give up only if none can be had */
    for (uint32_t tries = 0; f->nfree < 2 && tries <= f->nsb; tries++) {
        if (f->victim == FTL_NO_SB && !select_victim(f)) {
            return false;
        }
        f->stats.emergency_gc++;
        while (f->victim != FTL_NO_SB && relocate_one(f)) {
        }
        if (f->out_of_space) {
            return false;
        }
    }
    return f->nfree >= 2;
}

bool ftl_gc_idle_wanted(const Ftl *f)
{
    return f->victim != FTL_NO_SB || f->nfree < 2 * f->cfg->ftl.gc_bg_free;
}

void ftl_gc_step(Ftl *f, uint32_t slots)
{
    for (uint32_t i = 0; i < slots; i++) {
        if (f->victim == FTL_NO_SB) {
            if (f->nfree >= 2 * f->cfg->ftl.gc_bg_free || !select_victim(f)) {
                return;
            }
            if (f->victim == FTL_NO_SB) {
                continue;
            }
        }
        relocate_one(f);
    }
}
