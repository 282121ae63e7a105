/*
 * Procedures for h3100-sim --script: parse the ini file into steps (all
 * checked before the first one runs, so a typo in step 5 does not cost
 * the hour of steps 1-4), run them on one drive, report each.
 */
#include <inttypes.h>
#include <string.h>

#include "sim_script.h"

#define IDLE_TICK_NS 10000000ULL      /* as the device's idle timer */

/* The keys of a workload step, as h3100-sim's options name them. */
static const char *const run_keys[] = {
    "rw", "bs", "rwmixread", "iodepth", "numjobs", "span", "runtime", "ramp",
    NULL,
};

static bool key_is(const char *key, const char *const *keys)
{
    for (; *keys; keys++) {
        if (!strcmp(key, *keys)) {
            return true;
        }
    }
    return false;
}

static bool parse_uint(const char *text, uint32_t min, uint32_t max,
                       uint32_t *out)
{
    char *end;
    guint64 v;

    if (!g_ascii_isdigit(*text)) {
        return false;
    }
    v = g_ascii_strtoull(text, &end, 10);
    if (*end || v < min || v > max) {
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

/* Apply one key of a workload step to @spec. */
static bool apply_run_key(SimSpec *spec, const char *key, const char *val,
                          uint64_t user_bytes, GError **errp)
{
    if (!strcmp(key, "rw")) {
        return sim_parse_rw(spec, val, errp);
    }
    if (!strcmp(key, "bs")) {
        return sim_parse_bs(spec, val, errp);
    }
    if (!strcmp(key, "span")) {
        return sim_parse_span(val, user_bytes, &spec->span_bytes, errp);
    }
    if (!strcmp(key, "runtime")) {
        return sim_parse_time(val, &spec->runtime_ns, errp);
    }
    if (!strcmp(key, "ramp")) {
        return sim_parse_time(val, &spec->ramp_ns, errp);
    }
    if ((!strcmp(key, "rwmixread") &&
         parse_uint(val, 0, 100, &spec->rwmixread)) ||
        (!strcmp(key, "iodepth") &&
         parse_uint(val, 1, 65536, &spec->iodepth)) ||
        (!strcmp(key, "numjobs") &&
         parse_uint(val, 1, 4096, &spec->numjobs))) {
        return true;
    }
    g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                "%s=%s: not a number in its range", key, val);
    return false;
}

/* Apply every key of @group (global defaults or a step) to @spec. */
static bool apply_run_group(GKeyFile *kf, const char *group, SimSpec *spec,
                            uint64_t user_bytes, GError **errp)
{
    g_auto(GStrv) keys = g_key_file_get_keys(kf, group, NULL, NULL);

    for (char **k = keys; k && *k; k++) {
        g_autofree char *val = g_key_file_get_value(kf, group, *k, NULL);

        if (!key_is(*k, run_keys)) {
            g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                        "unknown key '%s' (a workload takes rw, bs, "
                        "rwmixread, iodepth, numjobs, span, runtime, ramp; "
                        "a step of its own precondition or idle)", *k);
            return false;
        }
        if (!val || !apply_run_key(spec, *k, val, user_bytes, errp)) {
            return false;
        }
    }
    return true;
}

/* A step with precondition= or idle= is only that. */
static bool parse_special(GKeyFile *kf, const char *group, SimStep *st,
                          GError **errp)
{
    gsize nkeys = 0;
    g_auto(GStrv) keys = g_key_file_get_keys(kf, group, &nkeys, NULL);
    g_autofree char *val = NULL;
    const char *key = g_key_file_has_key(kf, group, "precondition", NULL) ?
                      "precondition" : "idle";

    if (nkeys != 1) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "a %s step has no other key", key);
        return false;
    }
    val = g_key_file_get_value(kf, group, key, NULL);
    if (!val) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID, "no %s", key);
        return false;
    }
    if (!strcmp(key, "precondition")) {
        st->kind = SIM_STEP_PRECONDITION;
        st->precondition = g_strdup(val);
        return h3100_precondition_valid(val, errp);
    }
    st->kind = SIM_STEP_IDLE;
    if (!sim_parse_time(val, &st->idle_ns, errp)) {
        return false;
    }
    if (!st->idle_ns) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "idle must be above zero");
        return false;
    }
    return true;
}

