/*
 * Host I/O errors (hw/h3100-blkerr.c): with blkdebug failing reads,
 * writes and flushes, the guest gets the status a drive gives, the error
 * log and SMART count them, and -drive werror= / rerror= are honoured as
 * by QEMU's own drives: report, ignore, and stop (the VM pauses on a
 * full host disk and the write is sent again on `cont`).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev.h"

#define FA_LBA          4096u       /* 2 MiB into the namespace */
#define FA_BS           4096u
#define NVME_SC_WRITE_FAULT      0x280
#define NVME_SC_UNRECOVERED_READ 0x281
#define SMART_MEDIA_ERRORS  160
#define SMART_ERRLOG_ENTRIES 176

static char *fa_img;
static bool fa_iothread;              /* the loop tests' second pass */

/* A raw image under blkdebug: @rule is its inject-error.0 options. */
static Dev *fa_open(const char *rule, const char *drive_opts)
{
    g_autofree char *drive = NULL;
    g_auto(GStrv) kv = g_strsplit(rule, ",", 0);
    GString *r = g_string_new("");
    Dev *d;

    for (unsigned i = 0; kv[i]; i++) {
        g_string_append_printf(r, ",file.inject-error.0.%s", kv[i]);
    }
    fa_img = qt_backing_file("fa.img", DEV_NS_BYTES, "raw");
    drive = g_strdup_printf("driver=raw,file.driver=blkdebug,"
                            "file.image.filename=%s%s%s", fa_img, r->str,
                            drive_opts);
    g_string_free(r, true);
    d = fa_iothread ?
        dev_open_drive(drive, ",iothread=io0", "-object iothread,id=io0") :
        dev_open_drive(drive, "", "");
    /* open QMP now: events before the first connection are not kept */
    g_free(qt_qmp(d->qt, "{\"execute\": \"query-status\"}"));
    return d;
}

static void fa_close(Dev *d)
{
    dev_close(d);
    unlink(fa_img);
    g_clear_pointer(&fa_img, g_free);
}

static uint64_t fa_smart(Dev *d, unsigned off)
{
    uint8_t log[512];

    ck_status(nh_get_log(d->h, 0x02, 0xffffffff, log, sizeof(log), 0), 0,
              "SMART log");
    return le64_at(log, off);
}

static void fa_fill(uint8_t *buf, uint8_t v)
{
    memset(buf, v, FA_BS);
}

START_TEST(test_read_error_reported)
{
    Dev *d = fa_open("event=read_aio,errno=5,sector=4096", "");
    uint8_t buf[FA_BS], elog[64];

    fa_fill(buf, 0x5a);
    ck_status(nh_write(d->h, d->q, FA_LBA, buf, FA_BS), 0, "write");
    ck_status(nh_read(d->h, d->q, FA_LBA, buf, FA_BS),
              NVME_SC_UNRECOVERED_READ, "read of the failing sector");
    ck_status(nh_read(d->h, d->q, FA_LBA + 8, buf, FA_BS), 0,
              "read next to it");
    ck_assert_uint_eq(fa_smart(d, SMART_MEDIA_ERRORS), 1);
    ck_assert_uint_eq(fa_smart(d, SMART_ERRLOG_ENTRIES), 1);
    ck_status(nh_get_log(d->h, 0x01, 0xffffffff, elog, sizeof(elog), 0), 0,
              "error log");
    ck_assert_uint_eq(le16_at(elog, 12) >> 1, NVME_SC_UNRECOVERED_READ);
    ck_assert_uint_eq(le64_at(elog, 16), FA_LBA);
    fa_close(d);
}
END_TEST

START_TEST(test_write_error_reported)
{
    Dev *d = fa_open("event=write_aio,errno=5,sector=4096", ",werror=report");
    uint8_t buf[FA_BS];

    fa_fill(buf, 0x11);
    ck_status(nh_write(d->h, d->q, FA_LBA, buf, FA_BS), NVME_SC_WRITE_FAULT,
              "write of the failing sector");
    ck_status(nh_write(d->h, d->q, FA_LBA + 8, buf, FA_BS), 0,
              "write next to it");
    ck_assert_uint_eq(fa_smart(d, SMART_MEDIA_ERRORS), 1);
    ck_assert(qt_qmp_event_seen(d->qt, "BLOCK_IO_ERROR"));
    fa_close(d);
}
END_TEST

START_TEST(test_write_error_ignored)
{
    Dev *d = fa_open("event=write_aio,errno=5,sector=4096", ",werror=ignore");
    uint8_t buf[FA_BS];

    fa_fill(buf, 0x22);
    ck_status(nh_write(d->h, d->q, FA_LBA, buf, FA_BS), 0,
              "write with werror=ignore");
    ck_assert_uint_eq(fa_smart(d, SMART_MEDIA_ERRORS), 0);
    fa_close(d);
}
END_TEST

