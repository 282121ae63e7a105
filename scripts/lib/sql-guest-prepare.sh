# shellcheck shell=dash disable=SC2154,SC2086 # variables from sql-bench.sh; option lists split on purpose
# The guest's script for scripts/bench/sql-bench.sh, first part: what makes the
# database (busybox sh in the test guest).  sql-bench.sh prepends the
# variables (ENGINE TABLES TABLE_SIZE SCALE SEED INSTANCES MODE, and the
# run's THREADS DURATION BP WORKLOAD RI) and appends sql-guest-run.sh.
# This file's text is part of the prepared database's key: changing it
# prepares the database again.  Lines starting @@ go back to the host.
up() { cut -d' ' -f1 /proc/uptime; }
step() { echo "@@STEP $(up) $*"; }
die() { echo "@@FAIL $*"
        for f in /mnt/db*/data/err.log /tmp/pg*.log; do [ -f "$f" ] && tail -n 30 "$f"; done
        exit 1; }
# smart PHASE: the SMART / Health log as key=value lines (nvme-cli JSON)
smart() {
    nvme smart-log /dev/nvme0 -o json >/tmp/smart.json 2>/tmp/smart.err ||
        { echo "@@SMART $1 error=$(cat /tmp/smart.err)"; return; }
    tr -d '{}", \t' </tmp/smart.json | awk -F: -v ph="$1" 'NF == 2 && $1 != "" {
        printf "@@SMART %s %s=%s\n", ph, $1, $2 }'
}
SH=/usr/share/mysql
PGBIN=/usr/lib/postgresql/15/bin
# inst I: the variables of database instance I (1 .. INSTANCES): its
# partition (the whole drive when there is one instance), mount point,
# data directory, socket and server options
inst() {
    I=$1
    MNT=/mnt/db$I
    DEV=/dev/nvme0n1
    [ "$INSTANCES" = 1 ] || DEV=/dev/nvme0n1p$I
    D=$MNT/data
    S=/run/mysqld$I.sock
    OPTS="--no-defaults --user=root --datadir=$D --socket=$S --skip-networking
 --skip-name-resolve --lc-messages-dir=$SH --character-sets-dir=$SH/charsets
 --tmpdir=/tmp --log-error=$D/err.log --innodb-buffer-pool-size=${BP}M
 --innodb-log-file-size=96M --innodb-flush-log-at-trx-commit=1
 --innodb-flush-method=O_DIRECT --skip-log-bin --max-connections=64"
    SB="--db-driver=mysql --mysql-socket=$S --mysql-user=root --mysql-db=sbtest
 --tables=$TABLES --table-size=$TABLE_SIZE"
    PGD=$MNT/pg
    PGS=/run/pg$I
    PGOPTS="-D $PGD -k $PGS -c listen_addresses= -c shared_buffers=${BP}MB
 -c max_wal_size=1GB -c dynamic_shared_memory_type=sysv -c fsync=on
 -c synchronous_commit=on -c full_page_writes=on"
}
# each_inst CMD: CMD for every instance in turn
each_inst() {
    local i=1
    while [ $i -le "$INSTANCES" ]; do inst $i; "$@"; i=$((i + 1)); done
}
# PostgreSQL refuses to run as root: its own user, in the guest's RAM
grep -q '^postgres:' /etc/passwd || echo 'postgres:x:70:70:PostgreSQL:/tmp:/bin/sh' >>/etc/passwd
grep -q '^postgres:' /etc/group || echo 'postgres:x:70:' >>/etc/group
as_pg() { su -s /bin/sh postgres -c "TZ=GMT $*"; }
pg() { "$PGBIN/pgbench" -h $PGS -U postgres "$@" postgres; }

