/*
 * Migration and snapshots: two QEMUs over qtest, the source migrating to
 * a destination started with -incoming (docs/guide/migration.md).  What is in
 * flight arrives and completes at the same virtual time as it would
 * have without the migration; queues, shadow doorbells, events,
 * namespaces and SMART go on; savevm / loadvm returns the drive to the
 * snapshot; another drive on the destination is refused with one line
 * and the source goes on running.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE                   /* memmem */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev.h"
#include "h3100/vlog.h"

static uint32_t ldl_be(const void *p)
{
    const uint8_t *b = p;

    return (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
}

/* @v into the @n bytes at @p, most (be) or least (le) significant first */
static void put_be(void *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        ((uint8_t *)p)[i] = v >> (8 * (n - 1 - i));
    }
}

static void put_le(void *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        ((uint8_t *)p)[i] = v >> (8 * i);
    }
}

#define NCMD        24
#define LBA_BLOCKS  8                  /* 4 KiB per command */

static void migrate_ok(Dev *d, const char *devopts, const char *extra)
{
    g_autofree char *err = NULL;
    g_autofree char *st = dev_migrate(d, devopts, extra, NULL, &err);

    ck_assert_msg(!strcmp(st, "completed"), "migration %s: %s", st, err);
}

static void write_pattern(Dev *d, uint64_t slba, uint32_t blocks,
                          uint64_t seed)
{
    g_autofree uint8_t *buf = g_malloc(blocks * 512);

    nh_pattern(buf, blocks * 512, seed);
    ck_status(nh_write(d->h, d->q, slba, buf, blocks * 512),
              NVME_SC_SUCCESS, "write %" PRIu64, slba);
}

static void check_pattern(Dev *d, uint64_t slba, uint32_t blocks,
                          uint64_t seed)
{
    g_autofree uint8_t *want = g_malloc(blocks * 512);
    g_autofree uint8_t *got = g_malloc(blocks * 512);

    nh_pattern(want, blocks * 512, seed);
    ck_status(nh_read(d->h, d->q, slba, got, blocks * 512),
              NVME_SC_SUCCESS, "read %" PRIu64, slba);
    ck_assert_msg(!memcmp(want, got, blocks * 512), "LBA %" PRIu64
                  ": data differs", slba);
}

/* Host-visible SMART figures that must carry on across a migration. */
typedef struct Smart {
    uint64_t units_written;
    uint64_t host_writes;
    uint64_t power_cycles;
    uint64_t unsafe;
    uint8_t used;
} Smart;

static Smart smart(Dev *d)
{
    uint8_t log[512];
    Smart s;

    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, log, sizeof(log),
                         0), NVME_SC_SUCCESS, "SMART");
    s.units_written = le128_lo(log, 48);
    s.host_writes = le128_lo(log, 80);
    s.power_cycles = le128_lo(log, 112);
    s.unsafe = le128_lo(log, 144);
    s.used = log[5];
    return s;
}

static void assert_smart_eq(Smart a, Smart b)
{
    ck_assert_uint_eq(a.units_written, b.units_written);
    ck_assert_uint_eq(a.host_writes, b.host_writes);
    ck_assert_uint_eq(a.power_cycles, b.power_cycles);
    ck_assert_uint_eq(a.unsafe, b.unsafe);
    ck_assert_uint_eq(a.used, b.used);
}

/*
 * Writes and reads submitted, their host I/O done, their model time not
 * come: on the destination each completes once, at the virtual time it
 * completes without a migration.  (Data across a migration: the tests
 * below.)
 */
/* Is a completion entry waiting on @q's CQ? */
static bool nh_poll_peek(NvmeHost *h, NvmeQueue *q)
{
    NvmeCqe e;

    qt_memread(h->qt, q->cq->addr + (uint64_t)q->cq->head * 16, &e,
               sizeof(e));
    return (e.status & 1) == q->cq->phase;
}

/* ... @dst_devopts, @dst_extra: the destination's (NULL: the same) */
static void in_flight_times(bool migrate, const char *devopts,
                            const char *extra, const char *dst_devopts,
                            const char *dst_extra, int64_t *when)
{
    /* null-co: the host's I/O is back at once, whatever the host's load */
    Dev *d = dev_open_drive("driver=null-co,size=256M,read-zeroes=on",
                            devopts, extra);
    g_autofree uint8_t *buf = g_malloc(LBA_BLOCKS * 512);
    uint64_t data = nh_alloc(d->h, NCMD * LBA_BLOCKS * 512, 4096);
    uint16_t cids[NCMD];
    int64_t t0;
    unsigned got = 0;

    for (unsigned i = 0; i < NCMD; i++) {
        write_pattern(d, i * 64, LBA_BLOCKS, i);
    }
    /*
     * The same drive at t0 in every run: the data written on NAND, the
     * dies idle.  When the setup's commands completed varies with how
     * soon an IOThread answers a doorbell (the test steps virtual time
     * meanwhile), so whether the reads below still found the data in
     * the write buffer did too (1 run in 25 here).
     */
    qt_clock_step(d->qt, 100 * 1000 * 1000);
    nh_pattern(buf, LBA_BLOCKS * 512, 99);
    for (unsigned i = 0; i < NCMD; i++) {
        NvmeSqe sqe;
        uint64_t at = data + i * LBA_BLOCKS * 512;

        qt_memwrite(d->qt, at, buf, LBA_BLOCKS * 512);
        nh_sqe_init(&sqe, i % 2 ? NVME_CMD_READ : NVME_CMD_WRITE, 1);
        sqe.cdw10 = i * 64 + (i % 2 ? 0 : 2048);
        sqe.cdw12 = LBA_BLOCKS - 1;
        nh_set_prps(d->h, &sqe, at, LBA_BLOCKS * 512);
        cids[i] = nh_sq_put(d->h, d->q, &sqe, false);
    }
    t0 = qt_clock_now(d->qt);
    nh_sq_ring(d->h, d->q);
    g_usleep(300 * 1000);             /* the host's I/O lands meanwhile */
    if (migrate) {
        /* the destination's options after the source's model-params */
        g_autofree char *dst = dst_devopts ? g_strdup_printf(
            "%.*s%s", (int)(strlen(d->dev_opts) - strlen(devopts)),
            d->dev_opts, dst_devopts) : NULL;

        migrate_ok(d, dst, dst_extra);
    }
    while (got < NCMD) {
        int64_t t = qt_clock_step_next(d->qt);
        NvmeCqe cqe;

        ck_assert_msg(t >= 0 && t - t0 < 100 * 1000 * 1000,
                      "%u of %u completions within 100 ms", got, NCMD);
        /*
         * An IOThread posts what is due on its own time: give it some (a
         * deadline without a completion costs the whole wait, and there
         * are few: an idle tick per 10 ms of virtual time)
         */
        for (int k = 0; k < 200 && !nh_poll_peek(d->h, d->q); k++) {
            g_usleep(1000);
        }
        while (nh_poll(d->h, d->q, &cqe)) {
            for (unsigned i = 0; i < NCMD; i++) {
                if (cqe.cid == cids[i]) {
                    ck_assert_msg(when[i] < 0, "command %u twice", i);
                    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "cmd %u", i);
                    when[i] = t - t0;
                    got++;
                }
            }
        }
    }
    dev_close(d);
}

/*
 * @runs runs each way, the earliest time of each command kept: an
 * IOThread posts what is due on its own time, and on a loaded host it
 * has now and then been late to a step (in either run).
 */
static void check_same_times_to(const char *devopts, const char *extra,
                                const char *dst_devopts,
                                const char *dst_extra, unsigned runs)
{
    int64_t plain[NCMD], moved[NCMD];

    for (unsigned i = 0; i < NCMD; i++) {
        plain[i] = moved[i] = INT64_MAX;
    }
    for (unsigned r = 0; r < runs; r++) {
        int64_t a[NCMD], b[NCMD];

        memset(a, 0xff, sizeof(a));
        memset(b, 0xff, sizeof(b));
        in_flight_times(false, devopts, extra, NULL, NULL, a);
        in_flight_times(true, devopts, extra, dst_devopts, dst_extra, b);
        for (unsigned i = 0; i < NCMD; i++) {
            plain[i] = MIN(plain[i], a[i]);
            moved[i] = MIN(moved[i], b[i]);
        }
    }
    for (unsigned i = 0; i < NCMD; i++) {
        ck_assert_msg(plain[i] == moved[i], "command %u: %" PRId64 " ns "
                      "without a migration, %" PRId64 " with", i, plain[i],
                      moved[i]);
    }
}

