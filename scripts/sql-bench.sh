#!/usr/bin/env bash
# The SQL workload on the emulated H3100 (issue 4, item 3): boot the Linux
# guest (the 'sql' flavour of scripts/guest-image.sh) with a full-size
# dapustor-h3100, make ext4 on /dev/nvme0n1, start MariaDB with its datadir
# there, run sysbench oltp_read_write (prepare + run), and print sysbench's
# figures and the drive report read inside the guest with nvme smart-log
# and the H3100 vendor log (CAh: NAND bytes written, WAF).
#
#   scripts/sql-bench.sh [options]
#
#   --capacity 0.8T|1.6T|3.2T|6.4T   drive (default 0.8T); the backing file is
#                       a sparse file of the full user capacity
#   --format raw|qcow2  backing file format (default raw; qcow2 uses qemu-img,
#                       from Debian's qemu-utils if none is next to QEMU)
#   --workdir DIR       where the backing file lives (default
#                       $H3100_CACHE/sql-bench); created empty for every run
#                       and deleted afterwards, unless --keep-disk
#   --keep-disk         keep the backing file, and reuse the one a former
#                       --keep-disk run left (its drive data; the SMART
#                       counters start again from zero: they live in QEMU)
#   --duration S        sysbench run time in seconds (default 120)
#   --tables N          sysbench tables (default 4)
#   --table-size N      rows per table (default 25000)
#   --threads N         sysbench threads (default 4)
#   --seed N            sysbench --rand-seed and the device's seed (default 1)
#   --accel auto|kvm|tcg  (default auto: KVM only if it really boots a guest)
#   --icount-shift N    deterministic virtual time: TCG with -icount
#                       shift=N,sleep=off (the guest's CPU runs 2^N ns per
#                       instruction: N=3 is 125 M instructions a second);
#                       TPS and latencies then describe the configuration,
#                       not the host's load (docs/sql.md)
#   --timing on|off     the drive model's timing (default on; off: commands
#                       complete as soon as their data is moved)
#   --buffer-pool MB    InnoDB buffer pool (default 256); a database several
#                       times larger makes page reads and flushing reach
#                       the drive
#   --prepared          prepare the database once per configuration (tables,
#                       rows, seed, capacity, this script) and keep it in
#                       WORKDIR/prepared-KEY.qcow2 with the drive's state
#                       file; every run then boots a qcow2 overlay of it and
#                       a copy of that state, and starts at the run
#   --qemu PATH         default build/qemu-system-x86_64 (or $H3100_QEMU)
#   --mem MB            guest RAM (default 1536)   --smp N  vCPUs (default 2)
#   --timeout S         kill the guest after S s (default: 600 + 2 x duration)
#   --log FILE          keep the guest's kernel console log
#
# Under TCG on 2 host cores the defaults take about 4 minutes (boot, mkfs,
# MariaDB bootstrap, prepare, 120 s run).  Results come back over the second
# serial port (scripts/guest-run.sh); the full guest output is kept in
# WORKDIR/last-run.txt.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

capacity=0.8T
format=raw
workdir=$H3100_CACHE/sql-bench
keep_disk=0
duration=120
tables=4
table_size=25000
threads=4
seed=1
accel=${H3100_ACCEL:-auto}
ishift=''
timing=on
buffer_pool=256
prepared=0
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

# User capacities (bytes) of the H3100 profiles: IDEMA LBA counts,
# 97696368 + 1953504 x (GB - 50) sectors of 512 B.
case $capacity in
0.8T|0.8t) capacity=0.8T; bytes=800166076416 ;;
1.6T|1.6t) capacity=1.6T; bytes=1600321314816 ;;
3.2T|3.2t) capacity=3.2T; bytes=3200631791616 ;;
6.4T|6.4t) capacity=6.4T; bytes=6401252745216 ;;
*) h3100_die "--capacity: 0.8T, 1.6T, 3.2T or 6.4T" ;;
esac
case $format in raw|qcow2) ;; *) h3100_die "--format: raw or qcow2" ;; esac
for v in duration tables table_size threads seed mem smp buffer_pool; do
    if ! [[ ${!v} =~ ^[0-9]+$ ]] || [ "${!v}" -eq 0 ]; then
        h3100_die "--${v//_/-} must be a positive integer"
    fi
done
case $timing in on|off) ;; *) h3100_die "--timing: on or off" ;; esac
if [ -n "$ishift" ] && ! [[ $ishift =~ ^[0-9]$ ]]; then
    h3100_die "--icount-shift: 0 to 9"
