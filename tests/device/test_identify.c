/*
 * Identity of the drive: PCI functions, registers, Identify data.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include <unistd.h>

#include "dev.h"

static void check_ascii_field(const uint8_t *id, size_t off, size_t len,
                              const char *what, const char *want)
{
    char s[64] = "";
    size_t n = len;

    memcpy(s, id + off, len);
    for (size_t i = 0; i < len; i++) {
        ck_assert_msg(s[i] >= 0x20 && s[i] < 0x7f, "%s has a non-ASCII "
                      "byte 0x%02x at %zu", what, (uint8_t)s[i], i);
    }
    while (n && s[n - 1] == ' ') {
        n--;
    }
    s[n] = 0;
    ck_assert_msg(n > 0, "%s is blank", what);
    if (want) {
        ck_assert_msg(strcmp(s, want) == 0, "%s is '%s', expected '%s' "
                      "(space padded)", what, s, want);
    }
}

static int find_cap(QTest *qt, int devfn, uint8_t id)
{
    int ptr = qt_pci_cfg_readb(qt, devfn, 0x34) & 0xfc;

    for (int n = 0; ptr && n < 48; n++) {
        if (qt_pci_cfg_readb(qt, devfn, ptr) == id) {
            return ptr;
        }
        ptr = qt_pci_cfg_readb(qt, devfn, ptr + 1) & 0xfc;
    }
    return -1;
}

START_TEST(test_pci_identity)
{
    Dev *d = dev_launch(NULL, "", "");
    QTest *qt = d->qt;
    int devfn = d->h->devfn;
    uint32_t classrev = qt_pci_cfg_readl(qt, devfn, 0x08);
    int pcie, msix;

    ck_assert_uint_eq(qt_pci_cfg_readw(qt, devfn, 0x00), 0x1e3b);
    ck_assert_uint_eq(qt_pci_cfg_readw(qt, devfn, 0x02), 0x1098);
    ck_assert_msg((classrev >> 8) == 0x010802, "class code 0x%06x, "
                  "expected 0x010802", classrev >> 8);
    ck_assert_uint_eq(qt_pci_cfg_readw(qt, devfn, 0x2c), 0x1e3b);
    ck_assert_msg(qt_pci_cfg_readw(qt, devfn, 0x2e) == 0x0014,
                  "subsystem 0x%04x, expected 0x0014 (H3100 3.2 TB U.2)",
                  qt_pci_cfg_readw(qt, devfn, 0x2e));
    pcie = find_cap(qt, devfn, 0x10);
    ck_assert_msg(pcie > 0, "no PCI Express capability");
    {
        /* an endpoint; on q35's root bus QEMU makes it root-complex
         * integrated (type 9) */
        unsigned type = (qt_pci_cfg_readw(qt, devfn, pcie + 2) >> 4) & 0xf;

        ck_assert_msg(type == 0 || type == 9, "PCIe device/port type %u "
                      "is not an endpoint", type);
    }
    msix = find_cap(qt, devfn, 0x11);
    ck_assert_msg(msix > 0, "no MSI-X capability");
    ck_assert_msg((qt_pci_cfg_readw(qt, devfn, msix + 2) & 0x7ff) + 1 >= 129,
                  "%u MSI-X vectors: fewer than 1 admin + 128 I/O queues",
                  (qt_pci_cfg_readw(qt, devfn, msix + 2) & 0x7ff) + 1);
    dev_close(d);
}
END_TEST

static const struct {
    const char *opts;
    const char *profile;
    bool hhhl;
} subsys_cases[] = {
    { ",model=h3100,capacity=0.8T,form-factor=u2", "h3100-0.8t", false },
    { ",model=h3100,capacity=1.6T,form-factor=hhhl", "h3100-1.6t", true },
    { ",model=h3100,capacity=6.4T,form-factor=hhhl", "h3100-6.4t", true },
    { ",model=h3200,capacity=7.68T", "h3200-7.68t", false },
    { ",model=h3200,capacity=0.96T,form-factor=hhhl", "h3200-0.96t", true },
};

