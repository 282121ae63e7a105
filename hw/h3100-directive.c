/*
 * DapuStor H3100 NVMe SSD: Directives (NVMe 1.3): Identify and Streams
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A write with DTYPE Streams names a stream identifier (DSPEC, any
 * 16-bit value; 0 is no stream).  Each open stream holds one of the
 * model's host placement hints (1 .. H3100_MAX_STREAMS - 1): the FTL
 * writes each into its own open superblock, and reclaims each into its
 * own, so data of one lifetime stays together and reclaim moves less.
 * A write to a stream that is not open opens it; when every hint is
 * held, the least recently written stream is released implicitly for
 * it.  Streams are off until the host enables them (Directive Send,
 * Identify, Enable Directive) and, as NVMe 1.4's DPCLR = 0 says, a
 * controller reset disables them and releases every stream.
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
#include "trace.h"

#define H3100_DIR_IDENTIFY          0x00
#define H3100_DIR_STREAMS           0x01
#define H3100_DIR_SUPPORTED         ((1u << H3100_DIR_IDENTIFY) | \
                                     (1u << H3100_DIR_STREAMS))

/* DOPER values, NVMe 1.3 figures 281-286 */
#define H3100_DIR_ID_ENABLE         0x01   /* send */
#define H3100_DIR_ID_PARAMS         0x01   /* receive */
#define H3100_DIR_ST_RELEASE_ID     0x01   /* send */
#define H3100_DIR_ST_RELEASE_RES    0x02   /* send */
#define H3100_DIR_ST_PARAMS         0x01   /* receive */
#define H3100_DIR_ST_STATUS         0x02   /* receive */
#define H3100_DIR_ST_ALLOCATE       0x03   /* receive */

/* Streams Directive, Return Parameters (NVMe 1.3 figure 290) */
typedef struct QEMU_PACKED H3100StreamParams {
    uint16_t msl;                     /* maximum streams limit */
    uint16_t nssa;                    /* subsystem streams available */
    uint16_t nsso;                    /* subsystem streams open */
    uint8_t rsvd6[10];
    uint32_t sws;                     /* stream write size, LBAs */
    uint16_t sgs;                     /* stream granularity, SWS units */
    uint16_t nsa;                     /* namespace streams allocated */
    uint16_t nso;                     /* namespace streams open */
    uint8_t rsvd26[6];
} H3100StreamParams;

QEMU_BUILD_BUG_ON(sizeof(H3100StreamParams) != 32);

/* Get Status: the open count and then every open stream's identifier */
#define H3100_STREAM_STATUS_BYTES   (2 + 2 * H3100_STREAMS_MAX)

/* ---- the open streams --------------------------------------------------- */

void h3100_streams_reset(H3100State *s)
{
    memset(&s->streams, 0, sizeof(s->streams));
}

static void h3100_streams_release_all(H3100State *s)
{
    s->streams.open = 0;
    s->streams.allocated = 0;
}

static int h3100_stream_find(H3100Streams *st, uint16_t id)
{
    for (unsigned i = 0; i < st->open; i++) {
        if (st->id[i] == id) {
            return i;
        }
    }
    return -1;
}

/* Take open stream @i out; the rest keep their order of last use. */
static void h3100_stream_remove(H3100Streams *st, unsigned i)
{
    memmove(&st->id[i], &st->id[i + 1],
            (st->open - i - 1) * sizeof(st->id[0]));
    memmove(&st->hint[i], &st->hint[i + 1],
            (st->open - i - 1) * sizeof(st->hint[0]));
    st->open--;
}

static void h3100_stream_release(H3100Streams *st, unsigned i)
{
    trace_h3100_stream_release(st->id[i], st->hint[i]);
    h3100_stream_remove(st, i);
}

/* A placement hint no open stream holds: there is one while open < max. */
static uint8_t h3100_stream_free_hint(H3100Streams *st)
{
    uint32_t held = 0;

    for (unsigned i = 0; i < st->open; i++) {
        held |= 1u << st->hint[i];
    }
    for (uint8_t h = 1; h <= H3100_STREAMS_MAX; h++) {
        if (!(held & (1u << h))) {
            return h;
        }
    }
    return 0;
}

/*
 * The placement hint for a write to stream @id, opening it when it is
 * not open (releasing the least recently written stream when all are),
 * and marking it the most recently written.
 */
