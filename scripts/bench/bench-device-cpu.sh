#!/usr/bin/env bash
# The device's host CPU per command: a Linux guest
# issues a known number of NVMe commands (fio, 4 KiB random read and
# write at QD1 and QD32, and QD32 submitted 32 at a time, on a null-co
# backend), and the run time of each QEMU thread, read from
# /proc/PID/task/TID/schedstat before and after each job, is divided by
# the commands the drive counted (SMART host read + write commands).  The
# device's thread is the main loop (or its IOThread with --configs
# iothread; the main loop and both IOThreads with iot1 and iot2); the
# same run measures QEMU's own nvme device on the same machine and
# workload, and gives the ratio.  iot1 and iot2 compare one IOThread
# with two for the I/O queues (iothread-vq-mapping): a 2-vCPU guest, fio
# with two jobs, one per vCPU, so Linux submits on qid 1 and qid 2; in
# iot1 both queues are io1's, in iot2 qid 1 is io1's and qid 2 io2's.
# perf samples the device's threads during every job: the ns per command
# spent in the device's own code (hw/ and models/) and in QEMU's nvme's
# (hw/nvme), apart from the main loop, the kernel and TCG.
#
#   scripts/bench/bench-device-cpu.sh [options]
#
#   --configs LIST    comma-separated, in order (default all):
#                       nvme      QEMU's nvme (-device nvme), the reference
#                       off       dapustor-h3100,timing=off
#                       on        dapustor-h3100 (timing on, the default)
#                       iothread  timing on, iothread=io0
#                       vwc       timing on, vwc=on (volatile write cache)
#                       mix       timing on, the hostile mix: 512 B to
#                                 128 KiB, aligned and not, reads and
#                                 writes, QD16 (its one job)
#                       iot1      timing on, -smp 2, qids 1 and 2 in one
#                                 IOThread (its jobs: QD32 random read
#                                 and write, two fio jobs, one per vCPU)
#                       iot2      the same, qid 1 and qid 2 in two
#                       deep      timing on, -smp 2, the deepest load this
#                                 machine drives: two fio jobs, one per
#                                 vCPU (qids 1 and 2), random reads at
#                                 QD128, 64 commands per doorbell (its
#                                 one job)
#                       nvme-deep QEMU's nvme with deep's job
#   --commands N      commands per job (default 20000)
#   --perf LIST       the configurations whose jobs are profiled (perf
#                     record of the device's threads, a sample every
#                     100 us of their CPU time): own code per command;
#                     'all' (default) or 'none'
#   --window NS       dapustor-h3100's completion-window (default: the
#                     device's)
#   --out DIR         the table (cpu.txt), the samples (samples.txt), the
#                     profiles (perf/) and the plot (default $H3100_CACHE/bench-device-cpu)
#   --qemu PATH       default build/qemu-system-x86_64 (or $H3100_QEMU)
#
# The columns: ns of the device thread per command, less what it spends
# idle (its run time per second in a 3 s idle phase of the same boot,
# times the job's wall time), and the vCPU threads' ns per command (the
# guest, and under TCG the doorbell writes' MMIO handlers).  Under TCG a
# guest issues commands slowly, so the figure is the device's cost per
# command with the host's caches shared with an emulated CPU: an upper
# bound of what it costs under KVM.  docs/design/benchmarks.md, *Host CPU per
# command*.
set -euo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

qemu=${H3100_QEMU:-$H3100_BUILD/qemu-system-x86_64}
all_configs=nvme,off,on,iothread,vwc,mix,iot1,iot2,deep,nvme-deep
configs=$all_configs
commands=20000
perf_cfgs=all
perf_period=100000
window=''
out=${H3100_CACHE:-$HOME/.cache/dapustor-h3100}/bench-device-cpu

while [ $# -gt 0 ]; do
    case $1 in
    --configs) h3100_need "$@"; configs=$2; shift ;;
    --commands) h3100_need "$@"; commands=$2; shift ;;
    --perf) h3100_need "$@"; perf_cfgs=$2; shift ;;
    --window) h3100_need "$@"; window=$2; shift ;;
    --out) h3100_need "$@"; out=$2; shift ;;
    --qemu) h3100_need "$@"; qemu=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
[[ $commands =~ ^[1-9][0-9]*$ ]] || h3100_die "--commands: a positive integer"
[ -z "$window" ] || [[ $window =~ ^[0-9]+$ ]] || h3100_die "--window: ns, an integer"
known() { [[ ",$all_configs," == *",$1,"* ]]; }
IFS=, read -r -a cfgs <<<"$configs"
for c in "${cfgs[@]}"; do
    known "$c" || h3100_die "--configs: one of $all_configs, not '$c'"