START_TEST(test_subsystem_by_profile)
{
    H3100Config cfg;
    Dev *d = dev_launch(NULL, subsys_cases[_i].opts, "");
    uint16_t want, got;

    ck_assert(h3100_profile_load(&cfg, subsys_cases[_i].profile, NULL));
    want = subsys_cases[_i].hhhl ? cfg.subsystem_hhhl : cfg.subsystem_u2;
    got = qt_pci_cfg_readw(d->qt, d->h->devfn, 0x2e);
    ck_assert_msg(got == want, "%s: subsystem 0x%04x, expected 0x%04x",
                  subsys_cases[_i].opts, got, want);
    ck_assert_uint_eq(qt_pci_cfg_readw(d->qt, d->h->devfn, 0x2c), 0x1e3b);
    dev_close(d);
}
END_TEST

START_TEST(test_registers_at_reset)
{
    Dev *d = dev_launch(NULL, "", "");
    uint64_t cap = nh_rd64(d->h, NVME_REG_CAP);

    ck_assert_msg(NVME_CAP_MQES(cap) >= 255, "CAP.MQES %u",
                  NVME_CAP_MQES(cap));
    ck_assert_msg(NVME_CAP_CQR(cap) == 1, "CAP.CQR must be 1");
    ck_assert_msg(NVME_CAP_TO(cap) > 0, "CAP.TO is 0");
    ck_assert_msg(NVME_CAP_DSTRD(cap) == 0, "CAP.DSTRD %u",
                  NVME_CAP_DSTRD(cap));
    ck_assert_msg(NVME_CAP_CSS(cap) & 1, "CAP.CSS lacks the NVM set");
    ck_assert_msg(NVME_CAP_MPSMIN(cap) == 0, "CAP.MPSMIN %u (4 KiB pages "
                  "expected)", NVME_CAP_MPSMIN(cap));
    ck_assert_msg(NVME_CAP_MPSMAX(cap) >= NVME_CAP_MPSMIN(cap), "MPSMAX");
    ck_assert_msg(nh_rd32(d->h, NVME_REG_VS) == 0x00010300,
                  "VS 0x%08x, expected 1.3.0", nh_rd32(d->h, NVME_REG_VS));
    ck_assert_uint_eq(nh_rd32(d->h, NVME_REG_CC), 0);
    ck_assert_uint_eq(nh_rd32(d->h, NVME_REG_CSTS) & NVME_CSTS_RDY, 0);
    ck_assert_uint_eq(nh_rd32(d->h, NVME_REG_AQA), 0);
    dev_close(d);
}
END_TEST

START_TEST(test_enable_disable)
{
    Dev *d = dev_launch(NULL, "", "");

    nh_enable(d->h, 16);
    ck_assert_uint_eq(nh_rd32(d->h, NVME_REG_CSTS) & NVME_CSTS_RDY, 1);
    nh_disable(d->h);
    nh_enable(d->h, 2);
    nh_disable(d->h);
    dev_close(d);
}
END_TEST

