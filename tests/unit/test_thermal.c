/*
 * The thermal model: the RC response to power, throttling that really
 * slows the NAND and so cools the drive, host thresholds, the SMART
 * counters, determinism and the parameters' checks.
 */
#include <stdlib.h>

#include "h3100_test.h"
#include "sim_engine.h"

#define MS 1000000ULL
#define SEC 1000000000ULL

static H3100Model *thermal_model(const char *overrides)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    GError *err = NULL;
    H3100Model *m;

    ck_assert_msg(h3100_config_apply(&cfg, overrides, &err), "%s",
                  err ? err->message : "");
    m = h3100_model_new(&cfg, &err);
    ck_assert_msg(m, "%s", err ? err->message : "");
    return m;
}

/* Sequential 128 KiB writes at QD32 for @ms: the NAND flat out. */
static SimResult write_for(H3100Model *m, uint64_t *now, uint64_t ms)
{
    SimSpec spec;
    SimResult res;

    sim_spec_defaults(&spec, h3100_model_config(m));
    spec.rw = SIM_WRITE;
    spec.bs[0].bytes = 128 << 10;
    spec.iodepth = 32;
    spec.runtime_ns = ms * MS;
    sim_run(m, &spec, now, &res);
    return res;
}

static H3100Health health_at(H3100Model *m, uint64_t now)
{
    H3100Health h;

    h3100_model_health(m, now, &h);
    return h;
}

/* ambient + R x P, rounded as the model reports it */
static uint32_t steady_k(const H3100Config *cfg, uint32_t mw)
{
    return (uint32_t)lround(cfg->thermal.ambient_k +
                            cfg->thermal.thermal_r_mk_per_w * (double)mw /
                            1e6);
}

START_TEST(test_idle_steady_state)
{
    H3100Model *m = thermal_model("");
    const H3100Config *cfg = h3100_model_config(m);
    H3100Health h = health_at(m, 0);

    /* the default calibration: a 7 W idle drive at 40 C in 25 C air */
    ck_assert_uint_eq(h.temperature_k, 313);
    ck_assert_uint_eq(h.power_mw, cfg->idle_mw);
    ck_assert_uint_eq(h.throttle_level, 0);
    h = health_at(m, 600 * SEC);
    ck_assert_uint_eq(h.temperature_k, 313);
    ck_assert_uint_eq(h.power_mw, cfg->idle_mw);
    ck_assert_uint_eq(h.warn_temp_ns, 0);
    ck_assert_uint_eq(h.tmt1_transitions, 0);
    h3100_model_free(m);

    m = thermal_model("ambient_k=310,thermal_r_mk_per_w=3000");
    h = health_at(m, 10 * SEC);
    ck_assert_uint_eq(h.temperature_k, 331);
    ck_assert_uint_eq(h.temperature_k,
                      steady_k(h3100_model_config(m), 7000));
    h3100_model_free(m);
}
END_TEST

/* Work done at FTL speed takes no time, so it cannot heat the drive. */
START_TEST(test_untimed_work_is_not_heat)
{
    H3100Model *m = thermal_model("thermal_tau_ms=100");
    H3100Health h;

    /* untimed commands still book firmware time on the cores */
    ck_assert(random_writes(m, 1000000, 1));
    h = health_at(m, 0);
    ck_assert_uint_gt(h.core_busy_ns, 5 * SEC);
    h = health_at(m, 100 * MS);
    ck_assert_uint_eq(h.temperature_k, 313);
    ck_assert_uint_eq(h.power_mw, 7000);
    h3100_model_free(m);
}
END_TEST

/*
 * A large R spreads idle (320 K) and active (335 K) far apart: after one
 * time constant of full activity the drive is 63% of the way, after ten
 * it is there, and it cools back the same way.
 */
