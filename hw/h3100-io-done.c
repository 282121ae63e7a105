/*
 * DapuStor H3100 NVMe SSD: an NVM command's block request is back
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The first stage of a completion (h3100-complete.c has the whole map):
 * what the block layer's answer means for a Read, Write, Write Zeroes or
 * Flush, in order: the host's errors (h3100-blkerr.c), the volatile
 * cache (h3100-vcache.c), durability against QEMU's death
 * (h3100-durable.c); then the command completes (h3100_req_complete()).
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
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
    if (write) {
        h3100_vcache_landed(req);
    } else if (opc == NVME_CMD_FLUSH && !req->status) {
        h3100_vcache_flushed(s, req->op.flush.vc_gen);
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
