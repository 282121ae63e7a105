/*
 * Saved drive state: the FTL's metadata, wear and counters in one file.
 *
 * Layout (little-endian, as the hosts this runs on):
 *   StateHeader, then a payload of sections in a fixed order.  The header
 *   names the drive (profile and geometry) and carries the payload's
 *   length and CRC-32C, and its own CRC.  Timing parameters are not part
 *   of the identity: a saved drive can be loaded with other timings.
 *
 * The file is hostile input (a guest's drive state, say): the checksums
 * only catch accidents, anyone can recompute them.  So loading refuses a
 * file with a wrong magic, version, drive, length or checksum; sizes
 * every read by the geometry and never reads or allocates more than the
 * file really holds; and, before the model is used, checks every
 * invariant of the FTL (ftl_check: superblock states and tables, open
 * superblocks, reclaim victim, free list, blocks, the map and valid
 * counts).  A file the model could misbehave on is refused as corrupt.
 *
 * Version 2 adds, after the model's sections and inside the payload
 * checksum, a front end's own state: a uint64_t length and that many
 * opaque bytes (the QEMU device's counters, firmware slots and
 * uncorrectable LBAs; zero bytes from h3100-sim).  The header's flags
 * word (reserved, zero, in version 1) holds H3100_STATE_DIRTY: the file
 * belongs to a drive that is running or did not stop cleanly.
 *
 * Version 3 adds, as the model's last section (before the
 * front end's), the thermal lifetime counters: ThermalStats, 40 bytes
 * (time above the warning and critical temperatures, throttling
 * transitions and time).  The temperature itself is not saved: loading
 * is a power cycle, and the drive starts at its idle temperature.
 *
 * Version 4 adds after them the LDPC's lifetime counters: EccStats, 32
 * bytes (reads retried, soft decodes, uncorrectable host and reclaim
 * reads).
 *
 * Version 5 (this one) saves no reverse maps: each superblock's table
 * flag is 0, and a loaded drive builds the maps reclaim needs from the
 * logical map (models/ftl_rmap.c).  The layout is version 4's.
 *
 * Versions 1 to 4 still load, with no extra state (version 1), thermal
 * counters at zero (versions 1, 2) and LDPC counters at zero (versions
 * 1 to 3); the reverse maps they hold are read and dropped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "hugealloc.h"
#include "model_priv.h"
#include "state_format.h"
#include "state_io.h"

#define STATE_MAGIC "H3100ST\n"
#define STATE_VERSION 5u
#define STATE_VERSION_MIN 1u


static void fill_identity(StateHeader *h, const H3100Config *cfg)
{
    const H3100Geometry *g = &cfg->geo;

    memset(h, 0, sizeof(*h));
    memcpy(h->magic, STATE_MAGIC, 8);
    h->version = STATE_VERSION;
    h->family = cfg->family;
    g_strlcpy(h->profile, cfg->profile, sizeof(h->profile));
    h->user_bytes = g->user_bytes;
    h->geo[0] = g->channels;
    h->geo[1] = g->dies_per_channel;
    h->geo[2] = g->planes_per_die;
    h->geo[3] = g->blocks_per_plane;
    h->geo[4] = g->spare_blocks_per_plane;
    h->geo[5] = g->pages_per_block;
    h->geo[6] = g->page_bytes;
    h->geo[7] = g->bits_per_cell;
    h->factory_bad_ppm = cfg->ftl.factory_bad_ppm;
}

static uint32_t header_crc(const StateHeader *h)
{
    StateHeader copy = *h;

    copy.header_crc = 0;
    return crc32c(&copy, sizeof(copy));
}

void stream_put(Stream *s, const void *p, size_t n)
{
    if (s->failed) {
        return;
    }
    if (s->out) {
        g_byte_array_append(s->out, p, n);
    } else if (fwrite(p, 1, n, s->f) != n) {
        s->failed = true;
        return;
    }
    s->crc = crc32c_update(s->crc, p, n);
    s->bytes += n;
}

bool stream_get(Stream *s, void *p, size_t n)
{
    if (s->failed || n > s->limit ||
        (s->in ? false : fread(p, 1, n, s->f) != n)) {
        s->failed = true;
        memset(p, 0, n);
        return false;
    }
    if (s->in) {
        memcpy(p, s->in, n);
        s->in += n;
    }
    s->crc = crc32c_update(s->crc, p, n);
    s->limit -= n;
    return true;
}

/*
 * Does the stream still hold @n bytes?  Asked before allocating for them,
 * so a short file cannot make the model allocate more than it holds.
 * The limit is what the file really has left: loading checked the
 * header's payload length against the file's size.
 */
