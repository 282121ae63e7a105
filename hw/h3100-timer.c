/*
 * DapuStor H3100 NVMe SSD: the device's virtual-clock timers
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Every timer of the device runs in the device's context (or a queue
 * group's, h3100-qgroup.c) under s->lock, with the re-entrancy guard
 * engaged in the main loop, and is never missing from its timer list
 * while it is due.  Its gen and running are s->lock's; timer_mod and
 * timer_del are thread-safe, so any thread may move it.
 *
 * In the main context a timer goes on the main loop's timer list: under
 * -icount those timers run in the vCPU thread exactly at their deadline,
 * where an AioContext timer would wait for the main loop to wake up while
 * the guest runs on, and the wait would show up as latency the drive
 * never had.
 *
 * With an IOThread, qtest's clock_step and icount's warp read the
 * IOThread's timer list from another thread, and QEMU takes a timer off
 * its list before it runs the callback.  A callback that re-arms its
 * timer (the next row of telemetry, the next completion due) would leave
 * a moment when the device has nothing due, and virtual time could jump
 * to the machine's next deadline, past the time the callback is about to
 * ask for: a completion 10 ms late, a 110 ms telemetry row.  So an
 * H3100Timer is two QEMU timers, always moved together: while one runs
 * its callback, the other still stands where both were.  A callback that
 * does not re-arm takes the other off the list when it returns, so each
 * arming runs the callback once.
 */

#include "qemu/osdep.h"
#include "qemu/timer.h"
#include "h3100.h"
#include "h3100-compat.h"
#include "h3100-core.h"

struct H3100Timer {
    H3100State *s;
    QEMUTimerCB *cb;
    void *opaque;
    QEMUTimer *t[2];
    unsigned gen;                     /* moved by each mod and del */
    bool running;                     /* in cb, not re-armed since */
};

static void h3100_timer_fire(void *opaque)
{
    H3100Timer *t = opaque;
    H3100State *s = t->s;
    unsigned gen;
    bool was;

    h3100_lock(s);
    gen = t->gen;
    was = h3100_guard_enter(s);
    t->running = true;
    t->cb(t->opaque);
    if (t->gen == gen) {
        timer_del(t->t[0]);
        timer_del(t->t[1]);
    }
    t->running = false;
    h3100_guard_leave(s, was);
    h3100_unlock(s);
}

H3100Timer *h3100_timer_new_in(H3100State *s, AioContext *ctx,
                               QEMUTimerCB *cb, void *opaque)
{
    H3100Timer *t = g_new0(H3100Timer, 1);

    t->s = s;
    t->cb = cb;
    t->opaque = opaque;
    for (unsigned i = 0; i < ARRAY_SIZE(t->t); i++) {
        if (ctx == qemu_get_aio_context()) {
            t->t[i] = timer_new_ns(QEMU_CLOCK_VIRTUAL, h3100_timer_fire, t);
        } else {
            t->t[i] = aio_timer_new(ctx, QEMU_CLOCK_VIRTUAL, SCALE_NS,
                                    h3100_timer_fire, t);
        }
    }
    return t;
}

H3100Timer *h3100_timer_new(H3100State *s, QEMUTimerCB *cb, void *opaque)
{
    return h3100_timer_new_in(s, s->ctx, cb, opaque);
}

void h3100_timer_free(H3100Timer **tp)
{
    H3100Timer *t = *tp;

    if (t) {
        timer_free(t->t[0]);
        timer_free(t->t[1]);
        g_free(t);
        *tp = NULL;
    }
}

/* Run the callback at @ns of virtual time (once, however often moved). */
void h3100_timer_mod(H3100Timer *t, int64_t ns)
{
    t->gen++;
    t->running = false;
    /* each timer_mod is atomic: one of the two is on the list throughout */
    timer_mod(t->t[1], ns);
    timer_mod(t->t[0], ns);
}

/* ... @ns from now. */
void h3100_timer_mod_in(H3100Timer *t, int64_t ns)
{
    h3100_timer_mod(t, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ns);
}

void h3100_timer_del(H3100Timer *t)
{
    t->gen++;
    t->running = false;
    timer_del(t->t[0]);
    timer_del(t->t[1]);
}

/* When the callback is due, -1 if it is not (in the callback: not). */
int64_t h3100_timer_expire_ns(H3100Timer *t)
{
    for (unsigned i = 0; i < ARRAY_SIZE(t->t) && !t->running; i++) {
        if (timer_pending(t->t[i])) {
            return timer_expire_time_ns(t->t[i]);
        }
    }
    return -1;
}

bool h3100_timer_pending(H3100Timer *t)
{
    return h3100_timer_expire_ns(t) >= 0;
}
