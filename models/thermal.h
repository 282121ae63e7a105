/*
 * Thermal model: the drive's composite temperature and its throttling.
 *
 * First-order RC: the drive draws P = idle + (active - idle) x activity,
 * where activity is the busier of the NAND dies and the controller cores
 * over a step; the temperature relaxes toward ambient + R x P with time
 * constant tau.  Above TMT1 the NAND keeps only throttle_light_pct of its
 * throughput, above TMT2 throttle_heavy_pct; a level ends once the
 * temperature falls throttle_hyst_k below its threshold.
 *
 * The model updates lazily, at most once per THERMAL_STEP_NS of simulated
 * time, from the array and core time done since: what the NAND and cores
 * have booked, less what is queued to run later (programs behind the
 * write buffer heat the drive when they run, not when handed over).
 * Level changes fall at the exact time the temperature crosses a
 * threshold, so the figures do not depend on how often the caller looks.
 */
#ifndef H3100_THERMAL_H
#define H3100_THERMAL_H

#include "h3100/config.h"

#define THERMAL_STEP_NS 1000000ULL
/* Work done over a gap up to this long is spread evenly over it. */
#define THERMAL_SPREAD_NS (10 * THERMAL_STEP_NS)

/* Lifetime counters: saved with the drive (state.c, 40 bytes). */
typedef struct ThermalStats {
    uint64_t warn_ns;                 /* at or above wctemp_k */
    uint64_t crit_ns;                 /* at or above cctemp_k */
    uint32_t tmt1_transitions;        /* entries into light throttling */
    uint32_t tmt2_transitions;        /* entries into heavy throttling */
    uint64_t tmt1_ns;                 /* time throttled light */
    uint64_t tmt2_ns;                 /* time throttled heavy */
} ThermalStats;

typedef struct Thermal {
    const H3100Config *cfg;
    uint32_t dies;
    uint32_t cores;
    double temp_k;
    double power_mw;                  /* over the last step */
    uint64_t last;                    /* time of the last update */
    uint64_t next;                    /* no update before this */
    uint64_t nand_heat;               /* work already turned into heat */
    uint64_t core_heat;
    uint32_t tmt1_k;                  /* thresholds in force */
    uint32_t tmt2_k;
    uint32_t level;                   /* 0 none, 1 light, 2 heavy */
    ThermalStats stats;
} Thermal;

/* Then thermal_power_on(): the model owns the busy counters. */
void thermal_init(Thermal *th, const H3100Config *cfg);

/*
 * A power cycle at time 0: the drive starts at its idle temperature with
 * the configured thresholds; the array and core time booked so far
 * (@nand_busy, @core_busy) is not heat.
 */
void thermal_power_on(Thermal *th, uint64_t nand_busy, uint64_t core_busy);

/* Work booked without timing (preconditioning) is not heat either. */
void thermal_skip_work(Thermal *th, uint64_t nand_busy, uint64_t core_busy);

static inline bool thermal_due(const Thermal *th, uint64_t now)
{
    return now >= th->next;
}

/*
 * Heat the drive up to @now from the array and core time done by then
 * (sums over dies and cores).  Returns true when the throttle level
 * changed.
 */
bool thermal_update(Thermal *th, uint64_t now, uint64_t nand_done,
                    uint64_t core_done);

/* Host thresholds (0: configured); true when the level changed. */
bool thermal_set_limits(Thermal *th, uint32_t tmt1_k, uint32_t tmt2_k);

/* Share of NAND throughput the current level keeps, in percent. */
uint32_t thermal_keep_pct(const Thermal *th);

#endif
