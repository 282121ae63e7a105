#!/usr/bin/env bash
# Read latency against wear, in the simulator (docs/design/calibration.md, "Ageing").
#
#   scripts/bench/ageing.sh [--profile h3100-0.8t] [--runtime S] [--seed N] [-o DIR]
#
# For each wear (percent of the rated P/E cycles: 0 20 40 60 80 90 100 110
# 120 130 140) and each data age (0 and 90 days): h3100-sim on the
# profile's real geometry, worn and filled at FTL speed (--precondition
# wear:PCT+seq, --set age_days=D), then 4 KiB random reads at queue depth
# 1 for --runtime simulated seconds.  Writes DIR/ageing.tsv (wear, age,
# mean / p50 / p99 / p99.9 / max latency in us, reads retried, soft
# decodes, uncorrectable reads, IOPS) and DIR/ageing-read-latency.png.
# Prints a line per run on stderr.
#
#   --profile P     drive profile (default h3100-0.8t)
#   --runtime S     simulated seconds of reads per point (default 2)
#   --seed N        random seed (default 1)
#   -o DIR          output directory (default ./ageing-PROFILE)
#   --sim PATH      h3100-sim (default build/tools/h3100-sim, or $H3100_SIM)
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

profile=h3100-0.8t
runtime=2
seed=1
outdir=''
sim=${H3100_SIM:-$H3100_BUILD/tools/h3100-sim}
while [ $# -gt 0 ]; do
    case $1 in
    --profile) h3100_need "$@"; profile=$2; shift ;;
    --runtime) h3100_need "$@"; runtime=$2; shift ;;
    --seed) h3100_need "$@"; seed=$2; shift ;;
    -o) h3100_need "$@"; outdir=$2; shift ;;
    --sim) h3100_need "$@"; sim=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
outdir=${outdir:-ageing-$profile}
[[ $runtime =~ ^[0-9]+([.][0-9]+)?$ ]] ||
    h3100_die "--runtime: simulated seconds, e.g. 2"
[[ $seed =~ ^[0-9]+$ ]] || h3100_die "--seed: a non-negative integer"
[ -x "$sim" ] || h3100_die "no h3100-sim at $sim (meson compile -C build, or --sim)"
command -v gnuplot >/dev/null || h3100_die "gnuplot is needed (apt-get install gnuplot-nox)"
mkdir -p "$outdir" || h3100_die "cannot create $outdir"

tsv=$outdir/ageing.tsv
printf '# wear_pct\tage_days\tmean_us\tp50_us\tp99_us\tp999_us\tmax_us\tretried\tsoft\tuncorrectable\tiops\n' >"$tsv"
for age in 0 90; do
    for wear in 0 20 40 60 80 90 100 110 120 130 140; do
        pre=seq
        [ "$wear" -gt 0 ] && pre=wear:$wear+seq
        json=$("$sim" --profile "$profile" --seed "$seed" --precondition "$pre" \
                      --set "age_days=$age" --rw randread --bs 4k --iodepth 1 \
                      --runtime "$runtime" --json 2>/dev/null) ||
            h3100_die "h3100-sim failed at wear $wear%, age $age days"
        python3 -c '
import json, sys
d = json.loads(sys.argv[3])
l = d["read_lat"]
print("\t".join(str(v) for v in [sys.argv[1], sys.argv[2], l["mean_us"],
      l["p50_us"], l["p99_us"], l["p999_us"], l["max_us"], d["ecc_retries"],
      d["ecc_soft_decodes"], d["ecc_host_uncorrectable"], d["iops"]]))
' "$wear" "$age" "$json" >>"$tsv"
        tail -n 1 "$tsv" | awk -F'\t' '{ printf "[h3100] wear %s%%, %s days: p99 %s us, p99.9 %s us, %s uncorrectable\n", $1, $2, $5, $6, $10 }' >&2
    done
done

gnuplot <<GP
set terminal pngcairo size 900,560 font ",10"
set output "$outdir/ageing-read-latency.png"
set title "$profile, 4 KiB random read, QD1: latency against wear"
set xlabel "wear (% of the rated P/E cycles)"
set ylabel "latency (us)"
set logscale y
set yrange [50:*]
set key top left
set grid
plot "$tsv" using 1:(\$2 == 0 ? \$4 : 1/0) with linespoints title "p50, new data", \
     "$tsv" using 1:(\$2 == 0 ? \$5 : 1/0) with linespoints title "p99, new data", \
     "$tsv" using 1:(\$2 == 0 ? \$6 : 1/0) with linespoints title "p99.9, new data", \
     "$tsv" using 1:(\$2 == 90 ? \$4 : 1/0) with linespoints dt 2 title "p50, 90 days old", \
     "$tsv" using 1:(\$2 == 90 ? \$5 : 1/0) with linespoints dt 2 title "p99, 90 days old", \
     "$tsv" using 1:(\$2 == 90 ? \$6 : 1/0) with linespoints dt 2 title "p99.9, 90 days old"
GP
h3100_log "wrote $tsv and $outdir/ageing-read-latency.png"
