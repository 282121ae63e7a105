/*
 * The timing path: completions are posted at the drive model's time on
 * the virtual clock, never earlier; timing=off completes at once.
 *
 * The expectation comes from the model library itself: a fresh model of
 * the same profile and model-params replays what the test did to the
 * device, at the same virtual times, and says when the read completes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "dev.h"

#define TIMING_PROFILE  "h3100-3.2t"
#define TIMING_PARAMS   DEV_PARAMS

typedef struct Replay {
    H3100Op op;
    uint64_t offset;
    uint64_t length;
    uint64_t at;                      /* virtual ns of the doorbell */
} Replay;

/* Submit one command at the current virtual time and wait for it. */
static void timed_cmd(Dev *d, uint8_t opc, uint64_t slba, uint32_t nlb,
                      uint64_t buf, Replay *rec)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, opc, 1);
    nh_set_prps(d->h, &sqe, buf, (uint64_t)nlb * 512);
    sqe.cdw10 = (uint32_t)slba;
    sqe.cdw12 = nlb - 1;
    rec->op = opc == NVME_CMD_WRITE ? H3100_OP_WRITE : H3100_OP_READ;
    rec->offset = slba * 512;
    rec->length = (uint64_t)nlb * 512;
    rec->at = qt_clock_now(d->qt);
    nh_submit(d->h, d->q, &sqe);
    g_usleep(20000);                  /* the device fetches it at rec->at */
    ck_assert_msg(nh_wait(d->h, d->q, &cqe, 1000000000), "command %02xh "
                  "did not complete", opc);
    ck_status(nh_status(&cqe), 0, "timed command %02xh", opc);
}

/*
 * Expected latency of the last replayed command; the smaller of a replay
 * with and without the model's idle work before each command (the device
 * may run idle reclaim between commands).
 */
static uint64_t model_latency(const Replay *r, int n, bool timing)
{
    uint64_t best = UINT64_MAX;

    for (int idle = 0; idle < 2; idle++) {
        H3100Model *m = dev_model_new(TIMING_PROFILE, TIMING_PARAMS, timing);
        H3100Result res = { 0 };

        for (int i = 0; i < n; i++) {
            H3100Io io = {
                .op = r[i].op, .offset = r[i].offset, .length = r[i].length,
            };

            if (idle) {
                h3100_model_idle(m, r[i].at);
            }
            res = h3100_model_submit(m, r[i].at, &io);
            ck_assert_int_eq(res.status, H3100_OK);
        }
        best = MIN(best, res.done_ns - r[n - 1].at);
        h3100_model_free(m);
    }
    return best;
}

/* Write LBA 0, push 2 MiB after it, let it settle: a NAND read next. */
static int prepare_history(Dev *d, Replay *rec)
{
    uint64_t buf = nh_alloc(d->h, 128 * 1024, 4096);
    int n = 0;

    qt_memset(d->qt, buf, 0x5a, 128 * 1024);
    qt_clock_step(d->qt, 1000000);
    timed_cmd(d, NVME_CMD_WRITE, 0, 8, buf, &rec[n++]);
    for (int i = 0; i < 16; i++) {
        qt_clock_step(d->qt, 1000);
        timed_cmd(d, NVME_CMD_WRITE, 8192 + i * 256, 256, buf, &rec[n++]);
    }
    qt_clock_step(d->qt, 50000000);
    return n;
}

