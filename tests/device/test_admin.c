/*
 * Admin commands: queues, logs, features, events, abort, format,
 * sanitize, self-test, doorbell buffer config.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "dev.h"

static NvmeCqe admin_raw(Dev *d, NvmeSqe *sqe)
{
    return nh_cmd(d->h, d->h->admin, sqe);
}

static uint16_t admin_status(Dev *d, uint8_t opc, uint32_t nsid,
                             uint32_t cdw10, uint32_t cdw11)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, opc, nsid);
    sqe.cdw10 = cdw10;
    sqe.cdw11 = cdw11;
    cqe = admin_raw(d, &sqe);
    return nh_status(&cqe);
}

/* ---- queues ------------------------------------------------------------ */

START_TEST(test_queue_create_delete)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint8_t w[4096], r[4096];

    for (uint16_t qid = 2; qid <= 5; qid++) {
        NvmeQueue *q = nh_create_ioq(h, qid, 16, -1);

        nh_pattern(w, sizeof(w), qid);
        ck_status(nh_write(h, q, qid * 8, w, sizeof(w)), 0, "write on SQ %u",
                  qid);
        ck_status(nh_read(h, q, qid * 8, r, sizeof(r)), 0, "read on SQ %u",
                  qid);
        ck_assert(memcmp(w, r, sizeof(r)) == 0);
    }
    for (uint16_t qid = 2; qid <= 5; qid++) {
        ck_status(nh_delete_sq(h, qid), 0, "Delete SQ %u", qid);
        ck_status(nh_delete_cq(h, qid), 0, "Delete CQ %u", qid);
    }
    /* two SQs on one CQ */
    ck_status(nh_create_cq(h, 7, 32, -1), 0, "Create CQ 7");
    ck_status(nh_create_sq(h, 7, 16, 7), 0, "Create SQ 7 on CQ 7");
    ck_status(nh_create_sq(h, 8, 16, 7), 0, "Create SQ 8 on CQ 7");
    ck_status(nh_flush(h, h->sqs[7], 1), 0, "flush on SQ 7");
    ck_status(nh_flush(h, h->sqs[8], 1), 0, "flush on SQ 8");
    ck_status(nh_delete_cq(h, 7), NVME_SC_INVALID_QUEUE_DELETION,
              "Delete CQ 7 with SQs attached");
    ck_status(nh_delete_sq(h, 7), 0, "Delete SQ 7");
    ck_status(nh_delete_sq(h, 8), 0, "Delete SQ 8");
    ck_status(nh_delete_cq(h, 7), 0, "Delete CQ 7");
    /* re-create with the same identifiers */
    nh_create_ioq(h, 2, 8, -1);
    dev_close(d);
}
END_TEST

START_TEST(test_queue_limits)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint32_t dw0 = 0;
    uint16_t nsqa, ncqa;

    ck_status(nh_get_features(h, NVME_FEAT_NUM_QUEUES, 0, 0, &dw0), 0,
              "Get Features Number of Queues");
    nsqa = dw0 & 0xffff;
    ncqa = dw0 >> 16;
    ck_assert_msg(nsqa >= 127 && ncqa >= 127, "only %u SQs / %u CQs: the "
                  "88SS1098 class has >= 128 I/O queue pairs", nsqa + 1,
                  ncqa + 1);
    nh_create_ioq(h, nsqa + 1, 2, -1);
    ck_status(nh_create_cq(h, ncqa + 2, 2, -1), NVME_SC_INVALID_QID,
              "Create CQ above NCQA");
    ck_status(nh_create_cq(h, 0xffff, 2, -1), NVME_SC_INVALID_QID,
              "Create CQ 65535");
    ck_status(nh_create_sq(h, nsqa + 2, 2, 1), NVME_SC_INVALID_QID,
              "Create SQ above NSQA");
    /* the largest queue CAP.MQES allows */
    ck_status(nh_create_cq(h, 3, NVME_CAP_MQES(h->cap) + 1, -1), 0,
              "Create CQ of MQES+1 entries");
    ck_status(nh_create_sq(h, 3, NVME_CAP_MQES(h->cap) + 1, 3), 0,
              "Create SQ of MQES+1 entries");
    dev_close(d);
}
END_TEST

START_TEST(test_queue_errors)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint64_t page = nh_alloc(h, 8192, 4096);
    uint16_t mqes = NVME_CAP_MQES(h->cap);
    NvmeSqe sqe;
    NvmeCqe cqe;

    ck_status(nh_create_cq(h, 0, 16, -1), NVME_SC_INVALID_QID,
              "Create CQ 0");
    ck_status(nh_create_cq(h, 1, 16, -1), NVME_SC_INVALID_QID,
              "Create CQ 1 again");
    ck_status(nh_create_cq(h, 2, 1, -1), NVME_SC_INVALID_QSIZE,
              "Create CQ of 1 entry");
    ck_status(nh_create_cq(h, 2, mqes + 2, -1), NVME_SC_INVALID_QSIZE,
              "Create CQ of MQES+2 entries");
    ck_status(nh_create_cq(h, 2, 16, 4000), NVME_SC_INVALID_IRQ_VECTOR,
              "Create CQ with interrupt vector 4000");
    ck_status(nh_create_sq(h, 2, 16, 9), NVME_SC_CQ_INVALID,
              "Create SQ on missing CQ 9");
    ck_status(nh_create_sq(h, 2, 16, 0), NVME_SC_CQ_INVALID,
              "Create SQ on the admin CQ");
    ck_status(nh_create_sq(h, 1, 16, 1), NVME_SC_INVALID_QID,
              "Create SQ 1 again");
    ck_status(nh_create_sq(h, 0, 16, 1), NVME_SC_INVALID_QID,
              "Create SQ 0");
    ck_status(nh_create_sq(h, 2, 1, 1), NVME_SC_INVALID_QSIZE,
              "Create SQ of 1 entry");
    ck_status(nh_create_sq(h, 2, mqes + 2, 1), NVME_SC_INVALID_QSIZE,
              "Create SQ of MQES+2 entries");
    ck_status(nh_delete_sq(h, 9), NVME_SC_INVALID_QID, "Delete SQ 9");
    ck_status(nh_delete_sq(h, 0), NVME_SC_INVALID_QID, "Delete SQ 0");
    ck_status(nh_delete_cq(h, 9), NVME_SC_INVALID_QID, "Delete CQ 9");
    ck_status(nh_delete_cq(h, 0), NVME_SC_INVALID_QID, "Delete CQ 0");
    ck_status(nh_delete_cq(h, 1), NVME_SC_INVALID_QUEUE_DELETION,
              "Delete CQ 1 before SQ 1");

    /* queue base with an offset in its page */
    nh_sqe_init(&sqe, NVME_ADM_CREATE_CQ, 0);
    sqe.prp1 = page + 64;
    sqe.cdw10 = 2 | (15 << 16);
    sqe.cdw11 = 1;
    cqe = admin_raw(d, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_PRP_OFFSET_INVALID,
              "Create CQ at page offset 64");
    nh_sqe_init(&sqe, NVME_ADM_CREATE_SQ, 0);
    sqe.prp1 = page + 128;
    sqe.cdw10 = 2 | (15 << 16);
    sqe.cdw11 = 1 | (1 << 16);
    cqe = admin_raw(d, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_PRP_OFFSET_INVALID,
              "Create SQ at page offset 128");
    /* CAP.CQR=1: queues must be physically contiguous */
    nh_sqe_init(&sqe, NVME_ADM_CREATE_CQ, 0);
    sqe.prp1 = page;
    sqe.cdw10 = 2 | (15 << 16);
    sqe.cdw11 = 0;
    cqe = admin_raw(d, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_INVALID_FIELD,
              "Create CQ with PC=0");

    /* the existing queue still works */
    ck_status(nh_flush(h, d->q, 1), 0, "flush on SQ 1");
    dev_close(d);
}
END_TEST

START_TEST(test_delete_sq_aborts_commands)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    NvmeQueue *q = nh_create_ioq(h, 2, 64, -1);
    uint64_t buf = nh_alloc(h, 16 * 4096, 4096);
    unsigned aborted = 0, done = 0;
    NvmeCqe cqe;

    /* a burst of reads, then Delete SQ before virtual time moves */
    for (int i = 0; i < 16; i++) {
        NvmeSqe sqe;

        nh_sqe_init(&sqe, NVME_CMD_READ, 1);
        sqe.prp1 = buf + i * 4096;
        sqe.cdw10 = i * 8;
        sqe.cdw12 = 7;
        nh_sq_put(h, q, &sqe, false);
    }
    nh_sq_ring(h, q);
    ck_status(nh_delete_sq(h, 2), 0, "Delete SQ 2 with reads in flight");
    while (nh_poll(h, &(NvmeQueue){ .qid = 2, .cq = h->cqs[2] }, &cqe)) {
        if (nh_status(&cqe) == NVME_SC_ABORT_SQ_DELETION) {
            aborted++;
        } else {
            ck_status(nh_status(&cqe), 0, "read completed before deletion");
            done++;
        }
    }
    ck_assert_msg(aborted + done <= 16, "%u completions for 16 commands",
                  aborted + done);
    ck_status(nh_delete_cq(h, 2), 0, "Delete CQ 2");
    ck_status(nh_flush(h, d->q, 1), 0, "flush on SQ 1 afterwards");
    dev_close(d);
}
END_TEST

