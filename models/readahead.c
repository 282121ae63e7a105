/*
 * Sequential read-ahead: see readahead.h.
 */
#include <string.h>

#include "readahead.h"

void ra_init(ReadAhead *ra, const H3100Config *cfg)
{
    memset(ra, 0, sizeof(*ra));
    ra->nstreams = cfg->cache.readahead_streams;
    ra->trigger = cfg->cache.readahead_trigger;
    ra->chunk_slots = cfg->cache.readahead_bytes / H3100_SLOT_BYTES / 2;
    ra->user_slots = h3100_user_slots(cfg);
    if (!ra->chunk_slots) {
        ra->nstreams = 0;
    }
    ra->s = g_new0(RaStream, ra->nstreams ? ra->nstreams : 1);
}

void ra_destroy(ReadAhead *ra)
{
    g_free(ra->s);
    ra->s = NULL;
}

void ra_reset_time(ReadAhead *ra)
{
    memset(ra->s, 0, sizeof(RaStream) * (ra->nstreams ? ra->nstreams : 1));
    ra->live_chunks = 0;
}

bool ra_lookup(const ReadAhead *ra, uint64_t lpn, uint64_t *ready)
{
    if (!ra->live_chunks) {
        return false;
    }
    for (uint32_t i = 0; i < ra->nstreams; i++) {
        const RaStream *s = &ra->s[i];

        for (uint32_t c = 0; c < RA_CHUNKS; c++) {
            const RaChunk *ch = &s->chunk[c];

            if (lpn >= ch->start && lpn < ch->end) {
                *ready = ch->ready;
                return true;
            }
        }
    }
    return false;
}

static RaStream *find_stream(ReadAhead *ra, uint64_t lpn)
{
    RaStream *lru = &ra->s[0];

    for (uint32_t i = 0; i < ra->nstreams; i++) {
        RaStream *s = &ra->s[i];

        if (s->run && s->next_lpn == lpn) {
            return s;
        }
        if (s->last_use < lru->last_use) {
            lru = s;
        }
    }
    for (uint32_t c = 0; c < RA_CHUNKS; c++) {
        ra->live_chunks -= lru->chunk[c].end != lru->chunk[c].start;
    }
    memset(lru, 0, sizeof(*lru));
    return lru;
}

uint32_t ra_observe(ReadAhead *ra, uint64_t lpn, uint64_t n, RaFetch *fetch)
{
    RaStream *s;
    uint64_t want_to;
    uint32_t count = 0;

    if (!ra->nstreams) {
        return 0;
    }
    s = find_stream(ra, lpn);
    s->run++;
    s->next_lpn = lpn + n;
    s->last_use = ++ra->clock;
    if (s->run < ra->trigger) {
        return 0;
    }
    /* keep a whole window (two chunks) ahead of the reader */
    if (s->prefetched_to < s->next_lpn) {
        s->prefetched_to = s->next_lpn;
    }
    want_to = MIN(s->next_lpn + 2 * ra->chunk_slots, ra->user_slots);
    while (s->prefetched_to < want_to && count < 2) {
        fetch[count].start = s->prefetched_to;
        fetch[count].end = MIN(s->prefetched_to + ra->chunk_slots,
                               ra->user_slots);
        fetch[count].stream = s;
        s->prefetched_to = fetch[count].end;
        count++;
    }
    return count;
}

void ra_filled(ReadAhead *ra, const RaFetch *fetch, uint64_t ready)
{
    RaStream *s = fetch->stream;
    RaChunk *ch = &s->chunk[s->head];

    if (ch->end == ch->start) {
        ra->live_chunks++;
    }
    ch->start = fetch->start;
    ch->end = fetch->end;
    ch->ready = ready;
    s->head = (s->head + 1) % RA_CHUNKS;
}

void ra_invalidate(ReadAhead *ra, uint64_t lpn, uint64_t n)
{
    if (!ra->live_chunks) {
        return;
    }
    for (uint32_t i = 0; i < ra->nstreams; i++) {
        RaStream *s = &ra->s[i];

        for (uint32_t c = 0; c < RA_CHUNKS; c++) {
            RaChunk *ch = &s->chunk[c];

            if (ch->start < lpn + n && lpn < ch->end) {
                ch->start = ch->end = 0;
                ra->live_chunks--;
                if (s->prefetched_to > lpn) {
                    s->prefetched_to = lpn;
                }
            }
        }
    }
}
