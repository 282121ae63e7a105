/*
 * DapuStor H3100 NVMe SSD: namespaces (Namespace Management and
 * Attachment, the Changed Namespace List, erasing a namespace)
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Every namespace is a contiguous extent of the one FTL's LBA space
 * (first fit, extents aligned to H3100_NS_ALIGN), with its own LBA
 * format.  What no namespace holds is never written, so the FTL keeps it
 * as spare: over-provisioning and WAF follow what is allocated, as on
 * the real drive.  There is one controller (CNTLID 0) and no shared
 * namespace (NMIC 0), and no thin provisioning (NCAP = NSZE).
 *
 * Deleting a namespace or formatting one erases its extent: first the
 * commands to it that were fetched finish (polled every
 * H3100_NS_DRAIN_POLL_NS of virtual time), then the model deallocates and
 * the backend zeroes it, one H3100_NS_ERASE_SLICE at a time so no step
 * holds the thread.  A deleted namespace's extent is reused only once it
 * is erased, so a new namespace reads zeroes.  A delete's erase goes on
 * across a controller reset (the command is gone, the namespace too)
 * and, through the state file, across a restart (H3100_NS_DELETING); a
 * Format's ends with its command: the namespace keeps its old format,
 * erased as far as it got.  (The new one could round its size down, and
 * the end of its extent, not erased yet, would go to the next namespace
 * created there.)
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
#include "trace.h"

#define H3100_NS_ERASE_SLICE        (256 * MiB)
#define H3100_NS_DRAIN_POLL_NS      (100 * SCALE_US)
#define H3100_NS_MGMT_CREATE        0
#define H3100_NS_MGMT_DELETE        1
#define H3100_NS_CHANGED_ENTRIES    1024

/* an erase of one or more namespaces' extents (Format, Delete) */
struct H3100NsJob {
    H3100State *s;
    H3100Req *req;                    /* NULL once a reset took it */
    uint64_t todo;                    /* bit N: NSID N still to erase */
    uint64_t done;                    /* bytes of the first one erased */
    uint32_t lbads;                   /* Format: the new LBA format */
    bool delete;
    uint16_t status;
    H3100Timer *timer;                /* polls for the namespace's I/O */
};

/* ---- the table ---------------------------------------------------------- */

bool h3100_nsid_valid(uint32_t nsid)
{
    return nsid >= 1 && nsid <= H3100_NS_MAX;
}

H3100Namespace *h3100_ns_allocated(H3100State *s, uint32_t nsid)
{
    if (!h3100_nsid_valid(nsid) || s->ns[nsid].state == H3100_NS_FREE ||
        s->ns[nsid].state == H3100_NS_DELETING) {
        return NULL;
    }
    return &s->ns[nsid];
}

H3100Namespace *h3100_ns_active(H3100State *s, uint32_t nsid)
{
    H3100Namespace *ns = h3100_ns_allocated(s, nsid);

    return ns && ns->state == H3100_NS_ATTACHED ? ns : NULL;
}

bool h3100_ns_busy(H3100Namespace *ns)
{
    return ns->job;
}

bool h3100_ns_any_busy(H3100State *s)
{
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (h3100_ns_busy(&s->ns[i])) {
            return true;
        }
    }
    return false;
}

/* where @ns's extent ends: the next one may start there */
static uint64_t h3100_ns_extent_end(H3100State *s, H3100Namespace *ns)
{
    return MIN(QEMU_ALIGN_UP(ns->base + ns->bytes, H3100_NS_ALIGN),
               s->nvm_bytes);
}

uint64_t h3100_ns_unallocated(H3100State *s)
{
    uint64_t used = 0;

    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (s->ns[i].state != H3100_NS_FREE) {
            used += h3100_ns_extent_end(s, &s->ns[i]) - s->ns[i].base;
        }
    }
    return s->nvm_bytes - used;
}

