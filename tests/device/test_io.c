/*
 * I/O commands: data integrity, PRPs, SGLs, every I/O command and the
 * errors they must report.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "dev.h"

static void write_read_check(Dev *d, uint64_t slba, uint64_t len,
                             uint64_t seed)
{
    g_autofree uint8_t *w = g_malloc(len);
    g_autofree uint8_t *r = g_malloc(len);

    nh_pattern(w, len, seed);
    ck_status(nh_write(d->h, d->q, slba, w, len), 0, "write %" PRIu64
              " bytes at LBA %" PRIu64, len, slba);
    ck_status(nh_read(d->h, d->q, slba, r, len), 0, "read %" PRIu64
              " bytes at LBA %" PRIu64, len, slba);
    ck_assert_msg(memcmp(w, r, len) == 0, "data read at LBA %" PRIu64
                  " differs from what was written", slba);
}

static bool is_zero(const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i]) {
            return false;
        }
    }
    return true;
}

START_TEST(test_write_read_sizes)
{
    Dev *d = dev_open();

    write_read_check(d, 0, 512, 1);
    write_read_check(d, 1, 4096, 2);                  /* unaligned LBA */
    write_read_check(d, 100, 8192, 3);                /* PRP1 + PRP2 */
    write_read_check(d, 1000, 64 * 1024, 4);          /* PRP list */
    write_read_check(d, 5000, 128 * 1024, 5);         /* MDTS */
    write_read_check(d, DEV_NS_LBAS - 8, 4096, 6);    /* last LBAs */
    /* the data reached the backing file */
    {
        uint8_t w[512], f[512];

        nh_pattern(w, 512, 1);
        dev_backing_read(d, 0, f, 512);
        ck_assert_msg(memcmp(w, f, 512) == 0, "backing file does not hold "
                      "the written data");
    }
    dev_close(d);
}
END_TEST

START_TEST(test_prp_unaligned_offset)
{
    Dev *d = dev_open();
    uint8_t w[12288], r[12288];
    uint64_t buf = nh_alloc(d->h, 4 * 4096, 4096) + 0x204;

    nh_pattern(w, sizeof(w), 7);
    qt_memwrite(d->qt, buf, w, sizeof(w));
    /* 24 LBAs from a dword-aligned offset in a page: 4 pages, PRP list */
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE, 1, 64, 24, buf, 0, NULL), 0,
              "write from page offset 0x204");
    buf = nh_alloc(d->h, 4 * 4096, 4096) + 0x800;
    ck_status(nh_io(d->h, d->q, NVME_CMD_READ, 1, 64, 24, buf, 0, NULL), 0,
              "read to page offset 0x800");
    qt_memread(d->qt, buf, r, sizeof(r));
    ck_assert(memcmp(w, r, sizeof(r)) == 0);
    dev_close(d);
}
END_TEST

START_TEST(test_prp_list_chained)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    g_autofree uint8_t *w = g_malloc(64 * 1024);
    g_autofree uint8_t *r = g_malloc(64 * 1024);
    uint64_t data = nh_alloc(h, 16 * 4096, 4096);
    uint64_t lists = nh_alloc(h, 2 * 4096, 4096);
    uint64_t l1 = lists + 4096 - 3 * 8;   /* 3 slots left in the page */
    uint64_t l2 = lists + 4096;
    uint64_t e[16];
    NvmeSqe sqe;
    NvmeCqe cqe;

    /* PRP1 = page 0; list: pages 1, 2, then a pointer to pages 3..15 */
    e[0] = data + 4096;
    e[1] = data + 2 * 4096;
    e[2] = l2;
    qt_memwrite(d->qt, l1, e, 3 * 8);
    for (int i = 0; i < 13; i++) {
        e[i] = data + (3 + i) * 4096;
    }
    qt_memwrite(d->qt, l2, e, 13 * 8);
    nh_pattern(w, 64 * 1024, 8);
    qt_memwrite(d->qt, data, w, 64 * 1024);

    nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
    sqe.prp1 = data;
    sqe.prp2 = l1;
    sqe.cdw10 = 2048;
    sqe.cdw12 = 127;
    cqe = nh_cmd(h, d->q, &sqe);
    ck_status(nh_status(&cqe), 0, "write through a chained PRP list");
    ck_status(nh_read(h, d->q, 2048, r, 64 * 1024), 0, "read back");
    ck_assert_msg(memcmp(w, r, 64 * 1024) == 0, "chained PRP list: data "
                  "differs");
    dev_close(d);
}
END_TEST

static void sgl_desc(NvmeSglDesc *s, uint64_t addr, uint32_t len,
                     uint8_t type)
{
    memset(s, 0, sizeof(*s));
    s->addr = addr;
    s->len = len;
    s->type = type;
}

START_TEST(test_sgl_data_block)
{
    Dev *d = dev_open();
    uint8_t w[4096], r[4096];
    uint64_t buf = nh_alloc(d->h, 4096, 4096) + 16;
    NvmeSglDesc sgl;
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_pattern(w, sizeof(w), 9);
    qt_memwrite(d->qt, buf, w, sizeof(w));
    nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
    sqe.flags = NVME_PSDT_SGL;
    sgl_desc(&sgl, buf, 4096, NVME_SGL_DATA_BLOCK);
    memcpy(&sqe.prp1, &sgl, 16);
    sqe.cdw10 = 300;
    sqe.cdw12 = 7;
    cqe = nh_cmd(d->h, d->q, &sqe);
    ck_status(nh_status(&cqe), 0, "write with one SGL data block");
    ck_status(nh_read(d->h, d->q, 300, r, 4096), 0, "read back");
    ck_assert(memcmp(w, r, sizeof(r)) == 0);
    dev_close(d);
}
END_TEST

