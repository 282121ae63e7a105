/*
 * The drive model: where a command's time goes.
 *
 *   doorbell -> SQ fetch -> firmware on a core -> NAND / DRAM -> PCIe
 *   -> completion entry and interrupt
 *
 * Reads wait for the NAND (or find data in the write buffer, in
 * read-ahead, or nowhere at all when unmapped).  Writes wait for room in
 * the power-loss-protected write buffer, then complete; the FTL hands
 * full program units to the NAND in the background, and reclaim competes
 * with them for dies and cores.
 */
#include <math.h>
#include <string.h>

#include "model_priv.h"
#include "timeline.h"

#define IDLE_RECLAIM_AFTER_NS 1000000ULL  /* host quiet this long */
#define IDLE_RECLAIM_STEPS 256u
#define POWER_KEEP_MIN_PCT 5u             /* a cap at idle still moves data */

static UnitDone *unit_entry(H3100Model *m, uint64_t gid)
{
    return &m->units[gid % UNIT_TABLE];
}

/* Is the data of @ppn still only in controller DRAM at @t? */
static bool in_buffer(H3100Model *m, uint64_t ppn, uint64_t t)
{
    FtlAddr a = ftl_addr(&m->ftl, ppn);
    UnitDone *e;

    if (!ftl_unit_is_full(&m->ftl, &a)) {
        return true;
    }
    e = unit_entry(m, (uint64_t)a.sb * m->units_per_sb + a.unit);
    return e->unit == (uint64_t)a.sb * m->units_per_sb + a.unit + 1 &&
           e->done > t;
}

/* FTL hooks: the FTL decided, the NAND and cores pay. */

static void hook_unit_full(void *opaque, uint32_t stream, uint32_t sb,
                           uint32_t unit)
{
    H3100Model *m = opaque;
    uint64_t gid = (uint64_t)sb * m->units_per_sb + unit;
    uint32_t die = modulo(&m->ftl.by_dies, unit);
    uint64_t ready = tl_max(m->now, m->sb_erased_at[sb]);
    uint64_t done;
    UnitDone *e;

    if (ftl_is_gc_stream(stream)) {
        ready = tl_max(ready, m->gc_unit_ready);
        m->gc_unit_ready = 0;
    }
    if (!ftl_is_gc_stream(stream)) {
        uint32_t bytes = m->ftl.spu * H3100_SLOT_BYTES;

        done = nand_program(&m->nand, ready, die, bytes);
        wbuf_handed_over(&m->wbuf, bytes);
    } else {
        done = nand_program(&m->nand, ready, die, 0);
    }
    e = unit_entry(m, gid);
    e->unit = gid + 1;
    e->done = done;
}

#define NS_PER_HOUR 3600000000000.0

/* How old the data of superblock @sb is at @t. */
static double data_age_hours(H3100Model *m, uint32_t sb, uint64_t t)
{
    uint64_t since = m->sb_erased_at[sb];

    return m->cfg.rel.age_days * 24.0 +
           (t > since ? (t - since) / NS_PER_HOUR : 0);
}

/*
 * Read a page and decode it (models/ecc.c): each read retry senses the
 * page again on its die, a soft decode senses it soft_reads more times.
 * Host reads may suspend a program; reclaim's reads wait their turn.
 */
static uint64_t read_page(H3100Model *m, uint64_t t, uint64_t ppn,
                          uint32_t nslots, bool for_host)
{
    const H3100ReliabilityParams *r = &m->cfg.rel;
    FtlAddr a = ftl_addr(&m->ftl, ppn);
    EccPage page = {
        .page = divide(&m->ftl.by_spp, (uint32_t)ppn), .ptype = a.ptype,
        .erase_count = m->ftl.sb[a.sb].erase_count,
        .age_hours = data_age_hours(m, a.sb, t), .codewords = nslots,
    };
    EccOutcome o;
    uint64_t done;

    ecc_decode(&m->cfg, m->cfg.seed, &page, m->reads++, &m->ecc_memo, &o);
    m->c.nand_read_bytes += m->cfg.geo.page_bytes;
    done = t;
    for (uint32_t i = 0; i <= o.retries; i++) {
        done = nand_read(&m->nand, done, a.die, a.plane, a.ptype, nslots,
                         for_host) + o.hard_ns[i];
    }
    m->ecc.retries += o.retries > 0;
    if (o.soft) {
        for (uint32_t i = 0; i < r->soft_reads; i++) {
            done = nand_read(&m->nand, done, a.die, a.plane, a.ptype, nslots,
                             for_host);
        }
        done += r->soft_decode_ns;
        m->ecc.soft_decodes++;
    }
    if (o.uncorrectable) {
        m->host_unc += for_host;
        m->ecc.reclaim_uncorrectable += !for_host;
    }
    return done;
}

