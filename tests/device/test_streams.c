/*
 * Directives (NVMe 1.3): the Identify directive, Streams (return
 * parameters, allocate / release resources, get status, writes with
 * DTYPE Streams, implicit open and release, reset), and that streams
 * separating hot from cold data lower the drive's WAF.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stddef.h>
#include <string.h>

#include "dev.h"
#include "h3100/vlog.h"

#define DIR_IDENTIFY    0
#define DIR_STREAMS     1
#define OACS_DIRECTIVES (1 << 5)
#define STREAMS_MAX     (H3100_MAX_STREAMS - 1)
#define DTYPE_STREAMS   (DIR_STREAMS << 20)      /* in CDW12 */
#define NSID_ALL        0xffffffffu

/* Identify directive Return Parameters: supported and enabled bytes */
static void dir_identify(Dev *d, uint8_t *supported, uint8_t *enabled)
{
    uint8_t p[4096];

    ck_status(nh_directive(d->h, false, 1, DIR_IDENTIFY, 1, 0, 0, p,
                           sizeof(p), NULL), 0, "identify: return params");
    *supported = p[0];
    *enabled = p[32];
}

static uint16_t streams_enable(Dev *d, uint32_t nsid, bool on)
{
    return nh_directive(d->h, true, nsid, DIR_IDENTIFY, 1, 0,
                        DIR_STREAMS << 8 | on, NULL, 0, NULL);
}

static void stream_params(Dev *d, uint8_t *p)
{
    ck_status(nh_directive(d->h, false, 1, DIR_STREAMS, 1, 0, 0, p, 32,
                           NULL), 0, "streams: return params");
}

/* Get Status: the open stream identifiers, in @ids; returns the count */
static unsigned stream_status(Dev *d, uint16_t *ids)
{
    uint8_t p[64] = { 0 };
    unsigned n;

    ck_status(nh_directive(d->h, false, 1, DIR_STREAMS, 2, 0, 0, p,
                           sizeof(p), NULL), 0, "streams: get status");
    n = le16_at(p, 0);
    ck_assert_uint_le(n, STREAMS_MAX);
    for (unsigned i = 0; i < n; i++) {
        ids[i] = le16_at(p, 2 + 2 * i);
    }
    return n;
}

static bool stream_is_open(Dev *d, uint16_t id)
{
    uint16_t ids[STREAMS_MAX];
    unsigned n = stream_status(d, ids);

    for (unsigned i = 0; i < n; i++) {
        if (ids[i] == id) {
            return true;
        }
    }
    return false;
}

static uint16_t stream_write(Dev *d, uint64_t slba, uint32_t nlb,
                             uint64_t buf, uint16_t id)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
    nh_set_prps(d->h, &sqe, buf, (uint64_t)nlb * d->h->lba_size);
    sqe.cdw10 = (uint32_t)slba;
    sqe.cdw11 = (uint32_t)(slba >> 32);
    sqe.cdw12 = (nlb - 1) | DTYPE_STREAMS;
    sqe.cdw13 = (uint32_t)id << 16;
    cqe = nh_cmd(d->h, d->q, &sqe);
    return nh_status(&cqe);
}

