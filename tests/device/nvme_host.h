/*
 * A tiny NVMe host driver over the qtest client: enough of a driver to
 * exercise every command of the DapuStor H3100 device from the tests.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_NVME_HOST_H
#define H3100_NVME_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "qtest.h"
#include "tables/nvme-cmds.h"
#include "h3100/log-pages.h"
#include "tables/features.h"

#define H3100_VENDOR_ID     0x1e3b
#define H3100_DEVICE_ID     0x1098

/* Controller registers (BAR0). */
#define NVME_REG_CAP        0x00
#define NVME_REG_VS         0x08
#define NVME_REG_INTMS      0x0c
#define NVME_REG_INTMC      0x10
#define NVME_REG_CC         0x14
#define NVME_REG_CSTS       0x1c
#define NVME_REG_NSSR       0x20
#define NVME_REG_AQA        0x24
#define NVME_REG_ASQ        0x28
#define NVME_REG_ACQ        0x30
#define NVME_REG_DBS        0x1000

#define NVME_CC_EN          (1u << 0)
#define NVME_CC_SHN_NORMAL  (1u << 14)
#define NVME_CC_SHN_MASK    (3u << 14)
#define NVME_CC_IOSQES(x)   ((uint32_t)(x) << 16)
#define NVME_CC_IOCQES(x)   ((uint32_t)(x) << 20)
#define NVME_CC_MPS(x)      ((uint32_t)(x) << 7)
#define NVME_CC_DEFAULT     (NVME_CC_IOSQES(6) | NVME_CC_IOCQES(4))

#define NVME_CSTS_RDY       (1u << 0)
#define NVME_CSTS_CFS       (1u << 1)
#define NVME_CSTS_SHST_MASK (3u << 2)
#define NVME_CSTS_SHST_DONE (2u << 2)

#define NVME_CAP_MQES(c)    ((uint32_t)((c) & 0xffff))
#define NVME_CAP_CQR(c)     ((uint32_t)(((c) >> 16) & 1))
#define NVME_CAP_TO(c)      ((uint32_t)(((c) >> 24) & 0xff))
#define NVME_CAP_DSTRD(c)   ((uint32_t)(((c) >> 32) & 0xf))
#define NVME_CAP_NSSRS(c)   ((uint32_t)(((c) >> 36) & 1))
#define NVME_CAP_CSS(c)     ((uint32_t)(((c) >> 37) & 0xff))
#define NVME_CAP_MPSMIN(c)  ((uint32_t)(((c) >> 48) & 0xf))
#define NVME_CAP_MPSMAX(c)  ((uint32_t)(((c) >> 52) & 0xf))

/*
 * Opcodes: NVME_ADM_<ID> and NVME_CMD_<ID>, from the drive's command
 * sets (hw/tables/nvme-cmds.h).  Opcodes the drive lacks, which
 * tests send to see them refused, are numbers where they are sent.
 */
#define NH_OPCODE_ADM(opcode, id, handler, name, eff, flags) \
    NVME_ADM_##id = opcode,
#define NH_OPCODE_CMD(opcode, id, handler, name, eff, flags) \
    NVME_CMD_##id = opcode,
enum { H3100_ADMIN_COMMANDS(NH_OPCODE_ADM) };
enum { H3100_IO_COMMANDS(NH_OPCODE_CMD) };

/* Feature identifiers: NVME_FEAT_<ID>, the drive's (features.h). */
#define NH_FEAT_ID(fid, id, handler, name, cap) NVME_FEAT_##id = fid,
enum { H3100_FEATURES(NH_FEAT_ID) };

/* Log identifiers: NVME_LOG_<ID>, the drive's pages (log-pages.h). */
#define NH_LOG_ID(lid, id, handler, name) NVME_LOG_##id = lid,
enum { H3100_LOG_PAGES(NH_LOG_ID) };

