/*
 * Faults on demand: specs, the table, triggers (include/h3100/fault.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "h3100/config.h"
#include "h3100/fault.h"
#include "rng.h"

#define NS_PER_US   UINT64_C(1000)
#define NS_PER_MS   UINT64_C(1000000)
#define NS_PER_S    UINT64_C(1000000000)
#define PPM         1000000U
/* a window of model time: at most a year */
#define WINDOW_MAX_NS   (366 * 86400 * NS_PER_S)

#define KIND_NAME(id, name) name,
static const char *const kind_names[] = {
    H3100_FAULT_KINDS(KIND_NAME) NULL
};
#undef KIND_NAME

const char *h3100_fault_kind_name(H3100FaultKind kind)
{
    return kind < H3100_FAULT_NKINDS ? kind_names[kind] : "?";
}

static bool fail(GError **errp, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool fail(GError **errp, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    g_propagate_error(errp, g_error_new_valist(H3100_ERROR,
                                               H3100_ERROR_INVALID, fmt, ap));
    va_end(ap);
    return false;
}

/* A whole unsigned number, decimal or 0x hex, at most @max. */
static bool parse_u64(const char *v, uint64_t max, uint64_t *out)
{
    unsigned base = 10;
    char *end;
    guint64 n;

    if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
        base = 16;
        v += 2;
    }
    if (!g_ascii_isxdigit(*v) || (base == 10 && !g_ascii_isdigit(*v))) {
        return false;
    }
    errno = 0;
    n = g_ascii_strtoull(v, &end, base);
    if (errno || *end || n > max) {
        return false;
    }
    *out = n;
    return true;
}

/* A duration: a number and ns, us, ms or s (none: ns). */
static bool parse_time(const char *v, uint64_t *out)
{
    static const struct { const char *unit; uint64_t ns; } units[] = {
        { "ns", 1 }, { "us", NS_PER_US }, { "ms", NS_PER_MS },
        { "s", NS_PER_S },
    };
    g_autofree char *num = NULL;
    size_t len = strlen(v), digits = strspn(v, "0123456789");
    uint64_t n, mul = 1;

    if (!digits) {
        return false;
    }
    if (digits < len) {
        mul = 0;
        for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
            if (!strcmp(v + digits, units[i].unit)) {
                mul = units[i].ns;
            }
        }
        if (!mul) {
            return false;
        }
    }
    num = g_strndup(v, digits);
    if (!parse_u64(num, WINDOW_MAX_NS, &n) || n > WINDOW_MAX_NS / mul) {
        return false;
    }
    *out = n * mul;
    return true;
}

static bool parse_onoff(const char *v, bool *out)
{
    if (!strcmp(v, "on")) {
        *out = true;
    } else if (!strcmp(v, "off")) {
        *out = false;
    } else {
        return false;
    }
    return true;
}

/* lba=S-E (inclusive) or S+N */
static bool parse_lba(const char *v, uint64_t *s, uint64_t *e)
{
    g_auto(GStrv) p = NULL;
    bool plus = strchr(v, '+') != NULL;
    uint64_t a, b;

    p = g_strsplit_set(v, plus ? "+" : "-", 2);
    if (!p[0] || !p[1] || !parse_u64(p[0], UINT64_MAX, &a) ||
        !parse_u64(p[1], UINT64_MAX, &b)) {
        return false;
    }
    if (plus) {
        if (!b || b - 1 > UINT64_MAX - a) {
            return false;
        }
        b = a + b - 1;
    }
    if (b < a) {
        return false;
    }
    *s = a;
    *e = b;
    return true;
}

static bool parse_queue(const char *v, H3100FaultSpec *spec)
{
    uint64_t q;

    if (!strcmp(v, "admin")) {
        spec->queue = H3100_FAULT_Q_ADMIN;
    } else if (!strcmp(v, "io")) {
        spec->queue = H3100_FAULT_Q_IO;
    } else if (parse_u64(v, UINT16_MAX, &q)) {
        spec->queue = q ? H3100_FAULT_Q_ONE : H3100_FAULT_Q_ADMIN;
        spec->qid = q;
    } else {
        return false;
    }
    return true;
}

