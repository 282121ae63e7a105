/*
 * DapuStor H3100 NVMe SSD: I/O queues over several IOThreads
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * iothread-vq-mapping gives I/O queues to IOThreads, as virtio-blk's
 * does to virtqueues, except that its "vqs" are NVMe queue ids, 1-based
 * (qid 0 is the admin queue, the controller's).  Without "vqs" the
 * queues go round robin: qid q to the ((q - 1) mod n)th IOThread.  With
 * them, every entry lists its qids and a qid that none lists stays in
 * the controller's context (s->ctx).
 *
 * The queues of one context form a group (H3100QGroup, group 0 the
 * controller's).  The group is fixed by the qid, so a doorbell is routed
 * without looking at anything the guest may change meanwhile.  The SQ's
 * bottom half and its commands' block requests live in the group's
 * context: a block request must be cancelled, and is called back, in the
 * context it was submitted in (h3100-blkdma.c).  Whatever another thread
 * finds a group owes (a deleted queue's requests to cancel, commands a
 * stopped VM kept back) it hands over with the group's bottom half.
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "h3100.h"
#include "h3100-compat.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "trace.h"

static bool h3100_qmap_qids(H3100State *s, H3100QGroup *g,
                            IOThreadVirtQueueMapping *m, Error **errp)
{
    uint16List *q;

    for (q = m->vqs; q; q = q->next) {
        if (q->value == 0) {
            error_setg(errp, "iothread-vq-mapping: qid 0 is the admin "
                       "queue, which runs in the controller's context "
                       "(iothread=); I/O queue ids are 1..%u",
                       s->max_ioqpairs);
            return false;
        }
        if (q->value > s->max_ioqpairs) {
            error_setg(errp, "iothread-vq-mapping: qid %u is beyond "
                       "max-ioqpairs=%u", q->value, s->max_ioqpairs);
            return false;
        }
        if (s->qg[q->value]) {
            error_setg(errp, "iothread-vq-mapping: qid %u is mapped twice",
                       q->value);
            return false;
        }
        s->qg[q->value] = g;
    }
    return true;
}

static bool h3100_qmap_apply(H3100State *s, Error **errp)
{
    IOThreadVirtQueueMappingList *l;
    unsigned n = 0, with_vqs = 0, i = 1;

    for (l = s->qmap; l; l = l->next) {
        n++;
    }
    s->ngroups = n + 1;
    s->groups = g_new0(H3100QGroup, s->ngroups);
    s->qg = g_new0(H3100QGroup *, s->max_ioqpairs + 1);
    for (l = s->qmap; l; l = l->next, i++) {
        IOThreadVirtQueueMapping *m = l->value;
        IOThread *iot = iothread_by_id(m->iothread);

        if (!iot) {
            error_setg(errp, "iothread-vq-mapping: no IOThread '%s' "
                       "(-object iothread,id=%s)", m->iothread, m->iothread);
            return false;
        }
        for (unsigned j = 1; j < i; j++) {
            if (s->groups[j].iothread == iot) {
                error_setg(errp, "iothread-vq-mapping: IOThread '%s' is "
                           "named twice", m->iothread);
                return false;
            }
        }
        s->groups[i].iothread = iot;
        with_vqs += m->has_vqs;
        if (!h3100_qmap_qids(s, &s->groups[i], m, errp)) {
            return false;
        }
    }
    if (with_vqs && with_vqs != n) {
        error_setg(errp, "iothread-vq-mapping: give \"vqs\" in every entry "
                   "or in none (none: the queues go round robin)");
        return false;
    }
    for (unsigned q = 1; q <= s->max_ioqpairs && n && !with_vqs; q++) {
        s->qg[q] = &s->groups[1 + (q - 1) % n];
    }
    return true;
}

/*
 * Realize, once s->ctx is known: check the mapping, and give each qid
 * its group.  Frees what it made if it fails.
 */
