/*
 * DapuStor H3100 NVMe SSD: persistent drive state (state=FILE)
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * FILE is the drive model's saved state (models/state.c, STATE_VERSION: FTL
 * map, block states, erase counts, bad blocks, counters) with the
 * device's own state in the model file's extra section, inside its
 * checksum.  The device part, little-endian (its fixed header, to 120,
 * is H3100DsHeader below; the build checks the offsets):
 *
 *    0  char[4]     "H3DS"
 *    4  u32         version (7; 6 has no flags in its uncorrectable
 *                   ranges, 5 no LBA status state, 4 no namespace
 *                   table, 3 no CBh lifetime fields, 2 no serial, 1 no
 *                   recent-WAF samples)
 *    8  u64         power-on time, ns, summed over every run
 *   16  u64         power cycles (starts of the device)
 *   24  u64         unsafe shutdowns
 *   32  u64         error log entries (lifetime count)
 *   40  u64         media errors
 *   48  char[3][8]  firmware slots 1-3 (zeroes: empty)
 *   72  u8          active slot (1-3)
 *   73  u8          slot activated at the next start, 0 none
 *   74  u16         K, recent-WAF samples (<= H3100_WAF_RING; 0 in v1)
 *   76  u32         N, uncorrectable ranges (<= H3100_UNCOR_MAX)
 *   80  char[20]    serial number, NUL-padded printable ASCII (v3)
 *  100  u32 x 5     log CBh over the drive's life (v4): temperature min,
 *                   max, temperature at power-on min, max (kelvin, 0 =
 *                   not seen; min <= max), firmware activations
 *  120  N x { u64 start, u64 end, u8 flags, u8[7] 0 }  NVM bytes,
 *       sorted, disjoint; flags H3100_UNCOR_* (bit 0 a media fault's,
 *       bit 1 its reads fail with DNR; 0 Write Uncorrectable's).  Before
 *       version 7 N x { u64 start, u64 end }, flags 0 (at 100 in version
 *       3, 80 in versions 1 and 2)
 *   ..  K x { u64 power-on ns, u64 host bytes, u64 NAND bytes }, oldest
 *       first: the vendor log's recent WAF goes on across a restart
 *   ..  (v6) u16 log 0Eh's LSGC, u8 1 if LBAs became tracked since the
 *       host last read log 0Eh (else 0), u8 0: LSGC is persistent across
 *       power on.  Older versions: 0, 0
 *   ..  (v5) u32 namespaces created (mod 2^32), u32 M, then M x
 *       H3100_DS_NS_BYTES { u32 NSID, u8 H3100NsState, u8 lbads (9 or
 *       12), u16 0, u32 creation number (any value), u32 0, u64 base,
 *       u64 bytes }: the allocated namespaces, NSIDs ascending, extents
 *       disjoint and inside the NVM space.  Older versions: one
 *       namespace, the lba_size property's format.  A namespace being
 *       deleted is saved so (its erase goes on at the next start); one
 *       being formatted is saved in its old format.
 *
 * An empty extra section (a file saved by h3100-sim, or model state
 * version 1) means a drive fresh from the factory: device defaults.
 *
 * Life of the file: at realize it is loaded (or created, if missing or
 * with state-reset=on) and marked dirty (H3100_STATE_DIRTY in its
 * header).  Checkpoints every state-interval seconds of virtual time
 * save it, still dirty, from a forked child so the guest only waits for
 * the fork.  A clean stop (QEMU exits or the device is unplugged) saves
 * it clean.  A file found dirty at start-up was not closed cleanly: one
 * more unsafe shutdown.
 *
 * Migration (h3100-migrate.c): the file has one writer.  While a
 * destination loads (-incoming, or loadvm) nothing is written; a
 * destination that has loaded takes the file over with a checkpoint of
 * the drive it received, and the source, suspended since the VM stopped
 * for the last round, writes it no more (unless the migration fails).
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "system/runstate.h"
#include "system/system.h"
#include "h3100.h"
#include "h3100-core.h"
#include "h3100-mgmt.h"
#include "h3100-life.h"
#include "trace.h"

#define H3100_DS_MAGIC      "H3DS"
#define H3100_DS_VERSION    7
#define H3100_DS_SERIAL     20

/* The header above, little-endian: the one definition of its layout */
typedef struct QEMU_PACKED H3100DsHeader {
    char magic[4];
    uint32_t version;
    uint64_t power_on_ns;
    uint64_t power_cycles;
    uint64_t unsafe_shutdowns;
    uint64_t error_count;
    uint64_t media_errors;
    uint8_t fw_slot[H3100_FW_SLOTS][8];
    uint8_t fw_active;
    uint8_t fw_next;
    uint16_t nwaf;                    /* K (version 2) */
    uint32_t nuncor;                  /* N */
    char serial[H3100_DS_SERIAL];     /* version 3 */
    uint32_t life_min_k;              /* version 4: log CBh's lifetime */
    uint32_t life_max_k;
    uint32_t pon_min_k;
    uint32_t pon_max_k;
    uint32_t fw_updates;
} H3100DsHeader;

