/*
 * h3100-vlog: print the H3100 model log page (D0h) readably.
 *
 *   nvme get-log /dev/nvme0 --log-id=0xd0 --log-len=512 --raw-binary > f
 *   h3100-vlog f          (or: ... --raw-binary | h3100-vlog)
 *   h3100-vlog --fields f (NAME=VALUE lines, the names of
 *                          include/h3100/vlog.h, for scripts)
 *
 * The layout is include/h3100/vlog.h (docs/guide/usage.md, "D0h").  Plain C,
 * no QEMU.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <endian.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "h3100/vlog.h"
#include "log_input.h"

static H3100VendorLog vl;

#define VLOG_FIELD(type, name) \
    { #name, offsetof(H3100VendorLog, name), sizeof(type) },

static const struct {
    const char *name;
    size_t offset, size;
} fields[] = { H3100_VLOG_FIELDS(VLOG_FIELD) };

/* --fields: NAME=VALUE, one field a line, for scripts */
static void print_fields(void)
{
    const uint8_t *p = (const uint8_t *)&vl;

    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        uint64_t v = 0;

        for (size_t b = fields[i].size; b-- > 0;) {
            v = (v << 8) | p[fields[i].offset + b];
        }
        printf("%s=%" PRIu64 "\n", fields[i].name, v);
    }
}

static void u64(const char *name, uint64_t le)
{
    printf("%-32s %" PRIu64 "\n", name, le64toh(le));
}

static void u32(const char *name, uint32_t le)
{
    printf("%-32s %" PRIu32 "\n", name, le32toh(le));
}

/* a byte count, also in GB (10^9) */
static void bytes(const char *name, uint64_t le)
{
    uint64_t v = le64toh(le);

    printf("%-32s %" PRIu64 " (%.3f GB)\n", name, v, v / 1e9);
}

/* a fixed point value x1000, printed exactly */
static void milli(const char *name, uint64_t v)
{
    printf("%-32s %" PRIu64 ".%03" PRIu64 "\n", name, v / 1000, v % 1000);
}

static void print_log(void)
{
    printf("DapuStor H3100 model log (D0h) version %u, %u bytes\n",
           le16toh(vl.version), le16toh(vl.size));
    bytes("host bytes written", vl.host_write_bytes);
    bytes("NAND bytes written", vl.nand_write_bytes);
    milli("WAF (lifetime)", le64toh(vl.waf_milli));
    printf("%-32s %" PRIu32 " s (covers %" PRIu64 " ms)\n", "recent window",
           le32toh(vl.recent_window_s), le64toh(vl.recent_ms));
    milli("WAF (recent)", le64toh(vl.recent_waf_milli));
    bytes("host bytes written (recent)", vl.recent_host_write_bytes);
    bytes("NAND bytes written (recent)", vl.recent_nand_write_bytes);
    u64("reclaim runs (GC victims)", vl.gc_victims);
    u64("4 KiB pages moved by reclaim", vl.gc_slots_moved);
    u64("wear-levelling moves", vl.wl_victims);
    u64("emergency reclaim runs", vl.emergency_gc);
    bytes("write buffer occupancy", vl.wbuf_bytes);
    bytes("write buffer capacity", vl.wbuf_capacity);
    u64("write buffer stalls", vl.wbuf_stalls);
    printf("%-32s %.6f s\n", "write buffer stall time",
           le64toh(vl.wbuf_stall_ns) / 1e9);
    u64("read-ahead hits (4 KiB)", vl.ra_hits);
    u64("read-ahead 4 KiB read", vl.ra_slots_read);
    printf("%-32s %" PRIu32 " of %" PRIu32 "\n", "free superblocks",
           le32toh(vl.free_superblocks), le32toh(vl.superblocks));
    u64("program/erase suspends", vl.suspends);
    u32("erase count min", vl.erase_min);
    milli("erase count avg", le32toh(vl.erase_avg_milli));
    u32("erase count max", vl.erase_max);
    u32("rated P/E cycles", vl.rated_pe);
    printf("%-32s %" PRIu32 " %%\n", "percentage used",
           le32toh(vl.percentage_used));
    printf("%-32s %" PRIu32 " %%\n", "available spare",
           le32toh(vl.available_spare_pct));
    u64("block erases", vl.block_erases);
    bytes("host bytes read", vl.host_read_bytes);
    bytes("NAND bytes read", vl.nand_read_bytes);
    u64("factory bad blocks", vl.factory_bad_blocks);
    u64("grown bad blocks", vl.grown_bad_blocks);
    u64("unaligned I/Os", vl.unaligned_ios);
    u64("write buffer read hits (4 KiB)", vl.buffer_read_hits);
    bytes("mapped bytes", vl.mapped_bytes);
    printf("%-32s %.3f s\n", "drive time (this run)",
           le64toh(vl.now_ns) / 1e9);
}

int main(int argc, char **argv)
{
    bool kv = argc > 1 && !strcmp(argv[1], "--fields");
    long n;
    int rc;

    if (kv) {
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    n = h3100_log_input(argc, argv, "[--fields] [FILE]   (raw D0h log bytes; "
                        "default stdin; --fields: NAME=VALUE lines)", &vl,
                        sizeof(vl), &rc);
    if (n < 0) {
        return rc;
    }
    if ((size_t)n < offsetof(H3100VendorLog, reserved)) {
        fprintf(stderr, "h3100-vlog: %ld bytes read, the log has %d\n", n,
                H3100_VLOG_BYTES);
        return 1;
    }
    if (le16toh(vl.version) != H3100_VLOG_VERSION ||
        le16toh(vl.size) != H3100_VLOG_BYTES) {
        fprintf(stderr, "h3100-vlog: version %u, size %u: not an H3100 "
                "vendor log version %d\n", le16toh(vl.version),
                le16toh(vl.size), H3100_VLOG_VERSION);
        return 1;
    }
    if (kv) {
        print_fields();
    } else {
        print_log();
    }
    return 0;
}
