/*
 * DapuStor H3100 NVMe SSD: Get / Set Features
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Supported: Arbitration, Power Management, Temperature Threshold, Error
 * Recovery, Volatile Write Cache (vwc=on), Number of Queues, Interrupt
 * Coalescing, Interrupt Vector Configuration, Write Atomicity Normal,
 * Asynchronous Event Configuration, Timestamp.  Nothing is saveable;
 * Get Features honours SEL (current, default, saved = default,
 * supported capabilities).
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "trace.h"

#define H3100_TS_ORIGIN_HOST    (1 << 1)

void h3100_features_init(H3100State *s)
{
    H3100Features *f = &s->feat;

    memset(f, 0, sizeof(*f));
    f->arbitration = NVME_ARB_AB_NOLIMIT;
    f->temp_over = s->cfg.thermal.wctemp_k;
    f->vwc = s->vwc_present;
    f->nq = (s->max_ioqpairs - 1) | ((s->max_ioqpairs - 1) << 16);
    f->ts_base = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    f->timestamp = 0;
    if (s->blk) {
        blk_set_enable_write_cache(s->blk, f->vwc || s->backend_wce);
    }
    if (s->model) {
        h3100_thermal_limits(s, 0, 0);   /* the drive's own thresholds */
        h3100_power_cap(s, 0);           /* PS0 after a reset */
    }
    for (unsigned i = 0; s->vec && i < s->nvec; i++) {
        s->vec[i].no_coalesce = false;
    }
}

uint32_t h3100_coalesce_time_ns(H3100State *s)
{
    return NVME_INTC_TIME(s->feat.int_coalescing) * 100 * SCALE_US;
}

uint32_t h3100_coalesce_thr(H3100State *s)
{
    return NVME_INTC_THR(s->feat.int_coalescing);
}

static bool h3100_feature_known(uint8_t fid)
{
    switch (fid) {
    case NVME_ARBITRATION:
    case NVME_POWER_MANAGEMENT:
    case NVME_TEMPERATURE_THRESHOLD:
    case NVME_ERROR_RECOVERY:
    case NVME_VOLATILE_WRITE_CACHE:
    case NVME_NUMBER_OF_QUEUES:
    case NVME_INTERRUPT_COALESCING:
    case NVME_INTERRUPT_VECTOR_CONF:
    case NVME_WRITE_ATOMICITY:
    case NVME_ASYNCHRONOUS_EVENT_CONF:
    case NVME_TIMESTAMP:
    case H3100_FEAT_HCTM:
        return true;
    default:
        return false;
    }
}

static uint16_t h3100_feature_nsid(uint8_t fid, uint32_t nsid)
{
    if (nsid == 0 || nsid == NVME_NSID_BROADCAST) {
        return NVME_SUCCESS;
    }
    if (nsid != H3100_NSID) {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    if (fid != NVME_ERROR_RECOVERY) {
        return NVME_FEAT_NOT_NS_SPEC | NVME_DNR;
    }
    return NVME_SUCCESS;
}

static uint64_t h3100_timestamp(H3100State *s)
{
    int64_t ms = (qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) -
                  s->feat.ts_base) / SCALE_MS;
    uint64_t ts = (s->feat.timestamp + ms) & 0xffffffffffffULL;
    uint64_t origin = s->feat.timestamp || s->feat.ts_base ?
                      H3100_TS_ORIGIN_HOST : 0;

    return ts | ((s->feat.timestamp ? origin : 0) << 48);
}

