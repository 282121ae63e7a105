/*
 * DapuStor H3100 drive model: built-in profiles and parameter overrides.
 *
 * Figures come from docs/reference/h3100.md; docs/design/calibration.md
 * says where each one comes from and which ones were tuned.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h3100/config.h"

G_DEFINE_QUARK(h3100-error-quark, h3100_error)

uint64_t h3100_idema_lba512(uint64_t gb)
{
    return 97696368ULL + 1953504ULL * (gb - 50);
}

typedef struct ProfileRow {
    const char *name;
    H3100Family family;
    uint32_t nominal_gb;
    uint32_t dies_per_channel;
    uint32_t subsystem_u2;
    uint32_t subsystem_hhhl;
    uint32_t active_mw;
    /* firmware costs the datasheet shows vary with capacity */
    uint32_t write_slot_ns;
    uint32_t gc_slot_ns;
} ProfileRow;

/*
 * The H3200 is the same hardware with less over-provisioning, so it
 * shares the raw NAND, dies and power of the H3100 of the same size.
 */
static const ProfileRow profiles[] = {
    { "h3100-0.8t", H3100_FAMILY_H3100, 800, 2, 0x0009, 0x006c, 8500,
      6175, 3790 },
    { "h3100-1.6t", H3100_FAMILY_H3100, 1600, 4, 0x000c, 0x006f, 9500,
      6175, 3790 },
    { "h3100-3.2t", H3100_FAMILY_H3100, 3200, 8, 0x0014, 0x007c, 10500,
      6175, 3790 },
    { "h3100-6.4t", H3100_FAMILY_H3100, 6400, 16, 0x0021, 0x007f, 11500,
      6300, 6310 },
    { "h3200-0.96t", H3100_FAMILY_H3200, 960, 2, 0x000a, 0x006d, 8500,
      6175, 3790 },
    { "h3200-1.92t", H3100_FAMILY_H3200, 1920, 4, 0x000d, 0x0070, 9500,
      6175, 3790 },
    { "h3200-3.84t", H3100_FAMILY_H3200, 3840, 8, 0x0015, 0x007d, 10500,
      6175, 3790 },
    { "h3200-7.68t", H3100_FAMILY_H3200, 7680, 16, 0x0022, 0x0080, 11500,
      6300, 6310 },
};

static const char *const profile_name_list[] = {
    "h3100-0.8t", "h3100-1.6t", "h3100-3.2t", "h3100-6.4t",
    "h3200-0.96t", "h3200-1.92t", "h3200-3.84t", "h3200-7.68t", NULL,
};

const char *const *h3100_profile_names(void)
{
    return profile_name_list;
}

/*
 * One heatsinked U.2 drive in a server's airflow, whatever its capacity:
 * the thermal resistance puts the 7 W idle drive at 40 C with 25 C inlet
 * air, so a fully busy 3.2 TB (10.5 W) settles near 47 C and a 6.4 TB
 * (11.5 W) near 50 C.  Thresholds are common enterprise values: warning
 * and light throttling at 70 C, heavy at 80 C, critical at 85 C.
 */
static void fill_thermal(H3100ThermalParams *t)
{
    t->ambient_k = 298;
    t->thermal_r_mk_per_w = 2143;     /* (313 K - 298 K) / 7 W */
    t->thermal_tau_ms = 60000;
    t->wctemp_k = 343;
    t->cctemp_k = 358;
    t->tmt1_k = 343;
    t->tmt2_k = 353;
    t->throttle_hyst_k = 2;
    t->throttle_light_pct = 50;
    t->throttle_heavy_pct = 20;
}

/*
 * 96-layer TLC and a 4th-generation LDPC (docs/design/calibration.md, "Ageing",
 * for the sources and the estimates): the raw bit error rate grows from
 * 5e-5 to 1.25e-3 over the rated cycles and several times more with the
 * data's age on a worn block; a hard decode corrects up to 166 errors of
 * a 36,864-bit codeword (0.45%), a soft decode up to 405 (1.1%).  Page
 * variation is capped at 3 sigma so that, at the rated wear and 90 days
 * of age, no read is uncorrectable (UBER < 1e-17).
 */
