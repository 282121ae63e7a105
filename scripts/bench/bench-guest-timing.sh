#!/usr/bin/env bash
# Timing seen by a guest: the latency the device adds, as
# fio in a Linux guest measures it, against the drive model's own figure.
#
#   scripts/bench/bench-guest-timing.sh [options]
#
# Boots the guest (scripts/guest/guest-run.sh) twice under -icount (virtual time
# from instruction counts, sleep=off), once with dapustor-h3100,timing=on and
# once with timing=off, everything else equal.  Inside, fio (libaio,
# O_DIRECT, one job, QD1 unless --iodepth) first writes the region sequentially (reads of
# never-written LBAs cost no NAND read), then runs
#   read-128k     128 KiB sequential read
#   randread-4k   4 KiB random read
#   randwrite-4k  4 KiB random write (last: the reads before it find the
#                 sequential layout the model's precondition gives)
# The mean latency with timing=on minus the mean with timing=off is the
# latency the model added; it is compared with the model's mean for the
# same job (build/tools/h3100-sim, same profile and user_bytes, sequential
# precondition, --span = the region).  The device column is what the
# device itself booked in the timing=on boot (trace event h3100_model_io:
# model completion minus arrival, mean per job).  Prints the table and
# exits 1 when a difference is more than --tolerance percent off the model.
#
#   --icount-shift N  fixed -icount shift (default 0, see docs/design/benchmarks.md)
#   --runtime S       virtual seconds per fio job (default 0.3)
#   --size SIZE       the fio region (default 64M); the namespace is 256 MiB
#   --capacity C      H3100 profile, as h3100-sim --profiles names them
#                     (h3100-0.8t: 0.8T, the default)
#   --engine polled|irq  polled (default): fio's io_uring engine with
#                     --hipri on an NVMe poll queue (nvme.poll_queues=1), so
#                     fio spins for the completion with or without timing;
#                     irq: libaio, fio sleeps and the interrupt wakes it
#                     (the wake-up only happens with timing: see
#                     docs/design/benchmarks.md)
#   --backend null|raw  null-co (default: data I/O takes no host time) or a
#                     sparse raw file (host I/O time then adds noise)
#   --reps N          boots per setting (default 2); each latency is the mean
#                     of the per-boot fio means (the timing=off baseline
#                     moves by a few us between boots, see docs/design/benchmarks.md)
#   --reps-on N       boots with timing=on, 1..--reps (default --reps); the
#                     timing=off boots still show how far boots move apart
#   --tolerance PCT   pass band around the model (default 5)
#   --iodepth N       fio's queue depth, and the model's (default 1).  At
#                     depth the guest under -icount is slower than the
#                     drive, so the difference is not the drive's latency:
#                     the table compares runs (e.g. --window) and is not
#                     judged against the model
#   --window NS       the device's completion-window (default: the
#                     device's; docs/design/data-path.md); at QD1 it changes
#                     nothing, at depth two runs compare what it moves
#   --qemu PATH       default build/qemu-system-x86_64 (or $H3100_QEMU)
#   --sim PATH        default build/tools/h3100-sim
#   --keep DIR        keep the guest outputs in DIR
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

qemu=${H3100_QEMU:-$H3100_BUILD/qemu-system-x86_64}
sim=$H3100_BUILD/tools/h3100-sim
shift_n=0
runtime=0.3
size=64M
capacity=0.8T
backend=null
engine=polled
tol=5
reps=2
reps_on=''
keep=''
qd=1
window=''

while [ $# -gt 0 ]; do
    case $1 in
    --icount-shift) h3100_need "$@"; shift_n=$2; shift ;;
    --runtime) h3100_need "$@"; runtime=$2; shift ;;
    --size) h3100_need "$@"; size=$2; shift ;;
    --capacity) h3100_need "$@"; capacity=$2; shift ;;
    --backend) h3100_need "$@"; backend=$2; shift ;;
    --engine) h3100_need "$@"; engine=$2; shift ;;
    --reps) h3100_need "$@"; reps=$2; shift ;;
    --reps-on) h3100_need "$@"; reps_on=$2; shift ;;
    --tolerance) h3100_need "$@"; tol=$2; shift ;;
    --iodepth) h3100_need "$@"; qd=$2; shift ;;
    --window) h3100_need "$@"; window=$2; shift ;;
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
reps_on=${reps_on:-$reps}
if ! [[ $reps_on =~ ^[1-9][0-9]*$ ]] || [ "$reps_on" -gt "$reps" ]; then
    h3100_die "--reps-on: 1 to --reps ($reps)"
