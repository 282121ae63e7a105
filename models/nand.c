/*
 * NAND array timing: see nand.h.
 */
#include <string.h>

#include "nand.h"
#include "timeline.h"

void nand_init(Nand *n, const H3100Config *cfg)
{
    uint32_t channels = cfg->geo.channels;

    n->cfg = cfg;
    n->dies = h3100_dies(cfg);
    n->planes = cfg->geo.planes_per_die;
    n->slot_xfer_ns = tl_xfer_ns(H3100_SLOT_BYTES, cfg->nand.channel_mbps);
    n->unit_xfer_ns = tl_xfer_ns((uint64_t)h3100_slots_per_unit(cfg) *
                                 H3100_SLOT_BYTES, cfg->nand.channel_mbps);
    n->bus = g_new0(Calendar, channels);
    n->q = g_new0(DieQueue, n->dies);
    n->read_free = g_new0(uint64_t, (size_t)n->dies * n->planes);
    n->die_busy_ns = g_new0(uint64_t, n->dies);
    n->bus_busy_ns = g_new0(uint64_t, channels);
    n->present = 0;
    n->next_retire = UINT64_MAX;
    memset(&n->stats, 0, sizeof(n->stats));
    nand_set_throttle(n, 100);
}

static uint64_t stretch(uint64_t ns, uint32_t keep_pct)
{
    return (ns * 100 + keep_pct - 1) / keep_pct;
}

void nand_set_throttle(Nand *n, uint32_t keep_pct)
{
    const H3100NandTiming *nt = &n->cfg->nand;

    for (uint32_t i = 0; i < H3100_PAGE_TYPES; i++) {
        n->read_hold_ns[i] = stretch(nt->t_read_ns[i], keep_pct);
    }
    n->prog_hold_ns = stretch(nt->t_prog_ns, keep_pct);
    n->erase_hold_ns = stretch(nt->t_erase_ns, keep_pct);
    n->keep_pct = keep_pct;
}

void nand_destroy(Nand *n)
{
    for (uint32_t c = 0; c < n->cfg->geo.channels; c++) {
        cal_destroy(&n->bus[c]);
    }
    for (uint32_t d = 0; d < n->dies; d++) {
        g_free(n->q[d].op);
    }
    g_free(n->bus);
    g_free(n->q);
    g_free(n->read_free);
    g_free(n->die_busy_ns);
    g_free(n->bus_busy_ns);
}

void nand_reset_time(Nand *n)
{
    for (uint32_t c = 0; c < n->cfg->geo.channels; c++) {
        cal_clear(&n->bus[c]);
    }
    for (uint32_t d = 0; d < n->dies; d++) {
        n->q[d].head = 0;
        n->q[d].len = 0;
        n->q[d].last_end = 0;
    }
    memset(n->read_free, 0, sizeof(uint64_t) * n->dies * n->planes);
    n->present = 0;
    n->next_retire = UINT64_MAX;
}

static DieOp *op_at(DieQueue *q, uint32_t i)
{
    return &q->op[(q->head + i) & (q->cap - 1)];   /* cap: a power of two */
}

static void queue_push(DieQueue *q, uint64_t start, uint64_t end,
                       uint32_t host_bytes)
{
    DieOp *op;

    if (q->len == q->cap) {
        uint32_t cap = q->cap ? q->cap * 2 : 8;
        DieOp *ring = g_new(DieOp, cap);

        for (uint32_t i = 0; i < q->len; i++) {
            ring[i] = *op_at(q, i);
        }
        g_free(q->op);
        q->op = ring;
        q->cap = cap;
        q->head = 0;
    }
    op = op_at(q, q->len++);
    op->start = start;
    op->end = end;
    op->host_bytes = host_bytes;
    op->suspends = 0;
    q->last_end = end;
}

static void note_end(Nand *n, uint64_t end)
{
    if (end < n->next_retire) {
        n->next_retire = end;
    }
}

/* Book the channel bus of @die for @len from @t; returns the end. */
static uint64_t bus_book(Nand *n, uint32_t die, uint64_t t, uint64_t len)
{
    uint32_t ch = die % n->cfg->geo.channels;

    n->bus_busy_ns[ch] += len;
    return cal_book(&n->bus[ch], t, len, n->present);
}

/* Array time (not the throttled hold) of an operation on @die. */
static void count_array(Nand *n, uint32_t die, uint64_t ns)
{
    n->stats.busy_ns += ns;
    n->die_busy_ns[die] += ns;
}

/* Move queued operations from index @i on so none starts before @t. */
static void push_back_from(DieQueue *q, uint32_t i, uint64_t t)
{
    for (; i < q->len; i++) {
        DieOp *op = op_at(q, i);
        uint64_t delay;

        if (op->start >= t) {
            return;                   /* a gap absorbs the rest */
        }
        delay = t - op->start;
        op->start += delay;
        op->end += delay;
        t = op->end;
    }
    q->last_end = q->len ? op_at(q, q->len - 1)->end : q->last_end;
}

