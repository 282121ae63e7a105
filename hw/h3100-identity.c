/*
 * DapuStor H3100 NVMe SSD: who the drive is (serial, model number,
 * firmware, form factor, EUI-64 and NGUID)
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Every drive in a machine must be a different drive to the guest:
 * Linux rejects a second controller whose subsystem NQN (made from the
 * serial) it already knows, and drops namespaces whose EUI-64 or NGUID
 * another namespace has.  So the default serial is a hash of what tells
 * drives apart and stays the same across restarts of one configuration:
 * the device's QOM path (its id, or its place among anonymous devices),
 * the backing image's file name, the seed and the capacity.  A state
 * file remembers the serial it was first given, so the drive keeps it
 * wherever the file goes.  EUI-64 and NGUID are SHA-256 of the serial
 * and the seed: different serials give different IDs.
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "block/block_int.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-mgmt.h"
#include "h3100-life.h"

/* SHA-256 of @text into @digest */
static void h3100_sha256(const char *text, uint8_t digest[32])
{
    g_autoptr(GChecksum) ck = g_checksum_new(G_CHECKSUM_SHA256);
    gsize len = 32;

    g_checksum_update(ck, (const guchar *)text, strlen(text));
    g_checksum_get_digest(ck, digest, &len);
}

/* "DP" and 12 hex digits from the drive's place in the configuration */
static void h3100_default_serial(H3100State *s)
{
    BlockDriverState *bs = blk_bs(s->blk);
    g_autofree char *path = object_get_canonical_path(OBJECT(s));
    g_autofree char *key = g_strdup_printf("%s|%s|%" PRIu64 "|%u",
                                           path ? path : "",
                                           bs ? bs->filename : "",
                                           s->seed, s->cfg.nominal_gb);
    uint8_t d[32];

    h3100_sha256(key, d);
    snprintf(s->sn, sizeof(s->sn), "DP%02X%02X%02X%02X%02X%02X",
             d[0], d[1], d[2], d[3], d[4], d[5]);
}

static bool h3100_serial_init(H3100State *s, Error **errp)
{
    if (s->serial) {
        if (!*s->serial || strlen(s->serial) > 20) {
            error_setg(errp, "serial=%s: 1 to 20 characters", s->serial);
            return false;
        }
        for (const char *c = s->serial; *c; c++) {
            if (*c < 0x20 || *c > 0x7e) {
                error_setg(errp, "serial=%s: printable ASCII only",
                           s->serial);
                return false;
            }
        }
        pstrcpy(s->sn, sizeof(s->sn), s->serial);
    } else if (!h3100_pstate_serial(s, s->sn, sizeof(s->sn))) {
        h3100_default_serial(s);
    }
    return true;
}

/* nguid=: 32 hex digits, dashes anywhere (as a UUID is written) */
static bool h3100_parse_nguid(const char *text, uint8_t nguid[16])
{
    unsigned n = 0;

    for (const char *c = text; *c; c++) {
        if (*c == '-') {
            continue;
        }
        if (!g_ascii_isxdigit(*c) || n == 32) {
            return false;
        }
        nguid[n / 2] = (nguid[n / 2] << 4) | g_ascii_xdigit_value(*c);
        n++;
    }
    return n == 32;
}

/*
 * The namespace's EUI-64 (the IEEE OUI, then 40 bits) and NGUID, unless
 * set.  NGUID bytes 8-15 are an EUI-64 too, by the spec's layout: the
 * same one.
 */
static bool h3100_ns_ids_init(H3100State *s, Error **errp)
{
    g_autofree char *key = g_strdup_printf("%s|%" PRIu64, s->sn, s->seed);
    uint8_t d[32];

    h3100_sha256(key, d);
    if (!s->eui64) {
        s->eui64 = ((uint64_t)H3100_IEEE_OUI << 40) |
                   (ldq_be_p(d) & 0xffffffffffULL);
    }
    if (s->nguid_str) {
        if (!h3100_parse_nguid(s->nguid_str, s->nguid)) {
            error_setg(errp, "nguid=%s: 32 hex digits", s->nguid_str);
            return false;
        }
    } else {
        memcpy(s->nguid, d + 8, 8);
        stq_be_p(s->nguid + 8, s->eui64);
    }
    return true;
}

static void h3100_cap_code(char *buf, size_t len, uint32_t gb)
{
    /* "04T0" for 4 TB, "03T2" for 3.2 TB */
    snprintf(buf, len, "%02uT%u", MIN(gb / 1000, 99u), (gb % 1000) / 100);
}

static bool h3100_model_number_init(H3100State *s, Error **errp)
{
    const H3100Config *c = &s->cfg;
    uint32_t raw_gb = (uint32_t)(h3100_raw_data_bytes(c) / 1000000000ULL);
    uint32_t raw_tb;
    char raw[8], user[8];

    if (s->model_number) {
        if (strlen(s->model_number) > 40) {
            error_setg(errp, "model-number=%s: at most 40 characters",
                       s->model_number);
            return false;
        }
        pstrcpy(s->mn, sizeof(s->mn), s->model_number);
        return true;
    }
    /* raw NAND in whole TB, at least 1: "DPHV5104T0TA03T2000" */
    raw_tb = (raw_gb + 500) / 1000;
    h3100_cap_code(raw, sizeof(raw), (raw_tb ? raw_tb : 1) * 1000);
    h3100_cap_code(user, sizeof(user), c->nominal_gb);
    snprintf(s->mn, sizeof(s->mn), "DAPUSTOR DPH%s%sTA%s000",
             c->family == H3100_FAMILY_H3200 ? "32" : "31", raw, user);
    return true;
}

/* After the model (and its state file) is loaded. */
bool h3100_identity_init(H3100State *s, Error **errp)
{
    const H3100Config *c = &s->cfg;

    if (!s->form_factor || !strcmp(s->form_factor, "u2")) {
        s->subsys_id = c->subsystem_u2;
    } else if (!strcmp(s->form_factor, "hhhl")) {
        s->subsys_id = c->subsystem_hhhl;
    } else {
        error_setg(errp, "form-factor=%s: expected u2 or hhhl",
                   s->form_factor);
        return false;
    }
    if (!h3100_serial_init(s, errp) || !h3100_ns_ids_init(s, errp) ||
        !h3100_model_number_init(s, errp)) {
        return false;
    }
    if (!s->firmware) {               /* checked by h3100_check_props */
        s->firmware = g_strdup("H3D10060");
    }
    return true;
}
