/*
 * DapuStor H3100 NVMe SSD: submission and completion queues
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A command is fetched by its SQ's bottom half and handed to the admin or
 * I/O dispatcher.  When its data I/O is done it waits, on one list ordered
 * by the model's completion time and one timer, until the model says the
 * drive completes it; it is then posted to its CQ.
 *
 * Shadow doorbells (Doorbell Buffer Config) apply to I/O queues: the tail
 * and head come from the shadow buffer, the event index is written back.
 *
 * Deleting an I/O SQ cancels its block requests without waiting (no
 * nested event loop, so nothing re-enters the admin queue), in the
 * queue's own context (h3100-qgroup.c); the queue goes, and the Delete
 * command completes, when the last of them is back.  Completions of a
 * deleted queue's commands are not posted.
 *
 * A command's completion, from its block I/O to the interrupt, reads top
 * to bottom in h3100-complete.c; interrupts are h3100-irq.c's; a posted
 * command's release is h3100-req.c's.
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "system/kvm.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-cmd.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
#include "trace.h"

/* ---- shadow doorbells -------------------------------------------------- */

static void h3100_sq_shadow_tail(H3100State *s, H3100SQueue *sq)
{
    uint32_t tail;

    if (!sq->db_addr) {
        return;
    }
    if (h3100_dma_ld32(s, sq->db_addr, &tail) != MEMTX_OK) {
        return;
    }
    if (tail >= sq->size) {
        H3100_GUEST_ERR(h3100_ub_shadow_tail, "shadow SQ %u tail %u >= size "
                        "%u, ignored", sq->sqid, tail, sq->size);
        return;
    }
    sq->tail = tail;
}

static void h3100_sq_eventidx(H3100State *s, H3100SQueue *sq)
{
    if (sq->ei_addr) {
        h3100_dma_st32(s, sq->ei_addr, sq->tail);
    }
}

static void h3100_cq_shadow_head(H3100State *s, H3100CQueue *cq)
{
    uint32_t head;
    uint32_t posted, consumed;

    if (!cq->db_addr) {
        return;
    }
    if (h3100_dma_ld32(s, cq->db_addr, &head) != MEMTX_OK) {
        return;
    }
    posted = (cq->tail + cq->size - cq->head) % cq->size;
    consumed = (head + cq->size - cq->head) % cq->size;
    if (head >= cq->size || consumed > posted) {
        H3100_GUEST_ERR(h3100_ub_shadow_head, "shadow CQ %u head %u invalid, "
                        "ignored", cq->cqid, head);
        return;
    }
    cq->head = head;
    h3100_dma_st32(s, cq->ei_addr, head);
}

static void h3100_sq_notifier(EventNotifier *e)
{
    H3100SQueue *sq = container_of(e, H3100SQueue, notifier);

    if (event_notifier_test_and_clear(e)) {
        qemu_bh_schedule(sq->bh);
    }
}


static void h3100_cq_notifier(EventNotifier *e)
{
    H3100CQueue *cq = container_of(e, H3100CQueue, notifier);
    H3100State *s = cq->s;
    unsigned posted;

    if (!event_notifier_test_and_clear(e)) {
        return;
    }
    h3100_lock(s);
    h3100_cq_shadow_head(s, cq);
    if (cq->head == cq->tail) {
        h3100_irq_deassert(s, cq);
    }
    /* wakes the SQs whose slots it frees */
    posted = h3100_cq_post(s, cq);
    h3100_irq_notify(s, cq, posted);
    h3100_unlock(s);
}

static void h3100_ioeventfd_add(H3100State *s, EventNotifier *n,
                                hwaddr off, EventNotifierHandler *h,
                                bool *on)
{
    /*
     * eventfds need the BQL: only without IOThreads.  And only with
     * KVM, where they spare the vCPU an exit: under TCG the vCPU thread
     * runs the MMIO handler anyway, and an eventfd would only add a hop
     * through the main loop to every doorbell (and lose its virtual time).
     */
    if (*on || !h3100_all_main(s) || !kvm_enabled() ||
        event_notifier_init(n, 0) < 0) {
        return;
    }
    event_notifier_set_handler(n, h);
    memory_region_add_eventfd(&s->iomem, off, 4, false, 0, n);
    *on = true;
}

static void h3100_ioeventfd_del(H3100State *s, EventNotifier *n,
                                hwaddr off, bool *on)
{
    if (!*on) {
        return;
    }
    memory_region_del_eventfd(&s->iomem, off, 4, false, 0, n);
    event_notifier_set_handler(n, NULL);
    event_notifier_cleanup(n);
    *on = false;
}

