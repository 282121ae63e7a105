/*
 * h3100-vlog: print the DapuStor H3100 vendor log page (CAh) readably.
 *
 *   nvme get-log /dev/nvme0 --log-id=0xca --log-len=512 --raw-binary > f
 *   h3100-vlog f          (or: ... --raw-binary | h3100-vlog)
 *
 * The layout is in docs/usage.md ("Vendor log CAh").  Plain C, no QEMU.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define VLOG_BYTES 512
#define VLOG_VERSION 1

static const uint8_t *page;

static uint64_t le(unsigned off, unsigned bytes)
{
    uint64_t v = 0;

    for (unsigned i = bytes; i-- > 0;) {
        v = (v << 8) | page[off + i];
    }
    return v;
}

static void u64(const char *name, unsigned off)
{
    printf("%-32s %" PRIu64 "\n", name, le(off, 8));
}

static void u32(const char *name, unsigned off)
{
    printf("%-32s %" PRIu64 "\n", name, le(off, 4));
}

/* a byte count, also in GB (10^9) */
static void bytes(const char *name, unsigned off)
{
    uint64_t v = le(off, 8);

    printf("%-32s %" PRIu64 " (%.3f GB)\n", name, v, v / 1e9);
}

/* a fixed point value x1000, printed exactly */
static void milli(const char *name, uint64_t v)
{
    printf("%-32s %" PRIu64 ".%03" PRIu64 "\n", name, v / 1000, v % 1000);
}

int main(int argc, char **argv)
{
    static uint8_t buf[VLOG_BYTES];
    FILE *f = stdin;
    size_t n;

    if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "-h") ||
                                   !strcmp(argv[1], "--help")))) {
        fprintf(stderr, "usage: %s [FILE]   (raw CAh log bytes; default "
                "stdin)\n", argv[0]);
        return argc > 2 ? 2 : 0;
    }
    if (argc == 2 && strcmp(argv[1], "-")) {
        f = fopen(argv[1], "rb");
        if (!f) {
            perror(argv[1]);
            return 1;
        }
    }
    n = fread(buf, 1, sizeof(buf), f);
    if (f != stdin) {
        fclose(f);
    }
    if (n < 256) {
        fprintf(stderr, "h3100-vlog: %zu bytes read, the log has %d\n", n,
                VLOG_BYTES);
        return 1;
    }
    page = buf;
    if (le(0, 2) != VLOG_VERSION || le(2, 2) != VLOG_BYTES) {
        fprintf(stderr, "h3100-vlog: version %" PRIu64 ", size %" PRIu64
                ": not an H3100 vendor log version %d\n", le(0, 2),
                le(2, 2), VLOG_VERSION);
        return 1;
    }

    printf("DapuStor H3100 vendor log (CAh) version %" PRIu64 ", %" PRIu64
           " bytes\n", le(0, 2), le(2, 2));
    bytes("host bytes written", 8);
    bytes("NAND bytes written", 16);
    milli("WAF (lifetime)", le(24, 8));
    printf("%-32s %" PRIu64 " s (covers %" PRIu64 " ms)\n", "recent window",
           le(4, 4), le(56, 8));
    milli("WAF (recent)", le(32, 8));
    bytes("host bytes written (recent)", 40);
    bytes("NAND bytes written (recent)", 48);
    u64("reclaim runs (GC victims)", 64);
    u64("4 KiB pages moved by reclaim", 72);
    u64("wear-levelling moves", 80);
    u64("emergency reclaim runs", 88);
    bytes("write buffer occupancy", 96);
    bytes("write buffer capacity", 104);
    u64("write buffer stalls", 112);
    printf("%-32s %.6f s\n", "write buffer stall time", le(120, 8) / 1e9);
    u64("read-ahead hits (4 KiB)", 128);
    u64("read-ahead 4 KiB read", 136);
    printf("%-32s %" PRIu64 " of %" PRIu64 "\n", "free superblocks",
           le(144, 4), le(148, 4));
    u64("program/erase suspends", 152);
    u32("erase count min", 160);
    milli("erase count avg", le(164, 4));
    u32("erase count max", 168);
    u32("rated P/E cycles", 172);
    printf("%-32s %" PRIu64 " %%\n", "percentage used", le(176, 4));
    printf("%-32s %" PRIu64 " %%\n", "available spare", le(180, 4));
    u64("block erases", 184);
    bytes("host bytes read", 192);
    bytes("NAND bytes read", 200);
    u64("factory bad blocks", 208);
    u64("grown bad blocks", 216);
    u64("unaligned I/Os", 224);
    u64("write buffer read hits (4 KiB)", 232);
    bytes("mapped bytes", 240);
    printf("%-32s %.3f s\n", "drive time (this run)", le(248, 8) / 1e9);
    return 0;
}
