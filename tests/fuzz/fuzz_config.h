/*
 * The drive the state-file fuzzer loads into: far smaller than the unit
 * tests' tiny drive (2 dies, 96 blocks per plane, 12 pages per block), so
 * that a state file with data in it is tens of kilobytes and the fuzzer
 * runs thousands of loads a second.  It keeps what the loader checks:
 * factory bad blocks, reclaim reserve, several map chunks (the build
 * script sets FTL_CHUNK_SHIFT small).  Shared by fuzz_state.c and the
 * seed generator, since a file only loads into the drive it came from.
 */
#ifndef H3100_FUZZ_CONFIG_H
#define H3100_FUZZ_CONFIG_H

#include "h3100/model.h"

/* Superblocks the user capacity fills; the rest is the reclaim reserve
 * (FTL_STREAMS + gc_bg_free + 1 of them) and spare. */
#define FUZZ_USER_SUPERBLOCKS 56u

static inline bool fuzz_config(H3100Config *cfg, GError **errp)
{
    if (!h3100_profile_load(cfg, "h3100-0.8t", errp) ||
        !h3100_config_apply(cfg, "channels=2,dies_per_channel=1,"
                            "planes_per_die=2,blocks_per_plane=96,"
                            "spare_blocks_per_plane=4,pages_per_block=12,"
                            "gc_bg_free=2,gc_fg_free=1,"
                            "write_buffer_bytes=2M,"
                            "factory_bad_ppm=20000", errp)) {
        return false;
    }
    cfg->geo.user_bytes = (uint64_t)FUZZ_USER_SUPERBLOCKS *
                          h3100_slots_per_superblock(cfg) * H3100_SLOT_BYTES;
    return h3100_config_validate(cfg, errp);
}

#endif
