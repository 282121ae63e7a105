#!/usr/bin/env bash
# The SQL workload on the emulated H3100: boot the Linux
# guest (the 'sql' flavour of scripts/guest/guest-image.sh) with a full-size
# dapustor-h3100, its database prepared once on ext4 on the drive, and run
# sysbench on MariaDB (or pgbench on PostgreSQL) under deterministic virtual
# time; print the benchmark's figures, what the drive did during the run
# (commands, latency, WAF, reclaim) and the drive report read inside the
# guest (SMART, the H3100 model log D0h).  docs/guide/sql.md.
#
#   scripts/bench/sql-bench.sh [options]
#
# The workload (defaults: sysbench oltp_read_write, 8 tables x 100,000 rows,
# about 200 MB, against a 32 MiB buffer pool, 1 thread, 30 s, shift 1):
#   --workload NAME     sysbench on MariaDB: oltp_read_write (default),
#                       oltp_read_only or oltp_write_only (one prepared
#                       database serves all three); or pgbench: PostgreSQL's
#                       TPC-B-like pgbench (--scale; --buffer-pool is its
#                       shared_buffers)
#   --tables N          sysbench tables (default 8)
#   --table-size N      rows per table (default 100000)
#   --scale N           pgbench's scale factor (default 20: 2 M accounts,
#                       about 300 MB)
#   --buffer-pool MB    InnoDB buffer pool (default 32); a database several
#                       times larger makes page reads and flushing reach
#                       the drive
#   --threads N         client threads (default 1: the virtual CPU is one
#                       CPU's worth of instructions, docs/guide/sql.md)
#   --instances N       N database servers (1 to 4), each on its own GPT
#                       partition of the drive (1: the whole drive, no
#                       partition table), each with its own buffer pool and
#                       --threads clients; TPS is their sum, per instance too
#   --duration S        run time in seconds (default 30)
#   --report-interval S a per-interval TPS line every S s (default 10)
#   --seed N            the benchmark's random seed and the device's seed
#                       (default 1; instance I uses N + I - 1)
# Time:
#   --icount-shift N|none  deterministic virtual time (default 1): TCG with
#                       -icount shift=N,sleep=off, 2^N ns per guest
#                       instruction (N=1: 500 M a second), so TPS and
#                       latencies describe the configuration, not the host's
#                       load; none: plain TCG (or KVM, --accel), the host's
#                       clock
#   --accel auto|kvm|tcg  without icount (default auto: KVM only if it
#                       really boots a guest)
# The drive:
#   --drive KIND        h3100 (default), h3200 (the same NAND with less
#                       over-provisioning: --capacity 0.8T gives the H3200
#                       0.96T, and so on) or qemu-nvme (QEMU's own nvme
#                       device on the same image)
#   --capacity C        an H3100 profile's, as h3100-sim --profiles names
#                       them (h3100-0.8t: 0.8T, the default); the backing
#                       file is a sparse file of the full user capacity
#   --state fresh|steady  fresh (default): the drive as the database left
#                       it; steady: the drive preconditioned (every LBA
#                       written, then twice its capacity at random, by
#                       h3100-sim --precondition rand:2, cached in WORKDIR),
#                       so the run meets steady-state reclaim (not with
#                       qemu-nvme)
#   --timing on|off     the drive model's timing (default on; off: commands
#                       complete as soon as their data is moved)
# The database:
#   (default) prepared once per configuration (sizes, seed, capacity, the
#                       guest's prepare step, the guest image) under plain
#                       TCG, kept as WORKDIR/prepared-KEY.qcow2 with the
#                       drive's state file; every run boots a qcow2 overlay
#                       of it and a copy of that state, and starts at the run
#   --unprepared        make the file system and the database in the same
#                       boot as the run instead (raw or qcow2, --format)
#   --format raw|qcow2  the --unprepared backing file (default raw)
#   --keep-disk         --unprepared: keep the backing file and reuse it
# Output and the rest:
#   --workdir DIR       backing files, caches, the last run's guest output
#                       (default $H3100_CACHE/sql-bench)
#   --summary FILE      also write the run's figures as KEY=VALUE lines
#                       (scripts/bench/sql-compare.sh reads them), and the guest's
#                       output as FILE.guest
#   --qemu PATH         default build/qemu-system-x86_64 (or $H3100_QEMU)
#   --mem MB            guest RAM (default 1536)   --smp N  vCPUs (default 2)
#   --timeout S         kill a run's guest after S s (default: 600 + 20 x
#                       duration under icount); preparing has 1800 s more
#                       per instance
#   --log FILE          keep the guest's kernel console log
#   --prepared          accepted for older command lines (the default)
#
# On 2 host cores: preparing the default database takes about 4 minutes
# once; each run about 5 (boot and 30 s of virtual time at shift 1).
# Results come back over the second serial port (scripts/guest/guest-run.sh).
set -eEuo pipefail
# shellcheck source=scripts/lib/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"
# a command that stops the script under set -e says which (a run once
# ended here without a word after its guest had finished)
trap 'printf "[sql-bench] stopped at line %s: %s (exit %s)\n" "$LINENO" "$BASH_COMMAND" "$?" >&2' ERR

