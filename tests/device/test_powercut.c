/*
 * Power cut on demand (hw/h3100-powercut.c, hw/h3100-vcache.c):
 * `qom-set ID power-cut drive|machine`.  With vwc=off every completed
 * write is kept; with vwc=on exactly the writes no Flush covered are
 * dropped; commands in flight get no completion; the drive comes back
 * reset, with one more power cycle and unsafe shutdown in SMART.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include <unistd.h>

#include "dev.h"

#define PC_BS       4096u
#define PC_LBA(i)   ((uint64_t)(i) * 2048)    /* 1 MiB apart */
#define SMART_POWER_CYCLES  112
#define SMART_UNSAFE        144

static void pc_pattern(uint8_t *buf, unsigned i, unsigned gen)
{
    for (unsigned j = 0; j < PC_BS; j++) {
        buf[j] = (uint8_t)(i * 13 + j * 3 + gen * 101 + 1);
    }
}

static void pc_write(Dev *d, unsigned i, unsigned gen)
{
    uint8_t buf[PC_BS];

    pc_pattern(buf, i, gen);
    ck_status(nh_write(d->h, d->q, PC_LBA(i), buf, PC_BS), 0, "write %u", i);
}

/* Block @i holds generation @gen (-1: zeroes, never written). */
static bool pc_holds(Dev *d, unsigned i, int gen)
{
    uint8_t want[PC_BS], got[PC_BS];

    if (gen < 0) {
        memset(want, 0, PC_BS);
    } else {
        pc_pattern(want, i, gen);
    }
    ck_status(nh_read(d->h, d->q, PC_LBA(i), got, PC_BS), 0, "read %u", i);
    return !memcmp(want, got, PC_BS);
}

static uint64_t pc_smart(Dev *d, unsigned off)
{
    uint8_t log[512];

    ck_status(nh_get_log(d->h, 0x02, 0xffffffff, log, sizeof(log), 0), 0,
              "SMART log");
    return le64_at(log, off);
}

static Dev *pc_open_on(const char *opts, const char *extra)
{
    g_autofree char *o = g_strdup_printf(",id=h0%s", opts);

    return dev_open_full(NULL, o, extra);
}

static Dev *pc_open(const char *opts)
{
    return pc_open_on(opts, "");
}

/* the loop tests: the main loop, then I/O queues in two IOThreads */
static const char *const pc_qmaps[] = { "", DEV_QMAP2 };

static Dev *pc_open_loop(const char *opts, int i)
{
    g_autofree char *o = g_strdup_printf("%s%s", opts, pc_qmaps[i]);

    return pc_open_on(o, i ? DEV_IOT2 : "");
}

static char *pc_cut(Dev *d, const char *how)
{
    return qt_qmp(d->qt, "{\"execute\": \"qom-set\", \"arguments\": "
                  "{\"path\": \"/machine/peripheral/h0\", "
                  "\"property\": \"power-cut\", \"value\": \"%s\"}}", how);
}

/* After a cut the controller is off: bring it up as a driver would. */
static void pc_reprobe(Dev *d)
{
    ck_assert_uint_eq(nh_rd32(d->h, 0x1c) & 1, 0);    /* CSTS.RDY */
    dev_reprobe(d);
}

static void pc_cut_ok(Dev *d, const char *how)
{
    qt_qmp_ok(d->qt, "{\"execute\": \"qom-set\", \"arguments\": "
              "{\"path\": \"/machine/peripheral/h0\", "
              "\"property\": \"power-cut\", \"value\": \"%s\"}}", how);
}

START_TEST(test_plp_keeps_completed_writes)
{
    Dev *d = pc_open("");
    uint64_t cycles, unsafe;

    for (unsigned i = 0; i < 8; i++) {
        pc_write(d, i, 0);
    }
    cycles = pc_smart(d, SMART_POWER_CYCLES);
    unsafe = pc_smart(d, SMART_UNSAFE);
    pc_cut_ok(d, "drive");
    pc_reprobe(d);
    for (unsigned i = 0; i < 8; i++) {
        ck_assert_msg(pc_holds(d, i, 0), "block %u lost with vwc=off", i);
    }
    ck_assert_uint_eq(pc_smart(d, SMART_POWER_CYCLES), cycles + 1);
    ck_assert_uint_eq(pc_smart(d, SMART_UNSAFE), unsafe + 1);
    dev_close(d);
}
END_TEST

/*
 * vwc=on: blocks 0-3 written and flushed; then block 0 rewritten, 4-7
 * written, not flushed.  The cut drops exactly the unflushed ones.
 */
START_TEST(test_vwc_drops_unflushed_writes)
{
    Dev *d = pc_open_loop(",vwc=on", _i);

    for (unsigned i = 0; i < 4; i++) {
        pc_write(d, i, 0);
    }
    ck_status(nh_flush(d->h, d->q, 1), 0, "flush");
    pc_write(d, 0, 1);
    for (unsigned i = 4; i < 8; i++) {
        pc_write(d, i, 0);
    }
    pc_cut_ok(d, "drive");
    pc_reprobe(d);
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_msg(pc_holds(d, i, 0), "flushed block %u", i);
    }
    for (unsigned i = 4; i < 8; i++) {
        ck_assert_msg(pc_holds(d, i, -1), "unflushed block %u kept", i);
    }
    dev_close(d);
}
END_TEST

/* Shutdown notification, as Linux gives it: SHN with EN still 1. */
static void pc_shutdown(Dev *d)
{
    uint32_t cc = nh_rd32(d->h, NVME_REG_CC);

    nh_wr32(d->h, NVME_REG_CC, cc | NVME_CC_SHN_NORMAL);
    ck_assert_msg(nh_wait_csts(d->h, NVME_CSTS_SHST_MASK, NVME_CSTS_SHST_DONE,
                               10000000000ll), "CSTS.SHST never 10b "
                  "(CSTS=0x%x)", nh_rd32(d->h, NVME_REG_CSTS));
}

