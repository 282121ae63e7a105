/*
 * Fixture shared by the device tests.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dev.h"

static char *model_params_opt(const char *params)
{
    if (!*params) {
        return g_strdup("");
    }
    /* QEMU's option syntax: a comma inside a value is doubled */
    g_auto(GStrv) parts = g_strsplit(params, ",", 0);
    g_autofree char *escaped = g_strjoinv(",,", parts);

    return g_strdup_printf(",model-params=%s", escaped);
}

/* A property's JSON value (dev_device_arg): its QOM type, by name. */
static void dev_json_value(GString *j, const char *key, const char *val)
{
    static const char *const bools[] = {
        "timing", "vwc", "kill-safe", "state-reset", "aer", NULL,
    };
    static const char *const numbers[] = {
        "eui64", "seed", "max-ioqpairs", "mdts", "lba-size",
        "state-interval", "telemetry-interval", "bootindex",
        "completion-window", NULL,
    };
    g_autofree char *esc = g_strescape(val, NULL);

    if (g_strv_contains(bools, key)) {
        g_string_append(j, strcmp(val, "on") && strcmp(val, "true") ?
                        "false" : "true");
    } else if (g_strv_contains(numbers, key)) {
        g_string_append(j, val);
    } else {
        g_string_append_printf(j, "\"%s\"", esc);
    }
}

/*
 * -device's argument for options @opts (",key=value..." after drive=d0,
 * commas in a value doubled).  iothread-vq-mapping is a list of
 * structs, which only JSON can give: with it (its JSON value after the
 * '=', anywhere in @opts) the whole device is given as JSON.
 */
char *dev_device_arg(const char *opts)
{
    const char *m = strstr(opts, ",iothread-vq-mapping=");
    g_autoptr(GString) rest = NULL;
    g_autoptr(GString) j = NULL;
    const char *v, *e;
    int depth = 0;

    if (!m) {
        return g_strdup_printf("'dapustor-h3100,drive=d0%s'", opts);
    }
    v = m + strlen(",iothread-vq-mapping=");
    for (e = v; *e && (e == v || depth); e++) {
        depth += (*e == '[' || *e == '{') - (*e == ']' || *e == '}');
    }
    rest = g_string_new_len(opts, m - opts);
    g_string_append(rest, e);
    j = g_string_new("'{\"driver\": \"dapustor-h3100\", \"drive\": \"d0\"");
    for (const char *p = rest->str; *p == ',';) {
        g_autoptr(GString) kv = g_string_new(NULL);
        const char *eq;

        for (p++; *p && (*p != ',' || p[1] == ','); p++) {
            g_string_append_c(kv, *p);
            p += *p == ',';           /* ",," is a comma of the value */
        }
        eq = strchr(kv->str, '=');
        g_assert(eq);
        g_string_append_printf(j, ", \"%.*s\": ", (int)(eq - kv->str),
                               kv->str);
        kv->str[eq - kv->str] = 0;
        dev_json_value(j, kv->str, eq + 1);
    }
    g_string_append_printf(j, ", \"iothread-vq-mapping\": %.*s}'",
                           (int)(e - v), v);
    return g_strdup(j->str);
}

Dev *dev_launch_on(const char *drive, const char *params,
                   const char *devopts, const char *extra)
{
    Dev *d = g_new0(Dev, 1);
    g_autofree char *mp = model_params_opt(params ? params : DEV_PARAMS);
    g_autofree char *file_drive = NULL;
    g_autofree char *devarg = NULL;

    if (!drive) {
        d->img_size = DEV_NS_BYTES;
        d->img = qt_backing_file("disk.img", d->img_size, "raw");
        drive = file_drive = g_strdup_printf("file=%s,format=raw", d->img);
    }
    d->drive_opt = g_strdup(drive);
    d->dev_opts = g_strdup_printf("%s%s", mp, devopts ? devopts : "");
    d->extra_args = g_strdup(extra ? extra : "");
    devarg = dev_device_arg(d->dev_opts);
    d->qt = qt_start("-drive %s,if=none,id=d0 -device %s %s", d->drive_opt,
                     devarg, d->extra_args);
    d->h = nh_new(d->qt);
    return d;
}

