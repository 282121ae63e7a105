/*
 * DapuStor H3100 NVMe SSD: the drive's clock and model
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The drive's model time against QEMU's virtual clock, and every call
 * into the drive model, under model_lock (docs/design/threading.md).
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "trace.h"

uint64_t h3100_now_locked(H3100State *s)
{
    int64_t v = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - s->time_base;
    uint64_t now = v > 0 ? v : 0;

    /* the model wants non-decreasing time */
    if (now < s->model_last) {
        now = s->model_last;
    }
    s->model_last = now;
    return now;
}

uint64_t h3100_now(H3100State *s)
{
    uint64_t now;

    qemu_mutex_lock(&s->model_lock);
    now = h3100_now_locked(s);
    qemu_mutex_unlock(&s->model_lock);
    return now;
}

int64_t h3100_virt_ns(H3100State *s, uint64_t model_ns)
{
    int64_t at;

    /* a time past the clock's range never comes (saturate, not wrap) */
    if (model_ns > INT64_MAX ||
        __builtin_add_overflow(s->time_base, (int64_t)model_ns, &at)) {
        return INT64_MAX;
    }
    return at;
}

H3100Result h3100_model_io(H3100State *s, H3100Op op, uint64_t offset,
                           uint64_t length, bool fua, uint32_t stream)
{
    H3100Io io = {
        .op = op, .offset = offset, .length = length,
        .fua = fua, .stream = stream,
    };
    H3100Result r;
    uint64_t now;

    qemu_mutex_lock(&s->model_lock);
    now = h3100_now_locked(s);
    r = h3100_model_submit(s->model, now, &io);
    qemu_mutex_unlock(&s->model_lock);
    trace_h3100_model_io(op, offset, length, now, r.done_ns, r.status);
    return r;
}

void h3100_health(H3100State *s, H3100Health *h)
{
    qemu_mutex_lock(&s->model_lock);
    h3100_model_health(s->model, h3100_now_locked(s), h);
    qemu_mutex_unlock(&s->model_lock);
}

void h3100_thermal_limits(H3100State *s, uint32_t tmt1_k, uint32_t tmt2_k)
{
    qemu_mutex_lock(&s->model_lock);
    h3100_model_set_thermal_limits(s->model, tmt1_k, tmt2_k);
    qemu_mutex_unlock(&s->model_lock);
}

void h3100_power_cap(H3100State *s, unsigned ps)
{
    uint32_t mw = ps ? le16_to_cpu(s->id_ctrl.psd[ps].mp) * 10 : 0;

    qemu_mutex_lock(&s->model_lock);
    h3100_model_set_power_cap(s->model, mw);
    qemu_mutex_unlock(&s->model_lock);
}
