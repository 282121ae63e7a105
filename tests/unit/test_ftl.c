/*
 * FTL behaviour on small drives with the real parallelism: mapping
 * invariants, steady-state write amplification, deallocation, wear
 * levelling, bad blocks and placement streams.
 */
#include <stdlib.h>
#include <unistd.h>

#include "h3100_test.h"
#include "model_priv.h"

/* Random writes (and some deallocations) checked against a shadow map. */
START_TEST(test_invariants_after_millions_of_ops)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    H3100Model *m;
    uint64_t slots, ops = 3000000;
    uint8_t *shadow;
    Rng rng;

    cfg.ftl.factory_bad_ppm = 20000;   /* exercise remapped superblocks */
    cfg.ftl.wl_threshold = 8;          /* and wear-levelling moves */
    m = h3100_model_new(&cfg, NULL);
    ck_assert_ptr_nonnull(m);
    h3100_model_set_timing(m, false);
    slots = h3100_user_slots(&cfg);
    shadow = g_malloc0(slots);
    rng_seed(&rng, 7);
    for (uint64_t i = 0; i < ops; i++) {
        uint64_t lpn = rng_below(&rng, slots);
        uint64_t n = 1 + rng_below(&rng, 8);
        bool trim = rng_below(&rng, 10) == 0;

        if (lpn + n > slots) {
            n = slots - lpn;
        }
        io_at(m, 0, trim ? H3100_OP_DEALLOCATE : H3100_OP_WRITE, lpn * 4096,
              n * 4096);
        memset(shadow + lpn, !trim, n);
        if (i % 1000000 == 0) {
            assert_invariants(m);
        }
    }
    assert_invariants(m);
    for (uint64_t lpn = 0; lpn < slots; lpn++) {
        ck_assert_msg(h3100_model_is_mapped(m, lpn * 4096) == shadow[lpn],
                      "lpn %" PRIu64 " lost or resurrected by reclaim", lpn);
    }
    g_free(shadow);
    h3100_model_free(m);
}
END_TEST

/*
 * Greedy reclaim beats the FIFO formula when superblocks are small; with
 * blocks of 128 word lines (24,576 slots per superblock here, 147,456 at
 * 0.8 TB) it comes within a few percent of it, as at full size.
 */
static double steady_waf(H3100Family family)
{
    H3100Config cfg = small_config(family, 1, 384);
    H3100Model *m;

    /* 1024 superblocks, so the reclaim reserve is as small a share of the
     * drive as at full size */
    ck_assert(h3100_config_apply(&cfg, "blocks_per_plane=1040,spare_blocks_per_plane=16,gc_bg_free=2,"
                                 "gc_fg_free=1", NULL));
    cfg.geo.user_bytes = (uint64_t)(h3100_raw_data_bytes(&cfg) /
                                    (family == H3100_FAMILY_H3100 ? 1.374
                                                                  : 1.145)) /
                         4096 * 4096;
    m = h3100_model_new(&cfg, NULL);
    H3100Health before, after;
    GError *err = NULL;

    /* fill, reach steady state, then measure one more capacity */
    ck_assert_msg(h3100_model_precondition(m, "rand:3", 3, NULL, NULL, &err),
                  "%s", err ? err->message : "");
    h3100_model_health(m, 0, &before);
    ck_assert(random_writes(m, h3100_user_slots(&cfg), 4));
    h3100_model_health(m, 0, &after);
    assert_invariants(m);
    h3100_model_free(m);
    return (double)(after.nand_write_bytes - before.nand_write_bytes) /
           (after.host_write_bytes - before.host_write_bytes);
}

START_TEST(test_waf_h3100)
{
    double waf = steady_waf(H3100_FAMILY_H3100);

    /* x = exp(-a(1-x)), WAF = 1/(1-x), a = 1.374: 2.04 */
    ck_assert_double_eq_tol(waf_formula(1.374), 2.04, 0.01);
    ck_assert_msg(fabs(waf / 2.04 - 1) <= 0.05, "H3100 WAF %.3f", waf);
}
END_TEST

