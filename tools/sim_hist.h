/*
 * Latency histogram: log-linear buckets (128 per octave, < 0.8% error),
 * constant-time recording, exact mean and maximum.
 */
#ifndef SIM_HIST_H
#define SIM_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 7u
#define HIST_BUCKETS ((64u - HIST_SUB_BITS + 1) << HIST_SUB_BITS)

typedef struct Hist {
    uint64_t count;
    uint64_t sum;
    uint64_t max;
    uint64_t min;
    uint64_t bucket[HIST_BUCKETS];
} Hist;

void hist_reset(Hist *h);
void hist_add(Hist *h, uint64_t v);
double hist_mean(const Hist *h);
/* Value at quantile @q (0..1): the midpoint of its bucket. */
uint64_t hist_quantile(const Hist *h, double q);

#endif
