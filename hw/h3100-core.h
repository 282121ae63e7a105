/*
 * DapuStor H3100 NVMe SSD: the core, which every layer stands on
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What the layers above may use: h3100-context.c (contexts, the
 * re-entrancy guard), h3100-drive.c (clock, the model), h3100-timer.c,
 * h3100-regs.c, h3100-queue.c, h3100-complete.c, h3100-req.c,
 * h3100-irq.c, h3100-inflight.c, h3100-qgroup.c, h3100-runstate.c,
 * h3100-dma.c and h3100-blkdma.c.
 */
#ifndef HW_DAPUSTOR_H3100_CORE_H
#define HW_DAPUSTOR_H3100_CORE_H

#include "h3100.h"

/*
 * A guest error, traced and logged (-d guest_errors) in one line, as
 * QEMU's NVME_GUEST_ERR: @trace is an event of hw/trace-events that takes
 * the format's arguments.  h3100_err_*: the guest broke a rule the
 * specification states (the command fails, or an event is reported);
 * h3100_ub_*: what the specification leaves undefined (the device
 * ignores it).
 */
#define H3100_GUEST_ERR(trace, fmt, ...) \
    do { \
        (trace_##trace)(__VA_ARGS__); \
        qemu_log_mask(LOG_GUEST_ERROR, "%s: " #trace " in %s: " fmt "\n", \
                      TYPE_DAPUSTOR_H3100, __func__, ## __VA_ARGS__); \
    } while (0)

/* The device's lock (docs/design/threading.md). */
static inline void h3100_lock(H3100State *s)
{
    qemu_rec_mutex_lock(&s->lock);
}

static inline void h3100_unlock(H3100State *s)
{
    qemu_rec_mutex_unlock(&s->lock);
}

/* @req is a Write or Write Zeroes: its req->op is op.write. */
static inline bool h3100_req_is_write(const H3100Req *req)
{
    return req->sq->sqid && (req->cmd.opcode == NVME_CMD_WRITE ||
                             req->cmd.opcode == NVME_CMD_WRITE_ZEROES);
}

/* Nobody waits for @req's completion: a reset, or its queue's deletion. */
static inline bool h3100_req_cancelled(H3100Req *req)
{
    return req->s->stopping || req->sq->deleting;
}

/* A block request of @req that failed (@ret < 0) was cancelled. */
static inline bool h3100_blk_cancelled(H3100Req *req, int ret)
{
    return ret == -ECANCELED || h3100_req_cancelled(req);
}

/*
 * The status of a block request that failed (@ret < 0): aborted if a
 * reset or its queue's deletion cancelled it, else @err.
 */
static inline uint16_t h3100_blk_status(H3100Req *req, int ret, uint16_t err)
{
    if (h3100_blk_cancelled(req, ret)) {
        return NVME_CMD_ABORT_SQ_DEL;
    }
    return err;
}

/* h3100-context.c: which thread runs what */
void h3100_run_in(H3100State *s, AioContext *ctx, void (*fn)(void *),
                  void *opaque);
void h3100_run_in_ctx(H3100State *s, void (*fn)(void *), void *opaque);
/* The device's re-entrancy guard for a bottom half in @ctx */
MemReentrancyGuard *h3100_guard_in(H3100State *s, AioContext *ctx);
bool h3100_guard_enter(H3100State *s);
void h3100_guard_leave(H3100State *s, bool was);

/* h3100-drive.c: the drive's clock and model */
uint64_t h3100_now(H3100State *s);
/* model time now; the caller holds model_lock */
uint64_t h3100_now_locked(H3100State *s);
int64_t h3100_virt_ns(H3100State *s, uint64_t model_ns);
H3100Result h3100_model_io(H3100State *s, H3100Op op, uint64_t offset,
                           uint64_t length, bool fua, uint32_t stream);
void h3100_health(H3100State *s, H3100Health *h);
/* Host thermal management thresholds, kelvin (0: the drive's own). */
void h3100_thermal_limits(H3100State *s, uint32_t tmt1_k, uint32_t tmt2_k);
/* Power state @ps: the model keeps under its maximum power (PS0: none). */
void h3100_power_cap(H3100State *s, unsigned ps);

/*
 * h3100-timer.c: a virtual-clock timer in the device's context (main
 * loop or IOThread), or in @ctx; its callback runs under s->lock, with
 * the re-entrancy guard engaged in the main loop, and it stays on its
 * timer list while the callback re-arms it.
 */
H3100Timer *h3100_timer_new(H3100State *s, QEMUTimerCB *cb, void *opaque);
H3100Timer *h3100_timer_new_in(H3100State *s, AioContext *ctx,
                               QEMUTimerCB *cb, void *opaque);
void h3100_timer_free(H3100Timer **t);
void h3100_timer_mod(H3100Timer *t, int64_t ns);
void h3100_timer_mod_in(H3100Timer *t, int64_t ns);
void h3100_timer_del(H3100Timer *t);
int64_t h3100_timer_expire_ns(H3100Timer *t);
bool h3100_timer_pending(H3100Timer *t);

/* h3100-regs.c, with the controller's reset (CC.EN=0, a function reset) */
void h3100_ctrl_reset(H3100State *s);
extern const MemoryRegionOps h3100_mmio_ops;
void h3100_regs_init(H3100State *s);
uint64_t h3100_regs_cap(void);

/* h3100-queue.c */
void h3100_sq_init(H3100State *s, H3100SQueue *sq, uint64_t dma_addr,
                   uint16_t sqid, uint16_t cqid, uint32_t size);
void h3100_cq_init(H3100State *s, H3100CQueue *cq, uint64_t dma_addr,
                   uint16_t cqid, uint16_t vector, uint32_t size, bool ien);
uint16_t h3100_sq_delete(H3100State *s, H3100SQueue *sq, H3100Req *del);
void h3100_cq_free(H3100State *s, H3100CQueue *cq);
void h3100_sq_doorbell(H3100State *s, H3100SQueue *sq, uint32_t tail);
void h3100_cq_doorbell(H3100State *s, H3100CQueue *cq, uint32_t head);
unsigned h3100_cq_post(H3100State *s, H3100CQueue *cq);
void h3100_queues_reset(H3100State *s);
void h3100_dbbuf_setup_queue(H3100State *s, H3100SQueue *sq,
                             H3100CQueue *cq);
void h3100_queue_ioeventfd_stop(H3100State *s);
void h3100_sq_cancel_deleted(H3100QGroup *g);

/* h3100-irq.c */
void h3100_irq_notify(H3100State *s, H3100CQueue *cq, unsigned n);
void h3100_irq_resend(H3100State *s, H3100CQueue *cq);
void h3100_irq_deassert(H3100State *s, H3100CQueue *cq);
void h3100_intx_update(H3100State *s);
void h3100_irq_timer_cb(void *opaque);
void h3100_irq_bh(void *opaque);

/* h3100-complete.c: every command ends here */
void h3100_req_complete(H3100Req *req);
void h3100_req_post_now(H3100Req *req, uint64_t now);
void h3100_reqs_post_now(H3100State *s, H3100ReqList *due, uint64_t now);

/* h3100-req.c: where a command is held, and its release */
typedef enum H3100Hold {
    H3100_HOLD_DEFERRED,
    H3100_HOLD_DURABLE,
    H3100_HOLD_PENDING,
    H3100_HOLD_FAULT,
    H3100_HOLD_INFLIGHT,
    H3100_HOLD_VCACHE,
    H3100_HOLD_MEMORY,
    H3100_HOLDS
} H3100Hold;
void h3100_req_leave(H3100Req *req, H3100Hold hold);
void h3100_req_release(H3100Req *req);

/* h3100-runstate.c */
void h3100_runstate_init(H3100State *s);
void h3100_runstate_exit(H3100State *s);
void h3100_defer_write(H3100State *s, H3100Req *req);
void h3100_deferred_drop(H3100State *s, H3100Req *req);
void h3100_send_deferred(H3100QGroup *g);

/* h3100-qgroup.c */
bool h3100_groups_init(H3100State *s, Error **errp);
void h3100_groups_start(H3100State *s);
void h3100_groups_exit(H3100State *s);
void h3100_groups_free(H3100State *s);
bool h3100_in_group(H3100QGroup *g);
bool h3100_all_main(H3100State *s);

/* h3100-inflight.c */
void h3100_inflight_add(H3100State *s, H3100Req *req);
bool h3100_inflight_remove(H3100State *s, H3100Req *req);
void h3100_pending_drop(H3100State *s, H3100Req *req);
bool h3100_req_wait(H3100State *s, H3100Req *req, uint64_t now);
void h3100_pending_insert(H3100Req *req);
void h3100_due_timer_cb(void *opaque);
void h3100_due_rearm(H3100State *s);
void h3100_due_reset(H3100State *s);

/* h3100-dma.c: every guest address is checked to be RAM before use */
bool h3100_guest_ram(H3100State *s, uint64_t addr, uint64_t len, bool write);
/* The device's own DMA reaches RAM only, whatever the map: h3100-dma.c */
#define H3100_DMA_ATTRS ((MemTxAttrs) { .memory = 1 })
void *h3100_map_ram(AddressSpace *as, dma_addr_t addr, dma_addr_t *len,
                    DMADirection dir);
MemTxResult h3100_dma_read(H3100State *s, uint64_t addr, void *buf,
                           uint64_t len);
MemTxResult h3100_dma_write(H3100State *s, uint64_t addr, const void *buf,
                            uint64_t len);
MemTxResult h3100_dma_ld32(H3100State *s, uint64_t addr, uint32_t *val);
MemTxResult h3100_dma_st32(H3100State *s, uint64_t addr, uint32_t val);
uint16_t h3100_map_dptr(H3100State *s, H3100Req *req, uint64_t len,
                        DMADirection dir);
uint16_t h3100_dma_to_host(H3100State *s, H3100Req *req, const void *buf,
                           uint64_t len);
uint16_t h3100_dma_from_host(H3100State *s, H3100Req *req, void *buf,
                             uint64_t len);
void h3100_req_unmap(H3100Req *req);

/* h3100-fault.c: faults on demand, armed by the host */
uint16_t h3100_fault_at_fetch(H3100State *s, H3100Req *req);
void h3100_fault_unhold(H3100State *s, H3100Req *req);
uint32_t h3100_fault_at_enable(H3100State *s);
uint8_t h3100_fault_warning(H3100State *s);
/* a read-only fault refuses writes as the worn-out drive does */
static inline bool h3100_fault_read_only(const H3100State *s)
{
    return s->fault_ro;
}
void h3100_fault_reset(H3100State *s);
void h3100_faults_free(H3100State *s);
bool h3100_fault_abort(H3100State *s, H3100Req *req);
void h3100_fault_delay(H3100State *s, H3100Req *req, uint64_t now);
bool h3100_fault_lost_irq(H3100State *s, H3100Req *req, uint64_t now);
bool h3100_fault_link_lost(H3100State *s, H3100Req *req);
void h3100_link_init(H3100State *s);
void h3100_link_exit(H3100State *s);
/* h3100-pci.c */
void h3100_pci_repair_lnkcap(H3100State *s);

/* A link-down fault holds the drive off the bus: no DMA, no interrupt */
static inline bool h3100_off_bus(H3100State *s)
{
    return qatomic_read(&s->link_down);
}
uint16_t h3100_fault_media_write(H3100State *s, H3100Req *req);
void h3100_fault_class_init(ObjectClass *oc);
bool h3100_faults_check(H3100State *s, Error **errp);
void h3100_faults_realize(H3100State *s);
void h3100_faults_drop(H3100State *s);
void h3100_faults_pre_load(H3100State *s);
extern const VMStateDescription h3100_vmstate_faults;

/* h3100-blkdma.c: dma_blk_io() that maps RAM only, -EFAULT otherwise */
BlockAIOCB *h3100_blk_dma(H3100State *s, QEMUSGList *qsg, int64_t offset,
                          DMADirection dir, BdrvRequestFlags flags,
                          BlockCompletionFunc *cb, void *opaque);

#endif
