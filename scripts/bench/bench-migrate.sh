#!/usr/bin/env bash
# Live migration of a guest with a full-size drive under fio load: the
# downtime the device adds, the bytes it sends and the rounds it takes
# (docs/design/benchmarks.md, *Live migration*).
#
#   scripts/bench/bench-migrate.sh [options]
#
# For each drive state (an empty, a half-written and a fully written
# 0.8 TB H3100, made at FTL speed by h3100-sim --precondition seq:0.5 /
# seq and loaded by the device's state=), boots the Linux guest
# (scripts/guest/guest-run.sh) with the drive on a null-co backend of its full
# size, starts fio (4 KiB random writes, QD16, libaio, O_DIRECT, over the
# whole namespace) and, 5 s into it, migrates the VM live to a second
# QEMU on this machine (--migrate-on, unix socket, max-bandwidth 10 GB/s,
# QEMU's default 300 ms downtime limit).  It reads:
#   - QEMU's downtime and total time (query-migrate on the source);
#   - the device's share of the downtime: QEMU's trace events
#     vmstate_downtime_save (source) and vmstate_downtime_load
#     (destination) of the drive's two sections (the model's last round
#     and core, the controller's vmstate), in microseconds;
#   - the bytes the device sent (trace events h3100_mig_round,
#     h3100_mig_complete, h3100_vmstate_save) and the RAM's;
#   - the rounds: bytes sent and map pages still due after each.
# Prints one table row per state, an extrapolation to 6.4 TB, and plots
# the rounds (gnuplot PNG).
#
#   --states LIST    empty,half,full (default all three)
#   --runtime S      fio seconds (default 40; the migration must end first)
#   --plot FILE      default records/plots/migration-rounds.png
#   --keep DIR       keep the state files, traces and logs there
#   --qemu PATH      default build/qemu-system-x86_64 (or $H3100_QEMU)
#   --sim PATH       default build/tools/h3100-sim
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

states=empty,half,full
runtime=40
plot=$H3100_PROJECT/records/plots/migration-rounds.png
keep=''
qemu=${H3100_QEMU:-$H3100_PROJECT/build/qemu-system-x86_64}
sim=$H3100_PROJECT/build/tools/h3100-sim
while [ $# -gt 0 ]; do
    case $1 in
    --states) states=$2; shift ;;
    --runtime) runtime=$2; shift ;;
    --plot) plot=$2; shift ;;
    --keep) keep=$2; shift ;;
    --qemu) qemu=$2; shift ;;
    --sim) sim=$2; shift ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
case $runtime in ''|*[!0-9]*) h3100_die "--runtime: whole seconds, not $runtime" ;; esac
for s in ${states//,/ }; do
    case $s in empty|half|full) ;; *) h3100_die "--states: empty, half, full; not $s" ;; esac
done
[ -x "$qemu" ] || h3100_die "no QEMU at $qemu (scripts/test.sh builds it)"
[ -x "$sim" ] || h3100_die "no h3100-sim at $sim (scripts/test.sh builds it)"
command -v gnuplot >/dev/null || h3100_die "gnuplot is not installed (apt-get install gnuplot-nox)"

if [ -n "$keep" ]; then
    mkdir -p "$keep"
    dir=$(cd "$keep" && pwd)
else
    h3100_tmpdir bmig
    dir=$tmp
fi
bytes=$(h3100_profile_value "$sim" h3100-0.8t user_bytes)

# the migration starts once fio has been writing for a few seconds
cat >"$dir/guest.sh" <<GUEST
(sleep 5; echo "@migrate") &
fio --name=load --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \\
    --rw=randwrite --bs=4k --iodepth=16 --time_based --runtime=$runtime \\
    --norandommap --randrepeat=0 --output-format=terse --terse-version=3 \\
    >/tmp/fio.terse 2>/tmp/fio.err
echo "FIO rc=\$? write_iops=\$(cut -d';' -f49 /tmp/fio.terse)"
GUEST

# the sum of a trace event's downtime= over the drive's sections
downtime_us() {   # FILE EVENT
    awk -v ev="$2" '$0 ~ ev && /dapustor-h3100/ {
        for (i = 1; i <= NF; i++) if ($i ~ /^downtime=/) { sub(/downtime=/, "", $i); s += $i } }
        END { print s + 0 }' "$1"
}

printf '%-6s %10s %9s %9s %9s %9s %9s %11s %10s %7s %9s\n' state mapped \
    downtime dev_save dev_load total_s dev_MB core_KB ram_MB rounds fio_iops \
    >"$dir/table"
