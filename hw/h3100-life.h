/*
 * DapuStor H3100 NVMe SSD: the drive's life (state, migration, power)
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * h3100-state.c (the device-state file), h3100-migrate.c and
 * h3100-vmstate.c (migration), h3100-shutdown.c, h3100-powercut.c and
 * h3100-telemetry.c.
 */
#ifndef HW_DAPUSTOR_H3100_LIFE_H
#define HW_DAPUSTOR_H3100_LIFE_H

#include "h3100.h"

/* h3100-telemetry.c */
bool h3100_telemetry_open(H3100State *s, Error **errp);
void h3100_telemetry_abandon(H3100State *s);
void h3100_telemetry_init(H3100State *s);
void h3100_telemetry_start(H3100State *s);
void h3100_telemetry_note(H3100State *s, H3100Req *req, uint64_t now);
void h3100_telemetry_close(H3100State *s);
void h3100_telemetry_init_model(H3100State *s);
void h3100_telemetry_restart(H3100State *s);

/* h3100-powercut.c */
void h3100_power_cut_class_init(ObjectClass *oc);

/* h3100-state.c */
bool h3100_pstate_open(H3100State *s, Error **errp);
/* layouts of the state file that migration carries too */
void h3100_pstate_pack_ns(H3100State *s, GByteArray *b);
bool h3100_pstate_ns(H3100State *s, const uint8_t *p, gsize len, bool apply);
#define H3100_DS_UNCOR_BYTES 24      /* an uncorrectable range, flagged */
void h3100_pstate_pack_uncor(H3100State *s, GByteArray *b);
bool h3100_pstate_uncor(H3100State *s, const uint8_t *p, uint32_t n,
                        size_t size, bool apply);
void h3100_pstate_apply(H3100State *s);
bool h3100_pstate_serial(H3100State *s, char *sn, size_t len);
void h3100_pstate_save_clean(H3100State *s);
bool h3100_pstate_busy(H3100State *s);
void h3100_pstate_reopen(H3100State *s);
void h3100_pstate_close(H3100State *s);
void h3100_pstate_suspend(H3100State *s);
void h3100_pstate_resume(H3100State *s);
void h3100_pstate_handover(H3100State *s);
void h3100_pstate_takeover(H3100State *s);
void h3100_pstate_run(H3100State *s);

/* h3100-migrate.c, h3100-vmstate.c */
#define H3100_VMSTATE_VERSION       2
extern const VMStateDescription h3100_vmstate;
void h3100_mig_init(H3100State *s);
void h3100_mig_exit(H3100State *s);
void h3100_mig_forget(H3100State *s);
void h3100_mig_loaded(H3100State *s);

/* h3100-shutdown.c */
void h3100_shutdown_init(H3100State *s);
void h3100_shutdown_exit(H3100State *s);
void h3100_shutdown_begin(H3100State *s);
void h3100_shutdown_cancel(H3100State *s);
void h3100_shutdown_kick(H3100State *s);

#endif
