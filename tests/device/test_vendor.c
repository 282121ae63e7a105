/*
 * Health log pages: the OCP SMART / Health Information Extended log
 * (C0h), DapuStor's additional SMART log (CAh, at the offsets nvme-cli's
 * DapuStor plugin reads) and the H3100 model log (D0h): their GUID,
 * version and size, NAND bytes against host bytes after random
 * overwrites, WAF, the recent-WAF window, and offset / length handling.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include <stddef.h>

#include "dev.h"
#include "h3100/dapustor-log.h"
#include "h3100/vlog.h"

#define LOG_OCP_SMART   0xc0
#define LOG_DAPU        0xca
#define LOG_VENDOR      0xd0
#define LOG_BYTES       512

/* C0h GUID AFD514C97C6F4F9CA4F2BFEA2810AFC5 as it sits at bytes 496-511 */
static const uint8_t ocp_guid[16] = {
    0xc5, 0xaf, 0x10, 0x28, 0xea, 0xbf, 0xf2, 0xa4,
    0x9c, 0x4f, 0x6f, 0x7c, 0xc9, 0x14, 0xd5, 0xaf,
};

/*
 * A tiny drive (32 MiB user, one die, 64 blocks per plane): a few
 * capacities of random overwrites make reclaim run.
 */
#define TINY_PARAMS "user_bytes=32M,channels=1,dies_per_channel=1," \
                    "pages_per_block=48,blocks_per_plane=64," \
                    "spare_blocks_per_plane=4,grown_bad_ppm=0"
#define TINY_CHUNKS 256                 /* of 128 KiB */

/* @n random 128 KiB overwrites; returns the host bytes written. */
static uint64_t random_overwrites(Dev *d, int n, uint32_t seed)
{
    uint64_t buf = nh_alloc(d->h, 128 * 1024, 4096);

    for (int i = 0; i < n; i++) {
        uint64_t chunk;

        seed = seed * 1103515245u + 12345u;
        chunk = (seed >> 8) % TINY_CHUNKS;
        ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE, 1, chunk * 256, 256,
                        buf, 0, NULL), 0, "write %d", i);
    }
    return (uint64_t)n * 128 * 1024;
}

static void get_log(Dev *d, uint8_t lid, uint8_t *buf)
{
    ck_status(nh_get_log(d->h, lid, 0xffffffff, buf, LOG_BYTES, 0), 0,
              "log page %02Xh", lid);
}

START_TEST(test_ocp_smart_new_drive)
{
    Dev *d = dev_open();
    uint8_t c0[LOG_BYTES], smart[LOG_BYTES];

    get_log(d, LOG_OCP_SMART, c0);
    get_log(d, NVME_LOG_SMART, smart);
    ck_assert_msg(memcmp(c0 + 496, ocp_guid, 16) == 0,
                  "C0h log GUID at bytes 496-511 is wrong");
    ck_assert_msg(le16_at(c0, 494) >= 3, "log page version %u",
                  le16_at(c0, 494));
    ck_assert_msg(le128_lo(c0, 0) == 0 && le128_lo(c0, 16) == 0,
                  "new drive: physical media written %" PRIu64 ", read %"
                  PRIu64, le128_lo(c0, 0), le128_lo(c0, 16));
    ck_assert_msg(le16_at(c0, 38) == smart[3], "bad user blocks normalized "
                  "%u, available spare %u%%", le16_at(c0, 38), smart[3]);
    ck_assert_msg(le16_at(c0, 128) == 100, "capacitor health %u",
                  le16_at(c0, 128));
    ck_assert_msg(c0[120] > 0 && c0[120] <= 100, "percent free blocks %u "
                  "on a new drive", c0[120]);
    ck_assert_msg(le32_at(c0, 88) >= le32_at(c0, 92), "erase counts max %u "
                  "< min %u", le32_at(c0, 88), le32_at(c0, 92));
    ck_assert_msg(le128_lo(c0, 176) > 0, "no endurance estimate");
    ck_assert_msg(le64_at(c0, 152) == 0, "NUSE %" PRIu64 " with nothing "
                  "written", le64_at(c0, 152));
    dev_close(d);
}
END_TEST

