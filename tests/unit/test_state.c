/*
 * Saved drive state: a round trip keeps everything; a damaged or foreign
 * file is refused with a clear error.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "h3100_test.h"

static char *tmp_path(const char *name)
{
    const char *dir = g_getenv("TMPDIR");

    return g_strdup_printf("%s/h3100-test-%d-%s", dir ? dir : "/tmp",
                           (int)getpid(), name);
}

static H3100Model *worn_model(H3100Config *cfg)
{
    H3100Model *m;

    *cfg = tiny_config(H3100_FAMILY_H3100, 1);
    cfg->ftl.factory_bad_ppm = 10000;
    m = h3100_model_new(cfg, NULL);
    ck_assert(h3100_model_precondition(m, "rand:2", 9, NULL, NULL, NULL));
    io_at(m, 0, H3100_OP_DEALLOCATE, 0, 1 << 20);
    return m;
}

START_TEST(test_round_trip)
{
    g_autofree char *path = tmp_path("rt");
    H3100Config cfg;
    H3100Model *m = worn_model(&cfg), *back;
    H3100Health a, b;
    GError *err = NULL;
    uint64_t slots = h3100_user_slots(&cfg);

    ck_assert_msg(h3100_model_save(m, path, &err), "%s",
                  err ? err->message : "");
    back = h3100_model_load(&cfg, path, &err);
    ck_assert_msg(back, "%s", err ? err->message : "");
    h3100_model_health(m, 0, &a);
    h3100_model_health(back, 0, &b);
    ck_assert_uint_eq(a.nand_write_bytes, b.nand_write_bytes);
    ck_assert_uint_eq(a.host_write_bytes, b.host_write_bytes);
    ck_assert_uint_eq(a.block_erases, b.block_erases);
    ck_assert_uint_eq(a.erase_max, b.erase_max);
    ck_assert_uint_eq(a.factory_bad_blocks, b.factory_bad_blocks);
    ck_assert_uint_eq(a.free_superblocks, b.free_superblocks);
    ck_assert_double_eq(a.waf, b.waf);
    for (uint64_t lpn = 0; lpn < slots; lpn += 97) {
        ck_assert(h3100_model_is_mapped(m, lpn * 4096) ==
                  h3100_model_is_mapped(back, lpn * 4096));
    }
    assert_invariants(back);
    /* the loaded drive carries on exactly as the original */
    ck_assert(h3100_model_precondition(m, "rand:0.5", 3, NULL, NULL, NULL));
    ck_assert(h3100_model_precondition(back, "rand:0.5", 3, NULL, NULL,
                                       NULL));
    h3100_model_health(m, 0, &a);
    h3100_model_health(back, 0, &b);
    ck_assert_uint_eq(a.nand_write_bytes, b.nand_write_bytes);
    assert_invariants(back);
    h3100_model_free(m);
    h3100_model_free(back);
    unlink(path);
}
END_TEST

static void expect_refused(const H3100Config *cfg, const char *path,
                           const char *words)
{
    GError *err = NULL;
    H3100Model *m = h3100_model_load(cfg, path, &err);

    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err->message, words), "error '%s' lacks '%s'",
                  err->message, words);
    g_error_free(err);
}

static void damage(const char *path, long offset, int mode)
{
    FILE *f = fopen(path, "r+b");
    int c;

    ck_assert_ptr_nonnull(f);
    if (mode == 't') {
        ck_assert_int_eq(ftruncate(fileno(f), offset), 0);
    } else {
        fseek(f, offset, offset < 0 ? SEEK_END : SEEK_SET);
        c = fgetc(f);
        fseek(f, -1, SEEK_CUR);
        fputc(c ^ 0x5a, f);
    }
    fclose(f);
}

