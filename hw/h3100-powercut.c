/*
 * DapuStor H3100 NVMe SSD: power cut on demand
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * `qom-set /machine/peripheral/ID power-cut drive|machine` (QMP or HMP)
 * cuts the drive's power as a real one loses it:
 * - commands in flight are lost: no completion is ever posted (what the
 *   block layer already had lands, as a half-done write does on NAND);
 * - with vwc=off (power-loss protection) every completed write is kept;
 *   with vwc=on the writes no Flush covered are dropped (h3100-vcache.c);
 * - the drive comes back as after a power cycle: the controller is reset
 *   to its power-on state (CSTS.RDY 0, no queues), SMART counts one more
 *   power cycle and, unless the host's shutdown notification completed
 *   first (h3100-shutdown.c), one more unsafe shutdown.
 * "drive": only the drive loses power; the guest's driver finds a
 * controller that is not ready (Linux notices at its next command
 * time-out and resets it).  "machine": the whole machine loses power
 * with it: QEMU then resets the machine (or exits, with -no-reboot).
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "system/runstate.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-life.h"
#include "trace.h"

static void h3100_power_cut(H3100State *s, bool machine)
{
    unsigned dropped;

    /*
     * The reset lets every block request land and releases every command
     * (those werror=stop kept too) without a completion; the controller
     * is then off, so no new write comes before the unflushed are dropped.
     */
    h3100_ctrl_reset(s);
    h3100_faults_drop(s);
    dropped = h3100_vcache_drop(s);
    s->power_cycles++;
    if (!s->shutdown.done) {
        s->unsafe_shutdowns++;    /* no completed shutdown notification */
    }
    trace_h3100_power_cut(machine, dropped);
    h3100_regs_init(s);
    if (machine) {
        qemu_system_reset_request(SHUTDOWN_CAUSE_HOST_QMP_SYSTEM_RESET);
    }
}

static char *h3100_power_cut_get(Object *obj, Error **errp)
{
    return g_strdup("");
}

static void h3100_power_cut_set(Object *obj, const char *value, Error **errp)
{
    H3100State *s = DAPUSTOR_H3100(obj);
    bool machine;

    if (!strcmp(value, "machine")) {
        machine = true;
    } else if (!strcmp(value, "drive")) {
        machine = false;
    } else {
        error_setg(errp, "power-cut: 'drive' or 'machine', not '%s'", value);
        return;
    }
    if (!s->model) {
        error_setg(errp, "power-cut: the drive is not running");
        return;
    }
    h3100_power_cut(s, machine);
}

void h3100_power_cut_class_init(ObjectClass *oc)
{
    object_class_property_add_str(oc, "power-cut", h3100_power_cut_get,
                                  h3100_power_cut_set);
    object_class_property_set_description(oc, "power-cut",
        "cut the drive's power: 'drive' (the drive alone) or 'machine'");
}
