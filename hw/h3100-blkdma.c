/*
 * DapuStor H3100 NVMe SSD: block I/O straight to and from guest memory
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What dma_blk_io() does, with the device's mapping attributes.  A
 * command's data pointers are checked to be guest RAM when it is parsed
 * (h3100_guest_ram()), but its block request may start much later: once
 * the volatile cache has read what a write overwrites, when the VM runs
 * again, on a retry after werror=stop.  If the memory map changed in
 * between (the guest cleared Bus Master Enable), dma_blk_io()'s mapping,
 * which takes no attributes, bounces the data through MMIO: in an
 * IOThread that takes the BQL, while a controller reset holding the BQL
 * waits for that IOThread, a deadlock (docs/design/robustness.md).  Here every
 * piece is mapped with H3100_DMA_ATTRS and must map straight to RAM;
 * anything else ends the request with -EFAULT, a Data Transfer Error for
 * the caller, before any byte moves and without waiting for a bounce
 * buffer.  The pieces also go through one buffer where the backend could
 * not take them as they are (h3100_blk_linear()).
 */

#include "qemu/osdep.h"
#include "qemu/memalign.h"
#include "h3100.h"
#include "h3100-core.h"
#include "trace.h"

typedef struct H3100BlkDma {
    BlockBackend *blk;
    AddressSpace *as;
    DMADirection dir;
    QEMUIOVector iov;           /* the guest memory, mapped */
    void *linear;               /* the data in one piece: h3100_blk_linear() */
    QEMUIOVector linear_iov;
    BlockCompletionFunc *cb;
    void *opaque;
} H3100BlkDma;

/* @done: bytes may have moved (dirty pages for migration) */
static void h3100_blk_dma_unmap(H3100BlkDma *d, bool done)
{
    for (int i = 0; i < d->iov.niov; i++) {
        struct iovec *v = &d->iov.iov[i];

        dma_memory_unmap(d->as, v->iov_base, v->iov_len, d->dir,
                         done ? v->iov_len : 0);
    }
    qemu_iovec_destroy(&d->iov);
}

static bool h3100_blk_dma_map(H3100BlkDma *d, QEMUSGList *qsg)
{
    for (int i = 0; i < qsg->nsg; i++) {
        dma_addr_t addr = qsg->sg[i].base;
        dma_addr_t left = qsg->sg[i].len;

        while (left) {
            dma_addr_t len = left;
            void *mem = h3100_map_ram(d->as, addr, &len, d->dir);

            if (!mem) {
                trace_h3100_err_dma("data not RAM", addr);
                return false;
            }
            qemu_iovec_add(&d->iov, mem, len);  /* unmapped on failure */
            addr += len;
            left -= len;
        }
    }
    return true;
}

static int h3100_iov_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct iovec *)a)->iov_base;
    uintptr_t y = (uintptr_t)((const struct iovec *)b)->iov_base;

    return x < y ? -1 : x > y;
}

/* Sorted, not compared pairwise: a list has up to H3100_SGL_MAX_DESCS. */
static bool h3100_iov_overlaps(QEMUIOVector *iov)
{
    g_autofree struct iovec *v = g_memdup2(iov->iov,
                                           iov->niov * sizeof(*v));

    qsort(v, iov->niov, sizeof(*v), h3100_iov_cmp);
    for (int i = 1; i < iov->niov; i++) {
        if ((uintptr_t)v[i - 1].iov_base + v[i - 1].iov_len >
            (uintptr_t)v[i].iov_base) {
            return true;
        }
    }
    return false;
}

/*
 * The data goes through one buffer when the backend cannot take the
 * pieces as they are: more than its max_iov (an SGL of many small blocks;
 * preadv refuses more than IOV_MAX, block padding asserts on it), or a
 * read whose pieces overlap, which would get whichever bytes the host
 * wrote last.  The guest must see the same every run (dma_blk_io() split
 * such a list under -icount only), so the buffer is copied out in the
 * list's order: the last piece wins.
 */
