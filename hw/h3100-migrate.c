/*
 * DapuStor H3100 NVMe SSD: the drive model in the migration stream
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The model travels in a live section of its own,
 * "<PCI address>/dapustor-h3100-model", ahead of the controller's
 * vmstate (h3100-vmstate.c): its map pages go while the guest runs,
 * round after round, each round the pages the drive changed since
 * (include/h3100/migrate.h), and its core once the VM has stopped, so
 * the device adds the last round's pages and the core to the downtime,
 * not the map.  savevm, `migrate file:` and snapshot-save write the same
 * section.
 *
 * Records (QEMU's byte order: big-endian):
 *   IDENTITY  u32 length, "key=value" lines: what makes this drive this
 *             drive (h3100_mig_identity); the first record of a stream
 *   PAGE      u8 kind, u64 index, u8 fill, 4096 bytes unless fill
 *   CORE      u32 length, the core; the last section's last record
 *   EOS       the end of a section
 *
 * A destination whose drive differs (another model, capacity, LBA size,
 * queue count, model parameter, or an explicit serial of its own)
 * refuses the stream at its first record with one line, before it
 * touches its own drive; the source then goes on running.
 *
 * The state file (state=FILE) is written by one QEMU at a time.  The
 * source stops writing it once the VM has stopped for the last round
 * (a checkpoint still being written is abandoned: the file stays as the
 * last one left it), and takes it back if the migration fails.  The
 * destination takes it over once the state has loaded: it writes a
 * checkpoint at once and from then on as any running drive.  loadvm
 * writes no state while it loads, then a checkpoint of the drive as the
 * snapshot had it: the file follows the VM's disks back in time.
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "migration/qemu-file-types.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "h3100/migrate.h"
#include "h3100.h"
#include "h3100-compat.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
#include "h3100-life.h"
#include "trace.h"

#define H3100_MIG_SECTION       "dapustor-h3100-model"
#define H3100_MIG_VERSION       1
#define H3100_REC_IDENTITY      1
#define H3100_REC_PAGE          2
#define H3100_REC_CORE          3
#define H3100_REC_EOS           4
#define H3100_MIG_BATCH         64      /* pages copied per lock hold */
#define H3100_MIG_ROUND_BYTES   (32 * MiB)  /* per iterate call */
#define H3100_MIG_IDENTITY_MAX  (64 * KiB)
#define H3100_MIG_CORE_MAX      (1 * GiB)

/* ---- identity ---------------------------------------------------------- */

/*
 * What a destination must agree with: the profile and every model
 * parameter, and the properties the guest sees.  The serial (and what
 * follows from it) travels with the drive.
 */
static char *h3100_mig_identity(H3100State *s)
{
    g_autofree char *params = h3100_config_to_string(&s->cfg);

    return g_strdup_printf("profile=%s\nparams=%s\ntiming=%u\n"
                           "lba-size=%u\nmax-ioqpairs=%u\nmdts=%u\nvwc=%u\n"
                           "form-factor=%s\nserial=%s\n",
                           s->cfg.profile, params, s->timing, s->lba_size,
                           s->max_ioqpairs, s->mdts, s->vwc_present,
                           s->form_factor ? s->form_factor : "u2", s->sn);
}

static const char *h3100_mig_value(GHashTable *t, const char *key)
{
    const char *v = g_hash_table_lookup(t, key);

    return v ? v : "(none)";
}

