/*
 * Saved drive state: a round trip keeps everything; a damaged or foreign
 * file is refused with a clear error.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "forge.h"
#include "h3100_test.h"
#include "model_priv.h"
#include "state_format.h"

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


/*
 * Make the version 5 file in @buf (no extra state) an older one: drop
 * @cut bytes just before its last @keep, then mend the header.  (Version
 * 5 is version 4 without reverse maps, which version 4 files may hold:
 * tests/cli/test_sim_cli.sh loads one.)
 */
static void downgrade(uint8_t *buf, gsize *len, uint32_t version,
                      gsize cut, gsize keep)
{
    memmove(buf + *len - keep - cut, buf + *len - keep, keep);
    *len -= cut;
    memcpy(buf + STATE_HDR_VERSION, &version, 4);
    state_header_mend(buf, *len);
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

/*
 * The older file in @buf loads as @m was saved; versions before 3 had no
 * thermal counters, nor (before 2) any extra state.
 */
static void load_older(const H3100Config *cfg, const char *path,
                       const uint8_t *buf, gsize len, H3100Model *m,
                       uint32_t version)
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
    ck_assert_uint_eq(a.mapped_bytes, b.mapped_bytes);
    ck_assert_uint_gt(a.warn_temp_ns, 0);
    if (version >= 3) {
        ck_assert_uint_eq(b.warn_temp_ns, a.warn_temp_ns);
    } else {
        ck_assert_uint_eq(b.warn_temp_ns, 0);
        ck_assert_uint_eq(b.tmt1_transitions, 0);
        ck_assert_uint_eq(b.tmt2_ns, 0);
    }
    assert_invariants(back);
    h3100_model_free(back);
}

