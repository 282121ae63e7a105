/*
 * DapuStor H3100 NVMe SSD: PCIe function and NVMe controller registers
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * PCI identity: vendor 0x1e3b (DapuStor), device 0x1098, class 0x010802
 * (NVMe), subsystem 0x1e3b:0x0014 (H3100 3.2 TB U.2).
 *
 * BAR0 (64-bit memory, 16 KiB):
 *   0x0000 - 0x0fff  controller registers (CAP, VS, CC, CSTS, AQA, ...)
 *   0x1000 - 0x1fff  doorbells (CAP.DSTRD = 0)
 *   0x2000           MSI-X table
 *   0x3000           MSI-X PBA
 *
 * Usage:
 *   -drive file=disk.img,if=none,id=d0,format=raw
 *   -device dapustor-h3100,drive=d0
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "system/block-backend.h"
#include "migration/vmstate.h"
#include "block/nvme.h"
#include "trace.h"

/* QEMU 10.1 changed class_init's data argument to const void *. */
#if QEMU_VERSION_MAJOR > 10 || \
    (QEMU_VERSION_MAJOR == 10 && QEMU_VERSION_MINOR >= 1)
#define H3100_CLASS_DATA const void *
#else
#define H3100_CLASS_DATA void *
#endif

#define TYPE_DAPUSTOR_H3100 "dapustor-h3100"
OBJECT_DECLARE_SIMPLE_TYPE(H3100PciState, DAPUSTOR_H3100)

#define H3100_PCI_VENDOR_ID         0x1e3b
#define H3100_PCI_DEVICE_ID         0x1098
#define H3100_PCI_SUBSYS_VENDOR_ID  0x1e3b
#define H3100_PCI_SUBSYS_ID         0x0014  /* H3100 3.2 TB U.2 */
#define H3100_PCI_REVISION          0x00

#define H3100_NVME_VERSION          0x00010300  /* NVMe 1.3 */
#define H3100_MAX_IOQPAIRS          64
#define H3100_MQES                  1023        /* 0's based: 1024 entries */
#define H3100_CAP_TO                20          /* 500 ms units: 10 s */
#define H3100_MSIX_VECTORS          (H3100_MAX_IOQPAIRS + 1)

#define H3100_REGS_SIZE             0x1000
#define H3100_DB_OFFSET             0x1000
#define H3100_DB_SIZE               0x1000
#define H3100_MSIX_TABLE_OFFSET     0x2000
#define H3100_MSIX_PBA_OFFSET       0x3000
#define H3100_BAR0_SIZE             (16 * KiB)

#define H3100_PCIE_CAP_OFFSET       0x80

QEMU_BUILD_BUG_ON(sizeof(NvmeBar) != H3100_REGS_SIZE);
QEMU_BUILD_BUG_ON((H3100_MAX_IOQPAIRS + 1) * 8 > H3100_DB_SIZE);
QEMU_BUILD_BUG_ON(H3100_MSIX_VECTORS * PCI_MSIX_ENTRY_SIZE >
                  H3100_MSIX_PBA_OFFSET - H3100_MSIX_TABLE_OFFSET);

struct H3100PciState {
    PCIDevice parent_obj;

    MemoryRegion bar0;
    MemoryRegion iomem;
    NvmeBar bar;

    BlockBackend *blk;
    int64_t capacity;

    bool doorbell_unimp_logged;
};

