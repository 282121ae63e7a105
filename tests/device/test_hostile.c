/*
 * A hostile guest, seeded and bounded: random register and doorbell
 * writes, valid and malformed admin and I/O commands whose data pointers
 * aim at RAM, the device's own BAR0, ROM or nothing, queues created and
 * deleted with I/O in flight, resets in the middle of it all, with the
 * host's faults on demand armed; in the main loop and in an IOThread,
 * timing on and off, on a fast and a slow backend.  QEMU must stay alive and, after each round, the controller
 * must reset, come back and read back what was written.
 *
 * H3100_HOSTILE_SEED=N (default 1) replays a run, H3100_HOSTILE_ROUNDS
 * and H3100_HOSTILE_ACTIONS size it; a failure names its seed and round.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dev.h"

#define BIOS_TOP_PAGE   0xfffff000ull
#define SCRATCH_BYTES   (256 * 1024)

typedef struct Hostile {
    Dev *d;
    GRand *rng;
    uint64_t scratch;                 /* RAM the commands may use */
    uint64_t prp_list;                /* a page of random PRP entries */
    uint64_t sgl;                     /* a page of random SGL descriptors */
    uint64_t ioq_mem;                 /* RAM for queues made at random */
    uint64_t ns_buf;                  /* the test's own namespace data */
    NvmeQueue *q[3];                  /* I/O queue pairs 1 and 2 */
    unsigned cqes, ok;                /* completions reaped, successes */
    unsigned cuts;                    /* power cuts by the host */
} Hostile;

static const char *const configs[] = {
    "",
    ",timing=off,vwc=on",
    ",iothread=io0",
    ",iothread=io0,timing=off,vwc=on",
    /* I/O queues in two IOThreads, the controller in the main loop or io0 */
    DEV_QMAP2,
    ",iothread=io0,timing=off,vwc=on" DEV_QMAP2,
};

static uint64_t env_u64(const char *name, uint64_t def)
{
    const char *v = g_getenv(name);

    return v && *v ? g_ascii_strtoull(v, NULL, 0) : def;
}

static uint32_t rnd(Hostile *x, uint32_t n)
{
    return g_rand_int_range(x->rng, 0, n);
}

static uint64_t rnd64(Hostile *x)
{
    return ((uint64_t)g_rand_int(x->rng) << 32) | g_rand_int(x->rng);
}

/* A guest address a command may point at: mostly RAM, or trouble. */
static uint64_t hostile_addr(Hostile *x)
{
    switch (rnd(x, 10)) {
    case 0:
        return x->d->h->bar + (rnd(x, 8) << 12) + (rnd(x, 4) ? 0 : 0x14);
    case 1:
        return BIOS_TOP_PAGE;
    case 2:
        return rnd(x, 2) ? 0 : 0x7ff000000000ull;
    case 3:
        return rnd64(x);
    case 4:
        return x->scratch + rnd(x, SCRATCH_BYTES);        /* misaligned */
    case 5:
        return x->prp_list + (rnd(x, 2) ? 0 : rnd(x, 4096) & ~7u);
    default:
        return x->scratch + (rnd(x, SCRATCH_BYTES / 4096) << 12);
    }
}

/* Fill the PRP list and SGL pages with entries that point anywhere. */
static void hostile_lists(Hostile *x)
{
    uint64_t prps[512];
    NvmeSglDesc d[256];

    for (unsigned i = 0; i < G_N_ELEMENTS(prps); i++) {
        prps[i] = rnd(x, 4) ? hostile_addr(x) & ~0xfffull :
                  (rnd(x, 2) ? x->prp_list : hostile_addr(x));
    }
    qt_memwrite(x->d->qt, x->prp_list, prps, sizeof(prps));
    for (unsigned i = 0; i < G_N_ELEMENTS(d); i++) {
        static const uint8_t types[] = {
            NVME_SGL_DATA_BLOCK, NVME_SGL_BIT_BUCKET, NVME_SGL_SEGMENT,
            NVME_SGL_LAST_SEG, 0x50, 0x01,
        };

        memset(&d[i], 0, sizeof(d[i]));
        d[i].type = types[rnd(x, G_N_ELEMENTS(types))];
        d[i].len = rnd(x, 3) ? rnd(x, 8192) : (uint32_t)rnd64(x);
        d[i].addr = d[i].type & 0x20 ? x->sgl + (rnd(x, 256) << 4) :
                    hostile_addr(x);
    }
    qt_memwrite(x->d->qt, x->sgl, d, sizeof(d));
}

