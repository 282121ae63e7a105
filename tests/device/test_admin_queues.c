/*
 * The admin suite's "queues" case (tests/device/test_admin.c runs it).
 * Queues: creating and deleting I/O queues, their limits and errors,
 * deleting an SQ with commands in it, an opcode the controller does not have.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "test_admin.h"

/* ---- queues ------------------------------------------------------------ */

START_TEST(test_queue_create_delete)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint8_t w[4096], r[4096];

    for (uint16_t qid = 2; qid <= 5; qid++) {
        NvmeQueue *q = nh_create_ioq(h, qid, 16, -1);

        nh_pattern(w, sizeof(w), qid);
        ck_status(nh_write(h, q, qid * 8, w, sizeof(w)), 0, "write on SQ %u",
                  qid);
        ck_status(nh_read(h, q, qid * 8, r, sizeof(r)), 0, "read on SQ %u",
                  qid);
        ck_assert(memcmp(w, r, sizeof(r)) == 0);
    }
    for (uint16_t qid = 2; qid <= 5; qid++) {
        ck_status(nh_delete_sq(h, qid), 0, "Delete SQ %u", qid);
        ck_status(nh_delete_cq(h, qid), 0, "Delete CQ %u", qid);
    }
    /* two SQs on one CQ */
    ck_status(nh_create_cq(h, 7, 32, -1), 0, "Create CQ 7");
    ck_status(nh_create_sq(h, 7, 16, 7), 0, "Create SQ 7 on CQ 7");
    ck_status(nh_create_sq(h, 8, 16, 7), 0, "Create SQ 8 on CQ 7");
    ck_status(nh_flush(h, h->sqs[7], 1), 0, "flush on SQ 7");
    ck_status(nh_flush(h, h->sqs[8], 1), 0, "flush on SQ 8");
    ck_status(nh_delete_cq(h, 7), NVME_SC_INVALID_QUEUE_DELETION,
              "Delete CQ 7 with SQs attached");
    ck_status(nh_delete_sq(h, 7), 0, "Delete SQ 7");
    ck_status(nh_delete_sq(h, 8), 0, "Delete SQ 8");
    ck_status(nh_delete_cq(h, 7), 0, "Delete CQ 7");
    /* re-create with the same identifiers */
    nh_create_ioq(h, 2, 8, -1);
    dev_close(d);
}
END_TEST

START_TEST(test_queue_limits)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint32_t dw0 = 0;
    uint16_t nsqa, ncqa;

    ck_status(nh_get_features(h, NVME_FEAT_NUM_QUEUES, 0, 0, &dw0), 0,
              "Get Features Number of Queues");
    nsqa = dw0 & 0xffff;
    ncqa = dw0 >> 16;
    ck_assert_msg(nsqa >= 127 && ncqa >= 127, "only %u SQs / %u CQs: the "
                  "88SS1098 class has >= 128 I/O queue pairs", nsqa + 1,
                  ncqa + 1);
    nh_create_ioq(h, nsqa + 1, 2, -1);
    ck_status(nh_create_cq(h, ncqa + 2, 2, -1), NVME_SC_INVALID_QID,
              "Create CQ above NCQA");
    ck_status(nh_create_cq(h, 0xffff, 2, -1), NVME_SC_INVALID_QID,
              "Create CQ 65535");
    ck_status(nh_create_sq(h, nsqa + 2, 2, 1), NVME_SC_INVALID_QID,
              "Create SQ above NSQA");
    /* the largest queue CAP.MQES allows */
    ck_status(nh_create_cq(h, 3, NVME_CAP_MQES(h->cap) + 1, -1), 0,
              "Create CQ of MQES+1 entries");
    ck_status(nh_create_sq(h, 3, NVME_CAP_MQES(h->cap) + 1, 3), 0,
              "Create SQ of MQES+1 entries");
    dev_close(d);
}
END_TEST

