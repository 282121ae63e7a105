/*
 * DapuStor H3100 NVMe SSD: controller registers and doorbells (BAR0)
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Bad accesses are logged as guest errors.  A doorbell write for a queue
 * that does not exist raises the Invalid Doorbell Register event, an out
 * of range value the Invalid Doorbell Write Value event (NVMe 1.3 5.2),
 * and the write is ignored.
 *
 * The controller's reset (CC.EN 1 -> 0, and the function's reset through
 * h3100-pci.c) is here too: stop fetching, let every block request land,
 * then every concern forgets the controller's state.
 */

#include "qemu/osdep.h"
#include "hw/pci/msix.h"
#include "system/qtest.h"
#include "h3100.h"
#include "h3100-compat.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
#include "h3100-life.h"
#include "trace.h"

typedef struct H3100MmioWrite {
    H3100State *s;
    hwaddr addr;
    uint64_t data;
    unsigned size;
} H3100MmioWrite;

/* CAP: the same for every H3100 (a migrated controller's must be it) */
uint64_t h3100_regs_cap(void)
{
    uint64_t cap = 0;

    NVME_CAP_SET_MQES(cap, H3100_MQES);
    NVME_CAP_SET_CQR(cap, 1);
    NVME_CAP_SET_TO(cap, H3100_CAP_TO);
    NVME_CAP_SET_DSTRD(cap, 0);
    NVME_CAP_SET_NSSRS(cap, 0);
    NVME_CAP_SET_CSS(cap, NVME_CAP_CSS_NCSS);
    NVME_CAP_SET_MPSMIN(cap, 0);
    NVME_CAP_SET_MPSMAX(cap, 4);
    return cap;
}

void h3100_regs_init(H3100State *s)
{
    memset(&s->bar, 0, sizeof(s->bar));
    stq_le_p(&s->bar.cap, h3100_regs_cap());
    stl_le_p(&s->bar.vs, H3100_NVME_VERSION);
}

static const char *h3100_check_enable(H3100State *s)
{
    uint64_t cap = ldq_le_p(&s->bar.cap);
    uint32_t cc = ldl_le_p(&s->bar.cc);
    uint32_t aqa = ldl_le_p(&s->bar.aqa);
    uint64_t asq = ldq_le_p(&s->bar.asq);
    uint64_t acq = ldq_le_p(&s->bar.acq);
    uint64_t page_size = 1ULL << (NVME_CC_MPS(cc) + 12);

    if (NVME_CC_MPS(cc) < NVME_CAP_MPSMIN(cap) ||
        NVME_CC_MPS(cc) > NVME_CAP_MPSMAX(cap)) {
        return "CC.MPS outside CAP.MPSMIN..MPSMAX";
    }
    if (NVME_CC_CSS(cc) != NVME_CC_CSS_NVM) {
        return "CC.CSS selects an unsupported command set";
    }
    if (NVME_CC_AMS(cc) != 0) {
        return "CC.AMS selects an unsupported arbitration mechanism";
    }
    if (!asq || (asq & (page_size - 1))) {
        return "ASQ zero or not page aligned";
    }
    if (!acq || (acq & (page_size - 1))) {
        return "ACQ zero or not page aligned";
    }
    if (!NVME_AQA_ASQS(aqa) || NVME_AQA_ASQS(aqa) > H3100_MQES) {
        return "AQA.ASQS out of range";
    }
    if (!NVME_AQA_ACQS(aqa) || NVME_AQA_ACQS(aqa) > H3100_MQES) {
        return "AQA.ACQS out of range";
    }
    if (!h3100_guest_ram(s, asq, (NVME_AQA_ASQS(aqa) + 1) * sizeof(NvmeCmd),
                         false)) {
        return "ASQ is not guest RAM";
    }
    if (!h3100_guest_ram(s, acq, (NVME_AQA_ACQS(aqa) + 1) * sizeof(NvmeCqe),
                         true)) {
        return "ACQ is not writable guest RAM";
    }
    return NULL;
}

static void h3100_ctrl_start(H3100State *s)
{
    uint32_t cc = ldl_le_p(&s->bar.cc);
    uint32_t aqa = ldl_le_p(&s->bar.aqa);

    s->page_bits = NVME_CC_MPS(cc) + 12;
    s->page_size = 1u << s->page_bits;
    s->max_prp_ents = s->page_size / sizeof(uint64_t);
    s->cq[0] = g_new0(H3100CQueue, 1);
    h3100_cq_init(s, s->cq[0], ldq_le_p(&s->bar.acq), 0, 0,
                  NVME_AQA_ACQS(aqa) + 1, true);
    s->sq[0] = g_new0(H3100SQueue, 1);
    h3100_sq_init(s, s->sq[0], ldq_le_p(&s->bar.asq), 0, 0,
                  NVME_AQA_ASQS(aqa) + 1);
    s->idle_ticks = 0;
    h3100_timer_mod_in(s->idle_timer, H3100_IDLE_PERIOD_NS);
}

