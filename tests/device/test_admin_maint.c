/*
 * The admin suite's "maintenance" case (tests/device/test_admin.c runs it).
 * Maintenance: firmware download and commit, Format NVM, Sanitize,
 * device self-test, Doorbell Buffer Config.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "test_admin.h"

/* ---- firmware ---------------------------------------------------------- */

/* The device's image format (docs/guide/usage.md): "H3FW", then the revision. */
static uint32_t make_fw_image(uint8_t *img, uint32_t len, const char *rev)
{
    nh_pattern(img, len, 99);
    memcpy(img, "H3FW", 4);
    memcpy(img + 4, rev, 8);
    return len;
}

static uint16_t fw_download(Dev *d, const uint8_t *img, uint32_t len,
                            uint32_t offset)
{
    uint64_t buf = nh_alloc(d->h, len, 4096);
    NvmeSqe sqe;
    NvmeCqe cqe;

    qt_memwrite(d->qt, buf, img, len);
    nh_sqe_init(&sqe, NVME_ADM_FW_DOWNLOAD, 0);
    nh_set_prps(d->h, &sqe, buf, len);
    sqe.cdw10 = len / 4 - 1;
    sqe.cdw11 = offset / 4;
    cqe = admin_raw(d, &sqe);
    return nh_status(&cqe);
}

static uint16_t fw_commit(Dev *d, unsigned slot, unsigned action)
{
    return admin_status(d, NVME_ADM_FW_COMMIT, 0, slot | (action << 3), 0);
}

START_TEST(test_firmware_update)
{
    Dev *d = dev_open();
    uint8_t img[16384], id[4096], log[512];
    char old_fr[9] = "", new_fr[9] = "H3D1TEST";
    uint16_t st;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    memcpy(old_fr, id + 64, 8);
    make_fw_image(img, sizeof(img), new_fr);
    ck_status(fw_download(d, img, 8192, 0), 0, "download part 1");
    ck_status(fw_download(d, img + 8192, 8192, 8192), 0, "download part 2");
    st = fw_commit(d, 2, 1);          /* replace slot 2, activate at reset */
    ck_status(st, 0, "Firmware Commit CA=1 to slot 2");
    ck_status(nh_get_log(d->h, NVME_LOG_FW_SLOT, 0xffffffff, log, 512, 0), 0,
              "firmware slot log");
    ck_assert_msg(memcmp(log + 16, new_fr, 8) == 0, "slot 2 holds '%.8s'",
                  (char *)log + 16);
    ck_assert_msg(((log[0] >> 4) & 7) == 2, "AFI 0x%02x: slot 2 not next "
                  "active", log[0]);
    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    ck_assert_msg(memcmp(id + 64, old_fr, 8) == 0, "revision changed "
                  "before the reset");

    nh_disable(d->h);
    nh_enable(d->h, 16);
    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify after reset");
    ck_assert_msg(memcmp(id + 64, new_fr, 8) == 0, "after the reset the "
                  "revision is '%.8s', expected '%s'", (char *)id + 64,
                  new_fr);
    ck_status(nh_get_log(d->h, NVME_LOG_FW_SLOT, 0xffffffff, log, 512, 0), 0,
              "firmware slot log");
    ck_assert_msg((log[0] & 7) == 2, "AFI 0x%02x: slot 2 not active",
                  log[0]);
    ck_assert_msg(memcmp(log + 8, old_fr, 8) == 0, "slot 1 lost '%s'",
                  old_fr);

    /* back to slot 1 at once (CA=3), then slot 2 at the next reset (CA=2) */
    ck_status(fw_commit(d, 1, 3), 0, "Firmware Commit CA=3 to slot 1");
    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    ck_assert_msg(memcmp(id + 64, old_fr, 8) == 0, "CA=3: revision '%.8s', "
                  "expected '%s' at once", (char *)id + 64, old_fr);
    ck_status(fw_commit(d, 2, 2), 0, "Firmware Commit CA=2 to slot 2");
    ck_status(fw_commit(d, 3, 2), NVME_SC_INVALID_FW_IMAGE,
              "CA=2 to empty slot 3");
    nh_disable(d->h);
    nh_enable(d->h, 16);
    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify after reset");
    ck_assert_msg(memcmp(id + 64, new_fr, 8) == 0, "CA=2: revision '%.8s' "
                  "after the reset", (char *)id + 64);
    dev_close(d);
}
END_TEST

