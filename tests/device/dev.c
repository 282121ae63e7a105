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

Dev *dev_launch_on(const char *drive, const char *params,
                   const char *devopts, const char *extra)
{
    Dev *d = g_new0(Dev, 1);
    g_autofree char *mp = model_params_opt(params ? params : DEV_PARAMS);
    g_autofree char *file_drive = NULL;

    if (!drive) {
        d->img_size = DEV_NS_BYTES;
        d->img = qt_backing_file("disk.img", d->img_size, "raw");
        drive = file_drive = g_strdup_printf("file=%s,format=raw", d->img);
    }
    d->qt = qt_start("-drive %s,if=none,id=d0 "
                     "-device 'dapustor-h3100,drive=d0%s%s' %s",
                     drive, mp, devopts ? devopts : "", extra ? extra : "");
    d->h = nh_new(d->qt);
    return d;
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

void dev_close(Dev *d)
{
    qt_quit(d->qt);
    nh_free(d->h);
    if (d->img) {
        unlink(d->img);
    }
    g_free(d->img);
    g_free(d);
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
