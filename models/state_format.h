/*
 * The drive state file's header, and where its fields lie: one
 * definition, for models/state.c and for the tests and seed generator
 * that build or damage files by hand.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_STATE_FORMAT_H
#define H3100_STATE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "crc32c.h"
#include "ecc.h"
#include "thermal.h"

typedef struct StateHeader {
    char magic[8];
    uint32_t version;
    uint32_t header_crc;              /* with this field zero */
    uint64_t payload_bytes;
    uint32_t payload_crc;
    uint32_t family;
    char profile[32];
    uint64_t user_bytes;
    uint32_t geo[8];
    uint32_t factory_bad_ppm;
    uint32_t flags;                   /* H3100_STATE_DIRTY */
} StateHeader;

_Static_assert(sizeof(StateHeader) == 112, "the header is part of the format");
_Static_assert(sizeof(ThermalStats) == 40, "saved as is (version 3)");
_Static_assert(sizeof(EccStats) == 32, "saved as is (version 4)");

/* byte offsets and sizes in the file */
#define STATE_HDR_VERSION       offsetof(StateHeader, version)
#define STATE_HDR_CRC           offsetof(StateHeader, header_crc)
#define STATE_HDR_PAYLOAD       offsetof(StateHeader, payload_bytes)
#define STATE_HDR_PAYLOAD_CRC   offsetof(StateHeader, payload_crc)
#define STATE_HDR_BYTES         sizeof(StateHeader)
/* version 3's thermal counters, version 4's LDPC counters, then the
 * extra state's length */
#define STATE_THERMAL_BYTES     sizeof(ThermalStats)
#define STATE_ECC_BYTES         sizeof(EccStats)
#define STATE_EXTRA_LEN_BYTES   sizeof(uint64_t)

/*
 * A file of @len bytes in @buf, edited by hand: set the header's payload
 * length and both checksums again, as the saver does (tests and seeds).
 */
static inline void state_header_mend(uint8_t *buf, size_t len)
{
    uint64_t payload = len - STATE_HDR_BYTES;
    uint32_t crc;

    memcpy(buf + STATE_HDR_PAYLOAD, &payload, 8);
    crc = crc32c(buf + STATE_HDR_BYTES, payload);
    memcpy(buf + STATE_HDR_PAYLOAD_CRC, &crc, 4);
    memset(buf + STATE_HDR_CRC, 0, 4);
    crc = crc32c(buf, STATE_HDR_BYTES);
    memcpy(buf + STATE_HDR_CRC, &crc, 4);
}

#endif
