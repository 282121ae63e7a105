/*
 * DapuStor H3100 NVMe SSD: PCIe function, properties, drive model setup
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * PCI identity: vendor 0x1e3b (DapuStor), device 0x1098, class 0x010802
 * (NVMe), subsystem 0x1e3b:<ID by model, capacity and form factor>.
 *
 * BAR0 (64-bit memory, 32 KiB):
 *   0x0000 - 0x0fff  controller registers (CAP, VS, CC, CSTS, AQA, ...)
 *   0x1000 - 0x1fff  doorbells (CAP.DSTRD = 0)
 *   0x2000           MSI-X table (max-ioqpairs + 1 vectors)
 *   0x4000           MSI-X PBA
 *
 * Usage (see docs/guide/usage.md):
 *   -drive file=disk.qcow2,if=none,id=d0
 *   -device dapustor-h3100,drive=d0,capacity=3.2T
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/pcie.h"
#include "hw/pci/pcie_aer.h"
#include "hw/pci/msix.h"
#include "migration/vmstate.h"
#include "system/qtest.h"
#include "system/system.h"
#include "h3100.h"
#include "h3100-compat.h"
#include "h3100-core.h"
#include "h3100-nvm.h"
#include "h3100-mgmt.h"
#include "h3100-life.h"
#include "trace.h"

QEMU_BUILD_BUG_ON(sizeof(NvmeBar) != H3100_REGS_SIZE);
QEMU_BUILD_BUG_ON((H3100_MAX_QPAIRS_LIMIT + 1) * 8 > H3100_DB_SIZE);
QEMU_BUILD_BUG_ON((H3100_MAX_QPAIRS_LIMIT + 1) * PCI_MSIX_ENTRY_SIZE >
                  H3100_MSIX_PBA_OFFSET - H3100_MSIX_TABLE_OFFSET);

static void h3100_idle_timer_cb(void *opaque)
{
    H3100State *s = opaque;

    qemu_mutex_lock(&s->model_lock);
    h3100_model_idle(s->model, h3100_now_locked(s));
    qemu_mutex_unlock(&s->model_lock);
    if (++s->idle_ticks >= H3100_HEALTH_EVERY) {
        s->idle_ticks = 0;
        h3100_health_check(s);
    }
    h3100_lsi_check(s);
    h3100_timer_mod_in(s->idle_timer, H3100_IDLE_PERIOD_NS);
}

/* ---- properties and identity ------------------------------------------ */

static bool h3100_profile_name(H3100State *s, char *name, size_t len,
                               Error **errp)
{
    static const char *const h3100_caps[] = { "0.8t", "1.6t", "3.2t",
                                              "6.4t", NULL };
    static const char *const h3200_caps[] = { "0.96t", "1.92t", "3.84t",
                                              "7.68t", NULL };
    const char *const *caps;
    g_autofree char *cap = NULL;
    bool h3200;

    if (!s->model_name || !strcmp(s->model_name, "h3100")) {
        h3200 = false;
    } else if (!strcmp(s->model_name, "h3200")) {
        h3200 = true;
    } else {
        error_setg(errp, "model=%s: expected h3100 or h3200", s->model_name);
        return false;
    }
    caps = h3200 ? h3200_caps : h3100_caps;
    cap = g_ascii_strdown(s->capacity ? s->capacity :
                          (h3200 ? "3.84T" : "3.2T"), -1);
    if (!g_strv_contains((const char * const *)caps, cap)) {
        g_autofree char *list = g_strjoinv("|", (char **)caps);
        error_setg(errp, "capacity=%s: %s takes %s", s->capacity,
                   h3200 ? "h3200" : "h3100", list);
        return false;
    }
    snprintf(name, len, "%s-%s", h3200 ? "h3200" : "h3100", cap);
    return true;
}

