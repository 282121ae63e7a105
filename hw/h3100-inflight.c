/*
 * DapuStor H3100 NVMe SSD: when commands complete
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A command completes at the model time the drive is done with it
 * (done_ns), once its block I/O is back.  Each queue group (the queues
 * of one context, h3100-qgroup.c) keeps two lists of its SQs' commands:
 * those whose block I/O is out (g->inflight: for the hold below) and
 * those whose I/O is back that wait for their time (g->pending, ordered
 * by done_ns).  One wake-up, in the group's context, serves both.  The
 * count of I/O commands out (s->io_inflight: Format and Sanitize let the
 * writes already sent land before they erase) is the device's.
 */

#include "qemu/osdep.h"
#include "system/qtest.h"
#include "h3100.h"
#include "h3100-compat.h"
#include "h3100-core.h"

/* how far one renewal of the hold may go */
#define H3100_HOLD_STEP_MAX_NS  SCALE_MS
/* renewals closer than this in host time belong to one qtest clock_step */
#define H3100_HOLD_BURST_NS     (10 * SCALE_US)

/*
 * Under qtest or -icount, virtual time does not follow the host's clock:
 * a step to the next deadline (qtest) or an idle vCPU's warp (icount,
 * sleep=off) would carry it past a command whose model time has come
 * while its host I/O is still running, and the guest would see the
 * host's disk in the drive's latency.  The device holds virtual time
 * there instead: the wake-up is due at the earliest model time of the
 * commands with block I/O in flight and, once that has passed, a
 * nanosecond ahead, renewed until the I/O is back.  Not "now": a qtest
 * step to the next deadline must still advance (libqtest asserts it
 * does), and a timer due now would re-run in the same pass of the timer
 * list.
 *
 * Under qtest a clock_step of N ns runs the timer list once per
 * deadline, so 1 ns renewals would make it N passes: renewals that
 * follow each other within H3100_HOLD_BURST_NS of host time (one
 * clock_step) go twice as far each time, log2(N) passes.  Under -icount
 * every renewal is 1 ns, and in the main context the vCPU waits instead
 * (s->vcpu_waits, set at realize): the host's time stays out of virtual
 * time.  Not with a queue in an IOThread: the wait would hold s->lock,
 * and that thread's completions with it.
 * Under plain TCG virtual time is host time: no hold.
 *
 * g->due_timer is an H3100Timer: on its timer list throughout its
 * callback, so virtual time cannot step past the next command due while
 * the callback looks for it (h3100-timer.c).
 */

/* Something is due at @model_ns: wake up then, if not earlier. */
static void h3100_due_at(H3100QGroup *g, uint64_t model_ns)
{
    int64_t at = h3100_virt_ns(g->s, model_ns);
    int64_t when = h3100_timer_expire_ns(g->due_timer);

    if (when < 0 || when > at) {
        h3100_timer_mod(g->due_timer, at);
    }
}

static uint64_t h3100_first_io_due(H3100QGroup *g)
{
    uint64_t first = UINT64_MAX;
    H3100Req *req;

    QTAILQ_FOREACH(req, &g->inflight, ioentry) {
        first = MIN(first, req->done_ns);
    }
    return first;
}

/* An in-flight command's time has come, its I/O is not back: hold. */
static void h3100_hold_renew(H3100QGroup *g)
{
    int64_t rt = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);

    if (qtest_enabled() && rt - g->hold_last_rt < H3100_HOLD_BURST_NS) {
        g->hold_step = MIN(g->hold_step * 2, H3100_HOLD_STEP_MAX_NS);
    } else {
        g->hold_step = 1;
    }
    g->hold_last_rt = rt;
    h3100_timer_mod_in(g->due_timer, g->hold_step);
}

/*
 * After the commands due by model time @now are posted, or a migration
 * brought them: when next to wake up.
 */
static void h3100_group_rearm(H3100QGroup *g, uint64_t now)
{
    H3100State *s = g->s;
    H3100Req *first = QTAILQ_FIRST(&g->pending);
    uint64_t post = first ? first->done_ns : UINT64_MAX;
    uint64_t io = s->hold ? h3100_first_io_due(g) : UINT64_MAX;

    if (io <= now && post > io) {
        h3100_hold_renew(g);
    } else if (MIN(io, post) != UINT64_MAX) {
        h3100_timer_mod(g->due_timer, h3100_virt_ns(s, MIN(io, post)));
    } else {
        h3100_timer_del(g->due_timer);
    }
}