bool stream_holds(const Stream *s, uint64_t n)
{
    return !s->failed && n <= s->limit;
}

/* Counters and reclaim state, and the block tables (load: their meaning
 * is ftl_check's). */
void state_put_counters(H3100Model *m, Stream *s)
{
    Ftl *f = &m->ftl;
    BadBlocks *bb = &f->bb;
    uint64_t nblk = (uint64_t)bb->planes * bb->blocks;
    uint8_t ro = m->read_only;

    PUT(s, m->c);
    PUT(s, f->stats);
    PUT(s, ro);
    PUT(s, f->nfree);
    PUT(s, f->victim);
    PUT(s, f->cursor);
    PUT(s, f->credit);
    PUT(s, f->ratio_num);
    PUT(s, f->ratio_den);
    PUT(s, f->last_read_page);
    PUT(s, f->open);
    PUT(s, f->rng);
    PUT(s, f->mapped);
    stream_put(s, f->free_list, sizeof(uint32_t) * f->nfree);
    stream_put(s, f->sb_block, sizeof(uint16_t) * f->nsb * bb->planes);
    stream_put(s, bb->state, nblk);
    stream_put(s, bb->erase_count, sizeof(uint32_t) * nblk);
    stream_put(s, bb->spares_left, sizeof(uint32_t) * bb->planes);
    PUT(s, bb->initial_spares);
    PUT(s, bb->factory_bad);
    PUT(s, bb->grown_bad);
    PUT(s, bb->used_blocks);
    PUT(s, bb->used_block_erases);
}

/* A superblock's header; its reverse map is never saved (version 5). */
void state_put_sb(const Superblock *sb, Stream *s)
{
    uint8_t has = 0;

    PUT(s, sb->state);
    PUT(s, sb->stream);
    PUT(s, sb->valid);
    PUT(s, sb->wp);
    PUT(s, sb->erase_count);
    PUT(s, has);
}

/* The lifetime counters: thermal (version 3), LDPC (version 4). */
void state_put_lifetime(H3100Model *m, Stream *s)
{
    PUT(s, m->thermal.stats);
    PUT(s, m->ecc);
}

static void save_payload(H3100Model *m, Stream *s)
{
    Ftl *f = &m->ftl;

    state_put_counters(m, s);
    for (uint32_t i = 0; i < f->nsb; i++) {
        state_put_sb(&f->sb[i], s);
    }
    for (uint64_t c = 0; c < f->nchunks; c++) {
        uint8_t has = f->l2p[c] != NULL;

        PUT(s, has);
        if (has) {
            stream_put(s, f->l2p[c], sizeof(uint32_t) * FTL_CHUNK_SLOTS);
        }
    }
    state_put_lifetime(m, s);
}

bool h3100_model_save_with(H3100Model *m, const char *path,
                           const void *extra, size_t extra_len,
                           uint32_t flags, GError **errp)
{
    g_autofree char *tmp = NULL;
    uint64_t len = extra_len;
    StateHeader h;
    Stream s = { 0 };

    if (extra_len > H3100_STATE_EXTRA_MAX) {
        /* it could not be loaded back */
        g_set_error(errp, H3100_ERROR, H3100_ERROR_INVALID,
                    "cannot write drive state '%s': %zu bytes of front-end "
                    "state, at most %u", path, extra_len,
                    H3100_STATE_EXTRA_MAX);
        return false;
    }
    tmp = g_strdup_printf("%s.tmp", path);
    s.f = fopen(tmp, "wb");
    if (!s.f) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_IO,
                    "cannot write drive state '%s': %s", tmp,
                    g_strerror(errno));
        return false;
    }
    fill_identity(&h, &m->cfg);
    h.flags = flags;
    if (fwrite(&h, sizeof(h), 1, s.f) != 1) {
        s.failed = true;
    }
    save_payload(m, &s);
    PUT(&s, len);
    if (extra_len) {
        stream_put(&s, extra, extra_len);
    }
    h.payload_bytes = s.bytes;
    h.payload_crc = s.crc;
    h.header_crc = header_crc(&h);
    if (!s.failed && (fseek(s.f, 0, SEEK_SET) ||
                      fwrite(&h, sizeof(h), 1, s.f) != 1)) {
        s.failed = true;
    }
    if (fflush(s.f) || fsync(fileno(s.f))) {
        s.failed = true;
    }
    if (fclose(s.f) || s.failed || rename(tmp, path)) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_IO,
                    "cannot write drive state '%s': %s", path,
                    g_strerror(errno ? errno : EIO));
        unlink(tmp);
        return false;
    }
    return true;
}