START_TEST(test_version1_loads)
{
    g_autofree char *path = tmp_path("v1");
    g_autofree uint8_t *buf = NULL, *copy = NULL;
    H3100Config cfg;
    H3100Model *m = hot_model(&cfg), *v3;
    uint32_t v;
    gsize len, len2;

    ck_assert(h3100_model_save(m, path, NULL));
    ck_assert(g_file_get_contents(path, (char **)&buf, &len, NULL));
    ck_assert_uint_gt(len, STATE_HDR_BYTES + STATE_THERMAL_BYTES +
                      STATE_ECC_BYTES + STATE_EXTRA_LEN_BYTES);
    memcpy(&v, buf + STATE_HDR_VERSION, 4);
    ck_assert_uint_eq(v, 5);
    copy = g_malloc(len);

    /* without reverse maps, a version 5 file is a version 4 one */
    memcpy(copy, buf, len);
    len2 = len;
    downgrade(copy, &len2, 4, 0, 0);
    load_older(&cfg, path, copy, len2, m, 4);

    /* less the LDPC counters, a version 4 file is version 3 */
    memcpy(copy, buf, len);
    len2 = len;
    downgrade(copy, &len2, 3, STATE_ECC_BYTES, STATE_EXTRA_LEN_BYTES);
    ck_assert(g_file_set_contents(path, (const char *)copy, len2, NULL));
    v3 = h3100_model_load(&cfg, path, NULL);
    ck_assert_msg(v3, "a version 3 file loads");
    h3100_model_free(v3);
    /* less the thermal counters too, version 2 */
    memcpy(copy, buf, len);
    len2 = len;
    downgrade(copy, &len2, 2, STATE_THERMAL_BYTES + STATE_ECC_BYTES,
              STATE_EXTRA_LEN_BYTES);
    load_older(&cfg, path, copy, len2, m, 2);
    /* and less the extra state's length too, version 1 */
    downgrade(buf, &len, 1, STATE_THERMAL_BYTES + STATE_ECC_BYTES +
              STATE_EXTRA_LEN_BYTES, 0);
    load_older(&cfg, path, buf, len, m, 1);

    /* a later version is refused, naming it */
    v = 6;
    memcpy(buf + STATE_HDR_VERSION, &v, 4);
    ck_assert(g_file_set_contents(path, (char *)buf, len, NULL));
    expect_refused(&cfg, path, "version 6");
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

/*
 * Hostile state files (audit 2026-12, #5-#9 and their siblings): the
 * checksums are right (saving computes them), the FTL inside is not.
 * Each is made by damaging a live model's structures and saving it; the
 * loader must refuse it as corrupt, naming what is wrong.  Before the
 * loader checked the FTL's invariants, each of these loaded, and guest
 * I/O on it then crashed the model or wrote past the end of its tables.
 */

/* A drive with closed superblocks, a victim, free ones and open ones. */
static H3100Model *written_model(H3100Config *cfg)
{
    H3100Model *m;

    *cfg = tiny_config(H3100_FAMILY_H3100, 1);
    m = h3100_model_new(cfg, NULL);
    ck_assert(h3100_model_precondition(m, "seq", 5, NULL, NULL, NULL));
    ck_assert(random_writes(m, h3100_user_slots(cfg) / 4, 6));
    assert_invariants(m);
    return m;
}

static H3100Model *fresh_model(H3100Config *cfg)
{
    *cfg = tiny_config(H3100_FAMILY_H3100, 1);
    return h3100_model_new(cfg, NULL);
}

/* Save @m as damaged, free it, and expect the file refused with @words. */
static void expect_saved_refused(H3100Model *m, const H3100Config *cfg,
                                 const char *words)
{
    g_autofree char *path = tmp_path("hostile");
    GError *err = NULL;

    ck_assert_msg(h3100_model_save(m, path, &err), "%s",
                  err ? err->message : "");
    h3100_model_free(m);
    expect_refused(cfg, path, words);
    unlink(path);
}

static uint32_t first_in_state(const Ftl *f, SbState state)
{
    for (uint32_t i = 0; i < f->nsb; i++) {
        if (f->sb[i].state == state) {
            return i;
        }
    }
    ck_abort_msg("no superblock in state %d", state);
    return FTL_NO_SB;
}

/* #5: an open superblock without tables; the first write went to NULL. */
START_TEST(test_open_without_tables_refused)
{
    H3100Config cfg;
    H3100Model *m = fresh_model(&cfg);

    m->ftl.open[0] = 5;
    expect_saved_refused(m, &cfg, "stream 0 writes into superblock 5, "
                         "which is free");

    /* the same on a drive with data, naming a closed superblock */
    m = written_model(&cfg);
    m->ftl.open[3] = first_in_state(&m->ftl, SB_CLOSED);
    expect_saved_refused(m, &cfg, "which is closed");
}
END_TEST

/* #6: an open superblock already full; each write went one past p2l[]. */
START_TEST(test_open_full_refused)
{
    H3100Config cfg;
    H3100Model *m = fresh_model(&cfg);
    Ftl *f = &m->ftl;
    Superblock *sb;

    h3100_model_set_timing(m, false);
    io_at(m, 0, H3100_OP_WRITE, 0, 4096);
    sb = &f->sb[f->open[0]];
    sb->wp = f->sps;
    for (uint64_t i = 1; i < f->sps; i++) {
        sb->p2l[i] = 0;
    }
    expect_saved_refused(m, &cfg, "open but full");
}
END_TEST

/* #7: the victim is an open superblock; reclaim freed its tables. */
START_TEST(test_victim_open_refused)
{
    H3100Config cfg;
    H3100Model *m = fresh_model(&cfg);
    Ftl *f = &m->ftl;

    h3100_model_set_timing(m, false);
    io_at(m, 0, H3100_OP_WRITE, 0, 4 * 4096);
    f->victim = f->open[0];
    f->ratio_num = f->ratio_den = 1;
    f->credit = 1000;
    f->cursor = 0;
    expect_saved_refused(m, &cfg, "is open");

    /* a superblock in the victim state that reclaim does not know of */
    m = written_model(&cfg);
    f = &m->ftl;
    f->sb[first_in_state(f, SB_CLOSED)].state = SB_VICTIM;
    if (f->victim != FTL_NO_SB) {
        f->sb[f->victim].state = SB_CLOSED;
        f->victim = FTL_NO_SB;
    }
    expect_saved_refused(m, &cfg, "in the victim state");

    /* a victim that is a closed superblock, and pacing past a superblock */
    m = written_model(&cfg);
    f = &m->ftl;
    if (f->victim != FTL_NO_SB) {
        f->sb[f->victim].state = SB_CLOSED;
    }
    f->victim = first_in_state(f, SB_CLOSED);
    f->ratio_den = 1;
    expect_saved_refused(m, &cfg, "is closed");
    m = written_model(&cfg);
    m->ftl.ratio_num = m->ftl.sps + 1;
    expect_saved_refused(m, &cfg, "reclaim pacing");
}
END_TEST

/*
 * Reclaim's cursor past a valid slot of its victim: the checks passed,
 * and the first write resumed reclaim, which erased that slot's data
 * with the map still pointing at it (found by fuzz_state, 2026-12-05).
 */
START_TEST(test_victim_passed_slot_refused)
{
    H3100Config cfg;
    H3100Model *m = written_model(&cfg);

    forge_victim_passed(m);
    expect_saved_refused(m, &cfg, "a slot of the victim reclaim has passed");
}
END_TEST

/* #8: the free list holds what is not free; Sanitize wrote past it. */
START_TEST(test_free_list_refused)
{
    H3100Config cfg;
    H3100Model *m = fresh_model(&cfg);
    Ftl *f = &m->ftl;

    /* the audit's file: every superblock closed, all still listed free */
    for (uint32_t i = 0; i < f->nsb; i++) {
        if (f->sb[i].state == SB_FREE) {
            f->sb[i].state = SB_CLOSED;
        }
    }
    expect_saved_refused(m, &cfg, "corrupt");

    /* listed twice: it would be opened on two streams */
    m = written_model(&cfg);
    f = &m->ftl;
    ck_assert_uint_ge(f->nfree, 2);
    f->free_list[1] = f->free_list[0];
    expect_saved_refused(m, &cfg, "twice");

    /* a closed superblock listed free: it would be erased with its data */
    m = written_model(&cfg);
    m->ftl.free_list[0] = first_in_state(&m->ftl, SB_CLOSED);
    expect_saved_refused(m, &cfg, "which is closed");

    /* a free superblock not listed: it would never be written again */
    m = written_model(&cfg);
    m->ftl.nfree--;
    expect_saved_refused(m, &cfg, "free list holds");
}
END_TEST

/*
 * Per-superblock valid counts that the map does not back (the totals
 * agree): reclaim would free a superblock the map still points into.
 */
START_TEST(test_valid_counts_refused)
{
    H3100Config cfg;
    H3100Model *m = written_model(&cfg);
    Ftl *f = &m->ftl;
    uint32_t a = FTL_NO_SB, b = FTL_NO_SB;

    for (uint32_t i = 0; i < f->nsb; i++) {
        if (f->sb[i].state != SB_CLOSED) {
            continue;
        }
        if (a == FTL_NO_SB && f->sb[i].valid < f->sb[i].wp) {
            a = i;
        } else if (b == FTL_NO_SB && f->sb[i].valid > 0) {
            b = i;
        }
    }
    ck_assert(a != FTL_NO_SB && b != FTL_NO_SB);
    f->sb[a].valid++;
    f->sb[b].valid--;
    expect_saved_refused(m, &cfg, "valid slots, the map points at");
}
END_TEST

/* Open superblocks no stream writes into; more than there are streams. */
START_TEST(test_orphan_open_refused)
{
    H3100Config cfg;
    H3100Model *m = fresh_model(&cfg);
    Ftl *f = &m->ftl;
    uint32_t sb = f->free_list[--f->nfree];

    ftl_rmap_open(f, sb);
    f->sb[sb].state = SB_OPEN;
    expect_saved_refused(m, &cfg, "1 superblocks are open, streams write "
                         "into 0");

    /* every superblock open: more than one per stream */
    m = fresh_model(&cfg);
    f = &m->ftl;
    while (f->nfree) {
        sb = f->free_list[--f->nfree];
        ftl_rmap_open(f, sb);
        f->sb[sb].state = SB_OPEN;
    }
    expect_saved_refused(m, &cfg, "more open superblocks than streams");
}
END_TEST

/* Block tables that disagree with their counters or share blocks. */
START_TEST(test_block_tables_refused)
{
    H3100Config cfg;
    H3100Model *m = written_model(&cfg);
    uint32_t planes = m->ftl.bb.planes;

    m->ftl.bb.spares_left[1]++;
    expect_saved_refused(m, &cfg, "spare blocks");

    m = written_model(&cfg);
    m->ftl.bb.used_blocks++;
    expect_saved_refused(m, &cfg, "blocks in use");

    m = written_model(&cfg);
    m->ftl.bb.grown_bad++;
    expect_saved_refused(m, &cfg, "bad blocks");

    /* two superblocks on one block: erasing one wipes the other */
    m = written_model(&cfg);
    m->ftl.sb_block[planes + 3] = m->ftl.sb_block[3];
    expect_saved_refused(m, &cfg, "not a block of its own");
}
END_TEST

/* A random state stuck at zero: every erase would fail. */
START_TEST(test_rng_zero_refused)
{
    H3100Config cfg;
    H3100Model *m = fresh_model(&cfg);

    memset(&m->ftl.rng, 0, sizeof(m->ftl.rng));
    expect_saved_refused(m, &cfg, "random state");
}
END_TEST

/* The header's profile name, in an error, is escaped onto one line. */
#define HDR_PROFILE 32

START_TEST(test_foreign_name_escaped)
{
    g_autofree char *path = tmp_path("name");
    g_autofree uint8_t *buf = NULL;
    static const char name[] = "evil\n\033[2Jdrive";
    H3100Config cfg;
    H3100Model *m = fresh_model(&cfg);
    GError *err = NULL;
    gsize len;

    ck_assert(h3100_model_save(m, path, NULL));
    h3100_model_free(m);
    ck_assert(g_file_get_contents(path, (char **)&buf, &len, NULL));
    memset(buf + HDR_PROFILE, 0, 32);
    memcpy(buf + HDR_PROFILE, name, sizeof(name) - 1);
    state_header_mend(buf, len);
    ck_assert(g_file_set_contents(path, (char *)buf, len, NULL));
    ck_assert_ptr_null(h3100_model_load(&cfg, path, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "another drive: evil\\n"));
    ck_assert_ptr_null(strchr(err->message, '\n'));
    ck_assert_ptr_null(strchr(err->message, '\033'));
    g_error_free(err);
    unlink(path);
}
END_TEST

/* Offset of the read-only flag: after the counters and FTL stats. */
#define RO_OFFSET (STATE_HDR_BYTES + sizeof(ModelCounters) + sizeof(FtlStats))

START_TEST(test_read_only_flag_refused)
{
    g_autofree char *path = tmp_path("ro");
    g_autofree uint8_t *buf = NULL;
    H3100Config cfg;
    H3100Model *m = fresh_model(&cfg);
    gsize len;

    ck_assert(h3100_model_save(m, path, NULL));
    h3100_model_free(m);
    ck_assert(g_file_get_contents(path, (char **)&buf, &len, NULL));
    ck_assert_uint_eq(buf[RO_OFFSET], 0);
    buf[RO_OFFSET] = 2;
    state_header_mend(buf, len);
    ck_assert(g_file_set_contents(path, (char *)buf, len, NULL));
    expect_refused(&cfg, path, "read-only flag");
    unlink(path);
}
END_TEST

/* Where a file saved with @extra_len bytes of extra state keeps its length. */
static gsize extra_len_offset(gsize file_len, gsize extra_len)
{
    return file_len - extra_len - STATE_EXTRA_LEN_BYTES;
}

/*
 * #9: the extra state's length was checked only against the header's
 * payload length, which the file chooses, then allocated: 2^40 bytes
 * aborted the process.  It is capped, and bounded by the file's size.
 */
START_TEST(test_extra_length_refused)
{
    g_autofree char *path = tmp_path("extra-len");
    g_autofree uint8_t *buf = NULL, *big = NULL;
    static const char blob[16] = "H3DS";
    const gsize cap = H3100_STATE_EXTRA_MAX;
    H3100Config cfg;
    H3100Model *m = fresh_model(&cfg);
    uint64_t v;
    uint32_t crc;
    gsize len, big_len;
    g_autofree void *state = g_malloc0(cap + 1);
    GError *err = NULL;

    /* the audit's file: 2^40 bytes of extra state in a 2^41-byte payload,
     * only the header checksum mended */
    ck_assert(h3100_model_save_with(m, path, blob, sizeof(blob), 0, NULL));
    ck_assert(g_file_get_contents(path, (char **)&buf, &len, NULL));
    v = 1ULL << 40;
    memcpy(buf + extra_len_offset(len, sizeof(blob)), &v, 8);
    v = 1ULL << 41;
    memcpy(buf + STATE_HDR_PAYLOAD, &v, 8);
    memset(buf + STATE_HDR_CRC, 0, 4);
    crc = crc32c(buf, STATE_HDR_BYTES);
    memcpy(buf + STATE_HDR_CRC, &crc, 4);
    ck_assert(g_file_set_contents(path, (char *)buf, len, NULL));
    expect_refused(&cfg, path, "length does not match its header");

    /* the same length with every checksum right */
    ck_assert(g_file_get_contents(path, (char **)&big, &big_len, NULL));
    state_header_mend(big, big_len);
    ck_assert(g_file_set_contents(path, (char *)big, big_len, NULL));
    expect_refused(&cfg, path, "at most");
    g_clear_pointer(&big, g_free);

    /* a file that really holds more than the cap */
    ck_assert(h3100_model_save_with(m, path, state, cap, 0, NULL));
    g_clear_pointer(&buf, g_free);
    ck_assert(g_file_get_contents(path, (char **)&buf, &len, NULL));
    big_len = len + 1;
    big = g_malloc0(big_len);
    memcpy(big, buf, len);
    v = cap + 1;
    memcpy(big + extra_len_offset(len, cap), &v, 8);
    state_header_mend(big, big_len);
    ck_assert(g_file_set_contents(path, (char *)big, big_len, NULL));
    expect_refused(&cfg, path, "at most");

    /* within the cap, but longer than what the file has left */
    len -= cap / 2;
    state_header_mend(buf, len);
    ck_assert(g_file_set_contents(path, (char *)buf, len, NULL));
    expect_refused(&cfg, path, "longer than the file");

    /* and saving refuses what could not be loaded */
    ck_assert(!h3100_model_save_with(m, path, state, cap + 1, 0, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "at most"));
    g_clear_error(&err);
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
    tcase_add_test(tc, test_open_without_tables_refused);
    tcase_add_test(tc, test_open_full_refused);
    tcase_add_test(tc, test_victim_open_refused);
    tcase_add_test(tc, test_victim_passed_slot_refused);
    tcase_add_test(tc, test_free_list_refused);
    tcase_add_test(tc, test_valid_counts_refused);
    tcase_add_test(tc, test_orphan_open_refused);
    tcase_add_test(tc, test_block_tables_refused);
    tcase_add_test(tc, test_rng_zero_refused);
    tcase_add_test(tc, test_read_only_flag_refused);
    tcase_add_test(tc, test_foreign_name_escaped);
    tcase_add_test(tc, test_extra_length_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return h3100_test_main(state_suite());
}