START_TEST(test_timing_on_qd1_read)
{
    Dev *d = dev_open_full(TIMING_PARAMS, ",timing=on", "");
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    Replay rec[32];
    int n = prepare_history(d, rec);
    uint64_t lat, t0;
    NvmeSqe sqe;
    NvmeCqe cqe;
    int64_t now;

    rec[n].op = H3100_OP_READ;
    rec[n].offset = 0;
    rec[n].length = 4096;
    rec[n].at = t0 = qt_clock_now(d->qt);
    lat = model_latency(rec, n + 1, true);
    ck_assert_msg(lat >= 10000, "test setup: model read latency %" PRIu64
                  " ns is implausibly small", lat);

    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.prp1 = buf;
    sqe.cdw12 = 7;
    nh_submit(d->h, d->q, &sqe);
    /* host I/O is long done in real time; virtual time has not moved */
    g_usleep(100000);
    ck_assert_msg(!nh_poll(d->h, d->q, &cqe), "timing=on: the read "
                  "completed with no virtual time elapsed (model: %" PRIu64
                  " ns)", lat);
    now = qt_clock_set(d->qt, t0 + lat - 1);
    g_usleep(20000);
    ck_assert_msg(!nh_poll(d->h, d->q, &cqe), "timing=on: the read "
                  "completed before %" PRId64 " ns, earlier than the "
                  "model's %" PRIu64 " ns", now - (int64_t)t0, lat);
    ck_assert_msg(nh_wait(d->h, d->q, &cqe, 10000000), "the read did not "
                  "complete within 10 ms after the model's %" PRIu64 " ns",
                  lat);
    ck_status(nh_status(&cqe), 0, "timed read");
    fprintf(stderr, "timing=on QD1 4 KiB read: model %" PRIu64
            " ns, device posted by %" PRId64 " ns\n", lat,
            d->h->last_cqe_ns - (int64_t)t0);
    dev_close(d);
}
END_TEST

/* Virtual ns from submitting a 4 KiB read of @slba to its completion. */
static int64_t read_latency(Dev *d, uint64_t slba, uint64_t buf)
{
    int64_t t0 = qt_clock_now(d->qt);
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.prp1 = buf;
    sqe.cdw10 = (uint32_t)slba;
    sqe.cdw12 = 7;
    nh_submit(d->h, d->q, &sqe);
    g_usleep(20000);
    for (int us = 0; us < 20000; us++) {
        if (nh_poll(d->h, d->q, &cqe)) {
            ck_status(nh_status(&cqe), 0, "read of LBA %" PRIu64, slba);
            return qt_clock_now(d->qt) - t0;
        }
        qt_clock_step(d->qt, 1000);
    }
    ck_abort_msg("the read of LBA %" PRIu64 " did not complete in 20 ms",
                 slba);
    return 0;
}

/* A lower power state caps the drive's power: its NAND reads slow down. */
START_TEST(test_power_state_slows_nand)
{
    Dev *d = dev_open_full(TIMING_PARAMS, ",timing=on", "");
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    Replay rec[32];
    int64_t ps0, ps2, back;
    uint32_t dw0 = 0;

    prepare_history(d, rec);
    ps0 = read_latency(d, 0, buf);
    ck_status(nh_set_features(d->h, NVME_FEAT_POWER_MGMT, 2, false, NULL), 0,
              "power state 2");
    ck_status(nh_get_features(d->h, NVME_FEAT_POWER_MGMT, 0, 0, &dw0), 0,
              "get power state");
    ck_assert_uint_eq(dw0, 2);
    qt_clock_step(d->qt, 10000000);
    ps2 = read_latency(d, 8192, buf);
    ck_assert_msg(ps2 > ps0 * 3 / 2, "4 KiB NAND read: %" PRId64 " ns in "
                  "PS2, %" PRId64 " ns in PS0", ps2, ps0);
    ck_status(nh_set_features(d->h, NVME_FEAT_POWER_MGMT, 0, false, NULL), 0,
              "power state 0");
    qt_clock_step(d->qt, 10000000);
    back = read_latency(d, 8192 + 256, buf);
    ck_assert_msg(back < ps2 * 3 / 4, "back in PS0: %" PRId64 " ns (PS2 %"
                  PRId64 " ns)", back, ps2);
    dev_close(d);
}
END_TEST

