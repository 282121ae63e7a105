/*
 * Namespace Management and Attachment (NVMe 1.3): create, delete,
 * attach, detach with every status they return, Identify CNS 10h-13h,
 * NVMCAP / UNVMCAP, the Namespace Attribute Changed event and log 04h,
 * per-namespace LBA formats on the one FTL (I/O lands in each
 * namespace's extent; Format and Delete erase only theirs), the table
 * across a restart (state=), and over-provisioning following what is
 * allocated.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include <unistd.h>

#include "dev.h"
#include "h3100/vlog.h"
#include "h3100/lba-status-log.h"
#include "state_format.h"

#define NS_MAX              32
#define OACS_NS_MGMT        (1 << 3)
#define OAES_NS_ATTR        (1 << 8)
#define AEC_NS_ATTR         (1 << 8)
#define ADM_NS_MGMT         0x0d
#define ADM_NS_ATTACH       0x15
#define SC_NS_INSUFF_CAP    0x115
#define SC_NS_ID_UNAVAIL    0x116
#define SC_NS_ATTACHED      0x118
#define SC_NS_NOT_ATTACHED  0x11a
#define SC_THIN_PROV        0x11b
#define SC_CTRL_LIST        0x11c
#define SC_FORMAT_BUSY      0x084
#define NSID_ALL            0xffffffffu
#define MIB                 (1ull << 20)
#define LOG_CHANGED_NS      0x04
#define ADM_GET_LBA_STATUS  0x86
#define GLS_TRACKED         0x11
/* virtual time a command may take on a throttled image (ns_open_throttled) */
#define NS_THROTTLED_WAIT_NS (3600 * 1000000000ll)

/* Identify Controller / Namespace offsets */
#define IDC_OACS            256
#define IDC_OAES            92
#define IDC_TNVMCAP         280
#define IDC_UNVMCAP         296
#define IDC_NN              516
#define IDC_FNA             524
#define IDN_NSZE            0
#define IDN_NCAP            8
#define IDN_FLBAS           26
#define IDN_NVMCAP          48

/* Namespace Management, create: its NSID in *nsid */
static uint16_t ns_create_full(Dev *d, uint64_t nsze, uint64_t ncap,
                               uint8_t flbas, uint8_t dps, uint8_t nmic,
                               uint32_t *nsid)
{
    uint8_t id[4096] = { 0 };
    uint64_t buf = nh_alloc(d->h, sizeof(id), 4096);
    NvmeSqe sqe;
    NvmeCqe cqe;

    memcpy(id + IDN_NSZE, &nsze, 8);
    memcpy(id + IDN_NCAP, &ncap, 8);
    id[IDN_FLBAS] = flbas;
    id[29] = dps;
    id[30] = nmic;
    qt_memwrite(d->qt, buf, id, sizeof(id));
    nh_sqe_init(&sqe, ADM_NS_MGMT, 0);
    nh_set_prps(d->h, &sqe, buf, sizeof(id));
    sqe.cdw10 = 0;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    if (nsid) {
        *nsid = cqe.dw0;
    }
    return nh_status(&cqe);
}

static uint32_t ns_create(Dev *d, uint64_t bytes, unsigned lbaf)
{
    uint64_t nlb = bytes >> (lbaf ? 12 : 9);
    uint32_t nsid = 0;

    ck_status(ns_create_full(d, nlb, nlb, lbaf, 0, 0, &nsid), 0,
              "create a %llu MiB namespace, LBA format %u",
              (unsigned long long)(bytes / MIB), lbaf);
    ck_assert_msg(nsid >= 1 && nsid <= NS_MAX, "created NSID %u", nsid);
    return nsid;
}

static uint16_t ns_delete(Dev *d, uint32_t nsid)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, ADM_NS_MGMT, nsid);
    sqe.cdw10 = 1;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    return nh_status(&cqe);
}

/* Namespace Attachment @sel (0 attach, 1 detach), controllers @ids */
static uint16_t ns_attach_list(Dev *d, uint32_t nsid, uint32_t sel,
                               const uint16_t *ids, unsigned n)
{
    uint16_t list[2048] = { 0 };
    uint64_t buf = nh_alloc(d->h, sizeof(list), 4096);
    NvmeSqe sqe;
    NvmeCqe cqe;

    list[0] = n;
    memcpy(list + 1, ids, n * sizeof(*ids));
    qt_memwrite(d->qt, buf, list, sizeof(list));
    nh_sqe_init(&sqe, ADM_NS_ATTACH, nsid);
    nh_set_prps(d->h, &sqe, buf, sizeof(list));
    sqe.cdw10 = sel;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    return nh_status(&cqe);
}

static uint16_t ns_attach(Dev *d, uint32_t nsid, bool attach)
{
    static const uint16_t self = 0;

    return ns_attach_list(d, nsid, attach ? 0 : 1, &self, 1);
}

/* Identify list @cns (02h, 10h) above @nsid: count, first ids in @out */
static unsigned ns_list(Dev *d, uint32_t cns, uint32_t nsid, uint32_t *out)
{
    uint8_t list[4096];
    unsigned n = 0;

    ck_status(nh_identify(d->h, cns, nsid, list), 0, "identify CNS %02xh",
              cns);
    while (n < 1024 && le32_at(list, 4 * n)) {
        if (out) {
            out[n] = le32_at(list, 4 * n);
        }
        n++;
    }
    return n;
}

static uint64_t unvmcap(Dev *d)
{
    uint8_t id[4096];

    ck_status(nh_identify(d->h, 1, 0, id), 0, "identify controller");
    return le64_at(id, IDC_UNVMCAP);
}

/* Raw I/O to @nsid of @lba_size-byte LBAs */
static uint16_t ns_io(Dev *d, uint8_t opc, uint32_t nsid, uint64_t slba,
                      uint32_t nlb, uint32_t lba_size, uint64_t buf)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, opc, nsid);
    nh_set_prps(d->h, &sqe, buf, (uint64_t)nlb * lba_size);
    sqe.cdw10 = (uint32_t)slba;
    sqe.cdw11 = (uint32_t)(slba >> 32);
    sqe.cdw12 = nlb - 1;
    cqe = nh_cmd(d->h, d->q, &sqe);
    return nh_status(&cqe);
}

static void fill(Dev *d, uint64_t buf, uint8_t v, size_t len)
{
    g_autofree uint8_t *b = g_malloc(len);

    memset(b, v, len);
    qt_memwrite(d->qt, buf, b, len);
}

static bool backing_is(Dev *d, uint64_t off, uint8_t v, size_t len)
{
    g_autofree uint8_t *b = g_malloc(len);

    dev_backing_read(d, off, b, len);
    for (size_t i = 0; i < len; i++) {
        if (b[i] != v) {
            return false;
        }
    }
    return true;
}

