#!/usr/bin/env bash
# The same fio jobs on the dapustor-h3100 and on QEMU's stock nvme device,
# side by side.
#
#   scripts/bench/bench-vs-nvme.sh [options]
#
# Boots the same Linux guest (scripts/guest/guest-run.sh, TCG) once with QEMU's
# stock `-device nvme,serial=...,drive=d0` and once with
# `-device dapustor-h3100,drive=d0,timing=off`, each on a fresh image of
# the same size (sparse raw, or qcow2 with --format), and runs the same fio
# jobs inside (libaio, O_DIRECT, /dev/nvme0n1):
#   seqwrite-128k-qd32  128 KiB sequential write, QD32 (also fills the region)
#   randwrite-4k-qd1    4 KiB random write, QD1, over the region
#   randwrite-4k-qd32   4 KiB random write, QD32, over the region
#   randread-4k-qd1     4 KiB random read, QD1, over the written region
#   randread-4k-qd32    4 KiB random read, QD32, over the written region
# The pair of boots is repeated --reps times (default 2) to show the noise.
# Prints one table: job, run, IOPS stock nvme, IOPS dapustor-h3100, ratio
# ours/stock, and per job the medians over the runs ("med": TCG on a shared
# host moves single runs by 10-25%).  Odd runs boot stock first, even runs
# ours first.  Exit status 0 when every run completed (the ratio is a figure,
# not a pass/fail; see docs/design/benchmarks.md).
#
#   --runtime S      seconds per fio job (default 3)
#   --size SIZE      fio region (default 128M); the backing file is 256M
#   --reps N         repetitions of the pair of boots (default 2)
#   --capacity C     the H3100 profile (default 0.8T; namespace = the file)
#   --accel tcg|kvm|auto  default tcg (KVM does not work on the build host)
#   --qemu PATH      default build/qemu-system-x86_64 (or $H3100_QEMU)
#   --keep DIR       keep the raw guest outputs in DIR
#   --h3100-opts OPTS  more dapustor-h3100 options (e.g. vwc=on, kill-safe=off)
#   --format FMT     raw (default) or qcow2: the images' format; qcow2 shows
#                    what kill-safe (docs/guide/usage.md, Durability) costs
#   --qemu-args 'A B'  extra QEMU arguments for both devices (e.g. -trace ...)
#   --parallel       boot both guests at the same time, one vCPU each, so a
#                    slow spell of a shared host hits both alike (needs 2
#                    host cores); the default boots them one after the other
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

qemu=${H3100_QEMU:-$H3100_BUILD/qemu-system-x86_64}
runtime=3
size=128M
reps=2
capacity=0.8T
accel=tcg
keep=''
extra=''
hopts=''
parallel=0
format=raw

while [ $# -gt 0 ]; do
    case $1 in
    --runtime) h3100_need "$@"; runtime=$2; shift ;;
    --size) h3100_need "$@"; size=$2; shift ;;
    --reps) h3100_need "$@"; reps=$2; shift ;;
    --capacity) h3100_need "$@"; capacity=$2; shift ;;
    --accel) h3100_need "$@"; accel=$2; shift ;;
    --qemu) h3100_need "$@"; qemu=$2; shift ;;
    --keep) h3100_need "$@"; keep=$2; shift ;;
    --h3100-opts) h3100_need "$@"; hopts=,$2; shift ;;
    --qemu-args) h3100_need "$@"; extra=$2; shift ;;
    --parallel) parallel=1 ;;
    --format) h3100_need "$@"; format=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
[[ $runtime =~ ^[0-9]+(\.[0-9]+)?$ ]] || h3100_die "--runtime: seconds, e.g. 3"
[[ $reps =~ ^[1-9][0-9]*$ ]] || h3100_die "--reps: a positive integer"
[[ $size =~ ^[1-9][0-9]*[KMG]$ ]] || h3100_die "--size: e.g. 128M (at most 256M)"
case $accel in auto|kvm|tcg) ;; *) h3100_die "--accel: auto, kvm or tcg" ;; esac
[ -x "$qemu" ] || h3100_die "no QEMU at $qemu (scripts/test.sh builds it)"
sim=${H3100_SIM:-$H3100_BUILD/tools/h3100-sim}   # the list of capacities
[ -x "$sim" ] || h3100_die "no h3100-sim at $sim (scripts/test.sh builds it)"
h3100_check_capacity "$sim" "$capacity"
case $format in raw|qcow2) ;; *) h3100_die "--format: raw or qcow2" ;; esac
qimg=$(dirname "$(readlink -f "$qemu")")/qemu-img
[ "$format" = raw ] || [ -x "$qimg" ] || qimg="qemu-img"

h3100_tmpdir vsnvme
[ -z "$keep" ] || mkdir -p "$keep"
dbytes=$((256 * 1024 * 1024))

