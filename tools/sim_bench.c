/*
 * Speed and memory of the model itself.
 *
 *   ftl_fastforward: untimed random 4 KiB page writes per host second,
 *                    with reclaim, one capacity at steady state;
 *   timed_commands:  simulated 4 KiB random-write commands per host
 *                    second with timing and reclaim, at steady state;
 *   map memory:      bytes the model holds per written 4 KiB page, less
 *                    its fixed per-block state (measured on an empty
 *                    model of the same size): at the end, and with its
 *                    reverse maps at their most;
 *   empty 6.4 TB:    what a fresh, unwritten h3100-6.4t model holds.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sim_bench.h"
#include "sim_engine.h"

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static H3100Model *make(const char *profile, GError **errp)
{
    H3100Config cfg;

    if (!h3100_profile_load(&cfg, profile, errp)) {
        return NULL;
    }
    return h3100_model_new(&cfg, errp);
}

int sim_bench(const char *profile, uint64_t seed)
{
    g_autoptr(GError) err = NULL;
    H3100Model *m, *empty;
    struct timespec t0;
    uint64_t fixed, written, now = 0;
    double secs;
    H3100Health h;
    SimSpec spec;
    SimResult res;
    char label[64];

    m = make(profile, &err);
    if (!m) {
        fprintf(stderr, "h3100-sim: %s\n", err->message);
        return 1;
    }
    fixed = h3100_model_memory_bytes(m);
    snprintf(label, sizeof(label), "%s rand:2", profile);
    if (!h3100_model_precondition(m, "rand:2", seed, h3100_progress_bar,
                                  label, &err)) {
        fprintf(stderr, "h3100-sim: %s\n", err->message);
        return 1;
    }
    /* one more capacity of random writes, at steady state, timed */
    h3100_model_health(m, 0, &h);
    written = h.mapped_bytes / H3100_SLOT_BYTES;
    snprintf(label, sizeof(label), "%s overwrite:1", profile);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    h3100_model_precondition(m, "overwrite:1", seed + 1, h3100_progress_bar,
                             label, NULL);
    secs = seconds_since(&t0);
    printf("profile: %s\n", profile);
    printf("ftl_fastforward_page_writes_per_sec: %.2f M/s\n",
           written / secs / 1e6);

    sim_spec_defaults(&spec, h3100_model_config(m));
    spec.rw = SIM_RANDWRITE;
    spec.iodepth = 32;
    spec.numjobs = 4;
    spec.runtime_ns = 8000000000ULL;
    spec.seed = seed;
    sim_run(m, &spec, &now, &res);
    printf("timed_4k_commands_per_host_sec: %.2f M/s\n",
           res.commands / res.host_seconds / 1e6);
    printf("timed_run_simulated_iops: %.1f k\n", res.iops / 1e3);
    printf("timed_run_waf: %.3f\n", res.waf);

    h3100_model_health(m, now, &h);
    printf("memory_per_written_page: %.2f bytes\n",
           (double)(h3100_model_memory_bytes(m) - fixed) /
           (h.mapped_bytes / H3100_SLOT_BYTES));
    printf("memory_peak_per_written_page: %.2f bytes\n",
           (double)(h3100_model_memory_peak_bytes(m) - fixed) /
           (h.mapped_bytes / H3100_SLOT_BYTES));
    printf("memory_fixed_per_block_state: %.2f MiB\n", fixed / 1048576.0);
    h3100_model_free(m);

    empty = make("h3100-6.4t", &err);
    if (!empty) {
        fprintf(stderr, "h3100-sim: %s\n", err->message);
        return 1;
    }
    printf("memory_unwritten_6.4t: %.2f MiB\n",
           h3100_model_memory_bytes(empty) / 1048576.0);
    h3100_model_free(empty);
    return 0;
}
