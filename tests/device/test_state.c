/*
 * Persistent drive state (state=FILE): wear, counters and device state
 * survive a restart; damaged or foreign files are refused with one
 * error line; an unclean stop counts an unsafe shutdown; state-reset=on
 * starts fresh; a file saved by the model library (as h3100-sim --save
 * does) loads.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dev.h"
#include "h3100/dapustor-log.h"

/* A small geometry where preconditioning wears the blocks. */
#define ST_PARAMS "user_bytes=256M,dies_per_channel=1,blocks_per_plane=64," \
                  "spare_blocks_per_plane=4,pages_per_block=48,rated_pe=10"
#define HOUR_NS   (3600 * 1000000000LL)

/* SMART / health log fields */
#define SMART_PCT_USED      5
#define SMART_DUW           48
#define SMART_HOST_WRITES   80
#define SMART_POWER_CYCLES  112
#define SMART_POH           128
#define SMART_UNSAFE        144
#define SMART_MEDIA         160
#define SMART_ERRORS        176

static char *state_file(const char *name)
{
    return g_strdup_printf("%s/%s", qt_tmpdir(), name);
}

static Dev *st_launch(const char *path, const char *opts)
{
    g_autofree char *o = g_strdup_printf(",state=%s%s", path, opts);

    return dev_launch(ST_PARAMS, o, "");
}

static void st_enable(Dev *d)
{
    nh_enable(d->h, 32);
    nh_probe(d->h);
    d->q = nh_create_ioq(d->h, 1, 64, -1);
}

static void smart(Dev *d, uint8_t *log)
{
    ck_status(nh_get_log(d->h, NVME_LOG_SMART, 0xffffffff, log, 512, 0), 0,
              "SMART log");
}

static H3100Model *st_model(void)
{
    return dev_model_new("h3100-3.2t", ST_PARAMS, false);
}

/* Load @path with the library; returns its flags and extra length. */
static H3100Model *st_load(const char *path, uint32_t *flags, gsize *extra)
{
    H3100Model *cfgm = st_model();
    H3100Config cfg = *h3100_model_config(cfgm);
    g_autoptr(GBytes) blob = NULL;
    GError *err = NULL;
    H3100Model *m;

    h3100_model_free(cfgm);
    m = h3100_model_load_with(&cfg, path, &blob, flags, &err);
    ck_assert_msg(m, "%s", err ? err->message : "");
    *extra = g_bytes_get_size(blob);
    return m;
}

/* A worn drive as h3100-sim --precondition rand:2 --save FILE makes it. */
static void sim_save(const char *path, H3100Health *h)
{
    H3100Model *m = st_model();
    GError *err = NULL;

    ck_assert(h3100_model_precondition(m, "rand:2", 1, NULL, NULL, &err));
    ck_assert_msg(h3100_model_save(m, path, &err), "%s",
                  err ? err->message : "");
    h3100_model_health(m, 0, h);
    h3100_model_free(m);
}

/*
 * A drive past its rated life, its data 90 days old (h3100-sim
 * --precondition wear:140+seq --save FILE, model-params age_days=90):
 * some reads are Unrecovered Read Errors, counted as media errors in
 * SMART and OCP C0h, with soft decodes; the same drive fresh reads clean.
 */
static unsigned read_errors(const char *pre, uint8_t *smart_log,
                            uint8_t *ocp_log)
{
    g_autofree char *path = state_file("aged.h3s");
    g_autofree char *opts = g_strdup_printf(",state=%s", path);
    g_autofree uint8_t *data = g_malloc(16384);
    H3100Model *m = st_model();
    GError *err = NULL;
    unsigned failed = 0;
    uint16_t st;
    Dev *d;

    ck_assert(h3100_model_precondition(m, pre, 1, NULL, NULL, &err));
    ck_assert_msg(h3100_model_save(m, path, &err), "%s",
                  err ? err->message : "");
    h3100_model_free(m);
    d = dev_launch(ST_PARAMS ",age_days=90", opts, "");
    st_enable(d);
    for (unsigned i = 0; i < 512; i++) {
        st = nh_read(d->h, d->q, i * 32ull, data, 16384);
        ck_assert_msg(st == 0 || st == NVME_SC_UNRECOVERED_READ,
                      "read %u: status 0x%x", i, st);
        failed += st != 0;
    }
    smart(d, smart_log);
    ck_status(nh_get_log(d->h, 0xc0, 0xffffffff, ocp_log, 512, 0), 0,
              "OCP C0h");
    dev_close(d);
    unlink(path);
    return failed;
}

