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
 *   h3100_rw_cb          an NVM command's block request is back
 *                        (h3100-io-done.c): host errors, the volatile
 *                        cache, durability
 *   h3100_req_complete   the command's data I/O is done, or it had none
 *     dropped            a reset or its queue's deletion: h3100_req_release()
 *                        (h3100-req.c)
 *     in flight          h3100_req_leave(): out of the in-flight list; a
 *                        Format or Sanitize may wait for that (h3100-req.c)
 *     a delay fault      h3100_fault_delay() (h3100-fault.c)
 *     its time           h3100_req_wait(): does it wait for the model's
 *                        completion time? (h3100-inflight.c)
 *   h3100_req_post_now   the drive completes it (h3100_reqs_post_now:
 *                        several at once, each CQ written and told once)
 *     link down          h3100_fault_link_lost(): the completion is lost,
 *                        the request released (h3100-fault.c)
 *     error log          h3100_error_log_add() (h3100-log.c)
 *     telemetry          h3100_telemetry_note() (h3100-telemetry.c)
 *     posting            h3100_cq_post() (h3100-queue.c), which releases
 *                        what it posted (h3100-req.c)
 *     interrupt          h3100_irq_notify() (h3100-irq.c), unless a
 *                        lost-irq fault drops it (h3100-fault.c)
 *
 * Writes that complete no block request of their own (DSM, Format, a
 * namespace's erase) enter at h3100_write_landed() (h3100-io-done.c),
 * other commands at h3100_req_complete(); Abort at h3100_req_post_now(),
 * the due timer at h3100_reqs_post_now(): the commands due within its
 * completion window, one interrupt per CQ.
 *
 * The whole data path, doorbell to interrupt: docs/design/data-path.md.
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-mgmt.h"
#include "h3100-life.h"
#include "trace.h"

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
    uint64_t now;
    bool was;

    req->io_done = true;
    req->aiocb = NULL;
    trace_h3100_req_done(sq->sqid, le16_to_cpu(req->cmd.cid),
                         req->status, req->done_ns);
    if (s->stopping || sq->deleting) {
        h3100_req_release(req);
        if (sq->deleting && QTAILQ_EMPTY(&sq->out_list)) {
            qemu_bh_schedule(sq->bh);
        }
        return;
    }
    h3100_req_leave(req, H3100_HOLD_INFLIGHT);
    now = h3100_now(s);
    h3100_fault_delay(s, req, now);
    if (h3100_req_wait(s, req, now)) {
        return;
    }
    was = h3100_guard_enter(s);
    h3100_req_post_now(req, now);
    h3100_guard_leave(s, was);
}

/*
 * The drive completes @req at model time @now: it goes on its CQ's list.
 * NULL when the completion is lost with the link (the request is
 * released); *@irq false when a lost-irq fault drops its interrupt.
 */
static H3100CQueue *h3100_req_enqueue(H3100Req *req, uint64_t now, bool *irq)
{
    H3100State *s = req->s;
    H3100CQueue *cq = s->cq[req->sq->cqid];

    if (h3100_fault_link_lost(s, req)) {
        return NULL;
    }
    *irq = !h3100_fault_lost_irq(s, req, now);
    if (req->status && req->status != NVME_NO_COMPLETE) {
        h3100_error_log_add(s, req);
    }
    if (req->sq->sqid) {
        h3100_telemetry_note(s, req, now);
    }
    QTAILQ_REMOVE(&req->sq->out_list, req, entry);
    QTAILQ_INSERT_TAIL(&cq->req_list, req, entry);
    req->posting = true;
    return cq;
}

/* Out to the CQ as far as there is room, and the host is told. */
static void h3100_cq_flush(H3100State *s, H3100CQueue *cq, bool irq)
{
    unsigned posted = h3100_cq_post(s, cq);

    if (irq) {
        h3100_irq_notify(s, cq, posted);
    }
}

/*
 * The drive completes @req at model time @now (its time has come, or an
 * Abort ends it; it waits on no g->pending).
 */
void h3100_req_post_now(H3100Req *req, uint64_t now)
{
    H3100CQueue *cq;
    bool irq;

    cq = h3100_req_enqueue(req, now, &irq);
    if (cq) {
        h3100_cq_flush(req->s, cq, irq);
    }
}

/*
 * The commands on @due (off any g->pending, linked by their pend entries)
 * complete together at model time @now, in @due's order: each goes on its
 * CQ's list, then each CQ they touched is written once and its host told
 * once, as a host that reaps a CQ per interrupt would take them anyway.
 */
void h3100_reqs_post_now(H3100State *s, H3100ReqList *due, uint64_t now)
{
    H3100CQueue *first = NULL, **last = &first, *cq;
    H3100Req *req;
    bool irq;

    while ((req = QTAILQ_FIRST(due))) {
        QTAILQ_REMOVE(due, req, pend);
        cq = h3100_req_enqueue(req, now, &irq);
        if (!cq) {
            continue;
        }
        if (!cq->batched) {
            cq->batched = true;
            cq->batch_irq = false;
            cq->batch_next = NULL;
            *last = cq;
            last = &cq->batch_next;
        }
        cq->batch_irq |= irq;
    }
    while ((cq = first)) {
        first = cq->batch_next;
        cq->batched = false;
        h3100_cq_flush(s, cq, cq->batch_irq);
    }
}
