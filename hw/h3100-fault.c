/*
 * DapuStor H3100 NVMe SSD: faults on demand
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The host arms a fault with `qom-set ID fault SPEC` (QMP or HMP), or
 * at start with -device ...,fault=SPEC; `faults` lists what is armed with
 * its counters; `fault-clear ID|all` disarms.  The specs, triggers and
 * table are the model library's (include/h3100/fault.h); this file
 * applies what fires to the command:
 *   timeout    the command does not run and never completes: it is held
 *              (s->held) until an Abort the fault honours, its queue's
 *              deletion, a reset or a power cut (h3100_fault_at_fetch())
 *   status     the command does not run: it completes with the status
 *              (h3100_fault_at_fetch())
 *   fatal      the command is lost and the controller fails (CSTS.CFS,
 *              a controller-initiated telemetry snapshot); it comes back
 *              after `resets` more enables, or never
 *              (h3100_fault_at_fetch(), h3100_fault_at_enable())
 *   ready-delay  CSTS.RDY comes ms after CC.EN, or never
 *              (h3100_fault_at_enable())
 *   aer        an asynchronous event, sent when armed
 *   warning    SMART critical warning bits, while armed, with the events
 *              the drive sends for them (h3100_fault_warning())
 *   delay      it runs, and completes ms later in the drive's time
 *              (h3100_fault_delay(), once its I/O is done)
 *   lost-irq   its completion is posted without an interrupt
 *              (h3100_fault_lost_irq(), as it is posted)
 *   read-only  the drive's worn-out read-only mode while armed: writes
 *              refused, SMART bits and their event; with nsattr=on also
 *              NSATTR.WP and a Namespace Attribute Changed notice, again
 *              when cleared (h3100_fault_ro_changed())
 *   ns-detach, ns-attach  another host moves a namespace, when armed:
 *              drive state from then on, as the guest's own attachment
 *              (h3100_ns_attach_by_host())
 *   link-down  the drive leaves the bus when armed, for= long or until
 *              cleared: config space and BAR0 read all-ones, writes are
 *              dropped, nothing is fetched, no DMA, no interrupt, and the
 *              completions of commands in flight are lost
 *              (h3100_link_update(); on return the controller is reset,
 *              as a DL_Down resets the function: h3100_link_return())
 *   media      rw=read: the LBAs become uncorrectable when armed, in the
 *              table Write Uncorrectable fills (s->uncor, flagged
 *              injected): drive state, not a fault of the table, until
 *              the LBAs are written, zeroed, deallocated, formatted or
 *              sanitized (h3100_fault_media_mark()); rw=write: a Write
 *              or Write Zeroes fails with Write Fault
 *              (h3100_fault_media_write(), once the model timed it)
 * Faults belong to the VM: a migration or savevm carries them, with
 * their counters and generators (h3100_vmstate_faults); a reset keeps
 * them; a power cut and fault-clear drop them.  The ranges media,rw=read
 * marks are the drive's: they migrate with its uncorrectable table and
 * stay in its state file.  The guest cannot reach any of this: only the
 * host sets the properties.
 * docs/guide/faults.md.
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "h3100.h"
#include "h3100-compat.h"
#include "h3100-core.h"
#include "h3100-cmd.h"
#include "h3100-mgmt.h"
#include "h3100-nvm.h"
#include "h3100-life.h"
#include "trace.h"

/* opc=NAME: the names of hw/tables/nvme-cmds.h */
#define H3100_FAULT_ADMIN_NAME(opcode, id, handler, name, eff, flags) \
    { name, true, opcode },
#define H3100_FAULT_IO_NAME(opcode, id, handler, name, eff, flags) \
    { name, false, opcode },
static const H3100FaultOpName h3100_fault_names[] = {
    H3100_ADMIN_COMMANDS(H3100_FAULT_ADMIN_NAME)
    H3100_IO_COMMANDS(H3100_FAULT_IO_NAME)
    { NULL },
};

/* @req as the faults see it: its queue, opcode, namespace and LBAs */
static H3100FaultCmd h3100_fault_cmd(H3100Req *req)
{
    H3100FaultCmd c = {
        .admin = !req->sq->sqid,
        .qid = req->sq->sqid,
        .opc = req->cmd.opcode,
        .nsid = le32_to_cpu(req->cmd.nsid),
    };

    switch (c.admin ? 0xff : c.opc) {
    case NVME_CMD_READ:
    case NVME_CMD_WRITE:
    case NVME_CMD_COMPARE:
    case NVME_CMD_WRITE_UNCOR:
    case NVME_CMD_WRITE_ZEROES:
        c.has_lba = true;
        c.slba = le32_to_cpu(req->cmd.cdw10) |
                 (uint64_t)le32_to_cpu(req->cmd.cdw11) << 32;
        c.nlb = (le32_to_cpu(req->cmd.cdw12) & 0xffff) + 1;
        break;
    }
    return c;
}