START_TEST(test_flush_error_reported)
{
    Dev *d = fa_open("event=flush_to_disk,errno=5", ",werror=report");
    uint8_t buf[FA_BS];

    fa_fill(buf, 0x33);
    ck_status(nh_write(d->h, d->q, FA_LBA, buf, FA_BS), 0, "write");
    ck_status(nh_flush(d->h, d->q, 1), NVME_SC_WRITE_FAULT, "flush");
    fa_close(d);
}
END_TEST

static bool fa_wait_runstate(Dev *d, const char *status)
{
    g_autofree char *want = g_strdup_printf("\"status\": \"%s\"", status);

    for (int i = 0; i < 500; i++) {
        g_autofree char *r = qt_qmp(d->qt, "{\"execute\": \"query-status\"}");

        if (strstr(r, want)) {
            return true;
        }
        g_usleep(10000);
    }
    return false;
}

/* ENOSPC once: the default werror=enospc pauses the VM, cont retries. */
static Dev *fa_stop_on_enospc(uint16_t *cid, const uint8_t *data)
{
    Dev *d = fa_open("event=write_aio,errno=28,sector=4096,once=on", "");
    uint64_t a = nh_alloc(d->h, FA_BS, 4096);
    NvmeSqe sqe;
    NvmeCqe cqe;

    qt_memwrite(d->qt, a, data, FA_BS);
    nh_sqe_init(&sqe, 0x01, 1);
    nh_set_prps(d->h, &sqe, a, FA_BS);
    sqe.cdw10 = FA_LBA;
    sqe.cdw12 = FA_BS / 512 - 1;
    *cid = nh_submit(d->h, d->q, &sqe);
    ck_assert_msg(fa_wait_runstate(d, "io-error"),
                  "the VM did not stop on ENOSPC");
    ck_assert(qt_qmp_event_seen(d->qt, "BLOCK_IO_ERROR"));
    ck_assert_msg(!nh_wait_cid(d->h, d->q, *cid, &cqe, 10 * 1000 * 1000),
                  "the write completed while the VM was stopped");
    return d;
}

START_TEST(test_enospc_stops_then_cont_retries)
{
    uint8_t buf[FA_BS], got[FA_BS];
    uint16_t cid;
    NvmeCqe cqe;
    Dev *d;

    fa_iothread = _i;
    fa_fill(buf, 0x44);
    d = fa_stop_on_enospc(&cid, buf);
    qt_qmp_ok(d->qt, "{\"execute\": \"cont\"}");
    ck_assert(fa_wait_runstate(d, "running"));
    ck_assert_msg(nh_wait_cid(d->h, d->q, cid, &cqe, 1000 * 1000 * 1000),
                  "no completion after cont");
    ck_status(nh_status(&cqe), 0, "the write, sent again on cont");
    ck_status(nh_read(d->h, d->q, FA_LBA, got, FA_BS), 0, "read back");
    ck_assert(!memcmp(buf, got, FA_BS));
    ck_assert_uint_eq(fa_smart(d, SMART_MEDIA_ERRORS), 0);
    fa_close(d);
    fa_iothread = false;
}
END_TEST

/* A machine reset while a write waits for cont: forgotten, no crash. */
START_TEST(test_reset_while_stopped)
{
    uint8_t buf[FA_BS];
    uint16_t cid;
    Dev *d;

    fa_iothread = _i;
    fa_fill(buf, 0x55);
    d = fa_stop_on_enospc(&cid, buf);
    qt_qmp_ok(d->qt, "{\"execute\": \"system_reset\"}");
    qt_qmp_ok(d->qt, "{\"execute\": \"cont\"}");
    ck_assert(fa_wait_runstate(d, "running"));
    dev_reprobe(d);
    ck_status(nh_write(d->h, d->q, FA_LBA, buf, FA_BS), 0,
              "write after the reset");
    fa_close(d);
    fa_iothread = false;
}
END_TEST

/*
 * A command's memory stops being writable RAM while it waits for its
 * block request, here the retry after rerror=stop (also: a write waiting
 * for the volatile cache's read, a VM stop): the request maps guest RAM
 * only (hw/h3100-blkdma.c), so the Read ends with a Data Transfer Error
 * instead of being bounced into what took the memory's place.  The memory
 * is the chipset's 0xd0000 segment, which PAM turns from RAM back to the
 * PCI bus, where the read-only pc.rom answers.  (PAM's read-only setting
 * is no test: QEMU makes it a read-only alias of the RAM, which DMA writes
 * straight through.)
 */
#define FA_PAM_SEG      0xd0000u
#define MCH_PAM0        0x90        /* 0x93's low nibble: 0xd0000-0xd3fff */

