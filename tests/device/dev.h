/*
 * Fixture shared by the device tests: QEMU with one dapustor-h3100 on a
 * fresh sparse backing file, and the host driver on top of it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_DEV_H
#define H3100_DEV_H

#include <check.h>
#include <stdio.h>

#include "h3100/model.h"
#include "nvme_host.h"
#include "qtest.h"

/* A 256 MiB namespace on the real 3.2 TB geometry: quick to start. */
#define DEV_PARAMS      "user_bytes=256M"
#define DEV_NS_BYTES    ((uint64_t)256 << 20)
#define DEV_NS_LBAS     (DEV_NS_BYTES / 512)

typedef struct Dev {
    QTest *qt;
    NvmeHost *h;
    NvmeQueue *q;                     /* I/O queue pair 1, once opened */
    char *img;
    uint64_t img_size;
    char *drive_opt;                  /* -drive's options, as started */
    char *dev_opts;                   /* ... -device's after drive=d0 */
    char *extra_args;
} Dev;

/*
 * Start QEMU with the device.  @params are model-params (NULL:
 * DEV_PARAMS), @devopts extra ",key=value" device properties (may be
 * ""), @extra extra QEMU arguments (may be "").  Not enabled yet.
 */
Dev *dev_launch(const char *params, const char *devopts, const char *extra);
/* -device's argument: key=value, or JSON with iothread-vq-mapping= */
char *dev_device_arg(const char *opts);
/* two IOThreads, io1 and io2, for the queues round robin (and their -object) */
#define DEV_QMAP2 ",iothread-vq-mapping=[{\"iothread\": \"io1\"}, " \
                  "{\"iothread\": \"io2\"}]"
#define DEV_IOT2  "-object iothread,id=io1 -object iothread,id=io2"

/* dev_launch on @drive, -drive options as for dev_open_drive (NULL: a raw file). */
Dev *dev_launch_on(const char *drive, const char *params,
                   const char *devopts, const char *extra);
/* dev_launch, then enable, identify and create I/O queue pair 1. */
Dev *dev_open_full(const char *params, const char *devopts,
                   const char *extra);
/*
 * dev_open_full with the drive given as -drive options (id and if are
 * added), e.g. "driver=null-co,size=256M,read-zeroes=on"; no backing
 * file is made (d->img is NULL).
 */
Dev *dev_open_drive(const char *drive, const char *devopts,
                    const char *extra);
/* dev_open_drive with model-params @params instead of DEV_PARAMS. */
Dev *dev_open_drive_params(const char *drive, const char *params,
                           const char *devopts);
static inline Dev *dev_open(void)
{
    return dev_open_full(NULL, "", "");
}
/*
 * The controller lost its state (a power cut, a machine reset): forget
 * the host driver's queues and bring it up again, with I/O queue pair 1.
 */
void dev_reprobe(Dev *d);
/* Stop QEMU (checking it exits cleanly) and free everything. */
void dev_close(Dev *d);
/* Kill QEMU (SIGKILL: nothing written back) and free everything. */
void dev_kill(Dev *d);

/*
 * Migrate @d's QEMU to a new one with the same drive, started with the
 * -device options @devopts after drive=d0 (NULL: the source's,
 * d->dev_opts) and @extra (NULL: the source's) and -incoming on a unix
 * socket; @uri, if not NULL, instead
 * (e.g. "file:PATH": then the destination starts, with -incoming, only
 * once the source has written it).  On "completed" the destination's
 * virtual clock is set to the source's (qtest does not migrate it, a
 * VM's clock does), the source has quit cleanly and @d drives the
 * destination; else the source still runs and *@dst_err holds what the
 * destination printed (if @dst_err).  Returns the source's final
 * migration status (g_free it).
 */
char *dev_migrate(Dev *d, const char *devopts, const char *extra,
                  const char *uri, char **dst_err);

/* Fail with a readable status comparison. */
#define ck_status(got, want, ...) do { \
        uint16_t got_ = (got), want_ = (want); \
        ck_assert_msg(got_ == want_, "%s: status 0x%03x (%s), expected " \
                      "0x%03x (%s)", g_strdup_printf(__VA_ARGS__), got_, \
                      nh_status_name(got_), want_, nh_status_name(want_)); \
    } while (0)

/* Read the namespace's bytes straight from the backing file. */
void dev_backing_read(Dev *d, uint64_t offset, void *buf, size_t len);

/* A model of the same profile as the device (for timing expectations). */
H3100Model *dev_model_new(const char *profile, const char *params,
                          bool timing);

/* Little-endian field access in identify/log buffers. */
static inline uint16_t le16_at(const void *p, size_t off)
{
    const uint8_t *b = (const uint8_t *)p + off;

    return b[0] | (b[1] << 8);
}

static inline uint32_t le32_at(const void *p, size_t off)
{
    return le16_at(p, off) | ((uint32_t)le16_at(p, off + 2) << 16);
}

static inline uint64_t le64_at(const void *p, size_t off)
{
    return le32_at(p, off) | ((uint64_t)le32_at(p, off + 4) << 32);
}

/* 128-bit SMART counters: the low 64 bits (tests stay far below). */
static inline uint64_t le128_lo(const void *p, size_t off)
{
    return le64_at(p, off);
}

/*
 * Level of the device's INTx line (q35 routes PIRQA-H to GSI 16-23);
 * needs qt_irq_intercept_in(qt, "ioapic") first.
 */
int dev_intx_level(QTest *qt);

/* Run a suite: returns the process exit status. */
int dev_main(Suite *s);
/* A TCase with a per-test time-out suited to QEMU start-up. */
TCase *dev_tcase(Suite *s, const char *name);

#endif
