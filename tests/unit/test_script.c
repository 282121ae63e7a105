/*
 * Procedures (h3100-sim --script): what the file says becomes the steps,
 * every mistake in it is refused before a step runs, and the steps run in
 * order on one drive.
 */
#include <string.h>

#include "h3100_test.h"
#include "sim_script.h"

static bool parse(SimScript *s, const char *text, const H3100Config *cfg,
                  GError **errp)
{
    return sim_script_parse(s, text, strlen(text), "test.ini", cfg, 7, errp);
}

/* @text is refused with a message that contains @why */
static void assert_refused(const char *text, const char *why)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    GError *err = NULL;
    SimScript s;

    ck_assert_msg(!parse(&s, text, &cfg, &err), "accepted: %s", text);
    ck_assert_msg(err && strstr(err->message, why), "'%s': got '%s'", why,
                  err ? err->message : "(no error)");
    ck_assert_msg(g_str_has_prefix(err->message, "test.ini: "), "%s",
                  err->message);
    g_error_free(err);
    sim_script_free(&s);
}

START_TEST(test_parse_steps)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    GError *err = NULL;
    SimScript s;

    ck_assert_msg(parse(&s,
        "# a comment\n"
        "[global]\nspan=25%\niodepth=8\n"
        "[fill]\nprecondition=seq\n"
        "[4k random write]\nrw=randwrite\nnumjobs=2\nruntime=50ms\n"
        "[rest]\nidle=2s\n"
        "[64k read]\nrw=read\nbs=64k\niodepth=16\nspan=0.5\n", &cfg, &err),
        "%s", err ? err->message : "");
    ck_assert_uint_eq(s.nsteps, 4);
    ck_assert_int_eq(s.steps[0].kind, SIM_STEP_PRECONDITION);
    ck_assert_str_eq(s.steps[0].precondition, "seq");
    ck_assert_int_eq(s.steps[1].kind, SIM_STEP_RUN);
    ck_assert_str_eq(s.steps[1].name, "4k random write");
    ck_assert_int_eq(s.steps[1].spec.rw, SIM_RANDWRITE);
    ck_assert_uint_eq(s.steps[1].spec.iodepth, 8);      /* from [global] */
    ck_assert_uint_eq(s.steps[1].spec.numjobs, 2);
    ck_assert_uint_eq(s.steps[1].spec.runtime_ns, 50000000);
    ck_assert_uint_eq(s.steps[1].spec.span_bytes,
                      (uint64_t)(cfg.geo.user_bytes * 0.25) / 4096 * 4096);
    ck_assert_int_eq(s.steps[2].kind, SIM_STEP_IDLE);
    ck_assert_uint_eq(s.steps[2].idle_ns, 2000000000ULL);
    ck_assert_uint_eq(s.steps[3].spec.iodepth, 16);     /* its own wins */
    ck_assert_uint_eq(s.steps[3].spec.bs[0].bytes, 65536);
    ck_assert_uint_eq(s.steps[3].spec.span_bytes,
                      (uint64_t)(cfg.geo.user_bytes * 0.5) / 4096 * 4096);
    /* each step draws from its own seed: the file's order, from --seed */
    ck_assert_uint_eq(s.steps[1].spec.seed, 8);
    ck_assert_uint_eq(s.steps[3].spec.seed, 10);
    sim_script_free(&s);
}
END_TEST

START_TEST(test_refuses_mistakes)
{
    assert_refused("", "expected 1 to");
    assert_refused("[global]\nrw=read\n", "expected 1 to");
    assert_refused("rw=read\n", "");          /* a key before any group */
    assert_refused("[a]\nrw=sideways\n", "[a] ");
    assert_refused("[a]\nrw=read\nbsize=4k\n", "unknown key 'bsize'");
    assert_refused("[a]\nrw=read\n[b]\nrw=write\n[a]\nrw=read\n",
                   "[a] appears twice");
    assert_refused("[a]\nprecondition=rand:x\n", "precondition 'rand:x'");
    assert_refused("[a]\nprecondition=seq\nrw=read\n", "no other key");
    assert_refused("[a]\nidle=0\n", "idle must be above zero");
    assert_refused("[a]\nidle=soon\n", "time 'soon'");
    assert_refused("[global]\nidle=1s\n[a]\nrw=read\n", "workload keys only");
    assert_refused("[a]\nrw=read\n[global]\nrw=write\n", "must be the first");
    assert_refused("[a]\niodepth=0\n", "iodepth=0");
    assert_refused("[a]\niodepth=-5\n", "iodepth=-5");
    assert_refused("[a]\nrwmixread=101\n", "rwmixread=101");
    assert_refused("[a]\nnumjobs=4096\nspan=4k\n", "larger than each job");
    assert_refused("[a]\nruntime=0\n", "runtime must be above zero");
    assert_refused("[a]\nspan=200%\n", "span");
}
END_TEST