static hwaddr h3100_db_off(uint16_t qid, bool is_cq)
{
    return H3100_DB_OFFSET + qid * 8 + (is_cq ? 4 : 0);
}

void h3100_dbbuf_setup_queue(H3100State *s, H3100SQueue *sq,
                             H3100CQueue *cq)
{
    if (!s->dbbuf_enabled) {
        return;
    }
    if (sq && sq->sqid) {
        sq->db_addr = s->dbbuf_dbs + h3100_db_off(sq->sqid, false) -
                      H3100_DB_OFFSET;
        sq->ei_addr = s->dbbuf_eis + h3100_db_off(sq->sqid, false) -
                      H3100_DB_OFFSET;
        h3100_ioeventfd_add(s, &sq->notifier, h3100_db_off(sq->sqid, false),
                            h3100_sq_notifier, &sq->ioeventfd);
    }
    if (cq && cq->cqid) {
        cq->db_addr = s->dbbuf_dbs + h3100_db_off(cq->cqid, true) -
                      H3100_DB_OFFSET;
        cq->ei_addr = s->dbbuf_eis + h3100_db_off(cq->cqid, true) -
                      H3100_DB_OFFSET;
        h3100_ioeventfd_add(s, &cq->notifier, h3100_db_off(cq->cqid, true),
                            h3100_cq_notifier, &cq->ioeventfd);
    }
}

void h3100_queue_ioeventfd_stop(H3100State *s)
{
    for (unsigned i = 1; i <= s->max_ioqpairs; i++) {
        if (s->sq[i]) {
            h3100_ioeventfd_del(s, &s->sq[i]->notifier,
                                h3100_db_off(i, false), &s->sq[i]->ioeventfd);
        }
        if (s->cq[i]) {
            h3100_ioeventfd_del(s, &s->cq[i]->notifier,
                                h3100_db_off(i, true), &s->cq[i]->ioeventfd);
        }
    }
}

/* ---- completion posting ------------------------------------------------ */

static bool h3100_cq_full(H3100CQueue *cq)
{
    return (cq->tail + 1) % cq->size == cq->head;
}

static bool h3100_cq_write(H3100State *s, H3100CQueue *cq, H3100Req *req)
{
    hwaddr addr = cq->dma_addr + (hwaddr)cq->tail * sizeof(NvmeCqe);

    req->cqe.sq_id = cpu_to_le16(req->sq->sqid);
    req->cqe.sq_head = cpu_to_le16(req->sq->head);
    req->cqe.status = cpu_to_le16((req->status << 1) | cq->phase);
    if (h3100_dma_write(s, addr, &req->cqe, sizeof(req->cqe))) {
        H3100_GUEST_ERR(h3100_err_cqe_write, "CQ %u entry at 0x%" PRIx64
                        " not writable: controller fatal status", cq->cqid,
                        addr);
        stl_le_p(&s->bar.csts, ldl_le_p(&s->bar.csts) | NVME_CSTS_FAILED);
        return false;
    }
    trace_h3100_cqe(cq->cqid, req->sq->sqid, le16_to_cpu(req->cqe.cid),
                    req->status, le32_to_cpu(req->cqe.result));
    cq->tail++;
    if (cq->tail >= cq->size) {
        cq->tail = 0;
        cq->phase = !cq->phase;
    }
    return true;
}

/*
 * Write the CQ's waiting completions while it has room; returns how many
 * (the caller tells the host: h3100_irq_notify()).
 */
unsigned h3100_cq_post(H3100State *s, H3100CQueue *cq)
{
    unsigned posted = 0;
    H3100Req *req;

    if (h3100_off_bus(s)) {
        return 0;                     /* they wait: the link comes back */
    }
    h3100_cq_shadow_head(s, cq);
    while ((req = QTAILQ_FIRST(&cq->req_list)) && !h3100_cq_full(cq)) {
        if (NVME_CSTS_FAILED & ldl_le_p(&s->bar.csts)) {
            break;
        }
        QTAILQ_REMOVE(&cq->req_list, req, entry);
        req->posting = false;
        /* the request goes back to the SQ's free list */
        QTAILQ_INSERT_TAIL(&req->sq->out_list, req, entry);
        if (!h3100_cq_write(s, cq, req)) {
            h3100_req_release(req);
            break;
        }
        h3100_req_release(req);
        qemu_bh_schedule(req->sq->bh);   /* a slot freed */
        posted++;
    }
    return posted;
}

/* ---- submission -------------------------------------------------------- */