static void hostile_dptr(Hostile *x, NvmeSqe *sqe)
{
    if (rnd(x, 4) == 0) {
        NvmeSglDesc first;

        sqe->flags |= NVME_PSDT_SGL;
        memset(&first, 0, sizeof(first));
        first.type = rnd(x, 2) ? NVME_SGL_SEGMENT : NVME_SGL_DATA_BLOCK;
        first.addr = first.type ? x->sgl + (rnd(x, 256) << 4) :
                     hostile_addr(x);
        first.len = first.type ? (rnd(x, 256) + 1) * 16 : rnd(x, 1 << 20);
        memcpy(&sqe->prp1, &first, sizeof(first));
        return;
    }
    sqe->prp1 = hostile_addr(x);
    sqe->prp2 = hostile_addr(x);
}

static void hostile_admin(Hostile *x)
{
    /* the drive's admin commands, and two it lacks */
    static const uint8_t unknown[] = { 0xc0, 0xff };
    const uint8_t *ops;
    size_t n = nh_opcodes(true, &ops);
    uint32_t i = rnd(x, n + G_N_ELEMENTS(unknown));
    NvmeSqe sqe;

    nh_sqe_init(&sqe, i < n ? ops[i] : unknown[i - n],
                rnd(x, 4) ? 1 : (uint32_t)rnd64(x));
    sqe.cdw10 = rnd(x, 2) ? rnd(x, 8) | (rnd(x, 64) << 16) :
                (uint32_t)rnd64(x);
    sqe.cdw11 = rnd(x, 2) ? rnd(x, 4) | (rnd(x, 3) << 16) :
                (uint32_t)rnd64(x);
    sqe.cdw12 = rnd(x, 2) ? 0 : (uint32_t)rnd64(x);
    sqe.cdw13 = rnd(x, 2) ? 0 : (uint32_t)rnd64(x);
    sqe.flags = rnd(x, 8) ? 0 : rnd(x, 256);
    hostile_dptr(x, &sqe);
    if ((sqe.opc == 0x01 || sqe.opc == 0x05) && rnd(x, 2)) {
        /* create a queue on RAM of ours (or where the pointer said) */
        sqe.prp1 = x->ioq_mem + (rnd(x, 4) << 14);
        sqe.cdw10 = (1 + rnd(x, 4)) | (rnd(x, 64) << 16);
        sqe.cdw11 = 1 | (rnd(x, 3) << 16);
    }
    if (sqe.opc == NVME_ADM_GET_LOG_PAGE && rnd(x, 2)) {
        /* one of the drive's pages, any LSP / RAE and length */
        const uint8_t *lids;
        size_t nlids = nh_log_ids(&lids);

        sqe.cdw10 = lids[rnd(x, nlids)] | (rnd(x, 256) << 8) |
                    (rnd(x, 1024) << 16);
    }
    nh_sq_put(x->d->h, x->d->h->admin, &sqe, false);
    nh_sq_ring(x->d->h, x->d->h->admin);
}

static void hostile_io(Hostile *x)
{
    /* the drive's I/O commands, Write and Read twice as often, two it lacks */
    static const uint8_t more[] = { 0x01, 0x02, 0x0d, 0x7f };
    NvmeQueue *q = x->q[1 + rnd(x, 2)];
    uint32_t n = 1 + rnd(x, 8);
    const uint8_t *ops;
    size_t nops = nh_opcodes(false, &ops);
    NvmeSqe sqe;

    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = rnd(x, nops + G_N_ELEMENTS(more));

        nh_sqe_init(&sqe, k < nops ? ops[k] : more[k - nops],
                    rnd(x, 8) ? 1 : (uint32_t)rnd64(x));
        sqe.cdw10 = rnd(x, 4) ? rnd(x, DEV_NS_LBAS) : (uint32_t)rnd64(x);
        sqe.cdw11 = rnd(x, 4) ? 0 : (uint32_t)rnd64(x);
        sqe.cdw12 = rnd(x, 2) ? rnd(x, 256) : (uint32_t)rnd64(x);
        sqe.flags = rnd(x, 8) ? 0 : rnd(x, 4);
        hostile_dptr(x, &sqe);
        nh_sq_put(x->d->h, q, &sqe, false);
    }
    nh_sq_ring(x->d->h, q);
}

