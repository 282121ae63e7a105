/*
 * libFuzzer target: the receiver of a migrated drive model
 * (models/migrate_recv.c, models/migrate.c's core loader) on hostile
 * streams.  Built by build-state-fuzz.sh with ASan and UBSan, for the
 * drive of fuzz_config.h; seeds by gen_mig_seeds.c.
 *
 * An input is byte 0, flags (bit 0: keep the core's own checksum; else
 * the harness mends it, as anyone crafting a stream can), then records:
 *   1..4  an item of that kind: u32 index, u8 fill, and unless fill a
 *         u16 count of 32-bit entries (at most a page's) and the entries
 *         (the rest of the page unmapped)
 *   0     the core: every byte left
 * Anything else ends the input without a core (the receiver is freed).
 *
 * Whatever the receiver accepts must pass the state loader's whole-map
 * check (ftl_check) and be safe to use: the harness runs host I/O on it,
 * checks every invariant again, saves it and loads the file back.
 * Refusals must come with a one-line "migrated drive state is corrupt"
 * error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "fuzz_config.h"
#include "h3100/migrate.h"

#define KEEP_CORE_CRC 1u

static H3100Config *config(void)
{
    static H3100Config cfg;
    static bool done;
    GError *err = NULL;

    if (!done && !fuzz_config(&cfg, &err)) {
        fprintf(stderr, "fuzz_migrate: %s\n", err->message);
        abort();
    }
    done = true;
    return &cfg;
}

static void expect_sound(H3100Model *m, const char *after)
{
    char *why = h3100_model_check(m);

    if (why) {
        fprintf(stderr, "fuzz_migrate: invariant broken %s: %s\n", after,
                why);
        abort();
    }
}

static void io(H3100Model *m, uint64_t now, H3100Op op, uint32_t stream,
               uint64_t offset, uint64_t length)
{
    H3100Io req = {
        .op = op, .offset = offset, .length = length, .stream = stream,
    };

    h3100_model_submit(m, now, &req);
}

/* Host I/O on the received drive, then a save and a reload of it. */
static void exercise(H3100Model *m)
{
    uint64_t bytes = config()->geo.user_bytes;
    uint64_t slots = bytes / H3100_SLOT_BYTES, now = 1;
    g_autofree char *path = g_strdup_printf("%s/h3100-fuzz-mig-%d.state",
                                            g_get_tmp_dir(), (int)getpid());
    GError *err = NULL;
    H3100Model *back;

    for (uint32_t i = 0; i < 64; i++) {
        io(m, now, H3100_OP_WRITE, i % H3100_MAX_STREAMS,
           (i * 7919ULL) % slots * H3100_SLOT_BYTES, H3100_SLOT_BYTES);
        now += 20000;
    }
    io(m, now, H3100_OP_READ, 0, 0, 16 * H3100_SLOT_BYTES);
    io(m, now, H3100_OP_DEALLOCATE, 0, 512, bytes / 3);
    h3100_model_idle(m, now + 50000000ULL);
    expect_sound(m, "after host I/O");
    if (!h3100_model_save(m, path, &err)) {
        fprintf(stderr, "fuzz_migrate: save: %s\n", err->message);
        abort();
    }
    back = h3100_model_load(config(), path, &err);
    if (!back) {
        fprintf(stderr, "fuzz_migrate: own save refused: %s\n",
                err->message);
        abort();
    }
    h3100_model_free(back);
    unlink(path);
}

static void expect_clear_refusal(const GError *err)
{
    if (!err || strchr(err->message, '\n') ||
        !strstr(err->message, "migrated drive state is corrupt")) {
        fprintf(stderr, "fuzz_migrate: refused without a one-line error: "
                "%s\n", err ? err->message : "(none)");
        abort();
    }
}

/* One item record at @p; its length, or 0 at the end or a bad one. */
static size_t parse_item(const uint8_t *p, size_t left, H3100MigItem *it)
{
    uint32_t index;
    uint16_t n;

    if (left < 6) {
        return 0;
    }
    it->kind = p[0];
    memcpy(&index, p + 1, 4);
    it->index = index;
    it->fill = p[5] & 1;
    if (it->fill) {
        return 6;
    }
    if (left < 8) {
        return 0;
    }
    memcpy(&n, p + 6, 2);
    n = MIN(n, H3100_MIG_PAGE_BYTES / 4);
    if (left < 8 + (size_t)n * 4) {
        return 0;
    }
    memset(it->data, 0xff, sizeof(it->data));
    memcpy(it->data, p + 8, n * 4);
    return 8 + n * 4;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree H3100MigItem *it = g_new(H3100MigItem, 1);
    H3100MigRecv *r;
    GError *err = NULL;
    size_t pos = 1;

    if (!size) {
        return 0;
    }
    r = h3100_mig_recv_new(config(), &err);
    if (!r) {
        abort();
    }
    while (pos < size && data[pos] >= 1 && data[pos] <= 4) {
        size_t n = parse_item(data + pos, size - pos, it);

        if (!n) {
            break;
        }
        pos += n;
        if (!h3100_mig_recv_item(r, it, &err)) {
            expect_clear_refusal(err);
            g_clear_error(&err);
            h3100_mig_recv_free(r);
            return 0;
        }
    }
    if (pos < size && data[pos] == 0) {
        g_autofree uint8_t *core = g_memdup2(data + pos + 1, size - pos - 1);
        size_t len = size - pos - 1;
        H3100Model *m;

        if (!(data[0] & KEEP_CORE_CRC) && len >= 4) {
            uint32_t crc = crc32c(core, len - 4);

            memcpy(core + len - 4, &crc, 4);
        }
        m = h3100_mig_recv_finish(r, core, len, &err);
        if (m) {
            expect_sound(m, "as received");
            exercise(m);
            h3100_model_free(m);
            return 0;
        }
        expect_clear_refusal(err);
        g_clear_error(&err);
    }
    h3100_mig_recv_free(r);
    return 0;
}
