/*
 * DapuStor H3100 NVMe SSD: data pointers (PRP lists and SGLs)
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A command's data pointer becomes a QEMUSGList of guest addresses, used
 * by the block requests of h3100_blk_dma() or copied with dma_buf_read and
 * dma_buf_write.
 * Admin commands take PRPs only; I/O commands PRPs or SGLs (Data Block,
 * Segment and Last Segment descriptors).
 *
 * Every guest address the device touches (queues, PRP lists, SGL
 * segments, data, shadow doorbells) must be guest RAM, and for the
 * device's writes not ROM: h3100_guest_ram().  MMIO is refused whoever
 * owns it, so DMA can never reach the device's own BAR0 (a controller
 * reset from inside queue processing) nor another device, and a Read
 * into ROM fails instead of being dropped by a bounce buffer.
 *
 * The check and the access are two lookups, and the main loop may change
 * the memory map between them (the guest clears Bus Master Enable, a
 * reset): the device's own accesses also carry H3100_DMA_ATTRS, so the
 * memory core refuses anything but RAM in the lookup that does the
 * access.  Without it an IOThread would dispatch to MMIO, which takes the
 * BQL, while the vCPU or main loop holding the BQL waits for that IOThread
 * (a controller reset): a deadlock the fuzzer found
 * (docs/design/robustness.md).
 * The attributes do not keep a write off ROM, so the device writes
 * through a mapping that must be RAM (h3100_ram_write()), and its block
 * requests, which may start long after the check, map the data the same
 * way (h3100-blkdma.c).
 */

#include "qemu/osdep.h"
#include "qemu/rcu.h"
#include "h3100.h"
#include "h3100-core.h"
#include "trace.h"

#define H3100_SGL_CHUNK 256            /* descriptors read at a time */
/*
 * Descriptors one command may read in all, segments included: 8192 data
 * blocks of 512 bytes cover the largest transfer (mdts=10, 4 MiB).  The
 * cap bounds the work of a chain that loops back on itself.
 */
#define H3100_SGL_MAX_DESCS 16384

bool h3100_guest_ram(H3100State *s, uint64_t addr, uint64_t len, bool write)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));

    if (UINT64_MAX - addr < len) {
        return false;
    }
    RCU_READ_LOCK_GUARD();
    while (len) {
        hwaddr xlat, l = len;
        MemoryRegion *mr = address_space_translate(as, addr, &xlat, &l, write,
                                                   MEMTXATTRS_UNSPECIFIED);

        if (!l || !memory_access_is_direct(mr, write,
                                           MEMTXATTRS_UNSPECIFIED)) {
            return false;
        }
        addr += l;
        len -= l;
    }
    return true;
}

/*
 * Map up to *@len bytes at @addr for @dir, RAM only: H3100_DMA_ATTRS,
 * and no bounce buffer standing in for ROM or MMIO (that one is released
 * unwritten).  NULL, nothing mapped, otherwise; *@len may come back
 * shorter, at a region's end.
 */
void *h3100_map_ram(AddressSpace *as, dma_addr_t addr, dma_addr_t *len,
                    DMADirection dir)
{
    void *mem = dma_memory_map(as, addr, len, dir, H3100_DMA_ATTRS);
    ram_addr_t offset;

    if (mem && !memory_region_from_host(mem, &offset)) {
        dma_memory_unmap(as, mem, *len, dir, 0);
        return NULL;
    }
    return mem;
}

/*
 * Write guest RAM through a mapping.  H3100_DMA_ATTRS keeps reads off
 * MMIO, but the memory core lets a write to ROM (RAM, read-only: the
 * chipset's PAM can put pc.rom where RAM was, under a command) through as
 * MMIO, which takes the BQL: a mapping that is not RAM is dropped
 * unwritten instead.
 */
static MemTxResult h3100_ram_write(AddressSpace *as, uint64_t addr,
                                   const void *buf, uint64_t len)
{
    const uint8_t *p = buf;

    dma_barrier(as, DMA_DIRECTION_FROM_DEVICE);
    while (len) {
        dma_addr_t l = len;
        void *mem = h3100_map_ram(as, addr, &l, DMA_DIRECTION_FROM_DEVICE);

        if (!mem) {
            return MEMTX_ACCESS_ERROR;
        }
        memcpy(mem, p, l);
        dma_memory_unmap(as, mem, l, DMA_DIRECTION_FROM_DEVICE, l);
        addr += l;
        p += l;
        len -= l;
    }
    return MEMTX_OK;
}

