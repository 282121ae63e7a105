/*
 * h3100-hotcold: write hot and cold data to an NVMe namespace, with or
 * without Streams, to see what separating them does to the drive's WAF.
 *
 * Copyright (c) 2025 dapustor-h3100 authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 *   h3100-hotcold /dev/nvme0n1 --bytes 256M [--streams] [--hot-pct 20]
 *                 [--hot-writes 80] [--bs 16k] [--seed 1]
 *
 * Random writes of --bs bytes: --hot-writes percent of them land in the
 * first --hot-pct percent of the namespace, the rest in the remainder.
 * With --streams, hot writes carry stream 1 and cold ones stream 2
 * (DTYPE Streams, DSPEC) through the NVMe passthrough ioctl: Linux stopped
 * tagging writes with streams in 5.18, so this is how a guest sends them.
 * Streams must be enabled first (nvme dir-send ... --target-dir=1
 * --endir=1).  The seed is the only source of randomness.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <linux/nvme_ioctl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define NVME_CMD_WRITE      0x01
#define DTYPE_STREAMS       (1u << 20)

typedef struct Opts {
    const char *dev;
    uint64_t bytes;
    uint64_t bs;
    unsigned hot_pct;
    unsigned hot_writes;
    uint64_t seed;
    bool streams;
} Opts;

static void usage(void)
{
    fprintf(stderr, "usage: h3100-hotcold DEV --bytes N [--streams] "
            "[--hot-pct P] [--hot-writes P] [--bs N] [--seed S]\n");
    exit(1);
}

/* "256M", "16k", "4096": bytes, or 0 when it is not a size */
static uint64_t parse_size(const char *s)
{
    char *end;
    uint64_t v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s) {
        return 0;
    }
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    }
    return *end ? 0 : v;
}

static unsigned parse_pct(const char *name, const char *s)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);

    if (end == s || *end || v < 1 || v > 99) {
        fprintf(stderr, "h3100-hotcold: %s must be 1..99, not '%s'\n", name,
                s);
        exit(1);
    }
    return v;
}

static void parse(int argc, char **argv, Opts *o)
{
    *o = (Opts) { .bs = 16384, .hot_pct = 20, .hot_writes = 80, .seed = 1 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!strcmp(a, "--streams")) {
            o->streams = true;
            continue;
        }
        if (a[0] != '-') {
            o->dev = a;
            continue;
        }
        if (!v) {
            usage();
        }
        i++;
        if (!strcmp(a, "--bytes")) {
            o->bytes = parse_size(v);
        } else if (!strcmp(a, "--bs")) {
            o->bs = parse_size(v);
        } else if (!strcmp(a, "--hot-pct")) {
            o->hot_pct = parse_pct(a, v);
        } else if (!strcmp(a, "--hot-writes")) {
            o->hot_writes = parse_pct(a, v);
        } else if (!strcmp(a, "--seed")) {
            o->seed = strtoull(v, NULL, 0);
        } else {
            usage();
        }
    }
    if (!o->dev || !o->bytes || !o->bs) {
        usage();
    }
}

/* splitmix64: the same seed, the same writes */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int write_chunk(int fd, unsigned nsid, void *buf, uint32_t len,
                       uint64_t slba, uint32_t nlb, unsigned stream)
{
    struct nvme_passthru_cmd c = {
        .opcode = NVME_CMD_WRITE,
        .nsid = nsid,
        .addr = (uintptr_t)buf,
        .data_len = len,
        .cdw10 = (uint32_t)slba,
        .cdw11 = (uint32_t)(slba >> 32),
        .cdw12 = (nlb - 1) | (stream ? DTYPE_STREAMS : 0),
        .cdw13 = stream << 16,
    };

    return ioctl(fd, NVME_IOCTL_IO_CMD, &c);
}

int main(int argc, char **argv)
{
    Opts o;
    int fd, lba_size, nsid;
    uint64_t dev_bytes, chunks, hot, n, state;
    void *buf;

    parse(argc, argv, &o);
    fd = open(o.dev, O_RDWR);
    if (fd < 0) {
        fprintf(stderr, "h3100-hotcold: %s: %s\n", o.dev, strerror(errno));
        return 1;
    }
    nsid = ioctl(fd, NVME_IOCTL_ID);
    if (nsid <= 0 || ioctl(fd, BLKSSZGET, &lba_size) ||
        ioctl(fd, BLKGETSIZE64, &dev_bytes)) {
        fprintf(stderr, "h3100-hotcold: %s is not an NVMe namespace\n",
                o.dev);
        return 1;
    }
    if (o.bs % lba_size || o.bs > dev_bytes / 10) {
        fprintf(stderr, "h3100-hotcold: --bs %" PRIu64 " is not a multiple "
                "of the %d-byte LBA or too large for the namespace\n", o.bs,
                lba_size);
        return 1;
    }
    if (posix_memalign(&buf, 4096, o.bs)) {
        fprintf(stderr, "h3100-hotcold: no memory\n");
        return 1;
    }
    memset(buf, 0xa5, o.bs);
    chunks = dev_bytes / o.bs;
    hot = chunks * o.hot_pct / 100;
    n = (o.bytes + o.bs - 1) / o.bs;
    state = o.seed;
    for (uint64_t i = 0; i < n; i++) {
        bool is_hot = next_random(&state) % 100 < o.hot_writes;
        uint64_t chunk = is_hot ? next_random(&state) % hot :
                         hot + next_random(&state) % (chunks - hot);
        unsigned stream = o.streams ? (is_hot ? 1 : 2) : 0;
        int r = write_chunk(fd, nsid, buf, o.bs, chunk * (o.bs / lba_size),
                            o.bs / lba_size, stream);

        if (r < 0) {
            fprintf(stderr, "h3100-hotcold: write %" PRIu64 ": %s\n", i,
                    strerror(errno));
            return 1;
        }
        if (r > 0) {
            fprintf(stderr, "h3100-hotcold: write %" PRIu64 ": NVMe status "
                    "0x%x\n", i, r);
            return 1;
        }
    }
    printf("h3100-hotcold: %" PRIu64 " writes of %" PRIu64 " bytes, %u%% "
           "to the hottest %u%%, %s\n", n, o.bs, o.hot_writes, o.hot_pct,
           o.streams ? "hot on stream 1, cold on stream 2" : "no streams");
    return 0;
}
