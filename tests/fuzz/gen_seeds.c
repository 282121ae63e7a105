/*
 * Seed corpus for fuzz_state: valid state files of the fuzz drive
 * (fuzz_config.h) in the states the loader must accept, so mutations
 * start from every structure it reads.
 *
 *   gen_seeds DIR
 *
 * fresh, fresh with front-end state and the dirty flag, written on
 * several streams, full with reclaim under way, worn (grown bad blocks
 * and retired superblocks), read-only, sanitized, the same drive as
 * version 1 and 2 files, and two with the flags that make fuzz_state
 * keep a file's own checksums.  Built with the fuzzer's FTL_CHUNK_SHIFT: a
 * file only loads into a build with the same chunk size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_config.h"
#include "model_priv.h"
#include "state_format.h"


static const char *out_dir;
static H3100Config cfg;

static void die(const char *what, GError *err)
{
    fprintf(stderr, "gen_seeds: %s: %s\n", what, err ? err->message : "");
    exit(1);
}

static H3100Model *new_drive(const H3100Config *c)
{
    GError *err = NULL;
    H3100Model *m = h3100_model_new(c, &err);

    if (!m) {
        die("new drive", err);
    }
    h3100_model_set_timing(m, false);
    return m;
}

static void write_at(H3100Model *m, uint32_t stream, uint64_t slot,
                     uint64_t slots)
{
    H3100Io io = {
        .op = H3100_OP_WRITE, .offset = slot * H3100_SLOT_BYTES,
        .length = slots * H3100_SLOT_BYTES, .stream = stream,
    };

    h3100_model_submit(m, 0, &io);
}

static void random_writes(H3100Model *m, uint64_t n, uint64_t seed)
{
    uint64_t slots = h3100_user_slots(&m->cfg);
    Rng rng;

    rng_seed(&rng, seed);
    for (uint64_t i = 0; i < n && !m->read_only; i++) {
        write_at(m, 0, rng_below(&rng, slots), 1);
    }
}

/* Save @m as DIR/@name, check that it loads, and free it. */
static void save(H3100Model *m, const char *name, const void *extra,
                 size_t extra_len, uint32_t flags)
{
    g_autofree char *path = g_build_filename(out_dir, name, NULL);
    GError *err = NULL;
    H3100Model *back;

    if (!h3100_model_save_with(m, path, extra, extra_len, flags, &err)) {
        die(path, err);
    }
    back = h3100_model_load(&m->cfg, path, &err);
    if (!back) {
        die(path, err);
    }
    h3100_model_free(back);
    h3100_model_free(m);
    printf("%s\n", path);
}

/* The version 3 file @from without @cut bytes before its last @keep. */
static void save_older(const char *from, const char *name, uint32_t version,
                       size_t cut, size_t keep)
{
    g_autofree char *src = g_build_filename(out_dir, from, NULL);
    g_autofree char *path = g_build_filename(out_dir, name, NULL);
    g_autofree uint8_t *buf = NULL;
    GError *err = NULL;
    gsize len;

    if (!g_file_get_contents(src, (char **)&buf, &len, &err)) {
        die(src, err);
    }
    memmove(buf + len - keep - cut, buf + len - keep, keep);
    len -= cut;
    memcpy(buf + STATE_HDR_VERSION, &version, 4);
    state_header_mend(buf, len);
    if (!g_file_set_contents(path, (char *)buf, len, &err)) {
        die(path, err);
    }
    h3100_model_free(h3100_model_load(&cfg, path, &err));
    if (err) {
        die(path, err);
    }
    printf("%s\n", path);
}

/* Full, then overwritten until reclaim has a victim part moved. */
static H3100Model *reclaiming_drive(void)
{
    H3100Model *m = new_drive(&cfg);
    GError *err = NULL;
    uint64_t seed = 1;

    if (!h3100_model_precondition(m, "seq", 3, NULL, NULL, &err)) {
        die("precondition", err);
    }
    do {
        random_writes(m, 97, seed++);
    } while (m->ftl.victim == FTL_NO_SB || m->ftl.cursor == 0);
    return m;
}

/* Worn out fast: grown bad blocks, retired superblocks, then read-only. */
static H3100Model *worn_drive(bool until_read_only)
{
    H3100Config worn = cfg;
    H3100Model *m;

    /* not part of the drive's identity: the file loads into cfg */
    worn.ftl.rated_pe = 20;
    worn.ftl.grown_bad_ppm = 100000;
    m = new_drive(&worn);
    for (uint64_t seed = 1; !m->read_only; seed++) {
        random_writes(m, h3100_user_slots(&cfg), seed);
        if (!until_read_only && m->ftl.bb.grown_bad > 4) {
            break;
        }
    }
    m->cfg = cfg;
    return m;
}

int main(int argc, char **argv)
{
    static const char device_state[64] = "front end's own state";
    GError *err = NULL;
    H3100Model *m;

    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    g_mkdir_with_parents(out_dir, 0755);
    if (!fuzz_config(&cfg, &err)) {
        die("config", err);
    }

    save(new_drive(&cfg), "fresh.state", NULL, 0, 0);
    save(new_drive(&cfg), "fresh-extra.state", device_state,
         sizeof(device_state), H3100_STATE_DIRTY);

    m = new_drive(&cfg);
    for (uint32_t s = 0; s < H3100_MAX_STREAMS; s++) {
        write_at(m, s, s * 1000, 100 + s);
    }
    h3100_model_submit(m, 0, &(H3100Io){ .op = H3100_OP_DEALLOCATE,
                                         .offset = 4096 * 1010,
                                         .length = 4096 * 50 });
    save(m, "streams.state", NULL, 0, 0);
    /* flags that tell fuzz_state to keep the file's own checksums */
    m = new_drive(&cfg);
    write_at(m, 1, 500, 700);
    save(m, "keep-payload.state", NULL, 0, 1u << 31);
    m = new_drive(&cfg);
    write_at(m, 2, 900, 300);
    save(m, "keep-header.state", NULL, 0, 3u << 30);

    save(reclaiming_drive(), "reclaiming.state", device_state, 16, 0);
    save(worn_drive(false), "worn.state", NULL, 0, 0);
    save(worn_drive(true), "read-only.state", NULL, 0, 0);

    m = reclaiming_drive();
    h3100_model_sanitize(m, 0);
    write_at(m, 3, 77, 300);
    save(m, "sanitized.state", NULL, 0, 0);

    save_older("streams.state", "streams-v3.state", 3, STATE_ECC_BYTES,
               STATE_EXTRA_LEN_BYTES);
    save_older("streams.state", "streams-v2.state", 2,
               STATE_THERMAL_BYTES + STATE_ECC_BYTES, STATE_EXTRA_LEN_BYTES);
    save_older("streams.state", "streams-v1.state", 1,
               STATE_THERMAL_BYTES + STATE_ECC_BYTES + STATE_EXTRA_LEN_BYTES,
               0);
    return 0;
}
