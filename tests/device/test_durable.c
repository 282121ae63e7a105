/*
 * Completed writes survive QEMU's death (hw/h3100-durable.c): a drive
 * with power-loss protection (vwc=off) on a qcow2 image keeps every
 * write whose completion was posted when QEMU is killed with SIGKILL;
 * kill-safe=off gives that up (and the test shows that it does); with
 * vwc=on the guest's Flush is what makes writes durable.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include <unistd.h>

#include "dev.h"

#define DU_BLOCKS   48
#define DU_BS       4096u

/* Spread over the image, so that they allocate many qcow2 clusters. */
static uint64_t du_lba(unsigned i)
{
    return (uint64_t)i * (DEV_NS_BYTES / DU_BLOCKS / 512);
}

static void du_pattern(uint8_t *buf, unsigned i, unsigned gen)
{
    for (unsigned j = 0; j < DU_BS; j++) {
        buf[j] = (uint8_t)(i * 31 + j + gen * 7 + 1);
    }
}

static bool du_iothread;              /* the loop tests' second pass */

static Dev *du_open(const char *img, const char *fmt, const char *opts)
{
    g_autofree char *drive = g_strdup_printf("file=%s,format=%s", img, fmt);
    g_autofree char *o = g_strdup_printf("%s%s", opts,
                                         du_iothread ? ",iothread=io0" : "");

    return dev_open_drive(drive, o, du_iothread ?
                          "-object iothread,id=io0" : "");
}

/* Write blocks [@from, @to) with generation @gen; each one completes. */
static void du_write(Dev *d, unsigned from, unsigned to, unsigned gen)
{
    uint8_t buf[DU_BS];

    for (unsigned i = from; i < to; i++) {
        du_pattern(buf, i, gen);
        ck_status(nh_write(d->h, d->q, du_lba(i), buf, DU_BS), 0,
                  "write %u", i);
    }
}

/* How many of blocks [@from, @to) read back as generation @gen. */
static unsigned du_intact(Dev *d, unsigned from, unsigned to, unsigned gen)
{
    uint8_t want[DU_BS], got[DU_BS];
    unsigned n = 0;

    for (unsigned i = from; i < to; i++) {
        du_pattern(want, i, gen);
        ck_status(nh_read(d->h, d->q, du_lba(i), got, DU_BS), 0,
                  "read %u", i);
        n += !memcmp(want, got, DU_BS);
    }
    return n;
}

static void du_kill(Dev *d)
{
    qt_kill(d->qt);
    nh_free(d->h);
    g_free(d);
}

/* Write, kill, restart: how many blocks came back. */
static unsigned du_write_kill_count(const char *fmt, const char *opts)
{
    g_autofree char *img = qt_backing_file("du.img", DEV_NS_BYTES, fmt);
    Dev *d = du_open(img, fmt, opts);
    unsigned n;

    du_write(d, 0, DU_BLOCKS, 0);
    du_kill(d);
    d = du_open(img, fmt, opts);
    n = du_intact(d, 0, DU_BLOCKS, 0);
    dev_close(d);
    unlink(img);
    return n;
}

START_TEST(test_qcow2_keeps_completed_writes)
{
    du_iothread = _i;                   /* 0: main loop, 1: an IOThread */
    ck_assert_uint_eq(du_write_kill_count("qcow2", ""), DU_BLOCKS);
}
END_TEST

START_TEST(test_raw_keeps_completed_writes)
{
    ck_assert_uint_eq(du_write_kill_count("raw", ""), DU_BLOCKS);
}
END_TEST

/*
 * The knob does something: without the flush, qcow2's L2 table for the
 * data clusters stays in QEMU's memory and the kill loses the blocks.
 */
START_TEST(test_kill_safe_off_loses_writes)
{
    unsigned n = du_write_kill_count("qcow2", ",kill-safe=off");

    fprintf(stderr, "kill-safe=off: %u of %u blocks survived SIGKILL\n", n,
            DU_BLOCKS);
    ck_assert_uint_lt(n, DU_BLOCKS);
}
END_TEST

/*
 * vwc=on: a volatile cache, as the guest was told.  What a Flush
 * covered survives; what completed after it need not (and on qcow2
 * does not all survive: the kill is a power cut without the capacitors).
 */
START_TEST(test_vwc_flushed_writes_survive)
{
    g_autofree char *img = qt_backing_file("du.qcow2", DEV_NS_BYTES,
                                           "qcow2");
    Dev *d = du_open(img, "qcow2", ",vwc=on");
    unsigned half = DU_BLOCKS / 2, later;

    du_write(d, 0, half, 0);
    ck_status(nh_flush(d->h, d->q, 1), 0, "flush");
    du_write(d, half, DU_BLOCKS, 0);
    du_kill(d);
    d = du_open(img, "qcow2", ",vwc=on");
    ck_assert_uint_eq(du_intact(d, 0, half, 0), half);
    later = du_intact(d, half, DU_BLOCKS, 0);
    fprintf(stderr, "vwc=on: %u of %u unflushed blocks survived SIGKILL\n",
            later, DU_BLOCKS - half);
    ck_assert_uint_lt(later, DU_BLOCKS - half);
    dev_close(d);
    unlink(img);
}
END_TEST

/* Rewrites of allocated clusters, and Write Zeroes, are kept too. */
START_TEST(test_qcow2_keeps_rewrites_and_zeroes)
{
    g_autofree char *img = qt_backing_file("du.qcow2", DEV_NS_BYTES,
                                           "qcow2");
    Dev *d = du_open(img, "qcow2", "");
    uint8_t got[DU_BS], zero[DU_BS] = { 0 };

    du_write(d, 0, DU_BLOCKS, 0);
    du_write(d, 0, DU_BLOCKS / 2, 1);
    ck_status(nh_io(d->h, d->q, 0x08 /* Write Zeroes */, 1,
                    du_lba(DU_BLOCKS - 1), DU_BS / 512, 0, 0, NULL),
              0, "write zeroes");
    du_kill(d);
    d = du_open(img, "qcow2", "");
    ck_assert_uint_eq(du_intact(d, 0, DU_BLOCKS / 2, 1), DU_BLOCKS / 2);
    ck_assert_uint_eq(du_intact(d, DU_BLOCKS / 2, DU_BLOCKS - 1, 0),
                      DU_BLOCKS / 2 - 1);
    ck_status(nh_read(d->h, d->q, du_lba(DU_BLOCKS - 1), got, DU_BS), 0,
              "read the zeroed block");
    ck_assert(!memcmp(got, zero, DU_BS));
    dev_close(d);
    unlink(img);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("durable");
    TCase *tc = tcase_create("kill");

    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_qcow2_keeps_completed_writes, 0, 2);
    tcase_add_test(tc, test_raw_keeps_completed_writes);
    tcase_add_test(tc, test_kill_safe_off_loses_writes);
    tcase_add_test(tc, test_vwc_flushed_writes_survive);
    tcase_add_test(tc, test_qcow2_keeps_rewrites_and_zeroes);
    suite_add_tcase(s, tc);
    return dev_main(s);
}
