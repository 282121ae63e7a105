/*
 * The timed model: where latency comes from, the write buffer, read-ahead,
 * suspend, reclaim pacing, the write cliff, determinism, and the
 * front-end operations (format, sanitize, ranges).
 */
#include <stdlib.h>
#include <string.h>

#include "h3100_test.h"
#include "calendar.h"
#include "sim_engine.h"

/* Each run gets its own seed: with one seed every run would rewrite the
 * same blocks, as fio's randrepeat does. */
static SimResult run_spec(H3100Model *m, uint64_t *now, SimRw rw,
                          uint32_t bs, uint32_t qd, uint32_t jobs,
                          double runtime_s)
{
    static uint64_t seed = 100;
    SimSpec spec;
    SimResult res;

    sim_spec_defaults(&spec, h3100_model_config(m));
    spec.seed = seed++;
    spec.rw = rw;
    spec.bs[0].bytes = bs;
    spec.iodepth = qd;
    spec.numjobs = jobs;
    spec.runtime_ns = (uint64_t)(runtime_s * 1e9);
    sim_run(m, &spec, now, &res);
    return res;
}

START_TEST(test_qd1_latency_parts)
{
    H3100Model *m = tiny_model(H3100_FAMILY_H3100, 1);
    const H3100Config *cfg = h3100_model_config(m);
    uint64_t t = 0, unmapped, buffered, nand, write;

    unmapped = io_at(m, t, H3100_OP_READ, 0, 4096).done_ns - t;
    t = 1000000;
    write = io_at(m, t, H3100_OP_WRITE, 0, 4096).done_ns - t;
    t += 100000;
    /* the unit is not full: the data is still in the write buffer */
    buffered = io_at(m, t, H3100_OP_READ, 0, 4096).done_ns - t;
    ck_assert(h3100_model_precondition(m, "seq", 1, NULL, NULL, NULL));
    t += 100000000;
    nand = io_at(m, t, H3100_OP_READ, 40960000, 4096).done_ns - t;

    /* datasheet: 17 us writes; reads cost a NAND read only if mapped */
    ck_assert_uint_ge(write, 16000);
    ck_assert_uint_le(write, 18000);
    ck_assert_uint_lt(unmapped, 20000);
    ck_assert_uint_lt(buffered, 20000);
    ck_assert_uint_ge(nand, unmapped + cfg->nand.t_read_ns[0]);
    ck_assert_uint_le(nand, 100000);
    h3100_model_free(m);
}
END_TEST

START_TEST(test_write_buffer_absorbs_then_stalls)
{
    H3100Model *m = tiny_model(H3100_FAMILY_H3100, 1);
    const H3100Config *cfg = h3100_model_config(m);
    uint64_t t = 0, first, last = 0;
    H3100Health h;
    uint64_t n = cfg->cache.write_buffer_bytes / (128 << 10) * 4;

    /* a burst four times the buffer, all at once */
    first = io_at(m, t, H3100_OP_WRITE, 0, 128 << 10).done_ns;
    for (uint64_t i = 1; i < n; i++) {
        last = io_at(m, t, H3100_OP_WRITE, i * (128 << 10),
                     128 << 10).done_ns;
    }
    h3100_model_health(m, t, &h);
    ck_assert_uint_gt(h.wbuf_stalls, 0);
    /* the last waits for programs: milliseconds, not microseconds */
    ck_assert_uint_gt(last - first, 1000000);
    ck_assert_uint_le(h.wbuf_bytes, cfg->cache.write_buffer_bytes);
    h3100_model_free(m);
}
END_TEST

START_TEST(test_readahead_serves_sequential_reads)
{
    H3100Model *m = tiny_model(H3100_FAMILY_H3100, 1);
    uint64_t now = 0;
    SimResult seq, rnd;

    ck_assert(h3100_model_precondition(m, "seq", 1, NULL, NULL, NULL));
    seq = run_spec(m, &now, SIM_READ, 4096, 1, 1, 0.05);
    rnd = run_spec(m, &now, SIM_RANDREAD, 4096, 1, 1, 0.05);
    ck_assert_uint_gt(seq.health.ra_hits, seq.ios / 2);
    /* datasheet: 15 us sequential, 87 us random */
    ck_assert_double_lt(h3100_lathist_mean(&seq.lat), 20000);
    ck_assert_double_gt(h3100_lathist_mean(&rnd.lat), 60000);
    h3100_model_free(m);
}
END_TEST

