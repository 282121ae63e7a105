#!/usr/bin/env bash
# The project's main command (README): install what is needed, build, and
# run the reference datasheet on the drive model for every H3100
# capacity, printing target, model and error for each figure.
#
#   scripts/main.sh                      all four capacities (~15 min, the
#                                        6.4 TB model needs ~16 GiB of RAM)
#   scripts/main.sh --profile h3100-0.8t one capacity
#   scripts/main.sh --json               the table as JSON
#
# Other arguments go to `h3100-sim --datasheet`.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$H3100_PROJECT"
build=${BUILD_DIR:-build}
scripts/install-deps.sh >&2
if [ -f "$build/meson-private/coredata.dat" ]; then
    meson setup --reconfigure "$build" >/dev/null
else
    meson setup "$build" -Ddevice=disabled >/dev/null
fi
meson compile -C "$build" tools/h3100-sim >&2
exec "$build/tools/h3100-sim" --datasheet "$@"
