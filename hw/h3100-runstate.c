/*
 * DapuStor H3100 NVMe SSD: the VM stops and runs
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * While the VM is stopped the device starts no block I/O of its own.  A
 * migration or a snapshot saves the device then, and what it saves must
 * be all there is: QEMU drained the block layer when it stopped the VM,
 * and the images of a migrated VM become the destination's.  So from
 * the stop on (s->quiesced) no command is fetched, an unmap waits at its
 * next step or holds back its report (h3100-unmap.c), a write that read
 * what it overwrites (vwc=on) waits to be sent, and the flushes that make
 * completed writes durable (h3100-durable.c) and the shutdown
 * notification's flush wait to start.  When the VM runs again each goes
 * on, in the device's context; on a migration's destination what the
 * stream brought starts the same way.
 */

#include "qemu/osdep.h"
#include "system/runstate.h"
#include "h3100.h"
#include "h3100-compat.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-life.h"
#include "trace.h"

static void h3100_quiesce_fn(void *opaque)
{
    H3100State *s = opaque;

    s->quiesced = true;
}

/*
 * The writes of @g's queues the stop held back, sent from @g's context,
 * where their block requests live (h3100-qgroup.c); mapped again if
 * they came over with a migration.
 */
void h3100_send_deferred(H3100QGroup *g)
{
    H3100State *s = g->s;
    H3100Req *req, *next;
    uint16_t status;

    QTAILQ_FOREACH_SAFE(req, &s->deferred, defer_entry, next) {
        if (req->sq->g != g) {
            continue;
        }
        QTAILQ_REMOVE(&s->deferred, req, defer_entry);
        req->deferred = false;
        if (!req->has_qsg && req->cmd.opcode == NVME_CMD_WRITE) {
            status = h3100_map_dptr(s, req, req->bytes,
                                    DMA_DIRECTION_TO_DEVICE);
            if (status) {
                req->status = status;
                h3100_req_complete(req);
                continue;
            }
        }
        h3100_write_send(s, req);
    }
}

static void h3100_resume_fn(void *opaque)
{
    H3100State *s = opaque;

    s->quiesced = false;
    trace_h3100_resume(qatomic_read(&s->unmaps));
    h3100_unmap_resume(s);
    /*
     * The writes the stop held back, here for this context's queues; the
     * requests werror=stop kept (h3100-blkerr.c), from a bottom half, as
     * a block layer retry is not sent inside a run state change.  Each
     * in its queue's context, now that quiesced is clear.
     */
    for (unsigned i = 0; i < s->ngroups; i++) {
        if (h3100_in_group(&s->groups[i])) {
            h3100_send_deferred(&s->groups[i]);
        }
        if (!QTAILQ_EMPTY(&s->deferred) || !QTAILQ_EMPTY(&s->retry)) {
            qemu_bh_schedule(s->groups[i].bh);
        }
    }
    h3100_durable_kick(s);
    h3100_shutdown_kick(s);
    for (unsigned i = 0; i <= s->max_ioqpairs; i++) {
        if (s->sq[i]) {
            qemu_bh_schedule(s->sq[i]->bh);
        }
    }
    if (s->irq_bh) {
        qemu_bh_schedule(s->irq_bh);  /* what the stop held back */
    }
}

static void h3100_runstate_cb(void *opaque, bool running, RunState state)
{
    H3100State *s = opaque;

    if (running) {
        h3100_run_in_ctx(s, h3100_resume_fn, s);
        h3100_pstate_run(s);
        return;
    }
    h3100_run_in_ctx(s, h3100_quiesce_fn, s);
    /* as the drain after this does: each unmap gets to a step's start */
    h3100_unmap_settle(s);
}

/* Not already running: the first run resumes (-S, -incoming). */
void h3100_runstate_init(H3100State *s)
{
    s->quiesced = !runstate_is_running();
    QTAILQ_INIT(&s->deferred);
    QTAILQ_INIT(&s->unmap_list);
    s->runstate_change = h3100_add_vm_change_handler(DEVICE(s),
                                                     h3100_runstate_cb, s);
}

void h3100_runstate_exit(H3100State *s)
{
    if (s->runstate_change) {
        qemu_del_vm_change_state_handler(s->runstate_change);
        s->runstate_change = NULL;
    }
}

/* Called instead of sending @req's write while the VM is stopped. */
void h3100_defer_write(H3100State *s, H3100Req *req)
{
    trace_h3100_write_deferred(req->sq->sqid, le16_to_cpu(req->cmd.cid));
    req->deferred = true;
    QTAILQ_INSERT_TAIL(&s->deferred, req, defer_entry);
}

/* A reset or the device's exit: what was deferred is forgotten. */
void h3100_deferred_drop(H3100State *s, H3100Req *req)
{
    if (req->deferred) {
        QTAILQ_REMOVE(&s->deferred, req, defer_entry);
        req->deferred = false;
    }
}