START_TEST(test_sgl_segments)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint8_t w[16384], r[16384];
    uint64_t bufs = nh_alloc(h, 8 * 4096, 4096);
    uint64_t seg1 = nh_alloc(h, 4096, 16);
    uint64_t seg2 = nh_alloc(h, 4096, 16);
    NvmeSglDesc s1[3], s2[2], sgl;
    NvmeSqe sqe;
    NvmeCqe cqe;

    /* 16 KiB as 1 KiB + 3 KiB (segment), then 8 KiB + 4 KiB (last) */
    nh_pattern(w, sizeof(w), 10);
    sgl_desc(&s1[0], bufs + 100 * 4, 1024, NVME_SGL_DATA_BLOCK);
    sgl_desc(&s1[1], bufs + 4096, 3072, NVME_SGL_DATA_BLOCK);
    sgl_desc(&s1[2], seg2, sizeof(s2), NVME_SGL_LAST_SEG);
    sgl_desc(&s2[0], bufs + 2 * 4096, 8192, NVME_SGL_DATA_BLOCK);
    sgl_desc(&s2[1], bufs + 5 * 4096 + 512, 4096, NVME_SGL_DATA_BLOCK);
    qt_memwrite(d->qt, seg1, s1, sizeof(s1));
    qt_memwrite(d->qt, seg2, s2, sizeof(s2));
    qt_memwrite(d->qt, bufs + 400, w, 1024);
    qt_memwrite(d->qt, bufs + 4096, w + 1024, 3072);
    qt_memwrite(d->qt, bufs + 2 * 4096, w + 4096, 8192);
    qt_memwrite(d->qt, bufs + 5 * 4096 + 512, w + 12288, 4096);

    nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
    sqe.flags = NVME_PSDT_SGL;
    sgl_desc(&sgl, seg1, sizeof(s1), NVME_SGL_SEGMENT);
    memcpy(&sqe.prp1, &sgl, 16);
    sqe.cdw10 = 400;
    sqe.cdw12 = 31;
    cqe = nh_cmd(h, d->q, &sqe);
    ck_status(nh_status(&cqe), 0, "write through SGL segment + last "
              "segment");
    ck_status(nh_read(h, d->q, 400, r, sizeof(r)), 0, "read back");
    ck_assert_msg(memcmp(w, r, sizeof(r)) == 0, "SGL segments: data "
                  "differs");

    /* and read through a last segment straight from the command */
    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.flags = NVME_PSDT_SGL;
    qt_memset(d->qt, bufs, 0, 8 * 4096);
    sgl_desc(&s2[0], bufs, 8192, NVME_SGL_DATA_BLOCK);
    sgl_desc(&s2[1], bufs + 3 * 4096, 8192, NVME_SGL_DATA_BLOCK);
    qt_memwrite(d->qt, seg2, s2, sizeof(s2));
    sgl_desc(&sgl, seg2, sizeof(s2), NVME_SGL_LAST_SEG);
    memcpy(&sqe.prp1, &sgl, 16);
    sqe.cdw10 = 400;
    sqe.cdw12 = 31;
    cqe = nh_cmd(h, d->q, &sqe);
    ck_status(nh_status(&cqe), 0, "read through an SGL last segment");
    qt_memread(d->qt, bufs, r, 8192);
    qt_memread(d->qt, bufs + 3 * 4096, r + 8192, 8192);
    ck_assert(memcmp(w, r, sizeof(r)) == 0);
    dev_close(d);
}
END_TEST

/*
 * A read whose pieces overlap (the same page twice in a PRP list, SGL
 * blocks that share bytes): the last piece in the list wins, every run
 * (hw/h3100-blkdma.c lands such a read in a buffer first).
 */
START_TEST(test_read_overlapping_pieces)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint8_t w[12288], r[6144];
    uint64_t buf = nh_alloc(h, 3 * 4096, 4096);
    uint64_t seg = nh_alloc(h, 4096, 16);
    NvmeSglDesc s[3], sgl;
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_pattern(w, sizeof(w), 11);
    ck_status(nh_write(h, d->q, 600, w, sizeof(w)), 0, "write 12 KiB");

    /* PRP1 and PRP2 both name buf: it holds the second 4 KiB */
    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.prp1 = buf;
    sqe.prp2 = buf;
    sqe.cdw10 = 600;
    sqe.cdw12 = 15;
    cqe = nh_cmd(h, d->q, &sqe);
    ck_status(nh_status(&cqe), 0, "read into one page twice");
    qt_memread(d->qt, buf, r, 4096);
    ck_assert_msg(memcmp(r, w + 4096, 4096) == 0,
                  "the page does not hold the second piece");

    /* SGL: [buf, 4K) then [buf + 2K, 4K) then [buf + 8K, 4K) */
    qt_memset(d->qt, buf, 0, 3 * 4096);
    sgl_desc(&s[0], buf, 4096, NVME_SGL_DATA_BLOCK);
    sgl_desc(&s[1], buf + 2048, 4096, NVME_SGL_DATA_BLOCK);
    sgl_desc(&s[2], buf + 8192, 4096, NVME_SGL_DATA_BLOCK);
    qt_memwrite(d->qt, seg, s, sizeof(s));
    nh_sqe_init(&sqe, NVME_CMD_READ, 1);
    sqe.flags = NVME_PSDT_SGL;
    sgl_desc(&sgl, seg, sizeof(s), NVME_SGL_LAST_SEG);
    memcpy(&sqe.prp1, &sgl, 16);
    sqe.cdw10 = 600;
    sqe.cdw12 = 23;
    cqe = nh_cmd(h, d->q, &sqe);
    ck_status(nh_status(&cqe), 0, "read through overlapping SGL blocks");
    qt_memread(d->qt, buf, r, sizeof(r));
    ck_assert_msg(memcmp(r, w, 2048) == 0, "the first piece's own bytes");
    ck_assert_msg(memcmp(r + 2048, w + 4096, 4096) == 0,
                  "the shared bytes are not the second piece's");
    qt_memread(d->qt, buf + 8192, r, 4096);
    ck_assert(memcmp(r, w + 8192, 4096) == 0);
    dev_close(d);
}
END_TEST