fi
[ -n "$tmo" ] || tmo=$((600 + 2 * duration * (ishift ? 4 : 1)))
[ -x "$qemu" ] || h3100_die "no QEMU at $qemu (scripts/build-qemu.sh builds it)"

say() { printf '[sql-bench] %s\n' "$*" >&2; }

# --- the backing file: sparse, full size, fresh for every run ---------------
mkdir -p "$workdir"
# qemu-img: the one built next to QEMU, else Debian's
find_qemu_img() {
    qemu_img=$(dirname "$(readlink -f "$qemu")")/qemu-img
    [ -x "$qemu_img" ] || qemu_img=$(command -v qemu-img || true)
    if [ -z "$qemu_img" ]; then
        say "installing qemu-utils (qemu-img) for qcow2 images"
        h3100_as_root env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends qemu-utils >&2
        qemu_img=$(command -v qemu-img) || h3100_die "qcow2 images need qemu-img"
    fi
}
# new_disk FILE FORMAT: a fresh, sparse, full-size backing file
new_disk() {
    rm -f "$1"
    if [ "$2" = raw ]; then
        truncate -s "$bytes" "$1"
    else
        find_qemu_img
        "$qemu_img" create -q -f qcow2 "$1" "$bytes"
    fi
    say "backing file $1 ($2, $bytes bytes, sparse)"
}
disk=$workdir/h3100-$capacity.$format
if [ "$prepared" = 1 ]; then
    :   # below, once the guest's script exists
elif [ "$keep_disk" = 0 ] || [ ! -e "$disk" ]; then
    new_disk "$disk" "$format"
else
    say "reusing $disk (--keep-disk)"
fi

