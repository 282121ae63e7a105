#!/usr/bin/env bash
# Build the drive as a plugin for the distribution's own QEMU: no QEMU
# rebuild, the binary that libvirt already uses (docs/guide/plugin.md).
#
#   scripts/build-plugin.sh [--with-qtest] [--deb] OUTDIR
#   scripts/build-plugin.sh --check   can the installed QEMU take the plugin?
#                                     (exit 0, or one line saying why not)
#
# Finds the installed qemu-system-x86 package and its exact version, gets
# that version's source (apt-get source; see docs/guide/plugin.md, *How it is
# made to match the binary*, for the two stand-ins when the mirror lacks it:
# the upstream tarball with the packaging of the same series, or the
# nearest source of the series under proof), configures it with the
# options of Debian's debian/rules, checks the configuration headers
# against what the installed binary shows, generates only the headers the
# device needs and compiles hw/ and models/ (the lists in their
# meson.build) into OUTDIR:
#   OUTDIR/dapustor-h3100-impl.so    the device; exports nothing
#   OUTDIR/dapustor-h3100.so         the loader for LD_PRELOAD: imports no
#                                    QEMU symbol, loads the device only into
#                                    the QEMU build it was made for
#   OUTDIR/qemu-system-x86_64-h3100  the distribution's QEMU with the plugin
#                                    (usable as libvirt's <emulator>)
#   OUTDIR/BUILD-INFO                what it was built for, and from what
# --with-qtest  also OUTDIR/test/: a qemu-system-x86_64 for the project's
#               tests (QTEST_QEMU_BINARY); on 10.0 with the qtest
#               accelerator Debian removes, built from the same tree (11.x
#               ships accel-qtest.so); tests only
# --deb         also OUTDIR/dapustor-h3100-plugin_<ver>_<arch>.deb, which
#               depends on exactly this qemu-system-x86
# Environment: H3100_CACHE (source and configured tree, kept for the next
# build), H3100_PLUGIN_QEMU (default /usr/bin/qemu-system-x86_64).
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/lib.sh"

with_qtest=0
want_deb=0
check_only=0
out=''
while [ $# -gt 0 ]; do
    case $1 in
    --check) check_only=1 ;;
    --with-qtest) with_qtest=1 ;;
    --deb) want_deb=1 ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    -*) h3100_die "unknown option: $1 (try --help)" ;;
    *) [ -z "$out" ] || h3100_die "one OUTDIR only (try --help)"; out=$1 ;;
    esac
    shift
done
[ -n "$out" ] || [ "$check_only" = 1 ] || h3100_die "OUTDIR missing (try --help)"
start=$SECONDS
qemu_bin=${H3100_PLUGIN_QEMU:-/usr/bin/qemu-system-x86_64}
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)

# --- 1. the installed QEMU --------------------------------------------------
[ -x "$qemu_bin" ] ||
    h3100_die "no $qemu_bin: install Debian's QEMU (scripts/install-deps.sh --plugin)"
pkg=$(dpkg-query -S "$qemu_bin" 2>/dev/null | cut -d: -f1) ||
    h3100_die "$qemu_bin belongs to no package: install Debian's QEMU (scripts/install-deps.sh --plugin)"