/* The drive model of @profile (h3100_profile_name()), fresh or loaded. */
static bool h3100_model_init(H3100State *s, const char *profile, Error **errp)
{
    g_autoptr(GError) gerr = NULL;
    int64_t len;

    if (!h3100_profile_load(&s->cfg, profile, &gerr)) {
        error_setg(errp, "profile %s: %s", profile, gerr->message);
        return false;
    }
    s->cfg.seed = s->seed;
    if (s->model_params && *s->model_params &&
        !h3100_config_apply(&s->cfg, s->model_params, &gerr)) {
        error_setg(errp, "model-params: %s", gerr->message);
        return false;
    }
    /* the saved uncorrectable ranges and namespaces are checked against it */
    s->nvm_bytes = s->cfg.geo.user_bytes;
    if (s->state_path) {
        if (!h3100_pstate_open(s, errp)) {
            return false;
        }
    } else {
        s->model = h3100_model_new(&s->cfg, &gerr);
        if (!s->model) {
            error_setg(errp, "drive model: %s", gerr->message);
            return false;
        }
    }
    s->cfg = *h3100_model_config(s->model);
    h3100_model_set_timing(s->model, s->timing);
    s->nvm_bytes = s->cfg.geo.user_bytes;
    s->power_cycles = 1;

    len = blk_getlength(s->blk);
    if (len < 0) {
        error_setg_errno(errp, -len, "could not get drive size");
        return false;
    }
    if ((uint64_t)len < s->nvm_bytes) {
        error_setg(errp, "drive is %" PRId64 " bytes, the %s namespace needs "
                   "%" PRIu64 " (qemu-img create -f qcow2 FILE %" PRIu64
                   ", or -drive driver=null-co,size=%" PRIu64 ")",
                   len, profile, s->nvm_bytes, s->nvm_bytes, s->nvm_bytes);
        return false;
    }
    return true;
}

/*
 * Every property that can be checked alone, before realize builds
 * anything, in the order of QEMU's nvme_check_params(); what needs the
 * drive model (model-params, the state file, the serial number) is
 * checked as the model is built.  @profile: the model's profile name.
 */
static bool h3100_check_props(H3100State *s, char *profile, size_t len,
                              Error **errp)
{
    if (!s->blk) {
        error_setg(errp, "drive property not set "
                   "(use -drive if=none,id=ID,... and drive=ID)");
        return false;
    }
    if (!blk_is_inserted(s->blk)) {
        error_setg(errp, "drive has no medium");
        return false;
    }
    if (!h3100_profile_name(s, profile, len, errp)) {
        return false;
    }
    if (s->max_ioqpairs < 1 || s->max_ioqpairs > H3100_MAX_QPAIRS_LIMIT) {
        error_setg(errp, "max-ioqpairs=%u: expected 1..%u", s->max_ioqpairs,
                   H3100_MAX_QPAIRS_LIMIT);
        return false;
    }
    if (s->mdts < 1 || s->mdts > 10) {
        error_setg(errp, "mdts=%u: expected 1..10 (2^mdts x 4 KiB)", s->mdts);
        return false;
    }
    if (s->form_factor && strcmp(s->form_factor, "u2") &&
        strcmp(s->form_factor, "hhhl")) {
        error_setg(errp, "form-factor=%s: expected u2 or hhhl",
                   s->form_factor);
        return false;
    }
    if (s->lba_size != 512 && s->lba_size != 4096) {
        error_setg(errp, "lba-size=%u: expected 512 or 4096", s->lba_size);
        return false;
    }
    if (s->firmware && (!*s->firmware || strlen(s->firmware) > 8)) {
        error_setg(errp, "firmware=%s: 1 to 8 characters", s->firmware);
        return false;
    }
    if (s->state_path && s->state_interval > 24 * 3600) {
        error_setg(errp, "state-interval=%u: expected 0 (off) .. 86400 s",
                   s->state_interval);
        return false;
    }
    if (s->completion_window > H3100_COMPLETION_WINDOW_MAX_NS) {
        error_setg(errp, "completion-window=%u: expected 0 (exact) .. %u ns",
                   s->completion_window, H3100_COMPLETION_WINDOW_MAX_NS);
        return false;
    }
    if (s->telemetry_path && !s->telemetry_ms) {
        error_setg(errp, "telemetry-interval must be at least 1 (ms)");
        return false;
    }
    return h3100_faults_check(s, errp);
}

