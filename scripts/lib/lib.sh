# shellcheck shell=bash
# The helpers the scripts share: package lists, messages, option checks,
# temporary directories, meson setup, the QEMU tree overlay.
# Source it; do not execute it.
# shellcheck disable=SC2034  # variables are used by the sourcing scripts

H3100_PROJECT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
H3100_CACHE=${H3100_CACHE:-$HOME/.cache/dapustor-h3100}
# the build the scripts use (QEMU, tools/): the test command's own build
# directory under meson test (build-11.1 for --qemu-series 11.1)
H3100_BUILD=${H3100_BUILD:-$H3100_PROJECT/build}
H3100_QEMU_MIN=10.0

# --- the QEMU series the device builds on (docs/guide/qemu-series.md) ------
# SERIES -> Debian's source of it: "suite SUITE" (apt-get source
# qemu/SUITE), or "pool DSC SHA256": one upload fetched from the mirror's
# pool, its .dsc checked against SHA256 (the mirror here serves 11.1.1,
# not the 11.1.3 trixie-backports and sid list).  10.0 is the default.
declare -gA H3100_QEMU_SOURCES=(
    [10.0]="suite trixie"
    [11.1]="pool qemu_11.1.1+ds-1.dsc dfd4fbdd38517e2467002091bbcd938bbff8b2c851cc3f56b019236c7d1f21da"
)
H3100_QEMU_SERIES=${H3100_QEMU_SERIES:-10.0}

# --- package lists (the only place they are kept) -------------------------
# Model library + unit tests.  meson must be >= 1.5 (bookworm-backports on 12).
H3100_PKGS_BASE=(build-essential gcc pkg-config meson ninja-build
                 libglib2.0-dev check gnuplot-nox ccache git)
# The Linux guest's image (scripts/guest/guest-image.sh): busybox and tools copied
# from the host, the cloud kernel fetched with apt-get download.
H3100_PKGS_GUEST=(busybox-static nvme-cli pciutils pci.ids cpio fio e2fsprogs
                  xfsprogs)
# Bootable drive images (scripts/guest/boot-image.sh, scripts/guest/install-debian.sh):
# GPT, FAT, syslinux for BIOS, systemd-boot for UEFI, OVMF, debootstrap.
H3100_PKGS_BOOT=(gdisk dosfstools mtools syslinux syslinux-common
                 systemd-boot-efi ovmf debootstrap)
# libvirt, for the test of `virsh save` / `virsh restore` (its daemon is
# the test's own, started and stopped by it: none runs on the host).
H3100_PKGS_LIBVIRT=(libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients)
# The distribution's QEMU for the plugin (scripts/build-plugin.sh; from
# bookworm-backports on Debian 12).
H3100_PKGS_PLUGIN=(qemu-system-x86 qemu-utils)
# Additionally needed to fetch and build QEMU (x86_64-softmmu) and run it;
# liburing, libaio and zstd are the in-tree QEMU's block backends, whose
# headers the device's QEMU headers include (the plugin's build too).
# QEMU 11's configure also wants pip, setuptools, wheel and qemu.qmp
# (python3-qemu-qmp: trixie-backports only, install-deps.sh fetches it).
H3100_PKGS_QEMU=(dpkg-dev xz-utils python3 python3-venv python3-pycotap
                 python3-pip python3-setuptools python3-wheel wget
                 flex bison zlib1g-dev libpixman-1-dev libfdt-dev
                 libslirp-dev seabios ipxe-qemu qemu-system-data rsync
                 liburing-dev libaio-dev libzstd-dev)

h3100_log()  { printf '[h3100] %s\n' "$*"; }
h3100_warn() { printf '[h3100] warning: %s\n' "$*" >&2; }
h3100_die()  { printf '[h3100] error: %s\n' "$*" >&2; exit 1; }

# The sourcing script's name, without .sh: the tag of its progress lines.
H3100_SCRIPT=$(basename "$0" .sh)

# h3100_say MESSAGE...: one progress line on stderr, "[SCRIPT] MESSAGE";
# "[SCRIPT Ns] MESSAGE" (seconds since then) once H3100_SAY_T0 is set
# (to $SECONDS at the start).
h3100_say() {
    if [ -n "${H3100_SAY_T0:-}" ]; then
        printf '[%s %4ds] %s\n' "$H3100_SCRIPT" $((SECONDS - H3100_SAY_T0)) "$*" >&2
    else
        printf '[%s] %s\n' "$H3100_SCRIPT" "$*" >&2
    fi
}