done
[ "$perf_cfgs" != all ] || perf_cfgs=$configs
[ "$perf_cfgs" != none ] || perf_cfgs=''
IFS=, read -r -a pcfgs <<<"$perf_cfgs"
for c in "${pcfgs[@]}"; do
    known "$c" || h3100_die "--perf: all, none or configurations, not '$c'"
done
[ -x "$qemu" ] || h3100_die "no QEMU at $qemu (scripts/test.sh builds it)"
if [ -n "$perf_cfgs" ] && ! command -v perf >/dev/null; then
    h3100_die "--perf needs perf (apt install linux-perf), or --perf none"
fi
profiled() { [[ ",$perf_cfgs," == *",$1,"* ]]; }

h3100_tmpdir devcpu
watch_pid=''
# shellcheck disable=SC2317  # called by the trap
h3100_on_exit() { [ -z "$watch_pid" ] || kill "$watch_pid" 2>/dev/null || true; }
mkdir -p "$out"
rm -rf "$out/perf"
mkdir -p "$out/perf"
dbytes=$((1024 * 1024 * 1024))

# --- the guest script ----------------------------------------------------------
# Each job between two marks; after each mark the guest sleeps 1 s so the
# host samples the threads while the device is idle.  The commands are
# the drive's own count (SMART), for either device.
{
    echo "N=$commands"
    cat <<'GUEST'
cmds() {
    nvme smart-log /dev/nvme0 | awk -F: '/^host_(read|write)_commands/ {
        gsub(/[ ,]/, "", $2); n += $2 } END { print n + 0 }'
}
# the interrupts Linux took from the drive's I/O queues (nvme0q1..), all CPUs
irqs() {
    awk '$NF ~ /^nvme0q[1-9]/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i }
        END { print n + 0 }' /proc/interrupts
}
mark() { echo "@@MARK $*"; sleep 1; }
job() {  # job NAME FIO-OPTIONS...
    name=$1; shift
    c0=$(cmds) i0=$(irqs)
    mark begin "$name"
    fio --name="$name" --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \
        --size=512M --io_size=1T --number_ios="$N" \
        --randrepeat=1 --norandommap=1 --output-format=terse --terse-version=3 \
        "$@" >/tmp/j.t 2>/tmp/j.e || { cat /tmp/j.e; exit 1; }
    mark end "$name"
    c1=$(cmds) i1=$(irqs)
    echo "@@CMDS $name $((c1 - c0)) $((i1 - i0))"
}
fio --name=fill --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \
    --rw=write --bs=128k --iodepth=8 --size=512M >/dev/null 2>&1 || exit 1
mark begin idle
sleep 3
mark end idle
echo "@@CMDS idle 0 0"
if [ "$IOT" = 1 ]; then
    # one job per vCPU: blk-mq maps CPU N's submissions to qid N + 1
    set -- --numjobs=2 --cpus_allowed=0-1 --cpus_allowed_policy=split \
        --group_reporting
    job randread-qd32x2 --rw=randread --bs=4k --iodepth=32 "$@"
    job randwrite-qd32x2 --rw=randwrite --bs=4k --iodepth=32 "$@"
elif [ "$DEEP" = 1 ]; then
    # one job per vCPU (qids 1 and 2), 64 commands per doorbell
    job randread-qd128x2-b64 --rw=randread --bs=4k --iodepth=128 \
        --iodepth_batch_submit=64 --iodepth_batch_complete_min=64 \
        --numjobs=2 --cpus_allowed=0-1 --cpus_allowed_policy=split \
        --group_reporting
elif [ "$MIX" = 1 ]; then
    job mix --rw=randrw --rwmixread=50 --iodepth=16 \
        --bssplit=512/15:4k/40:8k/15:64k/15:128k/15 --blockalign=512
else
    job randread-qd1 --rw=randread --bs=4k --iodepth=1
    job randread-qd32 --rw=randread --bs=4k --iodepth=32
    job randwrite-qd1 --rw=randwrite --bs=4k --iodepth=1
    job randwrite-qd32 --rw=randwrite --bs=4k --iodepth=32
    # 32 commands per doorbell, and fio waits for all 32: one wake-up
    # of the device thread serves many commands
    job randread-qd32-batch --rw=randread --bs=4k --iodepth=32 \
        --iodepth_batch_submit=32 --iodepth_batch_complete_min=32
fi
GUEST
} >"$tmp/guest.body"

