/*
 * DapuStor H3100 NVMe SSD: admin command dispatch, queues, Abort and AER
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Every admin command except Asynchronous Event Request is timed by the
 * model (H3100_OP_ADMIN: firmware time).  Events wait in a small queue
 * and are reported one per outstanding AER; once an event of a type is
 * reported, that type is masked until the host reads the log page named
 * in the event (with RAE cleared).
 */

#include "qemu/osdep.h"
#include "hw/pci/msix.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-cmd.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
#include "trace.h"

/* ---- asynchronous events ----------------------------------------------- */

static void h3100_aer_process(H3100State *s)
{
    unsigned i;

    while (s->outstanding_aers) {
        for (i = 0; i < s->aer_queued; i++) {
            if (!(s->aer_mask & (1u << s->aer_queue[i].event_type))) {
                break;
            }
        }
        if (i == s->aer_queued) {
            return;
        }
        H3100Req *req = NULL;
        for (unsigned j = 0; j <= H3100_AERL; j++) {
            if (s->aer_reqs[j]) {
                req = s->aer_reqs[j];
                s->aer_reqs[j] = NULL;
                break;
            }
        }
        if (!req) {
            s->outstanding_aers = 0;
            return;
        }
        s->outstanding_aers--;
        NvmeAerResult *ev = &s->aer_queue[i];
        trace_h3100_aer_post(ev->event_type, ev->event_info, ev->log_page);
        s->aer_mask |= 1u << ev->event_type;
        s->aer_mask_log[ev->event_type & 7] = ev->log_page;
        memcpy(&req->cqe.result, ev, sizeof(req->cqe.result));
        memmove(&s->aer_queue[i], &s->aer_queue[i + 1],
                (s->aer_queued - i - 1) * sizeof(*ev));
        s->aer_queued--;
        req->status = NVME_SUCCESS;
        h3100_req_complete(req);
    }
}

void h3100_aer_enqueue(H3100State *s, uint8_t type, uint8_t info,
                       uint8_t log)
{
    NvmeAerResult *ev;

    trace_h3100_aer_enqueue(type, info, log);
    for (unsigned i = 0; i < s->aer_queued; i++) {
        ev = &s->aer_queue[i];
        if (ev->event_type == type && ev->event_info == info) {
            return;                     /* already waiting */
        }
    }
    if (s->aer_queued == H3100_AER_QUEUE_MAX) {
        return;
    }
    ev = &s->aer_queue[s->aer_queued++];
    ev->event_type = type;
    ev->event_info = info;
    ev->log_page = log;
    ev->resv = 0;
    h3100_aer_process(s);
}

/*
 * An event type stays masked until the host reads the log page named in
 * the event reported: a Notice for log 04h is not cleared by reading 03h.
 */
void h3100_aer_log_read(H3100State *s, uint8_t lid)
{
    for (unsigned type = 0; type < ARRAY_SIZE(s->aer_mask_log); type++) {
        if ((s->aer_mask & (1u << type)) && s->aer_mask_log[type] == lid) {
            s->aer_mask &= ~(1u << type);
        }
    }
    h3100_aer_process(s);
}

void h3100_aer_drop(H3100State *s, uint8_t type, uint8_t info)
{
    for (unsigned i = 0; i < s->aer_queued; i++) {
        NvmeAerResult *ev = &s->aer_queue[i];

        if (ev->event_type == type && ev->event_info == info) {
            memmove(ev, ev + 1, (s->aer_queued - i - 1) * sizeof(*ev));
            s->aer_queued--;
            return;                     /* queued at most once */
        }
    }
}

void h3100_aer_reset(H3100State *s)
{
    memset(s->aer_reqs, 0, sizeof(s->aer_reqs));
    s->outstanding_aers = 0;
    s->aer_queued = 0;
    s->aer_mask = 0;
}

static uint16_t h3100_aer(H3100State *s, H3100Req *req)
{
    if (s->outstanding_aers > H3100_AERL) {
        return NVME_AER_LIMIT_EXCEEDED;
    }
    for (unsigned i = 0; i <= H3100_AERL; i++) {
        if (!s->aer_reqs[i]) {
            s->aer_reqs[i] = req;
            break;
        }
    }
    s->outstanding_aers++;
    h3100_aer_process(s);
    return NVME_NO_COMPLETE;
}

/* ---- queues --------------------------------------------------------- */

