/*
 * Faults on demand (hw/h3100-fault.c): armed over QMP or at start, each
 * kind does to the command what docs/guide/faults.md says, the counters
 * show it, bad specs are refused whole, and the table travels with a
 * migration and a savevm/loadvm, firing on the same commands after.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include <unistd.h>

#include "dev.h"
#include "h3100/fault.h"
#include "h3100/telemetry-log.h"

#define H0  ",id=h0"
#define SC_UNRECOVERED_READ 0x281
#define SC_INTERNAL         0x006
#define STATUS_DNR          0x4000    /* in the status field, past phase */

static char *qom_set(Dev *d, const char *prop, const char *value)
{
    return qt_qmp(d->qt, "{\"execute\": \"qom-set\", \"arguments\": "
                  "{\"path\": \"/machine/peripheral/h0\", \"property\": "
                  "\"%s\", \"value\": \"%s\"}}", prop, value);
}

static void arm(Dev *d, const char *spec)
{
    g_autofree char *r = qom_set(d, "fault", spec);

    ck_assert_msg(strstr(r, "\"return\""), "arming '%s': %s", spec, r);
}

static char *faults(Dev *d)
{
    return qt_qmp(d->qt, "{\"execute\": \"qom-get\", \"arguments\": "
                  "{\"path\": \"/machine/peripheral/h0\", \"property\": "
                  "\"faults\"}}");
}

static uint16_t read_at(Dev *d, uint64_t slba, uint32_t nlb, NvmeCqe *cqe)
{
    uint64_t buf = nh_alloc(d->h, nlb * 512, 4096);
    NvmeSqe sqe;

    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.cdw10 = slba;
    sqe.cdw12 = nlb - 1;
    nh_set_prps(d->h, &sqe, buf, nlb * 512);
    *cqe = nh_cmd(d->h, d->q, &sqe);
    return nh_status(cqe);
}

static bool more_bit(const NvmeCqe *cqe)
{
    return (cqe->status >> 14) & 1;
}

START_TEST(test_status)
{
    Dev *d = dev_open_full(NULL, H0, "");
    g_autofree char *list = NULL;
    uint8_t log[64];
    uint32_t val;
    NvmeCqe cqe;

    arm(d, "status,opc=read,lba=100+8,sc=0x281,dnr=on");
    ck_status(read_at(d, 0, 8, &cqe), NVME_SC_SUCCESS, "read LBA 0");
    ck_status(read_at(d, 104, 8, &cqe), SC_UNRECOVERED_READ, "read LBA 104");
    ck_assert(nh_dnr(&cqe));
    ck_assert(!more_bit(&cqe));
    /* count=1: once only */
    ck_status(read_at(d, 104, 8, &cqe), NVME_SC_SUCCESS, "read again");
    list = faults(d);
    ck_assert_msg(strstr(list, "1 status,q=io,opc=0x02,lba=100-107,count=1,"
                         "sc=0x281,dnr=on,more=off matched=1 fired=1 spent"),
                  "%s", list);
    /* the Error Information log has it, as a drive's own error */
    ck_status(nh_get_log(d->h, NVME_LOG_ERROR, 0xffffffff, log, 64, 0),
              NVME_SC_SUCCESS, "error log");
    ck_assert_uint_eq(le16_at(log, 12) >> 1, SC_UNRECOVERED_READ |
                      STATUS_DNR);

    /* admin commands too, with More */
    arm(d, "status,opc=get-features,sc=0x6,more=on,count=2");
    ck_status(nh_get_features(d->h, NVME_FEAT_ARBITRATION, 0, 0, &val),
              SC_INTERNAL, "get features");
    ck_status(nh_get_features(d->h, NVME_FEAT_ARBITRATION, 0, 0, &val),
              SC_INTERNAL, "get features");
    ck_status(nh_get_features(d->h, NVME_FEAT_ARBITRATION, 0, 0, &val),
              NVME_SC_SUCCESS, "get features");
    dev_close(d);
}
END_TEST

/* Submit a read of LBA @slba on queue 1 without waiting: its cid */
static uint16_t read_nowait(Dev *d, uint64_t slba)
{
    NvmeSqe sqe;

    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.cdw10 = slba;
    nh_set_prps(d->h, &sqe, nh_alloc(d->h, 4096, 4096), 512);
    return nh_submit(d->h, d->q, &sqe);
}

/* Abort command @cid of SQ 1: Abort's DW0 (bit 0 set: not aborted) */
static uint32_t abort_cmd(Dev *d, uint16_t cid)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, NVME_ADM_ABORT, 0);
    sqe.cdw10 = 1 | (uint32_t)cid << 16;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_SUCCESS, "abort");
    return cqe.dw0;
}

/*
 * timeout: the read never completes; an Abort ends it (honour) or is
 * refused (ignore); deleting its queue and a reset release it.
 */
START_TEST(test_timeout)
{
    Dev *d = dev_open_full(NULL, H0, "");
    g_autofree char *list = NULL;
    uint16_t cid;
    NvmeCqe cqe;

    arm(d, "timeout,opc=read,lba=7+1");
    cid = read_nowait(d, 7);
    ck_assert_msg(!nh_wait_cid(d->h, d->q, cid, &cqe, 2000000000LL),
                  "a held read completed");
    ck_status(read_at(d, 8, 1, &cqe), 0, "another read goes on");
    ck_assert_uint_eq(abort_cmd(d, cid) & 1, 0);
    ck_assert(nh_wait_cid(d->h, d->q, cid, &cqe, 1000000000LL));
    ck_status(nh_status(&cqe), NVME_SC_ABORT_REQ, "the aborted read");

    arm(d, "timeout,opc=read,lba=7+1,abort=ignore");
    cid = read_nowait(d, 7);
    ck_assert_uint_eq(abort_cmd(d, cid) & 1, 1);
    ck_assert_msg(!nh_wait_cid(d->h, d->q, cid, &cqe, 2000000000LL),
                  "a read the fault holds completed after an ignored Abort");
    list = faults(d);
    ck_assert_msg(strstr(list, "2 timeout,q=io,opc=0x02,lba=7-7,count=1,"
                         "abort=ignore matched=1 fired=1 spent"), "%s", list);
    /* its queue's deletion does not wait for it */
    ck_status(nh_delete_sq(d->h, 1), NVME_SC_SUCCESS, "delete SQ 1");
    ck_status(nh_delete_cq(d->h, 1), NVME_SC_SUCCESS, "delete CQ 1");
    d->q = nh_create_ioq(d->h, 1, 64, -1);
    arm(d, "timeout,opc=read,lba=7+1");
    read_nowait(d, 7);
    /* nor does a reset */
    nh_disable(d->h);
    dev_reprobe(d);
    ck_status(read_at(d, 7, 1, &cqe), 0, "read after the reset");
    dev_close(d);
}
END_TEST

/* A held command travels: aborted on the destination */
START_TEST(test_timeout_migrates)
{
    Dev *d = dev_open_full(NULL, H0, "");
    g_autofree char *st = NULL, *err = NULL;
    uint16_t cid;
    NvmeCqe cqe;

    arm(d, "timeout,opc=read");
    cid = read_nowait(d, 3);
    ck_assert(!nh_wait_cid(d->h, d->q, cid, &cqe, 100000000LL));
    st = dev_migrate(d, d->dev_opts, d->extra_args, NULL, &err);
    ck_assert_msg(!strcmp(st, "completed"), "%s: %s", st, err);
    ck_assert(!nh_wait_cid(d->h, d->q, cid, &cqe, 1000000000LL));
    ck_assert_uint_eq(abort_cmd(d, cid) & 1, 0);
    ck_assert(nh_wait_cid(d->h, d->q, cid, &cqe, 1000000000LL));
    ck_status(nh_status(&cqe), NVME_SC_ABORT_REQ, "aborted on the "
              "destination");
    dev_close(d);
}
END_TEST

/* The CSTS a re-enable of the controller ends in (RDY waited for) */
static uint32_t reenable(Dev *d, int64_t *took)
{
    int64_t t0;
    uint32_t csts;

    nh_disable(d->h);
    t0 = qt_clock_now(d->qt);
    csts = nh_try_enable(d->h, 32, NVME_CC_DEFAULT | NVME_CC_EN);
    if (took) {
        *took = qt_clock_now(d->qt) - t0;
    }
    return csts;
}