START_TEST(test_ocp_smart_after_overwrites)
{
    Dev *d = dev_open_full(TINY_PARAMS, ",timing=off", "");
    uint8_t a[LOG_BYTES], b[LOG_BYTES], v[LOG_BYTES], smart[LOG_BYTES];
    uint64_t host, nand, nuse;

    get_log(d, LOG_OCP_SMART, a);
    host = random_overwrites(d, 4 * TINY_CHUNKS, 1);
    get_log(d, LOG_OCP_SMART, b);
    get_log(d, LOG_VENDOR, v);
    get_log(d, NVME_LOG_SMART, smart);
    ck_assert_msg(memcmp(b + 496, ocp_guid, 16) == 0, "C0h GUID");
    nand = le128_lo(b, 0);
    ck_assert_msg(nand > host, "physical media units written %" PRIu64
                  " not above the %" PRIu64 " host bytes after random "
                  "overwrites", nand, host);
    ck_assert_msg(le64_at(v, 16) <= nand, "vendor log NAND bytes %" PRIu64
                  " after C0h's %" PRIu64, le64_at(v, 16), nand);
    ck_assert_msg(le128_lo(smart, 48) * 512000 >= host,
                  "SMART data units written %" PRIu64 " below %" PRIu64
                  " bytes", le128_lo(smart, 48), host);
    ck_assert_msg(le32_at(b, 88) > 0, "max erase count 0 after reclaim");
    ck_assert_msg(le32_at(b, 88) >= le32_at(b, 92), "erase max %u < min %u",
                  le32_at(b, 88), le32_at(b, 92));
    ck_assert_msg(le32_at(b, 88) == le32_at(v, 168) &&
                  le32_at(b, 92) == le32_at(v, 160),
                  "C0h erase counts %u/%u, vendor log %u/%u",
                  le32_at(b, 88), le32_at(b, 92), le32_at(v, 168),
                  le32_at(v, 160));
    ck_assert_msg(b[120] <= 100, "percent free blocks %u", b[120]);
    nuse = le64_at(b, 152);
    ck_assert_msg(nuse > 0 && nuse <= (32u << 20) / 512, "NUSE %" PRIu64
                  " LBAs", nuse);

    /* a 512-byte write is unaligned to the 4 KiB mapping unit */
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE, 1, 1, 1,
                    nh_alloc(d->h, 4096, 4096), 0, NULL), 0, "512 B write");
    get_log(d, LOG_OCP_SMART, b);
    ck_assert_msg(le64_at(b, 136) > le64_at(a, 136), "unaligned I/O %"
                  PRIu64 " -> %" PRIu64 " after a 512 B write",
                  le64_at(a, 136), le64_at(b, 136));
    dev_close(d);
}
END_TEST

START_TEST(test_vendor_waf)
{
    Dev *d = dev_open_full(TINY_PARAMS, ",timing=off", "");
    uint8_t v[LOG_BYTES];
    uint64_t host, vhost, vnand, waf;

    get_log(d, LOG_VENDOR, v);
    ck_assert_uint_eq(le16_at(v, 0), 1);                 /* version */
    ck_assert_uint_eq(le16_at(v, 2), LOG_BYTES);         /* size */
    ck_assert_msg(le64_at(v, 24) == 0, "WAF %" PRIu64 " before any write",
                  le64_at(v, 24));
    ck_assert_msg(le32_at(v, 148) > 0 && le32_at(v, 144) <= le32_at(v, 148),
                  "free superblocks %u of %u", le32_at(v, 144),
                  le32_at(v, 148));
    ck_assert_msg(le64_at(v, 104) > 0, "no write buffer capacity");

    host = random_overwrites(d, 4 * TINY_CHUNKS, 2);
    get_log(d, LOG_VENDOR, v);
    vhost = le64_at(v, 8);
    vnand = le64_at(v, 16);
    waf = le64_at(v, 24);
    ck_assert_msg(vhost == host, "host bytes written %" PRIu64 ", wrote %"
                  PRIu64, vhost, host);
    ck_assert_msg(vnand > vhost, "NAND bytes %" PRIu64 " not above host "
                  "bytes %" PRIu64 " after random overwrites", vnand, vhost);
    ck_assert_msg(waf == vnand * 1000 / vhost, "WAF x1000 %" PRIu64
                  " but NAND / host bytes = %" PRIu64 " / %" PRIu64, waf,
                  vnand, vhost);
    ck_assert_msg(waf > 1000, "WAF x1000 %" PRIu64 " after 4 capacities "
                  "of random overwrites", waf);
    ck_assert_msg(le64_at(v, 64) > 0 && le64_at(v, 72) > 0, "reclaim runs "
                  "%" PRIu64 ", pages moved %" PRIu64, le64_at(v, 64),
                  le64_at(v, 72));
    ck_assert_msg(le32_at(v, 168) >= le32_at(v, 160) &&
                  le32_at(v, 164) >= le32_at(v, 160) * 1000ull &&
                  le32_at(v, 164) <= le32_at(v, 168) * 1000ull,
                  "erase counts min %u avg %u/1000 max %u", le32_at(v, 160),
                  le32_at(v, 164), le32_at(v, 168));
    ck_assert_msg(le64_at(v, 184) > 0, "no block erases");
    dev_close(d);
}
END_TEST

