#!/usr/bin/env bash
# Guest install test: Debian installed on the H3100 through the emulated
# drive boots through UEFI into systemd, reboots and powers off
# (scripts/guest/install-debian.sh, which prints the ok / not ok lines).
#
#   tests/guest/test_guest_install.sh [QEMU]
#
# debootstrap needs root: skipped otherwise.  The Debian system is cached
# in $H3100_CACHE/debian/ after the first run (about 80 s to build here).
# Environment: H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

if [ "$(id -u)" != 0 ]; then
    echo "1..0 # SKIP debootstrap needs root"
    exit 77
fi
H3100_QEMU=${1:-${H3100_QEMU:-}} "$GUEST_HERE/../../scripts/guest/install-debian.sh" \
    --out "$tmp/debian" >"$tmp/install.out" 2>"$tmp/install.err"
rc=$?
sed 's/^/# /' "$tmp/install.err"
while IFS= read -r line; do
    case $line in
    'ok - '*) ok "${line#ok - }" ;;
    'not ok - '*) bad "${line#not ok - }" ;;
    esac
done <"$tmp/install.out"
[ "$rc" = 0 ] && [ "$pass" -ge 10 ]
check $? "install-debian.sh ran to its end (rc $rc)"
finish
