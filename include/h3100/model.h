/*
 * DapuStor H3100 drive model: the public API.
 *
 * The caller passes simulated time in; the model answers when a command
 * completes.  Calls must come in non-decreasing time order.  The model
 * holds metadata only: where each 4 KiB of the namespace lives on the
 * NAND, the wear of each block, and what the controller is busy with.
 */
#ifndef H3100_MODEL_H
#define H3100_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "h3100/config.h"

typedef struct H3100Model H3100Model;

typedef enum H3100Op {
    H3100_OP_READ,
    H3100_OP_WRITE,
    H3100_OP_FLUSH,
    H3100_OP_DEALLOCATE,              /* TRIM */
    H3100_OP_WRITE_ZEROES,            /* deallocates: reads return zeroes */
    H3100_OP_COMPARE,                 /* a read compared in the controller */
    H3100_OP_ADMIN,                   /* any other command: firmware only */
} H3100Op;

typedef struct H3100Io {
    H3100Op op;
    uint64_t offset;                  /* bytes into the namespace */
    uint64_t length;                  /* bytes */
    uint32_t stream;                  /* placement hint, 0 = none */
    bool fua;
} H3100Io;

typedef enum H3100Status {
    H3100_OK = 0,
    H3100_READ_ONLY,                  /* out of spare blocks: writes fail */
    H3100_OUT_OF_RANGE,
    H3100_UNCORRECTABLE,              /* a read the LDPC could not decode */
} H3100Status;

typedef struct H3100Result {
    uint64_t done_ns;                 /* completion posted to the host */
    H3100Status status;
} H3100Result;

typedef struct H3100Health {
    uint64_t now_ns;
    uint64_t host_read_bytes;
    uint64_t host_write_bytes;
    uint64_t host_read_cmds;
    uint64_t host_write_cmds;
    uint64_t host_trim_cmds;
    uint64_t nand_write_bytes;        /* host + reclaim programs */
    uint64_t nand_read_bytes;         /* pages read from the array */
    uint64_t gc_victims;
    uint64_t gc_slots_moved;
    uint64_t wl_victims;
    uint64_t emergency_gc;
    uint64_t block_erases;
    uint32_t erase_min;
    uint32_t erase_max;
    double erase_avg;
    uint32_t rated_pe;
    uint32_t percentage_used;         /* avg erases / rated, saturates 255 */
    uint32_t available_spare_pct;
    uint32_t spare_threshold_pct;
    uint64_t factory_bad_blocks;
    uint64_t grown_bad_blocks;
    uint64_t total_blocks;
    uint32_t free_superblocks;
    uint32_t superblocks;
    uint64_t mapped_bytes;
    uint64_t wbuf_bytes;              /* in the write buffer now */
    uint64_t wbuf_capacity;
    uint64_t wbuf_stalls;
    uint64_t wbuf_stall_ns;
    uint64_t ra_hits;                 /* 4 KiB served from read-ahead */
    uint64_t ra_slots_read;
    uint64_t suspends;
    uint64_t unaligned_ios;
    uint64_t buffer_read_hits;        /* 4 KiB read from the write buffer */
    uint64_t unmapped_reads;          /* 4 KiB read with no NAND access */
    uint64_t nand_busy_ns;            /* array time summed over dies */
    uint64_t nand_backlog_ns;         /* work queued on the busiest die */
    uint64_t core_busy_ns;
    uint32_t temperature_k;           /* composite temperature, kelvin */
    uint32_t power_mw;                /* power over the last thermal step */
    uint32_t throttle_level;          /* 0 none, 1 light (TMT1), 2 heavy */
    uint64_t warn_temp_ns;            /* time spent at/above wctemp_k */
    uint64_t crit_temp_ns;            /* time spent at/above cctemp_k */
    /* NVMe 1.3 SMART bytes 216..231: thermal management transitions and
     * time spent throttled (light / heavy), lifetime */
    uint32_t tmt1_transitions;
    uint32_t tmt2_transitions;
    uint64_t tmt1_ns;
    uint64_t tmt2_ns;
    /* LDPC, lifetime: page reads retried at shifted voltages, soft
     * decodes, reads that failed (host reads; reclaim's) */
    uint64_t ecc_retries;
    uint64_t ecc_soft_decodes;
    uint64_t ecc_host_uncorrectable;
    uint64_t ecc_reclaim_uncorrectable;
    bool read_only;
    double waf;                       /* nand writes / host writes */
} H3100Health;

/* Create a fresh drive: every block erased, nothing mapped. */
H3100Model *h3100_model_new(const H3100Config *cfg, GError **errp);
void h3100_model_free(H3100Model *m);
const H3100Config *h3100_model_config(const H3100Model *m);

/* Timing off: commands complete at @now (FTL bookkeeping still runs). */
void h3100_model_set_timing(H3100Model *m, bool on);

/* Run @io arriving at @now; returns when its completion is posted. */
H3100Result h3100_model_submit(H3100Model *m, uint64_t now,
                               const H3100Io *io);

/* A hint: a command at @offset comes soon (fetches its map entry). */
void h3100_model_prefetch(const H3100Model *m, uint64_t offset);

/*
 * Reclaim, step by step, for tracing: a victim is chosen (@a its valid
 * 4 KiB slots, @b 1 when wear levelling chose it), a page of it is read
 * to move its valid slots (@a of them), it is erased (@a its erase count,
 * @b free superblocks before it returns).  @now is the model time of the
 * command that drove the step.  Called with or without timing.
 */
