/*
 * The reference datasheet (docs/reference/h3100.md), run on the
 * model under the conditions enterprise datasheets state:
 *   sequential: 128 KiB, 1 job x QD32, after a sequential fill;
 *   random:     4 KiB, 4 jobs x QD32, full span; random write after
 *               the drive reached steady state (fill + 2x capacity of
 *               random writes, then 1 s of timed ramp);
 *   latency:    4 KiB at QD1, one job, mean.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim_datasheet.h"
#include "sim_engine.h"

typedef struct Target {
    const char *profile;
    double seq_read_mbps;
    double seq_write_mbps;
    double rand_read_kiops;
    double rand_write_kiops;
} Target;

static const Target targets[] = {
    { "h3100-0.8t", 3522, 1330, 563, 122 },
    { "h3100-1.6t", 3529, 2521, 806, 242 },
    { "h3100-3.2t", 3528, 2603, 803, 250 },
    { "h3100-6.4t", 3529, 2553, 803, 213 },
};

/* Typical 4 KiB latencies, read and write, random and sequential (us). */
static const double lat_rand_read_us = 87;
static const double lat_rand_write_us = 17;
static const double lat_seq_read_us = 15;
static const double lat_seq_write_us = 17;

typedef struct Row {
    const char *metric;
    const char *unit;
    double target;
    double model;
} Row;

typedef struct Sheet {
    bool json;
    bool first;
    int misses;
} Sheet;

static void emit(Sheet *s, const char *profile, const Row *r)
{
    double err = (r->model - r->target) / r->target * 100.0;
    bool ok = fabs(err) <= 5.0;

    s->misses += !ok;
    if (s->json) {
        printf("%s  {\"metric\": \"%s\", \"capacity\": \"%s\", \"target\": "
               "%.3f, \"model\": %.3f, \"error_pct\": %.2f, \"unit\": \"%s\"}",
               s->first ? "" : ",\n", r->metric, profile, r->target,
               r->model, err, r->unit);
    } else {
        int digits = r->target < 10 ? 3 : 1;   /* WAF needs its decimals */

        printf("%-12s %-22s %10.*f %10.*f %8.2f%% %s %s\n", profile,
               r->metric, digits, r->target, digits, r->model, err, r->unit,
               ok ? "" : "  <-- off by more than 5%");
    }
    s->first = false;
    fflush(stdout);
}

static SimResult run(H3100Model *m, uint64_t *now, SimRw rw, uint32_t bs,
                     uint32_t qd, uint32_t jobs, double ramp_s,
                     double runtime_s, uint64_t seed)
{
    SimSpec spec;
    SimResult res;

    sim_spec_defaults(&spec, h3100_model_config(m));
    spec.rw = rw;
    spec.bs[0].bytes = bs;
    spec.iodepth = qd;
    spec.numjobs = jobs;
    spec.ramp_ns = (uint64_t)(ramp_s * 1e9);
    spec.runtime_ns = (uint64_t)(runtime_s * 1e9);
    spec.seed = seed;
    sim_run(m, &spec, now, &res);
    /* a second's pause between tests lets the buffer drain, as a
     * benchmark script's pauses do */
    *now += 1000000000;
    return res;
}