static void fill_reliability(H3100ReliabilityParams *r)
{
    r->rber_fresh_ppb = 50000;
    r->rber_rated_ppb = 1200000;
    r->rber_wear_milli = 3000;
    r->retention_milli = 100;
    r->retention_wear_milli = 350;
    r->retention_tau_hours = 24;
    r->page_sigma_milli = 350;
    r->ptype_milli[0] = 600;
    r->ptype_milli[1] = 1000;
    r->ptype_milli[2] = 1400;
    r->codeword_bits = 36864;
    r->hard_limit_bits = 166;
    r->soft_limit_bits = 405;
    r->ecc_slow_pct = 100;
    r->read_retries = 3;
    r->retry_keep_milli = 500;
    r->soft_reads = 2;
    r->soft_decode_ns = 40000;
    r->age_days = 0;
}

static void fill_common(H3100Config *cfg)
{
    H3100Geometry *g = &cfg->geo;
    H3100NandTiming *n = &cfg->nand;
    H3100CtrlTiming *c = &cfg->ctrl;
    H3100LinkTiming *l = &cfg->link;

    g->channels = 8;
    g->planes_per_die = 2;
    g->blocks_per_plane = 1848;
    g->spare_blocks_per_plane = 28;
    g->pages_per_block = 1152;
    g->page_bytes = 16384;
    g->bits_per_cell = 3;

    n->t_read_ns[0] = 40000;
    n->t_read_ns[1] = 50000;
    n->t_read_ns[2] = 60000;
    n->t_prog_ns = 1180000;
    n->t_erase_ns = 3500000;
    n->t_suspend_ns = 15000;
    n->t_resume_ns = 5000;
    n->max_suspends = 5;
    n->channel_mbps = 800;
    n->t_cmd_ns = 300;

    c->cores = 4;
    c->read_cmd_ns = 4200;
    c->read_slot_ns = 770;
    c->write_cmd_ns = 3800;
    /* write_slot_ns and gc_slot_ns: the profile's row */
    c->gc_page_ns = 4200;
    c->trim_cmd_ns = 1500;
    c->trim_slot_ns = 15;
    c->admin_cmd_ns = 2000;
    c->read_fw_ns = 7000;
    c->write_fw_ns = 3295;
    c->ecc_ns = 17000;
    c->dram_mbps = 12800;

    l->lanes = 4;
    l->mt_per_s = 8000;
    l->encoding_num = 128;
    l->encoding_den = 130;
    l->mps = 256;
    l->tlp_overhead = 24;
    l->dllp_permille = 20;
    l->sq_fetch_ns = 1000;
    l->dma_read_ns = 1000;
    l->cq_post_ns = 600;

    cfg->cache.write_buffer_bytes = 32ULL << 20;
    cfg->cache.readahead_bytes = 512 << 10;
    cfg->cache.readahead_trigger = 2;
    cfg->cache.readahead_streams = 4;

    cfg->ftl.gc_bg_free = 4;
    cfg->ftl.gc_fg_free = 2;
    cfg->ftl.wl_threshold = 200;
    cfg->ftl.wl_enabled = 1;
    cfg->ftl.factory_bad_ppm = 5000;
    cfg->ftl.grown_bad_ppm = 2;
    cfg->ftl.rated_pe = 7000;
    cfg->ftl.spare_threshold_pct = 10;

    cfg->idle_mw = 7000;
    fill_thermal(&cfg->thermal);
    fill_reliability(&cfg->rel);
    cfg->seed = 1;
}

bool h3100_profile_load(H3100Config *cfg, const char *name, GError **errp)
{
    for (size_t i = 0; i < G_N_ELEMENTS(profiles); i++) {
        const ProfileRow *p = &profiles[i];

        if (g_ascii_strcasecmp(p->name, name) != 0) {
            continue;
        }
        memset(cfg, 0, sizeof(*cfg));
        fill_common(cfg);
        g_strlcpy(cfg->profile, p->name, sizeof(cfg->profile));
        cfg->family = p->family;
        cfg->nominal_gb = p->nominal_gb;
        cfg->subsystem_u2 = p->subsystem_u2;
        cfg->subsystem_hhhl = p->subsystem_hhhl;
        cfg->active_mw = p->active_mw;
        cfg->geo.dies_per_channel = p->dies_per_channel;
        cfg->geo.user_bytes = h3100_idema_lba512(p->nominal_gb) * 512;
        cfg->ctrl.write_slot_ns = p->write_slot_ns;
        cfg->ctrl.gc_slot_ns = p->gc_slot_ns;
        return true;
    }
    g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                "unknown drive profile '%s' (try h3100-3.2t)", name);
    return false;
}

