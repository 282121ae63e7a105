/*
 * The latency histogram and the telemetry rows shared by h3100-sim and
 * the device: percentiles within the bucket error, merging, the JSON row
 * and the CDF line.
 */
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>

#include "h3100/lathist.h"
#include "h3100/telemetry.h"
#include "h3100_test.h"

static H3100LatHist *hist_new(void)
{
    H3100LatHist *h = g_new(H3100LatHist, 1);

    h3100_lathist_reset(h);
    return h;
}

START_TEST(test_empty)
{
    g_autofree H3100LatHist *h = hist_new();

    ck_assert_uint_eq(h->count, 0);
    ck_assert_double_eq(h3100_lathist_mean(h), 0);
    ck_assert_uint_eq(h3100_lathist_quantile(h, 0.99), 0);
}
END_TEST

START_TEST(test_small_values_exact)
{
    g_autofree H3100LatHist *h = hist_new();

    for (uint64_t v = 0; v < 256; v++) {
        h3100_lathist_add(h, v);
    }
    ck_assert_uint_eq(h3100_lathist_quantile(h, 0), 0);
    ck_assert_uint_eq(h3100_lathist_quantile(h, 0.5), 127);
    ck_assert_uint_eq(h3100_lathist_quantile(h, 1), 255);
    ck_assert_double_eq(h3100_lathist_mean(h), 127.5);
    ck_assert_uint_eq(h->min, 0);
    ck_assert_uint_eq(h->max, 255);
}
END_TEST

START_TEST(test_quantiles_within_bucket_error)
{
    g_autofree H3100LatHist *h = hist_new();
    const uint64_t n = 1000000;

    /* 1 us .. 1 s, one of each: quantile q is q * n us */
    for (uint64_t i = 1; i <= n; i++) {
        h3100_lathist_add(h, i * 1000);
    }
    for (double q = 0.01; q < 1; q += 0.0731) {
        double want = (q * (n - 1) + 1) * 1000;
        double got = h3100_lathist_quantile(h, q);

        ck_assert_msg(fabs(got - want) / want < 0.008, "q=%f: %f vs %f", q,
                      got, want);
    }
    ck_assert_uint_eq(h3100_lathist_quantile(h, 1), n * 1000);
    ck_assert_double_eq_tol(h3100_lathist_mean(h), (n + 1) * 500.0, 1e-6);
}
END_TEST

START_TEST(test_bucket_edges)
{
    g_autofree H3100LatHist *h = hist_new();
    uint64_t prev = h3100_lathist_bucket_max(0);

    ck_assert_uint_eq(prev, 0);
    for (uint32_t b = 1; b < H3100_LATHIST_BUCKETS; b++) {
        uint64_t top = h3100_lathist_bucket_max(b);

        ck_assert_msg(top > prev, "bucket %u", b);
        if (b % 97 == 0) {
            /* the top of a bucket is in it, one more is in the next */
            h3100_lathist_reset(h);
            h3100_lathist_add(h, top);
            h3100_lathist_add(h, top + 1);
            ck_assert_uint_eq(h->bucket[b], 1);
            ck_assert_uint_eq(h->bucket[b + 1], 1);
        }
        prev = top;
    }
    ck_assert_uint_eq(prev, UINT64_MAX);
}
END_TEST

START_TEST(test_merge_equals_one_histogram)
{
    g_autofree H3100LatHist *all = hist_new();
    g_autofree H3100LatHist *a = hist_new();
    g_autofree H3100LatHist *b = hist_new();
    g_autofree H3100LatHist *sum = hist_new();

    for (uint64_t i = 0; i < 50000; i++) {
        uint64_t v = (i * 2654435761u) % 5000000 + 10000;

        h3100_lathist_add(all, v);
        h3100_lathist_add(i % 3 ? a : b, v);
    }
    h3100_lathist_merge(sum, a);
    h3100_lathist_merge(sum, b);
    ck_assert(memcmp(sum, all, sizeof(*all)) == 0);
    /* merging an empty one changes nothing, min included */
    h3100_lathist_reset(a);
    h3100_lathist_merge(sum, a);
    ck_assert(memcmp(sum, all, sizeof(*all)) == 0);
}
END_TEST

