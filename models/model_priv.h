/*
 * The model's parts, shared by model.c, state.c and precondition.c.
 */
#ifndef H3100_MODEL_PRIV_H
#define H3100_MODEL_PRIV_H

#include "h3100/model.h"
#include "cores.h"
#include "ecc.h"
#include "ftl.h"
#include "link.h"
#include "nand.h"
#include "readahead.h"
#include "thermal.h"
#include "wbuf.h"

/* Recently handed-over program units and when they finish. */
typedef struct UnitDone {
    uint64_t unit;                    /* sb * units_per_sb + unit, + 1 */
    uint64_t done;
} UnitDone;

#define UNIT_TABLE 8192u

typedef struct ModelCounters {
    uint64_t host_read_bytes;
    uint64_t host_write_bytes;
    uint64_t host_read_cmds;
    uint64_t host_write_cmds;
    uint64_t host_trim_cmds;
    uint64_t nand_read_bytes;
    uint64_t ra_hits;
    uint64_t ra_slots_read;
    uint64_t unaligned_ios;
    uint64_t buffer_read_hits;
    uint64_t unmapped_reads;
} ModelCounters;

struct H3100Model {
    H3100Config cfg;
    bool timing;
    bool read_only;
    Ftl ftl;
    Nand nand;
    Link link;
    Cores cores;
    Wbuf wbuf;
    ReadAhead ra;
    Thermal thermal;
    uint64_t now;                     /* time of the work being charged */
    uint64_t arrival;                 /* when the current command came */
    uint64_t last_now;
    uint64_t *sb_erased_at;           /* earliest program after erase */
    uint64_t gc_unit_ready;           /* reclaim's data for its open unit */
    uint64_t units_per_sb;
    UnitDone *units;
    ModelCounters c;
    EccStats ecc;                     /* lifetime, saved */
    EccMemo ecc_memo;
    uint32_t host_unc;                /* this command's uncorrectable pages */
    uint64_t reads;                   /* page reads: each draws its errors */
    uint32_t power_keep_pct;          /* NAND share under the power cap */
    H3100ReclaimFn reclaim_fn;        /* tracing observer, may be NULL */
    void *reclaim_opaque;
};

void model_attach_hooks(H3100Model *m);

/*
 * Read a migration core (migrate.c) into @m: superblock headers (the use
 * of each reverse map into @sb_has), map chunks in use (@chunk_has),
 * counters, tables and timing state.  False, with the reason in @why,
 * for a core that is not one.
 */
bool model_mig_core_load(H3100Model *m, const uint8_t *core, size_t len,
                         uint8_t *sb_has, uint8_t *chunk_has, GString *why);

/* A power cycle for the thermal model: idle temperature, no throttle. */
void model_thermal_power_on(H3100Model *m);

#endif
