/*
 * DapuStor H3100 NVMe SSD: the controller's state in the migration stream
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What a snapshot or a migration must carry of the controller, beside
 * the drive model (h3100-migrate.c, which comes first in the stream):
 * PCI configuration and MSI-X (QEMU's helpers), the registers, the
 * features, the identity, the lifetime counters, the logs and the
 * per-feature state are fields of h3100_vmstate.  What has a shape of
 * its own (queues, commands outstanding, the volatile cache's journal,
 * the unmaps and namespace erases under way, the namespace table, the
 * vectors' coalescing, the firmware image being downloaded, the
 * Telemetry snapshots) is one field, "runtime", in the layout below,
 * checked piece by piece on loading as any file the device reads.
 *
 * The VM is stopped when the state is saved (h3100-runstate.c): no
 * block I/O of the device is out, every unmap waits at a step's start
 * or with its report, so every command outstanding is in one of the
 * phases of H3100MigPhase.  A command whose completion the model has
 * timed but not yet posted posts on the destination at the same
 * virtual time (the virtual clock migrates with the VM).  One kept for
 * a retry by werror=stop refuses the migration: the VM stopped on a host
 * I/O error, which is the host's to resolve first.
 *
 * "runtime", little-endian, version H3100_RT_VERSION:
 *   "H3RT" u32 version
 *   namespaces  u32 length, the state file's table (h3100-state.c), then
 *               per NSID 1..NN u8: its erase job's index, or 0xff
 *   uncor       u32 length, N x { u64 start, u64 end, u8 flags, u8[7] 0 }
 *               (the state file's)
 *   vectors     u32 nvec, per vector { u8 CD, u32 entries, i64 timer }
 *   idle        i64 timer; u64 log CAh's erase average at its start
 *   firmware    u32 length, the image downloaded so far
 *   telemetry   u32 length, 07h's snapshot; u32 length, 08h's
 *   CQs         u32 N, N x { u16 id, u16 vector, u8 IEN, u8 phase,
 *               u32 head, tail, size, u64 address }
 *   SQs         u32 N, N x { u16 id, u16 cqid, u8 deleting, u32 head,
 *               tail, size, u64 address }
 *   jobs        u32 N, N x { u64 todo, done, u32 lbads, u8 delete,
 *               u16 status, i64 timer, u8 has command, u16 sqid, slot }
 *   journal     u32 N, N x { u64 offset, u32 bytes, u8 valid, landed,
 *               u64 gen, bytes of data }
 *   commands    u32 N, N x { u16 sqid, slot, u8 phase, arg, in flight,
 *               FUA, u32 nsid, u16 status, SQE[64], CQE[16], u64 done,
 *               start, seq, offset, bytes, u32 ranges, range, u64 range
 *               done, i32 journal entry, u64 flush gen, u32 length,
 *               Dataset Management ranges }
 *   unmaps      u32 N, N x { u8 owner, finished, i32 ret, u8 has command,
 *               u16 sqid, slot, u8 job, u64 offset, end, u32 flags }
 */

#include "qemu/osdep.h"
#include <math.h>
#include "qemu/error-report.h"
#include "hw/pci/msix.h"
#include "migration/qemu-file-types.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "h3100/migrate.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
#include "h3100-life.h"
#include "trace.h"

#define H3100_RT_MAGIC      "H3RT"
#define H3100_RT_VERSION    2       /* 1: no uncorrectable flags */
#define H3100_RT_NO_JOB     0xff
/* what a stream may hold beside the journal's data and the image */
#define H3100_RT_FIXED_MAX  (64 * MiB)
#define H3100_REQ_CMD_BYTES 64
#define H3100_REQ_CQE_BYTES 16

QEMU_BUILD_BUG_ON(sizeof(NvmeCmd) != H3100_REQ_CMD_BYTES);
QEMU_BUILD_BUG_ON(sizeof(NvmeCqe) != H3100_REQ_CQE_BYTES);

/* Where an outstanding command is, as the stream says it. */
typedef enum H3100MigPhase {
    H3100_MIG_PENDING = 1,            /* timed, waits for its model time */
    H3100_MIG_POSTING,                /* waits for room in its CQ */
    H3100_MIG_AER,                    /* an Asynchronous Event Request */
    H3100_MIG_DELETE_SQ,              /* waits for its SQ's commands */
    H3100_MIG_FORMAT_WAIT,            /* a Format waiting for writes out */
    H3100_MIG_UNMAP,                  /* waits for its unmap (WZ, DSM, FNVM) */
    H3100_MIG_NS_JOB,                 /* a namespace erase's command */
    H3100_MIG_DEFERRED,               /* a write held back by the stop */
    H3100_MIG_DURABLE,                /* landed, waits for a flush */
    H3100_MIG_HELD,                   /* a timeout fault holds it */
    H3100_MIG_PHASES,
} H3100MigPhase;

/* Whose an unmap is: its callback on the destination. */
typedef enum H3100MigOwner {
    H3100_MIG_OWNER_WRITE_ZEROES = 1,
    H3100_MIG_OWNER_DSM,
    H3100_MIG_OWNER_FORMAT,
    H3100_MIG_OWNER_NS_JOB,
    H3100_MIG_OWNER_SANITIZE,
} H3100MigOwner;

/* ---- a byte buffer and a bounded reader -------------------------------- */

static void rt_put(GByteArray *b, const void *p, size_t n)
{
    g_byte_array_append(b, p, n);
}

static void rt_u8(GByteArray *b, uint8_t v)
{
    rt_put(b, &v, 1);
}

static void rt_u16(GByteArray *b, uint16_t v)
{
    uint8_t x[2];

    stw_le_p(x, v);
    rt_put(b, x, 2);
}

static void rt_u32(GByteArray *b, uint32_t v)
{
    uint8_t x[4];

    stl_le_p(x, v);
    rt_put(b, x, 4);
}

static void rt_u64(GByteArray *b, uint64_t v)
{
    uint8_t x[8];

    stq_le_p(x, v);
    rt_put(b, x, 8);
}

typedef struct RtReader {
    const uint8_t *p;
    size_t left;
    bool bad;                         /* read past the end */
} RtReader;

/* @n bytes, or NULL (and every later read fails) past the end */
static const uint8_t *rd_take(RtReader *r, size_t n)
{
    const uint8_t *p = r->p;

    if (r->bad || n > r->left) {
        r->bad = true;
        return NULL;
    }
    r->p += n;
    r->left -= n;
    return p;
}

static uint8_t rd_u8(RtReader *r)
{
    const uint8_t *p = rd_take(r, 1);

    return p ? *p : 0;
}

static uint16_t rd_u16(RtReader *r)
{
    const uint8_t *p = rd_take(r, 2);

    return p ? lduw_le_p(p) : 0;
}

static uint32_t rd_u32(RtReader *r)
{
    const uint8_t *p = rd_take(r, 4);

    return p ? ldl_le_p(p) : 0;
}

static uint64_t rd_u64(RtReader *r)
{
    const uint8_t *p = rd_take(r, 8);

    return p ? ldq_le_p(p) : 0;
}

/* A count of records of at least @min bytes each that the rest can hold */
static bool rd_count(RtReader *r, uint32_t *n, uint32_t max, size_t min)
{
    *n = rd_u32(r);
    return !r->bad && *n <= max && (uint64_t)*n * min <= r->left;
}

/* ---- saving ----------------------------------------------------------- */

typedef struct RtSave {
    H3100State *s;
    GByteArray *b;
    H3100NsJob *jobs[H3100_NS_MAX];
    unsigned njobs;
    const char *err;                  /* why it cannot be saved */
} RtSave;

static unsigned rt_job_index(RtSave *rs, H3100NsJob *job)
{
    for (unsigned i = 0; i < rs->njobs; i++) {
        if (rs->jobs[i] == job) {
            return i;
        }
    }
    return H3100_RT_NO_JOB;
}

static void rt_put_sized(GByteArray *b, const void *p, uint32_t len)
{
    rt_u32(b, len);
    rt_put(b, p, len);
}

static void rt_save_tables(RtSave *rs)
{
    H3100State *s = rs->s;
    g_autoptr(GByteArray) t = g_byte_array_new();

    h3100_pstate_pack_ns(s, t);
    rt_put_sized(rs->b, t->data, t->len);
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        rt_u8(rs->b, rt_job_index(rs, s->ns[i].job));
    }
    g_byte_array_set_size(t, 0);
    h3100_pstate_pack_uncor(s, t);
    rt_put_sized(rs->b, t->data, t->len);
}

