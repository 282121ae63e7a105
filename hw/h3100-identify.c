/*
 * DapuStor H3100 NVMe SSD: Identify (controller, namespaces, namespace
 * lists, namespace identification descriptors, controller lists)
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-mgmt.h"
#include "trace.h"

#define H3100_OACS_SELF_TEST    (1 << 4)
#define H3100_OACS_GET_LBA_STATUS (1 << 9)  /* NVMe 1.4 */
#define H3100_OAES_FW_ACT       (1 << 9)
#define H3100_OAES_LBA_STATUS   (1 << 13)   /* LBA Status Info Alert */
#define H3100_LPA_TELEMETRY     (1 << 3)
#define H3100_FRMW_NO_RESET     (1 << 4)
#define H3100_SANICAP_BES       (1 << 1)
#define H3100_DLFEAT_ZEROES     0x09   /* reads 0, WZ Deallocate supported */

static void h3100_pad(uint8_t *dst, size_t len, const char *src)
{
    strpadcpy((char *)dst, len, src, ' ');
}

/* One power state: max power, idle and active power, all in 0.01 W */
static void h3100_psd(NvmePSD *psd, uint32_t max_mw, uint32_t idle_mw,
                      uint32_t active_mw, uint32_t lat_us)
{
    uint8_t *raw = (uint8_t *)psd;

    psd->mp = cpu_to_le16(max_mw / 10);
    psd->enlat = cpu_to_le32(lat_us);
    psd->exlat = cpu_to_le32(lat_us);
    stw_le_p(raw + 16, idle_mw / 10);   /* IDLP */
    raw[18] = 2 << 6;                   /* IPS: 0.01 W */
    stw_le_p(raw + 20, active_mw / 10); /* ACTP */
    raw[22] = (2 << 6) | 1;             /* APS: 0.01 W, APW 001b */
}

static void h3100_id_ctrl_psd(H3100State *s, NvmeIdCtrl *id)
{
    uint32_t idle = s->cfg.idle_mw, active = s->cfg.active_mw;
    uint32_t mid = (idle + active) / 2;

    /* PS0 full power; in PS1 and PS2 the model slows the NAND to fit */
    h3100_psd(&id->psd[0], active, idle, active, 0);
    h3100_psd(&id->psd[1], mid, idle, mid, 50);
    h3100_psd(&id->psd[2], idle + (active - idle) / 4, idle, idle, 100);
    id->npss = 2;
}

void h3100_id_ctrl_init(H3100State *s)
{
    NvmeIdCtrl *id = &s->id_ctrl;
    g_autofree char *nqn = NULL;

    memset(id, 0, sizeof(*id));
    id->vid = cpu_to_le16(H3100_PCI_VENDOR_ID);
    id->ssvid = cpu_to_le16(H3100_PCI_SUBSYS_VENDOR_ID);
    h3100_pad(id->sn, sizeof(id->sn), s->sn);
    h3100_pad(id->mn, sizeof(id->mn), s->mn);
    h3100_pad(id->fr, sizeof(id->fr), s->fw.slot[s->fw.active]);
    id->rab = 6;
    st24_le_p(id->ieee, H3100_IEEE_OUI);
    id->mdts = s->mdts;
    id->ver = cpu_to_le32(H3100_NVME_VERSION);
    id->rtd3r = cpu_to_le32(1000000);
    id->rtd3e = cpu_to_le32(2000000);
    id->cntlid = cpu_to_le16(H3100_CNTLID);
    id->oaes = cpu_to_le32(H3100_OAES_FW_ACT | NVME_OAES_NS_ATTR |
                           H3100_OAES_LBA_STATUS);
    id->oacs = cpu_to_le16(NVME_OACS_FORMAT | NVME_OACS_FW | NVME_OACS_NMS |
                           NVME_OACS_DBCS | H3100_OACS_SELF_TEST |
                           NVME_OACS_DIRECTIVES | H3100_OACS_GET_LBA_STATUS);
    id->acl = 3;
    id->aerl = H3100_AERL;
    id->frmw = (H3100_FW_SLOTS << 1) | H3100_FRMW_NO_RESET;
    id->lpa = NVME_LPA_CSE | NVME_LPA_EXTENDED | H3100_LPA_TELEMETRY;
    id->elpe = H3100_ERRLOG_ENTRIES - 1;
    id->avscc = 1;
    id->wctemp = cpu_to_le16(s->cfg.thermal.wctemp_k);
    id->cctemp = cpu_to_le16(s->cfg.thermal.cctemp_k);
    id->hctma = cpu_to_le16(1);
    id->mntmt = cpu_to_le16(H3100_HCTM_MIN_K);
    id->mxtmt = cpu_to_le16(H3100_HCTM_MAX_K);
    stq_le_p(id->tnvmcap, s->nvm_bytes);
    id->edstt = cpu_to_le16(H3100_EDSTT_MIN);
    id->dsto = 1;
    id->fwug = 0xff;                     /* no granularity limit */
    id->sanicap = cpu_to_le32(H3100_SANICAP_BES);
    id->sqes = (6 << 4) | 6;
    id->cqes = (4 << 4) | 4;
    id->maxcmd = cpu_to_le16(H3100_MQES + 1);
    id->nn = cpu_to_le32(H3100_NS_MAX);
    id->oncs = cpu_to_le16(NVME_ONCS_COMPARE | NVME_ONCS_WRITE_UNCORR |
                           NVME_ONCS_DSM | NVME_ONCS_WRITE_ZEROES |
                           NVME_ONCS_FEATURES | NVME_ONCS_TIMESTAMP);
    id->fna = 0;                         /* Format: the NSID given */
    id->vwc = s->vwc_present ? NVME_VWC_PRESENT : 0;
    id->sgls = cpu_to_le32(NVME_CTRL_SGLS_SUPPORT_NO_ALIGN);
    nqn = g_strdup_printf("nqn.2019-10.com.dapustor:nvme:%s:%s",
                          s->cfg.profile, s->sn);
    pstrcpy((char *)id->subnqn, sizeof(id->subnqn), nqn);
    h3100_id_ctrl_psd(s, id);
}