MemTxResult h3100_dma_read(H3100State *s, uint64_t addr, void *buf,
                           uint64_t len)
{
    if (h3100_off_bus(s)) {
        return MEMTX_ACCESS_ERROR;    /* a link-down fault: no DMA */
    }
    if (!h3100_guest_ram(s, addr, len, false)) {
        H3100_GUEST_ERR(h3100_err_dma_read, "read of 0x%" PRIx64 "+0x%" PRIx64
                        ": not guest RAM", addr, len);
        return MEMTX_ACCESS_ERROR;
    }
    return pci_dma_rw(PCI_DEVICE(s), addr, buf, len, DMA_DIRECTION_TO_DEVICE,
                      H3100_DMA_ATTRS);
}

MemTxResult h3100_dma_write(H3100State *s, uint64_t addr, const void *buf,
                            uint64_t len)
{
    if (h3100_off_bus(s)) {
        return MEMTX_ACCESS_ERROR;
    }
    if (!h3100_guest_ram(s, addr, len, true)) {
        H3100_GUEST_ERR(h3100_err_dma_write, "write of 0x%" PRIx64 "+0x%"
                        PRIx64 ": not writable guest RAM", addr, len);
        return MEMTX_ACCESS_ERROR;
    }
    return h3100_ram_write(pci_get_address_space(PCI_DEVICE(s)), addr, buf,
                           len);
}

MemTxResult h3100_dma_ld32(H3100State *s, uint64_t addr, uint32_t *val)
{
    uint32_t le;
    MemTxResult r = h3100_dma_read(s, addr, &le, sizeof(le));

    *val = r == MEMTX_OK ? le32_to_cpu(le) : 0;
    return r;
}

MemTxResult h3100_dma_st32(H3100State *s, uint64_t addr, uint32_t val)
{
    uint32_t le = cpu_to_le32(val);

    return h3100_dma_write(s, addr, &le, sizeof(le));
}

static void h3100_sg_add(H3100Req *req, uint64_t addr, uint64_t len)
{
    QEMUSGList *qsg = &req->qsg;

    /* merge with the previous element when contiguous */
    if (qsg->nsg && qsg->sg[qsg->nsg - 1].base +
        qsg->sg[qsg->nsg - 1].len == addr) {
        qsg->sg[qsg->nsg - 1].len += len;
        qsg->size += len;
        return;
    }
    qemu_sglist_add(qsg, addr, len);
}

void h3100_req_unmap(H3100Req *req)
{
    if (req->has_qsg) {
        qemu_sglist_destroy(&req->qsg);
        req->has_qsg = false;
    }
}

static void h3100_sg_init(H3100State *s, H3100Req *req)
{
    PCIDevice *pci = PCI_DEVICE(s);

    h3100_req_unmap(req);
    qemu_sglist_init(&req->qsg, DEVICE(s), 4, pci_get_address_space(pci));
    req->has_qsg = true;
}

static uint16_t h3100_prp_list(H3100State *s, H3100Req *req, uint64_t prp2,
                               uint64_t len)
{
    g_autofree uint64_t *list = NULL;
    uint32_t nents, i = 0;
    uint64_t ent, trans;

    /* list entries are qwords: this also keeps nents >= 1 */
    if (prp2 & 7) {
        return NVME_INVALID_PRP_OFFSET | NVME_DNR;
    }
    list = g_new(uint64_t, s->max_prp_ents);
    nents = (s->page_size - (prp2 & (s->page_size - 1))) >> 3;
    if (h3100_dma_read(s, prp2, list, nents * 8)) {
        trace_h3100_err_dma("PRP list", prp2);
        return NVME_DATA_TRAS_ERROR;
    }
    while (len) {
        ent = le64_to_cpu(list[i]);
        if (i == nents - 1 && len > s->page_size) {
            /* last entry of a list page points at the next list page */
            if (ent & (s->page_size - 1)) {
                return NVME_INVALID_PRP_OFFSET | NVME_DNR;
            }
            nents = MIN((len + s->page_size - 1) >> s->page_bits,
                        s->max_prp_ents);
            if (h3100_dma_read(s, ent, list, nents * 8)) {
                trace_h3100_err_dma("PRP list", ent);
                return NVME_DATA_TRAS_ERROR;
            }
            i = 0;
            ent = le64_to_cpu(list[0]);
        }
        if (ent & (s->page_size - 1)) {
            return NVME_INVALID_PRP_OFFSET | NVME_DNR;
        }
        trans = MIN(len, s->page_size);
        h3100_sg_add(req, ent, trans);
        len -= trans;
        i++;
    }
    return NVME_SUCCESS;
}