/* how much of it each version has */
#define H3100_DS_HDR_V2     offsetof(H3100DsHeader, serial)
#define H3100_DS_HDR_V3     offsetof(H3100DsHeader, life_min_k)
#define H3100_DS_HDR_BYTES  sizeof(H3100DsHeader)

_Static_assert(offsetof(H3100DsHeader, fw_slot) == 48, "H3DS layout");
_Static_assert(offsetof(H3100DsHeader, fw_active) == 72, "H3DS layout");
_Static_assert(offsetof(H3100DsHeader, nuncor) == 76, "H3DS layout");
_Static_assert(H3100_DS_HDR_V2 == 80, "H3DS layout: versions 1 and 2");
_Static_assert(H3100_DS_HDR_V3 == 100, "H3DS layout: version 3");
_Static_assert(H3100_DS_HDR_BYTES == 120, "H3DS layout: versions 4 and 5");
#define H3100_DS_TEMP_MAX_K 473               /* 200 C: no drive lives */
#define H3100_DS_WAF_BYTES  24
#define H3100_DS_NS_HDR     8
#define H3100_DS_NS_BYTES   32
#define H3100_DS_LSI_BYTES  4
#define H3100_DS_UNCOR_V6   16        /* an uncorrectable range, v1-6 */

/* The namespace table (version 5; migration carries it too) */
void h3100_pstate_pack_ns(H3100State *s, GByteArray *b)
{
    uint8_t hdr[H3100_DS_NS_HDR];
    uint32_t m = 0;

    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        m += s->ns[i].state != H3100_NS_FREE;
    }
    stl_le_p(hdr, s->ns_gen);
    stl_le_p(hdr + 4, m);
    g_byte_array_append(b, hdr, sizeof(hdr));
    for (uint32_t i = 1; i <= H3100_NS_MAX; i++) {
        H3100Namespace *ns = &s->ns[i];
        uint8_t e[H3100_DS_NS_BYTES] = { 0 };

        if (ns->state == H3100_NS_FREE) {
            continue;
        }
        stl_le_p(e, i);
        e[4] = ns->state;
        e[5] = ns->lbads;
        stl_le_p(e + 8, ns->gen);
        stq_le_p(e + 16, ns->base);
        stq_le_p(e + 24, ns->bytes);
        g_byte_array_append(b, e, sizeof(e));
    }
}

/*
 * The namespace table at @p, @len bytes (version 5): checked, and copied
 * into the device when @apply.
 */