START_TEST(test_waf_h3200)
{
    double waf = steady_waf(H3100_FAMILY_H3200);

    ck_assert_double_eq_tol(waf_formula(1.145), 4.12, 0.02);
    ck_assert_msg(fabs(waf / 4.12 - 1) <= 0.05, "H3200 WAF %.3f", waf);
}
END_TEST

/* Writing only 70% of the LBAs after deallocating the rest is cheaper. */
START_TEST(test_trim_lowers_waf)
{
    double waf[2];

    for (int trim = 0; trim < 2; trim++) {
        H3100Model *m = tiny_model(H3100_FAMILY_H3100, 1);
        uint64_t slots = h3100_user_slots(h3100_model_config(m));
        uint64_t keep = slots * 7 / 10;
        H3100Health a, b;
        Rng rng;

        h3100_model_set_timing(m, false);
        ck_assert(h3100_model_precondition(m, "seq", 1, NULL, NULL, NULL));
        if (trim) {
            io_at(m, 0, H3100_OP_DEALLOCATE, keep * 4096,
                  (slots - keep) * 4096);
        }
        rng_seed(&rng, 5);
        for (uint64_t i = 0; i < 3 * slots; i++) {
            io_at(m, 0, H3100_OP_WRITE, rng_below(&rng, keep) * 4096, 4096);
        }
        h3100_model_health(m, 0, &a);
        for (uint64_t i = 0; i < slots; i++) {
            io_at(m, 0, H3100_OP_WRITE, rng_below(&rng, keep) * 4096, 4096);
        }
        h3100_model_health(m, 0, &b);
        waf[trim] = (double)(b.nand_write_bytes - a.nand_write_bytes) /
                    (b.host_write_bytes - a.host_write_bytes);
        assert_invariants(m);
        h3100_model_free(m);
    }
    /* 70% of the span with the rest trimmed: a = 1.374 / 0.7 */
    ck_assert_msg(waf[1] < waf[0] * 0.75, "WAF %.3f with TRIM, %.3f without",
                  waf[1], waf[0]);
    ck_assert_msg(fabs(waf[1] / waf_formula(1.374 / 0.7) - 1) < 0.1,
                  "WAF %.3f with 30%% trimmed, formula %.3f", waf[1],
                  waf_formula(1.374 / 0.7));
}
END_TEST

/* 90% of writes to 10% of the LBAs; the rest written once. */
static uint32_t wear_spread(bool wl)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    uint64_t slots, hot;
    H3100Model *m;
    H3100Health h;
    Rng rng;

    cfg.ftl.wl_enabled = wl;
    cfg.ftl.wl_threshold = 20;
    cfg.ftl.factory_bad_ppm = 0;
    m = h3100_model_new(&cfg, NULL);
    h3100_model_set_timing(m, false);
    slots = h3100_user_slots(&cfg);
    hot = slots / 10;
    ck_assert(h3100_model_precondition(m, "seq", 1, NULL, NULL, NULL));
    rng_seed(&rng, 11);
    for (uint64_t i = 0; i < 60 * slots; i++) {
        uint64_t lpn = rng_below(&rng, 10) ? rng_below(&rng, hot)
                                           : rng_below(&rng, slots);
        io_at(m, 0, H3100_OP_WRITE, lpn * 4096, 4096);
    }
    h3100_model_health(m, 0, &h);
    assert_invariants(m);
    h3100_model_free(m);
    return h.erase_max - h.erase_min;
}

START_TEST(test_wear_levelling_bounds_spread)
{
    uint32_t with = wear_spread(true), without = wear_spread(false);

    ck_assert_msg(with <= 2 * 20, "spread %u with static WL (threshold 20)",
                  with);
    ck_assert_msg(without > with * 2, "spread %u without WL, %u with",
                  without, with);
}
END_TEST