static bool h3100_blk_init(H3100State *s, Error **errp)
{
    uint64_t perm = BLK_PERM_CONSISTENT_READ;

    if (blk_supports_write_perm(s->blk)) {
        perm |= BLK_PERM_WRITE;
    }
    if (blk_set_perm(s->blk, perm, BLK_PERM_ALL, errp) < 0) {
        return false;
    }
    if (s->iothread) {
        s->ctx = iothread_get_aio_context(s->iothread);
        if (blk_set_aio_context(s->blk, s->ctx, errp) < 0) {
            return false;
        }
    } else {
        s->ctx = qemu_get_aio_context();
    }
    /*
     * The guest sees no volatile cache (vwc=off, power-loss protection):
     * it never flushes.  Whether the host's page cache may still hold its
     * completed writes is the user's choice, as for any QEMU drive:
     * write-cache=, by default -drive cache= (writeback unless told).
     */
    s->backend_wce = s->write_cache == ON_OFF_AUTO_AUTO ?
                     blk_enable_write_cache(s->blk) :
                     s->write_cache == ON_OFF_AUTO_ON;
    return true;
}

/*
 * The AER capability, and what a migration may compare of it: the First
 * Error Pointer and the header and TLP prefix logs are read-only to the
 * guest but written by every recorded error, so QEMU's check of
 * read-only config bytes against the destination's would refuse a drive
 * that had one.
 */
static bool h3100_aer_init(H3100State *s, Error **errp)
{
    PCIDevice *pci = PCI_DEVICE(s);
    uint8_t *cmask = pci->cmask + H3100_AER_CAP_OFFSET;

    if (pcie_aer_init(pci, PCI_ERR_VER, H3100_AER_CAP_OFFSET,
                      PCI_ERR_SIZEOF, errp) < 0) {
        return false;
    }
    pci_long_test_and_clear_mask(cmask + PCI_ERR_CAP,
                                 PCI_ERR_CAP_FEP_MASK | PCI_ERR_CAP_TLP);
    memset(cmask + PCI_ERR_HEADER_LOG, 0, PCI_ERR_HEADER_LOG_SIZE);
    memset(cmask + PCI_ERR_TLP_PREFIX_LOG, 0, PCI_ERR_TLP_PREFIX_LOG_SIZE);
    return true;
}

static bool h3100_pci_init(H3100State *s, Error **errp)
{
    PCIDevice *pci = PCI_DEVICE(s);
    uint8_t *conf = pci->config;

    conf[PCI_INTERRUPT_PIN] = 1;
    pci_config_set_prog_interface(conf, 0x2);
    pci_set_word(conf + PCI_SUBSYSTEM_VENDOR_ID, H3100_PCI_SUBSYS_VENDOR_ID);
    pci_set_word(conf + PCI_SUBSYSTEM_ID, s->subsys_id);

    if (pci_pm_init(pci, H3100_PM_CAP_OFFSET, errp) < 0) {
        return false;
    }
    pci_set_word(conf + H3100_PM_CAP_OFFSET + PCI_PM_CTRL,
                 PCI_PM_CTRL_NO_SOFT_RESET);
    if (pcie_endpoint_cap_init(pci, H3100_PCIE_CAP_OFFSET) < 0) {
        error_setg(errp, "could not add the PCIe capability");
        return false;
    }
    h3100_pcie_fill_link(pci, QEMU_PCI_EXP_LNK_X4, QEMU_PCI_EXP_LNK_8GT);
    s->lnkcap_lo = pci_get_word(conf + H3100_PCIE_CAP_OFFSET +
                                PCI_EXP_LNKCAP);

    memory_region_init(&s->bar0, OBJECT(s), "dapustor-h3100-bar0",
                       H3100_BAR0_SIZE);
    memory_region_init_io(&s->iomem, OBJECT(s), &h3100_mmio_ops, s,
                          "dapustor-h3100-regs", H3100_MSIX_TABLE_OFFSET);
    memory_region_add_subregion(&s->bar0, 0, &s->iomem);
    pci_register_bar(pci, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);

    s->nvec = s->max_ioqpairs + 1;
    if (msix_init(pci, s->nvec, &s->bar0, 0, H3100_MSIX_TABLE_OFFSET,
                  &s->bar0, 0, H3100_MSIX_PBA_OFFSET, 0, errp) < 0) {
        memory_region_del_subregion(&s->bar0, &s->iomem);
        return false;
    }
    for (unsigned i = 0; i < s->nvec; i++) {
        msix_vector_use(pci, i);
    }
    pcie_cap_deverr_init(pci);
    /*
     * aer=on: the extended capability QEMU's pcie_aer_inject_error needs
     * to report an error as the drive's.  Off by default: it changes
     * config space, which a VM made before it must keep.
     */
    if (s->aer && !h3100_aer_init(s, errp)) {
        msix_uninit(pci, &s->bar0, &s->bar0);
        memory_region_del_subregion(&s->bar0, &s->iomem);
        return false;
    }
    h3100_link_init(s);
    return true;
}

