/*
 * The OCP SMART / Health Information Extended log page (C0h, OCP
 * Datacenter NVMe SSD specification 1.0, log page version 3): its one
 * definition.  The offsets are those nvme-cli's OCP plugin decodes
 * (`nvme ocp smart-add-log`); the device fills the page
 * (hw/h3100-log.c), docs/guide/usage.md's C0h table names these fields and
 * tests/docs checks it against this list.  The device tests read the
 * page at the plugin's offsets, written out, so that a field this list
 * puts at the wrong offset fails them.  Little-endian; fields the model
 * cannot know are zero.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_OCP_LOG_H
#define H3100_OCP_LOG_H

#include <stddef.h>
#include <stdint.h>

#define H3100_OCP_SMART_BYTES       512
#define H3100_OCP_SMART_VERSION     3           /* OCP 1.0 layout */

/*
 * The fields in page order: X(name, bytes), reserved ranges included
 * (rsvd<offset>), so each field's offset is the sum of the widths
 * before it.
 */
#define H3100_OCP_SMART_FIELDS(X)                                           \
    X(media_units_written, 16)        /* bytes */                           \
    X(media_units_read, 16)           /* bytes */                           \
    X(bad_user_blocks_raw, 6)                                               \
    X(bad_user_blocks_norm, 2)                                              \
    X(bad_system_blocks_raw, 6)                                             \
    X(bad_system_blocks_norm, 2)                                            \
    X(xor_recovery_count, 8)                                                \
    X(uncorrectable_read_errors, 8)                                         \
    X(soft_ecc_errors, 8)                                                   \
    X(e2e_detected_errors, 4)                                               \
    X(e2e_corrected_errors, 4)                                              \
    X(system_data_used_pct, 1)                                              \
    X(refresh_counts, 7)                                                    \
    X(max_user_erase_count, 4)                                              \
    X(min_user_erase_count, 4)                                              \
    X(thermal_throttling_events, 1)                                         \
    X(thermal_throttling_status, 1)                                         \
    X(errata_version, 1)                                                    \
    X(point_version, 2)                                                     \
    X(minor_version, 2)                                                     \
    X(major_version, 1)                                                     \
    X(pcie_correctable_errors, 8)                                           \
    X(incomplete_shutdowns, 4)                                              \
    X(rsvd116, 4)                                                           \
    X(free_blocks_pct, 1)                                                   \
    X(rsvd121, 7)                                                           \
    X(capacitor_health, 2)                                                  \
    X(rsvd130, 6)                                                           \
    X(unaligned_io, 8)                                                      \
    X(security_version, 8)                                                  \
    X(nuse, 8)                                                              \
    X(plp_start_count, 16)                                                  \
    X(endurance_estimate, 16)         /* 10^9 bytes */                      \
    X(pcie_link_retraining, 8)                                              \
    X(power_state_changes, 8)                                               \
    X(rsvd208, 286)                                                         \
    X(log_page_version, 2)                                                  \
    X(log_page_guid, 16)

#define H3100_OCP_MEMBER(name, bytes) uint8_t name[bytes];

/* byte arrays: no padding, each field's size is its width */
typedef struct H3100OcpSmartLog {
    H3100_OCP_SMART_FIELDS(H3100_OCP_MEMBER)
} H3100OcpSmartLog;

_Static_assert(sizeof(H3100OcpSmartLog) == H3100_OCP_SMART_BYTES,
               "H3100OcpSmartLog is the page");
_Static_assert(offsetof(H3100OcpSmartLog, nuse) == 152,
               "H3100OcpSmartLog layout");
_Static_assert(offsetof(H3100OcpSmartLog, log_page_version) == 494,
               "H3100OcpSmartLog layout");

#endif