START_TEST(test_identify_controller)
{
    Dev *d = dev_open();
    uint8_t id[4096];
    H3100Config cfg;
    uint8_t npss;
    uint16_t mp;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify Controller");
    ck_assert_uint_eq(le16_at(id, 0), 0x1e3b);        /* VID */
    ck_assert_uint_eq(le16_at(id, 2), 0x1e3b);        /* SSVID */
    check_ascii_field(id, 4, 20, "serial number", NULL);
    check_ascii_field(id, 24, 40, "model number", NULL);
    ck_assert_msg(memcmp(id + 24, "DAPUSTOR", 8) == 0,
                  "model number '%.40s' does not start with DAPUSTOR",
                  (char *)id + 24);
    check_ascii_field(id, 64, 8, "firmware revision", NULL);
    ck_assert_msg(le32_at(id, 80) == 0x00010300, "VER 0x%08x",
                  le32_at(id, 80));
    ck_assert_msg(id[77] >= 1, "MDTS is 0 (no limit)");
    ck_assert_msg(id[259] >= 3, "AERL %u: fewer than 4 AERs", id[259]);
    /* OACS: format, firmware, self-test, doorbell buffer config */
    ck_assert_msg(le16_at(id, 256) & (1 << 1), "OACS lacks Format NVM");
    ck_assert_msg(le16_at(id, 256) & (1 << 2), "OACS lacks Firmware");
    ck_assert_msg(le16_at(id, 256) & (1 << 4), "OACS lacks Self-test");
    ck_assert_msg(le16_at(id, 256) & (1 << 8), "OACS lacks Doorbell "
                  "Buffer Config");
    /* Get LBA Status (OACS bit 9) comes with its notice (OAES bit 13) */
    ck_assert_msg(le16_at(id, 256) & (1 << 9), "OACS lacks Get LBA Status");
    ck_assert_msg(le32_at(id, 92) & (1 << 13), "OAES 0x%08x lacks LBA "
                  "Status Information notices", le32_at(id, 92));
    ck_assert_msg(id[261] & (1 << 2), "LPA lacks extended data (Get LBA "
                  "Status needs it)");
    ck_assert_msg((id[260] >> 1) & 7, "FRMW: no firmware slots");
    ck_assert_msg(id[261] & (1 << 1), "LPA lacks the commands supported "
                  "and effects log");
    ck_assert_msg(le32_at(id, 328) & (1 << 1), "SANICAP lacks block erase");
    ck_assert_msg(le16_at(id, 316) > 0, "EDSTT is 0");
    ck_assert_uint_eq(id[512], 0x66);                 /* SQES */
    ck_assert_uint_eq(id[513], 0x44);                 /* CQES */
    ck_assert_uint_eq(le32_at(id, 516), 32);          /* NN, test_ns.c */
    /* ONCS: compare, write uncorrectable, DSM, write zeroes, timestamp */
    ck_assert_msg((le16_at(id, 520) & 0x4f) == 0x4f, "ONCS 0x%04x lacks "
                  "compare/write-uncorrectable/DSM/write-zeroes/timestamp",
                  le16_at(id, 520));
    ck_assert_msg((id[525] & 1) == 0, "VWC present with vwc=off");
    ck_assert_msg(le32_at(id, 536) & 1, "SGLS: SGLs not supported");
    /* power state 0 from the datasheet's active power (centiwatts) */
    ck_assert(h3100_profile_load(&cfg, "h3100-3.2t", NULL));
    npss = id[263];
    mp = le16_at(id, 2048);
    ck_assert_msg(mp == cfg.active_mw / 10, "PSD0 max power %u cW, "
                  "expected %u (active %u mW)", mp, cfg.active_mw / 10,
                  cfg.active_mw);
    ck_assert_msg(npss >= 1, "NPSS %u: only one power state", npss);
    dev_close(d);
}
END_TEST

START_TEST(test_identify_properties)
{
    Dev *d = dev_open_full(NULL, ",serial=SN-TEST-0001,"
                           "model-number=DAPUSTOR TEST MODEL,"
                           "firmware=TESTFW01,vwc=on", "");
    uint8_t id[4096];
    uint32_t dw0 = 0;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify Controller");
    check_ascii_field(id, 4, 20, "serial number", "SN-TEST-0001");
    check_ascii_field(id, 24, 40, "model number", "DAPUSTOR TEST MODEL");
    check_ascii_field(id, 64, 8, "firmware revision", "TESTFW01");
    ck_assert_msg(id[525] & 1, "VWC not reported with vwc=on");
    ck_status(nh_get_features(d->h, NVME_FEAT_VWC, 0, 0, &dw0), 0,
              "Get Features VWC");
    dev_close(d);
}
END_TEST

START_TEST(test_identify_namespace)
{
    Dev *d = dev_open();
    uint8_t id[4096];
    bool has512 = false, has4k = false;
    uint8_t nlbaf;

    ck_status(nh_identify(d->h, 0, 1, id), 0, "Identify Namespace");
    ck_assert_msg(le64_at(id, 0) == DEV_NS_LBAS, "NSZE %" PRIu64
                  ", expected %" PRIu64, le64_at(id, 0), DEV_NS_LBAS);
    ck_assert_msg(le64_at(id, 8) == DEV_NS_LBAS, "NCAP %" PRIu64,
                  le64_at(id, 8));
    ck_assert_uint_eq(id[26] & 0xf, 0);                 /* FLBAS */
    nlbaf = id[25];
    for (unsigned i = 0; i <= nlbaf && i < 16; i++) {
        uint32_t lbaf = le32_at(id, 128 + 4 * i);

        has512 |= ((lbaf >> 16) & 0xff) == 9 && (lbaf & 0xffff) == 0;
        has4k |= ((lbaf >> 16) & 0xff) == 12 && (lbaf & 0xffff) == 0;
    }
    ck_assert_msg(has512 && has4k, "LBA formats lack 512 (%d) or 4096 "
                  "(%d) bytes without metadata", has512, has4k);
    ck_assert_msg(id[33] & 1, "DLFEAT: deallocated blocks do not read as "
                  "zeroes");
    dev_close(d);
}
END_TEST

