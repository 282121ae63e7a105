/*
 * DapuStor H3100 NVMe SSD: host-side telemetry and reclaim tracing
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * telemetry=FILE writes one JSON line per telemetry-interval milliseconds
 * of virtual time (the format h3100-sim --telemetry writes, see
 * docs/guide/telemetry.md): IOPS, MB/s and latency percentiles of the I/O
 * commands completed in the interval, as the guest saw them (fetch to
 * completion entry), with the drive's WAF, free superblocks, reclaim,
 * buffer stalls and temperature.  A last line holds the latency CDF of
 * the whole run.  Reclaim steps become trace events whether or not a
 * file is written.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "system/system.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-mgmt.h"
#include "h3100-life.h"
#include "trace.h"

static void h3100_reclaim_traced(void *opaque, H3100ReclaimStep step,
                                 uint64_t now, uint32_t sb, uint64_t a,
                                 uint64_t b)
{
    switch (step) {
    case H3100_RECLAIM_VICTIM:
        trace_h3100_reclaim_victim(now, sb, a, b);
        h3100_tlog_note_reclaim(opaque, now, sb, a, b);
        break;
    case H3100_RECLAIM_READ:
        trace_h3100_reclaim_read(now, sb, a);
        break;
    case H3100_RECLAIM_ERASE:
        trace_h3100_reclaim_erase(now, sb, a, b);
        break;
    }
}

static void h3100_telemetry_write(H3100State *s, GString *line)
{
    H3100Telemetry *t = &s->tel;

    if (fputs(line->str, t->file) < 0 || fflush(t->file)) {
        warn_report("%s: telemetry file %s: %s; no more rows written",
                    TYPE_DAPUSTOR_H3100, s->telemetry_path, strerror(errno));
        fclose(t->file);
        t->file = NULL;
        h3100_timer_del(t->timer);
    }
}

/* Close the interval that ends now: one row, then a fresh window. */
static void h3100_telemetry_row(H3100State *s)
{
    H3100Telemetry *t = &s->tel;
    H3100TelemetryRow row = { 0 };
    g_autoptr(GString) line = g_string_new(NULL);
    H3100Health end;

    h3100_health(s, &end);
    if (end.now_ns <= t->begin.now_ns) {
        return;
    }
    h3100_telemetry_fill_health(&row, &t->begin, &end);
    h3100_telemetry_fill_io(&row, t->reads, t->writes, t->bytes);
    h3100_telemetry_fill_lat(&row, t->window);
    h3100_telemetry_json(&row, line);
    trace_h3100_telemetry_row(end.now_ns, (uint64_t)row.iops,
                              (uint64_t)(row.waf * 1000));
    h3100_telemetry_write(s, line);
    t->begin = end;
    t->reads = t->writes = t->bytes = 0;
    h3100_lathist_merge(t->run, t->window);
    h3100_lathist_reset(t->window);
}

static void h3100_telemetry_timer_cb(void *opaque)
{
    H3100State *s = opaque;

    h3100_telemetry_row(s);
    if (s->tel.file) {
        h3100_timer_mod_in(s->tel.timer, s->tel.period_ns);
    }
}

static void h3100_telemetry_close_here(void *opaque);

/* QEMU is quitting: the last, partial interval and the CDF. */
static void h3100_telemetry_exit_notify(Notifier *n, void *data)
{
    h3100_telemetry_close(container_of(n, H3100State, tel.exit));
}

/* Reclaim steps of the drive model (a new one after a migration too). */
void h3100_telemetry_init_model(H3100State *s)
{
    h3100_model_set_reclaim_observer(s->model, h3100_reclaim_traced, s);
}

/*
 * At realize, before anything is built: the file, if there is one, can
 * be written (telemetry-interval is h3100_check_props()').
 */
bool h3100_telemetry_open(H3100State *s, Error **errp)
{
    H3100Telemetry *t = &s->tel;

    if (!s->telemetry_path) {
        return true;
    }
    t->file = fopen(s->telemetry_path, "w");
    if (!t->file) {
        error_setg_errno(errp, errno, "telemetry: cannot write %s",
                         s->telemetry_path);
        return false;
    }
    return true;
}

/* Realize failed after h3100_telemetry_open(): nothing was written. */
void h3100_telemetry_abandon(H3100State *s)
{
    if (s->tel.file) {
        fclose(s->tel.file);
        s->tel.file = NULL;
    }
}

/* Once the model exists. */
void h3100_telemetry_init(H3100State *s)
{
    H3100Telemetry *t = &s->tel;

    h3100_telemetry_init_model(s);
    if (!t->file) {
        return;
    }
    t->period_ns = (int64_t)s->telemetry_ms * SCALE_MS;
    t->window = g_new(H3100LatHist, 1);
    t->run = g_new(H3100LatHist, 1);
    h3100_lathist_reset(t->window);
    h3100_lathist_reset(t->run);
    t->exit.notify = h3100_telemetry_exit_notify;
    qemu_add_exit_notifier(&t->exit);
}

/* Once the model's clock runs (after realize and state loading). */
void h3100_telemetry_start(H3100State *s)
{
    H3100Telemetry *t = &s->tel;

    if (!t->file) {
        return;
    }
    h3100_health(s, &t->begin);
    t->timer = h3100_timer_new(s, h3100_telemetry_timer_cb, s);
    h3100_timer_mod_in(t->timer, t->period_ns);
}

/*
 * A migration or loadvm brought another drive state: the file's rows go
 * on from it (the interval and the run's latencies start again).
 */
void h3100_telemetry_restart(H3100State *s)
{
    H3100Telemetry *t = &s->tel;

    if (!t->file) {
        return;
    }
    h3100_health(s, &t->begin);
    t->reads = t->writes = t->bytes = 0;
    h3100_lathist_reset(t->window);
}

/* An I/O command's completion entry is being posted. */
void h3100_telemetry_note(H3100State *s, H3100Req *req, uint64_t now)
{
    H3100Telemetry *t = &s->tel;
    uint8_t opc = req->cmd.opcode;

    if (!t->file || req->status != NVME_SUCCESS) {
        return;
    }
    if (opc == NVME_CMD_READ) {
        t->reads++;
    } else if (opc == NVME_CMD_WRITE) {
        t->writes++;
    } else {
        return;
    }
    t->bytes += req->bytes;
    h3100_lathist_add(t->window, now - req->start_ns);
}

/* In the controller's context: an IOThread may be writing a row. */
void h3100_telemetry_close(H3100State *s)
{
    h3100_run_in_ctx(s, h3100_telemetry_close_here, s);
}

static void h3100_telemetry_close_here(void *opaque)
{
    H3100State *s = opaque;
    H3100Telemetry *t = &s->tel;
    g_autoptr(GString) line = g_string_new(NULL);

    if (t->file) {
        h3100_telemetry_row(s);
    }
    if (t->file) {
        h3100_telemetry_cdf_json(t->run, line);
        h3100_telemetry_write(s, line);
    }
    if (t->file) {
        fclose(t->file);
        t->file = NULL;
    }
    if (t->exit.notify) {
        qemu_remove_exit_notifier(&t->exit);
        t->exit.notify = NULL;
    }
    h3100_timer_free(&t->timer);
    g_clear_pointer(&t->window, g_free);
    g_clear_pointer(&t->run, g_free);
}