static void rt_save_misc(RtSave *rs)
{
    H3100State *s = rs->s;
    uint64_t bits;

    rt_u32(rs->b, s->nvec);
    for (unsigned i = 0; i < s->nvec; i++) {
        rt_u8(rs->b, s->vec[i].no_coalesce);
        rt_u32(rs->b, s->vec[i].count);
        rt_u64(rs->b, h3100_timer_expire_ns(s->vec[i].timer));
    }
    rt_u64(rs->b, h3100_timer_expire_ns(s->idle_timer));
    memcpy(&bits, &s->tw_base.erase_avg, sizeof(bits));
    rt_u64(rs->b, bits);
    rt_put_sized(rs->b, s->fw.image, s->fw.image_len);
    rt_put_sized(rs->b, s->tlog.host.buf, s->tlog.host.len);
    rt_put_sized(rs->b, s->tlog.ctrl.buf, s->tlog.ctrl.len);
}

static void rt_save_queues(RtSave *rs)
{
    H3100State *s = rs->s;
    uint32_t n = 0;

    for (unsigned i = 0; i <= s->max_ioqpairs; i++) {
        n += s->cq[i] != NULL;
    }
    rt_u32(rs->b, n);
    for (unsigned i = 0; i <= s->max_ioqpairs; i++) {
        H3100CQueue *cq = s->cq[i];

        if (cq) {
            rt_u16(rs->b, cq->cqid);
            rt_u16(rs->b, cq->vector);
            rt_u8(rs->b, cq->irq_enabled);
            rt_u8(rs->b, cq->phase);
            rt_u32(rs->b, cq->head);
            rt_u32(rs->b, cq->tail);
            rt_u32(rs->b, cq->size);
            rt_u64(rs->b, cq->dma_addr);
        }
    }
    n = 0;
    for (unsigned i = 0; i <= s->max_ioqpairs; i++) {
        n += s->sq[i] != NULL;
    }
    rt_u32(rs->b, n);
    for (unsigned i = 0; i <= s->max_ioqpairs; i++) {
        H3100SQueue *sq = s->sq[i];

        if (sq) {
            rt_u16(rs->b, sq->sqid);
            rt_u16(rs->b, sq->cqid);
            rt_u8(rs->b, sq->deleting);
            rt_u32(rs->b, sq->head);
            rt_u32(rs->b, sq->tail);
            rt_u32(rs->b, sq->size);
            rt_u64(rs->b, sq->dma_addr);
        }
    }
}

static void rt_put_req_ref(GByteArray *b, H3100Req *req)
{
    rt_u8(b, req != NULL);
    rt_u16(b, req ? req->sq->sqid : 0);
    rt_u16(b, req ? req - req->sq->reqs : 0);
}

static void rt_save_jobs(RtSave *rs)
{
    rt_u32(rs->b, rs->njobs);
    for (unsigned i = 0; i < rs->njobs; i++) {
        H3100NsJobInfo info;

        h3100_ns_job_get(rs->jobs[i], &info);
        rt_u64(rs->b, info.todo);
        rt_u64(rs->b, info.done);
        rt_u32(rs->b, info.lbads);
        rt_u8(rs->b, info.delete);
        rt_u16(rs->b, info.status);
        rt_u64(rs->b, info.timer_ns);
        rt_put_req_ref(rs->b, info.req);
    }
}

static void rt_save_journal(RtSave *rs)
{
    H3100State *s = rs->s;
    H3100VEntry *e;
    uint32_t n = 0;

    QTAILQ_FOREACH(e, &s->vcache, next) {
        n++;
    }
    rt_u32(rs->b, n);
    QTAILQ_FOREACH(e, &s->vcache, next) {
        rt_u64(rs->b, e->offset);
        rt_u32(rs->b, e->bytes);
        rt_u8(rs->b, e->valid);
        rt_u8(rs->b, e->landed);
        rt_u64(rs->b, e->gen);
        rt_put(rs->b, e->old, e->bytes);
    }
}

static int32_t rt_journal_index(H3100State *s, H3100VEntry *want)
{
    H3100VEntry *e;
    int32_t i = 0;

    QTAILQ_FOREACH(e, &s->vcache, next) {
        if (e == want) {
            return i;
        }
        i++;
    }
    return -1;
}

typedef struct RtUnmapFind {
    H3100Req *req;
    bool found;
} RtUnmapFind;

static void rt_unmap_find(void *opaque, H3100Req *req, uint64_t offset,
                          uint64_t end, BdrvRequestFlags flags, bool finished,
                          int ret, BlockCompletionFunc *cb, void *cb_opaque)
{
    RtUnmapFind *f = opaque;

    f->found |= cb_opaque == f->req;
}

/* The phase of an outstanding command (0: none that can be carried). */
static uint8_t rt_req_phase(RtSave *rs, H3100Req *req, uint8_t *arg)
{
    H3100State *s = rs->s;
    RtUnmapFind find = { .req = req };

    *arg = 0;
    if (req->pending) {
        return H3100_MIG_PENDING;
    }
    if (req->held) {
        *arg = req->held_abort_ignored;
        return H3100_MIG_HELD;
    }
    if (req->posting) {
        return H3100_MIG_POSTING;
    }
    for (unsigned j = 0; j <= H3100_AERL; j++) {
        if (s->aer_reqs[j] == req) {
            *arg = j;
            return H3100_MIG_AER;
        }
    }
    if (req->parked) {
        rs->err = "the VM stopped on a host I/O error with commands kept "
                  "for a retry (werror/rerror=stop): resolve it and let "
                  "the VM run first";
        return 0;
    }
    if (req->aiocb) {
        rs->err = "a command has block I/O in flight";
        return 0;
    }
    if (req->deferred) {
        return H3100_MIG_DEFERRED;
    }
    if (req->durable_wait) {
        return H3100_MIG_DURABLE;
    }
    if (s->format_wait == req) {
        return H3100_MIG_FORMAT_WAIT;
    }
    for (unsigned i = 1; i <= s->max_ioqpairs; i++) {
        if (s->sq[i] && s->sq[i]->del_req == req) {
            return H3100_MIG_DELETE_SQ;
        }
    }
    for (unsigned i = 0; i < rs->njobs; i++) {
        H3100NsJobInfo info;

        h3100_ns_job_get(rs->jobs[i], &info);
        if (info.req == req) {
            *arg = i;
            return H3100_MIG_NS_JOB;
        }
    }
    h3100_unmap_foreach(s, rt_unmap_find, &find);
    if (find.found) {
        return H3100_MIG_UNMAP;
    }
    rs->err = "a command is in a state the stream cannot describe";
    return 0;
}

/* @req is an NVM command of opcode @opc: its req->op is that opcode's. */
static bool rt_req_is(const H3100Req *req, uint8_t opc)
{
    return req->sq->sqid && req->cmd.opcode == opc;
}

/*
 * The stream keeps every field of req->op in one layout whatever the
 * opcode; those another opcode has are zero (no journal entry: -1).
 */
static void rt_save_req(RtSave *rs, H3100Req *req, uint8_t phase,
                        uint8_t arg)
{
    GByteArray *b = rs->b;
    static const H3100DsmProgress no_dsm;
    bool is_dsm = rt_req_is(req, NVME_CMD_DSM);
    const H3100DsmProgress *dsm = is_dsm ? &req->op.dsm : &no_dsm;
    H3100VEntry *vc = h3100_req_is_write(req) ? req->op.write.vc_entry :
                      NULL;
    uint32_t buf_len = is_dsm && req->buf ?
                       dsm->nranges * sizeof(NvmeDsmRange) : 0;

    rt_u16(b, req->sq->sqid);
    rt_u16(b, req - req->sq->reqs);
    rt_u8(b, phase);
    rt_u8(b, arg);
    rt_u8(b, req->in_flight);
    rt_u8(b, req->fua);
    rt_u32(b, req->ns ? req->ns - rs->s->ns : 0);
    rt_u16(b, req->status);
    rt_put(b, &req->cmd, H3100_REQ_CMD_BYTES);
    rt_put(b, &req->cqe, H3100_REQ_CQE_BYTES);
    rt_u64(b, req->done_ns);
    rt_u64(b, req->start_ns);
    rt_u64(b, req->seq);
    rt_u64(b, req->offset);
    rt_u64(b, req->bytes);
    rt_u32(b, dsm->nranges);
    rt_u32(b, dsm->range_idx);
    rt_u64(b, dsm->range_done);
    rt_u32(b, vc ? rt_journal_index(rs->s, vc) : -1);
    rt_u64(b, rt_req_is(req, NVME_CMD_FLUSH) ? req->op.flush.vc_gen : 0);
    rt_put_sized(b, req->buf, buf_len);
}