capacity=0.8T
format=raw
workdir=$H3100_CACHE/sql-bench
keep_disk=0
duration=30
tables=8
table_size=100000
threads=1
seed=1
accel=${H3100_ACCEL:-auto}
ishift=1
timing=on
buffer_pool=32
prepared=1
workload=oltp_read_write
scale=20
instances=1
rinterval=10
drive=h3100
state=fresh
summary=''
qemu=${H3100_QEMU:-$H3100_PROJECT/build/qemu-system-x86_64}
mem=1536
smp=2
tmo=''
log=''

while [ $# -gt 0 ]; do
    case $1 in
    --capacity) capacity=$2; shift ;;
    --format) format=$2; shift ;;
    --workdir) workdir=$2; shift ;;
    --keep-disk) keep_disk=1 ;;
    --duration) duration=$2; shift ;;
    --tables) tables=$2; shift ;;
    --table-size) table_size=$2; shift ;;
    --threads) threads=$2; shift ;;
    --seed) seed=$2; shift ;;
    --accel) accel=$2; shift ;;
    --icount-shift) ishift=$2; shift ;;
    --timing) timing=$2; shift ;;
    --buffer-pool) buffer_pool=$2; shift ;;
    --prepared) prepared=1 ;;
    --unprepared) prepared=0 ;;
    --workload) workload=$2; shift ;;
    --scale) scale=$2; shift ;;
    --instances) instances=$2; shift ;;
    --report-interval) rinterval=$2; shift ;;
    --drive) drive=$2; shift ;;
    --state) state=$2; shift ;;
    --summary) summary=$2; shift ;;
    --qemu) qemu=$2; shift ;;
    --mem) mem=$2; shift ;;
    --smp) smp=$2; shift ;;
    --timeout) tmo=$2; shift ;;
    --log) log=$2; shift ;;
    -h|--help) h3100_usage "$0"; exit 0 ;;
    *) h3100_die "unknown option: $1 (try --help)" ;;
    esac
    shift
done

# The capacities and user bytes (IDEMA LBA counts) are the drive
# profiles' (h3100-sim --profiles, --show-config).  The database is
# prepared on the H3100 of --capacity; the H3200 of the same NAND (less
# over-provisioning) is a little larger.
sim=${H3100_SIM:-$H3100_PROJECT/build/tools/h3100-sim}
[ -x "$sim" ] || h3100_die "no h3100-sim at $sim (meson compile -C build)"
capacity=${capacity^^}
h3100_check_capacity "$sim" "$capacity"
bytes=$(h3100_profile_value "$sim" "h3100-${capacity,,}" user_bytes)
case $drive in
h3100) dev_cap=$capacity; dev_bytes=$bytes ;;
h3200) h3200=$(h3100_same_nand "$sim" "h3100-${capacity,,}" h3200) ||
           h3100_die "no H3200 profile of the NAND of h3100-${capacity,,}"
       dev_cap=${h3200#h3200-}
       dev_cap=${dev_cap^^}
       dev_bytes=$(h3100_profile_value "$sim" "$h3200" user_bytes) ;;
qemu-nvme) dev_cap=$capacity; dev_bytes=$bytes ;;
*) h3100_die "--drive: h3100, h3200 or qemu-nvme" ;;
esac
profile=$drive-$(tr 'T' 't' <<<"$dev_cap")
case $workload in
oltp_read_write|oltp_read_only|oltp_write_only) engine=mariadb ;;
pgbench) engine=postgres ;;
*) h3100_die "--workload: oltp_read_write, oltp_read_only, oltp_write_only or pgbench" ;;
esac
case $state in
fresh) ;;
steady) [ "$drive" != qemu-nvme ] || h3100_die "--state steady: a state of the H3100 model, not for qemu-nvme"
        [ "$prepared" = 1 ] || h3100_die "--state steady runs on the prepared database (not --unprepared)" ;;
*) h3100_die "--state: fresh or steady" ;;
esac
# The prepared state is the H3100's: an H3200 starting from nothing would
# find none of the database mapped, and read it faster than it would.
if [ "$drive" = h3200 ] && [ "$prepared" = 1 ] && [ "$state" = fresh ]; then
    h3100_die "--drive h3200 on the prepared database needs --state steady (or --unprepared)"
fi
case $format in raw|qcow2) ;; *) h3100_die "--format: raw or qcow2" ;; esac
for v in duration tables table_size threads seed mem smp buffer_pool rinterval scale instances; do
    if ! [[ ${!v} =~ ^[0-9]+$ ]] || [ "${!v}" -eq 0 ]; then
        h3100_die "--${v//_/-} must be a positive integer"
    fi