START_TEST(test_rc_response)
{
    H3100Model *m = thermal_model("ambient_k=250,thermal_r_mk_per_w=10000,"
                                  "thermal_tau_ms=200,wctemp_k=325,"
                                  "cctemp_k=330");
    const H3100Config *cfg = h3100_model_config(m);
    uint32_t idle = steady_k(cfg, cfg->idle_mw);
    uint32_t active = steady_k(cfg, cfg->active_mw);
    uint64_t now = 0, start;
    H3100Health h;
    SimResult r;

    ck_assert_uint_eq(idle, 320);
    ck_assert_uint_eq(active, 335);
    r = write_for(m, &now, 200);
    h = health_at(m, 200 * MS);
    ck_assert_msg(h.temperature_k >= 328 && h.temperature_k <= 330,
                  "%u K after one time constant", h.temperature_k);
    ck_assert_uint_gt(h.power_mw, 8200);
    r = write_for(m, &now, 1800);
    ck_assert_uint_gt(r.health.power_mw, 8200);
    ck_assert_msg(r.health.temperature_k >= active - 1 &&
                  r.health.temperature_k <= active,
                  "%u K after ten time constants", r.health.temperature_k);
    /* above 325 K from 81 ms, above 330 K from 220 ms, at full power */
    ck_assert_uint_gt(r.health.warn_temp_ns, 1800 * MS);
    ck_assert_uint_lt(r.health.warn_temp_ns, 2000 * MS);
    ck_assert_uint_gt(r.health.crit_temp_ns, 1600 * MS);
    ck_assert_uint_lt(r.health.crit_temp_ns, r.health.warn_temp_ns);
    ck_assert_uint_eq(r.health.throttle_level, 0);

    start = now;
    h = health_at(m, start + 200 * MS);
    ck_assert_msg(h.temperature_k >= 324 && h.temperature_k <= 327,
                  "%u K one time constant into cooling", h.temperature_k);
    ck_assert_uint_eq(h.power_mw, cfg->idle_mw);
    h = health_at(m, start + 2 * SEC);
    ck_assert_uint_eq(h.temperature_k, idle);
    h3100_model_free(m);
}
END_TEST

/*
 * Idle at 339 K, flat out 345 K, TMT1 343 K: a write workload crosses
 * TMT1, light throttling halves the NAND, the drive settles below 342 K
 * (above 341 K, TMT1 less the hysteresis, so it stays throttled) and
 * once quiet it cools under 341 K and throttling ends.
 */
#define LIGHT_CASE "ambient_k=311,thermal_r_mk_per_w=4000,thermal_tau_ms=200"

typedef struct ThrottleRun {
    double before_mbps;
    double after_mbps;
    uint32_t after_power_mw;
    uint32_t before_power_mw;
    uint32_t max_temp_k;
    uint64_t throttled_at;
    H3100Health throttled;
    H3100Health cooled;
    uint64_t ios;
    uint64_t lat_sum;
} ThrottleRun;

static void throttle_run(ThrottleRun *out)
{
    H3100Model *m = thermal_model(LIGHT_CASE);
    uint64_t now = 0, end;
    SimResult r;

    memset(out, 0, sizeof(*out));
    r = write_for(m, &now, 50);
    ck_assert_uint_eq(r.health.throttle_level, 0);
    out->before_mbps = r.mbps;
    out->before_power_mw = r.health.power_mw;
    while (r.health.throttle_level == 0 && now < 3 * SEC) {
        r = write_for(m, &now, 50);
        out->max_temp_k = MAX(out->max_temp_k, r.health.temperature_k);
        out->ios += r.ios;
        out->lat_sum += r.lat.sum;
    }
    out->throttled_at = now;
    /* 2.5 time constants to settle, then measure */
    for (end = now + 500 * MS; now < end; ) {
        r = write_for(m, &now, 50);
        out->max_temp_k = MAX(out->max_temp_k, r.health.temperature_k);
    }
    r = write_for(m, &now, 200);
    out->max_temp_k = MAX(out->max_temp_k, r.health.temperature_k);
    out->ios += r.ios;
    out->lat_sum += r.lat.sum;
    out->after_mbps = r.mbps;
    out->after_power_mw = r.health.power_mw;
    out->throttled = r.health;
    out->cooled = health_at(m, now + 2 * SEC);
    assert_invariants(m);
    h3100_model_free(m);
}

