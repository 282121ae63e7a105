#!/usr/bin/env python3
"""The plugin build's compile step (scripts/build-plugin.sh).

  plugin_build.py QEMU_BIN QBUILD OBJDIR

1. Generate only the headers the device's objects need (ninja's order-only
   inputs of those objects).
2. Set, in QBUILD/config-host.h, each macro of CHECKED as the installed
   binary QEMU_BIN shows it (a library it links, a symbol it exports, a
   string its modinfo or QAPI tables hold); print what it changed.
3. Compile hw/dapustor-h3100/ (the sources its meson.build lists) and the
   device's trace group with QEMU's own flags, -fPIC for -fPIE, into OBJDIR,
   and plugin/h3100-abi.c (the load-time check of the QOM sizes) with the
   command line of hw/h3100-pci.c.
4. Check that every config-host.h macro tested by the QEMU headers those
   objects include is CHECKED or in CONFIGURE_DEFAULT; exit 1 otherwise.
"""
import json
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

# macro: (kind, what) -- defined in the binary's build iff it has `what`
CHECKED = {
    'CONFIG_LINUX_AIO': ('lib', 'libaio.so'),
    'CONFIG_LINUX_IO_URING': ('lib', 'liburing.so'),
    'CONFIG_ZSTD': ('lib', 'libzstd.so'),
    'CONFIG_FDT': ('lib', 'libfdt.so'),
    'CONFIG_CAPSTONE': ('lib', 'libcapstone.so'),
    'CONFIG_PLUGIN': ('symbol', 'qemu_plugin_register_vcpu_init_cb'),
    'CONFIG_REPLICATION': ('symbol', 'replication_start_all'),
    'CONFIG_BLKIO': ('string', 'block-blkio'),
    'CONFIG_SPICE': ('string', 'ui-spice-core'),
    'CONFIG_SPICE_PROTOCOL': ('string', 'ui-spice-core'),
    'CONFIG_DBUS_DISPLAY': ('string', 'ui-dbus'),
    'CONFIG_BRLAPI': ('string', 'chardev-baum'),
    'CONFIG_SECRET_KEYRING': ('string', 'secret_keyring'),
    'CONFIG_AF_XDP': ('string', 'af-xdp'),
    'CONFIG_QATZIP': ('string', 'qatzip'),
    'CONFIG_QPL': ('string', 'qpl'),
    'CONFIG_UADK': ('string', 'uadk'),
    # 11.x: a conditional member of qapi-types-net.h's NetClientDriver
    # (it shifts the enum's numbering)
    'CONFIG_PASST': ('symbol', 'net_init_passt'),
}