done
case $timing in on|off) ;; *) h3100_die "--timing: on or off" ;; esac
[ "$instances" -le 4 ] || h3100_die "--instances: 1 to 4"
[ "$ishift" != none ] || ishift=''
if [ -n "$ishift" ] && ! [[ $ishift =~ ^[0-9]$ ]]; then
    h3100_die "--icount-shift: 0 to 9, or none"
fi
[ -n "$tmo" ] || tmo=$((600 + 2 * duration * (ishift ? 10 : 1)))
[ -x "$qemu" ] || h3100_die "no QEMU at $qemu (scripts/build-qemu.sh builds it)"


# --- the backing file: sparse, full size, fresh for every run ---------------
mkdir -p "$workdir"
# qemu-img: the one built next to QEMU, else Debian's
find_qemu_img() {
    qemu_img=$(dirname "$(readlink -f "$qemu")")/qemu-img
    [ -x "$qemu_img" ] || qemu_img=$(command -v qemu-img || true)
    if [ -z "$qemu_img" ]; then
        h3100_say "installing qemu-utils (qemu-img) for qcow2 images"
        h3100_as_root env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends qemu-utils >&2
        qemu_img=$(command -v qemu-img) || h3100_die "qcow2 images need qemu-img"
    fi
}
# new_disk FILE FORMAT BYTES: a fresh, sparse, full-size backing file
new_disk() {
    rm -f "$1"
    if [ "$2" = raw ]; then
        truncate -s "$3" "$1"
    else
        find_qemu_img
        "$qemu_img" create -q -f qcow2 "$1" "$3"
    fi
    h3100_say "backing file $1 ($2, $3 bytes, sparse)"
}
disk=$workdir/$profile.$format
if [ "$prepared" = 1 ]; then
    :   # below, once the guest's script exists
elif [ "$keep_disk" = 0 ] || [ ! -e "$disk" ]; then
    new_disk "$disk" "$format" "$dev_bytes"
else
    h3100_say "reusing $disk (--keep-disk)"
fi

# --- the guest's script -------------------------------------------------------
h3100_tmpdir sql
# guest_script MODE: the guest's script for MODE (full, prepare or run):
# the run's parameters, the prepare part and the run part
guest_script() {
local mode=$1
{
    printf 'THREADS=%s\nDURATION=%s\nBP=%s\nWORKLOAD=%s\nRI=%s\n' \
        "$threads" "$duration" "$buffer_pool" "$workload" "$rinterval"
    guest_prepare_part "$mode"
    guest_run_part
} >"$tmp/sql-$mode.sh"
}
# guest_prepare_part MODE: what makes the database (its text is part of
# the prepared database's key)
guest_prepare_part() {
    printf 'ENGINE=%s\nTABLES=%s\nTABLE_SIZE=%s\nSCALE=%s\nSEED=%s\nINSTANCES=%s\nMODE=%s\n' \
        "$engine" "$tables" "$table_size" "$scale" "$seed" "$instances" "$1"
    cat "$H3100_PROJECT/scripts/lib/sql-guest-prepare.sh"
}
# guest_run_part: the run's part of the guest's script (not in the
# prepared database's key: changing it does not prepare again)
guest_run_part() {
    cat "$H3100_PROJECT/scripts/lib/sql-guest-run.sh"
}

# --- boot ----------------------------------------------------------------------
h3100_say "$drive $dev_cap ($state), $workload, $([ "$engine" = postgres ] && echo "scale $scale" || echo "${tables} tables x ${table_size} rows"), ${threads} threads," \
    "${duration}s run, seed $seed, accel $accel${ishift:+ icount shift=$ishift}, timing $timing, ${mem} MiB guest"
# boot_guest MODE DISK FORMAT DEVICE OUT [ACCEL-ARGS...]: one boot; sets rc, wall
boot_guest() {
    local mode=$1 d=$2 f=$3 device=$4 o=$5
    shift 5
    guest_script "$mode"
    local args=(--flavour sql --no-disk --qemu "$qemu" --mem "$mem"
                --smp "$smp" --timeout "$tmo" --append "h3100.wait=30" "$@")
    [ -z "$log" ] || args+=(--log "$log")
    start=$SECONDS
    rc=0
    "$H3100_PROJECT/scripts/guest/guest-run.sh" "${args[@]}" "$tmp/sql-$mode.sh" -- \
        -drive "file=$d,if=none,id=d0,format=$f,cache=none,aio=threads" \
        -device "$device" \
        >"$o" 2> >(tee "$workdir/last-run.err" >&2) || rc=$?
    wall=$((SECONDS - start))
    sleep 0.2   # let tee finish
}
accel_args=(--accel "$accel")
[ -z "$ishift" ] || accel_args+=(--icount-shift "$ishift")
h3100_dev="dapustor-h3100,drive=d0,capacity=$capacity,seed=$seed"
case $drive in
qemu-nvme) device="nvme,drive=d0,serial=SQLBENCH0001" ;;
*) device="dapustor-h3100,drive=d0,model=$drive,capacity=$dev_cap,seed=$seed"
   device+=",timing=$timing,telemetry=$workdir/telemetry.jsonl" ;;