/* A namespace's EUI-64 and NGUID: NSID 1 as first made keeps the drive's */
static uint64_t h3100_ns_eui64(H3100State *s, uint32_t nsid)
{
    uint64_t tag = ((uint64_t)s->ns[nsid].gen << 8) | (nsid - 1);

    return s->eui64 ^ (tag & 0xffffffffffull);   /* the OUI stays */
}

static void h3100_ns_nguid(H3100State *s, uint32_t nsid, uint8_t *nguid)
{
    uint64_t tag = ((uint64_t)s->ns[nsid].gen << 8) | (nsid - 1);

    memcpy(nguid, s->nguid, sizeof(s->nguid));
    stq_be_p(nguid + 8, ldq_be_p(nguid + 8) ^ tag);     /* all 40 bits */
}

/* What every namespace has, whatever its size and format */
static void h3100_fill_id_ns_common(NvmeIdNs *id, uint32_t lbads)
{
    id->nlbaf = 1;
    id->flbas = lbads == 12 ? 1 : 0;
    id->dlfeat = H3100_DLFEAT_ZEROES;
    id->lbaf[0].ds = 9;
    id->lbaf[0].rp = 1;
    id->lbaf[1].ds = 12;
    id->lbaf[1].rp = 0;
    id->npwg = cpu_to_le16(16384 / (1u << lbads) - 1);
    id->npwa = id->npwg;
    id->nows = id->npwg;
}

static void h3100_fill_id_ns(H3100State *s, uint32_t nsid, NvmeIdNs *id)
{
    H3100Namespace *ns = &s->ns[nsid];
    uint64_t nlbas = ns->bytes >> ns->lbads;

    h3100_fill_id_ns_common(id, ns->lbads);
    id->nsze = cpu_to_le64(nlbas);
    id->ncap = cpu_to_le64(nlbas);
    id->nuse = cpu_to_le64(nlbas);
    stq_le_p(id->nvmcap, ns->bytes);
    h3100_ns_nguid(s, nsid, id->nguid);
    id->eui64 = cpu_to_be64(h3100_ns_eui64(s, nsid));
    /* bit 0, write protected: a read-only fault's, with nsattr=on */
    id->nsattr = s->fault_ro_nsattr;
}

/*
 * CNS 00h (@ns of active namespaces) and 11h (@ns of allocated ones):
 * a valid NSID without such a namespace reads zeroes.
 */
static uint16_t h3100_identify_ns(H3100State *s, H3100Req *req,
                                  H3100Namespace *ns)
{
    g_autofree NvmeIdNs *id = g_new0(NvmeIdNs, 1);
    uint32_t nsid = le32_to_cpu(req->cmd.nsid);

    if (nsid == NVME_NSID_BROADCAST) {
        /* capabilities common to all namespaces: no size or identifiers */
        h3100_fill_id_ns_common(id, BDRV_SECTOR_BITS);
    } else if (!h3100_nsid_valid(nsid)) {
        return NVME_INVALID_NSID | NVME_DNR;
    } else if (ns) {
        h3100_fill_id_ns(s, nsid, id);
    }
    return h3100_dma_to_host(s, req, id, sizeof(*id));
}