/* The source's migration status once it is over (g_free it). */
static char *dev_migration_end(QTest *src)
{
    int64_t deadline = qt_wall_ms() + 300 * 1000;

    for (;;) {
        g_autofree char *r = qt_qmp(src, "{\"execute\": \"query-migrate\"}");

        if (strstr(r, "\"status\": \"completed\"")) {
            return g_strdup("completed");
        }
        if (strstr(r, "\"status\": \"failed\"") ||
            strstr(r, "\"status\": \"cancelled\"")) {
            return g_strdup_printf("failed: %s", r);
        }
        ck_assert_msg(qt_wall_ms() < deadline, "migration never ended: %s",
                      r);
        g_usleep(10000);
    }
}

static QTest *dev_start_incoming(Dev *d, const char *devopts,
                                 const char *extra, const char *uri)
{
    g_autofree char *devarg = dev_device_arg(devopts ? devopts :
                                             d->dev_opts);

    return qt_start("-drive %s,if=none,id=d0 -device %s %s -incoming %s",
                    d->drive_opt, devarg, extra ? extra : d->extra_args,
                    uri);
}

/* A destination reading a file runs once it has read it all. */
static void dev_wait_running(QTest *dst)
{
    for (int64_t t = qt_wall_ms() + 120000; qt_alive(dst);) {
        g_autofree char *r = qt_qmp(dst, "{\"execute\": \"query-status\"}");

        if (strstr(r, "\"running\": true")) {
            return;
        }
        ck_assert_msg(qt_wall_ms() < t, "the restored VM never ran: %s", r);
        g_usleep(10000);
    }
}

char *dev_migrate(Dev *d, const char *devopts, const char *extra,
                  const char *uri, char **dst_err)
{
    static int n;
    g_autofree char *sock = g_strdup_printf("unix:%s/mig-%d.sock",
                                            qt_tmpdir(), n++);
    bool file = uri && g_str_has_prefix(uri, "file:");
    int64_t now = qt_clock_now(d->qt);
    QTest *dst = NULL;
    char *status;

    if (dst_err) {
        *dst_err = NULL;
    }
    uri = uri ? uri : sock;
    if (!file) {
        dst = dev_start_incoming(d, devopts, extra, uri);
        /* QEMU listens once it has started, after the qtest socket */
        for (int64_t t = qt_wall_ms() + 20000;
             !g_file_test(uri + 5, G_FILE_TEST_EXISTS) && qt_alive(dst);) {
            ck_assert_msg(qt_wall_ms() < t, "the destination never listened");
            g_usleep(2000);
        }
    }
    qt_qmp_ok(d->qt, "{\"execute\": \"migrate-set-parameters\", "
              "\"arguments\": {\"max-bandwidth\": 10000000000}}");
    qt_qmp_ok(d->qt, "{\"execute\": \"migrate\", \"arguments\": "
              "{\"uri\": \"%s\"}}", uri);
    status = dev_migration_end(d->qt);
    if (g_str_has_prefix(status, "failed")) {
        /* the source's reason, then the destination's lines */
        g_autofree char *why = status;

        status = g_strdup("failed");
        if (dst_err) {
            *dst_err = g_strdup(why);
        }
    }
    if (file && !strcmp(status, "completed")) {
        dst = dev_start_incoming(d, devopts, extra, uri);
        dev_wait_running(dst);
        if (!qt_alive(dst)) {
            g_free(status);
            status = g_strdup("failed");
        }
    }
    if (strcmp(status, "completed")) {
        for (int64_t t = qt_wall_ms() + 30000;
             dst && qt_alive(dst) && qt_wall_ms() < t;) {
            g_usleep(10000);
        }
        if (dst_err) {
            g_autofree char *src_why = *dst_err;

            *dst_err = g_strdup_printf("%s\n%s", src_why ? src_why : "",
                                       dst ? qt_stderr(dst) : "");
        }
        return status;
    }
    ck_assert_msg(qt_alive(dst), "the destination died: %s", qt_stderr(dst));
    if (qt_clock_now(dst) < now) {
        qt_clock_set(dst, now);
    }
    qt_quit(d->qt);
    d->qt = dst;
    d->h->qt = dst;
    if (dst_err) {
        *dst_err = qt_stderr(dst);
    }
    return status;
}