/* Status: (SCT << 8) | SC, without DNR and More. */
enum {
    NVME_SC_SUCCESS = 0x000,
    NVME_SC_INVALID_OPCODE = 0x001,
    NVME_SC_INVALID_FIELD = 0x002,
    NVME_SC_CID_CONFLICT = 0x003,
    NVME_SC_DATA_TRANSFER_ERROR = 0x004,
    NVME_SC_ABORT_REQ = 0x007,
    NVME_SC_ABORT_SQ_DELETION = 0x008,
    NVME_SC_INVALID_NSID = 0x00b,
    NVME_SC_CMD_SEQ_ERROR = 0x00c,
    NVME_SC_INVALID_SGL_SEG_DESCR = 0x00d,
    NVME_SC_INVALID_NUM_SGL_DESCR = 0x00e,
    NVME_SC_DATA_SGL_LEN_INVALID = 0x00f,
    NVME_SC_SGL_DESCR_TYPE_INVALID = 0x011,
    NVME_SC_PRP_OFFSET_INVALID = 0x013,
    NVME_SC_SGL_OFFSET_INVALID = 0x016,
    NVME_SC_SANITIZE_IN_PROGRESS = 0x01d,
    NVME_SC_LBA_RANGE = 0x080,
    NVME_SC_CQ_INVALID = 0x100,
    NVME_SC_INVALID_QID = 0x101,
    NVME_SC_INVALID_QSIZE = 0x102,
    NVME_SC_AER_LIMIT = 0x105,
    NVME_SC_INVALID_FW_SLOT = 0x106,
    NVME_SC_INVALID_FW_IMAGE = 0x107,
    NVME_SC_INVALID_IRQ_VECTOR = 0x108,
    NVME_SC_INVALID_LOG_PAGE = 0x109,
    NVME_SC_INVALID_FORMAT = 0x10a,
    NVME_SC_FW_NEEDS_CONV_RESET = 0x10b,
    NVME_SC_INVALID_QUEUE_DELETION = 0x10c,
    NVME_SC_FEAT_NOT_SAVEABLE = 0x10d,
    NVME_SC_FEAT_NOT_CHANGEABLE = 0x10e,
    NVME_SC_FW_NEEDS_RESET = 0x111,
    NVME_SC_OVERLAPPING_RANGE = 0x114,
    NVME_SC_SELF_TEST_IN_PROGRESS = 0x11d,
    NVME_SC_WRITE_FAULT = 0x280,
    NVME_SC_UNRECOVERED_READ = 0x281,
    NVME_SC_COMPARE_FAILED = 0x285,
};

typedef struct NvmeSqe {
    uint8_t opc;
    uint8_t flags;                    /* FUSE 1:0, PSDT 7:6 */
    uint16_t cid;
    uint32_t nsid;
    uint32_t cdw2;
    uint32_t cdw3;
    uint64_t mptr;
    uint64_t prp1;                    /* or the first SGL descriptor */
    uint64_t prp2;
    uint32_t cdw10;
    uint32_t cdw11;
    uint32_t cdw12;
    uint32_t cdw13;
    uint32_t cdw14;
    uint32_t cdw15;
} NvmeSqe;

typedef struct NvmeCqe {
    uint32_t dw0;
    uint32_t dw1;
    uint16_t sqhd;
    uint16_t sqid;
    uint16_t cid;
    uint16_t status;                  /* phase in bit 0 */
} NvmeCqe;

#define NVME_PSDT_SGL       (1u << 6)
#define NVME_SGL_DATA_BLOCK 0x00
#define NVME_SGL_BIT_BUCKET 0x10
#define NVME_SGL_SEGMENT    0x20
#define NVME_SGL_LAST_SEG   0x30

typedef struct NvmeSglDesc {
    uint64_t addr;
    uint32_t len;
    uint8_t rsvd[3];
    uint8_t type;                     /* type 7:4, subtype 3:0 */
} NvmeSglDesc;

#define NH_MAX_QID 1024
#define NH_MAX_STRAY 64

typedef struct NvmeCq {
    uint16_t qid;
    uint16_t size;                    /* entries */
    uint64_t addr;                    /* guest address */
    uint16_t head;
    uint8_t phase;
    int vector;                       /* -1: interrupts disabled */
} NvmeCq;

/* A submission queue and the completion queue it posts to. */
typedef struct NvmeQueue {
    uint16_t qid;
    uint16_t size;                    /* entries */
    uint64_t addr;                    /* guest address */
    uint16_t tail;
    uint16_t next_cid;
    NvmeCq *cq;
} NvmeQueue;