START_TEST(test_factory_bad_blocks)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    H3100Model *m;
    H3100Health h;

    cfg.ftl.factory_bad_ppm = 10000;
    m = h3100_model_new(&cfg, NULL);
    h3100_model_health(m, 0, &h);
    /* 16 planes x 264 blocks at 1%: about 42 */
    ck_assert_uint_gt(h.factory_bad_blocks, 15);
    ck_assert_uint_lt(h.factory_bad_blocks, 90);
    ck_assert_uint_eq(h.available_spare_pct, 100);
    h3100_model_free(m);

    /* more bad blocks than the spares can cover: the drive is refused */
    cfg.ftl.factory_bad_ppm = 400000;
    ck_assert_ptr_null(h3100_model_new(&cfg, NULL));
}
END_TEST

START_TEST(test_grown_bad_blocks_until_read_only)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    H3100Model *m;
    H3100Health h;
    uint32_t last_spare = 100;
    bool read_only = false;

    cfg.ftl.factory_bad_ppm = 0;
    cfg.ftl.rated_pe = 30;
    cfg.ftl.grown_bad_ppm = 50000;     /* 5% per erase at rated wear */
    m = h3100_model_new(&cfg, NULL);
    for (int round = 0; round < 400 && !read_only; round++) {
        read_only = !random_writes(m, h3100_user_slots(&cfg) / 2, round);
        h3100_model_health(m, 0, &h);
        ck_assert_uint_le(h.available_spare_pct, last_spare);
        last_spare = h.available_spare_pct;
        /* erase-count range kept as blocks go bad (ftl_check) */
        assert_invariants(m);
    }
    h3100_model_health(m, 0, &h);
    ck_assert_msg(read_only, "never ran out of spares (spare %u%%)",
                  h.available_spare_pct);
    ck_assert(h.read_only);
    ck_assert_uint_gt(h.grown_bad_blocks, 0);
    ck_assert_uint_gt(h.percentage_used, 50);
    ck_assert_int_eq(io_at(m, 0, H3100_OP_WRITE, 0, 4096).status,
                     H3100_READ_ONLY);
    ck_assert_int_eq(io_at(m, 0, H3100_OP_READ, 0, 4096).status, H3100_OK);
    assert_invariants(m);
    h3100_model_free(m);
}
END_TEST

/*
 * The erase-count range SMART reports follows blocks that leave use: a
 * worn-out block at the top, and a retired superblock's blocks at the
 * bottom of the range.
 */
START_TEST(test_erase_range_follows_bad_blocks)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    H3100Model *m;
    BadBlocks *bb;
    H3100Health h;
    uint32_t nsb;

    cfg.ftl.factory_bad_ppm = 0;
    cfg.ftl.rated_pe = 30;
    cfg.ftl.grown_bad_ppm = 1000000;   /* certain failure past rated */
    m = h3100_model_new(&cfg, NULL);
    bb = &m->ftl.bb;
    nsb = m->ftl.nsb;

    /* superblock 1 wears out until no plane has a spare left */
    bb_age_superblock(&m->ftl, 1, 1000);
    h3100_model_health(m, 0, &h);
    ck_assert_uint_eq(h.erase_max, 0);     /* replaced by fresh spares */
    for (int i = 0; i < 100 && bb->spares_left[0]; i++) {
        bb_age_superblock(&m->ftl, 1, 1000);
    }
    ck_assert_uint_eq(bb->spares_left[0], 0);

    /* the others age, the last spares of 1 too; superblock 0 the least */
    for (uint32_t sb = 1; sb < nsb; sb++) {
        bb_age_superblock(&m->ftl, sb, 1000);
    }
    bb_age_superblock(&m->ftl, 0, 100);
    h3100_model_health(m, 0, &h);
    ck_assert_uint_eq(h.erase_min, 100);
    ck_assert_uint_eq(h.erase_max, 1000);

    /* its next erase fails with no spare: it retires, the minimum rises */
    ck_assert(!bb_erase_superblock(&m->ftl, 0));
    h3100_model_health(m, 0, &h);
    ck_assert_uint_eq(h.erase_min, 1000);
    ck_assert_uint_eq(h.erase_max, 1000);
    h3100_model_free(m);
}
END_TEST

