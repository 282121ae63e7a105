/*
 * The admin suite's "logs" case (tests/device/test_admin.c runs it).
 * Log pages: error information, SMART / health (and the drive's QOM
 * health properties), firmware slot, commands supported and effects (the
 * dispatch table's own list), the list of pages, and their errors.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "test_admin.h"

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
 * namespace attribute notice, 0Eh by OACS Get LBA Status and OAES's LBA
 * status information notice.
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
        { false, 0x0e, "OACS Get LBA Status" },
        { false, 0x0e, "OAES LBA status information notices" },
    };

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    promised[3].claimed = le32_at(id, 92) & (1 << 8);
    promised[4].claimed = id[261] & (1 << 1);
    promised[5].claimed = le16_at(id, 256) & (1 << 4);
    promised[6].claimed = promised[7].claimed = id[261] & (1 << 3);
    promised[8].claimed = le32_at(id, 328) & 7;
    promised[9].claimed = le16_at(id, 256) & (1 << 9);
    promised[10].claimed = le32_at(id, 92) & (1 << 13);
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

void admin_logs_tcase(Suite *s)
{
    TCase *tc = dev_tcase(s, "logs");

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
}