typedef struct Field {
    const char *name;
    size_t offset;
    uint8_t size;                     /* 4 or 8 */
    uint64_t min;
    uint64_t max;
} Field;

#define F32(n, member, lo, hi) \
    { n, offsetof(H3100Config, member), 4, lo, hi }
#define F64(n, member, lo, hi) \
    { n, offsetof(H3100Config, member), 8, lo, hi }

static const Field fields[] = {
    F32("channels", geo.channels, 1, 32),
    F32("dies_per_channel", geo.dies_per_channel, 1, 32),
    F32("planes_per_die", geo.planes_per_die, 1, 4),
    F32("blocks_per_plane", geo.blocks_per_plane, 4, 65535),
    F32("spare_blocks_per_plane", geo.spare_blocks_per_plane, 0, 65535),
    F32("pages_per_block", geo.pages_per_block, 1, 16384),
    F32("page_bytes", geo.page_bytes, 4096, 65536),
    F32("bits_per_cell", geo.bits_per_cell, 1, 3),
    F64("user_bytes", geo.user_bytes, 1 << 20, 1ULL << 50),
    F32("t_read_lsb_ns", nand.t_read_ns[0], 1000, 1000000),
    F32("t_read_csb_ns", nand.t_read_ns[1], 1000, 1000000),
    F32("t_read_msb_ns", nand.t_read_ns[2], 1000, 1000000),
    F32("t_prog_ns", nand.t_prog_ns, 10000, 20000000),
    F32("t_erase_ns", nand.t_erase_ns, 10000, 50000000),
    F32("t_suspend_ns", nand.t_suspend_ns, 0, 1000000),
    F32("t_resume_ns", nand.t_resume_ns, 0, 1000000),
    F32("max_suspends", nand.max_suspends, 0, 100),
    F32("channel_mbps", nand.channel_mbps, 10, 10000),
    F32("t_cmd_ns", nand.t_cmd_ns, 0, 100000),
    F32("cores", ctrl.cores, 1, H3100_MAX_CORES),
    F32("read_cmd_ns", ctrl.read_cmd_ns, 0, 1000000),
    F32("read_slot_ns", ctrl.read_slot_ns, 0, 1000000),
    F32("write_cmd_ns", ctrl.write_cmd_ns, 0, 1000000),
    F32("write_slot_ns", ctrl.write_slot_ns, 0, 1000000),
    F32("gc_slot_ns", ctrl.gc_slot_ns, 0, 1000000),
    F32("gc_page_ns", ctrl.gc_page_ns, 0, 1000000),
    F32("trim_cmd_ns", ctrl.trim_cmd_ns, 0, 1000000),
    F32("trim_slot_ns", ctrl.trim_slot_ns, 0, 1000000),
    F32("admin_cmd_ns", ctrl.admin_cmd_ns, 0, 1000000),
    F32("read_fw_ns", ctrl.read_fw_ns, 0, 1000000),
    F32("write_fw_ns", ctrl.write_fw_ns, 0, 1000000),
    F32("ecc_ns", ctrl.ecc_ns, 0, 1000000),
    F32("dram_mbps", ctrl.dram_mbps, 100, 1000000),
    F32("lanes", link.lanes, 1, 16),
    F32("mt_per_s", link.mt_per_s, 2500, 64000),
    F32("encoding_num", link.encoding_num, 1, 1024),
    F32("encoding_den", link.encoding_den, 1, 1024),
    F32("mps", link.mps, 128, 4096),
    F32("tlp_overhead", link.tlp_overhead, 0, 256),
    F32("dllp_permille", link.dllp_permille, 0, 500),
    F32("sq_fetch_ns", link.sq_fetch_ns, 0, 1000000),
    F32("dma_read_ns", link.dma_read_ns, 0, 1000000),
    F32("cq_post_ns", link.cq_post_ns, 0, 1000000),
    F64("write_buffer_bytes", cache.write_buffer_bytes, 0, 1ULL << 34),
    F32("readahead_bytes", cache.readahead_bytes, 0, 64 << 20),
    F32("readahead_trigger", cache.readahead_trigger, 1, 1000),
    F32("readahead_streams", cache.readahead_streams, 0, 64),
    F32("gc_bg_free", ftl.gc_bg_free, 2, 100000),
    F32("gc_fg_free", ftl.gc_fg_free, 1, 100000),
    F32("wl_threshold", ftl.wl_threshold, 1, 1000000),
    F32("wl_enabled", ftl.wl_enabled, 0, 1),
    F32("factory_bad_ppm", ftl.factory_bad_ppm, 0, 500000),
    F32("grown_bad_ppm", ftl.grown_bad_ppm, 0, 1000000),
    F32("rated_pe", ftl.rated_pe, 1, 1000000),
    F32("spare_threshold_pct", ftl.spare_threshold_pct, 0, 100),
    F32("idle_mw", idle_mw, 0, 1000000),
    F32("active_mw", active_mw, 0, 1000000),
    F32("ambient_k", thermal.ambient_k, 200, 400),
    F32("thermal_r_mk_per_w", thermal.thermal_r_mk_per_w, 0, 100000),
    F32("thermal_tau_ms", thermal.thermal_tau_ms, 1, 3600000),
    F32("wctemp_k", thermal.wctemp_k, 273, 500),
    F32("cctemp_k", thermal.cctemp_k, 273, 500),
    F32("tmt1_k", thermal.tmt1_k, 273, 500),
    F32("tmt2_k", thermal.tmt2_k, 273, 500),
    F32("throttle_hyst_k", thermal.throttle_hyst_k, 0, 50),
    F32("throttle_light_pct", thermal.throttle_light_pct, 1, 100),
    F32("throttle_heavy_pct", thermal.throttle_heavy_pct, 1, 100),
    F32("rber_fresh_ppb", rel.rber_fresh_ppb, 0, 100000000),
    F32("rber_rated_ppb", rel.rber_rated_ppb, 0, 100000000),
    F32("rber_wear_milli", rel.rber_wear_milli, 1, 20000),
    F32("retention_milli", rel.retention_milli, 0, 100000),
    F32("retention_wear_milli", rel.retention_wear_milli, 0, 100000),
    F32("retention_tau_hours", rel.retention_tau_hours, 1, 1000000),
    F32("page_sigma_milli", rel.page_sigma_milli, 0, 2000),
    F32("ptype_lsb_milli", rel.ptype_milli[0], 0, 10000),
    F32("ptype_csb_milli", rel.ptype_milli[1], 0, 10000),
    F32("ptype_msb_milli", rel.ptype_milli[2], 0, 10000),
    F32("codeword_bits", rel.codeword_bits, 1024, 1000000),
    F32("hard_limit_bits", rel.hard_limit_bits, 0, 100000),
    F32("soft_limit_bits", rel.soft_limit_bits, 0, 100000),
    F32("ecc_slow_pct", rel.ecc_slow_pct, 0, 10000),
    F32("read_retries", rel.read_retries, 0, H3100_READ_RETRIES_MAX),
    F32("retry_keep_milli", rel.retry_keep_milli, 0, 1000),
    F32("soft_reads", rel.soft_reads, 0, 8),
    F32("soft_decode_ns", rel.soft_decode_ns, 0, 10000000),
    F32("age_days", rel.age_days, 0, 36500),
    F64("seed", seed, 0, UINT64_MAX),
};

