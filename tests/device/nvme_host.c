/*
 * A tiny NVMe host driver over the qtest client.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "nvme_host.h"

#define NH_BAR0_ADDR    0xe0000000ull
#define NH_RAM_START    0x01000000ull  /* 16 MiB */
#define NH_RAM_END      0x0f000000ull  /* below the 256 MiB of -m 256M */
#define NH_PAGE         4096u
#define NH_BAR0_SPACING 0x100000ull    /* BARs of the n-th function */
#define NH_WALL_LIMIT_MS 20000   /* give up whatever the virtual time */
#define NH_WALL_MIN_MS  1000     /* real time a command may need */

G_STATIC_ASSERT(sizeof(NvmeSqe) == 64);
G_STATIC_ASSERT(sizeof(NvmeCqe) == 16);
G_STATIC_ASSERT(sizeof(NvmeSglDesc) == 16);

int nh_find_function(QTest *qt, uint16_t vendor, uint16_t device)
{
    return nh_find_nth_function(qt, vendor, device, 0);
}

int nh_find_nth_function(QTest *qt, uint16_t vendor, uint16_t device,
                         unsigned n)
{
    for (int devfn = 0; devfn < 256; devfn++) {
        uint32_t id = qt_pci_cfg_readl(qt, devfn, 0);

        if ((id & 0xffff) == vendor && (id >> 16) == device && !n--) {
            return devfn;
        }
    }
    return -1;
}

static int nh_find_cap(NvmeHost *h, uint8_t id)
{
    int ptr;

    if (!(qt_pci_cfg_readw(h->qt, h->devfn, 0x06) & 0x10)) {
        return -1;
    }
    ptr = qt_pci_cfg_readb(h->qt, h->devfn, 0x34) & 0xfc;
    for (int n = 0; ptr && n < 48; n++) {
        if (qt_pci_cfg_readb(h->qt, h->devfn, ptr) == id) {
            return ptr;
        }
        ptr = qt_pci_cfg_readb(h->qt, h->devfn, ptr + 1) & 0xfc;
    }
    return -1;
}

NvmeHost *nh_new(QTest *qt)
{
    NvmeHost *h = nh_new_nth(qt, 0);

    h->ram_end = NH_RAM_END;          /* alone: all the RAM */
    return h;
}

NvmeHost *nh_new_nth(QTest *qt, unsigned n)
{
    NvmeHost *h = g_new0(NvmeHost, 1);
    uint64_t ram_share = (NH_RAM_END - NH_RAM_START) / NH_MAX_HOSTS;
    uint32_t bar0;

    ck_assert_uint_lt(n, NH_MAX_HOSTS);
    h->qt = qt;
    h->devfn = nh_find_nth_function(qt, H3100_VENDOR_ID, H3100_DEVICE_ID, n);
    ck_assert_msg(h->devfn >= 0, "no 1e3b:1098 function %u on PCI bus 0",
                  n);

    bar0 = qt_pci_cfg_readl(qt, h->devfn, 0x10);
    ck_assert_msg((bar0 & 0x7) == 0x4, "BAR0 is not a 64-bit memory BAR "
                  "(0x%08x)", bar0);
    h->bar = NH_BAR0_ADDR + n * NH_BAR0_SPACING;
    qt_pci_cfg_writel(qt, h->devfn, 0x10, (uint32_t)h->bar);
    qt_pci_cfg_writel(qt, h->devfn, 0x14, (uint32_t)(h->bar >> 32));
    qt_pci_cfg_writew(qt, h->devfn, 0x04,
                      qt_pci_cfg_readw(qt, h->devfn, 0x04) | 0x6);
    h->cap = nh_rd64(h, NVME_REG_CAP);
    h->db_stride = 4u << NVME_CAP_DSTRD(h->cap);
    h->ram_next = NH_RAM_START + n * ram_share;
    h->ram_end = h->ram_next + ram_share;
    h->lba_size = 512;
    h->cmd_timeout_ns = 5 * 1000000000ll;
    h->msix_cap = nh_find_cap(h, 0x11);
    return h;
}

void nh_free(NvmeHost *h)
{
    for (unsigned i = 0; i < NH_MAX_QID; i++) {
        g_free(h->sqs[i]);
        g_free(h->cqs[i]);
    }
    g_free(h);
}

uint64_t nh_alloc(NvmeHost *h, uint64_t size, uint64_t align)
{
    uint64_t addr;

    if (!align) {
        align = NH_PAGE;
    }
    addr = (h->ram_next + align - 1) & ~(align - 1);
    ck_assert_msg(addr + size <= h->ram_end, "test guest RAM exhausted");
    h->ram_next = addr + size;
    qt_memset(h->qt, addr, 0, size);
    return addr;
}

