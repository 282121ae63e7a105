/*
 * The admin suite's "features" case (tests/device/test_admin.c runs it).
 * Features: the list, round trips, select, volatile write cache, number
 * of queues, timestamp; and interrupts (MSI-X, coalescing, INTx).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "test_admin.h"

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
 * makes mandatory, and those Identify promises (ONCS timestamp, HCTMA,
 * OACS Get LBA Status), are among them.
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
        { 256, 9, 0x15 },               /* OACS Get LBA Status */
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

/*
 * LBA Status Information Attributes (15h): LSIPI the drive's (1 s),
 * LSIRI the host's, default LSIPI; Set answers both; a controller reset
 * restores the default.
 */
START_TEST(test_feature_lba_status_attr)
{
    Dev *d = dev_open();
    uint32_t dw0 = 0;

    ck_status(nh_get_features(d->h, NVME_FEAT_LBA_STATUS_ATTR, 0, 0, &dw0),
              0, "Get Features 15h");
    ck_assert_msg(dw0 == (10u << 16 | 10), "15h: 0x%08x, expected LSIPI 10 "
                  "LSIRI 10", dw0);
    ck_status(nh_set_features(d->h, NVME_FEAT_LBA_STATUS_ATTR,
                              0xabcd0000 | 600, false, &dw0), 0,
              "Set Features 15h, LSIRI 600");
    ck_assert_msg(dw0 == (10u << 16 | 600), "Set Features 15h answered "
                  "0x%08x: LSIPI is the drive's", dw0);
    ck_status(nh_get_features(d->h, NVME_FEAT_LBA_STATUS_ATTR, 0, 0, &dw0),
              0, "Get Features 15h");
    ck_assert_uint_eq(dw0, 10u << 16 | 600);
    ck_status(nh_get_features(d->h, NVME_FEAT_LBA_STATUS_ATTR, 1, 0, &dw0),
              0, "Get Features 15h, default");
    ck_assert_uint_eq(dw0, 10u << 16 | 10);
    ck_status(nh_get_features(d->h, NVME_FEAT_LBA_STATUS_ATTR, 3, 0, &dw0),
              0, "Get Features 15h, capabilities");
    ck_assert_uint_eq(dw0, 4);                  /* changeable */
    ck_status(nh_set_features(d->h, NVME_FEAT_LBA_STATUS_ATTR, 5, true,
                              NULL), NVME_SC_FEAT_NOT_SAVEABLE,
              "Set Features 15h, save");
    nh_disable(d->h);
    nh_enable(d->h, 16);
    d->q = nh_create_ioq(d->h, 1, 16, -1);
    ck_status(nh_get_features(d->h, NVME_FEAT_LBA_STATUS_ATTR, 0, 0, &dw0),
              0, "Get Features 15h after a reset");
    ck_assert_uint_eq(dw0, 10u << 16 | 10);
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

void admin_features_tcase(Suite *s)
{
    TCase *tc = dev_tcase(s, "features");

    tcase_add_test(tc, test_features_are_the_list);
    tcase_add_test(tc, test_features_roundtrip);
    tcase_add_test(tc, test_feature_lba_status_attr);
    tcase_add_test(tc, test_feature_write_atomicity);
    tcase_add_test(tc, test_features_select);
    tcase_add_test(tc, test_feature_vwc);
    tcase_add_test(tc, test_feature_number_of_queues);
    tcase_add_test(tc, test_feature_timestamp);
    tcase_add_loop_test(tc, test_intx_interrupts, 0,
                        G_N_ELEMENTS(intx_configs));
    tcase_add_test(tc, test_msix_interrupts);
    tcase_add_test(tc, test_interrupt_coalescing);
}