START_TEST(test_admin_invalid_opcode)
{
    Dev *d = dev_open();

    ck_status(admin_status(d, 0x03, 0, 0, 0), NVME_SC_INVALID_OPCODE,
              "admin opcode 03h");
    ck_status(admin_status(d, 0x7f, 0, 0, 0), NVME_SC_INVALID_OPCODE,
              "admin opcode 7Fh");
    ck_status(admin_status(d, 0xc3, 0, 0, 0), NVME_SC_INVALID_OPCODE,
              "vendor admin opcode C3h");
    ck_status(admin_status(d, 0x1c, 0, 0, 0), NVME_SC_INVALID_OPCODE,
              "Virtualization Management (not supported)");
    dev_close(d);
}
END_TEST

/* ---- logs -------------------------------------------------------------- */

START_TEST(test_log_error_information)
{
    Dev *d = dev_open();
    uint8_t log[64 * 4];
    uint8_t id[4096];
    NvmeSqe sqe;
    NvmeCqe cqe;
    uint64_t count0, count1;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    ck_assert_msg(id[262] + 1 >= 4, "ELPE: %u error log entries", id[262] + 1);
    ck_status(nh_get_log(d->h, NVME_LOG_ERROR, 0xffffffff, log, 64, 0), 0,
              "error log");
    count0 = le64_at(log, 0);

    /* cause one error on I/O SQ 1 */
    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.cdw10 = (uint32_t)DEV_NS_LBAS;
    sqe.prp1 = nh_alloc(d->h, 4096, 4096);
    cqe = nh_cmd(d->h, d->q, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_LBA_RANGE, "read past the end");

    ck_status(nh_get_log(d->h, NVME_LOG_ERROR, 0xffffffff, log, sizeof(log),
                         0), 0, "error log");
    count1 = le64_at(log, 0);
    ck_assert_msg(count1 == count0 + 1, "error count %" PRIu64 " -> %"
                  PRIu64 " after one error", count0, count1);
    ck_assert_uint_eq(le16_at(log, 8), 1);                /* SQID */
    ck_assert_uint_eq(le16_at(log, 10), cqe.cid);         /* CID */
    ck_assert_msg(((le16_at(log, 12) >> 1) & 0x7ff) == NVME_SC_LBA_RANGE,
                  "status field 0x%04x", le16_at(log, 12));
    ck_assert_uint_eq(le32_at(log, 24), 1);               /* NSID */
    ck_assert_msg(le64_at(log, 16) == DEV_NS_LBAS, "LBA %" PRIu64,
                  le64_at(log, 16));
    dev_close(d);
}
END_TEST

/* 1 MiB written in eight commands, then 512 KiB of it read in four. */
static void write_1m_read_512k(Dev *d, int seed)
{
    g_autofree uint8_t *buf = g_malloc(128 * 1024);

    nh_pattern(buf, 128 * 1024, seed);
    for (int i = 0; i < 8; i++) {
        ck_status(nh_write(d->h, d->q, i * 256, buf, 128 * 1024), 0,
                  "write %d", i);
    }
    for (int i = 0; i < 4; i++) {
        ck_status(nh_read(d->h, d->q, i * 256, buf, 128 * 1024), 0,
                  "read %d", i);
    }
}

START_TEST(test_log_smart_counters)
{
    Dev *d = dev_open();
    uint8_t a[512], b[512];
    H3100Config cfg;

    ck_assert(h3100_profile_load(&cfg, "h3100-3.2t", NULL));
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, a, 512, 0), 0,
              "SMART log");
    ck_assert_msg(le16_at(a, 1) >= 273 && le16_at(a, 1) <= 373,
                  "composite temperature %u K", le16_at(a, 1));
    ck_assert_msg(a[3] == 100, "available spare %u%% on a new drive", a[3]);
    ck_assert_msg(a[4] == cfg.ftl.spare_threshold_pct, "spare threshold "
                  "%u%%, model says %u%%", a[4], cfg.ftl.spare_threshold_pct);
    ck_assert_msg(a[5] == 0, "percentage used %u on a new drive", a[5]);
    ck_assert_msg(a[0] == 0, "critical warning 0x%x", a[0]);

    write_1m_read_512k(d, 20);
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, b, 512, 0), 0,
              "SMART log");
    /* data units: thousands of 512-byte units, rounded up */
    ck_assert_msg(le128_lo(b, 32) - le128_lo(a, 32) >= 1 &&
                  le128_lo(b, 32) >= 2, "data units read %" PRIu64 " -> %"
                  PRIu64 " after 512 KiB", le128_lo(a, 32),
                  le128_lo(b, 32));
    ck_assert_msg(le128_lo(b, 48) >= 3, "data units written %" PRIu64
                  " after 1 MiB (2048 units: expected 3)", le128_lo(b, 48));
    ck_assert_msg(le128_lo(b, 64) - le128_lo(a, 64) == 4, "host read "
                  "commands %" PRIu64 " -> %" PRIu64 " after 4 reads",
                  le128_lo(a, 64), le128_lo(b, 64));
    ck_assert_msg(le128_lo(b, 80) - le128_lo(a, 80) == 8, "host write "
                  "commands %" PRIu64 " -> %" PRIu64 " after 8 writes",
                  le128_lo(a, 80), le128_lo(b, 80));
    ck_assert_msg(le128_lo(b, 160) == 0, "media errors %" PRIu64,
                  le128_lo(b, 160));
    dev_close(d);
}
END_TEST

/* One QOM health property of the drive -device ...,id=h0 (docs/guide/usage.md). */
static uint64_t health_prop(Dev *d, const char *prop)
{
    g_autofree char *r = qt_qmp(d->qt, "{\"execute\": \"qom-get\", "
                                "\"arguments\": {\"path\": "
                                "\"/machine/peripheral/h0\", "
                                "\"property\": \"%s\"}}", prop);
    const char *v = strstr(r, "\"return\": ");
    char *end;
    uint64_t val;

    ck_assert_msg(v, "qom-get %s: %s", prop, r);
    v += strlen("\"return\": ");
    val = g_ascii_strtoull(v, &end, 10);
    ck_assert_msg(end != v, "qom-get %s: not a number: %s", prop, r);
    return val;
}

/*
 * The read-only QOM health properties: every one answers; the host's
 * bytes follow its writes and reads exactly; WAF is the NAND's bytes
 * over the host's; a new drive is cool, unworn and not throttled.
 */
START_TEST(test_health_properties)
{
    static const char *const props[] = {
        "host-bytes-written", "nand-bytes-written", "host-bytes-read",
        "nand-bytes-read", "waf-x1000", "reclaim-runs",
        "reclaim-pages-moved", "free-superblocks", "percentage-used",
        "available-spare", "erase-count-min", "erase-count-max",
        "write-buffer-stalls", "unsafe-shutdowns", "temperature-kelvin",
        "throttle-level", "power-mw",
    };
    Dev *d = dev_open_full(NULL, ",id=h0", "");
    uint64_t w0 = health_prop(d, "host-bytes-written");
    uint64_t r0 = health_prop(d, "host-bytes-read");
    uint64_t host, nand;

    for (size_t i = 0; i < G_N_ELEMENTS(props); i++) {
        health_prop(d, props[i]);
    }
    write_1m_read_512k(d, 21);
    ck_status(nh_flush(d->h, d->q, 1), 0, "flush");
    host = health_prop(d, "host-bytes-written");
    ck_assert_uint_eq(host - w0, 1024 * 1024);
    ck_assert_uint_eq(health_prop(d, "host-bytes-read") - r0, 512 * 1024);
    nand = health_prop(d, "nand-bytes-written");
    ck_assert_uint_eq(health_prop(d, "waf-x1000"),
                      host ? nand * 1000 / host : 0);
    ck_assert_uint_eq(health_prop(d, "percentage-used"), 0);
    ck_assert_uint_eq(health_prop(d, "available-spare"), 100);
    ck_assert_uint_eq(health_prop(d, "throttle-level"), 0);
    ck_assert_uint_le(health_prop(d, "erase-count-min"),
                      health_prop(d, "erase-count-max"));
    ck_assert_uint_gt(health_prop(d, "free-superblocks"), 0);
    ck_assert_uint_gt(health_prop(d, "power-mw"), 0);
    ck_assert_msg(health_prop(d, "temperature-kelvin") >= 273 &&
                  health_prop(d, "temperature-kelvin") <= 373,
                  "temperature %" PRIu64 " K",
                  health_prop(d, "temperature-kelvin"));
    dev_close(d);
}
END_TEST

START_TEST(test_log_smart_media_errors)
{
    Dev *d = dev_open();
    uint8_t a[512], b[512], r[512];

    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, a, 512, 0), 0,
              "SMART log");
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, 50, 1, 0, 0, NULL),
              0, "Write Uncorrectable");
    ck_status(nh_read(d->h, d->q, 50, r, 512), NVME_SC_UNRECOVERED_READ,
              "read of an uncorrectable LBA");
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, b, 512, 0), 0,
              "SMART log");
    ck_assert_msg(le128_lo(b, 160) == le128_lo(a, 160) + 1, "media errors "
                  "%" PRIu64 " -> %" PRIu64 " after one unrecovered read",
                  le128_lo(a, 160), le128_lo(b, 160));
    ck_assert_msg(le128_lo(b, 176) >= le128_lo(a, 176) + 1, "error log "
                  "entries did not grow");
    dev_close(d);
}
END_TEST

START_TEST(test_log_power_on_hours)
{
    Dev *d = dev_open();
    uint8_t b[512];

    /* two hours of virtual time */
    for (int i = 0; i < 8; i++) {
        qt_clock_step(d->qt, 900ll * 1000000000);
    }
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, b, 512, 0), 0,
              "SMART log");
    ck_assert_msg(le128_lo(b, 128) >= 2, "power-on hours %" PRIu64
                  " after 2 h of virtual time", le128_lo(b, 128));
    ck_assert_msg(le128_lo(b, 112) >= 1, "power cycles %" PRIu64,
                  le128_lo(b, 112));
    dev_close(d);
}
END_TEST