uint32_t nh_rd32(NvmeHost *h, uint32_t off)
{
    return qt_readl(h->qt, h->bar + off);
}

uint64_t nh_rd64(NvmeHost *h, uint32_t off)
{
    return qt_readq(h->qt, h->bar + off);
}

void nh_wr32(NvmeHost *h, uint32_t off, uint32_t v)
{
    qt_writel(h->qt, h->bar + off, v);
}

void nh_wr64(NvmeHost *h, uint32_t off, uint64_t v)
{
    qt_writeq(h->qt, h->bar + off, v);
}

uint32_t nh_sq_doorbell(NvmeHost *h, uint16_t qid)
{
    return NVME_REG_DBS + (2 * qid) * h->db_stride;
}

uint32_t nh_cq_doorbell(NvmeHost *h, uint16_t qid)
{
    return NVME_REG_DBS + (2 * qid + 1) * h->db_stride;
}

static bool nh_timed_out(int64_t start, int64_t now, int64_t timeout_ns,
                         int64_t wall_start);

bool nh_wait_csts(NvmeHost *h, uint32_t mask, uint32_t val,
                  int64_t timeout_ns)
{
    int64_t start = qt_clock_now(h->qt), now = start;
    int64_t wall_start = qt_wall_ms();

    for (;;) {
        uint32_t csts = nh_rd32(h, NVME_REG_CSTS);

        if ((csts & mask) == val) {
            return true;
        }
        if ((csts & NVME_CSTS_CFS) && (val & NVME_CSTS_RDY) &&
            !(mask & NVME_CSTS_CFS)) {
            return false;             /* failed instead of becoming ready */
        }
        if (nh_timed_out(start, now, timeout_ns, wall_start)) {
            return false;
        }
        if (now - start < timeout_ns) {
            now = qt_clock_step(h->qt, 1000000);
        } else {
            g_usleep(1000);
        }
    }
}

static int64_t nh_cap_timeout(NvmeHost *h)
{
    uint32_t to = NVME_CAP_TO(h->cap);

    return (to ? to : 20) * 500000000ll;
}

static void nh_forget_queues(NvmeHost *h)
{
    for (unsigned i = 1; i < NH_MAX_QID; i++) {
        g_free(h->sqs[i]);
        g_free(h->cqs[i]);
        h->sqs[i] = NULL;
        h->cqs[i] = NULL;
    }
    h->n_stray = 0;
}

uint32_t nh_try_enable(NvmeHost *h, uint16_t entries, uint32_t cc)
{
    NvmeCq *cq;
    NvmeQueue *sq;

    nh_forget_queues(h);
    g_free(h->cqs[0]);
    g_free(h->sqs[0]);
    cq = h->cqs[0] = g_new0(NvmeCq, 1);
    sq = h->sqs[0] = g_new0(NvmeQueue, 1);
    cq->size = entries;
    cq->addr = nh_alloc(h, entries * 16ull, NH_PAGE);
    cq->phase = 1;
    cq->vector = 0;
    sq->size = entries;
    sq->addr = nh_alloc(h, entries * 64ull, NH_PAGE);
    sq->cq = cq;
    h->admin = sq;

    nh_wr32(h, NVME_REG_AQA, (entries - 1) | ((uint32_t)(entries - 1) << 16));
    nh_wr64(h, NVME_REG_ASQ, sq->addr);
    nh_wr64(h, NVME_REG_ACQ, cq->addr);
    nh_wr32(h, NVME_REG_CC, cc);
    /* ready, or failed */
    nh_wait_csts(h, NVME_CSTS_RDY, NVME_CSTS_RDY, nh_cap_timeout(h));
    return nh_rd32(h, NVME_REG_CSTS);
}

void nh_enable(NvmeHost *h, uint16_t entries)
{
    uint32_t csts = nh_try_enable(h, entries, NVME_CC_DEFAULT | NVME_CC_EN);

    ck_assert_msg((csts & (NVME_CSTS_RDY | NVME_CSTS_CFS)) == NVME_CSTS_RDY,
                  "controller did not become ready: CSTS=0x%x", csts);
}

void nh_disable(NvmeHost *h)
{
    uint32_t cc = nh_rd32(h, NVME_REG_CC);

    nh_wr32(h, NVME_REG_CC, cc & ~NVME_CC_EN);
    ck_assert_msg(nh_wait_csts(h, NVME_CSTS_RDY, 0, nh_cap_timeout(h)),
                  "CSTS.RDY stayed 1 after CC.EN=0 (CSTS=0x%x)",
                  nh_rd32(h, NVME_REG_CSTS));
    nh_forget_queues(h);
}