static void hostile_register(Hostile *x)
{
    static const uint32_t regs[] = {
        NVME_REG_CC, NVME_REG_CSTS, NVME_REG_AQA, NVME_REG_ASQ,
        NVME_REG_ACQ, NVME_REG_INTMS, NVME_REG_INTMC, NVME_REG_NSSR,
        0x0, 0x8, 0x38, 0xf00,
    };
    NvmeHost *h = x->d->h;
    uint32_t off;

    if (rnd(x, 3)) {
        /* a doorbell: of a queue that exists or not, any value */
        off = NVME_REG_DBS + rnd(x, 1024) * 4;
        if (rnd(x, 2)) {
            off = NVME_REG_DBS + rnd(x, 6) * 4;
        }
        nh_wr32(h, off, rnd(x, 2) ? rnd(x, 80) : (uint32_t)rnd64(x));
        return;
    }
    off = regs[rnd(x, G_N_ELEMENTS(regs))];
    if (off == NVME_REG_CC && rnd(x, 4)) {
        return;                       /* resets: sometimes, not always */
    }
    if (rnd(x, 2)) {
        nh_wr64(h, off & ~7u, rnd64(x));
    } else {
        nh_wr32(h, off + (rnd(x, 8) ? 0 : 1 + rnd(x, 3)), (uint32_t)rnd64(x));
    }
}

/* Reap whatever completed, so the CQs keep room; never wait. */
static void hostile_reap(Hostile *x)
{
    NvmeCqe cqe;

    for (unsigned i = 0; i < 3; i++) {
        NvmeQueue *q = i ? x->q[i] : x->d->h->admin;

        for (unsigned n = 0; n < 64 && nh_poll(x->d->h, q, &cqe); n++) {
            x->cqes++;
            x->ok += !nh_status(&cqe);
        }
    }
}

static void hostile_restart(Hostile *x, const char *where);

/*
 * The host's faults on demand (docs/guide/faults.md) in the storm: I/O
 * commands held, failed, late or without their interrupt, now and then.
 * None draws from the test's generator, so a seed replays as before.
 */
static const char *const storm_faults[] = {
    "timeout,q=io,prob=4000,count=0",
    "timeout,q=io,prob=4000,count=0,abort=ignore",
    "status,q=io,prob=20000,count=0,sc=0x6",
    "status,q=io,prob=10000,count=0,sc=0x281,dnr=on,more=on",
    "lost-irq,q=io,prob=20000,count=0",
    "delay,q=io,prob=10000,count=0,ms=2",   /* refused with timing=off */
    "aer,type=smart,info=0",
};

static void hostile_fault_prop(Hostile *x, const char *prop,
                               const char *value)
{
    g_free(qt_qmp(x->d->qt, "{\"execute\": \"qom-set\", \"arguments\": "
                  "{\"path\": \"/machine/peripheral/h0\", \"property\": "
                  "\"%s\", \"value\": \"%s\"}}", prop, value));
}

static void hostile_arm_faults(Hostile *x)
{
    for (size_t i = 0; i < G_N_ELEMENTS(storm_faults); i++) {
        hostile_fault_prop(x, "fault", storm_faults[i]);
    }
}

/* The host cuts the drive's power in the middle of it all. */
static void hostile_power_cut(Hostile *x)
{
    qt_qmp_ok(x->d->qt, "{\"execute\": \"qom-set\", \"arguments\": "
              "{\"path\": \"/machine/peripheral/h0\", \"property\": "
              "\"power-cut\", \"value\": \"drive\"}}");
    x->cuts++;
    hostile_restart(x, "after a power cut");
    hostile_arm_faults(x);                 /* gone with the power */
}

static void hostile_act(Hostile *x)
{
    switch (rnd(x, 20)) {
    case 0 ... 5:
        hostile_io(x);
        break;
    case 6 ... 9:
        hostile_admin(x);
        break;
    case 10 ... 13:
        hostile_register(x);
        break;
    case 14:
        hostile_lists(x);
        break;
    case 15:
        /* a reset under the feet of everything in flight */
        if (rnd(x, 4) == 0) {
            nh_wr32(x->d->h, NVME_REG_CC, 0);
            nh_wr32(x->d->h, NVME_REG_CC, NVME_CC_DEFAULT | NVME_CC_EN);
        } else if (rnd(x, 16) == 0) {
            hostile_power_cut(x);
        }
        break;
    case 16 ... 17:
        qt_clock_step(x->d->qt, rnd(x, 2000000) + 1);
        break;
    default:
        hostile_reap(x);
        break;
    }
}

static void hostile_wait_sanitize(Hostile *x, const char *where);

/* An admin command with a 4 KiB buffer of @data (may be NULL) */
static uint16_t hostile_admin_cmd(Hostile *x, uint8_t opc, uint32_t nsid,
                                  uint32_t cdw10, const void *data)
{
    NvmeHost *h = x->d->h;
    uint64_t buf = x->ns_buf;
    NvmeSqe sqe;
    NvmeCqe cqe;

    nh_sqe_init(&sqe, opc, nsid);
    if (data) {
        qt_memwrite(x->d->qt, buf, data, 4096);
        nh_set_prps(h, &sqe, buf, 4096);
    }
    sqe.cdw10 = cdw10;
    cqe = nh_cmd(h, h->admin, &sqe);
    return nh_status(&cqe);
}