static bool parse_step(GKeyFile *kf, const char *group, bool has_global,
                       const H3100Config *cfg, uint64_t seed, SimStep *st,
                       GError **errp)
{
    uint64_t user = cfg->geo.user_bytes;

    st->name = g_strdup(group);
    sim_spec_defaults(&st->spec, cfg);
    st->spec.seed = seed;
    if (g_key_file_has_key(kf, group, "precondition", NULL) ||
        g_key_file_has_key(kf, group, "idle", NULL)) {
        return parse_special(kf, group, st, errp);
    }
    st->kind = SIM_STEP_RUN;
    return (!has_global ||
            apply_run_group(kf, "global", &st->spec, user, errp)) &&
           apply_run_group(kf, group, &st->spec, user, errp) &&
           sim_spec_check(&st->spec, errp);
}

/*
 * GKeyFile merges groups of the same name; a procedure that names two
 * steps alike is more likely a copy-paste slip, so it is refused.
 */
static const char *duplicate_group(const char *text, size_t len,
                                   GHashTable *seen)
{
    g_auto(GStrv) lines = NULL;
    g_autofree char *copy = g_strndup(text, len);

    lines = g_strsplit(copy, "\n", -1);
    for (char **l = lines; *l; l++) {
        char *p = g_strstrip(*l), *close;

        if (*p != '[' || !(close = strrchr(p, ']'))) {
            continue;
        }
        *close = 0;
        if (!g_hash_table_add(seen, g_strdup(p + 1))) {
            return g_hash_table_lookup(seen, p + 1);
        }
    }
    return NULL;
}

static bool parse_groups(GKeyFile *kf, SimScript *s, const H3100Config *cfg,
                         uint64_t seed, GError **errp)
{
    gsize ngroups = 0;
    g_auto(GStrv) groups = g_key_file_get_groups(kf, &ngroups);
    bool has_global = ngroups && !strcmp(groups[0], "global");
    gsize first = has_global ? 1 : 0;

    if (ngroups - first == 0 || ngroups - first > SIM_SCRIPT_MAX_STEPS) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "expected 1 to %u steps ([name] groups), found %zu",
                    SIM_SCRIPT_MAX_STEPS, ngroups - first);
        return false;
    }
    if (has_global && (g_key_file_has_key(kf, "global", "precondition", NULL) ||
                       g_key_file_has_key(kf, "global", "idle", NULL))) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "[global] holds workload keys only: precondition and "
                    "idle are steps");
        return false;
    }
    s->steps = g_new0(SimStep, ngroups - first);
    for (gsize i = first; i < ngroups; i++) {
        SimStep *st = &s->steps[s->nsteps++];

        if (!strcmp(groups[i], "global")) {
            g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                        "[global] must be the first group");
            return false;
        }
        if (!parse_step(kf, groups[i], has_global, cfg, seed + i - first, st,
                        errp)) {
            g_prefix_error(errp, "[%s] ", groups[i]);
            return false;
        }
    }
    return true;
}