void nh_sqe_init(NvmeSqe *sqe, uint8_t opc, uint32_t nsid)
{
    memset(sqe, 0, sizeof(*sqe));
    sqe->opc = opc;
    sqe->nsid = nsid;
}

uint16_t nh_sq_put(NvmeHost *h, NvmeQueue *q, NvmeSqe *sqe, bool keep_cid)
{
    if (!keep_cid) {
        sqe->cid = q->next_cid++;
    }
    qt_memwrite(h->qt, q->addr + (uint64_t)q->tail * 64, sqe, 64);
    q->tail = (q->tail + 1) % q->size;
    return sqe->cid;
}

void nh_sq_ring(NvmeHost *h, NvmeQueue *q)
{
    nh_wr32(h, nh_sq_doorbell(h, q->qid), q->tail);
}

uint16_t nh_submit(NvmeHost *h, NvmeQueue *q, NvmeSqe *sqe)
{
    uint16_t cid = nh_sq_put(h, q, sqe, false);

    nh_sq_ring(h, q);
    return cid;
}

bool nh_poll(NvmeHost *h, NvmeQueue *q, NvmeCqe *cqe)
{
    NvmeCq *cq = q->cq;
    NvmeCqe e;

    qt_memread(h->qt, cq->addr + (uint64_t)cq->head * 16, &e, sizeof(e));
    if ((e.status & 1) != cq->phase) {
        return false;
    }
    cq->head++;
    if (cq->head == cq->size) {
        cq->head = 0;
        cq->phase ^= 1;
    }
    nh_wr32(h, nh_cq_doorbell(h, cq->qid), cq->head);
    *cqe = e;
    return true;
}

/*
 * Time-outs are in virtual time, but host I/O (the block layer) needs
 * real time: give up only when both the virtual time-out and a minimum
 * of real time have passed, so that a loaded machine cannot fail a test.
 */
static bool nh_timed_out(int64_t start, int64_t now, int64_t timeout_ns,
                         int64_t wall_start)
{
    int64_t wall = qt_wall_ms() - wall_start;

    return (now - start >= timeout_ns && wall >= NH_WALL_MIN_MS) ||
           wall >= NH_WALL_LIMIT_MS;
}

/*
 * Virtual time goes from one of QEMU's timer deadlines to the next: a
 * completion is seen at the virtual time the drive posted it, never
 * later.  While the device holds virtual time for host I/O (the next
 * deadline is nanoseconds away), wait in real time, which also lets an
 * IOThread look again.  Without a deadline, step.
 */
#define NH_HOLD_STEP_NS 1000
static int64_t nh_advance(NvmeHost *h, int64_t now, int64_t left,
                          int64_t *step)
{
    int64_t next = qt_clock_step_next(h->qt);

    if (next >= now && next - now <= NH_HOLD_STEP_NS) {
        g_usleep(50);
        return next;
    }
    if (next > now) {
        return next;
    }
    next = qt_clock_step(h->qt, MIN(*step, left));
    *step = MIN(*step * 2, 1000000);
    return next;
}

bool nh_wait(NvmeHost *h, NvmeQueue *q, NvmeCqe *cqe, int64_t timeout_ns)
{
    int64_t start = qt_clock_now(h->qt), now = start;
    int64_t wall_start = qt_wall_ms();
    int64_t step = 1000;

    for (;;) {
        if (nh_poll(h, q, cqe)) {
            h->last_cqe_ns = now;
            return true;
        }
        if (nh_timed_out(start, now, timeout_ns, wall_start)) {
            return false;
        }
        if (now - start < timeout_ns) {
            now = nh_advance(h, now, start + timeout_ns - now, &step);
        } else {
            g_usleep(1000);
        }
    }
}

bool nh_wait_cid(NvmeHost *h, NvmeQueue *q, uint16_t cid, NvmeCqe *cqe,
                 int64_t timeout_ns)
{
    int64_t start = qt_clock_now(h->qt);

    for (;;) {
        int64_t left;

        for (unsigned i = 0; i < h->n_stray; i++) {
            if (h->stray[i].cid == cid && h->stray[i].sqid == q->qid) {
                *cqe = h->stray[i];
                memmove(&h->stray[i], &h->stray[i + 1],
                        (h->n_stray - i - 1) * sizeof(NvmeCqe));
                h->n_stray--;
                return true;
            }
        }
        left = timeout_ns - (qt_clock_now(h->qt) - start);
        if (left <= 0 || !nh_wait(h, q, cqe, left)) {
            return false;
        }
        if (cqe->cid == cid && cqe->sqid == q->qid) {
            return true;
        }
        if (h->n_stray < NH_MAX_STRAY) {
            h->stray[h->n_stray++] = *cqe;
        }
    }
}