START_TEST(test_log_smart_spare_warning)
{
    /* a drive whose factory bad blocks ate its spares */
    const char *params = "user_bytes=256M,factory_bad_ppm=300000,"
                         "spare_threshold_pct=50";
    H3100Model *m = dev_model_new("h3100-3.2t", params, true);
    H3100Health hh;
    Dev *d;
    uint8_t b[512];

    h3100_model_health(m, 0, &hh);
    h3100_model_free(m);
    ck_assert_msg(hh.available_spare_pct < hh.spare_threshold_pct,
                  "test setup: model spare %u%% not below %u%%",
                  hh.available_spare_pct, hh.spare_threshold_pct);
    d = dev_open_full(params, "", "");
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, b, 512, 0), 0,
              "SMART log");
    ck_assert_msg(b[3] == hh.available_spare_pct, "available spare %u%%, "
                  "model says %u%%", b[3], hh.available_spare_pct);
    ck_assert_msg(b[4] == hh.spare_threshold_pct, "threshold %u%%", b[4]);
    ck_assert_msg(b[0] & 1, "critical warning 0x%x lacks the spare bit",
                  b[0]);
    dev_close(d);
}
END_TEST

START_TEST(test_log_firmware_slot)
{
    Dev *d = dev_open();
    uint8_t log[512], id[4096];
    uint8_t afi;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    ck_status(nh_get_log(d->h, NVME_LOG_FW_SLOT, 0xffffffff, log, 512, 0), 0,
              "firmware slot log");
    afi = log[0];
    ck_assert_msg((afi & 7) >= 1 && (afi & 7) <= ((id[260] >> 1) & 7),
                  "AFI active slot %u of %u", afi & 7, (id[260] >> 1) & 7);
    ck_assert_msg(memcmp(log + 8 * (afi & 7), id + 64, 8) == 0,
                  "active slot holds '%.8s', Identify FR is '%.8s'",
                  (char *)log + 8 * (afi & 7), (char *)id + 64);
    dev_close(d);
}
END_TEST

/*
 * What log 05h marks supported is exactly the drive's command sets
 * (hw/tables/nvme-cmds.h), and both agree with what Identify claims
 * without reading that file: the mandatory commands, one optional admin
 * command or pair per OACS bit and SANICAP, one I/O command per ONCS bit.
 */
typedef struct OptionalCmds {
    unsigned word, bit;                 /* Identify's field and bit */
    bool admin;
    uint8_t op[2];                      /* an opcode given twice: one */
    const char *what;
} OptionalCmds;

START_TEST(test_log_commands_effects)
{
    static const uint8_t mandatory_admin[] = {
        0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x08, 0x09, 0x0a, 0x0c,
    };
    static const uint8_t mandatory_io[] = { 0x00, 0x01, 0x02 };
    static const OptionalCmds optional[] = {
        { 256, 1, true, { 0x80, 0x80 }, "OACS Format NVM" },
        { 256, 2, true, { 0x10, 0x11 }, "OACS Firmware Commit / Download" },
        { 256, 3, true, { 0x0d, 0x15 }, "OACS Namespace Management" },
        { 256, 4, true, { 0x14, 0x14 }, "OACS Device Self-test" },
        { 256, 5, true, { 0x19, 0x1a }, "OACS Directives" },
        { 256, 8, true, { 0x7c, 0x7c }, "OACS Doorbell Buffer Config" },
        { 256, 9, true, { 0x86, 0x86 }, "OACS Get LBA Status" },
        { 520, 0, false, { 0x05, 0x05 }, "ONCS Compare" },
        { 520, 1, false, { 0x04, 0x04 }, "ONCS Write Uncorrectable" },
        { 520, 2, false, { 0x09, 0x09 }, "ONCS Dataset Management" },
        { 520, 3, false, { 0x08, 0x08 }, "ONCS Write Zeroes" },
    };
    bool claimed[2][256] = { { false } };
    Dev *d = dev_open();
    uint8_t log[4096], id[4096];
    const uint8_t *ops;
    size_t n;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    ck_status(nh_get_log(d->h, NVME_LOG_CMD_EFFECTS, 0xffffffff, log, 4096,
                         0), 0, "commands supported and effects log");
    for (size_t i = 0; i < sizeof(mandatory_admin); i++) {
        claimed[1][mandatory_admin[i]] = true;
    }
    for (size_t i = 0; i < sizeof(mandatory_io); i++) {
        claimed[0][mandatory_io[i]] = true;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(optional); i++) {
        const OptionalCmds *o = &optional[i];

        if (le32_at(id, o->word) & (1u << o->bit)) {
            claimed[o->admin][o->op[0]] = claimed[o->admin][o->op[1]] = true;
        }
    }
    claimed[1][NVME_ADM_SANITIZE] = (le32_at(id, 328) & 7) != 0;
    for (unsigned op = 0; op < 256; op++) {
        ck_assert_msg(!!(le32_at(log, 4 * op) & 1) == claimed[1][op],
                      "admin opcode %02xh (%s): log 05h %s it, Identify %s",
                      op, nh_opcode_name(true, op),
                      le32_at(log, 4 * op) & 1 ? "supports" : "lacks",
                      claimed[1][op] ? "claims it" : "does not");
        ck_assert_msg(!!(le32_at(log, 1024 + 4 * op) & 1) == claimed[0][op],
                      "I/O opcode %02xh (%s): log 05h %s it, Identify %s",
                      op, nh_opcode_name(false, op),
                      le32_at(log, 1024 + 4 * op) & 1 ? "supports" : "lacks",
                      claimed[0][op] ? "claims it" : "does not");
    }
    for (int admin = 0; admin < 2; admin++) {
        n = nh_opcodes(admin, &ops);
        for (size_t i = 0; i < n; i++) {
            ck_assert_msg(claimed[admin][ops[i]], "%s opcode %02xh (%s) of "
                          "nvme-cmds.h unclaimed", admin ? "admin" : "I/O",
                          ops[i], nh_opcode_name(admin, ops[i]));
        }
    }
    ck_assert_msg(le32_at(log, 1024 + 4 * NVME_CMD_WRITE) & 2, "Write lacks "
                  "LBCC");
    ck_assert_msg(le32_at(log, 4 * NVME_ADM_FORMAT_NVM) & 2, "Format lacks "
                  "LBCC");
    dev_close(d);
}
END_TEST

/*
 * The effects log and dispatch read one table: every opcode the log
 * leaves unsupported answers Invalid Command Opcode, every one it
 * marks supported answers something else (its fields are zero).
 */
START_TEST(test_effects_log_is_dispatch)
{
    Dev *d = dev_open();
    uint8_t log[4096];
    uint64_t buf = nh_alloc(d->h, 4096, 4096);

    ck_status(nh_get_log(d->h, NVME_LOG_CMD_EFFECTS, 0xffffffff, log, 4096,
                         0), 0, "commands supported and effects log");
    for (unsigned op = 0; op < 256; op++) {
        bool supported = le32_at(log, 4 * op) & 1;
        NvmeSqe sqe;
        NvmeCqe cqe;
        uint16_t st;

        if (op == NVME_ADM_ASYNC_EVENT) {
            continue;                   /* completes only on an event */
        }
        nh_sqe_init(&sqe, op, 0);
        sqe.prp1 = buf;
        cqe = admin_raw(d, &sqe);
        st = nh_status(&cqe);
        ck_assert_msg((st == NVME_SC_INVALID_OPCODE) == !supported,
                      "admin opcode %02xh (%s): log says %s, got 0x%03x (%s)",
                      op, nh_opcode_name(true, op),
                      supported ? "supported" : "unsupported", st,
                      nh_status_name(st));
    }
    for (unsigned op = 0; op < 256; op++) {
        bool supported = le32_at(log, 1024 + 4 * op) & 1;
        uint16_t st = nh_io(d->h, d->q, op, 1, 0, 1, buf, 0, NULL);

        ck_assert_msg((st == NVME_SC_INVALID_OPCODE) == !supported,
                      "I/O opcode %02xh (%s): log says %s, got 0x%03x (%s)",
                      op, nh_opcode_name(false, op),
                      supported ? "supported" : "unsupported", st,
                      nh_status_name(st));
    }
    dev_close(d);
}
END_TEST

/*
 * Get Log Page serves exactly the drive's pages (include/h3100/
 * log-pages.h), each answering a 512-byte read, every other LID Invalid
 * Log Page; and the pages Identify promises without reading that list
 * are among them: 01h-03h always, 05h by LPA, 07h / 08h by LPA's
 * telemetry bit, 06h by OACS self-test, 81h by SANICAP, 04h by OAES's
 * namespace attribute notice.
 */
