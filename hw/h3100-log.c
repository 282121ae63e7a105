/*
 * DapuStor H3100 NVMe SSD: Get Log Page, the error log and health events
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The pages served are include/h3100/log-pages.h: Get Log Page
 * dispatches through h3100_log_pages[], one handler per page (here; the
 * telemetry pages in h3100-telemetry-log.c, the DapuStor ones' fill in
 * h3100-dapustor-log.c).
 */

#include "qemu/osdep.h"
#include "qapi/visitor.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-cmd.h"
#include "h3100-mgmt.h"
#include "h3100-nvm.h"
#include "tables/ocp-log.h"
#include "h3100/vlog.h"
#include "trace.h"

/* ---- error information ---------------------------------------------- */

static bool h3100_is_error(uint16_t status)
{
    switch (status & 0x7ff) {
    case NVME_SUCCESS:
    case NVME_CMD_ABORT_REQ:
    case NVME_CMD_ABORT_SQ_DEL:
        return false;
    default:
        return true;
    }
}

void h3100_error_log_add(H3100State *s, H3100Req *req)
{
    NvmeErrorLog *e;

    if (!h3100_is_error(req->status)) {
        return;
    }
    memmove(&s->errlog[1], &s->errlog[0],
            sizeof(s->errlog) - sizeof(s->errlog[0]));
    e = &s->errlog[0];
    memset(e, 0, sizeof(*e));
    e->error_count = cpu_to_le64(++s->error_count);
    e->sqid = cpu_to_le16(req->sq->sqid);
    e->cid = req->cmd.cid;
    e->status_field = cpu_to_le16(req->status << 1);
    e->param_error_location = cpu_to_le16(0xffff);
    e->nsid = req->cmd.nsid;
    if (req->ns && req->offset >= req->ns->base) {     /* not a Flush */
        e->lba = cpu_to_le64((req->offset - req->ns->base) >> req->ns->lbads);
    }
    trace_h3100_error_log(s->error_count, req->sq->sqid,
                          le16_to_cpu(req->cmd.cid), req->status);
}

/* ---- health ------------------------------------------------------------- */

static uint8_t h3100_critical_warning(H3100State *s, const H3100Health *h)
{
    uint8_t warn = 0;

    if (h->available_spare_pct < h->spare_threshold_pct) {
        warn |= NVME_SMART_SPARE;
    }
    /* at or beyond a threshold (an under threshold of 0 K is none) */
    if (h->temperature_k >= s->feat.temp_over ||
        (s->feat.temp_under && h->temperature_k <= s->feat.temp_under)) {
        warn |= NVME_SMART_TEMPERATURE;
    }
    if (h->percentage_used >= 100 || h->read_only) {
        warn |= NVME_SMART_RELIABILITY;
    }
    if (h->read_only) {
        warn |= NVME_SMART_MEDIA_READ_ONLY;
    }
    return warn | h3100_fault_warning(s);
}

/* Power-on time: it goes on across restarts, as the samples must. */
static uint64_t h3100_power_on_ns(H3100State *s, const H3100Health *h)
{
    return s->power_on_base_ns + h->now_ns;
}

/* Keep a host / NAND bytes sample per second for the recent WAF. */
static void h3100_waf_sample(H3100State *s, const H3100Health *h)
{
    uint64_t now = h3100_power_on_ns(s, h);
    unsigned last;
    H3100WafSample *w;

    if (s->waf_count) {
        last = (s->waf_head + s->waf_count - 1) % H3100_WAF_RING;
        if (now < s->waf_ring[last].ns + H3100_WAF_SAMPLE_NS &&
            now >= s->waf_ring[last].ns) {
            return;
        }
        if (now < s->waf_ring[last].ns) {
            s->waf_count = 0;            /* state-reset: time restarted */
        }
    }
    if (s->waf_count == H3100_WAF_RING) {
        s->waf_head = (s->waf_head + 1) % H3100_WAF_RING;
        s->waf_count--;
    }
    w = &s->waf_ring[(s->waf_head + s->waf_count) % H3100_WAF_RING];
    w->ns = now;
    w->host = h->host_write_bytes;
    w->nand = h->nand_write_bytes;
    s->waf_count++;
}