START_TEST(test_light_throttling)
{
    ThrottleRun t;

    throttle_run(&t);
    ck_assert_msg(t.throttled_at < 2 * SEC, "throttled only at %.3f s",
                  t.throttled_at / 1e9);
    ck_assert_uint_eq(t.throttled.throttle_level, 1);
    ck_assert_uint_eq(t.throttled.tmt1_transitions, 1);
    ck_assert_uint_eq(t.throttled.tmt2_transitions, 0);
    ck_assert_uint_gt(t.throttled.tmt1_ns, 500 * MS);
    ck_assert_uint_eq(t.throttled.tmt2_ns, 0);
    /* the NAND really delivers less, draws less, and the drive settles */
    ck_assert_msg(t.after_mbps < 0.6 * t.before_mbps, "%.0f MB/s throttled, "
                  "%.0f before", t.after_mbps, t.before_mbps);
    ck_assert_msg(t.after_mbps > 0.3 * t.before_mbps, "%.0f MB/s throttled, "
                  "%.0f before", t.after_mbps, t.before_mbps);
    ck_assert_uint_lt(t.after_power_mw, t.before_power_mw - 500);
    ck_assert_uint_le(t.throttled.temperature_k, 343);
    ck_assert_uint_ge(t.throttled.temperature_k, 341);
    ck_assert_uint_le(t.max_temp_k, 344);
    ck_assert_uint_eq(t.throttled.crit_temp_ns, 0);
    /* quiet: under 341 K the throttling ends, its time stops counting */
    ck_assert_uint_eq(t.cooled.throttle_level, 0);
    ck_assert_uint_eq(t.cooled.temperature_k, 339);
    ck_assert_uint_lt(t.cooled.tmt1_ns, t.throttled.tmt1_ns + 2 * SEC);
    ck_assert_uint_eq(t.cooled.tmt1_transitions, 1);
}
END_TEST

START_TEST(test_deterministic)
{
    ThrottleRun a, b;

    throttle_run(&a);
    throttle_run(&b);
    ck_assert_uint_eq(a.ios, b.ios);
    ck_assert_uint_eq(a.lat_sum, b.lat_sum);
    ck_assert_uint_eq(a.throttled_at, b.throttled_at);
    ck_assert_uint_eq(a.throttled.tmt1_ns, b.throttled.tmt1_ns);
    ck_assert_uint_eq(a.throttled.warn_temp_ns, b.throttled.warn_temp_ns);
    ck_assert_uint_eq(a.cooled.tmt1_ns, b.cooled.tmt1_ns);
    ck_assert_uint_eq(a.throttled.nand_busy_ns, b.throttled.nand_busy_ns);
}
END_TEST

/*
 * Hot air (335 K, the documented way to force throttling): idle at
 * 350 K, light throttling from power-on, and the writes then settle at
 * 351.6 K, under TMT2.
 */
START_TEST(test_light_holds_in_hot_air)
{
    H3100Model *m = thermal_model("ambient_k=335,thermal_tau_ms=200");
    uint64_t now = 0;
    H3100Health h = health_at(m, 0);
    SimResult r;

    ck_assert_uint_eq(h.temperature_k, 350);
    ck_assert_uint_eq(h.throttle_level, 1);
    ck_assert_uint_eq(h.tmt1_transitions, 1);
    while (now < 2 * SEC) {
        r = write_for(m, &now, 50);
        ck_assert_uint_eq(r.health.throttle_level, 1);
    }
    ck_assert_uint_ge(r.health.temperature_k, 351);
    ck_assert_uint_le(r.health.temperature_k, 352);
    ck_assert_uint_eq(r.health.tmt2_transitions, 0);
    h3100_model_free(m);
}
END_TEST