/*
 * A queue is @bytes of contiguous guest RAM (PC=1): the device reads an
 * SQ and writes a CQ there, so anything else (MMIO, ROM for a CQ) is
 * refused before the queue exists.
 */
static uint16_t h3100_check_queue_addr(H3100State *s, uint64_t prp1,
                                       uint64_t bytes, bool write)
{
    if (!prp1 || (prp1 & (s->page_size - 1))) {
        return NVME_INVALID_PRP_OFFSET | NVME_DNR;
    }
    if (!h3100_guest_ram(s, prp1, bytes, write)) {
        H3100_GUEST_ERR(h3100_err_queue_ram, "queue at 0x%" PRIx64 "+0x%"
                        PRIx64 " is not %sguest RAM", prp1, bytes,
                        write ? "writable " : "");
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    return NVME_SUCCESS;
}

static uint16_t h3100_create_cq(H3100State *s, H3100Req *req)
{
    NvmeCreateCq *c = (NvmeCreateCq *)&req->cmd;
    uint16_t cqid = le16_to_cpu(c->cqid);
    uint16_t vector = le16_to_cpu(c->irq_vector);
    uint32_t qsize = le16_to_cpu(c->qsize);
    uint16_t flags = le16_to_cpu(c->cq_flags);
    uint32_t cc = ldl_le_p(&s->bar.cc);
    uint16_t status;

    trace_h3100_admin_create_cq(cqid, qsize + 1, vector, flags);
    if (!cqid || cqid > s->max_ioqpairs || s->cq[cqid]) {
        return NVME_INVALID_QID | NVME_DNR;
    }
    if (!qsize || qsize > H3100_MQES) {
        return NVME_MAX_QSIZE_EXCEEDED | NVME_DNR;
    }
    if (!NVME_CQ_FLAGS_PC(flags) || NVME_CC_IOCQES(cc) != 4) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    status = h3100_check_queue_addr(s, le64_to_cpu(c->prp1),
                                    (qsize + 1) * sizeof(NvmeCqe), true);
    if (status) {
        return status;
    }
    if (vector >= s->nvec ||
        (vector && !msix_enabled(PCI_DEVICE(s)))) {
        return NVME_INVALID_IRQ_VECTOR | NVME_DNR;
    }
    h3100_cq_init(s, g_new0(H3100CQueue, 1), le64_to_cpu(c->prp1), cqid,
                  vector, qsize + 1, NVME_CQ_FLAGS_IEN(flags));
    return NVME_SUCCESS;
}

static uint16_t h3100_create_sq(H3100State *s, H3100Req *req)
{
    NvmeCreateSq *c = (NvmeCreateSq *)&req->cmd;
    uint16_t sqid = le16_to_cpu(c->sqid);
    uint16_t cqid = le16_to_cpu(c->cqid);
    uint32_t qsize = le16_to_cpu(c->qsize);
    uint16_t flags = le16_to_cpu(c->sq_flags);
    uint32_t cc = ldl_le_p(&s->bar.cc);
    uint16_t status;

    trace_h3100_admin_create_sq(sqid, qsize + 1, cqid, flags);
    if (!sqid || sqid > s->max_ioqpairs || s->sq[sqid]) {
        return NVME_INVALID_QID | NVME_DNR;
    }
    if (!cqid || cqid > s->max_ioqpairs || !s->cq[cqid]) {
        return NVME_INVALID_CQID | NVME_DNR;
    }
    if (!qsize || qsize > H3100_MQES) {
        return NVME_MAX_QSIZE_EXCEEDED | NVME_DNR;
    }
    if (!NVME_SQ_FLAGS_PC(flags) || NVME_CC_IOSQES(cc) != 6) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    status = h3100_check_queue_addr(s, le64_to_cpu(c->prp1),
                                    (qsize + 1) * sizeof(NvmeCmd), false);
    if (status) {
        return status;
    }
    h3100_sq_init(s, g_new0(H3100SQueue, 1), le64_to_cpu(c->prp1), sqid,
                  cqid, qsize + 1);
    return NVME_SUCCESS;
}

static uint16_t h3100_delete_sq(H3100State *s, H3100Req *req)
{
    uint16_t qid = le32_to_cpu(req->cmd.cdw10) & 0xffff;

    trace_h3100_admin_delete_sq(qid);
    if (!qid || qid > s->max_ioqpairs || !s->sq[qid] ||
        s->sq[qid]->deleting) {
        return NVME_INVALID_QID | NVME_DNR;
    }
    return h3100_sq_delete(s, s->sq[qid], req);
}

static uint16_t h3100_delete_cq(H3100State *s, H3100Req *req)
{
    uint16_t qid = le32_to_cpu(req->cmd.cdw10) & 0xffff;

    trace_h3100_admin_delete_cq(qid);
    if (!qid || qid > s->max_ioqpairs || !s->cq[qid]) {
        return NVME_INVALID_QID | NVME_DNR;
    }
    if (!QTAILQ_EMPTY(&s->cq[qid]->sq_list)) {
        return NVME_INVALID_QUEUE_DEL | NVME_DNR;
    }
    h3100_cq_free(s, s->cq[qid]);
    return NVME_SUCCESS;
}

/* ---- abort -------------------------------------------------------------- */

/*
 * Aborts an outstanding AER, or a command whose data transfer is done and
 * that only waits for the drive's completion time.  A command with block
 * I/O in flight is not aborted (DW0 bit 0 set), as the spec allows.
 */
static uint16_t h3100_abort(H3100State *s, H3100Req *req)
{
    uint32_t dw10 = le32_to_cpu(req->cmd.cdw10);
    uint16_t sqid = dw10 & 0xffff;
    uint16_t cid = dw10 >> 16;
    H3100SQueue *sq;
    H3100Req *r;

    trace_h3100_admin_abort(sqid, cid);
    req->cqe.result = cpu_to_le32(1);
    if (sqid > s->max_ioqpairs || !s->sq[sqid]) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    sq = s->sq[sqid];
    QTAILQ_FOREACH(r, &sq->out_list, entry) {
        if (r == req || le16_to_cpu(r->cmd.cid) != cid) {
            continue;
        }
        for (unsigned i = 0; i <= H3100_AERL; i++) {
            if (s->aer_reqs[i] == r) {
                s->aer_reqs[i] = NULL;
                s->outstanding_aers--;
                r->status = NVME_CMD_ABORT_REQ;
                req->cqe.result = 0;
                h3100_pending_drop(s, r);
                h3100_req_post_now(r, h3100_now(s));
                return NVME_SUCCESS;
            }
        }
        if (r->held) {
            if (h3100_fault_abort(s, r)) {
                req->cqe.result = 0;
            }
            return NVME_SUCCESS;
        }
        if (r->pending) {
            r->status = NVME_CMD_ABORT_REQ;
            req->cqe.result = 0;
            h3100_pending_drop(s, r);
            h3100_req_post_now(r, h3100_now(s));
        }
        return NVME_SUCCESS;
    }
    return NVME_SUCCESS;
}

/* ---- dispatch ------------------------------------------------------------ */

/*
 * The admin command set (hw/tables/nvme-cmds.h): dispatch, the
 * Commands Supported and Effects log (h3100-log.c), the sanitize gate
 * and the trace names read it.
 */
const H3100Cmd h3100_admin_cmds[256] = {
    H3100_ADMIN_COMMANDS(H3100_CMD_ENTRY)
};

const char *h3100_cmd_name(bool admin, uint8_t opcode)
{
    const H3100Cmd *c = admin ? &h3100_admin_cmds[opcode] :
                                &h3100_io_cmds[opcode];

    return c->name ? c->name : "unsupported";
}

uint16_t h3100_admin_cmd(H3100State *s, H3100Req *req)
{
    const H3100Cmd *c = &h3100_admin_cmds[req->cmd.opcode];
    H3100Result r;

    if (NVME_CMD_FLAGS_FUSE(req->cmd.flags)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (c->flags & H3100_CMD_UNTIMED) {
        return c->fn(s, req);
    }
    /* the firmware looks at every command, one it does not know too */
    r = h3100_model_io(s, H3100_OP_ADMIN, 0, 0, false, 0);
    req->done_ns = r.done_ns;
    if (!c->fn) {
        trace_h3100_err_opcode(0, req->cmd.opcode);
        return NVME_INVALID_OPCODE | NVME_DNR;
    }
    if (s->san.active && !(c->flags & H3100_CMD_IN_SANITIZE)) {
        return H3100_SC_SANITIZE_IN_PROGRESS | NVME_DNR;
    }
    return c->fn(s, req);
}