/*
 * fatal: the write is lost, CSTS.CFS comes with a controller-initiated
 * telemetry snapshot; the first reset does not cure it (resets=1), the
 * second does.
 */
START_TEST(test_fatal)
{
    Dev *d = dev_open_full(NULL, H0, "");
    uint8_t zero[512] = { 0 };
    uint8_t tel[512];
    NvmeSqe sqe;
    NvmeCqe cqe;
    uint16_t cid;

    ck_status(nh_get_log(d->h, NVME_LOG_TELEMETRY_CTRL, 0xffffffff, tel,
                         512, 0), NVME_SC_SUCCESS, "log 08h before");
    ck_assert_uint_eq(tel[offsetof(H3100TelHeader, ctrl_avail)], 0);
    arm(d, "fatal,opc=write,resets=1");
    nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
    nh_set_prps(d->h, &sqe, nh_alloc(d->h, 512, 4096), 512);
    cid = nh_submit(d->h, d->q, &sqe);
    ck_assert(!nh_wait_cid(d->h, d->q, cid, &cqe, 1000000000LL));
    ck_assert(nh_rd32(d->h, NVME_REG_CSTS) & NVME_CSTS_CFS);
    ck_assert_uint_eq(reenable(d, NULL) & (NVME_CSTS_RDY | NVME_CSTS_CFS),
                      NVME_CSTS_RDY | NVME_CSTS_CFS);
    ck_assert_uint_eq(reenable(d, NULL) & (NVME_CSTS_RDY | NVME_CSTS_CFS),
                      NVME_CSTS_RDY);
    nh_disable(d->h);
    dev_reprobe(d);
    ck_status(nh_write(d->h, d->q, 0, zero, 512), 0, "write after");
    ck_status(nh_get_log(d->h, NVME_LOG_TELEMETRY_CTRL, 0xffffffff, tel,
                         512, 0), NVME_SC_SUCCESS, "log 08h after");
    ck_assert_uint_eq(tel[offsetof(H3100TelHeader, ctrl_avail)], 1);
    ck_assert_msg(strstr((char *)tel + offsetof(H3100TelHeader, reason),
                         "fatal"), "08h's reason: %.128s",
                  (char *)tel + offsetof(H3100TelHeader, reason));
    dev_close(d);
}
END_TEST

/* ready-delay: RDY 3 s after CC.EN once, then never (until reset) */
START_TEST(test_ready_delay)
{
    Dev *d = dev_open_full(NULL, H0, "");
    int64_t took;
    NvmeCqe cqe;

    arm(d, "ready-delay,ms=3000");
    ck_assert(reenable(d, &took) & NVME_CSTS_RDY);
    ck_assert_msg(took >= 3000000000LL && took < 3500000000LL,
                  "RDY after %" PRId64 " ns", took);
    ck_assert(reenable(d, &took) & NVME_CSTS_RDY);
    ck_assert_int_lt(took, 100000000LL);    /* spent: at once */
    arm(d, "ready-delay,ms=never");
    ck_assert(!(reenable(d, &took) & NVME_CSTS_RDY));
    ck_assert_int_ge(took, 10000000000LL);  /* CAP.TO ran out */
    nh_disable(d->h);
    dev_reprobe(d);
    ck_status(read_at(d, 0, 1, &cqe), 0, "read after");
    dev_close(d);
}
END_TEST

static uint16_t submit_aer(Dev *d)
{
    NvmeSqe sqe;

    nh_sqe_init(&sqe, NVME_ADM_ASYNC_EVENT, 0);
    return nh_submit(d->h, d->h->admin, &sqe);
}

/* aer: the event, when armed; warning: SMART bits and their event */
START_TEST(test_aer_and_warning)
{
    Dev *d = dev_open_full(NULL, H0, "");
    uint8_t smart[512];
    uint16_t cid;
    NvmeCqe cqe;

    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, 0xff, false,
                              NULL), 0, "enable SMART events");
    cid = submit_aer(d);
    ck_assert(!nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100000000));
    arm(d, "aer,type=error,info=3");
    ck_assert(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100000000));
    ck_assert_msg(cqe.dw0 == (0 | 3 << 8 | NVME_LOG_ERROR << 16),
                  "event 0x%08x: expected error, persistent internal error "
                  "(03h), log 01h", cqe.dw0);

    cid = submit_aer(d);
    arm(d, "warning,bits=spare+backup");
    ck_assert(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100000000));
    ck_assert_msg(cqe.dw0 == (1 | 2 << 8 | NVME_LOG_SMART << 16),
                  "event 0x%08x: expected SMART, spare (02h), log 02h", cqe.dw0);
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, smart, 512, 0), 0,
              "SMART log");
    ck_assert_uint_eq(smart[0], 0x11);
    g_free(qom_set(d, "fault-clear", "all"));
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, smart, 512, 0), 0,
              "SMART log");
    ck_assert_uint_eq(smart[0], 0);
    {
        g_autofree char *r = qom_set(d, "fault", "aer,type=notice,info=1");

        ck_assert_msg(strstr(r, "needs log="), "%s", r);
    }
    dev_close(d);
}
END_TEST

/* after= and every=: the 3rd and 5th matching reads, on queue 1 only */
START_TEST(test_triggers)
{
    Dev *d = dev_open_full(NULL, H0, "");
    uint8_t zero[512] = { 0 };
    NvmeCqe cqe;

    arm(d, "status,q=1,opc=read,after=2,every=2,count=0,sc=0x281");
    for (int i = 1; i <= 6; i++) {
        uint16_t want = i == 3 || i == 5 ? SC_UNRECOVERED_READ : 0;

        ck_status(read_at(d, i, 1, &cqe), want, "read %d", i);
        ck_assert(!nh_dnr(&cqe));
    }
    ck_status(nh_write(d->h, d->q, 0, zero, 512), NVME_SC_SUCCESS,
              "a write does not match");
    dev_close(d);
}
END_TEST

/* delay: the command completes ms later in the drive's (virtual) time */
START_TEST(test_delay)
{
    Dev *d = dev_open_full(NULL, H0, "");
    int64_t t0, plain, slow;
    NvmeCqe cqe;

    t0 = qt_clock_now(d->qt);
    ck_status(read_at(d, 0, 8, &cqe), 0, "plain read");
    plain = qt_clock_now(d->qt) - t0;
    arm(d, "delay,opc=read,ms=50");
    t0 = qt_clock_now(d->qt);
    ck_status(read_at(d, 0, 8, &cqe), 0, "delayed read");
    slow = qt_clock_now(d->qt) - t0;
    ck_assert_msg(slow >= 50 * 1000000LL && slow < plain + 60 * 1000000LL,
                  "plain %" PRId64 " ns, delayed %" PRId64 " ns", plain, slow);
    dev_close(d);

    /* without timing the drive has no time to add to: refused */
    d = dev_open_full(NULL, H0 ",timing=off", "");
    {
        g_autofree char *r = qom_set(d, "fault", "delay,ms=5");

        ck_assert_msg(strstr(r, "needs timing=on"), "%s", r);
    }
    dev_close(d);
}
END_TEST

/* lost-irq: the entry is in the CQ, the MSI-X message never comes */
START_TEST(test_lost_irq)
{
    Dev *d = dev_open_full(NULL, H0, "");
    NvmeHost *h = d->h;
    uint64_t msi = nh_alloc(h, 4096, 4096);
    NvmeQueue *q;
    NvmeCqe cqe;
    NvmeSqe sqe;

    nh_msix_enable(h);
    nh_msix_set(h, 3, msi, 0xfee1, false);
    q = nh_create_ioq(h, 2, 16, 3);
    arm(d, "lost-irq,q=2,count=1");
    nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
    qt_writel(d->qt, msi, 0);
    nh_submit(h, q, &sqe);
    ck_assert(nh_wait(h, q, &cqe, 1000000000));
    ck_status(nh_status(&cqe), 0, "flush");
    qt_clock_step(d->qt, 1000000);
    ck_assert_msg(qt_readl(d->qt, msi) == 0, "an interrupt was sent");
    nh_submit(h, q, &sqe);
    ck_assert(nh_wait(h, q, &cqe, 1000000000));
    ck_assert_msg(qt_readl(d->qt, msi) == 0xfee1, "the next one was lost "
                  "too");
    dev_close(d);
}
END_TEST

