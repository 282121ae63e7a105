/*
 * Replay the device's fuzz corpus: each qtest trace of a directory
 * (tests/fuzz/corpus/, written by gen_traces.py; crash reproducers of
 * the fuzzers go there too) runs on a fresh QEMU with the drive, in
 * each device configuration its "# config:" line names.  QEMU must
 * answer every line, stay alive and exit cleanly at the end: under the
 * README's test command that QEMU's device and model are built with
 * ASan and UBSan (scripts/lib/cc-instrument.sh), so a memory error,
 * undefined behaviour or a leak at exit fails the trace too, with
 * QEMU's report.  A trace that hangs runs into Check's time-out.
 *
 *   H3100_CORPUS=DIR QTEST_QEMU_BINARY=QEMU test-fuzz-replay
 *
 * Trace lines: qtest protocol commands, answered by anything (a FAIL is
 * a guest's mistake, not the device's); "qmp JSON" goes to QMP; lines
 * starting with '#' are comments.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "dev.h"

typedef struct ReplayConfig {
    const char *name;
    const char *devopts;              /* after drive=d0 */
    const char *extra;                /* more QEMU arguments */
} ReplayConfig;

/* addr=4 and id=h0: where gen_traces.py's traces find the drive */
#define REPLAY_DEV ",model-params=user_bytes=256M,addr=4,id=h0"

static const ReplayConfig replay_configs[] = {
    { "main", REPLAY_DEV, "" },
    { "notiming", REPLAY_DEV ",timing=off,vwc=on", "" },
    { "iothread", REPLAY_DEV ",iothread=io0", "-object iothread,id=io0" },
    { "iothread2", REPLAY_DEV DEV_QMAP2, DEV_IOT2 },
    { "aer", REPLAY_DEV ",aer=on", "" },
};

typedef struct ReplayRun {
    char *path;
    const ReplayConfig *config;
} ReplayRun;

static GPtrArray *runs;

static const ReplayConfig *replay_config(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(replay_configs); i++) {
        if (strcmp(replay_configs[i].name, name) == 0) {
            return &replay_configs[i];
        }
    }
    return NULL;
}

/* One run per configuration the trace's "# config:" line names. */
static void replay_plan_trace(const char *path)
{
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    bool named = false;

    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(EXIT_FAILURE);
    }
    lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        g_auto(GStrv) names = NULL;

        if (!g_str_has_prefix(*l, "# config:")) {
            continue;
        }
        names = g_strsplit_set(*l + strlen("# config:"), " \t", -1);
        for (char **n = names; *n; n++) {
            ReplayRun *r;

            if (!**n) {
                continue;
            }
            r = g_new0(ReplayRun, 1);
            r->path = g_strdup(path);
            r->config = replay_config(*n);
            if (!r->config) {
                fprintf(stderr, "%s: unknown configuration '%s'\n", path, *n);
                exit(EXIT_FAILURE);
            }
            g_ptr_array_add(runs, r);
            named = true;
        }
    }
    if (!named) {
        ReplayRun *r = g_new0(ReplayRun, 1);

        r->path = g_strdup(path);
        r->config = &replay_configs[0];
        g_ptr_array_add(runs, r);
    }
}

static gint replay_cmp_path(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_plan(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
    const char *name;

    if (!d) {
        fprintf(stderr, "H3100_CORPUS: cannot open %s\n", dir);
        exit(EXIT_FAILURE);
    }
    while ((name = g_dir_read_name(d))) {
        if (g_str_has_suffix(name, ".qtest")) {
            g_ptr_array_add(paths, g_build_filename(dir, name, NULL));
        }
    }
    g_ptr_array_sort(paths, replay_cmp_path);
    for (guint i = 0; i < paths->len; i++) {
        replay_plan_trace(g_ptr_array_index(paths, i));
    }
}

static void replay_line(QTest *qt, const char *line)
{
    g_autofree char *reply = NULL;

    if (!*line || *line == '#') {
        return;
    }
    if (g_str_has_prefix(line, "qmp ")) {
        reply = qt_qmp(qt, "%s", line + 4);
    } else {
        reply = qt_cmd_raw(qt, "%s", line);
    }
}

START_TEST(test_trace)
{
    const ReplayRun *r = g_ptr_array_index(runs, _i);
    const ReplayConfig *c = r->config;
    g_autofree char *text = NULL;
    g_autofree char *img = qt_backing_file("replay.img", DEV_NS_BYTES, "raw");
    g_autofree char *devarg = dev_device_arg(c->devopts);
    g_auto(GStrv) lines = NULL;
    unsigned n = 0;
    QTest *qt;

    ck_assert(g_file_get_contents(r->path, &text, NULL, NULL));
    lines = g_strsplit(text, "\n", -1);
    fprintf(stderr, "%s [%s]\n", r->path, c->name);
    qt = qt_start("-drive file=%s,format=raw,if=none,id=d0 -device %s %s",
                  img, devarg, c->extra);
    for (char **l = lines; *l; l++, n++) {
        replay_line(qt, *l);
        ck_assert_msg(qt_alive(qt), "%s [%s]: QEMU died at line %u: %s",
                      r->path, c->name, n + 1, *l);
    }
    /* the device still answers its registers, then QEMU exits cleanly */
    g_free(qt_cmd(qt, "readl 0x%x", 0xe000001c));
    qt_quit(qt);
}
END_TEST

int main(void)
{
    const char *dir = getenv("H3100_CORPUS");
    Suite *s = suite_create("fuzz-replay");
    TCase *tc = tcase_create("corpus");

    if (!dir || !*dir) {
        fprintf(stderr, "H3100_CORPUS must name the corpus directory\n");
        return EXIT_FAILURE;
    }
    runs = g_ptr_array_new();
    replay_plan(dir);
    if (!runs->len) {
        fprintf(stderr, "H3100_CORPUS: no .qtest trace in %s\n", dir);
        return EXIT_FAILURE;
    }
    tcase_add_loop_test(tc, test_trace, 0, runs->len);
    suite_add_tcase(s, tc);
    return dev_main(s);
}