START_TEST(test_vendor_recent_waf)
{
    Dev *d = dev_open_full(TINY_PARAMS, ",timing=off", "");
    uint8_t v[LOG_BYTES];
    uint64_t host, rhost, rnand;

    random_overwrites(d, 2 * TINY_CHUNKS, 3);
    /* past the recent window with no writes */
    qt_clock_step(d->qt, 70ll * 1000000000);
    get_log(d, LOG_VENDOR, v);
    ck_assert_uint_eq(le32_at(v, 4), 60);                /* window, s */
    ck_assert_msg(le64_at(v, 40) == 0 && le64_at(v, 32) == 0,
                  "recent host bytes %" PRIu64 ", WAF %" PRIu64 " after "
                  "70 s idle", le64_at(v, 40), le64_at(v, 32));
    ck_assert_msg(le64_at(v, 56) <= 60000, "recent window covers %" PRIu64
                  " ms", le64_at(v, 56));

    host = random_overwrites(d, TINY_CHUNKS, 4);
    qt_clock_step(d->qt, 2ll * 1000000000);
    get_log(d, LOG_VENDOR, v);
    rhost = le64_at(v, 40);
    rnand = le64_at(v, 48);
    ck_assert_msg(rhost == host, "recent host bytes %" PRIu64 ", wrote %"
                  PRIu64 " in the window", rhost, host);
    ck_assert_msg(rnand >= rhost, "recent NAND bytes %" PRIu64 " < host %"
                  PRIu64, rnand, rhost);
    ck_assert_msg(le64_at(v, 32) == rnand * 1000 / rhost, "recent WAF %"
                  PRIu64 ", NAND / host = %" PRIu64 " / %" PRIu64,
                  le64_at(v, 32), rnand, rhost);
    ck_assert_msg(le64_at(v, 8) > rhost, "lifetime host bytes %" PRIu64
                  " not above recent %" PRIu64, le64_at(v, 8), rhost);
    dev_close(d);
}
END_TEST

/* offsets and lengths: halves, past the end, unaligned, longer reads */
static void check_offsets(Dev *d, uint8_t lid)
{
    uint8_t full[LOG_BYTES], part[LOG_BYTES], big[4096];

    get_log(d, lid, full);
    ck_status(nh_get_log(d->h, lid, 0xffffffff, part, 256, 256), 0,
              "log %02Xh bytes 256-511", lid);
    ck_assert_msg(memcmp(part + 240, full + 496, 16) == 0,
                  "log %02Xh at offset 256: bytes 496-511 differ", lid);
    ck_status(nh_get_log(d->h, lid, 0xffffffff, part, 8, 504), 0,
              "log %02Xh bytes 504-511", lid);
    ck_assert_msg(memcmp(part, full + 504, 8) == 0,
                  "log %02Xh at offset 504 differs", lid);
    ck_status(nh_get_log(d->h, lid, 0xffffffff, part, 4, 0), 0,
              "log %02Xh first dword", lid);
    ck_assert_msg(memcmp(part, full, 4) == 0, "log %02Xh first dword", lid);
    memset(big, 0xa5, sizeof(big));
    ck_status(nh_get_log(d->h, lid, 0xffffffff, big, sizeof(big), 0), 0,
              "log %02Xh, 4096 bytes", lid);
    for (size_t i = LOG_BYTES; i < sizeof(big); i++) {
        ck_assert_msg(big[i] == 0, "log %02Xh byte %zu past the end is "
                      "0x%02x", lid, i, big[i]);
    }
    ck_status(nh_get_log(d->h, lid, 0xffffffff, part, 4, LOG_BYTES),
              NVME_SC_INVALID_FIELD, "log %02Xh at offset 512", lid);
    ck_status(nh_get_log(d->h, lid, 0xffffffff, part, 4, 2),
              NVME_SC_INVALID_FIELD, "log %02Xh at offset 2", lid);
    ck_status(nh_get_log(d->h, lid, 0, part, 4, 0), 0,
              "log %02Xh with NSID 0", lid);
}

