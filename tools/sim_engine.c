/*
 * The simulator's host side: see sim_engine.h.
 *
 * numjobs x iodepth commands are outstanding at once; when one completes,
 * its job submits the next at that instant (no host think time).  Events
 * are taken in completion-time order, so the model sees time go forward.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h3100/telemetry.h"
#include "heap.h"
#include "rng.h"
#include "sim_engine.h"

typedef struct Job {
    Rng rng;
    uint64_t region_start;
    uint64_t region_bytes;
    uint64_t cursor;                  /* sequential position in region */
    H3100Io next;                     /* drawn one command ahead */
} Job;

typedef struct Inflight {
    uint64_t submitted;
    uint32_t job;
    bool write;
} Inflight;

static const char *const rw_names[] = {
    "read", "write", "randread", "randwrite", "randrw", "rw",
};

const char *sim_rw_name(SimRw rw)
{
    return rw_names[rw];
}

bool sim_parse_rw(SimSpec *spec, const char *text, GError **errp)
{
    for (size_t i = 0; i < G_N_ELEMENTS(rw_names); i++) {
        if (!strcmp(text, rw_names[i])) {
            spec->rw = (SimRw)i;
            return true;
        }
    }
    g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                "--rw=%s: expected read, write, randread, randwrite, randrw "
                "or rw", text);
    return false;
}

static bool parse_size(const char *text, uint64_t *out)
{
    char *end;
    double v = g_ascii_strtod(text, &end);
    uint64_t mult = 1;

    if (end == text || v < 0) {
        return false;
    }
    switch (*end) {
    case 'k': case 'K': mult = 1ULL << 10; end++; break;
    case 'm': case 'M': mult = 1ULL << 20; end++; break;
    case 'g': case 'G': mult = 1ULL << 30; end++; break;
    case 't': case 'T': mult = 1ULL << 40; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'b' || *end == 'B') {
        end++;
    }
    if (*end) {
        return false;
    }
    *out = (uint64_t)(v * mult + 0.5);
    return true;
}

bool sim_parse_bs(SimSpec *spec, const char *text, GError **errp)
{
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);
    uint32_t n = 0;

    for (char **p = parts; *p; p++) {
        g_auto(GStrv) kv = g_strsplit(*p, ":", 2);
        uint64_t bytes, weight = 1;

        if (n == SIM_MAX_BS || !parse_size(kv[0], &bytes) || bytes == 0 ||
            bytes % 512 || bytes > (32u << 20) ||
            (kv[1] && (!parse_size(kv[1], &weight) || weight == 0 ||
                       weight > 1000000))) {
            g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                        "--bs=%s: expected sizes that are multiples of 512 "
                        "(up to 32M), optionally with :weight, at most %u",
                        text, SIM_MAX_BS);
            return false;
        }
        spec->bs[n].bytes = (uint32_t)bytes;
        spec->bs[n].weight = (uint32_t)weight;
        n++;
    }
    if (!n) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID, "--bs is empty");
        return false;
    }
    spec->nbs = n;
    return true;
}

bool sim_parse_span(const char *text, uint64_t whole, uint64_t *out,
                    GError **errp)
{
    char *end;
    double frac = g_ascii_strtod(text, &end);

    if (end != text && *end == '%' && !end[1] && frac > 0 && frac <= 100) {
        frac /= 100;
        *out = (uint64_t)(frac * whole);
    } else if (end != text && !*end && frac > 0 && frac <= 1) {
        *out = (uint64_t)(frac * whole);
    } else if (!parse_size(text, out)) {
        *out = 0;
    }
    *out -= *out % H3100_SLOT_BYTES;
    if (*out == 0 || *out > whole) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "--span=%s: expected a fraction (0.5), a percentage "
                    "(50%%) or a size up to the capacity", text);
        return false;
    }
    return true;
}

