/*
 * Telemetry rows: see include/h3100/telemetry.h.
 */
#include <math.h>

#include "h3100/telemetry.h"

/* The CDF gets a point when either coordinate moved this much. */
#define CDF_FRACTION_STEP 0.005
#define CDF_LATENCY_RATIO 1.1

void h3100_telemetry_fill_health(H3100TelemetryRow *r,
                                 const H3100Health *begin,
                                 const H3100Health *end)
{
    r->t_s = end->now_ns / 1e9;
    r->interval_s = (end->now_ns - begin->now_ns) / 1e9;
    r->host_write_bytes = end->host_write_bytes - begin->host_write_bytes;
    r->nand_write_bytes = end->nand_write_bytes - begin->nand_write_bytes;
    /* reclaim between host writes still programs: no ratio without them */
    r->waf = r->host_write_bytes ?
             (double)r->nand_write_bytes / r->host_write_bytes : 0.0;
    r->lifetime_waf = end->waf;
    r->free_superblocks = end->free_superblocks;
    r->gc_victims = end->gc_victims - begin->gc_victims;
    r->gc_slots_moved = end->gc_slots_moved - begin->gc_slots_moved;
    r->wbuf_stalls = end->wbuf_stalls - begin->wbuf_stalls;
    r->temp_c = end->temperature_k - 273.15;
    r->throttle_level = end->throttle_level;
}

void h3100_telemetry_fill_io(H3100TelemetryRow *r, uint64_t read_ios,
                             uint64_t write_ios, uint64_t bytes)
{
    double secs = r->interval_s;

    if (secs <= 0) {
        r->iops = r->read_iops = r->write_iops = r->mbps = 0;
        return;
    }
    r->read_iops = read_ios / secs;
    r->write_iops = write_ios / secs;
    r->iops = (read_ios + write_ios) / secs;
    r->mbps = bytes / secs / 1e6;
}

void h3100_telemetry_fill_lat(H3100TelemetryRow *r, const H3100LatHist *h)
{
    r->lat_mean_us = h3100_lathist_mean(h) / 1e3;
    r->lat_p50_us = h3100_lathist_quantile(h, 0.5) / 1e3;
    r->lat_p99_us = h3100_lathist_quantile(h, 0.99) / 1e3;
    r->lat_p999_us = h3100_lathist_quantile(h, 0.999) / 1e3;
    r->lat_max_us = h->max / 1e3;
}

/*
 * "key": value, in the C locale whatever the process's (QEMU sets one),
 * and never nan or inf, which JSON has no words for.
 */
static void put_double(GString *out, const char *key, const char *fmt,
                       double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];

    g_string_append_printf(out, "\"%s\": %s, ", key,
                           g_ascii_formatd(buf, sizeof(buf), fmt,
                                           isfinite(v) ? v : 0.0));
}

static void put_u64(GString *out, const char *key, uint64_t v)
{
    g_string_append_printf(out, "\"%s\": %" G_GUINT64_FORMAT ", ", key, v);
}

void h3100_telemetry_json(const H3100TelemetryRow *r, GString *out)
{
    g_string_append_c(out, '{');
    put_double(out, "t", "%.6f", r->t_s);
    put_double(out, "interval", "%.6f", r->interval_s);
    put_double(out, "iops", "%.1f", r->iops);
    put_double(out, "read_iops", "%.1f", r->read_iops);
    put_double(out, "write_iops", "%.1f", r->write_iops);
    put_double(out, "mbps", "%.3f", r->mbps);
    put_double(out, "lat_mean_us", "%.3f", r->lat_mean_us);
    put_double(out, "lat_p50_us", "%.3f", r->lat_p50_us);
    put_double(out, "lat_p99_us", "%.3f", r->lat_p99_us);
    put_double(out, "lat_p999_us", "%.3f", r->lat_p999_us);
    put_double(out, "lat_max_us", "%.3f", r->lat_max_us);
    put_double(out, "waf", "%.4f", r->waf);
    put_double(out, "lifetime_waf", "%.4f", r->lifetime_waf);
    put_u64(out, "host_write_bytes", r->host_write_bytes);
    put_u64(out, "nand_write_bytes", r->nand_write_bytes);
    put_u64(out, "free_superblocks", r->free_superblocks);
    put_u64(out, "gc_victims", r->gc_victims);
    put_u64(out, "gc_slots_moved", r->gc_slots_moved);
    put_u64(out, "wbuf_stalls", r->wbuf_stalls);
    put_double(out, "temp_c", "%.2f", r->temp_c);
    put_u64(out, "throttle", r->throttle_level);
    g_string_truncate(out, out->len - 2);          /* the last ", " */
    g_string_append(out, "}\n");
}

static void put_cdf_point(GString *out, bool first, double lat_us,
                          double fraction)
{
    char lat[G_ASCII_DTOSTR_BUF_SIZE], frac[G_ASCII_DTOSTR_BUF_SIZE];

    g_string_append_printf(out, "%s[%s, %s]", first ? "" : ", ",
                           g_ascii_formatd(lat, sizeof(lat), "%.3f", lat_us),
                           g_ascii_formatd(frac, sizeof(frac), "%.9g",
                                           fraction));
}

void h3100_telemetry_cdf_json(const H3100LatHist *h, GString *out)
{
    uint64_t seen = 0;
    double last_lat = 0, last_frac = 0;
    bool first = true;

    g_string_append(out, "{\"cdf\": [");
    for (uint32_t i = 0; i < H3100_LATHIST_BUCKETS && seen < h->count; i++) {
        uint64_t top = MIN(h3100_lathist_bucket_max(i), h->max);
        double lat, frac;

        if (!h->bucket[i]) {
            continue;
        }
        seen += h->bucket[i];
        lat = top / 1e3;
        frac = (double)seen / h->count;
        /*
         * A point where the curve moved enough to see on a log-latency
         * plot; the bucket holding the maximum always ends the list, at
         * exactly 1 since seen == count there.
         */
        if (seen == h->count || frac - last_frac >= CDF_FRACTION_STEP ||
            lat >= last_lat * CDF_LATENCY_RATIO) {
            put_cdf_point(out, first, lat, frac);
            first = false;
            last_lat = lat;
            last_frac = frac;
        }
    }
    g_string_append(out, "]}\n");
}