bool h3100_pstate_ns(H3100State *s, const uint8_t *p, gsize len, bool apply)
{
    H3100Namespace ns[H3100_NS_MAX + 1] = { 0 };
    uint32_t gen, m, prev = 0;

    if (len < H3100_DS_NS_HDR) {
        return false;
    }
    gen = ldl_le_p(p);
    m = ldl_le_p(p + 4);
    if (m > H3100_NS_MAX || len != H3100_DS_NS_HDR + m * H3100_DS_NS_BYTES) {
        return false;
    }
    for (uint32_t i = 0; i < m; i++) {
        const uint8_t *e = p + H3100_DS_NS_HDR + i * H3100_DS_NS_BYTES;
        uint32_t nsid = ldl_le_p(e);
        H3100Namespace *n = &ns[nsid <= H3100_NS_MAX ? nsid : 0];

        *n = (H3100Namespace) {
            .state = e[4], .lbads = e[5], .gen = ldl_le_p(e + 8),
            .base = ldq_le_p(e + 16), .bytes = ldq_le_p(e + 24),
        };
        if (nsid <= prev || nsid > H3100_NS_MAX ||
            n->state == H3100_NS_FREE || n->state > H3100_NS_DELETING ||
            (n->lbads != 9 && n->lbads != 12) ||
            !n->bytes || (n->bytes & ((1ull << n->lbads) - 1)) ||
            n->base % H3100_NS_ALIGN || n->base > s->nvm_bytes ||
            n->bytes > s->nvm_bytes - n->base) {
            return false;
        }
        for (uint32_t j = 1; j < nsid; j++) {
            if (ns[j].state != H3100_NS_FREE && ns[j].base < n->base +
                n->bytes && n->base < ns[j].base + ns[j].bytes) {
                return false;         /* two namespaces overlap */
            }
        }
        prev = nsid;
    }
    if (apply) {
        memcpy(s->ns, ns, sizeof(ns));
        memset(&s->ns[0], 0, sizeof(s->ns[0]));
        s->ns_gen = gen;
    }
    return true;
}

/* The device's part of the file, from the live device. */
static GByteArray *h3100_pstate_pack(H3100State *s)
{
    GByteArray *b = g_byte_array_sized_new(H3100_DS_HDR_BYTES +
                                           s->uncor->len *
                                           H3100_DS_UNCOR_BYTES);
    H3100DsHeader hdr = {
        .version = cpu_to_le32(H3100_DS_VERSION),
        .power_on_ns = cpu_to_le64(s->power_on_base_ns + h3100_now(s)),
        .power_cycles = cpu_to_le64(s->power_cycles),
        .unsafe_shutdowns = cpu_to_le64(s->unsafe_shutdowns),
        .error_count = cpu_to_le64(s->error_count),
        .media_errors = cpu_to_le64(s->media_errors),
        .fw_active = s->fw.active,
        .fw_next = s->fw.next,
        .nwaf = cpu_to_le16(s->waf_count),
        .nuncor = cpu_to_le32(s->uncor->len),
        .life_min_k = cpu_to_le32(s->ext.life_min_k),
        .life_max_k = cpu_to_le32(s->ext.life_max_k),
        .pon_min_k = cpu_to_le32(s->ext.pon_min_k),
        .pon_max_k = cpu_to_le32(s->ext.pon_max_k),
        .fw_updates = cpu_to_le32(s->ext.fw_updates),
    };

    memcpy(hdr.magic, H3100_DS_MAGIC, sizeof(hdr.magic));
    for (unsigned i = 0; i < H3100_FW_SLOTS; i++) {
        memcpy(hdr.fw_slot[i], s->fw.slot[i + 1], sizeof(hdr.fw_slot[i]));
    }
    memcpy(hdr.serial, s->sn, strnlen(s->sn, H3100_DS_SERIAL));
    g_byte_array_append(b, (const uint8_t *)&hdr, sizeof(hdr));
    h3100_pstate_pack_uncor(s, b);
    for (unsigned i = 0; i < s->waf_count; i++) {
        H3100WafSample *w = &s->waf_ring[(s->waf_head + i) % H3100_WAF_RING];
        uint8_t e[H3100_DS_WAF_BYTES];

        stq_le_p(e, w->ns);
        stq_le_p(e + 8, w->host);
        stq_le_p(e + 16, w->nand);
        g_byte_array_append(b, e, sizeof(e));
    }
    {
        uint8_t lsi[H3100_DS_LSI_BYTES] = { 0 };

        stw_le_p(lsi, s->lsi.gen);
        lsi[2] = s->lsi.gen_new;
        g_byte_array_append(b, lsi, sizeof(lsi));
    }
    h3100_pstate_pack_ns(s, b);
    return b;
}