#define H3100_GUEST_ERR(fmt, ...) \
    qemu_log_mask(LOG_GUEST_ERROR, "%s: " fmt "\n", TYPE_DAPUSTOR_H3100, \
                  ## __VA_ARGS__)

static void h3100_pci_init_regs(H3100PciState *s)
{
    uint64_t cap = 0;

    memset(&s->bar, 0, sizeof(s->bar));

    NVME_CAP_SET_MQES(cap, H3100_MQES);
    NVME_CAP_SET_CQR(cap, 1);
    NVME_CAP_SET_TO(cap, H3100_CAP_TO);
    NVME_CAP_SET_DSTRD(cap, 0);
    NVME_CAP_SET_NSSRS(cap, 0);
    NVME_CAP_SET_CSS(cap, NVME_CAP_CSS_NCSS);
    NVME_CAP_SET_MPSMIN(cap, 0);
    NVME_CAP_SET_MPSMAX(cap, 0);

    stq_le_p(&s->bar.cap, cap);
    stl_le_p(&s->bar.vs, H3100_NVME_VERSION);
}

/*
 * Controller reset (CC.EN 1 -> 0): the controller is idle and CSTS.RDY
 * clears.  AQA, ASQ and ACQ keep their values.
 */
static void h3100_pci_ctrl_reset(H3100PciState *s)
{
    trace_h3100_ctrl_reset();
    stl_le_p(&s->bar.csts, 0);
    stl_le_p(&s->bar.intms, 0);
    stl_le_p(&s->bar.intmc, 0);
}

static const char *h3100_pci_check_enable(H3100PciState *s)
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
    if (!(NVME_CAP_CSS(cap) & (1 << NVME_CC_CSS(cc)))) {
        return "CC.CSS selects an unsupported command set";
    }
    if (NVME_CC_AMS(cc) != 0) {
        return "CC.AMS selects an unsupported arbitration mechanism";
    }
    if (asq & (page_size - 1)) {
        return "ASQ not page aligned";
    }
    if (acq & (page_size - 1)) {
        return "ACQ not page aligned";
    }
    if (!NVME_AQA_ASQS(aqa) || NVME_AQA_ASQS(aqa) > H3100_MQES) {
        return "AQA.ASQS out of range";
    }
    if (!NVME_AQA_ACQS(aqa) || NVME_AQA_ACQS(aqa) > H3100_MQES) {
        return "AQA.ACQS out of range";
    }
    return NULL;
}

static void h3100_pci_write_cc(H3100PciState *s, uint32_t data)
{
    uint32_t cc = ldl_le_p(&s->bar.cc);
    uint32_t csts = ldl_le_p(&s->bar.csts);
    const char *err;

    stl_le_p(&s->bar.cc, data);

    if (NVME_CC_SHN(data) && !NVME_CC_SHN(cc)) {
        trace_h3100_ctrl_shutdown(NVME_CC_SHN(data));
        csts &= ~(CSTS_SHST_MASK << CSTS_SHST_SHIFT);
        csts |= NVME_CSTS_SHST_COMPLETE;
    } else if (!NVME_CC_SHN(data) && NVME_CC_SHN(cc)) {
        csts &= ~(CSTS_SHST_MASK << CSTS_SHST_SHIFT);
    }

    if (NVME_CC_EN(data) && !NVME_CC_EN(cc)) {
        err = h3100_pci_check_enable(s);
        if (err) {
            trace_h3100_err_enable(err);
            H3100_GUEST_ERR("controller enable failed: %s", err);
            csts = NVME_CSTS_FAILED;
        } else {
            trace_h3100_ctrl_enable(data, ldl_le_p(&s->bar.aqa),
                                    ldq_le_p(&s->bar.asq),
                                    ldq_le_p(&s->bar.acq));
            csts = NVME_CSTS_READY;
        }
    } else if (!NVME_CC_EN(data) && NVME_CC_EN(cc)) {
        trace_h3100_ctrl_disable(data);
        h3100_pci_ctrl_reset(s);
        return;
    }

    stl_le_p(&s->bar.csts, csts);
}

static void h3100_pci_write_reg(H3100PciState *s, hwaddr offset,
                                uint64_t data, unsigned size)
{
    PCIDevice *pci = PCI_DEVICE(s);
    bool enabled = NVME_CC_EN(ldl_le_p(&s->bar.cc));
    uint32_t intms;

    switch (offset) {
    case NVME_REG_INTMS:
    case NVME_REG_INTMC:
        if (msix_enabled(pci)) {
            H3100_GUEST_ERR("INTMS/INTMC written while MSI-X is enabled");
            return;
        }
        intms = ldl_le_p(&s->bar.intms);
        if (offset == NVME_REG_INTMS) {
            intms |= data;
        } else {
            intms &= ~data;
        }
        stl_le_p(&s->bar.intms, intms);
        stl_le_p(&s->bar.intmc, intms);
        return;
    case NVME_REG_CC:
        h3100_pci_write_cc(s, data);
        return;
    case NVME_REG_CSTS:
        if (data) {
            H3100_GUEST_ERR("write of 0x%" PRIx64 " to read-only CSTS", data);
        }
        return;
    case NVME_REG_NSSR:
        H3100_GUEST_ERR("NVM subsystem reset not supported (CAP.NSSRS=0)");
        return;
    case NVME_REG_AQA:
    case NVME_REG_ASQ:
    case NVME_REG_ASQ + 4:
    case NVME_REG_ACQ:
    case NVME_REG_ACQ + 4:
        if (enabled) {
            H3100_GUEST_ERR("admin queue register 0x%" HWADDR_PRIx
                            " written while CC.EN=1, ignored", offset);
            return;
        }
        if (offset == NVME_REG_AQA) {
            stl_le_p(&s->bar.aqa, data);
        } else {
            stn_le_p((uint8_t *)&s->bar + offset, size, data);
        }
        return;
    default:
        H3100_GUEST_ERR("write to read-only or reserved register 0x%"
                        HWADDR_PRIx " ignored", offset);
        return;
    }
}

