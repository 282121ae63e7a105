#!/usr/bin/env bash
# Timing seen by a guest (issue 4 item 4): the latency the device adds, as
# fio in a Linux guest measures it, against the drive model's own figure.
#
#   scripts/bench-guest-timing.sh [options]
#
# Boots the guest (scripts/guest-run.sh) twice under -icount (virtual time
# from instruction counts, sleep=off), once with dapustor-h3100,timing=on and
# once with timing=off, everything else equal.  Inside, fio (libaio,
# O_DIRECT, one job, QD1) first writes the region sequentially (reads of
# never-written LBAs cost no NAND read), then runs
#   randread-4k   4 KiB random read
#   randwrite-4k  4 KiB random write
#   read-128k     128 KiB sequential read
# The mean latency with timing=on minus the mean with timing=off is the
# latency the model added; it is compared with the model's QD1 mean for the
# same job (build/tools/h3100-sim, same profile and user_bytes, sequential
# precondition, --span = the region).  Prints the table and exits 1 when a
# difference is more than --tolerance percent off the model.
#
#   --icount-shift N  fixed -icount shift (default 0, see docs/benchmarks.md)
#   --runtime S       virtual seconds per fio job (default 0.3)
#   --size SIZE       the fio region (default 64M); the namespace is 256 MiB
#   --capacity C      H3100 profile: 0.8T 1.6T 3.2T 6.4T (default 0.8T)
#   --engine polled|irq  polled (default): fio's io_uring engine with
#                     --hipri on an NVMe poll queue (nvme.poll_queues=1), so
#                     fio spins for the completion with or without timing;
#                     irq: libaio, fio sleeps and the interrupt wakes it
#                     (the wake-up only happens with timing: see
#                     docs/benchmarks.md)
#   --backend null|raw  null-co (default: data I/O takes no host time) or a
#                     sparse raw file (host I/O time then adds noise)
#   --reps N          boots per setting (default 2); each latency is the mean
#                     of the per-boot fio means (the timing=off baseline
#                     moves by a few us between boots, see docs/benchmarks.md)
#   --tolerance PCT   pass band around the model (default 10)
#   --qemu PATH       default build/qemu-system-x86_64 (or $H3100_QEMU)
#   --sim PATH        default build/tools/h3100-sim
#   --keep DIR        keep the guest outputs in DIR
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

qemu=${H3100_QEMU:-$H3100_PROJECT/build/qemu-system-x86_64}
sim=$H3100_PROJECT/build/tools/h3100-sim
shift_n=0
runtime=0.3
size=64M
capacity=0.8T
backend=null
engine=polled
tol=10
reps=2
keep=''

while [ $# -gt 0 ]; do
    case $1 in
    --icount-shift) h3100_need "$@"; shift_n=$2; shift ;;
    --runtime) h3100_need "$@"; runtime=$2; shift ;;
    --size) h3100_need "$@"; size=$2; shift ;;
    --capacity) h3100_need "$@"; capacity=$2; shift ;;
    --backend) h3100_need "$@"; backend=$2; shift ;;
    --engine) h3100_need "$@"; engine=$2; shift ;;
    --reps) h3100_need "$@"; reps=$2; shift ;;
    --tolerance) h3100_need "$@"; tol=$2; shift ;;
    --qemu) h3100_need "$@"; qemu=$2; shift ;;
    --sim) h3100_need "$@"; sim=$2; shift ;;
    --keep) h3100_need "$@"; keep=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
[[ $shift_n =~ ^([0-9]|10)$ ]] || h3100_die "--icount-shift: 0..10"
[[ $runtime =~ ^[0-9]+(\.[0-9]+)?$ ]] || h3100_die "--runtime: virtual seconds, e.g. 0.5"
[[ $reps =~ ^[1-9][0-9]*$ ]] || h3100_die "--reps: a positive integer"
[[ $tol =~ ^[0-9]+(\.[0-9]+)?$ ]] || h3100_die "--tolerance: a percentage, e.g. 10"
[[ $size =~ ^[1-9][0-9]*M$ ]] || h3100_die "--size: in MiB, e.g. 64M"
mb=${size%M}
[ "$mb" -le 256 ] || h3100_die "--size: at most 256M (the namespace)"
case $capacity in 0.8T|1.6T|3.2T|6.4T) ;; *) h3100_die "--capacity: 0.8T, 1.6T, 3.2T or 6.4T" ;; esac
case $backend in null|raw) ;; *) h3100_die "--backend: null or raw" ;; esac
case $engine in
polled) fio_engine='--ioengine=io_uring --hipri=1'; append='idle=poll nvme.poll_queues=1' ;;
irq) fio_engine='--ioengine=libaio'; append='idle=poll' ;;
*) h3100_die "--engine: polled or irq" ;;
esac
[ -x "$qemu" ] || h3100_die "no QEMU at $qemu (scripts/test.sh builds it)"
[ -x "$sim" ] || h3100_die "no h3100-sim at $sim (scripts/test.sh builds it)"

say() { printf '[bench-guest-timing] %s\n' "$*" >&2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/h3100-gtiming.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ -z "$keep" ] || mkdir -p "$keep"
dbytes=$((256 * 1024 * 1024))
rbytes=$((mb * 1024 * 1024))
profile=h3100-${capacity,,}

jobs=(randread-4k randwrite-4k read-128k)
declare -A fio_rw=([randread-4k]=randread [randwrite-4k]=randwrite [read-128k]=read)
declare -A fio_bs=([randread-4k]=4k [randwrite-4k]=4k [read-128k]=128k)

