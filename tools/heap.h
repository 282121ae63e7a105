/*
 * A binary min-heap of (key, value) pairs of 64-bit integers.
 */
#ifndef H3100_HEAP_H
#define H3100_HEAP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct HeapItem {
    uint64_t key;
    uint64_t value;
} HeapItem;

typedef struct Heap {
    HeapItem *items;
    uint32_t len;
    uint32_t cap;
} Heap;

void heap_init(Heap *h);
void heap_destroy(Heap *h);
void heap_push(Heap *h, uint64_t key, uint64_t value);
bool heap_pop(Heap *h, HeapItem *out);

#endif