static void check_same_times(const char *devopts, const char *extra,
                             unsigned runs)
{
    check_same_times_to(devopts, extra, NULL, NULL, runs);
}

START_TEST(test_in_flight)
{
    check_same_times("", "", 1);
}
END_TEST

START_TEST(test_in_flight_iothread)
{
    check_same_times(",iothread=io0", "-object iothread,id=io0", 2);
}
END_TEST

/*
 * iothread-vq-mapping: from one IOThread to two, and back; from the
 * main loop to two.  The commands are on queue 1, in io1 throughout.
 */
#define QMAP1 ",iothread-vq-mapping=[{\"iothread\": \"io1\"}]"

START_TEST(test_in_flight_mapping)
{
    check_same_times_to(QMAP1, DEV_IOT2, DEV_QMAP2, DEV_IOT2, 2);
    check_same_times_to(DEV_QMAP2, DEV_IOT2, QMAP1, DEV_IOT2, 2);
    check_same_times_to("", "", DEV_QMAP2, DEV_IOT2, 1);
}
END_TEST

/*
 * An idle drive migrates however little its rounds carry: what it says
 * is pending is the map pages due, not the core, which only the downtime
 * can send.  Counted, the core was a floor that the pending bytes never
 * fell under once QEMU measured the idle rounds' bandwidth: an idle VM
 * on a loaded host migrated forever.  A 1 ms downtime limit makes QEMU's
 * threshold smaller than any core, loaded or not.
 */
START_TEST(test_idle_converges)
{
    Dev *d = dev_open();

    write_pattern(d, 0, 64, 7);
    qt_qmp_ok(d->qt, "{\"execute\": \"migrate-set-parameters\", "
              "\"arguments\": {\"downtime-limit\": 1}}");
    migrate_ok(d, NULL, NULL);
    check_pattern(d, 0, 64, 7);
    dev_close(d);
}
END_TEST

/* Data written before arrives; SMART goes on from where it was. */
START_TEST(test_data_and_smart)
{
    Dev *d = dev_open();
    Smart before, after;

    for (unsigned i = 0; i < 32; i++) {
        write_pattern(d, i * 128, 64, 1000 + i);
    }
    before = smart(d);
    migrate_ok(d, NULL, NULL);
    after = smart(d);
    assert_smart_eq(before, after);
    for (unsigned i = 0; i < 32; i++) {
        check_pattern(d, i * 128, 64, 1000 + i);
    }
    write_pattern(d, 9000, 8, 5);
    after = smart(d);
    ck_assert_uint_gt(after.host_writes, before.host_writes);
    dev_close(d);
}
END_TEST

/*
 * A full CQ: completions wait for room.  They post on the destination
 * once the host takes entries, in order, none lost or twice.
 */
START_TEST(test_full_cq)
{
    Dev *d = dev_open_full(NULL, ",timing=off", "");
    NvmeQueue *q;
    uint64_t data = nh_alloc(d->h, 4096, 4096);
    bool seen[16] = { false };
    uint16_t cid0 = 0;
    NvmeCqe cqe;

    ck_status(nh_create_cq(d->h, 2, 4, -1), NVME_SC_SUCCESS, "CQ 2");
    ck_status(nh_create_sq(d->h, 2, 32, 2), NVME_SC_SUCCESS, "SQ 2");
    q = d->h->sqs[2];
    for (unsigned i = 0; i < 16; i++) {
        NvmeSqe sqe;
        uint16_t cid;

        nh_sqe_init(&sqe, NVME_CMD_READ, 1);
        sqe.cdw10 = i;
        nh_set_prps(d->h, &sqe, data, 512);
        cid = nh_sq_put(d->h, q, &sqe, false);
        cid0 = i ? cid0 : cid;
    }
    nh_sq_ring(d->h, q);
    qt_clock_step(d->qt, 1000000);
    g_usleep(200 * 1000);
    qt_clock_step(d->qt, 1000000);
    migrate_ok(d, NULL, NULL);
    for (unsigned n = 0; n < 16; n++) {
        ck_assert_msg(nh_wait(d->h, q, &cqe, 1000000000), "%u of 16", n);
        ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "read");
        ck_assert_uint_lt((uint16_t)(cqe.cid - cid0), 16);
        ck_assert(!seen[(uint16_t)(cqe.cid - cid0)]);
        seen[(uint16_t)(cqe.cid - cid0)] = true;
    }
    ck_assert(!nh_wait(d->h, q, &cqe, 10000000));
    dev_close(d);
}
END_TEST

/* A write or read through the shadow doorbells, as Linux does them. */
static void shadow_io(Dev *d, uint64_t dbs, uint8_t opc, uint64_t slba,
                      uint64_t buf)
{
    NvmeQueue *q = d->q;
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, opc, 1);
    sqe.prp1 = buf;
    sqe.cdw10 = slba;
    sqe.cdw12 = 7;
    nh_sq_put(d->h, q, &sqe, false);
    qt_writel(d->qt, dbs + 2 * q->qid * 4, q->tail);
    nh_sq_ring(d->h, q);
    ck_assert_msg(nh_wait(d->h, q, &cqe, 1000000000), "command %02xh with "
                  "shadow doorbells did not complete", opc);
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "shadow %02xh", opc);
    qt_writel(d->qt, dbs + (2 * q->qid + 1) * 4, q->cq->head);
}

/* Shadow doorbells: the destination reads and writes the same buffers. */
START_TEST(test_shadow_doorbells)
{
    Dev *d = dev_open();
    uint64_t dbs = nh_alloc(d->h, 4096, 4096);
    uint64_t eis = nh_alloc(d->h, 4096, 4096);
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    uint8_t w[4096], r[4096];
    NvmeSqe sqe;
    NvmeCqe cqe;

    qt_memset(d->qt, eis, 0xee, 4096);
    nh_sqe_init(&sqe, NVME_ADM_DBBUF_CONFIG, 0);
    sqe.prp1 = dbs;
    sqe.prp2 = eis;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "Doorbell Buffer Config");
    nh_pattern(w, sizeof(w), 3);
    qt_memwrite(d->qt, buf, w, sizeof(w));
    shadow_io(d, dbs, NVME_CMD_WRITE, 800, buf);
    migrate_ok(d, NULL, NULL);
    /* the MMIO doorbell alone says nothing: the shadow tail counts */
    shadow_io(d, dbs, NVME_CMD_WRITE, 808, buf);
    qt_memset(d->qt, buf, 0, sizeof(r));
    shadow_io(d, dbs, NVME_CMD_READ, 800, buf);
    qt_memread(d->qt, buf, r, sizeof(r));
    ck_assert(!memcmp(w, r, sizeof(r)));
    /* the event index the device wrote is the host's tail */
    ck_assert_uint_eq(qt_readl(d->qt, eis + 8), d->q->tail);
    dev_close(d);
}
END_TEST

/* An AER outstanding on the source completes on the destination. */
START_TEST(test_aer_outstanding)
{
    Dev *d = dev_open();
    NvmeSqe sqe;
    NvmeCqe cqe;
    uint16_t cid;

    nh_sqe_init(&sqe, NVME_ADM_ASYNC_EVENT, 0);
    cid = nh_submit(d->h, d->h->admin, &sqe);
    ck_assert(!nh_wait_cid(d->h, d->h->admin, cid, &cqe, 1000000));
    migrate_ok(d, NULL, NULL);
    /* a doorbell of a queue that does not exist: an error event */
    nh_wr32(d->h, nh_sq_doorbell(d->h, 9), 1);
    ck_assert(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100000000));
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "AER");
    ck_assert_uint_eq(cqe.dw0 & 7, 0);         /* error status */
    dev_close(d);
}
END_TEST

/*
 * LBA status across a migration: feature 15h's LSIRI, log 0Eh's ranges
 * and its generation counter, and that LBAs the host has not read yet
 * are still news (the next ones make no new generation).
 */
