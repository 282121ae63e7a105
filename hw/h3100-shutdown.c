/*
 * DapuStor H3100 NVMe SSD: the shutdown notification (CC.SHN)
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What a drive does when the host says power will go: everything written
 * becomes durable (with vwc=on the volatile cache is written back: the
 * undo journal is settled), the backend is flushed, and the drive's
 * state file is saved clean (a forked checkpoint, so the guest does not
 * wait on the main loop); then CSTS.SHST reports 10b.  Until then it
 * reads 01b (occurring).  A drive that completed its shutdown counts no
 * unsafe shutdown when the power goes (a power cut, QEMU killed), as a
 * real one does; enabling the controller again puts the drive back in
 * use (its state file dirty again).
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-life.h"
#include "trace.h"

#define H3100_SHUTDOWN_POLL_NS  (1 * SCALE_MS)

static void h3100_shutdown_set_shst(H3100State *s, uint32_t shst)
{
    uint32_t csts = ldl_le_p(&s->bar.csts);

    csts &= ~(CSTS_SHST_MASK << CSTS_SHST_SHIFT);
    stl_le_p(&s->bar.csts, csts | shst);
}

static void h3100_shutdown_complete(H3100State *s)
{
    s->shutdown.done = true;
    h3100_shutdown_set_shst(s, NVME_CSTS_SHST_COMPLETE);
    trace_h3100_shutdown_complete(s->pstate_clean);
}

/* The clean checkpoint is being written: poll for its end. */
static void h3100_shutdown_timer_cb(void *opaque)
{
    H3100State *s = opaque;

    if (!s->shutdown.pending) {
        return;
    }
    if (h3100_pstate_busy(s)) {
        h3100_timer_mod_in(s->shutdown.timer, H3100_SHUTDOWN_POLL_NS);
        return;
    }
    s->shutdown.pending = false;
    h3100_shutdown_complete(s);
}

static void h3100_shutdown_flushed_locked(H3100State *s, int ret)
{
    s->shutdown.flush_inflight = false;
    if (!s->shutdown.pending) {
        return;                         /* cancelled meanwhile */
    }
    if (ret < 0) {
        warn_report("%s: flush at the shutdown notification failed: %s",
                    TYPE_DAPUSTOR_H3100, strerror(-ret));
    }
    h3100_pstate_save_clean(s);
    h3100_shutdown_timer_cb(s);
}

static void h3100_shutdown_flushed(void *opaque, int ret)
{
    H3100State *s = opaque;

    h3100_lock(s);
    h3100_shutdown_flushed_locked(s, ret);
    h3100_unlock(s);
}

/* CC.SHN set: runs in the controller's context. */
void h3100_shutdown_begin(H3100State *s)
{
    if (s->shutdown.pending || s->shutdown.done) {
        return;
    }
    trace_h3100_ctrl_shutdown(NVME_CC_SHN(ldl_le_p(&s->bar.cc)));
    h3100_vcache_settle(s);
    h3100_shutdown_set_shst(s, NVME_CSTS_SHST_PROGRESS);
    s->shutdown.pending = true;
    h3100_shutdown_kick(s);
}

/*
 * The shutdown's flush, unless one runs or the VM is stopped (then the VM
 * running again kicks it, h3100-runstate.c).
 */
void h3100_shutdown_kick(H3100State *s)
{
    if (s->shutdown.pending && !s->shutdown.flush_inflight &&
        !s->quiesced) {
        s->shutdown.flush_inflight = true;
        blk_aio_flush(s->blk, h3100_shutdown_flushed, s);
    }
}

/*
 * The drive is in use again (CC.SHN cleared, the controller enabled, a
 * power-on): a shutdown under way is abandoned, a saved state file is
 * marked in use.
 */
void h3100_shutdown_cancel(H3100State *s)
{
    s->shutdown.pending = false;
    s->shutdown.done = false;
    h3100_pstate_reopen(s);
    h3100_shutdown_set_shst(s, 0);
}

void h3100_shutdown_init(H3100State *s)
{
    s->shutdown.timer = h3100_timer_new(s, h3100_shutdown_timer_cb, s);
}

/* Unrealize, after the block layer drained (no flush callback left). */
void h3100_shutdown_exit(H3100State *s)
{
    s->shutdown.pending = false;
    h3100_timer_free(&s->shutdown.timer);
}