Dev *dev_launch(const char *params, const char *devopts, const char *extra)
{
    return dev_launch_on(NULL, params, devopts, extra);
}

static Dev *dev_ready(Dev *d)
{
    nh_enable(d->h, 32);
    nh_probe(d->h);
    d->q = nh_create_ioq(d->h, 1, 64, -1);
    return d;
}

Dev *dev_open_full(const char *params, const char *devopts,
                   const char *extra)
{
    return dev_ready(dev_launch(params, devopts, extra));
}

Dev *dev_open_drive(const char *drive, const char *devopts,
                    const char *extra)
{
    return dev_ready(dev_launch_on(drive, NULL, devopts, extra));
}

Dev *dev_open_drive_params(const char *drive, const char *params,
                           const char *devopts)
{
    return dev_ready(dev_launch_on(drive, params, devopts, ""));
}

int dev_intx_level(QTest *qt)
{
    int high = 0;

    for (int irq = 16; irq < 24; irq++) {
        high += qt_irq_level(qt, irq);
    }
    return high;
}

void dev_reprobe(Dev *d)
{
    nh_free(d->h);
    d->h = nh_new(d->qt);
    nh_enable(d->h, 32);
    nh_probe(d->h);
    d->q = nh_create_ioq(d->h, 1, 64, -1);
}

static void dev_free(Dev *d)
{
    nh_free(d->h);
    if (d->img) {
        unlink(d->img);
    }
    g_free(d->img);
    g_free(d->drive_opt);
    g_free(d->dev_opts);
    g_free(d->extra_args);
    g_free(d);
}

void dev_close(Dev *d)
{
    qt_quit(d->qt);
    dev_free(d);
}

void dev_kill(Dev *d)
{
    qt_kill(d->qt);
    dev_free(d);
}

void dev_backing_read(Dev *d, uint64_t offset, void *buf, size_t len)
{
    int fd = open(d->img, O_RDONLY);

    ck_assert_msg(fd >= 0, "open %s: %s", d->img, strerror(errno));
    ck_assert(pread(fd, buf, len, offset) == (ssize_t)len);
    close(fd);
}

H3100Model *dev_model_new(const char *profile, const char *params,
                          bool timing)
{
    H3100Config cfg;
    GError *err = NULL;
    H3100Model *m;

    ck_assert_msg(h3100_profile_load(&cfg, profile, &err), "%s",
                  err ? err->message : "");
    cfg.seed = 1;                     /* the device's seed= default */
    if (params && *params) {
        ck_assert_msg(h3100_config_apply(&cfg, params, &err), "%s",
                      err ? err->message : "");
    }
    m = h3100_model_new(&cfg, &err);
    ck_assert_msg(m, "%s", err ? err->message : "");
    h3100_model_set_timing(m, timing);
    return m;
}

TCase *dev_tcase(Suite *s, const char *name)
{
    TCase *tc = tcase_create(name);

    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return tc;
}

int dev_main(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;

    if (!getenv("QTEST_QEMU_BINARY")) {
        fprintf(stderr, "QTEST_QEMU_BINARY must name qemu-system-x86_64 "
                "with the dapustor-h3100 device\n");
        return EXIT_FAILURE;
    }
    qt_tmpdir();                      /* removed when the runner exits */
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