for state in ${states//,/ }; do
    st=$dir/$state.state
    case $state in
    empty) rm -f "$st" ;;
    half) pre=seq:0.5 ;;
    full) pre=seq ;;
    esac
    if [ "$state" != empty ] && [ ! -s "$st" ]; then
        h3100_say "$state: h3100-sim --precondition $pre --save (at FTL speed)"
        "$sim" --profile h3100-0.8t --precondition "$pre" --runtime 0.001 \
            --save "$st" >/dev/null
    fi
    rm -f "$dir/$state".trace-*
    h3100_say "$state: booting, fio for ${runtime} s, migrating live 5 s into it"
    t0=$SECONDS
    "$H3100_PROJECT/scripts/guest/guest-run.sh" --qemu "$qemu" --no-disk \
        --mem 1024 --timeout $((runtime + 600)) \
        --migrate-on @migrate live --mig-log "$dir/$state.mig" \
        "$dir/guest.sh" -- \
        -drive "driver=null-co,size=$bytes,read-zeroes=on,if=none,id=d0" \
        -device "dapustor-h3100,id=h0,drive=d0,capacity=0.8T$([ -s "$st" ] && echo ",state=$st,state-interval=0")" \
        -trace 'enable=vmstate_downtime_*' -trace 'enable=h3100_mig_*' \
        -trace 'enable=h3100_vmstate_*' -D "$dir/$state.trace-%d" \
        >"$dir/$state.out" 2>"$dir/$state.err" ||
        { sed 's/^/  | /' "$dir/$state.err" >&2; h3100_die "$state: the guest run failed"; }
    h3100_say "$state: done in $((SECONDS - t0)) s"
    cat "$dir/$state".trace-* >"$dir/$state.trace"
    mig=$(tail -n 1 "$dir/$state.mig")
    jget() { python3 -c 'import json,sys; r=json.loads(sys.argv[1]); k=sys.argv[2].split("."); v=r
for p in k: v=v.get(p, {}) if isinstance(v, dict) else {}
print(v if v != {} else 0)' "$mig" "$1"; }
    # rounds: "round N: B bytes sent, D pages due"
    sed -n 's/.*h3100_mig_round round \([0-9]*\): \([0-9]*\) bytes sent, \([0-9]*\) pages due.*/\1 \2 \3/p' \
        "$dir/$state.trace" >"$dir/$state.rounds"
    last=$(sed -n 's/.*h3100_mig_complete last round: \([0-9]*\) bytes of map, \([0-9]*\) of core.*/\1 \2/p' \
           "$dir/$state.trace" | tail -n 1)
    rt=$(sed -n 's/.*h3100_vmstate_save runtime state \([0-9]*\) bytes.*/\1/p' "$dir/$state.trace" | tail -n 1)
    map_bytes=$(awk '{ s += $2 } END { print s + 0 }' "$dir/$state.rounds")
    dev_mb=$(awk -v m="$map_bytes" -v l="${last% *}" -v c="${last#* }" -v r="${rt:-0}" \
             'BEGIN { printf "%.1f", (m + l + c + r) / 1e6 }')
    printf '%-6s %10s %8sms %7.1fms %7.1fms %9.1f %9s %11.1f %10.1f %7s %9s\n' "$state" \
        "$(case $state in empty) echo 0 ;; half) echo 50% ;; full) echo 100% ;; esac)" \
        "$(jget downtime)" \
        "$(awk -v u="$(downtime_us "$dir/$state.trace" vmstate_downtime_save)" 'BEGIN { print u / 1000 }')" \
        "$(awk -v u="$(downtime_us "$dir/$state.trace" vmstate_downtime_load)" 'BEGIN { print u / 1000 }')" \
        "$(awk -v t="$(jget total-time)" 'BEGIN { print t / 1000 }')" \
        "$dev_mb" "$(awk -v c="${last#* }" 'BEGIN { print c / 1000 }')" \
        "$(awk -v b="$(jget ram.transferred)" 'BEGIN { print b / 1e6 }')" \
        "$(wc -l <"$dir/$state.rounds")" \
        "$(sed -n 's/^FIO rc=0 write_iops=//p' "$dir/$state.out")" >>"$dir/table"
done
cat "$dir/table"

# 6.4 TB: eight times the dies, blocks and map.  The last round is not
# eight times larger: QEMU stops the VM once what is due fits in its
# downtime limit at the bandwidth it measured, whatever the capacity; the
# core (block tables, superblocks) is, and goes at this run's rate.
awk 'NR > 1 && $1 == "full" {
        rate = $7 / $6                          # MB/s of the whole run
        printf "\n6.4 TB fully written, extrapolated from the 0.8 TB row: "
        printf "map %.0f MB (x8), about %.0f s at this run'"'"'s %.0f MB/s; ", $7 * 8, $6 * 8, rate
        printf "core %.1f MB (x8), %.0f ms more in the downtime: about %.0f ms of the device'"'"'s\n",
               $8 * 8 / 1000, $8 * 7 / 1000 / rate * 1000, $4 + $5 + $8 * 7 / 1000 / rate * 1000 }' \
    "$dir/table"

# the rounds, one line per state: MB sent and map pages due after each
plot_args=()
for state in ${states//,/ }; do
    [ -s "$dir/$state.rounds" ] && plot_args+=("$state")
done
if [ ${#plot_args[@]} -gt 0 ]; then
    mkdir -p "$(dirname "$plot")"
    {
        echo "set terminal pngcairo size 900,700"
        echo "set output '$plot'"
        echo "set multiplot layout 2,1 title 'Live migration of a 0.8 TB H3100 under fio: the model section, round by round'"
        echo "set grid; set key outside right; set xlabel 'round'"
        echo "set ylabel 'map pages due after it'; set logscale y"
        printf "plot "
        for s in "${plot_args[@]}"; do
            printf "'%s' using 1:(\$3+1) with linespoints title '%s', " "$dir/$s.rounds" "$s"
        done | sed 's/, $//'
        echo
        echo "unset logscale y; set ylabel 'MB sent, total'"
        printf "plot "
        for s in "${plot_args[@]}"; do
            printf "'%s' using 1:(sum = (\$1 == 1 ? 0 : sum) + \$2/1e6) with linespoints title '%s', " \
                "$dir/$s.rounds" "$s"
        done | sed 's/, $//'
        echo
        echo "unset multiplot"
    } >"$dir/plot.gp"
    gnuplot -e 'sum = 0' "$dir/plot.gp" && h3100_say "plot: $plot"
fi