static double read_latency_under_writes(uint32_t max_suspends)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    H3100Model *m;
    uint64_t now = 0;
    SimSpec spec;
    SimResult res;

    cfg.nand.max_suspends = max_suspends;
    m = h3100_model_new(&cfg, NULL);
    ck_assert(h3100_model_precondition(m, "seq", 1, NULL, NULL, NULL));
    sim_spec_defaults(&spec, &cfg);
    spec.rw = SIM_RANDRW;
    spec.rwmixread = 30;
    spec.iodepth = 8;
    spec.numjobs = 2;
    spec.runtime_ns = 200000000;
    sim_run(m, &spec, &now, &res);
    if (max_suspends) {
        ck_assert_uint_gt(res.health.suspends, 0);
    } else {
        ck_assert_uint_eq(res.health.suspends, 0);
    }
    h3100_model_free(m);
    return h3100_lathist_quantile(&res.read_lat, 0.5);
}

START_TEST(test_suspend_shortens_reads_during_writes)
{
    double with = read_latency_under_writes(5);
    double without = read_latency_under_writes(0);

    ck_assert_msg(with < without * 0.8, "median read %.0f ns with suspend, "
                  "%.0f without", with, without);
}
END_TEST

/* Fresh random writes run near the sequential rate, then fall. */
START_TEST(test_write_cliff)
{
    H3100Model *m = tiny_model(H3100_FAMILY_H3100, 2);
    const H3100Config *cfg = h3100_model_config(m);
    double cap = cfg->geo.user_bytes, written = 0, fresh = 0, steady = 0;
    double seq_iops;
    uint64_t now = 0;
    SimResult r;

    r = run_spec(m, &now, SIM_WRITE, 128 << 10, 32, 1, 0.2);
    seq_iops = r.mbps * 1e6 / 4096;
    h3100_model_format(m);
    now += 1000000000;
    while (written < 4 * cap) {
        r = run_spec(m, &now, SIM_RANDWRITE, 4096, 32, 4, 0.1);
        ck_assert_uint_gt(r.ios, 0);   /* pacing never stops the host */
        written += r.write_bytes;
        if (!fresh) {
            fresh = r.iops;
        }
        steady = r.iops;
    }
    ck_assert_msg(fresh > 0.7 * seq_iops, "fresh random %.0f IOPS, sequential "
                  "%.0f", fresh, seq_iops);
    ck_assert_msg(steady < 0.6 * fresh, "steady %.0f IOPS, fresh %.0f",
                  steady, fresh);
    assert_invariants(m);
    h3100_model_free(m);
}
END_TEST

typedef struct ReclaimLog {
    uint64_t victims, reads, read_slots, erases;
    uint64_t last_now;
    bool in_order;
} ReclaimLog;

static void log_reclaim(void *opaque, H3100ReclaimStep step, uint64_t now,
                        uint32_t sb, uint64_t a, uint64_t b)
{
    ReclaimLog *l = opaque;

    l->in_order &= now >= l->last_now;
    l->last_now = now;
    switch (step) {
    case H3100_RECLAIM_VICTIM:
        l->victims++;
        break;
    case H3100_RECLAIM_READ:
        l->reads++;
        l->read_slots += a;
        break;
    case H3100_RECLAIM_ERASE:
        l->erases++;
        break;
    }
}

/* Every reclaim step reaches the observer, timed or not. */
/* Each die's array time and each channel's bus time add up and spread. */
START_TEST(test_nand_busy_per_die)
{
    H3100Model *m = tiny_model(H3100_FAMILY_H3100, 2);
    const H3100Config *cfg = h3100_model_config(m);
    uint32_t dies = h3100_dies(cfg), ch = cfg->geo.channels;
    g_autofree uint64_t *die_ns = g_new0(uint64_t, dies);
    g_autofree uint64_t *chan_ns = g_new0(uint64_t, ch);
    uint64_t sum = 0, t = 0;
    H3100Health h;

    for (uint64_t i = 0; i < 4096; i++) {
        t = io_at(m, t, H3100_OP_WRITE, i * (128 << 10) %
                  (h3100_user_slots(cfg) * 4096), 128 << 10).done_ns;
    }
    h3100_model_health(m, t, &h);
    h3100_model_nand_busy(m, die_ns, chan_ns);
    ck_assert_uint_gt(ch, 1);
    for (uint32_t d = 0; d < dies; d++) {
        ck_assert_msg(die_ns[d] > 0, "die %u never busy", d);
        sum += die_ns[d];
    }
    ck_assert_uint_eq(sum, h.nand_busy_ns);
    for (uint32_t c = 0; c < ch; c++) {
        ck_assert_msg(chan_ns[c] > 0, "channel %u never busy", c);
    }
    h3100_model_free(m);
}
END_TEST