/*
 * QEMU's pcie_aer_inject_error (10.0) stores an uncorrectable error's
 * Device Status with pci_set_long, which zeroes the Link Capabilities'
 * low word after it: read-only bits that the guest reads and a migration
 * compares with the destination's (it would fail).  Put them back.
 */
void h3100_pci_repair_lnkcap(H3100State *s)
{
    PCIDevice *pci = PCI_DEVICE(s);

    pci_set_word(pci->config + H3100_PCIE_CAP_OFFSET + PCI_EXP_LNKCAP,
                 s->lnkcap_lo);
}

/*
 * Config space reads all-ones, and takes no writes, while a link-down
 * fault holds the drive off the bus: what a host reads of a function
 * whose link is down.  Its contents stay: a retrain keeps them.
 */
static uint32_t h3100_config_read(PCIDevice *pci, uint32_t addr, int len)
{
    H3100State *s = DAPUSTOR_H3100(pci);

    if (h3100_off_bus(s)) {
        return MAKE_64BIT_MASK(0, len * 8);
    }
    h3100_pci_repair_lnkcap(s);
    return pci_default_read_config(pci, addr, len);
}

static void h3100_config_write(PCIDevice *pci, uint32_t addr, uint32_t val,
                               int len)
{
    if (!h3100_off_bus(DAPUSTOR_H3100(pci))) {
        pci_default_write_config(pci, addr, val, len);
    }
}

static void h3100_state_init(H3100State *s)
{
    qemu_rec_mutex_init(&s->lock);
    s->sq = g_new0(H3100SQueue *, s->max_ioqpairs + 1);
    s->cq = g_new0(H3100CQueue *, s->max_ioqpairs + 1);
    s->vec = g_new0(H3100Vector, s->nvec);
    for (unsigned i = 0; i < s->nvec; i++) {
        s->vec[i].s = s;
        s->vec[i].idx = i;
        /* vector N: usually CQ N's, in its group (nvec = max-ioqpairs + 1) */
        s->vec[i].timer = h3100_timer_new_in(s, s->qg[i]->ctx,
                                             h3100_irq_timer_cb, &s->vec[i]);
    }
    h3100_groups_start(s);
    if (!h3100_all_main(s)) {
        s->irq_bh = qemu_bh_new(h3100_irq_bh, s);
    }
    h3100_runstate_init(s);
    h3100_durable_init(s);
    h3100_faults_realize(s);
    h3100_blkerr_init(s);
    h3100_vcache_init(s);
    h3100_shutdown_init(s);
    s->hold = qtest_enabled() || icount_enabled();
    /*
     * Under -icount a busy vCPU also moves virtual time on while the
     * host's I/O runs: how far would depend on the host's disk and load.
     * With every queue in the main context the wake-up runs in the vCPU
     * thread: it waits there, the guest's instructions stopped, until the
     * commands whose model time has come are back from the block layer
     * (h3100-inflight.c); then no host time reaches virtual time.
     */
    s->vcpu_waits = icount_enabled() && !qtest_enabled() &&
                    h3100_all_main(s);
    s->idle_timer = h3100_timer_new(s, h3100_idle_timer_cb, s);
    s->dst.timer = h3100_timer_new(s, h3100_dst_timer_cb, s);
    s->san.timer = h3100_timer_new(s, h3100_sanitize_timer_cb, s);
    s->uncor = g_array_new(false, false, sizeof(H3100Range));
    qemu_mutex_init(&s->model_lock);
    s->time_base = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    h3100_health(s, &s->tw_base);     /* log CAh's timed workload starts */
    h3100_ns_init(s);
    h3100_fw_init(s);
    h3100_features_init(s);
    h3100_id_ctrl_init(s);
    h3100_regs_init(s);
}

/*
 * Check, then build: the properties and the telemetry file first, so
 * that nothing after the model can fail; a failure unwinds what was
 * built, in reverse order, on one path.
 */