/* The first armed fault of @kind that fires on @req at model time @now */
static H3100Fault *h3100_fault_fires(H3100State *s, H3100Req *req,
                                     H3100FaultKind kind, uint64_t now)
{
    H3100FaultCmd c;
    int i;

    if (!s->faults_armed) {
        return NULL;                  /* the usual case: one test */
    }
    c = h3100_fault_cmd(req);
    i = h3100_fault_next(&s->faults, 0, kind, &c, now);
    if (i < 0) {
        return NULL;
    }
    trace_h3100_fault_fire(s->faults.f[i].id, h3100_fault_kind_name(kind),
                           req->sq->sqid, le16_to_cpu(req->cmd.cid),
                           c.opc);
    return &s->faults.f[i];
}

/*
 * A command just fetched: held (NVME_NO_COMPLETE), failed with a status,
 * or run (NVME_SUCCESS: nothing fired).  A held command has no block I/O:
 * no drain, Format or reset ever waits for it.
 */
static void h3100_fault_hold(H3100State *s, H3100Req *req,
                             bool abort_ignored)
{
    req->held = true;
    req->held_abort_ignored = abort_ignored;
    QTAILQ_INSERT_TAIL(&s->held, req, held_entry);
}

/* The controller fails: the firmware stops, the host sees CSTS.CFS. */
static void h3100_fault_fatal(H3100State *s, const H3100Fault *f)
{
    s->fatal = true;
    s->fatal_resets = f->spec.resets;
    stl_le_p(&s->bar.csts, ldl_le_p(&s->bar.csts) | NVME_CSTS_FAILED);
    h3100_tlog_fatal(s);
}

uint16_t h3100_fault_at_fetch(H3100State *s, H3100Req *req)
{
    H3100Fault *f;
    uint64_t now;

    if (!s->faults_armed) {
        return NVME_SUCCESS;
    }
    now = h3100_now(s);
    f = h3100_fault_fires(s, req, H3100_FAULT_TIMEOUT, now);
    if (f) {
        h3100_fault_hold(s, req, f->spec.abort_ignored);
        return NVME_NO_COMPLETE;
    }
    f = h3100_fault_fires(s, req, H3100_FAULT_FATAL, now);
    if (f) {
        h3100_fault_hold(s, req, true);   /* lost: a reset releases it */
        h3100_fault_fatal(s, f);
        return NVME_NO_COMPLETE;
    }
    f = h3100_fault_fires(s, req, H3100_FAULT_STATUS, now);
    if (!f) {
        return NVME_SUCCESS;
    }
    return f->spec.sc | (f->spec.more ? NVME_MORE : 0) |
           (f->spec.dnr ? NVME_DNR : 0);
}

/* @req leaves s->held: released (a reset, its queue deleted) or aborted */
void h3100_fault_unhold(H3100State *s, H3100Req *req)
{
    if (req->held) {
        QTAILQ_REMOVE(&s->held, req, held_entry);
        req->held = false;
        trace_h3100_fault_release(req->sq->sqid, le16_to_cpu(req->cmd.cid));
    }
}

/*
 * An Abort names held @req: true when the fault lets it go, and @req
 * completes as aborted; false when the fault ignores Aborts.
 */
bool h3100_fault_abort(H3100State *s, H3100Req *req)
{
    if (req->held_abort_ignored) {
        return false;
    }
    h3100_fault_unhold(s, req);
    req->status = NVME_CMD_ABORT_REQ;
    h3100_req_post_now(req, h3100_now(s));
    return true;
}

/* @req's I/O is done at model time @now: later, if a fault says so */
void h3100_fault_delay(H3100State *s, H3100Req *req, uint64_t now)
{
    H3100Fault *f = h3100_fault_fires(s, req, H3100_FAULT_DELAY, now);

    if (f) {
        req->done_ns = MAX(req->done_ns, now) +
                       (uint64_t)f->spec.ms * SCALE_MS;
    }
}

