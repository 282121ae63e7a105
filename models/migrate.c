/*
 * A running model's state for live migration (include/h3100/migrate.h):
 * the map goes in pages (ftl_track.c), the rest in the core written here.
 *
 * The core, little-endian as the hosts this runs on:
 *   "H3MC", u32 H3100_MIG_CORE_VERSION
 *   counters and block tables        as the state file (state_io.h)
 *   per superblock its header        as the state file, no reverse map
 *   per map chunk u8: in use
 *   lifetime counters                as the state file (version 4)
 *   timing: whether the model times; its clock (now, arrival, last
 *     command, reclaim's data ready), the read count that seeds each
 *     read's errors, the power cap's share; when each superblock was
 *     erased; the program units in flight; the NAND (present, retire
 *     point, throttle share, counters, plane read times, per-die and
 *     per-bus busy time, bus calendars, die queues); the PCIe link and
 *     the cores (present, counters, calendars); the write buffer; the
 *     read-ahead streams; the temperature and throttle state
 *   u32 CRC-32C of all of the above
 *
 * Loading checks every length against what is left before allocating,
 * every index against the geometry, and the values the timing code
 * relies on (sorted calendars, queue lengths, plausible temperatures):
 * a stream a hostile peer wrote can make the drive slow, never corrupt
 * memory or stall.
 */
#include <math.h>
#include <string.h>

#include "h3100/migrate.h"
#include "crc32c.h"
#include "state_io.h"

#define CORE_MAGIC "H3MC"
/* a calendar or die queue longer than this is not one the model built */
#define CORE_LIST_MAX (1u << 20)
#define CORE_TEMP_MAX_K 1000.0

/* ---- the sender ------------------------------------------------------- */

void h3100_mig_track_start(H3100Model *m)
{
    ftl_track_start(&m->ftl);
}

void h3100_mig_track_stop(H3100Model *m)
{
    ftl_track_stop(&m->ftl);
}

uint64_t h3100_mig_pending(const H3100Model *m)
{
    return ftl_track_pending(&m->ftl);
}

bool h3100_mig_next(H3100Model *m, H3100MigItem *it)
{
    return ftl_track_next(&m->ftl, it);
}

/* ---- the core: writing ------------------------------------------------ */

static void put_calendar(Stream *s, const Calendar *c)
{
    PUT(s, c->len);
    stream_put(s, c->span, sizeof(CalSpan) * c->len);
}

static void put_die_queue(Stream *s, const DieQueue *q)
{
    PUT(s, q->len);
    PUT(s, q->last_end);
    for (uint32_t i = 0; i < q->len; i++) {
        PUT(s, q->op[(q->head + i) & (q->cap - 1)]);
    }
}

static void put_nand(Stream *s, const Nand *n)
{
    uint32_t channels = n->cfg->geo.channels;

    PUT(s, n->present);
    PUT(s, n->next_retire);
    PUT(s, n->keep_pct);
    PUT(s, n->stats);
    stream_put(s, n->read_free, sizeof(uint64_t) * n->dies * n->planes);
    stream_put(s, n->die_busy_ns, sizeof(uint64_t) * n->dies);
    stream_put(s, n->bus_busy_ns, sizeof(uint64_t) * channels);
    for (uint32_t c = 0; c < channels; c++) {
        put_calendar(s, &n->bus[c]);
    }
    for (uint32_t d = 0; d < n->dies; d++) {
        put_die_queue(s, &n->q[d]);
    }
}

