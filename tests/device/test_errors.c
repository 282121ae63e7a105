/*
 * Hostile input: bad register and doorbell accesses, malformed commands,
 * queues in memory that does not exist, bad properties.  Nothing may
 * crash, hang or wedge QEMU, and the controller must keep working.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "dev.h"

static void check_alive(Dev *d)
{
    uint8_t w[4096], r[4096];

    ck_assert_msg(qt_alive(d->qt), "QEMU died");
    ck_assert_msg(nh_rd32(d->h, NVME_REG_VS) == 0x00010300, "VS unreadable");
    ck_status(nh_identify(d->h, 1, 0, NULL), 0, "Identify afterwards");
    nh_pattern(w, sizeof(w), 77);
    ck_status(nh_write(d->h, d->q, 900, w, sizeof(w)), 0, "write afterwards");
    ck_status(nh_read(d->h, d->q, 900, r, sizeof(r)), 0, "read afterwards");
    ck_assert(memcmp(w, r, sizeof(r)) == 0);
}

START_TEST(test_bad_register_accesses)
{
    Dev *d = dev_open();
    QTest *qt = d->qt;
    uint64_t bar = d->h->bar;
    g_autofree char *log = NULL;
    uint32_t cc = nh_rd32(d->h, NVME_REG_CC);

    /* sub-dword and misaligned reads and writes */
    qt_readb(qt, bar + 0x01);
    qt_readw(qt, bar + 0x0a);
    qt_readl(qt, bar + 0x02);
    qt_readq(qt, bar + 0x1c);
    qt_writeb(qt, bar + NVME_REG_CC, 0);
    qt_writew(qt, bar + NVME_REG_CC + 2, 0xffff);
    qt_writel(qt, bar + NVME_REG_CC + 1, 0);
    /* read-only and reserved registers */
    qt_writeq(qt, bar + NVME_REG_CAP, ~0ull);
    qt_writel(qt, bar + NVME_REG_VS, 0x20000);
    qt_writel(qt, bar + NVME_REG_CSTS, ~0u);
    qt_writel(qt, bar + NVME_REG_NSSR, 0x4e564d65);
    qt_writel(qt, bar + 0x100, 0xdeadbeef);
    qt_writel(qt, bar + 0xffc, 0xdeadbeef);
    qt_readl(qt, bar + 0xf00);
    /* admin queue registers while enabled */
    qt_writel(qt, bar + NVME_REG_AQA, 0);
    qt_writeq(qt, bar + NVME_REG_ASQ, 0x1234000);
    /* interrupt mask registers while MSI-X is off: allowed, undo it */
    qt_writel(qt, bar + NVME_REG_INTMS, 1);
    qt_writel(qt, bar + NVME_REG_INTMC, 1);
    /* doorbells: reads, odd sizes, far beyond the queues */
    qt_readl(qt, bar + 0x1000);
    qt_readq(qt, bar + 0x1008);
    qt_writeb(qt, bar + 0x1000, 1);
    qt_writew(qt, bar + 0x1004, 1);
    qt_writeq(qt, bar + 0x1000, 0);
    qt_writel(qt, bar + 0x1ffc, 5);
    qt_writel(qt, bar + 0x1002, 5);
    /* the MSI-X table and PBA with odd accesses */
    qt_readb(qt, bar + 0x2003);
    qt_writel(qt, bar + 0x4000, ~0u);

    ck_assert_msg(nh_rd32(d->h, NVME_REG_CC) == cc, "CC changed: 0x%x -> "
                  "0x%x", cc, nh_rd32(d->h, NVME_REG_CC));
    ck_assert_msg(nh_rd64(d->h, NVME_REG_CAP) == d->h->cap, "CAP changed");
    ck_assert_msg(nh_rd32(d->h, NVME_REG_AQA) != 0, "AQA written while "
                  "enabled");
    check_alive(d);
    log = qt_guest_log(d->qt);
    ck_assert_msg(strstr(log, "dapustor-h3100"), "no guest error logged "
                  "for bad register accesses; log:\n%s", log);
    dev_close(d);
}
END_TEST