/* @req's completion is posted at model time @now: without its interrupt? */
bool h3100_fault_lost_irq(H3100State *s, H3100Req *req, uint64_t now)
{
    return h3100_fault_fires(s, req, H3100_FAULT_LOST_IRQ, now);
}

/* A Write or Write Zeroes the model has timed: a media fault fails it? */
uint16_t h3100_fault_media_write(H3100State *s, H3100Req *req)
{
    H3100Fault *f = h3100_fault_fires(s, req, H3100_FAULT_MEDIA,
                                      h3100_now(s));

    if (!f) {
        return NVME_SUCCESS;
    }
    return h3100_media_error(s, req, NVME_WRITE_FAULT, f->spec.dnr);
}

static void h3100_ready_timer_cb(void *opaque)
{
    H3100State *s = opaque;

    if (s->ready_at && NVME_CC_EN(ldl_le_p(&s->bar.cc))) {
        stl_le_p(&s->bar.csts, ldl_le_p(&s->bar.csts) | NVME_CSTS_READY);
        trace_h3100_fault_ready(s->ready_at);
    }
    s->ready_at = 0;
}

/*
 * The controller was enabled and its admin queue made: the CSTS bits it
 * shows now.  RDY, unless a fatal fault outlives this reset (RDY and
 * CFS) or a ready-delay fault holds RDY back.
 */
uint32_t h3100_fault_at_enable(H3100State *s)
{
    H3100Fault *f;
    int i;

    if (s->fatal && !s->fatal_resets) {
        s->fatal = false;             /* this reset cured it */
    } else if (s->fatal) {
        if (s->fatal_resets != H3100_FAULT_RESETS_NEVER) {
            s->fatal_resets--;
        }
        return NVME_CSTS_READY | NVME_CSTS_FAILED;
    }
    if (!s->faults_armed) {
        return NVME_CSTS_READY;
    }
    i = h3100_fault_next(&s->faults, 0, H3100_FAULT_READY_DELAY, NULL,
                         h3100_now(s));
    if (i < 0) {
        return NVME_CSTS_READY;
    }
    f = &s->faults.f[i];
    trace_h3100_fault_fire(f->id, "ready-delay", 0, 0, 0);
    if (f->spec.never) {
        s->ready_never = true;
        return 0;
    }
    s->ready_at = h3100_now(s) + (uint64_t)f->spec.ms * SCALE_MS;
    h3100_timer_mod(s->ready_timer, h3100_virt_ns(s, s->ready_at));
    return 0;
}

/*
 * The SMART critical warning bits armed faults add: a warning's, and a
 * read-only's as the worn-out drive shows them (reliability, read-only)
 */
uint8_t h3100_fault_warning(H3100State *s)
{
    uint8_t bits = 0;

    for (int i = 0; s->faults_armed && i < H3100_FAULT_MAX; i++) {
        if (s->faults.f[i].id &&
            s->faults.f[i].spec.kind == H3100_FAULT_WARNING) {
            bits |= s->faults.f[i].spec.warn_bits;
        }
    }
    if (s->fault_ro) {
        bits |= NVME_SMART_RELIABILITY | NVME_SMART_MEDIA_READ_ONLY;
    }
    return bits;
}

/* aer and warning act when armed: the event now, the warning's events */
static void h3100_fault_fire_now(H3100State *s, H3100FaultKind kind)
{
    int i = h3100_fault_next(&s->faults, 0, kind, NULL, h3100_now(s));
    H3100Fault *f;

    if (i < 0) {
        return;
    }
    f = &s->faults.f[i];
    trace_h3100_fault_fire(f->id, h3100_fault_kind_name(kind), 0, 0, 0);
    if (kind == H3100_FAULT_AER) {
        h3100_aer_enqueue(s, f->spec.aer_type, f->spec.aer_info,
                          f->spec.aer_log);
    } else if (kind == H3100_FAULT_LINK_DOWN) {
        /* down already: h3100_faults_changed(); this counts it fired */
    } else {
        h3100_health_check(s);
    }
}

static bool h3100_fault_moves_ns(H3100FaultKind kind)
{
    return kind == H3100_FAULT_NS_DETACH || kind == H3100_FAULT_NS_ATTACH;
}

/*
 * ns-detach, ns-attach: another host moves the namespace, before the
 * table records the fault (a refusal leaves everything as it was), if
 * the table has room for it.
 */