/* CC written, EN not going 1 -> 0 (runs in the controller's context) */
static void h3100_write_cc_fn(void *opaque)
{
    H3100MmioWrite *w = opaque;
    H3100State *s = w->s;
    uint32_t data = w->data;
    uint32_t cc = ldl_le_p(&s->bar.cc);
    uint32_t csts;
    const char *err;

    stl_le_p(&s->bar.cc, data);
    /* SHN cleared, or the controller enabled: the drive is in use again */
    if ((!NVME_CC_SHN(data) && NVME_CC_SHN(cc)) ||
        (NVME_CC_EN(data) && !NVME_CC_EN(cc))) {
        h3100_shutdown_cancel(s);
    }
    csts = ldl_le_p(&s->bar.csts);
    if (NVME_CC_EN(data) && !NVME_CC_EN(cc)) {
        err = h3100_check_enable(s);
        if (err) {
            H3100_GUEST_ERR(h3100_err_enable, "controller enable failed: %s",
                            err);
            csts |= NVME_CSTS_FAILED;
        } else {
            trace_h3100_ctrl_enable(data, ldl_le_p(&s->bar.aqa),
                                    ldq_le_p(&s->bar.asq),
                                    ldq_le_p(&s->bar.acq));
            h3100_ctrl_start(s);
            csts |= h3100_fault_at_enable(s);
        }
    } else if (NVME_CC_EN(data) && NVME_CC_EN(cc) &&
               ((data ^ cc) & ~((CC_SHN_MASK << CC_SHN_SHIFT) |
                                (CC_IOSQES_MASK << CC_IOSQES_SHIFT) |
                                (CC_IOCQES_MASK << CC_IOCQES_SHIFT)))) {
        H3100_GUEST_ERR(h3100_ub_cc_change, "CC fields changed while CC.EN=1 "
                        "(0x%x -> 0x%x)", cc, data);
    }
    stl_le_p(&s->bar.csts, csts);
    if (NVME_CC_SHN(data) && !NVME_CC_SHN(cc)) {
        h3100_shutdown_begin(s);
    }
}

static void h3100_shutdown_begin_fn(void *opaque)
{
    h3100_shutdown_begin(opaque);
}

static void h3100_write_cc(H3100State *s, uint32_t data)
{
    uint32_t cc = ldl_le_p(&s->bar.cc);
    H3100MmioWrite w = { .s = s, .data = data };

    if (!NVME_CC_EN(data) && NVME_CC_EN(cc)) {
        trace_h3100_ctrl_disable(data);
        h3100_ctrl_reset(s);
        stl_le_p(&s->bar.cc, data);
        if (NVME_CC_SHN(data)) {
            h3100_run_in_ctx(s, h3100_shutdown_begin_fn, s);
        }
        return;
    }
    h3100_run_in_ctx(s, h3100_write_cc_fn, &w);
}

static void h3100_write_intm(H3100State *s, hwaddr offset, uint32_t data)
{
    uint32_t intms = ldl_le_p(&s->bar.intms);

    if (msix_enabled(PCI_DEVICE(s))) {
        H3100_GUEST_ERR(h3100_ub_intm_msix, "INTMS/INTMC written while MSI-X "
                        "is enabled");
        return;
    }
    if (offset == NVME_REG_INTMS) {
        intms |= data;
    } else {
        intms &= ~data;
    }
    stl_le_p(&s->bar.intms, intms);
    stl_le_p(&s->bar.intmc, intms);
    /* this runs in the controller's context, an IOThread's with iothread= */
    h3100_intx_update(s);
}

static void h3100_write_reg(H3100State *s, hwaddr offset, uint64_t data,
                            unsigned size)
{
    bool enabled = NVME_CC_EN(ldl_le_p(&s->bar.cc));

    switch (offset) {
    case NVME_REG_INTMS:
    case NVME_REG_INTMC:
        h3100_write_intm(s, offset, data);
        return;
    case NVME_REG_CSTS:
        if (data) {
            H3100_GUEST_ERR(h3100_ub_csts_write, "write of 0x%" PRIx64
                            " to read-only CSTS", data);
        }
        return;
    case NVME_REG_NSSR:
        H3100_GUEST_ERR(h3100_ub_nssr, "NVM subsystem reset not supported "
                        "(CAP.NSSRS=0)");
        return;
    case NVME_REG_AQA:
    case NVME_REG_ASQ:
    case NVME_REG_ASQ + 4:
    case NVME_REG_ACQ:
    case NVME_REG_ACQ + 4:
        if (enabled) {
            H3100_GUEST_ERR(h3100_ub_aq_write, "admin queue register 0x%"
                            PRIx64 " written while CC.EN=1, ignored", offset);
            return;
        }
        stn_le_p((uint8_t *)&s->bar + offset, size, data);
        return;
    default:
        H3100_GUEST_ERR(h3100_ub_reg_write, "write to read-only or reserved "
                        "register 0x%" PRIx64 " ignored", offset);
        return;
    }
}