START_TEST(test_directive_identify)
{
    Dev *d = dev_open();
    uint8_t id[4096], sup, en;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "identify controller");
    ck_assert_msg(le16_at(id, 256) & OACS_DIRECTIVES, "OACS lacks "
                  "Directives");
    dir_identify(d, &sup, &en);
    ck_assert_uint_eq(sup, 1 << DIR_IDENTIFY | 1 << DIR_STREAMS);
    ck_assert_uint_eq(en, 1 << DIR_IDENTIFY);

    /* every namespace (NSID FFFFFFFFh), as Linux 4.13-5.17 enabled it */
    ck_status(streams_enable(d, NSID_ALL, true), 0, "enable streams");
    dir_identify(d, &sup, &en);
    ck_assert_uint_eq(en, 1 << DIR_IDENTIFY | 1 << DIR_STREAMS);
    ck_status(streams_enable(d, 1, false), 0, "disable streams");
    dir_identify(d, &sup, &en);
    ck_assert_uint_eq(en, 1 << DIR_IDENTIFY);

    /* the Identify directive cannot be switched, nor unknown ones */
    ck_status(nh_directive(d->h, true, 1, DIR_IDENTIFY, 1, 0,
                           DIR_IDENTIFY << 8, NULL, 0, NULL),
              NVME_SC_INVALID_FIELD, "disable the identify directive");
    ck_status(nh_directive(d->h, true, 1, DIR_IDENTIFY, 1, 0, 2 << 8 | 1,
                           NULL, 0, NULL),
              NVME_SC_INVALID_FIELD, "enable directive type 2");
    ck_status(nh_directive(d->h, false, 1, 2, 1, 0, 0, id, 4096, NULL),
              NVME_SC_INVALID_FIELD, "receive directive type 2");
    ck_status(nh_directive(d->h, false, 1, DIR_IDENTIFY, 2, 0, 0, id, 4096,
                           NULL),
              NVME_SC_INVALID_FIELD, "identify: operation 2");
    ck_status(nh_directive(d->h, false, 2, DIR_IDENTIFY, 1, 0, 0, id, 4096,
                           NULL),
              NVME_SC_INVALID_NSID, "identify: namespace 2");
    ck_status(nh_directive(d->h, true, 0, DIR_IDENTIFY, 1, 0,
                           DIR_STREAMS << 8 | 1, NULL, 0, NULL),
              NVME_SC_INVALID_NSID, "enable streams on namespace 0");
    dev_close(d);
}
END_TEST

START_TEST(test_streams_off)
{
    Dev *d = dev_open();
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    uint8_t p[32];
    uint16_t ids[STREAMS_MAX];

    /* the parameters can be read first; nothing else works while off */
    stream_params(d, p);
    ck_assert_uint_eq(le16_at(p, 0), STREAMS_MAX);
    ck_status(nh_directive(d->h, false, 1, DIR_STREAMS, 2, 0, 0, ids,
                           sizeof(ids), NULL),
              NVME_SC_INVALID_FIELD, "get status, streams off");
    ck_status(nh_directive(d->h, false, 1, DIR_STREAMS, 3, 0, 2, NULL, 0,
                           NULL),
              NVME_SC_INVALID_FIELD, "allocate, streams off");
    ck_status(nh_directive(d->h, true, 1, DIR_STREAMS, 2, 0, 0, NULL, 0,
                           NULL),
              NVME_SC_INVALID_FIELD, "release resources, streams off");
    ck_status(stream_write(d, 0, 8, buf, 1), NVME_SC_INVALID_FIELD,
              "write to stream 1, streams off");
    /* directive types other than Streams are refused on writes */
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE, 1, 0, 8, buf, 2 << 20,
                    NULL), NVME_SC_INVALID_FIELD, "write with DTYPE 2");
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE, 1, 0, 8, buf, 0, NULL), 0,
              "write without a directive");
    dev_close(d);
}
END_TEST

START_TEST(test_streams_params_and_resources)
{
    Dev *d = dev_open();
    H3100Model *m = dev_model_new("h3100-3.2t", DEV_PARAMS, true);
    const H3100Config *cfg = h3100_model_config(m);
    uint64_t unit = (uint64_t)h3100_slots_per_unit(cfg) * H3100_SLOT_BYTES;
    uint8_t p[32];
    uint32_t dw0;

    ck_status(streams_enable(d, 1, true), 0, "enable streams");
    stream_params(d, p);
    ck_assert_uint_eq(le16_at(p, 0), STREAMS_MAX);           /* MSL */
    ck_assert_uint_eq(le16_at(p, 2), STREAMS_MAX);           /* NSSA */
    ck_assert_uint_eq(le16_at(p, 4), 0);                     /* NSSO */
    ck_assert_uint_eq(le32_at(p, 16), unit / 512);           /* SWS */
    ck_assert_uint_eq(le16_at(p, 20),                        /* SGS */
                      h3100_slots_per_superblock(cfg) * H3100_SLOT_BYTES /
                      unit);
    ck_assert_uint_eq(le16_at(p, 22), 0);                    /* NSA */

    ck_status(nh_directive(d->h, false, 1, DIR_STREAMS, 3, 0, 4, NULL, 0,
                           &dw0), 0, "allocate 4 streams");
    ck_assert_uint_eq(dw0 & 0xffff, 4);
    stream_params(d, p);
    ck_assert_uint_eq(le16_at(p, 2), STREAMS_MAX - 4);
    ck_assert_uint_eq(le16_at(p, 22), 4);
    ck_status(nh_directive(d->h, false, 1, DIR_STREAMS, 3, 0, 1, NULL, 0,
                           &dw0),
              NVME_SC_INVALID_FIELD, "allocate again before releasing");
    ck_status(nh_directive(d->h, true, 1, DIR_STREAMS, 2, 0, 0, NULL, 0,
                           NULL), 0, "release resources");
    ck_status(nh_directive(d->h, false, 1, DIR_STREAMS, 3, 0, 1000, NULL, 0,
                           &dw0), 0, "allocate 1000 streams");
    ck_assert_uint_eq(dw0 & 0xffff, STREAMS_MAX);
    ck_status(nh_directive(d->h, false, 1, DIR_STREAMS, 7, 0, 0, p, 32,
                           NULL), NVME_SC_INVALID_FIELD, "operation 7");
    h3100_model_free(m);
    dev_close(d);
}
END_TEST

