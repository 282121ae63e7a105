/*
 * DapuStor H3100 NVMe SSD: the device's state
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The device's state (H3100State) and its parts, its requests and
 * queues, and the constants that size them: types only.  What each layer
 * offers the others is in its own header, which a file includes only if
 * it uses it: h3100-core.h (the lock, clock, guard, timers, queues,
 * completion, interrupts, DMA, guest errors), h3100-cmd.h (the command
 * tables), h3100-nvm.h (the NVM command set and its data path),
 * h3100-mgmt.h (admin commands, logs, features), h3100-life.h (state
 * file, migration, power, telemetry).
 *
 * Threads, contexts and the lock: docs/design/threading.md.
 */
#ifndef HW_DAPUSTOR_H3100_H
#define HW_DAPUSTOR_H3100_H

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/log.h"
#include "qemu/notify.h"
#include "qemu/queue.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "hw/pci/pci_device.h"
#include "migration/vmstate.h"
#include "system/dma.h"
#include "system/block-backend.h"
#include "system/iothread.h"
#include "system/runstate.h"
#include "block/nvme.h"
#include "qapi/qapi-types-virtio.h"

#include "h3100/model.h"
#include "h3100/fault.h"
#include "h3100/telemetry.h"
#include "h3100/telemetry-log.h"
#include "h3100/dapustor-log.h"
#include "h3100/log-pages.h"
#include "tables/features.h"

#define TYPE_DAPUSTOR_H3100 "dapustor-h3100"
OBJECT_DECLARE_SIMPLE_TYPE(H3100State, DAPUSTOR_H3100)

#define H3100_PCI_VENDOR_ID         0x1e3b
#define H3100_PCI_DEVICE_ID         0x1098
#define H3100_PCI_SUBSYS_VENDOR_ID  0x1e3b
#define H3100_PCI_REVISION          0x00
#define H3100_IEEE_OUI              0x00e04c    /* estimate, see usage.md */

#define H3100_NVME_VERSION          0x00010300  /* NVMe 1.3 */
#define H3100_MQES                  1023        /* 0's based: 1024 entries */
#define H3100_CAP_TO                20          /* 500 ms units: 10 s */
#define H3100_MAX_QPAIRS_LIMIT      511
#define H3100_NS_MAX                32          /* NN, see usage.md */
#define H3100_CNTLID                0           /* the one controller */
#define H3100_AERL                  3           /* 0's based: 4 AERs */
#define H3100_AER_QUEUE_MAX         64
#define H3100_ERRLOG_ENTRIES        64
#define H3100_FW_SLOTS              3
#define H3100_FW_MAX_BYTES          (32 * MiB)
#define H3100_FW_MAGIC              "H3FW"
#define H3100_UNCOR_MAX             4096
#define H3100_HCTM_MIN_K            273         /* MNTMT: 0 C */
#define H3100_HCTM_MAX_K            353         /* MXTMT: the heavy level */
#define H3100_EDSTT_MIN             10          /* extended self-test, min */
#define H3100_SHORT_DST_NS          (30 * NANOSECONDS_PER_SECOND)
#define H3100_IDLE_PERIOD_NS        (10 * SCALE_MS)
#define H3100_HEALTH_EVERY          100         /* idle ticks per check */
#define H3100_SQ_BATCH              64
#define H3100_IRQ_WORDS             8           /* 512 vectors */

#define H3100_REGS_SIZE             0x1000
#define H3100_DB_OFFSET             0x1000
#define H3100_DB_SIZE               0x1000
#define H3100_MSIX_TABLE_OFFSET     0x2000
#define H3100_MSIX_PBA_OFFSET       0x4000
#define H3100_BAR0_SIZE             (32 * KiB)
#define H3100_PM_CAP_OFFSET         0x60
#define H3100_PCIE_CAP_OFFSET       0x80
#define H3100_AER_CAP_OFFSET        0x100   /* the first extended one */