typedef enum H3100ReclaimStep {
    H3100_RECLAIM_VICTIM,
    H3100_RECLAIM_READ,
    H3100_RECLAIM_ERASE,
} H3100ReclaimStep;
typedef void (*H3100ReclaimFn)(void *opaque, H3100ReclaimStep step,
                               uint64_t now, uint32_t sb, uint64_t a,
                               uint64_t b);
/* @fn NULL: no observer.  Preconditioning is observed too. */
void h3100_model_set_reclaim_observer(H3100Model *m, H3100ReclaimFn fn,
                                      void *opaque);

/*
 * Array time booked on each die (NAND operations, not the idle spacing of
 * thermal throttling) into @die_ns[0 .. h3100_dies() - 1], and transfer
 * time on each channel bus into @chan_ns[0 .. channels - 1], since the
 * model was made (not saved in state files).
 */
void h3100_model_nand_busy(const H3100Model *m, uint64_t *die_ns,
                           uint64_t *chan_ns);

/* Let background work (idle reclaim) run up to @now. */
void h3100_model_idle(H3100Model *m, uint64_t now);

/* Time restarts at zero (a new QEMU run); metadata stays. */
void h3100_model_reset_time(H3100Model *m);

/* Format: forget every mapping (reads return zeroes). */
void h3100_model_format(H3100Model *m);

/* Sanitize (block erase) from @now; returns when the erase is done. */
uint64_t h3100_model_sanitize(H3100Model *m, uint64_t now);

void h3100_model_health(H3100Model *m, uint64_t now, H3100Health *h);

/*
 * Host controlled thermal management (Set Features 10h): light throttling
 * from @tmt1_k, heavy from @tmt2_k (kelvin); 0 restores the configured
 * threshold.  The device checks the values as NVMe asks (TMT1 < TMT2);
 * the model copes with any pair.  Not saved: a power cycle restores the
 * configured thresholds.
 */
void h3100_model_set_thermal_limits(H3100Model *m, uint32_t tmt1_k,
                                    uint32_t tmt2_k);

/*
 * Cap the drive's power at @max_mw (an NVMe power state's maximum power;
 * 0: no cap): the NAND keeps the share of its throughput that fits
 * between the idle and active watts, or less if the heat asks for less.
 */
void h3100_model_set_power_cap(H3100Model *m, uint32_t max_mw);

/* Is this 4 KiB slot mapped (for tests and the device's checks)? */
bool h3100_model_is_mapped(const H3100Model *m, uint64_t offset);

/* Bytes of memory the model holds; and what it held with its reverse
 * maps (models/ftl_rmap.c) at their most, as it grows and shrinks them. */
uint64_t h3100_model_memory_bytes(const H3100Model *m);
uint64_t h3100_model_memory_peak_bytes(const H3100Model *m);

/* Check the mapping invariants; on failure returns a description. */
char *h3100_model_check(const H3100Model *m);

/*
 * Precondition at FTL speed, no timing: "none", "seq" (fill once in
 * order), "seq:F" (fill the first fraction F in order), "rand:N" (fill,
 * then N x capacity of random 4 KiB writes) or "overwrite:N" (only the
 * random writes), or "wear:PCT"; joined by '+'.
 * @progress, if set, is called with done/total now and then.
 */
typedef void (*H3100Progress)(void *opaque, uint64_t done, uint64_t total);
bool h3100_model_precondition(H3100Model *m, const char *spec, uint64_t seed,
                              H3100Progress progress, void *opaque,
                              GError **errp);
/* Is @spec a precondition h3100_model_precondition() takes? */
bool h3100_precondition_valid(const char *spec, GError **errp);

/* A progress bar on stderr when it is a terminal (for H3100Progress). */
void h3100_progress_bar(void *label, uint64_t done, uint64_t total);

/*
 * Saved state: versioned, checksummed.  Loading checks the file belongs
 * to a drive with the same profile and geometry.
 */
bool h3100_model_save(H3100Model *m, const char *path, GError **errp);
H3100Model *h3100_model_load(const H3100Config *cfg, const char *path,
                             GError **errp);

/*
 * The same file carrying a front end's own state (@extra, opaque to the
 * model, inside the checksum) and flags.  H3100_STATE_DIRTY marks a file
 * saved or opened by a drive that is still running: found on loading, it
 * means the last run did not close the file cleanly.  Loading a file with
 * no extra data gives an empty @extra.  @extra and @flags may be NULL.
 */
#define H3100_STATE_DIRTY 1u
/*
 * The most front-end state a file may carry.  The QEMU device's is at
 * most 100 + 4096 * 16 + 64 * 24 bytes; loading refuses a longer one
 * before allocating for it, saving refuses to write one.
 */
#define H3100_STATE_EXTRA_MAX (1u << 20)
bool h3100_model_save_with(H3100Model *m, const char *path,
                           const void *extra, size_t extra_len,
                           uint32_t flags, GError **errp);
H3100Model *h3100_model_load_with(const H3100Config *cfg, const char *path,
                                  GBytes **extra, uint32_t *flags,
                                  GError **errp);
/* Rewrite the flags of a saved state in place (the header only). */
bool h3100_state_set_flags(const char *path, uint32_t flags, GError **errp);

#endif