# partition: one GPT partition per instance, equal sizes (one instance:
# the whole drive, no partition table, as before)
partition() {
    [ "$INSTANCES" = 1 ] && return
    local mib=$(( $(cat /sys/block/nvme0n1/size) / 2048 / INSTANCES - 2 )) i=1 args=""
    while [ $i -le "$INSTANCES" ]; do
        args="$args -n $i:0:+${mib}M -t $i:8300"; i=$((i + 1))
    done
    sgdisk -o $args /dev/nvme0n1 >/tmp/sgdisk.out 2>&1 || { cat /tmp/sgdisk.out; die "sgdisk"; }
    i=0
    while [ ! -b "/dev/nvme0n1p$INSTANCES" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ -b "/dev/nvme0n1p$INSTANCES" ] || die "no /dev/nvme0n1p$INSTANCES after partitioning"
}
# make_fs: instance I's file system, mounted.  nodiscard: the drive is
# fresh (nothing mapped); lazy init + noinit_itable: no background zeroing
# of inode tables / journal during the benchmark.  Full path: busybox sh
# prefers its own (ext2-only) mke2fs applet.
make_fs() {
    /usr/sbin/mke2fs -t ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 \
        $DEV || die "mke2fs $DEV"
    mkdir -p $MNT
    mount -t ext4 -o noatime,noinit_itable $DEV $MNT || die "mount $DEV"
}
mount_fs() {
    mkdir -p $MNT
    mount -t ext4 -o noatime $DEV $MNT || die "mount the prepared database ($DEV)"
}
# db_bootstrap: the engine's empty database on instance I's file system
db_bootstrap() {
    if [ "$ENGINE" = postgres ]; then
        { mkdir -p $PGD && chown postgres:postgres $PGD && chmod 700 $PGD; } || die "mkdir $PGD"
        as_pg "$PGBIN/initdb -D $PGD -E UTF8 --locale=C -A trust -U postgres" \
            >/tmp/bootstrap.out 2>&1 || { cat /tmp/bootstrap.out; die "initdb"; }
        return
    fi
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
}
# db_start: instance I's server up and answering on its socket (its pid
# in mpidI)
db_start() {
    local sock=$S n=0 pid
    if [ "$ENGINE" = postgres ]; then
        sock=$PGS/.s.PGSQL.5432
        mkdir -p $PGS && chown postgres $PGS
        as_pg "exec $PGBIN/postgres $PGOPTS" >/tmp/pg$I.log 2>&1 &
    else
        mariadbd $OPTS --skip-grant-tables &
    fi
    pid=$!
    eval "mpid$I=$pid"
    while [ ! -S $sock ] && [ $n -lt 1200 ]; do
        kill -0 $pid 2>/dev/null || die "the $ENGINE server of instance $I exited"
        sleep 0.25; n=$((n + 1))
    done
    [ -S $sock ] || die "no $ENGINE socket for instance $I after 300 s"
    [ "$I" = 1 ] || return 0
    if [ "$ENGINE" = postgres ]; then
        echo "@@INFO server PostgreSQL $(as_pg "$PGBIN/postgres -V" | awk '{ print $3 }')"
    else
        echo "@@INFO server $(mariadb -uroot --socket=$S -N -e 'select version()')"
    fi
}
# db_fill: instance I's tables and rows, with progress lines
db_fill() {
    local out=/tmp/prepare$I.out spid
    if [ "$ENGINE" = postgres ]; then
        pg -i -s "$SCALE" -q >$out 2>&1 &
    else
        # two tables at a time (the database, not the run's threads, is the key)
        sysbench oltp_read_write $SB --threads=$((TABLES < 2 ? TABLES : 2)) prepare \
            >$out 2>&1 &
    fi
    spid=$!
    while kill -0 $spid 2>/dev/null; do
        sleep 10
        if [ "$ENGINE" = postgres ]; then
            echo "@@PROGRESS prepare $I of $INSTANCES: $(tail -c 300 $out | tr '\r' '\n' | grep . | tail -n 1)"
        else
            echo "@@PROGRESS prepare $I of $INSTANCES: $(grep -c '^Inserting' $out) of $TABLES tables started, $(grep -c '^Creating a secondary' $out) indexed"
        fi
    done
    wait $spid || { cat $out; die "$ENGINE prepare of instance $I"; }
}
# db_stop: instance I's server stopped (SIGTERM: PostgreSQL's smart
# shutdown, as no client is left) and its file system unmounted.  The
# postmaster is su's child, not this shell's: its pid is in its file.
db_stop() {
    local pid n=0
    eval "pid=\$mpid$I"
    if [ "$ENGINE" = postgres ]; then
        pid=$(head -n 1 $PGD/postmaster.pid)
        kill -TERM $pid
        while kill -0 $pid 2>/dev/null && [ $n -lt 1200 ]; do sleep 0.25; n=$((n + 1)); done
        eval "wait \$mpid$I"
    else
        kill -TERM $pid
        wait $pid
    fi
    sync
    umount $MNT || die "umount $MNT"
}

step start
echo "@@INFO kernel $(uname -r)"
echo "@@INFO drive $(nvme id-ctrl /dev/nvme0 | awk -F': *' '/^mn /{m=$2} /^fr /{f=$2} /^sn /{s=$2} END{print m" fw "f" sn "s}')"
echo "@@INFO nsze_bytes $(($(cat /sys/block/nvme0n1/size) * 512))"
smart boot

# MODE: full (mkfs .. run), prepare (mkfs .. prepare, then stop), run
# (the prepared file systems: mount, start the servers, run)
if [ "$MODE" = run ]; then
    each_inst mount_fs
    smart mkfs
else
    step mkfs
    partition
    each_inst make_fs
    smart mkfs
    step bootstrap
    each_inst db_bootstrap
fi

step dbstart
each_inst db_start
if [ "$MODE" != run ]; then
    step prepare
    each_inst db_fill
fi
sync
smart prepare

# stop_db: every server stopped, the file systems unmounted, SMART read
stop_db() {
    step stop
    each_inst db_stop
    smart end
}
if [ "$MODE" = prepare ]; then
    stop_db
    step "done"
    exit 0
fi
