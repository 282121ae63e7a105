#!/usr/bin/env bash
# The write cliff of a full-size drive, in the simulator (docs/guide/telemetry.md).
#
#   scripts/bench/write-cliff.sh [--profile h3100-3.2t] [--runtime S] [--seed N] [-o DIR]
#
# h3100-sim on the profile's real geometry (nothing shrunk): a sequential
# fill at FTL speed (--precondition seq), then timed 4 KiB random writes,
# 4 jobs x QD32 over the whole namespace, for --runtime simulated seconds:
# fresh-out-of-box speed while the over-provisioned space lasts, the cliff
# when reclaim starts, then steady state a couple of drive-writes later.
# Writes to DIR: telemetry.jsonl (a row every --interval), sim.txt (the
# simulator's report), figures.txt (the figures below) and the plots of
# scripts/bench/h3100-plot.sh (PREFIX-iops.png, ...).  Prints progress on stderr.
#
#   --profile P     drive profile (default h3100-3.2t)
#   --runtime S     simulated seconds of random writes (default 10000: the
#                   3.2 TB drive falls off the cliff at 530 s and is within
#                   1% of steady state from about 4000 s, 1.4 drive writes)
#   --interval S    simulated seconds per telemetry row (default 5)
#   --seed N        random seed (default 1)
#   -o DIR          output directory (default ./write-cliff-PROFILE)
#   --sim PATH      h3100-sim (default build/tools/h3100-sim, or $H3100_SIM)
#   --every S       host seconds between progress lines (default 30)
#
# Cost at 3.2 TB: 7 GiB of RAM and about 20 minutes of one core, 2.6
# billion simulated commands (docs/guide/telemetry.md).
#
# Figures (figures.txt): FOB IOPS (mean of the first 10% of the rows
# before reclaim starts), the cliff (first row below 90% of FOB IOPS),
# IOPS / WAF / p99 over the last 10% of the run (steady state, when long
# enough) and over the 10% before, to show the drive no longer drifts.
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

profile=h3100-3.2t
runtime=10000
interval=5
seed=1
outdir=''
sim=${H3100_SIM:-$H3100_BUILD/tools/h3100-sim}
every=30

while [ $# -gt 0 ]; do
    case $1 in
    --profile) h3100_need "$@"; profile=$2; shift ;;
    --runtime) h3100_need "$@"; runtime=$2; shift ;;
    --interval) h3100_need "$@"; interval=$2; shift ;;
    --seed) h3100_need "$@"; seed=$2; shift ;;
    -o|--outdir) h3100_need "$@"; outdir=$2; shift ;;
    --sim) h3100_need "$@"; sim=$2; shift ;;
    --every) h3100_need "$@"; every=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
num='^[0-9]+(\.[0-9]+)?$'
[[ $runtime =~ $num ]] || h3100_die "--runtime: simulated seconds, e.g. 10000"
[[ $interval =~ $num ]] || h3100_die "--interval: simulated seconds, e.g. 5"
[[ $seed =~ ^[0-9]+$ ]] || h3100_die "--seed: a non-negative integer"
[[ $every =~ ^[1-9][0-9]*$ ]] || h3100_die "--every: host seconds, e.g. 30"
[ -x "$sim" ] || h3100_die "no h3100-sim at $sim (meson compile -C build, or --sim)"
grep -qx -- "$profile" < <("$sim" --profiles) ||
    h3100_die "--profile $profile: not one of $("$sim" --profiles | tr '\n' ' ')"
[ -n "$outdir" ] || outdir=./write-cliff-$profile
mkdir -p "$outdir" || h3100_die "cannot create $outdir"

tel=$outdir/telemetry.jsonl
cmd=("$sim" --profile "$profile" --seed "$seed" --precondition seq
     --rw randwrite --bs 4k --iodepth 32 --numjobs 4 --runtime "$runtime"
     --interval "$interval" --telemetry "$tel")
h3100_say "$(printf '%q ' "${cmd[@]}")"
h3100_say "sequential fill first (no rows until it is done), then $runtime s of random writes"