START_TEST(test_lba_status)
{
    Dev *d = dev_open();
    uint8_t log[512];
    uint32_t dw0 = 0;

    ck_status(nh_set_features(d->h, NVME_FEAT_LBA_STATUS_ATTR, 37, false,
                              NULL), 0, "LSIRI 3.7 s");
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, 50, 3, 0, 0, NULL),
              0, "Write Uncorrectable 50+3");
    ck_status(nh_get_log(d->h, NVME_LOG_LBA_STATUS, 0xffffffff, log,
                         sizeof(log), 0), 0, "log 0Eh");
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, 60, 1, 0, 0, NULL),
              0, "Write Uncorrectable 60");
    migrate_ok(d, NULL, NULL);
    ck_status(nh_get_features(d->h, NVME_FEAT_LBA_STATUS_ATTR, 0, 0, &dw0),
              0, "Get Features 15h");
    ck_assert_msg(dw0 == (10u << 16 | 37), "15h after the migration: 0x%08x",
                  dw0);
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, 70, 1, 0, 0, NULL),
              0, "Write Uncorrectable 70");
    ck_status(nh_get_log(d->h, NVME_LOG_LBA_STATUS, 0xffffffff, log,
                         sizeof(log), 0), 0, "log 0Eh");
    ck_assert_msg(le16_at(log, 14) == 2, "LSGC %u, expected 2: one new "
                  "generation since the read before the migration",
                  le16_at(log, 14));
    ck_assert_uint_eq(le32_at(log, 4), 1);             /* NLSLNE */
    ck_assert_uint_eq(le32_at(log, 16 + 4), 3);        /* NLRD */
    ck_assert_uint_eq(le64_at(log, 32), 50);
    ck_assert_uint_eq(le32_at(log, 40), 2);            /* RNLB, 0's based */
    ck_assert_uint_eq(le64_at(log, 48), 60);
    ck_assert_uint_eq(le64_at(log, 64), 70);
    dev_close(d);
}
END_TEST

static uint32_t ns_create(Dev *d, uint64_t nsze)
{
    uint8_t id[4096] = { 0 };
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    NvmeSqe sqe;
    NvmeCqe cqe;

    memcpy(id, &nsze, 8);
    memcpy(id + 8, &nsze, 8);
    qt_memwrite(d->qt, buf, id, sizeof(id));
    nh_sqe_init(&sqe, 0x0d, 0);
    sqe.prp1 = buf;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "create");
    return cqe.dw0;
}

static void ns_attach(Dev *d, uint32_t nsid)
{
    uint16_t list[2048] = { 1, 0 };
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    NvmeSqe sqe;
    NvmeCqe cqe;

    qt_memwrite(d->qt, buf, list, sizeof(list));
    nh_sqe_init(&sqe, 0x15, nsid);
    sqe.prp1 = buf;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "attach %u", nsid);
}

/* Namespaces created on the source are there, with their data. */
START_TEST(test_namespaces)
{
    Dev *d = dev_open();
    uint64_t data = nh_alloc(d->h, 4096, 4096);
    uint32_t list[1024];
    uint8_t buf[512];
    uint32_t ns2;
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, 0x0d, 1);
    sqe.cdw10 = 1;                    /* delete NSID 1 */
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "delete 1");
    ns2 = ns_create(d, 65536);
    ns_attach(d, ns2);
    nh_pattern(buf, sizeof(buf), 7);
    qt_memwrite(d->qt, data, buf, sizeof(buf));
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE, ns2, 100, 1, data, 0, NULL),
              NVME_SC_SUCCESS, "write ns %u", ns2);
    migrate_ok(d, NULL, NULL);
    ck_status(nh_identify(d->h, 2, 0, list), NVME_SC_SUCCESS, "CNS 2");
    ck_assert_uint_eq(list[0], ns2);
    ck_assert_uint_eq(list[1], 0);
    qt_memset(d->qt, data, 0, sizeof(buf));
    ck_status(nh_io(d->h, d->q, NVME_CMD_READ, ns2, 100, 1, data, 0, NULL),
              NVME_SC_SUCCESS, "read ns %u", ns2);
    {
        uint8_t want[512];

        qt_memread(d->qt, data, buf, sizeof(buf));
        nh_pattern(want, sizeof(want), 7);
        ck_assert(!memcmp(buf, want, sizeof(buf)));
    }
    ck_assert_uint_eq(ns_create(d, 4096), ns2 == 1 ? 2 : 1);
    dev_close(d);
}
END_TEST

/*
 * savevm / loadvm on qcow2: the drive goes back to the snapshot, data
 * and counters both; in the main loop, then with I/O queues in two
 * IOThreads.
 */
START_TEST(test_savevm_loadvm)
{
    g_autofree char *img = qt_backing_file("snap.qcow2", DEV_NS_BYTES,
                                           "qcow2");
    g_autofree char *drive = g_strdup_printf("file=%s,format=qcow2", img);
    Dev *d = dev_open_drive(drive, _i ? DEV_QMAP2 : "", _i ? DEV_IOT2 : "");
    Smart snap, later, back;

    write_pattern(d, 0, 64, 1);
    snap = smart(d);
    qt_qmp_ok(d->qt, "{\"execute\": \"human-monitor-command\", "
              "\"arguments\": {\"command-line\": \"savevm s1\"}}");
    write_pattern(d, 0, 64, 2);
    write_pattern(d, 4096, 64, 3);
    later = smart(d);
    ck_assert_uint_gt(later.host_writes, snap.host_writes);
    qt_qmp_ok(d->qt, "{\"execute\": \"human-monitor-command\", "
              "\"arguments\": {\"command-line\": \"loadvm s1\"}}");
    back = smart(d);
    assert_smart_eq(snap, back);
    check_pattern(d, 0, 64, 1);
    write_pattern(d, 4096, 8, 4);
    check_pattern(d, 4096, 8, 4);
    dev_close(d);
}
END_TEST

static uint16_t admin(Dev *d, uint8_t opc, uint32_t nsid, uint32_t cdw10,
                      uint32_t cdw11);
static uint16_t sanitize_status(Dev *d);

/* The model log's figures that make the drive this drive (not its clock). */
static void model_log(Dev *d, H3100VendorLog *v)
{
    ck_status(nh_get_log(d->h, 0xd0, 0xffffffff, v, sizeof(*v), 0),
              NVME_SC_SUCCESS, "log D0h");
}

static void assert_model_log_eq(const H3100VendorLog *a,
                                const H3100VendorLog *b)
{
    ck_assert_uint_eq(a->host_write_bytes, b->host_write_bytes);
    ck_assert_uint_eq(a->nand_write_bytes, b->nand_write_bytes);
    ck_assert_uint_eq(a->waf_milli, b->waf_milli);
    ck_assert_uint_eq(a->gc_victims, b->gc_victims);
    ck_assert_uint_eq(a->gc_slots_moved, b->gc_slots_moved);
    ck_assert_uint_eq(a->free_superblocks, b->free_superblocks);
    ck_assert_uint_eq(a->erase_min, b->erase_min);
    ck_assert_uint_eq(a->erase_avg_milli, b->erase_avg_milli);
    ck_assert_uint_eq(a->erase_max, b->erase_max);
    ck_assert_uint_eq(a->block_erases, b->block_erases);
    ck_assert_uint_eq(a->mapped_bytes, b->mapped_bytes);
    ck_assert_uint_eq(a->grown_bad_blocks, b->grown_bad_blocks);
}

static void wait_job(Dev *d, const char *id)
{
    g_autofree char *r = NULL;

    for (int i = 0; i < 6000; i++) {
        g_free(r);
        r = qt_qmp(d->qt, "{\"execute\": \"query-jobs\"}");
        if (strstr(r, "\"concluded\"")) {
            break;
        }
        g_usleep(10000);
    }
    ck_assert_msg(strstr(r, "\"concluded\"") && !strstr(r, "\"error\""),
                  "job %s: %s", id, r);
    qt_qmp_ok(d->qt, "{\"execute\": \"job-dismiss\", \"arguments\": "
              "{\"id\": \"%s\"}}", id);
}

/*
 * The snapshot-save / snapshot-load jobs (QMP): the drive back to the
 * snapshot, its wear, WAF, free blocks and map as well as its data.
 */