static void observe(H3100Model *m, H3100ReclaimStep step, uint32_t sb,
                    uint64_t a, uint64_t b)
{
    if (m->reclaim_fn) {
        m->reclaim_fn(m->reclaim_opaque, step, m->now, sb, a, b);
    }
}

/* Reclaim steps for the observer: the hooks without timing, and the
 * first thing the timed hooks do. */
static void observe_gc_victim(void *opaque, uint32_t sb, uint64_t valid,
                              bool wl)
{
    observe(opaque, H3100_RECLAIM_VICTIM, sb, valid, wl);
}

static void observe_gc_read(void *opaque, uint64_t ppn, uint32_t nslots)
{
    H3100Model *m = opaque;

    observe(m, H3100_RECLAIM_READ, ftl_addr(&m->ftl, ppn).sb, nslots, 0);
}

static void observe_erased(void *opaque, uint32_t sb)
{
    H3100Model *m = opaque;

    observe(m, H3100_RECLAIM_ERASE, sb, m->ftl.sb[sb].erase_count,
            m->ftl.nfree);
}

static void hook_gc_read(void *opaque, uint64_t ppn, uint32_t nslots)
{
    H3100Model *m = opaque;

    observe_gc_read(m, ppn, nslots);
    if (in_buffer(m, ppn, m->now)) {
        return;
    }
    /* a NAND read for the firmware, however few of its slots are still
     * valid: victims of a partly hot drive cost more per moved slot */
    cores_run(&m->cores, m->arrival, m->cfg.ctrl.gc_page_ns);
    m->gc_unit_ready = tl_max(m->gc_unit_ready,
                              read_page(m, m->now, ppn, nslots, false));
}

static void hook_gc_moved(void *opaque)
{
    H3100Model *m = opaque;

    /* firmware queues reclaim work when it handles the write that needs
     * it, in arrival order with host commands */
    cores_run(&m->cores, m->arrival, m->cfg.ctrl.gc_slot_ns);
}

static void hook_erased(void *opaque, uint32_t sb)
{
    H3100Model *m = opaque;
    uint64_t done = m->now;

    observe_erased(m, sb);
    for (uint32_t d = 0; d < m->ftl.dies; d++) {
        done = tl_max(done, nand_erase(&m->nand, m->now, d));
    }
    m->sb_erased_at[sb] = done;
}

void model_attach_hooks(H3100Model *m)
{
    FtlHooks hooks = {
        .opaque = m,
        .unit_full = hook_unit_full,
        .gc_read = hook_gc_read,
        .gc_moved = hook_gc_moved,
        .erased = hook_erased,
        .gc_victim = observe_gc_victim,
    };
    FtlHooks observed = {
        .opaque = m,
        .gc_read = observe_gc_read,
        .erased = observe_erased,
        .gc_victim = observe_gc_victim,
    };

    if (m->timing) {
        ftl_set_hooks(&m->ftl, &hooks);
    } else {
        ftl_set_hooks(&m->ftl, m->reclaim_fn ? &observed : NULL);
    }
}

void h3100_model_set_reclaim_observer(H3100Model *m, H3100ReclaimFn fn,
                                      void *opaque)
{
    m->reclaim_fn = fn;
    m->reclaim_opaque = opaque;
    model_attach_hooks(m);
}

/* The NAND runs at the lower of what the heat and the power cap allow. */
static void model_apply_throttle(H3100Model *m)
{
    uint32_t keep = thermal_keep_pct(&m->thermal);

    if (m->power_keep_pct && m->power_keep_pct < keep) {
        keep = m->power_keep_pct;
    }
    nand_set_throttle(&m->nand, keep);
}

void model_thermal_power_on(H3100Model *m)
{
    thermal_power_on(&m->thermal, m->nand.stats.busy_ns, m->cores.busy_ns);
    model_apply_throttle(m);
}