START_TEST(test_reclaim_observer)
{
    H3100Model *m = tiny_model(H3100_FAMILY_H3100, 1);
    uint64_t slots = h3100_user_slots(h3100_model_config(m));
    ReclaimLog l = { .in_order = true };
    uint64_t now = 0;
    H3100Health h;
    Rng rng;

    h3100_model_set_reclaim_observer(m, log_reclaim, &l);
    ck_assert(random_writes(m, 3 * slots, 7));
    rng_seed(&rng, 8);
    for (uint64_t i = 0; i < slots; i++) {
        now += 20000;
        io_at(m, now, H3100_OP_WRITE, rng_below(&rng, slots) * 4096, 4096);
    }
    h3100_model_health(m, now, &h);
    ck_assert_uint_gt(l.victims, 0);
    ck_assert_uint_eq(l.victims, h.gc_victims);
    ck_assert_msg(l.erases + 1 >= l.victims && l.erases <= l.victims,
                  "%" PRIu64 " erases for %" PRIu64 " victims", l.erases,
                  l.victims);
    /* slots a page held when read; host writes may invalidate some */
    ck_assert_uint_ge(l.read_slots, h.gc_slots_moved);
    ck_assert_uint_gt(l.reads, 0);
    ck_assert(l.in_order);

    h3100_model_set_reclaim_observer(m, NULL, NULL);
    l.victims = 0;
    ck_assert(random_writes(m, slots, 9));
    ck_assert_uint_eq(l.victims, 0);
    h3100_model_free(m);
}
END_TEST

typedef struct ReclaimCount {
    uint64_t pages;                   /* pages reclaim read */
    uint64_t moved;                   /* slots it moved out of them */
} ReclaimCount;

static void count_reclaim(void *opaque, H3100ReclaimStep step, uint64_t now,
                          uint32_t sb, uint64_t a, uint64_t b)
{
    ReclaimCount *c = opaque;

    if (step == H3100_RECLAIM_READ) {
        c->pages++;
        c->moved += a;
    }
}

/* core time per host write of @secs of random writes on @span of a drive
 * preconditioned with @pre */
static double core_ns_per_write(uint32_t gc_page_ns, const char *pre,
                                double span, double secs, ReclaimCount *c)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    H3100Health a, b;
    H3100Model *m;
    uint64_t now = 0;
    SimSpec spec;
    SimResult res;

    cfg.ctrl.gc_page_ns = gc_page_ns;
    m = h3100_model_new(&cfg, NULL);
    ck_assert(h3100_model_precondition(m, pre, 1, NULL, NULL, NULL));
    memset(c, 0, sizeof(*c));
    h3100_model_set_reclaim_observer(m, count_reclaim, c);
    sim_spec_defaults(&spec, &cfg);
    spec.rw = SIM_RANDWRITE;
    spec.iodepth = 32;
    spec.span_bytes = (uint64_t)(cfg.geo.user_bytes * span) / 4096 * 4096;
    spec.runtime_ns = (uint64_t)(secs * 1e9);
    h3100_model_health(m, now, &a);
    sim_run(m, &spec, &now, &res);
    h3100_model_health(m, now, &b);
    h3100_model_free(m);
    return (double)(b.core_busy_ns - a.core_busy_ns) /
           (b.host_write_cmds - a.host_write_cmds);
}

/*
 * Reclaim pays the firmware's work for every page it reads (gc_page_ns),
 * however few of its slots are still valid; and once a section of the
 * drive has been written at random long enough, its victims hold fewer
 * valid slots a page than victims of the whole drive written at random:
 * per moved slot they cost more, as on the review's 25% section.
 */
START_TEST(test_reclaim_pays_per_page_read)
{
    ReclaimCount full, full0, part;
    double paid = core_ns_per_write(4200, "rand:1", 1.0, 0.3, &full);
    double unpaid = core_ns_per_write(0, "rand:1", 1.0, 0.3, &full0);

    ck_assert_uint_gt(full.pages, 0);
    ck_assert_double_gt(paid, unpaid);
    /* the review's order: a sequential fill, then the section at random */
    core_ns_per_write(4200, "seq", 0.25, 4, &part);
    ck_assert_uint_gt(part.pages, 0);
    printf("reclaim pages read per moved slot: whole drive %.3f, section "
           "%.3f\n", (double)full.pages / full.moved,
           (double)part.pages / part.moved);
    ck_assert_double_gt((double)part.pages / part.moved,
                        1.2 * full.pages / full.moved);
}
END_TEST