static const Field *field_find(const char *key)
{
    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) {
        if (strcmp(fields[i].name, key) == 0) {
            return &fields[i];
        }
    }
    return NULL;
}

/* Accept plain integers and binary size suffixes (k, M, G, T). */
static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    uint64_t v;

    if (!s || !*s || *s == '-') {
        return false;
    }
    errno = 0;
    v = g_ascii_strtoull(s, &end, 0);
    if (errno || end == s) {
        return false;
    }
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    case 't': case 'T': v <<= 40; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B') {
        end++;
    }
    *out = v;
    return *end == '\0';
}

bool h3100_config_set(H3100Config *cfg, const char *key, const char *value,
                      GError **errp)
{
    const Field *f = field_find(key);
    uint64_t v;

    if (!f) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "unknown drive parameter '%s'", key);
        return false;
    }
    if (!parse_u64(value, &v) || v < f->min || v > f->max) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "parameter %s='%s': expected an integer from %" PRIu64
                    " to %" PRIu64, key, value, f->min, f->max);
        return false;
    }
    if (f->size == 4) {
        uint32_t v32 = (uint32_t)v;
        memcpy((char *)cfg + f->offset, &v32, 4);
    } else {
        memcpy((char *)cfg + f->offset, &v, 8);
    }
    return true;
}

