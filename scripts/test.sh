#!/usr/bin/env bash
# The project's test command (README): install what is needed, build the
# model library, h3100-sim, QEMU with the dapustor-h3100 device and the
# plugin for Debian's QEMU, and run every test (unit tests of the model,
# device tests through qtest, guest tests, the plugin's suite).
#
#   scripts/test.sh                  everything but the plugin-extra suite
#   scripts/test.sh --full           everything: also the device tests that
#                                    plugin-extra repeats on the plugin
#   scripts/test.sh --no-device      the model's unit tests only (no QEMU,
#                                    no plugin)
#   scripts/test.sh --quick          the edit-build-test loop: the model's
#                                    unit tests, the CLI, docs and device
#                                    suites; no guest boots, no plugin
#   scripts/test.sh --qemu-series 11.1
#                                    the same on the device built on QEMU
#                                    11.1 (in ./build-11.1), without the
#                                    plugin: it follows the installed QEMU
#                                    (docs/guide/qemu-series.md)
#   scripts/test.sh -- ARGS          extra arguments for `meson test`
#
# Environment: BUILD_DIR (default ./build, ./build-SERIES for another
# series), QEMU_SRC (a QEMU 10.0+ tree to use instead of Debian's source
# package), H3100_CACHE.
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/lib.sh"

device=enabled
plugin=enabled
extra=()
suites=(--no-suite plugin-extra)
while [ $# -gt 0 ]; do
    case $1 in
    --no-device) device=disabled; plugin=disabled ;;
    --full) suites=() ;;
    --qemu-series) h3100_need "$@"; shift; H3100_QEMU_SERIES=$1 ;;
    --quick) plugin=disabled
             suites=(--suite unit --suite cli --suite docs --suite device) ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done

h3100_check_series
export H3100_QEMU_SERIES
default_build=build
if [ "$H3100_QEMU_SERIES" != 10.0 ]; then
    default_build=build-$H3100_QEMU_SERIES
    plugin=disabled
fi

cd "$H3100_PROJECT"
build=${BUILD_DIR:-$default_build}
if [ "$plugin" = enabled ]; then
    scripts/install-deps.sh --plugin
elif [ "$device" = enabled ]; then
    scripts/install-deps.sh --qemu
else
    scripts/install-deps.sh
fi

h3100_meson_setup "$build" -Ddevice="$device" -Dplugin="$plugin" \
    -Dqemu_series="$H3100_QEMU_SERIES"
h3100_log "building (QEMU's first build takes a while; later ones are incremental)"
meson compile -C "$build"

status=0
# Tests that may share the machine (unit, CLI, docs) run side by side;
# the device, guest and plugin tests are is_parallel: false, each alone
# (their meson.build says why).
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" \
    "${suites[@]}" "${extra[@]}" ||
    status=$?

# One plain summary line, whatever runner reads this output.
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
ok = bad = skip = 0
with open(sys.argv[1]) as f:
    for line in f:
        r = json.loads(line).get("result", "")
        if r in ("OK", "EXPECTEDFAIL"):
            ok += 1
        elif r == "SKIP":
            skip += 1
        else:
            bad += 1
print(f"tests: {ok} passed, {bad} failed, {skip} skipped")
PY
exit $status