START_TEST(test_ns_identify)
{
    Dev *d = dev_open();
    uint8_t id[4096];
    uint32_t ids[4];

    ck_status(nh_identify(d->h, 1, 0, id), 0, "identify controller");
    ck_assert_msg(le16_at(id, IDC_OACS) & OACS_NS_MGMT, "OACS lacks "
                  "namespace management");
    ck_assert_msg(le32_at(id, IDC_OAES) & OAES_NS_ATTR, "OAES lacks "
                  "namespace attribute notices");
    ck_assert_uint_eq(le32_at(id, IDC_NN), NS_MAX);
    ck_assert_uint_eq(le64_at(id, IDC_TNVMCAP), DEV_NS_BYTES);
    ck_assert_uint_eq(le64_at(id, IDC_UNVMCAP), 0);
    ck_assert_uint_eq(id[IDC_FNA] & 1, 0);    /* Format: per namespace */

    /* as shipped: NSID 1, the whole capacity, attached to controller 0 */
    ck_assert_uint_eq(ns_list(d, 0x10, 0, ids), 1);
    ck_assert_uint_eq(ids[0], 1);
    ck_assert_uint_eq(ns_list(d, 0x02, 0, ids), 1);
    ck_assert_uint_eq(ns_list(d, 0x10, 1, NULL), 0);
    ck_status(nh_identify(d->h, 0x11, 1, id), 0, "CNS 11h, NSID 1");
    ck_assert_uint_eq(le64_at(id, IDN_NSZE), DEV_NS_LBAS);
    ck_assert_uint_eq(le64_at(id, IDN_NVMCAP), DEV_NS_BYTES);
    ck_status(nh_identify(d->h, 0x12, 1, id), 0, "CNS 12h, NSID 1");
    ck_assert_uint_eq(le16_at(id, 0), 1);
    ck_assert_uint_eq(le16_at(id, 2), 0);
    ck_status(nh_identify(d->h, 0x13, 0, id), 0, "CNS 13h");
    ck_assert_uint_eq(le16_at(id, 0), 1);
    ck_assert_uint_eq(le16_at(id, 2), 0);

    /* a valid NSID without a namespace reads zeroes; past NN it fails */
    ck_status(nh_identify(d->h, 0, 2, id), 0, "CNS 00h, NSID 2");
    ck_assert_uint_eq(le64_at(id, IDN_NSZE), 0);
    ck_status(nh_identify(d->h, 0x11, 2, id), 0, "CNS 11h, NSID 2");
    ck_assert_uint_eq(le64_at(id, IDN_NSZE), 0);
    ck_status(nh_identify(d->h, 0x12, 2, id), 0, "CNS 12h, NSID 2");
    ck_assert_uint_eq(le16_at(id, 0), 0);
    ck_status(nh_identify(d->h, 0x11, NS_MAX + 1, id), NVME_SC_INVALID_NSID,
              "CNS 11h, NSID 33");
    ck_status(nh_identify(d->h, 0x12, 0, id), NVME_SC_INVALID_NSID,
              "CNS 12h, NSID 0");
    ck_status(nh_identify(d->h, 0x10, 0xfffffffe, id), NVME_SC_INVALID_NSID,
              "CNS 10h above FFFFFFFEh");

    /* FFFFFFFFh: what all namespaces share for CNS 00h, nothing for 11h */
    ck_status(nh_identify(d->h, 0, NSID_ALL, id), 0, "CNS 00h, FFFFFFFFh");
    ck_assert_uint_eq(le64_at(id, IDN_NSZE), 0);
    ck_assert_uint_eq(id[25], 1);                     /* NLBAF: 2 formats */
    ck_status(nh_identify(d->h, 0x11, NSID_ALL, id), NVME_SC_INVALID_NSID,
              "CNS 11h, FFFFFFFFh");
    dev_close(d);
}
END_TEST

/*
 * Two namespaces of their own formats side by side in the FTL: each
 * command reaches its namespace's extent, attach and detach gate them.
 */
START_TEST(test_ns_create_attach_io)
{
    Dev *d = dev_open();
    uint64_t buf = nh_alloc(d->h, 8192, 4096);
    uint32_t a, b, ids[4];
    uint8_t id[4096];

    ck_status(ns_delete(d, 1), 0, "delete namespace 1");
    ck_assert_uint_eq(ns_list(d, 0x10, 0, NULL), 0);
    ck_assert_uint_eq(unvmcap(d), DEV_NS_BYTES);
    ck_status(ns_io(d, NVME_CMD_READ, 1, 0, 1, 512, buf),
              NVME_SC_INVALID_NSID, "read of the deleted namespace");

    a = ns_create(d, 64 * MIB, 0);
    b = ns_create(d, 32 * MIB + 4096, 1);
    ck_assert_uint_eq(a, 1);
    ck_assert_uint_eq(b, 2);
    /* extents rounded to 1 MiB: 64 + 33 MiB allocated */
    ck_assert_uint_eq(unvmcap(d), DEV_NS_BYTES - 97 * MIB);
    ck_assert_uint_eq(ns_list(d, 0x10, 0, ids), 2);
    ck_assert_uint_eq(ids[1], 2);
    ck_assert_uint_eq(ns_list(d, 0x02, 0, NULL), 0);   /* none attached */
    ck_status(nh_identify(d->h, 0x11, b, id), 0, "CNS 11h of the 2nd");
    ck_assert_uint_eq(le64_at(id, IDN_NSZE), (32 * MIB + 4096) / 4096);
    ck_assert_uint_eq(id[IDN_FLBAS] & 0xf, 1);
    ck_assert_uint_eq(le64_at(id, IDN_NVMCAP), 32 * MIB + 4096);
    ck_status(nh_identify(d->h, 0, b, id), 0, "CNS 00h, not attached");
    ck_assert_uint_eq(le64_at(id, IDN_NSZE), 0);
    ck_status(ns_io(d, NVME_CMD_WRITE, b, 0, 1, 4096, buf),
              NVME_SC_INVALID_NSID, "write to a detached namespace");

    ck_status(ns_attach(d, a, true), 0, "attach %u", a);
    ck_status(ns_attach(d, b, true), 0, "attach %u", b);
    ck_status(ns_attach(d, b, true), SC_NS_ATTACHED, "attach %u again", b);
    ck_assert_uint_eq(ns_list(d, 0x02, 0, ids), 2);
    ck_assert_uint_eq(ns_list(d, 0x02, 1, ids), 1);
    ck_assert_uint_eq(ids[0], 2);
    ck_status(nh_identify(d->h, 0, b, id), 0, "CNS 00h, attached");
    ck_assert_uint_eq(le64_at(id, IDN_NSZE), (32 * MIB + 4096) / 4096);

    /* the 2nd namespace's LBA 3 is 4 KiB into its extent, after the 1st */
    fill(d, buf, 0x5b, 4096);
    ck_status(ns_io(d, NVME_CMD_WRITE, b, 3, 1, 4096, buf), 0,
              "write LBA 3 of namespace %u", b);
    fill(d, buf, 0xa1, 1024);
    ck_status(ns_io(d, NVME_CMD_WRITE, a, 10, 2, 512, buf), 0,
              "write LBAs 10-11 of namespace %u", a);
    ck_assert_msg(backing_is(d, 64 * MIB + 3 * 4096, 0x5b, 4096),
                  "namespace 2's LBA 3 is not at 64 MiB + 12 KiB");
    ck_assert_msg(backing_is(d, 10 * 512, 0xa1, 1024),
                  "namespace 1's LBA 10 is not at 5 KiB");
    ck_status(ns_io(d, NVME_CMD_READ, b, (32 * MIB + 4096) / 4096, 1, 4096,
                    buf), NVME_SC_LBA_RANGE, "read past namespace 2's end");
    ck_status(ns_io(d, NVME_CMD_READ, a, 64 * MIB / 512 - 1, 2, 512, buf),
              NVME_SC_LBA_RANGE, "read across namespace 1's end");

    ck_status(ns_attach(d, b, false), 0, "detach %u", b);
    ck_status(ns_attach(d, b, false), SC_NS_NOT_ATTACHED, "detach again");
    ck_status(ns_io(d, NVME_CMD_READ, b, 3, 1, 4096, buf),
              NVME_SC_INVALID_NSID, "read of a detached namespace");
    ck_status(nh_identify(d->h, 0x12, b, id), 0, "CNS 12h, detached");
    ck_assert_uint_eq(le16_at(id, 0), 0);
    /* detached, its data stays */
    ck_status(ns_attach(d, b, true), 0, "attach %u again", b);
    ck_status(ns_io(d, NVME_CMD_READ, b, 3, 1, 4096, buf), 0, "read back");
    {
        uint8_t got[4096];

        qt_memread(d->qt, buf, got, sizeof(got));
        for (unsigned i = 0; i < sizeof(got); i++) {
            ck_assert_uint_eq(got[i], 0x5b);
        }
    }
    dev_close(d);
}
END_TEST