/*
 * CAh as nvme-cli's DapuStor plugin reads it (struct
 * nvme_additional_smart_log): 13 items of 12 bytes, key at 0,
 * normalized value at 3, raw value at 5..10.  Written here from the
 * plugin's struct, not from the device's header.
 */
#define DAPU_ITEMS      13
#define DAPU_ITEM(i)    (12 * (i))
#define DAPU_RAW(i)     (DAPU_ITEM(i) + 5)
#define DAPU_WEAR       2               /* raw: u16 min, max, avg */
#define DAPU_HOST_READS 6
#define DAPU_THROTTLE   8               /* raw: u8 %, u32 count */
#define DAPU_NAND_BYTES 11
#define DAPU_HOST_BYTES 12

static uint64_t raw48(const uint8_t *l, int item)
{
    return le64_at(l, DAPU_RAW(item)) & 0xffffffffffffull;
}

START_TEST(test_dapustor_smart)
{
    static const uint8_t keys[DAPU_ITEMS] = {
        0xab, 0xac, 0xad, 0xb8, 0xc7, 0xe2, 0xe3, 0xe4, 0xea, 0xf0, 0xf3,
        0xf4, 0xf5,
    };
    Dev *d = dev_open_full(TINY_PARAMS, ",timing=off", "");
    uint8_t l[LOG_BYTES], v[LOG_BYTES];
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    uint64_t host;

    get_log(d, LOG_DAPU, l);
    for (int i = 0; i < DAPU_ITEMS; i++) {
        ck_assert_msg(l[DAPU_ITEM(i)] == keys[i], "item %d key %02xh", i,
                      l[DAPU_ITEM(i)]);
        ck_assert_msg(l[DAPU_ITEM(i) + 3] == 100, "item %d of a new drive: "
                      "normalized %u", i, l[DAPU_ITEM(i) + 3]);
    }
    for (int i = DAPU_ITEMS * 12; i < LOG_BYTES; i++) {
        ck_assert_msg(!l[i], "byte %d past the items is %02xh", i, l[i]);
    }

    host = random_overwrites(d, 4 * TINY_CHUNKS, 3);
    for (int i = 0; i < 300; i++) {     /* a read share to report */
        ck_status(nh_io(d->h, d->q, NVME_CMD_READ, 1, i * 8, 8, buf, 0,
                        NULL), 0, "read %d", i);
    }
    get_log(d, LOG_DAPU, l);
    get_log(d, LOG_VENDOR, v);
    ck_assert_uint_eq(raw48(l, DAPU_HOST_BYTES), host / (32 << 20));
    ck_assert_uint_eq(raw48(l, DAPU_NAND_BYTES),
                      le64_at(v, 16) / (32 << 20));
    ck_assert_msg(raw48(l, DAPU_NAND_BYTES) >= raw48(l, DAPU_HOST_BYTES) &&
                  raw48(l, DAPU_HOST_BYTES) == 4,
                  "NAND %" PRIu64 " x 32 MiB, host %" PRIu64 " x 32 MiB "
                  "after 128 MiB of overwrites", raw48(l, DAPU_NAND_BYTES),
                  raw48(l, DAPU_HOST_BYTES));
    /* wear levelling: the model log's erase counts */
    ck_assert_uint_eq(le16_at(l, DAPU_RAW(DAPU_WEAR)), le32_at(v, 160));
    ck_assert_uint_eq(le16_at(l, DAPU_RAW(DAPU_WEAR) + 2), le32_at(v, 168));
    ck_assert_uint_eq(le16_at(l, DAPU_RAW(DAPU_WEAR) + 4),
                      le32_at(v, 164) / 1000);
    ck_assert_msg(le16_at(l, DAPU_RAW(DAPU_WEAR) + 2) > 0,
                  "no erases after 4 capacities of overwrites");
    /* 300 reads among 1024 writes since the device started: 22% */
    ck_assert_uint_eq(raw48(l, DAPU_HOST_READS), 300 * 100 / (300 + 1024));
    ck_assert_uint_eq(l[DAPU_RAW(DAPU_THROTTLE)], 0);
    dev_close(d);
}
END_TEST