/* how long (host time) a namespace erase may take to land */
#define HOSTILE_ERASE_WAIT_S    120

/* Let an erase go on: virtual time for its timers, host time for its I/O */
static void hostile_erase_step(Hostile *x)
{
    qt_clock_step(x->d->qt, 100000000);
    g_usleep(1000);
}

/*
 * The storm may have deleted or detached namespace 1 (or made others):
 * start over with one namespace over the whole drive, as shipped.
 */
static void hostile_ns1(Hostile *x, const char *where)
{
    uint8_t id[4096] = { 0 };
    uint64_t lbas = DEV_NS_LBAS;
    uint16_t st, one[2] = { 1, 0 };   /* a list of controller 0 */
    gint64 end;

    ck_status(nh_identify(x->d->h, 0, 1, id), 0, "%s: identify ns", where);
    if (le64_at(id, 0)) {
        return;
    }
    /*
     * An erase waits for the backend's zeroes (host time, a flush each
     * slice), so the waits below are bounded by the host's clock: a fixed
     * count of quick clock steps ran out on a loaded host.
     */
    end = g_get_monotonic_time() + HOSTILE_ERASE_WAIT_S * G_USEC_PER_SEC;
    for (;;) {
        st = hostile_admin_cmd(x, 0x0d, 0xffffffff, 1, NULL);
        if (st == NVME_SC_SANITIZE_IN_PROGRESS) {
            hostile_wait_sanitize(x, where);
        } else if (st == 0x084 &&     /* a Format of one still erasing */
                   g_get_monotonic_time() < end) {
            hostile_erase_step(x);
        } else {
            break;
        }
    }
    ck_status(st, 0, "%s: delete every namespace", where);
    /* deletes the storm started may still be erasing: wait for them */
    for (;;) {
        ck_status(nh_identify(x->d->h, 1, 0, id), 0, "%s: identify", where);
        if (le64_at(id, 296) == le64_at(id, 280)) {  /* UNVMCAP, TNVMCAP */
            break;
        }
        ck_assert_msg(g_get_monotonic_time() < end,
                      "%s: namespaces still erasing after %d s (UNVMCAP "
                      "%" PRIu64 " of %" PRIu64 ")", where,
                      HOSTILE_ERASE_WAIT_S, le64_at(id, 296), le64_at(id, 280));
        hostile_erase_step(x);
    }
    memset(id, 0, sizeof(id));
    memcpy(id, &lbas, 8);
    memcpy(id + 8, &lbas, 8);
    ck_status(hostile_admin_cmd(x, 0x0d, 0, 0, id), 0,
              "%s: create namespace 1", where);
    ck_status(hostile_admin_cmd(x, 0x15, 1, 0, one), 0,
              "%s: attach namespace 1", where);
}

/* Reset the controller and start over with fresh queues. */
static void hostile_restart(Hostile *x, const char *where)
{
    NvmeHost *h = x->d->h;
    uint8_t id[4096];

    ck_assert_msg(qt_alive(x->d->qt), "%s: QEMU died", where);
    nh_disable(h);
    nh_enable(h, 32);
    ck_status(nh_identify(h, 1, 0, id), 0, "%s: identify", where);
    hostile_ns1(x, where);
    nh_probe(h);                      /* a Format may have changed LBAs */
    x->q[1] = x->d->q = nh_create_ioq(h, 1, 64, -1);
    x->q[2] = nh_create_ioq(h, 2, 32, -1);
}

/*
 * A sanitize the storm started goes on across resets (as the spec has
 * it) and refuses I/O until it is done: let it finish.
 */
static void hostile_wait_sanitize(Hostile *x, const char *where)
{
    uint8_t log[512];

    for (int s = 0; s < 3600; s++) {
        ck_status(nh_get_log(x->d->h, 0x81, 0, log, sizeof(log), 0), 0,
                  "%s: sanitize log", where);
        if ((le16_at(log, 2) & 7) != 2) {
            return;
        }
        qt_clock_step(x->d->qt, 1000000000);
    }
    ck_abort_msg("%s: sanitize did not end in an hour", where);
}

/*
 * After the storm: reset, come back, and keep data (the slow backend,
 * null-co, keeps none: it reads zeroes).
 */