# --- the guest's script -------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/h3100-sql.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# guest_script MODE: the guest's script for MODE (full, prepare or run)
guest_script() {
local mode=$1
{
    printf 'TABLES=%s\nTABLE_SIZE=%s\nTHREADS=%s\nDURATION=%s\nSEED=%s\nBP=%s\nMODE=%s\n' \
        "$tables" "$table_size" "$threads" "$duration" "$seed" "$buffer_pool" "$mode"
    cat <<'GUEST'
# runs inside the guest (busybox sh), see scripts/sql-bench.sh
up() { cut -d' ' -f1 /proc/uptime; }
step() { echo "@@STEP $(up) $*"; }
die() { echo "@@FAIL $*"; [ -f /mnt/db/data/err.log ] && tail -n 30 /mnt/db/data/err.log; exit 1; }
# smart PHASE: the SMART / Health log as key=value lines (nvme-cli JSON)
smart() {
    nvme smart-log /dev/nvme0 -o json >/tmp/smart.json 2>/tmp/smart.err ||
        { echo "@@SMART $1 error=$(cat /tmp/smart.err)"; return; }
    tr -d '{}", \t' </tmp/smart.json | awk -F: -v ph="$1" 'NF == 2 && $1 != "" {
        printf "@@SMART %s %s=%s\n", ph, $1, $2 }'
}
S=/run/mysqld.sock
D=/mnt/db/data
SH=/usr/share/mysql
OPTS="--no-defaults --user=root --datadir=$D --socket=$S --skip-networking
 --skip-name-resolve --lc-messages-dir=$SH --character-sets-dir=$SH/charsets
 --tmpdir=/tmp --log-error=$D/err.log --innodb-buffer-pool-size=${BP}M
 --innodb-log-file-size=96M --innodb-flush-log-at-trx-commit=1
 --innodb-flush-method=O_DIRECT --skip-log-bin --max-connections=64"

step start
echo "@@INFO kernel $(uname -r)"
echo "@@INFO drive $(nvme id-ctrl /dev/nvme0 | awk -F': *' '/^mn /{m=$2} /^fr /{f=$2} /^sn /{s=$2} END{print m" fw "f" sn "s}')"
echo "@@INFO nsze_bytes $(($(cat /sys/block/nvme0n1/size) * 512))"
smart boot

# MODE: full (mkfs .. run), prepare (mkfs .. prepare, then stop), run
# (the prepared file system: mount, start MariaDB, run)
if [ "$MODE" = run ]; then
    mkdir -p /mnt/db
    mount -t ext4 -o noatime /dev/nvme0n1 /mnt/db || die "mount the prepared database"
    smart mkfs
else
step mkfs
# nodiscard: the drive is fresh (nothing mapped); lazy init + noinit_itable:
# no background zeroing of inode tables / journal during the benchmark.
# Full path: busybox sh prefers its own (ext2-only) mke2fs applet.
/usr/sbin/mke2fs -t ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 \
    /dev/nvme0n1 || die "mke2fs"
mkdir -p /mnt/db
mount -t ext4 -o noatime,noinit_itable /dev/nvme0n1 /mnt/db || die "mount"
smart mkfs

step bootstrap
mkdir -p "$D" || die "mkdir $D"
# what mariadb-install-db feeds mariadbd --bootstrap (no help tables, no
# sys schema, no test db), plus sysbench's database
{ echo "create database if not exists mysql;"; echo "use mysql;"
  echo "SET @auth_root_socket=NULL;"
  cat $SH/mysql_system_tables.sql $SH/mysql_performance_tables.sql \
      $SH/mysql_system_tables_data.sql
  echo "CREATE DATABASE sbtest;"
} | mariadbd $OPTS --bootstrap --log-warnings=0 --enforce-storage-engine="" \
      --max_allowed_packet=8M --net_buffer_length=16K >/tmp/bootstrap.out 2>&1 ||
    { cat /tmp/bootstrap.out; die "mariadbd --bootstrap"; }
fi

step mysqld
mariadbd $OPTS --skip-grant-tables &
mpid=$!
i=0
while [ ! -S $S ] && [ $i -lt 1200 ]; do
    kill -0 $mpid 2>/dev/null || die "mariadbd exited"
    sleep 0.25; i=$((i + 1))
done
[ -S $S ] || die "no MariaDB socket after 300 s"
echo "@@INFO mariadb $(mariadb -uroot --socket=$S -N -e 'select version()')"
SB="--db-driver=mysql --mysql-socket=$S --mysql-user=root --mysql-db=sbtest
 --tables=$TABLES --table-size=$TABLE_SIZE"
if [ "$MODE" != run ]; then
step prepare
sysbench oltp_read_write $SB --threads="$THREADS" prepare >/tmp/prepare.out 2>&1 &
spid=$!
while kill -0 $spid 2>/dev/null; do
    sleep 10
    echo "@@PROGRESS prepare: $(grep -c '^Inserting' /tmp/prepare.out) of $TABLES tables started, $(grep -c '^Creating a secondary' /tmp/prepare.out) indexed"
done
wait $spid || { cat /tmp/prepare.out; die "sysbench prepare"; }
fi
sync
smart prepare

# stop_db: MariaDB stopped, the file system unmounted, SMART read
stop_db() {
    step stop
    kill -TERM $mpid
    wait $mpid
    sync
    umount /mnt/db || die "umount"
    smart end
}
if [ "$MODE" = prepare ]; then
    stop_db
    step done
    exit 0
fi
step run
echo "@@SYSBENCH-BEGIN"
sysbench oltp_read_write $SB --threads="$THREADS" --time="$DURATION" \
    --events=0 --rand-seed="$SEED" --percentile=95 --report-interval=10 run 2>&1
rc=$?
echo "@@SYSBENCH-END rc=$rc"
[ $rc = 0 ] || die "sysbench run"
mariadb -uroot --socket=$S -N -e "show global status where Variable_name in
 ('Innodb_data_written','Innodb_data_read','Innodb_os_log_written',
  'Innodb_data_fsyncs','Innodb_pages_written')" |
    awk '{ printf "@@MYSQL %s=%s\n", $1, $2 }'
stop_db

step vendorlog
# The H3100 vendor log (CAh: NAND bytes, WAF, reclaim, buffer stalls) as
# hex bytes, decoded on the host; the OCP extended SMART log (C0h) as
# nvme-cli prints it.
if nvme get-log /dev/nvme0 --log-id=0xca --log-len=512 --raw-binary \
        >/tmp/vlog.bin 2>/tmp/vlog.err; then
    echo "@@VENDOR available"
    od -An -v -tx1 /tmp/vlog.bin | sed 's/^/@@VLOGHEX /'
else
    echo "@@VENDOR unavailable $(tr '\n' ' ' </tmp/vlog.err)"
fi
echo "@@OCPLOG-BEGIN"
nvme ocp smart-add-log /dev/nvme0 2>&1
echo "@@OCPLOG-END"
echo "@@SMARTLOG-BEGIN"
nvme smart-log /dev/nvme0
echo "@@SMARTLOG-END"
step done
GUEST
} >"$tmp/sql-$mode.sh"
}

