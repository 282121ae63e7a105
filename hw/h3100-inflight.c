/*
 * DapuStor H3100 NVMe SSD: commands with block I/O in flight
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The device keeps the commands whose block I/O is out on one list: to
 * hold virtual time for them under qtest and -icount, and so that Format
 * and Sanitize let the writes already sent land before they erase.
 */

#include "qemu/osdep.h"
#include "block/aio-wait.h"
#include "system/cpu-timers.h"
#include "system/qtest.h"
#include "h3100.h"

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
 * there instead: a timer at the earliest model time of the commands with
 * block I/O in flight and, once that has passed, one due a nanosecond
 * ahead, renewed until the I/O is back.  Not "now": a qtest step to the
 * next deadline must still advance (libqtest asserts it does), and a
 * timer due now would re-run in the same pass of the timer list.
 *
 * Under qtest a clock_step of N ns runs the timer list once per
 * deadline, so 1 ns renewals would make it N passes: renewals that
 * follow each other within H3100_HOLD_BURST_NS of host time (one
 * clock_step) go twice as far each time, log2(N) passes.  Under -icount
 * every renewal is 1 ns, and in the main context the vCPU waits instead
 * (h3100_hold_waits_here): the host's time stays out of virtual time.
 * Under plain TCG virtual time is host time: no hold.
 */
static uint64_t h3100_first_due(H3100State *s)
{
    uint64_t first = UINT64_MAX;
    H3100Req *req;

    QTAILQ_FOREACH(req, &s->inflight, ioentry) {
        first = MIN(first, req->done_ns);
    }
    return first;
}

/*
 * Under -icount a busy vCPU also moves virtual time on while the host's
 * I/O runs: how far would depend on the host's disk and load.  In the
 * main context this timer runs in the vCPU thread: wait here, the guest's
 * instructions stopped, until the commands whose model time has come are
 * back from the block layer; then no host time reaches virtual time.
 */
static bool h3100_hold_waits_here(H3100State *s)
{
    return icount_enabled() && !qtest_enabled() &&
           s->ctx == qemu_get_aio_context();
}

void h3100_hold_timer_cb(void *opaque)
{
    H3100State *s = opaque;
    uint64_t first = h3100_first_due(s);
    int64_t rt;

    if (first <= h3100_now(s) && h3100_hold_waits_here(s)) {
        AIO_WAIT_WHILE(s->ctx, h3100_first_due(s) <= h3100_now(s));
        first = h3100_first_due(s);
    }
    if (first == UINT64_MAX) {
        return;
    }
    if (first > h3100_now(s)) {
        timer_mod(s->hold_timer, h3100_virt_ns(s, first));
        return;
    }
    rt = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
    if (qtest_enabled() && rt - s->hold_last_rt < H3100_HOLD_BURST_NS) {
        s->hold_step = MIN(s->hold_step * 2, H3100_HOLD_STEP_MAX_NS);
    } else {
        s->hold_step = 1;
    }
    s->hold_last_rt = rt;
    timer_mod(s->hold_timer,
              qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + s->hold_step);
}

/*
 * Commands with block I/O in flight: for the hold, and so that Format
 * and Sanitize can let writes already sent land before they erase.
 */
void h3100_inflight_add(H3100State *s, H3100Req *req)
{
    int64_t at = h3100_virt_ns(s, req->done_ns);

    QTAILQ_INSERT_TAIL(&s->inflight, req, ioentry);
    req->in_flight = true;
    if (req->sq->sqid) {
        s->io_inflight++;
    }
    if (s->hold && (!timer_pending(s->hold_timer) ||
                    timer_expire_time_ns(s->hold_timer) > at)) {
        timer_mod(s->hold_timer, at);
    }
}

void h3100_inflight_remove(H3100State *s, H3100Req *req)
{
    if (!req->in_flight) {
        return;
    }
    QTAILQ_REMOVE(&s->inflight, req, ioentry);
    req->in_flight = false;
    if (QTAILQ_EMPTY(&s->inflight)) {
        timer_del(s->hold_timer);
    }
    if (req->sq->sqid && !--s->io_inflight) {
        h3100_maint_io_drained(s);
    }
}