START_TEST(test_idle_time_reclaims)
{
    H3100Model *m = tiny_model(H3100_FAMILY_H3100, 1);
    H3100Health before, after;
    uint64_t now = 0;

    ck_assert(h3100_model_precondition(m, "rand:2", 1, NULL, NULL, NULL));
    run_spec(m, &now, SIM_RANDWRITE, 4096, 32, 1, 0.1);
    h3100_model_health(m, now, &before);
    /* a read after a second of quiet lets background reclaim run */
    io_at(m, now + 1000000000, H3100_OP_READ, 0, 4096);
    h3100_model_health(m, now + 1000000000, &after);
    ck_assert_uint_gt(after.free_superblocks, before.free_superblocks);
    ck_assert_uint_gt(after.gc_slots_moved, before.gc_slots_moved);
    h3100_model_free(m);
}
END_TEST

static void run_twice(uint64_t seed, SimResult *out)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    H3100Model *m;
    uint64_t now = 0;
    SimSpec spec;

    cfg.seed = seed;
    m = h3100_model_new(&cfg, NULL);
    ck_assert(h3100_model_precondition(m, "rand:1", seed, NULL, NULL, NULL));
    sim_spec_defaults(&spec, &cfg);
    spec.rw = SIM_RANDRW;
    spec.iodepth = 16;
    spec.numjobs = 2;
    spec.seed = seed;
    spec.runtime_ns = 100000000;
    sim_run(m, &spec, &now, out);
    h3100_model_free(m);
}

START_TEST(test_same_seed_same_figures)
{
    SimResult a, b, c;

    run_twice(5, &a);
    run_twice(5, &b);
    run_twice(6, &c);
    ck_assert_uint_eq(a.ios, b.ios);
    ck_assert_uint_eq(a.lat.sum, b.lat.sum);
    ck_assert_uint_eq(a.health.nand_write_bytes, b.health.nand_write_bytes);
    ck_assert(a.lat.sum != c.lat.sum);
}
END_TEST

START_TEST(test_timing_off)
{
    H3100Model *m = tiny_model(H3100_FAMILY_H3100, 1);
    H3100Health h;

    h3100_model_set_timing(m, false);
    ck_assert_uint_eq(io_at(m, 5000, H3100_OP_WRITE, 0, 8192).done_ns, 5000);
    ck_assert_uint_eq(io_at(m, 6000, H3100_OP_READ, 0, 8192).done_ns, 6000);
    h3100_model_health(m, 6000, &h);
    ck_assert_uint_eq(h.host_write_bytes, 8192);
    ck_assert_uint_eq(h.host_read_bytes, 8192);
    ck_assert(h3100_model_is_mapped(m, 4096));
    h3100_model_free(m);
}
END_TEST

START_TEST(test_ranges_and_unaligned)
{
    H3100Model *m = tiny_model(H3100_FAMILY_H3100, 1);
    uint64_t cap = h3100_model_config(m)->geo.user_bytes;
    H3100Health h;

    ck_assert_int_eq(io_at(m, 0, H3100_OP_READ, cap, 4096).status,
                     H3100_OUT_OF_RANGE);
    ck_assert_int_eq(io_at(m, 0, H3100_OP_WRITE, cap - 512, 1024).status,
                     H3100_OUT_OF_RANGE);
    ck_assert_int_eq(io_at(m, 0, H3100_OP_WRITE, 0, 0).status,
                     H3100_OUT_OF_RANGE);
    ck_assert_int_eq(io_at(m, 0, H3100_OP_WRITE, cap - 4096, 4096).status,
                     H3100_OK);
    io_at(m, 10, H3100_OP_WRITE, 512, 512);
    io_at(m, 20, H3100_OP_WRITE, 4096 + 1024, 8192);
    h3100_model_health(m, 30, &h);
    ck_assert_uint_eq(h.unaligned_ios, 2);
    ck_assert(h3100_model_is_mapped(m, 0));
    h3100_model_free(m);
}
END_TEST