START_TEST(test_refuses_hostile_files)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    GString *many = g_string_new("");
    char nul[] = "[a]\nrw=read\0\n";
    GError *err = NULL;
    SimScript s;

    ck_assert(!sim_script_parse(&s, nul, sizeof(nul) - 1, "nul.ini", &cfg, 1,
                                &err));
    ck_assert_ptr_nonnull(strstr(err->message, "not a procedure"));
    g_clear_error(&err);
    sim_script_free(&s);
    for (unsigned i = 0; i <= SIM_SCRIPT_MAX_STEPS; i++) {
        g_string_append_printf(many, "[s%u]\nidle=1ms\n", i);
    }
    ck_assert(!parse(&s, many->str, &cfg, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "expected 1 to 256 steps"));
    g_clear_error(&err);
    sim_script_free(&s);
    g_string_free(many, TRUE);
    ck_assert(!sim_script_load(&s, "/nonexistent/x.ini", &cfg, 1, &err));
    g_clear_error(&err);
    sim_script_free(&s);
}
END_TEST

static const char procedure[] =
    "[global]\niodepth=16\nruntime=30ms\n"
    "[age]\nprecondition=rand:1\n"
    "[read]\nrw=randread\n"
    "[write]\nrw=randwrite\nspan=50%\nruntime=200ms\n"
    "[quiet]\nidle=1s\n"
    "[read again]\nrw=randread\n";

static void run_procedure(uint64_t seed, SimScript *s, SimResult *res,
                          uint64_t *end)
{
    H3100Config cfg = tiny_config(H3100_FAMILY_H3100, 1);
    H3100Model *m = h3100_model_new(&cfg, NULL);
    GError *err = NULL;

    *end = 0;
    ck_assert(sim_script_parse(s, procedure, strlen(procedure), "p.ini",
                               &cfg, seed, &err));
    ck_assert_msg(sim_script_run(s, m, end, res, &err), "%s",
                  err ? err->message : "");
    h3100_model_free(m);
}

START_TEST(test_runs_in_order_on_one_drive)
{
    SimScript s;
    SimResult res[5], again[5];
    uint64_t end, end2;

    run_procedure(3, &s, res, &end);
    /* the fill mapped everything: reads are NAND reads, not unmapped ones */
    ck_assert_uint_gt(res[1].read_ios, 0);
    ck_assert_double_gt(h3100_lathist_mean(&res[1].lat), 40000);
    ck_assert_uint_gt(res[2].write_ios, 0);
    ck_assert_uint_eq(res[2].read_ios, 0);
    /* overwriting an aged drive made reclaim work, during the run or idle */
    ck_assert_uint_gt(res[2].gc_victims + res[3].gc_victims, 0);
    ck_assert_uint_eq(res[3].runtime_ns, 1000000000ULL);
    ck_assert_uint_gt(res[4].read_ios, 0);
    /* the steps' times add up: one drive, one clock */
    ck_assert_uint_ge(end, 30000000ULL + 200000000 + 1000000000 + 30000000);
    /* the same seed gives the same figures */
    sim_script_free(&s);
    run_procedure(3, &s, again, &end2);
    ck_assert_uint_eq(end, end2);
    for (int i = 0; i < 5; i++) {
        ck_assert_uint_eq(res[i].ios, again[i].ios);
        ck_assert_uint_eq(res[i].gc_victims, again[i].gc_victims);
    }
    sim_script_free(&s);
}
END_TEST

static Suite *script_suite(void)
{
    Suite *s = suite_create("script");
    TCase *tc = tcase_create("procedure");

    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_parse_steps);
    tcase_add_test(tc, test_refuses_mistakes);
    tcase_add_test(tc, test_refuses_hostile_files);
    tcase_add_test(tc, test_runs_in_order_on_one_drive);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return h3100_test_main(script_suite());
}
