/*
 * DapuStor H3100 NVMe SSD: deallocate a range of the backend
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Format, Sanitize, Dataset Management and Write Zeroes make whole
 * ranges read as zeroes.  Asking the block layer to zero them all is not
 * harmless: on a raw file opened without discard=unmap (QEMU's default)
 * it zeroes with fallocate(ZERO_RANGE), which allocates what it zeroes,
 * so one Format of a sparse 0.8 TB image wrote 800 GB to the host's disk
 * and filled it.  Only what the backend has allocated needs zeroing: the
 * range is walked with block status and the parts that already read as
 * zeroes are left alone, so the cost is that of what is mapped, not of
 * the range.
 *
 * While the VM is stopped (h3100-runstate.c) an unmap starts no block
 * request: it waits at the top of its next step, and one that has
 * finished holds its report back, until the VM runs again.  Every unmap
 * is on s->unmap_list from its start to its report, so a migration can
 * carry it (h3100-vmstate.c): how far it got, and whose it is.
 *
 * An unmap runs in its command's queue group's context (h3100-qgroup.c),
 * Format's, Sanitize's and the namespace jobs' in the controller's: a
 * command's unmap keeps it in flight, and under qtest its group holds
 * virtual time until it is back (h3100-inflight.c), renewing the hold
 * from its own thread; an unmap waiting for another context, stuck in
 * that clock step, would never come back.  The coroutine takes s->lock
 * between its block requests, never across a yield.
 */

#include "qemu/osdep.h"
#include "qemu/coroutine.h"
#include "h3100.h"
#include "h3100-compat.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "trace.h"

/* block-status steps between two yields: no long hold of the thread */
#define H3100_UNMAP_STEPS_PER_YIELD 64

struct H3100Unmap {
    H3100State *s;
    AioContext *ctx;                  /* where it runs and reports */
    H3100Req *req;                    /* the command, NULL for Sanitize */
    int64_t offset;
    int64_t end;
    BdrvRequestFlags flags;
    BlockCompletionFunc *cb;
    void *opaque;
    int ret;
    Coroutine *co;
    bool parked;                      /* waits for the VM to run */
    bool waking;                      /* ... entered, not yet running */
    bool finished;                    /* ret is final, the report due */
    bool report_scheduled;
    QTAILQ_ENTRY(H3100Unmap) next;    /* s->unmap_list */
};

/*
 * A command's unmap ends with its command (a reset, its queue deleted);
 * Sanitize's goes on across resets, as the spec has it, until the device
 * goes away.
 */
static bool h3100_unmap_cancelled(H3100Unmap *u)
{
    return u->req ? h3100_req_cancelled(u->req) : u->s->exiting;
}

/* Neither parked nor finished: taking a step (a count other threads read). */
static void h3100_unmap_busy(H3100Unmap *u, bool busy)
{
    if (busy) {
        qatomic_inc(&u->s->unmaps_busy);
    } else {
        qatomic_dec(&u->s->unmaps_busy);
        aio_wait_kick();
    }
}

/* Report from a bottom half, as an AIO request would: not in coroutine. */
static void h3100_unmap_done_bh(void *opaque)
{
    H3100Unmap *u = opaque;
    H3100State *s = u->s;
    bool of_req = u->req;

    h3100_lock(s);
    u->report_scheduled = false;
    if (s->quiesced && !h3100_unmap_cancelled(u)) {
        h3100_unlock(s);
        return;                       /* h3100_unmap_resume reports it */
    }
    QTAILQ_REMOVE(&s->unmap_list, u, next);
    u->cb(u->opaque, u->ret);
    g_free(u);
    if (of_req) {
        qatomic_dec(&s->unmaps_req);
    }
    qatomic_dec(&s->unmaps);
    h3100_unlock(s);
    aio_wait_kick();
}

static void h3100_unmap_report(H3100Unmap *u)
{
    if (!u->report_scheduled) {
        u->report_scheduled = true;
        aio_bh_schedule_oneshot(u->ctx, h3100_unmap_done_bh, u);
    }
}

static void coroutine_fn h3100_unmap_co(void *opaque)
{
    H3100Unmap *u = opaque;
    H3100State *s = u->s;
    BlockBackend *blk = s->blk;
    unsigned steps = 0;
    int ret = 0;

    h3100_lock(s);
    while (u->offset < u->end) {
        int64_t pnum = 0;

        if (h3100_unmap_cancelled(u)) {
            ret = -ECANCELED;
            break;
        }
        if (s->quiesced) {
            u->parked = true;
            h3100_unmap_busy(u, false);
            h3100_unlock(s);
            qemu_coroutine_yield();   /* entered by h3100_unmap_resume */
            h3100_lock(s);
            u->waking = false;
            h3100_unmap_busy(u, true);
            u->parked = false;
            continue;
        }
        h3100_unlock(s);
        ret = blk_co_block_status_above(blk, NULL, u->offset,
                                        u->end - u->offset, &pnum, NULL,
                                        NULL);
        if (ret < 0) {
            h3100_lock(s);
            break;
        }
        if (pnum <= 0) {
            pnum = u->end - u->offset;  /* no answer: zero the rest */
            ret = 0;
        }
        if (!(ret & BDRV_BLOCK_ZERO)) {
            ret = blk_co_pwrite_zeroes(blk, u->offset, pnum,
                                       BDRV_REQ_MAY_UNMAP | u->flags);
        }
        h3100_lock(s);
        if (ret < 0) {
            break;
        }
        u->offset += pnum;
        if (++steps % H3100_UNMAP_STEPS_PER_YIELD == 0) {
            h3100_unlock(s);
            aio_co_schedule(qemu_get_current_aio_context(),
                            qemu_coroutine_self());
            qemu_coroutine_yield();
            h3100_lock(s);
        }
    }
    h3100_unlock(s);
    if (ret >= 0 && (u->flags & BDRV_REQ_FUA)) {
        /* what already read as zeroes may be so only in a cache */
        ret = blk_co_flush(blk);
    }
    h3100_lock(s);
    trace_h3100_unmap_done(u->end, steps, ret);
    u->ret = ret < 0 ? ret : 0;
    u->finished = true;
    u->co = NULL;
    h3100_unmap_busy(u, false);
    h3100_unmap_report(u);
    h3100_unlock(s);
}