# --- the model's figures ------------------------------------------------------
declare -A model
for j in "${jobs[@]}"; do
    say "model: h3100-sim --profile $profile --set user_bytes=$dbytes --precondition seq --span $rbytes --rw ${fio_rw[$j]} --bs ${fio_bs[$j]} --iodepth 1"
    js=$("$sim" --profile "$profile" --set "user_bytes=$dbytes" --precondition seq \
        --span "$rbytes" --rw "${fio_rw[$j]}" --bs "${fio_bs[$j]}" --iodepth 1 \
        --runtime 0.2 --json) || h3100_die "h3100-sim failed for $j"
    v=$(sed -n 's/.*"lat": {"count": [0-9]*, "mean_us": \([0-9.]*\).*/\1/p' <<<"$js")
    [ -n "$v" ] || h3100_die "no mean latency in h3100-sim's output for $j"
    model[$j]=$v
done

# --- the guest script -----------------------------------------------------------
# fio terse v3 fields: 40 read mean latency (us), 81 write mean latency (us).
{
    echo "RT=$runtime SZ=$size ENGINE='$fio_engine'"
    cat <<'GUEST'
fio --name=precondition --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \
    --rw=write --bs=128k --iodepth=8 --size="$SZ" >/tmp/pre.out 2>&1 || { cat /tmp/pre.out; exit 1; }
echo "PRE done"
sleep 0.2
for j in randread:4k randwrite:4k read:128k; do
    rw=${j%%:*} bs=${j#*:}
    # shellcheck disable=SC2086  # ENGINE is two options
    fio --name="$rw-$bs" --filename=/dev/nvme0n1 $ENGINE --direct=1 \
        --rw="$rw" --bs="$bs" --iodepth=1 --size="$SZ" --runtime="$RT" \
        --ramp_time=0.05 --time_based=1 --randrepeat=1 \
        --output-format=terse --terse-version=3 >/tmp/j.t 2>/tmp/j.e || { cat /tmp/j.e; exit 1; }
    awk -F';' -v n="$rw-$bs" 'NF > 100 { printf "RESULT %s %s %s %s\n", n, ($40 > 0 ? $40 : $81), $8 + $49, ($6 + $47) }' /tmp/j.t
done
GUEST
} >"$tmp/guest.sh"

declare -A lat
run_one() {  # run_one on|off REP
    local t=$1 rep=$2 out drv line n v io
    if [ "$backend" = null ]; then
        drv="driver=null-co,size=$dbytes,read-zeroes=on,if=none,id=d0"
    else
        rm -f "$tmp/d.raw"
        truncate -s "$dbytes" "$tmp/d.raw"
        drv="file=$tmp/d.raw,if=none,id=d0,format=raw"
    fi
    out=$tmp/timing-$t.$rep.out
    say "timing=$t, boot $rep/$reps: booting (-icount shift=$shift_n,sleep=off; $append), precondition $size, 3 fio jobs x ${runtime}s virtual"
    if ! "$H3100_PROJECT/scripts/guest-run.sh" --qemu "$qemu" --icount-shift "$shift_n" \
        --smp 1 --append "$append" --no-disk --timeout 600 "$tmp/guest.sh" -- \
        -drive "$drv" \
        -device "dapustor-h3100,drive=d0,capacity=$capacity,model-params=user_bytes=$dbytes,timing=$t" \
        >"$out" 2>"$tmp/timing-$t.$rep.err"; then
        sed 's/^/  | /' "$out" "$tmp/timing-$t.$rep.err" >&2
        h3100_die "the guest run with timing=$t failed (output above)"
    fi
    [ -z "$keep" ] || cp "$out" "$tmp/timing-$t.$rep.err" "$keep/"
    while read -r line; do
        case $line in
        'RESULT '*)
            read -r _ n v io _ <<<"$line"
            lat[$n.$t]=$(awk -v a="${lat[$n.$t]:-0}" -v b="$v" -v r="$reps" 'BEGIN { printf "%.6f", a + b / r }')
            say "  timing=$t $n: mean $v us, $io IOPS"
            ;;
        esac
    done <"$out"
}
for ((rep = 1; rep <= reps; rep++)); do
    run_one off "$rep"
    run_one on "$rep"
done

fails=0
printf '\n%-13s %12s %12s %12s %12s %8s %6s\n' workload 'timing=off' 'timing=on' difference model 'error' result
for j in "${jobs[@]}"; do
    off=${lat[$j.off]:-} on=${lat[$j.on]:-}
    if [ -z "$off" ] || [ -z "$on" ]; then h3100_die "no fio result for $j"; fi
    r=$(awk -v j="$j" -v a="$off" -v b="$on" -v m="${model[$j]}" -v t="$tol" 'BEGIN {
        d = b - a; e = (d - m) / m * 100; ok = (e <= t && e >= -t)
        printf "%-13s %9.1f us %9.1f us %9.1f us %9.1f us %7.1f%% %6s\n", j, a, b, d, m, e, ok ? "pass" : "FAIL" }')
    echo "$r"
    case $r in *FAIL) fails=$((fails + 1)) ;; esac
done
echo "(fio QD1 mean latency in a Linux guest, -icount shift=$shift_n,sleep=off, $append, fio $engine ($fio_engine), $backend backend, ${runtime}s virtual per job, mean of $reps boot(s) per setting; model: h3100-sim $profile, user_bytes=$dbytes, seq precondition, span $size; tolerance +-$tol%)"
[ "$fails" = 0 ] || { say "$fails of ${#jobs[@]} workloads outside +-$tol% of the model"; exit 1; }