esac
rm -f "$workdir/telemetry.jsonl"
# steady_state: the drive's state file after h3100-sim's preconditioning
# (the whole LBA space written, then twice at random), made once per
# profile, seed and simulator build; its device part is the defaults
steady_state() {
    local key f
    key=$(sha256sum "$sim" | cut -c1-12)
    f=$workdir/steady-$profile-seed$seed-$key.h3s
    if [ ! -f "$f" ]; then
        rm -f "$workdir/steady-$profile-seed$seed-"*.h3s
        h3100_say "preconditioning the $profile model once (h3100-sim --precondition rand:2; cached as $f)"
        "$sim" --profile "$profile" --seed "$seed" --precondition rand:2 \
            --runtime 0.001 --save "$f.tmp" >/dev/null ||
            h3100_die "h3100-sim --precondition failed"
        mv "$f.tmp" "$f"
    fi
    steady=$f
}
if [ "$prepared" = 1 ]; then
    # the database, prepared once per configuration (plain TCG/KVM: its
    # timing does not matter), then an overlay and a copy of the drive's
    # state for every run.  The key is the prepare step's script (not the
    # run's parameters), the workload's size and the guest image.
    key=$({ printf '%s\n' "$capacity"
            guest_prepare_part prepare
            "$H3100_PROJECT/scripts/guest/guest-image.sh" --flavour sql >/dev/null 2>&1 &&
                cat "$H3100_CACHE/guest-sql/recipe"; } | sha256sum | cut -c1-12)
    base=$workdir/prepared-$key.qcow2
    if [ ! -f "$base.done" ]; then
        h3100_say "preparing the database once (${tables} x ${table_size} rows; cached as $base)"
        new_disk "$base" qcow2 "$bytes"
        rm -f "$base.h3s"
        # it shows its progress; the time it takes grows with the database
        tmo=$((tmo + 1800 * instances)) \
            boot_guest prepare "$base" qcow2 "$h3100_dev,state=$base.h3s,state-interval=0" \
            "$workdir/last-prepare.txt" --accel "$accel" --stream
        grep -q '^@@STEP .* done$' "$workdir/last-prepare.txt" ||
            h3100_die "preparing the database failed (exit $rc; $workdir/last-prepare.txt)"
        h3100_say "prepared in ${wall}s: $(du -h "$base" | cut -f1) allocated"
        : >"$base.done"
    fi
    find_qemu_img
    disk=$workdir/run-overlay.qcow2
    rm -f "$disk"
    "$qemu_img" create -q -f qcow2 -b "$base" -F qcow2 "$disk" "$dev_bytes"
    format=qcow2
    if [ "$state" = steady ]; then
        steady_state
        cp "$steady" "$workdir/run.h3s"
    elif [ "$drive" = h3100 ]; then
        cp "$base.h3s" "$workdir/run.h3s"
    fi
    [ "$drive" = qemu-nvme ] || device+=",state=$workdir/run.h3s,state-interval=0"
    mode=run
else
    mode=full
fi
out=$workdir/last-run.txt
boot_guest "$mode" "$disk" "$format" "$device" "$out" "${accel_args[@]}"
if [ "$keep_disk" = 0 ] || [ "$prepared" = 1 ]; then
    rm -f "$disk" "$workdir/run.h3s"
fi
used=$(sed -n '/.*booting (\([a-z]*\).*/{s//\1/p;q}' "$workdir/last-run.err")
if [ "$rc" != 0 ] || ! grep -q '^@@STEP .* done$' "$out"; then
    if [ -s "$out" ]; then
        h3100_say "the guest run failed (exit $rc) after ${wall}s; its output ($out):"
        sed 's/^/  > /' "$out" >&2
    else
        h3100_say "the guest run failed (exit $rc) after ${wall}s (guest-run.sh showed why above)"
    fi
    exit "$([ "$rc" != 0 ] && echo "$rc" || echo 1)"
fi

# --- report ------------------------------------------------------------------
# smartv PHASE KEY: a SMART value from a phase
smartv() { awk -v p="$1" -v k="$2" '$1 == "@@SMART" && $2 == p {
    split($3, a, "="); if (a[1] == k) { print a[2]; exit } }' "$out"; }