/* opc=0xNN or a command's name; a name says its queue too. */
static bool parse_opc(const char *v, const H3100FaultOpName *names,
                      H3100FaultSpec *spec, bool *admin, bool *named)
{
    uint64_t n;

    *named = false;
    if (parse_u64(v, UINT8_MAX, &n)) {
        spec->opc = n;
        spec->has_opc = true;
        return true;
    }
    for (const H3100FaultOpName *o = names; o && o->name; o++) {
        if (!strcmp(o->name, v)) {
            spec->opc = o->opc;
            spec->has_opc = true;
            *admin = o->admin;
            *named = true;
            return true;
        }
    }
    return false;
}

/* Kinds that act when armed, on the drive rather than on a command */
static bool event_kind(H3100FaultKind kind)
{
    switch (kind) {
    case H3100_FAULT_AER:
    case H3100_FAULT_WARNING:
    case H3100_FAULT_READ_ONLY:
    case H3100_FAULT_NS_DETACH:
    case H3100_FAULT_NS_ATTACH:
        return true;
    default:
        return false;
    }
}

/* They take their own keys and no other: no command to match or count */
static bool key_fits_event_kind(const char *key, H3100FaultKind kind)
{
    switch (kind) {
    case H3100_FAULT_AER:
        return !strcmp(key, "type") || !strcmp(key, "info") ||
               !strcmp(key, "log");
    case H3100_FAULT_WARNING:
        return !strcmp(key, "bits");
    case H3100_FAULT_READ_ONLY:
        return !strcmp(key, "nsattr");
    default:
        return !strcmp(key, "ns");    /* the namespace another host moves */
    }
}

/* The keys each kind takes besides the match and trigger keys */
static bool key_fits_kind(const char *key, H3100FaultKind kind)
{
    if (event_kind(kind)) {
        return key_fits_event_kind(key, kind);
    }
    if (kind == H3100_FAULT_LINK_DOWN) {
        return !strcmp(key, "for");   /* down when armed, for so long */
    }
    if (!strcmp(key, "sc") || !strcmp(key, "more")) {
        return kind == H3100_FAULT_STATUS;
    }
    if (!strcmp(key, "dnr")) {
        return kind == H3100_FAULT_STATUS || kind == H3100_FAULT_MEDIA;
    }
    if (!strcmp(key, "rw")) {
        return kind == H3100_FAULT_MEDIA;
    }
    if (!strcmp(key, "ms")) {
        return kind == H3100_FAULT_DELAY || kind == H3100_FAULT_READY_DELAY;
    }
    if (!strcmp(key, "resets")) {
        return kind == H3100_FAULT_FATAL;
    }
    if (!strcmp(key, "abort")) {
        return kind == H3100_FAULT_TIMEOUT;
    }
    return strcmp(key, "nsattr") != 0;       /* read-only's */
}

/* An asynchronous event's type, as NVMe numbers them */
static const struct { const char *name; uint8_t type, log; } aer_types[] = {
    { "error", 0, 0x01 }, { "smart", 1, 0x02 }, { "notice", 2, 0 },
    { "io", 6, 0 }, { "vendor", 7, 0 },
};

static bool parse_aer_type(const char *v, uint8_t *type)
{
    for (size_t i = 0; i < G_N_ELEMENTS(aer_types); i++) {
        if (!strcmp(v, aer_types[i].name)) {
            *type = aer_types[i].type;
            return true;
        }
    }
    return false;
}

static const char *aer_type_name(uint8_t type, uint8_t *log)
{
    for (size_t i = 0; i < G_N_ELEMENTS(aer_types); i++) {
        if (aer_types[i].type == type) {
            *log = aer_types[i].log;
            return aer_types[i].name;
        }
    }
    return "?";
}

