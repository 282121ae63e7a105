/*
 * DapuStor H3100 NVMe SSD: Get Log Page, the error log and health events
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Log pages: 01h error information, 02h SMART / health (from the drive
 * model), 03h firmware slot information, 05h commands supported and
 * effects, 06h device self-test, 81h sanitize status.
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "trace.h"

/* ---- error information ---------------------------------------------- */

static bool h3100_is_error(uint16_t status)
{
    switch (status & 0x7ff) {
    case NVME_SUCCESS:
    case NVME_CMD_ABORT_REQ:
    case NVME_CMD_ABORT_SQ_DEL:
        return false;
    default:
        return true;
    }
}

void h3100_error_log_add(H3100State *s, H3100Req *req)
{
    NvmeErrorLog *e;

    if (!h3100_is_error(req->status)) {
        return;
    }
    memmove(&s->errlog[1], &s->errlog[0],
            sizeof(s->errlog) - sizeof(s->errlog[0]));
    e = &s->errlog[0];
    memset(e, 0, sizeof(*e));
    e->error_count = cpu_to_le64(++s->error_count);
    e->sqid = cpu_to_le16(req->sq->sqid);
    e->cid = req->cmd.cid;
    e->status_field = cpu_to_le16(req->status << 1);
    e->param_error_location = cpu_to_le16(0xffff);
    e->nsid = req->cmd.nsid;
    if (req->sq->sqid) {
        e->lba = cpu_to_le64(req->offset >> s->lbads);
    }
    trace_h3100_error_log(s->error_count, req->sq->sqid,
                          le16_to_cpu(req->cmd.cid), req->status);
}

/* ---- health ------------------------------------------------------------- */

uint8_t h3100_critical_warning(H3100State *s, const H3100Health *h)
{
    uint8_t warn = 0;

    if (h->available_spare_pct < h->spare_threshold_pct) {
        warn |= NVME_SMART_SPARE;
    }
    if (H3100_TEMP_K > s->feat.temp_over ||
        (s->feat.temp_under && H3100_TEMP_K < s->feat.temp_under)) {
        warn |= NVME_SMART_TEMPERATURE;
    }
    if (h->percentage_used >= 100 || h->read_only) {
        warn |= NVME_SMART_RELIABILITY;
    }
    if (h->read_only) {
        warn |= NVME_SMART_MEDIA_READ_ONLY;
    }
    return warn;
}

/* Raise SMART / health events for warnings that newly appeared. */
void h3100_health_check(H3100State *s)
{
    H3100Health h;
    uint8_t warn, fresh;

    h3100_health(s, &h);
    warn = h3100_critical_warning(s, &h);
    fresh = warn & ~s->smart_warn_sent & NVME_AEC_SMART(s->feat.aec);
    s->smart_warn_sent = (s->smart_warn_sent | fresh) & warn;
    if (fresh & NVME_SMART_SPARE) {
        h3100_aer_enqueue(s, NVME_AER_TYPE_SMART,
                          NVME_AER_INFO_SMART_SPARE_THRESH,
                          NVME_LOG_SMART_INFO);
    }
    if (fresh & NVME_SMART_TEMPERATURE) {
        h3100_aer_enqueue(s, NVME_AER_TYPE_SMART,
                          NVME_AER_INFO_SMART_TEMP_THRESH,
                          NVME_LOG_SMART_INFO);
    }
    if (fresh & (NVME_SMART_RELIABILITY | NVME_SMART_MEDIA_READ_ONLY)) {
        h3100_aer_enqueue(s, NVME_AER_TYPE_SMART,
                          NVME_AER_INFO_SMART_RELIABILITY,
                          NVME_LOG_SMART_INFO);
    }
}

/* a 128-bit little-endian counter */
static void h3100_u128(void *dst, uint64_t v)
{
    stq_le_p(dst, v);
    stq_le_p((uint8_t *)dst + 8, 0);
}