START_TEST(test_timing_on_write)
{
    Dev *d = dev_open_full(TIMING_PARAMS, ",timing=on", "");
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    Replay rec[1];
    uint64_t lat, t0;
    NvmeSqe sqe;
    NvmeCqe cqe;

    qt_clock_step(d->qt, 1000000);
    rec[0].op = H3100_OP_WRITE;
    rec[0].offset = 4096 * 10;
    rec[0].length = 4096;
    rec[0].at = t0 = qt_clock_now(d->qt);
    lat = model_latency(rec, 1, true);
    nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
    sqe.prp1 = buf;
    sqe.cdw10 = 80;
    sqe.cdw12 = 7;
    nh_submit(d->h, d->q, &sqe);
    g_usleep(50000);
    qt_clock_set(d->qt, t0 + lat - 1);
    g_usleep(20000);
    ck_assert_msg(!nh_poll(d->h, d->q, &cqe), "timing=on: a 4 KiB write "
                  "completed before the model's %" PRIu64 " ns", lat);
    ck_assert_msg(nh_wait(d->h, d->q, &cqe, 10000000), "the write did not "
                  "complete within 10 ms after the model's time");
    ck_status(nh_status(&cqe), 0, "timed write");
    dev_close(d);
}
END_TEST

START_TEST(test_timing_off_is_immediate)
{
    Dev *d = dev_open_full(TIMING_PARAMS, ",timing=off", "");
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    Replay rec[32];
    int n = prepare_history(d, rec);
    uint64_t lat, t0;
    NvmeSqe sqe;
    NvmeCqe cqe;
    bool done = false;
    int64_t now;

    rec[n].op = H3100_OP_READ;
    rec[n].offset = 0;
    rec[n].length = 4096;
    rec[n].at = t0 = qt_clock_now(d->qt);
    lat = model_latency(rec, n + 1, true);

    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.prp1 = buf;
    sqe.cdw12 = 7;
    nh_submit(d->h, d->q, &sqe);
    /* real time only: the data I/O finishes, then the completion */
    for (int i = 0; i < 400 && !done; i++) {
        done = nh_poll(d->h, d->q, &cqe);
        if (!done) {
            g_usleep(5000);
        }
    }
    now = qt_clock_now(d->qt);
    /* at most a tenth of the timed latency, in small steps */
    while (!done && now - (int64_t)t0 < (int64_t)lat / 10) {
        now = qt_clock_step(d->qt, 100);
        done = nh_poll(d->h, d->q, &cqe);
    }
    ck_assert_msg(done, "timing=off: the read had not completed %" PRId64
                  " ns after submission (timing=on model latency %" PRIu64
                  " ns)", now - (int64_t)t0, lat);
    ck_status(nh_status(&cqe), 0, "untimed read");
    dev_close(d);
}
END_TEST

START_TEST(test_timing_on_needs_virtual_time)
{
    Dev *d = dev_open_full(TIMING_PARAMS, ",timing=on", "");
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
    nh_submit(d->h, d->q, &sqe);
    g_usleep(200000);
    ck_assert_msg(!nh_poll(d->h, d->q, &cqe), "timing=on: a flush "
                  "completed with the virtual clock stopped");
    ck_assert(nh_wait(d->h, d->q, &cqe, 100000000));
    ck_status(nh_status(&cqe), 0, "flush");
    dev_close(d);
}
END_TEST

/*
 * Completions due together: eight 4 KiB reads of data spread over the
 * drive, rung in one doorbell on a CQ with its own MSI-X vector, with the
 * clock stepped 1 us at a time.  What came out: how many distinct steps
 * posted entries, how many steps saw a message, and the first and last.
 */
typedef struct Batch {
    unsigned steps_posting;
    unsigned steps_msg;
    int64_t first, last;              /* ns after the doorbell */
} Batch;

#define BATCH_N 8

static unsigned entries_posted(Dev *d, NvmeQueue *q)
{
    unsigned n = 0;
    NvmeCqe e;

    while (n < BATCH_N) {
        qt_memread(d->qt, q->cq->addr + ((q->cq->head + n) % q->cq->size) *
                   16ull, &e, sizeof(e));
        if ((e.status & 1) != q->cq->phase) {
            break;
        }
        n++;
    }
    return n;
}

