/*
 * Regression tests for the hostile-guest audit: a review of hw/ and
 * models/ against a guest that controls registers, SQEs, data pointers,
 * doorbells and the memory the device reads, and against a hostile
 * state file, whose findings were reproduced with qtest cases and ASan
 * (docs/design/robustness.md).  Each case is one of its findings,
 * numbered as the audit numbered them, and ends with QEMU alive, the
 * controller still working and the status the spec gives.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include <unistd.h>

#include "dev.h"

/* Reads that stay in flight: null-co with 200 ms of host latency. */
#define SLOW_DRIVE "driver=null-co,size=256M,read-zeroes=on," \
                   "latency-ns=200000000"

#define BIOS_TOP_PAGE 0xfffff000ull   /* pc.bios: read-only */

/* The controller still answers: an Identify comes back with Success. */
static void assert_controller_works(Dev *d, const char *what)
{
    uint8_t id[4096];

    ck_assert_msg(qt_alive(d->qt), "%s: QEMU died", what);
    ck_assert_msg(nh_rd32(d->h, NVME_REG_CSTS) & NVME_CSTS_RDY,
                  "%s: controller not ready (CSTS 0x%x)", what,
                  nh_rd32(d->h, NVME_REG_CSTS));
    ck_status(nh_identify(d->h, 1, 0, id), NVME_SC_SUCCESS, "%s: identify",
              what);
}

static uint16_t submit_wait(Dev *d, NvmeQueue *q, NvmeSqe *sqe)
{
    NvmeCqe cqe;
    uint16_t cid = nh_submit(d->h, q, sqe);

    ck_assert_msg(nh_wait_cid(d->h, q, cid, &cqe, 1000000000),
                  "no completion for %s", nh_opcode_name(!q->qid,
                                                         sqe->opc));
    return nh_status(&cqe);
}

/* #1: Identify whose data pointer is BAR0 (CC would receive EN=0). */
START_TEST(test_identify_into_bar0)
{
    Dev *d = dev_open_full(NULL, ",timing=off", "");
    NvmeSqe sqe;

    nh_sqe_init(&sqe, NVME_ADM_IDENTIFY, 0);
    sqe.cdw10 = 1;
    sqe.prp1 = d->h->bar;
    ck_status(submit_wait(d, d->h->admin, &sqe), NVME_SC_DATA_TRANSFER_ERROR,
              "identify into BAR0");
    ck_assert(nh_rd32(d->h, NVME_REG_CC) & NVME_CC_EN);
    assert_controller_works(d, "identify into BAR0");
    dev_close(d);
}
END_TEST

/* #1: admin CQ on BAR0 (the second CQE would land on CC). */
START_TEST(test_acq_on_bar0)
{
    Dev *d = dev_launch(NULL, "", "");
    NvmeHost *h = d->h;

    nh_wr32(h, NVME_REG_AQA, 3 | (3u << 16));
    nh_wr64(h, NVME_REG_ASQ, nh_alloc(h, 4096, 4096));
    nh_wr64(h, NVME_REG_ACQ, h->bar);
    nh_wr32(h, NVME_REG_CC, NVME_CC_DEFAULT | NVME_CC_EN);
    ck_assert(nh_wait_csts(h, NVME_CSTS_CFS, NVME_CSTS_CFS, 100000000));
    ck_assert(!(nh_rd32(h, NVME_REG_CSTS) & NVME_CSTS_RDY));
    {
        g_autofree char *log = qt_guest_log(d->qt);

        ck_assert_msg(strstr(log, "ACQ is not writable guest RAM"), "%s",
                      log);
    }
    /* and the driver can start over */
    nh_disable(h);
    nh_enable(h, 32);
    nh_probe(h);
    assert_controller_works(d, "ACQ on BAR0");
    dev_close(d);
}
END_TEST