/* Array or core time done by @t: all that was booked, less the queued. */
static uint64_t done_by(uint64_t booked, uint64_t ahead)
{
    return booked > ahead ? booked - ahead : 0;
}

/* Heat up to @now, at most once per thermal step: the hot path pays one
 * comparison. */
static void model_thermal(H3100Model *m, uint64_t now)
{
    uint64_t nand, core;

    if (!m->timing || !thermal_due(&m->thermal, now)) {
        return;
    }
    nand = done_by(m->nand.stats.busy_ns, nand_ahead_ns(&m->nand, now));
    core = done_by(m->cores.busy_ns, cores_ahead_ns(&m->cores, now));
    if (thermal_update(&m->thermal, now, nand, core)) {
        model_apply_throttle(m);
    }
}

H3100Model *h3100_model_new(const H3100Config *cfg, GError **errp)
{
    H3100Model *m;

    if (!h3100_config_validate(cfg, errp)) {
        return NULL;
    }
    m = g_new0(H3100Model, 1);
    m->cfg = *cfg;
    if (!ftl_init(&m->ftl, &m->cfg, errp)) {
        g_free(m);
        return NULL;
    }
    nand_init(&m->nand, &m->cfg);
    link_init(&m->link, &m->cfg.link);
    cores_init(&m->cores, m->cfg.ctrl.cores);
    wbuf_init(&m->wbuf, m->cfg.cache.write_buffer_bytes);
    ra_init(&m->ra, &m->cfg);
    m->sb_erased_at = g_new0(uint64_t, m->ftl.nsb);
    m->units_per_sb = m->ftl.sps / m->ftl.spu;
    m->units = g_new0(UnitDone, UNIT_TABLE);
    m->timing = true;
    thermal_init(&m->thermal, &m->cfg);
    model_thermal_power_on(m);
    model_attach_hooks(m);
    return m;
}

void h3100_model_free(H3100Model *m)
{
    if (!m) {
        return;
    }
    ftl_destroy(&m->ftl);
    nand_destroy(&m->nand);
    link_destroy(&m->link);
    cores_destroy(&m->cores);
    ra_destroy(&m->ra);
    g_free(m->sb_erased_at);
    g_free(m->units);
    g_free(m);
}

const H3100Config *h3100_model_config(const H3100Model *m)
{
    return &m->cfg;
}

void h3100_model_set_timing(H3100Model *m, bool on)
{
    if (on && !m->timing) {
        /* work done at FTL speed (preconditioning) took no time: no heat */
        thermal_skip_work(&m->thermal, m->nand.stats.busy_ns,
                          m->cores.busy_ns);
    }
    m->timing = on;
    model_attach_hooks(m);
}

void h3100_model_reset_time(H3100Model *m)
{
    nand_reset_time(&m->nand);
    link_reset_time(&m->link);
    cores_reset_time(&m->cores);
    wbuf_reset_time(&m->wbuf);
    ra_reset_time(&m->ra);
    memset(m->sb_erased_at, 0, sizeof(uint64_t) * m->ftl.nsb);
    memset(m->units, 0, sizeof(UnitDone) * UNIT_TABLE);
    m->gc_unit_ready = 0;
    m->now = 0;
    m->last_now = 0;
    /* a new run is a power cycle: the drive starts cool */
    model_thermal_power_on(m);
}

/*
 * When the data of [lpn, lpn + n) is in controller SRAM/DRAM, reading
 * what the NAND must from @t.  Slots of one page read together once.
 */
static uint64_t read_slots(H3100Model *m, uint64_t t, uint64_t lpn,
                           uint64_t n, bool host)
{
    uint64_t ready = t, group_page = UINT64_MAX, group_ppn = 0;
    uint32_t group_n = 0;

    for (uint64_t i = 0; i < n; i++) {
        uint64_t r, ppn, page;

        if (host && ra_lookup(&m->ra, lpn + i, &r)) {
            ready = tl_max(ready, r);
            m->c.ra_hits++;
            continue;
        }
        ppn = ftl_lookup(&m->ftl, lpn + i);
        if (ppn == FTL_UNMAPPED) {
            m->c.unmapped_reads += host;
            continue;
        }
        if (in_buffer(m, ppn, t)) {
            m->c.buffer_read_hits += host;
            continue;
        }
        if (!host) {
            m->c.ra_slots_read++;
        }
        page = divide(&m->ftl.by_spp, (uint32_t)ppn);
        if (page == group_page) {
            group_n++;
            continue;
        }
        if (group_n) {
            ready = tl_max(ready, read_page(m, t, group_ppn, group_n, true));
        }
        group_page = page;
        group_ppn = ppn;
        group_n = 1;
    }
    if (group_n) {
        ready = tl_max(ready, read_page(m, t, group_ppn, group_n, true));
    }
    return ready;
}