static void h3100_req_start(H3100SQueue *sq, H3100Req *req,
                            const NvmeCmd *cmd)
{
    H3100State *s = sq->s;

    QTAILQ_REMOVE(&sq->free_list, req, entry);
    QTAILQ_INSERT_TAIL(&sq->out_list, req, entry);
    memset(&req->cqe, 0, sizeof(req->cqe));
    req->cmd = *cmd;
    req->cqe.cid = cmd->cid;
    req->status = NVME_SUCCESS;
    req->io_done = false;
    req->fua = false;
    req->done_ns = 0;
    req->start_ns = sq->sqid && s->tel.file ? h3100_now(s) : 0;
    req->seq = s->fetch_seq++;
    req->aio_left = 0;
    req->aiocb = NULL;
    memset(&req->op, 0, sizeof(req->op));
}

static void h3100_sq_delete_done(H3100State *s, H3100SQueue *sq);

static void h3100_sq_fetch(H3100SQueue *sq)
{
    H3100State *s = sq->s;
    unsigned n = 0;
    H3100Req *req;
    NvmeCmd cmd;
    uint16_t status;
    hwaddr addr;

    if (s->quiesced) {
        return;                       /* the VM is stopped: h3100-runstate.c */
    }
    if (h3100_off_bus(s)) {
        return;                       /* a link-down fault: h3100-fault.c */
    }
    if (sq->deleting) {
        if (QTAILQ_EMPTY(&sq->out_list)) {
            h3100_sq_delete_done(s, sq);
        }
        return;
    }
    if (s->stopping) {
        return;
    }
    h3100_sq_shadow_tail(s, sq);
    while (sq->head != sq->tail && (req = QTAILQ_FIRST(&sq->free_list))) {
        if (NVME_CSTS_FAILED & ldl_le_p(&s->bar.csts)) {
            return;
        }
        if (n++ >= H3100_SQ_BATCH) {
            qemu_bh_schedule(sq->bh);     /* round robin with other SQs */
            return;
        }
        addr = sq->dma_addr + (hwaddr)sq->head * sizeof(NvmeCmd);
        if (h3100_dma_read(s, addr, &cmd, sizeof(cmd))) {
            H3100_GUEST_ERR(h3100_err_sqe_read, "SQ %u entry at 0x%" PRIx64
                            " not readable: controller fatal status",
                            sq->sqid, addr);
            stl_le_p(&s->bar.csts, ldl_le_p(&s->bar.csts) | NVME_CSTS_FAILED);
            return;
        }
        sq->head = (sq->head + 1) % sq->size;
        h3100_req_start(sq, req, &cmd);
        trace_h3100_cmd(sq->sqid, le16_to_cpu(cmd.cid), cmd.opcode,
                        h3100_cmd_name(!sq->sqid, cmd.opcode),
                        le32_to_cpu(cmd.nsid));
        status = h3100_fault_at_fetch(s, req);
        if (!status) {
            status = sq->sqid ? h3100_io_cmd(s, req) :
                                h3100_admin_cmd(s, req);
        }
        if (status != NVME_NO_COMPLETE) {
            req->status = status;
            h3100_req_complete(req);
        } else if (!req->held &&
                   (req->aiocb || (sq->sqid && !req->io_done))) {
            /*
             * An I/O command whose work is out without a block request
             * of its own (Write Zeroes' and Deallocate's unmaps) is in
             * flight too: Format and Sanitize wait for it, and the hold
             * keeps virtual time from passing it.
             */
            h3100_inflight_add(s, req);
        }
        h3100_sq_eventidx(s, sq);
        h3100_sq_shadow_tail(s, sq);
    }
}

/*
 * The SQ's bottom half, in its group's context.  It looks the queue up
 * under the lock: another thread may have deleted it meanwhile (then a
 * queue created since with the same qid, in the same group, is fetched
 * from for nothing, harmlessly).
 */
static void h3100_sq_bh(void *opaque)
{
    H3100QRef *ref = opaque;
    H3100State *s = ref->s;

    h3100_lock(s);
    if (s->sq[ref->qid]) {
        h3100_sq_fetch(s->sq[ref->qid]);
    }
    h3100_unlock(s);
}

