#!/usr/bin/env bash
# Live migration of a guest with a full-size drive under fio load: the
# downtime the drive adds, the bytes it sends, the rounds it takes and the
# stall the guest sees, for the H3100 and, side by side under the same
# load, QEMU's own nvme (docs/design/benchmarks.md, *Live migration*).
#
#   scripts/bench/bench-migrate.sh [options]
#
# For each row boots the Linux guest (scripts/guest/guest-run.sh) with the
# drive on a null-co backend of the 0.8 TB's size, starts fio (4 KiB
# random writes, QD16, libaio, O_DIRECT, over the whole namespace) and, 5 s
# into it, migrates the VM live to a second QEMU on this machine
# (--migrate-on, unix socket, max-bandwidth 10 GB/s, QEMU's default 300 ms
# downtime limit).  The rows: QEMU's nvme (-device nvme,serial=...,drive=d0,
# one namespace: it migrates from QEMU 11.1 on, draining its I/O in the
# downtime; it keeps no map, its data stays in the backend, so it has one
# row), then the H3100 in each drive state (empty, half-written and fully
# written, made at FTL speed by h3100-sim --precondition seq:0.5 / seq and
# loaded by the device's state=; it moves its map in rounds).  It reads:
#   - QEMU's downtime and total time (query-migrate on the source);
#   - the drive's share of the downtime: QEMU's trace events
#     vmstate_downtime_save (source) and vmstate_downtime_load
#     (destination) of the drive's sections (the H3100's model section and
#     its controller's vmstate; nvme's vmstate, its drain included);
#   - the bytes: the H3100's (trace events h3100_mig_round,
#     h3100_mig_complete, h3100_vmstate_save; no trace gives nvme's), the
#     RAM's (query-migrate's normal-bytes) and the stream's total
#     (its "transferred", every section's bytes);
#   - the H3100's rounds: bytes sent and map pages still due after each;
#   - the guest's stall: fio's latency log, the slowest command of each
#     100 ms of guest time, its maximum around the switch against its
#     median elsewhere (scripts/lib/migrate_report.py says how).
# Prints one table row per run, an extrapolation to 6.4 TB and a line per
# row on the stall, and plots the rounds and the stall (gnuplot PNGs).
#
#   --drive WHICH    h3100, nvme or both (default both; with a QEMU older
#                    than 11.1, whose nvme refuses migration, the default
#                    is the H3100 alone, and asking for nvme is an error)
#   --states LIST    the H3100's: empty,half,full (default all three)
#   --runtime S      fio seconds (default 40; the migration must end first)
#   --plot FILE      the rounds (default records/plots/migration-rounds.png)
#   --stall-plot FILE  the guest's slowest command per 100 ms (default
#                    records/plots/migration-stall.png)
#   --keep DIR       keep the state files, traces and logs there (a state
#                    file already there is used again)
#   --qemu PATH      default build/qemu-system-x86_64 (or $H3100_QEMU)
#   --sim PATH       default build/tools/h3100-sim
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

drive=''
states=empty,half,full
runtime=40
plot=$H3100_PROJECT/records/plots/migration-rounds.png
stall_plot=$H3100_PROJECT/records/plots/migration-stall.png
keep=''
qemu=${H3100_QEMU:-$H3100_BUILD/qemu-system-x86_64}
sim=$H3100_BUILD/tools/h3100-sim
while [ $# -gt 0 ]; do
    case $1 in
    --drive) h3100_need "$@"; drive=$2; shift ;;
    --states) h3100_need "$@"; states=$2; shift ;;
    --runtime) h3100_need "$@"; runtime=$2; shift ;;
    --plot) h3100_need "$@"; plot=$2; shift ;;
    --stall-plot) h3100_need "$@"; stall_plot=$2; shift ;;
    --keep) h3100_need "$@"; keep=$2; shift ;;
    --qemu) h3100_need "$@"; qemu=$2; shift ;;
    --sim) h3100_need "$@"; sim=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
