/*
 * A small client of QEMU's qtest text protocol (see system/qtest.c and
 * tests/qtest/libqtest.c in QEMU for the protocol).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "qtest.h"

#define QT_MAX_IRQ 256
#define QT_START_TIMEOUT_MS 20000
#define QT_REPLY_TIMEOUT_MS 30000
#define QT_QUIT_TIMEOUT_MS 10000

struct QTest {
    pid_t pid;
    int fd;
    int index;
    bool exited;
    int wstatus;
    char *err_path;
    char *log_path;
    GString *rx;
    char *qmp_path;                   /* QEMU's QMP socket (it listens) */
    int qmp_fd;                       /* -1 until the first qt_qmp() */
    GString *qmp_rx;
    GString *qmp_events;              /* every event line seen */
    bool irq[QT_MAX_IRQ];
    QTest *next;
};

static char *tmpdir;
static pid_t tmpdir_owner;
static QTest *live;
static int qemu_count;

static void qt_remove_tree(const char *path)
{
    GDir *dir = g_dir_open(path, 0, NULL);
    const char *name;

    if (dir) {
        while ((name = g_dir_read_name(dir))) {
            g_autofree char *p = g_build_filename(path, name, NULL);

            if (g_file_test(p, G_FILE_TEST_IS_DIR) &&
                !g_file_test(p, G_FILE_TEST_IS_SYMLINK)) {
                qt_remove_tree(p);
            } else {
                g_unlink(p);
            }
        }
        g_dir_close(dir);
    }
    g_rmdir(path);
}

/* atexit: a failed test exits from inside Check; take QEMU down too. */
static void qt_cleanup(void)
{
    for (QTest *s = live; s; s = s->next) {
        if (s->pid > 0 && !s->exited) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
            s->exited = true;
        }
    }
    if (tmpdir && tmpdir_owner == getpid() && !getenv("QTEST_KEEP_TMP")) {
        qt_remove_tree(tmpdir);
    }
}

/*
 * The runner process makes the directory (qt_tmpdir() before running the
 * suite) and removes it at exit; each forked test gets a subdirectory,
 * which survives a failed test (Check leaves with _exit) until then.
 */
const char *qt_tmpdir(void)
{
    if (!tmpdir || tmpdir_owner != getpid()) {
        GError *err = NULL;
        char *dir;

        /* no ck_assert here: the runner calls this outside any test */
        if (tmpdir) {
            dir = g_build_filename(tmpdir, "test-XXXXXX", NULL);
            if (!g_mkdtemp(dir)) {
                fprintf(stderr, "cannot make %s: %s\n", dir,
                        strerror(errno));
                abort();
            }
        } else {
            dir = g_dir_make_tmp("h3100-dev-XXXXXX", &err);
            if (!dir) {
                fprintf(stderr, "cannot make a temp dir: %s\n",
                        err ? err->message : "?");
                abort();
            }
        }
        tmpdir = dir;
        tmpdir_owner = getpid();
        atexit(qt_cleanup);
        signal(SIGPIPE, SIG_IGN);
    }
    return tmpdir;
}

int64_t qt_wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    put_be32(p, v >> 32);
    put_be32(p + 4, (uint32_t)v);
}

/*
 * An empty qcow2 v3 image: 64 KiB clusters; header, refcount table,
 * refcount block and L1 table in clusters 0-3.
 */
static void qt_write_qcow2(const char *path, uint64_t size)
{
    const uint64_t cluster = 65536;
    uint64_t l1_size = (size + cluster * (cluster / 8) - 1) /
                       (cluster * (cluster / 8));
    g_autofree uint8_t *img = g_malloc0(4 * cluster);
    uint8_t *h = img;
    GError *err = NULL;

    ck_assert(l1_size * 8 <= cluster);
    memcpy(h, "QFI\xfb", 4);
    put_be32(h + 4, 3);                   /* version */
    put_be32(h + 20, 16);                 /* cluster_bits */
    put_be64(h + 24, size);
    put_be32(h + 36, (uint32_t)l1_size);
    put_be64(h + 40, 3 * cluster);        /* l1_table_offset */
    put_be64(h + 48, cluster);            /* refcount_table_offset */
    put_be32(h + 56, 1);                  /* refcount_table_clusters */
    put_be32(h + 96, 4);                  /* refcount_order: 16 bits */
    put_be32(h + 100, 104);               /* header_length */
    put_be64(img + cluster, 2 * cluster); /* refcount block */
    for (int i = 0; i < 4; i++) {
        img[2 * cluster + 2 * i + 1] = 1; /* clusters 0-3 in use */
    }
    ck_assert_msg(g_file_set_contents(path, (char *)img, 4 * cluster, &err),
                  "cannot write %s: %s", path, err ? err->message : "");
}

