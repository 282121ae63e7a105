#!/usr/bin/env bash
# Install what dapustor-h3100 needs on Debian 12 (bookworm) or 13 (trixie).
#
#   scripts/install-deps.sh          model library + unit tests
#   scripts/install-deps.sh --qemu   also QEMU build deps, and fetch the QEMU
#                                    source (apt-get source qemu/trixie) into
#                                    ${H3100_CACHE:-~/.cache/dapustor-h3100}/src
#                                    unless QEMU_SRC=/path/to/qemu-10.x is set.
#   scripts/install-deps.sh --plugin also Debian's QEMU >= 10.0 (bookworm-
#                                    backports on 12) for the plugin
#                                    (scripts/build-plugin.sh); implies --qemu
#
# Idempotent: apt sources are only written when missing/different, and
# `apt-get update` runs at most once, only when something must be installed.
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/lib.sh"

want_qemu=0
want_plugin=0
for a in "$@"; do
    case $a in
    --qemu) want_qemu=1 ;;
    --plugin) want_qemu=1; want_plugin=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) h3100_die "unknown option: $a (try --help)" ;;
    esac
done

export DEBIAN_FRONTEND=noninteractive
[ -r /etc/os-release ] && . /etc/os-release
codename=${VERSION_CODENAME:-unknown}
[ "${ID:-}" = debian ] || h3100_warn "not Debian (${ID:-?}); trying anyway"
h3100_log "system: ${PRETTY_NAME:-unknown}"

updated=0
sources_changed=0
apt_update() {
    if [ "$updated" -eq 0 ]; then
        h3100_log "apt-get update"
        h3100_as_root apt-get update -qq
        updated=1
    fi
}

# write_source FILE CONTENT: write an apt deb822 source if missing/different.
write_source() {
    local f=/etc/apt/sources.list.d/$1 content=$2
    if [ -f "$f" ] && [ "$(cat "$f")" = "$content" ]; then
        return 0
    fi
    h3100_log "adding apt source $f"
    printf '%s\n' "$content" | h3100_as_root tee "$f" >/dev/null
    sources_changed=1
}

mirror=http://deb.debian.org/debian
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
case $codename in
bookworm)
    write_source h3100-backports.sources "Types: deb deb-src
URIs: $mirror
Suites: bookworm-backports
Components: main
Signed-By: $keyring"
    ;;
esac
if [ "$want_qemu" -eq 1 ] && [ -z "${QEMU_SRC:-}" ]; then
    # QEMU >= 10.0 source only exists in trixie (backports' source 404s).
    write_source h3100-trixie-src.sources "Types: deb-src
URIs: $mirror
Suites: trixie
Components: main
Signed-By: $keyring"
fi
if [ "$sources_changed" -eq 1 ]; then
    apt_update
fi

pkgs=("${H3100_PKGS_BASE[@]}")
[ "$want_qemu" -eq 1 ] && pkgs+=("${H3100_PKGS_QEMU[@]}" "${H3100_PKGS_GUEST[@]}"
                                 "${H3100_PKGS_BOOT[@]}"
                                 "${H3100_PKGS_LIBVIRT[@]}")

missing=()
for p in "${pkgs[@]}"; do
    # bookworm's own meson (0.63) is too old: it comes from backports below
    [ "$p" = meson ] && [ "$codename" = bookworm ] && continue
    if ! grep -q 'install ok installed' < <(dpkg-query -W -f='${Status}' "$p" 2>/dev/null); then
        missing+=("$p")
    fi
done

meson_ok() {
    local v
    v=$(dpkg-query -W -f='${Version}' meson 2>/dev/null) || return 1
    dpkg --compare-versions "$v" ge 1.5
}

if [ "${#missing[@]}" -gt 0 ]; then
    apt_update
    h3100_log "installing: ${missing[*]}"
    h3100_as_root apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
else
    h3100_log "all ${#pkgs[@]} packages already installed"
fi

if ! meson_ok; then
    [ "$codename" = bookworm ] ||
        h3100_die "meson >= 1.5 not available (have $(meson --version 2>/dev/null))"
    apt_update
    h3100_log "installing meson from bookworm-backports"
    h3100_as_root apt-get install -y -qq --no-install-recommends \
        -t bookworm-backports meson >/dev/null
    meson_ok || h3100_die "meson >= 1.5 still not installed"
fi
h3100_log "meson $(meson --version)"

# Debian's QEMU for the plugin: bookworm's own is 7.2, backports has 10.0.
if [ "$want_plugin" = 1 ]; then
    missing=()
    for p in "${H3100_PKGS_PLUGIN[@]}"; do
        grep -q 'install ok installed' < <(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) ||
            missing+=("$p")
    done
    qver=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null || true)
    qver=${qver#*:}
    if [ -n "$qver" ] && ! h3100_version_ge "${qver%%[+~-]*}" "$H3100_QEMU_MIN"; then
        missing+=(qemu-system-x86 qemu-utils)
    fi
    if [ "${#missing[@]}" -gt 0 ]; then
        apt_update
        target=()
        [ "$codename" = bookworm ] && target=(-t bookworm-backports)
        h3100_log "installing Debian's QEMU for the plugin: ${missing[*]}"
        h3100_as_root apt-get install -y -qq --no-install-recommends "${target[@]}" \
            "${missing[@]}" >/dev/null
    fi
    h3100_log "Debian's QEMU: $(dpkg-query -W -f='${Version}' qemu-system-x86)"
fi

[ "$want_qemu" -eq 1 ] || { h3100_log "done"; exit 0; }

# --- QEMU source -----------------------------------------------------------
if [ -n "${QEMU_SRC:-}" ]; then
    h3100_check_qemu_src "$QEMU_SRC"
    h3100_log "using QEMU_SRC=$QEMU_SRC ($(cat "$QEMU_SRC/VERSION"))"
    exit 0
fi
src=$(h3100_cached_qemu_src)
if [ -n "$src" ] && h3100_version_ge "$(cat "$src/VERSION")" "$H3100_QEMU_MIN"; then
    h3100_log "QEMU source cached: $src ($(cat "$src/VERSION"))"
    exit 0
fi
apt_update
mkdir -p "$H3100_CACHE/src"
h3100_log "fetching QEMU source (apt-get source qemu/trixie) into $H3100_CACHE/src"
(cd "$H3100_CACHE/src" && apt-get source -qq qemu/trixie >"$H3100_CACHE/src/fetch.log" 2>&1) || {
    tail -n 20 "$H3100_CACHE/src/fetch.log" >&2
    h3100_die "apt-get source qemu/trixie failed (log: $H3100_CACHE/src/fetch.log)"
}
src=$(h3100_cached_qemu_src)
[ -n "$src" ] || h3100_die "QEMU source not found under $H3100_CACHE/src after fetch"
h3100_check_qemu_src "$src"
h3100_log "QEMU source ready: $src ($(cat "$src/VERSION"))"