uint32_t h3100_ns_lba(H3100State *s, uint64_t offset, uint64_t *lba)
{
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        H3100Namespace *ns = &s->ns[i];

        if (ns->state != H3100_NS_FREE && offset >= ns->base &&
            offset - ns->base < ns->bytes) {
            *lba = (offset - ns->base) >> ns->lbads;
            return i;
        }
    }
    *lba = 0;
    return 0;
}

uint32_t h3100_ns1_lbads(H3100State *s)
{
    H3100Namespace *ns = h3100_ns_allocated(s, 1);

    return ns ? ns->lbads : BDRV_SECTOR_BITS;
}

/* As the drive ships: one attached namespace over the whole NVM space. */
void h3100_ns_init(H3100State *s)
{
    memset(s->ns, 0, sizeof(s->ns));
    s->ns[1].state = H3100_NS_ATTACHED;
    s->ns[1].bytes = s->nvm_bytes;
    s->ns[1].lbads = ctz32(s->lba_size);
    s->ns_changed = 0;
    s->ns_gen = 0;
}

/* First fit of @bytes in the NVM space, aligned; false if none fits. */
static bool h3100_ns_place(H3100State *s, uint64_t bytes, uint64_t *base)
{
    uint64_t at = 0;
    bool moved = true;

    while (moved) {
        moved = false;
        for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
            H3100Namespace *ns = &s->ns[i];
            uint64_t end = h3100_ns_extent_end(s, ns);

            if (ns->state != H3100_NS_FREE && ns->base < at + bytes &&
                end > at) {
                at = end;
                moved = true;
            }
        }
        if (at > s->nvm_bytes || bytes > s->nvm_bytes - at) {
            return false;
        }
    }
    *base = at;
    return true;
}

/* ---- the Changed Namespace List (log 04h) ------------------------------ */

void h3100_ns_changed(H3100State *s, uint32_t nsid)
{
    s->ns_changed |= 1ull << nsid;
    if (NVME_AEC_NS_ATTR(s->feat.aec)) {
        h3100_aer_enqueue(s, NVME_AER_TYPE_NOTICE,
                          NVME_AER_INFO_NOTICE_NS_ATTR_CHANGED,
                          H3100_LOG_CHANGED_NS);
    }
}

uint16_t h3100_ns_changed_log(H3100State *s, H3100Req *req, uint64_t off,
                              uint64_t len, bool rae)
{
    uint32_t list[H3100_NS_CHANGED_ENTRIES] = { 0 };
    unsigned n = 0;
    uint16_t status;

    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (s->ns_changed & (1ull << i)) {
            list[n++] = cpu_to_le32(i);
        }
    }
    status = h3100_log_xfer(s, req, list, sizeof(list), off, len);
    if (!status && !rae) {
        s->ns_changed = 0;
    }
    return status;
}

/* ---- erasing a namespace's extent -------------------------------------- */

static void h3100_ns_job_free(H3100NsJob *job)
{
    H3100State *s = job->s;

    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (s->ns[i].job == job) {
            s->ns[i].job = NULL;
        }
    }
    h3100_timer_free(&job->timer);
    g_free(job);
}

void h3100_ns_set_lbads(H3100Namespace *ns, uint32_t lbads)
{
    ns->lbads = lbads;
    ns->bytes = QEMU_ALIGN_DOWN(ns->bytes, 1ull << lbads);
}

/* NSID @nsid is erased: it is gone (Delete) or has its new format. */
static void h3100_ns_job_one_done(H3100NsJob *job, uint32_t nsid)
{
    H3100Namespace *ns = &job->s->ns[nsid];

    trace_h3100_ns_erased(nsid, job->delete);
    ns->job = NULL;
    if (job->delete) {
        memset(ns, 0, sizeof(*ns));
        return;
    }
    h3100_ns_set_lbads(ns, job->lbads);
}

/*
 * A reset took the Format's command: it ends where it is, and the
 * namespaces not erased to the end keep their format.
 */