# Macros the device's headers test that Debian's configure line sets (and
# this build passes the same), leaves at configure's default, or that the
# host decides (the same gcc and libc as the distribution's build).
CONFIGURE_DEFAULT = {
    'CONFIG_XEN_BACKEND', 'CONFIG_TCG_INTERPRETER', 'CONFIG_VMNET',
    'HAVE_BROKEN_SIZE_MAX',
    'CONFIG_TSAN', 'CONFIG_DEBUG_MUTEX', 'CONFIG_CFI', 'CONFIG_FUZZ',
    'CONFIG_MEMBARRIER', 'CONFIG_DEBUG_STACK_USAGE', 'CONFIG_SAFESTACK',
    'CONFIG_DEBUG_GRAPH_LOCK', 'CONFIG_COROUTINE_POOL', 'CONFIG_DEBUG_TCG',
    'CONFIG_VALGRIND_H', 'CONFIG_ATOMIC64', 'CONFIG_INT128',
    'CONFIG_INT128_TYPE', 'CONFIG_CPUID_H', 'CONFIG_AVX2_OPT',
    'CONFIG_AVX512BW_OPT', 'CONFIG_LINUX', 'CONFIG_POSIX', 'CONFIG_WIN32',
    'CONFIG_DARWIN', 'CONFIG_BSD', 'CONFIG_SOLARIS', 'CONFIG_FREEBSD',
    'CONFIG_OPENBSD', 'CONFIG_NETBSD', 'CONFIG_IOVEC', 'CONFIG_BYTESWAP_H',
    'CONFIG_MACHINE_BSWAP_H', 'CONFIG_PTHREAD_SETNAME_NP_W_TID',
    'CONFIG_PTHREAD_SETNAME_NP_WO_TID', 'CONFIG_GETAUXVAL',
    'CONFIG_EVENTFD', 'CONFIG_EPOLL', 'CONFIG_EPOLL_CREATE1', 'CONFIG_PPOLL',
    'CONFIG_SIGNALFD', 'CONFIG_TIMERFD', 'CONFIG_INOTIFY1', 'CONFIG_FIEMAP',
    'CONFIG_FALLOCATE', 'CONFIG_SYNC_FILE_RANGE', 'CONFIG_STATX',
    'CONFIG_SPLICE', 'CONFIG_GETRANDOM', 'CONFIG_MADVISE',
    'CONFIG_POSIX_MADVISE', 'CONFIG_PRCTL_PR_SET_TIMERSLACK',
    'CONFIG_QEMU_PRIVATE_XTS', 'CONFIG_MODULES', 'CONFIG_MODULE_UPGRADES',
    'CONFIG_TCG', 'CONFIG_KVM', 'CONFIG_SYSTEM_ONLY', 'CONFIG_USER_ONLY',
    'CONFIG_TRACE_LOG', 'CONFIG_TRACE_SIMPLE', 'CONFIG_TRACE_DTRACE',
    'CONFIG_TRACE_UST', 'CONFIG_TRACE_FTRACE', 'CONFIG_TRACE_SYSLOG',
    'CONFIG_TRACE_RECORDER', 'CONFIG_GCOV',
   
    'CONFIG_VHOST_USER', 'CONFIG_VHOST_KERNEL', 'CONFIG_LIVE_BLOCK_MIGRATION',
   
    'CONFIG_QOM_CAST_DEBUG',
    'CONFIG_PLUGIN_SYMBOLS', 'CONFIG_CLOCK_ADJTIME', 'CONFIG_DUP3',
    'CONFIG_SYSMACROS', 'CONFIG_OPEN_BY_HANDLE',
    'HAVE_HOST_BLOCK_DEVICE', 'HAVE_SYS_IOCCOM_H', 'HAVE_DRM_H',
    'HAVE_PTY_H', 'HAVE_SYS_DISK_H', 'HAVE_SYS_KCOV_H', 'HAVE_UTMPX',
    'HAVE_GETIFADDRS', 'HAVE_IPPROTO_MPTCP', 'HAVE_STRCHRNUL',
    'HAVE_SYSTEM_FUNCTION', 'HAVE_COPY_FILE_RANGE', 'HAVE_OPENPTY',
    'HAVE_GLIB_WITH_SLICE_ALLOCATOR', 'HAVE_GLIB_WITH_ALIGNED_ALLOC',
    'HAVE_MLOCKALL', 'HAVE_FSXATTR', 'HAVE_STRUCT_STAT_ST_ATIM',
    'HAVE_VALGRIND', 'HAVE_QEMU_FUTEX', 'HAVE_OPTRESET', 'HAVE_SIGEV_NOTIFY_THREAD_ID',
    'HAVE_MADVISE_WITHOUT_PROTOTYPE', 'HAVE_BLK_ZONE_REP_CAPACITY',
    'HAVE_TCP_KEEPCNT', 'HAVE_TCP_KEEPINTVL', 'HAVE_TCP_KEEPIDLE',
    'HAVE_TCP_USER_TIMEOUT', 'HAVE_FUNCTION_ATTRIBUTE_ALIAS',
}


def binary_facts(qemu_bin):
    """Libraries, exported symbols and strings of the installed binary."""
    libs = subprocess.run(['ldd', qemu_bin], capture_output=True, text=True,
                          check=True).stdout
    syms = subprocess.run(['nm', '-D', '--defined-only', qemu_bin],
                          capture_output=True, text=True, check=True).stdout
    with open(qemu_bin, 'rb') as f:
        data = f.read()
    exported = {line.split()[-1].split('@')[0] for line in syms.splitlines()
                if line.strip()}
    return libs, exported, data


