/*
 * DapuStor H3100 NVMe SSD: host I/O errors
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A block request that fails on the host (EIO from the disk, ENOSPC from
 * a full file system, blkdebug's injections) is handled as QEMU's own
 * drives handle it, by -drive werror= / rerror= (or this device's
 * properties of the same names): "report" gives the guest the status a
 * drive gives (Unrecovered Read Error, Write Fault; a media error in
 * SMART and an entry in the error log), "ignore" completes the command
 * as if it had worked, and "stop" (by default for ENOSPC on writes:
 * werror=enospc) pauses the VM with the request kept: on `cont` it is
 * sent again, so a full host disk pauses the guest instead of failing
 * its writes.  The model saw the command once; only the block request
 * is repeated.
 */

#include "qemu/osdep.h"
#include "system/dma.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "trace.h"

static bool h3100_op_is_read(uint8_t opcode)
{
    return opcode == NVME_CMD_READ || opcode == NVME_CMD_COMPARE;
}

/* The status a drive gives when its media fails this command. */
static uint16_t h3100_media_status(H3100Req *req)
{
    switch (req->cmd.opcode) {
    case NVME_CMD_READ:
    case NVME_CMD_COMPARE:
        return NVME_UNRECOVERED_READ;
    case NVME_CMD_WRITE:
    case NVME_CMD_WRITE_ZEROES:
    case NVME_CMD_FLUSH:
        return NVME_WRITE_FAULT;
    default:
        return NVME_INTERNAL_DEV_ERROR;
    }
}

/*
 * A block request of @req failed with @ret (< 0), and no reset or queue
 * deletion cancelled it (the caller's h3100_blk_cancelled()): the
 * host's error policy.  Returns true when the request is kept for a
 * retry (werror/rerror=stop: the VM is being stopped); else the command
 * completes, with @req->status set unless the action is "ignore".
 */
bool h3100_blk_failed(H3100Req *req, int ret)
{
    H3100State *s = req->s;
    bool is_read = h3100_op_is_read(req->cmd.opcode);
    BlockErrorAction action;

    action = blk_get_error_action(s->blk, is_read, -ret);
    trace_h3100_blk_error(req->sq->sqid, le16_to_cpu(req->cmd.cid), ret,
                          action);
    if (action == BLOCK_ERROR_ACTION_STOP) {
        QTAILQ_INSERT_TAIL(&s->retry, req, retry_entry);
        req->parked = true;
    } else if (action == BLOCK_ERROR_ACTION_REPORT) {
        req->status = h3100_media_error(s, req, h3100_media_status(req),
                                        false);
    }
    blk_error_action(s->blk, action, is_read, -ret);
    return action == BLOCK_ERROR_ACTION_STOP;
}

/* Send a kept request's block I/O again: only what the block layer does. */
static void h3100_blk_resubmit(H3100Req *req)
{
    H3100State *s = req->s;

    trace_h3100_blk_retry(req->sq->sqid, le16_to_cpu(req->cmd.cid));
    switch (req->cmd.opcode) {
    case NVME_CMD_READ:
        h3100_read_send(s, req);
        break;
    case NVME_CMD_WRITE:
    case NVME_CMD_WRITE_ZEROES:
        h3100_write_send(s, req);
        break;
    case NVME_CMD_FLUSH:
        req->aiocb = blk_aio_flush(s->blk, h3100_rw_cb, req);
        break;
    case NVME_CMD_COMPARE:
        req->aiocb = blk_aio_preadv(s->blk, req->offset, &req->iov, 0,
                                    h3100_compare_cb, req);
        break;
    default:
        /* only the commands above are ever kept */
        req->status = NVME_INTERNAL_DEV_ERROR;
        h3100_req_complete(req);
    }
}

/*
 * The VM runs again (`cont`): the kept requests of @g's queues are sent
 * again, from @g's context (h3100-qgroup.c's bottom half, scheduled by
 * h3100-runstate.c once the device is no longer quiesced), where their
 * block requests live.
 */
void h3100_blk_resend(H3100QGroup *g)
{
    H3100State *s = g->s;
    H3100Req *req, *next;

    QTAILQ_FOREACH_SAFE(req, &s->retry, retry_entry, next) {
        if (req->sq->g == g) {
            QTAILQ_REMOVE(&s->retry, req, retry_entry);
            req->parked = false;
            h3100_blk_resubmit(req);
        }
    }
}


/* Forget a kept request (its queue is deleted, or the controller reset). */
void h3100_blk_unpark(H3100Req *req)
{
    if (req->parked) {
        QTAILQ_REMOVE(&req->s->retry, req, retry_entry);
        req->parked = false;
        req->status = NVME_CMD_ABORT_SQ_DEL;
        h3100_req_complete(req);
    }
}

void h3100_blk_unpark_all(H3100State *s)
{
    while (!QTAILQ_EMPTY(&s->retry)) {
        h3100_blk_unpark(QTAILQ_FIRST(&s->retry));
    }
}

/* werror= / rerror= of the device, when set, replace the drive's. */
void h3100_blkerr_init(H3100State *s)
{
    BlockdevOnError rerror = s->rerror, werror = s->werror;

    if (rerror == BLOCKDEV_ON_ERROR_AUTO) {
        rerror = blk_get_on_error(s->blk, true);
    }
    if (werror == BLOCKDEV_ON_ERROR_AUTO) {
        werror = blk_get_on_error(s->blk, false);
    }
    blk_set_on_error(s->blk, rerror, werror);
    blk_iostatus_enable(s->blk);
    QTAILQ_INIT(&s->retry);
}