bool sim_parse_time(const char *text, uint64_t *ns, GError **errp)
{
    char *end;
    double v = g_ascii_strtod(text, &end);
    double scale = 1e9;

    if (end != text) {
        if (!strcmp(end, "ms")) {
            scale = 1e6;
        } else if (!strcmp(end, "us")) {
            scale = 1e3;
        } else if (!strcmp(end, "m")) {
            scale = 60e9;
        } else if (strcmp(end, "s") && *end) {
            end = (char *)text;
        }
    }
    if (end == text || v < 0 || v * scale > 1e15) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "time '%s': expected seconds, e.g. 5, 5s, 500ms", text);
        return false;
    }
    *ns = (uint64_t)(v * scale);
    return true;
}

void sim_spec_defaults(SimSpec *spec, const H3100Config *cfg)
{
    memset(spec, 0, sizeof(*spec));
    spec->rw = SIM_RANDREAD;
    spec->rwmixread = 50;
    spec->bs[0].bytes = 4096;
    spec->bs[0].weight = 1;
    spec->nbs = 1;
    spec->iodepth = 1;
    spec->numjobs = 1;
    spec->span_bytes = cfg->geo.user_bytes;
    spec->runtime_ns = 1000000000ULL;
    spec->seed = 1;
}

bool sim_spec_check(const SimSpec *spec, GError **errp)
{
    const char *why = NULL;

    if (spec->rwmixread > 100) {
        why = "rwmixread must be from 0 to 100";
    } else if (spec->iodepth < 1 || spec->iodepth > 65536 ||
               spec->numjobs < 1 || spec->numjobs > 4096) {
        why = "iodepth must be 1..65536 and numjobs 1..4096";
    } else if (spec->runtime_ns == 0) {
        why = "runtime must be above zero";
    }
    for (uint32_t i = 0; !why && i < spec->nbs; i++) {
        if (spec->bs[i].bytes > spec->span_bytes / spec->numjobs) {
            why = "bs is larger than each job's share of span";
        }
    }
    if (why) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID, "%s", why);
        return false;
    }
    return true;
}

static uint32_t pick_bs(const SimSpec *spec, Rng *rng)
{
    uint64_t total = 0, r;

    if (spec->nbs == 1) {
        return spec->bs[0].bytes;
    }
    for (uint32_t i = 0; i < spec->nbs; i++) {
        total += spec->bs[i].weight;
    }
    r = rng_below(rng, total);
    for (uint32_t i = 0; i < spec->nbs; i++) {
        if (r < spec->bs[i].weight) {
            return spec->bs[i].bytes;
        }
        r -= spec->bs[i].weight;
    }
    return spec->bs[0].bytes;
}

static bool pick_write(const SimSpec *spec, Rng *rng)
{
    switch (spec->rw) {
    case SIM_WRITE:
    case SIM_RANDWRITE:
        return true;
    case SIM_RANDRW:
    case SIM_RW:
        return rng_below(rng, 100) >= spec->rwmixread;
    default:
        return false;
    }
}

static uint64_t pick_offset(const SimSpec *spec, Job *job, uint32_t bs)
{
    bool random = spec->rw == SIM_RANDREAD || spec->rw == SIM_RANDWRITE ||
                  spec->rw == SIM_RANDRW;
    uint64_t off;

    if (bs > job->region_bytes) {
        return job->region_start;
    }
    if (random) {
        uint64_t align = bs % H3100_SLOT_BYTES ? 512 : H3100_SLOT_BYTES;
        uint64_t choices = (job->region_bytes - bs) / align + 1;

        return job->region_start + rng_below(&job->rng, choices) * align;
    }
    if (job->cursor + bs > job->region_bytes) {
        job->cursor = 0;
    }
    off = job->region_start + job->cursor;
    job->cursor += bs;
    return off;
}

static void init_jobs(const SimSpec *spec, Job *jobs)
{
    bool seq = spec->rw == SIM_READ || spec->rw == SIM_WRITE ||
               spec->rw == SIM_RW;

    for (uint32_t j = 0; j < spec->numjobs; j++) {
        Job *job = &jobs[j];

        rng_seed(&job->rng, spec->seed * 1000003ULL + j);
        if (seq) {
            /* each sequential job streams through its own share */
            job->region_bytes = spec->span_bytes / spec->numjobs;
            job->region_bytes -= job->region_bytes % H3100_SLOT_BYTES;
            job->region_start = job->region_bytes * j;
        } else {
            job->region_start = 0;
            job->region_bytes = spec->span_bytes;
        }
        job->cursor = 0;
    }
}

