/*
 * Controller reset and shutdown: CC.EN 1 -> 0 with I/O queues live and
 * commands in flight, then a working controller again.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "dev.h"

static void check_io(Dev *d, uint64_t slba, uint64_t seed)
{
    uint8_t w[8192], r[8192];

    nh_pattern(w, sizeof(w), seed);
    ck_status(nh_write(d->h, d->q, slba, w, sizeof(w)), 0, "write");
    ck_status(nh_read(d->h, d->q, slba, r, sizeof(r)), 0, "read");
    ck_assert_msg(memcmp(w, r, sizeof(r)) == 0, "data after reset differs");
}

static const struct {
    const char *devopts;
    const char *extra;
} reset_modes[] = {
    { ",timing=on", "" },
    { ",timing=on,iothread=io0", "-object iothread,id=io0" },
    { ",timing=off,iothread=io0", "-object iothread,id=io0" },
    /* I/O queues 1 and 2 in two IOThreads */
    { ",timing=on" DEV_QMAP2, DEV_IOT2 },
    { ",timing=off,iothread=io0" DEV_QMAP2,
      "-object iothread,id=io0 " DEV_IOT2 },
};

START_TEST(test_reset_with_io_in_flight)
{
    Dev *d = dev_open_full(NULL, reset_modes[_i].devopts,
                           reset_modes[_i].extra);
    NvmeHost *h = d->h;
    NvmeQueue *q2 = nh_create_ioq(h, 2, 32, -1);
    uint64_t buf = nh_alloc(h, 32 * 128 * 1024, 4096);
    uint64_t old_cq1 = d->q->cq->addr, old_cq2 = q2->cq->addr;
    g_autofree uint8_t *snap1 = g_malloc(64 * 16);
    g_autofree uint8_t *snap2 = g_malloc(32 * 16);
    g_autofree uint8_t *after = g_malloc(64 * 16);

    check_io(d, 0, 1);
    /* 24 large writes and reads queued on two SQs, nothing completed */
    for (int i = 0; i < 12; i++) {
        NvmeSqe sqe;

        nh_sqe_init(&sqe, i % 2 ? NVME_CMD_READ : NVME_CMD_WRITE, 1);
        nh_set_prps(h, &sqe, buf + i * 128 * 1024, 128 * 1024);
        sqe.cdw10 = 4096 + i * 256;
        sqe.cdw12 = 255;
        nh_sq_put(h, d->q, &sqe, false);
        sqe.cdw10 = 16384 + i * 256;
        nh_set_prps(h, &sqe, buf + (12 + i) * 128 * 1024, 128 * 1024);
        nh_sq_put(h, q2, &sqe, false);
    }
    nh_sq_ring(h, d->q);
    nh_sq_ring(h, q2);
    qt_clock_step(d->qt, 20000);      /* some are in the model's hands */
    nh_disable(h);                    /* waits for CSTS.RDY = 0 */

    /* after RDY=0 nothing more may be written to the old queues */
    qt_memread(d->qt, old_cq1, snap1, 64 * 16);
    qt_memread(d->qt, old_cq2, snap2, 32 * 16);
    g_usleep(50000);
    qt_clock_step(d->qt, 100000000);
    qt_memread(d->qt, old_cq1, after, 64 * 16);
    ck_assert_msg(memcmp(snap1, after, 64 * 16) == 0, "CQ 1 written after "
                  "the controller reported CSTS.RDY=0");
    qt_memread(d->qt, old_cq2, after, 32 * 16);
    ck_assert_msg(memcmp(snap2, after, 32 * 16) == 0, "CQ 2 written after "
                  "the controller reported CSTS.RDY=0");
    ck_assert_uint_eq(nh_rd32(h, NVME_REG_CSTS) & NVME_CSTS_CFS, 0);

    /* a working controller again; the old queues are gone */
    nh_enable(h, 32);
    ck_status(nh_delete_sq(h, 2), NVME_SC_INVALID_QID, "Delete SQ 2 after "
              "reset");
    d->q = nh_create_ioq(h, 1, 64, -1);
    check_io(d, 100, 2);
    nh_create_ioq(h, 2, 32, -1);
    check_io(d, 200, 3);
    dev_close(d);
}
END_TEST

START_TEST(test_reset_repeated)
{
    Dev *d = dev_open();

    for (int i = 0; i < 5; i++) {
        NvmeSqe sqe;

        /* leave an AER and a flush outstanding each time */
        nh_sqe_init(&sqe, NVME_ADM_ASYNC_EVENT, 0);
        nh_submit(d->h, d->h->admin, &sqe);
        nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
        nh_submit(d->h, d->q, &sqe);
        nh_disable(d->h);
        nh_enable(d->h, 8 + i);
        d->q = nh_create_ioq(d->h, 1, 16, -1);
        check_io(d, i * 16, 10 + i);
    }
    dev_close(d);
}
END_TEST

START_TEST(test_reset_keeps_admin_registers)
{
    Dev *d = dev_open();
    uint32_t aqa = nh_rd32(d->h, NVME_REG_AQA);
    uint64_t asq = nh_rd64(d->h, NVME_REG_ASQ);

    nh_disable(d->h);
    ck_assert_uint_eq(nh_rd32(d->h, NVME_REG_AQA), aqa);
    ck_assert_uint_eq(nh_rd64(d->h, NVME_REG_ASQ), asq);
    ck_assert_uint_eq(nh_rd32(d->h, NVME_REG_CSTS) & NVME_CSTS_RDY, 0);
    dev_close(d);
}
END_TEST

