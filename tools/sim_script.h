/*
 * Procedures: several workloads in sequence on one drive, with
 * preconditioning and pauses between them (h3100-sim --script FILE), as a
 * review or a SNIA PTS-style sequence runs them.  The file is fio-like
 * ini: a [global] group of defaults, then one group per step, in order.
 */
#ifndef SIM_SCRIPT_H
#define SIM_SCRIPT_H

#include <stdio.h>

#include "sim_engine.h"

#define SIM_SCRIPT_MAX_BYTES (1u << 20)
#define SIM_SCRIPT_MAX_STEPS 256u

typedef enum SimStepKind {
    SIM_STEP_RUN,                     /* a timed workload, reported */
    SIM_STEP_PRECONDITION,            /* at FTL speed, not timed */
    SIM_STEP_IDLE,                    /* no host I/O for a while */
} SimStepKind;

typedef struct SimStep {
    char *name;
    SimStepKind kind;
    SimSpec spec;                     /* SIM_STEP_RUN */
    char *precondition;               /* SIM_STEP_PRECONDITION */
    uint64_t idle_ns;                 /* SIM_STEP_IDLE */
} SimStep;

typedef struct SimScript {
    char *name;                       /* the file, for the report */
    uint64_t user_bytes;              /* the drive's, for spans in % */
    SimStep *steps;
    uint32_t nsteps;
} SimScript;

/*
 * Parse a procedure of @len bytes named @name for a drive of @cfg; step i
 * draws its offsets from @seed + i.  Every step is checked before any runs.
 */
bool sim_script_parse(SimScript *s, const char *text, size_t len,
                      const char *name, const H3100Config *cfg, uint64_t seed,
                      GError **errp);
bool sim_script_load(SimScript *s, const char *path, const H3100Config *cfg,
                     uint64_t seed, GError **errp);
void sim_script_free(SimScript *s);

/* Run every step on @m, from simulated time *@now; fills @res[nsteps]. */
bool sim_script_run(const SimScript *s, H3100Model *m, uint64_t *now,
                    SimResult *res, GError **errp);

/* One row per step (IOPS, MB/s, mean, p99 and p99.9 latency, WAF). */
void sim_script_print(FILE *out, const SimScript *s, const SimResult *res,
                      const char *profile);
void sim_script_print_json(FILE *out, const SimScript *s,
                           const SimResult *res, const char *profile);

#endif