ver=$(dpkg-query -W -f='${Version}' "$pkg")
upstream=${ver#*:}
upstream=${upstream%%[+~-]*}
pkgversion=$("$qemu_bin" --version | sed -n '1s/^QEMU emulator version [^ ]* (\(.*\))$/\1/p')
[ "$pkgversion" = "Debian $ver" ] ||
    h3100_die "$qemu_bin says '$("$qemu_bin" --version | sed -n 1p)', not Debian $ver"
h3100_version_ge "$upstream" "$H3100_QEMU_MIN" ||
    h3100_die "$pkg $ver is QEMU $upstream; the device needs $H3100_QEMU_MIN or newer"
series=${upstream%.*}
# --- what differs between the QEMU series (the only place) ---------------------
# qtest_module: the qtest accelerator the tests' wrapper needs.  Debian's
# 10.0 removes accel-qtest-x86_64.so: built from the configured tree into
# OUTDIR/test.  From 11.0 QEMU builds one generic accel-qtest.so, and
# Debian ships it in qemu-system-common: the wrapper alone.
if h3100_version_ge "$upstream" 11.0; then
    qtest_module=debian:accel-qtest.so
else
    qtest_module=tree:accel-qtest-x86_64.so
fi
nm -D --defined-only "$qemu_bin" | awk '$3 == "qmp_query_version" { f = 1 } END { exit !f }' ||
    h3100_die "$qemu_bin exports no QEMU symbols (not a build with --enable-modules)"
if [ "$check_only" = 1 ]; then
    h3100_log "$qemu_bin ($pkg $ver) can take the plugin"
    exit 0
fi
h3100_log "plugin for $pkg $ver ($qemu_bin)"

work=$H3100_CACHE/plugin/$(printf '%s' "$ver" | tr ':~+' '_._')
mkdir -p "$work/dl" "$out"
out=$(cd "$out" && pwd)
# one build at a time per version: two would unpack and configure the
# same tree at once (the second waits for the first)
exec {lock_fd}>"$work/lock"
flock -n "$lock_fd" || {
    h3100_log "waiting for another build-plugin.sh on $work"
    flock "$lock_fd"
}

# --- 2. that version's source -------------------------------------------------
# newest GLOB...: the last existing file of the expansion by version, or nothing
newest() {
    local f
    for f in "$@"; do [ ! -f "$f" ] || echo "$f"; done | sort -V | tail -n 1
}
# fetch_source: $work/src with Debian's patches applied, and $work/source.txt
# saying where it came from.  In the order tried: the binary's own source;
# its upstream tarball with the packaging of the same series; the nearest
# source of the series (lib.sh's H3100_QEMU_SOURCES, fetched by
# install-deps.sh --qemu) with VERSION set to the binary's, which only
# builds when the module stamp proves configure identical and only loads
# when the QOM sizes match (plugin/h3100-abi.c).
fetch_source() {
    local dsc orig deb_tar near
    (cd "$work/dl" && apt-get source --download-only -qq "qemu=$ver" \
        >"$work/dl/fetch.log" 2>&1) || true
    dsc=$(newest "$work"/dl/qemu_*.dsc)
    orig=$(newest "$work/dl/qemu_${upstream}"*.orig.tar.*)
    rm -rf "$work/src" "$work/src.tmp"
    if [ -n "$dsc" ]; then
        dpkg-source --no-check -x "$dsc" "$work/src.tmp" >/dev/null
        echo "apt-get source qemu=$ver ($(basename "$dsc"))" >"$work/source.txt"
    elif [ -n "$orig" ]; then
        # The mirror has the upstream tarball but not this revision's .dsc
        # and debian.tar (bookworm-backports 10.0.2 answers 404): take the
        # packaging of the trixie source install-deps.sh --qemu fetched.
        # (the packaging of the same series only: another series' patch
        # series and rules are not this binary's)
        deb_tar=$(newest "$H3100_CACHE/src/qemu_$series".*.debian.tar.*)
        [ -n "$deb_tar" ] ||
            h3100_die "no .dsc for qemu=$ver on the mirror and no Debian packaging of QEMU $series cached (run H3100_QEMU_SERIES=$series scripts/install-deps.sh --qemu)"
        h3100_warn "the mirror has no qemu_$ver.dsc/.debian.tar (see $work/dl/fetch.log): using $(basename "$orig") with debian/ from $(basename "$deb_tar")"
        mkdir -p "$work/src.tmp"
        tar -xf "$orig" -C "$work/src.tmp" --strip-components=1
        tar -xf "$deb_tar" -C "$work/src.tmp"
        local p
        while read -r p; do
            case $p in ''|'#'*) continue ;; esac
            patch -s -p1 -d "$work/src.tmp" <"$work/src.tmp/debian/patches/$p" ||
                h3100_die "Debian patch $p does not apply to $(basename "$orig")"
        done <"$work/src.tmp/debian/patches/series"
        echo "$(basename "$orig") + debian/ of $(basename "$deb_tar") (the mirror has no .dsc for $ver)" >"$work/source.txt"
    elif near=$(newest "$H3100_CACHE/src/qemu_$series".*.dsc) && [ -n "$near" ] &&
         grep -Eq 'Failed to fetch|404' "$work/dl/fetch.log"; then
        # apt knows the version (a deb-src line lists it) but the mirror
        # has neither its .dsc nor its .orig (trixie-backports' 11.1.3)
        h3100_warn "the mirror has no source of qemu=$ver (neither .dsc nor .orig): building from the nearest QEMU $series source, $(basename "$near"), only if the module stamp and, at load, the QOM sizes prove the ABI"
        dpkg-source --no-check -x "$near" "$work/src.tmp" >/dev/null
        echo "$(basename "$near") with VERSION $(cat "$work/src.tmp/VERSION") set to $upstream (nearest source: the mirror has neither the .dsc nor the .orig of $ver)" >"$work/source.txt"
        echo "$upstream" >"$work/src.tmp/VERSION"
    else
        tail -n 5 "$work/dl/fetch.log" >&2
        h3100_die "apt-get source qemu=$ver fetched nothing (is a deb-src line for its suite configured? scripts/install-deps.sh --plugin)"
    fi
    [ "$(cat "$work/src.tmp/VERSION")" = "$upstream" ] ||
        h3100_die "the source is QEMU $(cat "$work/src.tmp/VERSION"), the binary $upstream"
    mv "$work/src.tmp" "$work/src"
}
if [ ! -f "$work/src/VERSION" ] || [ ! -f "$work/source.txt" ]; then
    fetch_source