def wanted(rule, facts):
    libs, exported, data = facts
    kind, what = rule
    if kind == 'lib':
        return re.search(r'\b' + re.escape(what), libs) is not None
    if kind == 'symbol':
        return what in exported
    return b'\0' + what.encode() + b'\0' in data


def config(qemu_bin, qbuild):
    path = os.path.join(qbuild, 'config-host.h')
    with open(path) as f:
        lines = f.read().split('\n')
    facts = binary_facts(qemu_bin)
    changed = []
    for i, line in enumerate(lines):
        m = re.match(r'#(define|undef) (\w+)\b', line)
        if not m or m.group(2) not in CHECKED:
            continue
        name = m.group(2)
        want = wanted(CHECKED[name], facts)
        if want == (m.group(1) == 'define'):
            continue
        lines[i] = ('#define %s' % name) if want else ('#undef %s' % name)
        changed.append('%s %s (the binary: %s %s)' % (
            'defined' if want else 'undefined', name, CHECKED[name][0],
            CHECKED[name][1]))
    with open(path, 'w') as f:
        f.write('\n'.join(lines))
    for c in changed:
        print('[h3100] config-host.h: ' + c)
    print('[h3100] config-host.h: %d macros checked against %s, %d set from it'
          % (len(CHECKED), qemu_bin, len(changed)))


def device_commands(qbuild, objdir):
    with open(os.path.join(qbuild, 'compile_commands.json')) as f:
        entries = json.load(f)
    out = []
    for e in entries:
        src = e['file']
        if '/hw/dapustor-h3100/' not in src and \
                not src.endswith('trace-hw_dapustor_h3100_hw.c'):
            continue
        args = shlex.split(e['command'])
        obj = args[args.index('-o') + 1]
        name = re.sub(r'[^A-Za-z0-9_.-]', '_', os.path.basename(obj))
        new, skip = [], 0
        for a in args:
            if skip:
                skip -= 1
                continue
            if a in ('-MQ', '-MF', '-o'):
                skip = 1
                continue
            if a == '-MD':
                continue
            new.append('-fPIC' if a == '-fPIE' else a)
        new += ['-MD', '-MF', os.path.join(objdir, name + '.d'),
                '-o', os.path.join(objdir, name)]
        out.append((obj, new))
    return out


def abi_command(cmds, objdir):
    """plugin/h3100-abi.c with h3100-pci.c's command line (the plugin's
    own file: no meson.build of the overlay lists it)."""
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.normpath(os.path.join(here, '..', '..', 'plugin',
                                        'h3100-abi.c'))
    for _, args in cmds:
        at = args.index('-c') + 1 if '-c' in args else None
        if at and args[at].endswith('/h3100-pci.c'):
            new = list(args)
            new[at] = src
            new[new.index('-o') + 1] = os.path.join(objdir, 'h3100-abi.o')
            new[new.index('-MF') + 1] = os.path.join(objdir, 'h3100-abi.d')
            return ('h3100-abi.o', new)
    sys.exit('no h3100-pci.c in compile_commands.json: cannot compile '
             'plugin/h3100-abi.c')


def check_type_head(qbuild):
    """plugin/h3100-abi.c reads the QOM sizes from the head of the type
    behind a class: qom/object.c's struct TypeImpl must still begin so."""
    src = os.path.join(os.path.realpath(os.path.join(qbuild, '..', 'src')),
                       'qom', 'object.c')
    with open(src) as f:
        text = f.read()
    if not re.search(r'struct TypeImpl\s*\{\s*const char \*name;\s*'
                     r'size_t class_size;\s*size_t instance_size;', text):
        sys.exit('%s: struct TypeImpl no longer begins { name, class_size, '
                 'instance_size }: update plugin/h3100-abi.c' % src)


def generated_headers(qbuild, objs):
    """What ninja generates for these objects: the headers of their
    order-only inputs, and sources in the build tree (the trace .c)."""
    q = subprocess.run(['ninja', '-C', qbuild, '-t', 'query'] + objs,
                       capture_output=True, text=True, check=True).stdout
    gen, section = set(), None
    for line in q.splitlines():
        s = line.strip()
        if not line.startswith(' '):
            section = None
        elif line.startswith('  ') and not line.startswith('    '):
            section = s.split(':')[0]
        elif section == 'input' and s.startswith('||'):
            if s.endswith('.h'):
                gen.add(s[2:].strip())
        elif section == 'input' and not s.startswith(('|', '../', '/')):
            gen.add(s)          # a generated source: the trace group's .c
    return sorted(gen)