# h3100_tmpdir NAME: the script's scratch directory, in tmp: make
# $TMPDIR/h3100-NAME.XXXXXX (/tmp without TMPDIR) and remove it when the
# script exits, after calling the script's h3100_on_exit if it defines
# one (to stop what it started); H3100_KEEP_TMP=1 keeps it.  Call it in
# the script itself, not in $(...): it sets tmp and the EXIT trap.
H3100_TMPDIRS=()
h3100_tmpdir() {
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/h3100-$1.XXXXXX") ||
        h3100_die "cannot make a temporary directory in ${TMPDIR:-/tmp}"
    H3100_TMPDIRS+=("$tmp")
    trap h3100_exit_cleanup EXIT
}
# shellcheck disable=SC2317  # called by the trap
h3100_exit_cleanup() {
    if declare -F h3100_on_exit >/dev/null; then
        h3100_on_exit || true
    fi
    [ -n "${H3100_KEEP_TMP:-}" ] || rm -rf "${H3100_TMPDIRS[@]}"
}

# h3100_meson_setup DIR ARGS...: configure the meson build DIR with ARGS
# (a new one, or --reconfigure an existing one); meson's output goes away.
h3100_meson_setup() {
    local dir=$1
    shift
    if [ -f "$dir/meson-private/coredata.dat" ]; then
        meson setup --reconfigure "$dir" "$@" >/dev/null
    else
        meson setup "$dir" "$@" >/dev/null
    fi
}

# --- drive profiles: h3100-sim --profiles is the one list ------------------
# h3100_capacities SIM [MODEL]: MODEL's capacities (default h3100) as
# --capacity takes them, one a line: h3100-0.8t gives 0.8T
h3100_capacities() {
    "$1" --profiles | sed -n "s/^${2:-h3100}-\(.*\)t\$/\1T/p"
}

# h3100_check_capacity SIM CAPACITY: true if CAPACITY is one of the
# H3100's, else one error line naming them and exit 1
h3100_check_capacity() {
    local caps last
    caps=$(h3100_capacities "$1") || caps=''
    [ -n "$caps" ] || h3100_die "no drive profiles from $1 --profiles (scripts/test.sh builds it)"
    grep -qxF -- "$2" <<<"$caps" && return 0
    last=$(tail -n 1 <<<"$caps")
    h3100_die "--capacity: $(head -n -1 <<<"$caps" | paste -sd, - | sed 's/,/, /g') or $last"
}

# h3100_profile_value SIM PROFILE KEY: one drive parameter of PROFILE
# (h3100-sim --show-config), e.g. user_bytes
h3100_profile_value() {
    "$1" --profile "$2" --show-config | awk -v k="$3" '$1 == k { print $3 }'
}

# h3100_nand SIM PROFILE: PROFILE's NAND (channels, dies, planes, blocks,
# pages, page and cell size) as one line of numbers
h3100_nand() {
    "$1" --profile "$2" --show-config |
        awk '$1 ~ /^(channels|dies_per_channel|planes_per_die|blocks_per_plane|pages_per_block|page_bytes|bits_per_cell)$/ { printf "%s ", $3 }'
}

# h3100_same_nand SIM PROFILE MODEL: MODEL's profile built of the same
# NAND as PROFILE, e.g. h3100-0.8t h3200 gives h3200-0.96t
h3100_same_nand() {
    local want p
    want=$(h3100_nand "$1" "$2")
    for p in $("$1" --profiles | grep "^$3-"); do
        if [ "$(h3100_nand "$1" "$p")" = "$want" ]; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

h3100_as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        h3100_die "need root (or sudo) for: $*"
    fi
}

