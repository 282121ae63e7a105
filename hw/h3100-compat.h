/*
 * DapuStor H3100 NVMe SSD: what differs between the QEMU series it builds on
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * One source tree builds against QEMU 10.0 (the default) and 11.1
 * (docs/guide/qemu-series.md).  Every difference the device meets is
 * here, keyed on the first QEMU that has it, so the rest of hw/ is
 * written once, against the newest names:
 *
 *   since  what changed                               the device uses
 *   10.1   class_init's data is const void *         H3100_CLASS_DATA
 *   10.2   icount_enabled() moved to exec/icount.h   (included here)
 *   10.2   VM change handlers gained a cb_ret        h3100_add_vm_change_handler()
 *   10.2   SaveVMHandlers' complete hook renamed     H3100_SAVE_COMPLETE
 *   10.2   the main loop watches fds via io_uring     h3100_main_loop_wake()
 *   11.0   block/aio*.h moved to qemu/aio*.h          (included here)
 *   11.0   hw/qdev-properties*.h moved to hw/core/    (included here)
 *   11.0   pcie_cap_fill_link_ep_usp() gained flit    h3100_pcie_fill_link()
 *   11.0   MIG_EVENT_PRECOPY_FAILED became _FAILED    H3100_MIG_EVENT_FAILED
 *   11.1   state_pending_estimate/_exact became       H3100_QUERY_PENDING
 *          save_query_pending(MigPendingData *)
 *   11.1   VMSD post_save returns void                H3100_POST_SAVE_RET
 *
 * The "10.2" rows were found in 10.2.2 and not in 10.0.13; no 10.1 tree
 * was at hand, so a 10.1 build is untested.  Deprecated in 11.1 and kept
 * (their replacements do not exist in 10.0): VMStateInfo.get/put and the
 * VMSD hooks without errp (docs/guide/qemu-series.md, "Deprecations").
 */
#ifndef HW_DAPUSTOR_H3100_COMPAT_H
#define HW_DAPUSTOR_H3100_COMPAT_H

#define H3100_QEMU_AT_LEAST(maj, min) \
    (QEMU_VERSION_MAJOR > (maj) || \
     (QEMU_VERSION_MAJOR == (maj) && QEMU_VERSION_MINOR >= (min)))

#if H3100_QEMU_AT_LEAST(11, 0)
#include "qemu/aio.h"
#include "qemu/aio-wait.h"
#include "hw/core/qdev-properties.h"
#include "hw/core/qdev-properties-system.h"
#else
#include "block/aio.h"
#include "block/aio-wait.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#endif

#include "system/cpu-timers.h"
#if H3100_QEMU_AT_LEAST(10, 2)
#include "exec/icount.h"
#endif

#include "hw/pci/pcie.h"
#include "migration/misc.h"
#include "migration/register.h"
#include "system/runstate.h"

#if H3100_QEMU_AT_LEAST(10, 1)
#define H3100_CLASS_DATA const void *
#else
#define H3100_CLASS_DATA void *
#endif

#if H3100_QEMU_AT_LEAST(10, 2)
#define H3100_SAVE_COMPLETE save_complete
#else
#define H3100_SAVE_COMPLETE save_live_complete_precopy
#endif

#if H3100_QEMU_AT_LEAST(11, 0)
#define H3100_MIG_EVENT_FAILED MIG_EVENT_FAILED
#else
#define H3100_MIG_EVENT_FAILED MIG_EVENT_PRECOPY_FAILED
#endif

/* 11.1 asks for pending bytes through one hook with a MigPendingData. */
#define H3100_QUERY_PENDING H3100_QEMU_AT_LEAST(11, 1)

/* A post_save cannot fail from 11.1 on: "return H3100_POST_SAVE_OK;" */
#if H3100_QEMU_AT_LEAST(11, 1)
#define H3100_POST_SAVE_RET void
#define H3100_POST_SAVE_OK
#else
#define H3100_POST_SAVE_RET int
#define H3100_POST_SAVE_OK 0
#endif

static inline VMChangeStateEntry *
h3100_add_vm_change_handler(DeviceState *dev, VMChangeStateHandler *cb,
                            void *opaque)
{
#if H3100_QEMU_AT_LEAST(10, 2)
    return qdev_add_vm_change_state_handler(dev, cb, NULL, opaque);
#else
    return qdev_add_vm_change_state_handler(dev, cb, opaque);
#endif
}

/*
 * From 10.2 the main loop watches its file descriptors through an io_uring
 * (util/fdmon-io_uring.c) and submits the watches as it prepares to poll.
 * An aio_poll() of the main context from a thread that is not the main
 * loop's (a vCPU's, the migration thread's: they hold the BQL) re-arms the
 * watches it consumed without submitting them, so the main loop, asleep
 * meanwhile, no longer hears its own bottom halves.  It wakes for its next
 * timer; under -icount it has none and slept for good, the guest waiting
 * on a completion (records/test-runs.md, 2026-12-07).  Waking glib's
 * context makes it prepare, and submit, again.  Called after each wait of
 * the device that may run in such a thread.
 */
static inline void h3100_main_loop_wake(void)
{
#if H3100_QEMU_AT_LEAST(10, 2)
    g_main_context_wakeup(NULL);
#endif
}

/* The link the drive trains to; PCIe 3.0 has no Flit Mode. */
static inline void h3100_pcie_fill_link(PCIDevice *pci,
                                        PCIExpLinkWidth width,
                                        PCIExpLinkSpeed speed)
{
#if H3100_QEMU_AT_LEAST(11, 0)
    pcie_cap_fill_link_ep_usp(pci, width, speed, false);
#else
    pcie_cap_fill_link_ep_usp(pci, width, speed);
#endif
}

#endif