START_TEST(test_worn_drive_read_errors)
{
    uint8_t log[512], ocp[512];
    unsigned failed = read_errors("seq", log, ocp);

    ck_assert_uint_eq(failed, 0);
    ck_assert_uint_eq(le64_at(log, SMART_MEDIA), 0);
    failed = read_errors("wear:140+seq", log, ocp);
    ck_assert_msg(failed > 0 && failed < 512, "%u of 512 reads failed",
                  failed);
    ck_assert_uint_eq(le64_at(log, SMART_MEDIA), failed);
    ck_assert_uint_ge(le64_at(log, SMART_ERRORS), failed);
    ck_assert_uint_ge(log[SMART_PCT_USED], 130);
    ck_assert_uint_eq(le64_at(ocp, 56), failed);
    ck_assert_uint_gt(le64_at(ocp, 64), failed);   /* soft decodes */
}
END_TEST

START_TEST(test_survives_restart)
{
    g_autofree char *path = state_file("restart.h3s");
    g_autofree uint8_t *data = g_malloc(128 * 1024);
    uint8_t a[512], b[512], log[512];
    H3100Model *m;
    uint32_t flags;
    gsize extra;
    Dev *d;

    d = st_launch(path, ",state-interval=0");
    qt_clock_step(d->qt, 2 * HOUR_NS + 1000000000LL);
    st_enable(d);
    nh_pattern(data, 128 * 1024, 7);
    for (unsigned i = 0; i < 16; i++) {
        ck_status(nh_write(d->h, d->q, i * 256, data, 128 * 1024), 0,
                  "write %u", i);
    }
    /* one error log entry */
    ck_assert(nh_get_log(d->h, 0x7f, 0xffffffff, log, 64, 0) != 0);
    smart(d, a);
    dev_close(d);

    ck_assert_uint_eq(le64_at(a, SMART_POH), 2);
    ck_assert_uint_eq(le64_at(a, SMART_POWER_CYCLES), 1);
    ck_assert_uint_eq(le64_at(a, SMART_UNSAFE), 0);
    ck_assert_uint_eq(le64_at(a, SMART_ERRORS), 1);
    ck_assert_uint_eq(le64_at(a, SMART_HOST_WRITES), 16);
    ck_assert_uint_gt(le64_at(a, SMART_DUW), 0);

    /* closed cleanly, with the device's part */
    m = st_load(path, &flags, &extra);
    ck_assert_uint_eq(flags, 0);
    ck_assert_uint_ge(extra, 80);
    h3100_model_free(m);

    d = st_launch(path, ",state-interval=0");
    qt_clock_step(d->qt, HOUR_NS + HOUR_NS / 2);
    st_enable(d);
    smart(d, b);
    dev_close(d);
    ck_assert_uint_eq(le64_at(b, SMART_POH), 3);
    ck_assert_uint_eq(le64_at(b, SMART_POWER_CYCLES), 2);
    ck_assert_uint_eq(le64_at(b, SMART_UNSAFE), 0);
    ck_assert_uint_eq(le64_at(b, SMART_ERRORS), 1);
    ck_assert_uint_eq(le64_at(b, SMART_DUW), le64_at(a, SMART_DUW));
    ck_assert_uint_eq(le64_at(b, SMART_HOST_WRITES), 16);
    ck_assert_uint_eq(b[SMART_PCT_USED], a[SMART_PCT_USED]);
    unlink(path);
}
END_TEST

/*
 * The vendor log's recent WAF compares with samples of the last 60 s of
 * power-on time; they are saved, so a restart does not make old writes
 * recent again.
 */