static void two_snapshots(H3100Health *b, H3100Health *e)
{
    memset(b, 0, sizeof(*b));
    memset(e, 0, sizeof(*e));
    b->now_ns = 2000000000;
    e->now_ns = 2500000000;
    b->host_write_bytes = 1000;
    e->host_write_bytes = 5000;
    b->nand_write_bytes = 3000;
    e->nand_write_bytes = 11200;
    b->gc_victims = 7;
    e->gc_victims = 10;
    b->gc_slots_moved = 100;
    e->gc_slots_moved = 160;
    b->wbuf_stalls = 4;
    e->wbuf_stalls = 9;
    e->free_superblocks = 12;
    e->waf = 1.75;
    e->temperature_k = 343;
    e->throttle_level = 1;
}

START_TEST(test_fill_health_and_io)
{
    H3100Health b, e;
    H3100TelemetryRow r = { 0 };

    two_snapshots(&b, &e);
    h3100_telemetry_fill_health(&r, &b, &e);
    ck_assert_double_eq(r.t_s, 2.5);
    ck_assert_double_eq(r.interval_s, 0.5);
    ck_assert_uint_eq(r.host_write_bytes, 4000);
    ck_assert_uint_eq(r.nand_write_bytes, 8200);
    ck_assert_double_eq(r.waf, 2.05);
    ck_assert_double_eq(r.lifetime_waf, 1.75);
    ck_assert_uint_eq(r.free_superblocks, 12);
    ck_assert_uint_eq(r.gc_victims, 3);
    ck_assert_uint_eq(r.gc_slots_moved, 60);
    ck_assert_uint_eq(r.wbuf_stalls, 5);
    ck_assert_double_eq_tol(r.temp_c, 69.85, 1e-9);
    ck_assert_uint_eq(r.throttle_level, 1);

    h3100_telemetry_fill_io(&r, 100, 300, 1638400);
    ck_assert_double_eq(r.read_iops, 200);
    ck_assert_double_eq(r.write_iops, 600);
    ck_assert_double_eq(r.iops, 800);
    ck_assert_double_eq(r.mbps, 3.2768);

    /* reclaim alone, no host writes: no ratio */
    e.host_write_bytes = b.host_write_bytes;
    h3100_telemetry_fill_health(&r, &b, &e);
    ck_assert_double_eq(r.waf, 0);
}
END_TEST

static const char golden_row[] =
    "{\"t\": 2.500000, \"interval\": 0.500000, \"iops\": 800.0, "
    "\"read_iops\": 200.0, \"write_iops\": 600.0, \"mbps\": 3.277, "
    "\"lat_mean_us\": 20.000, \"lat_p50_us\": 20.000, "
    "\"lat_p99_us\": 20.000, \"lat_p999_us\": 20.000, "
    "\"lat_max_us\": 20.000, \"waf\": 2.0500, \"lifetime_waf\": 1.7500, "
    "\"host_write_bytes\": 4000, \"nand_write_bytes\": 8200, "
    "\"free_superblocks\": 12, \"gc_victims\": 3, \"gc_slots_moved\": 60, "
    "\"wbuf_stalls\": 5, \"temp_c\": 69.85, \"throttle\": 1}\n";

