#!/usr/bin/env bash
# Guest SQL test: the main command's workload, short (scripts/sql-bench.sh:
# MariaDB + sysbench oltp_read_write in the guest on a full-size 0.8 TB
# H3100), and the host left alone: MariaDB and sysbench come unpacked
# from their Debian packages into the guest image, no database package is
# installed on the host and no database server runs there.
#
#   tests/guest/test_guest_sql.sh [QEMU]
#
# Prints ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

db_pkgs() {
    dpkg-query -W -f='${Package} ${Status}\n' 'mariadb-server*' 'mysql-server*' 2>/dev/null |
        awk '$NF == "installed" { print $1 }' | tr '\n' ' '
}
before=$(db_pkgs)
"$GUEST_HERE/../../scripts/sql-bench.sh" ${1:+--qemu "$1"} --workdir "$tmp/sql" \
    --duration 10 --table-size 2000 --timeout 600 >"$tmp/sql.out" 2>"$tmp/sql.err"
rc=$?
check $rc "sql-bench.sh ran (rc $rc)"
[ $rc = 0 ] || tail -20 "$tmp/sql.err" | sed 's/^/# /'
grep -E '^(drive|guest|workload|TPS|latency|errors|WAF) ' "$tmp/sql.out" | sed 's/^/# /'
tps=$(awk '$1 == "TPS" { print $2 }' "$tmp/sql.out")
awk -v t="${tps:-0}" 'BEGIN { exit !(t > 0) }'
check $? "sysbench oltp_read_write made transactions (TPS ${tps:-none})"
grep -q '^errors      0 ignored, 0 reconnects' "$tmp/sql.out"
check $? "no sysbench errors"
zcat "${H3100_CACHE:-$HOME/.cache/dapustor-h3100}/guest-sql/initramfs.cpio.gz" |
    cpio -t 2>/dev/null | grep -qx 'usr/sbin/mariadbd'
check $? "mariadbd is in the guest image"
after=$(db_pkgs)
[ "$after" = "$before" ]
check $? "no database server package installed on the host (${after:-none})"
! pgrep -x 'mariadbd|mysqld' >/dev/null
check $? "no MariaDB server running on the host"
finish