static void put_timing(H3100Model *m, Stream *s)
{
    uint8_t timing = m->timing;
    const Thermal *th = &m->thermal;

    PUT(s, timing);
    PUT(s, m->now);
    PUT(s, m->arrival);
    PUT(s, m->last_now);
    PUT(s, m->gc_unit_ready);
    PUT(s, m->host_unc);
    PUT(s, m->reads);
    PUT(s, m->power_keep_pct);
    stream_put(s, m->sb_erased_at, sizeof(uint64_t) * m->ftl.nsb);
    stream_put(s, m->units, sizeof(UnitDone) * UNIT_TABLE);
    put_nand(s, &m->nand);
    PUT(s, m->link.present);
    PUT(s, m->link.to_host_bytes);
    PUT(s, m->link.to_dev_bytes);
    put_calendar(s, &m->link.to_host);
    put_calendar(s, &m->link.to_dev);
    PUT(s, m->cores.present);
    PUT(s, m->cores.busy_ns);
    for (uint32_t i = 0; i < m->cores.n; i++) {
        put_calendar(s, &m->cores.cal[i]);
    }
    PUT(s, m->wbuf.held);
    PUT(s, m->wbuf.pending);
    PUT(s, m->wbuf.last_admit);
    PUT(s, m->wbuf.stats);
    PUT(s, m->ra.clock);
    PUT(s, m->ra.live_chunks);
    stream_put(s, m->ra.s, sizeof(RaStream) * m->ra.nstreams);
    PUT(s, th->temp_k);
    PUT(s, th->power_mw);
    PUT(s, th->last);
    PUT(s, th->next);
    PUT(s, th->nand_heat);
    PUT(s, th->core_heat);
    PUT(s, th->tmt1_k);
    PUT(s, th->tmt2_k);
    PUT(s, th->level);
}

GByteArray *h3100_mig_core_save(H3100Model *m)
{
    Ftl *f = &m->ftl;
    uint32_t version = H3100_MIG_CORE_VERSION;
    Stream s = { .out = g_byte_array_new() };

    stream_put(&s, CORE_MAGIC, 4);
    PUT(&s, version);
    state_put_counters(m, &s);
    for (uint32_t i = 0; i < f->nsb; i++) {
        state_put_sb(&f->sb[i], &s);
    }
    for (uint64_t c = 0; c < f->nchunks; c++) {
        uint8_t has = f->l2p[c] != NULL;

        PUT(&s, has);
    }
    state_put_lifetime(m, &s);
    put_timing(m, &s);
    g_byte_array_append(s.out, (const uint8_t *)&s.crc, sizeof(s.crc));
    return s.out;
}

/* ---- the core: reading ------------------------------------------------ */

static bool get_calendar(Stream *s, Calendar *c, GString *why)
{
    uint32_t len;

    if (!GET(s, len) || len > CORE_LIST_MAX ||
        !stream_holds(s, sizeof(CalSpan) * (uint64_t)len)) {
        return state_refuse(why, "bad calendar");
    }
    g_free(c->span);
    c->span = g_new(CalSpan, MAX(len, 1));
    c->cap = MAX(len, 1);
    c->len = len;
    stream_get(s, c->span, sizeof(CalSpan) * len);
    /* disjoint and sorted: the gap search relies on it */
    for (uint32_t i = 0; i < len; i++) {
        if (c->span[i].start > c->span[i].end ||
            c->span[i].end > H3100_MIG_TIME_MAX ||
            (i && c->span[i - 1].end > c->span[i].start)) {
            return state_refuse(why, "calendar spans out of order");
        }
    }
    return true;
}

static bool get_die_queue(Stream *s, DieQueue *q, GString *why)
{
    uint32_t len, cap = 8;

    if (!GET(s, len) || !GET(s, q->last_end) || len > CORE_LIST_MAX ||
        !stream_holds(s, sizeof(DieOp) * (uint64_t)len)) {
        return state_refuse(why, "bad die queue");
    }
    while (cap < len) {
        cap *= 2;                     /* a power of two, as queue_push's */
    }
    g_free(q->op);
    q->op = g_new(DieOp, cap);
    q->cap = cap;
    q->head = 0;
    q->len = len;
    if (!stream_get(s, q->op, sizeof(DieOp) * len)) {
        return state_refuse(why, "truncated die queue");
    }
    /*
     * In time order, one after the other, as the die runs them: retiring
     * stops at the first op not yet done, so a write buffer waiting for a
     * later op would wait for ever.
     */
    for (uint32_t i = 0; i < len; i++) {
        if (q->op[i].start > q->op[i].end ||
            (i && q->op[i - 1].end > q->op[i].start)) {
            return state_refuse(why, "die queue out of order");
        }
    }
    if (q->last_end > H3100_MIG_TIME_MAX ||
        (len && q->op[len - 1].end != q->last_end)) {
        return state_refuse(why, "bad die queue end");
    }
    return true;
}