bool h3100_groups_init(H3100State *s, Error **errp)
{
    if (!h3100_qmap_apply(s, errp)) {
        g_clear_pointer(&s->groups, g_free);
        g_clear_pointer(&s->qg, g_free);
        s->ngroups = 0;
        return false;
    }
    s->groups[0].ctx = s->ctx;
    for (unsigned i = 0; i < s->ngroups; i++) {
        H3100QGroup *g = &s->groups[i];

        g->s = s;
        g->idx = i;
        if (g->iothread) {
            object_ref(OBJECT(g->iothread));
            g->ctx = iothread_get_aio_context(g->iothread);
        }
        QTAILQ_INIT(&g->pending);
        QTAILQ_INIT(&g->inflight);
        g->hold_step = 1;
    }
    s->qref = g_new0(H3100QRef, s->max_ioqpairs + 1);
    for (unsigned q = 0; q <= s->max_ioqpairs; q++) {
        if (!s->qg[q]) {
            s->qg[q] = &s->groups[0];
        }
        s->qref[q].s = s;
        s->qref[q].qid = q;
        trace_h3100_qgroup(q, s->qg[q]->idx);
    }
    return true;
}

/*
 * What another thread found @g owes, that only @g's context may do:
 * cancel a deleted queue's block requests; send what the stopped VM
 * kept, once it runs.
 */
static void h3100_group_bh(void *opaque)
{
    H3100QGroup *g = opaque;
    H3100State *s = g->s;

    h3100_lock(s);
    trace_h3100_group_bh(g->idx);
    h3100_sq_cancel_deleted(g);
    if (!s->quiesced && !s->stopping) {
        h3100_send_deferred(g);
        h3100_blk_resend(g);
    }
    h3100_unlock(s);
}

/* After realize's checks: the groups' timers and bottom halves. */
void h3100_groups_start(H3100State *s)
{
    for (unsigned i = 0; i < s->ngroups; i++) {
        H3100QGroup *g = &s->groups[i];

        g->due_timer = h3100_timer_new_in(s, g->ctx, h3100_due_timer_cb, g);
        g->bh = aio_bh_new_guarded(g->ctx, h3100_group_bh, g,
                                   h3100_guard_in(s, g->ctx));
    }
}

static void h3100_nop_bh(void *opaque)
{
}

/*
 * Unrealize, after the reset and the drain (nothing is due, no queue is
 * left): no bottom half or timer of the device runs in an IOThread once
 * this returns, so they can be freed.  The main loop's thread is this
 * one.
 */
void h3100_groups_exit(H3100State *s)
{
    for (unsigned i = 0; i < s->ngroups; i++) {
        qemu_bh_delete(s->groups[i].bh);
        h3100_timer_del(s->groups[i].due_timer);
    }
    for (unsigned i = 0; i < s->ngroups; i++) {
        if (s->groups[i].ctx != qemu_get_aio_context()) {
            aio_wait_bh_oneshot(s->groups[i].ctx, h3100_nop_bh, NULL);
        }
    }
}

void h3100_groups_free(H3100State *s)
{
    for (unsigned i = 0; i < s->ngroups; i++) {
        h3100_timer_free(&s->groups[i].due_timer);
        if (s->groups[i].iothread) {
            object_unref(OBJECT(s->groups[i].iothread));
        }
    }
    g_clear_pointer(&s->groups, g_free);
    g_clear_pointer(&s->qg, g_free);
    g_clear_pointer(&s->qref, g_free);
    s->ngroups = 0;
}

/* Is this thread in @g's context (an IOThread's, or the BQL's)? */
bool h3100_in_group(H3100QGroup *g)
{
    return qemu_get_current_aio_context() == g->ctx;
}

/* Does everything run in the main loop (no iothread=, no mapping)? */
bool h3100_all_main(H3100State *s)
{
    for (unsigned i = 0; i < s->ngroups; i++) {
        if (s->groups[i].ctx != qemu_get_aio_context()) {
            return false;
        }
    }
    return true;
}