# h3100_need OPTION ARGS...: an option's value is there (ARGS = "$@" of the
# option loop), else one error line and exit 1
h3100_need() { [ $# -ge 2 ] || h3100_die "$1 needs a value (try --help)"; }

# h3100_usage SCRIPT: print SCRIPT's header comment (its --help)
h3100_usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1"; }

# h3100_version_ge A B: true if version A >= B (dotted numbers).
h3100_version_ge() {
    [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | sed -n 1p)" = "$2" ]
}

# h3100_check_series: H3100_QEMU_SERIES is one the device builds on, else
# one error line and exit 1
h3100_check_series() {
    [ -n "${H3100_QEMU_SOURCES[$H3100_QEMU_SERIES]:-}" ] ||
        h3100_die "QEMU series $H3100_QEMU_SERIES: one of $(printf '%s\n' "${!H3100_QEMU_SOURCES[@]}" | sort -V | paste -sd' ')"
}

# Print the directory of the newest cached apt QEMU source tree of
# H3100_QEMU_SERIES, or nothing.
h3100_cached_qemu_src() {
    local d best='' bestv=''
    for d in "$H3100_CACHE"/src/qemu-*/; do
        [ -f "$d/VERSION" ] || continue
        local v
        v=$(cat "$d/VERSION")
        case $v in "$H3100_QEMU_SERIES".*) ;; *) continue ;; esac
        if [ -z "$bestv" ] || h3100_version_ge "$v" "$bestv"; then
            best=${d%/}
            bestv=$v
        fi
    done
    [ -n "$best" ] && printf '%s\n' "$best"
    return 0
}

# Check a QEMU tree: exists and VERSION >= $H3100_QEMU_MIN.
h3100_check_qemu_src() {
    local src=$1 v
    if [ ! -f "$src/VERSION" ] || [ ! -f "$src/meson.build" ]; then
        h3100_die "$src is not a QEMU source tree (no VERSION/meson.build)"
    fi
    v=$(cat "$src/VERSION")
    h3100_version_ge "$v" "$H3100_QEMU_MIN" ||
        h3100_die "QEMU in $src is $v; need $H3100_QEMU_MIN or newer"
}

# h3100_overlay QSRC: make the QEMU tree QSRC build the device.  Links
# QSRC/hw/dapustor-h3100/{hw,models,include} to the project's directories,
# writes the overlay's meson.build and hooks it into QEMU's hw/meson.build,
# hw/Kconfig and trace_events_subdirs.  Idempotent; the one place both
# builds (scripts/build-qemu.sh, scripts/build-plugin.sh) take the source
# list from: hw/meson.build and models/meson.build.
h3100_overlay() {
    local qsrc=$1 ovl=$1/hw/dapustor-h3100 d content
    mkdir -p "$ovl"
    for d in hw models include; do
        if [ -d "$H3100_PROJECT/$d" ]; then
            [ -L "$ovl/$d" ] || rm -rf "${ovl:?}/$d"    # drop an old placeholder
            ln -sfn "$H3100_PROJECT/$d" "$ovl/$d"
        else
            rm -rf "${ovl:?}/$d"
            mkdir -p "$ovl/$d"          # placeholder until the project has it
        fi
    done
    content="# Generated by dapustor-h3100 scripts/lib/lib.sh (h3100_overlay); do not edit.
h3100_inc = include_directories('include')"
    if [ -f "$H3100_PROJECT/models/meson.build" ]; then
        content+="
subdir('models')"
    fi
    content+="
subdir('hw')"
    # rewritten only when it changes (avoids needless meson reconfigures)
    if [ "$(cat "$ovl/meson.build" 2>/dev/null)" != "$content" ]; then
        printf '%s\n' "$content" >"$ovl/meson.build"
    fi
    grep -qx "subdir('dapustor-h3100')" "$qsrc/hw/meson.build" ||
        printf "subdir('dapustor-h3100')\n" >>"$qsrc/hw/meson.build"
    grep -qx "source dapustor-h3100/hw/Kconfig" "$qsrc/hw/Kconfig" ||
        printf "source dapustor-h3100/hw/Kconfig\n" >>"$qsrc/hw/Kconfig"
    if ! grep -q "'hw/dapustor-h3100/hw'" "$qsrc/meson.build"; then
        grep -q "^    'hw/nvme',$" "$qsrc/meson.build" ||
            h3100_die "cannot find 'hw/nvme' in trace_events_subdirs of $qsrc/meson.build"
        sed -i "s|^    'hw/nvme',$|&\n    'hw/dapustor-h3100/hw',|" "$qsrc/meson.build"
    fi
}