bool h3100_model_save(H3100Model *m, const char *path, GError **errp)
{
    return h3100_model_save_with(m, path, NULL, 0, 0, errp);
}

static bool corrupt(GError **errp, const char *path, const char *what)
{
    g_set_error(errp, H3100_ERROR, H3100_ERROR_CORRUPT,
                "drive state '%s' is corrupt: %s", path, what);
    return false;
}

static bool check_identity(const StateHeader *got, const H3100Config *cfg,
                           const char *path, GError **errp)
{
    StateHeader want;
    g_autofree char *name = NULL, *shown = NULL;

    fill_identity(&want, cfg);
    if (got->family == want.family &&
        !strncmp(got->profile, want.profile, sizeof(want.profile)) &&
        got->user_bytes == want.user_bytes &&
        !memcmp(got->geo, want.geo, sizeof(want.geo)) &&
        got->factory_bad_ppm == want.factory_bad_ppm) {
        return true;
    }
    /* the name is the file's bytes: escaped, it stays one printable line */
    name = g_strndup(got->profile, sizeof(got->profile));
    shown = g_strescape(name, NULL);
    g_set_error(errp, H3100_ERROR, H3100_ERROR_MISMATCH,
                "drive state '%s' belongs to another drive: %s with %" PRIu64
                " bytes, %u dies; this one is %s with %" PRIu64 " bytes, %u "
                "dies", path, shown, got->user_bytes,
                got->geo[0] * got->geo[1], cfg->profile, cfg->geo.user_bytes,
                h3100_dies(cfg));
    return false;
}

bool state_refuse(GString *why, const char *fmt, ...)
                  {
                  va_list ap;

    va_start(ap, fmt);
    g_string_append_vprintf(why, fmt, ap);
    va_end(ap);
    return false;
}

bool state_get_counters(H3100Model *m, Stream *s, GString *why)
{
    Ftl *f = &m->ftl;
    BadBlocks *bb = &f->bb;
    uint64_t nblk = (uint64_t)bb->planes * bb->blocks;
    uint8_t ro;

    GET(s, m->c);
    GET(s, f->stats);
    GET(s, ro);
    GET(s, f->nfree);
    GET(s, f->victim);
    GET(s, f->cursor);
    GET(s, f->credit);
    GET(s, f->ratio_num);
    GET(s, f->ratio_den);
    GET(s, f->last_read_page);
    GET(s, f->open);
    GET(s, f->rng);
    GET(s, f->mapped);
    if (s->failed) {
        return state_refuse(why, "truncated counters");
    }
    if (ro > 1) {
        return state_refuse(why, "bad read-only flag %u", ro);
    }
    m->read_only = ro;
    f->out_of_space = ro;
    /* sizes the free list read next */
    if (f->nfree > f->nsb) {
        return state_refuse(why, "free list of %u superblocks, the drive "
                            "has %u", f->nfree, f->nsb);
    }
    stream_get(s, f->free_list, sizeof(uint32_t) * f->nfree);
    stream_get(s, f->sb_block, sizeof(uint16_t) * f->nsb * bb->planes);
    stream_get(s, bb->state, nblk);
    stream_get(s, bb->erase_count, sizeof(uint32_t) * nblk);
    stream_get(s, bb->spares_left, sizeof(uint32_t) * bb->planes);
    GET(s, bb->initial_spares);
    GET(s, bb->factory_bad);
    GET(s, bb->grown_bad);
    GET(s, bb->used_blocks);
    GET(s, bb->used_block_erases);
    if (s->failed) {
        return state_refuse(why, "truncated block tables");
    }
    bb_scan_wear_range(bb);
    return true;
}

/*
 * Superblock @i's header: its shape is checked, and open ones are at
 * most one per stream, counted in *@open.  *@has: its reverse map follows
 * (files before version 5, and migration cores of older builds).
 */
