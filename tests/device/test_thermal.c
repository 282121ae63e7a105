/*
 * Health that reacts to heat: the thermal model seen through NVMe.
 * Identify's thresholds, SMART's composite temperature and thermal
 * management fields, the temperature event and critical warning, the OCP
 * throttling status, and Host Controlled Thermal Management (10h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "dev.h"

#define LOG_OCP_SMART   0xc0
#define FEAT_HCTM       0x10
#define LOG_BYTES       512

/* A drive in a hot chassis: idle alone takes it past 80 C in seconds. */
#define HOT_PARAMS      DEV_PARAMS ",ambient_k=340,thermal_tau_ms=100"

static void get_log(Dev *d, uint8_t lid, uint8_t *buf)
{
    ck_status(nh_get_log(d->h, lid, 0xffffffff, buf, LOG_BYTES, 0), 0,
              "log page %02Xh", lid);
}

static uint16_t smart_temp(Dev *d)
{
    uint8_t smart[LOG_BYTES];

    get_log(d, NVME_LOG_SMART, smart);
    return le16_at(smart, 1);
}

START_TEST(test_thermal_identify)
{
    Dev *d = dev_open();
    uint8_t id[4096];
    uint16_t temp;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify Controller");
    ck_assert_uint_eq(le16_at(id, 266), 343);          /* WCTEMP */
    ck_assert_uint_eq(le16_at(id, 268), 358);          /* CCTEMP */
    ck_assert_msg(le16_at(id, 322) & 1, "HCTMA lacks HCTM support");
    ck_assert_uint_eq(le16_at(id, 324), 273);          /* MNTMT */
    ck_assert_uint_eq(le16_at(id, 326), 353);          /* MXTMT */
    /* an idle drive in 25 C air sits near 40 C, below every threshold */
    qt_clock_step(d->qt, 2000000000);
    temp = smart_temp(d);
    ck_assert_msg(temp >= 308 && temp <= 318, "idle temperature %u K", temp);
    dev_close(d);
}
END_TEST

START_TEST(test_thermal_hot_drive)
{
    Dev *d = dev_open_full(HOT_PARAMS, "", "");
    uint8_t smart[LOG_BYTES], c0[LOG_BYTES];
    uint16_t cid;
    NvmeSqe sqe;
    NvmeCqe cqe;

    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, 0xff, false,
                              NULL), 0, "enable SMART events");
    nh_sqe_init(&sqe, NVME_ADM_ASYNC_EVENT, 0);
    cid = nh_submit(d->h, d->h->admin, &sqe);
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 3000000000ll),
                  "no temperature event within 3 s on a drive in 67 C air");
    ck_assert_msg((cqe.dw0 & 7) == 1 && ((cqe.dw0 >> 8) & 0xff) == 1 &&
                  ((cqe.dw0 >> 16) & 0xff) == NVME_LOG_SMART,
                  "event 0x%08x: expected SMART/Health, temperature", cqe.dw0);
    qt_clock_step(d->qt, 2000000000);
    get_log(d, NVME_LOG_SMART, smart);
    ck_assert_msg(le16_at(smart, 1) >= 353 && le16_at(smart, 1) < 358,
                  "temperature %u K: expected held between TMT2 and CCTEMP",
                  le16_at(smart, 1));
    ck_assert_msg(smart[0] & 2, "critical warning 0x%x lacks temperature",
                  smart[0]);
    ck_assert_uint_eq(le16_at(smart, 200), le16_at(smart, 1)); /* sensor 1 */
    ck_assert_msg(le32_at(smart, 216) >= 1 && le32_at(smart, 220) >= 1,
                  "TMT1/TMT2 transitions %u/%u", le32_at(smart, 216),
                  le32_at(smart, 220));
    ck_assert_msg(le32_at(smart, 228) >= 1, "no second at TMT2 (%u s)",
                  le32_at(smart, 228));
    get_log(d, LOG_OCP_SMART, c0);
    ck_assert_msg(c0[96] >= 1 && c0[97] == 2, "OCP throttling events %u "
                  "status %u: expected heavy throttling", c0[96], c0[97]);

    /* a host threshold above the temperature clears the warning bit */
    ck_status(nh_set_features(d->h, NVME_FEAT_TEMP_THRESH, 400, false, NULL),
              0, "over-temperature threshold 400 K");
    get_log(d, NVME_LOG_SMART, smart);
    ck_assert_msg(!(smart[0] & 2), "critical warning 0x%x still warns",
                  smart[0]);
    dev_close(d);
}
END_TEST

START_TEST(test_thermal_hctm)
{
    Dev *d = dev_open();
    uint8_t c0[LOG_BYTES], smart[LOG_BYTES];
    uint32_t dw0 = 0;

    ck_status(nh_set_features(d->h, FEAT_HCTM, (343u << 16) | 343, false,
                              NULL), NVME_SC_INVALID_FIELD, "TMT1 == TMT2");
    ck_status(nh_set_features(d->h, FEAT_HCTM, (300u << 16) | 400, false,
                              NULL), NVME_SC_INVALID_FIELD, "TMT2 > MXTMT");
    ck_status(nh_set_features(d->h, FEAT_HCTM, (200u << 16), false, NULL),
              NVME_SC_INVALID_FIELD, "TMT1 < MNTMT");
    /* thresholds below the idle 40 C: the drive throttles hard */
    ck_status(nh_set_features(d->h, FEAT_HCTM, (300u << 16) | 305, false,
                              NULL), 0, "TMT1 300 K, TMT2 305 K");
    ck_status(nh_get_features(d->h, FEAT_HCTM, 0, 0, &dw0), 0, "get 10h");
    ck_assert_uint_eq(dw0, (300u << 16) | 305);
    qt_clock_step(d->qt, 1000000000);
    get_log(d, LOG_OCP_SMART, c0);
    ck_assert_msg(c0[97] == 2, "throttling status %u under TMT2 305 K",
                  c0[97]);
    get_log(d, NVME_LOG_SMART, smart);
    ck_assert_msg(le32_at(smart, 220) >= 1, "no TMT2 transition");
    ck_assert_msg(!(smart[0] & 2), "host thresholds are not warnings");

    /* a controller reset gives the drive its own thresholds back */
    nh_disable(d->h);
    nh_enable(d->h, 32);
    ck_status(nh_get_features(d->h, FEAT_HCTM, 0, 0, &dw0), 0, "get 10h");
    ck_assert_uint_eq(dw0, 0);
    qt_clock_step(d->qt, 1000000000);
    get_log(d, LOG_OCP_SMART, c0);
    ck_assert_msg(c0[97] == 0, "throttling status %u after reset", c0[97]);
    dev_close(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("thermal");
    TCase *tc = dev_tcase(s, "thermal");

    tcase_add_test(tc, test_thermal_identify);
    tcase_add_test(tc, test_thermal_hot_drive);
    tcase_add_test(tc, test_thermal_hctm);
    return dev_main(s);
}
