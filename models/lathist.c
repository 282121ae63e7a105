/*
 * Latency histogram: see include/h3100/lathist.h.
 *
 * Values below 256 have a bucket each; above, every octave is split in
 * 128 equal buckets, so a bucket's width is under 1/128 of its values.
 */
#include <string.h>

#include "h3100/lathist.h"

#define SUB_BITS H3100_LATHIST_SUB_BITS

void h3100_lathist_reset(H3100LatHist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

static uint32_t bucket_of(uint64_t v)
{
    uint32_t shift;

    if (v < (2u << SUB_BITS)) {
        return (uint32_t)v;
    }
    shift = 63 - __builtin_clzll(v) - SUB_BITS;
    return ((shift + 1) << SUB_BITS) +
           (uint32_t)((v >> shift) - (1u << SUB_BITS));
}

/* First value of bucket @b, and its width, in ns. */
static uint64_t bucket_start(uint32_t b, uint64_t *width)
{
    uint32_t shift;
    uint64_t sub;

    if (b < (2u << SUB_BITS)) {
        *width = 1;
        return b;
    }
    shift = (b >> SUB_BITS) - 1;
    sub = (b & ((1u << SUB_BITS) - 1)) + (1u << SUB_BITS);
    *width = 1ULL << shift;
    return sub << shift;
}

static uint64_t bucket_mid(uint32_t b)
{
    uint64_t width, start = bucket_start(b, &width);

    return start + (width >> 1);
}

uint64_t h3100_lathist_bucket_max(uint32_t b)
{
    uint64_t width, start = bucket_start(b, &width);

    return start + (width - 1);        /* the top bucket: UINT64_MAX */
}

void h3100_lathist_add(H3100LatHist *h, uint64_t ns)
{
    h->count++;
    h->sum += ns;
    if (ns > h->max) {
        h->max = ns;
    }
    if (ns < h->min) {
        h->min = ns;
    }
    h->bucket[bucket_of(ns)]++;
}

double h3100_lathist_mean(const H3100LatHist *h)
{
    return h->count ? (double)h->sum / h->count : 0.0;
}

uint64_t h3100_lathist_quantile(const H3100LatHist *h, double q)
{
    uint64_t rank, seen = 0;

    if (!h->count) {
        return 0;
    }
    q = q < 0 ? 0 : (q > 1 ? 1 : q);
    rank = (uint64_t)(q * (h->count - 1)) + 1;
    for (uint32_t i = 0; i < H3100_LATHIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            uint64_t v = bucket_mid(i);

            return v > h->max ? h->max : (v < h->min ? h->min : v);
        }
    }
    return h->max;
}

void h3100_lathist_merge(H3100LatHist *dst, const H3100LatHist *src)
{
    if (!src->count) {
        return;
    }
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->max > dst->max) {
        dst->max = src->max;
    }
    if (src->min < dst->min) {
        dst->min = src->min;
    }
    for (uint32_t i = 0; i < H3100_LATHIST_BUCKETS; i++) {
        dst->bucket[i] += src->bucket[i];
    }
}
