/*
 * DapuStor H3100 NVMe SSD: interrupts
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The last step of a completion (h3100-complete.c): MSI-X messages,
 * coalesced per vector (Interrupt Coalescing feature, h3100-features.c);
 * the admin vector and vectors with Coalescing Disable set are never
 * delayed.  Without MSI-X, the INTx pin is a level: asserted while a CQ
 * that uses it has entries the host has not consumed and INTMS does not
 * mask it.  Interrupts raised from an IOThread are delivered by a bottom
 * half in the main loop.
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "h3100.h"
#include "h3100-core.h"
#include "trace.h"

/* The Interrupt Coalescing feature (08h): aggregation time and threshold */
static uint32_t h3100_coalesce_time_ns(H3100State *s)
{
    return NVME_INTC_TIME(s->feat.int_coalescing) * 100 * SCALE_US;
}

static uint32_t h3100_coalesce_thr(H3100State *s)
{
    return NVME_INTC_THR(s->feat.int_coalescing);
}

/*
 * msix_notify and pci_irq_* need the BQL: a vCPU or the main loop sends
 * the message itself, an IOThread hands it to h3100_irq_bh.
 */
static bool h3100_irq_direct(void)
{
    return bql_locked();
}

/*
 * An MSI-X message aimed at the device's own BAR0 would write its
 * registers from inside queue processing (CC.EN=0: a reset under the
 * feet of the caller).  The re-entrancy guard refuses it in the main
 * loop; this check also covers the IOThread.
 */
static bool h3100_msix_target_ok(H3100State *s, unsigned vector)
{
    PCIDevice *pci = PCI_DEVICE(s);
    uint64_t bar = pci_get_bar_addr(pci, 0);
    MSIMessage msg;

    if (msix_is_masked(pci, vector) || bar == PCI_BAR_UNMAPPED) {
        return true;
    }
    msg = msix_get_message(pci, vector);
    if (msg.address >= bar && msg.address - bar < H3100_BAR0_SIZE) {
        H3100_GUEST_ERR(h3100_ub_msix_bar0, "MSI-X vector %u addresses the "
                        "device's own BAR0 (0x%" PRIx64 "): not sent",
                        vector, msg.address);
        return false;
    }
    return true;
}

static void h3100_msix_notify(H3100State *s, unsigned vector)
{
    if (!h3100_off_bus(s) && h3100_msix_target_ok(s, vector)) {
        msix_notify(PCI_DEVICE(s), vector);
    }
}

/*
 * The INTx pin's level: a vector with completions the host has not
 * consumed (irq_status) that INTMS does not mask, and the link up (a
 * link-down fault).  Read atomically: an IOThread's completions set
 * irq_status while the main loop reads it.
 */
static bool h3100_intx_level(H3100State *s)
{
    return !h3100_off_bus(s) &&
           (qatomic_read(&s->irq_status) & ~ldl_le_p(&s->bar.intms));
}

/* Main loop bottom half: deliver interrupts raised in the IOThread. */
void h3100_irq_bh(void *opaque)
{
    H3100State *s = opaque;
    PCIDevice *pci = PCI_DEVICE(s);

    for (unsigned w = 0; w < H3100_IRQ_WORDS; w++) {
        uint64_t bits = qatomic_xchg(&s->irq_pending[w], 0);

        while (bits) {
            unsigned v = w * 64 + ctz64(bits);

            bits &= bits - 1;
            if (msix_enabled(pci) && v < s->nvec) {
                h3100_msix_notify(s, v);
            }
        }
    }
    if (!msix_enabled(pci)) {
        if (h3100_intx_level(s)) {
            pci_irq_assert(pci);
        } else {
            pci_irq_deassert(pci);
        }
    }
}

static void h3100_msix_fire(H3100State *s, uint16_t vector)
{
    H3100Vector *v = &s->vec[vector];

    trace_h3100_irq_msix(vector, v->count);
    v->count = 0;
    if (h3100_irq_direct()) {
        h3100_msix_notify(s, vector);
    } else {
        qatomic_or(&s->irq_pending[vector / 64], 1ULL << (vector % 64));
        qemu_bh_schedule(s->irq_bh);
    }
    h3100_timer_del(v->timer);          /* nothing left to coalesce */
}

/*
 * Drive the pin from irq_status and INTMS: directly under the BQL, else
 * through h3100_irq_bh (an IOThread must not touch the PCI bus's INTx
 * counts while the main loop may change them).
 */
void h3100_intx_update(H3100State *s)
{
    PCIDevice *pci = PCI_DEVICE(s);

    if (!h3100_irq_direct()) {
        qemu_bh_schedule(s->irq_bh);
        return;
    }
    if (h3100_intx_level(s)) {
        trace_h3100_irq_pin(1);
        pci_irq_assert(pci);
    } else {
        trace_h3100_irq_pin(0);
        pci_irq_deassert(pci);
    }
}

void h3100_irq_timer_cb(void *opaque)
{
    H3100Vector *v = opaque;

    if (v->count) {
        h3100_msix_fire(v->s, v->idx);
    }
}

/*
 * @n completions were posted to @cq: raise its vector or pin, at once or
 * as coalescing allows.
 */
void h3100_irq_notify(H3100State *s, H3100CQueue *cq, unsigned n)
{
    uint32_t time_ns = h3100_coalesce_time_ns(s);
    uint32_t thr = h3100_coalesce_thr(s);
    H3100Vector *v;

    if (!n || !cq->irq_enabled) {
        return;
    }
    if (!msix_enabled(PCI_DEVICE(s))) {
        qatomic_or(&s->irq_status, 1u << (cq->vector & 31));
        h3100_intx_update(s);
        return;
    }
    v = &s->vec[cq->vector];
    v->count += n;
    if (cq->vector == 0 || v->no_coalesce || !time_ns ||
        v->count >= thr + 1) {
        h3100_msix_fire(s, cq->vector);
    } else if (!h3100_timer_pending(v->timer)) {
        h3100_timer_mod_in(v->timer, time_ns);
    }
}

void h3100_irq_deassert(H3100State *s, H3100CQueue *cq)
{
    if (msix_enabled(PCI_DEVICE(s)) || !cq->irq_enabled) {
        return;
    }
    for (unsigned i = 0; i <= s->max_ioqpairs; i++) {
        H3100CQueue *o = s->cq[i];

        if (o && o->irq_enabled && o->vector == cq->vector &&
            o->head != o->tail) {
            return;
        }
    }
    qatomic_and(&s->irq_status, ~(1u << (cq->vector & 31)));
    h3100_intx_update(s);
}

/*
 * The host consumed some of the CQ's entries but not all: an MSI-X
 * message is an edge, so send another one, or a host that takes one
 * entry per interrupt waits for nothing ("completion polled" in Linux).
 * INTx is a level and stays asserted.
 */
void h3100_irq_resend(H3100State *s, H3100CQueue *cq)
{
    if (cq->irq_enabled && msix_enabled(PCI_DEVICE(s))) {
        h3100_msix_fire(s, cq->vector);
    }
}