static void prefetch(H3100Model *m, uint64_t t, uint64_t lpn, uint64_t n)
{
    RaFetch fetch[2];
    uint32_t k = ra_observe(&m->ra, lpn, n, fetch);

    for (uint32_t i = 0; i < k; i++) {
        uint32_t unc = m->host_unc;
        uint64_t ready = read_slots(m, t, fetch[i].start,
                                    fetch[i].end - fetch[i].start, false);

        /* what read-ahead cannot decode is not kept: the host's own
         * read of it goes to the NAND and its full recovery */
        if (m->host_unc == unc) {
            ra_filled(&m->ra, &fetch[i], ready);
        }
        m->host_unc = unc;
    }
}

static uint64_t cmd_start(H3100Model *m, uint64_t now, uint64_t core_ns)
{
    return cores_run(&m->cores, now + m->cfg.link.sq_fetch_ns, core_ns);
}

static uint64_t post_completion(H3100Model *m, uint64_t t)
{
    return t + m->cfg.link.cq_post_ns;
}

static uint64_t do_read(H3100Model *m, uint64_t now, const H3100Io *io,
                        uint64_t lpn, uint64_t n, H3100Status *status)
{
    const H3100CtrlTiming *c = &m->cfg.ctrl;
    uint64_t t = cmd_start(m, now, c->read_cmd_ns + n * c->read_slot_ns);
    uint64_t ready;

    m->host_unc = 0;
    ready = read_slots(m, t, lpn, n, true);
    if (m->host_unc) {
        *status = H3100_UNCORRECTABLE;
        m->ecc.host_uncorrectable++;
    }
    prefetch(m, t, lpn, n);
    ready += c->read_fw_ns;
    if (io->op == H3100_OP_COMPARE) {
        /* the controller fetches the host's copy and compares */
        ready = tl_max(ready, link_from_host(&m->link, t, io->length));
        return post_completion(m, ready);
    }
    m->c.host_read_cmds++;
    m->c.host_read_bytes += io->length;
    return post_completion(m, link_to_host(&m->link, ready, io->length));
}

static bool slot_is_partial(const H3100Io *io, uint64_t lpn)
{
    uint64_t start = lpn * H3100_SLOT_BYTES;

    return io->offset > start ||
           io->offset + io->length < start + H3100_SLOT_BYTES;
}

/* A write of part of a slot merges with the old data: read it first. */
static uint64_t merge_partial(H3100Model *m, uint64_t t, const H3100Io *io,
                              uint64_t lpn, uint64_t n)
{
    uint64_t ready = t;
    uint64_t ends[2] = { lpn, lpn + n - 1 };

    for (int i = 0; i < (n > 1 ? 2 : 1); i++) {
        if (slot_is_partial(io, ends[i])) {
            m->c.unaligned_ios += i == 0 || !slot_is_partial(io, ends[0]);
            ready = tl_max(ready, read_slots(m, t, ends[i], 1, false));
        }
    }
    return ready;
}

static uint64_t do_write(H3100Model *m, uint64_t now, const H3100Io *io,
                         uint64_t lpn, uint64_t n, H3100Status *status)
{
    const H3100CtrlTiming *c = &m->cfg.ctrl;
    uint32_t stream = io->stream < H3100_MAX_STREAMS ? io->stream : 0;
    uint64_t t = cmd_start(m, now, c->write_cmd_ns + n * c->write_slot_ns);
    uint64_t bytes = n * H3100_SLOT_BYTES;

    if (m->read_only) {
        *status = H3100_READ_ONLY;
        return post_completion(m, t);
    }
    t = merge_partial(m, t, io, lpn, n);
    t = wbuf_admit(&m->wbuf, &m->nand, t, bytes);
    t = link_from_host(&m->link, t, io->length);
    m->now = t;
    for (uint64_t i = 0; i < n; i++) {
        if (!ftl_write(&m->ftl, lpn + i, stream)) {
            m->read_only = true;
            *status = H3100_READ_ONLY;
            wbuf_cancel(&m->wbuf, (n - i) * H3100_SLOT_BYTES);
            break;
        }
    }
    ra_invalidate(&m->ra, lpn, n);
    m->c.host_write_cmds++;
    m->c.host_write_bytes += io->length;
    return post_completion(m, t + c->write_fw_ns);
}

