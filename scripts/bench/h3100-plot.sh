#!/usr/bin/env bash
# Plots of a telemetry file (docs/guide/telemetry.md): the JSON rows that
# `h3100-sim --telemetry=FILE` and the device's telemetry=FILE write.
#
#   scripts/bench/h3100-plot.sh TELEMETRY_FILE [-o OUTDIR] [--title T] [--prefix P]
#
# Writes PNGs with gnuplot (Debian: gnuplot-nox) and prints their paths:
#   iops.png         IOPS and MB/s over time (the write cliff)
#   latency.png      mean, p99 and p99.9 latency over time, log scale
#   waf.png          interval and lifetime WAF, free superblocks on the right
#   cdf.png          latency CDF of the whole run, log scale (needs the
#                    file's final {"cdf": ...} line)
#   temperature.png  composite temperature and throttle level
#
#   -o OUTDIR     where to write (default: the current directory)
#   --title T     title of every plot (default: the file's name)
#   --prefix P    name the files P-iops.png, ... (default: no prefix)
# Environment: H3100_GNUPLOT, the gnuplot to run (default gnuplot).
# Parsing needs only awk: no jq.
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

file=''
outdir=.
title=''
prefix=''
gnuplot=${H3100_GNUPLOT:-gnuplot}

while [ $# -gt 0 ]; do
    case $1 in
    -o|--outdir) h3100_need "$@"; outdir=$2; shift ;;
    --title) h3100_need "$@"; title=$2; shift ;;
    --prefix) h3100_need "$@"; prefix=$2-; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    -*) h3100_die "unknown option: $1 (try --help)" ;;
    *) [ -z "$file" ] || h3100_die "one telemetry file only (got '$file' and '$1')"
       file=$1 ;;
    esac
    shift
done
[ -n "$file" ] || h3100_die "usage: $0 TELEMETRY_FILE [-o OUTDIR] [--title T]"
[ -f "$file" ] || h3100_die "$file: no such file"
[ -s "$file" ] || h3100_die "$file: empty"
command -v "$gnuplot" >/dev/null 2>&1 ||
    h3100_die "$gnuplot not found (Debian: apt-get install gnuplot-nox)"
[ -n "$title" ] || title=$(basename "$file")
mkdir -p "$outdir" || h3100_die "cannot create $outdir"

h3100_tmpdir plot