static uint16_t h3100_map_prp(H3100State *s, H3100Req *req, uint64_t len)
{
    uint64_t prp1 = le64_to_cpu(req->cmd.dptr.prp1);
    uint64_t prp2 = le64_to_cpu(req->cmd.dptr.prp2);
    uint64_t trans = MIN(len, s->page_size - (prp1 & (s->page_size - 1)));

    trace_h3100_map_prp(len, prp1, prp2);
    if (prp1 & 3) {
        return NVME_INVALID_PRP_OFFSET | NVME_DNR;
    }
    h3100_sg_add(req, prp1, trans);
    len -= trans;
    if (!len) {
        return NVME_SUCCESS;
    }
    if (len > s->page_size) {
        return h3100_prp_list(s, req, prp2, len);
    }
    if (prp2 & (s->page_size - 1)) {
        return NVME_INVALID_PRP_OFFSET | NVME_DNR;
    }
    h3100_sg_add(req, prp2, len);
    return NVME_SUCCESS;
}

/* Map @n Data Block descriptors; subtracts what they cover from *len. */
static uint16_t h3100_sgl_data(H3100Req *req, NvmeSglDescriptor *d,
                               unsigned n, uint64_t *len)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t addr = le64_to_cpu(d[i].addr);
        uint32_t dlen = le32_to_cpu(d[i].len);
        uint64_t trans;

        switch (NVME_SGL_TYPE(d[i].type)) {
        case NVME_SGL_DESCR_TYPE_DATA_BLOCK:
            break;
        case NVME_SGL_DESCR_TYPE_SEGMENT:
        case NVME_SGL_DESCR_TYPE_LAST_SEGMENT:
            return NVME_INVALID_NUM_SGL_DESCRS | NVME_DNR;
        default:
            return NVME_SGL_DESCR_TYPE_INVALID | NVME_DNR;
        }
        if (NVME_SGL_SUBTYPE(d[i].type) != NVME_SGL_DESCR_SUBTYPE_ADDRESS) {
            return NVME_SGL_DESCR_TYPE_INVALID | NVME_DNR;
        }
        if (!dlen) {
            continue;
        }
        if (!*len || UINT64_MAX - addr < dlen) {
            return NVME_DATA_SGL_LEN_INVALID | NVME_DNR;
        }
        trans = MIN(*len, dlen);
        h3100_sg_add(req, addr, trans);
        *len -= trans;
    }
    return NVME_SUCCESS;
}

static bool h3100_sgl_is_segment(const NvmeSglDescriptor *d)
{
    uint8_t type = NVME_SGL_TYPE(d->type);

    return type == NVME_SGL_DESCR_TYPE_SEGMENT ||
           type == NVME_SGL_DESCR_TYPE_LAST_SEGMENT;
}

/* Read one segment; maps it and returns its trailing segment descriptor. */
static uint16_t h3100_sgl_segment(H3100State *s, H3100Req *req,
                                  NvmeSglDescriptor *seg, uint64_t *len,
                                  uint32_t *budget, NvmeSglDescriptor *next,
                                  bool *more)
{
    NvmeSglDescriptor d[H3100_SGL_CHUNK];
    uint64_t addr = le64_to_cpu(seg->addr);
    uint32_t seg_len = le32_to_cpu(seg->len);
    uint64_t nd, chunk;
    uint16_t status;

    if (!seg_len || (seg_len & 0xf) || UINT64_MAX - addr < seg_len) {
        return NVME_INVALID_SGL_SEG_DESCR | NVME_DNR;
    }
    nd = seg_len / sizeof(NvmeSglDescriptor);
    if (nd > *budget) {
        H3100_GUEST_ERR(h3100_err_sgl_descs, "SGL of more than %u descriptors "
                        "refused", H3100_SGL_MAX_DESCS);
        return NVME_INVALID_NUM_SGL_DESCRS | NVME_DNR;
    }
    *budget -= nd;
    *more = false;
    while (nd) {
        chunk = MIN(nd, H3100_SGL_CHUNK);
        if (h3100_dma_read(s, addr, d, chunk * sizeof(d[0]))) {
            trace_h3100_err_dma("SGL segment", addr);
            return NVME_DATA_TRAS_ERROR;
        }
        nd -= chunk;
        addr += chunk * sizeof(d[0]);
        if (!nd && h3100_sgl_is_segment(&d[chunk - 1])) {
            /* the last descriptor links the next segment */
            if (NVME_SGL_TYPE(seg->type) ==
                NVME_SGL_DESCR_TYPE_LAST_SEGMENT) {
                return NVME_INVALID_SGL_SEG_DESCR | NVME_DNR;
            }
            *next = d[chunk - 1];
            *more = true;
            chunk--;
        }
        status = h3100_sgl_data(req, d, chunk, len);
        if (status) {
            return status;
        }
    }
    return NVME_SUCCESS;
}