/* #1: I/O queues whose base is BAR0 or ROM are refused. */
START_TEST(test_ioq_not_ram)
{
    Dev *d = dev_open();
    NvmeSqe sqe;

    nh_sqe_init(&sqe, NVME_ADM_CREATE_CQ, 0);
    sqe.prp1 = d->h->bar;
    sqe.cdw10 = 2 | (15u << 16);
    sqe.cdw11 = 1;                    /* PC */
    ck_status(submit_wait(d, d->h->admin, &sqe), NVME_SC_INVALID_FIELD,
              "CQ on BAR0");
    sqe.prp1 = BIOS_TOP_PAGE;
    ck_status(submit_wait(d, d->h->admin, &sqe), NVME_SC_INVALID_FIELD,
              "CQ in ROM");
    ck_status(nh_create_cq(d->h, 2, 16, -1), NVME_SC_SUCCESS, "CQ 2");
    nh_sqe_init(&sqe, NVME_ADM_CREATE_SQ, 0);
    sqe.prp1 = d->h->bar + 0x1000;
    sqe.cdw10 = 2 | (15u << 16);
    sqe.cdw11 = 1 | (2u << 16);
    ck_status(submit_wait(d, d->h->admin, &sqe), NVME_SC_INVALID_FIELD,
              "SQ on the doorbells");
    assert_controller_works(d, "queues not in RAM");
    dev_close(d);
}
END_TEST

/* #1: the MSI-X message of vector 0 addressed at CC. */
START_TEST(test_msix_into_cc)
{
    Dev *d = dev_open_full(NULL, ",timing=off", "");
    uint32_t arb;

    nh_msix_enable(d->h);
    nh_msix_set(d->h, 0, d->h->bar + NVME_REG_CC, 0, false);
    ck_status(nh_get_features(d->h, 1, 0, 0, &arb), NVME_SC_SUCCESS,
              "get features");
    ck_assert(nh_rd32(d->h, NVME_REG_CC) & NVME_CC_EN);
    {
        g_autofree char *log = qt_guest_log(d->qt);

        ck_assert_msg(strstr(log, "own BAR0"), "%s", log);
    }
    assert_controller_works(d, "MSI-X into CC");
    dev_close(d);
}
END_TEST

/* #1: Doorbell Buffer Config with the event-index page on BAR0. */
START_TEST(test_dbbuf_on_bar0)
{
    Dev *d = dev_open_full(NULL, ",timing=off", "");
    NvmeSqe sqe;

    nh_create_ioq(d->h, 2, 16, -1);
    nh_sqe_init(&sqe, NVME_ADM_DBBUF_CONFIG, 0);
    sqe.prp1 = nh_alloc(d->h, 4096, 4096);
    sqe.prp2 = d->h->bar;
    ck_status(submit_wait(d, d->h->admin, &sqe), NVME_SC_INVALID_FIELD,
              "DBBUF on BAR0");
    assert_controller_works(d, "DBBUF on BAR0");
    dev_close(d);
}
END_TEST

/* #2: an I/O Read into BAR0 (the bounce buffer would write CC). */
START_TEST(test_read_into_bar0)
{
    Dev *d = dev_open_full(NULL, ",timing=off", "");
    NvmeSqe sqe;

    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.prp1 = d->h->bar;
    sqe.cdw12 = 7;
    ck_status(submit_wait(d, d->q, &sqe), NVME_SC_DATA_TRANSFER_ERROR,
              "read into BAR0");
    assert_controller_works(d, "read into BAR0");
    dev_close(d);
}
END_TEST

/* #15: a Read into ROM is a Data Transfer Error, not a silent Success. */
START_TEST(test_read_into_rom)
{
    Dev *d = dev_open_full(NULL, ",timing=off", "");
    uint8_t w[4096], rom_before = qt_readb(d->qt, BIOS_TOP_PAGE);
    NvmeSqe sqe;

    memset(w, 0xa5, sizeof(w));
    ck_status(nh_write(d->h, d->q, 0, w, sizeof(w)), 0, "write");
    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.prp1 = BIOS_TOP_PAGE;
    sqe.cdw12 = 7;
    ck_status(submit_wait(d, d->q, &sqe), NVME_SC_DATA_TRANSFER_ERROR,
              "read into ROM");
    ck_assert_uint_eq(qt_readb(d->qt, BIOS_TOP_PAGE), rom_before);
    /* a Write from ROM is fine: the device only reads it */
    nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
    sqe.prp1 = BIOS_TOP_PAGE;
    sqe.cdw12 = 7;
    ck_status(submit_wait(d, d->q, &sqe), NVME_SC_SUCCESS, "write from ROM");
    dev_close(d);
}
END_TEST