START_TEST(test_ns_errors)
{
    Dev *d = dev_open();
    const uint16_t other = 5, two[2] = { 0, 7 }, twice[2] = { 0, 0 };
    uint64_t lbas = DEV_NS_LBAS;
    uint32_t nsid;
    NvmeSqe sqe;
    NvmeCqe cqe;

    ck_status(ns_create_full(d, 2048, 2048, 0, 0, 0, &nsid),
              SC_NS_INSUFF_CAP, "create with no capacity left");
    ck_status(ns_delete(d, 1), 0, "delete namespace 1");
    ck_status(ns_create_full(d, 2048, 1024, 0, 0, 0, &nsid), SC_THIN_PROV,
              "create thin (NCAP < NSZE)");
    ck_status(ns_create_full(d, 1024, 2048, 0, 0, 0, &nsid),
              NVME_SC_INVALID_FIELD, "create with NCAP > NSZE");
    ck_status(ns_create_full(d, 0, 0, 0, 0, 0, &nsid), NVME_SC_INVALID_FIELD,
              "create of size 0");
    ck_status(ns_create_full(d, 2048, 2048, 2, 0, 0, &nsid),
              NVME_SC_INVALID_FORMAT, "create with LBA format 2");
    ck_status(ns_create_full(d, 2048, 2048, 0, 1, 0, &nsid),
              NVME_SC_INVALID_FIELD, "create with protection information");
    ck_status(ns_create_full(d, 2048, 2048, 0, 0, 1, &nsid),
              NVME_SC_INVALID_FIELD, "create shared (one controller)");
    ck_status(ns_create_full(d, lbas + 1, lbas + 1, 0, 0, 0, &nsid),
              SC_NS_INSUFF_CAP, "create larger than the drive");
    ck_status(ns_create_full(d, UINT64_MAX, UINT64_MAX, 0, 0, 0, &nsid),
              SC_NS_INSUFF_CAP, "create of 2^64 - 1 LBAs");

    /* a 512-byte namespace has no 4 KiB LBA to format to */
    ck_status(ns_create_full(d, 1, 1, 0, 0, 0, &nsid), 0, "create 1 LBA");
    ck_status(ns_attach(d, nsid, true), 0, "attach it");
    nh_sqe_init(&sqe, 0x80, nsid);
    sqe.cdw10 = 1;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_INVALID_FORMAT, "format 512 B to 4 KiB");
    ck_status(ns_delete(d, nsid), 0, "delete it");

    /* the NSIDs run out at NN */
    for (unsigned i = 1; i <= NS_MAX; i++) {
        ck_assert_uint_eq(ns_create(d, MIB, 0), i);
    }
    ck_status(ns_create_full(d, 8, 8, 0, 0, 0, &nsid), SC_NS_ID_UNAVAIL,
              "create a 33rd");
    ck_status(ns_delete(d, 7), 0, "delete 7");
    ck_assert_uint_eq(ns_create(d, MIB, 1), 7);         /* lowest free */

    ck_status(ns_attach_list(d, 3, 0, NULL, 0), SC_CTRL_LIST,
              "attach to an empty controller list");
    ck_status(ns_attach_list(d, 3, 0, &other, 1), SC_CTRL_LIST,
              "attach to controller 5");
    ck_status(ns_attach_list(d, 3, 0, two, 2), SC_CTRL_LIST,
              "attach to controllers 0 and 7");
    ck_status(ns_attach_list(d, 3, 0, twice, 2), SC_CTRL_LIST,
              "attach to controller 0 named twice");
    ck_status(ns_attach(d, 3, true), 0, "attach 3");
    ck_status(ns_attach_list(d, 3, 1, twice, 2), SC_CTRL_LIST,
              "detach from controller 0 named twice");
    ck_status(ns_attach(d, 3, false), 0, "detach 3");
    ck_status(ns_attach_list(d, 3, 2, two, 1), NVME_SC_INVALID_FIELD,
              "attachment select 2");
    ck_status(ns_attach(d, 0, true), NVME_SC_INVALID_NSID, "attach NSID 0");
    ck_status(ns_attach(d, NSID_ALL, true), NVME_SC_INVALID_NSID,
              "attach NSID FFFFFFFFh");
    ck_status(ns_delete(d, 9), 0, "delete 9");
    ck_status(ns_attach(d, 9, true), NVME_SC_INVALID_FIELD,
              "attach a deleted namespace");
    ck_status(ns_delete(d, 9), NVME_SC_INVALID_FIELD, "delete 9 again");
    ck_status(ns_delete(d, 0), NVME_SC_INVALID_NSID, "delete NSID 0");
    ck_status(ns_delete(d, NS_MAX + 1), NVME_SC_INVALID_NSID, "delete 33");
    nh_sqe_init(&sqe, ADM_NS_MGMT, 3);
    sqe.cdw10 = 2;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_INVALID_FIELD, "management select 2");

    /* FFFFFFFFh deletes every namespace */
    ck_status(ns_delete(d, NSID_ALL), 0, "delete all");
    ck_assert_uint_eq(ns_list(d, 0x10, 0, NULL), 0);
    ck_assert_uint_eq(unvmcap(d), DEV_NS_BYTES);
    ck_status(ns_delete(d, NSID_ALL), 0, "delete all, none left");
    dev_close(d);
}
END_TEST

