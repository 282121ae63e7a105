/*
 * What guest drivers other than Linux's depend on (docs/guide/guests.md, the
 * driver-expectation table): one test per behaviour, named after the
 * driver that needs it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "dev.h"

#define DRV_MSI_DATA 0xfee1

/* Step virtual time until @n CQEs from the head are posted. */
static void wait_posted(QTest *qt, NvmeQueue *q, unsigned n)
{
    NvmeCq *cq = q->cq;

    for (int i = 0; i < 2000; i++) {
        NvmeCqe e;
        unsigned slot = (cq->head + n - 1) % cq->size;
        uint8_t phase = cq->phase ^ (cq->head + n - 1 >= cq->size);

        qt_memread(qt, cq->addr + slot * 16ull, &e, sizeof(e));
        if ((e.status & 1) == phase) {
            return;
        }
        qt_clock_step(qt, 10000);
    }
    ck_abort_msg("%u completions never posted on CQ %u", n, cq->qid);
}

/*
 * Linux >= 5.19 writes CC's fields with EN=0, reads CC back, then sets
 * EN: the fields must be kept while disabled and no fault raised.
 */
START_TEST(test_linux_cc_latched_while_disabled)
{
    Dev *d = dev_launch(NULL, "", "");
    NvmeHost *h = d->h;
    uint32_t cc = NVME_CC_DEFAULT | NVME_CC_MPS(0);
    uint32_t csts;
    uint8_t id[4096];

    nh_wr32(h, NVME_REG_CC, cc);
    ck_assert_msg(nh_rd32(h, NVME_REG_CC) == cc, "CC reads 0x%08x after "
                  "writing 0x%08x with EN=0", nh_rd32(h, NVME_REG_CC), cc);
    csts = nh_rd32(h, NVME_REG_CSTS);
    ck_assert_msg(!(csts & (NVME_CSTS_RDY | NVME_CSTS_CFS)), "CSTS 0x%x "
                  "after a CC write with EN=0", csts);
    csts = nh_try_enable(h, 32, nh_rd32(h, NVME_REG_CC) | NVME_CC_EN);
    ck_assert_msg((csts & (NVME_CSTS_RDY | NVME_CSTS_CFS)) == NVME_CSTS_RDY,
                  "not ready after setting EN on the latched CC: CSTS "
                  "0x%x", csts);
    ck_status(nh_identify(h, 1, 0, id), 0, "Identify after the two writes");
    dev_close(d);
}
END_TEST

/*
 * Windows 24H2's stornvme reads ASQ after the first Identify and treats
 * 0 as a hardware error: AQA/ASQ/ACQ read back what was written while
 * enabled, and writes to them while enabled change nothing.
 */
START_TEST(test_windows_admin_regs_read_back)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint32_t aqa = 31 | (31u << 16);          /* dev_open: 32 entries */
    uint64_t asq = h->admin->addr, acq = h->admin->cq->addr;
    uint8_t id[4096];

    ck_status(nh_identify(h, 1, 0, id), 0, "Identify Controller");
    ck_assert_uint_eq(nh_rd32(h, NVME_REG_AQA), aqa);
    ck_assert_uint_eq(nh_rd64(h, NVME_REG_ASQ), asq);
    ck_assert_uint_eq(nh_rd64(h, NVME_REG_ACQ), acq);
    ck_assert_uint_eq(nh_rd32(h, NVME_REG_ASQ), (uint32_t)asq);
    ck_assert_uint_eq(nh_rd32(h, NVME_REG_ASQ + 4), (uint32_t)(asq >> 32));
    nh_wr64(h, NVME_REG_ASQ, 0x1234000);
    nh_wr32(h, NVME_REG_AQA, 0x00070007);
    ck_assert_msg(nh_rd64(h, NVME_REG_ASQ) == asq &&
                  nh_rd32(h, NVME_REG_AQA) == aqa, "a write while enabled "
                  "changed ASQ/AQA");
    ck_status(nh_identify(h, 1, 0, id), 0, "Identify after the writes");
    dev_close(d);
}
END_TEST

