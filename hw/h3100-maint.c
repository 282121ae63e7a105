/*
 * DapuStor H3100 NVMe SSD: Format NVM, Sanitize, Device Self-test and
 * Doorbell Buffer Config
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Format NVM: LBA format 0 (512 B) or 1 (4096 B), no metadata or PI; the
 * model forgets the mapping and the backend is zeroed.  Sanitize: block
 * erase only; the command completes at once, the operation runs for as
 * long as the model's erase takes, then the backend is zeroed and the
 * Sanitize Operation Completed event fires.  Self-test: short (30 s) and
 * extended (EDSTT minutes) in virtual time, abortable; the extended test
 * of the namespace fails on LBAs made uncorrectable.
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
#include "trace.h"

#define H3100_SANACT_EXIT_FAILURE   1
#define H3100_SANACT_BLOCK_ERASE    2
#define H3100_SSTAT_NEVER           0
#define H3100_SSTAT_DONE            1
#define H3100_SSTAT_IN_PROGRESS     2
#define H3100_SSTAT_FAILED          3
#define H3100_SSTAT_GLOBAL_ERASED   (1 << 8)
#define H3100_AER_INFO_SANITIZE_DONE 1

#define H3100_DST_ABORT             0xf
#define H3100_DST_RES_OK            0
#define H3100_DST_RES_ABORTED       1
#define H3100_DST_RES_FORMAT        4
#define H3100_DST_RES_FAILED_SEG    7
#define H3100_DST_RES_UNUSED        0xf

/* the Device Self-test log's size in the NVMe base specification */
QEMU_BUILD_BUG_ON(H3100_DST_LOG_BYTES != 564);

/* ---- format ---------------------------------------------------------- */

/*
 * The whole drive is erased: every namespace takes the new LBA format.
 * Not before: a Format a reset cut short leaves the old one, since the
 * new one could round a namespace down and leave the end of its extent,
 * not erased, to the next namespace created there.
 */
void h3100_format_cb(void *opaque, int ret)
{
    H3100Req *req = opaque;
    H3100State *s = req->s;
    uint8_t lbaf = le32_to_cpu(req->cmd.cdw10) & 0xf;

    req->aiocb = NULL;
    s->format_busy = false;
    if (ret < 0) {
        req->status = h3100_blk_status(req, ret, NVME_INTERNAL_DEV_ERROR);
    } else {
        for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
            H3100Namespace *ns = h3100_ns_allocated(s, i);

            if (ns) {
                h3100_ns_set_lbads(ns, lbaf ? 12 : 9);
            }
        }
    }
    h3100_write_landed(req);
}

static void h3100_format_start(H3100State *s, H3100Req *req)
{
    qemu_mutex_lock(&s->model_lock);
    h3100_model_format(s->model);
    qemu_mutex_unlock(&s->model_lock);
    h3100_vcache_settle(s);
    g_array_set_size(s->uncor, 0);
    req->aiocb = NULL;
    h3100_unmap(s, req, 0, s->nvm_bytes, 0, h3100_format_cb, req);
}

/* The namespaces in @todo can take LBA format @lbaf now? */
static uint16_t h3100_format_check(H3100State *s, uint64_t todo,
                                   uint8_t lbaf)
{
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (!(todo & (1ull << i))) {
            continue;
        }
        if (h3100_ns_busy(&s->ns[i])) {
            return NVME_FORMAT_IN_PROGRESS;
        }
        if (!(s->ns[i].bytes >> (lbaf ? 12 : 9))) {
            return NVME_INVALID_FORMAT | NVME_DNR;   /* not one LBA */
        }
    }
    return s->format_busy ? NVME_FORMAT_IN_PROGRESS : NVME_SUCCESS;
}

/*
 * FNA 0: Format applies to the namespace named, or with FFFFFFFFh to
 * every attached one.  When that is every namespace there is, the whole
 * NVM space is erased at once; otherwise each namespace's extent is
 * (h3100-ns.c), and the others' I/O goes on.
 */