/* Namespace Attribute Changed: the event, once, and log 04h */
START_TEST(test_ns_changed_event)
{
    Dev *d = dev_open();
    uint8_t log[4096];
    uint32_t nsid;
    uint16_t cid;
    NvmeSqe sqe;
    NvmeCqe cqe;

    ck_status(nh_get_log(d->h, LOG_CHANGED_NS, NSID_ALL, log, 4096, 0), 0,
              "log 04h");
    ck_assert_uint_eq(le32_at(log, 0), 0);
    ck_status(nh_set_features(d->h, NVME_FEAT_ASYNC_EVENT, AEC_NS_ATTR,
                              false, NULL), 0, "enable namespace notices");
    nh_sqe_init(&sqe, NVME_ADM_ASYNC_EVENT, 0);
    cid = nh_submit(d->h, d->h->admin, &sqe);
    ck_status(ns_delete(d, 1), 0, "delete the attached namespace 1");
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 1000000000),
                  "no event after namespace 1 went");
    ck_assert_msg((cqe.dw0 & 7) == 2 && ((cqe.dw0 >> 8) & 0xff) == 0 &&
                  ((cqe.dw0 >> 16) & 0xff) == LOG_CHANGED_NS,
                  "event 0x%08x: expected notice, namespace attribute "
                  "changed, log 04h", cqe.dw0);
    nsid = ns_create(d, 8 * MIB, 0);
    ck_status(ns_attach(d, nsid, true), 0, "attach %u", nsid);
    /* masked until log 04h is read: reading 03h (a Notice log) is not it */
    cid = nh_submit(d->h, d->h->admin, &sqe);
    ck_status(nh_get_log(d->h, 0x03, NSID_ALL, log, 512, 0), 0, "log 03h");
    ck_assert_msg(!nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100000000),
                  "reading log 03h unmasked the namespace notice");
    ck_status(nh_get_log(d->h, LOG_CHANGED_NS, NSID_ALL, log, 4096, 0), 0,
              "log 04h");
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 100000000),
                  "the attach's notice did not come once log 04h was read");
    ck_assert_uint_eq(le32_at(log, 0), 1);   /* deleted, then attached */
    ck_assert_uint_eq(le32_at(log, 4), 0);
    /* read with RAE clear: the list is empty again, the event re-armed */
    ck_status(nh_get_log(d->h, LOG_CHANGED_NS, NSID_ALL, log, 4096, 0), 0,
              "log 04h again");
    ck_assert_uint_eq(le32_at(log, 0), 0);
    cid = nh_submit(d->h, d->h->admin, &sqe);
    ck_status(ns_attach(d, nsid, false), 0, "detach %u", nsid);
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, cid, &cqe, 1000000000),
                  "no event after the detach");
    /* created, not attached: nothing changed for this controller */
    ck_status(nh_get_log(d->h, LOG_CHANGED_NS, NSID_ALL, log, 4096, 0), 0,
              "log 04h");
    ck_assert_uint_eq(le32_at(log, 0), nsid);
    ns_create(d, 8 * MIB, 0);
    ck_status(nh_get_log(d->h, LOG_CHANGED_NS, NSID_ALL, log, 4096, 0), 0,
              "log 04h after a create");
    ck_assert_uint_eq(le32_at(log, 0), 0);
    dev_close(d);
}
END_TEST

/* ---- LBA Status Information (log 0Eh) ---------------------------------- */

#define LSI_HDR     sizeof(H3100LbaStatusHdr)
#define LSI_ELEM    sizeof(H3100LbaStatusNs)
#define LSI_DESC    sizeof(H3100LbaRangeDesc)

/* log 0Eh's header: its length, elements, ESTULB and LSGC */
static void lsi_header(const uint8_t *log, uint32_t len, uint32_t elements,
                       uint32_t estulb, uint16_t lsgc, const char *what)
{
    uint32_t got_len = le32_at(log, offsetof(H3100LbaStatusHdr, lslplen));
    uint32_t got_n = le32_at(log, offsetof(H3100LbaStatusHdr, nlslne));
    uint32_t got_est = le32_at(log, offsetof(H3100LbaStatusHdr, estulb));
    uint16_t got_gen = le16_at(log, offsetof(H3100LbaStatusHdr, lsgc));

    ck_assert_msg(got_len == len && got_n == elements &&
                  got_est == estulb && got_gen == lsgc,
                  "%s: LSLPLEN %u NLSLNE %u ESTULB %u LSGC %u, expected "
                  "%u %u %u %u", what, got_len, got_n, got_est, got_gen,
                  len, elements, estulb, lsgc);
}

/* the element at @off is namespace @nsid's, with @nrd descriptors */
static size_t lsi_element(const uint8_t *log, size_t off, uint32_t nsid,
                          uint32_t nrd, const char *what)
{
    const uint8_t *e = log + off;

    ck_assert_msg(le32_at(e, offsetof(H3100LbaStatusNs, neid)) == nsid &&
                  le32_at(e, offsetof(H3100LbaStatusNs, nlrd)) == nrd &&
                  e[offsetof(H3100LbaStatusNs, ratype)] ==
                  H3100_LBAS_RATYPE_TRACKED,
                  "%s: element at %zu is NEID %u NLRD %u RATYPE %02xh, "
                  "expected %u %u 11h", what, off, le32_at(e, 0),
                  le32_at(e, 4), e[8], nsid, nrd);
    return off + LSI_ELEM;
}

/* the descriptor at @off is LBAs @lba.. (@nlb of them: RNLB @nlb - 1) */
static size_t lsi_desc(const uint8_t *log, size_t off, uint64_t lba,
                       uint32_t nlb, const char *what)
{
    const uint8_t *r = log + off;
    uint64_t got = le64_at(r, offsetof(H3100LbaRangeDesc, rslba));
    uint32_t rnlb = le32_at(r, offsetof(H3100LbaRangeDesc, rnlb));

    ck_assert_msg(got == lba && rnlb == nlb - 1, "%s: descriptor at %zu is "
                  "RSLBA %" PRIu64 " RNLB %u, expected %" PRIu64 " %u", what,
                  off, got, rnlb, lba, nlb - 1);
    return off + LSI_DESC;
}

static uint16_t write_uncor(Dev *d, uint32_t nsid, uint64_t slba,
                            uint32_t nlb)
{
    return nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, nsid, slba, nlb, 0, 0,
                 NULL);
}

/*
 * Get LBA Status (tracked) of all of @nsid says what log 0Eh's element at
 * @off says: the same ranges.
 */
static void lsi_agrees(Dev *d, const uint8_t *log, size_t off)
{
    uint32_t nsid = le32_at(log, off), nrd = le32_at(log, off + 4);
    uint64_t a = nh_alloc(d->h, 4096, 4096);
    uint8_t b[4096];
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, ADM_GET_LBA_STATUS, nsid);
    nh_set_prps(d->h, &sqe, a, sizeof(b));
    sqe.cdw12 = sizeof(b) / 4 - 1;
    sqe.cdw13 = (uint32_t)GLS_TRACKED << 24;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), 0, "Get LBA Status of namespace %u", nsid);
    qt_memread(d->h->qt, a, b, sizeof(b));
    ck_assert_msg(le32_at(b, 0) == nrd, "namespace %u: Get LBA Status has "
                  "%u descriptors, log 0Eh %u", nsid, le32_at(b, 0), nrd);
    for (uint32_t i = 0; i < nrd; i++) {
        const uint8_t *r = log + off + LSI_ELEM + i * LSI_DESC;

        ck_assert_msg(le64_at(b, 8 + 16 * i) == le64_at(r, 0) &&
                      le32_at(b, 16 + 16 * i) == le32_at(r, 8) + 1,
                      "namespace %u, range %u: Get LBA Status %" PRIu64
                      " + %u, log 0Eh %" PRIu64 " + %u", nsid, i,
                      le64_at(b, 8 + 16 * i), le32_at(b, 16 + 16 * i),
                      le64_at(r, 0), le32_at(r, 8) + 1);
    }
}

/*
 * Log 0Eh reports what Write Uncorrectable made unreadable, per
 * namespace in its own LBAs (512-byte and 4 KiB), as Get LBA Status
 * does; a rewrite takes a range out, a namespace with none left goes;
 * LSGC counts the reads that found new LBAs; offsets cut the page.
 */