START_TEST(test_firmware_errors)
{
    Dev *d = dev_open();
    uint8_t img[8192], id[4096];
    unsigned slots;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    slots = (id[260] >> 1) & 7;
    ck_status(fw_commit(d, 2, 1), NVME_SC_INVALID_FW_IMAGE,
              "commit with no image downloaded");
    make_fw_image(img, sizeof(img), "H3D1BAD0");
    ck_status(fw_download(d, img, 4096, 0), 0, "download");
    ck_status(fw_download(d, img, 4096, 8192), NVME_SC_INVALID_FIELD,
              "download leaving a gap");
    ck_status(fw_commit(d, slots + 1, 1), NVME_SC_INVALID_FW_SLOT,
              "commit to slot %u of %u", slots + 1, slots);
    if (id[260] & 1) {
        ck_status(fw_commit(d, 1, 1), NVME_SC_INVALID_FW_SLOT,
                  "commit to read-only slot 1");
    }
    ck_status(fw_commit(d, 2, 6), NVME_SC_INVALID_FIELD, "commit action 6");
    /* a corrupt image */
    memset(img, 0, 16);
    ck_status(fw_download(d, img, 4096, 0), 0, "download");
    ck_status(fw_commit(d, 2, 0), NVME_SC_INVALID_FW_IMAGE,
              "commit of an image without the header");
    dev_close(d);
}
END_TEST

/* ---- format and sanitize ----------------------------------------------- */

static int find_lbaf(Dev *d, unsigned lbads)
{
    uint8_t id[4096];

    ck_status(nh_identify(d->h, 0, 1, id), 0, "Identify Namespace");
    for (unsigned i = 0; i <= id[25] && i < 16; i++) {
        uint32_t f = le32_at(id, 128 + 4 * i);

        if (((f >> 16) & 0xff) == lbads && (f & 0xffff) == 0) {
            return i;
        }
    }
    ck_abort_msg("no LBA format of %u bytes", 1u << lbads);
    return -1;
}

START_TEST(test_format_4k)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint8_t w[8192], r[8192], id[4096];
    int lbaf = find_lbaf(d, 12);
    uint16_t st;

    nh_pattern(w, sizeof(w), 30);
    ck_status(nh_write(h, d->q, 0, w, sizeof(w)), 0, "write");
    st = admin_status(d, NVME_ADM_FORMAT_NVM, 1, lbaf, 0);
    ck_status(st, 0, "Format NVM to LBA format %d (4096)", lbaf);
    ck_status(nh_identify(h, 0, 1, id), 0, "Identify Namespace");
    ck_assert_msg((id[26] & 0xf) == lbaf, "FLBAS %u after format",
                  id[26] & 0xf);
    ck_assert_uint_eq(le64_at(id, 0), DEV_NS_BYTES / 4096);
    h->lba_size = 4096;
    ck_status(nh_read(h, d->q, 0, r, sizeof(r)), 0, "read after format");
    ck_assert_msg(r[0] == 0 && !memcmp(r, r + 1, sizeof(r) - 1),
                  "data survived Format NVM");
    nh_pattern(w, sizeof(w), 31);
    ck_status(nh_write(h, d->q, 10, w, sizeof(w)), 0, "4 KiB LBA write");
    ck_status(nh_read(h, d->q, 10, r, sizeof(r)), 0, "4 KiB LBA read");
    ck_assert(memcmp(w, r, sizeof(r)) == 0);
    ck_status(nh_io(h, d->q, NVME_CMD_READ, 1, DEV_NS_BYTES / 4096, 1,
                    nh_alloc(h, 4096, 4096), 0, NULL), NVME_SC_LBA_RANGE,
              "read at the new NSZE");
    /* and back to 512 */
    st = admin_status(d, NVME_ADM_FORMAT_NVM, 1, find_lbaf(d, 9), 0);
    ck_status(st, 0, "Format NVM back to 512");
    h->lba_size = 512;
    ck_status(nh_read(h, d->q, 80, r, 4096), 0, "512 read");
    dev_close(d);
}
END_TEST

START_TEST(test_format_errors)
{
    Dev *d = dev_open();

    ck_status(admin_status(d, NVME_ADM_FORMAT_NVM, 1, 15, 0),
              NVME_SC_INVALID_FORMAT, "Format to LBA format 15");
    ck_status(admin_status(d, NVME_ADM_FORMAT_NVM, 1, 1 << 5, 0),
              NVME_SC_INVALID_FORMAT, "Format with protection information");
    ck_status(admin_status(d, NVME_ADM_FORMAT_NVM, 7, 0, 0),
              NVME_SC_INVALID_NSID, "Format of namespace 7");
    ck_status(admin_status(d, NVME_ADM_FORMAT_NVM, 1, 7 << 9, 0),
              NVME_SC_INVALID_FIELD, "Format with SES=7");
    dev_close(d);
}
END_TEST