/* Hot data on stream 1 and cold on stream 2 separate; WAF drops. */
START_TEST(test_streams_separate_hot_and_cold)
{
    double waf[2];

    for (int streams = 0; streams < 2; streams++) {
        H3100Model *m = tiny_model(H3100_FAMILY_H3100, 1);
        uint64_t slots = h3100_user_slots(h3100_model_config(m));
        uint64_t hot = slots / 5;
        H3100Health a, b;
        Rng rng;

        h3100_model_set_timing(m, false);
        rng_seed(&rng, 21);
        for (int phase = 0; phase < 2; phase++) {
            h3100_model_health(m, 0, &a);
            for (uint64_t i = 0; i < 6 * slots; i++) {
                bool is_hot = rng_below(&rng, 10) < 8;
                uint64_t lpn = is_hot ? rng_below(&rng, hot)
                                      : hot + rng_below(&rng, slots - hot);
                H3100Io io = {
                    .op = H3100_OP_WRITE, .offset = lpn * 4096, .length = 4096,
                    .stream = streams ? (is_hot ? 1 : 2) : 0,
                };
                h3100_model_submit(m, 0, &io);
            }
        }
        h3100_model_health(m, 0, &b);
        waf[streams] = (double)(b.nand_write_bytes - a.nand_write_bytes) /
                       (b.host_write_bytes - a.host_write_bytes);
        assert_invariants(m);
        h3100_model_free(m);
    }
    ck_assert_msg(waf[1] < waf[0] * 0.9, "WAF %.3f with streams, %.3f "
                  "without", waf[1], waf[0]);
}
END_TEST

/*
 * Which reverse maps a drive holds (ftl_rmap.c) is a cache: a drive that
 * keeps one young map and lists no victim ahead, and so passes over the
 * logical map for nearly every victim, must answer every command at the same
 * time with the same status, and end with the same counters, as one with
 * the usual share; through hot and cold streams, reads, deallocations,
 * wear-levelling victims, idle reclaim, and a save and load (which drops
 * every map).
 */
static H3100Model *cache_model(const H3100Config *cfg, bool starved)
{
    H3100Model *m = h3100_model_new(cfg, NULL);

    ck_assert_ptr_nonnull(m);
    if (starved) {
        m->ftl.rmap.young_cap = 1;
        m->ftl.rmap.list_share = 0;
    }
    return m;
}

static H3100Model *save_and_load(H3100Model *m, const H3100Config *cfg,
                                 bool starved)
{
    g_autofree char *path = g_strdup_printf("%s/h3100-rmap-%d-%d",
                                            g_get_tmp_dir(), (int)getpid(),
                                            starved);
    GError *err = NULL;
    H3100Model *back;

    ck_assert_msg(h3100_model_save(m, path, &err), "%s",
                  err ? err->message : "");
    back = h3100_model_load(cfg, path, &err);
    ck_assert_msg(back, "%s", err ? err->message : "");
    unlink(path);
    h3100_model_free(m);
    if (starved) {
        back->ftl.rmap.young_cap = 1;
        back->ftl.rmap.list_share = 0;
    }
    return back;
}

