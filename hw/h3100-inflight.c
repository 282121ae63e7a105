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
#include "h3100.h"

/*
 * Under qtest or -icount, virtual time does not follow the host's clock:
 * a step to the next deadline (qtest) or an idle vCPU's warp (icount,
 * sleep=off) would carry it past a command whose model time has come
 * while its host I/O is still running, and the guest would see the
 * host's disk in the drive's latency.  The device holds virtual time
 * there instead: a timer at the earliest model time of the commands with
 * block I/O in flight and, once that has passed, one due 1 ns ahead,
 * renewed until the I/O is back.  Not "now": a qtest step to the next
 * deadline must still advance (libqtest asserts it does), and virtual
 * time creeps by a nanosecond a step, not by the host's milliseconds.
 * Under plain TCG virtual time is host time: no hold.
 *
 * The timer is on the main loop's list even with an IOThread: an
 * IOThread timer that is due but not yet run makes the next deadline
 * "now" for qtest.  Its callback only renews itself (while s->holding)
 * and asks the device's context to look again (h3100_hold_bh), which
 * owns the list of commands.
 */
static void h3100_hold_update(H3100State *s)
{
    uint64_t first = UINT64_MAX;
    H3100Req *req;

    if (QTAILQ_EMPTY(&s->inflight)) {
        qatomic_set(&s->holding, false);
        timer_del(s->hold_timer);
        return;
    }
    QTAILQ_FOREACH(req, &s->inflight, ioentry) {
        first = MIN(first, req->done_ns);
    }
    if (first > h3100_now(s)) {
        qatomic_set(&s->holding, false);
        timer_mod(s->hold_timer, h3100_virt_ns(s, first));
    } else {
        qatomic_set(&s->holding, true);
        timer_mod(s->hold_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + 1);
    }
}

void h3100_hold_bh(void *opaque)
{
    h3100_hold_update(opaque);
}

/*
 * Due at a command's model time, or 1 ns after the last renewal: hold
 * (1 ns ahead never re-runs in this pass of the timer list) until the
 * device's context has looked.
 */
void h3100_hold_timer_cb(void *opaque)
{
    H3100State *s = opaque;

    qatomic_set(&s->holding, true);
    timer_mod(s->hold_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + 1);
    qemu_bh_schedule(s->hold_bh);
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
        qatomic_set(&s->holding, false);
        timer_del(s->hold_timer);
    }
    if (req->sq->sqid && !--s->io_inflight) {
        h3100_maint_io_drained(s);
    }
}