START_TEST(test_bad_specs_refused)
{
    static const char *const bad[][2] = {
        { "explode", "the kind first" },
        { "status,sc=0x281,colour=red", "unknown key 'colour'" },
        { "status", "needs sc" },
        { "status,opc=identify,q=io,sc=0x2", "another queue" },
        { "lost-irq,lba=9-1", "bad value '9-1' for 'lba'" },
    };
    Dev *d = dev_open_full(NULL, H0, "");
    g_autofree char *before = NULL, *after = NULL;

    arm(d, "lost-irq,count=0");
    before = faults(d);
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *r = qom_set(d, "fault", bad[i][0]);

        ck_assert_msg(strstr(r, "\"error\"") && strstr(r, bad[i][1]),
                      "'%s': %s", bad[i][0], r);
    }
    for (int i = 1; i < H3100_FAULT_MAX; i++) {
        arm(d, "lost-irq,opc=0x7f");
    }
    {
        g_autofree char *r = qom_set(d, "fault", "lost-irq");

        ck_assert_msg(strstr(r, "armed already"), "%s", r);
    }
    {
        g_autofree char *r = qom_set(d, "fault-clear", "99");

        ck_assert_msg(strstr(r, "no fault 99"), "%s", r);
    }
    g_free(qom_set(d, "fault-clear", "all"));
    after = faults(d);
    ck_assert_msg(strstr(after, "\"return\": \"\""), "%s", after);
    ck_assert(strstr(before, "1 lost-irq,count=0 matched=0 fired=0"));
    dev_close(d);
}
END_TEST

/* Armed at start (-device ...,fault=), kept by a reset, gone with power */
START_TEST(test_at_start_reset_and_power_cut)
{
    Dev *d = dev_open_full(NULL, H0 ",fault=status,,opc=read,,count=0,,"
                           "sc=0x281", "");
    g_autofree char *list = NULL;
    NvmeCqe cqe;

    ck_status(read_at(d, 0, 1, &cqe), SC_UNRECOVERED_READ, "read");
    nh_disable(d->h);                     /* a controller reset */
    dev_reprobe(d);
    ck_status(read_at(d, 0, 1, &cqe), SC_UNRECOVERED_READ, "after reset");
    g_free(qom_set(d, "power-cut", "drive"));
    list = faults(d);
    ck_assert_msg(strstr(list, "\"return\": \"\""), "%s", list);
    dev_reprobe(d);
    ck_status(read_at(d, 0, 1, &cqe), 0, "after the power cut");
    dev_close(d);
}
END_TEST

/* The pattern of 1s (fired) over @n reads of LBA 0 */
static void fire_pattern(Dev *d, unsigned n, GString *out)
{
    NvmeCqe cqe;

    for (unsigned i = 0; i < n; i++) {
        g_string_append_c(out, read_at(d, 0, 1, &cqe) ? '1' : '0');
    }
}

#define PROB_FAULT "status,opc=read,prob=400000,count=0,sc=0x281"

/*
 * A prob= fault fires on the same reads after a migration or a loadvm
 * as it would have without: its counters and generator travel.
 */
START_TEST(test_migrate_and_savevm)
{
    g_autofree char *img = qt_backing_file("inject.qcow2", DEV_NS_BYTES,
                                           "qcow2");
    g_autofree char *drive = g_strdup_printf("file=%s,format=qcow2", img);
    GString *ref = g_string_new(NULL), *got = g_string_new(NULL);
    g_autofree char *st = NULL, *list1 = NULL, *list2 = NULL;
    g_autofree char *err = NULL;
    Dev *d;

    d = dev_open_full(NULL, H0 ",seed=9", "");
    arm(d, PROB_FAULT);
    fire_pattern(d, 40, ref);
    dev_close(d);
    ck_assert(strchr(ref->str, '1') && strchr(ref->str, '0'));

    /* 20 reads, a migration, 20 more */
    d = dev_open_full(NULL, H0 ",seed=9", "");
    arm(d, PROB_FAULT);
    fire_pattern(d, 20, got);
    list1 = faults(d);
    st = dev_migrate(d, d->dev_opts, d->extra_args, NULL, &err);
    ck_assert_msg(!strcmp(st, "completed"), "%s: %s", st, err);
    list2 = faults(d);
    ck_assert_str_eq(list1, list2);
    fire_pattern(d, 20, got);
    ck_assert_str_eq(ref->str, got->str);
    dev_close(d);

    /* savevm after 10, 30 more, loadvm: the 30 again, alike */
    g_string_truncate(got, 0);
    d = dev_open_drive(drive, H0 ",seed=9", "");
    arm(d, PROB_FAULT);
    fire_pattern(d, 10, got);
    qt_qmp_ok(d->qt, "{\"execute\": \"human-monitor-command\", "
              "\"arguments\": {\"command-line\": \"savevm s1\"}}");
    fire_pattern(d, 30, got);
    ck_assert_str_eq(ref->str, got->str);
    g_free(qom_set(d, "fault-clear", "all"));
    qt_qmp_ok(d->qt, "{\"execute\": \"human-monitor-command\", "
              "\"arguments\": {\"command-line\": \"loadvm s1\"}}");
    g_string_truncate(got, 10);
    fire_pattern(d, 30, got);
    ck_assert_str_eq(ref->str, got->str);
    dev_close(d);
    g_string_free(ref, true);
    g_string_free(got, true);
}
END_TEST

/* ---- read-only, ns-detach, ns-attach ----------------------------------- */

#define SC_WRITE_PROTECTED  0x020
#define SC_INVALID_NSID     0x00b
#define AEC_SMART_AND_NS    0x1ff     /* feature 0Bh: SMART bits, bit 8 */
#define AEC_NS_ATTR         0x100
#define IDN_NSATTR          99        /* Identify Namespace: bit 0, WP */
#define IDN_NSZE            0
#define LOG_CHANGED_NS      0x04
#define AER_NOTICE_NS       (2 | 0 << 8 | LOG_CHANGED_NS << 16)
#define AER_SMART_RELIABLE  (1 | 0 << 8 | NVME_LOG_SMART << 16)
#define SMART_RO_WARNINGS   0x0c      /* reliability degraded, read-only */

/* A write of one block of @v at @slba on namespace 1 */
static uint16_t write_byte(Dev *d, uint64_t slba, uint8_t v)
{
    uint8_t buf[512];

    memset(buf, v, sizeof(buf));
    return nh_write(d->h, d->q, slba, buf, sizeof(buf));
}

/* Does LBA @slba of namespace 1 read back as @v? */
static bool reads_byte(Dev *d, uint64_t slba, uint8_t v)
{
    uint8_t buf[512], want[512];

    memset(want, v, sizeof(want));
    ck_status(nh_read(d->h, d->q, slba, buf, sizeof(buf)), 0, "read %"
              PRIu64, slba);
    return !memcmp(buf, want, sizeof(buf));
}

static uint8_t smart_warning(Dev *d)
{
    uint8_t smart[512];

    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, smart, 512, 0), 0,
              "SMART log");
    return smart[0];
}

static uint8_t ns1_nsattr(Dev *d)
{
    uint8_t id[4096];

    ck_status(nh_identify(d->h, 0, 1, id), 0, "identify namespace 1");
    return id[IDN_NSATTR];
}

/* The active namespace list (CNS 02h) has NSID 1 */
static bool ns1_active(Dev *d)
{
    uint8_t list[4096];

    ck_status(nh_identify(d->h, 2, 0, list), 0, "active namespace list");
    return le32_at(list, 0) == 1;
}

/* An event comes for the AER @cid: its DW0 (the test fails if none) */
static uint32_t aer_event(Dev *d, uint16_t cid)
{
    NvmeCqe cqe;

    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 1000000000),
                  "no asynchronous event");
    return cqe.dw0;
}

