/*
 * Forgeries of a live model's internals shared by the state-file and
 * migration tests: what a crafted file or stream could carry, with its
 * checksums mended by the save.
 */
#ifndef H3100_FORGE_H
#define H3100_FORGE_H

#include <check.h>

#include "model_priv.h"

/*
 * Reclaim as if it had passed a valid slot of its victim (made from a
 * closed superblock with data if there is none): the cursor just past
 * the first slot the logical map points at.  Resumed, reclaim would
 * erase that slot's data.  (Found by fuzz_state, 2026-12-05.)
 */
static inline void forge_victim_passed(H3100Model *m)
{
    Ftl *f = &m->ftl;
    uint64_t first = f->sps;

    if (f->victim == FTL_NO_SB || !f->sb[f->victim].valid) {
        uint32_t v = FTL_NO_SB;

        for (uint32_t i = 0; i < f->nsb && v == FTL_NO_SB; i++) {
            if (f->sb[i].state == SB_CLOSED && f->sb[i].valid) {
                v = i;
            }
        }
        ck_assert_msg(v != FTL_NO_SB, "no closed superblock with data");
        if (f->victim != FTL_NO_SB) {
            f->sb[f->victim].state = SB_CLOSED;
        }
        f->victim = v;
        f->sb[v].state = SB_VICTIM;
        f->ratio_num = f->ratio_den = 1;
    }
    for (uint64_t lpn = 0; lpn < f->user_slots; lpn++) {
        uint32_t ppn = ftl_lookup(f, lpn);

        if (ppn != FTL_UNMAPPED && ppn / f->sps == f->victim) {
            first = MIN(first, ppn % f->sps);
        }
    }
    ck_assert(first < f->sps);
    f->cursor = first + 1;
}

#endif