char *qt_backing_file(const char *name, uint64_t size, const char *format)
{
    char *path = g_build_filename(qt_tmpdir(), name, NULL);

    if (format && strcmp(format, "qcow2") == 0) {
        g_autofree char *cmd = NULL;
        g_autofree char *out = NULL;
        g_autofree char *err = NULL;
        int status = -1;

        cmd = g_strdup_printf("qemu-img create -q -f qcow2 '%s' %" PRIu64,
                              path, size);
        if (!g_spawn_command_line_sync(cmd, &out, &err, &status, NULL)) {
            /* no qemu-img here: write an empty image ourselves */
            qt_write_qcow2(path, size);
        } else {
            ck_assert_msg(status == 0, "qemu-img failed: %s", err);
        }
    } else {
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

        ck_assert_msg(fd >= 0, "cannot create %s: %s", path,
                      strerror(errno));
        ck_assert_msg(ftruncate(fd, size) == 0, "ftruncate %s: %s", path,
                      strerror(errno));
        close(fd);
    }
    return path;
}

static const char *qt_binary(void)
{
    const char *bin = getenv("QTEST_QEMU_BINARY");

    ck_assert_msg(bin && *bin, "QTEST_QEMU_BINARY is not set");
    return bin;
}

static char *qt_read_file_tail(const char *path, size_t max)
{
    char *text = NULL;
    size_t len = 0;

    if (!path || !g_file_get_contents(path, &text, &len, NULL)) {
        return g_strdup("");
    }
    if (len > max) {
        char *tail = g_strdup(text + len - max);

        g_free(text);
        return tail;
    }
    return text;
}

static const char *qt_describe_status(int wstatus, char *buf, size_t len)
{
    if (WIFEXITED(wstatus)) {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(wstatus));
    } else if (WIFSIGNALED(wstatus)) {
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)));
    } else {
        snprintf(buf, len, "status 0x%x", wstatus);
    }
    return buf;
}

bool qt_alive(QTest *s)
{
    if (!s->exited) {
        pid_t r = waitpid(s->pid, &s->wstatus, WNOHANG);

        if (r == s->pid) {
            s->exited = true;
        }
    }
    return !s->exited;
}

int qt_exit_code(QTest *s)
{
    if (qt_alive(s)) {
        return -1000;
    }
    return WIFEXITED(s->wstatus) ? WEXITSTATUS(s->wstatus) :
           -WTERMSIG(s->wstatus);
}

/* Fail the test: QEMU is gone or misbehaving. */
static void G_GNUC_NORETURN qt_fail(QTest *s, const char *what)
{
    g_autofree char *err = qt_read_file_tail(s->err_path, 2000);
    char st[96] = "still running";

    if (!qt_alive(s)) {
        qt_describe_status(s->wstatus, st, sizeof(st));
    }
    ck_abort_msg("%s (QEMU %s); QEMU stderr:\n%s", what, st, err);
    abort();
}