void h3100_due_rearm(H3100State *s)
{
    uint64_t now = h3100_now(s);

    for (unsigned i = 0; i < s->ngroups; i++) {
        h3100_group_rearm(&s->groups[i], now);
    }
}

/* A command whose model time has come still has its block I/O out */
static bool h3100_io_overdue(H3100QGroup *g)
{
    return h3100_first_io_due(g) <= h3100_now(g->s);
}

/*
 * The model time up to which a wake-up for a command due at @now posts:
 * those due within the completion window go with it (their latency at
 * most the window short), so one wake-up serves them all.  Only there:
 * a command is never posted before something was due.
 */
static uint64_t h3100_due_by(H3100State *s, uint64_t now)
{
    return now + s->completion_window;
}

/*
 * The commands due by now (and within the window) leave g->pending, the
 * timer is set for the next, and they are posted together in the order
 * g->pending had them.
 */
void h3100_due_timer_cb(void *opaque)
{
    H3100QGroup *g = opaque;
    H3100State *s = g->s;
    H3100ReqList due = QTAILQ_HEAD_INITIALIZER(due);
    H3100Req *req;
    uint64_t now, by;

    if (s->hold && s->vcpu_waits && h3100_io_overdue(g)) {
        AIO_WAIT_WHILE(s->ctx, h3100_io_overdue(g));
        h3100_main_loop_wake();
    }
    now = h3100_now(s);
    by = h3100_due_by(s, now);
    while ((req = QTAILQ_FIRST(&g->pending)) && req->done_ns <= by) {
        h3100_pending_drop(s, req);
        QTAILQ_INSERT_TAIL(&due, req, pend);
    }
    h3100_group_rearm(g, now);
    h3100_reqs_post_now(s, &due, now);
}

/* A reset: nothing is due any more. */
void h3100_due_reset(H3100State *s)
{
    for (unsigned i = 0; i < s->ngroups; i++) {
        h3100_timer_del(s->groups[i].due_timer);
    }
}

/* ---- the two lists ----------------------------------------------------- */

void h3100_inflight_add(H3100State *s, H3100Req *req)
{
    QTAILQ_INSERT_TAIL(&req->sq->g->inflight, req, ioentry);
    req->in_flight = true;
    if (req->sq->sqid) {
        s->io_inflight++;
    }
    if (s->hold) {
        h3100_due_at(req->sq->g, req->done_ns);
    }
}

/*
 * No timer moves here: the command goes on to g->pending or its CQ.
 * True when it was the last I/O command with block I/O out (a Format or
 * a Sanitize may be waiting for that: h3100_maint_io_drained()).
 */
bool h3100_inflight_remove(H3100State *s, H3100Req *req)
{
    if (!req->in_flight) {
        return false;
    }
    QTAILQ_REMOVE(&req->sq->g->inflight, req, ioentry);
    req->in_flight = false;
    return req->sq->sqid && !--s->io_inflight;
}

void h3100_pending_drop(H3100State *s, H3100Req *req)
{
    if (req->pending) {
        QTAILQ_REMOVE(&req->sq->g->pending, req, pend);
        req->pending = false;
    }
}

/* On its group's g->pending, by done_ns then seq; usually the last. */
void h3100_pending_insert(H3100Req *req)
{
    H3100QGroup *g = req->sq->g;
    H3100Req *it;

    QTAILQ_FOREACH_REVERSE(it, &g->pending, pend) {
        if (it->done_ns < req->done_ns ||
            (it->done_ns == req->done_ns && it->seq < req->seq)) {
            QTAILQ_INSERT_AFTER(&g->pending, it, req, pend);
            break;
        }
    }
    if (!it) {
        QTAILQ_INSERT_HEAD(&g->pending, req, pend);
    }
    req->pending = true;
}

/*
 * The command's I/O is done at model time @now: false when it may be
 * posted now; true when it waits on g->pending for its model time (the
 * due timer posts it).
 * Where the vCPU waits for the device (-icount), even a command whose
 * time has come waits for the due timer, which posts what is due in
 * model time order, ties in fetch order: the order the host's thread
 * pool returned the I/O in stays out of what the guest sees.
 */
bool h3100_req_wait(H3100State *s, H3100Req *req, uint64_t now)
{
    if (!s->vcpu_waits && (!s->timing || req->done_ns <= now)) {
        return false;
    }
    h3100_pending_insert(req);
    h3100_due_at(req->sq->g, req->done_ns);
    return true;
}