static void h3100_doorbell_error(H3100State *s, uint8_t info,
                                 unsigned qid, bool is_cq, uint64_t val)
{
    H3100_GUEST_ERR(h3100_err_doorbell, "invalid %s doorbell write: queue %u "
                    "%s value 0x%" PRIx64, is_cq ? "CQ head" : "SQ tail", qid,
                    info == NVME_AER_INFO_ERR_INVALID_DB_REGISTER ?
                    "does not exist," : "bad", val);
    h3100_aer_enqueue(s, NVME_AER_TYPE_ERROR, info, H3100_LOG_ERROR);
}

static bool h3100_cq_head_valid(H3100CQueue *cq, uint32_t head)
{
    uint32_t posted = (cq->tail + cq->size - cq->head) % cq->size;
    uint32_t consumed = (head + cq->size - cq->head) % cq->size;

    return head < cq->size && consumed <= posted;
}

static void h3100_write_doorbell(H3100State *s, hwaddr offset,
                                 uint64_t data)
{
    unsigned idx = (offset - H3100_DB_OFFSET) / 4;
    unsigned qid = idx / 2;
    bool is_cq = idx & 1;

    trace_h3100_doorbell(qid, is_cq, data);
    if (!NVME_CSTS_RDY(ldl_le_p(&s->bar.csts))) {
        H3100_GUEST_ERR(h3100_ub_db_not_ready, "doorbell write while "
                        "CSTS.RDY=0 (offset 0x%" PRIx64 "), ignored", offset);
        return;
    }
    if (qid > s->max_ioqpairs || (is_cq ? !s->cq[qid] : !s->sq[qid])) {
        h3100_doorbell_error(s, NVME_AER_INFO_ERR_INVALID_DB_REGISTER,
                             qid, is_cq, data);
        return;
    }
    if (is_cq) {
        if (!h3100_cq_head_valid(s->cq[qid], data)) {
            h3100_doorbell_error(s, NVME_AER_INFO_ERR_INVALID_DB_VALUE,
                                 qid, is_cq, data);
            return;
        }
        h3100_cq_doorbell(s, s->cq[qid], data);
    } else {
        if (data >= s->sq[qid]->size) {
            h3100_doorbell_error(s, NVME_AER_INFO_ERR_INVALID_DB_VALUE,
                                 qid, is_cq, data);
            return;
        }
        h3100_sq_doorbell(s, s->sq[qid], data);
    }
}

static void h3100_mmio_write_fn(void *opaque)
{
    H3100MmioWrite *w = opaque;

    if (w->addr >= H3100_DB_OFFSET) {
        h3100_write_doorbell(w->s, w->addr, w->data);
    } else {
        h3100_write_reg(w->s, w->addr, w->data, w->size);
    }
}

/*
 * A doorbell goes to its queue's group, fixed by the qid (h3100-qgroup.c;
 * one past the queues to the controller's, which reports it).  Under
 * qtest and -icount the vCPU waits for the group's context to take it:
 * the commands are under way when the write returns (h3100_sq_doorbell).
 * Else it is taken here, on the vCPU thread under s->lock: an SQ
 * doorbell schedules its queue's bottom half in its IOThread, and the
 * vCPU goes on without waiting for that thread to wake up.
 */
static void h3100_doorbell_write(H3100State *s, H3100MmioWrite *w)
{
    unsigned qid = (w->addr - H3100_DB_OFFSET) / 8;
    H3100QGroup *g = qid <= s->max_ioqpairs ? s->qg[qid] : &s->groups[0];

    if (qtest_enabled() || icount_enabled()) {
        h3100_run_in(s, g->ctx, h3100_mmio_write_fn, w);
        return;
    }
    h3100_lock(s);
    h3100_mmio_write_fn(w);
    h3100_unlock(s);
}

static uint64_t h3100_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    H3100State *s = opaque;
    uint64_t val = 0;

    if ((addr & (size - 1)) || size < 4) {
        H3100_GUEST_ERR(h3100_ub_mmio_read_size, "misaligned or sub-dword "
                        "read, offset 0x%" PRIx64 " size %u", addr, size);
    }
    if (addr + size <= H3100_REGS_SIZE) {
        val = ldn_le_p((uint8_t *)&s->bar + addr, size);
    } else if (addr >= H3100_DB_OFFSET) {
        H3100_GUEST_ERR(h3100_ub_db_read, "read of write-only doorbell, offset "
                        "0x%" PRIx64, addr);
    } else {
        H3100_GUEST_ERR(h3100_ub_mmio_read_end, "read crossing the register "
                        "file end, offset 0x%" PRIx64 " size %u", addr, size);
    }
    trace_h3100_mmio_read(addr, size, val);
    return val;
}

