/*
 * DapuStor H3100 NVMe SSD: a command's completion, top to bottom
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Every command ends here.  As Linux's nvme_complete_rq does, each
 * stage is one function that calls the concerns in order; each concern
 * answers and returns, none calls the next:
 *
 *   h3100_rw_cb          the block request of a Read, Write, Write Zeroes
 *                        or Flush is back
 *     host errors        h3100_blk_failed(): werror/rerror (h3100-blkerr.c)
 *     volatile cache     h3100_vcache_landed(), h3100_vcache_flushed()
 *                        (h3100-vcache.c)
 *     durability         h3100_durable_wait(): does the write wait for a
 *                        flush to outlive QEMU? (h3100-durable.c)
 *   h3100_req_complete   the command's data I/O is done, or it had none
 *     in flight          h3100_inflight_remove() (h3100-inflight.c)
 *     maintenance        h3100_maint_io_drained(): a Format or Sanitize
 *                        waited for the last I/O (h3100-maint.c)
 *     its time           h3100_req_wait(): does it wait for the model's
 *                        completion time? (h3100-inflight.c)
 *   h3100_req_post_now   the drive completes it
 *     error log          h3100_error_log_add() (h3100-log.c)
 *     telemetry          h3100_telemetry_note() (h3100-telemetry.c)
 *     posting            h3100_cq_post() (h3100-queue.c)
 *     interrupt          h3100_irq_notify() (h3100-irq.c)
 *
 * Writes that complete no block request of this file (DSM, Format, a
 * namespace's erase) enter at h3100_write_landed(), other commands at
 * h3100_req_complete(); the due timer and Abort at h3100_req_post_now().
 *
 * The whole data path, doorbell to interrupt: docs/design/data-path.md.
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
#include "h3100-life.h"
#include "trace.h"

/*
 * The block request of a Read, Write, Write Zeroes or Flush is back
 * (done, failed or cancelled), in the request's context
 * (docs/design/threading.md): what it means for the command, then its
 * completion.
 */
void h3100_rw_cb(void *opaque, int ret)
{
    H3100Req *req = opaque;
    H3100State *s = req->s;
    uint8_t opc = req->cmd.opcode;
    bool write = opc == NVME_CMD_WRITE || opc == NVME_CMD_WRITE_ZEROES;
    bool cancelled;

    h3100_lock(s);
    /* nothing below starts a reset or deletes a queue */
    cancelled = h3100_req_cancelled(req);
    trace_h3100_io_done(req->sq->sqid, le16_to_cpu(req->cmd.cid), ret);
    req->aiocb = NULL;
    if (ret < 0 && (ret == -ECANCELED || cancelled)) {
        req->status = NVME_CMD_ABORT_SQ_DEL;
    } else if (ret == -EFAULT && (opc == NVME_CMD_READ ||
                                  opc == NVME_CMD_WRITE)) {
        /*
         * h3100_blk_dma() refused the data: its memory stopped being
         * guest RAM after the command was parsed.  The guest's doing,
         * not the host's: no werror policy (the backend's own -EFAULT
         * reaches us as -EIO).
         */
        req->status = NVME_DATA_TRAS_ERROR;
    } else if (ret < 0 && h3100_blk_failed(req, ret)) {
        goto out;                       /* kept: sent again on `cont` */
    }
    h3100_vcache_landed(req);
    if (opc == NVME_CMD_FLUSH && !req->status) {
        h3100_vcache_flushed(s, req->vc_gen);
    }
    if (write && !cancelled && h3100_durable_wait(req)) {
        goto out;                       /* completed after the next flush */
    }
    h3100_req_complete(req);
out:
    h3100_unlock(s);
}

/*
 * The block layer has a write (Write, Write Zeroes, DSM, Format): it
 * completes now, or after the flush that makes it durable against QEMU's
 * death (h3100-durable.c).  A cancelled write completes at once.
 */
void h3100_write_landed(H3100Req *req)
{
    req->aiocb = NULL;
    if (h3100_req_cancelled(req) || !h3100_durable_wait(req)) {
        h3100_req_complete(req);
    }
}

/*
 * Data I/O done (or none): post now, or when the model says the drive is
 * done.  Block-layer callbacks end here, so posting runs with the
 * re-entrancy guard engaged.  During a reset, or once its queue is being
 * deleted, nobody waits for the completion: the request is dropped, and
 * the last one of a deleted queue lets the deletion finish.
 */
void h3100_req_complete(H3100Req *req)
{
    H3100State *s = req->s;
    H3100SQueue *sq = req->sq;
    bool was;

    req->io_done = true;
    req->aiocb = NULL;
    if (h3100_inflight_remove(s, req)) {
        h3100_maint_io_drained(s);
    }
    trace_h3100_req_done(sq->sqid, le16_to_cpu(req->cmd.cid),
                         req->status, req->done_ns);
    if (s->stopping || sq->deleting) {
        h3100_req_release(req);
        if (sq->deleting && QTAILQ_EMPTY(&sq->out_list)) {
            qemu_bh_schedule(sq->bh);
        }
        return;
    }
    was = h3100_guard_enter(s);
    if (!h3100_req_wait(s, req)) {
        h3100_req_post_now(req);
    }
    h3100_guard_leave(s, was);
}

/*
 * The drive completes @req (its time has come, or an Abort ends it; it
 * waits on no g->pending): it goes on its CQ's list, out to the CQ as far
 * as there is room, and the host is told.
 */
void h3100_req_post_now(H3100Req *req)
{
    H3100State *s = req->s;
    H3100CQueue *cq = s->cq[req->sq->cqid];
    unsigned posted;

    if (req->status && req->status != NVME_NO_COMPLETE) {
        h3100_error_log_add(s, req);
    }
    if (req->sq->sqid) {
        h3100_telemetry_note(s, req);
    }
    QTAILQ_REMOVE(&req->sq->out_list, req, entry);
    QTAILQ_INSERT_TAIL(&cq->req_list, req, entry);
    req->posting = true;
    posted = h3100_cq_post(s, cq);
    h3100_irq_notify(s, cq, posted);
}