static void h3100_ns_format_cancel(H3100NsJob *job)
{
    h3100_ns_job_free(job);
}

static void h3100_ns_job_finish(H3100NsJob *job)
{
    H3100Req *req = job->req;

    if (req) {
        req->status = job->status;
        h3100_write_landed(req);
    }
    h3100_ns_job_free(job);
}

static void h3100_ns_job_next(H3100NsJob *job);

void h3100_ns_job_cb(void *opaque, int ret)
{
    H3100NsJob *job = opaque;

    if (job->s->exiting) {
        h3100_ns_job_free(job);
        return;
    }
    if (!job->delete && h3100_req_cancelled(job->req)) {
        h3100_ns_format_cancel(job);
        return;
    }
    if (ret < 0 && job->delete) {
        /* not erased: it stays deleting, tried again at a reset or start */
        job->status = NVME_INTERNAL_DEV_ERROR;
        h3100_ns_job_finish(job);
        return;
    }
    if (ret < 0) {
        job->status = NVME_INTERNAL_DEV_ERROR;
    }
    h3100_ns_job_next(job);
}

static void h3100_ns_job_next(H3100NsJob *job)
{
    H3100State *s = job->s;

    while (job->todo) {
        uint32_t nsid = ctz64(job->todo);
        H3100Namespace *ns = &s->ns[nsid];
        /* a Delete erases the whole extent: what a Format cut off too */
        uint64_t end = job->delete ? h3100_ns_extent_end(s, ns) :
                                     ns->base + ns->bytes;
        uint64_t start = ns->base + job->done;
        uint64_t stop = MIN(end, QEMU_ALIGN_DOWN(start, H3100_NS_ERASE_SLICE) +
                                 H3100_NS_ERASE_SLICE);

        if (start >= end) {
            h3100_ns_job_one_done(job, nsid);
            job->todo &= ~(1ull << nsid);
            job->done = 0;
            continue;
        }
        h3100_model_io(s, H3100_OP_DEALLOCATE, start, stop - start, false, 0);
        h3100_uncor_remove(s, start, stop);
        job->done += stop - start;
        /* a Delete's zeroes land before the table says the space is free */
        h3100_unmap(s, job->delete ? NULL : job->req, start, stop - start,
                    job->delete ? h3100_durable_flags(s) : 0,
                    h3100_ns_job_cb, job);
        return;
    }
    h3100_ns_job_finish(job);
}

/* Is a command to a namespace of @job still out (fetched, not posted)? */
static bool h3100_ns_job_io_out(H3100NsJob *job)
{
    H3100State *s = job->s;

    for (uint32_t q = 1; q <= s->max_ioqpairs; q++) {
        H3100Req *r;

        if (!s->sq[q]) {
            continue;
        }
        QTAILQ_FOREACH(r, &s->sq[q]->out_list, entry) {
            if (r->ns && r->ns->job == job) {
                return true;
            }
        }
    }
    return false;
}

static void h3100_ns_job_poll(void *opaque)
{
    H3100NsJob *job = opaque;
    H3100State *s = job->s;

    /*
     * Nothing starts while a reset or the device's exit stops the
     * commands: with an IOThread this timer runs there meanwhile, and a
     * step begun then could outlive the job the reset frees.
     */
    if (s->stopping || s->exiting || h3100_ns_job_io_out(job)) {
        h3100_timer_mod_in(job->timer, H3100_NS_DRAIN_POLL_NS);
        return;
    }
    /* as for Format: a power cut must not bring back what is erased */
    h3100_vcache_settle(job->s);
    h3100_ns_job_next(job);
}

/*
 * Erase the namespaces in @todo (bit N: NSID N, each of them non-empty:
 * the job's first step is always an unmap, so its timer's callback never
 * frees the job).
 */