static void h3100_realize(PCIDevice *pci_dev, Error **errp)
{
    H3100State *s = DAPUSTOR_H3100(pci_dev);
    char profile[32];

    if (!h3100_check_props(s, profile, sizeof(profile), errp) ||
        !h3100_telemetry_open(s, errp)) {
        return;
    }
    if (!h3100_blk_init(s, errp)) {
        goto fail_telemetry;
    }
    if (!h3100_groups_init(s, errp)) {
        goto fail_groups;
    }
    if (!h3100_model_init(s, profile, errp) ||
        !h3100_identity_init(s, errp) || !h3100_pci_init(s, errp)) {
        goto fail_model;
    }
    h3100_state_init(s);
    if (s->state_path && !s->pstate_incoming) {
        h3100_pstate_apply(s);
    }
    h3100_extremes_start(s, &s->tw_base);  /* after the lifetime ones */
    h3100_telemetry_init(s);
    h3100_telemetry_start(s);
    h3100_ns_resume(s);               /* a delete the state file left */
    h3100_mig_init(s);
    return;

fail_model:
    h3100_model_free(s->model);
    s->model = NULL;
    g_clear_pointer(&s->pstate_blob, g_bytes_unref);
fail_groups:
    h3100_groups_free(s);             /* also after a partial init */
fail_telemetry:
    h3100_telemetry_abandon(s);
}

static void h3100_exit(PCIDevice *pci_dev)
{
    H3100State *s = DAPUSTOR_H3100(pci_dev);

    h3100_mig_exit(s);
    s->exiting = true;
    h3100_ctrl_reset(s);
    s->san.active = false;
    h3100_unmap_wait(s, true);
    blk_drain(s->blk);
    h3100_lock(s);
    h3100_timer_del(s->idle_timer);
    h3100_timer_del(s->dst.timer);
    h3100_timer_del(s->san.timer);
    h3100_timer_del(s->shutdown.timer);
    h3100_unlock(s);
    h3100_groups_exit(s);             /* nothing runs in an IOThread now */
    h3100_runstate_exit(s);
    h3100_shutdown_exit(s);
    h3100_vcache_free_all(s);
    for (unsigned i = 0; i < s->nvec; i++) {
        h3100_timer_free(&s->vec[i].timer);
    }
    h3100_groups_free(s);
    h3100_timer_free(&s->idle_timer);
    h3100_faults_free(s);
    h3100_timer_free(&s->dst.timer);
    h3100_timer_free(&s->san.timer);
    if (s->irq_bh) {
        qemu_bh_delete(s->irq_bh);
        s->irq_bh = NULL;
    }
    g_free(s->vec);
    g_free(s->sq);
    g_free(s->cq);
    h3100_telemetry_close(s);
    h3100_pstate_close(s);
    g_array_free(s->uncor, true);
    h3100_fw_free(s);
    h3100_tlog_free(s);
    h3100_ns_free(s);
    h3100_model_free(s->model);
    s->model = NULL;
    qemu_mutex_destroy(&s->model_lock);
    qemu_rec_mutex_destroy(&s->lock);
    if (s->aer) {
        pcie_aer_exit(pci_dev);
    }
    msix_uninit(pci_dev, &s->bar0, &s->bar0);
    /* a subregion holds a reference to us: unplug could never finish */
    h3100_link_exit(s);
    memory_region_del_subregion(&s->bar0, &s->iomem);
    if (s->iothread) {
        blk_set_aio_context(s->blk, qemu_get_aio_context(), NULL);
    }
}

static void h3100_reset(DeviceState *dev)
{
    H3100State *s = DAPUSTOR_H3100(dev);

    if (s->model) {
        h3100_ctrl_reset(s);
        h3100_regs_init(s);
    }
}