START_TEST(test_snapshot_jobs)
{
    g_autofree char *img = qt_backing_file("jobs.qcow2", DEV_NS_BYTES,
                                           "qcow2");
    g_autofree char *drive = g_strdup_printf("file=%s,format=qcow2,"
                                             "node-name=n0", img);
    Dev *d = dev_open_drive_params(drive, DEV_PARAMS, "");
    H3100VendorLog snap, later, back;

    for (unsigned i = 0; i < 16; i++) {
        write_pattern(d, i * 2048, 256, i);
    }
    model_log(d, &snap);
    qt_qmp_ok(d->qt, "{\"execute\": \"snapshot-save\", \"arguments\": "
              "{\"job-id\": \"save\", \"tag\": \"t1\", \"vmstate\": "
              "\"n0\", \"devices\": [\"n0\"]}}");
    wait_job(d, "save");
    for (unsigned i = 0; i < 16; i++) {
        write_pattern(d, i * 2048 + 1024, 256, 100 + i);
    }
    model_log(d, &later);
    ck_assert_uint_gt(later.mapped_bytes, snap.mapped_bytes);
    qt_qmp_ok(d->qt, "{\"execute\": \"snapshot-load\", \"arguments\": "
              "{\"job-id\": \"load\", \"tag\": \"t1\", \"vmstate\": "
              "\"n0\", \"devices\": [\"n0\"]}}");
    wait_job(d, "load");
    model_log(d, &back);
    assert_model_log_eq(&snap, &back);
    for (unsigned i = 0; i < 16; i++) {
        check_pattern(d, i * 2048, 256, i);
    }
    dev_close(d);
}
END_TEST

/* A namespace Delete under way: its erase finishes on the destination. */
START_TEST(test_ns_delete_in_progress)
{
    Dev *d = dev_open();
    uint32_t list[1024];
    uint32_t ns2;
    NvmeSqe sqe;
    NvmeCqe cqe;
    uint16_t cid;

    nh_sqe_init(&sqe, 0x0d, 1);
    sqe.cdw10 = 1;                    /* NSID 1 goes: room for another */
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "delete 1");
    ns2 = ns_create(d, 131072);
    ns_attach(d, ns2);
    nh_sqe_init(&sqe, 0x0d, ns2);
    sqe.cdw10 = 1;                    /* delete */
    cid = nh_submit(d->h, d->h->admin, &sqe);
    migrate_ok(d, NULL, NULL);
    ck_assert(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 2000000000));
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "delete");
    ck_status(nh_identify(d->h, 0x10, 0, list), NVME_SC_SUCCESS, "CNS 10h");
    ck_assert_uint_eq(list[0], 0);    /* none allocated */
    ck_assert_uint_ne(ns_create(d, 131072), 0);
    dev_close(d);
}
END_TEST

/*
 * A sanitize zeroing a filled qcow2 image when the VM stops: its unmap
 * waits at its next step (or has finished, its report held back) and
 * goes on from there on the destination.
 */
/* A qcow2 image of the namespace's size, every cluster written (g_free). */
static char *filled_qcow2(void)
{
    g_autofree char *raw = g_strdup_printf("%s/fill.raw", qt_tmpdir());
    char *img = g_strdup_printf("%s/filled.qcow2", qt_tmpdir());
    g_autofree char *bin = g_path_get_dirname(getenv("QTEST_QEMU_BINARY"));
    g_autofree char *qimg = g_build_filename(bin, "qemu-img", NULL);
    g_autofree char *cmd = g_strdup_printf(
        "sh -c 'head -c %llu /dev/urandom >%s && %s convert -q -O "
        "qcow2 -o cluster_size=4096 %s %s'", (unsigned long long)DEV_NS_BYTES,
        raw, qimg, raw, img);

    ck_assert(system(cmd) == 0);
    unlink(raw);
    return img;
}

START_TEST(test_sanitize_zeroing)
{
    g_autofree char *img = filled_qcow2();
    g_autofree char *drive = g_strdup_printf("file=%s,format=qcow2", img);
    uint8_t r[4096];
    Dev *d;

    d = dev_open_drive_params(drive, DEV_PARAMS, "");
    ck_status(admin(d, NVME_ADM_SANITIZE, 0, 2, 0), NVME_SC_SUCCESS,
              "sanitize");
    /* past the end of the model's erase: the zeroing begins, and the
     * migration stops the VM while it runs (or just after) */
    qt_clock_step(d->qt, 60 * 1000000000LL);
    migrate_ok(d, NULL, NULL);
    for (int i = 0; i < 600 && sanitize_status(d) != 1; i++) {
        qt_clock_step(d->qt, 100000000);
        g_usleep(5000);
    }
    ck_assert_uint_eq(sanitize_status(d), 1);
    for (uint64_t lba = 0; lba < DEV_NS_LBAS; lba += DEV_NS_LBAS / 16) {
        ck_status(nh_read(d->h, d->q, lba, r, sizeof(r)), NVME_SC_SUCCESS,
                  "read %" PRIu64, lba);
        ck_assert_msg(r[0] == 0 && !memcmp(r, r + 1, sizeof(r) - 1),
                      "LBA %" PRIu64 " survived sanitize", lba);
    }
    dev_close(d);
}
END_TEST

/* migrate file: then -incoming file: in a fresh QEMU (libvirt's save). */
START_TEST(test_file_save_restore)
{
    g_autofree char *path = g_strdup_printf("%s/vm.state", qt_tmpdir());
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree char *err = NULL;
    g_autofree char *st = NULL;
    Dev *d = dev_open();
    Smart before;

    write_pattern(d, 10, 16, 11);
    before = smart(d);
    st = dev_migrate(d, NULL, NULL, uri, &err);
    ck_assert_msg(!strcmp(st, "completed"), "%s: %s", st, err);
    assert_smart_eq(before, smart(d));
    check_pattern(d, 10, 16, 11);
    dev_close(d);
}
END_TEST

/* the device options dev_open() gives */
#define DEV_OPTS ",model-params=" DEV_PARAMS

/*
 * Another drive on the destination (its -device options after drive=d0
 * @opts): one line, the source runs on.
 */
static void check_refused(const char *opts, const char *why)
{
    Dev *d = dev_open();
    g_autofree char *err = NULL;
    g_autofree char *st = NULL;
    g_autofree char *status = NULL;
    char *line;

    write_pattern(d, 0, 8, 1);
    st = dev_migrate(d, opts, NULL, NULL, &err);
    ck_assert_str_eq(st, "failed");
    line = strstr(err, "dapustor-h3100: drive state refused: ");
    ck_assert_msg(line, "no refusal in: %s", err);
    ck_assert_msg(strstr(line, why), "'%s' not in: %s", why, line);
    ck_assert_msg(!strstr(strchr(line, '\n') ? strchr(line, '\n') : "",
                          "dapustor-h3100: drive state refused"),
                  "more than one refusal line: %s", err);
    status = qt_qmp(d->qt, "{\"execute\": \"query-status\"}");
    ck_assert_msg(strstr(status, "\"running\": true"), "%s", status);
    check_pattern(d, 0, 8, 1);
    write_pattern(d, 8, 8, 2);
    dev_close(d);
}

START_TEST(test_refuse_capacity)
{
    check_refused(DEV_OPTS ",capacity=1.6T",
                  "profile=h3100-1.6t here, h3100-3.2t there");
}
END_TEST

START_TEST(test_refuse_model)
{
    check_refused(DEV_OPTS ",model=h3200", "profile=h3200-3.84t here");
}
END_TEST

START_TEST(test_refuse_lba_size)
{
    check_refused(DEV_OPTS ",lba-size=4096", "lba-size=4096 here, 512 there");
}
END_TEST

START_TEST(test_refuse_model_params)
{
    check_refused(",model-params=" DEV_PARAMS ",,t_prog_ns=1400000",
                  "t_prog_ns=1400000 here");
}
END_TEST

START_TEST(test_refuse_seed)
{
    check_refused(DEV_OPTS ",seed=7", "seed=7 here, 1 there");
}
END_TEST

START_TEST(test_refuse_serial)
{
    check_refused(DEV_OPTS ",serial=OTHER", "serial=OTHER here");
}
END_TEST

/*
 * loadvm of a snapshot taken with other drive options: the same line,
 * and the drive as it was (its data still reads, its state file unwritten).
 */