START_TEST(test_identify_namespace_4k)
{
    Dev *d = dev_open_full(NULL, ",lba-size=4096", "");
    uint8_t id[4096];
    uint32_t lbaf;

    ck_status(nh_identify(d->h, 0, 1, id), 0, "Identify Namespace");
    lbaf = le32_at(id, 128 + 4 * (id[26] & 0xf));
    ck_assert_msg(((lbaf >> 16) & 0xff) == 12, "lba-size=4096: LBADS %u",
                  (lbaf >> 16) & 0xff);
    ck_assert_uint_eq(le64_at(id, 0), DEV_NS_BYTES / 4096);
    dev_close(d);
}
END_TEST

START_TEST(test_identify_ns_lists)
{
    Dev *d = dev_open();
    uint8_t id[4096];
    bool found = false;

    ck_status(nh_identify(d->h, 2, 0, id), 0, "Active Namespace ID list");
    ck_assert_uint_eq(le32_at(id, 0), 1);
    ck_assert_uint_eq(le32_at(id, 4), 0);
    ck_status(nh_identify(d->h, 2, 1, id), 0, "Active NS list above 1");
    ck_assert_uint_eq(le32_at(id, 0), 0);

    ck_status(nh_identify(d->h, 3, 1, id), 0, "NS Identification "
              "Descriptor list");
    for (size_t off = 0; off + 4 <= sizeof(id) && id[off];) {
        uint8_t type = id[off], len = id[off + 1];

        ck_assert_msg((type == 1 && len == 8) || (type == 2 && len == 16) ||
                      (type == 3 && len == 16), "descriptor type %u "
                      "length %u", type, len);
        found = true;
        off += 4 + len;
    }
    ck_assert_msg(found, "no namespace identification descriptor");
    dev_close(d);
}
END_TEST

START_TEST(test_identify_errors)
{
    Dev *d = dev_open();

    ck_status(nh_identify(d->h, 0, 33, NULL), NVME_SC_INVALID_NSID,
              "Identify Namespace 33 (NN is 32)");
    ck_status(nh_identify(d->h, 3, 7, NULL), NVME_SC_INVALID_NSID,
              "NS descriptors of namespace 7");
    ck_status(nh_identify(d->h, 0x1f, 0, NULL), NVME_SC_INVALID_FIELD,
              "Identify CNS 1Fh");
    dev_close(d);
}
END_TEST

/* What tells one drive from another, as the guest reads it. */
typedef struct DriveIds {
    char sn[21];
    char nqn[257];
    uint8_t eui64[8];
    uint8_t nguid[16];
} DriveIds;

static void read_ids(NvmeHost *h, DriveIds *ids)
{
    uint8_t id[4096];
    size_t n = 20;

    memset(ids, 0, sizeof(*ids));
    nh_enable(h, 16);
    ck_status(nh_identify(h, 1, 0, id), 0, "Identify Controller");
    memcpy(ids->sn, id + 4, 20);
    while (n && ids->sn[n - 1] == ' ') {
        ids->sn[--n] = 0;
    }
    memcpy(ids->nqn, id + 768, 256);
    ck_status(nh_identify(h, 0, 1, id), 0, "Identify Namespace");
    memcpy(ids->nguid, id + 104, 16);
    memcpy(ids->eui64, id + 120, 8);
}

/* Start QEMU with @n drives (QEMU arguments @fmt), read each one's IDs. */
static void read_machine_ids(unsigned n, DriveIds *ids, const char *args)
{
    QTest *qt = qt_start("%s", args);

    for (unsigned i = 0; i < n; i++) {
        NvmeHost *h = nh_new_nth(qt, i);

        read_ids(h, &ids[i]);
        nh_free(h);
    }
    qt_quit(qt);
}