START_TEST(test_queue_errors)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    uint64_t page = nh_alloc(h, 8192, 4096);
    uint16_t mqes = NVME_CAP_MQES(h->cap);
    NvmeSqe sqe;
    NvmeCqe cqe;

    ck_status(nh_create_cq(h, 0, 16, -1), NVME_SC_INVALID_QID,
              "Create CQ 0");
    ck_status(nh_create_cq(h, 1, 16, -1), NVME_SC_INVALID_QID,
              "Create CQ 1 again");
    ck_status(nh_create_cq(h, 2, 1, -1), NVME_SC_INVALID_QSIZE,
              "Create CQ of 1 entry");
    ck_status(nh_create_cq(h, 2, mqes + 2, -1), NVME_SC_INVALID_QSIZE,
              "Create CQ of MQES+2 entries");
    ck_status(nh_create_cq(h, 2, 16, 4000), NVME_SC_INVALID_IRQ_VECTOR,
              "Create CQ with interrupt vector 4000");
    ck_status(nh_create_sq(h, 2, 16, 9), NVME_SC_CQ_INVALID,
              "Create SQ on missing CQ 9");
    ck_status(nh_create_sq(h, 2, 16, 0), NVME_SC_CQ_INVALID,
              "Create SQ on the admin CQ");
    ck_status(nh_create_sq(h, 1, 16, 1), NVME_SC_INVALID_QID,
              "Create SQ 1 again");
    ck_status(nh_create_sq(h, 0, 16, 1), NVME_SC_INVALID_QID,
              "Create SQ 0");
    ck_status(nh_create_sq(h, 2, 1, 1), NVME_SC_INVALID_QSIZE,
              "Create SQ of 1 entry");
    ck_status(nh_create_sq(h, 2, mqes + 2, 1), NVME_SC_INVALID_QSIZE,
              "Create SQ of MQES+2 entries");
    ck_status(nh_delete_sq(h, 9), NVME_SC_INVALID_QID, "Delete SQ 9");
    ck_status(nh_delete_sq(h, 0), NVME_SC_INVALID_QID, "Delete SQ 0");
    ck_status(nh_delete_cq(h, 9), NVME_SC_INVALID_QID, "Delete CQ 9");
    ck_status(nh_delete_cq(h, 0), NVME_SC_INVALID_QID, "Delete CQ 0");
    ck_status(nh_delete_cq(h, 1), NVME_SC_INVALID_QUEUE_DELETION,
              "Delete CQ 1 before SQ 1");

    /* queue base with an offset in its page */
    nh_sqe_init(&sqe, NVME_ADM_CREATE_CQ, 0);
    sqe.prp1 = page + 64;
    sqe.cdw10 = 2 | (15 << 16);
    sqe.cdw11 = 1;
    cqe = admin_raw(d, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_PRP_OFFSET_INVALID,
              "Create CQ at page offset 64");
    nh_sqe_init(&sqe, NVME_ADM_CREATE_SQ, 0);
    sqe.prp1 = page + 128;
    sqe.cdw10 = 2 | (15 << 16);
    sqe.cdw11 = 1 | (1 << 16);
    cqe = admin_raw(d, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_PRP_OFFSET_INVALID,
              "Create SQ at page offset 128");
    /* CAP.CQR=1: queues must be physically contiguous */
    nh_sqe_init(&sqe, NVME_ADM_CREATE_CQ, 0);
    sqe.prp1 = page;
    sqe.cdw10 = 2 | (15 << 16);
    sqe.cdw11 = 0;
    cqe = admin_raw(d, &sqe);
    ck_status(nh_status(&cqe), NVME_SC_INVALID_FIELD,
              "Create CQ with PC=0");

    /* the existing queue still works */
    ck_status(nh_flush(h, d->q, 1), 0, "flush on SQ 1");
    dev_close(d);
}
END_TEST

START_TEST(test_delete_sq_aborts_commands)
{
    Dev *d = dev_open();
    NvmeHost *h = d->h;
    NvmeQueue *q = nh_create_ioq(h, 2, 64, -1);
    uint64_t buf = nh_alloc(h, 16 * 4096, 4096);
    unsigned aborted = 0, done = 0;
    NvmeCqe cqe;

    /* a burst of reads, then Delete SQ before virtual time moves */
    for (int i = 0; i < 16; i++) {
        NvmeSqe sqe;

        nh_sqe_init(&sqe, NVME_CMD_READ, 1);
        sqe.prp1 = buf + i * 4096;
        sqe.cdw10 = i * 8;
        sqe.cdw12 = 7;
        nh_sq_put(h, q, &sqe, false);
    }
    nh_sq_ring(h, q);
    ck_status(nh_delete_sq(h, 2), 0, "Delete SQ 2 with reads in flight");
    while (nh_poll(h, &(NvmeQueue){ .qid = 2, .cq = h->cqs[2] }, &cqe)) {
        if (nh_status(&cqe) == NVME_SC_ABORT_SQ_DELETION) {
            aborted++;
        } else {
            ck_status(nh_status(&cqe), 0, "read completed before deletion");
            done++;
        }
    }
    ck_assert_msg(aborted + done <= 16, "%u completions for 16 commands",
                  aborted + done);
    ck_status(nh_delete_cq(h, 2), 0, "Delete CQ 2");
    ck_status(nh_flush(h, d->q, 1), 0, "flush on SQ 1 afterwards");
    dev_close(d);
}
END_TEST

START_TEST(test_admin_invalid_opcode)
{
    Dev *d = dev_open();

    ck_status(admin_status(d, 0x03, 0, 0, 0), NVME_SC_INVALID_OPCODE,
              "admin opcode 03h");
    ck_status(admin_status(d, 0x7f, 0, 0, 0), NVME_SC_INVALID_OPCODE,
              "admin opcode 7Fh");
    ck_status(admin_status(d, 0xc3, 0, 0, 0), NVME_SC_INVALID_OPCODE,
              "vendor admin opcode C3h");
    ck_status(admin_status(d, 0x1c, 0, 0, 0), NVME_SC_INVALID_OPCODE,
              "Virtualization Management (not supported)");
    dev_close(d);
}
END_TEST

void admin_queues_tcase(Suite *s)
{
    TCase *tc = dev_tcase(s, "queues");


    tcase_add_test(tc, test_queue_create_delete);
    tcase_add_test(tc, test_queue_limits);
    tcase_add_test(tc, test_queue_errors);
    tcase_add_test(tc, test_delete_sq_aborts_commands);
    tcase_add_test(tc, test_admin_invalid_opcode);
}
