/*
 * Telemetry log pages: 07h (host-initiated: Create, generation, a
 * snapshot that holds still while read in pieces, the layout of
 * include/h3100/telemetry-log.h filled from the model) and 08h
 * (controller-initiated: taken when heavy thermal throttling starts,
 * announced by a Telemetry Log Changed notice).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stddef.h>
#include <string.h>

#include "dev.h"
#include "h3100/telemetry-log.h"

#define HOT_PARAMS      DEV_PARAMS ",ambient_k=340,thermal_tau_ms=100"
#define TINY_PARAMS     "user_bytes=32M,channels=1,dies_per_channel=1," \
                        "pages_per_block=48,blocks_per_plane=64," \
                        "spare_blocks_per_plane=4,grown_bad_ppm=0"
#define LOG_MAX         (64 * 1024)
#define LSP_CREATE      1
#define AEC_TELEMETRY   (1u << 10)

#define SNAP(f)         (H3100_TEL_BLOCK + offsetof(H3100TelSnapshot, f))

static void header(Dev *d, uint8_t lid, uint8_t lsp, uint8_t *l)
{
    ck_status(nh_get_log_lsp(d->h, lid, lsp, 0xffffffff, l,
                             H3100_TEL_BLOCK, 0), 0, "log %02Xh header", lid);
    ck_assert_uint_eq(l[0], lid);
}

/* the whole page (header first), its length in bytes */
static size_t whole(Dev *d, uint8_t lid, uint8_t *l)
{
    uint8_t h[H3100_TEL_BLOCK];
    size_t len;

    header(d, lid, 0, h);
    len = ((size_t)le16_at(h, offsetof(H3100TelHeader, dalb3)) + 1) *
          H3100_TEL_BLOCK;
    ck_assert_uint_le(len, LOG_MAX);
    ck_status(nh_get_log(d->h, lid, 0xffffffff, l, len, 0), 0,
              "log %02Xh, %zu bytes", lid, len);
    return len;
}

START_TEST(test_telemetry_host)
{
    Dev *d = dev_open_full(TINY_PARAMS, "", "");
    static uint8_t a[LOG_MAX], b[LOG_MAX];
    uint8_t id[4096], h[H3100_TEL_BLOCK];
    uint64_t buf = nh_alloc(d->h, 128 * 1024, 4096);
    uint64_t sum = 0;
    size_t len, da2;
    const uint8_t *hist;
    uint32_t dies, ch, n;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "identify controller");
    ck_assert_msg(id[261] & (1 << 3), "LPA lacks telemetry");

    header(d, H3100_LOG_TELEMETRY_HOST, 0, h);
    ck_assert_uint_eq(h[offsetof(H3100TelHeader, host_gen)], 0);
    ck_assert_uint_eq(h[offsetof(H3100TelHeader, ctrl_avail)], 0);
    ck_assert_uint_eq(le16_at(h, 8), 1);                     /* DA1 */
    /* random overwrites of 4 capacities: reclaim runs */
    for (int i = 0; i < 1024; i++) {
        ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE, 1,
                        (i * 2654435761u % 256) * 256ull, 256, buf, 0, NULL),
                  0, "write %d", i);
    }
    header(d, H3100_LOG_TELEMETRY_HOST, LSP_CREATE, h);
    ck_assert_uint_eq(h[offsetof(H3100TelHeader, host_gen)], 1);
    len = whole(d, H3100_LOG_TELEMETRY_HOST, a);
    ck_assert(!memcmp(a + SNAP(magic), H3100_TEL_MAGIC, 4));
    ck_assert_uint_eq(le16_at(a, SNAP(version)), H3100_TEL_VERSION);
    ck_assert_uint_eq(le16_at(a, SNAP(reason)), H3100_TEL_REASON_HOST);
    dies = le32_at(a, SNAP(dies));
    ch = le32_at(a, SNAP(channels));
    ck_assert_uint_eq(dies, 1);
    ck_assert_uint_eq(ch, 1);
    da2 = h3100_tel_da2_bytes(dies, ch);
    ck_assert_uint_eq(le16_at(a, 10), 1 + da2 / H3100_TEL_BLOCK);
    ck_assert_uint_eq(len, 2 * H3100_TEL_BLOCK + da2 +
                      sizeof(H3100TelHistory));
    ck_assert_uint_eq(le64_at(a, SNAP(host_write_bytes)),
                      1024 * 128 * 1024);
    /* data area 2: the dies' array time adds up to the drive's */
    for (uint32_t i = 0; i < dies; i++) {
        sum += le64_at(a, 2 * H3100_TEL_BLOCK + 8 * i);
    }
    ck_assert_uint_eq(sum, le64_at(a, SNAP(nand_busy_ns)));
    ck_assert_uint_gt(sum, 0);
    ck_assert_uint_gt(le64_at(a, 2 * H3100_TEL_BLOCK + 8 * dies), 0);
    /* data area 3: the last reclaim victims, oldest first */
    hist = a + 2 * H3100_TEL_BLOCK + da2;
    n = le32_at(hist, offsetof(H3100TelHistory, reclaim_n));
    ck_assert_uint_eq(le64_at(hist, 0), le64_at(a, SNAP(gc_victims)));
    ck_assert_uint_eq(n, MIN(le64_at(hist, 0), H3100_TEL_RECLAIMS));
    ck_assert_uint_gt(n, 1);
    for (uint32_t i = 1; i < n; i++) {
        size_t e = offsetof(H3100TelHistory, reclaim) + 24 * i;

        ck_assert_uint_ge(le64_at(hist, e), le64_at(hist, e - 24));
    }

    /* the snapshot holds still until the next Create; pieces add up */
    for (int i = 0; i < 64; i++) {
        ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE, 1, i * 256ull, 256, buf,
                        0, NULL), 0, "write %d", i);
    }
    for (size_t off = 0; off < len; off += H3100_TEL_BLOCK) {
        ck_status(nh_get_log(d->h, H3100_LOG_TELEMETRY_HOST, 0xffffffff,
                             b + off, H3100_TEL_BLOCK, off), 0,
                  "block at %zu", off);
    }
    ck_assert_msg(!memcmp(a, b, len), "07h changed without a Create");
    ck_status(nh_get_log(d->h, H3100_LOG_TELEMETRY_HOST, 0xffffffff, b,
                         H3100_TEL_BLOCK, len), NVME_SC_INVALID_FIELD,
              "offset past the page");
    header(d, H3100_LOG_TELEMETRY_HOST, LSP_CREATE, h);
    ck_assert_uint_eq(h[offsetof(H3100TelHeader, host_gen)], 2);
    whole(d, H3100_LOG_TELEMETRY_HOST, b);
    ck_assert_uint_eq(le64_at(b, SNAP(host_write_bytes)),
                      (1024 + 64) * 128 * 1024);
    dev_close(d);
}
END_TEST