void h3100_sq_doorbell(H3100State *s, H3100SQueue *sq, uint32_t tail)
{
    /*
     * Commands arrive now, not when the bottom half gets to them: under
     * -icount another thread sees the virtual clock only as of the vCPU's
     * last exit, so the doorbell's time becomes the model's floor.
     */
    h3100_now(s);
    /* with a shadow doorbell the write only says "look": the BH reads it */
    if (!sq->db_addr) {
        sq->tail = tail;
    }
    if (h3100_in_group(sq->g) &&
        (sq->g->ctx != qemu_get_aio_context() ||
         s->vcpu_waits)) {
        /*
         * Fetch now, so the commands are under way when the write
         * returns.  In the IOThread (on the vCPU's behalf under qtest and
         * -icount, h3100-regs.c), not at whatever time the IOThread gets
         * to a bottom half: qtest would step virtual time past them.  Under
         * -icount in the main loop, not when the main loop thread wakes
         * up: the vCPU would spin on meanwhile and turn that host time
         * into virtual time, microseconds per command that a
         * drive with timing=off would show as its latency.  The memory
         * core's re-entrancy guard is engaged for this MMIO write, as it
         * is for the bottom half.
         */
        h3100_sq_fetch(sq);
        return;
    }
    qemu_bh_schedule(sq->bh);     /* ... from a vCPU, into an IOThread */
}

/*
 * The head moved: post what waited for room.  The SQs need no wake-up
 * of their own: one waits only for a free request slot, and posting
 * frees slots and wakes their SQ (h3100_cq_post).  Scheduling every SQ's
 * bottom half here cost the main loop a wake-up per command.
 */
void h3100_cq_doorbell(H3100State *s, H3100CQueue *cq, uint32_t head)
{
    unsigned posted;

    if (cq->db_addr) {
        h3100_cq_shadow_head(s, cq);     /* as with an ioeventfd (KVM) */
    } else {
        cq->head = head;
    }
    if (cq->head == cq->tail) {
        h3100_irq_deassert(s, cq);
    } else {
        h3100_irq_resend(s, cq);
    }
    posted = h3100_cq_post(s, cq);
    h3100_irq_notify(s, cq, posted);
}

/* ---- creation and deletion ----------------------------------------------- */

void h3100_sq_init(H3100State *s, H3100SQueue *sq, uint64_t dma_addr,
                   uint16_t sqid, uint16_t cqid, uint32_t size)
{
    sq->s = s;
    sq->g = s->qg[sqid];
    sq->sqid = sqid;
    sq->cqid = cqid;
    sq->size = size;
    sq->dma_addr = dma_addr;
    sq->reqs = g_new0(H3100Req, size);
    QTAILQ_INIT(&sq->free_list);
    QTAILQ_INIT(&sq->out_list);
    for (uint32_t i = 0; i < size; i++) {
        sq->reqs[i].s = s;
        sq->reqs[i].sq = sq;
        QTAILQ_INSERT_TAIL(&sq->free_list, &sq->reqs[i], entry);
    }
    sq->bh = aio_bh_new_guarded(sq->g->ctx, h3100_sq_bh, &s->qref[sqid],
                                h3100_guard_in(s, sq->g->ctx));
    QTAILQ_INSERT_TAIL(&s->cq[cqid]->sq_list, sq, entry);
    s->sq[sqid] = sq;
    h3100_dbbuf_setup_queue(s, sq, NULL);
    trace_h3100_sq_create(sqid, cqid, size, dma_addr);
}

void h3100_cq_init(H3100State *s, H3100CQueue *cq, uint64_t dma_addr,
                   uint16_t cqid, uint16_t vector, uint32_t size, bool ien)
{
    cq->s = s;
    cq->cqid = cqid;
    cq->size = size;
    cq->dma_addr = dma_addr;
    cq->phase = 1;
    cq->irq_enabled = ien;
    cq->vector = vector;
    QTAILQ_INIT(&cq->req_list);
    QTAILQ_INIT(&cq->sq_list);
    s->cq[cqid] = cq;
    h3100_dbbuf_setup_queue(s, NULL, cq);
    trace_h3100_cq_create(cqid, vector, size, dma_addr, ien);
}

/* Forget a request that will never be posted (queue deletion, reset). */
static void h3100_req_drop(H3100State *s, H3100Req *req)
{
    if (req->posting) {
        QTAILQ_REMOVE(&s->cq[req->sq->cqid]->req_list, req, entry);
        req->posting = false;
        QTAILQ_INSERT_TAIL(&req->sq->out_list, req, entry);
    }
    h3100_req_release(req);
}

/*
 * Forget the commands that wait only for their time or a CQ slot, or
 * that a timeout fault holds.
 */
static void h3100_sq_drop_waiting(H3100State *s, H3100SQueue *sq)
{
    for (uint32_t i = 0; i < sq->size; i++) {
        H3100Req *req = &sq->reqs[i];

        if (req->pending || req->posting || req->held) {
            h3100_req_drop(s, req);
        }
    }
}

/*
 * Free a queue that has no block request in flight (after a drain, or
 * once a deletion has seen them all back).
 */
