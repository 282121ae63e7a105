#!/usr/bin/env bash
# The model's own speed and memory, this tree against an older revision
# in the same run on the same machine: builds REV's
# h3100-sim beside this tree's (the model and the tools only, no QEMU),
# then runs `h3100-sim --bench` on each in turn, --reps times, and prints
# every run, the medians and the ratios.  Only figures from one run of
# this script compare: the machine's speed drifts between runs.
#
#   scripts/bench/bench-model.sh [options]
#
#   --base REV      the revision to compare against (default HEAD: the
#                   last commit, against the working tree)
#   --reps N        runs of each (default 3), alternating old and new
#   --profile P     the drive profile (default h3100-0.8t)
#   --out DIR       the builds and the table (default
#                   $H3100_CACHE/bench-model)
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

base=HEAD
reps=3
profile=h3100-0.8t
out=${H3100_CACHE:-$HOME/.cache/dapustor-h3100}/bench-model

while [ $# -gt 0 ]; do
    case $1 in
    --base) h3100_need "$@"; base=$2; shift ;;
    --reps) h3100_need "$@"; reps=$2; shift ;;
    --profile) h3100_need "$@"; profile=$2; shift ;;
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
build_sim() {
    if [ ! -f "$2/build.ninja" ]; then
        meson setup "$2" "$1" -Ddevice=disabled -Dplugin=disabled \
            -Dtests=disabled --buildtype=release >"$2.setup.log" 2>&1 ||
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
        "$bin" --bench --profile "$profile" 2>/dev/null |
            awk -v s="$side" -v i="$i" -F': ' '
                $1 == "timed_4k_commands_per_host_sec" { t = $2 + 0 }
                $1 == "ftl_fastforward_page_writes_per_sec" { f = $2 + 0 }
                $1 == "memory_per_written_page" { m = $2 + 0 }
                $1 == "timed_run_waf" { w = $2 + 0 }
                END { printf "%s %d %.3f %.3f %.2f %.3f\n", s, i, t, f, m, w }' >>"$out/runs.txt"
    done
done

{
    printf 'h3100-sim --bench --profile %s, %d runs each, alternating\n\n' "$profile" "$reps"
    printf '%-5s %4s %14s %14s %12s %8s\n' side run 'timed M/s' 'ftl M/s' 'B/page' WAF
    awk '{ printf "%-5s %4d %14.3f %14.3f %12.2f %8.3f\n", $1, $2, $3, $4, $5, $6 }' "$out/runs.txt"
    # medians per side, then new / old
    for side in old new; do
        awk -v s="$side" '$1 == s' "$out/runs.txt" | sort -k3,3n |
            awk -v s="$side" '{ t[NR] = $3 } END { printf "%s %.3f\n", s, t[int((NR + 1) / 2)] }'
    done | awk -v r="${rev:0:12}" '
        { m[$1] = $2 }
        END {
            printf "\nmedian timed 4 KiB commands per host second: %s %.3f M, this tree %.3f M: %.2fx\n",
                r, m["old"], m["new"], (m["old"] > 0 ? m["new"] / m["old"] : 0)
        }'
    awk '$1 == "new" { print $5; exit }' "$out/runs.txt" |
        awk '{ printf "map memory per written page: %.2f B (a full 6.4 TB drive: %.1f GiB)\n",
            $1, $1 * 6.4e12 / 4096 / 2^30 }'
} | tee "$out/table.txt"
