/*
 * A resource calendar: see calendar.h.
 */
#include <string.h>
#include <glib.h>

#include "calendar.h"

void cal_init(Calendar *c)
{
    memset(c, 0, sizeof(*c));
}

void cal_destroy(Calendar *c)
{
    g_free(c->span);
    cal_init(c);
}

void cal_clear(Calendar *c)
{
    c->len = 0;
}

static void forget_past(Calendar *c, uint64_t forget)
{
    uint32_t drop = 0;

    while (drop < c->len && c->span[drop].end <= forget) {
        drop++;
    }
    if (drop) {
        memmove(c->span, c->span + drop, (c->len - drop) * sizeof(CalSpan));
        c->len -= drop;
    }
}

/*
 * The first span that ends after @t, or len: spans are disjoint and
 * sorted, so their ends are sorted too.  A search whose step is a
 * conditional move, not a branch: whether a span ended before a new
 * request is as good as random, and the mispredicted branches were most
 * of the cost of booking (perf, a timed random read).
 */
static uint32_t first_ending_after(const Calendar *c, uint64_t t)
{
    const CalSpan *base = c->span;
    uint32_t n = c->len;

    if (!n) {
        return 0;
    }
    while (n > 1) {
        uint32_t half = n / 2;

        base = base[half - 1].end <= t ? base + half : base;
        n -= half;
    }
    return (uint32_t)(base - c->span) + (base->end <= t);
}

/* Where a booking of @len at or after @t would start; *@index is the span
 * it would go before. */
static uint64_t find_gap(const Calendar *c, uint64_t t, uint64_t len,
                         uint32_t *index)
{
    uint64_t start = t;
    uint32_t i = first_ending_after(c, t);

    for (; i < c->len; i++) {
        if (start + len <= c->span[i].start) {
            break;                    /* fits in the gap before span i */
        }
        if (c->span[i].end > start) {
            start = c->span[i].end;
        }
    }
    *index = i;
    return start;
}

uint64_t cal_probe(const Calendar *c, uint64_t t, uint64_t len)
{
    uint32_t i;

    return find_gap(c, t, len, &i) + len;
}

uint64_t cal_book(Calendar *c, uint64_t t, uint64_t len, uint64_t forget)
{
    uint32_t i;
    uint64_t start;

    forget_past(c, forget);
    start = find_gap(c, t, len, &i);
    /* merge with a neighbour that touches, or insert at i */
    if (i > 0 && c->span[i - 1].end == start) {
        c->span[i - 1].end = start + len;
        if (i < c->len && c->span[i].start == start + len) {
            c->span[i - 1].end = c->span[i].end;
            memmove(c->span + i, c->span + i + 1,
                    (c->len - i - 1) * sizeof(CalSpan));
            c->len--;
        }
        return start + len;
    }
    if (i < c->len && c->span[i].start == start + len) {
        c->span[i].start = start;
        return start + len;
    }
    if (c->len == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->span = g_renew(CalSpan, c->span, c->cap);
    }
    memmove(c->span + i + 1, c->span + i, (c->len - i) * sizeof(CalSpan));
    c->span[i].start = start;
    c->span[i].end = start + len;
    c->len++;
    return start + len;
}

uint64_t cal_ahead(const Calendar *c, uint64_t t)
{
    uint64_t sum = 0;

    for (uint32_t i = c->len; i > 0 && c->span[i - 1].end > t; i--) {
        const CalSpan *s = &c->span[i - 1];

        sum += s->end - (s->start > t ? s->start : t);
    }
    return sum;
}