/* The oldest sample within the recent window (zeroes: none kept yet). */
static H3100WafSample h3100_waf_base(H3100State *s, uint64_t now)
{
    uint64_t window = H3100_WAF_WINDOW_S * NANOSECONDS_PER_SECOND;
    H3100WafSample base = { 0 };

    for (unsigned i = 0; i < s->waf_count; i++) {
        H3100WafSample *w = &s->waf_ring[(s->waf_head + i) % H3100_WAF_RING];

        base = *w;
        if (w->ns <= now && now - w->ns <= window) {
            break;
        }
    }
    return base;
}

/* NAND bytes per host byte, x1000, rounded down; 0 before any write. */
uint64_t h3100_waf_milli(uint64_t nand, uint64_t host)
{
    if (!host) {
        return 0;
    }
    return (uint64_t)((__uint128_t)nand * 1000 / host);
}

/* Raise SMART / health events for warnings that newly appeared. */
void h3100_health_check(H3100State *s)
{
    H3100Health h;
    uint8_t warn, fresh;

    h3100_health(s, &h);
    h3100_waf_sample(s, &h);
    h3100_tlog_check(s, &h);
    h3100_extremes_note(s, &h);
    warn = h3100_critical_warning(s, &h);
    fresh = warn & ~s->smart_warn_sent & NVME_AEC_SMART(s->feat.aec);
    s->smart_warn_sent = (s->smart_warn_sent | fresh) & warn;
    if (fresh & NVME_SMART_SPARE) {
        h3100_aer_enqueue(s, NVME_AER_TYPE_SMART,
                          NVME_AER_INFO_SMART_SPARE_THRESH,
                          H3100_LOG_SMART);
    }
    if (fresh & NVME_SMART_TEMPERATURE) {
        h3100_aer_enqueue(s, NVME_AER_TYPE_SMART,
                          NVME_AER_INFO_SMART_TEMP_THRESH,
                          H3100_LOG_SMART);
    }
    if (fresh & (NVME_SMART_RELIABILITY | NVME_SMART_MEDIA_READ_ONLY)) {
        h3100_aer_enqueue(s, NVME_AER_TYPE_SMART,
                          NVME_AER_INFO_SMART_RELIABILITY,
                          H3100_LOG_SMART);
    }
}

/* a 128-bit little-endian counter */
static void h3100_u128(void *dst, uint64_t v)
{
    stq_le_p(dst, v);
    stq_le_p((uint8_t *)dst + 8, 0);
}

/*
 * NVMe 1.3 thermal fields: warning / critical composite temperature time
 * (minutes), the composite sensor, thermal management transitions and
 * time (seconds) at TMT1 (light) and TMT2 (heavy throttling).
 */
static void h3100_fill_smart_thermal(uint8_t *l, const H3100Health *h)
{
    uint64_t min_ns = 60 * NANOSECONDS_PER_SECOND;

    stl_le_p(l + 192, MIN(h->warn_temp_ns / min_ns, UINT32_MAX));
    stl_le_p(l + 196, MIN(h->crit_temp_ns / min_ns, UINT32_MAX));
    stw_le_p(l + 200, h->temperature_k);        /* sensor 1 */
    stl_le_p(l + 216, h->tmt1_transitions);
    stl_le_p(l + 220, h->tmt2_transitions);
    stl_le_p(l + 224, MIN(h->tmt1_ns / NANOSECONDS_PER_SECOND, UINT32_MAX));
    stl_le_p(l + 228, MIN(h->tmt2_ns / NANOSECONDS_PER_SECOND, UINT32_MAX));
}