static void queue_reads(Dev *d, NvmeQueue *q, int n)
{
    uint64_t buf = nh_alloc(d->h, 4096, 4096);

    for (int i = 0; i < n; i++) {
        NvmeSqe sqe;

        nh_sqe_init(&sqe, NVME_CMD_READ, 1);
        sqe.prp1 = buf;
        sqe.cdw10 = i * 8;
        sqe.cdw12 = 7;
        nh_sq_put(d->h, q, &sqe, false);
    }
    nh_sq_ring(d->h, q);
}

/* Delete SQ 1 with reads in flight; the queue can be made again. */
static void delete_busy_sq(const char *devopts, const char *extra)
{
    Dev *d = dev_open_drive(SLOW_DRIVE, devopts, extra);

    queue_reads(d, d->q, 8);
    qt_clock_step(d->qt, 1000);
    ck_status(nh_delete_sq(d->h, 1), NVME_SC_SUCCESS, "delete busy SQ");
    ck_status(nh_delete_cq(d->h, 1), NVME_SC_SUCCESS, "delete its CQ");
    d->q = nh_create_ioq(d->h, 1, 64, -1);
    ck_status(nh_io(d->h, d->q, NVME_CMD_READ, 1, 0, 8,
                    nh_alloc(d->h, 4096, 4096), 0, NULL), 0, "read");
    assert_controller_works(d, "delete busy SQ");
    dev_close(d);
}

/* #3: with an IOThread (blk_aio_cancel asserted the main thread). */
START_TEST(test_delete_sq_iothread)
{
    delete_busy_sq(",iothread=io0", "-object iothread,id=io0");
}
END_TEST

/* ... SQ 1 in an IOThread of iothread-vq-mapping, the admin queue not */
START_TEST(test_delete_sq_mapped)
{
    delete_busy_sq(DEV_QMAP2, DEV_IOT2);
    delete_busy_sq(",iothread=io0" DEV_QMAP2,
                   "-object iothread,id=io0 " DEV_IOT2);
}
END_TEST

START_TEST(test_delete_sq_main_loop)
{
    delete_busy_sq("", "");
}
END_TEST

/*
 * #4: [command that completes at once, Delete SQ 1, Delete SQ 1] in one
 * batch with reads in flight (a nested event loop re-ran the admin
 * queue and cancelled the same request twice).  The first Delete
 * completes after the reads, the second finds no queue.
 */
static void delete_sq_twice(const char *devopts, uint8_t first_flags)
{
    Dev *d = dev_open_drive(SLOW_DRIVE, devopts, "");
    uint16_t cid[3];
    NvmeSqe sqe;
    NvmeCqe cqe;

    queue_reads(d, d->q, 8);
    qt_clock_step(d->qt, 1000);
    nh_sqe_init(&sqe, NVME_ADM_GET_FEATURES, 0);
    sqe.cdw10 = 1;
    sqe.flags = first_flags;
    cid[0] = nh_sq_put(d->h, d->h->admin, &sqe, false);
    for (int i = 1; i < 3; i++) {
        nh_sqe_init(&sqe, NVME_ADM_DELETE_SQ, 0);
        sqe.cdw10 = 1;
        cid[i] = nh_sq_put(d->h, d->h->admin, &sqe, false);
    }
    nh_sq_ring(d->h, d->h->admin);
    for (int i = 0; i < 3; i++) {
        ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid[i], &cqe,
                                  2000000000), "no completion %d", i);
        if (i == 1) {
            ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "first delete");
        } else if (i == 2) {
            ck_status(nh_status(&cqe), NVME_SC_INVALID_QID, "second delete");
        }
    }
    ck_status(nh_delete_cq(d->h, 1), NVME_SC_SUCCESS, "delete CQ 1");
    assert_controller_works(d, "delete SQ twice");
    dev_close(d);
}

START_TEST(test_delete_sq_twice)
{
    delete_sq_twice(",timing=off", 0);
}
END_TEST

