/*
 * DapuStor H3100 NVMe SSD: DapuStor's additional SMART logs CAh and CBh
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Both in the layout nvme-cli's DapuStor plugin reads
 * (include/h3100/dapustor-log.h), filled from the drive model and from
 * what the device tracks itself (H3100Extremes): temperature and power
 * minima and maxima this run and over the drive's life, the temperature
 * at every start, firmware activations.  The lifetime ones are saved in
 * state= files (h3100-state.c).
 */

#include "qemu/osdep.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-mgmt.h"
#include "trace.h"

/* ---- DapuStor additional SMART (CAh), as nvme-cli's plugin reads it ---- */

/* For X lists of both pages: the item's key, and a new drive's value. */
#define H3100_DAPU_NEW(name, k) \
    l->name.key = (k);          \
    l->name.norm = 100;

static void h3100_dapu_item(H3100DapuItem *it, uint8_t norm, uint64_t raw)
{
    it->norm = norm;
    for (unsigned i = 0; i < sizeof(it->raw); i++) {
        it->raw[i] = raw >> (8 * i);
    }
}

static void h3100_dapu_triple(H3100DapuItem *it, uint8_t norm,
                              uint64_t a, uint64_t b, uint64_t c)
{
    h3100_dapu_item(it, norm, MIN(a, UINT16_MAX) |
                    MIN(b, UINT16_MAX) << 16 | MIN(c, UINT16_MAX) << 32);
}

static uint8_t h3100_pct_left(uint32_t used)
{
    return 100 - MIN(used, 100);
}

/* The thermal model's throughput cut now, in percent. */
static uint8_t h3100_throttle_pct(H3100State *s, const H3100Health *h)
{
    switch (h->throttle_level) {
    case 0:
        return 0;
    case 1:
        return 100 - MIN(s->cfg.thermal.throttle_light_pct, 100);
    default:
        return 100 - MIN(s->cfg.thermal.throttle_heavy_pct, 100);
    }
}

/*
 * The timed workload runs from the device's start (this power-on): the
 * drive has no command that restarts it.
 */
static void h3100_dapu_timed(H3100State *s, const H3100Health *h,
                             H3100DapuSmartLog *l)
{
    const H3100Health *b = &s->tw_base;
    uint64_t reads = h->host_read_cmds - MIN(b->host_read_cmds,
                                             h->host_read_cmds);
    uint64_t writes = h->host_write_cmds - MIN(b->host_write_cmds,
                                               h->host_write_cmds);
    double wear = h->rated_pe ? (h->erase_avg - b->erase_avg) /
                                h->rated_pe * 100 * 1024 : 0;

    h3100_dapu_item(&l->timed_workload_media_wear, 100,
                    wear > 0 ? (uint64_t)wear : 0);
    h3100_dapu_item(&l->timed_workload_host_reads, 100,
                    reads + writes ? reads * 100 / (reads + writes) : 0);
    h3100_dapu_item(&l->timed_workload_timer, 100,
                    (h->now_ns - MIN(b->now_ns, h->now_ns)) /
                    (60 * NANOSECONDS_PER_SECOND));
}

void h3100_fill_dapu_smart(H3100State *s, H3100DapuSmartLog *l)
{
    H3100Health h;

    h3100_health(s, &h);
    /*
     * Left as new: program failures (the model's blocks fail at erase),
     * end-to-end and CRC errors, retry buffer overflows, PLL lock loss
     * (nothing in the drive model raises them).
     */
    H3100_DAPU_SMART_ITEMS(H3100_DAPU_NEW)
    h3100_dapu_item(&l->erase_fail_cnt, MIN(h.available_spare_pct, 100),
                    h.grown_bad_blocks);
    h3100_dapu_triple(&l->wear_leveling_cnt,
                      h3100_pct_left(h.percentage_used), h.erase_min,
                      h.erase_max, (uint64_t)h.erase_avg);
    h3100_dapu_timed(s, &h, l);
    /* raw: u8 percent, then u32 transition count */
    h3100_dapu_item(&l->thermal_throttle_status, 100,
                    h3100_throttle_pct(s, &h) |
                    (uint64_t)(h.tmt1_transitions + h.tmt2_transitions) << 8);
    h3100_dapu_item(&l->nand_bytes_written, 100,
                    h.nand_write_bytes / H3100_DAPU_BYTES_UNIT);
    h3100_dapu_item(&l->host_bytes_written, 100,
                    h.host_write_bytes / H3100_DAPU_BYTES_UNIT);
}

/* ---- DapuStor extended additional SMART (CBh) --------------------------- */

