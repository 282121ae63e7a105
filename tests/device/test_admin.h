/*
 * The admin suite (test-device-admin): its commands' helpers, and the
 * function of each file that adds that file's Check case to the suite.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TEST_ADMIN_H
#define TEST_ADMIN_H

#include "dev.h"

/* One admin command; its completion. */
NvmeCqe admin_raw(Dev *d, NvmeSqe *sqe);
/* One admin command with CDW10 and CDW11; its status. */
uint16_t admin_status(Dev *d, uint8_t opc, uint32_t nsid,
                      uint32_t cdw10, uint32_t cdw11);

void admin_queues_tcase(Suite *s);
void admin_logs_tcase(Suite *s);
void admin_features_tcase(Suite *s);
void admin_events_tcase(Suite *s);
void admin_maint_tcase(Suite *s);

#endif