START_TEST(test_delete_sq_twice_timed)
{
    delete_sq_twice("", 1);           /* FUSE: fails before the model */
}
END_TEST

/*
 * Found by fuzzing (generic-fuzz): while the device held virtual time
 * for host I/O, a bare qtest clock_step answered FAIL and libqtest's
 * qtest_clock_step_next() aborted.  It must always advance.  (With an
 * IOThread any of its timers that is due and not yet run makes that
 * answer: docs/design/robustness.md.)
 */
START_TEST(test_hold_lets_clock_step)
{
    Dev *d = dev_open_drive(SLOW_DRIVE, "", "");

    queue_reads(d, d->q, 8);
    for (int i = 0; i < 100; i++) {
        int64_t now = qt_clock_now(d->qt);
        g_autofree char *r = qt_cmd_raw(d->qt, "clock_step");

        ck_assert_msg(g_str_has_prefix(r, "OK "), "clock_step: %s", r);
        ck_assert(g_ascii_strtoll(r + 3, NULL, 0) > now);
    }
    dev_close(d);
}
END_TEST

/* A reset with reads in flight: drained, then the drive works again. */
START_TEST(test_reset_busy)
{
    Dev *d = dev_open_drive(SLOW_DRIVE, ",iothread=io0",
                            "-object iothread,id=io0");

    queue_reads(d, d->q, 8);
    qt_clock_step(d->qt, 1000);
    nh_disable(d->h);
    nh_enable(d->h, 32);
    nh_probe(d->h);
    d->q = nh_create_ioq(d->h, 1, 64, -1);
    assert_controller_works(d, "reset with I/O in flight");
    dev_close(d);
}
END_TEST

/*
 * S3: a Format lets the writes already sent land before it erases (they
 * would survive it otherwise): it completes after them, and I/O sent
 * after it is refused until it is done.
 */
START_TEST(test_format_waits_for_io)
{
    Dev *d = dev_open_drive(SLOW_DRIVE, ",timing=off", "");
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    uint16_t fmt, rd;
    unsigned reads = 0;
    NvmeSqe sqe;
    NvmeCqe cqe;

    for (int i = 0; i < 4; i++) {
        nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
        sqe.prp1 = buf;
        sqe.cdw10 = i * 8;
        sqe.cdw12 = 7;
        nh_sq_put(d->h, d->q, &sqe, false);
    }
    nh_sq_ring(d->h, d->q);
    qt_clock_step(d->qt, 1000);
    nh_sqe_init(&sqe, NVME_ADM_FORMAT_NVM, 1);
    fmt = nh_submit(d->h, d->h->admin, &sqe);
    qt_clock_step(d->qt, 1000);
    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.prp1 = buf;
    sqe.cdw12 = 7;
    rd = nh_submit(d->h, d->q, &sqe);
    ck_assert(nh_wait_cid(d->h, d->h->admin, fmt, &cqe, 5000000000));
    ck_status(nh_status(&cqe), 0, "Format");
    /* when the Format is done, every write's completion is already there */
    while (nh_poll(d->h, d->q, &cqe)) {
        ck_status(nh_status(&cqe), cqe.cid == rd ? 0x084 : 0,
                  "I/O %u around the Format", cqe.cid);
        reads++;
    }
    ck_assert_msg(reads == 5, "Format completed with %u of 4 writes and the "
                  "read completed", reads);
    assert_controller_works(d, "format with I/O in flight");
    dev_close(d);
}
END_TEST

/* #10: Write Uncorrectable, clean stop: the next start takes the state */
START_TEST(test_uncor_restart)
{
    g_autofree char *path = g_build_filename(qt_tmpdir(), "uncor.state",
                                             NULL);
    g_autofree char *img = qt_backing_file("uncor.img", DEV_NS_BYTES, "raw");
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw", img);
    g_autofree char *opts = g_strdup_printf(",state=%s", path);
    Dev *d = dev_open_drive(drive, opts, "");
    uint64_t buf = nh_alloc(d->h, 4096, 4096);

    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, 100, 1, 0, 0, NULL),
              0, "write uncorrectable");
    dev_close(d);
    d = dev_open_drive(drive, opts, "");
    ck_status(nh_io(d->h, d->q, NVME_CMD_READ, 1, 100, 1, buf, 0, NULL),
              NVME_SC_UNRECOVERED_READ, "read of the marked LBA");
    ck_status(nh_io(d->h, d->q, NVME_CMD_READ, 1, 101, 1, buf, 0, NULL),
              0, "read of its neighbour");
    dev_close(d);
    unlink(path);
    unlink(img);
}
END_TEST

