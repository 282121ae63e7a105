/*
 * DapuStor H3100 NVMe SSD: Telemetry log pages 07h and 08h
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The layout is include/h3100/telemetry-log.h.  A snapshot is taken when
 * the host asks (Get Log Page 07h with LSP bit 0, Create) or, for 08h,
 * when the drive enters heavy thermal throttling or goes read-only; it
 * stays as it was until the next one, so a host reading it in pieces
 * (LPO) reads one consistent snapshot.  The history of data area 3 is
 * kept as it happens: reclaim victims from the model's reclaim observer,
 * throttle changes from the periodic health check.
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-mgmt.h"
#include "trace.h"

#define H3100_AEC_TELEMETRY         (1u << 10)
#define H3100_AER_INFO_TELEMETRY    0x02        /* Telemetry Log Changed */

void h3100_tlog_note_reclaim(H3100State *s, uint64_t now, uint32_t sb,
                             uint64_t valid, bool wear)
{
    H3100TelLog *t = &s->tlog;
    H3100TelReclaim *r = &t->reclaim[t->reclaims % H3100_TEL_RECLAIMS];

    r->now_ns = cpu_to_le64(now);
    r->superblock = cpu_to_le32(sb);
    r->valid_slots = cpu_to_le32(valid);
    r->wear_levelling = cpu_to_le32(wear);
    r->rsvd = 0;
    t->reclaims++;
}

static void h3100_tlog_note_thermal(H3100TelLog *t, const H3100Health *h)
{
    H3100TelThermal *e = &t->thermal[t->thermal_changes % H3100_TEL_THERMAL];

    e->now_ns = cpu_to_le64(h->now_ns);
    e->temperature_k = cpu_to_le32(h->temperature_k);
    e->from_level = t->level;
    e->to_level = h->throttle_level;
    e->rsvd = 0;
    t->thermal_changes++;
    t->level = h->throttle_level;
}

/* The newest @keep of @total entries of a ring, oldest first. */
static uint32_t h3100_tlog_ring_copy(void *dst, const void *ring,
                                     size_t size, uint64_t total,
                                     uint32_t keep)
{
    uint32_t n = MIN(total, keep);

    for (uint32_t i = 0; i < n; i++) {
        memcpy((uint8_t *)dst + i * size,
               (const uint8_t *)ring + ((total - n + i) % keep) * size, size);
    }
    return n;
}

static void h3100_tlog_fill_snapshot(H3100State *s, H3100TelSnapshot *p,
                                     const H3100Health *h, uint16_t reason)
{
    memcpy(p->magic, H3100_TEL_MAGIC, sizeof(p->magic));
    p->version = cpu_to_le16(H3100_TEL_VERSION);
    p->reason = cpu_to_le16(reason);
    p->dies = cpu_to_le32(h3100_dies(&s->cfg));
    p->channels = cpu_to_le32(s->cfg.geo.channels);
    p->now_ns = cpu_to_le64(h->now_ns);
    p->temperature_k = cpu_to_le32(h->temperature_k);
    p->power_mw = cpu_to_le32(h->power_mw);
    p->throttle_level = cpu_to_le32(h->throttle_level);
    p->free_superblocks = cpu_to_le32(h->free_superblocks);
    p->superblocks = cpu_to_le32(h->superblocks);
    p->read_only = cpu_to_le32(h->read_only);
    p->wbuf_bytes = cpu_to_le64(h->wbuf_bytes);
    p->wbuf_capacity = cpu_to_le64(h->wbuf_capacity);
    p->wbuf_stalls = cpu_to_le64(h->wbuf_stalls);
    p->wbuf_stall_ns = cpu_to_le64(h->wbuf_stall_ns);
    p->host_write_bytes = cpu_to_le64(h->host_write_bytes);
    p->nand_write_bytes = cpu_to_le64(h->nand_write_bytes);
    p->host_read_bytes = cpu_to_le64(h->host_read_bytes);
    p->gc_victims = cpu_to_le64(h->gc_victims);
    p->gc_slots_moved = cpu_to_le64(h->gc_slots_moved);
    p->wl_victims = cpu_to_le64(h->wl_victims);
    p->emergency_gc = cpu_to_le64(h->emergency_gc);
    p->block_erases = cpu_to_le64(h->block_erases);
    p->nand_busy_ns = cpu_to_le64(h->nand_busy_ns);
    p->nand_backlog_ns = cpu_to_le64(h->nand_backlog_ns);
    p->core_busy_ns = cpu_to_le64(h->core_busy_ns);
    p->tmt1_ns = cpu_to_le64(h->tmt1_ns);
    p->tmt2_ns = cpu_to_le64(h->tmt2_ns);
}

static void h3100_tlog_fill_history(H3100TelLog *t, H3100TelHistory *hist)
{
    hist->reclaims = cpu_to_le64(t->reclaims);
    hist->thermal_changes = cpu_to_le64(t->thermal_changes);
    hist->reclaim_n = cpu_to_le32(
        h3100_tlog_ring_copy(hist->reclaim, t->reclaim, sizeof(t->reclaim[0]),
                             t->reclaims, H3100_TEL_RECLAIMS));
    hist->thermal_n = cpu_to_le32(
        h3100_tlog_ring_copy(hist->thermal, t->thermal, sizeof(t->thermal[0]),
                             t->thermal_changes, H3100_TEL_THERMAL));
}