START_TEST(test_recent_waf_survives_restart)
{
    g_autofree char *path = state_file("recent.h3s");
    g_autofree uint8_t *data = g_malloc(128 * 1024);
    uint8_t v[512];
    Dev *d;

    d = st_launch(path, ",state-interval=0");
    st_enable(d);
    nh_pattern(data, 128 * 1024, 3);
    qt_clock_step(d->qt, 2000000000LL);
    for (unsigned i = 0; i < 16; i++) {
        ck_status(nh_write(d->h, d->q, i * 256, data, 128 * 1024), 0,
                  "write %u", i);
    }
    qt_clock_step(d->qt, 3000000000LL);
    ck_status(nh_get_log(d->h, 0xd0, 0xffffffff, v, 512, 0), 0, "D0h");
    ck_assert_uint_eq(le64_at(v, 40), 16 * 128 * 1024);   /* recent host */
    qt_clock_step(d->qt, 70000000000LL);
    ck_status(nh_get_log(d->h, 0xd0, 0xffffffff, v, 512, 0), 0, "D0h");
    ck_assert_uint_eq(le64_at(v, 40), 0);     /* the writes are not recent */
    dev_close(d);

    d = st_launch(path, ",state-interval=0");
    st_enable(d);
    ck_status(nh_get_log(d->h, 0xd0, 0xffffffff, v, 512, 0), 0, "D0h");
    ck_assert_uint_eq(le64_at(v, 8), 16 * 128 * 1024);    /* lifetime */
    ck_assert_msg(le64_at(v, 40) == 0, "after a restart %" PRIu64 " host "
                  "bytes of 75 s ago count as recent", le64_at(v, 40));
    ck_assert_uint_ge(le64_at(v, 56), 50000);             /* window, ms */
    dev_close(d);
    unlink(path);
}
END_TEST

START_TEST(test_sim_file_loads)
{
    g_autofree char *path = state_file("sim.h3s");
    uint8_t log[512];
    H3100Health h;
    Dev *d;

    sim_save(path, &h);
    ck_assert_uint_gt(h.percentage_used, 0);
    d = st_launch(path, "");
    st_enable(d);
    smart(d, log);
    dev_close(d);
    ck_assert_uint_eq(log[SMART_PCT_USED], MIN(h.percentage_used, 255));
    ck_assert_uint_eq(le64_at(log, SMART_DUW),
                      (h.host_write_bytes + 511999) / 512000);
    ck_assert_uint_eq(le64_at(log, SMART_HOST_WRITES), h.host_write_cmds);
    ck_assert_uint_eq(le64_at(log, SMART_POWER_CYCLES), 1);
    ck_assert_uint_eq(le64_at(log, SMART_UNSAFE), 0);
    unlink(path);
}
END_TEST

START_TEST(test_dirty_counts_unsafe)
{
    g_autofree char *path = state_file("dirty.h3s");
    uint8_t log[512];
    Dev *d;

    d = st_launch(path, "");
    dev_close(d);
    /* what a killed QEMU leaves: the file still marked in use */
    ck_assert(h3100_state_set_flags(path, H3100_STATE_DIRTY, NULL));
    d = st_launch(path, "");
    st_enable(d);
    smart(d, log);
    dev_close(d);
    ck_assert_uint_eq(le64_at(log, SMART_UNSAFE), 1);
    ck_assert_uint_eq(le64_at(log, SMART_POWER_CYCLES), 2);
    /* a clean stop in between: no more */
    d = st_launch(path, "");
    st_enable(d);
    smart(d, log);
    dev_close(d);
    ck_assert_uint_eq(le64_at(log, SMART_UNSAFE), 1);
    ck_assert_uint_eq(le64_at(log, SMART_POWER_CYCLES), 3);
    unlink(path);
}
END_TEST

/* QEMU killed: nothing saved on the way out. */
static void st_kill(Dev *d)
{
    qt_kill(d->qt);
    nh_free(d->h);
    unlink(d->img);
    g_free(d->img);
    g_free(d);
}