info() { awk -v k="$1" '$1 == "@@INFO" && $2 == k { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$out"; }
mysqlv() { awk -F'[ =]' -v k="$1" '$1 == "@@MYSQL" && $2 == k { print $3; exit }' "$out"; }
steps() { awk '$1 == "@@STEP" { printf "%s=%s ", $3, $2 }' "$out"; }
human() { awk -v b="$1" 'BEGIN { u = "B KB MB GB TB"; n = split(u, s, " ");
    for (i = 1; b >= 1000 && i < n; i++) b /= 1000; printf "%.2f %s", b, s[i] }'; }
# delta KEY FROM TO
delta() { local a b; a=$(smartv "$2" "$1"); b=$(smartv "$3" "$1")
    [ -n "$a" ] && [ -n "$b" ] && echo $((b - a)) || echo "?"; }

# the benchmark's figures, whichever it was: tps qps lavg lp95 lp99 errs
# run_s, series (per-interval TPS as T:TPS,...) and per-instance TPS,
# summed (rates) or merged (latency distributions) over the instances
# sbi I: instance I's benchmark output
sbi() { awk -v i="$1" '$1 == "@@BENCH-BEGIN" { p = ($2 == i); next }
    $1 == "@@BENCH-END" { p = 0 } p' "$out"; }
# field I NAME: a value from instance I's sysbench output; pgv I NAME: from
# its pgbench output.  The first match is kept but the whole input read:
# a reader that exits early kills sbi with SIGPIPE, which pipefail and
# set -e turn into a silent stop of this script.
field() { sbi "$1" | awk -v k="$2" '!d && index($0, k) { sub(/^[^:]*:[ \t]*/, ""); print; d = 1 }'; }
pgv() { sbi "$1" | awk -v k="$2" '!d && index($0, k) == 1 { sub(/^[^=:]*[=:] */, ""); print $1; d = 1 }'; }
# sum_series: per-interval "T TPS" lines of all instances, summed per T
sum_series() { awk '{ if (!($1 in v)) o[++n] = $1; v[$1] += $2 }
    END { for (i = 1; i <= n; i++) printf "%s%s:%s", (i > 1 ? "," : ""), o[i], v[o[i]] }'; }
per_inst=()
tps=0; qps=0; lsum=0; errs=0
for ((k = 1; k <= instances; k++)); do
    if [ "$engine" = postgres ]; then
        t=$(pgv "$k" 'tps = '); q=0; l=$(pgv "$k" 'latency average')
        e=$(pgv "$k" 'number of failed transactions')
        [ "$k" != 1 ] || run_s=$(pgv "$k" 'duration')
    else
        t=$(field "$k" 'transactions:' | awk '{ gsub(/[()]/, ""); print $2 }')
        q=$(field "$k" 'queries:' | awk '{ gsub(/[()]/, ""); print $2 }')
        l=$(field "$k" 'avg:')
        e=$(field "$k" 'ignored errors:' | awk '{ print $1 }')
        [ "$k" != 1 ] || run_s=$(field "$k" 'total time:' | tr -d 's')
    fi
    per_inst+=("${t:-0}")
    read -r tps qps lsum errs < <(awk -v t="${t:-0}" -v q="${q:-0}" -v l="${l:-0}" -v e="${e:-0}" \
        -v T="$tps" -v Q="$qps" -v L="$lsum" -v E="$errs" \
        'BEGIN { printf "%.2f %.2f %.4f %d\n", T + t, Q + q, L + l * t, E + e }')
done
lavg=$(awk -v l="$lsum" -v t="$tps" 'BEGIN { if (t > 0) printf "%.2f", l / t; else printf "-" }')
if [ "$engine" = postgres ]; then
    qps=-
    pglat() { awk -v k="$1" '$1 == "@@PGLAT" { for (i = 2; i <= NF; i++) {
        split($i, a, "="); if (a[1] == k) printf "%.2f", a[2] / 1000 } }' "$out"; }
    lp95=$(pglat p95_us)
    lp99=$(pglat p99_us)
    # "progress: 2.0 s, 35.5 tps, lat 28.143 ms stddev 5.231, 0 failed"
    series=$(awk '/^progress: / { print $2 + 0, $4 + 0 }' "$out" | sum_series)
else
    # hist_pct P: the P-th percentile (ms) of sysbench's latency
    # histograms, the instances' merged (their buckets are the same)
    hist_pct() { awk '/^Latency histogram/ { h = 1; next }
            h && /^ *[0-9.]+ \|/ { c[$1] += $NF; next }
            h && !/\|/ && !/value/ { h = 0 }
            END { for (v in c) print v, c[v] }' "$out" | sort -g |
        awk -v p="$1" '{ v[NR] = $1; c[NR] = $2; tot += $2 }
            END { for (i = 1; i <= NR; i++) { s += c[i]; if (s >= p / 100 * tot) { print v[i]; exit } } }'; }
    lp95=$(hist_pct 95)
    lp99=$(hist_pct 99)
    # "[ 10s ] thds: 4 tps: 31.20 ..."
    series=$(awk '/^\[ *[0-9]+s \]/ { t = $2; sub(/s$/, "", t)
        for (i = 1; i < NF; i++) if ($i == "tps:") print t, $(i + 1) }' "$out" | sum_series)
fi
# the run's window, from the guest's snapshots just before and after it:
# bst PHASE N: field N of /sys/block/nvme0n1/stat; vlog PHASE NAME: a
# field of the model log (include/h3100/vlog.h's name; empty without the
# log), as h3100-vlog --fields decodes the phase's hex bytes
bst() { awk -v p="$1" -v n="$2" '$1 == "@@BSTAT" && $2 == p { print $(n + 2); exit }' "$out"; }
vlog_tool=$H3100_PROJECT/build/tools/h3100-vlog
vlog_fields() {  # vlog_fields PHASE: NAME=VALUE lines, or nothing
    local b
    b=$(awk -v p="$1" '$1 == "@@VLOG" && $2 == p { for (i = 3; i <= NF; i++) printf "\\x%s", $i; exit }' "$out")
    [ -n "$b" ] && [ -x "$vlog_tool" ] || return 0
    printf '%b' "$b" | "$vlog_tool" --fields 2>/dev/null || true
}
declare -A vlog_at=()
for _p in runstart runend; do
    while IFS='=' read -r _k _v; do vlog_at[$_p.$_k]=$_v; done < <(vlog_fields "$_p")
done
vlog() { echo "${vlog_at[$1.$2]:-}"; }
# Reads, writes and bytes as the drive counted them (SMART; the block
# layer's write count also holds Write Zeroes, from InnoDB's file
# extension); the mean time per request as the block layer saw it
sdelta() { local a b; a=$(smartv runstart "$1"); b=$(smartv runend "$1"); echo $((${b:-0} - ${a:-0})); }
rd=$(sdelta host_read_commands); wr=$(sdelta host_write_commands)
rd_bytes=$(($(sdelta data_units_read) * 512000)); wr_bytes=$(($(sdelta data_units_written) * 512000))
run_iops=$(awk -v n=$((rd + wr)) -v t="$run_s" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')
run_rpct=$(awk -v r="$rd" -v w="$wr" 'BEGIN { printf "%.0f", r + w ? 100 * r / (r + w) : 0 }')
# mean_us MS N: mean latency per request (us) from the block layer's ticks
mean_us() { awk -v ms="$1" -v n="$2" 'BEGIN { if (n) printf "%.0f", 1000 * ms / n; else printf "-" }'; }
run_rlat=$(mean_us $(($(bst runend 4) - $(bst runstart 4))) $(($(bst runend 1) - $(bst runstart 1))))
run_wlat=$(mean_us $(($(bst runend 8) - $(bst runstart 8))) $(($(bst runend 5) - $(bst runstart 5))))
run_host=''; run_nand=''; run_waf='-'; run_gc='-'; run_moved='-'; run_stalls='-'
if [ -n "$(vlog runend version)" ] && [ -n "$(vlog runstart version)" ]; then
    run_host=$(( $(vlog runend host_write_bytes) - $(vlog runstart host_write_bytes) ))
    run_nand=$(( $(vlog runend nand_write_bytes) - $(vlog runstart nand_write_bytes) ))
    run_waf=$(awk -v n="$run_nand" -v h="$run_host" 'BEGIN { if (h > 0) printf "%.2f", n / h; else printf "-" }')
    run_gc=$(( $(vlog runend gc_victims) - $(vlog runstart gc_victims) ))
    run_moved=$(( $(vlog runend gc_slots_moved) - $(vlog runstart gc_slots_moved) ))
    run_stalls=$(( $(vlog runend wbuf_stalls) - $(vlog runstart wbuf_stalls) ))
fi
# the device's own latency: telemetry rows (per virtual second) and the
# session's distribution written at exit (the run is most of the session)
dev_mean='-'; dev_p99='-'
if [ -s "$workdir/telemetry.jsonl" ]; then
    dev_mean=$(awk -F'[:,]' '/"t":/ { n = 0; m = 0
            for (i = 1; i < NF; i++) { k = $i; gsub(/[ "{]/, "", k)
                if (k == "interval") dt = $(i + 1); if (k == "iops") n = $(i + 1)
                if (k == "lat_mean_us") m = $(i + 1) }
            c += n * dt; s += n * dt * m }
        END { if (c) printf "%.0f", s / c; else printf "-" }' "$workdir/telemetry.jsonl")
    dev_p99=$(awk '/"cdf":/ { sub(/"cdf":/, ""); gsub(/[][{}]/, " "); n = split($0, f, /[ ,]+/)
            for (i = 1; i + 1 <= n; i++) if (f[i] != "") { lat = f[i]; fr = f[i + 1]; i++
                if (fr + 0 >= 0.99) { printf "%.0f", lat; exit } } }' "$workdir/telemetry.jsonl")
fi
duw_b=$(smartv boot data_units_written); duw_e=$(smartv end data_units_written)
dur_b=$(smartv boot data_units_read);    dur_e=$(smartv end data_units_read)

case $drive in
qemu-nvme) drive_name="QEMU's nvme device (the same image)" ;;
*) drive_name="the DapuStor ${drive^^} $dev_cap ($state$([ "$timing" = on ] || echo ", timing off"))" ;;
esac
if [ "$engine" = postgres ]; then
    what="pgbench (TPC-B-like) on PostgreSQL"
    size="scale $scale ($((scale * 100000)) accounts), shared_buffers ${buffer_pool} MiB"
else
    what="sysbench $workload on MariaDB"
    size="$tables tables x $table_size rows, buffer pool ${buffer_pool} MiB"
fi
printf '\n=== %s on %s (guest) ===\n' "$what" "$drive_name"
printf 'drive       %s\n' "$(info drive)"
printf 'guest       Linux %s, %s%s, %s vCPU, %s MiB; %s; ext4 on /dev/nvme0n1\n' \
    "$(info kernel)" "${used:-$accel}" "${ishift:+ icount shift=$ishift}" "$smp" "$mem" "$(info server)"
printf 'workload    %s, %s, %s threads, %s s, seed %s\n' \
    "$workload" "$size" "$threads" "$duration" "$seed"
printf 'TPS         %s\n' "$tps"
[ "$instances" = 1 ] ||
    printf 'instances   %s on partitions of the drive: TPS %s\n' "$instances" "${per_inst[*]}"
printf 'QPS         %s\n' "$qps"
printf 'latency     avg %s ms, p95 %s ms, p99 %s ms (%s)\n' "$lavg" "$lp95" "$lp99" \
    "$([ "$engine" = postgres ] && echo "pgbench's transaction log" || echo "sysbench's histogram")"
if [ "$engine" = postgres ]; then
    printf 'errors      %s failed transactions\n' "$errs"
else
    printf 'errors      %s ignored, %s reconnects\n' "$errs" \
        "$(awk '$1 == "reconnects:" { n += $2 } END { print n + 0 }' "$out")"
fi

printf '\n=== the drive during the run (%s s) ===\n' "$run_s"
printf 'commands    %s reads + %s writes: %s IOPS, %s%% reads; %s read, %s written (SMART)\n' \
    "$rd" "$wr" "$run_iops" "$run_rpct" "$(human "$rd_bytes")" "$(human "$wr_bytes")"
printf 'latency     read %s us, write %s us mean (the guest block layer: /sys/block/nvme0n1/stat)\n' \
    "$run_rlat" "$run_wlat"
if [ "$dev_mean" != - ]; then
    printf '            %s us mean, %s us p99 in the device (telemetry; the whole session)\n' "$dev_mean" "$dev_p99"
fi
if [ -n "$run_host" ]; then
    printf 'NAND        %s written for %s from the host: WAF %s; reclaim %s runs, %s x 4 KiB moved; %s buffer stalls\n' \
        "$(human "$run_nand")" "$(human "$run_host")" "$run_waf" "$run_gc" "$run_moved" "$run_stalls"
fi
if [ -n "$summary" ]; then
    {
        printf 'drive=%s\nstate=%s\ntiming=%s\ncapacity=%s\nworkload=%s\n' \
            "$drive" "$state" "$timing" "$dev_cap" "$workload"
        printf 'tps=%s\nqps=%s\nlat_avg_ms=%s\nlat_p95_ms=%s\nlat_p99_ms=%s\nerrors=%s\n' \
            "$tps" "$qps" "$lavg" "$lp95" "$lp99" "$errs"
        printf 'run_s=%s\nreads=%s\nwrites=%s\niops=%s\nread_pct=%s\n' \
            "$run_s" "$rd" "$wr" "$run_iops" "$run_rpct"
        printf 'read_lat_us=%s\nwrite_lat_us=%s\ndev_lat_mean_us=%s\ndev_lat_p99_us=%s\n' \
            "$run_rlat" "$run_wlat" "$dev_mean" "$dev_p99"
        printf 'waf=%s\nreclaim_runs=%s\nreclaim_moved=%s\nwbuf_stalls=%s\nwall_s=%s\n' \
            "$run_waf" "$run_gc" "$run_moved" "$run_stalls" "$wall"
        printf 'tps_series=%s\ninstances=%s\ntps_instances=%s\n' "$series" "$instances" \
            "$(IFS=,; echo "${per_inst[*]}")"
    } >"$summary"
    cp "$out" "$summary.guest"
fi

printf '\n=== drive report (nvme smart-log inside the guest; 1 data unit = 512,000 B) ===\n'
printf '%-26s %14s %14s %14s %14s\n' 'SMART delta by phase' 'mkfs' 'bootstrap+prep' 'run+shutdown' 'total'
for k in data_units_written data_units_read host_write_commands host_read_commands; do
    printf '%-26s %14s %14s %14s %14s\n' "$k" "$(delta "$k" boot mkfs)" \
        "$(delta "$k" mkfs prepare)" "$(delta "$k" prepare end)" "$(delta "$k" boot end)"
done
if [ -n "$duw_b" ] && [ -n "$duw_e" ]; then
    printf 'host bytes written         %s (%s data units x 512,000 B)\n' \
        "$(human $(((duw_e - duw_b) * 512000)))" "$((duw_e - duw_b))"
    printf 'host bytes read            %s\n' "$(human $(((dur_e - dur_b) * 512000)))"
fi
printf 'percentage used            %s %%\n' "$(smartv end percent_used)"
printf 'available spare            %s %%\n' "$(smartv end avail_spare)"
printf 'media errors               %s\n' "$(smartv end media_errors)"
# the model log's bytes (hex, from the guest's od), decoded by h3100-vlog
mapfile -t vb < <(awk '$1 == "@@VLOGHEX" { for (i = 2; i <= NF; i++) print $i }' "$out")
milli() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
declare -A vf=()
if [ "${#vb[@]}" -ge 256 ] && [ -x "$vlog_tool" ]; then
    for b in "${vb[@]}"; do printf '%b' "\\x$b"; done >"$workdir/last-vlog.bin"
    while IFS='=' read -r _k _v; do vf[$_k]=$_v; done < <("$vlog_tool" --fields "$workdir/last-vlog.bin" 2>/dev/null)
fi
if [ -n "${vf[version]:-}" ]; then
    printf 'NAND bytes written         %s (model log D0h; host bytes %s; since the drive started)\n' \
        "$(human "${vf[nand_write_bytes]}")" "$(human "${vf[host_write_bytes]}")"
    printf 'WAF                        %s (NAND / host bytes; last %s s: %s)\n' \
        "$(milli "${vf[waf_milli]}")" "${vf[recent_window_s]}" "$(milli "${vf[recent_waf_milli]}")"
    printf 'reclaim                    %s runs, %s x 4 KiB moved; %s write-buffer stalls\n' \
        "${vf[gc_victims]}" "${vf[gc_slots_moved]}" "${vf[wbuf_stalls]}"
    "$vlog_tool" "$workdir/last-vlog.bin" >"$workdir/last-vlog.txt" 2>&1 || true
    printf '(model log decoded by h3100-vlog: %s)\n' "$workdir/last-vlog.txt"
else
    printf 'NAND bytes written, WAF    model log D0h unavailable: %s\n' \
        "$(awk '$1 == "@@VENDOR" { $1 = ""; print; exit }' "$out")"
fi
# the host's view: the device's telemetry file, one row per virtual second
if [ -s "$workdir/telemetry.jsonl" ]; then
    awk -F'[:,]' '/"t":/ { for (i = 1; i < NF; i++) {
            k = $i; gsub(/[ "{]/, "", k)
            if (k == "iops" && $(i + 1) + 0 > peak) peak = $(i + 1) + 0
            if (k == "lat_p99_us" && $(i + 1) + 0 > p99) p99 = $(i + 1) + 0
            if (k == "temp_c") temp = $(i + 1) + 0
          } rows++ }
        END { printf "telemetry (host)           %d rows of 1 s; peak %.0f IOPS, worst p99 %.0f us, %.1f C at the end\n", rows, peak, p99, temp }' \
        "$workdir/telemetry.jsonl"
    if command -v "${H3100_GNUPLOT:-gnuplot}" >/dev/null 2>&1 &&
       "$H3100_PROJECT/scripts/bench/h3100-plot.sh" "$workdir/telemetry.jsonl" \
           -o "$workdir/plots" --title "MariaDB + sysbench oltp_read_write on dapustor-h3100 $capacity" \
           >"$workdir/plots.txt" 2>&1; then
        printf '(plots of the run: %s)\n' "$(tr '\n' ' ' <"$workdir/plots.txt")"
    fi
fi
[ "$engine" != mariadb ] || printf '(MariaDB status after the run, before shutdown%s: Innodb_data_written %s, Innodb_os_log_written %s, Innodb_data_fsyncs %s)\n' \
    "$([ "$instances" = 1 ] || echo " (instance 1)")" "$(human "$(mysqlv Innodb_data_written)")" "$(human "$(mysqlv Innodb_os_log_written)")" \
    "$(mysqlv Innodb_data_fsyncs)"
printf '(host: backing file %s%s; guest steps at uptime s: %s; wall %d s)\n' \
    "$disk" "$([ -e "$disk" ] && echo ", $(du -h "$disk" | cut -f1) allocated" || echo ' (deleted)')" \
    "$(steps)" "$wall"
printf '(guest output: %s)\n' "$out"