/* The uncorrectable ranges: N x { u64 start, u64 end, u8 flags, u8[7] } */
void h3100_pstate_pack_uncor(H3100State *s, GByteArray *b)
{
    for (guint i = 0; i < s->uncor->len; i++) {
        H3100Range *r = &g_array_index(s->uncor, H3100Range, i);
        uint8_t e[H3100_DS_UNCOR_BYTES] = { 0 };

        stq_le_p(e, r->start);
        stq_le_p(e + 8, r->end);
        e[16] = r->flags;
        g_byte_array_append(b, e, sizeof(e));
    }
}

/* A range's flags, and the bytes after them (0): known ones, DNR injected */
static bool h3100_pstate_uncor_flags_ok(const uint8_t *e)
{
    uint8_t flags = e[16];

    return !(flags & ~H3100_UNCOR_FLAGS) &&
           (!(flags & H3100_UNCOR_DNR) || (flags & H3100_UNCOR_INJECTED)) &&
           !ldl_le_p(e + 17) && !lduw_le_p(e + 21) && !e[23];
}

/*
 * The @n uncorrectable ranges at @p, @size bytes each (16: version 6 and
 * before, no flags; H3100_DS_UNCOR_BYTES): sorted, disjoint, inside the
 * NVM space.  Appended to the device's table when @apply.
 */
bool h3100_pstate_uncor(H3100State *s, const uint8_t *p, uint32_t n,
                        size_t size, bool apply)
{
    uint64_t prev_end = 0;

    if (n > H3100_UNCOR_MAX) {
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = p + (size_t)i * size;
        H3100Range r = {
            .start = ldq_le_p(e),
            .end = ldq_le_p(e + 8),
        };

        if (r.start >= r.end || r.start < prev_end || r.end > s->nvm_bytes ||
            (size == H3100_DS_UNCOR_BYTES &&
             !h3100_pstate_uncor_flags_ok(e))) {
            return false;
        }
        prev_end = r.end;
        if (size == H3100_DS_UNCOR_BYTES) {
            r.flags = e[16];
        }
        if (apply) {
            g_array_append_val(s->uncor, r);
        }
    }
    return true;
}

/*
 * The @k recent-WAF samples at @p: in order, none after power-on time
 * @pot.  Copied into the device's ring when @apply.
 */
static bool h3100_pstate_waf(H3100State *s, const uint8_t *p, uint32_t k,
                             uint64_t pot, bool apply)
{
    H3100WafSample prev = { 0 };

    for (uint32_t i = 0; i < k; i++) {
        H3100WafSample w = {
            .ns = ldq_le_p(p + i * H3100_DS_WAF_BYTES),
            .host = ldq_le_p(p + i * H3100_DS_WAF_BYTES + 8),
            .nand = ldq_le_p(p + i * H3100_DS_WAF_BYTES + 16),
        };

        if (w.ns < prev.ns || w.ns > pot || w.host < prev.host ||
            w.nand < prev.nand) {
            return false;
        }
        if (apply) {
            s->waf_ring[i] = w;
        }
        prev = w;
    }
    if (apply) {
        s->waf_head = 0;
        s->waf_count = k;
    }
    return true;
}

/* A saved serial: 1 to 20 printable ASCII characters, then NULs. */
static bool h3100_pstate_serial_ok(const uint8_t *sn)
{
    unsigned i = 0;

    while (i < H3100_DS_SERIAL && sn[i] >= 0x20 && sn[i] <= 0x7e) {
        i++;
    }
    if (!i) {
        return false;
    }
    while (i < H3100_DS_SERIAL && !sn[i]) {
        i++;
    }
    return i == H3100_DS_SERIAL;
}

/*
 * The serial saved in the loaded file (already checked), if it has one:
 * the drive keeps the serial it was first given.
 */