static void h3100_fill_smart(H3100State *s, NvmeSmartLog *l)
{
    H3100Health h;

    h3100_health(s, &h);
    l->critical_warning = h3100_critical_warning(s, &h);
    l->temperature = cpu_to_le16(H3100_TEMP_K);
    l->available_spare = MIN(h.available_spare_pct, 100);
    l->available_spare_threshold = MIN(h.spare_threshold_pct, 100);
    l->percentage_used = MIN(h.percentage_used, 255);
    h3100_u128(&l->data_units_read,
               DIV_ROUND_UP(h.host_read_bytes, 512 * 1000));
    h3100_u128(&l->data_units_written,
               DIV_ROUND_UP(h.host_write_bytes, 512 * 1000));
    h3100_u128(&l->host_read_commands, h.host_read_cmds);
    h3100_u128(&l->host_write_commands, h.host_write_cmds);
    h3100_u128(&l->controller_busy_time,
               h.core_busy_ns / MAX(s->cfg.ctrl.cores, 1) /
               (60 * NANOSECONDS_PER_SECOND));
    h3100_u128(&l->power_cycles, s->power_cycles);
    h3100_u128(&l->power_on_hours, (s->power_on_base_ns + h.now_ns) /
               (3600 * NANOSECONDS_PER_SECOND));
    h3100_u128(&l->unsafe_shutdowns, s->unsafe_shutdowns);
    h3100_u128(&l->media_errors, s->media_errors);
    h3100_u128(&l->number_of_error_log_entries, s->error_count);
}

/* ---- other pages -------------------------------------------------------- */

static void h3100_fill_fw_slot(H3100State *s, NvmeFwSlotInfoLog *l)
{
    uint8_t *frs[H3100_FW_SLOTS] = { l->frs1, l->frs2, l->frs3 };

    l->afi = s->fw.active | (s->fw.next << 4);
    for (unsigned i = 0; i < H3100_FW_SLOTS; i++) {
        memcpy(frs[i], s->fw.slot[i + 1], 8);
    }
}

static void h3100_fill_effects(NvmeEffectsLog *l)
{
    static const uint8_t admin[] = {
        NVME_ADM_CMD_DELETE_SQ, NVME_ADM_CMD_CREATE_SQ,
        NVME_ADM_CMD_GET_LOG_PAGE, NVME_ADM_CMD_DELETE_CQ,
        NVME_ADM_CMD_CREATE_CQ, NVME_ADM_CMD_IDENTIFY, NVME_ADM_CMD_ABORT,
        NVME_ADM_CMD_SET_FEATURES, NVME_ADM_CMD_GET_FEATURES,
        NVME_ADM_CMD_ASYNC_EV_REQ, NVME_ADM_CMD_DOWNLOAD_FW,
        H3100_ADM_CMD_SELF_TEST, NVME_ADM_CMD_DBBUF_CONFIG,
    };
    uint32_t erase = NVME_CMD_EFF_CSUPP | NVME_CMD_EFF_LBCC |
                     NVME_CMD_EFF_NCC | NVME_CMD_EFF_NIC | (2 << 16);
    uint32_t write = NVME_CMD_EFF_CSUPP | NVME_CMD_EFF_LBCC;

    for (unsigned i = 0; i < ARRAY_SIZE(admin); i++) {
        l->acs[admin[i]] = cpu_to_le32(NVME_CMD_EFF_CSUPP);
    }
    l->acs[NVME_ADM_CMD_ACTIVATE_FW] = cpu_to_le32(NVME_CMD_EFF_CSUPP |
                                                   NVME_CMD_EFF_CCC);
    l->acs[NVME_ADM_CMD_FORMAT_NVM] = cpu_to_le32(erase);
    l->acs[H3100_ADM_CMD_SANITIZE] = cpu_to_le32(erase);
    l->iocs[NVME_CMD_FLUSH] = cpu_to_le32(NVME_CMD_EFF_CSUPP);
    l->iocs[NVME_CMD_READ] = cpu_to_le32(NVME_CMD_EFF_CSUPP);
    l->iocs[NVME_CMD_COMPARE] = cpu_to_le32(NVME_CMD_EFF_CSUPP);
    l->iocs[NVME_CMD_WRITE] = cpu_to_le32(write);
    l->iocs[NVME_CMD_WRITE_UNCOR] = cpu_to_le32(write);
    l->iocs[NVME_CMD_WRITE_ZEROES] = cpu_to_le32(write);
    l->iocs[NVME_CMD_DSM] = cpu_to_le32(write);
}