/* status codes newer than block/nvme.h or missing from it */
#define H3100_SC_SANITIZE_IN_PROGRESS   0x001d
#define H3100_SC_NS_WRITE_PROTECTED     0x0020
#define H3100_SC_DST_IN_PROGRESS        0x011d
#define H3100_SC_NS_INSUFFICIENT_CAP    0x0115
#define H3100_SC_NS_ID_UNAVAILABLE      0x0116
#define H3100_SC_THIN_PROV_UNSUPPORTED  0x011b

#define H3100_WAF_RING              64          /* health samples kept */
#define H3100_WAF_SAMPLE_NS         NANOSECONDS_PER_SECOND
#define H3100_WAF_WINDOW_S          60          /* "recent" WAF window */

/*
 * A load's records, in the only order a stream may hold them
 * (h3100-migrate.c): the model's identity, its pages, its core, then
 * the controller's vmstate.
 */
typedef enum H3100MigLoad {
    H3100_MIG_LOAD_IDLE,              /* no load under way */
    H3100_MIG_LOAD_IDENTITY,          /* load_setup: the identity next */
    H3100_MIG_LOAD_MODEL,             /* pages, then the core */
    H3100_MIG_LOAD_CONTROLLER,        /* the model is whole */
} H3100MigLoad;

typedef struct H3100State H3100State;
typedef struct H3100Timer H3100Timer;
typedef struct H3100SQueue H3100SQueue;
/*
 * With timing on, a wake-up for a completion posts every command due
 * within this many ns of it (property completion-window; 0: each at its
 * exact model time).  Why this default: docs/design/data-path.md,
 * *Completions due together*.
 */
#define H3100_COMPLETION_WINDOW_NS      2000
#define H3100_COMPLETION_WINDOW_MAX_NS  100000

typedef struct H3100CQueue H3100CQueue;
typedef struct H3100QGroup H3100QGroup;

typedef struct H3100Range {
    uint64_t start;                   /* bytes */
    uint64_t end;
    uint8_t flags;                    /* H3100_UNCOR_* */
} H3100Range;

/*
 * What marked an uncorrectable range: Write Uncorrectable (0), or the
 * host's media fault (INJECTED), whose reads fail with DNR if it said so.
 */
#define H3100_UNCOR_INJECTED        0x01
#define H3100_UNCOR_DNR             0x02
#define H3100_UNCOR_FLAGS           (H3100_UNCOR_INJECTED | H3100_UNCOR_DNR)

/* a range being made to read as zeroes (h3100-unmap.c) */
typedef struct H3100Unmap H3100Unmap;

/* a write no Flush covered yet (h3100-vcache.c) */
typedef struct H3100VEntry {
    uint64_t offset;
    uint64_t bytes;
    uint8_t *old;                     /* what the write overwrote */
    bool valid;                       /* ... read without error */
    bool landed;                      /* the write's data is on the backend */
    uint64_t gen;                     /* ... at this flush generation */
    QTAILQ_ENTRY(H3100VEntry) next;
} H3100VEntry;

typedef struct H3100Namespace H3100Namespace;

/* How far a Dataset Management's deallocation has got */
typedef struct H3100DsmProgress {
    uint32_t nranges;                 /* ranges in req->buf */
    uint32_t range_idx;               /* range in progress */
    uint64_t range_done;              /* its bytes deallocated */
} H3100DsmProgress;