static void check_cache_invisible(H3100Config cfg)
{
    H3100Model *m[2];
    uint64_t slots, hot, now = 0;
    H3100Health h[2];
    Rng rng;

    cfg.ftl.wl_threshold = 8;
    slots = h3100_user_slots(&cfg);
    hot = slots / 5;
    for (int k = 0; k < 2; k++) {
        m[k] = cache_model(&cfg, k);
    }
    rng_seed(&rng, 5);
    for (uint64_t i = 0; i < 4 * slots; i++) {
        uint32_t pick = rng_below(&rng, 100);
        bool is_hot = rng_below(&rng, 10) < 8;
        uint64_t lpn = is_hot ? rng_below(&rng, hot)
                              : hot + rng_below(&rng, slots - hot - 8);
        H3100Io io = {
            .op = pick < 80 ? H3100_OP_WRITE : pick < 95 ? H3100_OP_READ
                                                         : H3100_OP_DEALLOCATE,
            .offset = lpn * 4096, .length = 4096 << rng_below(&rng, 3),
            .stream = is_hot ? 1 : 2,
        };
        H3100Result r[2];

        /* now and then a pause long enough for idle reclaim */
        now += rng_below(&rng, 1000) ? 2000 : 5000000;
        for (int k = 0; k < 2; k++) {
            r[k] = h3100_model_submit(m[k], now, &io);
        }
        ck_assert_msg(r[0].done_ns == r[1].done_ns &&
                      r[0].status == r[1].status, "command %" PRIu64
                      ": %" PRIu64 " ns (status %d) with the usual maps, %"
                      PRIu64 " (%d) with two", i, r[0].done_ns, r[0].status,
                      r[1].done_ns, r[1].status);
        if (i == 2 * slots) {
            for (int k = 0; k < 2; k++) {
                assert_invariants(m[k]);
                m[k] = save_and_load(m[k], &cfg, k);
                h3100_model_reset_time(m[k]);
            }
            now = 0;
        }
    }
    for (int k = 0; k < 2; k++) {
        assert_invariants(m[k]);
        h3100_model_health(m[k], now, &h[k]);
    }
    ck_assert_uint_eq(h[0].nand_write_bytes, h[1].nand_write_bytes);
    ck_assert_uint_eq(h[0].gc_slots_moved, h[1].gc_slots_moved);
    ck_assert_uint_eq(h[0].gc_victims, h[1].gc_victims);
    ck_assert_uint_eq(h[0].wl_victims, h[1].wl_victims);
    ck_assert_uint_gt(h[0].wl_victims, 0);
    ck_assert_uint_eq(h[0].block_erases, h[1].block_erases);
    ck_assert_uint_eq(h[0].mapped_bytes, h[1].mapped_bytes);
    /* the starved drive built a map for most of its victims, the other
     * for fewer, several maps at a time */
    ck_assert_uint_gt(m[1]->ftl.rmap.scans, h[1].gc_victims / 2);
    ck_assert_uint_lt(m[0]->ftl.rmap.scans, m[1]->ftl.rmap.scans / 2);
    ck_assert_uint_gt(m[0]->ftl.rmap.built, 2 * m[0]->ftl.rmap.scans);
    for (int k = 0; k < 2; k++) {
        h3100_model_free(m[k]);
    }
}

START_TEST(test_reverse_map_cache_is_invisible)
{
    check_cache_invisible(tiny_config(H3100_FAMILY_H3100, 1));
}
END_TEST

/*
 * The same where a superblock's slots have too small a power-of-two
 * factor for the pass's granule bitmap (ftl_rmap.c: GRANULE_BITMAP_MAX),
 * so that it divides every entry of the logical map instead: 3 dies a
 * channel and 15 word lines a block.
 */
START_TEST(test_reverse_map_cache_odd_geometry)
{
    H3100Config cfg = small_config(H3100_FAMILY_H3100, 3, 45);

    ck_assert_uint_lt(__builtin_ctzll(h3100_slots_per_superblock(&cfg)), 10);
    check_cache_invisible(cfg);
}
END_TEST

/*
 * Deallocation used to walk every 4 KiB slot; now it skips map chunks
 * never written.  This is the old walk, the reference that the model's
 * deallocation must match exactly.
 */
static void trim_slot_by_slot(Ftl *f, uint64_t lpn, uint64_t n)
{
    for (uint64_t i = lpn; i < lpn + n; i++) {
        uint32_t old = ftl_lookup(f, i);

        if (old != FTL_UNMAPPED) {
            ftl_invalidate(f, old);
            ftl_map_set(f, i, FTL_UNMAPPED);
            f->stats.trimmed_slots++;
        }
    }
}