/*
 * Idle at 347 K (light throttling from power-on); keeping 90% the writes
 * would reach 353.8 K, so heavy throttling takes over at 353 K until
 * 351 K, then light again, and so on: never near the critical
 * temperature.
 */
START_TEST(test_heavy_throttling_bounded)
{
    H3100Model *m = thermal_model("ambient_k=312,thermal_r_mk_per_w=5000,"
                                  "thermal_tau_ms=200,"
                                  "throttle_light_pct=90");
    const H3100Config *cfg = h3100_model_config(m);
    uint32_t max_temp = 0, max_level = 0, n[3] = { 0 }, was;
    double mbps[3] = { 0 };
    uint64_t now = 0;
    H3100Health h = health_at(m, 0);
    SimResult r;

    ck_assert_uint_eq(h.throttle_level, 1);
    ck_assert_uint_eq(h.tmt1_transitions, 1);
    was = h.throttle_level;
    while (now < 4 * SEC) {
        r = write_for(m, &now, 50);
        max_temp = MAX(max_temp, r.health.temperature_k);
        max_level = MAX(max_level, r.health.throttle_level);
        /* windows at one level from start to end */
        if (r.health.throttle_level == was) {
            mbps[was] += r.mbps;
            n[was]++;
        }
        was = r.health.throttle_level;
    }
    h = r.health;
    ck_assert_uint_eq(max_level, 2);
    ck_assert_uint_ge(h.tmt2_transitions, 2);
    ck_assert_uint_gt(h.tmt2_ns, 0);
    ck_assert_uint_gt(h.tmt1_ns, 0);
    ck_assert_uint_eq(h.tmt1_transitions, 1);
    ck_assert_uint_eq(n[0], 0);
    ck_assert_uint_gt(n[1], 0);
    ck_assert_uint_gt(n[2], 0);
    ck_assert_msg(mbps[2] / n[2] < 0.4 * mbps[1] / n[1], "%.0f MB/s heavy, "
                  "%.0f light", mbps[2] / n[2], mbps[1] / n[1]);
    /* stays throttled in hot air, and well below critical */
    ck_assert_uint_ge(h.throttle_level, 1);
    ck_assert_uint_le(max_temp, cfg->thermal.tmt2_k + 1);
    ck_assert_uint_lt(max_temp, cfg->thermal.cctemp_k);
    ck_assert_uint_eq(h.crit_temp_ns, 0);
    /* above the warning temperature the whole time */
    ck_assert_uint_ge(h.warn_temp_ns, now - 100 * MS);
    ck_assert_uint_eq(h.warn_temp_ns, h.tmt1_ns + h.tmt2_ns);
    h3100_model_free(m);
}
END_TEST

START_TEST(test_host_thermal_limits)
{
    H3100Model *m = thermal_model(""), *ref = thermal_model("");
    uint64_t now = 0, ref_now = 0;
    H3100Health h;
    SimResult slow, fast;

    /* 313 K: TMT1 at 310 K throttles at once */
    h3100_model_set_thermal_limits(m, 310, 320);
    h = health_at(m, 0);
    ck_assert_uint_eq(h.throttle_level, 1);
    ck_assert_uint_eq(h.tmt1_transitions, 1);
    slow = write_for(m, &now, 200);
    fast = write_for(ref, &ref_now, 200);
    ck_assert_msg(slow.mbps < 0.6 * fast.mbps, "%.0f MB/s with TMT1 below "
                  "the temperature, %.0f without", slow.mbps, fast.mbps);
    ck_assert_uint_gt(slow.health.tmt1_ns, 150 * MS);
    ck_assert_uint_eq(fast.health.tmt1_ns, 0);

    h3100_model_set_thermal_limits(m, 305, 312);
    h = health_at(m, now);
    ck_assert_uint_eq(h.throttle_level, 2);
    ck_assert_uint_eq(h.tmt2_transitions, 1);
    /* 0 restores the configured 343 / 353 K */
    h3100_model_set_thermal_limits(m, 0, 0);
    h = health_at(m, now);
    ck_assert_uint_eq(h.throttle_level, 0);
    h3100_model_set_thermal_limits(m, 0, 313);
    ck_assert_uint_eq(health_at(m, now).throttle_level, 2);
    h3100_model_set_thermal_limits(m, 330, 0);
    ck_assert_uint_eq(health_at(m, now).throttle_level, 0);
    /* unthrottled again, it writes as fast as the reference */
    slow = write_for(m, &now, 200);
    fast = write_for(ref, &ref_now, 200);
    ck_assert_double_gt(slow.mbps, 0.9 * fast.mbps);
    h3100_model_free(m);
    h3100_model_free(ref);
}
END_TEST