# --- the host side --------------------------------------------------------------
# threads PID: "NAME RUNTIME_NS" per thread (names with -name
# debug-threads=on: the main loop is the process's own name, vCPUs
# "CPU N/TCG", IOThreads "IO ID")
threads() {
    local t
    for t in /proc/"$1"/task/*; do
        printf '%s\t%s\t%s\n' "$(cat "$t/comm" 2>/dev/null)" \
            "$(cut -d' ' -f1 "$t/schedstat" 2>/dev/null)" \
            "$(awk '$1 == "voluntary_ctxt_switches:" { print $2 }' "$t/status" 2>/dev/null)"
    done
}
# sample CFG WHAT NAME: the threads' run times now, one line each, into
# samples.txt: CFG WHAT NAME NOW_NS THREAD RUNTIME_NS SLEEPS (voluntary
# context switches: each one a wait the thread was woken from)
sample() {
    local now pid
    pid=$(cat "$tmp/qemu.pid" 2>/dev/null) || return 0
    now=$(date +%s%N)
    threads "$pid" | while IFS=$'\t' read -r tname rt sw; do
        printf '%s %s %s %s %s %s %s\n' "$1" "$2" "$3" "$now" "${tname// /_}" "${rt:-0}" "${sw:-0}"
    done >>"$tmp/samples.txt"
}
# the device thread's name in CFG (iot1, iot2: the first of three)
dev_thread() {
    case $1 in
    iothread) echo IO_io0 ;;
    iot1|iot2) echo IO_io1 ;;
    *) echo qemu-system-x86 ;;
    esac
}
# the device's threads in CFG, as the table counts them
dev_threads() {
    case $1 in
    iot1|iot2) echo qemu-system-x86 IO_io1 IO_io2 ;;
    *) dev_thread "$1" ;;
    esac
}
# perf_tids CFG: their thread ids, comma-separated
perf_tids() {
    local n tids=''
    for n in $(dev_threads "$1"); do
        tids+=${tids:+,}$(pid_of_thread "$n")
    done
    echo "$tids"
}
# watch CFG: sample at each mark the guest prints; perf during each job
# of a profiled CFG.  Ends at the guest's end line (tail follows until
# this script exits, at the latest).
watch() {
    local cfg=$1 line what name ppid='' tpid
    rm -f "$tmp/watch.fifo"
    mkfifo "$tmp/watch.fifo"
    tail -n +1 -F --pid=$$ "$tmp/run.err" >"$tmp/watch.fifo" 2>/dev/null &
    tpid=$!
    while IFS= read -r line; do
        case $line in
        *'@@MARK '*)
            read -r what name <<<"${line#*@@MARK }"
            if [ "$what" = end ] && [ -n "$ppid" ]; then
                kill -INT "$ppid" 2>/dev/null || true
                wait "$ppid" 2>/dev/null || true
                ppid=''
            fi
            sample "$cfg" "$what" "$name"
            if [ "$what" = begin ] && [ "$name" != idle ] && profiled "$cfg"; then
                perf record -q -e cpu-clock -c "$perf_period" -t "$(perf_tids "$cfg")" \
                    -o "$out/perf/$cfg.$name.data" >/dev/null 2>&1 &
                ppid=$!
            fi
            ;;
        *'===H3100-GUEST-END'*) break ;;
        esac
    done <"$tmp/watch.fifo"
    kill "$tpid" 2>/dev/null || true
}
pid_of_thread() {
    local t pid
    pid=$(cat "$tmp/qemu.pid")
    for t in /proc/"$pid"/task/*; do
        [ "$(tr ' ' _ <"$t/comm")" = "$1" ] && { basename "$t"; return; }
    done
    echo "$pid"
}

device_args() {
    local d="driver=null-co,size=$dbytes,read-zeroes=on,if=none,id=d0"
    local h="dapustor-h3100,drive=d0,capacity=0.8T,model-params=user_bytes=$dbytes"
    h+=${window:+,completion-window=$window}
    case $1 in
    nvme|nvme-deep) echo "-drive $d -device nvme,drive=d0,serial=bench" ;;
    off) echo "-drive $d -device $h,timing=off" ;;
    on|mix|deep) echo "-drive $d -device $h" ;;
    iothread) echo "-object iothread,id=io0 -drive $d -device $h,iothread=io0" ;;
    vwc) echo "-drive $d -device $h,vwc=on" ;;
    iot1|iot2)
        # a list of structs: JSON -device, one word (no spaces)
        local m='{"iothread":"io1","vqs":[1,2]}'
        [ "$1" = iot1 ] || m='{"iothread":"io1","vqs":[1]},{"iothread":"io2","vqs":[2]}'
        printf '%s' "-object iothread,id=io1 -object iothread,id=io2 -drive $d "
        printf '%s' "-device {\"driver\":\"dapustor-h3100\",\"drive\":\"d0\","
        printf '%s' "\"capacity\":\"0.8T\",\"model-params\":\"user_bytes=$dbytes\","
        [ -z "$window" ] || printf '%s' "\"completion-window\":$window,"
        printf '%s\n' "\"iothread-vq-mapping\":[$m]}"
        ;;
    esac
}
# vCPUs of CFG's guest
smp() { case $1 in iot1|iot2|deep|nvme-deep) echo 2 ;; *) echo 1 ;; esac; }

: >"$tmp/samples.txt"
for cfg in "${cfgs[@]}"; do
    { echo "MIX=$([ "$cfg" = mix ] && echo 1 || echo 0)"
      echo "IOT=$(case $cfg in iot1|iot2) echo 1 ;; *) echo 0 ;; esac)"
      echo "DEEP=$(case $cfg in deep|nvme-deep) echo 1 ;; *) echo 0 ;; esac)"
      cat "$tmp/guest.body"; } >"$tmp/guest.sh"
    : >"$tmp/run.err"
    rm -f "$tmp/qemu.pid"
    watch "$cfg" &
    watch_pid=$!
    h3100_say "$cfg: booting (TCG, $(smp "$cfg") vCPU), $commands commands per job"
    # shellcheck disable=SC2046  # the device's options are words
    if ! "$H3100_PROJECT/scripts/guest/guest-run.sh" --qemu "$qemu" --accel tcg --smp "$(smp "$cfg")" \
        --no-disk --stream --pidfile "$tmp/qemu.pid" --timeout 900 "$tmp/guest.sh" -- \
        -name "bench-$cfg,debug-threads=on" $(device_args "$cfg") \
        >"$tmp/run.out" 2>>"$tmp/run.err"; then
        sed 's/^/  | /' "$tmp/run.out" "$tmp/run.err" >&2
        h3100_die "the guest run of $cfg failed (output above)"
    fi
    sleep 0.5
    kill "$watch_pid" 2>/dev/null || true
    wait "$watch_pid" 2>/dev/null || true
    watch_pid=''
    grep '^@@CMDS ' "$tmp/run.out" | sed "s/^@@CMDS /$cfg /" >>"$tmp/cmds.txt"
done
cp "$tmp/samples.txt" "$out/samples.txt"

# --- the table ------------------------------------------------------------------
# rows.txt (per config and job: CONFIG JOB COMMANDS WALL_NS DEVICE_NS
# VCPU_NS WAKES) and the table: scripts/lib/device_cpu_report.py
python3 "$H3100_PROJECT/scripts/lib/device_cpu_report.py" "$tmp/samples.txt" "$tmp/cmds.txt" \
    --rows "$tmp/rows.txt" --io "$(dev_thread iothread)" --main "$(dev_thread on)" \
    --configs "$configs" --commands "$commands" | tee "$out/cpu.txt"
cp "$tmp/rows.txt" "$out/rows.txt"

# --- the device's own code per command ----------------------------------------------
# each profile as text, then the table: scripts/lib/perf_own_code.py
if [ -n "$perf_cfgs" ]; then
    for f in "$out"/perf/*.data; do
        [ -s "$f" ] || continue
        perf report -i "$f" -n --no-children --sort symbol --stdio -q -g none \
            >"${f%.data}.txt" 2>/dev/null || true
    done
    groups=''
    ! profiled on || groups=on:randread-qd32
    echo
    python3 "$H3100_PROJECT/scripts/lib/perf_own_code.py" "$tmp/rows.txt" "$out/perf" \
        --objects "$(dirname "$(readlink -f "$qemu")")" --period "$perf_period" \
        ${groups:+--groups "$groups"} --plot-data "$tmp/own.dat" | tee "$out/own.txt"
fi

# --- the plot ---------------------------------------------------------------------
if command -v gnuplot >/dev/null; then
    awk '{ printf "%s/%s %.0f\n", $1, $2, $5 / $3 }' \
        "$tmp/rows.txt" >"$tmp/plot.dat"
    gnuplot <<EOF || h3100_say "gnuplot failed; no plot"
set terminal png size 1000,500
set output '$out/bench-device-cpu.png'
set title 'Device thread host CPU per command (TCG guest, null-co)'
set ylabel 'ns per command'
set style fill solid 0.6
set boxwidth 0.7
set xtics rotate by -45 font ',8'
set grid ytics
plot '$tmp/plot.dat' using 0:2:xtic(1) with boxes notitle
EOF
    [ -s "$out/bench-device-cpu.png" ] && h3100_say "plot: $out/bench-device-cpu.png"
    if [ -s "$tmp/own.dat" ]; then
        gnuplot <<EOF || h3100_say "gnuplot failed; no plot of the own code"
set terminal png size 1000,500
set output '$out/bench-device-own.png'
set title "The device thread's CPU per command, and its own code's (perf)"
set ylabel 'ns per command'
set logscale y
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.6
set xtics rotate by -45 font ',8'
set grid ytics
set key outside top center horizontal
plot '$tmp/own.dat' using 2:xtic(1) title 'device thread', '' using 3 title 'own code (hw/ + models/, or hw/nvme)'
EOF
        [ -s "$out/bench-device-own.png" ] && h3100_say "plot: $out/bench-device-own.png"
    fi
fi
h3100_say "table: $out/cpu.txt"
