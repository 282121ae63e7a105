#!/usr/bin/env bash
# Guest SQL test (scripts/bench/sql-bench.sh, scripts/bench/sql-compare.sh), short:
#  - the main command's workload, small (MariaDB + sysbench oltp_read_write
#    in the guest on a full-size 0.8 TB H3100; a prepared database, -icount),
#    on the H3100 with its timing off and on (sql-compare.sh): the read
#    latency the guest's block layer sees and the device's must differ;
#  - sysbench's oltp_read_only and oltp_write_only, briefly, on the same
#    prepared database under plain TCG;
#  - PostgreSQL's pgbench with two instances on two partitions of the drive,
#    made in the same boot as the run (--unprepared), under plain TCG;
#  - the host left alone: MariaDB, sysbench and PostgreSQL come unpacked
#    from their Debian packages into the guest image, no database package
#    is installed on the host and no database server runs there.
#
#   tests/guest/test_guest_sql.sh [QEMU]
#
# Prints ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

scripts=$GUEST_HERE/../../scripts
db_pkgs() {
    dpkg-query -W -f='${Package} ${Status}\n' 'mariadb-server*' 'mysql-server*' \
        'postgresql*' 2>/dev/null | awk '$NF == "installed" { print $1 }' | tr '\n' ' '
}
# sv FILE KEY: a value from a run's summary (sql-bench.sh --summary)
sv() { awk -F= -v k="$2" '$1 == k { sub(/^[^=]*=/, ""); print; exit }' "$1"; }
# gt A B FACTOR: A > B x FACTOR (decimals)
gt() { awk -v a="${1:-0}" -v b="${2:-0}" -v f="$3" 'BEGIN { exit !(a + 0 > (b + 0) * f) }'; }
before=$(db_pkgs)

# --- MariaDB + sysbench as the main command runs it, timing off and on -------
# One prepared database (sql-bench.sh keys it by its sizes, not by the
# run's options) serves every sysbench run of this test: prepared once,
# then each run boots an overlay of it.
#
# What the guest sees of the drive on a database this small is its
# latency: the block layer's mean read latency and the device's.  Its TPS
# moves by less than a 10-20 s run's own swings (InnoDB stalls of up to
# 0.8 s with an 8 MiB buffer pool): off/on gave 61.47/61.71, 61.70/61.69
# (2 vCPUs), 31.26/26.89, 33.69/32.59 and 29.87/30.58 (1 vCPU) on five
# preparations.  The TPS effect is measured on the main command's default
# workload (docs/guide/sql.md), not here.
db=(--workdir "$tmp/sql" --tables 4 --table-size 50000 --buffer-pool 8)
"$scripts/bench/sql-compare.sh" ${1:+--qemu "$1"} --configs off,fresh --out "$tmp/cmp" \
    "${db[@]}" --threads 1 --duration 5 >"$tmp/cmp.out" 2>"$tmp/cmp.err"
rc=$?
check $rc "sql-compare.sh --configs off,fresh ran (rc $rc)"
[ $rc = 0 ] || tail -20 "$tmp/cmp.err" | sed 's/^/# /'
grep -E '^(drive|guest|workload|TPS|latency|errors|WAF) ' "$tmp/cmp/fresh.txt" | sed 's/^/# /'
for c in off fresh; do
    tps=$(awk '$1 == "TPS" { print $2 }' "$tmp/cmp/$c.txt")
    gt "$tps" 0 1 && grep -q '^errors      0 ignored, 0 reconnects' "$tmp/cmp/$c.txt"
    check $? "$c: sysbench oltp_read_write made transactions without errors (TPS ${tps:-none})"
done
zcat "${H3100_CACHE:-$HOME/.cache/dapustor-h3100}/guest-sql/initramfs.cpio.gz" |
    cpio -t >"$tmp/image.list" 2>/dev/null
grep -qx 'usr/sbin/mariadbd' "$tmp/image.list" &&
    grep -qx 'usr/lib/postgresql/15/bin/postgres' "$tmp/image.list"