/*
 * One end of a deallocated range: a whole slot is unmapped; zeroes merged
 * into a partly kept slot are written; a partly deallocated slot keeps
 * its data.
 */
static uint64_t deallocate_end(H3100Model *m, uint64_t t, const H3100Io *io,
                               uint64_t lpn, H3100Status *status)
{
    if (!slot_is_partial(io, lpn)) {
        ftl_trim(&m->ftl, lpn);
    } else if (io->op == H3100_OP_WRITE_ZEROES && !m->read_only &&
               ftl_lookup(&m->ftl, lpn) != FTL_UNMAPPED) {
        t = tl_max(t, read_slots(m, t, lpn, 1, false));
        m->now = t;
        if (!ftl_write(&m->ftl, lpn, 0)) {
            m->read_only = true;
            *status = H3100_READ_ONLY;
        }
    }
    return t;
}

/*
 * Only the first and last slots can be partial.  The whole slots between
 * are unmapped by map chunk, in the same order as slot by slot, so the
 * result is the same and space never written costs nothing per slot.
 */
static uint64_t do_deallocate(H3100Model *m, uint64_t now, const H3100Io *io,
                              uint64_t lpn, uint64_t n, H3100Status *status)
{
    const H3100CtrlTiming *c = &m->cfg.ctrl;
    uint64_t t = cmd_start(m, now, c->trim_cmd_ns + n * c->trim_slot_ns);

    m->now = t;
    t = deallocate_end(m, t, io, lpn, status);
    if (n > 2) {
        ftl_trim_range(&m->ftl, lpn + 1, n - 2);
    }
    if (n > 1) {
        t = deallocate_end(m, t, io, lpn + n - 1, status);
    }
    ra_invalidate(&m->ra, lpn, n);
    m->c.host_trim_cmds++;
    return post_completion(m, t);
}

void h3100_model_idle(H3100Model *m, uint64_t now)
{
    uint64_t from = m->last_now + IDLE_RECLAIM_AFTER_NS;

    model_thermal(m, now);
    if (!m->timing || now <= from || !ftl_gc_idle_wanted(&m->ftl)) {
        return;
    }
    for (uint32_t i = 0; i < IDLE_RECLAIM_STEPS; i++) {
        uint64_t t = tl_max(nand_earliest_free(&m->nand), from);

        if (t >= now || !ftl_gc_idle_wanted(&m->ftl)) {
            break;
        }
        m->now = t;
        m->arrival = t;
        ftl_gc_step(&m->ftl, m->ftl.spu);
    }
}

H3100Result h3100_model_submit(H3100Model *m, uint64_t now,
                               const H3100Io *io)
{
    H3100Result r = { .done_ns = now, .status = H3100_OK };
    uint64_t lpn = io->offset / H3100_SLOT_BYTES;
    uint64_t end = (io->offset + io->length + H3100_SLOT_BYTES - 1) /
                   H3100_SLOT_BYTES;
    bool ranged = io->op != H3100_OP_FLUSH && io->op != H3100_OP_ADMIN;
    uint64_t n;

    if (ranged && (io->length == 0 || end > m->ftl.user_slots ||
                   io->offset + io->length < io->offset)) {
        r.status = H3100_OUT_OF_RANGE;
        return r;
    }
    n = end - lpn;
    h3100_model_idle(m, now);
    m->arrival = now;
    nand_set_present(&m->nand, now);
    link_set_present(&m->link, now);
    cores_set_present(&m->cores, now);
    wbuf_occupancy(&m->wbuf, &m->nand, now);
    m->now = now;
    switch (io->op) {
    case H3100_OP_READ:
    case H3100_OP_COMPARE:
        r.done_ns = do_read(m, now, io, lpn, n, &r.status);
        break;
    case H3100_OP_WRITE:
        r.done_ns = do_write(m, now, io, lpn, n, &r.status);
        break;
    case H3100_OP_DEALLOCATE:
    case H3100_OP_WRITE_ZEROES:
        r.done_ns = do_deallocate(m, now, io, lpn, n, &r.status);
        break;
    case H3100_OP_FLUSH:
    case H3100_OP_ADMIN:
    default:
        /* the buffer is power-loss protected: a flush has nothing to wait
         * for but the firmware */
        r.done_ns = post_completion(m, cmd_start(m, now,
                                                 m->cfg.ctrl.admin_cmd_ns));
        break;
    }
    m->last_now = now;
    if (!m->timing) {
        r.done_ns = now;
    }
    return r;
}