/* Map chunks 0 and 2 in part, leave chunk 1 unwritten. */
static H3100Model *holey_model(const H3100Config *cfg)
{
    H3100Model *m = h3100_model_new(cfg, NULL);
    uint64_t slots = h3100_user_slots(cfg);
    Rng rng;

    ck_assert_uint_ge(m->ftl.nchunks, 3);
    h3100_model_set_timing(m, false);
    rng_seed(&rng, 17);
    for (int i = 0; i < 200000; i++) {
        uint64_t lpn = rng_below(&rng, FTL_CHUNK_SLOTS);

        if (i % 2) {
            lpn += 2 * FTL_CHUNK_SLOTS;
            lpn = lpn < slots ? lpn : slots - 1;
        }
        io_at(m, 0, H3100_OP_WRITE, lpn * 4096, 4096);
    }
    ck_assert_ptr_null(m->ftl.l2p[1]);
    return m;
}

static void write_on_both(H3100Model *a, H3100Model *b, uint64_t lpn)
{
    io_at(a, 0, H3100_OP_WRITE, lpn * 4096, 4096);
    io_at(b, 0, H3100_OP_WRITE, lpn * 4096, 4096);
}

static void assert_same_ftl(const Ftl *a, const Ftl *b)
{
    for (uint64_t lpn = 0; lpn < a->user_slots; lpn++) {
        ck_assert_uint_eq(ftl_lookup(a, lpn), ftl_lookup(b, lpn));
    }
    for (uint32_t i = 0; i < a->nsb; i++) {
        ck_assert_uint_eq(a->sb[i].valid, b->sb[i].valid);
        ck_assert_uint_eq(a->sb[i].wp, b->sb[i].wp);
        ck_assert_uint_eq(a->sb[i].state, b->sb[i].state);
    }
    ck_assert_uint_eq(a->mapped, b->mapped);
    ck_assert_uint_eq(a->nfree, b->nfree);
    ck_assert_uint_eq(a->victim, b->victim);
    ck_assert_mem_eq(&a->stats, &b->stats, sizeof(a->stats));
    for (uint64_t c = 0; c < a->nchunks; c++) {
        ck_assert((a->l2p[c] == NULL) == (b->l2p[c] == NULL));
    }
}

START_TEST(test_range_trim_matches_slot_by_slot)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 2);
    const H3100CtrlTiming *c = &cfg.ctrl;
    H3100Model *m = holey_model(&cfg), *ref = holey_model(&cfg);
    uint64_t first = 1000, last = 2 * FTL_CHUNK_SLOTS + 5000;
    uint64_t off = first * 4096 + 512, end = last * 4096 + 1000;
    uint64_t slots = h3100_user_slots(&cfg), now = 1000;
    H3100Result r;

    /* a deallocation with partial ends keeps those two slots */
    write_on_both(m, ref, first);
    write_on_both(m, ref, last);
    io_at(m, 0, H3100_OP_DEALLOCATE, off, end - off);
    trim_slot_by_slot(&ref->ftl, first + 1, last - first - 1);
    ck_assert(h3100_model_is_mapped(m, first * 4096));
    ck_assert(h3100_model_is_mapped(m, last * 4096));
    assert_same_ftl(&m->ftl, &ref->ftl);
    ck_assert_uint_gt(m->ftl.stats.trimmed_slots, 50000);

    /* write zeroes with partial ends rewrites them */
    first = 2 * FTL_CHUNK_SLOTS + 6000;
    last = 2 * FTL_CHUNK_SLOTS + 9000;
    write_on_both(m, ref, first);
    write_on_both(m, ref, last);
    io_at(m, 0, H3100_OP_WRITE_ZEROES, first * 4096 + 100,
          (last - first) * 4096 + 100);
    ck_assert(ftl_write(&ref->ftl, first, 0));
    trim_slot_by_slot(&ref->ftl, first + 1, last - first - 1);
    ck_assert(ftl_write(&ref->ftl, last, 0));
    assert_same_ftl(&m->ftl, &ref->ftl);
    assert_invariants(m);

    /* the whole namespace, over mapped and unmapped chunks alike */
    io_at(m, 0, H3100_OP_DEALLOCATE, 0, slots * 4096);
    trim_slot_by_slot(&ref->ftl, 0, slots);
    assert_same_ftl(&m->ftl, &ref->ftl);
    ck_assert_uint_eq(m->ftl.mapped, 0);
    assert_invariants(m);
    h3100_model_free(m);
    h3100_model_free(ref);

    /* and it takes the time it always took: per slot, mapped or not */
    m = h3100_model_new(&cfg, NULL);
    r = io_at(m, now, H3100_OP_DEALLOCATE, 0, slots * 4096);
    ck_assert_uint_eq(r.done_ns, now + cfg.link.sq_fetch_ns +
                      c->trim_cmd_ns + slots * c->trim_slot_ns +
                      cfg.link.cq_post_ns);
    h3100_model_free(m);
}
END_TEST

