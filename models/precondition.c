/*
 * Precondition fast-forward: fill and overwrite the drive at FTL speed,
 * with no timing, so a benchmark can start from steady state.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model_priv.h"

#define PROGRESS_EVERY (1u << 20)
#define PREFETCH_AHEAD 16u

void h3100_progress_bar(void *label, uint64_t done, uint64_t total)
{
    static const char bar[] = "##############################";
    int width = 30, fill;

    if (!isatty(STDERR_FILENO) || !total) {
        return;
    }
    fill = (int)(done * width / total);
    fprintf(stderr, "\r%-24s [%.*s%*s] %3d%%", (const char *)label, fill, bar,
            width - fill, "", (int)(done * 100 / total));
    if (done >= total) {
        fputc('\n', stderr);
    }
    fflush(stderr);
}

/*
 * One step of a precondition: "rand:N" fills first, as SNIA's
 * preconditioning does; "overwrite:N" only adds random writes, to age a
 * drive that already holds data; "wear:PCT" adds the erases of PCT% of
 * the rated P/E cycles to every block (6,300 cycles of writes would take
 * days at FTL speed).  "seq:F" fills the first fraction F of the
 * namespace in order (a half-written drive: "seq:0.5").  Steps join with
 * '+': "wear:90+seq".
 */
typedef struct PreStep {
    bool fill;
    double fill_fraction;             /* of the namespace, from LBA 0 */
    double rounds;
    double wear_pct;
} PreStep;

#define PRE_WEAR_MAX_PCT 1000.0

static bool parse_number(const char *text, double max, double *out)
{
    char *end;

    *out = g_ascii_strtod(text, &end);
    return end != text && !*end && *out >= 0 && *out <= max;
}

static bool parse_step(const char *step, PreStep *p)
{
    memset(p, 0, sizeof(*p));
    if (!strcmp(step, "none")) {
        return true;
    }
    p->fill_fraction = 1;
    if (!strcmp(step, "seq")) {
        p->fill = true;
        return true;
    }
    if (!strncmp(step, "seq:", 4)) {
        p->fill = true;
        return parse_number(step + 4, 1, &p->fill_fraction) &&
               p->fill_fraction > 0;
    }
    if (!strncmp(step, "rand:", 5)) {
        p->fill = true;
        return parse_number(step + 5, 1000, &p->rounds);
    }
    if (!strncmp(step, "overwrite:", 10)) {
        return parse_number(step + 10, 1000, &p->rounds);
    }
    if (!strncmp(step, "wear:", 5)) {
        return parse_number(step + 5, PRE_WEAR_MAX_PCT, &p->wear_pct);
    }
    return false;
}

static bool parse_spec(const char *spec, GArray *steps, GError **errp)
{
    g_auto(GStrv) parts = g_strsplit(spec, "+", 0);

    for (unsigned i = 0; parts[i]; i++) {
        PreStep p;

        if (!parse_step(parts[i], &p)) {
            g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                        "precondition '%s': expected none, seq, seq:F, "
                        "rand:N, overwrite:N or wear:PCT, joined by +", spec);
            return false;
        }
        g_array_append_val(steps, p);
    }
    return true;
}

/* Every superblock worn to @pct% of the rated cycles, spread as wear
 * levelling keeps it: within wl_threshold, and a tenth of the wear. */
static void wear_blocks(H3100Model *m, double pct, uint64_t seed)
{
    const H3100FtlParams *fp = &m->cfg.ftl;
    double target = pct / 100.0 * fp->rated_pe;
    uint32_t spread = (uint32_t)MIN(fp->wl_threshold, target / 10);
    Rng rng;

    rng_seed(&rng, seed ^ 0x77656172ULL);
    for (uint32_t sb = 0; sb < m->ftl.nsb; sb++) {
        double e = target + (double)rng_below(&rng, spread + 1) -
                   spread / 2.0;

        bb_age_superblock(&m->ftl, sb, e > 0 ? (uint32_t)llround(e) : 0);
    }
}

static bool write_slot(H3100Model *m, uint64_t lpn, GError **errp)
{
    if (!ftl_write(&m->ftl, lpn, 0)) {
        m->read_only = true;
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "precondition: the drive ran out of spare blocks");
        return false;
    }
    return true;
}

static bool fill_sequential(H3100Model *m, double fraction,
                            H3100Progress progress, void *opaque,
                            GError **errp)
{
    uint64_t total = (uint64_t)(m->ftl.user_slots * fraction);

    for (uint64_t lpn = 0; lpn < total; lpn++) {
        if (!write_slot(m, lpn, errp)) {
            return false;
        }
        if (progress && (lpn % PROGRESS_EVERY == 0)) {
            progress(opaque, lpn, total);
        }
    }
    if (progress) {
        progress(opaque, total, total);
    }
    return true;
}

/* Random 4 KiB overwrites; map entries are fetched a few writes ahead
 * since on a large drive nearly every one misses the cache. */
static bool overwrite_random(H3100Model *m, uint64_t count, uint64_t seed,
                             H3100Progress progress, void *opaque,
                             GError **errp)
{
    uint64_t user = m->ftl.user_slots;
    uint64_t ahead[PREFETCH_AHEAD];
    Rng rng;

    rng_seed(&rng, seed);
    for (uint32_t i = 0; i < PREFETCH_AHEAD; i++) {
        ahead[i] = rng_below(&rng, user);
    }
    for (uint64_t i = 0; i < count; i++) {
        uint32_t k = i % PREFETCH_AHEAD;
        uint64_t lpn = ahead[k];

        ahead[k] = rng_below(&rng, user);
        ftl_prefetch(&m->ftl, ahead[k]);
        if (!write_slot(m, lpn, errp)) {
            return false;
        }
        if (progress && (i % PROGRESS_EVERY == 0)) {
            progress(opaque, i, count);
        }
    }
    if (progress) {
        progress(opaque, count, count);
    }
    return true;
}

bool h3100_precondition_valid(const char *spec, GError **errp)
{
    g_autoptr(GArray) steps = g_array_new(false, false, sizeof(PreStep));

    return parse_spec(spec, steps, errp);
}

bool h3100_model_precondition(H3100Model *m, const char *spec, uint64_t seed,
                              H3100Progress progress, void *opaque,
                              GError **errp)
{
    g_autoptr(GArray) steps = g_array_new(false, false, sizeof(PreStep));
    bool timing = m->timing, ok = true;
    uint64_t before = m->ftl.stats.host_slots;
    uint64_t written;

    if (!parse_spec(spec, steps, errp)) {
        return false;
    }
    h3100_model_set_timing(m, false);
    for (unsigned i = 0; ok && i < steps->len; i++) {
        const PreStep *p = &g_array_index(steps, PreStep, i);

        if (p->wear_pct > 0) {
            wear_blocks(m, p->wear_pct, seed + i);
        }
        if (p->fill) {
            ok = fill_sequential(m, p->fill_fraction, progress, opaque,
                                 errp);
        }
        if (ok && p->rounds > 0) {
            ok = overwrite_random(m, (uint64_t)(p->rounds *
                                                m->ftl.user_slots),
                                  seed + i, progress, opaque, errp);
        }
    }
    h3100_model_set_timing(m, timing);
    /* the drive counts these as host writes, as a real one would */
    written = m->ftl.stats.host_slots - before;
    m->c.host_write_bytes += written * H3100_SLOT_BYTES;
    m->c.host_write_cmds += written;
    return ok;
}