START_TEST(test_sanitize_block_erase)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint8_t w[4096], r[4096], log[512];
    uint16_t st;
    bool done = false;

    nh_pattern(w, sizeof(w), 32);
    ck_status(nh_write(h, d->q, 64, w, sizeof(w)), 0, "write");
    st = admin_status(d, NVME_ADM_SANITIZE, 0, 2, 0);
    ck_status(st, 0, "Sanitize block erase");
    /* in progress: the log says so and I/O is refused */
    ck_status(nh_get_log(h, NVME_LOG_SANITIZE, 0xffffffff, log, 512, 0), 0,
              "sanitize status log");
    if ((le16_at(log, 2) & 7) == 2) {
        ck_status(nh_read(h, d->q, 64, r, sizeof(r)),
                  NVME_SC_SANITIZE_IN_PROGRESS, "read during sanitize");
    }
    for (int i = 0; i < 600 && !done; i++) {
        qt_clock_step(d->qt, 100000000);
        ck_status(nh_get_log(h, NVME_LOG_SANITIZE, 0xffffffff, log, 512, 0),
                  0, "sanitize status log");
        done = (le16_at(log, 2) & 7) == 1;
    }
    ck_assert_msg(done, "sanitize not complete after 60 s of virtual time "
                  "(SSTAT 0x%04x)", le16_at(log, 2));
    ck_assert_msg(le16_at(log, 0) == 0xffff, "SPROG %u at the end",
                  le16_at(log, 0));
    ck_assert_msg(le32_at(log, 4) == 2, "SCDW10 0x%x", le32_at(log, 4));
    ck_status(nh_read(h, d->q, 64, r, sizeof(r)), 0, "read after sanitize");
    ck_assert_msg(r[0] == 0 && !memcmp(r, r + 1, sizeof(r) - 1),
                  "data survived sanitize");
    ck_status(admin_status(d, NVME_ADM_SANITIZE, 0, 3, 0),
              NVME_SC_INVALID_FIELD, "Sanitize overwrite (not in SANICAP)");
    ck_status(admin_status(d, NVME_ADM_SANITIZE, 0, 4, 0),
              NVME_SC_INVALID_FIELD, "Sanitize crypto erase");
    ck_status(admin_status(d, NVME_ADM_SANITIZE, 0, 7, 0),
              NVME_SC_INVALID_FIELD, "Sanitize action 7");
    dev_close(d);
}
END_TEST

/* ---- device self-test -------------------------------------------------- */

static bool self_test_wait(Dev *d, uint8_t *log, int64_t limit_ns)
{
    for (int64_t t = 0; t <= limit_ns; t += 1000000000) {
        ck_status(nh_get_log(d->h, NVME_LOG_SELF_TEST, 0xffffffff, log, 564,
                             0), 0, "self-test log");
        if ((log[0] & 0xf) == 0) {
            return true;
        }
        qt_clock_step(d->qt, 1000000000);
    }
    return false;
}

START_TEST(test_self_test_short)
{
    Dev *d = dev_open();
    uint8_t log[564];

    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 1, 0), 0,
              "short self-test");
    ck_status(nh_get_log(d->h, NVME_LOG_SELF_TEST, 0xffffffff, log, 564, 0),
              0, "self-test log");
    ck_assert_msg((log[0] & 0xf) == 1, "current operation %u, expected 1 "
                  "(short)", log[0] & 0xf);
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 1, 0),
              NVME_SC_SELF_TEST_IN_PROGRESS, "second self-test");
    ck_assert_msg(self_test_wait(d, log, 130ll * 1000000000),
                  "short self-test still running after 2 minutes");
    ck_assert_msg(log[4] == 0x10, "newest result 0x%02x, expected short "
                  "test completed without error", log[4]);
    dev_close(d);
}
END_TEST

START_TEST(test_self_test_extended_and_abort)
{
    Dev *d = dev_open();
    uint8_t log[564], id[4096];
    unsigned edstt;

    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    edstt = le16_at(id, 316);
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 2, 0), 0,
              "extended self-test");
    qt_clock_step(d->qt, 1000000000);
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 0xf, 0), 0,
              "abort self-test");
    ck_assert(self_test_wait(d, log, 2000000000));
    ck_assert_msg(log[4] == 0x21, "newest result 0x%02x, expected extended "
                  "aborted by command (0x21)", log[4]);
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 2, 0), 0,
              "extended self-test");
    ck_assert_msg(self_test_wait(d, log, (edstt * 60ll + 10) * 1000000000),
                  "extended self-test longer than EDSTT %u min", edstt);
    ck_assert_msg(log[4] == 0x20, "newest result 0x%02x", log[4]);
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 0xffffffff, 7, 0),
              NVME_SC_INVALID_FIELD, "self-test code 7");
    ck_status(admin_status(d, NVME_ADM_DEV_SELF_TEST, 5, 1, 0),
              NVME_SC_INVALID_NSID, "self-test of namespace 5");
    dev_close(d);
}
END_TEST

/* ---- doorbell buffer config -------------------------------------------- */