static void check_all_differ(const DriveIds *ids, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        ck_assert_msg(ids[i].nqn[0], "drive %u: empty SUBNQN", i);
        for (unsigned j = 0; j < i; j++) {
            ck_assert_msg(strcmp(ids[i].sn, ids[j].sn), "drives %u and %u "
                          "share serial %s", j, i, ids[i].sn);
            ck_assert_msg(strcmp(ids[i].nqn, ids[j].nqn), "drives %u and %u "
                          "share SUBNQN %s", j, i, ids[i].nqn);
            ck_assert_msg(memcmp(ids[i].eui64, ids[j].eui64, 8), "drives "
                          "%u and %u share an EUI-64", j, i);
            ck_assert_msg(memcmp(ids[i].nguid, ids[j].nguid, 16), "drives "
                          "%u and %u share an NGUID", j, i);
        }
    }
}

/*
 * Four drives with default options, as in a server's bays: two on image
 * files, two on null-co (no file name to tell them apart): four serials,
 * subsystem NQNs, EUI-64s and NGUIDs, and the same ones on a restart.
 */
START_TEST(test_identity_unique_per_drive)
{
    g_autofree char *a = qt_backing_file("id-a.img", DEV_NS_BYTES, "raw");
    g_autofree char *b = qt_backing_file("id-b.img", DEV_NS_BYTES, "raw");
    g_autofree char *args = g_strdup_printf(
        "-drive file=%s,if=none,id=d0,format=raw "
        "-drive file=%s,if=none,id=d1,format=raw "
        "-drive driver=null-co,size=256M,if=none,id=d2 "
        "-drive driver=null-co,size=256M,if=none,id=d3 "
        "-device dapustor-h3100,drive=d0,model-params=" DEV_PARAMS " "
        "-device dapustor-h3100,drive=d1,model-params=" DEV_PARAMS " "
        "-device dapustor-h3100,drive=d2,model-params=" DEV_PARAMS " "
        "-device dapustor-h3100,drive=d3,model-params=" DEV_PARAMS, a, b);
    DriveIds ids[4], again[4];

    read_machine_ids(4, ids, args);
    check_all_differ(ids, 4);
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_msg(ids[i].sn[0] == 'D' && ids[i].sn[1] == 'P' &&
                      strlen(ids[i].sn) == 14, "serial '%s' is not DP + "
                      "12 hex digits", ids[i].sn);
        ck_assert_msg(ids[i].eui64[0] == 0x00 && ids[i].eui64[1] == 0xe0 &&
                      ids[i].eui64[2] == 0x4c, "EUI-64 does not start with "
                      "the OUI 00e04c");
    }
    read_machine_ids(4, again, args);
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_msg(!memcmp(&ids[i], &again[i], sizeof(DriveIds)),
                      "drive %u: serial %s became %s on a restart", i,
                      ids[i].sn, again[i].sn);
    }
    unlink(a);
    unlink(b);
}
END_TEST

/*
 * Serials that a weak string hash maps to one value (the audit's
 * COMPATAb / COMPATBA) give different EUI-64s and NGUIDs; set ones are
 * reported as set.
 */
START_TEST(test_identity_set_ids)
{
    DriveIds ids[3];

    read_machine_ids(3, ids,
        "-drive driver=null-co,size=256M,if=none,id=d0 "
        "-drive driver=null-co,size=256M,if=none,id=d1 "
        "-drive driver=null-co,size=256M,if=none,id=d2 "
        "-device dapustor-h3100,drive=d0,serial=COMPATAb,"
        "model-params=" DEV_PARAMS " "
        "-device dapustor-h3100,drive=d1,serial=COMPATBA,"
        "model-params=" DEV_PARAMS " "
        "-device dapustor-h3100,drive=d2,serial=SET-IDS,"
        "eui64=0x0011223344556677,"
        "nguid=00112233-4455-6677-8899-aabbccddeeff,"
        "model-params=" DEV_PARAMS);
    check_all_differ(ids, 3);
    ck_assert_str_eq(ids[0].sn, "COMPATAb");
    ck_assert_str_eq(ids[2].sn, "SET-IDS");
    for (unsigned i = 0; i < 8; i++) {
        ck_assert_uint_eq(ids[2].eui64[i], 0x11 * i);
    }
    for (unsigned i = 0; i < 16; i++) {
        ck_assert_uint_eq(ids[2].nguid[i], 0x11 * i);
    }
}
END_TEST