/* Every profile: defaults that validate and the calibrated 40 C idle;
 * a fully active 3.2 TB settles at 47 C. */
/* A power state's cap: the NAND slows until the drive fits under it. */
START_TEST(test_power_cap)
{
    H3100Model *m = thermal_model(""), *ref = thermal_model("");
    const H3100Config *cfg = h3100_model_config(m);
    uint32_t cap = (cfg->idle_mw + cfg->active_mw) / 2;
    uint64_t now = 0, ref_now = 0;
    SimResult capped, free_run;

    h3100_model_set_power_cap(m, cap);
    capped = write_for(m, &now, 300);
    free_run = write_for(ref, &ref_now, 300);
    ck_assert_msg(capped.mbps < 0.75 * free_run.mbps, "%.0f MB/s capped at "
                  "%u mW, %.0f MB/s free", capped.mbps, cap, free_run.mbps);
    ck_assert_msg(capped.health.power_mw <= cap * 105 / 100, "%u mW under a "
                  "%u mW cap", capped.health.power_mw, cap);
    ck_assert_uint_gt(free_run.health.power_mw, cap);
    /* heat still throttles harder than a loose cap */
    h3100_model_set_power_cap(m, cfg->active_mw - 1);
    h3100_model_set_thermal_limits(m, 300, 305);
    capped = write_for(m, &now, 300);
    ck_assert_msg(capped.mbps < 0.4 * free_run.mbps, "%.0f MB/s, heavy "
                  "throttling and a loose cap", capped.mbps);
    /* no cap, no throttling: full speed again */
    h3100_model_set_thermal_limits(m, 0, 0);
    h3100_model_set_power_cap(m, 0);
    capped = write_for(m, &now, 300);
    free_run = write_for(ref, &ref_now, 300);
    ck_assert_double_gt(capped.mbps, 0.9 * free_run.mbps);
    h3100_model_free(m);
    h3100_model_free(ref);
}
END_TEST

START_TEST(test_profile_defaults)
{
    for (const char *const *p = h3100_profile_names(); *p; p++) {
        H3100Config cfg;
        GError *err = NULL;

        ck_assert(h3100_profile_load(&cfg, *p, NULL));
        ck_assert_msg(h3100_config_validate(&cfg, &err), "%s: %s", *p,
                      err ? err->message : "");
        ck_assert_uint_eq(cfg.thermal.ambient_k, 298);
        ck_assert_uint_eq(cfg.thermal.tmt1_k, 343);
        ck_assert_uint_eq(cfg.thermal.tmt2_k, 353);
        ck_assert_uint_eq(steady_k(&cfg, cfg.idle_mw), 313);
        /* flat out at 25 C: 43 to 50 C, far from throttling */
        ck_assert_uint_le(steady_k(&cfg, cfg.active_mw), 323);
    }
}
END_TEST