static void h3100_fill_smart(H3100State *s, NvmeSmartLog *l)
{
    H3100Health h;

    h3100_health(s, &h);
    l->critical_warning = h3100_critical_warning(s, &h);
    l->temperature = cpu_to_le16(h.temperature_k);
    l->available_spare = MIN(h.available_spare_pct, 100);
    l->available_spare_threshold = MIN(h.spare_threshold_pct, 100);
    l->percentage_used = MIN(h.percentage_used, 255);
    h3100_u128(&l->data_units_read,
               DIV_ROUND_UP(h.host_read_bytes, 512 * 1000));
    h3100_u128(&l->data_units_written,
               DIV_ROUND_UP(h.host_write_bytes, 512 * 1000));
    h3100_u128(&l->host_read_commands, h.host_read_cmds);
    h3100_u128(&l->host_write_commands, h.host_write_cmds);
    h3100_u128(&l->controller_busy_time,
               h.core_busy_ns / MAX(s->cfg.ctrl.cores, 1) /
               (60 * NANOSECONDS_PER_SECOND));
    h3100_u128(&l->power_cycles, s->power_cycles);
    h3100_u128(&l->power_on_hours, (s->power_on_base_ns + h.now_ns) /
               (3600 * NANOSECONDS_PER_SECOND));
    h3100_u128(&l->unsafe_shutdowns, s->unsafe_shutdowns);
    h3100_u128(&l->media_errors, s->media_errors);
    h3100_u128(&l->number_of_error_log_entries, s->error_count);
    h3100_fill_smart_thermal((uint8_t *)l, &h);
}

/* ---- OCP SMART / Health Information Extended (C0h) --------------------- */

/* the log page GUID AFD514C97C6F4F9CA4F2BFEA2810AFC5, little-endian */
static const uint8_t h3100_ocp_smart_guid[16] = {
    0xc5, 0xaf, 0x10, 0x28, 0xea, 0xbf, 0xf2, 0xa4,
    0x9c, 0x4f, 0x6f, 0x7c, 0xc9, 0x14, 0xd5, 0xaf,
};

/*
 * @v little-endian in the @width bytes at @dst, zero above its 64 bits:
 * OCP_PUT(l, field, v) takes the width from hw/tables/ocp-log.h.
 */
static void h3100_le_put(uint8_t *dst, size_t width, uint64_t v)
{
    for (size_t i = 0; i < width; i++) {
        dst[i] = i < 8 ? v >> (8 * i) : 0;
    }
}

#define OCP_PUT(l, field, v) \
    h3100_le_put((l)->field, sizeof((l)->field), (v))

/* Lifetime writes the drive is rated for (WAF 1), in 10^9 bytes. */
static uint64_t h3100_endurance_gb(H3100State *s)
{
    uint64_t dwpd = s->cfg.family == H3100_FAMILY_H3100 ? 3 : 1;

    return DIV_ROUND_UP(dwpd * 365 * 5 * s->nvm_bytes, 1000000000);
}