/* Log 04h: its first NSID (0: empty); read, it empties, events re-arm */
static uint32_t changed_ns(Dev *d)
{
    uint8_t log[4096];

    ck_status(nh_get_log(d->h, LOG_CHANGED_NS, 0xffffffff, log, 4096, 0), 0,
              "log 04h");
    return le32_at(log, 0);
}

static void refused(Dev *d, const char *spec, const char *why)
{
    g_autofree char *r = qom_set(d, "fault", spec);

    ck_assert_msg(strstr(r, "\"error\"") && strstr(r, why), "'%s': %s",
                  spec, r);
}

/*
 * read-only: writes fail with Namespace is Write Protected (20h, DNR)
 * as on the worn-out drive, reads work, SMART shows 0x0c with its
 * reliability event; NSATTR stays clear and no notice comes.  Cleared,
 * the drive writes again.
 */
START_TEST(test_read_only)
{
    Dev *d = dev_open_full(NULL, H0, "");
    NvmeCqe cqe;
    uint16_t cid;

    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, AEC_SMART_AND_NS,
                              false, NULL), 0, "enable events");
    ck_status(write_byte(d, 0, 0xa5), 0, "write before");
    cid = submit_aer(d);
    arm(d, "read-only");
    ck_assert_uint_eq(aer_event(d, cid), AER_SMART_RELIABLE);
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE, 1, 0, 1,
                    nh_alloc(d->h, 512, 4096), 0, &cqe), SC_WRITE_PROTECTED,
              "write while read-only");
    ck_assert(nh_dnr(&cqe));
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_ZEROES, 1, 0, 1, 0, 0, &cqe),
              SC_WRITE_PROTECTED, "write zeroes while read-only");
    ck_assert(reads_byte(d, 0, 0xa5));
    ck_assert_uint_eq(smart_warning(d), SMART_RO_WARNINGS);
    ck_assert_uint_eq(ns1_nsattr(d), 0);
    cid = submit_aer(d);
    ck_assert_msg(!nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100000000),
                  "an event 0x%08x without nsattr=on", cqe.dw0);
    ck_assert_uint_eq(changed_ns(d), 0);

    g_free(qom_set(d, "fault-clear", "all"));
    ck_status(write_byte(d, 0, 0x5a), 0, "write after fault-clear");
    ck_assert(reads_byte(d, 0, 0x5a));
    ck_assert_uint_eq(smart_warning(d), 0);
    dev_close(d);
}
END_TEST

/*
 * read-only,nsattr=on: NSATTR.WP and a Namespace Attribute Changed
 * notice naming namespace 1; fault-clear takes WP away with the notice
 * again.
 */
START_TEST(test_read_only_nsattr)
{
    Dev *d = dev_open_full(NULL, H0, "");
    g_autofree char *list = NULL;
    uint16_t cid;

    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, AEC_NS_ATTR,
                              false, NULL), 0, "enable namespace notices");
    cid = submit_aer(d);
    arm(d, "read-only,nsattr=on");
    ck_assert_uint_eq(aer_event(d, cid), AER_NOTICE_NS);
    ck_assert_uint_eq(changed_ns(d), 1);
    ck_assert_uint_eq(ns1_nsattr(d) & 1, 1);
    ck_status(write_byte(d, 0, 1), SC_WRITE_PROTECTED, "write");
    list = faults(d);
    ck_assert_msg(strstr(list, "1 read-only,nsattr=on matched=1 fired=1"),
                  "%s", list);
    cid = submit_aer(d);
    g_free(qom_set(d, "fault-clear", "1"));
    ck_assert_uint_eq(aer_event(d, cid), AER_NOTICE_NS);
    ck_assert_uint_eq(changed_ns(d), 1);
    ck_assert_uint_eq(ns1_nsattr(d), 0);
    ck_status(write_byte(d, 0, 1), 0, "write after fault-clear");
    dev_close(d);

    /* armed at start: read-only from the first Identify on */
    d = dev_open_full(NULL, H0 ",fault=read-only,,nsattr=on", "");
    ck_assert_uint_eq(ns1_nsattr(d), 1);
    ck_status(write_byte(d, 0, 1), SC_WRITE_PROTECTED, "write");
    ck_assert_uint_eq(smart_warning(d), SMART_RO_WARNINGS);
    dev_close(d);
}
END_TEST

/*
 * ns-detach: namespace 1 leaves the active list, its I/O gets Invalid
 * Namespace (0Bh), the notice and log 04h name it; the drive keeps that
 * through a restart (state=), as a guest's own detach.  ns-attach brings
 * it back with its data.  Specs that name no namespace, or one that is
 * not there or not in the state asked for, are refused.
 */
START_TEST(test_ns_detach_attach)
{
    g_autofree char *path = g_strdup_printf("%s/inject-ns.h3s", qt_tmpdir());
    g_autofree char *opts = g_strdup_printf(H0 ",state=%s", path);
    g_autofree char *img = qt_backing_file("inject-ns.raw", DEV_NS_BYTES,
                                           "raw");
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw", img);
    g_autofree char *list = NULL;
    uint8_t id[4096];
    uint16_t cid;
    NvmeCqe cqe;
    Dev *d;

    unlink(path);
    d = dev_open_drive(drive, opts, "");
    ck_status(write_byte(d, 3, 0x3c), 0, "write");
    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, AEC_NS_ATTR,
                              false, NULL), 0, "enable namespace notices");
    refused(d, "ns-detach", "needs ns=N");
    refused(d, "ns-detach,ns=2", "namespace 2 does not exist");
    refused(d, "ns-attach,ns=1", "already attached");
    cid = submit_aer(d);
    arm(d, "ns-detach,ns=1");
    ck_assert_uint_eq(aer_event(d, cid), AER_NOTICE_NS);
    ck_assert_uint_eq(changed_ns(d), 1);
    ck_assert(!ns1_active(d));
    ck_status(nh_identify(d->h, 0, 1, id), 0, "identify namespace 1");
    ck_assert_uint_eq(le64_at(id, IDN_NSZE), 0);
    ck_status(nh_io(d->h, d->q, NVME_CMD_READ, 1, 3, 1,
                    nh_alloc(d->h, 512, 4096), 0, &cqe), SC_INVALID_NSID,
              "read of the detached namespace");
    ck_assert(nh_dnr(&cqe));
    refused(d, "ns-detach,ns=1", "not attached");
    list = faults(d);
    ck_assert_msg(strstr(list, "1 ns-detach,ns=1 matched=1 fired=1 spent"),
                  "%s", list);
    dev_close(d);

    /* drive state: detached after a restart, with no fault armed */
    d = dev_launch_on(drive, NULL, opts, "");
    nh_enable(d->h, 32);
    d->q = nh_create_ioq(d->h, 1, 64, -1);
    ck_assert(!ns1_active(d));
    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, AEC_NS_ATTR,
                              false, NULL), 0, "enable namespace notices");
    cid = submit_aer(d);
    arm(d, "ns-attach,ns=1");
    ck_assert_uint_eq(aer_event(d, cid), AER_NOTICE_NS);
    ck_assert_uint_eq(changed_ns(d), 1);
    ck_assert(ns1_active(d));
    ck_assert(reads_byte(d, 3, 0x3c));
    dev_close(d);
    unlink(path);
}
END_TEST

static void hmp(Dev *d, const char *cmd)
{
    g_autofree char *r = qt_qmp(d->qt, "{\"execute\": "
                                "\"human-monitor-command\", \"arguments\": "
                                "{\"command-line\": \"%s\"}}", cmd);

    ck_assert_msg(strstr(r, "\"return\": \"\""), "%s: %s", cmd, r);
}

static void migrate(Dev *d)
{
    g_autofree char *st = NULL, *err = NULL;

    st = dev_migrate(d, d->dev_opts, d->extra_args, NULL, &err);
    ck_assert_msg(!strcmp(st, "completed"), "%s: %s", st, err);
}