static uint8_t h3100_stream_use(H3100Streams *st, uint16_t id)
{
    int i = h3100_stream_find(st, id);
    uint8_t hint;

    if (i < 0) {
        if (st->open == H3100_STREAMS_MAX) {
            h3100_stream_release(st, 0);
        }
        hint = h3100_stream_free_hint(st);
        trace_h3100_stream_open(id, hint);
    } else {
        hint = st->hint[i];
        h3100_stream_remove(st, i);   /* back in as the most recent */
    }
    st->id[st->open] = id;
    st->hint[st->open] = hint;
    st->open++;
    return hint;
}

/*
 * The model's placement hint for a Write (0: none), or an error status:
 * a directive type other than Streams, or Streams while not enabled.
 */
uint16_t h3100_write_stream(H3100State *s, H3100Req *req, uint32_t *hint)
{
    NvmeRwCmd *rw = (NvmeRwCmd *)&req->cmd;
    uint8_t dtype = (le16_to_cpu(rw->control) >> 4) & 0xf;
    uint16_t dspec = le16_to_cpu(rw->dspec);

    *hint = 0;
    if (dtype == H3100_DIR_IDENTIFY) {
        return NVME_SUCCESS;
    }
    if (dtype != H3100_DIR_STREAMS || !s->streams.enabled) {
        trace_h3100_err_dtype(dtype, s->streams.enabled);
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (dspec) {
        *hint = h3100_stream_use(&s->streams, dspec);
    }
    return NVME_SUCCESS;
}

/* ---- Directive Receive -------------------------------------------------- */

/* The data a Receive returns: NUMD dwords, at most what there is. */
static uint16_t h3100_dir_data(H3100State *s, H3100Req *req, const void *buf,
                               size_t size)
{
    uint64_t want = ((uint64_t)le32_to_cpu(req->cmd.cdw10) + 1) * 4;

    return h3100_dma_to_host(s, req, buf, MIN(want, size));
}

static uint16_t h3100_dir_identify_params(H3100State *s, H3100Req *req)
{
    g_autofree NvmeDirectiveIdentify *id = g_new0(NvmeDirectiveIdentify, 1);

    id->supported = H3100_DIR_SUPPORTED;
    id->enabled = 1u << H3100_DIR_IDENTIFY;
    if (s->streams.enabled) {
        id->enabled |= 1u << H3100_DIR_STREAMS;
    }
    return h3100_dir_data(s, req, id, sizeof(*id));
}

/* SWS is in LBAs: of the namespace asked about (FFFFFFFFh: of NSID 1) */
static uint32_t h3100_dir_lbads(H3100State *s, H3100Req *req)
{
    H3100Namespace *ns = h3100_ns_active(s, le32_to_cpu(req->cmd.nsid));

    return ns ? ns->lbads : h3100_ns1_lbads(s);
}

static uint16_t h3100_stream_params(H3100State *s, H3100Req *req)
{
    H3100Streams *st = &s->streams;
    uint32_t unit = h3100_slots_per_unit(&s->cfg) * H3100_SLOT_BYTES;
    uint64_t sb = h3100_slots_per_superblock(&s->cfg) * H3100_SLOT_BYTES;
    H3100StreamParams p = {
        .msl = cpu_to_le16(H3100_STREAMS_MAX),
        .nssa = cpu_to_le16(H3100_STREAMS_MAX - st->allocated),
        .nsso = cpu_to_le16(st->open > st->allocated ?
                            st->open - st->allocated : 0),
        .sws = cpu_to_le32(unit >> h3100_dir_lbads(s, req)),
        .sgs = cpu_to_le16(MIN(sb / unit, UINT16_MAX)),
        .nsa = cpu_to_le16(st->allocated),
        .nso = cpu_to_le16(st->open),
    };

    return h3100_dir_data(s, req, &p, sizeof(p));
}

static uint16_t h3100_stream_status(H3100State *s, H3100Req *req)
{
    uint8_t buf[H3100_STREAM_STATUS_BYTES] = { 0 };
    H3100Streams *st = &s->streams;

    stw_le_p(buf, st->open);
    for (unsigned i = 0; i < st->open; i++) {
        stw_le_p(buf + 2 + 2 * i, st->id[i]);
    }
    return h3100_dir_data(s, req, buf, 2 + 2 * st->open);
}

/*
 * Namespace streams for this namespace alone: one namespace can take
 * every stream; asking again before Release Resources is an error.
 */
static uint16_t h3100_stream_allocate(H3100State *s, H3100Req *req)
{
    uint16_t nsr = le32_to_cpu(req->cmd.cdw12) & 0xffff;
    H3100Streams *st = &s->streams;

    if (st->allocated) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    st->allocated = MIN(nsr, H3100_STREAMS_MAX);
    req->cqe.result = cpu_to_le32(st->allocated);
    return NVME_SUCCESS;
}

/* ---- Directive Send ----------------------------------------------------- */

static uint16_t h3100_dir_enable(H3100State *s, H3100Req *req)
{
    uint32_t dw12 = le32_to_cpu(req->cmd.cdw12);
    uint8_t tdtype = (dw12 >> 8) & 0xff;
    bool endir = dw12 & 1;

    /* the Identify directive is always on */
    if (tdtype != H3100_DIR_STREAMS) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (!endir) {
        h3100_streams_release_all(s);
    }
    s->streams.enabled = endir;
    return NVME_SUCCESS;
}

static uint16_t h3100_stream_release_id(H3100State *s, uint16_t dspec)
{
    int i = h3100_stream_find(&s->streams, dspec);

    if (i >= 0) {
        h3100_stream_release(&s->streams, i);
    }
    return NVME_SUCCESS;
}

/* ---- dispatch ------------------------------------------------------------ */

/*
 * DTYPE and DOPER of a Directive Send or Receive, or the status when its
 * namespace is not ours or Streams, being off, cannot take it (only
 * their Return Parameters can be read before they are enabled).
 */
static uint16_t h3100_dir_decode(H3100State *s, H3100Req *req, bool send,
                                 uint8_t *dtype, uint8_t *doper)
{
    uint32_t dw11 = le32_to_cpu(req->cmd.cdw11);
    uint32_t nsid = le32_to_cpu(req->cmd.nsid);

    *doper = dw11 & 0xff;
    *dtype = (dw11 >> 8) & 0xff;
    trace_h3100_admin_directive(send, *dtype, *doper, dw11 >> 16, nsid);
    if (nsid != NVME_NSID_BROADCAST && !h3100_ns_active(s, nsid)) {
        return NVME_INVALID_NSID | NVME_DNR;
    }
    if (*dtype == H3100_DIR_STREAMS && !s->streams.enabled &&
        (send || *doper != H3100_DIR_ST_PARAMS)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    return NVME_SUCCESS;
}

uint16_t h3100_dir_send(H3100State *s, H3100Req *req)
{
    uint8_t dtype, doper;
    uint16_t status = h3100_dir_decode(s, req, true, &dtype, &doper);

    if (status) {
        return status;
    }
    if (dtype == H3100_DIR_IDENTIFY && doper == H3100_DIR_ID_ENABLE) {
        return h3100_dir_enable(s, req);
    }
    if (dtype == H3100_DIR_STREAMS && doper == H3100_DIR_ST_RELEASE_ID) {
        return h3100_stream_release_id(s,
                                       le32_to_cpu(req->cmd.cdw11) >> 16);
    }
    if (dtype == H3100_DIR_STREAMS && doper == H3100_DIR_ST_RELEASE_RES) {
        h3100_streams_release_all(s);
        return NVME_SUCCESS;
    }
    return NVME_INVALID_FIELD | NVME_DNR;
}

uint16_t h3100_dir_recv(H3100State *s, H3100Req *req)
{
    uint8_t dtype, doper;
    uint16_t status = h3100_dir_decode(s, req, false, &dtype, &doper);

    if (status) {
        return status;
    }
    if (dtype == H3100_DIR_IDENTIFY && doper == H3100_DIR_ID_PARAMS) {
        return h3100_dir_identify_params(s, req);
    }
    if (dtype != H3100_DIR_STREAMS) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    switch (doper) {
    case H3100_DIR_ST_PARAMS:
        return h3100_stream_params(s, req);
    case H3100_DIR_ST_STATUS:
        return h3100_stream_status(s, req);
    case H3100_DIR_ST_ALLOCATE:
        return h3100_stream_allocate(s, req);
    default:
        return NVME_INVALID_FIELD | NVME_DNR;
    }
}