/* The host's shutdown notification (SHN, EN still 1), to its end. */
static void st_shutdown(Dev *d)
{
    uint32_t cc = nh_rd32(d->h, NVME_REG_CC);

    nh_wr32(d->h, NVME_REG_CC, cc | NVME_CC_SHN_NORMAL);
    ck_assert_msg(nh_wait_csts(d->h, NVME_CSTS_SHST_MASK, NVME_CSTS_SHST_DONE,
                               10000000000ll), "CSTS.SHST never 10b");
}

/* The state file's flags, read with the library. */
static uint32_t st_flags(const char *path)
{
    uint32_t flags = 0;
    gsize extra;

    h3100_model_free(st_load(path, &flags, &extra));
    return flags;
}

/*
 * The shutdown notification saves the state file clean: QEMU killed
 * afterwards (the host powered off without QEMU exiting) counts no
 * unsafe shutdown; enabling the controller again marks the file in use,
 * and a kill then counts one.
 */
START_TEST(test_shutdown_saves_clean)
{
    g_autofree char *path = state_file("shn.h3s");
    uint8_t log[512];
    Dev *d;

    unlink(path);
    d = st_launch(path, "");
    st_enable(d);
    ck_assert_uint_eq(st_flags(path), H3100_STATE_DIRTY);
    st_shutdown(d);
    ck_assert_msg(st_flags(path) == 0, "the file is still marked in use "
                  "after the shutdown notification");
    st_kill(d);
    d = st_launch(path, "");
    st_enable(d);
    smart(d, log);
    ck_assert_uint_eq(le64_at(log, SMART_UNSAFE), 0);
    ck_assert_uint_eq(le64_at(log, SMART_POWER_CYCLES), 2);
    /* shut down, then in use again: the file is dirty again */
    st_shutdown(d);
    nh_disable(d->h);
    st_enable(d);
    ck_assert_uint_eq(st_flags(path), H3100_STATE_DIRTY);
    st_kill(d);
    d = st_launch(path, "");
    st_enable(d);
    smart(d, log);
    dev_close(d);
    ck_assert_uint_eq(le64_at(log, SMART_UNSAFE), 1);
    unlink(path);
}
END_TEST

/*
 * A guest toggling CC.SHN as fast as it can: every clean save under way
 * is abandoned, the controller keeps answering, the file ends in use,
 * and a clean stop then counts no unsafe shutdown.
 */
START_TEST(test_shutdown_toggled)
{
    g_autofree char *path = state_file("shn-toggle.h3s");
    uint32_t cc;
    uint8_t log[512], id[4096];
    Dev *d;

    unlink(path);
    d = st_launch(path, "");
    st_enable(d);
    cc = nh_rd32(d->h, NVME_REG_CC);
    for (unsigned i = 0; i < 40; i++) {
        nh_wr32(d->h, NVME_REG_CC, cc | NVME_CC_SHN_NORMAL);
        qt_clock_step(d->qt, (i % 4) * 1000000);
        nh_wr32(d->h, NVME_REG_CC, cc);
    }
    ck_assert_uint_eq(nh_rd32(d->h, NVME_REG_CSTS) & NVME_CSTS_SHST_MASK, 0);
    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify after the toggling");
    ck_assert_uint_eq(st_flags(path), H3100_STATE_DIRTY);
    dev_close(d);
    d = st_launch(path, "");
    st_enable(d);
    smart(d, log);
    dev_close(d);
    ck_assert_uint_eq(le64_at(log, SMART_UNSAFE), 0);
    unlink(path);
}
END_TEST