NvmeCqe nh_cmd(NvmeHost *h, NvmeQueue *q, NvmeSqe *sqe)
{
    NvmeCqe cqe;
    uint16_t cid = nh_submit(h, q, sqe);

    if (!nh_wait_cid(h, q, cid, &cqe, h->cmd_timeout_ns)) {
        ck_abort_msg("%s command 0x%02x (%s) on SQ %u got no completion "
                     "within %.1f s of virtual time: the device does not "
                     "implement it or lost it (CSTS=0x%x)",
                     q->qid ? "I/O" : "admin", sqe->opc,
                     nh_opcode_name(q->qid == 0, sqe->opc), q->qid,
                     h->cmd_timeout_ns / 1e9, nh_rd32(h, NVME_REG_CSTS));
    }
    return cqe;
}

void nh_cmd_batch(NvmeHost *h, NvmeQueue *q, NvmeSqe *sqes, unsigned n)
{
    uint16_t first_cid = q->next_cid;

    ck_assert_msg(n < q->size, "a batch of %u on a queue of %u", n,
                  q->size);
    for (unsigned i = 0; i < n; i++) {
        nh_sq_put(h, q, &sqes[i], false);
    }
    nh_sq_ring(h, q);
    /* in any order: the device completes as its dies finish */
    for (unsigned done = 0; done < n; done++) {
        NvmeCqe cqe;
        unsigned i;

        if (!nh_wait(h, q, &cqe, h->cmd_timeout_ns)) {
            ck_abort_msg("%u of a batch of %u commands (0x%02x) on SQ %u "
                         "got no completion within %.1f s of virtual time",
                         n - done, n, sqes[0].opc, q->qid,
                         h->cmd_timeout_ns / 1e9);
        }
        i = (uint16_t)(cqe.cid - first_cid);
        ck_assert_msg(cqe.sqid == q->qid && i < n, "CQE for SQ %u CID %u "
                      "in a batch of SQ %u", cqe.sqid, cqe.cid, q->qid);
        ck_assert_msg(nh_status(&cqe) == 0, "batched command %u of %u "
                      "(0x%02x): status 0x%03x (%s)", i, n, sqes[i].opc,
                      nh_status(&cqe), nh_status_name(nh_status(&cqe)));
    }
}