/*
 * A state file keeps the serial the drive was first given: the drive
 * moved to another id (another bay) is the same drive; without its file
 * it would be another one.
 */
START_TEST(test_identity_kept_in_state)
{
    g_autofree char *st = g_build_filename(qt_tmpdir(), "id.state", NULL);
    g_autofree char *a1 = g_strdup_printf(
        "-drive driver=null-co,size=256M,if=none,id=d0 -device "
        "dapustor-h3100,id=bay1,drive=d0,model-params=" DEV_PARAMS
        ",state=%s", st);
    g_autofree char *a2 = g_strdup_printf(
        "-drive driver=null-co,size=256M,if=none,id=d0 -device "
        "dapustor-h3100,id=bay2,drive=d0,model-params=" DEV_PARAMS
        ",state=%s", st);
    DriveIds first, moved, other;

    unlink(st);
    read_machine_ids(1, &first, a1);
    read_machine_ids(1, &moved, a2);
    read_machine_ids(1, &other,
        "-drive driver=null-co,size=256M,if=none,id=d0 -device "
        "dapustor-h3100,id=bay2,drive=d0,model-params=" DEV_PARAMS);
    ck_assert_str_eq(moved.sn, first.sn);
    ck_assert_msg(!memcmp(moved.eui64, first.eui64, 8), "EUI-64 changed");
    ck_assert_msg(strcmp(other.sn, first.sn), "serial %s does not depend "
                  "on the device's id", other.sn);
    unlink(st);
}
END_TEST

START_TEST(test_full_size_null_co)
{
    /* the whole 6.4 TB namespace, no disk: null-co reads zeroes */
    uint64_t lbas = h3100_idema_lba512(6400);
    QTest *qt = qt_start("-drive driver=null-co,size=%" PRIu64 ",read-zeroes"
                         "=on,if=none,id=d0 -device dapustor-h3100,drive=d0,"
                         "capacity=6.4T", lbas * 512);
    NvmeHost *h = nh_new(qt);
    NvmeQueue *q;
    uint8_t id[4096], w[4096], r[4096];

    ck_assert_uint_eq(qt_pci_cfg_readw(qt, h->devfn, 0x2e), 0x0021);
    nh_enable(h, 16);
    ck_status(nh_identify(h, 0, 1, id), 0, "Identify Namespace");
    ck_assert_msg(le64_at(id, 0) == lbas, "NSZE %" PRIu64 ", IDEMA says %"
                  PRIu64, le64_at(id, 0), lbas);
    nh_probe(h);
    q = nh_create_ioq(h, 1, 16, -1);
    nh_pattern(w, sizeof(w), 3);
    ck_status(nh_write(h, q, lbas - 8, w, sizeof(w)), 0, "write the last "
              "4 KiB");
    ck_status(nh_read(h, q, lbas - 8, r, sizeof(r)), 0, "read them");
    ck_status(nh_io(h, q, NVME_CMD_READ, 1, lbas, 1, nh_alloc(h, 4096, 0), 0,
                    NULL), NVME_SC_LBA_RANGE, "read at NSZE");
    qt_quit(qt);
    nh_free(h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("identify");
    TCase *tc = dev_tcase(s, "pci");

    tcase_add_test(tc, test_pci_identity);
    tcase_add_loop_test(tc, test_subsystem_by_profile, 0,
                        G_N_ELEMENTS(subsys_cases));
    tcase_add_test(tc, test_registers_at_reset);
    tcase_add_test(tc, test_enable_disable);
    tc = dev_tcase(s, "identify");
    tcase_add_test(tc, test_identify_controller);
    tcase_add_test(tc, test_identify_properties);
    tcase_add_test(tc, test_identify_namespace);
    tcase_add_test(tc, test_identify_namespace_4k);
    tcase_add_test(tc, test_identify_ns_lists);
    tcase_add_test(tc, test_identify_errors);
    tcase_add_test(tc, test_full_size_null_co);
    tc = dev_tcase(s, "identity");
    tcase_add_test(tc, test_identity_unique_per_drive);
    tcase_add_test(tc, test_identity_set_ids);
    tcase_add_test(tc, test_identity_kept_in_state);
    return dev_main(s);
}