/*
 * More data pieces than preadv takes (IOV_MAX, 1024): 2048 SGL blocks of
 * 64 bytes, 64 bytes apart, written and read back through one buffer
 * (hw/h3100-blkdma.c) instead of failing in the backend.
 */
#define IO_PIECES       2048
#define IO_PIECE        64u

static void io_pieces_cmd(Dev *d, uint8_t opc, uint64_t bufs, uint64_t seg)
{
    g_autofree NvmeSglDesc *s = g_new0(NvmeSglDesc, IO_PIECES);
    NvmeSglDesc sgl;
    NvmeSqe sqe;
    NvmeCqe cqe;

    for (unsigned i = 0; i < IO_PIECES; i++) {
        sgl_desc(&s[i], bufs + 2 * IO_PIECE * i, IO_PIECE,
                 NVME_SGL_DATA_BLOCK);
    }
    qt_memwrite(d->qt, seg, s, IO_PIECES * sizeof(*s));
    nh_sqe_init(&sqe, opc, 1);
    sqe.flags = NVME_PSDT_SGL;
    sgl_desc(&sgl, seg, IO_PIECES * sizeof(*s), NVME_SGL_LAST_SEG);
    memcpy(&sqe.prp1, &sgl, 16);
    sqe.cdw10 = 800;
    sqe.cdw12 = IO_PIECES * IO_PIECE / 512 - 1;
    cqe = nh_cmd(d->h, d->q, &sqe);
    ck_status(nh_status(&cqe), 0, "opcode %u through %u SGL blocks", opc,
              IO_PIECES);
}

START_TEST(test_more_pieces_than_iov_max)
{
    Dev *d = dev_open();
    size_t len = IO_PIECES * IO_PIECE;
    g_autofree uint8_t *w = g_malloc(len);
    g_autofree uint8_t *r = g_malloc(len);
    g_autofree uint8_t *p = g_malloc(IO_PIECE);
    uint64_t bufs = nh_alloc(d->h, 2 * len, 4096);
    uint64_t seg = nh_alloc(d->h, IO_PIECES * sizeof(NvmeSglDesc), 4096);

    nh_pattern(w, len, 12);
    for (unsigned i = 0; i < IO_PIECES; i++) {
        qt_memwrite(d->qt, bufs + 2 * IO_PIECE * i, w + IO_PIECE * i,
                    IO_PIECE);
    }
    io_pieces_cmd(d, NVME_CMD_WRITE, bufs, seg);
    ck_status(nh_read(d->h, d->q, 800, r, len), 0, "read back");
    ck_assert_msg(memcmp(w, r, len) == 0, "the pieces were not written");

    qt_memset(d->qt, bufs, 0, 2 * len);
    io_pieces_cmd(d, NVME_CMD_READ, bufs, seg);
    for (unsigned i = 0; i < IO_PIECES; i++) {
        qt_memread(d->qt, bufs + 2 * IO_PIECE * i, p, IO_PIECE);
        ck_assert_msg(memcmp(p, w + IO_PIECE * i, IO_PIECE) == 0,
                      "piece %u read wrong", i);
    }
    dev_close(d);
}
END_TEST

START_TEST(test_flush_and_fua)
{
    Dev *d = dev_open();
    uint8_t w[4096], f[4096];
    uint64_t buf = nh_alloc(d->h, 4096, 4096);

    ck_status(nh_flush(d->h, d->q, 1), 0, "Flush of namespace 1");
    ck_status(nh_flush(d->h, d->q, 0xffffffff), 0, "Flush of all "
              "namespaces");
    nh_pattern(w, sizeof(w), 11);
    qt_memwrite(d->qt, buf, w, sizeof(w));
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE, 1, 800, 8, buf, 1u << 30,
                    NULL), 0, "FUA write");
    dev_backing_read(d, 800 * 512, f, sizeof(f));
    ck_assert_msg(memcmp(w, f, sizeof(f)) == 0, "FUA write completed but "
                  "the backing file lacks the data");
    ck_status(nh_flush(d->h, d->q, 2), NVME_SC_INVALID_NSID, "Flush of "
              "namespace 2");
    dev_close(d);
}
END_TEST

START_TEST(test_write_zeroes)
{
    Dev *d = dev_open();
    uint8_t w[8192], r[8192];

    nh_pattern(w, sizeof(w), 12);
    ck_status(nh_write(d->h, d->q, 2000, w, sizeof(w)), 0, "write");
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_ZEROES, 1, 2004, 8, 0, 0,
                    NULL), 0, "Write Zeroes");
    ck_status(nh_read(d->h, d->q, 2000, r, sizeof(r)), 0, "read");
    ck_assert_msg(memcmp(w, r, 2048) == 0, "LBAs before the range changed");
    ck_assert_msg(is_zero(r + 2048, 4096), "Write Zeroes range not zero");
    ck_assert_msg(memcmp(w + 6144, r + 6144, 2048) == 0, "LBAs after the "
                  "range changed");
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_ZEROES, 1, DEV_NS_LBAS - 1,
                    2, 0, 0, NULL), NVME_SC_LBA_RANGE, "Write Zeroes past "
              "the end");
    /* no data transfer: MDTS does not limit it */
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_ZEROES, 1, 65536, 65536, 0, 0,
                    NULL), 0, "Write Zeroes of 65536 LBAs (32 MiB)");
    dev_close(d);
}
END_TEST

