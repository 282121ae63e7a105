/*
 * h3100-tlog: print an H3100 Telemetry log page (07h or 08h) readably.
 *
 *   nvme telemetry-log /dev/nvme0 --output-file=t.bin      (07h)
 *   nvme telemetry-log /dev/nvme0 --output-file=t.bin --controller-init
 *   h3100-tlog t.bin        (or: ... | h3100-tlog)
 *
 * The layout is include/h3100/telemetry-log.h (docs/guide/usage.md,
 * "Telemetry").  A file that does not hold what its header says is
 * refused with one line.  Plain C, no QEMU.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <endian.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h3100/telemetry-log.h"
#include "log_input.h"

#define TLOG_MAX    (16u << 20)

static const char *const reasons[] = {
    [H3100_TEL_REASON_HOST] = "host-initiated",
    [H3100_TEL_REASON_THROTTLE] = "heavy thermal throttling",
    [H3100_TEL_REASON_READ_ONLY] = "read-only",
    [H3100_TEL_REASON_FATAL] = "controller fatal status",
};

static int refuse(const char *why)
{
    fprintf(stderr, "h3100-tlog: %s\n", why);
    return 1;
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * part / whole : 0;
}

static void print_snapshot(const H3100TelSnapshot *p)
{
    uint16_t r = le16toh(p->reason);
    uint64_t host = le64toh(p->host_write_bytes);

    printf("snapshot: %s, model time %.6f s\n",
           r < sizeof(reasons) / sizeof(reasons[0]) && reasons[r] ?
           reasons[r] : "unknown reason", le64toh(p->now_ns) / 1e9);
    printf("  temperature %u K, throttle level %u, power %u mW%s\n",
           le32toh(p->temperature_k), le32toh(p->throttle_level),
           le32toh(p->power_mw), le32toh(p->read_only) ? ", read-only" : "");
    printf("  write buffer %" PRIu64 " of %" PRIu64 " bytes, %" PRIu64
           " stalls (%" PRIu64 " ns)\n", le64toh(p->wbuf_bytes),
           le64toh(p->wbuf_capacity), le64toh(p->wbuf_stalls),
           le64toh(p->wbuf_stall_ns));
    printf("  free superblocks %u of %u\n", le32toh(p->free_superblocks),
           le32toh(p->superblocks));
    printf("  host written %" PRIu64 " B, NAND written %" PRIu64 " B (WAF "
           "%.3f), host read %" PRIu64 " B\n", host,
           le64toh(p->nand_write_bytes),
           host ? (double)le64toh(p->nand_write_bytes) / host : 0,
           le64toh(p->host_read_bytes));
    printf("  reclaim victims %" PRIu64 " (wear levelling %" PRIu64
           ", emergency %" PRIu64 "), slots moved %" PRIu64 ", erases %"
           PRIu64 "\n", le64toh(p->gc_victims), le64toh(p->wl_victims),
           le64toh(p->emergency_gc), le64toh(p->gc_slots_moved),
           le64toh(p->block_erases));
    printf("  NAND array time %" PRIu64 " ns, backlog %" PRIu64 " ns, cores %"
           PRIu64 " ns, TMT1 %" PRIu64 " ns, TMT2 %" PRIu64 " ns\n",
           le64toh(p->nand_busy_ns), le64toh(p->nand_backlog_ns),
           le64toh(p->core_busy_ns), le64toh(p->tmt1_ns),
           le64toh(p->tmt2_ns));
}

/* data area 2: one line per die and per channel, % of model time busy */
static void print_busy(const uint8_t *da2, uint32_t dies, uint32_t ch,
                       uint64_t now)
{
    for (uint32_t i = 0; i < dies + ch; i++) {
        uint64_t ns;

        memcpy(&ns, da2 + 8 * i, 8);
        ns = le64toh(ns);
        printf("%s %-4u busy %" PRIu64 " ns (%.1f%%)\n",
               i < dies ? "die    " : "channel", i < dies ? i : i - dies,
               ns, pct(ns, now));
    }
}

