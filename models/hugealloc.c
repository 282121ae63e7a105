/*
 * Large tables on 2 MiB pages: see hugealloc.h.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <glib.h>

#include "hugealloc.h"

#define HUGE_PAGE (2u << 20)

void *huge_alloc(size_t bytes)
{
    void *p = NULL;

    if (bytes < HUGE_PAGE) {
        return g_malloc(bytes);
    }
    if (posix_memalign(&p, HUGE_PAGE, bytes) || !p) {
        return g_malloc(bytes);        /* aborts on exhaustion, as GLib does */
    }
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

void huge_free(void *p)
{
    free(p);
}