static Batch batch_reads(const char *devopts)
{
    Dev *d = dev_open_full(TIMING_PARAMS, devopts, "");
    NvmeHost *h = d->h;
    uint64_t buf = nh_alloc(h, BATCH_N * 4096, 4096);
    uint64_t msi = nh_alloc(h, 4096, 4096);
    Batch b = { 0 };
    Replay rec[32];
    unsigned seen = 0;
    NvmeQueue *q;
    NvmeSqe sqe;
    NvmeCqe cqe;
    int64_t t0;

    prepare_history(d, rec);
    nh_msix_enable(h);
    nh_msix_set(h, 2, msi, 0xd0e1, false);
    q = nh_create_ioq(h, 2, 64, 2);
    qt_writel(d->qt, msi, 0);
    for (int i = 0; i < BATCH_N; i++) {
        nh_sqe_init(&sqe, NVME_CMD_READ, 1);
        sqe.prp1 = buf + i * 4096;
        sqe.cdw10 = 8192 + i * 256;
        sqe.cdw12 = 7;
        nh_sq_put(h, q, &sqe, false);
    }
    t0 = qt_clock_now(d->qt);
    nh_sq_ring(h, q);
    g_usleep(50000);                  /* fetched, the host's I/O back */
    for (int us = 0; us < 20000 && seen < BATCH_N; us++) {
        unsigned n = entries_posted(d, q);

        if (n > seen) {
            b.last = qt_clock_now(d->qt) - t0;
            b.first = seen ? b.first : b.last;
            b.steps_posting++;
            seen = n;
        }
        if (qt_readl(d->qt, msi)) {
            b.steps_msg++;
            qt_writel(d->qt, msi, 0);
        }
        qt_clock_step(d->qt, 1000);
    }
    ck_assert_msg(seen == BATCH_N, "%s: %u of %u reads completed in 20 ms",
                  devopts, seen, BATCH_N);
    for (int i = 0; i < BATCH_N; i++) {
        ck_assert(nh_wait(h, q, &cqe, 1000000));
        ck_status(nh_status(&cqe), 0, "batched read");
    }
    fprintf(stderr, "%s: %u reads posted in %u steps (%u with a message), "
            "%" PRId64 "..%" PRId64 " ns after the doorbell\n", devopts,
            BATCH_N, b.steps_posting, b.steps_msg, b.first, b.last);
    dev_close(d);
    return b;
}

/*
 * A wake-up posts every command due within completion-window of the first
 * with it, never earlier than the first's model time, with one message.
 */
START_TEST(test_completion_window)
{
    Batch exact = batch_reads(",timing=on,completion-window=0");
    Batch wide = batch_reads(",timing=on,completion-window=100000");

    ck_assert_msg(exact.steps_posting >= 2 && exact.last > exact.first,
                  "test setup: the %u reads fell due together (%" PRId64
                  "..%" PRId64 " ns)", BATCH_N, exact.first, exact.last);
    ck_assert_msg(exact.steps_msg == exact.steps_posting, "window 0: %u "
                  "steps posted entries, %u had a message",
                  exact.steps_posting, exact.steps_msg);
    ck_assert_msg(exact.last - exact.first < 100000, "test setup: the "
                  "reads spread over %" PRId64 " ns, more than the window",
                  exact.last - exact.first);
    ck_assert_msg(wide.steps_posting == 1 && wide.steps_msg == 1,
                  "window 100 us: posted in %u steps with %u messages, "
                  "expected all in one with one", wide.steps_posting,
                  wide.steps_msg);
    ck_assert_msg(wide.first == exact.first, "window 100 us: posted at %"
                  PRId64 " ns, the first read's model time is %" PRId64,
                  wide.first, exact.first);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("timing");
    TCase *tc = dev_tcase(s, "timing");

    tcase_add_test(tc, test_timing_on_qd1_read);
    tcase_add_test(tc, test_power_state_slows_nand);
    tcase_add_test(tc, test_timing_on_write);
    tcase_add_test(tc, test_timing_off_is_immediate);
    tcase_add_test(tc, test_timing_on_needs_virtual_time);
    tcase_add_test(tc, test_completion_window);
    return dev_main(s);
}
