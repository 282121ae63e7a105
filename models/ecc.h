/*
 * The NAND's bit errors and the controller's LDPC (models/ecc.c).
 */
#ifndef H3100_ECC_H
#define H3100_ECC_H

#include <stdbool.h>
#include <stdint.h>

#include "h3100/config.h"

/* What decoding one page read took. */
typedef struct EccOutcome {
    uint32_t retries;                 /* re-reads at shifted voltages */
    bool soft;                        /* ... then a soft decode */
    bool uncorrectable;               /* ... which failed too */
    /* each attempt's hard decode: slower while errors are many */
    uint64_t hard_ns[H3100_READ_RETRIES_MAX + 1];
} EccOutcome;

/* Lifetime counters (saved with the drive's state). */
typedef struct EccStats {
    uint64_t retries;                 /* page reads retried */
    uint64_t soft_decodes;
    uint64_t host_uncorrectable;      /* host reads that failed */
    uint64_t reclaim_uncorrectable;   /* reclaim reads that failed */
} EccStats;

/*
 * What ecc_decode() keeps between calls: the wear term of the error rate
 * per erase count, a direct-mapped memo.  Zeroed, it is empty.
 */
#define ECC_MEMO 64u

typedef struct EccMemo {
    uint32_t erase_count[ECC_MEMO];   /* + 1; 0: empty */
    double wear[ECC_MEMO];
} EccMemo;

/* The page being read: its place, its block's wear, its data's age. */
typedef struct EccPage {
    uint64_t page;                    /* physical page number */
    uint32_t ptype;                   /* LSB, CSB, MSB */
    uint32_t erase_count;
    double age_hours;
    uint32_t codewords;               /* 4 KiB codewords the read needs */
} EccPage;

/*
 * Errors expected in one codeword of @p: those of the cells' wear
 * (*wear_errors) and, added, those of retention (charge lost since the
 * program, which read retries at shifted voltages recover).
 */
double ecc_expected_errors(const H3100Config *cfg, uint64_t seed,
                           const EccPage *p, double *wear_errors);

/*
 * Can a read of @p not fail, whatever its draw?  Then *@out is its
 * outcome: no retry, the fastest hard decode.
 */
bool ecc_read_is_sure(const H3100Config *cfg, const EccPage *p,
                      EccMemo *memo, EccOutcome *out);

/*
 * Decode a read of @p; @draw makes this read's errors (any 64 bits).
 * @memo (may be NULL) speeds up reads that cannot fail: the outcome is
 * the same with it or without.
 */
void ecc_decode(const H3100Config *cfg, uint64_t seed, const EccPage *p,
                uint64_t draw, EccMemo *memo, EccOutcome *out);

#endif
