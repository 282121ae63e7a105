# shellcheck shell=bash
# Shared by the guest tests (tests/guest/test_guest_*.sh); source it.
#
# Host side: ok/bad/check count results (tests/lib/tap.sh); run_guest boots
# the guest (scripts/guest/guest-run.sh) on a backing file with a script,
# checks that it ran, and passes through the "ok - " / "not ok - " lines the
# guest script printed (counting them), other lines as "# " comments; finish
# prints the total time and 'N passed, N failed' and exits 1 on a failure.
# $tmp is the test's scratch directory (h3100_tmpdir, scripts/lib/lib.sh).
#
# Guest side: GUEST_PRELUDE is a busybox-sh prelude for guest scripts with
# ok/bad/chk, smart NAME (a number from nvme smart-log -o json), ctrl KEY
# (an nvme id-ctrl field), rd_sum LBA4K COUNT4K (SHA-256 of O_DIRECT reads),
# zero_sum COUNT4K, load_kmods (insmod /etc/h3100-kmods: xfs) and
# power_button (prints @power-button, then waits for the ACPI power button:
# `virsh shutdown`, QMP system_powerdown).
# shellcheck disable=SC2034  # variables are used by the sourcing tests
set -uo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/lib.sh"
case ${1:-} in
-h|--help) h3100_usage "$0"; exit 0 ;;  # the test's header comment
-*) h3100_die "unknown option: $1 (the argument is a QEMU binary; try --help)" ;;
esac
if [ "${H3100_GUEST_TESTS:-1}" = 0 ]; then
    echo "1..0 # SKIP H3100_GUEST_TESTS=0"
    exit 77
fi
GUEST_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GUEST_RUN=$GUEST_HERE/../../scripts/guest/guest-run.sh
qemu_args=()
[ $# -ge 1 ] && [ -n "$1" ] && qemu_args=(--qemu "$1")

h3100_tmpdir gtest
# shellcheck source=tests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
t_start=$SECONDS
finish() {
    echo "# total $((SECONDS - t_start)) s"
    tap_summary
    exit
}

# run_guest LABEL DISK SCRIPT [guest-run options...]: boot, run SCRIPT,
# relay its ok/not ok lines.  Returns the guest's exit status; the output
# is kept in $tmp/LABEL.out.
run_guest() {
    local label=$1 disk=$2 script=$3 rc start line
    shift 3
    start=$SECONDS
    # the script before the options: they may end with -- QEMU-ARGS
    "$GUEST_RUN" "${qemu_args[@]}" --disk "$disk" --timeout "${GUEST_TIMEOUT:-240}" \
        "$script" "$@" >"$tmp/$label.out" 2>"$tmp/$label.err"
    rc=$?
    # 0 and 1 (a guest check failed) mean the script ran to its end, if
    # guest-run.sh says so (it also exits 1 on a usage error)
    if [ "$rc" -le 1 ] && grep -qE '^\[guest-run\] (guest finished|QEMU (killed|exited after))' "$tmp/$label.err"; then
        ok "$label: guest ran the script ($((SECONDS - start)) s)"
    else
        bad "$label: guest ran the script ($((SECONDS - start)) s, exit $rc)"
        sed 's/^/# /' "$tmp/$label.err"
    fi
    while IFS= read -r line; do
        case $line in
        'ok - '*) ok "$label: ${line#ok - }" ;;
        'not ok - '*) bad "$label: ${line#not ok - }" ;;
        *) echo "# $line" ;;
        esac
    done <"$tmp/$label.out"
    return "$rc"
}

GUEST_PRELUDE=$(cat <<'PRELUDE'
ok()  { echo "ok - $*"; }
bad() { GUEST_FAIL=1; echo "not ok - $*"; }
chk() { r=$1; shift; if [ "$r" = 0 ]; then ok "$@"; else bad "$@"; fi; }
GUEST_FAIL=0
smart() { nvme smart-log -o json /dev/nvme0 | tr -d ' ",' | awk -F: -v k="$1" '!d && $1 == k { print $2; d = 1 }'; }
ctrl() { nvme id-ctrl /dev/nvme0 | awk -F' *: ' -v k="$1" '!d && $1 == k { print $2; d = 1 }' | sed 's/ *$//'; }
rd_sum() { dd if=/dev/nvme0n1 bs=4096 skip="$1" count="$2" iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1; }
zero_sum() { dd if=/dev/zero bs=4096 count="$1" 2>/dev/null | sha256sum | cut -d' ' -f1; }
load_kmods() { for m in $(cat /etc/h3100-kmods 2>/dev/null); do insmod "$m" || return 1; done; }
power_button() {
    for m in $(grep -E '/(evdev|button)\.ko$' /etc/h3100-kmods); do insmod "$m" 2>/dev/null; done
    for e in /sys/class/input/event*; do
        [ "$(cat "$e/device/name" 2>/dev/null)" = "Power Button" ] || continue
        echo "@power-button"
        dd if="/dev/input/${e##*/}" of=/dev/null bs=24 count=1 2>/dev/null
        return
    done
    return 1
}
PRELUDE
)