fi
h3100_log "source: $(cat "$work/source.txt")"
h3100_overlay "$work/src"

# --- 3. Debian's configuration -----------------------------------------------
# debian/rules' common options and build flags, evaluated by make itself;
# the options of its "main system and tools build" (b/qemu/configured),
# each checked to be still in the rules; and the system's --disable-*
# options of debian/extract-config-opts.  Its --enable-* ones are left to
# configure's detection: the headers are checked against the binary below.
deb_upstream=${ver#*:}
deb_upstream=${deb_upstream%-*}
# (checked-version: control.mk's guard against packaging of another
# upstream version, which the fallback source is by design)
rules_value() {
    make -s -C "$work/src" -f debian/rules DEB_VERSION="$ver" \
        checked-version="$deb_upstream" \
        --eval "h3100-print: ; \$(info \$($1))@:" h3100-print 2>/dev/null
}
main_opts=(--enable-system --disable-user --disable-linux-user --enable-tools
           --disable-xen --enable-modules --enable-module-upgrades)
# (-tools: 11.0's rules build it only with qemu-utils, --$(if ...)-tools;
# the arch build does, so --enable-tools stays)
for o in -system --disable-user --disable-linux-user -tools \
         --disable-xen --enable-modules --enable-module-upgrades -guest-agent; do
    grep -qF -- "$o" "$work/src/debian/rules" ||
        h3100_die "debian/rules no longer has $o: update scripts/build-plugin.sh"
done
conf_line=$(rules_value common_configure_opts)
cflags=$(rules_value extra-cflags)
ldflags=$(rules_value extra-ldflags)
[ -n "$conf_line" ] || h3100_die "cannot read common_configure_opts from debian/rules"
eval "conf=($conf_line)"
conf+=("--extra-cflags=$cflags" "--extra-ldflags=$ldflags" "${main_opts[@]}"
       --disable-guest-agent --target-list=x86_64-softmmu --python=/usr/bin/python3)
for o in $(sh "$work/src/debian/extract-config-opts" "linux-$arch" "$work/src/debian/control"); do
    case $o in --disable-*) conf+=("$o") ;; esac
done
qbuild=$work/build
# the checkout the overlay points into is part of the stamp: the tree is
# shared by every checkout, and after the overlay moved to another one
# ninja's timestamps cannot tell which meson.build and trace-events the
# generated files came from
conf_stamp="$(printf '%q ' "${conf[@]}") project=$H3100_PROJECT"
if [ ! -f "$qbuild/build.ninja" ] ||
   [ "$(cat "$qbuild/.h3100-conf-stamp" 2>/dev/null)" != "$conf_stamp" ]; then
    h3100_log "configuring QEMU $upstream as Debian does (log: $qbuild/configure.log)"
    rm -rf "$qbuild"
    mkdir -p "$qbuild"
    if ! (cd "$qbuild" && "$work/src/configure" "${conf[@]}") >"$qbuild/configure.log" 2>&1; then
        tail -n 20 "$qbuild/configure.log" >&2
        h3100_die "configure failed (log: $qbuild/configure.log)"
    fi
    printf '%s\n' "$conf_stamp" >"$qbuild/.h3100-conf-stamp"