static bool run_profile(Sheet *s, const Target *t, const char *overrides,
                        uint64_t seed)
{
    g_autoptr(GError) err = NULL;
    H3100Config cfg;
    H3100Model *m;
    uint64_t now = 0;
    SimResult r;
    Row row;
    char label[64];

    if (!h3100_profile_load(&cfg, t->profile, &err) ||
        !h3100_config_apply(&cfg, overrides, &err) ||
        !(m = h3100_model_new(&cfg, &err))) {
        fprintf(stderr, "h3100-sim: %s\n", err->message);
        return false;
    }
    snprintf(label, sizeof(label), "%s fill", t->profile);
    if (!h3100_model_precondition(m, "seq", seed, h3100_progress_bar, label,
                                  &err)) {
        fprintf(stderr, "h3100-sim: %s\n", err->message);
        h3100_model_free(m);
        return false;
    }

    r = run(m, &now, SIM_READ, 128 << 10, 32, 1, 0.2, 1.0, seed);
    row = (Row){ "seq_read_128k_mbps", "MB/s", t->seq_read_mbps, r.mbps };
    emit(s, t->profile, &row);
    r = run(m, &now, SIM_RANDREAD, 4096, 32, 4, 0.2, 1.0, seed);
    row = (Row){ "rand_read_4k_kiops", "KIOPS", t->rand_read_kiops,
                 r.iops / 1e3 };
    emit(s, t->profile, &row);
    r = run(m, &now, SIM_RANDREAD, 4096, 1, 1, 0.05, 0.5, seed);
    row = (Row){ "lat_rand_read_4k_us", "us", lat_rand_read_us,
                 h3100_lathist_mean(&r.lat) / 1e3 };
    emit(s, t->profile, &row);
    r = run(m, &now, SIM_READ, 4096, 1, 1, 0.05, 0.2, seed);
    row = (Row){ "lat_seq_read_4k_us", "us", lat_seq_read_us,
                 h3100_lathist_mean(&r.lat) / 1e3 };
    emit(s, t->profile, &row);
    r = run(m, &now, SIM_WRITE, 128 << 10, 32, 1, 0.2, 1.0, seed);
    row = (Row){ "seq_write_128k_mbps", "MB/s", t->seq_write_mbps, r.mbps };
    emit(s, t->profile, &row);
    r = run(m, &now, SIM_WRITE, 4096, 1, 1, 0.05, 0.2, seed);
    row = (Row){ "lat_seq_write_4k_us", "us", lat_seq_write_us,
                 h3100_lathist_mean(&r.lat) / 1e3 };
    emit(s, t->profile, &row);

    snprintf(label, sizeof(label), "%s rand:2", t->profile);
    if (!h3100_model_precondition(m, "rand:2", seed, h3100_progress_bar,
                                  label, &err)) {
        fprintf(stderr, "h3100-sim: %s\n", err->message);
        h3100_model_free(m);
        return false;
    }
    r = run(m, &now, SIM_RANDWRITE, 4096, 32, 4, 1.0, 3.0, seed);
    row = (Row){ "rand_write_4k_kiops", "KIOPS", t->rand_write_kiops,
                 r.iops / 1e3 };
    emit(s, t->profile, &row);
    row = (Row){ "steady_waf", "", cfg.family == H3100_FAMILY_H3100 ? 2.04
                                                                    : 4.12,
                 r.waf };
    emit(s, t->profile, &row);
    r = run(m, &now, SIM_RANDWRITE, 4096, 1, 1, 0.05, 0.5, seed);
    row = (Row){ "lat_rand_write_4k_us", "us", lat_rand_write_us,
                 h3100_lathist_mean(&r.lat) / 1e3 };
    emit(s, t->profile, &row);
    h3100_model_free(m);
    return true;
}

int sim_datasheet(const char *profile, const char *overrides, bool json,
                  uint64_t seed)
{
    Sheet s = { .json = json, .first = true };
    bool any = false;

    if (json) {
        printf("[\n");
    } else {
        printf("%-12s %-22s %10s %10s %9s\n", "capacity", "metric", "target",
               "model", "error");
    }
    for (size_t i = 0; i < G_N_ELEMENTS(targets); i++) {
        if (profile && strcmp(profile, targets[i].profile)) {
            continue;
        }
        any = true;
        if (!run_profile(&s, &targets[i], overrides, seed)) {
            return -1;
        }
    }
    if (!any) {
        fprintf(stderr, "h3100-sim: --datasheet covers h3100-0.8t, "
                "h3100-1.6t, h3100-3.2t and h3100-6.4t, not %s\n", profile);
        return -1;
    }
    if (json) {
        printf("\n]\n");
    }
    return s.misses;
}
