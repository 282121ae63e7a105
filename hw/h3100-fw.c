/*
 * DapuStor H3100 NVMe SSD: Firmware Image Download and Firmware Commit
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Three slots; slot 1 holds the firmware= revision at power-on.  An image
 * is downloaded in order (each piece at offset 0, which restarts it, or
 * at the end of what came before).  A valid image starts with the magic
 * "H3FW" followed by its 8-character revision (bytes 4-11).
 *
 * Commit actions: 0 replace the slot's image; 1 replace and activate at
 * the next controller reset; 2 activate the slot's image at the next
 * reset; 3 activate the slot's image now.  Identify's FR and the firmware
 * slot log report the active revision.
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-mgmt.h"
#include "trace.h"

#define H3100_FW_HDR_BYTES  12
#define H3100_AER_INFO_FW_ACT_STARTING 0x01

void h3100_fw_init(H3100State *s)
{
    memset(s->fw.slot, 0, sizeof(s->fw.slot));
    strpadcpy(s->fw.slot[1], 8, s->firmware, ' ');
    s->fw.active = 1;
    s->fw.next = 0;
    s->fw.image = NULL;
    s->fw.image_len = 0;
}

void h3100_fw_free(H3100State *s)
{
    g_free(s->fw.image);
    s->fw.image = NULL;
    s->fw.image_len = 0;
}

/* Controller reset: a pending activation takes effect. */
void h3100_fw_reset(H3100State *s)
{
    if (s->fw.next) {
        trace_h3100_fw_activate(s->fw.next);
        s->fw.active = s->fw.next;
        s->ext.fw_updates++;
        s->fw.next = 0;
    }
}

uint16_t h3100_fw_download(H3100State *s, H3100Req *req)
{
    uint64_t len = ((uint64_t)le32_to_cpu(req->cmd.cdw10) + 1) * 4;
    uint64_t off = (uint64_t)le32_to_cpu(req->cmd.cdw11) * 4;
    uint16_t status;

    trace_h3100_admin_fw_download(off, len);
    if (len > h3100_mdts_bytes(s)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if ((off && off != s->fw.image_len) ||
        off + len > H3100_FW_MAX_BYTES) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    s->fw.image = g_realloc(s->fw.image, off + len);
    status = h3100_dma_from_host(s, req, s->fw.image + off, len);
    s->fw.image_len = status ? 0 : off + len;
    return status;
}

static bool h3100_fw_image_valid(H3100State *s)
{
    if (s->fw.image_len < H3100_FW_HDR_BYTES ||
        memcmp(s->fw.image, H3100_FW_MAGIC, 4)) {
        return false;
    }
    for (unsigned i = 4; i < H3100_FW_HDR_BYTES; i++) {
        if (!g_ascii_isprint(s->fw.image[i])) {
            return false;
        }
    }
    return true;
}

static uint8_t h3100_fw_pick_slot(H3100State *s)
{
    for (unsigned i = 1; i <= H3100_FW_SLOTS; i++) {
        if (i != s->fw.active && !s->fw.slot[i][0]) {
            return i;
        }
    }
    return s->fw.active % H3100_FW_SLOTS + 1;
}

static uint16_t h3100_fw_replace(H3100State *s, uint8_t *fs)
{
    if (!h3100_fw_image_valid(s)) {
        return NVME_INVALID_FW_IMAGE | NVME_DNR;
    }
    if (!*fs) {
        *fs = h3100_fw_pick_slot(s);
    }
    memcpy(s->fw.slot[*fs], s->fw.image + 4, 8);
    h3100_fw_free(s);
    return NVME_SUCCESS;
}

uint16_t h3100_fw_commit(H3100State *s, H3100Req *req)
{
    uint32_t dw10 = le32_to_cpu(req->cmd.cdw10);
    uint8_t fs = dw10 & 0x7;
    uint8_t ca = (dw10 >> 3) & 0x7;
    uint16_t status;

    trace_h3100_admin_fw_commit(fs, ca);
    if (fs > H3100_FW_SLOTS) {
        return NVME_INVALID_FW_SLOT | NVME_DNR;
    }
    switch (ca) {
    case 0:
    case 1:
        status = h3100_fw_replace(s, &fs);
        if (status) {
            return status;
        }
        if (ca == 1) {
            s->fw.next = fs;
        }
        return NVME_SUCCESS;
    case 2:
    case 3:
        if (!fs) {
            return NVME_INVALID_FW_SLOT | NVME_DNR;
        }
        if (!s->fw.slot[fs][0]) {
            return NVME_INVALID_FW_IMAGE | NVME_DNR;
        }
        if (ca == 2) {
            s->fw.next = fs;
            return NVME_SUCCESS;
        }
        if (NVME_AEC_FW_ACTIVATION(s->feat.aec)) {
            h3100_aer_enqueue(s, NVME_AER_TYPE_NOTICE,
                              H3100_AER_INFO_FW_ACT_STARTING,
                              H3100_LOG_FW_SLOT);
        }
        trace_h3100_fw_activate(fs);
        s->fw.active = fs;
        s->fw.next = 0;
        s->ext.fw_updates++;
        return NVME_SUCCESS;
    default:
        return NVME_INVALID_FIELD | NVME_DNR;
    }
}