/* Submit on @q updating the shadow doorbells, then the MMIO doorbell. */
static NvmeCqe shadow_cmd(Dev *d, NvmeQueue *q, uint64_t dbs, NvmeSqe *sqe)
{
    NvmeHost *h = d->h;
    NvmeCqe cqe;

    nh_sq_put(h, q, sqe, false);
    qt_writel(d->qt, dbs + 2 * q->qid * 4, q->tail);
    nh_sq_ring(h, q);
    ck_assert_msg(nh_wait(h, q, &cqe, 1000000000), "command %02xh with "
                  "shadow doorbells did not complete", sqe->opc);
    qt_writel(d->qt, dbs + (2 * q->qid + 1) * 4, q->cq->head);
    return cqe;
}

START_TEST(test_doorbell_buffer_config)
{
    Dev *d = dev_launch(NULL, "", "");
    NvmeHost *h = d->h;
    uint64_t dbs, eis, buf;
    uint8_t w[4096], r[4096];
    NvmeQueue *q;
    NvmeSqe sqe;
    NvmeCqe cqe;
    uint32_t ei;

    nh_enable(h, 16);
    nh_probe(h);
    dbs = nh_alloc(h, 4096, 4096);
    eis = nh_alloc(h, 4096, 4096);
    buf = nh_alloc(h, 4096, 4096);

    nh_sqe_init(&sqe, NVME_ADM_DBBUF_CONFIG, 0);
    sqe.prp1 = dbs + 8;
    sqe.prp2 = eis;
    cqe = nh_cmd(h, h->admin, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_INVALID_FIELD, "DBBC with an "
              "unaligned buffer");

    /* as Linux does: DBBC first, then the I/O queues */
    qt_memset(d->qt, eis, 0xee, 4096);
    nh_sqe_init(&sqe, NVME_ADM_DBBUF_CONFIG, 0);
    sqe.prp1 = dbs;
    sqe.prp2 = eis;
    cqe = nh_cmd(h, h->admin, &sqe);
    ck_status(nh_status(&cqe), 0, "Doorbell Buffer Config");
    q = nh_create_ioq(h, 1, 16, -1);
    for (int i = 0; i < 3; i++) {
        nh_pattern(w, sizeof(w), 40 + i);
        qt_memwrite(d->qt, buf, w, 4096);
        nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
        sqe.prp1 = buf;
        sqe.cdw10 = 700 + i * 8;
        sqe.cdw12 = 7;
        cqe = shadow_cmd(d, q, dbs, &sqe);
        ck_status(nh_status(&cqe), 0, "write %d", i);
    }
    ei = qt_readl(d->qt, eis + 2 * 1 * 4);
    ck_assert_msg(ei != 0xeeeeeeee && ei <= 3, "SQ 1 event index 0x%x after "
                  "3 commands", ei);
    /* the shadow tail counts, whatever the MMIO doorbell says */
    nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
    nh_sq_put(h, q, &sqe, false);
    qt_writel(d->qt, dbs + 2 * 1 * 4, q->tail);
    nh_wr32(h, nh_sq_doorbell(h, 1), (q->tail + q->size - 1) % q->size);
    ck_assert_msg(nh_wait(h, q, &cqe, 1000000000), "the shadow SQ tail "
                  "was not used");
    qt_writel(d->qt, dbs + 3 * 4, q->cq->head);
    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.prp1 = buf;
    sqe.cdw10 = 708;
    sqe.cdw12 = 7;
    cqe = shadow_cmd(d, q, dbs, &sqe);
    ck_status(nh_status(&cqe), 0, "read back");
    /* the CQ's event index: the shadow head the device last took */
    nh_wr32(h, nh_cq_doorbell(h, 1), q->cq->head);
    qt_clock_step(d->qt, 1000);
    ei = qt_readl(d->qt, eis + 3 * 4);
    ck_assert_msg(ei == q->cq->head, "CQ 1 event index %u, the host's "
                  "shadow head %u", ei, q->cq->head);
    qt_memread(d->qt, buf, r, sizeof(r));
    nh_pattern(w, sizeof(w), 41);
    ck_assert(memcmp(w, r, sizeof(r)) == 0);
    dev_close(d);
}
END_TEST

void admin_maint_tcase(Suite *s)
{
    TCase *tc = dev_tcase(s, "maintenance");

    tcase_add_test(tc, test_firmware_update);
    tcase_add_test(tc, test_firmware_errors);
    tcase_add_test(tc, test_format_4k);
    tcase_add_test(tc, test_format_errors);
    tcase_add_test(tc, test_sanitize_block_erase);
    tcase_add_test(tc, test_self_test_short);
    tcase_add_test(tc, test_self_test_extended_and_abort);
    tcase_add_test(tc, test_doorbell_buffer_config);
}
