/*
 * The drive's features (Get / Set Features), one line per feature: the
 * only list of them.
 *
 * X(fid, ID, handler, name, cap)
 *   ID       the test host's NVME_FEAT_<ID> (tests/device/nvme_host.h)
 *   handler  h3100_get_<handler> and h3100_set_<handler>
 *            (hw/h3100-features.c)
 *   name     trace events and messages
 *   cap      what Get Features SEL 3 answers: H3100_FCAP (changeable) or
 *            H3100_FCAP_NS (changeable, per namespace); expands in hw/
 *
 * hw/h3100-features.c builds its table from it; the device tests take
 * the FIDs from it and the docs check docs/guide/usage.md's table of features
 * against it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_FEATURES_H
#define H3100_FEATURES_H

#define H3100_FEATURES(X) \
    X(0x01, ARBITRATION, arb, "arbitration", H3100_FCAP) \
    X(0x02, POWER_MGMT, pm, "power-management", H3100_FCAP) \
    X(0x04, TEMP_THRESH, temp, "temperature-threshold", H3100_FCAP) \
    X(0x05, ERROR_RECOVERY, err_rec, "error-recovery", H3100_FCAP_NS) \
    X(0x06, VWC, vwc, "volatile-write-cache", H3100_FCAP) \
    X(0x07, NUM_QUEUES, nq, "number-of-queues", H3100_FCAP) \
    X(0x08, IRQ_COALESCE, intc, "interrupt-coalescing", H3100_FCAP) \
    X(0x09, IRQ_CONFIG, ivc, "interrupt-vector-config", H3100_FCAP) \
    X(0x0a, WRITE_ATOMIC, wan, "write-atomicity-normal", H3100_FCAP) \
    X(0x0b, ASYNC_EVENT, aec, "async-event-config", H3100_FCAP) \
    X(0x0e, TIMESTAMP, ts, "timestamp", H3100_FCAP) \
    X(0x10, HCTM, hctm, "host-thermal-management", H3100_FCAP) \
    X(0x15, LBA_STATUS_ATTR, lsi, "lba-status-information-attributes", \
      H3100_FCAP)

#endif