START_TEST(test_json_row)
{
    g_autofree H3100LatHist *h = hist_new();
    g_autoptr(GString) out = g_string_new("previous\n");
    H3100Health b, e;
    H3100TelemetryRow r = { 0 };

    two_snapshots(&b, &e);
    h3100_telemetry_fill_health(&r, &b, &e);
    h3100_telemetry_fill_io(&r, 100, 300, 1638400);
    h3100_lathist_add(h, 20000);
    h3100_telemetry_fill_lat(&r, h);
    h3100_telemetry_json(&r, out);
    ck_assert_str_eq(out->str + strlen("previous\n"), golden_row);

    /* a locale with decimal commas changes nothing */
    if (setlocale(LC_NUMERIC, "de_DE.UTF-8") ||
        setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
        g_string_truncate(out, 0);
        h3100_telemetry_json(&r, out);
        setlocale(LC_NUMERIC, "C");
        ck_assert_str_eq(out->str, golden_row);
    }

    /* nothing measured: zeroes, never nan */
    memset(&r, 0, sizeof(r));
    r.waf = NAN;
    h3100_lathist_reset(h);
    h3100_telemetry_fill_lat(&r, h);
    g_string_truncate(out, 0);
    h3100_telemetry_json(&r, out);
    ck_assert_ptr_null(strstr(out->str, ": nan"));
    ck_assert_ptr_null(strstr(out->str, ": -nan"));
    ck_assert_ptr_nonnull(strstr(out->str, "\"waf\": 0.0000,"));
}
END_TEST

/* Parse {"cdf": [[x, y], ...]}: the number of points, or -1. */
static int parse_cdf(const char *s, double *x, double *y, int max)
{
    const char *p = s + strlen("{\"cdf\": [");
    int n = 0;

    if (strncmp(s, "{\"cdf\": [", strlen("{\"cdf\": ["))) {
        return -1;
    }
    while (*p == '[' && n < max) {
        char *end;

        x[n] = g_ascii_strtod(p + 1, &end);
        if (strncmp(end, ", ", 2)) {
            return -1;
        }
        y[n] = g_ascii_strtod(end + 2, &end);
        if (*end != ']') {
            return -1;
        }
        n++;
        p = end + 1;
        if (!strncmp(p, ", ", 2)) {
            p += 2;
        }
    }
    return strcmp(p, "]}\n") ? -1 : n;
}

START_TEST(test_cdf)
{
    g_autofree H3100LatHist *h = hist_new();
    g_autoptr(GString) out = g_string_new(NULL);
    double x[1000], y[1000];
    int n;

    h3100_telemetry_cdf_json(h, out);
    ck_assert_str_eq(out->str, "{\"cdf\": []}\n");

    /* 10 us .. 100 ms, log-uniform, plus a slow tail */
    for (uint32_t i = 0; i < 200000; i++) {
        h3100_lathist_add(h, (uint64_t)(10000 * pow(10, 4.0 * i / 200000)));
    }
    h3100_lathist_add(h, 987654321);
    g_string_truncate(out, 0);
    h3100_telemetry_cdf_json(h, out);
    n = parse_cdf(out->str, x, y, 1000);
    ck_assert_int_ge(n, 50);
    ck_assert_int_le(n, 400);
    for (int i = 1; i < n; i++) {
        ck_assert_msg(x[i] > x[i - 1] && y[i] >= y[i - 1], "point %d", i);
        /* no step bigger than asked for in both coordinates at once */
        ck_assert_msg(y[i] - y[i - 1] < 0.02 || x[i] < x[i - 1] * 1.2,
                      "point %d: %f,%f after %f,%f", i, x[i], y[i],
                      x[i - 1], y[i - 1]);
    }
    ck_assert_double_eq(y[n - 1], 1.0);
    ck_assert_double_eq_tol(x[n - 1], 987654.321, 1e-6);
    /* the median of the log-uniform part: 1 ms */
    for (int i = 0; i < n; i++) {
        if (y[i] >= 0.5) {
            ck_assert_double_eq_tol(x[i], 1000, 1000 * 0.1);
            break;
        }
    }
}
END_TEST

static Suite *telemetry_suite(void)
{
    Suite *s = suite_create("telemetry");
    TCase *tc = tcase_create("lathist");

    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_small_values_exact);
    tcase_add_test(tc, test_quantiles_within_bucket_error);
    tcase_add_test(tc, test_bucket_edges);
    tcase_add_test(tc, test_merge_equals_one_histogram);
    suite_add_tcase(s, tc);
    tc = tcase_create("rows");
    tcase_add_test(tc, test_fill_health_and_io);
    tcase_add_test(tc, test_json_row);
    tcase_add_test(tc, test_cdf);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return h3100_test_main(telemetry_suite());
}
