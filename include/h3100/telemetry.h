/*
 * Telemetry: one row per interval of simulated time, written as one JSON
 * object per line, by h3100-sim --telemetry=FILE and by the QEMU device's
 * telemetry=FILE; scripts/bench/h3100-plot.sh draws them.  docs/guide/telemetry.md
 * describes every field.
 *
 * A writer keeps, per interval, a health snapshot at its start and a
 * latency histogram of the completions in it; at its end it fills a row
 * with the helpers below and appends h3100_telemetry_json().  After the
 * last row, one h3100_telemetry_cdf_json() line gives the latency
 * distribution of the whole run.
 */
#ifndef H3100_TELEMETRY_H
#define H3100_TELEMETRY_H

#include <glib.h>
#include <stdint.h>

#include "h3100/lathist.h"
#include "h3100/model.h"

typedef struct H3100TelemetryRow {
    double t_s;                       /* end of interval, simulated s */
    double interval_s;
    double iops, read_iops, write_iops, mbps;
    double lat_mean_us, lat_p50_us, lat_p99_us, lat_p999_us, lat_max_us;
    double waf;                       /* NAND/host bytes in this interval,
                                         0 if no host writes */
    double lifetime_waf;
    uint64_t host_write_bytes, nand_write_bytes;   /* interval deltas */
    uint32_t free_superblocks;
    uint64_t gc_victims, gc_slots_moved, wbuf_stalls;  /* interval deltas */
    double temp_c;
    uint32_t throttle_level;
} H3100TelemetryRow;

/*
 * Fill the fields that come from the drive: the interval (t_s,
 * interval_s from the snapshots' now_ns), the write amplification, byte
 * and reclaim deltas, free superblocks, temperature and throttling at
 * @end.  @begin and @end are h3100_model_health() at the interval's
 * start and end.
 */
void h3100_telemetry_fill_health(H3100TelemetryRow *r,
                                 const H3100Health *begin,
                                 const H3100Health *end);

/* Fill the rates from the commands completed in the interval. */
void h3100_telemetry_fill_io(H3100TelemetryRow *r, uint64_t read_ios,
                             uint64_t write_ios, uint64_t bytes);

/* Fill the lat_* fields from the completions of the interval (all 0 if
 * there were none). */
void h3100_telemetry_fill_lat(H3100TelemetryRow *r, const H3100LatHist *h);

/* Append @r as one line of JSON, newline included. */
void h3100_telemetry_json(const H3100TelemetryRow *r, GString *out);

/*
 * Append {"cdf": [[lat_us, fraction], ...]} and a newline: the share of
 * completions at or below each latency, a few hundred points at most,
 * both coordinates increasing, the last point at the maximum and 1.0.
 * An empty histogram gives an empty list.
 */
void h3100_telemetry_cdf_json(const H3100LatHist *h, GString *out);

#endif