START_TEST(test_refuse_loadvm)
{
    g_autofree char *img = qt_backing_file("other.qcow2", DEV_NS_BYTES,
                                           "qcow2");
    g_autofree char *drive = g_strdup_printf("file=%s,format=qcow2", img);
    g_autofree char *r = NULL;
    Dev *d = dev_open_drive_params(drive, DEV_PARAMS, "");

    write_pattern(d, 0, 8, 1);
    qt_qmp_ok(d->qt, "{\"execute\": \"human-monitor-command\", "
              "\"arguments\": {\"command-line\": \"savevm s1\"}}");
    dev_close(d);
    d = dev_open_drive_params(drive, DEV_PARAMS, ",lba-size=4096");
    r = qt_qmp(d->qt, "{\"execute\": \"human-monitor-command\", "
               "\"arguments\": {\"command-line\": \"loadvm s1\"}}");
    ck_assert_msg(strstr(r, "dapustor-h3100: drive state refused: the "
                         "stream holds another drive: lba-size=4096 here, "
                         "512 there"), "%s", r);
    dev_close(d);
}
END_TEST

/* The file of a later version (its section's version raised). */
START_TEST(test_refuse_newer_stream)
{
    g_autofree char *path = g_strdup_printf("%s/newer.state", qt_tmpdir());
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree char *buf = NULL;
    g_autofree char *err = NULL;
    const char *id = "dapustor-h3100-model";
    Dev *d = dev_open();
    gsize len;
    char *at;

    qt_qmp_ok(d->qt, "{\"execute\": \"migrate\", \"arguments\": "
              "{\"uri\": \"%s\"}}", uri);
    for (int i = 0; i < 3000; i++) {
        g_autofree char *r = qt_qmp(d->qt, "{\"execute\": "
                                    "\"query-migrate\"}");

        if (strstr(r, "completed")) {
            break;
        }
        g_usleep(10000);
    }
    ck_assert(g_file_get_contents(path, &buf, &len, NULL));
    at = memmem(buf, len, id, strlen(id));
    ck_assert(at);
    /* idstr, then be32 instance id, then be32 version */
    at[strlen(id) + 7] = 99;
    ck_assert(g_file_set_contents(path, buf, len, NULL));
    ck_assert(qt_start_fails(&err, "-drive %s,if=none,id=d0 -device "
                             "'dapustor-h3100,drive=d0%s' -incoming %s",
                             d->drive_opt, d->dev_opts, uri));
    ck_assert_msg(strstr(err, "unsupported version 99"), "%s", err);
    dev_close(d);
}
END_TEST

/* Until a forked checkpoint has written FILE (its temporary gone). */
static void wait_checkpoint(const char *state)
{
    g_autofree char *tmp = g_strdup_printf("%s.tmp", state);

    g_usleep(200 * 1000);
    for (int i = 0; i < 500 && g_file_test(tmp, G_FILE_TEST_EXISTS); i++) {
        g_usleep(10000);
    }
}

/*
 * state=FILE: once the destination has the drive the source writes it no
 * more, not even when it quits: the destination's checkpoint (dirty) is
 * what a kill of the destination leaves, one more unsafe shutdown.  A
 * destination that quits saves it clean, with what it wrote.
 */
START_TEST(test_state_file_handover)
{
    g_autofree char *img = qt_backing_file("handover.img", DEV_NS_BYTES,
                                           "raw");
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw", img);
    g_autofree char *state = g_strdup_printf("%s/drive.state", qt_tmpdir());
    g_autofree char *opts = g_strdup_printf(",state=%s", state);
    Dev *d = dev_open_drive_params(drive, DEV_PARAMS, opts);
    Smart before, now;

    write_pattern(d, 0, 64, 1);
    before = smart(d);
    migrate_ok(d, NULL, NULL);        /* the source has quit by now */
    assert_smart_eq(before, smart(d));
    wait_checkpoint(state);
    dev_kill(d);
    d = dev_open_drive_params(drive, DEV_PARAMS, opts);
    now = smart(d);
    ck_assert_uint_eq(now.host_writes, before.host_writes);
    ck_assert_uint_eq(now.unsafe, before.unsafe + 1);
    ck_assert_uint_eq(now.power_cycles, before.power_cycles + 1);
    check_pattern(d, 0, 64, 1);
    migrate_ok(d, NULL, NULL);
    write_pattern(d, 64, 64, 2);
    before = smart(d);
    dev_close(d);
    d = dev_open_drive_params(drive, DEV_PARAMS, opts);
    now = smart(d);
    ck_assert_uint_eq(now.host_writes, before.host_writes);
    ck_assert_uint_eq(now.unsafe, before.unsafe);
    check_pattern(d, 64, 64, 2);
    dev_close(d);
}
END_TEST

/* A refused migration leaves the file to the source, which saves it. */
START_TEST(test_state_file_refused)
{
    g_autofree char *img = qt_backing_file("refused.img", DEV_NS_BYTES,
                                           "raw");
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw", img);
    g_autofree char *state = g_strdup_printf("%s/kept.state", qt_tmpdir());
    g_autofree char *opts = g_strdup_printf(",state=%s", state);
    Dev *d = dev_open_drive_params(drive, DEV_PARAMS, opts);
    g_autofree char *bad = g_strdup_printf("%s,lba-size=4096", d->dev_opts);
    g_autofree char *err = NULL;
    g_autofree char *st = NULL;
    Smart before;

    write_pattern(d, 0, 64, 1);
    st = dev_migrate(d, bad, NULL, NULL, &err);
    ck_assert_str_eq(st, "failed");
    write_pattern(d, 64, 64, 2);
    before = smart(d);
    dev_close(d);
    d = dev_open_drive_params(drive, DEV_PARAMS, opts);
    ck_assert_uint_eq(smart(d).host_writes, before.host_writes);
    check_pattern(d, 64, 64, 2);
    dev_close(d);
}
END_TEST

/* Save @d to the file @path with `migrate file:` (the VM stays). */
static void save_to_file(Dev *d, const char *path)
{
    g_autofree char *r = NULL;

    qt_qmp_ok(d->qt, "{\"execute\": \"migrate\", \"arguments\": "
              "{\"uri\": \"file:%s\"}}", path);
    for (int i = 0; i < 6000; i++) {
        g_free(r);
        r = qt_qmp(d->qt, "{\"execute\": \"query-migrate\"}");
        if (strstr(r, "\"completed\"") || strstr(r, "\"failed\"")) {
            break;
        }
        g_usleep(10000);
    }
    ck_assert_msg(strstr(r, "\"completed\""), "%s", r);
}

/*
 * Restore @d's drive from @path in a new QEMU: 0 if it is still running
 * after a few seconds (loaded: then it has quit), else its exit code, or
 * minus the signal that killed it.
 */
static int restore_outcome(Dev *d, const char *path, char **err)
{
    QTest *qt = qt_start("-drive %s,if=none,id=d0 -device "
                         "'dapustor-h3100,drive=d0%s' %s -incoming file:%s",
                         d->drive_opt, d->dev_opts, d->extra_args, path);

    for (int64_t t = qt_wall_ms() + 4000; qt_wall_ms() < t;) {
        if (!qt_alive(qt)) {
            *err = qt_stderr(qt);
            return qt_exit_code(qt);
        }
        g_usleep(20000);
    }
    *err = qt_stderr(qt);
    qt_quit(qt);
    return 0;
}

/* The bytes of the record of @magic whose be32 length precedes it. */
static void record_range(const char *buf, gsize len, const char *magic,
                         gsize *from, gsize *to)
{
    const char *at = memmem(buf, len, magic, 4);

    ck_assert_msg(at, "no %s in the stream", magic);
    *from = at - buf;
    *to = *from + ldl_be(at - 4);
    ck_assert_uint_le(*to, len);
}

/*
 * A damaged stream is refused with a line, never a crash: bytes of the
 * model's core and of the controller's runtime state changed at random,
 * and of its whole section (registers, counters, logs).
 */
