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
qemu=${H3100_QEMU:-$H3100_BUILD/qemu-system-x86_64}
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
sim=${H3100_SIM:-$H3100_BUILD/tools/h3100-sim}
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
# The plots of the run (the device's telemetry, one row per virtual second),
# then the report: scripts/lib/sql_report.py reads the guest's output
# and prints it (and writes the --summary).
plots=''
if [ -s "$workdir/telemetry.jsonl" ] && command -v "${H3100_GNUPLOT:-gnuplot}" >/dev/null 2>&1 &&
   "$H3100_PROJECT/scripts/bench/h3100-plot.sh" "$workdir/telemetry.jsonl" \
       -o "$workdir/plots" --title "MariaDB + sysbench oltp_read_write on dapustor-h3100 $capacity" \
       >"$workdir/plots.txt" 2>&1; then
    plots=$workdir/plots.txt
fi
disk_alloc=''
[ ! -e "$disk" ] || disk_alloc=$(du -h "$disk" | cut -f1)
python3 "$H3100_PROJECT/scripts/lib/sql_report.py" "$out" --workdir "$workdir" \
    --engine "$engine" --instances "$instances" --drive "$drive" --dev-cap "$dev_cap" \
    --state "$state" --timing "$timing" --workload "$workload" --tables "$tables" \
    --table-size "$table_size" --scale "$scale" --buffer-pool "$buffer_pool" \
    --threads "$threads" --duration "$duration" --seed "$seed" --smp "$smp" --mem "$mem" \
    --accel "${used:-$accel}" --ishift "$ishift" --disk "$disk" --disk-alloc "$disk_alloc" \
    --wall "$wall" --plots "$plots" --summary "$summary" \
    --vlog-tool "$H3100_BUILD/tools/h3100-vlog"
[ -z "$summary" ] || cp "$out" "$summary.guest"