# Progress from the telemetry file's last row while the simulator runs.
progress() {
    local row
    row=$(tail -n1 "$tel" 2>/dev/null) || row=''
    case $row in
    '{"t": '*) ;;
    *) h3100_say "sequential fill (host ${SECONDS}s)"; return 0 ;;
    esac
    printf '%s\n' "$row" | LC_ALL=C awk -v rt="$runtime" -v host="$SECONDS" '
        function val(k,   s) { match($0, "\"" k "\": *[0-9.eE+-]+")
                               s = substr($0, RSTART, RLENGTH)
                               sub(/^[^:]*: */, "", s); return s + 0 }
        { printf "[write-cliff] t=%.0f/%s s (%.1f%%), %.1f KIOPS, WAF %.3f " \
                 "(lifetime %.3f), p99 %.0f us, %d free superblocks, " \
                 "host %ds\n", val("t"), rt, 100 * val("t") / rt,
                 val("iops") / 1e3, val("waf"), val("lifetime_waf"),
                 val("lat_p99_us"), val("free_superblocks"), host }' >&2
}

SECONDS=0
rm -f "$tel"
"${cmd[@]}" >"$outdir/sim.txt" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' INT TERM
while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq "$every"); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
    done
    kill -0 "$pid" 2>/dev/null && progress
done
status=0
wait "$pid" || status=$?
trap - INT TERM
[ "$status" -eq 0 ] || h3100_die "h3100-sim failed (exit $status); see $outdir/sim.txt"
host_s=$SECONDS
h3100_say "simulation done in ${host_s}s of host time"

# The figures, from the rows alone (so they can be recomputed from a file);
# drive writes = host bytes written since the fill / the namespace.
cap=$("$sim" --profile "$profile" --show-config |
      awk -F' = ' '$1 == "user_bytes" { print $2 }')
LC_ALL=C awk -v hostsec="$host_s" -v cap="$cap" \
    -v cmd="$(printf '%q ' "${cmd[@]}")" '
function val(k,   s) { if (!match($0, "\"" k "\": *[0-9.eE+-]+")) return 0
                       s = substr($0, RSTART, RLENGTH)
                       sub(/^[^:]*: */, "", s); return s + 0 }
/^\{"t": / {
    n++; t[n] = val("t"); iops[n] = val("iops"); p99[n] = val("lat_p99_us")
    p999[n] = val("lat_p999_us"); mean[n] = val("lat_mean_us")
    host[n] = val("host_write_bytes"); nand[n] = val("nand_write_bytes")
    gc[n] = val("gc_victims"); free_sb[n] = val("free_superblocks")
    lwaf[n] = val("lifetime_waf"); temp[n] = val("temp_c")
    thr[n] = val("throttle")
    dw[n] = dw[n - 1] + host[n] / cap
}
function span(a, b, what,   i, s, h, w, q, m) {
    for (i = a; i <= b; i++) { s += iops[i]; h += host[i]; w += nand[i]
                               q += p99[i]; m += mean[i] }
    printf "%-26s t %6.0f..%6.0f s: %7.1f KIOPS, WAF %.3f, mean %.0f us, " \
           "p99 %.0f us (means of %d rows), drive writes %.2f..%.2f\n",
           what, t[a] - (t[2] - t[1]), t[b], s / (b - a + 1) / 1e3,
           h ? w / h : 0, m / (b - a + 1), q / (b - a + 1), b - a + 1,
           dw[a - 1], dw[b]
    return s / (b - a + 1)
}
END {
    if (n < 20) { print "too few rows for figures" > "/dev/stderr"; exit 1 }
    for (g = 1; g <= n && !gc[g]; g++) ;
    fob_n = int((g - 1) / 10); if (fob_n < 1) fob_n = 1
    print "command: " cmd
    printf "host time: %d s; %d rows of %.3f s; %.2f drive writes\n", hostsec,
           n, t[2] - t[1], dw[n]
    fob = span(1, fob_n, "FOB (first rows)")
    if (g <= n) {
        printf "first reclaim: row ending at t=%.0f s (%.2f drive writes)\n",
               t[g], dw[g]
    }
    for (c = 1; c <= n && iops[c] >= 0.9 * fob; c++) ;
    if (c <= n) {
        printf "cliff: t=%.0f s, %.2f drive writes (first row below 90%% " \
               "of FOB IOPS: %.1f KIOPS)\n", t[c], dw[c], iops[c] / 1e3
    } else {
        print "cliff: not reached"
    }
    k = int(n / 10)
    span(n - 2 * k + 1, n - k, "the 10% before")
    span(n - k + 1, n, "last 10% of the run")
    printf "end: lifetime WAF %.3f, %d free superblocks, %.1f C, throttle %d\n",
           lwaf[n], free_sb[n], temp[n], thr[n]
}' "$tel" | tee "$outdir/figures.txt" >&2

"$H3100_PROJECT/scripts/bench/h3100-plot.sh" "$tel" -o "$outdir" \
    --prefix "write-cliff-${profile#h3100-}" \
    --title "$profile, 4 KiB random write, 4 x QD32, after a sequential fill"
