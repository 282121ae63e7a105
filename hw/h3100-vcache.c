/*
 * DapuStor H3100 NVMe SSD: what a power cut loses with a volatile cache
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * With vwc=on (and the Volatile Write Cache feature enabled) the drive's
 * write buffer is volatile: a write that completed but that no Flush has
 * covered is lost when the power fails.  The data itself goes to the
 * backend at once, so reads need no cache; instead the drive keeps, for
 * every write since the last Flush, the blocks it overwrote (read just
 * before the write is sent).  A power cut (h3100-powercut.c) writes them
 * back, newest first, and the writes are gone.  The granularity is the
 * command: a write is kept or dropped whole.
 *
 * A Flush covers the writes whose data had landed when it was
 * submitted.  The journal holds at most the write buffer's size
 * (write_buffer_bytes of the profile); beyond that the oldest landed
 * writes are destaged (durable), as a real buffer drains to NAND.  FUA
 * writes are durable at completion and never journalled.
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "trace.h"

static bool h3100_vcache_on(H3100State *s)
{
    return s->vwc_present && s->feat.vwc;
}

static void h3100_vcache_free(H3100State *s, H3100VEntry *e)
{
    QTAILQ_REMOVE(&s->vcache, e, next);
    s->vcache_bytes -= e->bytes;
    g_free(e->old);
    g_free(e);
}

/* Past the write buffer's size, the oldest landed writes are durable. */
static void h3100_vcache_destage(H3100State *s)
{
    H3100VEntry *e, *n;

    QTAILQ_FOREACH_SAFE(e, &s->vcache, next, n) {
        if (s->vcache_bytes <= s->cfg.cache.write_buffer_bytes) {
            break;
        }
        if (e->landed) {
            h3100_vcache_free(s, e);
        }
    }
}

static void h3100_vcache_read_done(H3100Req *req, int ret)
{
    H3100State *s = req->s;
    H3100VEntry *e = req->op.write.vc_entry;

    req->aiocb = NULL;
    qemu_iovec_destroy(&req->iov);
    if (ret == -ECANCELED || h3100_req_cancelled(req)) {
        /* nothing was written: nothing to undo */
        req->op.write.vc_entry = NULL;
        h3100_vcache_free(s, e);
        req->status = NVME_CMD_ABORT_SQ_DEL;
        h3100_req_complete(req);
        return;
    }
    e->valid = ret >= 0;
    h3100_write_send(s, req);
}

static void h3100_vcache_read_cb(void *opaque, int ret)
{
    H3100Req *req = opaque;
    H3100State *s = req->s;

    h3100_lock(s);
    h3100_vcache_read_done(req, ret);
    h3100_unlock(s);
}

/*
 * A Write or Write Zeroes is about to be sent.  With the volatile cache
 * on (and no FUA), read what it overwrites first, then send it: true.
 * False: send it now.
 */
bool h3100_vcache_before_write(H3100State *s, H3100Req *req)
{
    H3100VEntry *e;

    req->op.write.vc_entry = NULL;
    if (!h3100_vcache_on(s) || req->fua || !req->bytes ||
        req->bytes > s->cfg.cache.write_buffer_bytes) {
        return false;
    }
    e = g_new0(H3100VEntry, 1);
    e->offset = req->offset;
    e->bytes = req->bytes;
    e->old = g_malloc(req->bytes);
    QTAILQ_INSERT_TAIL(&s->vcache, e, next);
    s->vcache_bytes += e->bytes;
    req->op.write.vc_entry = e;
    qemu_iovec_init(&req->iov, 1);
    qemu_iovec_add(&req->iov, e->old, e->bytes);
    req->aiocb = blk_aio_preadv(s->blk, req->offset, &req->iov, 0,
                                h3100_vcache_read_cb, req);
    return true;
}

/*
 * A Write's or Write Zeroes' block request is back (done, failed or
 * cancelled), or the command is released.
 */
void h3100_vcache_landed(H3100Req *req)
{
    H3100State *s = req->s;
    H3100VEntry *e = req->op.write.vc_entry;

    if (!e) {
        return;
    }
    req->op.write.vc_entry = NULL;
    e->landed = true;
    e->gen = s->vcache_gen;
    if (!h3100_vcache_on(s)) {
        h3100_vcache_free(s, e);        /* the cache was turned off */
        return;
    }
    h3100_vcache_destage(s);
}

/* A Flush is submitted: what has landed so far is what it covers. */
uint64_t h3100_vcache_flush_begin(H3100State *s)
{
    return ++s->vcache_gen;
}

void h3100_vcache_flushed(H3100State *s, uint64_t gen)
{
    H3100VEntry *e, *n;

    QTAILQ_FOREACH_SAFE(e, &s->vcache, next, n) {
        if (e->landed && e->gen < gen) {
            h3100_vcache_free(s, e);
        }
    }
}

/*
 * Everything landed is durable (the cache was turned off, written back
 * on a clean stop, or the media erased by Format or Sanitize).
 */
void h3100_vcache_settle(H3100State *s)
{
    h3100_vcache_flushed(s, UINT64_MAX);
}

/*
 * Power cut, after a drain (every write has landed): drop each write no
 * Flush covered, newest first, so the oldest contents win.  Returns the
 * number of writes dropped.
 */
unsigned h3100_vcache_drop(H3100State *s)
{
    H3100VEntry *e;
    unsigned n = 0;

    while ((e = QTAILQ_LAST(&s->vcache))) {
        if (e->landed && e->valid &&
            blk_pwrite(s->blk, e->offset, e->bytes, e->old, 0) < 0) {
            warn_report("%s: power cut: could not drop the write at %"
                        PRIu64, TYPE_DAPUSTOR_H3100, e->offset);
        }
        trace_h3100_vcache_drop(e->offset, e->bytes);
        n++;
        h3100_vcache_free(s, e);
    }
    if (n) {
        blk_flush(s->blk);
    }
    return n;
}

void h3100_vcache_init(H3100State *s)
{
    QTAILQ_INIT(&s->vcache);
    s->vcache_bytes = 0;
    s->vcache_gen = 0;
}

void h3100_vcache_free_all(H3100State *s)
{
    while (!QTAILQ_EMPTY(&s->vcache)) {
        h3100_vcache_free(s, QTAILQ_FIRST(&s->vcache));
    }
}