const char *nh_status_name(uint16_t status)
{
    static const struct {
        uint16_t sc;
        const char *name;
    } names[] = {
        { NVME_SC_SUCCESS, "Successful Completion" },
        { NVME_SC_INVALID_OPCODE, "Invalid Command Opcode" },
        { NVME_SC_INVALID_FIELD, "Invalid Field in Command" },
        { NVME_SC_CID_CONFLICT, "Command ID Conflict" },
        { NVME_SC_DATA_TRANSFER_ERROR, "Data Transfer Error" },
        { NVME_SC_ABORT_REQ, "Command Abort Requested" },
        { NVME_SC_ABORT_SQ_DELETION, "Command Aborted due to SQ Deletion" },
        { NVME_SC_INVALID_NSID, "Invalid Namespace or Format" },
        { NVME_SC_CMD_SEQ_ERROR, "Command Sequence Error" },
        { NVME_SC_INVALID_SGL_SEG_DESCR, "Invalid SGL Segment Descriptor" },
        { NVME_SC_INVALID_NUM_SGL_DESCR, "Invalid Number of SGL Descriptors" },
        { NVME_SC_DATA_SGL_LEN_INVALID, "Data SGL Length Invalid" },
        { NVME_SC_SGL_DESCR_TYPE_INVALID, "SGL Descriptor Type Invalid" },
        { NVME_SC_PRP_OFFSET_INVALID, "PRP Offset Invalid" },
        { NVME_SC_SGL_OFFSET_INVALID, "SGL Offset Invalid" },
        { NVME_SC_SANITIZE_IN_PROGRESS, "Sanitize In Progress" },
        { NVME_SC_LBA_RANGE, "LBA Out of Range" },
        { NVME_SC_CQ_INVALID, "Completion Queue Invalid" },
        { NVME_SC_INVALID_QID, "Invalid Queue Identifier" },
        { NVME_SC_INVALID_QSIZE, "Invalid Queue Size" },
        { NVME_SC_AER_LIMIT, "Asynchronous Event Request Limit Exceeded" },
        { NVME_SC_INVALID_FW_SLOT, "Invalid Firmware Slot" },
        { NVME_SC_INVALID_FW_IMAGE, "Invalid Firmware Image" },
        { NVME_SC_INVALID_IRQ_VECTOR, "Invalid Interrupt Vector" },
        { NVME_SC_INVALID_LOG_PAGE, "Invalid Log Page" },
        { NVME_SC_INVALID_FORMAT, "Invalid Format" },
        { NVME_SC_FW_NEEDS_CONV_RESET,
          "Firmware Activation Requires Conventional Reset" },
        { NVME_SC_INVALID_QUEUE_DELETION, "Invalid Queue Deletion" },
        { NVME_SC_FEAT_NOT_SAVEABLE, "Feature Identifier Not Saveable" },
        { NVME_SC_FEAT_NOT_CHANGEABLE, "Feature Not Changeable" },
        { NVME_SC_FW_NEEDS_RESET, "Firmware Activation Requires Reset" },
        { NVME_SC_OVERLAPPING_RANGE, "Overlapping Range" },
        { NVME_SC_SELF_TEST_IN_PROGRESS, "Device Self-test In Progress" },
        { NVME_SC_WRITE_FAULT, "Write Fault" },
        { NVME_SC_UNRECOVERED_READ, "Unrecovered Read Error" },
        { NVME_SC_COMPARE_FAILED, "Compare Failure" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        if (names[i].sc == status) {
            return names[i].name;
        }
    }
    return "unknown status";
}

#define NH_OPCODE_NAME(opcode, id, handler, cmd_name, eff, flags) \
    [opcode] = cmd_name,

const char *nh_opcode_name(bool admin, uint8_t opc)
{
    static const char *const admin_names[256] = {
        H3100_ADMIN_COMMANDS(NH_OPCODE_NAME)
    };
    static const char *const io_names[256] = {
        H3100_IO_COMMANDS(NH_OPCODE_NAME)
    };
    const char *name = admin ? admin_names[opc] : io_names[opc];

    return name ? name : "unsupported opcode";
}

/* the drive's opcodes (hw/tables/nvme-cmds.h), in its table's order */
#define NH_OPCODE_BYTE(opcode, id, handler, name, eff, flags) opcode,

size_t nh_opcodes(bool admin, const uint8_t **ops)
{
    static const uint8_t admin_ops[] = { H3100_ADMIN_COMMANDS(NH_OPCODE_BYTE) };
    static const uint8_t io_ops[] = { H3100_IO_COMMANDS(NH_OPCODE_BYTE) };

    *ops = admin ? admin_ops : io_ops;
    return admin ? sizeof(admin_ops) : sizeof(io_ops);
}

#define NH_LOG_BYTE(lid, id, handler, name) lid,

size_t nh_log_ids(const uint8_t **lids)
{
    static const uint8_t ids[] = { H3100_LOG_PAGES(NH_LOG_BYTE) };

    *lids = ids;
    return sizeof(ids);
}

#define NH_FEAT_BYTE(fid, id, handler, name, cap) fid,

size_t nh_feature_ids(const uint8_t **fids)
{
    static const uint8_t ids[] = { H3100_FEATURES(NH_FEAT_BYTE) };

    *fids = ids;
    return sizeof(ids);
}

void nh_set_prps(NvmeHost *h, NvmeSqe *sqe, uint64_t addr, uint64_t len)
{
    uint64_t first = NH_PAGE - (addr & (NH_PAGE - 1));
    uint64_t rem, n, list, page;
    uint64_t *entries;
    uint64_t pages_of_list;

    sqe->prp1 = addr;
    sqe->prp2 = 0;
    if (len <= first) {
        return;
    }
    rem = len - first;
    page = addr + first;
    if (rem <= NH_PAGE) {
        sqe->prp2 = page;
        return;
    }
    n = (rem + NH_PAGE - 1) / NH_PAGE;
    /* 511 entries and a chain pointer per list page */
    pages_of_list = n <= 512 ? 1 : (n - 1 + 510) / 511;
    list = nh_alloc(h, pages_of_list * NH_PAGE, NH_PAGE);
    entries = g_new0(uint64_t, pages_of_list * 512);
    for (uint64_t i = 0, slot = 0; i < n; i++, slot++) {
        if (slot % 512 == 511 && n - i > 1) {
            entries[slot] = list + (slot + 1) * 8;
            slot++;
        }
        entries[slot] = page + i * NH_PAGE;
    }
    qt_memwrite(h->qt, list, entries, pages_of_list * NH_PAGE);
    g_free(entries);
    sqe->prp2 = list;
}

static uint64_t nh_scratch(NvmeHost *h, uint64_t len)
{
    if (h->scratch_len < len) {
        h->scratch_len = MAX(len, 256 * 1024);
        h->scratch = nh_alloc(h, h->scratch_len, NH_PAGE);
    }
    return h->scratch;
}

uint16_t nh_identify(NvmeHost *h, uint32_t cns, uint32_t nsid, void *buf)
{
    uint64_t a = nh_scratch(h, NH_PAGE);
    NvmeSqe sqe;
    NvmeCqe cqe;

    qt_memset(h->qt, a, 0, NH_PAGE);
    nh_sqe_init(&sqe, NVME_ADM_IDENTIFY, nsid);
    sqe.prp1 = a;
    sqe.cdw10 = cns;
    cqe = nh_cmd(h, h->admin, &sqe);
    if (buf) {
        qt_memread(h->qt, a, buf, NH_PAGE);
    }
    return nh_status(&cqe);
}

uint16_t nh_get_log(NvmeHost *h, uint8_t lid, uint32_t nsid, void *buf,
                    uint32_t len, uint64_t offset)
{
    return nh_get_log_lsp(h, lid, 0, nsid, buf, len, offset);
}

static uint16_t nh_get_log_full(NvmeHost *h, uint8_t lid, uint8_t lsp,
                                bool rae, uint32_t nsid, void *buf,
                                uint32_t len, uint64_t offset)
{
    uint64_t a = nh_scratch(h, len);
    uint32_t numd = len / 4 - 1;
    NvmeSqe sqe;
    NvmeCqe cqe;

    qt_memset(h->qt, a, 0, len);
    nh_sqe_init(&sqe, NVME_ADM_GET_LOG_PAGE, nsid);
    nh_set_prps(h, &sqe, a, len);
    sqe.cdw10 = lid | (uint32_t)(lsp & 0xf) << 8 | (uint32_t)rae << 15 |
                ((numd & 0xffff) << 16);
    sqe.cdw11 = numd >> 16;
    sqe.cdw12 = (uint32_t)offset;
    sqe.cdw13 = (uint32_t)(offset >> 32);
    cqe = nh_cmd(h, h->admin, &sqe);
    if (buf) {
        qt_memread(h->qt, a, buf, len);
    }
    return nh_status(&cqe);
}

uint16_t nh_get_log_lsp(NvmeHost *h, uint8_t lid, uint8_t lsp, uint32_t nsid,
                        void *buf, uint32_t len, uint64_t offset)
{
    return nh_get_log_full(h, lid, lsp, false, nsid, buf, len, offset);
}

uint16_t nh_get_log_rae(NvmeHost *h, uint8_t lid, uint32_t nsid, void *buf,
                        uint32_t len, uint64_t offset)
{
    return nh_get_log_full(h, lid, 0, true, nsid, buf, len, offset);
}

uint16_t nh_get_features(NvmeHost *h, uint8_t fid, uint32_t sel,
                         uint32_t cdw11, uint32_t *dw0)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, NVME_ADM_GET_FEATURES, 0);
    sqe.cdw10 = fid | (sel << 8);
    sqe.cdw11 = cdw11;
    if (fid == NVME_FEAT_TIMESTAMP) {
        sqe.prp1 = nh_scratch(h, NH_PAGE);
    }
    cqe = nh_cmd(h, h->admin, &sqe);
    if (dw0) {
        *dw0 = cqe.dw0;
    }
    return nh_status(&cqe);
}