START_TEST(test_ns_lba_status_log)
{
    Dev *d = dev_open();
    uint64_t buf = nh_alloc(d->h, 2 * 4096, 4096);
    uint8_t log[4096], part[4096];
    uint32_t a, b;
    size_t off;

    ck_status(ns_delete(d, 1), 0, "delete namespace 1");
    a = ns_create(d, 64 * MIB, 0);
    b = ns_create(d, 32 * MIB, 1);
    ck_status(ns_attach(d, a, true), 0, "attach %u", a);
    ck_status(ns_attach(d, b, true), 0, "attach %u", b);
    ck_status(nh_get_log(d->h, NVME_LOG_LBA_STATUS, NSID_ALL, log, 4096, 0),
              0, "log 0Eh, nothing tracked");
    lsi_header(log, LSI_HDR, 0, 0, 0, "clean drive");

    ck_status(write_uncor(d, a, 1000, 10), 0, "uncorrectable %u:1000+10", a);
    ck_status(write_uncor(d, a, 100, 4), 0, "uncorrectable %u:100+4", a);
    ck_status(write_uncor(d, b, 20, 2), 0, "uncorrectable %u:20+2", b);
    ck_status(write_uncor(d, b, 7, 1), 0, "uncorrectable %u:7", b);
    ck_status(nh_get_log(d->h, NVME_LOG_LBA_STATUS, NSID_ALL, log, 4096, 0),
              0, "log 0Eh");
    lsi_header(log, LSI_HDR + 2 * LSI_ELEM + 4 * LSI_DESC, 2, 17, 1,
               "four ranges in two namespaces");
    off = lsi_element(log, LSI_HDR, a, 2, "four ranges");
    off = lsi_desc(log, off, 100, 4, "four ranges");
    off = lsi_desc(log, off, 1000, 10, "four ranges");
    lsi_agrees(d, log, LSI_HDR);
    lsi_agrees(d, log, off);
    off = lsi_element(log, off, b, 2, "four ranges");
    off = lsi_desc(log, off, 7, 1, "four ranges");
    off = lsi_desc(log, off, 20, 2, "four ranges");

    /* at an offset: the same bytes, zeroes past the page, none beyond */
    ck_status(nh_get_log(d->h, NVME_LOG_LBA_STATUS, NSID_ALL, part, 64, 48),
              0, "log 0Eh at offset 48");
    ck_assert_msg(!memcmp(part, log + 48, 64), "log 0Eh at offset 48 is not "
                  "the page's bytes 48-111");
    ck_status(nh_get_log(d->h, NVME_LOG_LBA_STATUS, NSID_ALL, part, 32, 96),
              0, "log 0Eh at offset 96");
    lsi_desc(part, 0, 20, 2, "offset 96");
    ck_assert_msg(le64_at(part, 16) == 0 && le64_at(part, 24) == 0,
                  "bytes past the page are not zero");
    ck_status(nh_get_log(d->h, NVME_LOG_LBA_STATUS, NSID_ALL, part, 16, off),
              NVME_SC_INVALID_FIELD, "log 0Eh at its length");

    /* already tracked: no new generation */
    ck_status(write_uncor(d, a, 101, 2), 0, "uncorrectable %u:101+2", a);
    fill(d, buf, 0x5a, 10 * 512);
    ck_status(ns_io(d, NVME_CMD_WRITE, a, 1000, 10, 512, buf), 0,
              "rewrite %u:1000+10", a);
    ck_status(nh_get_log(d->h, NVME_LOG_LBA_STATUS, NSID_ALL, log, 4096, 0),
              0, "log 0Eh after a rewrite");
    lsi_header(log, LSI_HDR + 2 * LSI_ELEM + 3 * LSI_DESC, 2, 7, 1,
               "after the rewrite");
    off = lsi_element(log, LSI_HDR, a, 1, "after the rewrite");
    off = lsi_desc(log, off, 100, 4, "after the rewrite");
    lsi_agrees(d, log, LSI_HDR);
    lsi_element(log, off, b, 2, "after the rewrite");

    /* a namespace with nothing left has no element */
    fill(d, buf, 0x5a, 2 * 4096);
    ck_status(ns_io(d, NVME_CMD_WRITE, b, 7, 1, 4096, buf), 0,
              "rewrite %u:7", b);
    ck_status(ns_io(d, NVME_CMD_WRITE, b, 20, 2, 4096, buf), 0,
              "rewrite %u:20+2", b);
    ck_status(write_uncor(d, a, 5, 1), 0, "uncorrectable %u:5", a);
    ck_status(write_uncor(d, a, 6, 1), 0, "uncorrectable %u:6", a);
    ck_status(nh_get_log(d->h, NVME_LOG_LBA_STATUS, NSID_ALL, log, 4096, 0),
              0, "log 0Eh, one namespace");
    lsi_header(log, LSI_HDR + LSI_ELEM + 2 * LSI_DESC, 1, 6, 2,
               "new LBAs in one namespace");
    off = lsi_element(log, LSI_HDR, a, 2, "one namespace");
    off = lsi_desc(log, off, 5, 2, "one namespace");
    lsi_desc(log, off, 100, 4, "one namespace");
    lsi_agrees(d, log, LSI_HDR);
    dev_close(d);
}
END_TEST

/*
 * Delete erases the extent: a namespace made over it reads zeroes; Format
 * of one namespace erases it and gives it its format, the other's data
 * stays.
 */
