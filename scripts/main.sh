#!/usr/bin/env bash
# The project's main command (README): install what is needed, build QEMU
# with the dapustor-h3100 device, boot a Linux guest on a full-size H3100,
# run MariaDB + sysbench oltp_read_write on it, and print sysbench's
# figures and the drive report (scripts/bench/sql-bench.sh).
#
#   scripts/main.sh [sql-bench options]   e.g. --capacity 3.2T --duration 60
#   scripts/main.sh --compare [sql-compare options]
#                                         the same workload on the H3100
#                                         timing off, fresh and at steady
#                                         state, the H3200 and QEMU's nvme,
#                                         in one table (scripts/bench/sql-compare.sh)
#   scripts/main.sh --qemu stock [...]  the same on the distribution's QEMU
#                                         (bookworm-backports' on Debian 12)
#                                         with the drive as a plugin: no
#                                         QEMU build (scripts/build-plugin.sh)
#   scripts/main.sh --datasheet [h3100-sim options]
#                                         the reference datasheet on the
#                                         model instead (all capacities:
#                                         ~15 min and 16 GiB of RAM;
#                                         --profile h3100-0.8t: 30 s)
#   scripts/main.sh --help                this text; the options of each
#                                         mode are in its script's --help
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/lib.sh"

case ${1:-} in
-h|--help) h3100_usage "$0"; exit 0 ;;
esac

cd "$H3100_PROJECT"
build=${BUILD_DIR:-build}


if [ "${1:-}" = --datasheet ]; then
    shift
    scripts/install-deps.sh >&2
    h3100_meson_setup "$build"
    meson compile -C "$build" tools/h3100-sim >&2
    exec "$build/tools/h3100-sim" --datasheet "$@"
fi

if [ "${1:-}" = --qemu ]; then
    h3100_need "$@"
    [ "$2" = stock ] || h3100_die "--qemu takes 'stock' (the distribution's QEMU with the plugin)"
    shift 2
    scripts/install-deps.sh --plugin >&2
    h3100_meson_setup "$build"         # builds no QEMU: only the targets named
    meson compile -C "$build" tools/h3100-sim tools/h3100-vlog tools/h3100-tlog >&2
    scripts/build-plugin.sh "$build/plugin" >&2
    qemu=$build/plugin/qemu-system-x86_64-h3100
else
    scripts/install-deps.sh --qemu >&2
    h3100_meson_setup "$build" -Ddevice=enabled
    h3100_log "building QEMU with the device (the first build takes a while)" >&2
    meson compile -C "$build" >&2
    qemu=$build/qemu-system-x86_64
fi
export H3100_SIM=${H3100_SIM:-$(cd "$build" && pwd)/tools/h3100-sim}
if [ "${1:-}" = --compare ]; then
    shift
    exec scripts/bench/sql-compare.sh --qemu "$qemu" "$@"
fi
exec scripts/bench/sql-bench.sh --qemu "$qemu" "$@"