/* OVMF writes the 64-bit ASQ and ACQ as two dwords, in either order. */
START_TEST(test_ovmf_admin_regs_two_dwords)
{
    Dev *d = dev_launch(NULL, "", "");
    NvmeHost *h = d->h;
    uint64_t asq = nh_alloc(h, 4096, 4096), acq = nh_alloc(h, 4096, 4096);
    uint64_t hi = 0x00000001ull << 32;
    uint8_t id[4096];
    uint32_t csts;

    /* low then high, high then low: the full value either way */
    nh_wr32(h, NVME_REG_ASQ, (uint32_t)asq | 0x1000);
    nh_wr32(h, NVME_REG_ASQ + 4, (uint32_t)(hi >> 32));
    nh_wr32(h, NVME_REG_ACQ + 4, (uint32_t)(hi >> 32));
    nh_wr32(h, NVME_REG_ACQ, (uint32_t)acq | 0x1000);
    ck_assert_uint_eq(nh_rd64(h, NVME_REG_ASQ), hi | asq | 0x1000);
    ck_assert_uint_eq(nh_rd64(h, NVME_REG_ACQ), hi | acq | 0x1000);
    /* then the real, low addresses the same way, and enable */
    nh_wr32(h, NVME_REG_ASQ + 4, 0);
    nh_wr32(h, NVME_REG_ASQ, (uint32_t)asq);
    nh_wr32(h, NVME_REG_ACQ, (uint32_t)acq);
    nh_wr32(h, NVME_REG_ACQ + 4, 0);
    ck_assert_uint_eq(nh_rd64(h, NVME_REG_ASQ), asq);
    ck_assert_uint_eq(nh_rd64(h, NVME_REG_ACQ), acq);
    csts = nh_try_enable(h, 16, NVME_CC_DEFAULT | NVME_CC_EN);
    ck_assert_msg((csts & 3) == NVME_CSTS_RDY, "CSTS 0x%x", csts);
    ck_status(nh_identify(h, 1, 0, id), 0, "Identify");
    dev_close(d);
}
END_TEST

/*
 * CAP as firmware reads it: OVMF's PEI driver wants CSS exactly 01h,
 * SeaBIOS bit 37 and TO > 0 (500 ms x TO), VMware TO >= 2 ((TO+1)>>1
 * seconds, 0 waits forever), OVMF MPSMIN 0; Identify VER equals VS
 * (UNH-IOL 4.18).
 */
START_TEST(test_firmware_cap_fields)
{
    Dev *d = dev_open();
    uint64_t cap = nh_rd64(d->h, NVME_REG_CAP);
    uint8_t id[4096];

    ck_assert_msg(NVME_CAP_CSS(cap) == 0x01, "CAP.CSS 0x%02x, OVMF's PEI "
                  "driver wants exactly 01h", NVME_CAP_CSS(cap));
    ck_assert_msg(cap & (1ull << 37), "CAP bit 37 (NVM command set) clear");
    ck_assert_msg(NVME_CAP_TO(cap) >= 2, "CAP.TO %u: VMware waits "
                  "(TO+1)>>1 s", NVME_CAP_TO(cap));
    ck_assert_uint_eq(NVME_CAP_MPSMIN(cap), 0);
    ck_assert_msg(NVME_CAP_MQES(cap) >= 31, "MQES %u < 31: VMware splits "
                  "every transfer", NVME_CAP_MQES(cap));
    ck_status(nh_identify(d->h, 1, 0, id), 0, "Identify");
    ck_assert_msg(le32_at(id, 80) == nh_rd32(d->h, NVME_REG_VS), "Identify "
                  "VER 0x%08x, VS 0x%08x", le32_at(id, 80),
                  nh_rd32(d->h, NVME_REG_VS));
    dev_close(d);
}
END_TEST

/*
 * SeaBIOS advances its SQ head only from CQE.SQHD, VMware logs an SQHD
 * >= the queue size: on a 4-entry SQ, the k-th command's completion
 * carries head k mod 4, whether the commands come one by one or three
 * behind one doorbell.
 */
