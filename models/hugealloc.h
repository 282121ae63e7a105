/*
 * Large tables on 2 MiB pages where the kernel allows it: the mapping
 * tables are read at random, and with 4 KiB pages nearly every lookup
 * would also miss the TLB.
 */
#ifndef H3100_HUGEALLOC_H
#define H3100_HUGEALLOC_H

#include <stddef.h>

void *huge_alloc(size_t bytes);
void huge_free(void *p);

#endif