START_TEST(test_doorbell_abuse)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;

    /* tails and heads beyond the queue, CQ head never produced */
    nh_wr32(h, nh_sq_doorbell(h, 1), 1000);
    nh_wr32(h, nh_cq_doorbell(h, 1), 1000);
    nh_wr32(h, nh_cq_doorbell(h, 1), 5);
    nh_wr32(h, nh_sq_doorbell(h, 0), 0xffff);
    nh_wr32(h, nh_cq_doorbell(h, 0), 0xffff);
    nh_wr32(h, nh_sq_doorbell(h, 200), 1);
    qt_clock_step(d->qt, 10000000);
    ck_assert_msg(qt_alive(d->qt), "QEMU died");
    /* the controller may have failed (CSTS.CFS): a reset recovers */
    nh_disable(h);
    nh_enable(h, 16);
    d->q = nh_create_ioq(h, 1, 16, -1);
    check_alive(d);
    dev_close(d);
}
END_TEST

START_TEST(test_cq_full)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    NvmeQueue *q;
    NvmeCqe cqe;
    int got = 0;

    /* a 2-entry CQ holds one completion: 6 flushes must wait their turn */
    ck_status(nh_create_cq(h, 2, 2, -1), 0, "Create CQ 2 of 2 entries");
    ck_status(nh_create_sq(h, 2, 8, 2), 0, "Create SQ 2");
    q = h->sqs[2];
    for (int i = 0; i < 6; i++) {
        NvmeSqe sqe;

        nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
        nh_sq_put(h, q, &sqe, false);
    }
    nh_sq_ring(h, q);
    qt_clock_step(d->qt, 10000000);
    {
        NvmeCqe e[2];

        qt_memread(d->qt, q->cq->addr, e, sizeof(e));
        ck_assert_msg(!((e[1].status & 1) == 1 && (e[0].status & 1) == 1),
                      "both entries of a 2-entry CQ filled: the CQ "
                      "overflowed");
    }
    while (got < 6 && nh_wait(h, q, &cqe, 100000000)) {
        ck_status(nh_status(&cqe), 0, "flush %d", got);
        got++;
    }
    ck_assert_msg(got == 6, "%d of 6 completions through a full CQ", got);
    check_alive(d);
    dev_close(d);
}
END_TEST

/* After hostile input the controller may have failed (CSTS.CFS): reset. */
static void recover(Dev *d)
{
    ck_assert_msg(qt_alive(d->qt), "QEMU died");
    if (nh_rd32(d->h, NVME_REG_CSTS) & NVME_CSTS_CFS) {
        nh_disable(d->h);
        nh_enable(d->h, 16);
        d->q = nh_create_ioq(d->h, 1, 16, -1);
    }
}

START_TEST(test_queues_in_missing_memory)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    NvmeSqe sqe;
    NvmeCqe cqe;

    /* an SQ in memory that does not exist, rung */
    nh_sqe_init(&sqe, NVME_ADM_CREATE_SQ, 0);
    sqe.prp1 = 1ull << 50;
    sqe.cdw10 = 2 | (15 << 16);
    sqe.cdw11 = 1 | (1 << 16);
    cqe = nh_cmd(h, h->admin, &sqe);
    if (nh_status(&cqe) == 0) {
        nh_wr32(h, nh_sq_doorbell(h, 2), 3);
        qt_clock_step(d->qt, 10000000);
    }
    recover(d);
    /* a CQ in memory that does not exist, with a command for it */
    nh_sqe_init(&sqe, NVME_ADM_CREATE_CQ, 0);
    sqe.prp1 = 1ull << 50;
    sqe.cdw10 = 3 | (15 << 16);
    sqe.cdw11 = 1;
    cqe = nh_cmd(h, h->admin, &sqe);
    if (nh_status(&cqe) == 0) {
        uint64_t sq = nh_alloc(h, 16 * 64, 4096);
        NvmeSqe flush;

        nh_sqe_init(&sqe, NVME_ADM_CREATE_SQ, 0);
        sqe.prp1 = sq;
        sqe.cdw10 = 3 | (15 << 16);
        sqe.cdw11 = 1 | (3 << 16);
        cqe = nh_cmd(h, h->admin, &sqe);
        ck_status(nh_status(&cqe), 0, "SQ 3 on the bad CQ");
        nh_sqe_init(&flush, NVME_CMD_FLUSH, 1);
        qt_memwrite(d->qt, sq, &flush, sizeof(flush));
        nh_wr32(h, nh_sq_doorbell(h, 3), 1);
        qt_clock_step(d->qt, 10000000);
    }
    recover(d);
    check_alive(d);
    dev_close(d);
}
END_TEST

