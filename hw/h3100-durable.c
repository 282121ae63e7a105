/*
 * DapuStor H3100 NVMe SSD: completed writes survive QEMU's death
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The H3100 has power-loss protection (vwc=off): a write that completed is
 * on the drive, and Linux sends no flush to a drive without a volatile
 * cache.  The emulated drive's power cut is QEMU dying.  A raw image then
 * keeps every write the host kernel took, but an image format keeps
 * metadata in QEMU's memory until a flush (qcow2's L2 and refcount
 * caches): a SIGKILL loses blocks whose completions the guest has seen.
 * So, when the backend is such a format, a write's completion waits for
 * a backend flush; the writes that land while one flush runs share the
 * next one, so the cost is at most one flush per flush time, not one per
 * write.  kill-safe=off gives that up for speed.  A host crash is another
 * matter: that needs write-cache=off (or -drive cache=writethrough), as
 * for any QEMU drive.
 */

#include "qemu/osdep.h"
#include "block/block_int.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "trace.h"

/*
 * Block drivers that keep no write in QEMU's memory: what they took is
 * the host kernel's (or nobody's) once their request completed.
 */
static const char *const h3100_write_through_drivers[] = {
    "raw", "file", "host_device", "null-co", "null-aio", "blkdebug",
    "throttle", NULL,
};

static bool GRAPH_RDLOCK h3100_node_keeps_writes(BlockDriverState *bs)
{
    BdrvChild *child;

    if (!bs->drv || !g_strv_contains(h3100_write_through_drivers,
                                     bs->drv->format_name)) {
        return true;
    }
    QLIST_FOREACH(child, &bs->children, next) {
        if ((child->perm & BLK_PERM_WRITE) &&
            h3100_node_keeps_writes(child->bs)) {
            return true;
        }
    }
    return false;
}

/*
 * Does a completed write need a flush to survive QEMU's death?  Looked at
 * again whenever the top node changed (a snapshot, a mirror's pivot),
 * which can only be done from the main loop: an IOThread that sees a new
 * top node assumes the worst.
 */
static bool h3100_backend_keeps_writes(H3100State *s)
{
    BlockDriverState *bs = blk_bs(s->blk);

    if (bs != s->durable_top) {
        if (!qemu_in_main_thread()) {
            return true;
        }
        GRAPH_RDLOCK_GUARD_MAINLOOP();
        s->durable_top = bs;
        s->durable_keeps = bs && h3100_node_keeps_writes(bs);
        trace_h3100_durable_backend(bs ? bdrv_get_format_name(bs) : "none",
                                    s->durable_keeps);
    }
    return s->durable_keeps;
}

/*
 * A write is durable at completion without our help when the guest
 * manages a volatile cache (it will flush), when the backend writes
 * through (write-cache=off), or when nothing in QEMU holds it.
 */
static bool h3100_durable_needed(H3100State *s)
{
    return s->kill_safe && !s->feat.vwc && blk_enable_write_cache(s->blk) &&
           h3100_backend_keeps_writes(s);
}

static void h3100_durable_flush_start(H3100State *s);

static void h3100_durable_flush_cb(void *opaque, int ret)
{
    H3100State *s = opaque;
    H3100Req *req;

    /* in the thread that started it: it completes every group's writes */
    h3100_lock(s);
    s->durable_flushing = false;
    s->durable_flushes++;
    trace_h3100_durable_flush_done(ret);
    while ((req = QTAILQ_FIRST(&s->durable_batch))) {
        QTAILQ_REMOVE(&s->durable_batch, req, durable_entry);
        req->durable_wait = 0;
        if (ret < 0 && !req->status) {
            req->status = h3100_blk_status(req, ret, NVME_WRITE_FAULT);
        }
        h3100_req_complete(req);
    }
    h3100_durable_kick(s);
    h3100_unlock(s);
}

/* The writes that landed so far share one flush. */
static void h3100_durable_flush_start(H3100State *s)
{
    unsigned n = 0;
    H3100Req *req;

    while ((req = QTAILQ_FIRST(&s->durable_next))) {
        QTAILQ_REMOVE(&s->durable_next, req, durable_entry);
        QTAILQ_INSERT_TAIL(&s->durable_batch, req, durable_entry);
        req->durable_wait = H3100_DURABLE_BATCH;
        n++;
    }
    s->durable_flushing = true;
    trace_h3100_durable_flush(n);
    blk_aio_flush(s->blk, h3100_durable_flush_cb, s);
}

/*
 * A write is on the backend (h3100_write_landed): true when it waits for
 * the next flush to be durable against QEMU's death; false when it may
 * complete now.  A flush started before this write landed may not cover
 * it: the write waits for the one after.  Failed writes, and FUA writes
 * (already flushed), need none.
 */
bool h3100_durable_wait(H3100Req *req)
{
    H3100State *s = req->s;

    if (req->status || req->fua || !h3100_durable_needed(s)) {
        return false;
    }
    QTAILQ_INSERT_TAIL(&s->durable_next, req, durable_entry);
    req->durable_wait = H3100_DURABLE_NEXT;
    h3100_durable_kick(s);
    return true;
}

/*
 * Start the flush the landed writes wait for, unless one runs or the VM
 * is stopped (h3100-runstate.c kicks it again).
 */
void h3100_durable_kick(H3100State *s)
{
    if (!s->durable_flushing && !s->quiesced &&
        !QTAILQ_EMPTY(&s->durable_next)) {
        h3100_durable_flush_start(s);
    }
}

/* A reset while the VM is stopped: @req waits for no flush any more. */
void h3100_durable_drop(H3100State *s, H3100Req *req)
{
    if (req->durable_wait == H3100_DURABLE_BATCH) {
        QTAILQ_REMOVE(&s->durable_batch, req, durable_entry);
    } else if (req->durable_wait == H3100_DURABLE_NEXT) {
        QTAILQ_REMOVE(&s->durable_next, req, durable_entry);
    }
    req->durable_wait = 0;
}

/* At realize, in the main loop: look at the backend once. */
void h3100_durable_init(H3100State *s)
{
    QTAILQ_INIT(&s->durable_next);
    QTAILQ_INIT(&s->durable_batch);
    s->durable_top = NULL;
    h3100_backend_keeps_writes(s);
}

/* Extra flags for a backend write that completes no guest command. */
BdrvRequestFlags h3100_durable_flags(H3100State *s)
{
    return h3100_durable_needed(s) ? BDRV_REQ_FUA : 0;
}