typedef struct NvmeHost {
    QTest *qt;
    int devfn;
    uint64_t bar;
    uint64_t cap;
    uint32_t db_stride;
    uint64_t ram_next;
    uint64_t ram_end;
    NvmeQueue *admin;
    NvmeQueue *sqs[NH_MAX_QID];
    NvmeCq *cqs[NH_MAX_QID];
    uint64_t scratch;                 /* reusable data buffer */
    uint64_t scratch_len;
    uint32_t lba_size;
    uint64_t nsze;                    /* namespace size in LBAs */
    uint32_t mdts_bytes;              /* 0: no limit */
    int msix_cap;
    uint64_t msix_table;
    unsigned msix_vectors;
    int64_t cmd_timeout_ns;           /* virtual time a command may take */
    int64_t last_cqe_ns;              /* virtual time the last CQE was seen */
    NvmeCqe stray[NH_MAX_STRAY];      /* CQEs nobody was waiting for */
    unsigned n_stray;
} NvmeHost;

/* Find the device on bus 0, map BAR0, enable memory and bus mastering. */
NvmeHost *nh_new(QTest *qt);
/*
 * The driver of the @n-th (from 0) dapustor-h3100 function on bus 0, for
 * machines with several drives: each gets its own BAR address and
 * 1/NH_MAX_HOSTS of the test RAM.
 */
#define NH_MAX_HOSTS 4
NvmeHost *nh_new_nth(QTest *qt, unsigned n);
void nh_free(NvmeHost *h);
int nh_find_function(QTest *qt, uint16_t vendor, uint16_t device);
int nh_find_nth_function(QTest *qt, uint16_t vendor, uint16_t device,
                         unsigned n);

/* Guest RAM: zeroed, @align-aligned (4096 if 0). */
uint64_t nh_alloc(NvmeHost *h, uint64_t size, uint64_t align);

uint32_t nh_rd32(NvmeHost *h, uint32_t off);
uint64_t nh_rd64(NvmeHost *h, uint32_t off);
void nh_wr32(NvmeHost *h, uint32_t off, uint32_t v);
void nh_wr64(NvmeHost *h, uint32_t off, uint64_t v);
uint32_t nh_sq_doorbell(NvmeHost *h, uint16_t qid);
uint32_t nh_cq_doorbell(NvmeHost *h, uint16_t qid);

/* Step virtual time until (CSTS & mask) == val; false on time-out. */
bool nh_wait_csts(NvmeHost *h, uint32_t mask, uint32_t val,
                  int64_t timeout_ns);

/* Admin queue of @entries, CC.EN=1, wait for RDY (fails the test). */
void nh_enable(NvmeHost *h, uint16_t entries);
/* Same without failing: returns the final CSTS. */
uint32_t nh_try_enable(NvmeHost *h, uint16_t entries, uint32_t cc);
/* CC.EN=0 and wait for RDY=0 (fails the test); forgets the I/O queues. */
void nh_disable(NvmeHost *h);

/* Queues. */
void nh_sqe_init(NvmeSqe *sqe, uint8_t opc, uint32_t nsid);
/* Put @sqe in @q (sets its CID unless @keep_cid) without the doorbell. */
uint16_t nh_sq_put(NvmeHost *h, NvmeQueue *q, NvmeSqe *sqe, bool keep_cid);
void nh_sq_ring(NvmeHost *h, NvmeQueue *q);
uint16_t nh_submit(NvmeHost *h, NvmeQueue *q, NvmeSqe *sqe);
/* Take the next CQE if posted (no time passes). */
bool nh_poll(NvmeHost *h, NvmeQueue *q, NvmeCqe *cqe);
/* Step virtual time until a CQE is posted; false on time-out. */
bool nh_wait(NvmeHost *h, NvmeQueue *q, NvmeCqe *cqe, int64_t timeout_ns);
/* Wait for the CQE of command @cid of @q, keeping others as strays. */
bool nh_wait_cid(NvmeHost *h, NvmeQueue *q, uint16_t cid, NvmeCqe *cqe,
                 int64_t timeout_ns);
/* Submit and wait; fails the test, naming the command, on time-out. */
NvmeCqe nh_cmd(NvmeHost *h, NvmeQueue *q, NvmeSqe *sqe);
/*
 * Submit @n commands (fewer than @q's entries) behind one doorbell and
 * wait for all of them; fails the test, naming the first, unless each
 * completes with status 0.  A qtest round trip costs more than the
 * device's work: long loops of I/O go several times faster this way.
 */
