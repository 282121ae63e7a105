/*
 * The plugin's load-time ABI check (docs/guide/plugin.md, *The loader*).
 *
 * Compiled into dapustor-h3100-impl.so only (scripts/lib/plugin_build.py,
 * with the command line of hw/h3100-pci.c), never into the in-tree QEMU.
 * The device derives from or embeds the instance structs of four QOM
 * types, and fills in their classes; the running binary knows the sizes
 * of both, the plugin the sizeof() its headers gave.  QEMU exports no
 * getter for them: they are read from the type behind each class
 * (ObjectClass.type), whose head qom/object.c declares as
 * { name, class_size, instance_size } (plugin_build.py checks that in the
 * source; here the name read there must be the class's own name pointer,
 * object_class_get_name()).
 *
 * The device's migration state is made of VMStateDescription and
 * VMStateField tables its headers' macros fill in, which the binary's
 * migration code reads: the binary exports vmstate_fifo8 (util/fifo8.c,
 * unchanged since 9.x), made of a VBUFFER_UINT32 field and two UINT32
 * fields; the same table built here with the plugin's headers must be
 * byte for byte the binary's (names and field-table pointers aside).  A
 * stable release that moves a member of either struct (11.1.3 narrowed
 * size_offset and num_offset and added their widths) fails it.
 *
 * Both run at MODULE_INIT_MIGRATION, which QEMU's main() calls right
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
#include "hw/pci/pci_device.h"     /* PCIDevice, and DeviceState */
#include "migration/vmstate.h"
#include "qemu/fifo8.h"
#include "qemu-version.h"

#define H3100_ABI_TYPES 4

/* the marker, then the sizes, in the order of h3100_abi_types */
typedef struct H3100AbiTable {
    char marker[16];
    uint64_t size[H3100_ABI_TYPES];         /* instances */
    uint64_t class_size[H3100_ABI_TYPES];
} H3100AbiTable;

static H3100AbiTable h3100_abi_table __attribute__((used)) = {
    .marker = "H3100-QOM-SIZES",
    .size = { sizeof(Object), sizeof(DeviceState), sizeof(PCIDevice),
              sizeof(MemoryRegion) },
    .class_size = { sizeof(ObjectClass), sizeof(DeviceClass),
                    sizeof(PCIDeviceClass), sizeof(ObjectClass) },
};

/* the head of qom/object.c's struct TypeImpl */
typedef struct H3100TypeHead {
    const char *name;
    size_t class_size;
    size_t instance_size;
} H3100TypeHead;

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
    volatile const uint64_t *want_class = h3100_abi_table.class_size;
    char why[256];

    for (int i = 0; i < H3100_ABI_TYPES; i++) {
        const char *t = h3100_abi_types[i];
        ObjectClass *oc = object_class_by_name(t);
        const H3100TypeHead *type;

        if (!oc) {
            snprintf(why, sizeof(why), "it has no QOM type %s", t);
            h3100_abi_refuse(why);
        }
        type = (const H3100TypeHead *)oc->type;
        if (type->name != object_class_get_name(oc)) {
            snprintf(why, sizeof(why), "its QOM types do not begin as "
                     "qom/object.c's TypeImpl did (%s)", t);
            h3100_abi_refuse(why);
        }
        if (type->instance_size != want[i]) {
            snprintf(why, sizeof(why), "its %s instances are %zu bytes, the "
                     "plugin's %" PRIu64 " (another ABI)", t,
                     type->instance_size, want[i]);
            h3100_abi_refuse(why);
        }
        if (type->class_size != want_class[i]) {
            snprintf(why, sizeof(why), "its %s class is %zu bytes, the "
                     "plugin's %" PRIu64 " (another ABI)", t,
                     type->class_size, want_class[i]);
            h3100_abi_refuse(why);
        }
    }
}

/* util/fifo8.c's vmstate_fifo8, as the plugin's headers build it */
static const VMStateField h3100_fifo8_fields[] = {
    VMSTATE_VBUFFER_UINT32(data, Fifo8, 1, NULL, capacity),
    VMSTATE_UINT32(head, Fifo8),
    VMSTATE_UINT32(num, Fifo8),
    VMSTATE_END_OF_LIST()
};
static const VMStateDescription h3100_fifo8 = {
    .name = "Fifo8",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = h3100_fifo8_fields,
};

/* the first byte at which A and B differ, or -1 */
static int h3100_first_diff(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;

    for (size_t i = 0; i < n; i++) {
        if (p[i] != q[i]) {
            return i;
        }
    }
    return -1;
}

static void h3100_vmstate_check(void)
{
    VMStateDescription d;
    VMStateField f;
    char why[256];
    int at;

    memcpy(&d, &h3100_fifo8, sizeof(d));
    d.name = vmstate_fifo8.name;
    d.fields = vmstate_fifo8.fields;
    at = h3100_first_diff(&d, &vmstate_fifo8, sizeof(d));
    if (at >= 0 || !d.name || strcmp(d.name, "Fifo8") != 0) {
        snprintf(why, sizeof(why), "its VMStateDescription vmstate_fifo8 is "
                 "not the plugin's headers' (byte %d; another ABI)", at);
        h3100_abi_refuse(why);
    }
    for (size_t i = 0; i < ARRAY_SIZE(h3100_fifo8_fields); i++) {
        memcpy(&f, &h3100_fifo8_fields[i], sizeof(f));
        f.name = vmstate_fifo8.fields[i].name;
        at = h3100_first_diff(&f, &vmstate_fifo8.fields[i], sizeof(f));
        if (at >= 0 || (h3100_fifo8_fields[i].name && (!f.name ||
            strcmp(f.name, h3100_fifo8_fields[i].name) != 0))) {
            snprintf(why, sizeof(why), "its VMStateField %zu of vmstate_fifo8 "
                     "is not the plugin's headers' (byte %d; another ABI)",
                     i, at);
            h3100_abi_refuse(why);
        }
    }
}

static void h3100_abi_init(void)
{
    h3100_abi_check();
    h3100_vmstate_check();
}

migration_init(h3100_abi_init)