START_TEST(test_log_pages_are_the_list)
{
    Dev *d = dev_open();
    uint8_t id[4096], log[512];
    bool listed[256] = { false };
    const uint8_t *lids;
    size_t n = nh_log_ids(&lids);
    struct {
        bool claimed;
        uint8_t lid;
        const char *by;
    } promised[] = {
        { true, 0x01, "NVMe (mandatory)" },
        { true, 0x02, "NVMe (mandatory)" },
        { true, 0x03, "NVMe (mandatory)" },
        { false, 0x04, "OAES namespace attribute notices" },
        { false, 0x05, "LPA bit 1" },
        { false, 0x06, "OACS self-test" },
        { false, 0x07, "LPA bit 3 (telemetry)" },
        { false, 0x08, "LPA bit 3 (telemetry)" },
        { false, 0x81, "SANICAP" },
    };

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    promised[3].claimed = le32_at(id, 92) & (1 << 8);
    promised[4].claimed = id[261] & (1 << 1);
    promised[5].claimed = le16_at(id, 256) & (1 << 4);
    promised[6].claimed = promised[7].claimed = id[261] & (1 << 3);
    promised[8].claimed = le32_at(id, 328) & 7;
    for (size_t i = 0; i < n; i++) {
        listed[lids[i]] = true;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(promised); i++) {
        ck_assert_msg(!promised[i].claimed || listed[promised[i].lid],
                      "log %02Xh promised by %s, not served",
                      promised[i].lid, promised[i].by);
    }
    for (unsigned lid = 0; lid < 256; lid++) {
        uint16_t st = nh_get_log(d->h, lid, 0xffffffff, log, sizeof(log),
                                 0);

        if (listed[lid]) {
            ck_status(st, 0, "log %02Xh, one of the drive's pages", lid);
        } else {
            ck_status(st, NVME_SC_INVALID_LOG_PAGE, "log %02Xh", lid);
        }
    }
    dev_close(d);
}
END_TEST

START_TEST(test_log_errors)
{
    Dev *d = dev_open();
    uint8_t log[512];

    ck_status(nh_get_log(d->h, 0x7f, 0xffffffff, log, 512, 0),
              NVME_SC_INVALID_LOG_PAGE, "log page 7Fh");
    ck_status(nh_get_log(d->h, 0x0d, 0xffffffff, log, 512, 0),
              NVME_SC_INVALID_LOG_PAGE, "persistent event log (none)");
    {
        uint16_t st = nh_get_log(d->h, NVME_LOG_SMART, 5, log, 512, 0);

        ck_assert_msg(st == NVME_SC_INVALID_FIELD || st == NVME_SC_INVALID_NSID,
                      "SMART log of namespace 5: 0x%03x (%s)", st,
                      nh_status_name(st));
    }
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, log, 512, 4096),
              NVME_SC_INVALID_FIELD, "SMART log at offset 4096");
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, log, 256, 256), 0,
              "second half of the SMART log");
    dev_close(d);
}
END_TEST

/* ---- features ---------------------------------------------------------- */

static void feature_roundtrip(Dev *d, uint8_t fid, uint32_t value,
                              uint32_t mask)
{
    uint32_t dw0 = 0;

    ck_status(nh_set_features(d->h, fid, value, false, NULL), 0,
              "Set Features %02xh = 0x%x", fid, value);
    ck_status(nh_get_features(d->h, fid, 0, 0, &dw0), 0,
              "Get Features %02xh", fid);
    ck_assert_msg((dw0 & mask) == (value & mask), "feature %02xh reads 0x%x "
                  "after setting 0x%x", fid, dw0, value);
}

/*
 * Get Features answers exactly the drive's features (include/h3100/
 * features.h), every other FID Invalid Field; and the features NVMe 1.3
 * makes mandatory, and those Identify promises (ONCS timestamp, HCTMA),
 * are among them.
 */
START_TEST(test_features_are_the_list)
{
    static const struct {
        unsigned word, bit;             /* Identify's field, or word 0 */
        uint8_t fid;
    } promised[] = {
        { 0, 0, 0x01 }, { 0, 0, 0x02 }, { 0, 0, 0x04 }, { 0, 0, 0x05 },
        { 0, 0, 0x07 }, { 0, 0, 0x08 }, { 0, 0, 0x09 }, { 0, 0, 0x0a },
        { 0, 0, 0x0b },
        { 520, 6, 0x0e },               /* ONCS Timestamp */
        { 322, 0, 0x10 },               /* HCTMA */
    };
    bool listed[256] = { false };
    Dev *d = dev_open();
    uint8_t id[4096];
    const uint8_t *fids;
    size_t n = nh_feature_ids(&fids);
    uint32_t dw0;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    for (size_t i = 0; i < n; i++) {
        listed[fids[i]] = true;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(promised); i++) {
        bool claimed = !promised[i].word ||
                       (le16_at(id, promised[i].word) & (1u << promised[i].bit));

        ck_assert_msg(!claimed || listed[promised[i].fid], "feature %02Xh "
                      "promised, not in the drive's list", promised[i].fid);
    }
    for (unsigned fid = 0; fid < 256; fid++) {
        uint16_t st = nh_get_features(d->h, fid, 0, 0, &dw0);

        ck_status(st, listed[fid] ? 0 : NVME_SC_INVALID_FIELD,
                  "Get Features %02Xh", fid);
    }
    dev_close(d);
}
END_TEST

START_TEST(test_features_roundtrip)
{
    Dev *d = dev_open();
    uint32_t dw0 = 0;

    feature_roundtrip(d, NVME_FEAT_ARBITRATION, 0x03020104, 0xffffff07);
    feature_roundtrip(d, NVME_FEAT_POWER_MGMT, 1, 0x1f);
    feature_roundtrip(d, NVME_FEAT_POWER_MGMT, 0, 0x1f);
    feature_roundtrip(d, NVME_FEAT_TEMP_THRESH, 350, 0xffff);
    /* under-temperature threshold (THSEL=1) */
    ck_status(nh_set_features(d->h, NVME_FEAT_TEMP_THRESH, 260 | (1 << 20),
                              false, NULL), 0, "under-temperature");
    ck_status(nh_get_features(d->h, NVME_FEAT_TEMP_THRESH, 0, 1 << 20, &dw0),
              0, "get under-temperature");
    ck_assert_uint_eq(dw0 & 0xffff, 260);
    ck_status(nh_get_features(d->h, NVME_FEAT_TEMP_THRESH, 0, 0, &dw0),
              0, "get over-temperature");
    ck_assert_uint_eq(dw0 & 0xffff, 350);
    feature_roundtrip(d, NVME_FEAT_ERROR_RECOVERY, 100, 0xffff);
    feature_roundtrip(d, NVME_FEAT_IRQ_COALESCE, 0x0a04, 0xffff);
    feature_roundtrip(d, NVME_FEAT_ASYNC_EVENT, 0xff, 0xff);
    /* interrupt vector configuration: CD of vector 1 */
    ck_status(nh_set_features(d->h, NVME_FEAT_IRQ_CONFIG, 1 | (1 << 16),
                              false, NULL), 0, "IV config set");
    ck_status(nh_get_features(d->h, NVME_FEAT_IRQ_CONFIG, 0, 1, &dw0), 0,
              "IV config get");
    ck_assert_msg(dw0 == (1 | (1 << 16)), "IV config 0x%x", dw0);
    ck_status(nh_get_features(d->h, NVME_FEAT_IRQ_CONFIG, 0, 4000, &dw0),
              NVME_SC_INVALID_FIELD, "IV config of vector 4000");
    /* volatile write cache: not present by default */
    ck_status(nh_set_features(d->h, NVME_FEAT_VWC, 1, false, NULL),
              NVME_SC_INVALID_FIELD, "enable a VWC that is not present");
    /* unknown and unsaveable */
    ck_status(nh_get_features(d->h, 0x7f, 0, 0, &dw0),
              NVME_SC_INVALID_FIELD, "Get Features 7Fh");
    ck_status(nh_set_features(d->h, 0x7f, 0, false, NULL),
              NVME_SC_INVALID_FIELD, "Set Features 7Fh");
    ck_status(nh_set_features(d->h, NVME_FEAT_ARBITRATION, 0, true, NULL),
              NVME_SC_FEAT_NOT_SAVEABLE, "Set Features with SV=1");
    ck_status(nh_set_features(d->h, NVME_FEAT_POWER_MGMT, 31, false, NULL),
              NVME_SC_INVALID_FIELD, "power state 31");
    dev_close(d);
}
END_TEST

START_TEST(test_feature_write_atomicity)
{
    Dev *d = dev_open();

    feature_roundtrip(d, NVME_FEAT_WRITE_ATOMIC, 1, 1);
    feature_roundtrip(d, NVME_FEAT_WRITE_ATOMIC, 0, 1);
    dev_close(d);
}
END_TEST

START_TEST(test_features_select)
{
    Dev *d = dev_open();
    uint32_t dw0 = 0, def = 0;

    ck_status(nh_get_features(d->h, NVME_FEAT_ERROR_RECOVERY, 1, 0, &def), 0,
              "default error recovery");
    ck_status(nh_set_features(d->h, NVME_FEAT_ERROR_RECOVERY, def + 7, false,
                              NULL), 0, "set");
    ck_status(nh_get_features(d->h, NVME_FEAT_ERROR_RECOVERY, 0, 0, &dw0), 0,
              "current");
    ck_assert_uint_eq(dw0 & 0xffff, (def + 7) & 0xffff);
    ck_status(nh_get_features(d->h, NVME_FEAT_ERROR_RECOVERY, 1, 0, &dw0), 0,
              "default");
    ck_assert_uint_eq(dw0, def);
    ck_status(nh_get_features(d->h, NVME_FEAT_ERROR_RECOVERY, 3, 0, &dw0), 0,
              "supported capabilities");
    ck_assert_msg(dw0 & (1 << 2), "error recovery not changeable?");
    dev_close(d);
}
END_TEST

