/*
 * Wear levelling.
 *
 * Dynamic: host writes open the least worn free superblock.  Static:
 * reclaim writes into the most worn one (what it moves is cold), and
 * when the erase-count spread passes wl_threshold, the least worn closed
 * superblock becomes reclaim's victim so its cold data moves out and its
 * blocks rejoin the rotation.
 */
#include "ftl.h"

uint32_t ftl_take_free(Ftl *f, bool coldest)
{
    uint32_t best = 0, sb;

    if (!f->nfree) {
        return FTL_NO_SB;
    }
    for (uint32_t i = 1; i < f->nfree; i++) {
        uint32_t ec = f->sb[f->free_list[i]].erase_count;
        uint32_t bec = f->sb[f->free_list[best]].erase_count;

        if (coldest ? ec < bec : ec > bec) {
            best = i;
        }
    }
    sb = f->free_list[best];
    f->free_list[best] = f->free_list[--f->nfree];
    return sb;
}

void ftl_put_free(Ftl *f, uint32_t sb)
{
    f->sb[sb].state = SB_FREE;
    f->sb[sb].valid = 0;
    f->sb[sb].wp = 0;
    f->free_list[f->nfree++] = sb;
}

uint32_t ftl_pick_wear_victim(const Ftl *f)
{
    uint32_t coldest = FTL_NO_SB, min_ec = UINT32_MAX, max_ec = 0;

    if (!f->cfg->ftl.wl_enabled) {
        return FTL_NO_SB;
    }
    for (uint32_t i = 0; i < f->nsb; i++) {
        const Superblock *sb = &f->sb[i];

        if (sb->state == SB_RETIRED) {
            continue;
        }
        if (sb->erase_count > max_ec) {
            max_ec = sb->erase_count;
        }
        if (sb->state == SB_CLOSED && sb->erase_count < min_ec) {
            min_ec = sb->erase_count;
            coldest = i;
        }
    }
    if (coldest == FTL_NO_SB || max_ec - min_ec <= f->cfg->ftl.wl_threshold) {
        return FTL_NO_SB;
    }
    return coldest;
}

/* Block erase counts over every block in use (SMART, OCP log). */
void ftl_erase_counts(const Ftl *f, uint32_t *min, uint32_t *max,
                      double *avg)
{
    const BadBlocks *bb = &f->bb;

    *min = bb->used_blocks ? bb->used_min_erases : 0;
    *max = bb->used_blocks ? bb->used_max_erases : 0;
    *avg = bb->used_blocks ? (double)bb->used_block_erases / bb->used_blocks
                           : 0.0;
}