void h3100_model_format(H3100Model *m)
{
    ftl_forget_all(&m->ftl);
    ra_invalidate(&m->ra, 0, m->ftl.user_slots);
}

uint64_t h3100_model_sanitize(H3100Model *m, uint64_t now)
{
    uint64_t done = now;

    ftl_erase_all(&m->ftl);
    ra_invalidate(&m->ra, 0, m->ftl.user_slots);
    if (!m->timing) {
        return now;
    }
    /* every superblock's blocks, one erase per die at a time */
    for (uint32_t sb = 0; sb < m->ftl.nsb; sb++) {
        if (m->ftl.sb[sb].state == SB_RETIRED) {
            continue;
        }
        for (uint32_t d = 0; d < m->ftl.dies; d++) {
            done = tl_max(done, nand_erase(&m->nand, now, d));
        }
    }
    return done;
}

void h3100_model_prefetch(const H3100Model *m, uint64_t offset)
{
    uint64_t lpn = offset / H3100_SLOT_BYTES;

    if (lpn < m->ftl.user_slots) {
        ftl_prefetch(&m->ftl, lpn);
    }
}

bool h3100_model_is_mapped(const H3100Model *m, uint64_t offset)
{
    uint64_t lpn = offset / H3100_SLOT_BYTES;

    return lpn < m->ftl.user_slots &&
           ftl_lookup(&m->ftl, lpn) != FTL_UNMAPPED;
}

/* What the model holds beside its FTL. */
static uint64_t model_own_bytes(const H3100Model *m)
{
    return sizeof(*m) +
           (uint64_t)m->ftl.nsb * sizeof(uint64_t) +
           UNIT_TABLE * sizeof(UnitDone) +
           /* per die and plane, with the dies' and buses' busy time */
           (uint64_t)m->nand.dies * (m->nand.planes + 4) * sizeof(uint64_t) +
           (uint64_t)m->cfg.geo.channels * sizeof(uint64_t);
}

uint64_t h3100_model_memory_bytes(const H3100Model *m)
{
    return model_own_bytes(m) + ftl_memory_bytes(&m->ftl);
}

uint64_t h3100_model_memory_peak_bytes(const H3100Model *m)
{
    return model_own_bytes(m) + ftl_memory_peak_bytes(&m->ftl);
}

char *h3100_model_check(const H3100Model *m)
{
    GString *why = g_string_new(NULL);

    if (ftl_check(&m->ftl, why)) {
        g_string_free(why, TRUE);
        return NULL;
    }
    return g_string_free(why, FALSE);
}

static void health_thermal(H3100Model *m, uint64_t now, H3100Health *h)
{
    const Thermal *th = &m->thermal;

    model_thermal(m, now);
    h->temperature_k = (uint32_t)lround(th->temp_k);
    h->power_mw = (uint32_t)lround(th->power_mw);
    h->throttle_level = th->level;
    h->warn_temp_ns = th->stats.warn_ns;
    h->crit_temp_ns = th->stats.crit_ns;
    h->tmt1_transitions = th->stats.tmt1_transitions;
    h->tmt2_transitions = th->stats.tmt2_transitions;
    h->tmt1_ns = th->stats.tmt1_ns;
    h->tmt2_ns = th->stats.tmt2_ns;
}

void h3100_model_set_thermal_limits(H3100Model *m, uint32_t tmt1_k,
                                    uint32_t tmt2_k)
{
    if (thermal_set_limits(&m->thermal, tmt1_k, tmt2_k)) {
        model_apply_throttle(m);
    }
}