static const Property h3100_props[] = {
    DEFINE_PROP_DRIVE("drive", H3100State, blk),
    DEFINE_PROP_STRING("model", H3100State, model_name),
    DEFINE_PROP_STRING("capacity", H3100State, capacity),
    DEFINE_PROP_STRING("form-factor", H3100State, form_factor),
    DEFINE_PROP_STRING("serial", H3100State, serial),
    DEFINE_PROP_UINT64("eui64", H3100State, eui64, 0),
    DEFINE_PROP_STRING("nguid", H3100State, nguid_str),
    DEFINE_PROP_STRING("model-number", H3100State, model_number),
    DEFINE_PROP_STRING("firmware", H3100State, firmware),
    DEFINE_PROP_STRING("model-params", H3100State, model_params),
    DEFINE_PROP_BOOL("timing", H3100State, timing, true),
    DEFINE_PROP_UINT32("completion-window", H3100State, completion_window,
                       H3100_COMPLETION_WINDOW_NS),
    DEFINE_PROP_BOOL("vwc", H3100State, vwc_present, false),
    DEFINE_PROP_BOOL("kill-safe", H3100State, kill_safe, true),
    DEFINE_PROP_ON_OFF_AUTO("write-cache", H3100State, write_cache,
                            ON_OFF_AUTO_AUTO),
    DEFINE_PROP_BLOCKDEV_ON_ERROR("rerror", H3100State, rerror,
                                  BLOCKDEV_ON_ERROR_AUTO),
    DEFINE_PROP_BLOCKDEV_ON_ERROR("werror", H3100State, werror,
                                  BLOCKDEV_ON_ERROR_AUTO),
    DEFINE_PROP_LINK("iothread", H3100State, iothread, TYPE_IOTHREAD,
                     IOThread *),
    DEFINE_PROP_IOTHREAD_VQ_MAPPING_LIST("iothread-vq-mapping", H3100State,
                                         qmap),
    DEFINE_PROP_UINT64("seed", H3100State, seed, 1),
    DEFINE_PROP_UINT32("max-ioqpairs", H3100State, max_ioqpairs, 128),
    DEFINE_PROP_UINT8("mdts", H3100State, mdts, 5),
    DEFINE_PROP_UINT32("lba-size", H3100State, lba_size, 512),
    DEFINE_PROP_STRING("state", H3100State, state_path),
    DEFINE_PROP_UINT32("state-interval", H3100State, state_interval, 300),
    DEFINE_PROP_BOOL("state-reset", H3100State, state_reset, false),
    DEFINE_PROP_STRING("telemetry", H3100State, telemetry_path),
    DEFINE_PROP_UINT32("telemetry-interval", H3100State, telemetry_ms, 1000),
    DEFINE_PROP_BOOL("aer", H3100State, aer, false),
};

static void h3100_class_init(ObjectClass *oc, H3100_CLASS_DATA data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);

    pc->realize = h3100_realize;
    pc->exit = h3100_exit;
    pc->config_read = h3100_config_read;
    pc->config_write = h3100_config_write;
    pc->vendor_id = H3100_PCI_VENDOR_ID;
    pc->device_id = H3100_PCI_DEVICE_ID;
    pc->subsystem_vendor_id = H3100_PCI_SUBSYS_VENDOR_ID;
    pc->subsystem_id = 0x0014;
    pc->class_id = PCI_CLASS_STORAGE_EXPRESS;
    pc->revision = H3100_PCI_REVISION;

    set_bit(DEVICE_CATEGORY_STORAGE, dc->categories);
    dc->desc = "DapuStor H3100 NVMe SSD";
    device_class_set_props(dc, h3100_props);
    dc->vmsd = &h3100_vmstate;
    device_class_set_legacy_reset(dc, h3100_reset);
    h3100_health_props_init(oc);
    h3100_power_cut_class_init(oc);
    h3100_fault_class_init(oc);
}

/*
 * bootindex names the namespace as QEMU's nvme does ("/namespace@1,0"
 * after the PCI function), so SeaBIOS and OVMF find it in bootorder.
 */
static void h3100_instance_init(Object *obj)
{
    H3100State *s = DAPUSTOR_H3100(obj);

    device_add_bootindex_property(obj, &s->bootindex, "bootindex",
                                  "/namespace@1,0", DEVICE(obj));
}

static const TypeInfo h3100_info = {
    .name          = TYPE_DAPUSTOR_H3100,
    .parent        = TYPE_PCI_DEVICE,
    .instance_size = sizeof(H3100State),
    .instance_init = h3100_instance_init,
    .class_init    = h3100_class_init,
    .interfaces    = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void h3100_register_types(void)
{
    type_register_static(&h3100_info);
}

type_init(h3100_register_types)
