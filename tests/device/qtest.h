/*
 * A small client of QEMU's qtest text protocol for the device tests.
 *
 * Each QTest owns one QEMU process started with -accel qtest, its temp
 * directory (socket, QEMU's stderr, the guest-error log, backing files)
 * and the virtual clock.  Protocol failures, QEMU dying and time-outs
 * fail the running Check test with QEMU's last words; QEMU never
 * outlives the test process (PR_SET_PDEATHSIG and an atexit hook).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef H3100_QTEST_H
#define H3100_QTEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

typedef struct QTest QTest;

/* A scratch directory that lives as long as the test process. */
const char *qt_tmpdir(void);

/*
 * Create a sparse backing file of @size bytes in qt_tmpdir() and return
 * its path (g_free it).  @format is "raw" or "qcow2" (qemu-img needed).
 */
char *qt_backing_file(const char *name, uint64_t size, const char *format);

/*
 * Start QEMU with the qtest accelerator and the machine/device options
 * @args (a shell-like string), connect, and return the session.  Fails
 * the test, with QEMU's stderr, if QEMU does not come up.
 */
QTest *qt_start(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/*
 * Run QEMU with @args expecting it to refuse to start.  Returns true if
 * it exited by itself (not by a signal) with a non-zero status within
 * the time-out; *@err receives its stderr (g_free it).
 */
bool qt_start_fails(char **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/*
 * Stop QEMU: SIGTERM, wait (SIGKILL after a time-out).  Fails the test
 * unless QEMU was still alive and exited cleanly.
 */
void qt_quit(QTest *s);

/*
 * Send one QMP command (JSON text, e.g. "{\"execute\": \"cont\"}") and
 * return its reply line (g_free it).  The QMP session is opened on first
 * use; events that arrive before a reply are kept for
 * qt_qmp_event_seen().
 */
char *qt_qmp(QTest *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* The same, failing the test unless the command succeeded. */
void qt_qmp_ok(QTest *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Has QEMU sent the QMP event @name (e.g. "BLOCK_IO_ERROR") so far? */
bool qt_qmp_event_seen(QTest *s, const char *name);

/*
 * Kill QEMU with SIGKILL, as a crash or the OOM killer would: nothing is
 * written back.  Fails the test if QEMU was already dead.
 */
void qt_kill(QTest *s);

/* QEMU's stderr and the guest-error log (-d guest_errors) so far. */
char *qt_stderr(QTest *s);
char *qt_guest_log(QTest *s);

/* True while the QEMU process is alive (reaps it if not). */
bool qt_alive(QTest *s);
/* Once QEMU has exited: its exit code, or -signal if a signal killed it;
 * -1000 while it runs. */
int qt_exit_code(QTest *s);

/* Send one command line, return the reply after "OK" (g_free it). */
char *qt_cmd(QTest *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Same, but returns the whole reply line, whatever its first word. */
char *qt_cmd_raw(QTest *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

uint8_t qt_readb(QTest *s, uint64_t addr);
uint16_t qt_readw(QTest *s, uint64_t addr);
uint32_t qt_readl(QTest *s, uint64_t addr);
uint64_t qt_readq(QTest *s, uint64_t addr);
void qt_writeb(QTest *s, uint64_t addr, uint8_t v);
void qt_writew(QTest *s, uint64_t addr, uint16_t v);
void qt_writel(QTest *s, uint64_t addr, uint32_t v);
void qt_writeq(QTest *s, uint64_t addr, uint64_t v);

void qt_memread(QTest *s, uint64_t addr, void *buf, size_t len);
void qt_memwrite(QTest *s, uint64_t addr, const void *buf, size_t len);
void qt_memset(QTest *s, uint64_t addr, uint8_t v, size_t len);

uint8_t qt_inb(QTest *s, uint16_t port);
uint16_t qt_inw(QTest *s, uint16_t port);
uint32_t qt_inl(QTest *s, uint16_t port);
void qt_outb(QTest *s, uint16_t port, uint8_t v);
void qt_outw(QTest *s, uint16_t port, uint16_t v);
void qt_outl(QTest *s, uint16_t port, uint32_t v);

/* PCI configuration space of bus 0 through 0xcf8/0xcfc. */
uint32_t qt_pci_cfg_readl(QTest *s, int devfn, int reg);
uint16_t qt_pci_cfg_readw(QTest *s, int devfn, int reg);
uint8_t qt_pci_cfg_readb(QTest *s, int devfn, int reg);
void qt_pci_cfg_writel(QTest *s, int devfn, int reg, uint32_t v);
void qt_pci_cfg_writew(QTest *s, int devfn, int reg, uint16_t v);

/* Virtual clock (ns).  Stepping returns the new time. */
int64_t qt_clock_now(QTest *s);
int64_t qt_clock_step(QTest *s, int64_t ns);
/*
 * Step to the next timer deadline and return the new time (the same time
 * if that deadline is now), -1 if there is no deadline.  While the device
 * holds virtual time for its host I/O, the next deadline is nanoseconds
 * away.
 */
int64_t qt_clock_step_next(QTest *s);
int64_t qt_clock_set(QTest *s, int64_t ns);

/* IRQ interception ("irq_intercept_in ioapic"). */
void qt_irq_intercept_in(QTest *s, const char *qom_path);
bool qt_irq_level(QTest *s, int irq);

/* Wall-clock milliseconds since an arbitrary point. */
int64_t qt_wall_ms(void);

#endif
