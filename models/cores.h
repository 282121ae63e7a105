/*
 * Controller cores: firmware work that holds a core.
 *
 * Work goes to the core that frees up first, as a run-to-completion
 * firmware with a shared command queue would do.
 */
#ifndef H3100_CORES_H
#define H3100_CORES_H

#include "h3100/config.h"

typedef struct Cores {
    uint32_t n;
    uint64_t free[H3100_MAX_CORES];
    uint64_t busy_ns;
} Cores;

void cores_init(Cores *c, uint32_t n);
void cores_reset_time(Cores *c);

/* Run @cost ns of firmware from @t on the first free core; returns end. */
uint64_t cores_run(Cores *c, uint64_t t, uint64_t cost);

#endif