/* The drive read-only by a fault, as far as the guest can tell */
static void ck_read_only(Dev *d, bool ro)
{
    ck_status(write_byte(d, 9, 0x77), ro ? SC_WRITE_PROTECTED : 0, "write");
    ck_assert_uint_eq(ns1_nsattr(d), ro);
    ck_assert_uint_eq(smart_warning(d), ro ? SMART_RO_WARNINGS : 0);
}

/*
 * read-only and a detached namespace travel with a migration, and a
 * loadvm brings back what the savevm saw.
 */
START_TEST(test_read_only_and_ns_migrate)
{
    g_autofree char *img = qt_backing_file("inject-ro.qcow2", DEV_NS_BYTES,
                                           "qcow2");
    g_autofree char *drive = g_strdup_printf("file=%s,format=qcow2", img);
    Dev *d = dev_open_drive(drive, H0, "");
    NvmeCqe cqe;

    ck_status(write_byte(d, 0, 0xc3), 0, "write");
    arm(d, "read-only,nsattr=on");
    migrate(d);
    ck_read_only(d, true);
    hmp(d, "savevm ro");
    g_free(qom_set(d, "fault-clear", "all"));
    ck_read_only(d, false);
    arm(d, "ns-detach,ns=1");
    hmp(d, "loadvm ro");
    ck_assert(ns1_active(d));
    ck_read_only(d, true);

    g_free(qom_set(d, "fault-clear", "all"));
    arm(d, "ns-detach,ns=1");
    migrate(d);
    ck_assert(!ns1_active(d));
    ck_status(nh_io(d->h, d->q, NVME_CMD_READ, 1, 0, 1,
                    nh_alloc(d->h, 512, 4096), 0, &cqe), SC_INVALID_NSID,
              "read of the detached namespace");
    hmp(d, "savevm gone");
    arm(d, "ns-attach,ns=1");
    ck_assert(ns1_active(d));
    hmp(d, "loadvm gone");
    ck_assert(!ns1_active(d));
    arm(d, "ns-attach,ns=1");
    ck_assert(reads_byte(d, 0, 0xc3));
    ck_read_only(d, false);
    dev_close(d);
}
END_TEST

/* ---- link-down ------------------------------------------------------------ */

#define SEC 1000000000LL
#define MSIX_TABLE  0x2000            /* in BAR0 (hw/h3100-pci.c) */
#define MSIX_PBA    0x4000

/* The drive's link as the host sees it: up when CSTS does not read ~0 */
static bool link_up(Dev *d)
{
    return nh_rd32(d->h, NVME_REG_CSTS) != 0xffffffff;
}

/*
 * The link is back: the return resets the drive in a main-loop bottom
 * half (a DL_Down resets the function); wait for it, then the host's own
 * reset brings the controller up again.
 */
static void link_back(Dev *d)
{
    for (int64_t t = qt_wall_ms() + 5000; !link_up(d);) {
        ck_assert_msg(qt_wall_ms() < t, "the link never came back");
        g_usleep(1000);
    }
    ck_assert_uint_eq(nh_rd32(d->h, NVME_REG_CC), 0);
    ck_assert_uint_eq(nh_rd32(d->h, NVME_REG_CSTS), 0);
    dev_reprobe(d);
}

/* Every read the host can make of the drive, while its link is down */
static void ck_all_ones(Dev *d)
{
    NvmeHost *h = d->h;

    ck_assert_uint_eq(qt_pci_cfg_readl(d->qt, h->devfn, 0x00),
                      0xffffffff);
    ck_assert_uint_eq(qt_pci_cfg_readw(d->qt, h->devfn, 0x04), 0xffff);
    ck_assert_uint_eq(qt_pci_cfg_readb(d->qt, h->devfn, 0x3c), 0xff);
    ck_assert_uint_eq(nh_rd32(h, NVME_REG_CSTS), 0xffffffff);
    ck_assert_uint_eq(nh_rd64(h, NVME_REG_CAP), UINT64_MAX);
    ck_assert_uint_eq(qt_readb(d->qt, h->bar + NVME_REG_VS), 0xff);
    ck_assert_uint_eq(qt_readl(d->qt, h->bar + MSIX_TABLE), 0xffffffff);
    ck_assert_uint_eq(qt_readl(d->qt, h->bar + MSIX_PBA), 0xffffffff);
}

/*
 * link-down: config space, registers and the MSI-X table read all-ones,
 * writes are dropped; fault-clear brings it back with all of it intact,
 * and the controller as it was.
 */
START_TEST(test_link_down_reads)
{
    Dev *d = dev_open_full(NULL, H0, "");
    NvmeHost *h = d->h;
    uint32_t id, cmd, msix0;
    g_autofree char *list = NULL;
    NvmeCqe cqe;

    nh_msix_enable(h);
    nh_msix_set(h, 1, nh_alloc(h, 4096, 4096), 0x1234, false);
    id = qt_pci_cfg_readl(d->qt, h->devfn, 0x00);
    cmd = qt_pci_cfg_readw(d->qt, h->devfn, 0x04);
    msix0 = qt_readl(d->qt, h->msix_table + 16);
    arm(d, "link-down");
    ck_all_ones(d);
    /* writes go nowhere: config, a register, the MSI-X table */
    qt_pci_cfg_writew(d->qt, h->devfn, 0x04, 0);
    nh_wr32(h, NVME_REG_CC, 0);
    qt_writel(d->qt, h->msix_table + 16, 0);
    qt_clock_step(d->qt, 10 * SEC);
    ck_all_ones(d);
    list = faults(d);
    ck_assert_msg(strstr(list, "1 link-down matched=1 fired=1 spent"), "%s",
                  list);
    g_free(qom_set(d, "fault-clear", "1"));
    ck_assert_uint_eq(qt_pci_cfg_readl(d->qt, h->devfn, 0x00),
                      id);
    ck_assert_uint_eq(qt_pci_cfg_readw(d->qt, h->devfn, 0x04), cmd);
    ck_assert_uint_eq(qt_readl(d->qt, h->msix_table + 16), msix0);
    link_back(d);
    ck_status(read_at(d, 0, 1, &cqe), 0, "read after fault-clear");
    dev_close(d);
}
END_TEST

/*
 * link-down,for=2s: a read in flight loses its completion (and lets go
 * of its slot: the reset at the return does not wait for it); a doorbell
 * rung while down is lost; 2 s on the link is back with the controller
 * reset, and after the host's reset new commands complete.
 */
START_TEST(test_link_down_for)
{
    Dev *d = dev_open_full(NULL, H0, "");
    uint16_t lost, unrung;
    int64_t t0;
    NvmeCqe cqe;

    lost = read_nowait(d, 5);
    t0 = qt_clock_now(d->qt);
    arm(d, "link-down,for=2s");
    ck_assert(!nh_wait_cid(d->h, d->q, lost, &cqe, SEC));
    unrung = read_nowait(d, 6);
    ck_assert(!nh_wait_cid(d->h, d->q, unrung, &cqe, SEC / 2));
    ck_assert_int_lt(qt_clock_now(d->qt) - t0, 2 * SEC);
    ck_all_ones(d);
    qt_clock_set(d->qt, t0 + 2 * SEC + 1000);
    link_back(d);
    ck_assert(!nh_wait_cid(d->h, d->q, unrung, &cqe, SEC / 10));
    ck_assert(!nh_wait_cid(d->h, d->q, lost, &cqe, SEC / 10));
    ck_status(read_at(d, 0, 1, &cqe), 0, "read after the host's reset");
    dev_close(d);
}
END_TEST

/*
 * A power cut while down takes the fault with the power: the drive comes
 * back from power-on, its command in flight gone.  A machine reset keeps
 * it down (its config space still reads all-ones).
 */
START_TEST(test_link_down_reset_and_power_cut)
{
    Dev *d = dev_open_full(NULL, H0, "");
    g_autofree char *list = NULL;
    NvmeCqe cqe;

    read_nowait(d, 5);
    arm(d, "link-down");
    qt_clock_step(d->qt, SEC);
    g_free(qom_set(d, "power-cut", "drive"));
    ck_assert(link_up(d));
    list = faults(d);
    ck_assert_msg(strstr(list, "\"return\": \"\""), "%s", list);
    dev_reprobe(d);
    ck_status(read_at(d, 0, 1, &cqe), 0, "read after the power cut");
    read_nowait(d, 5);
    arm(d, "link-down");
    qt_qmp_ok(d->qt, "{\"execute\": \"system_reset\"}");
    qt_clock_step(d->qt, SEC);
    ck_assert_uint_eq(qt_pci_cfg_readl(d->qt, d->h->devfn, 0x00),
                      0xffffffff);
    dev_close(d);
}
END_TEST

