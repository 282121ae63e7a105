/*
 * DapuStor H3100 NVMe SSD: Get / Set Features
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What is supported is hw/tables/features.h, expanded into
 * h3100_features[] below: one entry per feature, read by Get and Set
 * Features.  Nothing is saveable; Get Features
 * honours SEL (current, default, saved = default, supported
 * capabilities).
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
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
    f->lsiri = H3100_LSIPI;
    h3100_lsi_restart(s);
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

static uint64_t h3100_timestamp(H3100State *s)
{
    int64_t ms = (qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) -
                  s->feat.ts_base) / SCALE_MS;
    uint64_t ts = (s->feat.timestamp + ms) & 0xffffffffffffULL;
    uint64_t origin = s->feat.timestamp || s->feat.ts_base ?
                      H3100_TS_ORIGIN_HOST : 0;

    return ts | ((s->feat.timestamp ? origin : 0) << 48);
}

/*
 * Each feature's Get (@dflt: the default or saved value, not the
 * current one) sets the completion's result or moves its data; its Set
 * takes CDW11 or the data.
 */

static uint16_t h3100_result(H3100Req *req, uint32_t v)
{
    req->cqe.result = cpu_to_le32(v);
    return NVME_SUCCESS;
}

static uint16_t h3100_get_arb(H3100State *s, H3100Req *req, uint32_t dw11,
                              bool dflt)
{
    return h3100_result(req, dflt ? NVME_ARB_AB_NOLIMIT :
                                    s->feat.arbitration);
}

static uint16_t h3100_set_arb(H3100State *s, H3100Req *req, uint32_t dw11)
{
    s->feat.arbitration = dw11;
    return NVME_SUCCESS;
}

static uint16_t h3100_get_pm(H3100State *s, H3100Req *req, uint32_t dw11,
                             bool dflt)
{
    return h3100_result(req, dflt ? 0 : s->feat.power_state);
}

static uint16_t h3100_set_pm(H3100State *s, H3100Req *req, uint32_t dw11)
{
    if ((dw11 & 0x1f) > s->id_ctrl.npss) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    s->feat.power_state = dw11 & 0xff;    /* PS and workload hint */
    h3100_power_cap(s, dw11 & 0x1f);
    return NVME_SUCCESS;
}

static bool h3100_temp_sel_valid(uint32_t dw11)
{
    return NVME_TEMP_TMPSEL(dw11) == NVME_TEMP_TMPSEL_COMPOSITE &&
           NVME_TEMP_THSEL(dw11) <= NVME_TEMP_THSEL_UNDER;
}

