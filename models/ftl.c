/*
 * FTL: set-up, host writes and deallocation, format.  Mapping tables are
 * in ftl_map.c, reclaim in gc.c, wear in wear.c, bad blocks in
 * badblock.c, the invariant check in ftl_check.c.
 */
#include <string.h>

#include "ftl.h"
#include "hugealloc.h"

bool ftl_init(Ftl *f, const H3100Config *cfg, GError **errp)
{
    memset(f, 0, sizeof(*f));
    f->cfg = cfg;
    f->user_slots = h3100_user_slots(cfg);
    f->sps = h3100_slots_per_superblock(cfg);
    f->spu = h3100_slots_per_unit(cfg);
    f->spp = h3100_slots_per_page(cfg);
    f->dies = h3100_dies(cfg);
    f->planes = cfg->geo.planes_per_die;
    f->nsb = h3100_superblocks(cfg);
    f->by_sps = divider((uint32_t)f->sps);
    f->by_spu = divider(f->spu);
    f->by_spp = divider(f->spp);
    f->by_dies = divider(f->dies);
    f->by_planes = divider(f->planes);
    f->by_ptype = divider(f->spp * f->planes);
    f->nchunks = (f->user_slots + FTL_CHUNK_SLOTS - 1) / FTL_CHUNK_SLOTS;
    f->l2p = g_new0(uint32_t *, f->nchunks);
    f->sb = g_new0(Superblock, f->nsb);
    f->sb_block = g_new0(uint16_t, (size_t)f->nsb * f->dies * f->planes);
    f->free_list = g_new(uint32_t, f->nsb);
    f->victim = FTL_NO_SB;
    for (uint32_t s = 0; s < FTL_STREAMS; s++) {
        f->open[s] = FTL_NO_SB;
    }
    ftl_rmap_init(f);
    rng_seed(&f->rng, cfg->seed ^ 0x6261646221ULL);
    if (!bb_init(f, errp)) {
        ftl_destroy(f);
        return false;
    }
    for (uint32_t i = 0; i < f->nsb; i++) {
        if (f->sb[i].state == SB_FREE) {
            f->free_list[f->nfree++] = i;
        }
    }
    return true;
}

void ftl_destroy(Ftl *f)
{
    ftl_track_stop(f);
    for (uint64_t i = 0; f->l2p && i < f->nchunks; i++) {
        huge_free(f->l2p[i]);
    }
    ftl_rmap_destroy(f);
    g_free(f->l2p);
    g_free(f->sb);
    g_free(f->sb_block);
    g_free(f->free_list);
    bb_destroy(&f->bb);
    memset(f, 0, sizeof(*f));
}

void ftl_set_hooks(Ftl *f, const FtlHooks *hooks)
{
    if (hooks) {
        f->hooks = *hooks;
    } else {
        memset(&f->hooks, 0, sizeof(f->hooks));
    }
}

bool ftl_write(Ftl *f, uint64_t lpn, uint32_t stream)
{
    uint32_t old;
    uint64_t ppn;

    if (f->out_of_space ||
        (f->open[stream] == FTL_NO_SB && !ftl_gc_make_room(f))) {
        return false;
    }
    /* only now: making room may have moved this very slot */
    old = ftl_lookup(f, lpn);
    ppn = ftl_place(f, stream, lpn);
    if (ppn == FTL_NO_PPN) {
        f->out_of_space = true;
        return false;
    }
    if (old != FTL_UNMAPPED) {
        ftl_invalidate(f, old);
    }
    ftl_map_set(f, lpn, (uint32_t)ppn);
    f->stats.host_slots++;
    ftl_gc_pace(f);
    return true;
}

static void trim_entry(Ftl *f, uint32_t *e, uint64_t lpn)
{
    if (*e != FTL_UNMAPPED) {
        ftl_invalidate(f, *e);
        *e = FTL_UNMAPPED;
        f->mapped--;
        f->stats.trimmed_slots++;
        ftl_track_l2p(f, lpn);
    }
}

void ftl_trim(Ftl *f, uint64_t lpn)
{
    ftl_trim_range(f, lpn, 1);
}

/*
 * The same as ftl_trim on each slot, but a map chunk never written costs
 * one test instead of one per slot: a guest deallocating the whole
 * namespace must not stall the device for seconds.
 */
void ftl_trim_range(Ftl *f, uint64_t lpn, uint64_t n)
{
    uint64_t end = lpn + n;

    while (lpn < end) {
        uint64_t c = lpn >> FTL_CHUNK_SHIFT;
        uint64_t stop = MIN(end, (c + 1) << FTL_CHUNK_SHIFT);
        uint32_t *chunk = f->l2p[c];

        for (; chunk && lpn < stop; lpn++) {
            trim_entry(f, &chunk[lpn & (FTL_CHUNK_SLOTS - 1)], lpn);
        }
        lpn = stop;
    }
}

/*
 * Format: the namespace's data is gone, so every mapping goes and every
 * superblock with data becomes reclaimable at no cost (no valid slots).
 */
void ftl_forget_all(Ftl *f)
{
    for (uint64_t i = 0; i < f->nchunks; i++) {
        if (f->l2p[i] && f->track) {
            ftl_track_mark_chunk(f, i, true);
        }
        huge_free(f->l2p[i]);
        f->l2p[i] = NULL;
    }
    f->mapped = 0;
    for (uint32_t i = 0; i < f->nsb; i++) {
        f->sb[i].valid = 0;
    }
}

/* Sanitize (block erase): every block that held data is erased now. */
void ftl_erase_all(Ftl *f)
{
    ftl_forget_all(f);
    for (uint32_t s = 0; s < FTL_STREAMS; s++) {
        if (f->open[s] != FTL_NO_SB) {
            f->sb[f->open[s]].state = SB_CLOSED;
            f->open[s] = FTL_NO_SB;
        }
    }
    f->victim = FTL_NO_SB;
    f->credit = 0;
    for (uint32_t i = 0; i < f->nsb; i++) {
        SbState st = f->sb[i].state;

        if (st == SB_CLOSED || st == SB_VICTIM) {
            ftl_rmap_drop(f, i);
            if (bb_erase_superblock(f, i)) {
                ftl_put_free(f, i);
            }
        }
    }
}