/* In an IOThread the return comes from its timer there: BAR0 follows */
START_TEST(test_link_down_iothread)
{
    Dev *d = dev_open_full(NULL, H0 ",iothread=io0",
                           "-object iothread,id=io0");
    int64_t t0 = qt_clock_now(d->qt);
    NvmeCqe cqe;

    arm(d, "link-down,for=1s");
    ck_all_ones(d);
    qt_clock_set(d->qt, t0 + SEC + 1000);
    link_back(d);
    ck_status(read_at(d, 0, 1, &cqe), 0, "read after the return");
    dev_close(d);
}
END_TEST

/* Down across a migration, back at the same virtual time */
START_TEST(test_link_down_migrates)
{
    Dev *d = dev_open_full(NULL, H0, "");
    g_autofree char *st = NULL, *err = NULL;
    int64_t t0;
    NvmeCqe cqe;

    t0 = qt_clock_now(d->qt);
    arm(d, "link-down,for=3s");
    qt_clock_step(d->qt, SEC);
    st = dev_migrate(d, d->dev_opts, d->extra_args, NULL, &err);
    ck_assert_msg(!strcmp(st, "completed"), "%s: %s", st, err);
    ck_all_ones(d);
    qt_clock_set(d->qt, t0 + 3 * SEC - 1000000);
    ck_assert(!link_up(d));
    qt_clock_set(d->qt, t0 + 3 * SEC + 1000);
    link_back(d);
    ck_status(read_at(d, 0, 1, &cqe), 0, "read on the destination");
    dev_close(d);
}
END_TEST

/* savevm while down; loadvm puts it down again, back at the same time */
START_TEST(test_link_down_savevm)
{
    g_autofree char *img = qt_backing_file("link.qcow2", DEV_NS_BYTES,
                                           "qcow2");
    g_autofree char *drive = g_strdup_printf("file=%s,format=qcow2", img);
    Dev *d = dev_open_drive(drive, H0, "");
    int64_t t0;
    NvmeCqe cqe;

    t0 = qt_clock_now(d->qt);
    arm(d, "link-down,for=3s");
    qt_qmp_ok(d->qt, "{\"execute\": \"human-monitor-command\", "
              "\"arguments\": {\"command-line\": \"savevm s1\"}}");
    g_free(qom_set(d, "fault-clear", "all"));
    ck_assert(link_up(d));
    qt_qmp_ok(d->qt, "{\"execute\": \"human-monitor-command\", "
              "\"arguments\": {\"command-line\": \"loadvm s1\"}}");
    ck_all_ones(d);
    qt_clock_set(d->qt, t0 + 3 * SEC - 1000000);
    ck_assert(!link_up(d));
    qt_clock_set(d->qt, t0 + 3 * SEC + 1000);
    link_back(d);
    ck_status(read_at(d, 0, 1, &cqe), 0, "read after the return");
    dev_close(d);
}
END_TEST

START_TEST(test_link_down_bad_specs)
{
    static const char *const bad[][2] = {
        { "link-down,for=0", "bad value '0' for 'for'" },
        { "link-down,at=1s", "takes no 'at'" },
        { "link-down,opc=read", "takes no 'opc'" },
        { "link-down,count=0", "takes no 'count'" },
    };
    Dev *d = dev_open_full(NULL, H0, "");
    g_autofree char *list = NULL;
    g_autofree char *err = NULL;

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *r = qom_set(d, "fault", bad[i][0]);

        ck_assert_msg(strstr(r, "\"error\"") && strstr(r, bad[i][1]),
                      "'%s': %s", bad[i][0], r);
    }
    ck_assert(link_up(d));
    list = faults(d);
    ck_assert_msg(strstr(list, "\"return\": \"\""), "%s", list);
    dev_close(d);
    /* it acts when armed: not on the -device line */
    ck_assert(qt_start_fails(&err, "-drive driver=null-co,size=%llu,"
                             "if=none,id=d0 -device dapustor-h3100,drive=d0,"
                             "model-params=user_bytes=256M,fault=link-down",
                             (unsigned long long)DEV_NS_BYTES));
    ck_assert_msg(strstr(err, "link-down acts when armed"), "%s", err);
}
END_TEST

/* ---- PCIe AER capability ---------------------------------------------------- */

#define Q35_PCIEXBAR        0x60
#define ECAM_BASE           0xb0000000ULL
#define AER_CAP             0x100
#define AER_UNCOR_STATUS    0x04
#define AER_UNC_POISON_TLP  0x00001000
#define PCIE_CAP            0x80      /* hw/h3100.h */
#define PCIE_LNKCAP         0x0c

/* Extended config space (ECAM): q35's MMCONFIG, opened here */
static uint32_t ecam_readl(Dev *d, int reg)
{
    qt_pci_cfg_writel(d->qt, 0, Q35_PCIEXBAR, (uint32_t)ECAM_BASE | 1);
    return qt_readl(d->qt, ECAM_BASE + ((uint64_t)d->h->devfn << 12) + reg);
}

/* An HMP command's reply, whatever it says */
static char *hmp_reply(Dev *d, const char *cmd)
{
    return qt_qmp(d->qt, "{\"execute\": \"human-monitor-command\", "
                  "\"arguments\": {\"command-line\": \"%s\"}}", cmd);
}

/* aer=on: the extended capability, and pcie_aer_inject_error reaches it */
START_TEST(test_pcie_aer)
{
    Dev *d = dev_open_full(NULL, H0, "");
    g_autofree char *r = NULL, *st = NULL, *err = NULL;
    uint32_t lnkcap;

    ck_assert_uint_eq(ecam_readl(d, 0x00),
                      qt_pci_cfg_readl(d->qt, d->h->devfn,
                                       0x00));
    ck_assert_uint_eq(ecam_readl(d, AER_CAP), 0);     /* off by default */
    dev_close(d);

    d = dev_open_full(NULL, H0 ",aer=on", "");
    ck_assert_uint_eq(ecam_readl(d, AER_CAP) & 0xfffff, 0x20001);
    ck_assert_uint_eq(ecam_readl(d, AER_CAP + AER_UNCOR_STATUS), 0);
    lnkcap = ecam_readl(d, PCIE_CAP + PCIE_LNKCAP);
    r = hmp_reply(d, "pcie_aer_inject_error h0 POISON_TLP");
    ck_assert_msg(strstr(r, "OK id: h0"), "%s", r);
    ck_assert_uint_eq(ecam_readl(d, AER_CAP + AER_UNCOR_STATUS),
                      AER_UNC_POISON_TLP);
    /* QEMU's injection clobbers Link Capabilities; the drive keeps them */
    ck_assert_uint_eq(ecam_readl(d, PCIE_CAP + PCIE_LNKCAP), lnkcap);
    /* the status is config space: it migrates */
    st = dev_migrate(d, d->dev_opts, d->extra_args, NULL, &err);
    ck_assert_msg(!strcmp(st, "completed"), "%s: %s", st, err);
    ck_assert_uint_eq(ecam_readl(d, AER_CAP) & 0xfffff, 0x20001);
    ck_assert_uint_eq(ecam_readl(d, AER_CAP + AER_UNCOR_STATUS),
                      AER_UNC_POISON_TLP);
    dev_close(d);
}
END_TEST

/* ---- media ------------------------------------------------------------- */

#define SC_WRITE_FAULT      0x280
#define SMART_MEDIA         160       /* media and data integrity errors */
#define OCP_UNCOR_READS     56        /* C0h: uncorrectable read errors */

/* The SMART media errors and OCP C0h's uncorrectable reads, now */
typedef struct MediaCounts {
    uint64_t smart, ocp;
} MediaCounts;