void nh_cmd_batch(NvmeHost *h, NvmeQueue *q, NvmeSqe *sqes, unsigned n);
static inline uint16_t nh_status(const NvmeCqe *c)
{
    return (c->status >> 1) & 0x7ff;
}
static inline bool nh_dnr(const NvmeCqe *c)
{
    return c->status >> 15;
}
const char *nh_status_name(uint16_t status);
const char *nh_opcode_name(bool admin, uint8_t opc);
/* the opcodes the drive implements; *ops points at a static array */
size_t nh_opcodes(bool admin, const uint8_t **ops);
/* the log pages the drive serves, and its features, likewise */
size_t nh_log_ids(const uint8_t **lids);
size_t nh_feature_ids(const uint8_t **fids);

/* Data pointers: PRP1/PRP2 (with a PRP list if needed) for a buffer. */
void nh_set_prps(NvmeHost *h, NvmeSqe *sqe, uint64_t addr, uint64_t len);

/* Admin helpers; they return the status and fill what they read. */
uint16_t nh_identify(NvmeHost *h, uint32_t cns, uint32_t nsid, void *buf);
uint16_t nh_get_log(NvmeHost *h, uint8_t lid, uint32_t nsid, void *buf,
                    uint32_t len, uint64_t offset);
/* ... with Log Specific Field @lsp (CDW10 bits 11:8) */
uint16_t nh_get_log_lsp(NvmeHost *h, uint8_t lid, uint8_t lsp, uint32_t nsid,
                        void *buf, uint32_t len, uint64_t offset);
/* ... with Retain Asynchronous Event set (CDW10 bit 15) */
uint16_t nh_get_log_rae(NvmeHost *h, uint8_t lid, uint32_t nsid, void *buf,
                        uint32_t len, uint64_t offset);
uint16_t nh_get_features(NvmeHost *h, uint8_t fid, uint32_t sel,
                         uint32_t cdw11, uint32_t *dw0);
/*
 * Directive Send (@send) or Receive: @dtype, @doper, @dspec in CDW11,
 * @cdw12, and @len bytes of data from or into @buf (may be NULL).
 */
uint16_t nh_directive(NvmeHost *h, bool send, uint32_t nsid, uint8_t dtype,
                      uint8_t doper, uint16_t dspec, uint32_t cdw12,
                      void *buf, uint32_t len, uint32_t *dw0);
uint16_t nh_set_features(NvmeHost *h, uint8_t fid, uint32_t cdw11,
                         bool save, uint32_t *dw0);
uint16_t nh_create_cq(NvmeHost *h, uint16_t qid, uint16_t entries,
                      int vector);
uint16_t nh_create_sq(NvmeHost *h, uint16_t qid, uint16_t entries,
                      uint16_t cqid);
uint16_t nh_delete_sq(NvmeHost *h, uint16_t qid);
uint16_t nh_delete_cq(NvmeHost *h, uint16_t qid);
/* CQ + SQ @qid of @entries; fails the test unless both succeed. */
NvmeQueue *nh_create_ioq(NvmeHost *h, uint16_t qid, uint16_t entries,
                         int vector);
/* Identify namespace 1 and record the LBA size and MDTS (nsze 0: none) */
void nh_probe(NvmeHost *h);

/* I/O: returns the status.  @nlb is the number of blocks (1-based). */
uint16_t nh_io(NvmeHost *h, NvmeQueue *q, uint8_t opc, uint32_t nsid,
               uint64_t slba, uint32_t nlb, uint64_t buf, uint32_t cdw12,
               NvmeCqe *out);
uint16_t nh_write(NvmeHost *h, NvmeQueue *q, uint64_t slba,
                  const void *data, uint64_t len);
uint16_t nh_read(NvmeHost *h, NvmeQueue *q, uint64_t slba, void *data,
                 uint64_t len);
uint16_t nh_flush(NvmeHost *h, NvmeQueue *q, uint32_t nsid);

/* MSI-X: enable the function, point @vector at guest RAM @addr. */
void nh_msix_enable(NvmeHost *h);
void nh_msix_set(NvmeHost *h, unsigned vector, uint64_t addr,
                 uint32_t data, bool masked);

/* Deterministic test data. */
void nh_pattern(void *buf, uint64_t len, uint64_t seed);

#endif