void h3100_model_set_power_cap(H3100Model *m, uint32_t max_mw)
{
    const H3100Config *c = &m->cfg;
    uint32_t span = c->active_mw > c->idle_mw ? c->active_mw - c->idle_mw : 1;
    uint32_t keep = 0;

    if (max_mw && max_mw < c->active_mw) {
        keep = max_mw > c->idle_mw ?
               (uint32_t)((uint64_t)(max_mw - c->idle_mw) * 100 / span) : 0;
        keep = keep < POWER_KEEP_MIN_PCT ? POWER_KEEP_MIN_PCT : keep;
    }
    m->power_keep_pct = keep;
    model_apply_throttle(m);
}

void h3100_model_nand_busy(const H3100Model *m, uint64_t *die_ns,
                           uint64_t *chan_ns)
{
    memcpy(die_ns, m->nand.die_busy_ns, m->nand.dies * sizeof(*die_ns));
    memcpy(chan_ns, m->nand.bus_busy_ns,
           m->cfg.geo.channels * sizeof(*chan_ns));
}

void h3100_model_health(H3100Model *m, uint64_t now, H3100Health *h)
{
    const Ftl *f = &m->ftl;
    uint64_t programmed = (f->stats.host_slots + f->stats.gc_slots) *
                          H3100_SLOT_BYTES;
    double pct;

    memset(h, 0, sizeof(*h));
    h->now_ns = now;
    h->host_read_bytes = m->c.host_read_bytes;
    h->host_write_bytes = m->c.host_write_bytes;
    h->host_read_cmds = m->c.host_read_cmds;
    h->host_write_cmds = m->c.host_write_cmds;
    h->host_trim_cmds = m->c.host_trim_cmds;
    h->nand_write_bytes = programmed;
    h->nand_read_bytes = m->c.nand_read_bytes;
    h->gc_victims = f->stats.gc_victims;
    h->gc_slots_moved = f->stats.gc_slots;
    h->wl_victims = f->stats.wl_victims;
    h->emergency_gc = f->stats.emergency_gc;
    h->block_erases = f->stats.block_erases;
    ftl_erase_counts(f, &h->erase_min, &h->erase_max, &h->erase_avg);
    h->rated_pe = m->cfg.ftl.rated_pe;
    pct = h->erase_avg * 100.0 / m->cfg.ftl.rated_pe;
    h->percentage_used = pct > 255 ? 255 : (uint32_t)pct;
    h->available_spare_pct = bb_available_spare_pct(&f->bb);
    h->spare_threshold_pct = m->cfg.ftl.spare_threshold_pct;
    h->factory_bad_blocks = f->bb.factory_bad;
    h->grown_bad_blocks = f->bb.grown_bad;
    h->total_blocks = (uint64_t)f->bb.planes * f->bb.blocks;
    h->free_superblocks = f->nfree;
    h->superblocks = f->nsb;
    h->mapped_bytes = f->mapped * H3100_SLOT_BYTES;
    h->wbuf_bytes = wbuf_occupancy(&m->wbuf, &m->nand, now);
    h->wbuf_capacity = m->wbuf.cap;
    h->wbuf_stalls = m->wbuf.stats.stalls;
    h->wbuf_stall_ns = m->wbuf.stats.stall_ns;
    h->ra_hits = m->c.ra_hits;
    h->ra_slots_read = m->c.ra_slots_read;
    h->suspends = m->nand.stats.suspends;
    h->unaligned_ios = m->c.unaligned_ios;
    h->buffer_read_hits = m->c.buffer_read_hits;
    h->unmapped_reads = m->c.unmapped_reads;
    h->nand_busy_ns = m->nand.stats.busy_ns;
    for (uint32_t d = 0; d < m->nand.dies; d++) {
        uint64_t end = m->nand.q[d].last_end;

        h->nand_backlog_ns = MAX(h->nand_backlog_ns, end > now ? end - now : 0);
    }
    h->core_busy_ns = m->cores.busy_ns;
    health_thermal(m, now, h);
    h->ecc_retries = m->ecc.retries;
    h->ecc_soft_decodes = m->ecc.soft_decodes;
    h->ecc_host_uncorrectable = m->ecc.host_uncorrectable;
    h->ecc_reclaim_uncorrectable = m->ecc.reclaim_uncorrectable;
    h->read_only = m->read_only;
    h->waf = f->stats.host_slots ? (double)programmed /
             (f->stats.host_slots * H3100_SLOT_BYTES) : 0.0;
}