uint16_t nh_directive(NvmeHost *h, bool send, uint32_t nsid, uint8_t dtype,
                      uint8_t doper, uint16_t dspec, uint32_t cdw12,
                      void *buf, uint32_t len, uint32_t *dw0)
{
    uint64_t a = len ? nh_scratch(h, len) : 0;
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, send ? NVME_ADM_DIRECTIVE_SEND :
                             NVME_ADM_DIRECTIVE_RECV, nsid);
    if (len) {
        if (send) {
            qt_memwrite(h->qt, a, buf, len);
        }
        nh_set_prps(h, &sqe, a, len);
        sqe.cdw10 = len / 4 - 1;
    }
    sqe.cdw11 = doper | (uint32_t)dtype << 8 | (uint32_t)dspec << 16;
    sqe.cdw12 = cdw12;
    cqe = nh_cmd(h, h->admin, &sqe);
    if (len && !send && nh_status(&cqe) == NVME_SC_SUCCESS) {
        qt_memread(h->qt, a, buf, len);
    }
    if (dw0) {
        *dw0 = cqe.dw0;
    }
    return nh_status(&cqe);
}

uint16_t nh_set_features(NvmeHost *h, uint8_t fid, uint32_t cdw11,
                         bool save, uint32_t *dw0)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, NVME_ADM_SET_FEATURES, 0);
    sqe.cdw10 = fid | (save ? 1u << 31 : 0);
    sqe.cdw11 = cdw11;
    cqe = nh_cmd(h, h->admin, &sqe);
    if (dw0) {
        *dw0 = cqe.dw0;
    }
    return nh_status(&cqe);
}

