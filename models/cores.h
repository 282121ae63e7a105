/*
 * Controller cores: firmware work that holds a core.
 *
 * Work goes to the core that can finish it first, as a run-to-completion
 * firmware with a shared command queue would do.  Each core keeps a
 * calendar: reclaim work triggered by a write is booked for when the
 * write's data is in the buffer, and host commands arriving before then
 * still use the core in the meantime.
 */
#ifndef H3100_CORES_H
#define H3100_CORES_H

#include "h3100/config.h"
#include "calendar.h"

typedef struct Cores {
    uint32_t n;
    Calendar cal[H3100_MAX_CORES];
    uint64_t present;
    uint64_t busy_ns;
} Cores;

void cores_init(Cores *c, uint32_t n);
void cores_destroy(Cores *c);
void cores_reset_time(Cores *c);

static inline void cores_set_present(Cores *c, uint64_t t)
{
    if (t > c->present) {
        c->present = t;
    }
}

/* Run @cost ns of firmware from @t on the core that ends it first. */
uint64_t cores_run(Cores *c, uint64_t t, uint64_t cost);

/* Core time booked after @t, summed over cores. */
uint64_t cores_ahead_ns(const Cores *c, uint64_t t);

#endif