/* NULL if the stream's drive is this one, else what differs (g_free). */
static char *h3100_mig_identity_diff(H3100State *s, const char *text)
{
    g_autoptr(GHashTable) there = g_hash_table_new_full(g_str_hash,
                                                        g_str_equal, g_free,
                                                        g_free);
    g_autoptr(GHashTable) here = g_hash_table_new_full(g_str_hash,
                                                       g_str_equal, g_free,
                                                       g_free);
    g_autofree char *mine = h3100_mig_identity(s);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_auto(GStrv) own = g_strsplit(mine, "\n", -1);
    static const char *const keys[] = {
        "timing", "lba-size", "max-ioqpairs", "mdts", "vwc", "form-factor",
    };
    g_autoptr(GError) gerr = NULL;
    H3100Config cfg;
    char *diff;

    for (char **l = lines; *l; l++) {
        char *eq = strchr(*l, '=');

        if (eq) {
            g_hash_table_replace(there, g_strndup(*l, eq - *l),
                                 g_strdup(eq + 1));
        }
    }
    for (char **l = own; *l; l++) {
        char *eq = strchr(*l, '=');

        if (eq) {
            g_hash_table_replace(here, g_strndup(*l, eq - *l),
                                 g_strdup(eq + 1));
        }
    }
    if (!h3100_profile_load(&cfg, h3100_mig_value(there, "profile"), &gerr) ||
        !h3100_config_apply(&cfg, h3100_mig_value(there, "params"), &gerr)) {
        return g_strdup_printf("its model is unknown here (%s)",
                               gerr->message);
    }
    diff = h3100_config_diff(&s->cfg, &cfg);
    if (diff) {
        return diff;
    }
    for (unsigned i = 0; i < ARRAY_SIZE(keys); i++) {
        const char *a = h3100_mig_value(here, keys[i]);
        const char *b = h3100_mig_value(there, keys[i]);

        if (strcmp(a, b)) {
            return g_strdup_printf("%s=%s here, %s there", keys[i], a, b);
        }
    }
    if (s->serial && strcmp(s->serial, h3100_mig_value(there, "serial"))) {
        return g_strdup_printf("serial=%s here, %s there", s->serial,
                               h3100_mig_value(there, "serial"));
    }
    return NULL;
}

/* ---- the source -------------------------------------------------------- */

static void h3100_mig_put_identity(QEMUFile *f, H3100State *s)
{
    g_autofree char *id = h3100_mig_identity(s);

    qemu_put_byte(f, H3100_REC_IDENTITY);
    qemu_put_be32(f, strlen(id));
    qemu_put_buffer(f, (const uint8_t *)id, strlen(id));
}

static void h3100_mig_put_page(QEMUFile *f, const H3100MigItem *it)
{
    qemu_put_byte(f, H3100_REC_PAGE);
    qemu_put_byte(f, it->kind);
    qemu_put_be64(f, it->index);
    qemu_put_byte(f, it->fill);
    if (!it->fill) {
        qemu_put_buffer(f, it->data, H3100_MIG_PAGE_BYTES);
    }
}

/* Up to @budget bytes of due pages; the bytes sent. */
static uint64_t h3100_mig_send(QEMUFile *f, H3100State *s, uint64_t budget)
{
    g_autofree H3100MigItem *items = g_new(H3100MigItem, H3100_MIG_BATCH);
    uint64_t sent = 0;
    unsigned n;

    do {
        qemu_mutex_lock(&s->model_lock);
        for (n = 0; n < H3100_MIG_BATCH && h3100_mig_next(s->model,
                                                          &items[n]); n++) {
            /* copied under the lock, written outside it */
        }
        qemu_mutex_unlock(&s->model_lock);
        for (unsigned i = 0; i < n; i++) {
            h3100_mig_put_page(f, &items[i]);
            sent += items[i].fill ? 11 : 11 + H3100_MIG_PAGE_BYTES;
        }
    } while (n == H3100_MIG_BATCH && sent < budget);
    s->mig_pages_sent += sent;
    return sent;
}

static uint64_t h3100_mig_due(H3100State *s)
{
    uint64_t due;

    qemu_mutex_lock(&s->model_lock);
    due = h3100_mig_pending(s->model);
    qemu_mutex_unlock(&s->model_lock);
    return due;
}

/* Commands kept by werror=stop cannot travel (h3100-vmstate.c). */
static int h3100_mig_save_prepare(void *opaque, Error **errp)
{
    H3100State *s = opaque;
    bool kept;

    h3100_lock(s);
    kept = !QTAILQ_EMPTY(&s->retry);
    h3100_unlock(s);
    if (kept) {
        error_setg(errp, "%s: the VM stopped on a host I/O error with "
                   "commands kept for a retry (werror/rerror=stop): "
                   "resolve it and let the VM run before saving it",
                   TYPE_DAPUSTOR_H3100);
        return -EBUSY;
    }
    return 0;
}

static int h3100_mig_save_setup(QEMUFile *f, void *opaque, Error **errp)
{
    H3100State *s = opaque;

    if (h3100_mig_save_prepare(s, errp) < 0) {
        return -EBUSY;
    }
    h3100_mig_put_identity(f, s);
    qemu_put_byte(f, H3100_REC_EOS);
    qemu_mutex_lock(&s->model_lock);
    h3100_mig_track_start(s->model);
    qemu_mutex_unlock(&s->model_lock);
    s->mig_pages_sent = 0;
    s->mig_rounds = 0;
    trace_h3100_mig_setup(h3100_mig_due(s));
    return 0;
}

