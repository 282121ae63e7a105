/*
 * The plugin's load-time ABI check (docs/guide/plugin.md, *The loader*).
 *
 * Compiled into dapustor-h3100-impl.so only (scripts/lib/plugin_build.py,
 * with the command line of hw/h3100-pci.c), never into the in-tree QEMU.
 * The device derives from or embeds the instance structs of four QOM
 * types; the running binary knows their sizes
 * (object_type_get_instance_size()), the plugin the sizeof() its headers
 * gave.  Run at MODULE_INIT_MIGRATION, which QEMU's main() calls right
 * after MODULE_INIT_QOM (every built-in type registered, no device class
 * initialised, no instance made): on any difference, one line in the
 * loader's form and exit 1, before the device is ever used.
 *
 * The sizes live in one table behind a marker, read through a volatile
 * pointer (never folded into the code), so that tests/plugin/test_plugin.sh
 * can patch one in a copy of the library and see the refusal.
 *
 * Copyright (c) 2026 dapustor-h3100 authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/module.h"
#include "qom/object.h"
#include "hw/qdev-core.h"
#include "hw/pci/pci_device.h"
#include "qemu-version.h"

#define H3100_ABI_TYPES 4

/* the marker, then the sizes, in the order of h3100_abi_types */
typedef struct H3100AbiTable {
    char marker[16];
    uint64_t size[H3100_ABI_TYPES];
} H3100AbiTable;

static H3100AbiTable h3100_abi_table __attribute__((used)) = {
    .marker = "H3100-QOM-SIZES",
    .size = { sizeof(Object), sizeof(DeviceState), sizeof(PCIDevice),
              sizeof(MemoryRegion) },
};

static const char *const h3100_abi_types[H3100_ABI_TYPES] = {
    TYPE_OBJECT, TYPE_DEVICE, TYPE_PCI_DEVICE, TYPE_MEMORY_REGION,
};

static void G_NORETURN h3100_abi_refuse(const char *why)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    exe[n > 0 ? n : 0] = '\0';
    fprintf(stderr, "dapustor-h3100: this plugin was built for QEMU "
            QEMU_VERSION " (" QEMU_PKGVERSION "); %s: %s: not starting "
            "(rebuild it: scripts/build-plugin.sh)\n", n > 0 ? exe : "?", why);
    exit(1);
}

static void h3100_abi_check(void)
{
    volatile const uint64_t *want = h3100_abi_table.size;
    char why[256];

    for (int i = 0; i < H3100_ABI_TYPES; i++) {
        const char *t = h3100_abi_types[i];
        size_t have;

        if (!object_class_by_name(t)) {
            snprintf(why, sizeof(why), "it has no QOM type %s", t);
            h3100_abi_refuse(why);
        }
        have = object_type_get_instance_size(t);
        if (have != want[i]) {
            snprintf(why, sizeof(why), "its %s instances are %zu bytes, the "
                     "plugin's %" PRIu64 " (another ABI)", t, have, want[i]);
            h3100_abi_refuse(why);
        }
    }
}

migration_init(h3100_abi_check)
