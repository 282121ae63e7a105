/*
 * The admin suite's "events" case (tests/device/test_admin.c runs it).
 * Asynchronous events (temperature, spare, reliability, the limit, an
 * invalid doorbell) and Abort.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "test_admin.h"

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

#define AEC_LBA_STATUS      (1u << 13)
#define LSIPI               10              /* 100 ms units */
#define MS                  1000000ll       /* virtual ns */

static uint16_t write_uncor(Dev *d, uint64_t slba, uint32_t nlb)
{
    return nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, slba, nlb, 0, 0, NULL);
}

static uint16_t read_lsi_log(Dev *d, bool rae)
{
    uint8_t log[512];

    return rae ? nh_get_log_rae(d->h, NVME_LOG_LBA_STATUS, 0xffffffff, log,
                                sizeof(log), 0)
               : nh_get_log(d->h, NVME_LOG_LBA_STATUS, 0xffffffff, log,
                            sizeof(log), 0);
}

static void assert_lsi_event(const NvmeCqe *cqe)
{
    ck_status(nh_status(cqe), 0, "AER");
    ck_assert_msg((cqe->dw0 & 7) == 2 && ((cqe->dw0 >> 8) & 0xff) == 5 &&
                  ((cqe->dw0 >> 16) & 0xff) == NVME_LOG_LBA_STATUS,
                  "event 0x%08x: expected Notice, LBA Status Information "
                  "Alert, log 0Eh", cqe->dw0);
}

/*
 * The LBA Status Information Alert: once LSIRI has passed since log 0Eh
 * was read with RAE clear, once for any number of Write Uncorrectables
 * until the log is read, not for LBAs already tracked, not while feature
 * 0Bh's bit 13 is clear; reading the log with RAE clear drops the one
 * waiting.
 */
START_TEST(test_aer_lba_status)
{
    Dev *d = dev_open();
    uint16_t cid;
    NvmeCqe cqe;

    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, AEC_LBA_STATUS,
                              false, NULL), 0, "enable LBA status notices");
    cid = submit_aer(d);
    ck_status(read_lsi_log(d, false), 0, "log 0Eh: LSIRI starts");
    ck_status(write_uncor(d, 100, 4), 0, "Write Uncorrectable 100+4");
    ck_assert_msg(!nh_wait_cid(d->h, d->h->admin, cid, &cqe, 500 * MS),
                  "alert within LSIRI (1 s) of the log's read");
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 1000 * MS),
                  "no alert 1.5 s after LBAs became tracked");
    assert_lsi_event(&cqe);

    /* reported: more LBAs wait for the log; RAE set does not clear it */
    ck_status(write_uncor(d, 200, 10), 0, "Write Uncorrectable 200+10");
    cid = submit_aer(d);
    ck_status(read_lsi_log(d, true), 0, "log 0Eh, RAE set");
    ck_assert_msg(!nh_wait_cid(d->h, d->h->admin, cid, &cqe, 2000 * MS),
                  "a second alert before log 0Eh was read with RAE clear");
    /* the read clears the alert waiting too: the host has seen its LBAs */
    ck_status(read_lsi_log(d, false), 0, "log 0Eh");
    ck_assert_msg(!nh_wait_cid(d->h, d->h->admin, cid, &cqe, 2000 * MS),
                  "an alert for LBAs the log already showed");

    /* LSIRI 0: at once; LBAs already tracked are not news */
    ck_status(nh_set_features(d->h, NVME_FEAT_LBA_STATUS_ATTR, 0, false,
                              NULL), 0, "LSIRI 0");
    ck_status(write_uncor(d, 201, 2), 0, "Write Uncorrectable 201+2");
    ck_assert_msg(!nh_wait_cid(d->h, d->h->admin, cid, &cqe, 200 * MS),
                  "an alert for LBAs already tracked");
    ck_status(write_uncor(d, 300, 1), 0, "Write Uncorrectable 300");
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100 * MS),
                  "no alert within 100 ms with LSIRI 0");
    assert_lsi_event(&cqe);

    /* notices off: none, however many LBAs */
    ck_status(read_lsi_log(d, false), 0, "log 0Eh");
    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, 0, false, NULL),
              0, "disable notices");
    cid = submit_aer(d);
    ck_status(write_uncor(d, 400, 1), 0, "Write Uncorrectable 400");
    ck_assert_msg(!nh_wait_cid(d->h, d->h->admin, cid, &cqe, 2000 * MS),
                  "an alert with feature 0Bh bit 13 clear");
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

void admin_events_tcase(Suite *s)
{
    TCase *tc = dev_tcase(s, "events");

    tcase_add_test(tc, test_aer_temperature);
    tcase_add_test(tc, test_aer_spare);
    tcase_add_test(tc, test_aer_reliability);
    tcase_add_test(tc, test_aer_lba_status);
    tcase_add_test(tc, test_aer_limit);
    tcase_add_test(tc, test_aer_invalid_doorbell);
    tcase_add_test(tc, test_abort);
}