static char **qt_build_argv(const char *args, const char *sock,
                            const char *qmp, const char *log)
{
    g_autofree char *cmd = NULL;
    GError *err = NULL;
    char **argv = NULL;

    if (sock) {
        cmd = g_strdup_printf("'%s' -machine q35 -accel qtest -display none "
                              "-nodefaults -m 256M "
                              "-qtest unix:%s -qtest-log /dev/null "
                              "-qmp unix:%s,server=on,wait=off "
                              "-d guest_errors,unimp -D '%s' %s",
                              qt_binary(), sock, qmp, log, args);
    } else {
        /* no qtest socket: just let QEMU parse options and start */
        cmd = g_strdup_printf("'%s' -machine q35 -accel qtest -display none "
                              "-nodefaults -m 256M -D '%s' %s",
                              qt_binary(), log, args);
    }
    ck_assert_msg(g_shell_parse_argv(cmd, NULL, &argv, &err),
                  "bad QEMU arguments '%s': %s", cmd, err->message);
    return argv;
}

static pid_t qt_spawn(char **argv, const char *err_path)
{
    pid_t parent = getpid();
    pid_t pid = fork();

    ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) {
            _exit(127);
        }
        dup2(devnull, 0);
        dup2(err, 1);
        dup2(err, 2);
        execv(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

QTest *qt_start(const char *fmt, ...)
{
    g_autofree char *args = NULL;
    g_autofree char *sock_path = NULL;
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    QTest *s = g_new0(QTest, 1);
    char **argv;
    int lsock;
    int64_t deadline;
    va_list ap;

    va_start(ap, fmt);
    args = g_strdup_vprintf(fmt, ap);
    va_end(ap);

    s->index = qemu_count++;
    sock_path = g_strdup_printf("%s/qtest-%d.sock", qt_tmpdir(), s->index);
    s->err_path = g_strdup_printf("%s/qemu-%d.err", qt_tmpdir(), s->index);
    s->log_path = g_strdup_printf("%s/qemu-%d.log", qt_tmpdir(), s->index);
    s->rx = g_string_new("");
    s->fd = -1;
    s->qmp_path = g_strdup_printf("%s/qmp-%d.sock", qt_tmpdir(), s->index);
    s->qmp_fd = -1;
    s->qmp_rx = g_string_new("");
    s->qmp_events = g_string_new("");

    ck_assert(strlen(sock_path) < sizeof(addr.sun_path));
    strcpy(addr.sun_path, sock_path);
    lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_msg(lsock >= 0, "socket: %s", strerror(errno));
    unlink(sock_path);
    ck_assert_msg(bind(lsock, (struct sockaddr *)&addr, sizeof(addr)) == 0,
                  "bind %s: %s", sock_path, strerror(errno));
    ck_assert(listen(lsock, 1) == 0);

    argv = qt_build_argv(args, sock_path, s->qmp_path, s->log_path);
    s->pid = qt_spawn(argv, s->err_path);
    g_strfreev(argv);
    s->next = live;
    live = s;

    deadline = qt_wall_ms() + QT_START_TIMEOUT_MS;
    while (s->fd < 0) {
        struct pollfd pfd = { .fd = lsock, .events = POLLIN };
        int r = poll(&pfd, 1, 50);

        if (r > 0) {
            s->fd = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
        } else if (!qt_alive(s)) {
            close(lsock);
            unlink(sock_path);
            qt_fail(s, "QEMU did not start");
        } else if (qt_wall_ms() > deadline) {
            close(lsock);
            qt_fail(s, "QEMU did not connect to the qtest socket");
        }
    }
    close(lsock);
    unlink(sock_path);
    return s;
}

bool qt_start_fails(char **err, const char *fmt, ...)
{
    g_autofree char *args = NULL;
    g_autofree char *err_path = NULL;
    g_autofree char *log_path = NULL;
    char **argv;
    pid_t pid;
    int wstatus = 0;
    int64_t deadline;
    va_list ap;

    va_start(ap, fmt);
    args = g_strdup_vprintf(fmt, ap);
    va_end(ap);

    err_path = g_strdup_printf("%s/qemu-%d.err", qt_tmpdir(), qemu_count);
    log_path = g_strdup_printf("%s/qemu-%d.log", qt_tmpdir(), qemu_count);
    qemu_count++;
    /* no qtest socket: with -S QEMU would otherwise run forever */
    argv = qt_build_argv(args, NULL, NULL, log_path);
    pid = qt_spawn(argv, err_path);
    g_strfreev(argv);

    deadline = qt_wall_ms() + QT_START_TIMEOUT_MS;
    for (;;) {
        pid_t r = waitpid(pid, &wstatus, WNOHANG);

        if (r == pid) {
            break;
        }
        if (qt_wall_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &wstatus, 0);
            *err = qt_read_file_tail(err_path, 4000);
            return false;
        }
        g_usleep(5000);
    }
    *err = qt_read_file_tail(err_path, 4000);
    return WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0;
}

