#!/usr/bin/env bash
# The plugin on Debian 13, in a private trixie root (docs/guide/plugin.md,
# *Debian 13*): Debian's own QEMU of the series installed inside the root,
# the plugin built there for it, and its tests run there.
#
#   scripts/campaign/plugin-debian13.sh [--series 11.1|10.0] [--root DIR]
#                                       [--build DIR]
#
#   --series S   11.1 (default): trixie-backports' qemu-system-x86 11.1.x;
#                10.0: trixie's own 10.0.x
#   --root DIR   the root (default $H3100_CACHE/debian13/root), made with
#                debootstrap --variant=minbase trixie when missing, kept
#   --build DIR  the host's build directory (default build): its device
#                test programs and in-tree qemu-system-x86_64 run in the
#                root (glibc 2.36 programs on trixie's 2.41)
#
# Steps, each with a progress line: the root; /proc, /sys, /dev, this
# checkout and $H3100_CACHE bound into it at the same paths (unbound at
# the end); inside it, scripts/install-deps.sh --plugin with
# H3100_QEMU_SERIES=S (its apt sources, its packages: nothing is installed
# on the host, whose apt is never used); scripts/build-plugin.sh
# --with-qtest --deb into BUILD/plugin-debian13-S (where libvirt's QEMU,
# user nobody, can read it: not under /root); then the
# plugin_boundary_tests device suites (tests/device/meson.build) with
# QTEST_QEMU_BINARY=OUTDIR/test/qemu-system-x86_64,
# tests/plugin/test_plugin.sh, tests/guest/test_guest_smoke.sh and
# tests/guest/test_guest_libvirt.sh (a private libvirtd, stopped after)
# with the wrapper.  The figures: $H3100_CACHE/debian13/result-S.txt and
# the last lines.  Exit 1 when a step failed.  As root (chroot, mount).
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

series=11.1
root=''
build=$H3100_BUILD
while [ $# -gt 0 ]; do
    case $1 in
    --series) h3100_need "$@"; series=$2; shift ;;
    --root) h3100_need "$@"; root=$2; shift ;;
    --build) h3100_need "$@"; build=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
case $series in
10.0|11.1) ;;
*) h3100_die "--series $series: 10.0 or 11.1 (the QEMU series Debian 13 ships)" ;;
esac
[ "$(id -u)" = 0 ] || h3100_die "run as root (debootstrap, mount, chroot)"
root=${root:-$H3100_CACHE/debian13/root}
build=$(cd "$build" 2>/dev/null && pwd) ||
    h3100_die "no build directory $build (meson setup build)"
mapfile -t suites < <(python3 - "$H3100_PROJECT/tests/device/meson.build" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r'plugin_boundary_tests\s*=\s*\[(.*?)\]', text, re.S)
print('\n'.join(re.findall(r"'([a-z_]+)'", m.group(1)) if m else []))
PY
)
[ "${#suites[@]}" -gt 0 ] || h3100_die "no plugin_boundary_tests in tests/device/meson.build"
for t in "${suites[@]}"; do
    [ -x "$build/tests/device/test-device-$t" ] ||
        h3100_die "no $build/tests/device/test-device-$t (ninja -C $build tests/device/test-device-$t)"
done
[ -x "$build/qemu-system-x86_64" ] ||
    h3100_die "no $build/qemu-system-x86_64 (ninja -C $build qemu-system-x86_64)"

top=$H3100_CACHE/debian13
out=$build/plugin-debian13-$series
result=$top/result-$series.txt
mkdir -p "$top"
start=$SECONDS
step() { h3100_log "[$(( (SECONDS - start) / 60 )) min] $*"; }

# --- the root ------------------------------------------------------------------
if [ ! -x "$root/usr/bin/apt-get" ]; then
    step "debootstrap --variant=minbase trixie $root (log: $top/debootstrap.log)"
    rm -rf "$root.tmp"
    debootstrap --variant=minbase trixie "$root.tmp" http://deb.debian.org/debian \
        >"$top/debootstrap.log" 2>&1 ||
        h3100_die "debootstrap failed: $(tail -n 1 "$top/debootstrap.log")"
    mv "$root.tmp" "$root"
fi
step "root: $root ($(sed -n 's/^PRETTY_NAME="\(.*\)"$/\1/p' "$root/etc/os-release"))"

mounts=()
unbind() {
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
        umount -R "${mounts[$i]}" 2>/dev/null || umount -lR "${mounts[$i]}" 2>/dev/null || true
    done
    mounts=()
}
trap unbind EXIT
# bind SRC: SRC at the same path in the root (recursive, kept from
# propagating back to the host)
bind() {
    mkdir -p "$root$1"
    mountpoint -q "$root$1" && return 0
    mount --rbind "$1" "$root$1"
    mount --make-rslave "$root$1"
    mounts+=("$root$1")
}
for d in /proc /sys /dev "$H3100_PROJECT" "$H3100_CACHE"; do bind "$d"; done
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# in_root CMD...: CMD in the root, as root, in this checkout
in_root() {
    # shellcheck disable=SC2016 # expanded by the root's bash
    chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        H3100_CACHE="$H3100_CACHE" H3100_QEMU_SERIES="$series" TMPDIR=/tmp \
        /bin/bash -c 'cd "$1" && shift && exec "$@"' in_root "$H3100_PROJECT" "$@"
}