static void h3100_fill_ocp_smart(H3100State *s, H3100OcpSmartLog *l)
{
    H3100Health h;

    h3100_health(s, &h);
    OCP_PUT(l, media_units_written, h.nand_write_bytes);
    OCP_PUT(l, media_units_read, h.nand_read_bytes);
    OCP_PUT(l, bad_user_blocks_raw,
            h.factory_bad_blocks + h.grown_bad_blocks);
    OCP_PUT(l, bad_user_blocks_norm, MIN(h.available_spare_pct, 100));
    OCP_PUT(l, bad_system_blocks_norm, 100);    /* no system area */
    OCP_PUT(l, uncorrectable_read_errors, s->media_errors);
    OCP_PUT(l, soft_ecc_errors, h.ecc_soft_decodes);
    OCP_PUT(l, system_data_used_pct, MIN(h.percentage_used, 100));
    OCP_PUT(l, max_user_erase_count, h.erase_max);
    OCP_PUT(l, min_user_erase_count, h.erase_min);
    /* entries into throttling (saturating) and the level now */
    OCP_PUT(l, thermal_throttling_events,
            MIN(h.tmt1_transitions + h.tmt2_transitions, 255));
    OCP_PUT(l, thermal_throttling_status, h.throttle_level);
    OCP_PUT(l, major_version, 1);
    OCP_PUT(l, incomplete_shutdowns, s->unsafe_shutdowns);
    OCP_PUT(l, free_blocks_pct, h.superblocks ?
            (uint64_t)h.free_superblocks * 100 / h.superblocks : 0);
    OCP_PUT(l, capacitor_health, 100);
    OCP_PUT(l, unaligned_io, h.unaligned_ios);
    OCP_PUT(l, nuse, h.mapped_bytes >> h3100_ns1_lbads(s));
    OCP_PUT(l, plp_start_count, s->unsafe_shutdowns);
    OCP_PUT(l, endurance_estimate, h3100_endurance_gb(s));
    OCP_PUT(l, log_page_version, H3100_OCP_SMART_VERSION);
    memcpy(l->log_page_guid, h3100_ocp_smart_guid,
           sizeof(l->log_page_guid));
}

/* ---- H3100 vendor log (D0h) --------------------------------------------- */

static void h3100_fill_vendor(H3100State *s, H3100VendorLog *l)
{
    H3100Health h;
    H3100WafSample base;
    uint64_t rhost, rnand, now;

    h3100_health(s, &h);
    now = h3100_power_on_ns(s, &h);
    base = h3100_waf_base(s, now);
    rhost = h.host_write_bytes - MIN(base.host, h.host_write_bytes);
    rnand = h.nand_write_bytes - MIN(base.nand, h.nand_write_bytes);

    l->version = cpu_to_le16(H3100_VLOG_VERSION);
    l->size = cpu_to_le16(H3100_VLOG_BYTES);
    l->recent_window_s = cpu_to_le32(H3100_WAF_WINDOW_S);
    l->host_write_bytes = cpu_to_le64(h.host_write_bytes);
    l->nand_write_bytes = cpu_to_le64(h.nand_write_bytes);
    l->waf_milli = cpu_to_le64(h3100_waf_milli(h.nand_write_bytes,
                                               h.host_write_bytes));
    l->recent_waf_milli = cpu_to_le64(h3100_waf_milli(rnand, rhost));
    l->recent_host_write_bytes = cpu_to_le64(rhost);
    l->recent_nand_write_bytes = cpu_to_le64(rnand);
    l->recent_ms = cpu_to_le64((now - MIN(base.ns, now)) / SCALE_MS);
    l->gc_victims = cpu_to_le64(h.gc_victims);
    l->gc_slots_moved = cpu_to_le64(h.gc_slots_moved);
    l->wl_victims = cpu_to_le64(h.wl_victims);
    l->emergency_gc = cpu_to_le64(h.emergency_gc);
    l->wbuf_bytes = cpu_to_le64(h.wbuf_bytes);
    l->wbuf_capacity = cpu_to_le64(h.wbuf_capacity);
    l->wbuf_stalls = cpu_to_le64(h.wbuf_stalls);
    l->wbuf_stall_ns = cpu_to_le64(h.wbuf_stall_ns);
    l->ra_hits = cpu_to_le64(h.ra_hits);
    l->ra_slots_read = cpu_to_le64(h.ra_slots_read);
    l->free_superblocks = cpu_to_le32(h.free_superblocks);
    l->superblocks = cpu_to_le32(h.superblocks);
    l->suspends = cpu_to_le64(h.suspends);
    l->erase_min = cpu_to_le32(h.erase_min);
    l->erase_avg_milli = cpu_to_le32((uint32_t)(h.erase_avg * 1000));
    l->erase_max = cpu_to_le32(h.erase_max);
    l->rated_pe = cpu_to_le32(h.rated_pe);
    l->percentage_used = cpu_to_le32(h.percentage_used);
    l->available_spare_pct = cpu_to_le32(h.available_spare_pct);
    l->block_erases = cpu_to_le64(h.block_erases);
    l->host_read_bytes = cpu_to_le64(h.host_read_bytes);
    l->nand_read_bytes = cpu_to_le64(h.nand_read_bytes);
    l->factory_bad_blocks = cpu_to_le64(h.factory_bad_blocks);
    l->grown_bad_blocks = cpu_to_le64(h.grown_bad_blocks);
    l->unaligned_ios = cpu_to_le64(h.unaligned_ios);
    l->buffer_read_hits = cpu_to_le64(h.buffer_read_hits);
    l->mapped_bytes = cpu_to_le64(h.mapped_bytes);
    l->now_ns = cpu_to_le64(h.now_ns);
}