bool sim_script_parse(SimScript *s, const char *text, size_t len,
                      const char *name, const H3100Config *cfg, uint64_t seed,
                      GError **errp)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash,
                                                       g_str_equal, g_free,
                                                       NULL);
    g_autoptr(GError) err = NULL;
    const char *dup;

    memset(s, 0, sizeof(*s));
    s->name = g_strdup(name);
    s->user_bytes = cfg->geo.user_bytes;
    if (len > SIM_SCRIPT_MAX_BYTES || memchr(text, 0, len)) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "%s: not a procedure (text of at most %u bytes)", name,
                    SIM_SCRIPT_MAX_BYTES);
        return false;
    }
    dup = duplicate_group(text, len, seen);
    if (dup) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "%s: [%s] appears twice", name, dup);
        return false;
    }
    if (!g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &err) ||
        !parse_groups(kf, s, cfg, seed, &err)) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID, "%s: %s", name,
                    err->message);
        return false;
    }
    return true;
}

bool sim_script_load(SimScript *s, const char *path, const H3100Config *cfg,
                     uint64_t seed, GError **errp)
{
    g_autofree char *text = NULL;
    gsize len = 0;

    memset(s, 0, sizeof(*s));
    if (!g_file_get_contents(path, &text, &len, errp)) {
        return false;
    }
    return sim_script_parse(s, text, len, path, cfg, seed, errp);
}

void sim_script_free(SimScript *s)
{
    for (uint32_t i = 0; i < s->nsteps; i++) {
        g_free(s->steps[i].name);
        g_free(s->steps[i].precondition);
    }
    g_free(s->steps);
    g_free(s->name);
    memset(s, 0, sizeof(*s));
}

/* What a step without timed host I/O did to the drive (reclaim, health). */
static void note_background(H3100Model *m, uint64_t now,
                            const H3100Health *before, uint64_t ns,
                            SimResult *res)
{
    memset(res, 0, sizeof(*res));
    h3100_model_health(m, now, &res->health);
    res->runtime_ns = ns;
    sim_note_drive(res, before);
}

/* No host I/O: the drive's idle reclaim runs as the device's timer asks. */
static void run_idle(H3100Model *m, uint64_t *now, uint64_t ns)
{
    uint64_t end = *now + ns;

    for (uint64_t t = *now; t < end;) {
        t = end - t > IDLE_TICK_NS ? t + IDLE_TICK_NS : end;
        h3100_model_idle(m, t);
    }
    *now = end;
}

static void say_step(const SimScript *s, uint32_t i)
{
    const SimStep *st = &s->steps[i];

    fprintf(stderr, "h3100-sim: step %u/%u: %s", i + 1, s->nsteps, st->name);
    if (st->kind == SIM_STEP_RUN) {
        fprintf(stderr, " (%s, %.1f s)", sim_rw_name(st->spec.rw),
                (st->spec.ramp_ns + st->spec.runtime_ns) / 1e9);
    }
    fputc('\n', stderr);
}

bool sim_script_run(const SimScript *s, H3100Model *m, uint64_t *now,
                    SimResult *res, GError **errp)
{
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const SimStep *st = &s->steps[i];
        H3100Health before;
        uint64_t t0 = *now;

        say_step(s, i);
        h3100_model_health(m, *now, &before);
        switch (st->kind) {
        case SIM_STEP_RUN:
            sim_run(m, &st->spec, now, &res[i]);
            break;
        case SIM_STEP_PRECONDITION:
            if (!h3100_model_precondition(m, st->precondition,
                                          st->spec.seed, h3100_progress_bar,
                                          st->name, errp)) {
                g_prefix_error(errp, "[%s] ", st->name);
                return false;
            }
            note_background(m, *now, &before, 0, &res[i]);
            break;
        case SIM_STEP_IDLE:
            run_idle(m, now, st->idle_ns);
            note_background(m, *now, &before, *now - t0, &res[i]);
            break;
        }
    }
    return true;
}