static uint16_t h3100_celsius(uint32_t kelvin)
{
    return kelvin > 273 ? kelvin - 273 : 0;
}

/* A new run: this run's extremes start from the first sample. */
void h3100_extremes_start(H3100State *s, const H3100Health *h)
{
    H3100Extremes *e = &s->ext;

    e->run_min_k = e->run_max_k = e->pon_k = h->temperature_k;
    e->pon_min_k = e->pon_min_k ? MIN(e->pon_min_k, e->pon_k) : e->pon_k;
    e->pon_max_k = MAX(e->pon_max_k, e->pon_k);
    e->power_min_mw = e->power_max_mw = h->power_mw;
    e->power_sum_mw = 0;
    e->power_samples = 0;
    h3100_extremes_note(s, h);        /* the first sample, counted once */
}

/* Every health check (a second of virtual time): the extremes so far. */
void h3100_extremes_note(H3100State *s, const H3100Health *h)
{
    H3100Extremes *e = &s->ext;
    uint32_t t = h->temperature_k;

    e->run_min_k = MIN(e->run_min_k, t);
    e->run_max_k = MAX(e->run_max_k, t);
    e->life_min_k = e->life_min_k ? MIN(e->life_min_k, t) : t;
    e->life_max_k = MAX(e->life_max_k, t);
    e->power_min_mw = MIN(e->power_min_mw, h->power_mw);
    e->power_max_mw = MAX(e->power_max_mw, h->power_mw);
    e->power_sum_mw += h->power_mw;
    e->power_samples++;
}

static void h3100_dapu_temps(H3100DapuItem *it, uint32_t max_k,
                             uint32_t min_k, uint32_t cur_k)
{
    h3100_dapu_triple(it, 100, h3100_celsius(max_k), h3100_celsius(min_k),
                      h3100_celsius(cur_k));
}

/* I/O commands of @opcode the drive holds now (fetched, not completed). */
static uint64_t h3100_inflight(H3100State *s, uint8_t opcode)
{
    uint64_t n = 0;

    for (unsigned q = 1; q <= s->max_ioqpairs; q++) {
        H3100Req *r;

        if (!s->sq[q]) {
            continue;
        }
        QTAILQ_FOREACH(r, &s->sq[q]->out_list, entry) {
            n += r->cmd.opcode == opcode;
        }
    }
    return n;
}

void h3100_fill_dapu_ext(H3100State *s, H3100DapuExtLog *l)
{
    const H3100Extremes *e = &s->ext;
    H3100Health h;

    h3100_health(s, &h);
    /* DRAM ECC and XOR parity: the model has neither, so they stay 0 */
    H3100_DAPU_EXT_ITEMS(H3100_DAPU_NEW)
    h3100_dapu_item(&l->sys_area_life_remain,
                    h3100_pct_left(h.percentage_used),
                    h3100_pct_left(h.percentage_used));
    h3100_dapu_item(&l->nand_bytes_read, 100,
                    h.nand_read_bytes / H3100_DAPU_BYTES_UNIT);
    h3100_dapu_temps(&l->temperature, e->run_max_k, e->run_min_k,
                     h.temperature_k);
    h3100_dapu_triple(&l->power_consumption, 100, e->power_max_mw,
                      e->power_min_mw, e->power_samples ?
                      e->power_sum_mw / e->power_samples : 0);
    h3100_dapu_temps(&l->power_on_temperature, e->pon_max_k, e->pon_min_k,
                     e->pon_k);
    h3100_dapu_item(&l->power_loss_protection, 100, 1);
    h3100_dapu_item(&l->read_fail_count, 100, h.ecc_host_uncorrectable);
    h3100_dapu_item(&l->thermal_throttle_time, 100,
                    (h.tmt1_ns + h.tmt2_ns) / NANOSECONDS_PER_SECOND);
    h3100_dapu_item(&l->flash_error_media_count, 100, s->media_errors);
    h3100_dapu_item(&l->lifetime_write_amplification, 100,
                    h3100_waf_milli(h.nand_write_bytes, h.host_write_bytes));
    h3100_dapu_item(&l->firmware_update_count, 100, e->fw_updates);
    h3100_dapu_item(&l->inflight_read_io_cmd, 100,
                    h3100_inflight(s, NVME_CMD_READ));
    h3100_dapu_temps(&l->temp_since_born, e->life_max_k, e->life_min_k,
                     h.temperature_k);
    h3100_dapu_temps(&l->temp_since_bootup, e->run_max_k, e->run_min_k,
                     h.temperature_k);
    h3100_dapu_item(&l->inflight_write_io_cmd, 100,
                    h3100_inflight(s, NVME_CMD_WRITE));
}
