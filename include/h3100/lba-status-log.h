/*
 * The LBA Status Information log page (0Eh, NVMe 1.4; the NVM Command Set
 * 1.0 since NVMe 2.0): its one definition.  A header, then one namespace
 * element per attached namespace with tracked LBAs, each followed by its
 * LBA range descriptors.  The device fills it (hw/h3100-io.c, from the
 * ranges Write Uncorrectable made unreadable, which Get LBA Status
 * reports too); the device tests read it.  The offsets are libnvme's
 * (struct nvme_lba_status_log, nvme_lbas_ns_element, nvme_lba_rd) and the
 * spec's.  Little-endian on the wire.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_LBA_STATUS_LOG_H
#define H3100_LBA_STATUS_LOG_H

#include <stddef.h>
#include <stdint.h>

/* RATYPE: the Get LBA Status action type to use, 11h (tracked LBAs) */
#define H3100_LBAS_RATYPE_TRACKED   0x11

typedef struct __attribute__((packed)) H3100LbaStatusHdr {
    uint32_t lslplen;                   /* the page's length, bytes */
    uint32_t nlslne;                    /* namespace elements */
    uint32_t estulb;                    /* unrecoverable LBAs, all of them */
    uint8_t rsvd12[2];
    uint16_t lsgc;                      /* generation counter */
} H3100LbaStatusHdr;

typedef struct __attribute__((packed)) H3100LbaStatusNs {
    uint32_t neid;                      /* the namespace's NSID */
    uint32_t nlrd;                      /* range descriptors after it */
    uint8_t ratype;                     /* H3100_LBAS_RATYPE_TRACKED */
    uint8_t rsvd9[7];
} H3100LbaStatusNs;

typedef struct __attribute__((packed)) H3100LbaRangeDesc {
    uint64_t rslba;                     /* first LBA */
    uint32_t rnlb;                      /* LBAs, 0's based */
    uint8_t rsvd12[4];
} H3100LbaRangeDesc;

_Static_assert(sizeof(H3100LbaStatusHdr) == 16, "LBA status log header");
_Static_assert(offsetof(H3100LbaStatusHdr, estulb) == 8, "ESTULB");
_Static_assert(offsetof(H3100LbaStatusHdr, lsgc) == 14, "LSGC");
_Static_assert(sizeof(H3100LbaStatusNs) == 16, "namespace element");
_Static_assert(offsetof(H3100LbaStatusNs, ratype) == 8, "RATYPE");
_Static_assert(sizeof(H3100LbaRangeDesc) == 16, "LBA range descriptor");
_Static_assert(offsetof(H3100LbaRangeDesc, rnlb) == 8, "RNLB");

#endif
