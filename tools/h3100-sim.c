/*
 * h3100-sim: run fio-like workloads against the H3100 drive model in
 * simulated time, and print what fio would, plus what the drive did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h3100/model.h"
#include "sim_bench.h"
#include "sim_datasheet.h"
#include "sim_engine.h"
#include "sim_script.h"

static char *opt_profile;
static char *opt_set;
static char *opt_rw;
static int opt_rwmixread = G_MININT;  /* not given: 50 */
static char *opt_bs;
static int opt_iodepth = 1;
static int opt_numjobs = 1;
static char *opt_span;
static char *opt_runtime;
static char *opt_ramp;
static char *opt_precondition;
static char *opt_interval;
static char *opt_telemetry;
static char *opt_save;
static char *opt_load;
static char *opt_script;
static gint64 opt_seed = 1;
static gboolean opt_json;
static gboolean opt_datasheet;
static gboolean opt_bench;
static gboolean opt_show_config;
static gboolean opt_list_profiles;

static GOptionEntry entries[] = {
    { "profile", 0, 0, G_OPTION_ARG_STRING, &opt_profile,
      "Drive profile (default h3100-3.2t)", "NAME" },
    { "set", 0, 0, G_OPTION_ARG_STRING, &opt_set,
      "Override drive parameters", "KEY=VAL,..." },
    { "rw", 0, 0, G_OPTION_ARG_STRING, &opt_rw,
      "read|write|randread|randwrite|randrw|rw (default randread)", "MODE" },
    { "rwmixread", 0, 0, G_OPTION_ARG_INT, &opt_rwmixread,
      "Percent reads in mixed modes (default 50)", "PCT" },
    { "bs", 0, 0, G_OPTION_ARG_STRING, &opt_bs,
      "Block size, or a mix like 4k:50,8k:30,64k:20 (default 4k)", "BS" },
    { "iodepth", 0, 0, G_OPTION_ARG_INT, &opt_iodepth,
      "Commands outstanding per job (default 1)", "N" },
    { "numjobs", 0, 0, G_OPTION_ARG_INT, &opt_numjobs,
      "Jobs (default 1)", "N" },
    { "span", 0, 0, G_OPTION_ARG_STRING, &opt_span,
      "Part of the LBA space used: fraction, percent or bytes", "SPAN" },
    { "runtime", 0, 0, G_OPTION_ARG_STRING, &opt_runtime,
      "Simulated seconds measured (default 1)", "T" },
    { "ramp", 0, 0, G_OPTION_ARG_STRING, &opt_ramp,
      "Simulated seconds run before measuring (default 0)", "T" },
    { "precondition", 0, 0, G_OPTION_ARG_STRING, &opt_precondition,
      "none|seq|seq:F|rand:N|overwrite:N|wear:PCT, joined by +, at FTL speed "
      "(default none)", "SPEC" },
    { "interval", 0, 0, G_OPTION_ARG_STRING, &opt_interval,
      "Print a row every T simulated seconds", "T" },
    { "telemetry", 0, 0, G_OPTION_ARG_FILENAME, &opt_telemetry,
      "Write a JSON row every --interval (default 1 s) and a latency CDF "
      "to FILE", "FILE" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &opt_seed,
      "Random seed (default 1)", "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &opt_json,
      "Print JSON", NULL },
    { "save", 0, 0, G_OPTION_ARG_FILENAME, &opt_save,
      "Save the drive state afterwards", "FILE" },
    { "load", 0, 0, G_OPTION_ARG_FILENAME, &opt_load,
      "Start from a saved drive state", "FILE" },
    { "script", 0, 0, G_OPTION_ARG_FILENAME, &opt_script,
      "Run the procedure in FILE: steps in order on one drive "
      "(docs/design/calibration.md)", "FILE" },
    { "datasheet", 0, 0, G_OPTION_ARG_NONE, &opt_datasheet,
      "Run every datasheet figure (all capacities, or --profile)", NULL },
    { "bench", 0, 0, G_OPTION_ARG_NONE, &opt_bench,
      "Measure the model's own speed and memory", NULL },
    { "show-config", 0, 0, G_OPTION_ARG_NONE, &opt_show_config,
      "Print every drive parameter and exit", NULL },
    { "profiles", 0, 0, G_OPTION_ARG_NONE, &opt_list_profiles,
      "List the drive profiles and exit", NULL },
    { NULL },
};

static G_NORETURN void die(const char *msg)
{
    fprintf(stderr, "h3100-sim: %s\n", msg);
    exit(1);
}

static void build_spec(SimSpec *spec, const H3100Config *cfg)
{
    g_autoptr(GError) err = NULL;

    sim_spec_defaults(spec, cfg);
    if ((opt_rw && !sim_parse_rw(spec, opt_rw, &err)) ||
        (opt_bs && !sim_parse_bs(spec, opt_bs, &err)) ||
        (opt_span && !sim_parse_span(opt_span, cfg->geo.user_bytes,
                                     &spec->span_bytes, &err)) ||
        (opt_runtime && !sim_parse_time(opt_runtime, &spec->runtime_ns,
                                        &err)) ||
        (opt_ramp && !sim_parse_time(opt_ramp, &spec->ramp_ns, &err)) ||
        (opt_interval && !sim_parse_time(opt_interval, &spec->interval_ns,
                                         &err))) {
        die(err->message);
    }
    if (opt_interval && spec->interval_ns == 0) {
        die("--interval must be above zero");
    }
    /* negative values wrap to ones sim_spec_check() refuses */
    spec->rwmixread = opt_rwmixread == G_MININT ? 50 : (uint32_t)opt_rwmixread;
    spec->iodepth = (uint32_t)opt_iodepth;
    spec->numjobs = (uint32_t)opt_numjobs;
    if (!sim_spec_check(spec, &err)) {
        g_autofree char *msg = g_strdup_printf("--%s", err->message);
        die(msg);
    }
    spec->seed = (uint64_t)opt_seed;
    spec->interval_out = opt_interval ? stdout : NULL;
    spec->interval_json = opt_json;
    if (opt_telemetry && !opt_interval) {
        spec->interval_ns = 1000000000ULL;
    }
}

