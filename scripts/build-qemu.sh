#!/usr/bin/env bash
# Build qemu-system-x86_64 with the dapustor-h3100 device, and qemu-img.
#
#   scripts/build-qemu.sh BUILD_DIR
#
# BUILD_DIR is the project's meson build dir (e.g. build).  Creates:
#   BUILD_DIR/qemu-src                copy of pristine QEMU (>= 10.0) + overlay
#   BUILD_DIR/qemu-src/hw/dapustor-h3100/{hw,models,include} -> project dirs
#   BUILD_DIR/qemu-build              QEMU build dir (configured once)
#   BUILD_DIR/qemu-system-x86_64      symlink to the built binary
#   BUILD_DIR/qemu-img                symlink to qemu-img (the tests make
#                                     qcow2 images with it)
#   BUILD_DIR/qemu-build/h3100-{configure,build}.log
#
# Environment:
#   QEMU_SRC=/path        pristine QEMU 10.0+ tree (default: Debian's source of
#                         H3100_QEMU_SERIES cached in
#                         ${H3100_CACHE:-~/.cache/dapustor-h3100}/src, fetched
#                         with install-deps.sh --qemu when missing)
#   H3100_QEMU_SERIES     10.0 (default) or 11.1 (docs/guide/qemu-series.md)
#   H3100_QEMU_TARGETS    ninja targets (default: qemu-system-x86_64 qemu-img)
#   H3100_JOBS            ninja -j (default: ninja's choice)
#   H3100_QEMU_EXTRA_CONFIGURE  extra configure arguments (word-split)
#   H3100_INSTRUMENT      asan | coverage: compile the device and the model
#                         (only) with ASan + UBSan or gcov
#                         (scripts/lib/cc-instrument.sh); the rest of QEMU
#                         comes from ccache
#   H3100_QEMU_LINK       also link this path to the built qemu-system-x86_64
#   H3100_QEMU_PATCHES    patch files (-p1, blank-separated) applied once to
#                         the working copy: the fuzz build's harness fixes
#                         (scripts/campaign/fuzz.sh, tests/fuzz/*.patch); a change to
#                         one starts a fresh copy and build
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/lib.sh"

if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    h3100_usage "$0"
    exit 2
fi
mkdir -p "$1"
BUILD_DIR=$(cd "$1" && pwd)
QSRC=$BUILD_DIR/qemu-src
QBUILD=$BUILD_DIR/qemu-build
start=$(date +%s)

# --- 1. pristine source ------------------------------------------------------
h3100_check_series
if [ -n "${QEMU_SRC:-}" ]; then
    PRISTINE=$(cd "$QEMU_SRC" && pwd)
else
    PRISTINE=$(h3100_cached_qemu_src)
    if [ -z "$PRISTINE" ]; then
        h3100_log "no cached QEMU source; running install-deps.sh --qemu"
        "$H3100_PROJECT/scripts/install-deps.sh" --qemu
        PRISTINE=$(h3100_cached_qemu_src)
    fi
fi
[ -n "$PRISTINE" ] || h3100_die "no QEMU source found"
h3100_check_qemu_src "$PRISTINE"
QVER=$(cat "$PRISTINE/VERSION")
h3100_log "QEMU $QVER from $PRISTINE"

# --- 2. working copy, patches, overlay ---------------------------------------
# The patches' contents are part of the copy's stamp: a patch that changes
# gets a fresh copy to apply to, not one patched by its old version.
src_stamp="$PRISTINE $QVER"
for p in ${H3100_QEMU_PATCHES:-}; do
    src_stamp+=" $(basename "$p"):$(sha256sum <"$p" | cut -c1-16)"
done
if [ "$(cat "$QSRC/.h3100-src-stamp" 2>/dev/null)" != "$src_stamp" ]; then
    h3100_log "copying QEMU source to $QSRC"
    rm -rf "$QSRC" "$QBUILD"
    mkdir -p "$QSRC"
    cp -a "$PRISTINE/." "$QSRC/"
    for p in ${H3100_QEMU_PATCHES:-}; do
        h3100_log "applying $(basename "$p") to $QSRC"
        patch -d "$QSRC" -p1 --forward --quiet <"$p" ||
            h3100_die "$p does not apply to QEMU $QVER"
    done
    printf '%s\n' "$src_stamp" >"$QSRC/.h3100-src-stamp"
fi
h3100_overlay "$QSRC"