typedef struct H3100Req {
    H3100State *s;
    H3100Namespace *ns;               /* I/O: the command's namespace */
    H3100SQueue *sq;
    NvmeCmd cmd;
    NvmeCqe cqe;
    uint16_t status;
    QEMUSGList qsg;
    bool has_qsg;
    /* Compare's bounce; the old blocks a write overwrites (vcache) */
    QEMUIOVector iov;
    void *buf;
    BlockAIOCB *aiocb;
    int aio_left;                     /* outstanding block requests */
    bool io_done;
    bool fua;
    uint64_t done_ns;                 /* model time of the completion */
    uint64_t start_ns;                /* model time fetched (telemetry) */
    uint64_t seq;                     /* fetch order: ties of done_ns */
    uint64_t offset;                  /* bytes of the NVM (FTL) space */
    uint64_t bytes;
    /*
     * What one NVM opcode keeps while it runs, as Linux's struct
     * nvmet_req: read a member only for its opcode (h3100_req_is_write);
     * cleared when a command starts.
     */
    union {
        H3100DsmProgress dsm;         /* Dataset Management */
        struct {                      /* Write, Write Zeroes */
            H3100VEntry *vc_entry;    /* what it overwrites (vwc=on) */
        } write;
        struct {                      /* Flush */
            uint64_t vc_gen;          /* the writes it covers */
        } flush;
    } op;
    QTAILQ_ENTRY(H3100Req) entry;     /* SQ free/out list, CQ post list */
    QTAILQ_ENTRY(H3100Req) pend;      /* g->pending, ordered by done_ns */
    QTAILQ_ENTRY(H3100Req) ioentry;   /* g->inflight: block I/O out */
    QTAILQ_ENTRY(H3100Req) durable_entry; /* waiting for a flush */
    uint8_t durable_wait;             /* ... on durable_next or _batch */
    QTAILQ_ENTRY(H3100Req) retry_entry;   /* kept by werror=stop */
    QTAILQ_ENTRY(H3100Req) defer_entry;   /* write held while stopped */
    QTAILQ_ENTRY(H3100Req) held_entry;    /* held by a timeout fault */
    bool held;                        /* ... on s->held */
    bool held_abort_ignored;          /* ... and Abort leaves it there */
    bool parked;                      /* ... on s->retry */
    bool deferred;                    /* ... on s->deferred */
    bool in_flight;
    bool pending;
    bool posting;                     /* on its CQ's req_list */
} H3100Req;

/* requests linked by their pend entries (g->pending, a batch due) */
typedef QTAILQ_HEAD(H3100ReqList, H3100Req) H3100ReqList;

struct H3100SQueue {
    H3100State *s;
    H3100QGroup *g;                   /* its qid's group: s->qg[sqid] */
    uint16_t sqid;
    uint16_t cqid;
    uint32_t head;
    uint32_t tail;
    uint32_t size;
    uint64_t dma_addr;
    uint64_t db_addr;                 /* shadow doorbell, 0 if none */
    uint64_t ei_addr;                 /* event index */
    QEMUBH *bh;
    EventNotifier notifier;
    bool ioeventfd;
    bool deleting;                    /* Delete SQ waits for its I/O */
    H3100Req *del_req;                /* ... this Delete SQ command */
    H3100Req *reqs;
    QTAILQ_HEAD(, H3100Req) free_list;
    QTAILQ_HEAD(, H3100Req) out_list;
    QTAILQ_ENTRY(H3100SQueue) entry;  /* CQ's sq_list */
};

struct H3100CQueue {
    H3100State *s;
    uint16_t cqid;
    uint16_t vector;
    bool irq_enabled;
    bool phase;
    uint32_t head;
    uint32_t tail;
    uint32_t size;
    uint64_t dma_addr;
    uint64_t db_addr;
    uint64_t ei_addr;
    EventNotifier notifier;
    bool ioeventfd;
    QTAILQ_HEAD(, H3100Req) req_list;
    QTAILQ_HEAD(, H3100SQueue) sq_list;
    /* within one h3100_reqs_post_now() only (h3100-complete.c) */
    H3100CQueue *batch_next;
    bool batched;
    bool batch_irq;
};

/*
 * A queue group (h3100-qgroup.c): the queues one AioContext runs.  Group
 * 0 is the controller's (s->ctx), with the admin queue; the others are
 * iothread-vq-mapping's IOThreads.  A command waits for its time on its
 * SQ's group's lists, woken by that group's timer, in that context.
 */
struct H3100QGroup {
    H3100State *s;
    unsigned idx;
    AioContext *ctx;
    IOThread *iothread;               /* a reference, NULL for group 0 */
    QEMUBH *bh;                       /* h3100_group_bh */
    H3100ReqList pending;             /* I/O back, by done_ns then seq */
    QTAILQ_HEAD(, H3100Req) inflight; /* commands with block I/O out */
    H3100Timer *due_timer;            /* the next completion due */
    int64_t hold_step;                /* last renewal, ns */
    int64_t hold_last_rt;             /* ... at this host time */
};