bool h3100_pstate_serial(H3100State *s, char *sn, size_t len)
{
    gsize blen = 0;
    const uint8_t *p = s->pstate_blob ?
                       g_bytes_get_data(s->pstate_blob, &blen) : NULL;

    H3100DsHeader h;

    if (blen < H3100_DS_HDR_V3) {
        return false;
    }
    memcpy(&h, p, H3100_DS_HDR_V3);
    if (le32_to_cpu(h.version) < 3) {
        return false;
    }
    g_strlcpy(sn, h.serial, MIN(len, H3100_DS_SERIAL + 1));
    return true;
}

/* A min <= max pair of kelvin, 0 (not seen) or plausible. */
static bool h3100_kelvin_pair_ok(uint32_t lo, uint32_t hi)
{
    return hi <= H3100_DS_TEMP_MAX_K && lo <= hi && (lo || !hi);
}

/* The lifetime temperatures of log CBh (version 4) */
static bool h3100_pstate_life_ok(const H3100DsHeader *h)
{
    return h3100_kelvin_pair_ok(le32_to_cpu(h->life_min_k),
                                le32_to_cpu(h->life_max_k)) &&
           h3100_kelvin_pair_ok(le32_to_cpu(h->pon_min_k),
                                le32_to_cpu(h->pon_max_k));
}

/*
 * Check the device's part of the file (@apply false) or copy it into the
 * device (@apply true, once checked).  NULL or what is wrong with it.
 */
static const char *h3100_pstate_unpack(H3100State *s, GBytes *blob,
                                       bool apply)
{
    gsize len = 0;
    const uint8_t *p = blob ? g_bytes_get_data(blob, &len) : NULL;
    H3100DsHeader h = { 0 };          /* the part @p's version has */
    uint32_t n, k, version;
    gsize hdr_len, tail, lsi_at, usize;
    uint8_t active, next;

    if (!len) {
        return NULL;                  /* model state only: defaults */
    }
    if (len < H3100_DS_HDR_V2 || memcmp(p, H3100_DS_MAGIC, 4)) {
        return "no device state in its extra section";
    }
    memcpy(&h, p, H3100_DS_HDR_V2);
    version = le32_to_cpu(h.version);
    if (version < 1 || version > H3100_DS_VERSION) {
        return "unknown device state version";
    }
    hdr_len = version >= 4 ? H3100_DS_HDR_BYTES :
              version >= 3 ? H3100_DS_HDR_V3 : H3100_DS_HDR_V2;
    if (len < hdr_len) {
        return "bad device state length";
    }
    memcpy(&h, p, hdr_len);
    if (version >= 3 && !h3100_pstate_serial_ok((const uint8_t *)h.serial)) {
        return "bad serial number";
    }
    if (version >= 4 && !h3100_pstate_life_ok(&h)) {
        return "bad lifetime temperatures";
    }
    active = h.fw_active;
    next = h.fw_next;
    k = version >= 2 ? le16_to_cpu(h.nwaf) : 0;
    n = le32_to_cpu(h.nuncor);
    if (!active || active > H3100_FW_SLOTS || next > H3100_FW_SLOTS ||
        !h.fw_slot[active - 1][0] || (next && !h.fw_slot[next - 1][0])) {
        return "bad firmware slots";
    }
    usize = version >= 7 ? H3100_DS_UNCOR_BYTES : H3100_DS_UNCOR_V6;
    lsi_at = hdr_len + (gsize)n * usize + (gsize)k * H3100_DS_WAF_BYTES;
    tail = lsi_at + (version >= 6 ? H3100_DS_LSI_BYTES : 0);
    if (n > H3100_UNCOR_MAX || k > H3100_WAF_RING ||
        (version >= 5 ? len < tail : len != tail)) {
        return "bad device state length";
    }
    if (version >= 6 && (p[lsi_at + 2] > 1 || p[lsi_at + 3])) {
        return "bad LBA status state";
    }
    if (version >= 5 && !h3100_pstate_ns(s, p + tail, len - tail, apply)) {
        return "bad namespace table";
    }
    if (!h3100_pstate_waf(s, p + hdr_len + (gsize)n * usize, k,
                          le64_to_cpu(h.power_on_ns), apply)) {
        return "bad recent-WAF samples";
    }
    if (!h3100_pstate_uncor(s, p + hdr_len, n, usize, apply)) {
        return "bad uncorrectable ranges";
    }
    if (!apply) {
        return NULL;
    }
    s->power_on_base_ns = le64_to_cpu(h.power_on_ns);
    s->power_cycles = le64_to_cpu(h.power_cycles);
    s->unsafe_shutdowns = le64_to_cpu(h.unsafe_shutdowns);
    s->error_count = le64_to_cpu(h.error_count);
    s->media_errors = le64_to_cpu(h.media_errors);
    s->lsi.gen = version >= 6 ? lduw_le_p(p + lsi_at) : 0;
    s->lsi.gen_new = version >= 6 && p[lsi_at + 2];
    for (unsigned i = 0; i < H3100_FW_SLOTS; i++) {
        memcpy(s->fw.slot[i + 1], h.fw_slot[i], sizeof(h.fw_slot[i]));
    }
    if (version >= 4) {
        s->ext.life_min_k = le32_to_cpu(h.life_min_k);
        s->ext.life_max_k = le32_to_cpu(h.life_max_k);
        s->ext.pon_min_k = le32_to_cpu(h.pon_min_k);
        s->ext.pon_max_k = le32_to_cpu(h.pon_max_k);
        s->ext.fw_updates = le32_to_cpu(h.fw_updates);
    }
    /* a restart is a reset: a pending activation takes effect */
    s->fw.active = active;
    s->fw.next = next;
    h3100_fw_reset(s);
    return NULL;
}