/* The completions of one --interval / --telemetry row. */
typedef struct Window {
    uint64_t start;
    H3100Health begin;                /* the drive at @start */
    H3100LatHist lat;
    uint64_t read_ios;
    uint64_t write_ios;
    uint64_t bytes;
} Window;

static void window_open(Window *w, uint64_t t)
{
    h3100_lathist_reset(&w->lat);
    w->start = t;
    w->read_ios = 0;
    w->write_ios = 0;
    w->bytes = 0;
}

static void put_json_row(FILE *out, const H3100TelemetryRow *r)
{
    g_autoptr(GString) line = g_string_sized_new(512);

    h3100_telemetry_json(r, line);
    fputs(line->str, out);
    fflush(out);
}

/*
 * Close @w at @end: its row goes to each output and its completions into
 * @run; the next window opens at @end.
 */
static void window_next(const SimSpec *spec, Window *w, H3100Model *m,
                        uint64_t end, H3100LatHist *run)
{
    H3100Health h;
    H3100TelemetryRow r = { 0 };

    h3100_model_health(m, end, &h);
    h3100_telemetry_fill_health(&r, &w->begin, &h);
    h3100_telemetry_fill_io(&r, w->read_ios, w->write_ios, w->bytes);
    h3100_telemetry_fill_lat(&r, &w->lat);
    if (spec->interval_out && spec->interval_json) {
        put_json_row(spec->interval_out, &r);
    } else if (spec->interval_out) {
        fprintf(spec->interval_out,
                "%10.3f %12.1f %10.2f %12.2f %12.2f %7.3f %6u %9.2f\n",
                r.t_s, r.iops, r.mbps, r.lat_mean_us, r.lat_p99_us, r.waf,
                r.free_superblocks, h.nand_backlog_ns / 1e6);
        fflush(spec->interval_out);
    }
    if (spec->telemetry_out) {
        put_json_row(spec->telemetry_out, &r);
    }
    h3100_lathist_merge(run, &w->lat);
    w->begin = h;
    window_open(w, end);
}

/* After the last row: the latency CDF of every completion in the rows. */
static void put_json_cdf(FILE *out, const H3100LatHist *run)
{
    g_autoptr(GString) line = g_string_sized_new(8192);

    h3100_telemetry_cdf_json(run, line);
    fputs(line->str, out);
    fflush(out);
}

/*
 * Draw a job's next command now and tell the model, so the map entry it
 * needs is in cache by the time it is submitted: on a large drive that
 * miss would otherwise cost more than the rest of the command.
 */
static void draw_next(H3100Model *m, const SimSpec *spec, Job *job)
{
    bool write = pick_write(spec, &job->rng);
    uint32_t bs = pick_bs(spec, &job->rng);

    job->next.op = write ? H3100_OP_WRITE : H3100_OP_READ;
    job->next.length = bs;
    job->next.offset = pick_offset(spec, job, bs);
    h3100_model_prefetch(m, job->next.offset);
}

static void submit_next(H3100Model *m, const SimSpec *spec, Job *jobs,
                        uint32_t j, uint64_t now, Heap *events,
                        Inflight *inflight, uint32_t slot, SimResult *res)
{
    Job *job = &jobs[j];
    H3100Io io = job->next;
    bool write = io.op == H3100_OP_WRITE;
    uint32_t bs = (uint32_t)io.length;
    H3100Result r;

    draw_next(m, spec, job);
    r = h3100_model_submit(m, now, &io);

    if (r.status != H3100_OK) {
        res->errors++;
    }
    inflight[slot].submitted = now;
    inflight[slot].job = j;
    inflight[slot].write = write;
    res->commands++;
    /* the slot index breaks ties so the order never depends on the heap */
    heap_push(events, r.done_ns, ((uint64_t)bs << 32) | slot);
}

