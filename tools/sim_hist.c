/*
 * Latency histogram: see sim_hist.h.
 */
#include <string.h>

#include "sim_hist.h"

void hist_reset(Hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

static uint32_t bucket_of(uint64_t v)
{
    uint32_t shift;

    if (v < (2u << HIST_SUB_BITS)) {
        return (uint32_t)v;
    }
    shift = 63 - __builtin_clzll(v) - HIST_SUB_BITS;
    return ((shift + 1) << HIST_SUB_BITS) +
           (uint32_t)((v >> shift) - (1u << HIST_SUB_BITS));
}

static uint64_t bucket_mid(uint32_t b)
{
    uint32_t shift;
    uint64_t sub;

    if (b < (2u << HIST_SUB_BITS)) {
        return b;
    }
    shift = (b >> HIST_SUB_BITS) - 1;
    sub = (b & ((1u << HIST_SUB_BITS) - 1)) + (1u << HIST_SUB_BITS);
    return (sub << shift) + ((1ULL << shift) >> 1);
}

void hist_add(Hist *h, uint64_t v)
{
    h->count++;
    h->sum += v;
    if (v > h->max) {
        h->max = v;
    }
    if (v < h->min) {
        h->min = v;
    }
    h->bucket[bucket_of(v)]++;
}

double hist_mean(const Hist *h)
{
    return h->count ? (double)h->sum / h->count : 0.0;
}

uint64_t hist_quantile(const Hist *h, double q)
{
    uint64_t rank, seen = 0;

    if (!h->count) {
        return 0;
    }
    rank = (uint64_t)(q * (h->count - 1)) + 1;
    for (uint32_t i = 0; i < HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            uint64_t v = bucket_mid(i);

            return v > h->max ? h->max : (v < h->min ? h->min : v);
        }
    }
    return h->max;
}