START_TEST(test_log_offsets)
{
    Dev *d = dev_open();

    check_offsets(d, LOG_OCP_SMART);
    check_offsets(d, LOG_VENDOR);
    check_offsets(d, LOG_DAPU);
    dev_close(d);
}
END_TEST

/* CBh item @name: its raw bytes as one number, or as u16 @k of three */
#define EXT_AT(name)        offsetof(H3100DapuExtLog, name)
#define EXT_RAW(l, name)    (le64_at(l, EXT_AT(name) + 5) & 0xffffffffffffull)
#define EXT_U16(l, name, k) le16_at(l, EXT_AT(name) + 5 + 2 * (k))

/*
 * CBh: every item keyed and new; temperatures (max, min, cur in C) and
 * power (max, min, avg) this run and over the drive's life; PLP; NAND
 * bytes read and lifetime WAF as D0h has them; firmware activations.
 */
START_TEST(test_dapustor_ext)
{
    Dev *d = dev_open_full(TINY_PARAMS ",ambient_k=330,thermal_tau_ms=200",
                           ",timing=on", "");
    uint8_t l[LOG_BYTES], v[LOG_BYTES];
    uint16_t max, min, cur;

    random_overwrites(d, 2 * TINY_CHUNKS, 5);
    qt_clock_step(d->qt, 3000000000ll);       /* it warms up in 57 C air */
    get_log(d, H3100_LOG_DAPU_EXT, l);
    get_log(d, LOG_VENDOR, v);
    for (int i = 0; i < 20; i++) {
        ck_assert_msg(l[12 * i] == i + 1 && l[12 * i + 3] == 100,
                      "item %d: key %02xh, normalized %u", i, l[12 * i],
                      l[12 * i + 3]);
    }
    max = EXT_U16(l, temperature, 0);
    min = EXT_U16(l, temperature, 1);
    cur = EXT_U16(l, temperature, 2);
    ck_assert_msg(min >= 20 && min <= cur && cur <= max && max < min + 60 &&
                  max > min, "temperature max %u min %u cur %u C", max, min,
                  cur);
    ck_assert_uint_eq(EXT_U16(l, temp_since_bootup, 0), max);
    ck_assert_uint_eq(EXT_U16(l, temp_since_born, 0), max);
    ck_assert_uint_eq(EXT_U16(l, power_on_temperature, 2), min);
    ck_assert_msg(EXT_U16(l, power_consumption, 0) >=
                  EXT_U16(l, power_consumption, 2) &&
                  EXT_U16(l, power_consumption, 2) >=
                  EXT_U16(l, power_consumption, 1) &&
                  EXT_U16(l, power_consumption, 1) > 0,
                  "power max %u min %u avg %u mW",
                  EXT_U16(l, power_consumption, 0),
                  EXT_U16(l, power_consumption, 1),
                  EXT_U16(l, power_consumption, 2));
    ck_assert_uint_eq(EXT_RAW(l, power_loss_protection), 1);
    ck_assert_uint_eq(EXT_RAW(l, nand_bytes_read),
                      le64_at(v, offsetof(H3100VendorLog, nand_read_bytes)) /
                      H3100_DAPU_BYTES_UNIT);
    ck_assert_uint_eq(EXT_RAW(l, lifetime_write_amplification),
                      le64_at(v, offsetof(H3100VendorLog, waf_milli)));
    ck_assert_uint_eq(EXT_RAW(l, firmware_update_count), 0);
    ck_assert_uint_eq(EXT_RAW(l, inflight_read_io_cmd), 0);
    ck_status(nh_get_log(d->h, H3100_LOG_DAPU_EXT, 0xffffffff, l, 240, 0),
              0, "CBh, the 240 bytes the plugin reads");
    dev_close(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("vendor");
    TCase *tc = dev_tcase(s, "ocp");

    tcase_add_test(tc, test_ocp_smart_new_drive);
    tcase_add_test(tc, test_ocp_smart_after_overwrites);
    tc = dev_tcase(s, "vendor");
    tcase_add_test(tc, test_vendor_waf);
    tcase_add_test(tc, test_vendor_recent_waf);
    tcase_add_test(tc, test_log_offsets);
    tcase_add_test(tc, test_dapustor_smart);
    tcase_add_test(tc, test_dapustor_ext);
    return dev_main(s);
}