START_TEST(test_checkpoint)
{
    g_autofree char *path = state_file("ckpt.h3s");
    g_autofree char *saved = state_file("ckpt-crash.h3s");
    g_autofree uint8_t *data = g_malloc(128 * 1024);
    g_autofree char *buf = NULL;
    uint8_t a[512], b[512];
    H3100Health h = { 0 };
    uint32_t flags = 0;
    gsize extra = 0, len;
    Dev *d;

    d = st_launch(path, ",state-interval=1");
    st_enable(d);
    nh_pattern(data, 128 * 1024, 3);
    for (unsigned i = 0; i < 8; i++) {
        ck_status(nh_write(d->h, d->q, i * 256, data, 128 * 1024), 0,
                  "write %u", i);
    }
    smart(d, a);
    /* a checkpoint is written by a child while QEMU runs on */
    qt_clock_step(d->qt, 1100000000LL);
    for (int i = 0; i < 1000 && !h.host_write_cmds; i++) {
        H3100Model *m;

        g_usleep(10000);
        m = st_load(path, &flags, &extra);
        h3100_model_health(m, 0, &h);
        h3100_model_free(m);
    }
    ck_assert_uint_eq(h.host_write_cmds, 8);
    ck_assert_uint_eq(flags, H3100_STATE_DIRTY);
    ck_assert_uint_ge(extra, 80);
    /* keep what a crash now would leave */
    ck_assert(g_file_get_contents(path, &buf, &len, NULL));
    ck_assert(g_file_set_contents(saved, buf, len, NULL));
    dev_close(d);

    ck_assert_int_eq(rename(saved, path), 0);
    d = st_launch(path, "");
    st_enable(d);
    smart(d, b);
    dev_close(d);
    ck_assert_uint_eq(le64_at(b, SMART_UNSAFE), 1);
    ck_assert_uint_eq(le64_at(b, SMART_HOST_WRITES), 8);
    ck_assert_uint_eq(le64_at(b, SMART_DUW), le64_at(a, SMART_DUW));
    unlink(path);
}
END_TEST

START_TEST(test_reset_starts_fresh)
{
    g_autofree char *path = state_file("reset.h3s");
    uint8_t log[512];
    H3100Health h;
    Dev *d;

    sim_save(path, &h);
    d = st_launch(path, ",state-reset=on");
    st_enable(d);
    smart(d, log);
    dev_close(d);
    ck_assert_uint_eq(log[SMART_PCT_USED], 0);
    ck_assert_uint_eq(le64_at(log, SMART_DUW), 0);
    /* the file now holds the fresh drive */
    d = st_launch(path, "");
    st_enable(d);
    smart(d, log);
    dev_close(d);
    ck_assert_uint_eq(log[SMART_PCT_USED], 0);
    ck_assert_uint_eq(le64_at(log, SMART_DUW), 0);
    ck_assert_uint_eq(le64_at(log, SMART_POWER_CYCLES), 2);
    unlink(path);
}
END_TEST

static void expect_one_line(const char *path, const char *opts,
                            const char *params, const char *word)
{
    g_autofree char *img = qt_backing_file("disk.img", DEV_NS_BYTES, "raw");
    g_autofree char *err = NULL;
    g_auto(GStrv) lines = NULL;
    g_auto(GStrv) parts = g_strsplit(params, ",", 0);
    g_autofree char *mp = g_strjoinv(",,", parts);
    unsigned n = 0;

    ck_assert_msg(qt_start_fails(&err, "-drive file=%s,if=none,id=d0,"
                                 "format=raw -device 'dapustor-h3100,"
                                 "drive=d0,model-params=%s,state=%s%s'",
                                 img, mp, path, opts),
                  "QEMU started with a bad state file: %s", err);
    lines = g_strsplit(err, "\n", 0);
    for (unsigned i = 0; lines[i]; i++) {
        n += *g_strstrip(lines[i]) != 0;
    }
    ck_assert_msg(n == 1, "%u lines of errors, expected one:\n%s", n, err);
    ck_assert_msg(strstr(err, word), "error lacks '%s': %s", word, err);
    unlink(img);
}