START_TEST(test_telemetry_ctrl_on_throttling)
{
    Dev *d = dev_open_full(HOT_PARAMS, "", "");
    static uint8_t l[LOG_MAX];
    uint8_t h[H3100_TEL_BLOCK];
    const uint8_t *hist;
    uint16_t cid;
    NvmeSqe sqe;
    NvmeCqe cqe;
    uint32_t n;
    size_t e;

    header(d, H3100_LOG_TELEMETRY_CTRL, 0, h);
    ck_assert_uint_eq(h[offsetof(H3100TelHeader, ctrl_avail)], 0);
    ck_assert_uint_eq(le16_at(h, 12), 0);                    /* no data */
    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, AEC_TELEMETRY,
                              false, NULL), 0, "telemetry notices");
    nh_sqe_init(&sqe, NVME_ADM_ASYNC_EVENT, 0);
    cid = nh_submit(d->h, d->h->admin, &sqe);
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 5000000000ll),
                  "no telemetry notice within 5 s in 67 C air");
    ck_assert_msg((cqe.dw0 & 7) == 2 && ((cqe.dw0 >> 8) & 0xff) == 2 &&
                  ((cqe.dw0 >> 16) & 0xff) == H3100_LOG_TELEMETRY_CTRL,
                  "event 0x%08x: expected Notice, Telemetry Log Changed, "
                  "log 08h", cqe.dw0);
    whole(d, H3100_LOG_TELEMETRY_CTRL, l);
    ck_assert_uint_eq(l[offsetof(H3100TelHeader, ctrl_avail)], 1);
    ck_assert_uint_eq(l[offsetof(H3100TelHeader, ctrl_gen)], 1);
    ck_assert_msg(strstr((char *)l + offsetof(H3100TelHeader, reason),
                         "throttling"), "reason '%.128s'",
                  (char *)l + offsetof(H3100TelHeader, reason));
    ck_assert_uint_eq(le16_at(l, SNAP(reason)),
                      H3100_TEL_REASON_THROTTLE);
    ck_assert_uint_eq(le32_at(l, SNAP(throttle_level)), 2);
    /* the throttle changes that led there, the last one into heavy */
    hist = l + 2 * H3100_TEL_BLOCK +
           h3100_tel_da2_bytes(le32_at(l, SNAP(dies)),
                               le32_at(l, SNAP(channels)));
    n = le32_at(hist, offsetof(H3100TelHistory, thermal_n));
    ck_assert_uint_ge(n, 1);
    e = offsetof(H3100TelHistory, thermal) + 16 * (n - 1);
    ck_assert_uint_eq(hist[e + offsetof(H3100TelThermal, to_level)], 2);
    ck_assert_uint_ge(le32_at(hist, e + 8), 343);
    /* 07h's header tells the host controller data is there */
    header(d, H3100_LOG_TELEMETRY_HOST, 0, h);
    ck_assert_uint_eq(h[offsetof(H3100TelHeader, ctrl_avail)], 1);
    ck_assert_uint_eq(h[offsetof(H3100TelHeader, ctrl_gen)], 1);
    dev_close(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("telemetry-log");
    TCase *tc = dev_tcase(s, "pages");

    tcase_add_test(tc, test_telemetry_host);
    tcase_add_test(tc, test_telemetry_ctrl_on_throttling);
    return dev_main(s);
}