static MediaCounts media_counts(Dev *d)
{
    uint8_t log[512];
    MediaCounts c;

    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, log, 512, 0), 0,
              "SMART log");
    c.smart = le64_at(log, SMART_MEDIA);
    ck_status(nh_get_log(d->h, 0xc0, 0xffffffff, log, 512, 0), 0, "C0h");
    c.ocp = le64_at(log, OCP_UNCOR_READS);
    return c;
}

/* The newest Error Information entry: its status (with DNR), LBA, NSID */
static void last_error(Dev *d, uint16_t status, uint64_t lba)
{
    uint8_t log[64];

    ck_status(nh_get_log(d->h, NVME_LOG_ERROR, 0xffffffff, log, 64, 0), 0,
              "error log");
    ck_assert_uint_eq(le16_at(log, 12) >> 1, status);
    ck_assert_uint_eq(le64_at(log, 16), lba);
    ck_assert_uint_eq(le32_at(log, 24), 1);
}

/* Log 0Eh: namespace 1's first range (RSLBA, RNLB + 1), NLRD */
static uint32_t lba_status_range(Dev *d, uint64_t *slba, uint64_t *nlb)
{
    uint8_t log[512];

    ck_status(nh_get_log(d->h, NVME_LOG_LBA_STATUS, 0xffffffff, log, 512, 0),
              0, "log 0Eh");
    if (!le32_at(log, 4)) {
        return 0;                     /* NLSLNE: no namespace */
    }
    ck_assert_uint_eq(le32_at(log, 16), 1);       /* NEID */
    *slba = le64_at(log, 32);
    *nlb = le32_at(log, 40) + 1ull;
    return le32_at(log, 16 + 4);                    /* NLRD */
}

static void ck_faults_has(Dev *d, const char *want)
{
    g_autofree char *list = faults(d);

    ck_assert_msg(strstr(list, want), "faults lacks '%s': %s", want, list);
}

static void ck_faults_lacks(Dev *d, const char *what)
{
    g_autofree char *list = faults(d);

    ck_assert_msg(!strstr(list, what), "faults has '%s': %s", what, list);
}

/*
 * media,rw=read: reads that overlap the LBAs fail with 281h, with DNR as
 * asked, until the LBAs are written again; the error log, SMART and OCP
 * C0h count each failed read, log 0Eh and `faults` show the range.
 */
START_TEST(test_media_read)
{
    Dev *d = dev_open_full(NULL, H0, "");
    MediaCounts c0, c1;
    uint64_t slba, nlb;
    NvmeCqe cqe;

    c0 = media_counts(d);
    arm(d, "media,rw=read,lba=2048+8,dnr=on");
    ck_status(read_at(d, 2040, 8, &cqe), 0, "read before the range");
    ck_status(read_at(d, 2044, 8, &cqe), SC_UNRECOVERED_READ, "overlap");
    ck_assert(nh_dnr(&cqe));
    ck_status(read_at(d, 2048, 8, &cqe), SC_UNRECOVERED_READ, "the range");
    ck_assert(nh_dnr(&cqe));
    last_error(d, SC_UNRECOVERED_READ | STATUS_DNR, 2048);
    c1 = media_counts(d);
    ck_assert_uint_eq(c1.smart - c0.smart, 2);
    ck_assert_uint_eq(c1.ocp - c0.ocp, 2);
    ck_assert_uint_eq(lba_status_range(d, &slba, &nlb), 1);
    ck_assert_uint_eq(slba, 2048);
    ck_assert_uint_eq(nlb, 8);
    ck_faults_has(d, "- media,rw=read,ns=1,lba=2048-2055,dnr=on");

    /* dnr=off: the same status, retryable; sticky, not one-shot */
    arm(d, "media,lba=4096+1");
    for (int i = 0; i < 2; i++) {
        ck_status(read_at(d, 4096, 1, &cqe), SC_UNRECOVERED_READ, "dnr=off");
        ck_assert(!nh_dnr(&cqe));
    }
    last_error(d, SC_UNRECOVERED_READ, 4096);
    ck_faults_has(d, "- media,rw=read,ns=1,lba=4096-4096,dnr=off");
    dev_close(d);
}
END_TEST

/*
 * A Write, a Write Zeroes and a deallocate each clear what they cover;
 * the range shrinks in `faults` and goes, and the reads succeed.
 */
START_TEST(test_media_rewrite_clears)
{
    Dev *d = dev_open_full(NULL, H0, "");
    uint8_t data[512] = { 0x5a };
    uint32_t range[4] = { 0, 4, 2052, 0 };  /* attrs, NLB, SLBA lo, hi */
    uint64_t slba, nlb, buf;
    NvmeSqe sqe;
    NvmeCqe cqe;

    arm(d, "media,rw=read,lba=2048+8,dnr=on");
    ck_status(nh_write(d->h, d->q, 2048, data, 512), 0, "write LBA 2048");
    ck_status(read_at(d, 2048, 1, &cqe), 0, "read the rewritten LBA");
    ck_faults_has(d, "- media,rw=read,ns=1,lba=2049-2055,dnr=on");
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_ZEROES, 1, 2049, 3, 0, 0,
                    NULL), 0, "write zeroes 2049-2051");
    ck_faults_has(d, "- media,rw=read,ns=1,lba=2052-2055,dnr=on");
    ck_status(read_at(d, 2052, 1, &cqe), SC_UNRECOVERED_READ, "still bad");
    buf = nh_alloc(d->h, 4096, 4096);
    qt_memwrite(d->qt, buf, range, sizeof(range));
    nh_sqe_init(&sqe, NVME_CMD_DSM, 1);
    sqe.prp1 = buf;
    sqe.cdw11 = 1u << 2;              /* AD: deallocate */
    cqe = nh_cmd(d->h, d->q, &sqe);
    ck_status(nh_status(&cqe), 0, "deallocate 2052-2055");
    ck_faults_lacks(d, "media");
    ck_assert_uint_eq(lba_status_range(d, &slba, &nlb), 0);
    ck_status(read_at(d, 2048, 8, &cqe), 0, "read the whole range");
    dev_close(d);
}
END_TEST

/* media,rw=write: the overlapping Write fails once with 280h, then works */
START_TEST(test_media_write)
{
    Dev *d = dev_open_full(NULL, H0, "");
    uint8_t data[1024] = { 0x11 };
    MediaCounts c0, c1;

    c0 = media_counts(d);
    arm(d, "media,rw=write,lba=10+2,dnr=on");
    ck_status(nh_write(d->h, d->q, 0, data, 1024), 0, "write LBA 0-1");
    ck_status(nh_write(d->h, d->q, 11, data, 1024), SC_WRITE_FAULT,
              "write LBA 11-12");
    last_error(d, SC_WRITE_FAULT | STATUS_DNR, 11);
    ck_status(nh_write(d->h, d->q, 11, data, 1024), 0, "write again");
    ck_faults_has(d, "1 media,rw=write,lba=10-11,count=1,dnr=on matched=1 "
                  "fired=1 spent");
    c1 = media_counts(d);
    ck_assert_uint_eq(c1.smart - c0.smart, 1);

    /* Write Zeroes too, count= times, without DNR */
    arm(d, "media,rw=write,lba=20-20,count=2");
    for (int i = 0; i < 3; i++) {
        NvmeCqe cqe;
        uint16_t st = nh_io(d->h, d->q, NVME_CMD_WRITE_ZEROES, 1, 20, 1, 0, 0,
                            &cqe);

        ck_status(st, i < 2 ? SC_WRITE_FAULT : 0, "write zeroes %d", i);
        ck_assert(!nh_dnr(&cqe));
    }
    /* a write fault leaves no range behind: reads work */
    {
        NvmeCqe cqe;

        ck_status(read_at(d, 10, 12, &cqe), 0, "read after");
    }
    ck_faults_lacks(d, "- media");
    dev_close(d);
}
END_TEST

static char *inject_state_file(const char *name)
{
    return g_strdup_printf("%s/%s", qt_tmpdir(), name);
}

static Dev *state_launch(const char *path)
{
    g_autofree char *o = g_strdup_printf(H0 ",state=%s,state-interval=0",
                                         path);

    return dev_open_full(NULL, o, "");
}