static void fa_pam_seg(Dev *d, uint32_t attr)   /* 3 RAM, 0 PCI */
{
    uint32_t v = qt_pci_cfg_readl(d->qt, 0, MCH_PAM0);

    qt_pci_cfg_writel(d->qt, 0, MCH_PAM0, (v & ~(0xfu << 24)) | attr << 24);
}

START_TEST(test_read_into_memory_turned_rom)
{
    uint8_t w[2 * FA_BS], got[FA_BS], fill[FA_BS];
    NvmeSqe sqe;
    NvmeCqe cqe;
    uint16_t cid;
    uint64_t ram;
    Dev *d;

    fa_iothread = _i;
    d = fa_open("event=read_aio,errno=5,sector=4096,once=on", ",rerror=stop");
    nh_pattern(w, sizeof(w), 13);
    ck_status(nh_write(d->h, d->q, FA_LBA, w, sizeof(w)), 0, "write");
    /* 8 KiB: a page of ordinary RAM, then the segment's first page */
    ram = nh_alloc(d->h, FA_BS, 4096);
    memset(fill, 0xab, sizeof(fill));
    qt_memwrite(d->qt, ram, fill, sizeof(fill));
    fa_pam_seg(d, 3);
    nh_sqe_init(&sqe, 0x02, 1);
    sqe.prp1 = ram;
    sqe.prp2 = FA_PAM_SEG;
    sqe.cdw10 = FA_LBA;
    sqe.cdw12 = 2 * FA_BS / 512 - 1;
    cid = nh_submit(d->h, d->q, &sqe);
    ck_assert_msg(fa_wait_runstate(d, "io-error"),
                  "the VM did not stop on the read error");
    fa_pam_seg(d, 0);
    qt_qmp_ok(d->qt, "{\"execute\": \"cont\"}");
    ck_assert(fa_wait_runstate(d, "running"));
    ck_assert_msg(nh_wait_cid(d->h, d->q, cid, &cqe, 1000 * 1000 * 1000),
                  "no completion after cont");
    ck_status(nh_status(&cqe), NVME_SC_DATA_TRANSFER_ERROR,
              "the read, sent again into what is not RAM any more");
    ck_assert_uint_eq(fa_smart(d, SMART_MEDIA_ERRORS), 0);
    qt_memread(d->qt, ram, got, sizeof(got));
    ck_assert_msg(!memcmp(got, fill, sizeof(got)),
                  "the RAM half was written: bytes moved before the refusal");

    /* RAM again: the same read into the segment works */
    fa_pam_seg(d, 3);
    nh_sqe_init(&sqe, 0x02, 1);
    sqe.prp1 = FA_PAM_SEG;
    sqe.cdw10 = FA_LBA;
    sqe.cdw12 = FA_BS / 512 - 1;
    cqe = nh_cmd(d->h, d->q, &sqe);
    ck_status(nh_status(&cqe), 0, "read into the segment, RAM again");
    qt_memread(d->qt, FA_PAM_SEG, got, sizeof(got));
    ck_assert(!memcmp(got, w, sizeof(got)));
    fa_close(d);
    fa_iothread = false;
}
END_TEST

/* ---- the host's disk: deallocation must not allocate ---------------- */

static uint64_t fa_allocated(const char *path)
{
    struct stat st;

    ck_assert(stat(path, &st) == 0);
    return (uint64_t)st.st_blocks * 512;
}

static uint16_t fa_admin(Dev *d, uint8_t opc, uint32_t cdw10)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, opc, 1);
    sqe.cdw10 = cdw10;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    return nh_status(&cqe);
}

/*
 * A sparse image with 1 MiB written: Format, a whole-namespace DSM, Write
 * Zeroes over 128 MiB and a Sanitize each make it read as zeroes without
 * allocating the rest (the
 * soak's Format of a 0.8 TB image once wrote 800 GB and filled the disk).
 */