/*
 * The commands, in an order the destination rebuilds its lists from:
 * those waiting for their time as each group's g->pending has them (the
 * destination sorts them into its own groups' lists), those waiting
 * for room as each CQ has them, then the rest.
 */
static void rt_save_reqs(RtSave *rs)
{
    H3100State *s = rs->s;
    GArray *list = g_array_new(false, false, sizeof(H3100Req *));
    H3100Req *req;

    for (unsigned g = 0; g < s->ngroups; g++) {
        QTAILQ_FOREACH(req, &s->groups[g].pending, pend) {
            g_array_append_val(list, req);
        }
    }
    for (unsigned i = 0; i <= s->max_ioqpairs; i++) {
        if (s->cq[i]) {
            QTAILQ_FOREACH(req, &s->cq[i]->req_list, entry) {
                g_array_append_val(list, req);
            }
        }
    }
    for (unsigned i = 0; i <= s->max_ioqpairs; i++) {
        if (s->sq[i]) {
            QTAILQ_FOREACH(req, &s->sq[i]->out_list, entry) {
                if (!req->pending) {
                    g_array_append_val(list, req);
                }
            }
        }
    }
    rt_u32(rs->b, list->len);
    for (guint i = 0; i < list->len && !rs->err; i++) {
        uint8_t arg, phase;

        req = g_array_index(list, H3100Req *, i);
        phase = rt_req_phase(rs, req, &arg);
        rt_save_req(rs, req, phase, arg);
    }
    g_array_free(list, true);
}

static const struct {
    H3100MigOwner owner;
    BlockCompletionFunc *cb;
} rt_owners[] = {
    { H3100_MIG_OWNER_WRITE_ZEROES, h3100_rw_cb },
    { H3100_MIG_OWNER_DSM, h3100_dsm_cb },
    { H3100_MIG_OWNER_FORMAT, h3100_format_cb },
    { H3100_MIG_OWNER_NS_JOB, h3100_ns_job_cb },
    { H3100_MIG_OWNER_SANITIZE, h3100_sanitize_done_cb },
};

static void rt_save_unmap(void *opaque, H3100Req *req, uint64_t offset,
                          uint64_t end, BdrvRequestFlags flags, bool finished,
                          int ret, BlockCompletionFunc *cb, void *cb_opaque)
{
    RtSave *rs = opaque;
    uint8_t owner = 0;

    for (unsigned i = 0; i < ARRAY_SIZE(rt_owners); i++) {
        if (rt_owners[i].cb == cb) {
            owner = rt_owners[i].owner;
        }
    }
    if (!owner) {
        rs->err = "an unmap of unknown purpose";
    }
    rt_u8(rs->b, owner);
    rt_u8(rs->b, finished);
    rt_u32(rs->b, ret);
    rt_put_req_ref(rs->b, req);
    rt_u8(rs->b, owner == H3100_MIG_OWNER_NS_JOB ?
          rt_job_index(rs, cb_opaque) : 0);
    rt_u64(rs->b, offset);
    rt_u64(rs->b, end);
    rt_u32(rs->b, flags);
}

static void rt_count_unmap(void *opaque, H3100Req *req, uint64_t offset,
                           uint64_t end, BdrvRequestFlags flags,
                           bool finished, int ret, BlockCompletionFunc *cb,
                           void *cb_opaque)
{
    (*(uint32_t *)opaque)++;
}

static void rt_save_fn(void *opaque)
{
    RtSave *rs = opaque;
    H3100State *s = rs->s;
    uint32_t n = 0;

    if (qatomic_read(&s->unmaps_busy)) {
        rs->err = "an unmap is taking a step";
        return;
    }
    rs->njobs = h3100_ns_jobs(s, rs->jobs);
    rt_put(rs->b, H3100_RT_MAGIC, 4);
    rt_u32(rs->b, H3100_RT_VERSION);
    rt_save_tables(rs);
    rt_save_misc(rs);
    rt_save_queues(rs);
    rt_save_jobs(rs);
    rt_save_journal(rs);
    rt_save_reqs(rs);
    h3100_unmap_foreach(s, rt_count_unmap, &n);
    rt_u32(rs->b, n);
    h3100_unmap_foreach(s, rt_save_unmap, rs);
}

static int h3100_rt_put(QEMUFile *f, void *pv, size_t size,
                        const VMStateField *field, JSONWriter *vmdesc)
{
    H3100State *s = container_of(pv, H3100State, mig_runtime);
    RtSave rs = { .s = s, .b = g_byte_array_new() };

    /* in the controller's context: an IOThread must not move under it */
    h3100_run_in_ctx(s, rt_save_fn, &rs);
    if (rs.err) {
        error_report("%s: cannot be saved: %s", TYPE_DAPUSTOR_H3100,
                     rs.err);
        g_byte_array_free(rs.b, true);
        return -EINVAL;
    }
    trace_h3100_vmstate_save(rs.b->len);
    qemu_put_be32(f, rs.b->len);
    qemu_put_buffer(f, rs.b->data, rs.b->len);
    g_byte_array_free(rs.b, true);
    return 0;
}

/* The longest "runtime" a drive of this configuration can have. */
static uint64_t h3100_rt_max(H3100State *s)
{
    return H3100_RT_FIXED_MAX + H3100_FW_MAX_BYTES +
           2 * s->cfg.cache.write_buffer_bytes;
}

static int h3100_rt_get(QEMUFile *f, void *pv, size_t size,
                        const VMStateField *field)
{
    H3100State *s = container_of(pv, H3100State, mig_runtime);
    uint32_t len = qemu_get_be32(f);
    g_autofree uint8_t *buf = NULL;

    if (len > h3100_rt_max(s)) {
        error_report("%s: migration: runtime state of %u bytes is beyond "
                     "what this drive can hold", TYPE_DAPUSTOR_H3100, len);
        return -EINVAL;
    }
    buf = g_try_malloc(len);
    if (!buf && len) {
        error_report("%s: migration: no memory for %u bytes of runtime "
                     "state", TYPE_DAPUSTOR_H3100, len);
        return -ENOMEM;
    }
    if (qemu_get_buffer(f, buf, len) != len) {
        return -EIO;
    }
    g_clear_pointer(&s->mig_runtime, g_bytes_unref);
    s->mig_runtime = g_bytes_new_take(g_steal_pointer(&buf), len);
    return 0;
}

static const VMStateInfo h3100_vmstate_info_runtime = {
    .name = "dapustor-h3100-runtime",
    .get = h3100_rt_get,
    .put = h3100_rt_put,
};

/* ---- loading ---------------------------------------------------------- */

typedef struct RtLoad {
    H3100State *s;
    RtReader r;
    H3100NsJob *jobs[H3100_NS_MAX];
    uint32_t njobs;
    uint8_t ns_job[H3100_NS_MAX + 1];
    GPtrArray *journal;               /* H3100VEntry, in order */
    GHashTable *phase;                /* H3100Req -> its H3100MigPhase */
    unsigned unmapped;                /* commands in H3100_MIG_UNMAP ... */
    GHashTable *unmap_of;             /* ... and those an unmap names */
    bool job_unmap[H3100_NS_MAX];     /* the job an unmap drives */
    char *err;
} RtLoad;

/* The phase the stream gave @req, 0 if it is not outstanding. */
static uint8_t rt_phase_of(RtLoad *rl, H3100Req *req)
{
    return GPOINTER_TO_UINT(g_hash_table_lookup(rl->phase, req));
}