START_TEST(test_ns_delete_format_erase)
{
    Dev *d = dev_open();
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    uint32_t a, b, c;
    uint8_t id[4096];
    NvmeSqe sqe;
    NvmeCqe cqe;

    ck_status(ns_delete(d, 1), 0, "delete namespace 1");
    a = ns_create(d, 16 * MIB, 0);
    b = ns_create(d, 16 * MIB, 0);
    ck_status(ns_attach(d, a, true), 0, "attach a");
    ck_status(ns_attach(d, b, true), 0, "attach b");
    fill(d, buf, 0x3c, 4096);
    ck_status(ns_io(d, NVME_CMD_WRITE, a, 8, 8, 512, buf), 0, "write a");
    ck_status(ns_io(d, NVME_CMD_WRITE, b, 8, 8, 512, buf), 0, "write b");

    nh_sqe_init(&sqe, 0x80, b);
    sqe.cdw10 = 1;                                 /* LBA format 1 */
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), 0, "format b to 4 KiB");
    ck_status(nh_identify(d->h, 0, b, id), 0, "identify b");
    ck_assert_uint_eq(id[IDN_FLBAS] & 0xf, 1);
    ck_assert_uint_eq(le64_at(id, IDN_NSZE), 16 * MIB / 4096);
    ck_status(nh_identify(d->h, 0, a, id), 0, "identify a");
    ck_assert_uint_eq(id[IDN_FLBAS] & 0xf, 0);
    ck_assert_msg(backing_is(d, 16 * MIB + 4096, 0, 4096), "b not erased");
    ck_assert_msg(backing_is(d, 4096, 0x3c, 4096), "a's data went");
    nh_sqe_init(&sqe, 0x80, 5);
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_INVALID_NSID, "format NSID 5");

    /* FFFFFFFFh formats the attached namespaces only (FNA 0) */
    ck_status(ns_attach(d, b, false), 0, "detach b");
    fill(d, buf, 0x4d, 4096);
    ck_status(ns_io(d, NVME_CMD_WRITE, a, 8, 8, 512, buf), 0, "write a");
    nh_sqe_init(&sqe, 0x80, NSID_ALL);
    sqe.cdw10 = 1;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), 0, "format FFFFFFFFh to 4 KiB");
    ck_assert_msg(backing_is(d, 4096, 0, 4096), "a (attached) not erased");
    ck_status(nh_identify(d->h, 0, a, id), 0, "identify a");
    ck_assert_uint_eq(id[IDN_FLBAS] & 0xf, 1);
    ck_status(ns_attach(d, b, true), 0, "attach b");
    ck_status(ns_io(d, NVME_CMD_WRITE, b, 2, 1, 4096, buf), 0, "write b");
    ck_status(ns_attach(d, b, false), 0, "detach b");
    nh_sqe_init(&sqe, 0x80, NSID_ALL);
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    ck_status(nh_status(&cqe), 0, "format FFFFFFFFh to 512 B");
    ck_assert_msg(backing_is(d, 16 * MIB + 8192, 0x4d, 4096),
                  "b (detached) was erased");
    ck_status(ns_attach(d, b, true), 0, "attach b again");
    ck_status(nh_identify(d->h, 0, b, id), 0, "identify b");
    ck_assert_uint_eq(id[IDN_FLBAS] & 0xf, 1);      /* kept its own */
    ck_status(nh_identify(d->h, 0, a, id), 0, "identify a");
    ck_assert_uint_eq(id[IDN_FLBAS] & 0xf, 0);

    ck_status(ns_delete(d, a), 0, "delete a");
    ck_assert_msg(backing_is(d, 4096, 0, 4096), "a's extent not erased");
    c = ns_create(d, 16 * MIB, 0);
    ck_assert_uint_eq(c, a);
    ck_status(ns_attach(d, c, true), 0, "attach c");
    ck_status(ns_io(d, NVME_CMD_READ, c, 8, 8, 512, buf), 0, "read c");
    {
        uint8_t got[4096];

        qt_memread(d->qt, buf, got, sizeof(got));
        for (unsigned i = 0; i < sizeof(got); i++) {
            ck_assert_uint_eq(got[i], 0);
        }
    }
    /* a new namespace has identifiers of its own */
    {
        uint8_t d1[4096], d2[4096];

        ck_status(nh_identify(d->h, 3, c, d1), 0, "descriptors of c");
        ck_status(nh_identify(d->h, 3, b, d2), 0, "descriptors of b");
        ck_assert_msg(memcmp(d1 + 4, d2 + 4, 8), "c and b share an EUI-64");
    }
    dev_close(d);
}
END_TEST

/*
 * The device on a raw image @img whose writes (zeroing included) are
 * throttled to 50 a second, so an erase or a deallocation stays under
 * way for a while of host time; virtual time passes much faster, so the
 * host driver waits NS_THROTTLED_WAIT_NS for a command.
 */
static Dev *ns_open_throttled(const char *img)
{
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw,"
                                             "throttling.iops-write=50", img);
    Dev *d = dev_open_drive(drive, "", "");

    d->h->cmd_timeout_ns = NS_THROTTLED_WAIT_NS;
    return d;
}

/*
 * A whole-drive Format waits for a Dataset Management that is still
 * deallocating: each range is block I/O of its own, checked in the
 * 512-byte LBAs it was sent in.  The Format took only commands with a
 * block request out for I/O in flight, started at once and switched the
 * namespace to 4 KiB LBAs, and the DSM's next ranges then landed 8 times
 * further into the drive, past its end.
 */
START_TEST(test_ns_format_waits_for_dsm)
{
    g_autofree char *img = qt_backing_file("ns-fd.img", DEV_NS_BYTES, "raw");
    Dev *d = ns_open_throttled(img);
    uint64_t data = nh_alloc(d->h, 4096, 4096);
    uint64_t list = nh_alloc(d->h, 4096, 4096);
    uint8_t ranges[8 * 16] = { 0 };
    uint8_t id[4096];
    NvmeSqe dsm, fmt;
    NvmeCqe cqe;
    uint16_t dcid, fcid;
    uint32_t a;

    ck_status(ns_delete(d, 1), 0, "delete namespace 1");
    a = ns_create(d, 128 * MIB, 0);
    ck_status(ns_attach(d, a, true), 0, "attach %u", a);
    fill(d, data, 0x6e, 4096);
    for (unsigned i = 0; i < 8; i++) {
        uint64_t slba = i * 16 * MIB / 512;   /* x 4096: i x 128 MiB */
        uint32_t nlb = 8;

        ck_status(ns_io(d, NVME_CMD_WRITE, a, slba, nlb, 512, data), 0,
                  "write range %u", i);
        memcpy(ranges + 16 * i + 4, &nlb, 4);
        memcpy(ranges + 16 * i + 8, &slba, 8);
    }
    qt_memwrite(d->qt, list, ranges, sizeof(ranges));
    nh_sqe_init(&dsm, NVME_CMD_DSM, a);
    nh_set_prps(d->h, &dsm, list, sizeof(ranges));
    dsm.cdw10 = 8 - 1;
    dsm.cdw11 = 1 << 2;                         /* deallocate */
    nh_sqe_init(&fmt, 0x80, NSID_ALL);
    fmt.cdw10 = 1;                              /* 4 KiB LBAs */
    dcid = nh_sq_put(d->h, d->q, &dsm, false);
    nh_sq_ring(d->h, d->q);
    fcid = nh_sq_put(d->h, d->h->admin, &fmt, false);
    nh_sq_ring(d->h, d->h->admin);
    ck_assert_msg(nh_wait_cid(d->h, d->q, dcid, &cqe, d->h->cmd_timeout_ns),
                  "no completion of the DSM");
    ck_status(nh_status(&cqe), 0, "DSM beside a Format");
    ck_assert_msg(nh_wait_cid(d->h, d->h->admin, fcid, &cqe,
                              d->h->cmd_timeout_ns),
                  "no completion of the Format");
    ck_status(nh_status(&cqe), 0, "Format FFFFFFFFh beside a DSM");
    ck_status(nh_identify(d->h, 0, a, id), 0, "identify %u", a);
    ck_assert_uint_eq(id[IDN_FLBAS] & 0xf, 1);
    ck_status(ns_io(d, NVME_CMD_WRITE, a, 1, 1, 4096, data), 0,
              "write after the Format");
    dev_close(d);
    unlink(img);
}
END_TEST

/*
 * A reset while a Format of one namespace is erasing it: the namespace
 * keeps its old format.  Given the new one, a namespace of 1 MiB + 512 B
 * would have shrunk to 1 MiB of 4 KiB LBAs, its delete would have erased
 * only that, and its last LBA, not erased yet, would have gone to the
 * next namespace created there.  The erase is slowed by a throttled
 * image with 128 data extents before that LBA.
 */