/* SMART critical warning bits, NVMe's order, joined by '+' */
static const char *const warn_names[] = {
    "spare", "temperature", "reliability", "read-only", "backup",
};

static bool parse_warn_bits(const char *v, uint8_t *bits)
{
    g_auto(GStrv) names = g_strsplit(v, "+", -1);

    *bits = 0;
    for (int i = 0; names[i]; i++) {
        size_t b;

        for (b = 0; b < G_N_ELEMENTS(warn_names); b++) {
            if (!strcmp(names[i], warn_names[b])) {
                break;
            }
        }
        if (b == G_N_ELEMENTS(warn_names) || (*bits & (1u << b))) {
            return false;
        }
        *bits |= 1u << b;
    }
    return *bits != 0;
}

static bool parse_key(const char *key, const char *v,
                      const H3100FaultOpName *names, H3100FaultSpec *spec,
                      int *named_admin, GError **errp)
{
    uint64_t n;
    bool ok, admin = false, named;

    if (!strcmp(key, "q")) {
        ok = parse_queue(v, spec);
    } else if (!strcmp(key, "opc")) {
        ok = parse_opc(v, names, spec, &admin, &named);
        if (ok && named) {
            *named_admin = admin;
        }
    } else if (!strcmp(key, "ns")) {
        ok = parse_u64(v, UINT32_MAX, &n) && n;
        spec->nsid = n;
    } else if (!strcmp(key, "lba")) {
        ok = parse_lba(v, &spec->slba, &spec->elba);
        spec->has_lba = ok;
    } else if (!strcmp(key, "after")) {
        ok = parse_u64(v, UINT32_MAX, &spec->after);
    } else if (!strcmp(key, "every")) {
        ok = parse_u64(v, UINT32_MAX, &spec->every);
    } else if (!strcmp(key, "count")) {
        ok = parse_u64(v, UINT32_MAX, &spec->count);
    } else if (!strcmp(key, "prob")) {
        ok = parse_u64(v, PPM, &n);
        spec->prob_ppm = n;
    } else if (!strcmp(key, "at")) {
        ok = parse_time(v, &spec->at_ns);
    } else if (!strcmp(key, "for")) {
        ok = parse_time(v, &spec->for_ns) && spec->for_ns;
    } else if (!strcmp(key, "sc")) {
        ok = parse_u64(v, 0x7ff, &n) && (n & 0xff);
        spec->sc = n;
    } else if (!strcmp(key, "dnr")) {
        ok = parse_onoff(v, &spec->dnr);
    } else if (!strcmp(key, "rw")) {
        ok = !strcmp(v, "read") || !strcmp(v, "write");
        spec->write = !strcmp(v, "write");
    } else if (!strcmp(key, "more")) {
        ok = parse_onoff(v, &spec->more);
    } else if (!strcmp(key, "type")) {
        ok = parse_aer_type(v, &spec->aer_type);
    } else if (!strcmp(key, "info")) {
        ok = parse_u64(v, UINT8_MAX, &n);
        spec->aer_info = n;
    } else if (!strcmp(key, "log")) {
        ok = parse_u64(v, UINT8_MAX, &n);
        spec->aer_log = n;
    } else if (!strcmp(key, "bits")) {
        ok = parse_warn_bits(v, &spec->warn_bits);
    } else if (!strcmp(key, "nsattr")) {
        ok = parse_onoff(v, &spec->nsattr);
    } else if (!strcmp(key, "abort")) {
        ok = !strcmp(v, "honour") || !strcmp(v, "ignore");
        spec->abort_ignored = !strcmp(v, "ignore");
    } else if (!strcmp(key, "ms")) {
        spec->never = !strcmp(v, "never");
        ok = spec->never ? spec->kind == H3100_FAULT_READY_DELAY :
             parse_u64(v, H3100_FAULT_MS_MAX, &n) && n;
        spec->ms = spec->never ? 0 : n;
    } else if (!strcmp(key, "resets")) {
        ok = !strcmp(v, "never") || parse_u64(v, UINT16_MAX, &n);
        spec->resets = !strcmp(v, "never") ? H3100_FAULT_RESETS_NEVER : n;
    } else {
        return fail(errp, "fault: unknown key '%s'", key);
    }
    if (!ok) {
        return fail(errp, "fault: bad value '%s' for '%s'", v, key);
    }
    return true;
}

