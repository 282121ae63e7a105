/*
 * A binary min-heap: see heap.h.  Ties keep no particular order; callers
 * that need determinism make keys unique or do not care which comes first.
 */
#include <glib.h>

#include "heap.h"

void heap_init(Heap *h)
{
    h->items = NULL;
    h->len = 0;
    h->cap = 0;
}

void heap_destroy(Heap *h)
{
    g_free(h->items);
    heap_init(h);
}

void heap_push(Heap *h, uint64_t key, uint64_t value)
{
    uint32_t i;

    if (h->len == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 64;
        h->items = g_renew(HeapItem, h->items, h->cap);
    }
    i = h->len++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;

        if (h->items[parent].key <= key) {
            break;
        }
        h->items[i] = h->items[parent];
        i = parent;
    }
    h->items[i].key = key;
    h->items[i].value = value;
}

bool heap_pop(Heap *h, HeapItem *out)
{
    HeapItem last;
    uint32_t i = 0;

    if (!h->len) {
        return false;
    }
    *out = h->items[0];
    last = h->items[--h->len];
    for (;;) {
        uint32_t child = 2 * i + 1;

        if (child >= h->len) {
            break;
        }
        if (child + 1 < h->len && h->items[child + 1].key <
            h->items[child].key) {
            child++;
        }
        if (last.key <= h->items[child].key) {
            break;
        }
        h->items[i] = h->items[child];
        i = child;
    }
    if (h->len) {
        h->items[i] = last;
    }
    return true;
}