static bool h3100_blk_linear(H3100BlkDma *d)
{
    if (d->iov.niov > blk_get_max_iov(d->blk)) {
        return true;
    }
    return d->dir == DMA_DIRECTION_FROM_DEVICE && d->iov.niov > 1 &&
           h3100_iov_overlaps(&d->iov);
}

static void h3100_blk_dma_cb(void *opaque, int ret)
{
    H3100BlkDma *d = opaque;

    if (d->linear) {
        if (!ret && d->dir == DMA_DIRECTION_FROM_DEVICE) {
            qemu_iovec_from_buf(&d->iov, 0, d->linear, d->iov.size);
        }
        qemu_vfree(d->linear);
    }
    h3100_blk_dma_unmap(d, true);
    /* -EFAULT stands for a refused mapping: the backend's is an I/O error */
    d->cb(d->opaque, ret == -EFAULT ? -EIO : ret);
    g_free(d);
}

/*
 * A refused request completes from a bottom half in the calling context,
 * as a block request would, and stays in flight until its callback has
 * returned: a drain (a reset, vm_stop) then waits for the callback, which
 * blk_abort_aio_request() does not (it counts the request out first).
 */
typedef struct H3100RefusedAIOCB {
    BlockAIOCB common;
    BlockBackend *blk;
} H3100RefusedAIOCB;

static const AIOCBInfo h3100_refused_aiocb_info = {
    .aiocb_size = sizeof(H3100RefusedAIOCB),
};

static void h3100_refused_bh(void *opaque)
{
    H3100RefusedAIOCB *acb = opaque;
    BlockBackend *blk = acb->blk;

    acb->common.cb(acb->common.opaque, -EFAULT);
    blk_dec_in_flight(blk);
    qemu_aio_unref(acb);
}

static BlockAIOCB *h3100_blk_refuse(BlockBackend *blk,
                                    BlockCompletionFunc *cb, void *opaque)
{
    H3100RefusedAIOCB *acb = blk_aio_get(&h3100_refused_aiocb_info, blk, cb,
                                         opaque);

    acb->blk = blk;
    blk_inc_in_flight(blk);
    aio_bh_schedule_oneshot(qemu_get_current_aio_context(), h3100_refused_bh,
                            acb);
    return &acb->common;
}

/*
 * Read (@dir DMA_DIRECTION_FROM_DEVICE) or write @qsg's guest memory
 * from or to the backend at @offset; @cb gets the result in the calling
 * context, -EFAULT if a piece was not guest RAM any more.
 */
BlockAIOCB *h3100_blk_dma(H3100State *s, QEMUSGList *qsg, int64_t offset,
                          DMADirection dir, BdrvRequestFlags flags,
                          BlockCompletionFunc *cb, void *opaque)
{
    H3100BlkDma *d = g_new0(H3100BlkDma, 1);
    QEMUIOVector *iov = &d->iov;

    d->blk = s->blk;
    d->as = qsg->as;
    d->dir = dir;
    d->cb = cb;
    d->opaque = opaque;
    qemu_iovec_init(&d->iov, qsg->nsg);
    if (!h3100_blk_dma_map(d, qsg)) {
        h3100_blk_dma_unmap(d, false);
        g_free(d);
        return h3100_blk_refuse(s->blk, cb, opaque);
    }
    if (h3100_blk_linear(d)) {
        d->linear = blk_blockalign(s->blk, d->iov.size);
        qemu_iovec_init_buf(&d->linear_iov, d->linear, d->iov.size);
        if (dir == DMA_DIRECTION_TO_DEVICE) {
            qemu_iovec_to_buf(&d->iov, 0, d->linear, d->iov.size);
        }
        iov = &d->linear_iov;
    }
    if (dir == DMA_DIRECTION_TO_DEVICE) {
        return blk_aio_pwritev(s->blk, offset, iov, flags, h3100_blk_dma_cb,
                               d);
    }
    return blk_aio_preadv(s->blk, offset, iov, flags, h3100_blk_dma_cb, d);
}
