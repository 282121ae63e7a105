/*
 * Sequential read-ahead.
 *
 * A few detectors watch for reads that start where an earlier one ended.
 * After readahead_trigger such reads the controller prefetches the next
 * window into DRAM, one half window at a time, so a sequential reader
 * finds its data waiting (the datasheet's 15 us sequential read).
 */
#ifndef H3100_READAHEAD_H
#define H3100_READAHEAD_H

#include "h3100/config.h"

#define RA_CHUNKS 4u

typedef struct RaChunk {
    uint64_t start;                   /* lpn range [start, end) */
    uint64_t end;
    uint64_t ready;                   /* in DRAM from this time */
} RaChunk;

typedef struct RaStream {
    uint64_t next_lpn;                /* where a sequential read starts */
    uint64_t prefetched_to;           /* end of what was prefetched */
    uint32_t run;                     /* sequential reads seen */
    uint64_t last_use;
    RaChunk chunk[RA_CHUNKS];
    uint32_t head;                    /* next chunk slot to fill */
} RaStream;

typedef struct ReadAhead {
    uint32_t nstreams;
    uint32_t trigger;
    uint64_t chunk_slots;             /* half the window */
    uint64_t user_slots;
    uint64_t clock;                   /* use counter for LRU */
    uint32_t live_chunks;             /* chunks holding data */
    RaStream *s;
} ReadAhead;

/* What the model must prefetch: [start, end). */
typedef struct RaFetch {
    uint64_t start;
    uint64_t end;
    RaStream *stream;
} RaFetch;

void ra_init(ReadAhead *ra, const H3100Config *cfg);
void ra_destroy(ReadAhead *ra);
void ra_reset_time(ReadAhead *ra);

/* Is @lpn prefetched? If so, *ready says when it is in DRAM. */
bool ra_lookup(const ReadAhead *ra, uint64_t lpn, uint64_t *ready);

/*
 * A host read of [lpn, lpn + n) was seen; returns how many ranges to
 * prefetch into @fetch (at most 2), which the caller reads and then
 * registers with ra_filled.
 */
uint32_t ra_observe(ReadAhead *ra, uint64_t lpn, uint64_t n, RaFetch *fetch);
void ra_filled(ReadAhead *ra, const RaFetch *fetch, uint64_t ready);

/* Writes and deallocations make prefetched copies stale. */
void ra_invalidate(ReadAhead *ra, uint64_t lpn, uint64_t n);

#endif
