/*
 * Controller cores: see cores.h.
 */
#include <string.h>

#include "cores.h"

void cores_init(Cores *c, uint32_t n)
{
    memset(c, 0, sizeof(*c));
    c->n = n;
    for (uint32_t i = 0; i < n; i++) {
        cal_init(&c->cal[i]);
    }
}

void cores_destroy(Cores *c)
{
    for (uint32_t i = 0; i < c->n; i++) {
        cal_destroy(&c->cal[i]);
    }
}

void cores_reset_time(Cores *c)
{
    for (uint32_t i = 0; i < c->n; i++) {
        cal_clear(&c->cal[i]);
    }
    c->present = 0;
}

uint64_t cores_run(Cores *c, uint64_t t, uint64_t cost)
{
    uint32_t best = 0;
    uint64_t best_end = UINT64_MAX;

    for (uint32_t i = 0; i < c->n; i++) {
        const Calendar *cal = &c->cal[i];
        uint64_t end;

        if (!cal->len || cal->span[cal->len - 1].end <= t) {
            best = i;                 /* idle from @t on: nothing beats it */
            break;
        }
        end = cal_probe(cal, t, cost);

        if (end < best_end) {
            best_end = end;
            best = i;
        }
    }
    c->busy_ns += cost;
    return cal_book(&c->cal[best], t, cost, c->present);
}

uint64_t cores_ahead_ns(const Cores *c, uint64_t t)
{
    uint64_t sum = 0;

    for (uint32_t i = 0; i < c->n; i++) {
        sum += cal_ahead(&c->cal[i], t);
    }
    return sum;
}