/*
 * media: LBAs, always.  rw=read marks them uncorrectable at once (drive
 * state, not a trigger): no command or trigger keys.  rw=write fails the
 * Writes and Write Zeroes that overlap them: no opc.
 */
static bool media_complete(const H3100FaultSpec *spec, GHashTable *seen,
                           GError **errp)
{
    static const char *const not_read[] = {
        "q", "opc", "after", "every", "count", "prob", "at", "for",
    };

    if (!spec->has_lba) {
        return fail(errp, "fault: media needs lba=S-E or lba=S+N");
    }
    if (spec->write) {
        if (spec->has_opc) {
            return fail(errp, "fault: media,rw=write fails Writes and Write "
                        "Zeroes: no opc");
        }
        return true;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(not_read); i++) {
        if (g_hash_table_contains(seen, not_read[i])) {
            return fail(errp, "fault: media,rw=read marks the LBAs at once, "
                        "until rewritten: no '%s'", not_read[i]);
        }
    }
    return true;
}

/* Keys the spec must have, and keys that contradict each other */
static bool spec_complete(H3100FaultSpec *spec, int named_admin,
                          GHashTable *seen, GError **errp)
{
    if (named_admin >= 0) {
        if (spec->queue == H3100_FAULT_Q_ANY) {
            spec->queue = named_admin ? H3100_FAULT_Q_ADMIN : H3100_FAULT_Q_IO;
        } else if ((spec->queue == H3100_FAULT_Q_ADMIN) != named_admin) {
            return fail(errp, "fault: opc names %s command, q another queue",
                        named_admin ? "an admin" : "an I/O");
        }
    }
    if (spec->kind == H3100_FAULT_STATUS && !spec->sc) {
        return fail(errp, "fault: status needs sc=0xSCTSC (e.g. sc=0x281)");
    }
    if (spec->kind == H3100_FAULT_DELAY && !spec->ms) {
        return fail(errp, "fault: delay needs ms=N");
    }
    if (spec->kind == H3100_FAULT_AER) {
        uint8_t log;

        if (!g_hash_table_contains(seen, "type") ||
            !g_hash_table_contains(seen, "info")) {
            return fail(errp, "fault: aer needs type= and info=");
        }
        aer_type_name(spec->aer_type, &log);
        if (!g_hash_table_contains(seen, "log")) {
            if (!log) {
                return fail(errp, "fault: an aer of this type needs log=");
            }
            spec->aer_log = log;
        }
    }
    if (spec->kind == H3100_FAULT_WARNING && !spec->warn_bits) {
        return fail(errp, "fault: warning needs bits=NAME[+NAME]...");
    }
    if ((spec->kind == H3100_FAULT_NS_DETACH ||
         spec->kind == H3100_FAULT_NS_ATTACH) && !spec->nsid) {
        return fail(errp, "fault: %s needs ns=N", kind_names[spec->kind]);
    }
    if (spec->kind == H3100_FAULT_READY_DELAY) {
        if (!spec->ms && !spec->never) {
            return fail(errp, "fault: ready-delay needs ms=N or ms=never");
        }
        if (spec->queue || spec->has_opc || spec->nsid || spec->has_lba) {
            return fail(errp, "fault: ready-delay matches the controller's "
                        "enable, not commands (no q, opc, ns, lba)");
        }
    }
    if (spec->kind == H3100_FAULT_MEDIA && !media_complete(spec, seen, errp)) {
        return false;
    }
    if ((spec->has_lba || spec->nsid) && spec->queue == H3100_FAULT_Q_ADMIN) {
        return fail(errp, "fault: ns and lba match I/O commands, not q=admin");
    }
    return true;
}