START_TEST(test_seabios_sqhd_exact)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    NvmeQueue *q = nh_create_ioq(h, 2, 4, -1);
    unsigned k = 0;
    NvmeCqe cqe;
    NvmeSqe sqe;

    for (; k < 12; k++) {
        nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
        nh_submit(h, q, &sqe);
        ck_assert(nh_wait(h, q, &cqe, 1000000000));
        ck_assert_msg(cqe.sqhd == (k + 1) % 4, "command %u: SQHD %u, "
                      "expected %u", k, cqe.sqhd, (k + 1) % 4);
    }
    for (unsigned i = 0; i < 3; i++) {
        nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
        nh_sq_put(h, q, &sqe, false);
    }
    nh_sq_ring(h, q);
    for (unsigned i = 0; i < 3; i++, k++) {
        ck_assert(nh_wait(h, q, &cqe, 1000000000));
        ck_assert_msg(cqe.sqhd < 4, "SQHD %u on a 4-entry queue", cqe.sqhd);
        ck_assert_msg((cqe.sqhd + 4 - (k % 4)) % 4 >= 1, "SQHD %u behind "
                      "the command it completes (slot %u)", cqe.sqhd, k % 4);
    }
    ck_assert_uint_eq(cqe.sqhd, k % 4);
    dev_close(d);
}
END_TEST

/*
 * OVMF's synchronous I/O pair has 2 entries: data moves through it, the
 * phase flips every 2 completions, SQHD alternates 1, 0.
 */
START_TEST(test_ovmf_two_entry_queue)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    NvmeQueue *q = nh_create_ioq(h, 2, 2, -1);
    uint8_t w[4096], r[4096];

    for (unsigned i = 0; i < 6; i++) {
        nh_pattern(w, sizeof(w), 100 + i);
        ck_status(nh_write(h, q, 8 * i, w, sizeof(w)), 0, "write %u", i);
        ck_status(nh_read(h, q, 8 * i, r, sizeof(r)), 0, "read %u", i);
        ck_assert_msg(!memcmp(w, r, sizeof(w)), "data %u differs", i);
    }
    ck_assert_uint_eq(q->tail, 0);            /* 12 commands: wrapped 6x */
    dev_close(d);
}
END_TEST

/* SeaBIOS and OVMF poll CQs made with IEN=0: they raise no interrupt. */
START_TEST(test_firmware_polled_cq_no_interrupt)
{
    Dev *d = dev_open();                      /* CQ 1: IEN=0 */
    NvmeCqe cqe;
    NvmeSqe sqe;

    qt_irq_intercept_in(d->qt, "ioapic");
    nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
    nh_submit(d->h, d->q, &sqe);
    wait_posted(d->qt, d->q, 1);
    ck_assert_msg(dev_intx_level(d->qt) == 0, "INTx asserted for a completion "
                  "on a CQ created without interrupts");
    ck_assert(nh_poll(d->h, d->q, &cqe));
    dev_close(d);
}
END_TEST

/*
 * MSI-X messages are edges: when the host's CQ head doorbell leaves
 * entries behind, the device sends another message, or a host that
 * takes one entry per interrupt waits for a completion already posted.
 */
START_TEST(test_msix_resent_while_cq_not_empty)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint64_t msi = nh_alloc(h, 4096, 4096);
    NvmeQueue *q;
    NvmeCqe cqe;
    NvmeSqe sqe;

    nh_msix_enable(h);
    nh_msix_set(h, 3, msi, DRV_MSI_DATA, false);
    q = nh_create_ioq(h, 2, 16, 3);
    for (unsigned i = 0; i < 2; i++) {
        nh_sqe_init(&sqe, NVME_CMD_FLUSH, 1);
        nh_sq_put(h, q, &sqe, false);
    }
    nh_sq_ring(h, q);
    wait_posted(d->qt, q, 2);
    qt_writel(d->qt, msi, 0);
    ck_assert(nh_poll(h, q, &cqe));           /* head doorbell: 1 left */
    qt_clock_step(d->qt, 1000);
    ck_assert_msg(qt_readl(d->qt, msi) == DRV_MSI_DATA, "no new MSI-X "
                  "message while a completion is still in the CQ");
    qt_writel(d->qt, msi, 0);
    ck_assert(nh_poll(h, q, &cqe));           /* empty now */
    qt_clock_step(d->qt, 1000);
    ck_assert_msg(qt_readl(d->qt, msi) == 0, "message for an empty CQ");
    dev_close(d);
}
END_TEST