static void h3100_sq_destroy(H3100State *s, H3100SQueue *sq)
{
    H3100Req *req, *next;

    h3100_ioeventfd_del(s, &sq->notifier, h3100_db_off(sq->sqid, false),
                        &sq->ioeventfd);
    for (unsigned i = 0; i <= H3100_AERL; i++) {
        if (s->aer_reqs[i] && s->aer_reqs[i]->sq == sq) {
            s->aer_reqs[i] = NULL;
        }
    }
    h3100_sq_drop_waiting(s, sq);
    QTAILQ_FOREACH_SAFE(req, &sq->out_list, entry, next) {
        h3100_req_release(req);
    }
    if (s->cq[sq->cqid]) {
        QTAILQ_REMOVE(&s->cq[sq->cqid]->sq_list, sq, entry);
    }
    qemu_bh_delete(sq->bh);
    s->sq[sq->sqid] = NULL;
    trace_h3100_sq_delete(sq->sqid);
    g_free(sq->reqs);
    g_free(sq);
}

/*
 * Cancel a deleted queue's block requests: in its group's context, where
 * they were submitted (a DMA request is not thread-safe).  Over the fixed
 * request array, as a cancel may complete its request at once.
 */
static void h3100_sq_cancel(H3100SQueue *sq)
{
    for (uint32_t i = 0; i < sq->size; i++) {
        if (sq->reqs[i].aiocb) {
            blk_aio_cancel_async(sq->reqs[i].aiocb);
        }
    }
}

/* The group's bottom half: its queues being deleted (again: harmless). */
void h3100_sq_cancel_deleted(H3100QGroup *g)
{
    H3100State *s = g->s;

    for (unsigned i = 1; i <= s->max_ioqpairs; i++) {
        if (s->sq[i] && s->sq[i]->g == g && s->sq[i]->deleting) {
            trace_h3100_sq_cancel(i, g->idx);
            h3100_sq_cancel(s->sq[i]);
        }
    }
}

/*
 * Delete I/O SQ: its commands are aborted, those with block I/O in
 * flight by cancelling it, without waiting: @del completes when the last
 * one is back (h3100_sq_delete_done).
 */
uint16_t h3100_sq_delete(H3100State *s, H3100SQueue *sq, H3100Req *del)
{
    sq->deleting = true;
    h3100_ioeventfd_del(s, &sq->notifier, h3100_db_off(sq->sqid, false),
                        &sq->ioeventfd);
    h3100_sq_drop_waiting(s, sq);
    for (uint32_t i = 0; i < sq->size; i++) {
        h3100_blk_unpark(&sq->reqs[i]);
    }
    if (h3100_in_group(sq->g)) {
        h3100_sq_cancel(sq);
    } else if (!QTAILQ_EMPTY(&sq->out_list)) {
        qemu_bh_schedule(sq->g->bh);  /* h3100_sq_cancel_deleted there */
    }
    if (QTAILQ_EMPTY(&sq->out_list)) {
        h3100_sq_destroy(s, sq);
        return NVME_SUCCESS;
    }
    trace_h3100_sq_delete_wait(sq->sqid);
    sq->del_req = del;
    return NVME_NO_COMPLETE;
}

static void h3100_sq_delete_done(H3100State *s, H3100SQueue *sq)
{
    H3100Req *del = sq->del_req;

    h3100_sq_destroy(s, sq);
    if (del) {
        del->status = NVME_SUCCESS;
        h3100_req_complete(del);
    }
}

void h3100_cq_free(H3100State *s, H3100CQueue *cq)
{
    h3100_ioeventfd_del(s, &cq->notifier, h3100_db_off(cq->cqid, true),
                        &cq->ioeventfd);
    if (cq->head != cq->tail) {
        cq->head = cq->tail;
        h3100_irq_deassert(s, cq);
    }
    s->cq[cq->cqid] = NULL;
    trace_h3100_cq_delete(cq->cqid);
    g_free(cq);
}

void h3100_queues_reset(H3100State *s)
{
    for (unsigned i = 0; i <= s->max_ioqpairs; i++) {
        if (s->sq[i]) {
            h3100_sq_destroy(s, s->sq[i]);
        }
    }
    for (unsigned i = 0; i <= s->max_ioqpairs; i++) {
        if (s->cq[i]) {
            h3100_cq_free(s, s->cq[i]);
        }
    }
    for (unsigned i = 0; i < s->nvec; i++) {
        s->vec[i].count = 0;
        s->vec[i].no_coalesce = false;
        s->vec[i].s = s;
        s->vec[i].idx = i;
        h3100_timer_del(s->vec[i].timer);
    }
    h3100_due_reset(s);
}