bool h3100_fault_parse(const char *text, const H3100FaultOpName *names,
                       H3100FaultSpec *spec, GError **errp)
{
    g_auto(GStrv) parts = NULL;
    g_autoptr(GHashTable) seen = NULL;
    int named_admin = -1;
    int kind = -1;

    memset(spec, 0, sizeof(*spec));
    spec->count = 1;
    spec->prob_ppm = PPM;
    if (!text || strlen(text) > H3100_FAULT_SPEC_MAX) {
        return fail(errp, "fault: a spec of at most %d bytes, "
                    "KIND[,key=value]...", H3100_FAULT_SPEC_MAX);
    }
    parts = g_strsplit(text, ",", -1);
    for (int k = 0; parts[0] && k < H3100_FAULT_NKINDS; k++) {
        if (!strcmp(parts[0], kind_names[k])) {
            kind = k;
        }
    }
    if (kind < 0) {
        g_autofree char *all = g_strjoinv(", ", (char **)kind_names);

        return fail(errp, "fault: the kind first, one of %s", all);
    }
    spec->kind = kind;
    seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (int i = 1; parts[i]; i++) {
        char *eq = strchr(parts[i], '=');

        if (!eq || eq == parts[i]) {
            return fail(errp, "fault: '%s' is not key=value", parts[i]);
        }
        *eq = '\0';
        if (!g_hash_table_add(seen, parts[i])) {
            return fail(errp, "fault: '%s' given twice", parts[i]);
        }
        if (!key_fits_kind(parts[i], spec->kind)) {
            return fail(errp, "fault: %s takes no '%s'",
                        kind_names[spec->kind], parts[i]);
        }
        if (!parse_key(parts[i], eq + 1, names, spec, &named_admin, errp)) {
            return false;
        }
    }
    return spec_complete(spec, named_admin, seen, errp);
}

static void add_time(GString *g, const char *key, uint64_t ns)
{
    if (ns % NS_PER_S == 0) {
        g_string_append_printf(g, ",%s=%" PRIu64 "s", key, ns / NS_PER_S);
    } else if (ns % NS_PER_MS == 0) {
        g_string_append_printf(g, ",%s=%" PRIu64 "ms", key, ns / NS_PER_MS);
    } else if (ns % NS_PER_US == 0) {
        g_string_append_printf(g, ",%s=%" PRIu64 "us", key, ns / NS_PER_US);
    } else {
        g_string_append_printf(g, ",%s=%" PRIu64 "ns", key, ns);
    }
}