/* ---- read-only QOM properties with the live health -------------------- */

typedef enum H3100HealthProp {
    H3100_HP_HOST_WRITTEN,
    H3100_HP_NAND_WRITTEN,
    H3100_HP_HOST_READ,
    H3100_HP_NAND_READ,
    H3100_HP_WAF,
    H3100_HP_GC_VICTIMS,
    H3100_HP_GC_MOVED,
    H3100_HP_FREE_SB,
    H3100_HP_PCT_USED,
    H3100_HP_SPARE,
    H3100_HP_ERASE_MIN,
    H3100_HP_ERASE_MAX,
    H3100_HP_WBUF_STALLS,
    H3100_HP_UNSAFE,
    H3100_HP_TEMP,
    H3100_HP_THROTTLE,
    H3100_HP_POWER,
} H3100HealthProp;

static const char *const h3100_health_prop_names[] = {
    [H3100_HP_HOST_WRITTEN] = "host-bytes-written",
    [H3100_HP_NAND_WRITTEN] = "nand-bytes-written",
    [H3100_HP_HOST_READ] = "host-bytes-read",
    [H3100_HP_NAND_READ] = "nand-bytes-read",
    [H3100_HP_WAF] = "waf-x1000",
    [H3100_HP_GC_VICTIMS] = "reclaim-runs",
    [H3100_HP_GC_MOVED] = "reclaim-pages-moved",
    [H3100_HP_FREE_SB] = "free-superblocks",
    [H3100_HP_PCT_USED] = "percentage-used",
    [H3100_HP_SPARE] = "available-spare",
    [H3100_HP_ERASE_MIN] = "erase-count-min",
    [H3100_HP_ERASE_MAX] = "erase-count-max",
    [H3100_HP_WBUF_STALLS] = "write-buffer-stalls",
    [H3100_HP_UNSAFE] = "unsafe-shutdowns",
    [H3100_HP_TEMP] = "temperature-kelvin",
    [H3100_HP_THROTTLE] = "throttle-level",
    [H3100_HP_POWER] = "power-mw",
};

static void h3100_get_health_prop(Object *obj, Visitor *v, const char *name,
                                  void *opaque, Error **errp)
{
    H3100State *s = DAPUSTOR_H3100(obj);
    H3100Health h = { 0 };
    uint64_t val = 0;

    if (s->model) {
        h3100_health(s, &h);
    }
    switch ((H3100HealthProp)(uintptr_t)opaque) {
    case H3100_HP_HOST_WRITTEN:
        val = h.host_write_bytes;
        break;
    case H3100_HP_NAND_WRITTEN:
        val = h.nand_write_bytes;
        break;
    case H3100_HP_HOST_READ:
        val = h.host_read_bytes;
        break;
    case H3100_HP_NAND_READ:
        val = h.nand_read_bytes;
        break;
    case H3100_HP_WAF:
        val = h3100_waf_milli(h.nand_write_bytes, h.host_write_bytes);
        break;
    case H3100_HP_GC_VICTIMS:
        val = h.gc_victims;
        break;
    case H3100_HP_GC_MOVED:
        val = h.gc_slots_moved;
        break;
    case H3100_HP_FREE_SB:
        val = h.free_superblocks;
        break;
    case H3100_HP_PCT_USED:
        val = h.percentage_used;
        break;
    case H3100_HP_SPARE:
        val = h.available_spare_pct;
        break;
    case H3100_HP_ERASE_MIN:
        val = h.erase_min;
        break;
    case H3100_HP_ERASE_MAX:
        val = h.erase_max;
        break;
    case H3100_HP_WBUF_STALLS:
        val = h.wbuf_stalls;
        break;
    case H3100_HP_TEMP:
        val = h.temperature_k;
        break;
    case H3100_HP_THROTTLE:
        val = h.throttle_level;
        break;
    case H3100_HP_POWER:
        val = h.power_mw;
        break;
    case H3100_HP_UNSAFE:
        val = s->unsafe_shutdowns;
        break;
    }
    visit_type_uint64(v, name, &val, errp);
}