static bool h3100_fault_move_ns(H3100State *s, const H3100FaultSpec *spec,
                                Error **errp)
{
    if (h3100_fault_armed(&s->faults) >= H3100_FAULT_MAX) {
        error_setg(errp, "fault: %d faults armed already (fault-clear)",
                   H3100_FAULT_MAX);
        return false;
    }
    return h3100_ns_attach_by_host(s, spec->nsid,
                                   spec->kind == H3100_FAULT_NS_ATTACH, errp);
}

/* ... and the fault, armed, shows it fired: it matches no command */
static void h3100_fault_moved_ns(H3100State *s, uint32_t id)
{
    for (int i = 0; i < H3100_FAULT_MAX; i++) {
        H3100Fault *f = &s->faults.f[i];

        if (f->id == id) {
            f->matched++;
            f->fired++;
            trace_h3100_fault_fire(id, h3100_fault_kind_name(f->spec.kind),
                                   0, 0, 0);
        }
    }
}

/* A controller reset: RDY waits for no fault any more. */
void h3100_fault_reset(H3100State *s)
{
    h3100_timer_del(s->ready_timer);
    s->ready_at = 0;
    s->ready_never = false;
}

/* ---- link-down ----------------------------------------------------------- */

/*
 * The model time the link comes back, from the armed link-down faults:
 * 0 when it is up, UINT64_MAX when only their clearing (fault-clear, a
 * power cut) brings it back.  The table is the one record of it: a
 * migration carries the faults with their arming times, and the link
 * comes back at the same model time on the other side.
 */
static uint64_t h3100_link_back_ns(H3100State *s, uint64_t now)
{
    uint64_t back = 0;

    for (int i = 0; s->faults_armed && i < H3100_FAULT_MAX; i++) {
        const H3100Fault *f = &s->faults.f[i];
        uint64_t end = UINT64_MAX;

        if (!f->id || f->spec.kind != H3100_FAULT_LINK_DOWN) {
            continue;
        }
        if (f->spec.for_ns && f->spec.for_ns <= UINT64_MAX - f->armed_ns) {
            end = f->armed_ns + f->spec.for_ns;
        }
        if (now < end) {
            back = MAX(back, end);
        }
    }
    return back;
}

/*
 * BAR0's overlay and the INTx pin follow the link, under the BQL: the
 * memory map and the PCI bus are the main loop's.  PCIe deasserts a
 * function's virtual INTx wires when its link goes down.
 */
static void h3100_link_bar_update(H3100State *s)
{
    memory_region_set_enabled(&s->link_off, h3100_off_bus(s));
    h3100_intx_update(s);
}

/*
 * The link is back.  A link down for long enough for the host to see it
 * is a DL_Down, which resets the function: the controller comes back
 * disabled (CC 0, CSTS 0, no queues), as after CC.EN 1 -> 0.  Were it to
 * go on as it was, it would fetch from and post into queues the host has
 * long freed (Linux 6.12 then crashes polling a CQ in nvme_remove).
 * Config space, the BARs and MSI-X are kept, so the host's reset finds
 * the drive where it left it.  The reset drains the block layer, so it
 * runs in the main loop with no lock held, the link still down: what
 * completes meanwhile is lost, as the link was.
 */
static void h3100_link_return(H3100State *s)
{
    h3100_ctrl_reset(s);
    stl_le_p(&s->bar.cc, 0);
    qatomic_set(&s->link_down, false);
    trace_h3100_fault_link(false, 0);
}

static void h3100_link_bh(void *opaque)
{
    H3100State *s = opaque;

    if (h3100_off_bus(s) && !h3100_link_back_ns(s, h3100_now(s))) {
        h3100_link_return(s);
    }
    h3100_link_bar_update(s);
}

/* The link as the table says now: down, up, and when it comes back */
static void h3100_link_update(H3100State *s)
{
    uint64_t back;
    bool down;

    if (!s->link_timer) {
        return;                       /* -device: the drive is not built */
    }
    back = h3100_link_back_ns(s, h3100_now(s));
    down = back != 0;
    if (down && back != UINT64_MAX) {
        h3100_timer_mod(s->link_timer, h3100_virt_ns(s, back));
    } else {
        h3100_timer_del(s->link_timer);
    }
    if (down == h3100_off_bus(s)) {
        return;
    }
    if (!down) {
        /* callers hold the device's lock: the return resets the drive */
        qemu_bh_schedule(s->link_bh);
        return;
    }
    qatomic_set(&s->link_down, true);
    trace_h3100_fault_link(true, back);
    if (bql_locked()) {
        h3100_link_bar_update(s);
    } else {
        qemu_bh_schedule(s->link_bh); /* an IOThread's context */
    }
}