bool state_get_sb(Ftl *f, uint32_t i, Stream *s, uint8_t *has,
                  uint32_t *open, GString *why)
{
    Superblock *sb = &f->sb[i];
    const char *bad;

    GET(s, sb->state);
    GET(s, sb->stream);
    GET(s, sb->valid);
    GET(s, sb->wp);
    GET(s, sb->erase_count);
    GET(s, *has);
    if (s->failed) {
        return state_refuse(why, "truncated superblocks");
    }
    if (*has > 1) {
        return state_refuse(why, "superblock %u: bad table flag %u", i,
                            *has);
    }
    bad = ftl_sb_shape_error(f, sb, *has);
    if (bad) {
        return state_refuse(why, "superblock %u: %s", i, bad);
    }
    if (sb->state == SB_OPEN && ++*open > FTL_STREAMS) {
        return state_refuse(why, "more open superblocks than streams (%u)",
                            FTL_STREAMS);
    }
    return true;
}

/*
 * Superblocks, and the reverse maps of files before version 5, read (the
 * checksum covers them) and dropped: the map they held of each slot is
 * the logical map's, which ftl_check judges.  A superblock's shape is
 * checked before its map is read, so wp <= sps sizes the read.
 */
static bool load_superblocks(Ftl *f, Stream *s, GString *why)
{
    g_autofree uint32_t *scratch = NULL;
    uint32_t open = 0;

    for (uint32_t i = 0; i < f->nsb; i++) {
        Superblock *sb = &f->sb[i];
        uint8_t has;

        if (!state_get_sb(f, i, s, &has, &open, why)) {
            return false;
        }
        if (!has) {
            continue;
        }
        if (!stream_holds(s, sizeof(uint32_t) * sb->wp)) {
            return state_refuse(why, "truncated superblock tables");
        }
        if (!scratch) {
            scratch = g_new(uint32_t, f->sps);
        }
        stream_get(s, scratch, sizeof(uint32_t) * sb->wp);
    }
    return true;                      /* a failed read fails the next one */
}

static bool load_map(Ftl *f, Stream *s, GString *why)
{
    for (uint64_t c = 0; c < f->nchunks; c++) {
        uint8_t has;

        if (!GET(s, has)) {
            return state_refuse(why, "truncated map");
        }
        if (has > 1) {
            return state_refuse(why, "map chunk %" PRIu64 ": bad flag %u", c,
                                has);
        }
        if (!has) {
            continue;
        }
        if (!stream_holds(s, sizeof(uint32_t) * FTL_CHUNK_SLOTS)) {
            return state_refuse(why, "truncated map");
        }
        f->l2p[c] = huge_alloc(sizeof(uint32_t) * FTL_CHUNK_SLOTS);
        if (!stream_get(s, f->l2p[c], sizeof(uint32_t) * FTL_CHUNK_SLOTS)) {
            return state_refuse(why, "truncated map");
        }
    }
    return true;
}

/*
 * Read the payload into the fresh model @m; false names the bad part in
 * @why.  What the values mean is checked later, by ftl_check.
 */
static bool load_payload(H3100Model *m, Stream *s, GString *why)
{
    return state_get_counters(m, s, why) &&
           load_superblocks(&m->ftl, s, why) && load_map(&m->ftl, s, why);
}

/* Version 3's thermal counters, version 4's LDPC counters. */
bool state_get_lifetime(H3100Model *m, Stream *s, uint32_t version,
                        GString *why)
{
    if (version >= 3 && !GET(s, m->thermal.stats)) {
        return state_refuse(why, "truncated thermal counters");
    }
    if (version >= 4 && !GET(s, m->ecc)) {
        return state_refuse(why, "truncated LDPC counters");
    }
    return true;
}

/* Open @path and check its header; NULL (with @errp set) if it is bad. */
static FILE *open_checked(const char *path, const char *mode, StateHeader *h,
                          GError **errp)
{
    FILE *f = fopen(path, mode);

    if (!f) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_IO,
                    "cannot open drive state '%s': %s", path,
                    g_strerror(errno));
        return NULL;
    }
    if (fread(h, sizeof(*h), 1, f) != 1) {
        corrupt(errp, path, "shorter than its header");
    } else if (memcmp(h->magic, STATE_MAGIC, 8)) {
        corrupt(errp, path, "not an H3100 drive state file");
    } else if (h->version < STATE_VERSION_MIN || h->version > STATE_VERSION) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_MISMATCH,
                    "drive state '%s' has version %u; this build reads "
                    "versions %u to %u", path, h->version, STATE_VERSION_MIN,
                    STATE_VERSION);
    } else if (h->header_crc != header_crc(h)) {
        corrupt(errp, path, "header checksum mismatch");
    } else {
        return f;
    }
    fclose(f);
    return NULL;
}