/*
 * What a queue's bottom half is given: not the queue, which another
 * thread may free while the bottom half waits for s->lock.
 */
typedef struct H3100QRef {
    H3100State *s;
    uint16_t qid;
} H3100QRef;

typedef struct H3100Vector {
    H3100State *s;
    uint16_t idx;
    bool no_coalesce;                 /* Interrupt Vector Configuration CD */
    uint32_t count;                   /* entries since the last interrupt */
    H3100Timer *timer;                /* aggregation time */
} H3100Vector;

typedef struct H3100Features {
    uint32_t arbitration;
    uint32_t power_state;
    uint16_t temp_over;
    uint16_t temp_under;
    uint32_t err_rec;
    bool vwc;
    uint32_t int_coalescing;
    uint32_t aec;                     /* async event config */
    bool write_atomicity_normal;      /* DN: AWUN/NAWUN do not apply */
    uint64_t timestamp;               /* ms at ts_base */
    int64_t ts_base;
    uint32_t nq;                      /* as granted: NSQA | NCQA << 16 */
    uint32_t hctm;                    /* TMT1 << 16 | TMT2, 0 = off */
    uint16_t lsiri;                   /* LBA status report interval */
} H3100Features;

/*
 * The LBA Status Information log (0Eh) and its notice (h3100-io.c): the
 * generation counter (LSGC), and what the notice waits for.
 */
#define H3100_LSIPI                 10          /* 100 ms units: 1 s */

typedef struct H3100LbaStatus {
    uint16_t gen;                     /* LSGC */
    bool gen_new;                     /* LBAs tracked since the last read */
    bool alert_due;                   /* ... since the last notice */
    int64_t restart_ns;               /* virtual: LSIRI runs from here */
} H3100LbaStatus;

/* Device self-test (h3100-maint.c): the codes (STC) the drive runs ... */
#define H3100_DST_SHORT             1
#define H3100_DST_EXTENDED          2
/* ... and the Device Self-test log (06h): a header, then the results */
#define H3100_DST_RESULTS           20          /* kept, newest first */
#define H3100_DST_ENTRY_BYTES       28          /* one result */
#define H3100_DST_LOG_HDR           4
#define H3100_DST_LOG_BYTES         (H3100_DST_LOG_HDR + \
                                     H3100_DST_RESULTS * H3100_DST_ENTRY_BYTES)

typedef struct H3100SelfTest {
    uint8_t current;                  /* STC in progress, 0 = none */
    uint32_t nsid;
    int64_t start_ns;                 /* model time */
    int64_t end_ns;
    H3100Timer *timer;
    uint8_t results[H3100_DST_RESULTS][H3100_DST_ENTRY_BYTES];
    unsigned nresults;
} H3100SelfTest;

/* telemetry=FILE: one JSON line per interval of virtual time */
typedef struct H3100Telemetry {
    FILE *file;
    H3100Timer *timer;
    int64_t period_ns;
    H3100Health begin;                /* at the interval's start */
    H3100LatHist *window;             /* completions of the interval */
    H3100LatHist *run;                /* ... of the whole run (the CDF) */
    uint64_t reads, writes, bytes;
    Notifier exit;
} H3100Telemetry;

typedef struct H3100Sanitize {
    uint16_t sstat;
    uint16_t sprog;
    uint32_t scdw10;
    uint32_t etbe;                    /* estimated block erase time, s */
    bool active;
    bool zeroing;
    bool wait_io;                     /* erase done, writes still out */
    int64_t start_ns;
    int64_t end_ns;
    H3100Timer *timer;
} H3100Sanitize;

/*
 * Open streams (h3100-directive.c), least recently written first, each
 * with the model placement hint it holds.
 */
#define H3100_STREAMS_MAX           (H3100_MAX_STREAMS - 1)

typedef struct H3100Streams {
    bool enabled;
    uint16_t allocated;               /* namespace streams allocated */
    uint16_t open;
    uint16_t id[H3100_STREAMS_MAX];
    uint8_t hint[H3100_STREAMS_MAX];
} H3100Streams;