START_TEST(test_dsm_deallocate)
{
    Dev *d = dev_open();
    uint8_t w[16384], r[16384];
    uint32_t range[4][4] = {
        { 0, 8, 3000, 0 },            /* attrs, NLB, SLBA lo, SLBA hi */
        { 0, 8, 3016, 0 },
    };
    uint64_t buf = nh_alloc(d->h, 4096, 4096);
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_pattern(w, sizeof(w), 13);
    ck_status(nh_write(d->h, d->q, 3000, w, sizeof(w)), 0, "write");
    qt_memwrite(d->qt, buf, range, sizeof(range));
    nh_sqe_init(&sqe, NVME_CMD_DSM, 1);
    sqe.prp1 = buf;
    sqe.cdw10 = 1;                    /* two ranges, 0's based */
    sqe.cdw11 = 1u << 2;              /* AD: deallocate */
    cqe = nh_cmd(d->h, d->q, &sqe);
    ck_status(nh_status(&cqe), 0, "Dataset Management deallocate");
    ck_status(nh_read(d->h, d->q, 3000, r, sizeof(r)), 0, "read");
    ck_assert_msg(is_zero(r, 4096), "deallocated LBAs 3000-3007 do not "
                  "read as zeroes");
    ck_assert_msg(memcmp(w + 4096, r + 4096, 4096) == 0, "LBAs 3008-3015 "
                  "were not in a range but changed");
    ck_assert_msg(is_zero(r + 8192, 4096), "deallocated LBAs 3016-3023 do "
                  "not read as zeroes");
    ck_assert(memcmp(w + 12288, r + 12288, 4096) == 0);

    /* 256 ranges, some empty, all over the namespace */
    {
        uint32_t many[256][4];
        uint64_t list = nh_alloc(d->h, sizeof(many), 4096);

        for (int i = 0; i < 256; i++) {
            many[i][0] = 0;
            many[i][1] = i % 5 ? (i * 7) % 300 : 0;
            many[i][2] = (uint32_t)((i * 1000003ull) % (DEV_NS_LBAS - 300));
            many[i][3] = 0;
        }
        qt_memwrite(d->qt, list, many, sizeof(many));
        nh_sqe_init(&sqe, NVME_CMD_DSM, 1);
        nh_set_prps(d->h, &sqe, list, sizeof(many));
        sqe.cdw10 = 255;
        sqe.cdw11 = 1u << 2;
        cqe = nh_cmd(d->h, d->q, &sqe);
        ck_status(nh_status(&cqe), 0, "deallocate 256 ranges");
    }
    /* a range beyond the namespace */
    range[0][2] = (uint32_t)(DEV_NS_LBAS - 4);
    qt_memwrite(d->qt, buf, range, sizeof(range));
    nh_sqe_init(&sqe, NVME_CMD_DSM, 1);
    sqe.prp1 = buf;
    sqe.cdw10 = 0;
    sqe.cdw11 = 1u << 2;
    cqe = nh_cmd(d->h, d->q, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_LBA_RANGE, "deallocate past the "
              "end");
    dev_close(d);
}
END_TEST

START_TEST(test_compare)
{
    Dev *d = dev_open();
    uint8_t w[4096];
    uint64_t buf = nh_alloc(d->h, 4096, 4096);

    nh_pattern(w, sizeof(w), 14);
    ck_status(nh_write(d->h, d->q, 4000, w, sizeof(w)), 0, "write");
    qt_memwrite(d->qt, buf, w, sizeof(w));
    ck_status(nh_io(d->h, d->q, NVME_CMD_COMPARE, 1, 4000, 8, buf, 0, NULL),
              0, "Compare of identical data");
    w[1234] ^= 0x40;
    qt_memwrite(d->qt, buf, w, sizeof(w));
    ck_status(nh_io(d->h, d->q, NVME_CMD_COMPARE, 1, 4000, 8, buf, 0, NULL),
              NVME_SC_COMPARE_FAILED, "Compare of different data");
    dev_close(d);
}
END_TEST

START_TEST(test_write_uncorrectable)
{
    Dev *d = dev_open();
    uint8_t w[4096], r[4096];

    nh_pattern(w, sizeof(w), 15);
    ck_status(nh_write(d->h, d->q, 5000, w, sizeof(w)), 0, "write");
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, 5002, 2, 0, 0,
                    NULL), 0, "Write Uncorrectable of LBAs 5002-5003");
    ck_status(nh_read(d->h, d->q, 5000, r, 4096), NVME_SC_UNRECOVERED_READ,
              "read over uncorrectable LBAs");
    ck_status(nh_read(d->h, d->q, 5003, r, 512), NVME_SC_UNRECOVERED_READ,
              "read of uncorrectable LBA 5003");
    ck_status(nh_read(d->h, d->q, 5004, r, 2048), 0, "read after the "
              "uncorrectable LBAs");
    ck_status(nh_read(d->h, d->q, 5000, r, 1024), 0, "read before them");
    /* rewriting one LBA heals only that one */
    ck_status(nh_write(d->h, d->q, 5002, w, 512), 0, "rewrite LBA 5002");
    ck_status(nh_read(d->h, d->q, 5002, r, 512), 0, "read rewritten LBA");
    ck_status(nh_read(d->h, d->q, 5003, r, 512), NVME_SC_UNRECOVERED_READ,
              "LBA 5003 still uncorrectable");
    ck_status(nh_write(d->h, d->q, 5000, w, 4096), 0, "rewrite all");
    ck_status(nh_read(d->h, d->q, 5000, r, 4096), 0, "read after rewrite");
    ck_assert(memcmp(w, r, 4096) == 0);
    dev_close(d);
}
END_TEST