static uint16_t h3100_get_temp(H3100State *s, H3100Req *req, uint32_t dw11,
                               bool dflt)
{
    if (!h3100_temp_sel_valid(dw11)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (NVME_TEMP_THSEL(dw11) == NVME_TEMP_THSEL_UNDER) {
        return h3100_result(req, dflt ? 0 : s->feat.temp_under);
    }
    return h3100_result(req, dflt ? s->cfg.thermal.wctemp_k :
                                    s->feat.temp_over);
}

static uint16_t h3100_set_temp(H3100State *s, H3100Req *req, uint32_t dw11)
{
    if (!h3100_temp_sel_valid(dw11)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (NVME_TEMP_THSEL(dw11) == NVME_TEMP_THSEL_UNDER) {
        s->feat.temp_under = NVME_TEMP_TMPTH(dw11);
    } else {
        s->feat.temp_over = NVME_TEMP_TMPTH(dw11);
    }
    h3100_health_check(s);
    return NVME_SUCCESS;
}

static uint16_t h3100_get_err_rec(H3100State *s, H3100Req *req,
                                  uint32_t dw11, bool dflt)
{
    return h3100_result(req, dflt ? 0 : s->feat.err_rec);
}

static uint16_t h3100_set_err_rec(H3100State *s, H3100Req *req,
                                  uint32_t dw11)
{
    if (NVME_ERR_REC_DULBE(dw11)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    s->feat.err_rec = dw11;
    return NVME_SUCCESS;
}

static uint16_t h3100_get_vwc(H3100State *s, H3100Req *req, uint32_t dw11,
                              bool dflt)
{
    return h3100_result(req, dflt ? s->vwc_present : s->feat.vwc);
}

static uint16_t h3100_set_vwc(H3100State *s, H3100Req *req, uint32_t dw11)
{
    if (!s->vwc_present) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    s->feat.vwc = dw11 & 1;
    blk_set_enable_write_cache(s->blk, s->feat.vwc || s->backend_wce);
    if (!s->feat.vwc) {
        h3100_vcache_settle(s);     /* written back as it turns off */
    }
    return NVME_SUCCESS;
}

static uint16_t h3100_get_nq(H3100State *s, H3100Req *req, uint32_t dw11,
                             bool dflt)
{
    return h3100_result(req, (s->max_ioqpairs - 1) |
                             ((s->max_ioqpairs - 1) << 16));
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
    return h3100_result(req, s->feat.nq);
}

static uint16_t h3100_get_intc(H3100State *s, H3100Req *req, uint32_t dw11,
                               bool dflt)
{
    return h3100_result(req, dflt ? 0 : s->feat.int_coalescing);
}

static uint16_t h3100_set_intc(H3100State *s, H3100Req *req, uint32_t dw11)
{
    s->feat.int_coalescing = dw11 & 0xffff;
    return NVME_SUCCESS;
}

static uint16_t h3100_get_ivc(H3100State *s, H3100Req *req, uint32_t dw11,
                              bool dflt)
{
    uint16_t iv = dw11 & 0xffff;

    if (iv >= s->nvec) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    return h3100_result(req, iv | ((!dflt && s->vec[iv].no_coalesce) ?
                                   NVME_INTVC_NOCOALESCING : 0));
}

static uint16_t h3100_set_ivc(H3100State *s, H3100Req *req, uint32_t dw11)
{
    if ((dw11 & 0xffff) >= s->nvec) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    s->vec[dw11 & 0xffff].no_coalesce = dw11 & NVME_INTVC_NOCOALESCING;
    return NVME_SUCCESS;
}

static uint16_t h3100_get_wan(H3100State *s, H3100Req *req, uint32_t dw11,
                              bool dflt)
{
    return h3100_result(req, dflt ? 0 : s->feat.write_atomicity_normal);
}

static uint16_t h3100_set_wan(H3100State *s, H3100Req *req, uint32_t dw11)
{
    s->feat.write_atomicity_normal = dw11 & 1;
    return NVME_SUCCESS;
}

static uint16_t h3100_get_aec(H3100State *s, H3100Req *req, uint32_t dw11,
                              bool dflt)
{
    return h3100_result(req, dflt ? 0 : s->feat.aec);
}

static uint16_t h3100_set_aec(H3100State *s, H3100Req *req, uint32_t dw11)
{
    /* SMART, namespace attributes, FW activation, telemetry, LBA status */
    s->feat.aec = dw11 & 0x27ff;
    h3100_health_check(s);
    h3100_lsi_check(s);
    return NVME_SUCCESS;
}

static uint16_t h3100_get_ts(H3100State *s, H3100Req *req, uint32_t dw11,
                             bool dflt)
{
    uint64_t ts = cpu_to_le64(dflt ? 0 : h3100_timestamp(s));

    return h3100_dma_to_host(s, req, &ts, sizeof(ts));
}

static uint16_t h3100_set_ts(H3100State *s, H3100Req *req, uint32_t dw11)
{
    uint64_t ts;
    uint16_t status = h3100_dma_from_host(s, req, &ts, sizeof(ts));

    if (status) {
        return status;
    }
    s->feat.timestamp = le64_to_cpu(ts) & 0xffffffffffffULL;
    s->feat.ts_base = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    return NVME_SUCCESS;
}

static uint16_t h3100_get_hctm(H3100State *s, H3100Req *req, uint32_t dw11,
                               bool dflt)
{
    return h3100_result(req, dflt ? 0 : s->feat.hctm);
}

/* A host thermal management temperature: 0 (none) or within MNTMT..MXTMT */
static bool h3100_tmt_valid(uint16_t tmt)
{
    return !tmt || (tmt >= H3100_HCTM_MIN_K && tmt <= H3100_HCTM_MAX_K);
}

static uint16_t h3100_set_hctm(H3100State *s, H3100Req *req, uint32_t dw11)
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

/*
 * LBA Status Information Attributes: LSIPI (31:16) is the drive's, the
 * host sets LSIRI (15:0), both in 100 ms units; Set answers the values
 * as Get does.
 */
static uint16_t h3100_get_lsi(H3100State *s, H3100Req *req, uint32_t dw11,
                              bool dflt)
{
    return h3100_result(req, H3100_LSIPI << 16 |
                             (dflt ? H3100_LSIPI : s->feat.lsiri));
}

static uint16_t h3100_set_lsi(H3100State *s, H3100Req *req, uint32_t dw11)
{
    s->feat.lsiri = dw11 & 0xffff;
    h3100_lsi_check(s);
    return h3100_get_lsi(s, req, 0, false);
}

typedef struct H3100Feature {
    uint16_t (*get)(H3100State *s, H3100Req *req, uint32_t dw11, bool dflt);
    uint16_t (*set)(H3100State *s, H3100Req *req, uint32_t dw11);
    uint32_t cap;                     /* Get Features SEL=3 */
    const char *name;                 /* trace events */
} H3100Feature;

#define H3100_FCAP      NVME_FEAT_CAP_CHANGE
#define H3100_FCAP_NS   (NVME_FEAT_CAP_CHANGE | NVME_FEAT_CAP_NS)

/* a table entry from a line of hw/tables/features.h */
#define H3100_FEAT_ENTRY(fid, id, handler, feat_name, feat_cap) \
    [fid] = { .get = h3100_get_##handler, .set = h3100_set_##handler, \
              .cap = feat_cap, .name = feat_name },

/* The features (hw/tables/features.h): without an entry, none. */
static const H3100Feature h3100_features[256] = {
    H3100_FEATURES(H3100_FEAT_ENTRY)
};

static uint16_t h3100_feature_nsid(H3100State *s, const H3100Feature *f,
                                   uint32_t nsid)
{
    if (nsid == 0 || nsid == NVME_NSID_BROADCAST) {
        return NVME_SUCCESS;
    }
    if (!h3100_ns_active(s, nsid)) {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    if (!(f->cap & NVME_FEAT_CAP_NS)) {
        return NVME_FEAT_NOT_NS_SPEC | NVME_DNR;
    }
    return NVME_SUCCESS;
}

uint16_t h3100_get_features(H3100State *s, H3100Req *req)
{
    uint32_t dw10 = le32_to_cpu(req->cmd.cdw10);
    uint32_t dw11 = le32_to_cpu(req->cmd.cdw11);
    const H3100Feature *f = &h3100_features[NVME_GETSETFEAT_FID(dw10)];
    uint8_t sel = NVME_GETFEAT_SELECT(dw10);
    uint16_t status;

    trace_h3100_admin_get_features(NVME_GETSETFEAT_FID(dw10),
                                   f->name ?: "unsupported", sel, dw11);
    if (!f->get) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    status = h3100_feature_nsid(s, f, le32_to_cpu(req->cmd.nsid));
    if (status) {
        return status;
    }
    if (sel > NVME_GETFEAT_SELECT_CAP) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (sel == NVME_GETFEAT_SELECT_CAP) {
        return h3100_result(req, f->cap);
    }
    return f->get(s, req, dw11, sel != NVME_GETFEAT_SELECT_CURRENT);
}

uint16_t h3100_set_features(H3100State *s, H3100Req *req)
{
    uint32_t dw10 = le32_to_cpu(req->cmd.cdw10);
    uint32_t dw11 = le32_to_cpu(req->cmd.cdw11);
    const H3100Feature *f = &h3100_features[NVME_GETSETFEAT_FID(dw10)];
    uint16_t status;

    trace_h3100_admin_set_features(NVME_GETSETFEAT_FID(dw10),
                                   f->name ?: "unsupported", dw11);
    if (!f->set) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (NVME_SETFEAT_SAVE(dw10)) {
        return NVME_FID_NOT_SAVEABLE | NVME_DNR;
    }
    status = h3100_feature_nsid(s, f, le32_to_cpu(req->cmd.nsid));
    if (status) {
        return status;
    }
    return f->set(s, req, dw11);
}