START_TEST(test_feature_vwc)
{
    Dev *d = dev_open_full(NULL, ",vwc=on", "");
    uint8_t w[4096];

    feature_roundtrip(d, NVME_FEAT_VWC, 1, 1);
    nh_pattern(w, sizeof(w), 21);
    ck_status(nh_write(d->h, d->q, 0, w, sizeof(w)), 0, "cached write");
    ck_status(nh_flush(d->h, d->q, 1), 0, "flush");
    feature_roundtrip(d, NVME_FEAT_VWC, 0, 1);
    ck_status(nh_write(d->h, d->q, 8, w, sizeof(w)), 0, "write-through");
    dev_close(d);
}
END_TEST

START_TEST(test_feature_number_of_queues)
{
    Dev *d = dev_launch(NULL, "", "");
    uint32_t dw0 = 0;

    nh_enable(d->h, 16);
    ck_status(nh_set_features(d->h, NVME_FEAT_NUM_QUEUES, 3 | (5 << 16),
                              false, &dw0), 0, "ask for 4 SQs, 6 CQs");
    ck_assert_msg((dw0 & 0xffff) >= 127 && (dw0 >> 16) >= 127,
                  "granted 0x%x: NSQA/NCQA are what the controller has",
                  dw0);
    ck_status(nh_set_features(d->h, NVME_FEAT_NUM_QUEUES, 0xffff, false,
                              NULL), NVME_SC_INVALID_FIELD,
              "65536 SQs requested");
    nh_create_ioq(d->h, 1, 16, -1);
    ck_status(nh_set_features(d->h, NVME_FEAT_NUM_QUEUES, 3 | (3 << 16),
                              false, NULL), NVME_SC_CMD_SEQ_ERROR,
              "Number of Queues after creating queues");
    dev_close(d);
}
END_TEST

START_TEST(test_feature_timestamp)
{
    Dev *d = dev_open();
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    uint64_t ts = 1700000000000ull;
    uint8_t v[8] = { 0 };
    uint64_t got;
    NvmeSqe sqe;
    NvmeCqe cqe;

    memcpy(v, &ts, 6);
    qt_memwrite(d->qt, buf, v, 8);
    nh_sqe_init(&sqe, NVME_ADM_SET_FEATURES, 0);
    sqe.cdw10 = NVME_FEAT_TIMESTAMP;
    sqe.prp1 = buf;
    cqe = admin_raw(d, &sqe);
    ck_status(nh_status(&cqe), 0, "Set Features Timestamp");
    qt_clock_step(d->qt, 5000000000ll);
    qt_memset(d->qt, buf, 0, 8);
    nh_sqe_init(&sqe, NVME_ADM_GET_FEATURES, 0);
    sqe.cdw10 = NVME_FEAT_TIMESTAMP;
    sqe.prp1 = buf;
    cqe = admin_raw(d, &sqe);
    ck_status(nh_status(&cqe), 0, "Get Features Timestamp");
    qt_memread(d->qt, buf, v, 8);
    got = le64_at(v, 0) & 0xffffffffffffull;
    ck_assert_msg(got >= ts + 5000 && got <= ts + 5100, "timestamp %"
                  PRIu64 " 5 s of virtual time after %" PRIu64, got, ts);
    ck_assert_msg(((v[6] >> 1) & 7) == 1, "timestamp origin %u, expected "
                  "1 (set by Set Features)", (v[6] >> 1) & 7);
    dev_close(d);
}
END_TEST

/* ---- interrupts -------------------------------------------------------- */

START_TEST(test_msix_interrupts)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint64_t msi = nh_alloc(h, 4096, 4096);
    NvmeQueue *q;
    NvmeCqe cqe;
    NvmeSqe sqe;

    nh_msix_enable(h);
    nh_msix_set(h, 3, msi, 0xfee1, false);
    q = nh_create_ioq(h, 2, 16, 3);
    qt_writel(d->qt, msi, 0);
    nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
    nh_submit(h, q, &sqe);
    ck_assert_msg(nh_wait(h, q, &cqe, 1000000000), "flush on SQ 2 did not "
                  "complete");
    ck_assert_msg(qt_readl(d->qt, msi) == 0xfee1, "no MSI-X message on "
                  "vector 3 for a completion (0x%x)", qt_readl(d->qt, msi));

    /* masked vector: no message, then pending is delivered on unmask */
    nh_msix_set(h, 3, msi, 0xfee2, true);
    qt_writel(d->qt, msi, 0);
    nh_submit(h, q, &sqe);
    ck_assert(nh_wait(h, q, &cqe, 1000000000));
    ck_assert_msg(qt_readl(d->qt, msi) == 0, "message through a masked "
                  "vector");
    nh_msix_set(h, 3, msi, 0xfee2, false);
    qt_clock_step(h->qt, 1000);
    ck_assert_msg(qt_readl(d->qt, msi) == 0xfee2, "pending message not "
                  "delivered on unmask");
    dev_close(d);
}
END_TEST

START_TEST(test_interrupt_coalescing)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint64_t msi = nh_alloc(h, 4096, 4096);
    NvmeQueue *q;
    NvmeCqe cqe;
    NvmeSqe sqe;
    int64_t t0;

    nh_msix_enable(h);
    nh_msix_set(h, 2, msi, 0xc0a1, false);
    q = nh_create_ioq(h, 2, 64, 2);
    /* threshold 4 entries (0's based 3), time 10 x 100 us */
    ck_status(nh_set_features(h, NVME_FEAT_IRQ_COALESCE, 3 | (10 << 8),
                              false, NULL), 0, "set coalescing");
    qt_writel(d->qt, msi, 0);
    nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
    nh_submit(h, q, &sqe);
    t0 = qt_clock_now(h->qt);
    ck_assert(nh_wait(h, q, &cqe, 500000));
    ck_assert_msg(qt_readl(d->qt, msi) == 0, "interrupt after 1 entry with "
                  "an aggregation threshold of 4");
    /* aggregation time: the message comes within 1 ms anyway */
    qt_clock_set(h->qt, t0 + 1100000);
    ck_assert_msg(qt_readl(d->qt, msi) == 0xc0a1, "no interrupt after the "
                  "1 ms aggregation time");

    /* 4 entries: one message at once */
    qt_writel(d->qt, msi, 0);
    for (int i = 0; i < 4; i++) {
        nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
        nh_sq_put(h, q, &sqe, false);
    }
    nh_sq_ring(h, q);
    for (int i = 0; i < 4; i++) {
        ck_assert(nh_wait(h, q, &cqe, 500000));
    }
    ck_assert_msg(qt_readl(d->qt, msi) == 0xc0a1, "no interrupt after 4 "
                  "entries");

    /* vector 2 with Coalescing Disable: every completion interrupts */
    ck_status(nh_set_features(h, NVME_FEAT_IRQ_CONFIG, 2 | (1 << 16), false,
                              NULL), 0, "CD on vector 2");
    qt_writel(d->qt, msi, 0);
    nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
    nh_submit(h, q, &sqe);
    ck_assert(nh_wait(h, q, &cqe, 500000));
    ck_assert_msg(qt_readl(d->qt, msi) == 0xc0a1, "coalescing disabled but "
                  "no interrupt for one entry");
    dev_close(d);
}
END_TEST

/* Is a completion waiting at the head of @q's CQ?  (Does not take it.) */
static bool cqe_posted(Dev *d, NvmeQueue *q)
{
    NvmeCqe e;

    qt_memread(d->qt, q->cq->addr + q->cq->head * 16ull, &e, sizeof(e));
    return (e.status & 1) == q->cq->phase;
}

static void admin_submit_and_peek(Dev *d)
{
    NvmeSqe sqe;

    nh_sqe_init(&sqe, NVME_ADM_GET_FEATURES, 0);
    sqe.cdw10 = NVME_FEAT_ARBITRATION;
    nh_submit(d->h, d->h->admin, &sqe);
    for (int i = 0; i < 1000 && !cqe_posted(d, d->h->admin); i++) {
        qt_clock_step(d->qt, 10000);
    }
    ck_assert_msg(cqe_posted(d, d->h->admin), "Get Features never "
                  "completed");
}

/*
 * INTx in the main loop and with the controller in an IOThread, where
 * the pin is driven by the main loop's bottom half: the level is awaited
 * over clock steps rather than read at once.
 */
static const struct {
    const char *devopts, *extra;
} intx_configs[] = {
    { "", "" },
    { ",iothread=io0", "-object iothread,id=io0" },
};

/* The pin's level once it is @want, or after 100 clock steps. */
static int intx_settle(Dev *d, int want)
{
    for (int i = 0; i < 100 && dev_intx_level(d->qt) != want; i++) {
        qt_clock_step(d->qt, 1000);
    }
    return dev_intx_level(d->qt);
}

START_TEST(test_intx_interrupts)
{
    Dev *d = dev_open_full(NULL, intx_configs[_i].devopts,
                           intx_configs[_i].extra);
    NvmeCqe cqe;

    qt_irq_intercept_in(d->qt, "ioapic");
    ck_assert_msg(intx_settle(d, 0) == 0, "INTx asserted with no "
                  "completion pending");
    admin_submit_and_peek(d);
    ck_assert_msg(intx_settle(d, 1) == 1, "INTx not asserted for a "
                  "pending admin completion (MSI-X off)");
    ck_assert(nh_poll(d->h, d->h->admin, &cqe));   /* CQ head doorbell */
    ck_assert_msg(intx_settle(d, 0) == 0, "INTx still asserted after "
                  "the host consumed every completion");

    /* INTMS masks vector 0, INTMC unmasks it */
    nh_wr32(d->h, NVME_REG_INTMS, 1);
    admin_submit_and_peek(d);
    ck_assert_msg(intx_settle(d, 1) == 0, "INTx asserted while masked "
                  "by INTMS");
    nh_wr32(d->h, NVME_REG_INTMC, 1);
    ck_assert_msg(intx_settle(d, 1) == 1, "INTx not asserted after "
                  "INTMC unmasked a pending completion");
    ck_assert(nh_poll(d->h, d->h->admin, &cqe));
    ck_assert_uint_eq(intx_settle(d, 0), 0);
    dev_close(d);
}
END_TEST