/* The FTL's dividers (divide.h) against the hardware's division. */
static void check_divider(uint32_t d, uint32_t n)
{
    Divider q = divider(d);

    ck_assert_msg(divide(&q, n) == n / d && modulo(&q, n) == n % d &&
                  divisible(&q, n) == (n % d == 0),
                  "%u / %u: %u rem %u, divisible %d", n, d, divide(&q, n),
                  modulo(&q, n), divisible(&q, n));
}

START_TEST(test_dividers_match_division)
{
    const uint32_t odd[] = {
        147456, 73728, 1152, 4608, 65535, 65536, 65537, 1000003,
        UINT32_MAX / 2, UINT32_MAX / 2 + 1, UINT32_MAX - 1, UINT32_MAX,
    };
    uint32_t divisors[300 + G_N_ELEMENTS(odd)];
    Rng rng;

    rng_seed(&rng, 11);
    for (uint32_t i = 0; i < G_N_ELEMENTS(divisors); i++) {
        divisors[i] = i < 300 ? i + 1 : odd[i - 300];
    }
    for (uint32_t i = 0; i < G_N_ELEMENTS(divisors); i++) {
        uint32_t d = divisors[i];
        const uint32_t edge[] = {
            0, 1, d - 1, d, d + 1, (UINT32_MAX / d) * d - 1,
            (UINT32_MAX / d) * d, UINT32_MAX - 1, UINT32_MAX,
        };

        for (uint32_t e = 0; e < G_N_ELEMENTS(edge); e++) {
            check_divider(d, edge[e]);
        }
        for (uint32_t k = 0; k < 20000; k++) {
            check_divider(d, (uint32_t)rng_next(&rng));
        }
    }
}
END_TEST

/* a case of its own for the test command to run beside the others */
static void ftl_case(Suite *s, const char *name, const TTest *const *tests)
{
    TCase *tc = tcase_create(name);

    tcase_set_timeout(tc, 300);
    for (; *tests; tests++) {
        tcase_add_test(tc, *tests);
    }
    suite_add_tcase(s, tc);
}

/*
 * Cases of about equal length, so the test command runs them side by
 * side (CK_RUN_CASE, tests/meson.build)
 */
static Suite *ftl_suite(void)
{
    const TTest *const basic[] = {
        test_invariants_after_millions_of_ops, test_trim_lowers_waf,
        test_factory_bad_blocks, test_grown_bad_blocks_until_read_only,
        test_erase_range_follows_bad_blocks,
        test_streams_separate_hot_and_cold, test_dividers_match_division,
        NULL,
    };
    const TTest *const waf[] = {
        test_waf_h3100, test_waf_h3200, NULL,
    };
    const TTest *const wear[] = {
        test_wear_levelling_bounds_spread, test_range_trim_matches_slot_by_slot,
        NULL,
    };
    const TTest *const rmap[] = {
        test_reverse_map_cache_is_invisible,
        test_reverse_map_cache_odd_geometry, NULL,
    };
    Suite *s = suite_create("ftl");

    ftl_case(s, "ftl", basic);
    ftl_case(s, "ftl-waf", waf);
    ftl_case(s, "ftl-wear", wear);
    ftl_case(s, "ftl-rmap", rmap);
    return s;
}

int main(void)
{
    return h3100_test_main(ftl_suite());
}