fi
[[ $tol =~ ^[0-9]+(\.[0-9]+)?$ ]] || h3100_die "--tolerance: a percentage, e.g. 10"
if ! [[ $qd =~ ^[1-9][0-9]*$ ]] || [ "$qd" -gt 256 ]; then h3100_die "--iodepth: 1..256"; fi
[ -z "$window" ] || [[ $window =~ ^[0-9]+$ ]] || h3100_die "--window: ns, an integer"
[[ $size =~ ^[1-9][0-9]*M$ ]] || h3100_die "--size: in MiB, e.g. 64M"
mb=${size%M}
[ "$mb" -le 256 ] || h3100_die "--size: at most 256M (the namespace)"
case $backend in null|raw) ;; *) h3100_die "--backend: null or raw" ;; esac
case $engine in
polled) fio_engine='--ioengine=io_uring --hipri=1'; append='idle=poll nvme.poll_queues=1' ;;
irq) fio_engine='--ioengine=libaio'; append='idle=poll' ;;
*) h3100_die "--engine: polled or irq" ;;
esac
[ -x "$qemu" ] || h3100_die "no QEMU at $qemu (scripts/test.sh builds it)"
[ -x "$sim" ] || h3100_die "no h3100-sim at $sim (scripts/test.sh builds it)"
h3100_check_capacity "$sim" "$capacity"

h3100_tmpdir gtiming
[ -z "$keep" ] || mkdir -p "$keep"
dbytes=$((256 * 1024 * 1024))
rbytes=$((mb * 1024 * 1024))
profile=h3100-${capacity,,}

jobs=(read-128k randread-4k randwrite-4k)
declare -A fio_rw=([randread-4k]=randread [randwrite-4k]=randwrite [read-128k]=read)
declare -A fio_bs=([randread-4k]=4k [randwrite-4k]=4k [read-128k]=128k)
# each job's commands in the trace: H3100Op (include/h3100/model.h) and length
declare -A trace_key=([randread-4k]='0 4096' [randwrite-4k]='1 4096' [read-128k]='0 131072')

# --- the model's figures ------------------------------------------------------
declare -A model
for j in "${jobs[@]}"; do
    h3100_say "model: h3100-sim --profile $profile --set user_bytes=$dbytes --precondition seq --span $rbytes --rw ${fio_rw[$j]} --bs ${fio_bs[$j]} --iodepth $qd"
    js=$("$sim" --profile "$profile" --set "user_bytes=$dbytes" --precondition seq \
        --span "$rbytes" --rw "${fio_rw[$j]}" --bs "${fio_bs[$j]}" --iodepth "$qd" \
        --runtime 0.2 --json) || h3100_die "h3100-sim failed for $j"
    v=$(sed -n 's/.*"lat": {"count": [0-9]*, "mean_us": \([0-9.]*\).*/\1/p' <<<"$js")
    [ -n "$v" ] || h3100_die "no mean latency in h3100-sim's output for $j"
    model[$j]=$v
done