static bool rt_fail(RtLoad *rl, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static bool rt_fail(RtLoad *rl, const char *fmt, ...)
{
    va_list ap;

    if (!rl->err) {
        va_start(ap, fmt);
        rl->err = g_strdup_vprintf(fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool rt_load_tables(RtLoad *rl)
{
    H3100State *s = rl->s;
    uint32_t len = rd_u32(&rl->r), n;
    const uint8_t *p = rd_take(&rl->r, len);

    if (!p || !h3100_pstate_ns(s, p, len, true)) {
        return rt_fail(rl, "bad namespace table");
    }
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        rl->ns_job[i] = rd_u8(&rl->r);
    }
    len = rd_u32(&rl->r);
    n = len / H3100_DS_UNCOR_BYTES;
    p = rd_take(&rl->r, len);
    g_array_set_size(s->uncor, 0);
    if (!p || len % H3100_DS_UNCOR_BYTES ||
        !h3100_pstate_uncor(s, p, n, H3100_DS_UNCOR_BYTES, true)) {
        return rt_fail(rl, "bad uncorrectable ranges");
    }
    return true;
}

/* A timer's deadline: none (-1) or a time a stream may hold. */
static bool rt_timer_ok(int64_t ns)
{
    return ns == -1 || (ns >= 0 && ns <= H3100_MIG_TIME_MAX);
}

/* A snapshot page: none, or exactly the size this drive's are. */
static bool rt_load_page(RtLoad *rl, H3100TelPage *page)
{
    H3100State *s = rl->s;
    size_t want = 2 * H3100_TEL_BLOCK + sizeof(H3100TelHistory) +
                  h3100_tel_da2_bytes(h3100_dies(&s->cfg),
                                      s->cfg.geo.channels);
    uint32_t len = rd_u32(&rl->r);
    const uint8_t *p = rd_take(&rl->r, len);

    g_clear_pointer(&page->buf, g_free);
    page->len = 0;
    if (!p || (len && len != want)) {
        return rt_fail(rl, "bad telemetry snapshot");
    }
    if (len) {
        page->buf = g_memdup2(p, len);
        page->len = len;
    }
    return true;
}

static bool rt_load_misc(RtLoad *rl)
{
    H3100State *s = rl->s;
    uint32_t nvec = rd_u32(&rl->r), len;
    int64_t idle;
    const uint8_t *p;
    uint64_t bits;

    if (nvec != s->nvec) {
        return rt_fail(rl, "%u interrupt vectors, this drive has %u", nvec,
                       s->nvec);
    }
    for (unsigned i = 0; i < nvec; i++) {
        uint8_t cd = rd_u8(&rl->r);
        int64_t at;

        s->vec[i].count = rd_u32(&rl->r);
        at = rd_u64(&rl->r);
        if (cd > 1 || !rt_timer_ok(at)) {
            return rt_fail(rl, "bad vector %u", i);
        }
        s->vec[i].no_coalesce = cd;
        if (at >= 0) {
            h3100_timer_mod(s->vec[i].timer, at);
        }
    }
    idle = rd_u64(&rl->r);
    bits = rd_u64(&rl->r);
    memcpy(&s->tw_base.erase_avg, &bits, sizeof(bits));
    if (!rt_timer_ok(idle) || !isfinite(s->tw_base.erase_avg)) {
        return rt_fail(rl, "bad idle timer or timed workload");
    }
    if (idle >= 0) {
        h3100_timer_mod(s->idle_timer, idle);
    }
    len = rd_u32(&rl->r);
    p = rd_take(&rl->r, len);
    if (!p || len > H3100_FW_MAX_BYTES) {
        return rt_fail(rl, "bad firmware image");
    }
    h3100_fw_free(s);
    s->fw.image = len ? g_memdup2(p, len) : NULL;
    s->fw.image_len = len;
    return rt_load_page(rl, &s->tlog.host) &&
           rt_load_page(rl, &s->tlog.ctrl);
}

/* A queue of @size entries of @entry bytes at @addr: guest RAM, aligned. */
static bool rt_queue_ok(H3100State *s, uint32_t size, uint32_t head,
                        uint32_t tail, uint64_t addr, size_t entry,
                        bool write)
{
    return size >= 2 && size <= H3100_MQES + 1 && head < size &&
           tail < size && addr && !(addr & (s->page_size - 1)) &&
           h3100_guest_ram(s, addr, (uint64_t)size * entry, write);
}

static bool rt_load_cqs(RtLoad *rl)
{
    H3100State *s = rl->s;
    uint32_t n;

    if (!rd_count(&rl->r, &n, s->max_ioqpairs + 1, 24)) {
        return rt_fail(rl, "bad CQ count");
    }
    if (n && !NVME_CSTS_RDY(ldl_le_p(&s->bar.csts))) {
        return rt_fail(rl, "queues on a controller not ready");
    }
    for (uint32_t i = 0; i < n; i++) {
        uint16_t qid = rd_u16(&rl->r), vector = rd_u16(&rl->r);
        uint8_t ien = rd_u8(&rl->r), phase = rd_u8(&rl->r);
        uint32_t head = rd_u32(&rl->r), tail = rd_u32(&rl->r);
        uint32_t size = rd_u32(&rl->r);
        uint64_t addr = rd_u64(&rl->r);
        H3100CQueue *cq;

        if (rl->r.bad || qid > s->max_ioqpairs || s->cq[qid] ||
            vector >= s->nvec || ien > 1 || phase > 1 ||
            !rt_queue_ok(s, size, head, tail, addr, sizeof(NvmeCqe), true)) {
            return rt_fail(rl, "bad CQ %u", qid);
        }
        cq = g_new0(H3100CQueue, 1);
        h3100_cq_init(s, cq, addr, qid, vector, size, ien);
        cq->head = head;
        cq->tail = tail;
        cq->phase = phase;
    }
    return true;
}

static bool rt_load_sqs(RtLoad *rl)
{
    H3100State *s = rl->s;
    uint32_t n;

    if (!rd_count(&rl->r, &n, s->max_ioqpairs + 1, 21)) {
        return rt_fail(rl, "bad SQ count");
    }
    for (uint32_t i = 0; i < n; i++) {
        uint16_t qid = rd_u16(&rl->r), cqid = rd_u16(&rl->r);
        uint8_t deleting = rd_u8(&rl->r);
        uint32_t head = rd_u32(&rl->r), tail = rd_u32(&rl->r);
        uint32_t size = rd_u32(&rl->r);
        uint64_t addr = rd_u64(&rl->r);
        H3100SQueue *sq;

        if (rl->r.bad || qid > s->max_ioqpairs || s->sq[qid] ||
            cqid > s->max_ioqpairs || !s->cq[cqid] || !qid != !cqid ||
            deleting > !!qid ||
            !rt_queue_ok(s, size, head, tail, addr, sizeof(NvmeCmd),
                         false)) {
            return rt_fail(rl, "bad SQ %u", qid);
        }
        sq = g_new0(H3100SQueue, 1);
        h3100_sq_init(s, sq, addr, qid, cqid, size);
        sq->head = head;
        sq->tail = tail;
        sq->deleting = deleting;
    }
    /* a ready controller has its admin queues: enabling again needs none */
    if (NVME_CSTS_RDY(ldl_le_p(&s->bar.csts)) && (!s->sq[0] || !s->cq[0])) {
        return rt_fail(rl, "a ready controller without its admin queues");
    }
    return true;
}

/* The command in slot @slot of SQ @sqid, if that is a slot. */
static H3100Req *rt_req_at(H3100State *s, uint16_t sqid, uint16_t slot)
{
    H3100SQueue *sq = sqid <= s->max_ioqpairs ? s->sq[sqid] : NULL;

    return sq && slot < sq->size ? &sq->reqs[slot] : NULL;
}

static bool rt_read_req_ref(RtLoad *rl, H3100Req **req)
{
    uint8_t has = rd_u8(&rl->r);
    uint16_t sqid = rd_u16(&rl->r), slot = rd_u16(&rl->r);

    *req = has ? rt_req_at(rl->s, sqid, slot) : NULL;
    return !rl->r.bad && has <= 1 && (!has || *req);
}

static bool rt_load_jobs(RtLoad *rl)
{
    H3100State *s = rl->s;
    uint64_t claimed = 0;

    if (!rd_count(&rl->r, &rl->njobs, H3100_NS_MAX, 36)) {
        return rt_fail(rl, "bad namespace job count");
    }
    for (uint32_t i = 0; i < rl->njobs; i++) {
        H3100NsJobInfo info;
        uint8_t delete;

        /* one field at a time: an initializer list has no order */
        info.todo = rd_u64(&rl->r);
        info.done = rd_u64(&rl->r);
        info.lbads = rd_u32(&rl->r);
        delete = rd_u8(&rl->r);
        info.delete = delete;
        info.status = rd_u16(&rl->r);
        info.timer_ns = rd_u64(&rl->r);
        if (!rt_read_req_ref(rl, &info.req) || !info.todo ||
            (info.todo & (claimed | 1)) ||
            (info.todo >> 1) >> H3100_NS_MAX || delete > 1 ||
            (info.lbads != 9 && info.lbads != 12) ||
            !rt_timer_ok(info.timer_ns) ||
            (!info.delete && !info.req)) {
            return rt_fail(rl, "bad namespace job %u", i);
        }
        for (uint32_t nsid = 1; nsid <= H3100_NS_MAX; nsid++) {
            H3100Namespace *ns = &s->ns[nsid];
            bool mine = info.todo & (1ull << nsid);

            if (mine != (rl->ns_job[nsid] == i) ||
                (mine && (ns->state == H3100_NS_FREE ||
                          (ns->state == H3100_NS_DELETING) !=
                          info.delete))) {
                return rt_fail(rl, "namespace job %u does not match the "
                               "table", i);
            }
        }
        if (info.done > s->nvm_bytes) {
            return rt_fail(rl, "bad namespace job %u", i);
        }
        claimed |= info.todo;
        rl->jobs[i] = h3100_ns_job_restore(s, &info);
    }
    for (uint32_t nsid = 1; nsid <= H3100_NS_MAX; nsid++) {
        if (rl->ns_job[nsid] != H3100_RT_NO_JOB &&
            rl->ns_job[nsid] >= rl->njobs) {
            return rt_fail(rl, "namespace %u names no job", nsid);
        }
    }
    return true;
}

static bool rt_load_journal(RtLoad *rl)
{
    H3100State *s = rl->s;
    uint64_t total = 0;
    uint32_t n;

    if (!rd_count(&rl->r, &n, UINT32_MAX, 22)) {
        return rt_fail(rl, "bad journal count");
    }
    for (uint32_t i = 0; i < n; i++) {
        uint64_t offset = rd_u64(&rl->r);
        uint32_t bytes = rd_u32(&rl->r);
        uint8_t valid = rd_u8(&rl->r), landed = rd_u8(&rl->r);
        uint64_t gen = rd_u64(&rl->r);
        const uint8_t *data = rd_take(&rl->r, bytes);
        H3100VEntry *e;

        total += bytes;
        if (!data || !bytes || valid > 1 || landed > 1 ||
            offset > s->nvm_bytes || bytes > s->nvm_bytes - offset ||
            bytes > s->cfg.cache.write_buffer_bytes ||
            gen > s->vcache_gen ||
            total > 2 * s->cfg.cache.write_buffer_bytes) {
            return rt_fail(rl, "bad journal entry %u", i);
        }
        e = g_new0(H3100VEntry, 1);
        *e = (H3100VEntry) {
            .offset = offset, .bytes = bytes, .old = g_memdup2(data, bytes),
            .valid = valid, .landed = landed, .gen = gen,
        };
        QTAILQ_INSERT_TAIL(&s->vcache, e, next);
        s->vcache_bytes += bytes;
        g_ptr_array_add(rl->journal, e);
    }
    return true;
}

/* What a phase asks of its command and of what else the stream holds. */
static bool rt_req_fits(RtLoad *rl, H3100Req *req, uint8_t phase,
                        uint8_t arg)
{
    H3100State *s = rl->s;
    bool admin = !req->sq->sqid;
    uint8_t opc = req->cmd.opcode;

    switch (phase) {
    case H3100_MIG_PENDING:
    case H3100_MIG_POSTING:
        return true;
    case H3100_MIG_AER:
        return admin && opc == NVME_ADM_CMD_ASYNC_EV_REQ &&
               arg <= H3100_AERL && !s->aer_reqs[arg];
    case H3100_MIG_DELETE_SQ: {
        uint16_t qid = le32_to_cpu(req->cmd.cdw10) & 0xffff;

        return admin && opc == NVME_ADM_CMD_DELETE_SQ && qid &&
               qid <= s->max_ioqpairs && s->sq[qid] &&
               s->sq[qid]->deleting && !s->sq[qid]->del_req;
    }
    case H3100_MIG_FORMAT_WAIT:
        return admin && opc == NVME_ADM_CMD_FORMAT_NVM && !s->format_wait &&
               s->format_busy;
    case H3100_MIG_NS_JOB: {
        H3100NsJobInfo info;

        if (!admin || arg >= rl->njobs) {
            return false;
        }
        h3100_ns_job_get(rl->jobs[arg], &info);
        return info.req == req;
    }
    case H3100_MIG_UNMAP:
        return admin ? opc == NVME_ADM_CMD_FORMAT_NVM :
                       opc == NVME_CMD_WRITE_ZEROES || opc == NVME_CMD_DSM;
    case H3100_MIG_DEFERRED:
        return !admin && opc == NVME_CMD_WRITE;
    case H3100_MIG_DURABLE:
        return admin ? opc == NVME_ADM_CMD_FORMAT_NVM :
                       opc == NVME_CMD_WRITE || opc == NVME_CMD_WRITE_ZEROES ||
                       opc == NVME_CMD_DSM;
    case H3100_MIG_HELD:
        return arg <= 1;
    default:
        return false;
    }
}

/*
 * Block I/O of its own is what keeps a command in flight (on g->inflight):
 * an unmap, a write held back, a write waiting to be durable.  An I/O
 * command there always is; Format only once it waited for the others.
 */
static bool rt_in_flight_fits(H3100Req *req, uint8_t phase, bool in_flight)
{
    bool has_io = phase == H3100_MIG_UNMAP || phase == H3100_MIG_DEFERRED ||
                  phase == H3100_MIG_DURABLE;

    return req->sq->sqid ? in_flight == has_io : !in_flight || has_io;
}

/*
 * An I/O command that goes on with its work on the destination: it has
 * its namespace, and its LBAs are what its command says there.
 */
static bool rt_io_fits(RtLoad *rl, H3100Req *req, uint8_t phase)
{
    bool works = phase == H3100_MIG_UNMAP || phase == H3100_MIG_DEFERRED ||
                 phase == H3100_MIG_DURABLE;

    if (!req->sq->sqid || !works) {
        return true;
    }
    return req->ns && req->ns - rl->s->ns == le32_to_cpu(req->cmd.nsid) &&
           h3100_io_restored_ok(rl->s, req, phase == H3100_MIG_UNMAP);
}

/* Put @req where its phase keeps it. */
static void rt_req_place(RtLoad *rl, H3100Req *req, uint8_t phase,
                         uint8_t arg)
{
    H3100State *s = rl->s;

    switch (phase) {
    case H3100_MIG_PENDING:
        h3100_pending_insert(req);
        req->io_done = true;
        break;
    case H3100_MIG_POSTING:
        QTAILQ_REMOVE(&req->sq->out_list, req, entry);
        QTAILQ_INSERT_TAIL(&s->cq[req->sq->cqid]->req_list, req, entry);
        req->posting = true;
        req->io_done = true;
        break;
    case H3100_MIG_AER:
        s->aer_reqs[arg] = req;
        s->outstanding_aers++;
        break;
    case H3100_MIG_DELETE_SQ:
        s->sq[le32_to_cpu(req->cmd.cdw10) & 0xffff]->del_req = req;
        break;
    case H3100_MIG_FORMAT_WAIT:
        s->format_wait = req;
        break;
    case H3100_MIG_UNMAP:
        rl->unmapped++;
        break;
    case H3100_MIG_DEFERRED:
        h3100_defer_write(s, req);
        break;
    case H3100_MIG_DURABLE:
        QTAILQ_INSERT_TAIL(&s->durable_next, req, durable_entry);
        req->durable_wait = H3100_DURABLE_NEXT;
        break;
    case H3100_MIG_HELD:
        QTAILQ_INSERT_TAIL(&s->held, req, held_entry);
        req->held = true;
        req->held_abort_ignored = arg;
        break;
    }
}

static bool rt_load_req(RtLoad *rl, uint32_t i)
{
    H3100State *s = rl->s;
    uint16_t sqid = rd_u16(&rl->r), slot = rd_u16(&rl->r);
    uint8_t phase = rd_u8(&rl->r), arg = rd_u8(&rl->r);
    uint8_t in_flight = rd_u8(&rl->r), fua = rd_u8(&rl->r);
    uint32_t nsid = rd_u32(&rl->r);
    H3100Req *req = rt_req_at(s, sqid, slot);
    const uint8_t *cmd, *cqe, *buf;
    H3100DsmProgress dsm;
    uint64_t vc_gen;
    int32_t vc;
    uint32_t len;

    if (!req || rt_phase_of(rl, req) || !phase ||
        phase >= H3100_MIG_PHASES || in_flight > 1 || fua > 1 ||
        !rt_in_flight_fits(req, phase, in_flight) ||
        nsid > H3100_NS_MAX ||
        (nsid && s->ns[nsid].state == H3100_NS_FREE)) {
        return rt_fail(rl, "bad command %u", i);
    }
    g_hash_table_insert(rl->phase, req, GUINT_TO_POINTER(phase));
    /* from the SQ's free list to its outstanding ones */
    QTAILQ_REMOVE(&req->sq->free_list, req, entry);
    QTAILQ_INSERT_TAIL(&req->sq->out_list, req, entry);
    req->ns = nsid ? &s->ns[nsid] : NULL;
    req->fua = fua;
    req->status = rd_u16(&rl->r);
    cmd = rd_take(&rl->r, H3100_REQ_CMD_BYTES);
    cqe = rd_take(&rl->r, H3100_REQ_CQE_BYTES);
    req->done_ns = rd_u64(&rl->r);
    req->start_ns = rd_u64(&rl->r);
    req->seq = rd_u64(&rl->r);
    req->offset = rd_u64(&rl->r);
    req->bytes = rd_u64(&rl->r);
    dsm.nranges = rd_u32(&rl->r);
    dsm.range_idx = rd_u32(&rl->r);
    dsm.range_done = rd_u64(&rl->r);
    vc = rd_u32(&rl->r);
    vc_gen = rd_u64(&rl->r);
    len = rd_u32(&rl->r);
    buf = rd_take(&rl->r, len);
    if (!buf || !cmd || !cqe) {
        return rt_fail(rl, "truncated command %u", i);
    }
    memcpy(&req->cmd, cmd, H3100_REQ_CMD_BYTES);
    memcpy(&req->cqe, cqe, H3100_REQ_CQE_BYTES);
    if (req->offset > s->nvm_bytes || req->bytes > s->nvm_bytes -
        req->offset || req->seq >= s->fetch_seq ||
        dsm.nranges > 256 || dsm.range_idx > dsm.nranges ||
        (len && (!rt_req_is(req, NVME_CMD_DSM) ||
                 len != dsm.nranges * sizeof(NvmeDsmRange))) ||
        req->done_ns > H3100_MIG_TIME_MAX ||
        req->start_ns > H3100_MIG_TIME_MAX ||
        vc < -1 || vc >= (int32_t)rl->journal->len ||
        (vc >= 0 && !h3100_req_is_write(req)) ||
        !rt_req_fits(rl, req, phase, arg)) {
        return rt_fail(rl, "bad command %u (phase %u)", i, phase);
    }
    /* an older stream may carry another opcode's leftovers: not ours */
    memset(&req->op, 0, sizeof(req->op));
    if (rt_req_is(req, NVME_CMD_DSM)) {
        req->op.dsm = dsm;
    } else if (rt_req_is(req, NVME_CMD_FLUSH)) {
        req->op.flush.vc_gen = vc_gen;
    }
    if (len) {
        req->buf = g_memdup2(buf, len);
    }
    if (!rt_io_fits(rl, req, phase)) {
        return rt_fail(rl, "command %u does not fit its namespace", i);
    }
    if (vc >= 0) {
        H3100VEntry *e = g_ptr_array_index(rl->journal, vc);

        if (e->landed) {
            return rt_fail(rl, "command %u owns a landed journal entry", i);
        }
        g_ptr_array_index(rl->journal, vc) = NULL;  /* one owner */
        req->op.write.vc_entry = e;
    }
    if (in_flight) {
        QTAILQ_INSERT_TAIL(&req->sq->g->inflight, req, ioentry);
        req->in_flight = true;
        s->io_inflight += !!sqid;
    }
    rt_req_place(rl, req, phase, arg);
    return true;
}

static bool rt_load_reqs(RtLoad *rl)
{
    uint32_t n;

    if (!rd_count(&rl->r, &n, UINT32_MAX, 160)) {
        return rt_fail(rl, "bad command count");
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!rt_load_req(rl, i)) {
            return false;
        }
    }
    return true;
}

/* The opcode and queue an unmap's command has, by owner. */
static bool rt_unmap_req_ok(RtLoad *rl, uint8_t owner, H3100Req *req)
{
    uint8_t want = owner == H3100_MIG_OWNER_FORMAT ? NVME_ADM_CMD_FORMAT_NVM :
                   owner == H3100_MIG_OWNER_DSM ? NVME_CMD_DSM :
                   NVME_CMD_WRITE_ZEROES;
    bool admin = owner == H3100_MIG_OWNER_FORMAT;

    return req && rt_phase_of(rl, req) == H3100_MIG_UNMAP &&
           req->cmd.opcode == want && !req->sq->sqid == admin;
}

/* The callback an unmap reports to, and its argument. */
static bool rt_unmap_owner(RtLoad *rl, uint8_t owner, H3100Req *req,
                           uint8_t job, BlockCompletionFunc **cb,
                           void **opaque)
{
    H3100NsJobInfo info;

    for (unsigned i = 0; i < ARRAY_SIZE(rt_owners); i++) {
        if (rt_owners[i].owner == owner) {
            *cb = rt_owners[i].cb;
        }
    }
    switch (owner) {
    case H3100_MIG_OWNER_WRITE_ZEROES:
    case H3100_MIG_OWNER_DSM:
    case H3100_MIG_OWNER_FORMAT:
        *opaque = req;
        /* each callback once: a second would complete the command twice */
        return rt_unmap_req_ok(rl, owner, req) &&
               g_hash_table_add(rl->unmap_of, req) &&
               (owner != H3100_MIG_OWNER_FORMAT || rl->s->format_busy);
    case H3100_MIG_OWNER_NS_JOB:
        if (job >= rl->njobs || rl->job_unmap[job]) {
            return false;
        }
        h3100_ns_job_get(rl->jobs[job], &info);
        *opaque = rl->jobs[job];
        rl->job_unmap[job] = true;
        return req == (info.delete ? NULL : info.req);
    case H3100_MIG_OWNER_SANITIZE:
        *opaque = rl->s;
        return !req && rl->s->san.zeroing;
    default:
        return false;
    }
}

static bool rt_load_unmaps(RtLoad *rl)
{
    H3100State *s = rl->s;
    bool sanitizing = false, formatting = false;
    uint32_t n;

    if (!rd_count(&rl->r, &n, UINT32_MAX, 32)) {
        return rt_fail(rl, "bad unmap count");
    }
    for (uint32_t i = 0; i < n; i++) {
        uint8_t owner = rd_u8(&rl->r), finished = rd_u8(&rl->r);
        int32_t ret = rd_u32(&rl->r);
        H3100Req *req;
        bool ref = rt_read_req_ref(rl, &req);
        uint8_t job = rd_u8(&rl->r);
        uint64_t offset = rd_u64(&rl->r), end = rd_u64(&rl->r);
        uint32_t flags = rd_u32(&rl->r);
        BlockCompletionFunc *cb = NULL;
        void *opaque = NULL;

        if (!ref || rl->r.bad || finished > 1 || ret > 0 ||
            offset > end || end > s->nvm_bytes ||
            (flags & ~BDRV_REQ_FUA) ||
            (owner == H3100_MIG_OWNER_SANITIZE && sanitizing) ||
            (owner == H3100_MIG_OWNER_FORMAT && formatting) ||
            !rt_unmap_owner(rl, owner, req, job, &cb, &opaque)) {
            return rt_fail(rl, "bad unmap %u", i);
        }
        h3100_unmap_restore(s, req, offset, end, flags, finished, ret, cb,
                            opaque);
        sanitizing |= owner == H3100_MIG_OWNER_SANITIZE;
        formatting |= owner == H3100_MIG_OWNER_FORMAT;
    }
    if (rl->unmapped != g_hash_table_size(rl->unmap_of)) {
        return rt_fail(rl, "a command waits for an unmap that is not there");
    }
    if (s->san.zeroing != (s->san.active && sanitizing)) {
        return rt_fail(rl, "a sanitize zeroing without its unmap");
    }
    if (s->format_busy && !formatting && !s->format_wait) {
        return rt_fail(rl, "a format under way without its command");
    }
    return true;
}

/* "runtime" into the device, whose queues and lists are empty. */
static bool rt_load(RtLoad *rl)
{
    const uint8_t *magic = rd_take(&rl->r, 4);

    if (!magic || memcmp(magic, H3100_RT_MAGIC, 4)) {
        return rt_fail(rl, "no runtime state");
    }
    if (rd_u32(&rl->r) != H3100_RT_VERSION) {
        return rt_fail(rl, "runtime state of another version");
    }
    if (!rt_load_tables(rl) || !rt_load_misc(rl) || !rt_load_cqs(rl) ||
        !rt_load_sqs(rl) || !rt_load_jobs(rl) || !rt_load_journal(rl) ||
        !rt_load_reqs(rl) || !rt_load_unmaps(rl)) {
        return false;
    }
    if (rl->r.left) {
        return rt_fail(rl, "%zu bytes after the runtime state", rl->r.left);
    }
    for (guint i = 0; i < rl->journal->len; i++) {
        H3100VEntry *e = g_ptr_array_index(rl->journal, i);

        if (e && !e->landed) {
            return rt_fail(rl, "journal entry %u has no write", i);
        }
    }
    for (uint32_t i = 0; i < rl->njobs; i++) {
        H3100NsJobInfo info;

        h3100_ns_job_get(rl->jobs[i], &info);
        if (info.req && rt_phase_of(rl, info.req) != H3100_MIG_NS_JOB) {
            return rt_fail(rl, "namespace job %u has no command", i);
        }
        /* a job goes on by its poll or by its unmap, never both */
        if ((info.timer_ns >= 0) == rl->job_unmap[i]) {
            return rt_fail(rl, "namespace job %u has %s", i,
                           rl->job_unmap[i] ? "two next steps" :
                                              "no next step");
        }
    }
    /* what waits for the I/O in flight has some to wait for */
    if ((rl->s->format_wait || rl->s->san.wait_io) && !rl->s->io_inflight) {
        return rt_fail(rl, "a wait for I/O none is in flight ends");
    }
    return true;
}

/* ---- the fields --------------------------------------------------------- */

/* A span of model time: from @start to @end, both a stream may hold. */
static bool rt_span_ok(int64_t start, int64_t end)
{
    return start >= 0 && start <= end && end <= H3100_MIG_TIME_MAX;
}

/*
 * Every time the controller computes a deadline from: no sum of two of
 * them wraps (h3100_virt_ns), no progress divides by a negative span.
 */
static bool rt_times_ok(H3100State *s)
{
    int64_t max = H3100_MIG_TIME_MAX;

    return s->time_base >= -max && s->time_base <= max &&
           s->model_last <= H3100_MIG_TIME_MAX &&
           (!s->dst.current || rt_span_ok(s->dst.start_ns, s->dst.end_ns)) &&
           (!s->san.active || rt_span_ok(s->san.start_ns, s->san.end_ns)) &&
           (s->san.active || (!s->san.zeroing && !s->san.wait_io));
}

static bool h3100_vmstate_fields_ok(H3100State *s, const char **why)
{
    uint32_t cc = ldl_le_p(&s->bar.cc);
    uint32_t csts = ldl_le_p(&s->bar.csts);

    *why = NULL;
    if (ldq_le_p(&s->bar.cap) != h3100_regs_cap() ||
        ldl_le_p(&s->bar.vs) != H3100_NVME_VERSION) {
        *why = "capabilities of another controller";
    } else if (NVME_CSTS_RDY(csts) && (!NVME_CC_EN(cc) ||
                                       NVME_CC_MPS(cc) > 4)) {
        *why = "ready without a valid CC";
    } else if (!rt_times_ok(s)) {
        *why = "times out of range";
    } else if (s->aer_queued > H3100_AER_QUEUE_MAX ||
               s->outstanding_aers > H3100_AERL + 1) {
        *why = "bad event queue";
    } else if (s->waf_count > H3100_WAF_RING ||
               s->waf_head >= H3100_WAF_RING) {
        *why = "bad WAF samples";
    } else if (!s->fw.active || s->fw.active > H3100_FW_SLOTS ||
               s->fw.next > H3100_FW_SLOTS) {
        *why = "bad firmware slots";
    } else if (s->dst.nresults > ARRAY_SIZE(s->dst.results) ||
               s->dst.current > H3100_DST_EXTENDED) {
        *why = "bad self-test state";
    } else if (s->streams.open > H3100_STREAMS_MAX ||
               s->streams.allocated > H3100_STREAMS_MAX) {
        *why = "bad Streams state";
    } else if (memchr(s->sn, 0, sizeof(s->sn)) == NULL ||
               memchr(s->mn, 0, sizeof(s->mn)) == NULL) {
        *why = "bad identity";
    } else if (s->dbbuf_enabled &&
               (!h3100_guest_ram(s, s->dbbuf_dbs, s->page_size, true) ||
                !h3100_guest_ram(s, s->dbbuf_eis, s->page_size, true))) {
        *why = "doorbell buffers are not guest RAM";
    }
    for (unsigned i = 0; !*why && i < s->streams.open; i++) {
        if (!s->streams.hint[i] || s->streams.hint[i] >= H3100_MAX_STREAMS) {
            *why = "bad Streams state";
        }
    }
    return !*why;
}

/*
 * Before loading: the device as it stands (loadvm into a running one)
 * goes, as at its exit; the drive model came in its own section already.
 */
static int h3100_pre_load(void *opaque)
{
    H3100State *s = opaque;

    if (s->mig_load != H3100_MIG_LOAD_CONTROLLER) {
        error_report("%s: migration: the controller's state comes without "
                     "the drive model before it", TYPE_DAPUSTOR_H3100);
        return -EINVAL;
    }
    h3100_mig_forget(s);
    h3100_faults_pre_load(s);
    s->mig_ctrl_touched = true;       /* a failed load must undo all */
    s->quiesced = true;               /* the VM runs only when loaded */
    return 0;
}

/* The runtime's queues need the page size CC gives, once enabled. */
static void h3100_post_load_regs(H3100State *s)
{
    uint32_t cc = ldl_le_p(&s->bar.cc);

    if (NVME_CSTS_RDY(ldl_le_p(&s->bar.csts))) {
        s->page_bits = NVME_CC_MPS(cc) + 12;
        s->page_size = 1u << s->page_bits;
        s->max_prp_ents = s->page_size / sizeof(uint64_t);
    }
}

/* What the stream's PCI config must hold (h3100_pci_repair_lnkcap()) */
static int h3100_pre_save(void *opaque)
{
    h3100_pci_repair_lnkcap(opaque);
    return 0;
}

static int h3100_post_load(void *opaque, int version_id)
{
    H3100State *s = opaque;
    RtLoad rl = {
        .s = s, .journal = g_ptr_array_new(),
        .phase = g_hash_table_new(NULL, NULL),
        .unmap_of = g_hash_table_new(NULL, NULL),
    };
    gsize len = 0;
    const char *why;

    s->mig_load = H3100_MIG_LOAD_IDLE;    /* another load starts afresh */
    h3100_post_load_regs(s);
    if (s->mig_runtime) {
        rl.r.p = g_bytes_get_data(s->mig_runtime, &len);
        rl.r.left = len;
    }
    h3100_lock(s);                    /* the queue groups are idle: tidy */
    if (!h3100_vmstate_fields_ok(s, &why)) {
        rt_fail(&rl, "%s", why);
    } else if (rt_load(&rl)) {
        h3100_unlock(s);
        h3100_mig_loaded(s);
        h3100_lock(s);
    }
    h3100_unlock(s);
    g_ptr_array_free(rl.journal, true);
    g_hash_table_destroy(rl.phase);
    g_hash_table_destroy(rl.unmap_of);
    g_clear_pointer(&s->mig_runtime, g_bytes_unref);
    if (rl.err) {
        error_report("%s: migration: the controller's state is corrupt: %s",
                     TYPE_DAPUSTOR_H3100, rl.err);
        g_free(rl.err);
        h3100_mig_forget(s);          /* no half-built queues left */
        return -EINVAL;
    }
    trace_h3100_vmstate_loaded(len);
    return 0;
}

static const VMStateDescription h3100_vmstate_features = {
    .name = "dapustor-h3100/features",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(arbitration, H3100Features),
        VMSTATE_UINT32(power_state, H3100Features),
        VMSTATE_UINT16(temp_over, H3100Features),
        VMSTATE_UINT16(temp_under, H3100Features),
        VMSTATE_UINT32(err_rec, H3100Features),
        VMSTATE_BOOL(vwc, H3100Features),
        VMSTATE_UINT32(int_coalescing, H3100Features),
        VMSTATE_UINT32(aec, H3100Features),
        VMSTATE_BOOL(write_atomicity_normal, H3100Features),
        VMSTATE_UINT64(timestamp, H3100Features),
        VMSTATE_INT64(ts_base, H3100Features),
        VMSTATE_UINT32(nq, H3100Features),
        VMSTATE_UINT32(hctm, H3100Features),
        VMSTATE_UINT16(lsiri, H3100Features),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription h3100_vmstate_waf = {
    .name = "dapustor-h3100/waf-sample",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(ns, H3100WafSample),
        VMSTATE_UINT64(host, H3100WafSample),
        VMSTATE_UINT64(nand, H3100WafSample),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription h3100_vmstate_extremes = {
    .name = "dapustor-h3100/extremes",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(run_min_k, H3100Extremes),
        VMSTATE_UINT32(run_max_k, H3100Extremes),
        VMSTATE_UINT32(life_min_k, H3100Extremes),
        VMSTATE_UINT32(life_max_k, H3100Extremes),
        VMSTATE_UINT32(pon_k, H3100Extremes),
        VMSTATE_UINT32(pon_min_k, H3100Extremes),
        VMSTATE_UINT32(pon_max_k, H3100Extremes),
        VMSTATE_UINT32(power_min_mw, H3100Extremes),
        VMSTATE_UINT32(power_max_mw, H3100Extremes),
        VMSTATE_UINT64(power_sum_mw, H3100Extremes),
        VMSTATE_UINT64(power_samples, H3100Extremes),
        VMSTATE_UINT32(fw_updates, H3100Extremes),
        VMSTATE_END_OF_LIST()
    },
};

const VMStateDescription h3100_vmstate = {
    .name = TYPE_DAPUSTOR_H3100,
    .version_id = H3100_VMSTATE_VERSION,
    .minimum_version_id = H3100_VMSTATE_VERSION,
    .pre_load = h3100_pre_load,
    .pre_save = h3100_pre_save,
    .post_load = h3100_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, H3100State),
        VMSTATE_MSIX(parent_obj, H3100State),
        VMSTATE_BUFFER_UNSAFE(bar, H3100State, 0, sizeof(NvmeBar)),
        VMSTATE_UINT32(irq_status, H3100State),
        VMSTATE_UINT64_ARRAY(irq_pending, H3100State, H3100_IRQ_WORDS),
        VMSTATE_INT64(time_base, H3100State),
        VMSTATE_UINT64(model_last, H3100State),
        VMSTATE_UINT64(fetch_seq, H3100State),
        VMSTATE_STRUCT(feat, H3100State, 1, h3100_vmstate_features,
                       H3100Features),
        VMSTATE_BUFFER_UNSAFE(sn, H3100State, 0,
                              sizeof_field(H3100State, sn)),
        VMSTATE_BUFFER_UNSAFE(mn, H3100State, 0,
                              sizeof_field(H3100State, mn)),
        VMSTATE_UINT64(eui64, H3100State),
        VMSTATE_BUFFER(nguid, H3100State),
        VMSTATE_UINT64(power_on_base_ns, H3100State),
        VMSTATE_UINT64(power_cycles, H3100State),
        VMSTATE_UINT64(unsafe_shutdowns, H3100State),
        VMSTATE_BOOL(pstate_clean, H3100State),
        VMSTATE_UINT64(media_errors, H3100State),
        VMSTATE_UINT64(error_count, H3100State),
        VMSTATE_BUFFER_UNSAFE(errlog, H3100State, 0,
                              sizeof(NvmeErrorLog) * H3100_ERRLOG_ENTRIES),
        VMSTATE_BUFFER_UNSAFE(aer_queue, H3100State, 0,
                              sizeof(NvmeAerResult) * H3100_AER_QUEUE_MAX),
        VMSTATE_UINT32(aer_queued, H3100State),
        VMSTATE_UINT8(aer_mask, H3100State),
        VMSTATE_UINT8_ARRAY(aer_mask_log, H3100State, 8),
        VMSTATE_UINT8(smart_warn_sent, H3100State),
        VMSTATE_UINT16(lsi.gen, H3100State),
        VMSTATE_BOOL(lsi.gen_new, H3100State),
        VMSTATE_BOOL(lsi.alert_due, H3100State),
        VMSTATE_INT64(lsi.restart_ns, H3100State),
        VMSTATE_STRUCT_ARRAY(waf_ring, H3100State, H3100_WAF_RING, 1,
                             h3100_vmstate_waf, H3100WafSample),
        VMSTATE_UINT32(waf_head, H3100State),
        VMSTATE_UINT32(waf_count, H3100State),
        VMSTATE_UINT64(tw_base.now_ns, H3100State),
        VMSTATE_UINT64(tw_base.host_read_cmds, H3100State),
        VMSTATE_UINT64(tw_base.host_write_cmds, H3100State),
        VMSTATE_STRUCT(ext, H3100State, 1, h3100_vmstate_extremes,
                       H3100Extremes),
        VMSTATE_BUFFER_UNSAFE(fw.slot, H3100State, 0,
                              sizeof_field(H3100State, fw.slot)),
        VMSTATE_UINT8(fw.active, H3100State),
        VMSTATE_UINT8(fw.next, H3100State),
        VMSTATE_UINT8(dst.current, H3100State),
        VMSTATE_UINT32(dst.nsid, H3100State),
        VMSTATE_INT64(dst.start_ns, H3100State),
        VMSTATE_INT64(dst.end_ns, H3100State),
        VMSTATE_BUFFER_UNSAFE(dst.results, H3100State, 0,
                              sizeof_field(H3100State, dst.results)),
        VMSTATE_UINT32(dst.nresults, H3100State),
        VMSTATE_UINT16(san.sstat, H3100State),
        VMSTATE_UINT16(san.sprog, H3100State),
        VMSTATE_UINT32(san.scdw10, H3100State),
        VMSTATE_UINT32(san.etbe, H3100State),
        VMSTATE_BOOL(san.active, H3100State),
        VMSTATE_BOOL(san.zeroing, H3100State),
        VMSTATE_BOOL(san.wait_io, H3100State),
        VMSTATE_INT64(san.start_ns, H3100State),
        VMSTATE_INT64(san.end_ns, H3100State),
        VMSTATE_BOOL(streams.enabled, H3100State),
        VMSTATE_UINT16(streams.allocated, H3100State),
        VMSTATE_UINT16(streams.open, H3100State),
        VMSTATE_UINT16_ARRAY(streams.id, H3100State, H3100_STREAMS_MAX),
        VMSTATE_UINT8_ARRAY(streams.hint, H3100State, H3100_STREAMS_MAX),
        VMSTATE_BUFFER_UNSAFE(tlog.reclaim, H3100State, 0,
                              sizeof(H3100TelReclaim) * H3100_TEL_RECLAIMS),
        VMSTATE_BUFFER_UNSAFE(tlog.thermal, H3100State, 0,
                              sizeof(H3100TelThermal) * H3100_TEL_THERMAL),
        VMSTATE_UINT64(tlog.reclaims, H3100State),
        VMSTATE_UINT64(tlog.thermal_changes, H3100State),
        VMSTATE_UINT32(tlog.level, H3100State),
        VMSTATE_BOOL(tlog.read_only, H3100State),
        VMSTATE_UINT8(tlog.host_gen, H3100State),
        VMSTATE_UINT8(tlog.ctrl_gen, H3100State),
        VMSTATE_UINT64(ns_changed, H3100State),
        VMSTATE_UINT32(ns_gen, H3100State),
        VMSTATE_BOOL(dbbuf_enabled, H3100State),
        VMSTATE_UINT64(dbbuf_dbs, H3100State),
        VMSTATE_UINT64(dbbuf_eis, H3100State),
        VMSTATE_BOOL(shutdown.pending, H3100State),
        VMSTATE_BOOL(shutdown.done, H3100State),
        VMSTATE_BOOL(format_busy, H3100State),
        VMSTATE_UINT32(idle_ticks, H3100State),
        VMSTATE_UINT64(vcache_gen, H3100State),
        {
            .name = "runtime",
            .info = &h3100_vmstate_info_runtime,
            .flags = VMS_SINGLE,
            .offset = offsetof(H3100State, mig_runtime),
            .size = sizeof(GBytes *),
        },
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &h3100_vmstate_faults,
        NULL
    },
};
