/*
 * Precondition fast-forward: fill and overwrite the drive at FTL speed,
 * with no timing, so a benchmark can start from steady state.
 */
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

/* "rand:N" fills first, as SNIA's preconditioning does; "overwrite:N"
 * only adds random writes, to age a drive that already holds data. */
static bool parse_rounds(const char *text, double *rounds)
{
    char *end;

    *rounds = g_ascii_strtod(text, &end);
    return end != text && !*end && *rounds >= 0 && *rounds <= 1000;
}

static bool parse_spec(const char *spec, bool *fill, double *rounds,
                       GError **errp)
{
    *fill = false;
    *rounds = 0;
    if (!strcmp(spec, "none")) {
        return true;
    }
    if (!strcmp(spec, "seq")) {
        *fill = true;
        return true;
    }
    if (!strncmp(spec, "rand:", 5) && parse_rounds(spec + 5, rounds)) {
        *fill = true;
        return true;
    }
    if (!strncmp(spec, "overwrite:", 10) && parse_rounds(spec + 10, rounds)) {
        return true;
    }
    g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                "precondition '%s': expected none, seq, rand:N or "
                "overwrite:N", spec);
    return false;
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

static bool fill_sequential(H3100Model *m, H3100Progress progress,
                            void *opaque, GError **errp)
{
    uint64_t total = m->ftl.user_slots;

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
    bool fill;
    double rounds;

    return parse_spec(spec, &fill, &rounds, errp);
}

bool h3100_model_precondition(H3100Model *m, const char *spec, uint64_t seed,
                              H3100Progress progress, void *opaque,
                              GError **errp)
{
    bool fill, timing = m->timing, ok = true;
    double rounds;
    uint64_t before = m->ftl.stats.host_slots;
    uint64_t written;

    if (!parse_spec(spec, &fill, &rounds, errp)) {
        return false;
    }
    h3100_model_set_timing(m, false);
    if (fill) {
        ok = fill_sequential(m, progress, opaque, errp);
    }
    if (ok && rounds > 0) {
        ok = overwrite_random(m, (uint64_t)(rounds * m->ftl.user_slots),
                              seed, progress, opaque, errp);
    }
    h3100_model_set_timing(m, timing);
    /* the drive counts these as host writes, as a real one would */
    written = m->ftl.stats.host_slots - before;
    m->c.host_write_bytes += written * H3100_SLOT_BYTES;
    m->c.host_write_cmds += written;
    return ok;
}