START_TEST(test_shutdown_notification)
{
    Dev *d = dev_open();
    uint8_t w[4096];
    uint32_t cc = nh_rd32(d->h, NVME_REG_CC);

    nh_pattern(w, sizeof(w), 5);
    ck_status(nh_write(d->h, d->q, 0, w, sizeof(w)), 0, "write");
    nh_wr32(d->h, NVME_REG_CC, cc | NVME_CC_SHN_NORMAL);
    ck_assert_msg(nh_wait_csts(d->h, NVME_CSTS_SHST_MASK, NVME_CSTS_SHST_DONE,
                               10000000000ll), "CSTS.SHST never reported "
                  "shutdown complete (CSTS=0x%x)",
                  nh_rd32(d->h, NVME_REG_CSTS));
    nh_disable(d->h);
    nh_enable(d->h, 16);              /* CC.SHN = 0 */
    ck_assert_msg((nh_rd32(d->h, NVME_REG_CSTS) & NVME_CSTS_SHST_MASK) == 0,
                  "CSTS.SHST still set after a reset and CC.SHN=0");
    d->q = nh_create_ioq(d->h, 1, 16, -1);
    check_io(d, 64, 6);
    dev_close(d);
}
END_TEST

START_TEST(test_enable_with_bad_settings)
{
    Dev *d = dev_launch(NULL, "", "");
    uint32_t csts;

    /* 64 KiB memory pages: above CAP.MPSMAX */
    csts = nh_try_enable(d->h, 16, NVME_CC_DEFAULT | NVME_CC_MPS(4) |
                         NVME_CC_EN);
    ck_assert_msg(!(csts & NVME_CSTS_RDY) || (csts & NVME_CSTS_CFS),
                  "controller ready with CC.MPS above MPSMAX (CSTS 0x%x)",
                  csts);
    nh_wr32(d->h, NVME_REG_CC, 0);
    ck_assert(nh_wait_csts(d->h, NVME_CSTS_RDY | NVME_CSTS_CFS, 0,
                           10000000000ll));
    /* an I/O SQ entry size of 32 bytes */
    csts = nh_try_enable(d->h, 16, NVME_CC_IOSQES(5) | NVME_CC_IOCQES(4) |
                         NVME_CC_EN);
    if (csts & NVME_CSTS_RDY) {
        ck_status(nh_create_cq(d->h, 1, 16, -1), 0, "Create CQ");
        ck_status(nh_create_sq(d->h, 1, 16, 1), NVME_SC_INVALID_FIELD,
                  "Create SQ with CC.IOSQES=5");
    }
    nh_wr32(d->h, NVME_REG_CC, 0);
    ck_assert(nh_wait_csts(d->h, NVME_CSTS_RDY | NVME_CSTS_CFS, 0,
                           10000000000ll));
    /* and a good enable works */
    nh_enable(d->h, 16);
    nh_probe(d->h);
    d->q = nh_create_ioq(d->h, 1, 16, -1);
    check_io(d, 0, 7);
    dev_close(d);
}
END_TEST

START_TEST(test_reset_during_maintenance)
{
    Dev *d = dev_open();
    NvmeSqe sqe;
    NvmeCqe cqe;

    /* an extended self-test, then a reset: it is aborted by the reset */
    nh_sqe_init(&sqe, NVME_ADM_DEV_SELF_TEST, 0xffffffff);
    sqe.cdw10 = 2;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), 0, "extended self-test");
    nh_disable(d->h);
    nh_enable(d->h, 16);
    {
        uint8_t log[564];

        ck_status(nh_get_log(d->h, NVME_LOG_SELF_TEST, 0xffffffff, log, 564,
                             0), 0, "self-test log");
        ck_assert_msg((log[0] & 0xf) == 0 && (log[4] & 0xf) == 2,
                      "self-test after reset: current %u, newest result "
                      "0x%02x (expected aborted by a controller reset)",
                      log[0] & 0xf, log[4]);
    }
    d->q = nh_create_ioq(d->h, 1, 16, -1);
    check_io(d, 0, 8);
    dev_close(d);
}
END_TEST

START_TEST(test_quit_with_io_in_flight)
{
    Dev *d = dev_open_full(NULL, reset_modes[_i].devopts,
                           reset_modes[_i].extra);
    uint64_t buf = nh_alloc(d->h, 128 * 1024, 4096);

    /* QEMU must exit cleanly with commands in every state */
    for (int i = 0; i < 48; i++) {
        NvmeSqe sqe;

        nh_sqe_init(&sqe, i % 3 ? NVME_CMD_WRITE : NVME_CMD_READ, 1);
        nh_set_prps(d->h, &sqe, buf, 128 * 1024);
        sqe.cdw10 = i * 256;
        sqe.cdw12 = 255;
        nh_sq_put(d->h, d->q, &sqe, false);
        if (i % 16 == 15) {
            nh_sq_ring(d->h, d->q);
            qt_clock_step(d->qt, 30000);
        }
    }
    dev_close(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reset");
    TCase *tc = dev_tcase(s, "reset");

    tcase_add_loop_test(tc, test_reset_with_io_in_flight, 0,
                        G_N_ELEMENTS(reset_modes));
    tcase_add_loop_test(tc, test_quit_with_io_in_flight, 0,
                        G_N_ELEMENTS(reset_modes));
    tcase_add_test(tc, test_reset_repeated);
    tcase_add_test(tc, test_reset_keeps_admin_registers);
    tcase_add_test(tc, test_shutdown_notification);
    tcase_add_test(tc, test_enable_with_bad_settings);
    tcase_add_test(tc, test_reset_during_maintenance);
    return dev_main(s);
}