START_TEST(test_ns_format_reset_keeps_format)
{
    g_autofree char *img = qt_backing_file("ns-fr.img", DEV_NS_BYTES, "raw");
    Dev *d = ns_open_throttled(img);
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    uint8_t blk[4096], id[4096];
    uint32_t a, b;
    NvmeSqe sqe;
    FILE *f;

    ck_status(ns_delete(d, 1), 0, "delete namespace 1");
    ck_status(ns_create_full(d, 2049, 2049, 0, 0, 0, &a), 0,
              "create 1 MiB + 512 B");
    ck_status(ns_attach(d, a, true), 0, "attach %u", a);
    fill(d, buf, 0x77, 512);
    ck_status(ns_io(d, NVME_CMD_WRITE, a, 2048, 1, 512, buf), 0,
              "write the last LBA");
    /* data extents the erase zeroes one by one, under the device's feet */
    f = fopen(img, "r+");
    memset(blk, 0x77, sizeof(blk));
    for (unsigned i = 0; i < 128; i++) {
        ck_assert(fseek(f, (long)i * 8192, SEEK_SET) == 0);
        ck_assert(fwrite(blk, sizeof(blk), 1, f) == 1);
    }
    fclose(f);
    nh_sqe_init(&sqe, 0x80, a);
    sqe.cdw10 = 1;                              /* to 4 KiB LBAs */
    nh_submit(d->h, d->h->admin, &sqe);
    qt_clock_step(d->qt, 1000000);
    g_usleep(100000);                           /* a few zeroing steps */
    nh_disable(d->h);
    dev_reprobe(d);
    d->h->cmd_timeout_ns = NS_THROTTLED_WAIT_NS;
    ck_status(nh_identify(d->h, 0, a, id), 0, "identify %u", a);
    ck_assert_uint_eq(id[IDN_FLBAS] & 0xf, 0);
    ck_assert_uint_eq(le64_at(id, IDN_NSZE), 2049);

    ck_status(ns_delete(d, a), 0, "delete %u", a);
    b = ns_create(d, 2 * MIB, 0);
    ck_status(ns_attach(d, b, true), 0, "attach %u", b);
    ck_status(ns_io(d, NVME_CMD_READ, b, 2048, 1, 512, buf), 0,
              "read LBA 2048 of the new namespace");
    qt_memread(d->qt, buf, blk, 512);
    for (unsigned i = 0; i < 512; i++) {
        ck_assert_msg(blk[i] == 0, "the new namespace reads the old one's "
                      "last LBA (byte %u: 0x%02x)", i, blk[i]);
    }
    dev_close(d);
    unlink(img);
}
END_TEST

/* The table survives a restart through state=, formats included. */
START_TEST(test_ns_state_restart)
{
    g_autofree char *path = g_strdup_printf("%s/ns.h3s", qt_tmpdir());
    g_autofree char *opts = g_strdup_printf(",state=%s", path);
    uint32_t ids[4], a, b;
    uint8_t id[4096], eui[2][8];
    Dev *d;

    unlink(path);
    d = dev_open_full(NULL, opts, "");
    ck_status(ns_delete(d, 1), 0, "delete namespace 1");
    a = ns_create(d, 8 * MIB, 1);
    b = ns_create(d, 24 * MIB, 0);
    ck_status(ns_attach(d, b, true), 0, "attach b");
    ck_status(nh_identify(d->h, 3, b, id), 0, "descriptors of b");
    memcpy(eui[0], id + 4, 8);
    dev_close(d);

    d = dev_launch(NULL, opts, "");
    nh_enable(d->h, 32);
    d->q = nh_create_ioq(d->h, 1, 64, -1);
    ck_assert_uint_eq(ns_list(d, 0x10, 0, ids), 2);
    ck_assert_uint_eq(ns_list(d, 0x02, 0, ids), 1);
    ck_assert_uint_eq(ids[0], b);
    ck_status(nh_identify(d->h, 0x11, a, id), 0, "CNS 11h of a");
    ck_assert_uint_eq(le64_at(id, IDN_NSZE), 8 * MIB / 4096);
    ck_assert_uint_eq(id[IDN_FLBAS] & 0xf, 1);
    ck_assert_uint_eq(unvmcap(d), DEV_NS_BYTES - 32 * MIB);
    ck_status(nh_identify(d->h, 3, b, id), 0, "descriptors of b");
    memcpy(eui[1], id + 4, 8);
    ck_assert_msg(!memcmp(eui[0], eui[1], 8), "b's EUI-64 changed");
    dev_close(d);
    unlink(path);
}
END_TEST

/* @nsid's NGUID, from its descriptor list (EUI-64 first, then the NGUID) */
static void ns_nguid(Dev *d, uint32_t nsid, uint8_t *nguid)
{
    uint8_t list[4096];

    ck_status(nh_identify(d->h, 3, nsid, list), 0, "descriptors of %u", nsid);
    ck_assert_uint_eq(list[12], 2);
    ck_assert_uint_eq(list[13], 16);
    memcpy(nguid, list + 16, 16);
}

/*
 * A namespace's EUI-64 and NGUID carry its creation number.  All 32 bits
 * of it reach the NGUID (creation 2^24 + 1 is not creation 1 again), and
 * a count that wrapped (a file saved after 2^32 creates) is saved in a
 * file that loads again, with every namespace's IDs.
 */
START_TEST(test_ns_creation_number_wraps)
{
    g_autofree char *path = g_strdup_printf("%s/ns-gen.h3s", qt_tmpdir());
    g_autofree char *opts = g_strdup_printf(",state=%s", path);
    g_autofree uint8_t *buf = NULL;
    uint8_t shipped[16], first[16], a[16], b[16], now[16], *tail;
    uint32_t v;
    gsize len;
    Dev *d;

    unlink(path);
    d = dev_open_full(NULL, opts, "");
    ns_nguid(d, 1, shipped);
    ck_status(ns_delete(d, 1), 0, "delete namespace 1");
    ck_assert_uint_eq(ns_create(d, 8 * MIB, 0), 1);    /* creation 1 */
    ck_status(ns_attach(d, 1, true), 0, "attach 1");
    ns_nguid(d, 1, first);
    ck_assert_msg(memcmp(first, shipped, 16), "a new namespace 1 kept the "
                  "shipped NGUID");
    dev_close(d);

    /* as if 2^32 - 1 had been created, NSID 1 the (2^24 + 1)th */
    ck_assert(g_file_get_contents(path, (gchar **)&buf, &len, NULL));
    ck_assert_uint_ge(len, STATE_HDR_BYTES + 40);
    tail = buf + len - 40;              /* the table: 8 bytes, one entry */
    ck_assert_uint_eq(le32_at(tail, 4), 1);
    ck_assert_uint_eq(le32_at(tail, 8), 1);
    ck_assert_uint_eq(le32_at(tail, 16), 1);
    v = UINT32_MAX;
    memcpy(tail, &v, 4);
    v = (1u << 24) + 1;
    memcpy(tail + 16, &v, 4);
    state_header_mend(buf, len);
    ck_assert(g_file_set_contents(path, (gchar *)buf, len, NULL));

    d = dev_launch(NULL, opts, "");
    nh_enable(d->h, 32);
    ns_nguid(d, 1, a);
    ck_assert_msg(memcmp(a, first, 16), "creation 2^24 + 1 has creation "
                  "1's NGUID");
    ck_assert_uint_eq(ns_create(d, 8 * MIB, 0), 2);    /* the count wraps */
    ck_status(ns_attach(d, 2, true), 0, "attach 2");
    ns_nguid(d, 2, b);
    ck_assert(memcmp(b, a, 16) && memcmp(b, shipped, 16));
    dev_close(d);

    d = dev_launch(NULL, opts, "");
    nh_enable(d->h, 32);
    ck_assert_uint_eq(ns_list(d, 0x02, 0, NULL), 2);
    ns_nguid(d, 1, now);
    ck_assert_msg(!memcmp(now, a, 16), "namespace 1's NGUID changed");
    ns_nguid(d, 2, now);
    ck_assert_msg(!memcmp(now, b, 16), "namespace 2's NGUID changed");
    dev_close(d);
    unlink(path);
}
END_TEST

