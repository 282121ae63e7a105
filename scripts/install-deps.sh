#!/usr/bin/env bash
# Install what dapustor-h3100 needs on Debian 12 (bookworm) or 13 (trixie).
#
#   scripts/install-deps.sh          model library + unit tests
#   scripts/install-deps.sh --qemu   also QEMU build deps, and fetch the QEMU
#                                    source of H3100_QEMU_SERIES (10.0:
#                                    apt-get source qemu/trixie; 11.1: the
#                                    pinned upload lib.sh names) into
#                                    ${H3100_CACHE:-~/.cache/dapustor-h3100}/src
#                                    unless QEMU_SRC=/path/to/qemu is set.
#   scripts/install-deps.sh --plugin also Debian's QEMU of H3100_QEMU_SERIES
#                                    for the plugin (scripts/build-plugin.sh):
#                                    10.0 from bookworm-backports on 12 and
#                                    trixie on 13; 11.1 from trixie-backports
#                                    (13 only), its deb-src line too;
#                                    implies --qemu
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
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) h3100_die "unknown option: $a (try --help)" ;;
    esac
done
h3100_check_series

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
# The plugin on 11.x: Debian 13's trixie-backports, binaries and source
# (build-plugin.sh's apt-get source qemu=<the installed version>).
plugin_backports=0
if [ "$want_plugin" = 1 ] && h3100_version_ge "$H3100_QEMU_SERIES" 11.0; then
    [ "$codename" = trixie ] ||
        h3100_die "QEMU $H3100_QEMU_SERIES for the plugin is in trixie-backports: Debian 13 only (this is $codename)"
    plugin_backports=1
    write_source h3100-trixie-backports.sources "Types: deb deb-src
URIs: $mirror
Suites: trixie-backports
Components: main
Signed-By: $keyring"
fi
if [ "$want_qemu" -eq 1 ] && [ -z "${QEMU_SRC:-}" ]; then
    # QEMU 10.0's source is trixie's (bookworm-backports' source 404s).
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
    qver=${qver%%[+~-]*}
    # installed but older than the device needs, or of another series than
    # the one asked for (13's own 10.0.13 when 11.1 is wanted, and back)
    if [ -n "$qver" ] && { ! h3100_version_ge "$qver" "$H3100_QEMU_MIN" ||
       { [ "$codename" = trixie ] && [ "${qver%.*}" != "$H3100_QEMU_SERIES" ]; }; }; then
        missing+=(qemu-system-x86 qemu-utils)
    fi
    if [ "${#missing[@]}" -gt 0 ]; then
        apt_update
        target=()
        [ "$codename" = bookworm ] && target=(-t bookworm-backports)
        [ "$plugin_backports" = 1 ] && target=(-t trixie-backports)
        # 13's own 10.0.13 after 11.1: apt downgrades only what it is told
        # to, so every installed package of the qemu source, /trixie
        if [ "$codename" = trixie ] && [ "$plugin_backports" = 0 ] && [ -n "$qver" ] &&
           [ "${qver%.*}" != "$H3100_QEMU_SERIES" ]; then
            mapfile -t missing < <({ printf '%s\n' "${missing[@]}"
                dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package} ${source:Package}\n' |
                    awk '$1 == "ii" && $3 == "qemu" { sub(/:.*/, "", $2); print $2 }'; } |
                sort -u | sed 's|$|/trixie|')
            target=(--allow-downgrades)
        fi
        h3100_log "installing Debian's QEMU for the plugin: ${missing[*]}"
        h3100_as_root apt-get install -y -qq --no-install-recommends "${target[@]}" \
            "${missing[@]}" >/dev/null
    fi
    h3100_log "Debian's QEMU: $(dpkg-query -W -f='${Version}' qemu-system-x86)"
fi

[ "$want_qemu" -eq 1 ] || { h3100_log "done"; exit 0; }