START_TEST(test_damaged_streams)
{
    g_autofree char *path = g_strdup_printf("%s/good.state", qt_tmpdir());
    g_autofree char *good = NULL;
    Dev *d = dev_open();
    GRand *rand = g_rand_new_with_seed(5);
    unsigned refused = 0;
    gsize len, range[3][2];
    const char *dev;

    for (unsigned i = 0; i < 16; i++) {
        write_pattern(d, i * 512, 8, i);
    }
    save_to_file(d, path);
    ck_assert(g_file_get_contents(path, &good, &len, NULL));
    record_range(good, len, "H3MC", &range[0][0], &range[0][1]);
    record_range(good, len, "H3RT", &range[1][0], &range[1][1]);
    dev = memmem(good + range[0][1], len - range[0][1], "/dapustor-h3100",
                 15);
    ck_assert(dev);
    range[2][0] = dev - good + 15;
    range[2][1] = range[1][1];
    for (unsigned trial = 0; trial < 24; trial++) {
        g_autofree char *bad = g_memdup2(good, len);
        g_autofree char *err = NULL;
        g_autofree char *p = g_strdup_printf("%s/bad-%u.state", qt_tmpdir(),
                                             trial);
        gsize *r = range[trial % 3];
        gsize at = r[0] + g_rand_int_range(rand, 0, r[1] - r[0]);
        int code;

        bad[at] ^= 1 + g_rand_int_range(rand, 0, 255);
        ck_assert(g_file_set_contents(p, bad, len, NULL));
        code = restore_outcome(d, p, &err);
        ck_assert_msg(code >= 0, "byte %zu: QEMU killed by signal %d: %s",
                      at, -code, err);
        refused += code > 0;
        unlink(p);
    }
    ck_assert_uint_gt(refused, 8);
    g_rand_free(rand);
    dev_close(d);
}
END_TEST

/* A saved stream, and where its parts are. */
typedef struct Saved {
    char *buf;
    gsize len;
    gsize core_end;                   /* after the model's core */
    gsize ctrl;                       /* the controller's section's fields */
    gsize bar;                        /* its registers (CAP first) */
    gsize sn;                         /* its serial number field */
    gsize rt, rt_end;                 /* the runtime record */
} Saved;

/* The controller's serial number, as the device keeps it (no padding). */
static char *serial_of(Dev *d)
{
    uint8_t id[4096];

    ck_status(nh_identify(d->h, 1, 0, id), NVME_SC_SUCCESS, "CNS 1");
    return g_strchomp(g_strndup((char *)id + 4, 20));
}

/* @d's state saved to @name; @sn: its serial number (serial_of()). */
static Saved saved_stream_of(Dev *d, const char *name, const char *sn)
{
    g_autofree char *path = g_strdup_printf("%s/%s", qt_tmpdir(), name);
    uint8_t cap[8];
    Saved v = { 0 };
    gsize core;
    const char *at;

    put_le(cap, nh_rd64(d->h, 0), 8);
    save_to_file(d, path);
    ck_assert(g_file_get_contents(path, &v.buf, &v.len, NULL));
    record_range(v.buf, v.len, "H3MC", &core, &v.core_end);
    record_range(v.buf, v.len, "H3RT", &v.rt, &v.rt_end);
    at = memmem(v.buf + v.core_end, v.len - v.core_end, "/dapustor-h3100",
                15);
    ck_assert(at);
    v.ctrl = at - v.buf + 15;
    at = memmem(v.buf + v.ctrl, v.rt - v.ctrl, cap, sizeof(cap));
    ck_assert_msg(at, "no CAP in the controller's state");
    v.bar = at - v.buf;
    at = memmem(v.buf + v.bar, v.rt - v.bar, sn, strlen(sn) + 1);
    ck_assert_msg(at, "no serial %s in the controller's state", sn);
    v.sn = at - v.buf;
    return v;
}

static Saved saved_stream(Dev *d, const char *name)
{
    g_autofree char *sn = serial_of(d);

    return saved_stream_of(d, name, sn);
}

/*
 * Before the serial: the features (52 bytes), fetch_seq, model_last and
 * time_base (h3100_vmstate's field order).
 */
#define SAVED_FEATURES      52
#define SAVED_TIME_BASE(v)  ((v)->sn - SAVED_FEATURES - 24)
#define SAVED_MODEL_LAST(v) ((v)->sn - SAVED_FEATURES - 16)

/* @v with @n bytes at @at replaced by @with's @wn (g_free the result). */
static char *spliced(const Saved *v, gsize at, gsize n, const void *with,
                     gsize wn, gsize *len)
{
    char *out = g_malloc(v->len - n + wn);

    memcpy(out, v->buf, at);
    memcpy(out + at, with, wn);
    memcpy(out + at + wn, v->buf + at + n, v->len - at - n);
    *len = v->len - n + wn;
    return out;
}

/* Restoring @bad (@len bytes) is refused, with @why in the one line. */
static void assert_forgery_refused(Dev *d, const char *bad, gsize len,
                                   const char *why)
{
    static unsigned n;
    g_autofree char *p = g_strdup_printf("%s/forged-%u.state", qt_tmpdir(),
                                         n++);
    g_autofree char *err = NULL;
    int code;

    ck_assert(g_file_set_contents(p, bad, len, NULL));
    code = restore_outcome(d, p, &err);
    ck_assert_msg(code > 0, "'%s' forgery: exit %d (accepted or killed): %s",
                  why, code, err);
    ck_assert_msg(strstr(err, why), "'%s' not in: %s", why, err);
    unlink(p);
}

/*
 * Forged streams, each valid but for one thing a review found the
 * receiver took: a clock at the end of time (the due timer spun), a
 * controller not ready with queues, another controller's CAP, the
 * drive's identity after its core (a reset of the drive half loaded).
 */
START_TEST(test_forged_streams)
{
    Dev *d = dev_open();
    Saved v;
    uint8_t be[8];
    g_autofree char *bad = NULL;
    gsize len, id;
    const char *model;
    uint32_t id_len;

    write_pattern(d, 0, 16, 3);
    v = saved_stream(d, "good.state");

    put_be(be, INT64_MAX, 8);
    bad = spliced(&v, SAVED_TIME_BASE(&v), 8, be, 8, &len);
    assert_forgery_refused(d, bad, len, "times out of range");
    g_free(bad);
    put_be(be, UINT64_MAX, 8);
    bad = spliced(&v, SAVED_MODEL_LAST(&v), 8, be, 8, &len);
    assert_forgery_refused(d, bad, len, "times out of range");
    g_free(bad);

    put_le(be, le32_at(v.buf, v.bar + 0x1c) & ~1u, 4);   /* CSTS.RDY */
    bad = spliced(&v, v.bar + 0x1c, 4, be, 4, &len);
    assert_forgery_refused(d, bad, len, "queues on a controller not ready");
    g_free(bad);
    put_le(be, le64_at(v.buf, v.bar) | (0xfull << 52), 8);  /* MPSMAX */
    bad = spliced(&v, v.bar, 8, be, 8, &len);
    assert_forgery_refused(d, bad, len, "capabilities of another controller");
    g_free(bad);

    /* the identity record: the model section's first, after its header */
    model = memmem(v.buf, v.len, "dapustor-h3100-model", 20);
    ck_assert(model);
    id = model - v.buf + 20 + 8;
    ck_assert_uint_eq(v.buf[id], 1);
    id_len = 5 + ldl_be(v.buf + id + 1);
    bad = spliced(&v, v.core_end, 0, v.buf + id, id_len, &len);
    assert_forgery_refused(d, bad, len, "a drive identity out of place");
    g_free(v.buf);
    dev_close(d);
}
END_TEST

/*
 * A Sanitize's unmap twice in a forged stream: its completion would run
 * twice.  One per purpose: refused.
 */