static void h3100_pci_write_doorbell(H3100PciState *s, hwaddr offset,
                                     uint64_t data)
{
    unsigned idx = (offset - H3100_DB_OFFSET) / 4;
    unsigned qid = idx / 2;
    bool is_cq = idx & 1;

    if (qid > H3100_MAX_IOQPAIRS) {
        H3100_GUEST_ERR("doorbell write beyond queue %u (offset 0x%"
                        HWADDR_PRIx ")", H3100_MAX_IOQPAIRS, offset);
        return;
    }
    if (!NVME_CSTS_RDY(ldl_le_p(&s->bar.csts))) {
        H3100_GUEST_ERR("doorbell write while CSTS.RDY=0 (offset 0x%"
                        HWADDR_PRIx ")", offset);
        return;
    }
    trace_h3100_doorbell(qid, is_cq, data);
    if (!s->doorbell_unimp_logged) {
        s->doorbell_unimp_logged = true;
        qemu_log_mask(LOG_UNIMP, "%s: command processing not implemented\n",
                      TYPE_DAPUSTOR_H3100);
    }
}

static uint64_t h3100_pci_mmio_read(void *opaque, hwaddr addr,
                                    unsigned size)
{
    H3100PciState *s = opaque;
    uint64_t val = 0;

    if ((addr & (size - 1)) || size < 4) {
        H3100_GUEST_ERR("misaligned or sub-dword read, offset 0x%"
                        HWADDR_PRIx " size %u", addr, size);
    }

    if (addr + size <= H3100_REGS_SIZE) {
        val = ldn_le_p((uint8_t *)&s->bar + addr, size);
    } else if (addr >= H3100_DB_OFFSET) {
        H3100_GUEST_ERR("read of write-only doorbell, offset 0x%" HWADDR_PRIx,
                        addr);
    } else {
        H3100_GUEST_ERR("read crossing the register file end, offset 0x%"
                        HWADDR_PRIx " size %u", addr, size);
    }

    trace_h3100_mmio_read(addr, size, val);
    return val;
}

static void h3100_pci_mmio_write(void *opaque, hwaddr addr, uint64_t data,
                                 unsigned size)
{
    H3100PciState *s = opaque;

    trace_h3100_mmio_write(addr, size, data);

    if ((addr & 3) || size < 4) {
        H3100_GUEST_ERR("misaligned or sub-dword write, offset 0x%"
                        HWADDR_PRIx " size %u, ignored", addr, size);
        return;
    }

    if (addr >= H3100_DB_OFFSET) {
        if (size != 4) {
            H3100_GUEST_ERR("doorbell write of size %u, ignored", size);
            return;
        }
        h3100_pci_write_doorbell(s, addr, data);
        return;
    }

    if (size == 8 && addr != NVME_REG_ASQ && addr != NVME_REG_ACQ) {
        /* split like a pair of 32-bit writes (CAP and reserved are RO) */
        h3100_pci_write_reg(s, addr, (uint32_t)data, 4);
        h3100_pci_write_reg(s, addr + 4, data >> 32, 4);
        return;
    }
    h3100_pci_write_reg(s, addr, data, size);
}