/* Data area 2: each die's array time, then each channel bus's. */
static void h3100_tlog_fill_busy(H3100State *s, uint8_t *da2)
{
    uint32_t dies = h3100_dies(&s->cfg), ch = s->cfg.geo.channels;
    g_autofree uint64_t *ns = g_new0(uint64_t, dies + ch);

    h3100_model_nand_busy(s->model, ns, ns + dies);
    for (uint32_t i = 0; i < dies + ch; i++) {
        stq_le_p(da2 + 8 * i, ns[i]);
    }
}

/* A whole log page: header, snapshot, per-die / channel time, history. */
static H3100TelPage h3100_tlog_capture(H3100State *s, uint8_t lid,
                                       uint16_t reason, const char *why)
{
    uint32_t dies = h3100_dies(&s->cfg), ch = s->cfg.geo.channels;
    size_t da2 = h3100_tel_da2_bytes(dies, ch);
    H3100TelPage p = {
        .len = 2 * H3100_TEL_BLOCK + da2 + sizeof(H3100TelHistory),
    };
    H3100TelHeader *hdr;
    H3100Health h;

    p.buf = g_malloc0(p.len);
    hdr = (H3100TelHeader *)p.buf;
    hdr->lid = lid;
    st24_le_p(hdr->ieee, H3100_IEEE_OUI);
    hdr->dalb1 = cpu_to_le16(1);
    hdr->dalb2 = cpu_to_le16(1 + da2 / H3100_TEL_BLOCK);
    hdr->dalb3 = cpu_to_le16(p.len / H3100_TEL_BLOCK - 1);
    pstrcpy(hdr->reason, sizeof(hdr->reason), why);

    qemu_mutex_lock(&s->model_lock);
    h3100_model_health(s->model, h3100_now_locked(s), &h);
    h3100_tlog_fill_snapshot(s, (H3100TelSnapshot *)(p.buf + H3100_TEL_BLOCK),
                             &h, reason);
    h3100_tlog_fill_busy(s, p.buf + 2 * H3100_TEL_BLOCK);
    h3100_tlog_fill_history(&s->tlog, (H3100TelHistory *)
                            (p.buf + 2 * H3100_TEL_BLOCK + da2));
    qemu_mutex_unlock(&s->model_lock);
    return p;
}

static void h3100_tlog_replace(H3100TelPage *old, H3100TelPage new)
{
    g_free(old->buf);
    *old = new;
}

/* Controller-initiated data: taken when the drive gets into trouble. */
static void h3100_tlog_ctrl_event(H3100State *s, uint16_t reason,
                                  const char *why)
{
    H3100TelLog *t = &s->tlog;

    h3100_tlog_replace(&t->ctrl, h3100_tlog_capture(
                           s, H3100_LOG_TELEMETRY_CTRL, reason, why));
    t->ctrl_gen++;
    trace_h3100_tlog_ctrl(reason, t->ctrl_gen);
    if (s->feat.aec & H3100_AEC_TELEMETRY) {
        h3100_aer_enqueue(s, NVME_AER_TYPE_NOTICE, H3100_AER_INFO_TELEMETRY,
                          H3100_LOG_TELEMETRY_CTRL);
    }
}

/* The controller failed (CSTS.CFS): what the drive saw, in 08h. */
void h3100_tlog_fatal(H3100State *s)
{
    h3100_tlog_ctrl_event(s, H3100_TEL_REASON_FATAL,
                          "controller fatal status");
}

/* From the health check: throttle changes, and what starts 08h. */
void h3100_tlog_check(H3100State *s, const H3100Health *h)
{
    H3100TelLog *t = &s->tlog;
    bool heavy = h->throttle_level >= 2 && t->level < 2;
    bool read_only = h->read_only && !t->read_only;

    if (h->throttle_level != t->level) {
        qemu_mutex_lock(&s->model_lock);
        h3100_tlog_note_thermal(t, h);
        qemu_mutex_unlock(&s->model_lock);
    }
    t->read_only = h->read_only;
    if (heavy) {
        h3100_tlog_ctrl_event(s, H3100_TEL_REASON_THROTTLE,
                              "heavy thermal throttling");
    }
    if (read_only) {
        h3100_tlog_ctrl_event(s, H3100_TEL_REASON_READ_ONLY,
                              "read-only: out of spare blocks");
    }
}

/* Get Log Page 07h / 08h; LSP bit 0 on 07h takes a new snapshot first. */
uint16_t h3100_tlog_get(H3100State *s, H3100Req *req, uint8_t lid,
                        uint8_t lsp, uint64_t off, uint64_t len)
{
    H3100TelLog *t = &s->tlog;
    H3100TelPage *p = lid == H3100_LOG_TELEMETRY_HOST ? &t->host : &t->ctrl;
    H3100TelHeader empty = { .lid = lid };
    H3100TelHeader *hdr;

    if (lid == H3100_LOG_TELEMETRY_HOST && ((lsp & 1) || !p->buf)) {
        h3100_tlog_replace(p, h3100_tlog_capture(
                               s, lid, H3100_TEL_REASON_HOST,
                               "host-initiated"));
        t->host_gen += lsp & 1;
    }
    hdr = p->buf ? (H3100TelHeader *)p->buf : &empty;
    hdr->host_gen = t->host_gen;
    hdr->ctrl_avail = t->ctrl.buf != NULL;
    hdr->ctrl_gen = t->ctrl_gen;
    if (!p->buf) {
        return h3100_log_xfer(s, req, &empty, sizeof(empty), off, len);
    }
    return h3100_log_xfer(s, req, p->buf, p->len, off, len);
}

void h3100_tlog_free(H3100State *s)
{
    g_free(s->tlog.host.buf);
    g_free(s->tlog.ctrl.buf);
    memset(&s->tlog, 0, sizeof(s->tlog));
}
