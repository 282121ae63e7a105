/*
 * Seed corpus for fuzz_migrate: streams of the fuzz drive (fuzz_config.h)
 * as a live migration sends them, in fuzz_migrate.c's record format, so
 * mutations start from every kind of item and core.
 *
 *   gen_mig_seeds DIR
 *
 * fresh; filled in order; written on every stream with rounds in between
 * (pages sent twice); full with reclaim under way; formatted and
 * sanitized while the transfer ran (chunk and reverse-map resets); and one
 * that keeps its core's own checksum.  Built with the fuzzer's
 * FTL_CHUNK_SHIFT, as the target.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_config.h"
#include "h3100/migrate.h"

static const char *out_dir;
static H3100Config cfg;

static void die(const char *what, GError *err)
{
    fprintf(stderr, "gen_mig_seeds: %s: %s\n", what, err ? err->message : "");
    exit(1);
}

static void put_item(GByteArray *b, const H3100MigItem *it)
{
    uint32_t index = it->index;
    uint8_t head[6] = { it->kind };
    uint16_t n = H3100_MIG_PAGE_BYTES / 4;

    memcpy(head + 1, &index, 4);
    head[5] = it->fill;
    g_byte_array_append(b, head, sizeof(head));
    if (!it->fill) {
        /* the trailing unmapped entries go without bytes */
        while (n && ((const uint32_t *)it->data)[n - 1] == UINT32_MAX) {
            n--;
        }
        g_byte_array_append(b, (const uint8_t *)&n, 2);
        g_byte_array_append(b, it->data, n * 4);
    }
}

static void send_due(H3100Model *m, GByteArray *b)
{
    g_autofree H3100MigItem *it = g_new(H3100MigItem, 1);

    while (h3100_mig_next(m, it)) {
        put_item(b, it);
    }
}

static void io(H3100Model *m, uint64_t *now, H3100Op op, uint32_t stream,
               uint64_t slot, uint64_t slots)
{
    H3100Io req = {
        .op = op, .offset = slot * H3100_SLOT_BYTES,
        .length = slots * H3100_SLOT_BYTES, .stream = stream,
    };

    h3100_model_submit(m, *now, &req);
    *now += 20000;
}

static void finish(H3100Model *m, GByteArray *b, const char *name)
{
    g_autoptr(GByteArray) core = NULL;
    g_autofree char *path = g_strdup_printf("%s/%s", out_dir, name);
    uint8_t zero = 0;

    send_due(m, b);
    core = h3100_mig_core_save(m);
    g_byte_array_append(b, &zero, 1);
    g_byte_array_append(b, core->data, core->len);
    if (!g_file_set_contents(path, (const char *)b->data, b->len, NULL)) {
        die("write", NULL);
    }
    printf("%s: %u bytes\n", path, b->len);
    g_byte_array_free(b, true);
    h3100_model_free(m);
}

static H3100Model *start(const char *pre, GByteArray **b, uint8_t flags)
{
    GError *err = NULL;
    H3100Model *m = h3100_model_new(&cfg, &err);

    if (!m || !h3100_model_precondition(m, pre, 1, NULL, NULL, &err)) {
        die("drive", err);
    }
    *b = g_byte_array_new();
    g_byte_array_append(*b, &flags, 1);
    h3100_mig_track_start(m);
    return m;
}

int main(int argc, char **argv)
{
    uint64_t slots, now = 1;
    GByteArray *b;
    GError *err = NULL;
    H3100Model *m;

    if (argc != 2) {
        fprintf(stderr, "usage: gen_mig_seeds DIR\n");
        return 2;
    }
    out_dir = argv[1];
    if (!fuzz_config(&cfg, &err)) {
        die("config", err);
    }
    slots = cfg.geo.user_bytes / H3100_SLOT_BYTES;

    finish(start("none", &b, 0), b, "fresh");
    finish(start("seq", &b, 0), b, "filled");

    m = start("seq:0.5", &b, 0);
    for (int round = 0; round < 4; round++) {
        send_due(m, b);
        for (uint32_t i = 0; i < 40; i++) {
            io(m, &now, H3100_OP_WRITE, (i + round) % H3100_MAX_STREAMS,
               (i * 131 + round * 17) % slots, 1);
        }
    }
    finish(m, b, "streams");

    m = start("rand:1", &b, 0);
    send_due(m, b);
    for (uint32_t i = 0; i < 200; i++) {
        io(m, &now, H3100_OP_WRITE, 0, (i * 7919) % slots, 1);
    }
    finish(m, b, "reclaim");

    m = start("seq", &b, 0);
    send_due(m, b);
    h3100_model_format(m);
    io(m, &now, H3100_OP_WRITE, 1, 3, 8);
    finish(m, b, "formatted");

    m = start("rand:1", &b, 0);
    send_due(m, b);
    now = h3100_model_sanitize(m, now);
    io(m, &now, H3100_OP_WRITE, 2, 9, 4);
    finish(m, b, "sanitized");

    finish(start("seq", &b, 1), b, "own-crc");
    return 0;
}