# --- boot ----------------------------------------------------------------------
say "capacity $capacity, ${tables} tables x ${table_size} rows, ${threads} threads," \
    "${duration}s run, seed $seed, accel $accel${ishift:+ icount shift=$ishift}, timing $timing, ${mem} MiB guest"
# boot_guest MODE DISK FORMAT DEVOPTS OUT [ACCEL-ARGS...]: one boot; sets rc, wall
boot_guest() {
    local mode=$1 d=$2 f=$3 devopts=$4 o=$5
    shift 5
    guest_script "$mode"
    local args=(--flavour sql --no-disk --qemu "$qemu" --mem "$mem"
                --smp "$smp" --timeout "$tmo" --append "h3100.wait=30" "$@")
    [ -z "$log" ] || args+=(--log "$log")
    start=$SECONDS
    rc=0
    "$H3100_PROJECT/scripts/guest-run.sh" "${args[@]}" "$tmp/sql-$mode.sh" -- \
        -drive "file=$d,if=none,id=d0,format=$f,cache=none,aio=threads" \
        -device "dapustor-h3100,drive=d0,capacity=$capacity,seed=$seed$devopts" \
        >"$o" 2> >(tee "$workdir/last-run.err" >&2) || rc=$?
    wall=$((SECONDS - start))
    sleep 0.2   # let tee finish
}
accel_args=(--accel "$accel")
[ -z "$ishift" ] || accel_args+=(--icount-shift "$ishift")
devopts=",timing=$timing,telemetry=$workdir/telemetry.jsonl"
if [ "$prepared" = 1 ]; then
    # the database, prepared once per configuration (plain TCG/KVM: its
    # timing does not matter), then an overlay and a copy of the drive's
    # state for every run
    key=$({ printf '%s\n' "$capacity $tables $table_size $seed"
            sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1
            "$H3100_PROJECT/scripts/guest-image.sh" --flavour sql >/dev/null 2>&1 &&
                cat "$H3100_CACHE/guest-sql/recipe"; } | sha256sum | cut -c1-12)
    base=$workdir/prepared-$key.qcow2
    if [ ! -f "$base.done" ]; then
        say "preparing the database once (${tables} x ${table_size} rows; cached as $base)"
        new_disk "$base" qcow2
        rm -f "$base.h3s"
        boot_guest prepare "$base" qcow2 ",state=$base.h3s,state-interval=0" \
            "$workdir/last-prepare.txt" --accel "$accel" --stream
        grep -q '^@@STEP .* done$' "$workdir/last-prepare.txt" ||
            h3100_die "preparing the database failed (exit $rc; $workdir/last-prepare.txt)"
        say "prepared in ${wall}s: $(du -h "$base" | cut -f1) allocated"
        : >"$base.done"
    fi
    find_qemu_img
    disk=$workdir/run-overlay.qcow2
    rm -f "$disk"
    "$qemu_img" create -q -f qcow2 -b "$base" -F qcow2 "$disk"
    cp "$base.h3s" "$workdir/run.h3s"
    format=qcow2
    devopts+=",state=$workdir/run.h3s,state-interval=0"
    mode=run
else
    mode=full
fi
out=$workdir/last-run.txt
boot_guest "$mode" "$disk" "$format" "$devopts" "$out" "${accel_args[@]}"
if [ "$keep_disk" = 0 ] || [ "$prepared" = 1 ]; then
    rm -f "$disk" "$workdir/run.h3s"
fi
used=$(sed -n 's/.*booting (\([a-z]*\).*/\1/p' "$workdir/last-run.err" | head -n1)
if [ "$rc" != 0 ] || ! grep -q '^@@STEP .* done$' "$out"; then
    if [ -s "$out" ]; then
        say "the guest run failed (exit $rc) after ${wall}s; its output ($out):"
        sed 's/^/  > /' "$out" >&2
    else
        say "the guest run failed (exit $rc) after ${wall}s (guest-run.sh showed why above)"
    fi
    exit "$([ "$rc" != 0 ] && echo "$rc" || echo 1)"
fi

# --- report ------------------------------------------------------------------
# field NAME: a value from sysbench's output
sb() { sed -n '/^@@SYSBENCH-BEGIN/,/^@@SYSBENCH-END/p' "$out"; }
field() { sb | awk -v k="$1" 'index($0, k) { sub(/^[^:]*:[ \t]*/, ""); print; exit }'; }
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

