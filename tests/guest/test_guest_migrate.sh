#!/usr/bin/env bash
# Guest migration test (docs/guide/migration.md): a Linux guest keeps every block
# it wrote and the drive's counters go on across a live migration and a
# save to a file restored in a fresh QEMU; savevm / loadvm on qcow2 take
# the drive back to the snapshot's data and counters; under -icount a
# benchmark resumed from a snapshot gives the figures of the run that went
# straight through.
#
#   tests/guest/test_guest_migrate.sh [QEMU]
#
# 1. fio writes 2 x 48 MiB of 4 KiB random writes with crc32c headers
#    (libaio, QD16, O_DIRECT): the VM migrates live to a new QEMU while
#    the first runs, and is saved to a file and restored in another while
#    the second runs (scripts/guest/guest-run.sh --migrate-on); then fio
#    --verify_only reads every block back, SMART's Data Units Written grew
#    by what fio wrote, and the kernel logged no NVMe time-out or reset.
# 2. On qcow2: 4 MiB written, `savevm s1`, 4 MiB written over it, `loadvm
#    s1`: the guest runs on from the snapshot and reads the first data,
#    with SMART's counters as they were at the snapshot.
# 3. -icount shift=1: a write phase, `savevm s2`, then a read and write
#    phase whose IOPS and mean latency fio prints; a second QEMU started
#    with -loadvm s2 runs the second phase again: the same figures (within
#    GUEST_MIG_TOLERANCE, default 0.5%).
# Prints ok / not ok lines and 'N passed, N failed'.
# Environment: H3100_ACCEL, H3100_CACHE, TMPDIR; H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

qemu=${1:-$H3100_BUILD/qemu-system-x86_64}
qimg=$(dirname "$(readlink -f "$qemu")")/qemu-img
[ -x "$qimg" ] || qimg="qemu-img"
tol=${GUEST_MIG_TOLERANCE:-0.5}

hmp() {
    printf '{"execute": "human-monitor-command", "arguments": {"command-line": "%s"}}' "$1"
}

# --- 1. fio across a live migration and a save and restore -------------------
fio_job() {   # fio_job OFFSET EXTRA
    echo "fio --name=mig --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \\
    --rw=randwrite --bs=4k --iodepth=16 --size=48M --offset=$1 \\
    --verify=crc32c --verify_fatal=1 --randrepeat=1 $2 >/tmp/fio.out 2>&1"
}
{
    echo "$GUEST_PRELUDE"
    cat <<'GUEST'
duw0=$(smart data_units_written)
hw0=$(smart host_write_commands)
echo "@live"
GUEST
    fio_job 0 --do_verify=0
    cat <<'GUEST'
chk $? "fio: 48 MiB of random writes while the VM migrates live"
grep -E '^ *WRITE:' /tmp/fio.out | sed 's/^ */  /'
echo "@file"
GUEST
    fio_job 64M --do_verify=0
    cat <<'GUEST'
chk $? "fio: 48 MiB of random writes while the VM is saved and restored"
GUEST
    fio_job 0 --verify_only
    cat <<'GUEST'
chk $? "fio --verify_only of the first 48 MiB after both moves"
GUEST
    fio_job 64M --verify_only
    cat <<'GUEST'
chk $? "fio --verify_only of the second 48 MiB after both moves"
duw1=$(smart data_units_written)
hw1=$(smart host_write_commands)
# 96 MiB in units of 512,000 bytes, rounded up, give or take the rounding
grown=$((duw1 - duw0))
echo "data units written: $duw0 -> $duw1 (+$grown), write commands: $hw0 -> $hw1"
[ "$grown" -ge 196 ] && [ "$grown" -le 198 ]
chk $? "SMART Data Units Written went on from $duw0 by what fio wrote (+$grown)"
[ $((hw1 - hw0)) -ge 24576 ]
chk $? "SMART Host Write Commands went on (+$((hw1 - hw0)))"
dmesg | grep -iE 'nvme.*(timeout|reset|abort|error)' >/tmp/dmesg.err
[ ! -s /tmp/dmesg.err ]
chk $? "no NVMe time-out, reset or error in the kernel log"
head -5 /tmp/dmesg.err
exit $GUEST_FAIL
GUEST
} >"$tmp/move.sh"

"$qimg" create -q -f qcow2 "$tmp/move.qcow2" 256M
run_guest "fio across migrations" "$tmp/move.qcow2" "$tmp/move.sh" \
    --format qcow2 --migrate-on @live live --migrate-on @file file \
    --mig-log "$tmp/move.mig" --timeout 400