START_TEST(test_sgl_segment_loop)
{
    Dev *d = dev_open();
    uint64_t seg = nh_alloc(d->h, 4096, 4096);
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    NvmeSglDesc s[2] = {
        { .addr = buf, .len = 256, .type = NVME_SGL_DATA_BLOCK },
        { .addr = seg, .len = 32, .type = NVME_SGL_SEGMENT },
    };
    NvmeSglDesc first = { .addr = seg, .len = 32, .type = NVME_SGL_SEGMENT };
    NvmeSqe sqe;
    NvmeCqe cqe;

    /* a segment that points at itself: must end with an error */
    qt_memwrite(d->qt, seg, s, sizeof(s));
    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.flags = NVME_PSDT_SGL;
    memcpy(&sqe.prp1, &first, 16);
    sqe.cdw12 = 255;                  /* 128 KiB: never satisfied */
    cqe = nh_cmd(d->h, d->q, &sqe);
    ck_assert_msg(nh_status(&cqe) != 0, "an SGL segment loop completed "
                  "successfully");
    /* an empty last segment */
    first.type = NVME_SGL_LAST_SEG;
    first.len = 0;
    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.flags = NVME_PSDT_SGL;
    memcpy(&sqe.prp1, &first, 16);
    cqe = nh_cmd(d->h, d->q, &sqe);
    ck_assert_msg(nh_status(&cqe) != 0, "an empty SGL segment completed "
                  "successfully");
    check_alive(d);
    dev_close(d);
}
END_TEST

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

START_TEST(test_fuzz_io_commands)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint64_t area = nh_alloc(h, 1024 * 1024, 4096);
    static const uint8_t ops[] = { 0x00, 0x01, 0x02, 0x04, 0x05, 0x08, 0x09 };
    uint64_t x = 0x1234567 + _i;

    for (int i = 0; i < 150; i++) {
        NvmeSqe sqe;
        NvmeCqe cqe;
        uint64_t r = rnd(&x);

        nh_sqe_init(&sqe, r % 8 ? ops[r % sizeof(ops)] : (uint8_t)(r >> 8),
                    rnd(&x) % 4 ? 1 : (uint32_t)rnd(&x));
        sqe.flags = rnd(&x) % 4 ? 0 : (uint8_t)rnd(&x);
        /* data pointers inside the scratch area, any alignment */
        sqe.prp1 = area + rnd(&x) % (512 * 1024);
        sqe.prp2 = area + (rnd(&x) % (512 * 1024) & (rnd(&x) % 2 ? ~0xfffull
                                                               : ~0ull));
        sqe.cdw10 = rnd(&x) % 4 ? rnd(&x) % DEV_NS_LBAS : (uint32_t)rnd(&x);
        sqe.cdw11 = rnd(&x) % 4 ? 0 : (uint32_t)rnd(&x);
        sqe.cdw12 = rnd(&x) % 2 ? rnd(&x) % 64 : (uint32_t)rnd(&x);
        sqe.cdw13 = (uint32_t)rnd(&x);
        sqe.cdw14 = (uint32_t)rnd(&x);
        sqe.cdw15 = (uint32_t)rnd(&x);
        if (sqe.opc == NVME_CMD_DSM) {
            sqe.cdw10 &= 0xff;
            sqe.prp1 &= ~3ull;
        }
        cqe = nh_cmd(h, d->q, &sqe);
        (void)cqe;
    }
    check_alive(d);
    dev_close(d);
}
END_TEST