uint16_t nh_create_cq(NvmeHost *h, uint16_t qid, uint16_t entries,
                      int vector)
{
    NvmeCq *cq = g_new0(NvmeCq, 1);
    NvmeSqe sqe;
    NvmeCqe cqe;

    cq->qid = qid;
    cq->size = entries;
    cq->addr = nh_alloc(h, MAX(entries * 16ull, 1), NH_PAGE);
    cq->phase = 1;
    cq->vector = vector;
    nh_sqe_init(&sqe, NVME_ADM_CREATE_CQ, 0);
    sqe.prp1 = cq->addr;
    sqe.cdw10 = qid | ((uint32_t)(uint16_t)(entries - 1) << 16);
    sqe.cdw11 = 1 | (vector >= 0 ? 2 | ((uint32_t)vector << 16) : 0);
    cqe = nh_cmd(h, h->admin, &sqe);
    if (nh_status(&cqe) == NVME_SC_SUCCESS && qid < NH_MAX_QID) {
        g_free(h->cqs[qid]);
        h->cqs[qid] = cq;
    } else {
        g_free(cq);
    }
    return nh_status(&cqe);
}

uint16_t nh_create_sq(NvmeHost *h, uint16_t qid, uint16_t entries,
                      uint16_t cqid)
{
    NvmeQueue *sq = g_new0(NvmeQueue, 1);
    NvmeSqe sqe;
    NvmeCqe cqe;

    sq->qid = qid;
    sq->size = entries;
    sq->addr = nh_alloc(h, MAX(entries * 64ull, 1), NH_PAGE);
    sq->cq = cqid < NH_MAX_QID ? h->cqs[cqid] : NULL;
    nh_sqe_init(&sqe, NVME_ADM_CREATE_SQ, 0);
    sqe.prp1 = sq->addr;
    sqe.cdw10 = qid | ((uint32_t)(uint16_t)(entries - 1) << 16);
    sqe.cdw11 = 1 | ((uint32_t)cqid << 16);
    cqe = nh_cmd(h, h->admin, &sqe);
    if (nh_status(&cqe) == NVME_SC_SUCCESS && qid < NH_MAX_QID &&
        sq->cq) {
        g_free(h->sqs[qid]);
        h->sqs[qid] = sq;
    } else {
        g_free(sq);
    }
    return nh_status(&cqe);
}

uint16_t nh_delete_sq(NvmeHost *h, uint16_t qid)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, NVME_ADM_DELETE_SQ, 0);
    sqe.cdw10 = qid;
    cqe = nh_cmd(h, h->admin, &sqe);
    if (nh_status(&cqe) == NVME_SC_SUCCESS && qid < NH_MAX_QID) {
        g_free(h->sqs[qid]);
        h->sqs[qid] = NULL;
    }
    return nh_status(&cqe);
}

uint16_t nh_delete_cq(NvmeHost *h, uint16_t qid)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, NVME_ADM_DELETE_CQ, 0);
    sqe.cdw10 = qid;
    cqe = nh_cmd(h, h->admin, &sqe);
    if (nh_status(&cqe) == NVME_SC_SUCCESS && qid < NH_MAX_QID) {
        g_free(h->cqs[qid]);
        h->cqs[qid] = NULL;
    }
    return nh_status(&cqe);
}

NvmeQueue *nh_create_ioq(NvmeHost *h, uint16_t qid, uint16_t entries,
                         int vector)
{
    uint16_t st;

    st = nh_create_cq(h, qid, entries, vector);
    ck_assert_msg(st == NVME_SC_SUCCESS, "Create I/O CQ %u: 0x%03x (%s)",
                  qid, st, nh_status_name(st));
    st = nh_create_sq(h, qid, entries, qid);
    ck_assert_msg(st == NVME_SC_SUCCESS, "Create I/O SQ %u: 0x%03x (%s)",
                  qid, st, nh_status_name(st));
    return h->sqs[qid];
}