/*
 * Windows: BAR0 of at least 16 KiB (ours 32 KiB), a layout that does
 * not move with the number of queues (MSI-X table at 2000h and PBA at
 * 4000h in BAR0), and 129 vectors as enterprise drives of this class
 * expose (Windows fails at 512).
 */
START_TEST(test_windows_bar_layout)
{
    g_autofree char *opts = NULL;

    for (unsigned qp = 8; qp <= 128; qp *= 16) {
        Dev *d;
        QTest *qt;
        int fn, cap = -1, ptr;
        uint32_t lo;

        opts = g_strdup_printf(",max-ioqpairs=%u", qp);
        d = dev_launch(NULL, opts, "");
        qt = d->qt;
        fn = d->h->devfn;
        qt_pci_cfg_writel(qt, fn, 0x10, 0xffffffff);
        lo = qt_pci_cfg_readl(qt, fn, 0x10) & ~0xfu;
        qt_pci_cfg_writel(qt, fn, 0x10, (uint32_t)d->h->bar);
        ck_assert_msg(~lo + 1 == 32768, "BAR0 is %u bytes", ~lo + 1);
        ptr = qt_pci_cfg_readb(qt, fn, 0x34) & 0xfc;
        for (int n = 0; ptr && n < 48; n++) {
            if (qt_pci_cfg_readb(qt, fn, ptr) == 0x11) {
                cap = ptr;
                break;
            }
            ptr = qt_pci_cfg_readb(qt, fn, ptr + 1) & 0xfc;
        }
        ck_assert_int_ge(cap, 0);
        ck_assert_uint_eq((qt_pci_cfg_readw(qt, fn, cap + 2) & 0x7ff) + 1,
                          qp + 1);
        ck_assert_uint_eq(qt_pci_cfg_readl(qt, fn, cap + 4), 0x2000);
        ck_assert_uint_eq(qt_pci_cfg_readl(qt, fn, cap + 8), 0x4000);
        dev_close(d);
        g_clear_pointer(&opts, g_free);
    }
}
END_TEST

/*
 * stornvme ignores DNR and resubmits a failed AER at once: AERs must
 * stay parked, whatever else the admin queue does, until a reset.
 */
START_TEST(test_windows_aers_parked)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint8_t id[4096];
    NvmeSqe sqe;
    NvmeCqe cqe;

    for (unsigned i = 0; i < 4; i++) {        /* AERL 3: four */
        nh_sqe_init(&sqe, NVME_ADM_ASYNC_EVENT, 0);
        nh_sq_put(h, h->admin, &sqe, false);
    }
    nh_sq_ring(h, h->admin);
    for (unsigned i = 0; i < 50; i++) {
        ck_status(nh_identify(h, 1, 0, id), 0, "Identify %u", i);
        qt_clock_step(d->qt, 100000000);      /* 5 s of virtual time */
    }
    ck_assert_msg(!nh_poll(h, h->admin, &cqe), "a parked AER completed "
                  "(status 0x%x) with no event", nh_status(&cqe));
    ck_assert_uint_eq(h->n_stray, 0);
    nh_disable(h);                            /* reset: they are gone */
    dev_reprobe(d);
    h = d->h;
    nh_sqe_init(&sqe, NVME_ADM_ASYNC_EVENT, 0);
    nh_submit(h, h->admin, &sqe);
    ck_status(nh_identify(h, 1, 0, id), 0, "Identify after the reset");
    dev_close(d);
}
END_TEST


int main(void)
{
    Suite *s = suite_create("drivers");
    TCase *tc = dev_tcase(s, "drivers");

    tcase_add_test(tc, test_linux_cc_latched_while_disabled);
    tcase_add_test(tc, test_windows_admin_regs_read_back);
    tcase_add_test(tc, test_ovmf_admin_regs_two_dwords);
    tcase_add_test(tc, test_firmware_cap_fields);
    tcase_add_test(tc, test_seabios_sqhd_exact);
    tcase_add_test(tc, test_ovmf_two_entry_queue);
    tcase_add_test(tc, test_firmware_polled_cq_no_interrupt);
    tcase_add_test(tc, test_msix_resent_while_cq_not_empty);
    tcase_add_test(tc, test_windows_bar_layout);
    tcase_add_test(tc, test_windows_aers_parked);
    return dev_main(s);
}