void h3100_health_props_init(ObjectClass *oc)
{
    for (uintptr_t i = 0; i < ARRAY_SIZE(h3100_health_prop_names); i++) {
        object_class_property_add(oc, h3100_health_prop_names[i], "uint64",
                                  h3100_get_health_prop, NULL, NULL,
                                  (void *)i);
    }
}

/* ---- other pages -------------------------------------------------------- */

static void h3100_fill_fw_slot(H3100State *s, NvmeFwSlotInfoLog *l)
{
    uint8_t *frs[H3100_FW_SLOTS] = { l->frs1, l->frs2, l->frs3 };

    l->afi = s->fw.active | (s->fw.next << 4);
    for (unsigned i = 0; i < H3100_FW_SLOTS; i++) {
        memcpy(frs[i], s->fw.slot[i + 1], 8);
    }
}

static void h3100_fill_effects(NvmeEffectsLog *l)
{
    for (unsigned op = 0; op < 256; op++) {
        l->acs[op] = cpu_to_le32(h3100_admin_cmds[op].effects);
        l->iocs[op] = cpu_to_le32(h3100_io_cmds[op].effects);
    }
}

/* Copy @len bytes of a @size-byte page from offset @off; zero past it. */
uint16_t h3100_log_xfer(H3100State *s, H3100Req *req, const void *page,
                        uint64_t size, uint64_t off, uint64_t len)
{
    g_autofree uint8_t *buf = NULL;

    if (off >= size) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    buf = g_malloc0(len);
    memcpy(buf, (const uint8_t *)page + off, MIN(len, size - off));
    return h3100_dma_to_host(s, req, buf, len);
}

/* what a page's handler is asked for */
typedef struct H3100LogArgs {
    uint8_t lid;
    uint8_t lsp;
    bool rae;
    uint64_t off;
    uint64_t len;
} H3100LogArgs;

typedef uint16_t H3100LogFn(H3100State *s, H3100Req *req,
                            const H3100LogArgs *a);

static uint16_t h3100_log_error(H3100State *s, H3100Req *req,
                                const H3100LogArgs *a)
{
    return h3100_log_xfer(s, req, s->errlog, sizeof(s->errlog), a->off,
                          a->len);
}

/* a page whose fill function writes a struct of its layout */
#define H3100_LOG_FILLED(handler, type, fill) \
    static uint16_t h3100_log_##handler(H3100State *s, H3100Req *req, \
                                        const H3100LogArgs *a) \
    { \
        type page = { 0 }; \
        \
        fill(s, &page); \
        return h3100_log_xfer(s, req, &page, sizeof(page), a->off, a->len); \
    }

H3100_LOG_FILLED(smart, NvmeSmartLog, h3100_fill_smart)
H3100_LOG_FILLED(fw_slot, NvmeFwSlotInfoLog, h3100_fill_fw_slot)
H3100_LOG_FILLED(dapu_smart, H3100DapuSmartLog, h3100_fill_dapu_smart)
H3100_LOG_FILLED(dapu_ext, H3100DapuExtLog, h3100_fill_dapu_ext)
H3100_LOG_FILLED(vendor, H3100VendorLog, h3100_fill_vendor)