START_TEST(test_streams_open_and_release)
{
    Dev *d = dev_open();
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    uint16_t ids[STREAMS_MAX];
    uint8_t p[32], sup, en;

    ck_status(streams_enable(d, 1, true), 0, "enable streams");
    ck_assert_uint_eq(stream_status(d, ids), 0);
    /* writing opens a stream; stream 0 is no stream */
    ck_status(stream_write(d, 0, 8, buf, 0), 0, "write, DSPEC 0");
    ck_assert_uint_eq(stream_status(d, ids), 0);
    for (uint16_t i = 0; i < 3; i++) {
        ck_status(stream_write(d, 8 * i, 8, buf, 100 + i), 0,
                  "write to stream %u", 100 + i);
    }
    ck_assert_uint_eq(stream_status(d, ids), 3);
    stream_params(d, p);
    ck_assert_uint_eq(le16_at(p, 24), 3);                    /* NSO */
    ck_assert_uint_eq(le16_at(p, 4), 3);                     /* NSSO */
    ck_status(nh_directive(d->h, true, 1, DIR_STREAMS, 1, 101, 0, NULL, 0,
                           NULL), 0, "release stream 101");
    ck_assert(!stream_is_open(d, 101));
    ck_assert(stream_is_open(d, 100) && stream_is_open(d, 102));
    ck_status(nh_directive(d->h, true, 1, DIR_STREAMS, 1, 555, 0, NULL, 0,
                           NULL), 0, "release stream 555, never open");

    /* one stream more than the drive keeps: the least recently written goes */
    ck_status(stream_write(d, 0, 8, buf, 100), 0, "write to stream 100");
    for (uint16_t i = 0; i < STREAMS_MAX - 1; i++) {
        ck_status(stream_write(d, 8 * i, 8, buf, 200 + i), 0,
                  "write to stream %u", 200 + i);
    }
    ck_assert_uint_eq(stream_status(d, ids), STREAMS_MAX);
    ck_assert_msg(!stream_is_open(d, 102), "stream 102, written least "
                  "recently, is still open");
    ck_assert(stream_is_open(d, 100));

    ck_status(nh_directive(d->h, true, 1, DIR_STREAMS, 2, 0, 0, NULL, 0,
                           NULL), 0, "release resources");
    ck_assert_uint_eq(stream_status(d, ids), 0);

    /* a controller reset disables streams and releases them */
    ck_status(stream_write(d, 0, 8, buf, 7), 0, "write to stream 7");
    nh_disable(d->h);
    dev_reprobe(d);
    dir_identify(d, &sup, &en);
    ck_assert_uint_eq(en, 1 << DIR_IDENTIFY);
    ck_status(stream_write(d, 0, 8, buf, 7), NVME_SC_INVALID_FIELD,
              "write to stream 7 after a reset");
    ck_status(streams_enable(d, 1, true), 0, "enable streams");
    ck_assert_uint_eq(stream_status(d, ids), 0);
    dev_close(d);
}
END_TEST

/*
 * A small drive (112 MiB user, one die, 26% spare): hot data (a fifth of the LBAs,
 * 80% of the writes) and cold data mixed, as random 16 KiB writes; WAF
 * over the second half, from the vendor log.
 */
