#!/usr/bin/env bash
# Another Debian release's nvme-cli for the guest, with the dynamic loader
# and the shared libraries it runs on, in one directory: downloaded with a
# private apt configuration (scripts/lib/private-apt.sh: the host's apt
# sources, lists and packages are not touched; nothing is installed).
#
#   scripts/guest/guest-nvme-cli.sh SUITE     prints the directory
#
# SUITE: bullseye (nvme-cli 1.12, the generation of RHEL 8's), trixie
# (2.13, the first Debian release whose nvme-cli has the DapuStor plugin,
# `nvme dapustor smart-log-add`) or sid (the newest, 2.16).  The directory
# ($H3100_CACHE/nvme-cli-SUITE/run) holds `nvme`, the release's loader
# `ld-linux-x86-64.so.2` and the libraries by their sonames; run it as
#   DIR/ld-linux-x86-64.so.2 --library-path DIR DIR/nvme VERB ...
# Cached: fetched again only when the suite's nvme-cli has a new version.
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"
# shellcheck source=scripts/lib/private-apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/private-apt.sh"

case ${1:-} in
-h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
bullseye|trixie|sid) suite=$1 ;;
'') h3100_die "which release's nvme-cli? bullseye, trixie or sid (try --help)" ;;
*) h3100_die "unknown suite: $1 (bullseye, trixie or sid; try --help)" ;;
esac

top=$H3100_CACHE/nvme-cli-$suite
run=$top/run
papt_init "$suite"
want=$(apt_cache "${PAPT_OPTS[@]}" policy nvme-cli | awk '/Candidate:/ { print $2 }')
case $want in ''|'(none)') h3100_die "no nvme-cli in $suite" ;; esac
if [ -x "$run/nvme" ] && [ "$(cat "$run/.complete" 2>/dev/null)" = "$want" ]; then
    echo "$run"
    exit 0
fi

# nvme-cli and the libraries it links: the library packages (lib*, zlib1g)
# in the closure of its lib* dependencies
# (not uuid-runtime's tools and their daemons' dependencies)
mapfile -t libs < <(apt_cache "${PAPT_OPTS[@]}" depends nvme-cli |
                    awk '/Depends: lib/ { print $2 }')
mapfile -t pkgs < <(papt_closure "${libs[@]}" | grep -E '^(lib|zlib)')
rm -rf "$top/debs" "$top/root" "$run"
mkdir -p "$top/root" "$run"
h3100_say "downloading nvme-cli $want from $suite and ${#pkgs[@]} library packages"
papt_download "$top/debs" nvme-cli "${pkgs[@]}"
for deb in "$top"/debs/*.deb; do
    dpkg-deb -x "$deb" "$top/root"
done

root=$top/root
libpath=$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu
# the loader itself, not /lib64's link to it (absolute: the host's)
ld=''
for f in "$root"/{usr/,}lib/x86_64-linux-gnu/{ld-linux-x86-64.so.2,ld-2.*.so}; do
    [ -f "$f" ] && [ ! -L "$f" ] && { ld=$f; break; }
done
[ -n "$ld" ] || h3100_die "no dynamic loader in $suite's libc6"
cp -L "$root/usr/sbin/nvme" "$run/"
cp "$ld" "$run/ld-linux-x86-64.so.2"
# every library the release's loader resolves, and all from the release
"$ld" --library-path "$libpath" --list "$root/usr/sbin/nvme" >"$top/ldd.txt" ||
    h3100_die "$suite's loader cannot load its nvme: $(tail -1 "$top/ldd.txt")"
while read -r name _ path _; do
    case $name in */*) continue ;; esac     # the loader: copied above
    case $path in
    "$root"/*) cp -L "$path" "$run/$name" ;;
    *) h3100_die "nvme needs $name from outside $suite's packages ($path)" ;;
    esac
done < <(awk '$2 == "=>"' "$top/ldd.txt")
v=$("$run/ld-linux-x86-64.so.2" --library-path "$run" "$run/nvme" version) ||
    h3100_die "$suite's nvme does not run from $run"
rm -rf "$top/root" "$top/debs"
echo "$want" >"$run/.complete"
h3100_say "${v%%$'\n'*} in $run"
echo "$run"