/*
 * #10b: writes inside an uncorrectable range split it; past the table's
 * 4096 ranges a write is refused, and the state still saves and loads.
 */
START_TEST(test_uncor_split_cap)
{
    g_autofree char *path = g_build_filename(qt_tmpdir(), "split.state",
                                             NULL);
    g_autofree char *opts = g_strdup_printf(",timing=off,state=%s", path);
    Dev *d = dev_open_drive("driver=null-co,size=256M,read-zeroes=on", opts,
                            "");
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    uint16_t st = 0;
    unsigned i;

    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, 0, 10000, 0, 0,
                    NULL), 0, "write uncorrectable");
    for (i = 0; i < 4200 && !st; i++) {
        st = nh_io(d->h, d->q, NVME_CMD_WRITE, 1, 1 + 2 * i, 1, buf, 0,
                   NULL);
    }
    ck_status(st, 0x006, "write %u, past the table", i);    /* internal */
    ck_assert_uint_eq(i, 4096);
    dev_close(d);
    d = dev_open_drive("driver=null-co,size=256M,read-zeroes=on", opts, "");
    ck_status(nh_io(d->h, d->q, NVME_CMD_READ, 1, 2, 1, buf, 0, NULL),
              NVME_SC_UNRECOVERED_READ, "still marked after a restart");
    ck_status(nh_io(d->h, d->q, NVME_CMD_READ, 1, 3, 1, buf, 0, NULL),
              0, "written LBA");
    dev_close(d);
    unlink(path);
}
END_TEST

/*
 * #11: DSM Deallocate, 4 ranges of 2^32-1 LBAs on a 3.2 TB namespace.
 * The work is split: the event loop answers while it runs (the old code
 * held it for seconds per range), and it completes with Success.
 */
START_TEST(test_dsm_whole_namespace)
{
    Dev *d = g_new0(Dev, 1);
    struct { uint32_t attr, nlb; uint64_t slba; } r[4];
    int64_t t0, tstart, worst = 0;
    uint64_t rng;
    uint16_t cid;
    NvmeSqe sqe;
    NvmeCqe cqe;

    /* a sparse file: zeroing it punches holes (discard=unmap) */
    d->img = qt_backing_file("ns3t2.img", 3200631791616ull, "raw");
    d->qt = qt_start("-drive file=%s,format=raw,discard=unmap,if=none,"
                     "id=d0 -device "
                     "'dapustor-h3100,drive=d0,timing=off'", d->img);
    d->h = nh_new(d->qt);
    nh_enable(d->h, 32);
    nh_probe(d->h);
    d->q = nh_create_ioq(d->h, 1, 64, -1);
    rng = nh_alloc(d->h, 4096, 4096);
    for (int i = 0; i < 4; i++) {
        r[i].attr = 0;
        r[i].nlb = 0xffffffffu;
        r[i].slba = 0;
    }
    qt_memwrite(d->qt, rng, r, sizeof(r));
    nh_sqe_init(&sqe, NVME_CMD_DSM, 1);
    sqe.prp1 = rng;
    sqe.cdw10 = 3;
    sqe.cdw11 = 4;                    /* AD */
    cid = nh_submit(d->h, d->q, &sqe);
    tstart = qt_wall_ms();
    for (;;) {
        t0 = qt_wall_ms();
        if (nh_poll(d->h, d->q, &cqe)) {
            break;
        }
        worst = MAX(worst, qt_wall_ms() - t0);
        g_usleep(1000);
    }
    ck_assert_uint_eq(cqe.cid, cid);
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "DSM");
    fprintf(stderr, "DSM took %" PRId64 " ms, worst reply %" PRId64 " ms\n",
            qt_wall_ms() - tstart, worst);
    ck_assert_msg(worst < 1000, "the event loop was held %" PRId64 " ms",
                  worst);
    assert_controller_works(d, "DSM over the namespace");
    dev_close(d);
}
END_TEST

