/*
 * The simulator's host side: fio-like jobs in a closed loop against the
 * drive model, in simulated time.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stdio.h>

#include "h3100/lathist.h"
#include "h3100/model.h"

#define SIM_MAX_BS 8u

typedef enum SimRw {
    SIM_READ,
    SIM_WRITE,
    SIM_RANDREAD,
    SIM_RANDWRITE,
    SIM_RANDRW,
    SIM_RW,                           /* sequential, mixed */
} SimRw;

typedef struct SimBs {
    uint32_t bytes;
    uint32_t weight;
} SimBs;

typedef struct SimSpec {
    SimRw rw;
    uint32_t rwmixread;               /* percent of reads in mixed modes */
    SimBs bs[SIM_MAX_BS];
    uint32_t nbs;
    uint32_t iodepth;
    uint32_t numjobs;
    uint64_t span_bytes;              /* from the start of the namespace */
    uint64_t runtime_ns;
    uint64_t ramp_ns;
    uint64_t interval_ns;             /* 0: no interval rows */
    uint64_t seed;
    FILE *interval_out;               /* rows as text or JSON, or NULL */
    bool interval_json;
    FILE *telemetry_out;              /* rows and a CDF as JSON, or NULL */
} SimSpec;

typedef struct SimResult {
    uint64_t runtime_ns;
    uint64_t ios;
    uint64_t read_ios;
    uint64_t write_ios;
    uint64_t read_bytes;
    uint64_t write_bytes;
    uint64_t errors;
    double iops;
    double mbps;                      /* 10^6 bytes per second */
    H3100LatHist lat;                 /* all completions in the window */
    H3100LatHist read_lat;
    H3100LatHist write_lat;
    double waf;                       /* during the window */
    uint64_t gc_victims;
    uint64_t gc_slots_moved;
    uint64_t wbuf_stalls;
    double die_util;                  /* share of die time busy, window */
    double core_util;
    uint64_t commands;                /* all submitted, ramp included */
    double host_seconds;
    H3100Health health;               /* at the end */
} SimResult;

/* Parse "4k", "128k:50,4k:50" into @spec's block sizes. */
bool sim_parse_bs(SimSpec *spec, const char *text, GError **errp);
bool sim_parse_rw(SimSpec *spec, const char *text, GError **errp);
const char *sim_rw_name(SimRw rw);
/* A size in bytes (suffixes k, m, g, t) or a fraction of @whole (0.5). */
bool sim_parse_span(const char *text, uint64_t whole, uint64_t *out,
                    GError **errp);
/* Seconds with an optional unit: 5, 5s, 500ms, 2m. */
bool sim_parse_time(const char *text, uint64_t *ns, GError **errp);

void sim_spec_defaults(SimSpec *spec, const H3100Config *cfg);
/* Are @spec's numbers ones sim_run() can run (ranges, bs within span)? */
bool sim_spec_check(const SimSpec *spec, GError **errp);

/* What the drive did since @from, to @res->health: WAF, reclaim, stalls. */
void sim_note_drive(SimResult *res, const H3100Health *from);

/* Run @spec against @m starting at simulated time *@now (advanced). */
void sim_run(H3100Model *m, const SimSpec *spec, uint64_t *now,
             SimResult *res);

void sim_print_result(FILE *out, const SimSpec *spec, const SimResult *res,
                      const char *profile);
void sim_print_result_json(FILE *out, const SimSpec *spec,
                           const SimResult *res, const char *profile);

#endif