static void h3100_link_timer_cb(void *opaque)
{
    h3100_link_update(opaque);
}

/*
 * @req completes while the link is down: its completion is lost (no CQE,
 * no interrupt), and it lets go of all it holds, as if posted.
 */
bool h3100_fault_link_lost(H3100State *s, H3100Req *req)
{
    if (!h3100_off_bus(s)) {
        return false;
    }
    trace_h3100_fault_lost(req->sq->sqid, le16_to_cpu(req->cmd.cid));
    h3100_req_release(req);
    return true;
}

/* While down, BAR0 (registers, doorbells, MSI-X table and PBA) */
static uint64_t h3100_link_off_read(void *opaque, hwaddr addr, unsigned size)
{
    return MAKE_64BIT_MASK(0, size * 8);
}

static void h3100_link_off_write(void *opaque, hwaddr addr, uint64_t data,
                                 unsigned size)
{
}

static const MemoryRegionOps h3100_link_off_ops = {
    .read = h3100_link_off_read,
    .write = h3100_link_off_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

/*
 * An overlay over all of BAR0, enabled while the link is down: one
 * switch covers the MSI-X table and PBA, which are QEMU's regions.
 */
void h3100_link_init(H3100State *s)
{
    memory_region_init_io(&s->link_off, OBJECT(s), &h3100_link_off_ops, s,
                          "dapustor-h3100-link-down", H3100_BAR0_SIZE);
    memory_region_set_enabled(&s->link_off, false);
    memory_region_add_subregion_overlap(&s->bar0, 0, &s->link_off, 1);
}

void h3100_link_exit(H3100State *s)
{
    memory_region_del_subregion(&s->bar0, &s->link_off);
}

/* ---- the properties ---------------------------------------------------- */

/* media,rw=read's namespace: the one ns= names, 1 if it names none */
static uint32_t h3100_fault_media_nsid(const H3100FaultSpec *spec)
{
    return spec->nsid ? spec->nsid : 1;
}

/* @spec's LBAs lie in its namespace (rw=write: when it names one) */
static H3100Namespace *h3100_fault_media_ns(H3100State *s,
                                            const H3100FaultSpec *spec,
                                            Error **errp)
{
    uint32_t nsid = h3100_fault_media_nsid(spec);
    H3100Namespace *ns = h3100_ns_active(s, nsid);
    uint64_t nlbas;

    if (!ns) {
        error_setg(errp, "fault: media: namespace %" PRIu32 " is not "
                   "attached", nsid);
        return NULL;
    }
    nlbas = ns->bytes >> ns->lbads;
    if (spec->elba >= nlbas) {
        error_setg(errp, "fault: media: lba=%" PRIu64 "-%" PRIu64 " is "
                   "beyond namespace %" PRIu32 "'s %" PRIu64 " LBAs",
                   spec->slba, spec->elba, nsid, nlbas);
        return NULL;
    }
    return ns;
}

/*
 * media,rw=read: the LBAs become uncorrectable now, as if the NAND under
 * them had gone: the drive's own state from here on (the state file
 * keeps them), with the flags that make its reads fail as asked.
 */
static bool h3100_fault_media_mark(H3100State *s, const H3100FaultSpec *spec,
                                   Error **errp)
{
    H3100Namespace *ns = h3100_fault_media_ns(s, spec, errp);
    uint8_t flags = H3100_UNCOR_INJECTED | (spec->dnr ? H3100_UNCOR_DNR : 0);

    if (!ns) {
        return false;
    }
    if (!h3100_uncor_add(s, ns->base + (spec->slba << ns->lbads),
                         ns->base + ((spec->elba + 1) << ns->lbads), flags)) {
        error_setg(errp, "fault: media: the table of %u uncorrectable "
                   "ranges is full", H3100_UNCOR_MAX);
        return false;
    }
    return true;
}

/*
 * The injected ranges still standing, as the specs that would mark them
 * again, one line each after the armed faults, "-" for their id: they
 * are the drive's, not the table's, and go when the LBAs are rewritten.
 */
static void h3100_fault_list_media(H3100State *s, GString *g)
{
    for (uint32_t nsid = 1; nsid <= H3100_NS_MAX; nsid++) {
        H3100Namespace *ns = h3100_ns_active(s, nsid);

        for (guint i = 0; ns && i < s->uncor->len; i++) {
            H3100Range *r = &g_array_index(s->uncor, H3100Range, i);

            if (!(r->flags & H3100_UNCOR_INJECTED) ||
                r->end <= ns->base || r->start >= ns->base + ns->bytes) {
                continue;
            }
            g_string_append_printf(g, "%s- media,rw=read,ns=%" PRIu32
                                   ",lba=%" PRIu64 "-%" PRIu64 ",dnr=%s",
                                   g->len ? "\n" : "", nsid,
                                   (MAX(r->start, ns->base) - ns->base) >>
                                   ns->lbads,
                                   (MIN(r->end, ns->base + ns->bytes) -
                                    ns->base - 1) >> ns->lbads,
                                   r->flags & H3100_UNCOR_DNR ? "on" : "off");
        }
    }
}

static void h3100_faults_changed(H3100State *s)
{
    s->faults_armed = h3100_fault_armed(&s->faults);
    s->fault_ro = false;
    s->fault_ro_nsattr = false;
    for (int i = 0; s->faults_armed && i < H3100_FAULT_MAX; i++) {
        const H3100Fault *f = &s->faults.f[i];

        if (f->id && f->spec.kind == H3100_FAULT_READ_ONLY) {
            s->fault_ro = true;
            s->fault_ro_nsattr |= f->spec.nsattr;
        }
    }
    h3100_link_update(s);
}

/*
 * NSATTR.WP came or went with a read-only fault: every attached
 * namespace's attributes changed, so a host rescans (Linux: set_disk_ro).
 */
static void h3100_fault_ro_changed(H3100State *s, bool was_ro,
                                   bool was_nsattr)
{
    if (was_ro && !s->fault_ro) {
        h3100_health_check(s);        /* its warning is no longer sent */
    }
    if (s->fault_ro_nsattr == was_nsattr) {
        return;
    }
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        if (h3100_ns_active(s, i)) {
            h3100_ns_changed(s, i);
        }
    }
}