/*
 * What log CBh reports that the model does not keep: kelvin, mW; this
 * run's, and the lifetime ones (life_*, pon_min/max_k, fw_updates) that
 * state= files keep.  0 K: not seen yet.
 */
typedef struct H3100Extremes {
    uint32_t run_min_k;
    uint32_t run_max_k;
    uint32_t life_min_k;
    uint32_t life_max_k;
    uint32_t pon_k;                   /* at this start */
    uint32_t pon_min_k;               /* over every start */
    uint32_t pon_max_k;
    uint32_t power_min_mw;
    uint32_t power_max_mw;
    uint64_t power_sum_mw;            /* over power_samples health checks */
    uint64_t power_samples;
    uint32_t fw_updates;              /* firmware activations */
} H3100Extremes;

/* a Telemetry log page as taken (h3100-telemetry-log.c); NULL: none */
typedef struct H3100TelPage {
    uint8_t *buf;
    size_t len;
} H3100TelPage;

/* log pages 07h / 08h and the history they report */
typedef struct H3100TelLog {
    H3100TelReclaim reclaim[H3100_TEL_RECLAIMS];  /* rings */
    H3100TelThermal thermal[H3100_TEL_THERMAL];
    uint64_t reclaims;
    uint64_t thermal_changes;
    uint32_t level;                   /* throttle level last seen */
    bool read_only;                   /* last seen */
    H3100TelPage host;
    H3100TelPage ctrl;
    uint8_t host_gen;
    uint8_t ctrl_gen;
} H3100TelLog;

/* host and NAND bytes written at a point of model time */
typedef struct H3100WafSample {
    uint64_t ns;
    uint64_t host;
    uint64_t nand;
} H3100WafSample;

/*
 * A namespace (h3100-ns.c): a contiguous extent of the one FTL's LBA
 * space, at offsets aligned to H3100_NS_ALIGN.  Indexed by NSID.
 */
#define H3100_NS_ALIGN              (1 * MiB)

typedef enum H3100NsState {
    H3100_NS_FREE,                    /* NSID not allocated */
    H3100_NS_DETACHED,                /* allocated, not attached */
    H3100_NS_ATTACHED,                /* active */
    H3100_NS_DELETING,                /* its extent is being erased */
} H3100NsState;

typedef struct H3100NsJob H3100NsJob;

struct H3100Namespace {
    H3100NsState state;
    uint64_t base;                    /* bytes into the NVM space */
    uint64_t bytes;                   /* NSZE << lbads */
    uint32_t lbads;                   /* log2 of its LBA size */
    uint32_t gen;                     /* its creation number: its IDs */
    H3100NsJob *job;                  /* a format or delete erasing it */
};

typedef struct H3100Firmware {
    char slot[H3100_FW_SLOTS + 1][8]; /* [1..3]; empty = no image */
    uint8_t active;
    uint8_t next;                     /* activated at next reset, 0 none */
    uint8_t *image;
    uint32_t image_len;
} H3100Firmware;

struct H3100State {
    PCIDevice parent_obj;

    /* properties */
    BlockBackend *blk;
    char *model_name;
    char *capacity;
    char *form_factor;
    char *serial;
    uint64_t eui64;                   /* 0: derived from the serial */
    char *nguid_str;                  /* NULL: derived from the serial */
    int32_t bootindex;
    char *model_number;
    char *firmware;
    char *model_params;
    bool timing;
    uint32_t completion_window;       /* ns: posted with the first due */
    bool vwc_present;
    OnOffAuto write_cache;            /* the backend's, auto: -drive cache= */
    bool backend_wce;
    bool kill_safe;                   /* completed writes survive SIGKILL */
    BlockdevOnError rerror;           /* auto: the drive's */
    BlockdevOnError werror;
    IOThread *iothread;
    IOThreadVirtQueueMappingList *qmap;   /* iothread-vq-mapping */
    uint64_t seed;
    uint32_t max_ioqpairs;
    uint8_t mdts;
    uint32_t lba_size;
    char *state_path;                 /* state=FILE, NULL: not saved */
    uint32_t state_interval;          /* checkpoint period, s; 0 = none */
    bool state_reset;