/* Times the NAND state holds: in range, the next retire not past one. */
static bool nand_times_ok(const Nand *n)
{
    for (uint32_t i = 0; i < n->dies * n->planes; i++) {
        if (n->read_free[i] > H3100_MIG_TIME_MAX) {
            return false;
        }
    }
    for (uint32_t d = 0; d < n->dies; d++) {
        const DieQueue *q = &n->q[d];

        if (q->len && n->next_retire > q->op[q->head].end) {
            return false;
        }
    }
    return true;
}

static bool get_nand(Stream *s, Nand *n, GString *why)
{
    uint32_t channels = n->cfg->geo.channels;
    uint32_t keep;

    GET(s, n->present);
    GET(s, n->next_retire);
    GET(s, keep);
    GET(s, n->stats);
    stream_get(s, n->read_free, sizeof(uint64_t) * n->dies * n->planes);
    stream_get(s, n->die_busy_ns, sizeof(uint64_t) * n->dies);
    stream_get(s, n->bus_busy_ns, sizeof(uint64_t) * channels);
    if (s->failed || keep < 1 || keep > 100) {
        return state_refuse(why, "bad NAND state");
    }
    nand_set_throttle(n, keep);       /* the hold times follow from it */
    for (uint32_t c = 0; c < channels; c++) {
        if (!get_calendar(s, &n->bus[c], why)) {
            return false;
        }
    }
    for (uint32_t d = 0; d < n->dies; d++) {
        if (!get_die_queue(s, &n->q[d], why)) {
            return false;
        }
    }
    return nand_times_ok(n) || state_refuse(why, "bad NAND times");
}

static bool get_link_cores(H3100Model *m, Stream *s, GString *why)
{
    GET(s, m->link.present);
    GET(s, m->link.to_host_bytes);
    GET(s, m->link.to_dev_bytes);
    if (!get_calendar(s, &m->link.to_host, why) ||
        !get_calendar(s, &m->link.to_dev, why)) {
        return false;
    }
    GET(s, m->cores.present);
    GET(s, m->cores.busy_ns);
    for (uint32_t i = 0; i < m->cores.n; i++) {
        if (!get_calendar(s, &m->cores.cal[i], why)) {
            return false;
        }
    }
    return true;
}

static bool get_buffers(H3100Model *m, Stream *s, GString *why)
{
    GET(s, m->wbuf.held);
    GET(s, m->wbuf.pending);
    GET(s, m->wbuf.last_admit);
    GET(s, m->wbuf.stats);
    GET(s, m->ra.clock);
    GET(s, m->ra.live_chunks);
    stream_get(s, m->ra.s, sizeof(RaStream) * m->ra.nstreams);
    if (s->failed || m->wbuf.held > m->wbuf.cap ||
        m->wbuf.pending > m->wbuf.cap - m->wbuf.held ||
        m->wbuf.last_admit > H3100_MIG_TIME_MAX ||
        m->ra.live_chunks > RA_CHUNKS * m->ra.nstreams) {
        return state_refuse(why, "bad write buffer or read-ahead state");
    }
    for (uint32_t i = 0; i < m->ra.nstreams; i++) {
        if (m->ra.s[i].head >= RA_CHUNKS) {
            return state_refuse(why, "bad read-ahead stream %u", i);
        }
    }
    return true;
}

static bool get_thermal(Thermal *th, Stream *s, GString *why)
{
    GET(s, th->temp_k);
    GET(s, th->power_mw);
    GET(s, th->last);
    GET(s, th->next);
    GET(s, th->nand_heat);
    GET(s, th->core_heat);
    GET(s, th->tmt1_k);
    GET(s, th->tmt2_k);
    GET(s, th->level);
    if (s->failed || !isfinite(th->temp_k) || th->temp_k < 0 ||
        th->last > H3100_MIG_TIME_MAX || th->next > H3100_MIG_TIME_MAX ||
        th->temp_k > CORE_TEMP_MAX_K || !isfinite(th->power_mw) ||
        th->power_mw < 0 || th->level > 2 ||
        th->tmt1_k > CORE_TEMP_MAX_K || th->tmt2_k > CORE_TEMP_MAX_K) {
        return state_refuse(why, "bad thermal state");
    }
    return true;
}