static uint16_t h3100_log_changed_ns(H3100State *s, H3100Req *req,
                                     const H3100LogArgs *a)
{
    return h3100_ns_changed_log(s, req, a->off, a->len, a->rae);
}

static uint16_t h3100_log_effects(H3100State *s, H3100Req *req,
                                  const H3100LogArgs *a)
{
    g_autofree NvmeEffectsLog *eff = g_new0(NvmeEffectsLog, 1);

    h3100_fill_effects(eff);
    return h3100_log_xfer(s, req, eff, sizeof(*eff), a->off, a->len);
}

static uint16_t h3100_log_self_test(H3100State *s, H3100Req *req,
                                    const H3100LogArgs *a)
{
    return h3100_self_test_log(s, req, a->off, a->len);
}

static uint16_t h3100_log_telemetry(H3100State *s, H3100Req *req,
                                    const H3100LogArgs *a)
{
    return h3100_tlog_get(s, req, a->lid, a->lsp, a->off, a->len);
}

static uint16_t h3100_log_lba_status(H3100State *s, H3100Req *req,
                                     const H3100LogArgs *a)
{
    return h3100_lsi_log(s, req, a->off, a->len, a->rae);
}

static uint16_t h3100_log_sanitize(H3100State *s, H3100Req *req,
                                   const H3100LogArgs *a)
{
    return h3100_sanitize_log(s, req, a->off, a->len);
}

static uint16_t h3100_log_ocp_smart(H3100State *s, H3100Req *req,
                                    const H3100LogArgs *a)
{
    H3100OcpSmartLog page = {};

    h3100_fill_ocp_smart(s, &page);
    return h3100_log_xfer(s, req, &page, sizeof(page), a->off, a->len);
}

/* The pages served: include/h3100/log-pages.h, one handler each. */
#define H3100_LOG_ENTRY(lid, id, handler, page_name) \
    [lid] = { .fn = h3100_log_##handler, .name = page_name },

static const struct {
    H3100LogFn *fn;
    const char *name;
} h3100_log_pages[256] = {
    H3100_LOG_PAGES(H3100_LOG_ENTRY)
};

uint16_t h3100_get_log(H3100State *s, H3100Req *req)
{
    uint32_t dw10 = le32_to_cpu(req->cmd.cdw10);
    uint32_t dw11 = le32_to_cpu(req->cmd.cdw11);
    uint64_t off = le32_to_cpu(req->cmd.cdw12) |
                   ((uint64_t)le32_to_cpu(req->cmd.cdw13) << 32);
    uint32_t numd = (dw10 >> 16) | ((dw11 & 0xffff) << 16);
    uint64_t len = ((uint64_t)numd + 1) * 4;
    uint32_t nsid = le32_to_cpu(req->cmd.nsid);
    uint8_t lid = dw10 & 0xff;
    bool rae = dw10 & (1 << 15);
    H3100LogArgs args;
    uint16_t status;

    trace_h3100_admin_get_log(lid, h3100_log_pages[lid].name ?: "unsupported",
                              off, len, rae);
    if (off & 3) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (len > h3100_mdts_bytes(s)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (nsid && nsid != NVME_NSID_BROADCAST && !h3100_ns_active(s, nsid)) {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    if (!h3100_log_pages[lid].fn) {
        return NVME_INVALID_LOG_ID | NVME_DNR;
    }
    args = (H3100LogArgs) {
        .lid = lid, .lsp = (dw10 >> 8) & 0xf, .rae = rae, .off = off,
        .len = len,
    };
    status = h3100_log_pages[lid].fn(s, req, &args);
    if (!status && !rae) {
        h3100_aer_log_read(s, lid);
    }
    return status;
}
