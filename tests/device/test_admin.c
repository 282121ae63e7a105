/*
 * Admin commands, one Check case per file: queues (test_admin_queues.c),
 * logs (test_admin_logs.c), features and interrupts (test_admin_features.c),
 * events and abort (test_admin_events.c), firmware, format, sanitize,
 * self-test and doorbell buffer config (test_admin_maint.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "test_admin.h"

NvmeCqe admin_raw(Dev *d, NvmeSqe *sqe)
{
    return nh_cmd(d->h, d->h->admin, sqe);
}

uint16_t admin_status(Dev *d, uint8_t opc, uint32_t nsid,
                      uint32_t cdw10, uint32_t cdw11)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, opc, nsid);
    sqe.cdw10 = cdw10;
    sqe.cdw11 = cdw11;
    cqe = admin_raw(d, &sqe);
    return nh_status(&cqe);
}

int main(void)
{
    Suite *s = suite_create("admin");

    admin_queues_tcase(s);
    admin_logs_tcase(s);
    admin_features_tcase(s);
    admin_events_tcase(s);
    admin_maint_tcase(s);
    return dev_main(s);
}