/*
 * The map pages still due.  Not the core: no round can send it before
 * the VM stops, so counting it would keep the pending bytes from ever
 * falling under what QEMU may send in its downtime limit once the map is
 * across and a round carries next to nothing (QEMU's bandwidth is
 * measured on the rounds): an idle VM on a loaded host never converged.
 * Like a device's vmstate, the core goes in the downtime, uncounted.
 */
static uint64_t h3100_mig_due_bytes(H3100State *s)
{
    return h3100_mig_due(s) * H3100_MIG_PAGE_BYTES;
}

#if H3100_QUERY_PENDING
/*
 * precopy_bytes, not stopcopy_bytes, for the reason above: QEMU counts
 * stopcopy_bytes against the downtime limit.  The final query holds the
 * BQL; h3100_mig_due() takes only model_lock, which nothing holds while
 * waiting for the BQL.
 */
static void h3100_mig_query_pending(void *opaque, MigPendingData *pending,
                                    bool exact, bool final)
{
    pending->precopy_bytes += h3100_mig_due_bytes(opaque);
}
#else
static void h3100_mig_pending_bytes(void *opaque, uint64_t *must_precopy,
                                    uint64_t *can_postcopy)
{
    *must_precopy += h3100_mig_due_bytes(opaque);
}
#endif

static int h3100_mig_save_iterate(QEMUFile *f, void *opaque)
{
    H3100State *s = opaque;
    uint64_t sent = h3100_mig_send(f, s, H3100_MIG_ROUND_BYTES);

    qemu_put_byte(f, H3100_REC_EOS);
    s->mig_rounds++;
    trace_h3100_mig_round(s->mig_rounds, sent, h3100_mig_due(s));
    return h3100_mig_due(s) == 0;
}

static int h3100_mig_save_complete(QEMUFile *f, void *opaque)
{
    H3100State *s = opaque;
    int64_t t0 = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
    g_autoptr(GByteArray) core = NULL;
    uint64_t sent;

    sent = h3100_mig_send(f, s, UINT64_MAX);
    qemu_mutex_lock(&s->model_lock);
    core = h3100_mig_core_save(s->model);
    h3100_mig_track_stop(s->model);
    qemu_mutex_unlock(&s->model_lock);
    qemu_put_byte(f, H3100_REC_CORE);
    qemu_put_be32(f, core->len);
    qemu_put_buffer(f, core->data, core->len);
    qemu_put_byte(f, H3100_REC_EOS);
    if (runstate_check(RUN_STATE_FINISH_MIGRATE)) {
        h3100_pstate_handover(s);     /* the destination's from now on */
    }
    s->mig_last_ns = qemu_clock_get_ns(QEMU_CLOCK_REALTIME) - t0;
    s->mig_last_bytes = sent + core->len;
    trace_h3100_mig_complete(sent, core->len, s->mig_last_ns);
    return 0;
}

static void h3100_mig_save_cleanup(void *opaque)
{
    H3100State *s = opaque;

    qemu_mutex_lock(&s->model_lock);
    h3100_mig_track_stop(s->model);
    qemu_mutex_unlock(&s->model_lock);
}

/* ---- the destination ---------------------------------------------------- */

/*
 * Stop everything the controller does, as at the device's exit, but keep
 * the device: what is loaded next replaces it (loadvm into a running
 * device; on an incoming one there is nothing to stop).
 */
void h3100_mig_forget(H3100State *s)
{
    /*
     * A fresh destination has nothing running: no reset, which would run
     * nested event loops in the incoming migration's coroutine.
     */
    if (!s->mig_ctrl_touched && !s->sq[0] && !s->cq[0] &&
        QTAILQ_EMPTY(&s->unmap_list) &&
        !h3100_ns_any_busy(s) && !s->san.active && !s->fw.image &&
        QTAILQ_EMPTY(&s->vcache) && !s->uncor->len &&
        !NVME_CC_EN(ldl_le_p(&s->bar.cc))) {
        return;
    }
    s->san.active = false;
    s->exiting = true;                /* Sanitize's and the erases stop */
    h3100_ctrl_reset(s);
    h3100_unmap_wait(s, true);
    blk_drain(s->blk);
    s->exiting = false;
    h3100_vcache_free_all(s);
    h3100_ns_free(s);
    h3100_fw_free(s);
    h3100_timer_del(s->dst.timer);
    h3100_timer_del(s->san.timer);
    g_array_set_size(s->uncor, 0);
    s->mig_ctrl_touched = false;
}