void sim_note_drive(SimResult *res, const H3100Health *from)
{
    const H3100Health *to = &res->health;

    res->waf = 0;
    if (to->host_write_bytes > from->host_write_bytes) {
        res->waf = (double)(to->nand_write_bytes - from->nand_write_bytes) /
                   (to->host_write_bytes - from->host_write_bytes);
    }
    res->gc_victims = to->gc_victims - from->gc_victims;
    res->gc_slots_moved = to->gc_slots_moved - from->gc_slots_moved;
    res->wbuf_stalls = to->wbuf_stalls - from->wbuf_stalls;
}

void sim_run(H3100Model *m, const SimSpec *spec, uint64_t *now,
             SimResult *res)
{
    uint32_t slots = spec->numjobs * spec->iodepth;
    Job *jobs = g_new0(Job, spec->numjobs);
    Inflight *inflight = g_new0(Inflight, slots);
    uint64_t t0 = *now, win_start = t0 + spec->ramp_ns;
    uint64_t end = win_start + spec->runtime_ns;
    bool in_window = false;
    Window iw = { 0 };
    H3100LatHist run_lat;             /* the rows' completions, for the CDF */
    Heap events;
    HeapItem ev;
    H3100Health w0 = { 0 };           /* the drive as the window opened */
    struct timespec c0, c1;

    memset(res, 0, sizeof(*res));
    h3100_lathist_reset(&res->lat);
    h3100_lathist_reset(&res->read_lat);
    h3100_lathist_reset(&res->write_lat);
    h3100_lathist_reset(&run_lat);
    heap_init(&events);
    init_jobs(spec, jobs);
    for (uint32_t j = 0; j < spec->numjobs; j++) {
        draw_next(m, spec, &jobs[j]);
    }
    clock_gettime(CLOCK_MONOTONIC, &c0);
    for (uint32_t s = 0; s < slots; s++) {
        submit_next(m, spec, jobs, s / spec->iodepth, t0, &events, inflight,
                    s, res);
    }
    if (spec->interval_ns) {
        h3100_model_health(m, t0, &iw.begin);
        window_open(&iw, t0);
    }
    while (heap_pop(&events, &ev)) {
        uint64_t t = ev.key;
        uint32_t slot = (uint32_t)ev.value;
        uint32_t bs = (uint32_t)(ev.value >> 32);
        Inflight *in = &inflight[slot];
        uint64_t lat = t - in->submitted;

        if (!in_window && t >= win_start) {
            in_window = true;
            h3100_model_health(m, t, &w0);
        }
        while (spec->interval_ns && t >= iw.start + spec->interval_ns) {
            window_next(spec, &iw, m, iw.start + spec->interval_ns, &run_lat);
        }
        if (t >= end) {
            *now = t;
            break;
        }
        if (in_window) {
            res->ios++;
            h3100_lathist_add(&res->lat, lat);
            if (in->write) {
                res->write_ios++;
                res->write_bytes += bs;
                h3100_lathist_add(&res->write_lat, lat);
            } else {
                res->read_ios++;
                res->read_bytes += bs;
                h3100_lathist_add(&res->read_lat, lat);
            }
        }
        if (spec->interval_ns) {
            iw.read_ios += !in->write;
            iw.write_ios += in->write;
            iw.bytes += bs;
            h3100_lathist_add(&iw.lat, lat);
        }
        *now = t;
        submit_next(m, spec, jobs, in->job, t, &events, inflight, slot, res);
    }
    clock_gettime(CLOCK_MONOTONIC, &c1);
    if (spec->interval_ns && spec->telemetry_out) {
        put_json_cdf(spec->telemetry_out, &run_lat);
    }
    res->host_seconds = (c1.tv_sec - c0.tv_sec) +
                        (c1.tv_nsec - c0.tv_nsec) / 1e9;
    /* whatever is still in flight completes before the next run */
    while (heap_pop(&events, &ev)) {
        if (ev.key > *now) {
            *now = ev.key;
        }
    }
    res->runtime_ns = spec->runtime_ns;
    res->iops = res->ios / (spec->runtime_ns / 1e9);
    res->mbps = (res->read_bytes + res->write_bytes) /
                (spec->runtime_ns / 1e9) / 1e6;
    h3100_model_health(m, end, &res->health);
    sim_note_drive(res, &w0);
    {
        const H3100Config *cfg = h3100_model_config(m);
        double span = (double)spec->runtime_ns;

        res->die_util = (res->health.nand_busy_ns - w0.nand_busy_ns) /
                        (span * h3100_dies(cfg));
        res->core_util = (res->health.core_busy_ns - w0.core_busy_ns) /
                         (span * cfg->ctrl.cores);
    }
    heap_destroy(&events);
    g_free(jobs);
    g_free(inflight);
}