/*
 * A delete cut short by QEMU's exit goes on at the next start (state=):
 * the namespace stays gone and its extent is erased before it is reused.
 * The backend has 64 data extents and zeroes 50 writes a second, so the
 * erase is still under way when QEMU quits.
 */
START_TEST(test_ns_delete_survives_restart)
{
    g_autofree char *img = qt_backing_file("ns-del.img", DEV_NS_BYTES, "raw");
    g_autofree char *path = g_strdup_printf("%s/ns-del.h3s", qt_tmpdir());
    g_autofree char *opts = g_strdup_printf(",state=%s", path);
    g_autofree char *slow = g_strdup_printf("file=%s,format=raw,"
                                            "throttling.iops-write=50", img);
    g_autofree char *fast = g_strdup_printf("file=%s,format=raw", img);
    uint8_t blk[4096];
    FILE *f = fopen(img, "r+");
    NvmeSqe sqe;
    Dev *d;
    int i;

    memset(blk, 0x6e, sizeof(blk));
    for (unsigned e = 0; e < 64; e++) {
        ck_assert(fseek(f, (long)e << 22, SEEK_SET) == 0);
        ck_assert(fwrite(blk, sizeof(blk), 1, f) == 1);
    }
    fclose(f);
    unlink(path);
    d = dev_open_drive(slow, opts, "");
    nh_sqe_init(&sqe, ADM_NS_MGMT, 1);
    sqe.cdw10 = 1;
    nh_submit(d->h, d->h->admin, &sqe);
    qt_clock_step(d->qt, 1000000);
    g_usleep(200000);                   /* a few extents zeroed */
    ck_assert_uint_eq(ns_list(d, 0x10, 0, NULL), 0);
    dev_close(d);

    d = dev_open_drive(fast, opts, "");
    ck_assert_uint_eq(ns_list(d, 0x10, 0, NULL), 0);
    for (i = 0; i < 100 && unvmcap(d) != DEV_NS_BYTES; i++) {
        qt_clock_step(d->qt, 10000000);
    }
    ck_assert_msg(i < 100, "the erase did not go on: UNVMCAP %llu",
                  (unsigned long long)unvmcap(d));
    f = fopen(img, "r");
    for (unsigned e = 0; e < 64; e++) {
        ck_assert(fseek(f, (long)e << 22, SEEK_SET) == 0);
        ck_assert(fread(blk, sizeof(blk), 1, f) == 1);
        for (unsigned b = 0; b < sizeof(blk); b++) {
            ck_assert_msg(!blk[b], "extent %u not erased", e);
        }
    }
    fclose(f);
    ck_assert_uint_eq(ns_create(d, DEV_NS_BYTES, 0), 1);
    dev_close(d);
    unlink(path);
    unlink(img);
}
END_TEST

/*
 * What is not allocated is spare: the same random overwrite of 48 MiB
 * costs less NAND on a drive where only those 48 MiB are allocated than
 * where the namespace spans the whole (full) drive.
 */
#define OP_PARAMS   "user_bytes=112M,channels=1,dies_per_channel=1," \
                    "pages_per_block=24,blocks_per_plane=192," \
                    "spare_blocks_per_plane=4,grown_bad_ppm=0"

static uint64_t op_waf_milli(bool small_ns)
{
    g_autofree char *devopts = g_strdup(",timing=off");
    Dev *d = dev_open_full(OP_PARAMS, devopts, "");
    uint64_t buf = nh_alloc(d->h, 65536, 4096);
    uint64_t span = 48 * MIB / 512, nsid = 1, seed = 1;
    H3100VendorLog v;

    fill(d, buf, 0x11, 65536);
    if (small_ns) {
        ck_status(ns_delete(d, 1), 0, "delete namespace 1");
        nsid = ns_create(d, 48 * MIB, 0);
        ck_status(ns_attach(d, nsid, true), 0, "attach");
    } else {
        /* the whole namespace written once: nothing is spare */
        for (uint64_t lba = 0; lba < 112 * MIB / 512; lba += 128) {
            ck_status(ns_io(d, NVME_CMD_WRITE, 1, lba, 128, 512, buf), 0,
                      "fill");
        }
    }
    for (uint64_t lba = 0; lba < span; lba += 128) {
        ck_status(ns_io(d, NVME_CMD_WRITE, nsid, lba, 128, 512, buf), 0,
                  "sequential pass");
    }
    ck_status(nh_get_log(d->h, 0xd0, NSID_ALL, &v, sizeof(v), 0), 0, "D0h");
    {
        uint64_t host0 = v.host_write_bytes, nand0 = v.nand_write_bytes;

        for (unsigned i = 0; i < 4 * 48 * MIB / 4096; i += 32) {
            NvmeSqe sqes[32];

            for (unsigned j = 0; j < 32; j++) {
                seed = seed * 6364136223846793005ull +
                       1442695040888963407ull;
                nh_sqe_init(&sqes[j], NVME_CMD_WRITE, nsid);
                nh_set_prps(d->h, &sqes[j], buf, 4096);
                sqes[j].cdw10 = (seed >> 33) % (span / 8) * 8;
                sqes[j].cdw12 = 8 - 1;
            }
            nh_cmd_batch(d->h, d->q, sqes, 32);
        }
        ck_status(nh_get_log(d->h, 0xd0, NSID_ALL, &v, sizeof(v), 0), 0,
                  "D0h");
        dev_close(d);
        return (v.nand_write_bytes - nand0) * 1000 /
               (v.host_write_bytes - host0);
    }
}

START_TEST(test_ns_overprovisioning)
{
    uint64_t full = op_waf_milli(false), part = op_waf_milli(true);

    fprintf(stderr, "random overwrite of 48 MiB: WAF x1000 %llu with the "
            "112 MiB namespace full, %llu with a 48 MiB namespace only\n",
            (unsigned long long)full, (unsigned long long)part);
    ck_assert_msg(part * 100 < full * 90, "WAF %llu vs %llu: the space no "
                  "namespace holds is not spare", (unsigned long long)part,
                  (unsigned long long)full);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("namespaces");
    TCase *tc = dev_tcase(s, "management");

    tcase_add_test(tc, test_ns_identify);
    tcase_add_test(tc, test_ns_create_attach_io);
    tcase_add_test(tc, test_ns_errors);
    tcase_add_test(tc, test_ns_changed_event);
    tcase_add_test(tc, test_ns_lba_status_log);
    tcase_add_test(tc, test_ns_delete_format_erase);
    tcase_add_test(tc, test_ns_format_waits_for_dsm);
    tcase_add_test(tc, test_ns_format_reset_keeps_format);
    tcase_add_test(tc, test_ns_state_restart);
    tcase_add_test(tc, test_ns_delete_survives_restart);
    tcase_add_test(tc, test_ns_creation_number_wraps);
    tc = dev_tcase(s, "spare");
    /*
     * Tens of thousands of writes through the qtest socket: 19-34 s on an
     * idle host, but some runs go 6x slower (see tests/device/README.md).
     */
    tcase_set_timeout(tc, 540);
    tcase_add_test(tc, test_ns_overprovisioning);
    return dev_main(s);
}
