/*
 * Profiles, capacities and parameter checks.
 */
#include <stdlib.h>
#include <check.h>

#include "h3100/config.h"
#include "h3100_test.h"

START_TEST(test_idema_capacities)
{
    H3100Config cfg;

    /* IDEMA LBA1-03: 97,696,368 + 1,953,504 x (GB - 50) */
    ck_assert_uint_eq(h3100_idema_lba512(3200), 6251233968ULL);
    ck_assert(h3100_profile_load(&cfg, "h3100-3.2t", NULL));
    ck_assert_uint_eq(cfg.geo.user_bytes, 6251233968ULL * 512);
    ck_assert(h3100_profile_load(&cfg, "h3200-7.68t", NULL));
    ck_assert_uint_eq(cfg.geo.user_bytes,
                      h3100_idema_lba512(7680) * 512);
}
END_TEST

START_TEST(test_every_profile_validates)
{
    for (const char *const *p = h3100_profile_names(); *p; p++) {
        H3100Config cfg;
        GError *err = NULL;

        ck_assert(h3100_profile_load(&cfg, *p, NULL));
        ck_assert_msg(h3100_config_validate(&cfg, &err), "%s: %s", *p,
                      err ? err->message : "");
        ck_assert_uint_eq(cfg.geo.channels, 8);
    }
}
END_TEST

START_TEST(test_over_provisioning)
{
    H3100Config a, b;
    double ra, rb;

    ck_assert(h3100_profile_load(&a, "h3100-3.2t", NULL));
    ck_assert(h3100_profile_load(&b, "h3200-3.84t", NULL));
    ra = (double)h3100_raw_data_bytes(&a) / a.geo.user_bytes;
    rb = (double)h3100_raw_data_bytes(&b) / b.geo.user_bytes;
    /* raw / user of the reference: 1.374 and 1.145 */
    ck_assert_double_eq_tol(ra, 1.374, 0.005);
    ck_assert_double_eq_tol(rb, 1.145, 0.005);
    ck_assert_uint_eq(h3100_dies(&a), 64);
    ck_assert_uint_eq(h3100_dies(&b), 64);
}
END_TEST

START_TEST(test_subsystem_ids)
{
    H3100Config cfg;

    ck_assert(h3100_profile_load(&cfg, "h3100-6.4t", NULL));
    ck_assert_uint_eq(cfg.subsystem_u2, 0x0021);
    ck_assert_uint_eq(cfg.subsystem_hhhl, 0x007f);
    ck_assert(h3100_profile_load(&cfg, "h3200-0.96t", NULL));
    ck_assert_uint_eq(cfg.subsystem_u2, 0x000a);
}
END_TEST

START_TEST(test_overrides)
{
    H3100Config cfg;
    GError *err = NULL;

    ck_assert(h3100_profile_load(&cfg, "h3100-0.8t", NULL));
    ck_assert(h3100_config_apply(&cfg, "dies_per_channel=4,t_prog_ns=1500000,"
                                 "write_buffer_bytes=64M", &err));
    ck_assert_uint_eq(cfg.geo.dies_per_channel, 4);
    ck_assert_uint_eq(cfg.nand.t_prog_ns, 1500000);
    ck_assert_uint_eq(cfg.cache.write_buffer_bytes, 64ULL << 20);
}
END_TEST

START_TEST(test_bad_options_are_errors)
{
    H3100Config cfg;
    GError *err = NULL;

    ck_assert(!h3100_profile_load(&cfg, "h3100-9t", &err));
    ck_assert_ptr_nonnull(strstr(err->message, "h3100-9t"));
    g_clear_error(&err);
    ck_assert(h3100_profile_load(&cfg, "h3100-0.8t", NULL));
    ck_assert(!h3100_config_set(&cfg, "no_such_knob", "1", &err));
    g_clear_error(&err);
    ck_assert(!h3100_config_set(&cfg, "channels", "0", &err));
    g_clear_error(&err);
    ck_assert(!h3100_config_set(&cfg, "channels", "eight", &err));
    g_clear_error(&err);
    ck_assert(!h3100_config_apply(&cfg, "channels", &err));
    g_clear_error(&err);
    ck_assert(!h3100_config_set(&cfg, "planes_per_die", "-1", &err));
    g_clear_error(&err);
}
END_TEST

START_TEST(test_impossible_geometry_is_refused)
{
    H3100Config cfg;
    GError *err = NULL;

    ck_assert(h3100_profile_load(&cfg, "h3100-0.8t", NULL));
    /* the user capacity no longer fits in the NAND */
    ck_assert(h3100_config_set(&cfg, "blocks_per_plane", "1300", NULL));
    ck_assert(!h3100_config_validate(&cfg, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "does not fit"));
    g_clear_error(&err);

    ck_assert(h3100_profile_load(&cfg, "h3100-0.8t", NULL));
    ck_assert(h3100_config_set(&cfg, "pages_per_block", "1000", NULL));
    ck_assert(!h3100_config_validate(&cfg, &err));
    g_clear_error(&err);

    ck_assert(h3100_profile_load(&cfg, "h3100-0.8t", NULL));
    ck_assert(h3100_config_set(&cfg, "gc_fg_free", "20", NULL));
    ck_assert(!h3100_config_validate(&cfg, &err));
    g_clear_error(&err);

    ck_assert(h3100_profile_load(&cfg, "h3100-6.4t", NULL));
    ck_assert(h3100_config_apply(&cfg, "channels=16,dies_per_channel=32",
                                 NULL));
    ck_assert(!h3100_config_validate(&cfg, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "32-bit"));
    g_clear_error(&err);
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("profiles");

    tcase_add_test(tc, test_idema_capacities);
    tcase_add_test(tc, test_every_profile_validates);
    tcase_add_test(tc, test_over_provisioning);
    tcase_add_test(tc, test_subsystem_ids);
    tcase_add_test(tc, test_overrides);
    tcase_add_test(tc, test_bad_options_are_errors);
    tcase_add_test(tc, test_impossible_geometry_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return h3100_test_main(config_suite());
}