char *h3100_fault_spec_str(const H3100FaultSpec *sp)
{
    GString *g = g_string_new(kind_names[sp->kind]);

    if (sp->kind == H3100_FAULT_MEDIA) {
        g_string_append(g, sp->write ? ",rw=write" : ",rw=read");
    }
    if (sp->queue == H3100_FAULT_Q_ADMIN) {
        g_string_append(g, ",q=admin");
    } else if (sp->queue == H3100_FAULT_Q_IO) {
        g_string_append(g, ",q=io");
    } else if (sp->queue == H3100_FAULT_Q_ONE) {
        g_string_append_printf(g, ",q=%u", sp->qid);
    }
    if (sp->has_opc) {
        g_string_append_printf(g, ",opc=0x%02x", sp->opc);
    }
    if (sp->nsid) {
        g_string_append_printf(g, ",ns=%" PRIu32, sp->nsid);
    }
    if (sp->has_lba) {
        g_string_append_printf(g, ",lba=%" PRIu64 "-%" PRIu64, sp->slba,
                               sp->elba);
    }
    if (sp->after) {
        g_string_append_printf(g, ",after=%" PRIu64, sp->after);
    }
    if (sp->every > 1) {
        g_string_append_printf(g, ",every=%" PRIu64, sp->every);
    }
    if (sp->kind == H3100_FAULT_AER) {
        uint8_t log;

        g_string_append_printf(g, ",type=%s,info=0x%02x,log=0x%02x",
                               aer_type_name(sp->aer_type, &log),
                               sp->aer_info, sp->aer_log);
        return g_string_free(g, false);
    }
    if (sp->kind == H3100_FAULT_WARNING) {
        const char *sep = ",bits=";

        for (size_t b = 0; b < G_N_ELEMENTS(warn_names); b++) {
            if (sp->warn_bits & (1u << b)) {
                g_string_append_printf(g, "%s%s", sep, warn_names[b]);
                sep = "+";
            }
        }
        return g_string_free(g, false);
    }
    if (sp->kind == H3100_FAULT_MEDIA && !sp->write) {
        g_string_append_printf(g, ",dnr=%s", sp->dnr ? "on" : "off");
        return g_string_free(g, false);
    }
    if (sp->kind == H3100_FAULT_READ_ONLY) {
        g_string_append_printf(g, ",nsattr=%s", sp->nsattr ? "on" : "off");
    }
    if (sp->kind == H3100_FAULT_LINK_DOWN) {
        if (sp->for_ns) {
            add_time(g, "for", sp->for_ns);
        }
        return g_string_free(g, false);
    }
    if (event_kind(sp->kind)) {
        return g_string_free(g, false);   /* ns-detach, -attach: ns= above */
    }
    g_string_append_printf(g, ",count=%" PRIu64, sp->count);
    if (sp->prob_ppm != PPM) {
        g_string_append_printf(g, ",prob=%" PRIu32, sp->prob_ppm);
    }
    if (sp->at_ns) {
        add_time(g, "at", sp->at_ns);
    }
    if (sp->for_ns) {
        add_time(g, "for", sp->for_ns);
    }
    if (sp->kind == H3100_FAULT_STATUS) {
        g_string_append_printf(g, ",sc=0x%03x,dnr=%s,more=%s", sp->sc,
                               sp->dnr ? "on" : "off",
                               sp->more ? "on" : "off");
    }
    if (sp->kind == H3100_FAULT_MEDIA) {
        g_string_append_printf(g, ",dnr=%s", sp->dnr ? "on" : "off");
    }
    if (sp->kind == H3100_FAULT_DELAY ||
        (sp->kind == H3100_FAULT_READY_DELAY && !sp->never)) {
        g_string_append_printf(g, ",ms=%" PRIu32, sp->ms);
    }
    if (sp->never) {
        g_string_append(g, ",ms=never");
    }
    if (sp->kind == H3100_FAULT_FATAL) {
        if (sp->resets == H3100_FAULT_RESETS_NEVER) {
            g_string_append(g, ",resets=never");
        } else {
            g_string_append_printf(g, ",resets=%" PRIu32, sp->resets);
        }
    }
    if (sp->kind == H3100_FAULT_TIMEOUT) {
        g_string_append_printf(g, ",abort=%s",
                               sp->abort_ignored ? "ignore" : "honour");
    }
    return g_string_free(g, false);
}

/* each fault its own stream, from the device's seed */
static uint64_t fault_seed(const H3100Fault *f, uint64_t seed)
{
    return seed ^ ((uint64_t)f->id << 32);
}

void h3100_fault_reseed(H3100FaultTable *t, uint64_t seed)
{
    for (int i = 0; i < H3100_FAULT_MAX; i++) {
        t->f[i].rng = fault_seed(&t->f[i], seed);
    }
}

uint32_t h3100_fault_arm(H3100FaultTable *t, const H3100FaultSpec *spec,
                         uint64_t now, uint64_t seed, GError **errp)
{
    for (int i = 0; i < H3100_FAULT_MAX; i++) {
        H3100Fault *f = &t->f[i];

        if (!f->id) {
            memset(f, 0, sizeof(*f));
            f->id = ++t->last_id;
            f->spec = *spec;
            f->armed_ns = now;
            f->rng = fault_seed(f, seed);
            return f->id;
        }
    }
    fail(errp, "fault: %d faults armed already (fault-clear)",
         H3100_FAULT_MAX);
    return 0;
}