START_TEST(test_bad_files_refused)
{
    g_autofree char *path = state_file("bad.h3s");
    g_autofree char *buf = NULL;
    H3100Health h;
    gsize len;

    sim_save(path, &h);
    ck_assert(g_file_get_contents(path, &buf, &len, NULL));
    /* a flipped byte in the middle */
    buf[len / 2] ^= 0x5a;
    ck_assert(g_file_set_contents(path, buf, len, NULL));
    expect_one_line(path, "", ST_PARAMS, "corrupt");
    /* truncated */
    buf[len / 2] ^= 0x5a;
    ck_assert(g_file_set_contents(path, buf, len - 100, NULL));
    expect_one_line(path, "", ST_PARAMS, "corrupt");
    /* another capacity */
    ck_assert(g_file_set_contents(path, buf, len, NULL));
    expect_one_line(path, "", "user_bytes=128M,dies_per_channel=1,"
                    "blocks_per_plane=64,spare_blocks_per_plane=4,"
                    "pages_per_block=48", "another drive");
    /* not a state file */
    ck_assert(g_file_set_contents(path, "hello", 5, NULL));
    expect_one_line(path, "", ST_PARAMS, "corrupt");
    /* a bad interval */
    expect_one_line(path, ",state-reset=on,state-interval=100000", ST_PARAMS,
                    "state-interval");
    unlink(path);
}
END_TEST

/* A device part of @version (2 or 3) with serial @sn (v3), as saved. */
static void save_device_part(const char *path, uint32_t version,
                             const char *sn)
{
    H3100Model *m = st_model();
    uint8_t part[100] = "H3DS";
    size_t len = version >= 3 ? 100 : 80;
    GError *err = NULL;

    part[4] = version;
    part[16] = 7;                     /* power cycles */
    memcpy(part + 48, "H3D10060", 8); /* firmware slot 1, active */
    part[72] = 1;
    if (sn) {
        memcpy(part + 80, sn, strlen(sn));
    }
    ck_assert_msg(h3100_model_save_with(m, path, part, len, 0, &err), "%s",
                  err ? err->message : "");
    h3100_model_free(m);
}

/*
 * A version 2 device part (before serials were saved) loads, and the
 * file then keeps the serial; a saved serial that is not printable ASCII
 * is refused.
 */
START_TEST(test_serial_saved)
{
    g_autofree char *path = state_file("serial.h3s");
    uint8_t log[512], id[4096];
    char sn[21] = "";
    Dev *d;

    save_device_part(path, 2, NULL);
    d = st_launch(path, ",serial=FIRST-SERIAL");
    st_enable(d);
    smart(d, log);
    ck_assert_uint_eq(le64_at(log, SMART_POWER_CYCLES), 8);
    dev_close(d);
    d = st_launch(path, "");
    st_enable(d);
    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify Controller");
    memcpy(sn, id + 4, 20);
    g_strchomp(sn);
    ck_assert_str_eq(sn, "FIRST-SERIAL");
    dev_close(d);
    save_device_part(path, 3, "BAD\tSERIAL");
    expect_one_line(path, "", ST_PARAMS, "serial");
    save_device_part(path, 3, "");
    expect_one_line(path, "", ST_PARAMS, "serial");
    unlink(path);
}
END_TEST

/* CBh item @name's u16 @k, and its raw bytes as one number */
#define EXT_U16(l, name, k) \
    le16_at(l, offsetof(H3100DapuExtLog, name) + 5 + 2 * (k))
#define EXT_RAW(l, name) \
    (le64_at(l, offsetof(H3100DapuExtLog, name) + 5) & 0xffffffffffffull)

static void dapu_ext(Dev *d, uint8_t *log)
{
    ck_status(nh_get_log(d->h, H3100_LOG_DAPU_EXT, 0xffffffff, log, 512, 0),
              0, "log CBh");
}

/*
 * Log CBh's lifetime part (temperature extremes since born, the
 * temperature at every start, firmware activations) survives a restart;
 * a file whose saved temperatures cannot be is refused.
 */
