#!/usr/bin/env bash
# The model's own speed and memory, this tree against an older revision
# in the same run on the same machine: builds REV's h3100-sim beside this
# tree's (the model and the tools only, no QEMU), then runs `h3100-sim
# --bench` on each in turn, --reps times, and prints every run, the
# medians and the ratios (scripts/lib/bench_model.py).  Only figures from
# one run of this script compare: the machine's speed drifts between runs.
#
#   scripts/bench/bench-model.sh [options]
#
#   --base REV      the revision to compare against (default HEAD: the
#                   last commit, against the working tree)
#   --reps N        runs of each (default 3), alternating old and new
#   --profile P     the drive profile (default h3100-0.8t)
#   --precondition LIST
#                   then time this tree's preconditioning of each profile
#                   in LIST (comma-separated, e.g. h3100-3.2t,h3100-6.4t)
#                   to steady state (rand:2), on one core
#   --out DIR       the builds and the table (default
#                   $H3100_CACHE/bench-model)
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

base=HEAD
reps=3
profile=h3100-0.8t
precondition=
out=${H3100_CACHE:-$HOME/.cache/dapustor-h3100}/bench-model

while [ $# -gt 0 ]; do
    case $1 in
    --base) h3100_need "$@"; base=$2; shift ;;
    --reps) h3100_need "$@"; reps=$2; shift ;;
    --profile) h3100_need "$@"; profile=$2; shift ;;
    --precondition) h3100_need "$@"; precondition=$2; shift ;;
    --out) h3100_need "$@"; out=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || h3100_die "--reps: a positive integer"
rev=$(git -C "$H3100_PROJECT" rev-parse --verify --quiet "$base^{commit}") ||
    h3100_die "--base: no revision '$base' in $H3100_PROJECT"

mkdir -p "$out"

# build_sim SRC BUILD: h3100-sim of the tree at SRC, built in BUILD
# (a revision from before the plugin has no plugin option to turn off)
build_sim() {
    local opts=(-Ddevice=disabled -Dtests=disabled --buildtype=release)

    if grep -q "^option('plugin'" "$1/meson_options.txt"; then
        opts+=(-Dplugin=disabled)
    fi
    if [ ! -f "$2/build.ninja" ]; then
        meson setup "$2" "$1" "${opts[@]}" >"$2.setup.log" 2>&1 ||
            h3100_die "meson setup of $1 failed ($2.setup.log)"
    fi
    ninja -C "$2" tools/h3100-sim >"$2.build.log" 2>&1 ||
        h3100_die "building h3100-sim of $1 failed ($2.build.log)"
}

old_src=$out/src-${rev:0:12}
if [ ! -d "$old_src" ]; then
    h3100_say "unpacking ${rev:0:12} into $old_src"
    mkdir -p "$old_src.tmp"
    git -C "$H3100_PROJECT" archive "$rev" | tar -x -C "$old_src.tmp"
    mv "$old_src.tmp" "$old_src"
fi
h3100_say "building h3100-sim of ${rev:0:12} and of this tree (model and tools only)"
build_sim "$old_src" "$out/build-${rev:0:12}"
build_sim "$H3100_PROJECT" "$out/build-tree"
old=$out/build-${rev:0:12}/tools/h3100-sim
new=$out/build-tree/tools/h3100-sim

: >"$out/runs.txt"
for ((i = 1; i <= reps; i++)); do
    for side in old new; do
        bin=$old
        [ "$side" = old ] || bin=$new
        h3100_say "run $i/$reps: $side"
        python3 "$H3100_PROJECT/scripts/lib/bench_model.py" run "$bin" \
            --profile "$profile" --side "$side" --run "$i" >>"$out/runs.txt"
    done
done

{
    python3 "$H3100_PROJECT/scripts/lib/bench_model.py" table "$out/runs.txt" \
        --base "${rev:0:12}" --profile "$profile"
    if [ -n "$precondition" ]; then
        h3100_say "preconditioning ${precondition//,/ } with this tree" >&2
        # shellcheck disable=SC2086 # one argument per profile
        python3 "$H3100_PROJECT/scripts/lib/bench_model.py" precondition \
            "$new" ${precondition//,/ }
    fi
} | tee "$out/table.txt"