fi

# QEMU's module stamp hashes the version, the package string and the
# configure script; the binary holds it (the name of the qemu_stamp_<sha1>
# function it looks up in a module), so it proves all three are the binary's.
stamp=$(sed -n 's/^#define CONFIG_STAMP _\([0-9a-f]*\)$/\1/p' "$qbuild/config-host.h")
if [ -z "$stamp" ] || ! grep -aq "qemu_stamp_$stamp" "$qemu_bin"; then
    case $(cat "$work/source.txt") in
    *'nearest source'*)
        h3100_die "the nearest source cannot stand in for $ver: its module stamp ($stamp) is not $qemu_bin's (its configure differs from the one the binary was built with)" ;;
    esac
    h3100_die "the configured tree's module stamp ($stamp) is not $qemu_bin's: another version, package string or configure script"
fi
h3100_log "module stamp $stamp: the binary's"

# --- 4. generated headers, config-host.h against the binary, compile ---------
# The macros the device's headers test (an inline function, a struct or a
# QAPI enum changes with them) are set as the installed binary shows them
# (scripts/lib/plugin_build.py).
python3 "$H3100_PROJECT/scripts/lib/plugin_build.py" "$qemu_bin" "$qbuild" "$out/obj" ||
    h3100_die "compiling the device against $qemu_bin's configuration failed"

# --- 5. link: the device, the loader, the wrapper -------------------------------
read -r -a glib_libs <<<"$(pkg-config --libs glib-2.0)"
gcc -shared -o "$out/dapustor-h3100-impl.so" "$out"/obj/*.o \
    -Wl,-z,now -Wl,-z,relro -Wl,--as-needed \
    -Wl,--version-script="$H3100_PROJECT/plugin/dapustor-h3100.map" \
    "${glib_libs[@]}" -lm
exports=$(nm -D --defined-only "$out/dapustor-h3100-impl.so" | grep -cv ' A ' || true)
[ "$exports" = 0 ] ||
    h3100_die "dapustor-h3100-impl.so exports $exports symbols (plugin/dapustor-h3100.map)"
missing=$(comm -23 <(nm -D --undefined-only "$out/dapustor-h3100-impl.so" |
                     awk '$1 == "U" { sub(/@.*/, "", $2); print $2 }' | sort -u) \
                   <({ nm -D --defined-only "$qemu_bin"
                       ldd "$qemu_bin" | awk '$3 ~ /^\// { print $3 }' |
                           xargs -r nm -D --defined-only; } |
                     awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u))
[ -z "$missing" ] ||
    h3100_die "$qemu_bin lacks what the device calls: $(echo "$missing" | tr '\n' ' ')"

build_ids=$(dpkg-query -L "$pkg" | grep -E '^/usr/bin/qemu-system-[^/]*$' | sort |
    while read -r b; do
        readelf -n "$b" 2>/dev/null | awk '/Build ID:/ { print $3 }'
    done | sort -u | paste -sd, -)
[ -n "$build_ids" ] || h3100_die "no build id in $pkg's binaries"
gcc -O2 -g -fPIC -shared -Wall -Wextra -Werror -std=gnu11 \
    -DH3100_QEMU_VERSION="\"$upstream\"" -DH3100_QEMU_PKGVERSION="\"Debian $ver\"" \
    -DH3100_QEMU_BUILD_IDS="\"$build_ids\"" \
    -o "$out/dapustor-h3100.so" "$H3100_PROJECT/plugin/h3100-loader.c" -ldl
sed -e "s|@QEMU@|$qemu_bin|" -e "s|@MULTIARCH@|$multiarch|" \
    "$H3100_PROJECT/plugin/qemu-system-x86_64-h3100.in" >"$out/qemu-system-x86_64-h3100"
