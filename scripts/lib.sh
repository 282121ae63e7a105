# shellcheck shell=bash
# Shared helpers for scripts/install-deps.sh and scripts/build-qemu.sh.
# Source it; do not execute it.
# shellcheck disable=SC2034  # variables are used by the sourcing scripts

H3100_PROJECT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
H3100_CACHE=${H3100_CACHE:-$HOME/.cache/dapustor-h3100}
H3100_QEMU_MIN=10.0

# --- package lists (the only place they are kept) -------------------------
# Model library + unit tests.  meson must be >= 1.5 (bookworm-backports on 12).
H3100_PKGS_BASE=(build-essential gcc pkg-config meson ninja-build
                 libglib2.0-dev check gnuplot-nox ccache git)
# The Linux guest's image (scripts/guest-image.sh): busybox and tools copied
# from the host, the cloud kernel fetched with apt-get download.
H3100_PKGS_GUEST=(busybox-static nvme-cli pciutils pci.ids cpio fio e2fsprogs
                  xfsprogs)
# Bootable drive images (scripts/boot-image.sh, scripts/install-debian.sh):
# GPT, FAT, syslinux for BIOS, systemd-boot for UEFI, OVMF, debootstrap.
H3100_PKGS_BOOT=(gdisk dosfstools mtools syslinux syslinux-common
                 systemd-boot-efi ovmf debootstrap)
# libvirt, for the test of `virsh save` / `virsh restore` (its daemon is
# the test's own, started and stopped by it: none runs on the host).
H3100_PKGS_LIBVIRT=(libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients)
# Additionally needed to fetch and build QEMU (x86_64-softmmu) and run it.
H3100_PKGS_QEMU=(dpkg-dev xz-utils python3 python3-venv python3-pycotap
                 flex bison zlib1g-dev libpixman-1-dev libfdt-dev
                 libslirp-dev seabios ipxe-qemu qemu-system-data rsync)

h3100_log()  { printf '[h3100] %s\n' "$*"; }
h3100_warn() { printf '[h3100] warning: %s\n' "$*" >&2; }
h3100_die()  { printf '[h3100] error: %s\n' "$*" >&2; exit 1; }

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

# Print the directory of the newest cached apt QEMU source tree, or nothing.
h3100_cached_qemu_src() {
    local d best='' bestv=''
    for d in "$H3100_CACHE"/src/qemu-*/; do
        [ -f "$d/VERSION" ] || continue
        local v
        v=$(cat "$d/VERSION")
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