static uint16_t h3100_map_sgl(H3100State *s, H3100Req *req, uint64_t len)
{
    NvmeSglDescriptor sgl = req->cmd.dptr.sgl;
    NvmeSglDescriptor next;
    uint32_t budget = H3100_SGL_MAX_DESCS;
    uint64_t before;
    uint16_t status;
    bool more = true;

    trace_h3100_map_sgl(NVME_SGL_TYPE(sgl.type), len);
    if (NVME_SGL_TYPE(sgl.type) == NVME_SGL_DESCR_TYPE_DATA_BLOCK) {
        status = h3100_sgl_data(req, &sgl, 1, &len);
        if (status) {
            return status;
        }
        more = false;
    } else if (!h3100_sgl_is_segment(&sgl)) {
        return NVME_SGL_DESCR_TYPE_INVALID | NVME_DNR;
    }
    while (more) {
        before = len;
        status = h3100_sgl_segment(s, req, &sgl, &len, &budget, &next,
                                   &more);
        if (status) {
            return status;
        }
        if (more && len == before) {
            /* no progress: refuse a host-built endless chain */
            return NVME_INVALID_SGL_SEG_DESCR | NVME_DNR;
        }
        sgl = next;
    }
    if (len) {
        return NVME_DATA_SGL_LEN_INVALID | NVME_DNR;
    }
    return NVME_SUCCESS;
}

/*
 * The block layer's DMA helpers bounce data through buffers and drop
 * errors on memory that does not exist or is read-only; check the whole
 * list up front, in the direction the data goes, so the guest gets Data
 * Transfer Error instead of silently lost data.
 */
static uint16_t h3100_check_sg(H3100State *s, H3100Req *req,
                               DMADirection dir)
{
    QEMUSGList *qsg = &req->qsg;

    for (int i = 0; i < qsg->nsg; i++) {
        if (!h3100_guest_ram(s, qsg->sg[i].base, qsg->sg[i].len,
                             dir == DMA_DIRECTION_FROM_DEVICE)) {
            H3100_GUEST_ERR(h3100_err_dptr_ram, "data pointer 0x%" PRIx64
                            "+0x%" PRIx64 " is not %sguest RAM",
                            (uint64_t)qsg->sg[i].base,
                            (uint64_t)qsg->sg[i].len,
                            dir == DMA_DIRECTION_FROM_DEVICE ?
                            "writable " : "");
            return NVME_DATA_TRAS_ERROR;
        }
    }
    return NVME_SUCCESS;
}

uint16_t h3100_map_dptr(H3100State *s, H3100Req *req, uint64_t len,
                        DMADirection dir)
{
    uint8_t psdt = NVME_CMD_FLAGS_PSDT(req->cmd.flags);
    uint16_t status;

    h3100_sg_init(s, req);
    if (!len) {
        return NVME_SUCCESS;
    }
    switch (psdt) {
    case NVME_PSDT_PRP:
        status = h3100_map_prp(s, req, len);
        break;
    case NVME_PSDT_SGL_MPTR_CONTIGUOUS:
    case NVME_PSDT_SGL_MPTR_SGL:
        if (!req->sq->sqid) {
            return NVME_INVALID_FIELD | NVME_DNR;   /* admin: PRP only */
        }
        status = h3100_map_sgl(s, req, len);
        break;
    default:
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (!status) {
        status = h3100_check_sg(s, req, dir);
    }
    if (status) {
        h3100_req_unmap(req);
    }
    return status;
}

uint16_t h3100_dma_to_host(H3100State *s, H3100Req *req, const void *buf,
                           uint64_t len)
{
    uint16_t status = h3100_map_dptr(s, req, len, DMA_DIRECTION_FROM_DEVICE);
    QEMUSGList *qsg = &req->qsg;
    const uint8_t *p = buf;

    if (status) {
        return status;
    }
    if (h3100_off_bus(s)) {
        return NVME_DATA_TRAS_ERROR;
    }
    len = MIN(len, qsg->size);
    for (int i = 0; i < qsg->nsg && len; i++) {
        uint64_t l = MIN(len, qsg->sg[i].len);

        if (h3100_ram_write(qsg->as, qsg->sg[i].base, p, l)) {
            trace_h3100_err_dma("data to host", qsg->sg[i].base);
            return NVME_DATA_TRAS_ERROR;
        }
        p += l;
        len -= l;
    }
    return NVME_SUCCESS;
}

uint16_t h3100_dma_from_host(H3100State *s, H3100Req *req, void *buf,
                             uint64_t len)
{
    uint16_t status = h3100_map_dptr(s, req, len, DMA_DIRECTION_TO_DEVICE);

    if (status) {
        return status;
    }
    if (h3100_off_bus(s)) {
        return NVME_DATA_TRAS_ERROR;
    }
    if (dma_buf_write(buf, len, NULL, &req->qsg, H3100_DMA_ATTRS)) {
        trace_h3100_err_dma("data from host", 0);
        return NVME_DATA_TRAS_ERROR;
    }
    return NVME_SUCCESS;
}