chmod 755 "$out/qemu-system-x86_64-h3100"
cat >"$out/BUILD-INFO" <<EOF
package: $pkg $ver
binary: $qemu_bin
build-ids: $build_ids
source: $(cat "$work/source.txt")
proven: module stamp $stamp (the binary's version, package string and configure); the configuration macros the device's headers test, checked against the binary (plugin_build.py); every symbol the device imports, defined by the binary or its libraries; at each start (and here, by -device help), before the device is used, the instance and class sizes of QOM types object, device, pci-device and memory-region in the running binary against the plugin's sizeof(), and the binary's VMState tables vmstate_fifo8 byte for byte against the same tables built with the plugin's headers (plugin/h3100-abi.c)
not proven: the layout of other structs and the inline functions of the headers, nor (when the source stood in) the Debian patches of the binary's own revision: no debug symbols of the binary on the mirror, so no pahole
project: $(git -C "$H3100_PROJECT" describe --always --dirty 2>/dev/null || echo unknown)
EOF

# The proof: the stock binary lists the device.
# For the nearest source this is the last of the proof: the QOM sizes and
# the VMState tables in the binary (plugin/h3100-abi.c).
if ! "$out/qemu-system-x86_64-h3100" -device help 2>&1 |
        awk '/^name "dapustor-h3100"/ { f = 1 } END { exit !f }'; then
    case $(cat "$work/source.txt") in
    *'nearest source'*)
        h3100_die "the nearest source cannot stand in for $ver: $("$out/qemu-system-x86_64-h3100" -M none 2>&1 | sed -n 1p)" ;;
    esac
    h3100_die "$qemu_bin with the plugin does not list dapustor-h3100: $("$out/qemu-system-x86_64-h3100" -device help 2>&1 | sed -n 1,3p)"
fi

# --- 6. for the tests: the qtest accelerator ----------------------------------
if [ "$with_qtest" = 1 ]; then
    rm -rf "$out/test"
    mkdir -p "$out/test"
    case $qtest_module in
    tree:*)
        # Debian's 10.0 removes it: built from the same tree
        ninja -C "$qbuild" "${qtest_module#tree:}" >"$qbuild/qtest.log" 2>&1 ||
            { tail -n 20 "$qbuild/qtest.log" >&2; h3100_die "building ${qtest_module#tree:} failed"; }
        cp "$qbuild/${qtest_module#tree:}" "$out/test/"
        cat >"$out/test/qemu-system-x86_64" <<EOF
#!/bin/sh
# The distribution's QEMU with the plugin and the qtest accelerator module
# built from the same tree (tests only: QTEST_QEMU_BINARY).
QEMU_MODULE_DIR=$out/test exec $out/qemu-system-x86_64-h3100 "\$@"
EOF
        ;;
    debian:*)
        # Debian ships it (qemu-system-common): QEMU's module directory
        # stays the package's, with all its other modules
        dpkg-query -S "/usr/lib/$multiarch/qemu/${qtest_module#debian:}" >/dev/null 2>&1 ||
            h3100_die "no /usr/lib/$multiarch/qemu/${qtest_module#debian:} from a package: install qemu-system-common $ver"
        cat >"$out/test/qemu-system-x86_64" <<EOF
#!/bin/sh
# The distribution's QEMU with the plugin; its own qtest accelerator module
# (tests only: QTEST_QEMU_BINARY).
exec $out/qemu-system-x86_64-h3100 "\$@"
EOF
        ;;
    esac
    chmod 755 "$out/test/qemu-system-x86_64"
    if [ -x /usr/bin/qemu-img ]; then
        ln -sfn /usr/bin/qemu-img "$out/test/qemu-img"
    fi
fi

# --- 7. the .deb ----------------------------------------------------------------
if [ "$want_deb" = 1 ]; then
    "$H3100_PROJECT/scripts/lib/plugin-deb.sh" "$out" "$pkg" "$ver" "$multiarch"
fi
h3100_log "done in $((SECONDS - start)) s: $out/qemu-system-x86_64-h3100"