#define TINY_PARAMS "user_bytes=112M,channels=1,dies_per_channel=1," \
                    "pages_per_block=24,blocks_per_plane=192," \
                    "spare_blocks_per_plane=4,grown_bad_ppm=0"
#define TINY_CHUNKS 7168                /* of 16 KiB */

static void vlog_bytes(Dev *d, uint64_t *host, uint64_t *nand)
{
    uint8_t l[H3100_VLOG_BYTES];

    ck_status(nh_get_log(d->h, 0xd0, NSID_ALL, l, sizeof(l), 0), 0,
              "vendor log");
    *host = le64_at(l, offsetof(H3100VendorLog, host_write_bytes));
    *nand = le64_at(l, offsetof(H3100VendorLog, nand_write_bytes));
}

#define WAF_BATCH 32                    /* writes per doorbell */

/* The next chunk: a fifth of them (*hot) take 80% of the writes. */
static uint32_t hot_cold_chunk(uint32_t *seed, bool *hot)
{
    *seed = *seed * 1103515245u + 12345u;
    *hot = (*seed >> 16) % 10 < 8;
    *seed = *seed * 1103515245u + 12345u;
    return *hot ? (*seed >> 8) % (TINY_CHUNKS / 5) :
           TINY_CHUNKS / 5 + (*seed >> 8) % (TINY_CHUNKS * 4 / 5);
}

static double hot_cold_waf(bool streams)
{
    /* null-co: only the FTL's metadata matters; 1.8 GB stay off the disk */
    Dev *d = dev_open_drive_params("driver=null-co,size=112M", TINY_PARAMS,
                                   ",timing=off");
    uint64_t host0 = 0, nand0 = 0, host, nand;
    uint32_t seed = 11;
    bool hot;
    NvmeSqe tmpl;

    /* one data buffer and PRP list for every write */
    nh_sqe_init(&tmpl, NVME_CMD_WRITE, 1);
    nh_set_prps(d->h, &tmpl, nh_alloc(d->h, 16384, 4096), 16384);
    tmpl.cdw12 = 32 - 1;
    if (streams) {
        ck_status(streams_enable(d, 1, true), 0, "enable streams");
        tmpl.cdw12 |= DTYPE_STREAMS;
    }
    for (int i = 0; i < 8 * TINY_CHUNKS; i += WAF_BATCH) {
        NvmeSqe sqes[WAF_BATCH];

        if (i == 4 * TINY_CHUNKS) {
            vlog_bytes(d, &host0, &nand0);
        }
        for (int j = 0; j < WAF_BATCH; j++) {
            sqes[j] = tmpl;
            sqes[j].cdw10 = hot_cold_chunk(&seed, &hot) * 32;
            sqes[j].cdw13 = streams ? (hot ? 1u : 2u) << 16 : 0;
        }
        nh_cmd_batch(d->h, d->q, sqes, WAF_BATCH);
    }
    vlog_bytes(d, &host, &nand);
    dev_close(d);
    return (double)(nand - nand0) / (host - host0);
}

START_TEST(test_streams_lower_waf)
{
    double mixed = hot_cold_waf(false), apart = hot_cold_waf(true);

    /* 1.587 against 1.809 */
    fprintf(stderr, "WAF mixed %.3f, on streams %.3f\n", mixed, apart);
    ck_assert_msg(apart < mixed * 0.92, "WAF %.3f with hot and cold on "
                  "their own streams, %.3f mixed", apart, mixed);
    ck_assert_msg(mixed > 1.2, "mixed WAF %.3f (%.3f on streams): the "
                  "workload does not reclaim", mixed, apart);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("streams");
    TCase *tc = dev_tcase(s, "directives");

    tcase_add_test(tc, test_directive_identify);
    tcase_add_test(tc, test_streams_off);
    tcase_add_test(tc, test_streams_params_and_resources);
    tcase_add_test(tc, test_streams_open_and_release);
    tc = dev_tcase(s, "waf");
    /*
     * Tens of thousands of writes through the qtest socket: 19-34 s on an
     * idle host, but some runs go 6x slower (see tests/device/README.md).
     */
    tcase_set_timeout(tc, 540);
    tcase_add_test(tc, test_streams_lower_waf);
    return dev_main(s);
}