/* A power cut: what was armed goes with the power. */
void h3100_faults_drop(H3100State *s)
{
    h3100_lock(s);
    h3100_fault_clear(&s->faults, "all", NULL);
    h3100_faults_changed(s);
    s->fatal = false;
    h3100_unlock(s);
    trace_h3100_fault_clear(0);
}

/* Before realize builds anything: what -device armed fits the drive. */
/* @spec fits this drive: a delay needs the drive's time to add to */
static bool h3100_fault_fits(H3100State *s, const H3100FaultSpec *spec,
                             Error **errp)
{
    if (spec->kind == H3100_FAULT_DELAY && !s->timing) {
        error_setg(errp, "fault: delay needs timing=on (the drive's time)");
        return false;
    }
    return true;
}

bool h3100_faults_check(H3100State *s, Error **errp)
{
    for (int i = 0; i < H3100_FAULT_MAX; i++) {
        if (s->faults.f[i].id &&
            !h3100_fault_fits(s, &s->faults.f[i].spec, errp)) {
            return false;
        }
    }
    return true;
}

/* The table is the device's once it runs: its lock (before: nobody's) */
static void h3100_faults_lock(H3100State *s)
{
    if (s->model) {
        h3100_lock(s);
    }
}

static void h3100_faults_unlock(H3100State *s)
{
    if (s->model) {
        h3100_unlock(s);
    }
}

/* At realize: what -device armed counts its time from now, on the seed. */
void h3100_faults_realize(H3100State *s)
{
    QTAILQ_INIT(&s->held);
    s->ready_timer = h3100_timer_new(s, h3100_ready_timer_cb, s);
    s->link_timer = h3100_timer_new(s, h3100_link_timer_cb, s);
    s->link_bh = qemu_bh_new(h3100_link_bh, s);
    h3100_fault_reseed(&s->faults, s->seed);
}

void h3100_faults_free(H3100State *s)
{
    h3100_timer_free(&s->ready_timer);
    h3100_timer_free(&s->link_timer);
    g_clear_pointer(&s->link_bh, qemu_bh_delete);
    g_clear_pointer(&s->faults_mig, g_free);
}

/*
 * A media fault: rw=read marks its LBAs, and is not kept as a fault;
 * rw=write is armed as the other kinds are, once its LBAs fit.
 */