/* Copy @len bytes of a @size-byte page from offset @off; zero past it. */
static uint16_t h3100_log_xfer(H3100State *s, H3100Req *req,
                               const void *page, uint64_t size,
                               uint64_t off, uint64_t len)
{
    g_autofree uint8_t *buf = NULL;

    if (off >= size) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    buf = g_malloc0(len);
    memcpy(buf, (const uint8_t *)page + off, MIN(len, size - off));
    return h3100_dma_to_host(s, req, buf, len);
}

static uint16_t h3100_log_page(H3100State *s, H3100Req *req, uint8_t lid,
                               uint64_t off, uint64_t len)
{
    NvmeSmartLog smart = { 0 };
    NvmeFwSlotInfoLog fw = { 0 };
    g_autofree NvmeEffectsLog *eff = NULL;

    switch (lid) {
    case NVME_LOG_ERROR_INFO:
        return h3100_log_xfer(s, req, s->errlog, sizeof(s->errlog),
                              off, len);
    case NVME_LOG_SMART_INFO:
        h3100_fill_smart(s, &smart);
        return h3100_log_xfer(s, req, &smart, sizeof(smart), off, len);
    case NVME_LOG_FW_SLOT_INFO:
        h3100_fill_fw_slot(s, &fw);
        return h3100_log_xfer(s, req, &fw, sizeof(fw), off, len);
    case NVME_LOG_CMD_EFFECTS:
        eff = g_new0(NvmeEffectsLog, 1);
        h3100_fill_effects(eff);
        return h3100_log_xfer(s, req, eff, sizeof(*eff), off, len);
    case H3100_LOG_SELF_TEST:
        return h3100_self_test_log(s, req, off, len);
    case H3100_LOG_SANITIZE:
        return h3100_sanitize_log(s, req, off, len);
    default:
        return NVME_INVALID_LOG_ID | NVME_DNR;
    }
}

static int h3100_log_event_type(uint8_t lid)
{
    switch (lid) {
    case NVME_LOG_ERROR_INFO:
        return NVME_AER_TYPE_ERROR;
    case NVME_LOG_SMART_INFO:
        return NVME_AER_TYPE_SMART;
    case NVME_LOG_FW_SLOT_INFO:
        return NVME_AER_TYPE_NOTICE;
    case H3100_LOG_SANITIZE:
        return NVME_AER_TYPE_IO_SPECIFIC;
    default:
        return -1;
    }
}

uint16_t h3100_get_log(H3100State *s, H3100Req *req)
{
    uint32_t dw10 = le32_to_cpu(req->cmd.cdw10);
    uint32_t dw11 = le32_to_cpu(req->cmd.cdw11);
    uint64_t off = le32_to_cpu(req->cmd.cdw12) |
                   ((uint64_t)le32_to_cpu(req->cmd.cdw13) << 32);
    uint32_t numd = (dw10 >> 16) | ((dw11 & 0xffff) << 16);
    uint64_t len = ((uint64_t)numd + 1) * 4;
    uint32_t nsid = le32_to_cpu(req->cmd.nsid);
    uint8_t lid = dw10 & 0xff;
    bool rae = dw10 & (1 << 15);
    uint16_t status;
    int type;

    trace_h3100_admin_get_log(lid, off, len, rae);
    if (off & 3) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (len > ((uint64_t)s->page_size << s->mdts)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (nsid && nsid != NVME_NSID_BROADCAST && nsid != H3100_NSID) {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    status = h3100_log_page(s, req, lid, off, len);
    type = h3100_log_event_type(lid);
    if (!status && !rae && type >= 0) {
        h3100_aer_clear(s, type);
    }
    return status;
}
