/*
 * Time arithmetic shared by the timing parts (nand.c, link.c, model.c).
 * Resources remember when they are busy (a busy-until time, a die queue
 * or a calendar); these helpers combine such times.
 */
#ifndef H3100_TIMELINE_H
#define H3100_TIMELINE_H

#include <stdint.h>

static inline uint64_t tl_max(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static inline uint64_t tl_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Nanoseconds to move @bytes at @mbps (10^6 B/s), rounded up. */
static inline uint64_t tl_xfer_ns(uint64_t bytes, uint32_t mbps)
{
    return (bytes * 1000 + mbps - 1) / mbps;
}

#endif
