/*
 * A drive that ages (models/ecc.c): the read tail grows with wear and
 * the data's age, the same seed gives the same reads, and only past the
 * rated life do reads become uncorrectable.
 */
#include <string.h>
#include <unistd.h>

#include "h3100_test.h"
#include "h3100/lathist.h"
#include "ecc.h"

#define READS 20000u

typedef struct Aged {
    H3100LatHist lat;
    uint64_t uncorrectable;           /* reads answered so */
    H3100Health h;
} Aged;

/* @reads random 4 KiB reads at queue depth 1 of a filled drive worn by
 * @pre (a precondition), its data @age_days old. */
static void run_aged(const char *pre, uint32_t age_days, uint64_t seed,
                     unsigned reads, Aged *out)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    uint64_t slots, now = 0;
    H3100Model *m;
    GError *err = NULL;
    Rng rng;

    cfg.rel.age_days = age_days;
    cfg.seed = seed;
    m = h3100_model_new(&cfg, &err);
    ck_assert_msg(m, "%s", err ? err->message : "?");
    ck_assert_msg(h3100_model_precondition(m, pre, seed, NULL, NULL, &err),
                  "%s", err ? err->message : "?");
    slots = h3100_user_slots(&cfg);
    memset(out, 0, sizeof(*out));
    h3100_lathist_reset(&out->lat);
    rng_seed(&rng, seed);
    for (unsigned i = 0; i < reads; i++) {
        H3100Result r = io_at(m, now, H3100_OP_READ,
                              rng_below(&rng, slots) * 4096, 4096);

        h3100_lathist_add(&out->lat, r.done_ns - now);
        out->uncorrectable += r.status == H3100_UNCORRECTABLE;
        now = r.done_ns;
    }
    h3100_model_health(m, now, &out->h);
    ck_assert_ptr_null(h3100_model_check(m));
    h3100_model_free(m);
}

static double p999_us(const Aged *a)
{
    return h3100_lathist_quantile(&a->lat, 0.999) / 1e3;
}

START_TEST(test_read_tail_grows_with_wear)
{
    Aged fresh, worn, old;

    run_aged("seq", 0, 1, READS, &fresh);
    run_aged("wear:90+seq", 0, 1, READS, &worn);
    run_aged("wear:90+seq", 90, 1, READS, &old);
    printf("4 KiB read p99.9 (us): fresh %.1f, 90%% worn %.1f, "
           "and 90 days old %.1f; retried %" PRIu64 "\n", p999_us(&fresh),
           p999_us(&worn), p999_us(&old), old.h.ecc_retries);
    ck_assert_uint_eq(fresh.h.ecc_retries, 0);
    ck_assert(p999_us(&worn) > p999_us(&fresh) * 1.02);
    ck_assert(p999_us(&old) > p999_us(&worn) * 1.3);
    ck_assert_uint_gt(old.h.ecc_retries, 0);
    /* within the rated life nothing is lost */
    ck_assert_uint_eq(old.uncorrectable, 0);
    ck_assert(old.h.percentage_used >= 88 && old.h.percentage_used <= 90);
}
END_TEST

/*
 * A read retried at shifted voltages: its first decode met the most
 * errors and took the longest; each retry's decode is at most as long.
 */
START_TEST(test_retried_decode_slows_first)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    EccPage page = {
        .page = 7, .ptype = 2, .erase_count = cfg.ftl.rated_pe,
        .age_hours = 90 * 24, .codewords = 4,
    };
    EccOutcome o = { 0 };
    uint64_t draw;

    for (draw = 0; draw < 100000 && !o.retries; draw++) {
        ecc_decode(&cfg, cfg.seed, &page, draw, NULL, &o);
    }
    ck_assert_msg(o.retries, "no retried read in %" PRIu64 " draws", draw);
    printf("retried read: %u retries, decodes %" PRIu64 " .. %" PRIu64
           " ns\n", o.retries, o.hard_ns[0], o.hard_ns[o.retries]);
    ck_assert_uint_gt(o.hard_ns[0], o.hard_ns[o.retries]);
    ck_assert_uint_gt(o.hard_ns[0], cfg.ctrl.ecc_ns);
    for (uint32_t i = 1; i <= o.retries; i++) {
        ck_assert_uint_le(o.hard_ns[i], o.hard_ns[i - 1]);
        ck_assert_uint_ge(o.hard_ns[i], cfg.ctrl.ecc_ns);
    }
}
END_TEST

/*
 * The memo's shortcut for reads that cannot fail gives the outcome the
 * full decode gives, over wear from fresh to past the rated count, ages
 * from none to a year, every page type and codeword count; and it is
 * taken (the drive's usual reads cost no draw).
 */
