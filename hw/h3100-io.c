/*
 * DapuStor H3100 NVMe SSD: NVM command set I/O commands
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Read, Write (FUA), Flush, Write Zeroes, Dataset Management (deallocate),
 * Compare and Write Uncorrectable.  The model times every command; the
 * data moves through the block layer asynchronously.  Zeroed and
 * deallocated blocks are zeroed on the backend where it has them
 * allocated (h3100_unmap()), so they read as zeroes.  Write
 * Uncorrectable marks LBAs: reads and compares of them fail with
 * Unrecovered Read Error (a media error) until rewritten.
 */

#include "qemu/osdep.h"
#include "system/dma.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-cmd.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
#include "h3100/lba-status-log.h"
#include "trace.h"

#define H3100_WZ_DEAC       (1u << 25)
#define H3100_RW_FUA_DW12   (1u << 30)
/*
 * Deallocation work per step: the model unmaps at most this much (about
 * a millisecond on a fully mapped drive) before the backend zeroes it and
 * the next step waits for that, so a DSM of 256 ranges of 2 TiB never
 * holds the event loop for long.  A multiple of every slot size.
 */
#define H3100_DSM_SLICE     (256 * MiB)

/* ---- uncorrectable ranges --------------------------------------------- */

/* The first range that ends after @start (the ranges are sorted). */
static guint h3100_uncor_first_after(H3100State *s, uint64_t start)
{
    guint lo = 0, hi = s->uncor->len;

    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;

        if (g_array_index(s->uncor, H3100Range, mid).end <= start) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/*
 * Every Read asks: the flags of the ranges that overlap [@start, @end),
 * ORed, with H3100_UNCOR_HIT if there is one.  A binary search, then
 * only the ranges the read covers.
 */
#define H3100_UNCOR_HIT     0x80

static uint8_t h3100_uncor_hit(H3100State *s, uint64_t start, uint64_t end)
{
    uint8_t flags = 0;

    for (guint i = h3100_uncor_first_after(s, start); i < s->uncor->len;
         i++) {
        H3100Range *r = &g_array_index(s->uncor, H3100Range, i);

        if (r->start >= end) {
            break;
        }
        flags |= r->flags | H3100_UNCOR_HIT;
    }
    return flags;
}

/*
 * The one place a media error is made: SMART's media errors and OCP
 * C0h's uncorrectable reads count it, the error log gets the command
 * when it completes (h3100_error_log_add()).
 */
uint16_t h3100_media_error(H3100State *s, H3100Req *req, uint16_t status,
                           bool dnr)
{
    s->media_errors++;
    trace_h3100_media_error(req->sq->sqid, le16_to_cpu(req->cmd.cid),
                            status, dnr);
    return status | (dnr ? NVME_DNR : 0);
}

/*
 * Written LBAs are correctable again.  A write inside a range splits it
 * in two; false (and nothing changed) when that would take the table
 * past H3100_UNCOR_MAX, the most the drive keeps (and saves).
 */
bool h3100_uncor_remove(H3100State *s, uint64_t start, uint64_t end)
{
    for (guint i = h3100_uncor_first_after(s, start); i < s->uncor->len;
         i++) {
        H3100Range *r = &g_array_index(s->uncor, H3100Range, i);
        H3100Range tail;

        if (end <= r->start) {
            break;
        }
        if (r->start < start && end < r->end) {
            if (s->uncor->len >= H3100_UNCOR_MAX) {
                H3100_GUEST_ERR(h3100_err_uncor_full, "write inside an "
                                "uncorrectable range: the table of %u "
                                "ranges is full", H3100_UNCOR_MAX);
                return false;
            }
            tail = *r;
            tail.start = end;
            r->end = start;
            g_array_insert_val(s->uncor, i + 1, tail);
            return true;
        }
        if (r->start < start) {
            r->end = start;
        } else if (end < r->end) {
            r->start = end;
        } else {
            g_array_remove_index(s->uncor, i);
            i--;
        }
    }
    return true;
}

/* How many bytes of [@start, @end) the table holds already */
static uint64_t h3100_uncor_tracked(H3100State *s, uint64_t start,
                                    uint64_t end)
{
    uint64_t bytes = 0;

    for (guint i = h3100_uncor_first_after(s, start); i < s->uncor->len;
         i++) {
        H3100Range *r = &g_array_index(s->uncor, H3100Range, i);

        if (r->start >= end) {
            break;
        }
        bytes += MIN(r->end, end) - MAX(r->start, start);
    }
    return bytes;
}

/*
 * Mark [@start, @end) uncorrectable, with @flags (H3100_UNCOR_*): the
 * new mark replaces what was there, and joins the ranges it touches that
 * have the same flags.  False when the table is full.  LBAs that were
 * not tracked yet make a new generation of log 0Eh and its notice due
 * (h3100_lsi_check(), from the idle timer).
 */
bool h3100_uncor_add(H3100State *s, uint64_t start, uint64_t end,
                     uint8_t flags)
{
    H3100Range n = { .start = start, .end = end, .flags = flags };
    uint64_t tracked = h3100_uncor_tracked(s, start, end);
    guint i;

    if (!h3100_uncor_remove(s, start, end)) {
        return false;
    }
    /* absorb the neighbours that touch it with the same flags */
    for (i = 0; i < s->uncor->len;) {
        H3100Range *r = &g_array_index(s->uncor, H3100Range, i);

        if (r->end < n.start || n.end < r->start || r->flags != flags) {
            i++;
            continue;
        }
        n.start = MIN(n.start, r->start);
        n.end = MAX(n.end, r->end);
        g_array_remove_index(s->uncor, i);
    }
    if (s->uncor->len >= H3100_UNCOR_MAX) {
        return false;
    }
    for (i = 0; i < s->uncor->len; i++) {
        if (g_array_index(s->uncor, H3100Range, i).start > n.start) {
            break;
        }
    }
    g_array_insert_val(s->uncor, i, n);
    if (end - start > tracked) {
        h3100_lsi_grew(s);
    }
    return true;
}

/* ---- LBA Status Information: log 0Eh and its notice ------------------- */

#define H3100_AEC_LBA_STATUS        (1u << 13)  /* LBASIN */
#define H3100_AER_INFO_LBA_STATUS   0x05        /* LBA Status Info Alert */

/*
 * LSGC counts the times the page came to hold LBAs it did not hold when
 * the host last read it: once between two reads (FFFFh rolls over to 0).
 */
void h3100_lsi_grew(H3100State *s)
{
    if (!s->lsi.gen_new) {
        s->lsi.gen++;
        s->lsi.gen_new = true;
    }
    s->lsi.alert_due = true;
    trace_h3100_lsi_grew(s->lsi.gen);
}

/*
 * Send the LBA Status Information Alert when it is due: LBAs are tracked,
 * more of them since the last alert, feature 0Bh's LBASIN is set, and
 * LSIRI (feature 15h) has passed since the host last read the log with
 * RAE clear (or the controller started).  Run from the idle timer (every
 * 10 ms of virtual time, in the device's context) and after what changes
 * one of these.
 */
void h3100_lsi_check(H3100State *s)
{
    int64_t due = s->lsi.restart_ns +
                  (int64_t)s->feat.lsiri * 100 * SCALE_MS;

    if (!s->lsi.alert_due || !s->uncor->len ||
        !(s->feat.aec & H3100_AEC_LBA_STATUS) ||
        qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) < due) {
        return;
    }
    s->lsi.alert_due = false;
    h3100_aer_enqueue(s, NVME_AER_TYPE_NOTICE, H3100_AER_INFO_LBA_STATUS,
                      H3100_LOG_LBA_STATUS);
}

