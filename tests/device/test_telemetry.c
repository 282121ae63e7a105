/*
 * telemetry=FILE: one JSON line per interval of virtual time with the
 * interval's I/O and the drive's health, a latency CDF at exit; a file
 * that cannot be written is refused with one line; rows from an IOThread
 * too.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "dev.h"

static const char *const row_keys[] = {
    "\"t\":", "\"iops\":", "\"read_iops\":", "\"write_iops\":", "\"mbps\":",
    "\"lat_mean_us\":", "\"lat_p99_us\":", "\"waf\":", "\"lifetime_waf\":",
    "\"free_superblocks\":", "\"gc_victims\":", "\"temp_c\":",
    "\"throttle\":",
};

static double field(const char *line, const char *key)
{
    const char *p = strstr(line, key);

    ck_assert_msg(p, "no %s in %s", key, line);
    return g_ascii_strtod(p + strlen(key), NULL);
}

/* With @iothread the rows are written in an IOThread. */
static void check_rows(bool iothread)
{
    g_autofree char *path = g_build_filename(qt_tmpdir(), "tel.jsonl", NULL);
    g_autofree char *opts = g_strdup_printf(",telemetry=%s,"
                                            "telemetry-interval=100%s", path,
                                            iothread ? ",iothread=io0" : "");
    Dev *d = dev_open_full(NULL, opts,
                           iothread ? "-object iothread,id=io0" : "");
    uint64_t buf = nh_alloc(d->h, 64 * 1024, 4096);
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    unsigned rows = 0, busy = 0;
    double last_t = 0;

    /* 500 ms idle, then 64 KiB writes and reads for ~500 ms */
    qt_clock_step(d->qt, 500000000);
    for (int i = 0; i < 2000; i++) {
        ck_status(nh_io(d->h, d->q, i & 1 ? NVME_CMD_READ : NVME_CMD_WRITE,
                        1, (i % 512) * 128ull, 128, buf, 0, NULL), 0,
                  "I/O %d", i);
    }
    qt_clock_step(d->qt, 300000000);
    dev_close(d);

    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    lines = g_strsplit(text, "\n", 0);
    for (unsigned i = 0; lines[i] && *lines[i]; i++) {
        const char *l = lines[i];

        if (g_str_has_prefix(l, "{\"cdf\":")) {
            ck_assert_msg(!lines[i + 1] || !*lines[i + 1],
                          "rows after the CDF");
            ck_assert_msg(strstr(l, ", 1.0") || strstr(l, ",1.0") ||
                          strstr(l, ", 1]") || strstr(l, ",1]"),
                          "CDF does not end at 1: %.200s", l);
            continue;
        }
        for (unsigned k = 0; k < G_N_ELEMENTS(row_keys); k++) {
            field(l, row_keys[k]);
        }
        ck_assert_msg(field(l, "\"t\":") > last_t, "time goes back: %s", l);
        last_t = field(l, "\"t\":");
        if (field(l, "\"iops\":") > 0) {
            busy++;
            /* writes and reads alternate: a row of two has both */
            ck_assert_msg(field(l, "\"iops\":") *
                          field(l, "\"interval\":") < 1.5 ||
                          (field(l, "\"write_iops\":") > 0 &&
                           field(l, "\"read_iops\":") > 0), "row %s", l);
            ck_assert_msg(field(l, "\"lat_p99_us\":") >=
                          field(l, "\"lat_mean_us\":") * 0.5, "row %s", l);
            /*
             * A 64 KiB command takes the drive ~130 us: the host's load
             * (this test under a busy machine, an IOThread's timers run
             * late) never reaches the latency.
             */
            ck_assert_msg(field(l, "\"lat_max_us\":") < 1000,
                          "host time in the latency: %s", l);
        }
        /* rows on the interval's grid, the last (at exit) partial */
        ck_assert_msg(!lines[i + 1] || !*lines[i + 1] ||
                      g_str_has_prefix(lines[i + 1], "{\"cdf\":") ||
                      rows == 0 ||
                      fabs(field(l, "\"interval\":") - 0.1) < 1e-6,
                      "row off the 100 ms grid: %s", l);
        ck_assert_msg(field(l, "\"temp_c\":") > 20, "row %s", l);
        rows++;
    }
    ck_assert_msg(rows >= 9, "%u rows for >= 0.9 s at 100 ms", rows);
    ck_assert_msg(busy >= 1 && busy < rows, "%u busy rows of %u", busy, rows);
    ck_assert_msg(strstr(text, "{\"cdf\":"), "no CDF line");
    unlink(path);
}

START_TEST(test_telemetry_rows)
{
    check_rows(false);
}
END_TEST

START_TEST(test_telemetry_iothread)
{
    check_rows(true);
}
END_TEST

/*
 * The latencies describe the drive, not the host: on a backend whose
 * every request takes 5 ms of host time, virtual time waits for it (the
 * device holds it under qtest and -icount) and the guest sees the
 * drive's own latency, as on a fast host.
 */
START_TEST(test_telemetry_slow_host)
{
    g_autofree char *path = g_build_filename(qt_tmpdir(), "slow.jsonl",
                                             NULL);
    g_autofree char *opts = g_strdup_printf(",telemetry=%s,"
                                            "telemetry-interval=100", path);
    Dev *d = dev_open_drive("driver=null-co,size=256M,read-zeroes=on,"
                            "latency-ns=5000000", opts, "");
    uint64_t buf = nh_alloc(d->h, 64 * 1024, 4096);
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    unsigned busy = 0;

    for (int i = 0; i < 200; i++) {
        ck_status(nh_io(d->h, d->q, i & 1 ? NVME_CMD_READ : NVME_CMD_WRITE,
                        1, (i % 512) * 128ull, 128, buf, 0, NULL), 0,
                  "I/O %d", i);
    }
    qt_clock_step(d->qt, 300000000);
    dev_close(d);
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    lines = g_strsplit(text, "\n", 0);
    for (unsigned i = 0; lines[i] && *lines[i]; i++) {
        if (g_str_has_prefix(lines[i], "{\"cdf\":") ||
            field(lines[i], "\"iops\":") == 0) {
            continue;
        }
        busy++;
        /* a 64 KiB command takes the drive well under a millisecond */
        ck_assert_msg(field(lines[i], "\"lat_max_us\":") < 2000,
                      "host time in the latency: %s", lines[i]);
    }
    ck_assert_msg(busy >= 1, "no busy rows in %s", text);
    unlink(path);
}
END_TEST

START_TEST(test_telemetry_bad_file)
{
    g_autofree char *img = qt_backing_file("disk.img", DEV_NS_BYTES, "raw");
    g_autofree char *err = NULL;

    ck_assert_msg(qt_start_fails(&err, "-drive file=%s,if=none,id=d0,"
                                 "format=raw -device dapustor-h3100,drive=d0,"
                                 "model-params=" DEV_PARAMS ",telemetry="
                                 "/nonexistent/dir/t.jsonl", img),
                  "QEMU started with an unwritable telemetry file");
    ck_assert_msg(strstr(err, "telemetry") && !strchr(g_strstrip(err), '\n'),
                  "expected one line naming telemetry: %s", err);
    unlink(img);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("telemetry");
    TCase *tc = dev_tcase(s, "telemetry");

    tcase_add_test(tc, test_telemetry_rows);
    tcase_add_test(tc, test_telemetry_iothread);
    tcase_add_test(tc, test_telemetry_slow_host);
    tcase_add_test(tc, test_telemetry_bad_file);
    return dev_main(s);
}