    /* identity */
    H3100Config cfg;
    uint16_t subsys_id;
    char sn[21];
    char mn[41];
    uint8_t nguid[16];
    NvmeIdCtrl id_ctrl;

    /* PCI and registers */
    MemoryRegion bar0;
    MemoryRegion iomem;
    NvmeBar bar;
    uint32_t page_size;
    uint32_t page_bits;
    uint32_t max_prp_ents;
    uint32_t irq_status;              /* INTx: vectors with entries */

    /* contexts */
    QemuRecMutex lock;                /* guards the whole state */
    AioContext *ctx;
    H3100QGroup *groups;              /* [0]: s->ctx's */
    unsigned ngroups;
    H3100QGroup **qg;                 /* by qid, [0..max-ioqpairs] */
    H3100QRef *qref;                  /* ... the queues' bottom halves' */
    QEMUBH *irq_bh;                   /* main loop, with an IOThread */
    uint64_t irq_pending[H3100_IRQ_WORDS];  /* MSI-X vectors to notify */
    /* the VM is stopped: no new block I/O (h3100-runstate.c) */
    bool quiesced;
    VMChangeStateEntry *runstate_change;
    QTAILQ_HEAD(, H3100Req) deferred; /* writes to send when it runs */

    /* the drive */
    H3100Model *model;
    QemuMutex model_lock;
    int64_t time_base;                /* virtual ns at model time 0 */
    uint64_t model_last;
    uint64_t nvm_bytes;               /* TNVMCAP: the FTL's LBA space */
    H3100Namespace ns[H3100_NS_MAX + 1];  /* [1..NN] */
    uint64_t ns_changed;              /* log 04h: bit N = NSID N */
    uint32_t ns_gen;                  /* namespaces created (mod 2^32) */
    GArray *uncor;                    /* H3100Range, sorted, disjoint */
    H3100LbaStatus lsi;               /* ... as log 0Eh reports them */
    uint64_t media_errors;

    /* persistent state (h3100-state.c) */
    uint64_t power_on_base_ns;        /* earlier runs' power-on time */
    uint64_t power_cycles;
    uint64_t unsafe_shutdowns;
    GBytes *pstate_blob;              /* device part, until applied */
    bool pstate_clean;                /* saved clean at a shutdown */
    bool pstate_was_dirty;
    bool pstate_open;                 /* FILE in use: save at the end */
    QEMUTimer *pstate_timer;          /* checkpoints, main loop */
    pid_t pstate_child;               /* checkpoint being written */
    Notifier pstate_exit;
    bool pstate_incoming;             /* FILE is the source's until loaded */
    bool pstate_suspended;            /* ... or another QEMU's: no writes */
    bool pstate_checkpoint_due;       /* a takeover's, when the VM runs */

    /* migration (h3100-migrate.c, h3100-vmstate.c) */
    struct H3100MigRecv *mig_rx;      /* the model being received */
    H3100MigLoad mig_load;            /* how far a load has come */
    bool mig_ctrl_touched;            /* a load wrote the controller */
    GBytes *mig_runtime;              /* the controller's, being loaded */
    NotifierWithReturn mig_notifier;
    uint64_t mig_pages_sent;          /* bytes of map sent, this migration */
    uint64_t mig_rounds;
    uint64_t mig_last_ns;             /* the last round: host ns, bytes */
    uint64_t mig_last_bytes;

    /* queues */
    H3100SQueue **sq;
    H3100CQueue **cq;
    H3100Vector *vec;
    uint32_t nvec;
    uint64_t fetch_seq;               /* commands fetched */
    bool hold;                        /* virtual time waits for host I/O */
    bool vcpu_waits;                  /* ... with the vCPU stopped (-icount) */
    unsigned io_inflight;             /* I/O commands with block I/O out */
    /* completed writes survive QEMU's death (h3100-durable.c) */
    BlockDriverState *durable_top;    /* the top node last looked at */
    bool durable_keeps;               /* ... keeps writes in QEMU's memory */
    bool durable_flushing;
    uint64_t durable_flushes;
    QTAILQ_HEAD(, H3100Req) durable_next;  /* landed, wait for a flush */
    QTAILQ_HEAD(, H3100Req) durable_batch; /* ... for the one running */
    /* the shutdown notification (h3100-shutdown.c) */
    struct {
        H3100Timer *timer;            /* polls the clean checkpoint */
        bool pending;                 /* CC.SHN seen, SHST not 10b yet */
        bool done;                    /* SHST 10b: power may go */
        bool flush_inflight;
    } shutdown;