bool h3100_fault_clear(H3100FaultTable *t, const char *what, GError **errp)
{
    uint64_t id;

    if (!strcmp(what, "all")) {
        for (int i = 0; i < H3100_FAULT_MAX; i++) {
            t->f[i].id = 0;
        }
        return true;
    }
    if (!parse_u64(what, UINT32_MAX, &id) || !id) {
        return fail(errp, "fault-clear: an id or 'all', not '%s'", what);
    }
    for (int i = 0; i < H3100_FAULT_MAX; i++) {
        if (t->f[i].id == id) {
            t->f[i].id = 0;
            return true;
        }
    }
    return fail(errp, "fault-clear: no fault %" PRIu64 " is armed", id);
}

bool h3100_fault_spent(const H3100Fault *f)
{
    return f->spec.count && f->fired >= f->spec.count;
}

unsigned h3100_fault_armed(const H3100FaultTable *t)
{
    unsigned n = 0;

    for (int i = 0; i < H3100_FAULT_MAX; i++) {
        n += !!t->f[i].id;
    }
    return n;
}

static bool matches(const H3100FaultSpec *sp, const H3100FaultCmd *c)
{
    if (!c) {
        /* the controller's enable: a fault with no command keys */
        return !sp->queue && !sp->has_opc && !sp->nsid && !sp->has_lba;
    }
    switch (sp->queue) {
    case H3100_FAULT_Q_ANY:
        break;
    case H3100_FAULT_Q_ADMIN:
        if (!c->admin) {
            return false;
        }
        break;
    case H3100_FAULT_Q_IO:
        if (c->admin) {
            return false;
        }
        break;
    case H3100_FAULT_Q_ONE:
        if (c->admin || c->qid != sp->qid) {
            return false;
        }
        break;
    }
    if ((sp->has_opc && c->opc != sp->opc) ||
        (sp->nsid && (c->admin || c->nsid != sp->nsid))) {
        return false;
    }
    if (sp->has_lba) {
        /* overlap of [slba, slba + nlb - 1] with [sp->slba, sp->elba] */
        return !c->admin && c->has_lba && c->slba <= sp->elba &&
               c->slba + (c->nlb - 1) >= sp->slba;
    }
    return true;
}

static bool in_window(const H3100Fault *f, uint64_t now)
{
    uint64_t from = f->armed_ns + f->spec.at_ns;

    return now >= from && (!f->spec.for_ns || now - from < f->spec.for_ns);
}

/* The trigger, for a command that matches: fire this time? */
static bool triggers(H3100Fault *f)
{
    const H3100FaultSpec *sp = &f->spec;
    uint64_t k;

    f->matched++;
    if (f->matched <= sp->after) {
        return false;
    }
    k = f->matched - sp->after - 1;
    if (sp->every > 1 && k % sp->every) {
        return false;
    }
    if (sp->prob_ppm < PPM &&
        rng_splitmix(&f->rng) % PPM >= sp->prob_ppm) {
        return false;
    }
    f->fired++;
    return true;
}

int h3100_fault_next(H3100FaultTable *t, int from, H3100FaultKind kind,
                     const H3100FaultCmd *cmd, uint64_t now)
{
    for (int i = MAX(from, 0); i < H3100_FAULT_MAX; i++) {
        H3100Fault *f = &t->f[i];

        if (!f->id || f->spec.kind != kind ||
            h3100_fault_spent(f) || !matches(&f->spec, cmd) ||
            !in_window(f, now)) {
            continue;
        }
        if (triggers(f)) {
            return i;
        }
    }
    return -1;
}

