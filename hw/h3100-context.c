/*
 * DapuStor H3100 NVMe SSD: contexts and the re-entrancy guard
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Which thread runs what: a function run in a queue group's or the
 * controller's context (h3100_run_in()), and the memory core's
 * re-entrancy guard, engaged while the device writes guest memory from
 * a bottom half or a block-layer callback (docs/design/threading.md).
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "h3100.h"
#include "h3100-compat.h"
#include "h3100-core.h"

typedef struct H3100CtxCall {
    H3100State *s;
    void (*fn)(void *);
    void *opaque;
} H3100CtxCall;

static void h3100_ctx_call_bh(void *opaque)
{
    H3100CtxCall *c = opaque;

    h3100_lock(c->s);
    c->fn(c->opaque);
    h3100_unlock(c->s);
}

/*
 * Run @fn in @ctx under s->lock and wait for it.  The caller holds the
 * BQL and not s->lock: @ctx's thread may be waiting for it.
 */
void h3100_run_in(H3100State *s, AioContext *ctx, void (*fn)(void *),
                  void *opaque)
{
    H3100CtxCall c = { .s = s, .fn = fn, .opaque = opaque };

    if (ctx == qemu_get_aio_context()) {
        h3100_ctx_call_bh(&c);
        return;
    }
    aio_wait_bh_oneshot(ctx, h3100_ctx_call_bh, &c);
    h3100_main_loop_wake();
}

/* ... in the controller's context */
void h3100_run_in_ctx(H3100State *s, void (*fn)(void *), void *opaque)
{
    h3100_run_in(s, s->ctx, fn, opaque);
}

/*
 * The memory core refuses MMIO to the device while its re-entrancy guard
 * is engaged.  The device's bottom halves, timers and block-layer
 * callbacks engage it, so DMA or an MSI-X message aimed at BAR0 can never
 * re-enter the device.  Only where the BQL is held (the main loop, a
 * vCPU): an IOThread runs beside the vCPUs, whose own register accesses
 * an engaged guard would refuse; there (and everywhere)
 * h3100_guest_ram() keeps the device's DMA off MMIO, and
 * h3100_msix_target_ok() its MSI-X messages off BAR0.
 */
static MemReentrancyGuard *h3100_guard(H3100State *s)
{
    return bql_locked() ? &DEVICE(s)->mem_reentrancy_guard : NULL;
}

MemReentrancyGuard *h3100_guard_in(H3100State *s, AioContext *ctx)
{
    if (ctx != qemu_get_aio_context()) {
        return NULL;
    }
    return &DEVICE(s)->mem_reentrancy_guard;
}

bool h3100_guard_enter(H3100State *s)
{
    MemReentrancyGuard *g = h3100_guard(s);
    bool was = g && g->engaged_in_io;

    if (g) {
        g->engaged_in_io = true;
    }
    return was;
}

void h3100_guard_leave(H3100State *s, bool was)
{
    MemReentrancyGuard *g = h3100_guard(s);

    if (g) {
        g->engaged_in_io = was;
    }
}