static H3100Unmap *h3100_unmap_new(H3100State *s, H3100Req *req,
                                   uint64_t offset, uint64_t end,
                                   BdrvRequestFlags flags,
                                   BlockCompletionFunc *cb, void *opaque)
{
    H3100Unmap *u = g_new0(H3100Unmap, 1);

    *u = (H3100Unmap) {
        .s = s, .ctx = req ? req->sq->g->ctx : s->ctx, .req = req,
        .offset = offset, .end = end, .flags = flags, .cb = cb,
        .opaque = opaque,
    };
    qatomic_inc(&s->unmaps);
    if (req) {
        qatomic_inc(&s->unmaps_req);
    }
    QTAILQ_INSERT_TAIL(&s->unmap_list, u, next);
    return u;
}

/*
 * Make [@offset, @offset + @bytes) read as zeroes, touching only what the
 * backend has allocated; @cb(@opaque, ret) when done.  @req is the
 * command it is for (NULL: Sanitize's).  It is not a block request the
 * backend counts (its steps are, one by one): a reset waits for it with
 * h3100_unmap_wait(), since a drain would wait for it forever while the
 * drain holds its next step back.
 */
void h3100_unmap(H3100State *s, H3100Req *req, uint64_t offset,
                 uint64_t bytes, BdrvRequestFlags flags,
                 BlockCompletionFunc *cb, void *opaque)
{
    H3100Unmap *u = h3100_unmap_new(s, req, offset, offset + bytes, flags,
                                    cb, opaque);

    trace_h3100_unmap(offset, bytes);
    h3100_unmap_busy(u, true);
    u->co = qemu_coroutine_create(h3100_unmap_co, u);
    aio_co_enter(u->ctx, u->co);
}

/*
 * An unmap a migration brought (h3100-vmstate.c): from @offset to @end,
 * or, when @finished, only its report (@ret) still to come.  The VM is
 * stopped: it waits for it to run.
 */
void h3100_unmap_restore(H3100State *s, H3100Req *req, uint64_t offset,
                         uint64_t end, BdrvRequestFlags flags, bool finished,
                         int ret, BlockCompletionFunc *cb, void *opaque)
{
    H3100Unmap *u;

    if (!finished) {
        h3100_unmap(s, req, offset, end - offset, flags, cb, opaque);
        return;
    }
    u = h3100_unmap_new(s, req, end, end, flags, cb, opaque);
    u->ret = ret;
    u->finished = true;
    h3100_unmap_report(u);
}

/*
 * Under s->lock, when the VM runs again or a reset or the device's exit
 * cancels what waits: parked unmaps take their next step, finished ones
 * report, each in its own context.  One entered from another context
 * runs later: it is not entered twice meanwhile (waking).
 */
void h3100_unmap_resume(H3100State *s)
{
    H3100Unmap *u, *n;

    QTAILQ_FOREACH_SAFE(u, &s->unmap_list, next, n) {
        if (u->finished) {
            h3100_unmap_report(u);
        } else if (u->parked && !u->waking) {
            u->waking = true;
            aio_co_enter(u->ctx, u->co);
        }
    }
}

/* Each unmap, once none is taking a step (the VM stopped, settled). */
void h3100_unmap_foreach(H3100State *s, H3100UnmapFn *fn, void *opaque)
{
    H3100Unmap *u;

    QTAILQ_FOREACH(u, &s->unmap_list, next) {
        fn(opaque, u->req, u->offset, u->end, u->flags, u->finished, u->ret,
           u->cb, u->opaque);
    }
}

static void h3100_unmap_resume_fn(void *opaque)
{
    h3100_unmap_resume(opaque);
}

/*
 * From the main loop, once fetching has stopped (s->stopping): let the
 * commands' unmaps end (they stop at their next step, those waiting for
 * the VM too); with @all, also Sanitize's (s->exiting stops it).
 */
void h3100_unmap_wait(H3100State *s, bool all)
{
    unsigned *running = all ? &s->unmaps : &s->unmaps_req;

    h3100_run_in_ctx(s, h3100_unmap_resume_fn, s);
    AIO_WAIT_WHILE_UNLOCKED(NULL, qatomic_read(running) > 0);
}

/*
 * The VM stopped (h3100-runstate.c): wait, as a drain does, until every
 * unmap waits at a step's start or has finished.
 */
void h3100_unmap_settle(H3100State *s)
{
    AIO_WAIT_WHILE_UNLOCKED(NULL, qatomic_read(&s->unmaps_busy) > 0);
    h3100_main_loop_wake();           /* maybe in the migration thread */
}
