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
 */

#include "qemu/osdep.h"
#include "qemu/coroutine.h"
#include "block/aio.h"
#include "block/aio-wait.h"
#include "h3100.h"
#include "trace.h"

/* block-status steps between two yields: no long hold of the thread */
#define H3100_UNMAP_STEPS_PER_YIELD 64

typedef struct H3100Unmap {
    H3100State *s;
    H3100Req *req;                    /* the command, NULL for Sanitize */
    int64_t offset;
    int64_t end;
    BdrvRequestFlags flags;
    BlockCompletionFunc *cb;
    void *opaque;
    int ret;
} H3100Unmap;

/*
 * A command's unmap ends with its command (a reset, its queue deleted);
 * Sanitize's goes on across resets, as the spec has it, until the device
 * goes away.
 */
static bool h3100_unmap_cancelled(H3100Unmap *u)
{
    return u->req ? h3100_req_cancelled(u->req) : u->s->exiting;
}

/* Report from a bottom half, as an AIO request would: not in coroutine. */
static void h3100_unmap_done_bh(void *opaque)
{
    H3100Unmap *u = opaque;
    H3100State *s = u->s;
    bool of_req = u->req;

    u->cb(u->opaque, u->ret);
    g_free(u);
    if (of_req) {
        qatomic_dec(&s->unmaps_req);
    }
    qatomic_dec(&s->unmaps);
    aio_wait_kick();
}

static void coroutine_fn h3100_unmap_co(void *opaque)
{
    H3100Unmap *u = opaque;
    BlockBackend *blk = u->s->blk;
    unsigned steps = 0;
    int ret = 0;

    while (u->offset < u->end) {
        int64_t pnum = 0;

        if (h3100_unmap_cancelled(u)) {
            ret = -ECANCELED;
            break;
        }
        ret = blk_co_block_status_above(blk, NULL, u->offset,
                                        u->end - u->offset, &pnum, NULL,
                                        NULL);
        if (ret < 0) {
            break;
        }
        if (pnum <= 0) {
            pnum = u->end - u->offset;  /* no answer: zero the rest */
            ret = 0;
        }
        if (!(ret & BDRV_BLOCK_ZERO)) {
            ret = blk_co_pwrite_zeroes(blk, u->offset, pnum,
                                       BDRV_REQ_MAY_UNMAP | u->flags);
            if (ret < 0) {
                break;
            }
        }
        u->offset += pnum;
        if (++steps % H3100_UNMAP_STEPS_PER_YIELD == 0) {
            aio_co_schedule(qemu_get_current_aio_context(),
                            qemu_coroutine_self());
            qemu_coroutine_yield();
        }
    }
    if (ret >= 0 && (u->flags & BDRV_REQ_FUA)) {
        /* what already read as zeroes may be so only in a cache */
        ret = blk_co_flush(blk);
    }
    trace_h3100_unmap_done(u->end, steps, ret);
    u->ret = ret < 0 ? ret : 0;
    aio_bh_schedule_oneshot(qemu_get_current_aio_context(),
                            h3100_unmap_done_bh, u);
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
    H3100Unmap *u = g_new0(H3100Unmap, 1);

    u->s = s;
    u->req = req;
    u->offset = offset;
    u->end = offset + bytes;
    u->flags = flags;
    u->cb = cb;
    u->opaque = opaque;
    trace_h3100_unmap(offset, bytes);
    qatomic_inc(&s->unmaps);
    if (req) {
        qatomic_inc(&s->unmaps_req);
    }
    aio_co_enter(s->ctx, qemu_coroutine_create(h3100_unmap_co, u));
}

/*
 * From the main loop, once fetching has stopped (s->stopping): let the
 * commands' unmaps end (they stop at their next step); with @all, also
 * Sanitize's (s->exiting stops it).
 */
void h3100_unmap_wait(H3100State *s, bool all)
{
    unsigned *running = all ? &s->unmaps : &s->unmaps_req;

    AIO_WAIT_WHILE_UNLOCKED(NULL, qatomic_read(running) > 0);
}