/* CNS 02h and 10h: the NSIDs above CDW1.NSID that are active/allocated */
static uint16_t h3100_identify_ns_list(H3100State *s, H3100Req *req,
                                       bool allocated)
{
    uint32_t list[NVME_IDENTIFY_DATA_SIZE / 4] = { 0 };
    uint32_t nsid = le32_to_cpu(req->cmd.nsid);
    unsigned n = 0;

    if (nsid >= NVME_NSID_BROADCAST - 1) {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    for (uint32_t i = nsid + 1; i <= H3100_NS_MAX; i++) {
        if (allocated ? h3100_ns_allocated(s, i) : h3100_ns_active(s, i)) {
            list[n++] = cpu_to_le32(i);
        }
    }
    return h3100_dma_to_host(s, req, list, sizeof(list));
}

static uint16_t h3100_identify_ns_descr(H3100State *s, H3100Req *req)
{
    uint8_t list[NVME_IDENTIFY_DATA_SIZE] = { 0 };
    uint32_t nsid = le32_to_cpu(req->cmd.nsid);
    uint8_t *p = list;

    if (!h3100_ns_active(s, nsid)) {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    p[0] = NVME_NIDT_EUI64;
    p[1] = NVME_NIDL_EUI64;
    stq_be_p(p + 4, h3100_ns_eui64(s, nsid));
    p += 4 + NVME_NIDL_EUI64;
    p[0] = NVME_NIDT_NGUID;
    p[1] = NVME_NIDL_NGUID;
    h3100_ns_nguid(s, nsid, p + 4);
    return h3100_dma_to_host(s, req, list, sizeof(list));
}

/*
 * CNS 12h (the controllers @nsid is attached to) and 13h (those of the
 * subsystem): from CDW10.CNTID up; this drive has one, CNTLID 0.
 */
static uint16_t h3100_identify_ctrl_list(H3100State *s, H3100Req *req,
                                         bool of_ns)
{
    uint16_t list[NVME_IDENTIFY_DATA_SIZE / 2] = { 0 };
    uint16_t cntid = le32_to_cpu(req->cmd.cdw10) >> 16;
    uint32_t nsid = le32_to_cpu(req->cmd.nsid);

    if (of_ns && !h3100_nsid_valid(nsid)) {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    /* IDs from CNTID up: ours (0) unless CNTID is above it */
    if (!cntid && (!of_ns || h3100_ns_active(s, nsid))) {
        list[0] = cpu_to_le16(1);
        list[1] = cpu_to_le16(H3100_CNTLID);
    }
    return h3100_dma_to_host(s, req, list, sizeof(list));
}

uint16_t h3100_identify(H3100State *s, H3100Req *req)
{
    NvmeIdentify *c = (NvmeIdentify *)&req->cmd;

    trace_h3100_admin_identify(c->cns, le32_to_cpu(c->nsid));
    switch (c->cns) {
    case NVME_ID_CNS_NS:
        return h3100_identify_ns(s, req,
                                 h3100_ns_active(s, le32_to_cpu(c->nsid)));
    case NVME_ID_CNS_CTRL:
        h3100_pad(s->id_ctrl.fr, sizeof(s->id_ctrl.fr),
                  s->fw.slot[s->fw.active]);
        stq_le_p(s->id_ctrl.unvmcap, h3100_ns_unallocated(s));
        return h3100_dma_to_host(s, req, &s->id_ctrl, sizeof(s->id_ctrl));
    case NVME_ID_CNS_NS_ACTIVE_LIST:
        return h3100_identify_ns_list(s, req, false);
    case NVME_ID_CNS_NS_DESCR_LIST:
        return h3100_identify_ns_descr(s, req);
    case NVME_ID_CNS_NS_PRESENT_LIST:
        return h3100_identify_ns_list(s, req, true);
    case NVME_ID_CNS_NS_PRESENT:
        /* FFFFFFFFh's common data is CNS 00h's alone */
        if (le32_to_cpu(c->nsid) == NVME_NSID_BROADCAST) {
            return NVME_INVALID_NSID | NVME_DNR;
        }
        return h3100_identify_ns(s, req,
                                 h3100_ns_allocated(s, le32_to_cpu(c->nsid)));
    case NVME_ID_CNS_NS_ATTACHED_CTRL_LIST:
        return h3100_identify_ctrl_list(s, req, true);
    case NVME_ID_CNS_CTRL_LIST:
        return h3100_identify_ctrl_list(s, req, false);
    default:
        return NVME_INVALID_FIELD | NVME_DNR;
    }
}