static void qt_close_sockets(QTest *s)
{
    if (s->fd >= 0) {
        close(s->fd);
        s->fd = -1;
    }
    if (s->qmp_fd >= 0) {
        close(s->qmp_fd);
        s->qmp_fd = -1;
    }
}

void qt_quit(QTest *s)
{
    char st[96];
    int64_t deadline;

    if (!qt_alive(s)) {
        qt_fail(s, "QEMU died before the end of the test");
    }
    qt_close_sockets(s);
    kill(s->pid, SIGTERM);
    deadline = qt_wall_ms() + QT_QUIT_TIMEOUT_MS;
    while (qt_alive(s)) {
        if (qt_wall_ms() > deadline) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &s->wstatus, 0);
            s->exited = true;
            qt_fail(s, "QEMU hung on SIGTERM and was killed");
        }
        g_usleep(2000);
    }
    if (!WIFEXITED(s->wstatus) || WEXITSTATUS(s->wstatus) != 0) {
        qt_describe_status(s->wstatus, st, sizeof(st));
        qt_fail(s, "QEMU did not exit cleanly on SIGTERM");
    }
}

/* ---- QMP --------------------------------------------------------------- */

/* One line from QEMU's QMP socket (g_free it). */
static char *qt_qmp_line(QTest *s)
{
    int64_t deadline = qt_wall_ms() + QT_REPLY_TIMEOUT_MS;

    for (;;) {
        char *nl = strchr(s->qmp_rx->str, '\n');
        char buf[4096];
        struct pollfd pfd = { .fd = s->qmp_fd, .events = POLLIN };
        ssize_t n;

        if (nl) {
            char *line = g_strndup(s->qmp_rx->str, nl - s->qmp_rx->str);

            g_string_erase(s->qmp_rx, 0, nl - s->qmp_rx->str + 1);
            return line;
        }
        if (qt_wall_ms() > deadline) {
            qt_fail(s, "no reply on the QMP socket");
        }
        if (poll(&pfd, 1, 50) <= 0) {
            if (!qt_alive(s)) {
                qt_fail(s, "QEMU died while QMP waited");
            }
            continue;
        }
        n = read(s->qmp_fd, buf, sizeof(buf));
        if (n <= 0) {
            qt_fail(s, "the QMP socket closed");
        }
        g_string_append_len(s->qmp_rx, buf, n);
    }
}

static void qt_qmp_send(QTest *s, const char *json)
{
    size_t len = strlen(json), done = 0;

    while (done < len) {
        ssize_t n = write(s->qmp_fd, json + done, len - done);

        if (n <= 0) {
            qt_fail(s, "cannot write to the QMP socket");
        }
        done += n;
    }
}

/* The next reply that is not an event (events are kept). */
static char *qt_qmp_reply(QTest *s)
{
    for (;;) {
        char *line = qt_qmp_line(s);

        if (!strstr(line, "\"event\"")) {
            return line;
        }
        g_string_append(s->qmp_events, line);
        g_string_append_c(s->qmp_events, '\n');
        g_free(line);
    }
}

/*
 * QEMU may send an event before the greeting: a monitor takes events
 * from its start, and only its connection's handler, in the monitor's
 * own thread, switches it to capabilities negotiation and greets.  An
 * I/O error stopping the VM as the test connects lands in between.
 */