START_TEST(test_memo_decodes_the_same)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    EccMemo memo = { 0 };
    uint64_t draw = 0, sure = 0, all = 0, young_sure = 0, young = 0;
    Rng rng;

    rng_seed(&rng, 11);
    for (uint32_t ec = 0; ec <= cfg.ftl.rated_pe * 3 / 2; ec += 97) {
        for (int i = 0; i < 200; i++) {
            EccPage page = {
                .page = rng_below(&rng, 1u << 30),
                .ptype = rng_below(&rng, H3100_PAGE_TYPES),
                .erase_count = ec,
                /* half of them up to a year old, half up to a day */
                .age_hours = rng_below(&rng, (i % 2 ? 365 : 1) * 24 * 4) / 4.0,
                .codewords = 1 + rng_below(&rng, 8),
            };
            EccOutcome a, b, c;

            ecc_decode(&cfg, cfg.seed, &page, draw, NULL, &a);
            ecc_decode(&cfg, cfg.seed, &page, draw, &memo, &b);
            bool is_sure = ecc_read_is_sure(&cfg, &page, &memo, &c);
            bool is_young = ec < cfg.ftl.rated_pe / 20 &&
                            page.age_hours < 24;

            sure += is_sure;
            young += is_young;
            young_sure += is_young && is_sure;
            ck_assert_msg(a.retries == b.retries && a.soft == b.soft &&
                          a.uncorrectable == b.uncorrectable &&
                          !memcmp(a.hard_ns, b.hard_ns,
                                  (a.retries + 1) * sizeof(a.hard_ns[0])),
                          "erase count %u, %.2f h, type %u: %u retries "
                          "(memo %u), %" PRIu64 " ns (memo %" PRIu64 ")",
                          ec, page.age_hours, page.ptype, a.retries,
                          b.retries, a.hard_ns[0], b.hard_ns[0]);
            draw++;
            all++;
        }
    }
    printf("memo: %" PRIu64 " of %" PRIu64 " reads sure, %" PRIu64 " of %"
           PRIu64 " under 5%% of the rated wear and a day old\n",
           sure, all, young_sure, young);
    /* the shortcut is for a fresh drive's reads, not a worn one's */
    ck_assert_uint_gt(young_sure, young * 9 / 10);
    ck_assert_uint_lt(sure, all / 2);
}
END_TEST

START_TEST(test_same_seed_same_reads)
{
    Aged a, b, c;

    run_aged("wear:110+seq", 90, 7, READS / 4, &a);
    run_aged("wear:110+seq", 90, 7, READS / 4, &b);
    run_aged("wear:110+seq", 90, 8, READS / 4, &c);
    ck_assert_uint_gt(a.h.ecc_retries, 0);
    ck_assert_uint_eq(a.h.ecc_retries, b.h.ecc_retries);
    ck_assert_uint_eq(a.h.ecc_soft_decodes, b.h.ecc_soft_decodes);
    ck_assert_uint_eq(a.lat.max, b.lat.max);
    ck_assert(h3100_lathist_mean(&a.lat) == h3100_lathist_mean(&b.lat));
    ck_assert_uint_eq(a.h.grown_bad_blocks, b.h.grown_bad_blocks);
    ck_assert(a.h.ecc_retries != c.h.ecc_retries ||
              h3100_lathist_mean(&a.lat) != h3100_lathist_mean(&c.lat));
}
END_TEST

START_TEST(test_uncorrectable_past_the_limit)
{
    Aged rated, past;

    run_aged("wear:100+seq", 90, 3, READS, &rated);
    run_aged("wear:140+seq", 90, 3, READS, &past);
    ck_assert_uint_eq(rated.uncorrectable, 0);
    ck_assert_uint_gt(past.uncorrectable, 0);
    ck_assert_uint_eq(past.uncorrectable, past.h.ecc_host_uncorrectable);
    ck_assert_uint_gt(past.h.ecc_soft_decodes, past.uncorrectable);
    ck_assert_uint_gt(past.h.grown_bad_blocks, rated.h.grown_bad_blocks / 2);
}
END_TEST

/* wear:PCT is checked, and the counters survive a save. */
START_TEST(test_wear_precondition_and_state)
{
    g_autofree char *path = g_strdup_printf("/tmp/h3100-ecc-%d.state",
                                            (int)getpid());
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    H3100Model *m, *back;
    H3100Health a, b;
    GError *err = NULL;

    ck_assert(!h3100_precondition_valid("wear:", NULL));
    ck_assert(!h3100_precondition_valid("wear:-5", NULL));
    ck_assert(!h3100_precondition_valid("seq+", &err));
    ck_assert_ptr_nonnull(strstr(err->message, "wear:PCT"));
    g_clear_error(&err);
    ck_assert(h3100_precondition_valid("wear:90+rand:0.5", NULL));

    cfg.rel.age_days = 365;
    m = h3100_model_new(&cfg, NULL);
    ck_assert(h3100_model_precondition(m, "wear:130+seq", 5, NULL, NULL,
                                       NULL));
    for (uint64_t i = 0; i < 2000; i++) {
        io_at(m, i * 1000000, H3100_OP_READ, i * 16384 % (64 << 20), 16384);
    }
    h3100_model_health(m, 0, &a);
    ck_assert_uint_gt(a.ecc_soft_decodes, 0);
    ck_assert(fabs(a.erase_avg - cfg.ftl.rated_pe * 1.3) <
              cfg.ftl.rated_pe * 0.02);
    ck_assert(h3100_model_save(m, path, NULL));
    back = h3100_model_load(&cfg, path, &err);
    ck_assert_msg(back, "%s", err ? err->message : "");
    h3100_model_health(back, 0, &b);
    ck_assert_uint_eq(a.ecc_retries, b.ecc_retries);
    ck_assert_uint_eq(a.ecc_soft_decodes, b.ecc_soft_decodes);
    ck_assert_uint_eq(a.ecc_host_uncorrectable, b.ecc_host_uncorrectable);
    ck_assert_uint_eq(a.grown_bad_blocks, b.grown_bad_blocks);
    h3100_model_free(back);
    h3100_model_free(m);
    unlink(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ecc");
    TCase *tc = tcase_create("ecc");

    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_read_tail_grows_with_wear);
    tcase_add_test(tc, test_memo_decodes_the_same);
    tcase_add_test(tc, test_same_seed_same_reads);
    tcase_add_test(tc, test_retried_decode_slows_first);
    tcase_add_test(tc, test_uncorrectable_past_the_limit);
    tcase_add_test(tc, test_wear_precondition_and_state);
    suite_add_tcase(s, tc);
    return h3100_test_main(s);
}
