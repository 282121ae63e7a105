#!/usr/bin/env bash
# The same SQL workload on several drives, side by side:
# runs scripts/bench/sql-bench.sh once per configuration on one prepared
# database, under deterministic virtual time, and prints one table: TPS,
# sysbench's latencies and what the drive did in each run, then plots TPS
# over time per configuration.
#
#   scripts/bench/sql-compare.sh [--configs LIST] [--out DIR] [sql-bench options]
#
#   --configs LIST   comma-separated, in order (default all five):
#                    off     the H3100 as prepared, its timing off (commands
#                            complete as soon as their data has moved)
#                    fresh   the H3100 as prepared (only the database written)
#                    steady  the H3100 preconditioned to steady state
#                    h3200   the H3200 (same NAND, less over-provisioning),
#                            preconditioned to steady state
#                    nvme    QEMU's own nvme device on the same image
#   --out DIR        where each run's report, its KEY=VALUE summary, the
#                    table and the plot go (default $H3100_CACHE/sql-compare)
#
# Every other option goes to sql-bench.sh (workload, threads, duration,
# --icount-shift ...); the defaults are sql-bench.sh's (its prepared
# database, under -icount shift 1), with --report-interval 2 unless given.
# Five runs of the default workload take about 30 minutes on 2 cores, the
# first time 10 more (the database, and the two preconditioned states).
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

configs=off,fresh,steady,h3200,nvme
out=$H3100_CACHE/sql-compare
bench=()
have_ri=0
while [ $# -gt 0 ]; do
    case $1 in
    --configs) configs=$2; shift ;;
    --out) out=$2; shift ;;
    --drive|--state|--timing|--summary|--keep-disk)
        h3100_die "$1 is chosen per configuration here (--configs)" ;;
    --report-interval) have_ri=1; bench+=("$1" "$2"); shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) bench+=("$1") ;;
    esac
    shift
done
[ "$have_ri" = 1 ] || bench+=(--report-interval 2)
IFS=, read -ra list <<<"$configs"
[ "${#list[@]}" -gt 0 ] || h3100_die "--configs: an empty list"
# config_args NAME: sql-bench.sh's options for one configuration
config_args() {
    case $1 in
    off) echo --drive h3100 --state fresh --timing off ;;
    fresh) echo --drive h3100 --state fresh --timing on ;;
    steady) echo --drive h3100 --state steady --timing on ;;
    h3200) echo --drive h3200 --state steady --timing on ;;
    nvme) echo --drive qemu-nvme --state fresh ;;
    *) return 1 ;;
    esac
}
# config_label NAME: the table's first column
config_label() {
    case $1 in
    off) echo "H3100 timing off" ;;
    fresh) echo "H3100 fresh" ;;
    steady) echo "H3100 steady" ;;
    h3200) echo "H3200 steady" ;;
    nvme) echo "QEMU nvme" ;;
    esac
}
for c in "${list[@]}"; do
    config_args "$c" >/dev/null ||
        h3100_die "--configs: unknown '$c' (off, fresh, steady, h3200, nvme)"
done
mkdir -p "$out"

i=0
for c in "${list[@]}"; do
    i=$((i + 1))
    h3100_say "$i of ${#list[@]}: $(config_label "$c")"
    rm -f "$out/$c.summary"
    # shellcheck disable=SC2046 # config_args gives separate words
    "$H3100_PROJECT/scripts/bench/sql-bench.sh" "${bench[@]}" $(config_args "$c") \
        --summary "$out/$c.summary" >"$out/$c.txt" ||
        h3100_die "$(config_label "$c") failed: $out/$c.txt and the messages above"
    h3100_say "$(config_label "$c"): $(awk -F= '$1 == "tps" { print $2 " TPS" }' "$out/$c.summary")"
done

# sv CONFIG KEY: a value from a run's summary
sv() { awk -F= -v k="$2" '$1 == k { sub(/^[^=]*=/, ""); print; exit }' "$out/$1.summary"; }
{
    printf '=== %s, the same prepared database on each drive ===\n' \
        "$(sv "${list[0]}" workload)"
    grep -E '^(guest|workload) ' "$out/${list[0]}.txt"
    printf '\n%-17s %8s %7s %7s %7s | %7s %5s %6s %6s %7s %7s %5s %7s %6s\n' \
        configuration TPS 'avg ms' 'p95 ms' 'p99 ms' IOPS 'rd %' 'rd us' 'wr us' \
        'dev us' 'dev p99' WAF reclaim 'wall s'
    for c in "${list[@]}"; do
        printf '%-17s %8s %7s %7s %7s | %7s %5s %6s %6s %7s %7s %5s %7s %6s\n' \
            "$(config_label "$c")" "$(sv "$c" tps)" "$(sv "$c" lat_avg_ms)" \
            "$(sv "$c" lat_p95_ms)" "$(sv "$c" lat_p99_ms)" "$(sv "$c" iops)" \
            "$(sv "$c" read_pct)" "$(sv "$c" read_lat_us)" "$(sv "$c" write_lat_us)" \
            "$(sv "$c" dev_lat_mean_us)" "$(sv "$c" dev_lat_p99_us)" "$(sv "$c" waf)" \
            "$(sv "$c" reclaim_runs)" "$(sv "$c" wall_s)"
    done
    printf '\nLeft: sysbench in the guest (virtual time).  Right: the drive during the run:\n'
    printf 'IOPS and read share, mean read/write latency seen by the guest block layer;\n'
    printf 'dev us/p99: the device'\''s own latency (telemetry, whole session; H3100/H3200 only);\n'
    printf 'WAF and reclaim runs from the model log D0h before and after the run.\n'
    printf 'Each run'\''s report: %s/CONFIG.txt\n' "$out"
} | tee "$out/compare.txt"

# TPS over time, one line per configuration
for c in "${list[@]}"; do
    printf '# %s\n' "$(config_label "$c")"
    sv "$c" tps_series | tr ',' '\n' | tr ':' ' '
    printf '\n\n'
done >"$out/tps.dat"
gnuplot=${H3100_GNUPLOT:-gnuplot}
if command -v "$gnuplot" >/dev/null 2>&1; then
    {
        printf 'set terminal pngcairo size 1000,600 noenhanced\n'
        printf 'set output "%s/sql-compare-tps.png"\n' "$out"
        printf 'set title "%s: TPS over the run (virtual time)"\n' "$(sv "${list[0]}" workload)"
        printf 'set xlabel "seconds into the run"\nset ylabel "transactions / s"\n'
        printf 'set yrange [0:*]\nset grid\nset key outside right\n'
        printf 'plot'
        j=0
        for c in "${list[@]}"; do
            printf '%s "%s/tps.dat" index %d with linespoints title "%s"' \
                "$([ $j = 0 ] || echo ,)" "$out" "$j" "$(config_label "$c")"
            j=$((j + 1))
        done
        printf '\n'
    } >"$out/tps.gp"
    if "$gnuplot" "$out/tps.gp" 2>"$out/tps.gp.err"; then
        printf '(plot: %s/sql-compare-tps.png)\n' "$out"
    else
        h3100_say "gnuplot failed: $(head -n 3 "$out/tps.gp.err")"
    fi
fi