static void hostile_recover(Hostile *x, const char *where, bool keeps)
{
    NvmeHost *h = x->d->h;
    uint8_t w[8192], r[8192];

    hostile_restart(x, where);
    hostile_wait_sanitize(x, where);
    nh_pattern(w, sizeof(w), g_rand_int(x->rng));
    ck_status(nh_write(h, x->d->q, 64, w, sizeof(w)), 0, "%s: write", where);
    ck_status(nh_read(h, x->d->q, 64, r, sizeof(r)), 0, "%s: read", where);
    if (!keeps) {
        memset(w, 0, sizeof(w));
    }
    ck_assert_msg(!memcmp(w, r, sizeof(w)), "%s: data read back differs",
                  where);
}

static void hostile_round(uint64_t seed, unsigned round, unsigned actions)
{
    const char *cfg = configs[round % G_N_ELEMENTS(configs)];
    bool slow = (round / G_N_ELEMENTS(configs)) % 2;
    g_autofree char *where = g_strdup_printf("seed %" PRIu64 " round %u "
                                             "(%s%s)", seed, round,
                                             *cfg ? cfg + 1 : "main loop",
                                             slow ? ", slow backend" : "");
    g_autofree char *img = slow ? NULL :
                           qt_backing_file("hostile.img", DEV_NS_BYTES, "raw");
    g_autofree char *drive = slow ?
        g_strdup("driver=null-co,size=256M,read-zeroes=on,"
                 "latency-ns=1000000") :
        g_strdup_printf("file=%s,format=raw", img);
    Hostile x = { .rng = g_rand_new_with_seed(seed * 1000003u + round) };

    fprintf(stderr, "hostile: %s, %u actions\n", where, actions);
    /*
     * the vwc=on rounds keep a state file with frequent checkpoints: the
     * random CC writes' shutdown notifications save it clean, and
     * abandon those saves again
     */
    g_autofree char *state = g_build_filename(qt_tmpdir(), "hostile.h3s",
                                              NULL);
    g_autofree char *devopts = g_strdup_printf(
        ",id=h0%s%s%s", cfg, strstr(cfg, "vwc=on") ? ",state-interval=1,"
        "state=" : "", strstr(cfg, "vwc=on") ? state : "");

    x.d = dev_open_drive(drive, devopts, strstr(cfg, "iothread=io0") ?
                         "-object iothread,id=io0 " DEV_IOT2 : DEV_IOT2);
    x.scratch = nh_alloc(x.d->h, SCRATCH_BYTES, 4096);
    x.prp_list = nh_alloc(x.d->h, 4096, 4096);
    x.sgl = nh_alloc(x.d->h, 4096, 4096);
    x.ioq_mem = nh_alloc(x.d->h, 4 << 14, 4096);
    x.ns_buf = nh_alloc(x.d->h, 4096, 4096);
    x.q[1] = x.d->q;
    x.q[2] = nh_create_ioq(x.d->h, 2, 32, -1);
    hostile_lists(&x);
    hostile_arm_faults(&x);
    for (unsigned i = 0; i < actions; i++) {
        hostile_act(&x);
        if (i % 64 == 63) {
            ck_assert_msg(qt_alive(x.d->qt), "%s: QEMU died at action %u",
                          where, i);
        }
        if (i % 256 == 255) {
            hostile_restart(&x, where);    /* with I/O in flight */
        }
    }
    hostile_fault_prop(&x, "fault-clear", "all");
    hostile_recover(&x, where, !slow);
    {
        g_autofree char *log = qt_guest_log(x.d->qt);
        unsigned lines = 0;

        for (const char *p = log; (p = strchr(p, '\n')); p++) {
            lines++;
        }
        fprintf(stderr, "hostile: %u completions reaped (%u successful), "
                "%u guest errors logged, %u power cuts\n", x.cqes, x.ok,
                lines, x.cuts);
    }
    dev_close(x.d);
    if (img) {
        unlink(img);
    }
    unlink(state);
    g_rand_free(x.rng);
}

START_TEST(test_hostile_guest)
{
    uint64_t seed = env_u64("H3100_HOSTILE_SEED", 1);
    /* each configuration on a fast and a slow backend, 96k actions */
    unsigned rounds = env_u64("H3100_HOSTILE_ROUNDS", 12);
    unsigned actions = env_u64("H3100_HOSTILE_ACTIONS", 8000);

    for (unsigned r = 0; r < rounds; r++) {
        hostile_round(seed, r, actions);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hostile");
    TCase *tc = dev_tcase(s, "hostile");

    tcase_set_timeout(tc, 540);
    tcase_add_test(tc, test_hostile_guest);
    return dev_main(s);
}