static bool h3100_mig_refuse(H3100State *s, const char *fmt, ...)
    G_GNUC_PRINTF(2, 3);

static bool h3100_mig_refuse(H3100State *s, const char *fmt, ...)
{
    g_autofree char *msg = NULL;
    va_list ap;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    error_report("%s: drive state refused: %s", TYPE_DAPUSTOR_H3100, msg);
    return false;
}

static bool h3100_mig_load_identity(QEMUFile *f, H3100State *s)
{
    uint32_t len = qemu_get_be32(f);
    g_autofree char *text = NULL;
    g_autofree char *diff = NULL;
    g_autoptr(GError) gerr = NULL;

    /* once, first: a later one would reset a drive half loaded */
    if (s->mig_load != H3100_MIG_LOAD_IDENTITY) {
        return h3100_mig_refuse(s, "a drive identity out of place");
    }
    if (len > H3100_MIG_IDENTITY_MAX) {
        return h3100_mig_refuse(s, "a drive identity of %u bytes", len);
    }
    text = g_malloc0(len + 1);
    if (qemu_get_buffer(f, (uint8_t *)text, len) != len) {
        return h3100_mig_refuse(s, "the stream ends in its identity");
    }
    diff = h3100_mig_identity_diff(s, text);
    if (diff) {
        return h3100_mig_refuse(s, "the stream holds another drive: %s "
                                "(start this QEMU with the source's "
                                "dapustor-h3100 options)", diff);
    }
    /* the drive arrives: nothing runs or is saved until it is whole */
    h3100_pstate_suspend(s);
    h3100_mig_forget(s);
    qemu_mutex_lock(&s->model_lock);
    h3100_model_free(s->model);
    s->model = h3100_model_new(&s->cfg, NULL);   /* the old one's memory */
    qemu_mutex_unlock(&s->model_lock);
    h3100_mig_recv_free(s->mig_rx);
    s->mig_rx = h3100_mig_recv_new(&s->cfg, &gerr);
    if (!s->mig_rx) {
        return h3100_mig_refuse(s, "%s", gerr->message);
    }
    s->mig_load = H3100_MIG_LOAD_MODEL;
    return true;
}

static bool h3100_mig_load_page(QEMUFile *f, H3100State *s)
{
    g_autofree H3100MigItem *it = g_new(H3100MigItem, 1);
    g_autoptr(GError) gerr = NULL;
    uint8_t fill;

    it->kind = qemu_get_byte(f);
    it->index = qemu_get_be64(f);
    fill = qemu_get_byte(f);
    if (s->mig_load != H3100_MIG_LOAD_MODEL || fill > 1) {
        return h3100_mig_refuse(s, "a map page out of place");
    }
    it->fill = fill;
    if (!it->fill &&
        qemu_get_buffer(f, it->data, sizeof(it->data)) != sizeof(it->data)) {
        return h3100_mig_refuse(s, "the stream ends in a map page");
    }
    if (!h3100_mig_recv_item(s->mig_rx, it, &gerr)) {
        return h3100_mig_refuse(s, "%s", gerr->message);
    }
    return true;
}

static bool h3100_mig_load_core(QEMUFile *f, H3100State *s)
{
    uint32_t len = qemu_get_be32(f);
    g_autofree uint8_t *core = NULL;
    g_autoptr(GError) gerr = NULL;
    H3100Model *m;

    if (s->mig_load != H3100_MIG_LOAD_MODEL || len > H3100_MIG_CORE_MAX) {
        return h3100_mig_refuse(s, "a model core out of place");
    }
    core = g_try_malloc(len);
    if (!core || qemu_get_buffer(f, core, len) != len) {
        return h3100_mig_refuse(s, "the stream ends in the model's core");
    }
    m = h3100_mig_recv_finish(s->mig_rx, core, len, &gerr);
    if (!m) {
        return h3100_mig_refuse(s, "%s", gerr->message);
    }
    s->mig_rx = NULL;
    qemu_mutex_lock(&s->model_lock);
    h3100_model_free(s->model);
    s->model = m;
    h3100_model_set_timing(s->model, s->timing);
    qemu_mutex_unlock(&s->model_lock);
    h3100_telemetry_init_model(s);
    s->mig_load = H3100_MIG_LOAD_CONTROLLER;
    trace_h3100_mig_loaded_model(len);
    return true;
}

