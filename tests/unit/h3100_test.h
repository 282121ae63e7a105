/*
 * Helpers shared by the unit tests: small drives with the real
 * parallelism, and workloads driven through the public API.
 */
#ifndef H3100_TEST_H
#define H3100_TEST_H

#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "h3100/model.h"
#include "rng.h"

/*
 * A drive of the given family with 8 channels x @dies_per_channel dies,
 * 2 planes and 256 superblocks, with the user capacity that gives the
 * family's raw/user ratio.  tiny_config has 16 word lines per block
 * (3 GiB raw at 8 dies); the real 384 make reclaim behave as at full
 * size (77 GB raw at 8 dies).
 */
static inline H3100Config small_config(H3100Family family,
                                       uint32_t dies_per_channel,
                                       uint32_t pages_per_block)
{
    H3100Config cfg;
    double ratio = family == H3100_FAMILY_H3100 ? 1.374 : 1.145;
    uint64_t raw;

    ck_assert(h3100_profile_load(&cfg, family == H3100_FAMILY_H3100 ?
                                 "h3100-0.8t" : "h3200-0.96t", NULL));
    ck_assert(h3100_config_apply(&cfg, "blocks_per_plane=264,"
                                 "spare_blocks_per_plane=8,"
                                 "gc_bg_free=4,gc_fg_free=2,"
                                 "write_buffer_bytes=2M", NULL));
    cfg.geo.pages_per_block = pages_per_block;
    cfg.geo.dies_per_channel = dies_per_channel;
    raw = h3100_raw_data_bytes(&cfg);
    cfg.geo.user_bytes = (uint64_t)(raw / ratio) / 4096 * 4096;
    return cfg;
}

static inline H3100Config tiny_config(H3100Family family,
                                      uint32_t dies_per_channel)
{
    return small_config(family, dies_per_channel, 48);
}

static inline H3100Model *tiny_model(H3100Family family,
                                     uint32_t dies_per_channel)
{
    H3100Config cfg = tiny_config(family, dies_per_channel);
    GError *err = NULL;
    H3100Model *m = h3100_model_new(&cfg, &err);

    ck_assert_msg(m, "%s", err ? err->message : "?");
    return m;
}

static inline H3100Result io_at(H3100Model *m, uint64_t now, H3100Op op,
                                uint64_t offset, uint64_t length)
{
    H3100Io io = { .op = op, .offset = offset, .length = length };

    return h3100_model_submit(m, now, &io);
}

/* @n random 4 KiB writes, untimed; false once the drive is read-only. */
static inline bool random_writes(H3100Model *m, uint64_t n, uint64_t seed)
{
    uint64_t slots = h3100_user_slots(h3100_model_config(m));
    bool ok = true;
    Rng rng;

    h3100_model_set_timing(m, false);
    rng_seed(&rng, seed);
    for (uint64_t i = 0; i < n && ok; i++) {
        ok = io_at(m, 0, H3100_OP_WRITE, rng_below(&rng, slots) * 4096,
                   4096).status == H3100_OK;
    }
    h3100_model_set_timing(m, true);
    return ok;
}

static inline double waf_formula(double a)
{
    double x = 0.5;

    for (int i = 0; i < 200; i++) {
        x = exp(-a * (1 - x));
    }
    return 1 / (1 - x);
}

static inline void assert_invariants(H3100Model *m)
{
    char *why = h3100_model_check(m);

    ck_assert_msg(why == NULL, "mapping invariant broken: %s", why);
}

/* Run @s and exit status: the main() of every unit test. */
static inline int h3100_test_main(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
