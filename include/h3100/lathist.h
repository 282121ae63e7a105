/*
 * Latency histogram, values in nanoseconds: log-linear buckets (128 per
 * octave, < 0.8% error), constant-time recording, exact count, mean,
 * minimum and maximum.  Shared by h3100-sim and the QEMU device, so both
 * report percentiles the same way.
 */
#ifndef H3100_LATHIST_H
#define H3100_LATHIST_H

#include <stdint.h>

#define H3100_LATHIST_SUB_BITS 7u
#define H3100_LATHIST_BUCKETS ((64u - H3100_LATHIST_SUB_BITS + 1) << \
                               H3100_LATHIST_SUB_BITS)

typedef struct H3100LatHist {
    uint64_t count;
    uint64_t sum;                     /* ns */
    uint64_t max;                     /* ns, 0 when empty */
    uint64_t min;                     /* ns, UINT64_MAX when empty */
    uint64_t bucket[H3100_LATHIST_BUCKETS];
} H3100LatHist;

void h3100_lathist_reset(H3100LatHist *h);
void h3100_lathist_add(H3100LatHist *h, uint64_t ns);
/* Mean in ns, 0 when empty. */
double h3100_lathist_mean(const H3100LatHist *h);
/*
 * Value at quantile @q (0..1) in ns: the midpoint of its bucket, kept
 * within [min, max].  0 when empty.
 */
uint64_t h3100_lathist_quantile(const H3100LatHist *h, double q);
/* Add every value recorded in @src to @dst. */
void h3100_lathist_merge(H3100LatHist *dst, const H3100LatHist *src);
/* The largest value bucket @b holds, for walking the buckets in order. */
uint64_t h3100_lathist_bucket_max(uint32_t b);

#endif