/*
 * Realize: load FILE (or start fresh and create it) and mark it in use.
 * Sets s->model; the device's part is applied by h3100_pstate_apply.
 */
bool h3100_pstate_open(H3100State *s, Error **errp)
{
    g_autoptr(GError) gerr = NULL;
    uint32_t flags = 0;
    const char *bad;

    if (runstate_check(RUN_STATE_INMIGRATE)) {
        /* the source still writes FILE: the drive comes in the stream */
        s->model = h3100_model_new(&s->cfg, &gerr);
        if (!s->model) {
            error_setg(errp, "drive model: %s", gerr->message);
            return false;
        }
        s->pstate_incoming = true;
        return true;
    }
    if (!s->state_reset && g_file_test(s->state_path, G_FILE_TEST_EXISTS)) {
        s->model = h3100_model_load_with(&s->cfg, s->state_path,
                                         &s->pstate_blob, &flags, &gerr);
        if (!s->model) {
            error_setg(errp, "%s (state-reset=on starts a fresh drive)",
                       gerr->message);
            return false;
        }
        bad = h3100_pstate_unpack(s, s->pstate_blob, false);
        if (bad) {
            error_setg(errp, "drive state '%s' is corrupt: %s "
                       "(state-reset=on starts a fresh drive)",
                       s->state_path, bad);
            return false;
        }
        if (!h3100_state_set_flags(s->state_path, H3100_STATE_DIRTY,
                                   &gerr)) {
            error_setg(errp, "%s", gerr->message);
            return false;
        }
        s->pstate_was_dirty = flags & H3100_STATE_DIRTY;
        trace_h3100_pstate_load(s->state_path, s->pstate_was_dirty);
    } else {
        s->model = h3100_model_new(&s->cfg, &gerr);
        if (!s->model) {
            error_setg(errp, "drive model: %s", gerr->message);
            return false;
        }
        /* a fresh drive: device defaults, and the file is in use now */
        if (!h3100_model_save_with(s->model, s->state_path, NULL, 0,
                                   H3100_STATE_DIRTY, &gerr)) {
            error_setg(errp, "%s", gerr->message);
            return false;
        }
        trace_h3100_pstate_fresh(s->state_path);
    }
    return true;
}

static void h3100_pstate_exit_notify(Notifier *n, void *data)
{
    H3100State *s = container_of(n, H3100State, pstate_exit);

    h3100_pstate_close(s);
}