START_TEST(test_dapustor_life_survives_restart)
{
    g_autofree char *path = state_file("life.h3s");
    uint8_t a[512], b[512], part[120] = "H3DS";
    H3100Model *m;
    GError *err = NULL;
    NvmeSqe sqe;
    NvmeCqe cqe;
    Dev *d;

    d = st_launch(path, ",state-interval=0");
    st_enable(d);
    nh_sqe_init(&sqe, NVME_ADM_FW_COMMIT, 0);
    sqe.cdw10 = 1 | 3 << 3;           /* activate slot 1 now */
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), 0, "firmware commit, CA 3");
    qt_clock_step(d->qt, 3000000000ll);
    dapu_ext(d, a);
    dev_close(d);
    ck_assert_uint_eq(EXT_RAW(a, firmware_update_count), 1);

    d = st_launch(path, ",state-interval=0");
    st_enable(d);
    dapu_ext(d, b);
    dev_close(d);
    ck_assert_uint_eq(EXT_RAW(b, firmware_update_count), 1);
    ck_assert_uint_ge(EXT_U16(b, temp_since_born, 0),
                      EXT_U16(a, temp_since_born, 0));
    ck_assert_uint_le(EXT_U16(b, temp_since_born, 1),
                      EXT_U16(a, temp_since_born, 1));
    /* power-on temperature: max, min over both starts */
    ck_assert_uint_ge(EXT_U16(b, power_on_temperature, 0),
                      EXT_U16(a, power_on_temperature, 2));
    ck_assert_uint_le(EXT_U16(b, power_on_temperature, 1),
                      EXT_U16(a, power_on_temperature, 2));

    /* version 4 with a minimum above its maximum */
    part[4] = 4;
    memcpy(part + 48, "H3D10060", 8);
    part[72] = 1;
    memcpy(part + 80, "SN-LIFE", 7);
    part[100] = 330 & 0xff;           /* minimum 330 K, maximum 320 K */
    part[101] = 330 >> 8;
    part[104] = 320 & 0xff;
    part[105] = 320 >> 8;
    m = st_model();
    ck_assert_msg(h3100_model_save_with(m, path, part, sizeof(part), 0,
                                        &err), "%s", err ? err->message : "");
    h3100_model_free(m);
    expect_one_line(path, "", ST_PARAMS, "temperatures");
    unlink(path);
}
END_TEST

static uint16_t lsi_log(Dev *d, uint8_t *log)
{
    ck_status(nh_get_log(d->h, NVME_LOG_LBA_STATUS, 0xffffffff, log, 512, 0),
              0, "log 0Eh");
    return le16_at(log, 14);          /* LSGC */
}

static void write_uncor(Dev *d, uint64_t slba)
{
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, slba, 1, 0, 0,
                    NULL), 0, "Write Uncorrectable of LBA %" PRIu64, slba);
}

/*
 * Log 0Eh's generation counter is persistent across power on (NVMe
 * 1.4), and so is whether LBAs came since the host last read the page:
 * the ranges come back with the count they made.
 */
START_TEST(test_lba_status_survives_restart)
{
    g_autofree char *path = state_file("lsgc.h3s");
    uint8_t log[512];
    Dev *d;

    d = st_launch(path, ",state-interval=0");
    st_enable(d);
    write_uncor(d, 100);
    ck_assert_uint_eq(lsi_log(d, log), 1);
    write_uncor(d, 200);              /* new since the read: LSGC 2 */
    dev_close(d);

    d = st_launch(path, ",state-interval=0");
    st_enable(d);
    write_uncor(d, 300);              /* not read since 200: still 2 */
    ck_assert_uint_eq(lsi_log(d, log), 2);
    ck_assert_uint_eq(le32_at(log, 16 + 4), 3);     /* NLRD */
    ck_assert_uint_eq(le64_at(log, 32), 100);
    ck_assert_uint_eq(le64_at(log, 48), 200);
    write_uncor(d, 400);
    ck_assert_uint_eq(lsi_log(d, log), 3);
    dev_close(d);
    unlink(path);
}
END_TEST

/* One namespace entry of a version 5 device part */
typedef struct NsEntry {
    uint32_t nsid;
    uint8_t state, lbads;
    uint64_t base, bytes;
} NsEntry;