void nh_probe(NvmeHost *h)
{
    uint8_t id[4096];
    uint16_t st;
    uint8_t flbas, lbads;
    uint32_t lbaf;

    st = nh_identify(h, 1, 0, id);
    ck_assert_msg(st == 0, "Identify Controller: 0x%03x (%s)", st,
                  nh_status_name(st));
    h->mdts_bytes = id[77] ? (NH_PAGE << id[77]) : 0;
    st = nh_identify(h, 0, 1, id);
    ck_assert_msg(st == 0, "Identify Namespace 1: 0x%03x (%s)", st,
                  nh_status_name(st));
    memcpy(&h->nsze, id, 8);
    if (!h->nsze) {
        h->lba_size = 512;            /* no namespace 1 (deleted): zeroes */
        return;
    }
    flbas = id[26] & 0xf;
    memcpy(&lbaf, id + 128 + 4 * flbas, 4);
    lbads = (lbaf >> 16) & 0xff;
    ck_assert_msg(lbads >= 9 && lbads <= 12, "LBA format %u has LBADS %u",
                  flbas, lbads);
    h->lba_size = 1u << lbads;
}

uint16_t nh_io(NvmeHost *h, NvmeQueue *q, uint8_t opc, uint32_t nsid,
               uint64_t slba, uint32_t nlb, uint64_t buf, uint32_t cdw12,
               NvmeCqe *out)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, opc, nsid);
    if (buf) {
        nh_set_prps(h, &sqe, buf, (uint64_t)nlb * h->lba_size);
    }
    sqe.cdw10 = (uint32_t)slba;
    sqe.cdw11 = (uint32_t)(slba >> 32);
    sqe.cdw12 = ((nlb - 1) & 0xffff) | cdw12;
    cqe = nh_cmd(h, q, &sqe);
    if (out) {
        *out = cqe;
    }
    return nh_status(&cqe);
}

uint16_t nh_write(NvmeHost *h, NvmeQueue *q, uint64_t slba,
                  const void *data, uint64_t len)
{
    uint64_t a = nh_scratch(h, len);

    ck_assert(len % h->lba_size == 0);
    qt_memwrite(h->qt, a, data, len);
    return nh_io(h, q, NVME_CMD_WRITE, 1, slba, len / h->lba_size, a, 0,
                 NULL);
}

uint16_t nh_read(NvmeHost *h, NvmeQueue *q, uint64_t slba, void *data,
                 uint64_t len)
{
    uint64_t a = nh_scratch(h, len);
    uint16_t st;

    ck_assert(len % h->lba_size == 0);
    qt_memset(h->qt, a, 0xa5, len);
    st = nh_io(h, q, NVME_CMD_READ, 1, slba, len / h->lba_size, a, 0, NULL);
    qt_memread(h->qt, a, data, len);
    return st;
}

uint16_t nh_flush(NvmeHost *h, NvmeQueue *q, uint32_t nsid)
{
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, NVME_CMD_FLUSH, nsid);
    cqe = nh_cmd(h, q, &sqe);
    return nh_status(&cqe);
}

void nh_msix_enable(NvmeHost *h)
{
    uint16_t ctrl;
    uint32_t table;

    ck_assert_msg(h->msix_cap > 0, "no MSI-X capability");
    ctrl = qt_pci_cfg_readw(h->qt, h->devfn, h->msix_cap + 2);
    table = qt_pci_cfg_readl(h->qt, h->devfn, h->msix_cap + 4);
    ck_assert_msg((table & 7) == 0, "MSI-X table not in BAR0 (BIR %u)",
                  table & 7);
    h->msix_table = h->bar + (table & ~7u);
    h->msix_vectors = (ctrl & 0x7ff) + 1;
    qt_pci_cfg_writew(h->qt, h->devfn, h->msix_cap + 2,
                      (ctrl | 0x8000) & ~0x4000);
}

void nh_msix_set(NvmeHost *h, unsigned vector, uint64_t addr,
                 uint32_t data, bool masked)
{
    uint64_t e = h->msix_table + vector * 16ull;

    ck_assert(vector < h->msix_vectors);
    qt_writel(h->qt, e + 0, (uint32_t)addr);
    qt_writel(h->qt, e + 4, (uint32_t)(addr >> 32));
    qt_writel(h->qt, e + 8, data);
    qt_writel(h->qt, e + 12, masked ? 1 : 0);
}

void nh_pattern(void *buf, uint64_t len, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x1234567;
    uint8_t *p = buf;

    for (uint64_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)(x >> 24);
    }
}