char *h3100_fault_list(const H3100FaultTable *t)
{
    GString *g = g_string_new(NULL);

    for (int i = 0; i < H3100_FAULT_MAX; i++) {
        const H3100Fault *f = &t->f[i];
        g_autofree char *spec = NULL;

        if (!f->id) {
            continue;
        }
        spec = h3100_fault_spec_str(&f->spec);
        g_string_append_printf(g, "%s%" PRIu32 " %s matched=%" PRIu64
                               " fired=%" PRIu64 "%s", g->len ? "\n" : "",
                               f->id, spec, f->matched, f->fired,
                               h3100_fault_spent(f) ? " spent" : "");
    }
    return g_string_free(g, false);
}

/* ---- the migration stream ------------------------------------------------ */

/*
 * One line per fault: "id slot armed_ns matched fired rng spec", then a
 * last line "last last_id".
 */
char *h3100_fault_save(const H3100FaultTable *t)
{
    GString *g = g_string_new(NULL);

    for (int i = 0; i < H3100_FAULT_MAX; i++) {
        const H3100Fault *f = &t->f[i];
        g_autofree char *spec = NULL;

        if (!f->id) {
            continue;
        }
        spec = h3100_fault_spec_str(&f->spec);
        g_string_append_printf(g, "%" PRIu32 " %d %" PRIu64 " %" PRIu64
                               " %" PRIu64 " %" PRIu64 " %s\n", f->id, i,
                               f->armed_ns, f->matched, f->fired, f->rng,
                               spec);
    }
    g_string_append_printf(g, "last %" PRIu32, t->last_id);
    return g_string_free(g, false);
}

static bool load_line(H3100FaultTable *t, const char *line,
                      const H3100FaultOpName *names, GError **errp)
{
    g_auto(GStrv) w = g_strsplit(line, " ", 7);
    uint64_t id, slot, armed, matched, fired, rng;
    H3100Fault *f;

    if (g_strv_length(w) != 7 || !parse_u64(w[0], UINT32_MAX, &id) || !id ||
        !parse_u64(w[1], H3100_FAULT_MAX - 1, &slot) ||
        !parse_u64(w[2], UINT64_MAX, &armed) ||
        !parse_u64(w[3], UINT64_MAX, &matched) ||
        !parse_u64(w[4], UINT64_MAX, &fired) ||
        !parse_u64(w[5], UINT64_MAX, &rng) || fired > matched) {
        return fail(errp, "faults: a bad line in the stream");
    }
    f = &t->f[slot];
    if (f->id || id > t->last_id) {
        return fail(errp, "faults: fault %" PRIu64 " twice or out of order",
                    id);
    }
    for (int i = 0; i < H3100_FAULT_MAX; i++) {
        if (t->f[i].id == id) {
            return fail(errp, "faults: fault %" PRIu64 " twice", id);
        }
    }
    if (!h3100_fault_parse(w[6], names, &f->spec, errp)) {
        return false;
    }
    if (f->spec.kind == H3100_FAULT_MEDIA && !f->spec.write) {
        /* marked when armed, never kept: a stream with one is forged */
        return fail(errp, "faults: media,rw=read is no fault of the table");
    }
    f->id = id;
    f->armed_ns = armed;
    f->matched = matched;
    f->fired = fired;
    f->rng = rng;
    return true;
}

bool h3100_fault_load(H3100FaultTable *t, const char *text,
                      const H3100FaultOpName *names, GError **errp)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", H3100_FAULT_MAX + 2);
    H3100FaultTable n = { 0 };
    guint len = g_strv_length(lines);
    uint64_t last;

    if (!len || len > H3100_FAULT_MAX + 1 ||
        !g_str_has_prefix(lines[len - 1], "last ") ||
        !parse_u64(lines[len - 1] + 5, UINT32_MAX, &last)) {
        return fail(errp, "faults: the stream's table is not one");
    }
    n.last_id = last;
    for (guint i = 0; i + 1 < len; i++) {
        if (!load_line(&n, lines[i], names, errp)) {
            return false;
        }
    }
    *t = n;
    return true;
}