static int h3100_mig_load_state(QEMUFile *f, void *opaque, int version_id)
{
    H3100State *s = opaque;

    for (;;) {
        uint8_t rec = qemu_get_byte(f);
        bool ok;

        if (qemu_file_get_error(f)) {
            return qemu_file_get_error(f);
        }
        switch (rec) {
        case H3100_REC_EOS:
            return 0;
        case H3100_REC_IDENTITY:
            ok = h3100_mig_load_identity(f, s);
            break;
        case H3100_REC_PAGE:
            ok = h3100_mig_load_page(f, s);
            break;
        case H3100_REC_CORE:
            ok = h3100_mig_load_core(f, s);
            break;
        default:
            ok = h3100_mig_refuse(s, "unknown record %u", rec);
        }
        if (!ok) {
            return -EINVAL;
        }
    }
}

static int h3100_mig_load_setup(QEMUFile *f, void *opaque, Error **errp)
{
    H3100State *s = opaque;

    s->mig_load = H3100_MIG_LOAD_IDENTITY;
    return 0;
}

static int h3100_mig_load_cleanup(void *opaque)
{
    H3100State *s = opaque;

    g_clear_pointer(&s->mig_rx, h3100_mig_recv_free);
    s->mig_load = H3100_MIG_LOAD_IDLE;
    return 0;
}

static const SaveVMHandlers h3100_mig_handlers = {
    .save_prepare = h3100_mig_save_prepare,
    .save_setup = h3100_mig_save_setup,
    .save_live_iterate = h3100_mig_save_iterate,
    .H3100_SAVE_COMPLETE = h3100_mig_save_complete,
    .save_cleanup = h3100_mig_save_cleanup,
#if H3100_QUERY_PENDING
    .save_query_pending = h3100_mig_query_pending,
#else
    .state_pending_estimate = h3100_mig_pending_bytes,
    .state_pending_exact = h3100_mig_pending_bytes,
#endif
    .load_setup = h3100_mig_load_setup,
    .load_state = h3100_mig_load_state,
    .load_cleanup = h3100_mig_load_cleanup,
};

/* ---- after loading ------------------------------------------------ */

/* The controller's state is whole: what follows from it, and the file. */
void h3100_mig_loaded(H3100State *s)
{
    h3100_lock(s);
    if (s->dbbuf_enabled) {
        for (unsigned i = 1; i <= s->max_ioqpairs; i++) {
            h3100_dbbuf_setup_queue(s, s->sq[i], s->cq[i]);
        }
    }
    h3100_due_rearm(s);
    if (s->dst.current) {
        h3100_timer_mod(s->dst.timer, h3100_virt_ns(s, s->dst.end_ns));
    }
    if (s->san.active && !s->san.zeroing && !s->san.wait_io) {
        h3100_timer_mod(s->san.timer, h3100_virt_ns(s, s->san.end_ns));
    }
    s->shutdown.flush_inflight = false;   /* its flush starts again */
    if (s->blk) {
        blk_set_enable_write_cache(s->blk, s->feat.vwc || s->backend_wce);
    }
    h3100_id_ctrl_init(s);
    h3100_telemetry_restart(s);
    h3100_unlock(s);
    h3100_pstate_takeover(s);         /* may checkpoint: not under s->lock */
}

/* ---- the source's notifier, registration -------------------------- */

static int h3100_mig_notify(NotifierWithReturn *n, MigrationEvent *e,
                            Error **errp)
{
    H3100State *s = container_of(n, H3100State, mig_notifier);

    if (e->type == H3100_MIG_EVENT_FAILED) {
        h3100_pstate_resume(s);      /* the drive stays here after all */
    }
    return 0;
}

void h3100_mig_init(H3100State *s)
{
    g_autofree char *id = vmstate_if_get_id(VMSTATE_IF(s));
    g_autofree char *idstr = g_strdup_printf("%s%s%s", id ? id : "",
                                             id ? "/" : "",
                                             H3100_MIG_SECTION);

    register_savevm_live(idstr, 0, H3100_MIG_VERSION, &h3100_mig_handlers,
                         s);
    migration_add_notifier(&s->mig_notifier, h3100_mig_notify);
}

void h3100_mig_exit(H3100State *s)
{
    migration_remove_notifier(&s->mig_notifier);
    unregister_savevm(VMSTATE_IF(s), H3100_MIG_SECTION, s);
    g_clear_pointer(&s->mig_rx, h3100_mig_recv_free);
}