/* ---- events and abort -------------------------------------------------- */

static uint16_t submit_aer(Dev *d)
{
    NvmeSqe sqe;

    nh_sqe_init(&sqe, NVME_ADM_ASYNC_EVENT, 0);
    return nh_submit(d->h, d->h->admin, &sqe);
}

START_TEST(test_aer_temperature)
{
    Dev *d = dev_open();
    uint8_t smart[512];
    uint16_t cid, temp;
    NvmeCqe cqe;

    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, 0xff, false,
                              NULL), 0, "enable SMART events");
    cid = submit_aer(d);
    ck_assert_msg(!nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100000000),
                  "AER completed with nothing to report");
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, smart, 512, 0), 0,
              "SMART log");
    temp = le16_at(smart, 1);
    ck_status(nh_set_features(d->h, NVME_FEAT_TEMP_THRESH, temp - 10, false,
                              NULL), 0, "over-temperature threshold below "
              "the composite temperature");
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 2000000000),
                  "no temperature event within 2 s of virtual time");
    ck_status(nh_status(&cqe), 0, "AER");
    ck_assert_msg((cqe.dw0 & 7) == 1 && ((cqe.dw0 >> 8) & 0xff) == 1 &&
                  ((cqe.dw0 >> 16) & 0xff) == NVME_LOG_SMART,
                  "event 0x%08x: expected SMART/Health, temperature "
                  "threshold, log 02h", cqe.dw0);
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, smart, 512, 0), 0,
              "SMART log");
    ck_assert_msg(smart[0] & 2, "critical warning 0x%x lacks temperature",
                  smart[0]);
    dev_close(d);
}
END_TEST

START_TEST(test_aer_spare)
{
    const char *params = "user_bytes=256M,factory_bad_ppm=300000,"
                         "spare_threshold_pct=50";
    Dev *d = dev_open_full(params, "", "");
    uint16_t cid;
    NvmeCqe cqe;

    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, 0xff, false,
                              NULL), 0, "enable SMART events");
    cid = submit_aer(d);
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 5000000000ll),
                  "no available-spare event within 5 s of virtual time on a "
                  "drive below its spare threshold");
    ck_assert_msg((cqe.dw0 & 7) == 1 && ((cqe.dw0 >> 8) & 0xff) == 2,
                  "event 0x%08x: expected SMART/Health, spare below "
                  "threshold", cqe.dw0);
    dev_close(d);
}
END_TEST

START_TEST(test_aer_reliability)
{
    /* a tiny drive rated for one P/E cycle: 8 x its capacity wears it out */
    const char *params = "user_bytes=32M,channels=1,dies_per_channel=1,"
                         "pages_per_block=48,blocks_per_plane=64,"
                         "spare_blocks_per_plane=4,rated_pe=1,"
                         "grown_bad_ppm=0";
    Dev *d = dev_open_full(params, ",timing=off", "");
    uint64_t buf = nh_alloc(d->h, 128 * 1024, 4096);
    uint8_t smart[512];
    uint16_t cid;
    NvmeCqe cqe;

    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, 0xff, false,
                              NULL), 0, "enable SMART events");
    cid = submit_aer(d);
    for (int i = 0; i < 2048; i++) {
        ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE, 1, (i % 256) * 256ull,
                        256, buf, 0, NULL), 0, "write %d", i);
    }
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 5000000000ll),
                  "no reliability event within 5 s of virtual time after "
                  "wearing the drive out");
    ck_assert_msg((cqe.dw0 & 7) == 1 && ((cqe.dw0 >> 8) & 0xff) == 0,
                  "event 0x%08x: expected SMART/Health, NVM subsystem "
                  "reliability", cqe.dw0);
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, smart, 512, 0), 0,
              "SMART log");
    ck_assert_msg(smart[5] >= 100, "percentage used %u after 8 drive "
                  "writes at rated P/E 1", smart[5]);
    ck_assert_msg(smart[0] & 4, "critical warning 0x%x lacks reliability",
                  smart[0]);
    dev_close(d);
}
END_TEST

START_TEST(test_aer_limit)
{
    Dev *d = dev_open();
    uint8_t id[4096];
    unsigned aerl;
    NvmeCqe cqe;
    uint16_t cid;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    aerl = id[259] + 1;
    for (unsigned i = 0; i < aerl; i++) {
        submit_aer(d);
    }
    cid = submit_aer(d);
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100000000),
                  "AER number %u of AERL %u got no completion", aerl + 1,
                  aerl);
    ck_status(nh_status(&cqe), NVME_SC_AER_LIMIT, "AER above AERL");
    ck_status(nh_identify(d->h, 1, 0, NULL), 0, "Identify with AERs "
              "outstanding");
    dev_close(d);
}
END_TEST

START_TEST(test_aer_invalid_doorbell)
{
    Dev *d = dev_open();
    uint16_t cid;
    NvmeCqe cqe;

    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, 0xff, false,
                              NULL), 0, "async event config");
    cid = submit_aer(d);
    /* a doorbell of a queue that does not exist */
    nh_wr32(d->h, nh_sq_doorbell(d->h, 9), 1);
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100000000),
                  "no Invalid Doorbell Write event for SQ 9's doorbell");
    ck_assert_msg((cqe.dw0 & 7) == 0 && ((cqe.dw0 >> 8) & 0xff) == 0,
                  "event 0x%08x: expected error / invalid doorbell",
                  cqe.dw0);
    /* the error log page clears it; a value beyond the queue size next */
    ck_status(nh_get_log(d->h, (cqe.dw0 >> 16) & 0xff, 0xffffffff, NULL, 64,
                         0), 0, "read the event's log");
    cid = submit_aer(d);
    nh_wr32(d->h, nh_sq_doorbell(d->h, 1), 200);
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100000000),
                  "no event for an SQ tail beyond the queue size");
    ck_assert_msg((cqe.dw0 & 7) == 0 && ((cqe.dw0 >> 8) & 0xff) == 1,
                  "event 0x%08x: expected error / invalid doorbell value",
                  cqe.dw0);
    dev_close(d);
}
END_TEST

START_TEST(test_abort)
{
    Dev *d = dev_open();
    uint16_t aer_cid;
    NvmeSqe sqe;
    NvmeCqe cqe, acqe;

    /* nothing to abort: DW0 bit 0 = 1 */
    nh_sqe_init(&sqe, NVME_ADM_ABORT, 0);
    sqe.cdw10 = 1 | (0x4321u << 16);
    cqe = admin_raw(d, &sqe);
    ck_status(nh_status(&cqe), 0, "Abort of an unknown command");
    ck_assert_msg(cqe.dw0 & 1, "Abort of an unknown command says it "
                  "aborted it (DW0 0x%x)", cqe.dw0);
    /* SQ that does not exist */
    nh_sqe_init(&sqe, NVME_ADM_ABORT, 0);
    sqe.cdw10 = 9 | (1u << 16);
    cqe = admin_raw(d, &sqe);
    ck_assert_msg(nh_status(&cqe) == NVME_SC_INVALID_FIELD ||
                  (nh_status(&cqe) == 0 && (cqe.dw0 & 1)),
                  "Abort on SQ 9: 0x%03x dw0 0x%x", nh_status(&cqe),
                  cqe.dw0);
    /* an outstanding AER: if the abort says done, the AER completes */
    aer_cid = submit_aer(d);
    nh_sqe_init(&sqe, NVME_ADM_ABORT, 0);
    sqe.cdw10 = 0 | ((uint32_t)aer_cid << 16);
    cqe = admin_raw(d, &sqe);
    ck_status(nh_status(&cqe), 0, "Abort of an AER");
    if (!(cqe.dw0 & 1)) {
        ck_assert_msg(nh_wait_cid(d->h, d->h->admin, aer_cid, &acqe,
                                  100000000), "aborted AER never completed");
        ck_status(nh_status(&acqe), NVME_SC_ABORT_REQ, "aborted AER");
    }
    dev_close(d);
}
END_TEST

/* ---- firmware ---------------------------------------------------------- */

/* The device's image format (docs/guide/usage.md): "H3FW", then the revision. */
static uint32_t make_fw_image(uint8_t *img, uint32_t len, const char *rev)
{
    nh_pattern(img, len, 99);
    memcpy(img, "H3FW", 4);
    memcpy(img + 4, rev, 8);
    return len;
}

static uint16_t fw_download(Dev *d, const uint8_t *img, uint32_t len,
                            uint32_t offset)
{
    uint64_t buf = nh_alloc(d->h, len, 4096);
    NvmeSqe sqe;
    NvmeCqe cqe;

    qt_memwrite(d->qt, buf, img, len);
    nh_sqe_init(&sqe, NVME_ADM_FW_DOWNLOAD, 0);
    nh_set_prps(d->h, &sqe, buf, len);
    sqe.cdw10 = len / 4 - 1;
    sqe.cdw11 = offset / 4;
    cqe = admin_raw(d, &sqe);
    return nh_status(&cqe);
}

static uint16_t fw_commit(Dev *d, unsigned slot, unsigned action)
{
    return admin_status(d, NVME_ADM_FW_COMMIT, 0, slot | (action << 3), 0);
}