/* Injected ranges are drive state: a restart keeps them, with DNR. */
START_TEST(test_media_state_file)
{
    g_autofree char *path = inject_state_file("media.h3s");
    uint64_t slba, nlb;
    NvmeCqe cqe;
    Dev *d;

    unlink(path);
    d = state_launch(path);
    arm(d, "media,rw=read,lba=300+2,dnr=on");
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, 400, 1, 0, 0, NULL),
              0, "Write Uncorrectable of LBA 400");
    dev_close(d);

    d = state_launch(path);
    ck_status(read_at(d, 301, 1, &cqe), SC_UNRECOVERED_READ, "after restart");
    ck_assert(nh_dnr(&cqe));
    ck_status(read_at(d, 400, 1, &cqe), SC_UNRECOVERED_READ, "WU's range");
    ck_assert(!nh_dnr(&cqe));
    ck_faults_has(d, "- media,rw=read,ns=1,lba=300-301,dnr=on");
    ck_faults_lacks(d, "lba=400");
    ck_assert_uint_eq(lba_status_range(d, &slba, &nlb), 2);
    dev_close(d);
    unlink(path);
}
END_TEST

/*
 * A version 6 state file (ranges without flags) still loads: its range
 * is Write Uncorrectable's, read without DNR, not listed as injected.
 */
START_TEST(test_media_v6_state_loads)
{
    g_autofree char *path = inject_state_file("v6.h3s");
    uint8_t part[120 + 16 + 4 + 8 + 32] = "H3DS";
    H3100Model *m = dev_model_new("h3100-3.2t", DEV_PARAMS, false);
    uint8_t *ns = part + 120 + 16 + 4 + 8;
    uint64_t start = 512 * 500, end = 512 * 502, bytes = DEV_NS_BYTES;
    GError *err = NULL;
    NvmeCqe cqe;
    Dev *d;

    part[4] = 6;
    memcpy(part + 48, "H3D10060", 8); /* firmware slot 1, active */
    part[72] = 1;
    part[76] = 1;                     /* one uncorrectable range */
    memcpy(part + 80, "SN-V6", 5);
    memcpy(part + 120, &start, 8);
    memcpy(part + 128, &end, 8);
    part[120 + 16 + 4] = 1;           /* namespaces created */
    part[120 + 16 + 4 + 4] = 1;       /* one: NSID 1, attached, 512 B */
    ns[0] = 1;
    ns[4] = 2;
    ns[5] = 9;
    ns[8] = 1;
    memcpy(ns + 24, &bytes, 8);
    ck_assert_msg(h3100_model_save_with(m, path, part, sizeof(part), 0, &err),
                  "%s", err ? err->message : "");
    h3100_model_free(m);
    d = state_launch(path);
    ck_status(read_at(d, 501, 1, &cqe), SC_UNRECOVERED_READ, "v6 range");
    ck_assert(!nh_dnr(&cqe));
    ck_status(read_at(d, 502, 1, &cqe), 0, "after it");
    ck_faults_lacks(d, "media");
    dev_close(d);
    unlink(path);
}
END_TEST

/* A migration and a savevm/loadvm carry the range and its DNR */
START_TEST(test_media_migrates)
{
    g_autofree char *img = qt_backing_file("media.qcow2", DEV_NS_BYTES,
                                           "qcow2");
    g_autofree char *drive = g_strdup_printf("file=%s,format=qcow2", img);
    g_autofree char *st = NULL, *err = NULL;
    uint8_t data[512] = { 0 };
    NvmeCqe cqe;
    Dev *d;

    d = dev_open_full(NULL, H0, "");
    arm(d, "media,rw=read,lba=64+4,dnr=on");
    arm(d, "media,lba=80+1");
    arm(d, "media,rw=write,lba=90+1,dnr=on");
    st = dev_migrate(d, d->dev_opts, d->extra_args, NULL, &err);
    ck_assert_msg(!strcmp(st, "completed"), "%s: %s", st, err);
    ck_status(read_at(d, 66, 1, &cqe), SC_UNRECOVERED_READ, "migrated");
    ck_assert(nh_dnr(&cqe));
    ck_status(read_at(d, 80, 1, &cqe), SC_UNRECOVERED_READ, "migrated");
    ck_assert(!nh_dnr(&cqe));
    ck_status(nh_write(d->h, d->q, 90, data, 512), SC_WRITE_FAULT,
              "the write fault migrated");
    ck_faults_has(d, "- media,rw=read,ns=1,lba=64-67,dnr=on");
    dev_close(d);

    d = dev_open_drive(drive, H0, "");
    arm(d, "media,rw=read,lba=64+4,dnr=on");
    qt_qmp_ok(d->qt, "{\"execute\": \"human-monitor-command\", "
              "\"arguments\": {\"command-line\": \"savevm m1\"}}");
    ck_status(nh_write(d->h, d->q, 64, data, 512), 0, "rewrite LBA 64");
    ck_faults_has(d, "lba=65-67");
    qt_qmp_ok(d->qt, "{\"execute\": \"human-monitor-command\", "
              "\"arguments\": {\"command-line\": \"loadvm m1\"}}");
    ck_faults_has(d, "- media,rw=read,ns=1,lba=64-67,dnr=on");
    ck_status(read_at(d, 64, 1, &cqe), SC_UNRECOVERED_READ, "after loadvm");
    ck_assert(nh_dnr(&cqe));
    dev_close(d);
}
END_TEST

START_TEST(test_media_bad_specs_refused)
{
    static const char *const bad[][2] = {
        { "media,rw=read", "needs lba=" },
        { "media,rw=bogus,lba=1+1", "bad value 'bogus' for 'rw'" },
        { "media,lba=524288+1", "beyond namespace 1's 524288 LBAs" },
        { "media,ns=2,lba=1+1", "namespace 2 is not attached" },
        { "media,rw=write,ns=1,lba=524287+2", "beyond namespace 1" },
        { "media,lba=1+1,count=2", "no 'count'" },
    };
    Dev *d = dev_open_full(NULL, H0, "");
    g_autofree char *list = NULL;

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *r = qom_set(d, "fault", bad[i][0]);

        ck_assert_msg(strstr(r, "\"error\"") && strstr(r, bad[i][1]),
                      "'%s': %s", bad[i][0], r);
    }
    list = faults(d);
    ck_assert_msg(strstr(list, "\"return\": \"\""), "%s", list);
    dev_close(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("inject");
    TCase *tc = dev_tcase(s, "inject");

    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_status);
    tcase_add_test(tc, test_timeout);
    tcase_add_test(tc, test_timeout_migrates);
    tcase_add_test(tc, test_fatal);
    tcase_add_test(tc, test_ready_delay);
    tcase_add_test(tc, test_aer_and_warning);
    tcase_add_test(tc, test_triggers);
    tcase_add_test(tc, test_delay);
    tcase_add_test(tc, test_lost_irq);
    tcase_add_test(tc, test_bad_specs_refused);
    tcase_add_test(tc, test_at_start_reset_and_power_cut);
    tcase_add_test(tc, test_migrate_and_savevm);
    tcase_add_test(tc, test_read_only);
    tcase_add_test(tc, test_read_only_nsattr);
    tcase_add_test(tc, test_ns_detach_attach);
    tcase_add_test(tc, test_read_only_and_ns_migrate);
    tcase_add_test(tc, test_link_down_reads);
    tcase_add_test(tc, test_link_down_for);
    tcase_add_test(tc, test_link_down_reset_and_power_cut);
    tcase_add_test(tc, test_link_down_iothread);
    tcase_add_test(tc, test_link_down_migrates);
    tcase_add_test(tc, test_link_down_savevm);
    tcase_add_test(tc, test_link_down_bad_specs);
    tcase_add_test(tc, test_pcie_aer);
    tcase_add_test(tc, test_media_read);
    tcase_add_test(tc, test_media_rewrite_clears);
    tcase_add_test(tc, test_media_write);
    tcase_add_test(tc, test_media_state_file);
    tcase_add_test(tc, test_media_v6_state_loads);
    tcase_add_test(tc, test_media_migrates);
    tcase_add_test(tc, test_media_bad_specs_refused);
    return dev_main(s);
}