static void h3100_mmio_write(void *opaque, hwaddr addr, uint64_t data,
                             unsigned size)
{
    H3100State *s = opaque;
    H3100MmioWrite w = { .s = s, .addr = addr, .data = data, .size = size };

    trace_h3100_mmio_write(addr, size, data);
    if ((addr & 3) || size < 4) {
        H3100_GUEST_ERR(h3100_ub_mmio_write_size, "misaligned or sub-dword "
                        "write, offset 0x%" PRIx64 " size %u, ignored",
                        addr, size);
        return;
    }
    if (addr >= H3100_DB_OFFSET) {
        if (size != 4 ||
            addr >= H3100_DB_OFFSET + (s->max_ioqpairs + 1) * 8) {
            H3100_GUEST_ERR(h3100_ub_db_outside, "doorbell write of size %u "
                            "at 0x%" PRIx64 " outside the doorbells of %u "
                            "queue pairs", size, addr, s->max_ioqpairs + 1);
            if (size == 4) {
                h3100_doorbell_write(s, &w);
            }
            return;
        }
        h3100_doorbell_write(s, &w);
        return;
    }
    if (addr == NVME_REG_CC) {
        h3100_write_cc(s, data);
        if (size == 8) {
            w.addr += 4;
            w.data = data >> 32;
            w.size = 4;
            h3100_run_in_ctx(s, h3100_mmio_write_fn, &w);
        }
        return;
    }
    if (size == 8 && addr != NVME_REG_ASQ && addr != NVME_REG_ACQ) {
        /* a pair of 32-bit writes (CAP and reserved fields are RO) */
        w.size = 4;
        w.data = (uint32_t)data;
        h3100_run_in_ctx(s, h3100_mmio_write_fn, &w);
        w.addr += 4;
        w.data = data >> 32;
        if (w.addr == NVME_REG_CC) {
            h3100_write_cc(s, w.data);
            return;
        }
        h3100_run_in_ctx(s, h3100_mmio_write_fn, &w);
        return;
    }
    h3100_run_in_ctx(s, h3100_mmio_write_fn, &w);
}

const MemoryRegionOps h3100_mmio_ops = {
    .read = h3100_mmio_read,
    .write = h3100_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

/* ---- controller reset -------------------------------------------------- */

static void h3100_stop_fn(void *opaque)
{
    H3100State *s = opaque;

    s->stopping = true;
    h3100_queue_ioeventfd_stop(s);
}

static void h3100_reset_fn(void *opaque)
{
    H3100State *s = opaque;

    h3100_blk_unpark_all(s);
    h3100_queues_reset(s);
    h3100_aer_reset(s);
    h3100_dst_abort(s, 2);
    h3100_fw_reset(s);
    h3100_features_init(s);
    h3100_streams_reset(s);
    h3100_ns_reset(s);
    s->format_busy = false;
    s->format_wait = NULL;            /* freed with the admin queue */
    if (s->san.wait_io) {
        h3100_sanitize_timer_cb(s);   /* the drain let every write land */
    }
    s->dbbuf_enabled = false;
    s->dbbuf_dbs = 0;
    s->dbbuf_eis = 0;
    s->irq_status = 0;
    h3100_timer_del(s->idle_timer);
    h3100_fault_reset(s);
    stl_le_p(&s->bar.csts, 0);
    stl_le_p(&s->bar.intms, 0);
    stl_le_p(&s->bar.intmc, 0);
    s->stopping = false;
}

/*
 * Controller reset (CC.EN 1 -> 0, device reset, unplug): stop fetching,
 * let every block request finish, then free the queues and requests.
 */
void h3100_ctrl_reset(H3100State *s)
{
    PCIDevice *pci = PCI_DEVICE(s);

    trace_h3100_ctrl_reset();
    h3100_run_in_ctx(s, h3100_stop_fn, s);
    h3100_unmap_wait(s, false);
    blk_drain(s->blk);
    h3100_run_in_ctx(s, h3100_reset_fn, s);
    if (s->irq_bh) {
        qemu_bh_cancel(s->irq_bh);
        for (unsigned i = 0; i < H3100_IRQ_WORDS; i++) {
            qatomic_set(&s->irq_pending[i], 0);
        }
    }
    pci_irq_deassert(pci);
    h3100_main_loop_wake();           /* the drain ran in a vCPU, maybe */
}