static void h3100_ns_job_start(H3100State *s, uint64_t todo, H3100Req *req,
                               bool delete, uint32_t lbads)
{
    H3100NsJob *job = g_new0(H3100NsJob, 1);

    job->s = s;
    job->req = req;
    job->todo = todo;
    job->delete = delete;
    job->lbads = lbads;
    job->timer = h3100_timer_new(s, h3100_ns_job_poll, job);
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (todo & (1ull << i)) {
            s->ns[i].job = job;
        }
    }
    /* not at once: the command that starts it returns first */
    h3100_timer_mod_in(job->timer, 0);
}

void h3100_ns_format(H3100State *s, uint64_t todo, H3100Req *req,
                     uint32_t lbads)
{
    h3100_ns_job_start(s, todo, req, false, lbads);
}

/* ---- migration (h3100-vmstate.c) -------------------------------------- */

/* The jobs, each once, in the order of the first namespace each erases. */
unsigned h3100_ns_jobs(H3100State *s, H3100NsJob **jobs)
{
    unsigned n = 0;

    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        H3100NsJob *job = s->ns[i].job;
        unsigned k = 0;

        while (job && k < n && jobs[k] != job) {
            k++;
        }
        if (job && k == n) {
            jobs[n++] = job;
        }
    }
    return n;
}

void h3100_ns_job_get(H3100NsJob *job, H3100NsJobInfo *info)
{
    *info = (H3100NsJobInfo) {
        .todo = job->todo, .done = job->done, .lbads = job->lbads,
        .delete = job->delete, .status = job->status, .req = job->req,
        .timer_ns = h3100_timer_expire_ns(job->timer),
    };
}

/*
 * A job as a migration brought it: its namespaces (@info->todo, checked
 * allocated and not busy by the caller) are its again; the poll it was
 * waiting for, if any, comes at the same time.
 */
H3100NsJob *h3100_ns_job_restore(H3100State *s, const H3100NsJobInfo *info)
{
    H3100NsJob *job = g_new0(H3100NsJob, 1);

    *job = (H3100NsJob) {
        .s = s, .req = info->req, .todo = info->todo, .done = info->done,
        .lbads = info->lbads, .delete = info->delete,
        .status = info->status,
    };
    job->timer = h3100_timer_new(s, h3100_ns_job_poll, job);
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (info->todo & (1ull << i)) {
            s->ns[i].job = job;
        }
    }
    if (info->timer_ns >= 0) {
        h3100_timer_mod(job->timer, info->timer_ns);
    }
    return job;
}

uint64_t h3100_ns_mask(H3100State *s, bool attached)
{
    uint64_t mask = 0;

    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (attached ? h3100_ns_active(s, i) : h3100_ns_allocated(s, i)) {
            mask |= 1ull << i;
        }
    }
    return mask;
}

/* Namespaces left deleting (the state file, a failed erase): erase them. */
void h3100_ns_resume(H3100State *s)
{
    uint64_t todo = 0;

    if (s->exiting) {
        return;
    }
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (s->ns[i].state == H3100_NS_DELETING && !s->ns[i].job) {
            todo |= 1ull << i;
        }
    }
    if (todo) {
        h3100_ns_job_start(s, todo, NULL, true, 0);
    }
}

/*
 * A controller reset: the commands are gone; the deletes' erases go on
 * (one that failed starts again), a Format waiting for its namespace's
 * I/O ends (one whose erase was under way ended in h3100_ns_job_cb, when
 * the reset cancelled it).  When the device goes away, a delete still
 * waiting for I/O ends too: its namespace stays deleting in the state
 * file, and one with an erase under way ends in h3100_ns_job_cb.
 */
void h3100_ns_reset(H3100State *s)
{
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        H3100NsJob *job = s->ns[i].job;

        if (!job) {
            continue;
        }
        if (!job->delete) {
            h3100_ns_format_cancel(job);
        } else if (s->exiting && h3100_timer_pending(job->timer)) {
            h3100_ns_job_free(job);
        } else {
            job->req = NULL;
        }
    }
    h3100_ns_resume(s);               /* an erase that failed: again */
}