/* Get LBA Status (86h) into @buf (@len bytes); the command's status */
static uint16_t gls(Dev *d, uint32_t nsid, uint64_t slba, uint32_t len,
                    uint8_t atype, uint16_t rl, uint8_t *buf)
{
    uint64_t a = nh_alloc(d->h, 4096, 4096);
    NvmeSqe sqe;
    NvmeCqe cqe;

    qt_memset(d->h->qt, a, 0xff, 4096);
    nh_sqe_init(&sqe, NVME_ADM_GET_LBA_STATUS, nsid);
    nh_set_prps(d->h, &sqe, a, len);
    sqe.cdw10 = (uint32_t)slba;
    sqe.cdw11 = slba >> 32;
    sqe.cdw12 = len / 4 - 1;
    sqe.cdw13 = (uint32_t)atype << 24 | rl;
    cqe = nh_cmd(d->h, d->h->admin, &sqe);
    qt_memread(d->h->qt, a, buf, len);
    return nh_status(&cqe);
}

/* descriptor @i of @buf is LBAs @lba.. (@nlb of them) */
static void gls_desc(const uint8_t *buf, unsigned i, uint64_t lba,
                     uint32_t nlb, const char *what)
{
    const uint8_t *e = buf + 8 + 16 * i;
    uint64_t got = le64_at(e, 0);

    ck_assert_msg(got == lba && le32_at(e, 8) == nlb, "%s: descriptor %u "
                  "is LBA %" PRIu64 " + %u, not %" PRIu64 " + %u", what, i,
                  got, le32_at(e, 8), lba, nlb);
}

/*
 * Get LBA Status reports what Write Uncorrectable made unreadable: the
 * ranges within SLBA / RL, cut at MNDW with CMPC saying so, healed LBAs
 * gone; the spec's statuses for a bad NSID, ATYPE and SLBA.
 */
START_TEST(test_get_lba_status)
{
    Dev *d = dev_open();
    uint8_t w[512] = { 0 }, b[4096];
    uint64_t nsze = d->h->nsze;

    ck_status(gls(d, 1, 0, 4096, 0x11, 0, b), 0, "Get LBA Status, clean");
    ck_assert_msg(le32_at(b, 0) == 0 && b[4] == 2, "clean drive: NLSD %u "
                  "CMPC %u", le32_at(b, 0), b[4]);
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, 5002, 2, 0, 0,
                    NULL), 0, "Write Uncorrectable of LBAs 5002-5003");
    ck_status(nh_io(d->h, d->q, NVME_CMD_WRITE_UNCOR, 1, 9000, 10, 0, 0,
                    NULL), 0, "Write Uncorrectable of LBAs 9000-9009");

    ck_status(gls(d, 1, 0, 4096, 0x11, 0, b), 0, "tracked, whole namespace");
    ck_assert_msg(le32_at(b, 0) == 2 && b[4] == 2, "NLSD %u CMPC %u",
                  le32_at(b, 0), b[4]);
    gls_desc(b, 0, 5002, 2, "whole namespace");
    gls_desc(b, 1, 9000, 10, "whole namespace");

    ck_status(gls(d, 1, 5003, 4096, 0x10, 4000, b), 0, "scan from 5003");
    ck_assert_msg(le32_at(b, 0) == 2, "from 5003: NLSD %u", le32_at(b, 0));
    gls_desc(b, 0, 5003, 1, "from 5003");
    gls_desc(b, 1, 9000, 3, "from 5003, RL 4000 (to LBA 9002)");

    ck_status(gls(d, 1, 0, 24, 0x11, 0, b), 0, "room for one descriptor");
    ck_assert_msg(le32_at(b, 0) == 1 && b[4] == 1, "MNDW 5: NLSD %u CMPC %u",
                  le32_at(b, 0), b[4]);
    gls_desc(b, 0, 5002, 2, "MNDW 5");

    ck_status(nh_write(d->h, d->q, 5002, w, 512), 0, "rewrite LBA 5002");
    ck_status(gls(d, 1, 0, 4096, 0x11, 0, b), 0, "after the rewrite");
    ck_assert_msg(le32_at(b, 0) == 2, "after the rewrite: NLSD %u",
                  le32_at(b, 0));
    gls_desc(b, 0, 5003, 1, "after the rewrite");

    ck_status(gls(d, 1, 0, 4096, 0x02, 0, b), NVME_SC_INVALID_FIELD,
              "ATYPE 02h");
    ck_status(gls(d, 1, nsze, 4096, 0x11, 0, b), NVME_SC_LBA_RANGE,
              "SLBA = NSZE");
    ck_status(gls(d, 2, 0, 4096, 0x11, 0, b), NVME_SC_INVALID_NSID,
              "NSID 2, no namespace");
    ck_status(gls(d, 0, 0, 4096, 0x11, 0, b), NVME_SC_INVALID_NSID,
              "NSID 0");
    dev_close(d);
}
END_TEST