START_TEST(test_fuzz_admin_commands)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint64_t area = nh_alloc(h, 256 * 1024, 4096);
    static const uint8_t ops[] = {
        0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x08, 0x09, 0x0a, 0x10, 0x11,
        0x14,
    };
    uint64_t x = 0xfeedbeef + _i;

    for (int i = 0; i < 120; i++) {
        NvmeSqe sqe;
        uint64_t r = rnd(&x);
        uint8_t opc = r % 8 ? ops[r % sizeof(ops)] : (uint8_t)(r >> 8);

        /*
         * Never AER (it waits), format or sanitize (slow), nor doorbell
         * buffer config (the host would then have to use shadow doorbells)
         */
        if (opc == 0x0c || opc == 0x80 || opc == 0x84 || opc == 0x7c) {
            opc = 0x06;
        }
        nh_sqe_init(&sqe, opc, rnd(&x) % 2 ? 0 : (uint32_t)rnd(&x) % 4);
        sqe.prp1 = area + rnd(&x) % (128 * 1024);
        sqe.prp2 = area + (rnd(&x) % (128 * 1024) & ~0xfffull);
        sqe.cdw10 = (uint32_t)rnd(&x);
        sqe.cdw11 = (uint32_t)rnd(&x);
        sqe.cdw12 = (uint32_t)rnd(&x);
        sqe.cdw13 = (uint32_t)rnd(&x);
        if (opc == 0x00 || opc == 0x04) {
            sqe.cdw10 = 2 + rnd(&x) % 8;      /* keep queue 1 */
        }
        if (opc == 0x09 && (sqe.cdw10 & 0xff) == NVME_FEAT_NUM_QUEUES) {
            sqe.cdw10 = NVME_FEAT_ARBITRATION;
        }
        nh_cmd(h, h->admin, &sqe);
    }
    ck_assert_msg(qt_alive(d->qt), "QEMU died");
    nh_probe(h);
    check_alive(d);
    dev_close(d);
}
END_TEST

static const struct {
    const char *opts;
    const char *word;
} bad_props[] = {
    { ",capacity=9T", "capacity" },
    { ",model=h9999", "model" },
    { ",form-factor=m2", "form-factor" },
    { ",model-params=no_such_param=1", "model-params" },
    { ",model-params=user_bytes=12345", "user_bytes" },
    { ",firmware=TOOLONGREVISION", "firmware" },
    { ",serial=ABCDEFGHIJKLMNOPQRSTUVWXYZ", "serial" },
    { ",serial=", "serial" },
    { ",nguid=0011", "nguid" },
    { ",nguid=00112233445566778899aabbccddeeffee", "nguid" },
    { ",nguid=0011223344556677889900aabbccddxx", "nguid" },
    { ",max-ioqpairs=0", "max-ioqpairs" },
    { ",mdts=0", "mdts" },
    { ",lba-size=1000", "lba-size" },
    { ",completion-window=100001", "completion-window" },
    { ",model-params=user_bytes=1G", "drive" },   /* 256 MiB image */
    { ",fault=explode", "fault" },
    { ",timing=off,fault=delay,,ms=5", "timing=on" },
};

START_TEST(test_bad_property)
{
    g_autofree char *img = qt_backing_file("bad.img", DEV_NS_BYTES, "raw");
    g_autofree char *err = NULL;
    g_auto(GStrv) lines = NULL;
    unsigned n = 0;
    bool failed;

    failed = qt_start_fails(&err, "-drive file=%s,if=none,id=d0,format=raw "
                            "-device dapustor-h3100,drive=d0,model-params="
                            "user_bytes=256M%s", img, bad_props[_i].opts);
    ck_assert_msg(failed, "QEMU started (or hung) with '%s'; stderr:\n%s",
                  bad_props[_i].opts, err);
    lines = g_strsplit(err, "\n", 0);
    for (unsigned i = 0; lines[i]; i++) {
        n += *g_strstrip(lines[i]) != 0;
    }
    ck_assert_msg(n == 1, "'%s': %u lines of errors, expected one:\n%s",
                  bad_props[_i].opts, n, err);
    ck_assert_msg(strstr(err, bad_props[_i].word) ||
                  strstr(err, "drive"), "'%s': the error does not name "
                  "'%s': %s", bad_props[_i].opts, bad_props[_i].word, err);
}
END_TEST