n=$(grep -c '"status": "completed"' "$tmp/move.mig" 2>/dev/null)
[ "$n" = 2 ]
check $? "the live migration and the save and restore completed ($n of 2)"
awk -F'"downtime": ' 'NF > 1 { split($2, a, ","); printf "# downtime %s ms\n", a[1] }' \
    "$tmp/move.mig"

# --- 2. savevm / loadvm go back to the snapshot's drive ---------------------
{
    echo "$GUEST_PRELUDE"
    cat <<'GUEST'
dd if=/dev/urandom of=/tmp/a bs=1M count=4 2>/dev/null
dd if=/tmp/a of=/dev/nvme0n1 bs=1M seek=8 oflag=direct 2>/dev/null
echo "@savevm"
sleep 2
echo "SNAP sum $(rd_sum 2048 1024) writes $(smart host_write_commands) units $(smart data_units_written)"
dd if=/dev/urandom of=/dev/nvme0n1 bs=1M seek=8 count=4 oflag=direct 2>/dev/null
echo "LATER sum $(rd_sum 2048 1024) writes $(smart host_write_commands) units $(smart data_units_written)"
echo "@loadvm"
sleep 8
echo "DONE"
GUEST
} >"$tmp/snap.sh"

"$qimg" create -q -f qcow2 "$tmp/snap.qcow2" 256M
run_guest "savevm and loadvm" "$tmp/snap.qcow2" "$tmp/snap.sh" \
    --format qcow2 --qmp-on @savevm "$(hmp 'savevm s1')" \
    --qmp-on @loadvm "$(hmp 'loadvm s1')" --timeout 300
mapfile -t snaps < <(grep '^SNAP ' "$tmp/savevm and loadvm.out")
later=$(grep -m1 '^LATER ' "$tmp/savevm and loadvm.out")
[ ${#snaps[@]} = 2 ]
check $? "the guest ran on from the snapshot after loadvm (${#snaps[@]} SNAP lines)"
[ "${snaps[0]:-x}" = "${snaps[1]:-y}" ]
check $? "after loadvm the drive holds the snapshot's data and counters: ${snaps[1]:-none}"
[ "${later#LATER sum }" != "${snaps[0]#SNAP sum }" ]
check $? "before loadvm it held the later ones: ${later:-none}"

# --- 3. -icount: a run resumed from a snapshot gives the same figures --------
{
    echo "$GUEST_PRELUDE"
    cat <<'GUEST'
fio --name=pre --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \
    --rw=write --bs=128k --iodepth=4 --size=64M >/dev/null 2>&1
echo "@snap"
sleep 1
fio --name=bench --filename=/dev/nvme0n1 --ioengine=libaio --direct=1 \
    --rw=randrw --rwmixread=70 --bs=4k --iodepth=8 --size=64M \
    --io_size=24M --randrepeat=1 --randseed=7 --output-format=terse \
    --terse-version=3 >/tmp/bench.terse 2>/dev/null
chk $? "fio: the benchmark after the snapshot point"
# terse v3: read IOPS 8, clat mean 16; write IOPS 49, clat mean 57
awk -F';' '{ print "IOPS read", $8; print "IOPS write", $49
             print "CLAT read", $16; print "CLAT write", $57 }' /tmp/bench.terse
exit $GUEST_FAIL
GUEST
} >"$tmp/bench.sh"

"$qimg" create -q -f qcow2 "$tmp/bench.qcow2" 256M
run_guest "icount straight" "$tmp/bench.qcow2" "$tmp/bench.sh" \
    --format qcow2 --icount-shift 1 --qmp-on @snap "$(hmp 'savevm s2')" \
    --timeout 600
run_guest "icount resumed" "$tmp/bench.qcow2" "$tmp/bench.sh" \
    --format qcow2 --icount-shift 1 --loadvm s2 --timeout 600
grep -E '^(IOPS|CLAT) ' "$tmp/icount straight.out" >"$tmp/a.fig"
grep -E '^(IOPS|CLAT) ' "$tmp/icount resumed.out" >"$tmp/b.fig"
[ -s "$tmp/a.fig" ] && [ "$(wc -l <"$tmp/a.fig")" = "$(wc -l <"$tmp/b.fig")" ]
check $? "both runs printed their figures ($(wc -l <"$tmp/a.fig") lines)"
paste -d' ' "$tmp/a.fig" "$tmp/b.fig" | awk -v tol="$tol" '
    { a = $(NF / 2); b = $NF; d = a ? (b - a) / a * 100 : 0
      printf "# %s %s: straight %s, resumed %s (%+.3f%%)\n", $1, (NF > 4 ? $2 : ""), a, b, d
      if (d > tol || d < -tol) bad = 1 }
    END { exit bad }'
check $? "the resumed run's IOPS and latency are the straight run's (within $tol%)"
finish