/* "seq:F" writes the first fraction F of the namespace, nothing else. */
START_TEST(test_partial_fill)
{
    H3100Model *m = tiny_model(H3100_FAMILY_H3100, 1);
    uint64_t bytes = h3100_model_config(m)->geo.user_bytes;
    H3100Health h;

    ck_assert(h3100_model_precondition(m, "seq:0.5", 1, NULL, NULL, NULL));
    h3100_model_health(m, 0, &h);
    ck_assert_uint_eq(h.mapped_bytes, bytes / 4096 / 2 * 4096);
    ck_assert(h3100_model_is_mapped(m, 0));
    ck_assert(h3100_model_is_mapped(m, bytes / 2 - 4096));
    ck_assert(!h3100_model_is_mapped(m, bytes / 2 + 4096));
    ck_assert(!h3100_precondition_valid("seq:0", NULL));
    ck_assert(!h3100_precondition_valid("seq:2", NULL));
    assert_invariants(m);
    h3100_model_free(m);
}
END_TEST

START_TEST(test_format_and_sanitize)
{
    H3100Model *m = tiny_model(H3100_FAMILY_H3100, 1);
    H3100Health before, after;
    uint64_t done;

    ck_assert(h3100_model_precondition(m, "seq", 1, NULL, NULL, NULL));
    h3100_model_format(m);
    ck_assert(!h3100_model_is_mapped(m, 0));
    assert_invariants(m);
    ck_assert(h3100_model_precondition(m, "seq", 1, NULL, NULL, NULL));
    h3100_model_health(m, 0, &before);
    done = h3100_model_sanitize(m, 1000);
    h3100_model_health(m, done, &after);
    ck_assert(!h3100_model_is_mapped(m, 0));
    ck_assert_uint_gt(after.block_erases, before.block_erases);
    ck_assert_uint_eq(after.free_superblocks, after.superblocks);
    /* every die erases every superblock in turn: milliseconds */
    ck_assert_uint_gt(done - 1000, 100 * 1000000ULL);
    assert_invariants(m);
    h3100_model_free(m);
}
END_TEST

/*
 * A calendar's bookings against a plain reference: the earliest start at
 * or after t whose len ns meet no span still held (those that ended
 * after the present), by a scan of every span.
 */
typedef struct RefSpans {
    uint64_t start[512];
    uint64_t end[512];
    uint32_t n;
} RefSpans;

static uint64_t ref_book(RefSpans *r, uint64_t t, uint64_t len,
                         uint64_t forget)
{
    uint64_t start = t;
    bool moved = true;
    uint32_t kept = 0;

    for (uint32_t i = 0; i < r->n; i++) {
        if (r->end[i] > forget) {
            r->start[kept] = r->start[i];
            r->end[kept++] = r->end[i];
        }
    }
    r->n = kept;
    while (moved) {
        moved = false;
        for (uint32_t i = 0; i < r->n; i++) {
            if (start < r->end[i] && r->start[i] < start + len) {
                start = r->end[i];
                moved = true;
            }
        }
    }
    ck_assert_uint_lt(r->n, G_N_ELEMENTS(r->start));
    r->start[r->n] = start;
    r->end[r->n++] = start + len;
    return start + len;
}

START_TEST(test_calendar_books_earliest_gap)
{
    Calendar c;
    RefSpans ref = { .n = 0 };
    uint64_t present = 0;
    Rng rng;

    cal_init(&c);
    rng_seed(&rng, 5);
    for (uint32_t k = 0; k < 200000; k++) {
        uint64_t t, len, want, got;

        present += rng_below(&rng, 400);
        t = present + rng_below(&rng, 4000);
        len = 1 + rng_below(&rng, 300);
        want = ref_book(&ref, t, len, present);
        ck_assert_uint_eq(cal_probe(&c, t, len), want);
        got = cal_book(&c, t, len, present);
        ck_assert_msg(got == want, "booking %u: %" PRIu64 " against %"
                      PRIu64, k, got, want);
    }
    cal_destroy(&c);
}
END_TEST

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("timing");

    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_qd1_latency_parts);
    tcase_add_test(tc, test_write_buffer_absorbs_then_stalls);
    tcase_add_test(tc, test_readahead_serves_sequential_reads);
    tcase_add_test(tc, test_suspend_shortens_reads_during_writes);
    tcase_add_test(tc, test_write_cliff);
    tcase_add_test(tc, test_idle_time_reclaims);
    tcase_add_test(tc, test_reclaim_pays_per_page_read);
    tcase_add_test(tc, test_same_seed_same_figures);
    tcase_add_test(tc, test_timing_off);
    tcase_add_test(tc, test_ranges_and_unaligned);
    tcase_add_test(tc, test_format_and_sanitize);
    tcase_add_test(tc, test_partial_fill);
    tcase_add_test(tc, test_reclaim_observer);
    tcase_add_test(tc, test_nand_busy_per_die);
    tcase_add_test(tc, test_calendar_books_earliest_gap);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return h3100_test_main(model_suite());
}
