/*
 * The power-loss-protected DRAM write buffer: see wbuf.h.
 */
#include <string.h>

#include "timeline.h"
#include "wbuf.h"

void wbuf_init(Wbuf *w, uint64_t cap)
{
    memset(w, 0, sizeof(*w));
    w->cap = cap;
}

/* Programs in flight are done when time restarts (device power cycle). */
void wbuf_reset_time(Wbuf *w)
{
    w->pending = 0;
    w->last_admit = 0;
}

uint64_t wbuf_occupancy(Wbuf *w, Nand *n, uint64_t t)
{
    w->pending -= tl_min(w->pending, nand_retire(n, t));
    return w->held + w->pending;
}

uint64_t wbuf_admit(Wbuf *w, Nand *n, uint64_t t, uint64_t bytes)
{
    /* admissions stay in order: a command never overtakes one that came
     * before it (that wait is not a stall of the buffer's making) */
    uint64_t in_turn = tl_max(t, w->last_admit), at = in_turn;

    /* wait for programs to finish; a command larger than the buffer
     * waits for it to drain and then streams through */
    while (wbuf_occupancy(w, n, at) + bytes > w->cap) {
        uint64_t next = nand_next_host_done(n);

        if (next == UINT64_MAX) {
            break;
        }
        at = tl_max(at, next);
    }
    if (at > in_turn) {
        w->stats.stalls++;
        w->stats.stall_ns += at - in_turn;
    }
    w->held += bytes;
    w->last_admit = at;
    if (w->held + w->pending > w->stats.peak_bytes) {
        w->stats.peak_bytes = w->held + w->pending;
    }
    return at;
}

void wbuf_handed_over(Wbuf *w, uint64_t bytes)
{
    bytes = tl_min(bytes, w->held);
    w->held -= bytes;
    w->pending += bytes;
}

void wbuf_cancel(Wbuf *w, uint64_t bytes)
{
    w->held -= tl_min(bytes, w->held);
}