# --- Python's qemu.qmp, which QEMU 11's configure insists on ---------------
# Debian has it only in trixie-backports (Architecture: all): installed
# from there on 13, and on 12 downloaded with a private apt configuration
# and installed from the file.
install_qemu_qmp() {
    local status
    status=$(dpkg-query -W -f='${Status}' python3-qemu-qmp 2>/dev/null || true)
    [ "$status" = "install ok installed" ] && return 0
    if [ "$codename" = bookworm ]; then
        # shellcheck source=scripts/lib/private-apt.sh
        . "$H3100_PROJECT/scripts/lib/private-apt.sh"
        papt_init trixie-backports
        local dir=$H3100_CACHE/apt/trixie-backports/debs
        papt_download "$dir" python3-qemu-qmp
        h3100_log "installing python3-qemu-qmp from trixie-backports"
        h3100_as_root apt-get install -y -qq --no-install-recommends \
            "$dir"/python3-qemu-qmp_*_all.deb >/dev/null
    else
        # (the same file as --plugin's on 11.x: with the deb-src line)
        write_source h3100-trixie-backports.sources "Types: deb deb-src
URIs: $mirror
Suites: trixie-backports
Components: main
Signed-By: $keyring"
        apt_update
        h3100_as_root apt-get install -y -qq --no-install-recommends \
            -t trixie-backports python3-qemu-qmp >/dev/null
    fi
}

# fetch_pool_source DSC SHA256: one upload from the mirror's pool, its .dsc
# checked against SHA256 and its files against the .dsc (dpkg-source)
fetch_pool_source() {
    local dsc=$1 sum=$2 pool=$mirror/pool/main/q/qemu f
    (
        cd "$H3100_CACHE/src"
        wget -q -O "$dsc" "$pool/$dsc" || h3100_die "cannot fetch $pool/$dsc"
        echo "$sum  $dsc" | sha256sum -c --quiet - ||
            h3100_die "$dsc is not the upload lib.sh pins (sha256 differs)"
        while read -r f; do
            wget -q -O "$f" "$pool/$f" || h3100_die "cannot fetch $pool/$f"
        done < <(awk '/^Checksums-Sha256:/ { on = 1; next }
                      /^[^ ]/ { on = 0 } on { print $3 }' "$dsc")
        dpkg-source -x "$dsc"
    ) >"$H3100_CACHE/src/fetch.log" 2>&1
}

# --- QEMU source -----------------------------------------------------------
if [ -n "${QEMU_SRC:-}" ]; then
    h3100_check_qemu_src "$QEMU_SRC"
    h3100_log "using QEMU_SRC=$QEMU_SRC ($(cat "$QEMU_SRC/VERSION"))"
    exit 0
fi
h3100_version_ge "$H3100_QEMU_SERIES" 11.0 && install_qemu_qmp
src=$(h3100_cached_qemu_src)
if [ -n "$src" ]; then
    h3100_log "QEMU source cached: $src ($(cat "$src/VERSION"))"
    exit 0
fi
mkdir -p "$H3100_CACHE/src"
read -r how what sum <<<"${H3100_QEMU_SOURCES[$H3100_QEMU_SERIES]}"
h3100_log "fetching QEMU $H3100_QEMU_SERIES's source ($how $what) into $H3100_CACHE/src"
if [ "$how" = suite ]; then
    apt_update
    (cd "$H3100_CACHE/src" && apt-get source -qq "qemu/$what" >"$H3100_CACHE/src/fetch.log" 2>&1)
else
    fetch_pool_source "$what" "$sum"
fi || {
    tail -n 20 "$H3100_CACHE/src/fetch.log" >&2
    h3100_die "fetching QEMU $H3100_QEMU_SERIES's source failed (log: $H3100_CACHE/src/fetch.log)"
}
src=$(h3100_cached_qemu_src)
[ -n "$src" ] || h3100_die "no QEMU $H3100_QEMU_SERIES source under $H3100_CACHE/src after the fetch"
h3100_check_qemu_src "$src"
h3100_log "QEMU source ready: $src ($(cat "$src/VERSION"))"