START_TEST(test_lba_range_nsid_mdts)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint64_t buf = nh_alloc(h, 256 * 1024, 4096);
    uint32_t mdts_lbas = h->mdts_bytes / h->lba_size;

    ck_assert_msg(mdts_lbas > 0, "MDTS not reported");
    ck_status(nh_io(h, d->q, NVME_CMD_READ, 1, DEV_NS_LBAS - 4, 8, buf, 0,
                    NULL), NVME_SC_LBA_RANGE, "read past the end");
    ck_status(nh_io(h, d->q, NVME_CMD_WRITE, 1, DEV_NS_LBAS, 1, buf, 0,
                    NULL), NVME_SC_LBA_RANGE, "write at NSZE");
    ck_status(nh_io(h, d->q, NVME_CMD_READ, 1, 1ull << 40, 1, buf, 0, NULL),
              NVME_SC_LBA_RANGE, "read at LBA 2^40");
    ck_status(nh_io(h, d->q, NVME_CMD_READ, 2, 0, 1, buf, 0, NULL),
              NVME_SC_INVALID_NSID, "read of namespace 2");
    ck_status(nh_io(h, d->q, NVME_CMD_WRITE, 0, 0, 1, buf, 0, NULL),
              NVME_SC_INVALID_NSID, "write to namespace 0");
    ck_status(nh_io(h, d->q, NVME_CMD_READ, 1, 0, mdts_lbas + 1, buf, 0,
                    NULL), NVME_SC_INVALID_FIELD, "read above MDTS");
    ck_status(nh_io(h, d->q, NVME_CMD_READ, 1, 0, mdts_lbas, buf, 0, NULL),
              0, "read of exactly MDTS");

    /* after all this, I/O still works */
    write_read_check(d, 7, 4096, 16);
    dev_close(d);
}
END_TEST

/*
 * Commands the device must refuse: each row's command on the I/O queue of
 * namespace 1, and the status it must complete with.  A data pointer is
 * the buffer's address plus an offset (BUF), guest memory that does not
 * exist (UNMAPPED), or a PRP list of three pages of the buffer whose
 * second entry is 8 bytes into its page (BAD_LIST).  With sgl, the
 * command is PSDT = SGL and DPTR one descriptor of the buffer.
 */
typedef enum BadPtr { NO_PTR, BUF, UNMAPPED, BAD_LIST } BadPtr;

typedef struct BadCmd {
    const char *what;
    uint8_t opc;
    uint8_t flags;                    /* FUSE 1:0, PSDT 7:6 */
    BadPtr prp1, prp2;
    uint64_t prp1_off, prp2_off;      /* with BUF */
    uint32_t cdw10, cdw12;
    bool sgl;
    uint8_t sgl_type;
    uint32_t sgl_len;
    uint16_t status;
} BadCmd;

static uint64_t bad_ptr(Dev *d, uint64_t buf, BadPtr p, uint64_t off)
{
    uint64_t list;
    uint64_t e[3] = { buf + 4096, buf + 8192 + 8, buf + 12288 };

    switch (p) {
    case BUF:
        return buf + off;
    case UNMAPPED:
        return 1ull << 50;
    case BAD_LIST:
        list = nh_alloc(d->h, 4096, 4096);
        qt_memwrite(d->qt, list, e, sizeof(e));
        return list;
    default:
        return 0;
    }
}

/* Every row of @rows, in order, on one device; then I/O still works. */
static void run_bad_cmds(const BadCmd *rows, size_t n)
{
    Dev *d = dev_open();
    uint64_t buf = nh_alloc(d->h, 256 * 1024, 4096);
    size_t i;

    for (i = 0; i < n; i++) {
        const BadCmd *r = &rows[i];
        NvmeSqe sqe;
        NvmeCqe cqe;

        nh_sqe_init(&sqe, r->opc, 1);
        sqe.flags = r->flags;
        sqe.cdw10 = r->cdw10;
        sqe.cdw12 = r->cdw12;
        if (r->sgl) {
            NvmeSglDesc sgl = { .addr = buf, .len = r->sgl_len,
                                .type = r->sgl_type };

            memcpy(&sqe.prp1, &sgl, 16);
        } else {
            sqe.prp1 = bad_ptr(d, buf, r->prp1, r->prp1_off);
            sqe.prp2 = bad_ptr(d, buf, r->prp2, r->prp2_off);
        }
        cqe = nh_cmd(d->h, d->q, &sqe);
        ck_status(nh_status(&cqe), r->status, "row %zu, %s", i, r->what);
    }
    write_read_check(d, 7, 4096, 16);
    dev_close(d);
}

/* opcodes the NVM command set does not have */
static const BadCmd bad_opcodes[] = {
    { "I/O opcode 7Fh", .opc = 0x7f, .status = NVME_SC_INVALID_OPCODE },
    { "I/O opcode 0Dh (reservation register)", .opc = 0x0d,
      .status = NVME_SC_INVALID_OPCODE },
    { "I/O opcode 81h (vendor specific)", .opc = 0x81,
      .status = NVME_SC_INVALID_OPCODE },
    { "Identify on an I/O queue", .opc = NVME_ADM_IDENTIFY, .cdw10 = 1,
      .status = NVME_SC_INVALID_OPCODE },
};

START_TEST(test_invalid_opcode)
{
    run_bad_cmds(bad_opcodes, G_N_ELEMENTS(bad_opcodes));
}
END_TEST