START_TEST(test_corrupt_files_refused)
{
    g_autofree char *path = tmp_path("bad");
    H3100Config cfg;
    H3100Model *m = worn_model(&cfg);
    struct { long offset; int mode; const char *words; } cases[] = {
        { 0, 'f', "not an H3100" },
        { 9, 'f', "version" },
        { 20, 'f', "header checksum" },
        { 4000, 'f', "corrupt" },
        { -3, 'f', "corrupt" },
        { 300, 'f', "corrupt" },
        { 5000, 't', "corrupt" },
        { 10, 't', "shorter than its header" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        ck_assert(h3100_model_save(m, path, NULL));
        damage(path, cases[i].offset, cases[i].mode);
        expect_refused(&cfg, path, cases[i].words);
    }
    expect_refused(&cfg, "/nonexistent/dir/state", "cannot open");
    h3100_model_free(m);
    unlink(path);
}
END_TEST

START_TEST(test_other_drive_refused)
{
    g_autofree char *path = tmp_path("other");
    H3100Config cfg, other;
    H3100Model *m = worn_model(&cfg);

    ck_assert(h3100_model_save(m, path, NULL));
    other = tiny_config(H3100_FAMILY_H3100, 2);
    expect_refused(&other, path, "another drive");
    other = cfg;
    other.geo.user_bytes -= 1 << 20;
    expect_refused(&other, path, "another drive");
    /* timings are not part of the drive's identity */
    other = cfg;
    other.nand.t_prog_ns += 1000;
    h3100_model_free(h3100_model_load(&other, path, NULL));
    h3100_model_free(m);
    unlink(path);
}
END_TEST

START_TEST(test_extra_and_flags)
{
    g_autofree char *path = tmp_path("extra");
    static const char blob[] = "device state v1";
    H3100Config cfg;
    H3100Model *m = worn_model(&cfg), *back;
    g_autoptr(GBytes) got = NULL;
    H3100Health a, b;
    GError *err = NULL;
    uint32_t flags = 0;
    gsize len;

    ck_assert_msg(h3100_model_save_with(m, path, blob, sizeof(blob),
                                        H3100_STATE_DIRTY, &err), "%s",
                  err ? err->message : "");
    back = h3100_model_load_with(&cfg, path, &got, &flags, &err);
    ck_assert_msg(back, "%s", err ? err->message : "");
    ck_assert_uint_eq(flags, H3100_STATE_DIRTY);
    ck_assert_ptr_nonnull(got);
    ck_assert_mem_eq(g_bytes_get_data(got, &len), blob, sizeof(blob));
    ck_assert_uint_eq(len, sizeof(blob));
    h3100_model_health(m, 0, &a);
    h3100_model_health(back, 0, &b);
    ck_assert_uint_eq(a.nand_write_bytes, b.nand_write_bytes);
    ck_assert_uint_eq(a.block_erases, b.block_erases);
    assert_invariants(back);
    h3100_model_free(back);
    g_clear_pointer(&got, g_bytes_unref);

    /* clearing the flag rewrites the header only; the rest still checks */
    ck_assert(h3100_state_set_flags(path, 0, NULL));
    back = h3100_model_load_with(&cfg, path, &got, &flags, &err);
    ck_assert_msg(back, "%s", err ? err->message : "");
    ck_assert_uint_eq(flags, 0);
    ck_assert_uint_eq(g_bytes_get_size(got), sizeof(blob));
    h3100_model_free(back);
    g_clear_pointer(&got, g_bytes_unref);
    /* the plain loader ignores the extra state */
    back = h3100_model_load(&cfg, path, &err);
    ck_assert_msg(back, "%s", err ? err->message : "");
    h3100_model_free(back);

    /* a drive that never wrote loads too */
    {
        H3100Model *fresh = h3100_model_new(&cfg, NULL);

        ck_assert(h3100_model_save(fresh, path, NULL));
        h3100_model_free(fresh);
        back = h3100_model_load(&cfg, path, &err);
        ck_assert_msg(back, "%s", err ? err->message : "");
        assert_invariants(back);
        h3100_model_free(back);
    }

    /* a plain save has no extra state and no flags */
    ck_assert(h3100_model_save(m, path, NULL));
    back = h3100_model_load_with(&cfg, path, &got, &flags, &err);
    ck_assert_msg(back, "%s", err ? err->message : "");
    ck_assert_uint_eq(flags, 0);
    ck_assert_uint_eq(g_bytes_get_size(got), 0);
    h3100_model_free(back);

    /* damage in the extra state fails the payload checksum */
    ck_assert(h3100_model_save_with(m, path, blob, sizeof(blob), 0, NULL));
    damage(path, -4, 'f');
    expect_refused(&cfg, path, "payload checksum");
    /* a truncated extra state is refused */
    ck_assert(h3100_model_save_with(m, path, blob, sizeof(blob), 0, NULL));
    {
        struct stat st;

        ck_assert_int_eq(stat(path, &st), 0);
        damage(path, st.st_size - 4, 't');
    }
    expect_refused(&cfg, path, "corrupt");
    /* flags cannot be set on a file that fails its header checks */
    damage(path, 0, 'f');
    ck_assert(!h3100_state_set_flags(path, 0, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "not an H3100"));
    g_clear_error(&err);
    ck_assert(!h3100_state_set_flags("/nonexistent/dir/state", 0, NULL));
    h3100_model_free(m);
    unlink(path);
}
END_TEST

/* Header fields as saved (see models/state.c). */
#define HDR_VERSION     8
#define HDR_CRC         12
#define HDR_PAYLOAD     16
#define HDR_PAYLOAD_CRC 24
#define HDR_BYTES       112
/* Version 3's thermal counters, before the extra state's length. */
#define THERMAL_BYTES   40
#define EXTRA_LEN_BYTES 8

/*
 * Make the version 3 file in @buf (no extra state) an older one: drop
 * @cut bytes just before its last @keep, then mend the header.
 */
static void downgrade(uint8_t *buf, gsize *len, uint32_t version,
                      gsize cut, gsize keep)
{
    uint32_t crc;
    uint64_t payload;

    memmove(buf + *len - keep - cut, buf + *len - keep, keep);
    *len -= cut;
    memcpy(buf + HDR_VERSION, &version, 4);
    payload = *len - HDR_BYTES;
    memcpy(buf + HDR_PAYLOAD, &payload, 8);
    crc = crc32c(buf + HDR_BYTES, payload);
    memcpy(buf + HDR_PAYLOAD_CRC, &crc, 4);
    memset(buf + HDR_CRC, 0, 4);
    crc = crc32c(buf, HDR_BYTES);
    memcpy(buf + HDR_CRC, &crc, 4);
}

/* A drive that spent time hot: every thermal counter is non-zero. */
static H3100Model *hot_model(H3100Config *cfg)
{
    H3100Model *m;

    *cfg = tiny_config(H3100_FAMILY_H3100, 1);
    /* idle at 313 K: above both temperatures from the start */
    cfg->thermal.wctemp_k = 305;
    cfg->thermal.cctemp_k = 310;
    m = h3100_model_new(cfg, NULL);
    ck_assert(h3100_model_precondition(m, "seq", 9, NULL, NULL, NULL));
    h3100_model_set_thermal_limits(m, 300, 310);
    io_at(m, 1000000000, H3100_OP_READ, 0, 4096);
    h3100_model_set_thermal_limits(m, 300, 400);
    io_at(m, 2000000000, H3100_OP_READ, 0, 4096);
    return m;
}

static void load_older(const H3100Config *cfg, const char *path,
                       const uint8_t *buf, gsize len, H3100Model *m)
{
    g_autoptr(GBytes) got = NULL;
    H3100Model *back;
    H3100Health a, b;
    GError *err = NULL;

    ck_assert(g_file_set_contents(path, (const char *)buf, len, NULL));
    back = h3100_model_load_with(cfg, path, &got, NULL, &err);
    ck_assert_msg(back, "%s", err ? err->message : "");
    ck_assert_uint_eq(g_bytes_get_size(got), 0);
    h3100_model_health(m, 0, &a);
    h3100_model_health(back, 0, &b);
    ck_assert_uint_eq(a.nand_write_bytes, b.nand_write_bytes);
    /* older files had no thermal counters */
    ck_assert_uint_gt(a.warn_temp_ns, 0);
    ck_assert_uint_eq(b.warn_temp_ns, 0);
    ck_assert_uint_eq(b.tmt1_transitions, 0);
    ck_assert_uint_eq(b.tmt2_ns, 0);
    assert_invariants(back);
    h3100_model_free(back);
}

START_TEST(test_version1_loads)
{
    g_autofree char *path = tmp_path("v1");
    g_autofree uint8_t *buf = NULL, *copy = NULL;
    H3100Config cfg;
    H3100Model *m = hot_model(&cfg);
    uint32_t v;
    gsize len, len2;

    ck_assert(h3100_model_save(m, path, NULL));
    ck_assert(g_file_get_contents(path, (char **)&buf, &len, NULL));
    ck_assert_uint_gt(len, HDR_BYTES + THERMAL_BYTES + EXTRA_LEN_BYTES);
    memcpy(&v, buf + HDR_VERSION, 4);
    ck_assert_uint_eq(v, 3);
    copy = g_malloc(len);
    memcpy(copy, buf, len);
    len2 = len;

    /* less the thermal counters, a version 3 file is version 2 */
    downgrade(copy, &len2, 2, THERMAL_BYTES, EXTRA_LEN_BYTES);
    load_older(&cfg, path, copy, len2, m);
    /* and less the extra state's length too, version 1 */
    downgrade(buf, &len, 1, THERMAL_BYTES + EXTRA_LEN_BYTES, 0);
    load_older(&cfg, path, buf, len, m);

    /* a later version is refused, naming it */
    v = 4;
    memcpy(buf + HDR_VERSION, &v, 4);
    ck_assert(g_file_set_contents(path, (char *)buf, len, NULL));
    expect_refused(&cfg, path, "version 4");
    h3100_model_free(m);
    unlink(path);
}
END_TEST

/* The lifetime thermal counters survive; the temperature restarts idle. */
START_TEST(test_thermal_counters_saved)
{
    g_autofree char *path = tmp_path("thermal");
    H3100Config cfg;
    H3100Model *m = hot_model(&cfg), *back;
    H3100Health a, b;
    GError *err = NULL;

    h3100_model_health(m, 2000000000, &a);
    ck_assert_uint_eq(a.throttle_level, 1);
    ck_assert_uint_eq(a.tmt1_transitions, 1);
    ck_assert_uint_eq(a.tmt2_transitions, 1);
    ck_assert_uint_gt(a.tmt1_ns, 0);
    ck_assert_uint_gt(a.tmt2_ns, 0);
    ck_assert_uint_gt(a.crit_temp_ns, 0);
    ck_assert_uint_ge(a.warn_temp_ns, a.crit_temp_ns);
    ck_assert_msg(h3100_model_save(m, path, &err), "%s",
                  err ? err->message : "");
    back = h3100_model_load(&cfg, path, &err);
    ck_assert_msg(back, "%s", err ? err->message : "");
    h3100_model_health(back, 0, &b);
    ck_assert_uint_eq(b.warn_temp_ns, a.warn_temp_ns);
    ck_assert_uint_eq(b.crit_temp_ns, a.crit_temp_ns);
    ck_assert_uint_eq(b.tmt1_transitions, a.tmt1_transitions);
    ck_assert_uint_eq(b.tmt2_transitions, a.tmt2_transitions);
    ck_assert_uint_eq(b.tmt1_ns, a.tmt1_ns);
    ck_assert_uint_eq(b.tmt2_ns, a.tmt2_ns);
    /* a power cycle: idle temperature, configured thresholds */
    ck_assert_uint_eq(b.temperature_k, 313);
    ck_assert_uint_eq(b.throttle_level, 0);
    h3100_model_free(back);
    h3100_model_free(m);
    unlink(path);
}
END_TEST

static Suite *state_suite(void)
{
    Suite *s = suite_create("state");
    TCase *tc = tcase_create("state");

    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_corrupt_files_refused);
    tcase_add_test(tc, test_other_drive_refused);
    tcase_add_test(tc, test_extra_and_flags);
    tcase_add_test(tc, test_version1_loads);
    tcase_add_test(tc, test_thermal_counters_saved);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return h3100_test_main(state_suite());
}
