/*
 * Busy-until timelines: the model's way of sharing a resource.
 *
 * Each resource (a NAND plane, a channel bus, a controller core, a PCIe
 * direction) remembers when it next becomes free.  A request reserves it
 * from max(arrival, free) for its service time, so queueing delay falls
 * out of the order requests are made in, at O(1) cost per request.
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

/* Reserve @busy for @len ns at or after @t; returns the end time. */
static inline uint64_t tl_reserve(uint64_t *busy, uint64_t t, uint64_t len)
{
    uint64_t start = tl_max(t, *busy);

    *busy = start + len;
    return *busy;
}

/* Nanoseconds to move @bytes at @mbps (10^6 B/s), rounded up. */
static inline uint64_t tl_xfer_ns(uint64_t bytes, uint32_t mbps)
{
    return (bytes * 1000 + mbps - 1) / mbps;
}

#endif
