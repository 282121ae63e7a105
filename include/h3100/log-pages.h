/*
 * The drive's log pages, one line per page: the only list of them.
 *
 * X(lid, ID, handler, name)
 *   ID       H3100_LOG_<ID> (below) and the test host's NVME_LOG_<ID>
 *   handler  h3100_log_<handler> in hw/h3100-log.c, which serves it
 *   name     trace events and messages
 *
 * Get Log Page dispatches through a table built from it
 * (hw/h3100-log.c); the device tests, the hostile guest and the fuzzer's
 * dictionary take their LIDs from it and the docs check docs/guide/usage.md's
 * table of log pages against it.  A page's layout has its own header
 * (vlog.h, dapustor-log.h, telemetry-log.h,
 * lba-status-log.h) or QEMU's block/nvme.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_LOG_PAGES_H
#define H3100_LOG_PAGES_H

#define H3100_LOG_PAGES(X) \
    X(0x01, ERROR, error, "error-information") \
    X(0x02, SMART, smart, "smart-health") \
    X(0x03, FW_SLOT, fw_slot, "firmware-slot") \
    X(0x04, CHANGED_NS, changed_ns, "changed-namespace-list") \
    X(0x05, CMD_EFFECTS, effects, "commands-supported-effects") \
    X(0x06, SELF_TEST, self_test, "device-self-test") \
    X(0x07, TELEMETRY_HOST, telemetry, "telemetry-host") \
    X(0x08, TELEMETRY_CTRL, telemetry, "telemetry-controller") \
    X(0x0e, LBA_STATUS, lba_status, "lba-status-information") \
    X(0x81, SANITIZE, sanitize, "sanitize-status") \
    X(0xc0, OCP_SMART, ocp_smart, "ocp-smart-extended") \
    X(0xca, DAPU_SMART, dapu_smart, "dapustor-smart") \
    X(0xcb, DAPU_EXT, dapu_ext, "dapustor-smart-extended") \
    X(0xd0, VENDOR, vendor, "h3100-model")

#define H3100_LOG_ID(lid, id, handler, name) H3100_LOG_##id = lid,
enum { H3100_LOG_PAGES(H3100_LOG_ID) };
#undef H3100_LOG_ID

#endif
