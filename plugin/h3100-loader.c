/*
 * dapustor-h3100.so: the plugin's LD_PRELOAD entry point (docs/guide/plugin.md).
 *
 * It imports no QEMU symbol, so it is harmless in any program it lands
 * in.  Its constructor:
 *   1. removes itself from LD_PRELOAD, so that no child inherits it;
 *   2. does nothing more unless the program is qemu-system-*;
 *   3. asks the running QEMU its version and package string and reads the
 *      program's build id; unless they are the ones the device was
 *      compiled against (the headers, structs and inline functions of
 *      exactly that build), it prints one line naming both and exits 1;
 *   4. loads dapustor-h3100-impl.so from its own directory.  Its type_init
 *      constructor only queues the device's registration: QEMU's main()
 *      runs the queue as for its own devices.
 *
 * scripts/build-plugin.sh defines H3100_QEMU_VERSION ("10.0.2"),
 * H3100_QEMU_PKGVERSION ("Debian 1:10.0.2+...") and H3100_QEMU_BUILD_IDS
 * (the package's qemu-system-* build ids, comma-separated).
 *
 * Copyright (c) 2026 dapustor-h3100 authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef H3100_QEMU_VERSION
#error "build with scripts/build-plugin.sh"
#endif

#define IMPL_NAME "dapustor-h3100-impl.so"
#define SELF_NAME "dapustor-h3100.so"
#define BUILD_ID_MAX 64

/*
 * QAPI's VersionTriple and VersionInfo (qapi/control.json), unchanged
 * since QEMU 1.x: what qmp_query_version() returns.
 */
typedef struct H3100VersionTriple {
    int64_t major, minor, micro;
} H3100VersionTriple;
typedef struct H3100VersionInfo {
    H3100VersionTriple *qemu;
    char *package;
} H3100VersionInfo;
typedef H3100VersionInfo *(*QueryVersionFn)(void **errp);

static bool is_self(const char *entry, const char *self_real)
{
    char real[PATH_MAX];
    const char *base = strrchr(entry, '/');

    base = base ? base + 1 : entry;
    if (strcmp(base, SELF_NAME) == 0) {
        return true;
    }
    return realpath(entry, real) && strcmp(real, self_real) == 0;
}

/* Remove this library from LD_PRELOAD (entries split by spaces or ':'). */
static void drop_from_ld_preload(const char *self_real)
{
    const char *env = getenv("LD_PRELOAD");
    char *copy, *kept, *tok, *save = NULL;

    if (!env) {
        return;
    }
    copy = strdup(env);
    kept = calloc(1, strlen(env) + 1);
    if (!copy || !kept) {
        free(copy);
        free(kept);
        return;
    }
    for (tok = strtok_r(copy, " :", &save); tok;
         tok = strtok_r(NULL, " :", &save)) {
        if (!is_self(tok, self_real)) {
            if (*kept) {
                strcat(kept, " ");
            }
            strcat(kept, tok);
        }
    }
    if (*kept) {
        setenv("LD_PRELOAD", kept, 1);
    } else {
        unsetenv("LD_PRELOAD");
    }
    free(copy);
    free(kept);
}

static bool program_is_qemu_system(char *exe, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", exe, len - 1);
    const char *base;

    if (n <= 0) {
        return false;
    }
    exe[n] = '\0';
    base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    return strncmp(base, "qemu-system-", strlen("qemu-system-")) == 0;
}

/* dl_iterate_phdr visits the program first: its GNU build id, in hex. */
static int main_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
    char *hex = data;

    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;

        if (ph->p_type != PT_NOTE) {
            continue;
        }
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const unsigned char *desc = (const unsigned char *)
                (p + sizeof(*n) + ((n->n_namesz + 3) & ~3u));

            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
                memcmp(p + sizeof(*n), "GNU", 4) == 0 &&
                n->n_descsz <= BUILD_ID_MAX / 2 &&
                (const char *)desc + n->n_descsz <= end) {
                for (unsigned j = 0; j < n->n_descsz; j++) {
                    sprintf(hex + 2 * j, "%02x", desc[j]);
                }
                return 1;
            }
            p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return 1;           /* only the program: stop after the first object */
}

static bool build_id_known(const char *id)
{
    const char *list = H3100_QEMU_BUILD_IDS;
    size_t len = strlen(id);

    for (const char *p = list; *id && (p = strstr(p, id)); p += len) {
        if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len])) {
            return true;
        }
    }
    return false;
}

static void __attribute__((noreturn)) refuse(const char *exe, const char *why)
{
    fprintf(stderr, "dapustor-h3100: this plugin was built for QEMU "
            H3100_QEMU_VERSION " (" H3100_QEMU_PKGVERSION "); %s: %s: "
            "not starting (rebuild it: scripts/build-plugin.sh)\n", exe, why);
    exit(1);
}

/* Refuse (exit 1) unless this process is the QEMU build of the headers. */
static void check_qemu_build(const char *exe)
{
    QueryVersionFn query = (QueryVersionFn)dlsym(RTLD_DEFAULT,
                                                 "qmp_query_version");
    H3100VersionInfo *v;
    char running[128], id[BUILD_ID_MAX + 1] = "";
    char why[256 + BUILD_ID_MAX];

    if (!query) {
        refuse(exe, "the program does not export QEMU's symbols "
               "(a QEMU built without --enable-modules?)");
    }
    v = query(NULL);
    if (!v || !v->qemu) {
        refuse(exe, "its qmp_query_version() answers nothing");
    }
    snprintf(running, sizeof(running), "%lld.%lld.%lld",
             (long long)v->qemu->major, (long long)v->qemu->minor,
             (long long)v->qemu->micro);
    if (strcmp(running, H3100_QEMU_VERSION) != 0 || !v->package ||
        strcmp(v->package, H3100_QEMU_PKGVERSION) != 0) {
        snprintf(why, sizeof(why), "this process is QEMU %s (%s)", running,
                 v->package ? v->package : "no package string");
        refuse(exe, why);
    }
    dl_iterate_phdr(main_build_id, id);
    if (!build_id_known(id)) {
        snprintf(why, sizeof(why), "that version but build id %s, not one "
                 "of %s (another build of it)", *id ? id : "(none)",
                 H3100_QEMU_BUILD_IDS);
        refuse(exe, why);
    }
}

static void __attribute__((constructor)) h3100_loader_init(void)
{
    char self_real[PATH_MAX], exe[PATH_MAX], impl[PATH_MAX];
    Dl_info self;
    const char *slash;

    if (!dladdr((void *)h3100_loader_init, &self) || !self.dli_fname ||
        !realpath(self.dli_fname, self_real)) {
        fprintf(stderr, "dapustor-h3100: cannot find the plugin's own path\n");
        exit(1);
    }
    drop_from_ld_preload(self_real);
    if (!program_is_qemu_system(exe, sizeof(exe))) {
        return;
    }
    check_qemu_build(exe);

    slash = strrchr(self_real, '/');
    snprintf(impl, sizeof(impl), "%.*s/" IMPL_NAME,
             (int)(slash - self_real), self_real);
    if (!dlopen(impl, RTLD_NOW | RTLD_LOCAL)) {
        fprintf(stderr, "dapustor-h3100: cannot load the device: %s\n",
                dlerror());
        exit(1);
    }
}