/*
 * The header's payload length is the file's: every length read later is
 * checked against what is left of it before anything is allocated.
 */
static bool check_file_length(FILE *f, const StateHeader *h, GString *why)
{
    struct stat st;

    if (fstat(fileno(f), &st)) {
        return state_refuse(why, "cannot tell its size: %s",
                            g_strerror(errno));
    }
    if ((uint64_t)st.st_size < sizeof(*h) ||
        h->payload_bytes != (uint64_t)st.st_size - sizeof(*h)) {
        return state_refuse(why, "length does not match its header");
    }
    return true;
}

/* Version 2's extra section, at most H3100_STATE_EXTRA_MAX bytes. */
static bool load_extra(Stream *s, uint32_t version, GBytes **extra,
                       GString *why)
{
    uint64_t len = 0;
    void *buf;

    if (version >= 2) {
        if (!GET(s, len)) {
            return state_refuse(why, "truncated extra state");
        }
        if (len > H3100_STATE_EXTRA_MAX) {
            return state_refuse(why, "extra state of %" PRIu64 " bytes, at "
                                "most %u", len, H3100_STATE_EXTRA_MAX);
        }
        if (!stream_holds(s, len)) {
            return state_refuse(why, "extra state longer than the file");
        }
    }
    buf = g_malloc(len);
    if (len && !stream_get(s, buf, len)) {
        g_free(buf);
        return state_refuse(why, "truncated extra state");
    }
    *extra = g_bytes_new_take(buf, len);
    return true;
}

H3100Model *h3100_model_load_with(const H3100Config *cfg, const char *path,
                                  GBytes **extra, uint32_t *flags,
                                  GError **errp)
{
    g_autoptr(GBytes) blob = NULL;
    g_autoptr(GString) why = g_string_new(NULL);
    StateHeader h;
    Stream s = { 0 };
    H3100Model *m;
    bool ok;
    int tail;

    s.f = open_checked(path, "rb", &h, errp);
    if (!s.f) {
        return NULL;
    }
    if (!check_identity(&h, cfg, path, errp)) {
        fclose(s.f);
        return NULL;
    }
    if (!check_file_length(s.f, &h, why)) {
        fclose(s.f);
        corrupt(errp, path, why->str);
        return NULL;
    }
    m = h3100_model_new(cfg, errp);
    if (!m) {
        fclose(s.f);
        return NULL;
    }
    /* a fresh model holds no superblock tables yet; loading fills them */
    s.limit = h.payload_bytes;
    ok = load_payload(m, &s, why) &&
         state_get_lifetime(m, &s, h.version, why) &&
         load_extra(&s, h.version, &blob, why);
    tail = fgetc(s.f);
    fclose(s.f);
    if (ok && (s.limit || tail != EOF)) {
        ok = state_refuse(why, "length does not match its header");
    }
    if (ok && s.crc != h.payload_crc) {
        ok = state_refuse(why, "payload checksum mismatch");
    }
    /* only now is what was read worth judging: every invariant */
    ok = ok && ftl_check(&m->ftl, why);
    if (!ok) {
        h3100_model_free(m);
        corrupt(errp, path, why->str);
        return NULL;
    }
    /* loading is a power cycle: the lifetime counters carry on, the
     * drive starts at its idle temperature with the configured thresholds */
    model_thermal_power_on(m);
    if (extra) {
        *extra = g_steal_pointer(&blob);
    }
    if (flags) {
        *flags = h.flags;
    }
    return m;
}

H3100Model *h3100_model_load(const H3100Config *cfg, const char *path,
                             GError **errp)
{
    return h3100_model_load_with(cfg, path, NULL, NULL, errp);
}

bool h3100_state_set_flags(const char *path, uint32_t flags, GError **errp)
{
    StateHeader h;
    FILE *f = open_checked(path, "r+b", &h, errp);
    bool ok;

    if (!f) {
        return false;
    }
    h.flags = flags;
    h.header_crc = header_crc(&h);
    ok = !fseek(f, 0, SEEK_SET) && fwrite(&h, sizeof(h), 1, f) == 1 &&
         !fflush(f) && !fsync(fileno(f));
    if (fclose(f) || !ok) {
        g_set_error(errp, H3100_ERROR, H3100_ERROR_IO,
                    "cannot write drive state '%s': %s", path,
                    g_strerror(errno ? errno : EIO));
        return false;
    }
    return true;
}
