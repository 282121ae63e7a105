/*
 * DapuStor H3100 NVMe SSD: where a command is held, and its release
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Besides its SQ's and CQ's lists, a command may be held in a few places
 * while it runs: one list here, each with what takes the command out.
 * The completion takes it out of one (h3100_req_leave()); its release
 * (posted, or dropped by a reset or its queue's deletion) out of all of
 * them, then gives its slot back to the SQ.  A concern that holds
 * commands adds a row; nothing else calls it on the way out.
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"

/*
 * The last I/O command with block I/O out tells what waits for the drain
 * (a Format or a Sanitize: h3100-maint.c).
 */
static void h3100_req_leave_inflight(H3100State *s, H3100Req *req)
{
    if (h3100_inflight_remove(s, req)) {
        h3100_maint_io_drained(s);
    }
}

static void h3100_req_leave_vcache(H3100State *s, H3100Req *req)
{
    if (h3100_req_is_write(req)) {
        h3100_vcache_landed(req);
    }
}

static void h3100_req_leave_memory(H3100State *s, H3100Req *req)
{
    h3100_req_unmap(req);
    g_free(req->buf);
    req->buf = NULL;
    if (req->iov.nalloc) {
        qemu_iovec_destroy(&req->iov);
    }
}

/* Each is a no-op where the command is not held; release runs them in order. */
static void (*const h3100_req_holds[H3100_HOLDS])(H3100State *s,
                                                  H3100Req *req) = {
    [H3100_HOLD_DEFERRED] = h3100_deferred_drop,  /* held while stopped */
    [H3100_HOLD_DURABLE] = h3100_durable_drop,    /* waiting for a flush */
    [H3100_HOLD_PENDING] = h3100_pending_drop,    /* waiting for its time */
    [H3100_HOLD_FAULT] = h3100_fault_unhold,      /* a timeout fault's */
    [H3100_HOLD_INFLIGHT] = h3100_req_leave_inflight, /* block I/O out */
    [H3100_HOLD_VCACHE] = h3100_req_leave_vcache, /* what a write overwrote */
    [H3100_HOLD_MEMORY] = h3100_req_leave_memory, /* its map, its buffers */
};

void h3100_req_leave(H3100Req *req, H3100Hold hold)
{
    h3100_req_holds[hold](req->s, req);
}

/* The request is done with: out of every hold, back to its SQ's free list. */
void h3100_req_release(H3100Req *req)
{
    H3100SQueue *sq = req->sq;

    for (H3100Hold hold = 0; hold < H3100_HOLDS; hold++) {
        h3100_req_leave(req, hold);
    }
    QTAILQ_REMOVE(&sq->out_list, req, entry);
    QTAILQ_INSERT_TAIL(&sq->free_list, req, entry);
}