# --- 3. configure (once) and build -------------------------------------------
CONF=(--target-list=x86_64-softmmu
      --disable-download --disable-install-blobs --disable-docs
      --disable-user --disable-guest-agent --disable-xen
      --disable-gtk --disable-sdl --disable-vnc --disable-spice
      --disable-opengl --disable-curses --disable-rust --disable-plugins
      --enable-slirp --enable-fdt=system --enable-tcg
      --firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu)
# Use the distro python (it has the apt 'meson' module and venv); a pyenv or
# other python first in PATH makes QEMU's mkvenv fail to find meson offline.
if [ -x /usr/bin/python3 ]; then
    CONF+=(--python=/usr/bin/python3)
fi
# QEMU passes the compiler to meson through a machine file, so meson's own
# ccache auto-detection does not apply: wrap the compiler explicitly.
if [ -n "${H3100_INSTRUMENT:-}" ]; then
    wrap=$H3100_PROJECT/scripts/lib/cc-instrument.sh
    CONF+=("--cc=$wrap $H3100_INSTRUMENT ${CC:-cc}"
           "--cxx=$wrap $H3100_INSTRUMENT ${CXX:-c++}")
elif command -v ccache >/dev/null; then
    CONF+=("--cc=ccache ${CC:-cc}" "--cxx=ccache ${CXX:-c++}")
fi
# shellcheck disable=SC2206
CONF+=(${H3100_QEMU_EXTRA_CONFIGURE:-})
conf_stamp="$QVER ${CONF[*]}"

export CCACHE_BASEDIR=$BUILD_DIR
export CCACHE_NOHASHDIR=1

if [ ! -f "$QBUILD/build.ninja" ] ||
   [ "$(cat "$QBUILD/.h3100-conf-stamp" 2>/dev/null)" != "$conf_stamp" ]; then
    h3100_log "configuring QEMU in $QBUILD"
    rm -rf "$QBUILD"
    mkdir -p "$QBUILD"
    if ! (cd "$QBUILD" && "$QSRC/configure" "${CONF[@]}") \
            >"$QBUILD/h3100-configure.log" 2>&1; then
        tail -n 30 "$QBUILD/h3100-configure.log" >&2
        h3100_die "QEMU configure failed (log: $QBUILD/h3100-configure.log)"
    fi
    printf '%s\n' "$conf_stamp" >"$QBUILD/.h3100-conf-stamp"
fi

read -r -a targets <<<"${H3100_QEMU_TARGETS:-qemu-system-x86_64 qemu-img}"
jobs=()
[ -n "${H3100_JOBS:-}" ] && jobs=(-j "$H3100_JOBS")
h3100_log "building ${targets[*]} (log: $QBUILD/h3100-build.log)"
if ! ninja -C "$QBUILD" "${jobs[@]}" "${targets[@]}" \
        >"$QBUILD/h3100-build.log" 2>&1; then
    grep -n -E 'error|FAILED' "$QBUILD/h3100-build.log" | sed -n 1,20p >&2 || true
    echo '--- tail of build log ---' >&2
    tail -n 40 "$QBUILD/h3100-build.log" >&2
    h3100_die "QEMU build failed (log: $QBUILD/h3100-build.log)"
fi
if grep -E 'dapustor-h3100/.*warning:' "$QBUILD/h3100-build.log" >&2; then
    h3100_warn "the dapustor-h3100 sources compiled with warnings (see above)"
fi

# Run from the build tree, QEMU looks up firmware (--firmwarepath) under
# qemu-build/qemu-bundle/<dir>; point those at the distro's blobs (the +ds
# source ships none): seabios, ipxe-qemu, qemu-system-data (kvmvapic.bin).
for fw in /usr/share/qemu /usr/share/seabios /usr/lib/ipxe/qemu; do
    if [ -d "$fw" ] && [ ! -e "$QBUILD/qemu-bundle$fw" ]; then
        mkdir -p "$(dirname "$QBUILD/qemu-bundle$fw")"
        ln -sfn "$fw" "$QBUILD/qemu-bundle$fw"
    fi
done
[ -f /usr/share/seabios/bios-256k.bin ] ||
    h3100_warn "no /usr/share/seabios/bios-256k.bin: run install-deps.sh --qemu"

ln -sfn qemu-build/qemu-system-x86_64 "$BUILD_DIR/qemu-system-x86_64"
[ ! -x "$QBUILD/qemu-img" ] || ln -sfn qemu-build/qemu-img "$BUILD_DIR/qemu-img"
[ -z "${H3100_QEMU_LINK:-}" ] ||
    ln -sfn "$QBUILD/qemu-system-x86_64" "$H3100_QEMU_LINK"
h3100_log "done in $(( $(date +%s) - start ))s: $BUILD_DIR/qemu-system-x86_64"