/* The controller starts, its features at their defaults: LSIRI restarts. */
void h3100_lsi_restart(H3100State *s)
{
    s->lsi.restart_ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

typedef void H3100LsiFn(void *opaque, uint64_t lba, uint64_t nlb);

/*
 * Calls @fn (if any) for each piece of the uncorrectable ranges in
 * attached namespace @ns, in LBAs of that namespace, cut where RNLB (32
 * bits, 0's based) would overflow; the number of pieces.
 */
static uint32_t h3100_lsi_ns_ranges(H3100State *s, H3100Namespace *ns,
                                    H3100LsiFn *fn, void *opaque)
{
    uint64_t start = ns->base, end = ns->base + ns->bytes;
    uint32_t n = 0;

    for (guint i = h3100_uncor_first_after(s, start); i < s->uncor->len;
         i++) {
        H3100Range *r = &g_array_index(s->uncor, H3100Range, i);
        uint64_t lba, last;

        if (r->start >= end) {
            break;
        }
        lba = (MAX(r->start, start) - start) >> ns->lbads;
        last = DIV_ROUND_UP(MIN(r->end, end) - start, 1ull << ns->lbads);
        while (lba < last) {
            uint64_t nlb = MIN(last - lba, 1ull << 32);

            if (fn) {
                fn(opaque, lba, nlb);
            }
            lba += nlb;
            n++;
        }
    }
    return n;
}

typedef struct H3100LsiFill {
    uint8_t *p;                       /* the next descriptor */
    uint64_t lbas;                    /* LBAs described so far */
} H3100LsiFill;

static void h3100_lsi_desc(void *opaque, uint64_t lba, uint64_t nlb)
{
    H3100LsiFill *f = opaque;
    H3100LbaRangeDesc d = {
        .rslba = cpu_to_le64(lba),
        .rnlb = cpu_to_le32(nlb - 1),
    };

    memcpy(f->p, &d, sizeof(d));
    f->p += sizeof(d);
    f->lbas += nlb;
}

/*
 * The page (include/h3100/lba-status-log.h), in a buffer of its own
 * length (*@size): the same ranges Get LBA Status reports, per attached
 * namespace in NSID order; ESTULB their LBAs (FFFFFFFEh at most:
 * FFFFFFFFh would say there is no estimate).
 */
static uint8_t *h3100_lsi_page(H3100State *s, size_t *size)
{
    uint32_t nrd[H3100_NS_MAX + 1] = { 0 };
    H3100LsiFill f = { 0 };
    H3100LbaStatusHdr hdr = { 0 };
    uint32_t elements = 0;
    size_t len = sizeof(hdr);
    uint8_t *page;

    for (uint32_t nsid = 1; nsid <= H3100_NS_MAX; nsid++) {
        H3100Namespace *ns = h3100_ns_active(s, nsid);

        nrd[nsid] = ns ? h3100_lsi_ns_ranges(s, ns, NULL, NULL) : 0;
        if (nrd[nsid]) {
            elements++;
            len += sizeof(H3100LbaStatusNs) +
                   (size_t)nrd[nsid] * sizeof(H3100LbaRangeDesc);
        }
    }
    page = g_malloc0(len);
    f.p = page + sizeof(hdr);
    for (uint32_t nsid = 1; nsid <= H3100_NS_MAX; nsid++) {
        H3100LbaStatusNs e = {
            .neid = cpu_to_le32(nsid),
            .nlrd = cpu_to_le32(nrd[nsid]),
            .ratype = H3100_LBAS_RATYPE_TRACKED,
        };

        if (!nrd[nsid]) {
            continue;
        }
        memcpy(f.p, &e, sizeof(e));
        f.p += sizeof(e);
        h3100_lsi_ns_ranges(s, h3100_ns_active(s, nsid), h3100_lsi_desc, &f);
    }
    hdr.lslplen = cpu_to_le32(len);
    hdr.nlslne = cpu_to_le32(elements);
    hdr.estulb = cpu_to_le32(MIN(f.lbas, UINT32_MAX - 1));
    hdr.lsgc = cpu_to_le16(s->lsi.gen);
    memcpy(page, &hdr, sizeof(hdr));
    *size = len;
    return page;
}

/*
 * Get Log Page 0Eh.  Any read shows the host what is tracked (the next
 * new LBAs make a new generation); one with RAE clear also clears an
 * alert still waiting and restarts LSIRI (the type's mask is lifted by
 * h3100_aer_log_read(), as for every notice).
 */
uint16_t h3100_lsi_log(H3100State *s, H3100Req *req, uint64_t off,
                       uint64_t len, bool rae)
{
    size_t size;
    g_autofree uint8_t *page = h3100_lsi_page(s, &size);
    uint16_t status = h3100_log_xfer(s, req, page, size, off, len);

    if (status) {
        return status;
    }
    s->lsi.gen_new = false;
    if (!rae) {
        s->lsi.alert_due = false;
        h3100_aer_drop(s, NVME_AER_TYPE_NOTICE, H3100_AER_INFO_LBA_STATUS);
        h3100_lsi_restart(s);
    }
    return NVME_SUCCESS;
}

#define H3100_GLS_SCAN          0x10    /* scan, then report */
#define H3100_GLS_TRACKED       0x11    /* report what is tracked */
#define H3100_GLS_HDR           8       /* NLSD, CMPC */
#define H3100_GLS_DESC          16      /* DSLBA, NLB, status */
#define H3100_GLS_CMPC_MORE     1       /* stopped at MNDW */
#define H3100_GLS_CMPC_RANGE    2       /* the whole range reported */

/* One descriptor per uncorrectable range, split where NLB would wrap. */
static uint32_t h3100_gls_fill(H3100State *s, H3100Namespace *ns,
                               uint64_t start, uint64_t end, uint8_t *buf,
                               uint32_t max, bool *more)
{
    uint32_t n = 0;

    *more = false;
    for (guint i = h3100_uncor_first_after(s, start); i < s->uncor->len;
         i++) {
        H3100Range *r = &g_array_index(s->uncor, H3100Range, i);
        uint64_t lba, last;

        if (r->start >= end) {
            break;
        }
        lba = (MAX(r->start, start) - ns->base) >> ns->lbads;
        last = DIV_ROUND_UP(MIN(r->end, end) - ns->base, 1ull << ns->lbads);
        while (lba < last) {
            uint64_t nlb = MIN(last - lba, UINT32_MAX);
            uint8_t *d = buf + H3100_GLS_HDR + n * H3100_GLS_DESC;

            if (n == max) {
                *more = true;
                return n;
            }
            stq_le_p(d, lba);
            stl_le_p(d + 8, nlb);
            lba += nlb;
            n++;
        }
    }
    return n;
}

/*
 * Get LBA Status (NVMe 1.4; the drive answers it beside its 1.3 set):
 * the LBAs of a namespace that a read would fail on.  The drive tracks
 * those a Write Uncorrectable made; a scan (ATYPE 10h) finds no more,
 * since the LDPC's failures on a worn drive are drawn per read, not
 * stored.  RL 0: to the end of the namespace.
 */
uint16_t h3100_get_lba_status(H3100State *s, H3100Req *req)
{
    uint64_t slba = le32_to_cpu(req->cmd.cdw10) |
                    ((uint64_t)le32_to_cpu(req->cmd.cdw11) << 32);
    uint64_t len = ((uint64_t)le32_to_cpu(req->cmd.cdw12) + 1) * 4;
    uint32_t dw13 = le32_to_cpu(req->cmd.cdw13);
    uint8_t atype = dw13 >> 24;
    uint32_t rl = dw13 & 0xffff;
    H3100Namespace *ns = h3100_ns_active(s, le32_to_cpu(req->cmd.nsid));
    g_autofree uint8_t *buf = NULL;
    uint64_t nlbas, last;
    uint32_t n, max;
    bool more;

    trace_h3100_admin_get_lba_status(slba, len, atype, rl);
    if (!ns) {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    if ((atype != H3100_GLS_SCAN && atype != H3100_GLS_TRACKED) ||
        len > h3100_mdts_bytes(s)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    nlbas = ns->bytes >> ns->lbads;
    if (slba >= nlbas) {
        return NVME_LBA_RANGE | NVME_DNR;
    }
    last = rl ? MIN(slba + rl, nlbas) : nlbas;
    max = len > H3100_GLS_HDR ? (len - H3100_GLS_HDR) / H3100_GLS_DESC : 0;
    buf = g_malloc0(MAX(len, H3100_GLS_HDR));
    n = h3100_gls_fill(s, ns, ns->base + (slba << ns->lbads),
                       ns->base + (last << ns->lbads), buf, max, &more);
    stl_le_p(buf, n);
    buf[4] = more ? H3100_GLS_CMPC_MORE : H3100_GLS_CMPC_RANGE;
    return h3100_dma_to_host(s, req, buf, len);
}

/* ---- common checks -------------------------------------------------- */

/* Where LBA @slba of the command's namespace is in the NVM space. */
static uint64_t h3100_lba_offset(H3100Req *req, uint64_t slba)
{
    return req->ns->base + (slba << req->ns->lbads);
}

static uint16_t h3100_check_lbas(H3100State *s, H3100Req *req,
                                 uint64_t slba, uint64_t nlb)
{
    uint64_t nlbas = req->ns->bytes >> req->ns->lbads;

    req->offset = h3100_lba_offset(req, slba);
    req->bytes = nlb << req->ns->lbads;
    if (slba >= nlbas || nlb > nlbas - slba) {
        trace_h3100_err_lba_range(slba, nlb, nlbas);
        return NVME_LBA_RANGE | NVME_DNR;
    }
    return NVME_SUCCESS;
}

/* SLBA, NLB and FUA of Read, Write, Compare, Write Zeroes, Write Uncor */
static uint16_t h3100_rw_prep(H3100State *s, H3100Req *req)
{
    NvmeRwCmd *rw = (NvmeRwCmd *)&req->cmd;
    uint64_t nlb = (uint64_t)le16_to_cpu(rw->nlb) + 1;
    uint16_t status;

    status = h3100_check_lbas(s, req, le64_to_cpu(rw->slba), nlb);
    if (status) {
        return status;
    }
    req->fua = le16_to_cpu(rw->control) & NVME_RW_FUA;
    return NVME_SUCCESS;
}

/* ... and the data pointer, for data going in direction @dir */
static uint16_t h3100_rw_map(H3100State *s, H3100Req *req, DMADirection dir)
{
    uint16_t status = h3100_rw_prep(s, req);

    if (status) {
        return status;
    }
    if (req->bytes > h3100_mdts_bytes(s)) {
        trace_h3100_err_mdts(req->bytes);
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    return h3100_map_dptr(s, req, req->bytes, dir);
}

/*
 * One FUA rule for every write: the drive itself has nothing volatile to
 * flush (vwc=off) or flushes its cache model, but a backend that caches
 * (write-cache=on) must put FUA data on stable storage before it
 * completes.
 */
static BdrvRequestFlags h3100_fua_flags(H3100State *s, H3100Req *req)
{
    return req->fua && blk_enable_write_cache(s->blk) ? BDRV_REQ_FUA : 0;
}

/* ---- read and write -------------------------------------------------- */

/*
 * A read fails where Write Uncorrectable or a media fault marked the
 * LBAs (with DNR if the fault said so), or where the drive's LDPC could
 * not decode the NAND (models/ecc.c: a worn drive, old data): the
 * media error, or 0.
 */
static uint16_t h3100_read_error(H3100State *s, H3100Req *req,
                                 const H3100Result *r)
{
    uint8_t hit = h3100_uncor_hit(s, req->offset, req->offset + req->bytes);

    if (r->status != H3100_UNCORRECTABLE && !hit) {
        return NVME_SUCCESS;
    }
    return h3100_media_error(s, req, NVME_UNRECOVERED_READ,
                             hit & H3100_UNCOR_DNR);
}

static uint16_t h3100_read(H3100State *s, H3100Req *req)
{
    uint16_t status = h3100_rw_map(s, req, DMA_DIRECTION_FROM_DEVICE);
    H3100Result r;

    if (status) {
        return status;
    }
    trace_h3100_io_rw(req->sq->sqid, le16_to_cpu(req->cmd.cid), false,
                      req->offset, req->bytes, req->fua);
    r = h3100_model_io(s, H3100_OP_READ, req->offset, req->bytes, false, 0);
    req->done_ns = r.done_ns;
    status = h3100_read_error(s, req, &r);
    if (status) {
        return status;
    }
    h3100_read_send(s, req);
    return NVME_NO_COMPLETE;
}

/* Send a Read's block I/O (again, after rerror=stop). */
void h3100_read_send(H3100State *s, H3100Req *req)
{
    req->aiocb = h3100_blk_dma(s, &req->qsg, req->offset,
                               DMA_DIRECTION_FROM_DEVICE, 0, h3100_rw_cb, req);
}

/*
 * Send a Write's or a Write Zeroes' block I/O (again, after werror=stop;
 * or once the volatile cache has read what it overwrites).  Write Zeroes
 * zeroes only where the backend has data: a guest's Write Zeroes over
 * the namespace must not allocate the whole image on the host.
 */
void h3100_write_send(H3100State *s, H3100Req *req)
{
    req->aiocb = NULL;
    if (s->quiesced && req->cmd.opcode == NVME_CMD_WRITE) {
        h3100_defer_write(s, req);    /* sent when the VM runs */
        return;
    }
    if (req->cmd.opcode == NVME_CMD_WRITE_ZEROES) {
        h3100_unmap(s, req, req->offset, req->bytes, h3100_fua_flags(s, req),
                    h3100_rw_cb, req);
    } else {
        req->aiocb = h3100_blk_dma(s, &req->qsg, req->offset,
                                   DMA_DIRECTION_TO_DEVICE,
                                   h3100_fua_flags(s, req), h3100_rw_cb, req);
    }
}

/*
 * One rule for what the drive does with a write the model has timed
 * (@r), Write or Write Zeroes: a read-only drive refuses it; a media
 * fault fails it (nothing written: the LBAs keep what they had); the
 * range is no longer uncorrectable; the volatile cache keeps what it
 * overwrites, then the data goes to the backend.
 */
static uint16_t h3100_write_accept(H3100State *s, H3100Req *req,
                                   const H3100Result *r)
{
    uint16_t status;

    req->done_ns = r->done_ns;
    if (r->status == H3100_READ_ONLY) {
        return H3100_SC_NS_WRITE_PROTECTED | NVME_DNR;
    }
    status = h3100_fault_media_write(s, req);
    if (status) {
        return status;
    }
    if (!h3100_uncor_remove(s, req->offset, req->offset + req->bytes)) {
        return NVME_INTERNAL_DEV_ERROR | NVME_DNR;
    }
    if (!h3100_vcache_before_write(s, req)) {
        h3100_write_send(s, req);
    }
    return NVME_NO_COMPLETE;
}

/*
 * The model times a write or Write Zeroes; a read-only fault answers as
 * the worn-out drive does (h3100_write_accept()), and the model writes
 * nothing.
 */
static H3100Result h3100_write_model(H3100State *s, H3100Req *req,
                                     H3100Op op, uint32_t stream)
{
    if (h3100_fault_read_only(s)) {
        return (H3100Result) {
            .done_ns = h3100_now(s), .status = H3100_READ_ONLY,
        };
    }
    return h3100_model_io(s, op, req->offset, req->bytes, req->fua, stream);
}

static uint16_t h3100_write(H3100State *s, H3100Req *req)
{
    uint16_t status = h3100_rw_map(s, req, DMA_DIRECTION_TO_DEVICE);
    uint32_t stream;
    H3100Result r;

    if (!status) {
        status = h3100_write_stream(s, req, &stream);
    }
    if (status) {
        return status;
    }
    trace_h3100_io_rw(req->sq->sqid, le16_to_cpu(req->cmd.cid), true,
                      req->offset, req->bytes, req->fua);
    r = h3100_write_model(s, req, H3100_OP_WRITE, stream);
    return h3100_write_accept(s, req, &r);
}

static uint16_t h3100_flush(H3100State *s, H3100Req *req)
{
    H3100Result r = h3100_model_io(s, H3100_OP_FLUSH, 0, 0, false, 0);

    req->done_ns = r.done_ns;
    req->op.flush.vc_gen = h3100_vcache_flush_begin(s);
    req->aiocb = blk_aio_flush(s->blk, h3100_rw_cb, req);
    return NVME_NO_COMPLETE;
}

/* ---- write zeroes, deallocate, write uncorrectable ------------------- */

static uint16_t h3100_write_zeroes(H3100State *s, H3100Req *req)
{
    uint32_t dw12 = le32_to_cpu(req->cmd.cdw12);
    uint16_t status = h3100_rw_prep(s, req);
    H3100Result r;

    if (status) {
        return status;
    }
    req->fua = dw12 & H3100_RW_FUA_DW12;
    trace_h3100_io_write_zeroes(req->offset, req->bytes,
                                !!(dw12 & H3100_WZ_DEAC));
    r = h3100_write_model(s, req, H3100_OP_WRITE_ZEROES, 0);
    return h3100_write_accept(s, req, &r);
}

static void h3100_dsm_next(H3100Req *req);

void h3100_dsm_cb(void *opaque, int ret)
{
    H3100Req *req = opaque;

    req->aiocb = NULL;
    if (ret < 0 && !req->status) {
        req->status = h3100_blk_status(req, ret, NVME_INTERNAL_DEV_ERROR);
    }
    if (req->status || h3100_req_cancelled(req)) {
        if (!req->status) {
            req->status = NVME_CMD_ABORT_SQ_DEL;
        }
        h3100_req_complete(req);
        return;
    }
    h3100_dsm_next(req);
}

/*
 * Deallocate the ranges one slice after the other: the model unmaps a
 * slice, the backend zeroes it, and its callback takes the next one.
 * Slices end on multiples of H3100_DSM_SLICE, so a slot is never split
 * between two of them.  A range the table of uncorrectable LBAs cannot
 * split stays marked (deallocation is advisory).
 */
static void h3100_dsm_next(H3100Req *req)
{
    H3100State *s = req->s;
    NvmeDsmRange *ranges = req->buf;
    H3100DsmProgress *dsm = &req->op.dsm;

    while (dsm->range_idx < dsm->nranges) {
        NvmeDsmRange *r = &ranges[dsm->range_idx];
        uint64_t off = h3100_lba_offset(req, le64_to_cpu(r->slba));
        uint64_t end = off + ((uint64_t)le32_to_cpu(r->nlb) <<
                              req->ns->lbads);
        uint64_t start = off + dsm->range_done;
        uint64_t stop = MIN(end, QEMU_ALIGN_DOWN(start, H3100_DSM_SLICE) +
                                 H3100_DSM_SLICE);
        H3100Result res;

        if (start >= end) {
            dsm->range_idx++;
            dsm->range_done = 0;
            continue;
        }
        res = h3100_model_io(s, H3100_OP_DEALLOCATE, start, stop - start,
                             false, 0);
        req->done_ns = MAX(req->done_ns, res.done_ns);
        h3100_uncor_remove(s, start, stop);
        dsm->range_done += stop - start;
        req->aiocb = NULL;
        h3100_unmap(s, req, start, stop - start, 0, h3100_dsm_cb, req);
        return;
    }
    h3100_write_landed(req);
}

static uint16_t h3100_dsm_ranges(H3100State *s, H3100Req *req)
{
    NvmeDsmRange *ranges = req->buf;
    uint16_t status;

    for (uint32_t i = 0; i < req->op.dsm.nranges; i++) {
        uint64_t slba = le64_to_cpu(ranges[i].slba);
        uint64_t nlb = le32_to_cpu(ranges[i].nlb);

        if (!nlb) {
            continue;
        }
        status = h3100_check_lbas(s, req, slba, nlb);
        if (status) {
            return status;
        }
    }
    return NVME_SUCCESS;
}

static uint16_t h3100_dsm(H3100State *s, H3100Req *req)
{
    NvmeDsmCmd *c = (NvmeDsmCmd *)&req->cmd;
    uint32_t nr = (le32_to_cpu(c->nr) & 0xff) + 1;
    uint32_t attr = le32_to_cpu(c->attributes);
    uint16_t status;

    trace_h3100_io_dsm(nr, attr);
    if (!(attr & NVME_DSMGMT_AD)) {
        return NVME_SUCCESS;            /* access hints only */
    }
    req->buf = g_new0(NvmeDsmRange, nr);
    req->op.dsm.nranges = nr;
    status = h3100_dma_from_host(s, req, req->buf, nr * sizeof(NvmeDsmRange));
    if (status) {
        return status;
    }
    status = h3100_dsm_ranges(s, req);
    if (status) {
        return status;
    }
    h3100_dsm_next(req);
    return NVME_NO_COMPLETE;
}

/*
 * A Write, Write Zeroes or Deallocate a migration brought, about to go on
 * with its work (h3100-vmstate.c): its LBAs fit its namespace (req->ns,
 * set) and give the extent it carries; a Write is within MDTS; while
 * @ranges drive it, a Deallocate has them all, each in the namespace.
 */
bool h3100_io_restored_ok(H3100State *s, H3100Req *req, bool ranges)
{
    NvmeDsmCmd *dsm = (NvmeDsmCmd *)&req->cmd;
    uint64_t offset = req->offset, bytes = req->bytes;
    bool fua = req->fua, ok;

    switch (req->cmd.opcode) {
    case NVME_CMD_WRITE:
    case NVME_CMD_WRITE_ZEROES:
        ok = !h3100_rw_prep(s, req) && req->offset == offset &&
             req->bytes == bytes &&
             (req->cmd.opcode != NVME_CMD_WRITE ||
              bytes <= h3100_mdts_bytes(s));
        break;
    case NVME_CMD_DSM:
        ok = req->op.dsm.nranges == (le32_to_cpu(dsm->nr) & 0xff) + 1 &&
             (!ranges || (req->buf &&
                          req->op.dsm.range_idx < req->op.dsm.nranges &&
                          !h3100_dsm_ranges(s, req)));
        break;
    default:
        return false;
    }
    /* as the source had them: the checks above derive them anew */
    req->offset = offset;
    req->bytes = bytes;
    req->fua = fua;
    return ok;
}

static uint16_t h3100_write_uncor(H3100State *s, H3100Req *req)
{
    uint16_t status = h3100_rw_prep(s, req);
    H3100Result r;

    if (status) {
        return status;
    }
    trace_h3100_io_write_uncor(req->offset, req->bytes);
    r = h3100_model_io(s, H3100_OP_ADMIN, 0, 0, false, 0);
    req->done_ns = r.done_ns;
    if (!h3100_uncor_add(s, req->offset, req->offset + req->bytes, 0)) {
        return NVME_INTERNAL_DEV_ERROR;
    }
    return NVME_SUCCESS;
}

/* ---- compare ---------------------------------------------------------- */

static void h3100_compare_done(H3100Req *req, int ret)
{
    g_autofree uint8_t *host = NULL;

    req->aiocb = NULL;
    if (ret < 0) {
        if (h3100_blk_cancelled(req, ret)) {
            req->status = NVME_CMD_ABORT_SQ_DEL;
        } else if (h3100_blk_failed(req, ret)) {
            return;                     /* kept: sent again on `cont` */
        }
        h3100_req_complete(req);
        return;
    }
    host = g_malloc(req->bytes);
    if (dma_buf_write(host, req->bytes, NULL, &req->qsg, H3100_DMA_ATTRS)) {
        req->status = NVME_DATA_TRAS_ERROR;
    } else if (memcmp(host, req->buf, req->bytes)) {
        req->status = NVME_CMP_FAILURE;
    }
    h3100_req_complete(req);
}

void h3100_compare_cb(void *opaque, int ret)
{
    H3100Req *req = opaque;
    H3100State *s = req->s;

    h3100_lock(s);
    h3100_compare_done(req, ret);
    h3100_unlock(s);
}

static uint16_t h3100_compare(H3100State *s, H3100Req *req)
{
    uint16_t status = h3100_rw_map(s, req, DMA_DIRECTION_TO_DEVICE);
    H3100Result r;

    if (status) {
        return status;
    }
    trace_h3100_io_compare(req->offset, req->bytes);
    r = h3100_model_io(s, H3100_OP_COMPARE, req->offset, req->bytes,
                       false, 0);
    req->done_ns = r.done_ns;
    status = h3100_read_error(s, req, &r);
    if (status) {
        return status;
    }
    req->buf = g_malloc(req->bytes);
    qemu_iovec_init(&req->iov, 1);
    qemu_iovec_add(&req->iov, req->buf, req->bytes);
    req->aiocb = blk_aio_preadv(s->blk, req->offset, &req->iov, 0,
                                h3100_compare_cb, req);
    return NVME_NO_COMPLETE;
}

/* ---- dispatch --------------------------------------------------------- */

/*
 * The NVM command set (hw/tables/nvme-cmds.h): dispatch, the
 * Commands Supported and Effects log (h3100-log.c), the sanitize gate
 * and the trace names read it.
 */
const H3100Cmd h3100_io_cmds[256] = {
    H3100_IO_COMMANDS(H3100_CMD_ENTRY)
};

static uint16_t h3100_io_check(H3100State *s, H3100Req *req,
                               const H3100Cmd *c)
{
    uint32_t nsid = le32_to_cpu(req->cmd.nsid);

    if (NVME_CMD_FLAGS_FUSE(req->cmd.flags)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (!((c->flags & H3100_CMD_NSID_ALL) && nsid == NVME_NSID_BROADCAST)) {
        req->ns = h3100_ns_active(s, nsid);
        if (!req->ns) {
            return NVME_INVALID_NSID | NVME_DNR;
        }
    }
    if (s->san.active && !(c->flags & H3100_CMD_IN_SANITIZE)) {
        return H3100_SC_SANITIZE_IN_PROGRESS | NVME_DNR;
    }
    if (s->format_busy || (req->ns && h3100_ns_busy(req->ns))) {
        return NVME_FORMAT_IN_PROGRESS;
    }
    return NVME_SUCCESS;
}

uint16_t h3100_io_cmd(H3100State *s, H3100Req *req)
{
    const H3100Cmd *c = &h3100_io_cmds[req->cmd.opcode];
    uint16_t status;

    req->offset = 0;
    req->bytes = 0;
    req->ns = NULL;
    if (!c->fn) {
        trace_h3100_err_opcode(req->sq->sqid, req->cmd.opcode);
        return NVME_INVALID_OPCODE | NVME_DNR;
    }
    status = h3100_io_check(s, req, c);
    if (status) {
        return status;
    }
    return c->fn(s, req);
}