START_TEST(test_forged_unmaps)
{
    g_autofree char *img = filled_qcow2();
    /* throttled: the zeroing is under way when the state is saved */
    g_autofree char *drive = g_strdup_printf(
        "driver=throttle,throttle-group=tg0,file.driver=qcow2,"
        "file.file.driver=file,file.file.filename=%s", img);
    Dev *d = dev_open_drive(drive, "",
                            "-object throttle-group,id=tg0,x-iops-total=50");
    g_autofree char *bad = NULL;
    g_autofree char *rt = NULL;
    uint8_t count[4];
    gsize len, rec = 32;
    Saved v;

    ck_status(admin(d, NVME_ADM_SANITIZE, 0, 2, 0), NVME_SC_SUCCESS,
              "sanitize");
    qt_clock_step(d->qt, 60 * 1000000000LL);
    v = saved_stream(d, "sanitizing.state");
    /* the runtime record ends in the unmaps: a count, then each */
    ck_assert_uint_eq(le32_at(v.buf, v.rt_end - rec - 4), 1);
    put_le(count, 2, 4);
    rt = g_malloc(4 + rec + rec);
    memcpy(rt, count, 4);
    memcpy(rt + 4, v.buf + v.rt_end - rec, rec);
    memcpy(rt + 4 + rec, v.buf + v.rt_end - rec, rec);
    bad = spliced(&v, v.rt_end - rec - 4, rec + 4, rt, 4 + 2 * rec, &len);
    put_be(bad + v.rt - 4, v.rt_end - v.rt + rec, 4);
    assert_forgery_refused(d, bad, len, "bad unmap 1");
    g_free(v.buf);
    dev_close(d);
}
END_TEST

/* The stream's record of the outstanding command @sqe (h3100-vmstate.c). */
static gsize req_record(const Saved *v, const NvmeSqe *sqe)
{
    /* sqid, slot, phase, arg, in_flight, fua, nsid, status, then the SQE */
    const gsize head = 14;

    for (gsize o = v->rt + head; o + sizeof(*sqe) <= v->rt_end; o++) {
        const NvmeSqe *at = (const NvmeSqe *)(v->buf + o);

        if (at->opc == sqe->opc && at->nsid == sqe->nsid &&
            at->cdw10 == sqe->cdw10 && at->cdw12 == sqe->cdw12 &&
            at->prp1 == sqe->prp1) {
            return o - head;
        }
    }
    ck_abort_msg("no record of the command in the runtime state");
    return 0;
}

/*
 * A journal entry belongs to a write: in a request its pointer shares
 * memory with the fields of the other opcodes (req->op).  Forged from a
 * write held at the stop that owns one: the same command waiting for
 * its time still loads; made a Read, it is refused.
 */
START_TEST(test_forged_journal_owner)
{
    g_autofree char *img = qt_backing_file("owner.img", DEV_NS_BYTES, "raw");
    g_autofree char *drive = g_strdup_printf(
        "driver=throttle,throttle-group=tg0,file.driver=raw,"
        "file.file.driver=file,file.file.filename=%s", img);
    Dev *d = dev_open_drive(drive, ",id=h0,vwc=on",
                            "-object throttle-group,id=tg0,x-iops-total=20");
    g_autofree char *bad = NULL;
    g_autofree char *err = NULL;
    g_autofree char *path = NULL;
    g_autofree char *sn = serial_of(d);
    uint64_t data = nh_alloc(d->h, 8 * 4096, 4096);
    const uint8_t pending = 1, read = NVME_CMD_READ;
    NvmeSqe sqe[8];
    gsize rec = 0, len;
    Saved v;

    ck_status(nh_set_features(d->h, NVME_FEAT_VWC, 1, false, NULL),
              NVME_SC_SUCCESS, "VWC on");
    for (unsigned i = 0; i < 8; i++) {
        nh_sqe_init(&sqe[i], NVME_CMD_WRITE, 1);
        sqe[i].cdw10 = 1024 + i * 8;
        sqe[i].cdw12 = 7;
        nh_set_prps(d->h, &sqe[i], data + i * 4096, 4096);
        nh_sq_put(d->h, d->q, &sqe[i], false);
    }
    nh_sq_ring(d->h, d->q);
    qt_clock_step(d->qt, 1000);
    qt_qmp_ok(d->qt, "{\"execute\": \"stop\"}");
    v = saved_stream_of(d, "owner.state", sn);
    /* the throttle holds the later writes' pre-reads: held at the stop */
    for (unsigned i = 0; i < 8 && !rec; i++) {
        gsize r = req_record(&v, &sqe[i]);

        rec = v.buf[r + 6] ? r : 0;             /* in flight: held */
    }
    ck_assert_msg(rec, "no write was held at the stop");

    /* waiting for its time, not in flight: still a write's */
    bad = spliced(&v, rec + 4, 1, &pending, 1, &len);
    bad[rec + 6] = 0;
    path = g_strdup_printf("%s/owner-pending.state", qt_tmpdir());
    ck_assert(g_file_set_contents(path, bad, len, NULL));
    ck_assert_msg(restore_outcome(d, path, &err) == 0, "refused: %s", err);
    /* ... and a Read's: refused */
    bad[rec + 14] = read;
    assert_forgery_refused(d, bad, len, "bad command");
    g_free(v.buf);
    dev_close(d);
}
END_TEST

static uint16_t admin(Dev *d, uint8_t opc, uint32_t nsid, uint32_t cdw10,
                      uint32_t cdw11)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, opc, nsid);
    sqe.cdw10 = cdw10;
    sqe.cdw11 = cdw11;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    return nh_status(&cqe);
}

/*
 * vwc=on: the journal of writes no Flush covered travels, so a power cut
 * on the destination drops the unflushed write, as the source would have.
 */
START_TEST(test_volatile_cache)
{
    Dev *d = dev_open_full(NULL, ",id=h0,vwc=on", "");

    ck_status(nh_set_features(d->h, NVME_FEAT_VWC, 1, false, NULL),
              NVME_SC_SUCCESS, "VWC on");
    write_pattern(d, 256, 8, 1);
    ck_status(nh_flush(d->h, d->q, 1), NVME_SC_SUCCESS, "flush");
    write_pattern(d, 256, 8, 2);      /* unflushed */
    migrate_ok(d, NULL, NULL);
    check_pattern(d, 256, 8, 2);
    qt_qmp_ok(d->qt, "{\"execute\": \"qom-set\", \"arguments\": "
              "{\"path\": \"/machine/peripheral/h0\", "
              "\"property\": \"power-cut\", \"value\": \"drive\"}}");
    dev_reprobe(d);
    check_pattern(d, 256, 8, 1);
    dev_close(d);
}
END_TEST

/*
 * vwc=on writes submitted as the VM stops: each reads what it overwrites
 * first, and one whose read comes back after the stop is held (not sent)
 * and travels as such.  On the destination every one completes, holds
 * its data, and a power cut drops them all (no Flush covered them).
 */
START_TEST(test_writes_held_at_stop)
{
    /* a throttled backend: the pre-reads are out when the VM stops */
    g_autofree char *img = qt_backing_file("held.img", DEV_NS_BYTES, "raw");
    g_autofree char *drive = g_strdup_printf(
        "driver=throttle,throttle-group=tg0,file.driver=raw,"
        "file.file.driver=file,file.file.filename=%s", img);
    Dev *d = dev_open_drive(drive, ",id=h0,vwc=on",
                            "-object throttle-group,id=tg0,x-iops-total=20");
    g_autofree uint8_t *buf = g_malloc(8 * 4096);
    uint64_t data = nh_alloc(d->h, 8 * 4096, 4096);
    uint16_t cids[8];
    NvmeCqe cqe;

    ck_status(nh_set_features(d->h, NVME_FEAT_VWC, 1, false, NULL),
              NVME_SC_SUCCESS, "VWC on");
    for (unsigned i = 0; i < 8; i++) {
        write_pattern(d, 1024 + i * 8, 8, i);
    }
    ck_status(nh_flush(d->h, d->q, 1), NVME_SC_SUCCESS, "flush");
    nh_pattern(buf, 8 * 4096, 77);
    qt_memwrite(d->qt, data, buf, 8 * 4096);
    for (unsigned i = 0; i < 8; i++) {
        NvmeSqe sqe;

        nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
        sqe.cdw10 = 1024 + i * 8;
        sqe.cdw12 = 7;
        nh_set_prps(d->h, &sqe, data + i * 4096, 4096);
        cids[i] = nh_sq_put(d->h, d->q, &sqe, false);
    }
    nh_sq_ring(d->h, d->q);
    qt_clock_step(d->qt, 1000);
    qt_qmp_ok(d->qt, "{\"execute\": \"stop\"}");
    migrate_ok(d, NULL, NULL);
    qt_qmp_ok(d->qt, "{\"execute\": \"cont\"}");
    for (unsigned i = 0; i < 8; i++) {
        ck_assert_msg(nh_wait_cid(d->h, d->q, cids[i], &cqe, 20000000000LL),
                      "write %u", i);
        ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "write %u", i);
    }
    for (unsigned i = 0; i < 8; i++) {
        g_autofree uint8_t *got = g_malloc(4096);

        ck_status(nh_read(d->h, d->q, 1024 + i * 8, got, 4096),
                  NVME_SC_SUCCESS, "read %u", i);
        ck_assert(!memcmp(got, buf + i * 4096, 4096));
    }
    qt_qmp_ok(d->qt, "{\"execute\": \"qom-set\", \"arguments\": "
              "{\"path\": \"/machine/peripheral/h0\", "
              "\"property\": \"power-cut\", \"value\": \"drive\"}}");
    dev_reprobe(d);
    for (unsigned i = 0; i < 8; i++) {
        check_pattern(d, 1024 + i * 8, 8, i);
    }
    dev_close(d);
}
END_TEST

