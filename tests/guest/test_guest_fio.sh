#!/usr/bin/env bash
# Guest fio test: random writes verified with crc32c on the H3100 from Linux.
#
#   tests/guest/test_guest_fio.sh [QEMU]
#
# One boot on a sparse 512 MiB raw file.  For each engine, libaio and
# io_uring: fio randwrite with mixed block sizes (bssplit 4k..128k), iodepth
# 32, 4 jobs on disjoint 16 MiB regions, O_DIRECT, verify=crc32c (write phase
# then verify phase, verify_fatal), then a second pass with --verify_only.
# Then a negative control: one 4 KiB block of the libaio region is zeroed
# behind fio's back and --verify_only must fail.  io_uring: tested if the
# kernel has it (io_uring_setup in /proc/kallsyms; a failure is then a
# failure), otherwise reported as not available.  Prints ok / not ok lines
# and 'N passed, N failed'.  Environment: H3100_ACCEL, H3100_CACHE, TMPDIR,
# H3100_FIO_SIZE (per job, default 16M); H3100_GUEST_TESTS=0 skips.
# shellcheck source=tests/guest/guest-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"

disk=$tmp/h3100.raw
truncate -s 512M "$disk"
size=${H3100_FIO_SIZE:-16M}

{
    echo "$GUEST_PRELUDE"
    echo "SIZE=$size"
    cat <<'GUEST'
# fio_job ENGINE OFFSET [extra fio options]: the test job
fio_job() {
    e=$1 off=$2; shift 2
    fio --name="verify-$e" --filename=/dev/nvme0n1 --ioengine="$e" --direct=1 \
        --rw=randwrite --bssplit=4k/40:8k/20:16k/20:64k/15:128k/5 \
        --iodepth=32 --numjobs=4 --size="$SIZE" --offset="$off" --offset_increment="$SIZE" \
        --verify=crc32c --verify_fatal=1 --randrepeat=1 --group_reporting "$@"
}
summary() { grep -E '^ *(WRITE|READ):|err=|verify:|crc32c|bad magic|fio: ' "$1" | sed 's/^ */  /' | head -8; }
fio --version
uring=no
grep -q 'io_uring_setup' /proc/kallsyms && uring=yes
echo "kernel $(uname -r): io_uring in /proc/kallsyms: $uring"
off=0
for e in libaio io_uring; do
    if [ "$e" = io_uring ] && [ "$uring" = no ]; then
        fio_job "$e" "$off" --runtime=1 >/tmp/fio.u 2>&1
        if grep -qiE 'not implemented|ENOSYS|not supported' /tmp/fio.u || [ ! -s /tmp/fio.u ]; then
            ok "io_uring: not available in this kernel (no io_uring_setup in /proc/kallsyms) # SKIP"
        else
            bad "io_uring: /proc/kallsyms has no io_uring_setup but fio did not say ENOSYS"; summary /tmp/fio.u
        fi
        continue
    fi
    t0=$(cut -d' ' -f1 /proc/uptime)
    fio_job "$e" "$off" >/tmp/fio.$e 2>&1; r=$?
    t1=$(cut -d' ' -f1 /proc/uptime)
    chk $r "$e: randwrite bssplit 4k-128k, QD32 x 4 jobs x $SIZE, crc32c verify (rc $r, $(echo "$t1 - $t0" | awk '{ printf "%.1f", $1 - $3 }') s)"
    summary /tmp/fio.$e
    grep -q 'err= 0' /tmp/fio.$e && ! grep -q 'err= *[1-9]' /tmp/fio.$e; chk $? "$e: no job errors (err= 0)"
    grep -q '^ *READ:' /tmp/fio.$e; chk $? "$e: the verify phase read the data back"
    fio_job "$e" "$off" --verify_only >/tmp/fio.$e.v 2>&1; r=$?
    chk $r "$e: --verify_only pass over the same regions (rc $r)"
    [ "$r" = 0 ] || summary /tmp/fio.$e.v
    off=$((off + 64 * 1024 * 1024))
done

# negative control: corrupt 4 KiB in job 0's region; verification must see it
dd if=/dev/zero of=/dev/nvme0n1 bs=4096 seek=256 count=1 oflag=direct conv=notrunc 2>/dev/null
fio_job libaio 0 --verify_only >/tmp/fio.bad 2>&1; r=$?
[ "$r" != 0 ] && grep -qiE 'verify|crc32c|bad magic' /tmp/fio.bad
chk $? "negative control: 4 KiB zeroed at 1 MiB -> --verify_only fails (rc $r)"
grep -iE 'verify|crc32c|bad magic' /tmp/fio.bad | head -3 | sed 's/^/  /'
echo "smart-log: data_units_written $(smart data_units_written), data_units_read $(smart data_units_read)"
exit $GUEST_FAIL
GUEST
} >"$tmp/fio.sh"

run_guest boot "$disk" "$tmp/fio.sh" --timeout 240
finish