case $drive in ''|h3100|nvme|both) ;; *) h3100_die "--drive: h3100, nvme or both; not $drive" ;; esac
case $runtime in ''|*[!0-9]*) h3100_die "--runtime: whole seconds, not $runtime" ;; esac
for s in ${states//,/ }; do
    case $s in empty|half|full) ;; *) h3100_die "--states: empty, half, full; not $s" ;; esac
done
[ -x "$qemu" ] || h3100_die "no QEMU at $qemu (scripts/test.sh builds it)"
[ -x "$sim" ] || h3100_die "no h3100-sim at $sim (scripts/test.sh builds it)"
command -v gnuplot >/dev/null || h3100_die "gnuplot is not installed (apt-get install gnuplot-nox)"

# QEMU's nvme migrates from 11.1 on (before, it is unmigratable)
version=$("$qemu" --version | sed -n '1s/.*version \([0-9][0-9.]*\).*/\1/p')
if h3100_version_ge "${version:-0}" 11.1; then
    drive=${drive:-both}
elif [ -z "$drive" ]; then
    h3100_say "QEMU $version's nvme refuses migration (it migrates from 11.1 on): the H3100 alone"
    drive=h3100
elif [ "$drive" != h3100 ]; then
    h3100_die "QEMU $version's nvme refuses migration (it migrates from 11.1 on): --drive h3100, or an 11.1 build"