bool h3100_config_apply(H3100Config *cfg, const char *list, GError **errp)
{
    g_auto(GStrv) items = NULL;

    if (!list || !*list) {
        return true;
    }
    items = g_strsplit(list, ",", -1);
    for (char **it = items; *it; it++) {
        char *eq = strchr(*it, '=');
        g_autofree char *key = NULL;

        if (!**it) {
            continue;
        }
        if (!eq) {
            g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                        "drive parameter '%s' has no '=value'", *it);
            return false;
        }
        key = g_strndup(*it, eq - *it);
        if (!h3100_config_set(cfg, key, eq + 1, errp)) {
            return false;
        }
    }
    return true;
}

static uint64_t field_get(const H3100Config *cfg, const Field *f)
{
    uint64_t v = 0;

    if (f->size == 4) {
        uint32_t v32;
        memcpy(&v32, (const char *)cfg + f->offset, 4);
        v = v32;
    } else {
        memcpy(&v, (const char *)cfg + f->offset, 8);
    }
    return v;
}

void h3100_config_print(const H3100Config *cfg, FILE *out)
{
    fprintf(out, "profile = %s\n", cfg->profile);
    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) {
        fprintf(out, "%s = %" PRIu64 "\n", fields[i].name,
                field_get(cfg, &fields[i]));
    }
}

char *h3100_config_to_string(const H3100Config *cfg)
{
    GString *s = g_string_new(NULL);

    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) {
        g_string_append_printf(s, "%s%s=%" PRIu64, i ? "," : "",
                               fields[i].name, field_get(cfg, &fields[i]));
    }
    return g_string_free(s, false);
}

char *h3100_config_diff(const H3100Config *here, const H3100Config *there)
{
    if (strncmp(here->profile, there->profile, sizeof(here->profile))) {
        return g_strdup_printf("profile=%.*s here, %.*s there",
                               (int)sizeof(here->profile), here->profile,
                               (int)sizeof(there->profile), there->profile);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) {
        uint64_t a = field_get(here, &fields[i]);
        uint64_t b = field_get(there, &fields[i]);

        if (a != b) {
            return g_strdup_printf("%s=%" PRIu64 " here, %" PRIu64 " there",
                                   fields[i].name, a, b);
        }
    }
    return NULL;
}

uint32_t h3100_dies(const H3100Config *cfg)
{
    return cfg->geo.channels * cfg->geo.dies_per_channel;
}

uint32_t h3100_slots_per_page(const H3100Config *cfg)
{
    return cfg->geo.page_bytes / H3100_SLOT_BYTES;
}

/* A program unit: one word line (all its page types) on every plane. */
uint32_t h3100_slots_per_unit(const H3100Config *cfg)
{
    return h3100_slots_per_page(cfg) * cfg->geo.planes_per_die *
           cfg->geo.bits_per_cell;
}

uint64_t h3100_slots_per_superblock(const H3100Config *cfg)
{
    uint64_t wordlines = cfg->geo.pages_per_block / cfg->geo.bits_per_cell;

    return (uint64_t)h3100_slots_per_unit(cfg) * h3100_dies(cfg) * wordlines;
}

uint32_t h3100_superblocks(const H3100Config *cfg)
{
    return cfg->geo.blocks_per_plane - cfg->geo.spare_blocks_per_plane;
}

uint64_t h3100_user_slots(const H3100Config *cfg)
{
    return cfg->geo.user_bytes / H3100_SLOT_BYTES;
}

uint64_t h3100_raw_data_bytes(const H3100Config *cfg)
{
    return (uint64_t)h3100_superblocks(cfg) *
           h3100_slots_per_superblock(cfg) * H3100_SLOT_BYTES;
}