/* #12: an SGL segment that links to itself, 1 byte a lap. */
START_TEST(test_sgl_self_loop)
{
    Dev *d = dev_open_full(NULL, ",timing=off", "");
    uint32_t n = 16384;
    uint64_t seg = nh_alloc(d->h, (uint64_t)n * 16, 4096);
    uint64_t data = nh_alloc(d->h, 4096, 4096);
    NvmeSglDesc first, last;
    NvmeSqe sqe;

    memset(&first, 0, sizeof(first));
    first.addr = data;
    first.len = 1;
    memset(&last, 0, sizeof(last));
    last.addr = seg;
    last.len = n * 16;
    last.type = 2 << 4;               /* Segment: itself */
    qt_memwrite(d->qt, seg, &first, 16);
    qt_memwrite(d->qt, seg + (uint64_t)(n - 1) * 16, &last, 16);
    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.flags = 1 << 6;
    memcpy(&sqe.prp1, &last, 16);
    sqe.cdw12 = 255;                  /* 128 KiB: as many laps */
    ck_status(submit_wait(d, d->q, &sqe), NVME_SC_INVALID_NUM_SGL_DESCR,
              "self-linked SGL");
    assert_controller_works(d, "SGL self loop");
    dev_close(d);
}
END_TEST

/* #13: a PRP list pointer at page offset 0xffc. */
START_TEST(test_prp_list_offset)
{
    Dev *d = dev_open_full(NULL, ",timing=off", "");
    uint64_t buf = nh_alloc(d->h, 64 * 4096, 4096);
    uint64_t list = nh_alloc(d->h, 2 * 4096, 4096);
    NvmeSqe sqe;

    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.prp1 = buf;
    sqe.prp2 = list + 0xffc;
    sqe.cdw12 = 8 * 16 - 1;
    ck_status(submit_wait(d, d->q, &sqe), NVME_SC_PRP_OFFSET_INVALID,
              "PRP list at 0xffc");
    /* a qword-aligned list near the page end: one entry, then a link */
    for (unsigned i = 0; i < 16; i++) {
        uint64_t ent = buf + (i + 1) * 4096ull;

        qt_memwrite(d->qt, list + 4096 + i * 8, &ent, 8);
    }
    {
        uint64_t link = list + 4096;

        qt_memwrite(d->qt, list + 0xff8, &link, 8);
    }
    sqe.prp2 = list + 0xff8;
    ck_status(submit_wait(d, d->q, &sqe), NVME_SC_SUCCESS,
              "PRP list at 0xff8 linking on");
    dev_close(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("audit");
    TCase *tc = dev_tcase(s, "audit");

    tcase_add_test(tc, test_identify_into_bar0);
    tcase_add_test(tc, test_acq_on_bar0);
    tcase_add_test(tc, test_ioq_not_ram);
    tcase_add_test(tc, test_msix_into_cc);
    tcase_add_test(tc, test_dbbuf_on_bar0);
    tcase_add_test(tc, test_read_into_bar0);
    tcase_add_test(tc, test_read_into_rom);
    tcase_add_test(tc, test_delete_sq_iothread);
    tcase_add_test(tc, test_delete_sq_mapped);
    tcase_add_test(tc, test_delete_sq_main_loop);
    tcase_add_test(tc, test_delete_sq_twice);
    tcase_add_test(tc, test_delete_sq_twice_timed);
    tcase_add_test(tc, test_hold_lets_clock_step);
    tcase_add_test(tc, test_reset_busy);
    tcase_add_test(tc, test_format_waits_for_io);
    tcase_add_test(tc, test_uncor_restart);
    tcase_add_test(tc, test_uncor_split_cap);
    tcase_add_test(tc, test_dsm_whole_namespace);
    tcase_add_test(tc, test_sgl_self_loop);
    tcase_add_test(tc, test_prp_list_offset);
    return dev_main(s);
}
