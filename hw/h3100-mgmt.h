/*
 * DapuStor H3100 NVMe SSD: admin commands, logs and features
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * h3100-admin.c, h3100-identity.c, h3100-identify.c, h3100-ns.c,
 * h3100-features.c, h3100-log.c, h3100-dapustor-log.c,
 * h3100-telemetry-log.c, h3100-fw.c and h3100-maint.c (Format,
 * Sanitize, self-test).
 */
#ifndef HW_DAPUSTOR_H3100_MGMT_H
#define HW_DAPUSTOR_H3100_MGMT_H

#include "h3100.h"

/* h3100-admin.c */
uint16_t h3100_admin_cmd(H3100State *s, H3100Req *req);
void h3100_aer_enqueue(H3100State *s, uint8_t type, uint8_t info,
                       uint8_t log);
/* log @lid was read with RAE clear: the event type it reported is clear */
void h3100_aer_log_read(H3100State *s, uint8_t lid);
void h3100_aer_reset(H3100State *s);
/* an event of @type / @info still queued is no longer news: it goes */
void h3100_aer_drop(H3100State *s, uint8_t type, uint8_t info);

/* h3100-identity.c */
bool h3100_identity_init(H3100State *s, Error **errp);

/* h3100-ns.c */
void h3100_ns_init(H3100State *s);
H3100Namespace *h3100_ns_active(H3100State *s, uint32_t nsid);
H3100Namespace *h3100_ns_allocated(H3100State *s, uint32_t nsid);
bool h3100_nsid_valid(uint32_t nsid);
uint64_t h3100_ns_unallocated(H3100State *s);
/* the NSID and LBA of NVM byte @offset, 0 if no namespace holds it */
uint32_t h3100_ns_lba(H3100State *s, uint64_t offset, uint64_t *lba);
/* lbads of NSID 1, or 9: counters that name one LBA size */
uint32_t h3100_ns1_lbads(H3100State *s);
uint16_t h3100_ns_changed_log(H3100State *s, H3100Req *req, uint64_t off,
                              uint64_t len, bool rae);
uint16_t h3100_ns_mgmt(H3100State *s, H3100Req *req);
uint16_t h3100_ns_attach(H3100State *s, H3100Req *req);
/* Another host attaches or detaches @nsid (a fault); false with @errp */
bool h3100_ns_attach_by_host(H3100State *s, uint32_t nsid, bool attach,
                             Error **errp);
/* @nsid's attributes changed: log 04h and the notice */
void h3100_ns_changed(H3100State *s, uint32_t nsid);
/* the attached (or all allocated) namespaces: bit N for NSID N */
uint64_t h3100_ns_mask(H3100State *s, bool attached);
/* @ns takes LBA format @lbads (its bytes rounded down to whole LBAs) */
void h3100_ns_set_lbads(H3100Namespace *ns, uint32_t lbads);
/* Format the namespaces in @todo to @lbads: erase each; then @req ends */
void h3100_ns_format(H3100State *s, uint64_t todo, H3100Req *req,
                     uint32_t lbads);
bool h3100_ns_busy(H3100Namespace *ns);
/* a namespace being erased (a Format of one, a Delete)? */
bool h3100_ns_any_busy(H3100State *s);
void h3100_ns_resume(H3100State *s);
void h3100_ns_reset(H3100State *s);
void h3100_ns_free(H3100State *s);
/* migration: a job as it stands (h3100-vmstate.c) */
typedef struct H3100NsJobInfo {
    uint64_t todo;                    /* bit N: NSID N still to erase */
    uint64_t done;                    /* bytes of the first one erased */
    uint32_t lbads;
    bool delete;
    uint16_t status;
    H3100Req *req;
    int64_t timer_ns;                 /* its poll, -1 if none is due */
} H3100NsJobInfo;
unsigned h3100_ns_jobs(H3100State *s, H3100NsJob **jobs);
void h3100_ns_job_get(H3100NsJob *job, H3100NsJobInfo *info);
H3100NsJob *h3100_ns_job_restore(H3100State *s, const H3100NsJobInfo *info);
void h3100_ns_job_cb(void *opaque, int ret);

/* h3100-identify.c */
void h3100_id_ctrl_init(H3100State *s);
uint16_t h3100_identify(H3100State *s, H3100Req *req);

/* h3100-features.c */
void h3100_features_init(H3100State *s);
uint16_t h3100_get_features(H3100State *s, H3100Req *req);
uint16_t h3100_set_features(H3100State *s, H3100Req *req);

/* h3100-dapustor-log.c */
void h3100_fill_dapu_smart(H3100State *s, H3100DapuSmartLog *l);
void h3100_fill_dapu_ext(H3100State *s, H3100DapuExtLog *l);
void h3100_extremes_start(H3100State *s, const H3100Health *h);
void h3100_extremes_note(H3100State *s, const H3100Health *h);

/* h3100-telemetry-log.c */
void h3100_tlog_note_reclaim(H3100State *s, uint64_t now, uint32_t sb,
                             uint64_t valid, bool wear);
void h3100_tlog_check(H3100State *s, const H3100Health *h);
void h3100_tlog_fatal(H3100State *s);
uint16_t h3100_tlog_get(H3100State *s, H3100Req *req, uint8_t lid,
                        uint8_t lsp, uint64_t off, uint64_t len);
void h3100_tlog_free(H3100State *s);

/* h3100-log.c */
/* @len bytes of a @size-byte page from @off (Invalid Field past it) */
uint16_t h3100_log_xfer(H3100State *s, H3100Req *req, const void *page,
                        uint64_t size, uint64_t off, uint64_t len);
uint16_t h3100_get_log(H3100State *s, H3100Req *req);
/* NAND bytes per host byte, x1000, rounded down; 0 before any write */
uint64_t h3100_waf_milli(uint64_t nand, uint64_t host);
void h3100_error_log_add(H3100State *s, H3100Req *req);
void h3100_health_check(H3100State *s);
void h3100_health_props_init(ObjectClass *oc);

/* h3100-fw.c */
void h3100_fw_init(H3100State *s);
void h3100_fw_free(H3100State *s);
void h3100_fw_reset(H3100State *s);
uint16_t h3100_fw_download(H3100State *s, H3100Req *req);
uint16_t h3100_fw_commit(H3100State *s, H3100Req *req);

/* h3100-maint.c */
uint16_t h3100_format(H3100State *s, H3100Req *req);
void h3100_format_cb(void *opaque, int ret);
void h3100_sanitize_done_cb(void *opaque, int ret);
uint16_t h3100_sanitize(H3100State *s, H3100Req *req);
uint16_t h3100_self_test(H3100State *s, H3100Req *req);
uint16_t h3100_dbbuf_config(H3100State *s, H3100Req *req);
void h3100_sanitize_timer_cb(void *opaque);
void h3100_maint_io_drained(H3100State *s);
void h3100_dst_timer_cb(void *opaque);
void h3100_dst_abort(H3100State *s, uint8_t result);
uint16_t h3100_self_test_log(H3100State *s, H3100Req *req, uint64_t off,
                             uint64_t len);
uint16_t h3100_sanitize_log(H3100State *s, H3100Req *req, uint64_t off,
                            uint64_t len);

#endif