static uint32_t h3100_feature_value(H3100State *s, uint8_t fid,
                                    uint32_t dw11, bool dflt)
{
    H3100Features *f = &s->feat;
    uint16_t iv;

    switch (fid) {
    case NVME_ARBITRATION:
        return dflt ? NVME_ARB_AB_NOLIMIT : f->arbitration;
    case NVME_POWER_MANAGEMENT:
        return dflt ? 0 : f->power_state;
    case NVME_TEMPERATURE_THRESHOLD:
        if (NVME_TEMP_THSEL(dw11) == NVME_TEMP_THSEL_UNDER) {
            return dflt ? 0 : f->temp_under;
        }
        return dflt ? s->cfg.thermal.wctemp_k : f->temp_over;
    case NVME_ERROR_RECOVERY:
        return dflt ? 0 : f->err_rec;
    case NVME_VOLATILE_WRITE_CACHE:
        return dflt ? s->vwc_present : f->vwc;
    case NVME_NUMBER_OF_QUEUES:
        return (s->max_ioqpairs - 1) | ((s->max_ioqpairs - 1) << 16);
    case NVME_INTERRUPT_COALESCING:
        return dflt ? 0 : f->int_coalescing;
    case NVME_INTERRUPT_VECTOR_CONF:
        iv = dw11 & 0xffff;
        return iv | ((!dflt && s->vec[iv].no_coalesce) ?
                     NVME_INTVC_NOCOALESCING : 0);
    case NVME_ASYNCHRONOUS_EVENT_CONF:
        return dflt ? 0 : f->aec;
    case H3100_FEAT_HCTM:
        return dflt ? 0 : f->hctm;
    case NVME_WRITE_ATOMICITY:
        return dflt ? 0 : f->write_atomicity_normal;
    default:
        return 0;
    }
}