/* "randread 4k 2x63 25%": what a workload step ran */
static void describe(const SimScript *s, const SimStep *st, char *buf,
                     size_t len)
{
    const SimSpec *sp = &st->spec;
    char bs[16];

    switch (st->kind) {
    case SIM_STEP_PRECONDITION:
        snprintf(buf, len, "precondition %s", st->precondition);
        return;
    case SIM_STEP_IDLE:
        snprintf(buf, len, "idle %.1f s", st->idle_ns / 1e9);
        return;
    case SIM_STEP_RUN:
        break;
    }
    if (sp->nbs > 1) {
        snprintf(bs, sizeof(bs), "mix");
    } else if (sp->bs[0].bytes % 1024 == 0) {
        snprintf(bs, sizeof(bs), "%uk", sp->bs[0].bytes / 1024);
    } else {
        snprintf(bs, sizeof(bs), "%u", sp->bs[0].bytes);
    }
    snprintf(buf, len, "%s %s %ux%u %.0f%%", sim_rw_name(sp->rw), bs,
             sp->numjobs, sp->iodepth,
             100.0 * sp->span_bytes / s->user_bytes);
}

void sim_script_print(FILE *out, const SimScript *s, const SimResult *res,
                      const char *profile)
{
    fprintf(out, "%s: procedure %s, %u steps\n", profile, s->name, s->nsteps);
    fprintf(out, "%-24s %-30s %10s %9s %9s %9s %9s %7s %8s\n", "step",
            "workload", "IOPS", "MB/s", "mean_us", "p99_us", "p99.9_us",
            "WAF", "reclaim");
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const SimStep *st = &s->steps[i];
        const SimResult *r = &res[i];
        char what[64];

        describe(s, st, what, sizeof(what));
        fprintf(out, "%-24.24s %-30.30s ", st->name, what);
        if (st->kind == SIM_STEP_RUN) {
            fprintf(out, "%10.0f %9.1f %9.1f %9.1f %9.1f ", r->iops, r->mbps,
                    h3100_lathist_mean(&r->lat) / 1e3,
                    h3100_lathist_quantile(&r->lat, 0.99) / 1e3,
                    h3100_lathist_quantile(&r->lat, 0.999) / 1e3);
        } else {
            fprintf(out, "%10s %9s %9s %9s %9s ", "-", "-", "-", "-", "-");
        }
        fprintf(out, "%7.3f %8" PRIu64 "\n", r->waf, r->gc_victims);
    }
}

/* @text as a JSON string: step names come from the file */
static void json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(out, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(out, "\\u%04x", *p);
        } else {
            fputc(*p, out);
        }
    }
    fputc('"', out);
}

void sim_script_print_json(FILE *out, const SimScript *s,
                           const SimResult *res, const char *profile)
{
    static const char *const kinds[] = {
        [SIM_STEP_RUN] = "run",
        [SIM_STEP_PRECONDITION] = "precondition",
        [SIM_STEP_IDLE] = "idle",
    };

    fprintf(out, "{\"profile\": ");
    json_string(out, profile);
    fprintf(out, ", \"procedure\": ");
    json_string(out, s->name);
    fprintf(out, ", \"steps\": [\n");
    for (uint32_t i = 0; i < s->nsteps; i++) {
        const SimStep *st = &s->steps[i];
        const SimResult *r = &res[i];

        fprintf(out, "{\"name\": ");
        json_string(out, st->name);
        fprintf(out, ", \"kind\": \"%s\", ", kinds[st->kind]);
        if (st->kind == SIM_STEP_RUN) {
            fprintf(out, "\"result\":\n");
            sim_print_result_json(out, &st->spec, r, profile);
            fputc('}', out);
        } else {
            fprintf(out, "\"seconds\": %.3f, \"waf\": %.4f, \"gc_victims\": %"
                    PRIu64 ", \"gc_slots_moved\": %" PRIu64 ", "
                    "\"free_superblocks\": %u, \"lifetime_waf\": %.4f}",
                    r->runtime_ns / 1e9, r->waf, r->gc_victims,
                    r->gc_slots_moved, r->health.free_superblocks,
                    r->health.waf);
        }
        fprintf(out, "%s\n", i + 1 < s->nsteps ? "," : "");
    }
    fprintf(out, "]}\n");
}