# The guest script: the five jobs, one terse line each (fields: 8 read
# IOPS, 40 read mean latency us, 49 write IOPS, 81 write mean latency us).
cat >"$tmp/guest.sh" <<GUEST
RT=$runtime
SZ=$size
GUEST
cat >>"$tmp/guest.sh" <<'GUEST'
job() {
    n=$1; shift
    fio --name="$n" --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \
        --size="$SZ" --runtime="$RT" --time_based=1 --randrepeat=1 \
        --output-format=terse --terse-version=3 "$@" >/tmp/$n.t 2>/tmp/$n.e
    r=$?
    awk -F';' -v n="$n" -v r="$r" '{ printf "RESULT %s rc=%s riops=%s rlat=%s wiops=%s wlat=%s\n", n, r, $8, $40, $49, $81 }' /tmp/$n.t
    [ "$r" = 0 ] || sed 's/^/  /' /tmp/$n.e
}
nvme list 2>/dev/null | grep nvme0n1 | sed 's/^/DRIVE /'
job seqwrite-128k-qd32 --rw=write --bs=128k --iodepth=32
job randwrite-4k-qd1 --rw=randwrite --bs=4k --iodepth=1
job randwrite-4k-qd32 --rw=randwrite --bs=4k --iodepth=32
job randread-4k-qd1 --rw=randread --bs=4k --iodepth=1
job randread-4k-qd32 --rw=randread --bs=4k --iodepth=32
GUEST

declare -A iops
start_one() {  # start_one REP DEV: boot in the background, pid in $!
    local rep=$1 dev=$2 disk=$tmp/$2.$format devarg smp=2
    rm -f "$disk"
    if [ "$format" = raw ]; then
        truncate -s "$dbytes" "$disk"
    else
        "$qimg" create -q -f "$format" "$disk" "$dbytes"
    fi
    case $dev in
    stock) devarg="nvme,serial=benchstock,drive=d0" ;;
    h3100) devarg="dapustor-h3100,drive=d0,capacity=$capacity,model-params=user_bytes=$dbytes,timing=off$hopts" ;;
    esac
    [ "$parallel" = 0 ] || smp=1
    h3100_say "run $rep/$reps: $dev (-device ${devarg%%,*}), 5 fio jobs x ${runtime}s"
    # shellcheck disable=SC2086  # --qemu-args is split on purpose
    "$H3100_PROJECT/scripts/guest/guest-run.sh" --qemu "$qemu" --accel "$accel" --no-disk \
        --smp "$smp" --timeout 300 "$tmp/guest.sh" -- \
        -drive "file=$disk,if=none,id=d0,format=$format" -device "$devarg" $extra \
        >"$tmp/$dev.$rep.out" 2>"$tmp/$dev.$rep.err" &
}

finish_one() {  # finish_one REP DEV PID: wait for the boot, read its figures
    local rep=$1 dev=$2 out=$tmp/$2.$1.out line n v rc ri wi
    if ! wait "$3"; then
        sed 's/^/  | /' "$tmp/$dev.$rep.err" >&2
        h3100_die "the guest run with $dev failed (output above)"
    fi
    [ -z "$keep" ] || cp "$out" "$tmp/$dev.$rep.err" "$keep/"
    while read -r line; do
        case $line in
        'DRIVE '*) h3100_say "  $dev: $line" ;;
        'RESULT '*)
            read -r _ n rc ri _ wi _ <<<"$line"
            [ "$rc" = rc=0 ] || h3100_die "fio $n failed on $dev ($rc)"
            case $n in *write*) v=${wi#wiops=} ;; *) v=${ri#riops=} ;; esac
            iops[$n.$rep.$dev]=$v
            h3100_say "  $dev $n: $v IOPS"
            ;;
        esac
    done <"$out"
}

run_one() {  # run_one REP DEV
    start_one "$1" "$2"
    finish_one "$1" "$2" $!
}

# alternate which device boots first, so a drift of the host's speed
# during the run does not favour one of them
for ((rep = 1; rep <= reps; rep++)); do
    if [ "$parallel" = 1 ]; then
        start_one "$rep" stock; p1=$!
        start_one "$rep" h3100; p2=$!
        finish_one "$rep" stock "$p1"
        finish_one "$rep" h3100 "$p2"
    elif ((rep % 2)); then
        run_one "$rep" stock
        run_one "$rep" h3100
    else
        run_one "$rep" h3100
        run_one "$rep" stock
    fi
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '\n%-20s %4s %14s %14s %12s\n' job run 'stock nvme' 'dapustor-h3100' 'ours/stock'
for n in randread-4k-qd1 randread-4k-qd32 seqwrite-128k-qd32 randwrite-4k-qd1 randwrite-4k-qd32; do
    for ((rep = 1; rep <= reps; rep++)); do
        a=${iops[$n.$rep.stock]:-0} b=${iops[$n.$rep.h3100]:-0}
        awk -v n="$n" -v r="$rep" -v a="$a" -v b="$b" 'BEGIN {
            printf "%-20s %4s %14.0f %14.0f %12s\n", n, r, a, b, (a > 0 ? sprintf("%.2f", b / a) : "n/a") }'
    done
    if ((reps > 1)); then
        a=$(for ((rep = 1; rep <= reps; rep++)); do echo "${iops[$n.$rep.stock]:-0}"; done | median)
        b=$(for ((rep = 1; rep <= reps; rep++)); do echo "${iops[$n.$rep.h3100]:-0}"; done | median)
        awk -v n="$n" -v a="$a" -v b="$b" 'BEGIN {
            printf "%-20s %4s %14.0f %14.0f %12s\n", n, "med", a, b, (a > 0 ? sprintf("%.2f", b / a) : "n/a") }'
    fi
done
echo "(IOPS from fio inside the guest; $accel, ${runtime}s per job, region $size of a fresh 256 MiB $format image$([ "$parallel" = 0 ] || echo '; both guests at once, 1 vCPU each'))"