START_TEST(test_firmware_update)
{
    Dev *d = dev_open();
    uint8_t img[16384], id[4096], log[512];
    char old_fr[9] = "", new_fr[9] = "H3D1TEST";
    uint16_t st;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    memcpy(old_fr, id + 64, 8);
    make_fw_image(img, sizeof(img), new_fr);
    ck_status(fw_download(d, img, 8192, 0), 0, "download part 1");
    ck_status(fw_download(d, img + 8192, 8192, 8192), 0, "download part 2");
    st = fw_commit(d, 2, 1);          /* replace slot 2, activate at reset */
    ck_status(st, 0, "Firmware Commit CA=1 to slot 2");
    ck_status(nh_get_log(d->h, NVME_LOG_FW_SLOT, 0xffffffff, log, 512, 0), 0,
              "firmware slot log");
    ck_assert_msg(memcmp(log + 16, new_fr, 8) == 0, "slot 2 holds '%.8s'",
                  (char *)log + 16);
    ck_assert_msg(((log[0] >> 4) & 7) == 2, "AFI 0x%02x: slot 2 not next "
                  "active", log[0]);
    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    ck_assert_msg(memcmp(id + 64, old_fr, 8) == 0, "revision changed "
                  "before the reset");

    nh_disable(d->h);
    nh_enable(d->h, 16);
    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify after reset");
    ck_assert_msg(memcmp(id + 64, new_fr, 8) == 0, "after the reset the "
                  "revision is '%.8s', expected '%s'", (char *)id + 64,
                  new_fr);
    ck_status(nh_get_log(d->h, NVME_LOG_FW_SLOT, 0xffffffff, log, 512, 0), 0,
              "firmware slot log");
    ck_assert_msg((log[0] & 7) == 2, "AFI 0x%02x: slot 2 not active",
                  log[0]);
    ck_assert_msg(memcmp(log + 8, old_fr, 8) == 0, "slot 1 lost '%s'",
                  old_fr);

    /* back to slot 1 at once (CA=3), then slot 2 at the next reset (CA=2) */
    ck_status(fw_commit(d, 1, 3), 0, "Firmware Commit CA=3 to slot 1");
    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    ck_assert_msg(memcmp(id + 64, old_fr, 8) == 0, "CA=3: revision '%.8s', "
                  "expected '%s' at once", (char *)id + 64, old_fr);
    ck_status(fw_commit(d, 2, 2), 0, "Firmware Commit CA=2 to slot 2");
    ck_status(fw_commit(d, 3, 2), NVME_SC_INVALID_FW_IMAGE,
              "CA=2 to empty slot 3");
    nh_disable(d->h);
    nh_enable(d->h, 16);
    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify after reset");
    ck_assert_msg(memcmp(id + 64, new_fr, 8) == 0, "CA=2: revision '%.8s' "
                  "after the reset", (char *)id + 64);
    dev_close(d);
}
END_TEST

START_TEST(test_firmware_errors)
{
    Dev *d = dev_open();
    uint8_t img[8192], id[4096];
    unsigned slots;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    slots = (id[260] >> 1) & 7;
    ck_status(fw_commit(d, 2, 1), NVME_SC_INVALID_FW_IMAGE,
              "commit with no image downloaded");
    make_fw_image(img, sizeof(img), "H3D1BAD0");
    ck_status(fw_download(d, img, 4096, 0), 0, "download");
    ck_status(fw_download(d, img, 4096, 8192), NVME_SC_INVALID_FIELD,
              "download leaving a gap");
    ck_status(fw_commit(d, slots + 1, 1), NVME_SC_INVALID_FW_SLOT,
              "commit to slot %u of %u", slots + 1, slots);
    if (id[260] & 1) {
        ck_status(fw_commit(d, 1, 1), NVME_SC_INVALID_FW_SLOT,
                  "commit to read-only slot 1");
    }
    ck_status(fw_commit(d, 2, 6), NVME_SC_INVALID_FIELD, "commit action 6");
    /* a corrupt image */
    memset(img, 0, 16);
    ck_status(fw_download(d, img, 4096, 0), 0, "download");
    ck_status(fw_commit(d, 2, 0), NVME_SC_INVALID_FW_IMAGE,
              "commit of an image without the header");
    dev_close(d);
}
END_TEST

/* ---- format and sanitize ----------------------------------------------- */

static int find_lbaf(Dev *d, unsigned lbads)
{
    uint8_t id[4096];

    ck_status(nh_identify(d->h, 0, 1, id), 0, "Identify Namespace");
    for (unsigned i = 0; i <= id[25] && i < 16; i++) {
        uint32_t f = le32_at(id, 128 + 4 * i);

        if (((f >> 16) & 0xff) == lbads && (f & 0xffff) == 0) {
            return i;
        }
    }
    ck_abort_msg("no LBA format of %u bytes", 1u << lbads);
    return -1;
}

START_TEST(test_format_4k)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint8_t w[8192], r[8192], id[4096];
    int lbaf = find_lbaf(d, 12);
    uint16_t st;

    nh_pattern(w, sizeof(w), 30);
    ck_status(nh_write(h, d->q, 0, w, sizeof(w)), 0, "write");
    st = admin_status(d, NVME_ADM_FORMAT_NVM, 1, lbaf, 0);
    ck_status(st, 0, "Format NVM to LBA format %d (4096)", lbaf);
    ck_status(nh_identify(h, 0, 1, id), 0, "Identify Namespace");
    ck_assert_msg((id[26] & 0xf) == lbaf, "FLBAS %u after format",
                  id[26] & 0xf);
    ck_assert_uint_eq(le64_at(id, 0), DEV_NS_BYTES / 4096);
    h->lba_size = 4096;
    ck_status(nh_read(h, d->q, 0, r, sizeof(r)), 0, "read after format");
    ck_assert_msg(r[0] == 0 && !memcmp(r, r + 1, sizeof(r) - 1),
                  "data survived Format NVM");
    nh_pattern(w, sizeof(w), 31);
    ck_status(nh_write(h, d->q, 10, w, sizeof(w)), 0, "4 KiB LBA write");
    ck_status(nh_read(h, d->q, 10, r, sizeof(r)), 0, "4 KiB LBA read");
    ck_assert(memcmp(w, r, sizeof(r)) == 0);
    ck_status(nh_io(h, d->q, NVME_CMD_READ, 1, DEV_NS_BYTES / 4096, 1,
                    nh_alloc(h, 4096, 4096), 0, NULL), NVME_SC_LBA_RANGE,
              "read at the new NSZE");
    /* and back to 512 */
    st = admin_status(d, NVME_ADM_FORMAT_NVM, 1, find_lbaf(d, 9), 0);
    ck_status(st, 0, "Format NVM back to 512");
    h->lba_size = 512;
    ck_status(nh_read(h, d->q, 80, r, 4096), 0, "512 read");
    dev_close(d);
}
END_TEST

START_TEST(test_format_errors)
{
    Dev *d = dev_open();

    ck_status(admin_status(d, NVME_ADM_FORMAT_NVM, 1, 15, 0),
              NVME_SC_INVALID_FORMAT, "Format to LBA format 15");
    ck_status(admin_status(d, NVME_ADM_FORMAT_NVM, 1, 1 << 5, 0),
              NVME_SC_INVALID_FORMAT, "Format with protection information");
    ck_status(admin_status(d, NVME_ADM_FORMAT_NVM, 7, 0, 0),
              NVME_SC_INVALID_NSID, "Format of namespace 7");
    ck_status(admin_status(d, NVME_ADM_FORMAT_NVM, 1, 7 << 9, 0),
              NVME_SC_INVALID_FIELD, "Format with SES=7");
    dev_close(d);
}
END_TEST

START_TEST(test_sanitize_block_erase)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint8_t w[4096], r[4096], log[512];
    uint16_t st;
    bool done = false;

    nh_pattern(w, sizeof(w), 32);
    ck_status(nh_write(h, d->q, 64, w, sizeof(w)), 0, "write");
    st = admin_status(d, NVME_ADM_SANITIZE, 0, 2, 0);
    ck_status(st, 0, "Sanitize block erase");
    /* in progress: the log says so and I/O is refused */
    ck_status(nh_get_log(h, NVME_LOG_SANITIZE, 0xffffffff, log, 512, 0), 0,
              "sanitize status log");
    if ((le16_at(log, 2) & 7) == 2) {
        ck_status(nh_read(h, d->q, 64, r, sizeof(r)),
                  NVME_SC_SANITIZE_IN_PROGRESS, "read during sanitize");
    }
    for (int i = 0; i < 600 && !done; i++) {
        qt_clock_step(d->qt, 100000000);
        ck_status(nh_get_log(h, NVME_LOG_SANITIZE, 0xffffffff, log, 512, 0),
                  0, "sanitize status log");
        done = (le16_at(log, 2) & 7) == 1;
    }
    ck_assert_msg(done, "sanitize not complete after 60 s of virtual time "
                  "(SSTAT 0x%04x)", le16_at(log, 2));
    ck_assert_msg(le16_at(log, 0) == 0xffff, "SPROG %u at the end",
                  le16_at(log, 0));
    ck_assert_msg(le32_at(log, 4) == 2, "SCDW10 0x%x", le32_at(log, 4));
    ck_status(nh_read(h, d->q, 64, r, sizeof(r)), 0, "read after sanitize");
    ck_assert_msg(r[0] == 0 && !memcmp(r, r + 1, sizeof(r) - 1),
                  "data survived sanitize");
    ck_status(admin_status(d, NVME_ADM_SANITIZE, 0, 3, 0),
              NVME_SC_INVALID_FIELD, "Sanitize overwrite (not in SANICAP)");
    ck_status(admin_status(d, NVME_ADM_SANITIZE, 0, 4, 0),
              NVME_SC_INVALID_FIELD, "Sanitize crypto erase");
    ck_status(admin_status(d, NVME_ADM_SANITIZE, 0, 7, 0),
              NVME_SC_INVALID_FIELD, "Sanitize action 7");
    dev_close(d);
}
END_TEST

