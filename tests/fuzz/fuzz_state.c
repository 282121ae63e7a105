/*
 * libFuzzer target: the drive-state loader (models/state.c) on hostile
 * files.  Built by build-state-fuzz.sh with ASan and UBSan.
 *
 * Each input is a state file for the drive of fuzz_config.h.  The
 * harness first mends the header's payload length and both CRCs, as
 * anyone crafting a file can: without that, nearly every mutation would
 * stop at a checksum and the fuzzer would never reach the FTL's
 * structure.  Two bits of the header's flags (which the model does not
 * interpret) keep the input's own values instead, so the length and
 * checksum checks get fuzzed too: bit 31 keeps its payload length and
 * CRC, and with bit 31, bit 30 keeps its header CRC as well.
 *
 * Whatever the loader accepts must then be safe to use: the harness runs
 * host I/O on it (writes on several streams, so reclaim runs on a full
 * drive, deallocation, reads, sanitize, format), checks every FTL
 * invariant after, and saves and reloads it.  Anything the loader
 * refuses must come with a one-line "drive state ... is corrupt" error
 * (or another drive's / version's one).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crc32c.h"
#include "fuzz_config.h"

/* The state header's fields the harness mends (see models/state.c). */
#define HDR_CRC         12
#define HDR_PAYLOAD     16
#define HDR_PAYLOAD_CRC 24
#define HDR_FLAGS       108
#define HDR_BYTES       112
#define KEEP_PAYLOAD    (1u << 31)
#define KEEP_HEADER_CRC (1u << 30)

typedef struct Harness {
    H3100Config cfg;
    int fd;                           /* a memfd holding the input */
    char path[64];                    /* how the loader opens it */
    char *round_trip;                 /* a real file: saving renames */
} Harness;

static Harness *harness(void)
{
    static Harness h;
    GError *err = NULL;

    if (h.round_trip) {
        return &h;
    }
    if (!fuzz_config(&h.cfg, &err)) {
        fprintf(stderr, "fuzz_state: %s\n", err->message);
        abort();
    }
    h.fd = memfd_create("h3100-state", 0);
    if (h.fd < 0) {
        perror("memfd_create");
        abort();
    }
    snprintf(h.path, sizeof(h.path), "/proc/self/fd/%d", h.fd);
    h.round_trip = g_strdup_printf("%s/h3100-fuzz-%d.state",
                                   g_get_tmp_dir(), (int)getpid());
    return &h;
}

static void mend_header(uint8_t *buf, size_t len)
{
    uint64_t payload = len - HDR_BYTES;
    uint32_t flags, crc;

    memcpy(&flags, buf + HDR_FLAGS, 4);
    if (!(flags & KEEP_PAYLOAD)) {
        memcpy(buf + HDR_PAYLOAD, &payload, 8);
        crc = crc32c(buf + HDR_BYTES, payload);
        memcpy(buf + HDR_PAYLOAD_CRC, &crc, 4);
    } else if (flags & KEEP_HEADER_CRC) {
        return;
    }
    memset(buf + HDR_CRC, 0, 4);
    crc = crc32c(buf, HDR_BYTES);
    memcpy(buf + HDR_CRC, &crc, 4);
}

static void put_input(Harness *h, const uint8_t *data, size_t size)
{
    uint8_t *buf = g_memdup2(data, size);

    if (size >= HDR_BYTES) {
        mend_header(buf, size);
    }
    if (ftruncate(h->fd, 0) || pwrite(h->fd, buf, size, 0) != (ssize_t)size) {
        perror("memfd write");
        abort();
    }
    g_free(buf);
}

static void io(H3100Model *m, uint64_t now, H3100Op op, uint32_t stream,
               uint64_t offset, uint64_t length)
{
    H3100Io req = {
        .op = op, .offset = offset, .length = length, .stream = stream,
    };

    h3100_model_submit(m, now, &req);
}

static void expect_sound(H3100Model *m, const char *after)
{
    char *why = h3100_model_check(m);

    if (why) {
        fprintf(stderr, "fuzz_state: invariant broken after %s: %s\n",
                after, why);
        abort();
    }
}

/* Host I/O that reaches every structure the loader filled. */
static void exercise(H3100Model *m, uint64_t bytes)
{
    uint64_t now = 1000000000ULL, slots = bytes / H3100_SLOT_BYTES;

    for (uint32_t i = 0; i < 96; i++) {
        uint64_t slot = (i * 7919ULL) % slots;

        io(m, now, H3100_OP_WRITE, i % H3100_MAX_STREAMS,
           slot * H3100_SLOT_BYTES, H3100_SLOT_BYTES);
        now += 20000;
    }
    io(m, now, H3100_OP_READ, 0, 0, 16 * H3100_SLOT_BYTES);
    io(m, now, H3100_OP_DEALLOCATE, 0, 512, bytes / 3);
    io(m, now, H3100_OP_WRITE_ZEROES, 0, bytes / 2 + 100, 40000);
    h3100_model_idle(m, now + 50000000ULL);
    expect_sound(m, "writes");
    h3100_model_sanitize(m, now + 60000000ULL);
    io(m, now + 70000000ULL, H3100_OP_WRITE, 1, 0, 64 * H3100_SLOT_BYTES);
    h3100_model_format(m);
    io(m, now + 80000000ULL, H3100_OP_WRITE, 2, 0, 8 * H3100_SLOT_BYTES);
    expect_sound(m, "sanitize and format");
}

/* An accepted drive saves, and the file loads back. */
static void expect_round_trip(Harness *h, H3100Model *m, GBytes *extra)
{
    gsize len = 0;
    const void *data = extra ? g_bytes_get_data(extra, &len) : NULL;
    GError *err = NULL;
    H3100Model *back;

    if (!h3100_model_save_with(m, h->round_trip, data, len, 0, &err)) {
        fprintf(stderr, "fuzz_state: save failed: %s\n", err->message);
        abort();
    }
    back = h3100_model_load(&h->cfg, h->round_trip, &err);
    if (!back) {
        fprintf(stderr, "fuzz_state: own save refused: %s\n", err->message);
        abort();
    }
    h3100_model_free(back);
    unlink(h->round_trip);
}

static void expect_clear_refusal(const GError *err)
{
    if (!err || !err->message[0] || strchr(err->message, '\n') ||
        strncmp(err->message, "drive state '", 13)) {
        fprintf(stderr, "fuzz_state: refused without a one-line error: %s\n",
                err ? err->message : "(none)");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Harness *h = harness();
    GBytes *extra = NULL;
    GError *err = NULL;
    H3100Model *m;

    put_input(h, data, size);
    m = h3100_model_load_with(&h->cfg, h->path, &extra, NULL, &err);
    if (!m) {
        expect_clear_refusal(err);
        g_error_free(err);
        return 0;
    }
    expect_round_trip(h, m, extra);
    exercise(m, h->cfg.geo.user_bytes);
    h3100_model_free(m);
    g_bytes_unref(extra);
    return 0;
}