declare -A status=()
order=()
# record NAME RC SECONDS: 0 pass, 77 skip, else fail
record() {
    order+=("$1")
    case $2 in 0) status[$1]="pass $3 s" ;; 77) status[$1]="skip $3 s" ;;
    *) status[$1]="FAIL (exit $2) $3 s" ;; esac
    step "$1: ${status[$1]}"
}
# run NAME LOG CMD...: CMD in the root, its output in LOG
run() {
    local name=$1 log=$2 t=$SECONDS rc=0
    shift 2
    in_root "$@" >"$log" 2>&1 || rc=$?
    record "$name" "$rc" $((SECONDS - t))
    [ "$rc" = 0 ] || [ "$rc" = 77 ] || tail -n 5 "$log" | sed 's/^/    /'
}
logs=$top/logs-$series
rm -rf "$logs"
mkdir -p "$logs"

step "install-deps.sh --plugin with H3100_QEMU_SERIES=$series in the root (log: $logs/install-deps.log)"
run install-deps "$logs/install-deps.log" scripts/install-deps.sh --plugin
[ "${status[install-deps]%% *}" = pass ] || h3100_die "install-deps.sh failed in the root"
# shellcheck disable=SC2016 # dpkg-query's format
qver=$(chroot "$root" dpkg-query -W -f='${Version}' qemu-system-x86)
step "the root's qemu-system-x86: $qver"
case ${qver#*:} in "$series".*) ;; *) h3100_die "the root's QEMU is $qver, not $series.x" ;; esac

step "build-plugin.sh --with-qtest --deb $out (log: $logs/build-plugin.log)"
run build-plugin "$logs/build-plugin.log" scripts/build-plugin.sh --with-qtest --deb "$out"
grep '^\[h3100\] warning' "$logs/build-plugin.log" | sed 's/^/    /' || true
# a plugin refused (the nearest source not proven): recorded, no tests
built=0
if [ "${status[build-plugin]%% *}" = pass ]; then
    built=1
    sed -n 's/^source: /    source: /p' "$out/BUILD-INFO"
fi

for t in "${suites[@]}"; do
    [ "$built" = 1 ] || break
    run "plugin-device-$t" "$logs/device-$t.log" \
        env QTEST_QEMU_BINARY="$out/test/qemu-system-x86_64" CK_DEFAULT_TIMEOUT=60 \
        "$build/tests/device/test-device-$t"
done
if [ "$built" = 1 ]; then
    # the host's in-tree QEMU links bookworm's libaio.so.1, which trixie
    # renamed (libaio.so.1t64): that one library, copied, for it alone
    hostlibs=$top/hostlibs
    rm -rf "$hostlibs"
    mkdir -p "$hostlibs"
    ldd "$build/qemu-system-x86_64" | awk '$1 ~ /^libaio\.so/ && $3 ~ /^\// { print $1, $3 }' |
        while read -r name path; do cp -L "$path" "$hostlibs/$name"; done
    run plugin-loader "$logs/plugin-loader.log" env H3100_INTREE_LIBS="$hostlibs" \
        tests/plugin/test_plugin.sh "$out" "$build/qemu-system-x86_64"
    run plugin-guest-smoke "$logs/guest-smoke.log" \
        tests/guest/test_guest_smoke.sh "$out/qemu-system-x86_64-h3100"
    run plugin-guest-libvirt "$logs/guest-libvirt.log" \
        tests/guest/test_guest_libvirt.sh "$out/qemu-system-x86_64-h3100"
fi
unbind

for n in "${order[@]}"; do printf '%s\t%s\n' "$n" "${status[$n]}"; done >"$logs/status"
python3 - "$result" "$series" "$qver" \
    "$(git -C "$H3100_PROJECT" describe --always --dirty)" "$logs" <<'PY'
import datetime, os, re, sys
res, series, qver, commit, logs = sys.argv[1:6]
st = [l.rstrip('\n').split('\t') for l in open(os.path.join(logs, 'status'))]
checks = 0
# the checks: Check's "Checks: N" lines, the TAP scripts' "N passed, N failed"
for f in sorted(os.listdir(logs)):
    text = open(os.path.join(logs, f), errors='replace').read()
    checks += sum(int(n) for n in re.findall(r'Checks: (\d+), Failures', text))
    for a, b in re.findall(r'^(\d+) passed, (\d+) failed', text, re.M):
        checks += int(a) + int(b)
passed = sum(s.startswith('pass') for _, s in st)
failed = sum(s.startswith('FAIL') for _, s in st)
now = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')
lines = ['%s  commit %s  Debian 13 root  qemu-system-x86 %s (series %s)'
         % (now, commit, qver, series)]
lines += ['  %-24s %s' % (n, s) for n, s in st]
lines.append('%d steps passed, %d failed, %d skipped; %d checks in the logs'
             % (passed, failed, len(st) - passed - failed, checks))
open(res, 'w').write('\n'.join(lines) + '\n')
print('\n'.join(lines))
PY
h3100_log "done in $(( (SECONDS - start) / 60 )) min: $result"
grep -q FAIL "$result" && exit 1
exit 0