    /* the volatile write cache's journal (h3100-vcache.c) */
    QTAILQ_HEAD(, H3100VEntry) vcache;
    uint64_t vcache_bytes;
    uint64_t vcache_gen;              /* Flushes submitted */
    /* host I/O errors (h3100-blkerr.c) */
    QTAILQ_HEAD(, H3100Req) retry;    /* kept until the VM runs again */
    H3100Timer *idle_timer;
    unsigned idle_ticks;
    uint64_t dbbuf_dbs;
    uint64_t dbbuf_eis;
    bool dbbuf_enabled;
    bool stopping;                    /* reset in progress: no new I/O */
    bool exiting;                     /* the device goes away */
    unsigned unmaps;                  /* h3100_unmap()s running */
    unsigned unmaps_req;              /* ... of them for a command */
    QTAILQ_HEAD(, H3100Unmap) unmap_list;  /* ... every one of them */
    unsigned unmaps_busy;             /* ... of them taking a step */

    /* admin state */
    H3100Features feat;
    H3100Req *aer_reqs[H3100_AERL + 1];
    unsigned outstanding_aers;
    NvmeAerResult aer_queue[H3100_AER_QUEUE_MAX];
    unsigned aer_queued;
    uint8_t aer_mask;                 /* event types awaiting log read */
    uint8_t aer_mask_log[8];          /* ... the log that clears each */
    uint8_t smart_warn_sent;          /* critical warning bits reported */
    H3100WafSample waf_ring[H3100_WAF_RING];  /* oldest at waf_head */
    H3100Health tw_base;              /* log CAh's timed workload start */
    unsigned waf_head;
    unsigned waf_count;
    NvmeErrorLog errlog[H3100_ERRLOG_ENTRIES];
    uint64_t error_count;
    H3100Firmware fw;
    H3100SelfTest dst;
    H3100Sanitize san;
    H3100Streams streams;
    H3100TelLog tlog;
    H3100Extremes ext;
    H3100Telemetry tel;
    char *telemetry_path;
    uint32_t telemetry_ms;
    bool format_busy;
    H3100Req *format_wait;            /* Format waiting for I/O to land */
    /* faults on demand (h3100-fault.c) */
    H3100FaultTable faults;
    unsigned faults_armed;
    QTAILQ_HEAD(, H3100Req) held;     /* commands a timeout fault holds */
    bool fatal;                       /* a fatal fault: CSTS.CFS ... */
    uint32_t fatal_resets;            /* ... after this many more enables */
    H3100Timer *ready_timer;          /* a ready-delay fault's */
    uint64_t ready_at;                /* model time CSTS.RDY comes, or 0 */
    bool ready_never;                 /* ... never, until a reset */
    /* read-only faults armed: writes refused; with nsattr, NSATTR.WP */
    bool fault_ro, fault_ro_nsattr;
    uint8_t *faults_mig;              /* the table as text, in a stream */
    uint32_t faults_mig_len;
    /* a link-down fault: off the bus (h3100_link_update()) */
    bool link_down;                   /* atomic: read without s->lock */
    H3100Timer *link_timer;           /* its for= return */
    QEMUBH *link_bh;                  /* BAR0's overlay, in the main loop */
    MemoryRegion link_off;            /* over BAR0 while down: all-ones */
    bool aer;                         /* property: a PCIe AER capability */
    uint16_t lnkcap_lo;               /* Link Capabilities, bits 15:0 */
};

/* The most one command may transfer (MDTS), in bytes. */
static inline uint64_t h3100_mdts_bytes(const H3100State *s)
{
    return (uint64_t)s->page_size << s->mdts;
}

#endif