static void print_history(const H3100TelHistory *h)
{
    uint32_t n = le32toh(h->reclaim_n), m = le32toh(h->thermal_n);

    printf("reclaim victims: last %u of %" PRIu64 "\n", n,
           le64toh(h->reclaims));
    for (uint32_t i = 0; i < n && i < H3100_TEL_RECLAIMS; i++) {
        const H3100TelReclaim *r = &h->reclaim[i];

        printf("  %.6f s superblock %u, %u slots to move%s\n",
               le64toh(r->now_ns) / 1e9, le32toh(r->superblock),
               le32toh(r->valid_slots),
               le32toh(r->wear_levelling) ? " (wear levelling)" : "");
    }
    printf("throttle changes: last %u of %" PRIu64 "\n", m,
           le64toh(h->thermal_changes));
    for (uint32_t i = 0; i < m && i < H3100_TEL_THERMAL; i++) {
        const H3100TelThermal *t = &h->thermal[i];

        printf("  %.6f s %u K, level %u -> %u\n", le64toh(t->now_ns) / 1e9,
               le32toh(t->temperature_k), t->from_level, t->to_level);
    }
}

static int decode(const uint8_t *b, size_t n)
{
    const H3100TelHeader *hdr = (const H3100TelHeader *)b;
    const H3100TelSnapshot *p;
    size_t need, da2;
    uint32_t dies, ch;

    if (n < H3100_TEL_BLOCK || (hdr->lid != H3100_LOG_TELEMETRY_HOST &&
                                hdr->lid != H3100_LOG_TELEMETRY_CTRL)) {
        return refuse("not a telemetry log page (07h / 08h header)");
    }
    printf("log %02Xh (%s), host generation %u, controller data %s "
           "(generation %u)\n", hdr->lid,
           hdr->lid == H3100_LOG_TELEMETRY_HOST ? "host-initiated" :
           "controller-initiated", hdr->host_gen,
           hdr->ctrl_avail ? "available" : "none", hdr->ctrl_gen);
    if (!le16toh(hdr->dalb3)) {
        printf("no data areas\n");
        return 0;
    }
    need = ((size_t)le16toh(hdr->dalb3) + 1) * H3100_TEL_BLOCK;
    if (n < need || le16toh(hdr->dalb1) != 1) {
        return refuse("the data areas its header names are not all there");
    }
    printf("reason: %.*s\n", (int)sizeof(hdr->reason), hdr->reason);
    p = (const H3100TelSnapshot *)(b + H3100_TEL_BLOCK);
    if (memcmp(p->magic, H3100_TEL_MAGIC, 4) ||
        le16toh(p->version) != H3100_TEL_VERSION) {
        return refuse("data area 1 is not an H3100 snapshot of this version");
    }
    dies = le32toh(p->dies);
    ch = le32toh(p->channels);
    if (dies > 1024 || ch > 32) {
        return refuse("data area 1 names more dies or channels than exist");
    }
    da2 = h3100_tel_da2_bytes(dies, ch);
    if (2 * H3100_TEL_BLOCK + da2 + sizeof(H3100TelHistory) != need ||
        le16toh(hdr->dalb2) != 1 + da2 / H3100_TEL_BLOCK) {
        return refuse("the data areas' sizes do not match the snapshot");
    }
    print_snapshot(p);
    print_busy(b + 2 * H3100_TEL_BLOCK, dies, ch, le64toh(p->now_ns));
    print_history((const H3100TelHistory *)(b + 2 * H3100_TEL_BLOCK + da2));
    return 0;
}

int main(int argc, char **argv)
{
    uint8_t *b = calloc(1, TLOG_MAX);
    long n;
    int rc;

    if (!b) {
        return refuse("no memory");
    }
    n = h3100_log_input(argc, argv, "[FILE]   (raw 07h / 08h log bytes; "
                        "default stdin)", b, TLOG_MAX, &rc);
    if (n >= 0) {
        rc = decode(b, n);
    }
    free(b);
    return rc;
}