static const MemoryRegionOps h3100_pci_mmio_ops = {
    .read = h3100_pci_mmio_read,
    .write = h3100_pci_mmio_write,
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

static void h3100_pci_realize(PCIDevice *pci_dev, Error **errp)
{
    H3100PciState *s = DAPUSTOR_H3100(pci_dev);
    uint8_t *conf = pci_dev->config;
    uint64_t perm;
    int ret;

    if (!s->blk) {
        error_setg(errp, "drive property not set "
                   "(use -drive if=none,id=ID,... and drive=ID)");
        return;
    }
    if (!blk_is_inserted(s->blk)) {
        error_setg(errp, "drive has no medium");
        return;
    }

    perm = BLK_PERM_CONSISTENT_READ;
    if (blk_supports_write_perm(s->blk)) {
        perm |= BLK_PERM_WRITE;
    }
    if (blk_set_perm(s->blk, perm, BLK_PERM_ALL, errp) < 0) {
        return;
    }

    s->capacity = blk_getlength(s->blk);
    if (s->capacity < 0) {
        error_setg_errno(errp, -s->capacity, "could not get drive size");
        return;
    }

    conf[PCI_INTERRUPT_PIN] = 1;
    pci_config_set_prog_interface(conf, 0x2);

    ret = pcie_endpoint_cap_init(pci_dev, H3100_PCIE_CAP_OFFSET);
    if (ret < 0) {
        error_setg(errp, "could not add the PCIe capability");
        return;
    }

    memory_region_init(&s->bar0, OBJECT(s), "dapustor-h3100-bar0",
                       H3100_BAR0_SIZE);
    memory_region_init_io(&s->iomem, OBJECT(s), &h3100_pci_mmio_ops, s,
                          "dapustor-h3100-regs", H3100_MSIX_TABLE_OFFSET);
    memory_region_add_subregion(&s->bar0, 0, &s->iomem);
    pci_register_bar(pci_dev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);

    ret = msix_init(pci_dev, H3100_MSIX_VECTORS,
                    &s->bar0, 0, H3100_MSIX_TABLE_OFFSET,
                    &s->bar0, 0, H3100_MSIX_PBA_OFFSET, 0, errp);
    if (ret < 0) {
        return;
    }
    for (unsigned i = 0; i < H3100_MSIX_VECTORS; i++) {
        msix_vector_use(pci_dev, i);
    }

    h3100_pci_init_regs(s);
}

static void h3100_pci_exit(PCIDevice *pci_dev)
{
    H3100PciState *s = DAPUSTOR_H3100(pci_dev);

    msix_uninit(pci_dev, &s->bar0, &s->bar0);
}

static void h3100_pci_reset(DeviceState *dev)
{
    H3100PciState *s = DAPUSTOR_H3100(dev);

    h3100_pci_init_regs(s);
    s->doorbell_unimp_logged = false;
}

static const Property h3100_pci_props[] = {
    DEFINE_PROP_DRIVE("drive", H3100PciState, blk),
};

static const VMStateDescription h3100_pci_vmstate = {
    .name = TYPE_DAPUSTOR_H3100,
    .unmigratable = 1,
};

static void h3100_pci_class_init(ObjectClass *oc, H3100_CLASS_DATA data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);

    pc->realize = h3100_pci_realize;
    pc->exit = h3100_pci_exit;
    pc->vendor_id = H3100_PCI_VENDOR_ID;
    pc->device_id = H3100_PCI_DEVICE_ID;
    pc->subsystem_vendor_id = H3100_PCI_SUBSYS_VENDOR_ID;
    pc->subsystem_id = H3100_PCI_SUBSYS_ID;
    pc->class_id = PCI_CLASS_STORAGE_EXPRESS;
    pc->revision = H3100_PCI_REVISION;

    set_bit(DEVICE_CATEGORY_STORAGE, dc->categories);
    dc->desc = "DapuStor H3100 NVMe SSD";
    device_class_set_props(dc, h3100_pci_props);
    dc->vmsd = &h3100_pci_vmstate;
    device_class_set_legacy_reset(dc, h3100_pci_reset);
}

static const TypeInfo h3100_pci_info = {
    .name          = TYPE_DAPUSTOR_H3100,
    .parent        = TYPE_PCI_DEVICE,
    .instance_size = sizeof(H3100PciState),
    .class_init    = h3100_pci_class_init,
    .interfaces    = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void h3100_pci_register_types(void)
{
    type_register_static(&h3100_pci_info);
}

type_init(h3100_pci_register_types)