/* The clock and what finishes when: no deadline from them wraps. */
static bool model_times_ok(const H3100Model *m)
{
    uint64_t max = H3100_MIG_TIME_MAX;

    if (m->now > max || m->arrival > max || m->last_now > max ||
        m->gc_unit_ready > max) {
        return false;
    }
    for (uint32_t i = 0; i < m->ftl.nsb; i++) {
        if (m->sb_erased_at[i] > max) {
            return false;
        }
    }
    for (uint32_t i = 0; i < UNIT_TABLE; i++) {
        if (m->units[i].done > max) {
            return false;
        }
    }
    return true;
}

static bool get_timing(H3100Model *m, Stream *s, GString *why)
{
    uint8_t timing;

    GET(s, timing);
    GET(s, m->now);
    GET(s, m->arrival);
    GET(s, m->last_now);
    GET(s, m->gc_unit_ready);
    GET(s, m->host_unc);
    GET(s, m->reads);
    GET(s, m->power_keep_pct);
    stream_get(s, m->sb_erased_at, sizeof(uint64_t) * m->ftl.nsb);
    stream_get(s, m->units, sizeof(UnitDone) * UNIT_TABLE);
    if (s->failed || timing > 1 || m->power_keep_pct > 100 ||
        !model_times_ok(m)) {
        return state_refuse(why, "bad model clock");
    }
    m->timing = timing;
    return get_nand(s, &m->nand, why) && get_link_cores(m, s, why) &&
           get_buffers(m, s, why) && get_thermal(&m->thermal, s, why);
}

/*
 * Read @len bytes of core into @m, a model holding the pages received:
 * the superblock headers replace its own (not the reverse maps, whose
 * use is in @sb_has), the chunks in use go to @chunk_has.  What the map
 * and the tables mean together is the receiver's to check.
 */
bool model_mig_core_load(H3100Model *m, const uint8_t *core, size_t len,
                         uint8_t *sb_has, uint8_t *chunk_has, GString *why)
{
    Ftl *f = &m->ftl;
    Stream s = { .in = core, .limit = len };
    uint32_t version, crc, open = 0;
    char magic[4];

    if (len < sizeof(crc)) {
        return state_refuse(why, "core too short");
    }
    memcpy(&crc, core + len - sizeof(crc), sizeof(crc));
    s.limit -= sizeof(crc);
    if (crc32c(core, len - sizeof(crc)) != crc) {
        return state_refuse(why, "core checksum mismatch");
    }
    if (!stream_get(&s, magic, 4) || memcmp(magic, CORE_MAGIC, 4) ||
        !GET(&s, version)) {
        return state_refuse(why, "not a drive model core");
    }
    if (version != H3100_MIG_CORE_VERSION) {
        return state_refuse(why, "core version %u, this build reads %u",
                            version, H3100_MIG_CORE_VERSION);
    }
    if (!state_get_counters(m, &s, why)) {
        return false;
    }
    for (uint32_t i = 0; i < f->nsb; i++) {
        if (!state_get_sb(f, i, &s, &sb_has[i], &open, why)) {
            return false;
        }
    }
    if (!stream_holds(&s, f->nchunks)) {
        return state_refuse(why, "truncated map chunks");
    }
    stream_get(&s, chunk_has, f->nchunks);
    for (uint64_t c = 0; c < f->nchunks; c++) {
        if (chunk_has[c] > 1) {
            return state_refuse(why, "map chunk %" PRIu64 ": bad flag %u", c,
                                chunk_has[c]);
        }
    }
    if (!state_get_lifetime(m, &s, 4, why) || !get_timing(m, &s, why)) {
        return false;
    }
    if (s.limit) {
        return state_refuse(why, "%" PRIu64 " bytes after the core",
                            s.limit);
    }
    model_attach_hooks(m);
    return true;
}