uint64_t nand_read(Nand *n, uint64_t t, uint32_t die, uint32_t plane,
                   uint32_t ptype, uint32_t slots, bool host)
{
    const H3100NandTiming *nt = &n->cfg->nand;
    uint64_t *plane_free = &n->read_free[die * n->planes + plane];
    uint64_t *die_planes = &n->read_free[die * n->planes];
    uint64_t t_r = n->read_hold_ns[ptype];
    uint64_t start = tl_max(t, *plane_free);
    DieQueue *q = &n->q[die];
    uint32_t i = 0;

    if (!host) {
        for (uint32_t p = 0; p < n->planes; p++) {
            start = tl_max(start, die_planes[p]);
        }
    }
    uint64_t end;

    while (i < q->len && op_at(q, i)->end <= start) {
        i++;
    }
    if (i < q->len && op_at(q, i)->start < start) {
        /* an operation is running: suspend it, or read right after it */
        DieOp *run = op_at(q, i);

        if (host && run->suspends < nt->max_suspends) {
            run->suspends++;
            n->stats.suspends++;
            start += nt->t_suspend_ns;
            run->end += nt->t_suspend_ns + t_r + nt->t_resume_ns;
            push_back_from(q, i + 1, run->end);
            end = start + t_r;
            goto transfer;
        }
        start = run->end;
        i++;
    }
    end = start + t_r;
    push_back_from(q, i, end);
transfer:
    *plane_free = end;
    if (!host) {
        /* reclaim reads one page at a time per die (no independent plane
         * reads), so they hold the whole die */
        for (uint32_t p = 0; p < n->planes; p++) {
            die_planes[p] = tl_max(die_planes[p], end);
        }
    }
    n->stats.page_reads++;
    count_array(n, die, nt->t_read_ns[ptype]);
    /* cache read: the plane starts its next read while this one's data
     * leaves the cache register over the bus */
    return bus_book(n, die, end, nt->t_cmd_ns + slots * n->slot_xfer_ns);
}

static uint64_t array_free(const Nand *n, uint32_t die)
{
    uint64_t t = n->q[die].last_end;

    for (uint32_t p = 0; p < n->planes; p++) {
        t = tl_max(t, n->read_free[die * n->planes + p]);
    }
    return t;
}

uint64_t nand_program(Nand *n, uint64_t t, uint32_t die,
                      uint32_t host_bytes)
{
    const H3100NandTiming *nt = &n->cfg->nand;
    /* data goes into the die's cache register while it may still be busy */
    uint64_t data_in = bus_book(n, die, t, nt->t_cmd_ns + n->unit_xfer_ns);
    uint64_t start = tl_max(data_in, array_free(n, die));
    uint64_t end = start + n->prog_hold_ns;

    queue_push(&n->q[die], start, end, host_bytes);
    note_end(n, end);
    n->stats.programs++;
    count_array(n, die, nt->t_prog_ns);
    return end;
}

uint64_t nand_erase(Nand *n, uint64_t t, uint32_t die)
{
    const H3100NandTiming *nt = &n->cfg->nand;
    uint64_t start = tl_max(bus_book(n, die, t, nt->t_cmd_ns),
                            array_free(n, die));
    uint64_t end = start + n->erase_hold_ns;

    queue_push(&n->q[die], start, end, 0);
    note_end(n, end);
    n->stats.erases++;
    count_array(n, die, nt->t_erase_ns);
    return end;
}

/* Operations only ever move later, so next_retire is a safe lower bound
 * that spares a walk over every die on most calls. */
uint64_t nand_retire(Nand *n, uint64_t t)
{
    uint64_t freed = 0, next = UINT64_MAX;

    if (t < n->next_retire) {
        return 0;
    }
    for (uint32_t d = 0; d < n->dies; d++) {
        DieQueue *q = &n->q[d];

        while (q->len && q->op[q->head].end <= t) {
            freed += q->op[q->head].host_bytes;
            q->head = (q->head + 1) & (q->cap - 1);
            q->len--;
        }
        if (q->len) {
            next = tl_min(next, q->op[q->head].end);
        }
    }
    n->next_retire = next;
    return freed;
}

uint64_t nand_next_host_done(const Nand *n)
{
    uint64_t best = UINT64_MAX;

    for (uint32_t d = 0; d < n->dies; d++) {
        const DieQueue *q = &n->q[d];

        for (uint32_t i = 0; i < q->len; i++) {
            const DieOp *op = &q->op[(q->head + i) & (q->cap - 1)];

            if (op->host_bytes) {
                best = tl_min(best, op->end);
                break;
            }
        }
    }
    return best;
}

uint64_t nand_earliest_free(const Nand *n)
{
    uint64_t t = UINT64_MAX;

    for (uint32_t d = 0; d < n->dies; d++) {
        t = tl_min(t, array_free(n, d));
    }
    return t;
}

/* The queues cannot say: the write buffer retires operations as of the
 * future time a stalled write is admitted.  A die's work runs back to
 * back, so the time to its last operation's end is what it has ahead. */
uint64_t nand_ahead_ns(const Nand *n, uint64_t t)
{
    uint64_t held = 0;

    for (uint32_t d = 0; d < n->dies; d++) {
        uint64_t end = n->q[d].last_end;

        held += end > t ? end - t : 0;
    }
    return held * n->keep_pct / 100;
}