static const BadCmd bad_prp_offsets[] = {
    { "PRP1 at +2 (not dword aligned)", .opc = NVME_CMD_READ,
      .prp1 = BUF, .prp1_off = 2, .status = NVME_SC_PRP_OFFSET_INVALID },
    { "PRP2 entry with an offset", .opc = NVME_CMD_READ, .prp1 = BUF,
      .prp2 = BUF, .prp2_off = 4096 + 512, .cdw12 = 15,
      .status = NVME_SC_PRP_OFFSET_INVALID },
    { "PRP list entry with an offset", .opc = NVME_CMD_READ, .prp1 = BUF,
      .prp2 = BAD_LIST, .cdw12 = 31, .status = NVME_SC_PRP_OFFSET_INVALID },
};

START_TEST(test_prp_offset_invalid)
{
    run_bad_cmds(bad_prp_offsets, G_N_ELEMENTS(bad_prp_offsets));
}
END_TEST

/* data pointers to memory that does not exist */
static const BadCmd bad_transfers[] = {
    { "read into unmapped guest memory", .opc = NVME_CMD_READ,
      .prp1 = UNMAPPED, .status = NVME_SC_DATA_TRANSFER_ERROR },
    { "write from unmapped guest memory", .opc = NVME_CMD_WRITE,
      .prp1 = UNMAPPED, .status = NVME_SC_DATA_TRANSFER_ERROR },
    { "PRP list in unmapped guest memory", .opc = NVME_CMD_READ,
      .prp1 = BUF, .prp2 = UNMAPPED, .cdw12 = 31,
      .status = NVME_SC_DATA_TRANSFER_ERROR },
};

START_TEST(test_data_transfer_error)
{
    run_bad_cmds(bad_transfers, G_N_ELEMENTS(bad_transfers));
}
END_TEST

static const BadCmd bad_fuse_psdt_sgl[] = {
    { "FUSE=01b (fused operations are not supported)", .opc = NVME_CMD_READ,
      .flags = 1, .prp1 = BUF, .status = NVME_SC_INVALID_FIELD },
    { "PSDT=11b (reserved)", .opc = NVME_CMD_READ, .flags = 3 << 6,
      .prp1 = BUF, .status = NVME_SC_INVALID_FIELD },
    { "SGL descriptor type Eh (reserved)", .opc = NVME_CMD_READ,
      .flags = NVME_PSDT_SGL, .sgl = true, .sgl_type = 0xe0, .sgl_len = 512,
      .status = NVME_SC_SGL_DESCR_TYPE_INVALID },
    { "SGL of 256 bytes for 512", .opc = NVME_CMD_READ,
      .flags = NVME_PSDT_SGL, .sgl = true, .sgl_type = NVME_SGL_DATA_BLOCK,
      .sgl_len = 256, .status = NVME_SC_DATA_SGL_LEN_INVALID },
};

START_TEST(test_fuse_psdt_sgl_errors)
{
    run_bad_cmds(bad_fuse_psdt_sgl, G_N_ELEMENTS(bad_fuse_psdt_sgl));
}
END_TEST

START_TEST(test_queue_wrap_and_depth)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    NvmeQueue *q = nh_create_ioq(h, 2, 4, -1);
    uint64_t buf = nh_alloc(h, 32 * 4096, 4096);
    uint8_t w[4096], r[4096];
    NvmeCqe cqe;

    /* 3 x 4 commands through a 4-entry queue: phase wraps */
    for (int i = 0; i < 12; i++) {
        nh_pattern(w, sizeof(w), 100 + i);
        ck_status(nh_write(h, q, 6000 + i * 8, w, sizeof(w)), 0, "write %d",
                  i);
    }
    for (int i = 0; i < 12; i++) {
        nh_pattern(w, sizeof(w), 100 + i);
        ck_status(nh_read(h, q, 6000 + i * 8, r, sizeof(r)), 0, "read %d",
                  i);
        ck_assert_msg(memcmp(w, r, sizeof(r)) == 0, "data of write %d", i);
    }
    /* 32 commands outstanding at once on queue 1 */
    for (int i = 0; i < 32; i++) {
        NvmeSqe sqe;

        nh_sqe_init(&sqe, NVME_CMD_READ, 1);
        nh_set_prps(h, &sqe, buf + i * 4096, 4096);
        sqe.cdw10 = 6000 + (i % 12) * 8;
        sqe.cdw12 = 7;
        sqe.cid = 1000 + i;
        nh_sq_put(h, d->q, &sqe, true);
    }
    nh_sq_ring(h, d->q);
    for (int i = 0; i < 32; i++) {
        ck_assert_msg(nh_wait(h, d->q, &cqe, 2000000000), "completion %d of "
                      "32 missing", i);
        ck_status(nh_status(&cqe), 0, "read cid %u", cqe.cid);
        ck_assert(cqe.cid >= 1000 && cqe.cid < 1032);
        ck_assert_uint_eq(cqe.sqid, 1);
    }
    for (int i = 0; i < 32; i++) {
        nh_pattern(w, sizeof(w), 100 + i % 12);
        qt_memread(d->qt, buf + i * 4096, r, 4096);
        ck_assert_msg(memcmp(w, r, 4096) == 0, "QD32 read %d", i);
    }
    dev_close(d);
}
END_TEST

START_TEST(test_iothread)
{
    Dev *d = dev_open_full(NULL, ",iothread=io0",
                           "-object iothread,id=io0");

    write_read_check(d, 0, 4096, 17);
    write_read_check(d, 9000, 128 * 1024, 18);
    ck_status(nh_flush(d->h, d->q, 1), 0, "flush");
    dev_close(d);
}
END_TEST

/*
 * Queues in two IOThreads (iothread-vq-mapping): round robin, qid 1 in
 * io1 and 2 in io2; then by "vqs", 1 in io2, 2 in io1 and 3 left to the
 * controller's main loop.  32 writes out on each queue at once, each
 * completed once; then read back crosswise, the data verified.
 */