/* Reap the checkpoint child; @wait: block until it is done. */
static bool h3100_pstate_reap(H3100State *s, bool wait)
{
    int status;
    pid_t r;

    if (s->pstate_child <= 0) {
        return true;
    }
    do {
        r = waitpid(s->pstate_child, &status, wait ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == 0) {
        return false;
    }
    if (r == s->pstate_child &&
        (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
        warn_report("%s: checkpoint of drive state '%s' failed",
                    TYPE_DAPUSTOR_H3100, s->state_path);
    }
    trace_h3100_pstate_checkpoint_done(r == s->pstate_child ? status : -1);
    s->pstate_child = 0;
    return true;
}

/* Save FILE with @flags from a forked child (here if fork fails). */
static void h3100_pstate_checkpoint(H3100State *s, uint32_t flags)
{
    g_autoptr(GByteArray) dev = h3100_pstate_pack(s);
    g_autoptr(GError) gerr = NULL;
    pid_t pid;

    qemu_mutex_lock(&s->model_lock);
    pid = fork();
    if (pid == 0) {
        /* the child: a copy-on-write snapshot of the model */
        bool ok = h3100_model_save_with(s->model, s->state_path, dev->data,
                                        dev->len, flags, NULL);

        _exit(ok ? 0 : 1);
    }
    if (pid < 0) {
        /* no fork: save here, the guest waits */
        if (!h3100_model_save_with(s->model, s->state_path, dev->data,
                                   dev->len, flags, &gerr)) {
            warn_report("%s: checkpoint: %s", TYPE_DAPUSTOR_H3100,
                        gerr->message);
        }
        pid = 0;
    }
    qemu_mutex_unlock(&s->model_lock);
    s->pstate_child = pid;
    trace_h3100_pstate_checkpoint(s->state_path, pid);
}

static void h3100_pstate_checkpoint_fn(void *opaque)
{
    H3100State *s = opaque;

    if (!s->pstate_suspended) {
        h3100_pstate_checkpoint(s, H3100_STATE_DIRTY);
    }
}

/*
 * A checkpoint still being written is abandoned (SIGKILL: the file stays
 * as it was, the save goes through a temporary and a rename), so that
 * a guest toggling CC.SHN never has the main loop wait for a save.
 */
static void h3100_pstate_abandon(H3100State *s)
{
    int status;

    if (s->pstate_child > 0 && !h3100_pstate_reap(s, false)) {
        kill(s->pstate_child, SIGKILL);
        while (waitpid(s->pstate_child, &status, 0) < 0 && errno == EINTR) {
            /* again */
        }
        trace_h3100_pstate_checkpoint_done(-1);
        s->pstate_child = 0;
    }
}

/*
 * The shutdown notification: save FILE clean (forked), if there is one;
 * h3100_pstate_busy says when it is written.
 */
void h3100_pstate_save_clean(H3100State *s)
{
    if (!s->pstate_open || s->pstate_suspended) {
        return;
    }
    h3100_pstate_abandon(s);
    h3100_pstate_checkpoint(s, 0);
    s->pstate_clean = true;
}

bool h3100_pstate_busy(H3100State *s)
{
    return !h3100_pstate_reap(s, false);
}

/* In use again after a clean save: mark FILE dirty. */
void h3100_pstate_reopen(H3100State *s)
{
    g_autoptr(GError) gerr = NULL;

    if (!s->pstate_open || !s->pstate_clean || s->pstate_suspended) {
        return;
    }
    h3100_pstate_abandon(s);
    s->pstate_clean = false;
    if (!h3100_state_set_flags(s->state_path, H3100_STATE_DIRTY, &gerr)) {
        warn_report("%s: %s", TYPE_DAPUSTOR_H3100, gerr->message);
    }
}

static void h3100_pstate_timer_cb(void *opaque)
{
    H3100State *s = opaque;

    /*
     * one checkpoint at a time: a slow one skips the next; none while the
     * drive is shut down (the file was saved clean)
     */
    if (!s->pstate_clean && h3100_pstate_reap(s, false)) {
        h3100_run_in_ctx(s, h3100_pstate_checkpoint_fn, s);
    }
    timer_mod(s->pstate_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              (int64_t)s->state_interval * NANOSECONDS_PER_SECOND);
}

static void h3100_pstate_in_use(H3100State *s);

/* After h3100_state_init: the device's part, checkpoints, exit hook. */
void h3100_pstate_apply(H3100State *s)
{
    s->power_cycles = 0;
    h3100_pstate_unpack(s, s->pstate_blob, true);
    g_clear_pointer(&s->pstate_blob, g_bytes_unref);
    s->power_cycles++;
    if (s->pstate_was_dirty) {
        s->unsafe_shutdowns++;
    }
    h3100_pstate_in_use(s);
}

/* FILE is this QEMU's to write: checkpoints, and the clean stop. */
static void h3100_pstate_in_use(H3100State *s)
{
    s->pstate_open = true;
    s->pstate_exit.notify = h3100_pstate_exit_notify;
    qemu_add_exit_notifier(&s->pstate_exit);
    if (s->state_interval) {
        s->pstate_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                       h3100_pstate_timer_cb, s);
        timer_mod(s->pstate_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  (int64_t)s->state_interval * NANOSECONDS_PER_SECOND);
    }
}

/* Nothing is written until resumed (a load replaces the drive). */
void h3100_pstate_suspend(H3100State *s)
{
    h3100_pstate_abandon(s);
    s->pstate_suspended = true;
}

void h3100_pstate_resume(H3100State *s)
{
    s->pstate_suspended = false;
}

/* The source's last round: the destination writes FILE from now on. */
void h3100_pstate_handover(H3100State *s)
{
    if (s->pstate_open) {
        h3100_pstate_suspend(s);
        trace_h3100_pstate_handover(s->state_path);
    }
}

/*
 * A migration or loadvm has brought the drive: FILE is this QEMU's (an
 * incoming one's from now on) and gets the drive as it came, marked clean
 * if it was saved clean at a shutdown: after a loadvm at once, on an
 * incoming QEMU when the VM first runs (a fork of the whole drive is no
 * part of the downtime).
 */
void h3100_pstate_takeover(H3100State *s)
{
    if (!s->state_path) {
        return;
    }
    if (s->pstate_incoming) {
        s->pstate_incoming = false;
        h3100_pstate_in_use(s);
    }
    s->pstate_suspended = false;
    h3100_pstate_abandon(s);
    trace_h3100_pstate_takeover(s->state_path);
    s->pstate_checkpoint_due = true;
    if (!runstate_check(RUN_STATE_INMIGRATE)) {
        h3100_pstate_run(s);
    }
}

/* The VM runs (h3100-runstate.c): a checkpoint a takeover left due. */
void h3100_pstate_run(H3100State *s)
{
    if (s->pstate_checkpoint_due && s->pstate_open && !s->pstate_suspended) {
        s->pstate_checkpoint_due = false;
        h3100_pstate_checkpoint(s, s->pstate_clean ? 0 : H3100_STATE_DIRTY);
    }
}

/* A clean stop: wait for a checkpoint, save FILE and mark it clean. */
void h3100_pstate_close(H3100State *s)
{
    g_autoptr(GByteArray) dev = NULL;
    g_autoptr(GError) gerr = NULL;
    bool ok;

    if (!s->pstate_open) {
        return;
    }
    s->pstate_open = false;
    qemu_remove_exit_notifier(&s->pstate_exit);
    if (s->pstate_timer) {
        timer_free(s->pstate_timer);
        s->pstate_timer = NULL;
    }
    h3100_pstate_reap(s, true);
    if (s->pstate_suspended) {
        return;                       /* another QEMU's drive now */
    }
    dev = h3100_pstate_pack(s);
    qemu_mutex_lock(&s->model_lock);
    ok = h3100_model_save_with(s->model, s->state_path, dev->data, dev->len,
                               0, &gerr);
    qemu_mutex_unlock(&s->model_lock);
    if (!ok) {
        error_report("%s: %s", TYPE_DAPUSTOR_H3100, gerr->message);
    }
    trace_h3100_pstate_save(s->state_path, ok);
}