uint16_t h3100_format(H3100State *s, H3100Req *req)
{
    uint32_t dw10 = le32_to_cpu(req->cmd.cdw10);
    uint32_t nsid = le32_to_cpu(req->cmd.nsid);
    uint8_t lbaf = dw10 & 0xf, mset = (dw10 >> 4) & 1;
    uint8_t pi = (dw10 >> 5) & 7, ses = (dw10 >> 9) & 7;
    uint64_t todo;
    uint16_t status;

    trace_h3100_admin_format(nsid, lbaf, ses);
    if (nsid == NVME_NSID_BROADCAST) {
        todo = h3100_ns_mask(s, true);
    } else if (h3100_ns_active(s, nsid)) {
        todo = 1ull << nsid;
    } else {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    if (lbaf > 1 || mset || pi) {
        return NVME_INVALID_FORMAT | NVME_DNR;
    }
    if (ses > 1) {
        return NVME_INVALID_FIELD | NVME_DNR;  /* no cryptographic erase */
    }
    status = h3100_format_check(s, todo, lbaf);
    if (status) {
        return status;
    }
    h3100_dst_abort(s, H3100_DST_RES_FORMAT);
    if (!todo) {
        return NVME_SUCCESS;          /* FFFFFFFFh, nothing attached */
    }
    if (todo != h3100_ns_mask(s, false) || h3100_ns_any_busy(s)) {
        h3100_ns_format(s, todo, req, lbaf ? 12 : 9);
        return NVME_NO_COMPLETE;
    }
    s->format_busy = true;            /* new I/O is refused from now on */
    if (s->io_inflight) {
        s->format_wait = req;         /* writes already sent land first */
        return NVME_NO_COMPLETE;
    }
    h3100_format_start(s, req);
    return NVME_NO_COMPLETE;
}

/*
 * The last I/O command with block I/O out is back: a Format or a
 * Sanitize that waited for it erases now.
 */
void h3100_maint_io_drained(H3100State *s)
{
    H3100Req *req = s->format_wait;

    if (s->stopping) {
        return;                       /* a reset: see h3100_reset_fn */
    }
    if (req) {
        s->format_wait = NULL;
        h3100_format_start(s, req);
        h3100_inflight_add(s, req);
    }
    if (s->san.wait_io) {
        h3100_sanitize_timer_cb(s);
    }
}

/* ---- sanitize --------------------------------------------------------- */

void h3100_sanitize_done_cb(void *opaque, int ret)
{
    H3100State *s = opaque;

    s->san.zeroing = false;
    s->san.active = false;
    s->san.sprog = 0xffff;
    if (ret < 0) {
        s->san.sstat = H3100_SSTAT_FAILED;
    } else {
        s->san.sstat = H3100_SSTAT_DONE | H3100_SSTAT_GLOBAL_ERASED;
    }
    trace_h3100_sanitize_done(ret);
    if (NVME_CSTS_RDY(ldl_le_p(&s->bar.csts))) {
        h3100_aer_enqueue(s, NVME_AER_TYPE_IO_SPECIFIC,
                          H3100_AER_INFO_SANITIZE_DONE, H3100_LOG_SANITIZE);
    }
}

/* The model's erase is over: zero the backend, once no write is out. */
void h3100_sanitize_timer_cb(void *opaque)
{
    H3100State *s = opaque;

    if (!s->san.active || s->san.zeroing) {
        return;
    }
    if (s->io_inflight) {
        s->san.wait_io = true;
        return;
    }
    s->san.wait_io = false;
    s->san.zeroing = true;
    h3100_vcache_settle(s);
    h3100_unmap(s, NULL, 0, s->nvm_bytes, h3100_durable_flags(s),
                h3100_sanitize_done_cb, s);
}

uint16_t h3100_sanitize(H3100State *s, H3100Req *req)
{
    uint32_t dw10 = le32_to_cpu(req->cmd.cdw10);
    uint8_t sanact = dw10 & 7;
    uint64_t now, end;

    trace_h3100_admin_sanitize(sanact);
    if (s->san.active) {
        return H3100_SC_SANITIZE_IN_PROGRESS | NVME_DNR;
    }
    if (sanact == H3100_SANACT_EXIT_FAILURE) {
        if ((s->san.sstat & 7) == H3100_SSTAT_FAILED) {
            s->san.sstat = H3100_SSTAT_NEVER;
        }
        return NVME_SUCCESS;
    }
    if (sanact != H3100_SANACT_BLOCK_ERASE) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    h3100_dst_abort(s, H3100_DST_RES_ABORTED);
    now = h3100_now(s);
    qemu_mutex_lock(&s->model_lock);
    end = h3100_model_sanitize(s->model, now);
    qemu_mutex_unlock(&s->model_lock);
    g_array_set_size(s->uncor, 0);
    s->san.active = true;
    s->san.zeroing = false;
    s->san.sstat = H3100_SSTAT_IN_PROGRESS;
    s->san.sprog = 0;
    s->san.scdw10 = dw10;
    s->san.start_ns = now;
    s->san.end_ns = s->timing ? MAX(end, now) : now;
    s->san.etbe = (s->san.end_ns - now) / NANOSECONDS_PER_SECOND + 1;
    h3100_timer_mod(s->san.timer, h3100_virt_ns(s, s->san.end_ns));
    return NVME_SUCCESS;
}

uint16_t h3100_sanitize_log(H3100State *s, H3100Req *req, uint64_t off,
                            uint64_t len)
{
    uint8_t log[512] = { 0 };
    g_autofree uint8_t *buf = NULL;
    H3100Sanitize *san = &s->san;
    uint16_t sprog = san->sprog;
    int64_t now = h3100_now(s);

    if (san->active && san->end_ns > san->start_ns) {
        sprog = MIN(65535, (now - san->start_ns) * 65536 /
                    (san->end_ns - san->start_ns));
    } else if (!san->active && (san->sstat & 7) != H3100_SSTAT_NEVER) {
        sprog = 0xffff;
    }
    stw_le_p(log + 0, sprog);
    stw_le_p(log + 2, san->sstat);
    stl_le_p(log + 4, san->scdw10);
    stl_le_p(log + 8, 0xffffffff);                 /* no overwrite */
    stl_le_p(log + 12, san->etbe ? san->etbe : 0xffffffff);
    stl_le_p(log + 16, 0xffffffff);                /* no crypto erase */
    if (off >= sizeof(log)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    buf = g_malloc0(len);
    memcpy(buf, log + off, MIN(len, sizeof(log) - off));
    return h3100_dma_to_host(s, req, buf, len);
}

/* ---- device self-test ---------------------------------------------------- */

/*
 * The first uncorrectable byte of what the self-test reads (its
 * namespace, or every one), UINT64_MAX if none.
 */
static uint64_t h3100_dst_failed_at(H3100State *s)
{
    H3100Namespace *ns = h3100_ns_allocated(s, s->dst.nsid);
    uint64_t lo = 0, hi = s->nvm_bytes;

    if (s->dst.nsid != NVME_NSID_BROADCAST) {
        if (!ns) {
            return UINT64_MAX;
        }
        lo = ns->base;
        hi = ns->base + ns->bytes;
    }
    for (guint i = 0; i < s->uncor->len; i++) {
        H3100Range *r = &g_array_index(s->uncor, H3100Range, i);

        if (r->end > lo && r->start < hi) {
            return MAX(r->start, lo);
        }
    }
    return UINT64_MAX;
}

static void h3100_dst_record(H3100State *s, uint8_t result)
{
    H3100SelfTest *d = &s->dst;
    uint8_t *e;
    H3100Health h;

    memmove(d->results[1], d->results[0],
            sizeof(d->results) - sizeof(d->results[0]));
    e = d->results[0];
    memset(e, 0, H3100_DST_ENTRY_BYTES);
    e[0] = (d->current << 4) | result;
    h3100_health(s, &h);
    stq_le_p(e + 4, h.now_ns / (3600 * NANOSECONDS_PER_SECOND));
    if (d->nsid) {
        e[2] |= 1;
        stl_le_p(e + 12, d->nsid);
    }
    if (result == H3100_DST_RES_FAILED_SEG) {
        uint64_t lba;
        uint32_t nsid = h3100_ns_lba(s, h3100_dst_failed_at(s), &lba);

        e[1] = 2;                                  /* media segment */
        e[2] |= 1 | 2 | 4 | 8;
        stl_le_p(e + 12, nsid);
        stq_le_p(e + 16, lba);
        e[24] = 2;                                 /* media errors */
        e[25] = NVME_UNRECOVERED_READ & 0xff;
    }
    if (d->nresults < H3100_DST_RESULTS) {
        d->nresults++;
    }
    trace_h3100_dst_done(d->current, result);
    d->current = 0;
    h3100_timer_del(d->timer);
}

void h3100_dst_timer_cb(void *opaque)
{
    H3100State *s = opaque;
    H3100SelfTest *d = &s->dst;
    uint8_t result = H3100_DST_RES_OK;

    if (!d->current) {
        return;
    }
    if (d->current == H3100_DST_EXTENDED && d->nsid &&
        h3100_dst_failed_at(s) != UINT64_MAX) {
        result = H3100_DST_RES_FAILED_SEG;
    }
    h3100_dst_record(s, result);
}

void h3100_dst_abort(H3100State *s, uint8_t result)
{
    if (s->dst.current) {
        h3100_dst_record(s, result);
    }
}

uint16_t h3100_self_test(H3100State *s, H3100Req *req)
{
    uint32_t stc = le32_to_cpu(req->cmd.cdw10) & 0xf;
    uint32_t nsid = le32_to_cpu(req->cmd.nsid);
    H3100SelfTest *d = &s->dst;
    uint64_t now;

    trace_h3100_admin_self_test(stc, nsid);
    if (nsid && nsid != NVME_NSID_BROADCAST && !h3100_ns_active(s, nsid)) {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    switch (stc) {
    case H3100_DST_SHORT:
    case H3100_DST_EXTENDED:
        if (d->current) {
            return H3100_SC_DST_IN_PROGRESS;
        }
        now = h3100_now(s);
        d->current = stc;
        d->nsid = nsid;
        d->start_ns = now;
        d->end_ns = now + (stc == H3100_DST_SHORT ? H3100_SHORT_DST_NS :
                           H3100_EDSTT_MIN * 60 * NANOSECONDS_PER_SECOND);
        h3100_timer_mod(d->timer, h3100_virt_ns(s, d->end_ns));
        return NVME_SUCCESS;
    case H3100_DST_ABORT:
        h3100_dst_abort(s, H3100_DST_RES_ABORTED);
        return NVME_SUCCESS;
    default:
        return NVME_INVALID_FIELD | NVME_DNR;
    }
}

uint16_t h3100_self_test_log(H3100State *s, H3100Req *req, uint64_t off,
                             uint64_t len)
{
    uint8_t log[H3100_DST_LOG_BYTES] = { 0 };
    g_autofree uint8_t *buf = NULL;
    H3100SelfTest *d = &s->dst;
    int64_t now = h3100_now(s);

    log[0] = d->current;
    if (d->current && d->end_ns > d->start_ns) {
        log[1] = MIN(99, (now - d->start_ns) * 100 /
                     (d->end_ns - d->start_ns));
    }
    for (unsigned i = 0; i < H3100_DST_RESULTS; i++) {
        uint8_t *e = log + H3100_DST_LOG_HDR + i * H3100_DST_ENTRY_BYTES;

        if (i < d->nresults) {
            memcpy(e, d->results[i], H3100_DST_ENTRY_BYTES);
        } else {
            e[0] = H3100_DST_RES_UNUSED;
        }
    }
    if (off >= sizeof(log)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    buf = g_malloc0(len);
    memcpy(buf, log + off, MIN(len, sizeof(log) - off));
    return h3100_dma_to_host(s, req, buf, len);
}

/* ---- doorbell buffer config ------------------------------------------- */

uint16_t h3100_dbbuf_config(H3100State *s, H3100Req *req)
{
    uint64_t dbs = le64_to_cpu(req->cmd.dptr.prp1);
    uint64_t eis = le64_to_cpu(req->cmd.dptr.prp2);

    trace_h3100_admin_dbbuf(dbs, eis);
    if (!dbs || !eis || (dbs & (s->page_size - 1)) ||
        (eis & (s->page_size - 1))) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    /* the device reads and writes both pages from now on */
    if (!h3100_guest_ram(s, dbs, s->page_size, true) ||
        !h3100_guest_ram(s, eis, s->page_size, true)) {
        H3100_GUEST_ERR(h3100_err_dbbuf_ram, "doorbell buffers 0x%" PRIx64
                        "/0x%" PRIx64 " are not writable guest RAM", dbs, eis);
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    s->dbbuf_dbs = dbs;
    s->dbbuf_eis = eis;
    s->dbbuf_enabled = true;
    for (unsigned i = 1; i <= s->max_ioqpairs; i++) {
        H3100SQueue *sq = s->sq[i];
        H3100CQueue *cq = s->cq[i];

        h3100_dbbuf_setup_queue(s, sq, cq);
        if (sq) {
            h3100_dma_st32(s, sq->db_addr, sq->tail);
            h3100_dma_st32(s, sq->ei_addr, sq->tail);
        }
        if (cq) {
            h3100_dma_st32(s, cq->db_addr, cq->head);
            h3100_dma_st32(s, cq->ei_addr, cq->head);
        }
    }
    return NVME_SUCCESS;
}