static const char *const qmaps[] = {
    DEV_QMAP2,
    ",iothread-vq-mapping=[{\"iothread\": \"io1\", \"vqs\": [2]}, "
    "{\"iothread\": \"io2\", \"vqs\": [1]}]",
};

START_TEST(test_iothread_mapping)
{
    Dev *d = dev_open_full(NULL, qmaps[_i], DEV_IOT2);
    NvmeHost *h = d->h;
    NvmeQueue *q[4] = { NULL, d->q, nh_create_ioq(h, 2, 64, -1),
                        nh_create_ioq(h, 3, 64, -1) };
    uint64_t buf = nh_alloc(h, 3 * 32 * 4096, 4096);
    uint8_t w[4096], r[4096];
    NvmeCqe cqe;

    for (int i = 0; i < 32; i++) {
        for (int k = 1; k <= 3; k++) {
            NvmeSqe sqe;

            nh_pattern(w, sizeof(w), k * 1000 + i);
            qt_memwrite(d->qt, buf + ((k - 1) * 32 + i) * 4096, w, 4096);
            nh_sqe_init(&sqe, NVME_CMD_WRITE, 1);
            nh_set_prps(h, &sqe, buf + ((k - 1) * 32 + i) * 4096, 4096);
            sqe.cdw10 = (k * 32 + i) * 8;
            sqe.cdw12 = 7;
            sqe.cid = i;
            nh_sq_put(h, q[k], &sqe, true);
        }
    }
    for (int k = 1; k <= 3; k++) {
        nh_sq_ring(h, q[k]);
    }
    for (int k = 1; k <= 3; k++) {
        uint32_t seen = 0;

        for (int i = 0; i < 32; i++) {
            ck_assert_msg(nh_wait(h, q[k], &cqe, 2000000000), "queue %d: "
                          "completion %d of 32 missing", k, i);
            ck_status(nh_status(&cqe), 0, "queue %d write cid %u", k,
                      cqe.cid);
            ck_assert_uint_eq(cqe.sqid, k);
            ck_assert_msg(cqe.cid < 32 && !(seen & (1u << cqe.cid)),
                          "queue %d: cid %u twice or unknown", k, cqe.cid);
            seen |= 1u << cqe.cid;
        }
        ck_assert_msg(!nh_poll(h, q[k], &cqe), "queue %d: a completion too "
                      "many (cid %u)", k, cqe.cid);
    }
    for (int k = 1; k <= 3; k++) {
        for (int i = 0; i < 32; i++) {
            nh_pattern(w, sizeof(w), k * 1000 + i);
            ck_status(nh_read(h, q[k % 3 + 1], (k * 32 + i) * 8, r,
                              sizeof(r)), 0, "read %d.%d", k, i);
            ck_assert_msg(!memcmp(w, r, sizeof(r)), "data of write %d.%d",
                          k, i);
        }
    }
    ck_status(nh_flush(h, q[2], 1), 0, "flush");
    dev_close(d);
}
END_TEST

START_TEST(test_qcow2_backend)
{
    g_autofree char *img = NULL;
    QTest *qt;
    NvmeHost *h;
    NvmeQueue *q;
    uint8_t w[4096], r[4096];

    img = qt_backing_file("disk.qcow2", DEV_NS_BYTES, "qcow2");
    qt = qt_start("-drive file=%s,if=none,id=d0,format=qcow2 "
                  "-device dapustor-h3100,drive=d0,model-params=%s",
                  img, DEV_PARAMS);
    h = nh_new(qt);
    nh_enable(h, 8);
    nh_probe(h);
    q = nh_create_ioq(h, 1, 16, -1);
    nh_pattern(w, sizeof(w), 19);
    ck_status(nh_write(h, q, 123, w, sizeof(w)), 0, "qcow2 write");
    ck_status(nh_read(h, q, 123, r, sizeof(r)), 0, "qcow2 read");
    ck_assert(memcmp(w, r, sizeof(r)) == 0);
    qt_quit(qt);
    nh_free(h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("io");
    TCase *tc = dev_tcase(s, "data");

    tcase_add_test(tc, test_write_read_sizes);
    tcase_add_test(tc, test_prp_unaligned_offset);
    tcase_add_test(tc, test_prp_list_chained);
    tcase_add_test(tc, test_sgl_data_block);
    tcase_add_test(tc, test_sgl_segments);
    tcase_add_test(tc, test_read_overlapping_pieces);
    tcase_add_test(tc, test_more_pieces_than_iov_max);
    tcase_add_test(tc, test_queue_wrap_and_depth);
    tcase_add_test(tc, test_iothread);
    tcase_add_loop_test(tc, test_iothread_mapping, 0, G_N_ELEMENTS(qmaps));
    tcase_add_test(tc, test_qcow2_backend);
    tc = dev_tcase(s, "commands");
    tcase_add_test(tc, test_flush_and_fua);
    tcase_add_test(tc, test_write_zeroes);
    tcase_add_test(tc, test_dsm_deallocate);
    tcase_add_test(tc, test_compare);
    tcase_add_test(tc, test_write_uncorrectable);
    tcase_add_test(tc, test_get_lba_status);
    tcase_add_test(tc, test_lba_range_nsid_mdts);
    tcase_add_test(tc, test_invalid_opcode);
    tcase_add_test(tc, test_prp_offset_invalid);
    tcase_add_test(tc, test_data_transfer_error);
    tcase_add_test(tc, test_fuse_psdt_sgl_errors);
    return dev_main(s);
}