void h3100_ns_free(H3100State *s)
{
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (s->ns[i].job) {
            h3100_ns_job_free(s->ns[i].job);
        }
    }
}

/* ---- Namespace Management ---------------------------------------------- */

static uint32_t h3100_ns_free_nsid(H3100State *s)
{
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (s->ns[i].state == H3100_NS_FREE) {
            return i;
        }
    }
    return 0;
}

static uint16_t h3100_ns_create(H3100State *s, H3100Req *req)
{
    g_autofree NvmeIdNs *id = g_new0(NvmeIdNs, 1);
    uint64_t nsze, ncap, base;
    uint32_t nsid, lbads;
    uint16_t status;

    status = h3100_dma_from_host(s, req, id, sizeof(*id));
    if (status) {
        return status;
    }
    nsze = le64_to_cpu(id->nsze);
    ncap = le64_to_cpu(id->ncap);
    trace_h3100_ns_create(nsze, ncap, id->flbas);
    if ((id->flbas & 0xf) > 1) {
        return NVME_INVALID_FORMAT | NVME_DNR;
    }
    if (id->dps || id->nmic || !nsze || ncap > nsze) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (ncap < nsze) {
        return H3100_SC_THIN_PROV_UNSUPPORTED | NVME_DNR;
    }
    lbads = (id->flbas & 0xf) ? 12 : 9;
    if (nsze > s->nvm_bytes >> lbads ||
        !h3100_ns_place(s, nsze << lbads, &base)) {
        return H3100_SC_NS_INSUFFICIENT_CAP | NVME_DNR;
    }
    nsid = h3100_ns_free_nsid(s);
    if (!nsid) {
        return H3100_SC_NS_ID_UNAVAILABLE | NVME_DNR;
    }
    /* 0 is the shipped namespace's: after 2^32 creates the count wraps to 1 */
    s->ns_gen = s->ns_gen == UINT32_MAX ? 1 : s->ns_gen + 1;
    s->ns[nsid] = (H3100Namespace) {
        .state = H3100_NS_DETACHED,
        .base = base,
        .bytes = nsze << lbads,
        .lbads = lbads,
        .gen = s->ns_gen,
    };
    trace_h3100_ns_created(nsid, base, nsze << lbads);
    req->cqe.result = cpu_to_le32(nsid);
    return NVME_SUCCESS;
}

static uint16_t h3100_ns_delete(H3100State *s, H3100Req *req, uint32_t nsid)
{
    uint64_t todo = 0;

    if (nsid == NVME_NSID_BROADCAST) {
        todo = h3100_ns_mask(s, false);
    } else if (!h3100_nsid_valid(nsid)) {
        return NVME_INVALID_NSID | NVME_DNR;
    } else if (h3100_ns_allocated(s, nsid)) {
        todo = 1ull << nsid;
    } else {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if ((todo & (1ull << i)) && h3100_ns_busy(&s->ns[i])) {
            return NVME_FORMAT_IN_PROGRESS;
        }
    }
    if (!todo) {
        return NVME_SUCCESS;
    }
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (!(todo & (1ull << i))) {
            continue;
        }
        trace_h3100_ns_delete(i);
        if (s->ns[i].state == H3100_NS_ATTACHED) {
            h3100_ns_changed(s, i);
        }
        s->ns[i].state = H3100_NS_DELETING;
    }
    h3100_ns_job_start(s, todo, req, true, 0);
    return NVME_NO_COMPLETE;
}