/* Opened before the drive, so a bad path fails before a long precondition. */
static FILE *open_telemetry(void)
{
    FILE *f = fopen(opt_telemetry, "w");

    if (!f) {
        g_autofree char *msg = g_strdup_printf("--telemetry=%s: %s",
                                               opt_telemetry,
                                               g_strerror(errno));
        die(msg);
    }
    return f;
}

/* A write that failed (a full disk) left the stream's error flag: say so. */
static void close_telemetry(FILE *f)
{
    bool failed = ferror(f);

    if (fclose(f) || failed) {
        g_autofree char *msg = g_strdup_printf("--telemetry=%s: write failed",
                                               opt_telemetry);
        die(msg);
    }
}

static H3100Model *open_model(const H3100Config *cfg)
{
    g_autoptr(GError) err = NULL;
    H3100Model *m = opt_load ? h3100_model_load(cfg, opt_load, &err)
                             : h3100_model_new(cfg, &err);

    if (!m) {
        die(err->message);
    }
    if (opt_precondition) {
        g_autofree char *label = g_strdup_printf("precondition %s",
                                                 opt_precondition);
        if (!h3100_model_precondition(m, opt_precondition, (uint64_t)opt_seed,
                                      h3100_progress_bar, label, &err)) {
            die(err->message);
        }
    }
    return m;
}

/* --save, then the drive is done with */
static void save_and_free(H3100Model *m)
{
    g_autoptr(GError) err = NULL;

    if (opt_save && !h3100_model_save(m, opt_save, &err)) {
        h3100_model_free(m);
        die(err->message);
    }
    h3100_model_free(m);
}

/* A procedure takes its workloads from its file, not from options. */
static int run_script(const H3100Config *cfg)
{
    g_autoptr(GError) err = NULL;
    SimScript script;
    g_autofree SimResult *res = NULL;
    H3100Model *m;
    uint64_t now = 0;

    if (opt_rw || opt_bs || opt_span || opt_runtime || opt_ramp ||
        opt_interval || opt_telemetry || opt_rwmixread != G_MININT ||
        opt_iodepth != 1 || opt_numjobs != 1) {
        die("--script takes its workloads from the file: no --rw, --bs, "
            "--rwmixread, --iodepth, --numjobs, --span, --runtime, --ramp, "
            "--interval or --telemetry");
    }
    if (!sim_script_load(&script, opt_script, cfg, (uint64_t)opt_seed,
                         &err)) {
        die(err->message);
    }
    res = g_new0(SimResult, script.nsteps);
    m = open_model(cfg);
    if (!sim_script_run(&script, m, &now, res, &err)) {
        h3100_model_free(m);
        sim_script_free(&script);
        die(err->message);
    }
    if (opt_json) {
        sim_script_print_json(stdout, &script, res, cfg->profile);
    } else {
        sim_script_print(stdout, &script, res, cfg->profile);
    }
    sim_script_free(&script);
    save_and_free(m);
    return 0;
}

int main(int argc, char **argv)
{
    g_autoptr(GOptionContext) ctx = NULL;
    g_autoptr(GError) err = NULL;
    H3100Config cfg;
    H3100Model *m;
    SimSpec spec;
    SimResult res;
    uint64_t now = 0;

    ctx = g_option_context_new("- the DapuStor H3100 drive model, fio-like");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        die(err->message);
    }
    if (argc > 1) {
        g_autofree char *msg = g_strdup_printf("unexpected argument '%s'",
                                               argv[1]);
        die(msg);
    }
    if (opt_list_profiles) {
        for (const char *const *p = h3100_profile_names(); *p; p++) {
            printf("%s\n", *p);
        }
        return 0;
    }
    if (opt_bench) {
        return sim_bench(opt_profile ? opt_profile : "h3100-0.8t",
                         (uint64_t)opt_seed);
    }
    if (opt_datasheet) {
        int misses = sim_datasheet(opt_profile, opt_set, opt_json,
                                   (uint64_t)opt_seed);
        return misses < 0 ? 1 : 0;
    }
    if (!h3100_profile_load(&cfg, opt_profile ? opt_profile : "h3100-3.2t",
                            &err) ||
        !h3100_config_apply(&cfg, opt_set, &err) ||
        !h3100_config_validate(&cfg, &err)) {
        die(err->message);
    }
    cfg.seed = (uint64_t)opt_seed;
    if (opt_show_config) {
        h3100_config_print(&cfg, stdout);
        return 0;
    }
    if (opt_script) {
        return run_script(&cfg);
    }
    build_spec(&spec, &cfg);
    if (opt_telemetry) {
        spec.telemetry_out = open_telemetry();
    }
    m = open_model(&cfg);
    if (spec.interval_out && !opt_json) {
        printf("%10s %12s %10s %12s %12s %7s %6s %9s\n", "time_s", "iops",
               "mb_s", "lat_mean_us", "lat_p99_us", "waf", "free",
               "backlog_ms");
    }
    sim_run(m, &spec, &now, &res);
    if (spec.telemetry_out) {
        close_telemetry(spec.telemetry_out);
    }
    if (opt_json) {
        sim_print_result_json(stdout, &spec, &res, cfg.profile);
    } else {
        sim_print_result(stdout, &spec, &res, cfg.profile);
    }
    save_and_free(m);
    return 0;
}