static uint16_t sanitize_status(Dev *d)
{
    uint8_t log[512];

    ck_status(nh_get_log(d->h, NVME_LOG_SANITIZE, 0xffffffff, log, 512, 0),
              NVME_SC_SUCCESS, "sanitize log");
    return le16_at(log, 2) & 7;
}

/* A sanitize under way finishes on the destination. */
START_TEST(test_sanitize_in_progress)
{
    Dev *d = dev_open();
    uint8_t r[4096];

    write_pattern(d, 64, 8, 1);
    ck_status(admin(d, NVME_ADM_SANITIZE, 0, 2, 0), NVME_SC_SUCCESS,
              "sanitize");
    ck_assert_uint_eq(sanitize_status(d), 2);
    migrate_ok(d, NULL, NULL);
    ck_assert_uint_eq(sanitize_status(d), 2);
    ck_status(nh_read(d->h, d->q, 64, r, sizeof(r)),
              NVME_SC_SANITIZE_IN_PROGRESS, "read during sanitize");
    for (int i = 0; i < 600 && sanitize_status(d) != 1; i++) {
        qt_clock_step(d->qt, 100000000);
        g_usleep(1000);
    }
    ck_assert_uint_eq(sanitize_status(d), 1);
    ck_status(nh_read(d->h, d->q, 64, r, sizeof(r)), NVME_SC_SUCCESS,
              "read after sanitize");
    ck_assert_msg(r[0] == 0 && !memcmp(r, r + 1, sizeof(r) - 1),
                  "data survived sanitize");
    dev_close(d);
}
END_TEST

/*
 * Commands in the SQs while the VM is stopped are fetched on the
 * destination: here a Format, submitted on a stopped source.
 */
START_TEST(test_format_submitted_stopped)
{
    Dev *d = dev_open();
    uint8_t r[4096];
    NvmeSqe sqe;
    NvmeCqe cqe;
    uint16_t cid;

    write_pattern(d, 64, 8, 1);
    qt_qmp_ok(d->qt, "{\"execute\": \"stop\"}");
    nh_sqe_init(&sqe, NVME_ADM_FORMAT_NVM, 0xffffffff);
    cid = nh_submit(d->h, d->h->admin, &sqe);
    qt_clock_step(d->qt, 1000000);
    ck_assert(!nh_poll_peek(d->h, d->h->admin));
    migrate_ok(d, NULL, NULL);
    /* a VM stopped on the source stays stopped on the destination */
    qt_clock_step(d->qt, 1000000);
    ck_assert(!nh_poll_peek(d->h, d->h->admin));
    qt_qmp_ok(d->qt, "{\"execute\": \"cont\"}");
    ck_assert(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 1000000000));
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "Format");
    ck_status(nh_read(d->h, d->q, 64, r, sizeof(r)), NVME_SC_SUCCESS,
              "read after Format");
    ck_assert_msg(r[0] == 0 && !memcmp(r, r + 1, sizeof(r) - 1),
                  "data survived Format");
    dev_close(d);
}
END_TEST

/*
 * werror=stop kept a command for a retry: the VM stopped on the host's
 * error, and it cannot travel; `migrate` says why, and once the error
 * is gone the VM goes on where it stopped.
 */
START_TEST(test_refuse_kept_retry)
{
    g_autofree char *img = qt_backing_file("retry.img", DEV_NS_BYTES, "raw");
    g_autofree char *drive = g_strdup_printf(
        "driver=raw,file.driver=blkdebug,file.image.filename=%s,"
        "file.inject-error.0.event=write_aio,file.inject-error.0.errno=28,"
        "file.inject-error.0.sector=4096,file.inject-error.0.once=on,"
        "werror=stop", img);
    Dev *d = dev_open_drive(drive, "", "");
    g_autofree uint8_t *buf = g_malloc(4096);
    uint64_t data = nh_alloc(d->h, 4096, 4096);
    g_autofree char *r = NULL;
    NvmeSqe sqe;
    NvmeCqe cqe;
    uint16_t cid;

    nh_pattern(buf, 4096, 3);
    qt_memwrite(d->qt, data, buf, 4096);
    nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
    sqe.cdw10 = 4096;
    sqe.cdw12 = 7;
    nh_set_prps(d->h, &sqe, data, 4096);
    cid = nh_submit(d->h, d->q, &sqe);
    for (int i = 0; i < 500; i++) {
        g_free(r);
        r = qt_qmp(d->qt, "{\"execute\": \"query-status\"}");
        if (strstr(r, "io-error")) {
            break;
        }
        qt_clock_step(d->qt, 100000);
        g_usleep(2000);
    }
    ck_assert_msg(strstr(r, "io-error"), "%s", r);
    g_free(r);
    r = qt_qmp(d->qt, "{\"execute\": \"migrate\", \"arguments\": "
               "{\"uri\": \"unix:%s/nowhere.sock\"}}", qt_tmpdir());
    ck_assert_msg(strstr(r, "werror/rerror=stop"), "%s", r);
    qt_qmp_ok(d->qt, "{\"execute\": \"cont\"}");
    ck_assert(nh_wait_cid(d->h, d->q, cid, &cqe, 1000000000));
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "write after cont");
    check_pattern(d, 4096, 8, 3);
    dev_close(d);
}
END_TEST

static Suite *migrate_suite(void)
{
    Suite *s = suite_create("device-migrate");
    TCase *tc = dev_tcase(s, "migrate");

    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_in_flight);
    tcase_add_test(tc, test_in_flight_iothread);
    tcase_add_test(tc, test_in_flight_mapping);
    tcase_add_test(tc, test_data_and_smart);
    tcase_add_test(tc, test_idle_converges);
    tcase_add_test(tc, test_full_cq);
    tcase_add_test(tc, test_shadow_doorbells);
    tcase_add_test(tc, test_aer_outstanding);
    tcase_add_test(tc, test_lba_status);
    tcase_add_test(tc, test_namespaces);
    tcase_add_loop_test(tc, test_savevm_loadvm, 0, 2);
    tcase_add_test(tc, test_snapshot_jobs);
    tcase_add_test(tc, test_ns_delete_in_progress);
    tcase_add_test(tc, test_sanitize_zeroing);
    tcase_add_test(tc, test_file_save_restore);
    tcase_add_test(tc, test_refuse_capacity);
    tcase_add_test(tc, test_refuse_model);
    tcase_add_test(tc, test_refuse_lba_size);
    tcase_add_test(tc, test_refuse_model_params);
    tcase_add_test(tc, test_refuse_seed);
    tcase_add_test(tc, test_refuse_serial);
    tcase_add_test(tc, test_refuse_newer_stream);
    tcase_add_test(tc, test_refuse_loadvm);
    tcase_add_test(tc, test_state_file_handover);
    tcase_add_test(tc, test_state_file_refused);
    tcase_add_test(tc, test_damaged_streams);
    tcase_add_test(tc, test_forged_streams);
    tcase_add_test(tc, test_forged_unmaps);
    tcase_add_test(tc, test_forged_journal_owner);
    tcase_add_test(tc, test_volatile_cache);
    tcase_add_test(tc, test_writes_held_at_stop);
    tcase_add_test(tc, test_sanitize_in_progress);
    tcase_add_test(tc, test_format_submitted_stopped);
    tcase_add_test(tc, test_refuse_kept_retry);
    return s;
}

int main(void)
{
    return dev_main(migrate_suite());
}