static void qt_qmp_connect(QTest *s)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    g_autofree char *greeting = NULL;
    g_autofree char *caps = NULL;

    ck_assert(strlen(s->qmp_path) < sizeof(addr.sun_path));
    strcpy(addr.sun_path, s->qmp_path);
    s->qmp_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_msg(s->qmp_fd >= 0, "socket: %s", strerror(errno));
    if (connect(s->qmp_fd, (struct sockaddr *)&addr, sizeof(addr))) {
        qt_fail(s, "cannot connect to the QMP socket");
    }
    greeting = qt_qmp_reply(s);
    ck_assert_msg(strstr(greeting, "\"QMP\""), "QMP greeting: %s", greeting);
    qt_qmp_send(s, "{\"execute\": \"qmp_capabilities\"}\n");
    caps = qt_qmp_reply(s);
    ck_assert_msg(strstr(caps, "\"return\""), "qmp_capabilities: %s", caps);
}

char *qt_qmp(QTest *s, const char *fmt, ...)
{
    g_autofree char *json = NULL;
    va_list ap;

    if (s->qmp_fd < 0) {
        qt_qmp_connect(s);
    }
    va_start(ap, fmt);
    json = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    qt_qmp_send(s, json);
    qt_qmp_send(s, "\n");
    return qt_qmp_reply(s);
}

void qt_qmp_ok(QTest *s, const char *fmt, ...)
{
    g_autofree char *json = NULL;
    g_autofree char *r = NULL;
    va_list ap;

    va_start(ap, fmt);
    json = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    r = qt_qmp(s, "%s", json);
    ck_assert_msg(strstr(r, "\"return\""), "QMP %s: %s", json, r);
}

bool qt_qmp_event_seen(QTest *s, const char *name)
{
    g_autofree char *pat = g_strdup_printf("\"event\": \"%s\"", name);
    g_autofree char *r = NULL;

    /* a cheap command collects the events that came before it */
    r = qt_qmp(s, "{\"execute\": \"query-status\"}");
    return strstr(s->qmp_events->str, pat) != NULL;
}

void qt_kill(QTest *s)
{
    if (!qt_alive(s)) {
        qt_fail(s, "QEMU died before it was to be killed");
    }
    qt_close_sockets(s);
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &s->wstatus, 0);
    s->exited = true;
}

char *qt_stderr(QTest *s)
{
    return qt_read_file_tail(s->err_path, 1 << 20);
}

char *qt_guest_log(QTest *s)
{
    return qt_read_file_tail(s->log_path, 1 << 20);
}

static void qt_send(QTest *s, const char *line)
{
    size_t len = strlen(line), off = 0;

    while (off < len) {
        ssize_t n = send(s->fd, line + off, len - off, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            qt_fail(s, "cannot send to QEMU");
        }
        off += n;
    }
}

static char *qt_recv_line(QTest *s)
{
    int64_t deadline = qt_wall_ms() + QT_REPLY_TIMEOUT_MS;
    char *eol;

    while (!(eol = strchr(s->rx->str, '\n'))) {
        struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
        char buf[65536];
        ssize_t n;
        int r = poll(&pfd, 1, 100);

        if (r == 0) {
            if (!qt_alive(s)) {
                qt_fail(s, "QEMU died");
            }
            if (qt_wall_ms() > deadline) {
                qt_fail(s, "no reply from QEMU within 30 s (hung?)");
            }
            continue;
        }
        n = recv(s->fd, buf, sizeof(buf), 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            /* give QEMU a moment to be reaped for the message */
            for (int i = 0; i < 100 && qt_alive(s); i++) {
                g_usleep(10000);
            }
            qt_fail(s, "QEMU closed the qtest connection (crashed?)");
        }
        g_string_append_len(s->rx, buf, n);
    }
    {
        size_t off = eol - s->rx->str;
        char *line = g_strndup(s->rx->str, off);

        g_string_erase(s->rx, 0, off + 1);
        return line;
    }
}

/* Read the reply to a command, handling the asynchronous IRQ lines. */
static char *qt_reply(QTest *s)
{
    for (;;) {
        char *line = qt_recv_line(s);

        if (strncmp(line, "IRQ ", 4) == 0) {
            char **w = g_strsplit(line, " ", 0);

            if (w[1] && w[2]) {
                long irq = strtol(w[2], NULL, 0);

                if (irq >= 0 && irq < QT_MAX_IRQ) {
                    s->irq[irq] = strcmp(w[1], "raise") == 0;
                }
            }
            g_strfreev(w);
            g_free(line);
            continue;
        }
        return line;
    }
}