static void print_lat(FILE *out, const char *what, const H3100LatHist *h)
{
    if (!h->count) {
        return;
    }
    fprintf(out, "  %-5s lat (us): mean=%.2f p50=%.2f p99=%.2f p99.9=%.2f "
            "max=%.2f\n", what, h3100_lathist_mean(h) / 1e3,
            h3100_lathist_quantile(h, 0.5) / 1e3,
            h3100_lathist_quantile(h, 0.99) / 1e3,
            h3100_lathist_quantile(h, 0.999) / 1e3, h->max / 1e3);
}

static void format_bs(const SimSpec *spec, char *buf, size_t len)
{
    buf[0] = 0;
    for (uint32_t i = 0; i < spec->nbs; i++) {
        size_t used = strlen(buf);

        if (spec->nbs == 1) {
            snprintf(buf + used, len - used, "%u", spec->bs[i].bytes);
        } else {
            snprintf(buf + used, len - used, "%s%u:%u", i ? "," : "",
                     spec->bs[i].bytes, spec->bs[i].weight);
        }
    }
}

void sim_print_result(FILE *out, const SimSpec *spec, const SimResult *res,
                      const char *profile)
{
    const H3100Health *h = &res->health;
    char bs[128];
    double secs = res->runtime_ns / 1e9;

    format_bs(spec, bs, sizeof(bs));
    fprintf(out, "%s: rw=%s bs=%s iodepth=%u numjobs=%u span=%" PRIu64
            " runtime=%.3fs\n", profile, sim_rw_name(spec->rw), bs,
            spec->iodepth, spec->numjobs, spec->span_bytes, secs);
    if (res->read_ios) {
        fprintf(out, "  read : IOPS=%.1f BW=%.2fMB/s\n", res->read_ios / secs,
                res->read_bytes / secs / 1e6);
    }
    if (res->write_ios) {
        fprintf(out, "  write: IOPS=%.1f BW=%.2fMB/s\n",
                res->write_ios / secs, res->write_bytes / secs / 1e6);
    }
    print_lat(out, "read", &res->read_lat);
    print_lat(out, "write", &res->write_lat);
    fprintf(out, "  drive: WAF=%.3f (lifetime %.3f) reclaim victims=%" PRIu64
            " moved=%" PRIu64 " buffer stalls=%" PRIu64 " free superblocks="
            "%u/%u\n", res->waf, h->waf, res->gc_victims,
            res->gc_slots_moved, res->wbuf_stalls, h->free_superblocks,
            h->superblocks);
    fprintf(out, "  wear : erase min/avg/max=%u/%.2f/%u percentage used=%u%% "
            "available spare=%u%% read-ahead hits=%" PRIu64 " suspends=%"
            PRIu64 "\n", h->erase_min, h->erase_avg, h->erase_max,
            h->percentage_used, h->available_spare_pct, h->ra_hits,
            h->suspends);
    fprintf(out, "  ecc  : reads retried=%" PRIu64 " soft decodes=%" PRIu64
            " uncorrectable host/reclaim=%" PRIu64 "/%" PRIu64 " grown bad "
            "blocks=%" PRIu64 "\n", h->ecc_retries, h->ecc_soft_decodes,
            h->ecc_host_uncorrectable, h->ecc_reclaim_uncorrectable,
            h->grown_bad_blocks);
    fprintf(out, "  busy : dies %.1f%% cores %.1f%%\n", res->die_util * 100,
            res->core_util * 100);
    if (res->errors) {
        fprintf(out, "  errors=%" PRIu64 "\n", res->errors);
    }
    fprintf(out, "  host : %.2f s for %" PRIu64 " commands (%.2f M/s)\n",
            res->host_seconds, res->commands,
            res->host_seconds > 0 ? res->commands / res->host_seconds / 1e6
                                  : 0.0);
}