/* ---- device self-test -------------------------------------------------- */

static bool self_test_wait(Dev *d, uint8_t *log, int64_t limit_ns)
{
    for (int64_t t = 0; t <= limit_ns; t += 1000000000) {
        ck_status(nh_get_log(d->h, NVME_LOG_SELF_TEST, 0xffffffff, log, 564,
                             0), 0, "self-test log");
        if ((log[0] & 0xf) == 0) {
            return true;
        }
        qt_clock_step(d->qt, 1000000000);
    }
    return false;
}

START_TEST(test_self_test_short)
{
    Dev *d = dev_open();
    uint8_t log[564];

    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 1, 0), 0,
              "short self-test");
    ck_status(nh_get_log(d->h, NVME_LOG_SELF_TEST, 0xffffffff, log, 564, 0),
              0, "self-test log");
    ck_assert_msg((log[0] & 0xf) == 1, "current operation %u, expected 1 "
                  "(short)", log[0] & 0xf);
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 1, 0),
              NVME_SC_SELF_TEST_IN_PROGRESS, "second self-test");
    ck_assert_msg(self_test_wait(d, log, 130ll * 1000000000),
                  "short self-test still running after 2 minutes");
    ck_assert_msg(log[4] == 0x10, "newest result 0x%02x, expected short "
                  "test completed without error", log[4]);
    dev_close(d);
}
END_TEST

START_TEST(test_self_test_extended_and_abort)
{
    Dev *d = dev_open();
    uint8_t log[564], id[4096];
    unsigned edstt;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    edstt = le16_at(id, 316);
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 2, 0), 0,
              "extended self-test");
    qt_clock_step(d->qt, 1000000000);
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 0xf, 0), 0,
              "abort self-test");
    ck_assert(self_test_wait(d, log, 2000000000));
    ck_assert_msg(log[4] == 0x21, "newest result 0x%02x, expected extended "
                  "aborted by command (0x21)", log[4]);
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 2, 0), 0,
              "extended self-test");
    ck_assert_msg(self_test_wait(d, log, (edstt * 60ll + 10) * 1000000000),
                  "extended self-test longer than EDSTT %u min", edstt);
    ck_assert_msg(log[4] == 0x20, "newest result 0x%02x", log[4]);
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 7, 0),
              NVME_SC_INVALID_FIELD, "self-test code 7");
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 5, 1, 0),
              NVME_SC_INVALID_NSID, "self-test of namespace 5");
    dev_close(d);
}
END_TEST

/* ---- doorbell buffer config -------------------------------------------- */

/* Submit on @q updating the shadow doorbells, then the MMIO doorbell. */
static NvmeCqe shadow_cmd(Dev *d, NvmeQueue *q, uint64_t dbs, NvmeSqe *sqe)
{
    NvmeHost *h = d->h;
    NvmeCqe cqe;

    nh_sq_put(h, q, sqe, false);
    qt_writel(d->qt, dbs + 2 * q->qid * 4, q->tail);
    nh_sq_ring(h, q);
    ck_assert_msg(nh_wait(h, q, &cqe, 1000000000), "command %02xh with "
                  "shadow doorbells did not complete", sqe->opc);
    qt_writel(d->qt, dbs + (2 * q->qid + 1) * 4, q->cq->head);
    return cqe;
}

START_TEST(test_doorbell_buffer_config)
{
    Dev *d = dev_launch(NULL, "", "");
    NvmeHost *h = d->h;
    uint64_t dbs, eis, buf;
    uint8_t w[4096], r[4096];
    NvmeQueue *q;
    NvmeSqe sqe;
    NvmeCqe cqe;
    uint32_t ei;

    nh_enable(h, 16);
    nh_probe(h);
    dbs = nh_alloc(h, 4096, 4096);
    eis = nh_alloc(h, 4096, 4096);
    buf = nh_alloc(h, 4096, 4096);

    nh_sqe_init(&sqe, NVME_ADM_DBBUF_CONFIG, 0);
    sqe.prp1 = dbs + 8;
    sqe.prp2 = eis;
    cqe = nh_cmd(h, h->admin, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_INVALID_FIELD, "DBBC with an "
              "unaligned buffer");

    /* as Linux does: DBBC first, then the I/O queues */
    qt_memset(d->qt, eis, 0xee, 4096);
    nh_sqe_init(&sqe, NVME_ADM_DBBUF_CONFIG, 0);
    sqe.prp1 = dbs;
    sqe.prp2 = eis;
    cqe = nh_cmd(h, h->admin, &sqe);
    ck_status(nh_status(&cqe), 0, "Doorbell Buffer Config");
    q = nh_create_ioq(h, 1, 16, -1);
    for (int i = 0; i < 3; i++) {
        nh_pattern(w, sizeof(w), 40 + i);
        qt_memwrite(d->qt, buf, w, 4096);
        nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
        sqe.prp1 = buf;
        sqe.cdw10 = 700 + i * 8;
        sqe.cdw12 = 7;
        cqe = shadow_cmd(d, q, dbs, &sqe);
        ck_status(nh_status(&cqe), 0, "write %d", i);
    }
    ei = qt_readl(d->qt, eis + 2 * 1 * 4);
    ck_assert_msg(ei != 0xeeeeeeee && ei <= 3, "SQ 1 event index 0x%x after "
                  "3 commands", ei);
    /* the shadow tail counts, whatever the MMIO doorbell says */
    nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
    nh_sq_put(h, q, &sqe, false);
    qt_writel(d->qt, dbs + 2 * 1 * 4, q->tail);
    nh_wr32(h, nh_sq_doorbell(h, 1), (q->tail + q->size - 1) % q->size);
    ck_assert_msg(nh_wait(h, q, &cqe, 1000000000), "the shadow SQ tail "
                  "was not used");
    qt_writel(d->qt, dbs + 3 * 4, q->cq->head);
    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.prp1 = buf;
    sqe.cdw10 = 708;
    sqe.cdw12 = 7;
    cqe = shadow_cmd(d, q, dbs, &sqe);
    ck_status(nh_status(&cqe), 0, "read back");
    /* the CQ's event index: the shadow head the device last took */
    nh_wr32(h, nh_cq_doorbell(h, 1), q->cq->head);
    qt_clock_step(d->qt, 1000);
    ei = qt_readl(d->qt, eis + 3 * 4);
    ck_assert_msg(ei == q->cq->head, "CQ 1 event index %u, the host's "
                  "shadow head %u", ei, q->cq->head);
    qt_memread(d->qt, buf, r, sizeof(r));
    nh_pattern(w, sizeof(w), 41);
    ck_assert(memcmp(w, r, sizeof(r)) == 0);
    dev_close(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("admin");
    TCase *tc = dev_tcase(s, "queues");

    tcase_add_test(tc, test_queue_create_delete);
    tcase_add_test(tc, test_queue_limits);
    tcase_add_test(tc, test_queue_errors);
    tcase_add_test(tc, test_delete_sq_aborts_commands);
    tcase_add_test(tc, test_admin_invalid_opcode);
    tc = dev_tcase(s, "logs");
    tcase_add_test(tc, test_log_error_information);
    tcase_add_test(tc, test_log_smart_counters);
    tcase_add_test(tc, test_health_properties);
    tcase_add_test(tc, test_log_smart_media_errors);
    tcase_add_test(tc, test_log_power_on_hours);
    tcase_add_test(tc, test_log_smart_spare_warning);
    tcase_add_test(tc, test_log_firmware_slot);
    tcase_add_test(tc, test_log_commands_effects);
    tcase_add_test(tc, test_effects_log_is_dispatch);
    tcase_add_test(tc, test_log_pages_are_the_list);
    tcase_add_test(tc, test_log_errors);
    tc = dev_tcase(s, "features");
    tcase_add_test(tc, test_features_are_the_list);
    tcase_add_test(tc, test_features_roundtrip);
    tcase_add_test(tc, test_feature_write_atomicity);
    tcase_add_test(tc, test_features_select);
    tcase_add_test(tc, test_feature_vwc);
    tcase_add_test(tc, test_feature_number_of_queues);
    tcase_add_test(tc, test_feature_timestamp);
    tcase_add_loop_test(tc, test_intx_interrupts, 0,
                        G_N_ELEMENTS(intx_configs));
    tcase_add_test(tc, test_msix_interrupts);
    tcase_add_test(tc, test_interrupt_coalescing);
    tc = dev_tcase(s, "events");
    tcase_add_test(tc, test_aer_temperature);
    tcase_add_test(tc, test_aer_spare);
    tcase_add_test(tc, test_aer_reliability);
    tcase_add_test(tc, test_aer_limit);
    tcase_add_test(tc, test_aer_invalid_doorbell);
    tcase_add_test(tc, test_abort);
    tc = dev_tcase(s, "maintenance");
    tcase_add_test(tc, test_firmware_update);
    tcase_add_test(tc, test_firmware_errors);
    tcase_add_test(tc, test_format_4k);
    tcase_add_test(tc, test_format_errors);
    tcase_add_test(tc, test_sanitize_block_erase);
    tcase_add_test(tc, test_self_test_short);
    tcase_add_test(tc, test_self_test_extended_and_abort);
    tcase_add_test(tc, test_doorbell_buffer_config);
    return dev_main(s);
}