# --- the guest script -----------------------------------------------------------
# fio terse v3 fields: 40 read mean latency (us), 81 write mean latency (us).
# fio reads a time without a unit as whole seconds ("0.3" would be 0, no
# limit): milliseconds.
rt_ms=$(awk -v r="$runtime" 'BEGIN { printf "%d", r * 1000 }')
[ "$rt_ms" -ge 1 ] || h3100_die "--runtime: at least 0.001"
{
    echo "RT=${rt_ms}ms SZ=$size ENGINE='$fio_engine' QD=$qd"
    cat <<'GUEST'
fio --name=precondition --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \
    --rw=write --bs=128k --iodepth=8 --size="$SZ" >/tmp/pre.out 2>&1 || { cat /tmp/pre.out; exit 1; }
echo "PRE done"
sleep 0.2
for j in read:128k randread:4k randwrite:4k; do
    rw=${j%%:*} bs=${j#*:}
    # shellcheck disable=SC2086  # ENGINE is two options
    fio --name="$rw-$bs" --filename=/dev/nvme0n1 $ENGINE --direct=1 \
        --rw="$rw" --bs="$bs" --iodepth="$QD" --size="$SZ" --runtime="$RT" \
        --ramp_time=50ms --time_based=1 --randrepeat=1 \
        --output-format=terse --terse-version=3 >/tmp/j.t 2>/tmp/j.e || { cat /tmp/j.e; exit 1; }
    awk -F';' -v n="$rw-$bs" 'NF > 100 { printf "RESULT %s %s %s %s\n", n, ($40 > 0 ? $40 : $81), $8 + $49, ($6 + $47) }' /tmp/j.t
done
GUEST
} >"$tmp/guest.sh"

declare -A lat dev
# device_means LOG: the mean model latency of each job's commands in LOG
device_means() {
    local j v
    for j in "${jobs[@]}"; do
        v=$(awk -v k="${trace_key[$j]}" '/h3100_model_io/ {
                for (i = 1; i < NF; i++) f[$i] = $(i + 1)
                if (f["op"] " " f["length"] == k) { n++; s += f["done"] - f["now"] }
            } END { if (n) printf "%.6f", s / n / 1000 }' "$1")
        [ -n "$v" ] || h3100_die "no $j commands in the device's trace"
        dev[$j]=$(awk -v a="${dev[$j]:-0}" -v b="$v" -v r="$reps_on" 'BEGIN { printf "%.6f", a + b / r }')
    done
}
run_one() {  # run_one on|off REP
    local t=$1 rep=$2 out drv line n v io trace=() boots=$reps
    if [ "$backend" = null ]; then
        drv="driver=null-co,size=$dbytes,read-zeroes=on,if=none,id=d0"
    else
        rm -f "$tmp/d.raw"
        truncate -s "$dbytes" "$tmp/d.raw"
        drv="file=$tmp/d.raw,if=none,id=d0,format=raw"
    fi
    out=$tmp/timing-$t.$rep.out
    [ "$t" = off ] || { trace=(-trace enable=h3100_model_io -D "$tmp/trace.$rep.log"); boots=$reps_on; }
    h3100_say "timing=$t, boot $rep/$boots: booting (-icount shift=$shift_n,sleep=off; $append), precondition $size, 3 fio jobs x ${runtime}s virtual"
    if ! "$H3100_PROJECT/scripts/guest/guest-run.sh" --qemu "$qemu" --icount-shift "$shift_n" \
        --smp 1 --append "$append" --no-disk --timeout 600 "$tmp/guest.sh" -- \
        -drive "$drv" \
        -device "dapustor-h3100,drive=d0,capacity=$capacity,model-params=user_bytes=$dbytes,timing=$t${window:+,completion-window=$window}" \
        "${trace[@]}" >"$out" 2>"$tmp/timing-$t.$rep.err"; then
        sed 's/^/  | /' "$out" "$tmp/timing-$t.$rep.err" >&2
        h3100_die "the guest run with timing=$t failed (output above)"
    fi
    [ -z "$keep" ] || cp "$out" "$tmp/timing-$t.$rep.err" "$keep/"
    while read -r line; do
        case $line in
        'RESULT '*)
            read -r _ n v io _ <<<"$line"
            lat[$n.$t]=$(awk -v a="${lat[$n.$t]:-0}" -v b="$v" -v r="$boots" 'BEGIN { printf "%.6f", a + b / r }')
            h3100_say "  timing=$t $n: mean $v us, $io IOPS"
            ;;
        esac
    done <"$out"
    if [ "$t" = on ]; then
        device_means "$tmp/trace.$rep.log"
        rm -f "$tmp/trace.$rep.log"
    fi
}
for ((rep = 1; rep <= reps; rep++)); do
    run_one off "$rep"
    [ "$rep" -gt "$reps_on" ] || run_one on "$rep"
done

fails=0
printf '\n%-13s %12s %12s %12s %12s %8s %12s %6s\n' workload 'timing=off' 'timing=on' difference model 'error' device result
for j in "${jobs[@]}"; do
    off=${lat[$j.off]:-} on=${lat[$j.on]:-}
    if [ -z "$off" ] || [ -z "$on" ]; then h3100_die "no fio result for $j"; fi
    r=$(awk -v j="$j" -v a="$off" -v b="$on" -v m="${model[$j]}" -v t="$tol" -v dv="${dev[$j]}" -v qd="$qd" 'BEGIN {
        d = b - a; e = (d - m) / m * 100; ok = (e <= t && e >= -t)
        printf "%-13s %9.1f us %9.1f us %9.1f us %9.1f us %7.1f%% %9.1f us %6s\n", j, a, b, d, m, e, dv, (qd > 1) ? "-" : (ok ? "pass" : "FAIL") }')
    echo "$r"
    case $r in *FAIL) fails=$((fails + 1)) ;; esac
done
echo "(fio QD$qd mean latency in a Linux guest, completion-window ${window:-default}, -icount shift=$shift_n,sleep=off, $append, fio $engine ($fio_engine), $backend backend, ${runtime}s virtual per job, mean of $reps boot(s) with timing off and $reps_on on; model: h3100-sim $profile, user_bytes=$dbytes, seq precondition, span $size; tolerance +-$tol%)"
[ "$fails" = 0 ] || { h3100_say "$fails of ${#jobs[@]} workloads outside +-$tol% of the model"; exit 1; }