static bool invalid(GError **errp, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static bool invalid(GError **errp, const char *fmt, ...)
{
    va_list ap;
    g_autofree char *msg = NULL;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(errp, H3100_ERROR, H3100_ERROR_INVALID, msg);
    return false;
}

static bool thermal_validate(const H3100ThermalParams *t, GError **errp)
{
    if (t->tmt1_k >= t->tmt2_k) {
        return invalid(errp, "tmt1_k=%u must be below tmt2_k=%u (light "
                       "throttling starts before heavy)", t->tmt1_k,
                       t->tmt2_k);
    }
    if (t->wctemp_k >= t->cctemp_k) {
        return invalid(errp, "wctemp_k=%u must be below cctemp_k=%u",
                       t->wctemp_k, t->cctemp_k);
    }
    if (t->throttle_heavy_pct > t->throttle_light_pct) {
        return invalid(errp, "throttle_heavy_pct=%u must not exceed "
                       "throttle_light_pct=%u", t->throttle_heavy_pct,
                       t->throttle_light_pct);
    }
    return true;
}

bool h3100_config_validate(const H3100Config *cfg, GError **errp)
{
    const H3100Geometry *g = &cfg->geo;
    uint64_t sb_slots, reserve, needed;

    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++) {
        const Field *f = &fields[i];
        uint64_t v = field_get(cfg, f);

        if (v < f->min || v > f->max) {
            return invalid(errp, "parameter %s=%" PRIu64 " is outside %"
                           PRIu64 "..%" PRIu64, f->name, v, f->min, f->max);
        }
    }
    if (g->page_bytes % H3100_SLOT_BYTES) {
        return invalid(errp, "page_bytes=%u is not a multiple of 4096",
                       g->page_bytes);
    }
    if (g->pages_per_block % g->bits_per_cell) {
        return invalid(errp, "pages_per_block=%u is not a multiple of "
                       "bits_per_cell=%u", g->pages_per_block,
                       g->bits_per_cell);
    }
    if (g->user_bytes % H3100_SLOT_BYTES) {
        return invalid(errp, "user_bytes=%" PRIu64 " is not a multiple of "
                       "4096", g->user_bytes);
    }
    if (g->spare_blocks_per_plane >= g->blocks_per_plane) {
        return invalid(errp, "spare_blocks_per_plane=%u leaves no blocks",
                       g->spare_blocks_per_plane);
    }
    if (cfg->ftl.gc_fg_free >= cfg->ftl.gc_bg_free) {
        return invalid(errp, "gc_fg_free=%u must be below gc_bg_free=%u",
                       cfg->ftl.gc_fg_free, cfg->ftl.gc_bg_free);
    }
    if (!thermal_validate(&cfg->thermal, errp)) {
        return false;
    }
    if (cfg->rel.soft_limit_bits < cfg->rel.hard_limit_bits) {
        return invalid(errp, "soft_limit_bits=%u is below hard_limit_bits=%u",
                       cfg->rel.soft_limit_bits, cfg->rel.hard_limit_bits);
    }
    if (cfg->link.encoding_num > cfg->link.encoding_den) {
        return invalid(errp, "link encoding %u/%u is above 1",
                       cfg->link.encoding_num, cfg->link.encoding_den);
    }
    sb_slots = h3100_slots_per_superblock(cfg);
    if (sb_slots > UINT32_MAX / 2 ||
        (uint64_t)h3100_superblocks(cfg) * sb_slots >= UINT32_MAX) {
        return invalid(errp, "raw NAND of %" PRIu64 " bytes is beyond the "
                       "model's 32-bit physical addresses",
                       h3100_raw_data_bytes(cfg));
    }
    if (h3100_user_slots(cfg) >= UINT32_MAX) {
        return invalid(errp, "user capacity is beyond 32-bit page numbers");
    }
    /* open superblocks (streams + reclaim) and the reclaim reserve */
    reserve = (uint64_t)(2 * H3100_MAX_STREAMS + cfg->ftl.gc_bg_free + 1) *
              sb_slots;
    needed = h3100_user_slots(cfg) + reserve;
    if ((uint64_t)h3100_superblocks(cfg) * sb_slots < needed) {
        return invalid(errp, "user capacity %" PRIu64 " bytes does not fit "
                       "in %u superblocks of %" PRIu64 " bytes with the "
                       "reclaim reserve (needs %" PRIu64 " superblocks)",
                       g->user_bytes, h3100_superblocks(cfg),
                       sb_slots * H3100_SLOT_BYTES,
                       (needed + sb_slots - 1) / sb_slots);
    }
    if (cfg->cache.write_buffer_bytes <
        (uint64_t)h3100_slots_per_unit(cfg) * H3100_SLOT_BYTES *
        H3100_MAX_STREAMS) {
        return invalid(errp, "write_buffer_bytes=%" PRIu64 " is below one "
                       "program unit per stream",
                       cfg->cache.write_buffer_bytes);
    }
    return true;
}
