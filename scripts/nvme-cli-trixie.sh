#!/usr/bin/env bash
# Debian 13 (trixie)'s nvme-cli, which has the DapuStor plugin (`nvme
# dapustor smart-log-add`; Debian 12's nvme-cli 2.3 has not), with the
# libraries it runs on, for the guest: downloaded with a private apt
# configuration (the host's apt sources, lists and packages are not
# touched; nothing is installed) and unpacked into one directory:
#
#   scripts/nvme-cli-trixie.sh        prints the directory
#
# The directory ($H3100_CACHE/nvme-cli-trixie/run) holds `nvme`, trixie's
# dynamic loader `ld-linux-x86-64.so.2` and the shared libraries by their
# sonames; run it as
#   DIR/ld-linux-x86-64.so.2 --library-path DIR DIR/nvme dapustor ...
# Cached: a second call downloads nothing.  Needs the host's Debian mirror
# (as apt-cache policy names it; deb.debian.org without one).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case ${1:-} in
-h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
'') ;;
*) h3100_die "unknown option: $1 (try --help)" ;;
esac

# the packages whose files nvme needs (checked below: nothing from the host)
PKGS=(nvme-cli libnvme1t64 libc6 libjson-c5 libssl3t64 libkeyutils1
      zlib1g libzstd1)
LIBS=(libnvme.so.1 libnvme-mi.so.1 libjson-c.so.5 libc.so.6 libcrypto.so.3
      libkeyutils.so.1 libz.so.1 libzstd.so.1)

top=$H3100_CACHE/nvme-cli-trixie
run=$top/run
if [ -x "$run/nvme" ] && [ -f "$run/.complete" ]; then
    echo "$run"
    exit 0
fi
say() { printf '[nvme-cli-trixie] %s\n' "$*" >&2; }
rm -rf "$top"
mkdir -p "$top/apt/lists/partial" "$top/apt/cache/archives/partial" \
         "$top/apt/parts" "$top/debs" "$top/root" "$run"
# the host's Debian mirror (the one its release comes from), or Debian's
mirror=$(apt-cache policy 2>/dev/null | awk '$2 ~ /^https?:\/\// && $3 ~ /^[a-z]+\/main$/ &&
    $3 !~ /-(security|updates|backports)\// { print $2; exit }')
echo "deb ${mirror:-http://deb.debian.org/debian} trixie main" >"$top/apt/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$top/apt/sources.list"
          -o "Dir::Etc::SourceParts=$top/apt/parts"
          -o "Dir::State::Lists=$top/apt/lists"
          -o "Dir::Cache=$top/apt/cache" -o Debug::NoLocking=1)
# As root, apt's _apt user cannot write into our private directories.
[ "$(id -u)" -ne 0 ] || apt_opts+=(-o APT::Sandbox::User=root)

say "fetching trixie's package list (about 10 MB)"
apt-get "${apt_opts[@]}" update >"$top/apt.log" 2>&1 ||
    h3100_die "apt-get update for trixie failed: $(tail -1 "$top/apt.log")"
say "downloading ${PKGS[*]}"
(cd "$top/debs" && apt-get "${apt_opts[@]}" download "${PKGS[@]}") >>"$top/apt.log" 2>&1 ||
    h3100_die "apt-get download failed: $(tail -1 "$top/apt.log")"
for deb in "$top"/debs/*.deb; do
    dpkg-deb -x "$deb" "$top/root"
done

lib=$top/root/usr/lib/x86_64-linux-gnu
cp -L "$top/root/usr/sbin/nvme" "$top/root/usr/lib64/ld-linux-x86-64.so.2" "$run/"
for l in "${LIBS[@]}"; do
    cp -L "$lib/$l" "$run/" || h3100_die "no $l in ${PKGS[*]}"
done
# every library the loader resolves must be one of ours
if "$run/ld-linux-x86-64.so.2" --library-path "$run" --list "$run/nvme" |
        awk '/=>/ && $3 !~ "^'"$run"'/" && $1 != "linux-vdso.so.1" { bad = 1; print } END { exit !bad }' >&2; then
    h3100_die "nvme needs a library from outside $run (above)"
fi
"$run/ld-linux-x86-64.so.2" --library-path "$run" "$run/nvme" dapustor help >/dev/null 2>&1 ||
    h3100_die "trixie's nvme has no dapustor plugin"
rm -rf "$top/root" "$top/apt/cache"
touch "$run/.complete"
v=$("$run/ld-linux-x86-64.so.2" --library-path "$run" "$run/nvme" version)
say "${v%%$'\n'*} in $run"
echo "$run"