def includes_tested_macros(objdir, qbuild):
    """config-host.h macros tested by the QEMU headers the objects include."""
    qsrc = os.path.realpath(os.path.join(qbuild, '..', 'src'))
    headers = set()
    for d in os.listdir(objdir):
        if not d.endswith('.d'):
            continue
        with open(os.path.join(objdir, d)) as f:
            text = f.read().replace('\\\n', ' ')
        for h in text.split(':', 1)[1].split():
            p = os.path.realpath(h if os.path.isabs(h) else
                                 os.path.join(qbuild, h))
            if p.endswith('.h') and (p.startswith(qsrc + '/') or
                                     p.startswith(os.path.realpath(qbuild))) \
                    and '/hw/dapustor-h3100' not in p:
                headers.add(p)
    with open(os.path.join(qbuild, 'config-host.h')) as f:
        known = set(re.findall(r'#(?:define|undef) (\w+)', f.read()))
    tested = {}
    cond = re.compile(r'^\s*#\s*(?:if|ifdef|ifndef|elif)\b(.*)$')
    for h in headers:
        with open(h, errors='replace') as f:
            for line in f:
                m = cond.match(line)
                if not m:
                    continue
                for name in re.findall(r'\b((?:CONFIG|HAVE)_\w+)', m.group(1)):
                    if name in known:
                        tested.setdefault(name, h)
    return tested


def compile_device(qemu_bin, qbuild, objdir):
    os.makedirs(objdir, exist_ok=True)
    for f in os.listdir(objdir):
        os.unlink(os.path.join(objdir, f))
    # a source added to or dropped from a meson.build since the last
    # configure: meson regenerates build.ninja and compile_commands.json
    r = subprocess.run(['ninja', '-C', qbuild, 'build.ninja'],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit('regenerating the build files failed:\n' +
                 r.stdout[-2000:])
    cmds = device_commands(qbuild, objdir)
    if len(cmds) < 2:
        sys.exit('no dapustor-h3100 sources in %s/compile_commands.json '
                 '(is the overlay configured?)' % qbuild)
    gen = generated_headers(qbuild, [c[0] for c in cmds])
    if not gen:
        sys.exit('ninja names no generated headers for the device')
    gen.append('qemu-version.h')        # h3100-abi.c's QEMU_PKGVERSION
    cmds.append(abi_command(cmds, objdir))
    check_type_head(qbuild)
    r = subprocess.run(['ninja', '-C', qbuild] + gen, capture_output=True,
                       text=True)
    if r.returncode:
        sys.exit('generating headers failed:\n' + r.stdout[-2000:])
    config(qemu_bin, qbuild)
    print('[h3100] %d generated files; compiling %d files'
          % (len(gen), len(cmds)), flush=True)

    def run(cmd):
        return subprocess.run(cmd[1], cwd=qbuild, capture_output=True,
                              text=True)
    failed = 0
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        for cmd, r in zip(cmds, ex.map(run, cmds)):
            if r.returncode or r.stderr.strip():
                sys.stderr.write(r.stderr)
            failed += r.returncode != 0
    if failed:
        sys.exit('%d files failed to compile' % failed)
    tested = includes_tested_macros(objdir, qbuild)
    unknown = sorted(set(tested) - set(CHECKED) - CONFIGURE_DEFAULT)
    for name in unknown:
        print('%s tests %s, which scripts/lib/plugin_build.py cannot check '
              'against the binary (add it to CHECKED or CONFIGURE_DEFAULT)'
              % (tested[name], name), file=sys.stderr)
    if unknown:
        sys.exit(1)
    print('[h3100] the included headers test %d configuration macros: '
          '%d checked against the binary, the rest configure defaults'
          % (len(tested), len(set(tested) & set(CHECKED))))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    compile_device(sys.argv[1], sys.argv[2], sys.argv[3])


if __name__ == '__main__':
    main()