fi
rows=()
[ "$drive" = h3100 ] || rows+=(nvme:nvme:-)
if [ "$drive" != nvme ]; then
    for s in ${states//,/ }; do rows+=("h3100-$s:h3100:$s"); done
fi

if [ -n "$keep" ]; then
    mkdir -p "$keep"
    dir=$(cd "$keep" && pwd)
else
    h3100_tmpdir bmig
    dir=$tmp
fi
bytes=$(h3100_profile_value "$sim" h3100-0.8t user_bytes)

# The migration starts once fio has been writing for a few seconds.  fio
# logs the slowest command of each 100 ms of the guest's time; the guest
# prints that log after fio.
cat >"$dir/guest.sh" <<GUEST
(sleep 5; echo "@migrate") &
fio --name=load --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \\
    --rw=randwrite --bs=4k --iodepth=16 --time_based --runtime=$runtime \\
    --norandommap --randrepeat=0 --output-format=terse --terse-version=3 \\
    --write_lat_log=/tmp/load --log_avg_msec=100 --log_max_value=1 \\
    >/tmp/fio.terse 2>/tmp/fio.err
echo "FIO rc=\$? write_iops=\$(cut -d';' -f49 /tmp/fio.terse)"
sed 's/^/@lat /' /tmp/load_lat.1.log
GUEST

step=0
for row in "${rows[@]}"; do
    IFS=: read -r name drv state <<<"$row"
    step=$((step + 1))
    st=''
    if [ "$drv" = nvme ]; then
        device="nvme,id=n0,serial=benchmig,drive=d0"
        what="QEMU's nvme"
    else
        device="dapustor-h3100,id=h0,drive=d0,capacity=0.8T"
        what="H3100, $state"
        if [ "$state" != empty ]; then
            st=$dir/$state.state
            pre=$([ "$state" = half ] && echo seq:0.5 || echo seq)
            if [ ! -s "$st" ]; then
                h3100_say "$what: h3100-sim --precondition $pre --save (at FTL speed)"
                "$sim" --profile h3100-0.8t --precondition "$pre" --runtime 0.001 \
                    --save "$st" >/dev/null
            fi
            device+=",state=$st,state-interval=0"
        fi
    fi
    rm -f "$dir/$name".trace-* "$dir/$name.mig"
    h3100_say "[$step/${#rows[@]}] $what: booting, fio for ${runtime} s, migrating live 5 s into it"
    t0=$SECONDS
    "$H3100_PROJECT/scripts/guest/guest-run.sh" --qemu "$qemu" --no-disk \
        --mem 1024 --timeout $((runtime + 600)) \
        --migrate-on @migrate live --mig-log "$dir/$name.mig" \
        "$dir/guest.sh" -- \
        -drive "driver=null-co,size=$bytes,read-zeroes=on,if=none,id=d0" \
        -device "$device" \
        -trace 'enable=vmstate_downtime_*' -trace 'enable=h3100_mig_*' \
        -trace 'enable=h3100_vmstate_*' -D "$dir/$name.trace-%d" \
        >"$dir/$name.out" 2>"$dir/$name.err" ||
        { sed 's/^/  | /' "$dir/$name.err" >&2; h3100_die "$what: the guest run failed"; }
    grep -q '^FIO rc=0 ' "$dir/$name.out" ||
        { sed 's/^/  > /' "$dir/$name.out" >&2; h3100_die "$what: fio failed in the guest"; }
    h3100_say "[$step/${#rows[@]}] $what: done in $((SECONDS - t0)) s"
    cat "$dir/$name".trace-* >"$dir/$name.trace"
done

h3100_say "QEMU $version, $(basename "$qemu")"
python3 "$H3100_PROJECT/scripts/lib/migrate_report.py" "$dir" "${rows[@]}" | tee "$dir/table"

# the rows whose DIR/NAME.SUFFIX (written by migrate_report.py) has lines
rows_with() {   # SUFFIX
    local row
    for row in "${rows[@]}"; do
        if [ -s "$dir/${row%%:*}.$1" ]; then echo "${row%%:*}"; fi
    done
}

# the H3100's rounds, one line per state: map pages due after each and MB sent
mapfile -t plot_args < <(rows_with rounds)
if [ ${#plot_args[@]} -gt 0 ]; then
    mkdir -p "$(dirname "$plot")"
    {
        echo "set terminal pngcairo size 900,700 noenhanced"
        echo "set output '$plot'"
        echo "set multiplot layout 2,1 title 'Live migration of a 0.8 TB H3100 under fio (QEMU $version): the model section, round by round'"
        echo "set grid; set key outside right; set xlabel 'round'"
        echo "set ylabel 'map pages due after it'; set logscale y"
        printf "plot "
        for s in "${plot_args[@]}"; do
            printf "'%s' using 1:(\$3+1) with linespoints title '%s', " "$dir/$s.rounds" "${s#h3100-}"
        done | sed 's/, $//'
        echo
        echo "unset logscale y; set ylabel 'MB sent, total'"
        printf "plot "
        for s in "${plot_args[@]}"; do
            printf "'%s' using 1:(sum = (\$1 == 1 ? 0 : sum) + \$2/1e6) with linespoints title '%s', " \
                "$dir/$s.rounds" "${s#h3100-}"
        done | sed 's/, $//'
        echo
        echo "unset multiplot"
    } >"$dir/plot.gp"
    gnuplot -e 'sum = 0' "$dir/plot.gp" && h3100_say "plot: $plot"
fi

# the guest's slowest command per 100 ms, every row on one time axis
mapfile -t plot_args < <(rows_with lat)
if [ ${#plot_args[@]} -gt 0 ]; then
    mkdir -p "$(dirname "$stall_plot")"
    {
        echo "set terminal pngcairo size 1000,500 noenhanced"
        echo "set output '$stall_plot'"
        echo "set title 'Live migration under fio (4 KiB random writes, QD16), QEMU $version: the slowest command of each 100 ms of guest time; the migration starts at 5 s'"
        echo "set grid; set key outside right; set xlabel 'guest time, s'"
        echo "set ylabel 'ms'; set logscale y"
        printf "plot "
        for s in "${plot_args[@]}"; do
            printf "'%s' using 1:2 with lines title '%s', " "$dir/$s.lat" "$s"
        done | sed 's/, $//'
        echo
    } >"$dir/stall.gp"
    gnuplot "$dir/stall.gp" && h3100_say "plot: $stall_plot"
fi