# Rows to columns (1 t, 2 iops, 3 read_iops, 4 write_iops, 5 mbps,
# 6 lat_mean_us, 7 lat_p99_us, 8 lat_p999_us, 9 waf, 10 lifetime_waf,
# 11 free_superblocks, 12 temp_c, 13 throttle); "?" where a value is
# missing, or a latency or WAF of an interval with nothing to measure
# (log scales and ratios have no zero).  The CDF line to "lat fraction".
LC_ALL=C awk -v rows="$tmp/rows.dat" -v cdf="$tmp/cdf.dat" '
function val(key,   s) {
    if (!match($0, "\"" key "\": *-?[0-9][0-9.eE+-]*")) {
        return "?"
    }
    s = substr($0, RSTART, RLENGTH)
    sub(/^[^:]*: */, "", s)
    return s
}
function pos(key,   v) { v = val(key); return (v == "?" || v + 0 <= 0) ? "?" : v }
/^[ \t]*$/ { next }
/^\{"t": / {
    if (val("t") == "?" || val("iops") == "?") {
        printf "%s:%d: a row without t or iops\n", FILENAME, FNR > "/dev/stderr"
        bad = 1; exit
    }
    print val("t"), val("iops"), val("read_iops"), val("write_iops"),
          val("mbps"), pos("lat_mean_us"), pos("lat_p99_us"),
          pos("lat_p999_us"), pos("waf"), pos("lifetime_waf"),
          val("free_superblocks"), val("temp_c"), val("throttle") > rows
    n++
    if (val("temp_c") != "?") temp = 1
    next
}
/^\{"cdf": \[/ {
    s = $0
    sub(/^\{"cdf": \[ *\[?/, "", s)
    sub(/\]? *\] *\} *$/, "", s)
    k = split(s, pt, /\] *, *\[/)
    for (i = 1; i <= k; i++) {
        if (split(pt[i], xy, / *, */) == 2 && xy[1] + 0 > 0) {
            print xy[1], xy[2] > cdf
            c++
        }
    }
    next
}
{
    printf "%s:%d: not a telemetry line: %.60s\n", FILENAME, FNR, $0 > "/dev/stderr"
    bad = 1; exit
}
END {
    if (bad) exit 2
    if (!n) { printf "%s: no telemetry rows\n", FILENAME > "/dev/stderr"; exit 3 }
    printf "%d %d %d\n", n, c, temp
}' "$file" >"$tmp/counts" 2>"$tmp/err" ||
    h3100_die "$(head -n1 "$tmp/err")"
read -r nrows ncdf has_temp <"$tmp/counts"

# pngcairo draws smoother lines; Debian's gnuplot-nox has both.  noenhanced:
# titles like oltp_read_write are text, not subscripts.
if grep -qw pngcairo < <(printf 'set terminal\n' | "$gnuplot" 2>&1); then
    term="pngcairo noenhanced size 1100,600 font ',10'"
else
    term="png noenhanced size 1100,600"
fi
qtitle=${title//\'/\'\'}

out() { printf '%s/%s%s.png' "$outdir" "$prefix" "$1"; }

plot() {   # NAME GNUPLOT-COMMANDS
    local png
    png=$(out "$1")
    {
        printf 'set terminal %s\nset output '\''%s'\''\n' "$term" "${png//\'/\'\'}"
        printf 'set datafile missing "?"\nset grid\nset key top right\n'
        printf 'set xlabel "simulated time (s)"\n'
        printf '%s\n' "$2"
    } >"$tmp/$1.gp"
    "$gnuplot" "$tmp/$1.gp" 2>"$tmp/$1.err" ||
        h3100_die "gnuplot failed on $1: $(head -n3 "$tmp/$1.err")"
    [ -s "$png" ] || h3100_die "gnuplot wrote nothing to $png"
    printf '%s\n' "$png"
}

rows="'$tmp/rows.dat'"
plot iops "set title '$qtitle: IOPS and bandwidth ($nrows rows)'
set ylabel 'IOPS'
set y2label 'MB/s'
set yrange [0:*]
set y2range [0:*]
set ytics nomirror
set y2tics
stats $rows using 2 name 'IOPS' nooutput
if (IOPS_max >= 10000) { set format y '%.0s%c' } else { set format y '%g' }
plot $rows using 1:2 with lines lw 2 title 'IOPS', \
     $rows using 1:5 axes x1y2 with lines lw 1 dt 2 title 'MB/s'"

plot latency "set title '$qtitle: latency'
set ylabel 'latency (us)'
set logscale y
plot $rows using 1:6 with lines lw 2 title 'mean', \
     $rows using 1:7 with lines lw 1 title 'p99', \
     $rows using 1:8 with lines lw 1 title 'p99.9'"

plot waf "set title '$qtitle: write amplification'
set ylabel 'WAF (NAND bytes / host bytes)'
set y2label 'free superblocks'
set yrange [0:*]
set y2range [0:*]
set ytics nomirror
set y2tics
plot $rows using 1:9 with lines lw 1 title 'interval WAF', \
     $rows using 1:10 with lines lw 2 title 'lifetime WAF', \
     $rows using 1:11 axes x1y2 with lines lw 1 dt 2 title 'free superblocks'"

if [ "$ncdf" -gt 0 ]; then
    plot cdf "set title '$qtitle: latency CDF of the whole run'
set xlabel 'latency (us)'
set ylabel 'fraction of commands at or below'
set logscale x
set yrange [0:1.02]
set key bottom right
plot '$tmp/cdf.dat' using 1:2 with lines lw 2 title 'CDF'"
else
    h3100_warn "$file has no CDF line: no $(out cdf)"
fi

if [ "$has_temp" -eq 1 ]; then
    plot temperature "set title '$qtitle: temperature and throttling'
set ylabel 'composite temperature (C)'
set y2label 'throttle level'
set y2range [-0.1:2.5]
set ytics nomirror
set y2tics 0,1,2
plot $rows using 1:12 with lines lw 2 title 'temperature', \
     $rows using 1:13 axes x1y2 with steps lw 1 dt 2 title 'throttle'"
fi