check $? "mariadbd and postgres are in the guest image"
sed -n '/^configuration/,/^$/p' "$tmp/cmp.out" | sed 's/^/# /'
off=$(sv "$tmp/cmp/off.summary" tps); on=$(sv "$tmp/cmp/fresh.summary" tps)
rd_off=$(sv "$tmp/cmp/off.summary" read_lat_us); rd_on=$(sv "$tmp/cmp/fresh.summary" read_lat_us)
gt "$rd_on" "$rd_off" 1.4
check $? "the guest's block layer saw reads 1.4x slower with the timing on ($rd_on us vs $rd_off us; TPS $on vs $off)"
gt "$(sv "$tmp/cmp/fresh.summary" dev_lat_mean_us)" "$(sv "$tmp/cmp/off.summary" dev_lat_mean_us)" 3
check $? "the device's mean latency with timing on is over 3x timing off's"
grep -q '^H3100 timing off ' "$tmp/cmp.out" && grep -q '^H3100 fresh ' "$tmp/cmp.out" &&
    { ! command -v gnuplot >/dev/null || [ -s "$tmp/cmp/sql-compare-tps.png" ]; }
check $? "one table with both rows, and the TPS plot"
[ "$(grep -c 'preparing the database once' "$tmp/cmp.err")" = 1 ]
check $? "both runs booted the one prepared database"

# --- sysbench's other two OLTP scripts on the same database, plain TCG -----------
for w in oltp_read_only oltp_write_only; do
    "$scripts/bench/sql-bench.sh" ${1:+--qemu "$1"} "${db[@]}" --workload "$w" \
        --icount-shift none --duration 5 --timeout 600 --summary "$tmp/$w.sum" \
        >"$tmp/$w.out" 2>"$tmp/$w.err"
    rc=$?
    [ $rc = 0 ] || tail -20 "$tmp/$w.err" | sed 's/^/# /'
    [ $rc = 0 ] && gt "$(sv "$tmp/$w.sum" tps)" 0 1 && [ "$(sv "$tmp/$w.sum" errors)" = 0 ] &&
        [ "$(sv "$tmp/$w.sum" workload)" = "$w" ] && ! grep -q 'preparing the database' "$tmp/$w.err"
    check $? "sysbench $w made transactions without errors on the prepared database (rc $rc, TPS $(sv "$tmp/$w.sum" tps))"
done
# the run's WAF: the model log D0h before and after it, by h3100-vlog --fields
waf=$(sv "$tmp/oltp_write_only.sum" waf)
awk -v w="$waf" 'BEGIN { exit !(w + 0 >= 1) }'
check $? "oltp_write_only: the drive's WAF during the run from its model log ($waf)"

# --- pgbench, two instances on two partitions, made in the run's boot ------------
"$scripts/bench/sql-bench.sh" ${1:+--qemu "$1"} --workdir "$tmp/pg" --workload pgbench \
    --scale 2 --instances 2 --threads 2 --duration 5 --buffer-pool 16 \
    --unprepared --icount-shift none --timeout 600 \
    --summary "$tmp/pg.sum" >"$tmp/pg.out" 2>"$tmp/pg.err"
rc=$?
check $rc "sql-bench.sh --workload pgbench --instances 2 ran (rc $rc)"
[ $rc = 0 ] || tail -20 "$tmp/pg.err" | sed 's/^/# /'
grep -E '^(guest|workload|TPS|instances|latency|errors) ' "$tmp/pg.out" | sed 's/^/# /'
IFS=, read -r t1 t2 <<<"$(sv "$tmp/pg.sum" tps_instances)"
gt "$t1" 0 1 && gt "$t2" 0 1 &&
    awk -v a="$t1" -v b="$t2" -v t="$(sv "$tmp/pg.sum" tps)" \
        'BEGIN { d = a + b - t; exit !(d < 0.02 && d > -0.02) }'
check $? "both pgbench instances made transactions and TPS is their sum ($t1 + $t2)"
[ "$(sv "$tmp/pg.sum" errors)" = 0 ] && gt "$(sv "$tmp/pg.sum" lat_p99_ms)" 0 1
check $? "no failed pgbench transactions; a p99 latency from the transaction logs"
grep -q '^@@STEP .* dbstart' "$tmp/pg.sum.guest" &&
    [ "$(grep -c '^@@BENCH-BEGIN [12]$' "$tmp/pg.sum.guest")" = 2 ] &&
    gt "$(sv "$tmp/pg.sum" writes)" 0 1
check $? "two benchmark outputs, and the run's writes reached the drive"

# --- the host left alone ----------------------------------------------------------
after=$(db_pkgs)
[ "$after" = "$before" ]
check $? "no database package installed on the host by the runs (${after:-none})"
# one name per pgrep: it matches at most 15 characters of a name
! { pgrep -x mariadbd || pgrep -x mysqld || pgrep -x postgres; } >/dev/null
check $? "no database server running on the host"
finish
