# shellcheck shell=dash disable=SC2154,SC2086 # variables from sql-bench.sh; option lists split on purpose
# The guest's script for scripts/bench/sql-bench.sh, second part: the run, after
# sql-guest-prepare.sh (whose functions it uses).  Not in the prepared
# database's key.
# snap PHASE: what the drive and the guest's block layer counted so far
# (SMART, the model log D0h where the drive has it, /sys/block stat)
snap() {
    smart "$1"
    echo "@@BSTAT $1 $(cat /sys/block/nvme0n1/stat)"
    nvme get-log /dev/nvme0 --log-id=0xd0 --log-len=512 --raw-binary \
        >/tmp/snap.bin 2>/dev/null &&
        echo "@@VLOG $1 $(od -An -v -tx1 /tmp/snap.bin | tr -s ' \n' '  ')"
}
# bench_start: instance I's benchmark, in the background (pid in bpidI)
bench_start() {
    if [ "$ENGINE" = postgres ]; then
        # TPC-B-like; every transaction's latency logged, for percentiles
        pg -c "$THREADS" -j "$THREADS" -T "$DURATION" -P "$RI" \
            --random-seed=$((SEED + I - 1)) -l --log-prefix=/tmp/pgb$I >/tmp/bench$I.out 2>&1 &
    else
        sysbench "$WORKLOAD" $SB --threads="$THREADS" --time="$DURATION" \
            --events=0 --rand-seed=$((SEED + I - 1)) --percentile=99 --histogram=on \
            --report-interval="$RI" run >/tmp/bench$I.out 2>&1 &
    fi
    eval "bpid$I=$!"
}
# bench_wait: instance I's benchmark output, between markers
bench_wait() {
    local pid rc=0
    eval "pid=\$bpid$I"
    wait $pid || rc=$?
    echo "@@BENCH-BEGIN $I"
    cat /tmp/bench$I.out
    echo "@@BENCH-END $I rc=$rc"
    [ $rc = 0 ] || brc=$rc
}
step run
rm -f /tmp/pgb*
snap runstart
brc=0
each_inst bench_start
each_inst bench_wait
snap runend
[ $brc = 0 ] || die "$WORKLOAD run"
if [ "$ENGINE" = postgres ]; then
    # percentiles over every instance's transactions
    cat /tmp/pgb* 2>/dev/null | awk '{ print $3 }' | sort -n | awk '
        { v[NR] = $1 } END { if (NR) printf "@@PGLAT n=%d p95_us=%d p99_us=%d\n",
            NR, v[int(NR * 0.95 + 0.999999)], v[int(NR * 0.99 + 0.999999)] }'
else
    inst 1
    mariadb -uroot --socket=$S -N -e "show global status where Variable_name in
     ('Innodb_data_written','Innodb_data_read','Innodb_os_log_written',
      'Innodb_data_fsyncs','Innodb_pages_written')" |
        awk '{ printf "@@MYSQL %s=%s\n", $1, $2 }'
fi
stop_db

step vendorlog
# The H3100 model log (D0h: NAND bytes, WAF, reclaim, buffer stalls) as
# hex bytes, decoded on the host by h3100-vlog; the OCP extended SMART log
# (C0h) as nvme-cli prints it.
if nvme get-log /dev/nvme0 --log-id=0xd0 --log-len=512 --raw-binary \
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
step "done"