tps=$(field 'transactions:' | awk '{ gsub(/[()]/, ""); print $2 }')
qps=$(field 'queries:' | awk '{ gsub(/[()]/, ""); print $2 }')
lavg=$(field 'avg:')
lp95=$(field '95th percentile:')
duw_b=$(smartv boot data_units_written); duw_e=$(smartv end data_units_written)
dur_b=$(smartv boot data_units_read);    dur_e=$(smartv end data_units_read)

printf '\n=== sysbench oltp_read_write on MariaDB on the DapuStor H3100 %s (guest) ===\n' "$capacity"
printf 'drive       %s\n' "$(info drive)"
printf 'guest       Linux %s, %s%s, %s vCPU, %s MiB; %s; ext4 on /dev/nvme0n1\n' \
    "$(info kernel)" "${used:-$accel}" "${ishift:+ icount shift=$ishift}" "$smp" "$mem" "$(info mariadb)"
printf 'workload    %s tables x %s rows, %s threads, %s s, seed %s\n' \
    "$tables" "$table_size" "$threads" "$duration" "$seed"
printf 'TPS         %s\n' "$tps"
printf 'QPS         %s\n' "$qps"
printf 'latency     avg %s ms, p95 %s ms\n' "$lavg" "$lp95"
printf 'errors      %s ignored, %s reconnects\n' \
    "$(field 'ignored errors:' | awk '{ print $1 }')" "$(field 'reconnects:' | awk '{ print $1 }')"

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
# the vendor log's bytes (hex, from the guest's od) and fields in them
mapfile -t vb < <(awk '$1 == "@@VLOGHEX" { for (i = 2; i <= NF; i++) print $i }' "$out")
# vle OFFSET BYTES: a little-endian field of the vendor log
vle() { local v=0 i; for ((i = $1 + $2 - 1; i >= $1; i--)); do v=$(((v << 8) | 16#${vb[i]})); done; echo "$v"; }
milli() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
if [ "${#vb[@]}" -ge 256 ] && [ "$(vle 0 2)" = 1 ]; then
    printf 'NAND bytes written         %s (vendor log CAh; host bytes %s; since the drive started)\n' \
        "$(human "$(vle 16 8)")" "$(human "$(vle 8 8)")"
    printf 'WAF                        %s (NAND / host bytes; last %s s: %s)\n' \
        "$(milli "$(vle 24 8)")" "$(vle 4 4)" "$(milli "$(vle 32 8)")"
    printf 'reclaim                    %s runs, %s x 4 KiB moved; %s write-buffer stalls\n' \
        "$(vle 64 8)" "$(vle 72 8)" "$(vle 112 8)"
    vlog_tool=$H3100_PROJECT/build/tools/h3100-vlog
    if [ -x "$vlog_tool" ]; then
        for b in "${vb[@]}"; do printf '%b' "\\x$b"; done >"$workdir/last-vlog.bin"
        "$vlog_tool" "$workdir/last-vlog.bin" >"$workdir/last-vlog.txt" 2>&1 || true
        printf '(vendor log decoded by h3100-vlog: %s)\n' "$workdir/last-vlog.txt"
    fi
else
    printf 'NAND bytes written, WAF    vendor log CAh unavailable: %s\n' \
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
       "$H3100_PROJECT/scripts/h3100-plot.sh" "$workdir/telemetry.jsonl" \
           -o "$workdir/plots" --title "MariaDB + sysbench oltp_read_write on dapustor-h3100 $capacity" \
           >"$workdir/plots.txt" 2>&1; then
        printf '(plots of the run: %s)\n' "$(tr '\n' ' ' <"$workdir/plots.txt")"
    fi
fi
printf '(MariaDB status after the run, before shutdown: Innodb_data_written %s, Innodb_os_log_written %s, Innodb_data_fsyncs %s)\n' \
    "$(human "$(mysqlv Innodb_data_written)")" "$(human "$(mysqlv Innodb_os_log_written)")" \
    "$(mysqlv Innodb_data_fsyncs)"
printf '(host: backing file %s%s; guest steps at uptime s: %s; wall %d s)\n' \
    "$disk" "$([ -e "$disk" ] && echo ", $(du -h "$disk" | cut -f1) allocated" || echo ' (deleted)')" \
    "$(steps)" "$wall"
printf '(guest output: %s)\n' "$out"
