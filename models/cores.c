/*
 * Controller cores: see cores.h.
 */
#include <string.h>

#include "cores.h"
#include "timeline.h"

void cores_init(Cores *c, uint32_t n)
{
    memset(c, 0, sizeof(*c));
    c->n = n;
}

void cores_reset_time(Cores *c)
{
    memset(c->free, 0, sizeof(c->free));
}

uint64_t cores_run(Cores *c, uint64_t t, uint64_t cost)
{
    uint32_t best = 0;

    for (uint32_t i = 1; i < c->n; i++) {
        if (c->free[i] < c->free[best]) {
            best = i;
        }
    }
    c->busy_ns += cost;
    return tl_reserve(&c->free[best], t, cost);
}