static void h3100_fault_media_set(H3100State *s, const H3100FaultSpec *spec,
                                  Error **errp)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *canon = h3100_fault_spec_str(spec);
    uint32_t id = 0;
    bool ok;

    h3100_faults_lock(s);
    if (!spec->write) {
        ok = h3100_fault_media_mark(s, spec, errp);
    } else if (s->model && spec->nsid &&
               !h3100_fault_media_ns(s, spec, errp)) {
        ok = false;
    } else {
        id = h3100_fault_arm(&s->faults, spec, s->model ? h3100_now(s) : 0,
                             s->seed, &err);
        h3100_faults_changed(s);
        ok = id;
        if (!ok) {
            error_setg(errp, "%s", err->message);
        }
    }
    h3100_faults_unlock(s);
    if (ok) {
        trace_h3100_fault_arm(id, canon);
    }
}

/*
 * Kinds that do something the moment they are armed: on a running drive,
 * the fault fires then (h3100_fault_fire_now()).
 */
static bool h3100_fault_acts_when_armed(H3100FaultKind kind)
{
    return kind == H3100_FAULT_AER || kind == H3100_FAULT_WARNING ||
           kind == H3100_FAULT_READ_ONLY || kind == H3100_FAULT_LINK_DOWN;
}

/*
 * Faults that act on the drive when armed and make no sense before it is
 * built: refused on the -device line.  warning and read-only are state
 * the drive reads, so they may wait for it.
 */
static bool h3100_fault_needs_drive(const H3100FaultSpec *spec)
{
    return spec->kind == H3100_FAULT_AER ||
           spec->kind == H3100_FAULT_LINK_DOWN ||
           h3100_fault_moves_ns(spec->kind) ||
           (spec->kind == H3100_FAULT_MEDIA && !spec->write);
}

static void h3100_fault_set(Object *obj, const char *value, Error **errp)
{
    H3100State *s = DAPUSTOR_H3100(obj);
    g_autoptr(GError) err = NULL;
    g_autofree char *canon = NULL;
    H3100FaultSpec spec;
    bool was_ro, was_nsattr;
    uint32_t id;

    if (!h3100_fault_parse(value, h3100_fault_names, &spec, &err)) {
        error_setg(errp, "%s", err->message);
        return;
    }
    if (!h3100_fault_fits(s, &spec, errp)) {
        return;
    }
    if (h3100_fault_needs_drive(&spec) && !s->model) {
        error_setg(errp, "fault: %s acts when armed: arm it with "
                   "qom-set on a running drive",
                   spec.kind == H3100_FAULT_MEDIA ? "media,rw=read" :
                   h3100_fault_kind_name(spec.kind));
        return;
    }
    if (spec.kind == H3100_FAULT_MEDIA) {
        h3100_fault_media_set(s, &spec, errp);
        return;
    }
    h3100_faults_lock(s);
    if (h3100_fault_moves_ns(spec.kind) &&
        !h3100_fault_move_ns(s, &spec, errp)) {
        h3100_faults_unlock(s);
        return;
    }
    was_ro = s->fault_ro;
    was_nsattr = s->fault_ro_nsattr;
    id = h3100_fault_arm(&s->faults, &spec, s->model ? h3100_now(s) : 0,
                         s->seed, &err);
    h3100_faults_changed(s);
    if (id && s->model && h3100_fault_acts_when_armed(spec.kind)) {
        h3100_fault_fire_now(s, spec.kind);
    }
    if (id && h3100_fault_moves_ns(spec.kind)) {
        h3100_fault_moved_ns(s, id);
    }
    if (s->model) {
        h3100_fault_ro_changed(s, was_ro, was_nsattr);
    }
    h3100_faults_unlock(s);
    if (!id) {
        error_setg(errp, "%s", err->message);
        return;
    }
    canon = h3100_fault_spec_str(&spec);
    trace_h3100_fault_arm(id, canon);
}

static char *h3100_faults_get(Object *obj, Error **errp)
{
    H3100State *s = DAPUSTOR_H3100(obj);
    char *list;
    GString *g;

    h3100_faults_lock(s);
    list = h3100_fault_list(&s->faults);
    g = g_string_new(list);
    g_free(list);
    if (s->model) {
        h3100_fault_list_media(s, g);
    }
    h3100_faults_unlock(s);
    return g_string_free(g, false);
}