static void json_lat(FILE *out, const char *name,
                     const H3100LatHist *h)
{
    fprintf(out, "  \"%s\": {\"count\": %" PRIu64 ", \"mean_us\": %.3f, "
            "\"p50_us\": %.3f, \"p99_us\": %.3f, \"p999_us\": %.3f, "
            "\"max_us\": %.3f},\n", name, h->count,
            h3100_lathist_mean(h) / 1e3,
            h3100_lathist_quantile(h, 0.5) / 1e3,
            h3100_lathist_quantile(h, 0.99) / 1e3,
            h3100_lathist_quantile(h, 0.999) / 1e3, h->max / 1e3);
}

void sim_print_result_json(FILE *out, const SimSpec *spec,
                           const SimResult *res, const char *profile)
{
    const H3100Health *h = &res->health;
    char bs[128];
    double secs = res->runtime_ns / 1e9;

    format_bs(spec, bs, sizeof(bs));
    fprintf(out, "{\n  \"profile\": \"%s\", \"rw\": \"%s\", \"bs\": \"%s\", "
            "\"iodepth\": %u, \"numjobs\": %u, \"span\": %" PRIu64 ", "
            "\"runtime_s\": %.3f,\n", profile, sim_rw_name(spec->rw), bs,
            spec->iodepth, spec->numjobs, spec->span_bytes, secs);
    fprintf(out, "  \"iops\": %.1f, \"mbps\": %.3f, \"read_iops\": %.1f, "
            "\"write_iops\": %.1f, \"errors\": %" PRIu64 ",\n", res->iops,
            res->mbps, res->read_ios / secs, res->write_ios / secs,
            res->errors);
    json_lat(out, "lat", &res->lat);
    json_lat(out, "read_lat", &res->read_lat);
    json_lat(out, "write_lat", &res->write_lat);
    fprintf(out, "  \"waf\": %.4f, \"lifetime_waf\": %.4f, \"gc_victims\": %"
            PRIu64 ", \"gc_slots_moved\": %" PRIu64 ", \"wbuf_stalls\": %"
            PRIu64 ",\n", res->waf, h->waf, res->gc_victims,
            res->gc_slots_moved, res->wbuf_stalls);
    fprintf(out, "  \"host_write_bytes\": %" PRIu64 ", \"nand_write_bytes\": %"
            PRIu64 ", \"free_superblocks\": %u, \"erase_avg\": %.3f, "
            "\"erase_max\": %u, \"percentage_used\": %u,\n",
            h->host_write_bytes, h->nand_write_bytes, h->free_superblocks,
            h->erase_avg, h->erase_max, h->percentage_used);
    fprintf(out, "  \"ecc_retries\": %" PRIu64 ", \"ecc_soft_decodes\": %"
            PRIu64 ", \"ecc_host_uncorrectable\": %" PRIu64 ", "
            "\"ecc_reclaim_uncorrectable\": %" PRIu64 ", "
            "\"grown_bad_blocks\": %" PRIu64 ", \"available_spare_pct\": %u,"
            "\n", h->ecc_retries, h->ecc_soft_decodes,
            h->ecc_host_uncorrectable, h->ecc_reclaim_uncorrectable,
            h->grown_bad_blocks, h->available_spare_pct);
    fprintf(out, "  \"die_util\": %.4f, \"core_util\": %.4f,\n",
            res->die_util, res->core_util);
    fprintf(out, "  \"host_seconds\": %.3f, \"commands\": %" PRIu64 "\n}\n",
            res->host_seconds, res->commands);
}