/*
 * A power cut after the host's shutdown notification completed is a
 * safe one: no unsafe shutdown counted; and with vwc=on the shutdown
 * wrote the cache back, so no write is lost.  Once the controller is
 * enabled again the next cut is unsafe again.
 */
START_TEST(test_cut_after_shutdown_is_safe)
{
    Dev *d = pc_open(",vwc=on");
    uint64_t cycles, unsafe;

    for (unsigned i = 0; i < 4; i++) {
        pc_write(d, i, 0);                /* no Flush */
    }
    cycles = pc_smart(d, SMART_POWER_CYCLES);
    unsafe = pc_smart(d, SMART_UNSAFE);
    pc_shutdown(d);
    pc_cut_ok(d, "drive");
    pc_reprobe(d);
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_msg(pc_holds(d, i, 0), "block %u lost although the "
                      "shutdown notification completed", i);
    }
    ck_assert_uint_eq(pc_smart(d, SMART_POWER_CYCLES), cycles + 1);
    ck_assert_msg(pc_smart(d, SMART_UNSAFE) == unsafe, "unsafe shutdowns "
                  "%" PRIu64 " -> %" PRIu64 " after a clean shutdown",
                  unsafe, pc_smart(d, SMART_UNSAFE));
    pc_cut_ok(d, "drive");                /* in use again: unsafe */
    pc_reprobe(d);
    ck_assert_uint_eq(pc_smart(d, SMART_UNSAFE), unsafe + 1);
    dev_close(d);
}
END_TEST

/* FUA writes are durable at completion, even with the cache on. */
START_TEST(test_vwc_keeps_fua_writes)
{
    Dev *d = pc_open(",vwc=on");
    uint64_t a = nh_alloc(d->h, PC_BS, 4096);
    uint8_t buf[PC_BS];

    pc_pattern(buf, 1, 0);
    qt_memwrite(d->qt, a, buf, PC_BS);
    ck_status(nh_io(d->h, d->q, 0x01, 1, PC_LBA(1), PC_BS / 512, a,
                    1u << 30 /* FUA */, NULL), 0, "FUA write");
    pc_write(d, 2, 0);
    pc_cut_ok(d, "drive");
    pc_reprobe(d);
    ck_assert(pc_holds(d, 1, 0));
    ck_assert(pc_holds(d, 2, -1));
    dev_close(d);
}
END_TEST

/* Commands in flight are lost: no completion is ever posted. */
START_TEST(test_inflight_commands_lost)
{
    Dev *d = pc_open_loop("", _i);
    NvmeQueue *q[2] = { d->q, nh_create_ioq(d->h, 2, 16, -1) };
    uint8_t buf[PC_BS];
    NvmeCqe cqe;

    pc_pattern(buf, 0, 0);
    for (unsigned i = 0; i < 16; i++) {
        uint64_t a = nh_alloc(d->h, PC_BS, 4096);
        NvmeSqe sqe;

        qt_memwrite(d->qt, a, buf, PC_BS);
        nh_sqe_init(&sqe, 0x01, 1);
        nh_set_prps(d->h, &sqe, a, PC_BS);
        sqe.cdw10 = PC_LBA(i);
        sqe.cdw12 = PC_BS / 512 - 1;
        nh_sq_put(d->h, q[i % 2], &sqe, false);
    }
    nh_sq_ring(d->h, q[0]);
    nh_sq_ring(d->h, q[1]);
    pc_cut_ok(d, "drive");
    ck_assert_msg(!nh_wait(d->h, q[0], &cqe, 50 * 1000 * 1000) &&
                  !nh_wait(d->h, q[1], &cqe, 1000 * 1000),
                  "a completion was posted after the power cut");
    pc_reprobe(d);
    dev_close(d);
}
END_TEST

/* "machine": the machine is reset with the drive. */
START_TEST(test_machine_cut_resets)
{
    Dev *d = pc_open("");

    g_free(qt_qmp(d->qt, "{\"execute\": \"query-status\"}"));
    pc_write(d, 0, 0);
    pc_cut_ok(d, "machine");
    for (int i = 0; i < 200 && !qt_qmp_event_seen(d->qt, "RESET"); i++) {
        g_usleep(10000);
    }
    ck_assert(qt_qmp_event_seen(d->qt, "RESET"));
    /* the machine reset cleared the bus master bit: probe from scratch */
    dev_reprobe(d);
    ck_assert(pc_holds(d, 0, 0));
    dev_close(d);
}
END_TEST

START_TEST(test_bad_value_refused)
{
    Dev *d = pc_open("");
    g_autofree char *r = pc_cut(d, "sometimes");

    ck_assert_msg(strstr(r, "\"error\"") && strstr(r, "'drive' or 'machine'"),
                  "reply: %s", r);
    pc_write(d, 0, 0);
    dev_close(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("powercut");
    TCase *tc = tcase_create("powercut");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_plp_keeps_completed_writes);
    tcase_add_loop_test(tc, test_vwc_drops_unflushed_writes, 0,
                        G_N_ELEMENTS(pc_qmaps));
    tcase_add_test(tc, test_vwc_keeps_fua_writes);
    tcase_add_loop_test(tc, test_inflight_commands_lost, 0,
                        G_N_ELEMENTS(pc_qmaps));
    tcase_add_test(tc, test_machine_cut_resets);
    tcase_add_test(tc, test_bad_value_refused);
    tcase_add_test(tc, test_cut_after_shutdown_is_safe);
    suite_add_tcase(s, tc);
    return dev_main(s);
}