static void h3100_fault_clear_set(Object *obj, const char *value,
                                  Error **errp)
{
    H3100State *s = DAPUSTOR_H3100(obj);
    g_autoptr(GError) err = NULL;
    bool ok, was_ro, was_nsattr;

    h3100_faults_lock(s);
    was_ro = s->fault_ro;
    was_nsattr = s->fault_ro_nsattr;
    ok = h3100_fault_clear(&s->faults, value, &err);
    h3100_faults_changed(s);
    if (s->model) {
        h3100_fault_ro_changed(s, was_ro, was_nsattr);
    }
    h3100_faults_unlock(s);
    if (!ok) {
        error_setg(errp, "%s", err->message);
        return;
    }
    trace_h3100_fault_clear(strcmp(value, "all") ? atoi(value) : 0);
}

static char *h3100_fault_write_only(Object *obj, Error **errp)
{
    return g_strdup("");
}

void h3100_fault_class_init(ObjectClass *oc)
{
    object_class_property_add_str(oc, "fault", h3100_fault_write_only,
                                  h3100_fault_set);
    object_class_property_set_description(oc, "fault",
        "arm a fault: KIND[,key=value]... (docs/guide/faults.md)");
    object_class_property_add_str(oc, "faults", h3100_faults_get, NULL);
    object_class_property_set_description(oc, "faults",
        "the armed faults and their counters");
    object_class_property_add_str(oc, "fault-clear", h3100_fault_write_only,
                                  h3100_fault_clear_set);
    object_class_property_set_description(oc, "fault-clear",
        "disarm a fault: its id, or 'all'");
}

/* ---- migration ---------------------------------------------------------- */

/* the table as text: at most a spec and six numbers a fault */
#define H3100_FAULT_MIG_MAX (H3100_FAULT_MAX * (H3100_FAULT_SPEC_MAX + 128))

static bool h3100_faults_needed(void *opaque)
{
    H3100State *s = opaque;

    return s->faults_armed || s->fatal || s->ready_at || s->ready_never;
}

static int h3100_faults_pre_save(void *opaque)
{
    H3100State *s = opaque;

    g_free(s->faults_mig);
    s->faults_mig = (uint8_t *)h3100_fault_save(&s->faults);
    s->faults_mig_len = strlen((char *)s->faults_mig) + 1;
    return 0;
}

static H3100_POST_SAVE_RET h3100_faults_post_save(void *opaque)
{
    H3100State *s = opaque;

    g_clear_pointer(&s->faults_mig, g_free);
    return H3100_POST_SAVE_OK;
}

/* The stream's length, before QEMU allocates it */
static bool h3100_faults_len_ok(void *opaque, int version_id)
{
    H3100State *s = opaque;

    return s->faults_mig_len && s->faults_mig_len <= H3100_FAULT_MIG_MAX;
}

static int h3100_faults_post_load(void *opaque, int version_id)
{
    H3100State *s = opaque;
    g_autoptr(GError) err = NULL;
    char *text = (char *)s->faults_mig;
    bool ok;

    ok = text && memchr(text, '\0', s->faults_mig_len) ==
                 text + s->faults_mig_len - 1 &&
         h3100_fault_load(&s->faults, text, h3100_fault_names, &err);
    g_clear_pointer(&s->faults_mig, g_free);
    if (!ok) {
        error_report("%s: migration: %s", TYPE_DAPUSTOR_H3100,
                     err ? err->message : "faults: the table is not one");
        return -EINVAL;
    }
    h3100_faults_changed(s);
    if (s->ready_at) {
        h3100_timer_mod(s->ready_timer, h3100_virt_ns(s, s->ready_at));
    }
    return 0;
}

const VMStateDescription h3100_vmstate_faults = {
    .name = "dapustor-h3100/faults",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = h3100_faults_needed,
    .pre_save = h3100_faults_pre_save,
    .post_save = h3100_faults_post_save,
    .post_load = h3100_faults_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(faults_mig_len, H3100State),
        VMSTATE_VALIDATE("faults' length", h3100_faults_len_ok),
        VMSTATE_VBUFFER_ALLOC_UINT32(faults_mig, H3100State, 0, NULL,
                                     faults_mig_len),
        VMSTATE_BOOL(fatal, H3100State),
        VMSTATE_UINT32(fatal_resets, H3100State),
        VMSTATE_UINT64(ready_at, H3100State),
        VMSTATE_BOOL(ready_never, H3100State),
        VMSTATE_END_OF_LIST()
    },
};

/* Before a load: the stream says what is armed (nothing, without it). */
void h3100_faults_pre_load(H3100State *s)
{
    h3100_fault_clear(&s->faults, "all", NULL);
    h3100_faults_changed(s);
    s->fatal = false;
    h3100_fault_reset(s);
}