char *qt_cmd_raw(QTest *s, const char *fmt, ...)
{
    g_autofree char *line = NULL;
    va_list ap;

    va_start(ap, fmt);
    line = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (!g_str_has_suffix(line, "\n")) {
        char *l = g_strconcat(line, "\n", NULL);

        g_free(line);
        line = l;
    }
    qt_send(s, line);
    return qt_reply(s);
}

char *qt_cmd(QTest *s, const char *fmt, ...)
{
    g_autofree char *line = NULL;
    g_autofree char *reply = NULL;
    va_list ap;

    va_start(ap, fmt);
    line = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    reply = qt_cmd_raw(s, "%s", line);
    if (strcmp(reply, "OK") == 0) {
        return g_strdup("");
    }
    if (strncmp(reply, "OK ", 3) == 0) {
        return g_strdup(reply + 3);
    }
    {
        g_autofree char *msg = g_strdup_printf("qtest command '%s' failed: "
                                               "%s", g_strchomp(line), reply);
        qt_fail(s, msg);
    }
}

static uint64_t qt_cmd_u64(QTest *s, const char *fmt, ...)
    G_GNUC_PRINTF(2, 3);

static uint64_t qt_cmd_u64(QTest *s, const char *fmt, ...)
{
    g_autofree char *line = NULL;
    g_autofree char *rest = NULL;
    va_list ap;

    va_start(ap, fmt);
    line = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    rest = qt_cmd(s, "%s", line);
    return g_ascii_strtoull(rest, NULL, 0);
}

uint8_t qt_readb(QTest *s, uint64_t a)
{
    return qt_cmd_u64(s, "readb 0x%" PRIx64, a);
}

uint16_t qt_readw(QTest *s, uint64_t a)
{
    return qt_cmd_u64(s, "readw 0x%" PRIx64, a);
}

uint32_t qt_readl(QTest *s, uint64_t a)
{
    return qt_cmd_u64(s, "readl 0x%" PRIx64, a);
}

uint64_t qt_readq(QTest *s, uint64_t a)
{
    return qt_cmd_u64(s, "readq 0x%" PRIx64, a);
}

void qt_writeb(QTest *s, uint64_t a, uint8_t v)
{
    g_free(qt_cmd(s, "writeb 0x%" PRIx64 " 0x%x", a, v));
}

void qt_writew(QTest *s, uint64_t a, uint16_t v)
{
    g_free(qt_cmd(s, "writew 0x%" PRIx64 " 0x%x", a, v));
}

void qt_writel(QTest *s, uint64_t a, uint32_t v)
{
    g_free(qt_cmd(s, "writel 0x%" PRIx64 " 0x%x", a, v));
}

void qt_writeq(QTest *s, uint64_t a, uint64_t v)
{
    g_free(qt_cmd(s, "writeq 0x%" PRIx64 " 0x%" PRIx64, a, v));
}

void qt_memread(QTest *s, uint64_t addr, void *buf, size_t len)
{
    g_autofree char *rest = NULL;
    g_autofree guchar *data = NULL;
    gsize out = 0;

    if (!len) {
        return;
    }
    rest = qt_cmd(s, "b64read 0x%" PRIx64 " 0x%zx", addr, len);
    data = g_base64_decode(rest, &out);
    ck_assert_msg(out == len, "b64read returned %zu bytes, not %zu",
                  (size_t)out, len);
    memcpy(buf, data, len);
}

void qt_memwrite(QTest *s, uint64_t addr, const void *buf, size_t len)
{
    g_autofree char *b64 = NULL;

    if (!len) {
        return;
    }
    b64 = g_base64_encode(buf, len);
    g_free(qt_cmd(s, "b64write 0x%" PRIx64 " 0x%zx %s", addr, len, b64));
}

void qt_memset(QTest *s, uint64_t addr, uint8_t v, size_t len)
{
    g_free(qt_cmd(s, "memset 0x%" PRIx64 " 0x%zx 0x%x", addr, len, v));
}