/* A version 5 device part with namespaces @ns (@n of them). */
static void save_ns_table(const char *path, const NsEntry *ns, unsigned n)
{
    size_t len = 120 + 8 + 32 * n;
    g_autofree uint8_t *part = g_malloc0(len);
    H3100Model *m = st_model();
    GError *err = NULL;

    memcpy(part, "H3DS", 4);
    part[4] = 5;
    memcpy(part + 48, "H3D10060", 8);
    part[72] = 1;
    memcpy(part + 80, "SN-NS", 5);
    part[120] = n;                    /* namespaces created, ever */
    part[124] = n;
    for (unsigned i = 0; i < n; i++) {
        uint8_t *e = part + 128 + 32 * i;

        memcpy(e, &ns[i].nsid, 4);
        e[4] = ns[i].state;
        e[5] = ns[i].lbads;
        e[8] = i + 1;                 /* creation number */
        memcpy(e + 16, &ns[i].base, 8);
        memcpy(e + 24, &ns[i].bytes, 8);
    }
    ck_assert_msg(h3100_model_save_with(m, path, part, len, 0, &err), "%s",
                  err ? err->message : "");
    h3100_model_free(m);
}

/*
 * A saved namespace table loads as it was (state 2 = attached, 1 =
 * detached); one that cannot be is refused with one line.
 */
START_TEST(test_ns_table_checked)
{
    g_autofree char *path = state_file("ns.h3s");
    const uint64_t M = 1 << 20;
    const NsEntry good[] = {
        { 2, 2, 12, 0, 64 * M }, { 5, 1, 9, 64 * M, 8 * M },
    };
    const NsEntry bad[][2] = {
        { { 1, 2, 9, 0, 64 * M }, { 2, 2, 9, 32 * M, 64 * M } }, /* overlap */
        { { 1, 2, 9, 0, 64 * M }, { 1, 2, 9, 64 * M, M } },  /* NSID twice */
        { { 1, 2, 10, 0, 64 * M }, { 2, 2, 9, 64 * M, M } },  /* LBADS 10 */
        { { 1, 2, 9, 0, 512 * M }, { 2, 2, 9, 0, 0 } },       /* too big */
        { { 33, 2, 9, 0, M }, { 34, 2, 9, M, M } },           /* NSID 33 */
        { { 1, 7, 9, 0, M }, { 2, 2, 9, M, M } },             /* state 7 */
        { { 1, 2, 12, 4096, M }, { 2, 2, 9, 2 * M, M } },     /* unaligned */
    };
    uint8_t id[4096];
    Dev *d;

    save_ns_table(path, good, 2);
    d = st_launch(path, ",state-interval=0");
    nh_enable(d->h, 32);
    ck_status(nh_identify(d->h, 0x10, 0, id), 0, "allocated namespaces");
    ck_assert_uint_eq(le32_at(id, 0), 2);
    ck_assert_uint_eq(le32_at(id, 4), 5);
    ck_assert_uint_eq(le32_at(id, 8), 0);
    ck_status(nh_identify(d->h, 0x02, 0, id), 0, "active namespaces");
    ck_assert_uint_eq(le32_at(id, 0), 2);
    ck_assert_uint_eq(le32_at(id, 4), 0);
    ck_status(nh_identify(d->h, 0, 2, id), 0, "identify namespace 2");
    ck_assert_uint_eq(le64_at(id, 0), 64 * M / 4096);
    ck_assert_uint_eq(id[26] & 0xf, 1);
    dev_close(d);
    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        save_ns_table(path, bad[i], bad[i][1].bytes ? 2 : 1);
        expect_one_line(path, "", ST_PARAMS, "namespace table");
    }
    unlink(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("state");
    TCase *tc = dev_tcase(s, "state");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_survives_restart);
    tcase_add_test(tc, test_worn_drive_read_errors);
    tcase_add_test(tc, test_recent_waf_survives_restart);
    tcase_add_test(tc, test_sim_file_loads);
    tcase_add_test(tc, test_dirty_counts_unsafe);
    tcase_add_test(tc, test_checkpoint);
    tcase_add_test(tc, test_reset_starts_fresh);
    tcase_add_test(tc, test_bad_files_refused);
    tcase_add_test(tc, test_serial_saved);
    tcase_add_test(tc, test_dapustor_life_survives_restart);
    tcase_add_test(tc, test_ns_table_checked);
    tcase_add_test(tc, test_lba_status_survives_restart);
    tcase_add_test(tc, test_shutdown_saves_clean);
    tcase_add_test(tc, test_shutdown_toggled);
    return dev_main(s);
}