/* iothread-vq-mapping's refusals: one line naming what is wrong */
static const struct {
    const char *map;
    const char *word;
} bad_qmaps[] = {
    { "[{\"iothread\": \"nope\"}]", "no IOThread 'nope'" },
    { "[{\"iothread\": \"io1\", \"vqs\": [1, 1]}]", "qid 1 is mapped twice" },
    { "[{\"iothread\": \"io1\", \"vqs\": [2]}, "
      "{\"iothread\": \"io2\", \"vqs\": [2]}]", "qid 2 is mapped twice" },
    { "[{\"iothread\": \"io1\", \"vqs\": [9]}]", "beyond max-ioqpairs=8" },
    { "[{\"iothread\": \"io1\", \"vqs\": [0]}]", "admin queue" },
    { "[{\"iothread\": \"io1\"}, {\"iothread\": \"io1\"}]",
      "'io1' is named twice" },
    { "[{\"iothread\": \"io1\", \"vqs\": [1]}, {\"iothread\": \"io2\"}]",
      "every entry or in none" },
};

START_TEST(test_bad_qmap)
{
    g_autofree char *img = qt_backing_file("bad.img", DEV_NS_BYTES, "raw");
    g_autofree char *opts = g_strdup_printf(
        ",model-params=user_bytes=256M,max-ioqpairs=8,iothread-vq-mapping=%s",
        bad_qmaps[_i].map);
    g_autofree char *dev = dev_device_arg(opts);
    g_autofree char *err = NULL;
    g_auto(GStrv) lines = NULL;
    unsigned n = 0;

    ck_assert_msg(qt_start_fails(&err, "-drive file=%s,if=none,id=d0,"
                                 "format=raw -device %s " DEV_IOT2, img, dev),
                  "QEMU started (or hung) with %s; stderr:\n%s",
                  bad_qmaps[_i].map, err);
    lines = g_strsplit(err, "\n", 0);
    for (unsigned i = 0; lines[i]; i++) {
        n += *g_strstrip(lines[i]) != 0;
    }
    ck_assert_msg(n == 1 && strstr(err, bad_qmaps[_i].word),
                  "%s: expected one line with '%s':\n%s", bad_qmaps[_i].map,
                  bad_qmaps[_i].word, err);
}
END_TEST

START_TEST(test_no_drive)
{
    g_autofree char *err = NULL;

    ck_assert_msg(qt_start_fails(&err, "-device dapustor-h3100"),
                  "QEMU started without drive=: %s", err);
    ck_assert_msg(strstr(err, "drive"), "error does not mention the drive: "
                  "%s", err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("errors");
    TCase *tc = dev_tcase(s, "hostile");

    tcase_add_test(tc, test_bad_register_accesses);
    tcase_add_test(tc, test_doorbell_abuse);
    tcase_add_test(tc, test_cq_full);
    tcase_add_test(tc, test_queues_in_missing_memory);
    tcase_add_test(tc, test_sgl_segment_loop);
    tcase_add_loop_test(tc, test_fuzz_io_commands, 0, 2);
    tcase_add_loop_test(tc, test_fuzz_admin_commands, 0, 2);
    tc = dev_tcase(s, "properties");
    tcase_add_loop_test(tc, test_bad_property, 0, G_N_ELEMENTS(bad_props));
    tcase_add_loop_test(tc, test_bad_qmap, 0, G_N_ELEMENTS(bad_qmaps));
    tcase_add_test(tc, test_no_drive);
    return dev_main(s);
}