uint8_t qt_inb(QTest *s, uint16_t port)
{
    return qt_cmd_u64(s, "inb 0x%x", port);
}

uint16_t qt_inw(QTest *s, uint16_t port)
{
    return qt_cmd_u64(s, "inw 0x%x", port);
}

uint32_t qt_inl(QTest *s, uint16_t port)
{
    return qt_cmd_u64(s, "inl 0x%x", port);
}

void qt_outb(QTest *s, uint16_t port, uint8_t v)
{
    g_free(qt_cmd(s, "outb 0x%x 0x%x", port, v));
}

void qt_outw(QTest *s, uint16_t port, uint16_t v)
{
    g_free(qt_cmd(s, "outw 0x%x 0x%x", port, v));
}

void qt_outl(QTest *s, uint16_t port, uint32_t v)
{
    g_free(qt_cmd(s, "outl 0x%x 0x%x", port, v));
}

static void qt_pci_addr(QTest *s, int devfn, int reg)
{
    qt_outl(s, 0xcf8, 0x80000000u | (devfn << 8) | (reg & 0xfc));
}

uint32_t qt_pci_cfg_readl(QTest *s, int devfn, int reg)
{
    qt_pci_addr(s, devfn, reg);
    return qt_inl(s, 0xcfc);
}

uint16_t qt_pci_cfg_readw(QTest *s, int devfn, int reg)
{
    qt_pci_addr(s, devfn, reg);
    return qt_inw(s, 0xcfc + (reg & 2));
}

uint8_t qt_pci_cfg_readb(QTest *s, int devfn, int reg)
{
    qt_pci_addr(s, devfn, reg);
    return qt_inb(s, 0xcfc + (reg & 3));
}

void qt_pci_cfg_writel(QTest *s, int devfn, int reg, uint32_t v)
{
    qt_pci_addr(s, devfn, reg);
    qt_outl(s, 0xcfc, v);
}

void qt_pci_cfg_writew(QTest *s, int devfn, int reg, uint16_t v)
{
    qt_pci_addr(s, devfn, reg);
    qt_outw(s, 0xcfc + (reg & 2), v);
}

int64_t qt_clock_now(QTest *s)
{
    /* "clock_set 0" never moves the clock and replies with its value */
    g_autofree char *r = qt_cmd_raw(s, "clock_set 0");
    char **w = g_strsplit(r, " ", 0);
    int64_t now;

    ck_assert_msg(w[0] && w[1], "bad clock_set reply '%s'", r);
    now = g_ascii_strtoll(w[1], NULL, 0);
    g_strfreev(w);
    return now;
}

int64_t qt_clock_step(QTest *s, int64_t ns)
{
    g_autofree char *rest = NULL;

    if (ns <= 0) {
        return qt_clock_now(s);
    }
    rest = qt_cmd(s, "clock_step %" PRId64, ns);
    return g_ascii_strtoll(rest, NULL, 0);
}

int64_t qt_clock_step_next(QTest *s)
{
    g_autofree char *r = qt_cmd_raw(s, "clock_step");

    if (strncmp(r, "OK ", 3) == 0) {
        return g_ascii_strtoll(r + 3, NULL, 0);
    }
    if (strstr(r, "could not advance")) {
        return qt_clock_now(s);       /* the next deadline is now */
    }
    return -1;
}

int64_t qt_clock_set(QTest *s, int64_t ns)
{
    g_autofree char *r = qt_cmd_raw(s, "clock_set %" PRId64, ns);
    char **w = g_strsplit(r, " ", 0);
    int64_t now;

    ck_assert_msg(w[0] && w[1], "bad clock_set reply '%s'", r);
    now = g_ascii_strtoll(w[1], NULL, 0);
    g_strfreev(w);
    return now;
}

void qt_irq_intercept_in(QTest *s, const char *qom_path)
{
    g_free(qt_cmd(s, "irq_intercept_in %s", qom_path));
}

bool qt_irq_level(QTest *s, int irq)
{
    /* a round trip collects pending IRQ lines */
    g_free(qt_cmd(s, "endianness"));
    return irq >= 0 && irq < QT_MAX_IRQ && s->irq[irq];
}