uint16_t h3100_ns_mgmt(H3100State *s, H3100Req *req)
{
    uint32_t sel = le32_to_cpu(req->cmd.cdw10) & 0xf;

    if (s->format_busy) {
        return NVME_FORMAT_IN_PROGRESS;   /* the whole drive's: its set */
    }
    switch (sel) {
    case H3100_NS_MGMT_CREATE:
        return h3100_ns_create(s, req);
    case H3100_NS_MGMT_DELETE:
        return h3100_ns_delete(s, req, le32_to_cpu(req->cmd.nsid));
    default:
        return NVME_INVALID_FIELD | NVME_DNR;
    }
}

/* ---- Namespace Attachment ---------------------------------------------- */

/* @nsid (allocated) to this controller or away from it: one rule for all */
static uint16_t h3100_ns_set_attached(H3100State *s, uint32_t nsid,
                                      bool attach)
{
    H3100Namespace *ns = &s->ns[nsid];

    if (h3100_ns_busy(ns)) {
        return NVME_FORMAT_IN_PROGRESS;
    }
    if (attach) {
        if (ns->state == H3100_NS_ATTACHED) {
            return NVME_NS_ALREADY_ATTACHED | NVME_DNR;
        }
        ns->state = H3100_NS_ATTACHED;
    } else {
        if (ns->state != H3100_NS_ATTACHED) {
            return NVME_NS_NOT_ATTACHED | NVME_DNR;
        }
        ns->state = H3100_NS_DETACHED;
    }
    h3100_ns_changed(s, nsid);
    return NVME_SUCCESS;
}

/*
 * A controller list naming this controller, once, and no other: a list
 * of unique IDs, and the drive has one controller.
 */
static uint16_t h3100_ns_ctrl_list(H3100State *s, H3100Req *req)
{
    uint16_t list[NVME_IDENTIFY_DATA_SIZE / 2];
    uint16_t status;

    status = h3100_dma_from_host(s, req, list, sizeof(list));
    if (status) {
        return status;
    }
    if (le16_to_cpu(list[0]) != 1 || le16_to_cpu(list[1]) != H3100_CNTLID) {
        return NVME_NS_CTRL_LIST_INVALID | NVME_DNR;
    }
    return NVME_SUCCESS;
}

uint16_t h3100_ns_attach(H3100State *s, H3100Req *req)
{
    uint32_t sel = le32_to_cpu(req->cmd.cdw10) & 0xf;
    uint32_t nsid = le32_to_cpu(req->cmd.nsid);
    H3100Namespace *ns;
    uint16_t status;

    trace_h3100_ns_attach(nsid, sel);
    if (s->format_busy) {
        return NVME_FORMAT_IN_PROGRESS;
    }
    if (!h3100_nsid_valid(nsid)) {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    ns = h3100_ns_allocated(s, nsid);
    if (!ns) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (sel != NVME_NS_ATTACHMENT_ATTACH &&
        sel != NVME_NS_ATTACHMENT_DETACH) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    status = h3100_ns_ctrl_list(s, req);
    if (status) {
        return status;
    }
    return h3100_ns_set_attached(s, nsid, sel == NVME_NS_ATTACHMENT_ATTACH);
}

/*
 * Another host, sharing the namespace, attaches or detaches it: to this
 * controller it looks as its own Namespace Attachment does, notice and
 * all.  Refused as the command would be, with one line.
 */
bool h3100_ns_attach_by_host(H3100State *s, uint32_t nsid, bool attach,
                             Error **errp)
{
    uint16_t status;

    if (s->format_busy) {
        error_setg(errp, "fault: a Format is under way");
        return false;
    }
    if (!h3100_ns_allocated(s, nsid)) {
        error_setg(errp, "fault: namespace %" PRIu32 " does not exist",
                   nsid);
        return false;
    }
    status = h3100_ns_set_attached(s, nsid, attach);
    if (status == NVME_FORMAT_IN_PROGRESS) {
        error_setg(errp, "fault: namespace %" PRIu32 " is being erased",
                   nsid);
    } else if (status) {
        error_setg(errp, "fault: namespace %" PRIu32 " is %s attached", nsid,
                   attach ? "already" : "not");
    }
    return !status;
}