START_TEST(test_full_drive_active_temperature)
{
    H3100Config cfg;
    H3100Model *m;
    uint64_t now = 0;
    SimResult r;

    ck_assert(h3100_profile_load(&cfg, "h3100-3.2t", NULL));
    ck_assert(h3100_config_apply(&cfg, "thermal_tau_ms=100", NULL));
    m = h3100_model_new(&cfg, NULL);
    r = write_for(m, &now, 1000);
    /* 298 K + 2.143 K/W x 10.5 W = 320.5 K, 47 C */
    ck_assert_msg(r.health.temperature_k >= 319 &&
                  r.health.temperature_k <= 321, "%u K",
                  r.health.temperature_k);
    ck_assert_uint_eq(r.health.throttle_level, 0);
    h3100_model_free(m);
}
END_TEST

static void expect_invalid(const char *overrides, const char *words)
{
    H3100Config cfg;
    GError *err = NULL;

    ck_assert(h3100_profile_load(&cfg, "h3100-3.2t", NULL));
    if (h3100_config_apply(&cfg, overrides, &err)) {
        ck_assert(!h3100_config_validate(&cfg, &err));
        ck_assert_ptr_null(h3100_model_new(&cfg, NULL));
    }
    ck_assert_ptr_nonnull(err);
    ck_assert_int_eq(err->code, H3100_ERROR_INVALID);
    ck_assert_msg(strstr(err->message, words), "error '%s' lacks '%s'",
                  err->message, words);
    g_error_free(err);
}

START_TEST(test_config_checks)
{
    H3100Config cfg;
    GError *err = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *out;

    ck_assert(h3100_profile_load(&cfg, "h3100-3.2t", NULL));
    ck_assert(h3100_config_apply(&cfg, "ambient_k=335,thermal_tau_ms=200,"
                                 "throttle_light_pct=60", NULL));
    ck_assert_uint_eq(cfg.thermal.ambient_k, 335);
    ck_assert_uint_eq(cfg.thermal.thermal_tau_ms, 200);
    ck_assert_uint_eq(cfg.thermal.throttle_light_pct, 60);
    ck_assert(h3100_config_validate(&cfg, NULL));

    expect_invalid("tmt1_k=353", "tmt1_k=353 must be below tmt2_k=353");
    expect_invalid("tmt1_k=360", "tmt1_k");
    expect_invalid("thermal_tau_ms=0", "thermal_tau_ms");
    expect_invalid("wctemp_k=358", "wctemp_k");
    expect_invalid("throttle_heavy_pct=60", "throttle_heavy_pct");
    expect_invalid("throttle_light_pct=0", "throttle_light_pct");
    expect_invalid("ambient_k=20", "ambient_k");

    /* a zero time constant set behind the table's back is caught too */
    cfg.thermal.thermal_tau_ms = 0;
    ck_assert(!h3100_config_validate(&cfg, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "thermal_tau_ms"));
    g_clear_error(&err);

    ck_assert(h3100_profile_load(&cfg, "h3100-3.2t", NULL));
    out = open_memstream(&text, &len);
    h3100_config_print(&cfg, out);
    fclose(out);
    ck_assert_ptr_nonnull(strstr(text, "\nthermal_r_mk_per_w = 2143\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nthrottle_hyst_k = 2\n"));
    free(text);
}
END_TEST

static Suite *thermal_suite(void)
{
    Suite *s = suite_create("thermal");
    TCase *tc = tcase_create("thermal");

    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_idle_steady_state);
    tcase_add_test(tc, test_untimed_work_is_not_heat);
    tcase_add_test(tc, test_rc_response);
    tcase_add_test(tc, test_light_throttling);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_light_holds_in_hot_air);
    tcase_add_test(tc, test_heavy_throttling_bounded);
    tcase_add_test(tc, test_host_thermal_limits);
    tcase_add_test(tc, test_power_cap);
    tcase_add_test(tc, test_profile_defaults);
    tcase_add_test(tc, test_full_drive_active_temperature);
    tcase_add_test(tc, test_config_checks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return h3100_test_main(thermal_suite());
}