uint16_t h3100_get_features(H3100State *s, H3100Req *req)
{
    uint32_t dw10 = le32_to_cpu(req->cmd.cdw10);
    uint32_t dw11 = le32_to_cpu(req->cmd.cdw11);
    uint8_t fid = NVME_GETSETFEAT_FID(dw10);
    uint8_t sel = NVME_GETFEAT_SELECT(dw10);
    uint64_t ts;
    uint16_t status;

    trace_h3100_admin_get_features(fid, sel, dw11);
    if (!h3100_feature_known(fid)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    status = h3100_feature_nsid(fid, le32_to_cpu(req->cmd.nsid));
    if (status) {
        return status;
    }
    if (sel > NVME_GETFEAT_SELECT_CAP) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (sel == NVME_GETFEAT_SELECT_CAP) {
        req->cqe.result = cpu_to_le32(NVME_FEAT_CAP_CHANGE |
                                      (fid == NVME_ERROR_RECOVERY ?
                                       NVME_FEAT_CAP_NS : 0));
        return NVME_SUCCESS;
    }
    if (fid == NVME_INTERRUPT_VECTOR_CONF && (dw11 & 0xffff) >= s->nvec) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (fid == NVME_TEMPERATURE_THRESHOLD &&
        (NVME_TEMP_TMPSEL(dw11) != NVME_TEMP_TMPSEL_COMPOSITE ||
         NVME_TEMP_THSEL(dw11) > NVME_TEMP_THSEL_UNDER)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (fid == NVME_TIMESTAMP) {
        ts = cpu_to_le64(sel == NVME_GETFEAT_SELECT_CURRENT ?
                         h3100_timestamp(s) : 0);
        return h3100_dma_to_host(s, req, &ts, sizeof(ts));
    }
    req->cqe.result = cpu_to_le32(h3100_feature_value(
                                      s, fid, dw11,
                                      sel != NVME_GETFEAT_SELECT_CURRENT));
    return NVME_SUCCESS;
}

static uint16_t h3100_set_temp(H3100State *s, uint32_t dw11)
{
    if (NVME_TEMP_TMPSEL(dw11) != NVME_TEMP_TMPSEL_COMPOSITE) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    switch (NVME_TEMP_THSEL(dw11)) {
    case NVME_TEMP_THSEL_OVER:
        s->feat.temp_over = NVME_TEMP_TMPTH(dw11);
        break;
    case NVME_TEMP_THSEL_UNDER:
        s->feat.temp_under = NVME_TEMP_TMPTH(dw11);
        break;
    default:
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    h3100_health_check(s);
    return NVME_SUCCESS;
}

/* A host thermal management temperature: 0 (none) or within MNTMT..MXTMT */
static bool h3100_tmt_valid(uint16_t tmt)
{
    return !tmt || (tmt >= H3100_HCTM_MIN_K && tmt <= H3100_HCTM_MAX_K);
}

static uint16_t h3100_set_hctm(H3100State *s, uint32_t dw11)
{
    uint16_t tmt1 = dw11 >> 16, tmt2 = dw11 & 0xffff;

    if (!h3100_tmt_valid(tmt1) || !h3100_tmt_valid(tmt2) ||
        (tmt1 && tmt2 && tmt1 >= tmt2)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    s->feat.hctm = dw11;
    h3100_thermal_limits(s, tmt1, tmt2);
    return NVME_SUCCESS;
}

static uint16_t h3100_set_nq(H3100State *s, H3100Req *req, uint32_t dw11)
{
    if ((dw11 & 0xffff) == 0xffff || (dw11 >> 16) == 0xffff) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    for (unsigned i = 1; i <= s->max_ioqpairs; i++) {
        if (s->sq[i] || s->cq[i]) {
            return NVME_CMD_SEQ_ERROR | NVME_DNR;
        }
    }
    req->cqe.result = cpu_to_le32(s->feat.nq);
    return NVME_SUCCESS;
}

static uint16_t h3100_set_one(H3100State *s, H3100Req *req, uint8_t fid,
                              uint32_t dw11)
{
    H3100Features *f = &s->feat;
    uint64_t ts;
    uint16_t status;

    switch (fid) {
    case NVME_ARBITRATION:
        f->arbitration = dw11;
        return NVME_SUCCESS;
    case NVME_POWER_MANAGEMENT:
        if ((dw11 & 0x1f) > s->id_ctrl.npss) {
            return NVME_INVALID_FIELD | NVME_DNR;
        }
        f->power_state = dw11 & 0xff;    /* PS and workload hint */
        h3100_power_cap(s, dw11 & 0x1f);
        return NVME_SUCCESS;
    case NVME_TEMPERATURE_THRESHOLD:
        return h3100_set_temp(s, dw11);
    case H3100_FEAT_HCTM:
        return h3100_set_hctm(s, dw11);
    case NVME_ERROR_RECOVERY:
        if (NVME_ERR_REC_DULBE(dw11)) {
            return NVME_INVALID_FIELD | NVME_DNR;
        }
        f->err_rec = dw11;
        return NVME_SUCCESS;
    case NVME_VOLATILE_WRITE_CACHE:
        if (!s->vwc_present) {
            return NVME_INVALID_FIELD | NVME_DNR;
        }
        f->vwc = dw11 & 1;
        blk_set_enable_write_cache(s->blk, f->vwc || s->backend_wce);
        if (!f->vwc) {
            h3100_vcache_settle(s);     /* written back as it turns off */
        }
        return NVME_SUCCESS;
    case NVME_NUMBER_OF_QUEUES:
        return h3100_set_nq(s, req, dw11);
    case NVME_INTERRUPT_COALESCING:
        f->int_coalescing = dw11 & 0xffff;
        return NVME_SUCCESS;
    case NVME_INTERRUPT_VECTOR_CONF:
        if ((dw11 & 0xffff) >= s->nvec) {
            return NVME_INVALID_FIELD | NVME_DNR;
        }
        s->vec[dw11 & 0xffff].no_coalesce = dw11 & NVME_INTVC_NOCOALESCING;
        return NVME_SUCCESS;
    case NVME_WRITE_ATOMICITY:
        f->write_atomicity_normal = dw11 & 1;
        return NVME_SUCCESS;
    case NVME_ASYNCHRONOUS_EVENT_CONF:
        f->aec = dw11 & 0x2ff;
        h3100_health_check(s);
        return NVME_SUCCESS;
    case NVME_TIMESTAMP:
        status = h3100_dma_from_host(s, req, &ts, sizeof(ts));
        if (status) {
            return status;
        }
        f->timestamp = le64_to_cpu(ts) & 0xffffffffffffULL;
        f->ts_base = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
        return NVME_SUCCESS;
    default:
        return NVME_INVALID_FIELD | NVME_DNR;
    }
}

uint16_t h3100_set_features(H3100State *s, H3100Req *req)
{
    uint32_t dw10 = le32_to_cpu(req->cmd.cdw10);
    uint32_t dw11 = le32_to_cpu(req->cmd.cdw11);
    uint8_t fid = NVME_GETSETFEAT_FID(dw10);
    uint16_t status;

    trace_h3100_admin_set_features(fid, dw11);
    if (!h3100_feature_known(fid)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (NVME_SETFEAT_SAVE(dw10)) {
        return NVME_FID_NOT_SAVEABLE | NVME_DNR;
    }
    status = h3100_feature_nsid(fid, le32_to_cpu(req->cmd.nsid));
    if (status) {
        return status;
    }
    return h3100_set_one(s, req, fid, dw11);
}