START_TEST(test_deallocation_keeps_image_sparse)
{
    Dev *d = dev_open();
    uint8_t buf[FA_BS], got[FA_BS], zero[FA_BS] = { 0 };
    uint64_t a = nh_alloc(d->h, 4096, 4096), before;
    uint32_t range[4] = { 0, DEV_NS_LBAS, 0, 0 };  /* attrs, NLB, SLBA */
    NvmeSqe sqe;
    NvmeCqe cqe;

    fa_fill(buf, 0x66);
    for (unsigned i = 0; i < 256; i++) {
        ck_status(nh_write(d->h, d->q, FA_LBA + i * 8, buf, FA_BS), 0,
                  "write %u", i);
    }
    before = fa_allocated(d->img);
    switch (_i) {
    case 0:
        ck_status(fa_admin(d, 0x80, 0), 0, "Format");
        break;
    case 1:
        qt_memwrite(d->qt, a, range, sizeof(range));
        nh_sqe_init(&sqe, 0x09, 1);
        sqe.prp1 = a;
        sqe.cdw11 = 1u << 2;            /* AD: deallocate */
        cqe = nh_cmd(d->h, d->q, &sqe);
        ck_status(nh_status(&cqe), 0, "DSM deallocate of the namespace");
        break;
    case 2:
        /* 4 x 32 MiB, the written MiB among them */
        for (unsigned i = 0; i < 4; i++) {
            ck_status(nh_io(d->h, d->q, 0x08, 1, (uint64_t)i * 65536, 65536,
                            0, 0, NULL), 0, "Write Zeroes %u", i);
        }
        break;
    default:
        ck_status(fa_admin(d, 0x84, 2 /* block erase */), 0, "Sanitize");
        for (int i = 0; i < 600; i++) {
            uint8_t log[512];

            ck_status(nh_get_log(d->h, 0x81, 0, log, sizeof(log), 0), 0,
                      "sanitize log");
            if ((le16_at(log, 2) & 7) != 2) {
                break;
            }
            qt_clock_step(d->qt, 1000000000);
        }
        break;
    }
    ck_status(nh_read(d->h, d->q, FA_LBA, got, FA_BS), 0, "read");
    ck_assert(!memcmp(got, zero, FA_BS));
    fprintf(stderr, "deallocation %d: image allocated %" PRIu64 " KiB "
            "before, %" PRIu64 " KiB after\n", _i, before >> 10,
            fa_allocated(d->img) >> 10);
    ck_assert_uint_le(fa_allocated(d->img), before + (4 << 20));
    dev_close(d);
}
END_TEST

/*
 * A reset while a Format or a Sanitize zeroes the backend step by step
 * (an image with 256 data extents, each zeroing throttled to 50 a
 * second): the reset waits for the Format's step in flight, and not at
 * all for the Sanitize (it goes on across resets), never for a drain
 * that would not end (the drain would hold the next step back while the
 * zeroing waited for it).  _i: Format, Sanitize; main loop, IOThread.
 */
START_TEST(test_reset_during_format)
{
    g_autofree char *img = qt_backing_file("fa-ext.img", DEV_NS_BYTES, "raw");
    g_autofree char *drive = g_strdup_printf("file=%s,format=raw,"
                                             "throttling.iops-write=50", img);
    uint8_t buf[FA_BS];
    NvmeSqe sqe;
    Dev *d;
    FILE *f = fopen(img, "r+");

    fa_fill(buf, 0x77);
    for (unsigned i = 0; i < 256; i++) {
        ck_assert(fseek(f, (long)i << 20, SEEK_SET) == 0);
        ck_assert(fwrite(buf, FA_BS, 1, f) == 1);
    }
    fclose(f);
    /*
     * timing=off for the Sanitize: its zeroing starts at once, not after
     * the model's erase time (a long qtest clock step would crawl through
     * an IOThread's timers at host speed).
     */
    d = dev_open_drive(drive, _i & 1 ? (_i < 2 ? ",iothread=io0" :
                                        ",iothread=io0,timing=off") :
                                       (_i < 2 ? "" : ",timing=off"),
                       _i & 1 ? "-object iothread,id=io0" : "");
    if (_i < 2) {
        nh_sqe_init(&sqe, 0x80, 1);
    } else {
        nh_sqe_init(&sqe, 0x84, 0);
        sqe.cdw10 = 2;                  /* block erase */
    }
    nh_submit(d->h, d->h->admin, &sqe);
    qt_clock_step(d->qt, 1000000);
    g_usleep(100000);                   /* a few steps of zeroing */
    nh_disable(d->h);
    dev_reprobe(d);
    if (_i < 2) {
        ck_status(nh_read(d->h, d->q, FA_LBA, buf, FA_BS), 0,
                  "read after the reset");
    }
    dev_close(d);
    unlink(img);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("faults");
    TCase *tc = tcase_create("blkdebug");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_read_error_reported);
    tcase_add_test(tc, test_write_error_reported);
    tcase_add_test(tc, test_write_error_ignored);
    tcase_add_test(tc, test_flush_error_reported);
    /* _i: 0 in the main loop, 1 in an IOThread */
    tcase_add_loop_test(tc, test_enospc_stops_then_cont_retries, 0, 2);
    tcase_add_loop_test(tc, test_reset_while_stopped, 0, 2);
    tcase_add_loop_test(tc, test_read_into_memory_turned_rom, 0, 2);
    tcase_add_loop_test(tc, test_reset_during_format, 0, 4);
    /* _i: Format, DSM, Write Zeroes, Sanitize */
    tcase_add_loop_test(tc, test_deallocation_keeps_image_sparse, 0, 4);
    suite_add_tcase(s, tc);
    return dev_main(s);
}
